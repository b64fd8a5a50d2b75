//! TCP Prague: the scalable (L4S) controller of draft-briscoe-iccrg-prague-congestion-control-04
//! as the L4STeam Linux module `net/ipv4/tcp_prague.c` runs it.
//!
//! Read from: `tcp_prague.c` in L4STeam/linux, `MODULE_VERSION("0.6")`, stored commit
//! 02573a215581c91de68864be2c1b9af8c7098a08 (20-bit α, `cwr_stamp`, cwnd-based RTT
//! independence); the draft's §2.4.4 (Reduced RTT-Dependence, `rtt_virt ≥ 25 ms`) and its
//! description of the module. A later tree with the same version string (24-bit α, rate-based
//! RTT independence) was looked at, not followed. Function names below are the module's.
//!
//! All window arithmetic is Linux's fixed point: `frac_cwnd` is the window in 2⁻²⁰ segments
//! (`CWND_UNIT = 20`), α is kept as `upscaled_alpha = α·2²⁰·16` (`PRAGUE_ALPHA_BITS = 20`,
//! `PRAGUE_SHIFT_G = 4`), and `cwnd` (the stack's, in bytes) is a whole number of segments.
//!
//! * Every ACK (`prague_cong_control` → `prague_update_cwnd`): the newly delivered bytes less the
//!   newly CE-marked ones count (`acked_sacked − ece_delta`; here bytes: `ce_bytes`, or
//!   `ce_delta·MSS` without byte counters). With none left, in a loss episode or when not
//!   cwnd-limited, nothing grows. In slow start `tcp_slow_start` adds whole segments (up to
//!   ssthresh); what is left goes to additive increase:
//!   `frac_cwnd += max(acked, (acked·ai_ack_increase + W/2) / W)` with `W = ⌈frac_cwnd⌉`
//!   segments and `ai_ack_increase = 2²⁰` (one segment per window of unmarked segments) unless
//!   RTT independence scales it. Then `cwnd` takes one step of one segment toward `⌈frac_cwnd⌉`
//!   (never below 2 when stepping down; a step down also sets `ssthresh = cwnd`).
//!   This runs in every state, CWR included ("cwnd is updated for every ACK, regardless of the
//!   congestion status").
//! * α (`prague_update_alpha`), once per round after the first CE mark (`saw_ce`):
//!   `upscaled_alpha ← upscaled_alpha − upscaled_alpha/16 + (ce_bytes·2²⁰ / delivered_bytes)`
//!   over the round, capped at α = 1; α₀ = 1. Rounds are the stack's (`round_start`, see the
//!   DCTCP module for the split); a round's end is latched so that a gated update (below) happens
//!   on the first ACK that passes the gate. Delivered bytes come from `PathInfo::delivered`.
//! * ECN episode (`prague_enter_cwr`, on entering CWR; the stack opens at most one ECN episode
//!   per round trip, which is Linux's CWR): `frac_cwnd −= (α·frac_cwnd + 2²⁰) >> 21`, i.e.
//!   `cwnd·α/2` rounded. ssthresh is left alone (`prague_ssthresh` returns it unchanged). The
//!   controller steps cwnd down itself on the following ACKs, so the reaction is
//!   [`Reaction::SelfManaged`]: Linux runs neither PRR nor `tcp_end_cwnd_reduction` for a
//!   `cong_control` module.
//! * Loss (`prague_enter_loss`, on entering Recovery, also from CWR): `loss_cwnd = cwnd`,
//!   `frac_cwnd −= frac_cwnd/2`, no growth until the episode ends (`in_loss`, cleared by
//!   `prague_ca_open`); cwnd steps down per ACK. [`Reaction::SelfManaged`].
//! * RTO (`CA_EVENT_LOSS`, only when Linux's `tcp_enter_loss` would cut, i.e. `backoffs == 0`):
//!   the same halving of `frac_cwnd`; the stack restarts cwnd from in-flight + 1 segment and
//!   ssthresh stays ([`Reaction::Prr`] with the current ssthresh, as `prague_ssthresh`).
//! * Undo (`prague_cwnd_undo`): `frac_cwnd = max(frac_cwnd, frac_cwnd before the loss)`, cwnd
//!   `max(loss_cwnd, cwnd)`.
//! * Pacing (`prague_update_pacing_rate`), after every ACK: `rate = MTU·frac_cwnd / srtt`, doubled
//!   while `cwnd < ssthresh/2` (segments), where `MTU = MSS + header_bytes`, since the stack
//!   paces wire bytes. No pacing rate is set before the first RTT sample.
//! * RTT independence (`prague_rtt_scaling`, default `RTT_CONTROL_RATE`), active once not in slow
//!   start and after `rtt_transition` rounds counted outside slow start: the increase per ACK is
//!   scaled to `(srtt/target)²` (rate mode; 1 when `srtt ≥ target`), α is updated at most once
//!   per target RTT (`prague_target_rtt_elapsed`), and an ECN reduction is skipped if the last
//!   one is less than a target RTT old. RTTs are in the module's 128 µs units (`RTT_UNIT = 7`):
//!   the 25 ms default target is 195 units (24.96 ms). The module's header comment says the
//!   target defaults to 10 ms; the code (`prague_rtt_target = 25 * USEC_PER_MSEC`) and the draft
//!   say 25 ms, which is what is used. The `scalable` and `additive` heuristics are provided as in
//!   the code (`prague_scalable_ai_ack_increase`, `prague_dynamic_rtt_target`).
//! * Classic-ECN bottleneck detection and fallback (`ecn_fallback`, the module's
//!   `prague_ecn_fallback`: 0 = none, the default; 1 = detection and fallback; 2 = detection
//!   only), in `classic_ecn.rs`. A classic (RFC 3168) AQM marks only once its queue is deep and
//!   varies, an L4S one at a shallow, steady queue; the detector scores which it is behind.
//!   - `prague_rtt_estimator` (`prague_pkts_acked`, every ACK with an RTT sample,
//!     [`AckSample::rtt`] in whole µs, before the ACK's window update): a low-gain srtt and mean
//!     deviation (`srtt_pace_us`, `mdev_pace_us`), upscaled by their gain shifts
//!     `g_srtt_shift`, `g_mdev_shift = g_srtt_shift + 1`. At init they start at the largest
//!     shifts (18, 19), from the stack's srtt, with a 1 µs deviation.
//!   - `prague_update_rtt_scaling` (`prague_ssthresh`, which Linux calls as it enters CWR or
//!     Recovery and on an RTO that cuts, i.e. here on every [`CongestionControl::on_congestion`]
//!     but a repeated RTO, before the reaction): `g_srtt_shift = min(lg ss + ⌊lg ss/2⌋ + 1, 18)`
//!     with `lg ss = ilog2(ssthresh)` in segments (the ssthresh in force, which the per-ACK step
//!     down keeps at cwnd), and everything upscaled is shifted by the change. The gain is about
//!     `1/(2·ssthresh^1.5)`: with a sample per segment, an average over ≈ 2·√ssthresh rounds.
//!   - `prague_classic_ecn_detection` (every α update, i.e. once per round after the first CE,
//!     when `ecn_fallback` is 1 or 2): `classic_ecn += ½·lg(mdev/V0) + ½·max(lg(depth/D0), 0)`
//!     in 2²⁰ units, with `depth = srtt − min_rtt` ([`PathInfo::min_rtt`], Linux `tcp_min_rtt`),
//!     V0 ≈ 750 µs (`V0_LG`), D0 ≈ 2 ms (`D0_LG`), clamped to `[0, C_STICKY = 17·2²⁰]`. The
//!     logarithms are integer ones of the value times the mantissa carried from the last round
//!     (`rest_mdev_us`, `rest_depth_us`), so fractions accumulate. A deviation above V0 or a
//!     queue above D0 raises it each round; a deviation below V0 lowers it.
//!   - `prague_classic_ecn_fallback` (in `prague_enter_cwr`, only when `ecn_fallback = 1` and
//!     `classic_ecn > L_STICKY = 8·2²⁰`): the reduction uses `max(α, c/2 + c/8)` with
//!     `c = min(classic_ecn, CLASSIC_ECN = 9·2²⁰) − L_STICKY`, so at most α = 0.625 (a cut of
//!     31.25 %); the stored α is untouched.
//!
//! | key | default | source |
//! |---|---|---|
//! | `rtt_scaling` | `"rate"` (`"none"`, `"rate"`, `"scalable"`, `"additive"`) | `prague_rtt_scaling = RTT_CONTROL_RATE` |
//! | `rtt_target` | 25 ms | `prague_rtt_target = 25 * USEC_PER_MSEC`; draft §2.4.4 |
//! | `rtt_transition` | 500 rounds | `prague_rtt_transition = DEFAULT_RTT_TRANSITION` |
//! | `header_bytes` | 52 | `tcp_mss_to_mtu` (IPv4 20 + TCP 20 + timestamps 12, the scenario default) |
//! | `ecn_fallback` | 0 (0 none, 1 detection and fallback, 2 detection only) | `prague_ecn_fallback = 0` |
//!
//! Deliberate differences and omissions:
//! * Slow start's growth is credited to `frac_cwnd` as well. The 0.6 code grows only `snd_cwnd`
//!   in `tcp_slow_start` and leaves `frac_cwnd` at the initial window, so read literally the
//!   first all-marked ACK after slow start would step cwnd down toward the initial window
//!   (minus the CE cut), and the pacing rate (from `frac_cwnd`) would stay at the initial
//!   window's through slow start.
//! * Marks and deliveries are counted in bytes (AccECN's byte counters), the module counts
//!   packets; with full-sized segments the two agree.
//! * Classic ECN: Linux refuses it (`TCP_CONG_NEEDS_ACCECN`, `TCP_CONG_NO_FALLBACK_RFC3168`) and
//!   runs `prague-reno` without ECN. This controller cannot see the negotiation; it asks for
//!   L4S ECN ([`EcnUse::L4s`]), and if an ECE ACK arrives without counters before any counter
//!   moved it counts the ACK's bytes as marked (as Linux's `tcp_count_delivered` for an RFC 3168
//!   ECE). Without any ECN it behaves Reno-like: additive increase and halving on loss.
//! * Classic-ECN detection: the fields the L4STeam kernel adds to `tcp_sock` (`srtt_pace_us`,
//!   `mdev_pace_us`, `g_srtt_shift`, `g_mdev_shift`, `classic_ecn`) are kept in the controller;
//!   `mrtt_pace_us`, which only records the last sample, is not kept. RTT samples and the min
//!   RTT are whole µs of the stack's nanoseconds. An infinite ssthresh reads as Linux's
//!   `TCP_INFINITE_SSTHRESH` and one below a segment as 1 (the kernel's `ilog2(0)` is
//!   undefined). The module's self-limited term (`− S·s`) is commented out there and absent
//!   here.
//! * The GSO burst sizing (`max_tso_burst`) is absent: the simulator sends segments.
//! * `sk_max_pacing_rate` and `snd_cwnd_clamp` are not modelled.

mod classic_ecn;
#[cfg(test)]
mod tests;

pub use classic_ecn::{ClassicEcnDetector, EcnFallback, CLASSIC_ECN, C_STICKY, L_STICKY};

use crate::dctcp::marked_bytes;
use crate::{
    AckSample, Cause, CcState, CongestionControl, CongestionEvent, EcnUse, Nanos, ParamError, Params,
    PathInfo, Reaction,
};

/// `PRAGUE_ALPHA_BITS`: α's resolution.
pub const ALPHA_BITS: u32 = 20;
/// `PRAGUE_MAX_ALPHA`: α = 1.
pub const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
/// `CWND_UNIT`: `frac_cwnd`'s fraction bits.
pub const CWND_UNIT: u32 = 20;
/// `ONE_CWND`: one segment in `frac_cwnd` units.
pub const ONE_CWND: u64 = 1 << CWND_UNIT;
/// `PRAGUE_SHIFT_G`: g = 1/16.
pub const SHIFT_G: u32 = 4;
/// `MIN_CWND`: the step-down stops here (segments).
pub const MIN_CWND: u64 = 2;
/// `DEFAULT_RTT_TRANSITION`: rounds outside slow start before RTT independence starts.
pub const DEFAULT_RTT_TRANSITION: u64 = 500;
/// `prague_rtt_target`.
pub const DEFAULT_RTT_TARGET: Nanos = 25_000_000;
/// `RTT_UNIT`: RTTs are kept in 2⁷ µs units.
const RTT_UNIT: u32 = 7;
/// `MAX_SCALED_RTT` (100 ms in µs), compared in the code with an RTT in 128 µs units.
const MAX_SCALED_RTT: u64 = 100_000;

/// Which RTT-independence heuristic scales the increase (`prague_rtt_scaling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttScaling {
    /// `RTT_CONTROL_NONE`: plain 1 segment per window per RTT.
    None,
    /// `RTT_CONTROL_RATE`: flows below the target RTT grow their rate like a flow at the target.
    Rate,
    /// `RTT_CONTROL_SCALABLE`: at least 1/8 segment per RTT at very low RTTs.
    Scalable,
    /// `RTT_CONTROL_ADDITIVE`: behave as if the target were added to the RTT.
    Additive,
}

/// Prague parameters. Scenario keys are the field names.
#[derive(Clone, Debug, PartialEq)]
pub struct PragueConfig {
    /// Default [`RttScaling::Rate`]. Key `rtt_scaling`.
    pub rtt_scaling: RttScaling,
    /// Default 25 ms. Key `rtt_target`.
    pub rtt_target: Nanos,
    /// Rounds outside slow start before RTT independence, default 500. Key `rtt_transition`.
    pub rtt_transition: u64,
    /// Header bytes per segment for the pacing rate, default 52. Key `header_bytes`.
    pub header_bytes: u64,
    /// Classic-ECN detection and fallback, default off. Key `ecn_fallback` (0, 1, 2).
    pub ecn_fallback: EcnFallback,
}

impl Default for PragueConfig {
    fn default() -> Self {
        Self {
            rtt_scaling: RttScaling::Rate,
            rtt_target: DEFAULT_RTT_TARGET,
            rtt_transition: DEFAULT_RTT_TRANSITION,
            header_bytes: 52,
            ecn_fallback: EcnFallback::Off,
        }
    }
}

impl PragueConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let rtt_scaling =
            match p.choice("rtt_scaling", "rate", &["none", "rate", "scalable", "additive"])?.as_str() {
                "none" => RttScaling::None,
                "scalable" => RttScaling::Scalable,
                "additive" => RttScaling::Additive,
                _ => RttScaling::Rate,
            };
        Ok(Self {
            rtt_scaling,
            // At least one 128 µs unit: a zero target turns the scaling off in the module.
            rtt_target: p.duration("rtt_target", d.rtt_target, 128_000, 10_000_000_000)?,
            rtt_transition: p.u64_in("rtt_transition", d.rtt_transition, 0, u32::MAX as u64)?,
            header_bytes: p.u64_in("header_bytes", d.header_bytes, 0, 65_535)?,
            ecn_fallback: EcnFallback::from_value(p.u64_in("ecn_fallback", d.ecn_fallback.value(), 0, 2)?)
                .unwrap_or_default(),
        })
    }

    /// The target in the module's 128 µs units (`US2RTT(prague_rtt_target)`).
    fn target_units(&self) -> u64 {
        (self.rtt_target / 1000) >> RTT_UNIT
    }
}

/// 128 µs units (`US2RTT(srtt_us >> 3)`) of the smoothed RTT; 0 without a sample.
fn srtt_units(path: &PathInfo) -> u64 {
    path.srtt.map_or(0, |s| (s / 1000) >> RTT_UNIT)
}

/// `RTT2US(units)` in nanoseconds.
fn units_to_nanos(units: u64) -> Nanos {
    (units << RTT_UNIT) * 1000
}

/// `prague_rate_scaled_ai_ack_increase`: `(rtt/target)²` in `ONE_CWND` units, rounded.
fn rate_scaled_increase(rtt: u64, target: u64) -> u64 {
    if rtt >= target {
        return ONE_CWND;
    }
    let divisor = target * target;
    (((rtt << CWND_UNIT) * rtt) + divisor / 2) / divisor
}

/// `prague_scalable_ai_ack_increase`: R0 ≈ 16 ms, R1 ≈ 1.5 ms in 128 µs units.
fn scalable_increase(rtt: u64) -> u64 {
    let r0: u64 = (1 << 14) >> RTT_UNIT;
    let r1: u64 = ((1 << 10) + (1 << 9)) >> RTT_UNIT;
    let mut increase = (ONE_CWND >> 3) * r0 + ONE_CWND * rtt.saturating_sub(r1).min(r0);
    increase *= rtt;
    let divisor = r0 * r0;
    (increase + divisor / 2) / divisor
}

/// The Prague controller ("prague").
#[derive(Clone, Debug)]
pub struct Prague {
    cfg: PragueConfig,
    initialised: bool,
    mss: u64,
    /// α·2²⁰·16.
    upscaled_alpha: u64,
    /// The window in 2⁻²⁰ segments.
    frac_cwnd: u64,
    loss_frac_cwnd: u64,
    /// cwnd in segments when the last loss cut began.
    loss_cwnd: u64,
    /// Increase per unmarked segment acknowledged, before division by the window.
    ai_ack_increase: u64,
    cwr_stamp: Option<Nanos>,
    alpha_stamp: Nanos,
    /// Rounds counted outside slow start.
    round: u64,
    /// A CE mark has been seen: there is an AQM on the path.
    saw_ce: bool,
    in_loss: bool,
    /// A round ended and α has not been updated for it yet.
    round_elapsed: bool,
    window_delivered: u64,
    window_ce: u64,
    last_delivered: u64,
    accurate_seen: bool,
    /// The paced-RTT estimator and classic-ECN detector (fed whatever `ecn_fallback` says).
    classic: ClassicEcnDetector,
}

impl Prague {
    pub fn new(cfg: PragueConfig) -> Self {
        Self {
            cfg,
            initialised: false,
            mss: 1,
            upscaled_alpha: MAX_ALPHA << SHIFT_G,
            frac_cwnd: 0,
            loss_frac_cwnd: 0,
            loss_cwnd: 0,
            ai_ack_increase: ONE_CWND,
            cwr_stamp: None,
            alpha_stamp: 0,
            round: 0,
            saw_ce: false,
            in_loss: false,
            round_elapsed: false,
            window_delivered: 0,
            window_ce: 0,
            last_delivered: 0,
            accurate_seen: false,
            classic: ClassicEcnDetector::new(0),
        }
    }

    pub fn config(&self) -> &PragueConfig {
        &self.cfg
    }

    /// α as a number in [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha_fixed() as f64 / MAX_ALPHA as f64
    }

    /// α in 2⁻²⁰ units (`upscaled_alpha >> PRAGUE_SHIFT_G`).
    pub fn alpha_fixed(&self) -> u64 {
        self.upscaled_alpha >> SHIFT_G
    }

    /// The fractional window in 2⁻²⁰ segments.
    pub fn frac_cwnd(&self) -> u64 {
        self.frac_cwnd
    }

    /// Current additive increase per unmarked segment, in 2⁻²⁰ segments before division by W.
    pub fn ai_ack_increase(&self) -> u64 {
        self.ai_ack_increase
    }

    /// Rounds counted outside slow start.
    pub fn round(&self) -> u64 {
        self.round
    }

    pub fn in_loss(&self) -> bool {
        self.in_loss
    }

    pub fn saw_ce(&self) -> bool {
        self.saw_ce
    }

    /// The classic-ECN estimate (`tp->classic_ecn`) in 2⁻²⁰ units: at most [`L_STICKY`] is L4S,
    /// [`CLASSIC_ECN`] and above is classic, [`C_STICKY`] the ceiling.
    pub fn classic_ecn(&self) -> u64 {
        self.classic.classic_ecn()
    }

    /// The paced-RTT estimator and detector state.
    pub fn classic_ecn_detector(&self) -> &ClassicEcnDetector {
        &self.classic
    }

    /// RTT independence is in force (`prague_is_rtt_indep`).
    pub fn is_rtt_indep(&self, st: &CcState) -> bool {
        self.cfg.rtt_scaling != RttScaling::None
            && !st.in_slow_start()
            && self.round >= self.cfg.rtt_transition
    }

    fn snd_cwnd(&self, st: &CcState) -> u64 {
        (st.cwnd / self.mss).max(1)
    }

    /// `prague_frac_cwnd_to_snd_cwnd`: whole segments, rounded up, at least 1.
    fn frac_to_segments(&self) -> u64 {
        ((self.frac_cwnd + ONE_CWND - 1) >> CWND_UNIT).max(1)
    }

    /// `prague_target_rtt`, in 128 µs units.
    fn target_units(&self, path: &PathInfo) -> u64 {
        match self.cfg.rtt_scaling {
            RttScaling::Additive => self.cfg.target_units() + srtt_units(path),
            _ => self.cfg.target_units(),
        }
    }

    /// `prague_ai_ack_increase`.
    fn update_ai_ack_increase(&mut self, path: &PathInfo) {
        let rtt = srtt_units(path);
        self.ai_ack_increase = if self.cfg.rtt_scaling == RttScaling::None
            || self.round < self.cfg.rtt_transition
            || rtt == 0
            || rtt > MAX_SCALED_RTT
        {
            ONE_CWND
        } else if self.cfg.rtt_scaling == RttScaling::Scalable {
            scalable_increase(rtt)
        } else {
            rate_scaled_increase(rtt, self.target_units(path))
        };
    }

    fn init_state(&mut self, st: &CcState, path: &PathInfo) {
        self.initialised = true;
        self.mss = (path.mss as u64).max(1);
        self.upscaled_alpha = MAX_ALPHA << SHIFT_G;
        self.frac_cwnd = self.snd_cwnd(st) << CWND_UNIT;
        self.loss_frac_cwnd = 0;
        self.loss_cwnd = 0;
        self.cwr_stamp = None;
        self.alpha_stamp = path.now;
        self.round = 0;
        self.saw_ce = false;
        self.in_loss = false;
        self.accurate_seen = false;
        self.last_delivered = path.delivered;
        // `tp->srtt_us >> 3`: whole µs of the stack's srtt, 0 without a sample.
        self.classic = ClassicEcnDetector::new(path.srtt.map_or(0, |s| s / 1000));
        self.new_round(st, path);
    }

    /// `prague_new_round`: a new observation window.
    fn new_round(&mut self, st: &CcState, path: &PathInfo) {
        self.round_elapsed = false;
        self.window_delivered = 0;
        self.window_ce = 0;
        if !st.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
        self.update_ai_ack_increase(path);
    }

    /// `prague_should_update_ewma`.
    fn should_update_ewma(&self, st: &CcState, path: &PathInfo) -> bool {
        self.round_elapsed
            && (self.cfg.rtt_scaling == RttScaling::None
                || !self.is_rtt_indep(st)
                || path.now.saturating_sub(self.alpha_stamp) >= units_to_nanos(self.target_units(path)))
    }

    /// `prague_update_alpha`: fold the window's marked fraction into α, then a new round.
    fn update_alpha(&mut self, st: &CcState, path: &PathInfo) {
        if self.saw_ce {
            if self.cfg.ecn_fallback != EcnFallback::Off {
                self.classic.detect(path.min_rtt.map(|m| m / 1000));
            }
            let f = if self.window_ce > 0 {
                (self.window_ce << ALPHA_BITS) / self.window_delivered.max(1)
            } else {
                0
            };
            let alpha = self.upscaled_alpha - (self.upscaled_alpha >> SHIFT_G) + f;
            self.upscaled_alpha = alpha.min(MAX_ALPHA << SHIFT_G);
            self.alpha_stamp = path.now;
        }
        self.new_round(st, path);
    }

    /// `prague_update_cwnd` for one ACK: `unmarked` newly delivered bytes without CE.
    fn update_cwnd(&mut self, st: &mut CcState, path: &PathInfo, unmarked: u64) {
        let mss = self.mss;
        let mut snd = self.snd_cwnd(st);
        if unmarked > 0 && !self.in_loss && path.is_cwnd_limited {
            // Linux counts packets: a short segment is one.
            let mut acked = unmarked.div_ceil(mss);
            let mut ai_bytes = unmarked;
            if st.in_slow_start() {
                // `tcp_slow_start`: whole segments up to ssthresh; the rest goes on below.
                let ssthresh = (st.ssthresh / mss).max(snd);
                let grown = (snd + acked).min(ssthresh);
                let used = grown - snd;
                snd = grown;
                st.cwnd = snd * mss;
                self.frac_cwnd += used << CWND_UNIT;
                acked -= used;
                if acked == 0 {
                    self.update_ai_ack_increase(path);
                    return;
                }
                ai_bytes = ai_bytes.min(acked * mss);
            }
            let w = self.frac_to_segments();
            // `(acked·ai + W/2) / W` with `acked = ai_bytes / MSS`.
            let num = ai_bytes as u128 * self.ai_ack_increase as u128 + ((w / 2) * mss) as u128;
            let increase = (num / (w * mss) as u128) as u64;
            self.frac_cwnd += increase.max(acked);
        }
        let target = self.frac_to_segments();
        if snd > target && snd > MIN_CWND {
            snd -= 1;
            st.cwnd = snd * mss;
            st.ssthresh = snd * mss;
            self.update_ai_ack_increase(path);
        } else if snd < target {
            snd += 1;
            st.cwnd = snd * mss;
            self.update_ai_ack_increase(path);
        }
    }

    /// `prague_enter_cwr`.
    fn enter_cwr(&mut self, st: &CcState, path: &PathInfo) {
        if self.is_rtt_indep(st)
            && self
                .cwr_stamp
                .is_some_and(|s| path.now.saturating_sub(s) < units_to_nanos(self.target_units(path)))
        {
            return;
        }
        self.cwr_stamp = Some(path.now);
        let mut alpha = self.upscaled_alpha >> SHIFT_G;
        if self.cfg.ecn_fallback == EcnFallback::Fallback && self.classic.classic_ecn() > L_STICKY {
            alpha = self.classic.fallback_alpha(alpha);
        }
        let alpha = alpha as u128;
        let reduction = (alpha * self.frac_cwnd as u128 + MAX_ALPHA as u128) >> (ALPHA_BITS + 1);
        self.frac_cwnd -= reduction as u64;
    }

    /// `prague_enter_loss`.
    fn enter_loss(&mut self, st: &CcState, path: &PathInfo) {
        self.loss_cwnd = self.snd_cwnd(st);
        self.loss_frac_cwnd = self.frac_cwnd;
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
        self.update_ai_ack_increase(path);
    }

    /// `prague_update_pacing_rate`: `MTU·frac_cwnd/srtt`, doubled below ssthresh/2.
    fn update_pacing_rate(&self, st: &mut CcState, path: &PathInfo) {
        let Some(srtt) = path.srtt.filter(|&s| s > 0) else {
            return;
        };
        let mtu = (self.mss + self.cfg.header_bytes) as f64;
        let mut rate = mtu * (self.frac_cwnd as f64 / ONE_CWND as f64) * 1e9 / srtt as f64;
        if self.snd_cwnd(st) < (st.ssthresh / self.mss) / 2 {
            rate *= 2.0;
        }
        st.pacing_rate = Some(rate);
    }
}

impl Default for Prague {
    fn default() -> Self {
        Self::new(PragueConfig::default())
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn init(&mut self, st: &mut CcState, path: &PathInfo) {
        self.init_state(st, path);
        self.update_pacing_rate(st, path);
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        if !self.initialised {
            self.init_state(st, path);
        }
        // `prague_pkts_acked` runs before `cong_control` on the same ACK.
        if let Some(rtt) = ack.rtt {
            self.classic.rtt_sample(rtt / 1000);
        }
        let newly = path.delivered.saturating_sub(self.last_delivered);
        self.last_delivered = self.last_delivered.max(path.delivered);
        let ce = marked_bytes(ack, newly, path.mss, self.accurate_seen);
        self.accurate_seen |= ack.ce_delta > 0 || ack.ce_bytes > 0;
        if ce > 0 {
            self.saw_ce = true;
        }
        self.update_cwnd(st, path, newly.saturating_sub(ce));
        if ack.round_start {
            self.round_elapsed = true;
        }
        let update = self.should_update_ewma(st, path);
        // The ACK that starts a round belongs to the new window (see the DCTCP module).
        if update && ack.round_start {
            self.update_alpha(st, path);
        }
        self.window_delivered += newly;
        self.window_ce += ce;
        if update && !ack.round_start {
            self.update_alpha(st, path);
        }
        self.update_pacing_rate(st, path);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        if !self.initialised {
            self.init_state(st, path);
        }
        // `prague_ssthresh`, which the stack calls before the state change (CWR, Recovery) or
        // the loss event, with the ssthresh in force: the estimator's gains follow it.
        if !matches!(ev.cause, Cause::Rto { backoffs: 1.. }) {
            self.classic.update_rtt_scaling(st.ssthresh / self.mss);
        }
        match ev.cause {
            Cause::Ecn => {
                self.enter_cwr(st, path);
                Reaction::SelfManaged
            }
            Cause::Loss => {
                self.enter_loss(st, path);
                Reaction::SelfManaged
            }
            Cause::Rto { backoffs: 0 } => {
                self.enter_loss(st, path);
                Reaction::Prr { ssthresh: st.ssthresh }
            }
            Cause::Rto { .. } => Reaction::Prr { ssthresh: st.ssthresh },
        }
    }

    fn on_episode_end(&mut self, _st: &mut CcState, _path: &PathInfo, _cause: Cause) {
        // `prague_ca_open`.
        self.in_loss = false;
    }

    fn undo_cwnd(&mut self, st: &CcState, _prior_cwnd: u64) -> u64 {
        self.frac_cwnd = self.frac_cwnd.max(self.loss_frac_cwnd);
        st.cwnd.max(self.loss_cwnd * self.mss)
    }

    fn ecn_use(&self) -> EcnUse {
        EcnUse::L4s
    }
}
