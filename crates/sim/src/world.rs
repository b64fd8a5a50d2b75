//! The event loop: builds the network and endpoints from a [`Scenario`], dispatches events in
//! time order, samples time series at bin boundaries and produces the [`SimResult`].

use std::time::Instant;

use ccbench_cc::{build_controller, build_receiver_control, is_less_than_best_effort};

use crate::endpoint::Endpoint;
use crate::engine::{Event, EventQueue, Timer, TimerKind};
use crate::fairness::{lbe_share, SecondMarks};
use crate::metrics::{
    flow_summary, jain_index, link_summary, run_summary, window_stats, Conservation, FlowSeries, FlowWindow,
    LinkSeries, LinkSummary, LinkWindow, Recorder, RunTotals, Sharing, SimResult, Swings,
};
use crate::net::build::{self, FlowRoutes};
use crate::net::{Env, InFlight, LinkCounters, Network, Side};
use crate::packet::{Kind, Packet};
use crate::scenario::{FlowKind, Scenario};
use crate::tcp::{Phase, TcpReceiver, TcpSender};
use crate::trace::{wire::flow_wires, Captures};
use crate::traffic::{CbrReceiver, CbrSender, ChunkApp, Next};

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

/// Cumulative per-flow counters at the previous sample and at the warm-up instant.
#[derive(Clone, Copy, Default)]
struct FlowMark {
    delivered: u64,
    wire_received: u64,
    retransmits: u64,
}

struct Marks {
    flows: Vec<FlowMark>,
    links: Vec<(LinkCounters, u64, (u128, u128))>,
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
    last_sample: Marks,
    warm: Option<Marks>,
    conservation: Conservation,
    flows: FlowSeries,
    links: LinkSeries,
    /// Per flow: the current connection's number (chunked flows open fresh ones), what its
    /// closed connections counted, and whether its next chunk is scheduled.
    conn: Vec<u16>,
    carry: Vec<Carry>,
    chunk_pending: Vec<bool>,
    chunks: ChunkApp,
    seconds: SecondMarks,
    /// Per TCP flow, its cwnd's swings since the warm-up (None before it, and for CBR).
    swings: Vec<Option<Swings>>,
    /// Per flow, its losses counted at the last sample.
    sampled_losses: Vec<u64>,
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
        let marks = Marks {
            flows: vec![FlowMark::default(); sc.flows.len()],
            links: vec![(LinkCounters::default(), 0, (0, 0)); net.links.len()],
        };
        Ok(Simulation {
            sc,
            now: 0,
            events: EventQueue::with_capacity(1024 + 16 * sc.flows.len()),
            net,
            routes,
            ends,
            out: Vec::with_capacity(64),
            rec,
            last_sample: marks,
            warm: None,
            conservation: Conservation::default(),
            flows: FlowSeries::default(),
            links: LinkSeries::default(),
            conn: vec![0; sc.flows.len()],
            carry: vec![Carry::default(); sc.flows.len()],
            chunk_pending: vec![false; sc.flows.len()],
            chunks,
            seconds: SecondMarks::new(sc.flows.len()),
            swings: vec![None; sc.flows.len()],
            sampled_losses: vec![0; sc.flows.len()],
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
                self.sample();
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
                let marks =
                    self.ends.iter().zip(&self.carry).map(|(e, c)| Self::flow_mark(e, c).wire_received);
                self.seconds.push(marks);
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
        let route = self.net.routes[p.path as usize];
        let Network { links, slab, .. } = &mut self.net;
        if let Some(l) = next {
            let env = Env { events: &mut self.events, obs: &mut self.rec, slab };
            links[l as usize].offer(l, p, self.now, env);
            return;
        }
        self.conservation.delivered += 1;
        let (flow, side) = (route.flow, route.to);
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
            if let Some(s) = &mut self.swings[flow as usize] {
                s.observe(tx.cc_state().cwnd);
            }
        }
        self.inject(flow, side, &mut out);
        self.out = out;
        self.sync_timers(flow);
    }

    /// Send packets an endpoint produced; `from` is the side that produced them.
    fn inject(&mut self, flow: u32, from: Side, out: &mut Vec<Packet>) {
        let r = self.routes[flow as usize];
        let route = if from == Side::Sender { r.data } else { r.ack };
        let first = self.net.hop(route, 0).expect("a route has at least one link");
        let conn = self.conn[flow as usize];
        let Network { links, slab, .. } = &mut self.net;
        for mut pkt in out.drain(..) {
            pkt.path = route;
            pkt.hop = 0;
            pkt.conn = conn;
            self.conservation.injected += 1;
            let p = slab.insert(pkt);
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

    // ----- chunk-by-chunk transfers -----------------------------------------------------------

    /// A chunked flow whose chunk is fully acknowledged gets its next one after the gap.
    fn check_chunk(&mut self, flow: u32) {
        let i = flow as usize;
        // An idle neighbour's connection is finished too, but it has no slot to send in.
        if self.chunk_pending[i] || !self.chunks.is_chunked(flow) || !self.chunks.holds_slot(flow) {
            return;
        }
        if let Endpoints::Tcp { tx, .. } = &self.ends[i] {
            if tx.phase == Phase::Finished {
                self.chunk_pending[i] = true;
                let at = self.chunks.next_due(flow, self.now);
                self.events.schedule(at, Event::Timer { flow, kind: TimerKind::NextChunk });
            }
        }
    }

    fn next_chunk(&mut self, flow: u32) {
        self.chunk_pending[flow as usize] = false;
        if self.sc.flows[flow as usize].stop.is_some_and(|stop| self.now >= stop) {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        let next = match self.chunks.chunk_done(flow, self.now) {
            Next::Same => {
                let bytes = self.chunks.chunk_size(flow);
                if let Endpoints::Tcp { tx, .. } = &mut self.ends[flow as usize] {
                    tx.write(bytes, self.now, &mut out);
                }
                flow
            }
            Next::Fresh(next) => {
                self.reconnect(next);
                self.chunks.opened(next);
                if let Endpoints::Tcp { tx, .. } = &mut self.ends[next as usize] {
                    tx.start(self.now, &mut out);
                }
                next
            }
        };
        self.chunks.started(next, self.now);
        self.inject(next, Side::Sender, &mut out);
        self.out = out;
        self.sync_timers(next);
    }

    /// Replace `flow`'s connection by a fresh one, keeping what the old one counted.
    fn reconnect(&mut self, flow: u32) {
        let i = flow as usize;
        let fresh =
            tcp_endpoints(self.sc, flow, &mut self.chunks).expect("controllers were built once already");
        let old = std::mem::replace(&mut self.ends[i], fresh);
        if let Endpoints::Tcp { tx, rx } = &old {
            let c = &mut self.carry[i];
            c.mark.delivered += rx.delivered;
            c.mark.wire_received += rx.wire_bytes_received;
            c.mark.retransmits += tx.stats.retransmits;
            c.timeouts += tx.stats.timeouts;
            c.ecn_reductions += tx.stats.ecn_reductions;
            c.loss_reductions += tx.stats.loss_reductions;
        }
        self.conn[i] = self.conn[i].wrapping_add(1);
    }

    // ----- measurements ---------------------------------------------------------------------

    /// Per flow, when it stops taking capacity: its `stop`, its last byte acknowledged, or the
    /// end of the run.
    fn active_ends(&self, sc: &Scenario) -> Vec<Nanos> {
        let end = sc.duration;
        let finished = |e: &Endpoints| match e {
            Endpoints::Tcp { tx, .. } => tx.fct.map(|d| tx.start_time + d),
            Endpoints::Cbr { .. } => None,
        };
        let ends = sc.flows.iter().zip(&self.ends);
        ends.map(|(f, e)| finished(e).unwrap_or(end).min(f.stop.unwrap_or(end)).min(end)).collect()
    }

    fn flow_mark(e: &Endpoints, carry: &Carry) -> FlowMark {
        match e {
            Endpoints::Tcp { tx, rx } => FlowMark {
                delivered: carry.mark.delivered + rx.delivered,
                wire_received: carry.mark.wire_received + rx.wire_bytes_received,
                retransmits: carry.mark.retransmits + tx.stats.retransmits,
            },
            Endpoints::Cbr { rx, .. } => {
                FlowMark { delivered: rx.delivered, wire_received: rx.wire_bytes_received, retransmits: 0 }
            }
        }
    }

    /// The measurement window opens: counters are marked, and the least backlog and the cwnd
    /// swings start afresh.
    fn warm_up(&mut self) {
        self.warm = Some(self.marks());
        self.net.links.iter_mut().for_each(|l| l.reset_min_backlog());
        for (i, e) in self.ends.iter().enumerate() {
            if let Endpoints::Tcp { tx, .. } = e {
                let f = &self.sc.flows[i];
                self.swings[i] = Some(Swings::new(2 * f.tcp.mss as u64, tx.cc_state().cwnd));
            }
        }
    }

    fn marks(&self) -> Marks {
        Marks {
            flows: self.ends.iter().zip(&self.carry).map(|(e, c)| Self::flow_mark(e, c)).collect(),
            links: self
                .net
                .links
                .iter()
                .map(|l| (l.counters, l.busy_until(self.now), l.queue_integrals(self.now)))
                .collect(),
        }
    }

    fn sample(&mut self) {
        let now = self.now;
        let t = now as f64 / 1e9;
        let bin_s = self.sc.output.bin as f64 / 1e9;
        let mbps = |bytes: u64| bytes as f64 * 8.0 / bin_s / 1e6;
        for (i, e) in self.ends.iter().enumerate() {
            let m = Self::flow_mark(e, &self.carry[i]);
            let prev = self.last_sample.flows[i];
            let f = &mut self.flows;
            f.t_s.push(t);
            f.flow.push(i as u32);
            f.goodput_mbps.push(mbps(m.delivered - prev.delivered));
            f.throughput_mbps.push(mbps(m.wire_received - prev.wire_received));
            f.retransmits.push(m.retransmits - prev.retransmits);
            let lost = {
                let fl = &self.sc.flows[i];
                fl.path
                    .iter()
                    .chain(&fl.ack_path)
                    .map(|&l| self.net.links[l].losses_of(i as u32))
                    .sum::<u64>()
            };
            f.losses.push(lost - self.sampled_losses[i]);
            self.sampled_losses[i] = lost;
            match e {
                Endpoints::Tcp { tx, .. } => {
                    let st = tx.cc_state();
                    f.cwnd_bytes.push(st.cwnd as f64);
                    f.ssthresh_bytes.push(if st.ssthresh == u64::MAX {
                        f64::NAN
                    } else {
                        st.ssthresh as f64
                    });
                    f.srtt_ms.push(tx.srtt().map_or(f64::NAN, |r| r as f64 / 1e6));
                    f.inflight_bytes.push(tx.inflight() as f64);
                }
                Endpoints::Cbr { .. } => {
                    f.cwnd_bytes.push(f64::NAN);
                    f.ssthresh_bytes.push(f64::NAN);
                    f.srtt_ms.push(f64::NAN);
                    f.inflight_bytes.push(f64::NAN);
                }
            }
            self.last_sample.flows[i] = m;
        }
        let bin = self.sc.output.bin as f64;
        for (i, l) in self.net.links.iter_mut().enumerate() {
            if !l.rate().is_finite() {
                continue;
            }
            let probability = l.signal_probability(now).unwrap_or(f64::NAN);
            let (prev_c, prev_busy, (prev_qb, prev_qp)) = self.last_sample.links[i];
            let busy = l.busy_until(now);
            let (qb, qp) = l.queue_integrals(now);
            let s = &mut self.links;
            s.t_s.push(t);
            s.link.push(i as u32);
            s.queue_bytes.push((qb - prev_qb) as f64 / bin);
            s.queue_packets.push((qp - prev_qp) as f64 / bin);
            s.utilization.push(if l.rate().is_finite() { (busy - prev_busy) as f64 / bin } else { f64::NAN });
            s.throughput_mbps.push(mbps(l.counters.bytes_departed - prev_c.bytes_departed));
            s.drops.push(l.counters.drops() - prev_c.drops());
            s.arrivals.push(l.counters.arrivals - prev_c.arrivals);
            s.random_losses.push(l.counters.random_losses - prev_c.random_losses);
            s.ecn_marks.push(l.counters.ecn_marks - prev_c.ecn_marks);
            s.departed_bytes.push(l.counters.bytes_departed);
            s.aqm_probability.push(probability);
            self.last_sample.links[i] = (l.counters, busy, (qb, qp));
        }
    }

    fn finish(mut self, wall_s: f64) -> SimResult {
        // A run stopped early is summarised as the scenario cut at the time it reached.
        let partial = self.now < self.sc.duration;
        let cut;
        let sc: &Scenario = if partial {
            cut = self.sc.cut_at(self.now);
            &cut
        } else {
            self.sc
        };
        let warm = self.warm.take().unwrap_or_else(|| self.marks());
        let active_ends = self.active_ends(sc);
        let (rate_std, rows) = window_stats::per_flow_rows(sc, &self.flows, &active_ends);
        let mut flows = Vec::with_capacity(self.ends.len());
        let mut shares = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            let (mut w, share) = self.flow_window(sc, i, &warm, active_ends[i]);
            w.throughput_std_mbps = rate_std[i];
            w.reallocations = window_stats::flow_reallocations(sc, i, &active_ends, &rows);
            flows.push(flow_summary(sc, f, w));
            shares.extend(share);
        }
        let links = self.link_windows(sc, &warm, &shares);

        self.conservation.dropped =
            self.net.links.iter().map(|l| l.counters.drops() + l.counters.random_losses).sum();
        self.conservation.in_network = self.net.links.iter().map(|l| l.packets_held() as u64).sum();
        let totals = RunTotals {
            sharing: self.sharing(sc, &shares.iter().collect::<Vec<_>>()),
            events: self.events.processed(),
            packets: self.conservation.injected,
            wall_s,
            sim_s: sc.duration as f64 / 1e9,
            partial,
        };
        let summary = run_summary(sc, self.sc.duration as f64 / 1e9, flows, links, &self.flows, totals);
        SimResult {
            summary,
            flow_names: sc.flows.iter().map(|f| f.name.clone()).collect(),
            link_names: self.net.links.iter().map(|l| l.name.clone()).collect(),
            flows: self.flows,
            links: self.links,
            sojourn: std::mem::take(&mut self.rec.sojourn),
            owd: std::mem::take(&mut self.rec.owd),
            conservation: self.conservation,
        }
    }

    /// What flow `i` did in the measurement window (its active part; a flow that ended before
    /// the window is measured over its whole life instead), and its share of the wire for the
    /// sharing metrics if it is a TCP flow. Its rate's deviation and reallocations are filled
    /// in by the caller.
    fn flow_window(
        &self,
        sc: &Scenario,
        i: usize,
        warm: &Marks,
        active_end: Nanos,
    ) -> (FlowWindow, Option<Share>) {
        let (f, e, carry) = (&sc.flows[i], &self.ends[i], self.carry[i]);
        let m = Self::flow_mark(e, &carry);
        let w = if active_end <= sc.warmup { FlowMark::default() } else { warm.flows[i] };
        let (bytes, wire) = (m.delivered - w.delivered, m.wire_received - w.wire_received);
        let span = if active_end <= sc.warmup {
            active_end.saturating_sub(f.start)
        } else {
            active_end - sc.warmup.max(f.start)
        };
        let rate = |b: u64| if span > 0 { b as f64 * 8.0 / (span as f64 / 1e9) / 1e6 } else { 0.0 };
        let chunks = self.chunks.counts(i as u32);
        let mut window = FlowWindow {
            goodput_mbps: rate(bytes),
            throughput_mbps: rate(wire),
            throughput_std_mbps: f64::NAN,
            retransmits: m.retransmits - w.retransmits,
            timeouts: 0,
            fct_s: None,
            bytes_delivered: m.delivered,
            ecn_reductions: 0,
            loss_reductions: 0,
            ecn_negotiated: false,
            owd_ms: None,
            packets_lost: None,
            chunks,
            notes: Vec::new(),
            losses: self.rec.flow_losses[i].events(),
            oscillation: None,
            reallocations: Vec::new(),
        };
        match e {
            Endpoints::Tcp { tx, rx } => {
                let buffer = window_stats::bottleneck_buffer_bytes(sc, i);
                window.timeouts = carry.timeouts + tx.stats.timeouts;
                window.fct_s = tx.fct.map(|d| d as f64 / 1e9);
                window.ecn_reductions = carry.ecn_reductions + tx.stats.ecn_reductions;
                window.loss_reductions = carry.loss_reductions + tx.stats.loss_reductions;
                window.ecn_negotiated = tx.ecn_negotiated();
                window.notes = rx.notes();
                window.oscillation = self.swings[i].as_ref().zip(buffer).and_then(|(s, b)| s.relative_to(b));
                let lbe = is_less_than_best_effort(&f.cca)
                    || f.tcp.receiver_cca.as_deref().is_some_and(is_less_than_best_effort);
                (window, Some(Share { flow: i, rate: rate(wire), bytes: wire, lbe }))
            }
            Endpoints::Cbr { .. } => {
                window.owd_ms = self.rec.window_owds[i].percentiles(1e-6);
                window.packets_lost = Some(self.net.links.iter().map(|l| l.losses_of(i as u32)).sum());
                (window, None)
            }
        }
    }

    /// Each link with a queue over the measurement window (access links have none: nothing to
    /// report), with the sharing among the TCP `shares` crossing it.
    fn link_windows(&self, sc: &Scenario, warm: &Marks, shares: &[Share]) -> Vec<LinkSummary> {
        let end = sc.duration;
        let window = (end - sc.warmup.min(end)).max(1) as f64 / 1e9;
        let mut links = Vec::with_capacity(self.net.links.len());
        for (i, l) in self.net.links.iter().enumerate() {
            if !l.rate().is_finite() {
                continue;
            }
            let (wc, wbusy, (wqb, wqp)) = warm.links[i];
            let (qb, qp) = l.queue_integrals(end);
            let (fill_mean, fill_min) =
                window_stats::queue_fill(sc, i, l, (qb - wqb, qp - wqp), end - sc.warmup.min(end));
            let crossing: Vec<&Share> =
                shares.iter().filter(|s| sc.flows[s.flow].path.contains(&i)).collect();
            let mut counters = l.counters.since(&wc);
            counters.busy_ns = l.busy_until(end) - wbusy;
            links.push(link_summary(LinkWindow {
                spec: &sc.topology.links[i],
                nodes: &sc.topology.nodes,
                rate: l.rate(),
                counters,
                window_s: window,
                queue_delay: self.rec.window_sojourns[i].percentiles(1e-6),
                queue_at_signal: l.signal_backlogs.percentiles(1.0),
                fill: (fill_mean, fill_min),
                losses: self.rec.link_losses[i].events(),
                sharing: self.sharing(sc, &crossing),
            }));
        }
        links
    }

    /// The fLEDBAT paper's sharing metrics over `flows` (None for fewer than two flows).
    fn sharing(&self, sc: &Scenario, flows: &[&Share]) -> Sharing {
        let pairs: Vec<(u64, bool)> = flows.iter().map(|s| (s.bytes, s.lbe)).collect();
        if flows.len() < 2 {
            return Sharing { lbe_share: lbe_share(&pairs), ..Sharing::default() };
        }
        let rates: Vec<f64> = flows.iter().map(|s| s.rate).collect();
        let ids: Vec<usize> = flows.iter().map(|s| s.flow).collect();
        Sharing {
            jain_long: Some(jain_index(&rates)),
            jain_short: self.seconds.short_term_jain(&ids, sc.warmup.div_ceil(SECOND) as usize),
            lbe_share: lbe_share(&pairs),
        }
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

/// One TCP flow's part of the window: mean wire rate, wire bytes, and whether it is LBE.
struct Share {
    flow: usize,
    rate: f64,
    bytes: u64,
    lbe: bool,
}

/// The last instant before `now`: how far a reader scheduled before the events due at `now` (a
/// sample, a change of a link) brings a link.
fn before(now: Nanos) -> Nanos {
    now.saturating_sub(1)
}
