"""ABE paper §IV-B, Fig. 8: CDF of the bottleneck queueing delay for one long NewReno flow with
ECN through CoDel and PIE at 10 Mbps (the runs of Fig. 7), per beta_ecn.

Paper (seed text): CoDel keeps the delay "close to its default target delay parameter of 5 ms for
all ranges of beta_ecn"; PIE's distribution grows a heavier tail with beta_ecn but its 90th
percentile "stays below PIE's default target of 20 ms" for 0.5 <= beta_ecn <= 0.85 (L230). At
RTT 100 ms, beta_ecn 0.95 adds 1 ms / 4 ms (CoDel) and 18 ms / 11 ms (PIE) to the median / 90th
percentile over beta_ecn 0.5; with PIE, 0.7 adds 2 / 3 ms and 0.85 adds 10 / 6 ms (L232).
Pass criteria (notes ``experiments-abe.md`` §3 Fig. 8): CoDel median in [3, 10] ms for every
beta_ecn, PIE p90 < 20 ms for beta_ecn <= 0.85, each increment within ±3 ms or ±50 % (whichever
is larger), PIE increments monotone in beta_ecn.

Delay measure: the core's per-packet sojourn at the bottleneck, from enqueue to the start of the
packet's transmission (dequeue), the point where ns-2's and Linux's CoDel/PIE read it (notes §5
item 10). It leaves out the packet's own transmission time (1500 B at 10 Mbps: 1.2 ms), a
constant that cancels in the increments. The numbers are the core's summary percentiles
(``queue_delay_ms``, nearest rank) over the window [warmup, duration]; the CDF curves are drawn
from the per-packet sojourns of the same window (``output.sojourn_samples``), as quantiles
averaged over seeds. Including the warm-up (slow start) moves median and p90 by < 0.2 ms.

Settings for [MISSING] items (notes §5): ns-2 "Linux TCP" is modelled as SACK on, delayed ACKs
off, IW 3 (the NewReno simulation default of the notes); 1500-byte packets (1448 B payload +
52 B headers; L312's "83 packets" BDP); 300 s runs with 20 s warm-up and 5 seeds (notes §7, A6).
The AQMs are those of Fig. 7 (``fig7.AQM_PARAMS``): CoDel with the Linux defaults, PIE as the
Linux 3.17 ``sch_pie`` with the 10 % ECN-drop rule off (L203–L207); 1000-packet buffer (L205).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Optional, Sequence, Tuple

from ccbench.experiments.abe.fig7 import _apply as apply_point  # the same grid keys as Fig. 7
from ccbench.experiments.base import Experiment, mean_spread
from ccbench.models import aimd_utilization

BETA_ECN = [0.5, 0.7, 0.85, 0.95]
RTTS_MS = [100, 200, 400]
#: The beta_ecn the increments of L232 are taken against (NewReno's default).
REFERENCE_BETA = 0.5
#: L232, RTT 100 ms: (extra median, extra 90th percentile) in ms over beta_ecn 0.5.
PAPER_EXTRA_100MS = {
    ("codel", 0.95): (1, 4),
    ("pie", 0.7): (2, 3), ("pie", 0.85): (10, 6), ("pie", 0.95): (18, 11),
}
#: Notes §3 Fig. 8/10: an increment agrees within ±3 ms or ±50 %, whichever is larger.
INCREMENT_ABS_MS = 3.0
INCREMENT_REL = 0.5
#: Notes §3 Fig. 8: CoDel's median sojourn is "close to its 5 ms target" (L230) read as [3, 10] ms.
CODEL_MEDIAN_RANGE_MS = (3.0, 10.0)
#: L230: PIE's 90th percentile stays below its 20 ms target for beta_ecn up to 0.85.
PIE_P90_LIMIT_MS = 20.0
PIE_P90_BETA_MAX = 0.85
#: Transmission time of one 1500 B packet at 10 Mbps: what a sojourn measured to the end of
#: transmission would add (used only to explain a difference, never in a verdict).
TX_TIME_MS = 1500 * 8 / 10e6 * 1e3
#: Quantiles recorded per run for the CDF curves (percent).
PERCENTILES = [1.0] + [5.0 * k for k in range(1, 20)] + [99.0]
TARGET_MS = {"codel": 5.0, "pie": 20.0}
#: A check run (3 seeds, 300 s, RTT 100 ms) with PIE's alpha and beta ×8, i.e. without the slow
#: p < 1 % tier: evidence for the reason given when PIE's delays differ; not part of the sweep.
PIE_SLOW_CONTROLLER_CHECK = {100: "; with alpha and beta ×8 a check run gave p90 15.9 / 17.1 / 19.6 ms "
                                   "(how fast the paper's ns-2 PIE reacted is [MISSING], notes §5 item 9)"}
#: Why an increment of L232 differs, when it does (see the report of the investigation).
INCREMENT_REASONS = {
    ("pie", 0.7, "median"): "a tipping point: with 0.7 our queue is non-empty about 63 % of the "
                            "time (40 % with 0.5), so the median lands on the queue's ramp; with "
                            "alpha and beta ×8 the peaks are lower, the queue is non-empty 46 % of "
                            "the time and a check run gave +0.5 ms",
    ("pie", 0.95, "p90"): "our p90 at 0.5 is already 22 ms (the paper's is below 14 ms, since "
                          "0.85 adds 6 ms and stays under 20 ms), so the rise to PIE's ~26 ms "
                          "steady level is smaller; with alpha and beta ×8 a check run gave +6.2 ms",
}


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


def add_increments(summary, reference_beta: float):
    """Columns ``extra_median_ms``/``extra_p90_ms``: the delay added over ``reference_beta`` at
    the same AQM and RTT (differences of the seed means)."""
    summary = summary.copy()
    ref = summary[summary["beta_ecn"] == reference_beta].set_index(["aqm", "rtt_ms"])
    for column in ("median_ms", "p90_ms"):
        base = [ref[column].get((a, r)) for a, r in zip(summary["aqm"], summary["rtt_ms"])]
        summary["extra_" + column] = summary[column] - base
    return summary


def _compare(summary):
    return add_increments(summary, REFERENCE_BETA)


def select(summary, aqm: str, rtt_ms: int, beta_ecn: float):
    """The summary row of one grid point, or None when the grid has no such point."""
    rows = summary[(summary["aqm"] == aqm) & (summary["rtt_ms"] == rtt_ms) & (summary["beta_ecn"] == beta_ecn)]
    return None if rows.empty else rows.iloc[0]


def increment_agrees(ours: float, paper: float) -> bool:
    return abs(ours - paper) <= max(INCREMENT_ABS_MS, INCREMENT_REL * abs(paper))


def increment_rows(summary, paper_table: Mapping[Tuple[str, float], Tuple[float, float]],
                   reference_beta: float, line: str, rtt_ms: int = 100,
                   reasons: Optional[Mapping[Tuple[str, float, str], str]] = None) -> list:
    """One comparison row per paper increment (median and p90) at ``rtt_ms``; ``reasons`` says
    why a given (aqm, beta_ecn, statistic) differs, when it does."""
    reasons = reasons or {}
    rows = []
    for (aqm, beta_ecn), paper_pair in paper_table.items():
        row, ref = select(summary, aqm, rtt_ms, beta_ecn), select(summary, aqm, rtt_ms, reference_beta)
        if row is None or ref is None:
            continue
        for stat, paper in zip(("median", "p90"), paper_pair):
            ours = float(row[f"extra_{stat}_ms"])
            ok = increment_agrees(ours, paper)
            tolerance = max(INCREMENT_ABS_MS, INCREMENT_REL * paper)
            rows.append({
                "what": f"{aqm}, RTT {rtt_ms} ms: extra {stat} delay, beta_ecn {beta_ecn:g} vs {reference_beta:g}",
                "paper": f"+{paper:g} ms ({line})",
                "ours": (f"{ours:+.1f} ms ({mean_spread(ref, f'{stat}_ms', '.2f')} → "
                         f"{mean_spread(row, f'{stat}_ms', '.2f')} ms)"),
                "verdict": "agrees" if ok else "differs",
                "reason": "" if ok else "; ".join(filter(None, [
                    f"{ours - paper:+.1f} ms off, beyond ±{tolerance:g} ms", reasons.get((aqm, beta_ecn, stat))])),
            })
    return rows


def monotone_rows(summary, aqm: str, betas: Sequence[float], line: str, rtt_ms: int = 100) -> list:
    """Whether the median and p90 grow with beta_ecn at ``rtt_ms``."""
    rows = []
    points = [select(summary, aqm, rtt_ms, b) for b in betas]
    if any(p is None for p in points):
        return rows
    for stat in ("median", "p90"):
        values = [float(p[f"{stat}_ms"]) for p in points]
        ok = all(b >= a for a, b in zip(values, values[1:]))
        rows.append({
            "what": f"{aqm}, RTT {rtt_ms} ms: {stat} delay grows with beta_ecn {'/'.join(f'{b:g}' for b in betas)}",
            "paper": f"yes ({line})", "ours": " / ".join(f"{v:.2f}" for v in values) + " ms",
            "verdict": "agrees" if ok else "differs", "reason": "" if ok else "not monotone in beta_ecn",
        })
    return rows


#: CoDel's tail bound in the second reading of L230: twice its 5 ms target.
CODEL_BOUND_MS = 10.0


def _codel_median_rows(summary) -> list:
    low, high = CODEL_MEDIAN_RANGE_MS
    rows = []
    for rtt, df in summary[summary["aqm"] == "codel"].groupby("rtt_ms", sort=True):
        df = df.sort_values("beta_ecn")
        medians = df["median_ms"].tolist()
        ok = all(low <= m <= high for m in medians)
        util = " / ".join(f"{u:.2f}" for u in df["utilization"])
        model = aimd_utilization(REFERENCE_BETA, TARGET_MS["codel"] / rtt)
        rows.append({
            "what": f"codel, RTT {rtt} ms: median delay in [{low:g}, {high:g}] ms for beta_ecn "
                    + "/".join(f"{b:g}" for b in df["beta_ecn"]),
            "paper": "close to the 5 ms target for every beta_ecn (L230; notes' range)",
            "ours": " / ".join(f"{m:.2f}" for m in medians) + " ms",
            "verdict": "agrees" if ok else "differs",
            "reason": "" if ok else (
                "one NewReno flow: after each mark cwnd falls below the BDP and the queue stays "
                f"empty until it grows back (link utilization {util}; eq. (6) with b = 5 ms gives "
                f"{model:.2f} for beta_ecn {REFERENCE_BETA:g}), so most packets meet an empty or "
                "1–2 packet queue; a sojourn counted to the end of transmission would add "
                f"{TX_TIME_MS:.1f} ms"),
        })
        p99 = df["p99_ms"].tolist()
        ok = all(v <= CODEL_BOUND_MS for v in p99)
        rows.append({
            "what": f"codel, RTT {rtt} ms: the delay stays near the target, p99 ≤ {CODEL_BOUND_MS:g} ms "
                    "(twice the target) for every beta_ecn",
            "paper": "CoDel keeps the delay near 5 ms whatever beta_ecn (L230; another reading)",
            "ours": " / ".join(f"{v:.2f}" for v in p99) + " ms",
            "verdict": "agrees" if ok else "differs",
            "reason": "" if ok else "the tail goes beyond twice the target",
        })
    return rows


def _pie_p90_rows(summary) -> list:
    rows = []
    for rtt, df in summary[summary["aqm"] == "pie"].groupby("rtt_ms", sort=True):
        df = df[df["beta_ecn"] <= PIE_P90_BETA_MAX].sort_values("beta_ecn")
        p90 = df["p90_ms"].tolist()
        ok = all(v < PIE_P90_LIMIT_MS for v in p90)
        rows.append({
            "what": f"pie, RTT {rtt} ms: p90 delay < {PIE_P90_LIMIT_MS:g} ms for beta_ecn "
                    + "/".join(f"{b:g}" for b in df["beta_ecn"]),
            "paper": "yes (L230)", "ours": " / ".join(f"{v:.2f}" for v in p90) + " ms",
            "verdict": "agrees" if ok else "differs",
            "reason": "" if ok else (
                "each sawtooth peak overshoots the 20 ms target (p99 "
                + " / ".join(f"{v:.1f}" for v in df["p99_ms"]) + " ms): Linux 3.17 PIE divides "
                "alpha and beta by 8 while p < 1 %, so p rises slowly and the queue climbs well "
                "above the target before the mark that empties it" + PIE_SLOW_CONTROLLER_CHECK.get(rtt, "")),
        })
    return rows


def _comparison(summary) -> list:
    summary = _compare(summary) if "extra_median_ms" not in summary else summary
    rows = _codel_median_rows(summary) + _pie_p90_rows(summary)
    rows += increment_rows(summary, PAPER_EXTRA_100MS, REFERENCE_BETA, "L232", reasons=INCREMENT_REASONS)
    rows += monotone_rows(summary, "pie", BETA_ECN, "L230, L232")
    return rows


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


def _figure(summary, out_dir: Path) -> Path:
    return cdf_figure(summary, out_dir / "abe-fig8.png",
                      "ABE Fig. 8: queueing delay, one NewReno flow with ECN, 10 Mbps", RTTS_MS)


EXPERIMENT = Experiment(
    name="abe-fig8",
    description="ABE Fig. 8: queueing-delay CDF of one NewReno flow with ECN through CoDel and "
                "PIE (10 Mbps, RTT 100/200/400 ms) per beta_ecn; increments over beta_ecn 0.5",
    base={
        "duration": "300s",
        "warmup": "20s",
        "seed": 1,
        "bottleneck": {"rate": "10Mbps", "rtt": "100ms", "buffer": "1000p", "aqm": "codel", "ecn": True},
        "flows": [{"cca": "newreno", "ecn": True, "cc": {"beta_ecn": 0.5}, "sack": True,
                   "delayed_ack": False, "initial_window": 3}],
        "output": {"sojourn_samples": True},
    },
    grid={"aqm": ["codel", "pie"], "rtt_ms": RTTS_MS, "beta_ecn": BETA_ECN},
    quick_grid={"aqm": ["codel", "pie"], "rtt_ms": [100], "beta_ecn": BETA_ECN},
    seeds=(1, 2, 3, 4, 5),
    quick_seeds=(1, 2),
    quick_overrides={"duration": "150s"},
    apply=apply_point,
    metric=delay_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
