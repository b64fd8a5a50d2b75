import math

import pandas as pd
import pytest

import ccbench
from ccbench.api import SERIES_COLUMNS

from conftest import TOML_SCENARIO


def _comparable(summary):
    """Summary without wall-clock time, NaN made comparable."""
    def clean(v):
        if isinstance(v, float) and math.isnan(v):
            return "nan"
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k != "wall_s"}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v
    return clean(summary)


def _assert_same_series(r1, r2):
    for name in ("flows", "links", "sojourn", "owd"):
        pd.testing.assert_frame_equal(getattr(r1, name), getattr(r2, name), check_dtype=False)


def test_dict_toml_string_and_path_agree(small, scenario_file):
    from_dict = ccbench.run(small)
    from_text = ccbench.run(TOML_SCENARIO)
    from_path = ccbench.run(scenario_file)
    from_str_path = ccbench.run(str(scenario_file))
    expected = _comparable(from_dict.summary)
    for other in (from_text, from_path, from_str_path):
        assert _comparable(other.summary) == expected
        _assert_same_series(from_dict, other)


def test_same_seed_is_deterministic(small):
    a = ccbench.run(small, seed=3)
    b = ccbench.run(small, seed=3)
    assert _comparable(a.summary) == _comparable(b.summary)
    _assert_same_series(a, b)
    assert a.summary["scenario"]["seed"] == 3


def test_seed_argument_and_overrides_apply(small):
    other = ccbench.run(small, seed=11)
    assert other.summary["scenario"]["seed"] == 11
    slower = ccbench.run(small, overrides=["bottleneck.rate=5Mbps"])
    assert slower.summary["links"][0]["rate_mbps"] == pytest.approx(5.0)
    total = sum(f["goodput_mbps"] for f in slower.summary["flows"])
    assert 0 < total <= 5.0


def test_result_tables_have_documented_columns(small):
    r = ccbench.run(small)
    for name, columns in SERIES_COLUMNS.items():
        frame = getattr(r, name)
        assert isinstance(frame, pd.DataFrame)
        assert set(columns) <= set(frame.columns), name
    assert not r.flows.empty and not r.links.empty
    # One row per flow per bin; flows are identified by name (or by index in summary order).
    assert set(r.flows["flow"]) in ({"a", "b"}, {0, 1})
    assert len(r.flows) % 2 == 0 and r.flows["t_s"].max() == pytest.approx(5.0, abs=0.11)
    assert list(r.flow_summary["name"]) == ["a", "b"]
    for col in ("goodput_mbps", "throughput_mbps", "retransmits", "fct_s", "owd_ms_p99"):
        assert col in r.flow_summary.columns
    for col in ("utilization", "drops", "queue_delay_ms_mean", "queue_delay_ms_p99"):
        assert col in r.link_summary.columns
    assert 0 < r.summary["links"][0]["utilization"] <= 1.0 + 1e-9
    text = repr(r)
    assert text.startswith("<ccbench.Result") and "a " in text


def test_save_writes_parquet_and_json(small, tmp_path):
    r = ccbench.run(small, out=tmp_path / "run")
    run_dir = tmp_path / "run"
    for name in ("flows", "links", "sojourn", "owd"):
        frame = pd.read_parquet(run_dir / f"{name}.parquet")
        assert list(frame.columns) == list(getattr(r, name).columns)
        assert len(frame) == len(getattr(r, name))
    loaded = ccbench.Result.load(run_dir)
    assert loaded.summary["flows"][0]["name"] == "a"
    pd.testing.assert_frame_equal(loaded.flows, r.flows, check_dtype=False)


def test_invalid_scenario_raises_scenario_error(small):
    small["bottleneck"]["rate"] = "-3"
    with pytest.raises(ccbench.ScenarioError) as info:
        ccbench.run(small)
    assert isinstance(info.value, ValueError)
    assert "bottleneck.rate" in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file_raises_scenario_error(tmp_path):
    missing = tmp_path / "x.toml"
    with pytest.raises(ccbench.ScenarioError, match=r"x\.toml: cannot read file"):
        ccbench.run(missing)
    with pytest.raises(ccbench.ScenarioError, match="cannot read file"):
        ccbench.run("no-such-dir/x.toml")


def test_controllers_listed():
    names = ccbench.controllers()
    assert {"newreno", "cubic"} <= set(names)
    assert isinstance(ccbench.version(), str)
