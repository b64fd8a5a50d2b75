//! What `pi2` and `dualpi2` share: the PI controller of the base probability p′, the schedule of
//! its updates, and a FIFO that knows when its head arrived (the controller's delay input).

use std::collections::VecDeque;

use crate::{Nanos, QueuedPacket};

const NANOS_PER_SEC: f64 = 1e9;

/// Signed difference `a - b` in seconds.
fn secs_between(a: Nanos, b: Nanos) -> f64 {
    (a as f64 - b as f64) / NANOS_PER_SEC
}

/// The PI controller of the base ("linear") probability p′: RFC 9332 Appendix A
/// `dualpi2_update`, Linux `calculate_probability`, PI2 paper §4:
/// `p′ += alpha * (qdelay - target) + beta * (qdelay - qdelay_old)`, bounded to `[0, max_prob]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PiController {
    /// Delay target.
    pub target: Nanos,
    /// Integral gain, 1/s.
    pub alpha: f64,
    /// Proportional gain, 1/s.
    pub beta: f64,
    /// Upper bound of p′: 1, or 1/k where Linux caps it without `drop_overload`.
    pub max_prob: f64,
    /// p′.
    pub prob: f64,
    /// The delay the previous update read (Linux `last_qdelay`).
    pub last_qdelay: Nanos,
}

impl PiController {
    pub fn new(target: Nanos, alpha: f64, beta: f64, max_prob: f64) -> Self {
        Self { target, alpha, beta, max_prob, prob: 0.0, last_qdelay: 0 }
    }

    /// One update with the current queueing delay.
    pub fn update(&mut self, qdelay: Nanos) {
        let delta = self.alpha * secs_between(qdelay, self.target)
            + self.beta * secs_between(qdelay, self.last_qdelay);
        self.last_qdelay = qdelay;
        self.prob = (self.prob + delta).clamp(0.0, self.max_prob);
    }

    /// With an empty queue (delay 0) an update would leave this state as it is.
    pub fn is_at_rest(&self) -> bool {
        self.prob == 0.0 && self.last_qdelay == 0
    }
}

/// Update instants `period, 2 * period, …` (Linux arms its hrtimer `tupdate` after init and
/// re-arms it `tupdate` after each expiry).
#[derive(Clone, Copy, Debug)]
pub struct UpdateClock {
    pub next: Nanos,
    pub period: Nanos,
}

impl UpdateClock {
    pub fn new(period: Nanos) -> Self {
        Self { next: period, period }
    }

    /// The next update instant at or before `now`, if one is due.
    pub fn due(&self, now: Nanos) -> Option<Nanos> {
        (self.next <= now).then_some(self.next)
    }

    pub fn advance(&mut self) {
        self.next += self.period;
    }

    /// Skip every instant up to `now`: they would all have found the controller at rest.
    pub fn skip_past(&mut self, now: Nanos) {
        if self.next <= now {
            self.next += ((now - self.next) / self.period + 1) * self.period;
        }
    }
}

/// A packet in a [`TimedFifo`].
#[derive(Debug)]
pub struct Slot<P> {
    pub pkt: P,
    pub arrival: Nanos,
    /// DualPI2: whether the step threshold applies to it (Linux `apply_step`, set at enqueue).
    pub step_eligible: bool,
}

/// A FIFO with arrival times and a byte count; the physical limit is the caller's, since
/// DualPI2's limit covers both of its queues.
pub struct TimedFifo<P> {
    slots: VecDeque<Slot<P>>,
    bytes: u64,
}

impl<P: QueuedPacket> TimedFifo<P> {
    pub fn new() -> Self {
        // No buffer up front, as `fifo.rs` explains; the deque grows while it first fills.
        Self { slots: VecDeque::new(), bytes: 0 }
    }

    pub fn push(&mut self, slot: Slot<P>) {
        self.bytes += slot.pkt.wire_bytes() as u64;
        self.slots.push_back(slot);
    }

    pub fn pop(&mut self) -> Option<Slot<P>> {
        let slot = self.slots.pop_front()?;
        self.bytes -= slot.pkt.wire_bytes() as u64;
        Some(slot)
    }

    /// When the head arrived (Linux `c_head_ts` / `l_head_ts`).
    pub fn head_arrival(&self) -> Option<Nanos> {
        self.slots.front().map(|s| s.arrival)
    }

    /// The head's sojourn at `now`; 0 when empty (Linux `get_queue_delays`).
    pub fn head_sojourn(&self, now: Nanos) -> Nanos {
        self.head_arrival().map_or(0, |at| now.saturating_sub(at))
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
