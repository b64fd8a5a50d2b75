"""SIAD thesis §4.5.2, Fig. 4.32, Figs. C.11/C.14 (L2672–2686, L6283–6301; notes ``siad-eval.md``
§2.2 row C5 and §4.8): convergence of a second flow of the same scheme.

Two flows at 20 Mbit/s, RTT 100 ms, drop tail, buffers 0.2–2.0·BDP; the first starts at 0 s, the
second at a full second between 20 and 39 s: 20 runs per setup (L2672). NewReno, Cubic, H-TCP,
SIAD(20), SIAD(40); delayed ACKs on (L2473). The variant of Fig. C.14 gives the late flow
``initial_ssthresh = 10`` (slow start disabled: ssthresh = IW, L2686).

Measured per run: the core's ``reallocations`` entry of the late flow at its start (fair share
20 / 2 = 10 Mbit/s): ``reach_80_s`` / ``reach_95_s``, seconds until its 200 ms receiver rate first
reaches 80 / 95 % of the share (NaN: never before the end); ``reached_80`` / ``reached_95`` are
1 or 0. Over the 20 runs the summary gives mean, min and max (never-reached runs left out, as the
thesis left out its one Cubic run that never reached 95 % in 1200 s, L6301; their share is the
mean of ``reached_95``).

The 20 start times are the runs' seeds (``seed_in_point``): seed s starts the late flow at s
seconds, so ``seeds = 20…39`` is the thesis's set, and each start also gets its own host-noise
draws. Choices where the thesis is silent: buffers 0.2, 0.5, 1.0, 1.5, 2.0·BDP (its axis spans
0.2–2.0), 600 s runs (the thesis extended slow runs up to 1200 s), warm-up 20 s.
"""

from __future__ import annotations

import math
from pathlib import Path

from ccbench.experiments.base import Experiment, expand_grid
from ccbench.experiments.checks import Claim
from ccbench.experiments.siad.common import check, dumbbell, every, flow, reach_s, reallocation, rows, seconds

BUFFERS = [0.2, 0.5, 1.0, 1.5, 2.0]
SCHEMES = ["NewReno", "Cubic", "H-TCP", "SIAD(20)", "SIAD(40)"]
START_SECONDS = tuple(range(20, 40))
QUICK_START_SECONDS = (20, 25, 30, 35)
DURATION_S, QUICK_DURATION_S = 600.0, 200.0
#: Slow start disabled: ssthresh = IW = 10 segments (L2686, the TCP Evaluation Suite's setting).
NO_SLOW_START_SSTHRESH = 10

#: "About the same average convergence time for all buffer settings" (L2680) for H-TCP and
#: SIAD(20): the largest mean over buffers at most twice the smallest.
FLAT_FACTOR = 2.0
#: Disabling slow start adds "a couple of seconds" for NewReno and Cubic but "only a few RTTs"
#: for SIAD (L2686): SIAD's mean grows by at most 10 RTTs = 1 s, NewReno's/Cubic's by at least 1 s.
SIAD_SS_EXTRA_MAX_S, LEGACY_SS_EXTRA_MIN_S = 1.0, 1.0
#: A "strong outlier" (L2680): a maximum above 3 × the mean.
OUTLIER_FACTOR = 3.0
#: "A convergence time of only about 2 seconds" in all of §4.5's scenarios (L2690).
ABOUT_S = 2.0


def _apply(point: dict) -> dict:
    late = {"start": f"{point['seed']}s"}
    if point["slow_start"] == "off":
        late["initial_ssthresh"] = NO_SLOW_START_SSTHRESH
    return {"bottleneck.buffer": f"{point['buffer_bdp']:g}bdp",
            "flows": [flow(point["scheme"], name="first"), flow(point["scheme"], name="late", **late)]}


def _metric(result, point: dict) -> dict:
    entry = reallocation(result, "late", float(point["seed"]))
    r80, r95 = reach_s(entry, 80), reach_s(entry, 95)
    return {"reach_80_s": r80, "reach_95_s": r95,
            "reached_80": float(not math.isnan(r80)), "reached_95": float(not math.isnan(r95))}


def _rows(summary, slow_start: str, scheme: str):
    return summary[(summary["slow_start"] == slow_start) & (summary["scheme"] == scheme)].sort_values("buffer_bdp")


def _stat_text(r, level: int) -> str:
    col = f"reach_{level}_s"
    never = 1 - r[f"reached_{level}"]
    text = (f"{r[col]:.1f} [{r[col + '_min']:.1f}, {r[col + '_max']:.1f}] s" if not math.isnan(r[col]) else "never")
    return text + (f" ({never:.0%} never)" if never > 0 and not math.isnan(r[col]) else "")


def _table_rows(summary) -> list:
    """Each setup's mean [min, max]: the thesis prints no number for them (Figs. 4.32, C.11, C.14
    are plots). SIAD(20)'s and H-TCP's means with slow start are judged by :func:`_about_rows`."""
    return [check(f"slow start {r['slow_start']}, {r['scheme']}, {r['buffer_bdp']:g}·BDP: "
                  "mean [min, max] to 80 % ; 95 % of 10 Mbit/s",
                  "plot only", "Fig. 4.32, C.11, C.14", None, None,
                  shown=f"{_stat_text(r, 80)} ; {_stat_text(r, 95)} ({int(r['seeds'])} starts)",
                  reported="the thesis plots these and prints no number"
                           + ("; judged below against \"about 2 seconds\" (L2690) and H-TCP's \"same range\" "
                              "(L2680)" if r["slow_start"] == "on" and r["scheme"] in ("SIAD(20)", "H-TCP") else ""))
            for _, r in summary.iterrows()]


def _mean_reach(r) -> float:
    """How far the missing starts could move a mean time to 95 %: 3 standard errors over this
    run's starts (the full run has the thesis's 20, L2672)."""
    return 3 * float(r["reach_95_s_std"]) / math.sqrt(float(r["seeds"]))


def _about_rows(summary) -> list:
    """"TCP SIAD has in all scenarios a convergence time of only about 2 seconds" (L2690), per
    buffer, held as the rate-change rows hold it (±25 % agrees, ±50 % within); "the convergence
    times for H-TCP and TCP SIAD still lie in the same range" (L2680): within FLAT_FACTOR."""
    checks = []
    siad = _rows(summary, "on", "SIAD(20)")
    for _, r in siad.iterrows():
        checks.append(check(
            f"SIAD(20), {r['buffer_bdp']:g}·BDP: mean time to 95 % of 10 Mbit/s [s]",
            "about 2 s in all scenarios", "Sec. 4.5.3, L2690", float(r["reach_95_s"]),
            Claim("≈", ABOUT_S, agree=0.25, within=0.5), shown=_stat_text(r, 95), needs=("seeds",),
            movable=_mean_reach(r),
            why=f"the mean over {int(r['seeds'])} starts is {r['reach_95_s']:.1f} s (min {r['reach_95_s_min']:.1f}, "
                f"max {r['reach_95_s_max']:.1f}); the 20 starts of the full run decide (L2672)"))
    htcp = _rows(summary, "on", "H-TCP").set_index("buffer_bdp")
    for _, r in siad.iterrows():
        if r["buffer_bdp"] not in htcp.index:
            continue
        h = htcp.loc[r["buffer_bdp"]]
        ratio = float(r["reach_95_s"] / h["reach_95_s"])
        # The ratio's reach: the two means' relative standard errors, added in quadrature, × 3.
        rel = math.hypot(_mean_reach(r) / r["reach_95_s"], _mean_reach(h) / h["reach_95_s"])
        checks.append(check(
            f"SIAD(20) over H-TCP, {r['buffer_bdp']:g}·BDP: mean time to 95 %",
            f"in the same range (within ×{FLAT_FACTOR:g} either way)", "Sec. 4.5.2, L2680; Sec. 4.5.3, L2690", ratio,
            Claim("in", (1 / FLAT_FACTOR, FLAT_FACTOR)), shown=f"{r['reach_95_s']:.1f} s / {h['reach_95_s']:.1f} s "
            f"= ×{ratio:.2f}", needs=("seeds",), movable=rel * ratio,
            why=f"over {int(r['seeds'])} starts each; the 20 starts of the full run decide (L2672)"))
    return checks


def _means(summary, slow_start: str, scheme: str, level: int = 95) -> list:
    return list(_rows(summary, slow_start, scheme)[f"reach_{level}_s"])


def _claims(summary) -> list:
    checks = []
    cubic = _means(summary, "on", "Cubic")
    for other in ("H-TCP", "SIAD(20)"):
        theirs = _means(summary, "on", other)
        if cubic and len(theirs) == len(cubic):
            higher = [c > o for c, o in zip(cubic, theirs)]  # NaN (never) compares False: fails
            checks.append(every(f"Cubic's mean time to 95 % above {other}'s, per buffer", "always higher",
                                "Sec. 4.5.2, L2680", sum(higher), len(higher),
                                unit=f"buffers ({_pairs(cubic, theirs)})",
                                why=f"at some buffer Cubic converges faster than {other}"))
    newreno = _means(summary, "on", "NewReno")
    if len(newreno) > 1:
        checks.append(every("NewReno faster at the smallest buffer than at the largest",
                            "fast with small buffers, slower as they grow", "Sec. 4.5.2, L2680",
                            int(newreno[0] < newreno[-1]), 1, unit="cases (" + " → ".join(seconds(v) for v in newreno) + ")",
                            why="not slower at the largest buffer"))
    for scheme in ("H-TCP", "SIAD(20)"):
        means = _means(summary, "on", scheme)
        if len(means) > 1:
            buffers = list(_rows(summary, "on", scheme)["buffer_bdp"])
            slowest = buffers[means.index(max(means))]
            spread = max(means) / min(means)
            checks.append(check(
                f"{scheme}: largest over smallest mean time to 95 % across buffers", "short, about constant "
                f"(at most ×{FLAT_FACTOR:g})", "Sec. 4.5.2, L2680", spread, Claim("≤", FLAT_FACTOR),
                shown=f"×{spread:.2f} (" + " → ".join(seconds(v) for v in means) + ")",
                why=f"largest mean (at {slowest:g}·BDP) over {FLAT_FACTOR:g}× the smallest"))
    return checks + _outlier_rows(summary) + _slow_start_rows(summary)


def _pairs(a: list, b: list) -> str:
    return ", ".join(f"{seconds(x)} vs {seconds(y)}" for x, y in zip(a, b))


def _outlier_rows(summary) -> list:
    siad = _rows(summary, "on", "SIAD(20)")
    if siad.empty:
        return []
    top95 = float((siad["reach_95_s_max"] / siad["reach_95_s"]).max())
    top80 = float((siad["reach_80_s_max"] / siad["reach_80_s"]).max())
    # What the missing starts could do: one start 3 standard deviations above the mean (this
    # run's spread) would make max / mean 1 + 3σ/mean.
    far = float((1 + 3 * siad["reach_95_s_std"] / siad["reach_95_s"]).max())
    return [
        check("SIAD(20): a strong outlier at 95 %: the largest max / mean over buffers",
              f"larger maximum at 95 % (an outlier: max > {OUTLIER_FACTOR:g} × mean)", "Sec. 4.5.2, L2680", top95,
              Claim("≥", OUTLIER_FACTOR), shown=f"{top95:.2f} (per buffer: {_ratios(siad, 95)})",
              why=f"no start took more than {OUTLIER_FACTOR:g}× the mean to 95 %; a start 3 standard deviations "
                  f"of this run's starts above the mean would give {far:.2f}; the full run's 20 starts decide (L2672)",
              needs=("seeds",), movable=max(0.0, far - top95)),
        check("SIAD(20): no outlier at 80 %: the largest max / mean over buffers",
              f"no outliers at 80 % (max ≤ {OUTLIER_FACTOR:g} × mean)", "Sec. 4.5.2, L2680", top80,
              Claim("≤", OUTLIER_FACTOR), shown=f"{top80:.2f} (per buffer: {_ratios(siad, 80)})",
              why=f"a start took more than {OUTLIER_FACTOR:g}× the mean to 80 %"),
    ]


def _ratios(rows, level: int) -> str:
    pairs = zip(rows[f"reach_{level}_s_max"], rows[f"reach_{level}_s"])
    return ", ".join(f"{top / mean:.1f}" if mean else "—" for top, mean in pairs)


def slow_start_extra(summary, scheme: str):
    """Per buffer: the mean time to 95 % without slow start minus with it, and the standard
    error of that difference over the starts (the two means are independent samples)."""
    on, off = _rows(summary, "on", scheme), _rows(summary, "off", scheme)
    merged = on.merge(off, on="buffer_bdp", suffixes=("_on", "_off"))
    merged["extra_s"] = merged["reach_95_s_off"] - merged["reach_95_s_on"]
    merged["extra_se_s"] = ((merged["reach_95_s_std_on"] ** 2 / merged["seeds_on"]
                             + merged["reach_95_s_std_off"] ** 2 / merged["seeds_off"]) ** 0.5)
    return merged[["buffer_bdp", "extra_s", "extra_se_s"]]


def _slow_start_rows(summary) -> list:
    checks, mean_extra = [], {}
    for scheme in SCHEMES:
        extra = slow_start_extra(summary, scheme)
        if extra.empty:
            continue
        mean_extra[scheme] = float(extra["extra_s"].mean())
        siad = scheme.startswith("SIAD")
        # Every buffer holds the claim when its worst one does: SIAD's largest extra, the legacy
        # schemes' smallest; the missing starts could move it by 3 standard errors (L2672).
        worst = extra.loc[extra["extra_s"].idxmax() if siad else extra["extra_s"].idxmin()]
        checks.append(check(
            f"{scheme}: slow start disabled adds "
            + (f"at most {SIAD_SS_EXTRA_MAX_S:g} s" if siad else f"at least {LEGACY_SS_EXTRA_MIN_S:g} s")
            + " to the mean time to 95 %, at every buffer (its " + ("largest" if siad else "smallest") + ") [s]",
            "a few RTTs for SIAD (five, L2686), a couple of seconds for NewReno/Cubic", "Sec. 4.5.2, L2684–L2686",
            float(worst["extra_s"]), Claim("≤", SIAD_SS_EXTRA_MAX_S) if siad else Claim("≥", LEGACY_SS_EXTRA_MIN_S),
            shown=", ".join(f"{r.buffer_bdp:g}·BDP {r.extra_s:+.1f} ± {r.extra_se_s:.1f} s" for r in extra.itertuples()),
            needs=("seeds",), movable=3 * float(worst["extra_se_s"]),
            why=lambda worst=worst: f"{worst['extra_s']:+.1f} ± {worst['extra_se_s']:.1f} s (standard error over the "
                                    f"starts) at {worst['buffer_bdp']:g}·BDP; the full run's 20 starts decide (L2672)"))
    legacy = [mean_extra[s] for s in ("NewReno", "Cubic") if s in mean_extra]
    if "SIAD(20)" in mean_extra and legacy:
        checks.append(every(
            "slow start disabled costs SIAD(20) less than NewReno and Cubic (mean over buffers)",
            "a few RTTs vs a couple of seconds", "Sec. 4.5.2, L2686", int(mean_extra["SIAD(20)"] < min(legacy)), 1,
            unit="cases (" + ", ".join(f"{s} {v:+.1f} s" for s, v in mean_extra.items()) + ")",
            why="SIAD(20) loses as much as a legacy scheme"))
    return checks


def _comparison(summary) -> list:
    return rows(_claims(summary) + _about_rows(summary) + _table_rows(summary))


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    modes = list(dict.fromkeys(summary["slow_start"]))
    fig, axes = plt.subplots(len(modes), 2, figsize=(12, 4.2 * len(modes)), squeeze=False)
    for row, mode in enumerate(modes):
        for col, level in enumerate((95, 80)):
            ax = axes[row][col]
            for i, scheme in enumerate(SCHEMES):
                part = _rows(summary, mode, scheme)
                if part.empty:
                    continue
                mean = part[f"reach_{level}_s"]
                err = [mean - part[f"reach_{level}_s_min"], part[f"reach_{level}_s_max"] - mean]
                ax.errorbar(part["buffer_bdp"] + 0.02 * (i - 2), mean, yerr=err, fmt="-o", ms=3, capsize=3,
                            color=f"C{i}", label=scheme)
            ax.set_title(f"{level} % of the fair share, slow start {mode} (thesis Fig. "
                         f"{'4.32' if mode == 'on' else 'C.14'}, plot only)")
            ax.set_xlabel("buffer (·BDP)")
            ax.set_ylabel("s from the late start: mean, min–max")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
    return save(fig, out_dir / "siad-staggered.png")


def _points(slow_start_on: list, slow_start_off: list, buffers: list) -> list:
    return (expand_grid({"slow_start": ["on"], "scheme": slow_start_on, "buffer_bdp": buffers})
            + expand_grid({"slow_start": ["off"], "scheme": slow_start_off, "buffer_bdp": buffers}))


EXPERIMENT = Experiment(
    name="siad-staggered",
    description="SIAD thesis §4.5.2 Fig. 4.32/C.11/C.14: two flows of one scheme at 20 Mbit/s, the second "
                "starting at 20…39 s: mean/min/max time to 80/95 % of the fair share, with and without slow start",
    base=dumbbell("20Mbps", 1.0, [flow("SIAD(20)", name="first"), flow("SIAD(20)", name="late")],
                  duration_s=DURATION_S),
    grid={},
    points=_points(SCHEMES, SCHEMES, BUFFERS),
    quick_points=_points(["Cubic", "H-TCP", "SIAD(20)"], ["SIAD(20)"], [1.0]),
    seeds=START_SECONDS,
    quick_seeds=QUICK_START_SECONDS,
    seed_in_point=True,
    quick_overrides={"duration": f"{QUICK_DURATION_S:g}s"},
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
