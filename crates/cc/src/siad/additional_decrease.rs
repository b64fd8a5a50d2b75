//! Additional Decrease (spec §7, L1598–1628, L1729–1759, [C] L3187–3342): if RTT_min is not
//! seen again about one RTT after a reduction, the queue did not drain (the flows were not
//! synchronised, L1731); SIAD reduces again within the epoch, without a congestion signal, and
//! re-spreads α so the epoch still lasts N RTTs.

use super::{Siad, Window, MIN_CWND, OFFSET, UNSET};

impl Siad {
    /// §5.7: cwnd grew past `ssthresh + α + 2` (~1 RTT after the reduction, measured in window
    /// growth rather than a timer, L1887), the minimum was not seen, and fewer than N − 1
    /// Additional Decreases happened this epoch (L1622, L1749).
    pub(crate) fn additional_decrease_due(&self, w: &Window) -> bool {
        self.cfg.variant.additional_decrease()
            && !self.min_delay_seen
            && self.min_delay != UNSET // never sampled: no ratio to apply (not in the module)
            && w.cwnd > w.ssthresh.saturating_add(self.alpha_int() + 2)
            && self.dec_cnt + 1 < self.n
    }

    /// One Additional Decrease: cwnd and ssthresh are set directly (§7 pseudo-code).
    pub(crate) fn additional_decrease(&mut self, w: &mut Window) {
        self.dec_cnt += 1;
        self.cwnd_cnt = 0;
        let n = self.n;
        // The ratio applied to ssthresh, the window of ~1 RTT ago that matches this sample
        // (L1737); RTT_curr cannot be 0 here in practice, guarded anyway (§11 b).
        let mut cwnd = self.min_delay * w.ssthresh / self.curr_delay.max(1);
        if cwnd > MIN_CWND + OFFSET {
            cwnd -= OFFSET;
            // α_new assumes one more reduction of α_new happens now: N − dec_cnt − 1 RTTs
            // remain; at least 1 to avoid the listing's division by zero (§11 f).
            self.increase = self.spread(cwnd, n.saturating_sub(self.dec_cnt + 1).max(1));
            let alpha_new = self.alpha_int();
            // A full cut to MIN_CWND spread over the remaining Additional Decreases (L1749).
            let reduce = cwnd / n.saturating_sub(self.dec_cnt).max(1);
            if reduce < alpha_new {
                cwnd = self.cut(cwnd, alpha_new);
            } else {
                cwnd = self.cut(cwnd, reduce);
                self.increase = self.spread(cwnd, n.saturating_sub(self.dec_cnt).max(1));
            }
        } else {
            cwnd = MIN_CWND;
            self.min_delay_seen = true;
            self.increase = self.spread(cwnd, n.saturating_sub(self.dec_cnt).max(1));
        }
        w.cwnd = cwnd;
        w.ssthresh = cwnd - 1;
        // α would have to more than double cwnd per RTT: stop Additional Decreases.
        if self.increase > w.cwnd * n {
            self.min_delay_seen = true;
        }
    }

    /// `max(N, (incthresh − cwnd)·N / rtts)`: α to reach the target in `rtts` RTTs, ≥ 1. The
    /// subtraction saturates where the module's u32 would wrap (§11 e).
    fn spread(&self, cwnd: u64, rtts: u64) -> u64 {
        self.n.max(self.incthresh.saturating_sub(cwnd) * self.n / rtts)
    }

    /// `cwnd − by`, or MIN_CWND (and no further Additional Decreases) if that leaves too little.
    fn cut(&mut self, cwnd: u64, by: u64) -> u64 {
        if by + MIN_CWND < cwnd {
            cwnd - by
        } else {
            self.min_delay_seen = true;
            MIN_CWND
        }
    }
}
