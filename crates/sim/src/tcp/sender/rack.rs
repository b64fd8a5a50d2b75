//! RACK, the time-based half of RACK-TLP (RFC 8985 §6; Linux `tcp_recovery.c`, the only loss
//! detector Linux runs on SACK connections since 4.18): a segment is lost once a segment sent
//! *after* it has been delivered and more than the most recent RTT plus a reordering window has
//! passed since it was sent. Because it compares send times, it also finds lost
//! retransmissions, which the sequence-based RFC 6675 rule cannot.
//!
//! Segments are visited in send order without scanning the whole queue: originals (never
//! retransmitted) were sent in sequence order, so the scan walks them from the lowest one still
//! pending; retransmissions go into a queue of their own in the order they left.

use std::collections::VecDeque;

use super::scoreboard::{Scoreboard, Seg};
use super::Nanos;

/// Linux `TCP_TIMEOUT_MIN` (2 jiffies at HZ = 1000): added to every reorder timeout.
pub(super) const TIMER_SLACK: Nanos = 2_000_000;
/// Linux `sysctl_tcp_reordering`: SACKed segments that stand in for the duplicate-ACK threshold.
const REORDERING: u64 = 3;
/// Linux `TCP_RACK_RECOVERY_THRESH`: recoveries a widened window persists for.
const RECOVERY_THRESH: u32 = 16;

/// Where a segment stands against the RACK rule.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Not sent before the most recently delivered segment: nothing to say yet, nor about any
    /// segment sent later.
    SentAfter,
    /// Lost unless delivered within this many nanoseconds.
    Wait(Nanos),
    Lost,
}

pub(super) struct Rack {
    /// Send time and end of the most recently sent segment delivered so far (RACK.xmit_ts,
    /// RACK.end_seq).
    xmit_ts: Nanos,
    end_seq: u64,
    /// RTT of the most recently delivered segment (RACK.rtt).
    rtt: Nanos,
    /// A delivery since the last detection pass (Linux `rack.advanced`).
    advanced: bool,
    /// End of the highest SACKed segment (RACK.fack).
    fack: u64,
    /// A never-retransmitted segment was delivered below `fack` (Linux `reord_seen`).
    reordering_seen: bool,
    /// The window is `steps` quarters of min_rtt, widened by DSACKs (Linux `reo_wnd_steps`).
    steps: u32,
    /// Recoveries left before widened steps fall back to one (Linux `reo_wnd_persist`).
    persist: u32,
    /// A DSACK arrived since the window was last adjusted, and `delivered` at that adjustment.
    dsack_seen: bool,
    last_adjusted: u64,
    /// No original below this sequence number is still a candidate.
    originals_from: u64,
    /// Retransmissions in the order they were sent: (seq, send time). Entries whose segment was
    /// delivered, marked lost or sent again are skipped and dropped when they reach the front.
    retransmissions: VecDeque<(u64, Nanos)>,
}

/// RFC 8985 `RACK_sent_after`: send time first, then sequence for segments sent together.
fn sent_after(t1: Nanos, seq1: u64, t2: Nanos, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

fn end(seg: &Seg) -> u64 {
    seg.seq + seg.len as u64
}

impl Rack {
    pub fn new() -> Self {
        Rack {
            xmit_ts: 0,
            end_seq: 0,
            rtt: 0,
            advanced: false,
            fack: 0,
            reordering_seen: false,
            steps: 1,
            persist: 0,
            dsack_seen: false,
            last_adjusted: 0,
            originals_from: 0,
            retransmissions: VecDeque::with_capacity(64),
        }
    }

    /// RACK.rtt: the RTO marks only segments older than this (Linux `tcp_timeout_mark_lost`).
    pub fn rtt(&self) -> Nanos {
        self.rtt
    }

    /// Losses were unmarked by an undo: look at every segment again (Linux sets
    /// `rack.advanced` in `tcp_undo_cwnd_reduction`).
    pub fn rewind(&mut self) {
        self.originals_from = 0;
        self.advanced = true;
    }

    pub fn on_retransmit(&mut self, seq: u64, now: Nanos) {
        self.retransmissions.push_back((seq, now));
    }

    /// A segment newly delivered, cumulatively or by SACK (Linux `tcp_rack_advance`). An RTT
    /// below the minimum from a retransmitted segment means the original was delivered, so it
    /// says nothing about the retransmission's fate.
    pub fn on_delivered(&mut self, seg: &Seg, now: Nanos, min_rtt: Option<Nanos>) {
        let rtt = now - seg.tx.sent_time;
        if seg.ever_retransmitted && min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if sent_after(seg.tx.sent_time, end(seg), self.xmit_ts, self.end_seq) {
            self.xmit_ts = seg.tx.sent_time;
            self.end_seq = end(seg);
        }
    }

    /// Reordering (Linux `tcp_check_sack_reordering`): a segment sent once and delivered below
    /// `prior_fack`, the highest SACKed sequence before this ACK, overtook nothing lost.
    pub fn check_reordering(&mut self, seg: &Seg, prior_fack: u64) {
        if !seg.ever_retransmitted && seg.seq < prior_fack {
            self.reordering_seen = true;
        }
    }

    pub fn fack(&self) -> u64 {
        self.fack
    }

    pub fn on_sacked(&mut self, seg: &Seg) {
        self.fack = self.fack.max(end(seg));
    }

    pub fn on_dsack(&mut self) {
        self.dsack_seen = true;
    }

    /// Linux `tcp_rack_update_reo_wnd`, once per ACK: a DSACK widens the window by one step
    /// (at most once per round trip), which then persists for 16 recoveries.
    pub fn update_reo_wnd(&mut self, prior_delivered: u64, delivered: u64) {
        if prior_delivered < self.last_adjusted {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.steps = (self.steps + 1).min(0xFF);
            self.dsack_seen = false;
            self.last_adjusted = delivered;
            self.persist = RECOVERY_THRESH;
        } else if self.persist == 0 {
            self.steps = 1;
        }
    }

    /// A recovery ended (Linux decrements `reo_wnd_persist` in `tcp_rack_reo_wnd`'s callers).
    pub fn on_recovery_end(&mut self) {
        self.persist = self.persist.saturating_sub(1);
    }

    /// Linux `tcp_rack_reo_wnd`: none while recovering or once the duplicate-ACK threshold's
    /// worth of segments is SACKed, unless reordering was seen; otherwise a quarter of min_rtt
    /// per step, never more than SRTT.
    pub fn reo_wnd(&self, in_recovery: bool, sacked_segments: u64, min_rtt: Nanos, srtt: Nanos) -> Nanos {
        if !self.reordering_seen && (in_recovery || sacked_segments >= REORDERING) {
            return 0;
        }
        (min_rtt / 4 * self.steps as u64).min(srtt)
    }

    fn verdict(&self, seg: &Seg, now: Nanos, reo_wnd: Nanos) -> Verdict {
        if !sent_after(self.xmit_ts, self.end_seq, seg.tx.sent_time, end(seg)) {
            return Verdict::SentAfter;
        }
        let deadline = seg.tx.sent_time + self.rtt + reo_wnd;
        if deadline <= now {
            Verdict::Lost
        } else {
            Verdict::Wait(deadline - now)
        }
    }

    /// RFC 8985 `RACK_detect_loss` after a delivery (Linux `tcp_rack_mark_lost`), or always
    /// when `force` (the reorder timer fired). Marks what is lost, handing each segment to
    /// `lost`, and returns how long until the next pending segment expires.
    ///
    /// Linux arms the reorder timer for the *latest* expiry among the pending segments (so all
    /// are marked together); we arm it for the earliest, marking each at its own deadline,
    /// which keeps the scan from visiting every pending segment on every ACK.
    pub fn detect(
        &mut self,
        sb: &mut Scoreboard,
        now: Nanos,
        reo_wnd: Nanos,
        force: bool,
        lost: &mut impl FnMut(&Seg),
    ) -> Option<Nanos> {
        if !self.advanced && !force {
            return None;
        }
        self.advanced = false;
        let a = self.scan_originals(sb, now, reo_wnd, lost);
        let b = self.scan_retransmissions(sb, now, reo_wnd, lost);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Marks segment `i` lost if its time is up; otherwise the scan stops here, with the time
    /// it still has if it was sent before the most recently delivered segment.
    fn judge(
        &self,
        sb: &mut Scoreboard,
        i: usize,
        now: Nanos,
        reo_wnd: Nanos,
        lost: &mut impl FnMut(&Seg),
    ) -> Result<(), Option<Nanos>> {
        match self.verdict(sb.seg(i), now, reo_wnd) {
            Verdict::SentAfter => Err(None),
            Verdict::Wait(t) => Err(Some(t)),
            Verdict::Lost => {
                if let Some(seg) = sb.mark_lost(i) {
                    lost(&seg);
                }
                Ok(())
            }
        }
    }

    fn scan_originals(
        &mut self,
        sb: &mut Scoreboard,
        now: Nanos,
        reo_wnd: Nanos,
        lost: &mut impl FnMut(&Seg),
    ) -> Option<Nanos> {
        let mut i = sb.index_of(self.originals_from.max(sb.snd_una()))?;
        while i < sb.len() {
            let seg = *sb.seg(i);
            let candidate = !seg.ever_retransmitted && !seg.sacked && !seg.lost;
            if candidate {
                if let Err(stop) = self.judge(sb, i, now, reo_wnd, lost) {
                    return stop;
                }
            }
            self.originals_from = end(&seg);
            i += 1;
        }
        None
    }

    fn scan_retransmissions(
        &mut self,
        sb: &mut Scoreboard,
        now: Nanos,
        reo_wnd: Nanos,
        lost: &mut impl FnMut(&Seg),
    ) -> Option<Nanos> {
        let mut k = 0;
        while let Some(&(seq, sent)) = self.retransmissions.get(k) {
            let live = sb.index_of(seq).filter(|&i| {
                let s = sb.seg(i);
                s.seq == seq && s.retrans && !s.sacked && s.tx.sent_time == sent
            });
            if let Some(i) = live {
                if let Err(stop) = self.judge(sb, i, now, reo_wnd, lost) {
                    return stop;
                }
            }
            if k == 0 {
                self.retransmissions.pop_front();
            } else {
                k += 1;
            }
        }
        None
    }
}
