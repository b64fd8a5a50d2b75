//! Parsers for the unit-carrying strings of scenario files and algorithm parameters: durations,
//! rates, sizes and buffer sizes. Every function returns `Err(message)` with a message body such
//! as `expected a rate like "10Mbps", got "-3"`; the caller prefixes it with the file and field.
//! The one place units are read: the scenario parser and [`crate::Params::duration`] both call it.
//!
//! Numbers are plain decimals (`100`, `1.5`, `.5`); no signs, exponents, `inf` or `NaN`.
//! Whitespace between the number and the unit is allowed (`"100 ms"`).

pub type Nanos = u64;

/// A queue's buffer as a scenario gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum BufferSize {
    Packets(u64),
    Bytes(u64),
    /// Time to drain at the link rate.
    Time(Nanos),
    /// Multiples of rate × the link's reference `rtt`.
    Bdp(f64),
}

const DURATION_HINT: &str = "expected a duration like \"100ms\"";
const RATE_HINT: &str = "expected a rate like \"10Mbps\"";
const SIZE_HINT: &str = "expected a size like \"1500B\", \"64KB\" or \"1MB\"";
const BUFFER_HINT: &str = "expected a buffer size like \"50p\", \"64KB\", \"30ms\" or \"0.5bdp\"";

/// An exact non-negative decimal: `mant / 10^frac`.
#[derive(Clone, Copy, Debug)]
struct Decimal {
    mant: u128,
    frac: u32,
}

impl Decimal {
    /// `self × scale`, rounded half-up to an integer, with the remainder flag (true if inexact).
    fn times(self, scale: u128) -> Option<(u128, bool)> {
        let num = self.mant.checked_mul(scale)?;
        let den = 10u128.checked_pow(self.frac)?;
        let q = num / den;
        let r = num % den;
        let rounded = if r * 2 >= den { q + 1 } else { q };
        Some((rounded, r != 0))
    }

    fn is_zero(self) -> bool {
        self.mant == 0
    }

    fn to_f64(self) -> f64 {
        self.mant as f64 / 10f64.powi(self.frac as i32)
    }
}

/// Split `"  -1.5 ms "` into (negative, number, unit). None if there is no well-formed number.
fn split(s: &str) -> Option<(bool, Decimal, &str)> {
    let t = s.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let end = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
    let (num, unit) = body.split_at(end);
    let dots = num.matches('.').count();
    let digits = num.len() - dots;
    if digits == 0 || dots > 1 || digits > 30 {
        return None;
    }
    let frac = match num.find('.') {
        Some(p) => (num.len() - p - 1) as u32,
        None => 0,
    };
    let mant: u128 = num.chars().filter(|c| *c != '.').collect::<String>().parse().ok()?;
    Some((neg, Decimal { mant, frac }, unit.trim_start()))
}

fn duration_scale(unit: &str) -> Option<u128> {
    Some(match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// A duration in nanoseconds: `"100s"`, `"100ms"`, `"1.5s"`, `"20us"`, `"250ns"`, `"2min"`, `"1h"`.
/// A unit is required; the only exception is a bare `"0"`. Fractions of a nanosecond round to
/// the nearest nanosecond.
pub fn parse_duration(s: &str) -> Result<Nanos, String> {
    let bad = || format!("{DURATION_HINT}, got \"{s}\"");
    if s.trim() == "0" {
        return Ok(0);
    }
    let (neg, d, unit) = split(s).ok_or_else(bad)?;
    let scale = duration_scale(unit).ok_or_else(bad)?;
    if neg && !d.is_zero() {
        return Err(format!("a duration must not be negative, got \"{s}\""));
    }
    let (ns, _) = d.times(scale).ok_or_else(|| format!("duration too large, got \"{s}\""))?;
    u64::try_from(ns).map_err(|_| format!("duration too large, got \"{s}\""))
}

/// A duration that may be negative (`"-5s"`, a clock behind another), in nanoseconds.
pub fn parse_signed_duration(s: &str) -> Result<i64, String> {
    let (negative, magnitude) = match s.trim().strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let ns =
        parse_duration(magnitude).map_err(|_| format!("{DURATION_HINT} (may be negative), got \"{s}\""))?;
    let ns = i64::try_from(ns).map_err(|_| format!("duration too large, got \"{s}\""))?;
    Ok(if negative { -ns } else { ns })
}

/// A rate in bits per second: `"100bps"`, `"500kbps"`, `"10Mbps"`, `"1.5Mbps"`, `"1Gbps"`,
/// `"1Tbps"` (decimal SI: k = 1e3, M = 1e6, G = 1e9, T = 1e12). Must be finite and > 0.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let bad = || format!("{RATE_HINT}, got \"{s}\"");
    let (neg, d, unit) = split(s).ok_or_else(bad)?;
    let scale = match unit {
        "bps" => 1.0,
        "kbps" | "Kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        _ => return Err(bad()),
    };
    let v = d.to_f64() * scale;
    if neg || d.is_zero() || v <= 0.0 {
        return Err(format!("a rate must be > 0, got \"{s}\""));
    }
    if !v.is_finite() {
        return Err(format!("rate too large, got \"{s}\""));
    }
    Ok(v)
}

fn size_scale(unit: &str) -> Option<u128> {
    Some(match unit {
        "B" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    })
}

/// A size in bytes: `"1500B"`, `"262KB"`, `"1.5MB"`, `"64KiB"` (KB = 1000 bytes, KiB = 1024;
/// likewise MB/MiB, GB/GiB, TB/TiB). Must be a whole number of bytes and > 0.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || format!("{SIZE_HINT}, got \"{s}\"");
    let (neg, d, unit) = split(s).ok_or_else(bad)?;
    let scale = size_scale(unit).ok_or_else(bad)?;
    if neg || d.is_zero() {
        return Err(format!("a size must be > 0, got \"{s}\""));
    }
    let (bytes, inexact) = d.times(scale).ok_or_else(|| format!("size too large, got \"{s}\""))?;
    if inexact {
        return Err(format!("a size must be a whole number of bytes, got \"{s}\""));
    }
    u64::try_from(bytes).map_err(|_| format!("size too large, got \"{s}\""))
}

/// Like [`parse_size`] but also accepts `"inf"` (→ `None`, unlimited).
pub fn parse_size_or_inf(s: &str) -> Result<Option<u64>, String> {
    if s.trim() == "inf" {
        return Ok(None);
    }
    parse_size(s).map(Some).map_err(|e| {
        if e.starts_with(SIZE_HINT) {
            format!("expected a size like \"1MB\" or \"inf\", got \"{s}\"")
        } else {
            e
        }
    })
}

/// A bottleneck buffer: `"50p"` (packets; also `pkt`, `pkts`, `packets`), `"64KB"` (bytes, any
/// size unit), `"30ms"` (time to drain at the link rate, any duration unit) or `"0.5bdp"`
/// (multiples of rate × bottleneck RTT). Must be > 0.
pub fn parse_buffer(s: &str) -> Result<BufferSize, String> {
    let bad = || format!("{BUFFER_HINT}, got \"{s}\"");
    let (neg, d, unit) = split(s).ok_or_else(bad)?;
    let positive = || {
        if neg || d.is_zero() {
            Err(format!("a buffer size must be > 0, got \"{s}\""))
        } else {
            Ok(())
        }
    };
    match unit {
        "bdp" | "BDP" => {
            positive()?;
            Ok(BufferSize::Bdp(d.to_f64()))
        }
        "p" | "pkt" | "pkts" | "packets" => {
            positive()?;
            match d.times(1) {
                Some((n, false)) => u64::try_from(n)
                    .map(BufferSize::Packets)
                    .map_err(|_| format!("buffer too large, got \"{s}\"")),
                _ => Err(format!("a buffer in packets must be a whole number, got \"{s}\"")),
            }
        }
        u if duration_scale(u).is_some() => {
            positive()?;
            parse_duration(s).map(BufferSize::Time)
        }
        u if size_scale(u).is_some() => {
            positive()?;
            parse_size(s).map(BufferSize::Bytes)
        }
        _ => Err(bad()),
    }
}

/// Render nanoseconds compactly for messages and docs: `100ms`, `1.5s`, `250ns`.
pub fn format_duration(ns: Nanos) -> String {
    const UNITS: [(u64, &str); 4] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns")];
    if ns == 0 {
        return "0s".into();
    }
    for (scale, unit) in UNITS {
        if ns >= scale {
            if ns.is_multiple_of(scale) {
                return format!("{}{unit}", ns / scale);
            }
            let whole = ns / scale;
            let width = scale.ilog10() as usize;
            let frac = format!("{:0>width$}", ns % scale, width = width);
            return format!("{whole}.{}{unit}", frac.trim_end_matches('0'));
        }
    }
    unreachable!()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_durations() {
        assert_eq!(parse_signed_duration("-5s"), Ok(-5_000_000_000));
        assert_eq!(parse_signed_duration("2.5ms"), Ok(2_500_000));
        assert_eq!(parse_signed_duration(" -0 "), Ok(0));
        let e = parse_signed_duration("--1s").unwrap_err();
        assert_eq!(e, "expected a duration like \"100ms\" (may be negative), got \"--1s\"");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("100s"), Ok(100_000_000_000));
        assert_eq!(parse_duration("100ms"), Ok(100_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("20us"), Ok(20_000));
        assert_eq!(parse_duration("20µs"), Ok(20_000));
        assert_eq!(parse_duration("250ns"), Ok(250));
        assert_eq!(parse_duration("2min"), Ok(120_000_000_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_duration("0.1s"), Ok(100_000_000));
        assert_eq!(parse_duration(" 30 ms "), Ok(30_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(parse_duration("0s"), Ok(0));
        assert_eq!(parse_duration(".5ms"), Ok(500_000));
        assert_eq!(parse_duration("1.0000000004ns"), Ok(1));
        assert_eq!(parse_duration("0.5ns"), Ok(1)); // rounds half up
    }

    #[test]
    fn duration_errors() {
        assert_eq!(parse_duration("5").unwrap_err(), "expected a duration like \"100ms\", got \"5\"");
        assert_eq!(parse_duration("-5s").unwrap_err(), "a duration must not be negative, got \"-5s\"");
        for bad in ["", "s", "ms5", "5 parsecs", "1.2.3s", "NaNs", "nan", "infs", "1e3s", "+5s", "5S", "--5s"]
        {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_duration("99999999999999999999999h").unwrap_err().contains("too large"));
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10Mbps"), Ok(10e6));
        assert_eq!(parse_rate("1Gbps"), Ok(1e9));
        assert_eq!(parse_rate("500kbps"), Ok(500e3));
        assert_eq!(parse_rate("500Kbps"), Ok(500e3));
        assert_eq!(parse_rate("1.5Mbps"), Ok(1.5e6));
        assert_eq!(parse_rate("100bps"), Ok(100.0));
        assert_eq!(parse_rate("2Tbps"), Ok(2e12));
    }

    #[test]
    fn rate_errors() {
        assert_eq!(parse_rate("-3").unwrap_err(), "expected a rate like \"10Mbps\", got \"-3\"");
        assert_eq!(parse_rate("0Mbps").unwrap_err(), "a rate must be > 0, got \"0Mbps\"");
        assert_eq!(parse_rate("-3Mbps").unwrap_err(), "a rate must be > 0, got \"-3Mbps\"");
        for bad in ["", "10", "10MB", "10mbps", "NaNMbps", "infMbps", "Mbps", "10 Mb/s", "1e6bps"] {
            assert!(parse_rate(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("262KB"), Ok(262_000));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert_eq!(parse_size("1.5MB"), Ok(1_500_000));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("64kB"), Ok(64_000));
        assert_eq!(parse_size_or_inf("inf"), Ok(None));
        assert_eq!(parse_size_or_inf("1MB"), Ok(Some(1_000_000)));
    }

    #[test]
    fn size_errors() {
        assert_eq!(
            parse_size("1500").unwrap_err(),
            "expected a size like \"1500B\", \"64KB\" or \"1MB\", got \"1500\""
        );
        assert_eq!(parse_size("0B").unwrap_err(), "a size must be > 0, got \"0B\"");
        assert_eq!(parse_size("-1KB").unwrap_err(), "a size must be > 0, got \"-1KB\"");
        assert!(parse_size("1.5B").unwrap_err().contains("whole number"));
        assert!(parse_size("inf").is_err());
        assert!(parse_size_or_inf("lots").unwrap_err().contains("\"inf\""));
        for bad in ["", "MB", "1Mb", "1 megabyte", "NaNB"] {
            assert!(parse_size(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn buffers() {
        assert_eq!(parse_buffer("50p"), Ok(BufferSize::Packets(50)));
        assert_eq!(parse_buffer("50pkts"), Ok(BufferSize::Packets(50)));
        assert_eq!(parse_buffer("64KB"), Ok(BufferSize::Bytes(64_000)));
        assert_eq!(parse_buffer("64KiB"), Ok(BufferSize::Bytes(65_536)));
        assert_eq!(parse_buffer("30ms"), Ok(BufferSize::Time(30_000_000)));
        assert_eq!(parse_buffer("0.5bdp"), Ok(BufferSize::Bdp(0.5)));
        assert_eq!(parse_buffer("1bdp"), Ok(BufferSize::Bdp(1.0)));
        assert_eq!(parse_buffer("2BDP"), Ok(BufferSize::Bdp(2.0)));
    }

    #[test]
    fn buffer_errors() {
        assert!(parse_buffer("50").unwrap_err().starts_with("expected a buffer size like"));
        assert!(parse_buffer("0p").unwrap_err().contains("> 0"));
        assert!(parse_buffer("0bdp").unwrap_err().contains("> 0"));
        assert!(parse_buffer("-1bdp").unwrap_err().contains("> 0"));
        assert!(parse_buffer("0ms").unwrap_err().contains("> 0"));
        assert!(parse_buffer("1.5p").unwrap_err().contains("whole number"));
        for bad in ["", "bdp", "10Mbps", "lots", "nanbdp"] {
            assert!(parse_buffer(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(100_000_000), "100ms");
        assert_eq!(format_duration(1_500_000_000), "1.5s");
        assert_eq!(format_duration(250), "250ns");
        assert_eq!(format_duration(20_000), "20us");
        assert_eq!(format_duration(1_000_001), "1.000001ms");
    }
}
