//! The simulator's side of a link: the shared link model (`ccbench_link::Link`, the same code
//! the emulator drives) turned into events — a transmitter wake-up becomes a `TxDone`, an
//! arrival an `Arrive` — with the per-flow loss counts and the pcap capture of its ingress.

use std::ops::{Deref, DerefMut};

use ccbench_aqm::Nanos;
use ccbench_link::Hooks;

use crate::engine::{Event, EventQueue};
use crate::packet::Packet;
use crate::trace::Capture;

pub use ccbench_link::LinkCounters;

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
    model: ccbench_link::Link<Packet>,
    /// Drops and random losses per flow.
    losses: Vec<u64>,
    /// Pcap trace of every packet offered (`output.pcap`); None costs one branch per packet.
    pub capture: Option<Capture>,
}

impl Deref for Link {
    type Target = ccbench_link::Link<Packet>;
    fn deref(&self) -> &Self::Target {
        &self.model
    }
}

impl DerefMut for Link {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.model
    }
}

/// The hooks of link `id`: wake-ups into the event queue, measurements to the observer.
struct Events<'a> {
    id: u32,
    events: &'a mut EventQueue,
    obs: &'a mut dyn LinkObserver,
    losses: &'a mut Vec<u64>,
}

impl Hooks<Packet> for Events<'_> {
    fn wake_transmitter(&mut self, at: Nanos) {
        self.events.schedule(at, Event::TxDone(self.id));
    }
    fn wake_arrival(&mut self, at: Nanos) {
        self.events.schedule(at, Event::Arrive(self.id));
    }
    fn sojourn(&mut self, now: Nanos, pkt: &Packet, sojourn: Nanos) {
        self.obs.sojourn(self.id, now, pkt, sojourn);
    }
    fn loss(&mut self, now: Nanos, pkt: &Packet, queue_delay: Nanos) {
        let i = pkt.flow as usize;
        if i >= self.losses.len() {
            self.losses.resize(i + 1, 0);
        }
        self.losses[i] += 1;
        self.obs.loss(self.id, now, pkt.flow, queue_delay);
    }
}

impl Link {
    pub fn new(model: ccbench_link::Link<Packet>) -> Self {
        Link { model, losses: Vec::new(), capture: None }
    }

    /// Packets of `flow` this link dropped or lost.
    pub fn losses_of(&self, flow: u32) -> u64 {
        self.losses.get(flow as usize).copied().unwrap_or(0)
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
        let mut hooks = Events { id, events, obs, losses: &mut self.losses };
        self.model.offer(pkt, now, &mut hooks);
    }

    /// The transmitter's wake-up (`Event::TxDone`), or a reader bringing the link up to `now`.
    pub fn run_until(&mut self, id: u32, now: Nanos, events: &mut EventQueue, obs: &mut dyn LinkObserver) {
        let mut hooks = Events { id, events, obs, losses: &mut self.losses };
        self.model.run_until(now, &mut hooks);
    }

    /// A scheduled change of the propagation delay.
    pub fn set_delay(&mut self, id: u32, delay: Nanos, events: &mut EventQueue) {
        self.model.set_delay(delay, &mut Arrivals { id, events });
    }

    /// The head of the pipe reaches the far end (`Event::Arrive`); None for an arrival an
    /// earlier packet already took (reordering, or a delay change).
    pub fn arrive(
        &mut self,
        id: u32,
        now: Nanos,
        events: &mut EventQueue,
        obs: &mut dyn LinkObserver,
    ) -> Option<Packet> {
        let mut hooks = Events { id, events, obs, losses: &mut self.losses };
        self.model.arrive(now, &mut hooks)
    }
}

/// Hooks for [`Link::set_delay`], which only ever asks for an arrival.
struct Arrivals<'a> {
    id: u32,
    events: &'a mut EventQueue,
}

impl Hooks<Packet> for Arrivals<'_> {
    fn wake_transmitter(&mut self, at: Nanos) {
        self.events.schedule(at, Event::TxDone(self.id));
    }
    fn wake_arrival(&mut self, at: Nanos) {
        self.events.schedule(at, Event::Arrive(self.id));
    }
}
