use super::*;
use crate::Limit;

const M: Nanos = 1_000_000;
/// 100 ms / sqrt(n), truncated to whole nanoseconds, worked out by hand:
/// sqrt(2) = 1.41421356…, sqrt(3) = 1.73205080…, sqrt(5) = 2.23606797….
const GAP: [Nanos; 6] = [0, 100_000_000, 70_710_678, 57_735_026, 50_000_000, 44_721_359];

#[derive(Debug)]
struct Pkt {
    id: u32,
    size: u32,
    ecn: Ecn,
}
impl QueuedPacket for Pkt {
    fn wire_bytes(&self) -> u32 {
        self.size
    }
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = ecn
    }
    fn flow_id(&self) -> u64 {
        0
    }
}

/// What the queue discarded or marked on the way: (packet id, sojourn).
#[derive(Default)]
struct Rec {
    dropped: Vec<(u32, Nanos)>,
    marked: Vec<(u32, Nanos)>,
}
impl DequeueSink<Pkt> for Rec {
    fn dropped(&mut self, pkt: Pkt, reason: DropReason, sojourn: Nanos) {
        assert_eq!(reason, DropReason::Aqm);
        self.dropped.push((pkt.id, sojourn));
    }
    fn marked(&mut self, pkt: &Pkt, sojourn: Nanos) {
        assert_eq!(pkt.ecn, Ecn::Ce, "marked before it is reported");
        self.marked.push((pkt.id, sojourn));
    }
}

/// What one dequeue did.
#[derive(Debug, PartialEq)]
struct Step {
    out: Option<(u32, Ecn)>,
    dropped: Vec<u32>,
    marked: Vec<u32>,
}

struct Bench {
    q: CoDel<Pkt>,
    next_id: u32,
    /// Enqueue time of each packet, by id.
    stamps: Vec<Nanos>,
}

impl Bench {
    fn new(ecn: bool, cfg: CoDelConfig) -> Self {
        let queue = QueueConfig { limit: Limit::Packets(100_000), ecn, seed: 0 };
        Self { q: CoDel::new(queue, cfg), next_id: 0, stamps: vec![] }
    }
    /// Enqueue `n` packets stamped `at`, with ECN codepoints cycling through `ecn`.
    fn fill(&mut self, n: u32, at: Nanos, ecn: &[Ecn]) {
        for i in 0..n {
            let p = Pkt { id: self.next_id, size: 1500, ecn: ecn[i as usize % ecn.len()] };
            self.next_id += 1;
            self.stamps.push(at);
            assert!(matches!(self.q.enqueue(p, at), Enqueued::Queued));
        }
    }
    fn deq(&mut self, at: Nanos) -> Step {
        let mut rec = Rec::default();
        let out = self.q.dequeue(at, &mut rec);
        if let Some(d) = &out {
            assert_eq!(d.sojourn, at - self.stamps[d.pkt.id as usize], "sojourn of the delivered packet");
        }
        for &(id, sojourn) in rec.dropped.iter().chain(&rec.marked) {
            assert_eq!(sojourn, at - self.stamps[id as usize], "sojourn of a signalled packet");
        }
        Step {
            out: out.map(|d| (d.pkt.id, d.pkt.ecn)),
            dropped: rec.dropped.iter().map(|d| d.0).collect(),
            marked: rec.marked.iter().map(|m| m.0).collect(),
        }
    }
}

fn step(out: u32, dropped: &[u32]) -> Step {
    Step { out: Some((out, Ecn::NotEct)), dropped: dropped.to_vec(), marked: vec![] }
}

/// A standing queue stamped at 0, dequeued first at 10 ms: the head has been above target
/// since then, so the first drop is exactly one interval later, then the control law.
/// Returns the bench and the hand-computed signal instants for count = 1..=5.
fn standing(ecn: bool, codepoints: &[Ecn]) -> (Bench, [Nanos; 5]) {
    let mut b = Bench::new(ecn, CoDelConfig::default());
    b.fill(200, 0, codepoints);
    let e = 110 * M; // first above at 10 ms, + interval
    let d1 = e + GAP[1]; // 210_000_000
    let d2 = d1 + GAP[2]; // 280_710_678
    let d3 = d2 + GAP[3]; // 338_445_704
    let d4 = d3 + GAP[4]; // 388_445_704
    assert_eq!([d1, d2, d3, d4], [210_000_000, 280_710_678, 338_445_704, 388_445_704]);
    (b, [e, d1, d2, d3, d4])
}

#[test]
fn signal_instants_follow_interval_then_the_control_law() {
    let (mut b, instants) = standing(false, &[Ecn::NotEct]);
    // Head sojourn 10 ms >= target: first_above_time = 110 ms, nothing dropped yet.
    assert_eq!(b.deq(10 * M), step(0, &[]));
    assert_eq!(b.q.first_above_time, Some(110 * M));
    let mut id = 1;
    for (n, &t) in instants.iter().enumerate() {
        // One nanosecond early: delivered untouched.
        assert_eq!(b.deq(t - 1), step(id, &[]), "count {}", n + 1);
        // On the instant: the head is dropped and the next packet delivered.
        assert_eq!(b.deq(t), step(id + 2, &[id + 1]), "count {}", n + 1);
        assert!(b.q.dropping);
        assert_eq!(b.q.count, n as u64 + 1);
        id += 3;
    }
    // After count = 5 the next signal is 100 ms / sqrt(5) later.
    assert_eq!(b.q.drop_next, 388_445_704 + GAP[5]);
    assert_eq!(b.q.lastcount, 1);
}

#[test]
fn dropped_packets_report_their_sojourn() {
    let (mut b, [e, ..]) = standing(false, &[Ecn::NotEct]);
    b.deq(10 * M);
    let mut rec = Rec::default();
    let d = b.q.dequeue(e, &mut rec).unwrap();
    assert_eq!(rec.dropped, [(1, e)]);
    assert_eq!((d.pkt.id, d.sojourn), (2, e));
    assert_eq!(b.q.len_packets(), 197);
    assert_eq!(b.q.len_bytes(), 197 * 1500);
}

#[test]
fn a_late_dequeue_catches_up_with_several_drops_in_one_call() {
    let (mut b, [e, _, _, d3, _]) = standing(false, &[Ecn::NotEct]);
    b.deq(10 * M);
    assert_eq!(b.deq(e), step(2, &[1]));
    // Skip to d3: the loop drops at d1, d2 and d3 (counts 2, 3, 4) and stops at d4 > now.
    assert_eq!(b.deq(d3), step(6, &[3, 4, 5]));
    assert_eq!(b.q.count, 4);
    assert_eq!(b.q.drop_next, d3 + GAP[4]);
    // And one more nanosecond before d4 drops nothing.
    assert_eq!(b.deq(d3 + GAP[4] - 1), step(7, &[]));
}

/// Steady state: at every 1 ms step the head has waited exactly `sojourn` and `behind` ECT(0)
/// packets of `size` bytes remain after it. Returns the times of the AQM signals (drops, or
/// marks with `ecn`) before `dur`.
fn steady(cfg: CoDelConfig, ecn: bool, size: u32, behind: usize, sojourn: Nanos, dur: Nanos) -> Vec<Nanos> {
    let mut q: CoDel<Pkt> = CoDel::new(QueueConfig { limit: Limit::Packets(1000), ecn, seed: 0 }, cfg);
    let mut signals = vec![];
    let mut t = sojourn;
    while t < dur {
        // Stamp everything at t - sojourn so the head (whatever it is) waited exactly that.
        while q.len_packets() < behind + 1 {
            assert!(matches!(q.enqueue(Pkt { id: 0, size, ecn: Ecn::Ect0 }, t - sojourn), Enqueued::Queued));
        }
        let mut rec = Rec::default();
        let d = q.dequeue(t, &mut rec).unwrap();
        assert_eq!(d.sojourn, sojourn);
        signals.extend(rec.dropped.iter().chain(&rec.marked).map(|_| t));
        // Empty the rest so the next step starts from fresh stamps.
        while q.fifo.pop().is_some() {}
        t += M;
    }
    signals
}

#[test]
fn no_signal_while_sojourn_is_below_target() {
    // Every 1 ms for 10 s the head has waited target - 1 ns, with 4 packets (6000 bytes, well
    // over one MTU) behind it.
    for ecn in [false, true] {
        assert!(steady(CoDelConfig::default(), ecn, 1500, 4, 5 * M - 1, 10_000 * M).is_empty());
    }
}

#[test]
fn sojourn_equal_to_target_is_above_and_the_first_drop_is_one_interval_later() {
    for ecn in [false, true] {
        // First dequeue at 5 ms sets first_above_time = 105 ms; the step at 105 ms signals,
        // then 100 ms later, then at the first 1 ms step at or after 205 + 70.71 ms.
        let signals = steady(CoDelConfig::default(), ecn, 1500, 4, 5 * M, 300 * M);
        assert_eq!(signals, [105 * M, 205 * M, 276 * M]);
    }
}

#[test]
fn the_mtu_rule_keeps_one_mtu_in_the_queue() {
    let linux = CoDelConfig::default();
    let maxpacket = CoDelConfig { mtu: 0, ..linux };
    let long = 2_000 * M;
    let s = 50 * M;
    // One full packet behind the head: never above target, whatever the sojourn.
    assert!(steady(linux, false, 1500, 1, s, long).is_empty());
    assert!(steady(maxpacket, false, 1500, 1, s, long).is_empty());
    // Exactly mtu bytes behind is still "at most one MTU"; one byte more is above.
    assert!(steady(linux, false, 1514, 1, s, long).is_empty());
    assert_eq!(steady(linux, false, 1515, 1, s, long)[0], s + 100 * M);
    assert_eq!(steady(linux, false, 1500, 2, s, long)[0], s + 100 * M);
    // 700-byte packets, two behind = 1400 bytes: below Linux's 1514, but above the largest
    // packet seen (700) under the Linux 3.x rule.
    assert!(steady(linux, false, 700, 2, s, long).is_empty());
    assert_eq!(steady(maxpacket, false, 700, 2, s, long)[0], s + 100 * M);
    assert!(steady(maxpacket, false, 700, 1, s, long).is_empty());
}

#[test]
fn leaves_the_dropping_state_when_sojourn_falls_below_target() {
    let (mut b, [e, ..]) = standing(false, &[Ecn::NotEct]);
    b.deq(10 * M);
    assert_eq!(b.deq(e), step(2, &[1]));
    assert!(b.q.dropping);
    // Fresh packets behind the old ones; the old ones go out before drop_next = 210 ms.
    b.fill(20, 150 * M, &[Ecn::NotEct]);
    for id in 3..200 {
        assert_eq!(b.deq(150 * M), step(id, &[]));
    }
    assert!(b.q.dropping);
    // Head 200 has waited 1 ms: leave.
    assert_eq!(b.deq(151 * M), step(200, &[]));
    assert!(!b.q.dropping);
    assert_eq!(b.q.first_above_time, None);
    // Past the old drop_next nothing is dropped: the head is above target again, which only
    // restarts the interval (first_above_time = 300 + 100 ms).
    assert_eq!(b.deq(300 * M), step(201, &[]));
    assert_eq!(b.q.first_above_time, Some(400 * M));
    assert_eq!(b.deq(400 * M - 1), step(202, &[]));
    assert_eq!((b.q.count, b.q.lastcount), (1, 1));
}

#[test]
fn an_empty_queue_leaves_the_dropping_state() {
    let (mut b, [e, ..]) = standing(false, &[Ecn::NotEct]);
    b.deq(10 * M);
    b.deq(e);
    while b.deq(e + 1).out.is_some() {}
    assert!(!b.q.dropping);
    assert_eq!(b.q.first_above_time, None);
    assert!(b.q.is_empty());
}

/// Drive a queue to count = 5 (signals at the `standing` instants), drain it, then build a
/// fresh standing queue that has been above target for a whole interval at `reentry`.
/// Returns the queue just after the re-entry signal.
fn reenter_at(reentry: Nanos) -> Bench {
    let (mut b, instants) = standing(false, &[Ecn::NotEct]);
    b.deq(10 * M);
    for t in instants {
        assert_eq!(b.deq(t).dropped.len(), 1);
    }
    assert_eq!((b.q.count, b.q.lastcount, b.q.drop_next), (5, 1, 433_167_063));
    // Drain before drop_next: the last packet leaves one MTU or less, which ends the state.
    while b.deq(400 * M).out.is_some() {}
    assert!(!b.q.dropping);
    b.fill(50, reentry - 110 * M, &[Ecn::NotEct]);
    let first = b.next_id - 50;
    assert_eq!(b.deq(reentry - 100 * M), step(first, &[]));
    assert_eq!(b.q.first_above_time, Some(reentry));
    assert_eq!(b.deq(reentry), step(first + 2, &[first + 1]));
    assert!(b.q.dropping);
    b
}

#[test]
fn quick_reentry_carries_the_count_over() {
    // 510 ms: now - drop_next = 76.8 ms < 16 intervals, delta = count - lastcount = 4 > 1.
    let mut b = reenter_at(510 * M);
    assert_eq!((b.q.count, b.q.lastcount), (4, 4));
    assert_eq!(b.q.drop_next, 510 * M + GAP[4]);
    // The next signal 50 ms later (count 5), then 44.72 ms (sqrt 5).
    let id = b.next_id - 47;
    assert_eq!(b.deq(560 * M - 1), step(id, &[]));
    assert_eq!(b.deq(560 * M), step(id + 2, &[id + 1]));
    assert_eq!((b.q.count, b.q.drop_next), (5, 560 * M + GAP[5]));
}

#[test]
fn reentry_after_sixteen_intervals_starts_over_at_one() {
    let last = 433_167_063; // drop_next when the state was left
    let carry = reenter_at(last + 16 * 100 * M - 1);
    assert_eq!((carry.q.count, carry.q.lastcount), (4, 4));
    let reset = reenter_at(last + 16 * 100 * M);
    assert_eq!((reset.q.count, reset.q.lastcount), (1, 1));
    assert_eq!(reset.q.drop_next, last + 16 * 100 * M + GAP[1]);
    let much_later = reenter_at(60_000 * M);
    assert_eq!(much_later.q.count, 1);
}

#[test]
fn a_single_signal_per_state_gives_no_carry_over() {
    // delta = count - lastcount must exceed 1: enter (count 1), leave, re-enter quickly.
    let (mut b, [e, ..]) = standing(false, &[Ecn::NotEct]);
    b.deq(10 * M);
    b.deq(e);
    while b.deq(e + 1).out.is_some() {}
    b.fill(50, 200 * M, &[Ecn::NotEct]);
    b.deq(210 * M);
    assert_eq!(b.deq(310 * M).dropped.len(), 1);
    assert_eq!((b.q.count, b.q.lastcount, b.q.drop_next), (1, 1, 410 * M));
}

#[test]
fn ecn_marks_ect_packets_at_the_same_instants_and_never_drops_them() {
    for cp in [Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
        let (mut b, instants) = standing(true, &[cp]);
        assert_eq!(b.deq(10 * M).out, Some((0, cp)));
        let mut id = 1;
        for (n, &t) in instants.iter().enumerate() {
            assert_eq!(b.deq(t - 1).out, Some((id, cp)));
            // The marked head is delivered itself, with CE.
            let s = b.deq(t);
            assert_eq!(s, Step { out: Some((id + 1, Ecn::Ce)), dropped: vec![], marked: vec![id + 1] });
            assert_eq!(b.q.count, n as u64 + 1);
            id += 2;
        }
        assert_eq!(b.q.drop_next, 388_445_704 + GAP[5]);
    }
}

#[test]
fn with_ecn_on_non_ect_packets_are_still_dropped() {
    // Alternate NotEct, Ect0. Packet 0 (NotEct) leaves at 10 ms; at each instant the head
    // alternates, and each signal consumes one instant and one count either way.
    let (mut b, [e, d1, d2, ..]) = standing(true, &[Ecn::NotEct, Ecn::Ect0]);
    assert_eq!(b.deq(10 * M).out, Some((0, Ecn::NotEct)));
    // Entry: head 1 is ECT: marked and delivered.
    assert_eq!(b.deq(e), Step { out: Some((1, Ecn::Ce)), dropped: vec![], marked: vec![1] });
    // d1: head 2 is NotEct: dropped, ECT packet 3 delivered unmarked.
    assert_eq!(b.deq(d1), Step { out: Some((3, Ecn::Ect0)), dropped: vec![2], marked: vec![] });
    // Just before d2 NotEct packet 4 goes out untouched; at d2 head 5 is ECT: marked.
    assert_eq!(b.deq(d2 - 1), Step { out: Some((4, Ecn::NotEct)), dropped: vec![], marked: vec![] });
    assert_eq!(b.deq(d2), Step { out: Some((5, Ecn::Ce)), dropped: vec![], marked: vec![5] });
    assert_eq!(b.q.count, 3);
}

#[test]
fn with_ecn_off_ect_packets_are_dropped() {
    let (mut b, [e, d1, ..]) = standing(false, &[Ecn::Ect0]);
    b.deq(10 * M);
    assert_eq!(b.deq(e), Step { out: Some((2, Ecn::Ect0)), dropped: vec![1], marked: vec![] });
    assert_eq!(b.deq(d1), Step { out: Some((4, Ecn::Ect0)), dropped: vec![3], marked: vec![] });
}

#[test]
fn a_late_dequeue_with_ecn_marks_once_and_delivers() {
    // With a mark the loop ends (Linux goto end): one signal, drop_next advanced once.
    let (mut b, [e, d1, _, d3, _]) = standing(true, &[Ecn::Ect0]);
    b.deq(10 * M);
    b.deq(e);
    let s = b.deq(d3);
    assert_eq!((s.dropped.len(), s.marked.len()), (0, 1));
    assert_eq!((b.q.count, b.q.drop_next), (2, d1 + GAP[2]));
}

#[test]
fn overflow_drops_the_arrival_ect_or_not() {
    for ecn in [false, true] {
        let mut q: CoDel<Pkt> =
            CoDel::new(QueueConfig { limit: Limit::Packets(2), ecn, seed: 0 }, CoDelConfig::default());
        for id in 0..2 {
            assert!(matches!(q.enqueue(Pkt { id, size: 1500, ecn: Ecn::Ect0 }, 0), Enqueued::Queued));
        }
        let r = q.enqueue(Pkt { id: 2, size: 1500, ecn: Ecn::Ect0 }, 0);
        assert!(matches!(r, Enqueued::Dropped(Pkt { id: 2, .. }, DropReason::Overflow)));
        assert_eq!((q.len_packets(), q.len_bytes()), (2, 3000));
    }
    let mut q: CoDel<Pkt> =
        CoDel::new(QueueConfig { limit: Limit::Bytes(3000), ecn: false, seed: 0 }, CoDelConfig::default());
    assert!(matches!(q.enqueue(Pkt { id: 0, size: 2000, ecn: Ecn::NotEct }, 0), Enqueued::Queued));
    assert!(matches!(q.enqueue(Pkt { id: 1, size: 1001, ecn: Ecn::NotEct }, 0), Enqueued::Dropped(..)));
    assert!(matches!(q.enqueue(Pkt { id: 2, size: 1000, ecn: Ecn::NotEct }, 0), Enqueued::Queued));
}

#[test]
fn parameters_scale_the_schedule() {
    let cfg = CoDelConfig { target: 20 * M, interval: 400 * M, mtu: 1514 };
    let mut b = Bench::new(false, cfg);
    b.fill(50, 0, &[Ecn::NotEct]);
    assert_eq!(b.deq(20 * M - 1), step(0, &[]));
    assert_eq!(b.q.first_above_time, None);
    assert_eq!(b.deq(20 * M), step(1, &[]));
    assert_eq!(b.deq(420 * M), step(3, &[2]));
    // 400 ms then 400 / sqrt(2) = 282.842712… ms.
    assert_eq!(b.deq(820 * M), step(5, &[4]));
    assert_eq!(b.q.drop_next, 820 * M + 282_842_712);
}

#[test]
fn params_are_read_with_defaults_and_checked() {
    let p = Params::new();
    assert_eq!(CoDelConfig::from_params(&p).unwrap(), CoDelConfig::default());
    let keys: Vec<_> = p.specs().into_iter().map(|s| (s.key, s.default)).collect();
    assert_eq!(
        keys,
        [
            ("target".into(), "\"5ms\"".into()),
            ("interval".into(), "\"100ms\"".into()),
            ("mtu".into(), "1514".into())
        ]
    );
    let mut p = Params::new();
    p.insert("target", ccbench_params::ParamValue::Str("2.5ms".into()));
    p.insert("interval", ccbench_params::ParamValue::Str("50ms".into()));
    p.insert("mtu", ccbench_params::ParamValue::Int(0));
    assert_eq!(
        CoDelConfig::from_params(&p).unwrap(),
        CoDelConfig { target: 2_500_000, interval: 50 * M, mtu: 0 }
    );
    let mut p = Params::new();
    p.insert("target", ccbench_params::ParamValue::Str("0ms".into()));
    assert_eq!(CoDelConfig::from_params(&p).unwrap_err().key, "target");
}

/// The ns-2 profiles.
mod ns2;
