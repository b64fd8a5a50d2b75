//! The SIAD thesis's statistics over the measurement window (§4.1.2, L2132–L2146) that need
//! more than counter differences: queue fill relative to the buffer, loss events, the spread of
//! each flow's rate and its reallocations. `world.rs` hands over what it kept; this computes.

use ccbench_aqm::Limit;

use super::{
    reallocations, FlowSeries, LossGrouper, LossWindow, Nanos, Quantiles, Reallocation, Recorder, Welford,
    MAX_REALLOCATION_FLOWS,
};
use crate::net::Link;
use crate::scenario::{FlowKind, Scenario};

/// Time-weighted mean and least backlog of link `i` over [warmup, end], as fractions of its
/// buffer limit. `integrals` are the (byte·ns, packet·ns) integrals from the window's start.
pub fn queue_fill(sc: &Scenario, i: usize, link: &Link, integrals: (u128, u128), span: Nanos) -> (f64, f64) {
    let (min_bytes, min_packets) = link.min_backlog();
    let span = span.max(1) as f64;
    match sc.topology.links[i].limit {
        Limit::Bytes(b) => (integrals.0 as f64 / span / b as f64, min_bytes as f64 / b as f64),
        Limit::Packets(n) => (integrals.1 as f64 / span / n as f64, min_packets as f64 / n as f64),
    }
}

/// The run's recorder: what it keeps per link and per flow, and the RTT each loss is grouped
/// with — a link's is the largest base RTT of the TCP flows crossing it, a flow's its own.
pub fn recorder(sc: &Scenario, links: usize) -> Recorder {
    // One pass over the flows' paths: swarms of many flows and links stay linear.
    let mut link_rtts = vec![0; links];
    for f in sc.flows.iter().filter(|f| f.kind == FlowKind::Tcp) {
        f.path.iter().for_each(|&l| link_rtts[l] = link_rtts[l].max(f.rtt));
    }
    let flow_windows = sc
        .flows
        .iter()
        .map(|f| LossWindow { rtt: f.rtt, path: f.path.iter().map(|&l| l as u32).collect() })
        .collect();
    Recorder {
        warmup: sc.warmup,
        keep_sojourn_series: sc.output.sojourn_samples,
        window_sojourns: vec![Quantiles::default(); links],
        keep_owd_series: sc.output.owd_samples,
        window_owds: vec![Quantiles::default(); sc.flows.len()],
        window_flow_sojourns: if sc.output.flow_delays {
            vec![Quantiles::default(); sc.flows.len()]
        } else {
            Vec::new()
        },
        link_rtts,
        link_losses: vec![LossGrouper::default(); links],
        flow_windows,
        flow_losses: vec![LossGrouper::default(); sc.flows.len()],
        ..Recorder::default()
    }
}

/// The buffer (bytes) of flow `f`'s bottleneck, the slowest link of its path; packet limits
/// count full-sized segments.
pub fn bottleneck_buffer_bytes(sc: &Scenario, f: usize) -> Option<f64> {
    let flow = &sc.flows[f];
    let slowest =
        flow.path.iter().map(|&l| &sc.topology.links[l]).min_by(|a, b| a.rate.total_cmp(&b.rate))?;
    let full = (flow.tcp.mss + flow.tcp.header_bytes) as f64;
    Some(match slowest.limit {
        Limit::Bytes(b) => b as f64,
        Limit::Packets(n) => n as f64 * full,
    })
}

/// Per flow: the standard deviation of its binned receiver rate over its active part of the
/// window, and its rows (bin end, rate) for [`reallocations`] — one pass over the series.
pub fn per_flow_rows(
    sc: &Scenario,
    series: &FlowSeries,
    active_end: &[Nanos],
) -> (Vec<f64>, Vec<Vec<(f64, f64)>>) {
    let n = sc.flows.len();
    let keep_rows = n <= MAX_REALLOCATION_FLOWS;
    let mut spread = vec![Welford::default(); n];
    let mut rows = vec![Vec::new(); if keep_rows { n } else { 0 }];
    let warm = sc.warmup as f64 / 1e9;
    for k in 0..series.t_s.len() {
        let (t, f, mbps) = (series.t_s[k], series.flow[k] as usize, series.throughput_mbps[k]);
        let start = warm.max(sc.flows[f].start as f64 / 1e9);
        if t > start && t <= active_end[f] as f64 / 1e9 + 1e-9 {
            spread[f].add(mbps);
        }
        if keep_rows {
            rows[f].push((t, mbps));
        }
    }
    (spread.iter().map(|w| w.get().map_or(f64::NAN, |m| m.std)).collect(), rows)
}

/// Flow `f`'s reallocations, where they are measured (see [`MAX_REALLOCATION_FLOWS`]).
pub fn flow_reallocations(
    sc: &Scenario,
    f: usize,
    active_end: &[Nanos],
    rows: &[Vec<(f64, f64)>],
) -> Vec<Reallocation> {
    let flow = &sc.flows[f];
    if flow.kind != FlowKind::Tcp || flow.chunks.is_some() || rows.is_empty() {
        return Vec::new();
    }
    reallocations(sc, f, active_end, &rows[f])
}
