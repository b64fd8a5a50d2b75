"""The can-fail test perturbs measurements, not a row's own number (issue 39 item 3), and finds the
three ways a row can be built never to fail: a complement share, one number judged twice with
opposite verdicts, two arms identical by construction. Hand-made experiments with hand-made
results, so each pattern is the only thing wrong in its table."""

import pandas as pd

from ccbench.experiments.base import Experiment
from ccbench.experiments.can_fail import findings
from ccbench.experiments.checks import Check, Claim


def _experiment(comparison, points) -> Experiment:
    return Experiment(name="hand-made", base={}, grid={}, metric=lambda r, p: {}, points=points,
                      comparison=comparison)


def _results(rows) -> pd.DataFrame:
    return pd.DataFrame([{**row, "seed": 1, "error": ""} for row in rows])


TWO_FLOWS = [{"arm": "a"}]


def _shares(summary):
    a = summary.iloc[0]
    total = a["lbe_mbps"] + a["cubic_mbps"]
    return a["lbe_mbps"] / total, a["cubic_mbps"] / total


def test_a_row_on_each_flows_own_rate_can_fail():
    def comparison(summary):
        lbe, cubic = _shares(summary)
        return [Check("LBE yields: its share", "≤ 0.2", "L1", lbe, Claim("≤", 0.2), of=("lbe_mbps",)).row(),
                Check("CUBIC takes the rest: its share", "≥ 0.75", "L1", cubic, Claim("≥", 0.75),
                      of=("cubic_mbps",)).row()]

    exp = _experiment(comparison, TWO_FLOWS)
    assert findings(exp, _results([{"arm": "a", "lbe_mbps": 1.0, "cubic_mbps": 19.0}]), quick=False) == []


def test_a_complement_share_is_found():
    """CUBIC's share computed as 1 − LBE's share (of the link): CUBIC's own rate never moves it."""

    def comparison(summary):
        a = summary.iloc[0]
        lbe = a["lbe_mbps"] / 20.0
        return [Check("CUBIC takes the rest: its share", "≥ 0.75", "L1", 1 - lbe, Claim("≥", 0.75),
                      of=("cubic_mbps",)).row()]

    exp = _experiment(comparison, TWO_FLOWS)
    found = findings(exp, _results([{"arm": "a", "lbe_mbps": 1.0, "cubic_mbps": 10.0}]), quick=False)
    assert {f.kind for f in found} == {"not about its measurement", "cannot fail"}, found
    assert "cubic_mbps" in found[0].detail


def test_a_number_judged_twice_with_opposite_verdicts_is_found():
    def comparison(summary):
        jain = summary.iloc[0]["jain"]
        return [Check("Jain index of the two rates", "≈ 0.99", "L2", jain, Claim("≈", 0.99, within=0.02)).row(),
                Check("Jain index at least 'fair'", "≥ 0.8", "L3", jain, Claim("≥", 0.8)).row()]

    exp = _experiment(comparison, TWO_FLOWS)
    found = findings(exp, _results([{"arm": "a", "jain": 0.85}]), quick=False)
    assert [f.kind for f in found] == ["judged twice"], found
    assert "judged differs there and agrees here" in found[0].detail


def test_a_number_judged_twice_alike_is_not_flagged():
    def comparison(summary):
        jain = summary.iloc[0]["jain"]
        return [Check("Jain ≈", "≈ 0.99", "L2", jain, Claim("≈", 0.99, within=0.02)).row(),
                Check("Jain ≥", "≥ 0.8", "L3", jain, Claim("≥", 0.8)).row()]

    assert findings(_experiment(comparison, TWO_FLOWS), _results([{"arm": "a", "jain": 0.99}]), quick=False) == []


def test_identical_arms_are_found():
    """Two arms that measure the same run for run (a parameter that changes nothing): their ratio
    is 1 by construction, so "about equal" cannot fail in the model, only in the data."""
    points = [{"beta": 0.5}, {"beta": 0.9}]

    def comparison(summary):
        low, high = summary.iloc[0]["fct_s"], summary.iloc[1]["fct_s"]
        return [Check("short flows: FCT at β 0.9 over FCT at β 0.5", "≈ 1", "L4", high / low,
                      Claim("≈", 1.0, within=0.1)).row()]

    same = _results([{"beta": 0.5, "fct_s": 1.25}, {"beta": 0.9, "fct_s": 1.25}])
    found = findings(_experiment(comparison, points), same, quick=False)
    assert [f.kind for f in found] == ["identical arms"], found
    apart = _results([{"beta": 0.5, "fct_s": 1.25}, {"beta": 0.9, "fct_s": 1.30}])
    assert findings(_experiment(comparison, points), apart, quick=False) == []


def test_a_bound_far_from_ours_still_can_fail():
    """A queue of 5 ms under a 100 ms bound passes by far, and a measurement a hundredfold fails it."""

    def comparison(summary):
        return [Check("queue under the bound", "≤ 100 ms", "L5", summary.iloc[0]["queue_ms"], Claim("≤", 100.0)).row()]

    assert findings(_experiment(comparison, TWO_FLOWS), _results([{"arm": "a", "queue_ms": 5.0}]), quick=False) == []


def test_a_row_that_reads_no_measurement_cannot_fail():
    def comparison(summary):
        return [Check("a constant", "≥ 0", "L6", 1.0, Claim("≥", 0.0)).row()]

    found = findings(_experiment(comparison, TWO_FLOWS), _results([{"arm": "a", "x": 1.0}]), quick=False)
    assert [f.kind for f in found] == ["cannot fail"] and "nothing moves it" in found[0].detail


def test_a_zero_can_fail_too():
    """"The queue drains": a minimum fill of 0 moves under no factor, so it is shifted as well."""

    def comparison(summary):
        return [Check("queue drains each epoch: min fill", "0", "L7", summary.iloc[0]["fill_min"],
                      Claim("≤", 0.01, relative=False)).row()]

    assert findings(_experiment(comparison, TWO_FLOWS), _results([{"arm": "a", "fill_min": 0.0}]), quick=False) == []


def test_a_claim_about_outliers_among_seeds_can_fail():
    """"No run far from the others": blind to the point's mean, it fails when one run alone moves."""

    def comparison(summary):
        r = summary.iloc[0]
        return [Check("no outlier: max over mean", "≤ 1.5", "L8", r["t_s_max"] / r["t_s"], Claim("≤", 1.5)).row()]

    runs = pd.DataFrame([{"arm": "a", "t_s": t, "seed": s, "error": ""} for s, t in enumerate((2.0, 2.1, 1.9), 1)])
    assert findings(_experiment(comparison, TWO_FLOWS), runs, quick=False) == []
