//! The network: links and the static routes flows take over them.
//!
//! Nodes are the endpoints of links; a route is the ordered list of links from one host to
//! another. [`build`] turns a validated scenario's topology into this. Packets carry their route and hop index, so forwarding is an array lookup.

pub mod build;
pub mod link;
pub mod slab;

pub use link::{Env, Link, LinkCounters, LinkObserver};
pub use slab::{InFlight, PacketSlab};

/// Which end of a flow a route delivers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Sender,
    Receiver,
}

/// A route as [`build`] makes it: its links in order, the flow and the end it delivers to.
#[derive(Clone, Debug)]
pub struct Route {
    pub links: Vec<u32>,
    pub flow: u32,
    pub to: Side,
}

/// A stored route: its links are `hops[start..start + len]` of the [`Network`], so forwarding a
/// packet reads two small arrays instead of following a route's own allocation (one cache miss
/// fewer per hop with thousands of flows).
#[derive(Clone, Copy, Debug)]
pub struct RouteEntry {
    start: u32,
    len: u32,
    pub flow: u32,
    pub to: Side,
}

#[derive(Default)]
pub struct Network {
    pub links: Vec<Link>,
    /// Every packet between its sender and its delivery or loss.
    pub slab: PacketSlab,
    pub routes: Vec<RouteEntry>,
    /// Every route's links, one route after another.
    hops: Vec<u32>,
    /// Node names (hosts and routers), for descriptions and plots.
    pub nodes: Vec<String>,
}

impl Network {
    pub fn add_node(&mut self, name: impl Into<String>) -> u32 {
        self.nodes.push(name.into());
        (self.nodes.len() - 1) as u32
    }

    pub fn add_link(&mut self, link: Link) -> u32 {
        self.links.push(link);
        (self.links.len() - 1) as u32
    }

    pub fn add_route(&mut self, route: Route) -> u32 {
        let (start, len) = (self.hops.len() as u32, route.links.len() as u32);
        self.hops.extend_from_slice(&route.links);
        self.routes.push(RouteEntry { start, len, flow: route.flow, to: route.to });
        (self.routes.len() - 1) as u32
    }

    /// The link at position `hop` of `route`, or None past its last link.
    pub fn hop(&self, route: u32, hop: u32) -> Option<u32> {
        let r = self.routes[route as usize];
        (hop < r.len).then(|| self.hops[(r.start + hop) as usize])
    }
}
