//! SIAD's tunables (spec `siad-spec.md` §2, §10) read from a flow's `[flows.cc]` table.
//!
//! The thesis module has exactly two: `num_rtt` and `num_ms` (L2873–2886). A scenario key plays
//! the role of the per-host sysctl, so every `num_rtt` from a scenario obeys the sysctl's clamp
//! `MIN_RTT = 2` (L3005, spec §14 #5: we clamp all scenario-sourced values and say so by
//! rejecting smaller ones). The per-connection socket option is [`super::Siad::set_num_rtt`].
//! The rest select the §4.2 component-study variants and the emulated clock resolution.

use super::variants::Variant;
use crate::{Nanos, ParamError, Params};

const MS: Nanos = 1_000_000;

/// `MIN_RTT` (L2869): the smallest epoch length a sysctl may configure.
pub const MIN_NUM_RTT: u64 = 2;

/// SIAD parameters; scenario keys are the field names.
#[derive(Clone, Debug, PartialEq)]
pub struct SiadConfig {
    /// Congestion-epoch length in RTTs, `Num_RTT` (module parameter `num_rtt`, default 20,
    /// L1798, L2864). Key `num_rtt`.
    pub num_rtt: u64,
    /// Epoch length in milliseconds, 0 = off (module parameter `num_ms`, L2875). The epoch is
    /// the longer of `num_rtt` RTTs and `num_ms` (L1796). Key `num_ms`.
    pub num_ms: u64,
    /// Which controller of the thesis's component study (§4.2, L2177–2191) runs. Default
    /// [`Variant::Siad`], the full algorithm. Key `variant`.
    pub variant: Variant,
    /// SI_trend / SIAD_trend only: compute the trend from ssthresh as the printed listings do
    /// (L4728–4735, L5904–5908) instead of from cwnd_max as the prose says (spec §14 #7).
    /// Default false. Key `literal_trend`.
    pub literal_trend: bool,
    /// Fixed_Increase only: the fixed alpha in packets per RTT (the listing misuses the
    /// `tcp_siad_num_rtt` sysctl for it, default 1, L4541–4549). Key `fixed_alpha`.
    pub fixed_alpha: u64,
    /// Fixed_Decrease only: packets subtracted per congestion event (compile-time 42 in the
    /// listing, L5016; "configurable" in the prose, L2184). Key `fixed_decrease`.
    pub fixed_decrease: u64,
    /// Granularity of the delays SIAD works with. Linux 3.5.7 takes them from the timestamp
    /// echo in jiffies (HZ = 1000: 1 ms, L2427, spec §1). Key `delay_resolution`.
    pub delay_resolution: Nanos,
}

impl Default for SiadConfig {
    fn default() -> Self {
        Self {
            num_rtt: 20,
            num_ms: 0,
            variant: Variant::Siad,
            literal_trend: false,
            fixed_alpha: 1,
            fixed_decrease: 42,
            delay_resolution: MS,
        }
    }
}

impl SiadConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        let variant = p.choice("variant", d.variant.name(), &names)?;
        Ok(Self {
            num_rtt: p.u64_in("num_rtt", d.num_rtt, MIN_NUM_RTT, 100_000)?,
            num_ms: p.u64_in("num_ms", d.num_ms, 0, 3_600_000)?,
            variant: Variant::from_name(&variant).unwrap_or(d.variant),
            literal_trend: p.bool("literal_trend", d.literal_trend)?,
            fixed_alpha: p.u64_in("fixed_alpha", d.fixed_alpha, 1, 100_000)?,
            fixed_decrease: p.u64_in("fixed_decrease", d.fixed_decrease, 1, 1_000_000)?,
            delay_resolution: p.duration("delay_resolution", d.delay_resolution, 1_000, 100 * MS)?,
        })
    }

    /// `num_ms` in delay ticks, as the `num_ms` arithmetic of §6.4 wants it.
    pub fn num_ms_ticks(&self) -> u64 {
        self.num_ms * MS / self.delay_resolution
    }
}
