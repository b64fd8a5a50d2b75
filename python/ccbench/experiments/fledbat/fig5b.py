"""fLEDBAT paper, Fig. 5(b) (L342–L344): N = 2..10 fLEDBAT flows, chunk by chunk (L304), the k-th
arriving at t_k = 10·k s, ζ ∈ {0.01, 0.1, 0.2, 0.5}; Jain's F after the last arrival.

Claims: for every N some ζ keeps all flows fair, and any ζ of the range works for the flow counts
typical of BitTorrent (L344); the same ζ values are efficient for N > 2 as for N = 2 (L344, not
shown). The notes' pass rows: for each N, max over ζ of F ≥ 0.95; F ≥ 0.9 for ζ ∈ {0.1, 0.2} and
N ≤ 6; η ≥ 0.9.

Setting: the chunked reference set-up of ``fig3a`` (250 kB chunks, window kept; 10 Mbps, 100 p,
RTT 50 ms + U[0, 1] ms per flow, IW 2, τ 25 ms, α 1). Flow k = 0..N−1 starts at 10·k s (the index
origin is unstated; the notes' suggestion k = 0 puts the first flow at 0 s, §4 item 6); the run
lasts the last arrival + 200 s (notes §4 item 5), measured over [last arrival, end] (L344; the
scenario's ``warmup``), read from the core: F and η are the bottleneck's ``jain_long`` and
``efficiency`` (wire bytes, L306), the least share from the flows' ``throughput_mbps``. With
B = 100 packets the fluid Q* = Cτ + Nατ/(ζR) passes the buffer for ζ = 0.01 at every N (losses,
not the delay decrease, then set the shares; notes Fig. 5(b) caution).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.fledbat.common import (
    BUFFER_PACKETS,
    chunked_flow,
    core_rates_mbps,
    queue_equilibrium_packets,
    reference_base,
)

ZETAS = [0.01, 0.1, 0.2, 0.5]
FLOW_COUNTS = list(range(2, 11))
QUICK_FLOW_COUNTS = [2, 4, 6]
GAP_S = 10.0
MEASURE_S, QUICK_MEASURE_S = 200.0, 60.0
#: Notes' pass rows.
BEST_JAIN_MIN, MID_ZETAS, MID_JAIN_MIN, MID_MAX_FLOWS, ETA_MIN = 0.95, (0.1, 0.2), 0.9, 6, 0.9


def last_arrival_s(n: int) -> float:
    return GAP_S * (n - 1)


def names(n: int) -> list:
    return [f"f{k}" for k in range(n)]


def _apply(point: dict) -> dict:
    n = int(point["flows_n"])
    flows = [chunked_flow(name, "fledbat", GAP_S * k, point["zeta"]) for k, name in enumerate(names(n))]
    return {"flows": flows, "duration": f"{last_arrival_s(n) + point['measure_s']:g}s",
            "warmup": f"{last_arrival_s(n):g}s"}


def _metric(result, point: dict) -> dict:
    rates = core_rates_mbps(result, names(int(point["flows_n"])))
    link = result.link("bottleneck")
    return {"jain": link["jain_long"], "eta": link["efficiency"], "least_share": min(rates) / sum(rates),
            "drops": link["drops"]}  # in the measured window


def _compare(summary):
    summary = summary.copy()
    summary["q_star_packets"] = [queue_equilibrium_packets(z, n=int(n))
                                 for z, n in zip(summary["zeta"], summary["flows_n"])]
    return summary


FIG = "Fig. 5(b), Sec. 8.5"
MECHANISM = "chunk restarts favour the larger windows (fledbat-fig5a's comparison gives the mechanism)"


def _per_n_rows(summary) -> list:
    rows = []
    for n, part in summary.groupby("flows_n"):
        best = part.loc[part["jain"].idxmax()]
        all_f = ", ".join(f"ζ {z:g}: {f:.3f}" for z, f in zip(part["zeta"], part["jain"]))
        check = Check(f"N = {int(n)}: max over ζ of Jain's F (bound: the notes' ≥ 0.95)",
                      "some ζ keeps all flows fair for every N", f"{FIG}, L344", float(best["jain"]),
                      Claim("≥", BEST_JAIN_MIN),
                      shown=f"best {mean_spread(best, 'jain', '.3f')} at ζ = {best['zeta']:g} ({all_f})")
        check.reason = "" if check.verdict == "agrees" else (
            f"no ζ of the four is fair at N = {int(n)}: the smallest flow holds {best['least_share']:.1%} at best; "
            + MECHANISM)
        rows.append(check.row())
    return rows


def _mid_row(summary) -> dict:
    part = summary[summary["zeta"].isin(MID_ZETAS) & (summary["flows_n"] <= MID_MAX_FLOWS)]
    worst = part.loc[part["jain"].idxmin()]
    check = Check("ζ ∈ {0.1, 0.2}, N ≤ 6: lowest Jain's F (bound: the notes' ≥ 0.9)",
                  "any ζ of the range is fine for BitTorrent-like flow counts", f"{FIG}, L344", float(worst["jain"]),
                  Claim("≥", MID_JAIN_MIN),
                  shown=f"lowest {mean_spread(worst, 'jain', '.3f')} at N = {int(worst['flows_n'])}, ζ = {worst['zeta']:g}")
    check.reason = "" if check.verdict == "agrees" else (
        f"the lowest is at N = {int(worst['flows_n'])}: its smallest flow holds {worst['least_share']:.1%} of the "
        "traffic; " + MECHANISM)
    return check.row()


def _eta_row(summary) -> dict:
    worst = summary.loc[summary["eta"].idxmin()]
    check = Check("lowest η over (N, ζ) (bound: the notes' ≥ 0.9)", "efficient for N > 2 too (not shown)",
                  f"{FIG}, L344", float(worst["eta"]), Claim("≥", ETA_MIN),
                  shown=f"lowest {mean_spread(worst, 'eta', '.3f')} at N = {int(worst['flows_n'])}, ζ = {worst['zeta']:g}")
    check.reason = "" if check.verdict == "agrees" else (
        f"with {int(worst['flows_n'])} flows the chunk pauses leave the link idle at times (η {worst['eta']:.3f})")
    return check.row()


def _overflow_row(summary) -> dict:
    over = summary[summary["q_star_packets"] > BUFFER_PACKETS]
    pairs = sorted({(float(z), int(n)) for z, n in zip(over["zeta"], over["flows_n"])})
    return Check("points where the fluid Q* exceeds the buffer (losses, not delay, set the shares)",
                 "not discussed (notes Fig. 5(b) caution)", f"{FIG}, eq. (10)", float(len(pairs)), None,
                 shown=(f"{len(pairs)} of {len(summary)} points: " +
                        ", ".join(f"ζ {z:g} N {n}" for z, n in pairs)) if pairs else "none",
                 reason="reported: the paper does not discuss it").row()


def _comparison(summary) -> list:
    summary = _compare(summary) if "q_star_packets" not in summary else summary
    return _per_n_rows(summary) + [_mid_row(summary), _eta_row(summary), _overflow_row(summary)]


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    fig, ax = pyplot().subplots(figsize=(8, 4.5))
    for i, (zeta, part) in enumerate(summary.groupby("zeta")):
        ax.errorbar(part["flows_n"], part["jain"], yerr=part["jain_std"], marker="o", ms=4, color=f"C{i}",
                    label=f"ζ = {zeta:g}", capsize=2)
    ax.axhline(BEST_JAIN_MIN, color="k", ls="--", lw=1, label="F = 0.95")
    ax.axhline(MID_JAIN_MIN, color="grey", ls=":", lw=1, label="F = 0.9")
    ax.set_xlabel("number of fLEDBAT flows N (flow k arrives at 10·k s)")
    ax.set_ylabel("Jain's F after the last arrival")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title("fLEDBAT Fig. 5(b): chunked fLEDBAT flows, 10 Mbps, 100 p, RTT 50 ms, τ 25 ms")
    return save(fig, out_dir / "fledbat-fig5b.png")


EXPERIMENT = Experiment(
    name="fledbat-fig5b",
    description="fLEDBAT Fig. 5(b): N = 2..10 chunk-by-chunk (250 kB) fLEDBAT flows arriving 10 s apart, "
                "ζ ∈ {0.01, 0.1, 0.2, 0.5}, measured for 200 s after the last arrival; reference setup",
    base=reference_base([chunked_flow("f0", "fledbat", 0.0, 0.1)], 300.0),
    grid={"flows_n": FLOW_COUNTS, "zeta": ZETAS, "measure_s": [MEASURE_S]},
    quick_grid={"flows_n": QUICK_FLOW_COUNTS, "zeta": ZETAS, "measure_s": [QUICK_MEASURE_S]},
    seeds=tuple(range(1, 11)),  # L271: 10 runs per point
    quick_seeds=(1, 2),
    apply=_apply,
    metric=_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
