//! The ns-2 profiles (`ns2.rs`): ns-2 `codel.cc` rules pinned to instants and counts worked out by
//! hand from the code. 1500-byte packets, target 5 ms, interval 100 ms unless said otherwise;
//! `GAP[n]` is 100 ms / sqrt(n) truncated to nanoseconds.

use super::*;

/// 100 ms / sqrt(n) for the counts the ns-2 re-entries reach: sqrt(196) = 14, so
/// 100 / 14 = 7.142857… ms; sqrt(200) = 14.1421356…, so 7.0710678… ms.
const GAP_196: Nanos = 7_142_857;
const GAP_200: Nanos = 7_071_067;

fn bench(profile: CoDelProfile, ecn: bool) -> Bench {
    let queue = QueueConfig { limit: Limit::Packets(100_000), ecn, seed: 0 };
    let q = CoDel::with_profile(queue, CoDelConfig::for_profile(profile), profile);
    Bench { q, next_id: 0, stamps: vec![] }
}

/// An empty dequeue at time 0 clears ns-2's initial `first_above_time_ = -1` (as the first packet
/// through an idle link does), so what follows starts from the unset state as Linux does.
fn primed(profile: CoDelProfile, ecn: bool) -> Bench {
    let mut b = bench(profile, ecn);
    assert_eq!(b.q.dequeue(0, &mut Rec::default()).map(|d| d.pkt.id), None);
    assert_eq!(b.q.first_above_time, None);
    b
}

fn set_params(pairs: &[(&str, &str)]) -> Params {
    let mut p = Params::new();
    for (k, v) in pairs {
        p.insert(*k, ccbench_params::ParamValue::Str((*v).into()));
    }
    p
}

#[test]
fn profile_parameter_and_ns2_defaults() {
    let p = Params::new();
    assert_eq!(CoDelProfile::from_params(&p).unwrap(), CoDelProfile::Linux);
    for (name, profile) in
        [("linux", CoDelProfile::Linux), ("ns2", CoDelProfile::Ns2), ("ns2-patch", CoDelProfile::Ns2Patch)]
    {
        assert_eq!(CoDelProfile::from_params(&set_params(&[("profile", name)])).unwrap(), profile);
    }
    assert_eq!(CoDelProfile::from_params(&set_params(&[("profile", "bsd")])).unwrap_err().key, "profile");
    // ns-default.tcl: target_ .005, interval_ 0.1; maxpacket_ instead of an MTU.
    let ns2 = CoDelConfig { target: 5 * M, interval: 100 * M, mtu: 0 };
    assert_eq!(CoDelConfig::for_profile(CoDelProfile::Ns2), ns2);
    assert_eq!(CoDelConfig::for_profile(CoDelProfile::Ns2Patch), ns2);
    assert_eq!(CoDelConfig::for_profile(CoDelProfile::Linux), CoDelConfig::default());
    let p = Params::new();
    assert_eq!(CoDelConfig::from_params_for(&p, CoDelProfile::Ns2).unwrap(), ns2);
    let p = set_params(&[("target", "20ms")]);
    assert_eq!(
        CoDelConfig::from_params_for(&p, CoDelProfile::Ns2).unwrap(),
        CoDelConfig { target: 20 * M, ..ns2 }
    );
    // reset(): first_above_time_ = -1 (already passed), maxpacket_ = 256.
    let b = bench(CoDelProfile::Ns2, false);
    assert_eq!((b.q.first_above_time, b.q.max_packet, b.q.count, b.q.dropping), (Some(0), 256, 0, false));
    let b = bench(CoDelProfile::Linux, false);
    assert_eq!((b.q.first_above_time, b.q.max_packet), (None, 0));
}

#[test]
fn ns2_first_above_target_head_after_reset_is_dropped_at_once() {
    for profile in [CoDelProfile::Ns2, CoDelProfile::Ns2Patch] {
        let mut b = bench(profile, false);
        b.fill(200, 0, &[Ecn::NotEct]);
        // first_above_time_ = -1 != 0, and now >= -1: enter at the first dequeue, count 1.
        assert_eq!(b.deq(10 * M), step(1, &[0]));
        assert!(b.q.dropping);
        assert_eq!((b.q.count, b.q.drop_next), (1, 110 * M));
    }
    // Linux waits an interval.
    let mut b = bench(CoDelProfile::Linux, false);
    b.fill(200, 0, &[Ecn::NotEct]);
    assert_eq!(b.deq(10 * M), step(0, &[]));
    assert_eq!(b.q.first_above_time, Some(110 * M));
}

#[test]
fn ns2_first_spell_follows_interval_then_the_control_law() {
    // Without a recent spell (count 0) every profile waits a whole interval, then signals at
    // 110, 210, 280.71, 338.45, 388.45 ms with count 1..5.
    for profile in [CoDelProfile::Ns2, CoDelProfile::Ns2Patch] {
        let mut b = primed(profile, false);
        b.fill(200, 0, &[Ecn::NotEct]);
        assert_eq!(b.deq(10 * M), step(0, &[]));
        assert_eq!(b.q.first_above_time, Some(110 * M));
        let instants = [110 * M, 210_000_000, 280_710_678, 338_445_704, 388_445_704];
        let mut id = 1;
        for (n, &t) in instants.iter().enumerate() {
            assert_eq!(b.deq(t - 1), step(id, &[]), "{profile:?} count {}", n + 1);
            assert_eq!(b.deq(t), step(id + 2, &[id + 1]), "{profile:?} count {}", n + 1);
            assert_eq!(b.q.count, n as u64 + 1);
            id += 3;
        }
        assert_eq!(b.q.drop_next, 388_445_704 + GAP[5]);
    }
}

/// Drives three spells with a short pause between them and returns, per profile, the instants of
/// the two re-entries, the count after each and the `drop_next` each schedules.
///
/// Spell 1 (all profiles alike): 200 packets stamped 0, signals at 110, 210, 280.71, 338.45 and
/// 388.45 ms, count 5, `drop_next` 433.167063 ms. Drained at 400 ms (the last packet leaves
/// one packet or less behind, which ends the state). Spell 2: 50 packets stamped 400 ms, first
/// above target at 410 ms; after its entry signal one more at its `drop_next`; drained at that
/// instant. Spell 3: 50 packets stamped then, first above 10 ms later.
fn three_spells(profile: CoDelProfile) -> [(Nanos, u64, Nanos); 2] {
    let mut b = primed(profile, false);
    b.fill(200, 0, &[Ecn::NotEct]);
    b.deq(10 * M);
    for t in [110 * M, 210_000_000, 280_710_678, 338_445_704, 388_445_704] {
        assert_eq!(b.deq(t).dropped.len(), 1);
    }
    assert_eq!((b.q.count, b.q.drop_next), (5, 433_167_063));
    while b.deq(400 * M).out.is_some() {}
    assert!(!b.q.dropping);

    let mut reentries = [(0, 0, 0); 2];
    let mut fill_at = 400 * M;
    for r in &mut reentries {
        b.fill(50, fill_at, &[Ecn::NotEct]);
        let first = b.next_id - 50;
        assert_eq!(b.deq(fill_at + 10 * M), step(first, &[]));
        let entry = b.q.first_above_time.unwrap();
        assert_eq!(b.deq(entry - 1), step(first + 1, &[]));
        assert_eq!(b.deq(entry), step(first + 3, &[first + 2]));
        assert!(b.q.dropping);
        *r = (entry, b.q.count, b.q.drop_next);
        // One more signal, then drain at that instant (before the next drop_next).
        let d = b.q.drop_next;
        assert_eq!(b.deq(d), step(first + 5, &[first + 4]));
        while b.deq(d).out.is_some() {}
        assert!(!b.q.dropping);
        fill_at = d;
    }
    reentries
}

#[test]
fn reentry_counts_after_short_spells_differ_by_profile() {
    // Linux: re-entry 1 at 410 + 100 = 510 ms, delta = 5 - lastcount 1 = 4, drop_next 510 + 50;
    // count 5 at 560 ms (lastcount 4); re-entry 2 at 560 + 10 + 100 = 670 ms with delta
    // 5 - 4 = 1: back to count 1, drop_next 670 + 100 = 770 ms.
    assert_eq!(three_spells(CoDelProfile::Linux), [(510 * M, 4, 560 * M), (670 * M, 1, 770 * M)]);
    // ns2-patch: the same waits (a whole interval), count_ - 1: 5 - 1 = 4 (as Linux the first
    // time), then 5 - 1 = 4 again (Linux: 1), drop_next 670 + 50 = 720 ms.
    assert_eq!(three_spells(CoDelProfile::Ns2Patch), [(510 * M, 4, 560 * M), (670 * M, 4, 720 * M)]);
    // ns2: going above target at 410 ms with count 5 and drop_next 433.17 ms still ahead, the
    // wait is 100/sqrt(5) = 44.721359 ms: entry at 454.721359 ms, count 5 - 2 = 3, drop_next
    // + 100/sqrt(3) = 512.456385 ms, where count becomes 4 (drop_next 562.456385 ms). Spell 3
    // goes above target at 522.456385 ms with count 4 (drop_next ahead): wait 100/sqrt(4) =
    // 50 ms, entry at 572.456385 ms, count 4 - 2 = 2, drop_next + 70.710678 ms.
    let e1 = 410 * M + GAP[5];
    let d1 = e1 + GAP[3];
    assert_eq!((e1, d1), (454_721_359, 512_456_385));
    let e2 = d1 + 10 * M + GAP[4];
    assert_eq!(three_spells(CoDelProfile::Ns2), [(e1, 3, d1), (e2, 2, e2 + GAP[2])]);
    assert_eq!(e2 + GAP[2], 643_167_063);
}

#[test]
fn ns2_a_drop_that_ends_the_state_is_not_counted() {
    // 6 packets stamped 0 (ids 0-5), first above target at 10 ms: entry at 110 ms (drop 1,
    // count 1, drop_next 210 ms). Fresh packets (ids 6-15) arrive at 209 ms; ids 3 and 4 leave
    // then. At 210 ms the head is old id 5: dropped; the next head, id 6, has waited 1 ms, so
    // the state ends. ns2 increments count_ only when it schedules another drop.
    for (profile, count) in [(CoDelProfile::Linux, 2), (CoDelProfile::Ns2Patch, 2), (CoDelProfile::Ns2, 1)] {
        let mut b = primed(profile, false);
        b.fill(6, 0, &[Ecn::NotEct]);
        assert_eq!(b.deq(10 * M), step(0, &[]));
        assert_eq!(b.deq(110 * M), step(2, &[1]));
        assert_eq!((b.q.count, b.q.drop_next), (1, 210 * M));
        b.fill(10, 209 * M, &[Ecn::NotEct]);
        assert_eq!(b.deq(209 * M), step(3, &[]));
        assert_eq!(b.deq(209 * M), step(4, &[]));
        assert_eq!(b.deq(210 * M), step(6, &[5]), "{profile:?}");
        assert!(!b.q.dropping);
        assert_eq!((b.q.count, b.q.drop_next), (count, 210 * M), "{profile:?}");
    }
}

#[test]
fn ns2_reentry_rules_by_hand() {
    // count_ - 2 when count_ > 2 and recent; above 126 the result is 0.9844 * count_, truncated.
    assert_eq!(ns2_reentry_count(5, true), 3);
    assert_eq!(ns2_reentry_count(3, true), 1);
    assert_eq!(ns2_reentry_count(2, true), 1);
    assert_eq!(ns2_reentry_count(0, true), 1);
    assert_eq!(ns2_reentry_count(40, false), 1);
    assert_eq!(ns2_reentry_count(128, true), 126); // 126 is not above 126: no decay
    assert_eq!(ns2_reentry_count(129, true), 126); // 0.9844 * 129 = 126.9876
    assert_eq!(ns2_reentry_count(200, true), 196); // 0.9844 * 200 = 196.88
    assert_eq!(ns2_reentry_count(1000, true), 984); // 984.4

    // count_ - 1 when count_ > 1 and recent.
    assert_eq!(ns2_patch_reentry_count(5, true), 4);
    assert_eq!(ns2_patch_reentry_count(2, true), 1);
    assert_eq!(ns2_patch_reentry_count(1, true), 1);
    assert_eq!(ns2_patch_reentry_count(200, true), 199);
    assert_eq!(ns2_patch_reentry_count(9, false), 1);
}

#[test]
fn ns2_recent_means_within_eight_intervals_of_drop_next() {
    // State left with count 200 and drop_next 1 s. A fresh standing queue goes above target at
    // `above`; ns2 waits 100/sqrt(200) ms if above - 1 s < 800 ms, else a whole interval. Both
    // `dodeque` and `deque` ask: the entry, a wait later, carries 0.9844 * 200 = 196 over
    // (signals then spaced 100/14 ms) only if it too is within 800 ms of drop_next, else 1.
    for (above, wait, count, gap) in [
        (1_700 * M, GAP_200, 196, GAP_196),
        (1_800 * M - 1, GAP_200, 1, GAP[1]), // entry at 1.807 s: too late to carry over
        (1_800 * M, 100 * M, 1, GAP[1]),
        (500 * M, GAP_200, 196, GAP_196), // drop_next still ahead: recent
    ] {
        let mut b = primed(CoDelProfile::Ns2, false);
        b.q.count = 200;
        b.q.drop_next = 1_000 * M;
        b.fill(20, above - 10 * M, &[Ecn::NotEct]);
        assert_eq!(b.deq(above), step(0, &[]));
        assert_eq!(b.q.first_above_time, Some(above + wait), "above at {above}");
        assert_eq!(b.deq(above + wait), step(2, &[1]));
        assert_eq!((b.q.count, b.q.drop_next), (count, above + wait + gap), "above at {above}");
    }
}

#[test]
fn ns2_marks_where_the_stock_code_drops() {
    // ECN-capable packets, link ECN on: the first spell's instants, each a mark of the head,
    // which is delivered; every mark counts.
    for profile in [CoDelProfile::Ns2, CoDelProfile::Ns2Patch] {
        let mut b = primed(profile, true);
        b.fill(200, 0, &[Ecn::Ect0]);
        assert_eq!(b.deq(10 * M).out, Some((0, Ecn::Ect0)));
        let mut id = 1;
        for (n, &t) in [110 * M, 210_000_000, 280_710_678, 338_445_704, 388_445_704].iter().enumerate() {
            assert_eq!(b.deq(t - 1).out, Some((id, Ecn::Ect0)));
            assert_eq!(
                b.deq(t),
                Step { out: Some((id + 1, Ecn::Ce)), dropped: vec![], marked: vec![id + 1] }
            );
            assert_eq!(b.q.count, n as u64 + 1, "{profile:?}");
            id += 2;
        }
        assert_eq!(b.q.drop_next, 388_445_704 + GAP[5]);
        // Not ECN-capable: still dropped.
        let mut b = primed(profile, true);
        b.fill(20, 0, &[Ecn::NotEct]);
        b.deq(10 * M);
        assert_eq!(b.deq(110 * M), step(2, &[1]));
    }
}

#[test]
fn ns2_backlog_test_uses_the_largest_packet_from_256_bytes() {
    // 200-byte packets, the head waited 50 ms, then `behind` packets after it; first dequeue at
    // 50 ms after an empty one. Above target only if the backlog exceeds max(256, largest seen).
    let run = |profile: CoDelProfile, behind: usize| -> Option<Nanos> {
        let queue = QueueConfig { limit: Limit::Packets(1000), ecn: false, seed: 0 };
        let mut q: CoDel<Pkt> = CoDel::with_profile(queue, CoDelConfig::for_profile(profile), profile);
        q.dequeue(0, &mut Rec::default());
        let mut t = 50 * M;
        while t < 1_000 * M {
            while q.len_packets() < behind + 1 {
                q.enqueue(Pkt { id: 0, size: 200, ecn: Ecn::NotEct }, t - 50 * M);
            }
            let mut rec = Rec::default();
            q.dequeue(t, &mut rec);
            if !rec.dropped.is_empty() {
                return Some(t);
            }
            while q.fifo.pop().is_some() {}
            t += M;
        }
        None
    };
    // One behind (200 <= 256): never. Two (400 > 256): first drop one interval later.
    assert_eq!(run(CoDelProfile::Ns2, 1), None);
    assert_eq!(run(CoDelProfile::Ns2, 2), Some(150 * M));
    assert_eq!(run(CoDelProfile::Ns2Patch, 2), Some(150 * M));
    // Linux's 1514-byte MTU: 7 behind (1400 bytes) is still one MTU.
    assert_eq!(run(CoDelProfile::Linux, 7), None);
    assert_eq!(run(CoDelProfile::Linux, 8), Some(150 * M));
}
