"""Builders of scenario dicts for common topologies, in the general ``[[links]]`` form: the
parking lot, and the fLEDBAT paper's P2P networks (:func:`swarm`, :func:`single_peer`).

They only arrange names and pass values through: units and every check stay in the core, so a
bad value is reported by :func:`ccbench.run` / :func:`ccbench.validate` naming its field.

>>> import ccbench
>>> from ccbench.topology import parking_lot
>>> r = ccbench.run(parking_lot(hops=3, duration="30s"))
>>> r.link_summary.set_index("name").loc[["l1", "l2", "l3"], "utilization"]
"""

from __future__ import annotations

import math
import random
from typing import Any, Dict, List, Optional


def parking_lot(hops: int = 3, *, rate: str = "10Mbps", delay: str = "10ms", buffer: str = "100p",
                aqm: str = "droptail", cca: str = "cubic", cross_cca: Optional[str] = None,
                duration: str = "60s", warmup: str = "0s", seed: int = 1,
                link: Optional[Dict[str, Any]] = None, flow: Optional[Dict[str, Any]] = None) -> dict:
    """A chain of ``hops`` links ``l1 … lN`` over nodes ``n0 … nN``; flow ``long`` crosses them
    all and flow ``cross<i>`` crosses link ``l<i>`` only.

    ``link`` adds keys to every link (``{"ecn": True}``), ``flow`` to every flow
    (``{"delayed_ack": False}``); ``cross_cca`` defaults to ``cca``.
    """
    if not isinstance(hops, int) or isinstance(hops, bool) or hops < 1:
        raise ValueError(f"parking_lot: hops must be a positive integer, got {hops!r}")
    nodes = [f"n{i}" for i in range(hops + 1)]
    links: List[dict] = [
        {"name": f"l{i}", "from": nodes[i - 1], "to": nodes[i], "rate": rate, "delay": delay,
         "buffer": buffer, "aqm": aqm, **(link or {})}
        for i in range(1, hops + 1)
    ]
    flows = [{"name": "long", "cca": cca, "from": nodes[0], "to": nodes[-1], **(flow or {})}]
    flows += [{"name": f"cross{i}", "cca": cross_cca or cca, "from": nodes[i - 1], "to": nodes[i],
               **(flow or {})} for i in range(1, hops + 1)]
    return {"duration": duration, "warmup": warmup, "seed": seed, "links": links, "flows": flows}


# ------------------------------------------------------------------ P2P (fLEDBAT paper, Section 9)

#: Access types of the fLEDBAT paper (L358): uplink rate, downlink rate; B = 100 packets both ways
#: (the paper gives B for the uplink; the notes (§4 item 12) assume the same for the downlink).
ACCESS = {"ftth": ("10Mbps", "10Mbps"), "adsl": ("1Mbps", "8Mbps")}
#: L358: "all peers have the same propagation delay RTT=50 ms" (homogeneous); "the propagation
#: delay of the access link of each peer is distributed according to realistic delay measurement
#: [43], with mean equal to 37.9 ms" (heterogeneous). A link's propagation delay is one way, so
#: 37.9 ms is the mean one-way delay d_i of peer i's access link, not a peer's RTT: a transfer
#: i → j crosses both access links each way, base RTT 2·(d_i + d_j), 151.6 ms on average. The
#: homogeneous 50 ms is the RTT between two peers: d = 12.5 ms on every access link. Of the
#: Meridian data [43] only the mean is given: a lognormal of that mean and σ_ln = 0.8 stands in
#: (notes §4 item 11).
HOMOGENEOUS_RTT_MS, ACCESS_DELAY_MEAN_MS, ACCESS_DELAY_SIGMA = 50.0, 37.9, 0.8
#: The homogeneous peers' one-way access delay: 2·(d + d) = 50 ms.
HOMOGENEOUS_ACCESS_DELAY_MS = HOMOGENEOUS_RTT_MS / 4
#: The paper's packets (L263): 1460 B payload + 40 B headers, ACKs not delayed (ns-2's sink).
PAPER_TCP = {"mss": 1460, "header_bytes": 40, "delayed_ack": False}
#: L386: HTTP pages uniform in [0, 512] KB (1 B: a page has at least one byte).
HTTP_PAGE = {"min": "1B", "max": "512KB"}
#: Not stated for the HTTP flows: ns-2's default TCP initial window (``windowInit_`` 2), the
#: simulator the paper ran (an assumption, [EXT]).
HTTP_INITIAL_WINDOW = 2


def access_delays_ms(count: int, delays: str = "heterogeneous", seed: int = 1) -> List[float]:
    """``count`` one-way access-link propagation delays d_i in ms, one per peer (L358): all
    12.5 ms (``"homogeneous"``, a 50 ms RTT between two peers) or lognormal draws of mean
    37.9 ms, σ_ln 0.8 (``"heterogeneous"``), drawn from the seed's own stream (:func:`_stream`).
    A transfer i → j has the base RTT 2·(d_i + d_j)."""
    if delays == "homogeneous":
        return [HOMOGENEOUS_ACCESS_DELAY_MS] * count
    if delays != "heterogeneous":
        raise ValueError(f"delays must be 'homogeneous' or 'heterogeneous', got {delays!r}")
    sigma = ACCESS_DELAY_SIGMA
    # The log-space mean that gives the wanted mean: μ = ln m − σ²/2.
    mu = math.log(ACCESS_DELAY_MEAN_MS) - sigma * sigma / 2
    rng = _stream(seed, "rtt")  # the stream's name predates the reading as access delays
    return [rng.lognormvariate(mu, sigma) for _ in range(count)]


def mean_access_delay_ms(delays: str) -> float:
    """The mean one-way access delay of ``delays``: 12.5 ms (homogeneous) or 37.9 ms."""
    access_delays_ms(0, delays)  # checks the name
    return HOMOGENEOUS_ACCESS_DELAY_MS if delays == "homogeneous" else ACCESS_DELAY_MEAN_MS


def _stream(seed: int, what: str) -> random.Random:
    """An independent, reproducible stream per kind of draw (a string seed is hashed with
    SHA-512, the same on every platform). The standard library's generator keeps the helpers
    free of numpy, so building a scenario stays as cheap as importing ccbench."""
    return random.Random(f"ccbench-topology-{what}-{seed}")


def neighbour_sets(peers: int, neighbours: int, seed: int = 1) -> List[List[int]]:
    """A random ``neighbours``-regular symmetric graph on ``peers`` peers: the circulant graph
    (each peer linked to the ``neighbours/2`` next ones on a ring, plus the opposite one when
    ``neighbours`` is odd) over a seeded random ordering of the peers. Every peer gets exactly
    ``neighbours`` distinct neighbours (a pairing model would almost never draw a simple graph at
    100 peers × 10)."""
    if not (0 < neighbours < peers) or (neighbours % 2 and peers % 2):
        raise ValueError(f"neighbours must be in [1, peers - 1] (and even when peers is odd), "
                         f"got {neighbours} for {peers} peers")
    ring = list(range(peers))
    _stream(seed, "neighbours").shuffle(ring)
    offsets = list(range(1, neighbours // 2 + 1)) + ([peers // 2] if neighbours % 2 else [])
    sets: List[set] = [set() for _ in range(peers)]
    for position, peer in enumerate(ring):
        for offset in offsets:
            other = ring[(position + offset) % peers]
            sets[peer].add(other)
            sets[other].add(peer)
    return [sorted(s) for s in sets]


def _positive_int(name: str, value: Any, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer ≥ {minimum}, got {value!r}")
    return value


def _access(access: str):
    try:
        return ACCESS[access]
    except KeyError:
        raise ValueError(f"access must be one of {', '.join(ACCESS)}, got {access!r}") from None


def _ms(value: float) -> str:
    return f"{value:.6f}ms"


def _starts(count: int, spread_s: float, seed: int) -> List[str]:
    """Start times uniform in [0, spread_s] s, one per flow (all 0 without a spread)."""
    if not spread_s:
        return ["0s"] * count
    if spread_s < 0:
        raise ValueError(f"start_spread must be ≥ 0 seconds, got {spread_s!r}")
    rng = _stream(seed, "starts")
    return [f"{rng.uniform(0.0, spread_s):.6f}s" for _ in range(count)]


def _chunked(name: str, cca: str, cc: Optional[Dict[str, Any]], chunk_size: Any, persistence: float,
             flow: Optional[Dict[str, Any]]) -> dict:
    entry = {"name": name, "cca": cca, **PAPER_TCP, "initial_window": 1, "chunk_size": chunk_size,
             "persistence": persistence, "rtt_jitter": "1ms"}
    if cc:
        entry["cc"] = dict(cc)
    return {**entry, **(flow or {})}


def swarm(peers: int = 100, *, access: str = "ftth", delays: str = "heterogeneous",
          neighbours: int = 10, upload_slots: int = 5, chunk_size: Any = "250KB",
          persistence: float = 0.8, cca: str = "fledbat", cc: Optional[Dict[str, Any]] = None,
          http_peers: int = 0, http_cca: str = "newreno", http_rate: str = "1Gbps",
          buffer: str = "100p", start_spread: float = 0.0, duration: str = "60s", warmup: str = "0s",
          seed: int = 1, flow: Optional[Dict[str, Any]] = None) -> dict:
    """The fLEDBAT paper's BitTorrent-like swarm (Section 9.2, L354–L358, L381–L386) as a
    ``[[links]]`` scenario: a star of ``peers`` peers around one ``core`` node.

    * Peer ``p<i>`` reaches the core over its access link ``up-<i>`` (peer → core = its uplink at
      the access type's up rate, ``buffer`` packets); the link's reverse direction
      ``up-<i>-rev`` is its downlink (down rate, its own ``buffer``). ``access`` is ``"ftth"``
      (10/10 Mbps) or ``"adsl"`` (1 Mbps up, 8 Mbps down), B = 100 packets (L358). The core itself
      is a node, not a link, so it never queues: only access links are bottlenecks.
    * Delays (``delays``, L358, :func:`access_delays_ms`): peer i's access link has the one-way
      propagation delay d_i (both directions). Heterogeneous (the default): "the propagation
      delay of the access link of each peer ... with mean equal to 37.9 ms", d_i a lognormal
      draw of mean 37.9 ms, σ_ln 0.8 per peer (the stand-in for the paper's Meridian data [43]).
      Homogeneous: "all peers have the same propagation delay RTT=50 ms", d_i = 12.5 ms. A
      transfer i → j crosses both access links each way, so its base RTT is 2·(d_i + d_j): 50 ms
      between homogeneous peers, 151.6 ms on average between heterogeneous ones. The delay is the
      peer's, not the flow's (the paper puts it on "the access link of each peer"), so the
      uploads and downloads of one peer all see it: why it sits on the link and not in a flow's
      ``rtt``.
    * Neighbours: a random ``neighbours``-regular symmetric graph (:func:`neighbour_sets`); peer
      i has one chunked flow ``p<i>-p<j>`` to each neighbour j (cca ``cca``, parameters ``cc``)
      and node ``upload_slots``: only that many upload at once; after each chunk (``chunk_size``,
      a size or ``{"min": …, "max": …}``) the flow keeps its connection with probability
      ``persistence`` (P_P) or hands its slot to an idle neighbour at random over a fresh
      connection (L354). The next chunk starts after the last ACK: the paper's idle RTT (L383).
      The ACKs of a peer's downloads leave over its own uplink (the default reverse path),
      mixing with its uploads (L381).
    * HTTP background (``http_peers`` > 0, L386): a node ``http`` behind link ``http``
      (``http_rate``, a 10 000-packet buffer so the server never drops, one-way delay the mean
      access delay of ``delays``, 37.9 ms or 12.5 ms, i.e. an average peer's: the paper does not
      give it); ``http_peers`` distinct random peers each download pages one after another from
      it (flow ``http-p<i>``): sizes uniform in [1 B, 512 KB], a fresh
      connection per page (persistence 0), initial window 2 (ns-2's default, an assumption), cca
      ``http_cca`` (NewReno by default: the paper's "traditional TCP" is its reference NewReno
      with SACK, L271).

    Every TCP flow uses the paper's packets (1460 B payload + 40 B headers, ACKs not delayed,
    L263), a fresh connection's window of 1 segment (L354: "resetting ... the congestion window
    to 1"; the controllers' 2-segment floor applies from the first ACK on) and a per-flow
    constant extra delay uniform in [0, 1] ms against synchronisation (the reference scenario's
    jitter, L271). ``start_spread`` (seconds) starts each P2P flow at a time uniform in
    [0, start_spread] (the paper does not say when peers start; a slot whose flow has not
    started yet waits for it). ``flow`` adds keys to every P2P flow. Random draws (delays,
    neighbours, starts, HTTP peers) come from ``seed``, which is also the scenario's seed.
    """
    _positive_int("peers", peers, 2)
    _positive_int("upload_slots", upload_slots)
    _positive_int("http_peers", http_peers, 0)
    if http_peers > peers:
        raise ValueError(f"http_peers must be at most peers ({peers}), got {http_peers}")
    up, down = _access(access)
    access_delays = access_delays_ms(peers, delays, seed)
    graph = neighbour_sets(peers, neighbours, seed + 1)
    nodes = [{"name": "core"}] + [{"name": f"p{i}", "upload_slots": upload_slots} for i in range(peers)]
    links = [{"name": f"up-{i}", "from": f"p{i}", "to": "core", "rate": up, "delay": _ms(d),
              "buffer": buffer, "reverse": {"rate": down, "buffer": buffer}} for i, d in enumerate(access_delays)]
    pairs = [(i, j) for i in range(peers) for j in graph[i]]
    starts = _starts(len(pairs), start_spread, seed + 3)
    flows = [{**_chunked(f"p{i}-p{j}", cca, cc, chunk_size, persistence, flow), "from": f"p{i}", "to": f"p{j}",
              "start": start} for (i, j), start in zip(pairs, starts)]
    if http_peers:
        node, link, pages = _http_background(peers, http_peers, http_cca, http_rate,
                                             mean_access_delay_ms(delays), seed + 2)
        nodes.append(node)
        links.append(link)
        flows += pages
    return {"duration": duration, "warmup": warmup, "seed": seed, "nodes": nodes, "links": links,
            "flows": flows}


def _http_background(peers: int, count: int, cca: str, rate: str, delay_ms: float, seed: int):
    """The HTTP server's node, its link (one-way delay ``delay_ms``) and one page-by-page
    download to each of ``count`` distinct random peers."""
    link = {"name": "http", "from": "http", "to": "core", "rate": rate, "delay": _ms(delay_ms),
            "buffer": "10000p"}
    pages = [{**_chunked(f"http-p{i}", cca, None, dict(HTTP_PAGE), 0.0, None),
              "initial_window": HTTP_INITIAL_WINDOW, "from": "http", "to": f"p{i}"}
             for i in _http_peers(peers, count, seed)]
    return {"name": "http"}, link, pages


def _http_peers(peers: int, count: int, seed: int) -> List[int]:
    return sorted(_stream(seed, "http").sample(range(peers), count))


def single_peer(*, delays: str = "homogeneous", neighbours: int = 10, upload_slots: int = 5,
                chunk_size: Any = "250KB", persistence: float = 0.8, cca: str = "fledbat",
                cc: Optional[Dict[str, Any]] = None, rate: str = "10Mbps", buffer: str = "100p",
                start_spread: float = 0.0, duration: str = "60s", warmup: str = "0s", seed: int = 1,
                flow: Optional[Dict[str, Any]] = None) -> dict:
    """One BitTorrent-like peer and its uplink queue in isolation (the fLEDBAT paper's
    Section 9.1, L360–L365): node ``peer`` uploads over link ``up`` (``rate``, ``buffer``;
    FTTH's 10 Mbps and 100 packets by default, L358) to node ``core``; ACKs come back over
    ``up-rev``, which carries nothing else.

    Its ``neighbours`` flows ``nb<j>`` (cca ``cca``, parameters ``cc``) are chunked exactly as in
    :func:`swarm` (``chunk_size``, ``persistence`` P_P, node ``upload_slots``). Only the uplink
    queues, so a neighbour's access link is just a delay in its flow's ``rtt``. Delays (L358):

    * ``"homogeneous"`` (the default): "all peers have the same propagation delay RTT=50 ms":
      each flow's ``rtt`` is 50 ms and ``up`` has no delay (with one delay for every peer,
      where it sits makes no difference to the one queue).
    * ``"heterogeneous"``: "the propagation delay of the access link of each peer ... with mean
      equal to 37.9 ms", a one-way delay per access link, as in :func:`swarm`: one lognormal
      draw of mean 37.9 ms, σ_ln 0.8 per peer (:func:`access_delays_ms`, ``neighbours`` + 1
      draws): the uploader's d_0 on ``up`` (both directions) and neighbour j's d_j, twice (its
      access link each way), in flow ``nb<j>``'s ``rtt``, so the flow to j has the base RTT
      2·(d_0 + d_j), 151.6 ms on average.

    Every flow also gets the [0, 1] ms jitter (L271), the paper's packets (L263), the 1-segment
    fresh window and the ``start_spread`` of :func:`swarm`.
    """
    _positive_int("neighbours", neighbours)
    _positive_int("upload_slots", upload_slots)
    if delays == "homogeneous":
        uplink_delay, rtts = "0ms", [_ms(HOMOGENEOUS_RTT_MS)] * neighbours
    else:
        d = access_delays_ms(neighbours + 1, delays, seed)
        uplink_delay, rtts = _ms(d[0]), [_ms(2 * dj) for dj in d[1:]]
    links = [{"name": "up", "from": "peer", "to": "core", "rate": rate, "delay": uplink_delay,
              "buffer": buffer}]
    nodes = [{"name": "peer", "upload_slots": upload_slots}, {"name": "core"}]
    starts = _starts(neighbours, start_spread, seed + 3)
    flows = [{**_chunked(f"nb{j}", cca, cc, chunk_size, persistence, flow), "from": "peer", "to": "core",
              "rtt": rtt, "start": start} for j, (rtt, start) in enumerate(zip(rtts, starts))]
    return {"duration": duration, "warmup": warmup, "seed": seed, "nodes": nodes, "links": links,
            "flows": flows}
