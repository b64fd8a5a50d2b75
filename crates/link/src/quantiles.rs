//! Streaming percentiles: memory that depends on the range of the values, never on how many there
//! are, so a run's summary costs the same for 60 s as for an hour.
//!
//! Values are recorded in an HDR histogram with three significant digits (`hdrhistogram`): every
//! value below 2,048 has a bucket of its own, and above that a bucket spans at most 1/1,024 of
//! its lower edge. A percentile is the nearest-rank one (the ⌈q·n⌉-th smallest value, as
//! `ccbench_sim::metrics::percentiles` computes from exact samples), reported as the middle of its bucket
//! clamped to the least and largest value seen. **Error bound**: within
//! [`RELATIVE_ERROR`] (0.049 %) of the exact nearest-rank value, exact for values below 2,048
//! (2.048 µs for times in nanoseconds, 2,048 packets for backlogs). The mean is exact.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Mean and nearest-rank percentiles of a set of values.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Percentiles {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

/// Significant decimal digits the histogram keeps.
const SIGNIFICANT_DIGITS: u8 = 3;

/// Largest relative distance between a reported percentile and the exact nearest-rank value:
/// half of a bucket's width (1/1,024 of its lower edge).
pub const RELATIVE_ERROR: f64 = 1.0 / 2048.0;

/// Mean and nearest-rank percentiles of a stream of non-negative integers.
#[derive(Clone, Debug, Default)]
pub struct Quantiles {
    /// Allocated at the first value, so a flow or link that records none costs nothing.
    hist: Option<Histogram<u64>>,
    sum: u128,
    /// The exact least and largest values (the histogram's are its buckets' edges).
    min: u64,
    max: u64,
}

impl Quantiles {
    pub fn record(&mut self, value: u64) {
        let hist = self.hist.get_or_insert_with(|| {
            Histogram::new(SIGNIFICANT_DIGITS).expect("three significant digits is a valid precision")
        });
        // The histogram grows to hold values up to 2^62 (146 years in nanoseconds); only a
        // value beyond that is clamped.
        if hist.record(value).is_err() {
            hist.saturating_record(value);
        }
        self.sum += value as u128;
        let first = hist.len() == 1;
        self.min = if first { value } else { self.min.min(value) };
        self.max = self.max.max(value);
    }

    /// Mean, p50, p90 and p99, each multiplied by `unit` (1e-6 turns nanoseconds into
    /// milliseconds); None before the first value.
    pub fn percentiles(&self, unit: f64) -> Option<Percentiles> {
        let h = self.hist.as_ref().filter(|h| !h.is_empty())?;
        let at = |q: f64| h.median_equivalent(h.value_at_quantile(q)).clamp(self.min, self.max) as f64 * unit;
        Some(Percentiles {
            mean: self.sum as f64 / h.len() as f64 * unit,
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, unit};

    /// Exact nearest-rank percentiles, to compare with.
    fn exact(values: &mut [f64]) -> Percentiles {
        values.sort_unstable_by(f64::total_cmp);
        let n = values.len();
        let rank = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Percentiles {
            mean: values.iter().sum::<f64>() / n as f64,
            p50: rank(0.5),
            p90: rank(0.9),
            p99: rank(0.99),
        }
    }

    /// Against the exact nearest-rank percentiles of the same values, over values that span
    /// six decades (a queue from empty to seconds) and a narrow band.
    #[test]
    fn percentiles_lie_within_the_stated_bound_of_the_exact_ones() {
        let mut rng = stream(3, "quantiles-test", 0);
        for spread in [1e3, 1e9] {
            let mut q = Quantiles::default();
            let mut samples = Vec::new();
            for _ in 0..100_000 {
                let v = (unit(&mut rng).powi(3) * spread) as u64 + 50_000;
                q.record(v);
                samples.push(v as f64);
            }
            let got = q.percentiles(1.0).unwrap();
            let want = exact(&mut samples);
            for (g, w) in [(got.p50, want.p50), (got.p90, want.p90), (got.p99, want.p99)] {
                assert!((g - w).abs() <= w * RELATIVE_ERROR, "spread {spread}: {g} against exact {w}");
            }
            assert!((got.mean - want.mean).abs() <= want.mean * 1e-12, "the mean is exact");
        }
    }

    #[test]
    fn small_values_are_exact_and_empty_has_none() {
        let mut q = Quantiles::default();
        assert!(q.percentiles(1.0).is_none());
        (1..=100).for_each(|v| q.record(v));
        let p = q.percentiles(1.0).unwrap();
        assert_eq!((p.p50, p.p90, p.p99, p.mean), (50.0, 90.0, 99.0, 50.5));
    }

    /// A single value far above the exact range comes back as itself (clamped to min and max).
    #[test]
    fn one_value_is_itself() {
        let mut q = Quantiles::default();
        q.record(123_456_789);
        let p = q.percentiles(1e-6).unwrap();
        assert_eq!((p.p50, p.p99), (123.456789, 123.456789));
    }
}
