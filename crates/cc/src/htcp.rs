//! H-TCP (Shorten & Leith 2004) as Linux `tcp_htcp.c`.
//!
//! Thesis §2.2.2.2 (L985-1009), Eq. 2.48-2.51, with the Linux values the thesis's kernels ran
//! (thesis-background §3.2 and §7 item 9; the seed's "[0.3, 0.5]" reduction range and "minimum
//! clock period" for Δ_L are the text's, Linux's win because the thesis measured Linux):
//!
//! * Increase (Eq. 2.50/2.51), per ACK `cwnd += α / cwnd` with `Δ` the time since the last
//!   congestion episode *ended*: `α = 1` for `Δ <= Δ_L = 1 s`, else
//!   `1 + 10 (Δ - Δ_L) + ((Δ - Δ_L) / 2)²`, in Linux rounded down to an integer `factor`.
//!   RTT scaling (`use_rtt_scaling = 1`): `factor *= minRTT / 100 ms`, the ratio clamped to
//!   `[0.1, 2]` (Linux: `scale = 100 ms / minRTT` in eighths, clamped to `[0.5, 10]`), floored,
//!   at least 1. Then `α = 2 factor (1 - β)` (Reno-fair for the current β). α is recomputed
//!   after every `+1` and at each congestion event, as in Linux.
//! * Decrease (Eq. 2.48/2.49): `ssthresh = max(β cwnd, 2)` with the adaptive backoff
//!   `β = minRTT / maxRTT` clamped to `[0.5, 0.8]` (Linux `BETA_MIN = 64/128`, `BETA_MAX =
//!   102/128`, 1/128 fixed point kept), only once a previous event armed it (`modeswitch`) and
//!   if `minRTT > 10 ms`; otherwise 0.5. Bandwidth switch (`use_bandwidth_switch = 1`): if the
//!   throughput maximum changed by more than 20 % since the previous event
//!   (`5 maxB ∉ [4 old_maxB, 6 old_maxB]`) β = 0.5 and adaptive backoff is disarmed.
//! * `maxRTT` grows from RTT samples in the Open state by at most 20 ms per sample and fades at
//!   every event, `maxRTT = minRTT + 0.95 (maxRTT - minRTT)`. `minRTT` is the all-time minimum.
//! * Throughput: packets cumulatively acked in Open/Disorder over at least one minRTT and one
//!   window, EWMA `B = (3 B + B_cur) / 4`; just after an event (≤ 3 minRTTs) it restarts.
//! * Undo: a spurious reduction restores the episode start, `maxRTT` and `old_maxB`
//!   (`htcp_cwnd_undo`), and the window as Reno does. Linux saves them when the state changes,
//!   just after its `ssthresh` hook already faded `maxRTT` and rolled `old_maxB`, so in effect
//!   only Δ's origin comes back; we keep that order.
//!
//! Counting, as Linux in every kernel: growth credits the packets the ACK cumulatively acked
//! (`pkts_acked`, in the Open state; one per ACK otherwise), not the stack's `segments_acked`,
//! so `ca_counting` does not change H-TCP. Slow start is the shared RFC 3465 one; what it
//! leaves of an ACK is not carried into congestion avoidance (`htcp_cong_avoid`).

use crate::newreno::{growth_allowed, slow_start, ABC_L, MIN_SSTHRESH_SEGMENTS};
use crate::scalable::whole_segments;
use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, Nanos, ParamError, Params,
    PathInfo, Reaction, NANOS_PER_SEC,
};

/// Linux keeps α and β with 7 fractional bits.
const ONE: u64 = 1 << 7;
/// Linux `BETA_MIN` (0.5) and `BETA_MAX` (102/128 ≈ 0.797).
pub const BETA_MIN: u64 = 64;
pub const BETA_MAX: u64 = 102;
/// Δ_L: α stays 1 for this long after an episode ends (Linux `HZ`).
pub const DELTA_L: Nanos = NANOS_PER_SEC;
/// Adaptive backoff needs a minimum RTT above this (Linux `msecs_to_jiffies(10)`).
pub const ADAPTIVE_MIN_RTT: Nanos = 10_000_000;
/// `maxRTT` ignores samples more than this above it (Linux `msecs_to_jiffies(20)`).
pub const MAX_RTT_STEP: Nanos = 20_000_000;
/// RTT scaling reference: α is scaled by minRTT / 100 ms.
const RTT_SCALING_REF: Nanos = 100_000_000;

/// H-TCP parameters. Scenario keys are the field names.
#[derive(Clone, Debug, PartialEq)]
pub struct HtcpConfig {
    /// Linux `use_rtt_scaling`, default on. Key `rtt_scaling`.
    pub rtt_scaling: bool,
    /// Linux `use_bandwidth_switch`, default on. Key `bandwidth_switch`.
    pub bandwidth_switch: bool,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        Self { rtt_scaling: true, bandwidth_switch: true }
    }
}

impl HtcpConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(Self {
            rtt_scaling: p.bool("rtt_scaling", true)?,
            bandwidth_switch: p.bool("bandwidth_switch", true)?,
        })
    }
}

/// What an undo puts back (Linux `undo_last_cong`, `undo_maxRTT`, `undo_old_maxB`).
#[derive(Clone, Copy, Debug)]
struct UndoState {
    last_cong: Nanos,
    max_rtt: Nanos,
    old_max_b: f64,
}

/// The H-TCP controller ("htcp").
#[derive(Clone, Debug)]
pub struct Htcp {
    cfg: HtcpConfig,
    /// α and β in 1/128 units.
    alpha: u64,
    beta: u64,
    /// Adaptive backoff armed by a previous event (Linux `modeswitch`).
    modeswitch: bool,
    cwnd_cnt: u64,
    min_rtt: Option<Nanos>,
    max_rtt: Nanos,
    /// Start of Δ: the end of the last episode (its start while one is open).
    last_cong: Nanos,
    /// Set while an episode is open, consumed by an undo or the episode's end.
    undo: Option<UndoState>,
    /// Throughput estimation, packets per second.
    packet_count: u64,
    last_time: Nanos,
    bi: f64,
    max_b: f64,
    old_max_b: f64,
}

impl Htcp {
    pub fn new(cfg: HtcpConfig) -> Self {
        Self {
            cfg,
            alpha: ONE,
            beta: BETA_MIN,
            modeswitch: false,
            cwnd_cnt: 0,
            min_rtt: None,
            max_rtt: 0,
            last_cong: 0,
            undo: None,
            packet_count: 0,
            last_time: 0,
            bi: 0.0,
            max_b: 0.0,
            old_max_b: 0.0,
        }
    }

    pub fn config(&self) -> &HtcpConfig {
        &self.cfg
    }

    /// α in segments per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / ONE as f64
    }

    /// β, the factor a congestion event keeps.
    pub fn beta(&self) -> f64 {
        self.beta as f64 / ONE as f64
    }

    pub fn min_rtt(&self) -> Option<Nanos> {
        self.min_rtt
    }

    pub fn max_rtt(&self) -> Nanos {
        self.max_rtt
    }

    /// Smoothed maximum throughput since the last event, packets per second.
    pub fn max_throughput(&self) -> f64 {
        self.max_b
    }

    /// Where Δ counts from.
    pub fn last_congestion(&self) -> Nanos {
        self.last_cong
    }

    /// Linux `measure_rtt`: all-time minimum; the maximum only in Open and in ≤ 20 ms steps.
    fn measure_rtt(&mut self, rtt: Nanos, state: CaState) {
        let min = self.min_rtt.map_or(rtt, |m| m.min(rtt));
        self.min_rtt = Some(min);
        if state == CaState::Open {
            self.max_rtt = self.max_rtt.max(min);
            if rtt > self.max_rtt && rtt <= self.max_rtt + MAX_RTT_STEP {
                self.max_rtt = rtt;
            }
        }
    }

    /// Linux `measure_achieved_throughput` (after the RTT sample); `cwnd` in bytes.
    fn measure_throughput(&mut self, path: &PathInfo, cwnd: u64, pkts: u64) {
        let now = path.now;
        if !matches!(path.state, CaState::Open | CaState::Disorder) {
            self.packet_count = 0;
            self.last_time = now;
            return;
        }
        self.packet_count += pkts;
        let Some(min_rtt) = self.min_rtt else { return };
        let w = whole_segments(cwnd, path.mss);
        let slack = (self.alpha / ONE).max(1);
        let elapsed = now.saturating_sub(self.last_time);
        if w < slack || self.packet_count < w - slack || elapsed < min_rtt || elapsed == 0 {
            return;
        }
        let current = self.packet_count as f64 * NANOS_PER_SEC as f64 / elapsed as f64;
        if now.saturating_sub(self.last_cong) / min_rtt.max(1) <= 3 {
            // Just after a backoff the old estimate says nothing about the new window.
            self.bi = current;
            self.max_b = current;
        } else {
            self.bi = (3.0 * self.bi + current) / 4.0;
            self.max_b = self.max_b.max(self.bi);
        }
        self.packet_count = 0;
        self.last_time = now;
    }

    /// Linux `htcp_beta_update`.
    fn update_beta(&mut self) {
        if self.cfg.bandwidth_switch {
            let (max_b, old) = (self.max_b, self.old_max_b);
            self.old_max_b = max_b;
            if !(4.0 * old <= 5.0 * max_b && 5.0 * max_b <= 6.0 * old) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        match self.min_rtt {
            Some(min) if self.modeswitch && min > ADAPTIVE_MIN_RTT && self.max_rtt > 0 => {
                self.beta = ((min << 7) / self.max_rtt).clamp(BETA_MIN, BETA_MAX);
            }
            _ => {
                self.beta = BETA_MIN;
                self.modeswitch = true;
            }
        }
    }

    /// Linux `htcp_alpha_update` at time `now`.
    fn update_alpha(&mut self, now: Nanos) {
        let since = now.saturating_sub(self.last_cong);
        let mut factor = 1;
        if since > DELTA_L {
            let d = (since - DELTA_L) as f64 / NANOS_PER_SEC as f64;
            factor += (10.0 * d + (d / 2.0).powi(2)).floor() as u64;
        }
        if let (true, Some(min)) = (self.cfg.rtt_scaling, self.min_rtt) {
            // 100 ms / minRTT in eighths, clamped to [0.5, 10] as Linux.
            let scale = (8 * RTT_SCALING_REF / min.max(1)).clamp(4, 80);
            factor = (factor * 8 / scale).max(1);
        }
        self.alpha = 2 * factor * (ONE - self.beta);
        if self.alpha == 0 {
            self.alpha = ONE;
        }
    }

    /// Linux `htcp_param_update`: β and α for the new epoch, and `maxRTT` fades.
    fn update_params(&mut self, now: Nanos) {
        self.update_beta();
        self.update_alpha(now);
        if let Some(min) = self.min_rtt {
            if self.max_rtt > min {
                self.max_rtt = min + (self.max_rtt - min) * 95 / 100;
            }
        }
    }

    /// Linux `htcp_reset` on entering CWR, Recovery or Loss.
    fn start_episode(&mut self, now: Nanos) {
        self.undo =
            Some(UndoState { last_cong: self.last_cong, max_rtt: self.max_rtt, old_max_b: self.old_max_b });
        self.last_cong = now;
    }
}

impl Default for Htcp {
    fn default() -> Self {
        Self::new(HtcpConfig::default())
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn init(&mut self, _st: &mut CcState, path: &PathInfo) {
        *self = Self::new(self.cfg.clone());
        self.last_cong = path.now;
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        if ack.acked == 0 {
            return;
        }
        let pkts = ack.acked.div_ceil(path.mss as u64);
        if let Some(rtt) = ack.rtt.filter(|&r| r > 0) {
            self.measure_rtt(rtt, path.state);
        }
        if self.cfg.bandwidth_switch {
            self.measure_throughput(path, st.cwnd, pkts);
        }
        if !growth_allowed(path, ack) {
            return;
        }
        if st.in_slow_start() {
            slow_start(st, path, ack, ABC_L);
            return;
        }
        let w = whole_segments(st.cwnd, path.mss);
        if (self.cwnd_cnt * self.alpha) >> 7 >= w {
            st.cwnd = st.cwnd.saturating_add(path.mss as u64);
            self.cwnd_cnt = 0;
            self.update_alpha(path.now);
        } else {
            self.cwnd_cnt += if path.state == CaState::Open { pkts } else { 1 };
        }
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        self.cwnd_cnt = 0;
        let reaction = match (ev.cause, ev.open_episode) {
            // Linux `tcp_enter_recovery` inside CWR, or a repeated timeout: no new ssthresh.
            (Cause::Loss, Some(Cause::Ecn)) | (Cause::Rto { backoffs: 1.. }, _) => {
                Reaction::Prr { ssthresh: st.ssthresh }
            }
            _ => {
                self.update_params(path.now);
                let w = st.cwnd / path.mss as u64;
                Reaction::Prr {
                    ssthresh: ((w * self.beta) >> 7).max(MIN_SSTHRESH_SEGMENTS) * path.mss as u64,
                }
            }
        };
        self.start_episode(path.now);
        reaction
    }

    fn on_episode_end(&mut self, _st: &mut CcState, path: &PathInfo, _cause: Cause) {
        // Linux `htcp_state(TCP_CA_Open)`: Δ counts from the end of the episode.
        if self.undo.take().is_some() {
            self.last_cong = path.now;
        }
    }

    fn undo_cwnd(&mut self, st: &CcState, prior_cwnd: u64) -> u64 {
        if let Some(u) = self.undo.take() {
            self.last_cong = u.last_cong;
            self.max_rtt = u.max_rtt;
            self.old_max_b = u.old_max_b;
        }
        st.cwnd.max(prior_cwnd)
    }
}

#[cfg(test)]
mod tests;
