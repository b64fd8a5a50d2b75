//! Chunk-by-chunk transfers (the fLEDBAT paper's Section 7.1 and 9 application): chunks follow
//! each other only after the last ACK, persistence P_P keeps the connection, otherwise a fresh
//! one opens (to another neighbour when the node has upload slots), and per-flow RTT draws.

mod common;

use common::*;

const ONE: &str = r#"
duration = "30s"
host_noise = "off"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
buffer = "100p"
[[flows]]
cca = "newreno"
chunk_size = "250KB"
delayed_ack = false
"#;

fn flow(r: &ccbench_sim::SimResult, i: usize) -> &ccbench_sim::metrics::FlowSummary {
    &r.summary.flows[i]
}

#[test]
fn chunks_follow_each_other_over_one_connection() {
    let r = run_checked(ONE, &[], None, 997);
    let f = flow(&r, 0);
    let chunks = f.chunks.unwrap();
    assert_eq!(f.connections, Some(1), "P_P = 1 keeps the connection");
    assert!(chunks > 50, "{chunks} chunks of 250 KB in 30 s at 10 Mbps");
    // Every completed chunk is delivered whole; at most the current one is partial.
    assert!(f.bytes_delivered >= chunks * 250_000 && f.bytes_delivered < (chunks + 1) * 250_000);
    assert_eq!(f.fct_s, None);
    assert!(r.conservation.holds());
    // One idle RTT per chunk costs throughput.
    let util = link(&r, "bottleneck").utilization;
    assert!((0.6..0.97).contains(&util), "utilization {util} with a pause per chunk");
}

#[test]
fn without_persistence_every_chunk_opens_a_fresh_connection() {
    let r = run_checked(ONE, &["flows[0].persistence=0"], None, 997);
    let f = flow(&r, 0);
    let (chunks, conns) = (f.chunks.unwrap(), f.connections.unwrap());
    assert!(chunks > 20, "{chunks} chunks");
    assert!(conns == chunks + 1 || conns == chunks, "{conns} connections for {chunks} chunks");
    assert!(f.bytes_delivered >= chunks * 250_000);
    assert!(r.conservation.holds());
    let half = run(ONE, &["flows[0].persistence=0.5"], Some(3));
    let (c, n) = (flow(&half, 0).chunks.unwrap(), flow(&half, 0).connections.unwrap());
    let share = (n - 1) as f64 / c as f64;
    assert!((0.3..0.7).contains(&share), "{n} connections for {c} chunks at P_P = 0.5");
}

const PEER: &str = r#"
duration = "20s"
host_noise = "off"
output.bin = "10ms"
[[nodes]]
name = "peer"
upload_slots = 2
[[nodes]]
name = "net"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[nodes]]
name = "c"
[[nodes]]
name = "d"
[[links]]
name = "up"
from = "peer"
to = "net"
rate = "10Mbps"
buffer = "100p"
[[links]]
name = "n1"
from = "net"
to = "a"
rate = "1Gbps"
delay = "10ms"
[[links]]
name = "n2"
from = "net"
to = "b"
rate = "1Gbps"
delay = "20ms"
[[links]]
name = "n3"
from = "net"
to = "c"
rate = "1Gbps"
delay = "5ms"
[[links]]
name = "n4"
from = "net"
to = "d"
rate = "1Gbps"
delay = "15ms"
[[flows]]
name = "to-a"
cca = "fledbat"
from = "peer"
to = "a"
chunk_size = "100KB"
persistence = 0.5
[[flows]]
name = "to-b"
cca = "fledbat"
from = "peer"
to = "b"
chunk_size = "100KB"
persistence = 0.5
[[flows]]
name = "to-c"
cca = "fledbat"
from = "peer"
to = "c"
chunk_size = "100KB"
persistence = 0.5
[[flows]]
name = "to-d"
cca = "fledbat"
from = "peer"
to = "d"
chunk_size = "100KB"
persistence = 0.5
"#;

#[test]
fn upload_slots_bound_the_neighbours_served_at_once() {
    let r = run_checked(PEER, &[], None, 997);
    assert!(r.conservation.holds());
    let flows = &r.summary.flows;
    assert!(flows.iter().all(|f| f.chunks.unwrap() > 0), "every neighbour gets chunks in turn");
    let conns: u64 = flows.iter().map(|f| f.connections.unwrap()).sum();
    let chunks: u64 = flows.iter().map(|f| f.chunks.unwrap()).sum();
    assert!(conns as f64 > 0.3 * chunks as f64, "{conns} connections for {chunks} chunks");
    // In each 10 ms bin at most the two slots' flows deliver, plus one handing over its slot.
    let s = &r.flows;
    let bins = s.t_s.len() / flows.len();
    let busiest = (0..bins)
        .map(|b| (0..flows.len()).filter(|&f| s.goodput_mbps[b * flows.len() + f] > 0.0).count())
        .max()
        .unwrap();
    assert!(busiest <= 3, "{busiest} neighbours served in one 10 ms bin with 2 slots");
    assert!(link(&r, "up").utilization > 0.8);
}

#[test]
fn chunked_runs_are_deterministic() {
    let a = run(PEER, &[], Some(5));
    let b = run(PEER, &[], Some(5));
    assert_eq!(summary_json(&a), summary_json(&b));
    let c = run(PEER, &[], Some(6));
    assert_ne!(summary_json(&a), summary_json(&c), "the seed moves slot and persistence draws");
}

#[test]
fn uniform_chunk_sizes_fresh_connections_like_http() {
    let r =
        run(ONE, &["flows[0].chunk_size={ min = \"1B\", max = \"512KB\" }", "flows[0].persistence=0"], None);
    let f = flow(&r, 0);
    let mean = f.bytes_delivered as f64 / f.chunks.unwrap() as f64;
    assert!((180e3..330e3).contains(&mean), "mean object {mean} B, U[0, 512 KB] has 256 KB");
}

#[test]
fn drawn_rtts_and_jitter_shape_each_flow() {
    let toml = format!("{ONE}count = 200\nrtt = {{ lognormal = \"37.9ms\", sigma = 0.8 }}\n");
    let sc = ccbench_sim::parse_str(&toml, "t.toml", &[], None).unwrap();
    let rtts: Vec<f64> = sc.flows.iter().map(|f| f.rtt as f64 / 1e6).collect();
    let mean = rtts.iter().sum::<f64>() / rtts.len() as f64;
    assert!((30.0..46.0).contains(&mean), "mean drawn RTT {mean} ms");
    assert!(rtts.iter().any(|&r| r < 20.0) && rtts.iter().any(|&r| r > 60.0), "a spread of RTTs");
    let other = ccbench_sim::parse_str(&toml, "t.toml", &[], Some(9)).unwrap();
    assert_ne!(other.flows[0].rtt, sc.flows[0].rtt, "--seed redraws");
    let listed = format!("{ONE}count = 2\nrtt = [\"20ms\", \"80ms\"]\nrtt_jitter = \"1ms\"\n");
    let sc = ccbench_sim::parse_str(&listed, "t.toml", &[], None).unwrap();
    let (a, b) = (sc.flows[0].rtt, sc.flows[1].rtt);
    assert!((20_000_000..=21_000_000).contains(&a) && (80_000_000..=81_000_000).contains(&b), "{a} {b}");
    assert_ne!(a - 20_000_000, b - 80_000_000, "each flow draws its own jitter");
}

#[test]
fn bad_chunk_and_rtt_keys_name_their_field() {
    let err = |sets: &[&str]| {
        let ov: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        ccbench_sim::parse_str(ONE, "t.toml", &ov, None).unwrap_err().field
    };
    assert_eq!(err(&["flows[0].chunk_size=\"0B\""]), "flows[0].chunk_size");
    assert_eq!(err(&["flows[0].persistence=1.5"]), "flows[0].persistence");
    assert_eq!(err(&["flows[0].persistence=-0.1"]), "flows[0].persistence");
    assert_eq!(err(&["flows[0].size=\"1MB\""]), "flows[0].size");
    assert_eq!(err(&["flows[0].chunk_size={ min = \"5KB\", max = \"1KB\" }"]), "flows[0].chunk_size.max");
    assert_eq!(err(&["flows[0].rtt=[\"10ms\", \"20ms\"]"]), "flows[0].rtt");
    assert_eq!(err(&["flows[0].rtt={ lognormal = \"0ms\" }"]), "flows[0].rtt.lognormal");
    assert_eq!(err(&["flows[0].rtt={ mean = \"10ms\" }"]), "flows[0].rtt.mean");
    let plain = ONE.replace("chunk_size = \"250KB\"\n", "");
    let ov = vec!["flows[0].persistence=0.5".to_string()];
    assert_eq!(
        ccbench_sim::parse_str(&plain, "t.toml", &ov, None).unwrap_err().field,
        "flows[0].persistence"
    );
}

#[test]
fn a_neighbour_is_not_served_before_its_start() {
    let late = PEER.replace(
        "name = \"to-d\"\ncca = \"fledbat\"\n",
        "name = \"to-d\"\ncca = \"fledbat\"\nstart = \"8s\"\n",
    );
    let r = run(&late, &["flows.persistence=0"], None);
    let before: f64 = flow_goodput(&r, 3).iter().filter(|(t, _)| *t <= 8.0).map(|(_, g)| g).sum();
    let after: f64 = flow_goodput(&r, 3).iter().filter(|(t, _)| *t > 8.0).map(|(_, g)| g).sum();
    assert_eq!(before, 0.0, "to-d sent before its start");
    assert!(after > 0.0, "to-d gets a slot once it has started");
}
