"""Settings shared by the SIAD thesis experiments (notes ``siad-eval.md`` §1).

The thesis ran Linux 3.5.7 in VMs on a simulated dumbbell (L2105–L2131): base RTT 100 ms (the
bottleneck's 50 ms each way), buffers in bytes as a multiple of the base BDP, IW 10, SACK and
timestamps on, 600 s runs with the first 20 s excluded, receiver rates in 2·RTT = 200 ms bins
(L2131, L2638). That kernel's stack counts ACKs, not acknowledged segments, for window growth
(Linux NewReno grows ½ segment per RTT with delayed ACKs, L1954, L2463), so every flow here gets
``ca_counting = "acks"``.

Loss recovery stays RACK although 3.5.7 predates it: that kernel found lost retransmissions
(``tcp_mark_lost_retrans``, SACK/FACK) where our ``recovery = "rfc6675"`` mode cannot, and SIAD's
loss bursts then end in timeouts (50 RTOs in 180 s for one SIAD(20) flow at 10 Mbit/s, 0.5 BDP,
utilization 0.89 instead of 1.0) that the thesis's traces never show (Figs. 4.11–4.12).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

RTT = "100ms"
DURATION_S = 600.0
WARMUP_S = 20.0
BIN = "200ms"

#: What Linux 3.5.7's stack does outside the controller (see the module doc).
THESIS_TCP: Dict[str, Any] = {"ca_counting": "acks", "initial_window": 10}

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
