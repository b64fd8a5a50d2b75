"""What several ABE figures share: the two CoDel and PIE set-ups (ns-2's for the simulation
figures, Linux's for the testbed figures), the single-flow ECN scenario of Figs. 7–10 (its grid keys,
AQM settings and metrics), the gain and delay-increment columns, the comparison checks built on
them, the queueing-delay CDF plot, and a lookup of one grid point in a summary.

Every comparison row is a :class:`ccbench.experiments.checks.Check`; the verdict is decided
from our number and the paper's claim, never written here.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Mapping, Optional, Sequence, Tuple

from ccbench.experiments.base import mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.models import aqm_utilization

#: PIE of the testbed figures (3, 5, 6, 11–15; L380): Linux 3.17.4 ``sch_pie`` on the router
#: (L203, L390), with the 10 % ECN-drop rule off (L207, L411).
PIE_LINUX_3_17 = {"profile": "linux-3.17", "ecn_drop_above": 1.0}
#: PIE of the simulation figures (2, 4, 7–10, 16–19): every simulation ran on ns-2.35 (L376) with
#: "the ns-2 code that is publicly available" for PIE (L203), i.e. ns-2's ``pie.cc``
#: (``profile = "ns2"``: target 20 ms, tupdate 30 ms, alpha 0.125, beta 1.25, burst 100 ms, packet
#: mode, L203), with the 10 % ECN-drop rule off (``mark_p_`` unused) as in every PIE run but
#: Fig. 19(b) (L207, L411).
PIE_NS2 = {"profile": "ns2", "ecn_drop_above": 1.0}
#: CoDel of the simulation figures (2, 4, 7–10, 16–19): ns-2's ``codel.cc`` ("the ns-2 code that
#: is publicly available", L203; ns-2.35, L376), ``profile = "ns2"``: Pollere's revised file, with
#: its count carry-over (``count - 2`` within 8 intervals) and early re-entry (after
#: interval/sqrt(count)), ``maxpacket_`` for the MTU; target 5 ms and interval 100 ms (L203, as
#: ``ns-default.tcl``). Stock ns-2 CoDel never marks; the paper's did (its figures use ECN), so the
#: core marks where that code drops (crates/aqm/src/codel/ns2.rs).
CODEL_NS2 = {"profile": "ns2"}
#: The AQMs of the testbed figures: Linux ``sch_codel`` with its defaults (5 ms, 100 ms; L203),
#: Linux 3.17's PIE.
TESTBED_AQM_PARAMS = {"codel": {}, "pie": PIE_LINUX_3_17}
#: The AQMs of the ns-2 figures: ns-2's CoDel and ns-2's PIE.
NS2_AQM_PARAMS = {"codel": CODEL_NS2, "pie": PIE_NS2}
#: The queueing delay each AQM steers to (CoDel target 5 ms; PIE target 20 ms, L203).
TARGET_MS = {"codel": 5.0, "pie": 20.0}
#: Transmission time of one 1500 B packet at 10 Mbps: what a sojourn measured to the end of
#: transmission would add (used only to explain a difference, never in a verdict).
TX_TIME_MS = 1500 * 8 / 10e6 * 1e3
#: Quantiles recorded per run for the CDF curves (percent).
PERCENTILES = [1.0] + [5.0 * k for k in range(1, 20)] + [99.0]
#: Notes §3 Figs. 8/10: a delay increment is within tolerance within ±3 ms or ±50 %, whichever
#: is larger; it agrees within ±50 % (the relative part alone: the 3 ms floor is wider than the
#: paper's smallest increments, 1 ms, and would pass an increment of zero).
INCREMENT_ABS_MS = 3.0
INCREMENT_REL = 0.5
#: The flow of Figs. 7 and 8: ns-2 "Linux TCP" NewReno with ECN, SACK on, delayed ACKs off,
#: IW 3 (notes §5; IW 3 from L304).
NEWRENO_FLOW = {"cca": "newreno", "ecn": True, "cc": {"beta_ecn": 0.5}, "sack": True,
                "delayed_ack": False, "initial_window": 3}
#: The flow of Figs. 9 and 10: Linux 3.17 CUBIC with HyStart (on in Linux, L194), IW 10, SACK on,
#: delayed ACKs off (notes §5).
CUBIC_FLOW = {"cca": "cubic", "ecn": True, "cc": {"beta_ecn": 0.7, "hystart": True},
              "sack": True, "delayed_ack": False, "initial_window": 10}


def bdp_packets(rate_mbps: float, rtt_ms: float, packet_bytes: int = 1500) -> float:
    """The bandwidth-delay product in packets of ``packet_bytes`` on the wire."""
    return rate_mbps * 1e6 * rtt_ms / 1e3 / 8 / packet_bytes


def single_flow_base(flow: Mapping, sojourn_samples: bool) -> dict:
    """The scenario of Figs. 7–10 (ns-2 simulations, L217, L236, L376): one long flow with ECN,
    10 Mbps, 1000-packet buffer (L205), 300 s with 20 s warm-up; the grid sets AQM, RTT and
    beta_ecn (:func:`apply_point`)."""
    return {
        "duration": "300s",
        "warmup": "20s",
        "seed": 1,
        "bottleneck": {"rate": "10Mbps", "rtt": "100ms", "buffer": "1000p", "aqm": "codel", "ecn": True},
        "flows": [copy.deepcopy(dict(flow))],
        "output": {"sojourn_samples": sojourn_samples},
    }


def apply_point(point: dict) -> dict:
    """Grid keys ``aqm``, ``rtt_ms``, ``beta_ecn`` as overrides; the AQMs are ns-2's (L203, L376)."""
    return {
        "bottleneck.aqm": point["aqm"],
        "bottleneck.aqm_params": NS2_AQM_PARAMS[point["aqm"]],
        "bottleneck.rtt": f"{point['rtt_ms']}ms",
        "flows[0].cc.beta_ecn": point["beta_ecn"],
    }


def throughput_metric(result, point: dict) -> dict:
    """Bytes departed (link throughput, headers included) over [warmup, duration], and the
    signals that produced it."""
    link = result.link("bottleneck")
    flow = result.summary["flows"][0]
    return {"throughput_mbps": link["throughput_mbps"], "drops": link["drops"],
            "ecn_marks": link["ecn_marks"], "timeouts": flow["timeouts"]}


def quantile_column(percent: float) -> str:
    """Results column of one CDF quantile: ``q50``, ``q97_5``."""
    return "q" + f"{percent:g}".replace(".", "_")


def delay_metric(result, point: dict) -> dict:
    """The core's delay percentiles and link counters, plus CDF quantiles of the sojourns in the
    measurement window (a percentile of a column; the core gives no CDF)."""
    import numpy as np

    link = result.link("bottleneck")
    delay = link["queue_delay_ms"]
    row = {"median_ms": delay["p50"], "p90_ms": delay["p90"], "p99_ms": delay["p99"],
           "mean_ms": delay["mean"], "utilization": link["utilization"],
           "throughput_mbps": link["throughput_mbps"], "ecn_marks": link["ecn_marks"],
           "drops": link["drops"]}
    sojourn = result.sojourn
    warmup = result.summary["scenario"]["warmup_s"]
    window = sojourn.loc[(sojourn["link"] == "bottleneck") & (sojourn["t_s"] >= warmup), "sojourn_ms"]
    for percent, value in zip(PERCENTILES, np.percentile(window.to_numpy(), PERCENTILES)):
        row[quantile_column(percent)] = float(value)
    return row


def model_gain(aqm: str, rtt_ms: float, beta_ecn: float, reference_beta: float) -> float:
    """Eq. (6) with b = the AQM's target delay and δ = the RTT: utilization gain (%) of
    ``beta_ecn`` over ``reference_beta``."""
    target_s, rtt_s = TARGET_MS[aqm] / 1e3, rtt_ms / 1e3
    return 100 * (aqm_utilization(beta_ecn, target_s, rtt_s) / aqm_utilization(reference_beta, target_s, rtt_s) - 1)


def add_gains(summary, reference_beta: float):
    """Columns ``gain_pct`` (bytes departed over ``reference_beta`` at the same AQM and RTT) and
    ``model_gain_pct`` (eq. (6), :func:`model_gain`)."""
    summary = summary.copy()
    base = summary[summary["beta_ecn"] == reference_beta].set_index(["aqm", "rtt_ms"])["throughput_mbps"]
    reference = [base.get((a, r)) for a, r in zip(summary["aqm"], summary["rtt_ms"])]
    summary["gain_pct"] = 100 * (summary["throughput_mbps"] / reference - 1)
    summary["model_gain_pct"] = [model_gain(a, r, b, reference_beta) for a, r, b in
                                 zip(summary["aqm"], summary["rtt_ms"], summary["beta_ecn"])]
    return summary


def add_increments(summary, reference_beta: float):
    """Columns ``extra_median_ms``/``extra_p90_ms``: the delay added over ``reference_beta`` at
    the same AQM and RTT (differences of the seed means)."""
    summary = summary.copy()
    ref = summary[summary["beta_ecn"] == reference_beta].set_index(["aqm", "rtt_ms"])
    for column in ("median_ms", "p90_ms"):
        base = [ref[column].get((a, r)) for a, r in zip(summary["aqm"], summary["rtt_ms"])]
        summary["extra_" + column] = summary[column] - base
    return summary


def select(summary, aqm: str, rtt_ms: int, beta_ecn: float):
    """The summary row of one grid point, or None when the grid has no such point."""
    rows = summary[(summary["aqm"] == aqm) & (summary["rtt_ms"] == rtt_ms) & (summary["beta_ecn"] == beta_ecn)]
    return None if rows.empty else rows.iloc[0]


def increment_claim(paper: float) -> Claim:
    """The paper's increment (ms): agrees within ±50 %, within tolerance within ±3 ms or ±50 %,
    whichever is larger (notes §3 Figs. 8/10)."""
    return Claim("≈", float(paper), agree=INCREMENT_REL * abs(paper),
                 within=max(INCREMENT_ABS_MS, INCREMENT_REL * abs(paper)), relative=False)


def increment_checks(summary, paper_table: Mapping[Tuple[str, float], Tuple[float, float]],
                     reference_beta: float, source: str, rtt_ms: int = 100,
                     reasons: Optional[Mapping[Tuple[str, float, str], str]] = None) -> list:
    """One check per paper increment (median and p90) at ``rtt_ms``; ``reasons`` (computed from
    this run's data by the caller) says why a given (aqm, beta_ecn, statistic) is off."""
    reasons = reasons or {}
    checks = []
    for (aqm, beta_ecn), paper_pair in paper_table.items():
        row, ref = select(summary, aqm, rtt_ms, beta_ecn), select(summary, aqm, rtt_ms, reference_beta)
        if row is None or ref is None:
            continue
        for stat, paper in zip(("median", "p90"), paper_pair):
            ours = float(row[f"extra_{stat}_ms"])
            check = Check(
                what=f"{aqm}, RTT {rtt_ms} ms: extra {stat} delay, beta_ecn {beta_ecn:g} vs {reference_beta:g}",
                paper=f"+{paper:g} ms", source=source, ours=ours, claim=increment_claim(paper),
                shown=(f"{ours:+.1f} ms ({mean_spread(ref, f'{stat}_ms', '.2f')} → "
                       f"{mean_spread(row, f'{stat}_ms', '.2f')} ms)"))
            if check.verdict != "agrees":
                check.reason = "; ".join(filter(None, [f"{ours - paper:+.1f} ms off the paper's +{paper:g} ms",
                                                       reasons.get((aqm, beta_ecn, stat))]))
            checks.append(check)
    return checks


def step_checks(summary, paper_table: Mapping[Tuple[str, float], Tuple[float, float]], reference_beta: float,
                source: str, rtt_ms: int = 100, whys: Optional[Mapping[Tuple[str, float, str], str]] = None) -> list:
    """The steps between the paper's consecutive increments (L232's +6 then +11 ms is a step of
    +5 ms from 0.85 to 0.95), each held to :func:`increment_claim` like the increments; the step
    from the reference is the increment itself, checked by :func:`increment_checks`, so it is left
    out. The reach of the missing seeds is said from the two points' seed spreads; ``whys`` (by aqm,
upper beta_ecn, statistic; computed by the caller) says why a step is off."""
    checks = []
    for aqm in sorted({a for a, _ in paper_table}):
        betas = sorted(b for a, b in paper_table if a == aqm)
        for low, high in zip(betas, betas[1:]):
            a, b = select(summary, aqm, rtt_ms, low), select(summary, aqm, rtt_ms, high)
            if a is None or b is None:
                continue
            for i, stat in enumerate(("median", "p90")):
                column = f"{stat}_ms"
                paper = paper_table[(aqm, high)][i] - paper_table[(aqm, low)][i]
                ours = float(b[column]) - float(a[column])
                reach = seed_reach(a.get(f"{column}_std"), b.get(f"{column}_std")) if f"{column}_std" in summary else None
                check = Check(f"{aqm}, RTT {rtt_ms} ms: {stat} delay step, beta_ecn {low:g} → {high:g}",
                              f"{paper:+g} ms (+{paper_table[(aqm, high)][i]:g} − +{paper_table[(aqm, low)][i]:g} "
                              f"over {reference_beta:g})", source, ours, increment_claim(paper),
                              shown=f"{ours:+.2f} ms ({float(a[column]):.2f} → {float(b[column]):.2f} ms)",
                              needs=("seeds",) if reach is not None else (), movable=reach, of=(column,))
                if check.verdict != "agrees":
                    check.reason = "; ".join(filter(None, [f"{ours - paper:+.1f} ms off the paper's step of {paper:+g} ms",
                                                           (whys or {}).get((aqm, high, stat))]))
                checks.append(check)
    return checks


def seed_reach(*stds: Optional[float]) -> Optional[float]:
    """How far more seeds could move a difference of seed means: 3 × the seed standard deviations
    of its terms, added in quadrature (None when the run has no spread to say it from)."""
    values = [float(s) for s in stds if s is not None and math.isfinite(float(s))]
    return 3 * math.hypot(*values) if values and len(values) == len(stds) else None


def order_check(what: str, paper: str, source: str, first: float, second: float, *, labels=("", ""),
                unit: str = "", fmt: str = ".3g", slack: float = 0.0, reach: Optional[float] = None,
                why: str = "", of: Tuple[str, ...] = ()) -> Check:
    """The paper's order "``first`` ≥ ``second``" of two of our numbers as a judged check: ours is
    ``first − second``, the claim ≥ 0 (``slack``, in the unit, is a stated noise band that counts as
    within tolerance). ``reach`` is how far the missing seeds could move the difference
    (:func:`seed_reach`); ``why`` the mechanism, said when ours is not ≥ 0."""
    ours = first - second
    signed = fmt if fmt.startswith("+") else "+" + fmt
    check = Check(what, paper, source, ours, Claim("≥", 0.0, within=slack, relative=False),
                  shown=(f"{labels[0]} {first:{fmt}}{unit} vs {labels[1]} {second:{fmt}}{unit}: "
                         f"{ours:{signed}}{unit}").strip(),
                  needs=("seeds",) if reach is not None else (), movable=reach, of=of)
    if check.verdict != "agrees":
        check.reason = f"ours is {'lower' if ours < 0 else 'higher'} by {abs(ours):{signed[1:]}}{unit}" + (f"; {why}" if why else "")
    return check


def trend_check(what: str, paper: str, source: str, xs: Sequence[float], values: Sequence[float], *,
                rising: bool = True, unit: str = "", fmt: str = ".3g", slack: float = 0.0,
                stds: Optional[Sequence[float]] = None, why: str = "", of: Tuple[str, ...] = ()) -> Check:
    """The paper's trend ("grows with", "falls with") over ``xs`` as a judged check: ours is the
    step most against the trend (positive: every step goes the paper's way), the claim ≥ 0;
    ``slack`` a stated noise band (within tolerance); ``stds`` the seed spreads of ``values``, from
    which the reach of the missing seeds at that step is said (:func:`seed_reach`)."""
    steps = [b - a for a, b in zip(values, values[1:])]
    signed = steps if rising else [-s for s in steps]
    worst = min(range(len(signed)), key=signed.__getitem__)
    reach = seed_reach(stds[worst], stds[worst + 1]) if stds is not None else None
    sign = fmt if fmt.startswith("+") else "+" + fmt
    check = Check(what, paper, source, signed[worst], Claim("≥", 0.0, within=slack, relative=False),
                  shown=(" / ".join(f"{x:g}: {v:{fmt}}" for x, v in zip(xs, values)) + f"{unit}; "
                         f"least {'rise' if rising else 'fall'} {xs[worst]:g} → {xs[worst + 1]:g}: {steps[worst]:{sign}}{unit}"),
                  needs=("seeds",) if reach is not None else (), movable=reach, of=of)
    if check.verdict != "agrees":
        against = "falls" if rising else "rises"
        check.reason = (f"ours {against} from {xs[worst]:g} to {xs[worst + 1]:g} by {abs(steps[worst]):{sign[1:]}}{unit}"
                        + (f"; {why}" if why else ""))
    return check


def _std(row, column: str) -> Optional[float]:
    value = row.get(f"{column}_std") if hasattr(row, "get") else None
    return None if value is None else float(value)


def monotone_checks(summary, aqm: str, betas: Sequence[float], source: str, rtt_ms: int = 100,
                    whys: Optional[Mapping[str, str]] = None) -> list:
    """Whether the median and p90 grow with beta_ecn at ``rtt_ms`` (the paper's trend, judged:
    every step ≥ 0; the paper's increments are checked one by one by :func:`increment_checks`).
    ``whys`` (by statistic, computed by the caller) says why a step goes the other way."""
    checks = []
    points = [select(summary, aqm, rtt_ms, b) for b in betas]
    if any(p is None for p in points):
        return checks
    for stat in ("median", "p90"):
        column = f"{stat}_ms"
        checks.append(trend_check(
            f"{aqm}, RTT {rtt_ms} ms: {stat} delay grows with beta_ecn {'/'.join(f'{b:g}' for b in betas)}",
            "grows", source, betas, [float(p[column]) for p in points], unit=" ms", fmt=".2f",
            stds=[_std(p, column) for p in points] if f"{column}_std" in summary else None,
            why=(whys or {}).get(stat, ""), of=(column,)))
    return checks


def cdf_figure(summary, path: Path, title: str, rtts: Sequence[int]) -> Path:
    """Queueing-delay CDFs: one panel per (RTT, AQM), one curve per beta_ecn (seed-averaged
    quantiles of the per-packet sojourns)."""
    from ccbench.plot import pyplot, save

    plt = pyplot()
    aqms = sorted(set(summary["aqm"]))
    rtts = [r for r in rtts if r in set(summary["rtt_ms"])]
    columns = [quantile_column(p) for p in PERCENTILES]
    fig, axes = plt.subplots(len(rtts), len(aqms), figsize=(5 * len(aqms), 3.6 * len(rtts)),
                             squeeze=False, sharey=True)
    for i, rtt in enumerate(rtts):
        for ax, aqm in zip(axes[i], aqms):
            df = summary[(summary["aqm"] == aqm) & (summary["rtt_ms"] == rtt)].sort_values("beta_ecn")
            for k, (_, row) in enumerate(df.iterrows()):
                ax.plot([row[c] for c in columns], [p / 100 for p in PERCENTILES], color=f"C{k}",
                        label=f"beta_ecn {row['beta_ecn']:g}")
            ax.axvline(TARGET_MS[aqm], color="k", ls=":", lw=1, label=f"target {TARGET_MS[aqm]:g} ms")
            ax.set_xlim(left=0)
            ax.set_title(f"{aqm.upper()}, RTT {rtt} ms")
            ax.set_xlabel("queueing delay (ms)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small", loc="lower right")
        axes[i][0].set_ylabel("CDF")
    fig.suptitle(title)
    return save(fig, path)


def gain_figure(summary, path: Path, paper: Mapping[str, Mapping[float, float]], paper_label: str,
                title: str, reference_beta: float) -> Path:
    """Gain over ``reference_beta`` per AQM panel, one curve per RTT, the paper's points as stars."""
    from ccbench.plot import pyplot, save

    plt = pyplot()
    aqms = sorted(set(summary["aqm"]))
    fig, axes = plt.subplots(1, len(aqms), figsize=(5 * len(aqms), 4), sharey=True, squeeze=False)
    for ax, aqm in zip(axes[0], aqms):
        for i, (rtt, df) in enumerate(summary[summary["aqm"] == aqm].groupby("rtt_ms", sort=True)):
            df = df.sort_values("beta_ecn")
            yerr = 100 * df["throughput_mbps_std"] / df["throughput_mbps"] if "throughput_mbps_std" in df else None
            ax.errorbar(df["beta_ecn"], df["gain_pct"], yerr=yerr, fmt="o-", color=f"C{i}", capsize=2,
                        label=f"RTT {rtt} ms")
        points = paper.get(aqm, {})
        if points:
            ax.plot(list(points), list(points.values()), "k*", ms=9, label=paper_label)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_title(title.format(aqm=aqm.upper()))
        ax.set_xlabel("beta_ecn")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    axes[0][0].set_ylabel(f"bytes departed, gain over beta_ecn {reference_beta:g} (%)")
    return save(fig, path)

