//! What the queues' unit tests share: a packet with a size and an ECN field, a sink that ignores
//! what it is told and one that counts it.

use crate::{DequeueSink, DropReason, Ecn, Nanos, QueuedPacket};

#[derive(Debug, Clone, PartialEq)]
pub struct Pkt(pub u32, pub Ecn);

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
    /// One flow: these tests are about a single queue's control law.
    fn flow_id(&self) -> u64 {
        0
    }
}

pub struct NoSink;

impl DequeueSink<Pkt> for NoSink {
    fn dropped(&mut self, _: Pkt, _: DropReason, _: Nanos) {}
    fn marked(&mut self, _: &Pkt, _: Nanos) {}
}

/// Counts the AQM drops and the marks a queue reports while dequeuing.
#[derive(Default)]
pub struct Count {
    pub drops: u64,
    pub marks: u64,
    pub dropped_bytes: u64,
}

impl DequeueSink<Pkt> for Count {
    fn dropped(&mut self, pkt: Pkt, reason: DropReason, _: Nanos) {
        assert_eq!(reason, DropReason::Aqm);
        self.drops += 1;
        self.dropped_bytes += pkt.0 as u64;
    }
    fn marked(&mut self, pkt: &Pkt, _: Nanos) {
        assert_eq!(pkt.1, Ecn::Ce);
        self.marks += 1;
    }
}
