"""ABE's queues per figure (issue 25, item 5): the simulation figures (2, 4, 7–10, 16–19; ns-2.35,
L376) run ns-2's own CoDel and PIE code (L203), the testbed figures (3, 5, 6, 11–15; L380) Linux's
``sch_codel`` and Linux 3.17's ``sch_pie``. Checked on the scenarios the experiments build."""

import itertools

import pytest

import ccbench
from ccbench.experiments.abe import (
    common,
    fig3,
    fig4,
    fig5,
    fig6,
    fig7,
    fig8,
    fig9,
    fig10,
    fig11,
    fig12_13,
    fig14_15,
    fig16_18,
)

SIMULATIONS = [fig4, fig7, fig8, fig9, fig10, fig16_18]
TESTBED = [fig3, fig5, fig6, fig11, fig12_13, fig14_15]


def _bottlenecks(module, limit=12):
    """(aqm, aqm_params) of the bottleneck of the first ``limit`` quick runs of an experiment."""
    exp = module.EXPERIMENT
    for point, _seed in itertools.islice(exp.runs(quick=True), limit):
        sc = ccbench.validate(exp.base, overrides=exp.overrides(point, quick=True))
        link = next(l for l in sc["links"] if l["name"] == "bottleneck")
        yield link["aqm"], link["aqm_params"]


def test_the_ns2_queues():
    assert common.CODEL_NS2 == {"profile": "ns2"}
    assert common.NS2_AQM_PARAMS["codel"] is common.CODEL_NS2
    assert common.NS2_AQM_PARAMS["pie"]["profile"] == "ns2"
    assert common.TESTBED_AQM_PARAMS["codel"] == {}, "Linux sch_codel: the core's default profile"
    assert common.TESTBED_AQM_PARAMS["pie"]["profile"] == "linux-3.17"


@pytest.mark.parametrize("module", SIMULATIONS, ids=lambda m: m.EXPERIMENT.name)
def test_simulation_figures_run_ns2_codel_and_pie(module):
    seen = set()
    for aqm, params in _bottlenecks(module, limit=400):
        if aqm in ("codel", "pie"):
            assert params.get("profile") == "ns2", (aqm, params)
            seen.add(aqm)
    assert "codel" in seen


@pytest.mark.parametrize("module", TESTBED, ids=lambda m: m.EXPERIMENT.name)
def test_testbed_figures_run_linux_codel_and_pie(module):
    for aqm, params in _bottlenecks(module, limit=400):
        if aqm == "codel":
            assert params.get("profile", "linux") == "linux", params
        if aqm == "pie":
            assert params.get("profile") == "linux-3.17", params
