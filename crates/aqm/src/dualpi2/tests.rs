use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::testing::{Count, NoSink, Pkt};
use crate::ParamValue;

fn qcfg(ecn: bool) -> QueueConfig {
    QueueConfig { limit: Limit::Packets(10_000), ecn, seed: 5 }
}

fn dualpi2() -> DualPi2<Pkt> {
    DualPi2::new(DualPi2Config::default(), qcfg(true))
}

fn with(cfg: DualPi2Config) -> DualPi2<Pkt> {
    DualPi2::new(cfg, qcfg(true))
}

fn fill(q: &mut DualPi2<Pkt>, n: usize, pkt: Pkt, at: Nanos) {
    for _ in 0..n {
        assert!(matches!(q.enqueue(pkt.clone(), at), Enqueued::Queued));
    }
}

fn assert_close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12, "{a} != {b}");
}

/// Five standard deviations of a binomial fraction over `n` trials.
fn tolerance(p: f64, n: u64) -> f64 {
    5.0 * (p * (1.0 - p) / n as f64).sqrt()
}

#[test]
fn defaults_are_linux_dualpi2_reset_default() {
    let c = DualPi2Config::default();
    assert_eq!(
        (c.target, c.tupdate, c.step, c.min_qlen_step),
        (15 * MS, 16 * MS, StepThreshold::Time(MS), 0)
    );
    assert_eq!((c.alpha, c.beta), (0.16015625, 3.19921875)); // 41/256, 819/256
    assert_eq!((c.coupling, c.c_protection, c.drop_overload, c.drop_early), (2, 10, true, false));
    assert_eq!((c.ecn_mask, c.mtu), (EcnMask::L4sEct, 1514));
    assert_eq!(DualPi2Config::from_params(&Params::new()).unwrap(), c);
    // Linux `dualpi2_calculate_c_protection`: 1514 * (10 - 90).
    assert_eq!(dualpi2().credit, -121_120);
    assert_eq!(dualpi2().next_timer(), 16 * MS);
}

#[test]
fn classification_by_ecn_mask() {
    let mut q = dualpi2();
    for (ecn, band) in
        [(Ecn::Ect1, Band::L), (Ecn::Ce, Band::L), (Ecn::NotEct, Band::C), (Ecn::Ect0, Band::C)]
    {
        assert_eq!(q.band_of(ecn), band, "{ecn:?}");
        q.enqueue(Pkt(100, ecn), 0);
    }
    assert_eq!((q.l.len(), q.l.bytes(), q.c.len(), q.c.bytes()), (2, 200, 2, 200));
    assert_eq!((q.len_packets(), q.len_bytes()), (4, 400));
    // `any_ect` (3) takes ECT(0) too; `cla_ect` (2) takes ECT(0) and CE but not ECT(1).
    let any = with(DualPi2Config { ecn_mask: EcnMask::AnyEct, ..Default::default() });
    assert_eq!(
        [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce].map(|e| any.band_of(e)),
        [Band::C, Band::L, Band::L, Band::L]
    );
    let cla = with(DualPi2Config { ecn_mask: EcnMask::ClaEct, ..Default::default() });
    assert_eq!(
        [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce].map(|e| cla.band_of(e)),
        [Band::C, Band::L, Band::C, Band::L]
    );
}

#[test]
fn pi_update_reads_the_larger_head_sojourn() {
    let mut q = dualpi2();
    q.enqueue(Pkt(1500, Ecn::Ect1), 0); // L head from 0
    q.enqueue(Pkt(1500, Ecn::NotEct), 4 * MS); // C head from 4 ms
                                               // 16 ms: max(16 ms, 12 ms) = 16 ms; dp = 41/256 * 0.001 + 819/256 * (0.016 - 0).
    q.on_timer(16 * MS);
    let p1 = 41.0 / 256.0 * 0.001 + 819.0 / 256.0 * 0.016;
    assert_close(q.probability(), p1);
    assert_close(p1, 0.05134765625);
    // 20 ms: the L packet leaves first (credit -121120 <= 0). 1500 B stay behind (< 2 MTU):
    // no coupled signal; its 20 ms sojourn is above the 1 ms step: CE.
    let mut sink = Count::default();
    let d = q.dequeue(20 * MS, &mut sink).unwrap();
    assert_eq!((d.pkt.1, d.sojourn, q.last_band, sink.marks), (Ecn::Ce, 20 * MS, Some(Band::L), 1));
    // 32 ms: only the C head, 28 ms; dp = 41/256 * 0.013 + 819/256 * (0.028 - 0.016).
    q.on_timer(32 * MS);
    let p2 = p1 + 41.0 / 256.0 * 0.013 + 819.0 / 256.0 * 0.012;
    assert_close(q.probability(), p2);
    assert_close(p2, 0.0918203125);
    assert_eq!((q.l.head_sojourn(32 * MS), q.c.head_sojourn(32 * MS)), (0, 28 * MS));
}

#[test]
fn without_drop_overload_p_is_capped_at_one_over_k() {
    for (drop_overload, cap) in [(true, 1.0), (false, 0.5)] {
        let mut q = with(DualPi2Config { drop_overload, ..Default::default() });
        q.enqueue(Pkt(1500, Ecn::NotEct), 0);
        q.on_timer(2 * S);
        assert_eq!(q.signal_probability(2 * S), Some(cap));
    }
}

#[test]
fn step_marks_l_packets_above_one_ms_with_p_zero() {
    for (sojourn, marked) in [(MS, false), (MS + 1, true)] {
        let mut q = dualpi2();
        q.enqueue(Pkt(1500, Ecn::Ect1), 0);
        let d = q.dequeue(sojourn, &mut NoSink).unwrap();
        assert_eq!((d.pkt.1 == Ecn::Ce, q.probability()), (marked, 0.0), "sojourn {sojourn}");
    }
    // C packets never see the step.
    let mut q = dualpi2();
    q.enqueue(Pkt(1500, Ecn::Ect0), 0);
    assert_eq!(q.dequeue(10 * MS, &mut NoSink).unwrap().pkt.1, Ecn::Ect0);
    // min_qlen_step 2: only a packet that found 2 already in L is eligible (`skb_apply_step`).
    let mut q = with(DualPi2Config { min_qlen_step: 2, ..Default::default() });
    fill(&mut q, 3, Pkt(100, Ecn::Ect1), 0);
    let got: Vec<_> = (0..3).map(|_| q.dequeue(5 * MS, &mut NoSink).unwrap().pkt.1).collect();
    assert_eq!(got, [Ecn::Ect1, Ecn::Ect1, Ecn::Ce]);
    // In packets: marked while more than 1 packet stays in L behind it (2, then 1, then 0).
    let mut q = with(DualPi2Config { step: StepThreshold::Packets(1), ..Default::default() });
    fill(&mut q, 3, Pkt(100, Ecn::Ect1), 0);
    let got: Vec<_> = (0..3).map(|_| q.dequeue(0, &mut NoSink).unwrap().pkt.1).collect();
    assert_eq!(got, [Ecn::Ce, Ecn::Ect1, Ecn::Ect1]);
}

fn bands(q: &mut DualPi2<Pkt>, n: usize) -> String {
    (0..n)
        .map(|_| {
            q.dequeue(0, &mut NoSink).unwrap();
            match q.last_band.unwrap() {
                Band::L => 'L',
                Band::C => 'C',
            }
        })
        .collect()
}

#[test]
fn wrr_gives_c_one_packet_in_ten_when_both_are_backlogged() {
    // 1500-byte packets, credit from -121120. Each L packet while C waits: +10 * 1500; after 8
    // the credit is -1120 (still <= 0), after the 9th 13880 > 0: C goes, -90 * 1500 = -135000,
    // back to -121120.
    let mut q = dualpi2();
    fill(&mut q, 30, Pkt(1500, Ecn::Ect1), 0);
    fill(&mut q, 30, Pkt(1500, Ecn::NotEct), 0);
    assert_eq!(bands(&mut q, 9), "LLLLLLLLL");
    assert_eq!(q.credit, 13_880);
    assert_eq!(bands(&mut q, 1), "C");
    assert_eq!(q.credit, -121_120);
    assert_eq!(bands(&mut q, 20), "LLLLLLLLLCLLLLLLLLLC");
    // c_protection 50: credit starts at 0; +50 * 1500 after L, -50 * 1500 after C: alternation.
    let mut q = with(DualPi2Config { c_protection: 50, ..Default::default() });
    fill(&mut q, 5, Pkt(1500, Ecn::Ect1), 0);
    fill(&mut q, 5, Pkt(1500, Ecn::NotEct), 0);
    assert_eq!(bands(&mut q, 6), "LCLCLC");
}

#[test]
fn one_queue_alone_is_served_and_the_credit_stays_then_resets() {
    let mut q = dualpi2();
    fill(&mut q, 3, Pkt(1500, Ecn::Ect1), 0);
    assert_eq!(bands(&mut q, 3), "LLL");
    fill(&mut q, 2, Pkt(1500, Ecn::NotEct), 0);
    assert_eq!(bands(&mut q, 2), "CC");
    assert_eq!(q.credit, -121_120, "no change with one queue empty");
    // L is preferred as soon as it has a packet, while the credit is <= 0.
    fill(&mut q, 2, Pkt(1500, Ecn::NotEct), 0);
    fill(&mut q, 1, Pkt(1500, Ecn::Ect1), 0);
    assert_eq!(bands(&mut q, 3), "LCC");
    // A dequeue that finds both empty resets the credit (Linux `dualpi2_reset_c_protection`).
    q.credit = 42;
    assert!(q.dequeue(0, &mut NoSink).is_none());
    assert_eq!(q.credit, -121_120);
}

/// Fractions of `n` decisions on packets with `ecn` that dropped and that marked, at p′ = `p`
/// (time stands at 0: no update, no sojourn for the step), with 200 packets topped up so that
/// even a long run of drops leaves more than 2 MTU behind.
fn rates(cfg: DualPi2Config, ecn: Ecn, p: f64, n: u64) -> (f64, f64) {
    let mut q = with(cfg);
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

#[test]
fn square_law_and_coupling() {
    const N: u64 = 200_000;
    let d = DualPi2Config::default;
    // C Not-ECT: dropped with p′² = 0.09 (± 5σ = 0.0032).
    let (drop, mark) = rates(d(), Ecn::NotEct, 0.3, N);
    assert!((drop - 0.09).abs() < tolerance(0.09, N) && mark == 0.0, "drop {drop}");
    // C ECT(0): marked with p′².
    let (drop, mark) = rates(d(), Ecn::Ect0, 0.3, N);
    assert!((mark - 0.09).abs() < tolerance(0.09, N) && drop == 0.0, "mark {mark}");
    // L ECT(1): marked with k * p′ = 0.6 (± 5σ = 0.0055).
    let (drop, mark) = rates(d(), Ecn::Ect1, 0.3, N);
    assert!((mark - 0.6).abs() < tolerance(0.6, N) && drop == 0.0, "mark {mark}");
    // k = 3: 0.9.
    let (_, mark) = rates(DualPi2Config { coupling: 3, ..d() }, Ecn::Ect1, 0.3, N);
    assert!((mark - 0.9).abs() < tolerance(0.9, N), "mark {mark}");
}

#[test]
fn overload_drops_classic_style() {
    const N: u64 = 100_000;
    let d = DualPi2Config::default;
    // p′ = 0.8, k * p′ = 1.6 > 1. L: dropped with p′² = 0.64 (± 5σ = 0.0076), every packet
    // not dropped is marked.
    let (drop, mark) = rates(d(), Ecn::Ect1, 0.8, N);
    assert!((drop - 0.64).abs() < tolerance(0.64, N), "drop {drop}");
    assert_close(drop + mark, 1.0);
    // C ECT(0): dropped, not marked, with p′².
    let (drop, mark) = rates(d(), Ecn::Ect0, 0.8, N);
    assert!((drop - 0.64).abs() < tolerance(0.64, N) && mark == 0.0, "drop {drop}");
    // Without drop_overload every L packet is marked, none dropped.
    assert_eq!(rates(DualPi2Config { drop_overload: false, ..d() }, Ecn::Ect1, 0.8, 1000), (0.0, 1.0));
    // k * p′ = 1 exactly is not overload (Linux `local_l_prob > MAX_PROB`): C ECT(0) is marked.
    let (drop, mark) = rates(d(), Ecn::Ect0, 0.5, N);
    assert!((mark - 0.25).abs() < tolerance(0.25, N) && drop == 0.0, "mark {mark}");
}

#[test]
fn no_coupled_signal_while_less_than_two_mtus_stay_behind() {
    // p′ = 0.5: k * p′ = 1, so every L decision that may signal marks. Three 1514-byte ECT(1)
    // packets: the first leaves 3028 = 2 MTU (not below): marked; the others leave 1514 and 0.
    let mut q = dualpi2();
    q.pi.prob = 0.5;
    fill(&mut q, 3, Pkt(1514, Ecn::Ect1), 0);
    let got: Vec<_> = (0..3).map(|_| q.dequeue(0, &mut NoSink).unwrap().pkt.1).collect();
    assert_eq!(got, [Ecn::Ce, Ecn::Ect1, Ecn::Ect1]);
    // The backlog counts both queues: one L packet with two C packets behind it is marked.
    let mut q = dualpi2();
    q.pi.prob = 0.5;
    fill(&mut q, 1, Pkt(1514, Ecn::Ect1), 0);
    fill(&mut q, 2, Pkt(1514, Ecn::NotEct), 0);
    assert_eq!(q.dequeue(0, &mut NoSink).unwrap().pkt.1, Ecn::Ce);
}

#[test]
fn without_ecn_marks_become_drops() {
    let mut q = DualPi2::new(DualPi2Config::default(), qcfg(false));
    fill(&mut q, 2, Pkt(1500, Ecn::Ect1), 0);
    // Both above the step at 2 ms: both dropped, nothing delivered.
    let mut sink = Count::default();
    assert!(q.dequeue(2 * MS, &mut sink).is_none());
    assert_eq!((sink.drops, sink.marks), (2, 0));
    assert!(q.drops_at_dequeue());
}

#[test]
fn drop_early_decides_at_enqueue() {
    let mut q = with(DualPi2Config { drop_early: true, ..Default::default() });
    q.pi.prob = 0.5;
    // Under 2 MTU already queued: no signal; from 3028 B on, L packets are marked (k * p′ = 1).
    fill(&mut q, 2, Pkt(1514, Ecn::Ect1), 0);
    assert!(matches!(q.enqueue(Pkt(1514, Ecn::Ect1), 0), Enqueued::Marked));
    assert!(!q.drops_at_dequeue());
    // Dequeue applies only the step (sojourn 0 here): nothing more is marked.
    let mut sink = Count::default();
    while q.dequeue(0, &mut sink).is_some() {}
    assert_eq!(sink.marks, 0);
}

#[test]
fn the_limit_covers_both_queues() {
    let mut q =
        DualPi2::new(DualPi2Config::default(), QueueConfig { limit: Limit::Packets(3), ecn: true, seed: 1 });
    fill(&mut q, 2, Pkt(100, Ecn::Ect1), 0);
    fill(&mut q, 1, Pkt(100, Ecn::NotEct), 0);
    assert!(matches!(q.enqueue(Pkt(100, Ecn::NotEct), 0), Enqueued::Dropped(_, DropReason::Overflow)));
    assert!(matches!(q.enqueue(Pkt(100, Ecn::Ect1), 0), Enqueued::Dropped(_, DropReason::Overflow)));
}

#[test]
fn parameter_errors_name_the_key() {
    for (key, value) in [
        ("c_protection", ParamValue::Int(101)),
        ("coupling", ParamValue::Int(0)),
        ("alpha", ParamValue::Str("fast".into())),
        ("beta", ParamValue::Float(-0.5)),
        ("target", ParamValue::Float(15.0)),
        ("tupdate", ParamValue::Int(0)),
        ("step_thresh", ParamValue::Str("1 fortnight".into())),
        ("ecn_mask", ParamValue::Str("ect1".into())),
        ("drop_overload", ParamValue::Int(1)),
        ("min_qlen_step", ParamValue::Int(-1)),
    ] {
        let mut p = Params::new();
        p.insert(key, value);
        assert_eq!(DualPi2::<Pkt>::from_params(qcfg(true), &p).err().unwrap().key, key);
    }
    // Linux: "multiple step thresh attributes".
    let mut p = Params::new();
    p.insert("step_thresh", ParamValue::Str("2ms".into()));
    p.insert("step_thresh_pkts", ParamValue::Int(5));
    assert_eq!(DualPi2Config::from_params(&p).err().unwrap().key, "step_thresh_pkts");
    let mut p = Params::new();
    p.insert("step_thresh_pkts", ParamValue::Int(5));
    p.insert("c_protection", ParamValue::Int(30));
    p.insert("ecn_mask", ParamValue::Str("any_ect".into()));
    let c = DualPi2Config::from_params(&p).unwrap();
    assert_eq!((c.step, c.c_protection, c.ecn_mask), (StepThreshold::Packets(5), 30, EcnMask::AnyEct));
}

#[test]
fn packets_and_bytes_are_conserved_over_a_random_workload() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let cfg = QueueConfig { limit: Limit::Bytes(80_000), ecn: true, seed: 13 };
    let mut q = DualPi2::new(DualPi2Config::default(), cfg);
    let (mut sink, mut now) = (Count::default(), 0);
    let (mut offered, mut offered_bytes, mut overflow, mut overflow_bytes) = (0u64, 0u64, 0u64, 0u64);
    let (mut delivered, mut delivered_bytes, mut marked_on_arrival) = (0u64, 0u64, 0u64);
    let codepoints = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce];
    for _ in 0..60_000 {
        now += rng.gen_range(0..400 * US);
        if rng.gen_bool(0.55) {
            let pkt = Pkt(rng.gen_range(64..=1514), codepoints[rng.gen_range(0..4)]);
            (offered, offered_bytes) = (offered + 1, offered_bytes + pkt.0 as u64);
            match q.enqueue(pkt, now) {
                Enqueued::Dropped(p, _) => {
                    (overflow, overflow_bytes) = (overflow + 1, overflow_bytes + p.0 as u64)
                }
                Enqueued::Marked => marked_on_arrival += 1,
                Enqueued::Queued => {}
            }
        } else if let Some(d) = q.dequeue(now, &mut sink) {
            (delivered, delivered_bytes) = (delivered + 1, delivered_bytes + d.pkt.0 as u64);
        }
        assert_eq!(q.len_bytes(), q.l.bytes() + q.c.bytes());
        assert_eq!(q.len_packets(), q.l.len() + q.c.len());
    }
    assert!(sink.drops > 0 && sink.marks > 0 && overflow > 0, "the workload exercises every path");
    assert_eq!(marked_on_arrival, 0, "drop_early is off");
    assert_eq!(offered, delivered + sink.drops + overflow + q.len_packets() as u64);
    assert_eq!(offered_bytes, delivered_bytes + sink.dropped_bytes + overflow_bytes + q.len_bytes());
}
