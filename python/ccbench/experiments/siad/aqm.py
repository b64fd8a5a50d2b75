"""SIAD thesis §4.6.2, Tables 4.8 and 4.9 (L2748–2808; notes ``siad-eval.md`` §2.2 row D3 and
§4.10): one flow through an AQM.

10 Mbit/s, RTT 100 ms, one flow of NewReno, Cubic, H-TCP, SIAD(20) or SIAD(40); delayed ACKs on.
Queues (Table 4.8 and L2750):

* RED4, RED1, NRED4, NRED1: ``aqm = "red"`` with the core's preset of that name (min/max
  threshold ¼ / ¾ of the buffer, max_p 0.1, w_q 0.002 or 1, gentle off, drops not marks) and the
  buffer Table 4.8 pairs with it (4 or 1·BDP).
* CoDel: the "zero-config" defaults, target 5 ms, interval 100 ms, 1·BDP.
* PIE: "default, target 20 ms", 1·BDP. RFC 8033 later lowered the target to 15 ms; the thesis
  (2014) used the draft's PIE, whose defaults (target 20 ms, tupdate 30 ms) the core's
  ``profile = "linux-3.17"`` reproduces (sch_pie as merged in Linux 3.14).

Measured (the core's summary over [20 s, 600 s]): the bottleneck's ``utilization``, ``loss_rate``
(drops / arrivals, packets; the thesis counts bytes) and ``queue_fill_mean`` (time-weighted mean
backlog / buffer limit), the three sub-tables of Table 4.9; to explain differences, the queue's
``loss_events`` (drops within 2·RTT grouped) and drops per event.

Choices where the thesis is silent: RED's gentle mode (off, as the thesis's RED description,
L1152), CoDel's interval (the standard 100 ms), one run per configuration (600 s, 20 s warm-up).
"""

from __future__ import annotations

import math
from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Claim
from ccbench.experiments.siad.common import check, dumbbell, every, factor_claim, flow, rows

SCHEMES = ["NewReno", "Cubic", "H-TCP", "SIAD(20)", "SIAD(40)"]
#: Queue name → (buffer ·BDP, aqm, aqm_params).
QUEUES = {
    "RED4": (4.0, "red", {"preset": "red4"}),
    "RED1": (1.0, "red", {"preset": "red1"}),
    "NRED4": (4.0, "red", {"preset": "nred4"}),
    "NRED1": (1.0, "red", {"preset": "nred1"}),
    "CoDel": (1.0, "codel", {"target": "5ms", "interval": "100ms"}),
    "PIE": (1.0, "pie", {"profile": "linux-3.17", "target": "20ms"}),
}
QUICK_DURATION_S = 150.0

#: Table 4.9 is a tight anchor (notes §8): utilization within 5 points; loss rate within a factor
#: of 2 (or 0.05 points for the thesis's near-zero rates, a handful of drops in 580 s); queue
#: fill within 0.05 of the buffer or a factor of 1.5, whichever is larger. As checks the floors go
#: (a near-zero cell with an absolute floor passes whatever our number, halved or doubled): the
#: loss rate is held to ±50 % of the thesis's (``common.factor_claim``), the fill to ±50 %.
UTIL_TOL, LOSS_FACTOR, LOSS_FLOOR_PCT = 0.05, 2.0, 0.05
FILL_TOL, FILL_FACTOR = 0.05, 1.5
#: "TCP SIAD can reach respectively high link utilization of 88%-99% for all scenarios" (L2766):
#: both ends; the upper one as the table's own highest SIAD cell (99.75 %, NRED4 SIAD(40), L2785),
#: which the prose rounds to 99 %.
SIAD_UTIL_MIN, SIAD_UTIL_MAX = 0.88, 0.9975


def _table(text: str) -> dict:
    """Rows "queue v_NewReno v_Cubic v_H-TCP v_SIAD(20) v_SIAD(40)" → {(queue, scheme): value}."""
    out = {}
    for line in text.strip().splitlines():
        queue, *values = line.split()
        out.update({(queue, scheme): float(v) for scheme, v in zip(SCHEMES, values)})
    return out


#: Table 4.9 (a) utilization [%], (b) loss rate [%], (c) queue fill [fraction] (L2782–2808).
THESIS_UTIL = _table("""
RED4 99.27 99.96 90.28 90.31 91.32
RED1 89.44 89.4 85.28 88.55 92.64
NRED4 100 100 97.12 97.07 99.75
NRED1 89.5 98.91 97.7 98.2 96.56
CoDel 78.75 90.45 94.82 91.74 92.12
PIE 87.52 96.06 93.64 89.28 92.16
""")
THESIS_LOSS = _table("""
RED4 0.006 0.062 0.347 2.246 1.924
RED1 0.015 0.094 0.532 4.23 3.807
NRED4 0.005 0.032 0.168 0.341 0.048
NRED1 0.012 0.035 0.167 0.577 1.114
CoDel 0.016 0.044 0.123 4.106 2.867
PIE 0.014 0.037 0.127 3.689 3.806
""")
THESIS_FILL = _table("""
RED4 0.1428 0.1362 0.1278 0.2926 0.2672
RED1 0.0783 0.0592 0.14 0.291 0.2721
NRED4 0.1432 0.1840 0.1125 0.1468 0.1451
NRED1 0.0665 0.1036 0.1054 0.1376 0.1392
CoDel 0.0084 0.0118 0.0178 0.106 0.1268
PIE 0.0514 0.0911 0.1012 0.2174 0.2058
""")


def _apply(point: dict) -> dict:
    buffer, aqm, params = QUEUES[point["queue"]]
    return {"bottleneck.buffer": f"{buffer:g}bdp", "bottleneck.aqm": aqm, "bottleneck.aqm_params": params,
            "flows": [flow(point["scheme"], name="tcp")]}


def _metric(result, point: dict) -> dict:
    link = result.link("bottleneck")
    events = link["loss_events"]
    return {"utilization": link["utilization"], "loss_rate": link["loss_rate"],
            "queue_fill_mean": link["queue_fill_mean"], "loss_events": events,
            "drops_per_event": link["drops"] / events if events else math.nan}


def _events(r) -> str:
    """How the losses come: congestion events and drops per event at the queue."""
    return f"ours {r['loss_events']:.0f} congestion events, {r['drops_per_event']:.1f} drops each"


def _cell_rows(summary) -> list:
    checks = []
    for _, r in summary.iterrows():
        key = (r["queue"], r["scheme"])
        where, source = f"Table 4.9 {r['queue']}, {r['scheme']}", "Table 4.9, L2782–L2808"
        util, loss, fill = r["utilization"] * 100, r["loss_rate"] * 100, r["queue_fill_mean"]
        p_util, p_loss, p_fill = THESIS_UTIL[key], THESIS_LOSS[key], THESIS_FILL[key]
        checks += [
            check(f"{where}: utilization [%]", f"{p_util:.2f}", source, util,
                  Claim("≈", p_util, within=UTIL_TOL * 100, relative=False), shown=f"{util:.2f}",
                  why=lambda r=r, off=util - p_util: f"{off:+.1f} points; {_events(r)}"),
            check(f"{where}: loss rate [%]", f"{p_loss:.3f}", source, loss, factor_claim(p_loss, LOSS_FACTOR),
                  shown=f"{loss:.3f}", why=lambda r=r, x=loss / p_loss: f"×{x:.2f} the thesis's; {_events(r)}"),
            check(f"{where}: mean queue fill", f"{p_fill:.4f}", source, fill,
                  Claim("≈", p_fill, within=FILL_FACTOR - 1), shown=f"{fill:.4f}",
                  why=lambda r=r, x=fill / p_fill: f"×{x:.2f} the thesis's; {_events(r)}"),
        ]
    return checks


def _claim_rows(summary) -> list:
    siad = summary[summary["scheme"].str.startswith("SIAD")]
    checks = []
    if not siad.empty:
        low, high = float(siad["utilization"].min()), float(siad["utilization"].max())
        worst = siad.loc[siad["utilization"].idxmin()]
        best = siad.loc[siad["utilization"].idxmax()]
        shown = f"{low * 100:.1f} % … {high * 100:.1f} %"
        checks.append(check(
            "SIAD(20)/(40): lowest utilization over every AQM", "high, 88 %–99 % for all scenarios",
            "Sec. 4.6.2, L2766", low, Claim("≥", SIAD_UTIL_MIN), shown=shown,
            why=f"{worst['scheme']} with {worst['queue']} under {SIAD_UTIL_MIN:.0%}"))
        checks.append(check(
            "SIAD(20)/(40): highest utilization over every AQM",
            f"88 %–99 % for all scenarios (the table's highest: {SIAD_UTIL_MAX:.2%}, NRED4 SIAD(40))",
            "Sec. 4.6.2, L2766; Table 4.9, L2785", high, Claim("≤", SIAD_UTIL_MAX), shown=shown,
            why=f"{best['scheme']} with {best['queue']} over {SIAD_UTIL_MAX:.2%}"))
    highest = []
    for queue in dict.fromkeys(summary["queue"]):
        part = summary[summary["queue"] == queue].set_index("scheme")["loss_rate"]
        siad_max = part[[s for s in part.index if s.startswith("SIAD")]].max()
        others = part[[s for s in part.index if not s.startswith("SIAD")]]
        highest.append((queue, bool(len(others)) and siad_max >= others.max()))
    # "Always" includes the non-smoothed NRED queues: their rates are "comparably low" (L2768) next
    # to SIAD's other queues, yet Table 4.9b still has SIAD highest there (0.341, 0.577, L2793–L2794).
    judged = highest
    if judged:
        checks.append(every(
            "SIAD has the highest loss rate, per queue",
            "always highest (NRED's comparably low, still highest in Table 4.9b)", "Sec. 4.6.2, L2768; L2791–L2796",
            sum(h for _, h in judged), len(judged),
            unit="queues (" + ", ".join(f"{q}: {'yes' if h else 'no'}" for q, h in highest) + ")",
            why=lambda: "another scheme loses more with " + ", ".join(q for q, h in judged if not h)))
    return checks


def _comparison(summary) -> list:
    return rows(_claim_rows(summary) + _cell_rows(summary))


def _figure(summary, out_dir: Path) -> Path:
    import numpy as np

    from ccbench.plot import pyplot, save

    plt = pyplot()
    queues = [q for q in QUEUES if (summary["queue"] == q).any()]
    fig, axes = plt.subplots(3, 1, figsize=(10, 10))
    x = np.arange(len(queues))
    width = 0.8 / len(SCHEMES)
    panels = (("utilization", THESIS_UTIL, 100, "utilization (%)"), ("loss_rate", THESIS_LOSS, 100, "loss rate (%)"),
              ("queue_fill_mean", THESIS_FILL, 1, "mean queue fill (of buffer)"))
    for ax, (column, thesis, scale, label) in zip(axes, panels):
        for i, scheme in enumerate(SCHEMES):
            part = summary[summary["scheme"] == scheme].set_index("queue")
            ours = [part[column].get(q, np.nan) * scale for q in queues]
            ax.bar(x + i * width, ours, width, color=f"C{i}", label=scheme)
            ax.plot(x + i * width, [thesis[(q, scheme)] for q in queues], "k_", ms=12, mew=2)
        ax.set_xticks(x + 0.4 - width / 2, queues)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, axis="y")
    axes[0].set_title("Thesis Table 4.9: one flow, 10 Mbit/s (bars ours, black ticks thesis)")
    axes[0].set_ylim(50, 102)
    axes[1].legend(fontsize="small", ncol=5, loc="upper left")
    return save(fig, out_dir / "siad-aqm.png")


EXPERIMENT = Experiment(
    name="siad-aqm",
    description="SIAD thesis §4.6.2 Table 4.9: one flow, 10 Mbit/s, RED4/RED1/NRED4/NRED1/CoDel/PIE: "
                "utilization, loss rate, mean queue fill",
    base=dumbbell("10Mbps", 1.0, [flow("SIAD(20)", name="tcp")]),
    grid={"queue": list(QUEUES), "scheme": SCHEMES},
    quick_grid={"queue": list(QUEUES), "scheme": ["NewReno", "Cubic", "SIAD(20)"]},
    quick_overrides={"duration": f"{QUICK_DURATION_S:g}s"},
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
