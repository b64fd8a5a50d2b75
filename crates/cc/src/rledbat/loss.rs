//! Loss as a pure receiver sees it (rLEDBAT paper §3.2, L164; notes `algorithms.md` §8.4).
//!
//! With timestamps: `S1` is the end of the highest byte received so far (holes allowed) and
//! `TS1` the TSval of the segment that carried it. A segment starting below `S1` (`S2 < S1`)
//! and stamped later (`TS2 > TS1`) was generated after data above it had been sent, so it is
//! a retransmission. A reordered original carries `TS2 ≤ TS1` and is not counted.
//!
//! Without timestamps the rule cannot be evaluated; the detector then reports a new hole
//! (data arriving above `S1` with a gap below it), which is where a sender's duplicate ACKs
//! start, about one RTT before the retransmission would arrive (notes §8.4 "Option"). A
//! reordering also opens a hole, so the fallback errs towards yielding.

use super::rtt::ts_after;

#[derive(Clone, Debug, Default)]
pub struct LossDetector {
    /// `S1`: one past the highest byte received; 0 before any data.
    highest_end: u64,
    /// `TS1`: TSval of the segment that carried `S1`.
    highest_tsval: Option<u32>,
}

impl LossDetector {
    /// `S1`: one past the highest byte received so far.
    pub fn highest_end(&self) -> u64 {
        self.highest_end
    }

    /// One arriving data segment `[seq, seq + len)` with its TSval; true when it signals a
    /// loss. Zero-length segments (pure ACKs, window probes) are ignored.
    pub fn on_segment(&mut self, seq: u64, len: u32, tsval: Option<u32>) -> bool {
        if len == 0 {
            return false;
        }
        let end = seq + len as u64;
        let signal = match (tsval, self.highest_tsval) {
            (Some(ts2), Some(ts1)) => seq < self.highest_end && ts_after(ts2, ts1),
            (None, _) => self.highest_end > 0 && seq > self.highest_end,
            (Some(_), None) => false,
        };
        if end > self.highest_end {
            self.highest_end = end;
            self.highest_tsval = tsval;
        }
        signal
    }
}
