//! The run's summary — each flow's, each link's and the whole run's — assembled in one place for
//! the simulator and the emulator from what each of them measured ([`FlowWindow`],
//! [`LinkWindow`], [`RunTotals`]).

use super::{
    convergence_time, jain_by_hops, jain_index, tcp_starts, FlowSeries, FlowSummary, LinkSummary, LossEvents,
    MeanStd, Percentiles, Reallocation, ScenarioSummary, Summary,
};
use crate::{Flow, FlowKind, LinkSpec, Scenario, Transport};
use ccbench_link::LinkCounters;

/// The fLEDBAT paper's sharing metrics among the TCP flows crossing a link (None for fewer than
/// two flows, or where the back end does not measure them).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sharing {
    pub jain_long: Option<f64>,
    pub jain_short: Option<f64>,
    pub lbe_share: Option<f64>,
}

/// What one link did over the measurement window.
pub struct LinkWindow<'a> {
    pub spec: &'a LinkSpec,
    /// The topology's node names.
    pub nodes: &'a [String],
    /// The rate at the end of the run (scheduled changes included).
    pub rate: f64,
    /// The window's counters (end minus start), with the transmitter's engaged time up to the
    /// window's end in `busy_ns`.
    pub counters: LinkCounters,
    pub window_s: f64,
    /// Queueing-delay percentiles (ms) of the packets that left in the window.
    pub queue_delay: Option<Percentiles>,
    pub queue_at_signal: Option<Percentiles>,
    /// Mean and least queue fill (fractions of the buffer).
    pub fill: (f64, f64),
    pub losses: LossEvents,
    pub sharing: Sharing,
}

pub fn link_summary(w: LinkWindow<'_>) -> LinkSummary {
    let c = w.counters;
    let lost = c.drops() + c.random_losses;
    let bits = c.bytes_departed as f64 * 8.0;
    LinkSummary {
        name: w.spec.name.clone(),
        from: w.nodes[w.spec.from].clone(),
        to: w.nodes[w.spec.to].clone(),
        rate_mbps: w.rate / 1e6,
        utilization: c.busy_ns as f64 / 1e9 / w.window_s,
        throughput_mbps: bits / w.window_s / 1e6,
        drops: c.drops(),
        overflow_drops: c.overflow_drops,
        aqm_drops: c.aqm_drops,
        ecn_marks: c.ecn_marks,
        random_losses: c.random_losses,
        bytes_departed: c.bytes_departed,
        packets: c.arrivals,
        loss_rate: if c.arrivals > 0 { lost as f64 / c.arrivals as f64 } else { 0.0 },
        // Measured links report percentiles even over an empty window (all zero).
        queue_delay_ms: w.spec.measure_sojourn.then(|| w.queue_delay.unwrap_or_default()),
        queue_at_signal_packets: w.queue_at_signal,
        efficiency: bits / w.window_s / w.rate,
        jain_long: w.sharing.jain_long,
        jain_short: w.sharing.jain_short,
        lbe_share: w.sharing.lbe_share,
        queue_fill_mean: w.fill.0,
        queue_fill_min: w.fill.1,
        loss_events: w.losses.events,
        loss_event_distance_s: w.losses.distance_s,
    }
}

/// What one flow did, as a back end measured it: over the flow's active part of the measurement
/// window unless a field says otherwise (see [`FlowSummary`] for each).
pub struct FlowWindow {
    pub goodput_mbps: f64,
    pub throughput_mbps: f64,
    pub throughput_std_mbps: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fct_s: Option<f64>,
    pub bytes_delivered: u64,
    pub ecn_reductions: u64,
    pub loss_reductions: u64,
    pub ecn_negotiated: bool,
    pub owd_ms: Option<Percentiles>,
    pub queue_delay_ms: Option<Percentiles>,
    pub packets_lost: Option<u64>,
    /// Chunks fully acknowledged and connections opened (chunked flows).
    pub chunks: Option<(u64, u64)>,
    pub notes: Vec<String>,
    pub losses: LossEvents,
    pub oscillation: Option<MeanStd>,
    pub reallocations: Vec<Reallocation>,
}

/// Flow `f` of scenario `sc`: what the scenario says of it beside what `w` measured.
pub fn flow_summary(sc: &Scenario, f: &Flow, w: FlowWindow) -> FlowSummary {
    let topo = &sc.topology;
    FlowSummary {
        name: f.name.clone(),
        kind: match (&f.kind, f.transport) {
            (FlowKind::Cbr, _) => "cbr",
            (FlowKind::Tcp, Transport::Tcp) => "tcp",
            (FlowKind::Tcp, Transport::Quic) => "quic",
        },
        cca: f.cca.clone(),
        from: topo.nodes[f.from].clone(),
        to: topo.nodes[f.to].clone(),
        path: f.path.iter().map(|&l| topo.links[l].name.clone()).collect(),
        rtt_ms: f.rtt as f64 / 1e6,
        start_s: f.start as f64 / 1e9,
        size_bytes: f.size,
        goodput_mbps: w.goodput_mbps,
        throughput_mbps: w.throughput_mbps,
        throughput_std_mbps: w.throughput_std_mbps,
        retransmits: w.retransmits,
        timeouts: w.timeouts,
        fct_s: w.fct_s,
        bytes_delivered: w.bytes_delivered,
        ecn_reductions: w.ecn_reductions,
        loss_reductions: w.loss_reductions,
        ecn_negotiated: w.ecn_negotiated,
        owd_ms: w.owd_ms,
        queue_delay_ms: w.queue_delay_ms,
        packets_lost: w.packets_lost,
        chunks: w.chunks.map(|(c, _)| c),
        connections: w.chunks.map(|(_, n)| n),
        receiver_cca: f.tcp.receiver_cca.clone(),
        notes: w.notes,
        loss_events: w.losses.events,
        loss_event_distance_s: w.losses.distance_s,
        oscillation: w.oscillation,
        reallocations: w.reallocations,
    }
}

/// What a back end counted over the whole run, beside its flows and links.
pub struct RunTotals {
    /// Sharing among all TCP flows (the fLEDBAT paper's short-term index and LBE share).
    pub sharing: Sharing,
    pub events: u64,
    pub packets: u64,
    pub wall_s: f64,
    /// Simulated (or emulated) time covered: the duration, or less for a run stopped early.
    pub sim_s: f64,
    pub partial: bool,
}

/// The run's summary: the flows' and links' summaries and the indices computed from them.
/// `sc` is the scenario as run (cut at the time reached for a run stopped early); the scenario
/// summary names the duration asked for.
pub fn run_summary(
    sc: &Scenario,
    duration_s: f64,
    flows: Vec<FlowSummary>,
    links: Vec<LinkSummary>,
    series: &FlowSeries,
    t: RunTotals,
) -> Summary {
    // The congestion-controlled flows, over TCP or QUIC (not CBR).
    let tcp: Vec<&FlowSummary> = flows.iter().filter(|f| f.kind != "cbr").collect();
    let goodputs: Vec<f64> = tcp.iter().map(|f| f.goodput_mbps).collect();
    let hops: Vec<(usize, f64)> = tcp.iter().map(|f| (f.path.len(), f.goodput_mbps)).collect();
    let convergence = convergence_time(series, &tcp_starts(sc), sc.output.bin as f64 / 1e9);
    Summary {
        scenario: ScenarioSummary { duration_s, warmup_s: sc.warmup as f64 / 1e9, seed: sc.seed },
        jain_index: jain_index(&goodputs),
        convergence_s: convergence.settled_s,
        convergence_first_s: convergence.first_s,
        sharing_ratio: (goodputs.len() >= 2).then(|| goodputs[0] / goodputs[1]),
        jain_by_hops: jain_by_hops(&hops),
        jain_short: t.sharing.jain_short,
        lbe_share: t.sharing.lbe_share,
        flows,
        links,
        events: t.events,
        packets: t.packets,
        wall_s: t.wall_s,
        sim_s: t.sim_s,
        partial: t.partial,
    }
}
