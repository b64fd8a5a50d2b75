//! Congestion events from loss times, as the SIAD thesis measures its feedback rate (§4.1.2,
//! L2139): "all losses that occur within 2·RTT are accounted for the same congestion event", the
//! RTT being what the flow sees at that loss — its base RTT plus the queueing then (at a full
//! drop-tail buffer, twice the base RTT at 1 BDP). Each loss carries its own window, and the next
//! loss within the previous loss's window belongs to the same event; the distance between two events
//! runs from the last loss of the first to the first loss of the second. SIAD aims at one event
//! every Num_RTT RTTs (Table 4.1).

use serde::Serialize;

use super::Nanos;

/// Mean and sample standard deviation (n − 1; 0 for a single value).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct MeanStd {
    pub mean: f64,
    pub std: f64,
}

impl MeanStd {
    /// Of `values`; None when empty.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Self> {
        let mut w = Welford::default();
        values.into_iter().for_each(|x| w.add(x));
        w.get()
    }
}

/// Running mean and variance (Welford), so long runs need no sample buffer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Welford {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Welford {
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    pub fn get(&self) -> Option<MeanStd> {
        let std = if self.n > 1 { (self.m2 / (self.n - 1) as f64).sqrt() } else { 0.0 };
        (self.n > 0).then_some(MeanStd { mean: self.mean, std })
    }
}

/// Events that start at or after `from`, and the distances (s) to each of them from the event
/// before (which may have started earlier).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossEvents {
    pub events: u64,
    /// None without any distance (fewer than two events in all).
    pub distance_s: Option<MeanStd>,
}

/// Group `losses` — (time, grouping window), times non-decreasing — into events: a loss more
/// than the previous loss's window after it starts a new event.
pub fn loss_events(losses: impl IntoIterator<Item = (Nanos, Nanos)>, from: Nanos) -> LossEvents {
    let mut g = LossGrouper::default();
    losses.into_iter().for_each(|(t, window)| g.add(t, window, from));
    g.events()
}

/// [`loss_events`] one loss at a time, so a run keeps no log of its losses.
#[derive(Clone, Copy, Debug, Default)]
pub struct LossGrouper {
    /// The previous loss: its time and its grouping window.
    last: Option<(Nanos, Nanos)>,
    events: u64,
    distances: Welford,
}

impl LossGrouper {
    /// A loss at `t` (never before the previous one) holding its event open for `window`;
    /// events count from `from`. Losses at the same instant hold it open for the widest window
    /// among them, whatever order they come in.
    pub fn add(&mut self, t: Nanos, window: Nanos, from: Nanos) {
        let new_event = self.last.is_none_or(|(l, gap)| t - l > gap);
        if new_event && t >= from {
            self.events += 1;
            if let Some((l, _)) = self.last {
                self.distances.add((t - l) as f64 / 1e9);
            }
        }
        let window = match self.last {
            Some((l, gap)) if l == t => window.max(gap),
            _ => window,
        };
        self.last = Some((t, window));
    }

    pub fn events(&self) -> LossEvents {
        LossEvents { events: self.events, distance_s: self.distances.get() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    /// Losses at `times`, each with the same window `gap`.
    fn at(times: impl IntoIterator<Item = Nanos>, gap: Nanos) -> Vec<(Nanos, Nanos)> {
        times.into_iter().map(|t| (t, gap)).collect()
    }

    #[test]
    fn losses_within_the_gap_are_one_event() {
        // Events {1.00, 1.05, 1.10} s, {3.0} s, {5.5, 5.6} s with a 200 ms gap: distances
        // 3.0 − 1.1 = 1.9 s and 5.5 − 3.0 = 2.5 s.
        let t = [1000, 1050, 1100, 3000, 5500, 5600].map(|ms| ms * MS);
        let e = loss_events(at(t, 200 * MS), 0);
        assert_eq!(e.events, 3);
        let d = e.distance_s.unwrap();
        assert!((d.mean - 2.2).abs() < 1e-9, "{d:?}");
        assert!((d.std - (0.18f64).sqrt()).abs() < 1e-9, "sample std of 1.9 and 2.5: {d:?}");
    }

    #[test]
    fn a_chain_of_close_losses_stays_one_event() {
        // Each loss 150 ms after the last: one event over 1.5 s though it spans more than 2 RTT.
        let t: Vec<Nanos> = (0..10).map(|k| k * 150 * MS).collect();
        assert_eq!(loss_events(at(t, 200 * MS), 0), LossEvents { events: 1, distance_s: None });
    }

    #[test]
    fn events_before_the_window_only_anchor_the_first_distance() {
        let t = [1000, 4000, 6000].map(|ms| ms * MS);
        let e = loss_events(at(t, 200 * MS), 2000 * MS);
        assert_eq!(e.events, 2);
        let d = e.distance_s.unwrap();
        assert!((d.mean - 2.5).abs() < 1e-9 && (d.std - (0.5f64).sqrt()).abs() < 1e-9, "{d:?}");
        // A loss continuing an event that began before the window starts no event.
        assert_eq!(loss_events(at([1900 * MS, 2050 * MS], 200 * MS), 2000 * MS).events, 0);
        assert_eq!(loss_events([], 0), LossEvents::default());
    }

    #[test]
    fn each_loss_groups_within_its_own_window() {
        // Base RTT 100 ms: a loss at a full 1-BDP buffer (100 ms queueing) holds the event open
        // for 2 × 200 ms; one at an empty queue for 2 × 100 ms. 1.0 → 1.3 s is one event (window
        // 400 ms), 1.3 → 1.55 s a new one (the loss at 1.3 s met no queue: window 200 ms).
        let losses = [(1000 * MS, 400 * MS), (1300 * MS, 200 * MS), (1550 * MS, 400 * MS)];
        let e = loss_events(losses, 0);
        assert_eq!(e.events, 2);
        assert!((e.distance_s.unwrap().mean - 0.25).abs() < 1e-9);
    }

    /// Two losses at 1.0 s with windows 100 and 400 ms, in either order, hold the event open
    /// until 1.4 s: a loss at 1.3 s continues it.
    #[test]
    fn simultaneous_losses_keep_the_widest_window() {
        for order in [[100, 400], [400, 100]] {
            let mut losses: Vec<(Nanos, Nanos)> = order.iter().map(|&w| (1000 * MS, w * MS)).collect();
            losses.push((1300 * MS, 100 * MS));
            assert_eq!(loss_events(losses, 0).events, 1, "{order:?}");
        }
    }
}
