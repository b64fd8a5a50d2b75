//! Every download the daemon watches: which connections its rules select, one [`Flow`] each,
//! and what it did with each packet. A packet it cannot read, or of a connection it does not
//! track, passes untouched; only an ACK of a tracked download is ever rewritten.

use std::collections::HashMap;
use std::net::IpAddr;

use ccbench_cc::{Nanos, ReceiveWindowControl};

use crate::flow::Flow;
use crate::packet::{parse, set_window, Segment};

/// Which downloads to make less-than-best-effort, by the remote (sending) end; an empty list
/// matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    pub remote_ports: Vec<u16>,
    pub remote_addrs: Vec<IpAddr>,
}

impl Rules {
    fn matches(&self, addr: IpAddr, port: u16) -> bool {
        (self.remote_ports.is_empty() || self.remote_ports.contains(&port))
            && (self.remote_addrs.is_empty() || self.remote_addrs.contains(&addr))
    }
}

/// Which way a packet crosses this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the network: the download's data.
    Incoming,
    /// From this host: its ACKs.
    Outgoing,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub packets: u64,
    pub unreadable: u64,
    pub rewritten: u64,
    pub flows_opened: u64,
    pub flows_closed: u64,
}

/// Local address and port, remote address and port.
type Key = (IpAddr, u16, IpAddr, u16);

struct Entry {
    flow: Flow,
    last_seen: Nanos,
}

pub struct FlowTable {
    rules: Rules,
    controller: Box<dyn Fn() -> Box<dyn ReceiveWindowControl>>,
    /// A flow not seen for this long is forgotten.
    idle: Nanos,
    flows: HashMap<Key, Entry>,
    pub counters: Counters,
}

impl FlowTable {
    pub fn new(
        rules: Rules,
        idle: Nanos,
        controller: Box<dyn Fn() -> Box<dyn ReceiveWindowControl>>,
    ) -> Self {
        FlowTable { rules, controller, idle, flows: HashMap::new(), counters: Counters::default() }
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// One packet as the queue hands it over; true if its window was rewritten in `buf`.
    pub fn handle(&mut self, buf: &mut [u8], dir: Direction, now: Nanos) -> bool {
        self.counters.packets += 1;
        let Ok(seg) = parse(buf) else {
            self.counters.unreadable += 1;
            return false;
        };
        let key = match dir {
            Direction::Incoming => (seg.ends.dst, seg.ends.dport, seg.ends.src, seg.ends.sport),
            Direction::Outgoing => (seg.ends.src, seg.ends.sport, seg.ends.dst, seg.ends.dport),
        };
        self.open_on_our_syn(&seg, dir, key);
        let Some(entry) = self.flows.get_mut(&key) else { return false };
        entry.last_seen = now;
        let field = match dir {
            Direction::Incoming => {
                entry.flow.on_incoming(&seg, now);
                None
            }
            Direction::Outgoing => entry.flow.on_outgoing(&seg, now),
        };
        if seg.rst {
            self.flows.remove(&key);
            self.counters.flows_closed += 1;
        }
        let Some(window) = field else { return false };
        set_window(buf, &seg, window);
        self.counters.rewritten += 1;
        true
    }

    /// This host's SYN (a download it opens) or SYN-ACK (one it accepts) starts tracking.
    fn open_on_our_syn(&mut self, seg: &Segment, dir: Direction, key: Key) {
        if dir == Direction::Outgoing && seg.syn && self.rules.matches(key.2, key.3) {
            let flow = Flow::new((self.controller)());
            self.flows.insert(key, Entry { flow, last_seen: 0 });
            self.counters.flows_opened += 1;
        }
    }

    /// Forget flows idle for longer than the table's limit (closed ones end here too).
    pub fn expire(&mut self, now: Nanos) {
        let idle = self.idle;
        let before = self.flows.len();
        self.flows.retain(|_, e| now.saturating_sub(e.last_seen) <= idle);
        self.counters.flows_closed += (before - self.flows.len()) as u64;
    }
}

#[cfg(test)]
mod tests;
