//! Unit tests of the TCP machinery, in the style of smoltcp's socket tests: a `TcpSender` (or
//! `TcpReceiver`) is driven directly with hand-built packets and every packet that comes out is
//! checked. A recording controller wraps NewReno so that the calls the stack makes into the
//! controller (`on_congestion`, `on_ack`, `on_packet_lost`, ...) can be asserted too.
//!
//! References: `shared/reference/algorithms.md` §1 (RFC 6298, 6675, 6937, 3168, 7323) and
//! §13.4 (event order within one ACK). Every step of every sender test goes through `Conn`, which
//! calls `check_invariants()` after each call into the sender.

use std::sync::{Arc, Mutex};

use ccbench_aqm::Ecn;
use ccbench_cc::{
    build_controller, AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, LossInfo,
    Params, PathInfo, Reaction, SentInfo,
};

use super::{Phase, TcpReceiver, TcpSender};
use crate::packet::{Kind, Packet};
use crate::scenario::{LossRecovery, StackProfile, TcpOptions};

type Nanos = u64;

mod rack;
mod undo;

const MS: Nanos = 1_000_000;
const SEC: Nanos = 1_000_000_000;
const MSS: u32 = 1448;
const M: u64 = MSS as u64;
const HDR: u32 = 52;
const BIG_WND: u64 = 64 << 20;

// ----- recording controller -------------------------------------------------------------------

#[derive(Default)]
struct Log {
    inits: usize,
    congestion: Vec<(CongestionEvent, CaState)>,
    reactions: Vec<Reaction>,
    acks: Vec<(AckSample, PathInfo)>,
    /// `CcState` as the controller finds it when `on_ack` is called.
    ack_entry_state: Vec<CcState>,
    lost: Vec<LossInfo>,
    episode_ends: Vec<Cause>,
    sent: Vec<SentInfo>,
}

/// Delegates to a real controller and records every call.
struct Recorder {
    inner: Box<dyn CongestionControl>,
    log: Arc<Mutex<Log>>,
}

impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn init(&mut self, st: &mut CcState, path: &PathInfo) {
        self.log.lock().unwrap().inits += 1;
        self.inner.init(st, path)
    }
    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        let mut log = self.log.lock().unwrap();
        log.acks.push((*ack, *path));
        log.ack_entry_state.push(*st);
        drop(log);
        self.inner.on_ack(st, path, ack)
    }
    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        let r = self.inner.on_congestion(st, path, ev);
        let mut log = self.log.lock().unwrap();
        log.congestion.push((*ev, path.state));
        log.reactions.push(r);
        r
    }
    fn on_episode_end(&mut self, st: &mut CcState, path: &PathInfo, cause: Cause) {
        self.log.lock().unwrap().episode_ends.push(cause);
        self.inner.on_episode_end(st, path, cause)
    }
    fn on_packet_sent(&mut self, st: &mut CcState, path: &PathInfo, sent: &SentInfo) {
        self.log.lock().unwrap().sent.push(*sent);
        self.inner.on_packet_sent(st, path, sent)
    }
    fn on_packet_lost(&mut self, st: &mut CcState, path: &PathInfo, lost: &LossInfo) {
        self.log.lock().unwrap().lost.push(*lost);
        self.inner.on_packet_lost(st, path, lost)
    }
}

// ----- harness --------------------------------------------------------------------------------

/// Default options without the handshake (data flows at `start`), and with RFC 6675's
/// sequence-based loss detection, no tail loss probe and no F-RTO, so that the RTO and the SACK
/// rules are seen on their own; the RACK-TLP tests (`tests/rack.rs`) use [`rack_opts`], the
/// F-RTO ones (`tests/undo.rs`) switch it on.
fn opts() -> TcpOptions {
    TcpOptions { handshake: false, recovery: LossRecovery::Rfc6675, frto: false, ..TcpOptions::default() }
}

/// The defaults, RACK-TLP included, without the handshake.
fn rack_opts() -> TcpOptions {
    TcpOptions { handshake: false, ..TcpOptions::default() }
}

fn seg(i: u64) -> u64 {
    i * M
}

fn ticks(now: Nanos) -> u32 {
    (now / MS) as u32
}

/// A pure ACK as the receiver would build it: big window, TSval = receiver clock, no echo.
fn ackp(ack: u64, sacks: &[(u64, u64)], now: Nanos) -> Packet {
    let mut p = Packet::new(0, Kind::Ack, HDR, now);
    p.ack = ack;
    assert!(sacks.len() <= 3);
    for (i, b) in sacks.iter().enumerate() {
        p.sack[i] = *b;
    }
    p.sack_count = sacks.len() as u8;
    p.window = BIG_WND;
    p.tsval = ticks(now);
    p
}

fn synack(now: Nanos, ece: bool) -> Packet {
    let mut p = Packet::new(0, Kind::SynAck, HDR + 8, now);
    p.ece = ece;
    p.window = 65_535;
    p.tsval = ticks(now);
    p
}

/// Sequence numbers of the packets, in segment units.
fn segs_of(out: &[Packet]) -> Vec<u64> {
    out.iter()
        .map(|p| {
            assert_eq!(p.seq % M, 0, "segment boundaries are MSS multiples");
            p.seq / M
        })
        .collect()
}

fn new_data(out: &[Packet]) -> Vec<u64> {
    segs_of(&out.iter().filter(|p| !p.is_retx).copied().collect::<Vec<_>>())
}

fn retx(out: &[Packet]) -> Vec<u64> {
    segs_of(&out.iter().filter(|p| p.is_retx).copied().collect::<Vec<_>>())
}

struct Conn {
    s: TcpSender,
    log: Arc<Mutex<Log>>,
}

impl Conn {
    fn new(opt: TcpOptions) -> Self {
        Self::with_size(opt, None)
    }

    fn with_size(opt: TcpOptions, size: Option<u64>) -> Self {
        Self::with_cc(opt, size, "newreno")
    }

    fn with_cc(opt: TcpOptions, size: Option<u64>, cc: &str) -> Self {
        let log = Arc::new(Mutex::new(Log::default()));
        let inner = build_controller(cc, &Params::new()).unwrap();
        let rec = Recorder { inner, log: log.clone() };
        let s = TcpSender::new(opt, 0, Box::new(rec), size);
        let c = Conn { s, log };
        c.check();
        c
    }

    fn check(&self) {
        if let Err(e) = self.s.check_invariants() {
            panic!("invariant violated: {e}");
        }
        assert!(self.s.snd_una() <= self.s.snd_nxt());
        assert!(self.s.inflight() <= self.s.snd_nxt() - self.s.snd_una() + M * 64, "inflight sane");
    }

    fn start(&mut self, now: Nanos) -> Vec<Packet> {
        let mut out = Vec::new();
        self.s.start(now, &mut out);
        self.check();
        out
    }

    fn recv(&mut self, p: &Packet, now: Nanos) -> Vec<Packet> {
        let mut out = Vec::new();
        self.s.on_packet(p, now, &mut out);
        self.check();
        for q in &out {
            assert_eq!(q.kind, Kind::Data);
            assert!(q.seq + q.len as u64 <= self.s.snd_nxt());
        }
        out
    }

    fn ack(&mut self, ack: u64, sacks: &[(u64, u64)], now: Nanos) -> Vec<Packet> {
        self.recv(&ackp(ack, sacks, now), now)
    }

    fn ack_ece(&mut self, ack: u64, now: Nanos) -> Vec<Packet> {
        let mut p = ackp(ack, &[], now);
        p.ece = true;
        self.recv(&p, now)
    }

    fn rto(&mut self, now: Nanos) -> Vec<Packet> {
        let mut out = Vec::new();
        self.s.on_rto(now, &mut out);
        self.check();
        out
    }

    fn cwnd(&self) -> u64 {
        self.s.cc_state().cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.s.cc_state().ssthresh
    }
    fn rto_in(&self, now: Nanos) -> Nanos {
        self.s.rto_timer.deadline().expect("RTO timer armed") - now
    }
    fn n_congestion(&self) -> usize {
        self.log.lock().unwrap().congestion.len()
    }
    fn causes(&self) -> Vec<Cause> {
        self.log.lock().unwrap().congestion.iter().map(|(e, _)| e.cause).collect()
    }
    fn last_ack_sample(&self) -> (AckSample, PathInfo) {
        *self.log.lock().unwrap().acks.last().expect("on_ack called")
    }
}

/// Established connection (no handshake) with the initial window sent at t = 0.
fn established(opt: TcpOptions) -> (Conn, Vec<Packet>) {
    let mut c = Conn::new(opt);
    let out = c.start(0);
    (c, out)
}

// ----- 1. handshake ---------------------------------------------------------------------------

#[test]
fn syn_carries_ece_and_cwr_only_with_ecn() {
    for ecn in [false, true] {
        let mut c = Conn::new(TcpOptions { ecn, ..TcpOptions::default() });
        let out = c.start(7 * MS);
        assert_eq!(out.len(), 1);
        let syn = out[0];
        assert_eq!(syn.kind, Kind::Syn);
        assert_eq!((syn.ece, syn.cwr), (ecn, ecn), "ecn={ecn}");
        assert_eq!(syn.ecn, Ecn::NotEct, "SYNs are Not-ECT (RFC 3168 §6.1.1)");
        assert_eq!(syn.tsval, 7);
        assert_eq!(c.s.phase, Phase::SynSent);
        assert_eq!(c.s.snd_nxt(), 0);
        assert_eq!(c.rto_in(7 * MS), SEC, "initial RTO 1 s (RFC 6298 §2.1)");
        // Nothing happens on a data ACK before the SYN-ACK.
        assert!(c.ack(0, &[], 8 * MS).is_empty());
        assert_eq!(c.s.phase, Phase::SynSent);
    }
}

#[test]
fn synack_with_ece_negotiates_ecn_and_data_is_ect0() {
    // (sender wants ECN, SYN-ACK has ECE) -> negotiated.
    for (want, ece, negotiated) in
        [(true, true, true), (true, false, false), (false, true, false), (false, false, false)]
    {
        let mut c = Conn::new(TcpOptions { ecn: want, ..TcpOptions::default() });
        c.start(0);
        let out = c.recv(&synack(20 * MS, ece), 20 * MS);
        assert_eq!(c.s.phase, Phase::Established);
        assert_eq!(c.s.ecn_negotiated(), negotiated, "want={want} ece={ece}");
        assert_eq!(out.len(), 10);
        let expect = if negotiated { Ecn::Ect0 } else { Ecn::NotEct };
        assert!(out.iter().all(|p| p.ecn == expect && !p.cwr && !p.ece), "want={want} ece={ece}");
    }
}

#[test]
fn handshake_against_real_receiver_negotiates_ecn() {
    let opt = TcpOptions { ecn: true, ..TcpOptions::default() };
    let mut c = Conn::new(opt.clone());
    let mut r = TcpReceiver::new(opt, 0, None);
    let syn = c.start(0);
    let mut back = Vec::new();
    r.on_packet(&syn[0], 5 * MS, &mut back);
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].kind, Kind::SynAck);
    assert!(back[0].ece);
    assert_eq!(back[0].window, 65_535, "SYN windows are never scaled");
    let data = c.recv(&back[0], 10 * MS);
    assert!(c.s.ecn_negotiated());
    assert_eq!(data.len(), 10);
    assert!(data.iter().all(|p| p.ecn == Ecn::Ect0));
    assert!(data.iter().all(|p| p.tsecr == back[0].tsval), "data echoes the SYN-ACK's TSval");
}

#[test]
fn synack_sets_srtt_to_handshake_rtt() {
    let mut c = Conn::new(TcpOptions { recovery: LossRecovery::Rfc6675, ..TcpOptions::default() });
    c.start(5 * MS);
    assert_eq!(c.s.srtt(), None);
    c.recv(&synack(35 * MS, false), 35 * MS);
    assert_eq!(c.s.srtt(), Some(30 * MS));
    // RTO = 30 + max(4 * 15, 200) ms, armed by the first data segment.
    assert_eq!(c.rto_in(35 * MS), 230 * MS);
    assert_eq!(c.log.lock().unwrap().inits, 1);
}

#[test]
fn lost_syn_is_retransmitted_with_backoff_and_iw_drops_to_one_segment() {
    let mut c = Conn::new(TcpOptions::default());
    c.start(0);
    assert_eq!(c.s.rto_timer.deadline(), Some(SEC));
    let out = c.rto(SEC);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, Kind::Syn);
    assert_eq!(out[0].tsval, 1000);
    assert_eq!(c.s.rto_timer.deadline(), Some(3 * SEC), "RTO doubled to 2 s");
    assert_eq!(c.s.stats.timeouts, 1);
    let out = c.rto(3 * SEC);
    assert_eq!(out.len(), 1);
    assert_eq!(c.s.rto_timer.deadline(), Some(7 * SEC), "RTO doubled to 4 s");
    assert_eq!(c.log.lock().unwrap().congestion.len(), 0, "SYN timeouts are not congestion events");

    let data = c.recv(&synack(3 * SEC + 40 * MS, false), 3 * SEC + 40 * MS);
    assert_eq!(c.s.phase, Phase::Established);
    assert_eq!(c.cwnd(), M, "RFC 5681 §3.1: IW = 1 segment after a lost SYN");
    assert_eq!(segs_of(&data), vec![0]);
    assert_eq!(c.s.srtt(), None, "Karn: no sample from an ambiguous SYN-ACK");
}

/// RFC 6298 §5.7: "If the timer expires awaiting the ACK of a SYN segment and the TCP
/// implementation is using an RTO less than 3 seconds, the RTO MUST be re-initialized to
/// 3 seconds when data transmission begins (i.e., after the three-way handshake completes)."
/// Linux does the same (`tcp_init_metrics`, TCP_TIMEOUT_FALLBACK).
#[test]
fn rto_after_syn_timeout_is_three_seconds() {
    let opt = TcpOptions { timestamps: false, recovery: LossRecovery::Rfc6675, ..TcpOptions::default() };
    let mut c = Conn::new(opt);
    c.start(0);
    c.rto(SEC);
    let t = SEC + 50 * MS;
    c.recv(&synack(t, false), t);
    assert_eq!(c.s.srtt(), None);
    assert!(c.rto_in(t) >= 3 * SEC, "data RTO is {} ms", c.rto_in(t) / MS);
}

// ----- 2. initial window ----------------------------------------------------------------------

#[test]
fn initial_window_is_ten_contiguous_full_segments() {
    for (mss, iw, hdr) in [(1448u32, 10u32, 52u32), (1000, 4, 40), (536, 10, 52)] {
        let mut c = Conn::new(TcpOptions { mss, initial_window: iw, header_bytes: hdr, ..opts() });
        let out = c.start(5 * MS);
        assert_eq!(out.len(), iw as usize, "mss {mss}");
        for (i, p) in out.iter().enumerate() {
            assert_eq!(p.kind, Kind::Data);
            assert_eq!(p.seq, i as u64 * mss as u64);
            assert_eq!(p.len, mss);
            assert_eq!(p.wire_bytes, mss + hdr);
            assert!(!p.is_retx && !p.cwr);
            assert_eq!(p.ecn, Ecn::NotEct);
            assert_eq!(p.sent_at, 5 * MS);
            assert_eq!(p.tsval, 5);
        }
        assert_eq!(c.s.snd_nxt(), iw as u64 * mss as u64);
        assert_eq!(c.s.inflight(), iw as u64 * mss as u64);
        assert_eq!(c.cwnd(), iw as u64 * mss as u64);
        assert_eq!(c.s.stats.segments_sent, iw as u64);
        assert_eq!(c.rto_in(5 * MS), SEC);
        let log = c.log.lock().unwrap();
        assert_eq!(log.sent.len(), iw as usize);
        assert_eq!(log.sent.last().unwrap().inflight_after, iw as u64 * mss as u64);
    }
}

#[test]
fn initial_window_after_handshake() {
    let mut c = Conn::new(TcpOptions::default());
    c.start(0);
    let out = c.recv(&synack(10 * MS, false), 10 * MS);
    assert_eq!(segs_of(&out), (0..10).collect::<Vec<_>>());
    assert!(out.iter().all(|p| p.wire_bytes == MSS + HDR));
}

// ----- 3. slow start --------------------------------------------------------------------------

#[test]
fn slow_start_each_ack_of_two_segments_releases_four() {
    let (mut c, out) = established(opts());
    assert_eq!(out.len(), 10);
    let mut next = 10;
    let mut acked = 0;
    // Two rounds: 5 ACKs for the IW (→ 20 segments out), then 10 ACKs for those.
    for round in 0..2 {
        let n = if round == 0 { 5 } else { 10 };
        for k in 0..n {
            let now = (100 * (round + 1) + k) * MS;
            acked += 2;
            let cw = c.cwnd();
            let out = c.ack(seg(acked), &[], now);
            if acked == 2 {
                assert_eq!(c.s.srtt(), Some(100 * MS), "first sample: segment 0 sent at 0");
            }
            assert_eq!(new_data(&out), (next..next + 4).collect::<Vec<_>>(), "round {round} ack {k}");
            assert!(retx(&out).is_empty());
            next += 4;
            assert_eq!(c.cwnd(), cw + 2 * M, "ABC L = 2");
            assert_eq!(c.s.inflight(), c.cwnd());
            assert_eq!(c.s.ca_state(), CaState::Open);
            let (a, p) = c.last_ack_sample();
            assert_eq!(a.acked, 2 * M);
            assert_eq!(a.segments_acked, 2);
            assert!(!a.is_dupack);
            assert!(p.is_cwnd_limited);
        }
    }
    assert_eq!(c.cwnd(), 40 * M);
    assert!(c.s.srtt().is_some());
}

#[test]
fn ack_below_snd_una_and_beyond_snd_nxt_are_harmless() {
    let (mut c, _) = established(opts());
    c.ack(seg(4), &[], 100 * MS);
    let una = c.s.snd_una();
    let cw = c.cwnd();
    // Old ACK: nothing moves.
    let out = c.ack(seg(2), &[], 101 * MS);
    assert!(out.is_empty());
    assert_eq!(c.s.snd_una(), una);
    assert_eq!(c.cwnd(), cw);
    // ACK beyond snd_nxt is clamped.
    let nxt = c.s.snd_nxt();
    c.ack(nxt + 10 * M, &[], 102 * MS);
    assert_eq!(c.s.snd_una(), nxt);
}

// ----- 4. SACK loss detection (RFC 6675) -------------------------------------------------------

fn iw20() -> TcpOptions {
    TcpOptions { initial_window: 20, ..opts() }
}

#[test]
fn sack_retransmits_exactly_when_more_than_two_mss_sacked_above() {
    let (mut c, out) = established(iw20());
    assert_eq!(out.len(), 20);
    assert_eq!(c.cwnd(), 20 * M);
    let t = 100 * MS;
    // 1 and 2 segments SACKed above seg 0: no retransmission; each SACK frees pipe for one new
    // segment (RFC 6675 pipe / limited transmit).
    let out = c.ack(0, &[(seg(1), seg(2))], t);
    assert_eq!(segs_of(&out), vec![20]);
    assert!(retx(&out).is_empty());
    assert_eq!(c.s.ca_state(), CaState::Disorder);
    assert!(c.last_ack_sample().0.is_dupack);
    assert_eq!(c.last_ack_sample().0.sacked, M);
    let out = c.ack(0, &[(seg(1), seg(3))], t + MS);
    assert_eq!(segs_of(&out), vec![21]);
    assert!(retx(&out).is_empty());
    assert_eq!(c.n_congestion(), 0);
    assert!(c.log.lock().unwrap().lost.is_empty());
    assert_eq!(c.s.ca_state(), CaState::Disorder);
    assert_eq!(c.cwnd(), 20 * M, "no growth on duplicate ACKs");

    // Third segment SACKed: 3 MSS > (DupThresh-1)·MSS above seg 0 → lost.
    let out = c.ack(0, &[(seg(1), seg(4))], t + 2 * MS);
    assert_eq!(out.len(), 1);
    assert!(out[0].is_retx);
    assert_eq!(out[0].seq, 0);
    assert_eq!(out[0].len, MSS);
    assert_eq!(out[0].ecn, Ecn::NotEct);
    assert_eq!(c.s.ca_state(), CaState::Recovery);
    assert_eq!(c.ssthresh(), 10 * M, "ssthresh = cwnd / 2");
    assert_eq!(c.s.stats.retransmits, 1);
    {
        let log = c.log.lock().unwrap();
        assert_eq!(log.congestion.len(), 1);
        let (ev, state) = log.congestion[0];
        assert_eq!(ev.cause, Cause::Loss);
        assert_eq!(ev.open_episode, None);
        assert_eq!(ev.flight_size, 22 * M);
        assert_eq!(state, CaState::Disorder, "on_congestion sees the state before the episode");
        assert_eq!(log.reactions[0], Reaction::Prr { ssthresh: 10 * M });
        assert_eq!(log.lost.len(), 1);
        assert_eq!((log.lost[0].seq, log.lost[0].bytes), (0, MSS));
        // §13.4: on_congestion before on_ack; on_ack sees Recovery and the loss.
        let (a, p) = log.acks.last().unwrap();
        assert_eq!(p.state, CaState::Recovery);
        assert_eq!(a.newly_lost, M);
        assert_eq!(a.sacked, M);
        assert!(a.is_dupack);
    }
    // A repeated ACK with the same SACK information changes nothing.
    let out = c.ack(0, &[(seg(1), seg(4))], t + 3 * MS);
    assert!(retx(&out).is_empty());
    assert_eq!(c.n_congestion(), 1);
}

/// Without RACK a lost retransmission is found as Linux ≤ 4.3 found it
/// (`tcp_mark_lost_retrans`): once data sent after the retransmission is SACKed, it is lost too
/// and goes again, with no timeout.
#[test]
fn rfc6675_finds_a_lost_retransmission_once_later_data_is_sacked() {
    let (mut c, _) = established(iw20());
    let out = c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    assert_eq!(retx(&out), vec![0], "fast retransmission, sent when snd_nxt was 20");
    // SACKs of data sent before the retransmission say nothing about it.
    let mut t = 101 * MS;
    for k in 5..=20 {
        let out = c.ack(0, &[(seg(1), seg(k))], t);
        assert!(!retx(&out).contains(&0), "segment {k} was sent before the retransmission");
        t += MS;
    }
    let after = c.s.snd_nxt() / M;
    assert!(after > 20, "new data went out after the retransmission");
    let out = c.ack(0, &[(seg(1), seg(21))], t);
    assert_eq!(retx(&out), vec![0], "segment 20 left after the retransmission and was SACKed");
    assert_eq!(c.s.stats.timeouts, 0);
    assert_eq!(c.n_congestion(), 1, "still the same episode");
}

#[test]
fn sack_three_segments_at_once_triggers_on_the_first_dupack() {
    let (mut c, _) = established(iw20());
    let out = c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    assert_eq!(retx(&out), vec![0]);
    assert_eq!(c.causes(), vec![Cause::Loss]);
    // Discontiguous blocks summing to exactly 2 MSS do not (the byte rule only).
    let (mut c, _) = established(iw20());
    let out = c.ack(0, &[(seg(3), seg(4)), (seg(1), seg(2))], 100 * MS);
    assert!(retx(&out).is_empty());
    assert_eq!(c.n_congestion(), 0);
}

#[test]
fn sack_marks_every_hole_below_the_threshold() {
    // Segments 0, 2 and 4 lost; 1, 3, 5, 6, 7 SACKed. All three holes have > 2 MSS SACKed
    // above: 0 and 2 have 5 and 4, 4 has 3 (5, 6, 7).
    let (mut c, _) = established(iw20());
    let out = c.ack(0, &[(seg(5), seg(8)), (seg(3), seg(4)), (seg(1), seg(2))], 100 * MS);
    // PRR at entry: 5 delivered · 10/20 = 2.5 MSS → two retransmissions at once.
    assert_eq!(retx(&out), vec![0, 2]);
    assert_eq!(c.log.lock().unwrap().lost.iter().map(|l| l.seq / M).collect::<Vec<_>>(), vec![4, 2, 0]);
    // PRR lets the other two go as deliveries come in.
    let mut sent = retx(&out);
    for k in 8..20 {
        let out = c.ack(0, &[(seg(5), seg(k + 1)), (seg(3), seg(4)), (seg(1), seg(2))], (100 + k) * MS);
        sent.extend(retx(&out));
    }
    assert_eq!(sent, vec![0, 2, 4], "holes retransmitted lowest first");
}

// ----- 5. PRR (RFC 6937) ----------------------------------------------------------------------

#[test]
fn prr_spreads_the_reduction_and_exits_at_ssthresh() {
    let (mut c, _) = established(iw20());
    // First dupack SACKs 1..3: loss of seg 0, RecoverFS = 20, ssthresh = 10 (no limited transmit).
    let out = c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    assert_eq!(retx(&out), vec![0]);
    assert!(new_data(&out).is_empty());
    let ssthresh = c.ssthresh();
    assert_eq!(ssthresh, 10 * M);
    let recover_fs = 20 * M;
    // Independent RFC 6937 oracle (PRR-SSRB) in bytes.
    let mut prr_delivered = 3 * M;
    let mut prr_out = M;
    let mut total_new = 0u64;
    let mut per_ack = Vec::new();
    for k in 4..20u64 {
        let out = c.ack(0, &[(seg(1), seg(k + 1))], (100 + k) * MS);
        assert!(retx(&out).is_empty());
        let sent = out.len() as u64;
        // pipe before sending = inflight now minus what this ACK released.
        let pipe = c.s.inflight() - sent * M;
        prr_delivered += M;
        let sndcnt = if pipe > ssthresh {
            (prr_delivered * ssthresh).div_ceil(recover_fs) as i64 - prr_out as i64
        } else {
            let limit = (prr_delivered as i64 - prr_out as i64).max(M as i64) + M as i64;
            (ssthresh as i64 - pipe as i64).min(limit)
        };
        let expect = sndcnt.max(0) as u64 / M;
        assert_eq!(sent, expect, "ack for seg {k}: pipe {} segs, prr_out {}", pipe / M, prr_out / M);
        assert_eq!(c.cwnd(), pipe + sndcnt.max(0) as u64);
        prr_out += sent * M;
        total_new += sent;
        per_ack.push(sent);
        assert_eq!(c.s.ca_state(), CaState::Recovery);
    }
    // Proportional part: one new segment per two delivered.
    assert_eq!(&per_ack[..8], &[1, 0, 1, 0, 1, 0, 1, 0], "got {per_ack:?}");
    // RFC 6937: by the end of recovery prr_out ≈ prr_delivered * ssthresh / RecoverFS.
    let delivered_segs = prr_delivered / M; // 19
    let sent_total = total_new + 1;
    assert!(
        sent_total * 2 >= delivered_segs - 1 && sent_total * 2 <= delivered_segs + 3,
        "sent {sent_total} for {delivered_segs} delivered"
    );
    // Retransmission of seg 0 arrives: cumulative ACK reaches the recovery point.
    let out = c.ack(seg(20), &[], 300 * MS);
    assert_eq!(c.s.ca_state(), CaState::Open);
    assert_eq!(c.cwnd(), ssthresh, "RFC 6937: cwnd = ssthresh on exit");
    assert_eq!(c.log.lock().unwrap().ack_entry_state.last().unwrap().cwnd, ssthresh);
    assert_eq!(c.log.lock().unwrap().episode_ends, vec![Cause::Loss]);
    assert_eq!(c.s.inflight(), c.cwnd(), "window refilled up to cwnd ({} sent)", out.len());
    assert_eq!(c.n_congestion(), 1);
}

#[test]
fn early_recovery_exit_sets_cwnd_to_ssthresh() {
    // Recovery ends one ACK after it started, while PRR still holds cwnd near the old flight.
    let (mut c, _) = established(iw20());
    c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    // pipe 16 + sndcnt ceil(3 MSS · 10 / 20) = 1.5 MSS.
    assert_eq!(c.cwnd(), 16 * M + 3 * M / 2);
    let out = c.ack(seg(20), &[], 120 * MS);
    assert_eq!(c.s.ca_state(), CaState::Open);
    let entry = *c.log.lock().unwrap().ack_entry_state.last().unwrap();
    assert_eq!(entry.cwnd, 10 * M, "RFC 6937: cwnd = ssthresh on exit, before on_ack (§13.4)");
    assert_eq!(c.last_ack_sample().1.state, CaState::Open);
    // Then congestion avoidance credits the 17 newly delivered segments (≥ w = 10): +1 MSS,
    // as Linux tcp_cong_avoid_ai does on the ACK that ends recovery.
    assert_eq!(c.last_ack_sample().0.segments_acked, 17);
    assert_eq!(c.cwnd(), 11 * M);
    // Everything is acknowledged; the window is refilled to cwnd.
    assert_eq!(c.s.inflight(), 11 * M);
    assert_eq!(new_data(&out), (20..31).collect::<Vec<_>>());
}

#[test]
fn prr_slow_start_reduction_bound_after_heavy_loss() {
    // Segments 0..14 lost, 15..17 SACKed in one ACK: all 15 holes are lost at once and pipe
    // (18, 19) falls far below ssthresh. PRR-SSRB as Linux runs it (`tcp_cwnd_reduction`)
    // then sends min(ssthresh − pipe, max(prr_delivered − prr_out, DeliveredData)) per ACK,
    // plus one segment only when the ACK advances snd_una and reports no new loss.
    let (mut c, _) = established(iw20());
    let out = c.ack(0, &[(seg(15), seg(18))], 100 * MS);
    assert_eq!(c.log.lock().unwrap().lost.len(), 15);
    assert_eq!(c.ssthresh(), 10 * M);
    // prr_delivered 3, pipe 2, a SACK only: limit = 3 < ssthresh − pipe = 8.
    assert_eq!(retx(&out), vec![0, 1, 2]);
    assert_eq!(c.cwnd(), 5 * M);
    // Each further SACK of one segment releases one.
    let out = c.ack(0, &[(seg(15), seg(19))], 101 * MS);
    assert_eq!(retx(&out), vec![3]);
    let out = c.ack(0, &[(seg(15), seg(20))], 102 * MS);
    assert_eq!(retx(&out), vec![4]);
    // snd_una advances with no new loss: one delivered plus one.
    let out = c.ack(seg(1), &[(seg(15), seg(20))], 200 * MS);
    assert_eq!(retx(&out), vec![5, 6]);
    assert!(new_data(&out).is_empty());
    assert_eq!(c.n_congestion(), 1);
}

// ----- 6. one reduction per RTT ---------------------------------------------------------------

#[test]
fn second_loss_in_the_same_episode_is_not_a_new_reduction() {
    let (mut c, _) = established(iw20());
    c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    assert_eq!(c.n_congestion(), 1);
    // Seg 5 is lost too: SACK 6.. above it.
    let mut retransmitted = vec![0];
    for k in 6..20u64 {
        let out = c.ack(0, &[(seg(6), seg(k + 1)), (seg(1), seg(5))], (100 + k) * MS);
        retransmitted.extend(retx(&out));
    }
    assert_eq!(retransmitted, vec![0, 5]);
    {
        let log = c.log.lock().unwrap();
        assert_eq!(log.lost.iter().map(|l| l.seq / M).collect::<Vec<_>>(), vec![0, 5]);
        assert_eq!(log.congestion.len(), 1, "one reduction per episode");
    }
    assert_eq!(c.ssthresh(), 10 * M);
    // Seg 0's retransmission arrives: partial ACK (5 is outstanding) stays in Recovery.
    c.ack(seg(5), &[(seg(6), seg(20))], 200 * MS);
    assert_eq!(c.s.ca_state(), CaState::Recovery);
    assert!(c.log.lock().unwrap().episode_ends.is_empty());
    // Full ACK ends the episode.
    c.ack(seg(20), &[], 210 * MS);
    assert_eq!(c.s.ca_state(), CaState::Open);
    assert_eq!(c.cwnd(), 10 * M);
    // A loss after the episode is a new reduction.
    let una = c.s.snd_una();
    let nxt = c.s.snd_nxt();
    assert!(nxt - una >= 4 * M);
    let out = c.ack(una, &[(una + M, una + 4 * M)], 300 * MS);
    assert_eq!(retx(&out), vec![una / M]);
    assert_eq!(c.causes(), vec![Cause::Loss, Cause::Loss]);
    assert_eq!(c.ssthresh(), 5 * M);
}

// ----- 7. NewReno without SACK ----------------------------------------------------------------

#[test]
fn newreno_three_dupacks_partial_and_full_ack() {
    let (mut c, out) = established(TcpOptions { sack: false, ..opts() });
    assert_eq!(out.len(), 10);
    let t = 100 * MS;
    // Two dupacks: limited transmit of one new segment each, no retransmission.
    for (i, expect) in [(1u64, 10u64), (2, 11)] {
        let out = c.ack(0, &[], t + i * MS);
        assert_eq!(segs_of(&out), vec![expect], "dupack {i}");
        assert!(retx(&out).is_empty());
        assert_eq!(c.s.ca_state(), CaState::Disorder);
        assert!(c.last_ack_sample().0.is_dupack);
    }
    assert_eq!(c.n_congestion(), 0);
    // Third dupack: fast retransmit of the first segment.
    let out = c.ack(0, &[], t + 3 * MS);
    assert_eq!(retx(&out), vec![0]);
    assert_eq!(c.s.ca_state(), CaState::Recovery);
    assert_eq!(c.causes(), vec![Cause::Loss]);
    assert_eq!(c.ssthresh(), 5 * M);
    let recovery_point = seg(12);
    // More dupacks: no further retransmission, no further reduction.
    for i in 4..8 {
        let out = c.ack(0, &[], t + i * MS);
        assert!(retx(&out).is_empty());
    }
    // Partial ACK: seg 0..4 arrived, seg 5 is the next hole → retransmitted at once.
    let out = c.ack(seg(5), &[], 200 * MS);
    assert_eq!(retx(&out), vec![5]);
    assert_eq!(c.s.ca_state(), CaState::Recovery);
    assert_eq!(c.n_congestion(), 1);
    // Another partial ACK.
    let out = c.ack(seg(8), &[], 210 * MS);
    assert_eq!(retx(&out), vec![8]);
    // Full ACK: recovery ends, cwnd = ssthresh.
    let out = c.ack(recovery_point, &[], 300 * MS);
    assert!(retx(&out).is_empty());
    assert_eq!(c.s.ca_state(), CaState::Open);
    assert_eq!(c.cwnd(), 5 * M);
    assert_eq!(c.log.lock().unwrap().episode_ends, vec![Cause::Loss]);
    assert_eq!(c.s.stats.retransmits, 3);
}

/// RFC 6937 §3: "If SACK is not in use, DeliveredData is estimated as 1 MSS on duplicate
/// acknowledgements" (Linux `tcp_add_reno_sack` counts them as delivered). Without that, PRR's
/// proportional part has nothing to work with and NewReno recovery sends no new data while
/// `pipe > ssthresh`, then bursts one segment per ACK under the slow-start bound.
#[test]
fn newreno_dupacks_drive_prr_proportionally() {
    let (mut c, _) = established(TcpOptions { sack: false, initial_window: 20, rcv_buf: 20 * M, ..opts() });
    let t = 100 * MS;
    // The window (20 segments) blocks limited transmit so RecoverFS = 20, ssthresh = 10.
    let a = |c: &mut Conn, now| {
        let mut p = ackp(0, &[], now);
        p.window = 20 * M;
        c.recv(&p, now)
    };
    for i in 1..=2 {
        assert!(a(&mut c, t + i * MS).is_empty());
    }
    let out = a(&mut c, t + 3 * MS);
    assert_eq!(retx(&out), vec![0]);
    // Open the window; dupacks for segments 4.. arrive. Each stands for one delivered segment,
    // so PRR releases about one new segment per two dupacks while pipe > ssthresh.
    let mut per_ack = Vec::new();
    for i in 4..12 {
        let out = c.ack(0, &[], t + i * MS);
        per_ack.push(out.len());
    }
    let total: usize = per_ack.iter().sum();
    assert!((3..=5).contains(&total), "new segments per dupack: {per_ack:?}");
}

// ----- 8. RTO ---------------------------------------------------------------------------------

#[test]
fn rto_collapses_cwnd_retransmits_head_and_backs_off() {
    let (mut c, _) = established(opts());
    // One ACK of two segments at 100 ms: srtt 100 ms, RTO 300 ms, cwnd 12.
    c.ack(seg(2), &[], 100 * MS);
    assert_eq!(c.cwnd(), 12 * M);
    assert_eq!(c.s.snd_nxt(), seg(14));
    let rto = c.rto_in(100 * MS);
    assert_eq!(rto, 300 * MS);
    let fire = 100 * MS + rto;
    let out = c.rto(fire);
    assert_eq!(out.len(), 1, "only the head is retransmitted");
    assert!(out[0].is_retx);
    assert_eq!(out[0].seq, seg(2));
    assert_eq!(c.cwnd(), M);
    assert_eq!(c.ssthresh(), 6 * M);
    assert_eq!(c.s.ca_state(), CaState::Loss);
    assert_eq!(c.rto_in(fire), 2 * rto, "RTO backed off ×2");
    assert_eq!(c.s.stats.timeouts, 1);
    assert_eq!(c.causes(), vec![Cause::Rto { backoffs: 0 }]);
    assert_eq!(c.s.inflight(), M);
    // A second expiry doubles again and keeps ssthresh.
    let fire2 = fire + 2 * rto;
    let out = c.rto(fire2);
    assert_eq!(segs_of(&out), vec![2]);
    assert_eq!(c.rto_in(fire2), 4 * rto);
    assert_eq!(c.ssthresh(), 6 * M);
    assert_eq!(c.causes(), vec![Cause::Rto { backoffs: 0 }, Cause::Rto { backoffs: 1 }]);

    // Go-back-N in slow start, every delivered segment credited as Linux's `tcp_slow_start`
    // (no RFC 3465 L = 1 after a timeout): 1 → 2 → 4 ...
    let mut t = fire2 + 100 * MS;
    let out = c.ack(seg(3), &[], t);
    assert_eq!(retx(&out), vec![3, 4]);
    assert_eq!(c.cwnd(), 2 * M);
    t += 100 * MS;
    let out = c.ack(seg(5), &[], t);
    assert_eq!(retx(&out), vec![5, 6, 7, 8]);
    assert_eq!(c.cwnd(), 4 * M);
    assert!(new_data(&out).is_empty());
    assert_eq!(c.s.ca_state(), CaState::Loss);
    t += 100 * MS;
    let out = c.ack(seg(12), &[], t);
    // 12, 13 are the last to repair; then new data (14, ...) in the same window.
    assert_eq!(retx(&out), vec![12, 13]);
    assert_eq!(new_data(&out), vec![14, 15, 16, 17], "cwnd reached ssthresh, 6 segments");
    t += 100 * MS;
    c.ack(seg(14), &[], t);
    assert_eq!(c.s.ca_state(), CaState::Open, "episode ends at the recovery point");
    assert_eq!(c.log.lock().unwrap().episode_ends, vec![Cause::Rto { backoffs: 1 }]);
}

/// `stack = "linux-3.5"`: after a timeout every ACK caps cwnd at in-flight + 3 segments
/// (`tcp_moderate_cwnd`); the default Linux profile lets slow start double as above.
#[test]
fn linux_3_5_moderates_cwnd_in_the_loss_state() {
    let (mut c, _) = established(TcpOptions { stack: StackProfile::Linux35, ..opts() });
    c.ack(seg(2), &[], 100 * MS);
    let fire = 100 * MS + c.rto_in(100 * MS);
    assert_eq!(segs_of(&c.rto(fire)), vec![2]);
    let mut t = fire + 100 * MS;
    let out = c.ack(seg(3), &[], t);
    // Slow start would make cwnd 2; nothing is in flight, so the cap (3) does not bite.
    assert_eq!((retx(&out), c.cwnd()), (vec![3, 4], 2 * M));
    t += 100 * MS;
    let out = c.ack(seg(5), &[], t);
    // Slow start: 4; in flight after this ACK: none, so cwnd = 0 + 3.
    assert_eq!((retx(&out), c.cwnd()), (vec![5, 6, 7], 3 * M));
    assert_eq!(c.s.ca_state(), CaState::Loss);
}

/// Linux `tcp_enter_loss` cuts ssthresh on a timeout only if no cut for the same data is under
/// way. A SACK RTT sample forgets the back-off (RFC 6298) but not the retry count
/// (`icsk_retransmits`, zeroed only when snd_una advances): the second timeout of the same data
/// must not reach the controller as a first one, or ssthresh collapses to 2 MSS.
#[test]
fn a_second_timeout_after_a_sack_rtt_sample_keeps_ssthresh() {
    let (mut c, _) = established(iw20());
    c.ack(seg(2), &[], 100 * MS);
    let fire = c.s.rto_timer.deadline().unwrap();
    c.rto(fire);
    let cut = c.ssthresh();
    assert!(cut > 2 * M, "the first timeout cuts to half the window: {cut}");
    // A SACK of never-retransmitted data: a valid RTT sample, snd_una does not move.
    c.ack(seg(2), &[(seg(5), seg(6))], fire + 50 * MS);
    let fire2 = c.s.rto_timer.deadline().unwrap();
    c.rto(fire2);
    assert_eq!(c.ssthresh(), cut, "the repeated timeout keeps ssthresh");
    assert!(!matches!(c.causes()[1], Cause::Rto { backoffs: 0 }), "{:?}", c.causes());
    assert_eq!(c.cwnd(), M);
}

/// A timeout inside fast recovery does not cut ssthresh a second time for the same data.
#[test]
fn a_timeout_inside_fast_recovery_does_not_cut_again() {
    let (mut c, _) = established(iw20());
    c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    assert_eq!((c.causes(), c.ssthresh()), (vec![Cause::Loss], 10 * M));
    let fire = c.s.rto_timer.deadline().unwrap();
    c.rto(fire);
    assert_eq!(c.ssthresh(), 10 * M);
    assert!(!matches!(c.causes()[1], Cause::Rto { backoffs: 0 }), "{:?}", c.causes());
    assert_eq!((c.s.ca_state(), c.cwnd()), (CaState::Loss, M));
}

/// In Loss, once snd_una advanced, the next timeout is new trouble and cuts again (Linux:
/// `icsk_ca_state == TCP_CA_Loss && !icsk_retransmits`).
#[test]
fn a_timeout_after_progress_in_loss_cuts_again() {
    let (mut c, _) = established(iw20());
    c.ack(seg(2), &[], 100 * MS);
    let fire = c.s.rto_timer.deadline().unwrap();
    c.rto(fire);
    c.ack(seg(3), &[], fire + 100 * MS);
    assert_eq!(c.s.ca_state(), CaState::Loss, "the recovery point is still ahead");
    let (cwnd, ssthresh) = (c.cwnd(), c.ssthresh());
    let fire2 = c.s.rto_timer.deadline().unwrap();
    c.rto(fire2);
    assert_eq!(c.causes()[1], Cause::Rto { backoffs: 0 });
    assert_eq!(c.ssthresh(), (cwnd / 2).max(2 * M).min(ssthresh), "NewReno halves the window");
}

#[test]
fn rto_without_outstanding_data_does_nothing() {
    let mut c = Conn::with_size(opts(), Some(2 * M));
    c.start(0);
    c.ack(seg(2), &[], 50 * MS);
    assert_eq!(c.s.phase, Phase::Finished);
    let out = c.rto(2 * SEC);
    assert!(out.is_empty());
    assert_eq!(c.n_congestion(), 0);
}

#[test]
fn rto_keeps_sack_information() {
    let (mut c, _) = established(iw20());
    // Seg 1 and 2 SACKed (not enough for fast retransmit), then a timeout.
    c.ack(0, &[(seg(1), seg(3))], 100 * MS);
    let deadline = c.s.rto_timer.deadline().unwrap();
    let out = c.rto(deadline);
    assert_eq!(retx(&out), vec![0]);
    // ACK of seg 0 jumps over the SACKed 1, 2: next retransmissions are 3, 4.
    let out = c.ack(seg(3), &[], deadline + 50 * MS);
    assert_eq!(retx(&out), vec![3, 4]);
}

#[test]
fn karn_no_srtt_update_from_retransmitted_segment_without_timestamps() {
    for timestamps in [false, true] {
        let (mut c, _) = established(TcpOptions { timestamps, ..opts() });
        c.ack(seg(2), &[], 100 * MS);
        assert_eq!(c.s.srtt(), Some(100 * MS));
        let fire = c.s.rto_timer.deadline().unwrap();
        let out = c.rto(fire);
        let rtx_tsval = out[0].tsval;
        // The ACK of the retransmission comes 30 ms later, echoing its TSval.
        let now = fire + 30 * MS;
        let mut a = ackp(seg(3), &[], now);
        if timestamps {
            a.tsecr = rtx_tsval;
        }
        c.recv(&a, now);
        if timestamps {
            // RFC 7323 §4.1: the echo makes the sample unambiguous.
            assert_eq!(c.s.srtt(), Some((7 * 100 * MS + 30 * MS) / 8));
            assert_eq!(c.last_ack_sample().0.rtt, Some(30 * MS));
        } else {
            assert_eq!(c.s.srtt(), Some(100 * MS), "Karn: no sample from a retransmitted segment");
            assert_eq!(c.last_ack_sample().0.rtt, None);
            // The backed-off RTO is kept until a valid sample (RFC 6298 §5.7).
            assert_eq!(c.rto_in(now), 600 * MS);
        }
    }
}

/// Segments that were SACKed earlier and are now covered by the cumulative ACK that follows a
/// hole-filling retransmission must not give a sequence RTT sample: their "RTT" includes the
/// whole recovery. Linux `tcp_clean_rtx_queue` skips SACKed skbs (`!(sacked & SACKED_ACKED)`)
/// and discards the sequence sample when retransmitted data was acked (FLAG_RETRANS_DATA_ACKED),
/// falling back to the timestamp echo.
#[test]
fn no_rtt_sample_from_previously_sacked_segments() {
    let mut c = Conn::new(TcpOptions { initial_window: 20, ..TcpOptions::default() });
    c.start(0);
    c.recv(&synack(100 * MS, false), 100 * MS);
    assert_eq!(c.s.srtt(), Some(100 * MS));
    // Seg 0 lost; 1..19 SACKed one RTT later.
    let t1 = 200 * MS;
    let out = c.ack(0, &[(seg(1), seg(4))], t1);
    let rtx_tsval = out[0].tsval;
    for k in 4..20 {
        c.ack(0, &[(seg(1), seg(k + 1))], t1);
    }
    assert_eq!(c.s.srtt(), Some(100 * MS));
    // The retransmission's ACK arrives one RTT after it was sent, echoing it.
    let t2 = 300 * MS;
    let mut a = ackp(seg(20), &[], t2);
    a.tsecr = rtx_tsval;
    c.recv(&a, t2);
    assert_eq!(c.last_ack_sample().0.rtt, Some(100 * MS), "sample for the hole fill");
    assert_eq!(c.s.srtt(), Some(100 * MS), "srtt must not see the 200 ms recovery time");
}

/// Without SACK, a partial ACK covers the retransmitted hole plus original segments whose ACK
/// was held back by the hole: `now - sent_time` of those originals includes the repair time.
/// Linux discards the sequence sample whenever retransmitted data is acknowledged
/// (`FLAG_RETRANS_DATA_ACKED` in `tcp_clean_rtx_queue`) and uses the timestamp echo instead.
#[test]
fn no_sequence_rtt_sample_when_retransmitted_data_is_acked() {
    let (mut c, _) = established(TcpOptions { sack: false, ..opts() });
    c.ack(seg(1), &[], 100 * MS);
    assert_eq!(c.s.srtt(), Some(100 * MS));
    // Seg 1 lost: three dupacks, fast retransmit at 103 ms.
    let mut rtx_tsval = 0;
    for i in 1..=3 {
        let out = c.ack(seg(1), &[], (100 + i) * MS);
        if let Some(p) = out.iter().find(|p| p.is_retx) {
            rtx_tsval = p.tsval;
        }
    }
    assert_eq!(rtx_tsval, 103);
    // One RTT later: partial ACK for 1..4 (segs 2..4 were sent at t = 0), echoing the retransmission.
    let now = 203 * MS;
    let mut a = ackp(seg(5), &[], now);
    a.tsecr = rtx_tsval;
    c.recv(&a, now);
    assert_eq!(c.s.ca_state(), CaState::Recovery);
    assert_eq!(c.last_ack_sample().0.rtt, Some(100 * MS), "timestamp sample of the retransmission");
    assert_eq!(c.s.srtt(), Some(100 * MS));
}

// ----- 9. RTO computation ---------------------------------------------------------------------

#[test]
fn rto_is_srtt_plus_linux_floor_on_variance() {
    let (mut c, _) = established(opts());
    let mut t = 0;
    let mut una = 0;
    // Per-segment ACKs, each 10 ms after the segment was sent.
    let mut sent_at = std::collections::VecDeque::new();
    for i in 0..10 {
        sent_at.push_back((seg(i + 1), 0));
    }
    for _ in 0..40 {
        let (end, when) = sent_at.pop_front().unwrap();
        t = t.max(when + 10 * MS);
        una = end;
        let before = c.s.snd_nxt();
        c.ack(una, &[], t);
        let mut s = before;
        while s < c.s.snd_nxt() {
            s += M;
            sent_at.push_back((s, t));
        }
        let srtt = c.s.srtt().unwrap();
        assert!((10 * MS..10 * MS + 100_000).contains(&srtt), "srtt {srtt}");
        assert_eq!(c.rto_in(t), srtt + 200 * MS, "RTO = srtt + max(4·rttvar, 200 ms)");
        t += 1000; // 1 µs between ACKs
    }
    assert!(una > 0);
    // RTO restarts on each ACK of new data, not on duplicates.
    let d = c.s.rto_timer.deadline().unwrap();
    c.ack(una, &[], t + 5 * MS);
    assert_eq!(c.s.rto_timer.deadline(), Some(d), "a duplicate ACK does not restart the timer");
    // Everything acknowledged: the timer stops (RFC 6298 §5.2). Stop the app first.
    c.s.stop(t + 6 * MS);
    let nxt = c.s.snd_nxt();
    c.ack(nxt, &[], t + 20 * MS);
    assert!(!c.s.rto_timer.is_set());
}

#[test]
fn rto_for_long_rtt_uses_variance() {
    let (mut c, _) = established(opts());
    c.ack(seg(1), &[], 100 * MS);
    // 100 + max(4 * 50, 200) = 300 ms
    assert_eq!(c.rto_in(100 * MS), 300 * MS);
    // A sample of 300 ms: rttvar = (3·50 + 200)/4 = 87.5, srtt = 125 → 125 + 350 = 475 ms.
    c.ack(seg(2), &[], 300 * MS);
    assert_eq!(c.s.srtt(), Some(125 * MS));
    assert_eq!(c.rto_in(300 * MS), 475 * MS);
}

// ----- 10. ECN (RFC 3168) ---------------------------------------------------------------------

/// Linux (`tcp_enter_cwr`, `tcp_cwnd_reduction`): an ECN-Echo sets ssthresh and PRR walks cwnd
/// down to it over the round trip, one segment for every two delivered while pipe is above it;
/// the first new segment carries CWR.
#[test]
fn ecn_echo_in_linux_walks_cwnd_down_with_prr() {
    let (mut c, _) = established(TcpOptions { ecn: true, ..opts() });
    let t = 100 * MS;
    let mut sent = Vec::new();
    for k in 1..=4u64 {
        let ece = k == 1;
        let out = if ece { c.ack_ece(seg(2 * k), t + k * MS) } else { c.ack(seg(2 * k), &[], t + k * MS) };
        assert_eq!((c.s.ca_state(), c.ssthresh()), (CaState::Cwr, 5 * M), "ACK {k}");
        assert_eq!(out.iter().filter(|p| p.cwr).count(), ece as usize, "ACK {k}");
        sent.push(new_data(&out));
    }
    // The fourth ACK leaves pipe at ssthresh: nothing more.
    assert_eq!(sent, vec![vec![10], vec![11], vec![12], vec![]]);
    assert_eq!(c.log.lock().unwrap().reactions[0], Reaction::Prr { ssthresh: 5 * M });
    // snd_una reaches the recovery point (10): cwnd lands on ssthresh.
    let out = c.ack(seg(10), &[], t + 5 * MS);
    assert_eq!((c.s.ca_state(), c.cwnd()), (CaState::Open, 5 * M));
    assert_eq!(new_data(&out), vec![13, 14], "inflight 3 → 5");
    assert_eq!(c.n_congestion(), 1);
}

/// FreeBSD (`stack = "freebsd"`, as the ABE paper's FreeBSD runs): cwnd drops to ssthresh at
/// once, and the rest of the window sends nothing until inflight falls below it.
#[test]
fn ecn_echo_in_freebsd_halves_at_once_per_window_and_sets_cwr_once() {
    let opt = TcpOptions { ecn: true, stack: StackProfile::FreeBsd, ..opts() };
    let (mut c, out) = established(opt);
    assert!(c.s.ecn_negotiated());
    assert!(out.iter().all(|p| p.ecn == Ecn::Ect0 && !p.cwr));
    let t = 100 * MS;
    // ECE on the ACK for segs 0..1: immediate halving, no retransmission.
    let out = c.ack_ece(seg(2), t);
    assert!(out.is_empty(), "inflight 8 > cwnd 5");
    assert_eq!(c.causes(), vec![Cause::Ecn]);
    assert_eq!(c.log.lock().unwrap().reactions[0], Reaction::Prr { ssthresh: 5 * M });
    assert_eq!(c.cwnd(), 5 * M);
    assert_eq!(c.ssthresh(), 5 * M);
    assert_eq!(c.s.ca_state(), CaState::Cwr);
    assert_eq!(c.last_ack_sample().1.state, CaState::Cwr);
    assert!(c.last_ack_sample().0.ece);
    // More ECE in the same window: no further reduction.
    let out = c.ack_ece(seg(4), t + MS);
    assert!(out.is_empty());
    let out = c.ack_ece(seg(6), t + 2 * MS);
    // inflight 4 < 5: one new segment, which carries CWR.
    assert_eq!(new_data(&out), vec![10]);
    assert!(out[0].cwr);
    assert_eq!(out[0].ecn, Ecn::Ect0);
    let out = c.ack_ece(seg(8), t + 3 * MS);
    assert_eq!(new_data(&out), vec![11, 12]);
    assert!(out.iter().all(|p| !p.cwr && p.ecn == Ecn::Ect0), "CWR only on the first new segment");
    assert_eq!(c.n_congestion(), 1);
    assert_eq!(c.cwnd(), 5 * M, "no growth in CWR");
    assert_eq!(c.s.ca_state(), CaState::Cwr);
    // snd_una reaches the recovery point (10): the episode ends.
    c.ack(seg(10), &[], t + 4 * MS);
    assert_eq!(c.s.ca_state(), CaState::Open);
    assert_eq!(c.log.lock().unwrap().episode_ends, vec![Cause::Ecn]);
    assert_eq!(c.cwnd(), 5 * M);
    // A new ECE after that reduces again, and CWR is sent again.
    let out = c.ack_ece(seg(11), t + 100 * MS);
    assert_eq!(c.causes(), vec![Cause::Ecn, Cause::Ecn]);
    assert_eq!(c.s.ca_state(), CaState::Cwr);
    assert_eq!(c.ssthresh(), (5 * M) / 2);
    assert!(out.is_empty());
    let nxt = c.s.snd_nxt();
    let out = c.ack(nxt, &[], t + 110 * MS);
    assert!(!out.is_empty());
    assert!(out[0].cwr);
    assert!(out[1..].iter().all(|p| !p.cwr));
}

#[test]
fn ece_without_negotiation_is_ignored() {
    let (mut c, out) = established(opts());
    assert!(out.iter().all(|p| p.ecn == Ecn::NotEct));
    c.ack_ece(seg(2), 100 * MS);
    assert_eq!(c.n_congestion(), 0);
    assert_eq!(c.cwnd(), 12 * M);
}

#[test]
fn ece_on_a_pure_duplicate_is_not_a_signal() {
    let (mut c, _) = established(TcpOptions { ecn: true, ..opts() });
    c.ack_ece(0, 100 * MS);
    assert_eq!(c.n_congestion(), 0, "nothing acknowledged");
}

#[test]
fn retransmissions_never_carry_ect() {
    // RTO retransmission.
    let (mut c, _) = established(TcpOptions { ecn: true, initial_window: 20, ..opts() });
    let out = c.rto(SEC);
    assert_eq!(out.len(), 1);
    assert!(out[0].is_retx);
    assert_eq!(out[0].ecn, Ecn::NotEct);
    assert!(!out[0].cwr);
    // Fast retransmission, plus the new data sent during recovery.
    let (mut c, _) = established(TcpOptions { ecn: true, initial_window: 20, ..opts() });
    let mut all = c.ack(0, &[(seg(1), seg(4))], 100 * MS);
    for k in 4..20 {
        all.extend(c.ack(0, &[(seg(1), seg(k + 1))], (100 + k) * MS));
    }
    assert!(all.iter().any(|p| p.is_retx) && all.iter().any(|p| !p.is_retx));
    for p in &all {
        assert_eq!(p.ecn, if p.is_retx { Ecn::NotEct } else { Ecn::Ect0 }, "seg {}", p.seq / M);
    }
}

#[test]
fn loss_inside_ecn_episode_reports_the_open_episode() {
    let (mut c, _) = established(TcpOptions { ecn: true, initial_window: 20, ..opts() });
    c.ack_ece(seg(2), 100 * MS);
    assert_eq!(c.s.ca_state(), CaState::Cwr);
    let out = c.ack(seg(2), &[(seg(3), seg(6))], 101 * MS);
    assert_eq!(retx(&out), vec![2]);
    let log = c.log.lock().unwrap();
    assert_eq!(log.congestion.len(), 2);
    assert_eq!(log.congestion[1].0.cause, Cause::Loss);
    assert_eq!(log.congestion[1].0.open_episode, Some(Cause::Ecn));
    drop(log);
    assert_eq!(c.s.ca_state(), CaState::Recovery);
}

// ----- 11. receive window ---------------------------------------------------------------------

#[test]
fn sender_never_exceeds_the_advertised_window() {
    let (mut c, _) = established(iw20());
    let mut t = 100 * MS;
    let wnd = 6 * M;
    let mut una = 0;
    for _ in 0..30 {
        una += M;
        let mut a = ackp(una, &[], t);
        a.window = wnd;
        let out = c.recv(&a, t);
        for p in &out {
            assert!(
                p.seq + p.len as u64 <= una + wnd,
                "seg {} beyond window edge {}",
                p.seq / M,
                (una + wnd) / M
            );
        }
        assert!(c.s.snd_nxt() <= una + wnd || c.s.snd_nxt() == seg(20));
        t += MS;
    }
    assert_eq!(c.s.snd_nxt(), una + wnd, "window filled exactly");
    assert!(c.cwnd() > wnd, "limited by rwnd, not cwnd");
    assert!(!c.last_ack_sample().1.is_cwnd_limited, "rwnd-limited is not cwnd-limited");
}

#[test]
fn zero_window_stops_new_data_but_not_retransmissions() {
    let (mut c, _) = established(iw20());
    let t = 100 * MS;
    let mut a = ackp(seg(2), &[], t);
    a.window = 0;
    let out = c.recv(&a, t);
    assert!(out.is_empty(), "zero window: no new data although cwnd allows");
    // Fast retransmit still goes with a zero window.
    let mut a = ackp(seg(2), &[(seg(3), seg(6))], t + MS);
    a.window = 0;
    let out = c.recv(&a, t + MS);
    assert_eq!(segs_of(&out), vec![2]);
    assert!(out[0].is_retx);
    // And so does an RTO retransmission.
    let fire = c.s.rto_timer.deadline().unwrap();
    let out = c.rto(fire);
    assert_eq!(segs_of(&out), vec![2]);
    // The window opens: new data resumes (slow start from 1 MSS after the RTO).
    let mut a = ackp(seg(3), &[(seg(3), seg(6))], fire + 10 * MS);
    a.window = BIG_WND;
    let out = c.recv(&a, fire + 10 * MS);
    assert!(!out.is_empty());
}

#[test]
fn closed_window_with_nothing_outstanding_is_probed_until_it_opens() {
    let (mut c, first) = established(TcpOptions { handshake: false, ..TcpOptions::default() });
    let end = first.last().map(|p| p.seq + p.len as u64).unwrap();
    let t = 100 * MS;
    let mut a = ackp(end, &[], t);
    a.window = 0;
    let out = c.recv(&a, t);
    assert!(out.is_empty(), "closed window: nothing may be sent");
    // Nothing is outstanding, so only the persist timer can restart the transfer.
    let first_probe_at = c.s.rto_timer.deadline().expect("persist timer armed");
    let probe = c.rto(first_probe_at);
    assert_eq!(probe.len(), 1);
    assert_eq!((probe[0].kind, probe[0].seq, probe[0].len), (Kind::Data, end, 0));
    assert_eq!(c.s.snd_nxt(), end, "a probe carries no new data");
    // Still closed: probes back off.
    let second = c.s.rto_timer.deadline().unwrap();
    assert!(second - first_probe_at > first_probe_at - t);
    let mut a = ackp(end, &[], second);
    a.window = BIG_WND;
    let out = c.recv(&a, second);
    assert!(!out.is_empty(), "the window opened: data flows again");
}

// ----- 12. finite flow ------------------------------------------------------------------------

#[test]
fn finite_flow_segments_fct_and_finish() {
    let mut c = Conn::with_size(TcpOptions::default(), Some(5000));
    c.start(10 * MS);
    let out = c.recv(&synack(30 * MS, false), 30 * MS);
    assert_eq!(
        out.iter().map(|p| (p.seq, p.len)).collect::<Vec<_>>(),
        vec![(0, 1448), (1448, 1448), (2896, 1448), (4344, 656)]
    );
    assert_eq!(out[3].wire_bytes, 656 + HDR);
    assert_eq!(c.s.snd_nxt(), 5000);
    c.ack(2896, &[], 50 * MS);
    assert_eq!(c.s.phase, Phase::Established);
    assert_eq!(c.s.fct, None);
    let out = c.ack(4344, &[], 51 * MS);
    assert!(out.is_empty(), "no data beyond the flow size");
    assert_eq!(c.s.fct, None);
    assert!(c.s.rto_timer.is_set());
    // A controller/pacing wake-up pending at the end must be dropped too.
    c.s.send_timer.set(70 * MS);
    c.ack(5000, &[], 52 * MS);
    assert_eq!(c.s.phase, Phase::Finished);
    assert_eq!(c.s.fct, Some(42 * MS), "from start (10 ms) to the last ACK (52 ms)");
    assert!(!c.s.rto_timer.is_set());
    assert!(!c.s.send_timer.is_set());
    assert_eq!(c.s.stats.bytes_sent, 5000);
    // Nothing more ever happens.
    assert!(c.ack(5000, &[], 60 * MS).is_empty());
    assert!(c.rto(SEC).is_empty());
    assert_eq!(c.s.fct, Some(42 * MS));
}

#[test]
fn finite_flow_with_loss_of_the_short_last_segment() {
    let mut c = Conn::with_size(opts(), Some(5000));
    let out = c.start(0);
    assert_eq!(out.len(), 4);
    c.ack(4344, &[], 100 * MS);
    let fire = c.s.rto_timer.deadline().unwrap();
    let out = c.rto(fire);
    assert_eq!(out.iter().map(|p| (p.seq, p.len, p.is_retx)).collect::<Vec<_>>(), vec![(4344, 656, true)]);
    c.ack(5000, &[], fire + 100 * MS);
    assert_eq!(c.s.fct, Some(fire + 100 * MS));
    assert_eq!(c.s.phase, Phase::Finished);
}

#[test]
fn greedy_flow_has_no_fct_after_stop() {
    let (mut c, _) = established(opts());
    c.s.stop(MS);
    c.check();
    c.ack(seg(10), &[], 100 * MS);
    assert_eq!(c.s.phase, Phase::Finished);
    assert_eq!(c.s.fct, None);
}

// ----- 13. receiver: delayed ACKs and timestamps ----------------------------------------------

fn data(seq: u64, len: u32, now: Nanos, tsval: u32) -> Packet {
    let mut p = Packet::new(0, Kind::Data, len + HDR, now);
    p.seq = seq;
    p.len = len;
    p.tsval = tsval;
    p
}

fn delack_rx() -> TcpReceiver {
    TcpReceiver::new(
        TcpOptions { handshake: false, delayed_ack: true, quickack_segments: 0, ..TcpOptions::default() },
        0,
        None,
    )
}

#[test]
fn delayed_ack_two_full_segments_one_ack_and_tsecr_of_the_earliest() {
    let mut r = delack_rx();
    let mut out = Vec::new();
    r.on_packet(&data(0, MSS, MS, 101), MS, &mut out);
    assert!(out.is_empty());
    assert_eq!(r.delack_timer.deadline(), Some(41 * MS), "40 ms delayed-ACK timer");
    r.on_packet(&data(M, MSS, 2 * MS, 102), 2 * MS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, Kind::Ack);
    assert_eq!(out[0].ack, 2 * M);
    assert_eq!(out[0].tsecr, 101, "RFC 7323 §4.3: echo the earliest unacknowledged segment");
    assert_eq!(out[0].tsval, 2);
    assert!(!r.delack_timer.is_set());
    // The next pair echoes the first of the pair.
    r.on_packet(&data(2 * M, MSS, 3 * MS, 103), 3 * MS, &mut out);
    r.on_packet(&data(3 * M, MSS, 4 * MS, 104), 4 * MS, &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].ack, 4 * M);
    assert_eq!(out[1].tsecr, 103);
    assert_eq!(r.acks_sent, 2);
}

#[test]
fn delayed_ack_single_segment_waits_for_the_timer() {
    let mut r = delack_rx();
    let mut out = Vec::new();
    r.on_packet(&data(0, MSS, 5 * MS, 7), 5 * MS, &mut out);
    assert!(out.is_empty());
    let d = r.delack_timer.deadline().unwrap();
    assert_eq!(d, 45 * MS);
    r.on_delack_timer(d, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, M);
    assert_eq!(out[0].tsecr, 7);
    assert!(!r.delack_timer.is_set());
    // A stray timer with nothing to acknowledge sends nothing.
    r.on_delack_timer(d + MS, &mut out);
    assert_eq!(out.len(), 1);
}

#[test]
fn sub_mss_segment_is_acked_immediately() {
    let mut r = delack_rx();
    let mut out = Vec::new();
    r.on_packet(&data(0, 656, MS, 9), MS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, 656);
    assert_eq!(out[0].tsecr, 9);
}

#[test]
fn out_of_order_echoes_last_in_order_and_hole_fill_echoes_filler() {
    let mut r = delack_rx();
    let mut out = Vec::new();
    r.on_packet(&data(0, MSS, MS, 11), MS, &mut out);
    r.on_packet(&data(M, MSS, 2 * MS, 12), 2 * MS, &mut out);
    assert_eq!(out.len(), 1);
    // Seg 2 lost; 3 arrives out of order: immediate ACK, echo still that of the in-order data.
    r.on_packet(&data(3 * M, MSS, 4 * MS, 14), 4 * MS, &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(out[1].ack, 2 * M);
    assert_eq!(out[1].sack_blocks(), &[(3 * M, 4 * M)]);
    assert_eq!(out[1].tsecr, 11);
    // Retransmitted seg 2 fills the hole: immediate ACK echoing the filler.
    r.on_packet(&data(2 * M, MSS, 9 * MS, 19), 9 * MS, &mut out);
    assert_eq!(out.len(), 3);
    assert_eq!(out[2].ack, 4 * M);
    assert_eq!(out[2].sack_count, 0);
    assert_eq!(out[2].tsecr, 19);
}

// ----- end to end: sender ↔ receiver over a lossy, fixed-delay wire ----------------------------

/// A tiny event loop: fixed one-way delay, serialisation ignored, a drop filter on first
/// transmissions. Every step checks the sender's invariants (through `Conn`).
fn run_pair(opt: TcpOptions, size: u64, drop: impl Fn(&Packet) -> bool) -> (Conn, TcpReceiver) {
    use std::collections::BTreeMap;
    let owd = 20 * MS;
    let mut c = Conn::with_size(opt.clone(), Some(size));
    let mut r = TcpReceiver::new(opt, 0, None);
    // (time, order) -> (to_receiver, packet)
    let mut q: BTreeMap<(Nanos, u64), (bool, Packet)> = BTreeMap::new();
    let mut n = 0u64;
    let mut push = |q: &mut BTreeMap<_, _>, t: Nanos, to_rx: bool, p: Packet| {
        q.insert((t, n), (to_rx, p));
        n += 1;
    };
    for p in c.start(0) {
        push(&mut q, owd, true, p);
    }
    let mut now = 0;
    for _ in 0..100_000 {
        if c.s.phase == Phase::Finished {
            break;
        }
        let next_pkt = q.keys().next().map(|k| k.0);
        let rto = c.s.rto_timer.deadline();
        let delack = r.delack_timer.deadline();
        let t = [next_pkt, rto, delack].into_iter().flatten().min().expect("something pending");
        assert!(t >= now);
        now = t;
        if next_pkt == Some(t) {
            let key = *q.keys().next().unwrap();
            let (to_rx, p) = q.remove(&key).unwrap();
            if to_rx {
                if !p.is_retx && p.kind == Kind::Data && drop(&p) {
                    continue;
                }
                let mut acks = Vec::new();
                r.on_packet(&p, now, &mut acks);
                for a in acks {
                    push(&mut q, now + owd, false, a);
                }
            } else {
                for d in c.recv(&p, now) {
                    push(&mut q, now + owd, true, d);
                }
            }
        } else if rto == Some(t) {
            for d in c.rto(now) {
                push(&mut q, now + owd, true, d);
            }
        } else {
            let mut acks = Vec::new();
            r.on_delack_timer(now, &mut acks);
            for a in acks {
                push(&mut q, now + owd, false, a);
            }
        }
    }
    (c, r)
}

#[test]
fn end_to_end_lossless_transfer() {
    let size = 500 * M + 123;
    let (c, r) = run_pair(TcpOptions::default(), size, |_| false);
    assert_eq!(c.s.phase, Phase::Finished);
    assert_eq!(r.delivered, size);
    assert_eq!(c.s.stats.retransmits, 0);
    assert_eq!(c.s.srtt(), Some(40 * MS));
    assert_eq!(c.n_congestion(), 0);
}

#[test]
fn end_to_end_with_losses_sack_and_newreno() {
    for sack in [true, false] {
        for ecn in [false, true] {
            let size = 800 * M;
            let lost = [5u64, 6, 40, 100, 101, 102, 300, 301, 305, 799];
            let (c, r) = run_pair(TcpOptions { sack, ecn, ..TcpOptions::default() }, size, |p| {
                lost.contains(&(p.seq / M))
            });
            assert_eq!(c.s.phase, Phase::Finished, "sack={sack}");
            assert_eq!(r.delivered, size);
            assert!(c.s.stats.retransmits >= lost.len() as u64, "sack={sack}");
            assert!(c.s.fct.is_some());
            assert!(c.n_congestion() >= 1);
        }
    }
}

// ----- AccECN (RFC 9768) ------------------------------------------------------------------------

fn accecn_opts() -> TcpOptions {
    TcpOptions { ecn: true, accecn: true, ..TcpOptions::default() }
}

#[test]
fn accecn_is_negotiated_in_the_handshake_and_falls_back_to_classic() {
    let opt = accecn_opts();
    let mut c = Conn::new(opt.clone());
    let syn = c.start(0);
    assert_eq!((syn[0].ace, syn[0].ece, syn[0].cwr), (0b111, true, true), "AE, CWR and ECE (§3.1.1)");
    // Against an AccECN receiver: ACE 0b010 and no ECE on the SYN-ACK (Table 2, Not-ECT SYN).
    let mut r = TcpReceiver::new(opt.clone(), 0, None);
    let mut back = Vec::new();
    r.on_packet(&syn[0], 5 * MS, &mut back);
    assert_eq!((back[0].ace, back[0].ece), (0b010, false));
    let data = c.recv(&back[0], 10 * MS);
    assert!(c.s.ecn_negotiated());
    assert!(data.iter().all(|p| p.ecn == Ecn::Ect0 && !p.cwr));
    // Against a classic-ECN receiver: its SYN-ACK has ECE alone; the sender falls back, and
    // then ECE means what RFC 3168 says.
    let mut c = Conn::new(opt);
    c.start(0);
    c.recv(&synack(10 * MS, true), 10 * MS);
    assert!(c.s.ecn_negotiated());
    c.ack_ece(seg(2), 40 * MS);
    let (sample, _) = c.last_ack_sample();
    assert_eq!((sample.ece, sample.ce_delta), (true, 0), "classic feedback: no counts");
}

#[test]
fn an_l4s_flow_sends_ect1() {
    let (_, out) = established(TcpOptions { ect1: true, handshake: false, ..accecn_opts() });
    assert_eq!(out.len(), 10);
    assert!(out.iter().all(|p| p.ecn == Ecn::Ect1));
}

/// A CE-marked data segment.
fn ce_data(seq: u64, now: Nanos) -> Packet {
    let mut p = data(seq, MSS, now, ticks(now));
    p.ecn = Ecn::Ce;
    p
}

#[test]
fn the_accecn_receiver_counts_marks_and_acks_a_change_at_once() {
    let opt = TcpOptions { quickack_segments: 0, handshake: false, ..accecn_opts() };
    let mut r = TcpReceiver::new(opt, 0, None);
    let mut out = Vec::new();
    // Unmarked: delayed as usual.
    r.on_packet(&data(0, MSS, MS, 1), MS, &mut out);
    assert!(out.is_empty());
    // CE after an unmarked segment: ACKed at once (§3.2.2.5.1) with r.cep = 5 + 1 = 6.
    r.on_packet(&ce_data(M, 2 * MS), 2 * MS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].ace, out[0].ceb, out[0].ece), (6, MSS, false), "no latched ECE");
    assert_eq!(out[0].wire_bytes, HDR + 12, "the AccECN option rides on the ACK");
    // A second CE in a row is not a change: the usual delayed ACK, on the second segment.
    out.clear();
    r.on_packet(&ce_data(2 * M, 3 * MS), 3 * MS, &mut out);
    assert!(out.is_empty());
    r.on_packet(&ce_data(3 * M, 4 * MS), 4 * MS, &mut out);
    assert_eq!(out.len(), 1);
    // 6 + 2 = 8 → ACE 0; 3 × 1448 = 4344 CE bytes.
    assert_eq!((out[0].ace, out[0].ceb), (0, 3 * MSS));
}

#[test]
fn the_accecn_sender_hands_every_mark_to_the_controller_and_opens_one_episode() {
    let (mut c, _) = established(TcpOptions { handshake: false, ..accecn_opts() });
    let ack = |n: u64, ace: u8, ceb: u32, now: Nanos| {
        let mut p = ackp(seg(n), &[], now);
        (p.ace, p.ceb) = (ace, ceb);
        p
    };
    c.recv(&ack(2, 5, 0, 100 * MS), 100 * MS);
    let (s, _) = c.last_ack_sample();
    assert_eq!((s.ce_delta, s.ce_bytes, s.ece), (0, 0, false));
    assert_eq!(c.n_congestion(), 0);
    // Two segments acknowledged, both CE: ACE 5 → 7.
    c.recv(&ack(4, 7, 2 * MSS, 101 * MS), 101 * MS);
    let (s, _) = c.last_ack_sample();
    assert_eq!((s.ce_delta, s.ce_bytes, s.ece), (2, 2 * M, true));
    assert_eq!(c.causes(), vec![Cause::Ecn], "new marks open an ECN episode");
    // One more mark within the episode: counted, no second reduction.
    c.recv(&ack(6, 0, 3 * MSS, 102 * MS), 102 * MS);
    let (s, _) = c.last_ack_sample();
    assert_eq!((s.ce_delta, s.ce_bytes), (1, M));
    assert_eq!(c.n_congestion(), 1);
    // The next segment sent carries no CWR: AccECN has no ECE latch to clear.
    let out = c.ack(seg(8), &[], 103 * MS);
    assert!(out.iter().all(|p| !p.cwr));
}
