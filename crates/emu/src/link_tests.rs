//! The link model on a virtual clock.

use super::*;
use crate::ip::tests::udp_packet;
use ccbench_aqm::{DropTail, Limit};
use ccbench_scenario::rng::link_streams;

const MS: Nanos = 1_000_000;

fn link(rate: f64, delay: Nanos, jitter: Nanos, loss: f64, limit: u64) -> Link {
    let q = Box::new(DropTail::new(Limit::Packets(limit)));
    Link::new("l".into(), rate, delay, jitter, loss, q, link_streams(7, 0))
}

/// Packet of `size` bytes whose IP identification field carries `seq`.
fn pkt(size: usize, seq: u16) -> IpPacket {
    let mut b = udp_packet(size, 0).as_bytes().to_vec();
    b[4..6].copy_from_slice(&seq.to_be_bytes());
    IpPacket::parse(b).unwrap()
}

fn seq(p: &IpPacket) -> u16 {
    u16::from_be_bytes([p.as_bytes()[4], p.as_bytes()[5]])
}

/// Step the clock from event to event until the link is empty.
fn drain(l: &mut Link) -> Vec<(Nanos, IpPacket)> {
    let mut out = Vec::new();
    for _ in 0..1_000_000 {
        match l.next_event() {
            Some(t) => l.poll(t, &mut out),
            None => break,
        }
    }
    assert_eq!(l.packets_held(), 0);
    out
}

#[test]
fn backlog_drains_at_exactly_the_rate() {
    let mut l = link(10e6, 0, 0, 0.0, 1000);
    for i in 0..100 {
        l.offer(pkt(1500, i), 0);
    }
    let out = drain(&mut l);
    assert_eq!(out.len(), 100);
    for (k, (at, p)) in out.iter().enumerate() {
        assert_eq!(*at, (k as u64 + 1) * 1_200_000, "1500 B at 10 Mbps is 1.2 ms");
        assert_eq!(seq(p), k as u16);
    }
    assert_eq!(l.counters.busy_ns, 120 * MS);
    assert_eq!(l.counters.bytes_departed, 150_000);
}

#[test]
fn delay_adds_to_serialisation() {
    let mut l = link(10e6, 20 * MS, 0, 0.0, 100);
    l.offer(pkt(1500, 0), 5 * MS);
    assert_eq!(l.next_event(), Some(5 * MS + 1_200_000), "transmission end first");
    let out = drain(&mut l);
    assert_eq!(out[0].0, 5 * MS + 1_200_000 + 20 * MS);
}

#[test]
fn late_polls_delay_delivery_but_keep_the_rate() {
    let mut l = link(10e6, 20 * MS, 0, 0.0, 100);
    for i in 0..10 {
        l.offer(pkt(1500, i), 0);
    }
    let mut out = Vec::new();
    l.poll(1000 * MS, &mut out);
    let times: Vec<Nanos> = out.iter().map(|o| o.0).collect();
    let want: Vec<Nanos> = (1..=10).map(|k| k * 1_200_000 + 20 * MS).collect();
    assert_eq!(times, want);
}

#[test]
fn jitter_never_reorders() {
    let mut l = link(10e6, 5 * MS, 10 * MS, 0.0, 10_000);
    for i in 0..2000u16 {
        l.offer(pkt(200 + (i as usize % 7) * 150, i), i as u64 * 100_000);
    }
    let out = drain(&mut l);
    assert_eq!(out.len(), 2000);
    let mut spread = (u64::MAX, 0);
    for (k, w) in out.windows(2).enumerate() {
        assert!(w[0].0 <= w[1].0, "arrival times never go back");
        assert_eq!(seq(&w[1].1), k as u16 + 1, "FIFO order");
    }
    for (k, (at, _)) in out.iter().enumerate() {
        let offered = k as u64 * 100_000;
        spread = (spread.0.min(at - offered), spread.1.max(at - offered));
    }
    assert!(spread.0 >= 5 * MS, "never earlier than the propagation delay");
    assert!(spread.1 - spread.0 > 8 * MS, "jitter does spread arrivals: {spread:?}");
}

#[test]
fn loss_probability() {
    let mut l = link(f64::INFINITY, 0, 0, 0.1, 10);
    for i in 0..20_000u32 {
        l.offer(pkt(100, i as u16), i as u64);
    }
    let lost = l.counters.random_losses;
    // Binomial(20000, 0.1): sd ≈ 42; 5 sd either way.
    assert!((1790..=2210).contains(&lost), "lost {lost}");
    assert_eq!(drain(&mut l).len() as u64, 20_000 - lost);
    assert_eq!(l.counters.arrivals, 20_000);
}

#[test]
fn droptail_overflow() {
    let mut l = link(10e6, 0, 0, 0.0, 10);
    for i in 0..20 {
        l.offer(pkt(1500, i), 0);
    }
    // One on the wire, ten queued, nine over the limit.
    assert_eq!(l.counters.overflow_drops, 9);
    assert_eq!(drain(&mut l).len(), 11);
}

#[test]
fn sojourn_samples_follow_the_queue() {
    let mut l = link(10e6, 0, 0, 0.0, 100);
    l.measure_sojourn = true;
    for i in 0..3 {
        l.offer(pkt(1500, i), 0);
    }
    drain(&mut l);
    let s: Vec<Nanos> = l.sojourn.iter().map(|s| s.sojourn).collect();
    assert_eq!(s, vec![0, 1_200_000, 2_400_000]);
    assert_eq!(l.sojourn[1].flow.dport, 2000);
}

#[test]
fn from_spec_rejects_an_unknown_queue() {
    let text =
        "duration = \"1s\"\n[bottleneck]\nrate = \"10Mbps\"\nrtt = \"40ms\"\n[[flows]]\ncca = \"cubic\"\n";
    let sc = ccbench_scenario::parse_str(text, "t", &[], None).unwrap();
    let mut spec = sc.topology.links[0].clone();
    assert!(Link::from_spec(&spec, 1, 0).is_ok());
    spec.aqm = "nosuchqueue".into();
    let err = Link::from_spec(&spec, 1, 0).err().unwrap();
    assert!(err.contains("bottleneck"), "{err}");
}
