//! What the queues' unit tests share: a packet with a size and an ECN field, and a sink that
//! ignores what it is told.

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
