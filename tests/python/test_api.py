import math

import pandas as pd
import pytest
from conftest import TOML_SCENARIO, validated_dumbbell

import ccbench
from ccbench import _core
from ccbench.api import SERIES_COLUMNS


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
    assert slower.link("bottleneck")["rate_mbps"] == pytest.approx(5.0)
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
    assert 0 < r.link("bottleneck")["utilization"] <= 1.0 + 1e-9
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


DTYPES = {"t_s": "f", "flow": "str", "link": "str", "retransmits": "i", "losses": "i", "ecn_reductions": "i", "drops": "i",
          "arrivals": "i", "random_losses": "i", "ecn_marks": "i", "departed_bytes": "i"}


def test_saved_files_have_documented_columns_and_dtypes(small, tmp_path):
    ccbench.run(small, out=tmp_path)
    for name, columns in SERIES_COLUMNS.items():
        frame = pd.read_parquet(tmp_path / f"{name}.parquet")
        assert list(frame.columns) == columns, name
        for column in columns:
            kind = DTYPES.get(column, "f")
            if kind == "str":
                assert pd.api.types.is_string_dtype(frame[column]), (name, column)
            else:
                assert frame[column].dtype.kind == kind, (name, column, frame[column].dtype)
    flows = pd.read_parquet(tmp_path / "flows.parquet")
    assert set(flows["flow"]) == {"a", "b"}  # names, not indices
    assert set(pd.read_parquet(tmp_path / "links.parquet")["link"]) == {"bottleneck", "bottleneck-rev"}


def test_frames_are_built_on_first_access_and_kept(small):
    r = ccbench.run(small)
    assert isinstance(r._series["flows"], _core.Table)
    first = r.flows
    assert r.flows is first and isinstance(first, pd.DataFrame)
    assert list(first.columns) == SERIES_COLUMNS["flows"]


def test_save_of_loaded_or_edited_result_goes_through_the_core_writer(small, tmp_path):
    r = ccbench.run(small)
    r.summary["note"] = float("nan")  # NaN is no JSON: written as null
    r.links = r.links[r.links["link"] == "bottleneck"].reset_index(drop=True)
    r.save(tmp_path / "a")
    again = ccbench.Result.load(tmp_path / "a")
    assert again.summary["note"] is None
    assert set(again.links["link"]) == {"bottleneck"}
    again.save(tmp_path / "b")
    for name in ("flows", "links", "sojourn", "owd"):
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "b" / f"{name}.parquet"),
                                      pd.read_parquet(tmp_path / "a" / f"{name}.parquet"))
    assert (tmp_path / "b" / "summary.json").read_text() == (tmp_path / "a" / "summary.json").read_text()


def test_result_pickles_with_its_frames(small):
    import pickle

    r = ccbench.run(small)
    again = pickle.loads(pickle.dumps(r))
    assert again.summary == r.summary
    pd.testing.assert_frame_equal(again.sojourn, r.sojourn)


def test_plain_text_table_without_dataframes(small):
    r = ccbench.run(small)
    text = r.table()
    header = text.splitlines()[0].split()
    assert header == ["name", "cca", "rtt_ms", "goodput_mbps", "retransmits", "fct_s"]
    assert "bottleneck-rev" in text and "Jain index" in text
    assert all(isinstance(v, _core.Table) for v in r._series.values())


def test_link_and_flow_by_name(small):
    r = ccbench.run(small)
    assert r.flow("b")["cca"] == "newreno"
    assert r.link("bottleneck-rev")["name"] == "bottleneck-rev"
    with pytest.raises(KeyError, match="known: bottleneck, bottleneck-rev"):
        r.link("core")


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


def test_overrides_must_be_a_list():
    with pytest.raises(TypeError, match="list"):
        ccbench.run(TOML_SCENARIO, overrides="bottleneck.rate=5Mbps")


def test_validate_hands_each_form_to_the_core(small, scenario_file, monkeypatch):
    """The wrapper only routes: dicts to validate_dict, TOML text and files to validate_toml."""
    calls = []

    def fake(name):
        def core(payload, source, overrides, seed):
            calls.append((name, payload, source, overrides, seed))
            return validated_dumbbell()
        return core

    monkeypatch.setattr(_core, "validate_dict", fake("dict"), raising=False)
    monkeypatch.setattr(_core, "validate_toml", fake("toml"), raising=False)
    assert ccbench.validate(small, seed=3, overrides=["bottleneck.rate=5Mbps"])["duration_ns"] > 0
    ccbench.validate(TOML_SCENARIO)
    ccbench.validate(scenario_file, overrides=("flows[0].cca=newreno",))
    assert calls[0] == ("dict", small, "<dict>", ["bottleneck.rate=5Mbps"], 3)
    assert calls[1] == ("toml", TOML_SCENARIO, "<string>", [], None)
    assert calls[2] == ("toml", TOML_SCENARIO, str(scenario_file), ["flows[0].cca=newreno"], None)


def test_validate_returns_the_documented_shape(small):
    """The unit-free scenario of a dumbbell."""
    sc = ccbench.validate(small, seed=4, overrides=["bottleneck.rate=5Mbps"])
    assert sc["duration_ns"] == 5_000_000_000 and sc["warmup_ns"] == 1_000_000_000
    assert sc["seed"] == 4 and sc["topology"]["generator"] == "dumbbell"
    links = {link["name"]: link for link in sc["links"]}
    assert links["bottleneck"]["rate_bps"] == 5e6
    assert links["bottleneck-rev"]["reverse_of"] == "bottleneck"
    assert [f["name"] for f in sc["flows"]] == ["a", "b"]
    assert sc["flows"][1]["start_ns"] == 500_000_000 and sc["flows"][0]["rtt_ns"] == 40_000_000
    assert ccbench.validate(TOML_SCENARIO, seed=4, overrides=["bottleneck.rate=5Mbps"]) == sc
    with pytest.raises(ccbench.ScenarioError, match="bottleneck.rate"):
        ccbench.validate(small, overrides=["bottleneck.rate=-3"])


def test_controllers_listed():
    names = ccbench.controllers()
    assert {"newreno", "cubic"} <= set(names)
    assert isinstance(ccbench.version(), str)


def test_the_flow_series_counts_each_ecn_reduction_once():
    """The per-bin `ecn_reductions` of the flows series add up to the summary's whole-run count,
    and an ECN queue gives some (ABE's CUBIC over PIE with ECN)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "abe-pie-ecn.toml"
    result = ccbench.run(str(path), overrides=["duration=15s", "warmup=2s"])
    for flow in result.summary["flows"]:
        rows = result.flows[result.flows["flow"] == flow["name"]]
        assert int(rows["ecn_reductions"].sum()) == flow["ecn_reductions"]
    assert sum(f["ecn_reductions"] for f in result.summary["flows"]) > 0
