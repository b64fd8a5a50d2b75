//! RTT samples a pure receiver can take from the wire (rLEDBAT paper §3.1, L141–L160; notes
//! `algorithms.md` §8.3).
//!
//! * [`TsRttSampler`]: an outgoing ACK's TSval comes back as the TSecr of the data the sender
//!   transmits after reading it. Only the first outgoing segment per TSval is timed and only the
//!   first incoming segment per TSecr is used (coarse TS clocks give many packets one value,
//!   L156); a TSval carried by an ACK that was stepping the window down is discarded (the
//!   sender may have been window-limited, L152 and footnote 5).
//! * [`EdgeRttSampler`]: the fallback without timestamps. Bytes beyond a right edge can leave
//!   the sender only after the ACK that first advertised a larger edge reached it, so the time
//!   from that ACK to the first data beyond the previous edge is one RTT while the sender is
//!   window-limited, and longer otherwise (never shorter, so errors only make rLEDBAT more
//!   cautious). Linux's receiver-side `tcp_rcv_rtt_measure` (DRS) times a window the same way.

use std::collections::VecDeque;

use crate::Nanos;

/// Most outgoing TSvals (or edges) remembered; older ones are dropped unmatched.
const MAX_PENDING: usize = 1 << 14;

/// `a` is later than `b` on the wrapping 32-bit TS clock (RFC 7323 §5.2 comparison).
pub fn ts_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[derive(Clone, Copy, Debug)]
struct SentTs {
    tsval: u32,
    sent_at: Nanos,
    /// Some segment carrying this TSval advertised a window still being stepped down.
    reducing: bool,
}

/// TSval → send time of the first outgoing segment with it (the paper's `sentList`, L254).
#[derive(Clone, Debug, Default)]
pub struct TsRttSampler {
    sent: VecDeque<SentTs>,
}

impl TsRttSampler {
    /// An outgoing segment with `tsval` at `now`; `reducing` if its window was a step down.
    pub fn on_sent(&mut self, tsval: u32, now: Nanos, reducing: bool) {
        if let Some(last) = self.sent.back_mut() {
            if last.tsval == tsval {
                last.reducing |= reducing;
                return;
            }
        }
        if self.sent.len() == MAX_PENDING {
            self.sent.pop_front();
        }
        self.sent.push_back(SentTs { tsval, sent_at: now, reducing });
    }

    /// A data segment echoing `tsecr` arrived at `now`: the RTT, if this is the first segment
    /// echoing a TSval this receiver sent and that TSval's window was not being reduced.
    /// Older TSvals are forgotten: the echo only moves forward.
    pub fn on_received(&mut self, tsecr: u32, now: Nanos) -> Option<Nanos> {
        while self.sent.front().is_some_and(|s| ts_after(tsecr, s.tsval)) {
            self.sent.pop_front();
        }
        let first = self.sent.front().filter(|s| s.tsval == tsecr)?;
        let sample = (!first.reducing).then(|| now.saturating_sub(first.sent_at));
        self.sent.pop_front();
        sample
    }
}

#[derive(Clone, Copy, Debug)]
struct Edge {
    edge: u64,
    sent_at: Nanos,
}

/// Right edges as first advertised, increasing, for timing without timestamps.
#[derive(Clone, Debug, Default)]
pub struct EdgeRttSampler {
    edges: VecDeque<Edge>,
    highest_advertised: u64,
    /// Data up to here has already given its sample.
    sampled_up_to: u64,
}

impl EdgeRttSampler {
    /// Before this receiver's first ACK reaches it, the sender obeys a window this controller
    /// never saw (the SYN-ACK's, at most 64 KB unscaled, RFC 7323 §2.2); data up to
    /// `hidden_edge` may have been sent under it and is not timed.
    pub fn beyond(hidden_edge: u64) -> Self {
        Self { edges: VecDeque::new(), highest_advertised: hidden_edge, sampled_up_to: hidden_edge }
    }

    /// An outgoing segment advertised the right edge `edge` (RCV.NXT + window) at `now`.
    pub fn on_sent(&mut self, edge: u64, now: Nanos) {
        if edge <= self.highest_advertised {
            return;
        }
        self.highest_advertised = edge;
        if self.edges.len() == MAX_PENDING {
            self.edges.pop_front();
        }
        self.edges.push_back(Edge { edge, sent_at: now });
    }

    /// New data ending at `end` arrived at `now`: time it against the first ACK whose edge
    /// allowed it, once per advertised edge.
    pub fn on_received(&mut self, end: u64, now: Nanos) -> Option<Nanos> {
        if end <= self.sampled_up_to {
            return None;
        }
        while self.edges.front().is_some_and(|e| e.edge < end) {
            self.edges.pop_front();
        }
        let first = self.edges.pop_front()?;
        self.sampled_up_to = first.edge;
        Some(now.saturating_sub(first.sent_at))
    }
}
