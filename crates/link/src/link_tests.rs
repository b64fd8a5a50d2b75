use ccbench_aqm::{DequeueSink, DropTail, Ecn, Enqueued, Limit, QueueDisc};

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
    fn flow_id(&self) -> u64 {
        0
    }
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

/// An event-driven driver, as the simulator is: wake-ups go into a time-ordered list, ties in
/// the order they were asked for; it counts the transmitter wake-ups it was asked for.
#[derive(Default)]
struct EventDriven {
    wakes: std::collections::BTreeSet<(Nanos, u64, bool)>,
    asked: u64,
    transmitter_wakes: u64,
}

impl Hooks<Pkt> for EventDriven {
    fn wake_transmitter(&mut self, at: Nanos) {
        self.transmitter_wakes += 1;
        self.asked += 1;
        self.wakes.insert((at, self.asked, true));
    }
    fn wake_arrival(&mut self, at: Nanos) {
        self.asked += 1;
        self.wakes.insert((at, self.asked, false));
    }
}

/// Offer `packets` (time, bytes) and deliver on the wake-ups alone, changing the delay to
/// `change.1` at `change.0`: (arrival time, seq) of each, and the transmitter wake-ups asked.
fn run_on_events(
    l: &mut Link<Pkt>,
    packets: &[(Nanos, u32)],
    change: (Nanos, Nanos),
) -> (Vec<(Nanos, u64)>, u64) {
    let (mut d, mut out) = (EventDriven::default(), Vec::new());
    let mut offers = packets.iter().enumerate().peekable();
    let mut changed = false;
    loop {
        let next_wake = d.wakes.first().map(|w| w.0).unwrap_or(Nanos::MAX);
        let next_offer = offers.peek().map(|(_, p)| p.0).unwrap_or(Nanos::MAX);
        if !changed && change.0 <= next_wake.min(next_offer) {
            changed = true;
            l.run_until(change.0 - 1, &mut d);
            l.set_delay(change.1, &mut d);
        } else if next_offer <= next_wake && next_offer < Nanos::MAX {
            let (seq, &(t, bytes)) = offers.next().unwrap();
            l.offer(Pkt { seq: seq as u64, bytes }, t, &mut d);
        } else if let Some((t, _, transmitter)) = d.wakes.pop_first() {
            if transmitter {
                l.run_until(t, &mut d);
            } else if let Some(p) = l.arrive(t, &mut d) {
                out.push((t, p.seq));
            }
        } else {
            return (out, d.transmitter_wakes);
        }
    }
}

/// A drop-tail queue that claims to drop at its head, so that a link keeps its transmitter's
/// wake-ups: the reference a link sending ahead must agree with.
struct HeadDropping(DropTail<Pkt>);

impl QueueDisc<Pkt> for HeadDropping {
    fn name(&self) -> &'static str {
        "head-dropping"
    }
    fn enqueue(&mut self, pkt: Pkt, now: Nanos) -> Enqueued<Pkt> {
        self.0.enqueue(pkt, now)
    }
    fn dequeue(&mut self, now: Nanos, sink: &mut dyn DequeueSink<Pkt>) -> Option<ccbench_aqm::Dequeued<Pkt>> {
        self.0.dequeue(now, sink)
    }
    fn len_packets(&self) -> usize {
        self.0.len_packets()
    }
    fn len_bytes(&self) -> u64 {
        self.0.len_bytes()
    }
    fn drops_at_dequeue(&self) -> bool {
        true
    }
}

/// A drop-tail link sends each packet ahead when its transmission starts and asks for no
/// transmitter wake-up, yet delivers every packet when a link that keeps its wake-ups does,
/// with the same counters, through a change of the delay from 10 to 3 ms at 7.5 ms in the
/// middle of a transmission: 20 packets of 1,500 B offered 0.5 ms apart at 10 Mbit/s (1.2 ms
/// each), so a queue builds.
#[test]
fn a_link_sending_ahead_delivers_as_one_that_waits_for_its_wake_ups() {
    let offered: Vec<(Nanos, u32)> = (0..20).map(|k| (k * MS / 2, 1500)).collect();
    let change = (7_500 * US, 3 * MS);
    let mut ahead = link(10e6, 10 * MS, 0);
    let (got, wakes) = run_on_events(&mut ahead, &offered, change);
    let queue = Box::new(HeadDropping(DropTail::new(Limit::Packets(1000))));
    let mut waiting = Link::new("l".into(), 10e6, 10 * MS, 0, 0.0, queue, link_streams(7, 0));
    let (want, waiting_wakes) = run_on_events(&mut waiting, &offered, change);
    assert_eq!((wakes, waiting_wakes), (0, 20));
    assert_eq!(got, want);
    // The 6th packet is out at 7.2 ms, before the change (17.2 ms); the 7th at 8.4 ms, after
    // it, and it may not pass the 6th; from the 12th on, 3 ms after each transmission's end.
    assert_eq!(&got[5..7], [(17_200 * US, 5), (17_200 * US, 6)]);
    assert_eq!(got[11], (17_400 * US, 11));
    let c = (ahead.counters.departures, ahead.busy_until(30 * MS), ahead.queue_integrals(30 * MS));
    let w = (waiting.counters.departures, waiting.busy_until(30 * MS), waiting.queue_integrals(30 * MS));
    assert_eq!(c, w);
    assert_eq!(c.0, 20);
}

/// The backlog the link keeps from the queue's outcomes is the queue's own throughout, with a
/// CoDel queue that drops at its head and a small buffer that overflows: 3,000 packets of
/// 1,500 B offered at twice the 10 Mbit/s rate.
#[test]
fn the_backlog_kept_by_the_link_is_the_queues_own() {
    let config = ccbench_aqm::QueueConfig { limit: Limit::Packets(100), ecn: false, seed: 1 };
    let queue = Box::new(ccbench_aqm::CoDel::new(config, ccbench_aqm::CoDelConfig::default()));
    let mut l = Link::new("l".into(), 10e6, 5 * MS, 0, 0.0, queue, link_streams(7, 0));
    let (mut hooks, mut out) = (Polling::default(), Vec::new());
    for seq in 0..3000 {
        let t = seq * 600 * US;
        l.advance(t, &mut hooks, &mut out);
        l.offer(Pkt { seq, bytes: 1500 }, t, &mut hooks);
        l.check_backlog().unwrap();
    }
    let c = l.counters;
    assert!(c.aqm_drops > 0 && c.overflow_drops > 0, "{c:?}");
    assert_eq!(l.backlog(), (l.queue.len_bytes(), l.queue.len_packets()));
}
