//! A unidirectional link: an egress queue (any [`QueueDisc`]), a transmitter serialising one
//! packet at a time at the link rate, and a propagation pipe. Optional Bernoulli loss before the
//! queue and per-packet jitter that never reorders (arrival times are kept non-decreasing, so the
//! pipe stays a FIFO and one pending `Arrive` event per link suffices).

use std::collections::VecDeque;

use ccbench_aqm::{DequeueSink, DropReason, Enqueued, Nanos, QueueDisc};

use crate::engine::{Event, EventQueue};
use crate::packet::Packet;
use crate::rng::{unit, SimRng};

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

/// Where a link reports per-packet sojourn times (bottleneck measurement).
pub trait SojournRecorder {
    fn record(&mut self, link: u32, now: Nanos, pkt: &Packet, sojourn: Nanos);
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
    /// Drops and random losses per flow id (grown on demand).
    losses_by_flow: Vec<u64>,
    /// Record sojourn times of departing packets.
    pub measure_sojourn: bool,
    /// Backlog (packets) at each AQM congestion signal (mark or AQM drop), with its time: the
    /// largest queue the AQM let build in a cycle, the `b` of the ABE paper's model (L149).
    pub signal_backlogs: Vec<(Nanos, u32)>,
}

fn count_drop(counters: &mut LinkCounters, losses_by_flow: &mut Vec<u64>, flow: u32, reason: DropReason) {
    match reason {
        DropReason::Overflow => counters.overflow_drops += 1,
        DropReason::Aqm => counters.aqm_drops += 1,
    }
    count_loss(losses_by_flow, flow);
}

fn count_loss(losses_by_flow: &mut Vec<u64>, flow: u32) {
    let i = flow as usize;
    if i >= losses_by_flow.len() {
        losses_by_flow.resize(i + 1, 0);
    }
    losses_by_flow[i] += 1;
}

/// Counts what an AQM discards or marks while dequeuing.
struct DequeueCounter<'a> {
    counters: &'a mut LinkCounters,
    losses_by_flow: &'a mut Vec<u64>,
}

impl DequeueSink<Packet> for DequeueCounter<'_> {
    fn dropped(&mut self, pkt: Packet, reason: DropReason, _sojourn: Nanos) {
        count_drop(self.counters, self.losses_by_flow, pkt.flow, reason);
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
            losses_by_flow: Vec::new(),
            measure_sojourn: false,
            signal_backlogs: Vec::new(),
        }
    }

    /// Packets of `flow` this link dropped or lost.
    pub fn losses_of(&self, flow: u32) -> u64 {
        self.losses_by_flow.get(flow as usize).copied().unwrap_or(0)
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn delay(&self) -> Nanos {
        self.delay
    }

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

    fn aqm_signals(&self) -> u64 {
        self.counters.ecn_marks + self.counters.aqm_drops
    }

    fn note_signal_backlog(&mut self, signals_before: u64, now: Nanos) {
        if self.aqm_signals() > signals_before {
            self.signal_backlogs.push((now, self.queue.len_packets() as u32));
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

    fn tx_time(&self, wire_bytes: u32) -> Nanos {
        ((wire_bytes as f64 * 8e9) / self.rate).ceil() as Nanos
    }

    /// A packet arrives at the link's ingress.
    pub fn offer(
        &mut self,
        id: u32,
        pkt: Packet,
        now: Nanos,
        events: &mut EventQueue,
        sojourn: &mut dyn SojournRecorder,
    ) {
        self.counters.arrivals += 1;
        if self.loss > 0.0 && unit(&mut self.loss_rng) < self.loss {
            self.counters.random_losses += 1;
            count_loss(&mut self.losses_by_flow, pkt.flow);
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
                count_drop(&mut self.counters, &mut self.losses_by_flow, p.flow, reason)
            }
        }
        self.note_signal_backlog(signals, now);
        if self.transmitting.is_none() {
            self.start_next(id, now, events, sojourn);
        }
    }

    fn start_next(
        &mut self,
        id: u32,
        now: Nanos,
        events: &mut EventQueue,
        sojourn: &mut dyn SojournRecorder,
    ) {
        self.account_queue(now);
        let signals = self.aqm_signals();
        let mut sink =
            DequeueCounter { counters: &mut self.counters, losses_by_flow: &mut self.losses_by_flow };
        let next = self.queue.dequeue(now, &mut sink);
        self.note_signal_backlog(signals, now);
        if let Some(d) = next {
            if self.measure_sojourn {
                sojourn.record(id, now, &d.pkt, d.sojourn);
            }
            let done = now + self.tx_time(d.pkt.wire_bytes);
            self.transmitting = Some((d.pkt, now));
            events.schedule(done, Event::TxDone(id));
        }
    }

    /// The transmitter finished the current packet.
    pub fn tx_done(
        &mut self,
        id: u32,
        now: Nanos,
        events: &mut EventQueue,
        sojourn: &mut dyn SojournRecorder,
    ) {
        let (pkt, start) = self.transmitting.take().expect("TxDone without a packet in transmission");
        self.counters.busy_ns += now - start;
        self.counters.departures += 1;
        self.counters.bytes_departed += pkt.wire_bytes as u64;
        self.propagate(id, pkt, now, events);
        self.start_next(id, now, events, sojourn);
    }

    fn propagate(&mut self, id: u32, pkt: Packet, now: Nanos, events: &mut EventQueue) {
        let extra =
            if self.jitter > 0 { (unit(&mut self.jitter_rng) * self.jitter as f64) as Nanos } else { 0 };
        let at = (now + self.delay + extra).max(self.last_arrival);
        self.last_arrival = at;
        if self.pipe.is_empty() {
            events.schedule(at, Event::Arrive(id));
        }
        self.pipe.push_back((at, pkt));
    }

    /// The head of the pipe reaches the far end; returns it.
    pub fn arrive(&mut self, id: u32, events: &mut EventQueue) -> Packet {
        let (_, pkt) = self.pipe.pop_front().expect("Arrive with an empty pipe");
        if let Some(&(next, _)) = self.pipe.front() {
            events.schedule(next, Event::Arrive(id));
        }
        pkt
    }
}
