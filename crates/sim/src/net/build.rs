//! The simulated network of a validated scenario: one [`Link`] per directional link of the
//! topology, then each flow's access links and its two routes.
//!
//! A flow's access delay (its RTT beyond its path's links) sits on infinitely fast links at the
//! sender, half on the way out and the rest on the way back, so the only queues a flow meets are
//! the topology's. The outgoing one also carries the sending host's timing noise (`host_noise`).
//!
//! An access link without noise is a pure delay line: nothing queues, nothing is lost, and a
//! constant delay keeps whatever enters in order. So flows with the same delay share one per
//! direction: ten thousand flows of one RTT keep two delay lines instead of twenty thousand
//! links, each with its own pipe to miss in the cache. Only a noisy link is the flow's own: its
//! jitter floor must not couple flows.

use std::collections::HashMap;

use ccbench_aqm::{DropTail, Limit, Nanos};

use super::{Link, Network};
use crate::rng;
pub use crate::scenario::link_model::link_model;
use crate::scenario::Scenario;

/// The paths of one flow's packets (ids in the network's path table).
#[derive(Clone, Copy, Debug)]
pub struct FlowRoutes {
    /// Sender → receiver.
    pub data: u32,
    /// Receiver → sender.
    pub ack: u32,
}

pub fn build(sc: &Scenario) -> (Network, Vec<FlowRoutes>) {
    let topo = &sc.topology;
    let mut net = Network::default();
    for n in &topo.nodes {
        net.add_node(n.clone());
    }
    for (i, l) in topo.links.iter().enumerate() {
        let mut model = link_model(l, sc.seed, i).expect("queues are validated with the scenario");
        model.window_start = sc.warmup;
        net.add_link(Link::new(model));
    }
    // Delay lines shared by noise-free access links: (outgoing, delay) → link. A shared line
    // draws nothing (no jitter, no loss), so the streams of the flow that made it are never used.
    let mut shared: HashMap<(bool, Nanos), u32> = HashMap::new();
    let routes = sc.flows.iter().enumerate().map(|(i, f)| {
        let there = f.access_delay / 2;
        let back = f.access_delay - there;
        // The sending host's timing noise rides on its access link as non-reordering jitter, drawn
        // from a stream of its own so that switching it on moves no other draw.
        let mut access = |name: String, delay, jitter| {
            let queue = Box::new(DropTail::new(Limit::Packets(u64::MAX)));
            let streams =
                (rng::stream(sc.seed, "access-loss", i as u64), rng::stream(sc.seed, "host-noise", i as u64));
            net.add_link(Link::new(ccbench_link::Link::new(
                name,
                f64::INFINITY,
                delay,
                jitter,
                0.0,
                queue,
                streams,
            )))
        };
        let up = if f.host_noise > 0 {
            Some(access(format!("access-{}", f.name), there, f.host_noise))
        } else {
            (there > 0).then(|| {
                *shared.entry((true, there)).or_insert_with(|| access(format!("access-{there}ns"), there, 0))
            })
        };
        let down = (back > 0).then(|| {
            *shared.entry((false, back)).or_insert_with(|| access(format!("access-rev-{back}ns"), back, 0))
        });
        let as_ids = |path: &[usize]| path.iter().map(|&l| l as u32).collect::<Vec<_>>();
        let data_links = up.into_iter().chain(as_ids(&f.path)).collect();
        let ack_links = as_ids(&f.ack_path).into_iter().chain(down).collect();
        let data = net.add_path(data_links);
        let ack = net.add_path(ack_links);
        FlowRoutes { data, ack }
    });
    let routes = routes.collect();
    (net, routes)
}
