//! Every download the daemon watches: which connections its rules select, one [`Flow`] each,
//! and what it did with each packet. A packet it cannot read, or of a connection it does not
//! track, passes untouched; only an ACK of a tracked download is ever rewritten.

use std::collections::HashMap;
use std::net::IpAddr;

use ccbench_cc::{Nanos, ReceiveWindowControl};

use crate::flow::{Flow, FlowStatus};
use crate::packet::{parse_captured, set_window, Segment};

/// Which downloads to make less-than-best-effort, by the remote (sending) end's port and
/// address and this host's port; an empty list matches everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    pub remote_ports: Vec<u16>,
    pub remote_addrs: Vec<IpAddr>,
    pub local_ports: Vec<u16>,
}

impl Rules {
    fn matches(&self, key: &Key) -> bool {
        let any_or = |list: &[u16], port| list.is_empty() || list.contains(&port);
        any_or(&self.remote_ports, key.3)
            && any_or(&self.local_ports, key.1)
            && (self.remote_addrs.is_empty() || self.remote_addrs.contains(&key.2))
    }
}

/// The one change the daemon makes to a packet: its TCP window field, checksum updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rewrite {
    seg: Segment,
    pub window: u16,
}

impl Rewrite {
    pub fn apply(&self, buf: &mut [u8]) {
        set_window(buf, &self.seg, self.window);
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
pub type Key = (IpAddr, u16, IpAddr, u16);

struct Entry {
    flow: Flow,
    last_seen: Nanos,
}

pub struct FlowTable {
    rules: Rules,
    controller: Box<dyn Fn() -> Box<dyn ReceiveWindowControl> + Send>,
    /// A flow not seen for this long is forgotten.
    idle: Nanos,
    flows: HashMap<Key, Entry>,
    /// No flow's timer falls due before this.
    earliest_timer: Option<Nanos>,
    pub counters: Counters,
}

impl FlowTable {
    pub fn new(
        rules: Rules,
        idle: Nanos,
        controller: Box<dyn Fn() -> Box<dyn ReceiveWindowControl> + Send>,
    ) -> Self {
        FlowTable {
            rules,
            controller,
            idle,
            flows: HashMap::new(),
            earliest_timer: None,
            counters: Counters::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// One whole packet; true if its window was rewritten in `buf`.
    pub fn handle(&mut self, buf: &mut [u8], dir: Direction, now: Nanos) -> bool {
        let rewrite = self.inspect(buf, buf.len(), dir, now);
        rewrite.inspect(|r| r.apply(buf)).is_some()
    }

    /// One packet as the queue hands it over (its first `buf.len()` of `original_len` bytes):
    /// the rewrite its window needs, if any. The caller applies it to the whole packet.
    pub fn inspect(
        &mut self,
        buf: &[u8],
        original_len: usize,
        dir: Direction,
        now: Nanos,
    ) -> Option<Rewrite> {
        self.counters.packets += 1;
        let Ok(seg) = parse_captured(buf, original_len) else {
            self.counters.unreadable += 1;
            return None;
        };
        let key = match dir {
            Direction::Incoming => (seg.ends.dst, seg.ends.dport, seg.ends.src, seg.ends.sport),
            Direction::Outgoing => (seg.ends.src, seg.ends.sport, seg.ends.dst, seg.ends.dport),
        };
        self.open_on_our_syn(&seg, dir, key);
        let entry = self.flows.get_mut(&key)?;
        entry.last_seen = now;
        let field = match dir {
            Direction::Incoming => {
                entry.flow.on_incoming(&seg, now);
                None
            }
            Direction::Outgoing => entry.flow.on_outgoing(&seg, now),
        };
        if let Some(t) = entry.flow.next_timer() {
            self.earliest_timer = Some(self.earliest_timer.map_or(t, |e| e.min(t)));
        }
        if seg.rst {
            self.flows.remove(&key);
            self.counters.flows_closed += 1;
        }
        let window = field?;
        if buf.len() < original_len {
            return None; // only a whole packet can be rewritten (and outgoing ones always are)
        }
        self.counters.rewritten += 1;
        Some(Rewrite { seg, window })
    }

    /// This host's SYN (a download it opens) or SYN-ACK (one it accepts) starts tracking.
    fn open_on_our_syn(&mut self, seg: &Segment, dir: Direction, key: Key) {
        if dir == Direction::Outgoing && seg.syn && self.rules.matches(&key) {
            let flow = Flow::new((self.controller)());
            self.flows.insert(key, Entry { flow, last_seen: 0 });
            self.counters.flows_opened += 1;
        }
    }

    /// Each flow's controller timers that are due by `now`. The flows are scanned only when
    /// the earliest timer known (a lower bound kept per packet) has fallen due.
    pub fn fire_timers(&mut self, now: Nanos) {
        if self.earliest_timer.is_some_and(|t| t <= now) {
            for e in self.flows.values_mut() {
                e.flow.fire_timers(now);
            }
            self.earliest_timer = self.next_timer();
        }
    }

    /// The earliest controller timer of any flow.
    pub fn next_timer(&self) -> Option<Nanos> {
        self.flows.values().filter_map(|e| e.flow.next_timer()).min()
    }

    /// Every flow, in a stable order (by local port, then the rest of the key).
    pub fn status(&self) -> Vec<(Key, FlowStatus, Nanos)> {
        let mut rows: Vec<_> = self.flows.iter().map(|(k, e)| (*k, e.flow.status(), e.last_seen)).collect();
        rows.sort_by_key(|(k, _, _)| (k.1, k.0, k.2, k.3));
        rows
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
