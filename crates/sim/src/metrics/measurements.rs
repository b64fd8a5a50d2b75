//! What a run measures as it goes and what it sums up at its end: the series sampled at each
//! bin, the marks at the warm-up, the 1 Hz bins of the short-term fairness index, the cwnd
//! swings, and the run's summary, assembled by `ccbench_scenario::results`.
//!
//! The event loop owns a [`Measurements`] and calls it at its events (a sample, the warm-up, a
//! second, the end); what it reads of the flows' endpoints comes through [`FlowView`], which the
//! loop implements, so this module knows nothing of senders and receivers.

use ccbench_cc::is_less_than_best_effort;

use super::{
    flow_summary, jain_index, link_summary, run_summary, window_stats, Conservation, FlowSeries, FlowWindow,
    LinkSeries, LinkSummary, LinkWindow, Nanos, Recorder, RunTotals, Sharing, SimResult, Swings,
};
use crate::fairness::{lbe_share, SecondMarks};
use crate::net::{Link, LinkCounters};
use crate::scenario::Scenario;

const SECOND: Nanos = 1_000_000_000;

/// Cumulative counters of one flow: its closed connections' and its current one's.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowMark {
    pub delivered: u64,
    pub wire_received: u64,
    pub retransmits: u64,
    pub ecn_reductions: u64,
}

/// A TCP sender's state at a sample.
#[derive(Clone, Copy, Debug)]
pub struct SenderProbe {
    pub cwnd: u64,
    /// `u64::MAX` while infinite.
    pub ssthresh: u64,
    pub srtt: Option<Nanos>,
    pub inflight: u64,
}

/// What the summary reads of a TCP flow at the end beyond its counters (closed connections
/// included).
#[derive(Clone, Debug, Default)]
pub struct TcpClosing {
    pub timeouts: u64,
    pub fct: Option<Nanos>,
    pub ecn_reductions: u64,
    pub loss_reductions: u64,
    pub ecn_negotiated: bool,
    pub notes: Vec<String>,
}

/// What the measurements read of the flows' endpoints; the event loop implements it.
pub trait FlowView {
    /// Flow `i`'s cumulative counters.
    fn mark(&self, i: usize) -> FlowMark;
    /// Flow `i`'s TCP sender now; None for a CBR flow.
    fn sender(&self, i: usize) -> Option<SenderProbe>;
    /// When flow `i` had its last byte acknowledged, if it finished.
    fn finished_at(&self, i: usize) -> Option<Nanos>;
    /// Flow `i` at the end, if it is TCP.
    fn closing(&self, i: usize) -> Option<TcpClosing>;
    /// Chunks fully acknowledged and connections opened (chunked flows).
    fn chunks(&self, i: usize) -> Option<(u64, u64)>;
}

/// Cumulative counters of every flow and link at one instant.
pub struct Marks {
    flows: Vec<FlowMark>,
    links: Vec<(LinkCounters, u64, (u128, u128))>,
}

impl Marks {
    fn take(view: &impl FlowView, flows: usize, links: &[Link], now: Nanos) -> Marks {
        Marks {
            flows: (0..flows).map(|i| view.mark(i)).collect(),
            links: links.iter().map(|l| (l.counters, l.busy_until(now), l.queue_integrals(now))).collect(),
        }
    }
}

/// One TCP flow's part of the window: mean wire rate, wire bytes, and whether it is LBE.
struct Share {
    flow: usize,
    rate: f64,
    bytes: u64,
    lbe: bool,
}

/// Everything a run measures while it goes.
pub struct Measurements {
    last_sample: Marks,
    warm: Option<Marks>,
    flows: FlowSeries,
    links: LinkSeries,
    seconds: SecondMarks,
    /// Per TCP flow, its cwnd's swings since the warm-up (None before it, and for CBR).
    swings: Vec<Option<Swings>>,
    /// Per flow, its losses counted at the last sample.
    sampled_losses: Vec<u64>,
}

impl Measurements {
    pub fn new(sc: &Scenario, links: usize) -> Self {
        let flows = sc.flows.len();
        Measurements {
            last_sample: Marks {
                flows: vec![FlowMark::default(); flows],
                links: vec![(LinkCounters::default(), 0, (0, 0)); links],
            },
            warm: None,
            flows: FlowSeries::default(),
            links: LinkSeries::default(),
            seconds: SecondMarks::new(flows),
            swings: vec![None; flows],
            sampled_losses: vec![0; flows],
        }
    }

    /// The measurement window opens: counters are marked, and the least backlog and the cwnd
    /// swings start afresh.
    pub fn warm_up(&mut self, sc: &Scenario, view: &impl FlowView, links: &mut [Link], now: Nanos) {
        self.warm = Some(Marks::take(view, sc.flows.len(), links, now));
        links.iter_mut().for_each(|l| l.reset_min_backlog());
        for (i, f) in sc.flows.iter().enumerate() {
            if let Some(tx) = view.sender(i) {
                self.swings[i] = Some(Swings::new(2 * f.tcp.mss as u64, tx.cwnd));
            }
        }
    }

    /// A TCP sender's cwnd after an ACK, for its swings (from the warm-up on).
    pub fn observe_cwnd(&mut self, flow: usize, cwnd: u64) {
        if let Some(s) = &mut self.swings[flow] {
            s.observe(cwnd);
        }
    }

    /// A whole second: the 1 Hz bins of the short-term fairness index.
    pub fn second(&mut self, view: &impl FlowView, flows: usize) {
        self.seconds.push((0..flows).map(|i| view.mark(i).wire_received));
    }

    /// A bin boundary: one row per flow and per link with a queue.
    pub fn sample(&mut self, sc: &Scenario, view: &impl FlowView, links: &mut [Link], now: Nanos) {
        let t = now as f64 / 1e9;
        let bin_s = sc.output.bin as f64 / 1e9;
        let mbps = |bytes: u64| bytes as f64 * 8.0 / bin_s / 1e6;
        for (i, fl) in sc.flows.iter().enumerate() {
            let m = view.mark(i);
            let prev = self.last_sample.flows[i];
            let f = &mut self.flows;
            f.t_s.push(t);
            f.flow.push(i as u32);
            f.goodput_mbps.push(mbps(m.delivered - prev.delivered));
            f.throughput_mbps.push(mbps(m.wire_received - prev.wire_received));
            f.retransmits.push(m.retransmits - prev.retransmits);
            let lost = fl.path.iter().chain(&fl.ack_path).map(|&l| links[l].losses_of(i as u32)).sum::<u64>();
            f.losses.push(lost - self.sampled_losses[i]);
            f.ecn_reductions.push(m.ecn_reductions - prev.ecn_reductions);
            self.sampled_losses[i] = lost;
            match view.sender(i) {
                Some(tx) => {
                    f.cwnd_bytes.push(tx.cwnd as f64);
                    f.ssthresh_bytes.push(if tx.ssthresh == u64::MAX {
                        f64::NAN
                    } else {
                        tx.ssthresh as f64
                    });
                    f.srtt_ms.push(tx.srtt.map_or(f64::NAN, |r| r as f64 / 1e6));
                    f.inflight_bytes.push(tx.inflight as f64);
                }
                None => {
                    f.cwnd_bytes.push(f64::NAN);
                    f.ssthresh_bytes.push(f64::NAN);
                    f.srtt_ms.push(f64::NAN);
                    f.inflight_bytes.push(f64::NAN);
                }
            }
            self.last_sample.flows[i] = m;
        }
        self.sample_links(links, now, sc.output.bin as f64, mbps);
    }

    fn sample_links(&mut self, links: &mut [Link], now: Nanos, bin: f64, mbps: impl Fn(u64) -> f64) {
        let t = now as f64 / 1e9;
        for (i, l) in links.iter_mut().enumerate() {
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

    /// The run's summary and series. `now` is where the run stopped: a run stopped early is
    /// summarised as the scenario cut at that instant.
    pub fn finish(mut self, end: End<'_>, view: &impl FlowView, wall_s: f64) -> SimResult {
        let End { sc: full, links, rec, mut conservation, events, now } = end;
        let partial = now < full.duration;
        let cut;
        let sc: &Scenario = if partial {
            cut = full.cut_at(now);
            &cut
        } else {
            full
        };
        let warm = self.warm.take().unwrap_or_else(|| Marks::take(view, sc.flows.len(), links, now));
        let active_ends = active_ends(sc, view);
        let (rate_std, rows) = window_stats::per_flow_rows(sc, &self.flows, &active_ends);
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut shares = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            let (mut w, share) = self.flow_window(sc, view, (links, &*rec), i, &warm, active_ends[i]);
            w.throughput_std_mbps = rate_std[i];
            w.reallocations = window_stats::flow_reallocations(sc, i, &active_ends, &rows);
            flows.push(flow_summary(sc, f, w));
            shares.extend(share);
        }
        let link_summaries = self.link_windows(sc, links, rec, &warm, &shares);
        conservation.dropped = links.iter().map(|l| l.counters.drops() + l.counters.random_losses).sum();
        conservation.in_network = links.iter().map(|l| l.packets_held() as u64).sum();
        let totals = RunTotals {
            sharing: self.sharing(sc, &shares.iter().collect::<Vec<_>>()),
            events,
            packets: conservation.injected,
            wall_s,
            sim_s: sc.duration as f64 / 1e9,
            partial,
        };
        let summary = run_summary(sc, full.duration as f64 / 1e9, flows, link_summaries, &self.flows, totals);
        SimResult {
            summary,
            flow_names: sc.flows.iter().map(|f| f.name.clone()).collect(),
            link_names: links.iter().map(|l| l.name.clone()).collect(),
            flows: self.flows,
            links: self.links,
            sojourn: std::mem::take(&mut rec.sojourn),
            owd: std::mem::take(&mut rec.owd),
            conservation,
        }
    }

    /// What flow `i` did in the measurement window (its active part; a flow that ended before
    /// the window is measured over its whole life instead), and its share of the wire for the
    /// sharing metrics if it is a TCP flow. Its rate's deviation and reallocations are filled
    /// in by the caller.
    fn flow_window(
        &self,
        sc: &Scenario,
        view: &impl FlowView,
        (links, rec): (&[Link], &Recorder),
        i: usize,
        warm: &Marks,
        active_end: Nanos,
    ) -> (FlowWindow, Option<Share>) {
        let f = &sc.flows[i];
        let m = view.mark(i);
        let w = if active_end <= sc.warmup { FlowMark::default() } else { warm.flows[i] };
        let (bytes, wire) = (m.delivered - w.delivered, m.wire_received - w.wire_received);
        let span = if active_end <= sc.warmup {
            active_end.saturating_sub(f.start)
        } else {
            active_end - sc.warmup.max(f.start)
        };
        let rate = |b: u64| if span > 0 { b as f64 * 8.0 / (span as f64 / 1e9) / 1e6 } else { 0.0 };
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
            queue_delay_ms: rec.window_flow_sojourns.get(i).and_then(|q| q.percentiles(1e-6)),
            packets_lost: None,
            chunks: view.chunks(i),
            notes: Vec::new(),
            losses: rec.flow_losses[i].events(),
            oscillation: None,
            reallocations: Vec::new(),
        };
        let Some(tcp) = view.closing(i) else {
            window.owd_ms = rec.window_owds[i].percentiles(1e-6);
            window.packets_lost = Some(links.iter().map(|l| l.losses_of(i as u32)).sum());
            return (window, None);
        };
        let buffer = window_stats::bottleneck_buffer_bytes(sc, i);
        window.timeouts = tcp.timeouts;
        window.fct_s = tcp.fct.map(|d| d as f64 / 1e9);
        window.ecn_reductions = tcp.ecn_reductions;
        window.loss_reductions = tcp.loss_reductions;
        window.ecn_negotiated = tcp.ecn_negotiated;
        window.notes = tcp.notes;
        window.oscillation = self.swings[i].as_ref().zip(buffer).and_then(|(s, b)| s.relative_to(b));
        let lbe = is_less_than_best_effort(&f.cca)
            || f.tcp.receiver_cca.as_deref().is_some_and(is_less_than_best_effort);
        (window, Some(Share { flow: i, rate: rate(wire), bytes: wire, lbe }))
    }

    /// Each link with a queue over the measurement window (access links have none: nothing to
    /// report), with the sharing among the TCP `shares` crossing it.
    fn link_windows(
        &self,
        sc: &Scenario,
        links: &[Link],
        rec: &Recorder,
        warm: &Marks,
        shares: &[Share],
    ) -> Vec<LinkSummary> {
        let end = sc.duration;
        let window = (end - sc.warmup.min(end)).max(1) as f64 / 1e9;
        let mut summaries = Vec::with_capacity(links.len());
        for (i, l) in links.iter().enumerate() {
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
            summaries.push(link_summary(LinkWindow {
                spec: &sc.topology.links[i],
                nodes: &sc.topology.nodes,
                rate: l.rate(),
                counters,
                window_s: window,
                queue_delay: rec.window_sojourns[i].percentiles(1e-6),
                queue_at_signal: l.signal_backlogs.percentiles(1.0),
                fill: (fill_mean, fill_min),
                losses: rec.link_losses[i].events(),
                sharing: self.sharing(sc, &crossing),
            }));
        }
        summaries
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
}

/// What the end of a run hands over besides the measurements: the scenario, the links, the
/// recorder, the packet counts, the events handled and where the run stopped.
pub struct End<'a> {
    pub sc: &'a Scenario,
    pub links: &'a [Link],
    pub rec: &'a mut Recorder,
    pub conservation: Conservation,
    pub events: u64,
    pub now: Nanos,
}

/// Per flow, when it stops taking capacity: its `stop`, its last byte acknowledged, or the end
/// of the run.
fn active_ends(sc: &Scenario, view: &impl FlowView) -> Vec<Nanos> {
    let end = sc.duration;
    let ends = sc.flows.iter().enumerate();
    ends.map(|(i, f)| view.finished_at(i).unwrap_or(end).min(f.stop.unwrap_or(end)).min(end)).collect()
}
