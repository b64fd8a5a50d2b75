"""rLEDBAT paper, Fig. 5 (L321–L338, caption L332): the delay an rLEDBAT download adds to a VoIP flow.

Scenario (L323–L325): a VoIP-like CBR flow, 160 B every 20 ms (64 kbps), from t = 0; a greedy
download from a CUBIC sender to an rLEDBAT receiver from t = 10 s; both until 50 s ("they both
stay for 40 s", L325; the notes' §5 item 3 reading). Bottleneck 1 Mbps, drop-tail buffer 150 ms
(bytes, L323), base RTT 20 ms, MSS 1390 B in 1456 B frames (L313). Each flow starts U[0, 100 ms)
after its nominal time (notes §1.5). 8 runs; the paper shows one trace.

Claims: for the first 10 s the VoIP RTT is the propagation delay (L327); once rLEDBAT runs, the
extra delay it adds stays below the 60 ms target for most packets, 91.7 % (L327, L334); the packets
above it are those sent just before a multiplicative decrease, and the periodic slowdowns are
visible (L334); rLEDBAT gets 890 kbps, all of the 954 − 64 kbps left (L336); similar results hold
for 1–40 Mbps and RTTs 10–300 ms (L338; checked at a few spot points with the same buffer).

What we measure: the core records each VoIP packet's one-way delay (``result.owd``). The reverse
path is empty, so the VoIP RTT is that delay plus the base one-way delay RTT/2, and the extra delay
is the one-way delay minus its minimum over the first 10 s (the base path plus the packet's own
160 B transmission, 1.5 ms at 1 Mbps; the paper calls that negligible, L327). Packets count from
the download's start (``warmup`` is set there, so the core's OWD percentiles and the download's
goodput cover the same window). A slowdown shows as a dip: a run of VoIP packets less than T/4
above the base, dips closer than 1 s merged. Pass (notes §3, Fig. 5): ≥ 85 % of VoIP packets below
60 ms extra (paper 91.7 %); rLEDBAT ≥ 800 kbps (paper 890); VoIP RTT in the first 10 s within
20 + 5 ms; dips visible (at least three in the 40 s). Spot points (L338): the same delay
criterion, the download's share of what VoIP leaves of the best goodput reported. At the main
point we also vary what the paper leaves open (host timing noise, delayed ACKs, a 4 ms timestamp
tick; notes §1.4 and §5 item 6) and report the share under T for each. The spikes and the dips
are reported (the paper gives no share or period); every reason is computed from the run.

Environment (issue 25 item 6): every run is in the testbed's (``common.testbed_experiment``: a
tbf burst by tc-tbf(8)'s rule at the point's rate, 32 KiB at 20 Mbps, and GRO at the receivers).
At 1 Mbps the bucket is 2 KiB: a frame that finds tokens leaves at line rate, not in 11.6 ms, so
the base RTT the rLEDBAT receiver learns lacks a frame's serialisation and its target T holds about
a frame less of real queue. Full run: 77 % of VoIP packets under 60 ms (extra p50 53 ms, p90
66 ms) against 57 % (58/84 ms) with the ideal shaper; the idle VoIP RTT is 20.0 ms, not 21.5 ms.
In a 4-seed probe the burst alone gives the same (78 %) and GRO alone nothing (55 %).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import common, voip
from ccbench.experiments.rledbat.voip import (
    BELOW_MIN,
    BEST_KBPS,
    DOWNLOAD_START_S,
    DURATION_S,
    KBPS_MIN,
    PAPER,
    PAPER_BELOW,
    PAPER_KBPS,
    VARIANTS,
    VOIP_KBPS,
    apply,
    base,
    frame_ms,
    metric,
    settles_at_target,
    voip_delays,
)

MAIN = {"capacity_mbps": 1, "rtt_ms": 20, "variant": PAPER}
#: L338: "capacities ranging between 1 Mbps and 40 Mbps, RTTs between 10 ms and 300 ms".
SPOTS = [{"capacity_mbps": c, "rtt_ms": r, "variant": PAPER} for c, r in ((1, 10), (1, 300), (10, 100), (40, 20),
                                                                          (40, 300))]
QUICK_SPOTS = [{"capacity_mbps": 40, "rtt_ms": 20, "variant": PAPER}]
SENSITIVITY = [{**MAIN, "variant": v} for v in VARIANTS if v != PAPER]
IDLE_SLACK_MS, DIPS_MIN = 5.0, 3


def _main_rows(r, summary) -> list:
    below = Check("VoIP packets < 60 ms above the base, download active", f"{PAPER_BELOW:.1%}", "Fig. 5, L327, L334",
                  float(r["below_target"]), voip.below_claim(), of=("below_target",),
                  shown=mean_spread(r, "below_target", ".1%", note=f"extra delay p50 {r['extra_p50_ms']:.0f} ms, "
                                                                   f"p90 {r['extra_p90_ms']:.0f} ms"))
    if below.verdict != "agrees":
        below.reason = below_reason(r, summary)
    spikes = Check("packets over the target are spikes before a decrease",
                   "the few packets over the target precede the multiplicative decrease", "L334", None,
                   shown=(f"extra delay p99 {r['extra_p99_ms']:.0f} ms; median run of consecutive over-target "
                          f"packets {r['over_run_ms']:.0f} ms"), reason=spike_reason(r))
    rate = Check("rLEDBAT rate", f"{PAPER_KBPS} kbps = {BEST_KBPS} − {VOIP_KBPS}", "L336", float(r["rledbat_kbps"]),
                 voip.kbps_claim(), of=("rledbat_kbps",),
                 shown=mean_spread(r, "rledbat_kbps", ".0f", "kbps", note=f"{r['of_left']:.1%} of what VoIP leaves"))
    if rate.verdict != "agrees":
        rate.reason = (f"the download's flight averages {r['flight_over_bdp']:.0%} of the BDP and it retransmits "
                       f"{r['rledbat_retransmits']:.0f} segments: the slowdowns and decreases idle the link")
    idle = Check("VoIP RTT before the download", f"the propagation delay, {r['rtt_ms']:g} ms", "L327",
                 float(r["idle_rtt_ms"]), Claim("≈", float(r["rtt_ms"]), agree=IDLE_SLACK_MS, relative=False),
                 of=("idle_rtt_ms",),
                 shown=f"{r['idle_rtt_ms']:.1f} ms")
    if idle.verdict != "agrees":
        idle.reason = "a standing queue before the download starts"
    dips = Check("slowdowns visible in the VoIP delay (dips below T/4)", "periodic slow-downs visible", "L334", None,
                 shown=f"{r['dips']:.1f} dips, one every {r['dip_every_s']:.1f} s", reason=dip_reason(r))
    return [below.row(), spikes.row(), rate.row(), idle.row(), dips.row()]


def below_reason(r, summary) -> str:
    """Why fewer VoIP packets than the paper's stay under T, from this run: where the queue settles,
    what one frame is at this rate, and the fast spot points at the same RTT as the contrast."""
    text = settles_at_target(r)
    paper = summary[summary["variant"] == PAPER]
    # Same RTT as the main point, so only the frame's share of the queue differs.
    fast = paper[(paper["capacity_mbps"] >= 10) & (paper["rtt_ms"] == r["rtt_ms"])]
    if len(fast):
        cells = "; ".join(f"{f['capacity_mbps']:g} Mbps/{f['rtt_ms']:g} ms: {f['below_target']:.1%} (a frame "
                          f"{frame_ms(f['capacity_mbps']):.2f} ms)" for _, f in fast.iterrows())
        text += f". Where a frame is a fraction of a ms of queue more packets stay under T ({cells})"
    variants = summary[summary.apply(_is_main, axis=1) & (summary["variant"] != PAPER)]
    if len(variants):
        best = variants.loc[variants["below_target"].idxmax()]
        text += (f". None of the details the paper leaves open reaches {BELOW_MIN:.0%} (best: {best['variant']}, "
                 f"{best['below_target']:.1%})" if best["below_target"] < BELOW_MIN else
                 f". {best['variant']} reaches {best['below_target']:.1%}")
    return text


def spike_reason(r) -> str:
    return ("the paper gives no share for the spikes, so it is reported: they are there (p99 "
            f"{r['extra_p99_ms']:.0f} ms), but the delay between them sits at {r['extra_p50_ms']:.0f} ms (median, T "
            f"{common.TARGET_MS} ms), so {1 - r['below_target']:.0%} of the packets are over T, not a few; the core "
            "does not expose the receiver's decrease times to tie each over-target packet to one")


def dip_reason(r) -> str:
    rtt = r["rtt_ms"] + r["extra_p50_ms"]
    return ("the paper gives no count or period for Fig. 5 (L115's 9·Tss rests on the ramp time Tss, which the paper defines but "
            f"gives no value for), so it is reported: {r['dips']:.0f} dips in "
            f"{DURATION_S - DOWNLOAD_START_S:.0f} s. The notes' 9·Tss ≈ 1.4 s assumed a ramp of 8 base RTTs "
            f"({r['rtt_ms']:g} ms); with the median queue the RTT here is ≈ {rtt:.0f} ms, {rtt / r['rtt_ms']:.1f} "
            f"times longer, and the dips come every {r['dip_every_s']:.1f} s")


def _is_main(r) -> bool:
    return r["capacity_mbps"] == MAIN["capacity_mbps"] and r["rtt_ms"] == MAIN["rtt_ms"]


def _sensitivity_row(summary) -> dict:
    part = summary[summary.apply(_is_main, axis=1)]
    return Check("main point, details the paper leaves open: VoIP < 60 ms extra", "unstated (our variants)",
                 "notes §1.4, §5 item 6", None,
                 shown="; ".join(f"{r['variant']}: {r['below_target']:.1%}" for _, r in part.iterrows()), contrast=True,
                 reason="sibling arms: what the paper leaves open, varied to see whether it moves the share").row()


def _spot_rows(summary) -> list:
    rows = []
    for _, r in summary[summary["variant"] == PAPER].iterrows():
        if _is_main(r):
            continue
        where = f"spot check {r['capacity_mbps']:g} Mbps, RTT {r['rtt_ms']:g} ms"
        delay = Check(f"{where}: VoIP packets < 60 ms extra", f"similar results (L338): {PAPER_BELOW:.1%} at 1 Mbps",
                      "L338, L327", float(r["below_target"]), voip.below_claim(), of=("below_target",),
                      shown=f"{mean_spread(r, 'below_target', '.1%')} (extra p50 {r['extra_p50_ms']:.0f} ms)")
        if delay.verdict != "agrees":
            delay.reason = (f"median extra delay {r['extra_p50_ms']:.0f} ms: the queue settles at the target "
                            "(first row)")
        rate = Check(f"{where}: rLEDBAT's part of what VoIP leaves", f"similar results ({PAPER_KBPS}/{BEST_KBPS - VOIP_KBPS} "
                     "at 1 Mbps)", "L338, L336", float(r["of_left"]),
                     voip.kbps_claim(round(PAPER_KBPS / (BEST_KBPS - VOIP_KBPS), 4), round(KBPS_MIN / PAPER_KBPS, 3)),
                     of=("of_left",),
                     shown=f"rLEDBAT {r['rledbat_kbps'] / 1e3:.2f} Mbps, {r['of_left']:.1%} of what VoIP leaves")
        if rate.verdict != "agrees":
            rate.reason = SPOT_RATE_REASON.format(**r)
        rows += [delay.row(), rate.row()]
    return rows


SPOT_RATE_REASON = ("the download's flight averages {flight_over_bdp:.0%} of the BDP over its 40 s: its start-up "
                    "ends far below the BDP (CUBIC's slow start meets a queue past T, or overflows the 150 ms "
                    "buffer: {rledbat_retransmits:.0f} retransmissions on average), it climbs back by GAIN ≤ 1 "
                    "packet per RTT, and at long RTTs the ramps after slowdowns pass T and cut it again (as in "
                    "rledbat-fig8)")


def _comparison(summary) -> list:
    main = summary[summary.apply(_is_main, axis=1) & (summary["variant"] == PAPER)]
    return _main_rows(main.iloc[0], summary) + [_sensitivity_row(summary)] + _spot_rows(summary)


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    result = EXPERIMENT.rerun(MAIN, 1)
    sent, extra, base, start = voip_delays(result)
    rtt = result.owd.loc[sent.index, "owd_ms"] + MAIN["rtt_ms"] / 2
    fig, ax = pyplot().subplots(figsize=(8, 4.2))
    ax.plot(sent, rtt, ".", ms=2, label="VoIP RTT (one-way delay + RTT/2)")
    ax.axhline(MAIN["rtt_ms"], color="C7", lw=0.8, label="base RTT 20 ms")
    ax.axhline(MAIN["rtt_ms"] + common.TARGET_MS, color="C3", ls="--", lw=0.8, label="base + T (60 ms)")
    ax.axvline(start, color="k", ls=":", lw=0.8, label="rLEDBAT starts")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("RTT (ms)")
    ax.set_title("rLEDBAT Fig. 5: VoIP (64 kbps) and an rLEDBAT download, 1 Mbps, buffer 150 ms")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, out_dir / "rledbat-fig5.png")


EXPERIMENT = Experiment(
    name="rledbat-fig5",
    description="rLEDBAT Fig. 5: 64 kbps VoIP (160 B / 20 ms) from 0 s and an rLEDBAT download from 10 s, 1 Mbps, "
                "150 ms buffer, RTT 20 ms, 50 s; VoIP delay and rLEDBAT rate; spot checks 1–40 Mbps, 10–300 ms",
    base=base(),
    grid={},
    points=[MAIN] + SPOTS + SENSITIVITY,
    quick_points=[MAIN] + QUICK_SPOTS + SENSITIVITY,
    seeds=common.SEEDS,
    quick_seeds=common.QUICK_SEEDS,
    seed_in_point=True,
    apply=apply,
    metric=metric,
    figure=_figure,
    comparison=_comparison,
)
#: §5 (L307–L311): every run in the testbed's environment (tbf burst, GRO at the receivers).
EXPERIMENT = common.testbed_experiment(EXPERIMENT)
