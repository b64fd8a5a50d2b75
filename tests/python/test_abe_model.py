"""ABE Figs. 4 and 6 on a quick subset: the AIMD model with the AQM's measured backlog (Fig. 4,
SIM tolerances of the notes) and the slow-start exit with β_ecn 0.5 vs 0.9 (Fig. 6, BED shape)."""

import dataclasses

import pytest

from ccbench.experiments import run_experiment, summarize
from ccbench.experiments.abe import fig4, fig6


def _ok(results):
    assert list(results["error"]) == [""] * len(results), results["error"].tolist()
    return results


def test_fig4_utilization_follows_eq5_with_the_backlog_at_the_signals():
    exp = dataclasses.replace(fig4.EXPERIMENT, quick_grid={"aqm": ["codel", "pie"], "rtt_ms": [50, 300],
                                                          "beta": [0.5, 0.9]})
    summary = fig4._compare(summarize(exp, _ok(run_experiment(exp, jobs=2, quick=True)), quick=True))
    for _, r in summary.iterrows():
        assert abs(r["difference"]) <= fig4.TOLERANCE[r["aqm"]], r.to_dict()
        assert r["aqm_drops"] > 0 and r["overflow_drops"] == 0, "the AQM, not the buffer, signals"
    u = summary.set_index(["aqm", "rtt_ms", "beta"])["utilization"]
    for aqm in ("codel", "pie"):
        assert u[(aqm, 300, 0.5)] < u[(aqm, 50, 0.5)] - 0.05, "falls with RTT (L151)"
        assert u[(aqm, 300, 0.9)] > u[(aqm, 300, 0.5)] + 0.15, "a larger β recovers it (L151)"
    assert u[("codel", 300, 0.5)] == pytest.approx(0.76, abs=0.02), "eq. (6) with b = 5 ms: 0.760"


def test_fig6_beta_ecn_09_lands_near_the_bdp_in_at_most_7_steps():
    rows = {(r["rtt_ms"], r["beta_ecn"]): r
            for _, r in _ok(run_experiment(fig6.EXPERIMENT, jobs=2, quick=True)).iterrows()}
    for rtt in fig6.RTTS_MS:
        high, low = rows[(rtt, 0.9)], rows[(rtt, 0.5)]
        assert 0.8 <= high["exit_cwnd_bdp"] <= 1.05 and 1 <= high["exit_reductions"] <= 7
        assert low["exit_reductions"] == 1, "β_ecn 0.5 ends slow start in one step"
        assert high["throughput_mbps"] > low["throughput_mbps"]
    assert rows[(240, 0.5)]["mean_cwnd_after_bdp"] <= fig6.UNDERUSED
    assert rows[(240, 0.5)]["peak_cwnd_bdp"] > 1.0
