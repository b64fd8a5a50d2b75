"""Run a ccbench dumbbell scenario in ns-3 3.44 as a speed and sanity reference.

``run_ns3(scenario)`` builds the same dumbbell in ns-3 (PyPI wheel ``ns3==3.44.post0``, Python
bindings through cppyy) and returns its wall time and goodputs. ns-3 runs in a child process so
that its import (cppyy loads and JIT-compiles the ns-3 headers: ~10 s), any crash, and its memory
stay out of ccbench's process; the child prints one JSON object.

It takes the scenario as the core validated it (:func:`ccbench.validate`: unit-free, defaults
filled in), so no unit or default is read twice. Only the subset ``ccbench bench`` uses is
translated: a dumbbell whose link named ``bottleneck`` (and its reverse) is a plain drop-tail link,
greedy TCP flows of ``cubic`` or ``newreno`` with the default TCP options, all starting at 0 with
the same RTT, and ``warmup = 0``. Anything else raises ``ValueError`` rather than silently
measuring something else.

How the ns-3 model is configured (chosen to match docs/model.md):

* Topology: ``s_i --access-- r1 ==bottleneck== r2 --access-- d_i``, all PointToPoint. Access
  links run at 10 Gbps (ns-3 has no infinite rate; 1.2 µs per 1500-byte packet) and carry the
  propagation delay, half on the sender side and half on the receiver side, so that
  ``2·(access_s + bottleneck.delay + access_d)`` is the flow's RTT.
* Bottleneck queue: ns-3 has two queues in series, the traffic-control queue disc and the
  device's transmit queue. The device queue is set to 1 packet and the root queue disc on the
  bottleneck device is a ``FifoQueueDisc`` (drop-tail) with the link's resolved ``limit`` (bytes
  or packets), so the queue that fills and drops is the one sized like ccbench's. A queue disc sees IP packets (1448 payload +
  32 TCP with timestamps + 20 IP = 1500 bytes, ccbench's wire size); the point-to-point header
  (2 bytes) is added after it. The reverse (ACK) direction gets a 10 000-packet FIFO, as in
  ccbench.
* TCP: ``TcpCubic`` (HyStart on, ns-3's default) or ``TcpNewReno``, SegmentSize 1448,
  InitialCwnd 10, SACK, timestamps, window scaling, delayed ACK every 2 segments with a 40 ms
  timer, MinRto 1 s (see below), 1 ms clock granularity, PRR recovery, 64 MB receive buffer and a send
  buffer far above the largest window the path allows. Each flow is a ``BulkSendApplication``
  to a ``PacketSink``.
* RTO: ns-3 bounds the whole RTO below by ``MinRto``; Linux and ccbench bound only the
  variance term (``SRTT + max(4·RTTVAR, 200 ms)``). With ``MinRto`` = 200 ms, ns-3 timed out
  spuriously in every loss recovery once a full 1-BDP queue doubled the RTT to ~200 ms, so
  ``MinRto`` keeps ns-3's default of 1 s (RFC 6298), which no recovery here reaches.
* Measured: ``wall_s`` is ``Simulator::Run()`` alone; ``import_s`` (loading the bindings) and
  ``setup_s`` (configuration and topology) are reported apart. Goodput is each sink's received
  bytes over the duration; bottleneck utilisation is the bytes the bottleneck queue disc handed
  to the device (plus 2 bytes of PPP header each) over ``rate · duration``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Optional, Tuple

NS3_MISSING = "ns-3 is not installed: pip install ns3==3.44.post0"

#: Exit status the child uses when ``from ns import ns`` fails.
_EXIT_NO_NS3 = 3

_CCAS = {"cubic": "ns3::TcpCubic", "newreno": "ns3::TcpNewReno"}
_MSS = 1448
_HEADER_BYTES = 52  # IPv4 20 + TCP 20 + timestamps 12, as in ccbench
_ACCESS_RATE = "10Gbps"
_MIN_RTO_S = 1.0  # ns-3's default; see _simulate for why not Linux's 200 ms


# --------------------------------------------------------------------------------------------
# Scenario translation (parent process, no ns-3 needed)
# --------------------------------------------------------------------------------------------

#: The TCP options the ns-3 model below is configured with; a flow asking for others is refused.
_TCP_MODEL = {"mss": _MSS, "header_bytes": _HEADER_BYTES, "initial_window": 10, "sack": True,
              "delayed_ack": True, "timestamps": True, "ecn": False}

BOTTLENECK = "bottleneck"


def _unsupported(what: str) -> ValueError:
    return ValueError(f"ns-3 reference: {what}")


def _dumbbell_links(sc: dict) -> Tuple[dict, dict]:
    """The ``bottleneck`` link and its reverse, found by name, never by position."""
    generator = sc.get("topology", {}).get("generator")
    if generator != "dumbbell":
        raise _unsupported(f"only the dumbbell topology is supported, got {generator!r}")
    links = {link["name"]: link for link in sc.get("links", [])}
    if BOTTLENECK not in links:
        raise _unsupported(f"no link named {BOTTLENECK!r} (links: {', '.join(links) or 'none'})")
    reverse = [link for link in links.values() if link.get("reverse_of") == BOTTLENECK]
    if len(reverse) != 1:
        raise _unsupported(f"expected one reverse link of {BOTTLENECK!r}, got {len(reverse)}")
    return links[BOTTLENECK], reverse[0]


def _check_link(fwd: dict, rev: dict) -> None:
    if fwd.get("aqm") != "droptail":
        raise _unsupported(f"only aqm = \"droptail\" is supported, got {fwd.get('aqm')!r}")
    for key in ("jitter_ns", "loss", "changes", "ecn"):
        if fwd.get(key):
            raise _unsupported(f"{BOTTLENECK}.{key} is not supported")
    # ns-3's point-to-point link is symmetric: one rate and one delay for both directions.
    for key in ("rate_bps", "delay_ns"):
        if rev.get(key) != fwd.get(key):
            raise _unsupported(f"{rev['name']}.{key} must equal {BOTTLENECK}.{key}")


def _queue_limit(fwd: dict) -> Tuple[str, int]:
    """ns-3's queue size string and the limit in bytes (packets count as full-size segments)."""
    limit = fwd.get("limit", {})
    if "bytes" in limit:
        return f"{int(limit['bytes'])}B", int(limit["bytes"])
    if "packets" in limit:
        return f"{int(limit['packets'])}p", int(limit["packets"]) * (_MSS + _HEADER_BYTES)
    raise _unsupported(f"{BOTTLENECK}.limit {limit!r} is neither packets nor bytes")


def _check_flow(i: int, f: dict) -> str:
    where = f"flows[{i}] ({f.get('name')})"
    if f.get("type") != "tcp":
        raise _unsupported(f"{where}: only TCP flows are supported, got {f.get('type')!r}")
    cca = str(f.get("cca", "")).lower()
    if cca not in _CCAS:
        raise _unsupported(f"{where}: cca {cca!r} not in {sorted(_CCAS)}")
    if f.get("start_ns") or f.get("stop_ns") is not None or f.get("size_bytes") is not None:
        raise _unsupported(f"{where}: only greedy flows from time 0 are supported")
    if f.get("cc"):
        raise _unsupported(f"{where}: controller parameters {sorted(f['cc'])} are not translated")
    if BOTTLENECK not in f.get("path", []):
        raise _unsupported(f"{where}: the flow does not cross {BOTTLENECK!r}")
    tcp = f.get("tcp", {})
    for key, value in _TCP_MODEL.items():
        if key in tcp and tcp[key] != value:
            raise _unsupported(f"{where}: tcp.{key} = {tcp[key]!r}, the ns-3 model uses {value!r}")
    return cca


def translate(scenario: dict) -> dict:
    """Reduce a validated scenario (:func:`ccbench.validate`) to what the ns-3 child needs.

    Raises ``ValueError`` for anything outside the supported subset.
    """
    fwd, rev = _dumbbell_links(scenario)
    _check_link(fwd, rev)
    if scenario.get("warmup_ns"):
        raise _unsupported("warmup must be 0")
    flows = scenario.get("flows", [])
    if not flows:
        raise _unsupported("the scenario has no flows")
    ccas = [_check_flow(i, f) for i, f in enumerate(flows)]
    rtts = {f["rtt_ns"] for f in flows}
    if len(rtts) != 1:
        raise _unsupported(f"all flows must have the same RTT, got {sorted(rtts)} ns")
    rtt_ns = rtts.pop()
    if 2 * fwd["delay_ns"] > rtt_ns:
        raise _unsupported(f"2 × {BOTTLENECK}.delay exceeds the flows' RTT")
    queue, buffer_bytes = _queue_limit(fwd)
    return {
        "rate_bps": float(fwd["rate_bps"]),
        "rtt_s": rtt_ns / 1e9,
        "bottleneck_delay_s": fwd["delay_ns"] / 1e9,
        "queue_limit": queue,
        "buffer_bytes": buffer_bytes,
        "duration_s": scenario["duration_ns"] / 1e9,
        "ccas": ccas,
        "seed": int(scenario.get("seed", 1)),
    }


# --------------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------------

def require_ns3(python: Optional[str] = None) -> None:
    """Raise ``RuntimeError(NS3_MISSING)`` unless ns-3 can be imported by the interpreter
    ``run_ns3`` would use (``python``, else ``$CCBENCH_NS3_PYTHON``, else this one).

    Only looks the package up (``find_spec``); the expensive import happens in the child.
    """
    python = python or os.environ.get("CCBENCH_NS3_PYTHON")
    if python is None:
        import importlib.util

        try:
            spec = importlib.util.find_spec("ns3")
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            raise RuntimeError(NS3_MISSING)
        return
    probe = "import importlib.util, sys; sys.exit(importlib.util.find_spec('ns3') is None)"
    try:
        found = subprocess.run([python, "-c", probe], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        found = False
    if not found:
        raise RuntimeError(f"{NS3_MISSING} (looked in {python})")


def run_ns3(scenario: dict, timeout: Optional[float] = None,
            python: Optional[str] = None) -> dict:
    """Run a validated ``scenario`` (:func:`ccbench.validate`) in ns-3 in a child process and
    return its measurements.

    Returns a dict with ``wall_s`` (``Simulator::Run()`` only), ``import_s``, ``setup_s``,
    ``destroy_s``, ``process_s`` (the whole child, seen from here), ``sim_s``, ``events``,
    ``goodput_mbps`` (one per flow), ``utilization`` and ``drops`` of the bottleneck, and the
    ``config`` used.

    ``python`` (or the environment variable ``CCBENCH_NS3_PYTHON``) names another interpreter
    that has ns-3 installed; by default the current one must have it, or ``RuntimeError`` is
    raised with the pip command that installs it. A child that fails or times out raises
    ``RuntimeError`` too.
    """
    params = translate(scenario)
    python = python or os.environ.get("CCBENCH_NS3_PYTHON")
    if python is None:
        require_ns3()
        python = sys.executable
    loader = ("import importlib.util, sys\n"
              "spec = importlib.util.spec_from_file_location('ccbench_ns3_worker', sys.argv[1])\n"
              "mod = importlib.util.module_from_spec(spec)\n"
              "spec.loader.exec_module(mod)\n"
              "sys.exit(mod._worker_main())\n")
    # The bindings glob the working directory recursively for shared libraries; start the
    # child in an empty directory so it neither wanders through a Cargo target/ nor picks up a
    # stray library.
    with tempfile.TemporaryDirectory(prefix="ccbench-ns3-") as cwd:
        start = time.perf_counter()
        try:
            proc = subprocess.run([python, "-c", loader, os.path.abspath(__file__)],
                                  input=json.dumps(params), capture_output=True, text=True,
                                  cwd=cwd, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"ns-3 did not finish within {timeout:g} s") from None
        except OSError as exc:
            raise RuntimeError(f"cannot start {python}: {exc}") from None
        elapsed = time.perf_counter() - start
    if proc.returncode == _EXIT_NO_NS3 or "Install the ns3 package" in (proc.stderr or ""):
        # The second form is the wheel's own `ns` stub failing to load `ns3.ns`.
        raise RuntimeError(NS3_MISSING)
    result = None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            try:
                result = json.loads(line)
            except ValueError:
                pass
            break
    if proc.returncode != 0 or result is None:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise RuntimeError(f"ns-3 run failed (exit status {proc.returncode}): {tail}")
    result["process_s"] = elapsed
    return result


# --------------------------------------------------------------------------------------------
# Child side: everything below runs only in the ns-3 process
# --------------------------------------------------------------------------------------------

_HELPERS = r"""
#include "ns3/packet-sink.h"
#include "ns3/queue-disc.h"
namespace ccbench_ns3 {
inline uint64_t total_rx(ns3::Ptr<ns3::Application> app) {
    return ns3::DynamicCast<ns3::PacketSink>(app)->GetTotalRx();
}
inline uint64_t sent_bytes(ns3::Ptr<ns3::QueueDisc> q) { return q->GetStats().nTotalSentBytes; }
inline uint64_t sent_packets(ns3::Ptr<ns3::QueueDisc> q) { return q->GetStats().nTotalSentPackets; }
inline uint64_t dropped_packets(ns3::Ptr<ns3::QueueDisc> q) {
    return q->GetStats().nTotalDroppedPackets;
}
}
"""


def _simulate(ns, cppyy, p: dict) -> dict:
    t0 = time.perf_counter()
    cppyy.cppdef(_HELPERS)
    helpers = cppyy.gbl.ccbench_ns3

    def sval(text):
        return ns.StringValue(str(text))

    def time_str(seconds):
        return f"{int(round(seconds * 1e9))}ns"

    n = len(p["ccas"])
    rate_bps, rtt, duration = p["rate_bps"], p["rtt_s"], p["duration_s"]
    ns.RngSeedManager.SetSeed(max(1, p["seed"]))

    # Path-wide upper bound on a window: BDP plus the buffer, with margin.
    bdp = rate_bps * rtt / 8
    snd_buf = int(min(2**31 - 1, max(4 * (bdp + p["buffer_bytes"]), 1 << 20)))

    cfg = ns.Config
    cfg.SetDefault("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpCubic.GetTypeId()))
    cfg.SetDefault("ns3::TcpL4Protocol::RecoveryType",
                   ns.TypeIdValue(ns.TcpPrrRecovery.GetTypeId()))
    cfg.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(_MSS))
    cfg.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    cfg.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    cfg.SetDefault("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(40)))
    cfg.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(snd_buf))
    cfg.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(64 << 20))
    cfg.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    cfg.SetDefault("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(True))
    cfg.SetDefault("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    # MinRto stays at ns-3's default of 1 s. ns-3 floors the whole RTO at MinRto, Linux (and
    # ccbench) floor only the variance term: RTO = SRTT + max(4·RTTVAR, 200 ms). With a full
    # 1-BDP buffer SRTT is ~2 × the base RTT and RTTVAR is tiny, so MinRto = 200 ms gave ns-3 a
    # spurious RTO in every loss recovery (NewReno fell to a quarter window, 93% utilisation).
    cfg.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.Seconds(_MIN_RTO_S)))
    cfg.SetDefault("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(1)))

    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(n)
    receivers.Create(n)
    routers.Create(2)
    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(receivers)
    stack.Install(routers)

    access_delay = (rtt / 2 - p["bottleneck_delay_s"]) / 2
    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", sval(_ACCESS_RATE))
    access.SetChannelAttribute("Delay", sval(time_str(access_delay)))

    bottleneck = ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", sval(f"{int(rate_bps)}bps"))
    bottleneck.SetChannelAttribute("Delay", sval(time_str(p["bottleneck_delay_s"])))
    # The device queue holds one packet; the queue disc below is the real buffer.
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", sval("1p"))
    core = bottleneck.Install(routers.Get(0), routers.Get(1))

    tch = ns.TrafficControlHelper()
    tch.SetRootQueueDisc("ns3::FifoQueueDisc")
    cfg.SetDefault("ns3::FifoQueueDisc::MaxSize", sval(p["queue_limit"]))
    forward_qd = tch.Install(core.Get(0)).Get(0)
    cfg.SetDefault("ns3::FifoQueueDisc::MaxSize", sval("10000p"))
    tch.Install(core.Get(1))

    ip = ns.Ipv4AddressHelper()
    ip.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    ip.Assign(core)
    sink_addresses = []
    for i in range(n):
        s_dev = access.Install(senders.Get(i), routers.Get(0))
        d_dev = access.Install(routers.Get(1), receivers.Get(i))
        ip.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        ip.Assign(s_dev)
        ip.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        sink_addresses.append(ip.Assign(d_dev).GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    port = 5000
    sinks = []
    for i, cca in enumerate(p["ccas"]):
        node_id = senders.Get(i).GetId()
        cfg.Set(f"/NodeList/{node_id}/$ns3::TcpL4Protocol/SocketType",
                ns.TypeIdValue(ns.TypeId.LookupByName(_CCAS[cca])))
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink_apps = sink_helper.Install(receivers.Get(i))
        sink_apps.Start(ns.Seconds(0))
        sinks.append(sink_apps.Get(0))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(sink_addresses[i], port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(16 * _MSS))
        bulk_apps = bulk.Install(senders.Get(i))
        bulk_apps.Start(ns.Seconds(0))
    ns.Simulator.Stop(ns.Seconds(duration))
    setup_s = time.perf_counter() - t0

    t1 = time.perf_counter()
    ns.Simulator.Run()
    wall_s = time.perf_counter() - t1

    sim_s = ns.Simulator.Now().GetSeconds()
    events = int(ns.Simulator.GetEventCount())
    rx = [int(helpers.total_rx(s)) for s in sinks]
    sent_bytes = int(helpers.sent_bytes(forward_qd))
    sent_packets = int(helpers.sent_packets(forward_qd))
    drops = int(helpers.dropped_packets(forward_qd))

    t2 = time.perf_counter()
    ns.Simulator.Destroy()
    destroy_s = time.perf_counter() - t2

    return {
        "wall_s": wall_s,
        "setup_s": setup_s,
        "destroy_s": destroy_s,
        "sim_s": sim_s,
        "events": events,
        "goodput_mbps": [b * 8 / duration / 1e6 for b in rx],
        "bytes_delivered": rx,
        "utilization": (sent_bytes + 2 * sent_packets) * 8 / (rate_bps * duration),
        "drops": drops,
        "config": {**p, "snd_buf_bytes": snd_buf, "min_rto_s": _MIN_RTO_S, "access_rate": _ACCESS_RATE,
                   "access_delay_s": access_delay,
                   "queue": f"FifoQueueDisc {p['queue_limit']} + 1p device"},
    }


def _worker_main() -> int:
    params = json.loads(sys.stdin.read())
    t0 = time.perf_counter()
    try:
        import cppyy
        from ns import ns  # the ns3 wheel's bindings (cppyy)
    except ImportError as exc:
        print(json.dumps({"error": f"{NS3_MISSING} ({exc})"}))
        return _EXIT_NO_NS3
    import_s = time.perf_counter() - t0
    result = _simulate(ns, cppyy, params)
    result["import_s"] = import_s
    result["ns3_version"] = "3.44"
    sys.stdout.flush()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_worker_main())
