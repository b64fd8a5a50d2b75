//! The Linux 3.14–4.x `sch_pie` update (`calculate_probability`, `pie_vars_init`).

use super::{secs, Pie, DECAY, STEP_CAP, STEP_CAP_FROM};
use crate::{Nanos, QueuedPacket, MS};

/// Linux 3.17 `pie_init`: the first update runs `HZ / 2` after the qdisc is set up.
pub const LINUX_FIRST_UPDATE: Nanos = 500 * MS;
/// Linux 3.17 `calculate_probability`: above this delay, `p` gets another 2 % per update.
pub const LINUX_HIGH_DELAY: f64 = 0.250;

/// Linux 3.17 `calculate_probability`: alpha and beta are shifted by 7, 5 or 4 instead of 4.
pub fn linux_3_17_scale(p: f64) -> f64 {
    if p < 0.01 {
        1.0 / 8.0
    } else if p < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

impl<P: QueuedPacket> Pie<P> {
    /// Linux 3.17 `calculate_probability`.
    pub(super) fn update_linux_3_17(&mut self) {
        let c = &self.cfg;
        let backlog = self.fifo.bytes();
        let v = &mut self.vars;
        let target = secs(c.target);
        let old = v.qdelay;
        v.qdelay_old = v.qdelay;
        let qdelay = if v.avg_dq_rate > 0.0 { backlog as f64 / v.avg_dq_rate } else { 0.0 };
        // A zero estimate over a non-empty queue means no rate yet: no decay this round.
        let mut decay_allowed = !(qdelay == 0.0 && backlog != 0);
        let mut dp = linux_3_17_scale(v.prob) * (c.alpha * (qdelay - target) + c.beta * (qdelay - old));
        if c.cap_step && dp > STEP_CAP && v.prob >= STEP_CAP_FROM {
            dp = STEP_CAP;
        }
        if qdelay > LINUX_HIGH_DELAY {
            dp += STEP_CAP;
        }
        let mut p = v.prob + dp;
        if p > 1.0 {
            p = 1.0;
            decay_allowed = false;
        } else if p < 0.0 {
            p = 0.0;
        }
        if qdelay == 0.0 && old == 0.0 && decay_allowed {
            p *= DECAY;
        }
        v.prob = p;
        v.qdelay = qdelay;
        if v.qdelay < target / 2.0 && v.qdelay_old < target / 2.0 && v.prob == 0.0 && v.avg_dq_rate > 0.0 {
            // pie_vars_init
            v.dq_count = None;
            v.avg_dq_rate = 0.0;
            v.burst = c.max_burst;
        }
    }
}
