use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::testing::{Count, NoSink, Pkt};
use crate::ParamValue;

fn qcfg(ecn: bool) -> QueueConfig {
    QueueConfig { limit: Limit::Packets(1000), ecn, seed: 7 }
}

fn pi2(ecn: bool) -> Pi2<Pkt> {
    Pi2::new(Pi2Config::default(), qcfg(ecn))
}

fn assert_close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12, "{a} != {b}");
}

#[test]
fn defaults_are_rfc_9332_appendix_a1() {
    // Figure 2: target 15 ms, Tupdate 16 ms, and for RTT_max = 100 ms
    // alpha = 0.1 * 0.016 / 0.1² = 0.16 and beta stated as 3.2; k = 2.
    let c = Pi2Config::default();
    assert_eq!((c.target, c.tupdate, c.mtu), (15 * MS, 16 * MS, 1514));
    assert_close(c.alpha, 0.1 * 0.016 / (0.1 * 0.1));
    assert_eq!(c.beta, 3.2);
    assert_eq!(c.coupling, 2.0);
    assert_eq!(Pi2Config::from_params(&Params::new()).unwrap(), c);
}

#[test]
fn pi_update_arithmetic_with_a_standing_then_vanishing_head() {
    let mut q = pi2(false);
    assert!(matches!(q.enqueue(Pkt(1500, Ecn::NotEct), 0), Enqueued::Queued));
    assert_eq!(q.next_timer(), 16 * MS);
    // 16 ms: head sojourn 16 ms; dp = 0.16 * (0.016 - 0.015) + 3.2 * (0.016 - 0) = 0.05136.
    q.on_timer(16 * MS);
    assert_close(q.probability(), 0.05136);
    // 32 ms: sojourn 32 ms; dp = 0.16 * 0.017 + 3.2 * 0.016 = 0.05392 → 0.10528.
    q.on_timer(32 * MS);
    assert_close(q.probability(), 0.10528);
    // 48 ms: sojourn 48 ms; dp = 0.16 * 0.033 + 3.2 * 0.016 = 0.05648 → 0.16176.
    q.on_timer(48 * MS);
    assert_close(q.probability(), 0.16176);
    // 50 ms: the packet leaves (nothing behind it: under 2 MTU, no signal).
    assert_eq!(q.dequeue(50 * MS, &mut NoSink).unwrap().sojourn, 50 * MS);
    // 64 ms: empty, delay 0; dp = 0.16 * -0.015 + 3.2 * (0 - 0.048) = -0.156 → 0.00576.
    q.on_timer(64 * MS);
    assert_close(q.probability(), 0.00576);
    // 80 ms and 96 ms: dp = 0.16 * -0.015 = -0.0024 each → 0.00336, then 0.00096.
    q.on_timer(80 * MS);
    assert_close(q.probability(), 0.00336);
    q.on_timer(96 * MS);
    assert_close(q.probability(), 0.00096);
    q.on_timer(112 * MS); // 0.00096 - 0.0024 < 0: bounded at 0 exactly
    assert_eq!(q.probability(), 0.0);
    // At rest with an empty queue: the catch-up skips to the first instant after now
    // (10.001 s / 16 ms = 625.06, so 626 * 16 ms).
    q.on_timer(10 * S + MS);
    assert_eq!(q.next_timer(), 626 * 16 * MS);
}

#[test]
fn probability_is_bounded_at_one() {
    let mut q = pi2(false);
    q.enqueue(Pkt(1500, Ecn::NotEct), 0);
    // By 600 ms the 600 ms sojourn has pushed p′ far past 1 unbounded; it stays at 1.
    q.on_timer(600 * MS);
    assert_eq!(q.probability(), 1.0);
    assert_eq!(q.signal_probability(600 * MS), Some(1.0));
}

/// Fraction of `n` dequeue decisions on packets with `ecn` that dropped and that marked, at a
/// fixed p′ (time stands at 0, before the first update), with enough behind each packet that
/// the 2-MTU rule never applies.
fn rates(ecn_on: bool, ecn: Ecn, p: f64, n: u64) -> (f64, f64) {
    let mut q = pi2(ecn_on);
    q.pi.prob = p;
    let (mut sink, mut delivered) = (Count::default(), 0u64);
    while delivered + sink.drops < n {
        while q.len_packets() < 200 {
            q.enqueue(Pkt(1500, ecn), 0);
        }
        delivered += q.dequeue(0, &mut sink).is_some() as u64;
    }
    let n = (delivered + sink.drops) as f64;
    (sink.drops as f64 / n, sink.marks as f64 / n)
}

/// Five standard deviations of a binomial fraction.
fn tolerance(p: f64, n: u64) -> f64 {
    5.0 * (p * (1.0 - p) / n as f64).sqrt()
}

#[test]
fn square_law_classic_drop_and_scalable_mark() {
    const N: u64 = 200_000;
    let p = 0.3;
    // Classic Not-ECT: dropped with p′² = 0.09 (± 5σ = 0.0032).
    let (drop, mark) = rates(true, Ecn::NotEct, p, N);
    assert!((drop - 0.09).abs() < tolerance(0.09, N), "drop {drop}");
    assert_eq!(mark, 0.0);
    // Classic ECT(0) with ECN: marked with p′², never dropped.
    let (drop, mark) = rates(true, Ecn::Ect0, p, N);
    assert!((mark - 0.09).abs() < tolerance(0.09, N), "mark {mark}");
    assert_eq!(drop, 0.0);
    // Scalable ECT(1): marked with k * p′ = 0.6 (± 5σ = 0.0055).
    let (drop, mark) = rates(true, Ecn::Ect1, p, N);
    assert!((mark - 0.6).abs() < tolerance(0.6, N), "mark {mark}");
    assert_eq!(drop, 0.0);
    // k * p′ above 1 marks every Scalable packet.
    assert_eq!(rates(true, Ecn::Ce, 0.7, 1000), (0.0, 1.0));
}

#[test]
fn without_ecn_every_packet_is_classic_and_dropped() {
    const N: u64 = 200_000;
    for ecn in [Ecn::Ect0, Ecn::Ect1] {
        let (drop, mark) = rates(false, ecn, 0.3, N);
        assert!((drop - 0.09).abs() < tolerance(0.09, N), "{ecn:?} drop {drop}");
        assert_eq!(mark, 0.0);
    }
}

#[test]
fn no_signal_while_less_than_two_mtus_stay_behind() {
    // p′ = 1: every decision that may signal drops. Three 1514-byte packets, mtu 1514: the
    // first leaves 3028 = 2 MTU behind (not below): dropped. The second leaves 1514 and the
    // third 0: both pass.
    let mut q = pi2(false);
    q.pi.prob = 1.0;
    for _ in 0..3 {
        q.enqueue(Pkt(1514, Ecn::NotEct), 0);
    }
    let mut sink = Count::default();
    assert!(q.dequeue(0, &mut sink).is_some());
    assert_eq!((sink.drops, q.len_packets()), (1, 1));
    assert!(q.dequeue(0, &mut sink).is_some());
    assert_eq!((sink.drops, q.len_packets()), (1, 0));
    // 1513-byte packets leave 3026 < 3028 behind the first: nothing is dropped.
    let mut q = pi2(false);
    q.pi.prob = 1.0;
    for _ in 0..3 {
        q.enqueue(Pkt(1513, Ecn::NotEct), 0);
    }
    let mut sink = Count::default();
    while q.dequeue(0, &mut sink).is_some() {}
    assert_eq!(sink.drops, 0);
}

#[test]
fn the_limit_drops_arrivals() {
    let mut q = Pi2::new(Pi2Config::default(), QueueConfig { limit: Limit::Packets(2), ecn: true, seed: 1 });
    assert!(matches!(q.enqueue(Pkt(100, Ecn::Ect1), 0), Enqueued::Queued));
    assert!(matches!(q.enqueue(Pkt(100, Ecn::Ect1), 0), Enqueued::Queued));
    assert!(matches!(q.enqueue(Pkt(100, Ecn::Ect1), 0), Enqueued::Dropped(_, DropReason::Overflow)));
    assert_eq!((q.len_packets(), q.len_bytes()), (2, 200));
}

#[test]
fn parameter_errors_name_the_key() {
    for (key, value) in [
        ("alpha", ParamValue::Str("fast".into())),
        ("beta", ParamValue::Float(-1.0)),
        ("target", ParamValue::Str("-1ms".into())),
        ("tupdate", ParamValue::Int(0)),
        ("coupling", ParamValue::Float(5000.0)),
        ("mtu", ParamValue::Int(0)),
    ] {
        let mut p = Params::new();
        p.insert(key, value);
        assert_eq!(Pi2::<Pkt>::from_params(qcfg(true), &p).err().unwrap().key, key);
    }
    let mut p = Params::new();
    p.insert("tupdate", ParamValue::Str("30ms".into()));
    p.insert("alpha", ParamValue::Float(0.3125));
    let c = Pi2Config::from_params(&p).unwrap();
    assert_eq!((c.tupdate, c.alpha), (30 * MS, 0.3125));
}

#[test]
fn packets_and_bytes_are_conserved_over_a_random_workload() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let cfg = QueueConfig { limit: Limit::Bytes(60_000), ecn: true, seed: 11 };
    let mut q = Pi2::new(Pi2Config::default(), cfg);
    let (mut sink, mut now) = (Count::default(), 0);
    let (mut offered, mut offered_bytes, mut overflow, mut overflow_bytes) = (0u64, 0u64, 0u64, 0u64);
    let (mut delivered, mut delivered_bytes) = (0u64, 0u64);
    let codepoints = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce];
    for _ in 0..50_000 {
        now += rng.gen_range(0..400 * US);
        if rng.gen_bool(0.55) {
            let pkt = Pkt(rng.gen_range(64..=1514), codepoints[rng.gen_range(0..4)]);
            (offered, offered_bytes) = (offered + 1, offered_bytes + pkt.0 as u64);
            if let Enqueued::Dropped(p, _) = q.enqueue(pkt, now) {
                (overflow, overflow_bytes) = (overflow + 1, overflow_bytes + p.0 as u64);
            }
        } else if let Some(d) = q.dequeue(now, &mut sink) {
            (delivered, delivered_bytes) = (delivered + 1, delivered_bytes + d.pkt.0 as u64);
        }
    }
    assert!(sink.drops > 0 && sink.marks > 0 && overflow > 0, "the workload exercises every path");
    let gone = delivered + sink.drops + overflow;
    assert_eq!(offered, gone + q.len_packets() as u64);
    assert_eq!(offered_bytes, delivered_bytes + sink.dropped_bytes + overflow_bytes + q.len_bytes());
}
