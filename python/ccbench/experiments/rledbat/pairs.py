"""Two-flow rLEDBAT figures (Figs. 10–15), shared parts: the flows, the grid points, the metrics.

A point is ``{"arm", "rate_mbps", "rtt_ms", "buffer"}`` (plus ``"seed"``, since every flow's start
is drawn per seed, ``common.start_jitter_s``). The versus-CUBIC figures put one less-than-best-effort
flow named ``lbe`` beside a CUBIC flow named ``cubic``, both starting at 0 s plus their jitter
(L387); ``arm`` says what ``lbe`` is: ``"rledbat"``, a CUBIC sender whose receiver runs rLEDBAT
(L346), or ``"ledbat++"``, the sender-side LEDBAT++ the paper compares with ([6], [11], L319), the
same flow sizes and jitter draw (same name), so the arms differ only in where LEDBAT++ runs.

Rates are the core's ``goodput_mbps`` over the whole run including start-up (L315); shares are of
C and of the best goodput C·1390/1456 (notes §2: the paper's denominator is unstated).
"""

from __future__ import annotations

from typing import Iterable, List, Mapping, Optional, Sequence

from ccbench.experiments.rledbat.common import (
    CAPACITY_MBPS,
    DEEP_BUFFER,
    GOODPUT_FRACTION,
    MSS,
    flow_rates_mbps,
    rledbat_flow,
    start_jitter_s,
    tcp_flow,
)

LBE, CUBIC = "lbe", "cubic"
RLEDBAT, LEDBATPP = "rledbat", "ledbat++"
ARM_LABELS = {RLEDBAT: "rLEDBAT (CUBIC sender)", LEDBATPP: "LEDBAT++ (sender side)"}


def lbe_flow(arm: str, name: str, start_s: float) -> dict:
    """The less-than-best-effort download of ``arm``."""
    if arm == RLEDBAT:
        return rledbat_flow(name, start_s)
    if arm == LEDBATPP:
        return tcp_flow(name, "ledbat++", start_s)
    raise ValueError(f"arm: unknown less-than-best-effort flow {arm!r} (rledbat or ledbat++)")


def versus_cubic_flows(arm: str, seed: int) -> List[dict]:
    """``lbe`` and ``cubic``, both started at 0 s plus their per-seed jitter (L387)."""
    return [lbe_flow(arm, LBE, start_jitter_s(seed, LBE)), tcp_flow(CUBIC, start_s=start_jitter_s(seed, CUBIC))]


def points(arms: Iterable[str], rtts_ms: Iterable[float], rates_mbps: Iterable[float] = (CAPACITY_MBPS,),
           buffer: str = DEEP_BUFFER) -> List[dict]:
    """Every (arm, rate, RTT) combination with one buffer, the arm varying slowest."""
    return [{"arm": arm, "rate_mbps": rate, "rtt_ms": rtt, "buffer": buffer}
            for arm in arms for rate in rates_mbps for rtt in rtts_ms]


def link_overrides(point: Mapping) -> dict:
    return {"bottleneck.rate": f"{point['rate_mbps']:g}Mbps", "bottleneck.rtt": f"{point['rtt_ms']:g}ms",
            "bottleneck.buffer": point["buffer"]}


def versus_cubic_apply(point: dict) -> dict:
    return {**link_overrides(point), "flows": versus_cubic_flows(point["arm"], point.get("seed", 1))}


#: The tail of a run whose rates show where the shares settle, apart from start-up: the last third
#: (the last 100 s of 300 s, the notes' window for Fig. 11).
TAIL_FRACTION = 1 / 3


def tail_rates_mbps(result, names: Sequence[str]) -> List[float]:
    """Each flow's mean goodput over the last third of the run, from the core's per-bin series
    (bins are equal, so the mean of the bins is the rate over the window)."""
    duration = float(result.summary["scenario"]["duration_s"])
    series = result.flows
    tail = series[series["t_s"] > duration * (1 - TAIL_FRACTION)]
    return [float(tail[tail["flow"] == name]["goodput_mbps"].mean()) for name in names]


def mean_queue_ms(result) -> float:
    """The core's mean queueing delay at the bottleneck over the window (NaN if nothing queued)."""
    delay = result.link("bottleneck")["queue_delay_ms"]
    return float(delay["mean"]) if delay else float("nan")


def sender_bound_fraction(result, name: str) -> float:
    """Of the bins in which ``name`` had data in flight, the fraction whose in-flight data was
    within two MSS of the sender's congestion window (whole segments under a byte window, and the
    sampling instant): for an rLEDBAT download, how often its CUBIC sender's window, not the
    receiver's advertised one (eq. 5, L180), bounded it."""
    series = result.flows
    mine = series[(series["flow"] == name) & (series["inflight_bytes"] > 0)]
    if mine.empty:
        return float("nan")
    return float((mine["inflight_bytes"] >= mine["cwnd_bytes"] - 2 * MSS).mean())


def versus_cubic_metric(result, point: dict) -> dict:
    """Each flow's whole-run goodput and share, its share over the run's last third, and what the
    traces need to explain a share: the bottleneck's mean queueing delay and drops, each flow's
    retransmissions and its sender's loss reductions (for ``lbe`` under rLEDBAT that is the CUBIC
    sender's window, not the receiver's)."""
    lbe, cubic = flow_rates_mbps(result, (LBE, CUBIC))
    lbe_tail, cubic_tail = tail_rates_mbps(result, (LBE, CUBIC))
    capacity = float(point["rate_mbps"])
    link = result.link("bottleneck")
    flows = {flow["name"]: flow for flow in result.summary["flows"]}
    return {"lbe_mbps": lbe, "cubic_mbps": cubic,
            "lbe_share": lbe / capacity, "cubic_share": cubic / capacity,
            "lbe_share_best": lbe / (capacity * GOODPUT_FRACTION),
            "cubic_share_best": cubic / (capacity * GOODPUT_FRACTION),
            "lbe_of_both": lbe / (lbe + cubic) if lbe + cubic > 0 else float("nan"),
            "lbe_share_tail": lbe_tail / capacity, "cubic_share_tail": cubic_tail / capacity,
            "lbe_sender_loss_reductions": float(flows[LBE]["loss_reductions"]),
            "lbe_sender_bound": sender_bound_fraction(result, LBE),
            "queue_ms": mean_queue_ms(result),
            "drops": float(link["drops"]),
            "lbe_retransmits": float(flows[LBE]["retransmits"]),
            "cubic_retransmits": float(flows[CUBIC]["retransmits"]),
            "cubic_loss_reductions": float(flows[CUBIC]["loss_reductions"])}


def arm_rows(summary, arm: str, rate_mbps: Optional[float] = None):
    """The summary rows of one arm (and one capacity), in grid order."""
    rows = summary[summary["arm"] == arm]
    return rows if rate_mbps is None else rows[rows["rate_mbps"] == rate_mbps]


def share_text(row, who: str = "lbe") -> str:
    """``"4.1% ± 0.3% of C (4.3% of best goodput)"``: a mean share over seeds for comparison.md."""
    seeds = int(row["seeds"]) if "seeds" in row else 1
    spread = f" ± {row[f'{who}_share_std']:.1%}" if seeds > 1 else ""
    return f"{row[f'{who}_share']:.1%}{spread} of C ({row[f'{who}_share_best']:.1%} of best goodput)"


def pair_text(row, label: str = "LBE") -> str:
    return f"{label} {share_text(row)}; CUBIC {share_text(row, 'cubic')}"


def wide(summary, x: str, arms: Sequence[str], columns: Sequence[str]):
    """One row per ``x`` with ``<arm>:<column>`` (and its ``_std``) for each arm, for
    ``panels_figure``."""
    import pandas as pd

    frame = None
    for arm in arms:
        part = summary[summary["arm"] == arm][[x] + [c for col in columns for c in (col, f"{col}_std")]]
        part = part.rename(columns={c: f"{arm}:{c}" for c in part.columns if c != x})
        frame = part if frame is None else frame.merge(part, on=x, how="outer")
    return frame if frame is not None else pd.DataFrame({x: []})


def mean_over(rows, column: str) -> float:
    return float(rows[column].mean()) if len(rows) else float("nan")


def panels_figure(out_path, panels: Sequence[tuple], title: str, ylabel: str = "share of C",
                  bands: Sequence[tuple] = ()):
    """One axis per ``(subtitle, frame, x, xlabel, [(column, label)])``: mean ± std over seeds of
    each column along ``x``; ``bands`` are ``(low, high, label)`` spans drawn on every axis."""
    from ccbench.plot import pyplot, save

    fig, axes = pyplot().subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    for ax, (subtitle, frame, x, xlabel, columns) in zip(axes[0], panels):
        for column, label in columns:
            if column in frame:
                ax.errorbar(frame[x], frame[column], yerr=frame.get(f"{column}_std"), marker="o", ms=4,
                            capsize=3, label=label)
        for low, high, label in bands:
            ax.axhspan(low, high, color="C7", alpha=0.15, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(subtitle, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    return save(fig, out_path)


FIRST, SECOND = "first", "second"


def two_rledbat_flows(seed: int, gap_s: float = 0.0) -> List[dict]:
    """Two rLEDBAT downloads (CUBIC senders), the second ``gap_s`` later, each start jittered."""
    return [rledbat_flow(FIRST, start_jitter_s(seed, FIRST)),
            rledbat_flow(SECOND, gap_s + start_jitter_s(seed, SECOND))]


def two_rledbat_metric(result, point: dict) -> dict:
    """Over the measurement window (the scenario's warm-up to the end): each flow's goodput and the
    core's Jain index of them (L372); over the whole run: each flow's payload delivered (the core's
    ``bytes_delivered``) as a rate; over the run's last third: the second
    flow's part of the two rates (the notes' latecomer check)."""
    first, second = flow_rates_mbps(result, (FIRST, SECOND))
    flows = {flow["name"]: flow for flow in result.summary["flows"]}
    duration = float(result.summary["scenario"]["duration_s"])
    whole = [flows[name]["bytes_delivered"] * 8 / duration / 1e6 for name in (FIRST, SECOND)]
    tail = tail_rates_mbps(result, (FIRST, SECOND))
    capacity = float(point["rate_mbps"])
    return {"first_mbps": first, "second_mbps": second, "jain": float(result.summary["jain_index"]),
            "utilization": (first + second) / capacity,
            "first_whole_mbps": whole[0], "second_whole_mbps": whole[1],
            "second_tail_part": tail[1] / sum(tail) if sum(tail) > 0 else float("nan"),
            "queue_ms": mean_queue_ms(result)}
