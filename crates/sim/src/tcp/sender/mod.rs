//! The TCP data sender: handshake, scoreboard, loss detection and recovery, RTO, pacing gate,
//! delivery-rate sampling. Congestion decisions are delegated to a pure
//! [`CongestionControl`](ccbench_cc::CongestionControl); everything here is the machinery Linux
//! keeps in the stack (see `shared/reference/algorithms.md` §1 and §13):
//!
//! * RTT estimation and RTO per RFC 6298 with Linux's floor on the variance term (§1.1), Karn's
//!   rule with timestamps as the fallback for retransmitted data (RFC 7323 §4.1);
//! * SACK loss detection per RFC 6675 (`IsLost`: more than `(DupThresh-1)·MSS` SACKed above) and
//!   NewReno recovery with Linux's duplicate-ACK SACK emulation when SACK is off (RFC 6582);
//! * Proportional Rate Reduction (RFC 6937) during loss- and ECN-triggered reductions;
//! * RFC 3168 ECN: ECT on new data, one reduction per RTT on ECE, CWR on the next new segment;
//! * delivery-rate samples and round counting (draft-cheng-iccrg-delivery-rate-estimation).
//!
//! Sequence numbers count payload bytes from 0; the SYN is a separate packet kind.

use ccbench_aqm::Ecn;
use ccbench_cc::{
    AckSample, CaCounting, CaState, Cause, CcState, CongestionControl, CongestionEvent, LossInfo, PathInfo,
    SentInfo,
};

use self::rate::RateSampler;
use self::recovery::Recovery;
use self::scoreboard::Scoreboard;
use self::timers::Timers;
use super::rtt::WindowedMin;
use crate::engine::Timer;
use crate::packet::{Kind, Packet};
use crate::scenario::TcpOptions;

pub type Nanos = u64;

mod rate;
mod recovery;
mod scoreboard;
mod timers;

/// Linux keeps the minimum RTT over a 10 s window (`tcp_min_rtt_wlen`).
const MIN_RTT_WINDOW: Nanos = 10_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Flow not started yet.
    Idle,
    SynSent,
    Established,
    /// Everything sent was acknowledged and the application has no more data.
    Finished,
}

/// RTT samples of one ACK: from the oldest and the newest segment it covers (Linux uses the
/// first for SRTT, so the delayed-ACK wait counts, and the last for congestion control).
#[derive(Clone, Copy, Debug, Default)]
struct RttSamples {
    oldest: Option<Nanos>,
    newest: Option<Nanos>,
}

impl RttSamples {
    fn add(&mut self, rtt: Nanos) {
        self.oldest.get_or_insert(rtt);
        self.newest = Some(rtt);
    }
}

/// Counters kept for measurements.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub segments_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub bytes_sent: u64,
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
    timers: Timers,
    min_rtt: WindowedMin,
    pub rto_timer: Timer,
    /// Pacing release and controller-owned wake-ups.
    pub send_timer: Timer,
    ts_recent: u32,
    snd_wnd: u64,
    ecn_ok: bool,
    cwr_pending: bool,
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

fn ticks(now: Nanos, granularity: Nanos) -> u32 {
    (now / granularity) as u32
}

impl TcpSender {
    pub fn new(opt: TcpOptions, flow: u32, cc: Box<dyn CongestionControl>, size: Option<u64>) -> Self {
        let iw = opt.initial_window as u64 * opt.mss as u64;
        TcpSender {
            flow,
            cc,
            st: CcState { cwnd: iw, ssthresh: u64::MAX, pacing_rate: None },
            phase: Phase::Idle,
            size,
            app_end: size.unwrap_or(u64::MAX),
            sb: Scoreboard::new(opt.mss),
            rec: Recovery::new(opt.sack, opt.mss),
            timers: Timers::new(&opt),
            min_rtt: WindowedMin::new(MIN_RTT_WINDOW),
            rto_timer: Timer::default(),
            send_timer: Timer::default(),
            ts_recent: 0,
            snd_wnd: opt.rcv_buf,
            ecn_ok: false,
            cwr_pending: false,
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
            self.establish(now, out);
        }
    }

    fn send_syn(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.flow, 0, Kind::Syn, self.opt.header_bytes + 8, now);
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.ece = self.opt.ecn;
        p.cwr = self.opt.ecn;
        self.syn_sent_at = now;
        out.push(p);
        self.timers.restart(&mut self.rto_timer, now);
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
                self.ecn_ok = self.opt.ecn && p.ece;
                self.snd_wnd = p.window;
                self.ts_recent = p.tsval;
                self.establish(now, out);
            }
            Kind::Ack if self.phase == Phase::Established => self.on_ack(p, now, out),
            _ => {}
        }
    }

    fn on_ack(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        let mss = self.mss();
        self.snd_wnd = p.window;
        self.ts_recent = p.tsval;
        let prior_inflight = self.inflight();
        let prior_una = self.sb.snd_una();
        let mut sacked_new = 0u64;
        // RTT candidates from newly cumulatively ACKed and from newly SACKed segments.
        let mut cum_rtt = RttSamples::default();
        let mut sack_rtt = RttSamples::default();
        let mut retransmitted_acked = false;
        let mut deliveries = self.rate.begin_ack();

        // Cumulative acknowledgment. A segment SACKed before had its RTT taken then.
        let acked = self.sb.ack_cumulative(p.ack, |seg| {
            self.rate.on_delivered(&mut deliveries, seg.len, &seg.tx, now);
            if seg.ever_retransmitted {
                retransmitted_acked = true;
            } else {
                cum_rtt.add(now - seg.tx.sent_time);
            }
        });
        let reno_consumed = self.sb.remove_reno_sacks(acked);

        // Selective acknowledgments.
        if self.opt.sack && p.sack_count > 0 {
            for i in 0..p.sack_count as usize {
                let (start, end) = p.sack[i];
                sacked_new += self.sb.mark_sacked(start, end, |seg| {
                    self.rate.on_delivered(&mut deliveries, seg.len, &seg.tx, now);
                    if !seg.ever_retransmitted {
                        sack_rtt.add(now - seg.tx.sent_time);
                    }
                });
            }
        }

        let is_dupack = acked == 0 && p.ack == prior_una && self.sb.snd_nxt() > self.sb.snd_una();
        self.rec.count_dupack(acked > 0, is_dupack);
        if is_dupack && !self.opt.sack {
            self.sb.add_reno_sack();
        }

        // Loss detection.
        let lost_before = self.sb.lost_total();
        let mut scan = self.rec.loss_scan(&self.sb, acked, sacked_new);
        while let Some(i) = scan.next(&self.sb) {
            self.mark_lost(i, now);
        }
        let newly_lost = self.sb.lost_total() - lost_before;

        // RTT (Linux tcp_ack_update_rtt): sequence sample of never-retransmitted, newly ACKed
        // data (Karn), else of newly SACKed data, else the timestamp echo.
        let seq_rtt = if cum_rtt.oldest.is_some() { cum_rtt } else { sack_rtt };
        let (srtt_sample, cc_rtt) = match (seq_rtt.oldest, seq_rtt.newest) {
            // Linux FLAG_RETRANS_DATA_ACKED: once a retransmission is covered, original
            // segments held back behind the hole would overstate the RTT.
            (Some(o), Some(n)) if !retransmitted_acked => (Some(o), Some(n)),
            _ if retransmitted_acked && self.opt.timestamps && p.tsecr != 0 => {
                let now_ticks = ticks(now, self.opt.ts_granularity);
                let r = now_ticks.wrapping_sub(p.tsecr) as u64 * self.opt.ts_granularity;
                (Some(r), Some(r))
            }
            _ => (None, None),
        };
        if let Some(r) = srtt_sample {
            self.timers.on_rtt_sample(r);
        }
        if let Some(r) = cc_rtt {
            self.min_rtt.update(now, r);
        }

        let ece = self.ecn_ok && p.ece;
        if let Some(cause) = self.rec.signal(newly_lost, ece, acked + sacked_new > 0) {
            self.congestion(cause, now);
        }
        if let Some(cause) = self.rec.finish(self.sb.snd_una(), &mut self.st) {
            self.end_episode(cause, now);
        }
        self.rec.settle(self.sb.sacked_bytes() > 0);

        // Rate sample.
        let delivered_now = self.rate.delivered() - deliveries.prior_delivered;
        let prr_delivered = self.rec.delivered_data(delivered_now, is_dupack, acked, reno_consumed);
        let rate = self.rate.finish_ack(&deliveries, now, self.sb.lost_total());

        let segments_acked = match self.opt.ca_counting {
            CaCounting::Segments => delivered_now.div_ceil(mss) as u32,
            CaCounting::Acks => (delivered_now > 0) as u32,
        };
        let sample = AckSample {
            acked,
            sacked: sacked_new,
            segments_acked,
            rtt: cc_rtt,
            owd: (p.echo_owd > 0).then_some(p.echo_owd),
            ece: p.ece,
            ce_delta: 0,
            rate,
            newly_lost,
            round_start: deliveries.round_start,
            round_count: self.rate.round_count(),
            prior_inflight,
            is_dupack,
        };
        let path = self.path(now);
        self.cc.on_ack(&mut self.st, &path, &sample);

        if self.rec.in_prr() {
            let pipe = self.inflight();
            self.rec.prr_update(&mut self.st, prr_delivered, pipe);
        }
        self.clamp_cwnd();

        self.timers.on_ack(&mut self.rto_timer, now, acked > 0, self.sb.flight_size() == 0);
        self.check_finished(now);
        self.transmit(now, out);
        self.sync_cc_timer();
    }

    fn mark_lost(&mut self, i: usize, now: Nanos) {
        if let Some(seg) = self.sb.mark_lost(i) {
            let path = self.path(now);
            self.cc.on_packet_lost(&mut self.st, &path, &LossInfo { seq: seg.seq, bytes: seg.len });
        }
    }

    // ----- reductions -----------------------------------------------------------------------

    /// The one path for every congestion signal, from an ACK (loss, ECN-Echo) or from the RTO:
    /// the controller picks the reaction, the stack carries it out and opens the episode.
    fn congestion(&mut self, cause: Cause, now: Nanos) {
        let ev = CongestionEvent {
            cause,
            open_episode: self.rec.open_cause(),
            flight_size: self.sb.flight_size(),
            in_slow_start: self.st.in_slow_start(),
        };
        let path = self.path(now);
        let reaction = self.cc.on_congestion(&mut self.st, &path, &ev);
        let mss = self.mss();
        let prr = recovery::apply_reaction(&mut self.st, reaction, cause, mss);
        self.rec.enter(cause, prr, self.sb.snd_una(), self.sb.snd_nxt());
        if cause == Cause::Ecn {
            // RFC 3168 §6.1.2: CWR on the next new segment tells the receiver to stop echoing.
            self.cwr_pending = true;
        }
    }

    fn end_episode(&mut self, cause: Cause, now: Nanos) {
        if !self.opt.sack {
            self.sb.reset_reno_sacks();
        }
        let path = self.path(now);
        self.cc.on_episode_end(&mut self.st, &path, cause);
    }

    fn clamp_cwnd(&mut self) {
        self.st.cwnd = self.st.cwnd.max(self.mss());
    }

    // ----- timers ---------------------------------------------------------------------------

    pub fn on_rto(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        match self.phase {
            Phase::SynSent => {
                self.syn_retransmitted = true;
                self.timers.back_off();
                self.stats.timeouts += 1;
                self.send_syn(now, out);
                return;
            }
            Phase::Established if self.sb.flight_size() > 0 => {}
            Phase::Established if self.sb.snd_nxt() < self.app_end => {
                self.send_window_probe(now, out);
                return;
            }
            _ => return,
        }
        self.congestion(Cause::Rto { backoffs: self.timers.backoffs() }, now);
        self.clamp_cwnd();
        self.sb.enter_loss();
        self.timers.back_off();
        self.stats.timeouts += 1;
        self.timers.restart(&mut self.rto_timer, now);
        self.transmit(now, out);
        self.sync_cc_timer();
    }

    /// The peer's window is closed and nothing is outstanding: an empty segment at `snd_una`
    /// elicits an ACK with the current window; back off like the RTO until it opens.
    fn send_window_probe(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.flow, 0, Kind::Data, self.opt.header_bytes, now);
        p.seq = self.sb.snd_una();
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.tsecr = self.ts_recent;
        out.push(p);
        self.timers.back_off();
        self.timers.restart(&mut self.rto_timer, now);
    }

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

    // ----- transmission ---------------------------------------------------------------------

    /// Send whatever the windows, pacing and the application allow.
    pub fn transmit(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.phase != Phase::Established {
            return;
        }
        loop {
            let retx = self.sb.next_retransmission();
            let snd_nxt = self.sb.snd_nxt();
            let len = match retx {
                Some(i) => self.sb.seg(i).len as u64,
                None if snd_nxt < self.app_end => (self.app_end - snd_nxt).min(self.mss()),
                None => {
                    // Application-limited: mark rate samples until this data is delivered.
                    self.rate.on_app_limited(self.inflight(), self.st.cwnd);
                    self.cwnd_limited = self.st.in_slow_start() && 2 * self.inflight() > self.st.cwnd;
                    break;
                }
            };
            if self.inflight() + len > self.st.cwnd {
                self.cwnd_limited = true;
                break;
            }
            if retx.is_none() && snd_nxt + len > self.sb.snd_una() + self.snd_wnd {
                self.cwnd_limited = false;
                if self.sb.flight_size() == 0 {
                    // Nothing in flight will bring a window update: persist timer.
                    self.timers.start_if_idle(&mut self.rto_timer, now);
                }
                break;
            }
            if let Some(rate) = self.st.pacing_rate {
                if now < self.next_send_time {
                    self.send_timer.set(self.next_send_time);
                    self.cwnd_limited = true;
                    break;
                }
                let wire = len + self.opt.header_bytes as u64;
                let gap = (wire as f64 * 1e9 / rate.max(1.0)) as Nanos;
                self.next_send_time = self.next_send_time.max(now) + gap;
            }
            match retx {
                Some(i) => self.send_segment(i, true, now, out),
                None => {
                    if self.inflight() == 0 {
                        self.idle_restart(now);
                    }
                    let i = self.sb.push(len);
                    self.send_segment(i, false, now, out);
                }
            }
        }
    }

    /// RFC 5681 §4.1: after an idle period longer than the RTO, restart from at most IW.
    fn idle_restart(&mut self, now: Nanos) {
        let Some(last) = self.last_send_time else {
            return;
        };
        let idle = now - last;
        if idle > self.timers.rtt().rto() {
            let iw = self.opt.initial_window as u64 * self.mss();
            self.st.cwnd = self.st.cwnd.min(iw);
            let path = self.path(now);
            self.cc.on_idle_restart(&mut self.st, &path, idle);
            self.clamp_cwnd();
        }
    }

    fn send_segment(&mut self, i: usize, is_retx: bool, now: Nanos, out: &mut Vec<Packet>) {
        let tx = self.rate.on_send(now, self.inflight(), self.sb.seg(i).len, self.sb.lost_total());
        let seg = self.sb.on_transmit(i, is_retx, tx);
        if is_retx {
            self.stats.retransmits += 1;
        }
        self.rec.on_sent(seg.len);

        let mut p = Packet::new(self.flow, 0, Kind::Data, seg.len + self.opt.header_bytes, now);
        p.seq = seg.seq;
        p.len = seg.len;
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.tsecr = self.ts_recent;
        p.is_retx = is_retx;
        if self.ecn_ok && !is_retx {
            p.ecn = Ecn::Ect0;
            if self.cwr_pending {
                p.cwr = true;
                self.cwr_pending = false;
            }
        }
        out.push(p);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += seg.len as u64;
        self.last_send_time = Some(now);
        self.timers.start_if_idle(&mut self.rto_timer, now);
        let path = self.path(now);
        let info = SentInfo {
            seq: seg.seq,
            bytes: seg.len,
            is_retransmission: is_retx,
            inflight_after: self.inflight(),
        };
        self.cc.on_packet_sent(&mut self.st, &path, &info);
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
