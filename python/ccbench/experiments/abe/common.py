"""What several ABE figures share: the two CoDel and PIE set-ups (ns-2's for the simulation
figures, Linux's for the testbed figures), the single-flow ECN scenario of Figs. 7–10 (its grid keys,
AQM settings and metrics), the gain and delay-increment columns, the comparison checks built on
them, the queueing-delay CDF plot, and a lookup of one grid point in a summary.

Every comparison row is a :class:`ccbench.experiments.checks.Check`; the verdict is decided
from our number and the paper's claim, never written here.
"""

from __future__ import annotations

import copy
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


def monotone_checks(summary, aqm: str, betas: Sequence[float], source: str, rtt_ms: int = 100,
                    numbers: str = "") -> list:
    """Whether the median and p90 grow with beta_ecn at ``rtt_ms``: reported (a shape passes any
    collapse of our numbers; the paper's numbers are checked by the increment rows ``numbers``)."""
    checks = []
    points = [select(summary, aqm, rtt_ms, b) for b in betas]
    if any(p is None for p in points):
        return checks
    for stat in ("median", "p90"):
        values = [float(p[f"{stat}_ms"]) for p in points]
        falls = [(a, b, x, y) for (a, x), (b, y) in zip(zip(betas, values), zip(betas[1:], values[1:])) if y < x]
        shape = ("ours grows at every step" if not falls else
                 "ours falls " + ", ".join(f"from {a:g} to {b:g} by {x - y:.2f} ms" for a, b, x, y in falls))
        checks.append(Check(
            what=f"{aqm}, RTT {rtt_ms} ms: {stat} delay grows with beta_ecn {'/'.join(f'{b:g}' for b in betas)}",
            paper="grows", source=source, ours=None, shown=" / ".join(f"{v:.2f}" for v in values) + " ms",
            reason=f"a shape, no number of the paper ({numbers or 'its numbers are checked above'}): {shape}"))
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

