//! The RFC 8033 update (§4.2, §4.4 burst allowance decrement, §5.5 step cap).

use super::{secs, Pie, DECAY, STEP_CAP, STEP_CAP_FROM};
use crate::QueuedPacket;

/// RFC 8033 §4.2 auto-tuning: the factor applied to `dp` at drop probability `p`.
pub fn rfc8033_scale(p: f64) -> f64 {
    if p < 1e-6 {
        1.0 / 2048.0
    } else if p < 1e-5 {
        1.0 / 512.0
    } else if p < 1e-4 {
        1.0 / 128.0
    } else if p < 1e-3 {
        1.0 / 32.0
    } else if p < 1e-2 {
        1.0 / 8.0
    } else if p < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

impl<P: QueuedPacket> Pie<P> {
    /// RFC 8033 §4.2, §4.4 (burst allowance decrement) and §5.5.
    pub(super) fn update_rfc8033(&mut self) {
        let c = &self.cfg;
        let qdelay = self.current_qdelay();
        let v = &mut self.vars;
        let (target, old) = (secs(c.target), v.qdelay_old);
        let mut dp = rfc8033_scale(v.prob) * (c.alpha * (qdelay - target) + c.beta * (qdelay - old));
        if c.cap_step && v.prob >= STEP_CAP_FROM && dp > STEP_CAP {
            dp = STEP_CAP;
        }
        let mut p = v.prob + dp;
        if qdelay == 0.0 && old == 0.0 {
            p *= DECAY;
        }
        v.prob = p.clamp(0.0, 1.0);
        v.qdelay_old = qdelay;
        v.burst = v.burst.saturating_sub(c.tupdate);
    }
}
