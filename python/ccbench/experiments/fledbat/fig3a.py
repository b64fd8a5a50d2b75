"""fLEDBAT paper, Fig. 3(a) (L278, L288–L292): two fLEDBAT flows, chunk by chunk, ζ = 0.01, the
second 10 s after the first; and the chunked set-up shared by Figs. 4(a)–5(b) (``CHUNKED``,
:func:`chunked_flow`, :func:`reference_base`).

Claims (L292): the latecomer's base-delay estimate starts out wrong, the first-comer's decrease
lets it correct it, and the shares become equitable; the queue is not steady but fluctuates
around the model's occupancy Q* = Cτ + Nατ/(ζR) (eq. 10). With the reference values Q* = 120.8
packets > B = 100 (notes §5 item 9): the model's occupancy overflows the buffer. The paper states
it all the same, so the mean queue is judged against Q* (±25 %, the issue's band for the queue
against Q*, as in fledbat-fig2), with min(Q*, B) shown beside it.

Chunk-by-chunk traffic (Section 7.1, L290; all Section 8 flows, TCP included, L304): 250 kB
chunks (``chunk_size = "250KB"``: 250 000 B, "nearly 170 full payload packets" — 171 of 1460 B);
the next chunk is written only when the last ACK of the previous one is back (the sender idles
about an RTT); P_P = 1, so one connection whose window is kept across chunks.

Setting (L261–L271; notes ``experiments-fledbat.md`` §1.1, §4): 10 Mbps, 100-packet buffer, P =
1500 B (1460 B payload + 40 B headers), ACKs not delayed, base RTT 50 ms plus a per-flow constant
jitter U[0, 1] ms (the core's ``rtt_jitter``, drawn from the run's seed: the jitter model is
unstated, notes §4 item 8), τ = 25 ms, α = 1 (notes §4 items 2–3), initial window 2 segments
(ns-2's ``windowInit_``, as ``fig2``), latecomer at 10 s (notes' suggestion for the unstated gap),
300 s (notes §4 item 5), 10 runs (L271).

Observables. The controller's base-delay estimate is not exposed; its error is bounded by the
least queueing delay the latecomer's packets met (its base is the least delay it measured, and
the history outlasts the run), so "within 2 ms of the true base" is read as "a latecomer packet
met a queue of at most 2 ms" and we report the first time that happens after its start (from the
per-packet sojourn series). F and η over the last 50 % of the run are the core's (``warmup`` at
half the duration): the bottleneck's ``jain_long`` over the flows' wire rates and its
``efficiency`` (headers included, L306). The queue from 10 ms samples of the bottleneck's backlog
over [10 s, end] (its PDF in the figure; a window the core's summary does not cover).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.fledbat.common import (
    BUFFER_PACKETS,
    PAPER_FLOW,
    bottleneck,
    chunked_flow,
    core_rates_mbps,
    empty_share,
    last_half,
    least_sojourn_ms,
    measured_window,
    queue_at_loop_rtt_packets,
    queue_equilibrium_packets,
    reference_base,
)

ZETA = 0.01
#: "Fluctuates around" Q* (L292), read with the issue's done-means band for a queue against Q*.
Q_STAR_TOL = 0.25
LATE_START_S = 10.0
#: 300 s (notes §4 item 5), quick 100 s; the core measures F and η over the last half.
DURATION_S, QUICK_DURATION_S = 300.0, 100.0
NAMES = ("first", "late")
#: Notes' pass rows: the base error within 2 ms within 30 s of the start; F ≥ 0.9 (last 50 %).
BASE_ERROR_MS, BASE_WITHIN_S, JAIN_MIN = 2.0, 30.0, 0.9


# ------------------------------------------------------------------ Fig. 3(a)

def first_small_sojourn_s(result, flow: str, after_s: float, bound_ms: float = BASE_ERROR_MS) -> float:
    """When ``flow``'s first packet after ``after_s`` met a queue of at most ``bound_ms``
    (seconds after ``after_s``); NaN if none did."""
    sojourn = result.sojourn
    mine = sojourn[(sojourn["flow"] == flow) & (sojourn["t_s"] > after_s) & (sojourn["sojourn_ms"] <= bound_ms)]
    return float(mine["t_s"].min()) - after_s if len(mine) else float("nan")


def _metric(result, point: dict) -> dict:
    half = measured_window(result)
    end = half[1]
    first, late = core_rates_mbps(result, NAMES)
    link = result.link("bottleneck")
    shared = bottleneck(result, LATE_START_S, end)
    return {
        "jain_last_half": link["jain_long"],
        "late_share_last_half": late / (first + late),
        "eta_last_half": link["efficiency"],
        "late_base_fixed_s": first_small_sojourn_s(result, "late", LATE_START_S),
        "late_least_sojourn_30s_ms": least_sojourn_ms(result, "late", LATE_START_S, LATE_START_S + BASE_WITHIN_S),
        "queue_at_arrival_packets": float(bottleneck(result, LATE_START_S - 1.0, LATE_START_S)["queue_packets"].mean()),
        "mean_queue_packets": float(shared["queue_packets"].mean()),
        "mean_queue_last_half_packets": float(bottleneck(result, *half)["queue_packets"].mean()),
        "p_empty_join": empty_share(result, LATE_START_S, LATE_START_S + BASE_WITHIN_S),
        "drops": int(shared["drops"].sum()),
    }


def _compare(summary):
    summary = summary.copy()
    summary["q_star_packets"] = [queue_equilibrium_packets(z) for z in summary["zeta"]]
    summary["q_reference_packets"] = summary["q_star_packets"].clip(upper=BUFFER_PACKETS)
    summary["q_loop_rtt_packets"] = [queue_at_loop_rtt_packets(z) for z in summary["zeta"]]
    return summary


FIG = "Fig. 3(a), Sec. 7.1"


def _comparison(summary) -> list:
    summary = _compare(summary) if "q_star_packets" not in summary else summary
    row = summary.iloc[0]
    q_star, ref = row["q_star_packets"], row["q_reference_packets"]
    # The paper gives no time for the correction: the notes' 30 s bound would pass any quick
    # correction whatever its speed, so the time is reported, with what made it possible.
    corrected = Check(
        "latecomer's base-delay correction: first packet that met a queue ≤ 2 ms after its start (worst seed)",
        "the latecomer starts with a wrong base and corrects it (no time given)", f"{FIG}, L292",
        row["late_base_fixed_s_max"], None,
        shown=(mean_spread(row, "late_base_fixed_s", ".2f", "s after its start",
                           f"worst {row['late_base_fixed_s_max']:.2f} s") +
               f"; least queue met in its first 30 s {row['late_least_sojourn_30s_ms']:.2f} ms; queue "
               f"when it arrives {row['queue_at_arrival_packets']:.1f} packets"),
        reason=(f"reported: the paper gives no time. The queue empties often ({row['p_empty_join']:.1%} of the "
                "10 ms samples in the latecomer's first 30 s): a chunked sender idles about an RTT after each chunk "
                "until its last ACK, and its queue drains meanwhile, which shows the latecomer the true base"
                if row["late_base_fixed_s_max"] <= BASE_WITHIN_S else
                f"reported: the paper gives no time; in the worst seed no latecomer packet met a near-empty queue "
                f"within {BASE_WITHIN_S:g} s"))
    fair = Check("Jain's F over the last 50 % (bound: the notes' ≥ 0.9)", "the shares become equitable",
                 f"{FIG}, L292", row["jain_last_half"], Claim("≥", JAIN_MIN),
                 shown=mean_spread(row, "jain_last_half", ".3f", note=f"min {row['jain_last_half_min']:.3f}; "
                                   f"latecomer's share {row['late_share_last_half']:.1%}"))
    fair.reason = "" if fair.verdict == "agrees" else (
        f"the first-comer keeps a lead: the latecomer holds {row['late_share_last_half']:.1%}")
    # L292: the queue "fluctuates around the occupancy value predicted by the model", eq. (10)'s
    # Q*; "around" read with the 25 % for the queue against Q* (as in fledbat-fig2).
    queue = Check(
        "mean queue over [10 s, end] ≈ the model's Q* (eq. 10; ±25 %, the done-means' band for Q*)",
        f"fluctuates around the model's occupancy, Q* = {q_star:.1f} packets", f"{FIG}, L292, eq. (10)",
        row["mean_queue_packets"], Claim("≈", q_star, agree=Q_STAR_TOL),
        shown=mean_spread(row, "mean_queue_packets", ".1f", "packets",
                          f"{row['mean_queue_packets'] / ref:.0%} of min(Q*, B) = {ref:.0f}; last half "
                          f"{row['mean_queue_last_half_packets']:.1f}; {row['drops']:.0f} drops"),
        of=("mean_queue_packets",))
    if queue.verdict != "agrees":
        queue.reason = (
            f"Q* = {q_star:.1f} packets exceeds the {BUFFER_PACKETS}-packet buffer, so the queue cannot sit "
            "around it; and eq. (10) takes R_t ≈ R (L137): in a packet loop the RTT holds the queue, which "
            f"shrinks the offset Nατ/(ζR_t) (with R_t = R + Q/C eq. (10) gives {row['q_loop_rtt_packets']:.1f} "
            "packets), and every chunk end idles its sender for about an RTT, which drains part of the queue, "
            f"so the mean, {row['mean_queue_packets']:.1f}, lies " + ("below" if row["mean_queue_packets"] <
                                                                       row["q_loop_rtt_packets"] else "above")
            + " even that reading")
    return [corrected.row(), fair.row(), queue.row()]


def trace(seed: int = 1):
    """One run with its time series (for the figure)."""
    return EXPERIMENT.rerun({"zeta": ZETA}, seed)


def _running_min(values):
    import numpy as np

    return np.minimum.accumulate(np.asarray(values, dtype=float))


def _figure(summary, out_dir: Path) -> Path:
    import numpy as np

    from ccbench.plot import pyplot, save

    result = trace()
    end = measured_window(result)[1]
    fig, axes = pyplot().subplots(2, 2, figsize=(12, 6), gridspec_kw={"width_ratios": [2.2, 1]})
    flows, sojourn = result.flows, result.sojourn
    for i, (name, start) in enumerate(zip(NAMES, (0.0, LATE_START_S))):
        ax = axes[i][0]
        df = flows[(flows["flow"] == name) & (flows["t_s"] > start)]
        ax.plot(df["t_s"], df["cwnd_bytes"] / PAPER_FLOW["mss"], color=f"C{i}", lw=0.6)
        ax.set_ylabel(f"{name}: cwnd (packets)")
        mine = sojourn[(sojourn["flow"] == name) & (sojourn["t_s"] > start)]
        twin = ax.twinx()
        twin.plot(mine["t_s"], _running_min(mine["sojourn_ms"]), color="k", lw=1.2)
        twin.set_ylabel("least queue met (ms) = base error bound")
        ax.grid(alpha=0.3)
    axes[1][0].set_xlabel("time (s)")
    queue = bottleneck(result, LATE_START_S, end)["queue_packets"].round()
    axes[0][1].hist(queue, bins=np.arange(-0.5, BUFFER_PACKETS + 1.5), density=True, color="C2")
    q_star = queue_equilibrium_packets(ZETA)
    axes[0][1].axvline(min(q_star, BUFFER_PACKETS), color="k", lw=1.5,
                       label=f"model Q* = {q_star:.0f}" + (" (beyond B: drawn at B)" if q_star > BUFFER_PACKETS else ""))
    axes[0][1].set_xlabel("queue (packets), 10 ms samples from 10 s on")
    axes[0][1].set_ylabel("PDF")
    axes[0][1].legend(fontsize="x-small")
    axes[1][1].axis("off")
    fig.suptitle("fLEDBAT Fig. 3(a): two chunked (250 kB) fLEDBAT flows 10 s apart, ζ = 0.01 "
                 "(10 Mbps, 100 p, RTT 50 ms, τ 25 ms, α 1); seed 1")
    return save(fig, out_dir / "fledbat-fig3a.png")


EXPERIMENT = Experiment(
    name="fledbat-fig3a",
    description="fLEDBAT Fig. 3(a): two chunk-by-chunk (250 kB) fLEDBAT flows 10 s apart, ζ = 0.01, "
                "reference setup (10 Mbps, 100 p, RTT 50 ms + U[0, 1] ms, τ 25 ms, α 1)",
    base=reference_base([chunked_flow("first", "fledbat", 0.0, ZETA),
                         chunked_flow("late", "fledbat", LATE_START_S, ZETA)],
                        DURATION_S, bin_ms=10.0, sojourn=True, warmup_s=DURATION_S / 2),
    grid={"zeta": [ZETA]},
    seeds=tuple(range(1, 11)),  # L271: 10 runs per point
    quick_seeds=(1, 2),
    quick_overrides=last_half(QUICK_DURATION_S),
    apply=lambda point: {"flows.cc.zeta": point["zeta"]},
    metric=_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
