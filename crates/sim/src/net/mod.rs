//! The network: links and the static routes flows take over them.
//!
//! Nodes are the endpoints of links; a route is the ordered list of links from one host to
//! another. [`build`] turns a validated scenario's topology into this. Packets carry their route and hop index, so forwarding is an array lookup.

pub mod build;
pub mod link;

pub use link::{Link, LinkCounters, SojournRecorder};

/// Which end of a flow a route delivers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Sender,
    Receiver,
}

#[derive(Clone, Debug)]
pub struct Route {
    pub links: Vec<u32>,
    pub flow: u32,
    pub to: Side,
}

#[derive(Default)]
pub struct Network {
    pub links: Vec<Link>,
    pub routes: Vec<Route>,
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
        self.routes.push(route);
        (self.routes.len() - 1) as u32
    }
}
