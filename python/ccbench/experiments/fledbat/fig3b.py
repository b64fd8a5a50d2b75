"""fLEDBAT paper, Fig. 3(b) (L278, L294–L300): two backlogged fLEDBAT flows with ζ = 5, the
second 10 s after the first.

Claims: a large enough ζ lets the first-comer's decrease flush the queue, so the latecomer learns
the true base delay and the shares become fair; the queue's PDF has more mass at 0; the model
somewhat overestimates the queue (wider window swings); efficiency drops below 1 because the
link sometimes idles (L298–L300). With a too small ζ the latecomer's wrong base can persist
(L296): the contrast runs (ζ = 0.1, the paper's Fig. 2 value; 0.01, Fig. 3(a)'s; 0.001, the notes'
contrast) show where.

The missing eq. (5) (L118–L120) is read as every fLEDBAT experiment reads it, the decrease
applied once per RTT (``common.DECREASE``: ``cwnd ← cwnd·(1 − ζ(q̂ − τ)/τ) + α`` after each
window of ACKs, floored; the notes' §3.2 variant, crates/cc/src/fledbat.rs; common.py's comment
has the comparison of the two readings over all the figures). The other reading, the per-ACK
decrease (the controller's default), is the contrast: at the paper's ζ = 5, where it does not
flush, and at ζ = 7 and 10, where its flush sets in.

Setting: the paper's reference scenario (L261–L271): 10 Mbps, 100-packet buffer, P = 1500 B
(1460 B payload + 40 B headers), ACKs not delayed, base RTT 50 ms plus a per-flow jitter uniform in
[0, 1] ms (L271; drawn once per flow from the run's seed, the notes' suggestion for the unstated
jitter model), τ = 25 ms, α = 1 (notes §4 items 2–3), initial window 2 segments (ns-2's
``windowInit_``, the paper's simulator, L261; as ``fig2`` and ``fig3a``), second flow at 10 s (the
notes' suggestion for the unstated gap), 300 s (notes §4 item 5), 10 runs (L271). Until issue 25
both flows started with Linux's 10 segments, the stack's default (a contrast arm).

The two readings at ζ = 5 (issue 25 item 5), from the runs and seed 1's traces:

* Once per RTT the paper's Fig. 3(b) holds at ζ = 5. Full run (10 seeds, 300 s): P(Q = 0) 19.8 %
  over [10 s, end] (lowest seed 6.5 %), F 0.990 (lowest 0.970, 10 of 10 seeds ≥ 0.9; latecomer's
  share 52.9 %), η 0.911 (highest seed 0.988), mean queue 8.9 packets below Q* = 21.0, no drops.
  Quick run (2 seeds, 120 s): 14.1 %, F 0.999, η 0.944, 10.3 packets. The mechanism: the window
  holds for a round and the round's cut is decided on the q̂ of the ACK that closes it, near the
  queue's peak, and applied whole (to the floor once q̂ ≥ τ + τ/ζ, 5 ms above τ at ζ = 5); when
  the two flows' cuts fall together (seed 1, 151.50–151.52 s: 31.7 → 22.3 and 32.6 → 14.9
  segments) the queue goes from 20 packets to 0 within 60 ms, and every 2-s stretch of
  [150 s, end] meets an empty queue. The latecomer's wrong base is corrected the same way: the
  queue is empty 21.5 % of [10, 20] s (mean over the seeds).
* Per ACK (contrast) it does not: full, P(Q = 0) 0.004 %, F 0.630 (0 of 10 seeds ≥ 0.9;
  latecomer's share 88.8 %), η 1.000, mean queue 20.4 packets; quick 0.0 %, F 0.531, η 1.000,
  23.6 packets; the queue is empty 0.075 % of [10, 20] s. The decrease starts with the first ACK
  whose q̂ passes τ and stops as soon as q̂ falls back, so each downswing removes only about the
  excess: two per-ACK flows sharing the queue (seed 1's trace of the per-ACK run with Linux's
  IW 10, this figure's arm before per RTT became the main reading, after its join) swing it
  between about 6 and 23 packets every ~0.5 s, removing ζ·W·(q̂ − τ)/τ ≈ 6 packets per flow in
  the next RTT (W ≈ 29), too few to empty a 21-packet queue. With ns-2's IW 2 nothing flushes
  the queue when the latecomer joins: it takes part of the first-comer's queue as base delay
  (none of its packets meets less than 4 ms of queue in seed 1), its target sits that much
  higher, the first-comer falls to its 2-segment floor, and the latecomer alone holds the queue
  at τ plus its base error, about 24 packets in seed 1, without swings. Per ACK the flush sets in
  at a larger ζ: at ζ = 7 the least queue is 0 in at least half of seed 1's 2-s stretches, and
  the traits are at their edge there and complete at ζ = 10 (contrast arms).
* With Linux's IW 10 (contrast arm, once per RTT) the flush and fairness hold as with IW 2.

The too small ζ's leave the latecomer ahead, as L296 warns (full: ζ = 0.1, latecomer's share
91 %; 0.01, 75 %); at ζ = 0.001 Q* passes the buffer, the queue overflows and the loss halving
keeps 7 of 10 seeds fair.

Measured (notes' pass rows): Jain's index F and η over the last half of the run, read from the
core with ``warmup`` at half the duration (the bottleneck's ``jain_long`` over the flows' wire
rates and its ``efficiency``, wire bytes departed over capacity, headers included, L306; the
latecomer's share from the flows' ``throughput_mbps``); from the 1 ms series (the core has no
time-averaged backlog): the mean queue over the last half against the model's
Q* = Cτ + Nατ/(ζR) (eq. 10, with the base RTT R as the paper writes it); P(Q = 0) over the shared
period [10 s, end] from 1 ms samples of the backlog (the mean over each 1 ms bin, shorter than one
packet's 1.2 ms transmission, rounded to whole packets), also over the latecomer's first 10 s.
The paper rows judge P(Q = 0) ≥ 5 % as P(Q > 0) ≤ 95 %, and mean queue ≤ Q* as the buffer the
mean queue leaves free, B − mean ≥ B − Q*: the same bounds, stated on numbers that a halved or
doubled reading moves across them (tests/python/test_fledbat_checks_can_fail.py).
"""

from __future__ import annotations

import math
from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.fledbat.common import (
    BUFFER_PACKETS,
    CAPACITY_MBPS,
    DECREASE,
    JITTERED,
    OTHER_DECREASE,
    PAPER_FLOW,
    PAPER_IW,
    PROPAGATION_RTT,
    bottleneck,
    core_rates_mbps,
    empty_share,
    fledbat_cc,
    last_half,
    measured_window,
    queue_equilibrium_packets,
)

PAPER_ZETA = 5.0
#: Linux's initial window, the contrast arm (the set-up's until issue 25).
LINUX_IW = 10
#: The controller's ``decrease`` values: the main reading of the missing eq. (5), shared by every
#: fLEDBAT experiment (``common.DECREASE``, once per RTT), and the other one (per ACK), the
#: contrast here (crates/cc/src/fledbat.rs).
PER_ACK, PER_RTT = "per-ack", "per-rtt"
MAIN, CONTRAST = DECREASE, OTHER_DECREASE
READING = {PER_ACK: "per ACK", PER_RTT: "once per RTT"}
READING_ADJ = {PER_ACK: "per-ACK", PER_RTT: "once-per-RTT"}
#: (ζ, initial window, decrease): the paper's run first; too small ζ's (L296) and the paper's ζ
#: with Linux's IW, in the main reading; the other reading at the paper's ζ and at the larger
#: ζ's from which its queue flushes.
SMALL_ZETAS, FLUSH_ZETAS = [0.1, 0.01, 0.001], [7.0, 10.0]
POINTS = ([{"zeta": PAPER_ZETA, "initial_window": PAPER_IW, "decrease": MAIN}]
          + [{"zeta": z, "initial_window": PAPER_IW, "decrease": MAIN} for z in SMALL_ZETAS]
          + [{"zeta": PAPER_ZETA, "initial_window": LINUX_IW, "decrease": MAIN}]
          + [{"zeta": z, "initial_window": PAPER_IW, "decrease": CONTRAST} for z in [PAPER_ZETA] + FLUSH_ZETAS])
FLOWS = 2
LATE_START_S = 10.0
#: Run lengths (full, quick); the measurement window, ``warmup`` on, is the last half.
DURATION_S, QUICK_DURATION_S = 300.0, 120.0
#: The window over which the latecomer's first queue flush is looked for.
JOIN_S = 10.0
#: Notes' pass rows for ζ = 5.
JAIN_MIN, P_EMPTY_MIN, ETA_RANGE = 0.9, 0.05, (0.8, 1.0)
SAMPLE_BIN_S = 0.001
#: η at or above this is reported as "within the bound only just" (the link idles < 0.5 %).
BARELY_IDLE = 0.995


def _apply(point: dict) -> dict:
    return {"flows.cc.zeta": point["zeta"], "flows.initial_window": point.get("initial_window", PAPER_IW),
            "flows.cc.decrease": point.get("decrease", MAIN)}


def _metric(result, point: dict) -> dict:
    half = measured_window(result)
    end = half[1]
    first, late = core_rates_mbps(result, ("first", "late"))
    link = result.link("bottleneck")
    links = bottleneck(result, *half)
    return {
        "jain_last_half": link["jain_long"],
        # 1 when this seed is fair: the mean over seeds is the share of fair seeds.
        "fair_last_half": float(link["jain_long"] >= JAIN_MIN),
        "late_share_last_half": late / (first + late),
        "eta_last_half": link["efficiency"],
        "mean_queue_packets": float(links["queue_packets"].mean()),
        "p_empty_shared": empty_share(result, LATE_START_S, end),
        "p_empty_join": empty_share(result, LATE_START_S, LATE_START_S + JOIN_S),
        "p_empty_last_half": empty_share(result, *half),
        "drops": int(bottleneck(result, LATE_START_S, end)["drops"].sum()),
    }


def _compare(summary):
    summary = summary.copy()
    summary["q_star_packets"] = [queue_equilibrium_packets(z) for z in summary["zeta"]]
    return summary


FIG = "Fig. 3(b), Sec. 7.2"


def _is_paper(row) -> bool:
    return row["zeta"] == PAPER_ZETA and int(row["initial_window"]) == PAPER_IW and _main(row)


def _main(row) -> bool:
    return row.get("decrease", MAIN) == MAIN


def _contrast_rows(summary):
    return summary[summary["decrease"] == CONTRAST] if "decrease" in summary else summary.iloc[0:0]


def _traits(row) -> bool:
    """All four of Fig. 3(b)'s traits (L296–L300): P(Q = 0) ≥ 5 %, F ≥ 0.9, η < 1, mean queue ≤ Q*."""
    return (row["p_empty_shared"] >= P_EMPTY_MIN and row["jain_last_half"] >= JAIN_MIN
            and row["eta_last_half"] < 1.0 and row["mean_queue_packets"] <= row["q_star_packets"])


def _arm_numbers(row) -> str:
    return (f"P(Q = 0) {row['p_empty_shared']:.1%}, F {row['jain_last_half']:.3f}, η {row['eta_last_half']:.3f}, "
            f"mean queue {row['mean_queue_packets']:.1f} packets (Q* {row['q_star_packets']:.1f})")


def _contrast_text(summary) -> str:
    """What the other reading shows at ζ = 5 and above, for the paper rows' reasons."""
    arms = _contrast_rows(summary)
    arms = arms[arms["initial_window"] == PAPER_IW].sort_values("zeta")
    if not len(arms):
        return ""
    parts = [f"ζ = {r['zeta']:g}: {_arm_numbers(r)}, "
             + ("all four of Fig. 3(b)'s traits hold" if _traits(r) else "not all of Fig. 3(b)'s traits hold")
             for _, r in arms.iterrows()]
    return f"; the other reading of eq. (5), the decrease {READING[CONTRAST]} (contrast arms): " + "; ".join(parts)


def _paper_rows(row, summary) -> list:
    q_star = row["q_star_packets"]
    late_holds = row["late_share_last_half"] > 0.5 and row["jain_last_half"] < JAIN_MIN
    no_flush = (f"at ζ = 5 the decrease ({READING[MAIN]}) does not bring the queue to empty often enough"
                + (f"; here, in the {_unfair_seeds(row)} seeds that stay unfair, the latecomer, its base wrong, holds "
                   "the queue alone at τ plus its error, with the first-comer at its floor (mean queue over all "
                   f"seeds {row['mean_queue_packets']:.1f} packets)" if late_holds else "")
                + _contrast_text(summary))
    fair = Check("ζ = 5: Jain's index over the last half (mean over the seeds; bound: the notes' ≥ 0.9)",
                 "fair: a large ζ flushes the queue", f"{FIG}, L296–L298", row["jain_last_half"],
                 Claim("≥", JAIN_MIN),
                 shown=(mean_spread(row, "jain_last_half") + f"; {_seeds_text(row, 'fair_last_half')} "
                        f"≥ 0.9, lowest {row['jain_last_half_min']:.3f}; latecomer's share "
                        f"{row['late_share_last_half']:.1%}"),
                 reason=_unfair_seeds_reason(row, summary))
    # P(Q = 0) ≥ 5 % judged as P(Q > 0) ≤ 95 %, and mean queue ≤ Q* as the buffer it leaves free,
    # B − mean ≥ B − Q*: the same bounds, on numbers a halved or doubled reading moves across
    # them (a P(Q = 0) above 10 %, or a mean queue below Q*/2, passes either perturbation).
    busy = 1.0 - row["p_empty_shared"]
    empty = Check("ζ = 5: P(Q > 0) over [10 s, end], 1 ms samples, ≤ 95 % (P(Q = 0) ≥ 5 %; bound: the notes')",
                  "more mass at Q = 0 in the PDF", f"{FIG}, L298", busy, Claim("≤", 1.0 - P_EMPTY_MIN),
                  shown=(f"P(Q > 0) {busy:.2%}; P(Q = 0) " + mean_spread(row, "p_empty_shared", ".2%")
                         + f"; in [10, 20] s {row['p_empty_join']:.1%}"))
    empty.reason = "" if empty.verdict == "agrees" else no_flush
    free = BUFFER_PACKETS - row["mean_queue_packets"]
    below = Check(f"ζ = 5: buffer the mean queue leaves free over the last half, B − mean ≥ B − Q* "
                  f"(mean ≤ Q* = Cτ + Nατ/(ζR); B = {BUFFER_PACKETS} packets)",
                  f"the model somewhat overestimates the queue; Q* = {q_star:.2f} packets", f"{FIG}, L298, eq. (10)",
                  free, Claim("≥", BUFFER_PACKETS - q_star),
                  shown=(f"{free:.2f} packets free; mean queue "
                         + mean_spread(row, "mean_queue_packets", ".2f", "packets")))
    below.reason = "" if below.verdict == "agrees" else (
        "the queue sits above the model's: the latecomer holds it at τ plus its base-delay error"
        if late_holds else "the queue sits above the model's")
    # 0.8 ≤ η < 1.0: the upper end is open (a link that never idles is not "less efficient").
    efficient = Check("ζ = 5: 0.8 ≤ η < 1.0 over the last half (bound: the notes')",
                      "less efficient: the link sometimes idles", f"{FIG}, L298–L300", row["eta_last_half"],
                      Claim("in", (ETA_RANGE[0], math.nextafter(ETA_RANGE[1], 0.0))),
                      shown=mean_spread(row, "eta_last_half", ".4f", note=f"idle {1 - row['eta_last_half']:.2%}"))
    efficient.reason = _efficiency_reason(row, efficient.verdict == "agrees", no_flush)
    return [c.row() for c in (fair, empty, below, efficient)]


def _unfair_seeds(row) -> str:
    seeds = int(row.get("seeds", 1))
    return f"{seeds - round(row['fair_last_half'] * seeds)} of {seeds}"


def _seeds_text(row, share_metric: str) -> str:
    seeds = int(row.get("seeds", 1))
    return f"{round(row[share_metric] * seeds)} of {seeds} seeds"


def _unfair_seeds_reason(row, summary) -> str:
    """A seed stays unfair when the queue did not empty as the latecomer joined: its base delay
    then holds part of the first-comer's queue, the first-comer falls to its floor, and the
    latecomer alone holds the queue at τ plus its base error, which a decrease that never empties
    the queue keeps, so the error is never corrected."""
    if row["fair_last_half"] >= 1:
        return ""
    return (f"in the unfair seeds the queue did not empty while the latecomer joined (P(Q = 0) in [10, 20] s "
            f"{row['p_empty_join']:.1%}, see results.csv): its base delay holds part of the first-comer's queue, "
            "the first-comer falls to its floor, and the latecomer alone holds the queue at τ plus its base "
            "error without emptying it" + _contrast_text(summary))


def _efficiency_reason(row, efficient: bool, no_flush: str) -> str:
    if row["eta_last_half"] < ETA_RANGE[0]:
        return "the link idles too much"
    if not efficient or row["eta_last_half"] >= BARELY_IDLE:
        # Inside the bound only by a hair: the paper's loss of efficiency is visible, ours is not.
        return ("within the bound only just" if efficient else "the link never idles") + "; " + no_flush
    return ""


def _small_zeta_row(row) -> dict:
    """L296 only warns that a too small ζ *may* leave the latecomer ahead: no ζ, no number."""
    zeta, q_star = row["zeta"], row["q_star_packets"]
    dominates = row["jain_last_half"] < JAIN_MIN and row["late_share_last_half"] > 0.5
    # Seeds differ where losses, not the delay signal, set the shares: say when some seeds do.
    some = not dominates and row.get("jain_last_half_min", 1.0) < JAIN_MIN
    if dominates:
        why = (f"the first-comer's decrease (ζ = {zeta:g}) is too weak to drain the queue "
               "below the latecomer's base error, as L296 explains")
    elif q_star > BUFFER_PACKETS:
        why = (f"Q* = {q_star:.0f} packets exceeds the {BUFFER_PACKETS}-packet buffer: the queue "
               f"overflows ({row['drops']:.0f} drops after 10 s) and the loss halving, "
               "multiplicative for both flows, equalises them")
    else:
        why = "the first-comer's decrease still flushes the queue"
    answer = "the latecomer dominates" if dominates else "in some seeds" if some else "no latecomer advantage"
    return Check(f"contrast ζ = {zeta:g}: Jain's index over the last half (does the latecomer dominate?)",
                 "yes when ζ is too small (a warning: the paper names no ζ)", f"{FIG}, L296",
                 row["jain_last_half"], None, contrast=True,
                 shown=(f"F {mean_spread(row, 'jain_last_half')} (min {row.get('jain_last_half_min', float('nan')):.3f}), "
                        f"latecomer's share {row['late_share_last_half']:.1%}, "
                        f"mean queue {row['mean_queue_packets']:.1f} packets (Q* {q_star:.1f})"),
                 reason=f"contrast: our arm at a ζ the paper does not run; {answer}; {why}").row()


def _contrast_row(row, summary) -> dict:
    """The other reading of eq. (5) at ζ = 5 and at the larger ζ's: where does its queue flush?"""
    zeta, q_star = row["zeta"], row["q_star_packets"]
    paper = summary[summary.apply(_is_paper, axis=1)]
    main = (f"the main reading, {READING[MAIN]} (the paper rows): {_arm_numbers(paper.iloc[0])}" if len(paper)
            else f"the main reading, {READING[MAIN]}, not run")
    like = _traits(row)
    if zeta == PAPER_ZETA:
        why = ("all four of Fig. 3(b)'s traits hold at the paper's ζ" if like else
               "not all of Fig. 3(b)'s traits (P(Q = 0) ≥ 5 %, F ≥ 0.9, η < 1, mean queue ≤ Q*) hold at the "
               "paper's ζ" + (": the per-ACK decrease starts as q̂ passes τ and stops as it falls back, so each "
                              "downswing removes only about the excess, where once per RTT the round's whole cut, "
                              "decided near the queue's peak, empties it (module docstring)"
                              if CONTRAST == PER_ACK else ""))
    else:
        why = ("not the paper's ζ; " + ("all four of Fig. 3(b)'s traits hold: in this reading the flush the "
                                        "paper shows at ζ = 5 starts at a larger ζ" if like else
                                        "not yet all of Fig. 3(b)'s traits (P(Q = 0) ≥ 5 %, F ≥ 0.9, η < 1, "
                                        "mean queue ≤ Q*)"))
    return Check(f"contrast ζ = {zeta:g}, decrease {READING[CONTRAST]}: P(Q = 0) over [10 s, end] (does the "
                 f"{READING_ADJ[CONTRAST]} reading of eq. (5) flush the queue?)",
                 "a ζ large enough to flush the queue makes the shares fair, the PDF has more mass at 0, "
                 "η < 1, the model overestimates the queue (ζ = 5)", f"{FIG}, L296–L300; notes §3.2",
                 row["p_empty_shared"], None, contrast=True,
                 shown=(f"{mean_spread(row, 'p_empty_shared', '.2%')}, {row['p_empty_join']:.1%} in [10, 20] s; "
                        f"F {mean_spread(row, 'jain_last_half')} (min "
                        f"{row.get('jain_last_half_min', float('nan')):.3f}; "
                        f"{_seeds_text(row, 'fair_last_half')} ≥ 0.9), latecomer's share "
                        f"{row['late_share_last_half']:.1%}, η {row['eta_last_half']:.4f}, mean queue "
                        f"{row['mean_queue_packets']:.1f} packets (Q* {q_star:.1f}), {row['drops']:.0f} drops"),
                 reason=(f"contrast: the other reading of the missing eq. (5), the decrease {READING[CONTRAST]}, "
                         f"not our main one; {why}; {main}")).row()


def _linux_iw_row(row, summary) -> dict:
    """ζ = 5 with Linux's 10-segment initial window (the set-up's until issue 25)."""
    paper = summary[summary.apply(_is_paper, axis=1)]
    join_iw2 = f"{paper['p_empty_join'].iloc[0]:.1%} with IW 2" if len(paper) else "IW 2 not run"
    fair = row["jain_last_half"] >= JAIN_MIN
    return Check(f"contrast ζ = 5 with Linux's IW {LINUX_IW}: Jain's index over the last half",
                 "fair at ζ = 5 (with ns-2's initial window)", f"{FIG}, L296–L298", row["jain_last_half"], None, contrast=True,
                 shown=(f"F {mean_spread(row, 'jain_last_half')}; P(Q = 0) {row['p_empty_shared']:.2%} over "
                        f"[10 s, end], {row['p_empty_join']:.1%} in [10, 20] s; η {row['eta_last_half']:.4f}; mean "
                        f"queue {row['mean_queue_packets']:.1f} packets"),
                 reason=("contrast: not ns-2's initial window (the set-up's until issue 25). " + (
                     f"Fair as with IW 2: the queue empties as the latecomer joins ({row['p_empty_join']:.1%} of "
                     f"[10, 20] s, {join_iw2}), so it learns its true base" if fair else
                     "The latecomer's larger first window did not flush the queue either"))).row()


def _comparison(summary) -> list:
    summary = _compare(summary) if "q_star_packets" not in summary else summary
    rows = []
    for _, row in summary.iterrows():
        if _is_paper(row):
            rows += _paper_rows(row, summary)
        elif not _main(row):
            rows.append(_contrast_row(row, summary))
        elif int(row["initial_window"]) != PAPER_IW:
            rows.append(_linux_iw_row(row, summary))
        else:
            rows.append(_small_zeta_row(row))
    return rows


def trace(zeta: float, seed: int = 1, initial_window: int = PAPER_IW, decrease: str = MAIN):
    """One run with its time series (for the figure)."""
    return EXPERIMENT.rerun({"zeta": zeta, "initial_window": initial_window, "decrease": decrease}, seed)


def _figure(summary, out_dir: Path) -> Path:
    import numpy as np

    from ccbench.plot import pyplot, save

    plt = pyplot()
    decreases = summary["decrease"] if "decrease" in summary else [MAIN] * len(summary)
    arms = [(float(z), int(iw), str(d)) for z, iw, d in zip(summary["zeta"], summary["initial_window"], decreases)]
    fig, axes = plt.subplots(len(arms), 2, figsize=(12, 2.8 * len(arms)), squeeze=False,
                             gridspec_kw={"width_ratios": [2.2, 1]})
    for row, (zeta, iw, decrease) in enumerate(arms):
        result = trace(zeta, initial_window=iw, decrease=decrease)
        end = measured_window(result)[1]
        flows = result.flows
        for i, (name, start) in enumerate((("first", 0.0), ("late", LATE_START_S))):
            df = flows[(flows["flow"] == name) & (flows["t_s"] > start)]
            axes[row][0].plot(df["t_s"], df["cwnd_bytes"] / PAPER_FLOW["mss"], color=f"C{i}", lw=0.6,
                              label=f"{'first-comer' if i == 0 else 'latecomer'}")
        other = f", decrease {READING[decrease]}" if decrease != MAIN else ""
        axes[row][0].set_ylabel(f"ζ = {zeta:g}, IW {iw}{other}: cwnd (packets)")
        queue = bottleneck(result, LATE_START_S, end)["queue_packets"].round()
        bins = np.arange(-0.5, BUFFER_PACKETS + 1.5)
        axes[row][1].hist(queue, bins=bins, density=True, color="C2")
        q_star = queue_equilibrium_packets(zeta)
        if q_star <= BUFFER_PACKETS:
            axes[row][1].axvline(q_star, color="k", lw=1.5, label=f"model Q* = {q_star:.1f}")
        else:
            axes[row][1].axvline(BUFFER_PACKETS, color="k", ls="--", lw=1.5,
                                 label=f"buffer (model Q* = {q_star:.0f} beyond it)")
        axes[row][1].set_yscale("log")
        axes[row][1].set_ylabel("PDF")
        axes[row][1].legend(fontsize="x-small")
        for ax in axes[row]:
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize="x-small")
    axes[-1][0].set_xlabel("time (s)")
    axes[-1][1].set_xlabel("queue (packets), 1 ms samples from 10 s on")
    fig.suptitle("fLEDBAT Fig. 3(b): two backlogged fLEDBAT flows, 10 s apart\n(10 Mbps, 100 p, "
                 f"RTT 50 ms, τ 25 ms, α 1, IW 2 unless stated, decrease {READING[MAIN]} unless stated); seed 1")
    return save(fig, out_dir / "fledbat-fig3b.png")


EXPERIMENT = Experiment(
    name="fledbat-fig3b",
    description=f"fLEDBAT Fig. 3(b): two backlogged fLEDBAT flows 10 s apart, ζ = 5, decrease {READING[MAIN]} "
                f"(and the contrast ζ = 0.1, 0.01, 0.001, ζ = 5 with Linux's IW 10, and the decrease "
                f"{READING[CONTRAST]} at ζ = 5, 7, 10), reference setup (10 Mbps, 100 p, RTT 50 ms, τ 25 ms, IW 2)",
    base={
        **last_half(DURATION_S),
        "seed": 1,
        # L271: RTT 50 ms with the transmission delays; the core's rtt is propagation only.
        "bottleneck": {"rate": f"{CAPACITY_MBPS:g}Mbps", "rtt": PROPAGATION_RTT, "buffer": f"{BUFFER_PACKETS}p"},
        # L261: ns-2's TCP agents start at windowInit_ 2 (PAPER_IW), as in fig2 and fig3a.
        "flows": [
            {"name": "first", "cca": "fledbat", **PAPER_FLOW, **JITTERED, "initial_window": PAPER_IW,
             "cc": fledbat_cc(PAPER_ZETA)},
            {"name": "late", "cca": "fledbat", "start": f"{LATE_START_S:g}s", **PAPER_FLOW, **JITTERED,
             "initial_window": PAPER_IW, "cc": fledbat_cc(PAPER_ZETA)},
        ],
        "output": {"bin": f"{SAMPLE_BIN_S * 1e3:g}ms", "sojourn_samples": False},
    },
    grid={},
    points=POINTS,
    seeds=tuple(range(1, 11)),  # L271: 10 runs per point
    quick_seeds=(1, 2),
    quick_overrides=last_half(QUICK_DURATION_S),
    apply=_apply,
    metric=_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
