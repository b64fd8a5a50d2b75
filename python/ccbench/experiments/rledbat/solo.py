"""Shared parts of the rLEDBAT "alone" experiments (Figs. 6, 7, 9, 22; paper §6.2, §8).

One greedy download on the paper's dumbbell (``common.base``), in one of three arms:

* ``rledbat``: a CUBIC sender whose receiver runs rLEDBAT (L346);
* ``rledbat-enhanced``: the same with the modified target min(T, base RTT) (§7.1, L500);
* ``ledbat++``: sender-side LEDBAT++ with a plain receiver, the paper's point of comparison
  ([6], L121–L123; the paper quotes it, we run it beside).

The rate is the core's goodput of the flow (received payload, L313) over the whole run including
start-up (L315: ``warmup`` is 0); utilisation is that rate over C, and ``of_best`` over the best
goodput 0.9547·C (notes §2: the paper does not say which, so both are reported).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ccbench.experiments.base import mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import common

RLEDBAT, ENHANCED, LEDBATPP = "rledbat", "rledbat-enhanced", "ledbat++"
ARM_LABELS = {RLEDBAT: "rLEDBAT (CUBIC sender)", ENHANCED: "enhanced rLEDBAT, target min(T, RTT_b)",
              LEDBATPP: "sender LEDBAT++"}
FLOW = "download"


def solo_flow(arm: str, seed: int) -> dict:
    """The one download of ``arm``, started at its per-seed jitter (notes §1.5)."""
    start = common.start_jitter_s(seed, FLOW)
    if arm == LEDBATPP:
        return common.tcp_flow(FLOW, "ledbat++", start)
    if arm in (RLEDBAT, ENHANCED):
        return common.rledbat_flow(FLOW, start, enhanced=arm == ENHANCED)
    raise ValueError(f"arm: unknown solo arm {arm!r} (known: {RLEDBAT}, {ENHANCED}, {LEDBATPP})")


def solo_apply(point: Mapping) -> dict:
    """Overrides of one solo point: its flow, and its RTT and/or capacity when the point has them."""
    changes = {"flows": [solo_flow(point.get("arm", RLEDBAT), point.get("seed", 1))]}
    if "rtt_ms" in point:
        changes["bottleneck.rtt"] = f"{point['rtt_ms']:g}ms"
    if "capacity_mbps" in point:
        changes["bottleneck.rate"] = f"{point['capacity_mbps']:g}Mbps"
    return changes


def late_rate_mbps(result, name: str = FLOW) -> float:
    """The flow's mean goodput over the run's second half, from the core's per-bin series (equal
    bins): where a run's rate heads once start-up is behind it, so the drift between it and the
    whole-run rate says how far a longer run could move the latter."""
    duration = float(result.summary["scenario"]["duration_s"])
    series = result.flows
    late = series[(series["t_s"] > duration / 2) & (series["flow"] == name)]
    return float(late["goodput_mbps"].mean()) if not late.empty else float("nan")


def solo_metric(result, point: dict) -> dict:
    """Goodput (Mbps), its share of C and of the best goodput, and the share over the run's second
    half (``utilisation_late``); the link rate comes from the core."""
    (rate,) = common.flow_rates_mbps(result, [FLOW])
    capacity = float(result.link("bottleneck")["rate_mbps"])
    flow = result.flow(FLOW)
    return {"goodput_mbps": rate, "utilisation": rate / capacity,
            "utilisation_late": late_rate_mbps(result) / capacity,
            "of_best": rate / (capacity * common.GOODPUT_FRACTION),
            "retransmits": float(flow["retransmits"]), "timeouts": float(flow["timeouts"])}


def solo_base(buffer: str) -> dict:
    """The dumbbell with one rLEDBAT download (points replace the flow, RTT and rate)."""
    return common.base(buffer=buffer, flows=[solo_flow(RLEDBAT, 1)])


def by_arm(summary, arm: str, x: str = "rtt_ms"):
    """The summary rows of one arm, indexed by ``x``."""
    return summary[summary["arm"] == arm].set_index(x).sort_index()


def cells(values: Mapping, fmt: str = ".3f", unit: str = "ms") -> str:
    """``"20 ms: 0.914; 100 ms: 0.877"`` from ``{x: value}``."""
    return "; ".join(f"{x:g} {unit}: {v:{fmt}}" for x, v in values.items())


def band_checks(rows, what: str, paper: str, source: str, band, below_ms: float = float("inf"),
                column: str = "utilisation", reason: str = "") -> list:
    """One check per RTT below ``below_ms``: ``column`` in ``band``; ``reason`` (formatted with the
    row's columns and ``rtt_ms``) for a row out of it."""
    out = []
    for x, r in rows[rows.index < below_ms].iterrows():
        best = f" ({r['of_best']:.3f} of best goodput)" if column == "utilisation" and "of_best" in r else ""
        check = Check(f"{what} at {x:g} ms", paper, source, float(r[column]), Claim("in", tuple(band)),
                      shown=mean_spread(r, column) + best, of=(column,))
        if check.verdict != "agrees" and reason:
            check.reason = reason.format(rtt_ms=x, **r)
        out.append(check.row())
    return out


def arms_figure(summary, out_path, arms: Sequence[str], title: str, bands=None, extra=None,
                x: str = "rtt_ms", xlabel: str = "base RTT (ms)"):
    """Utilisation (mean ± std over seeds) of each arm along ``x``; ``extra`` adds
    ``(xs, ys, label)`` reference curves (a model bound)."""
    from ccbench.plot import pyplot, save

    fig, ax = pyplot().subplots(figsize=(7, 4.2))
    for arm in arms:
        rows = by_arm(summary, arm, x)
        ax.errorbar(rows.index, rows["utilisation"], yerr=rows.get("utilisation_std"), marker="o", ms=4,
                    capsize=3, label=ARM_LABELS[arm])
    for xs, ys, label in extra or ():
        ax.plot(xs, ys, "k--", lw=1, label=label)
    for low, high, label in bands or ():
        ax.axhspan(low, high, color="C7", alpha=0.15, label=label)
    ax.axhline(common.GOODPUT_FRACTION, color="C7", lw=0.8, ls=":", label="best goodput 0.955·C")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("rate / C (whole run)")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, out_path)
