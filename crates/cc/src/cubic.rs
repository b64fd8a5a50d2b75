//! CUBIC (RFC 9438) with Linux `tcp_cubic.c` behaviour and HyStart (Ha & Rhee 2011).
//!
//! Windows are in segments as `f64` (`W = cwnd / MSS`), time in seconds. Equation numbers are
//! RFC 9438's:
//!
//! * Fig. 1, window curve: `W_cubic(t) = C * (t - K)^3 + W_max`.
//! * Fig. 2, `K = cbrt((W_max - cwnd_epoch) / C)`, computed at the start of each congestion
//!   avoidance epoch from the window at that moment. With no previous loss (or after an RTO,
//!   §4.8) Linux uses `K = 0` and the epoch's starting window as origin, so growth starts on
//!   the convex side.
//! * §4.2, target: `target = W_cubic(t + RTT)` clamped to `[W, 1.5 W]`; the window approaches it
//!   by `(target - W) / W` per segment acknowledged. `RTT` is the minimum RTT as in Linux
//!   (`delay_min`), or the smoothed RTT of the RFC, by configuration.
//! * §4.3, Reno-friendly region: `W_est += alpha * segments_acked / W` with
//!   `alpha = 3 (1 - beta) / (1 + beta)`, switching to 1 once `W_est >= cwnd_prior`; when
//!   `W_est` is above `W`, CUBIC grows at least as fast as Reno would.
//! * §4.6-4.7, decrease: `ssthresh = max(beta * cwnd, 2)` (Linux uses cwnd; flight size is an
//!   option), and with fast convergence `W_max = W (1 + beta) / 2` when `W` is below the
//!   previous `W_max`.
//! * §4.8, RTO: ssthresh as above on the first expiry only; `W_max` is forgotten (Linux resets
//!   `last_max_cwnd` on entering `TCP_CA_Loss`) and HyStart is re-armed.
//! * ABE (RFC 8511 §3.1, `beta_ecn`): an ECN-Echo cuts by `beta_ecn`, a loss by `beta`, in
//!   congestion avoidance and at the end of slow start alike. The ECN cut sets `W_max` like a
//!   loss does (the window at the signal), and fast convergence lowers it to
//!   `W (1 + beta_ecn) / 2`, so with ABE the plateau falls less as well; the Reno-friendly
//!   `alpha` stays tied to the loss `beta` (RFC 8511 leaves it; Linux computes it from `beta`
//!   once). A loss inside an episode an ECN-Echo opened (`CongestionEvent::open_episode`) does
//!   not cut again from the shrinking window: ssthresh deepens to what the loss cut would have
//!   given, `ssthresh · beta / beta_ecn`, and `W_max` keeps the ECN cut's value. With
//!   `beta_ecn = beta` that keeps ssthresh, as Linux's `tcp_enter_recovery` does when the
//!   loss finds it already reducing in CWR.
//! * §5.8, application-limited / idle: the epoch start is shifted by the idle time (Linux
//!   `CA_EVENT_TX_START`) so that the curve does not leap forward after a pause.
//!
//! Linux details kept on purpose: per-ACK growth is expressed as `cnt`, the number of credited
//! segments per `+1` segment, accumulated like `tcp_cong_avoid_ai`; `cnt >= 2` (at most 1.5×
//! per RTT); and before any loss `cnt <= 20`, so that growth after slow start is at least ~5%
//! per RTT.
//!
//! HyStart (Linux `hystart_detect = 3`): while in slow start with `cwnd >= 16` segments, end slow
//! start (`ssthresh = cwnd`) when either the ACK train of the current round, measured from the
//! round start, grows longer than `min_rtt / 2`, or the minimum RTT of the round's first 8
//! samples exceeds `min_rtt + clamp(min_rtt / 8, 4 ms, 16 ms)`.
//!
//! Slow start itself is RFC 3465 byte counting, shared with NewReno.

use crate::newreno::{
    growth_allowed, loss_in_ecn_episode, reduced_ssthresh, slow_start, SsthreshBase, ABC_L,
};
use crate::{
    segments, AckSample, Cause, CcState, CongestionControl, CongestionEvent, Nanos, ParamError, Params,
    PathInfo, Reaction, NANOS_PER_SEC,
};

/// RFC 9438 §4.1.1 `C` (segments / s³). Linux `bic_scale = 41` gives 0.4004.
pub const CUBIC_C: f64 = 0.4;
/// RFC 9438 §4.1.1 `beta_cubic`. Linux `beta = 717/1024`.
pub const BETA_CUBIC: f64 = 0.7;

/// Linux `hystart_low_window`: HyStart ignores windows below this many segments, where the
/// signals are too noisy to be worth acting on.
pub const HYSTART_LOW_WINDOW: u64 = 16;
/// Linux `hystart_ack_delta_us`: ACKs closer than this belong to one train.
pub const HYSTART_ACK_DELTA: Nanos = 2_000_000;
/// Linux `HYSTART_MIN_SAMPLES`: RTT samples per round for the delay detector.
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// Linux `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX`: bounds of the delay increase `eta`.
pub const HYSTART_DELAY_MIN: Nanos = 4_000_000;
pub const HYSTART_DELAY_MAX: Nanos = 16_000_000;

/// Linux: before the first loss the curve's `cnt` is capped here (≥ 5% growth per RTT).
const NO_LOSS_MAX_CNT: f64 = 20.0;
/// Linux: below the target, `cnt = 100 * W`, i.e. almost no growth.
const FLAT_CNT_FACTOR: f64 = 100.0;
/// `target <= 1.5 W` (RFC 9438 §4.2), which is `cnt >= 2` in Linux's form.
const MIN_CNT: f64 = 2.0;

/// Which RTT stands in for `RTT` in `W_cubic(t + RTT)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttSource {
    /// The minimum RTT CUBIC itself has seen since the last timeout (Linux `delay_min`).
    /// Parameter value `"min_rtt"`.
    MinRtt,
    /// The smoothed RTT (RFC 9438). Parameter value `"srtt"`.
    Srtt,
}

/// Which HyStart detectors run (Linux `hystart_detect` bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HystartDetect {
    pub ack_train: bool,
    pub delay: bool,
}

/// CUBIC parameters. Scenario keys are given per field.
#[derive(Clone, Debug, PartialEq)]
pub struct CubicConfig {
    /// `C`, default 0.4. Key `c`.
    pub c: f64,
    /// `beta_cubic`, the factor on loss, default 0.7. Key `beta`.
    pub beta: f64,
    /// Factor on an ECN-Echo (ABE, RFC 8511), default `beta` (plain RFC 3168); the ABE paper
    /// suggests about 0.85 for CUBIC. It replaces beta in the plateau's fast-convergence rule
    /// too; CUBIC's Reno-friendly `alpha` stays tied to the loss `beta`. Key `beta_ecn`.
    pub beta_ecn: f64,
    /// RFC 9438 §4.7, default on. Key `fast_convergence`.
    pub fast_convergence: bool,
    /// Reno-friendly region (§4.3; Linux `tcp_friendliness`), default on. Key `tcp_friendliness`.
    pub tcp_friendliness: bool,
    /// RTT used for the target, default min RTT (Linux). Key `rtt_for_target` (`"min_rtt"`/`"srtt"`).
    pub rtt_for_target: RttSource,
    /// Base of the decrease, default cwnd (Linux, ns-3). Key `ssthresh_from` (`"cwnd"`/`"flight"`).
    pub ssthresh_from: SsthreshBase,
    /// RFC 3465 `L` in segments for slow start; 0 (default) = no limit, as Linux. Key `abc_limit`.
    pub abc_limit: u64,
    /// HyStart on/off, default on. Key `hystart`.
    pub hystart: bool,
    /// Detectors, default both. Key `hystart_detect` (`"both"`/`"ack_train"`/`"delay"`).
    pub hystart_detect: HystartDetect,
    /// Segments, default 16. Key `hystart_low_window`.
    pub hystart_low_window: u64,
    /// Default 2 ms. Key `hystart_ack_delta_ms`.
    pub hystart_ack_delta: Nanos,
    /// Default 8. Key `hystart_min_samples`.
    pub hystart_min_samples: u32,
    /// Lower clamp of `eta`, default 4 ms. Key `hystart_delay_min_ms`.
    pub hystart_delay_min: Nanos,
    /// Upper clamp of `eta`, default 16 ms. Key `hystart_delay_max_ms`.
    pub hystart_delay_max: Nanos,
}

impl Default for CubicConfig {
    fn default() -> Self {
        Self {
            c: CUBIC_C,
            beta: BETA_CUBIC,
            beta_ecn: BETA_CUBIC,
            fast_convergence: true,
            tcp_friendliness: true,
            rtt_for_target: RttSource::MinRtt,
            ssthresh_from: SsthreshBase::Cwnd,
            abc_limit: ABC_L,
            hystart: true,
            hystart_detect: HystartDetect { ack_train: true, delay: true },
            hystart_low_window: HYSTART_LOW_WINDOW,
            hystart_ack_delta: HYSTART_ACK_DELTA,
            hystart_min_samples: HYSTART_MIN_SAMPLES,
            hystart_delay_min: HYSTART_DELAY_MIN,
            hystart_delay_max: HYSTART_DELAY_MAX,
        }
    }
}

fn ms_to_nanos(ms: f64) -> Nanos {
    (ms * 1e6).round() as Nanos
}

impl CubicConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let rtt_for_target = match p.choice("rtt_for_target", "min_rtt", &["min_rtt", "srtt"])?.as_str() {
            "srtt" => RttSource::Srtt,
            _ => RttSource::MinRtt,
        };
        let hystart_detect =
            match p.choice("hystart_detect", "both", &["both", "ack_train", "delay"])?.as_str() {
                "ack_train" => HystartDetect { ack_train: true, delay: false },
                "delay" => HystartDetect { ack_train: false, delay: true },
                _ => HystartDetect { ack_train: true, delay: true },
            };
        let c = p.f64_in("c", d.c, 0.001, 100.0)?;
        let beta = p.f64_in("beta", d.beta, 0.01, 0.99)?;
        let cfg = Self {
            c,
            beta,
            beta_ecn: p.f64_in("beta_ecn", beta, 0.01, 0.99)?,
            fast_convergence: p.bool("fast_convergence", d.fast_convergence)?,
            tcp_friendliness: p.bool("tcp_friendliness", d.tcp_friendliness)?,
            rtt_for_target,
            ssthresh_from: SsthreshBase::from_params(p)?,
            abc_limit: p.u64_in("abc_limit", d.abc_limit, 0, 1_000_000)?,
            hystart: p.bool("hystart", d.hystart)?,
            hystart_detect,
            hystart_low_window: p.u64_in("hystart_low_window", d.hystart_low_window, 2, 1 << 32)?,
            hystart_ack_delta: ms_to_nanos(p.f64_in("hystart_ack_delta_ms", 2.0, 0.0, 1000.0)?),
            hystart_min_samples: p.u64_in("hystart_min_samples", d.hystart_min_samples as u64, 1, 1000)?
                as u32,
            hystart_delay_min: ms_to_nanos(p.f64_in("hystart_delay_min_ms", 4.0, 0.0, 10_000.0)?),
            hystart_delay_max: ms_to_nanos(p.f64_in("hystart_delay_max_ms", 16.0, 0.0, 10_000.0)?),
        };
        if cfg.hystart_delay_max < cfg.hystart_delay_min {
            return Err(ParamError {
                key: "hystart_delay_max_ms".into(),
                message: "must not be below hystart_delay_min_ms".into(),
            });
        }
        Ok(cfg)
    }

    /// RFC 9438 §4.3: Reno-friendly additive increase that matches Reno's average window.
    pub fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }
}

/// Per-round HyStart state (Linux `bictcp` hystart fields).
#[derive(Clone, Copy, Debug)]
struct Hystart {
    /// Slow start was already ended by HyStart; stays set until an RTO (Linux `found`).
    found: bool,
    round_start: Option<Nanos>,
    last_ack: Nanos,
    curr_rtt: Nanos,
    sample_cnt: u32,
}

impl Hystart {
    fn new() -> Self {
        Self { found: false, round_start: None, last_ack: 0, curr_rtt: Nanos::MAX, sample_cnt: 0 }
    }

    fn new_round(&mut self, now: Nanos) {
        self.round_start = Some(now);
        self.last_ack = now;
        self.curr_rtt = Nanos::MAX;
        self.sample_cnt = 0;
    }
}

/// The CUBIC controller ("cubic").
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    /// `W_max` in segments; 0 = no loss since start or since the last RTO (Linux `last_max_cwnd`).
    w_max: f64,
    /// Window (segments) at the last reduction, for the §4.3 alpha switch; 0 before any.
    cwnd_prior: f64,
    /// Seconds from the epoch start until the curve reaches its origin.
    k: f64,
    /// Plateau of the current curve (W_max, or the epoch's starting window without a loss).
    origin: f64,
    epoch_start: Option<Nanos>,
    /// Reno-friendly estimate, segments.
    w_est: f64,
    /// Credited segments towards the next `+1` segment.
    cwnd_cnt: f64,
    /// Last computed segments-per-increment.
    cnt: f64,
    hystart: Hystart,
    /// Linux `delay_min`: the smallest RTT sample since the last timeout, skipping samples in
    /// the first second of an epoch (right after a reduction). Not the stack's 10 s windowed
    /// minimum, which rises under a standing queue and would change multi-flow shares.
    delay_min: Option<Nanos>,
}

/// Linux `bictcp_acked`: samples this soon after an epoch starts are discarded (`HZ`).
const DELAY_SAMPLE_HOLDOFF: Nanos = NANOS_PER_SEC;

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        Self {
            cfg,
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            origin: 0.0,
            epoch_start: None,
            w_est: 0.0,
            cwnd_cnt: 0.0,
            cnt: 0.0,
            hystart: Hystart::new(),
            delay_min: None,
        }
    }

    /// The minimum RTT CUBIC keeps (Linux `delay_min`), if it has a sample.
    pub fn delay_min(&self) -> Option<Nanos> {
        self.delay_min
    }

    /// Linux `bictcp_acked`: keep the all-time minimum, except right after a reduction.
    fn sample_delay(&mut self, now: Nanos, rtt: Option<Nanos>) {
        let Some(rtt) = rtt else { return };
        if self.epoch_start.is_some_and(|e| now.saturating_sub(e) < DELAY_SAMPLE_HOLDOFF) {
            return;
        }
        let rtt = rtt.max(1);
        self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
    }

    /// Linux `bictcp_state(TCP_CA_Loss)`: every timeout forgets the curve, the minimum delay
    /// and HyStart (`bictcp_reset`, `bictcp_hystart_reset`).
    fn reset_on_loss(&mut self) {
        self.w_max = 0.0;
        self.k = 0.0;
        self.origin = 0.0;
        self.w_est = 0.0;
        self.hystart = Hystart::new();
        self.delay_min = None;
        self.reset_epoch();
    }

    pub fn config(&self) -> &CubicConfig {
        &self.cfg
    }

    /// `W_max` in segments (0 when no loss is remembered).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// `K` in seconds of the current (or, right after a reduction, the coming) epoch.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// The curve's plateau: `W_max`, or the epoch's starting window when no loss is remembered.
    pub fn origin(&self) -> f64 {
        self.origin
    }

    /// `W_cubic(t)` in segments, `t` in seconds since the epoch start (RFC 9438 Fig. 1).
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.origin + self.cfg.c * (t - self.k).powi(3)
    }

    /// The Reno-friendly estimate `W_est` in segments.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    pub fn cwnd_prior(&self) -> f64 {
        self.cwnd_prior
    }

    pub fn epoch_start(&self) -> Option<Nanos> {
        self.epoch_start
    }

    /// Credited segments per `+1` segment computed on the last congestion-avoidance ACK.
    pub fn cnt(&self) -> f64 {
        self.cnt
    }

    /// HyStart ended slow start since the last RTO.
    pub fn hystart_found(&self) -> bool {
        self.hystart.found
    }

    /// Decrease factor for a congestion signal: `beta_ecn` for an ECN-Echo (ABE, RFC 8511).
    pub fn beta_for(&self, cause: Cause) -> f64 {
        match cause {
            Cause::Ecn => self.cfg.beta_ecn,
            _ => self.cfg.beta,
        }
    }

    fn target_rtt(&self, path: &PathInfo) -> Nanos {
        let (first, second) = match self.cfg.rtt_for_target {
            RttSource::MinRtt => (self.delay_min, path.srtt),
            RttSource::Srtt => (path.srtt, self.delay_min),
        };
        first.or(second).unwrap_or(0)
    }

    /// Linux `bictcp_update` in floating point: how many credited segments per `+1` segment.
    fn update_cnt(&mut self, path: &PathInfo, w: f64, segs: u32) -> f64 {
        let c = self.cfg.c;
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(path.now);
                self.cwnd_cnt = 0.0;
                self.w_est = w;
                if self.w_max > w {
                    self.k = ((self.w_max - w) / c).cbrt();
                    self.origin = self.w_max;
                } else {
                    self.k = 0.0;
                    self.origin = w;
                }
                path.now
            }
        };
        let t = path.now.saturating_sub(epoch) as f64 / NANOS_PER_SEC as f64;
        let rtt = self.target_rtt(path) as f64 / NANOS_PER_SEC as f64;
        let target = self.w_cubic(t + rtt).min(1.5 * w);
        let mut cnt = if target > w { w / (target - w) } else { FLAT_CNT_FACTOR * w };
        if self.w_max == 0.0 {
            cnt = cnt.min(NO_LOSS_MAX_CNT);
        }
        if self.cfg.tcp_friendliness {
            // RFC 9438 §4.3: once the estimate has regained the pre-loss window, Reno's own
            // rate (alpha = 1) is the fair comparison.
            let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { self.cfg.alpha_cubic() };
            self.w_est += alpha * segs as f64 / w;
            if self.w_est > w {
                cnt = cnt.min(w / (self.w_est - w));
            }
        }
        cnt.max(MIN_CNT)
    }

    fn congestion_avoidance(&mut self, st: &mut CcState, path: &PathInfo, segs: u32) {
        let mss = path.mss as u64;
        let w = segments(st.cwnd, path.mss);
        let cnt = self.update_cnt(path, w, segs);
        self.cnt = cnt;
        // As in `tcp_cong_avoid_ai`: credit banked under a larger `cnt` buys one segment, not a
        // burst, when the curve suddenly steepens.
        if self.cwnd_cnt >= cnt {
            self.cwnd_cnt = 0.0;
            st.cwnd = st.cwnd.saturating_add(mss);
        }
        self.cwnd_cnt += segs as f64;
        if self.cwnd_cnt >= cnt {
            let delta = (self.cwnd_cnt / cnt).floor();
            self.cwnd_cnt -= delta * cnt;
            st.cwnd = st.cwnd.saturating_add(delta as u64 * mss);
        }
    }
}

/// Linux `hystart_ack_delay`: how much an ACK train may be stretched by the sender's own
/// bursts, min(1 ms, 4 GSO frames at the pacing rate). Linux computes `sk_pacing_rate` for
/// every socket (2·cwnd/SRTT in slow start) even when nothing paces; we do the same here.
fn hystart_ack_delay(st: &CcState, path: &PathInfo) -> Nanos {
    const GSO_MAX_SIZE: f64 = 65_536.0;
    const CAP: Nanos = 1_000_000;
    let rate = st.pacing_rate.or_else(|| {
        let srtt = path.srtt.filter(|&s| s > 0)? as f64 / 1e9;
        Some(2.0 * st.cwnd as f64 / srtt)
    });
    match rate {
        Some(r) if r > 0.0 => ((4.0 * GSO_MAX_SIZE / r * 1e9) as Nanos).min(CAP),
        _ => 0,
    }
}

impl Cubic {
    /// Linux `hystart_update`. Runs before growth so that an exit takes effect on this ACK.
    fn hystart_update(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        let Some(min_rtt) = self.delay_min else { return };
        let h = &mut self.hystart;
        let Some(round_start) = h.round_start else {
            return;
        };
        let now = path.now;
        if self.cfg.hystart_detect.ack_train && now.saturating_sub(h.last_ack) <= self.cfg.hystart_ack_delta {
            h.last_ack = now;
            // Linux: an unpaced sender's ACK train covers at most half the path's RTT before
            // the bottleneck queue starts to build; a paced one spreads over the whole RTT.
            let threshold = min_rtt + hystart_ack_delay(st, path);
            let threshold = if st.pacing_rate.is_some() { threshold } else { threshold / 2 };
            if now.saturating_sub(round_start) > threshold {
                h.found = true;
            }
        }
        if self.cfg.hystart_detect.delay && !h.found {
            if let Some(rtt) = ack.rtt {
                h.curr_rtt = h.curr_rtt.min(rtt.max(1));
                // Linux collects `HYSTART_MIN_SAMPLES` first and judges from the next one on.
                if h.sample_cnt < self.cfg.hystart_min_samples {
                    h.sample_cnt += 1;
                } else {
                    let eta = (min_rtt / 8).clamp(self.cfg.hystart_delay_min, self.cfg.hystart_delay_max);
                    if h.curr_rtt > min_rtt + eta {
                        h.found = true;
                    }
                }
            }
        }
        if h.found {
            st.ssthresh = st.cwnd;
        }
    }

    fn reset_epoch(&mut self) {
        self.epoch_start = None;
        self.cwnd_cnt = 0.0;
    }
}

impl Default for Cubic {
    fn default() -> Self {
        Self::new(CubicConfig::default())
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, _st: &mut CcState, _path: &PathInfo) {
        *self = Self::new(self.cfg.clone());
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        self.sample_delay(path.now, ack.rtt);
        if self.cfg.hystart {
            if ack.round_start {
                self.hystart.new_round(path.now);
            }
            let low = self.cfg.hystart_low_window.saturating_mul(path.mss as u64);
            if !self.hystart.found && st.in_slow_start() && st.cwnd >= low && growth_allowed(path, ack) {
                self.hystart_update(st, path, ack);
            }
        }
        if !growth_allowed(path, ack) {
            return;
        }
        let mut segs = ack.segments_acked;
        if st.in_slow_start() {
            segs = slow_start(st, path, ack, self.cfg.abc_limit);
            if segs == 0 {
                return;
            }
        }
        self.congestion_avoidance(st, path, segs);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        if let Cause::Rto { backoffs } = ev.cause {
            if backoffs > 0 {
                // The same data timed out again: ssthresh stays, the Loss state resets CUBIC.
                self.reset_on_loss();
                return Reaction::Prr { ssthresh: st.ssthresh };
            }
        }
        let mss = path.mss;
        if let (Cause::Loss, Some(Cause::Ecn)) = (ev.cause, ev.open_episode) {
            // The plateau was set by the ECN cut; only ssthresh deepens to the loss cut.
            return Reaction::Prr {
                ssthresh: loss_in_ecn_episode(st, self.cfg.beta, self.cfg.beta_ecn, mss),
            };
        }
        let beta = self.beta_for(ev.cause);
        let w = segments(st.cwnd, mss);
        self.cwnd_prior = w;
        // RFC 9438 §4.7: a window that peaks below the last one means a new flow is taking
        // its share; release bandwidth faster by lowering the plateau — halfway between the
        // new and the old window for the factor of this reduction (`beta_ecn` for ABE).
        self.w_max = if self.cfg.fast_convergence && w < self.w_max { w * (1.0 + beta) / 2.0 } else { w };
        let ssthresh = reduced_ssthresh(self.cfg.ssthresh_from.bytes(st, ev), beta, mss);
        self.reset_epoch();
        // K and origin as the next epoch will see them if it starts at cwnd = ssthresh; the
        // epoch start recomputes both from the actual window.
        let ss_seg = segments(ssthresh, mss);
        self.k = ((self.w_max - ss_seg).max(0.0) / self.cfg.c).cbrt();
        self.origin = self.w_max;
        match ev.cause {
            // How fast cwnd follows (PRR in Linux, at once in FreeBSD) is the stack's business.
            Cause::Loss | Cause::Ecn => Reaction::Prr { ssthresh },
            Cause::Rto { .. } => {
                // §4.8 / Linux TCP_CA_Loss: forget the plateau (K = 0, origin = window at the
                // next CA start), the minimum delay, and re-arm HyStart for the slow start.
                self.reset_on_loss();
                Reaction::Prr { ssthresh }
            }
        }
    }

    fn on_idle_restart(&mut self, _st: &mut CcState, path: &PathInfo, idle: Nanos) {
        if let Some(e) = self.epoch_start {
            self.epoch_start = Some(e.saturating_add(idle).min(path.now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::newreno::tests::{ack, event, path, M, MSS};
    use crate::{CaState, ParamValue, Params};

    const MS: Nanos = 1_000_000;

    fn st(cwnd_segs: f64, ssthresh: u64) -> CcState {
        CcState { cwnd: (cwnd_segs * M as f64) as u64, ssthresh, pacing_rate: None }
    }

    fn segs(s: &CcState) -> f64 {
        segments(s.cwnd, MSS)
    }

    /// Drive congestion avoidance with one ACK per segment, evenly spaced over each RTT.
    /// Returns the time reached. `until` is in nanoseconds since `start`.
    fn drive(cc: &mut Cubic, s: &mut CcState, start: Nanos, rtt: Nanos, until: Nanos) -> Nanos {
        let mut now = start;
        while now < start + until {
            let n = (s.cwnd / M).max(1);
            let batch = now;
            for i in 0..n {
                now = batch + rtt * (i + 1) / n;
                let mut p = path(now);
                p.min_rtt = Some(rtt);
                p.srtt = Some(rtt);
                let mut a = ack(1);
                a.rtt = Some(rtt);
                cc.on_ack(s, &p, &a);
            }
        }
        now
    }

    /// Loss at `w` segments with the stack's PRR collapsed: cwnd = ssthresh afterwards.
    fn lose(cc: &mut Cubic, s: &mut CcState, now: Nanos) {
        match cc.on_congestion(s, &path(now), &event(Cause::Loss, s.cwnd)) {
            Reaction::Prr { ssthresh } => {
                s.ssthresh = ssthresh;
                s.cwnd = ssthresh;
            }
            r => panic!("unexpected {r:?}"),
        }
    }

    #[test]
    fn worked_oracle_from_the_notes() {
        let mut cc = Cubic::default();
        let mut s = st(100.0, 50 * M);
        let r = cc.on_congestion(&mut s, &path(0), &event(Cause::Loss, 100 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 70 * M });
        assert_eq!(cc.w_max(), 100.0);
        assert!((cc.k() - 75f64.cbrt()).abs() < 1e-9);
        assert!((cc.k() - 4.217).abs() < 1e-3, "K = {}", cc.k());
        assert!((cc.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((cc.w_cubic(cc.k()) - 100.0).abs() < 1e-9);
        assert!((cc.config().alpha_cubic() - 0.529_411_764_7).abs() < 1e-6);
        assert_eq!(cc.cwnd_prior(), 100.0);

        // The epoch that starts at cwnd = 70 reproduces the same K.
        s.cwnd = 70 * M;
        s.ssthresh = 70 * M;
        cc.on_ack(&mut s, &path(1), &ack(1));
        assert_eq!(cc.epoch_start(), Some(1));
        assert!((cc.k() - 4.217).abs() < 1e-3);
        assert_eq!(cc.origin(), 100.0);
    }

    #[test]
    fn ssthresh_floor_is_two_segments_and_flight_option() {
        let mut cc = Cubic::default();
        let mut s = st(2.0, u64::MAX);
        assert_eq!(
            cc.on_congestion(&mut s, &path(0), &event(Cause::Loss, 2 * M)),
            Reaction::Prr { ssthresh: 2 * M }
        );

        let mut p = Params::new();
        p.insert("ssthresh_from", ParamValue::Str("flight".into()));
        let mut cc = Cubic::new(CubicConfig::from_params(&p).unwrap());
        let mut s = st(100.0, u64::MAX);
        let r = cc.on_congestion(&mut s, &path(0), &event(Cause::Loss, 50 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 35 * M });
        // W_max still follows cwnd, like Linux.
        assert_eq!(cc.w_max(), 100.0);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut cc = Cubic::default();
        let mut s = st(100.0, u64::MAX);
        lose(&mut cc, &mut s, 0);
        assert_eq!(cc.w_max(), 100.0);
        // Next loss below the previous plateau.
        s.cwnd = 80 * M;
        lose(&mut cc, &mut s, 1);
        assert!((cc.w_max() - 80.0 * 1.7 / 2.0).abs() < 1e-9, "{}", cc.w_max());
        assert_eq!(s.ssthresh, 56 * M);
        // A loss above the plateau takes the window as is.
        s.cwnd = 90 * M;
        lose(&mut cc, &mut s, 2);
        assert_eq!(cc.w_max(), 90.0);

        let mut p = Params::new();
        p.insert("fast_convergence", ParamValue::Bool(false));
        let mut cc = Cubic::new(CubicConfig::from_params(&p).unwrap());
        let mut s = st(100.0, u64::MAX);
        lose(&mut cc, &mut s, 0);
        s.cwnd = 80 * M;
        lose(&mut cc, &mut s, 1);
        assert_eq!(cc.w_max(), 80.0);
    }

    #[test]
    fn ack_clock_reaches_w_max_at_k_and_exceeds_it_after() {
        let rtt = 100 * MS;
        let mut cc = Cubic::default();
        let mut s = st(100.0, u64::MAX);
        lose(&mut cc, &mut s, 0);
        assert_eq!(s.cwnd, 70 * M);
        let k = cc.k();
        let start = 1_000 * MS;
        // A little before K: the window is on its way up but below the plateau.
        let now = drive(&mut cc, &mut s, start, rtt, ((k - 1.5) * 1e9) as u64);
        let w_early = segs(&s);
        assert!(w_early > 85.0 && w_early < 100.0, "W at K-1.5s = {w_early}");
        let now = drive(&mut cc, &mut s, now, rtt, start + (k * 1e9) as u64 - now);
        let w_k = segs(&s);
        assert!((w_k - 100.0).abs() <= 3.0, "W at K = {w_k}");
        // Plateau: within 2 s around K the window barely moves (concave/convex flat part).
        let now2 = drive(&mut cc, &mut s, now, rtt, 1_000 * MS);
        assert!(segs(&s) - w_k < 3.0, "plateau growth {}", segs(&s) - w_k);
        // Well after K the convex part takes the window beyond W_max.
        let end = drive(&mut cc, &mut s, now2, rtt, 3_000 * MS);
        let w_late = segs(&s);
        let t = (end - cc.epoch_start().unwrap()) as f64 / 1e9;
        assert!(t > k + 3.9, "t = {t}");
        assert!(w_late > 105.0, "W at K+4s = {w_late}");
        // The window follows the curve one RTT ahead at most.
        assert!(w_late <= cc.w_cubic(t + 0.1) + 1.0, "W {w_late} ahead of the curve {}", cc.w_cubic(t + 0.1));
        assert!(w_late >= cc.w_cubic(t) - 3.0, "W {w_late} behind the curve {}", cc.w_cubic(t));
    }

    #[test]
    fn reno_friendly_region_dominates_at_short_rtt() {
        let rtt = MS;
        let rtts = 100u64;
        let run = |friendly: bool| {
            let mut p = Params::new();
            p.insert("tcp_friendliness", ParamValue::Bool(friendly));
            let mut cc = Cubic::new(CubicConfig::from_params(&p).unwrap());
            let mut s = st(20.0, u64::MAX);
            lose(&mut cc, &mut s, 0);
            assert_eq!(s.cwnd, 14 * M);
            drive(&mut cc, &mut s, 0, rtt, rtts * rtt);
            (segs(&s), cc.w_est())
        };
        let (w, w_est) = run(true);
        let alpha = CubicConfig::default().alpha_cubic();
        assert!(w - 14.0 >= alpha * rtts as f64, "grew {} in {rtts} RTTs", w - 14.0);
        assert!(w_est > 20.0, "W_est should pass cwnd_prior and switch alpha to 1: {w_est}");
        let (w_plain, _) = run(false);
        assert!(w_plain - 14.0 < 3.0, "pure cubic curve is nearly flat here: {w_plain}");
    }

    #[test]
    fn no_loss_growth_is_at_least_five_percent_per_rtt() {
        let rtt = 100 * MS;
        let mut cc = Cubic::default();
        // Slow start ended without loss (e.g. by HyStart): W_max = 0.
        let mut s = st(100.0, 100 * M);
        let mut now = drive(&mut cc, &mut s, 0, rtt, rtt);
        assert_eq!(cc.w_max(), 0.0);
        assert_eq!(cc.k(), 0.0);
        for _ in 0..5 {
            let before = segs(&s);
            now = drive(&mut cc, &mut s, now, rtt, rtt);
            assert!(segs(&s) >= before * 1.045, "{before} -> {}", segs(&s));
            assert!(cc.cnt() <= 20.0);
        }
    }

    #[test]
    fn growth_never_exceeds_one_and_a_half_per_rtt() {
        let rtt = 100 * MS;
        let mut cc = Cubic::default();
        let mut s = st(100.0, u64::MAX);
        lose(&mut cc, &mut s, 0);
        s.cwnd = 20 * M;
        s.ssthresh = 20 * M;
        // Start the epoch, then jump far beyond K so that the curve is steep.
        let mut now = drive(&mut cc, &mut s, 0, rtt, rtt);
        now += 30 * NANOS_PER_SEC;
        assert!(cc.w_cubic(30.0) > 1000.0);
        for _ in 0..5 {
            let before = segs(&s);
            now = drive(&mut cc, &mut s, now, rtt, rtt);
            assert!(segs(&s) <= before * 1.5 + 1.0, "{before} -> {}", segs(&s));
            assert!(segs(&s) >= before * 1.4, "{before} -> {}", segs(&s));
        }
    }

    #[test]
    fn no_growth_in_recovery_or_when_not_cwnd_limited() {
        let mut cc = Cubic::default();
        for (limited, state) in [(false, CaState::Open), (true, CaState::Recovery), (true, CaState::Cwr)] {
            for ssthresh in [u64::MAX, 10 * M] {
                let mut s = st(20.0, ssthresh);
                for i in 0..200 {
                    let mut p = path(i * MS);
                    p.is_cwnd_limited = limited;
                    p.state = state;
                    cc.on_ack(&mut s, &p, &ack(1));
                }
                assert_eq!(s.cwnd, 20 * M);
            }
        }
    }

    #[test]
    fn ecn_reduces_like_a_loss_and_rto_resets() {
        let mut cc = Cubic::default();
        let mut s = st(100.0, u64::MAX);
        let r = cc.on_congestion(&mut s, &path(0), &event(Cause::Ecn, 100 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 70 * M });
        assert_eq!(cc.w_max(), 100.0);

        s.cwnd = 70 * M;
        s.ssthresh = 70 * M;
        drive(&mut cc, &mut s, 0, 100 * MS, 500 * MS);
        assert!(cc.epoch_start().is_some());
        let w = s.cwnd;
        let r = cc.on_congestion(&mut s, &path(0), &event(Cause::Rto { backoffs: 0 }, w));
        assert_eq!(r, Reaction::Prr { ssthresh: reduced_ssthresh(w, 0.7, MSS) });
        assert_eq!(cc.w_max(), 0.0);
        assert_eq!(cc.k(), 0.0);
        assert!(cc.epoch_start().is_none());
        s.ssthresh = reduced_ssthresh(w, 0.7, MSS);
        s.cwnd = M;
        let r = cc.on_congestion(&mut s, &path(0), &event(Cause::Rto { backoffs: 1 }, M));
        assert_eq!(r, Reaction::Prr { ssthresh: s.ssthresh });

        // First CA stage after the RTO: K = 0, origin = the window at its start.
        s.cwnd = s.ssthresh;
        cc.on_ack(&mut s, &path(10 * NANOS_PER_SEC), &ack(1));
        assert_eq!(cc.k(), 0.0);
        assert!((cc.origin() - s.ssthresh as f64 / M as f64).abs() < 1e-9);
    }

    #[test]
    fn idle_restart_shifts_the_epoch() {
        let mut cc = Cubic::default();
        let mut s = st(100.0, u64::MAX);
        lose(&mut cc, &mut s, 0);
        cc.on_ack(&mut s, &path(1_000 * MS), &ack(1));
        assert_eq!(cc.epoch_start(), Some(1_000 * MS));
        cc.on_idle_restart(&mut s, &path(5_000 * MS), 3_000 * MS);
        assert_eq!(cc.epoch_start(), Some(4_000 * MS));
        // Never into the future.
        cc.on_idle_restart(&mut s, &path(5_000 * MS), 60_000 * MS);
        assert_eq!(cc.epoch_start(), Some(5_000 * MS));
    }

    /// One slow-start round: a round-start ACK then `n - 1` more, `gap` apart, all with `rtt`.
    fn ss_round(
        cc: &mut Cubic,
        s: &mut CcState,
        now: &mut Nanos,
        n: u32,
        gap: Nanos,
        rtt: Nanos,
        min_rtt: Nanos,
    ) {
        // As if CUBIC had already seen the path's minimum RTT (its own `delay_min`).
        cc.delay_min = Some(cc.delay_min.map_or(min_rtt, |d| d.min(min_rtt)));
        for i in 0..n {
            *now += gap;
            let mut p = path(*now);
            p.min_rtt = Some(min_rtt);
            let mut a = ack(1);
            a.rtt = Some(rtt);
            a.round_start = i == 0;
            cc.on_ack(s, &p, &a);
        }
    }

    #[test]
    fn hystart_delay_detector_exits_on_rtt_rise() {
        let min_rtt = 100 * MS; // eta = clamp(12.5 ms, 4, 16) = 12.5 ms
        let mut cc = Cubic::default();
        let mut s = st(20.0, u64::MAX);
        let mut now = 0;
        // 5 ms between ACKs: no ACK train.
        ss_round(&mut cc, &mut s, &mut now, 8, 5 * MS, min_rtt + 13 * MS, min_rtt);
        assert!(!cc.hystart_found(), "Linux collects 8 samples and judges from the 9th");
        assert_eq!(s.ssthresh, u64::MAX);
        let mut p = path(now + 5 * MS);
        p.min_rtt = Some(min_rtt);
        let mut a = ack(1);
        a.rtt = Some(min_rtt + 13 * MS);
        cc.on_ack(&mut s, &p, &a);
        assert!(cc.hystart_found());
        assert_eq!(s.ssthresh, 28 * M, "ssthresh = cwnd at detection");
        assert_eq!(s.cwnd, 28 * M, "no slow-start growth on the exiting ACK");
        assert!(!s.in_slow_start());
    }

    #[test]
    fn hystart_delay_detector_stays_quiet_below_eta() {
        let min_rtt = 100 * MS;
        let mut cc = Cubic::default();
        let mut s = st(20.0, u64::MAX);
        let mut now = 0;
        for _ in 0..3 {
            let n = (s.cwnd / M) as u32;
            ss_round(&mut cc, &mut s, &mut now, n, 5 * MS, min_rtt + 12 * MS, min_rtt);
        }
        assert!(!cc.hystart_found());
        assert_eq!(s.ssthresh, u64::MAX);
        assert_eq!(s.cwnd, 160 * M);
    }

    #[test]
    fn hystart_eta_is_clamped() {
        // min_rtt 10 ms: eta = max(1.25 ms, 4 ms) = 4 ms.
        let mut cc = Cubic::default();
        let mut s = st(20.0, u64::MAX);
        let mut now = 0;
        ss_round(&mut cc, &mut s, &mut now, 10, 5 * MS, 13 * MS, 10 * MS);
        assert!(!cc.hystart_found());
        ss_round(&mut cc, &mut s, &mut now, 10, 5 * MS, 15 * MS, 10 * MS);
        assert!(cc.hystart_found());
    }

    #[test]
    fn hystart_ignores_small_windows_and_can_be_disabled() {
        let min_rtt = 100 * MS;
        // Below the low window.
        let mut cc = Cubic::default();
        let mut s = st(8.0, u64::MAX);
        let mut now = 0;
        ss_round(&mut cc, &mut s, &mut now, 8, 5 * MS, 2 * min_rtt, min_rtt);
        assert!(!cc.hystart_found());
        assert_eq!(s.cwnd, 16 * M);

        let mut p = Params::new();
        p.insert("hystart", ParamValue::Bool(false));
        let mut cc = Cubic::new(CubicConfig::from_params(&p).unwrap());
        p.reject_unknown("cubic").unwrap();
        let mut s = st(20.0, u64::MAX);
        let mut now = 0;
        ss_round(&mut cc, &mut s, &mut now, 20, 5 * MS, 2 * min_rtt, min_rtt);
        ss_round(&mut cc, &mut s, &mut now, 40, MS, 2 * min_rtt, min_rtt);
        assert!(!cc.hystart_found());
        assert_eq!(s.ssthresh, u64::MAX);
        assert_eq!(s.cwnd, 80 * M);
    }

    #[test]
    fn hystart_ack_train_detector() {
        let min_rtt = 100 * MS;
        let mut p = Params::new();
        p.insert("hystart_detect", ParamValue::Str("ack_train".into()));
        let mut cc = Cubic::new(CubicConfig::from_params(&p).unwrap());
        let mut s = st(40.0, u64::MAX);
        let mut now = 0;
        // 40 ACKs 1 ms apart: the train spans 39 ms < 50 ms.
        ss_round(&mut cc, &mut s, &mut now, 40, MS, min_rtt, min_rtt);
        assert!(!cc.hystart_found());
        // A gap > 2 ms breaks the train: 80 ACKs 3 ms apart never extend it.
        ss_round(&mut cc, &mut s, &mut now, 80, 3 * MS, min_rtt, min_rtt);
        assert!(!cc.hystart_found());
        // 60 ACKs 1 ms apart: after 51 ms the train is longer than min_rtt / 2.
        let before = s.cwnd;
        ss_round(&mut cc, &mut s, &mut now, 60, MS, min_rtt, min_rtt);
        assert!(cc.hystart_found());
        assert_eq!(s.ssthresh, before + 51 * M);
    }

    /// ABE for CUBIC (RFC 8511, the notes' §4.2 rule): an ECN-Echo cuts by `beta_ecn` and sets
    /// the plateau as a loss would with `beta_ecn` in place of beta, so K = cbrt(W_max (1 −
    /// beta_ecn) / C); fast convergence lowers the plateau to W (1 + beta_ecn) / 2.
    #[test]
    fn abe_cuts_by_beta_ecn_and_sets_k_from_it() {
        let mut p = Params::new();
        p.insert("beta_ecn", ParamValue::Float(0.85));
        let mut cc = Cubic::new(CubicConfig::from_params(&p).unwrap());
        let mut s = st(100.0, u64::MAX);
        let r = cc.on_congestion(&mut s, &path(0), &event(Cause::Ecn, 100 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 85 * M });
        assert_eq!(cc.w_max(), 100.0);
        assert!((cc.k() - 37.5f64.cbrt()).abs() < 1e-9, "K = cbrt(37.5) = 3.35 s, not 4.22 s");
        // A later mark below the plateau: fast convergence with beta_ecn.
        s.cwnd = 90 * M;
        cc.on_congestion(&mut s, &path(0), &event(Cause::Ecn, 90 * M));
        assert!((cc.w_max() - 90.0 * 1.85 / 2.0).abs() < 1e-9);
        // Loss still uses 0.7; inside the ECN episode it deepens ssthresh only.
        s.ssthresh = 85 * M;
        let mut ev = event(Cause::Loss, 80 * M);
        ev.open_episode = Some(Cause::Ecn);
        let w_max = cc.w_max();
        assert_eq!(cc.on_congestion(&mut s, &path(0), &ev), Reaction::Prr { ssthresh: 70 * M });
        assert_eq!(cc.w_max(), w_max);
    }

    /// Linux `hystart_update`: the train must outlast (delay_min + ack_delay) / 2, where
    /// ack_delay = min(1 ms, 4 GSO frames at 2·cwnd/SRTT).
    #[test]
    fn hystart_ack_train_threshold_includes_linux_ack_delay() {
        let mut s = st(40.0, u64::MAX);
        let mut p = path(0);
        p.srtt = Some(100 * MS);
        assert_eq!(hystart_ack_delay(&s, &p), MS, "800 kB/s: 4 frames take 328 ms, capped");
        s.cwnd = 1_000_000_000;
        assert_eq!(hystart_ack_delay(&s, &p), 13_107, "20 GB/s: 4 · 65536 B take 13.1 µs");
        p.srtt = None;
        assert_eq!(hystart_ack_delay(&s, &p), 0, "no rate known yet");
        for (train_ms, found) in [(50, false), (51, true)] {
            let mut p = Params::new();
            p.insert("hystart_detect", ParamValue::Str("ack_train".into()));
            let mut cc = Cubic::new(CubicConfig::from_params(&p).unwrap());
            let mut s = st(40.0, u64::MAX);
            let mut now = 0;
            // Threshold (100 + 1) / 2 = 50.5 ms.
            ss_round(&mut cc, &mut s, &mut now, train_ms + 1, MS, 100 * MS, 100 * MS);
            assert_eq!(cc.hystart_found(), found, "train of {train_ms} ms");
        }
    }

    /// Linux `bictcp_acked`: the all-time minimum of CUBIC's own samples, not the stack's
    /// windowed one; samples within a second of an epoch start are skipped; a timeout forgets it.
    #[test]
    fn delay_min_is_the_all_time_minimum_of_its_own_samples() {
        let mut cc = Cubic::default();
        let mut s = st(10.0, 5 * M);
        let feed = |cc: &mut Cubic, s: &mut CcState, now: Nanos, rtt: Nanos| {
            let mut p = path(now);
            // The stack's windowed minimum has risen under a standing queue: not what CUBIC uses.
            p.min_rtt = Some(150 * MS);
            let mut a = ack(1);
            a.rtt = Some(rtt);
            cc.on_ack(s, &p, &a);
        };
        feed(&mut cc, &mut s, 10 * MS, 100 * MS);
        assert_eq!(cc.delay_min(), Some(100 * MS));
        // Congestion avoidance started an epoch at 10 ms; a lower sample within 1 s is skipped.
        assert!(cc.epoch_start().is_some());
        feed(&mut cc, &mut s, 500 * MS, 80 * MS);
        assert_eq!(cc.delay_min(), Some(100 * MS));
        feed(&mut cc, &mut s, 1_500 * MS, 80 * MS);
        assert_eq!(cc.delay_min(), Some(80 * MS));
        feed(&mut cc, &mut s, 2_000 * MS, 150 * MS);
        assert_eq!(cc.delay_min(), Some(80 * MS), "never rises");
        let flight = s.cwnd;
        cc.on_congestion(&mut s, &path(2_100 * MS), &event(Cause::Rto { backoffs: 0 }, flight));
        assert_eq!(cc.delay_min(), None, "entering Loss resets it");
        cc.delay_min = Some(90 * MS);
        cc.on_congestion(&mut s, &path(2_200 * MS), &event(Cause::Rto { backoffs: 1 }, M));
        assert_eq!(cc.delay_min(), None, "every timeout does");
    }

    #[test]
    fn hystart_rearms_after_rto() {
        let min_rtt = 100 * MS;
        let mut cc = Cubic::default();
        let mut s = st(20.0, u64::MAX);
        let mut now = 0;
        ss_round(&mut cc, &mut s, &mut now, 10, 5 * MS, 2 * min_rtt, min_rtt);
        assert!(cc.hystart_found());
        let flight = s.cwnd;
        cc.on_congestion(&mut s, &path(now), &event(Cause::Rto { backoffs: 0 }, flight));
        assert!(!cc.hystart_found());
    }

    #[test]
    fn params_round_trip_and_errors() {
        let mut p = Params::new();
        for (k, v) in [
            ("c", ParamValue::Float(0.5)),
            ("beta", ParamValue::Float(0.8)),
            ("fast_convergence", ParamValue::Bool(false)),
            ("tcp_friendliness", ParamValue::Bool(false)),
            ("rtt_for_target", ParamValue::Str("srtt".into())),
            ("ssthresh_from", ParamValue::Str("flight".into())),
            ("abc_limit", ParamValue::Int(3)),
            ("hystart", ParamValue::Bool(false)),
            ("hystart_detect", ParamValue::Str("delay".into())),
            ("hystart_low_window", ParamValue::Int(32)),
            ("hystart_ack_delta_ms", ParamValue::Float(1.5)),
            ("hystart_min_samples", ParamValue::Int(4)),
            ("hystart_delay_min_ms", ParamValue::Int(2)),
            ("hystart_delay_max_ms", ParamValue::Int(20)),
        ] {
            p.insert(k, v);
        }
        let cfg = CubicConfig::from_params(&p).unwrap();
        p.reject_unknown("cubic").unwrap();
        assert_eq!(cfg.c, 0.5);
        assert_eq!(cfg.beta, 0.8);
        assert!(!cfg.fast_convergence && !cfg.tcp_friendliness && !cfg.hystart);
        assert_eq!(cfg.rtt_for_target, RttSource::Srtt);
        assert_eq!(cfg.ssthresh_from, SsthreshBase::Flight);
        assert_eq!(cfg.abc_limit, 3);
        assert_eq!(cfg.hystart_detect, HystartDetect { ack_train: false, delay: true });
        assert_eq!(cfg.hystart_low_window, 32);
        assert_eq!(cfg.hystart_ack_delta, 1_500_000);
        assert_eq!(cfg.hystart_min_samples, 4);
        assert_eq!((cfg.hystart_delay_min, cfg.hystart_delay_max), (2 * MS, 20 * MS));
        assert_eq!(CubicConfig::from_params(&Params::new()).unwrap(), CubicConfig::default());

        for (k, v) in [
            ("beta", ParamValue::Float(1.5)),
            ("c", ParamValue::Float(-1.0)),
            ("hystart", ParamValue::Int(1)),
            ("rtt_for_target", ParamValue::Str("max_rtt".into())),
        ] {
            let mut p = Params::new();
            p.insert(k, v);
            assert_eq!(CubicConfig::from_params(&p).unwrap_err().key, k);
        }
        let mut p = Params::new();
        p.insert("hystart_delay_min_ms", ParamValue::Int(20));
        assert_eq!(CubicConfig::from_params(&p).unwrap_err().key, "hystart_delay_max_ms");
        assert_eq!(Cubic::default().name(), "cubic");
    }

    #[test]
    fn srtt_option_changes_the_target() {
        let mut p = Params::new();
        p.insert("rtt_for_target", ParamValue::Str("srtt".into()));
        p.insert("tcp_friendliness", ParamValue::Bool(false));
        let mut a = Cubic::new(CubicConfig::from_params(&p).unwrap());
        let mut p2 = Params::new();
        p2.insert("tcp_friendliness", ParamValue::Bool(false));
        let mut b = Cubic::new(CubicConfig::from_params(&p2).unwrap());
        for cc in [&mut a, &mut b] {
            let mut s = st(100.0, u64::MAX);
            lose(cc, &mut s, 0);
            let mut pi = path(0);
            pi.min_rtt = Some(10 * MS);
            pi.srtt = Some(2_000 * MS);
            cc.on_ack(&mut s, &pi, &ack(1));
        }
        // A 2 s look-ahead aims much higher than a 10 ms one: fewer segments per increment.
        assert!(a.cnt() < b.cnt() / 2.0, "{} vs {}", a.cnt(), b.cnt());
    }
}
