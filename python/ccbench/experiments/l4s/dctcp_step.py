"""DCTCP over a step marker: the link stays full while the marking threshold exceeds C·RTT/7.

DCTCP flows (ECT(1), AccECN feedback) alone in DualPI2's L queue, whose only signal without
Classic traffic is the step: every packet whose sojourn exceeds 1 ms is CE-marked (Linux
``sch_dualpi2``'s ``step_thresh``), the shallow threshold RFC 8257 §3.1 describes. At 100 Mbps
the threshold is K = C × 1 ms ≈ 8.3 packets. Alizadeh et al. (SIGCOMM 2010, §3.3) show that DCTCP
keeps the link busy when ``K > C × RTT / 7``: here while the base RTT is under 7 ms. Base RTTs 1–40 ms,
one and two flows.

Checks: utilisation at least 98 % (our reading of "100 % throughput" less the round-up of a
simulation) where the guideline holds; reported beyond it, where the paper predicts a loss of
utilisation and gives no number; and the L queue's 99th percentile delay a few step thresholds at
most (reported: the paper's queue is the oscillation around K, ``O(√(C·RTT))`` packets).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.l4s import common
from ccbench.experiments.l4s.common import dumbbell, flows_named, scalable_flow

RATE_MBPS = 100
RTTS_MS = [1, 2, 5, 10, 20, 40]
STEP_MS = 1.0
UTILIZATION_MIN = 0.98


def guideline_holds(rtt_ms: float) -> bool:
    """Alizadeh et al. §3.3: K > C × RTT / 7 with K = C × the step threshold."""
    return STEP_MS > rtt_ms / 7


def _apply(point: Dict[str, Any]) -> Dict[str, Any]:
    return {"bottleneck.rtt": f"{point['rtt_ms']}ms", "flows[0].count": point["flows"]}


def _metric(result, point) -> dict:
    flows = flows_named(result, "l4s")
    return {"goodput_mbps": common.total_goodput(flows), "l_p50_ms": common.delay(flows, "p50"),
            "l_p99_ms": common.delay(flows, "p99"), **common.bottleneck_numbers(result)}


def _checks(summary) -> list:
    checks = []
    for _, row in summary.sort_values(["flows", "rtt_ms"]).iterrows():
        where = f"{int(row['flows'])} flow(s), RTT {row['rtt_ms']:g} ms"
        bound = f"K = C × {STEP_MS:g} ms {'>' if guideline_holds(row['rtt_ms']) else '≤'} C × RTT / 7"
        if guideline_holds(row["rtt_ms"]):
            check = Check(f"utilisation, {where} ({bound})", "full throughput while K > C·RTT/7", common.DCTCP_PAPER,
                          float(row["utilization"]), Claim("≥", UTILIZATION_MIN),
                          shown=mean_spread(row, "utilization", ".3f"))
            if check.verdict != "agrees":
                check.reason = f"the queue runs empty: L queue median {row['l_p50_ms']:.3f} ms"
        else:
            check = Check(f"utilisation, {where} ({bound})", "below full throughput once K < C·RTT/7 (no number)",
                          common.DCTCP_PAPER, float(row["utilization"]), Claim("≤", UTILIZATION_MIN),
                          shown=mean_spread(row, "utilization", ".3f"))
            if check.verdict == "differs":
                check.reason = (f"the link stays busy below the guideline: the L queue's median is "
                                f"{row['l_p50_ms']:.3f} ms, so it never runs empty")
        checks.append(check)
        checks.append(Check(f"L queue delay p99, {where}", "oscillation around K (no number)", common.DCTCP_PAPER,
                            float(row["l_p99_ms"]), None, shown=mean_spread(row, "l_p99_ms", ".3f", "ms"),
                            reason=f"the paper says the queue oscillates around K ({STEP_MS:g} ms here) but gives no "
                                   "amplitude to judge a percentile by"))
    return checks


def _comparison(summary) -> list:
    return [c.row() for c in _checks(summary)]


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, (n, df) in enumerate(summary.groupby("flows", sort=True)):
        df = df.sort_values("rtt_ms")
        ax.errorbar(df["rtt_ms"], df["utilization"], yerr=df.get("utilization_std"), fmt="o-", color=f"C{i}",
                    capsize=2, label=f"{int(n)} DCTCP flow(s)")
    ax.axvline(7 * STEP_MS, color="k", ls="--", lw=0.8, label="RTT = 7 × step (K = C·RTT/7)")
    ax.axhline(UTILIZATION_MIN, color="0.5", ls=":", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("base RTT (ms)")
    ax.set_ylabel("bottleneck utilisation")
    ax.set_title(f"DCTCP over a {STEP_MS:g} ms step marker, {RATE_MBPS} Mbps")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return save(fig, out_dir / "l4s-dctcp-step.png")


EXPERIMENT = Experiment(
    name="l4s-dctcp-step",
    description="DCTCP alone in DualPI2's L queue (a 1 ms step marker) at 100 Mbps, RTT 1-40 ms: "
                "utilisation against the guideline K > C·RTT/7",
    base={**dumbbell([scalable_flow("dctcp")], rate=f"{RATE_MBPS}Mbps"), "duration": "30s", "warmup": "10s"},
    grid={"flows": [1, 2], "rtt_ms": RTTS_MS},
    quick_grid={"flows": [1], "rtt_ms": [2, 20]},
    seeds=(1, 2, 3),
    quick_seeds=(1,),
    quick_overrides={"duration": "20s", "warmup": "5s"},
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
