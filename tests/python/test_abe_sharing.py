"""ABE Figs. 12–15 (sharing between flows): convergence-time ratios (12–13) and the normalised
throughput ratio of ECN CUBIC with ABE against non-ECN NewReno (14–15), on the experiments'
quick subsets, with the notes' BED tolerances (``experiments-abe.md`` §3).

Only claims that hold in the full runs are asserted here; the rest (CUBIC beta_ecn 0.5/0.6
slower, 0.9 within [0.67, 1.5], NewReno/PIE 0.75 faster, every run converging) are reported in
comparison.json with the reason they differ.
"""

import json
import math

import pandas as pd
import pytest

import ccbench
from ccbench.experiments import run_experiment
from ccbench.experiments.abe import fig12_13, fig14_15
from ccbench.experiments.abe.fig12_13 import SELF, ratios
from ccbench.experiments.checks import redecide

# ---------------------------------------------------------------- Figs. 12-13: set-up and ratios


def test_fig12_13_scenario_gives_both_flows_the_same_settings():
    exp = fig12_13.EXPERIMENT
    point = {"cca": "newreno", "aqm": "pie", "rate_mbps": 5, "rtt_ms": 40, "beta_ecn": 0.75}
    sc = ccbench.validate(exp.base, overrides=exp.overrides(point))
    assert len(sc["flows"]) == 2
    for flow in sc["flows"]:
        assert flow["cca"] == "newreno" and flow["cc"]["beta_ecn"] == 0.75
        assert flow["tcp"]["ecn"] and flow["tcp"]["stack"] == "freebsd"
    assert [f["start_ns"] for f in sc["flows"]] == [0, 30 * 10**9]
    link = next(l for l in sc["links"] if l["name"] == "bottleneck")
    assert link["aqm"] == "pie" and link["ecn"] and link["aqm_params"]["profile"] == "linux-3.17"
    assert link["aqm_params"]["ecn_drop_above"] == 1.0, "the 10 % ECN-drop rule is off (L207)"


def _summary(rows):
    """A summary as the runner writes it: one row per grid point, one column per seed."""
    return pd.DataFrame([{"cca": "cubic", "aqm": "codel", "rate_mbps": 10, "rtt_ms": 20, "beta_ecn": beta,
                          "convergence_s_seed1": s1, "convergence_s_seed2": s2}
                         for beta, s1, s2 in rows])


def _ratios(summary):
    return ratios(summary, time="convergence_s")


def test_convergence_ratios_take_the_papers_first_reach_by_default():
    """L270: the convergence time is when Jain's index "reached" 0.95: its first reach."""
    summary = _summary([(0.7, 2.0, 4.0), (0.9, 3.0, 1.0)])
    summary["convergence_first_s_seed1"], summary["convergence_first_s_seed2"] = [1.0, 0.5], [2.0, 1.0]
    by = {(r.beta_ecn, r.seed): r.ratio for r in ratios(summary).itertuples()}
    assert by[(0.9, 1)] == 0.5 and by[(0.9, 2)] == 0.5


def test_convergence_ratios_pair_runs_seed_by_seed():
    table = _ratios(_summary([(0.7, 2.0, 4.0), (0.9, 3.0, math.inf), (0.5, math.inf, math.inf)]))
    by = {(r.beta_ecn, r.seed): r.ratio for r in table.itertuples()}
    assert by[(0.9, 1)] == 1.5
    assert by[(0.9, 2)] == math.inf, "a run that never settles is slower than any that does"
    assert by[(0.5, 1)] == math.inf
    assert by[(SELF, 1)] == 0.5 and by[(SELF, 2)] == 2.0, "the default against the next seed"
    default_never = _ratios(_summary([(0.7, math.inf, 1.0), (0.9, 3.0, 1.0)]))
    assert default_never.set_index(["beta_ecn", "seed"]).loc[(0.9, 1), "ratio"] == 0.0
    both_never = _ratios(_summary([(0.7, math.inf, 1.0), (0.9, math.inf, 1.0)]))
    assert math.isnan(both_never.set_index(["beta_ecn", "seed"]).loc[(0.9, 1), "ratio"])


# ---------------------------------------------------------------- Figs. 12-13: the claims


@pytest.fixture(scope="module")
def fig12_13_quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("abe-fig12-13")
    results = run_experiment(fig12_13.EXPERIMENT, quick=True, jobs=2, out=out)
    summary = pd.read_csv(out / "summary.csv")
    return results, summary, ratios(summary), out


def _median(table, cca, beta, aqm=None):
    rows = table[(table["cca"] == cca) & (table["beta_ecn"] == beta)]
    rows = rows if aqm is None else rows[rows["aqm"] == aqm]
    return rows["ratio"].dropna().median(), (rows["ratio"].dropna() < 1).mean()


def test_fig12_13_every_quick_run_converges(fig12_13_quick):
    """L275: every run converged. True in these 5-10 Mbps cells (not in the full grid)."""
    results, _, _, out = fig12_13_quick
    assert (results["error"] == "").all()
    assert results["never_converged"].sum() == 0
    assert (results["convergence_s"] > 0).all() and (results["convergence_s"] < 60).all()
    assert (out / "abe-fig12.png").is_file() and (out / "abe-fig13.png").is_file()
    rows = json.loads((out / "comparison.json").read_text())
    converged = [r for r in rows if r["what"].endswith("stays ≥ 0.95 within 90 s")]
    assert [r["claim"]["value"] for r in converged] == [1.0, 1.0]  # L275: all runs converged
    for row in rows:
        # a contrast row (a model or a sibling beside ours) states no claim
        assert row["verdict"] == ("contrast" if row["verdict"] == "contrast" and row["claim"] is None
                                  else redecide(row, row["value"])), row


def test_cubic_abe_never_clearly_speeds_convergence(fig12_13_quick):
    """L279: no beta_ecn above CUBIC's 0.7 clearly improves convergence, and fewer than half
    of the runs converge faster (notes: median in [0.67, 1.5] and ≤ 60 % below 1; beta_ecn 0.9
    exceeds 1.5 in the full grid, so only its ≤ 60 % is asserted)."""
    table = fig12_13_quick[2]
    for beta in (0.75, 0.8, 0.9):
        median, faster = _median(table, "cubic", beta)
        assert median >= 0.9, (beta, median)
        assert faster <= 0.6, (beta, faster)
        if beta < 0.9:
            assert 0.67 <= median <= 1.5, (beta, median)


def test_newreno_convergence_not_consistently_harmed(fig12_13_quick):
    """L279, L289: for NewReno every beta_ecn keeps the median ratio within [0.5, 2.0]."""
    table = fig12_13_quick[2]
    for beta in (0.6, 0.7, 0.75, 0.8, 0.9):
        median, _ = _median(table, "newreno", beta)
        assert 0.5 <= median <= 2.0, (beta, median)


def test_convergence_ratios_are_heavy_tailed(fig12_13_quick):
    """L277: outliers in both directions, for both CCAs."""
    table = fig12_13_quick[2]
    for cca in ("cubic", "newreno"):
        ratio = table[(table["cca"] == cca) & (table["beta_ecn"] != SELF)]["ratio"].dropna()
        assert ratio.quantile(0.05) < 0.5 and ratio.quantile(0.95) > 2.0, cca


# ---------------------------------------------------------------- Figs. 14-15


def test_fig14_15_scenario_splits_ten_flows():
    exp = fig14_15.EXPERIMENT
    sc = ccbench.validate(exp.base, overrides=exp.overrides(
        {"aqm": "codel", "rtt_ms": 160, "beta_ecn": 0.85, "cubic_flows": 3}))
    cubic = [f for f in sc["flows"] if f["cca"] == "cubic"]
    newreno = [f for f in sc["flows"] if f["cca"] == "newreno"]
    assert len(cubic) == 3 and len(newreno) == 7
    assert all(f["tcp"]["ecn"] and f["cc"]["beta_ecn"] == 0.85 for f in cubic)
    assert not any(f["tcp"]["ecn"] for f in newreno), "legacy flows without ECN: the worst case (L291)"
    assert sc["warmup_ns"] == 2 * 10**9 and sc["duration_ns"] == 300 * 10**9


@pytest.fixture(scope="module")
def fig14_15_quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("abe-fig14-15")
    results = run_experiment(fig14_15.EXPERIMENT, quick=True, jobs=2, out=out)
    assert (results["error"] == "").all()
    assert (out / "abe-fig14.png").is_file() and (out / "abe-fig15.png").is_file()
    return fig14_15.lines(pd.read_csv(out / "summary.csv"))


def _line(table, aqm, rtt):
    return table[(table["aqm"] == aqm) & (table["rtt_ms"] == rtt)].set_index("beta_ecn")["mean"]


def test_abe_cubic_gets_at_most_three_times_newreno(fig14_15_quick):
    """L298: at most a factor of 3 at beta_ecn 0.9, about double at 0.85 (notes: ≤ 3.5 and
    [1.3, 2.7]), rising with beta_ecn (10 % noise allowed)."""
    for aqm in ("codel", "pie"):
        for rtt in sorted(set(fig14_15_quick["rtt_ms"])):
            line = _line(fig14_15_quick, aqm, rtt)
            assert line[0.9] <= 3.5, (aqm, rtt, line[0.9])
            assert 1.3 <= line[0.85] <= 2.7, (aqm, rtt, line[0.85])
            assert line[0.85] >= 0.9 * line[0.7] and line[0.9] >= 0.9 * line[0.85], (aqm, rtt, line)


def test_codel_and_pie_differ_marginally(fig14_15_quick):
    """L298: notes' |CoDel − PIE| / CoDel ≤ 0.25."""
    for rtt in sorted(set(fig14_15_quick["rtt_ms"])):
        codel, pie = _line(fig14_15_quick, "codel", rtt), _line(fig14_15_quick, "pie", rtt)
        assert ((codel - pie).abs() / codel <= 0.25).all(), (rtt, codel, pie)
