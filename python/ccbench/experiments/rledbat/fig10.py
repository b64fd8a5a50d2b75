"""rLEDBAT paper, Fig. 10 (L372, caption L381): two rLEDBAT downloads (CUBIC senders) starting at the
same time, 20 Mbps, 500 ms drop-tail buffer, base RTT swept; 300 s, 8 runs.

Claim: Jain's fairness index [18] of the two rates is close to the ideal 1 (L372). Notes' pass row
(§3 Fig. 10): JFI ≥ 0.95 at every RTT (target ≥ 0.98).

Measured per run (``pairs.two_rledbat_metric``): each flow's goodput over the whole 300 s including
start-up (L315; "starting at the same time" is 0 s plus each flow's U[0, 100 ms) jitter) and the
core's Jain index of them (``jain_index``); the link's utilisation by the two and its mean queueing
delay, and the second flow's part of the two rates over the last 100 s.

Environment (issue 25 item 6): every run is in the testbed's (``common.testbed_experiment``: a
tbf burst by tc-tbf(8)'s rule at the point's rate, 32 KiB at 20 Mbps, and GRO at the receivers).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import pairs
from ccbench.experiments.rledbat.common import (
    CAPACITY_MBPS,
    DURATION_S,
    QUICK_DURATION_S,
    QUICK_RTTS_MS,
    QUICK_SEEDS,
    RTTS_MS,
    SEEDS,
    base,
    testbed_experiment,
)

#: Notes §3 Fig. 10: JFI ≥ 0.95 at every RTT; 0.98 is the notes' target.
JAIN_MIN, JAIN_TARGET = 0.95, 0.98


def _points(rtts) -> list:
    return [{"rate_mbps": CAPACITY_MBPS, "rtt_ms": rtt} for rtt in rtts]


def _apply(point: dict) -> dict:
    return {"bottleneck.rtt": f"{point['rtt_ms']:g}ms", "flows": pairs.two_rledbat_flows(point.get("seed", 1))}


def _comparison(summary) -> list:
    rows = []
    for _, row in summary.iterrows():
        check = Check(f"RTT {row['rtt_ms']:g} ms: Jain's index (notes: ≥ 0.95, target 0.98)", "close to the ideal 1",
                      "Fig. 10, L372", float(row["jain"]), Claim("≥", JAIN_MIN), of=("jain",),
                      shown=(f"{mean_spread(row, 'jain')} (min {row['jain_min']:.3f}); "
                             f"utilisation {row['utilization']:.1%}; mean queue {row['queue_ms']:.0f} ms"))
        if check.verdict != "agrees":
            check.reason = f"rates {row['first_mbps']:.2f} and {row['second_mbps']:.2f} Mbps (mean over seeds)"
        rows.append(check.row())
    return rows


def _figure(summary, out_dir: Path) -> Path:
    panel = ("20 Mbps, 500 ms buffer, both start at 0 s", summary, "rtt_ms", "base RTT (ms)",
             [("jain", "Jain's index (whole 300 s)")])
    return pairs.panels_figure(out_dir / "rledbat-fig10.png", [panel],
                               "rLEDBAT Fig. 10: two rLEDBAT flows starting together", ylabel="Jain's index",
                               bands=[(JAIN_MIN, 1.0, "pass band ≥ 0.95")])


EXPERIMENT = Experiment(
    name="rledbat-fig10",
    description="rLEDBAT Fig. 10: two rLEDBAT flows starting together, 20 Mbps, 500 ms buffer, RTT grid; "
                "Jain's index over 300 s, 8 seeds",
    base=base(duration_s=DURATION_S, flows=pairs.two_rledbat_flows(1)),
    grid={},
    points=_points(RTTS_MS),
    quick_points=_points(QUICK_RTTS_MS),
    seeds=SEEDS,
    quick_seeds=QUICK_SEEDS,
    quick_overrides={"duration": f"{QUICK_DURATION_S}s"},
    seed_in_point=True,
    apply=_apply,
    metric=pairs.two_rledbat_metric,
    figure=_figure,
    comparison=_comparison,
)
#: §5 (L307–L311): every run in the testbed's environment (tbf burst, GRO at the receivers).
EXPERIMENT = testbed_experiment(EXPERIMENT)
