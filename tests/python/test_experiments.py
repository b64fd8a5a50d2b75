"""Experiments: grid points become ``--set`` overrides for the core; the registry finds each
``experiments/<paper>/<figure>.py`` by walking the package."""

import dataclasses
from pathlib import Path

import pytest
from conftest import python_code

import ccbench
import ccbench.experiments as experiments_pkg
from ccbench.experiments import Experiment, override, registry, toml_literal


@pytest.mark.parametrize("value, literal", [
    ("0.5bdp", '"0.5bdp"'),
    ('say "hi"\\\n', '"say \\"hi\\"\\\\\\n"'),
    ("\x01µ", '"\\u0001µ"'),
    (0.7, "0.7"),
    (1e-7, "1e-07"),
    (3, "3"),
    (False, "false"),
    ([1, "a"], '[1, "a"]'),
    ({"beta": 0.5, "odd key": True}, '{"beta" = 0.5, "odd key" = true}'),
])
def test_toml_literal(value, literal):
    assert toml_literal(value) == literal


def test_toml_literal_refuses_what_has_no_form():
    with pytest.raises(ValueError):
        toml_literal(float("nan"))
    with pytest.raises(TypeError):
        toml_literal(object())


def _metric(result, point):
    return {"rate_mbps": result.link("bottleneck")["rate_mbps"]}


BASE = {"duration": "2s", "bottleneck": {"rate": "10Mbps", "rtt": "20ms"}, "flows": [{"cca": "cubic"}],
        "output": {"sojourn_samples": False}}


def test_grid_points_become_overrides():
    exp = Experiment(name="t", base=BASE, metric=_metric,
                     grid={"bottleneck.rate": ["5Mbps"], "flows[0].cc.beta": [0.7]},
                     quick_overrides={"duration": "1s"})
    point = exp.params()[0]
    assert exp.overrides(point) == ['bottleneck.rate="5Mbps"', "flows[0].cc.beta=0.7"]
    assert exp.overrides(point, quick=True) == ['duration="1s"', 'bottleneck.rate="5Mbps"',
                                                "flows[0].cc.beta=0.7"]
    custom = dataclasses.replace(exp, apply=lambda p: {"bottleneck.buffer": "0.5bdp"})
    assert custom.overrides(point) == ['bottleneck.buffer="0.5bdp"']
    assert override("flows.cca", "newreno") == 'flows.cca="newreno"'


def test_overrides_are_applied_by_the_core():
    exp = Experiment(name="t", base=BASE, metric=_metric, grid={"bottleneck.rate": ["5Mbps"]})
    result = ccbench.run(exp.base, overrides=exp.overrides(exp.params()[0]))
    assert result.link("bottleneck")["rate_mbps"] == pytest.approx(5.0)


def test_figure_overrides_validate_in_the_core():
    """Enabled once the core has validate_*: each figure's overrides reach the right fields."""
    fig2 = registry.get("abe-fig2")
    sc = ccbench.validate(fig2.base, overrides=fig2.overrides({"beta": 0.7, "buffer_bdp": 0.5}))
    assert sc["flows"][0]["cc"]["beta"] == 0.7
    assert next(l for l in sc["links"] if l["name"] == "bottleneck")["buffer"] == {"bdp": 0.5}


def test_no_second_override_syntax():
    for name in ("set_path", "_apply_dotted", "EXPERIMENTS"):
        assert not hasattr(experiments_pkg, name), name


def test_registry_finds_every_figure_module():
    found = registry.experiments()
    # One experiment per <paper>/<figure>.py file, named "<paper>-<figure>" ("fig12_13.py",
    # one experiment for two figures, is "abe-fig12-13").
    # Shared helpers of a paper's figures (rledbat/common.py, vs_bbr.py, …) define none.
    package = Path(experiments_pkg.__file__).parent
    modules = [p for p in package.glob("*/*.py") if p.stem != "__init__"]
    figures = [p for p in modules if "\nEXPERIMENT = " in p.read_text()]
    files = sorted(f"{p.parent.name}-{p.stem.replace('_', '-')}" for p in figures)
    assert list(found) == files
    helpers = {p.stem for p in modules} - {p.stem for p in figures}
    assert not any(h.startswith(("fig", "table")) for h in helpers), helpers
    assert {"abe-fig2", "abe-fig7", "rledbat-table1"} <= set(found)
    assert type(found["abe-fig2"]).__module__ == "ccbench.experiments.base"
    from ccbench.experiments.abe import fig2
    from ccbench.experiments.rledbat import table1
    assert found["abe-fig2"] is fig2.EXPERIMENT and found["rledbat-table1"] is table1.EXPERIMENT


def test_registry_get_and_register(monkeypatch):
    monkeypatch.setattr(registry, "_FOUND", dict(registry.experiments()))
    with pytest.raises(KeyError, match="known: " + ", ".join(registry.experiments())):
        registry.get("nope")
    extra = Experiment(name="extra", base=BASE, grid={}, metric=_metric)
    assert registry.register(extra) is extra and registry.get("extra") is extra
    with pytest.raises(ValueError, match="defined twice"):
        registry.register(extra)


def test_registry_is_built_on_first_use_only():
    code = ("import sys, ccbench.experiments.registry as r\n"
            "assert r._FOUND is None and 'ccbench.experiments.abe.fig2' not in sys.modules\n"
            "r.experiments()\n"
            "assert 'ccbench.experiments.abe.fig2' in sys.modules\n")
    proc = python_code(code)
    assert proc.returncode == 0, proc.stderr


def _seed_metric(result, point):
    # A metric that depends on the seed only, so its spread over seeds is known exactly.
    seed = result.summary["scenario"]["seed"]
    return {"seed_value": float(seed), "rate_mbps": result.link("bottleneck")["rate_mbps"]}


SPREAD_BASE = {"duration": "1s", "bottleneck": {"rate": "10Mbps", "rtt": "20ms"},
               "flows": [{"cca": "cubic"}], "output": {"sojourn_samples": False}}


def test_summary_reports_mean_std_min_max_over_seeds(tmp_path):
    import pandas as pd

    exp = Experiment(name="spread", base=SPREAD_BASE, metric=_seed_metric, seeds=(1, 2, 4),
                     grid={"bottleneck.rate": ["5Mbps", "-3"]}, quick_seeds=(3,))
    results = experiments_pkg.run_experiment(exp, jobs=1, out=tmp_path)
    assert list(results["error"] == "") == [True] * 3 + [False] * 3

    summary = pd.read_csv(tmp_path / "summary.csv")
    for metric in ("seed_value", "rate_mbps"):
        for stat in ("std", "min", "max"):
            assert f"{metric}_{stat}" in summary.columns
    good, bad = summary.iloc[0], summary.iloc[1]
    assert good["seeds"] == 3
    assert good["seed_value"] == pytest.approx(7 / 3)
    assert good["seed_value_std"] == pytest.approx((7 / 3) ** 0.5)  # sample std of 1, 2, 4
    assert (good["seed_value_min"], good["seed_value_max"]) == (1.0, 4.0)
    assert (good["rate_mbps"], good["rate_mbps_std"]) == (5.0, 0.0)
    assert (good["rate_mbps_min"], good["rate_mbps_max"]) == (5.0, 5.0)
    # A grid point whose every run failed has no statistics at all.
    assert bad["seeds"] == 0
    assert bad[["seed_value", "seed_value_std", "seed_value_min", "seed_value_max"]].isna().all()

    # One seed: the standard deviation is 0, not NaN; min = max = mean.
    quick = experiments_pkg.run_experiment(dataclasses.replace(exp, grid={"bottleneck.rate": ["5Mbps"]}),
                                           quick=True, jobs=1)
    one = experiments_pkg.summarize(exp, quick, quick=True).iloc[0]
    assert (one["seeds"], one["seed_value"], one["seed_value_std"]) == (1, 3.0, 0.0)
    assert one["seed_value_min"] == one["seed_value_max"] == 3.0


def test_summary_spread_skips_failed_seeds_and_non_numbers():
    import pandas as pd

    exp = Experiment(name="spread", base=SPREAD_BASE, metric=_seed_metric, seeds=(1, 2, 3),
                     grid={"x": [1]})
    results = pd.DataFrame({"run": [0, 1, 2], "x": [1, 1, 1], "seed": [1, 2, 3],
                            "m": [2.0, 10.0, float("nan")], "error": ["", "boom", ""]})
    row = experiments_pkg.summarize(exp, results).iloc[0]
    assert row["seeds"] == 2  # the failed seed is left out; the NaN metric is a missing value
    assert (row["m"], row["m_std"], row["m_min"], row["m_max"]) == (2.0, 0.0, 2.0, 2.0)


def test_mean_spread_text():
    from ccbench.experiments.base import mean_spread

    row = {"u": 0.91234, "u_std": 0.00412, "seeds": 5}
    assert mean_spread(row, "u") == "0.912 ± 0.004 (5 seeds)"
    assert mean_spread(row, "u", unit="s", note="+2%") == "0.912 ± 0.004 s (5 seeds, +2%)"
    assert mean_spread({**row, "seeds": 1, "u_std": 0.0}, "u") == "0.912"
    assert mean_spread({**row, "seeds": 1}, "u", unit="s", note="-3%") == "0.912 s (-3%)"
    assert mean_spread({"u": 0.5}, "u", fmt=".2f") == "0.50"


def test_comparison_tables_show_mean_and_spread():
    import pandas as pd

    from ccbench.experiments.abe import fig2
    from ccbench.experiments.rledbat import table1

    fig = pd.DataFrame({"beta": [0.5, 0.5], "buffer_bdp": [0.5, 1.0], "utilization": [0.9, 0.99],
                        "utilization_std": [0.012, 0.0], "seeds": [5, 1]})
    ours = [r["ours"] for r in fig2._comparison(fig)]
    assert ours == ["0.900 ± 0.012 (5 seeds)", "0.990"]

    tab = pd.DataFrame({"row": ["alone", "alone"], "rtt_ms": [20, 100], "fct_s": [0.16, 0.7], "fct_s_std": [0.002, 0.0],
                        "paper_fct_s": [0.16, 0.62], "seeds": [3, 1]})
    rows = table1._comparison(tab)
    assert [r["ours"] for r in rows] == ["0.160 ± 0.002 s (3 seeds, +0%)", "0.700 s (+13%)"]
    # +13 % is outside the ±10 % agreement band of Table 1 (alone) and inside its ±15 % tolerance.
    assert [r["verdict"] for r in rows] == ["agrees", "within tolerance"]


def test_explicit_points_replace_the_grid_and_can_carry_the_seed():
    exp = Experiment(name="x", base={}, grid={"a": [1, 2, 3]}, metric=lambda r, p: {},
                     points=[{"a": 1, "b": "x"}, {"a": 5, "b": "y"}], quick_points=[{"a": 7, "b": "z"}],
                     seeds=(1, 2), seed_in_point=True)
    assert exp.params() == [{"a": 1, "b": "x"}, {"a": 5, "b": "y"}]
    assert exp.params(quick=True) == [{"a": 7, "b": "z"}]
    assert exp.runs()[:2] == [({"a": 1, "b": "x", "seed": 1}, 1), ({"a": 1, "b": "x", "seed": 2}, 2)]
    assert dataclasses.replace(exp, seed_in_point=False).runs()[0] == ({"a": 1, "b": "x"}, 1)
