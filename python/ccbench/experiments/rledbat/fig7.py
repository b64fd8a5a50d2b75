"""rLEDBAT paper, Fig. 7 (L348, caption L356): rLEDBAT alone, delay-based mode, base RTT swept;
sender-side LEDBAT++ run beside it.

Scenario: one greedy download from a CUBIC sender to an rLEDBAT receiver, 20 Mbps, buffer 500 ms,
base RTT on the notes' grid 10–300 ms (the paper prints none, notes §5 item 1), 300 s, 8 runs.
Second arm: the same download from a LEDBAT++ sender to a plain receiver (``cca = "ledbat++"``),
the comparison the paper draws from its earlier study [6].

Claims: rLEDBAT seizes 90 % of the capacity for base RTTs below 200 ms, less above (L348), as
LEDBAT++ did (L348); LEDBAT++ in [6] reached 90 % below 300 ms and about 80 % at 400 ms (L123).
The seed says "< 200 ms" for rLEDBAT and "< 300 ms" for LEDBAT++; the notes' §6 item 6 reads the
two as different implementations, which is how we check them.

We measure the core's goodput over the whole run including start-up (L315) over C (``solo``).
Pass (notes §3, Fig. 7): rate/C in [0.83, 0.97] for RTT ≤ 150 ms (the grid's RTTs below 200 ms);
U(300 ms) at least 3 points below the mean over RTT ≤ 150 ms and, "similar to LEDBAT++" (L348),
which was about 0.8 at 400 ms (L123), at least 0.8 − 0.07 (the band of "90 %"; the notes' soft
0.65 was weaker), as one range. LEDBAT++ arm: in [0.83, 0.97] for RTT < 300 ms (L123). Our sender
LEDBAT++ arm beside rLEDBAT at each RTT is a contrast row: the paper prints no LEDBAT++ values.

Environment (issue 25 item 6): every run is in the testbed's (``common.testbed_experiment``: a
tbf burst by tc-tbf(8)'s rule at the point's rate, 32 KiB at 20 Mbps, and GRO at the receivers).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import common, solo

QUICK_RTTS_MS = [20, 100, 300]
BAND = (0.83, 0.97)
GOOD_BELOW_MS, LONG_RTT_MS, DROP_MIN = 200, 300, 0.03
#: LEDBAT++ in [6]: 90 % below 300 ms, about 0.8 at 400 ms (L123); ±0.07 is the band of "90 %".
LEDBATPP_GOOD_BELOW_MS, LEDBATPP_400, SIMILAR = 300, 0.8, 0.07


def long_rtt_row(r, p) -> list:
    """U(300 ms): below the mean over RTT < 200 ms by at least 3 points (L348), and "similar to
    LEDBAT++" (L348), which reached about 0.8 at 400 ms (L123), so at 300 ms not under 0.8 less the
    ±0.07 band of "about 90 %": one range, so a collapse fails it too. The quick run's 90 s weigh
    the start-up more than the paper's 300 s (L315): the drift from the whole run to its second half
    is how far the full run could move ours."""
    if LONG_RTT_MS not in r.index:
        return []
    short = float(r[r.index < GOOD_BELOW_MS]["utilisation"].mean())
    long, late = float(r.loc[LONG_RTT_MS, "utilisation"]), float(r.loc[LONG_RTT_MS, "utilisation_late"])
    check = Check(f"U(300 ms): ≥ 3 points below the mean over RTT < 200 ms, and ≥ {LEDBATPP_400 - SIMILAR:g}",
                  "utilisation decreases for base RTTs above 200 ms, similar to LEDBAT++ (L348); LEDBAT++ about "
                  "0.8 at 400 ms (L123)", "Fig. 7, L348, L123", long, Claim("in", (round(LEDBATPP_400 - SIMILAR, 3),
                                                                             round(short - DROP_MIN, 3))),
                  shown=f"{long:.3f} (second half of the run {late:.3f}; mean over RTT < 200 ms {short:.3f})",
                  needs=("duration",), movable=abs(late - long), of=("utilisation",))
    if check.verdict != "agrees":
        if long > short - DROP_MIN:
            check.reason = "no drop at 300 ms"
        else:
            ledbatpp = float(p.loc[LONG_RTT_MS, "utilisation"]) if LONG_RTT_MS in p.index else float("nan")
            check.reason = (f"even the run's second half gives {late:.3f}, so the 300 s run (L315) cannot bring it "
                            f"to {LEDBATPP_400 - SIMILAR:g}; our sender LEDBAT++ also falls, to {ledbatpp:.3f}: the "
                            "paper's own mechanism (L358), stronger in ours, traced in rledbat-fig8: each ramp after "
                            "a slowdown passes T near the old window and a decrease follows, and the additive increase "
                            "of about a packet per RTT cannot refill a 300 ms BDP between slowdowns; rLEDBAT starts "
                            "lower still (the contrast rows)")
    return [check.row()]


def similar_rows(r, p) -> list:
    """Our sender LEDBAT++ arm beside rLEDBAT at each RTT both arms ran: contrast rows (the paper
    prints no LEDBAT++ values; it cites [6], L123, whose numbers the band rows judge)."""
    out = []
    for x in [x for x in r.index if x in p.index]:
        theirs, ours = float(p.loc[x, "utilisation"]), float(r.loc[x, "utilisation"])
        check = Check(f"rLEDBAT beside our sender LEDBAT++ arm at {x:g} ms",
                      f"our sender LEDBAT++ arm, {theirs:.3f} (the paper's [6] values: L123)", "Fig. 7, L348",
                      ours, shown=f"{ours:.3f} ({ours - theirs:+.3f})", contrast=True, of=("utilisation",))
        if abs(ours - theirs) > SIMILAR:
            check.reason = (f"rLEDBAT is {theirs - ours:.3f} below at {x:g} ms: the start-up. rlwnd "
                            "starts at its maximum (L254), so CUBIC's own slow start overshoots and rLEDBAT's decreases "
                            "cut the window far below the BDP (rledbat-fig8's start-up row); it climbs back at about "
                            "1 packet per RTT, while LEDBAT++'s own slow start stops near the plateau")
        out.append(check.row())
    return out


def _comparison(summary) -> list:
    r, p = solo.by_arm(summary, solo.RLEDBAT), solo.by_arm(summary, solo.LEDBATPP)
    rows = solo.band_checks(r, "rLEDBAT: rate/C", "90 % below 200 ms", "Fig. 7, L348", BAND, GOOD_BELOW_MS,
                            reason="outside the band at a short RTT")
    rows += long_rtt_row(r, p)
    rows += solo.band_checks(p, "LEDBAT++ (sender): rate/C", "90 % below 300 ms (from [6])", "L123", BAND,
                             LEDBATPP_GOOD_BELOW_MS, reason="outside the band below 300 ms")
    rows += similar_rows(r, p)
    return rows


def _figure(summary, out_dir: Path) -> Path:
    return solo.arms_figure(summary, out_dir / "rledbat-fig7.png", [solo.RLEDBAT, solo.LEDBATPP],
                            "rLEDBAT Fig. 7: alone, 20 Mbps, buffer 500 ms", bands=[(*BAND, "pass band")])


EXPERIMENT = Experiment(
    name="rledbat-fig7",
    description="rLEDBAT Fig. 7: one rLEDBAT download (CUBIC sender) alone vs base RTT, 20 Mbps, 500 ms "
                "buffer, 300 s, with sender LEDBAT++ beside it; rate over the whole run / C",
    base=solo.solo_base(common.DEEP_BUFFER),
    grid={"rtt_ms": common.RTTS_MS, "arm": [solo.RLEDBAT, solo.LEDBATPP]},
    quick_grid={"rtt_ms": QUICK_RTTS_MS, "arm": [solo.RLEDBAT, solo.LEDBATPP]},
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
