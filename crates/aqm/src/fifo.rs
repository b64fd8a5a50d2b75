//! The FIFO every queue discipline keeps its packets in: arrival times beside the packets (for
//! sojourn times), a byte count, and the physical buffer limit, which no AQM can override.

use std::collections::VecDeque;

use crate::{DropReason, Enqueued, Limit, Nanos, QueuedPacket};

/// Packets a queue holds before its buffer first grows.
const PREALLOCATED: u64 = 64;

pub struct Fifo<P> {
    packets: VecDeque<(P, Nanos)>,
    bytes: u64,
    limit: Limit,
}

impl<P: QueuedPacket> Fifo<P> {
    pub fn new(limit: Limit) -> Self {
        // Preallocate a small buffer in full, so most queues never grow; a deeper one doubles a
        // few times while it first fills, never per packet. Reserving the whole limit up front
        // cost 8.9 MB of address space for each unlimited access link, one or two per flow.
        let capacity = match limit {
            Limit::Packets(n) => n.min(PREALLOCATED) as usize,
            Limit::Bytes(b) => (b / 1500).min(PREALLOCATED) as usize,
        };
        Fifo { packets: VecDeque::with_capacity(capacity + 1), bytes: 0, limit }
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
