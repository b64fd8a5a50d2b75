"""fLEDBAT paper, Fig. 4(a) (L320–L324, caption L327): one fLEDBAT flow beside one TCP NewReno
(SACK) flow, both chunk by chunk (L304), ζ swept.

Claims: low priority holds — TCP takes most of the capacity, fLEDBAT's breakdown → 0 % and F →
1/N = 0.5 (L322); efficiency is higher than a single TCP alone, since fLEDBAT fills what TCP
leaves (L322); except for ζ < 10⁻³, where the decrease is too weak and the Reno-like increase
dominates (L324).

Setting: the chunked reference set-up of ``fig3a`` (250 kB chunks, window kept; 10 Mbps, 100 p,
RTT 50 ms + U[0, 1] ms per flow, P = 1500 B, ACKs not delayed, IW 2, τ 25 ms, α 1). Start times
and duration are unstated (notes §4 items 5–6): both flows start at U[0, 1] s, drawn per flow
and seed, and run 300 s; ζ on the notes' grid (§4 item 7). The baseline "TCP alone, same chunk
model" is one more point of the sweep (``arm = "tcp-alone"``, ζ unused, written as 0). Metrics
over [last start, end] (notes §4 item 9; the scenario's ``warmup`` is the last start), read from
the core: the flows' wire rates (``throughput_mbps``, headers included, L306), and the
bottleneck's F over the two flows (``jain_long``), η (``efficiency``, wire bytes departed over
capacity) and breakdown (``lbe_share``, fLEDBAT's share of the wire bytes, L308). The mean
queueing delay for eq. (6)'s balance is the time-averaged backlog over C from the series (the
core reports per-packet sojourn times instead).
"""

from __future__ import annotations

import random
from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.fledbat.common import CAPACITY_MBPS, core_rates_mbps, measured_window, queue_delay_ms
from ccbench.experiments.fledbat.common import chunked_flow, reference_base, start_text
from ccbench.experiments.fledbat.fig3a import verdict
from ccbench.experiments.fledbat.common import fledbat_rate_beside_tcp_mbps

ZETAS = [1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 5.0, 10.0]
QUICK_ZETAS = [1e-4, 1e-3, 0.1, 5.0]
TCP_ALONE, MIXED = "tcp-alone", "fledbat+tcp"
START_SPREAD_S = 1.0
#: Notes' pass rows for ζ ≥ 10⁻³: breakdown ≤ 10 %, F ≤ 0.6, η ≥ η(TCP alone) − 0.01.
PASS_FROM_ZETA, BREAKDOWN_MAX, JAIN_MAX, ETA_SLACK = 1e-3, 0.10, 0.6, 0.01


def start_s(seed: int, flow: str, spread_s: float = START_SPREAD_S) -> float:
    """A start time uniform in [0, spread_s], one draw per flow and seed (the same for every ζ)."""
    return random.Random(f"fledbat-start-{seed}-{flow}").uniform(0.0, spread_s)


def _flows(point: dict) -> list:
    seed = point.get("seed", 1)
    tcp = chunked_flow("tcp", "newreno", start_s(seed, "tcp"))
    if point["arm"] == TCP_ALONE:
        return [tcp]
    return [chunked_flow("fledbat", "fledbat", start_s(seed, "fledbat"), point["zeta"]), tcp]


def measured_from_last_start(flows: list, seed: int, spread_s: float) -> dict:
    """``flows`` (each started at its :func:`start_s` draw) measured from the last start on."""
    last = max(start_s(seed, flow["name"], spread_s) for flow in flows)
    return {"flows": flows, "warmup": start_text(last)}


def _apply(point: dict) -> dict:
    return measured_from_last_start(_flows(point), point.get("seed", 1), START_SPREAD_S)


def _points(zetas) -> list:
    return [{"arm": TCP_ALONE, "zeta": 0.0}] + [{"arm": MIXED, "zeta": z} for z in zetas]


def _metric(result, point: dict) -> dict:
    names = [flow["name"] for flow in result.summary["flows"]]
    rates = dict(zip(names, core_rates_mbps(result, names)))
    link = result.link("bottleneck")
    jain = link["jain_long"]  # null with one flow (TCP alone)
    return {"fledbat_mbps": rates.get("fledbat", 0.0), "tcp_mbps": rates["tcp"], "eta": link["efficiency"],
            "jain": float("nan") if jain is None else jain, "breakdown": link["lbe_share"],
            "queue_ms": queue_delay_ms(result, *measured_window(result))}


def _compare(summary):
    summary = summary.copy()
    alone = summary[summary["arm"] == TCP_ALONE]
    summary["eta_tcp_alone"] = float(alone["eta"].iloc[0]) if len(alone) else float("nan")
    summary["model_fledbat_mbps"] = [
        fledbat_rate_beside_tcp_mbps(z, q) if arm == MIXED else float("nan")
        for arm, z, q in zip(summary["arm"], summary["zeta"], summary["queue_ms"])]
    return summary


def _row(row) -> list:
    zeta, alone = row["zeta"], row["eta_tcp_alone"]
    ours = (f"breakdown {mean_spread(row, 'breakdown', '.1%')}; F {row['jain']:.3f}; "
            f"η {row['eta']:.3f} (TCP alone {alone:.3f}); mean queue {row['queue_ms']:.0f} ms")
    if zeta < PASS_FROM_ZETA:
        return [{"what": f"ζ = {zeta:g} < 10⁻³: breakdown, F, η (report)",
                 "paper": "the Reno-like AI dominates the weak decrease: low priority lost (L324)",
                 "ours": ours, "verdict": "agrees" if row["breakdown"] > BREAKDOWN_MAX else "differs",
                 "reason": ("with so weak a decrease fLEDBAT is another Reno (α = 1 packet per RTT, halving "
                            "on loss) and shares about equally" if row["breakdown"] > BREAKDOWN_MAX
                            else "fLEDBAT still yields")}]
    low = row["breakdown"] <= BREAKDOWN_MAX
    unfair = row["jain"] <= JAIN_MAX
    efficient = row["eta"] >= alone - ETA_SLACK
    ok = low and unfair and efficient
    return [{"what": f"ζ = {zeta:g}: breakdown ≤ 10 %, F ≤ 0.6, η ≥ η(TCP alone) − 0.01",
             "paper": "TCP takes most of the capacity, breakdown → 0 %, F → 0.5, η above TCP alone "
                      "(L322–L324)",
             "ours": ours, "verdict": verdict(ok), "reason": "" if ok else _reason(row, low, unfair, efficient)}]


def _reason(row, low: bool, unfair: bool, efficient: bool) -> str:
    parts = []
    if not low or not unfair:
        model = row["model_fledbat_mbps"]
        balance = ("the queue stays below τ, so only the Reno-like increase acts" if model != model else
                   f"eq. (6)'s per-RTT balance α = ζ·W·(q − τ)/τ at the measured mean queue "
                   f"({row['queue_ms']:.0f} ms) holds W = ατ/(ζ(q − τ)), {model:.2f} Mbps "
                   f"(measured {row['fledbat_mbps']:.2f})" + (
                       ", beyond C: the decrease never binds, so loss halving, NewReno's own rule, sets "
                       "the shares" if model > CAPACITY_MBPS else ""))
        parts.append(f"fLEDBAT keeps {row['breakdown']:.0%} of the traffic: {balance}; the decrease is "
                     f"too weak at ζ = {row['zeta']:g} against NewReno's queue in a 120 ms buffer, whereas "
                     "the paper's ns-2 runs yield from 10⁻³ on")
    if not efficient:
        parts.append("the link idles more than with TCP alone")
    return "; ".join(parts)


def _comparison(summary) -> list:
    summary = _compare(summary) if "eta_tcp_alone" not in summary else summary
    alone = summary[summary["arm"] == TCP_ALONE].iloc[0]
    rows = [{"what": "TCP NewReno alone, chunked: η (the baseline)", "paper": "not given (used as the bar, L322)",
             "ours": mean_spread(alone, "eta", ".3f"), "verdict": "reported",
             "reason": "every chunk end idles the sender about an RTT"}]
    for _, row in summary[summary["arm"] == MIXED].iterrows():
        rows += _row(row)
    return rows


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    summary = _compare(summary) if "eta_tcp_alone" not in summary else summary
    mixed = summary[summary["arm"] == MIXED]
    fig, ax = pyplot().subplots(figsize=(8, 4.5))
    for column, label, color in (("eta", "efficiency η", "C0"), ("jain", "fairness F", "C1"),
                                 ("breakdown", "fLEDBAT breakdown", "C2")):
        ax.errorbar(mixed["zeta"], mixed[column], yerr=mixed[f"{column}_std"], marker="o", ms=4,
                    color=color, label=label, capsize=2)
    ax.axhline(summary["eta_tcp_alone"].iloc[0], color="C0", ls=":", lw=1, label="η, TCP alone")
    ax.axhline(BREAKDOWN_MAX, color="C2", ls="--", lw=1, label="breakdown 10 %")
    ax.axvline(PASS_FROM_ZETA, color="grey", ls="--", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("ζ")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("fLEDBAT Fig. 4(a): one fLEDBAT vs one NewReno, both chunked (250 kB), 10 Mbps, 100 p")
    return save(fig, out_dir / "fledbat-fig4a.png")


EXPERIMENT = Experiment(
    name="fledbat-fig4a",
    description="fLEDBAT Fig. 4(a): one fLEDBAT beside one NewReno (SACK), both chunk-by-chunk (250 kB), "
                "ζ swept; reference setup (10 Mbps, 100 p, RTT 50 ms + U[0, 1] ms, τ 25 ms, α 1)",
    base=reference_base([chunked_flow("fledbat", "fledbat", 0.0, 0.1), chunked_flow("tcp", "newreno")], 300.0),
    grid={},
    points=_points(ZETAS),
    quick_points=_points(QUICK_ZETAS),
    seeds=tuple(range(1, 11)),  # L271: 10 runs per point
    quick_seeds=(1, 2),
    quick_overrides={"duration": "120s"},
    seed_in_point=True,
    apply=_apply,
    metric=_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
