//! BBRv3 (header to come)

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
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, EcnUse, LossInfo, Nanos,
    PathInfo, Reaction,
};
pub use bounds::EcnState;
pub use config::{Bbr3Config, STARTUP_PACING_GAIN};
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

/// One ACK as `bbr_main` sees it (Linux `struct rate_sample` plus `bbr_context`).
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    /// The rate sample has a positive interval (`rs->interval_us > 0`).
    has_interval: bool,
    /// ... and this ACK delivered something (`bbr_update_latest_delivery_signals`' test).
    valid: bool,
    /// `ctx->sample_bw`: the delivery rate, 0 without an interval.
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

pub struct Bbr3 {
    cfg: Bbr3Config,
    mode: Mode,
    phase: Phase,
    ack_phase: AckPhase,
    rounds: Rounds,
    round_start: bool,
    // Path model: `bw_hi[2]` is the max filter of the last one or two ProbeBW cycles.
    bw_hi: [f64; 2],
    min_rtt: Option<Nanos>,
    min_rtt_stamp: Nanos,
    probe_rtt_min: Option<Nanos>,
    probe_rtt_min_stamp: Nanos,
    // Bounds (bytes, bytes/s; UNSET / infinity when absent).
    bw_lo: f64,
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
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    loss_events_in_round: u64,
    ecn: EcnState,
    // Full-pipe detection (Startup and PROBE_UP).
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_now: bool,
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

impl Bbr3 {
    pub fn new(cfg: Bbr3Config) -> Self {
        Self {
            mode: Mode::Startup,
            phase: Phase::Up,
            ack_phase: AckPhase::Init,
            rounds: Rounds::default(),
            round_start: false,
            bw_hi: [0.0; 2],
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt_min: None,
            probe_rtt_min_stamp: 0,
            bw_lo: f64::INFINITY,
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
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            pacing_gain: cfg.startup_pacing_gain,
            cwnd_gain: cfg.startup_cwnd_gain,
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

    pub fn config(&self) -> &Bbr3Config {
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
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// Linux `bbr_bw`: the bandwidth the controls use, `min(max_bw, bw_lo)` (v3 has no
    /// separate `bw_hi` bound: its `bw_hi[]` is the max filter).
    pub fn bw(&self) -> f64 {
        self.max_bw().min(self.bw_lo)
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

    /// Linux `bbr_set_state` leaving `TCP_CA_Loss` (`bbr_exit_loss_recovery`).
    fn on_state_change(&mut self, st: &mut CcState, state: CaState) {
        if self.prev_ca_state == CaState::Loss && state != CaState::Loss {
            st.cwnd = st.cwnd.max(self.prior_cwnd);
        }
    }

    /// `bbr_main` after the sample is built (the fast path is omitted).
    fn main(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample, s: &Sample) {
        let mss = path.mss as u64;
        self.round_start = s.has_interval && self.rounds.on_sample(s.prior_delivered, path.delivered);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(255);
            self.update_ecn_alpha(path, st);
        }
        self.ecn_in_round |= self.ecn.eligible && ack.ece;
        self.update_latest_delivery_signals(path, s);
        // bbr_update_model
        self.update_congestion_signals(st, s);
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
        self.advance_latest_delivery_signals(s);
        self.prev_ca_state = path.state;
        self.loss_in_cycle |= s.lost > 0;
        self.ecn_in_cycle |= s.delivered_ce > 0;
    }

    fn extra_acked_on(&self) -> bool {
        self.cfg.extra_acked && self.cfg.extra_acked_gain > 0.0
    }

    /// Linux `bbr_update_ack_aggregation` (v3): slots of one round until the pipe is full,
    /// `extra_acked_rounds` after.
    fn update_ack_aggregation(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        if !self.extra_acked_on() || !s.valid {
            return;
        }
        let window = if self.full_bw_reached { self.cfg.extra_acked_rounds } else { 1 };
        let (round_start, bw, mss) = (self.round_start, self.bw(), path.mss as u64);
        self.aggregation.update(path.now, round_start, window, bw, s.acked_sacked, st.cwnd, mss);
    }

    /// Linux `bbr_extra_acked`: the windowed maximum of the aggregation excess, bytes.
    pub fn extra_acked(&self) -> u64 {
        self.aggregation.extra_acked()
    }

    /// Linux `bbr_ack_aggregation_cwnd` (v3): applied in every mode, Startup included.
    pub fn ack_aggregation_cwnd(&self, mss: u64) -> u64 {
        if !self.extra_acked_on() {
            return 0;
        }
        let cfg = &self.cfg;
        self.aggregation.cwnd(cfg.extra_acked_gain, self.bw(), cfg.extra_acked_max, mss)
    }

    /// Linux `bbr_update_gains` (v3): Startup 2.77/2, Drain 0.35/2, ProbeBW per phase with
    /// cwnd gain 2.25 in UP, ProbeRTT 1/1.
    fn update_gains(&mut self) {
        let cfg = &self.cfg;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (cfg.startup_pacing_gain, cfg.startup_cwnd_gain),
            Mode::Drain => (cfg.drain_gain, cfg.startup_cwnd_gain),
            Mode::ProbeBw => {
                let up = if self.phase == Phase::Up { cfg.bw_probe_cwnd_gain } else { 0.0 };
                (self.phase_pacing_gain(self.phase), cfg.cwnd_gain + up)
            }
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_pacing_gain[]` with the UP and DOWN gains from the configuration.
    pub fn phase_pacing_gain(&self, phase: Phase) -> f64 {
        match phase {
            Phase::Up => self.cfg.probe_up_gain,
            Phase::Down => self.cfg.probe_down_gain,
            Phase::Cruise | Phase::Refill => 1.0,
        }
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
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
        self.ecn.on_ack(path.delivered, acked, ack, path.mss as u64);
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

    /// Linux `bbr_undo_cwnd` (v3): reset the full-bandwidth detector, forget this round's
    /// loss, restore the bounds saved at the episode start and the window.
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
    /// or, with classic feedback, from ECE (see the module header).
    fn ecn_use(&self) -> EcnUse {
        EcnUse::Optional
    }
}
