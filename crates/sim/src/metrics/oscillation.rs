//! Oscillation size (SIAD thesis §4.1.2, Fig. 4.23b): the cwnd trace's local maxima and minima;
//! every decrease (a maximum down to the next minimum) and increase (a minimum up to the next
//! maximum) is one swing. A turn counts only once cwnd has moved more than `hysteresis` away
//! from the extreme, so PRR's segment-by-segment steps inside one reduction make no swings.

use super::loss_events::{MeanStd, Welford};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Unknown,
    Up,
    Down,
}

/// Follows one flow's cwnd, sample by sample (every ACK).
#[derive(Clone, Debug)]
pub struct Swings {
    hysteresis: u64,
    direction: Direction,
    /// The running extreme in the current direction (the lowest and highest so far while
    /// the direction is unknown).
    low: u64,
    high: u64,
    /// The last confirmed extreme.
    last: Option<u64>,
    sizes: Welford,
}

impl Swings {
    pub fn new(hysteresis: u64, cwnd: u64) -> Self {
        Swings {
            hysteresis,
            direction: Direction::Unknown,
            low: cwnd,
            high: cwnd,
            last: None,
            sizes: Welford::default(),
        }
    }

    pub fn observe(&mut self, cwnd: u64) {
        match self.direction {
            Direction::Unknown => {
                if cwnd > self.low + self.hysteresis {
                    self.direction = Direction::Up;
                    self.high = cwnd;
                } else if cwnd + self.hysteresis < self.high {
                    self.direction = Direction::Down;
                    self.low = cwnd;
                } else {
                    self.low = self.low.min(cwnd);
                    self.high = self.high.max(cwnd);
                }
            }
            Direction::Up if cwnd >= self.high => self.high = cwnd,
            Direction::Up if self.high - cwnd > self.hysteresis => {
                self.turn(self.high);
                self.direction = Direction::Down;
                self.low = cwnd;
            }
            Direction::Down if cwnd <= self.low => self.low = cwnd,
            Direction::Down if cwnd - self.low > self.hysteresis => {
                self.turn(self.low);
                self.direction = Direction::Up;
                self.high = cwnd;
            }
            Direction::Up | Direction::Down => {}
        }
    }

    fn turn(&mut self, extreme: u64) {
        if let Some(last) = self.last {
            self.sizes.add(last.abs_diff(extreme) as f64);
        }
        self.last = Some(extreme);
    }

    /// Swing sizes (bytes) divided by `scale`.
    pub fn relative_to(&self, scale: f64) -> Option<MeanStd> {
        self.sizes.get().map(|m| MeanStd { mean: m.mean / scale, std: m.std / scale })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swings(trace: &[u64], hysteresis: u64) -> Option<MeanStd> {
        let mut s = Swings::new(hysteresis, trace[0]);
        trace[1..].iter().for_each(|&c| s.observe(c));
        s.relative_to(1.0)
    }

    #[test]
    fn a_sawtooth_swings_by_its_height() {
        // 10 → 20 → 10 → 20 → 10, in steps of 1: turns at 20, 10, 20 → swings 10, 10.
        let mut trace = Vec::new();
        for _ in 0..2 {
            trace.extend(10..20);
            trace.extend((11..=20).rev());
        }
        trace.push(10);
        trace.extend(11..=14);
        let m = swings(&trace, 2).unwrap();
        assert_eq!((m.mean, m.std), (10.0, 0.0));
    }

    #[test]
    fn small_wiggles_inside_the_hysteresis_make_no_turns() {
        // Up to 30 with ±1 wiggles, down to 12 with ±1 wiggles, up again.
        let trace = [10, 15, 14, 20, 19, 30, 29, 30, 25, 26, 20, 21, 12, 13, 12, 18, 25];
        let m = swings(&trace, 2).unwrap();
        assert_eq!((m.mean, m.std), (18.0, 0.0), "one swing, 30 → 12");
        assert!(swings(&[10, 11, 10, 11, 12, 11], 2).is_none(), "no extreme confirmed twice");
    }

    #[test]
    fn unequal_swings_give_mean_and_std() {
        // Turns at 40, 20, 50 → swings 20 and 30.
        let trace = [30, 40, 30, 20, 35, 50, 40];
        let m = swings(&trace, 2).unwrap();
        assert_eq!(m.mean, 25.0);
        assert!((m.std - 50f64.sqrt()).abs() < 1e-12);
    }
}
