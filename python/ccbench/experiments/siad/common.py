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

import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from ccbench.experiments.checks import Check, Claim

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


# ------------------------------------------------------------------ comparison helpers (every SIAD figure)

NAN = float("nan")

#: Relative tolerance on the thesis's single-run numbers (rates, ratios, loss distances). The
#: thesis ran each configuration once (L2131); its own diagonal sharing ratios spread 0.93–1.11
#: (L2540) and its rate "±" values are 5–25 % of the rate, so one run of ours and one of theirs
#: can differ by about a quarter for reasons of chance alone.
REL_TOLERANCE = 0.25

#: "High" utilization of one SIAD flow: above 95 % for 0.2–2 BDP (L2361; issue 12 "Done means").
UTIL_MIN = 0.95


def stat(value: Optional[Mapping[str, Any]], key: str) -> float:
    """``value[key]`` of a core ``{"mean": .., "std": ..}`` summary entry, NaN when the core
    reports ``None`` (fewer than two loss events, no cwnd swing)."""
    if not value:
        return NAN
    number_ = value.get(key)
    return NAN if number_ is None else float(number_)


def number(value: Any) -> float:
    """A summary number, NaN for ``None`` (e.g. ``sharing_ratio`` with one flow)."""
    return NAN if value is None else float(value)


def fmt(value: float, spec: str = ".3g") -> str:
    return "—" if not math.isfinite(value) else f"{value:{spec}}"


def link_metrics(result, link: str = "bottleneck") -> Dict[str, float]:
    """The §4.3.1/§4.4.1 link statistics of one run (L2132–L2146)."""
    s = result.link(link)
    distance = s.get("loss_event_distance_s")
    return {
        "utilization": number(s.get("utilization")),
        "queue_fill_mean": number(s.get("queue_fill_mean")),
        "queue_fill_min": number(s.get("queue_fill_min")),
        "loss_rate": number(s.get("loss_rate")),
        "loss_distance_s": stat(distance, "mean"),
        "loss_distance_std_s": stat(distance, "std"),
    }


def flow_metrics(result, name: str, prefix: str) -> Dict[str, float]:
    """A flow's rate (± per-bin std) and its own loss-event distance, columns ``<prefix>_…``."""
    s = result.flow(name)
    distance = s.get("loss_event_distance_s")
    return {
        f"{prefix}_mbps": number(s.get("goodput_mbps")),
        f"{prefix}_std_mbps": number(s.get("throughput_std_mbps")),
        f"{prefix}_loss_distance_s": stat(distance, "mean"),
        f"{prefix}_loss_distance_std_s": stat(distance, "std"),
    }


def check(what: str, paper: str, source: str, ours: Optional[float], claim: Optional[Claim],
          shown: str = "", why: Union[str, Callable[[], str], None] = None, reported: str = "",
          needs: Tuple[str, ...] = (), movable: Optional[float] = None, of: Tuple[str, ...] = ()) -> Check:
    """A :class:`Check` whose reason is computed only when it is needed: ``why`` (a string or a
    function of nothing, evaluated on this run's numbers) when the verdict is "differs",
    ``reported`` (or "no number of ours in this run") when there is nothing to judge. ``needs``:
    what of the full run the number depends on (:data:`ccbench.experiments.checks.NEEDS`), and
    ``movable`` how far that could move it, from this run's data; ``of``: the measured columns the
    row is about."""
    c = Check(what, paper, source, ours, claim, shown=shown, needs=needs, movable=movable, of=of)
    if c.verdict == "differs" and why is not None:
        c.reason = why() if callable(why) else why
    elif c.verdict == "reported":
        c.reason = reported or ("no number of ours in this run" if claim is not None else "")
    return c


def contrast(what: str, beside: str, source: str, ours: Optional[float], shown: str = "",
             reason: str = "") -> Check:
    """A row that sets a model's value or a sibling arm of ours (``beside``, with where it comes
    from) next to our number: not the thesis's, so it states no claim (verdict ``contrast``)."""
    return Check(what, beside, source, ours, shown=shown, reason=reason, contrast=True)


def near(what: str, paper: str, source: str, ours: Optional[float], value: float,
         within: float = REL_TOLERANCE, shown: str = "", why=None, agree: float = 0.0,
         relative: bool = True, needs: Tuple[str, ...] = (), movable: Optional[float] = None,
         of: Tuple[str, ...] = ()) -> Check:
    """Ours about the thesis's ``value``: within tolerance inside ± ``within`` (relative unless
    ``relative`` is false), as every single-run table cell of the thesis is held."""
    return check(what, paper, source, ours, Claim("≈", value, agree=agree, within=within, relative=relative),
                 shown=shown, why=why, needs=needs, movable=movable, of=of)


def every(what: str, paper: str, source: str, passed: int, total: int, unit: str = "cells",
          why=None, needs: Tuple[str, ...] = ()) -> Check:
    """A claim about every one of ``total`` cases ("every cell", "every scheme"): ours is how many
    hold it, the claim that all do (one that fails halves the count's verdict)."""
    return check(what, paper, source, float(passed), Claim("≥", float(total)),
                 shown=f"{passed}/{total} {unit}", why=why, needs=needs)


def factor_claim(paper: float, factor: float) -> Claim:
    """About the thesis's single sample, within tolerance from ``paper / factor`` up: the band is
    ± (1 − 1/factor) of it, which keeps a factor band's lower end and tightens its upper
    one (``paper · factor``) to ``paper · (2 − 1/factor)``, so a claim stays a check about the
    thesis's number (``≈``) with its band as a tolerance. A thesis value of 0 allows up to
    ``factor`` (a handful against none)."""
    if paper == 0:
        return Claim("≈", 0.0, within=factor, relative=False)
    return Claim("≈", paper, within=round(1 - 1 / factor, 4))


def half_rates(result, names) -> Dict[str, float]:
    """Each named flow's mean binned rate over the first and the second half of the measured time
    (``<name>_h1_mbps``, ``<name>_h2_mbps``): how far the rates drift within one run is how far a
    longer run (the thesis's 580 s measured) could still move them."""
    flows = result.flows
    warmup = float(result.summary["scenario"]["warmup_s"])
    end = float(flows["t_s"].max())
    middle = (warmup + end) / 2
    out: Dict[str, float] = {}
    for half, (lo, hi) in (("h1", (warmup, middle)), ("h2", (middle, end))):
        for name in names:
            f = flows[(flows["flow"] == name) & (flows["t_s"] > lo) & (flows["t_s"] <= hi)]
            out[f"{name}_{half}_mbps"] = float(f["throughput_mbps"].mean()) if len(f) else NAN
    return out


def half_drift(r, value: Callable[[str], float]) -> Optional[float]:
    """How far ``value(half)`` (a number computed from row ``r``'s ``h1``/``h2`` columns) moved
    between the run's halves; None when the run has no halves (a differing row is then judged)."""
    try:
        moved = abs(float(value("h2")) - float(value("h1")))
    except (AttributeError, KeyError, ZeroDivisionError):
        return None
    return moved if math.isfinite(moved) else None


def rows(checks) -> List[Dict[str, Any]]:
    """``comparison.json``'s rows of a list of checks."""
    return [c.row() for c in checks]


# ------------------------------------------------------------------ reallocation times (§4.5 modules)

def reallocation(result, flow_name: str, at_s: float, tolerance_s: float = 0.05) -> Optional[Dict[str, Any]]:
    """The flow's entry of the core's ``reallocations`` list that starts at ``at_s``, or None."""
    for entry in result.flow(flow_name)["reallocations"]:
        if abs(entry["at_s"] - at_s) <= tolerance_s:
            return entry
    return None


def reach_s(entry: Optional[Mapping[str, Any]], level: int) -> float:
    """``reach_<level>_s`` of a reallocation entry; NaN when it was not reached (or no entry)."""
    value = None if entry is None else entry[f"reach_{level}_s"]
    return math.nan if value is None else float(value)


def seconds(value: Optional[float]) -> str:
    return "never" if value is None or math.isnan(value) else f"{value:.1f} s"
