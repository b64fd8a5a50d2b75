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

The testbed's environment (:data:`TESTBED`, issue 25 item 6). §5 says the bottleneck's capacity
was set "using the tbf queueing discipline for the tc traffic control tool" (L309), the RTT "using
tc netem" (L311), and the receivers were Ubuntu 14.04 LTS hosts (L307, kernel 3.13 per L260).
It does not give the tbf burst (notes §1.3, §5 item 7). A tbf bucket refills while the queue is
empty and then lets a burst out at the interface's line rate; Linux receivers of that era had GRO
on, so such a burst reaches TCP as one skb and gets one ACK for up to 64 KB. BBR's ACK-aggregation
allowance (``extra_acked``, Linux ≥ 4.19; on by default in the core's BBRv1 and BBRv2) answers
those stretch ACKs with more in-flight, which is how a BBR sender on such a testbed keeps a
standing queue (L450's "extra BDP"). So every scenario carries an environment: the testbed's
(tbf burst from the rate by the man page's rule, GRO at every receiver), or, as a labelled
contrast arm, the ideal shaper with per-segment ACKs these experiments used before.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

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


#: Ubuntu 14.04's tc-tbf(8): "The minimum buffer size can be calculated by dividing the rate by
#: HZ", its example "10mbit/s on Intel, you need at least 10kbyte buffer" being HZ = 100. A tc
#: user of the time sizing the burst by that rule, rounded up to a power of two in tc's "kb"
#: (1024 B), sets 32kb at the paper's 20 Mbit/s (25,000 B needed): a few tens of KB, about one
#: 10 ms tick of tokens at every rate (1 Mbit/s: 2 KiB, one frame; 50 Mbit/s: 64 KiB; 500 Mbit/s: 1 MiB).
TBF_MANPAGE_HZ = 100
TBF_UNIT_BYTES = 1024
#: Receive offload at the Ubuntu receivers (GRO on by default): segments arriving within this gap
#: of the one before are one skb. 50 µs is a typical NAPI / interrupt-coalescing interval; a
#: tbf burst leaves at 1 Gbit/s (one 1456 B frame every 11.6 µs), so it merges, while packets
#: paced at the 20 Mbit/s token rate (582 µs apart) do not.
GRO_GAP = "50us"


def tbf_burst_bytes(rate_mbps: float) -> int:
    """The tbf burst a tc user following tc-tbf(8) would set for ``rate_mbps``: the smallest power
    of two KiB holding rate/HZ bytes (HZ = 100, the man page's example) and a frame (tbf refuses a
    burst below the MTU)."""
    need = max(rate_mbps * 1e6 / 8 / TBF_MANPAGE_HZ, FRAME_BYTES)
    return TBF_UNIT_BYTES * 2 ** math.ceil(math.log2(need / TBF_UNIT_BYTES))


@dataclass(frozen=True)
class Environment:
    """How the testbed shapes and receives: a tbf burst of ``burst_scale`` times
    :func:`tbf_burst_bytes` on the bottleneck (``None``: an ideal rate-limited link, every packet
    leaving at the rate) and GRO with gap ``gro`` at every TCP receiver (``None``: one ACK decision
    per segment). ``key`` goes into the sweep's points; ``label`` prefixes a contrast arm's rows."""

    key: str
    label: str
    burst_scale: Optional[float]
    gro: Optional[str]

    def burst_bytes(self, rate_mbps: float) -> Optional[int]:
        if self.burst_scale is None:
            return None
        return max(int(self.burst_scale * tbf_burst_bytes(rate_mbps)), 2 * TBF_UNIT_BYTES)

    def describe(self, rate_mbps: float = CAPACITY_MBPS) -> str:
        burst = self.burst_bytes(rate_mbps)
        shaper = "no tbf burst" if burst is None else f"tbf burst {burst // 1024} KiB"
        return f"{shaper}, {'GRO ' + self.gro.replace('us', ' µs') if self.gro else 'no GRO'}"


#: The paper's testbed (§5, L307–L311): tbf with the man page's burst, GRO at the receivers.
TESTBED = Environment("testbed", "testbed", 1.0, GRO_GAP)
#: The contrast arm: the ideal shaper and per-segment ACKs (notes §5 item 7's suggestion).
NO_BURST = Environment("no-burst", "no burst, no GRO", None, None)
#: Sweep arms around the testbed: half and twice the burst, and the burst without GRO.
HALF_BURST = Environment("burst-x0.5", "half the burst", 0.5, GRO_GAP)
DOUBLE_BURST = Environment("burst-x2", "twice the burst", 2.0, GRO_GAP)
NO_GRO = Environment("no-gro", "tbf burst, no GRO", 1.0, None)
ENVIRONMENTS = {env.key: env for env in (TESTBED, NO_BURST, HALF_BURST, DOUBLE_BURST, NO_GRO)}


def environment(point: Mapping) -> Environment:
    """The environment of a sweep point (``env`` key; the testbed when it has none)."""
    return ENVIRONMENTS[point.get("env", TESTBED.key)]


def in_environment(changes: Mapping[str, Any], env: Environment, rate_mbps: float) -> Dict[str, Any]:
    """``changes`` (a point's overrides, with its ``flows``) in ``env`` at ``rate_mbps``: the
    bottleneck's burst and each TCP flow's ``gro``. The no-burst environment changes nothing."""
    out = dict(changes)
    burst = env.burst_bytes(rate_mbps)
    if burst is not None:
        out["bottleneck.burst"] = f"{burst}B"
    if env.gro and "flows" in out:
        out["flows"] = [dict(flow, gro=env.gro) if flow.get("type", "tcp") == "tcp" else dict(flow)
                        for flow in out["flows"]]
    return out


def rate_of(changes: Mapping[str, Any], base_scenario: Mapping[str, Any]) -> float:
    """The bottleneck rate in Mbit/s a point runs at: its override, else the base scenario's."""
    rate = changes.get("bottleneck.rate", base_scenario["bottleneck"]["rate"])
    if not str(rate).endswith("Mbps"):
        raise ValueError(f"bottleneck.rate: expected Mbps, got {rate!r}")
    return float(str(rate)[:-4])


def environment_apply(apply: Callable[[dict], Mapping[str, Any]], base_scenario: Mapping[str, Any]):
    """``apply`` with each point's environment (:func:`environment`) added to its overrides; a point
    that sets no flows gets the base scenario's."""
    def wrapped(point: dict) -> dict:
        changes = dict(apply({k: v for k, v in point.items() if k != "env"}))
        changes.setdefault("flows", [dict(flow) for flow in base_scenario["flows"]])
        return in_environment(changes, environment(point), rate_of(changes, base_scenario))
    return wrapped


def testbed_experiment(experiment):
    """``experiment`` with every run in the testbed's environment (its points carry no ``env``):
    the burst follows each point's rate by :func:`tbf_burst_bytes`, GRO at every TCP receiver."""
    import dataclasses

    return dataclasses.replace(
        experiment, apply=environment_apply(experiment.apply or (lambda point: dict(point)), experiment.base),
        description=f"{experiment.description}; testbed: tbf burst rate/HZ (tc-tbf(8)), GRO {GRO_GAP}")


def contrast_label(env: Environment, what: str) -> str:
    """A contrast arm's row title: ``"[no burst, no GRO] <what>"``; the testbed's rows keep theirs."""
    return what if env == TESTBED else f"[{env.label}] {what}"


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
