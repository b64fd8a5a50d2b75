//! Per-flow traffic keys beyond a single transfer: chunk-by-chunk transfers (`chunk_size`,
//! `persistence`, `chunk_gap`) and RTTs drawn per flow (`rtt` as a list or a distribution,
//! `rtt_jitter`). Draws come from seeded streams of their own, one per `[[flows]]` entry.

use rand_distr::{Distribution, LogNormal};
use toml::{Table, Value};

use super::config::{ChunkSize, Chunks, Nanos};
use super::fields::{fe, get_duration, get_number_in, get_size, join, shown, R};
use super::units::{self, format_duration};
use crate::rng::{self, SimRng};

pub const CHUNK_KEYS: &[&str] = &["chunk_size", "persistence", "chunk_gap", "chunk_interval"];

/// `chunk_size = "250KB"` or `{ min = "1B", max = "512KB" }`, with `persistence` (P_P) and
/// `chunk_gap` (read with the flow's other scalar keys, `flow_keys.rs`) or `chunk_interval`; the
/// others need `chunk_size`.
pub fn get_chunks(t: &Table, p: &str, persistence: f64, gap: Nanos) -> R<Option<Chunks>> {
    let size = match t.get("chunk_size") {
        None => {
            if let Some(k) = CHUNK_KEYS[1..].iter().find(|k| t.contains_key(**k)) {
                return Err(fe(join(p, k), "only used with chunk_size (chunk-by-chunk transfers)"));
            }
            return Ok(None);
        }
        Some(Value::Table(range)) => uniform_size(range, &join(p, "chunk_size"))?,
        Some(_) => ChunkSize::Fixed(get_size(t, p, "chunk_size")?.expect("present")),
    };
    if t.contains_key("size") {
        return Err(fe(join(p, "size"), "a chunked flow has no total size; it sends chunks until it stops"));
    }
    let interval = get_interval(t, p)?;
    if interval.is_some() && t.contains_key("chunk_gap") {
        return Err(fe(join(p, "chunk_interval"), "give chunk_gap or chunk_interval, not both"));
    }
    Ok(Some(Chunks { size, persistence, gap, interval }))
}

/// `chunk_interval = "2s"` or `{ min = "2s", max = "3s" }`, > 0.
fn get_interval(t: &Table, p: &str) -> R<Option<(Nanos, Nanos)>> {
    let here = join(p, "chunk_interval");
    let (min, max) = match t.get("chunk_interval") {
        None => return Ok(None),
        Some(Value::Table(range)) => {
            if let Some(k) = range.keys().find(|k| !["min", "max"].contains(&k.as_str())) {
                return Err(fe(join(&here, k), "unknown key (an interval range has min and max)"));
            }
            let need = |k: &str| {
                get_duration(range, &here, k)?.ok_or_else(|| fe(join(&here, k), "missing (e.g. \"2s\")"))
            };
            (need("min")?, need("max")?)
        }
        Some(_) => {
            let d = get_duration(t, p, "chunk_interval")?.expect("present");
            (d, d)
        }
    };
    if min == 0 {
        return Err(fe(here, "must be greater than 0s"));
    }
    if max < min {
        let (lo, hi) = (format_duration(min), format_duration(max));
        return Err(fe(join(&here, "max"), format!("must be at least min ({lo}), got {hi}")));
    }
    Ok(Some((min, max)))
}

fn uniform_size(range: &Table, p: &str) -> R<ChunkSize> {
    if let Some(k) = range.keys().find(|k| !["min", "max"].contains(&k.as_str())) {
        return Err(fe(join(p, k), "unknown key (a chunk size range has min and max)"));
    }
    let need = |k: &str| get_size(range, p, k)?.ok_or_else(|| fe(join(p, k), "missing (e.g. \"512KB\")"));
    let (min, max) = (need("min")?, need("max")?);
    if max < min {
        return Err(fe(join(p, "max"), format!("must be at least min ({min} B), got {max} B")));
    }
    Ok(ChunkSize::Uniform(min, max))
}

/// How a `[[flows]]` entry gives its flows' RTTs.
#[derive(Clone, Debug, PartialEq)]
pub enum RttSpec {
    /// One value for every flow (the plain `rtt = "50ms"`, or none).
    Same,
    /// `rtt = ["20ms", "35ms", …]`: one per flow of the entry's `count`.
    List(Vec<Nanos>),
    /// `rtt = { lognormal = "37.9ms", sigma = 0.8 }`: mean and log-space spread.
    LogNormal { mean: Nanos, sigma: f64 },
    /// `rtt = { min = "10ms", max = "60ms" }`: uniform.
    Uniform { min: Nanos, max: Nanos },
}

pub fn get_rtt_spec(t: &Table, p: &str, count: usize) -> R<RttSpec> {
    let here = join(p, "rtt");
    match t.get("rtt") {
        Some(Value::Array(items)) => {
            if items.len() != count {
                return Err(fe(here, format!("has {} values for count = {count} flows", items.len())));
            }
            let mut v = Vec::with_capacity(count);
            for (j, item) in items.iter().enumerate() {
                let Value::String(s) = item else {
                    return Err(fe(
                        format!("{here}[{j}]"),
                        format!("expected a duration like \"40ms\", got {}", shown(item)),
                    ));
                };
                v.push(units::parse_duration(s).map_err(|m| fe(format!("{here}[{j}]"), m))?);
            }
            Ok(RttSpec::List(v))
        }
        Some(Value::Table(d)) => rtt_distribution(d, &here),
        _ => Ok(RttSpec::Same),
    }
}

fn rtt_distribution(d: &Table, p: &str) -> R<RttSpec> {
    if d.contains_key("lognormal") {
        if let Some(k) = d.keys().find(|k| !["lognormal", "sigma"].contains(&k.as_str())) {
            return Err(fe(join(p, k), "unknown key (a lognormal RTT has lognormal = <mean> and sigma)"));
        }
        let mean = get_duration(d, p, "lognormal")?.expect("present");
        if mean == 0 {
            return Err(fe(join(p, "lognormal"), "the mean must be > 0"));
        }
        let sigma = get_number_in(d, p, "sigma", 0.0, 5.0)?.unwrap_or(0.8);
        return Ok(RttSpec::LogNormal { mean, sigma });
    }
    if let Some(k) = d.keys().find(|k| !["min", "max"].contains(&k.as_str())) {
        return Err(fe(
            join(p, k),
            "unknown key (expected { lognormal = \"37.9ms\", sigma = 0.8 } or { min, max })",
        ));
    }
    let need = |k: &str| get_duration(d, p, k)?.ok_or_else(|| fe(join(p, k), "missing (e.g. \"40ms\")"));
    let (min, max) = (need("min")?, need("max")?);
    if max < min {
        let (a, b) = (format_duration(min), format_duration(max));
        return Err(fe(join(p, "max"), format!("must be at least min ({a}), got {b}")));
    }
    Ok(RttSpec::Uniform { min, max })
}

/// The RTT values of one entry's flows, drawn from `seed`'s stream for entry `entry`.
pub struct RttDraws {
    spec: RttSpec,
    rng: SimRng,
    jitter: Nanos,
    jitter_rng: SimRng,
}

impl RttDraws {
    pub fn new(spec: RttSpec, jitter: Nanos, seed: u64, entry: usize) -> Self {
        let rng = rng::stream(seed, "flow-rtt", entry as u64);
        let jitter_rng = rng::stream(seed, "flow-rtt-jitter", entry as u64);
        RttDraws { spec, rng, jitter, jitter_rng }
    }

    /// Flow `k`'s drawn RTT, if the entry draws one.
    pub fn rtt(&mut self, k: usize) -> Option<Nanos> {
        match &self.spec {
            RttSpec::Same => None,
            RttSpec::List(v) => Some(v[k]),
            RttSpec::LogNormal { mean, sigma } => {
                // The log-space mean that gives the requested mean: μ = ln m − σ²/2.
                let mu = (*mean as f64).ln() - sigma * sigma / 2.0;
                let d = LogNormal::new(mu, *sigma).expect("sigma is checked");
                Some(d.sample(&mut self.rng).round() as Nanos)
            }
            RttSpec::Uniform { min, max } => {
                Some(min + (rng::unit(&mut self.rng) * (max - min) as f64) as Nanos)
            }
        }
    }

    /// Flow `k`'s constant extra round-trip delay, uniform in [0, rtt_jitter].
    pub fn jitter(&mut self) -> Nanos {
        if self.jitter == 0 {
            return 0;
        }
        (rng::unit(&mut self.jitter_rng) * self.jitter as f64) as Nanos
    }
}
