//! The simulator's side of a link: the shared link model (`ccbench_link::Link`, the same code
//! the emulator drives) turned into events — a transmitter wake-up becomes a `TxDone`, an
//! arrival an `Arrive` — with the per-flow loss counts and the pcap capture of its ingress. It
//! carries [`InFlight`] handles; a lost packet's slot goes back to the [`PacketSlab`].

use std::ops::{Deref, DerefMut};

use ccbench_aqm::Nanos;
use ccbench_link::Hooks;

use super::slab::{InFlight, PacketSlab};
use crate::engine::{Event, EventQueue};
use crate::trace::Capture;

pub use ccbench_link::LinkCounters;

/// What a link reports as packets leave its queue or are lost; the metrics layer listens, so
/// the link keeps no per-packet log.
pub trait LinkObserver {
    /// A packet of `flow` leaves the queue of `link` after waiting `sojourn` (links that
    /// measure it only).
    fn sojourn(&mut self, link: u32, now: Nanos, flow: u32, sojourn: Nanos);
    /// A packet of `flow` is dropped or lost at `link`, meeting `queue_delay` of queueing: its
    /// sojourn when the AQM dropped it at the head, else the backlog it met. The SIAD thesis
    /// groups losses within 2 × the RTT *including* this queueing (§4.1.2, L2139).
    fn loss(&mut self, link: u32, now: Nanos, flow: u32, queue_delay: Nanos);
}

pub struct Link {
    model: ccbench_link::Link<InFlight>,
    /// Drops and random losses per flow.
    losses: Vec<u64>,
    /// Pcap trace of every packet offered (`output.pcap`); None costs one branch per packet.
    pub capture: Option<Capture>,
}

impl Deref for Link {
    type Target = ccbench_link::Link<InFlight>;
    fn deref(&self) -> &Self::Target {
        &self.model
    }
}

impl DerefMut for Link {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.model
    }
}

/// The hooks of link `id`: wake-ups into the event queue, measurements to the observer, lost
/// packets' slots back to the slab.
struct Events<'a, 'b> {
    id: u32,
    env: Env<'a>,
    losses: &'b mut Vec<u64>,
}

/// What the link's calls need beside the link: the event queue, the observer and the slab.
pub struct Env<'a> {
    pub events: &'a mut EventQueue,
    pub obs: &'a mut dyn LinkObserver,
    pub slab: &'a mut PacketSlab,
}

impl Hooks<InFlight> for Events<'_, '_> {
    fn wake_transmitter(&mut self, at: Nanos) {
        self.env.events.schedule(at, Event::TxDone(self.id));
    }
    fn wake_arrival(&mut self, at: Nanos) {
        self.env.events.schedule(at, Event::Arrive(self.id));
    }
    fn sojourn(&mut self, now: Nanos, pkt: &InFlight, sojourn: Nanos) {
        self.env.obs.sojourn(self.id, now, pkt.flow, sojourn);
    }
    fn loss(&mut self, now: Nanos, pkt: &InFlight, queue_delay: Nanos) {
        let i = pkt.flow as usize;
        if i >= self.losses.len() {
            self.losses.resize(i + 1, 0);
        }
        self.losses[i] += 1;
        self.env.obs.loss(self.id, now, pkt.flow, queue_delay);
        self.env.slab.release(pkt);
    }
}

impl Link {
    pub fn new(model: ccbench_link::Link<InFlight>) -> Self {
        Link { model, losses: Vec::new(), capture: None }
    }

    /// Packets of `flow` this link dropped or lost.
    pub fn losses_of(&self, flow: u32) -> u64 {
        self.losses.get(flow as usize).copied().unwrap_or(0)
    }

    /// A packet arrives at the link's ingress.
    pub fn offer(&mut self, id: u32, pkt: InFlight, now: Nanos, env: Env) {
        // The ingress, before loss and queue: a segment dropped here is traced, and so is its
        // retransmission.
        if let Some(c) = &self.capture {
            c.record(now, &env.slab.get(&pkt));
        }
        self.model.offer(pkt, now, &mut Events { id, env, losses: &mut self.losses });
    }

    /// The transmitter's wake-up (`Event::TxDone`), or a reader bringing the link up to `now`.
    pub fn run_until(&mut self, id: u32, now: Nanos, env: Env) {
        self.model.run_until(now, &mut Events { id, env, losses: &mut self.losses });
    }

    /// A scheduled change of the propagation delay.
    pub fn set_delay(&mut self, id: u32, delay: Nanos, events: &mut EventQueue) {
        self.model.set_delay(delay, &mut Arrivals { id, events });
    }

    /// The head of the pipe reaches the far end (`Event::Arrive`); None for an arrival an
    /// earlier packet already took (reordering, or a delay change).
    pub fn arrive(&mut self, id: u32, now: Nanos, env: Env) -> Option<InFlight> {
        self.model.arrive(now, &mut Events { id, env, losses: &mut self.losses })
    }
}

/// Hooks for [`Link::set_delay`], which only ever asks for an arrival.
struct Arrivals<'a> {
    id: u32,
    events: &'a mut EventQueue,
}

impl Hooks<InFlight> for Arrivals<'_> {
    fn wake_transmitter(&mut self, at: Nanos) {
        self.events.schedule(at, Event::TxDone(self.id));
    }
    fn wake_arrival(&mut self, at: Nanos) {
        self.events.schedule(at, Event::Arrive(self.id));
    }
}
