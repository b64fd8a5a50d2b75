"""Helpers the SIAD §4.2/§4.3 experiments share: the core's summary numbers of a run as flat
metric dicts, and cwnd/queue trace panels (the thesis's Figs. 4.2–4.20 are such traces).

Every number here is read from the core's summary; a field the core does not (yet) report
becomes NaN, so a comparison row can say "not measured" instead of failing.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Optional

NAN = float("nan")


def number(value: Any) -> float:
    """A summary value as a float, NaN for None or a missing field."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else NAN


def _distance(entry: dict) -> Dict[str, float]:
    dist = entry.get("loss_event_distance_s") or {}
    return {"loss_distance_s": number(dist.get("mean")), "loss_distance_std_s": number(dist.get("std"))}


def link_metrics(result, link: str = "bottleneck") -> Dict[str, float]:
    """Utilization, loss rate, queue fill (mean, min), loss events and their distance, mean
    queueing delay of one link (thesis §4.1.2, L2132–L2146)."""
    s = result.link(link)
    delay = s.get("queue_delay_ms") or {}
    return {"utilization": number(s.get("utilization")), "loss_rate": number(s.get("loss_rate")),
            "queue_fill_mean": number(s.get("queue_fill_mean")),
            "queue_fill_min": number(s.get("queue_fill_min")),
            "loss_events": number(s.get("loss_events")), "queue_delay_ms": number(delay.get("mean")),
            **_distance(s)}


def flow_metrics(result, name: str, prefix: str) -> Dict[str, float]:
    """One flow's goodput, its ± (std of the binned rate), timeouts and its own loss events."""
    f = result.flow(name)
    own = _distance(f)
    return {f"{prefix}_mbps": number(f.get("goodput_mbps")),
            f"{prefix}_std_mbps": number(f.get("throughput_std_mbps")),
            f"{prefix}_timeouts": number(f.get("timeouts")),
            f"{prefix}_loss_distance_s": own["loss_distance_s"]}


def is_nan(value: Any) -> bool:
    return not isinstance(value, (int, float)) or math.isnan(value)


def trace_panel(ax, result, title: str, flows: Optional[Iterable[str]] = None,
                link: str = "bottleneck", mss: int = 1448) -> None:
    """cwnd of each TCP flow (packets) and the link's queue (packets, grey, right axis)."""
    frames = result.flows
    names = list(flows) if flows is not None else list(dict.fromkeys(frames["flow"]))
    for i, name in enumerate(names):
        f = frames[frames["flow"] == name]
        if f["cwnd_bytes"].notna().any():
            ax.plot(f["t_s"], f["cwnd_bytes"] / mss, lw=0.8, color=f"C{i}", label=f"cwnd {name}")
    q = result.links[result.links["link"] == link]
    twin = ax.twinx()
    twin.fill_between(q["t_s"], q["queue_packets"], color="0.6", alpha=0.35, lw=0)
    twin.set_ylabel("queue (pkts)", fontsize="x-small", color="0.4")
    twin.tick_params(labelsize="x-small")
    ax.set_title(title, fontsize="small")
    ax.set_xlabel("time (s)", fontsize="x-small")
    ax.set_ylabel("cwnd (pkts)", fontsize="x-small")
    ax.tick_params(labelsize="x-small")
    ax.legend(fontsize="xx-small", loc="upper left")
