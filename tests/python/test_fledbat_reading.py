"""The reading of the missing eq. (5) (L118–L120) that the fLEDBAT experiments run: the decrease
once per RTT (``common.DECREASE``; its comment compares the two readings over all the figures),
with eq. (6) as its fluid limit (L150). The per-ACK reading, the controller's default, runs only
in fig3b's contrast arms."""

import pytest

import ccbench
from ccbench.experiments.fledbat import (
    common,
    fig1b,
    fig2,
    fig3a,
    fig3b,
    fig4a,
    fig4b,
    fig5a,
    fig5b,
    fig6a,
    fig6b,
    yield_newreno,
)

EXPERIMENTS = [m.EXPERIMENT for m in (fig1b, fig2, fig3a, fig3b, fig4a, fig4b, fig5a, fig5b, fig6a, fig6b,
                                      yield_newreno)]


def test_the_main_reading_is_once_per_rtt():
    assert common.DECREASE == "per-rtt" and common.OTHER_DECREASE == "per-ack"
    assert common.fledbat_cc(0.1) == {"target": "25ms", "alpha": 1.0, "zeta": 0.1, "decrease": "per-rtt"}
    assert common.SWARM_CC["fledbat"]["decrease"] == "per-rtt"


@pytest.mark.parametrize("quick", [False, True])
@pytest.mark.parametrize("exp", EXPERIMENTS, ids=lambda e: e.name)
def test_every_fledbat_flow_runs_the_main_reading(exp, quick):
    """Every fLEDBAT flow of every point sets ``decrease`` (not left to the controller's default):
    once per RTT, but in fig3b's per-ACK contrast arms."""
    seen = set()
    for point, seed in exp.runs(quick):
        key = repr(sorted((k, v) for k, v in point.items() if k != "seed"))
        if key in seen:
            continue
        seen.add(key)
        sc = ccbench.validate(exp.base, overrides=exp.overrides(point, quick=quick), seed=seed)
        flows = [f for f in sc["flows"] if f["cca"] == "fledbat"]
        expected = point.get("decrease", common.DECREASE) if exp is fig3b.EXPERIMENT else common.DECREASE
        assert all(f["cc"]["decrease"] == expected for f in flows), (exp.name, point)
        if exp is not fig3b.EXPERIMENT or point.get("decrease") == common.DECREASE:
            assert expected == "per-rtt"
    assert seen
