//! `tcp_siad_ssthresh` (spec §6, L1703–1727, [C] L3480–3685): the congestion event of full
//! SIAD and of the two variants rebuilt from it (SI_trend_fastIncrease, SIAD_addDecrease).
//! Order matters (§11 m): cwnd_max with the old thresholds, the min-delay guard, the adaptive
//! ratio, N, the target with the new ssthresh, α with the new N.

use super::variants::{less_offset, Variant};
use super::{Siad, Window, MIN_CWND, OFFSET, UNSET};

impl Siad {
    /// Returns the new ssthresh in packets and sets incthresh, increase, N and prev_max_cwnd.
    pub(crate) fn siad_ssthresh(&mut self, w: &Window) -> u64 {
        self.cwnd_cnt = 0;
        let variant = self.cfg.variant;
        let cm = self.cwnd_max(w, variant != Variant::SiadAddDecrease);
        let ssth = if variant == Variant::SiTrendFastIncrease {
            // No delay logic: halve the corrected window (spec §12, L2182, L2199).
            (cm / 2).max(MIN_CWND)
        } else {
            self.monotone_min_guard();
            less_offset(self.beta_times(cm), OFFSET)
        };
        self.refresh_num_rtt(variant.tracks_delay());
        self.incthresh = if variant == Variant::SiadAddDecrease {
            cm.max(ssth)
        } else if self.prev_max_cwnd < 2 * cm {
            // Trend (L1677–1686): aim higher if the window grew since the last event, lower if not.
            (2 * cm - self.prev_max_cwnd).max(ssth)
        } else {
            // Fell by half or more: no target, Fast Increase from α = 1 (code-only guard).
            ssth
        };
        // Scalable Increase (L1666, L1673): α = (incthresh − ssthresh)/N, at least 1.
        self.increase = self.n.max(self.incthresh - ssth);
        self.prev_max_cwnd = cm;
        ssth
    }

    /// §6.1 (Eq. at L1707, L1709–1711): the window when congestion really happened, one RTT of
    /// growth ago. Without `fast_increase` (SIAD_addDecrease) α never doubled, so only the
    /// slow-start and Linear-Increment cases apply.
    fn cwnd_max(&self, w: &Window, fast_increase: bool) -> u64 {
        let (cwnd, n, inc) = (w.cwnd, self.n, self.increase);
        if !self.increase_performed {
            return cwnd;
        }
        let a = self.alpha_int();
        let above_min = cwnd - MIN_CWND.min(cwnd);
        if inc >= cwnd * n || cwnd <= w.ssthresh {
            // Slow start, or α ≥ cwnd (the printed "α ≤ cwnd" is a typo, spec §14 #1).
            cwnd / 2
        } else if !fast_increase {
            cwnd - above_min.min(a)
        } else if cwnd > self.incthresh && inc == (cwnd / 2) * n {
            cwnd - cwnd / 3 // Fast Increase at the ×1.5 cap
        } else if cwnd >= self.incthresh && self.incthresh > w.ssthresh && inc == n {
            cwnd - (self.incthresh - w.ssthresh) / n // FI just entered: the old LI α
        } else if cwnd > self.incthresh {
            cwnd - above_min.min(a / 2) // FI: α doubled during the last RTT
        } else {
            cwnd - above_min.min(a) // LI: the last RTT's α
        }
    }

    /// `β · cwnd_max` with `β = RTT_min / RTT_curr` (Eq. 3.3, L1593), floored; halving
    /// without RTT information (L1725).
    pub(crate) fn beta_times(&self, cm: u64) -> u64 {
        if self.min_delay != UNSET && self.curr_delay != 0 {
            self.min_delay * cm / self.curr_delay
        } else {
            cm / 2
        }
    }

    /// §6.2 (L1759, L2427, [C] L3550–3595): with too coarse a clock min_delay creeps upwards;
    /// four strictly increasing minima at successive events fall back to the first.
    pub(crate) fn monotone_min_guard(&mut self) {
        let d = self.min_delay;
        let p = &mut self.prev_min_delay;
        if p.iter().any(|&v| d < v) {
            *p = [0; 3];
        } else if d > p[0] {
            if p[0] == 0 {
                p[0] = d;
            } else if p[1] == 0 {
                p[1] = d;
            } else if d > p[1] {
                if p[2] == 0 {
                    p[2] = d;
                } else if d > p[2] {
                    self.min_delay = p[0];
                    p[1] = 0;
                    p[2] = 0;
                }
            }
        }
    }

    /// §6.4 (L1793–1800, [C] L3631–3659): the socket option, else `num_ms` turned into RTTs of
    /// the epoch's mean RTT `(RTT_curr + RTT_min)/2`, never fewer than `num_rtt`, else `num_rtt`.
    fn refresh_num_rtt(&mut self, have_delays: bool) {
        let valid = have_delays && self.min_delay != UNSET && self.curr_delay != 0;
        self.n = if self.config_num_rtt != 0 {
            self.config_num_rtt
        } else if self.default_num_ms != 0 && valid {
            self.default_num_rtt.max(2 * self.default_num_ms / (self.curr_delay + self.min_delay))
        } else {
            self.default_num_rtt
        };
    }
}
