"""SIAD thesis §4.5.1 (1)–(2), Fig. 4.29 (L2617–2628; notes ``siad-eval.md`` §2.2 rows C1, C2 and
§4.7): one flow while the bottleneck's rate changes.

* C1: 10 Mbit/s → 3 Mbit/s at 30 s → 10 Mbit/s at 60 s, buffer 0.5·BDP sized at 10 Mbit/s.
* C2: 100 → 25 → 100 Mbit/s, buffer 0.5·BDP sized at 100 Mbit/s.

Schemes: SIAD(20) and SIAD(40) as the thesis shows, Cubic and NewReno for contrast (the thesis
shows no trace of them here). Delayed ACKs on (L2473). RTT 100 ms, drop tail.

Claims: SIAD "can quickly adapt to a lower rate. Due to Additional Decrease it is able to fully
empty the queue" (L2621); when the rate returns, "as soon as Fast Increase is entered, TCP SIAD
quickly allocates the new capacity" (L2621) and at 100 Mbit/s "within a few seconds" (L2628),
while the 1 ms timestamp tick keeps it from emptying the queue after 100 → 25 (L2628).

Measured per run:
* ``realloc_80_s`` / ``realloc_95_s``: the core's ``reallocations`` entry of the flow at 60 s
  (fair share = the new link rate): seconds until its 200 ms receiver rate first reaches 80 / 95 %
  of it (NaN: not before the end).
* ``down_empty_s``: seconds from the drop at 30 s until the queue first runs empty once it has
  built up after the drop (a packet waited half the buffer's drain time at the low rate; a
  queue already empty at the drop says nothing of the adaptation): the first
  packet that waited less than one packet's transmission time at the low rate (it found at most
  the packet in service ahead of it), read from the per-packet ``sojourn`` samples (a trace
  reading, the thesis's queue trace at every arrival; the core's summary has no per-phase queue
  minimum, and a 200 ms bin's mean backlog hides a queue that touches zero). NaN: never before
  60 s. Cubic and NewReno keep a standing queue there (3 Mbit/s makes the 62.5 kB buffer
  1.7·BDP), so this is where "adapts down at once" shows.
* the window's ``utilization`` and ``loss_rate`` from the core's summary.

Choices where the thesis is silent: 90 s runs (the figure's span; every metric lies in
30–70 s), warm-up 20 s, one run per configuration as the thesis.
"""

from __future__ import annotations

import math
from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Claim
from ccbench.experiments.siad.common import (
    BIN,
    check,
    contrast,
    dumbbell,
    every,
    flow,
    reach_s,
    reallocation,
    rows,
    seconds,
)

DURATION_S = 90.0
DOWN_AT_S, UP_AT_S = 30.0, 60.0
#: (high, low) link rates in Mbit/s of the two scenarios.
LINKS = {"10-3-10": (10, 3), "100-25-100": (100, 25)}
SCHEMES = ["SIAD(20)", "SIAD(40)", "Cubic", "NewReno"]
SCHEMES_NUM_RTT = {"SIAD(20)": 20, "SIAD(40)": 40}
BUFFER_BDP = 0.5
FULL_PACKET_BITS = 1500 * 8
#: "Adapts down at once" (L2621): the queue empties within the first congestion epoch after the
#: drop, Num_RTT base RTTs (2 s for SIAD(20), 4 s for SIAD(40)): the first decrease and the
#: Additional Decrease right after it drain it, before the next regular congestion event.
BASE_RTT_S = 0.1
#: "Within a few seconds" (L2628); "in all scenarios a convergence time of only about 2 seconds"
#: (§4.5.3, L2690): about 2 s to 95 %, agreeing within ±25 %, within tolerance within ±50 %.
REALLOC_S, REALLOC_AGREE, REALLOC_WITHIN = 2.0, 0.25, 0.5
#: "Adapts at once … Due to Additional Decrease it is able to fully empty the queue" (L2621): the
#: first decrease comes with the first loss after the drop and the Additional Decrease one RTT
#: later, neither waiting for Num_RTT, so the queue is empty within SIAD(20)'s epoch (2 s) for
#: every Num_RTT (tighter than SIAD(40)'s own 4 s epoch).
DOWN_MAX_S = 2.0


def first_empty_s(result, link: str, after_s: float, before_s: float, rate_mbps: float,
                  built_ms: float = 0.0) -> float:
    """Seconds after ``after_s`` until the first packet leaving ``link`` (before ``before_s``) that
    waited less than one full packet's transmission time at ``rate_mbps``, counting only from the
    first packet that waited at least ``built_ms``; NaN if none."""
    samples = result.sojourn
    one_packet_ms = FULL_PACKET_BITS / (rate_mbps * 1e6) * 1e3
    rows = samples[(samples["link"] == link) & (samples["t_s"] > after_s) & (samples["t_s"] <= before_s)]
    built = (rows["sojourn_ms"] >= built_ms).to_numpy().nonzero()[0]
    rows = rows.iloc[built[0]:] if len(built) else rows.iloc[:0]
    empty = rows[rows["sojourn_ms"] < one_packet_ms]
    return float(empty["t_s"].iloc[0] - after_s) if len(empty) else math.nan


def built_queue_ms(link: str) -> float:
    """Half the buffer's drain time at the low rate: the buffer is 0.5·BDP at the high rate."""
    high, low = LINKS[link]
    return BUFFER_BDP * BASE_RTT_S * high / low * 1e3 / 2


def epoch_s(scheme: str) -> float:
    """Num_RTT base RTTs: one SIAD congestion epoch without queueing."""
    return SCHEMES_NUM_RTT[scheme] * BASE_RTT_S


def _apply(point: dict) -> dict:
    high, low = LINKS[point["link"]]
    return {
        "bottleneck.rate": f"{high}Mbps",
        "bottleneck.changes": [{"at": f"{DOWN_AT_S:g}s", "rate": f"{low}Mbps"},
                               {"at": f"{UP_AT_S:g}s", "rate": f"{high}Mbps"}],
        "flows": [flow(point["scheme"], name="tcp")],
    }


def _metric(result, point: dict) -> dict:
    up = reallocation(result, "tcp", UP_AT_S)
    link = result.link("bottleneck")
    low = LINKS[point["link"]][1]
    return {
        "realloc_80_s": reach_s(up, 80),
        "realloc_95_s": reach_s(up, 95),
        "down_empty_s": first_empty_s(result, "bottleneck", DOWN_AT_S, UP_AT_S, low, built_queue_ms(point["link"])),
        "utilization": link["utilization"],
        "loss_rate": link["loss_rate"],
    }


def _siad_rows(summary) -> list:
    checks = []
    for _, r in summary[summary["scheme"].str.startswith("SIAD")].iterrows():
        high, low = LINKS[r["link"]]
        empty = f"queue first empty after {seconds(r['down_empty_s'])} (epoch {epoch_s(r['scheme']):g} s)"
        if r["link"] == "100-25-100":
            # A yes/no claim without a number: one case, held or not.
            emptied = r["down_empty_s"] <= epoch_s(r["scheme"])  # NaN (never) compares False
            checks.append(every(
                f"{r['scheme']} {high}→{low} Mbit/s: the queue is not emptied within one epoch",
                "not emptied at once, decrease factor not adapted: 1 ms timestamps", "Sec. 4.5.1, L2628",
                int(not emptied), 1, unit=f"runs ({empty})",
                why="the first decrease and an Additional Decrease right after it drained the queue "
                    "within the epoch, as at 10→3 Mbit/s"))
        else:
            # A yes/no claim too: the thesis gives no time, only "at once" (a time bound on a
            # number that can be near 0 could not fail when halved or doubled).
            emptied = r["down_empty_s"] <= DOWN_MAX_S  # NaN (never) compares False
            checks.append(every(
                f"{r['scheme']} {high}→{low} Mbit/s: the queue built after the drop is emptied within "
                f"{DOWN_MAX_S:g} s", "adapts at once, queue emptied by Additional Decrease",
                "Sec. 4.5.1, L2621, Fig. 4.29", int(emptied), 1, unit=f"runs ({empty})",
                why=f"not emptied within {DOWN_MAX_S:g} s of the drop"))
        window = DURATION_S - UP_AT_S
        ours = float(r["realloc_95_s"]) if math.isfinite(r["realloc_95_s"]) else window
        checks.append(check(
            f"{r['scheme']} {low}→{high} Mbit/s at 60 s: time to 95 % of the link [s]",
            ("within a few seconds" if r["link"] == "100-25-100" else "quickly, once Fast Increase is entered")
            + f"; about {REALLOC_S:g} s in all scenarios",
            f"Sec. 4.5.1, {'L2628' if r['link'] == '100-25-100' else 'L2621'}; Sec. 4.5.3, L2690",
            ours, Claim("≈", REALLOC_S, agree=REALLOC_AGREE, within=REALLOC_WITHIN),
            shown=f"{seconds(r['realloc_95_s'])} (80 %: {seconds(r['realloc_80_s'])})",
            why=f"95 % after {seconds(ours)}, not about {REALLOC_S:g} s"))
    return checks


def _order_rows(summary) -> list:
    """"The TCP SIAD configuration with a Num_RTT value of 40 converges faster" after the rise back
    to 10 Mbit/s (L2621; the thesis's one run, where the change met SIAD(40) at its epoch's end)."""
    at = summary[summary["link"] == "10-3-10"].set_index("scheme")["realloc_95_s"]
    if not {"SIAD(20)", "SIAD(40)"} <= set(at.index):
        return []
    t20, t40 = float(at["SIAD(20)"]), float(at["SIAD(40)"])
    return [check("10-3-10 Mbit/s: SIAD(40)'s time to 95 % after the rise over SIAD(20)'s",
                  "SIAD(40) converges faster (< 1)", "Sec. 4.5.1, L2621, Fig. 4.29", t40 / t20,
                  Claim("≤", 1.0), shown=f"{seconds(t40)} / {seconds(t20)} = {t40 / t20:.2f}",
                  why=lambda: f"SIAD(40) took {seconds(t40)}, SIAD(20) {seconds(t20)}; the thesis ties the order "
                              "to where in its epoch the rise meets each flow (L2621), one run each")]


def _contrast_rows(summary) -> list:
    """Cubic and NewReno beside SIAD: arms of ours the thesis does not run here (Fig. 4.29 shows
    SIAD only), so no claim."""
    return [contrast(f"{r['scheme']} {r['link']} Mbit/s: empty queue after drop; 95 % after rise",
                     "not in the thesis (an arm of ours beside SIAD)", "Sec. 4.5.1, Fig. 4.29", None,
                     shown=f"{seconds(r['down_empty_s'])}; {seconds(r['realloc_95_s'])}",
                     reason=f"the thesis shows no trace of {r['scheme']} here")
            for _, r in summary[~summary["scheme"].str.startswith("SIAD")].iterrows()]


def _comparison(summary) -> list:
    return rows(_siad_rows(summary) + _order_rows(summary) + _contrast_rows(summary))


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    links = list(dict.fromkeys(summary["link"]))
    fig, axes = plt.subplots(2, len(links), figsize=(6.5 * len(links), 6.5), squeeze=False, sharex=True)
    for col, link in enumerate(links):
        high, _ = LINKS[link]
        for i, scheme in enumerate(summary[summary["link"] == link]["scheme"]):
            result = EXPERIMENT.rerun({"link": link, "scheme": scheme}, 1)
            rate = result.flows[result.flows["flow"] == "tcp"]
            queue = result.links[result.links["link"] == "bottleneck"]
            axes[0][col].plot(rate["t_s"], rate["throughput_mbps"], lw=0.8, color=f"C{i}", label=scheme)
            axes[1][col].plot(queue["t_s"], queue["queue_bytes"] / 1e3, lw=0.8, color=f"C{i}", label=scheme)
        axes[0][col].set_title(f"{link} Mbit/s, 0.5·BDP at {high} Mbit/s (thesis Fig. 4.29)")
        axes[0][col].set_ylabel("receiver rate, 200 ms bins (Mbit/s)")
        axes[1][col].set_ylabel("mean queue per bin (kB)")
        axes[1][col].set_xlabel("time (s)")
        for ax in axes[:, col]:
            for t in (DOWN_AT_S, UP_AT_S):
                ax.axvline(t, color="grey", ls=":", lw=0.8)
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
    return save(fig, out_dir / "siad-capacity-change.png")


EXPERIMENT = Experiment(
    name="siad-capacity-change",
    description="SIAD thesis §4.5.1 Fig. 4.29: one flow, link 10→3→10 and 100→25→100 Mbit/s at 30/60 s, "
                "0.5·BDP: queue emptied after the drop, time to 80/95 % after the rise",
    base={**dumbbell("10Mbps", BUFFER_BDP, [flow("SIAD(20)", name="tcp")], duration_s=DURATION_S),
          "output": {"bin": BIN, "sojourn_samples": True}},
    grid={"link": list(LINKS), "scheme": SCHEMES},
    quick_grid={"link": ["10-3-10"], "scheme": SCHEMES},
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
