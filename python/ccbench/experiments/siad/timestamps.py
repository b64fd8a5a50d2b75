"""SIAD thesis §4.3.2 (5), Fig. 4.20 (notes ``siad-eval.md`` A7, §4.3): one SIAD(20) flow, 10 Mbit/s,
0.5 BDP, RTT 100 ms, with and without the TCP timestamp option (``timestamps``); 600 s, the last
580 s measured (quick: 120 s). Delayed ACKs: the Linux default (on).

Claim (L2439): without TSOpt the module reads the kernel's smoothed RTT (L3121) and performs fewer
Additional Decreases. The core reports no count of Additional Decreases, so they are estimated
from the cwnd trace (20 ms bins): cuts with no retransmission in the 200 ms before them
(:func:`additional_decreases`); an estimate, since the core has no counter for them.
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.siad.common import DURATION_S, WARMUP_S, dumbbell, every, flow, rows
from ccbench.experiments.siad.single_flow_traces import flow_metrics, link_metrics, number, trace_panel

QUICK_S = 120.0
TRACE_BIN = "20ms"
#: Retransmission-free time before a cwnd cut that counts it as an Additional Decrease.
LOOKBACK_S = 0.2


def _apply(point: dict) -> dict:
    return {"flows": [flow("SIAD(20)", name="flow", timestamps=point["timestamps"])]}


def additional_decreases(result, name: str = "flow") -> float:
    """cwnd cuts of more than 2 packets (after the warm-up) with no retransmission in the bin or
    the LOOKBACK_S before it: an Additional Decrease comes ≥ 1 RTT after a recovery ends, a loss
    reduction within a recovery that starts with a retransmission."""
    f = result.flows[result.flows["flow"] == name].set_index("t_s")
    cwnd = f["cwnd_bytes"] / result.flow(name).get("mss", 1448)
    bins = int(round(LOOKBACK_S / float(f.index[1] - f.index[0]))) + 1
    quiet = f["retransmits"].rolling(bins, min_periods=1).sum() == 0
    cut = (cwnd.diff() < -2) & quiet
    cut = cut[cut.index > result.summary["scenario"]["warmup_s"]]
    return float((cut & ~cut.shift(1, fill_value=False)).sum())


def _metric(result, point: dict) -> dict:
    s = result.flow("flow")
    return {**link_metrics(result), **flow_metrics(result, "flow", "siad"),
            "loss_reductions": number(s.get("loss_reductions")), "additional_decreases": additional_decreases(result),
            "duration_s": float(result.summary["scenario"]["duration_s"])}


def _rate_per_s(r) -> float:
    """This run's Additional Decreases per measured second."""
    return float(r["additional_decreases"]) / max(1e-9, float(r["duration_s"]) - WARMUP_S)


def _reach(on, off) -> float:
    """How far the thesis's 580 s could move the count comparison: the run's own Additional
    Decrease rates extrapolated to the full run's measured time (0 when neither run has one)."""
    full = DURATION_S - WARMUP_S
    return abs(_rate_per_s(on) - _rate_per_s(off)) * full


def _reason(on, off) -> str:
    if on["additional_decreases"] == 0 and off["additional_decreases"] == 0:
        return ("neither run shows an Additional Decrease (no cwnd cut without a retransmission in the "
                "200 ms before), so there are none for the smoothed RTT to avoid, and none at this rate in "
                "the full run's 580 s either")
    return ("without TSOpt the core gives SIAD the ACK's Karn RTT sample, not the smoothed RTT the "
            "module reads (L3121), so the samples are as noisy as with timestamps")


def _comparison(summary) -> list:
    """The thesis gives no count (Fig. 4.20, L2439), only that there are fewer without TSOpt: one
    case, held or not; and Fig. 4.20a's flow with TSOpt performs them (as the single flows of
    Fig. 4.12a do, L2343)."""
    on = summary[summary["timestamps"]].iloc[0]
    off = summary[~summary["timestamps"]].iloc[0]

    def text(r) -> str:
        return (f"{r['additional_decreases']:.0f} Additional Decreases (estimate), {r['loss_reductions']:.0f} loss "
                f"reductions, util {r['utilization']:.1%}, loss {r['loss_rate']:.2%}")

    fewer = every("SIAD(20), 10 Mbit/s, 0.5 BDP: fewer Additional Decreases with TSOpt off than on",
                  "fewer Additional Decreases without TSOpt", "Fig. 4.20, Sec. 4.3.2, L2439",
                  int(off["additional_decreases"] < on["additional_decreases"]), 1,
                  unit=f"runs (off: {text(off)}; on: {text(on)})", why=lambda: _reason(on, off),
                  # Additional Decreases are rare events: a quick run may hold few (full run: 600 s)
                  needs=("duration",))
    fewer.movable = _reach(on, off)
    occur = every("SIAD(20) with TSOpt, 10 Mbit/s, 0.5 BDP: Additional Decreases occur",
                  "the flow with TSOpt performs Additional Decreases (more than without)",
                  "Fig. 4.20a, Sec. 4.3.2, L2439", int(on["additional_decreases"] >= 1), 1,
                  unit=f"runs ({text(on)})", needs=("duration",),
                  why=lambda: f"no cwnd cut without a retransmission in the 200 ms before it in "
                              f"{float(on['duration_s']) - WARMUP_S:.0f} s measured: our SIAD's loss reductions "
                              f"({on['loss_reductions']:.0f}) are its only decreases")
    # Yes/no: the rest of the full run could turn "none" into "some" only at a rate above 0.
    occur.movable = min(1.0, _rate_per_s(on) * (DURATION_S - float(on["duration_s"])))
    return rows([fewer, occur])


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.2))
    for ax, ts in zip(axes, (True, False)):
        trace_panel(ax, EXPERIMENT.rerun({"timestamps": ts}, 1, ["duration=\"60s\"", "output.bin=\"50ms\""]),
                    f"Fig 4.20: SIAD(20) {'with' if ts else 'without'} TSOpt", ["flow"])
    fig.tight_layout()
    return save(fig, out_dir / "siad-timestamps.png")


EXPERIMENT = Experiment(
    name="siad-timestamps",
    description="SIAD thesis §4.3.2 (5), Fig. 4.20: one SIAD(20) flow with and without TCP timestamps, "
                "10 Mbit/s, 0.5 BDP, RTT 100 ms",
    base={**dumbbell("10Mbps", 0.5, [flow("SIAD(20)", name="flow")]),
          "output": {"bin": TRACE_BIN, "sojourn_samples": False}},
    grid={"timestamps": [True, False]},
    quick_overrides={"duration": f"{QUICK_S:g}s"},
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
