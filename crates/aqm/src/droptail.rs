//! Drop-tail FIFO: enqueue while the limit allows, drop arrivals otherwise. Never marks.

use crate::fifo::Fifo;
use crate::{DequeueSink, Dequeued, Enqueued, Limit, Nanos, QueueDisc, QueuedPacket};

pub struct DropTail<P> {
    fifo: Fifo<P>,
}

impl<P: QueuedPacket> DropTail<P> {
    pub fn new(limit: Limit) -> Self {
        Self { fifo: Fifo::new(limit) }
    }

    pub fn limit(&self) -> Limit {
        self.fifo.limit()
    }
}

impl<P: QueuedPacket + Send> QueueDisc<P> for DropTail<P> {
    fn name(&self) -> &'static str {
        "droptail"
    }

    fn enqueue(&mut self, pkt: P, now: Nanos) -> Enqueued<P> {
        self.fifo.enqueue(pkt, now)
    }

    fn dequeue(&mut self, now: Nanos, _sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>> {
        let (pkt, enqueued_at) = self.fifo.pop()?;
        Some(Dequeued { pkt, sojourn: now - enqueued_at })
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ecn;

    use crate::testing::{NoSink, Pkt};
    use crate::DropReason;

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
