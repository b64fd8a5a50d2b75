//! BBRv1's path model (Linux `tcp_bbr.c`): round counting, the windowed maximum of the delivery
//! rate (`BtlBw`) and the windowed minimum RTT (`RTprop`).

use crate::Nanos;

/// Largest `bw_rounds` the fixed-size max filter holds (no allocation per connection).
pub const MAX_BW_ROUNDS: usize = 32;

/// Linux `bbr_update_bw`'s round counting: a round ends when a packet sent after the previous
/// round started is delivered (`prior_delivered >= next_rtt_delivered`). Kept here rather than
/// taken from the stack because Linux restarts the round on entering recovery and ProbeRTT.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rounds {
    pub count: u64,
    next_rtt_delivered: u64,
}

impl Rounds {
    /// Returns whether this sample starts a new round; `delivered` is the total after the ACK.
    pub fn on_sample(&mut self, prior_delivered: u64, delivered: u64) -> bool {
        if prior_delivered < self.next_rtt_delivered {
            return false;
        }
        self.next_rtt_delivered = delivered;
        self.count += 1;
        true
    }

    /// The next round starts with data sent from now on (`next_rtt_delivered = tp->delivered`).
    pub fn restart(&mut self, delivered: u64) {
        self.next_rtt_delivered = delivered;
    }
}

/// Exact windowed maximum over the last `window` rounds: one slot per round, the slot of round
/// `r` reused at round `r + MAX_BW_ROUNDS`. Linux keeps Nichols' three-sample `minmax`
/// approximation of the same quantity; the exact maximum differs from it only while an older
/// maximum ages out.
#[derive(Clone, Copy, Debug)]
pub struct MaxBwFilter {
    window: u64,
    slots: [(u64, f64); MAX_BW_ROUNDS],
}

impl MaxBwFilter {
    pub fn new(window: u64) -> Self {
        Self { window: window.clamp(1, MAX_BW_ROUNDS as u64), slots: [(u64::MAX, 0.0); MAX_BW_ROUNDS] }
    }

    /// Records `bw` (bytes/s) measured in round `round`.
    pub fn update(&mut self, round: u64, bw: f64) {
        let slot = &mut self.slots[(round % MAX_BW_ROUNDS as u64) as usize];
        if slot.0 != round {
            *slot = (round, bw);
        } else if bw > slot.1 {
            slot.1 = bw;
        }
    }

    /// Maximum over rounds `(round - window, round]`; 0 before any sample.
    pub fn max(&self, round: u64) -> f64 {
        let live = |r: u64| r != u64::MAX && r <= round && round - r < self.window;
        self.slots.iter().filter(|(r, _)| live(*r)).map(|(_, bw)| *bw).fold(0.0, f64::max)
    }

    pub fn reset(&mut self) {
        *self = Self::new(self.window);
    }
}

/// Linux `bbr_update_min_rtt`'s filter: the lowest RTT, kept until it is `window` old; an
/// expired minimum takes the next sample whatever it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinRtt {
    pub window: Nanos,
    pub value: Option<Nanos>,
    pub stamp: Nanos,
}

impl MinRtt {
    pub fn new(window: Nanos) -> Self {
        Self { window, value: None, stamp: 0 }
    }

    /// Linux `filter_expired`: `now > stamp + window`.
    pub fn expired(&self, now: Nanos) -> bool {
        now > self.stamp.saturating_add(self.window)
    }

    /// Takes `rtt` if it is a new minimum (strictly lower) or the old one expired. Returns whether
    /// the filter was expired before the sample (ProbeRTT entry looks at that).
    pub fn update(&mut self, now: Nanos, rtt: Option<Nanos>) -> bool {
        let expired = self.expired(now);
        if let Some(rtt) = rtt {
            if self.value.is_none_or(|m| rtt < m) || expired {
                self.value = Some(rtt);
                self.stamp = now;
            }
        }
        expired
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn rounds_end_when_data_sent_after_the_round_start_is_delivered() {
        let mut r = Rounds::default();
        assert!(r.on_sample(0, 10)); // the first sample opens round 1, which ends at delivered 10
        assert!(!r.on_sample(5, 12));
        assert!(r.on_sample(10, 30));
        assert_eq!(r.count, 2);
        r.restart(40);
        assert!(!r.on_sample(30, 41));
        assert!(r.on_sample(40, 50));
    }

    #[test]
    fn max_filter_forgets_a_peak_after_window_rounds() {
        let mut f = MaxBwFilter::new(10);
        f.update(1, 100.0);
        f.update(1, 50.0);
        f.update(2, 80.0);
        assert_eq!(f.max(2), 100.0);
        assert_eq!(f.max(10), 100.0); // round 1 is the 10th round back from round 10
        assert_eq!(f.max(11), 80.0);
        assert_eq!(f.max(12), 0.0);
        f.update(12 + MAX_BW_ROUNDS as u64, 7.0); // reuses round 12's slot
        assert_eq!(f.max(12 + MAX_BW_ROUNDS as u64), 7.0);
    }

    #[test]
    fn min_rtt_takes_lower_samples_and_any_sample_once_expired() {
        let mut m = MinRtt::new(10_000 * MS);
        m.update(0, Some(100 * MS));
        m.update(1_000 * MS, Some(120 * MS));
        assert_eq!(m.value, Some(100 * MS));
        m.update(2_000 * MS, Some(100 * MS)); // equal is not lower: the stamp stays
        assert_eq!(m.stamp, 0);
        assert!(!m.update(10_000 * MS, Some(130 * MS)));
        assert!(m.update(10_001 * MS, Some(130 * MS)));
        assert_eq!((m.value, m.stamp), (Some(130 * MS), 10_001 * MS));
    }
}
