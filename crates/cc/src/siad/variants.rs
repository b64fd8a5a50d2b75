//! The controllers of the thesis's component study (§4.2, L2177–2191; spec §12), selected with
//! `variant = "..."`. Each keeps a subset of SIAD's pieces; the listings are Appendix A.3
//! (L4360–5970). Two variants have no listing (SI_trend_fastIncrease, SIAD_addDecrease) and are
//! rebuilt from full SIAD as the spec's §12 says ([D]); two listings lack a mandatory hook
//! (Fixed_Increase's `.ssthresh`, Fixed_Decrease's `.cong_avoid`), filled with Reno's (§14 #8).
//! AD_addDecrease (A.9) is not offered: the brief's list omits it and it was not evaluated
//! under that name.

use super::{Siad, Window, MIN_CWND, OFFSET};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Full SIAD (A.1).
    Siad,
    /// Scalable Increase, Reno halving (A.4).
    SiOnly,
    /// Reno with a fixed alpha (A.5).
    FixedIncrease,
    /// Scalable Increase with the trend target (A.6).
    SiTrend,
    /// SIAD's increase rules (trend, Fast Increase, cwnd_max correction) with halving.
    SiTrendFastIncrease,
    /// Reno increase, Adaptive Decrease (A.7).
    AdOnly,
    /// Reno increase, subtractive decrease (A.8).
    FixedDecrease,
    /// Scalable Increase with Adaptive Decrease, no trend/FI/Additional Decrease (A.10).
    SiadOnly,
    /// Full SIAD without trend and Fast Increase.
    SiadAddDecrease,
    /// SIAD_only plus the trend (A.11).
    SiadTrend,
}

/// How a variant grows the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Increase {
    /// SIAD's own per-ACK rules (spec §5.8), with or without Fast Increase.
    Siad { fast_increase: bool },
    /// Linux `tcp_slow_start` + `tcp_cong_avoid_ai(min(cwnd, cwnd·N/increase))`.
    StockScalable,
    /// Linux `tcp_reno_cong_avoid`: +1 per ACK in slow start, +1 per cwnd ACKs after.
    Reno,
    /// Reno's AI with `w = cwnd / fixed_alpha`.
    Fixed,
}

impl Variant {
    pub const ALL: [Variant; 10] = [
        Variant::Siad,
        Variant::SiOnly,
        Variant::FixedIncrease,
        Variant::SiTrend,
        Variant::SiTrendFastIncrease,
        Variant::AdOnly,
        Variant::FixedDecrease,
        Variant::SiadOnly,
        Variant::SiadAddDecrease,
        Variant::SiadTrend,
    ];

    /// The thesis's name (§4.2, Fig. 4.5–4.9), as `variant` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Siad => "SIAD",
            Variant::SiOnly => "SI_only",
            Variant::FixedIncrease => "Fixed_Increase",
            Variant::SiTrend => "SI_trend",
            Variant::SiTrendFastIncrease => "SI_trend_fastIncrease",
            Variant::AdOnly => "AD_only",
            Variant::FixedDecrease => "Fixed_Decrease",
            Variant::SiadOnly => "SIAD_only",
            Variant::SiadAddDecrease => "SIAD_addDecrease",
            Variant::SiadTrend => "SIAD_trend",
        }
    }

    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }

    pub fn increase(self) -> Increase {
        match self {
            Variant::Siad | Variant::SiTrendFastIncrease => Increase::Siad { fast_increase: true },
            Variant::SiadAddDecrease => Increase::Siad { fast_increase: false },
            Variant::SiOnly | Variant::SiTrend | Variant::SiadOnly | Variant::SiadTrend => {
                Increase::StockScalable
            }
            Variant::AdOnly | Variant::FixedDecrease => Increase::Reno,
            Variant::FixedIncrease => Increase::Fixed,
        }
    }

    /// Keeps RTT_min / RTT_curr (all Adaptive-Decrease variants).
    pub fn tracks_delay(self) -> bool {
        matches!(
            self,
            Variant::Siad
                | Variant::AdOnly
                | Variant::SiadOnly
                | Variant::SiadAddDecrease
                | Variant::SiadTrend
        )
    }

    /// Raises RTT_min when the epoch minimum recurs (§5.3) and runs Additional Decrease (§7);
    /// every other variant only ever lowers RTT_min (L2189).
    pub fn additional_decrease(self) -> bool {
        matches!(self, Variant::Siad | Variant::SiadAddDecrease)
    }

    /// AD_only, SIAD_only and SIAD_trend start `prev_delay` at 0, so their first `curr_delay`
    /// is 0 (spec §12); full SIAD starts it at INT_MAX (L3038).
    pub fn first_prev_delay_is_zero(self) -> bool {
        matches!(self, Variant::AdOnly | Variant::SiadOnly | Variant::SiadTrend)
    }
}

/// `x − OFFSET` if `x > MIN_CWND + OFFSET`, else MIN_CWND (L3618–3624); `offset = 0` for AD_only.
pub(crate) fn less_offset(x: u64, offset: u64) -> u64 {
    if x > MIN_CWND + offset {
        x - offset
    } else {
        MIN_CWND
    }
}

/// Linux 3.5.7 `tcp_reno_cong_avoid` and friends use `cwnd <= ssthresh` for slow start.
fn stock_slow_start(w: &Window) -> bool {
    w.cwnd <= w.ssthresh
}

impl Siad {
    /// The variants' `.ssthresh` hook (spec §12); full SIAD and SIAD_addDecrease are in
    /// `decrease.rs`.
    pub(crate) fn variant_ssthresh(&mut self, w: &Window) -> u64 {
        self.cwnd_cnt = 0;
        let n = self.n;
        match self.cfg.variant {
            // A.4 L4452–4471: halve, target the pre-loss window. Floor of one packet: the
            // listing has none, but a stack window cannot be empty.
            Variant::SiOnly => {
                let ssth = (w.cwnd / 2).max(1);
                self.incthresh = w.cwnd;
                self.increase = n.max(self.incthresh.saturating_sub(ssth));
                ssth
            }
            // §14 #8: the listing has no `.ssthresh`; Reno's `max(cwnd/2, 2)`.
            Variant::FixedIncrease => (w.cwnd / 2).max(MIN_CWND),
            Variant::SiTrend => {
                let ssth = (w.cwnd / 2).max(1);
                self.trend_target(w.cwnd, ssth);
                self.increase = n.max(self.incthresh.saturating_sub(ssth));
                self.prev_max_cwnd = w.cwnd;
                ssth
            }
            // A.7 L4907–4950: halve first in slow start, then the delay ratio, OFFSET = 0.
            Variant::AdOnly => {
                let cm = if stock_slow_start(w) { w.cwnd / 2 } else { w.cwnd };
                less_offset(self.beta_times(cm), 0)
            }
            // A.8 L5016–5047.
            Variant::FixedDecrease => {
                let d = self.cfg.fixed_decrease;
                if stock_slow_start(w) {
                    (w.cwnd / 2).max(1)
                } else if w.cwnd > MIN_CWND + d {
                    w.cwnd - d
                } else {
                    MIN_CWND
                }
            }
            // A.10 L5575–5605 / A.11: SIAD's LI correction, adaptive ratio, target = cm.
            Variant::SiadOnly | Variant::SiadTrend => {
                let cm = if stock_slow_start(w) {
                    w.cwnd / 2
                } else {
                    w.cwnd - (w.cwnd - MIN_CWND.min(w.cwnd)).min(self.alpha_int())
                };
                let ssth = less_offset(self.beta_times(cm), OFFSET);
                if self.cfg.variant == Variant::SiadTrend {
                    self.trend_target(cm, ssth);
                    self.prev_max_cwnd = cm;
                } else {
                    self.incthresh = cm;
                }
                self.increase = n.max(self.incthresh.saturating_sub(ssth));
                ssth
            }
            Variant::Siad | Variant::SiTrendFastIncrease | Variant::SiadAddDecrease => self.siad_ssthresh(w),
        }
    }

    /// The trend target of SI_trend / SIAD_trend: intended (prose L2181, L2187) from cwnd_max,
    /// or as printed (L4725–4747) from ssthresh when `literal_trend` is set.
    fn trend_target(&mut self, cm: u64, ssth: u64) {
        let base = if self.cfg.literal_trend { ssth } else { cm };
        self.incthresh =
            if self.prev_max_cwnd < 2 * base { (2 * base - self.prev_max_cwnd).max(ssth) } else { ssth };
    }

    /// Linux 3.5.7 stock increase for the listing-based variants (spec §12): `tcp_slow_start`
    /// (+1 per ACK while `cwnd <= ssthresh`) or `tcp_cong_avoid_ai(w)`.
    pub(crate) fn stock_increase(&mut self, w: &mut Window) {
        if stock_slow_start(w) {
            // tcp_slow_start with tcp_abc = 0: cwnd_cnt += cwnd, then +1 per cwnd counted.
            self.cwnd_cnt += w.cwnd;
            while self.cwnd_cnt >= w.cwnd {
                self.cwnd_cnt -= w.cwnd;
                w.cwnd += 1;
            }
            return;
        }
        let ai_w = match self.cfg.variant.increase() {
            Increase::StockScalable => w.cwnd.min(w.cwnd * self.n / self.increase.max(1)),
            Increase::Fixed => w.cwnd / self.cfg.fixed_alpha,
            _ => w.cwnd,
        };
        // tcp_cong_avoid_ai (3.5.7): +1 once the counter has reached w, counter back to 0.
        if self.cwnd_cnt >= ai_w {
            w.cwnd += 1;
            self.cwnd_cnt = 0;
        } else {
            self.cwnd_cnt += 1;
        }
    }
}
