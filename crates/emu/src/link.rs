//! One direction of an emulated link: pure, clock-driven logic over IP packets, no I/O.
//!
//! The model is the simulator's (`ccbench_sim::net::link`), step for step: Bernoulli loss before
//! the queue, the queue discipline from the `ccbench_aqm` registry, one transmitter serialising
//! `wire bytes · 8 / rate`, then propagation `delay` plus uniform jitter in [0, jitter] kept
//! non-decreasing so the pipe never reorders. The random streams are the simulator's too
//! (`ccbench_sim::rng::link_streams`), so a link draws the same losses for the same seed.
//!
//! Real time only enters as the `now` the caller passes. Transmissions are chained on their
//! scheduled completion times, not on when the caller got round to `poll`, so a late wake-up
//! delays a packet's delivery but never lowers the link rate.

use std::collections::VecDeque;

use ccbench_aqm::{
    build_queue, DequeueSink, DropReason, Enqueued, Nanos, QueueConfig, QueueDisc, QueuedPacket,
};
use ccbench_sim::net::LinkCounters;
use ccbench_sim::rng::{link_streams, queue_seed, unit, SimRng};
use ccbench_sim::scenario::LinkSpec;

use crate::ip::{FlowKey, IpPacket};

/// Upper bound on the events one `advance` handles: far above what any queue holds, it only
/// guards against a queue discipline whose timer never moves forward.
const MAX_STEPS: usize = 1 << 22;

/// One departing packet's wait in the queue (the simulator's sojourn measurement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SojournSample {
    /// When the packet left the queue (start of its transmission), link clock.
    pub at: Nanos,
    pub sojourn: Nanos,
    pub wire_bytes: u32,
    pub flow: FlowKey,
}

pub struct Link {
    pub name: String,
    /// Bits per second; `f64::INFINITY` means no serialisation and no queue (as in the simulator).
    rate: f64,
    delay: Nanos,
    jitter: Nanos,
    loss: f64,
    queue: Box<dyn QueueDisc<IpPacket>>,
    /// Packet on the wire, its transmission start and end.
    transmitting: Option<(IpPacket, Nanos, Nanos)>,
    /// Packets propagating, with their arrival time at the far end (non-decreasing).
    pipe: VecDeque<(Nanos, IpPacket)>,
    last_arrival: Nanos,
    last_queue_change: Nanos,
    /// The latest time the link has been advanced to; `now` never goes back.
    clock: Nanos,
    loss_rng: SimRng,
    jitter_rng: SimRng,
    pub counters: LinkCounters,
    pub measure_sojourn: bool,
    pub sojourn: Vec<SojournSample>,
}

/// Counts what the queue discards or marks while dequeuing.
struct DequeueCounter<'a>(&'a mut LinkCounters);

impl DequeueSink<IpPacket> for DequeueCounter<'_> {
    fn dropped(&mut self, _pkt: IpPacket, reason: DropReason, _sojourn: Nanos) {
        count_drop(self.0, reason);
    }
    fn marked(&mut self, _pkt: &IpPacket, _sojourn: Nanos) {
        self.0.ecn_marks += 1;
    }
}

fn count_drop(c: &mut LinkCounters, reason: DropReason) {
    match reason {
        DropReason::Overflow => c.overflow_drops += 1,
        DropReason::Aqm => c.aqm_drops += 1,
    }
}

impl Link {
    pub fn new(
        name: String,
        rate: f64,
        delay: Nanos,
        jitter: Nanos,
        loss: f64,
        mut queue: Box<dyn QueueDisc<IpPacket>>,
        (loss_rng, jitter_rng): (SimRng, SimRng),
    ) -> Self {
        queue.set_link_rate(rate);
        Link {
            name,
            rate,
            delay,
            jitter,
            loss,
            queue,
            transmitting: None,
            pipe: VecDeque::with_capacity(256),
            last_arrival: 0,
            last_queue_change: 0,
            clock: 0,
            loss_rng,
            jitter_rng,
            counters: LinkCounters::default(),
            measure_sojourn: false,
            sojourn: Vec::new(),
        }
    }

    /// Link `index` of a validated scenario, with the simulator's queue and random streams.
    pub fn from_spec(spec: &LinkSpec, seed: u64, index: usize) -> Result<Link, String> {
        let cfg = QueueConfig { limit: spec.limit, ecn: spec.ecn, seed: queue_seed(seed, index as u64) };
        let queue = build_queue(&spec.aqm, cfg, &spec.aqm_params)
            .map_err(|e| format!("link \"{}\": {e}", spec.name))?;
        let streams = link_streams(seed, index as u64);
        let mut link =
            Link::new(spec.name.clone(), spec.rate, spec.delay, spec.jitter, spec.loss, queue, streams);
        link.measure_sojourn = spec.measure_sojourn;
        Ok(link)
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn delay(&self) -> Nanos {
        self.delay
    }

    /// New rate for transmissions that start from now on (as in the simulator).
    pub fn set_rate(&mut self, rate: f64) {
        self.rate = rate;
        self.queue.set_link_rate(rate);
    }

    pub fn set_delay(&mut self, delay: Nanos) {
        self.delay = delay;
    }

    pub fn queue_bytes(&self) -> u64 {
        self.queue.len_bytes()
    }

    pub fn queue_packets(&self) -> usize {
        self.queue.len_packets()
    }

    /// The queue's drop/mark probability now, if it has one.
    pub fn signal_probability(&mut self, now: Nanos) -> Option<f64> {
        self.queue.signal_probability(now)
    }

    /// Packets held anywhere on the link (queue, transmitter, pipe).
    pub fn packets_held(&self) -> usize {
        self.queue.len_packets() + self.transmitting.is_some() as usize + self.pipe.len()
    }

    /// Busy time up to `now`, including the part of a transmission in progress.
    pub fn busy_until(&self, now: Nanos) -> u64 {
        let partial = self.transmitting.as_ref().map_or(0, |(_, s, _)| now.saturating_sub(*s));
        self.counters.busy_ns + partial
    }

    /// Queue integrals (byte·ns, packet·ns) up to `now`.
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

    fn tx_time(&self, wire_bytes: u32) -> Nanos {
        ((wire_bytes as f64 * 8e9) / self.rate).ceil() as Nanos
    }

    /// The earliest time something happens on the link by itself: a transmission ends, a packet
    /// reaches the far end, or the queue discipline's timer fires.
    pub fn next_event(&self) -> Option<Nanos> {
        let tx = self.transmitting.as_ref().map(|t| t.2);
        let arrive = self.pipe.front().map(|p| p.0);
        [tx, arrive, self.queue.next_timer()].into_iter().flatten().min()
    }

    /// A packet arrives at the link's ingress at `now`.
    pub fn offer(&mut self, pkt: IpPacket, now: Nanos) {
        let now = self.advance(now);
        self.counters.arrivals += 1;
        if self.loss > 0.0 && unit(&mut self.loss_rng) < self.loss {
            self.counters.random_losses += 1;
            return;
        }
        if self.rate.is_infinite() {
            self.counters.departures += 1;
            self.counters.bytes_departed += pkt.wire_bytes() as u64;
            self.propagate(pkt, now);
            return;
        }
        self.account_queue(now);
        match self.queue.enqueue(pkt, now) {
            Enqueued::Queued => {}
            Enqueued::Marked => self.counters.ecn_marks += 1,
            Enqueued::Dropped(_, reason) => count_drop(&mut self.counters, reason),
        }
        if self.transmitting.is_none() {
            self.start_next(now);
        }
    }

    /// Advance to `now` and move every packet that has reached the far end into `out`, with its
    /// scheduled arrival time.
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<(Nanos, IpPacket)>) {
        let now = self.advance(now);
        while self.pipe.front().is_some_and(|p| p.0 <= now) {
            out.extend(self.pipe.pop_front());
        }
    }

    /// Run the transmitter and the queue timer up to `now`, in time order, each event at its own
    /// scheduled time. Returns the link clock (`now`, or later if the caller's clock went back).
    fn advance(&mut self, now: Nanos) -> Nanos {
        let now = now.max(self.clock);
        for _ in 0..MAX_STEPS {
            let tx = self.transmitting.as_ref().map(|t| t.2).filter(|&t| t <= now);
            let timer = self.queue.next_timer().filter(|&t| t <= now);
            match (tx, timer) {
                (None, None) => break,
                (Some(t), Some(q)) if q < t => self.queue.on_timer(q),
                (Some(t), _) => self.tx_done(t),
                (None, Some(q)) => self.queue.on_timer(q),
            }
        }
        self.clock = now;
        now
    }

    fn start_next(&mut self, now: Nanos) {
        self.account_queue(now);
        let next = self.queue.dequeue(now, &mut DequeueCounter(&mut self.counters));
        if let Some(d) = next {
            if self.measure_sojourn {
                let (wire_bytes, flow) = (d.pkt.wire_bytes(), d.pkt.flow_key());
                self.sojourn.push(SojournSample { at: now, sojourn: d.sojourn, wire_bytes, flow });
            }
            let done = now + self.tx_time(d.pkt.wire_bytes());
            self.transmitting = Some((d.pkt, now, done));
        }
    }

    fn tx_done(&mut self, done: Nanos) {
        let Some((pkt, start, _)) = self.transmitting.take() else { return };
        self.counters.busy_ns += done - start;
        self.counters.departures += 1;
        self.counters.bytes_departed += pkt.wire_bytes() as u64;
        self.propagate(pkt, done);
        self.start_next(done);
    }

    fn propagate(&mut self, pkt: IpPacket, now: Nanos) {
        let extra =
            if self.jitter > 0 { (unit(&mut self.jitter_rng) * self.jitter as f64) as Nanos } else { 0 };
        let at = (now + self.delay + extra).max(self.last_arrival);
        self.last_arrival = at;
        self.pipe.push_back((at, pkt));
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
