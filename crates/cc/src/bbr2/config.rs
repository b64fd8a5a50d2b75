//! BBRv2's parameters: scenario keys, with v2alpha's defaults (`tcp_bbr2.c` module params).

use crate::bbr::aggregation::{EXTRA_ACKED_MAX, EXTRA_ACKED_WIN_RTTS, MAX_WIN_RTTS};
use crate::bbr::mode::{HIGH_GAIN, PACING_MARGIN};
use crate::bbr_engine::{check_probe_rtt_window, Generation, Tuning, Version, MS};
use crate::{Nanos, ParamError, Params, NANOS_PER_SEC};

/// BBRv2 parameters; scenario keys are the field names, defaults are v2alpha's.
#[derive(Clone, Debug, PartialEq)]
pub struct Bbr2Config {
    /// Startup pacing and cwnd gain (`bbr_high_gain`, `bbr_startup_cwnd_gain` = 2.885).
    pub high_gain: f64,
    /// Drain pacing gain (`bbr_drain_gain` = 1/2.885).
    pub drain_gain: f64,
    /// ProbeBW cwnd gain (`bbr_cwnd_gain` = 2).
    pub cwnd_gain: f64,
    /// What remains of `bw_lo`/`inflight_lo` after a lossy round, and the floor of
    /// `inflight_hi` as a fraction of the target (`bbr_beta` = 30 % cut, so 0.7).
    pub beta: f64,
    /// Loss rate (lost / in flight at send) above which in flight is too high (`bbr_loss_thresh`).
    pub loss_thresh: f64,
    /// Fraction of `inflight_hi` left unused in CRUISE and ProbeRTT (`bbr_inflight_headroom`).
    pub inflight_headroom: f64,
    /// In-flight level that ends PROBE_UP after a min RTT, as a multiple of BDP (`bbr_bw_probe_pif_gain`).
    pub bw_probe_pif_gain: f64,
    /// Reno-coexistence probe spacing in rounds per BDP packet (`bbr_bw_probe_reno_gain`); 0 disables.
    pub bw_probe_reno_gain: f64,
    /// Most rounds between bandwidth probes (`bbr_bw_probe_max_rounds`).
    pub bw_probe_max_rounds: u64,
    /// Spread of the round count drawn at each probe (`bbr_bw_probe_rand_rounds`).
    pub bw_probe_rand_rounds: u64,
    /// Shortest wall-clock wait between probes (`bbr_bw_probe_base_us` = 2 s).
    pub bw_probe_base: Nanos,
    /// Spread of the wall-clock wait (`bbr_bw_probe_rand_us` = 1 s).
    pub bw_probe_rand: Nanos,
    /// Loss events in a Recovery round that end Startup when loss is too high (`bbr_full_loss_cnt`); 0 disables.
    pub full_loss_cnt: u64,
    /// Min-RTT filter window (`bbr_min_rtt_win_sec` = 10 s).
    pub min_rtt_window: Nanos,
    /// ProbeRTT spacing (`bbr_probe_rtt_win_ms` = 5 s).
    pub probe_rtt_window: Nanos,
    /// ProbeRTT hold time (`bbr_probe_rtt_mode_ms` = 200 ms); 0 disables ProbeRTT.
    pub probe_rtt_time: Nanos,
    /// ProbeRTT cwnd as a fraction of BDP (`bbr_probe_rtt_cwnd_gain` = 0.5); 0 means 4 packets.
    pub probe_rtt_cwnd_gain: f64,
    /// Pacing margin below the estimate (`bbr_pacing_margin_percent` = 1 %).
    pub pacing_margin: f64,
    /// React to ECN (`bbr_ecn_enable`, off upstream).
    pub ecn: bool,
    /// CE fraction that makes a probe too high (`bbr_ecn_thresh`).
    pub ecn_thresh: f64,
    /// Cut per unit of `ecn_alpha` (`bbr_ecn_factor` = 1/3).
    pub ecn_factor: f64,
    /// EWMA gain of `ecn_alpha` (`bbr_ecn_alpha_gain` = 1/16).
    pub ecn_alpha_gain: f64,
    /// ECN is used only when min RTT is at most this (`bbr_ecn_max_rtt_us` = 5 ms); 0 = any RTT.
    pub ecn_max_rtt: Nanos,
    /// Add the ACK-aggregation allowance to the cwnd target (`bbr_update_ack_aggregation`,
    /// `bbr_ack_aggregation_cwnd`; on in v2alpha); false: `cwnd_gain · BDP` alone.
    pub extra_acked: bool,
    /// Multiple of the measured excess added (`bbr_extra_acked_gain` = 256/256 = 1); 0 also
    /// turns the allowance off, as in Linux.
    pub extra_acked_gain: f64,
    /// Rounds per slot of the excess's windowed maximum (`bbr_extra_acked_win_rtts` = 5).
    pub extra_acked_rounds: u64,
    /// The allowance is at most this much data at the estimated rate (`bbr_extra_acked_max_us`
    /// = 100 ms).
    pub extra_acked_max: Nanos,
    /// Apply the allowance in Startup too, with 1-round slots there
    /// (`bbr_extra_acked_in_startup` = 1).
    pub extra_acked_in_startup: bool,
}

impl Default for Bbr2Config {
    fn default() -> Self {
        Self {
            high_gain: HIGH_GAIN,
            drain_gain: 1.0 / HIGH_GAIN,
            cwnd_gain: 2.0,
            beta: 0.7,
            loss_thresh: 0.02,
            inflight_headroom: 0.15,
            bw_probe_pif_gain: 1.25,
            bw_probe_reno_gain: 1.0,
            bw_probe_max_rounds: 63,
            bw_probe_rand_rounds: 2,
            bw_probe_base: 2 * NANOS_PER_SEC,
            bw_probe_rand: NANOS_PER_SEC,
            full_loss_cnt: 8,
            min_rtt_window: 10 * NANOS_PER_SEC,
            probe_rtt_window: 5 * NANOS_PER_SEC,
            probe_rtt_time: 200 * MS,
            probe_rtt_cwnd_gain: 0.5,
            pacing_margin: PACING_MARGIN,
            ecn: false,
            ecn_thresh: 0.5,
            ecn_factor: 1.0 / 3.0,
            ecn_alpha_gain: 1.0 / 16.0,
            ecn_max_rtt: 5 * MS,
            extra_acked: true,
            extra_acked_gain: 1.0,
            extra_acked_rounds: EXTRA_ACKED_WIN_RTTS,
            extra_acked_max: EXTRA_ACKED_MAX,
            extra_acked_in_startup: true,
        }
    }
}

impl Bbr2Config {
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let s = NANOS_PER_SEC;
        let cfg = Self {
            high_gain: p.f64_in("high_gain", d.high_gain, 1.0, 10.0)?,
            drain_gain: p.f64_in("drain_gain", d.drain_gain, 0.1, 1.0)?,
            cwnd_gain: p.f64_in("cwnd_gain", d.cwnd_gain, 1.0, 10.0)?,
            beta: p.f64_in("beta", d.beta, 0.0, 1.0)?,
            loss_thresh: p.f64_in("loss_thresh", d.loss_thresh, 0.001, 0.5)?,
            inflight_headroom: p.f64_in("inflight_headroom", d.inflight_headroom, 0.0, 0.9)?,
            bw_probe_pif_gain: p.f64_in("bw_probe_pif_gain", d.bw_probe_pif_gain, 1.0, 4.0)?,
            bw_probe_reno_gain: p.f64_in("bw_probe_reno_gain", d.bw_probe_reno_gain, 0.0, 4.0)?,
            bw_probe_max_rounds: p.u64_in("bw_probe_max_rounds", d.bw_probe_max_rounds, 1, 255)?,
            bw_probe_rand_rounds: p.u64_in("bw_probe_rand_rounds", d.bw_probe_rand_rounds, 0, 15)?,
            bw_probe_base: p.duration("bw_probe_base", d.bw_probe_base, 0, 60 * s)?,
            bw_probe_rand: p.duration("bw_probe_rand", d.bw_probe_rand, 0, 60 * s)?,
            full_loss_cnt: p.u64_in("full_loss_cnt", d.full_loss_cnt, 0, 15)?,
            min_rtt_window: p.duration("min_rtt_window", d.min_rtt_window, 10 * MS, 600 * s)?,
            probe_rtt_window: p.duration("probe_rtt_window", d.probe_rtt_window, 10 * MS, 600 * s)?,
            probe_rtt_time: p.duration("probe_rtt_time", d.probe_rtt_time, 0, 10 * s)?,
            probe_rtt_cwnd_gain: p.f64_in("probe_rtt_cwnd_gain", d.probe_rtt_cwnd_gain, 0.0, 1.0)?,
            pacing_margin: p.f64_in("pacing_margin", d.pacing_margin, 0.0, 0.5)?,
            ecn: p.bool("ecn", d.ecn)?,
            ecn_thresh: p.f64_in("ecn_thresh", d.ecn_thresh, 0.0, 1.0)?,
            ecn_factor: p.f64_in("ecn_factor", d.ecn_factor, 0.0, 1.0)?,
            ecn_alpha_gain: p.f64_in("ecn_alpha_gain", d.ecn_alpha_gain, 0.0, 1.0)?,
            ecn_max_rtt: p.duration("ecn_max_rtt", d.ecn_max_rtt, 0, 10 * s)?,
            extra_acked: p.bool("extra_acked", d.extra_acked)?,
            extra_acked_gain: p.f64_in("extra_acked_gain", d.extra_acked_gain, 0.0, 8.0)?,
            extra_acked_rounds: p.u64_in("extra_acked_rounds", d.extra_acked_rounds, 1, MAX_WIN_RTTS)?,
            extra_acked_max: p.duration("extra_acked_max", d.extra_acked_max, 0, 10 * s)?,
            extra_acked_in_startup: p.bool("extra_acked_in_startup", d.extra_acked_in_startup)?,
        };
        check_probe_rtt_window(cfg.probe_rtt_window, cfg.min_rtt_window)?;
        Ok(cfg)
    }
}

/// v2alpha's constants for the engine: Startup's one `high_gain` for pacing and cwnd, the
/// fixed UP/DOWN gains 1.25/0.75, no extra cwnd gain in UP, `bbr_full_ecn_cnt` = 2 and no
/// ECN re-probe (`bbr_ecn_reprobe_gain` = 0).
impl Generation for Bbr2Config {
    const NAME: &'static str = "bbr2";
    const VERSION: Version = Version::V2;

    fn tuning(&self) -> Tuning {
        Tuning {
            startup_pacing_gain: self.high_gain,
            startup_cwnd_gain: self.high_gain,
            drain_gain: self.drain_gain,
            cwnd_gain: self.cwnd_gain,
            bw_probe_cwnd_gain: 0.0,
            probe_up_gain: 1.25,
            probe_down_gain: 0.75,
            beta: self.beta,
            loss_thresh: self.loss_thresh,
            inflight_headroom: self.inflight_headroom,
            bw_probe_pif_gain: self.bw_probe_pif_gain,
            bw_probe_reno_gain: self.bw_probe_reno_gain,
            bw_probe_max_rounds: self.bw_probe_max_rounds,
            bw_probe_rand_rounds: self.bw_probe_rand_rounds,
            bw_probe_base: self.bw_probe_base,
            bw_probe_rand: self.bw_probe_rand,
            full_loss_cnt: self.full_loss_cnt,
            full_ecn_cnt: 2,
            min_rtt_window: self.min_rtt_window,
            probe_rtt_window: self.probe_rtt_window,
            probe_rtt_time: self.probe_rtt_time,
            probe_rtt_cwnd_gain: self.probe_rtt_cwnd_gain,
            pacing_margin: self.pacing_margin,
            ecn: self.ecn,
            ecn_thresh: self.ecn_thresh,
            ecn_factor: self.ecn_factor,
            ecn_alpha_gain: self.ecn_alpha_gain,
            ecn_max_rtt: self.ecn_max_rtt,
            ecn_reprobe_gain: 0.0,
            extra_acked: self.extra_acked,
            extra_acked_gain: self.extra_acked_gain,
            extra_acked_rounds: self.extra_acked_rounds,
            extra_acked_max: self.extra_acked_max,
            extra_acked_in_startup: self.extra_acked_in_startup,
        }
    }
}
