use ccbench_aqm::{DropTail, Ecn, Limit};

use super::*;
use crate::rng::{link_streams, stream};

const MS: Nanos = 1_000_000;
const US: Nanos = 1_000;

/// A packet that is only its size and a sequence number.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pkt {
    seq: u64,
    bytes: u32,
}

impl QueuedPacket for Pkt {
    fn wire_bytes(&self) -> u32 {
        self.bytes
    }
    fn ecn(&self) -> Ecn {
        Ecn::NotEct
    }
    fn set_ecn(&mut self, _: Ecn) {}
}

/// A clock-driven driver's hooks: it polls, so wake-ups need no action.
#[derive(Default)]
struct Polling {
    lost: u64,
}

impl Hooks<Pkt> for Polling {
    fn wake_transmitter(&mut self, _: Nanos) {}
    fn wake_arrival(&mut self, _: Nanos) {}
    fn loss(&mut self, _: Nanos, _: &Pkt, _: Nanos) {
        self.lost += 1;
    }
}

fn link(rate: f64, delay: Nanos, jitter: Nanos) -> Link<Pkt> {
    let queue = Box::new(DropTail::new(Limit::Packets(1000)));
    Link::new("l".into(), rate, delay, jitter, 0.0, queue, link_streams(7, 0))
}

/// Offer `packets` as (time, bytes), then run the link to the end: (arrival time, seq) of each.
fn run(link: &mut Link<Pkt>, packets: &[(Nanos, u32)]) -> Vec<(Nanos, u64)> {
    let (mut hooks, mut out) = (Polling::default(), Vec::new());
    for (seq, &(t, bytes)) in packets.iter().enumerate() {
        link.advance(t, &mut hooks, &mut out);
        link.offer(Pkt { seq: seq as u64, bytes }, t, &mut hooks);
    }
    while let Some(t) = link.next_event() {
        link.advance(t, &mut hooks, &mut out);
    }
    out.iter().map(|(t, p)| (*t, p.seq)).collect()
}

#[test]
fn jitter_reorders_only_when_asked_and_loses_nothing() {
    for reorder in [false, true] {
        let mut l = link(f64::INFINITY, 10 * MS, 5 * MS);
        l.set_reorder(reorder);
        let offered: Vec<(Nanos, u32)> = (0..200).map(|k| (k * MS / 10, 1500)).collect();
        let got = run(&mut l, &offered);
        assert_eq!(got.len(), 200, "every packet arrives once");
        assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "arrivals in time order");
        let mut seqs: Vec<u64> = got.iter().map(|&(_, s)| s).collect();
        let in_order = seqs.windows(2).all(|w| w[0] < w[1]);
        assert_eq!(in_order, !reorder, "reorder = {reorder}");
        seqs.sort_unstable();
        assert_eq!(seqs, (0..200).collect::<Vec<_>>());
    }
}

/// With a rate spread of 3, each transmission takes between size/(3 · rate) and size/rate.
#[test]
fn service_rates_lie_between_rate_and_rate_max() {
    let mut l = link(10e6, 0, 0);
    l.set_rate_spread(3.0, stream(7, "link-rate", 0));
    let times: Vec<Nanos> = (0..1000).map(|_| l.send(0, 1500)).collect();
    assert!(times.iter().all(|&t| (400_000..=1_200_000).contains(&t)), "1500 B at 10..30 Mbit/s");
    let mean = times.iter().sum::<Nanos>() as f64 / 1000.0;
    // E[1/U] over U(10, 30) Mbit/s: 1500·8·ln(3)/20e6 s = 659 µs.
    assert!((mean / 659_167.0 - 1.0).abs() < 0.03, "mean {mean} ns");
}

/// A 10 Mbit/s token bucket of 15,000 B on a 1 Gbit/s interface, 20 packets of 1,500 B offered
/// at once. The full bucket lets 10 leave back to back at line rate (12 µs each); the 11th
/// waits for the tokens it lacks: 15,000 − 10·1,500 + 120 µs · 1.25 B/µs = 150 B held, 1,350 B
/// missing, 1,080 µs; it starts at 1,200 µs and is out at 1,212 µs. From then on one packet
/// every 1.2 ms: the token rate.
#[test]
fn a_token_bucket_sends_its_burst_at_line_rate_then_paces_at_its_rate() {
    let mut l = link(10e6, 0, 0);
    l.set_token_bucket(15_000, 1e9);
    let got: Vec<Nanos> = run(&mut l, &[(0, 1500); 20]).iter().map(|&(t, _)| t).collect();
    let mut want: Vec<Nanos> = (1..=10).map(|k| k * 12 * US).collect();
    want.extend((0..10).map(|k| 1_212 * US + k * 1_200 * US));
    assert_eq!(got, want);
}

/// mahimahi's link on a trace of one opportunity at 2, 4, 6 and 8 ms (period 8 ms), 5 ms of
/// propagation. Three 1,500 B packets at 0 leave at 2, 4 and 6 ms; three 500 B packets at
/// 9 ms share the opportunity at 10 ms; a 3,000 B packet at 11 ms spans 12 and 14 ms. The
/// transmitter is engaged from each packet's offer until its last opportunity.
#[test]
fn a_trace_driven_link_delivers_on_its_opportunities() {
    let trace = Arc::new(DeliveryTrace::parse("2\n4\n6\n8\n").unwrap());
    let mut l = link(1e6, 5 * MS, 0);
    l.set_delivery_trace(trace);
    assert!((l.rate() - 4.0 * 1504.0 * 8.0 / 0.008).abs() < 1e-6, "the trace's mean rate");
    let offered =
        [(0, 1500), (0, 1500), (0, 1500), (9 * MS, 500), (9 * MS, 500), (9 * MS, 500), (11 * MS, 3000)];
    let got: Vec<Nanos> = run(&mut l, &offered).iter().map(|&(t, _)| t / US).collect();
    assert_eq!(got, [7_000, 9_000, 11_000, 15_000, 15_000, 15_000, 19_000]);
    assert_eq!(l.busy_until(20 * MS), (6 + 1 + 3) * MS);
    assert_eq!(l.counters.departures, 7);
}

/// The queue discipline still decides: a 2-packet drop-tail buffer behind a slow trace drops
/// what does not fit, and the hooks hear of each loss.
#[test]
fn a_trace_driven_link_overflows_its_queue() {
    let queue = Box::new(DropTail::new(Limit::Packets(2)));
    let mut l = Link::new("l".into(), 1e6, 0, 0, 0.0, queue, link_streams(7, 0));
    l.set_delivery_trace(Arc::new(DeliveryTrace::parse("100\n").unwrap()));
    let (mut hooks, mut out) = (Polling::default(), Vec::new());
    for seq in 0..5 {
        l.offer(Pkt { seq, bytes: 1500 }, 0, &mut hooks);
    }
    // The head waits in the queue for the opportunity at 100 ms (as in mahimahi), so the
    // buffer holds it and one more: three are dropped. The second packet takes the 4 B the
    // first left and the opportunity at 200 ms.
    assert_eq!((l.counters.overflow_drops, hooks.lost), (3, 3));
    l.advance(400 * MS, &mut hooks, &mut out);
    assert_eq!(out.iter().map(|(t, p)| (t / MS, p.seq)).collect::<Vec<_>>(), [(100, 0), (200, 1)]);
}
