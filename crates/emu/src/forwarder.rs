//! Real time: packets from the hosts' TUN devices through [`Link`]s and out of the TUN of the
//! host they are addressed to.
//!
//! One thread serves every link, so a packet crossing several links is handed from one to the
//! next without locks, and routing is a table lookup: at node `n`, a packet for host `d` takes
//! link `next_hop[n][d]` (the simulator's fewest-hop route). The clock is `CLOCK_MONOTONIC`.
//!
//! Timing: the thread sleeps in `ppoll` on all TUN fds with a nanosecond timeout up to the next
//! link event, with its timer slack set to 1 ns (`PR_SET_TIMERSLACK`; the default 50 µs would be
//! added to every wake-up), wakes `spin` early and spins the rest. The link chains transmissions
//! on their scheduled times, so wake-up lateness delays deliveries a little but never changes
//! the rate; it is measured per link as [`Lateness`].

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use ccbench_aqm::{Nanos, QueuedPacket};
use ccbench_link::LinkCounters;
use ccbench_scenario::topology::routes::shortest_path;
use ccbench_scenario::{LinkChange, Topology};
use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;

use crate::ip::IpPacket;
use crate::link::{Link, SojournSample};
use crate::netns::{host_index, Testbed};

/// Longest sleep, so the stop flag is seen within this time.
const MAX_SLEEP: Nanos = 10_000_000;
/// Packets read from one TUN per round, so one busy host cannot starve the others.
const READ_BURST: usize = 256;
/// Read buffer: larger than any packet a 1500-byte-MTU TUN without offloads delivers.
const BUF: usize = 65_536;

/// The current `CLOCK_MONOTONIC` time in nanoseconds.
pub fn mono_ns() -> Nanos {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as Nanos * 1_000_000_000 + ts.tv_nsec as Nanos
}

#[derive(Clone, Copy, Debug)]
pub struct ForwarderConfig {
    /// Interval of the queue time series.
    pub sample_every: Nanos,
    /// Wake this long before a deadline and spin the rest (0 = rely on `ppoll` alone).
    pub spin: Nanos,
    /// Run the forwarder thread SCHED_FIFO (root only; falls back to normal scheduling).
    pub realtime: bool,
}

impl Default for ForwarderConfig {
    fn default() -> Self {
        ForwarderConfig { sample_every: 10_000_000, spin: 100_000, realtime: true }
    }
}

/// One point of a link's time series. Counters are cumulative; `t` is since the forwarder started.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueSample {
    pub t: Nanos,
    pub queue_bytes: u64,
    pub queue_packets: u64,
    pub arrivals: u64,
    pub departures: u64,
    pub bytes_departed: u64,
    /// Overflow and AQM drops.
    pub drops: u64,
    pub aqm_drops: u64,
    pub random_losses: u64,
    pub ecn_marks: u64,
    /// Time the link's transmitter was engaged (the simulator's utilisation measure).
    pub busy_ns: u64,
    /// Bytes written to the far end's TUN (or handed to the next link).
    pub bytes_delivered: u64,
    /// The AQM's drop/mark probability; NaN for queues without one.
    pub aqm_probability: f64,
}

/// Upper bounds (µs) of the [`Lateness`] histogram buckets; the last bucket is everything above.
pub const LATENESS_BUCKETS_US: [u64; 7] = [10, 20, 50, 100, 200, 500, 1000];

/// How late packets left the link compared with their scheduled arrival time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lateness {
    pub packets: u64,
    pub sum_ns: u64,
    pub max_ns: u64,
    /// Packets per bucket of [`LATENESS_BUCKETS_US`], plus one for later ones.
    pub histogram: [u64; 8],
}

impl Lateness {
    fn record(&mut self, late: Nanos) {
        self.packets += 1;
        self.sum_ns += late;
        self.max_ns = self.max_ns.max(late);
        let b = LATENESS_BUCKETS_US.iter().position(|&us| late <= us * 1000).unwrap_or(7);
        self.histogram[b] += 1;
    }

    /// Packets more than `us` late, for `us` one of the bucket bounds.
    pub fn over_us(&self, us: u64) -> u64 {
        let b = LATENESS_BUCKETS_US.iter().position(|&x| x >= us).unwrap_or(7);
        self.histogram[b + 1..].iter().sum()
    }

    pub fn mean_ns(&self) -> f64 {
        self.sum_ns as f64 / self.packets.max(1) as f64
    }
}

/// What one link measured.
#[derive(Clone, Debug)]
pub struct LinkReport {
    pub name: String,
    pub from: usize,
    pub to: usize,
    /// The rate at the end of the run (scheduled changes included).
    pub rate: f64,
    pub counters: LinkCounters,
    pub samples: Vec<QueueSample>,
    /// Per-packet queueing delay, if the link measures it; `at` is since the forwarder started.
    pub sojourn: Vec<SojournSample>,
    pub lateness: Lateness,
}

/// Everything the forwarder measured.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// `CLOCK_MONOTONIC` at the forwarder's start: time zero of every series.
    pub t0: Nanos,
    pub elapsed: Nanos,
    pub links: Vec<LinkReport>,
    /// Packets read that were not IPv4 (dropped).
    pub foreign: u64,
    /// IPv4 packets to no host, or with no route (dropped).
    pub unroutable: u64,
    /// Writes to a TUN that failed (the packet is lost).
    pub write_errors: u64,
    /// Whether the thread ran SCHED_FIFO.
    pub realtime: bool,
    /// CPU time the forwarder thread used (sleeping costs none; spinning does).
    pub cpu_ns: Nanos,
}

/// A link and where it goes.
pub struct Port {
    pub link: Link,
    pub from: usize,
    pub to: usize,
}

/// All links of a testbed and the routes over them, ready to run.
pub struct Forwarder {
    tuns: Vec<OwnedFd>,
    ports: Vec<Port>,
    /// `next_hop[node][host]`: the link a packet at `node` for `host` takes.
    next_hop: Vec<Vec<Option<usize>>>,
    /// Scheduled link changes, times since start, sorted.
    changes: Vec<LinkChange>,
    cfg: ForwarderConfig,
}

/// A running forwarder thread. Dropping it stops the thread.
pub struct Running {
    stop: Arc<AtomicBool>,
    t0: Nanos,
    handle: Option<JoinHandle<Report>>,
}

impl Running {
    /// Stop the thread and collect its measurements.
    pub fn stop(mut self) -> Result<Report, String> {
        self.stop.store(true, Ordering::Relaxed);
        let h = self.handle.take().ok_or("the forwarder was already stopped")?;
        h.join().map_err(|_| "the forwarder thread panicked".to_string())
    }

    /// `CLOCK_MONOTONIC` time zero of the links, series and scheduled changes (see [`mono_ns`]).
    pub fn t0(&self) -> Nanos {
        self.t0
    }

    /// The flag that stops the thread (it checks it at least every 10 ms).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Forwarder {
    /// `tuns[i]` is host `i`'s TUN; `ports` are the links between hosts (node = host index).
    pub fn new(tuns: Vec<OwnedFd>, ports: Vec<Port>, cfg: ForwarderConfig) -> Result<Forwarder, String> {
        let n = tuns.len();
        if let Some(p) = ports.iter().find(|p| p.from >= n || p.to >= n) {
            return Err(format!("link \"{}\" joins a node that has no host", p.link.name));
        }
        let next_hop = routes(n, &ports);
        Ok(Forwarder { tuns, ports, next_hop, changes: Vec::new(), cfg })
    }

    /// One host per node of `topo`, one link per directional link, the simulator's queues and
    /// random streams for `seed`, and the topology's scheduled changes.
    pub fn from_topology(
        topo: &Topology,
        seed: u64,
        testbed: &Testbed,
        cfg: ForwarderConfig,
    ) -> Result<Forwarder, String> {
        if testbed.hosts().len() != topo.nodes.len() {
            return Err(format!(
                "the testbed has {} hosts but the topology {} nodes",
                testbed.hosts().len(),
                topo.nodes.len()
            ));
        }
        let mut ports = Vec::new();
        for (i, spec) in topo.links.iter().enumerate() {
            ports.push(Port { link: Link::from_spec(spec, seed, i)?, from: spec.from, to: spec.to });
        }
        let tuns = testbed.tun_fds().map_err(|e| e.to_string())?;
        let mut fwd = Forwarder::new(tuns, ports, cfg)?;
        fwd.next_hop = topology_routes(topo);
        fwd.changes = topo.changes.clone();
        Ok(fwd)
    }

    /// Start serving on a thread of its own; `stop` ends it. Time zero of the links, the series
    /// and the topology's scheduled changes is now ([`Running::t0`]).
    pub fn start_with(self, stop: Arc<AtomicBool>) -> Result<Running, String> {
        let flag = stop.clone();
        let t0 = mono_ns();
        let handle = std::thread::Builder::new()
            .name("ccbench-fwd".into())
            .spawn(move || self.run(&flag, t0))
            .map_err(|e| format!("cannot start the forwarder thread: {e}"))?;
        Ok(Running { stop, t0, handle: Some(handle) })
    }

    pub fn start(self) -> Result<Running, String> {
        self.start_with(Arc::new(AtomicBool::new(false)))
    }

    fn run(self, stop: &AtomicBool, t0: Nanos) -> Report {
        // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        let realtime = self.cfg.realtime && set_fifo();
        let mut st = State::new(self, t0);
        while !stop.load(Ordering::Relaxed) {
            st.round();
        }
        let mut r = st.finish();
        r.realtime = realtime;
        r.cpu_ns = thread_cpu_ns();
        r
    }
}

fn thread_cpu_ns() -> Nanos {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as Nanos * 1_000_000_000 + ts.tv_nsec as Nanos
}

/// Make the calling thread SCHED_FIFO at a low real-time priority: it then preempts normal
/// threads on wake-up instead of queueing behind them. It sleeps between events, and the
/// kernel's RT throttling (`sched_rt_runtime_us`) bounds it anyway.
fn set_fifo() -> bool {
    let p = libc::sched_param { sched_priority: 10 };
    // SAFETY: sets this thread's policy; `p` outlives the call.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &p) == 0 }
}

/// Next hops from the topology's fewest-hop routes (the simulator's routing).
fn topology_routes(topo: &Topology) -> Vec<Vec<Option<usize>>> {
    let n = topo.nodes.len();
    let first = |a, b| shortest_path(topo, a, b).and_then(|p| p.first().copied());
    (0..n).map(|a| (0..n).map(|b| if a == b { None } else { first(a, b) }).collect()).collect()
}

/// Next hops by breadth-first search over `ports` (for testbeds built without a topology).
fn routes(n: usize, ports: &[Port]) -> Vec<Vec<Option<usize>>> {
    let mut table = vec![vec![None; n]; n];
    for (src, row) in table.iter_mut().enumerate() {
        let mut seen = vec![false; n];
        seen[src] = true;
        let mut frontier = vec![(src, None)];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for (node, first) in frontier {
                for (i, p) in ports.iter().enumerate().filter(|(_, p)| p.from == node) {
                    if std::mem::replace(&mut seen[p.to], true) {
                        continue;
                    }
                    let hop = first.or(Some(i));
                    row[p.to] = hop;
                    next.push((p.to, hop));
                }
            }
            frontier = next;
        }
    }
    table
}

/// The forwarder's loop state.
struct State {
    fwd: Forwarder,
    t0: Nanos,
    buf: Vec<u8>,
    out: Vec<(Nanos, IpPacket)>,
    next_sample: Nanos,
    next_change: usize,
    samples: Vec<Vec<QueueSample>>,
    delivered: Vec<u64>,
    lateness: Vec<Lateness>,
    report: Report,
}

impl State {
    fn new(fwd: Forwarder, t0: Nanos) -> State {
        let n = fwd.ports.len();
        State {
            fwd,
            t0,
            buf: vec![0; BUF],
            out: Vec::new(),
            next_sample: 0,
            next_change: 0,
            samples: vec![Vec::new(); n],
            delivered: vec![0; n],
            lateness: vec![Lateness::default(); n],
            report: Report { t0, ..Report::default() },
        }
    }

    /// Links run on time since start, so series and scheduled changes share one origin.
    fn now(&self) -> Nanos {
        mono_ns().saturating_sub(self.t0)
    }

    fn round(&mut self) {
        self.read_all();
        let now = self.now();
        self.apply_changes(now);
        self.deliver(now);
        if now >= self.next_sample {
            self.sample(now);
            self.next_sample = now - now % self.fwd.cfg.sample_every.max(1) + self.fwd.cfg.sample_every;
        }
        self.wait(self.deadline());
    }

    fn read_all(&mut self) {
        for host in 0..self.fwd.tuns.len() {
            for _ in 0..READ_BURST {
                let fd = self.fwd.tuns[host].as_raw_fd();
                // SAFETY: reads into our own buffer of BUF bytes.
                let n = unsafe { libc::read(fd, self.buf.as_mut_ptr().cast(), BUF) };
                if n <= 0 {
                    break; // EAGAIN: nothing more now; other errors: retried next round.
                }
                let now = self.now();
                match IpPacket::parse(self.buf[..n as usize].to_vec()) {
                    Ok(p) => self.route(host, p, now),
                    Err(_) => self.report.foreign += 1,
                }
            }
        }
    }

    /// Hand `pkt`, now at `node`, to its next link or, at its destination, to the host's TUN.
    fn route(&mut self, node: usize, pkt: IpPacket, now: Nanos) {
        match host_index(pkt.dst()) {
            Some(h) if h == node => self.write(node, &pkt),
            Some(h) if h < self.fwd.tuns.len() => match self.fwd.next_hop[node][h] {
                Some(l) => self.fwd.ports[l].link.offer(pkt, now),
                None => self.report.unroutable += 1,
            },
            _ => self.report.unroutable += 1,
        }
    }

    fn write(&mut self, host: usize, pkt: &IpPacket) {
        let b = pkt.as_bytes();
        let fd = self.fwd.tuns[host].as_raw_fd();
        // SAFETY: writes `b.len()` bytes of our own buffer.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if n != b.len() as isize {
            self.report.write_errors += 1;
        }
    }

    fn deliver(&mut self, now: Nanos) {
        for l in 0..self.fwd.ports.len() {
            let mut out = std::mem::take(&mut self.out);
            self.fwd.ports[l].link.poll(now, &mut out);
            let to = self.fwd.ports[l].to;
            for (at, pkt) in out.drain(..) {
                self.lateness[l].record(now.saturating_sub(at));
                self.delivered[l] += pkt.wire_bytes() as u64;
                // At an intermediate node the packet enters the next link when it arrived.
                self.route(to, pkt, at);
            }
            self.out = out;
        }
    }

    fn apply_changes(&mut self, now: Nanos) {
        while let Some(c) = self.fwd.changes.get(self.next_change).filter(|c| c.at <= now) {
            let c = c.clone();
            self.next_change += 1;
            if let Some(r) = c.rate {
                self.fwd.ports[c.link].link.set_rate(r);
            }
            if let Some(d) = c.delay {
                for l in std::iter::once(c.link).chain(c.reverse) {
                    self.fwd.ports[l].link.set_delay(d);
                }
            }
        }
    }

    fn sample(&mut self, now: Nanos) {
        for (l, p) in self.fwd.ports.iter_mut().enumerate() {
            let aqm_probability = p.link.signal_probability(now).unwrap_or(f64::NAN);
            let c = &p.link.counters;
            self.samples[l].push(QueueSample {
                t: now,
                queue_bytes: p.link.backlog().0,
                queue_packets: p.link.backlog().1 as u64,
                arrivals: c.arrivals,
                departures: c.departures,
                bytes_departed: c.bytes_departed,
                drops: c.drops(),
                aqm_drops: c.aqm_drops,
                random_losses: c.random_losses,
                ecn_marks: c.ecn_marks,
                busy_ns: p.link.busy_until(now),
                bytes_delivered: self.delivered[l],
                aqm_probability,
            });
        }
    }

    fn deadline(&self) -> Nanos {
        let links = self.fwd.ports.iter().filter_map(|p| p.link.next_event());
        let change = self.fwd.changes.get(self.next_change).map(|c| c.at);
        links.chain(change).fold(self.next_sample, Nanos::min)
    }

    /// Sleep until `deadline` (since start) or until a TUN has a packet, at most `MAX_SLEEP`.
    fn wait(&self, deadline: Nanos) {
        let now = self.now();
        let deadline = deadline.min(now + MAX_SLEEP);
        let spin = self.fwd.cfg.spin;
        if deadline <= now {
            return;
        }
        if deadline - now > spin {
            let mut fds: Vec<PollFd> =
                self.fwd.tuns.iter().map(|t| PollFd::new(t.as_fd(), PollFlags::POLLIN)).collect();
            let ts = TimeSpec::from_duration(std::time::Duration::from_nanos(deadline - now - spin));
            if matches!(ppoll(&mut fds, Some(ts), None), Ok(n) if n > 0) {
                return;
            }
        }
        // The spin is bounded by `spin` plus the time `ppoll` overslept.
        while self.now() < deadline {
            std::hint::spin_loop();
        }
    }

    fn finish(mut self) -> Report {
        let now = self.now();
        self.sample(now);
        self.report.elapsed = now;
        let ports = std::mem::take(&mut self.fwd.ports);
        for (l, (p, samples)) in ports.into_iter().zip(self.samples).enumerate() {
            self.report.links.push(LinkReport {
                name: p.link.name.clone(),
                rate: p.link.rate(),
                from: p.from,
                to: p.to,
                counters: p.link.counters,
                samples,
                sojourn: p.link.sojourn,
                lateness: self.lateness[l],
            });
        }
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccbench_aqm::{DropTail, Limit};
    use ccbench_scenario::rng::link_streams;

    fn port(from: usize, to: usize) -> Port {
        let q = Box::new(DropTail::new(Limit::Packets(10)));
        Port { link: Link::new(format!("{from}>{to}"), 1e6, 0, 0, 0.0, q, link_streams(1, 0)), from, to }
    }

    #[test]
    fn routes_take_the_fewest_hops() {
        // 0 -> 1 -> 2 and a direct 0 -> 2; 2 -> 1 -> 0.
        let ports = vec![port(0, 1), port(1, 2), port(0, 2), port(2, 1), port(1, 0)];
        let r = routes(3, &ports);
        assert_eq!(r[0][1], Some(0));
        assert_eq!(r[0][2], Some(2));
        assert_eq!(r[1][2], Some(1));
        assert_eq!(r[2][0], Some(3));
        assert_eq!(r[1][0], Some(4));
        assert_eq!(r[0][0], None);
    }
}
