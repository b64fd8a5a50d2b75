"""fLEDBAT paper, Fig. 4(b) (L329–L333): one fLEDBAT flow beside one original LEDBAT flow, both
chunk by chunk (L304), both starting at random in [0, 10] s (L331), ζ swept.

Claims: fLEDBAT is generally the more aggressive (its AI) until ζ grows large, then the reverse
(its MD); LEDBAT gets < 20 % of the bottleneck for ζ < 10⁻²; the crossover is at about ζ = 5,
above which fLEDBAT is the lower priority (L331); the share is never fair and a latecomer effect
can remain (L333).

Setting: the chunked reference set-up of ``fig3a``. LEDBAT's target is τ = 25 ms like fLEDBAT's:
the paper says the results hold as long as all flows share the target (footnote 10, L275), and
its simulations use 25 ms (L273); GAIN 1, RFC 6817's estimators (the notes' §4 item 4
suggestion, the same as fLEDBAT's), no slow start, IW 2. Starts drawn per flow and seed from
U[0, 10] s (the same for every ζ); 300 s; metrics over [last start, end] (notes §4 item 9; the
scenario's ``warmup`` is the last start), read from the core: the flows' wire rates
(``throughput_mbps``, headers included, L306), the bottleneck's F (``jain_long``) and η
(``efficiency``). LEDBAT's share is its part of the two core rates (both flows are
less-than-best-effort, so the core's ``lbe_share`` is 1 here). The mean queueing delay is the
time-averaged backlog over C from the series.

The crossover is where LEDBAT's share of the traffic reaches 50 % going up the ζ grid, the mean
over seeds interpolated on log ζ.
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.fledbat.common import (
    BASE_RTT_S,
    CAPACITY_MBPS,
    PACKET_BYTES,
    TARGET_S,
    chunked_flow,
    core_rates_mbps,
    log_crossing,
    mark_far,
    measured_from_last_start,
    measured_window,
    queue_delay_ms,
    reference_base,
    start_s,
)
from ccbench.experiments.fledbat.common import ZETA_GRID as ZETAS

QUICK_ZETAS = [1e-3, 0.01, 0.1, 1.0, 5.0]
NAMES = ("fledbat", "ledbat")
START_SPREAD_S = 10.0
#: Notes' pass rows: LEDBAT < 20 % for ζ ≤ 10⁻²; equal shares at ζ in [2, 10] (paper ≈ 5); above
#: twice the crossover fLEDBAT below LEDBAT; F ≤ 0.9 for every ζ.
LEDBAT_MAX, SMALL_ZETA, CROSSOVER_RANGE, JAIN_MAX, PAPER_CROSSOVER = 0.20, 1e-2, (2.0, 10.0), 0.9, 5.0


def _flows(point: dict) -> list:
    seed = point.get("seed", 1)
    return [chunked_flow("fledbat", "fledbat", start_s(seed, "fledbat", START_SPREAD_S), point["zeta"]),
            chunked_flow("ledbat", "ledbat", start_s(seed, "ledbat", START_SPREAD_S))]


def _metric(result, point: dict) -> dict:
    starts = {flow["name"]: flow["start_s"] for flow in result.summary["flows"]}
    fledbat, ledbat = core_rates_mbps(result, NAMES)
    link = result.link("bottleneck")
    return {"fledbat_mbps": fledbat, "ledbat_mbps": ledbat, "ledbat_share": ledbat / (fledbat + ledbat),
            "jain": link["jain_long"], "eta": link["efficiency"],
            "fledbat_late": float(starts["fledbat"] > starts["ledbat"]),
            "queue_ms": queue_delay_ms(result, *measured_window(result))}


def crossover(summary) -> float:
    """ζ where LEDBAT's mean share reaches 50 %, interpolated on log ζ; NaN if it never does."""
    ordered = summary.sort_values("zeta")
    return log_crossing(list(ordered["zeta"]), list(ordered["ledbat_share"]), 0.5)


def _compare(summary):
    summary = summary.copy()
    summary["crossover_zeta"] = crossover(summary)
    return summary


FIG = "Fig. 4(b), Sec. 8.3"


def _small_zeta_row(summary) -> dict:
    """L331: LEDBAT holds less than 20 % of the bottleneck (of C) when ζ < 10⁻², judged on LEDBAT's
    own measured rate (not 1 − fLEDBAT's share). Ours lies far inside: a halved or doubled reading
    passes as well, so the row says it is far (a bound far away is still the paper's claim)."""
    small = summary[summary["zeta"] <= SMALL_ZETA]
    worst = float(small["ledbat_mbps"].max() / CAPACITY_MBPS) if len(small) else None
    text = "; ".join(f"ζ = {z:g}: LEDBAT {m / CAPACITY_MBPS:.1%} of C" for z, m in zip(small["zeta"], small["ledbat_mbps"]))
    check = Check("LEDBAT's largest share of C over ζ ≤ 10⁻² (< 20 %)",
                  "less than 20 % of the bottleneck is LEDBAT's when ζ < 10⁻²", f"{FIG}, L331", worst,
                  Claim("≤", LEDBAT_MAX), shown=(f"{worst:.1%} ({text})" if worst is not None else "no such ζ run"),
                  of=("ledbat_mbps",))
    if check.verdict != "agrees":
        check.reason = "reported: no ζ ≤ 10⁻² run" if worst is None else f"LEDBAT keeps {worst:.1%} of C at a small ζ"
    return mark_far(check).row()


def half_window_packets() -> float:
    """Each flow's window at an even split with the queue at τ: C·(R + τ)/2, packets."""
    capacity = CAPACITY_MBPS * 1e6 / 8 / PACKET_BYTES
    return capacity * (BASE_RTT_S + TARGET_S) / 2


def _crossover_reason(cross: float) -> str:
    """Per RTT above τ fLEDBAT loses ζ·W·(q − τ)/τ packets (eq. 6) and LEDBAT GAIN·(q − τ)/τ (eq. 2,
    GAIN 1); below τ fLEDBAT gains α = 1 and LEDBAT (τ − q)/τ < 1. So fLEDBAT yields once ζ·W
    passes 1, whatever the chunking."""
    window = half_window_packets()
    return (f"at a shared τ, above the target fLEDBAT loses ζ·W·(q − τ)/τ packets per RTT and LEDBAT "
            f"(q − τ)/τ, so fLEDBAT's decrease is the stronger once ζ·W > 1, i.e. ζ > 1/W = "
            f"{1 / window:.2f} at an even split (W = C(R + τ)/2 = {window:.0f} packets); below τ fLEDBAT's "
            f"increase (1 packet per RTT) beats LEDBAT's ((τ − q)/τ), which moves the balance up to "
            f"ζ ≈ {cross:.2g}. The paper's crossover is {PAPER_CROSSOVER / cross:.0f} times higher; its "
            "LEDBAT's GAIN, estimators and τ are unstated (notes §4 items 3–4): ours is RFC 6817's")


def _crossover_rows(summary) -> list:
    cross = float(summary["crossover_zeta"].iloc[0])
    found = cross == cross
    crossing = Check("crossover ζ (equal shares; bound: the notes' [2, 10])", f"about ζ = {PAPER_CROSSOVER:g}",
                     f"{FIG}, L331", cross if found else None, Claim("in", CROSSOVER_RANGE),
                     shown=f"{cross:.3g}" if found else "none on the grid")
    crossing.reason = "" if crossing.verdict == "agrees" else (
        _crossover_reason(cross) if found else "reported: LEDBAT's share never reaches 50 % on the grid")
    above = summary[summary["zeta"] >= 2 * cross] if found else summary.iloc[0:0]
    # fLEDBAT below LEDBAT at every ζ ≥ 2 × crossover ⇔ LEDBAT's least share there ≥ 50 %.
    least = float(above["ledbat_share"].min()) if len(above) else None
    lower = Check("for ζ ≥ 2 × crossover: LEDBAT's least share (fLEDBAT the lower priority: > 50 %)",
                  "above the crossover fLEDBAT is the lower priority", f"{FIG}, L331", least, Claim("≥", 0.5),
                  shown=("; ".join(f"ζ = {z:g}: LEDBAT {s:.1%}" for z, s in zip(above["zeta"], above["ledbat_share"]))
                         or "no grid point that high"))
    lower.reason = "reported: no ζ on the grid to test it" if least is None else (
        "" if lower.verdict == "agrees" else f"LEDBAT holds only {least:.1%} at some ζ ≥ {2 * cross:.2g}")
    return [crossing.row(), lower.row()]


def _fairness_row(summary) -> dict:
    worst = summary.loc[summary["jain"].idxmax()]
    check = Check("highest F over ζ (never fair; bound: the notes' ≤ 0.9)", "in no case is the share fair",
                  f"{FIG}, L333", float(worst["jain"]), Claim("≤", JAIN_MAX),
                  shown=f"{worst['jain']:.3f} at ζ = {worst['zeta']:g} (LEDBAT {worst['ledbat_share']:.1%})")
    check.reason = "" if check.verdict == "agrees" else (
        f"near the crossover the mean over seeds is near 50/50 by construction (LEDBAT {worst['ledbat_share']:.1%} "
        f"at ζ = {worst['zeta']:g}); the per-seed shares there depend on which flow came second (results.csv, "
        "fledbat_late)")
    return check.row()


def _per_zeta_rows(summary) -> list:
    """L331: "for larger values of ζ though, LEDBAT becomes increasingly competitive": LEDBAT's
    share at each ζ over its share at the next smaller one, judged ≥ 1 (a ratio, which a halved
    or doubled reading moves across 1); the smallest ζ has nothing below it and is shown."""
    ordered = summary.sort_values("zeta").reset_index(drop=True)
    rows = []
    for i, row in ordered.iterrows():
        shown = (f"LEDBAT {mean_spread(row, 'ledbat_share', '.1%')}; F {row['jain']:.3f}; "
                 f"η {row['eta']:.3f}; mean queue {row['queue_ms']:.0f} ms")
        if i == 0:
            rows.append(Check(f"ζ = {row['zeta']:g}: LEDBAT's share, F, η", "LEDBAT's share rises with ζ",
                              f"{FIG}, L331", row["ledbat_share"], None, shown=shown,
                              reason="reported: the curve's first point; the paper prints no value for it").row())
            continue
        before = ordered.iloc[i - 1]
        rise = row["ledbat_share"] / before["ledbat_share"] if before["ledbat_share"] > 0 else None
        check = Check(f"ζ = {before['zeta']:g} → {row['zeta']:g}: LEDBAT's share over its share at the smaller ζ (≥ 1)",
                      "LEDBAT's share rises with ζ (\"increasingly competitive\")", f"{FIG}, L331", rise,
                      Claim("≥", 1.0), shown=(f"{rise:.3g}; " if rise is not None else "") + shown,
                      of=("ledbat_mbps", "fledbat_mbps"))
        if check.verdict != "agrees":
            check.reason = (f"LEDBAT's share falls from {before['ledbat_share']:.1%} to {row['ledbat_share']:.1%}"
                            if rise is not None else "reported: LEDBAT got nothing at the smaller ζ")
        rows.append(mark_far(check).row())
    return rows


def _comparison(summary) -> list:
    summary = _compare(summary) if "crossover_zeta" not in summary else summary
    return ([_small_zeta_row(summary)] + _crossover_rows(summary) + [_fairness_row(summary)]
            + _per_zeta_rows(summary))


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    summary = _compare(summary) if "crossover_zeta" not in summary else summary
    fig, ax = pyplot().subplots(figsize=(8, 4.5))
    for column, label, color in (("eta", "efficiency η", "C0"), ("jain", "fairness F", "C1"),
                                 ("ledbat_share", "LEDBAT share", "C3")):
        ax.errorbar(summary["zeta"], summary[column], yerr=summary[f"{column}_std"], marker="o", ms=4,
                    color=color, label=label, capsize=2)
    ax.plot(summary["zeta"], 1 - summary["ledbat_share"], color="C2", marker="s", ms=3, lw=1,
            label="fLEDBAT share")
    ax.axhline(LEDBAT_MAX, color="C3", ls="--", lw=1, label="20 %")
    ax.axvspan(*CROSSOVER_RANGE, color="grey", alpha=0.15, label="paper's crossover band [2, 10]")
    cross = float(summary["crossover_zeta"].iloc[0])
    if cross == cross:
        ax.axvline(cross, color="k", ls=":", lw=1, label=f"our crossover ζ = {cross:.2g}")
    ax.set_xscale("log")
    ax.set_xlabel("ζ")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="x-small")
    ax.set_title("fLEDBAT Fig. 4(b): one fLEDBAT vs one LEDBAT (τ 25 ms both), chunked, starts U[0, 10] s")
    return save(fig, out_dir / "fledbat-fig4b.png")


EXPERIMENT = Experiment(
    name="fledbat-fig4b",
    description="fLEDBAT Fig. 4(b): one fLEDBAT beside one LEDBAT (τ 25 ms both, GAIN 1), both chunk-by-chunk "
                "(250 kB), starts U[0, 10] s, ζ swept; reference setup (10 Mbps, 100 p, RTT 50 ms + U[0, 1] ms)",
    base=reference_base([chunked_flow("fledbat", "fledbat", 0.0, 0.1), chunked_flow("ledbat", "ledbat")], 300.0),
    grid={"zeta": ZETAS},
    quick_grid={"zeta": QUICK_ZETAS},
    seeds=tuple(range(1, 11)),  # L271: 10 runs per point
    quick_seeds=(1, 2),
    quick_overrides={"duration": "120s"},
    seed_in_point=True,
    apply=lambda point: measured_from_last_start(_flows(point), point.get("seed", 1), START_SPREAD_S),
    metric=_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
