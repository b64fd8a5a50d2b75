"""The fLEDBAT paper's P2P topologies as scenario dicts: ccbench.topology.swarm and single_peer."""

import statistics

import pytest

import ccbench
from ccbench.topology import access_delays_ms, neighbour_sets, single_peer, swarm


def _by_name(rows):
    return {row["name"]: row for row in rows}


def test_neighbour_graph_is_symmetric_regular_and_seeded():
    for peers, degree in ((100, 10), (20, 10), (12, 3)):
        graph = neighbour_sets(peers, degree, seed=4)
        assert all(len(nbs) == degree and i not in nbs for i, nbs in enumerate(graph))
        assert all(i in graph[j] for i, nbs in enumerate(graph) for j in nbs)
    assert neighbour_sets(100, 10, seed=4) == neighbour_sets(100, 10, seed=4)
    assert neighbour_sets(100, 10, seed=4) != neighbour_sets(100, 10, seed=5)


def test_access_delays_have_the_papers_mean():
    # L358: the access link's propagation delay, mean 37.9 ms. 20 000 lognormal draws (σ_ln 0.8):
    # the sample mean's standard error is 37.9·sqrt(e^0.64 − 1)/sqrt(20 000) ≈ 0.25 ms, so ±1 ms
    # is four of them.
    d = access_delays_ms(20_000, "heterogeneous", seed=3)
    assert statistics.fmean(d) == pytest.approx(37.9, abs=1.0)
    assert min(d) > 0 and statistics.pstdev(d) > 10
    # L358: homogeneous peers' RTT 50 ms = 2·(d + d) over two access links.
    assert access_delays_ms(5, "homogeneous") == [12.5] * 5


def test_swarm_shape_access_links_and_slots():
    sc = swarm(peers=100, access="adsl", http_peers=25, seed=7, duration="1s")
    links = _by_name(sc["links"])
    assert len([n for n in links if n.startswith("up-")]) == 100
    up = links["up-3"]
    assert (up["from"], up["to"], up["rate"], up["buffer"]) == ("p3", "core", "1Mbps", "100p")
    assert up["reverse"] == {"rate": "8Mbps", "buffer": "100p"}
    peers = [n for n in sc["nodes"] if n["name"].startswith("p")]
    assert len(peers) == 100 and all(n["upload_slots"] == 5 for n in peers)
    p2p = [f for f in sc["flows"] if not f["name"].startswith("http")]
    http = [f for f in sc["flows"] if f["name"].startswith("http")]
    assert len(p2p) == 1000 and len(http) == 25 and len({f["to"] for f in http}) == 25
    assert all(f["chunk_size"] == "250KB" and f["persistence"] == 0.8 for f in p2p)
    assert all(f["chunk_size"] == {"min": "1B", "max": "512KB"} and f["persistence"] == 0.0
               and f["cca"] == "newreno" for f in http)


def test_swarm_paths_rtts_and_reverse_acks_in_the_core():
    sc = swarm(peers=12, delays="heterogeneous", seed=2, duration="2s", http_peers=2)
    d = access_delays_ms(12, "heterogeneous", seed=2)
    links = _by_name(sc["links"])
    # L358: each access link's one-way delay is its peer's d_i (mean 37.9 ms); the HTTP server's
    # (unstated) the mean, 37.9 ms.
    assert [float(links[f"up-{i}"]["delay"].removesuffix("ms")) for i in range(12)] == pytest.approx(d, abs=1e-6)
    assert links["http"]["delay"] == "37.900000ms"
    flows = _by_name(f for f in ccbench.run(sc).summary["flows"] if not f["name"].startswith("http"))
    for name, flow in flows.items():
        i, j = (int(p[1:]) for p in name.split("-"))
        # Data: i's uplink then j's downlink, ACKs back the other way: base RTT 2·(d_i + d_j)
        # (plus ≤ 1 ms jitter).
        assert flow["path"] == [f"up-{i}", f"up-{j}-rev"]
        assert 2 * (d[i] + d[j]) <= flow["rtt_ms"] <= 2 * (d[i] + d[j]) + 1.0 + 1e-6
    # Mean base RTT 2·(37.9 + 37.9) = 151.6 ms over many peers (±10 %: 1000 draws, σ_ln 0.8).
    big = access_delays_ms(1000, "heterogeneous", seed=2)
    assert 4 * statistics.fmean(big) == pytest.approx(151.6, rel=0.1)


def test_homogeneous_swarm_runs_with_acks_on_the_uplinks():
    r = ccbench.run(swarm(peers=10, neighbours=4, upload_slots=2, delays="homogeneous", access="ftth",
                          duration="10s", seed=1))
    flows = r.flow_summary
    # Homogeneous (L358): every path RTT is 50 ms (12.5 ms on each access link, four crossings)
    # plus the U[0, 1] ms per-flow jitter.
    assert flows["rtt_ms"].between(50.0, 51.0).all()
    # Every peer uploads (a neighbour may still wait for a slot after 10 s).
    assert (flows.groupby("from")["chunks"].sum() > 0).all() and flows["cca"].eq("fledbat").all()
    links = _by_name(r.summary["links"])
    # Each uplink carries its peer's uploads (data) and its downloads' ACKs: both directions move.
    assert all(links[f"up-{i}"]["bytes_departed"] > 0 and links[f"up-{i}-rev"]["bytes_departed"] > 0
               for i in range(10))
    assert all(links[f"up-{i}"]["jain_short"] is not None for i in range(10))


def test_single_peer_is_one_queue_with_per_access_link_delays():
    sc = single_peer(delays="heterogeneous", seed=5, persistence=0.5, duration="30s")
    # L358: the uploader's access link has d_0, neighbour j's d_j (all of mean 37.9 ms, one way):
    # the flow to j has the base RTT 2·(d_0 + d_j) (plus ≤ 1 ms jitter).
    d = access_delays_ms(11, "heterogeneous", seed=5)
    assert float(_by_name(sc["links"])["up"]["delay"].removesuffix("ms")) == pytest.approx(d[0], abs=1e-6)
    r = ccbench.run(sc)
    flows = r.flow_summary
    assert list(flows["path"].map(tuple)) == [("up",)] * 10
    for dj, got in zip(d[1:], flows["rtt_ms"]):
        assert 2 * (d[0] + dj) <= got <= 2 * (d[0] + dj) + 1.0 + 1e-6
    # P_P = 0.5: about every other chunk opens a fresh connection on some neighbour.
    assert flows["connections"].sum() > 0.3 * flows["chunks"].sum()
    assert r.link("up")["efficiency"] > 0.5


def test_homogeneous_single_peer_has_the_papers_50ms_rtt():
    sc = single_peer(delays="homogeneous", seed=5)
    assert _by_name(sc["links"])["up"]["delay"] == "0ms"
    assert all(f["rtt"] == "50.000000ms" for f in sc["flows"])


def test_start_spread_staggers_starts_within_bounds():
    sc = single_peer(start_spread=5.0, seed=3)
    starts = [float(f["start"].rstrip("s")) for f in sc["flows"]]
    assert all(0 <= s <= 5 for s in starts) and len(set(starts)) == 10
    assert all(f["start"] == "0s" for f in single_peer()["flows"])


def test_bad_arguments_name_the_parameter():
    with pytest.raises(ValueError, match="access"):
        swarm(access="dialup")
    with pytest.raises(ValueError, match="delays"):
        swarm(delays="random")
    with pytest.raises(ValueError, match="delays"):
        single_peer(delays="random")
    with pytest.raises(ValueError, match="neighbours"):
        swarm(peers=5, neighbours=10)
    with pytest.raises(ValueError, match="http_peers"):
        swarm(peers=10, neighbours=4, http_peers=11)
    with pytest.raises(ValueError, match="upload_slots"):
        single_peer(upload_slots=0)
    with pytest.raises(ValueError, match="start_spread"):
        single_peer(start_spread=-1.0)
    # Values the core checks come back from it naming the field.
    with pytest.raises(ccbench.ScenarioError, match=r"persistence"):
        ccbench.run(single_peer(persistence=1.5, duration="1s"))
