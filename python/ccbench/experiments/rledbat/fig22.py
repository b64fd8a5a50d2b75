"""rLEDBAT paper, Fig. 22 (L508, caption L518): the enhanced rLEDBAT alone, base RTT swept, beside
the original.

Scenario: as Fig. 7 (one CUBIC-sender download to an rLEDBAT receiver, 20 Mbps, 500 ms buffer,
the notes' RTT grid, 300 s, 8 runs), with the modified target min(T, base RTT) of §7.1 (L500;
``receiver_cc.enhanced_target = true``), and the original run beside it on the same seeds.

Claim (L508): running solo, rLEDBAT's performance is unaffected by the modification.

We measure the core's goodput over the whole run over C (``solo``) for both arms. Pass (notes
§3, Fig. 22): |U_mod − U_orig| ≤ 0.05 at every RTT below T (from T up min(T, base RTT) is T, so the
arms are the same controller and are not compared), and U_mod about 90 % ([0.83, 0.97], as Fig. 7)
for RTT ≤ 150 ms.

Environment (issue 25 item 6): every run is in the testbed's (``common.testbed_experiment``: a
tbf burst by tc-tbf(8)'s rule at the point's rate, 32 KiB at 20 Mbps, and GRO at the receivers).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import common, solo

QUICK_RTTS_MS = [10, 40, 150]
SAME, FLOOR_UP_TO_MS = 0.05, 150
#: "About 90 %" as in Fig. 7 (L348): the same band, [0.83, 0.97].
BAND = (0.83, 0.97)
FLOOR = BAND[0]


def _compare(summary):
    summary = summary.copy()
    orig = solo.by_arm(summary, solo.RLEDBAT)["utilisation"]
    summary["u_minus_original"] = summary["utilisation"] - summary["rtt_ms"].map(orig)
    return summary


def _same_rows(m, o) -> list:
    """U_mod about U_orig where the modification changes the target: below T only, since from T up
    min(T, base RTT) is T and the two arms are the same controller (identical by construction)."""
    out = []
    for x in [x for x in m.index if x in o.index and x < common.TARGET_MS]:
        orig = float(o.loc[x, "utilisation"])
        check = Check(f"U_mod about U_orig (±0.05) at {x:g} ms", "performance unaffected running solo",
                      "Fig. 22, L508", float(m.loc[x, "utilisation"]),
                      Claim("≈", round(orig, 4), agree=SAME, relative=False),
                      shown=f"{m.loc[x, 'utilisation']:.3f} (U_orig {orig:.3f}, {m.loc[x, 'u_minus_original']:+.3f})",
                      of=("utilisation",))
        if check.verdict != "agrees":
            check.reason = (f"the reduced target min(T, {x:g} ms) changes the solo rate by "
                            f"{m.loc[x, 'u_minus_original']:+.3f}")
        out.append(check.row())
    return out


def _floor_rows(m) -> list:
    out = []
    for x, r in m[m.index <= FLOOR_UP_TO_MS].iterrows():
        check = Check(f"U_mod at {x:g} ms", "as Fig. 7: ≈ 90 %", "Fig. 22, L348, L508", float(r["utilisation"]),
                      Claim("in", BAND), shown=mean_spread(r, "utilisation"), of=("utilisation",))
        if check.verdict != "agrees":
            check.reason = (f"below 0.83 at a short RTT ({r['retransmits']:.0f} retransmissions per run)"
                            if r["utilisation"] < BAND[0] else "above the band: the slowdowns cost less than 10 %")
        out.append(check.row())
    return out


def _comparison(summary) -> list:
    summary = _compare(summary) if "u_minus_original" not in summary else summary
    m, o = solo.by_arm(summary, solo.ENHANCED), solo.by_arm(summary, solo.RLEDBAT)
    return _same_rows(m, o) + _floor_rows(m) + [
        Check("original rLEDBAT on the same seeds", "the original, as in Fig. 7 (our arm)", "L508", None,
              shown=solo.cells(o["utilisation"]), contrast=True,
              reason="the reference arm of the rows above; from T up it is the modified arm itself").row()]


def _figure(summary, out_dir: Path) -> Path:
    return solo.arms_figure(summary, out_dir / "rledbat-fig22.png", [solo.ENHANCED, solo.RLEDBAT],
                            "rLEDBAT Fig. 22: enhanced vs original, alone, 20 Mbps, buffer 500 ms",
                            bands=[(*BAND, "U_mod about 90 % (RTT ≤ 150 ms)")])


EXPERIMENT = Experiment(
    name="rledbat-fig22",
    description="rLEDBAT Fig. 22: the enhanced rLEDBAT (target min(T, base RTT)) alone vs base RTT, beside the "
                "original, 20 Mbps, 500 ms buffer, 300 s; rate over the whole run / C",
    base=solo.solo_base(common.DEEP_BUFFER),
    grid={"rtt_ms": common.RTTS_MS, "arm": [solo.ENHANCED, solo.RLEDBAT]},
    quick_grid={"rtt_ms": QUICK_RTTS_MS, "arm": [solo.ENHANCED, solo.RLEDBAT]},
    seeds=common.SEEDS,
    quick_seeds=common.QUICK_SEEDS,
    quick_overrides={"duration": f"{common.QUICK_DURATION_S}s"},
    seed_in_point=True,
    apply=solo.solo_apply,
    metric=solo.solo_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
#: §5 (L307–L311): every run in the testbed's environment (tbf burst, GRO at the receivers).
EXPERIMENT = common.testbed_experiment(EXPERIMENT)
