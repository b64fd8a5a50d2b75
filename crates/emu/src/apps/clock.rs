//! CLOCK_MONOTONIC in nanoseconds, and the shared time grid of one emulation run.
//!
//! `std::time::Instant` uses the same clock but hides its value; we need the raw number because
//! it is written into datagrams and compared across processes (network namespaces share the
//! host's monotonic clock, as `ip netns` creates no time namespace).

use super::args::Flags;
use super::AppError;
use std::time::Duration;

pub fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until the monotonic time `t` (returns at once if it has passed).
pub fn sleep_until(t: u64) {
    let now = now_ns();
    if t > now {
        std::thread::sleep(Duration::from_nanos(t - now));
    }
}

/// Time zero of the run (`--epoch-mono-ns`, default: now) and the bin width (`--bin`). All
/// reported times are seconds since the epoch, so the results of every program in a run, and the
/// scenario's own `start`/`stop`, share one time axis and one bin grid.
#[derive(Clone, Copy, Debug)]
pub struct Timeline {
    pub epoch: u64,
    pub bin: u64,
}

impl Timeline {
    pub fn from_flags(flags: &Flags) -> Result<Timeline, AppError> {
        let epoch = flags.u64("epoch-mono-ns")?.unwrap_or_else(now_ns);
        let bin = flags.secs("bin")?.unwrap_or(100_000_000);
        if bin < 1_000_000 {
            return Err(AppError::usage("--bin must be at least 0.001 s"));
        }
        Ok(Timeline { epoch, bin })
    }

    /// The monotonic time `offset` ns after the epoch.
    pub fn at(&self, offset: u64) -> u64 {
        self.epoch.saturating_add(offset)
    }

    /// Seconds since the epoch (negative before it).
    pub fn secs(&self, t: u64) -> f64 {
        (t as i128 - self.epoch as i128) as f64 / 1e9
    }

    /// Index of the bin holding `t` (times before the epoch fall in bin 0).
    pub fn bin_of(&self, t: u64) -> usize {
        (t.saturating_sub(self.epoch) / self.bin) as usize
    }

    /// The first bin edge strictly after `t`.
    pub fn next_edge(&self, t: u64) -> u64 {
        self.at((self.bin_of(t) as u64 + 1) * self.bin)
    }
}

/// Bytes counted per bin of a [`Timeline`].
#[derive(Default)]
pub struct Bins(pub Vec<u64>);

impl Bins {
    pub fn add(&mut self, bin: usize, bytes: u64) {
        if self.0.len() <= bin {
            self.0.resize(bin + 1, 0);
        }
        self.0[bin] += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid() {
        let t = Timeline { epoch: 1_000, bin: 100 };
        assert_eq!(t.bin_of(999), 0);
        assert_eq!(t.bin_of(1_250), 2);
        assert_eq!(t.next_edge(1_250), 1_300);
        assert_eq!(t.next_edge(1_300), 1_400);
        assert!((t.secs(500) + 5e-7).abs() < 1e-12);
        let mut b = Bins::default();
        b.add(3, 10);
        b.add(1, 5);
        assert_eq!(b.0, vec![0, 5, 0, 10]);
    }

    #[test]
    fn clock_moves_forward() {
        let a = now_ns();
        sleep_until(a + 2_000_000);
        assert!(now_ns() >= a + 2_000_000);
    }
}
