//! RACK-TLP (RFC 8985) as Linux runs it, driven with hand-built ACKs: what is lost and when,
//! the reorder window and timer, the tail loss probe, and the timeout's marking.

use super::*;
use crate::tcp::sender::Pending;

/// Ten segments sent at t = 0 with the defaults (RACK-TLP on, NewReno, IW 10).
fn ten_sent() -> Conn {
    let (c, out) = established(rack_opts());
    assert_eq!(segs_of(&out), (0..10).collect::<Vec<_>>());
    c
}

fn pending(c: &Conn) -> (Pending, Nanos) {
    (c.s.timer_pending(), c.s.rto_timer.deadline().expect("timer armed"))
}

fn lost_segments(c: &Conn) -> Vec<u64> {
    c.log.lock().unwrap().lost.iter().map(|l| l.seq / M).collect()
}

/// RFC 8985 §6.2: with three segments SACKed above it and no reordering seen, a hole whose
/// RTT has passed is lost at once (the reordering window is 0, as Linux's DUPACK emulation).
#[test]
fn a_hole_is_lost_once_a_later_segment_is_delivered_and_an_rtt_has_passed() {
    let mut c = ten_sent();
    let out = c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    assert_eq!(lost_segments(&c), vec![0]);
    assert_eq!(c.causes(), vec![Cause::Loss]);
    assert_eq!(retx(&out), vec![0]);
}

/// The property RFC 6675 lacks: a retransmission that is lost too is found by the next
/// delivery of something sent after it, one RACK RTT later, with no RTO.
#[test]
fn a_lost_retransmission_is_detected_without_a_timeout() {
    let mut c = ten_sent();
    let out = c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    assert_eq!(retx(&out), vec![0], "the first retransmission of 0 leaves at 100 ms");
    let out = c.ack(0, &[(seg(1), seg(5))], 101 * MS);
    assert_eq!(new_data(&out), vec![10], "PRR lets new data go after it");
    // Segment 10 (sent at 101 ms) is SACKed at 201 ms: the retransmission of 0 (100 ms) was
    // sent before it and a RACK RTT (100 ms) has passed — and so were 5..9 (sent at 0).
    let out = c.ack(0, &[(seg(10), seg(11)), (seg(1), seg(5))], 201 * MS);
    assert_eq!(lost_segments(&c), vec![0, 5, 6, 7, 8, 9, 0], "0 lost twice");
    assert_eq!(retx(&out).first(), Some(&0), "and retransmitted again, lowest first");
    assert_eq!((c.s.stats.timeouts, c.n_congestion()), (0, 1), "no RTO, still one reduction");
}

/// RFC 8985 §6.2 step 4: with fewer than three segments SACKed and no reordering seen yet, the
/// window is min_rtt / 4; a segment delivered within it was reordered, not lost, and from then
/// on the window applies even with three SACKed.
#[test]
fn a_reordered_segment_within_the_window_is_not_a_loss() {
    let mut c = ten_sent();
    let out = c.ack(0, &[(seg(1), seg(2))], 100 * MS);
    assert!(retx(&out).is_empty() && lost_segments(&c).is_empty());
    // Deadline 0 + RACK RTT 100 ms + min_rtt/4 = 125 ms, plus Linux's 2 ms timer slack.
    assert_eq!(pending(&c), (Pending::Reorder, 127 * MS));
    // Segment 0 arrives late: the cumulative ACK covers it and segment 1.
    c.ack(seg(2), &[], 110 * MS);
    assert!(lost_segments(&c).is_empty());
    assert_eq!((c.n_congestion(), c.s.stats.retransmits), (0, 0));
    // Reordering has been seen: three SACKed segments no longer make the window 0.
    let out = c.ack(seg(2), &[(seg(3), seg(6))], 200 * MS);
    assert!(out.iter().all(|p| !p.is_retx) && lost_segments(&c).is_empty());
    let (kind, at) = pending(&c);
    assert_eq!(kind, Pending::Reorder);
    // Segment 2 (sent at 0) waits RACK RTT 200 ms + min_rtt/4 (25 ms) + 2 ms.
    assert_eq!(at, 227 * MS);
    // The timer fires: now it is lost, recovery opens, and it is retransmitted.
    let out = c.rto(at);
    assert_eq!(lost_segments(&c), vec![2]);
    assert_eq!(c.causes(), vec![Cause::Loss]);
    assert_eq!(retx(&out), vec![2]);
    assert_eq!(c.s.timer_pending(), Pending::Rto, "back to the RTO after a reorder timeout");
}

/// RFC 8985 §7.2 / Linux `tcp_schedule_loss_probe`: when the ACKs stop at a tail, a probe goes
/// out after 2·SRTT (+2 ms with several segments out), before the RTO; it resends the highest
/// segment when there is no new data, and the RTO then counts from the probe.
#[test]
fn the_tail_loss_probe_fires_after_two_srtt_and_resends_the_last_segment() {
    let (mut c, _) = {
        let mut c = Conn::with_size(rack_opts(), Some(10 * M));
        let out = c.start(0);
        (c, out)
    };
    // Everything but the last two segments is acknowledged at 100 ms (SRTT 100 ms).
    c.ack(seg(8), &[], 100 * MS);
    assert_eq!(pending(&c), (Pending::Probe, 302 * MS), "2 · 100 ms + 2 ms, before the RTO at 400 ms");
    let out = c.rto(302 * MS);
    assert_eq!(retx(&out), vec![9]);
    assert_eq!(c.s.stats.timeouts, 0, "a probe is not a timeout");
    assert_eq!(pending(&c), (Pending::Rto, 602 * MS));
    // One probe at a time: the ACK of the probe's duplicate does not send another.
    let out = c.ack(seg(8), &[(seg(9), seg(10))], 402 * MS);
    assert_eq!(lost_segments(&c), vec![8], "the probe's SACK lets RACK find the tail loss");
    assert_eq!(retx(&out), vec![8]);
}

/// With new data to send, the probe is new data, whatever cwnd says (Linux `tcp_write_xmit`
/// with `push_one = 2`); a lone segment out waits 2·SRTT plus the minimum RTO for a delayed ACK
/// but never past the RTO.
#[test]
fn the_probe_sends_new_data_when_there_is_some() {
    let mut c = ten_sent();
    c.ack(seg(2), &[], 100 * MS);
    // 2·SRTT + 2 ms = 302 ms, but never past the RTO of the head (sent at 0): 300 ms.
    let (kind, at) = pending(&c);
    assert_eq!((kind, at), (Pending::Probe, 300 * MS));
    let sent_before = c.s.snd_nxt();
    let out = c.rto(at);
    assert_eq!((out.len(), out[0].is_retx, out[0].seq), (1, false, sent_before));

    let mut c = Conn::with_size(rack_opts(), Some(2 * M));
    c.start(0);
    c.ack(seg(1), &[], 100 * MS);
    assert_eq!(pending(&c), (Pending::Probe, 400 * MS), "min(2·100 + 200 ms, RTO 300 ms)");
}

/// Linux `tcp_timeout_mark_lost` and `tcp_enter_loss`: the RTO marks the head and the segments
/// sent more than a RACK RTT ago, not those sent since (they may still arrive), and restarts
/// cwnd from what is left in flight plus one.
#[test]
fn the_timeout_marks_only_the_head_and_segments_older_than_the_rack_rtt() {
    let mut c = ten_sent();
    let out = c.ack(seg(2), &[], 100 * MS);
    assert_eq!(new_data(&out), vec![10, 11, 12, 13], "slow start: cwnd 12, inflight 8");
    let out = c.rto(300 * MS);
    assert_eq!(new_data(&out), vec![14], "the probe");
    assert_eq!(c.s.timer_pending(), Pending::Rto);
    let out = c.rto(380 * MS);
    assert_eq!(c.s.stats.timeouts, 1);
    // RACK RTT 100 ms: 2..9 (sent at 0) and 10..13 (at 100 ms) are lost; 14 (at 300 ms) is not.
    assert_eq!(lost_segments(&c), (2..14).collect::<Vec<_>>());
    assert_eq!(c.s.ca_state(), CaState::Loss);
    assert_eq!(c.cwnd(), 2 * M, "inflight (segment 14) + 1");
    assert_eq!(retx(&out), vec![2]);
}
