"""rLEDBAT paper, Fig. 14 (L414–L422, caption L417): one rLEDBAT download (CUBIC sender) beside one
CUBIC download, both starting at once, 20 Mbps, 30 ms drop-tail buffer (below the 60 ms target, so
both react to loss), base RTT swept; 300 s.

Claims: rLEDBAT does not fully yield: it seizes "about 20 %" and CUBIC the rest, because both react
to losses and LEDBAT++'s NewReno-like AIMD is gentler than CUBIC's (L414); "this is more clearly
noted for RTTs larger than 120 ms, because the GAIN parameter of LEDBAT++ decreases" (L422);
rLEDBAT is more aggressive than LEDBAT++, as it reacts to retransmissions, one RTT after the loss
(L422). Notes' pass rows (§3 Fig. 14): rLEDBAT share in [0.10, 0.30] at each RTT (BED-num); CUBIC
above rLEDBAT at every RTT; mean share for RTT ≥ 120 ms ≥ mean for RTT < 120 ms. As checks (issue
39): the share ≈ 0.20 (±0.05 agrees, ±0.10 within tolerance); CUBIC's share in what the best goodput leaves beside that band;
the grid mean about 20 %; L422's two comparisons judged as orders: CUBIC's part of the two flows'
goodput (from both flows' own rates) above 120 ms at least its part below, and rLEDBAT's grid-mean
share at least sender LEDBAT++'s.

The notes (§6 item 4) read L422 backwards: "this" in L422 is CUBIC seizing most of the capacity,
so the seed says rLEDBAT's share is *smaller* above 120 ms, and blames GAIN; the notes, since GAIN
grows with RTT by eq. (2), turn it into "rLEDBAT's share is larger above 120 ms". The seed wins: we
check its literal statement (the notes' reversed row is not judged again).

Arms: ``rledbat`` and ``ledbat++`` (sender-side LEDBAT++ beside CUBIC, for L422's comparison) on the
notes' RTT grid. Measured per run (``pairs.versus_cubic_metric``): each flow's goodput over the whole
300 s, as a share of C and of the best goodput; the bottleneck's mean queueing delay and drops.

Environment (issue 25 item 6): every run is in the testbed's (``common.testbed_experiment``: a
tbf burst by tc-tbf(8)'s rule at the point's rate, 32 KiB at 20 Mbps, and GRO at the receivers).
"""

from __future__ import annotations

import math
from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import pairs
from ccbench.experiments.rledbat.common import (
    DURATION_S,
    GOODPUT_FRACTION,
    MSS,
    QUICK_DURATION_S,
    QUICK_SEEDS,
    RTTS_MS,
    SEEDS,
    SHALLOW_BUFFER,
    base,
    gain_divisor,
    testbed_experiment,
)

QUICK_RTTS_MS = [20, 100, 300]
#: "About 20 %" (L414): rLEDBAT's share of C ≈ 0.20, agreeing within ±0.05 and within tolerance
#: within ±0.10 (the notes' band [0.10, 0.30], §3 Fig. 14); the split of L422 at 120 ms.
ABOUT, AGREE, WITHIN, SPLIT_RTT_MS = 0.20, 0.05, 0.10, 120
SHARE_BAND = (ABOUT - WITHIN, ABOUT + WITHIN)
#: "CUBIC the rest" (L414): what the best goodput leaves beside rLEDBAT's 20 %, with the same bands
#: (stricter than the notes' "CUBIC above rLEDBAT", which no share of CUBIC's could fail).
CUBIC_REST = round(GOODPUT_FRACTION - ABOUT, 3)
SOURCE = "Fig. 14, L414"
BUFFER_MS = 30


def window_packets(row) -> float:
    """rLEDBAT's mean window from its rate and the mean RTT (base + mean queueing delay), in MSS."""
    return row["lbe_mbps"] * 1e6 / 8 * (row["rtt_ms"] + row["queue_ms"]) / 1e3 / MSS


def _low_share_reason(row) -> str:
    """Why rLEDBAT keeps less than the band at this RTT: eq. (2)'s GAIN and the buffer against the
    BDP, with the run's loss counts (traces: at 10 ms both flows lose about one packet a second; at
    300 ms rLEDBAT's window falls to 2 MSS at each periodic slowdown and climbs back by about one
    MSS per RTT)."""
    n, rtt = gain_divisor(row["rtt_ms"]), row["rtt_ms"]
    losses = (f"retransmissions over the run: rLEDBAT {row['lbe_retransmits']:.0f}, "
              f"CUBIC {row['cubic_retransmits']:.0f}")
    if n > 1:
        return (f"GAIN = 1/{n} at {rtt:g} ms (eq. 2, L89): between losses rLEDBAT adds 1/{n} MSS per RTT while "
                "CUBIC grows at least as Reno-friendly TCP (≈0.53 MSS per RTT), and the queue never reaches the "
                f"60 ms target, so only losses act and both flows see them ({losses}): rLEDBAT's mean window "
                f"is about {window_packets(row):.0f} packets")
    return (f"GAIN is 1 here, but the buffer is {BUFFER_MS / rtt:.2f} BDP: each loss halves rLEDBAT's window "
            "(L79) and each periodic slowdown drops it to 2 MSS (L115); it climbs back by about one MSS per "
            f"{rtt:g} ms RTT, while CUBIC's growth is set in seconds, not RTTs ({losses})")


def about(value: float) -> Claim:
    """≈ ``value`` of C with the bands of "about 20 %" (±0.05 agrees, ±0.10 within tolerance)."""
    return Claim("≈", value, agree=AGREE, within=WITHIN, relative=False)


def _band_rows(summary) -> list:
    rows = []
    for _, row in pairs.arm_rows(summary, pairs.RLEDBAT).iterrows():
        share = Check(f"RTT {row['rtt_ms']:g} ms: rLEDBAT's share of C", "about 20 %", SOURCE,
                      float(row["lbe_share"]), about(ABOUT), shown=pairs.share_text(row), of=("lbe_share",))
        if share.verdict != "agrees":
            share.reason = (_low_share_reason(row) if row["lbe_share"] < ABOUT
                            else f"rLEDBAT keeps {row['lbe_share']:.1%}, more than 20 % (mean queue "
                                 f"{row['queue_ms']:.0f} ms, {row['drops']:.0f} drops)")
        rest = Check(f"RTT {row['rtt_ms']:g} ms: CUBIC takes the rest, best goodput − rLEDBAT's 20 %",
                     "CUBIC the rest", SOURCE, float(row["cubic_share"]), about(CUBIC_REST),
                     shown=pairs.share_text(row, "cubic"), of=("cubic_share",))
        if rest.verdict != "agrees":
            total = row["lbe_share"] + row["cubic_share"]
            rest.reason = (f"the two flows carry {total:.1%} of C (best goodput {GOODPUT_FRACTION:.1%}); "
                           f"rLEDBAT {row['lbe_share']:.1%}, mean queue {row['queue_ms']:.0f} ms, "
                           f"{row['drops']:.0f} drops")
        rows += [share.row(), rest.row()]
    return rows


def cubic_parts(rows) -> tuple:
    """CUBIC's part of what the two flows carry, from each flow's own rate, averaged over the RTTs
    below and at or above 120 ms (L422)."""
    part = rows["cubic_share"] / (rows["cubic_share"] + rows["lbe_share"])
    below = rows["rtt_ms"] < SPLIT_RTT_MS
    return float(part[below].mean()), float(part[~below].mean())


def _split_rows(summary) -> list:
    ours = pairs.arm_rows(summary, pairs.RLEDBAT)
    mean = Check("mean rLEDBAT share over the RTT grid", "about 20 % of the capacity", SOURCE,
                 pairs.mean_over(ours, "lbe_share"), about(ABOUT), of=("lbe_share",))
    mean.shown = f"{mean.ours:.1%} of C over {len(ours)} RTTs"
    if mean.verdict != "agrees":
        mean.reason = "see the per-RTT rows"
    out = [mean.row()]
    low, high = cubic_parts(ours)
    if low == low and high == high:
        seed = Check("CUBIC's dominance clearer above 120 ms: its part of the two flows' goodput, RTT ≥ 120 ms",
                     "Cubic seizes most of the capacity; more clearly noted for RTTs larger than 120 ms",
                     "Sec. 6.4.2, L414, L422", high, Claim("≥", round(low, 4), relative=False),
                     shown=f"{high:.1%} (RTT < 120 ms: {low:.1%})", of=("cubic_share", "lbe_share"))
        # the paper's cause is GAIN (L422); by eq. (2) GAIN is 1 at every RTT ≥ 120 ms, so it is not ours
        seed.reason = ("" if seed.verdict == "agrees" else "CUBIC's part is not larger above 120 ms. ") + (
            "The paper blames GAIN, but by eq. (2) (L89) GAIN is 1 at every RTT ≥ 120 ms; there the 30 ms buffer is "
            "at most a quarter of the BDP, where a halving AIMD loses most (L362, Fig. 9)")
        out.append(seed.row())
    return out


def _not_more_aggressive_reason(ours) -> str:
    """The paper's reason is the receiver's later reaction; but the rLEDBAT download is also bounded
    by its CUBIC sender's window, which is cut at loss detection as LEDBAT++'s is."""
    return (f"the rLEDBAT download was bounded by its CUBIC sender's window in "
            f"{pairs.mean_over(ours, 'lbe_sender_bound'):.0%} of the samples (mean over the grid), and that sender "
            "cuts its window (×0.7) when it detects the loss, as LEDBAT++ does (×0.5): with that cut already made, "
            "the receiver's later reaction (L164) has little room to make the download more aggressive "
            "(inferred from that fraction, not isolated by a run)")


def grid_mean_difference_error(ours, theirs) -> float:
    """Standard error of (grid mean of our shares − grid mean of theirs), from each point's spread
    over its seeds (0 with one seed)."""
    variance = sum((rows["lbe_share_std"] ** 2 / rows["seeds"]).sum() for rows in (ours, theirs))
    return math.sqrt(variance) / max(len(ours), 1)


def _ledbatpp_rows(summary) -> list:
    """Our sender LEDBAT++ arm beside CUBIC (contrast rows: the paper plots none), and L422's
    "rLEDBAT is more aggressive than LEDBAT++" judged on the two arms' grid-mean shares."""
    ours, theirs = pairs.arm_rows(summary, pairs.RLEDBAT), pairs.arm_rows(summary, pairs.LEDBATPP)
    rows = [Check(f"our sender LEDBAT++ arm beside CUBIC, RTT {row['rtt_ms']:g} ms",
                  "our arm (the paper plots no LEDBAT++ here; it cites [6])", "L422", None,
                  shown=pairs.pair_text(row, "LEDBAT++"), contrast=True).row()
            for _, row in theirs.iterrows()]
    if ours.empty or theirs.empty:
        return rows
    mine, other = pairs.mean_over(ours, "lbe_share"), pairs.mean_over(theirs, "lbe_share")
    error = grid_mean_difference_error(ours, theirs)
    seeds = int(ours["seeds"].min())
    per_rtt = "; ".join(f"{a['rtt_ms']:g} ms: {a['lbe_share'] - b['lbe_share']:+.1%}"
                        for (_, a), (_, b) in zip(ours.iterrows(), theirs.iterrows()))
    check = Check("rLEDBAT more aggressive than sender-side LEDBAT++: rLEDBAT's grid-mean share",
                  "rLEDBAT more aggressive than LEDBAT++: it reacts to retransmissions", "L422", mine,
                  Claim("≥", round(other, 4), relative=False),
                  shown=f"rLEDBAT {mine:.1%}, LEDBAT++ {other:.1%} (rLEDBAT − LEDBAT++ per RTT: {per_rtt})",
                  # more seeds move the difference of grid means by up to 3 standard errors
                  needs=("seeds",), movable=3 * error if seeds > 1 else None, of=("lbe_share",))
    if check.verdict != "agrees":
        check.reason = _not_more_aggressive_reason(ours)
    rows.append(check.row())
    return rows


def _comparison(summary) -> list:
    return _band_rows(summary) + _split_rows(summary) + _ledbatpp_rows(summary)


def _figure(summary, out_dir: Path) -> Path:
    arms = [pairs.RLEDBAT, pairs.LEDBATPP]
    frame = pairs.wide(summary, "rtt_ms", arms, ["lbe_share", "cubic_share"])
    lines = [(f"{arm}:lbe_share", pairs.ARM_LABELS[arm]) for arm in arms] + [
        (f"{arm}:cubic_share", f"CUBIC beside {pairs.ARM_LABELS[arm]}") for arm in arms]
    return pairs.panels_figure(out_dir / "rledbat-fig14.png",
                               [("20 Mbps, 30 ms buffer", frame, "rtt_ms", "base RTT (ms)", lines)],
                               "rLEDBAT Fig. 14: one LBE flow vs one CUBIC flow (whole 300 s)",
                               bands=[(*SHARE_BAND, "rLEDBAT about 20 % (within ±10 points)")])


EXPERIMENT = Experiment(
    name="rledbat-fig14",
    description="rLEDBAT Fig. 14: rLEDBAT (and sender-side LEDBAT++) vs CUBIC, 20 Mbps, 30 ms buffer, "
                "RTT grid; 300 s, 8 seeds",
    base=base(buffer=SHALLOW_BUFFER, duration_s=DURATION_S, flows=pairs.versus_cubic_flows(pairs.RLEDBAT, 1)),
    grid={},
    points=pairs.points([pairs.RLEDBAT, pairs.LEDBATPP], RTTS_MS, buffer=SHALLOW_BUFFER),
    quick_points=pairs.points([pairs.RLEDBAT, pairs.LEDBATPP], QUICK_RTTS_MS, buffer=SHALLOW_BUFFER),
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
EXPERIMENT = testbed_experiment(EXPERIMENT)
