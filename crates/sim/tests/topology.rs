//! General topologies end to end: the parking lot from its example file, explicit paths,
//! one-way links, per-link results by name, and the dumbbell as a shorthand of the general form.

mod common;

use common::{link, run, run_checked, summary_json};

fn parking_lot() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/parking-lot.toml");
    std::fs::read_to_string(path).expect("examples/parking-lot.toml")
}

fn flow<'a>(r: &'a ccbench_sim::SimResult, name: &str) -> &'a ccbench_sim::metrics::FlowSummary {
    r.summary.flows.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no flow {name}"))
}

#[test]
fn parking_lot_long_flow_loses_to_every_cross_flow_and_every_link_is_full() {
    let r = run_checked(&parking_lot(), &["duration=30s", "warmup=5s"], None, 5_000);
    assert!(r.conservation.holds(), "{:?}", r.conservation);
    let long = flow(&r, "long");
    assert_eq!(long.path, ["l1", "l2", "l3"]);
    assert_eq!((long.from.as_str(), long.to.as_str()), ("a", "d"));
    assert!((long.rtt_ms - 60.0).abs() < 1e-9, "3 links × 10 ms, both ways");
    for (cross, l) in [("cross1", "l1"), ("cross2", "l2"), ("cross3", "l3")] {
        let c = flow(&r, cross);
        assert_eq!(c.path, [l]);
        assert!((c.rtt_ms - 20.0).abs() < 1e-9);
        // Three congested hops and three times the RTT: the long flow gets the smallest share.
        assert!(
            long.goodput_mbps < c.goodput_mbps / 2.0,
            "{} vs {cross} {}",
            long.goodput_mbps,
            c.goodput_mbps
        );
        let link = link(&r, l);
        assert!(link.utilization > 0.95, "{l} utilization {}", link.utilization);
        // Each forward link carries exactly the long flow and its cross flow.
        let carried = long.throughput_mbps + c.throughput_mbps;
        assert!(
            (link.throughput_mbps - carried).abs() / carried < 0.03,
            "{l}: {} vs {carried}",
            link.throughput_mbps
        );
        assert!(link.queue_delay_ms.is_some());
        let rev = self::link(&r, &format!("{l}-rev"));
        assert_eq!((rev.from.as_str(), rev.to.as_str()), (link.to.as_str(), link.from.as_str()));
        assert!(rev.queue_delay_ms.is_none(), "reverse directions are not measured");
    }
}

const TRIANGLE: &str = r#"
duration = "10s"
[[links]]
name = "ab"
from = "a"
to = "b"
rate = "10Mbps"
delay = "5ms"
[[links]]
name = "ac"
from = "a"
to = "c"
rate = "10Mbps"
delay = "1ms"
bidirectional = false
[[links]]
name = "cb"
from = "c"
to = "b"
rate = "2Mbps"
delay = "1ms"
[[flows]]
cca = "cubic"
from = "a"
to = "b"
"#;

#[test]
fn shortest_route_by_default_and_explicit_path_when_given() {
    let direct = run(TRIANGLE, &[], None);
    assert_eq!(direct.summary.flows[0].path, ["ab"]);
    assert!((direct.summary.flows[0].rtt_ms - 10.0).abs() < 1e-9);
    assert!(direct.summary.flows[0].goodput_mbps > 8.0);

    let detour = run(TRIANGLE, &[r#"flows[0].path=["ac", "cb"]"#, "flows[0].rtt=20ms"], None);
    let f = &detour.summary.flows[0];
    assert_eq!(f.path, ["ac", "cb"]);
    // ACKs return over the reverse of the shortest way back (ab-rev): 5 ms + 2 ms out + 20 ms access.
    assert!((f.rtt_ms - 27.0).abs() < 1e-9, "{}", f.rtt_ms);
    assert!(f.goodput_mbps < 2.0 && f.goodput_mbps > 1.5, "limited by cb: {}", f.goodput_mbps);
    assert_eq!(link(&detour, "ab").packets, 0, "no data on the direct link");
}

#[test]
fn dumbbell_and_its_general_form_give_identical_results() {
    let dumbbell = r#"
duration = "20s"
seed = 3
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
delay = "10ms"
buffer = "50p"
loss = 0.001
jitter = "1ms"
[[flows]]
cca = "cubic"
rtt = "60ms"
[[flows]]
cca = "newreno"
"#;
    let general = r#"
duration = "20s"
seed = 3
[[links]]
name = "bottleneck"
from = "r1"
to = "r2"
rate = "10Mbps"
delay = "10ms"
buffer = "50p"
loss = 0.001
jitter = "1ms"
reverse = { buffer = "10000p" }
[[flows]]
cca = "cubic"
from = "r1"
to = "r2"
rtt = "40ms"
[[flows]]
cca = "newreno"
from = "r1"
to = "r2"
rtt = "20ms"
"#;
    let (a, b) = (run(dumbbell, &[], None), run(general, &[], None));
    assert_eq!(summary_json(&a), summary_json(&b));
    assert_eq!(a.flows.cwnd_bytes.len(), b.flows.cwnd_bytes.len());
    assert!(common::same_f64(&a.flows.cwnd_bytes, &b.flows.cwnd_bytes));
}
