//! Trace-driven link capacity in mahimahi's format, the one Pantheon's cellular traces use: one
//! integer millisecond timestamp per line, non-decreasing, each an opportunity to deliver one
//! MTU of [`OPPORTUNITY_BYTES`]; the trace repeats with a period of its last timestamp
//! (mahimahi `src/packet/link_queue.cc`: `use_a_delivery_opportunity` adds `schedule_.back()` to
//! the base time at each wrap-around). An opportunity's bytes serve the packets at the head of
//! the queue in order, a packet may span several opportunities, and bytes an opportunity finds
//! no packet for are lost (`LinkQueue::rationalize`).

use ccbench_aqm::Nanos;

/// Bytes one delivery opportunity carries: mahimahi's `PACKET_SIZE`, the largest TUN payload
/// it forwards (1,500 B of IP packet and the 4 B TUN header).
pub const OPPORTUNITY_BYTES: u32 = 1504;

const MS: Nanos = 1_000_000;

/// A parsed trace: opportunity times within one period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    /// Milliseconds of each opportunity within a period, non-decreasing.
    ms: Vec<u64>,
    /// The period: the last timestamp (> 0).
    period_ms: u64,
}

impl DeliveryTrace {
    /// Parse mahimahi's text format. Blank lines and lines starting with `#` are skipped (mahimahi
    /// has neither; they let a generated trace say what it is). The error names the line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let t: u64 = line
                .parse()
                .map_err(|_| format!("line {}: {line:?} is not a whole number of milliseconds", i + 1))?;
            if ms.last().is_some_and(|&last| t < last) {
                return Err(format!("line {}: {t} ms is earlier than the line before", i + 1));
            }
            ms.push(t);
        }
        let period_ms = *ms.last().ok_or("no delivery opportunities")?;
        if period_ms == 0 {
            return Err("the last timestamp (the trace's period) must be above 0 ms".into());
        }
        Ok(DeliveryTrace { ms, period_ms })
    }

    /// Opportunities per period.
    pub fn opportunities(&self) -> usize {
        self.ms.len()
    }

    pub fn period(&self) -> Nanos {
        self.period_ms * MS
    }

    /// The average capacity over a period, bits per second.
    pub fn mean_rate(&self) -> f64 {
        self.ms.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / (self.period_ms as f64 / 1e3)
    }

    /// A fingerprint of the opportunities (FNV-1a over their times): the same on every
    /// machine, so a run's cache key follows the trace's content.
    pub fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.ms.iter().flat_map(|t| t.to_le_bytes()) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    /// When opportunity `k` comes, counting from 0 over the repeated trace.
    pub fn at(&self, k: u64) -> Nanos {
        let n = self.ms.len() as u64;
        ((k / n) * self.period_ms + self.ms[(k % n) as usize]) * MS
    }

    /// The first opportunity at or after `t`.
    pub fn first_at_or_after(&self, t: Nanos) -> u64 {
        self.first_where(|at| at >= t, t)
    }

    /// How many opportunities came at or before `t`.
    pub fn count_until(&self, t: Nanos) -> u64 {
        self.first_where(|at| at > t, t)
    }

    /// The first index whose time satisfies `pred` (monotone in the index), searched within the
    /// periods around `t`.
    fn first_where(&self, pred: impl Fn(Nanos) -> bool, t: Nanos) -> u64 {
        let n = self.ms.len() as u64;
        let cycle = t / self.period();
        let (mut lo, mut hi) = (cycle.saturating_sub(1) * n, (cycle + 2) * n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.at(mid)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }
}

/// A link's use of its trace: the next unused opportunity and the bytes left in the one before.
#[derive(Clone, Debug)]
pub struct Opportunities {
    trace: std::sync::Arc<DeliveryTrace>,
    next: u64,
    left: u32,
}

impl Opportunities {
    pub fn new(trace: std::sync::Arc<DeliveryTrace>) -> Self {
        Opportunities { trace, next: 0, left: 0 }
    }

    /// The first opportunity a packet at the head at `now` can use — its index, time and bytes:
    /// what is left of the one just used if it is now, else the next one to come.
    pub fn available(&self, now: Nanos) -> (u64, Nanos, u32) {
        if self.left > 0 && self.next > 0 && self.trace.at(self.next - 1) == now {
            return (self.next - 1, now, self.left);
        }
        let k = self.next.max(self.trace.first_at_or_after(now));
        (k, self.trace.at(k), OPPORTUNITY_BYTES)
    }

    /// Send a packet of `bytes` from `now` (an opportunity's time): returns when its last byte
    /// goes, the time of the last opportunity it uses.
    pub fn send(&mut self, now: Nanos, bytes: u32) -> Nanos {
        let (k, _, avail) = self.available(now);
        let more = bytes.saturating_sub(avail).div_ceil(OPPORTUNITY_BYTES);
        let last = k + more as u64;
        self.next = last + 1;
        self.left = avail + more * OPPORTUNITY_BYTES - bytes;
        self.trace.at(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn parses_mahimahi_and_names_the_bad_line() {
        let t = DeliveryTrace::parse("# two per 10 ms\n5\n10\n").unwrap();
        assert_eq!((t.opportunities(), t.period()), (2, 10 * MS));
        // 2 × 1,504 B every 10 ms: 2.4064 Mbit/s.
        assert!((t.mean_rate() - 2_406_400.0).abs() < 1e-6);
        assert_eq!(
            DeliveryTrace::parse("1\nx\n").unwrap_err(),
            "line 2: \"x\" is not a whole number of milliseconds"
        );
        assert_eq!(
            DeliveryTrace::parse("5\n3\n").unwrap_err(),
            "line 2: 3 ms is earlier than the line before"
        );
        assert!(DeliveryTrace::parse("").is_err() && DeliveryTrace::parse("0\n0\n").is_err());
    }

    /// The trace repeats with its last timestamp as the period; a time between opportunities
    /// waits for the next, one on an opportunity takes it.
    #[test]
    fn opportunities_repeat_with_the_period() {
        let t = DeliveryTrace::parse("5\n10\n").unwrap();
        let times: Vec<Nanos> = (0..5).map(|k| t.at(k) / MS).collect();
        assert_eq!(times, [5, 10, 15, 20, 25]);
        assert_eq!(t.first_at_or_after(0), 0);
        assert_eq!(t.first_at_or_after(5 * MS), 0);
        assert_eq!(t.first_at_or_after(5 * MS + 1), 1);
        assert_eq!(t.first_at_or_after(1_000 * MS + 1), 200);
        assert_eq!((t.count_until(4 * MS), t.count_until(5 * MS), t.count_until(1_000 * MS)), (0, 1, 200));
    }

    /// mahimahi's arithmetic: 1,000 B and 400 B share one opportunity (104 B left, lost if the
    /// next packet comes later); 3,000 B takes those 104 B and two more opportunities (done at
    /// the third, 104 + 2 · 1,504 − 3,000 = 112 B left).
    #[test]
    fn packets_share_and_span_opportunities() {
        let t = Arc::new(DeliveryTrace::parse("1\n2\n3\n4\n").unwrap());
        let mut o = Opportunities::new(t);
        assert_eq!(o.send(MS, 1_000), MS);
        assert_eq!(o.available(MS), (0, MS, 504));
        assert_eq!(o.send(MS, 400), MS);
        assert_eq!(o.send(MS, 3_000), 3 * MS);
        assert_eq!(o.available(3 * MS), (2, 3 * MS, 112));
        // Later than the opportunity: its leftover is gone, the next one is whole.
        assert_eq!(o.available(3 * MS + 1), (3, 4 * MS, OPPORTUNITY_BYTES));
    }
}
