//! The dumbbell: every flow has its own sender and receiver host; all senders reach router `r1`,
//! all receivers hang off router `r2`, and `r1 → r2` is the bottleneck.
//!
//! ```text
//! s_i --access_i--> r1 ==bottleneck==> r2 --> d_i
//! s_i <--access_i-- r1 <==bottleneck-rev== r2 <-- d_i
//! ```
//!
//! A flow's base RTT is `2 · (access delay + bottleneck delay)`; access links are infinitely fast,
//! so the only queue a flow meets is the bottleneck's (and the reverse bottleneck's for ACKs).
//! Receiver-side links have zero delay and infinite rate, so they are folded into `r2`.

use ccbench_aqm::{DropTail, Limit, QueueDisc};

use super::{Link, Network, Route, Side};
use crate::packet::Packet;
use crate::rng;
use crate::scenario::{Aqm, BufferSize, Scenario};

/// Index of the forward bottleneck link in every dumbbell.
pub const BOTTLENECK: u32 = 0;
pub const BOTTLENECK_REVERSE: u32 = 1;

/// Routes of one flow.
#[derive(Clone, Copy, Debug)]
pub struct FlowRoutes {
    /// Sender → receiver.
    pub data: u32,
    /// Receiver → sender.
    pub ack: u32,
}

/// Translate a buffer size into a queue limit for a link of `rate` bits/s and reference `rtt`.
pub fn queue_limit(buffer: &BufferSize, rate: f64, rtt: u64) -> Limit {
    match *buffer {
        BufferSize::Packets(n) => Limit::Packets(n),
        BufferSize::Bytes(b) => Limit::Bytes(b),
        BufferSize::Time(t) => Limit::Bytes((rate * t as f64 / 8e9).round() as u64),
        BufferSize::Bdp(x) => Limit::Bytes((x * rate * rtt as f64 / 8e9).round() as u64),
    }
}

fn make_queue(aqm: &Aqm, limit: Limit) -> Box<dyn QueueDisc<Packet>> {
    match aqm {
        Aqm::DropTail => Box::new(DropTail::new(limit)),
    }
}

/// ACKs never meet a small buffer on the way back: the reverse queue is generous by design.
const REVERSE_QUEUE_PACKETS: u64 = 10_000;

pub fn build(sc: &Scenario) -> (Network, Vec<FlowRoutes>) {
    let b = &sc.bottleneck;
    let mut net = Network::default();
    let r1 = net.add_node("r1");
    let r2 = net.add_node("r2");
    let _ = (r1, r2);

    let limit = queue_limit(&b.buffer, b.rate, b.rtt);
    let fwd = Link::new(
        "bottleneck".into(),
        b.rate,
        b.delay,
        b.jitter,
        b.loss,
        make_queue(&b.aqm, limit),
        rng::link_streams(sc.seed, 0),
    );
    let rev = Link::new(
        "bottleneck-rev".into(),
        b.reverse_rate,
        b.delay,
        0,
        0.0,
        Box::new(DropTail::new(Limit::Packets(REVERSE_QUEUE_PACKETS))),
        rng::link_streams(sc.seed, 1),
    );
    assert_eq!(net.add_link(fwd), BOTTLENECK);
    assert_eq!(net.add_link(rev), BOTTLENECK_REVERSE);
    net.links[BOTTLENECK as usize].measure_sojourn = true;

    let mut routes = Vec::with_capacity(sc.flows.len());
    for (i, f) in sc.flows.iter().enumerate() {
        net.add_node(format!("s{i}"));
        net.add_node(format!("d{i}"));
        let one_way = f.rtt.saturating_sub(2 * b.delay);
        let there = one_way / 2;
        let back = one_way - there;
        let mut access = |name: String, delay| {
            let id = net.links.len() as u64;
            let queue = Box::new(DropTail::new(Limit::Packets(u64::MAX)));
            net.add_link(Link::new(name, f64::INFINITY, delay, 0, 0.0, queue, rng::link_streams(sc.seed, id)))
        };
        let up = access(format!("access-{}", f.name), there);
        let down = access(format!("access-rev-{}", f.name), back);
        let data = net.add_route(Route { links: vec![up, BOTTLENECK], flow: i as u32, to: Side::Receiver });
        let ack =
            net.add_route(Route { links: vec![BOTTLENECK_REVERSE, down], flow: i as u32, to: Side::Sender });
        routes.push(FlowRoutes { data, ack });
    }
    (net, routes)
}
