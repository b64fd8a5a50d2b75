"""SIAD thesis §4.3.2 (4), Fig. 4.19 (notes ``siad-eval.md`` A6, §4.3): one SIAD(20) flow beside
constant-bit-rate cross traffic of 1514-byte frames: 5 Mbit/s on 10 Mbit/s and 50 Mbit/s on
100 Mbit/s, 0.5 BDP, RTT 100 ms; each also without CBR for comparison. 600 s, last 580 s measured
(quick: 120 s at 10 Mbit/s, 60 s at 100 Mbit/s). CBR packets are 1472 B of payload + 28 B of
headers = 1500 B on our wire, the size of our TCP packets (the thesis's 1514 B count the Ethernet
header, which our links do not model), sent every 1500·8/rate seconds.

Claims (L2425–L2437): with 5 Mbit/s CBR, Adaptive Decrease (which assumes its own share is the
whole queue) often fails to empty the queue, so Additional Decreases follow; with 50 Mbit/s on
100 Mbit/s the 1 ms timestamp resolution hides the delay rise after a decrease, the minimum delay
creeps up (reset every fourth event by the three-in-a-row guard) and a standing queue remains.
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Claim
from ccbench.experiments.siad.common import DURATION_S, WARMUP_S, check, dumbbell, every, flow, rows
from ccbench.experiments.siad.single_flow_traces import flow_metrics, is_nan, link_metrics, trace_panel
from ccbench.experiments.siad.timestamps import additional_decreases

FRAME_BYTES, CBR_HEADER = 1500, 28
#: link rate → CBR rate (Mbit/s).
CBR = {10: 5, 100: 50}
QUICK_S = {10: 120.0, 100: 60.0}


def cbr_flow(rate_mbps: float) -> dict:
    """Constant bit rate of full-size frames (``rate_mbps`` on the wire)."""
    interval_us = FRAME_BYTES * 8 / rate_mbps
    return {"type": "cbr", "name": "cbr", "packet_size": FRAME_BYTES - CBR_HEADER, "interval": f"{interval_us:g}us"}


def _points(quick: bool) -> list:
    return [{"rate_mbps": rate, "cbr_mbps": cbr, **({"duration_s": QUICK_S[rate]} if quick else {})}
            for rate, c in CBR.items() for cbr in (0, c)]


def _apply(point: dict) -> dict:
    flows = [flow("SIAD(20)", name="flow")] + ([cbr_flow(point["cbr_mbps"])] if point["cbr_mbps"] else [])
    changes = {"bottleneck.rate": f"{point['rate_mbps']}Mbps", "flows": flows}
    if "duration_s" in point:
        changes["duration"] = f"{point['duration_s']:g}s"
    return changes


def _metric(result, point: dict) -> dict:
    return {**link_metrics(result), **flow_metrics(result, "flow", "siad"),
            "additional_decreases": additional_decreases(result),
            "measured_s": float(result.summary["scenario"]["duration_s"]) - WARMUP_S}


def _ad_row(what: str, r) -> list:
    """"Consequently TCP SIAD performs Additional Decreases from time to time" beside CBR traffic
    (L2425): at least one (estimated from the cwnd trace as in ``siad-timestamps``). A quick run is
    shorter: the run's own rate over the rest of the full run's 580 s is how far that could move it."""
    n, measured = float(r["additional_decreases"]), float(r["measured_s"])
    rest = max(0.0, DURATION_S - WARMUP_S - measured)
    row = every(f"{what}: Additional Decreases occur", "performed from time to time", "Sec. 4.3.2, L2425",
                int(n >= 1), 1, unit=f"runs ({n:.0f} in {measured:.0f} s, estimate)", needs=("duration",),
                why=f"no cwnd cut without a retransmission in its bin or the one before in {measured:.0f} s: "
                    "every decrease of our SIAD came with a retransmission (a loss reduction)")
    # Yes/no: the rest of the full run could turn "none" into "some" only at a rate above 0.
    row.movable = min(1.0, n / measured * rest)
    return [row]


def _row(summary, rate, cbr):
    rows = summary[(summary["rate_mbps"] == rate) & (summary["cbr_mbps"] == cbr)]
    return rows.iloc[0] if len(rows) else None


def _text(r) -> str:
    fill = "n/a" if is_nan(r["queue_fill_min"]) else f"{r['queue_fill_min']:.3f}"
    return (f"min fill {fill}, mean fill {r['queue_fill_mean']:.2f}, util {r['utilization']:.1%}, "
            f"SIAD {r['siad_mbps']:.2f} Mbit/s")


def _comparison(summary) -> list:
    checks = []
    for rate, cbr in CBR.items():
        alone, cross = _row(summary, rate, 0), _row(summary, rate, cbr)
        if alone is None or cross is None:
            continue
        what = f"SIAD(20) + {cbr} Mbit/s CBR on {rate} Mbit/s, 0.5 BDP"
        shown = f"{_text(cross)}; alone: {_text(alone)}"
        if rate == 10:
            paper, source = "queue often not emptied: more queueing than alone", "Sec. 4.3.2, L2425"
            if is_nan(cross["queue_fill_mean"]) or is_nan(alone["queue_fill_mean"]):
                checks.append(check(what, paper, source, None, None, shown=shown, reported="not measured"))
                continue
            ratio = float(cross["queue_fill_mean"] / alone["queue_fill_mean"])
            checks.append(check(
                f"{what}: mean queue fill with CBR over alone", paper, source, ratio, Claim("≥", 1.0),
                shown=f"{ratio:.2f} ({shown})", why="no more queueing with the CBR than alone"))
            checks += _ad_row(what, cross)
        else:
            paper, source = "standing queue (1 ms TS resolution)", "Sec. 4.3.2, L2427, L2437"
            if is_nan(cross["queue_fill_min"]):
                checks.append(check(what, paper, source, None, None, shown=shown, reported="not measured"))
                continue
            checks.append(every(f"{what}: a standing queue (min fill > 0)", paper, source,
                                int(cross["queue_fill_min"] > 0), 1, unit=f"runs ({shown})",
                                why="the queue drains with the CBR too"))
    return rows(checks)


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.2))
    for ax, (rate, cbr) in zip(axes, CBR.items()):
        result = EXPERIMENT.rerun({"rate_mbps": rate, "cbr_mbps": cbr, "duration_s": 60.0}, 1, ["output.bin=\"50ms\""])
        trace_panel(ax, result, f"Fig 4.19: SIAD(20) + {cbr} Mbit/s CBR on {rate} Mbit/s, 0.5 BDP", ["flow"])
    fig.tight_layout()
    return save(fig, out_dir / "siad-cbr.png")


EXPERIMENT = Experiment(
    name="siad-cbr",
    description="SIAD thesis §4.3.2 (4), Fig. 4.19: one SIAD(20) flow with 5 Mbit/s CBR on 10 Mbit/s "
                "and 50 Mbit/s CBR on 100 Mbit/s (and without), 0.5 BDP, RTT 100 ms",
    base=dumbbell("10Mbps", 0.5, [flow("SIAD(20)", name="flow")]),
    grid={},
    points=_points(quick=False),
    quick_points=_points(quick=True),
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
