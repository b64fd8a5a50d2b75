//! Classic-ECN bottleneck detection and fallback of `tcp_prague.c` 0.6
//! (`prague_rtt_estimator`, `prague_update_rtt_scaling`, `prague_classic_ecn_detection`,
//! `prague_classic_ecn_fallback`), off unless `prague_ecn_fallback` (here `ecn_fallback`) is set.
//!
//! The state the L4STeam kernel adds to `tcp_sock` (`srtt_pace_us`, `mdev_pace_us`,
//! `g_srtt_shift`, `g_mdev_shift`, `classic_ecn`) and the two carries the module keeps in
//! `struct prague` (`rest_mdev_us`, `rest_depth_us`, both `u32`) live here, with the module's
//! integer widths and truncations.
//!
//! * Estimator (every RTT sample): `srtt_pace` and `mdev_pace` are an srtt and a mean deviation
//!   in µs kept upscaled by `2^g_srtt_shift` and `2^g_mdev_shift`, and the gains are those
//!   shifts: `srtt_pace += m − srtt_pace>>g_s`, `mdev_pace += |m − srtt| − mdev_pace>>g_m`.
//! * Gains (`prague_update_rtt_scaling`, from `prague_ssthresh`): `g_s = min(lg s + ⌊lg s/2⌋ + 1,
//!   18)` with `lg s = ilog2(ssthresh)` in segments, `g_m = g_s + 1`; the upscaled values and the
//!   two carries are shifted by the change, so that their unscaled values stay.
//! * Detector (each α update): `classic_ecn` moves by `½·lg(mdev/V0) + ½·max(lg(depth/D0), 0)`
//!   (in 2²⁰ units), `depth = srtt − min_rtt`, `V0 ≈ 750 µs`, `D0 ≈ 2 ms`, clamped to
//!   `[0, C_STICKY]`. The logarithms are integer (`ilog2`) of the value times a carried mantissa,
//!   the mantissa passed on to the next round, so that their fractional parts are not lost.

/// `PRAGUE_ALPHA_BITS`, the scale `classic_ecn` shares with α.
const ALPHA_BITS: u32 = super::ALPHA_BITS;
/// `PRAGUE_MAX_ALPHA`.
const MAX_ALPHA: u64 = super::MAX_ALPHA;
/// `PRAGUE_MAX_SRTT_BITS`: the largest (initial) srtt gain shift.
pub const MAX_SRTT_BITS: u32 = 18;
/// `PRAGUE_MAX_MDEV_BITS`.
pub const MAX_MDEV_BITS: u32 = MAX_SRTT_BITS + 1;
/// `PRAGUE_INIT_MDEV_CARRY`: `2^(MAX_MDEV_BITS + 0.5)`, the first mdev mantissa.
pub const INIT_MDEV_CARRY: u32 = 741_455;
/// `PRAGUE_INIT_ADJ_US`: `2^(MAX_MDEV_BITS − 1)`, half a unit at the largest mdev scale.
pub const INIT_ADJ_US: u32 = 262_144;
/// `V`: weight 1/2 of the variance term.
const V: u32 = 1;
/// `D`: weight 1/2 of the depth term.
const D: u32 = 1;
/// `L_STICKY` (8·2²⁰): at or below, pure L4S behaviour.
pub const L_STICKY: u64 = 16 << (ALPHA_BITS - V);
/// `CLASSIC_ECN` (9·2²⁰): the transition between L4S and classic.
pub const CLASSIC_ECN: u64 = L_STICKY + MAX_ALPHA;
/// `C_STICKY` (17·2²⁰): the ceiling, pure classic behaviour.
pub const C_STICKY: u64 = CLASSIC_ECN + L_STICKY;
/// `V0_LG`: `V·lg(750 µs)` in 2²⁰ units (lg 750 = 9.55).
pub const V0_LG: u64 = 10_014_683 >> V;
/// `D0_LG`: `D·lg(2000 µs)` in 2²⁰ units (lg 2000 = 10.97).
pub const D0_LG: u64 = 11_498_458 >> D;
/// `TCP_INFINITE_SSTHRESH`: what an unset ssthresh reads as, in segments.
const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;

/// `prague_ecn_fallback`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EcnFallback {
    /// 0: no detection (the module's default).
    #[default]
    Off,
    /// 1: detection, and the ECN reduction raised toward classic's when a classic AQM is seen.
    Fallback,
    /// 2: detection only (`classic_ecn` is kept, the reduction is unchanged).
    DetectOnly,
}

impl EcnFallback {
    /// The module parameter's value.
    pub fn from_value(v: u64) -> Option<Self> {
        match v {
            0 => Some(Self::Off),
            1 => Some(Self::Fallback),
            2 => Some(Self::DetectOnly),
            _ => None,
        }
    }

    pub fn value(self) -> u64 {
        match self {
            Self::Off => 0,
            Self::Fallback => 1,
            Self::DetectOnly => 2,
        }
    }
}

/// Kernel `ilog2` of a nonzero value (every caller's argument has a nonzero addend).
fn ilog2(x: u64) -> u32 {
    x.max(1).ilog2()
}

/// The paced-RTT estimator and the classic-ECN detector's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicEcnDetector {
    /// srtt in µs · 2^g_srtt_shift (`tp->srtt_pace_us`).
    pub(super) srtt_pace_us: u64,
    /// Mean deviation in µs · 2^g_mdev_shift (`tp->mdev_pace_us`).
    pub(super) mdev_pace_us: u64,
    pub(super) g_srtt_shift: u32,
    pub(super) g_mdev_shift: u32,
    /// Mantissa of the last `mdev·carry`, at scale 2^g_mdev_shift (`ca->rest_mdev_us`).
    pub(super) rest_mdev_us: u32,
    /// Mantissa of the last `depth·carry`, at scale 2^g_srtt_shift (`ca->rest_depth_us`).
    pub(super) rest_depth_us: u32,
    /// The classic-ECN estimate, in 2⁻²⁰ units as α (`tp->classic_ecn`).
    pub(super) classic_ecn: u64,
}

impl ClassicEcnDetector {
    /// `prague_init`'s part: the largest shifts, srtt from the stack's (0 without a sample),
    /// mdev 1 µs, carries √2 and √2/2, `classic_ecn = 0`.
    pub fn new(srtt_us: u64) -> Self {
        Self {
            srtt_pace_us: srtt_us << MAX_SRTT_BITS,
            mdev_pace_us: 1 << MAX_MDEV_BITS,
            g_srtt_shift: MAX_SRTT_BITS,
            g_mdev_shift: MAX_MDEV_BITS,
            rest_mdev_us: INIT_MDEV_CARRY,
            rest_depth_us: INIT_MDEV_CARRY >> 1,
            classic_ecn: 0,
        }
    }

    pub fn srtt_pace_us(&self) -> u64 {
        self.srtt_pace_us
    }

    pub fn mdev_pace_us(&self) -> u64 {
        self.mdev_pace_us
    }

    pub fn g_srtt_shift(&self) -> u32 {
        self.g_srtt_shift
    }

    pub fn g_mdev_shift(&self) -> u32 {
        self.g_mdev_shift
    }

    pub fn rest_mdev_us(&self) -> u32 {
        self.rest_mdev_us
    }

    pub fn rest_depth_us(&self) -> u32 {
        self.rest_depth_us
    }

    pub fn classic_ecn(&self) -> u64 {
        self.classic_ecn
    }

    /// `prague_rtt_estimator`, for one RTT sample in µs (`sample->rtt_us`).
    pub fn rtt_sample(&mut self, mrtt_us: u64) {
        let mut m = mrtt_us as i64;
        let mut srtt_pace = self.srtt_pace_us;
        if srtt_pace != 0 {
            m -= (srtt_pace >> self.g_srtt_shift) as i64;
            // u64 += s64, as the kernel: the sum never goes below the sample.
            srtt_pace = srtt_pace.wrapping_add(m as u64);
            m = m.abs();
            m -= (self.mdev_pace_us >> self.g_mdev_shift) as i64;
            self.mdev_pace_us = self.mdev_pace_us.wrapping_add(m as u64);
        } else {
            srtt_pace = (m as u64) << self.g_srtt_shift;
            self.mdev_pace_us = 1 << self.g_mdev_shift;
        }
        self.srtt_pace_us = srtt_pace.max(1);
    }

    /// `prague_update_rtt_scaling(ssthresh)`, ssthresh in segments.
    pub fn update_rtt_scaling(&mut self, ssthresh_segs: u64) {
        // An infinite (or sub-segment) ssthresh reads as the stack's u32 values.
        let lg = ilog2(ssthresh_segs.min(INFINITE_SSTHRESH));
        let old = self.g_srtt_shift;
        self.g_srtt_shift = (lg + (lg >> 1) + 1).min(MAX_SRTT_BITS);
        self.g_mdev_shift = self.g_srtt_shift + 1;
        if self.g_srtt_shift > old {
            let d = self.g_srtt_shift - old;
            self.srtt_pace_us <<= d;
            self.mdev_pace_us <<= d;
            self.rest_depth_us <<= d;
            self.rest_mdev_us <<= d;
        } else if self.g_srtt_shift < old {
            let d = old - self.g_srtt_shift;
            self.srtt_pace_us >>= d;
            self.mdev_pace_us >>= d;
            self.rest_depth_us >>= d;
            self.rest_mdev_us >>= d;
        }
    }

    /// `prague_classic_ecn_detection`, with the stack's windowed min RTT in µs (`tcp_min_rtt`;
    /// `None` is its `~0U`).
    pub fn detect(&mut self, min_rtt_us: Option<u64>) {
        let (gs, gm) = (self.g_srtt_shift, self.g_mdev_shift);
        let srtt_us = self.srtt_pace_us >> gs;
        let adj_us = (INIT_ADJ_US >> (MAX_MDEV_BITS - gm)) as u64;
        let Some(min_rtt_us) = min_rtt_us.filter(|&m| m < u32::MAX as u64) else {
            return;
        };
        if srtt_us == 0 {
            return;
        }
        let mut new = self.classic_ecn as i64;

        // V·lg(mdev/V0): lg of mdev times the carried mantissa (both at scale 2^gm), plus half a
        // unit so that the integer log is not biased down.
        let mdev = (self.mdev_pace_us >> gm) * self.rest_mdev_us as u64 + adj_us;
        let mdev_lg = ilog2(mdev).max(gm) - gm;
        self.rest_mdev_us = (mdev >> mdev_lg) as u32;
        new += ((mdev_lg as u64) << (ALPHA_BITS - V)) as i64 - V0_LG as i64;

        if srtt_us > min_rtt_us {
            // D·lg(max(depth/D0, 1)): a queue can only push toward classic.
            let depth = (srtt_us - min_rtt_us) * self.rest_depth_us as u64 + (adj_us >> 1);
            let depth_lg = ilog2(depth).max(gs) - gs;
            self.rest_depth_us = (depth >> depth_lg) as u32;
            let depth_lg = (depth_lg as u64) << (ALPHA_BITS - D);
            if depth_lg > D0_LG {
                new += (depth_lg - D0_LG) as i64;
            }
        }
        // The module's self-limited term (−S·s) is commented out there; absent here too.
        self.classic_ecn = (new.max(0) as u64).min(C_STICKY);
    }

    /// `prague_classic_ecn_fallback`: α clamped no lower than ≈0.6 of how far `classic_ecn` is
    /// from `L_STICKY` toward `CLASSIC_ECN` (in α units, so at most 0.625·2²⁰).
    pub fn fallback_alpha(&self, alpha: u64) -> u64 {
        let c = self.classic_ecn.min(CLASSIC_ECN).saturating_sub(L_STICKY);
        let c = (c >> 1) + (c >> 3);
        alpha.max(c)
    }
}
