//! A cellular-like packet-delivery trace, generated from a seed, for examples and tests that
//! need a varying link without shipping someone else's measurements. Not a measured trace: the
//! capacity's logarithm wanders as an Ornstein–Uhlenbeck process (correlation time
//! [`CORRELATION_S`], spread [`LOG_SPREAD`]), and the link drops out now and then (outages of
//! [`OUTAGE_MEAN_S`] on average, [`OUTAGES_PER_S`] per second) — the two traits of the Pantheon
//! and mahimahi cellular traces that a congestion controller meets: rate swings within seconds
//! and delivery gaps. Opportunities within a step come as a Poisson process at the step's rate.

use std::fmt::Write;

use crate::delivery_trace::OPPORTUNITY_BYTES;
use crate::rng::{stream, unit, SimRng};

/// How long the capacity stays correlated (seconds).
pub const CORRELATION_S: f64 = 2.0;
/// Standard deviation of the capacity's natural logarithm (0.6: a factor of 1.8 either way).
pub const LOG_SPREAD: f64 = 0.6;
/// Mean length of an outage (seconds) and how many start per second of link time.
pub const OUTAGE_MEAN_S: f64 = 0.2;
pub const OUTAGES_PER_S: f64 = 1.0 / 15.0;
/// The capacity process moves in steps of this length (seconds).
const STEP_S: f64 = 0.01;

/// A trace of `duration_s` seconds whose capacity averages about `mean_bps`, in mahimahi's text
/// format with a header of `#` lines saying how it was made. The same arguments give the same
/// text on every machine.
pub fn cellular(mean_bps: f64, duration_s: f64, seed: u64) -> String {
    let mut rng = stream(seed, "synthetic-trace", 0);
    // E[e^X] = e^(μ + σ²/2): centre the log so the capacity's mean is `mean_bps`.
    let mu = mean_bps.ln() - LOG_SPREAD * LOG_SPREAD / 2.0;
    let keep = (-STEP_S / CORRELATION_S).exp();
    let kick = LOG_SPREAD * (1.0 - keep * keep).sqrt();
    let mut x = mu + LOG_SPREAD * normal(&mut rng);
    let mut out_until = 0.0;
    let mut text = format!(
        "# ccbench synthetic cellular trace (crates/link/src/synthetic_trace.rs): mahimahi format, one \
         {OPPORTUNITY_BYTES} B delivery opportunity per line (ms)\n# mean {:.3} Mbit/s, {duration_s} s, seed {seed}\n",
        mean_bps / 1e6
    );
    let mut t = 0.0;
    let mut last_ms = 0;
    while t < duration_s {
        x = mu + keep * (x - mu) + kick * normal(&mut rng);
        if t >= out_until && unit(&mut rng) < OUTAGES_PER_S * STEP_S {
            out_until = t - OUTAGE_MEAN_S * (1.0 - unit(&mut rng)).ln();
        }
        let per_s = if t < out_until { 0.0 } else { x.exp() / (OPPORTUNITY_BYTES as f64 * 8.0) };
        let mut at = t + exponential(&mut rng, per_s);
        while at < t + STEP_S && at < duration_s {
            last_ms = ((at * 1e3) as u64).max(last_ms);
            let _ = writeln!(text, "{last_ms}");
            at += exponential(&mut rng, per_s);
        }
        t += STEP_S;
    }
    // The period is the last timestamp: end on the trace's length so it repeats in step.
    let _ = writeln!(text, "{}", ((duration_s * 1e3) as u64).max(last_ms).max(1));
    text
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut SimRng) -> f64 {
    let (u, v) = (1.0 - unit(rng), unit(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// An exponential gap at `rate` per second; infinite at rate 0.
fn exponential(rng: &mut SimRng, rate: f64) -> f64 {
    if rate <= 0.0 {
        return f64::INFINITY;
    }
    -(1.0 - unit(rng)).ln() / rate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DeliveryTrace;

    /// The trace parses, lasts what was asked, averages near the mean over a long stretch, and
    /// varies: some seconds carry under half the mean, some over one and a half times it.
    #[test]
    fn a_cellular_trace_has_the_asked_mean_and_varies() {
        let text = cellular(12e6, 300.0, 1);
        assert_eq!(text, cellular(12e6, 300.0, 1), "deterministic");
        let trace = DeliveryTrace::parse(&text).unwrap();
        assert_eq!(trace.period(), 300_000_000_000);
        let mean = trace.mean_rate();
        assert!((mean / 12e6 - 1.0).abs() < 0.15, "mean {mean}");
        let before = |s: u64| if s == 0 { 0 } else { trace.count_until(s * 1_000_000_000 - 1) };
        let per_second: Vec<u64> = (0..300).map(|s| before(s + 1) - before(s)).collect();
        let opportunities_at_mean = 12e6 / (OPPORTUNITY_BYTES as f64 * 8.0);
        assert!(per_second.iter().any(|&n| (n as f64) < 0.5 * opportunities_at_mean));
        assert!(per_second.iter().any(|&n| (n as f64) > 1.5 * opportunities_at_mean));
        assert_ne!(text, cellular(12e6, 300.0, 2), "the seed matters");
    }
}
