//! Hand-built segments (etherparse's builder), then every truncation, trailing bytes and random
//! bytes: nothing panics, nothing unreadable is claimed as a segment.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use etherparse::{PacketBuilder, TcpOptionElement};

use super::*;

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

/// A SYN-ACK with window scale 7 and timestamps, and 100 bytes of data after it.
fn syn_ack() -> Vec<u8> {
    let options = [TcpOptionElement::WindowScale(7), TcpOptionElement::Timestamp(1000, 77)];
    let b = PacketBuilder::ipv4(B, A, 64).tcp(5201, 40000, 9, 65535).syn().ack(1).options(&options).unwrap();
    let mut buf = Vec::new();
    b.write(&mut buf, &[]).unwrap();
    buf
}

/// An ACK (no payload) with timestamps, over IPv4 or IPv6.
fn ack(v6: bool, window: u16) -> Vec<u8> {
    let options = [TcpOptionElement::Noop, TcpOptionElement::Noop, TcpOptionElement::Timestamp(5000, 4990)];
    let mut buf = Vec::new();
    if v6 {
        let (a, b) = ([1u8; 16], [2u8; 16]);
        let p =
            PacketBuilder::ipv6(a, b, 64).tcp(40000, 5201, 1, window).ack(123_456).options(&options).unwrap();
        p.write(&mut buf, &[]).unwrap();
    } else {
        let p =
            PacketBuilder::ipv4(A, B, 64).tcp(40000, 5201, 1, window).ack(123_456).options(&options).unwrap();
        p.write(&mut buf, &[]).unwrap();
    }
    buf
}

fn checksum_ok(buf: &[u8]) -> bool {
    let sliced = SlicedPacket::from_ip(buf).unwrap();
    let Some(TransportSlice::Tcp(tcp)) = &sliced.transport else { panic!("not TCP") };
    let sent = tcp.checksum();
    let computed = match &sliced.net {
        Some(NetSlice::Ipv4(ip)) => {
            let h = ip.header();
            tcp.calc_checksum_ipv4(h.source(), h.destination()).unwrap()
        }
        Some(NetSlice::Ipv6(ip)) => {
            let h = ip.header();
            tcp.calc_checksum_ipv6(h.source(), h.destination()).unwrap()
        }
        _ => panic!("not IP"),
    };
    sent == computed
}

#[test]
fn a_syn_ack_gives_its_window_scale_and_timestamps() {
    let s = parse(&syn_ack()).unwrap();
    assert!(s.syn && s.has_ack && !s.fin && !s.rst);
    assert_eq!((s.seq, s.ack, s.window), (9, 1, 65535));
    assert_eq!((s.wscale, s.timestamps), (Some(7), Some((1000, 77))));
    assert_eq!(s.ends, Endpoints { src: IpAddr::from(B), dst: IpAddr::from(A), sport: 5201, dport: 40000 });
}

#[test]
fn an_ack_over_ipv4_and_ipv6() {
    for v6 in [false, true] {
        let s = parse(&ack(v6, 3000)).unwrap();
        assert_eq!((s.ack, s.window, s.wscale, s.payload_len), (123_456, 3000, None, 0));
        assert_eq!(s.timestamps, Some((5000, 4990)));
        assert_eq!(s.ends.src.is_ipv6(), v6);
    }
}

/// The incremental update gives the checksum a full recomputation gives, for windows across
/// the range (carries and the 0xffff/0 edge of one's-complement included), and touches only
/// the window and checksum bytes.
#[test]
fn set_window_keeps_the_checksum_valid_and_touches_nothing_else() {
    for v6 in [false, true] {
        for (from, to) in [(3000, 1500), (65535, 0), (0, 65535), (1, 2), (40000, 40000), (0x8000, 0x7fff)] {
            let mut buf = ack(v6, from);
            let before = buf.clone();
            let s = parse(&buf).unwrap();
            set_window(&mut buf, &s, to);
            assert!(checksum_ok(&buf), "v6 {v6}: {from} -> {to}");
            assert_eq!(parse(&buf).unwrap().window, to);
            let changed: Vec<usize> = (0..buf.len()).filter(|&i| buf[i] != before[i]).collect();
            let tcp = s.tcp_at;
            let allowed = [tcp + 14, tcp + 15, tcp + 16, tcp + 17];
            assert!(changed.iter().all(|i| allowed.contains(i)), "{changed:?}");
        }
    }
}

#[test]
fn every_truncation_and_trailing_bytes_are_unreadable() {
    for full in [syn_ack(), ack(false, 100), ack(true, 100)] {
        for len in 0..full.len() {
            assert!(parse(&full[..len]).is_err(), "{len} of {} bytes", full.len());
        }
        let mut longer = full.clone();
        longer.extend_from_slice(&[0; 7]);
        assert_eq!(parse(&longer), Err(Unreadable::LengthMismatch));
    }
}

#[test]
fn udp_and_fragments_are_not_segments() {
    let mut buf = Vec::new();
    PacketBuilder::ipv4(A, B, 64).udp(1, 2).write(&mut buf, &[0; 20]).unwrap();
    assert_eq!(parse(&buf), Err(Unreadable::NotTcp));
    let mut frag = ack(false, 100);
    frag[6] |= 0x20; // more fragments
    assert!(parse(&frag).is_err());
}

/// Random and mutated packets, oversized ones included: parsing never panics, and when it
/// reads a segment the rewrite keeps its checksum consistent.
#[test]
fn fuzzed_packets_never_panic() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let seeds = [syn_ack(), ack(false, 100), ack(true, 100)];
    for i in 0..200_000 {
        let mut buf = if i % 2 == 0 {
            let len = rng.gen_range(0..if i % 10 == 0 { 70_000 } else { 120 });
            (0..len).map(|_| rng.gen()).collect::<Vec<u8>>()
        } else {
            let mut b = seeds[i % 3].clone();
            for _ in 0..rng.gen_range(1..4) {
                let at = rng.gen_range(0..b.len());
                b[at] = rng.gen();
            }
            b
        };
        if let Ok(s) = parse(&buf) {
            set_window(&mut buf, &s, rng.gen());
            assert!(parse(&buf).is_ok());
        }
    }
}

/// NFQUEUE's header-only copies: the payload length comes from the IP header, which must
/// agree with the packet's real length; a 64 KB receive-offload super-packet reads as one
/// segment carrying all of it, for IPv4 and IPv6.
#[test]
fn a_partial_copy_reads_its_headers_and_the_real_length() {
    for v6 in [false, true] {
        let b = if v6 {
            PacketBuilder::ipv6([1; 16], [2; 16], 64)
        } else {
            PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        };
        let b = b.tcp(5201, 40000, 9, 500).ack(1).options(&[TcpOptionElement::Timestamp(3, 4)]).unwrap();
        let mut whole = Vec::new();
        b.write(&mut whole, &vec![7u8; 60_000]).unwrap();
        let seg = parse_captured(&whole[..256], whole.len()).unwrap();
        assert_eq!((seg.payload_len, seg.timestamps, seg.seq), (60_000, Some((3, 4)), 9));
        assert_eq!(parse(&whole).unwrap(), seg);
        assert_eq!(parse_captured(&whole[..256], whole.len() + 1), Err(Unreadable::LengthMismatch));
        assert!(parse_captured(&whole[..30], whole.len()).is_err(), "a header cut short");
    }
}
