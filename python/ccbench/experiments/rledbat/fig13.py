"""rLEDBAT paper, Fig. 13 (L391, caption L399): one rLEDBAT download (CUBIC sender) beside one CUBIC
download, both starting at once, base RTT 20 ms, 500 ms drop-tail buffer, capacity swept; 300 s.

Claim: rLEDBAT yields to CUBIC at every capacity tested (L391). Notes' pass row (§3 Fig. 13):
rLEDBAT ≤ 10 % of C at every capacity, over the whole run including start-up (L315). The paper
prints no capacity grid (notes §5 item 1): we use the notes' Fig. 6 grid, 1–50 Mbps. The paper
compares nothing with LEDBAT++ here, so there is no LEDBAT++ arm.

Measured per run (``pairs.versus_cubic_metric``): each flow's goodput over the whole 300 s, as a
share of C and of the best goodput 0.9547·C; the bottleneck's mean queueing delay and drops.

Environment (issue 25 item 6): every run is in the testbed's (``common.testbed_experiment``: a
tbf burst by tc-tbf(8)'s rule at the point's rate, 32 KiB at 20 Mbps, and GRO at the receivers).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Check
from ccbench.experiments.rledbat import common, pairs
from ccbench.experiments.rledbat.common import CAPACITIES_MBPS, DURATION_S, QUICK_DURATION_S, QUICK_SEEDS, SEEDS, base

RTT_MS = 20
QUICK_CAPACITIES_MBPS = [1, 10, 50]
#: Notes §3 Fig. 13: rLEDBAT at most 10 % of C.
LBE_MAX = 0.10


def _points(capacities) -> list:
    return pairs.points([pairs.RLEDBAT], [RTT_MS], rates_mbps=capacities)


def _comparison(summary) -> list:
    rows = []
    for _, row in summary.iterrows():
        check = Check(f"C = {row['rate_mbps']:g} Mbps: rLEDBAT yields, CUBIC's share of C (notes: rLEDBAT ≤ 10 %)",
                      "rLEDBAT yields to CUBIC for all capacities", "Fig. 13, L391", float(row["cubic_share"]),
                      common.yield_claim(LBE_MAX, row["lbe_share"], row["cubic_share"]),
                      shown=pairs.pair_text(row, "rLEDBAT"), of=("cubic_share",))
        if check.verdict != "agrees":
            total = row["lbe_share"] + row["cubic_share"]
            check.reason = (f"mean queue {row['queue_ms']:.0f} ms, {row['drops']:.0f} drops: "
                            + (f"rLEDBAT keeps {row['lbe_share']:.1%}" if row["lbe_share"] > LBE_MAX
                               else f"the two flows carry {total:.1%} of C: CUBIC leaves part of the link idle"))
        rows.append(check.row())
    return rows


def _figure(summary, out_dir: Path) -> Path:
    frame = pairs.wide(summary, "rate_mbps", [pairs.RLEDBAT], ["lbe_share", "cubic_share"])
    lines = [("rledbat:lbe_share", pairs.ARM_LABELS[pairs.RLEDBAT]), ("rledbat:cubic_share", "CUBIC")]
    return pairs.panels_figure(out_dir / "rledbat-fig13.png",
                               [(f"base RTT {RTT_MS} ms", frame, "rate_mbps", "capacity (Mbps)", lines)],
                               "rLEDBAT Fig. 13: rLEDBAT vs CUBIC, 500 ms buffer (whole 300 s)",
                               bands=[(0, LBE_MAX, "rLEDBAT pass band ≤ 10 %")])


EXPERIMENT = Experiment(
    name="rledbat-fig13",
    description="rLEDBAT Fig. 13: rLEDBAT vs CUBIC, RTT 20 ms, 500 ms buffer, capacity 1–50 Mbps; 300 s, 8 seeds",
    base=base(duration_s=DURATION_S, flows=pairs.versus_cubic_flows(pairs.RLEDBAT, 1)),
    grid={},
    points=_points(CAPACITIES_MBPS),
    quick_points=_points(QUICK_CAPACITIES_MBPS),
    seeds=SEEDS,
    quick_seeds=QUICK_SEEDS,
    quick_overrides={"duration": f"{QUICK_DURATION_S}s"},
    seed_in_point=True,
    apply=pairs.versus_cubic_apply,
    metric=pairs.versus_cubic_metric,
    figure=_figure,
    comparison=_comparison,
)
#: §5 (L307–L311): every run in the testbed's environment (tbf burst, GRO at the receivers).
EXPERIMENT = common.testbed_experiment(EXPERIMENT)
