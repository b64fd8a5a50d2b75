"""rLEDBAT paper, Fig. 12 (L387–L389, caption L396): one rLEDBAT download (CUBIC sender) beside one
CUBIC download, both starting at once, 20 Mbps, 500 ms drop-tail buffer, base RTT swept; 300 s.

Claims: with a buffer above the 60 ms target rLEDBAT sees the queue pass its target and leaves most
of the capacity to CUBIC: it "yields in front of Cubic in all experiments" (L389); the same at
500 Mbps, "similar results" (L389, no figure). Notes' pass rows (§3 Fig. 12, BED-num): rLEDBAT
≤ 10 % of C at every RTT over the whole run including start-up (L315), CUBIC ≥ 80 %.

Arms: ``rledbat`` on the notes' RTT grid; ``ledbat++``, sender-side LEDBAT++ beside CUBIC (the
paper compares rLEDBAT with LEDBAT++'s published results [6], [11], L319), same grid; and
``rledbat`` at 500 Mbps on a few RTTs only (300 s at 500 Mbps is ~12 s of simulation per run
here, so the full variant runs RTTs 20/100/300 ms, all 8 seeds).

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
from ccbench.experiments.rledbat.common import DURATION_S, QUICK_DURATION_S, QUICK_SEEDS, RTTS_MS, SEEDS, base

FAST_MBPS = 500
FAST_RTTS_MS = [20, 100, 300]
QUICK_RTTS_MS = [20, 300]
QUICK_FAST_RTTS_MS = [100]
#: Notes §3 Fig. 12: rLEDBAT at most 10 % of C, CUBIC at least 80 %.
LBE_MAX, CUBIC_MIN = 0.10, 0.80


def _points(rtts, fast_rtts) -> list:
    return (pairs.points([pairs.RLEDBAT, pairs.LEDBATPP], rtts)
            + pairs.points([pairs.RLEDBAT], fast_rtts, rates_mbps=[FAST_MBPS]))


def yield_check(row, rate: float, paper: str, source: str, label: str = "rLEDBAT") -> Check:
    """The LBE flow yields (the notes' two rows as one number): CUBIC takes at least 80 % of C and
    at least what the two carry less 10 % of C (the LBE flow ≤ 10 %)."""
    check = Check(f"{rate:g} Mbps, RTT {row['rtt_ms']:g} ms: {label} yields, CUBIC's share of C "
                  f"(notes: {label} ≤ 10 %, CUBIC ≥ 80 %)", paper, source, float(row["cubic_share"]),
                  common.yield_claim(LBE_MAX, row["lbe_share"], row["cubic_share"], CUBIC_MIN),
                  shown=pairs.pair_text(row, label), of=("cubic_share",))
    if check.verdict != "agrees":
        total = row["lbe_share"] + row["cubic_share"]
        check.reason = (f"mean queue {row['queue_ms']:.0f} ms, {row['drops']:.0f} drops: "
                        + (f"the LBE flow keeps {row['lbe_share']:.1%}" if row["lbe_share"] > LBE_MAX
                           else f"the two flows carry {total:.1%} of C: CUBIC leaves part of the link idle"))
    return check


def _yield_rows(summary, rate: float, paper: str) -> list:
    return [yield_check(row, rate, paper, "Fig. 12, L389").row()
            for _, row in pairs.arm_rows(summary, pairs.RLEDBAT, rate).iterrows()]


def _ledbatpp_rows(summary) -> list:
    rows = pairs.arm_rows(summary, pairs.LEDBATPP, 20)
    return [yield_check(row, 20, "LEDBAT++ yields to CUBIC in all tested conditions [6]",
                        "L127, L319", "LEDBAT++ (sender side)").row() for _, row in rows.iterrows()]


def _comparison(summary) -> list:
    return (_yield_rows(summary, 20, "rLEDBAT yields to CUBIC in all experiments")
            + _yield_rows(summary, FAST_MBPS, "similar results at 500 Mbps")
            + _ledbatpp_rows(summary))


def _figure(summary, out_dir: Path) -> Path:
    columns = ["lbe_share", "cubic_share"]
    slow = pairs.wide(summary[summary["rate_mbps"] == 20], "rtt_ms", [pairs.RLEDBAT, pairs.LEDBATPP], columns)
    fast = pairs.wide(summary[summary["rate_mbps"] == FAST_MBPS], "rtt_ms", [pairs.RLEDBAT], columns)
    lines = [(f"{arm}:{col}", f"{who} beside {pairs.ARM_LABELS[arm]}" if col == "cubic_share"
              else pairs.ARM_LABELS[arm]) for arm in (pairs.RLEDBAT, pairs.LEDBATPP)
             for col, who in (("lbe_share", ""), ("cubic_share", "CUBIC"))]
    panels = [("20 Mbps", slow, "rtt_ms", "base RTT (ms)", lines),
              (f"{FAST_MBPS} Mbps", fast, "rtt_ms", "base RTT (ms)", lines[:2])]
    return pairs.panels_figure(out_dir / "rledbat-fig12.png", panels,
                               "rLEDBAT Fig. 12: one LBE flow vs one CUBIC flow, 500 ms buffer (whole 300 s)",
                               bands=[(0, LBE_MAX, "LBE pass band ≤ 10 %")])


EXPERIMENT = Experiment(
    name="rledbat-fig12",
    description="rLEDBAT Fig. 12: rLEDBAT (and sender-side LEDBAT++) vs CUBIC, 500 ms buffer, 20 Mbps over the "
                "RTT grid and 500 Mbps at RTT 20/100/300 ms; 300 s, 8 seeds",
    base=base(duration_s=DURATION_S, flows=pairs.versus_cubic_flows(pairs.RLEDBAT, 1)),
    grid={},
    points=_points(RTTS_MS, FAST_RTTS_MS),
    quick_points=_points(QUICK_RTTS_MS, QUICK_FAST_RTTS_MS),
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
