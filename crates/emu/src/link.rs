//! One direction of an emulated link: the shared link model (`ccbench_link::Link`, the code the
//! simulator drives, built by the simulator's `net::build::link_model` from the same link spec)
//! on the real clock, over IP packets. Every link key runs here as in the simulator: loss, the
//! queue discipline, rate, `rate_max`, token bucket, delay, jitter with or without reordering,
//! delivery traces, and the same random streams, so a link draws the same losses for the same
//! seed.
//!
//! Real time only enters as the `now` the caller passes. The model chains transmissions on
//! their scheduled completion times, not on when the caller got round to `poll`, so a late
//! wake-up delays a packet's delivery but never lowers the link rate.

use std::ops::{Deref, DerefMut};

use ccbench_aqm::{Nanos, QueueDisc, QueuedPacket};
use ccbench_link::Hooks;
use ccbench_scenario::link_model::link_model;
use ccbench_scenario::rng::SimRng;
use ccbench_scenario::LinkSpec;

use crate::ip::{FlowKey, IpPacket};

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
    model: ccbench_link::Link<IpPacket>,
    /// The latest time the link has been advanced to; `now` never goes back.
    clock: Nanos,
    pub sojourn: Vec<SojournSample>,
}

impl Deref for Link {
    type Target = ccbench_link::Link<IpPacket>;
    fn deref(&self) -> &Self::Target {
        &self.model
    }
}

impl DerefMut for Link {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.model
    }
}

/// The emulator polls [`Link::next_event`], so wake-ups need no action; sojourns are kept.
struct Samples<'a>(&'a mut Vec<SojournSample>);

impl Hooks<IpPacket> for Samples<'_> {
    fn wake_transmitter(&mut self, _: Nanos) {}
    fn wake_arrival(&mut self, _: Nanos) {}
    fn sojourn(&mut self, now: Nanos, pkt: &IpPacket, sojourn: Nanos) {
        self.0.push(SojournSample { at: now, sojourn, wire_bytes: pkt.wire_bytes(), flow: pkt.flow_key() });
    }
}

impl Link {
    pub fn new(
        name: String,
        rate: f64,
        delay: Nanos,
        jitter: Nanos,
        loss: f64,
        queue: Box<dyn QueueDisc<IpPacket>>,
        streams: (SimRng, SimRng),
    ) -> Self {
        Link::wrap(ccbench_link::Link::new(name, rate, delay, jitter, loss, queue, streams))
    }

    fn wrap(model: ccbench_link::Link<IpPacket>) -> Self {
        Link { model, clock: 0, sojourn: Vec::new() }
    }

    /// Link `index` of a validated scenario, built as the simulator builds it.
    pub fn from_spec(spec: &LinkSpec, seed: u64, index: usize) -> Result<Link, String> {
        link_model(spec, seed, index).map(Link::wrap)
    }

    /// A packet arrives at the link's ingress at `now`.
    pub fn offer(&mut self, pkt: IpPacket, now: Nanos) {
        let now = self.tick(now);
        self.model.offer(pkt, now, &mut Samples(&mut self.sojourn));
    }

    /// A scheduled change of the propagation delay (the emulator polls, so it needs no wake-up).
    pub fn set_delay(&mut self, delay: Nanos) {
        self.model.set_delay(delay, &mut Samples(&mut self.sojourn));
    }

    /// Advance to `now` and move every packet that has reached the far end into `out`, with its
    /// scheduled arrival time.
    pub fn poll(&mut self, now: Nanos, out: &mut Vec<(Nanos, IpPacket)>) {
        let now = self.tick(now);
        self.model.advance(now, &mut Samples(&mut self.sojourn), out);
    }

    /// The link clock at `now`: never earlier than it was.
    fn tick(&mut self, now: Nanos) -> Nanos {
        self.clock = self.clock.max(now);
        self.clock
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
