//! The network: links and the static routes flows take over them.
//!
//! Nodes are the endpoints of links; a route is the ordered list of links from one host to
//! another. [`build`] turns a validated scenario's topology into this. Packets carry their path
//! and hop index, so forwarding is an array lookup.

use std::collections::HashMap;

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

/// A stored path: its links are `hops[start..start + len]` of the [`Network`], so forwarding a
/// packet reads two small arrays instead of following a route's own allocation. Flows whose
/// routes cross the same links share one path (every flow of a dumbbell whose RTT is the same),
/// so the table stays in cache however many flows there are.
#[derive(Clone, Copy, Debug)]
struct PathEntry {
    start: u32,
    len: u32,
}

#[derive(Default)]
pub struct Network {
    pub links: Vec<Link>,
    /// Every packet between its sender and its delivery or loss.
    pub slab: PacketSlab,
    paths: Vec<PathEntry>,
    /// Every path's links, one path after another.
    hops: Vec<u32>,
    /// Each path's id by its links, so equal routes share one.
    path_ids: HashMap<Vec<u32>, u32>,
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

    /// The path over `links`, in order: the one already stored for them, or a new one.
    pub fn add_path(&mut self, links: Vec<u32>) -> u32 {
        if let Some(&id) = self.path_ids.get(&links) {
            return id;
        }
        let (start, len) = (self.hops.len() as u32, links.len() as u32);
        self.hops.extend_from_slice(&links);
        self.paths.push(PathEntry { start, len });
        let id = (self.paths.len() - 1) as u32;
        self.path_ids.insert(links, id);
        id
    }

    /// The link at position `hop` of `path`, or None past its last link.
    pub fn hop(&self, path: u32, hop: u32) -> Option<u32> {
        let r = self.paths[path as usize];
        (hop < r.len).then(|| self.hops[(r.start + hop) as usize])
    }
}
