//! The packet path: read one IPv4 or IPv6 packet as NFQUEUE hands it over (starting at the IP
//! header), and rewrite a TCP segment's window with its checksum fixed.
//!
//! Parsing is etherparse's; this file only picks out what the receiver-side controller needs
//! (RFC 9293 §3.1 header fields, RFC 7323 window scale and timestamps) and where the window
//! and checksum live in the buffer. A packet that is not a whole, unfragmented TCP segment is
//! reported as [`Unreadable`] and must pass as it came.

use std::net::IpAddr;

use etherparse::{LaxNetSlice, LaxSlicedPacket, NetSlice, SlicedPacket, TcpOptionElement, TransportSlice};

/// Offsets of the TCP window and checksum fields within the TCP header (RFC 9293 §3.1).
const WINDOW_AT: usize = 14;
const CHECKSUM_AT: usize = 16;

/// One connection direction: where the segment comes from and goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Endpoints {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub dport: u16,
}

/// What a TCP segment carries that the window controller and the rewrite need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub ends: Endpoints,
    pub seq: u32,
    pub ack: u32,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub has_ack: bool,
    /// The 16-bit window field as sent (unscaled).
    pub window: u16,
    /// The window-scale option (SYN and SYN-ACK only, RFC 7323 §2.2).
    pub wscale: Option<u8>,
    /// The MSS option (SYN and SYN-ACK only, RFC 9293 §3.7.1).
    pub mss_option: Option<u16>,
    /// TSval and TSecr (RFC 7323 §3).
    pub timestamps: Option<(u32, u32)>,
    pub payload_len: usize,
    /// Where the TCP header starts in the buffer.
    pub(crate) tcp_at: usize,
}

/// Why a packet is passed on untouched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unreadable {
    /// Not a parseable IP packet: truncated, a bad length or version.
    Malformed,
    /// The IP total length disagrees with the buffer (trailing bytes or a super-packet whose
    /// lengths were not filled in).
    LengthMismatch,
    /// A readable packet that is not a whole TCP segment (UDP, ICMP, an IP fragment).
    NotTcp,
}

/// Read `buf`, one packet starting at its IP header.
pub fn parse(buf: &[u8]) -> Result<Segment, Unreadable> {
    let sliced = SlicedPacket::from_ip(buf).map_err(|_| Unreadable::Malformed)?;
    let (src, dst, ip_len) = match &sliced.net {
        Some(NetSlice::Ipv4(ip)) => {
            let h = ip.header();
            if h.is_fragmenting_payload() {
                return Err(Unreadable::NotTcp);
            }
            (IpAddr::V4(h.source_addr()), IpAddr::V4(h.destination_addr()), h.total_len() as usize)
        }
        Some(NetSlice::Ipv6(ip)) => {
            let h = ip.header();
            if ip.is_payload_fragmented() {
                return Err(Unreadable::NotTcp);
            }
            (IpAddr::V6(h.source_addr()), IpAddr::V6(h.destination_addr()), 40 + h.payload_length() as usize)
        }
        _ => return Err(Unreadable::Malformed),
    };
    if ip_len != buf.len() {
        return Err(Unreadable::LengthMismatch);
    }
    let Some(TransportSlice::Tcp(tcp)) = &sliced.transport else {
        return Err(Unreadable::NotTcp);
    };
    segment(buf, src, dst, tcp, tcp.payload().len())
}

/// Read the first `buf.len()` bytes of a packet `original_len` long, as NFQUEUE hands over a
/// packet copied only in part (a copy range): the headers must be whole, the payload may be
/// cut, and its length comes from the IP header, which must agree with `original_len`. A
/// receive-offload super-packet (GRO) reads as one segment carrying all its payload.
pub fn parse_captured(buf: &[u8], original_len: usize) -> Result<Segment, Unreadable> {
    if buf.len() >= original_len {
        return parse(buf);
    }
    let sliced = LaxSlicedPacket::from_ip(buf).map_err(|_| Unreadable::Malformed)?;
    let (src, dst, ip_len, payload) = match &sliced.net {
        Some(LaxNetSlice::Ipv4(ip)) => {
            let h = ip.header();
            (
                IpAddr::V4(h.source_addr()),
                IpAddr::V4(h.destination_addr()),
                h.total_len() as usize,
                ip.payload(),
            )
        }
        Some(LaxNetSlice::Ipv6(ip)) => {
            let h = ip.header();
            let len = 40 + h.payload_length() as usize;
            (IpAddr::V6(h.source_addr()), IpAddr::V6(h.destination_addr()), len, ip.payload())
        }
        _ => return Err(Unreadable::Malformed),
    };
    if payload.fragmented {
        return Err(Unreadable::NotTcp);
    }
    if ip_len != original_len {
        return Err(Unreadable::LengthMismatch);
    }
    let Some(TransportSlice::Tcp(tcp)) = &sliced.transport else {
        return Err(if sliced.stop_err.is_some() { Unreadable::Malformed } else { Unreadable::NotTcp });
    };
    let tcp_at = tcp.slice().as_ptr() as usize - buf.as_ptr() as usize;
    let payload_len =
        original_len.checked_sub(tcp_at + tcp.header_len()).ok_or(Unreadable::LengthMismatch)?;
    segment(buf, src, dst, tcp, payload_len)
}

fn segment(
    buf: &[u8],
    src: IpAddr,
    dst: IpAddr,
    tcp: &etherparse::TcpSlice<'_>,
    payload_len: usize,
) -> Result<Segment, Unreadable> {
    let mut wscale = None;
    let mut timestamps = None;
    let mut mss_option = None;
    for option in tcp.options_iterator() {
        match option {
            Ok(TcpOptionElement::WindowScale(shift)) => wscale = Some(shift),
            Ok(TcpOptionElement::Timestamp(val, ecr)) => timestamps = Some((val, ecr)),
            Ok(TcpOptionElement::MaximumSegmentSize(mss)) => mss_option = Some(mss),
            Ok(_) => {}
            Err(_) => return Err(Unreadable::Malformed),
        }
    }
    Ok(Segment {
        ends: Endpoints { src, dst, sport: tcp.source_port(), dport: tcp.destination_port() },
        seq: tcp.sequence_number(),
        ack: tcp.acknowledgment_number(),
        syn: tcp.syn(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        has_ack: tcp.ack(),
        window: tcp.window_size(),
        wscale,
        mss_option,
        timestamps,
        payload_len,
        tcp_at: tcp.slice().as_ptr() as usize - buf.as_ptr() as usize,
    })
}

/// Write `window` into the segment `seg` was read from, updating the TCP checksum
/// incrementally (RFC 1624 eq. 3: HC' = ~(~HC + ~m + m')), so no other byte changes.
pub fn set_window(buf: &mut [u8], seg: &Segment, window: u16) {
    let at = seg.tcp_at;
    let old = u16::from_be_bytes([buf[at + WINDOW_AT], buf[at + WINDOW_AT + 1]]);
    let checksum = u16::from_be_bytes([buf[at + CHECKSUM_AT], buf[at + CHECKSUM_AT + 1]]);
    let sum = !checksum as u32 + !old as u32 + window as u32;
    let folded = (sum & 0xffff) + (sum >> 16);
    let folded = (folded & 0xffff) + (folded >> 16);
    buf[at + WINDOW_AT..at + WINDOW_AT + 2].copy_from_slice(&window.to_be_bytes());
    buf[at + CHECKSUM_AT..at + CHECKSUM_AT + 2].copy_from_slice(&(!(folded as u16)).to_be_bytes());
}

#[cfg(test)]
mod tests;
