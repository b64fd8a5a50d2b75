//! The ns2 profile: ns-2 `queue/pie.cc` rules pinned to hand-computed values. A drain rate of
//! 1.5 MB/s makes each queued 1500-byte packet 1 ms of delay; target 20 ms, alpha 0.125,
//! beta 1.25, tupdate 30 ms.

use super::*;

fn ns2() -> Pie<Pkt> {
    Pie::new(PieConfig::ns2(), Limit::Packets(1000), false, 1)
}

/// One update (the first, at time 0) from probability `prob`, the previous update's estimate
/// `old_ms` and a backlog of `now_ms` ms. No burst allowance is armed (none until an arrival).
fn step_from(q: &mut Pie<Pkt>, prob: f64, old_ms: u64, now_ms: u64) -> f64 {
    q.vars.prob = prob;
    q.vars.qdelay = old_ms as f64 / 1e3;
    q.vars.avg_dq_rate = 1.5e6;
    backlog(q, now_ms * 1500);
    q.on_timer(0);
    q.probability()
}

fn step(prob: f64, old_ms: u64, now_ms: u64) -> f64 {
    step_from(&mut ns2(), prob, old_ms, now_ms)
}

#[test]
fn ns2_defaults_and_first_update_at_zero() {
    let c = PieConfig::ns2();
    assert_eq!(
        (c.target, c.tupdate, c.alpha, c.beta, c.max_burst, c.dq_threshold, c.ecn_drop_above),
        (20 * MS, 30 * MS, 0.125, 1.25, 100 * MS, 10_000, 0.1)
    );
    assert_eq!((c.estimator, c.pkt_bytes, c.cap_step), (QdelayEstimator::DequeueRate, 1500, true));
    let q = ns2();
    // `sUpdate_` = 0: the timer first fires at time 0 (Linux: 500 ms); no allowance before an
    // arrival arms it.
    assert_eq!(q.next_timer(), 0);
    assert_eq!(q.burst_allowance(), 0);
    assert_eq!(q.vars.burst_state, BurstState::NoBurst);
}

#[test]
fn ns2_scaling_bands() {
    // Standing 30 ms against 20 ms: the raw step is 0.125 * 0.010 = 0.00125.
    for (p, factor) in [
        (0.0, 1.0 / 32.0),
        (5e-4, 1.0 / 32.0),
        (0.001, 1.0 / 8.0),
        (0.005, 1.0 / 8.0),
        (0.01, 0.5),
        (0.05, 0.5),
        (0.1, 2.0),
        (0.5, 2.0),
        (1.0, 8.0),
        (5.0, 8.0),
    ] {
        assert_close!(step(p, 30, 30), p + 0.00125 * factor);
        assert_eq!(ns2_scale(p), factor);
    }
    // p >= 10: x32 = 0.04, then capped at 0.02 (p >= 10 %).
    assert_eq!(ns2_scale(10.0), 32.0);
    assert_close!(step(12.0, 30, 30), 12.02);
    // From 0, ns-2 steps a quarter of Linux (/8): 0.00125 / 32 against 0.00125 / 8.
    assert_close!(step(0.0, 30, 30), 3.90625e-5);
    // Falling steps are amplified too and never capped: 100 → 50 ms at p = 0.5 gives
    // 2 * (0.125 * 0.030 + 1.25 * -0.050) = -0.1175 (Linux -0.05875); at p = 2, x8 = -0.47;
    // at p = 12, 40 → 30 ms: 32 * (0.125 * 0.010 + 1.25 * -0.010) = -0.36.
    assert_close!(step(0.5, 100, 50), 0.3825);
    assert_close!(step(2.0, 100, 50), 1.53);
    assert_close!(step(12.0, 40, 30), 11.64);
}

#[test]
fn ns2_step_cap_and_the_200ms_rule() {
    // p = 15 %, 50 → 100 ms: 2 * (0.125 * 0.080 + 1.25 * 0.050) = 0.145, capped at 0.02.
    assert_close!(step(0.15, 50, 100), 0.17);
    // p = 9 %: halved, not capped: 0.0725 / 2.
    assert_close!(step(0.09, 50, 100), 0.09 + 0.03625);
    // cap_step = false: the doubled step goes through.
    let mut q = Pie::new(PieConfig { cap_step: false, ..PieConfig::ns2() }, Limit::Packets(1000), false, 1);
    assert_close!(step_from(&mut q, 0.15, 50, 100), 0.15 + 0.145);
    // Standing 210 ms > 200 ms at p = 0.5: capped 0.02, plus 0.02 (Linux: 250 ms, so 0.52).
    assert_close!(step(0.5, 210, 210), 0.54);
    // Exactly 200 ms: `qdelay > 0.2` is strict.
    assert_close!(step(0.5, 200, 200), 0.52);
    // Below 10 % the +2 % comes on top of the uncapped step: 300 ms at 5 %: 0.035 / 2 + 0.02.
    assert_close!(step(0.05, 300, 300), 0.0875);
    // No bound at 1: 0.99 → 1.03 → (x8, capped) 1.07.
    let mut q = ns2();
    assert_close!(step_from(&mut q, 0.99, 300, 300), 1.03);
    q.on_timer(30 * MS);
    assert_close!(q.probability(), 1.07);
    // Above 1 a falling delay takes x8 steps: 280 → 250 ms at 1.11:
    // 8 * (0.125 * 0.230 + 1.25 * -0.030) = -0.07, then +0.02 (250 ms > 200 ms).
    assert_close!(step(1.11, 280, 250), 1.06);
}

#[test]
fn ns2_decay_when_empty_even_without_a_rate() {
    // p = 0.5, empty queue, rate known: (0.5 + 2 * 0.125 * -0.020) * 0.98, twice.
    let mut q = ns2();
    assert_close!(step_from(&mut q, 0.5, 0, 0), 0.4851);
    q.on_timer(30 * MS);
    assert_close!(q.probability(), (0.4851 - 0.005) * 0.98);
    // Small p (/32): (0.0005 - 0.0025 / 32) * 0.98.
    assert_close!(step(0.0005, 0, 0), 0.0004134375);
    // One of the two delays non-zero: no decay. 2 ms → 0: 2 * (-0.0025 + 1.25 * -0.002).
    assert_close!(step(0.5, 2, 0), 0.49);
    // No rate known yet, a packet queued: the estimate is 0 and ns-2 decays anyway (Linux does
    // not: 0.4975).
    let mut q = ns2();
    q.vars.prob = 0.5;
    backlog(&mut q, 1500);
    q.on_timer(0);
    assert_close!(q.probability(), 0.4851);
}

#[test]
fn ns2_update_sequence_through_the_queue() {
    let mut q = ns2();
    // The update at 0 runs on the empty queue; the first arrival arms the 100 ms allowance.
    for _ in 0..30 {
        assert!(matches!(q.enqueue(full(), MS), Enqueued::Queued));
    }
    assert_eq!((q.burst_allowance(), q.vars.burst_state), (100 * MS, BurstState::Protecting));
    q.vars.avg_dq_rate = 1.5e6;
    // 30 ms standing, but the allowance holds p at 0 for four updates: 100 → 70 → 40 → 10 → 0.
    for (t, left) in [(30, 70), (60, 40), (90, 10), (120, 0)] {
        q.on_timer(t * MS);
        assert_eq!((q.probability(), q.burst_allowance()), (0.0, left * MS));
    }
    // 150 ms: the controller starts from 0: 0.125 * 0.010 / 32.
    let mut p = 3.90625e-5;
    q.on_timer(150 * MS);
    assert_close!(q.probability(), p);
    // 130 ms at 180: (0.125 * 0.110 + 1.25 * 0.100) / 32.
    backlog(&mut q, 150_000);
    p += 0.13875 / 32.0;
    q.on_timer(180 * MS);
    assert_close!(q.probability(), p);
    assert_close!(p, 0.004375);
    // Standing 130 ms, 0.1 % <= p < 1 %: 0.01375 / 8.
    q.on_timer(210 * MS);
    assert_close!(q.probability(), 0.00609375);
    // 230 ms: (0.125 * 0.210 + 1.25 * 0.100) / 8, plus 0.02 above 200 ms.
    backlog(&mut q, 150_000);
    q.on_timer(240 * MS);
    assert_close!(q.probability(), 0.045);
    // Standing 230 ms, 1 % <= p < 10 %: 0.02625 / 2 + 0.02, twice.
    q.on_timer(270 * MS);
    assert_close!(q.probability(), 0.078125);
    q.on_timer(300 * MS);
    assert_close!(q.probability(), 0.11125);
    // p >= 10 %: 2 * 0.02625 capped at 0.02, plus 0.02.
    q.on_timer(330 * MS);
    assert_close!(q.probability(), 0.15125);
    // Down to 180 ms: 2 * (0.125 * 0.160 + 1.25 * -0.050) = -0.085; no boost below 200 ms.
    for _ in 0..50 {
        q.fifo.pop();
    }
    q.on_timer(360 * MS);
    assert_close!(q.probability(), 0.06625);
    // Empty: (0.125 * -0.020 + 1.25 * -0.180) / 2 takes p below 0: 0. Not quiet yet (180 ms).
    while q.fifo.pop().is_some() {}
    q.on_timer(390 * MS);
    assert_eq!(q.probability(), 0.0);
    assert_eq!(q.vars.avg_dq_rate, 1.5e6);
    assert_eq!(q.vars.burst_state, BurstState::Protecting);
    // Quiet (both 0, p = 0, rate known): the rate average is cleared, the allowance is not
    // restored (Linux would), and the spent allowance moves the state to IN_BURST.
    q.on_timer(420 * MS);
    assert_eq!((q.vars.avg_dq_rate, q.burst_allowance()), (0.0, 0));
    assert_eq!((q.vars.burst_state, q.vars.burst_reset), (BurstState::InBurst, 0));
}

#[test]
fn ns2_burst_allowance_rearms_after_a_quiet_1_5_s() {
    let mut q = ns2();
    q.vars.burst_state = BurstState::InBurst;
    // Quiet updates at 0, 30, ... count up; the 51st (> 1.5 s / 30 ms = 50) ends the burst.
    q.on_timer(49 * 30 * MS);
    assert_eq!((q.vars.burst_state, q.vars.burst_reset), (BurstState::InBurst, 50));
    // A non-quiet update zeroes the count.
    let mut r = ns2();
    r.vars.burst_state = BurstState::InBurst;
    r.on_timer(9 * 30 * MS);
    assert_eq!(r.vars.burst_reset, 10);
    r.vars.avg_dq_rate = 1.5e6;
    backlog(&mut r, 30_000);
    r.on_timer(10 * 30 * MS);
    assert_eq!((r.vars.burst_state, r.vars.burst_reset), (BurstState::InBurst, 0));
    // Back to the first queue: one more quiet update and the state is NO_BURST.
    q.on_timer(50 * 30 * MS);
    assert_eq!((q.vars.burst_state, q.vars.burst_reset), (BurstState::NoBurst, 0));
    assert_eq!(q.burst_allowance(), 0);
    // The next arrival's early-drop check arms it again.
    q.enqueue(full(), 50 * 30 * MS + MS);
    assert_eq!((q.burst_allowance(), q.vars.burst_state), (100 * MS, BurstState::Protecting));
}

#[test]
fn ns2_arming_check_still_decides_the_packet() {
    let mut q = ns2();
    backlog(&mut q, 15_000);
    (q.vars.prob, q.vars.qdelay) = (1.0, 0.1);
    // No update before the arrivals.
    q.next_update = 30 * MS;
    // NO_BURST: the allowance is armed, and this packet is still dropped at p = 1 ...
    assert!(matches!(q.enqueue(full(), MS), Enqueued::Dropped(_, DropReason::Aqm)));
    assert_eq!(q.burst_allowance(), 100 * MS);
    // ... the next ones pass while the allowance lasts.
    assert!(matches!(q.enqueue(full(), MS), Enqueued::Queued));
}

/// AQM drops among `n` arrivals to an armed-and-spent ns-2 queue holding `queued` packets.
fn ns2_drops(prob: f64, qdelay: f64, qdelay_old: f64, queued: usize, n: usize) -> usize {
    let mut q = ns2();
    backlog(&mut q, queued as u64 * 1500);
    q.next_update = 30 * MS;
    q.vars.burst_state = BurstState::InBurst;
    (q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (prob, qdelay, qdelay_old);
    (0..n).filter(|_| matches!(q.enqueue(full(), MS), Enqueued::Dropped(_, DropReason::Aqm))).count()
}

#[test]
fn ns2_no_drop_rules() {
    assert_eq!(ns2_drops(1.0, 0.1, 0.1, 10, 5), 5);
    // p > 1 (ns-2 has no bound): every arrival.
    assert_eq!(ns2_drops(3.0, 0.1, 0.1, 10, 5), 5);
    assert!((20..60).contains(&ns2_drops(0.19, 0.1, 0.1, 10, 200)));
    // The delay guard reads the last update's estimate (`edv_.qdelay_old` after calculate_p).
    assert_eq!(ns2_drops(0.19, 0.005, 0.100, 10, 200), 0);
    assert!(ns2_drops(0.19, 0.100, 0.005, 10, 200) > 20);
    assert_eq!(ns2_drops(1.0, 0.005, 0.005, 10, 5), 5);
    // `qlen <= 2 * mean_pktsize_`: two packets (3 000 B) protect, three do not.
    assert_eq!(ns2_drops(1.0, 0.1, 0.1, 2, 1), 0);
    assert_eq!(ns2_drops(1.0, 0.1, 0.1, 3, 1), 1);
}

#[test]
fn ns2_marks_below_mark_p_strictly() {
    let queue = |ecn_drop_above: f64, prob: f64| {
        let mut q =
            Pie::new(PieConfig { ecn_drop_above, ..PieConfig::ns2() }, Limit::Packets(10_000), true, 3);
        backlog(&mut q, 15_000);
        q.next_update = 30 * MS;
        q.vars.burst_state = BurstState::InBurst;
        (q.vars.prob, q.vars.qdelay) = (prob, 0.05);
        q
    };
    let count = |q: &mut Pie<Pkt>, f: fn(&Enqueued<Pkt>) -> bool| {
        (0..400).filter(|_| f(&q.enqueue(ect(), MS))).count()
    };
    // p = mark_p exactly: `p < mark_p_` fails, so picked ECT packets are dropped (RFC/Linux mark).
    let drops = count(&mut queue(0.1, 0.1), |o| matches!(o, Enqueued::Dropped(_, DropReason::Aqm)));
    assert!((20..70).contains(&drops), "{drops}");
    // Just below: the same draws mark.
    let mut q = queue(0.1, 0.1 - 1e-9);
    assert_eq!(count(&mut q, |o| matches!(o, Enqueued::Marked)), drops);
    // ecn_drop_above = 1 is `use_mark_p_ false`: marks even at p > 1; non-ECT still dropped.
    let mut q = queue(1.0, 2.0);
    assert!((0..5).all(|_| matches!(q.enqueue(ect(), MS), Enqueued::Marked)));
    assert!(matches!(q.enqueue(full(), MS), Enqueued::Dropped(_, DropReason::Aqm)));
}

#[test]
fn ns2_rate_average_is_half_and_half_and_burst_untouched() {
    let mut q = ns2();
    for _ in 0..20 {
        q.enqueue(full(), 0);
    }
    // As in the Linux test: 10 500 B over 6 ms, then 10 500 B over 7 ms.
    for k in 1..=7 {
        q.dequeue(k * MS, &mut NoSink).unwrap();
    }
    assert_close!(q.vars.avg_dq_rate, 1.75e6);
    for k in 8..=14 {
        q.dequeue(k * MS, &mut NoSink).unwrap();
    }
    // 0.5 * 1.75e6 + 0.5 * 1.5e6 (Linux 7/8, 1/8: 1.71875e6).
    assert_close!(q.vars.avg_dq_rate, 1.625e6);
    assert_eq!(q.vars.dq_count, None);
    // Dequeues do not spend the allowance (Linux: 87 ms left here).
    assert_eq!(q.burst_allowance(), 100 * MS);
}

#[test]
fn ns2_measurement_restarts_only_above_the_threshold() {
    let run = |cfg: PieConfig| {
        let mut q = Pie::new(cfg, Limit::Packets(1000), false, 1);
        (0..30).for_each(|_| q.fifo.push(Pkt(1000, Ecn::NotEct), 0));
        q.next_update = S;
        // Starts at 1 ms (29 000 B left), ends at 10 ms (20 000 B left, restart), ends again at
        // 20 ms with exactly 10 000 B left.
        for k in 1..=20 {
            q.dequeue(k * MS, &mut NoSink).unwrap();
        }
        q
    };
    let q = run(PieConfig::ns2());
    assert_eq!(q.vars.dq_count, None, "ns-2: `byteLength() > dq_threshold` to restart");
    assert_close!(q.vars.avg_dq_rate, 0.5 * (10_000.0 / 0.009) + 0.5 * (10_000.0 / 0.010));
    let q = run(PieConfig::linux_3_17());
    assert_eq!(q.vars.dq_count, Some(0), "Linux restarts at the threshold");
}

#[test]
fn ns2_quiet_reset_keeps_a_running_measurement() {
    let mut q = ns2();
    (0..12).for_each(|_| q.fifo.push(Pkt(1000, Ecn::NotEct), 0));
    // A measurement started at 0 has counted 4 000 B; rate 2 MB/s, so 12 000 B are 6 ms.
    (q.vars.avg_dq_rate, q.vars.dq_count, q.vars.dq_start, q.vars.qdelay) = (2e6, Some(4000), 0, 0.006);
    // 6 ms twice, p = 0: (0.125 * -0.014) / 32 < 0 keeps p at 0: quiet with a rate known.
    q.on_timer(0);
    assert_eq!(q.probability(), 0.0);
    assert_eq!((q.vars.avg_dq_rate, q.vars.dq_count, q.vars.dq_start), (0.0, Some(-1), 0));
    // The measurement goes on from -1 B: 10 packets reach 9 999 B, the 11th 10 999 B at 11 ms,
    // over 11 ms since the original start; that is the first sample.
    for k in 1..=11 {
        q.dequeue(k * MS, &mut NoSink).unwrap();
    }
    assert_close!(q.vars.avg_dq_rate, 10_999.0 / 0.011);
    assert_eq!(q.vars.dq_count, None);
}

#[test]
fn ns2_long_idle_settles() {
    let mut q = ns2();
    (q.vars.prob, q.vars.qdelay, q.vars.avg_dq_rate) = (5.0, 0.3, 1.5e6);
    q.vars.burst_state = BurstState::Protecting;
    q.on_timer(3_600_000 * MS);
    assert_eq!(q.probability(), 0.0);
    assert_eq!(q.vars.burst_state, BurstState::NoBurst);
    assert!(q.updates_run < 600, "{} updates", q.updates_run);
    let mut r = ns2();
    (r.vars.prob, r.vars.qdelay, r.vars.avg_dq_rate) = (5.0, 0.3, 1.5e6);
    r.vars.burst_state = BurstState::Protecting;
    while r.next_update <= 3_600_000 * MS {
        let t = r.next_update;
        r.settled = false;
        r.on_timer(t);
    }
    assert_eq!(r.vars, q.vars);
}

#[test]
fn ns2_params() {
    use crate::{build_queue, ParamValue};
    let mut p = Params::new();
    p.insert("profile", ParamValue::Str("ns2".into()));
    assert_eq!(PieConfig::from_params(&p).unwrap(), PieConfig::ns2());
    p.insert("ecn_drop_above", ParamValue::Float(1.0));
    p.insert("max_burst", ParamValue::Str("150ms".into()));
    let c = PieConfig::from_params(&p).unwrap();
    assert_eq!((c.profile, c.ecn_drop_above, c.max_burst), (PieProfile::Ns2, 1.0, 150 * MS));
    let cfg = QueueConfig { limit: Limit::Packets(1000), ecn: true, seed: 5 };
    let mut q = build_queue::<Pkt>("pie", cfg, &p).unwrap();
    let want = probabilities(&mut Pie::new(c, cfg.limit, cfg.ecn, cfg.seed));
    assert_eq!(probabilities(q.as_mut()), want, "the registry builds this ns-2 PIE");
    let rfc = PieConfig { ecn_drop_above: 1.0, ..PieConfig::rfc8033() };
    assert_ne!(probabilities(&mut Pie::new(rfc, cfg.limit, cfg.ecn, cfg.seed)), want);
    p.insert("qdelay_estimator", ParamValue::Str("timestamp".into()));
    assert_eq!(PieConfig::from_params(&p).unwrap_err().key, "qdelay_estimator");
}
