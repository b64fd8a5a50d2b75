//! Chunk-by-chunk transfers and upload slots, the BitTorrent-like application of the fLEDBAT
//! paper (Section 7.1, L290; Section 9, L354): a flow writes one chunk, waits for its last
//! ACK (no pipelining, so the sender idles about one RTT), pauses `chunk_gap`, then writes the
//! next. With probability P_P (`persistence`) the next chunk goes over the same connection,
//! congestion state kept; otherwise over a fresh connection, with a fresh window. When the
//! sending node has `upload_slots`, its chunked flows are its neighbours: only that many send
//! at once, and a fresh connection goes to a neighbour picked at random among the idle ones.
//!
//! This module only decides; the event loop (`world.rs`) opens connections and writes chunks.

use rand::Rng;

use crate::rng::{self, SimRng};
use crate::scenario::{ChunkSize, Chunks, Scenario};

struct Plan {
    spec: Chunks,
    /// The flow's `start`: before it, the neighbour is not there to be picked.
    start: u64,
    rng: SimRng,
    /// When the chunk in progress started (for `interval`).
    chunk_started: u64,
    group: Option<usize>,
    active: bool,
    chunks_done: u64,
    connections: u64,
}

/// The flows sharing one node's upload slots.
struct SlotGroup {
    flows: Vec<u32>,
    slots: usize,
}

/// What follows a finished chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Write the next chunk on the same connection.
    Same,
    /// Open a fresh connection on this flow (possibly another neighbour than the last).
    Fresh(u32),
}

#[derive(Default)]
pub struct ChunkApp {
    plans: Vec<Option<Plan>>,
    groups: Vec<SlotGroup>,
}

impl ChunkApp {
    pub fn new(sc: &Scenario) -> Self {
        let mut groups: Vec<SlotGroup> = Vec::new();
        let mut group_of_node = vec![None; sc.topology.nodes.len()];
        let mut plans = Vec::with_capacity(sc.flows.len());
        for (i, f) in sc.flows.iter().enumerate() {
            let Some(spec) = f.chunks.clone() else {
                plans.push(None);
                continue;
            };
            let group = sc.topology.upload_slots.get(f.from).copied().flatten().map(|slots| {
                *group_of_node[f.from].get_or_insert_with(|| {
                    groups.push(SlotGroup { flows: Vec::new(), slots: slots as usize });
                    groups.len() - 1
                })
            });
            if let Some(g) = group {
                groups[g].flows.push(i as u32);
            }
            let rng = rng::stream(sc.seed, "chunks", i as u64);
            plans.push(Some(Plan {
                spec,
                start: f.start,
                chunk_started: f.start,
                rng,
                group,
                active: group.is_none(),
                chunks_done: 0,
                connections: 0,
            }));
        }
        let mut app = ChunkApp { plans, groups };
        app.pick_initial(sc.seed);
        app
    }

    /// Each node's first senders: `slots` of its neighbours, at random.
    fn pick_initial(&mut self, seed: u64) {
        for (g, group) in self.groups.iter().enumerate() {
            let mut rng = rng::stream(seed, "upload-slots", g as u64);
            let mut idle = group.flows.clone();
            for _ in 0..group.slots.min(idle.len()) {
                let f = idle.swap_remove(rng.gen_range(0..idle.len()));
                self.plans[f as usize].as_mut().expect("grouped flows are chunked").active = true;
            }
        }
    }

    pub fn is_chunked(&self, flow: u32) -> bool {
        self.plans[flow as usize].is_some()
    }

    /// Whether the flow holds a slot: it starts at its start time, and goes on after each
    /// chunk (an idle neighbour waits until another gives its slot up).
    pub fn holds_slot(&self, flow: u32) -> bool {
        self.plans[flow as usize].as_ref().is_none_or(|p| p.active)
    }

    /// When the next chunk of `flow` is due, its last one having finished at `now`: after the
    /// gap, or one interval after the last chunk's start (at once if that has passed).
    pub fn next_due(&mut self, flow: u32, now: u64) -> u64 {
        let Some(p) = self.plans[flow as usize].as_mut() else { return now };
        match p.spec.interval {
            Some((lo, hi)) => (p.chunk_started + p.rng.gen_range(lo..=hi)).max(now),
            None => now + p.spec.gap,
        }
    }

    /// A chunk of `flow` starts now.
    pub fn started(&mut self, flow: u32, now: u64) {
        if let Some(p) = self.plans[flow as usize].as_mut() {
            p.chunk_started = now;
        }
    }

    /// The size of the flow's next chunk.
    pub fn chunk_size(&mut self, flow: u32) -> u64 {
        let p = self.plans[flow as usize].as_mut().expect("chunked flow");
        match p.spec.size {
            ChunkSize::Fixed(n) => n,
            ChunkSize::Uniform(lo, hi) => p.rng.gen_range(lo..=hi),
        }
    }

    /// A chunk of `flow` was fully acknowledged at `now`: same connection (P_P) or a fresh one.
    pub fn chunk_done(&mut self, flow: u32, now: u64) -> Next {
        let p = self.plans[flow as usize].as_mut().expect("chunked flow");
        p.chunks_done += 1;
        if rng::unit(&mut p.rng) < p.spec.persistence {
            return Next::Same;
        }
        let next = match p.group {
            Some(g) => self.switch_neighbour(g, flow, now),
            None => flow,
        };
        Next::Fresh(next)
    }

    /// `flow` gives up its slot to an idle neighbour drawn at random among those already started
    /// (itself when there is none).
    fn switch_neighbour(&mut self, g: usize, flow: u32, now: u64) -> u32 {
        let idle = |f: u32| self.plans[f as usize].as_ref().is_some_and(|p| !p.active && p.start <= now);
        let idle: Vec<u32> = self.groups[g].flows.iter().copied().filter(|&f| f != flow && idle(f)).collect();
        if idle.is_empty() {
            return flow;
        }
        let p = self.plans[flow as usize].as_mut().expect("chunked flow");
        let next = idle[p.rng.gen_range(0..idle.len())];
        p.active = false;
        self.plans[next as usize].as_mut().expect("chunked flow").active = true;
        next
    }

    /// The event loop opened a connection on `flow`.
    pub fn opened(&mut self, flow: u32) {
        if let Some(p) = self.plans[flow as usize].as_mut() {
            p.connections += 1;
        }
    }

    /// Chunks completed and connections opened so far (None for other flows).
    pub fn counts(&self, flow: u32) -> Option<(u64, u64)> {
        self.plans[flow as usize].as_ref().map(|p| (p.chunks_done, p.connections))
    }
}
