"""Acceptance criteria: the simulator against the papers' models and measurements."""

import dataclasses

import pandas as pd
import pytest

import ccbench
from ccbench.experiments import Experiment, expand_grid, run_experiment, summarize
from ccbench.experiments.abe.fig2 import EXPERIMENT as FIG2
from ccbench.models import aimd_utilization


def test_aimd_model_newreno_utilization():
    """ABE eq. (6): one NewReno flow (beta 0.5, no delayed ACKs), 10 Mbps, RTT 100 ms, DropTail."""
    exp = dataclasses.replace(FIG2, grid={"beta": [0.5], "buffer_bdp": [0.25, 0.5, 1.0]}, seeds=(1,))
    assert exp.base["duration"] == "300s" and exp.base["warmup"] == "50s"
    assert exp.base["flows"][0]["delayed_ack"] is False
    assert exp.overrides({"beta": 0.5, "buffer_bdp": 0.25}) == [
        'bottleneck.buffer="0.25bdp"', "flows[0].cc.beta=0.5"]

    results = run_experiment(exp, jobs=2)
    assert list(results["error"]) == ["", "", ""]
    for _, row in results.iterrows():
        model = aimd_utilization(0.5, row["buffer_bdp"])
        assert abs(row["utilization"] - model) <= 0.03, (row["buffer_bdp"], row["utilization"], model)


def test_two_cubic_flows_share_fairly():
    scenario = {
        "duration": "200s",
        "warmup": "20s",
        "seed": 1,
        "bottleneck": {"rate": "20Mbps", "rtt": "100ms", "buffer": "1bdp", "aqm": "droptail"},
        "flows": [{"cca": "cubic"}, {"cca": "cubic"}],
        "output": {"sojourn_samples": False},
    }
    # Host timing noise makes every seed a different run: the check is on the mean of five.
    summaries = [ccbench.run(scenario, seed=seed).summary for seed in range(1, 6)]
    jain = sum(s["jain_index"] for s in summaries) / len(summaries)
    assert jain >= 0.95, [s["jain_index"] for s in summaries]
    assert len({s["flows"][0]["goodput_mbps"] for s in summaries}) > 1, "the seed must matter"
    for summary in summaries:
        total = sum(f["goodput_mbps"] for f in summary["flows"])
        assert 15.0 < total <= 20.0


def _link_metric(result, point):
    return {"rate_mbps": result.link("bottleneck")["rate_mbps"],
            "seed_seen": result.summary["scenario"]["seed"]}


def test_runner_orders_rows_by_grid_and_seed(tmp_path):
    base = {
        "duration": "2s",
        "warmup": "0s",
        "bottleneck": {"rate": "10Mbps", "rtt": "20ms", "buffer": "1bdp", "aqm": "droptail"},
        "flows": [{"cca": "cubic"}],
        "output": {"sojourn_samples": False},
    }
    grid = {"bottleneck.rate": ["5Mbps", "-3", "20Mbps"], "flows[0].cca": ["cubic", "newreno"]}
    exp = Experiment(name="tiny", base=base, grid=grid, seeds=(2, 1), metric=_link_metric)
    results = run_experiment(exp, jobs=2, out=tmp_path)

    expected = [(p["bottleneck.rate"], p["flows[0].cca"], s) for p in expand_grid(grid) for s in (2, 1)]
    assert list(zip(results["bottleneck.rate"], results["flows[0].cca"], results["seed"])) == expected
    assert list(results["run"]) == list(range(12))

    bad = results["bottleneck.rate"] == "-3"
    assert (results.loc[bad, "error"].str.contains("bottleneck.rate")).all()
    good = results[~bad]
    assert (good["error"] == "").all()
    assert list(good["seed_seen"]) == list(good["seed"])
    assert list(good["rate_mbps"]) == [5.0] * 4 + [20.0] * 4

    on_disk = pd.read_csv(tmp_path / "results.csv", keep_default_na=False)
    assert len(on_disk) == 12
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert len(summary) == 6 and list(summary["seeds"]) == [2, 2, 0, 0, 2, 2]
    assert summarize(exp, results)["rate_mbps"].iloc[0] == 5.0


def test_abe_fig7_codel_gains_at_400ms_match_the_paper():
    """ABE Fig. 7 (L219): one NewReno flow with ECN through CoDel at 10 Mbps, RTT 400 ms:
    beta_ecn 0.7/0.85/0.95 depart 13/24/31 % more bytes than 0.5 (±5 points), every reduction
    ECN-caused (no drops)."""
    from ccbench.experiments.abe.fig7 import BETA_ECN, PAPER_GAIN_400MS
    from ccbench.experiments.abe.fig7 import EXPERIMENT as FIG7

    exp = dataclasses.replace(FIG7, quick_grid={"aqm": ["codel"], "rtt_ms": [400], "beta_ecn": BETA_ECN})
    results = run_experiment(exp, jobs=2, quick=True)
    assert list(results["error"]) == [""] * len(BETA_ECN)
    assert (results["drops"] == 0).all() and (results["ecn_marks"] > 0).all()
    base = float(results.loc[results["beta_ecn"] == 0.5, "throughput_mbps"].iloc[0])
    gains = []
    for beta_ecn in BETA_ECN[1:]:
        thr = float(results.loc[results["beta_ecn"] == beta_ecn, "throughput_mbps"].iloc[0])
        gains.append(100 * (thr / base - 1))
        assert gains[-1] == pytest.approx(PAPER_GAIN_400MS[("codel", beta_ecn)], abs=5), beta_ecn
    assert gains == sorted(gains)
