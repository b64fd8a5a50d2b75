"""Experiments: grid points become ``--set`` overrides for the core; the registry finds each
``experiments/<paper>/<figure>.py`` by walking the package."""

import dataclasses

import pytest

import ccbench
import ccbench.experiments as experiments_pkg
from ccbench.experiments import Experiment, override, registry, toml_literal

from conftest import python_code


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
    assert list(found) == ["abe-fig2", "rledbat-table1"]
    assert type(found["abe-fig2"]).__module__ == "ccbench.experiments.base"
    from ccbench.experiments.abe import fig2
    from ccbench.experiments.rledbat import table1
    assert found["abe-fig2"] is fig2.EXPERIMENT and found["rledbat-table1"] is table1.EXPERIMENT


def test_registry_get_and_register(monkeypatch):
    monkeypatch.setattr(registry, "_FOUND", dict(registry.experiments()))
    with pytest.raises(KeyError, match="known: abe-fig2, rledbat-table1"):
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
