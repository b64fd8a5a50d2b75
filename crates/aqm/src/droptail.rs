//! Drop-tail FIFO: enqueue while the limit allows, drop arrivals otherwise. Never marks.

use std::collections::VecDeque;

use crate::{DequeueSink, Dequeued, DropReason, Enqueued, Limit, Nanos, QueueDisc, QueuedPacket};

pub struct DropTail<P> {
    limit: Limit,
    fifo: VecDeque<(P, Nanos)>,
    bytes: u64,
}

impl<P> DropTail<P> {
    pub fn new(limit: Limit) -> Self {
        let capacity = match limit {
            Limit::Packets(n) => n.min(1 << 16) as usize,
            Limit::Bytes(b) => (b / 1500).min(1 << 16) as usize,
        };
        Self { limit, fifo: VecDeque::with_capacity(capacity + 1), bytes: 0 }
    }

    pub fn limit(&self) -> Limit {
        self.limit
    }
}

impl<P: QueuedPacket + Send> QueueDisc<P> for DropTail<P> {
    fn name(&self) -> &'static str {
        "droptail"
    }

    fn enqueue(&mut self, pkt: P, now: Nanos) -> Enqueued<P> {
        let size = pkt.wire_bytes();
        if !self.limit.admits(self.fifo.len(), self.bytes, size) {
            return Enqueued::Dropped(pkt, DropReason::Overflow);
        }
        self.bytes += size as u64;
        self.fifo.push_back((pkt, now));
        Enqueued::Queued
    }

    fn dequeue(&mut self, now: Nanos, _sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>> {
        let (pkt, enqueued_at) = self.fifo.pop_front()?;
        self.bytes -= pkt.wire_bytes() as u64;
        Some(Dequeued { pkt, sojourn: now - enqueued_at })
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ecn;

    #[derive(Debug)]
    struct Pkt(u32, Ecn);
    impl QueuedPacket for Pkt {
        fn wire_bytes(&self) -> u32 {
            self.0
        }
        fn ecn(&self) -> Ecn {
            self.1
        }
        fn set_ecn(&mut self, ecn: Ecn) {
            self.1 = ecn
        }
    }
    struct NoSink;
    impl DequeueSink<Pkt> for NoSink {
        fn dropped(&mut self, _: Pkt, _: DropReason, _: Nanos) {}
        fn marked(&mut self, _: &Pkt, _: Nanos) {}
    }

    #[test]
    fn packet_limit_drops_the_overflowing_arrival_even_if_ect() {
        let mut q = DropTail::new(Limit::Packets(2));
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Queued));
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Queued));
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Dropped(_, DropReason::Overflow)));
        assert_eq!(q.len_packets(), 2);
        assert_eq!(q.len_bytes(), 3000);
    }

    #[test]
    fn byte_limit_counts_headers_and_sojourn_is_measured() {
        let mut q = DropTail::new(Limit::Bytes(3000));
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::NotEct), 10), Enqueued::Queued));
        assert!(matches!(q.enqueue(Pkt(1000, Ecn::NotEct), 20), Enqueued::Queued));
        assert!(matches!(q.enqueue(Pkt(600, Ecn::NotEct), 30), Enqueued::Dropped(..)));
        assert!(matches!(q.enqueue(Pkt(500, Ecn::NotEct), 30), Enqueued::Queued));
        let d = q.dequeue(110, &mut NoSink).unwrap();
        assert_eq!((d.pkt.0, d.sojourn), (1500, 100));
        assert_eq!(q.len_bytes(), 1500);
    }
}
