//! TCP Illinois (Liu, Başar & Srikant 2008) as Linux `tcp_illinois.c`.
//!
//! Thesis §2.2.2.2 (L953-983), Eq. 2.42-2.47. Loss triggers the decrease; the queueing delay
//! sizes both the increase α and the decrease fraction b (here `beta`, the fraction removed).
//! Once per RTT, from this RTT's samples (`T_a` their mean, `T_min`/`T_max` the all-time
//! extremes): `d_a = T_a - T_min`, `d_m = T_max - T_min`, `d_i = η_i d_m` with η = 0.01, 0.1, 0.8.
//!
//! * Eq. 2.42: `α = α_max` if `d_a <= d1`, else `κ1 / (κ2 + d_a)`, falling from α_max to α_min
//!   at `d_a = d_m`, with κ1, κ2 of Eq. 2.44/2.45.
//! * Eq. 2.43: `b = b_min` if `d_a <= d2`, `κ3 + κ4 d_a` up to `d3`, `b_max` above
//!   (κ3, κ4 of Eq. 2.46/2.47). On loss `ssthresh = max(w - b w, 2)`.
//! * Per ACK `w += α / w`, in Linux's form: credited packets times α, `+delta / w` segments
//!   once that reaches `w`, then the counter restarts at zero.
//!
//! Thesis text vs Linux (thesis-background §7 item 8); Linux wins, the thesis measured it:
//! the text's first case of b reads `d_a <= d1`, Linux (and κ3/κ4's interval) use d2; the
//! text's α_min is 0.1, Linux's 0.3 (fixed point 38/128 ≈ 0.297; we keep 0.3 exactly, key
//! `alpha_min`); below `win_thresh = 15` segments (text: 10) Illinois is Reno, α = 1,
//! b = 1/2. The text's "5 samples" is Linux's `theta = 5`: after the delay has been above d1,
//! α returns to α_max only on the 5th low-delay RTT; Linux does not restart that count when a
//! high-delay RTT comes in between, and neither do we. α and b reset to Reno's on a timeout
//! (`tcp_illinois_state(TCP_CA_Loss)`); `T_max` is never aged (Linux's "TODO").
//!
//! Linux's fixed point is replaced by integer nanoseconds and `f64`; results agree with it to
//! its own resolution (α to 1/128, b to 1/64; unit tests compare). The per-RTT update runs on
//! the first ACK of a new round (`ack.round_start`) that may raise the window (not in CWR or
//! Recovery), like Linux's `after(ack, end_seq)` in `cong_avoid`. Counting, as Linux in every
//! kernel: growth credits the packets each ACK cumulatively acked (`pkts_acked`), not the
//! stack's `segments_acked`, so `ca_counting` does not change Illinois.

use crate::newreno::{growth_allowed, slow_start, ABC_L, MIN_SSTHRESH_SEGMENTS};
use crate::scalable::whole_segments;
use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, Nanos, ParamError, Params,
    PathInfo, Reaction,
};

/// Linux `RTT_MAX`: `U32_MAX / ALPHA_MAX` µs (≈ 3.36 s); longer samples are clamped.
pub const RTT_MAX: Nanos = (u32::MAX as u64 / 1280) * 1000;
/// Reno's values below `win_thresh` and after a timeout (Linux `ALPHA_BASE`, `BETA_BASE`).
pub const RENO_ALPHA: f64 = 1.0;
pub const RENO_BETA: f64 = 0.5;

/// Illinois parameters. Scenario keys are the field names.
#[derive(Clone, Debug, PartialEq)]
pub struct IllinoisConfig {
    /// Smallest α, at `d_a = d_m`. Default 0.3 (Linux; the thesis text says 0.1). Key `alpha_min`.
    pub alpha_min: f64,
    /// α while the queue is empty. Default 10. Key `alpha_max`.
    pub alpha_max: f64,
    /// Decrease fraction at low delay. Default 1/8. Key `beta_min`.
    pub beta_min: f64,
    /// Decrease fraction at high delay. Default 1/2. Key `beta_max`.
    pub beta_max: f64,
    /// Below this window (segments) Illinois is Reno. Default 15 (Linux; text: 10). Key `win_thresh`.
    pub win_thresh: u64,
    /// Low-delay RTTs before α returns to α_max. Default 5. Key `theta`.
    pub theta: u64,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        Self { alpha_min: 0.3, alpha_max: 10.0, beta_min: 0.125, beta_max: 0.5, win_thresh: 15, theta: 5 }
    }
}

impl IllinoisConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let cfg = Self {
            alpha_min: p.f64_in("alpha_min", d.alpha_min, 0.01, 100.0)?,
            alpha_max: p.f64_in("alpha_max", d.alpha_max, 0.01, 100.0)?,
            beta_min: p.f64_in("beta_min", d.beta_min, 0.0, 0.99)?,
            beta_max: p.f64_in("beta_max", d.beta_max, 0.0, 0.99)?,
            win_thresh: p.u64_in("win_thresh", d.win_thresh, 0, 1 << 32)?,
            theta: p.u64_in("theta", d.theta, 1, 1000)?,
        };
        let order = |key: &str, what: &str| ParamError { key: key.into(), message: what.into() };
        if cfg.alpha_max <= cfg.alpha_min {
            return Err(order("alpha_max", "must be above alpha_min"));
        }
        if cfg.beta_max < cfg.beta_min {
            return Err(order("beta_max", "must not be below beta_min"));
        }
        Ok(cfg)
    }
}

/// The Illinois controller ("illinois").
#[derive(Clone, Debug)]
pub struct Illinois {
    cfg: IllinoisConfig,
    alpha: f64,
    beta: f64,
    base_rtt: Option<Nanos>,
    max_rtt: Nanos,
    /// This RTT's samples (Linux `sum_rtt`, `cnt_rtt`).
    sum_rtt: u128,
    cnt_rtt: u64,
    /// The delay has been above d1 since α was last α_max (Linux `rtt_above`).
    rtt_above: bool,
    /// Low-delay RTTs counted towards `theta` (Linux `rtt_low`).
    rtt_low: u64,
    /// A new round began; the update waits for an ACK that may raise the window.
    round_due: bool,
    cwnd_cnt: u64,
}

impl Illinois {
    pub fn new(cfg: IllinoisConfig) -> Self {
        Self {
            alpha: cfg.alpha_max,
            beta: RENO_BETA,
            cfg,
            base_rtt: None,
            max_rtt: 0,
            sum_rtt: 0,
            cnt_rtt: 0,
            rtt_above: false,
            rtt_low: 0,
            round_due: false,
            cwnd_cnt: 0,
        }
    }

    pub fn config(&self) -> &IllinoisConfig {
        &self.cfg
    }

    /// Current α, segments per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Current decrease fraction b.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// Linux `tcp_illinois_acked`.
    fn sample(&mut self, rtt: Nanos) {
        let rtt = rtt.min(RTT_MAX);
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt += rtt as u128;
    }

    /// Linux `rtt_reset`: a new round of samples starts.
    fn restart_round(&mut self) {
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
        self.round_due = false;
    }

    /// Eq. 2.42 with Linux's `theta` hysteresis; `da`, `dm` in nanoseconds.
    fn alpha_for(&mut self, da: u64, dm: u64) -> f64 {
        let c = &self.cfg;
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return c.alpha_max;
            }
            // One quiet RTT is not enough to jump back to full speed.
            self.rtt_low += 1;
            if self.rtt_low < c.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return c.alpha_max;
        }
        self.rtt_above = true;
        // κ1 / (κ2 + d_a) rewritten over (d_m - d1) and (d_a - d1), as Linux does.
        let (dm, da) = ((dm - d1) as f64, (da - d1) as f64);
        c.alpha_max * dm / (dm + da * (c.alpha_max - c.alpha_min) / c.alpha_min)
    }

    /// Eq. 2.43 (with d2 in the first case, as Linux); `da`, `dm` in nanoseconds.
    fn beta_for(&self, da: u64, dm: u64) -> f64 {
        let c = &self.cfg;
        let d2 = dm / 10;
        if da <= d2 {
            return c.beta_min;
        }
        let d3 = 8 * dm / 10;
        if da >= d3 || d3 <= d2 {
            return c.beta_max;
        }
        c.beta_min + (c.beta_max - c.beta_min) * (da - d2) as f64 / (d3 - d2) as f64
    }

    /// Linux `update_params`, once per RTT; `w` in segments.
    fn update_params(&mut self, w: u64) {
        if w < self.cfg.win_thresh {
            self.alpha = RENO_ALPHA;
            self.beta = RENO_BETA;
        } else if let (Some(base), true) = (self.base_rtt, self.cnt_rtt > 0) {
            let dm = self.max_rtt - base;
            let da = ((self.sum_rtt / self.cnt_rtt as u128) as u64).saturating_sub(base);
            self.alpha = self.alpha_for(da, dm);
            self.beta = self.beta_for(da, dm);
        }
        self.restart_round();
    }

    /// Linux `tcp_illinois_state(TCP_CA_Loss)`.
    fn reset_on_timeout(&mut self) {
        self.alpha = RENO_ALPHA;
        self.beta = RENO_BETA;
        self.rtt_low = 0;
        self.rtt_above = false;
        self.restart_round();
    }
}

impl Default for Illinois {
    fn default() -> Self {
        Self::new(IllinoisConfig::default())
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    fn init(&mut self, _st: &mut CcState, _path: &PathInfo) {
        *self = Self::new(self.cfg.clone());
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        if ack.acked == 0 {
            return;
        }
        if let Some(rtt) = ack.rtt {
            self.sample(rtt);
        }
        self.round_due |= ack.round_start;
        // Linux `cong_avoid` runs only where the window may rise; the round update is there.
        if !matches!(path.state, CaState::Open | CaState::Disorder | CaState::Loss) {
            return;
        }
        if self.round_due {
            self.update_params(whole_segments(st.cwnd, path.mss));
        }
        if !growth_allowed(path, ack) {
            return;
        }
        if st.in_slow_start() {
            slow_start(st, path, ack, ABC_L);
            return;
        }
        let w = whole_segments(st.cwnd, path.mss);
        self.cwnd_cnt += ack.acked.div_ceil(path.mss as u64);
        let delta = (self.cwnd_cnt as f64 * self.alpha).floor() as u64;
        if delta >= w {
            st.cwnd = st.cwnd.saturating_add(delta / w * path.mss as u64);
            self.cwnd_cnt = 0;
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
                let w = st.cwnd / path.mss as u64;
                let cut = (w as f64 * self.beta).floor() as u64;
                Reaction::Prr { ssthresh: (w - cut.min(w)).max(MIN_SSTHRESH_SEGMENTS) * path.mss as u64 }
            }
        };
        if let Cause::Rto { .. } = ev.cause {
            // Linux computes ssthresh first, then enters the Loss state, which resets.
            self.reset_on_timeout();
        }
        reaction
    }
}

#[cfg(test)]
mod tests;
