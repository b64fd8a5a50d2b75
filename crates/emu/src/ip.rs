//! IPv4 packets as read from a TUN device (`IFF_NO_PI`: the buffer starts at the IP header).
//!
//! The emulated link only needs the wire size, the addresses (for routing), a flow key (for
//! per-packet records) and the ECN field, which a queue may rewrite to CE (RFC 3168 §5). The TUN
//! has no offloads, so every packet arrives whole, already segmented and checksummed; a rewrite
//! of the TOS byte must therefore fix the header checksum (RFC 791 §3.1, RFC 1071).

use std::net::Ipv4Addr;

use ccbench_aqm::{Ecn, QueuedPacket};

/// An IPv4 packet whose header has been checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IpPacket {
    bytes: Vec<u8>,
}

/// Addresses, protocol and ports: enough to tell flows apart in per-packet records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowKey {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub proto: u8,
    /// Source and destination port for TCP and UDP, 0 otherwise.
    pub sport: u16,
    pub dport: u16,
}

impl IpPacket {
    /// Check that `bytes` hold exactly one IPv4 packet (version, header length, total length).
    pub fn parse(bytes: Vec<u8>) -> Result<IpPacket, &'static str> {
        if bytes.len() < 20 {
            return Err("shorter than an IPv4 header");
        }
        if bytes[0] >> 4 != 4 {
            return Err("not IPv4");
        }
        let ihl = (bytes[0] & 0x0f) as usize * 4;
        let total = u16::from_be_bytes([bytes[2], bytes[3]]) as usize;
        if ihl < 20 || ihl > total || total != bytes.len() {
            return Err("inconsistent IPv4 lengths");
        }
        Ok(IpPacket { bytes })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn header_len(&self) -> usize {
        (self.bytes[0] & 0x0f) as usize * 4
    }

    pub fn src(&self) -> Ipv4Addr {
        Ipv4Addr::new(self.bytes[12], self.bytes[13], self.bytes[14], self.bytes[15])
    }

    pub fn dst(&self) -> Ipv4Addr {
        Ipv4Addr::new(self.bytes[16], self.bytes[17], self.bytes[18], self.bytes[19])
    }

    pub fn flow_key(&self) -> FlowKey {
        let proto = self.bytes[9];
        let l4 = &self.bytes[self.header_len()..];
        let (sport, dport) = match proto {
            6 | 17 if l4.len() >= 4 => {
                (u16::from_be_bytes([l4[0], l4[1]]), u16::from_be_bytes([l4[2], l4[3]]))
            }
            _ => (0, 0),
        };
        FlowKey { src: self.src(), dst: self.dst(), proto, sport, dport }
    }

    /// Whether the header checksum verifies (the ones'-complement sum over the header is 0).
    pub fn checksum_ok(&self) -> bool {
        ones_complement_sum(&self.bytes[..self.header_len()]) == 0xffff
    }

    fn fix_checksum(&mut self) {
        let hl = self.header_len();
        self.bytes[10] = 0;
        self.bytes[11] = 0;
        let sum = !ones_complement_sum(&self.bytes[..hl]);
        self.bytes[10..12].copy_from_slice(&sum.to_be_bytes());
    }
}

/// RFC 1071 ones'-complement sum of 16-bit words (`len` is even for an IP header).
fn ones_complement_sum(data: &[u8]) -> u16 {
    let mut sum: u32 =
        data.chunks(2).map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32).sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

impl QueuedPacket for IpPacket {
    /// The IP total length: TUN carries no link-layer header, as the simulator counts IP bytes.
    fn wire_bytes(&self) -> u32 {
        self.bytes.len() as u32
    }

    fn ecn(&self) -> Ecn {
        match self.bytes[1] & 0b11 {
            0b00 => Ecn::NotEct,
            0b10 => Ecn::Ect0,
            0b01 => Ecn::Ect1,
            _ => Ecn::Ce,
        }
    }

    fn set_ecn(&mut self, ecn: Ecn) {
        let bits = match ecn {
            Ecn::NotEct => 0b00,
            Ecn::Ect0 => 0b10,
            Ecn::Ect1 => 0b01,
            Ecn::Ce => 0b11,
        };
        self.bytes[1] = (self.bytes[1] & !0b11) | bits;
        self.fix_checksum();
    }

    /// The 5-tuple, hashed (with fixed keys, so the same on every run), as Linux hashes it for
    /// flow queueing (`skb_get_hash`).
    fn flow_id(&self) -> u64 {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut h = DefaultHasher::new();
        self.flow_key().hash(&mut h);
        h.finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A valid IPv4/UDP packet of `total` bytes from 10.100.0.1:1000 to 10.100.0.2:2000.
    pub fn udp_packet(total: usize, tos: u8) -> IpPacket {
        let mut b = vec![0u8; total.max(28)];
        b[0] = 0x45;
        b[1] = tos;
        let len = b.len() as u16;
        b[2..4].copy_from_slice(&len.to_be_bytes());
        b[8] = 64;
        b[9] = 17;
        b[12..16].copy_from_slice(&[10, 100, 0, 1]);
        b[16..20].copy_from_slice(&[10, 100, 0, 2]);
        b[20..22].copy_from_slice(&1000u16.to_be_bytes());
        b[22..24].copy_from_slice(&2000u16.to_be_bytes());
        let mut p = IpPacket::parse(b).unwrap();
        p.fix_checksum();
        p
    }

    #[test]
    fn parses_and_rejects() {
        let p = udp_packet(100, 0);
        assert!(p.checksum_ok());
        assert_eq!(p.wire_bytes(), 100);
        let k = p.flow_key();
        assert_eq!((k.proto, k.sport, k.dport), (17, 1000, 2000));
        assert_eq!(k.dst, Ipv4Addr::new(10, 100, 0, 2));
        assert!(IpPacket::parse(vec![0x60; 40]).is_err());
        let mut short = p.as_bytes().to_vec();
        short.pop();
        assert!(IpPacket::parse(short).is_err());
    }

    #[test]
    fn ce_mark_keeps_a_valid_checksum() {
        for tos in [0x02u8, 0x01, 0xb8 | 0x02, 0xfc] {
            let mut p = udp_packet(60, tos);
            p.set_ecn(Ecn::Ce);
            assert_eq!(p.ecn(), Ecn::Ce);
            assert_eq!(p.as_bytes()[1] & !0x03, tos & !0x03, "DSCP is kept");
            assert!(p.checksum_ok(), "checksum after CE for tos {tos:#x}");
        }
    }
}
