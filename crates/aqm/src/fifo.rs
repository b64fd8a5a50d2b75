//! The FIFO every queue discipline keeps its packets in: arrival times beside the packets (for
//! sojourn times), a byte count, and the physical buffer limit, which no AQM can override.

use std::collections::VecDeque;

use crate::{DropReason, Enqueued, Limit, Nanos, QueuedPacket};

pub struct Fifo<P> {
    packets: VecDeque<(P, Nanos)>,
    bytes: u64,
    limit: Limit,
}

impl<P: QueuedPacket> Fifo<P> {
    pub fn new(limit: Limit) -> Self {
        // No buffer up front: a queue's buffer doubles while it first fills, a dozen times for the
        // deepest, never per packet in steady state. An unlimited access link (one or two per
        // flow, infinite rate) then holds the one packet it ever has, where reserving the limit
        // cost 8.9 MB of address space each (178 GB at 10,000 flows).
        Fifo { packets: VecDeque::new(), bytes: 0, limit }
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }

    #[cfg(test)]
    pub fn set_limit(&mut self, limit: Limit) {
        self.limit = limit;
    }

    /// Would a packet of `size` bytes still fit?
    pub fn admits(&self, size: u32) -> bool {
        self.limit.admits(self.packets.len(), self.bytes, size)
    }

    /// Appends a packet the caller has admitted.
    pub fn push(&mut self, pkt: P, now: Nanos) {
        self.bytes += pkt.wire_bytes() as u64;
        self.packets.push_back((pkt, now));
    }

    /// Drop-tail admission: queued if it fits, else handed back as an overflow.
    pub fn enqueue(&mut self, pkt: P, now: Nanos) -> Enqueued<P> {
        if !self.admits(pkt.wire_bytes()) {
            return Enqueued::Dropped(pkt, DropReason::Overflow);
        }
        self.push(pkt, now);
        Enqueued::Queued
    }

    /// The oldest packet and when it arrived.
    pub fn pop(&mut self) -> Option<(P, Nanos)> {
        let (pkt, at) = self.packets.pop_front()?;
        self.bytes -= pkt.wire_bytes() as u64;
        Some((pkt, at))
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
