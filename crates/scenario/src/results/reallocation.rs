//! Convergence after the capacity a flow may use changes (SIAD thesis §4.1.2 and §4.5): at each
//! change of a flow's fair share (its own start, another flow starting or stopping on its path,
//! a link of its path changing rate) the share is recomputed, and the time until the flow's
//! binned receiver rate first reaches 80 % and 95 % of it is measured, at the bins' resolution
//! (the thesis's 200 ms, L2638). The share is the equal split at the tightest link of the path:
//! min over its links of (rate − active CBR) / active TCP flows.

use serde::Serialize;

use super::Nanos;
use crate::{FlowKind, Scenario};

/// The fractions of the fair share the reach times refer to (L2638, L2672).
pub const REACH_FRACTIONS: [f64; 2] = [0.8, 0.95];

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Reallocation {
    pub at_s: f64,
    pub share_mbps: f64,
    /// Seconds from `at_s` until the flow's rate first reaches 80 % / 95 % of the share; None if
    /// not before the next change or the end of the run.
    pub reach_80_s: Option<f64>,
    pub reach_95_s: Option<f64>,
}

/// Flow `f`'s reallocations. `active_end[g]` is when flow g stops taking capacity (its `stop`,
/// its last byte acknowledged, or the end); `rows` are flow f's (bin end in s, receiver wire
/// rate in Mbit/s), in time order.
pub fn reallocations(
    sc: &Scenario,
    f: usize,
    active_end: &[Nanos],
    rows: &[(f64, f64)],
) -> Vec<Reallocation> {
    let times = change_times(sc, f, active_end);
    let mut out = Vec::with_capacity(times.len());
    for (k, &at) in times.iter().enumerate() {
        let until = times.get(k + 1).copied().unwrap_or(active_end[f]);
        let share = fair_share(sc, f, at, active_end);
        let (from, to) = (at as f64 / 1e9, until as f64 / 1e9);
        let window = rows.iter().filter(|&&(t, _)| t > from && t <= to + 1e-9);
        let reach =
            |frac: f64| window.clone().find(|&&(_, mbps)| mbps >= frac * share / 1e6).map(|&(t, _)| t - from);
        out.push(Reallocation {
            at_s: from,
            share_mbps: share / 1e6,
            reach_80_s: reach(REACH_FRACTIONS[0]),
            reach_95_s: reach(REACH_FRACTIONS[1]),
        });
    }
    out
}

fn shares_link(sc: &Scenario, f: usize, g: usize) -> bool {
    sc.flows[g].path.iter().any(|l| sc.flows[f].path.contains(l))
}

/// When flow f's share may change, from its start to its end.
fn change_times(sc: &Scenario, f: usize, active_end: &[Nanos]) -> Vec<Nanos> {
    let (start, end) = (sc.flows[f].start, active_end[f]);
    let mut times = vec![start];
    for g in (0..sc.flows.len()).filter(|&g| g != f && shares_link(sc, f, g)) {
        times.extend([sc.flows[g].start, active_end[g]]);
    }
    let path = &sc.flows[f].path;
    times.extend(
        sc.topology.changes.iter().filter(|c| c.rate.is_some() && path.contains(&c.link)).map(|c| c.at),
    );
    times.retain(|&t| t >= start && t < end);
    times.sort_unstable();
    times.dedup();
    times
}

/// Flow f's equal share (bit/s) at `t`.
fn fair_share(sc: &Scenario, f: usize, t: Nanos, active_end: &[Nanos]) -> f64 {
    let active = |g: usize| sc.flows[g].start <= t && t < active_end[g];
    let rate_at = |l: usize| {
        let changed = sc.topology.changes.iter().filter(|c| c.link == l && c.at <= t);
        changed.filter_map(|c| c.rate).next_back().unwrap_or(sc.topology.links[l].rate)
    };
    let mut share = f64::INFINITY;
    for &l in &sc.flows[f].path {
        let (mut cbr, mut tcp) = (0.0, 0u32);
        for g in (0..sc.flows.len()).filter(|&g| active(g) && sc.flows[g].path.contains(&l)) {
            match sc.flows[g].kind {
                FlowKind::Cbr => cbr += cbr_rate(sc, g),
                FlowKind::Tcp => tcp += 1,
            }
        }
        share = share.min((rate_at(l) - cbr).max(0.0) / tcp.max(1) as f64);
    }
    share
}

/// A CBR flow's wire rate (bit/s).
fn cbr_rate(sc: &Scenario, g: usize) -> f64 {
    let o = &sc.flows[g].cbr;
    (o.packet_size + o.header_bytes) as f64 * 8e9 / o.interval as f64
}
