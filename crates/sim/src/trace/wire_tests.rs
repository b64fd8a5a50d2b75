//! Byte layout of hand-built packets: offsets, lengths, checksums, options.

use super::*;

/// Flow 2 of 5, from node 0 to node 3, with the default TCP options (64 MB buffer: scale 11).
fn tcp_flow() -> FlowWire {
    FlowWire {
        sender: host_address(0),
        receiver: host_address(3),
        flow: 2,
        flows: 5,
        tcp: Some(TcpWire { timestamps: true, sack: true, mss_option: 1460, wscale: 11, rcv_buf: 64 << 20 }),
    }
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// IPv4 header fields every packet shares, and both checksums verify (a header whose
/// checksum is right sums to 0xffff, so `checksum` of it is 0).
fn check_common(b: &[u8], total: u32, proto: u8, src: [u8; 4], dst: [u8; 4]) {
    assert_eq!(b[0], 0x45, "IPv4, 20-byte header");
    assert_eq!(u16_at(b, 2) as u32, total, "total length");
    assert_eq!(b[9], proto);
    assert_eq!(&b[12..16], &src);
    assert_eq!(&b[16..20], &dst);
    assert_eq!(checksum(0, &b[..20]), 0, "IP header checksum");
    let l4 = total as usize - 20;
    assert_eq!(checksum(pseudo_header_sum(&src, &dst, proto, l4), &b[20..]), 0, "L4 checksum (zero payload)");
}

fn tcp_header_len(b: &[u8]) -> usize {
    (b[20 + 12] >> 4) as usize * 4
}

#[test]
fn syn_carries_mss_sack_permitted_timestamps_and_window_scale() {
    let w = tcp_flow();
    let mut p = Packet::new(2, Kind::Syn, 60, 0);
    (p.tsval, p.ece, p.cwr) = (1234, true, true);
    let mut b = Vec::new();
    let total = encode(&p, &w, &mut b);
    assert_eq!((total, b.len()), (60, 60), "52 + 8 bytes on the wire, all of it headers");
    check_common(&b, 60, 6, [10, 0, 0, 1], [10, 0, 0, 4]);
    assert_eq!(b[1], 0, "a SYN is Not-ECT");
    assert_eq!((u16_at(&b, 20), u16_at(&b, 22)), (40_002, 10_002), "ports");
    assert_eq!(u32_at(&b, 24), isn(2, 0, false), "seq = ISN");
    assert_eq!(tcp_header_len(&b), 40);
    assert_eq!(b[33], SYN | ECE | CWR, "ECN-setup SYN");
    assert_eq!(u16_at(&b, 34), 65_535, "SYN window unscaled, capped");
    let opts = &b[40..60];
    assert_eq!(&opts[..4], &[2, 4, 0x05, 0xb4], "MSS 1460");
    assert_eq!(&opts[4..6], &[4, 2], "SACK permitted");
    assert_eq!(&opts[6..8], &[8, 10], "timestamps");
    assert_eq!((u32_at(opts, 8), u32_at(opts, 12)), (1234, 0), "TSval, TSecr");
    assert_eq!(&opts[16..], &[1, 3, 3, 11], "NOP, window scale 11");
}

#[test]
fn syn_ack_acknowledges_the_syn_and_echoes_its_timestamp() {
    let w = tcp_flow();
    let mut p = Packet::new(2, Kind::SynAck, 60, 0);
    (p.tsval, p.tsecr, p.window) = (7, 1234, 65_535);
    let mut b = Vec::new();
    encode(&p, &w, &mut b);
    check_common(&b, 60, 6, [10, 0, 0, 4], [10, 0, 0, 1]);
    assert_eq!((u16_at(&b, 20), u16_at(&b, 22)), (10_002, 40_002));
    assert_eq!(u32_at(&b, 24), isn(2, 0, true));
    assert_eq!(u32_at(&b, 28), isn(2, 0, false).wrapping_add(1), "the SYN consumed one number");
    assert_eq!(b[33], SYN | ACK);
    assert_eq!((u32_at(&b, 48), u32_at(&b, 52)), (7, 1234));
}

#[test]
fn data_segment_maps_byte_offsets_past_the_isn_and_keeps_ecn() {
    let w = tcp_flow();
    let mut p = Packet::new(2, Kind::Data, 1448 + 52, 0);
    (p.seq, p.len, p.ecn, p.cwr, p.tsval, p.tsecr) = (5 * 1448, 1448, Ecn::Ect0, true, 99, 98);
    let mut b = Vec::new();
    let total = encode(&p, &w, &mut b);
    assert_eq!((total, b.len()), (1500, 52), "wire size in the IP header, headers captured");
    check_common(&b, 1500, 6, [10, 0, 0, 1], [10, 0, 0, 4]);
    assert_eq!(b[1] & 3, 2, "ECT(0)");
    assert_eq!(u32_at(&b, 24), isn(2, 0, false).wrapping_add(1 + 5 * 1448));
    assert_eq!(u32_at(&b, 28), isn(2, 0, true).wrapping_add(1));
    assert_eq!(b[33], ACK | CWR);
    assert_eq!(tcp_header_len(&b), 32);
    assert_eq!(u16_at(&b, 34), 32_768, "64 MB >> 11");
    assert_eq!(&b[40..44], &[1, 1, 8, 10]);
    assert_eq!((u32_at(&b, 44), u32_at(&b, 48)), (99, 98));
}

#[test]
fn sack_ack_lists_its_blocks_in_wire_sequence_numbers() {
    let w = tcp_flow();
    let mut p = Packet::new(2, Kind::Ack, 52 + 4 + 16, 0);
    p.ack = 1448;
    p.sack[..2].copy_from_slice(&[(4 * 1448, 6 * 1448), (2 * 1448, 3 * 1448)]);
    (p.sack_count, p.window, p.ece, p.ecn) = (2, 3 << 11, true, Ecn::Ce);
    let mut b = Vec::new();
    let total = encode(&p, &w, &mut b);
    assert_eq!((total, b.len()), (72, 72));
    check_common(&b, 72, 6, [10, 0, 0, 4], [10, 0, 0, 1]);
    assert_eq!(b[1] & 3, 3, "CE");
    let byte = |x: u64| isn(2, 0, false).wrapping_add(1 + x as u32);
    assert_eq!(u32_at(&b, 28), byte(1448), "cumulative ACK");
    assert_eq!(b[33], ACK | ECE);
    assert_eq!(u16_at(&b, 34), 3, "window >> scale");
    assert_eq!(tcp_header_len(&b), 52);
    let opts = &b[40..72];
    assert_eq!(&opts[..4], &[1, 1, 8, 10]);
    assert_eq!(&opts[12..16], &[1, 1, 5, 18], "NOP, NOP, SACK of 2 blocks");
    let blocks: Vec<u32> = (0..4).map(|k| u32_at(opts, 16 + 4 * k)).collect();
    assert_eq!(blocks, vec![byte(4 * 1448), byte(6 * 1448), byte(2 * 1448), byte(3 * 1448)]);
}

#[test]
fn header_bytes_beyond_the_options_are_nop_padding() {
    let mut w = tcp_flow();
    w.tcp.as_mut().unwrap().timestamps = false;
    let p = Packet { seq: 0, len: 1000, ..Packet::new(2, Kind::Data, 1052, 0) };
    let mut b = Vec::new();
    assert_eq!(encode(&p, &w, &mut b), 1052);
    assert_eq!(tcp_header_len(&b), 32);
    assert!(b[40..52].iter().all(|&x| x == 1), "NOPs");
    check_common(&b, 1052, 6, [10, 0, 0, 1], [10, 0, 0, 4]);
}

#[test]
fn cbr_datagram_is_udp_of_its_wire_size() {
    let w = FlowWire { tcp: None, ..tcp_flow() };
    let p = Packet { len: 160, ..Packet::new(2, Kind::Datagram, 188, 0) };
    let mut b = Vec::new();
    assert_eq!(encode(&p, &w, &mut b), 188);
    assert_eq!(b.len(), 28);
    check_common(&b, 188, 17, [10, 0, 0, 1], [10, 0, 0, 4]);
    assert_eq!((u16_at(&b, 20), u16_at(&b, 22), u16_at(&b, 24)), (40_002, 10_002, 168));
}

#[test]
fn fresh_connections_get_fresh_ports_and_isns() {
    let w = tcp_flow();
    assert_ne!(w.sender_port(0), w.sender_port(1));
    assert_ne!(isn(2, 0, false), isn(2, 1, false));
    assert_ne!(isn(2, 0, false), isn(2, 0, true));
    assert_eq!(host_address(256), [10, 0, 1, 1]);
}
