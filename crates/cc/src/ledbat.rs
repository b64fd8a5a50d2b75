//! LEDBAT, Low Extra Delay Background Transport (RFC 6817): a less-than-best-effort sender
//! that keeps the queueing delay it adds near `TARGET` and yields to loss-based flows.
//!
//! Section numbers are RFC 6817's. Windows are in bytes, delays in integer nanoseconds.
//!
//! * §2.3 / §2.4.1, delay samples: the receiver echoes `delay = receive time (its clock) −
//!   send stamp (the sender's clock)`, the stack's [`AckSample::owd`]. The clocks are not
//!   synchronised: every sample carries the same unknown offset, which cancels in the
//!   difference below, so only differences of samples are ever used. A sample is read as a
//!   two's-complement `i64`, so a stack whose receiver clock is behind the sender's may hand
//!   over `rx.wrapping_sub(stamp)`.
//! * §2.4.2, base delay: `base_delays`, one minimum per wall-clock minute of the connection's
//!   clock, the last `BASE_HISTORY` minutes (§2.5: SHOULD be 10). The RFC's pseudo-code
//!   advances one bucket per minute *in which a sample arrives*, so after a silent spell it
//!   keeps minima older than `BASE_HISTORY` minutes; here a gap of `k` minutes advances `k`
//!   buckets, so the base is exactly the minimum over the current minute and the previous
//!   `BASE_HISTORY − 1` (§2.4.2's stated intent, and what makes a route change upward heal in
//!   `BASE_HISTORY` minutes as §2.5 says).
//! * §2.4.2 / §3.4.2, current delay: `FILTER(current_delays)` is the minimum of the last
//!   `CURRENT_FILTER` samples (§2.4.2 names MIN as an acceptable filter). §2.5: the sender
//!   "SHOULD use at least 4 delay samples in each RTT" and `CURRENT_FILTER` "MUST be limited
//!   such that samples in the list are not older than an RTT": samples older than the smoothed
//!   RTT are left out (the newest one always counts). Default 4, as ns-3 `NoiseFilterLen`;
//!   libutp keeps 3 (`CUR_DELAY_SIZE`).
//! * §2.4.2, per ACK, in the RFC's order:
//!   `queuing_delay = FILTER(current_delays) − MIN(base_delays)` (Δ is the queueing delay,
//!   as the notes' §5 and the fLEDBAT paper's eq. (2) read it),
//!   `off_target = (TARGET − queuing_delay) / TARGET`,
//!   `cwnd += GAIN · off_target · bytes_newly_acked · MSS / cwnd`,
//!   `cwnd = min(cwnd, flightsize + ALLOWED_INCREASE · MSS)`,
//!   `cwnd = max(cwnd, MIN_CWND · MSS)`.
//!   Over one window of ACKs the increase integrates to `GAIN · off_target · MSS` per RTT, at
//!   most one segment with GAIN = 1 ("limits the maximum cwnd ramp-up to the same rate as TCP
//!   Reno", §2.5); the decrease is additive too. `bytes_newly_acked` is the stack's credited
//!   segments times MSS ([`AckSample::segments_acked`]: "MAY be set to MSS" per ACK, §2.4.2),
//!   `flightsize` is the pipe before this ACK ([`AckSample::prior_inflight`]). Fractions of a
//!   byte are carried from ACK to ACK.
//! * The `ALLOWED_INCREASE` cap (§2.5: "allows and limits the cwnd increase based on
//!   flightsize in the previous RTT") is applied to growth only: the window may not rise above
//!   what was in flight plus `ALLOWED_INCREASE` segments, but the cap never shrinks it. The
//!   literal `min()` would also cut an application-limited window down to `flightsize + MSS`
//!   on every ACK (and to `MIN_CWND` at the end of each chunk of chunked traffic); idle and
//!   application-limited periods are the stack's business (RFC 5681 §4.1 restart), as for
//!   the other controllers.
//! * Queueing delay below zero cannot happen by construction (every sample in the current
//!   filter also entered the newest base bucket), and is clamped at 0, so `off_target <= 1`.
//!   ns-3 `TcpLedbat::CongestionAvoidance` instead takes `base − current` when the current
//!   delay is below the base and *adds* it to the target, so there `off_target > 1` and the
//!   window may grow faster than `GAIN` segments per RTT; its cap is also `flight + acked`
//!   without `ALLOWED_INCREASE`, and it applies the `min()` unconditionally.
//! * §2.4.2, loss (at most once per RTT, which the stack's episodes ensure):
//!   `cwnd = min(cwnd, max(cwnd / 2, MIN_CWND · MSS))`, given to the stack as
//!   [`Reaction::Prr`] so that the recovery runs PRR down to it and retransmits. ECN-Echo is
//!   not covered by RFC 6817; it is treated as a loss (notes §5.4 [D]), and a loss inside the
//!   episode an ECN-Echo opened does not cut again.
//! * §2.4.2, timeout: "if no ACKs are received within a CTO ... set cwnd to 1 MSS and back off
//!   the congestion timer": the stack's RTO does both (cwnd = one MSS, RFC 6298 back-off);
//!   ssthresh is halved on a fresh timeout only, as for the loss-based controllers (RFC 5681
//!   §3.1), and only matters with `slow_start`. The next ACK lifts cwnd to `MIN_CWND`.
//! * Recovery and CWR: the stack's PRR owns cwnd; LEDBAT keeps taking delay samples but does
//!   not touch the window until the episode ends (after an RTO, in `Loss`, it does).
//! * Initial window (§2.5): `INIT_CWND` SHOULD be 2; set at `init` unless 0 (the stack's IW).
//!
//! Slow start is not part of RFC 6817: the window starts at `INIT_CWND` and moves only by the
//! rule above. `slow_start = true` adds an RFC 5681 byte-counting slow start (`cwnd +=
//! bytes_newly_acked` up to ssthresh, still under the `ALLOWED_INCREASE` cap) that ends for
//! good once the queueing delay exceeds 9/10 of TARGET (libutp's exit test, which then sets
//! `ssthresh = cwnd`), at ssthresh, or at the first loss or ECN-Echo, and that resumes after a
//! timeout up to ssthresh. Default off, as the RFC and the notes (§5.4 [D]). For reference:
//! libutp's `slow_start` flag (uTorrent 3.4 onwards) adds `packet_size · bytes_acked /
//! max_window` per ACK, i.e. about one packet per RTT, a floor under LEDBAT's growth rather
//! than an exponential start; ns-3 runs NewReno slow start by default with no delay exit.
//!
//! Without one-way-delay samples (`owd = None` on every ACK) the same estimators run on the
//! RTT samples instead: RTT − base RTT is the round-trip queueing delay, offset-free like the
//! OWD difference (LEDBAT++ and rLEDBAT measure it so). Queueing on the reverse path then
//! counts against TARGET, which only makes the flow more deferential; growth never exceeds
//! GAIN segments per RTT. With neither sample the window is left alone. (ns-3 falls back to
//! NewReno congestion avoidance without timestamps, which is no longer less-than-best-effort.)

use std::collections::VecDeque;

use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, Nanos, ParamError, Params,
    PathInfo, Reaction,
};

/// §2.5: TARGET MUST be 100 ms or less; BEP 29 / libutp use 100 ms, the early drafts and the
/// fLEDBAT paper's simulations 25 ms.
pub const TARGET: Nanos = 100_000_000;
/// §2.5: GAIN MUST be 1 or less.
pub const GAIN: f64 = 1.0;
/// §2.5: ALLOWED_INCREASE SHOULD be 1 and MUST be greater than 0 (segments).
pub const ALLOWED_INCREASE: u64 = 1;
/// §2.5: MIN_CWND SHOULD be 2 (segments).
pub const MIN_CWND: u64 = 2;
/// §2.5: INIT_CWND SHOULD be 2 (segments).
pub const INIT_CWND: u64 = 2;
/// §2.5: BASE_HISTORY SHOULD be 10 (one-minute buckets).
pub const BASE_HISTORY: u64 = 10;
/// §2.5: at least 4 samples per RTT (the filter is the minimum of the last 4).
pub const CURRENT_FILTER: u64 = 4;
/// Length of one base-history bucket (§2.4.2 `round_to_minute`).
pub const BASE_BUCKET: Nanos = 60_000_000_000;
/// libutp `apply_ccontrol`: slow start ends once the delay exceeds this fraction of TARGET.
pub const SLOW_START_EXIT: f64 = 0.9;

/// LEDBAT parameters. Scenario keys are given per field.
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatConfig {
    /// Queueing-delay target, default 100 ms (§2.5). Key `target`, a duration (`"25ms"`).
    /// Values above 100 ms break the RFC's MUST but are accepted for experiments.
    pub target: Nanos,
    /// Default 1 (§2.5, MUST be ≤ 1; libutp's 3000 bytes per RTT is about 2 at its packet
    /// size, hence the range up to 10). Key `gain`.
    pub gain: f64,
    /// Segments the window may exceed the previous flight by, default 1 (§2.5). Key
    /// `allowed_increase`.
    pub allowed_increase: u64,
    /// Floor in segments, default 2 (§2.5). Key `min_cwnd`.
    pub min_cwnd: u64,
    /// Initial window in segments, default 2 (§2.5); 0 keeps the stack's initial window.
    /// Key `init_cwnd`.
    pub init_cwnd: u64,
    /// One-minute buckets of base-delay history, default 10 (§2.5). Key `base_history`.
    pub base_history: u64,
    /// Samples in the current-delay minimum filter, default 4 (§2.5). Key `current_filter`.
    pub current_filter: u64,
    /// Slow start before LEDBAT's own rule, default off (RFC 6817 has none). Key `slow_start`.
    pub slow_start: bool,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        Self {
            target: TARGET,
            gain: GAIN,
            allowed_increase: ALLOWED_INCREASE,
            min_cwnd: MIN_CWND,
            init_cwnd: INIT_CWND,
            base_history: BASE_HISTORY,
            current_filter: CURRENT_FILTER,
            slow_start: false,
        }
    }
}

impl LedbatConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        Ok(Self {
            target: p.duration("target", d.target, 100_000, 1_000_000_000)?,
            gain: p.f64_in("gain", d.gain, 0.001, 10.0)?,
            allowed_increase: p.u64_in("allowed_increase", d.allowed_increase, 1, 1000)?,
            min_cwnd: p.u64_in("min_cwnd", d.min_cwnd, 1, 1000)?,
            init_cwnd: p.u64_in("init_cwnd", d.init_cwnd, 0, 1000)?,
            base_history: p.u64_in("base_history", d.base_history, 1, 1440)?,
            current_filter: p.u64_in("current_filter", d.current_filter, 1, 1000)?,
            slow_start: p.bool("slow_start", d.slow_start)?,
        })
    }
}

/// The two delay estimators of §2.4.2 over one stream of delay samples, independent of who
/// measures them (sender OWD here; fLEDBAT and receiver-side variants can reuse it).
#[derive(Clone, Debug)]
pub struct DelayEstimator {
    base_history: usize,
    current_filter: usize,
    /// Per-minute minima, newest last; `None` for a minute without samples.
    base: VecDeque<Option<i64>>,
    /// Minute index (`now / BASE_BUCKET`) of the newest bucket.
    last_minute: u64,
    /// The last `current_filter` samples with their arrival times.
    current: VecDeque<(Nanos, i64)>,
}

impl DelayEstimator {
    pub fn new(base_history: u64, current_filter: u64) -> Self {
        Self {
            base_history: base_history.max(1) as usize,
            current_filter: current_filter.max(1) as usize,
            base: VecDeque::new(),
            last_minute: 0,
            current: VecDeque::new(),
        }
    }

    /// §2.4.2 `update_base_delay` and `update_current_delay` for one sample taken at `now`.
    pub fn add(&mut self, now: Nanos, delay: i64) {
        let minute = now / BASE_BUCKET;
        if self.base.is_empty() {
            self.base.push_back(Some(delay));
            self.last_minute = minute;
        } else if minute > self.last_minute {
            // One bucket per elapsed minute, so minima older than the history are forgotten
            // even if no sample arrived for a while.
            let steps = (minute - self.last_minute).min(self.base_history as u64);
            for _ in 1..steps {
                self.base.push_back(None);
            }
            self.base.push_back(Some(delay));
            while self.base.len() > self.base_history {
                self.base.pop_front();
            }
            self.last_minute = minute;
        } else if let Some(tail) = self.base.back_mut() {
            *tail = Some(tail.map_or(delay, |t| t.min(delay)));
        }
        self.current.push_back((now, delay));
        while self.current.len() > self.current_filter {
            self.current.pop_front();
        }
    }

    pub fn has_samples(&self) -> bool {
        !self.current.is_empty()
    }

    /// `MIN(base_delays)`.
    pub fn base_delay(&self) -> Option<i64> {
        self.base.iter().flatten().copied().min()
    }

    /// `FILTER(current_delays)`: the minimum of the kept samples no older than `max_age`
    /// (one RTT, §2.5); the newest sample always counts.
    pub fn current_delay(&self, now: Nanos, max_age: Option<Nanos>) -> Option<i64> {
        let &(_, newest) = self.current.back()?;
        let fresh = |t: Nanos| max_age.is_none_or(|age| now.saturating_sub(t) <= age);
        Some(self.current.iter().filter(|&&(t, _)| fresh(t)).map(|&(_, d)| d).fold(newest, i64::min))
    }

    /// `FILTER(current_delays) − MIN(base_delays)`, never negative.
    pub fn queuing_delay(&self, now: Nanos, max_age: Option<Nanos>) -> Option<Nanos> {
        let q = self.current_delay(now, max_age)?.saturating_sub(self.base_delay()?);
        Some(q.max(0) as Nanos)
    }
}

/// The delay signal of the LEDBAT family: a [`DelayEstimator`] over one-way-delay samples, and
/// one over RTT samples that stands in while no OWD sample has arrived (then Δ is the
/// round-trip queueing delay, and the flow stays less-than-best-effort).
#[derive(Clone, Debug)]
pub struct DelaySignal {
    owd: DelayEstimator,
    rtt: DelayEstimator,
    last: Option<Nanos>,
}

impl DelaySignal {
    pub fn new(base_history: u64, current_filter: u64) -> Self {
        let est = DelayEstimator::new(base_history, current_filter);
        Self { owd: est.clone(), rtt: est, last: None }
    }

    /// Take the ACK's delay samples; the queueing delay now, if any sample exists.
    pub fn on_ack(&mut self, ack: &AckSample, path: &PathInfo) -> Option<Nanos> {
        if let Some(d) = ack.owd {
            // The stack hands a wrapping difference when the receiver's clock is behind.
            self.owd.add(path.now, d as i64);
        }
        if let Some(r) = ack.rtt {
            self.rtt.add(path.now, r as i64);
        }
        let q = self.estimator().queuing_delay(path.now, path.srtt)?;
        self.last = Some(q);
        Some(q)
    }

    /// The estimator in use: OWD once any OWD sample arrived, otherwise RTT.
    pub fn estimator(&self) -> &DelayEstimator {
        if self.owd.has_samples() {
            &self.owd
        } else {
            &self.rtt
        }
    }

    /// The queueing delay the last ACK showed (`None` before any delay sample).
    pub fn last(&self) -> Option<Nanos> {
        self.last
    }
}

/// §2.4.2 on loss: `max(cwnd / 2, MIN_CWND · MSS)`, never above cwnd.
pub fn halved(cwnd: u64, min_cwnd: u64, mss: u32) -> u64 {
    (cwnd / 2).max(min_cwnd * mss as u64).min(cwnd)
}

/// The LEDBAT family's answer to a congestion event: halve on loss or ECN-Echo (a loss inside
/// an episode an ECN-Echo opened is the same event, no second cut), and on a fresh timeout;
/// keep ssthresh when the same data times out again.
pub fn halving_reaction(st: &CcState, path: &PathInfo, ev: &CongestionEvent, min_cwnd: u64) -> Reaction {
    let ssthresh = match ev.cause {
        Cause::Loss if ev.open_episode == Some(Cause::Ecn) => st.ssthresh,
        Cause::Loss | Cause::Ecn | Cause::Rto { backoffs: 0 } => halved(st.cwnd, min_cwnd, path.mss),
        Cause::Rto { .. } => st.ssthresh,
    };
    Reaction::Prr { ssthresh }
}

/// The LEDBAT controller ("ledbat").
#[derive(Clone, Debug)]
pub struct Ledbat {
    cfg: LedbatConfig,
    delay: DelaySignal,
    /// Fraction of a byte of window not yet applied, in `[0, 1)`.
    carry: f64,
    /// Slow start still running (only with `slow_start`).
    slow_starting: bool,
}

impl Ledbat {
    pub fn new(cfg: LedbatConfig) -> Self {
        Self {
            delay: DelaySignal::new(cfg.base_history, cfg.current_filter),
            carry: 0.0,
            slow_starting: cfg.slow_start,
            cfg,
        }
    }

    pub fn config(&self) -> &LedbatConfig {
        &self.cfg
    }

    /// The queueing delay the last ACK showed (`None` before any delay sample).
    pub fn queuing_delay(&self) -> Option<Nanos> {
        self.delay.last()
    }

    /// The estimator in use: OWD once any OWD sample arrived, otherwise RTT.
    pub fn estimator(&self) -> &DelayEstimator {
        self.delay.estimator()
    }

    pub fn in_slow_start(&self) -> bool {
        self.slow_starting
    }

    /// `off_target = (TARGET − queuing_delay) / TARGET`, at most 1.
    pub fn off_target(&self, queuing_delay: Nanos) -> f64 {
        let t = self.cfg.target as f64;
        (t - queuing_delay as f64) / t
    }
}

impl Default for Ledbat {
    fn default() -> Self {
        Self::new(LedbatConfig::default())
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn init(&mut self, st: &mut CcState, path: &PathInfo) {
        if self.cfg.init_cwnd > 0 {
            st.cwnd = st.cwnd.min(self.cfg.init_cwnd * path.mss as u64);
        }
        self.carry = 0.0;
        self.slow_starting = self.cfg.slow_start;
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        let Some(qd) = self.delay.on_ack(ack, path) else {
            return;
        };
        // Fast recovery and CWR: PRR owns the window until the episode ends.
        if !matches!(path.state, CaState::Open | CaState::Disorder | CaState::Loss) {
            return;
        }
        let mss = path.mss as u64;
        let bytes = ack.segments_acked as u64 * mss;
        if bytes == 0 {
            return;
        }
        let old = st.cwnd.max(1);
        let mut w = old as f64
            + self.carry
            + self.cfg.gain * self.off_target(qd) * bytes as f64 * mss as f64 / old as f64;
        if self.slow_starting {
            if qd as f64 > SLOW_START_EXIT * self.cfg.target as f64 {
                self.slow_starting = false;
                st.ssthresh = old;
            } else if old >= st.ssthresh {
                self.slow_starting = false;
            } else {
                w = w.max(old.saturating_add(bytes).min(st.ssthresh) as f64);
            }
        }
        // §2.4.2 `min(cwnd, flightsize + ALLOWED_INCREASE * MSS)`, on growth only.
        let cap = ack.prior_inflight.saturating_add(self.cfg.allowed_increase * mss).max(old);
        if w > cap as f64 {
            w = cap as f64;
        }
        w = w.max((self.cfg.min_cwnd * mss) as f64);
        st.cwnd = w.floor() as u64;
        self.carry = w - w.floor();
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        self.carry = 0.0;
        // §2.4.2 CTO: the stack sets cwnd to one MSS and backs the timer off. Slow start, if
        // configured, resumes up to ssthresh (RFC 5681 §3.1); any other signal ends it.
        self.slow_starting = matches!(ev.cause, Cause::Rto { .. }) && self.cfg.slow_start;
        halving_reaction(st, path, ev, self.cfg.min_cwnd)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::newreno::tests::{ack, event, path, M, MSS};
    use crate::{ParamValue, Params};

    const MS: Nanos = 1_000_000;
    const SEC: Nanos = 1_000_000_000;
    const MIN: Nanos = BASE_BUCKET;

    pub(crate) fn st(cwnd_segs: u64) -> CcState {
        CcState { cwnd: cwnd_segs * M, ssthresh: u64::MAX, pacing_rate: None }
    }

    /// An ACK of `segs` segments carrying `owd`, with a full window in flight before it.
    pub(crate) fn owd_ack(segs: u32, owd: Nanos, prior_inflight: u64) -> AckSample {
        let mut a = ack(segs);
        a.owd = Some(owd);
        a.prior_inflight = prior_inflight;
        a
    }

    /// `pairs` as parameters, checked by `build` and then for unknown keys under `name`.
    pub(crate) fn built<C>(name: &str, pairs: &[(&str, ParamValue)], build: impl Fn(&Params) -> C) -> C {
        let mut p = Params::new();
        for (k, v) in pairs {
            p.insert(*k, v.clone());
        }
        let cc = build(&p);
        p.reject_unknown(name).unwrap();
        cc
    }

    fn with(pairs: &[(&str, ParamValue)]) -> Ledbat {
        built("ledbat", pairs, |p| Ledbat::new(LedbatConfig::from_params(p).unwrap()))
    }

    /// Feed a 20 ms base sample, then fill the current filter with `qd` of queueing on top
    /// (ACKs of nothing, so the window is not touched).
    pub(crate) fn feed_delay(cc: &mut dyn CongestionControl, now: Nanos, qd: Nanos) {
        let mut s = st(10);
        cc.on_ack(&mut s, &path(now), &owd_ack(0, 20 * MS, 0));
        for _ in 0..CURRENT_FILTER {
            cc.on_ack(&mut s, &path(now), &owd_ack(0, 20 * MS + qd, 0));
        }
    }

    fn prime(cc: &mut Ledbat, now: Nanos, qd: Nanos) {
        feed_delay(cc, now, qd);
        assert_eq!(cc.queuing_delay(), Some(qd));
    }

    /// The cwnd change one 1-segment ACK makes at queueing delay `qd`, window full.
    fn growth_at(cc: &mut Ledbat, cwnd_segs: u64, qd: Nanos) -> i64 {
        prime(cc, SEC, qd);
        let mut s = st(cwnd_segs);
        cc.carry = 0.0;
        cc.on_ack(&mut s, &path(SEC), &owd_ack(1, 20 * MS + qd, 2 * cwnd_segs * M));
        assert_eq!(cc.queuing_delay(), Some(qd));
        s.cwnd as i64 - (cwnd_segs * M) as i64
    }

    /// `GAIN · off_target · bytes · MSS / cwnd` with MSS 1000 B, cwnd 10 segments, target
    /// 100 ms: 1000 · 1000 / 10000 = 100 B times off_target.
    #[test]
    fn per_ack_growth_is_proportional_to_the_distance_from_target() {
        for (qd_ms, want) in [(0, 100), (25, 75), (50, 50), (100, 0), (150, -50), (300, -200)] {
            let mut cc = Ledbat::default();
            assert_eq!(growth_at(&mut cc, 10, qd_ms * MS), want, "queueing delay {qd_ms} ms");
        }
        // GAIN scales it; a 25 ms target (early drafts, fLEDBAT paper) moves the zero.
        let mut cc = with(&[("gain", ParamValue::Float(0.5))]);
        assert_eq!(growth_at(&mut cc, 10, 0), 50);
        let mut cc = with(&[("target", ParamValue::Str("25ms".into()))]);
        assert_eq!(growth_at(&mut cc, 10, 25 * MS), 0);
        assert_eq!(growth_at(&mut cc, 10, 50 * MS), -100);
    }

    /// Over one window of ACKs at zero queueing delay the window grows by GAIN · MSS, Reno's
    /// rate; fractions of a byte are carried.
    #[test]
    fn one_window_of_acks_adds_gain_segments() {
        let mut cc = Ledbat::default();
        let mut s = st(30);
        let p = path(SEC);
        for _ in 0..30 {
            let inflight = s.cwnd;
            cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, inflight));
        }
        // 30 increments of 1e6 / cwnd (33.3 B falling to 32.3 B): just under one segment.
        assert!((980..1000).contains(&(s.cwnd - 30 * M)), "{}", s.cwnd);
    }

    /// §2.4.2 / §2.5: cwnd may not rise above the previous flight + ALLOWED_INCREASE · MSS,
    /// but the cap does not shrink an application-limited window.
    #[test]
    fn growth_is_capped_by_flight_plus_allowed_increase() {
        let p = path(SEC);
        // Application-limited: 5 segments in flight, cwnd 10: no growth, no cut.
        let mut cc = Ledbat::default();
        let mut s = st(10);
        cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, 5 * M));
        assert_eq!(s.cwnd, 10 * M);
        // 9.95 segments in flight: cap 10.95, the 100 B of growth fit.
        cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, 9_950));
        assert_eq!(s.cwnd, 10_100);
        // 9.5 segments in flight: cap 10.5 segments, the window stops there.
        let mut s = CcState { cwnd: 10_450, ..st(0) };
        cc.on_ack(&mut s, &p, &owd_ack(4, 20 * MS, 9_500));
        assert_eq!(s.cwnd, 10_500, "382 B wanted, 50 B allowed");
        // Slow start wants +3 segments on a stretch ACK: ALLOWED_INCREASE 1 gives +1, 2 gives +2.
        for (ai, want) in [(1, 11 * M), (2, 12 * M), (5, 13 * M)] {
            let mut cc =
                with(&[("slow_start", ParamValue::Bool(true)), ("allowed_increase", ParamValue::Int(ai))]);
            let mut s = st(10);
            cc.on_ack(&mut s, &p, &owd_ack(3, 20 * MS, 10 * M));
            assert_eq!(s.cwnd, want, "allowed_increase {ai}");
        }
    }

    #[test]
    fn the_window_never_falls_below_min_cwnd() {
        let mut cc = Ledbat::default();
        let mut s = st(3);
        let p = path(SEC);
        prime(&mut cc, SEC, 1000 * MS);
        // 1 s of queueing: off_target −9, −9 · 1e6 / 3000 = −3000 B.
        cc.on_ack(&mut s, &p, &owd_ack(1, 1020 * MS, 3 * M));
        assert_eq!(s.cwnd, 2 * M);
        cc.on_ack(&mut s, &p, &owd_ack(1, 1020 * MS, 3 * M));
        assert_eq!(s.cwnd, 2 * M);
        let mut cc = with(&[("min_cwnd", ParamValue::Int(4))]);
        let mut s = st(3);
        cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, 3 * M));
        assert_eq!(s.cwnd, 4 * M, "the floor lifts a window below it (after an RTO, 1 MSS)");
    }

    /// §2.4.2: the base is the minimum over the last BASE_HISTORY one-minute buckets; an
    /// older minimum is forgotten, also when minutes pass without samples.
    #[test]
    fn base_history_rolls_over_per_minute() {
        const IMS: i64 = MS as i64;
        let mut e = DelayEstimator::new(10, 4);
        e.add(30 * SEC, 50 * IMS);
        for k in 1..10 {
            e.add(k * MIN + SEC, 80 * IMS);
            assert_eq!(e.base_delay(), Some(50 * IMS), "minute {k}");
        }
        // Minute 10: minute 0's bucket falls out.
        e.add(10 * MIN, 80 * IMS);
        assert_eq!(e.base_delay(), Some(80 * IMS));
        // A lower sample takes over at once (route change downwards, §2.5).
        e.add(10 * MIN + SEC, 60 * IMS);
        assert_eq!(e.base_delay(), Some(60 * IMS));
        assert_eq!(e.queuing_delay(10 * MIN + SEC, None), Some(0));

        // Silence for 15 minutes forgets everything before it.
        let mut e = DelayEstimator::new(10, 4);
        e.add(0, 50 * IMS);
        e.add(15 * MIN, 90 * IMS);
        assert_eq!(e.base_delay(), Some(90 * IMS));
        // Silence for 9 minutes does not.
        let mut e = DelayEstimator::new(10, 4);
        e.add(59 * SEC, 50 * IMS);
        e.add(9 * MIN + 59 * SEC, 90 * IMS);
        assert_eq!(e.base_delay(), Some(50 * IMS));
        e.add(10 * MIN, 90 * IMS);
        assert_eq!(e.base_delay(), Some(90 * IMS));

        // BASE_HISTORY = 2: the current and the previous minute.
        let mut e = DelayEstimator::new(2, 1);
        e.add(0, 10);
        e.add(MIN, 30);
        assert_eq!(e.base_delay(), Some(10));
        e.add(2 * MIN, 20);
        assert_eq!(e.base_delay(), Some(20));
    }

    /// FILTER() is the minimum of the last CURRENT_FILTER samples, none older than one RTT.
    #[test]
    fn current_filter_is_the_minimum_of_recent_samples() {
        let mut e = DelayEstimator::new(10, 4);
        for (i, d) in [30, 10, 20, 40, 50, 60].into_iter().enumerate() {
            e.add(i as Nanos * MS, d);
        }
        // The last four are 20, 40, 50, 60.
        assert_eq!(e.current_delay(5 * MS, None), Some(20));
        assert_eq!(e.base_delay(), Some(10));
        assert_eq!(e.queuing_delay(5 * MS, None), Some(10));
        // Samples older than an RTT drop out: with 2.5 ms, 40 at 3 ms is the oldest left;
        // with 1.5 ms, 50 at 4 ms.
        assert_eq!(e.current_delay(5 * MS, Some(2_500_000)), Some(40));
        assert_eq!(e.current_delay(5 * MS, Some(1_500_000)), Some(50));
        // Only the newest remains much later; it always counts.
        assert_eq!(e.current_delay(SEC, Some(MS)), Some(60));

        let mut e = DelayEstimator::new(10, 1);
        e.add(0, 50);
        e.add(1, 70);
        assert_eq!(e.current_delay(1, None), Some(70), "CURRENT_FILTER 1: the last sample");

        // Through the controller, with the path's smoothed RTT (100 ms) as the age limit.
        let mut cc = Ledbat::default();
        let mut s = st(10);
        cc.on_ack(&mut s, &path(0), &owd_ack(0, 20 * MS, 0));
        cc.on_ack(&mut s, &path(0), &owd_ack(0, 60 * MS, 0));
        cc.on_ack(&mut s, &path(50 * MS), &owd_ack(0, 70 * MS, 0));
        assert_eq!(cc.queuing_delay(), Some(0), "the 20 ms sample is still within the RTT");
        cc.on_ack(&mut s, &path(150 * MS), &owd_ack(0, 80 * MS, 0));
        assert_eq!(cc.queuing_delay(), Some(50 * MS), "60 ms sample aged out, 70 ms left");
    }

    /// The clocks of sender and receiver are not synchronised: adding a constant to every OWD
    /// sample, positive or negative (wrapping), changes nothing.
    #[test]
    fn a_clock_offset_changes_nothing() {
        let offsets: [i64; 4] = [0, 3_700_000_000, -5_000_000_000, 1 << 50];
        let mut ccs: Vec<Ledbat> = offsets.iter().map(|_| Ledbat::default()).collect();
        let mut sts: Vec<CcState> = offsets.iter().map(|_| st(10)).collect();
        // Queueing delay swinging 0..200 ms across minute boundaries, with losses.
        let mut now = 0;
        for i in 0..4000u64 {
            now += 97 * MS;
            let owd = 20 * MS + (i * 7919 % 200) * MS;
            for ((cc, s), off) in ccs.iter_mut().zip(sts.iter_mut()).zip(offsets) {
                let a = owd_ack(1 + (i % 2) as u32, (owd as i64).wrapping_add(off) as u64, s.cwnd);
                cc.on_ack(s, &path(now), &a);
                if i % 500 == 499 {
                    let ev = event(Cause::Loss, s.cwnd);
                    let r = cc.on_congestion(s, &path(now), &ev);
                    if let Reaction::Prr { ssthresh } = r {
                        s.cwnd = ssthresh;
                    }
                }
            }
        }
        assert!(now > 6 * MIN);
        for (s, cc) in sts.iter().zip(&ccs) {
            assert_eq!(s.cwnd, sts[0].cwnd);
            assert_eq!(cc.queuing_delay(), ccs[0].queuing_delay());
        }
    }

    /// Queueing delay at TARGET is the fixed point: no growth there; and a single flow on a
    /// bottleneck settles with its queueing delay at TARGET.
    #[test]
    fn equilibrium_queuing_delay_equals_the_target() {
        let mut cc = Ledbat::default();
        assert_eq!(growth_at(&mut cc, 50, TARGET), 0);
        assert_eq!(cc.off_target(TARGET), 0.0);

        // 1000 segments/s bottleneck, 40 ms base RTT (20 ms one way), 25 ms target: the
        // window should settle at 40 + 25 = 65 segments, queueing delay 25 ms.
        let mut cc = with(&[("target", ParamValue::Str("25ms".into()))]);
        let (rate, base_owd, base_rtt) = (1000.0, 20 * MS, 40 * MS);
        let mut s = st(2);
        let mut now = 0;
        let mut late = Vec::new();
        for round in 0..400 {
            let w = s.cwnd;
            for _ in 0..(w / M).max(1) {
                let q = ((s.cwnd as f64 / M as f64 / rate) * 1e9 - base_rtt as f64).max(0.0) as Nanos;
                now += (base_rtt + q) / (w / M).max(1);
                let mut p = path(now);
                p.srtt = Some(base_rtt + q);
                let a = owd_ack(1, base_owd + q, s.cwnd);
                cc.on_ack(&mut s, &p, &a);
                if round >= 300 {
                    late.push(q as f64 / MS as f64);
                }
            }
        }
        let mean = late.iter().sum::<f64>() / late.len() as f64;
        assert!((mean - 25.0).abs() < 1.5, "mean queueing delay {mean} ms");
        assert!((s.cwnd as f64 / M as f64 - 65.0).abs() < 2.0, "cwnd {} segments", s.cwnd / M);
    }

    #[test]
    fn loss_and_ecn_halve_with_a_floor_and_rto_keeps_ssthresh_on_backoff() {
        let mut cc = Ledbat::default();
        let p = path(SEC);
        for (cwnd, want) in [(40, 20 * M), (3, 2 * M), (2, 2 * M), (1, M)] {
            let mut s = st(cwnd);
            assert_eq!(
                cc.on_congestion(&mut s, &p, &event(Cause::Loss, 0)),
                Reaction::Prr { ssthresh: want }
            );
            assert_eq!(cc.on_congestion(&mut s, &p, &event(Cause::Ecn, 0)), Reaction::Prr { ssthresh: want });
        }
        let mut s = st(41);
        assert_eq!(cc.on_congestion(&mut s, &p, &event(Cause::Loss, 0)), Reaction::Prr { ssthresh: 20_500 });
        // A loss inside an ECN episode: no second cut.
        let mut s = CcState { ssthresh: 20 * M, ..st(30) };
        let mut ev = event(Cause::Loss, 30 * M);
        ev.open_episode = Some(Cause::Ecn);
        assert_eq!(cc.on_congestion(&mut s, &p, &ev), Reaction::Prr { ssthresh: 20 * M });
        // Timeouts: halve on a fresh one, keep ssthresh on back-offs (cwnd is 1 MSS by then).
        let mut s = st(40);
        let r = cc.on_congestion(&mut s, &p, &event(Cause::Rto { backoffs: 0 }, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
        let mut s = CcState { ssthresh: 20 * M, ..st(1) };
        let r = cc.on_congestion(&mut s, &p, &event(Cause::Rto { backoffs: 2 }, M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
    }

    #[test]
    fn recovery_leaves_the_window_to_prr_but_keeps_sampling() {
        let mut cc = Ledbat::default();
        let mut s = st(10);
        let mut p = path(SEC);
        prime(&mut cc, SEC, 300 * MS);
        for state in [CaState::Recovery, CaState::Cwr] {
            p.state = state;
            cc.on_ack(&mut s, &p, &owd_ack(1, 320 * MS, 10 * M));
            assert_eq!(s.cwnd, 10 * M, "{state:?}");
            assert_eq!(cc.queuing_delay(), Some(300 * MS));
        }
        // After an RTO (Loss state) the rule runs again: far above target, down to MIN_CWND.
        p.state = CaState::Loss;
        prime(&mut cc, SEC, 10 * SEC);
        cc.on_ack(&mut s, &p, &owd_ack(1, 10_020 * MS, 10 * M));
        assert_eq!(s.cwnd, 2 * M);
    }

    #[test]
    fn slow_start_is_off_by_default_and_ends_near_the_target() {
        let p = path(SEC);
        let mut cc = Ledbat::default();
        let mut s = st(10);
        cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, 10 * M));
        assert_eq!(s.cwnd, 10_100, "no slow start: 100 B, not a segment");
        assert!(!cc.in_slow_start());

        let mut cc = with(&[("slow_start", ParamValue::Bool(true))]);
        let mut s = st(10);
        cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, 10 * M));
        assert_eq!(s.cwnd, 11 * M, "one segment per segment acknowledged");
        prime(&mut cc, SEC, 80 * MS);
        cc.on_ack(&mut s, &p, &owd_ack(1, 100 * MS, 11 * M));
        assert_eq!(s.cwnd, 12 * M, "80 ms of queueing: below 9/10 of the target");
        // The filter's minimum must pass 90 ms: fill it with 111 ms samples (91 ms queueing).
        for _ in 0..CURRENT_FILTER {
            cc.on_ack(&mut s, &p, &owd_ack(0, 111 * MS, 12 * M));
        }
        cc.on_ack(&mut s, &p, &owd_ack(1, 111 * MS, 12 * M));
        assert!(!cc.in_slow_start());
        assert_eq!(s.ssthresh, 12 * M, "libutp: ssthresh = window at exit");
        assert_eq!(s.cwnd, 12_007, "LEDBAT's rule from here: 0.09 · 1e6 / 12000 = 7.5 B");
        // Over ssthresh it ends too; a loss ends it; a timeout restarts it.
        let mut cc = with(&[("slow_start", ParamValue::Bool(true))]);
        let mut s = CcState { ssthresh: 10 * M, ..st(10) };
        cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, 10 * M));
        assert!(!cc.in_slow_start());
        assert_eq!(s.cwnd, 10_100);
        let mut cc = with(&[("slow_start", ParamValue::Bool(true))]);
        cc.on_congestion(&mut s, &p, &event(Cause::Loss, 10 * M));
        assert!(!cc.in_slow_start());
        cc.on_congestion(&mut s, &p, &event(Cause::Rto { backoffs: 0 }, 10 * M));
        assert!(cc.in_slow_start());
    }

    /// Without OWD the RTT samples drive the same estimators; with no sample at all the
    /// window stays where it is.
    #[test]
    fn without_owd_the_rtt_stands_in_and_without_any_sample_nothing_moves() {
        let p = path(SEC);
        let mut cc = Ledbat::default();
        let mut s = st(10);
        let mut a = ack(1);
        a.prior_inflight = 10 * M;
        a.rtt = None;
        cc.on_ack(&mut s, &p, &a);
        assert_eq!((s.cwnd, cc.queuing_delay()), (10 * M, None));

        let mut cc = Ledbat::default();
        let mut s = st(10);
        for rtt in [40 * MS, 65 * MS, 65 * MS, 65 * MS, 65 * MS] {
            a.rtt = Some(rtt);
            s.cwnd = 10 * M;
            cc.carry = 0.0;
            cc.on_ack(&mut s, &p, &a);
        }
        assert_eq!(cc.queuing_delay(), Some(25 * MS));
        assert_eq!(s.cwnd, 10_075);
        // Once OWD samples arrive they take over.
        a.owd = Some(7 * MS);
        cc.on_ack(&mut s, &p, &a);
        assert_eq!(cc.queuing_delay(), Some(0));
    }

    #[test]
    fn init_sets_the_rfc_initial_window() {
        let p = path(0);
        let mut s = st(10);
        Ledbat::default().init(&mut s, &p);
        assert_eq!(s.cwnd, 2 * M);
        let mut s = st(10);
        with(&[("init_cwnd", ParamValue::Int(0))]).init(&mut s, &p);
        assert_eq!(s.cwnd, 10 * M, "0 keeps the stack's initial window");
        let mut s = st(1);
        Ledbat::default().init(&mut s, &p);
        assert_eq!(s.cwnd, M, "never raised (a lost SYN leaves one segment)");
    }

    #[test]
    fn bad_params_name_the_key() {
        for (key, v) in [
            ("target", ParamValue::Str("-5ms".into())),
            ("target", ParamValue::Str("0ms".into())),
            ("target", ParamValue::Float(0.1)),
            ("gain", ParamValue::Float(0.0)),
            ("gain", ParamValue::Float(-1.0)),
            ("allowed_increase", ParamValue::Int(0)),
            ("min_cwnd", ParamValue::Int(0)),
            ("init_cwnd", ParamValue::Int(-2)),
            ("base_history", ParamValue::Int(0)),
            ("current_filter", ParamValue::Int(0)),
            ("slow_start", ParamValue::Str("yes".into())),
        ] {
            let mut p = Params::new();
            p.insert(key, v.clone());
            let e = LedbatConfig::from_params(&p).unwrap_err();
            assert_eq!(e.key, key, "{v:?}");
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn every_key_is_read_and_defaults_hold() {
        let cc = with(&[
            ("target", ParamValue::Str("25ms".into())),
            ("gain", ParamValue::Float(0.5)),
            ("allowed_increase", ParamValue::Int(2)),
            ("min_cwnd", ParamValue::Int(1)),
            ("init_cwnd", ParamValue::Int(4)),
            ("base_history", ParamValue::Int(2)),
            ("current_filter", ParamValue::Int(8)),
            ("slow_start", ParamValue::Bool(true)),
        ]);
        assert_eq!(
            cc.config(),
            &LedbatConfig {
                target: 25 * MS,
                gain: 0.5,
                allowed_increase: 2,
                min_cwnd: 1,
                init_cwnd: 4,
                base_history: 2,
                current_filter: 8,
                slow_start: true,
            }
        );
        assert_eq!(LedbatConfig::from_params(&Params::new()).unwrap(), LedbatConfig::default());
        assert_eq!(Ledbat::default().name(), "ledbat");
        assert_eq!(MSS as u64, M);
    }
}
