//! The SIAD thesis's statistics over the measurement window (§4.1.2, L2132–L2146) that need
//! more than counter differences: queue fill relative to the buffer, loss events, the spread of
//! each flow's rate and its reallocations. `world.rs` hands over what it kept; this computes.

use ccbench_aqm::Limit;

use super::{
    loss_events, reallocations, FlowSeries, LossEvents, Nanos, Reallocation, Welford, MAX_REALLOCATION_FLOWS,
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

/// Loss events at link `i`, each loss grouped within 2 × (the largest base RTT of the link's TCP
/// flows + the queueing delay at that loss).
pub fn link_loss_events(sc: &Scenario, i: usize, link: &Link) -> LossEvents {
    let crossing = sc.flows.iter().filter(|f| f.kind == FlowKind::Tcp && f.path.contains(&i));
    let rtt = crossing.map(|f| f.rtt).max().unwrap_or(0);
    loss_events(link.losses.log.iter().map(|l| (l.at, 2 * (rtt + l.queue_delay()))), sc.warmup)
}

/// Every flow's losses on the links of its data path — (time, queueing delay at the loss) — in
/// time order: one pass over the links' logs, so swarms of many flows stay linear.
pub fn loss_times_by_flow(sc: &Scenario, links: &[Link]) -> Vec<Vec<(Nanos, Nanos)>> {
    let mut times = vec![Vec::new(); sc.flows.len()];
    for (l, link) in links.iter().enumerate() {
        for loss in &link.losses.log {
            let f = loss.flow as usize;
            if sc.flows.get(f).is_some_and(|flow| flow.path.contains(&l)) {
                times[f].push((loss.at, loss.queue_delay()));
            }
        }
    }
    times.iter_mut().for_each(|t| t.sort_unstable());
    times
}

/// Loss events of flow `f` (its losses from [`loss_times_by_flow`]), each loss grouped within
/// 2 × the flow's RTT at that loss: its base RTT plus the queueing the loss met.
pub fn flow_loss_events(sc: &Scenario, f: usize, losses: &[(Nanos, Nanos)]) -> LossEvents {
    let rtt = sc.flows[f].rtt;
    loss_events(losses.iter().map(|&(t, queued)| (t, 2 * (rtt + queued))), sc.warmup)
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
