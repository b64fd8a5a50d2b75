//! Memory flat in simulated time: a run ten times longer peaks at about the same heap, because
//! the summary's percentiles come from streaming histograms and loss events are grouped as
//! losses happen (no per-packet or per-loss log), unless a scenario asks for the exact series.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Tracking;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every method forwards to the system allocator with the caller's arguments, so its
// contract is the system allocator's; tracking touches only atomics.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's `layout` obligations pass through unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        grew(new_size);
        // SAFETY: as dealloc's, and `new_size` is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

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
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    let before = LIVE.load(Ordering::Relaxed);
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
