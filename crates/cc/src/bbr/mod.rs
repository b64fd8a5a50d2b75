//! BBRv1 (Cardwell et al., ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00),
//! following Linux `net/ipv4/tcp_bbr.c`; notes `algorithms.md` §10.1. Constants keep Linux's
//! names ([`mode`]); windows are in bytes, rates in bytes per second.
//!
//! * Model ([`model`]): `BtlBw` = max delivery rate over the last 10 rounds (app-limited
//!   samples only when they exceed it), `RTprop` = min RTT over 10 s, rounds counted from
//!   `prior_delivered` as `bbr_update_bw` does.
//! * `pacing_rate = pacing_gain · BtlBw · (1 − 1 %)` (eq. 10.1, `bbr_pacing_margin_percent`);
//!   in Startup the rate only rises (`bbr_set_pacing_rate`). Before the first sample:
//!   `high_gain · cwnd / SRTT` (1 ms without SRTT). The stack paces wire bytes at this rate,
//!   as Linux paces `skb->len`.
//! * `cwnd target = cwnd_gain · BDP + 3 · send_quantum`, rounded up to an even number of
//!   segments, `+ 2` segments in the 1.25 phase (eq. 10.2, `bbr_quantization_budget`); cwnd
//!   grows by what each ACK delivers up to the target, never below 4 segments.
//! * Modes: Startup (gain 2.885) until three rounds grow `BtlBw` by < 25 %, Drain (1/2.885)
//!   until in flight ≤ BDP, ProbeBW's 8-phase cycle, ProbeRTT (cwnd 4 segments for
//!   `max(200 ms, 1 round)`) when `RTprop` was not lowered for 10 s.
//! * Loss: no back-off ([`Reaction::SelfManaged`]): cwnd drops by the bytes newly lost, packet
//!   conservation (`cwnd ≥ inflight + delivered`) for the first round of Recovery, the window
//!   before the episode restored when it ends (`bbr_set_cwnd_to_recover_or_restore`). RTO:
//!   `cwnd = inflight + 1 segment` after the timeout marked its losses (`tcp_enter_loss`).
//!   ECN is ignored.
//! * ACK aggregation ([`aggregation`], param `extra_acked`, on by default): once the pipe is
//!   full the cwnd target is `cwnd_gain · BDP + min(extra_acked, bw · 100 ms)` before the
//!   quantization budget, `extra_acked` being the largest excess of delivered data over
//!   `bw · time` in an aggregation epoch over the last 5–10 rounds, capped by cwnd
//!   (`bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`; Linux 5.1, commit
//!   78dc70ebaa38, after the BBRv1 paper). `extra_acked = false` gives the earlier kernels'
//!   `cwnd_gain · BDP` alone. The epoch also restarts when sending resumes after idle.
//! * Omitted, as documented differences from Linux: long-term bandwidth sampling (`lt_bw`,
//!   policer detection), marking ProbeRTT and idle restarts app-limited (the stack owns the
//!   app-limited mark), and `is_ack_delayed`.
//! * Linux starts ProbeBW at a random phase (never the 0.75 one). The controller has no RNG:
//!   `cycle_start = "clock"` (default) takes Linux's draw `r` as the millisecond of the
//!   connection clock modulo 7 at the moment ProbeBW starts, which separates flows that reach
//!   ProbeBW at different times; a digit pins the phase.

pub mod aggregation;
pub mod mode;
pub mod model;
#[cfg(test)]
mod tests;

use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, LossInfo, Nanos, ParamError,
    Params, PathInfo, Reaction, NANOS_PER_SEC,
};
use aggregation::{AckAggregation, EXTRA_ACKED_MAX, EXTRA_ACKED_WIN_RTTS};
use mode::{gains, send_quantum, start_phase, Mode, CWND_MIN_TARGET, CYCLE_LEN, FULL_BW_CNT, FULL_BW_THRESH};
use model::{MaxBwFilter, MinRtt, Rounds};

const MS: Nanos = 1_000_000;

/// Where ProbeBW's gain cycle starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleStart {
    /// Linux's random draw replaced by the connection clock (ms modulo 7). Value `"clock"`.
    Clock,
    /// A fixed phase index (0, 2..7; 1 is the 0.75 phase Linux never starts in).
    Phase(usize),
}

/// BBRv1 parameters; scenario keys are the field names. Defaults are Linux's.
#[derive(Clone, Debug, PartialEq)]
pub struct BbrConfig {
    /// Startup pacing and cwnd gain, 2/ln 2 (`bbr_high_gain`); Drain uses its inverse.
    pub high_gain: f64,
    /// ProbeBW cwnd gain (`bbr_cwnd_gain` = 2): the 2·BDP in-flight cap.
    pub cwnd_gain: f64,
    /// Rounds the max-bandwidth filter spans (`bbr_bw_rtts` = 10).
    pub bw_rounds: u64,
    /// Min-RTT filter window (`bbr_min_rtt_win_sec` = 10 s).
    pub min_rtt_window: Nanos,
    /// Time ProbeRTT holds 4 segments (`bbr_probe_rtt_mode_ms` = 200 ms); 0 disables ProbeRTT.
    pub probe_rtt_time: Nanos,
    /// Pacing margin below the estimate (`bbr_pacing_margin_percent` = 1 %).
    pub pacing_margin: f64,
    /// ProbeBW start phase, see [`CycleStart`].
    pub cycle_start: CycleStart,
    /// Add the ACK-aggregation allowance to the cwnd target (Linux ≥ 5.1, `tcp_bbr.c`
    /// `bbr_ack_aggregation_cwnd` with `bbr_extra_acked_gain` = 1); false: `cwnd_gain · BDP`
    /// alone, as before it. See [`aggregation`].
    pub extra_acked: bool,
}

impl Default for BbrConfig {
    fn default() -> Self {
        Self {
            high_gain: mode::HIGH_GAIN,
            cwnd_gain: mode::CWND_GAIN,
            bw_rounds: 10,
            min_rtt_window: 10 * NANOS_PER_SEC,
            probe_rtt_time: 200 * MS,
            pacing_margin: mode::PACING_MARGIN,
            cycle_start: CycleStart::Clock,
            extra_acked: true,
        }
    }
}

impl BbrConfig {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let phases = ["clock", "0", "2", "3", "4", "5", "6", "7"];
        let cycle_start = match p.choice("cycle_start", "clock", &phases)?.as_str() {
            "clock" => CycleStart::Clock,
            digit => CycleStart::Phase(digit.parse().unwrap_or(0)),
        };
        Ok(Self {
            high_gain: p.f64_in("high_gain", d.high_gain, 1.0, 10.0)?,
            cwnd_gain: p.f64_in("cwnd_gain", d.cwnd_gain, 1.0, 10.0)?,
            bw_rounds: p.u64_in("bw_rounds", d.bw_rounds, 1, model::MAX_BW_ROUNDS as u64)?,
            min_rtt_window: p.duration("min_rtt_window", d.min_rtt_window, 10 * MS, 600 * NANOS_PER_SEC)?,
            probe_rtt_time: p.duration("probe_rtt_time", d.probe_rtt_time, 0, 10 * NANOS_PER_SEC)?,
            pacing_margin: p.f64_in("pacing_margin", d.pacing_margin, 0.0, 0.5)?,
            cycle_start,
            extra_acked: p.bool("extra_acked", d.extra_acked)?,
        })
    }
}

fn in_recovery(s: CaState) -> bool {
    matches!(s, CaState::Recovery | CaState::Loss)
}

pub struct Bbr {
    cfg: BbrConfig,
    mode: Mode,
    rounds: Rounds,
    round_start: bool,
    max_bw: MaxBwFilter,
    min_rtt: MinRtt,
    pacing_gain: f64,
    cwnd_gain: f64,
    full_bw: f64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp: Nanos,
    probe_rtt_done: Option<Nanos>,
    probe_rtt_round_done: bool,
    prior_cwnd: u64,
    prev_ca_state: CaState,
    packet_conservation: bool,
    has_init_pacing: bool,
    /// `path.delivered` at the previous ACK: the difference is Linux's `rs->acked_sacked`.
    last_delivered: u64,
    /// An RTO is marking its losses: cwnd follows `inflight + 1 segment` (`tcp_enter_loss`).
    rto_marking: bool,
    /// The ACK-aggregation estimator (used when `cfg.extra_acked`).
    aggregation: AckAggregation,
}

impl Bbr {
    pub fn new(cfg: BbrConfig) -> Self {
        Self {
            mode: Mode::Startup,
            rounds: Rounds::default(),
            round_start: false,
            max_bw: MaxBwFilter::new(cfg.bw_rounds),
            min_rtt: MinRtt::new(cfg.min_rtt_window),
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            full_bw: 0.0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: 0,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            has_init_pacing: false,
            last_delivered: 0,
            rto_marking: false,
            aggregation: AckAggregation::default(),
            cfg,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// `BtlBw` in bytes per second.
    pub fn bw(&self) -> f64 {
        self.max_bw.max(self.rounds.count)
    }

    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt.value
    }

    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    /// Linux `bbr_extra_acked`: the windowed maximum of the aggregation excess, bytes.
    pub fn extra_acked(&self) -> u64 {
        self.aggregation.extra_acked()
    }

    /// Linux `bbr_ack_aggregation_cwnd`: what ACK aggregation adds to the cwnd target now.
    pub fn ack_aggregation_cwnd(&self, mss: u32) -> u64 {
        if !self.cfg.extra_acked || !self.full_bw_reached {
            return 0;
        }
        self.aggregation.cwnd(1.0, self.bw(), EXTRA_ACKED_MAX, mss as u64)
    }

    /// Linux `bbr_bdp`: `ceil(bw · min_rtt · gain)` in whole segments; the initial window
    /// while there is no RTT sample.
    fn bdp(&self, bw: f64, gain: f64, path: &PathInfo) -> u64 {
        let Some(rtt) = self.min_rtt.value else {
            return path.initial_window;
        };
        let bytes = bw * rtt as f64 / NANOS_PER_SEC as f64 * gain;
        (bytes / path.mss as f64).ceil() as u64 * path.mss as u64
    }

    /// Linux `bbr_quantization_budget`: room for three send quanta in flight, an even number
    /// of segments, and two more while probing up.
    fn quantization_budget(&self, cwnd: u64, st: &CcState, path: &PathInfo) -> u64 {
        let mss = path.mss as u64;
        let cwnd = cwnd + 3 * send_quantum(st.pacing_rate.unwrap_or(0.0), mss);
        let even = cwnd.div_ceil(2 * mss) * 2 * mss;
        even + if self.mode == Mode::ProbeBw && self.cycle_idx == 0 { 2 * mss } else { 0 }
    }

    /// Linux `bbr_inflight`.
    fn inflight_target(&self, bw: f64, gain: f64, st: &CcState, path: &PathInfo) -> u64 {
        self.quantization_budget(self.bdp(bw, gain, path), st, path)
    }

    // ----- model (bbr_update_model) --------------------------------------------------------

    fn update_model(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample, acked: u64) {
        self.update_bw(path, ack);
        self.update_ack_aggregation(st, path, ack, acked);
        self.update_cycle_phase(st, path, ack);
        self.check_full_bw_reached(ack);
        self.check_drain(st, path);
        self.update_min_rtt(st, path, ack);
        (self.pacing_gain, self.cwnd_gain) =
            gains(self.mode, self.cycle_idx, self.cfg.high_gain, self.cfg.cwnd_gain);
    }

    /// Linux `bbr_update_bw`: round counting and the max filter.
    fn update_bw(&mut self, path: &PathInfo, ack: &AckSample) {
        self.round_start = false;
        let Some(rs) = ack.rate.filter(|rs| rs.interval > 0) else {
            return;
        };
        if self.rounds.on_sample(rs.prior_delivered, path.delivered) {
            self.round_start = true;
            self.packet_conservation = false;
        }
        if !rs.is_app_limited || rs.delivery_rate >= self.bw() {
            self.max_bw.update(self.rounds.count, rs.delivery_rate);
        }
    }

    /// Linux `bbr_update_ack_aggregation`: only for ACKs that delivered data with a valid rate
    /// sample, after the bandwidth filter took this ACK's sample.
    fn update_ack_aggregation(&mut self, st: &CcState, path: &PathInfo, ack: &AckSample, acked: u64) {
        let valid = ack.rate.is_some_and(|rs| rs.interval > 0);
        if !self.cfg.extra_acked || acked == 0 || !valid {
            return;
        }
        let (round_start, bw) = (self.round_start, self.bw());
        let mss = path.mss as u64;
        self.aggregation.update(path.now, round_start, EXTRA_ACKED_WIN_RTTS, bw, acked, st.cwnd, mss);
    }

    /// Linux `bbr_update_cycle_phase` / `bbr_is_next_cycle_phase`: each phase lasts at least
    /// `RTprop`; the 1.25 phase also until in flight reaches 1.25·BDP (or a loss), the 0.75
    /// phase ends early once in flight is down to one BDP.
    fn update_cycle_phase(&mut self, st: &CcState, path: &PathInfo, ack: &AckSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = path.now - self.cycle_stamp > self.min_rtt.value.unwrap_or(Nanos::MAX);
        let gain = mode::PACING_GAIN[self.cycle_idx];
        let inflight = ack.prior_inflight;
        let next = if gain == 1.0 {
            full_length
        } else if gain > 1.0 {
            full_length && (ack.newly_lost > 0 || inflight >= self.inflight_target(self.bw(), gain, st, path))
        } else {
            full_length || inflight <= self.inflight_target(self.bw(), 1.0, st, path)
        };
        if next {
            self.advance_cycle(path.now);
        }
    }

    fn advance_cycle(&mut self, now: Nanos) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = now;
    }

    /// Linux `bbr_check_full_bw_reached`: once per non-app-limited round.
    fn check_full_bw_reached(&mut self, ack: &AckSample) {
        let app_limited = ack.rate.is_some_and(|rs| rs.is_app_limited);
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        let bw = self.bw();
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// Linux `bbr_check_drain`.
    fn check_drain(&mut self, st: &mut CcState, path: &PathInfo) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight_target(self.bw(), 1.0, st, path);
        }
        if self.mode == Mode::Drain && path.inflight <= self.inflight_target(self.bw(), 1.0, st, path) {
            self.reset_probe_bw_mode(path.now);
        }
    }

    fn reset_probe_bw_mode(&mut self, now: Nanos) {
        self.mode = Mode::ProbeBw;
        let start = match self.cfg.cycle_start {
            CycleStart::Clock => start_phase(now / MS),
            CycleStart::Phase(i) => i % CYCLE_LEN,
        };
        // Linux sets the phase before it and advances, which also stamps the phase start.
        self.cycle_idx = (start + CYCLE_LEN - 1) % CYCLE_LEN;
        self.advance_cycle(now);
    }

    fn reset_mode(&mut self, now: Nanos) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(now);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Linux `bbr_update_min_rtt`: the min-RTT filter, ProbeRTT entry and exit.
    fn update_min_rtt(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        let expired = self.min_rtt.update(path.now, ack.rtt);
        if self.cfg.probe_rtt_time > 0 && expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st);
            self.probe_rtt_done = None;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        let floor = CWND_MIN_TARGET * path.mss as u64;
        match self.probe_rtt_done {
            None if path.inflight <= floor => {
                self.probe_rtt_done = Some(path.now + self.cfg.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.rounds.restart(path.delivered);
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && path.now > done {
                    self.min_rtt.stamp = path.now;
                    st.cwnd = st.cwnd.max(self.prior_cwnd);
                    self.reset_mode(path.now);
                }
            }
        }
    }

    // ----- outputs ---------------------------------------------------------------------------

    /// Linux `bbr_init_pacing_rate_from_rtt`.
    fn init_pacing_rate(&mut self, st: &mut CcState, path: &PathInfo) {
        let rtt = match path.srtt {
            Some(srtt) => {
                self.has_init_pacing = true;
                srtt.max(1_000)
            }
            None => MS,
        };
        let bw = st.cwnd as f64 * NANOS_PER_SEC as f64 / rtt as f64;
        st.pacing_rate = Some(self.cfg.high_gain * bw * (1.0 - self.cfg.pacing_margin));
    }

    /// Linux `bbr_set_pacing_rate`.
    fn set_pacing_rate(&mut self, st: &mut CcState, path: &PathInfo) {
        let rate = self.pacing_gain * self.bw() * (1.0 - self.cfg.pacing_margin);
        if !self.has_init_pacing && path.srtt.is_some() {
            self.init_pacing_rate(st, path);
        }
        if self.full_bw_reached || rate > st.pacing_rate.unwrap_or(0.0) {
            st.pacing_rate = Some(rate);
        }
    }

    /// Linux `bbr_save_cwnd`: the window to restore after recovery or ProbeRTT.
    fn save_cwnd(&mut self, st: &CcState) {
        if !in_recovery(self.prev_ca_state) && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = st.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(st.cwnd);
        }
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: `Some(cwnd)` while packet conservation
    /// decides the window, otherwise the starting point for the model's window in `Err`.
    fn recover_or_restore(
        &mut self,
        st: &CcState,
        path: &PathInfo,
        ack: &AckSample,
        acked: u64,
    ) -> Result<u64, u64> {
        let (state, prev) = (path.state, self.prev_ca_state);
        let mss = path.mss as u64;
        let mut cwnd = st.cwnd;
        if ack.newly_lost > 0 {
            cwnd = cwnd.saturating_sub(ack.newly_lost).max(mss);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // Entering recovery: send one segment per segment delivered for a round.
            self.packet_conservation = true;
            self.rounds.restart(path.delivered);
            cwnd = path.inflight + acked;
        } else if in_recovery(prev) && !in_recovery(state) {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return Ok(cwnd.max(path.inflight + acked));
        }
        Err(cwnd)
    }

    /// Linux `bbr_set_cwnd`.
    fn set_cwnd(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample, acked: u64) {
        let mss = path.mss as u64;
        if acked > 0 {
            st.cwnd = match self.recover_or_restore(st, path, ack, acked) {
                Ok(conserved) => conserved,
                Err(cwnd) => self.model_cwnd(cwnd, st, path, acked).max(CWND_MIN_TARGET * mss),
            };
        }
        if self.mode == Mode::ProbeRtt {
            st.cwnd = st.cwnd.min(CWND_MIN_TARGET * mss);
        }
    }

    /// Grow towards `cwnd_gain · BDP` plus the ACK-aggregation allowance (plus quantization)
    /// by what was delivered; before the pipe is full, never shrink (and always grow during
    /// the first initial window).
    fn model_cwnd(&self, cwnd: u64, st: &CcState, path: &PathInfo, acked: u64) -> u64 {
        let bdp = self.bdp(self.bw(), self.cwnd_gain, path);
        let target = self.quantization_budget(bdp + self.ack_aggregation_cwnd(path.mss), st, path);
        if self.full_bw_reached {
            (cwnd + acked).min(target)
        } else if cwnd < target || path.delivered < path.initial_window {
            cwnd + acked
        } else {
            cwnd
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn init(&mut self, st: &mut CcState, path: &PathInfo) {
        *self = Self::new(self.cfg.clone());
        self.min_rtt.value = path.min_rtt;
        self.min_rtt.stamp = path.now;
        self.last_delivered = path.delivered;
        self.aggregation = AckAggregation::new(path.now);
        st.ssthresh = u64::MAX;
        self.init_pacing_rate(st, path);
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        let acked = path.delivered.saturating_sub(self.last_delivered);
        self.last_delivered = path.delivered;
        self.rto_marking = false;
        self.update_model(st, path, ack, acked);
        self.set_pacing_rate(st, path);
        self.set_cwnd(st, path, ack, acked);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        match ev.cause {
            Cause::Ecn => return Reaction::Ignore,
            Cause::Loss => self.save_cwnd(st),
            Cause::Rto { backoffs } => {
                if backoffs == 0 {
                    self.save_cwnd(st);
                }
                // Linux `bbr_set_state(TCP_CA_Loss)`: restart full-bandwidth detection.
                self.prev_ca_state = CaState::Loss;
                self.full_bw = 0.0;
                self.full_bw_cnt = 0;
                self.rto_marking = true;
                st.cwnd = path.inflight + path.mss as u64;
            }
        }
        Reaction::SelfManaged
    }

    fn on_packet_lost(&mut self, st: &mut CcState, path: &PathInfo, _lost: &LossInfo) {
        if self.rto_marking {
            st.cwnd = st.cwnd.min(path.inflight + path.mss as u64);
        }
    }

    /// Linux `bbr_cwnd_event(CA_EVENT_TX_START)`: a new aggregation epoch. (Its pacing and
    /// ProbeRTT parts are the app-limited handling omitted above.)
    fn on_idle_restart(&mut self, _st: &mut CcState, path: &PathInfo, _idle: Nanos) {
        if self.cfg.extra_acked {
            self.aggregation.restart_epoch(path.now);
        }
    }

    /// Linux `bbr_undo_cwnd`: keep the window, restart full-bandwidth detection.
    fn undo_cwnd(&mut self, st: &CcState, _prior_cwnd: u64) -> u64 {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        st.cwnd
    }
}
