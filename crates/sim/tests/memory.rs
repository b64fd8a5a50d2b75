//! Memory flat in simulated time: a run ten times longer peaks at about the same heap, because
//! the summary's percentiles come from streaming histograms and loss events are grouped as
//! losses happen (no per-packet or per-loss log), unless a scenario asks for the exact series.

mod tracking_alloc;

use std::sync::atomic::Ordering;

use tracking_alloc::{reset_peak, Tracking, PEAK};

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// Drop-tail overflow, CoDel drops and marks, random loss and a CBR flow: every kind of per-packet
/// and per-loss measurement. The time series grow by design, one row per bin: bins of 30 s keep
/// them out of the comparison.
const SCENARIO: &str = r#"
warmup = "5s"
[output]
bin = "30s"
[[links]]
name = "droptail"
from = "a"
to = "b"
rate = "20Mbps"
delay = "10ms"
buffer = "60p"
loss = 0.0005
[[links]]
name = "codel"
from = "b"
to = "c"
rate = "15Mbps"
delay = "5ms"
buffer = "200p"
aqm = "codel"
ecn = true
[[flows]]
cca = "cubic"
from = "a"
to = "b"
count = 2
[[flows]]
cca = "cubic"
ecn = true
from = "a"
to = "c"
[[flows]]
type = "cbr"
from = "a"
to = "c"
"#;

/// Peak heap (bytes) over one run of `duration`, and the packets it moved.
fn peak_heap(duration: &str) -> (usize, u64) {
    let sc =
        ccbench_sim::parse_str(SCENARIO, "memory.toml", &[format!("duration={duration}")], None).unwrap();
    let before = reset_peak();
    let r = ccbench_sim::run(&sc, "memory.toml").unwrap();
    (PEAK.load(Ordering::Relaxed) - before, r.summary.packets)
}

#[test]
fn a_run_ten_times_longer_peaks_within_one_and_a_half_times_the_heap() {
    let (short, p1) = peak_heap("60s");
    let (long, p2) = peak_heap("600s");
    eprintln!("peak heap: {short} B for {p1} packets, {long} B for {p2} packets");
    assert!(p2 > 9 * p1, "the long run moves ten times the packets ({p1} vs {p2})");
    assert!(
        (long as f64) < 1.5 * short as f64,
        "peak heap {long} B over 600 s against {short} B over 60 s: something grows with simulated time"
    );
}
