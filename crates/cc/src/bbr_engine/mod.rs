//! The one state machine behind [`crate::bbr2`] (v2alpha `tcp_bbr2.c`) and [`crate::bbr3`]
//! (v3 `tcp_bbr.c`): v3 is v2alpha with a handful of changes, so both run this engine and
//! differ only where the code says `self.v3()` (each such place names what v2alpha and v3 do)
//! and in the [`Tuning`] their parameters make. What each generation does, its constants and
//! sources are in the headers of `bbr2` and `bbr3`; this module holds no behaviour of its own.
//!
//! * [`Engine`]: the controller, generic over the parameter set ([`Generation`]):
//!   `bbr2::Bbr2 = Engine<Bbr2Config>`, `bbr3::Bbr3 = Engine<Bbr3Config>`.
//! * `control`: the outputs (send quantum, BDP, targets, pacing, cwnd with the bounds);
//!   `modes`: Startup, Drain, ProbeRTT, full-pipe detection and the min-RTT filter; `probe`:
//!   the ProbeBW cycle and the upper bounds; `bounds`: the lower bounds, the headroom and the
//!   congestion signals (loss rounds, ECN `alpha`).
//! * Windows are in bytes, rates in bytes per second; functions keep the C names (v2alpha's
//!   `bbr2_` prefix dropped, as v3 dropped it).

mod bounds;
mod control;
mod modes;
mod probe;
#[cfg(test)]
pub(crate) mod testkit;

use crate::bbr::aggregation::AckAggregation;
use crate::bbr::model::Rounds;
use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, EcnUse, LossInfo, Nanos,
    ParamError, PathInfo, Reaction,
};
pub use bounds::EcnState;
pub use probe::{AckPhase, Phase};

pub(crate) const MS: Nanos = 1_000_000;
/// "No bound yet" (Linux `~0U`).
const UNSET: u64 = u64::MAX;

/// Which code the engine follows where v2alpha and v3 differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// `google/bbr` v2alpha `tcp_bbr2.c`.
    V2,
    /// `google/bbr` v3 `tcp_bbr.c`.
    V3,
}

/// A BBR generation's parameter set: its scenario name, which code it follows, and the
/// engine's [`Tuning`] its values give.
pub trait Generation: Clone + Send + 'static {
    /// The scenario name (`cca`).
    const NAME: &'static str;
    const VERSION: Version;
    fn tuning(&self) -> Tuning;
}

/// What the engine reads of a generation's parameters, one field per constant of the C code.
/// A constant one generation does not have takes the value that makes the shared code do what
/// that generation's code does (said at each field).
#[derive(Clone, Debug, PartialEq)]
pub struct Tuning {
    /// Startup pacing gain; Startup's cwnd gain is also Drain's.
    pub startup_pacing_gain: f64,
    pub startup_cwnd_gain: f64,
    pub drain_gain: f64,
    /// ProbeBW cwnd gain, plus `bw_probe_cwnd_gain` in UP (v2alpha: 0).
    pub cwnd_gain: f64,
    pub bw_probe_cwnd_gain: f64,
    /// `bbr_pacing_gain[]` of UP and DOWN (CRUISE and REFILL pace at 1).
    pub probe_up_gain: f64,
    pub probe_down_gain: f64,
    pub beta: f64,
    pub loss_thresh: f64,
    pub inflight_headroom: f64,
    /// v2alpha's end of UP: a min RTT at this multiple of the BDP (v3 ends UP on a plateau
    /// and does not read it).
    pub bw_probe_pif_gain: f64,
    /// Rounds per BDP packet between probes; 0 leaves `bw_probe_max_rounds` alone (v3: 1,
    /// its `min(63, target in packets)`).
    pub bw_probe_reno_gain: f64,
    pub bw_probe_max_rounds: u64,
    pub bw_probe_rand_rounds: u64,
    pub bw_probe_base: Nanos,
    pub bw_probe_rand: Nanos,
    pub full_loss_cnt: u64,
    /// Startup rounds with a high CE ratio that end Startup (v2alpha: the constant 2).
    pub full_ecn_cnt: u64,
    pub min_rtt_window: Nanos,
    pub probe_rtt_window: Nanos,
    pub probe_rtt_time: Nanos,
    pub probe_rtt_cwnd_gain: f64,
    pub pacing_margin: f64,
    pub ecn: bool,
    pub ecn_thresh: f64,
    pub ecn_factor: f64,
    pub ecn_alpha_gain: f64,
    pub ecn_max_rtt: Nanos,
    /// The ECN re-probe (v3); 0 turns it off (v2alpha, where it is 0 upstream).
    pub ecn_reprobe_gain: f64,
    pub extra_acked: bool,
    pub extra_acked_gain: f64,
    pub extra_acked_rounds: u64,
    pub extra_acked_max: Nanos,
    /// The allowance in Startup too, with 1-round slots there (v3: always).
    pub extra_acked_in_startup: bool,
}

/// Linux clamps `bbr_probe_rtt_win_ms` to the min-RTT window; both configurations say so
/// instead.
pub(crate) fn check_probe_rtt_window(
    probe_rtt_window: Nanos,
    min_rtt_window: Nanos,
) -> Result<(), ParamError> {
    if probe_rtt_window > min_rtt_window {
        return Err(ParamError {
            key: "probe_rtt_window".into(),
            message: "must not exceed min_rtt_window".into(),
        });
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// One ACK as `bbr_main` sees it (Linux `struct rate_sample` plus `bbr_context`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sample {
    /// The rate sample has a positive interval (`rs->interval_us > 0`).
    pub(crate) has_interval: bool,
    /// ... and this ACK delivered something.
    pub(crate) valid: bool,
    /// `ctx->sample_bw`: the delivery rate, 0 without an interval.
    pub(crate) bw: f64,
    pub(crate) delivered: u64,
    pub(crate) prior_delivered: u64,
    pub(crate) tx_in_flight: u64,
    /// Bytes lost over the sample's interval (`rs->lost`).
    pub(crate) lost: u64,
    /// Bytes newly marked lost on this ACK (`rs->losses`, counted as an event).
    pub(crate) losses: u64,
    /// CE-marked bytes over the interval (`rs->delivered_ce`).
    pub(crate) delivered_ce: u64,
    pub(crate) is_app_limited: bool,
    /// Bytes newly delivered by this ACK (`rs->acked_sacked`).
    pub(crate) acked_sacked: u64,
    pub(crate) prior_inflight: u64,
    pub(crate) rtt: Option<Nanos>,
}

/// BBRv2 or BBRv3, by the parameter set `C`. The `pub(crate)` fields are read by the tests.
pub struct Engine<C: Generation> {
    cfg: C,
    t: Tuning,
    mode: Mode,
    phase: Phase,
    ack_phase: AckPhase,
    rounds: Rounds,
    round_start: bool,
    // Path model: the max filter of the last one or two ProbeBW cycles (v3 calls it
    // `bw_hi[2]`).
    max_bw: [f64; 2],
    min_rtt: Option<Nanos>,
    min_rtt_stamp: Nanos,
    probe_rtt_min: Option<Nanos>,
    probe_rtt_min_stamp: Nanos,
    // Bounds (bytes, bytes/s; UNSET / infinity when absent). `bw_hi` is v2alpha's (v3 has
    // none: it stays infinite).
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
    /// Loss and CE marks in this ProbeBW cycle (read by v3's ECN re-probe only).
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_events_in_round: u64,
    pub(crate) ecn: EcnState,
    // Full-pipe detection (Startup; in v3 also PROBE_UP, with `full_bw_now`).
    pub(crate) full_bw: f64,
    pub(crate) full_bw_cnt: u32,
    pub(crate) full_bw_now: bool,
    full_bw_reached: bool,
    // ProbeBW cycle.
    cycle_stamp: Nanos,
    pub(crate) probe_wait: Nanos,
    rounds_since_probe: u64,
    pub(crate) bw_probe_up_rounds: u32,
    /// Packets to deliver per 1-packet rise of `inflight_hi` in UP.
    bw_probe_up_cnt: u64,
    bw_probe_up_acks: u64,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    /// v2alpha: a probe sample was not too high (spares `bw_hi` the ECN cut).
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
    /// The ACK-aggregation estimator (used when `extra_acked`).
    aggregation: AckAggregation,
}

impl<C: Generation> Engine<C> {
    pub fn new(cfg: C) -> Self {
        let t = cfg.tuning();
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
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_events_in_round: 0,
            ecn: EcnState::default(),
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_now: false,
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
            pacing_gain: t.startup_pacing_gain,
            cwnd_gain: t.startup_cwnd_gain,
            has_init_pacing: false,
            init_cwnd: 0,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            idle_restart: false,
            last_delivered: 0,
            rto_marking: false,
            aggregation: AckAggregation::default(),
            cfg,
            t,
        }
    }

    /// Where v2alpha and v3 differ: follow v3.
    fn v3(&self) -> bool {
        C::VERSION == Version::V3
    }

    pub fn config(&self) -> &C {
        &self.cfg
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// `(pacing_gain, cwnd_gain)` as last set by `bbr_update_gains`.
    pub fn gains(&self) -> (f64, f64) {
        (self.pacing_gain, self.cwnd_gain)
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

    /// Whether Startup judged the pipe full (`full_bw_reached`).
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Linux `bbr_max_bw`: the larger of this cycle's and the previous cycle's maximum.
    pub fn max_bw(&self) -> f64 {
        self.max_bw[0].max(self.max_bw[1])
    }

    /// Linux `bbr_bw`: the bandwidth the controls use, bounded by `bw_lo` and (v2alpha)
    /// `bw_hi`; v3 has no `bw_hi` bound, ours stays infinite there.
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
            s.has_interval = true;
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

    /// Linux `bbr_ssthresh`: entering recovery, remember what undo restores.
    fn enter_recovery(&mut self, st: &CcState) {
        self.save_cwnd(st);
        self.undo = (self.bw_lo, self.inflight_lo, self.inflight_hi);
    }

    /// Linux `bbr_set_state` leaving `TCP_CA_Loss`: the pre-RTO window comes back.
    fn on_state_change(&mut self, st: &mut CcState, state: CaState) {
        if self.prev_ca_state == CaState::Loss && state != CaState::Loss {
            st.cwnd = st.cwnd.max(self.prior_cwnd);
        }
    }

    /// `bbr_main` after the sample is built (the fast path is omitted).
    fn main(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample, s: &Sample) {
        let mss = path.mss as u64;
        // A round may start on any sample with an interval (v3) or only on one that
        // delivered something (v2alpha).
        let counts = if self.v3() { s.has_interval } else { s.valid };
        self.round_start = counts && self.rounds.on_sample(s.prior_delivered, path.delivered);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(255);
            self.update_ecn_alpha(path, st);
        }
        // A round with ECE: once ECN-eligible (v3), or whenever `ecn` is on (v2alpha).
        let ecn_on = if self.v3() { self.ecn.eligible } else { self.t.ecn };
        self.ecn_in_round |= ecn_on && ack.ece;
        self.update_latest_delivery_signals(path, s);
        // bbr_update_model
        self.update_congestion_signals(st, s);
        if !self.v3() {
            // v2alpha starts the new loss round's latest signals at once; v3 at the end.
            self.advance_latest_delivery_signals(s);
        }
        self.update_ack_aggregation(st, path, s);
        self.check_loss_too_high_in_startup(st, path, s);
        self.check_full_bw_reached(s);
        self.check_drain(st, path);
        self.update_cycle_phase(st, path, s);
        self.update_min_rtt(st, path, s);
        // control
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(st, path, bw, self.pacing_gain);
        self.set_cwnd(st, path, s.acked_sacked);
        self.bound_cwnd_for_inflight_model(st, mss);
        // out:
        if self.v3() {
            self.advance_latest_delivery_signals(s);
        }
        self.prev_ca_state = path.state;
        self.loss_in_cycle |= s.lost > 0;
        self.ecn_in_cycle |= s.delivered_ce > 0;
    }

    fn extra_acked_on(&self) -> bool {
        self.t.extra_acked && self.t.extra_acked_gain > 0.0
    }

    /// Linux `bbr_update_ack_aggregation`: after the congestion signals took this ACK's
    /// sample; slots of one round in Startup with `extra_acked_in_startup` (v3: always).
    fn update_ack_aggregation(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        if !self.extra_acked_on() || !s.valid {
            return;
        }
        let window = if self.t.extra_acked_in_startup && !self.full_bw_reached {
            1
        } else {
            self.t.extra_acked_rounds
        };
        let (round_start, bw, mss) = (self.round_start, self.bw(), path.mss as u64);
        self.aggregation.update(path.now, round_start, window, bw, s.acked_sacked, st.cwnd, mss);
    }

    /// Linux `bbr_extra_acked`: the windowed maximum of the aggregation excess, bytes.
    pub fn extra_acked(&self) -> u64 {
        self.aggregation.extra_acked()
    }

    /// Linux `bbr_ack_aggregation_cwnd`: once the pipe is full, or in Startup with
    /// `extra_acked_in_startup` (v3: in every mode).
    pub fn ack_aggregation_cwnd(&self, mss: u64) -> u64 {
        if !self.extra_acked_on() || !(self.full_bw_reached || self.t.extra_acked_in_startup) {
            return 0;
        }
        let t = &self.t;
        self.aggregation.cwnd(t.extra_acked_gain, self.bw(), t.extra_acked_max, mss)
    }

    /// Linux `bbr_update_gains`: Startup, Drain (with Startup's cwnd gain), ProbeBW per phase
    /// with `bw_probe_cwnd_gain` added in UP, ProbeRTT 1/1.
    fn update_gains(&mut self) {
        let t = &self.t;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (t.startup_pacing_gain, t.startup_cwnd_gain),
            Mode::Drain => (t.drain_gain, t.startup_cwnd_gain),
            Mode::ProbeBw => {
                let up = if self.phase == Phase::Up { t.bw_probe_cwnd_gain } else { 0.0 };
                (self.phase_pacing_gain(self.phase), t.cwnd_gain + up)
            }
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_pacing_gain[]` with the UP and DOWN gains of the generation.
    pub fn phase_pacing_gain(&self, phase: Phase) -> f64 {
        match phase {
            Phase::Up => self.t.probe_up_gain,
            Phase::Down => self.t.probe_down_gain,
            Phase::Cruise | Phase::Refill => 1.0,
        }
    }
}

impl<C: Generation> CongestionControl for Engine<C> {
    fn name(&self) -> &'static str {
        C::NAME
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
        // v3 counts CE marks always, from AccECN's byte counter first; v2alpha only with
        // `ecn` on, from the packet count or ECE.
        if self.v3() {
            self.ecn.on_ack(path.delivered, acked, ack, path.mss as u64);
        } else if self.t.ecn {
            self.ecn.on_ack_packets(path.delivered, acked, ack, path.mss as u64);
        }
        let s = self.sample(ack, acked);
        self.main(st, path, ack, &s);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        match ev.cause {
            // Linux calls `ssthresh` for CWR too (`tcp_init_cwnd_reduction`); the ECN
            // response itself reads each ACK's marks, the stack only sends CWR.
            Cause::Ecn | Cause::Loss => self.enter_recovery(st),
            Cause::Rto { backoffs } => {
                if backoffs == 0 {
                    self.enter_recovery(st);
                }
                self.enter_loss_state(st);
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

    /// Linux `bbr_undo_cwnd`: reset the full-bandwidth detector, forget this round's loss,
    /// restore the bounds saved at the episode start and the window.
    fn undo_cwnd(&mut self, _st: &CcState, _prior_cwnd: u64) -> u64 {
        self.reset_full_bw();
        self.loss_in_round = false;
        let (bw_lo, inflight_lo, inflight_hi) = self.undo;
        self.bw_lo = self.bw_lo.max(bw_lo);
        self.inflight_lo = self.inflight_lo.max(inflight_lo);
        self.inflight_hi = self.inflight_hi.max(inflight_hi);
        self.prior_cwnd
    }

    /// ECN where the flow turns it on; marks are read from `ce_bytes` / `ce_delta` (AccECN)
    /// or, with classic feedback, from ECE (see the headers of `bbr2` and `bbr3`).
    fn ecn_use(&self) -> EcnUse {
        EcnUse::Optional
    }
}
