//! The TCP data sender. Congestion decisions are delegated to a pure
//! [`CongestionControl`](ccbench_cc::CongestionControl); everything here is the machinery Linux
//! keeps in the stack (see `shared/reference/algorithms.md` §1 and §13), split as Linux splits it:
//!
//! * this file: the connection (handshake, phases), the ACK path in `tcp_ack`'s order, and the one
//!   place where a congestion signal, from an ACK or from the RTO, reaches the controller;
//! * `scoreboard.rs`: the retransmission queue, cumulative and SACK marking, the RFC 6675 pipe and
//!   Linux's duplicate-ACK SACK emulation when SACK is off;
//! * `loss.rs`: the loss detectors wired together — RACK-TLP by default, else RFC 6675 — the
//!   reorder, probe and retransmission timeouts (`tcp_recovery.c`, `tcp_timer.c`);
//! * `rack.rs`, `tlp.rs`: RACK-TLP (RFC 8985);
//! * `recovery.rs`: sequence-based loss detection (RFC 6675 `IsLost`, RFC 6582 NewReno), CA
//!   states and reduction episodes, Proportional Rate Reduction (RFC 6937);
//! * `rate.rs`: delivery-rate samples and round counting (draft-cheng-iccrg-delivery-rate-estimation);
//! * `timers.rs`: RTT and RTO per RFC 6298 with Linux's floor on the variance term, back-off, and
//!   when the retransmission, SYN and persist timers run;
//! * `output.rs`: what goes out next, the windows, the pacing gate, RFC 3168 ECT and CWR marking.
//!
//! Which RTT an ACK yields (Karn's rule, the timestamp fallback) is `rtt::ack_rtt`. Sequence
//! numbers count payload bytes from 0; the SYN is a separate packet kind.

use ccbench_cc::{
    AckSample, CaCounting, CaState, Cause, CcState, CongestionControl, CongestionEvent, PathInfo, Reaction,
};

use self::rack::Rack;
use self::rate::{Deliveries, RateSampler};
use self::recovery::Recovery;
use self::scoreboard::{Scoreboard, Seg};
#[cfg(test)]
pub(crate) use self::timers::Pending;
use self::timers::Timers;
use self::tlp::Tlp;
use self::undo::Undo;
use super::accecn::{self, NewMarks};
use super::rtt::{self, RttSamples, WindowedMin};
use crate::engine::Timer;
use crate::packet::{Kind, Packet};
use crate::scenario::{LossRecovery, StackProfile, TcpOptions};

pub type Nanos = u64;

mod loss;
mod output;
mod rack;
mod rate;
mod recovery;
mod scoreboard;
mod timers;
mod tlp;
mod undo;

/// Linux keeps the minimum RTT over a 300 s window (`sysctl_tcp_min_rtt_wlen`).
const MIN_RTT_WINDOW: Nanos = 300_000_000_000;
/// Linux `tcp_max_burst`: segments beyond those in flight a moderated cwnd allows (its
/// `tp->reordering`, 3 by default).
const MAX_BURST: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Flow not started yet.
    Idle,
    SynSent,
    Established,
    /// Everything sent was acknowledged and the application has no more data.
    Finished,
}

/// What one ACK newly tells, gathered as `on_ack` proceeds (Linux: the flags and samples
/// `tcp_ack` collects before it acts on them).
struct Acked {
    prior_inflight: u64,
    /// Bytes newly acknowledged cumulatively, and newly SACKed.
    acked: u64,
    sacked: u64,
    /// Bytes delivered for the first time (`acked` less what was SACKed before, plus `sacked`).
    delivered: u64,
    is_dupack: bool,
    /// The ACK carries a D-SACK (RFC 2883): its first block reports data received twice.
    dsack: bool,
    /// It delivers a segment never retransmitted and sent before the recovery point (Linux
    /// `FLAG_ORIG_SACK_ACKED`, judged against `high_seq`).
    original_delivered: bool,
    high_seq: u64,
    /// Without SACK: duplicate-ACK emulated SACKs the cumulative ACK used up.
    reno_consumed: u64,
    newly_lost: u64,
    deliveries: Deliveries,
    cum_rtt: RttSamples,
    sack_rtt: RttSamples,
    /// Linux `FLAG_RETRANS_DATA_ACKED`.
    retransmitted_acked: bool,
    /// The controller's RTT sample.
    rtt: Option<Nanos>,
}

impl Acked {
    fn new(deliveries: Deliveries, prior_inflight: u64, high_seq: u64) -> Self {
        Acked {
            prior_inflight,
            acked: 0,
            sacked: 0,
            delivered: 0,
            is_dupack: false,
            dsack: false,
            original_delivered: false,
            high_seq,
            reno_consumed: 0,
            newly_lost: 0,
            deliveries,
            cum_rtt: RttSamples::default(),
            sack_rtt: RttSamples::default(),
            retransmitted_acked: false,
            rtt: None,
        }
    }

    fn note_original(&mut self, seg: &Seg) {
        self.original_delivered |= !seg.ever_retransmitted && seg.seq + seg.len as u64 <= self.high_seq;
    }

    /// Karn: no sequence RTT sample from a segment that was ever retransmitted.
    fn on_cumulative(&mut self, rate: &mut RateSampler, seg: &Seg, now: Nanos) {
        rate.on_delivered(&mut self.deliveries, seg.len, &seg.tx, now);
        self.note_original(seg);
        if seg.ever_retransmitted {
            self.retransmitted_acked = true;
        } else {
            self.cum_rtt.add(now - seg.tx.sent_time);
        }
    }

    fn on_sacked(&mut self, rate: &mut RateSampler, seg: &Seg, now: Nanos) {
        rate.on_delivered(&mut self.deliveries, seg.len, &seg.tx, now);
        self.note_original(seg);
        if !seg.ever_retransmitted {
            self.sack_rtt.add(now - seg.tx.sent_time);
        }
    }
}

/// Counters kept for measurements.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub bytes_sent: u64,
    /// Reductions undone as spurious.
    pub undos: u64,
    /// Reductions started by an ECN-Echo, and by loss found from ACKs (not RTO).
    pub ecn_reductions: u64,
    pub loss_reductions: u64,
}

pub struct TcpSender {
    opt: TcpOptions,
    flow: u32,
    cc: Box<dyn CongestionControl>,
    st: CcState,
    pub phase: Phase,
    /// Bytes the application asked to transfer (None = greedy); only such flows get an FCT.
    size: Option<u64>,
    /// Bytes the application will have written in total (`u64::MAX` = greedy); `stop` lowers it.
    app_end: u64,
    sb: Scoreboard,
    rec: Recovery,
    rack: Rack,
    tlp: Tlp,
    undo: Undo,
    /// F-RTO step 2.b: this ACK sends new data only, no retransmission.
    new_data_only: bool,
    /// Segments a detector just marked, before the controller hears of them (reused).
    lost_buf: Vec<Seg>,
    timers: Timers,
    min_rtt: WindowedMin,
    pub(crate) rto_timer: Timer,
    /// Pacing release and controller-owned wake-ups.
    pub(crate) send_timer: Timer,
    ts_recent: u32,
    snd_wnd: u64,
    ecn_ok: bool,
    cwr_pending: bool,
    /// What the receiver's AccECN counters said so far, once AccECN is negotiated.
    accecn: Option<accecn::Feedback>,
    rate: RateSampler,
    cwnd_limited: bool,
    next_send_time: Nanos,
    last_send_time: Option<Nanos>,
    syn_sent_at: Nanos,
    syn_retransmitted: bool,
    pub start_time: Nanos,
    /// Completion time of a finite flow (start → last byte acknowledged).
    pub fct: Option<Nanos>,
    pub stats: SenderStats,
}

/// RFC 2883 §4: the first SACK block reports a duplicate if it lies below the cumulative ACK
/// or inside the second block.
fn is_dsack(blocks: &[(u64, u64)], ack: u64) -> bool {
    match blocks {
        [(_, end), ..] if *end <= ack => true,
        [(s0, e0), (s1, e1), ..] => s1 <= s0 && e0 <= e1,
        _ => false,
    }
}

fn ticks(now: Nanos, granularity: Nanos) -> u32 {
    (now / granularity) as u32
}

impl TcpSender {
    pub fn new(opt: TcpOptions, flow: u32, cc: Box<dyn CongestionControl>, size: Option<u64>) -> Self {
        let iw = opt.initial_window as u64 * opt.mss as u64;
        TcpSender {
            flow,
            cc,
            st: CcState {
                cwnd: iw,
                ssthresh: opt.initial_ssthresh.map_or(u64::MAX, |s| s as u64 * opt.mss as u64),
                pacing_rate: None,
            },
            phase: Phase::Idle,
            size,
            app_end: size.unwrap_or(u64::MAX),
            sb: Scoreboard::new(opt.mss),
            rec: Recovery::new(opt.sack, opt.mss),
            rack: Rack::new(),
            tlp: Tlp::default(),
            undo: Undo::default(),
            new_data_only: false,
            lost_buf: Vec::with_capacity(16),
            timers: Timers::new(&opt),
            min_rtt: WindowedMin::new(MIN_RTT_WINDOW),
            rto_timer: Timer::default(),
            send_timer: Timer::default(),
            ts_recent: 0,
            snd_wnd: opt.rcv_buf,
            ecn_ok: false,
            cwr_pending: false,
            accecn: None,
            rate: RateSampler::default(),
            cwnd_limited: false,
            next_send_time: 0,
            last_send_time: None,
            syn_sent_at: 0,
            syn_retransmitted: false,
            start_time: 0,
            fct: None,
            stats: SenderStats::default(),
            opt,
        }
    }

    // ----- read-only views for measurements -------------------------------------------------

    pub fn cc_state(&self) -> CcState {
        self.st
    }
    pub fn srtt(&self) -> Option<Nanos> {
        self.timers.rtt().srtt()
    }
    pub fn inflight(&self) -> u64 {
        self.sb.inflight()
    }
    pub fn snd_una(&self) -> u64 {
        self.sb.snd_una()
    }
    pub fn snd_nxt(&self) -> u64 {
        self.sb.snd_nxt()
    }
    pub fn ca_state(&self) -> CaState {
        self.rec.ca_state()
    }
    pub fn ecn_negotiated(&self) -> bool {
        self.ecn_ok
    }
    /// What the retransmission timer is armed for (tests).
    #[cfg(test)]
    pub(crate) fn timer_pending(&self) -> Pending {
        self.timers.pending()
    }
    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    fn mss(&self) -> u64 {
        self.opt.mss as u64
    }

    fn path(&self, now: Nanos) -> PathInfo {
        PathInfo {
            now,
            mss: self.opt.mss,
            srtt: self.timers.rtt().srtt(),
            rttvar: self.timers.rtt().rttvar(),
            min_rtt: self.min_rtt.get(),
            inflight: self.inflight(),
            delivered: self.rate.delivered(),
            state: self.rec.ca_state(),
            is_cwnd_limited: self.cwnd_limited,
            rwnd: self.snd_wnd,
            initial_window: self.opt.initial_window as u64 * self.mss(),
            timestamps: self.opt.timestamps,
        }
    }

    // ----- connection set-up ------------------------------------------------------------------

    /// The application opens the connection.
    pub fn start(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.start_time = now;
        if self.opt.handshake {
            self.phase = Phase::SynSent;
            self.send_syn(now, out);
        } else {
            self.ecn_ok = self.opt.ecn;
            self.accecn = (self.opt.ecn && self.opt.accecn).then(accecn::Feedback::default);
            self.establish(now, out);
        }
    }

    fn establish(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.phase = Phase::Established;
        self.timers.on_established(&mut self.rto_timer);
        if self.syn_retransmitted {
            // RFC 5681 §3.1: a lost SYN or SYN-ACK leaves one segment of IW; RFC 6298 §5.7: and
            // without an RTT sample the RTO restarts from 3 s.
            self.st.cwnd = self.mss();
            self.timers.after_syn_timeout();
        }
        let path = self.path(now);
        self.cc.init(&mut self.st, &path);
        self.clamp_cwnd();
        self.transmit(now, out);
    }

    /// The application stops writing: nothing beyond what was already sent.
    pub fn stop(&mut self, now: Nanos) {
        self.app_end = self.app_end.min(self.sb.snd_nxt());
        self.check_finished(now);
    }

    /// A connection whose application has written only `bytes` so far (a chunked transfer's
    /// first chunk); `write` adds more. No FCT is kept.
    pub fn with_app_limit(mut self, bytes: u64) -> Self {
        self.size = None;
        self.app_end = bytes;
        self
    }

    /// The application writes `bytes` more: the next chunk of a chunk-by-chunk transfer. A
    /// finished connection resumes with its congestion state as it was (Linux's restart after
    /// idle still applies when the pause exceeded the RTO).
    pub fn write(&mut self, bytes: u64, now: Nanos, out: &mut Vec<Packet>) {
        self.app_end = self.app_end.saturating_add(bytes);
        self.size = self.size.map(|s| s.saturating_add(bytes));
        if self.phase == Phase::Finished {
            self.phase = Phase::Established;
            self.transmit(now, out);
        }
    }

    fn check_finished(&mut self, now: Nanos) {
        let snd_una = self.sb.snd_una();
        if self.phase == Phase::Established && snd_una >= self.app_end {
            self.phase = Phase::Finished;
            self.rto_timer.cancel();
            self.send_timer.cancel();
            if self.size.is_some_and(|size| snd_una >= size) && self.fct.is_none() {
                self.fct = Some(now - self.start_time);
            }
        }
    }

    // ----- incoming packets -------------------------------------------------------------------

    pub fn on_packet(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        match p.kind {
            Kind::SynAck if self.phase == Phase::SynSent => {
                if !self.syn_retransmitted {
                    let r = now - self.syn_sent_at;
                    self.timers.on_rtt_sample(r);
                    self.min_rtt.update(now, r);
                }
                // RFC 9768 §3.1.2: a SYN-ACK that does not accept AccECN falls back to what it
                // does accept, classic ECN (ECE alone) or none.
                let accecn = self.opt.ecn && self.opt.accecn && accecn::accepts(p.ace);
                self.ecn_ok = self.opt.ecn && (p.ece || accecn);
                self.accecn = accecn.then(accecn::Feedback::default);
                self.snd_wnd = p.window;
                self.ts_recent = p.tsval;
                self.establish(now, out);
            }
            Kind::Ack if self.phase == Phase::Established => self.on_ack(p, now, out),
            _ => {}
        }
    }

    /// Linux `tcp_ack`, in its order: scoreboard and RTT (`tcp_clean_rtx_queue`), loss
    /// detection, the reduction episode (`tcp_fastretrans_alert`), the controller or PRR
    /// (`tcp_cong_control`), the RTO or probe timer; then whatever may be sent.
    fn on_ack(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        self.snd_wnd = p.window;
        self.ts_recent = p.tsval;
        let mut a = self.update_scoreboard(p, now);
        a.rtt = self.update_rtt(&a, p.tsecr, now);
        let found = self.detect_losses(&a, now);
        a.newly_lost = found.newly_lost;
        self.process_probe_ack(p.ack, &a, now);
        let tsecr = (self.opt.timestamps && p.tsecr != 0).then_some(p.tsecr);
        self.try_undo(&a, tsecr, now);
        let marks = self.new_marks(p, &a);
        let ece = marks.map_or(p.ece, |m| m.packets > 0);
        self.update_episode(&a, found.lost_retransmission, ece, now);
        let sample = self.ack_sample(p, &a, marks, now);
        let path = self.path(now);
        self.cc.on_ack(&mut self.st, &path, &sample);
        self.moderate_cwnd();
        if self.rec.in_prr() {
            let delivered = self.rec.delivered_data(a.delivered, a.is_dupack, a.acked, a.reno_consumed);
            let pipe = self.inflight();
            self.rec.prr_update(&mut self.st, delivered, pipe, a.acked > 0, a.newly_lost > 0);
        }
        self.clamp_cwnd();
        let all_acked = self.sb.flight_size() == 0;
        if self.timers.on_ack(&mut self.rto_timer, a.acked > 0, all_acked) && !found.reorder_timer_armed {
            self.set_xmit_timer(now);
        }
        self.check_finished(now);
        self.transmit(now, out);
        self.new_data_only = false;
        self.sync_cc_timer();
    }

    /// What the ACK newly covers, cumulatively (Linux `tcp_clean_rtx_queue`) and selectively
    /// (`tcp_sacktag_write_queue`), and whether it is a duplicate (RFC 5681 §2).
    fn update_scoreboard(&mut self, p: &Packet, now: Nanos) -> Acked {
        let prior_una = self.sb.snd_una();
        let (rate, rack) = (&mut self.rate, &mut self.rack);
        let (min_rtt, prior_fack) = (self.min_rtt.get(), rack.fack());
        let mut a = Acked::new(rate.begin_ack(), self.sb.inflight(), self.rec.recovery_point());
        let acked = self.sb.ack_cumulative(p.ack, |seg| {
            a.on_cumulative(rate, seg, now);
            rack.check_reordering(seg, prior_fack);
            rack.on_delivered(seg, now, min_rtt);
        });
        a.acked = acked;
        a.reno_consumed = self.sb.remove_reno_sacks(acked);
        if self.opt.sack {
            a.dsack = is_dsack(p.sack_blocks(), p.ack);
            for &(start, end) in p.sack_blocks() {
                let sacked = self.sb.mark_sacked(start, end, |seg| {
                    a.on_sacked(rate, seg, now);
                    rack.check_reordering(seg, prior_fack);
                    rack.on_delivered(seg, now, min_rtt);
                    rack.on_sacked(seg);
                });
                a.sacked += sacked;
            }
            if a.dsack {
                rack.on_dsack();
            }
        }
        a.delivered = rate.delivered() - a.deliveries.prior_delivered;
        a.is_dupack = acked == 0 && p.ack == prior_una && self.sb.flight_size() > 0;
        self.rec.count_dupack(acked > 0, a.is_dupack);
        if a.is_dupack && !self.opt.sack {
            self.sb.add_reno_sack();
        }
        if a.dsack {
            self.count_dsack(p.sack_blocks()[0], prior_una);
        }
        a
    }

    /// Feeds SRTT (and so the RTO) and the minimum RTT; returns the controller's sample.
    fn update_rtt(&mut self, a: &Acked, tsecr: u32, now: Nanos) -> Option<Nanos> {
        let (g, timestamps) = (self.opt.ts_granularity, self.opt.timestamps);
        let echo = || (timestamps && tsecr != 0).then(|| ticks(now, g).wrapping_sub(tsecr) as u64 * g);
        let (srtt, cc) = rtt::ack_rtt(a.cum_rtt, a.sack_rtt, a.retransmitted_acked, a.acked > 0, echo);
        if let Some(r) = srtt {
            self.timers.on_rtt_sample(r);
        }
        if let Some(r) = cc {
            self.min_rtt.update(now, r);
        }
        cc
    }

    /// Opens an episode on a new congestion signal and closes the one whose recovery point this
    /// ACK passed (the episode bookkeeping of Linux `tcp_fastretrans_alert`).
    fn update_episode(&mut self, a: &Acked, lost_retransmission: bool, ece: bool, now: Nanos) {
        let ece = self.ecn_ok && ece;
        if let Some(cause) = self.rec.signal(a.newly_lost, lost_retransmission, ece, a.acked + a.sacked > 0) {
            self.congestion(cause, now);
        }
        if let Some(cause) = self.rec.finish(self.sb.snd_una(), &mut self.st) {
            if !self.opt.sack {
                self.sb.reset_reno_sacks();
            }
            if cause == Cause::Loss {
                self.rack.on_recovery_end();
            }
            let path = self.path(now);
            self.cc.on_episode_end(&mut self.st, &path, cause);
        }
        self.rec.settle(self.sb.sacked_bytes() > 0);
    }

    /// The CE marks an ACK reports, with AccECN; None with classic feedback, whose ECE bit is
    /// all there is.
    fn new_marks(&mut self, p: &Packet, a: &Acked) -> Option<NewMarks> {
        let mss = self.mss();
        let packets = a.delivered.div_ceil(mss);
        self.accecn.as_mut().map(|f| f.on_ack(p.ace, p.ceb, packets, mss as u32))
    }

    fn ack_sample(&mut self, p: &Packet, a: &Acked, marks: Option<NewMarks>, now: Nanos) -> AckSample {
        let marks_seen = marks.unwrap_or_default();
        let segments_acked = match self.opt.ca_counting {
            CaCounting::Segments => a.delivered.div_ceil(self.mss()) as u32,
            CaCounting::Acks => (a.delivered > 0) as u32,
        };
        AckSample {
            acked: a.acked,
            sacked: a.sacked,
            segments_acked,
            rtt: a.rtt,
            owd: (p.echo_owd > 0).then_some(p.echo_owd),
            ts_echo: (self.opt.timestamps && p.tsecr != 0).then(|| {
                ticks(now, self.opt.ts_granularity).wrapping_sub(p.tsecr) as u64 * self.opt.ts_granularity
            }),
            ece: marks.map_or(p.ece, |m| m.packets > 0),
            ce_delta: marks_seen.packets,
            ce_bytes: marks_seen.bytes,
            rate: self.rate.finish_ack(&a.deliveries, now, self.sb.lost_total()),
            newly_lost: a.newly_lost,
            round_start: a.deliveries.round_start,
            round_count: self.rate.round_count(),
            prior_inflight: a.prior_inflight,
            is_dupack: a.is_dupack,
        }
    }

    // ----- reductions -----------------------------------------------------------------------

    /// The one path for every congestion signal, from an ACK (loss, ECN-Echo) or from the RTO:
    /// the controller picks the reaction, the stack carries it out and opens the episode.
    fn congestion(&mut self, cause: Cause, now: Nanos) -> Reaction {
        let ev = CongestionEvent {
            cause,
            open_episode: self.rec.open_cause(),
            flight_size: self.sb.flight_size(),
            in_slow_start: self.st.in_slow_start(),
        };
        match cause {
            Cause::Ecn => self.stats.ecn_reductions += 1,
            Cause::Loss => self.stats.loss_reductions += 1,
            Cause::Rto { .. } => {}
        }
        self.prepare_undo(cause);
        let path = self.path(now);
        let mut reaction = self.cc.on_congestion(&mut self.st, &path, &ev);
        if let (Cause::Ecn, StackProfile::FreeBsd, Reaction::Prr { ssthresh }) =
            (cause, self.opt.stack, reaction)
        {
            reaction = Reaction::Immediate { ssthresh, cwnd: ssthresh.min(self.st.cwnd) };
        }
        let prior_cwnd = self.st.cwnd;
        let prr = recovery::apply_reaction(&mut self.st, reaction, cause);
        self.rec.enter(cause, prr, prior_cwnd, self.sb.snd_nxt());
        // Linux `tcp_init_cwnd_reduction`: a probe outstanding is covered by this reduction.
        self.tlp.forget();
        if cause == Cause::Ecn && self.accecn.is_none() {
            // RFC 3168 §6.1.2: CWR on the next new segment tells the receiver to stop echoing
            // (AccECN's receiver echoes counts, never a latched ECE).
            self.cwr_pending = true;
        }
        reaction
    }

    /// Linux 3.5 caps cwnd at in-flight + 3 segments on every ACK of the Loss state
    /// (`tcp_moderate_cwnd`, `tcp_max_burst`), so a cumulative ACK that fills the hole after a
    /// timeout releases no burst of the whole window (`stack = "linux-3.5"`).
    fn moderate_cwnd(&mut self) {
        if self.opt.stack == StackProfile::Linux35 && self.rec.ca_state() == CaState::Loss {
            self.st.cwnd = self.st.cwnd.min(self.inflight() + MAX_BURST * self.mss());
        }
    }

    fn clamp_cwnd(&mut self) {
        self.st.cwnd = self.st.cwnd.max(self.mss());
    }

    // ----- timers ---------------------------------------------------------------------------

    /// Pacing release or controller timer.
    pub fn on_send_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.cc.next_timer().is_some_and(|t| t <= now) {
            let path = self.path(now);
            self.cc.on_timer(&mut self.st, &path);
            self.clamp_cwnd();
        }
        self.transmit(now, out);
        self.sync_cc_timer();
    }

    fn sync_cc_timer(&mut self) {
        Timers::pull_in(&mut self.send_timer, self.cc.next_timer());
    }

    /// Consistency of the incremental counters with the scoreboard (tests and debug checks).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.sb.check().map_err(|e| format!("flow {}: {e}", self.flow))?;
        if self.st.cwnd < self.mss() {
            return Err(format!("flow {}: cwnd {} below one MSS", self.flow, self.st.cwnd));
        }
        Ok(())
    }
}
