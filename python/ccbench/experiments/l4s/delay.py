"""L4S: queueing delay in DualPI2's two queues, loss and utilisation, under growing loads.

Scalable (Prague) and Classic (CUBIC with ECN) long-running flows in equal numbers (1+1, 2+2,
5+5), and a dynamic load (one CUBIC flow throughout, four Prague flows arriving 5 s apart and
each staying 20 s), over DualPI2 at 40 and 120 Mbps, 20 ms base RTT. The DualPI2 paper's Abstract
(arXiv 2209.01078) reports, on a testbed of residential broadband equipment, L4S queue delay
"median 100–300 µs" and "99th percentile below 2 ms even under highly dynamic workloads", with
"zero congestion loss and close to full utilization"; RFC 9332 App. A.1 sets the Classic queue's
target to 15 ms.

Checks, per load: the Scalable flows' median queueing delay (each flow's, averaged over them) at
most 300 µs (the top of the paper's range: a simulated link without the equipment's own delays
may well sit below it) and their 99th percentile below 2 ms (the worst flow's); the Classic flows' mean queueing delay
near the 15 ms target (±20 % agrees, ±40 % within tolerance: ours, the RFC gives the target, not
a band); every packet through the bottleneck undropped ("zero congestion loss"); utilisation at least
95 % (our reading of "close to full").
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Dict, List

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.l4s import common
from ccbench.experiments.l4s.common import classic_flow, dumbbell, flows_named, scalable_flow

#: Load → its flows.
LOADS: Dict[str, List[Dict[str, Any]]] = {
    "1+1": [scalable_flow(), classic_flow()],
    "2+2": [scalable_flow(count=2), classic_flow(count=2)],
    "5+5": [scalable_flow(count=5), classic_flow(count=5)],
    "dynamic": [classic_flow(), *[scalable_flow(name=f"l4s-{k}", start=f"{15 + 5 * k}s", stop=f"{35 + 5 * k}s")
                                  for k in range(4)]],
}
RATES_MBPS = [40, 120]
L_MEDIAN_MAX_MS = 0.3
L_P99_MAX_MS = 2.0
UTILIZATION_MIN = 0.95


def _apply(point: Dict[str, Any]) -> Dict[str, Any]:
    return {"bottleneck.rate": f"{point['rate_mbps']}Mbps", "flows": LOADS[point["load"]]}


def _seconds(text: str) -> float:
    return float(text.rstrip("s"))


#: The measurement window (the quick variant keeps it: the arriving flows need all of it).
WINDOW_S = (_seconds(common.WARMUP), _seconds(common.DURATION))


def _window_share(flow: Dict[str, Any]) -> float:
    """The part of the measurement window a flow of LOADS is active in: its goodput is measured
    over that part only, so a sum over flows arriving and leaving weighs each by it."""
    start = max(_seconds(flow.get("start", "0s")), WINDOW_S[0])
    stop = min(_seconds(flow.get("stop", f"{WINDOW_S[1]}s")), WINDOW_S[1])
    return max(stop - start, 0.0) / (WINDOW_S[1] - WINDOW_S[0])


def _window_mbps(result, specs: List[Dict[str, Any]], prefix: str) -> float:
    """Goodput of the flows called ``prefix…`` averaged over the whole measurement window."""
    shares = {spec["name"]: _window_share(spec) for spec in specs}
    return float(sum(f["goodput_mbps"] * shares.get(f["name"], shares.get(f["name"].rsplit("-", 1)[0], 1.0))
                     for f in flows_named(result, prefix)))


def _metric(result, point) -> dict:
    scalable, classic = flows_named(result, "l4s"), flows_named(result, "classic")
    specs = LOADS[point["load"]]
    return {
        "l_p50_ms": common.delay(scalable, "p50", statistics.mean),
        "l_p99_ms": common.delay(scalable, "p99"),
        "c_mean_ms": common.delay(classic, "mean", statistics.mean),
        "c_p99_ms": common.delay(classic, "p99"),
        "scalable_mbps": _window_mbps(result, specs, "l4s"),
        "classic_mbps": _window_mbps(result, specs, "classic"),
        **common.bottleneck_numbers(result),
    }


def _p99_check(row, where: str) -> Check:
    return common.bound_check(f"L queue delay, 99th percentile (worst Scalable flow), {where}",
                              "below 2 ms even under highly dynamic workloads", common.DUALQ_PAPER,
                              float(row["l_p99_ms"]), "≤", L_P99_MAX_MS, mean_spread(row, "l_p99_ms", ".3f", "ms"))


def _against_steady(summary, row, metric: str) -> str:
    """The same number under the steady 1+1 load at this rate: what the heavier or arriving load
    changed."""
    steady = summary[(summary["load"] == "1+1") & (summary["rate_mbps"] == row["rate_mbps"])]
    if row["load"] == "1+1" or not len(steady):
        return f"the 1+1 load itself, at {row['rate_mbps']:g} Mbps"
    return f"{row[metric]:.3g} under the {row['load']} load against {steady[metric].iloc[0]:.3g} with 1+1 flows"


def _checks(summary) -> list:
    checks = []
    for _, row in summary.sort_values(["rate_mbps", "load"]).iterrows():
        where = f"{row['load']} flows, {row['rate_mbps']:g} Mbps"
        rows = [
            Check(f"L queue delay, median (mean over the Scalable flows), {where}", "median 100–300 µs", common.DUALQ_PAPER,
                  float(row["l_p50_ms"]), Claim("≤", L_MEDIAN_MAX_MS), shown=mean_spread(row, "l_p50_ms", ".3f", "ms")),
            _p99_check(row, where),
            Check(f"C queue delay, mean over the Classic flows, {where}", f"target {common.CLASSIC_TARGET_MS:g} ms",
                  common.RFC9332_TARGET, float(row["c_mean_ms"]),
                  Claim("≈", common.CLASSIC_TARGET_MS, agree=0.2, within=0.4),
                  shown=mean_spread(row, "c_mean_ms", ".2f", "ms"), needs=("seeds", "duration")),
            Check(f"share of the bottleneck's packets not dropped, {where}", "zero congestion loss",
                  common.DUALQ_PAPER, float(row["undropped"]), Claim("≥", 1.0),
                  shown=f"{row['undropped']:.6f} ({row['drops']:.1f} dropped)"),
            Check(f"utilisation, {where}", "close to full utilization", common.DUALQ_PAPER, float(row["utilization"]),
                  Claim("≥", UTILIZATION_MIN), shown=mean_spread(row, "utilization", ".3f")),
        ]
        metrics = ["l_p50_ms", "l_p99_ms", "c_mean_ms", "undropped", "utilization"]
        for check, metric in zip(rows, metrics):
            if check.verdict not in ("agrees", "reported"):
                check.reason = _against_steady(summary, row, metric)
        checks += rows
    return checks


def _comparison(summary) -> list:
    return [c.row() for c in _checks(summary)]


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    rates = sorted(set(summary["rate_mbps"]))
    fig, axes = plt.subplots(1, len(rates), figsize=(5 * len(rates), 4), sharey=True, squeeze=False)
    loads = list(LOADS)
    for ax, rate in zip(axes[0], rates):
        df = summary[summary["rate_mbps"] == rate].set_index("load").reindex(loads)
        x = range(len(loads))
        ax.bar([i - 0.27 for i in x], df["l_p50_ms"], 0.27, label="L median")
        ax.bar(list(x), df["l_p99_ms"], 0.27, label="L p99")
        ax.bar([i + 0.27 for i in x], df["c_mean_ms"], 0.27, label="C mean")
        ax.axhline(L_P99_MAX_MS, color="C1", ls="--", lw=0.8, label="paper: L p99 < 2 ms")
        ax.axhline(common.CLASSIC_TARGET_MS, color="C2", ls="--", lw=0.8, label="C target 15 ms")
        ax.set_yscale("log")
        ax.set_xticks(list(x), loads)
        ax.set_title(f"DualPI2, {rate:g} Mbps, 20 ms")
        ax.set_xlabel("Scalable + Classic flows")
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize="small")
    axes[0][0].set_ylabel("queueing delay (ms)")
    return save(fig, out_dir / "l4s-delay.png")


EXPERIMENT = Experiment(
    name="l4s-delay",
    description="L4S: DualPI2's L and C queue delays, loss and utilisation with 1+1, 2+2, 5+5 and arriving "
                "Prague flows beside CUBIC (40 and 120 Mbps, 20 ms)",
    base=dumbbell([scalable_flow(), classic_flow()]),
    grid={"load": list(LOADS), "rate_mbps": RATES_MBPS},
    quick_grid={"load": ["1+1", "dynamic"], "rate_mbps": [40]},
    seeds=(1, 2, 3),
    quick_seeds=(1,),

    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
