//! Packets in the network live in one slab from the moment an endpoint sends them until they are
//! delivered or lost; queues and pipes move a 24-byte [`InFlight`] (the slot and the few fields
//! forwarding and queue disciplines read) instead of the 128-byte [`Packet`], as htsim passes
//! packets by handle. Freed slots are reused, so the slab's size follows the packets in flight,
//! not the run's length, and its order of reuse is deterministic.

use ccbench_aqm::{Ecn, QueuedPacket};

use super::Side;
use crate::packet::Packet;

/// A packet on its way: where it is in the slab and on its route, and what queues read and write.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    pub slot: u32,
    pub flow: u32,
    /// The path in the network's table and the position along it.
    pub path: u32,
    /// The end of its flow it is for.
    pub to: Side,
    pub hop: u16,
    /// Which connection of the flow sent it (see [`Packet::conn`]).
    pub conn: u16,
    pub wire_bytes: u32,
    /// The packet's ECN field as the queues on its way left it (CE once marked).
    pub ecn: Ecn,
}

impl QueuedPacket for InFlight {
    fn wire_bytes(&self) -> u32 {
        self.wire_bytes
    }
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn set_ecn(&mut self, ecn: Ecn) {
        self.ecn = ecn
    }
    /// A connection is its flow and its number: a chunked flow's fresh connection is a new
    /// 5-tuple (a new source port), as on a real host.
    fn flow_id(&self) -> u64 {
        (self.flow as u64) << 16 | self.conn as u64
    }
}

#[derive(Default)]
pub struct PacketSlab {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketSlab {
    /// Store `pkt` for its way along `path` to the `to` end of its flow, from the first link.
    pub fn insert(&mut self, pkt: Packet, path: u32, to: Side) -> InFlight {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = pkt;
                s
            }
            None => {
                self.slots.push(pkt);
                (self.slots.len() - 1) as u32
            }
        };
        let (flow, conn) = (pkt.flow, pkt.conn);
        InFlight { slot, flow, path, to, hop: 0, conn, wire_bytes: pkt.wire_bytes, ecn: pkt.ecn }
    }

    /// The packet as it is now on its way (its ECN field as the queues left it).
    pub fn get(&self, p: &InFlight) -> Packet {
        Packet { ecn: p.ecn, ..self.slots[p.slot as usize] }
    }

    /// The packet leaves the network (delivered): free its slot and read it (the slot is only
    /// reused once the reading is over).
    pub fn deliver(&mut self, p: &InFlight) -> &Packet {
        self.free.push(p.slot);
        let pkt = &mut self.slots[p.slot as usize];
        pkt.ecn = p.ecn;
        pkt
    }

    /// The packet is lost: free its slot.
    pub fn release(&mut self, p: &InFlight) {
        self.free.push(p.slot);
    }

    /// Packets stored now (for conservation checks).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    #[test]
    fn slots_are_reused_and_the_ecn_travels_with_the_handle() {
        let mut slab = PacketSlab::default();
        let mut a = slab.insert(Packet::new(1, Kind::Data, 1500, 0), 2, Side::Receiver);
        let b = slab.insert(Packet::new(3, Kind::Ack, 52, 0), 4, Side::Sender);
        assert_eq!((a.slot, b.slot, a.flow, a.path, b.wire_bytes, slab.live()), (0, 1, 1, 2, 52, 2));
        a.set_ecn(Ecn::Ce);
        assert_eq!(slab.get(&a).ecn, Ecn::Ce);
        let got = slab.deliver(&a);
        assert_eq!((got.flow, got.ecn), (1, Ecn::Ce));
        assert_eq!(slab.live(), 1);
        slab.release(&b);
        let c = slab.insert(Packet::new(5, Kind::Data, 1500, 0), 6, Side::Receiver);
        assert_eq!((c.slot, slab.live()), (1, 1), "the last freed slot first");
        assert_eq!(slab.insert(Packet::new(7, Kind::Data, 1500, 0), 8, Side::Receiver).slot, 0);
    }
}
