"""Settings shared by the SIAD thesis experiments (notes ``siad-eval.md`` §1).

The thesis ran Linux 3.5.7 in VMs on a simulated dumbbell (L2105–L2131): base RTT 100 ms (the
bottleneck's 50 ms each way), buffers in bytes as a multiple of the base BDP, IW 10, SACK and
timestamps on, 600 s runs with the first 20 s excluded, receiver rates in 2·RTT = 200 ms bins
(L2131, L2638). That kernel's stack counts ACKs, not acknowledged segments, for window growth
(Linux NewReno grows ½ segment per RTT with delayed ACKs, L1954, L2463), and it predates RACK and
the tail loss probe: losses are found by SACK's duplicate threshold (with FACK), and a lost
retransmission once later data is SACKed (``tcp_mark_lost_retrans``); after a timeout it caps
cwnd at in-flight + 3 on every ACK (``tcp_moderate_cwnd``). So every flow here gets
``ca_counting = "acks"``, ``recovery = "rfc6675"`` and ``stack = "linux-3.5"``, which do the same.
Without that cap SIAD's increase, which credits every byte a cumulative ACK covers, turns the
ACK that ends a timeout into a burst of the whole window (1 → 338 segments, 254 drops, seen at
10 Mbit/s, 1 BDP).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

RTT = "100ms"
DURATION_S = 600.0
WARMUP_S = 20.0
BIN = "200ms"

#: What Linux 3.5.7's stack does outside the controller (see the module doc).
THESIS_TCP: Dict[str, Any] = {"ca_counting": "acks", "recovery": "rfc6675", "stack": "linux-3.5",
                               "initial_window": 10}

#: The thesis's schemes (Section 4.3.1 compares the first seven) → (cca, controller parameters).
SCHEMES: Dict[str, Tuple[str, Dict[str, Any]]] = {
    "NewReno": ("newreno", {}),
    "Cubic": ("cubic", {}),
    "HSTCP": ("highspeed", {}),
    "Scalable": ("scalable", {}),
    "H-TCP": ("htcp", {}),
    "Illinois": ("illinois", {}),
    "SIAD(10)": ("siad", {"num_rtt": 10}),
    "SIAD(20)": ("siad", {"num_rtt": 20}),
    "SIAD(30)": ("siad", {"num_rtt": 30}),
    "SIAD(40)": ("siad", {"num_rtt": 40}),
}

#: Section 4.3.1's line-up (L2351): the six high-speed and legacy schemes and SIAD(20), SIAD(40).
STANDARD = ("NewReno", "Cubic", "HSTCP", "Scalable", "H-TCP", "Illinois", "SIAD(20)", "SIAD(40)")


def siad_cc(num_rtt: int = 20, **params: Any) -> Dict[str, Any]:
    """SIAD's ``[flows.cc]`` table with ``num_rtt`` (and any other parameter, e.g. ``num_ms``)."""
    return {"num_rtt": num_rtt, **params}


def flow(scheme: str, name: Optional[str] = None, **keys: Any) -> Dict[str, Any]:
    """One ``[[flows]]`` entry of a thesis scheme (a key of :data:`SCHEMES`) with the thesis
    kernel's stack settings; ``keys`` add or replace flow keys (``start``, ``delayed_ack``, …)."""
    cca, params = SCHEMES[scheme]
    entry: Dict[str, Any] = {"cca": cca, **THESIS_TCP, **keys}
    if params or "cc" in keys:
        entry["cc"] = {**params, **keys.get("cc", {})}
    if name is not None:
        entry["name"] = name
    return entry


def dumbbell(rate: str, buffer_bdp: float, flows: List[Mapping[str, Any]],
             duration_s: float = DURATION_S, warmup_s: float = WARMUP_S,
             **bottleneck: Any) -> Dict[str, Any]:
    """The thesis's dumbbell (Fig. 4.1): ``rate`` (``"10Mbps"``), a drop-tail buffer of
    ``buffer_bdp`` × the base BDP at 100 ms, base RTT 100 ms on the bottleneck itself (50 ms each
    way, L2127), 200 ms bins; ``bottleneck`` adds or replaces bottleneck keys (``aqm``, ``loss``,
    ``changes``, …)."""
    return {
        "duration": f"{duration_s:g}s",
        "warmup": f"{warmup_s:g}s",
        "output": {"bin": BIN, "sojourn_samples": False},
        "bottleneck": {"rate": rate, "rtt": RTT, "delay": "50ms", "buffer": f"{buffer_bdp:g}bdp",
                       **bottleneck},
        "flows": [dict(f) for f in flows],
    }
