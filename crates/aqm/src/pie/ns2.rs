//! The ns-2 PIE update: `PIEQueue::calculate_p` of ns-2's `queue/pie.cc` (Preethi Natarajan,
//! Rong Pan, Chiara Piglione, Greg White, Takashi Hayakawa; © 2013–2014 Cisco Systems and Cable
//! Television Laboratories), with `Docsis_mode_` off, as the ABE paper's simulations ran it
//! (ABE L203). The rest of that code lives in `mod.rs` and is described here, function by function.
//!
//! `calculate_p` (every `tUpdate_`, first at `sUpdate_` = 0):
//!
//! 1. `qdelay = q_->byteLength() / avg_dq_rate`, or 0 with `missing_init_flag` when no rate is
//!    known yet.
//! 2. While `burst_allowance_ > 0`: `drop_prob = 0`, and the controller is skipped (steps 3–6).
//! 3. `dp = a_ * (qdelay - qdelay_ref_) + b_ * (qdelay - qdelay_old)`, scaled by the current
//!    `drop_prob` ([`ns2_scale`]): `/32` below 0.001, `/8` below 0.01, `/2` below 0.1, `/0.5`
//!    below 1, `/0.125` below 10, `/0.03125` above. Above 10 % the step is therefore *doubled*,
//!    not used as is (RFC, Linux), and the tiers at 1 and 10 are reachable because of step 6.
//! 4. Step cap: `drop_prob >= 0.1 && dp > 0.02` → `dp = 0.02` (no switch to turn it off; here
//!    `cap_step`).
//! 5. `p = drop_prob + dp`; then `p *= 0.98` if `qdelay == 0 && qdelay_old == 0`, *else if*
//!    `qdelay > 0.2` s, `p += 0.02` ([`NS2_HIGH_DELAY`]; Linux 250 ms, added to the capped step).
//!    The decay is not suppressed when the 0 only means "no rate known" (Linux suppresses it).
//! 6. `drop_prob = max(0, p)`: no upper bound; `p` may exceed 1 and then needs several updates of
//!    (×8, ×32 amplified) negative steps to come back below 1.
//! 7. `burst_allowance_ -= tUpdate_`, floored at 0.
//! 8. If `qdelay` and `qdelay_old` are both below `qdelay_ref_/2`, `drop_prob == 0` and a rate
//!    was known: `dq_count = -1; avg_dq_rate = 0`. `in_measurement` is left alone, so a running
//!    measurement goes on from -1 bytes with its old start time. The burst allowance is not
//!    touched (Linux `pie_vars_init` restores it).
//! 9. The burst state machine (`burst_state_`, `burst_reset_`): with the same quiet condition and
//!    `burst_allowance_ == 0`, `IN_BURST_PROTECTING` → `IN_BURST` (count 0); in `IN_BURST` the
//!    count rises and above `BURST_RESET_TIMEOUT / tUpdate_` (1.5 s / 30 ms = 50) the state is
//!    `NO_BURST`. A non-quiet update in `IN_BURST` zeroes the count.
//! 10. `qdelay_old = qdelay`; the timer is rescheduled by `tUpdate_`.
//!
//! `drop_early` (each arrival the buffer admits, `enque` checks `qlen >= qlim` first): no drop
//! while `burst_allowance_ > 0`; in `NO_BURST` the state becomes `IN_BURST_PROTECTING` and
//! `burst_allowance_ = max_burst_`, and the packet is still decided below; no drop if
//! `qdelay_old < qdelay_ref_/2 && drop_prob < 0.2` (`qdelay_old` is by then the last update's
//! estimate) or if `qlen <= 2 * mean_pktsize_` (bytes queued before the arrival); otherwise a
//! uniform `u > p` keeps the packet, and a picked packet is CE-marked instead of dropped if
//! `setbit_` (the queue's `ecn`), the packet is ECN-capable, and `!use_mark_p_ || p < mark_p_`.
//! With `bytes_` (byte mode, off in the paper) `p` is scaled by `size / mean_pktsize_`; not
//! modelled.
//!
//! `deque`: the rate estimator of `mod.rs` with `avg_dq_rate = 0.5 * avg + 0.5 * sample` and a
//! restart only while `byteLength() > dq_threshold` (start at `>=`). The burst allowance is not
//! touched at dequeue (Linux spends it there).
//!
//! Not modelled: DOCSIS mode (`Docsis_mode_`, accumulated-probability derandomisation, the
//! `qlim_ * mean_pktsize_` byte limit of this version of `enque` — the buffer here is the link's
//! `Limit`), and ns-2's own random stream.

use super::{secs, BurstState, Pie, DECAY, STEP_CAP, STEP_CAP_FROM};
use crate::{Nanos, QueuedPacket};

/// ns-2 `calculate_p`: above this delay (seconds), `p` gets another 2 % per update.
pub const NS2_HIGH_DELAY: f64 = 0.2;
/// ns-2 `pie.h` `BURST_RESET_TIMEOUT` (seconds): quiet time before the allowance may be re-armed.
pub const NS2_BURST_RESET_TIMEOUT: f64 = 1.5;
/// ns-2 `sUpdate_` default: the update timer starts at time 0.
pub const NS2_FIRST_UPDATE: Nanos = 0;

/// ns-2 `calculate_p`: the factor applied to `dp` at drop probability `p` (`p /= 32`, `/= 8`,
/// `/= 2`, `/= 0.5`, `/= 0.125`, `/= 0.03125`; all powers of two, so the product is exact).
pub fn ns2_scale(p: f64) -> f64 {
    if p < 0.001 {
        1.0 / 32.0
    } else if p < 0.01 {
        1.0 / 8.0
    } else if p < 0.1 {
        1.0 / 2.0
    } else if p < 1.0 {
        2.0
    } else if p < 10.0 {
        8.0
    } else {
        32.0
    }
}

impl<P: QueuedPacket> Pie<P> {
    /// ns-2 `PIEQueue::calculate_p` (see the module documentation for the steps).
    pub(super) fn update_ns2(&mut self) {
        let c = &self.cfg;
        let backlog = self.fifo.bytes();
        let v = &mut self.vars;
        let half_target = secs(c.target) / 2.0;
        let rate_known = v.avg_dq_rate > 0.0;
        let qdelay = if rate_known { backlog as f64 / v.avg_dq_rate } else { 0.0 };
        // ns-2's `edv_.qdelay_old` is, between updates, the last update's estimate.
        let old = v.qdelay;
        if v.burst > 0 {
            v.prob = 0.0;
        } else {
            let mut dp = ns2_scale(v.prob) * (c.alpha * (qdelay - secs(c.target)) + c.beta * (qdelay - old));
            if c.cap_step && v.prob >= STEP_CAP_FROM && dp > STEP_CAP {
                dp = STEP_CAP;
            }
            let mut p = v.prob + dp;
            if qdelay == 0.0 && old == 0.0 {
                p *= DECAY;
            } else if qdelay > NS2_HIGH_DELAY {
                p += STEP_CAP;
            }
            v.prob = p.max(0.0);
        }
        v.burst = v.burst.saturating_sub(c.tupdate);
        let quiet = qdelay < half_target && old < half_target && v.prob == 0.0;
        if quiet && rate_known {
            v.avg_dq_rate = 0.0;
            v.dq_count = v.dq_count.map(|_| -1);
        }
        if quiet && v.burst == 0 {
            match v.burst_state {
                BurstState::Protecting => {
                    v.burst_state = BurstState::InBurst;
                    v.burst_reset = 0;
                }
                BurstState::InBurst => {
                    v.burst_reset += 1;
                    // `int burst_reset_limit = BURST_RESET_TIMEOUT / tUpdate` truncates.
                    if v.burst_reset > (NS2_BURST_RESET_TIMEOUT / secs(c.tupdate)) as u32 {
                        v.burst_reset = 0;
                        v.burst_state = BurstState::NoBurst;
                    }
                }
                BurstState::NoBurst => {}
            }
        } else if v.burst_state == BurstState::InBurst {
            v.burst_reset = 0;
        }
        v.qdelay_old = old;
        v.qdelay = qdelay;
    }
}
