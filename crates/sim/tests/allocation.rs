//! The hot loop must not allocate per packet: doubling the simulated time (and so the number of
//! packets) may only add the few amortised reallocations of growing measurement vectors.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to the system allocator with the caller's arguments, so its
// contract is the system allocator's; counting touches only an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's `layout` obligations pass through unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as dealloc's, and `new_size` is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
