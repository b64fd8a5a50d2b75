//! The one packet type the simulated endpoints send and receive. On its way it lives in the
//! network's slab (`net/slab.rs`) while queues and pipes move a small handle to it, so
//! forwarding never touches the heap.

use ccbench_aqm::Ecn;

pub type Nanos = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Syn,
    SynAck,
    /// TCP data segment (sender → receiver).
    Data,
    /// Pure TCP acknowledgment (receiver → sender).
    Ack,
    /// Unreliable datagram (CBR traffic).
    Datagram,
}

/// At most three SACK blocks fit beside the timestamp option (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    /// Which connection of the flow sent it: a chunked flow that opens a fresh connection
    /// ignores what its previous one left in flight.
    pub conn: u16,
    pub kind: Kind,
    pub ecn: Ecn,
    pub wire_bytes: u32,
    /// First payload byte (Data) — byte sequence numbers start at 0 after the handshake.
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative acknowledgment (Ack, SynAck).
    pub ack: u64,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub sack_count: u8,
    /// Advertised receive window in bytes (already scaled).
    pub window: u64,
    pub tsval: u32,
    pub tsecr: u32,
    /// ECN-Echo (on ACKs; on a SYN together with CWR it requests ECN).
    pub ece: bool,
    /// Congestion Window Reduced (on data; on a SYN it requests ECN).
    pub cwr: bool,
    /// AccECN's ACE field, the AE, CWR and ECE bits read as one counter (RFC 9768 §3.2.2): on
    /// ACKs the receiver's CE packet count modulo 8, on the SYN and SYN-ACK the negotiation.
    /// Only where AccECN is negotiated; `ece` and `cwr` then carry nothing of their own.
    pub ace: u8,
    /// The AccECN option's CE byte counter (RFC 9768 §3.2.3, 24 bits), on ACKs.
    pub ceb: u32,
    /// The segment is a retransmission (ground truth, for statistics only).
    pub is_retx: bool,
    /// Time the packet left its sender (transport send stamp, LEDBAT-style one-way delay).
    pub sent_at: Nanos,
    /// One-way delay the receiver measured for the data segment this ACK acknowledges.
    pub echo_owd: Nanos,
}

impl Packet {
    pub fn new(flow: u32, kind: Kind, wire_bytes: u32, now: Nanos) -> Self {
        Packet {
            flow,
            conn: 0,
            kind,
            ecn: Ecn::NotEct,
            wire_bytes,
            seq: 0,
            len: 0,
            ack: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            sack_count: 0,
            window: 0,
            tsval: 0,
            tsecr: 0,
            ece: false,
            cwr: false,
            ace: 0,
            ceb: 0,
            is_retx: false,
            sent_at: now,
            echo_owd: 0,
        }
    }

    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.sack_count as usize]
    }
}
