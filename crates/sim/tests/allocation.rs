//! The hot loop must not allocate per packet: doubling the simulated time (and so the number of
//! packets) may only add the few amortised reallocations of growing measurement vectors.

mod tracking_alloc;

use std::sync::atomic::Ordering;

use tracking_alloc::{Tracking, ALLOCATIONS};

#[global_allocator]
static GLOBAL: Tracking = Tracking;

const SCENARIO: &str = r#"
warmup = "0s"
[bottleneck]
rate = "20Mbps"
rtt = "100ms"
buffer = "1bdp"
[output]
sojourn_samples = false
bin = "10s"
[[flows]]
cca = "cubic"
count = 2
[[flows]]
type = "cbr"
"#;

fn allocations_and_packets(duration: &str) -> (u64, u64) {
    let sc = ccbench_sim::parse_str(SCENARIO, "alloc.toml", &[format!("duration={duration}")], None).unwrap();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let r = ccbench_sim::run(&sc, "alloc.toml").unwrap();
    (ALLOCATIONS.load(Ordering::Relaxed) - before, r.summary.packets)
}

#[test]
fn allocations_do_not_grow_with_packets() {
    let (a1, p1) = allocations_and_packets("60s");
    let (a2, p2) = allocations_and_packets("120s");
    assert!(p2 > p1 + 100_000, "the longer run must move many more packets ({p1} vs {p2})");
    let extra = a2.saturating_sub(a1);
    eprintln!("allocations: {a1} for {p1} packets, {a2} for {p2} packets");
    assert!(
        extra < 200,
        "{extra} more allocations for {} more packets: something allocates per packet ({a1} vs {a2})",
        p2 - p1
    );
}
