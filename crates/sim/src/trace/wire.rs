//! Real IPv4 + TCP/UDP headers for a simulated [`Packet`], so that tshark and Wireshark read a
//! run the way they read a capture of real hosts.
//!
//! The simulator keeps no payload bytes, so a packet is written as its headers only; the IPv4
//! total length still says how long it was (the capture's `orig_len`, as a snaplen-limited
//! capture). What the simulator leaves implicit is made explicit here:
//! * addresses: host node `k` (index in the scenario's `nodes`) is `10.a.b.c` with `a.b.c` =
//!   `k + 1` in base 256, so `10.0.0.1` is the first node;
//! * ports: the receiver listens on `10000 + flow`, the sender uses `40000 + flow` (a chunked
//!   flow's later connections shift it by the number of flows per connection number), both
//!   wrapped to stay in range;
//! * sequence numbers: the simulator counts payload bytes from 0 after the handshake; each end
//!   gets an initial sequence number hashed from (flow, connection), and the SYN and SYN-ACK
//!   consume one number each as in real TCP (RFC 9293 §3.4), so byte `b` is `ISN + 1 + b`;
//! * options as Linux lays them out: MSS, SACK-permitted, timestamps and window scale on SYNs,
//!   timestamps and SACK blocks on later segments (RFC 7323, RFC 2018);
//! * checksums: the IPv4 header checksum is exact; the TCP/UDP checksum is computed as if the
//!   payload were zeros (tshark does not validate it by default, and cannot without payload).

use ccbench_aqm::Ecn;

use crate::packet::{Kind, Packet};
use crate::scenario::{FlowKind, Scenario};
use crate::tcp::receiver::wscale_for;

const IP_HEADER: usize = 20;
const TCP_HEADER: usize = 20;
const UDP_HEADER: usize = 8;
/// Longest TCP header: data offset 15 words.
const TCP_HEADER_MAX: usize = 60;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const MAX_UNSCALED_WINDOW: u64 = 65_535;

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;
const ECE: u8 = 0x40;
const CWR: u8 = 0x80;

const NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WSCALE: u8 = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMP: u8 = 8;

/// What a flow's TCP ends announce (both ends share the flow's TCP options).
#[derive(Clone, Debug)]
pub struct TcpWire {
    pub timestamps: bool,
    pub sack: bool,
    /// The MSS option: payload per segment plus the timestamp option's 12 bytes when timestamps
    /// are on (Linux announces 1460 and then carries 1448).
    pub mss_option: u16,
    /// Window-scale shift both ends announce.
    pub wscale: u8,
    /// Receive buffer, the window the data sender announces for its own (empty) direction.
    pub rcv_buf: u64,
}

/// How one flow appears on the wire.
#[derive(Clone, Debug)]
pub struct FlowWire {
    pub sender: [u8; 4],
    pub receiver: [u8; 4],
    /// The flow's index and the number of flows (for ports).
    pub flow: u32,
    pub flows: u32,
    /// None for a CBR (UDP) flow.
    pub tcp: Option<TcpWire>,
}

/// Every flow of a scenario, by flow index.
pub fn flow_wires(sc: &Scenario) -> Vec<FlowWire> {
    let flows = sc.flows.len() as u32;
    let wire = |(i, f): (usize, &crate::scenario::Flow)| FlowWire {
        sender: host_address(f.from),
        receiver: host_address(f.to),
        flow: i as u32,
        flows,
        tcp: (f.kind == FlowKind::Tcp).then(|| TcpWire {
            timestamps: f.tcp.timestamps,
            sack: f.tcp.sack,
            mss_option: (f.tcp.mss + if f.tcp.timestamps { 12 } else { 0 }).min(u16::MAX as u32) as u16,
            wscale: f.tcp.wscale.unwrap_or_else(|| wscale_for(f.tcp.rcv_buf)),
            rcv_buf: f.tcp.rcv_buf,
        }),
    };
    sc.flows.iter().enumerate().map(wire).collect()
}

/// `10.a.b.c` with `a.b.c` = `node + 1` in base 256.
pub fn host_address(node: usize) -> [u8; 4] {
    let n = node as u32 + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

impl FlowWire {
    fn receiver_port(&self) -> u16 {
        10_000 + (self.flow % 30_000) as u16
    }

    /// A fresh connection of a chunked flow takes a new port, so tshark sees a new stream.
    fn sender_port(&self, conn: u16) -> u16 {
        let k = self.flow as u64 + conn as u64 * self.flows as u64;
        40_000 + (k % 25_000) as u16
    }
}

/// Initial sequence number of one end of one connection (splitmix64 of its identity): fixed
/// per run, so traces are reproducible, and spread over the whole 32-bit space.
pub fn isn(flow: u32, conn: u16, receiver_side: bool) -> u32 {
    let mut z =
        ((flow as u64) << 17 | (conn as u64) << 1 | receiver_side as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

fn ecn_bits(ecn: Ecn) -> u8 {
    match ecn {
        Ecn::NotEct => 0,
        Ecn::Ect1 => 1,
        Ecn::Ect0 => 2,
        Ecn::Ce => 3,
    }
}

/// Write `pkt`'s headers into `buf` (cleared first); returns the IPv4 total length, the
/// packet's length on the wire.
pub fn encode(pkt: &Packet, w: &FlowWire, buf: &mut Vec<u8>) -> u32 {
    buf.clear();
    let from_sender = matches!(pkt.kind, Kind::Syn | Kind::Data | Kind::Datagram);
    let (src, dst) = if from_sender { (w.sender, w.receiver) } else { (w.receiver, w.sender) };
    let proto = if pkt.kind == Kind::Datagram { PROTO_UDP } else { PROTO_TCP };
    buf.extend_from_slice(&[0x45, ecn_bits(pkt.ecn), 0, 0, 0, 0, 0x40, 0, 64, proto, 0, 0]);
    buf.extend_from_slice(&src);
    buf.extend_from_slice(&dst);
    let total = match (&w.tcp, pkt.kind) {
        (_, Kind::Datagram) | (None, _) => udp(pkt, w, buf),
        (Some(t), _) => tcp(pkt, w, t, buf),
    };
    buf[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    let sum = checksum(0, &buf[..IP_HEADER]);
    buf[10..12].copy_from_slice(&sum.to_be_bytes());
    let l4 = total as usize - IP_HEADER;
    let pseudo = pseudo_header_sum(&src, &dst, proto, l4);
    let at = if proto == PROTO_TCP { IP_HEADER + 16 } else { IP_HEADER + 6 };
    let mut sum = checksum(pseudo, &buf[IP_HEADER..]);
    if proto == PROTO_UDP && sum == 0 {
        sum = 0xffff; // RFC 768: zero means "no checksum"
    }
    buf[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    total
}

/// UDP header; the datagram's length is its wire size less the IPv4 header.
fn udp(pkt: &Packet, w: &FlowWire, buf: &mut Vec<u8>) -> u32 {
    let total = pkt.wire_bytes.clamp((IP_HEADER + UDP_HEADER) as u32, u16::MAX as u32);
    let len = (total as usize - IP_HEADER) as u16;
    buf.extend_from_slice(&w.sender_port(pkt.conn).to_be_bytes());
    buf.extend_from_slice(&w.receiver_port().to_be_bytes());
    buf.extend_from_slice(&len.to_be_bytes());
    buf.extend_from_slice(&[0, 0]);
    total
}

/// TCP header with options; returns the IPv4 total length.
fn tcp(pkt: &Packet, w: &FlowWire, t: &TcpWire, buf: &mut Vec<u8>) -> u32 {
    let (isn_s, isn_r) = (isn(w.flow, pkt.conn, false), isn(w.flow, pkt.conn, true));
    let byte = |b: u64| isn_s.wrapping_add(1).wrapping_add(b as u32);
    let (sport, dport) = (w.sender_port(pkt.conn), w.receiver_port());
    let own_window = (t.rcv_buf >> t.wscale).min(MAX_UNSCALED_WINDOW);
    // (source port, destination port, seq, ack, flags, window): SYN windows are never scaled
    // (RFC 7323 §2.2), later ones are the announced window >> scale.
    let (ports, seq, ack, flags, window) = match pkt.kind {
        Kind::Syn => ((sport, dport), isn_s, 0, SYN, t.rcv_buf),
        Kind::SynAck => ((dport, sport), isn_r, isn_s.wrapping_add(1), SYN | ACK, pkt.window),
        Kind::Data => ((sport, dport), byte(pkt.seq), isn_r.wrapping_add(1), ACK, own_window),
        _ => ((dport, sport), isn_r.wrapping_add(1), byte(pkt.ack), ACK, pkt.window >> t.wscale),
    };
    let flags = flags | if pkt.ece { ECE } else { 0 } | if pkt.cwr { CWR } else { 0 };
    let start = buf.len();
    buf.extend_from_slice(&ports.0.to_be_bytes());
    buf.extend_from_slice(&ports.1.to_be_bytes());
    buf.extend_from_slice(&seq.to_be_bytes());
    buf.extend_from_slice(&ack.to_be_bytes());
    buf.extend_from_slice(&[0, flags]);
    buf.extend_from_slice(&(window.min(MAX_UNSCALED_WINDOW) as u16).to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    if matches!(pkt.kind, Kind::Syn | Kind::SynAck) {
        syn_options(pkt, t, buf);
    } else {
        segment_options(pkt, byte, t, buf);
    }
    let payload = if pkt.kind == Kind::Data { pkt.len as usize } else { 0 };
    let header = pad_to_wire(pkt.wire_bytes as usize, payload, buf.len() - start, buf);
    buf[start + 12] = ((header / 4) as u8) << 4;
    (IP_HEADER + header + payload).min(u16::MAX as usize) as u32
}

/// Linux's SYN layout: MSS, SACK-permitted, timestamps, NOP, window scale (20 bytes with
/// timestamps); NOPs align what a missing option leaves.
fn syn_options(pkt: &Packet, t: &TcpWire, buf: &mut Vec<u8>) {
    buf.extend_from_slice(&[OPT_MSS, 4]);
    buf.extend_from_slice(&t.mss_option.to_be_bytes());
    match (t.sack, t.timestamps) {
        (true, true) => buf.extend_from_slice(&[OPT_SACK_PERMITTED, 2]),
        (true, false) => buf.extend_from_slice(&[NOP, NOP, OPT_SACK_PERMITTED, 2]),
        (false, true) => buf.extend_from_slice(&[NOP, NOP]),
        (false, false) => {}
    }
    if t.timestamps {
        let tsecr = if pkt.kind == Kind::SynAck { pkt.tsecr } else { 0 };
        timestamp_option(pkt.tsval, tsecr, buf);
    }
    buf.extend_from_slice(&[NOP, OPT_WSCALE, 3, t.wscale]);
}

/// NOP, NOP, timestamps (12 bytes), then NOP, NOP, SACK blocks (4 + 8n bytes).
fn segment_options(pkt: &Packet, byte: impl Fn(u64) -> u32, t: &TcpWire, buf: &mut Vec<u8>) {
    if t.timestamps {
        buf.extend_from_slice(&[NOP, NOP]);
        timestamp_option(pkt.tsval, pkt.tsecr, buf);
    }
    let blocks = pkt.sack_blocks();
    if pkt.kind == Kind::Ack && !blocks.is_empty() {
        buf.extend_from_slice(&[NOP, NOP, OPT_SACK, 2 + 8 * blocks.len() as u8]);
        for &(left, right) in blocks {
            buf.extend_from_slice(&byte(left).to_be_bytes());
            buf.extend_from_slice(&byte(right).to_be_bytes());
        }
    }
}

fn timestamp_option(tsval: u32, tsecr: u32, buf: &mut Vec<u8>) {
    buf.extend_from_slice(&[OPT_TIMESTAMP, 10]);
    buf.extend_from_slice(&tsval.to_be_bytes());
    buf.extend_from_slice(&tsecr.to_be_bytes());
}

/// The TCP header's length: as built, or NOP-padded to what the packet's wire size leaves
/// beside the payload when that is a valid longer header (a `header_bytes` counting options
/// this flow does not use), so the IPv4 length stays the simulator's wire size. A wire size
/// too small for the options built keeps the header as built.
fn pad_to_wire(wire: usize, payload: usize, built: usize, buf: &mut Vec<u8>) -> usize {
    let room = wire.saturating_sub(IP_HEADER + payload);
    if room > built && room <= TCP_HEADER_MAX && room.is_multiple_of(4) {
        buf.resize(buf.len() + room - built, NOP);
        return room;
    }
    debug_assert!(built >= TCP_HEADER && built.is_multiple_of(4));
    built
}

/// Ones' complement sum of the pseudo-header (RFC 9293 §3.1, RFC 768).
fn pseudo_header_sum(src: &[u8; 4], dst: &[u8; 4], proto: u8, len: usize) -> u32 {
    let word = |b: &[u8]| u16::from_be_bytes([b[0], b[1]]) as u32;
    word(&src[..2]) + word(&src[2..]) + word(&dst[..2]) + word(&dst[2..]) + proto as u32 + len as u32
}

/// The Internet checksum (RFC 1071) of `bytes`, starting from a partial sum.
fn checksum(initial: u32, bytes: &[u8]) -> u16 {
    let mut sum = initial as u64;
    for pair in bytes.chunks(2) {
        sum += u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]) as u64;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
