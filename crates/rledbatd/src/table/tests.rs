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
