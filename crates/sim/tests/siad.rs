//! TCP SIAD end to end (issue 12): the thesis's headline single-flow claims on a 10 Mbps,
//! 100 ms path. Thesis: `shared/seeds/002_e09c17529d909204.txt` (`Lnnnn`); notes
//! `shared/reference/siad-spec.md` §13.1 (E1, E2, E6).

mod common;

use common::*;

/// One SIAD flow, 10 Mbps / 100 ms base RTT, `buffer`, `num_rtt`, running `duration_s`, on the
/// thesis's stack: Linux 3.5.7 conventions (ACK counting, RFC 6675 recovery) and, before §4.4,
/// no delayed ACKs (L2191; "we also use delayed ACKs if not stated" begins with §4.4). With
/// delayed ACKs the module's `now − TSecr` echoes the first of two segments and reads a tick
/// more, so Adaptive Decrease cuts deeper.
fn single(buffer: &str, num_rtt: u32, duration_s: u32) -> String {
    format!(
        "duration = \"{duration_s}s\"\nwarmup = \"20s\"\n[bottleneck]\nrate = \"10Mbps\"\nrtt = \"100ms\"\n\
         buffer = \"{buffer}\"\n[[flows]]\nname = \"siad\"\ncca = \"siad\"\ncc = {{ num_rtt = {num_rtt} }}\n\
         delayed_ack = false\nca_counting = \"acks\"\nrecovery = \"rfc6675\"\nstack = \"linux-3.5\"\n"
    )
}

/// Congestion events and mean SRTT (ms) in `(from, to]` seconds. The simulation is
/// deterministic, so the events of the interval are the difference of two runs' totals.
fn epochs(buffer: &str, num_rtt: u32, from: u32, to: u32) -> (u64, f64) {
    let events = |d: u32| {
        let r = run(&single(buffer, num_rtt, d), &["output.bin=\"1s\""], Some(1));
        let f = &r.summary.flows[0];
        (f.loss_reductions + f.timeouts + f.ecn_reductions, r)
    };
    let (early, _) = events(from);
    let (late, r) = events(to);
    let f = &r.flows;
    let srtt: Vec<f64> = (0..f.t_s.len())
        .filter(|&i| f.t_s[i] > from as f64 && f.srtt_ms[i].is_finite())
        .map(|i| f.srtt_ms[i])
        .collect();
    (late - early, srtt.iter().sum::<f64>() / srtt.len() as f64)
}

/// Thesis §4.3.1 (L2355–2361, E6): alone, SIAD keeps the link busy at every buffer size
/// because Adaptive Decrease drains the queue just to empty; worst reported 96.4 % (0.7·BDP).
/// Bar from the brief: > 95 % with a 0.2·BDP buffer.
#[test]
fn a_small_buffer_stays_fully_used() {
    let r = run(&single("0.2bdp", 20, 60), &[], Some(1));
    let u = link(&r, "bottleneck").utilization;
    assert!(u > 0.95, "utilization {u}");
}

/// E1 (L1548, L2343): congestion events come every ≈ Num_RTT RTTs (within 20 %), and E2
/// (L2213, L2349): doubling Num_RTT doubles the distance (ratio within 20 % of 2). One BDP of
/// buffer so that the queue (~83 packets) exceeds both N: with fewer queued packets than N
/// α sits at its floor of 1 and events come more often than configured (E1's condition,
/// L2079).
#[test]
fn events_come_every_num_rtt_rtts_and_doubling_it_doubles_the_distance() {
    let mut spacing = Vec::new();
    for n in [20, 40] {
        let (events, srtt_ms) = epochs("1bdp", n, 40, 100);
        let gap_s = 60.0 / events as f64;
        let in_rtts = gap_s * 1000.0 / srtt_ms;
        assert!(
            (0.8 * n as f64..=1.2 * n as f64).contains(&in_rtts),
            "N = {n}: {events} events in 60 s, every {gap_s:.2} s = {in_rtts:.1} RTTs of {srtt_ms:.1} ms"
        );
        spacing.push(gap_s);
    }
    let ratio = spacing[1] / spacing[0];
    assert!((1.6..=2.4).contains(&ratio), "N 40 vs 20: distance ratio {ratio:.2} ({spacing:?})");
}
