//! Built packets through the table: rules, several flows at once, unreadable packets, closing.

use ccbench_cc::{ReceivedSegment, ReceiverInfo};
use etherparse::{PacketBuilder, TcpOptionElement};

use super::*;
use crate::packet::parse;

const LOCAL: [u8; 4] = [10, 0, 0, 2];
const SERVER: [u8; 4] = [10, 0, 0, 1];
const MS: Nanos = 1_000_000;

/// A controller that always wants `.0` bytes.
struct Fixed(u64);

impl ReceiveWindowControl for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn on_segment_received(&mut self, _: &ReceiverInfo, _: &ReceivedSegment) {}
    fn window_target(&self) -> Option<u64> {
        Some(self.0)
    }
}

fn table(ports: &[u16]) -> FlowTable {
    let rules = Rules { remote_ports: ports.to_vec(), ..Rules::default() };
    FlowTable::new(rules, 1000 * MS, Box::new(|| Box::new(Fixed(2000)) as Box<dyn ReceiveWindowControl>))
}

/// From this host (port `local`) to the server's `port`, or back when `incoming`.
fn packet(incoming: bool, local: u16, port: u16, syn: bool, rst: bool, payload: usize) -> Vec<u8> {
    let options = [TcpOptionElement::WindowScale(7), TcpOptionElement::Timestamp(10, 10)];
    let (src, dst, sport, dport) =
        if incoming { (SERVER, LOCAL, port, local) } else { (LOCAL, SERVER, local, port) };
    let mut b = PacketBuilder::ipv4(src, dst, 64).tcp(sport, dport, 1000, 65535).ack(1);
    if syn {
        b = b.syn();
    }
    if rst {
        b = b.rst();
    }
    let b = b.options(if syn { &options[..] } else { &options[1..] }).unwrap();
    let mut buf = Vec::new();
    b.write(&mut buf, &vec![0u8; payload]).unwrap();
    buf
}

/// Handshake and one data segment of a download from `port` to local port `local`.
fn open(t: &mut FlowTable, local: u16, port: u16) {
    t.handle(&mut packet(false, local, port, true, false, 0), Direction::Outgoing, MS);
    t.handle(&mut packet(true, local, port, true, false, 0), Direction::Incoming, MS);
    t.handle(&mut packet(true, local, port, false, false, 1000), Direction::Incoming, 2 * MS);
}

fn window_of(buf: &[u8]) -> u16 {
    parse(buf).unwrap().window
}

#[test]
fn only_downloads_the_rules_select_are_rewritten() {
    let mut t = table(&[5201]);
    open(&mut t, 40000, 5201);
    open(&mut t, 40001, 80);
    assert_eq!(t.len(), 1);
    let mut ack = packet(false, 40000, 5201, false, false, 0);
    assert!(t.handle(&mut ack, Direction::Outgoing, 3 * MS));
    assert_eq!(window_of(&ack), 16, "⌈2000 / 128⌉");
    let mut other = packet(false, 40001, 80, false, false, 0);
    let before = other.clone();
    assert!(!t.handle(&mut other, Direction::Outgoing, 3 * MS));
    assert_eq!(other, before);
    assert_eq!((t.counters.rewritten, t.counters.flows_opened), (1, 1));
}

#[test]
fn several_downloads_at_once() {
    let mut t = table(&[]);
    for local in 40000..40010 {
        open(&mut t, local, 5201);
    }
    assert_eq!(t.len(), 10);
    for local in 40000..40010 {
        let mut ack = packet(false, local, 5201, false, false, 0);
        assert!(t.handle(&mut ack, Direction::Outgoing, 3 * MS));
    }
}

#[test]
fn unreadable_packets_pass_untouched_and_are_counted() {
    let mut t = table(&[]);
    for junk in [vec![], vec![0x45; 10], vec![0xff; 60]] {
        let mut buf = junk.clone();
        assert!(!t.handle(&mut buf, Direction::Outgoing, MS));
        assert_eq!(buf, junk);
    }
    assert_eq!((t.counters.unreadable, t.counters.packets), (3, 3));
}

#[test]
fn a_reset_or_silence_ends_tracking() {
    let mut t = table(&[]);
    open(&mut t, 40000, 5201);
    open(&mut t, 40001, 5201);
    t.handle(&mut packet(true, 40000, 5201, false, true, 0), Direction::Incoming, 3 * MS);
    assert_eq!(t.len(), 1);
    t.expire(500 * MS);
    assert_eq!(t.len(), 1, "idle for less than a second");
    t.expire(2000 * MS);
    assert!(t.is_empty());
    assert_eq!(t.counters.flows_closed, 2);
}

/// Whether an IPv4 TCP packet's checksum is right.
fn checksum_ok(buf: &[u8]) -> bool {
    let Ok(sliced) = etherparse::SlicedPacket::from_ip(buf) else { return false };
    let (Some(etherparse::NetSlice::Ipv4(ip)), Some(etherparse::TransportSlice::Tcp(tcp))) =
        (&sliced.net, &sliced.transport)
    else {
        return false;
    };
    let h = ip.header();
    tcp.calc_checksum_ipv4(h.source(), h.destination()).is_ok_and(|c| c == tcp.checksum())
}

/// The daemon's packet path (`inspect`, then `apply` to the whole packet) under 200 000
/// packets of tracked flows run by the real rledbat controller: valid segments, bytes flipped,
/// cut short (whole or as a partial copy), extended (oversized: trailing bytes or a larger
/// `original_len`), and random bytes. Nothing panics, the packet keeps its length, and a
/// rewrite changes only the window and checksum fields, leaving a segment that parses, its
/// checksum as right as it was.
#[test]
fn fuzzed_packets_through_the_packet_path() {
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    let rules = Rules::default();
    let make = || ccbench_cc::build_receiver_control("rledbat", &ccbench_cc::Params::new()).unwrap();
    let mut t = FlowTable::new(rules, 1000 * MS, Box::new(make));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    for local in 40000..40004 {
        open(&mut t, local, 5201);
    }
    let mut rewritten = 0;
    for i in 0..200_000u64 {
        let now = 3 * MS + i * 50_000;
        let local = 40000 + rng.gen_range(0..4u16);
        let incoming = rng.gen_bool(0.5);
        let mut buf =
            packet(incoming, local, 5201, false, rng.gen_bool(0.001), if incoming { 1000 } else { 0 });
        let mut original_len = buf.len();
        match i % 6 {
            0 => {}
            1 => {
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..buf.len());
                    buf[at] = rng.gen();
                }
            }
            2 => {
                buf.truncate(rng.gen_range(0..buf.len()));
                if rng.gen_bool(0.5) {
                    original_len = buf.len(); // else a partial copy of the whole packet
                }
            }
            3 => original_len += rng.gen_range(1..70_000),
            4 => {
                buf.extend((0..rng.gen_range(1..2000)).map(|_| rng.gen::<u8>()));
                original_len = buf.len();
            }
            _ => buf = (0..rng.gen_range(0..200)).map(|_| rng.gen()).collect(),
        }
        let before = buf.clone();
        let dir = if incoming { Direction::Incoming } else { Direction::Outgoing };
        let captured = &before[..before.len().min(original_len)];
        let Some(r) = t.inspect(captured, original_len.max(captured.len()), dir, now) else { continue };
        r.apply(&mut buf);
        rewritten += 1;
        assert_eq!(buf.len(), before.len());
        let seg = parse(&buf).expect("a rewritten packet parses");
        let at = seg.tcp_at;
        let changed: Vec<usize> = (0..buf.len()).filter(|&k| buf[k] != before[k]).collect();
        assert!(changed.iter().all(|&k| (at + 14..at + 18).contains(&k)), "only window and checksum");
        assert_eq!(checksum_ok(&buf), checksum_ok(&before), "a correct checksum stays correct");
        t.fire_timers(now);
    }
    assert!(rewritten > 100, "the controller did cap windows ({rewritten} rewrites)");
    assert!(t.counters.unreadable > 10_000);
}
