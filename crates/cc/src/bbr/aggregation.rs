//! BBR's ACK-aggregation allowance (`extra_acked`), shared by BBRv1 and BBRv2.
//!
//! Source: Linux `net/ipv4/tcp_bbr.c`, functions `bbr_update_ack_aggregation`,
//! `bbr_extra_acked` and `bbr_ack_aggregation_cwnd` (commit 78dc70ebaa38, "tcp_bbr: adapt cwnd
//! based on ack aggregation estimation", first released in Linux 5.1); the same functions in
//! `google/bbr` v2alpha `net/ipv4/tcp_bbr2.c`, with module parameters of their own. Read, not
//! copied; the rules below are restated from that code.
//!
//! * An *aggregation epoch* starts at some ACK. Over the epoch the bandwidth estimate expects
//!   `bw · (now − epoch start)` to be delivered (Linux rounds the time down to microseconds and
//!   the amount down to whole packets). What the ACKs deliver beyond that is `extra_acked`.
//! * The epoch restarts (at this ACK, expecting 0) when what it delivered so far is no more
//!   than expected (the ACKs are not ahead of the estimate), or when it would reach 2²⁰ packets
//!   (`bbr_ack_epoch_acked_reset_thresh`), and on a restart after idle (`bbr_cwnd_event`).
//! * `extra_acked` is capped by the cwnd at the time of the ACK and enters a windowed maximum
//!   of two slots: every `window` round trips (`bbr_extra_acked_win_rtts` = 5) the older slot is
//!   cleared and becomes the current one, so the maximum covers the last 5 to 10 rounds.
//! * The allowance added to the cwnd target before the quantization budget is
//!   `min(gain · max(slots), bw · 100 ms)` in whole packets (`bbr_extra_acked_gain` = 1,
//!   `bbr_extra_acked_max_us` = 100 ms); v1 adds it only once the pipe was full.
//!
//! Windows here are in bytes (Linux counts packets); the expected amount and the caps are
//! rounded down to whole segments as Linux's packet counts are. Linux keeps the slots in 16 bits
//! (at most 65 535 packets); no such limit is modelled.

use crate::Nanos;

/// `bbr_extra_acked_win_rtts`: round trips per slot of the windowed maximum.
pub const EXTRA_ACKED_WIN_RTTS: u64 = 5;
/// `bbr_extra_acked_max_us`: the allowance never exceeds this much data at the estimated rate.
pub const EXTRA_ACKED_MAX: Nanos = 100_000_000;
/// Largest round count the 5-bit `extra_acked_win_rtts` field holds.
pub const MAX_WIN_RTTS: u64 = 31;
/// `bbr_ack_epoch_acked_reset_thresh`: an epoch that would deliver this many packets restarts.
pub const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;

/// Whole segments of `bw` (bytes per second) over `duration`, after Linux's rounding of the
/// duration down to microseconds.
fn segments_at(bw: f64, duration: Nanos, mss: u64) -> u64 {
    let us = (duration / 1_000) as f64;
    (bw * us / 1e6 / mss.max(1) as f64).floor() as u64
}

/// The aggregation estimator (Linux `ack_epoch_mstamp`, `ack_epoch_acked`, `extra_acked[2]`,
/// `extra_acked_win_rtts`, `extra_acked_win_idx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckAggregation {
    epoch_start: Nanos,
    /// Bytes delivered in the epoch so far.
    epoch_acked: u64,
    /// The two slots of the windowed maximum, in bytes.
    extra_acked: [u64; 2],
    /// Rounds since the current slot was opened.
    win_rounds: u64,
    win_idx: usize,
}

impl AckAggregation {
    /// `bbr_init`: the first epoch starts at connection start, both slots empty.
    pub fn new(now: Nanos) -> Self {
        Self { epoch_start: now, ..Self::default() }
    }

    /// `bbr_extra_acked`: the largest excess of the last `window` to `2·window` rounds, bytes.
    pub fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// The current epoch: its start and the bytes it delivered so far.
    pub fn epoch(&self) -> (Nanos, u64) {
        (self.epoch_start, self.epoch_acked)
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: sending restarts after idle, a new epoch begins.
    pub fn restart_epoch(&mut self, now: Nanos) {
        self.epoch_start = now;
        self.epoch_acked = 0;
    }

    /// `bbr_update_ack_aggregation` for an ACK at `now` that delivered `acked` bytes (> 0, with
    /// a valid rate sample; the caller checks). `round_start` is the round counter's verdict on
    /// this ACK, `window` the rounds per slot, `bw` the estimate (bytes per second, after this
    /// ACK's sample), `cwnd` the window before this ACK changes it.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        now: Nanos,
        round_start: bool,
        window: u64,
        bw: f64,
        acked: u64,
        cwnd: u64,
        mss: u64,
    ) {
        if round_start {
            self.win_rounds = (self.win_rounds + 1).min(MAX_WIN_RTTS);
            if self.win_rounds >= window {
                self.win_rounds = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        let mut expected = segments_at(bw, now.saturating_sub(self.epoch_start), mss) * mss;
        let reset_at = ACK_EPOCH_ACKED_RESET_THRESH * mss;
        if self.epoch_acked <= expected || self.epoch_acked + acked >= reset_at {
            self.restart_epoch(now);
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + acked).min(reset_at - mss);
        let extra = self.epoch_acked.saturating_sub(expected).min(cwnd);
        let slot = &mut self.extra_acked[self.win_idx];
        *slot = (*slot).max(extra);
    }

    /// `bbr_ack_aggregation_cwnd` once the caller has decided it applies: `gain` times the
    /// windowed maximum, at most `bw · max_time`, both in whole segments; bytes.
    pub fn cwnd(&self, gain: f64, bw: f64, max_time: Nanos, mss: u64) -> u64 {
        let mss = mss.max(1);
        let cap = segments_at(bw, max_time, mss);
        let aggr = (gain * self.extra_acked() as f64 / mss as f64).floor() as u64;
        aggr.min(cap) * mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1448;
    const MS: Nanos = 1_000_000;
    /// One segment per millisecond.
    const BW: f64 = 1_448_000.0;

    /// One ACK per 20 ms delivering 20 ms of data: from the second ACK on, the epoch that
    /// started at the previous one has delivered exactly what was expected, so each ACK
    /// restarts it and its own 20 segments are the excess.
    #[test]
    fn each_aggregate_is_the_excess_when_acks_come_in_aggregates() {
        let mut a = AckAggregation::new(0);
        for k in 1..=5 {
            a.update(k * 20 * MS, false, 5, BW, 20 * M, 1_000 * M, M);
            assert_eq!(a.extra_acked(), 20 * M, "ACK {k}");
        }
    }

    /// A burst: after a 20 ms silence, ten ACKs 0.2 ms apart each deliver 2 segments. The
    /// first restarts the epoch (the silence left it behind the estimate); by the tenth the
    /// epoch (1.8 ms: 1 segment expected) delivered 20: the excess is 19 segments.
    #[test]
    fn a_burst_after_a_silence_counts_everything_beyond_the_rate() {
        let mut a = AckAggregation::new(0);
        a.update(MS, false, 5, BW, M, 1_000 * M, M);
        let t0 = 21 * MS;
        for k in 0..10 {
            a.update(t0 + k * 200_000, false, 5, BW, 2 * M, 1_000 * M, M);
        }
        assert_eq!(a.extra_acked(), 19 * M);
    }

    /// An epoch restarts only when the ACKs fall behind the estimate: ACKs at exactly the
    /// estimated rate after a burst keep the burst's excess (Linux behaves the same; a flow
    /// paced 1 % below the estimate catches up with it after 100 times the excess).
    #[test]
    fn acks_at_exactly_the_rate_keep_an_epoch_going() {
        let mut a = AckAggregation::new(0);
        a.update(0, false, 5, BW, 10 * M, 1_000 * M, M);
        for k in 1..=50 {
            a.update(k * MS, false, 5, BW, M, 1_000 * M, M);
        }
        assert_eq!(a.epoch(), (0, 60 * M));
        assert_eq!(a.extra_acked(), 10 * M);
        // A silence lets the estimate catch up: the next ACK restarts the epoch.
        a.update(80 * MS, false, 5, BW, M, 1_000 * M, M);
        assert_eq!(a.epoch(), (80 * MS, M));
    }

    #[test]
    fn the_excess_is_capped_by_cwnd_and_the_allowance_by_100_ms_of_data() {
        let mut a = AckAggregation::new(0);
        a.update(MS, false, 5, BW, 300 * M, 250 * M, M);
        assert_eq!(a.extra_acked(), 250 * M);
        // 100 ms at one segment per ms: 100 segments.
        assert_eq!(a.cwnd(1.0, BW, EXTRA_ACKED_MAX, M), 100 * M);
        assert_eq!(a.cwnd(1.0, 4.0 * BW, EXTRA_ACKED_MAX, M), 250 * M);
        assert_eq!(a.cwnd(0.5, 4.0 * BW, EXTRA_ACKED_MAX, M), 125 * M);
    }

    /// The slot holding a peak is cleared when it becomes current again: 5 rounds after it
    /// was left (10 after the peak's slot opened).
    #[test]
    fn a_peak_is_forgotten_after_two_windows_of_rounds() {
        let mut a = AckAggregation::new(0);
        let mut now = 0;
        let mut step = |a: &mut AckAggregation, round_start: bool, acked: u64| {
            now += 100 * MS;
            a.update(now, round_start, 5, BW, acked, 1_000 * M, M);
        };
        step(&mut a, false, 50 * M); // slot 0 holds 50
        for _ in 0..4 {
            step(&mut a, true, M);
        }
        assert_eq!(a.extra_acked(), 50 * M, "4 rounds: still the first slot");
        step(&mut a, true, M); // 5th round: slot 1 opens
        assert_eq!(a.extra_acked(), 50 * M, "the old slot still counts");
        for _ in 0..4 {
            step(&mut a, true, M);
        }
        assert_eq!(a.extra_acked(), 50 * M);
        step(&mut a, true, M); // 10th round: slot 0 is cleared and reused
        assert_eq!(a.extra_acked(), M);
    }

    #[test]
    fn an_epoch_restarts_before_reaching_two_to_the_twenty_packets() {
        let mut a = AckAggregation::new(0);
        // Far ahead of a tiny rate: the epoch is never behind the estimate.
        let huge = ACK_EPOCH_ACKED_RESET_THRESH * M;
        a.update(MS, false, 5, 1.0, huge / 2, u64::MAX, M);
        a.update(2 * MS, false, 5, 1.0, huge / 2 - M, u64::MAX, M);
        assert_eq!(a.extra_acked(), huge - M);
        a.update(3 * MS, false, 5, 1.0, M, u64::MAX, M);
        assert_eq!(a.epoch_acked, M, "restarted at this ACK");
        assert_eq!(a.epoch_start, 3 * MS);
    }
}
