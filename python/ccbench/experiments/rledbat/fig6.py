"""rLEDBAT paper, Fig. 6 (L344–L346, caption L353): rLEDBAT alone, delay-based mode, capacity swept.

Scenario: one greedy download from a CUBIC sender to an rLEDBAT receiver (L346), buffer 500 ms
(above the 60 ms target, so rLEDBAT runs on delay, L342), base RTT 20 ms, capacity 1–50 Mbps
(L346; the grid is the notes' §5 item 1 suggestion), 300 s, 8 runs (L315).

Claims: rLEDBAT seizes about 90 % of the capacity, as sender LEDBAT++ did; the 10 % lost is the
periodic slowdowns (L346).

We measure the core's goodput of the download over the whole run including start-up (L315) and
report it over C and over the best goodput 0.9547·C (``solo``). Pass (notes §3, Fig. 6):
rate/C in [0.83, 0.97] at every capacity, 1 Mbps included (the notes, §6 item 9, would allow it
higher, as there 2 MSS ≥ BDP and a slowdown costs nothing; the paper says about 90 % at all). The notes' "no trend larger
than ±5 points" between 5 and 50 Mbps is reported: the paper gives it no size, and the per-capacity
band already bounds it.

Environment (issue 25 item 6): every run is in the testbed's (``common.testbed_experiment``: a
tbf burst by tc-tbf(8)'s rule at the point's rate, 32 KiB at 20 Mbps, and GRO at the receivers).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import common, solo

QUICK_CAPACITIES_MBPS = [1, 10, 50]
BAND = (0.83, 0.97)
#: Capacities whose spread is checked for a trend, and its half-width (notes: ±5 points).
TREND_FROM_MBPS, TREND_HALF_WIDTH = 5, 0.05


def _band_rows(summary) -> list:
    rows = []
    for _, r in summary.iterrows():
        # "about 90 %" at every capacity (L346), 1 Mbps included: the notes (§6 item 9) would let it
        # sit above the band, since there 2 MSS ≥ BDP and a slowdown idles nothing; the paper does not
        claim = Claim("in", BAND)
        check = Check(f"{r['capacity_mbps']:g} Mbps: rate/C", "about 90 %", "Fig. 6, L346", float(r["utilisation"]),
                      claim, shown=mean_spread(r, "utilisation", note=f"of best goodput {r['of_best']:.3f}"),
                      of=("utilisation",))
        if check.verdict != "agrees":
            check.reason = (f"below the band: {r['retransmits']:.0f} retransmissions and {r['timeouts']:.0f} timeouts "
                            "per run; slowdowns and slow restarts idle the link longer than 10 % of the run"
                            if r["utilisation"] < BAND[0] else
                            f"above the band: the slowdowns cost {1 - r['of_best']:.1%} of the best goodput, less than "
                            "the paper's 10 %")
        rows.append(check.row())
    return rows


def _trend_row(summary) -> dict:
    part = summary[summary["capacity_mbps"] >= TREND_FROM_MBPS]
    span = float(part["utilisation"].max() - part["utilisation"].min()) if len(part) else float("nan")
    return Check(f"no trend with capacity ({TREND_FROM_MBPS}–50 Mbps)", "about 90 % at every capacity", "Fig. 6, L346",
                 None, shown=f"range {span:.3f} over {len(part)} capacities" if len(part) else "no such capacity run",
                 reason=("the paper gives no size for a trend, so it is reported; the level is checked per capacity "
                         f"above (the notes' ±5 points: {'within' if span <= 2 * TREND_HALF_WIDTH else 'outside'})"
                         if len(part) >= 2 else "fewer than two capacities ≥ 5 Mbps in this variant")).row()


def _comparison(summary) -> list:
    return _band_rows(summary) + [_trend_row(summary)]


def _figure(summary, out_dir: Path) -> Path:
    return solo.arms_figure(summary, out_dir / "rledbat-fig6.png", [solo.RLEDBAT],
                            "rLEDBAT Fig. 6: alone, RTT 20 ms, buffer 500 ms", bands=[(*BAND, "pass band")],
                            x="capacity_mbps", xlabel="capacity (Mbps)")


EXPERIMENT = Experiment(
    name="rledbat-fig6",
    description="rLEDBAT Fig. 6: one rLEDBAT download (CUBIC sender) alone, capacity 1–50 Mbps, RTT 20 ms, "
                "500 ms buffer, 300 s; rate over the whole run / C",
    base=solo.solo_base(common.DEEP_BUFFER),
    grid={"capacity_mbps": common.CAPACITIES_MBPS, "arm": [solo.RLEDBAT]},
    quick_grid={"capacity_mbps": QUICK_CAPACITIES_MBPS, "arm": [solo.RLEDBAT]},
    seeds=common.SEEDS,
    quick_seeds=common.QUICK_SEEDS,
    quick_overrides={"duration": f"{common.QUICK_DURATION_S}s"},
    seed_in_point=True,
    apply=solo.solo_apply,
    metric=solo.solo_metric,
    figure=_figure,
    comparison=_comparison,
)
#: §5 (L307–L311): every run in the testbed's environment (tbf burst, GRO at the receivers).
EXPERIMENT = common.testbed_experiment(EXPERIMENT)
