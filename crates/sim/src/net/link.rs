//! A unidirectional link: an egress queue (any [`QueueDisc`]), a transmitter serialising one
//! packet at a time at the link rate, and a propagation pipe. Optional Bernoulli loss before the
//! queue, a per-packet service rate drawn from `[rate, rate · spread]`, and per-packet jitter.
//! By default jitter never reorders (arrival times are kept non-decreasing, so the pipe stays a
//! FIFO and one pending `Arrive` event per link suffices); with `reorder` each packet's delay is
//! independent, the pipe is kept sorted by arrival time, and a packet that overtakes the head
//! schedules an `Arrive` of its own (an `Arrive` that finds nothing due is a no-op).

use std::collections::VecDeque;

use ccbench_aqm::{DequeueSink, DropReason, Enqueued, Nanos, QueueDisc};

use crate::engine::{Event, EventQueue};
use crate::metrics::Quantiles;
use crate::packet::Packet;
use crate::rng::{unit, SimRng};
use crate::trace::Capture;

/// Counters of one link. Cumulative since time zero; the metrics layer takes differences.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    pub arrivals: u64,
    pub departures: u64,
    pub bytes_departed: u64,
    pub overflow_drops: u64,
    pub aqm_drops: u64,
    pub ecn_marks: u64,
    pub random_losses: u64,
    /// Nanoseconds spent transmitting, for completed transmissions.
    pub busy_ns: u64,
    /// Integral of queue bytes over time (byte·ns) and of queue packets (packet·ns).
    pub queue_byte_ns: u128,
    pub queue_pkt_ns: u128,
}

impl LinkCounters {
    pub fn drops(&self) -> u64 {
        self.overflow_drops + self.aqm_drops
    }
}

/// What a link reports as packets leave its queue or are lost; the metrics layer listens, so
/// the link keeps no per-packet log.
pub trait LinkObserver {
    /// A packet leaves the queue of `link` after waiting `sojourn` (links that measure it only).
    fn sojourn(&mut self, link: u32, now: Nanos, pkt: &Packet, sojourn: Nanos);
    /// A packet of `flow` is dropped or lost at `link`, meeting `queue_delay` of queueing: its
    /// sojourn when the AQM dropped it at the head, else the backlog it met. The SIAD thesis
    /// groups losses within 2 × the RTT *including* this queueing (§4.1.2, L2139).
    fn loss(&mut self, link: u32, now: Nanos, flow: u32, queue_delay: Nanos);
}

pub struct Link {
    pub name: String,
    /// Bits per second; `f64::INFINITY` means no serialisation and no queue.
    rate: f64,
    delay: Nanos,
    jitter: Nanos,
    loss: f64,
    queue: Box<dyn QueueDisc<Packet>>,
    transmitting: Option<(Packet, Nanos)>,
    pipe: VecDeque<(Nanos, Packet)>,
    last_arrival: Nanos,
    last_queue_change: Nanos,
    loss_rng: SimRng,
    jitter_rng: SimRng,
    pub counters: LinkCounters,
    /// Record sojourn times of departing packets.
    pub measure_sojourn: bool,
    /// Backlog (packets) at each AQM congestion signal (mark or AQM drop) from `window_start`
    /// on: the largest queue the AQM let build in a cycle, the `b` of the ABE paper's model (L149).
    pub signal_backlogs: Quantiles,
    /// When the measurement window opens (the scenario's warm-up).
    pub window_start: Nanos,
    /// Drops and random losses per flow.
    losses: Vec<u64>,
    /// The least backlog (bytes, packets) since [`Link::reset_min_backlog`].
    min_backlog: (u64, usize),
    /// Largest over smallest per-packet service rate (1 = a constant rate).
    rate_spread: f64,
    rate_rng: Option<SimRng>,
    /// Jitter may reorder packets.
    reorder: bool,
    /// A token-bucket shaper (`burst`), or None: packets leave at `rate` back to back.
    bucket: Option<Bucket>,
    /// Pcap trace of every packet offered (`output.pcap`); None costs one branch per packet.
    pub capture: Option<Capture>,
}

/// A token bucket's state ([`crate::scenario::TokenBucket`]): `tokens` bytes at time `at`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    burst: f64,
    line_rate: f64,
    tokens: f64,
    at: Nanos,
}

/// Where a link counts a lost packet: per flow, and to the observer with its time and queueing.
struct LossCount<'a> {
    id: u32,
    losses: &'a mut Vec<u64>,
    obs: &'a mut dyn LinkObserver,
}

impl LossCount<'_> {
    fn count(&mut self, flow: u32, now: Nanos, queue_delay: Nanos) {
        let i = flow as usize;
        if i >= self.losses.len() {
            self.losses.resize(i + 1, 0);
        }
        self.losses[i] += 1;
        self.obs.loss(self.id, now, flow, queue_delay);
    }
}

fn count_drop(counters: &mut LinkCounters, reason: DropReason) {
    match reason {
        DropReason::Overflow => counters.overflow_drops += 1,
        DropReason::Aqm => counters.aqm_drops += 1,
    }
}

/// Counts what an AQM discards or marks while dequeuing.
struct DequeueCounter<'a> {
    counters: &'a mut LinkCounters,
    lost: LossCount<'a>,
    now: Nanos,
}

impl DequeueSink<Packet> for DequeueCounter<'_> {
    fn dropped(&mut self, pkt: Packet, reason: DropReason, sojourn: Nanos) {
        count_drop(self.counters, reason);
        self.lost.count(pkt.flow, self.now, sojourn);
    }
    fn marked(&mut self, _pkt: &Packet, _sojourn: Nanos) {
        self.counters.ecn_marks += 1;
    }
}

impl Link {
    pub fn new(
        name: String,
        rate: f64,
        delay: Nanos,
        jitter: Nanos,
        loss: f64,
        queue: Box<dyn QueueDisc<Packet>>,
        (loss_rng, jitter_rng): (SimRng, SimRng),
    ) -> Self {
        let mut queue = queue;
        queue.set_link_rate(rate);
        Link {
            name,
            rate,
            delay,
            jitter,
            loss,
            queue,
            transmitting: None,
            pipe: VecDeque::with_capacity(if rate.is_finite() { 256 } else { 8 }),
            last_arrival: 0,
            last_queue_change: 0,
            loss_rng,
            jitter_rng,
            counters: LinkCounters::default(),
            measure_sojourn: false,
            signal_backlogs: Quantiles::default(),
            window_start: 0,
            losses: Vec::new(),
            min_backlog: (0, 0),
            rate_spread: 1.0,
            bucket: None,
            rate_rng: None,
            reorder: false,
            capture: None,
        }
    }

    /// Draw each packet's service rate uniformly from `[rate, rate · spread]` (`spread` > 1),
    /// from `rng`; rate changes keep the spread.
    /// Shape with a token bucket of `burst` bytes filled at the link's rate, serialising at
    /// `line_rate`; it starts full, as Linux `tbf` does.
    pub fn set_token_bucket(&mut self, burst: u64, line_rate: f64) {
        let burst = burst as f64;
        self.bucket = Some(Bucket { burst, line_rate, tokens: burst, at: 0 });
    }

    /// How long a packet of `bytes` waits for its tokens from `now`, taking them. The bucket
    /// never holds more than `burst`, nor less than one packet's worth in capacity (a larger
    /// packet waits for its full size rather than forever).
    fn await_tokens(&mut self, now: Nanos, bytes: u32) -> Nanos {
        let per_ns = self.rate / 8e9;
        let Some(b) = self.bucket.as_mut() else {
            return 0;
        };
        let size = bytes as f64;
        let tokens = (b.tokens + now.saturating_sub(b.at) as f64 * per_ns).min(b.burst.max(size));
        let wait = if tokens >= size { 0 } else { ((size - tokens) / per_ns).ceil() as Nanos };
        b.tokens = (tokens + wait as f64 * per_ns - size).max(0.0);
        b.at = now + wait;
        wait
    }

    pub fn set_rate_spread(&mut self, spread: f64, rng: SimRng) {
        self.rate_spread = spread;
        self.rate_rng = Some(rng);
    }

    /// Let jitter reorder packets: each packet's extra delay is drawn independently.
    pub fn set_reorder(&mut self, reorder: bool) {
        self.reorder = reorder;
    }

    /// Packets of `flow` this link dropped or lost.
    pub fn losses_of(&self, flow: u32) -> u64 {
        self.losses.get(flow as usize).copied().unwrap_or(0)
    }

    /// The least backlog (bytes, packets) since the last [`Link::reset_min_backlog`].
    pub fn min_backlog(&self) -> (u64, usize) {
        self.min_backlog
    }

    /// Start tracking the least backlog afresh from the current one (at the warm-up's end).
    pub fn reset_min_backlog(&mut self) {
        self.min_backlog = (self.queue.len_bytes(), self.queue.len_packets());
    }

    fn note_backlog(&mut self) {
        let (b, p) = (self.queue.len_bytes(), self.queue.len_packets());
        self.min_backlog = (self.min_backlog.0.min(b), self.min_backlog.1.min(p));
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn set_rate(&mut self, rate: f64) {
        self.rate = rate;
        self.queue.set_link_rate(rate);
    }

    pub fn set_delay(&mut self, delay: Nanos) {
        self.delay = delay;
    }

    /// How long the current backlog takes to serialise at the nominal rate.
    fn backlog_delay(&self) -> Nanos {
        if self.rate.is_finite() {
            (self.queue.len_bytes() as f64 * 8e9 / self.rate) as Nanos
        } else {
            0
        }
    }

    /// The queue's drop/mark probability now, if it has one.
    pub fn signal_probability(&mut self, now: Nanos) -> Option<f64> {
        self.queue.signal_probability(now)
    }

    fn aqm_signals(&self) -> u64 {
        self.counters.ecn_marks + self.counters.aqm_drops
    }

    fn note_signal_backlog(&mut self, signals_before: u64, now: Nanos) {
        if self.aqm_signals() > signals_before && now >= self.window_start {
            self.signal_backlogs.record(self.queue.len_packets() as u64);
        }
    }

    /// Packets held anywhere on the link (queue, transmitter, pipe), for conservation checks.
    pub fn packets_held(&self) -> usize {
        self.queue.len_packets() + self.transmitting.is_some() as usize + self.pipe.len()
    }

    /// Busy time up to `now`, including the part of a transmission in progress.
    pub fn busy_until(&self, now: Nanos) -> u64 {
        let partial = self.transmitting.map_or(0, |(_, start)| now.saturating_sub(start));
        self.counters.busy_ns + partial
    }

    /// Queue integrals up to `now`.
    pub fn queue_integrals(&self, now: Nanos) -> (u128, u128) {
        let dt = now.saturating_sub(self.last_queue_change) as u128;
        (
            self.counters.queue_byte_ns + self.queue.len_bytes() as u128 * dt,
            self.counters.queue_pkt_ns + self.queue.len_packets() as u128 * dt,
        )
    }

    fn account_queue(&mut self, now: Nanos) {
        let (b, p) = self.queue_integrals(now);
        self.counters.queue_byte_ns = b;
        self.counters.queue_pkt_ns = p;
        self.last_queue_change = now;
    }

    fn tx_time(&mut self, wire_bytes: u32) -> Nanos {
        let rate = match (self.bucket, self.rate_rng.as_mut()) {
            (Some(b), _) => b.line_rate,
            (None, Some(rng)) => self.rate * (1.0 + unit(rng) * (self.rate_spread - 1.0)),
            (None, None) => self.rate,
        };
        ((wire_bytes as f64 * 8e9) / rate).ceil() as Nanos
    }

    /// A packet arrives at the link's ingress.
    pub fn offer(
        &mut self,
        id: u32,
        pkt: Packet,
        now: Nanos,
        events: &mut EventQueue,
        obs: &mut dyn LinkObserver,
    ) {
        // The ingress, before loss and queue: a segment dropped here is traced, and so is its
        // retransmission.
        if let Some(c) = &self.capture {
            c.record(now, &pkt);
        }
        self.counters.arrivals += 1;
        if self.loss > 0.0 && unit(&mut self.loss_rng) < self.loss {
            self.counters.random_losses += 1;
            let waiting = self.backlog_delay();
            LossCount { id, losses: &mut self.losses, obs }.count(pkt.flow, now, waiting);
            return;
        }
        if self.rate.is_infinite() {
            self.counters.departures += 1;
            self.counters.bytes_departed += pkt.wire_bytes as u64;
            self.propagate(id, pkt, now, events);
            return;
        }
        self.account_queue(now);
        let signals = self.aqm_signals();
        match self.queue.enqueue(pkt, now) {
            Enqueued::Queued => {}
            Enqueued::Marked => self.counters.ecn_marks += 1,
            Enqueued::Dropped(p, reason) => {
                let waiting = self.backlog_delay();
                count_drop(&mut self.counters, reason);
                LossCount { id, losses: &mut self.losses, obs }.count(p.flow, now, waiting);
            }
        }
        self.note_signal_backlog(signals, now);
        if self.transmitting.is_none() {
            self.start_next(id, now, events, obs);
        }
    }

    fn start_next(&mut self, id: u32, now: Nanos, events: &mut EventQueue, obs: &mut dyn LinkObserver) {
        self.account_queue(now);
        let signals = self.aqm_signals();
        let lost = LossCount { id, losses: &mut self.losses, obs: &mut *obs };
        let mut sink = DequeueCounter { counters: &mut self.counters, lost, now };
        let next = self.queue.dequeue(now, &mut sink);
        self.note_signal_backlog(signals, now);
        self.note_backlog();
        if let Some(d) = next {
            // Behind a token bucket the head waits for its tokens: that wait is queueing too.
            let wait = self.await_tokens(now, d.pkt.wire_bytes);
            if self.measure_sojourn {
                obs.sojourn(id, now + wait, &d.pkt, d.sojourn + wait);
            }
            let done = now + wait + self.tx_time(d.pkt.wire_bytes);
            self.transmitting = Some((d.pkt, now));
            events.schedule(done, Event::TxDone(id));
        }
    }

    /// The transmitter finished the current packet.
    pub fn tx_done(&mut self, id: u32, now: Nanos, events: &mut EventQueue, obs: &mut dyn LinkObserver) {
        let (pkt, start) = self.transmitting.take().expect("TxDone without a packet in transmission");
        self.counters.busy_ns += now - start;
        self.counters.departures += 1;
        self.counters.bytes_departed += pkt.wire_bytes as u64;
        self.propagate(id, pkt, now, events);
        self.start_next(id, now, events, obs);
    }

    fn propagate(&mut self, id: u32, pkt: Packet, now: Nanos, events: &mut EventQueue) {
        let extra =
            if self.jitter > 0 { (unit(&mut self.jitter_rng) * self.jitter as f64) as Nanos } else { 0 };
        if self.reorder {
            return self.propagate_reordering(id, pkt, now + self.delay + extra, events);
        }
        let at = (now + self.delay + extra).max(self.last_arrival);
        self.last_arrival = at;
        if self.pipe.is_empty() {
            events.schedule(at, Event::Arrive(id));
        }
        self.pipe.push_back((at, pkt));
    }

    /// Insert by arrival time (after packets due at the same time, so ties stay FIFO); a new
    /// head needs an `Arrive` of its own, the one already scheduled then finds nothing due.
    fn propagate_reordering(&mut self, id: u32, pkt: Packet, at: Nanos, events: &mut EventQueue) {
        let i = self.pipe.partition_point(|&(t, _)| t <= at);
        if i == 0 {
            events.schedule(at, Event::Arrive(id));
        }
        self.pipe.insert(i, (at, pkt));
    }

    /// The head of the pipe reaches the far end; returns it (None for an `Arrive` whose packet
    /// an earlier one already delivered, which happens only with reordering).
    pub fn arrive(&mut self, id: u32, now: Nanos, events: &mut EventQueue) -> Option<Packet> {
        match self.pipe.front() {
            Some(&(at, _)) if at <= now => {}
            _ => return None,
        }
        let (_, pkt) = self.pipe.pop_front()?;
        if let Some(&(next, _)) = self.pipe.front() {
            events.schedule(next, Event::Arrive(id));
        }
        Some(pkt)
    }
}

#[cfg(test)]
mod tests {
    use ccbench_aqm::{DropTail, Limit};

    use super::*;
    use crate::packet::Packet;
    use crate::rng::link_streams;

    const MS: Nanos = 1_000_000;

    struct NoSojourn;
    impl LinkObserver for NoSojourn {
        fn sojourn(&mut self, _: u32, _: Nanos, _: &Packet, _: Nanos) {}
        fn loss(&mut self, _: u32, _: Nanos, _: u32, _: Nanos) {}
    }

    /// 200 packets 0.1 ms apart through a 10 ms ± 5 ms pipe, delivered as the events come.
    fn deliveries(reorder: bool) -> Vec<(Nanos, u64)> {
        let queue = Box::new(DropTail::new(Limit::Packets(1000)));
        let mut link = Link::new("l".into(), f64::INFINITY, 10 * MS, 5 * MS, 0.0, queue, link_streams(7, 0));
        link.set_reorder(reorder);
        let mut events = EventQueue::with_capacity(64);
        let mut out = Vec::new();
        for k in 0..200u64 {
            let pkt = Packet { seq: k, ..Packet::new(0, 0, crate::packet::Kind::Data, 1500, 0) };
            link.offer(0, pkt, k * MS / 10, &mut events, &mut NoSojourn);
        }
        while let Some((t, _)) = events.pop() {
            if let Some(p) = link.arrive(0, t, &mut events) {
                out.push((t, p.seq));
            }
        }
        out
    }

    #[test]
    fn jitter_reorders_only_when_asked_and_loses_nothing() {
        for reorder in [false, true] {
            let got = deliveries(reorder);
            assert_eq!(got.len(), 200, "every packet arrives once");
            let mut seqs: Vec<u64> = got.iter().map(|&(_, s)| s).collect();
            assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "arrivals in time order");
            let in_order = seqs.windows(2).all(|w| w[0] < w[1]);
            assert_eq!(in_order, !reorder, "reorder = {reorder}");
            seqs.sort_unstable();
            assert_eq!(seqs, (0..200).collect::<Vec<_>>());
        }
    }

    /// With `rate_max`, each transmission takes between size/rate_max and size/rate.
    #[test]
    fn service_rates_lie_between_rate_and_rate_max() {
        let queue = Box::new(DropTail::new(Limit::Packets(1000)));
        let mut link = Link::new("l".into(), 10e6, 0, 0, 0.0, queue, link_streams(7, 0));
        link.set_rate_spread(3.0, crate::rng::stream(7, "link-rate", 0));
        let times: Vec<Nanos> = (0..1000).map(|_| link.tx_time(1500)).collect();
        assert!(times.iter().all(|&t| (400_000..=1_200_000).contains(&t)), "1500 B at 10..30 Mbit/s");
        let mean = times.iter().sum::<Nanos>() as f64 / 1000.0;
        // E[1/U] over U(10, 30) Mbit/s: 1500·8·ln(3)/20e6 s = 659 µs.
        assert!((mean / 659_167.0 - 1.0).abs() < 0.03, "mean {mean} ns");
    }

    /// A 10 Mbit/s token bucket of 15,000 B on a 1 Gbit/s interface, 20 packets of 1,500 B
    /// offered at once. The full bucket lets 10 leave back to back at line rate (12 µs each);
    /// the 11th waits for the tokens it lacks: 15,000 − 10·1,500 + 120 µs · 1.25 B/µs = 150 B
    /// held, 1,350 B missing, 1,080 µs; it starts at 1,200 µs and is out at 1,212 µs. From then
    /// on one packet every 1.2 ms: the token rate.
    #[test]
    fn a_token_bucket_sends_its_burst_at_line_rate_then_paces_at_its_rate() {
        let queue = Box::new(DropTail::new(Limit::Packets(1000)));
        let mut link = Link::new("l".into(), 10e6, 0, 0, 0.0, queue, link_streams(7, 0));
        link.set_token_bucket(15_000, 1e9);
        let mut events = EventQueue::with_capacity(64);
        for k in 0..20u64 {
            let pkt = Packet { seq: k, ..Packet::new(0, 0, crate::packet::Kind::Data, 1500, 0) };
            link.offer(0, pkt, 0, &mut events, &mut NoSojourn);
        }
        let mut out = Vec::new();
        while let Some((t, ev)) = events.pop() {
            match ev {
                Event::TxDone(_) => link.tx_done(0, t, &mut events, &mut NoSojourn),
                _ => out.extend(link.arrive(0, t, &mut events).map(|_| t)),
            }
        }
        const US: Nanos = 1_000;
        let mut want: Vec<Nanos> = (1..=10).map(|k| k * 12 * US).collect();
        want.extend((0..10).map(|k| 1_212 * US + k * 1_200 * US));
        assert_eq!(out, want);
    }
}
