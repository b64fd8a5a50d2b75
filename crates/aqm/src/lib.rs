//! Egress queue disciplines for ccbench, free of simulator types.
//!
//! A queue stores packets of any type implementing [`QueuedPacket`] and decides, on enqueue and on
//! dequeue, whether each one passes, is CE-marked or is dropped. Marking is a first-class outcome
//! beside dropping, because the AQMs (RED, CoDel, PIE, FQ-CoDel, PI2, DualPI2) signal ECN-capable packets by marking them
//! (RFC 3168 §5). Overflow of the configured limit always drops, ECT or not.
//!
//! Time is an integer number of nanoseconds. Randomised AQMs get their RNG state at construction.

#![forbid(unsafe_code)]

pub mod codel;
pub mod droptail;
pub mod dualpi2;
mod fifo;
pub mod fq_codel;
pub mod pi2;
pub mod pie;
pub mod red;
pub mod registry;
#[cfg(test)]
mod testing;

pub use ccbench_params::{ParamError, ParamSpec, ParamValue, Params};
pub use codel::{CoDel, CoDelConfig};
pub use droptail::DropTail;
pub use dualpi2::{DualPi2, DualPi2Config};
pub use fq_codel::{FqCoDel, FqCoDelConfig};
pub use pi2::{Pi2, Pi2Config};
pub use pie::{Pie, PieConfig};
pub use red::Red;
pub use registry::{build_queue, marks_by_default, queue_params, queues, QueueConfig, QueueKind};

pub type Nanos = u64;

/// Nanoseconds per microsecond, millisecond and second.
pub const US: Nanos = 1_000;
pub const MS: Nanos = 1_000_000;
pub const S: Nanos = 1_000_000_000;

/// ECN codepoint of the IP header (RFC 3168 §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

impl Ecn {
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// What a queue needs to know about a packet.
pub trait QueuedPacket {
    /// Size on the wire, headers included.
    fn wire_bytes(&self) -> u32;
    fn ecn(&self) -> Ecn;
    fn set_ecn(&mut self, ecn: Ecn);
    /// Which transport flow the packet belongs to, for queues that keep flows apart (FQ-CoDel
    /// hashes it, as Linux hashes the 5-tuple): equal for the packets of one connection in one
    /// direction, different across connections. Queues that do not separate flows ignore it.
    fn flow_id(&self) -> u64;
}

/// Why a packet did not make it through the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer limit was reached (not an AQM decision).
    Overflow,
    /// An AQM chose to drop (early drop, CoDel drop, PIE drop).
    Aqm,
}

/// Buffer limit of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Would a packet of `size` bytes still fit after `pkts` packets / `bytes` bytes?
    pub fn admits(self, pkts: usize, bytes: u64, size: u32) -> bool {
        match self {
            Limit::Packets(n) => (pkts as u64) < n,
            Limit::Bytes(b) => bytes + size as u64 <= b,
        }
    }
}

/// Outcome of an enqueue.
#[derive(Debug)]
pub enum Enqueued<P> {
    /// Queued unchanged.
    Queued,
    /// Queued with CE set.
    Marked,
    /// A packet was dropped and is handed back: the one offered, or another the queue dropped to
    /// make room (then the offered one is queued); further drops of the same enqueue come from
    /// [`QueueDisc::take_extra_drop`].
    Dropped(P, DropReason),
}

/// Sink for packets a queue drops or marks while dequeuing (CoDel drops at the head).
pub trait DequeueSink<P> {
    fn dropped(&mut self, pkt: P, reason: DropReason, sojourn: Nanos);
    fn marked(&mut self, pkt: &P, sojourn: Nanos);
}

/// A packet leaving the queue, with the time it waited.
#[derive(Debug)]
pub struct Dequeued<P> {
    pub pkt: P,
    pub sojourn: Nanos,
}

/// An egress queue discipline.
pub trait QueueDisc<P: QueuedPacket>: Send {
    fn name(&self) -> &'static str;
    fn enqueue(&mut self, pkt: P, now: Nanos) -> Enqueued<P>;
    /// Packets the last [`QueueDisc::enqueue`] dropped besides the one it returned, one per
    /// call until None: FQ-CoDel drops a batch from the head of its fattest flow on overflow
    /// (Linux `fq_codel_drop`). The caller drains them right after each enqueue.
    fn take_extra_drop(&mut self) -> Option<P> {
        None
    }
    /// Next packet to transmit; packets the AQM discards on the way go to `sink`.
    fn dequeue(&mut self, now: Nanos, sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
    /// Tell the queue the drain rate changed (PIE and time-based limits use it).
    fn set_link_rate(&mut self, _bits_per_sec: f64) {}
    /// Whether [`QueueDisc::dequeue`] may discard packets (CoDel drops at the head). A link
    /// whose queue never does knows each packet's departure when its transmission starts.
    fn drops_at_dequeue(&self) -> bool {
        false
    }
    /// The AQM's current drop/mark probability brought up to `now` (PIE's `drop_prob`, RED's
    /// `p_a` of the last arrival); None for queues without one (DropTail, CoDel).
    fn signal_probability(&mut self, _now: Nanos) -> Option<f64> {
        None
    }
}
