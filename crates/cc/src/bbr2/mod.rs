//! BBRv2 as Linux `net/ipv4/tcp_bbr2.c` of the `google/bbr` v2alpha branch (the code wins over
//! the notes for `"bbr2"`; notes `algorithms.md` §10.2 describe v3 where they differ). Windows
//! are in bytes, rates in bytes per second; constants keep the C names.
//!
//! * Model: `max_bw` = max delivery rate over the last one or two ProbeBW cycles
//!   (`bbr2_advance_max_bw_filter`), `min_rtt` over 10 s fed by a 5 s `probe_rtt_min`
//!   filter ([`modes`]), rounds counted as BBRv1 does ([`crate::bbr::model::Rounds`]).
//! * Bounds ([`bounds`]): the long-term `inflight_hi` (set when a bandwidth probe sees more
//!   than 2 % loss, `bbr_loss_thresh`, or, with ECN, ≥ 50 % CE, `bbr_ecn_thresh`) and the
//!   short-term `bw_lo` / `inflight_lo`, cut to 0.7 of themselves (`bbr_beta` = 30 % cut)
//!   in every round with loss outside probing. `bw = min(max_bw, bw_lo, bw_hi)`.
//! * ProbeBW ([`probe`]): DOWN (0.75) → CRUISE (1.0, in flight ≤ 0.85·`inflight_hi`) →
//!   REFILL (1.0, one round) → UP (1.25) → DOWN. A probe starts after 2–3 s of wall clock or
//!   `min(63, BDP in packets)` rounds, whichever comes first (Reno coexistence).
//! * Startup 2.885 (`bbr_high_gain`, v2alpha keeps v1's), exit on a full pipe or on high loss
//!   (`bbr_full_loss_cnt` = 8 loss events in a Recovery round with > 2 % loss); Drain
//!   1/2.885 (`bbr_drain_gain`); ProbeRTT every 5 s (`bbr_probe_rtt_win_ms`) at
//!   `0.5·BDP` (`bbr_probe_rtt_cwnd_gain`) for `max(200 ms, 1 round)`.
//! * `cwnd = min(cwnd_gain·BDP (+ quantization), inflight_hi or its headroom level,
//!   inflight_lo)`; cwnd_gain 2. Loss gets no PRR: [`Reaction::SelfManaged`], as
//!   `cong_control` bypasses it in Linux. RTO: `cwnd = inflight + 1 segment`
//!   (`tcp_enter_loss`), the pre-RTO window restored when the Loss state ends
//!   (`bbr2_set_state`).
//! * ECN (param `ecn`, default off as `bbr_ecn_enable = false`): DCTCP-style `ecn_alpha`
//!   (gain 1/16) cuts `inflight_lo`/`bw_lo` by `alpha/3` per marked round, a probe round with
//!   ≥ 50 % CE bytes counts as too high, two such Startup rounds end Startup; only on paths
//!   with `min_rtt ≤ ecn_max_rtt` (5 ms). The stack gives RFC 3168 ECE, not per-packet CE
//!   counts: an ACK with ECE counts the bytes it delivers as CE (exact with a DCTCP-style
//!   receiver, an over-estimate with RFC 3168 latching); `ce_delta` is used when the stack
//!   provides it.
//! * ACK aggregation (params `extra_acked*`, on by default): the cwnd target is
//!   `cwnd_gain · BDP + min(gain · extra_acked, bw · 100 ms)` before the quantization budget,
//!   with v2alpha's `bbr_update_ack_aggregation` / `bbr_ack_aggregation_cwnd` (shared
//!   estimator in [`crate::bbr::aggregation`]); v2 differs from v1 in using the bounded
//!   `bw` (`bbr_bw`: max_bw, bw_lo, bw_hi) and, with `bbr_extra_acked_in_startup`, in
//!   applying the allowance in Startup too, where the maximum's slots last 1 round instead of
//!   5 (`extra_acked_rounds`).
//! * Omitted, as in our BBRv1: the app-limited fast path (a CPU saving), marking ProbeRTT
//!   app-limited (the stack owns the mark), `ecn_reprobe_gain` and `refill_add_inc` (both 0
//!   upstream; with them the `loss_in_cycle`/`ecn_in_cycle` flags only they read), and EDT
//!   pacing (nothing waits in a pacing queue here, so `bbr_packets_in_net_at_edt` is in
//!   flight plus one send quantum when probing up).
//! * Where the notes (§10.2, v3 values) differ, the v2alpha code wins: `bbr_beta` is a 30 %
//!   cut (our `beta` = 0.7 is what remains, as CUBIC's beta), Startup 2.885 not 2.77, DOWN
//!   0.75 not 0.9, Drain 1/2.885, cwnd gain 2 in UP too (v3: 2.25), `bbr_full_loss_cnt` 8.
//!   The notes ask for the simulation RNG for the probe wait; controllers have none here.
//! * Random draws (`bbr2_pick_probe_wait`) come from the connection clock, as BBRv1's
//!   `cycle_start` does: the wait is `bw_probe_base + (now in µs mod bw_probe_rand)` and the
//!   round offset `now in ms mod bw_probe_rand_rounds`, taken when the DOWN phase starts.

mod bounds;
mod config;
mod control;
mod modes;
mod probe;
#[cfg(test)]
mod tests;

use crate::bbr::aggregation::AckAggregation;
use crate::bbr::model::Rounds;
use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, LossInfo, Nanos, PathInfo,
    Reaction,
};
pub use bounds::EcnState;
pub use config::Bbr2Config;
pub use probe::{AckPhase, Phase};

const MS: Nanos = 1_000_000;
/// "No bound yet" (Linux `~0U`).
const UNSET: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// One ACK as `bbr2_main` sees it (Linux `struct rate_sample` plus `bbr_context`).
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    /// A delivery-rate sample with a positive interval that delivered something.
    valid: bool,
    bw: f64,
    delivered: u64,
    prior_delivered: u64,
    tx_in_flight: u64,
    /// Bytes lost over the sample's interval (`rs->lost`).
    lost: u64,
    /// Bytes newly marked lost on this ACK (`rs->losses`, counted as an event).
    losses: u64,
    /// CE-marked bytes over the interval (`rs->delivered_ce`).
    delivered_ce: u64,
    is_app_limited: bool,
    /// Bytes newly delivered by this ACK (`rs->acked_sacked`).
    acked_sacked: u64,
    prior_inflight: u64,
    rtt: Option<Nanos>,
}

pub struct Bbr2 {
    cfg: Bbr2Config,
    mode: Mode,
    phase: Phase,
    ack_phase: AckPhase,
    rounds: Rounds,
    round_start: bool,
    // Path model.
    max_bw: [f64; 2],
    min_rtt: Option<Nanos>,
    min_rtt_stamp: Nanos,
    probe_rtt_min: Option<Nanos>,
    probe_rtt_min_stamp: Nanos,
    // Bounds (bytes, bytes/s; UNSET / infinity when absent).
    bw_lo: f64,
    bw_hi: f64,
    bw_latest: f64,
    inflight_lo: u64,
    inflight_hi: u64,
    inflight_latest: u64,
    undo: (f64, u64, u64),
    // Congestion signals.
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_events_in_round: u64,
    ecn: EcnState,
    // Startup.
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    // ProbeBW cycle.
    cycle_stamp: Nanos,
    probe_wait: Nanos,
    rounds_since_probe: u64,
    bw_probe_up_rounds: u32,
    /// Packets to deliver per 1-packet rise of `inflight_hi` in UP.
    bw_probe_up_cnt: u64,
    bw_probe_up_acks: u64,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    got_ok_bw_probe_sample: bool,
    // ProbeRTT.
    probe_rtt_done: Option<Nanos>,
    probe_rtt_round_done: bool,
    // Outputs and bookkeeping.
    pacing_gain: f64,
    cwnd_gain: f64,
    has_init_pacing: bool,
    init_cwnd: u64,
    prior_cwnd: u64,
    prev_ca_state: CaState,
    idle_restart: bool,
    last_delivered: u64,
    rto_marking: bool,
    /// The ACK-aggregation estimator (used when `cfg.extra_acked`).
    aggregation: AckAggregation,
}

impl Bbr2 {
    pub fn new(cfg: Bbr2Config) -> Self {
        Self {
            mode: Mode::Startup,
            phase: Phase::Up,
            ack_phase: AckPhase::Init,
            rounds: Rounds::default(),
            round_start: false,
            max_bw: [0.0; 2],
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_min: None,
            probe_rtt_min_stamp: 0,
            bw_lo: f64::INFINITY,
            bw_hi: f64::INFINITY,
            bw_latest: 0.0,
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            inflight_latest: 0,
            undo: (0.0, 0, 0),
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_events_in_round: 0,
            ecn: EcnState::default(),
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_stamp: 0,
            probe_wait: 0,
            rounds_since_probe: 0,
            bw_probe_up_rounds: 0,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            got_ok_bw_probe_sample: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            has_init_pacing: false,
            init_cwnd: 0,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            idle_restart: false,
            last_delivered: 0,
            rto_marking: false,
            aggregation: AckAggregation::default(),
            cfg,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// `(inflight_lo, inflight_hi)` in bytes, `None` while unset.
    pub fn inflight_bounds(&self) -> (Option<u64>, Option<u64>) {
        let some = |v: u64| (v != UNSET).then_some(v);
        (some(self.inflight_lo), some(self.inflight_hi))
    }

    /// `bw_lo` in bytes per second, `None` while unset.
    pub fn bw_lo(&self) -> Option<f64> {
        self.bw_lo.is_finite().then_some(self.bw_lo)
    }

    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt
    }

    /// Linux `bbr_max_bw`: the larger of this cycle's and the previous cycle's maximum.
    fn max_bw(&self) -> f64 {
        self.max_bw[0].max(self.max_bw[1])
    }

    /// Linux `bbr_bw`: the bandwidth the controls use, bounded by `bw_lo` and `bw_hi`.
    pub fn bw(&self) -> f64 {
        self.max_bw().min(self.bw_lo).min(self.bw_hi)
    }

    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }

    fn sample(&mut self, ack: &AckSample, acked_sacked: u64) -> Sample {
        let mut s = Sample {
            losses: ack.newly_lost,
            acked_sacked,
            prior_inflight: ack.prior_inflight,
            rtt: ack.rtt,
            ..Default::default()
        };
        if let Some(rs) = ack.rate.filter(|rs| rs.interval > 0) {
            s.valid = acked_sacked > 0;
            s.bw = rs.delivery_rate;
            s.delivered = rs.delivered;
            s.prior_delivered = rs.prior_delivered;
            s.tx_in_flight = rs.tx_in_flight;
            s.lost = rs.lost;
            s.is_app_limited = rs.is_app_limited;
            s.delivered_ce = self.ecn.ce_since(rs.prior_delivered);
        }
        s
    }

    /// Linux `bbr_save_cwnd`.
    fn save_cwnd(&mut self, st: &CcState) {
        let in_recovery = matches!(self.prev_ca_state, CaState::Recovery | CaState::Loss);
        if !in_recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = st.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(st.cwnd);
        }
    }

    /// Linux `bbr2_ssthresh`: entering recovery, remember what undo restores.
    fn enter_recovery(&mut self, st: &CcState) {
        self.save_cwnd(st);
        self.undo = (self.bw_lo, self.inflight_lo, self.inflight_hi);
    }

    /// Linux `bbr2_set_state`: the stack's CA state changed since the last ACK.
    fn on_state_change(&mut self, st: &mut CcState, state: CaState) {
        if self.prev_ca_state == CaState::Loss && state != CaState::Loss {
            st.cwnd = st.cwnd.max(self.prior_cwnd);
        }
    }

    /// `bbr2_main` after the sample is built.
    fn main(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample, s: &Sample) {
        let mss = path.mss as u64;
        self.round_start = s.valid && self.rounds.on_sample(s.prior_delivered, path.delivered);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(255);
            self.update_ecn_alpha(path, st);
        }
        self.ecn_in_round |= self.cfg.ecn && ack.ece;
        self.update_congestion_signals(st, path, s);
        self.update_ack_aggregation(st, path, s);
        self.check_loss_too_high_in_startup(st, path, s);
        self.check_full_bw_reached(s);
        self.check_drain(st, path);
        self.update_cycle_phase(st, path, s);
        self.update_min_rtt(st, path, s);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(st, path, bw, self.pacing_gain);
        self.set_cwnd(st, path, s.acked_sacked);
        self.bound_cwnd_for_inflight_model(st, mss);
        self.prev_ca_state = path.state;
    }

    fn extra_acked_on(&self) -> bool {
        self.cfg.extra_acked && self.cfg.extra_acked_gain > 0.0
    }

    /// Linux `bbr_update_ack_aggregation` (v2alpha): after the congestion signals took this
    /// ACK's sample; slots of one round while in Startup with `extra_acked_in_startup`.
    fn update_ack_aggregation(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        if !self.extra_acked_on() || !s.valid {
            return;
        }
        let window = if self.cfg.extra_acked_in_startup && !self.full_bw_reached {
            1
        } else {
            self.cfg.extra_acked_rounds
        };
        let (round_start, bw, mss) = (self.round_start, self.bw(), path.mss as u64);
        self.aggregation.update(path.now, round_start, window, bw, s.acked_sacked, st.cwnd, mss);
    }

    /// Linux `bbr_extra_acked`: the windowed maximum of the aggregation excess, bytes.
    pub fn extra_acked(&self) -> u64 {
        self.aggregation.extra_acked()
    }

    /// Linux `bbr_ack_aggregation_cwnd` (v2alpha): once the pipe is full, or in Startup with
    /// `extra_acked_in_startup`.
    pub fn ack_aggregation_cwnd(&self, mss: u64) -> u64 {
        if !self.extra_acked_on() || !(self.full_bw_reached || self.cfg.extra_acked_in_startup) {
            return 0;
        }
        let cfg = &self.cfg;
        self.aggregation.cwnd(cfg.extra_acked_gain, self.bw(), cfg.extra_acked_max, mss)
    }

    /// Linux `bbr_update_gains` with v2alpha's ProbeBW gains per phase.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.cfg.high_gain, self.cfg.high_gain),
            Mode::Drain => (self.cfg.drain_gain, self.cfg.high_gain),
            Mode::ProbeBw => (self.phase.pacing_gain(), self.cfg.cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }
}

impl CongestionControl for Bbr2 {
    fn name(&self) -> &'static str {
        "bbr2"
    }

    fn init(&mut self, st: &mut CcState, path: &PathInfo) {
        *self = Self::new(self.cfg.clone());
        self.min_rtt = path.min_rtt;
        self.probe_rtt_min = path.min_rtt;
        (self.min_rtt_stamp, self.probe_rtt_min_stamp) = (path.now, path.now);
        self.init_cwnd = st.cwnd;
        self.prior_cwnd = st.cwnd;
        self.last_delivered = path.delivered;
        self.loss_round_delivered = path.delivered + 1;
        self.ecn = EcnState::new(path.delivered);
        self.aggregation = AckAggregation::new(path.now);
        st.ssthresh = u64::MAX;
        self.init_pacing_rate(st, path);
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        let acked = path.delivered.saturating_sub(self.last_delivered);
        self.last_delivered = path.delivered;
        self.rto_marking = false;
        if path.state != self.prev_ca_state {
            self.on_state_change(st, path.state);
        }
        if self.cfg.ecn {
            self.ecn.on_ack(path.delivered, acked, ack, path.mss as u64);
        }
        let s = self.sample(ack, acked);
        self.main(st, path, ack, &s);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        match ev.cause {
            // Linux calls `ssthresh` for CWR too (`tcp_init_cwnd_reduction`); the ECN
            // response itself reads each ACK's ece / ce_delta, the stack only sends CWR.
            Cause::Ecn | Cause::Loss => self.enter_recovery(st),
            Cause::Rto { backoffs } => {
                if backoffs == 0 {
                    self.enter_recovery(st);
                }
                self.enter_loss_state();
                self.rto_marking = true;
                st.cwnd = path.inflight + path.mss as u64;
            }
        }
        Reaction::SelfManaged
    }

    fn on_packet_lost(&mut self, st: &mut CcState, path: &PathInfo, lost: &LossInfo) {
        self.skb_marked_lost(st, path, lost);
        if self.rto_marking {
            st.cwnd = st.cwnd.min(path.inflight + path.mss as u64);
        }
    }

    /// Linux `bbr_cwnd_event(CA_EVENT_TX_START)` while app-limited; here after idle > RTO.
    fn on_idle_restart(&mut self, st: &mut CcState, path: &PathInfo, _idle: Nanos) {
        self.idle_restart = true;
        if self.extra_acked_on() {
            self.aggregation.restart_epoch(path.now);
        }
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(st, path, self.bw(), 1.0),
            Mode::ProbeRtt => self.check_probe_rtt_done(st, path),
            _ => {}
        }
    }

    /// Linux `bbr2_undo_cwnd`: restore the bounds saved at the episode start and the window.
    fn undo_cwnd(&mut self, _st: &CcState, _prior_cwnd: u64) -> u64 {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.loss_in_round = false;
        let (bw_lo, inflight_lo, inflight_hi) = self.undo;
        self.bw_lo = self.bw_lo.max(bw_lo);
        self.inflight_lo = self.inflight_lo.max(inflight_lo);
        self.inflight_hi = self.inflight_hi.max(inflight_hi);
        self.prior_cwnd
    }
}
