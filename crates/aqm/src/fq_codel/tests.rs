use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::*;
use crate::ParamValue;

const M: Nanos = 1_000_000;
/// 100 ms / sqrt(n), truncated to whole nanoseconds, worked out by hand:
/// sqrt(2) = 1.41421356…, sqrt(3) = 1.73205080….
const GAP: [Nanos; 5] = [0, 100_000_000, 70_710_678, 57_735_026, 50_000_000];

#[derive(Debug)]
struct Pkt {
    id: u32,
    flow: u64,
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
        self.flow
    }
}

/// What the queue discarded or marked at dequeue: (packet id, sojourn).
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

/// Flow ids of the tests; `Bench::new` checks they hash to different buckets.
const A: u64 = 1;
const B: u64 = 2;
const C: u64 = 3;

struct Bench {
    q: FqCoDel<Pkt>,
    next_id: u32,
}

impl Bench {
    fn new(limit: Limit, ecn: bool, cfg: FqCoDelConfig) -> Self {
        let q = FqCoDel::new(QueueConfig { limit, ecn, seed: 0 }, cfg);
        let buckets = [q.bucket(A), q.bucket(B), q.bucket(C)];
        assert!(buckets[0] != buckets[1] && buckets[1] != buckets[2] && buckets[0] != buckets[2]);
        Self { q, next_id: 0 }
    }
    fn default() -> Self {
        Self::new(Limit::Packets(10_240), false, FqCoDelConfig::default())
    }
    /// Offer one packet; returns its id and the outcome.
    fn offer(&mut self, flow: u64, size: u32, ecn: Ecn, at: Nanos) -> (u32, Enqueued<Pkt>) {
        let id = self.next_id;
        self.next_id += 1;
        (id, self.q.enqueue(Pkt { id, flow, size, ecn }, at))
    }
    /// Enqueue `n` packets that must be queued; returns their ids.
    fn fill(&mut self, flow: u64, n: u32, size: u32, ecn: Ecn, at: Nanos) -> Vec<u32> {
        (0..n)
            .map(|_| {
                let (id, r) = self.offer(flow, size, ecn, at);
                assert!(matches!(r, Enqueued::Queued));
                id
            })
            .collect()
    }
    /// Dequeue once: the packet sent (id, ECN, sojourn) and what the sink was told.
    fn deq(&mut self, at: Nanos) -> (Option<Sent>, Rec) {
        let mut rec = Rec::default();
        let out = self.q.dequeue(at, &mut rec).map(|d| (d.pkt.id, d.pkt.ecn, d.sojourn));
        (out, rec)
    }
    fn deq_id(&mut self, at: Nanos) -> Option<u32> {
        self.deq(at).0.map(|o| o.0)
    }
    fn flow(&self, id: u64) -> &Flow<Pkt> {
        &self.q.flows[self.q.bucket(id)]
    }
}

// ---- classification ----

#[test]
fn one_flow_one_bucket_and_the_seed_perturbs_the_hash() {
    let q = |seed| {
        FqCoDel::<Pkt>::new(
            QueueConfig { limit: Limit::Packets(10), ecn: false, seed },
            FqCoDelConfig::default(),
        )
    };
    let (q0, q0b, q1) = (q(0), q(0), q(1));
    let map = |q: &FqCoDel<Pkt>| (0..64u64).map(|id| q.bucket(id)).collect::<Vec<_>>();
    assert_eq!(map(&q0), map(&q0b), "same seed, same buckets");
    assert_ne!(map(&q0), map(&q1), "another seed, another perturbation");
    assert!(map(&q0).iter().all(|&b| b < 1024));
}

#[test]
fn hashing_spreads_flows_like_random_balls_into_bins() {
    // 1024 flows into 1024 buckets: a uniform hash leaves n(1 - (1 - 1/n)^n) = 1024 × 0.6323 ≈ 647.5
    // buckets occupied, standard deviation ≈ sqrt(n e^-1 (1 - 2e^-1)) ≈ 10. 600..=700 is ±5 sigma.
    let q = Bench::default().q;
    let mut used = vec![false; 1024];
    for id in 0..1024u64 {
        used[q.bucket(id * 7919 + 13)] = true;
    }
    let n = used.iter().filter(|&&u| u).count();
    assert!((600..=700).contains(&n), "{n} buckets used");
}

#[test]
fn flows_that_collide_share_one_fifo() {
    // flows = 1: reciprocal_scale(h, 1) = (h × 1) >> 32 = 0 for every 32-bit h, so A and B share
    // bucket 0, its FIFO and its deficit: packets leave in arrival order across the two flows.
    let cfg = FqCoDelConfig { flows: 1, ..FqCoDelConfig::default() };
    let mut b = Bench {
        q: FqCoDel::new(QueueConfig { limit: Limit::Packets(10), ecn: false, seed: 0 }, cfg),
        next_id: 0,
    };
    assert_eq!((b.q.bucket(A), b.q.bucket(B)), (0, 0));
    for flow in [A, B, A, B] {
        b.fill(flow, 1, 100, Ecn::NotEct, 0);
    }
    let out: Vec<_> = (0..5).map(|_| b.deq_id(0)).collect();
    assert_eq!(out, [Some(0), Some(1), Some(2), Some(3), None]);
}

// ---- DRR ----

#[test]
fn drr_serves_bytes_by_quantum_with_overdraft() {
    // Quantum 1514. A: 4 × 1500 B (ids 0-3), B: 8 × 500 B (ids 4-11), all at t = 0; new list
    // [A, B], both deficits 1514. fq_codel_dequeue serves a queue while deficit > 0 (it may go
    // negative: no size check), then adds a quantum and moves it to the old tail:
    //  1 A 1514 → A0, 14          2 A 14 → A1, -1486
    //  3 A -1486 → 28, old [A]; B 1514 → B4, 1014
    //  4 B → B5, 514   5 B → B6, 14   6 B → B7, -486
    //  7 B → 1028, old [A, B]; A 28 → A2, -1472
    //  8 A → 42, old [B, A]; B 1028 → B8, 528   9 B → B9, 28   10 B → B10, -472
    // 11 B → 1042, old [A, B]; A 42 → A3, -1458
    // 12 A → 56, old [B, A]; B 1042 → B11, 542
    // 13 B empty, from old: off the lists; A 56 > 0, empty: off the lists; nothing.
    let mut b = Bench::default();
    b.fill(A, 4, 1500, Ecn::NotEct, 0);
    b.fill(B, 8, 500, Ecn::NotEct, 0);
    let out: Vec<_> = (0..13).map(|_| b.deq_id(0)).collect();
    let want = [0, 1, 4, 5, 6, 7, 2, 8, 9, 10, 3, 11].map(Some);
    assert_eq!(out[..12], want);
    assert_eq!(out[12], None);
    assert_eq!((b.flow(A).deficit, b.flow(B).deficit), (56, 542));
    assert_eq!((b.flow(A).list, b.flow(B).list), (List::Idle, List::Idle));
    assert!(b.q.new_flows.is_empty() && b.q.old_flows.is_empty());
}

#[test]
fn a_new_flow_is_served_first_once_then_waits_its_turn() {
    // A: 8 × 500 B at t = 0. Dequeues 1-4: A0 (1014), A1 (514), A2 (14), A3 (-486).
    // Dequeue 5: A -486 → 1028, old [A]; A4 → 528. A is an old flow with credit left.
    let mut b = Bench::default();
    let a = b.fill(A, 8, 500, Ecn::NotEct, 0);
    let out: Vec<_> = (0..5).map(|_| b.deq_id(0).unwrap()).collect();
    assert_eq!(out, a[..5]);
    assert_eq!((b.flow(A).list, b.flow(A).deficit), (List::Old, 528));
    // S (flow C) sends 100 B: new list [C], deficit 1514; served before A despite A's credit.
    let s0 = b.fill(C, 1, 100, Ecn::NotEct, 0)[0];
    assert_eq!(b.deq_id(0), Some(s0));
    // Next dequeue: C is first on the new list but empty; the old list is not, so C moves to the
    // old tail (RFC 8290 §4.2): old [A, C]. A 528 → A5, 28.
    assert_eq!(b.deq_id(0), Some(a[5]));
    assert_eq!((b.flow(C).list, b.flow(C).deficit), (List::Old, 1414));
    // C sends again while on the old list: no new-flow priority, no fresh quantum.
    let s1 = b.fill(C, 1, 100, Ecn::NotEct, 0)[0];
    assert_eq!(b.flow(C).deficit, 1414);
    // A 28 > 0 → A6, -472. Then A → 1042, old [C, A]; C 1414 → S1.
    assert_eq!(b.deq_id(0), Some(a[6]));
    assert_eq!(b.deq_id(0), Some(s1));
    assert_eq!(b.deq_id(0), Some(a[7]));
}

#[test]
fn an_emptied_new_flow_leaves_the_lists_when_no_old_flow_waits() {
    // Linux adds to RFC 8290 §4.2: a new flow that empties moves to the old list only "if
    // !list_empty(&q->old_flows)"; alone, it leaves the lists and comes back new, with a fresh
    // quantum, at its next packet.
    let mut b = Bench::default();
    b.fill(C, 1, 1000, Ecn::NotEct, 0);
    assert_eq!(b.deq_id(0), Some(0));
    assert_eq!(b.flow(C).deficit, 514);
    assert_eq!(b.deq_id(0), None);
    assert_eq!(b.flow(C).list, List::Idle);
    b.fill(C, 1, 1000, Ecn::NotEct, 0);
    assert_eq!((b.flow(C).list, b.flow(C).deficit), (List::New, 1514));
}

// ---- CoDel per flow ----

/// One dequeue of a schedule: when, what was sent (id, ECN, sojourn), what the sink was told.
type Step = (Nanos, Option<Sent>, Rec);
type Sent = (u32, Ecn, Nanos);

/// A bulk flow A (300 × 1500 B at t = 0) under CoDel, and a sparse flow C sending one packet
/// 1 ms before a dequeue at 50, 150 and 250 ms. A is primed onto the old list at t = 0 (A0,
/// A1: sojourn 0, below target; deficit 14, then -1486). Each later dequeue at an A instant
/// serves A: C, if queued, went first at its own instant and has left the lists by then
/// (new → old behind A, then, empty at the front of the old list, off the lists).
/// Returns the ids of A and what each dequeue did.
fn bulk_and_sparse(ecn: bool, a_ecn: Ecn, c_ecn: Ecn) -> (Vec<u32>, Vec<Step>) {
    let mut b = Bench::new(Limit::Packets(10_240), ecn, FqCoDelConfig::default());
    let a = b.fill(A, 300, 1500, a_ecn, 0);
    assert_eq!((b.deq_id(0), b.deq_id(0)), (Some(a[0]), Some(a[1])));
    let d3 = 210 * M + GAP[2];
    let instants = [10 * M, 50 * M, 110 * M, 150 * M, 210 * M, 250 * M, d3, d3 + GAP[3]];
    let mut steps = vec![];
    for t in instants {
        if t % (100 * M) == 50 * M {
            b.fill(C, 1, 200, c_ecn, t - M);
        }
        let (out, rec) = b.deq(t);
        steps.push((t, out, rec));
    }
    // Schedule after the last step: count 4, drop_next = d3 + GAP[3] + 100/sqrt(4) ms.
    assert_eq!(b.flow(A).codel.count, 4);
    assert_eq!(b.flow(A).codel.drop_next, d3 + GAP[3] + GAP[4]);
    assert!(b.flow(A).codel.dropping);
    assert_eq!(b.flow(C).codel, CoDelVars::default(), "the sparse flow's CoDel never moved");
    (a, steps)
}

#[test]
fn codel_drops_the_standing_flow_at_interval_then_interval_over_sqrt2_and_spares_the_sparse_one() {
    // t = 10: A2, sojourn 10 ms >= 5 ms, total backlog 297 × 1500 > mtu: first_above = 110 ms.
    // t = 50: C's packet (id 300), sojourn 1 ms.
    // t = 110: A3 ok to drop (110 >= 110): enter dropping, drop A3, send A4; count = 1 (no
    //   carry-over: count - lastcount = 0), drop_next = 110 + 100 = 210 ms.
    // t = 150: C (301).   t = 210: count 2, drop A5, send A6, drop_next = 210 + 70.710678.
    // t = 250: C (302).   t = 280.710678: count 3, drop A7, send A8, drop_next += 57.735026.
    // t = 338.445704: count 4, drop A9, send A10.
    let (a, steps) = bulk_and_sparse(false, Ecn::NotEct, Ecn::NotEct);
    let sent: Vec<u32> = steps.iter().map(|s| s.1.unwrap().0).collect();
    assert_eq!(sent, [a[2], 300, a[4], 301, a[6], 302, a[8], a[10]]);
    let drops: Vec<_> = steps.iter().flat_map(|s| s.2.dropped.iter().copied()).collect();
    let d3 = 210 * M + GAP[2];
    assert_eq!(drops, [(a[3], 110 * M), (a[5], 210 * M), (a[7], d3), (a[9], d3 + GAP[3])]);
    for (t, out, rec) in &steps {
        if let Some((id, _, sojourn)) = out {
            if *id >= 300 {
                assert_eq!((*sojourn, rec.dropped.len()), (M, 0), "sparse packet at {t}");
            }
        }
    }
}

#[test]
fn with_ecn_the_standing_flow_is_marked_at_the_same_instants() {
    // Same schedule with A ECT(0) and ecn on: the head is marked and sent instead of dropped
    // (Linux codel_dequeue `goto end`), so A3, A4, A5, A6 are sent marked at 110, 210, 280.71,
    // 338.45 ms; the counts are the same. C (ECT(0)) is never marked.
    let (a, steps) = bulk_and_sparse(true, Ecn::Ect0, Ecn::Ect0);
    let sent: Vec<_> = steps.iter().map(|s| s.1.unwrap()).map(|(id, e, _)| (id, e)).collect();
    let ce = |i: usize| (a[i], Ecn::Ce);
    let ect = |id: u32| (id, Ecn::Ect0);
    assert_eq!(sent, [ect(a[2]), ect(300), ce(3), ect(301), ce(4), ect(302), ce(5), ce(6)]);
    let marks: Vec<_> = steps.iter().flat_map(|s| s.2.marked.iter().copied()).collect();
    let d3 = 210 * M + GAP[2];
    assert_eq!(marks, [(a[3], 110 * M), (a[4], 210 * M), (a[5], d3), (a[6], d3 + GAP[3])]);
    assert!(steps.iter().all(|s| s.2.dropped.is_empty()));
}

#[test]
fn non_ect_packets_are_dropped_with_ecn_on_and_ect_ones_with_ecn_off() {
    for (ecn, codepoint) in [(true, Ecn::NotEct), (false, Ecn::Ect1)] {
        let (a, steps) = bulk_and_sparse(ecn, codepoint, codepoint);
        let drops: Vec<u32> = steps.iter().flat_map(|s| s.2.dropped.iter().map(|d| d.0)).collect();
        assert_eq!(drops, [a[3], a[5], a[7], a[9]], "ecn {ecn}, {codepoint:?}");
        assert!(steps.iter().all(|s| s.2.marked.is_empty()));
    }
}

#[test]
fn the_mtu_rule_counts_the_whole_qdisc_backlog() {
    // codel_should_drop compares `*backlog`, which fq_codel passes as &sch->qstats.backlog: all
    // flows. A: 2 × 1500 B at t = 0. Alone, A0 leaves 1500 B <= 1514 behind: not above target.
    let mut alone = Bench::default();
    alone.fill(A, 2, 1500, Ecn::NotEct, 0);
    alone.deq(10 * M);
    assert_eq!(alone.flow(A).codel.first_above_time, None);
    // With B holding 1500 B too, 3000 B are left > 1514: A's clock starts, 10 + 100 ms.
    let mut shared = Bench::default();
    shared.fill(A, 2, 1500, Ecn::NotEct, 0);
    shared.fill(B, 1, 1500, Ecn::NotEct, 0);
    assert_eq!(shared.deq_id(10 * M), Some(0));
    assert_eq!(shared.flow(A).codel.first_above_time, Some(110 * M));
}

#[test]
fn ce_threshold_marks_ect_packets_above_it_whatever_ecn_says() {
    // Linux codel_dequeue `end`: codel_time_after(ldelay, ce_threshold), strict. ecn off here.
    let cfg = FqCoDelConfig { ce_threshold: Some(M), ..FqCoDelConfig::default() };
    let mut b = Bench::new(Limit::Packets(100), false, cfg);
    b.fill(A, 1, 100, Ecn::Ect1, 0);
    b.fill(A, 1, 100, Ecn::Ect0, M);
    b.fill(A, 1, 100, Ecn::NotEct, 0);
    let (out, rec) = b.deq(2 * M);
    assert_eq!((out, rec.marked), (Some((0, Ecn::Ce, 2 * M)), vec![(0, 2 * M)]));
    let (out, rec) = b.deq(2 * M); // sojourn exactly 1 ms: not above.
    assert_eq!((out, rec.marked.len()), (Some((1, Ecn::Ect0, M)), 0));
    let (out, rec) = b.deq(2 * M); // not ECT: left alone, not dropped either.
    assert_eq!((out, rec.marked.len(), rec.dropped.len()), (Some((2, Ecn::NotEct, 2 * M)), 0, 0));
}

// ---- overflow ----

#[test]
fn overflow_drops_half_the_fattest_flow_from_its_head() {
    // A: 10 × 1000 B (ids 0-9), B: 4 × 1500 B (ids 10-13): 14 packets, the limit. C's 100 B
    // packet (id 14) makes 15 > 14: fq_codel_drop picks A (10000 B > 6000 B), threshold
    // 10000 >> 1 = 5000; it drops A's head while ++i < 64 and len < 5000: 1000, 2000, 3000, 4000,
    // 5000 → stop after 5 (ids 0-4). A's CoDel count += 5. C's packet stays.
    let mut b = Bench::new(Limit::Packets(14), false, FqCoDelConfig::default());
    b.fill(A, 10, 1000, Ecn::NotEct, 0);
    b.fill(B, 4, 1500, Ecn::NotEct, 0);
    let (id, r) = b.offer(C, 100, Ecn::NotEct, 0);
    let Enqueued::Dropped(first, DropReason::Overflow) = r else { panic!("{r:?}") };
    let extra: Vec<u32> = std::iter::from_fn(|| b.q.take_extra_drop()).map(|p| p.id).collect();
    assert_eq!((first.id, extra), (0, vec![1, 2, 3, 4]));
    assert_eq!((b.q.len_packets(), b.q.len_bytes()), (10, 5000 + 6000 + 100));
    assert_eq!((b.flow(A).backlog, b.flow(A).codel.count), (5000, 5));
    assert_eq!(b.flow(C).packets.back().map(|p| p.0.id), Some(id));
}

#[test]
fn drop_batch_caps_the_batch() {
    // As above with drop_batch = 3: ++i < 3 ends the loop after ids 0, 1, 2 (3000 B < 5000).
    let cfg = FqCoDelConfig { drop_batch: 3, ..FqCoDelConfig::default() };
    let mut b = Bench::new(Limit::Packets(14), false, cfg);
    b.fill(A, 10, 1000, Ecn::NotEct, 0);
    b.fill(B, 4, 1500, Ecn::NotEct, 0);
    let (_, r) = b.offer(C, 100, Ecn::NotEct, 0);
    assert!(matches!(r, Enqueued::Dropped(Pkt { id: 0, .. }, DropReason::Overflow)));
    let extra: Vec<u32> = std::iter::from_fn(|| b.q.take_extra_drop()).map(|p| p.id).collect();
    assert_eq!(extra, [1, 2]);
    assert_eq!((b.q.len_packets(), b.flow(A).codel.count), (12, 3));
}

#[test]
fn the_arrival_is_returned_when_it_is_the_one_dropped() {
    // Limit 2: A holds 2 × 100 B; B's 1500 B arrival makes B the fattest (1500 > 200),
    // threshold 750: one drop, B's head, which is the arrival. B is left empty but on the new
    // list (fq_codel_drop does not unlink); the next dequeue takes it off.
    let mut b = Bench::new(Limit::Packets(2), false, FqCoDelConfig::default());
    b.fill(A, 2, 100, Ecn::NotEct, 0);
    let (id, r) = b.offer(B, 1500, Ecn::NotEct, 0);
    assert!(matches!(r, Enqueued::Dropped(Pkt { id: 2, .. }, DropReason::Overflow)) && id == 2);
    assert!(b.q.take_extra_drop().is_none());
    assert_eq!((b.q.len_packets(), b.q.len_bytes()), (2, 200));
    assert_eq!(b.flow(B).list, List::New);
    assert_eq!((b.deq_id(0), b.deq_id(0), b.deq_id(0)), (Some(0), Some(1), None));
}

#[test]
fn memory_limit_and_ties_between_fattest_flows() {
    // memory_limit 3000 B: A, B, then A again hold 1000 B each; C's 1000 B makes 4000 > 3000.
    // A has 2000 B, the fattest: threshold 1000, one drop (1000 >= 1000), A's head (id 0).
    let cfg = FqCoDelConfig { memory_limit: 3000, ..FqCoDelConfig::default() };
    let mut b = Bench::new(Limit::Packets(100), false, cfg);
    for flow in [A, B, A] {
        b.fill(flow, 1, 1000, Ecn::NotEct, 0);
    }
    let (_, r) = b.offer(C, 1000, Ecn::NotEct, 0);
    assert!(matches!(r, Enqueued::Dropped(Pkt { id: 0, .. }, _)));
    // Now A, B, C hold 1000 B each: 3000 B, at the limit. Flow 4 (its own bucket) sends 1 B:
    // 3001 > 3000. The scan keeps the first strictly largest backlog, so of the three equal
    // queues the lowest bucket loses its head (threshold 500, one drop).
    assert!(![A, B, C].map(|f| b.q.bucket(f)).contains(&b.q.bucket(4)));
    let (_, r) = b.offer(4, 1, Ecn::NotEct, 0);
    let lowest = [A, B, C].into_iter().min_by_key(|&f| b.q.bucket(f)).unwrap();
    let Enqueued::Dropped(p, DropReason::Overflow) = r else { panic!("{r:?}") };
    assert_eq!(p.flow, lowest);
    assert_eq!(b.q.len_bytes(), 2001);
}

#[test]
fn a_byte_limit_is_honoured_like_the_packet_limit() {
    let mut b = Bench::new(Limit::Bytes(3000), false, FqCoDelConfig::default());
    b.fill(A, 3, 1000, Ecn::NotEct, 0);
    let (_, r) = b.offer(A, 1000, Ecn::NotEct, 0);
    // A 4000 B, threshold 2000: ids 0 (1000) and 1 (2000 >= 2000).
    assert!(matches!(r, Enqueued::Dropped(Pkt { id: 0, .. }, _)));
    assert_eq!(b.q.take_extra_drop().map(|p| p.id), Some(1));
    assert_eq!(b.q.len_bytes(), 2000);
}

// ---- conservation ----

/// Marks a packet as gone (delivered or dropped); each may go once only.
fn gone(seen: &mut [bool], id: u32) {
    assert!(!std::mem::replace(&mut seen[id as usize], true), "packet {id} twice");
}

#[test]
fn packets_and_bytes_are_conserved_over_a_random_workload() {
    // 40 flows in 16 buckets (collisions), a 60-packet limit overflowing in batches of up to 4,
    // ECN on, CE threshold 3 ms, arrivals faster than departures on average (0.5 per arrival).
    let cfg =
        FqCoDelConfig { flows: 16, drop_batch: 4, ce_threshold: Some(3 * M), ..FqCoDelConfig::default() };
    let mut q = FqCoDel::<Pkt>::new(QueueConfig { limit: Limit::Packets(60), ecn: true, seed: 9 }, cfg);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2024);
    let (mut sizes, mut seen) = (vec![], vec![]);
    let (mut gone_pkts, mut gone_bytes, mut now) = (0u64, 0u64, 0);
    let mut last_sent = std::collections::HashMap::new();
    let (mut overflows, mut aqm_drops, mut marks) = (0, 0, 0);
    for id in 0..20_000u32 {
        now += rng.gen_range(0..400_000);
        let size = rng.gen_range(40..=1500);
        let ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1][rng.gen_range(0..3)];
        sizes.push(size);
        seen.push(false);
        let mut out = vec![];
        if let Enqueued::Dropped(p, r) = q.enqueue(Pkt { id, flow: rng.gen_range(0..40), size, ecn }, now) {
            assert_eq!(r, DropReason::Overflow);
            out.push(p.id);
            out.extend(std::iter::from_fn(|| q.take_extra_drop()).map(|p| p.id));
            overflows += out.len();
        }
        for _ in 0..rng.gen_range(0..2) {
            let mut rec = Rec::default();
            let d = q.dequeue(now, &mut rec);
            out.extend(rec.dropped.iter().map(|d| d.0));
            (aqm_drops, marks) = (aqm_drops + rec.dropped.len(), marks + rec.marked.len());
            if let Some(d) = d {
                // One flow's packets leave in order (one FIFO per bucket, head drops only).
                assert!(last_sent.insert(d.pkt.flow, d.pkt.id).is_none_or(|prev| prev < d.pkt.id));
                out.push(d.pkt.id);
            }
        }
        for id in out {
            gone(&mut seen, id);
            (gone_pkts, gone_bytes) = (gone_pkts + 1, gone_bytes + u64::from(sizes[id as usize]));
        }
        let (pkts, bytes) = q.flows.iter().fold((0, 0), |(n, b), f| (n + f.packets.len(), b + f.backlog));
        assert_eq!((q.len_packets(), q.len_bytes()), (pkts, bytes));
        assert!(q.len_packets() <= 60);
        assert_eq!(u64::from(id) + 1, gone_pkts + pkts as u64);
        assert_eq!(sizes.iter().map(|&s| u64::from(s)).sum::<u64>(), gone_bytes + bytes);
        for (i, f) in q.flows.iter().enumerate() {
            let on_list = q.new_flows.contains(&(i as u32)) || q.old_flows.contains(&(i as u32));
            assert_eq!(on_list, f.list != List::Idle);
            assert!(f.packets.is_empty() || on_list, "a backlogged queue is on a list");
        }
    }
    // Every path ran: batch overflows, CoDel drops of non-ECT packets, marks.
    assert!(
        gone_pkts > 9_000 && overflows > 100 && aqm_drops > 100 && marks > 100,
        "{overflows} {aqm_drops} {marks}"
    );
}

// ---- parameters ----

#[test]
fn params_are_read_with_linux_defaults() {
    let p = Params::new();
    assert_eq!(FqCoDelConfig::from_params(&p).unwrap(), FqCoDelConfig::default());
    let keys: Vec<_> = p.specs().into_iter().map(|s| (s.key, s.default)).collect();
    let want = [
        ("flows", "1024"),
        ("quantum", "1514"),
        ("target", "\"5ms\""),
        ("interval", "\"100ms\""),
        ("mtu", "1514"),
        ("drop_batch", "64"),
        ("memory_limit", "33554432 B"),
        ("ce_threshold", "\"0s\""),
    ];
    assert_eq!(keys, want.map(|(k, d)| (k.to_string(), d.to_string())));
    let q: FqCoDel<Pkt> =
        FqCoDel::from_params(QueueConfig { limit: Limit::Packets(10_240), ecn: true, seed: 0 }, &p).unwrap();
    assert_eq!((q.name(), q.drops_at_dequeue(), q.flows.len()), ("fq_codel", true, 1024));
}

#[test]
fn params_are_checked_and_errors_name_the_key() {
    let read = |k: &str, v: ParamValue| {
        let mut p = Params::new();
        p.insert(k, v);
        FqCoDelConfig::from_params(&p)
    };
    let s = |v: &str| ParamValue::Str(v.into());
    for (k, v) in [
        ("quantum", ParamValue::Int(0)),
        ("quantum", ParamValue::Int(255)),
        ("quantum", ParamValue::Int((1 << 20) + 1)),
        ("flows", ParamValue::Int(0)),
        ("flows", ParamValue::Int(65_537)),
        ("drop_batch", ParamValue::Int(0)),
        ("memory_limit", s("3GiB")),
        ("memory_limit", ParamValue::Int(1000)),
        ("target", ParamValue::Float(5.0)),
        ("interval", s("-1ms")),
        ("ce_threshold", s("soon")),
    ] {
        assert_eq!(read(k, v.clone()).unwrap_err().key, k, "{k} = {v}");
    }
    assert_eq!(read("memory_limit", s("32MiB")).unwrap().memory_limit, 32 << 20);
    assert_eq!(read("memory_limit", s("32MB")).unwrap().memory_limit, 32_000_000);
    assert_eq!(read("quantum", ParamValue::Int(300)).unwrap().quantum, 300);
    assert_eq!(read("ce_threshold", s("1ms")).unwrap().ce_threshold, Some(M));
    assert_eq!(read("ce_threshold", ParamValue::Int(0)).unwrap().ce_threshold, Some(0));
    assert_eq!(read("flows", ParamValue::Int(65_536)).unwrap().flows, 65_536);
}
