"""What the L4S experiments share: the dumbbell the DualPI2 work measures on, its flows, and the
numbers read from a run.

Sources of every number held to (cited again where each is checked):

* RFC 9332 (De Schepper, Briscoe, White, "Dual-Queue Coupled AQM for L4S", January 2023):
  Abstract, "pooling the capacity between any combination of Scalable and Classic flows with
  roughly equivalent throughput per flow"; Appendix A.1, Figure 2, the coupling ``k = 2``, the
  Classic queue's ``target = 15 ms`` and the buffer ``limit = MAX_LINK_RATE × 250 ms``. Its draft
  -07 says it of DCTCP in its Abstract: "a flow runs at about the same rate whether it uses DCTCP
  or TCP Reno/Cubic".
* De Schepper, Albisser, Tilmans, Briscoe, "Dual Queue Coupled AQM: Deployable Very Low Queuing
  Delay for All", arXiv 2209.01078 (2022), Abstract: on a testbed of real residential broadband
  equipment, L4S queue delay "median 100–300 µs" and "99th percentile below 2 ms even under highly
  dynamic workloads", "zero congestion loss and close to full utilization"; Scalable flows "very
  aggressive" against Classic ones without the DualQ.
* Alizadeh et al., "Data Center TCP (DCTCP)", ACM SIGCOMM 2010, §3.3: a marking threshold
  ``K > C × RTT / 7`` keeps the queue from running empty, so DCTCP keeps the link full.

The dumbbell: one bottleneck with ECN on, the buffer RFC 9332 A.1 sizes (250 ms at the link
rate), flows of one base RTT; a Scalable flow sends ECT(1) (DualPI2's L queue), a Classic one
ECT(0) (its C queue). Runs last 60 s, the first 20 s excluded.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Tuple

from ccbench.experiments.checks import Check, Claim

#: RFC 9332 Appendix A.1, Figure 2: the Classic queue's delay target.
CLASSIC_TARGET_MS = 15.0
#: RFC 9332 A.1, Figure 2: the buffer, as time at the link rate.
BUFFER = "250ms"
DURATION = "60s"
WARMUP = "20s"
QUICK_DURATION = "30s"
QUICK_OVERRIDES = {"duration": QUICK_DURATION, "warmup": "10s"}

#: Where each claim comes from, as a reader finds it.
RFC9332_ABSTRACT = "RFC 9332, Abstract"
RFC9332_DCTCP = "draft-ietf-tsvwg-aqm-dualq-coupled-07, Abstract"
RFC9332_TARGET = "RFC 9332 App. A.1, Fig. 2"
DUALQ_PAPER = "De Schepper et al. 2022, arXiv 2209.01078, Abstract"
DCTCP_PAPER = "Alizadeh et al., SIGCOMM 2010, §3.3"
PI2_MAN = "tc-dualpi2(8), DESCRIPTION (iproute2); De Schepper et al., CoNEXT 2016"

#: Scalable controllers and the flow keys that put them in DualPI2's L queue.
SCALABLE = {"prague": {}, "dctcp": {"ect1": True}}


def scalable_flow(cca: str = "prague", name: str = "l4s", count: int = 1, **keys: Any) -> Dict[str, Any]:
    """A Scalable flow: ECN with accurate feedback and ECT(1) (Prague's defaults; DCTCP is
    given ECT(1) so that DualPI2 queues it in L, as the L4S experiments ran it)."""
    return {"name": name, "cca": cca, "count": count, **SCALABLE[cca], **keys}


def classic_flow(cca: str = "cubic", name: str = "classic", count: int = 1, **keys: Any) -> Dict[str, Any]:
    """A Classic flow with classic ECN (RFC 3168): ECT(0), DualPI2's C queue."""
    return {"name": name, "cca": cca, "count": count, "ecn": True, **keys}


def dumbbell(flows: List[Dict[str, Any]], rate: str = "40Mbps", rtt: str = "20ms", aqm: str = "dualpi2",
             sojourn_samples: bool = False) -> Dict[str, Any]:
    return {
        "duration": DURATION,
        "warmup": WARMUP,
        "seed": 1,
        "output": {"sojourn_samples": sojourn_samples, "flow_delays": True},
        "bottleneck": {"rate": rate, "rtt": rtt, "buffer": BUFFER, "aqm": aqm, "ecn": True},
        "flows": flows,
    }


def flows_named(result, prefix: str) -> List[Mapping[str, Any]]:
    """The summary entries of the flows called ``prefix`` or ``prefix-<k>`` (a ``count``)."""
    return [f for f in result.summary["flows"] if f["name"] == prefix or f["name"].startswith(prefix + "-")]


def total_goodput(flows: List[Mapping[str, Any]]) -> float:
    return float(sum(f["goodput_mbps"] for f in flows))


def delay(flows: List[Mapping[str, Any]], stat: str, combine=max) -> float:
    """One statistic of the flows' queueing delays (ms), combined over the flows (the worst by
    default); NaN when none was measured."""
    values = [f["queue_delay_ms"][stat] for f in flows if f.get("queue_delay_ms")]
    return float(combine(values)) if values else float("nan")


def bottleneck_numbers(result) -> Dict[str, float]:
    """Utilisation, drops and marks at the bottleneck over the window, and the share of its
    packets that were not dropped (1 with "zero congestion loss")."""
    link = result.link("bottleneck")
    packets = float(link["packets"])
    drops = float(link["drops"])
    return {"utilization": float(link["utilization"]), "drops": drops, "ecn_marks": float(link["ecn_marks"]),
            "undropped": 1.0 - drops / packets if packets > 0 else float("nan")}


def bound_check(what: str, paper: str, source: str, ours: float, relation: str, bound: float, shown: str,
                needs: Tuple[str, ...] = ()) -> Check:
    """A paper's bound on one number of ours (``≤`` or ``≥``), judged however far inside it ours
    lies (issue 39: a bound far from ours is still a claim); far inside (a factor two or more),
    the reason says how far, since the bound then cannot tell our model from one twice as bad."""
    check = Check(what, paper, source, ours, Claim(relation, bound), shown=shown, needs=needs)
    far = ours * 2 <= bound if relation == "≤" else ours / 2 >= bound
    if far and ours != 0:
        margin = bound / ours if relation == "≤" else ours / bound
        check.reason = f"far inside the bound: {margin:.1f} times inside {bound:g}"
    return check
