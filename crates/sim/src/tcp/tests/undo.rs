//! Undoing spurious reductions as Linux does (`tcp_check_dsack`, `tcp_try_undo_dsack`,
//! `tcp_try_undo_loss`, `tcp_packet_delayed`, `tcp_undo_cwnd_reduction`).

use super::*;

/// A timeout fires while the whole window is merely delayed. The late ACK of the originals
/// cannot tell (no timestamps); the D-SACK of the needless retransmission can, and the window
/// and threshold come back.
#[test]
fn a_spurious_timeout_is_undone_by_a_dsack() {
    let (mut c, _) = established(TcpOptions { timestamps: false, ..opts() });
    let out = c.rto(SEC);
    assert_eq!(retx(&out), vec![0]);
    assert_eq!((c.cwnd(), c.ssthresh()), (M, 5 * M));
    c.ack(seg(10), &[], SEC + 50 * MS);
    assert_eq!(c.s.stats.undos, 0, "the originals' ACK alone proves nothing");
    assert_eq!(c.ssthresh(), 5 * M);
    // The retransmission of 0 arrives as a duplicate: the receiver reports it as a D-SACK.
    c.ack(seg(10), &[(0, seg(1))], SEC + 100 * MS);
    assert_eq!(c.s.stats.undos, 1);
    assert_eq!(c.ssthresh(), u64::MAX, "ssthresh back to its value before the timeout");
    assert!(c.cwnd() >= 10 * M, "cwnd at least what it was: {}", c.cwnd() / M);
}

/// With timestamps the first ACK after the timeout already shows it spurious: it echoes a
/// TSval older than the first retransmission, so an original arrived. The segments the
/// timeout marked lost are in flight again and are not retransmitted.
#[test]
fn a_timestamp_echo_older_than_the_retransmission_undoes_a_timeout() {
    let mut c = Conn::new(opts());
    let out = c.start(10 * MS);
    assert!(out.iter().all(|p| p.tsval == 10));
    let out = c.rto(SEC + 10 * MS);
    assert_eq!(retx(&out), vec![0]);
    let mut ack = ackp(seg(5), &[], SEC + 60 * MS);
    ack.tsecr = 10;
    let out = c.recv(&ack, SEC + 60 * MS);
    assert_eq!(c.s.stats.undos, 1);
    assert_eq!(c.s.ca_state(), CaState::Open);
    assert_eq!(c.ssthresh(), u64::MAX);
    // Back to 10 segments, then slow start credits the five this ACK delivered.
    assert_eq!(c.cwnd(), 15 * M);
    assert!(retx(&out).is_empty(), "5..9 are no longer presumed lost");
    assert_eq!(c.s.inflight(), 5 * M + (new_data(&out).len() as u64) * M);
}

/// A D-SACK for data the episode never retransmitted says nothing about it.
#[test]
fn a_dsack_of_an_original_does_not_undo() {
    let (mut c, _) = established(TcpOptions { timestamps: false, ..opts() });
    c.rto(SEC);
    c.ack(seg(10), &[], SEC + 50 * MS);
    // A D-SACK inside the SACKed range for a segment sent once: no undo.
    c.ack(seg(10), &[(seg(20), seg(21)), (seg(20), seg(22))], SEC + 60 * MS);
    assert_eq!(c.s.stats.undos, 0);
    assert_eq!(c.ssthresh(), 5 * M);
}

fn frto_opts() -> TcpOptions {
    TcpOptions { timestamps: false, frto: true, ..opts() }
}

/// RFC 5682 §3.1 (Linux `tcp_process_loss`): the first ACK after a timeout that advances
/// snd_una sends new data, not retransmissions (step 2.b); the next ACK covers segments sent
/// once, before the timeout, so they were delayed, not lost, and the timeout is undone (3.b).
#[test]
fn frto_undoes_a_spurious_timeout_when_new_data_brings_back_old_acks() {
    let (mut c, _) = established(frto_opts());
    let out = c.rto(SEC);
    assert_eq!(retx(&out), vec![0]);
    let out = c.ack(seg(1), &[], SEC + 50 * MS);
    assert!(retx(&out).is_empty(), "step 2.b: no retransmission of 1..9");
    assert_eq!(new_data(&out), vec![10, 11], "new data instead, cwnd 2");
    assert_eq!(c.s.stats.undos, 0);
    c.ack(seg(5), &[], SEC + 60 * MS);
    assert_eq!(c.s.stats.undos, 1, "1..4 were never retransmitted: the timeout was spurious");
    assert_eq!(c.s.ca_state(), CaState::Open);
    assert_eq!(c.ssthresh(), u64::MAX);
    assert!(c.cwnd() >= 10 * M);
}

/// Step 3.a: if the ACK after the new data only SACKs it, the segments after the head really
/// were lost; F-RTO steps aside and the timeout's recovery goes on.
#[test]
fn frto_steps_aside_when_the_loss_was_real() {
    let (mut c, _) = established(frto_opts());
    c.rto(SEC);
    c.ack(seg(1), &[], SEC + 50 * MS);
    let out = c.ack(seg(1), &[(seg(10), seg(11))], SEC + 150 * MS);
    assert_eq!(c.s.stats.undos, 0);
    assert_eq!(c.s.ca_state(), CaState::Loss);
    assert_eq!(c.ssthresh(), 5 * M);
    assert_eq!(retx(&out).first(), Some(&1), "back to retransmitting what the timeout marked");
}
