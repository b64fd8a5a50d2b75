use super::*;

use crate::testing::{NoSink, Pkt};

/// Puts `bytes` of 1500-byte packets in the queue without going through the AQM.
fn backlog(q: &mut Pie<Pkt>, bytes: u64) {
    (0..bytes / 1500).for_each(|_| q.fifo.push(Pkt(1500, Ecn::NotEct), 0));
}

fn full() -> Pkt {
    Pkt(1500, Ecn::NotEct)
}
fn ect() -> Pkt {
    Pkt(1500, Ecn::Ect0)
}

fn rfc() -> Pie<Pkt> {
    Pie::new(PieConfig::rfc8033(), Limit::Packets(1000), false, 1)
}
fn linux() -> Pie<Pkt> {
    Pie::new(PieConfig::linux_3_17(), Limit::Packets(1000), false, 1)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-9)
}
macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b) = ($a, $b);
        assert!(close(a, b), "{a} != {b}");
    }};
}

/// RFC profile: the timestamp sample the next update reads, set by hand.
fn rfc_update_with(q: &mut Pie<Pkt>, qdelay_ms: f64) -> f64 {
    q.vars.qdelay = qdelay_ms / 1e3;
    q.settled = false; // the state was edited by hand
    let t = q.next_update;
    q.on_timer(t);
    q.probability()
}

#[test]
fn rfc_update_follows_eq_4_2_from_zero() {
    let mut q = rfc();
    assert_eq!(q.next_timer(), 15 * MS);
    // qdelay 25 ms, qdelay_old 0, p = 0 < 1e-6: dp = (0.125 * 0.010 + 1.25 * 0.025) / 2048.
    let p1 = 0.0325 / 2048.0;
    assert_close!(rfc_update_with(&mut q, 25.0), p1);
    assert!((1e-5..1e-4).contains(&p1));
    // Standing 25 ms: only the alpha term, now divided by 128.
    let p2 = p1 + 0.00125 / 128.0;
    assert_close!(rfc_update_with(&mut q, 25.0), p2);
    // The delay falls to 5 ms: dp = (0.125 * -0.010 + 1.25 * -0.020) / 128 < 0, bounded at 0.
    assert_eq!(rfc_update_with(&mut q, 5.0), 0.0);
    assert_eq!(q.next_timer(), 60 * MS);
}

#[test]
fn rfc_auto_tuning_tiers() {
    // A standing delay of 25 ms against 15 ms: dp = 0.125 * 0.010 / scale.
    for (p, scale) in [
        (0.0, 2048.0),
        (9.9e-7, 2048.0),
        (1e-6, 512.0),
        (5e-6, 512.0),
        (1e-5, 128.0),
        (5e-5, 128.0),
        (1e-4, 32.0),
        (5e-4, 32.0),
        (1e-3, 8.0),
        (5e-3, 8.0),
        (0.01, 2.0),
        (0.05, 2.0),
        (0.1, 1.0),
        (0.5, 1.0),
    ] {
        let mut q = rfc();
        q.vars.prob = p;
        q.vars.qdelay_old = 0.025;
        assert_close!(rfc_update_with(&mut q, 25.0), p + 0.00125 / scale);
    }
    // The notes' oracle (§12.4): p = 5 %, 25 ms standing → dp = 6.25e-4.
    let mut q = rfc();
    q.vars.prob = 0.05;
    q.vars.qdelay_old = 0.025;
    assert_close!(rfc_update_with(&mut q, 25.0) - 0.05, 6.25e-4);
}

#[test]
fn linux_auto_tuning_has_three_tiers() {
    for (p, scale) in
        [(0.0, 8.0), (1e-6, 8.0), (0.005, 8.0), (0.01, 2.0), (0.05, 2.0), (0.1, 1.0), (0.5, 1.0)]
    {
        let mut q = linux();
        q.vars.prob = p;
        // 30 ms standing against 20 ms: Little's law 45 000 B at 1.5 MB/s.
        q.vars.avg_dq_rate = 1.5e6;
        q.vars.qdelay = 0.030;
        backlog(&mut q, 45_000);
        q.on_timer(LINUX_FIRST_UPDATE);
        assert_close!(q.probability(), p + 0.00125 / scale);
    }
}

#[test]
fn step_cap_above_ten_percent_and_only_there() {
    // delay 100 ms, previous 50 ms: dp = 0.125 * 0.085 + 1.25 * 0.050 = 0.073125.
    let mut q = rfc();
    q.vars.prob = 0.15;
    q.vars.qdelay_old = 0.050;
    assert_close!(rfc_update_with(&mut q, 100.0), 0.17);
    // Below 10 % the step is halved but not capped.
    let mut q = rfc();
    q.vars.prob = 0.09;
    q.vars.qdelay_old = 0.050;
    assert_close!(rfc_update_with(&mut q, 100.0), 0.09 + 0.073125 / 2.0);
    // cap_step = false (ns-3 UseCapDropAdjustment = false).
    let mut q = Pie::new(PieConfig { cap_step: false, ..PieConfig::rfc8033() }, Limit::Packets(10), false, 1);
    q.vars.prob = 0.15;
    q.vars.qdelay_old = 0.050;
    assert_close!(rfc_update_with(&mut q, 100.0), 0.15 + 0.073125);
    // A falling delay is never capped.
    let mut q = rfc();
    q.vars.prob = 0.5;
    q.vars.qdelay_old = 0.100;
    assert_close!(rfc_update_with(&mut q, 20.0), 0.5 + 0.125 * 0.005 + 1.25 * -0.080);
}

#[test]
fn rfc_has_no_high_delay_boost_linux_does() {
    // 300 ms standing: dp = 0.125 * 0.285 = 0.035625, capped at 0.02.
    let mut q = rfc();
    q.vars.prob = 0.5;
    q.vars.qdelay_old = 0.300;
    assert_close!(rfc_update_with(&mut q, 300.0), 0.52);
    // Linux: 0.125 * 0.280 = 0.035, capped at 0.02, then +0.02 above 250 ms.
    let mut q = linux();
    q.vars.prob = 0.5;
    q.vars.avg_dq_rate = 1.5e6;
    q.vars.qdelay = 0.300;
    backlog(&mut q, 450_000);
    q.on_timer(LINUX_FIRST_UPDATE);
    assert_close!(q.probability(), 0.54);
}

#[test]
fn decay_when_the_queue_stays_empty() {
    // RFC: p = 0.5, both delays 0: p = (0.5 - 0.125 * 0.015) * 0.98, twice.
    let mut q = rfc();
    q.vars.prob = 0.5;
    let p1 = (0.5 - 0.001875) * 0.98;
    assert_close!(rfc_update_with(&mut q, 0.0), p1);
    assert_close!(rfc_update_with(&mut q, 0.0), (p1 - 0.001875) * 0.98);
    // One non-zero delay of the two: no decay.
    let mut q = rfc();
    q.vars.prob = 0.5;
    q.vars.qdelay_old = 0.002;
    assert_close!(rfc_update_with(&mut q, 0.0), 0.5 - 0.001875 - 1.25 * 0.002);

    // Linux: empty queue with a known rate, target 20 ms: p = (0.5 - 0.125 * 0.020) * 0.98.
    let mut q = linux();
    q.vars.prob = 0.5;
    q.vars.avg_dq_rate = 1.5e6;
    q.on_timer(LINUX_FIRST_UPDATE);
    let p1 = (0.5 - 0.0025) * 0.98;
    assert_close!(q.probability(), p1);
    q.on_timer(LINUX_FIRST_UPDATE + 30 * MS);
    assert_close!(q.probability(), (p1 - 0.0025) * 0.98);
    // Linux: no rate known but a packet queued: the estimate is 0 and there is no decay.
    let mut q = linux();
    q.vars.prob = 0.5;
    backlog(&mut q, 1500);
    q.on_timer(LINUX_FIRST_UPDATE);
    assert_close!(q.probability(), 0.5 - 0.0025);
}

#[test]
fn linux_update_sequence_through_the_queue() {
    // A known drain rate of 1.5 MB/s makes each queued 1500-byte packet 1 ms of delay.
    let mut q = linux();
    q.vars.avg_dq_rate = 1.5e6;
    let fill = |q: &mut Pie<Pkt>, n: usize, t: Nanos| {
        for _ in 0..n {
            assert!(matches!(q.enqueue(full(), t), Enqueued::Queued), "burst allowance protects");
        }
    };
    fill(&mut q, 30, 0);
    assert_eq!(q.next_timer(), 500 * MS);
    // 30 ms, previous 0, p < 1 %: dp = (0.125 * 0.010 + 1.25 * 0.030) / 8.
    let mut p = 0.03875 / 8.0;
    q.on_timer(500 * MS);
    assert_close!(q.probability(), p);
    assert_close!(q.vars.qdelay, 0.030);
    // Standing 30 ms: dp = 0.125 * 0.010 / 8.
    p += 0.00125 / 8.0;
    q.on_timer(530 * MS);
    assert_close!(q.probability(), 0.005);
    // 130 ms (100 more packets, burst allowance still unused): dp = (0.125*0.110 + 1.25*0.100)/8.
    fill(&mut q, 100, 540 * MS);
    p += 0.13875 / 8.0;
    q.on_timer(560 * MS);
    assert_close!(q.probability(), p);
    // Standing 130 ms, 1 % <= p < 10 %: dp = 0.125 * 0.110 / 2.
    p += 0.006875;
    q.on_timer(590 * MS);
    assert_close!(q.probability(), p);
    // 230 ms: dp = (0.125 * 0.210 + 1.25 * 0.100) / 2; p < 10 % before, so no cap.
    fill(&mut q, 100, 600 * MS);
    p += 0.075625;
    q.on_timer(620 * MS);
    assert_close!(q.probability(), p);
    assert!(p > 0.1);
    // Standing 230 ms at p >= 10 %: 0.125 * 0.210 = 0.02625, capped at 0.02.
    p += 0.02;
    q.on_timer(650 * MS);
    assert_close!(q.probability(), p);
    // 280 ms: capped 0.02, plus 0.02 above 250 ms.
    fill(&mut q, 50, 660 * MS);
    p += 0.04;
    q.on_timer(680 * MS);
    assert_close!(q.probability(), p);
    assert_close!(p, 0.16484375);
}

#[test]
fn rfc_timestamp_estimate_is_the_last_sojourn_and_zero_when_empty() {
    let mut q = rfc();
    q.enqueue(full(), 0);
    q.enqueue(full(), MS);
    let d = q.dequeue(10 * MS, &mut NoSink).unwrap();
    assert_eq!(d.sojourn, 10 * MS);
    assert_close!(q.current_qdelay(), 0.010);
    // The update at 15 ms reads 10 ms: dp = (0.125 * -0.005 + 1.25 * 0.010) / 2048.
    q.on_timer(15 * MS);
    assert_close!(q.probability(), (0.0125 - 0.000625) / 2048.0);
    assert_close!(q.vars.qdelay_old, 0.010);
    let d = q.dequeue(16 * MS, &mut NoSink).unwrap();
    assert_eq!(d.sojourn, 15 * MS);
    assert_eq!(q.current_qdelay(), 0.0, "the queue emptied");
}

#[test]
fn linux_dequeue_rate_estimator_and_burst_allowance() {
    let mut q = linux();
    for _ in 0..20 {
        q.enqueue(full(), 0);
    }
    // One 1500-byte packet leaves per ms. The first dequeue leaves 28 500 B >= 10 000 B and
    // starts a measurement at 1 ms that counts its own packet, as Linux does.
    for k in 1..=7 {
        q.dequeue(k * MS, &mut NoSink).unwrap();
    }
    // 7 packets = 10 500 B by 7 ms: rate 10 500 B / 6 ms; 19 500 B remain, so it restarts.
    assert_close!(q.vars.avg_dq_rate, 1.75e6);
    assert_eq!(q.burst_allowance(), 94 * MS);
    assert_eq!(q.vars.dq_count, Some(0));
    for k in 8..=14 {
        q.dequeue(k * MS, &mut NoSink).unwrap();
    }
    // 10 500 B in 7 ms = 1.5 MB/s; avg = 7/8 * 1.75e6 + 1/8 * 1.5e6; 9 000 B left: stop.
    assert_close!(q.vars.avg_dq_rate, 1.71875e6);
    assert_eq!(q.burst_allowance(), 87 * MS);
    assert_eq!(q.vars.dq_count, None);
    // The update reads 9 000 B / 1.71875 MB/s.
    q.on_timer(LINUX_FIRST_UPDATE);
    assert_close!(q.vars.qdelay, 9000.0 / 1.71875e6);
}

#[test]
fn linux_resets_rate_and_burst_once_quiet() {
    let mut q = linux();
    q.vars.burst = 0;
    q.vars.avg_dq_rate = 1.5e6;
    q.vars.prob = 0.0005;
    // Empty queue, p < 1 %: (0.0005 - 0.0025 / 8) * 0.98 = 0.00018375; not yet 0.
    q.on_timer(LINUX_FIRST_UPDATE);
    assert_close!(q.probability(), 0.00018375);
    assert_eq!(q.burst_allowance(), 0);
    // Next update reaches 0: the estimator and the burst allowance are reset.
    q.on_timer(LINUX_FIRST_UPDATE + 30 * MS);
    assert_eq!(q.probability(), 0.0);
    assert_eq!(q.burst_allowance(), 100 * MS);
    assert_eq!(q.vars.avg_dq_rate, 0.0);
}

#[test]
fn rfc_burst_allowance_shrinks_per_update_and_is_restored() {
    let mut q = rfc();
    for _ in 0..5 {
        q.enqueue(full(), 0);
    }
    q.vars.prob = 1.0;
    q.vars.qdelay = 0.100;
    // Updates at 15, 30, ..., 135 ms leave 15 ms of the 150 ms.
    assert!(matches!(q.enqueue(full(), 140 * MS), Enqueued::Queued));
    assert_eq!(q.burst_allowance(), 15 * MS);
    assert_eq!(q.probability(), 1.0);
    // The tenth update, at 150 ms, uses it up: p = 1 drops every arrival.
    assert!(matches!(q.enqueue(full(), 150 * MS), Enqueued::Dropped(_, DropReason::Aqm)));
    assert_eq!(q.burst_allowance(), 0);
    // Congestion over (p = 0, both delays < 7.5 ms): the next arrival restores MAX_BURST.
    q.vars.prob = 0.0;
    q.vars.qdelay = 0.001;
    q.vars.qdelay_old = 0.001;
    q.enqueue(full(), 151 * MS);
    assert_eq!(q.burst_allowance(), 150 * MS);
}

/// AQM drops among `n` arrivals at 1 ms to a queue past its burst allowance holding `queued`
/// packets, with `p` and the delays forced (no update is due before 1 ms).
fn drops(profile: PieProfile, prob: f64, qdelay: f64, qdelay_old: f64, queued: usize, n: usize) -> usize {
    let mut q = Pie::new(PieConfig::for_profile(profile), Limit::Packets(1000), false, 7);
    for _ in 0..queued {
        q.enqueue(full(), 0);
    }
    (q.vars.burst, q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (0, prob, qdelay, qdelay_old);
    (0..n).filter(|_| matches!(q.enqueue(full(), MS), Enqueued::Dropped(_, DropReason::Aqm))).count()
}

#[test]
fn no_drop_rules() {
    use PieProfile::*;
    for profile in [Rfc8033, Linux317] {
        // p = 1 and a long queue: every arrival is dropped.
        assert_eq!(drops(profile, 1.0, 0.1, 0.1, 10, 5), 5);
        // p = 19 % drops about one in five ...
        assert!((20..60).contains(&drops(profile, 0.19, 0.1, 0.1, 10, 200)));
        // ... but not while the delay is below target/2 (7.5 or 10 ms) and p < 20 %.
        assert_eq!(drops(profile, 0.19, 0.005, 0.005, 10, 200), 0);
        // Delay below target/2 but p >= 20 %: the guard is off.
        assert_eq!(drops(profile, 1.0, 0.005, 0.005, 10, 5), 5);
        // Burst allowance left: nothing, whatever p.
        let mut q = Pie::new(PieConfig::for_profile(profile), Limit::Packets(100), false, 7);
        for _ in 0..10 {
            q.enqueue(full(), 0);
        }
        (q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (1.0, 0.1, 0.1);
        assert!(q.burst_allowance() > 0);
        assert!((0..5).all(|_| matches!(q.enqueue(full(), MS), Enqueued::Queued)));
        // One packet queued: never. Three (4 500 B, more than two packets): always at p = 1.
        assert_eq!(drops(profile, 1.0, 0.1, 0.1, 1, 1), 0);
        assert_eq!(drops(profile, 1.0, 0.1, 0.1, 3, 1), 1);
    }
    // Two packets queued (3 000 B): RFC `<= 2 * MEAN_PKTSIZE` protects, Linux `< 2 * mtu` not.
    assert_eq!(drops(Rfc8033, 1.0, 0.1, 0.1, 2, 1), 0);
    assert_eq!(drops(Linux317, 1.0, 0.1, 0.1, 2, 1), 1);
    // The RFC guard reads qdelay_old (the previous update), Linux the last update's estimate.
    assert_eq!(drops(Rfc8033, 0.19, 0.100, 0.005, 10, 200), 0);
    assert!(drops(Rfc8033, 0.19, 0.005, 0.100, 10, 200) > 20);
    assert_eq!(drops(Linux317, 0.19, 0.005, 0.100, 10, 200), 0);
    assert!(drops(Linux317, 0.19, 0.100, 0.005, 10, 200) > 20);
}

fn ecn_queue(ecn: bool, ecn_drop_above: f64, prob: f64) -> Pie<Pkt> {
    let cfg = PieConfig { ecn_drop_above, ..PieConfig::rfc8033() };
    let mut q = Pie::new(cfg, Limit::Packets(10_000), ecn, 3);
    for _ in 0..10 {
        q.enqueue(full(), 0);
    }
    (q.vars.burst, q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (0, prob, 0.05, 0.05);
    q
}

#[test]
fn ecn_marks_instead_of_dropping_up_to_ecn_drop_above() {
    // p = 1 > 0.1: ECT packets are dropped like the others (RFC §5.1, Linux 3.17).
    let mut q = ecn_queue(true, 0.1, 1.0);
    assert!(matches!(q.enqueue(ect(), MS), Enqueued::Dropped(_, DropReason::Aqm)));
    // ecn_drop_above = 1 disables that: ECT marked, not-ECT still dropped, CE stays CE.
    let mut q = ecn_queue(true, 1.0, 1.0);
    assert!(matches!(q.enqueue(ect(), MS), Enqueued::Marked));
    assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect1), MS), Enqueued::Marked));
    assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ce), MS), Enqueued::Marked));
    assert!(matches!(q.enqueue(full(), MS), Enqueued::Dropped(_, DropReason::Aqm)));
    for _ in 0..10 {
        q.dequeue(2 * MS, &mut NoSink);
    }
    for _ in 0..3 {
        assert_eq!(q.dequeue(2 * MS, &mut NoSink).unwrap().pkt.1, Ecn::Ce);
    }
    // ECN off on the queue: ECT packets are dropped.
    let mut q = ecn_queue(false, 1.0, 1.0);
    assert!(matches!(q.enqueue(ect(), MS), Enqueued::Dropped(_, DropReason::Aqm)));
    // At p = 0.1 exactly, with the default 0.1: marks only, never an AQM drop of ECT.
    let mut q = ecn_queue(true, 0.1, 0.1);
    let outcomes: Vec<_> = (0..400).map(|_| q.enqueue(ect(), MS)).collect();
    let marks = outcomes.iter().filter(|o| matches!(o, Enqueued::Marked)).count();
    assert!(outcomes.iter().all(|o| !matches!(o, Enqueued::Dropped(..))));
    assert!((20..70).contains(&marks), "{marks} marks of 400 at p = 0.1");
    // Just above 0.1: the same draws drop instead.
    let mut q = ecn_queue(true, 0.1, 0.1 + 1e-9);
    let drops = (0..400).filter(|_| matches!(q.enqueue(ect(), MS), Enqueued::Dropped(..))).count();
    assert_eq!(drops, marks);
}

#[test]
fn overflow_comes_first_and_drops_ect() {
    let mut q = Pie::new(PieConfig::rfc8033(), Limit::Packets(3), true, 1);
    for _ in 0..3 {
        assert!(matches!(q.enqueue(ect(), 0), Enqueued::Queued));
    }
    // Burst allowance left and p = 0: still an overflow drop, ECT or not.
    assert!(matches!(q.enqueue(ect(), 0), Enqueued::Dropped(_, DropReason::Overflow)));
    let mut q = Pie::new(PieConfig::linux_3_17(), Limit::Bytes(4000), true, 1);
    q.enqueue(ect(), 0);
    q.enqueue(ect(), 0);
    assert!(matches!(q.enqueue(ect(), 0), Enqueued::Dropped(_, DropReason::Overflow)));
    assert!(matches!(q.enqueue(Pkt(1000, Ecn::Ect0), 0), Enqueued::Queued));
    assert_eq!((q.len_packets(), q.len_bytes()), (3, 4000));
}

fn verdicts(seed: u64) -> Vec<bool> {
    let mut q = Pie::new(PieConfig::rfc8033(), Limit::Packets(10_000), false, seed);
    for _ in 0..10 {
        q.enqueue(full(), 0);
    }
    (q.vars.burst, q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (0, 0.3, 0.05, 0.05);
    (0..300).map(|_| matches!(q.enqueue(full(), MS), Enqueued::Dropped(..))).collect()
}

#[test]
fn same_seed_same_decisions() {
    assert_eq!(verdicts(42), verdicts(42));
    assert_ne!(verdicts(42), verdicts(43));
    let drops = verdicts(42).iter().filter(|&&d| d).count();
    assert!((60..120).contains(&drops), "{drops} of 300 at p = 0.3");
}

/// A scripted run: bursts into a 10 Mb/s link (1.2 ms per packet), pauses, one long idle gap.
/// Returns every outcome and the probability after every event.
fn scripted(cfg: PieConfig, with_timer: bool) -> (Vec<String>, Vec<f64>, u64) {
    let mut q = Pie::new(cfg, Limit::Packets(200), true, 9);
    let mut log = Vec::new();
    let mut probs = Vec::new();
    let mut t: Nanos = 0;
    let tx = 1_200_000;
    let step = |q: &mut Pie<Pkt>, to: Nanos| {
        if with_timer {
            while q.next_timer() <= to {
                q.on_timer(q.next_timer());
            }
        }
    };
    let mut next_dq = 0;
    for round in 0..80u64 {
        // A burst of arrivals every 40 ms, more than the link drains, with a pause now and then.
        let burst = if round % 10 < 8 { 60 } else { 0 };
        for i in 0..burst {
            let at = t + i * 300_000;
            while next_dq <= at {
                step(&mut q, next_dq);
                if let Some(d) = q.dequeue(next_dq, &mut NoSink) {
                    log.push(format!("d{}", d.sojourn));
                }
                probs.push(q.probability());
                next_dq += tx;
            }
            step(&mut q, at);
            let p = if i % 2 == 0 { ect() } else { full() };
            log.push(format!("{:?}", q.enqueue(p, at)));
            probs.push(q.probability());
        }
        t += 40 * MS;
        if round == 40 {
            // A minute of silence: the queue drains, then nothing happens.
            while q.len_packets() > 0 {
                step(&mut q, next_dq);
                q.dequeue(next_dq, &mut NoSink);
                next_dq += tx;
            }
            t += 60_000 * MS;
            next_dq = t;
        }
    }
    step(&mut q, t);
    q.on_timer(t);
    probs.push(q.probability());
    (log, probs, q.updates_run)
}

#[test]
fn catching_up_equals_a_timer_at_every_update() {
    for cfg in [PieConfig::rfc8033(), PieConfig::linux_3_17(), PieConfig::ns2()] {
        let (log_a, probs_a, run_a) = scripted(cfg.clone(), false);
        let (log_b, probs_b, run_b) = scripted(cfg.clone(), true);
        assert_eq!(log_a, log_b);
        assert_eq!(probs_a, probs_b, "probabilities bit for bit");
        assert!(probs_a.iter().any(|&p| p > 0.1), "{:?}: PIE acted", cfg.profile);
        assert!(log_a.iter().any(|o| o.starts_with("Dropped(Pkt(1500, NotEct), Aqm)")));
        assert!(log_a.iter().any(|o| o.starts_with("Marked")));
        // The minute of silence (4 000 or 2 000 updates) was not stepped through.
        assert!(run_a < 2_500 && run_b < 2_500, "{run_a} {run_b} updates computed");
    }
}

#[test]
fn long_idle_costs_a_bounded_number_of_updates() {
    let mut q = rfc();
    q.vars.prob = 1.0;
    q.vars.qdelay_old = 0.3;
    // An hour of empty queue: p decays to 0 in 157 updates (a fixed point), then nothing runs.
    q.on_timer(3_600_000 * MS);
    assert_eq!(q.probability(), 0.0);
    assert!(q.updates_run < 200, "{} updates", q.updates_run);
    assert_eq!(q.next_timer(), 3_600_000 * MS + 15 * MS);
    // The same with the update stepped one by one gives the same state.
    let mut r = rfc();
    r.vars.prob = 1.0;
    r.vars.qdelay_old = 0.3;
    while r.next_update <= 3_600_000 * MS {
        let t = r.next_update;
        r.settled = false;
        r.on_timer(t);
    }
    assert_eq!(r.vars, q.vars);
    assert_eq!(r.updates_run, 240_000);
}

#[test]
fn params_defaults_per_profile_and_errors() {
    use crate::ParamValue;
    assert_eq!(PieConfig::from_params(&Params::new()).unwrap(), PieConfig::rfc8033());
    let mut p = Params::new();
    p.insert("profile", ParamValue::Str("linux-3.17".into()));
    assert_eq!(PieConfig::from_params(&p).unwrap(), PieConfig::linux_3_17());
    p.insert("ecn_drop_above", ParamValue::Float(1.0));
    p.insert("target", ParamValue::Str("5ms".into()));
    p.insert("tupdate", ParamValue::Str("16ms".into()));
    p.insert("max_burst", ParamValue::Str("150ms".into()));
    p.insert("cap_step", ParamValue::Bool(false));
    p.insert("dq_threshold_bytes", ParamValue::Int(16384));
    let c = PieConfig::from_params(&p).unwrap();
    assert_eq!(
        (c.ecn_drop_above, c.target, c.tupdate, c.max_burst, c.cap_step, c.dq_threshold),
        (1.0, 5 * MS, 16 * MS, 150 * MS, false, 16384)
    );
    p.reject_unknown("pie").unwrap();
    p.insert("qdelay_estimator", ParamValue::Str("timestamp".into()));
    assert_eq!(PieConfig::from_params(&p).unwrap_err().key, "qdelay_estimator");
    for (k, v) in [
        ("profile", ParamValue::Str("ns3".into())),
        ("ecn_drop_above", ParamValue::Float(1.5)),
        ("ecn_drop_above", ParamValue::Bool(false)),
        ("tupdate", ParamValue::Str("0ms".into())),
        ("alpha", ParamValue::Float(-1.0)),
    ] {
        let mut p = Params::new();
        p.insert(k, v);
        assert_eq!(PieConfig::from_params(&p).unwrap_err().key, k);
    }
    let mut p = Params::new();
    p.insert("qdelay_estimator", ParamValue::Str("dq_rate".into()));
    let c = PieConfig::from_params(&p).unwrap();
    assert_eq!(
        (c.profile, c.estimator, c.dq_threshold),
        (PieProfile::Rfc8033, QdelayEstimator::DequeueRate, 16384)
    );
}

#[test]
fn registry_row_reads_these_parameters() {
    use crate::{build_queue, queue_params, queues, ParamValue};
    let row = queues::<Pkt>().into_iter().find(|e| e.name == "pie").unwrap();
    let specs = queue_params(row.build.build);
    let keys: Vec<_> = specs.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "profile",
            "qdelay_estimator",
            "target",
            "tupdate",
            "alpha",
            "beta",
            "max_burst",
            "ecn_drop_above",
            "dq_threshold_bytes",
            "pkt_bytes",
            "cap_step"
        ]
    );
    assert_eq!(specs[0].kind, "one of rfc8033, linux-3.17, ns2");
    let mut p = Params::new();
    p.insert("profile", ParamValue::Str("linux-3.17".into()));
    p.insert("ecn_drop_above", ParamValue::Float(1.0));
    let cfg = QueueConfig { limit: Limit::Packets(1000), ecn: true, seed: 5 };
    let mut q = build_queue::<Pkt>("pie", cfg, &p).unwrap();
    assert_eq!(q.name(), "pie");
    let linux = PieConfig { ecn_drop_above: 1.0, ..PieConfig::linux_3_17() };
    let want = probabilities(&mut Pie::new(linux, cfg.limit, cfg.ecn, cfg.seed));
    assert_eq!(probabilities(q.as_mut()), want, "the registry builds Linux's PIE");
    let rfc = PieConfig { ecn_drop_above: 1.0, ..PieConfig::rfc8033() };
    assert_ne!(probabilities(&mut Pie::new(rfc, cfg.limit, cfg.ecn, cfg.seed)), want);
    p.insert("target", ParamValue::Float(5.0));
    assert_eq!(build_queue::<Pkt>("pie", cfg, &p).err().unwrap().key, "target");
}

#[test]
fn rfc_with_dequeue_rate_uses_littles_law() {
    let cfg = PieConfig { estimator: QdelayEstimator::DequeueRate, ..PieConfig::rfc8033() };
    let mut q = Pie::new(cfg, Limit::Packets(1000), false, 1);
    for _ in 0..30 {
        q.enqueue(full(), 0);
    }
    // 1 packet per ms: the measurement starts at the first dequeue (43 500 B left) and ends
    // with the 11th packet (16 500 B >= 16 384 B) at 11 ms: 16 500 B / 10 ms.
    for k in 1..=11 {
        q.dequeue(k * MS, &mut NoSink);
    }
    assert_close!(q.vars.avg_dq_rate, 1.65e6);
    assert_eq!(q.burst_allowance(), 150 * MS, "the RFC shrinks it per update, not per measurement");
    // At 15 ms: 19 packets = 28 500 B / 1.65 MB/s; qdelay_old 0.
    let d = 28_500.0 / 1.65e6;
    q.on_timer(15 * MS);
    assert_close!(q.probability(), (0.125 * (d - 0.015) + 1.25 * d) / 2048.0);
    assert_eq!(q.burst_allowance(), 135 * MS);
}

mod ns2;

/// The queue's drop probability every 2 ms over 400 ms while it drains one packet at a time from
/// a standing queue of 150 (what tells PIE's profiles apart through the `QueueDisc` interface).
pub(super) fn probabilities(q: &mut dyn QueueDisc<Pkt>) -> Vec<f64> {
    for _ in 0..150 {
        q.enqueue(full(), 0);
    }
    (1..=200)
        .map(|k| {
            q.dequeue(k * 2 * MS, &mut NoSink);
            q.signal_probability(k * 2 * MS).unwrap()
        })
        .collect()
}
