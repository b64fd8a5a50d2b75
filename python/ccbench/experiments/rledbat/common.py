"""The rLEDBAT paper's testbed as scenarios, shared by its figures (`Lnnn`: lines of
``shared/seeds/000_0bcdc4d0e80e9a68.txt``; notes ``reference/experiments-rledbat.md``).

Set-up (§1 of the notes): a dumbbell whose R2→R1 link is the bottleneck (L309), a drop-tail buffer
given in milliseconds at the link rate (L311, a byte limit), MSS 1390 B in 1456 B frames (L313:
the paper's "MTU" counts the Ethernet header, so 66 B of headers per segment, which gives the
paper's 954 kbps best goodput on 1 Mbps), timestamps on, greedy flows, 300 s runs whose rates
cover the whole run including start-up (L315), 8 runs per point (L315). The receiver running
rLEDBAT downloads from an ordinary CUBIC sender (L346; the BBR figures do not say, the notes
suggest CUBIC too). The testbed has no seeds: run-to-run variety comes from each flow's start
drawn in U[0, 100] ms per seed (the notes' suggestion) and the core's host timing noise.

The RTT and capacity grids are not printed (notes §5 item 1): we use the notes' suggestions.
"""

from __future__ import annotations

import math
import random
from typing import Iterable, List, Mapping, Optional, Sequence

#: L313: payload per segment, and the frame size the shaper counts (MTU 1456 with Ethernet).
MSS = 1390
FRAME_BYTES = 1456
HEADER_BYTES = FRAME_BYTES - MSS
#: Best goodput as a fraction of the link rate (notes §1.4: 954 kbps on 1 Mbps).
GOODPUT_FRACTION = MSS / FRAME_BYTES
CAPACITY_MBPS = 20
DEEP_BUFFER, SHALLOW_BUFFER = "500ms", "30ms"
#: L315: runs of 300 s, 8 executions per configuration.
DURATION_S = 300
SEEDS = tuple(range(1, 9))
QUICK_SEEDS = (1,)
QUICK_DURATION_S = 90
#: Notes §5 item 1 (the paper prints no grid).
RTTS_MS = [10, 20, 40, 60, 80, 100, 150, 200, 250, 300]
QUICK_RTTS_MS = [20, 100]
CAPACITIES_MBPS = [1, 2, 5, 10, 20, 30, 40, 50]
#: The start of each flow is drawn in [0, START_JITTER_S) per seed (notes §1.5).
START_JITTER_S = 0.1
#: LEDBAT++'s target T (L81): the delay-based and loss-based regimes are either side of it (L311).
TARGET_MS = 60


def base(rate_mbps: float = CAPACITY_MBPS, buffer: str = DEEP_BUFFER, rtt_ms: float = 20,
         duration_s: float = DURATION_S, flows: Sequence[Mapping] = ()) -> dict:
    """The dumbbell with ``flows``; rates are measured over the whole run (no warm-up, L315)."""
    return {
        "duration": f"{duration_s:g}s",
        "warmup": "0s",
        "seed": 1,
        "bottleneck": {"rate": f"{rate_mbps:g}Mbps", "rtt": f"{rtt_ms:g}ms", "buffer": buffer,
                       "aqm": "droptail"},
        "flows": [dict(flow) for flow in flows],
        "output": {"sojourn_samples": False},
    }


def tcp_flow(name: str, cca: str = "cubic", start_s: float = 0.0, **keys) -> dict:
    """A greedy download from a ``cca`` sender with the paper's segment sizes."""
    return {"name": name, "cca": cca, "start": f"{start_s:.6f}s", "mss": MSS, "header_bytes": HEADER_BYTES,
            **keys}


def rledbat_flow(name: str, start_s: float = 0.0, enhanced: bool = False, sender: str = "cubic",
                 **keys) -> dict:
    """A download from an ordinary ``sender`` whose receiver runs rLEDBAT; ``enhanced`` is the
    modified target min(T, base RTT) of §7.1 (L500)."""
    flow = tcp_flow(name, sender, start_s, receiver_cca="rledbat", **keys)
    if enhanced:
        flow["receiver_cc"] = {"enhanced_target": True}
    return flow


def start_jitter_s(seed: int, name: str) -> float:
    """The flow's start offset for ``seed``: U[0, 100 ms), fixed per (seed, flow name)."""
    return random.Random(f"rledbat-start/{seed}/{name}").uniform(0.0, START_JITTER_S)


def flow_rates_mbps(result, names: Iterable[str]) -> List[float]:
    """Goodput (payload at the receiver, L313) of each named flow over the measurement window."""
    by_name = {flow["name"]: flow for flow in result.summary["flows"]}
    return [float(by_name[name]["goodput_mbps"]) for name in names]


def gain_divisor(rtt_ms: float) -> int:
    """Eq. (2), L89: GAIN = 1 / min(16, ⌈2T / RTT_b⌉)."""
    return min(16, math.ceil(2 * TARGET_MS / rtt_ms))


def yield_claim(lbe_max: float, lbe: float, other: float, other_min: float = 0.0):
    """"Yields", judged on the other flow's share: at least what the two carry less ``lbe_max``
    of C (so the LBE flow keeps at most ``lbe_max``, exactly) and at least ``other_min``. A bound
    on the LBE flow's own share of 1–6 % could not fail when doubled; this one fails when the
    other flow's share is halved."""
    from ccbench.experiments.checks import Claim

    return Claim("≥", round(max(other_min, lbe + other - lbe_max), 4), relative=False)


def share_figure(summary, out_path, columns: Sequence[tuple], title: str, x: str = "rtt_ms",
                 xlabel: str = "base RTT (ms)", ylabel: str = "share of the link",
                 bands: Optional[Sequence[tuple]] = None):
    """Mean ± std over seeds of each ``(column, label)`` along ``x``; ``bands`` are
    ``(low, high, label)`` horizontal spans for the paper's pass bands."""
    from ccbench.plot import pyplot, save

    fig, ax = pyplot().subplots(figsize=(7, 4.2))
    for column, label in columns:
        std = summary.get(f"{column}_std")
        ax.errorbar(summary[x], summary[column], yerr=std, marker="o", ms=4, capsize=3, label=label)
    for low, high, label in bands or ():
        ax.axhspan(low, high, color="C7", alpha=0.15, label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, out_path)
