"""ABE paper §IV-B, Fig. 7: bytes departed by one long NewReno flow with ECN through CoDel and
PIE at 10 Mbps, as a gain over beta_ecn = 0.5, for RTT 100/200/400 ms.

The paper's numbers (L219; notes ``experiments-abe.md`` Fig. 7): at RTT 400 ms the long-run
gains for beta_ecn 0.7/0.85/0.95 are 13/24/31 % (CoDel) and 9/16/37 % (PIE), within ±5 points;
gains grow with beta_ecn, and are at least as large at 400 ms as at 100 ms. PIE runs the
Linux 3.17 code of the paper's ns-2 with the 10 % ECN-drop rule off (§IV-A, L207); CoDel the
Linux defaults (5 ms, 100 ms); the buffer is Linux's 1000 packets.
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.models import aqm_utilization

BETA_ECN = [0.5, 0.7, 0.85, 0.95]
AQM_PARAMS = {"codel": {}, "pie": {"profile": "linux-3.17", "ecn_drop_above": 1.0}}
#: L219: long-run gain (%) over beta_ecn 0.5 at RTT 400 ms.
PAPER_GAIN_400MS = {
    ("codel", 0.7): 13, ("codel", 0.85): 24, ("codel", 0.95): 31,
    ("pie", 0.7): 9, ("pie", 0.85): 16, ("pie", 0.95): 37,
}
#: The notes' tolerance class for these numbers: ±5 points of gain.
TOLERANCE_POINTS = 5.0
#: The queueing delay each AQM steers to (CoDel target 5 ms; PIE 3.17 target 20 ms): the
#: buffer b of the AIMD model, as the notes' cross-check of Fig. 7 takes it.
TARGET_MS = {"codel": 5.0, "pie": 20.0}


def model_gain(aqm: str, rtt_ms: float, beta_ecn: float) -> float:
    """Eq. (6) with b = the AQM's target delay and δ = the RTT: utilization gain (%) over 0.5."""
    target_s, rtt_s = TARGET_MS[aqm] / 1e3, rtt_ms / 1e3
    return 100 * (aqm_utilization(beta_ecn, target_s, rtt_s) / aqm_utilization(0.5, target_s, rtt_s) - 1)


def _apply(point: dict) -> dict:
    return {
        "bottleneck.aqm": point["aqm"],
        "bottleneck.aqm_params": AQM_PARAMS[point["aqm"]],
        "bottleneck.rtt": f"{point['rtt_ms']}ms",
        "flows[0].cc.beta_ecn": point["beta_ecn"],
    }


def _metric(result, point: dict) -> dict:
    link = result.link("bottleneck")
    flow = result.summary["flows"][0]
    return {"throughput_mbps": link["throughput_mbps"], "drops": link["drops"],
            "ecn_marks": link["ecn_marks"], "timeouts": flow["timeouts"]}


def _compare(summary):
    summary = summary.copy()
    base = summary[summary["beta_ecn"] == 0.5].set_index(["aqm", "rtt_ms"])["throughput_mbps"]
    reference = [base.get((a, r)) for a, r in zip(summary["aqm"], summary["rtt_ms"])]
    summary["gain_pct"] = 100 * (summary["throughput_mbps"] / reference - 1)
    summary["model_gain_pct"] = [model_gain(a, r, b) for a, r, b in
                                 zip(summary["aqm"], summary["rtt_ms"], summary["beta_ecn"])]
    return summary


def _gain(summary, aqm: str, rtt: int, beta_ecn: float):
    rows = summary[(summary["aqm"] == aqm) & (summary["rtt_ms"] == rtt) & (summary["beta_ecn"] == beta_ecn)]
    return None if rows.empty else float(rows["gain_pct"].iloc[0])


def _comparison(summary) -> list:
    summary = _compare(summary) if "gain_pct" not in summary else summary
    rows = []
    for (aqm, beta_ecn), paper in PAPER_GAIN_400MS.items():
        ours = _gain(summary, aqm, 400, beta_ecn)
        if ours is None:
            continue
        row = summary[(summary["aqm"] == aqm) & (summary["rtt_ms"] == 400) & (summary["beta_ecn"] == beta_ecn)].iloc[0]
        ok = abs(ours - paper) <= TOLERANCE_POINTS
        rows.append({
            "what": f"{aqm}, RTT 400 ms, beta_ecn {beta_ecn:g}: bytes departed over beta_ecn 0.5",
            "paper": f"+{paper}%",
            "ours": f"{ours:+.1f}%; {mean_spread(row, 'throughput_mbps', unit='Mbps')}",
            "verdict": "agrees" if ok else "differs",
            "reason": "" if ok else (
                f"more than {TOLERANCE_POINTS:g} points off; eq. (6) with b = the {TARGET_MS[aqm]:g} ms "
                f"target predicts {model_gain(aqm, 400, beta_ecn):+.1f}%"),
        })
    for (aqm, rtt), df in summary.groupby(["aqm", "rtt_ms"], sort=True):
        gains = df.sort_values("beta_ecn")["gain_pct"].tolist()
        ok = all(b >= a for a, b in zip(gains, gains[1:]))
        rows.append({
            "what": f"{aqm}, RTT {rtt} ms: gain grows with beta_ecn",
            "paper": "yes (L219)", "ours": " / ".join(f"{g:+.1f}%" for g in gains),
            "verdict": "agrees" if ok else "differs", "reason": "" if ok else "not monotone in beta_ecn",
        })
    for aqm in sorted(set(summary["aqm"])):
        for beta_ecn in BETA_ECN[1:]:
            near, far = _gain(summary, aqm, 100, beta_ecn), _gain(summary, aqm, 400, beta_ecn)
            if near is None or far is None:
                continue
            ok = far >= near
            m_far, m_near = model_gain(aqm, 400, beta_ecn), model_gain(aqm, 100, beta_ecn)
            rows.append({
                "what": f"{aqm}, beta_ecn {beta_ecn:g}: gain at 400 ms ≥ gain at 100 ms",
                "paper": "yes (L219)", "ours": f"{far:+.1f}% vs {near:+.1f}%",
                "verdict": "agrees" if ok else "differs",
                "reason": "" if ok else (f"{near - far:.1f} points smaller; eq. (6) predicts "
                                         f"{m_far:+.1f}% vs {m_near:+.1f}%"),
            })
    return rows


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    aqms = sorted(set(summary["aqm"]))
    fig, axes = plt.subplots(1, len(aqms), figsize=(5 * len(aqms), 4), sharey=True, squeeze=False)
    for ax, aqm in zip(axes[0], aqms):
        for i, (rtt, df) in enumerate(summary[summary["aqm"] == aqm].groupby("rtt_ms", sort=True)):
            df = df.sort_values("beta_ecn")
            ax.plot(df["beta_ecn"], df["gain_pct"], "o-", color=f"C{i}", label=f"RTT {rtt} ms")
        paper = [(b, g) for (a, b), g in PAPER_GAIN_400MS.items() if a == aqm]
        ax.plot(*zip(*paper), "k*", ms=9, label="paper, RTT 400 ms")
        ax.set_title(f"{aqm.upper()}: one NewReno flow with ECN, 10 Mbps")
        ax.set_xlabel("beta_ecn")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    axes[0][0].set_ylabel("bytes departed, gain over beta_ecn 0.5 (%)")
    return save(fig, out_dir / "abe-fig7.png")


EXPERIMENT = Experiment(
    name="abe-fig7",
    description="ABE Fig. 7: bytes departed by one NewReno flow with ECN through CoDel and PIE "
                "(10 Mbps, RTT 100/200/400 ms), as a gain over beta_ecn 0.5",
    base={
        "duration": "300s",
        "warmup": "20s",
        "seed": 1,
        "bottleneck": {"rate": "10Mbps", "rtt": "100ms", "buffer": "1000p", "aqm": "codel", "ecn": True},
        # The ns-2 settings of the notes §5 (as Figs. 8 and 9): SACK, no delayed ACKs, IW 3 (L304).
        "flows": [{"cca": "newreno", "ecn": True, "cc": {"beta_ecn": 0.5}, "sack": True,
                   "delayed_ack": False, "initial_window": 3}],
        "output": {"sojourn_samples": False},
    },
    grid={"aqm": ["codel", "pie"], "rtt_ms": [100, 200, 400], "beta_ecn": BETA_ECN},
    quick_grid={"aqm": ["codel", "pie"], "rtt_ms": [100, 400], "beta_ecn": BETA_ECN},
    seeds=(1, 2, 3),
    quick_seeds=(1,),
    quick_overrides={"duration": "150s"},
    apply=_apply,
    metric=_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
