//! The event loop: builds the network and endpoints from a [`Scenario`] and dispatches events in
//! time order. What it measures (series at bin boundaries, the [`SimResult`]) is
//! `metrics::measurements`, which reads the endpoints through [`FlowView`]; chunk-by-chunk
//! transfers are `chunks.rs`.

use std::time::Instant;

use ccbench_cc::{build_controller, build_receiver_control};

use crate::endpoint::Endpoint;
use crate::engine::{Event, EventQueue, Timer, TimerKind};
use crate::metrics::measurements::{End, FlowMark, FlowView, Measurements, SenderProbe, TcpClosing};
use crate::metrics::{window_stats, Conservation, Recorder, SimResult};
use crate::net::build::{self, FlowRoutes};
use crate::net::{Env, InFlight, Network, Side};
use crate::packet::{Kind, Packet};
use crate::scenario::{FlowKind, Scenario};
use crate::tcp::{Phase, TcpReceiver, TcpSender};
use crate::trace::{wire::flow_wires, Captures};
use crate::traffic::{CbrReceiver, CbrSender, ChunkApp, Next};

mod chunks;

const SECOND: Nanos = 1_000_000_000;
/// Events between two looks up from the loop ([`Simulation::run_watched`]): a few milliseconds.
pub const WATCH_EVERY: u64 = 1 << 16;

pub type Nanos = u64;

// Endpoints sit inline in one Vec indexed by flow; boxing the TCP pair would add a pointer chase
// on every packet to save memory only in CBR-heavy runs.
#[allow(clippy::large_enum_variant)]
enum Endpoints {
    Tcp { tx: TcpSender, rx: TcpReceiver },
    Cbr { tx: CbrSender, rx: CbrReceiver },
}

/// A flow's two ends through [`Endpoint`], dispatched statically.
impl Endpoints {
    fn receive(&mut self, side: Side, pkt: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        match (self, side) {
            (Endpoints::Tcp { tx, .. }, Side::Sender) => tx.receive(pkt, now, out),
            (Endpoints::Tcp { rx, .. }, Side::Receiver) => rx.receive(pkt, now, out),
            (Endpoints::Cbr { tx, .. }, Side::Sender) => tx.receive(pkt, now, out),
            (Endpoints::Cbr { rx, .. }, Side::Receiver) => rx.receive(pkt, now, out),
        }
    }

    fn fire(&mut self, kind: TimerKind, now: Nanos, out: &mut Vec<Packet>) {
        match (self, kind.side()) {
            (Endpoints::Tcp { tx, .. }, Side::Sender) => tx.fire(kind, now, out),
            (Endpoints::Tcp { rx, .. }, Side::Receiver) => rx.fire(kind, now, out),
            (Endpoints::Cbr { tx, .. }, Side::Sender) => tx.fire(kind, now, out),
            (Endpoints::Cbr { rx, .. }, Side::Receiver) => rx.fire(kind, now, out),
        }
    }

    /// Every timer of both ends, the sender's first.
    fn timers(&mut self, each: &mut impl FnMut(&mut Timer, TimerKind)) {
        match self {
            Endpoints::Tcp { tx, rx } => {
                tx.timers(each);
                rx.timers(each);
            }
            Endpoints::Cbr { tx, rx } => {
                tx.timers(each);
                rx.timers(each);
            }
        }
    }
}

/// A failure while building the simulation from a validated scenario.
#[derive(Debug)]
pub struct BuildError {
    pub field: String,
    pub message: String,
}

pub struct Simulation<'a> {
    sc: &'a Scenario,
    now: Nanos,
    events: EventQueue,
    net: Network,
    routes: Vec<FlowRoutes>,
    ends: Vec<Endpoints>,
    out: Vec<Packet>,
    rec: Recorder,
    measured: Measurements,
    conservation: Conservation,
    /// Per flow: the current connection's number (chunked flows open fresh ones), what its
    /// closed connections counted, and whether its next chunk is scheduled.
    conn: Vec<u16>,
    carry: Vec<Carry>,
    chunk_pending: Vec<bool>,
    chunks: ChunkApp,
}

/// Counters of a flow's closed connections, added to its current one's.
#[derive(Clone, Copy, Default)]
struct Carry {
    mark: FlowMark,
    timeouts: u64,
    ecn_reductions: u64,
    loss_reductions: u64,
}

/// A TCP sender and receiver for flow `i`, with fresh controllers: at the start, and for
/// every fresh connection of a chunked flow.
fn tcp_endpoints(sc: &Scenario, flow: u32, chunks: &mut ChunkApp) -> Result<Endpoints, BuildError> {
    let (i, f) = (flow as usize, &sc.flows[flow as usize]);
    let cc = build_controller(&f.cca, &f.cc)
        .map_err(|e| BuildError { field: format!("flows[{i}].cc.{}", e.key), message: e.message })?;
    let wc = match &f.tcp.receiver_cca {
        Some(name) => Some(build_receiver_control(name, &f.tcp.receiver_cc).map_err(|e| BuildError {
            field: format!("flows[{i}].receiver_cc.{}", e.key),
            message: e.message,
        })?),
        None => None,
    };
    let mut tx = TcpSender::new(f.tcp.clone(), flow, cc, f.size);
    if chunks.is_chunked(flow) {
        tx = tx.with_app_limit(chunks.chunk_size(flow));
    }
    Ok(Endpoints::Tcp { tx, rx: TcpReceiver::new(f.tcp.clone(), flow, wc) })
}

impl<'a> Simulation<'a> {
    pub fn new(sc: &'a Scenario) -> Result<Self, BuildError> {
        let (net, routes) = build::build(sc);
        let mut chunks = ChunkApp::new(sc);
        let mut ends = Vec::with_capacity(sc.flows.len());
        for (i, f) in sc.flows.iter().enumerate() {
            let e = match f.kind {
                FlowKind::Tcp => tcp_endpoints(sc, i as u32, &mut chunks)?,
                FlowKind::Cbr => Endpoints::Cbr {
                    tx: CbrSender::new(f.cbr.clone(), i as u32, f.stop.unwrap_or(u64::MAX)),
                    rx: CbrReceiver::default(),
                },
            };
            ends.push(e);
        }
        let rec = window_stats::recorder(sc, net.links.len());
        let measured = Measurements::new(sc, net.links.len());
        Ok(Simulation {
            sc,
            now: 0,
            events: EventQueue::with_capacity(1024 + 16 * sc.flows.len()),
            net,
            routes,
            ends,
            out: Vec::with_capacity(64),
            rec,
            measured,
            conservation: Conservation::default(),
            conn: vec![0; sc.flows.len()],
            carry: vec![Carry::default(); sc.flows.len()],
            chunk_pending: vec![false; sc.flows.len()],
            chunks,
        })
    }

    /// Trace the links of `output.pcap` into `dir` (`crate::trace`); the caller closes the
    /// returned files after the run.
    pub fn capture(&mut self, dir: &std::path::Path) -> std::io::Result<Captures> {
        let sc = self.sc;
        let names: Vec<String> = sc.output.pcap.iter().map(|&l| sc.topology.links[l].name.clone()).collect();
        let captures = Captures::create(dir, &names, flow_wires(sc))?;
        // Topology link i is network link i (`net::build` adds them first, in order).
        for (&l, (_, writer)) in sc.output.pcap.iter().zip(captures.writers()) {
            self.net.links[l].capture = Some(writer);
        }
        Ok(captures)
    }

    pub fn run(self) -> SimResult {
        self.run_checked(0).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Run to the end, checking scoreboard invariants every `check_every` events (0 = never).
    /// The receivers' window invariants cost nothing to keep (each ACK records its first
    /// violation), so every run checks them at its end, whatever `check_every` says.
    pub fn run_checked(self, check_every: u64) -> Result<SimResult, String> {
        self.run_watched(check_every, &mut |_| true)
    }

    /// [`Self::run_checked`], looking up every [`WATCH_EVERY`] events: `keep_going(now)` may
    /// report progress, and returning false stops the run there (Ctrl-C). A stopped run is
    /// summarised over the time it simulated, as if that had been its duration, and marked
    /// `partial`. How often it looks depends only on the event count, so results stay
    /// bit-identical whatever the watcher does.
    pub fn run_watched(
        mut self,
        check_every: u64,
        keep_going: &mut dyn FnMut(Nanos) -> bool,
    ) -> Result<SimResult, String> {
        let wall = Instant::now();
        self.schedule_initial();
        let duration = self.sc.duration;
        let mut n = 0u64;
        let mut stopped = false;
        while let Some(t) = self.events.peek_time() {
            if t > duration {
                break;
            }
            let (t, ev) = self.events.pop().unwrap();
            self.now = t;
            self.dispatch(ev);
            n += 1;
            if check_every > 0 && n.is_multiple_of(check_every) {
                self.check_invariants().map_err(|e| format!("t={t}ns: {e}"))?;
            }
            if n.is_multiple_of(WATCH_EVERY) && !keep_going(t) {
                stopped = true;
                break;
            }
        }
        if !stopped {
            self.now = duration;
        }
        self.catch_up_links(self.now);
        self.check_receivers().map_err(|e| format!("at the end of the run: {e}"))?;
        Ok(self.finish(wall.elapsed().as_secs_f64()))
    }

    fn schedule_initial(&mut self) {
        let sc = self.sc;
        for (i, f) in sc.flows.iter().enumerate() {
            let flow = i as u32;
            if self.chunks.holds_slot(flow) {
                self.events.schedule(f.start, Event::Timer { flow, kind: TimerKind::Start });
            }
            if let Some(stop) = f.stop {
                self.events.schedule(stop, Event::Timer { flow, kind: TimerKind::Stop });
            }
        }
        for (i, c) in sc.topology.changes.iter().enumerate() {
            self.events.schedule(c.at, Event::LinkChange(i as u32));
        }
        if sc.warmup > 0 {
            self.events.schedule(sc.warmup, Event::WarmupEnd);
        } else {
            self.warm_up();
        }
        self.events.schedule(sc.output.bin.min(sc.duration), Event::Sample);
        if SECOND <= sc.duration {
            self.events.schedule(SECOND, Event::Second);
        }
    }

    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone(l) => {
                let Network { links, slab, .. } = &mut self.net;
                let env = Env { events: &mut self.events, obs: &mut self.rec, slab };
                links[l as usize].run_until(l, self.now, env)
            }
            Event::Arrive(l) => {
                let Network { links, slab, .. } = &mut self.net;
                let env = Env { events: &mut self.events, obs: &mut self.rec, slab };
                if let Some(pkt) = links[l as usize].arrive(l, self.now, env) {
                    self.forward(pkt);
                }
            }
            Event::Timer { flow, kind } => self.on_timer(flow, kind),
            Event::LinkChange(i) => self.change_link(i as usize),
            Event::Sample => {
                self.catch_up_links(before(self.now));
                let view = Flows { ends: &self.ends, carry: &self.carry, chunks: &self.chunks };
                self.measured.sample(self.sc, &view, &mut self.net.links, self.now);
                let next = self.now + self.sc.output.bin;
                if next <= self.sc.duration {
                    self.events.schedule(next, Event::Sample);
                }
            }
            Event::WarmupEnd => {
                self.catch_up_links(before(self.now));
                self.warm_up()
            }
            Event::Second => {
                let view = Flows { ends: &self.ends, carry: &self.carry, chunks: &self.chunks };
                self.measured.second(&view, self.ends.len());
                if self.now + SECOND <= self.sc.duration {
                    self.events.schedule(self.now + SECOND, Event::Second);
                }
            }
        }
    }

    /// A scheduled change of a link's rate or delay, applied before the link's own events due
    /// at the same instant (the change was scheduled first).
    fn change_link(&mut self, i: usize) {
        let c = &self.sc.topology.changes[i];
        let Network { links, slab, .. } = &mut self.net;
        for l in std::iter::once(c.link).chain(c.reverse) {
            let env = Env { events: &mut self.events, obs: &mut self.rec, slab };
            links[l].run_until(l as u32, before(self.now), env);
        }
        if let Some(rate) = c.rate {
            links[c.link].set_rate(rate);
        }
        if let Some(delay) = c.delay {
            for l in std::iter::once(c.link).chain(c.reverse) {
                links[l].set_delay(l as u32, delay, &mut self.events);
            }
        }
    }

    /// Links send ahead and catch up lazily (`ccbench_link::Link`): bring every link up to
    /// `upto` before reading them — just [`before`] now for a reader scheduled before the events
    /// due now (a sample), now itself at the run's end.
    fn catch_up_links(&mut self, upto: Nanos) {
        let Network { links, slab, .. } = &mut self.net;
        for (i, link) in links.iter_mut().enumerate() {
            link.run_until(i as u32, upto, Env { events: &mut self.events, obs: &mut self.rec, slab });
        }
    }

    /// A packet left a link: hand it to the next link of its route or to its endpoint.
    fn forward(&mut self, mut p: InFlight) {
        p.hop += 1;
        let next = self.net.hop(p.path, u32::from(p.hop));
        let Network { links, slab, .. } = &mut self.net;
        if let Some(l) = next {
            let env = Env { events: &mut self.events, obs: &mut self.rec, slab };
            links[l as usize].offer(l, p, self.now, env);
            return;
        }
        self.conservation.delivered += 1;
        let (flow, side) = (p.flow, p.to);
        let pkt = slab.deliver(&p);
        if p.conn != self.conn[flow as usize] {
            return; // left in flight by a connection this flow has since replaced
        }
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        match (&mut self.ends[flow as usize], side) {
            // A datagram's one-way delay is measured as it arrives.
            (Endpoints::Cbr { rx, .. }, Side::Receiver) => {
                if pkt.kind == Kind::Datagram {
                    let owd = rx.on_packet(pkt, now);
                    self.rec.record_owd(flow, now, owd);
                }
            }
            (end, side) => end.receive(side, pkt, now, &mut out),
        }
        if let (Endpoints::Tcp { tx, .. }, Side::Sender) = (&self.ends[flow as usize], side) {
            self.measured.observe_cwnd(flow as usize, tx.cc_state().cwnd);
        }
        self.inject(flow, side, &mut out);
        self.out = out;
        self.sync_timers(flow);
    }

    /// Send packets an endpoint produced; `from` is the side that produced them.
    fn inject(&mut self, flow: u32, from: Side, out: &mut Vec<Packet>) {
        let r = self.routes[flow as usize];
        let (route, to) = if from == Side::Sender { (r.data, Side::Receiver) } else { (r.ack, Side::Sender) };
        let first = self.net.hop(route, 0).expect("a route has at least one link");
        let conn = self.conn[flow as usize];
        let Network { links, slab, .. } = &mut self.net;
        for mut pkt in out.drain(..) {
            pkt.conn = conn;
            self.conservation.injected += 1;
            let p = slab.insert(pkt, route, to);
            let env = Env { events: &mut self.events, obs: &mut self.rec, slab };
            links[first as usize].offer(first, p, self.now, env);
        }
    }

    fn on_timer(&mut self, flow: u32, kind: TimerKind) {
        if kind == TimerKind::NextChunk {
            return self.next_chunk(flow);
        }
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        match (kind, &mut self.ends[flow as usize]) {
            (TimerKind::Start, Endpoints::Tcp { tx, .. }) => {
                self.chunks.opened(flow);
                tx.start(now, &mut out)
            }
            (TimerKind::Start, Endpoints::Cbr { tx, .. }) => tx.start(now, &mut out),
            (TimerKind::Stop, Endpoints::Tcp { tx, .. }) => tx.stop(now),
            (TimerKind::Stop, Endpoints::Cbr { tx, .. }) => tx.stop(now),
            (kind, end) => end.fire(kind, now, &mut out),
        }
        self.inject(flow, kind.side(), &mut out);
        self.out = out;
        self.sync_timers(flow);
    }

    fn arm(events: &mut EventQueue, timer: &mut Timer, flow: u32, kind: TimerKind) {
        if let Some(at) = timer.needs_event() {
            events.schedule(at, Event::Timer { flow, kind });
        }
    }

    fn sync_timers(&mut self, flow: u32) {
        self.check_chunk(flow);
        let ev = &mut self.events;
        self.ends[flow as usize].timers(&mut |timer, kind| Self::arm(ev, timer, flow, kind));
    }

    /// Check every TCP sender's scoreboard counters and every receiver's window (used by
    /// tests while stepping).
    pub fn check_invariants(&self) -> Result<(), String> {
        for e in &self.ends {
            if let Endpoints::Tcp { tx, .. } = e {
                if tx.phase == Phase::Established {
                    tx.check_invariants()?;
                }
            }
        }
        for link in &self.net.links {
            link.check_backlog()?;
        }
        let held: usize = self.net.links.iter().map(|l| l.packets_held()).sum();
        if held != self.net.slab.live() {
            return Err(format!("links hold {held} packets but the slab {}", self.net.slab.live()));
        }
        self.check_receivers()
    }

    /// No receiver moved its advertised right edge left or advertised more than its flow
    /// control allowed (so a window controller can only slow a flow down).
    fn check_receivers(&self) -> Result<(), String> {
        for e in &self.ends {
            if let Endpoints::Tcp { rx, .. } = e {
                rx.check_invariants()?;
            }
        }
        Ok(())
    }
}

impl Simulation<'_> {
    /// The measurement window opens (`metrics::measurements` marks the counters).
    fn warm_up(&mut self) {
        let view = Flows { ends: &self.ends, carry: &self.carry, chunks: &self.chunks };
        self.measured.warm_up(self.sc, &view, &mut self.net.links, self.now);
    }

    fn finish(mut self, wall_s: f64) -> SimResult {
        let view = Flows { ends: &self.ends, carry: &self.carry, chunks: &self.chunks };
        let end = End {
            sc: self.sc,
            links: &self.net.links,
            rec: &mut self.rec,
            conservation: self.conservation,
            events: self.events.processed(),
            now: self.now,
        };
        self.measured.finish(end, &view, wall_s)
    }
}

/// The flows' endpoints as the measurements read them.
struct Flows<'a> {
    ends: &'a [Endpoints],
    carry: &'a [Carry],
    chunks: &'a ChunkApp,
}

impl FlowView for Flows<'_> {
    fn mark(&self, i: usize) -> FlowMark {
        let carry = &self.carry[i].mark;
        match &self.ends[i] {
            Endpoints::Tcp { tx, rx } => FlowMark {
                delivered: carry.delivered + rx.delivered,
                wire_received: carry.wire_received + rx.wire_bytes_received,
                retransmits: carry.retransmits + tx.stats.retransmits,
                ecn_reductions: self.carry[i].ecn_reductions + tx.stats.ecn_reductions,
            },
            Endpoints::Cbr { rx, .. } => FlowMark {
                delivered: rx.delivered,
                wire_received: rx.wire_bytes_received,
                retransmits: 0,
                ecn_reductions: 0,
            },
        }
    }

    fn sender(&self, i: usize) -> Option<SenderProbe> {
        let Endpoints::Tcp { tx, .. } = &self.ends[i] else { return None };
        let st = tx.cc_state();
        Some(SenderProbe { cwnd: st.cwnd, ssthresh: st.ssthresh, srtt: tx.srtt(), inflight: tx.inflight() })
    }

    fn finished_at(&self, i: usize) -> Option<Nanos> {
        let Endpoints::Tcp { tx, .. } = &self.ends[i] else { return None };
        tx.fct.map(|d| tx.start_time + d)
    }

    fn closing(&self, i: usize) -> Option<TcpClosing> {
        let Endpoints::Tcp { tx, rx } = &self.ends[i] else { return None };
        let carry = self.carry[i];
        Some(TcpClosing {
            timeouts: carry.timeouts + tx.stats.timeouts,
            fct: tx.fct,
            ecn_reductions: carry.ecn_reductions + tx.stats.ecn_reductions,
            loss_reductions: carry.loss_reductions + tx.stats.loss_reductions,
            ecn_negotiated: tx.ecn_negotiated(),
            notes: rx.notes(),
        })
    }

    fn chunks(&self, i: usize) -> Option<(u64, u64)> {
        self.chunks.counts(i as u32)
    }
}

/// The last instant before `now`: how far a reader scheduled before the events due at `now` (a
/// sample, a change of a link) brings a link.
fn before(now: Nanos) -> Nanos {
    now.saturating_sub(1)
}
