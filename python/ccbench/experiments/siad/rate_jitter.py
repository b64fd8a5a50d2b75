"""SIAD thesis §4.3.2 (2), Fig. 4.16 (notes ``siad-eval.md`` A4, §4.3): one flow of NewReno,
Cubic, H-TCP or SIAD(20) over a bottleneck whose service rate is drawn per packet between 10 and
30 Mbit/s (in order, ``rate_max``), RTT 100 ms, buffer 1.0 BDP sized at 10 Mbit/s; 600 s, the
last 580 s measured (quick: 120 s). Delayed ACKs: the Linux default (§4.3 does not say).

The thesis's numbers (L2409): utilization NewReno 97.8 %, H-TCP 97.9 %, SIAD 98.3 % (Cubic only
"not influenced", so full at 1 BDP as without jitter, L2730), SIAD slightly above H-TCP. Utilization is the link's busy time, so a faster packet counts for less time.
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Claim
from ccbench.experiments.siad.common import check, dumbbell, flow, rows
from ccbench.experiments.siad.single_flow_traces import flow_metrics, is_nan, link_metrics, trace_panel

SCHEMES = ("NewReno", "Cubic", "H-TCP", "SIAD(20)")
PAPER = {"NewReno": 0.978, "H-TCP": 0.979, "SIAD(20)": 0.983}
#: One run each in the thesis: ±2 utilization points (notes §8: trends, not exact values).
UTIL_TOL = 0.02
#: "Full" utilization as this work reads it of Cubic (``single_flow.FULL_UTIL``): at least 98 %.
CUBIC_FULL = 0.98
QUICK_S = 120.0


def _apply(point: dict) -> dict:
    return {"flows": [flow(point["scheme"], name="flow")]}


def _metric(result, point: dict) -> dict:
    return {**link_metrics(result), **flow_metrics(result, "flow", "flow")}


def _comparison(summary) -> list:
    checks = []
    for _, r in summary.iterrows():
        paper = PAPER.get(r["scheme"])
        fill = "n/a" if is_nan(r["queue_fill_min"]) else format(r["queue_fill_min"], ".2f")
        shown = f"{r['utilization']:.1%} (goodput {r['flow_mbps']:.2f} Mbit/s, min fill {fill})"
        if paper is None:
            # Cubic: "does not seem to get influenced" (L2409); at 1 BDP it keeps the link full with
            # a standing queue (L2730): at least "full", 98 %.
            checks.append(check(
                f"{r['scheme']}: utilization, per-packet rate 10–30 Mbit/s, 1.0 BDP (at 10)",
                f"cwnd not influenced: the link full at 1 BDP (≥ {CUBIC_FULL:.0%})", "Sec. 4.3.2, L2409; L2730",
                float(r["utilization"]), Claim("≥", CUBIC_FULL), shown=shown,
                why=lambda r=r: f"{r['utilization']:.1%}: the per-packet rates empty the queue of our Cubic"))
            continue
        checks.append(check(
            f"{r['scheme']}: utilization, per-packet rate 10–30 Mbit/s, 1.0 BDP (at 10)", f"{paper:.1%}",
            "Sec. 4.3.2, L2409", float(r["utilization"]), Claim("≈", paper, agree=UTIL_TOL, relative=False),
            shown=shown, why=lambda r=r, paper=paper: f"{(r['utilization'] - paper) * 100:+.1f} points off"))
    return rows(checks + _order_rows(summary))


def _order_rows(summary) -> list:
    """"TCP SIAD reaches a slightly higher utilization [than H-TCP] due to the ability of Scalable
    Increase to calculate a higher increase rate" (L2409): SIAD(20) over H-TCP at least 1."""
    util = summary.set_index("scheme")["utilization"]
    if not {"SIAD(20)", "H-TCP"} <= set(util.index):
        return []
    siad, htcp = float(util["SIAD(20)"]), float(util["H-TCP"])
    return [check("SIAD(20)'s utilization over H-TCP's, per-packet rate 10–30 Mbit/s",
                  "slightly higher: 98.3 % / 97.9 % = 1.004 (> 1)", "Sec. 4.3.2, L2409", siad / htcp,
                  Claim("≥", 1.0), shown=f"{siad:.2%} / {htcp:.2%} = {siad / htcp:.4f}",
                  why=f"both near full ({siad:.2%}, {htcp:.2%}): the too-large decreases the thesis sees in both "
                      "(L2409) cost our H-TCP less than our SIAD")]


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    fig, axes = plt.subplots(1, 5, figsize=(22, 4))
    for ax, scheme in zip(axes, SCHEMES):
        trace_panel(ax, EXPERIMENT.rerun({"scheme": scheme}, 1, ["duration=\"60s\"", "output.bin=\"50ms\""]),
                    f"Fig 4.16 {scheme}", ["flow"])
    ax = axes[-1]
    x = range(len(summary))
    ax.bar([i - 0.2 for i in x], summary["utilization"], 0.4, label="ours")
    ax.bar([i + 0.2 for i in x], [PAPER.get(s, float("nan")) for s in summary["scheme"]], 0.4, label="thesis (L2409)")
    ax.set_xticks(list(x), summary["scheme"], fontsize="x-small")
    ax.set_ylim(0.8, 1.01)
    ax.set_title("utilization", fontsize="small")
    ax.legend(fontsize="x-small")
    fig.tight_layout()
    return save(fig, out_dir / "siad-rate-jitter.png")


EXPERIMENT = Experiment(
    name="siad-rate-jitter",
    description="SIAD thesis §4.3.2 (2), Fig. 4.16: one flow, per-packet service rate 10–30 Mbit/s, "
                "1.0 BDP sized at 10 Mbit/s, RTT 100 ms",
    base=dumbbell("10Mbps", 1.0, [flow("SIAD(20)", name="flow")], rate_max="30Mbps"),
    grid={"scheme": list(SCHEMES)},
    quick_overrides={"duration": f"{QUICK_S:g}s"},
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
