//! What a run produces and how its summary is computed, for every back end (the simulator,
//! the emulator) and for the writer of run directories: the time series, the summaries of
//! flows, links and the run, and the pure metrics they are computed with.

use serde::Serialize;

pub mod loss_events;
pub mod reallocation;
pub mod summary;

pub use ccbench_link::quantiles::{Percentiles, Quantiles};
pub use ccbench_link::LinkCounters;
pub use loss_events::{loss_events, LossEvents, LossGrouper, MeanStd, Welford};
pub use reallocation::{reallocations, Reallocation};
pub use summary::{flow_summary, link_summary, run_summary, FlowWindow, LinkWindow, RunTotals, Sharing};

pub type Nanos = u64;

/// Per-flow samples, one row per flow per bin (`t_s` = end of the bin).
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    pub t_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub goodput_mbps: Vec<f64>,
    pub throughput_mbps: Vec<f64>,
    pub cwnd_bytes: Vec<f64>,
    /// NaN while infinite.
    pub ssthresh_bytes: Vec<f64>,
    /// NaN before the first RTT sample.
    pub srtt_ms: Vec<f64>,
    pub inflight_bytes: Vec<f64>,
    pub retransmits: Vec<u64>,
    /// Packets of the flow dropped or randomly lost on any link during the bin.
    pub losses: Vec<u64>,
    /// Window reductions the sender began on an ECN signal during the bin.
    pub ecn_reductions: Vec<u64>,
}

/// Per-link samples, one row per link per bin.
#[derive(Clone, Debug, Default)]
pub struct LinkSeries {
    pub t_s: Vec<f64>,
    pub link: Vec<u32>,
    /// Time-averaged backlog over the bin.
    pub queue_bytes: Vec<f64>,
    pub queue_packets: Vec<f64>,
    pub utilization: Vec<f64>,
    pub throughput_mbps: Vec<f64>,
    pub drops: Vec<u64>,
    /// Packets that arrived at the link, and those of them lost at random, during the bin.
    pub arrivals: Vec<u64>,
    pub random_losses: Vec<u64>,
    pub ecn_marks: Vec<u64>,
    /// Wire bytes that left the queue since time zero (the ABE paper's "bytes departed", L211).
    pub departed_bytes: Vec<u64>,
    /// The AQM's drop/mark probability at the end of the bin; NaN for queues without one.
    pub aqm_probability: Vec<f64>,
}

/// One row per packet leaving a measured queue.
#[derive(Clone, Debug, Default)]
pub struct SojournSeries {
    pub t_s: Vec<f64>,
    pub link: Vec<u32>,
    pub flow: Vec<u32>,
    pub sojourn_ms: Vec<f64>,
}

/// One row per datagram received by a CBR flow.
#[derive(Clone, Debug, Default)]
pub struct OwdSeries {
    pub t_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub owd_ms: Vec<f64>,
}

/// Mean and nearest-rank percentiles of `values` (sorted in place); None when empty.
pub fn percentiles(values: &mut [f64]) -> Option<Percentiles> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable_by(|a, b| a.total_cmp(b));
    let n = values.len();
    let rank = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
    Some(Percentiles {
        mean: values.iter().sum::<f64>() / n as f64,
        p50: rank(0.5),
        p90: rank(0.9),
        p99: rank(0.99),
    })
}

/// Jain's index above which two flows count as converged (ABE paper, L270).
pub const CONVERGED_JAIN: f64 = 0.95;

/// Convergence of the TCP flows after the last one starts, in seconds from that start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Convergence {
    /// Jain's index reaches 0.95 for good (stays at or above it to the end of the run).
    pub settled_s: Option<f64>,
    /// Jain's index first reaches 0.95: the paper's literal wording ("the time it took until
    /// this index reached a threshold", L270), often during the new flow's slow start.
    pub first_s: Option<f64>,
}

/// Convergence time (ABE paper L270; notes `experiments-abe.md` §2): from the start of the last
/// TCP flow to start, how long until Jain's index over the bytes each TCP flow has delivered
/// since then reaches 0.95, first and for good. `flows` are the TCP flows' (id, start in s); the
/// series' bins give the resolution. Both None with fewer than two TCP flows.
pub fn convergence_time(series: &FlowSeries, flows: &[(u32, f64)], bin_s: f64) -> Convergence {
    if flows.len() < 2 {
        return Convergence::default();
    }
    let t0 = flows.iter().map(|&(_, start)| start).fold(0.0, f64::max);
    // Flow id → its column, and one snapshot of the cumulative bytes per bin (taken when the
    // next bin begins): linear in the series, where a search and a copy per row were quadratic
    // in the number of flows (100,000 flows once took minutes here).
    let mut column = vec![None; flows.iter().map(|&(id, _)| id as usize + 1).max().unwrap_or(0)];
    for (k, &(id, _)) in flows.iter().enumerate() {
        column[id as usize] = Some(k);
    }
    let mut rows: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut cumulative = vec![0.0; flows.len()];
    let mut current: Option<f64> = None;
    for i in 0..series.t_s.len() {
        let (t, flow) = (series.t_s[i], series.flow[i]);
        let Some(k) = column.get(flow as usize).copied().flatten() else { continue };
        if t <= t0 {
            continue;
        }
        if let Some(done) = current.filter(|&c| c != t) {
            rows.push((done, cumulative.clone()));
        }
        current = Some(t);
        cumulative[k] += series.goodput_mbps[i] * 1e6 * bin_s / 8.0;
    }
    if let Some(done) = current {
        rows.push((done, cumulative));
    }
    let first = rows.iter().find(|(_, bytes)| jain_index(bytes) >= CONVERGED_JAIN).map(|(t, _)| t - t0);
    Convergence { settled_s: settled_since(&rows, t0), first_s: first }
}

/// The TCP flows of a scenario with their start times (s), for [`convergence_time`].
pub fn tcp_starts(sc: &crate::Scenario) -> Vec<(u32, f64)> {
    let tcp = |(_, f): &(usize, &crate::Flow)| f.kind == crate::FlowKind::Tcp;
    sc.flows.iter().enumerate().filter(tcp).map(|(i, f)| (i as u32, f.start as f64 / 1e9)).collect()
}

/// The first time from which every row's Jain index stays at or above [`CONVERGED_JAIN`],
/// measured from `t0`.
fn settled_since(rows: &[(f64, Vec<f64>)], t0: f64) -> Option<f64> {
    let last_unsettled = rows.iter().rposition(|(_, bytes)| jain_index(bytes) < CONVERGED_JAIN);
    let first_settled = last_unsettled.map_or(0, |i| i + 1);
    rows.get(first_settled).map(|(t, _)| t - t0)
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 for an empty or all-zero set.
pub fn jain_index(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

/// Jain's index over the mean goodput of each group of flows with the same number of links
/// (`(links, goodput)` pairs); None with fewer than two groups.
pub fn jain_by_hops(flows: &[(usize, f64)]) -> Option<f64> {
    let mut hops: Vec<usize> = flows.iter().map(|&(h, _)| h).collect();
    hops.sort_unstable();
    hops.dedup();
    let means: Vec<f64> = hops
        .iter()
        .map(|&h| {
            let group: Vec<f64> = flows.iter().filter(|&&(g, _)| g == h).map(|&(_, x)| x).collect();
            group.iter().sum::<f64>() / group.len() as f64
        })
        .collect();
    (means.len() >= 2).then(|| jain_index(&means))
}

#[derive(Clone, Debug, Serialize)]
pub struct ScenarioSummary {
    pub duration_s: f64,
    pub warmup_s: f64,
    pub seed: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowSummary {
    pub name: String,
    /// `"tcp"`, `"quic"` (emulator only) or `"cbr"`.
    pub kind: &'static str,
    pub cca: String,
    /// Sending and receiving host, and the links the data crosses.
    pub from: String,
    pub to: String,
    pub path: Vec<String>,
    /// Base RTT (propagation only: the path both ways plus access delay).
    pub rtt_ms: f64,
    pub start_s: f64,
    pub size_bytes: Option<u64>,
    /// Payload delivered in order to the receiving application over the flow's active part of
    /// the measurement window.
    pub goodput_mbps: f64,
    /// Wire bytes of this flow's data arriving at the receiver (retransmissions included).
    pub throughput_mbps: f64,
    /// Standard deviation of that rate over the window's bins (the ± of the SIAD thesis's rate
    /// tables); NaN where it is not measured (the emulator).
    pub throughput_std_mbps: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Start (SYN) to acknowledgment of the last byte; None if unfinished or infinite.
    pub fct_s: Option<f64>,
    pub bytes_delivered: u64,
    /// Window reductions over the whole run by cause: ECN-Echo, and loss found by ACKs
    /// (`timeouts` counts the RTO ones); reductions later undone as spurious included.
    pub ecn_reductions: u64,
    pub loss_reductions: u64,
    pub ecn_negotiated: bool,
    /// One-way delay of CBR datagrams in the window.
    pub owd_ms: Option<Percentiles>,
    /// Queueing delay of this flow's data packets in the window: each packet's sojourn in each
    /// measured queue of its path (the bottleneck's, on a dumbbell). Per flow, so classes a
    /// queue keeps apart show apart (DualPI2's L and C queues, FQ-CoDel's flows). Only with
    /// `output.flow_delays`.
    pub queue_delay_ms: Option<Percentiles>,
    /// CBR datagrams dropped or lost on the way, whole run (datagrams still travelling are not lost).
    pub packets_lost: Option<u64>,
    /// Chunked flows: chunks fully acknowledged and connections opened, whole run.
    pub chunks: Option<u64>,
    pub connections: Option<u64>,
    /// The receive-side window controller (`receiver_cca`), if any.
    pub receiver_cca: Option<String>,
    /// Where the run departed from the configuration, in words: a receiver controller's
    /// fallback (rLEDBAT without timestamps) or a window scale too coarse for it.
    pub notes: Vec<String>,
    /// This flow's losses on its path in the window, grouped into congestion events within
    /// 2 × its RTT at each loss, base plus the queueing met ([`loss_events`]).
    pub loss_events: u64,
    pub loss_event_distance_s: Option<MeanStd>,
    /// cwnd swings between consecutive extrema in the window ([`Swings`]), as fractions of the
    /// buffer of the flow's bottleneck (the slowest link of its path); TCP only.
    pub oscillation: Option<MeanStd>,
    /// Times to reach 80 % and 95 % of the fair share after each change of it
    /// ([`reallocations`]); TCP flows of scenarios with at most
    /// [`MAX_REALLOCATION_FLOWS`] flows, unchunked.
    pub reallocations: Vec<Reallocation>,
}

/// Reallocations look at every other flow at every change: quadratic, so swarms go without.
pub const MAX_REALLOCATION_FLOWS: usize = 256;

#[derive(Clone, Debug, Serialize)]
pub struct LinkSummary {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Rate at the end of the run (scheduled changes included).
    pub rate_mbps: f64,
    /// Fraction of the window the transmitter was busy (headers included).
    pub utilization: f64,
    pub throughput_mbps: f64,
    /// `drops` = `overflow_drops` (the buffer was full) + `aqm_drops` (the AQM chose to).
    pub drops: u64,
    pub overflow_drops: u64,
    pub aqm_drops: u64,
    pub ecn_marks: u64,
    pub random_losses: u64,
    /// Wire bytes that left the queue in the window.
    pub bytes_departed: u64,
    /// Packets that arrived at the link in the window.
    pub packets: u64,
    pub loss_rate: f64,
    /// Queueing delay of packets leaving the link in the window; None where it is not measured
    /// (the reverse direction of a bidirectional link).
    pub queue_delay_ms: Option<Percentiles>,
    /// Backlog in packets at each AQM signal (mark or AQM drop) in the window; None without any.
    pub queue_at_signal_packets: Option<Percentiles>,
    /// η: wire bytes departed over what the link could carry at its final rate (L306).
    pub efficiency: f64,
    /// Time-weighted mean and least backlog over the window as fractions of the buffer limit
    /// (bytes over bytes, or packets over packets): the SIAD thesis's queue fill (L2138).
    pub queue_fill_mean: f64,
    pub queue_fill_min: f64,
    /// Drops and random losses here in the window grouped into congestion events within
    /// 2 × (the largest base RTT of the TCP flows crossing the link + the queueing at each
    /// loss) ([`loss_events`]).
    pub loss_events: u64,
    pub loss_event_distance_s: Option<MeanStd>,
    /// Among the TCP flows whose data crosses this link (None without two of them): Jain's
    /// index of their window throughputs, its 1 Hz short-term mean (`crate::fairness`), and
    /// the less-than-best-effort flows' share of their bytes.
    pub jain_long: Option<f64>,
    pub jain_short: Option<f64>,
    pub lbe_share: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub scenario: ScenarioSummary,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// Over the mean goodputs of TCP flows.
    pub jain_index: f64,
    /// Seconds from the last TCP flow's start until the flows share fairly for good
    /// ([`convergence_time`]); None with one TCP flow or if they never do.
    pub convergence_s: Option<f64>,
    /// Seconds until that index first reaches 0.95 (the paper's literal reading).
    pub convergence_first_s: Option<f64>,
    /// Goodput of the first TCP flow over the second's (the SIAD thesis's sharing ratio,
    /// Tables 4.2–4.3); None with fewer than two TCP flows.
    pub sharing_ratio: Option<f64>,
    /// Jain's index over the mean goodputs of groups of TCP flows crossing the same number of
    /// links (the parking lot's long flow against the short ones, Table 4.5); None with fewer
    /// than two such groups.
    pub jain_by_hops: Option<f64>,
    /// Over all TCP flows: the 1 Hz short-term Jain's index and the less-than-best-effort
    /// share of wire bytes in the window (`crate::fairness`).
    pub jain_short: Option<f64>,
    pub lbe_share: Option<f64>,
    pub events: u64,
    /// Packets created by all endpoints.
    pub packets: u64,
    pub wall_s: f64,
    /// Simulated time: the scenario's duration, or less for a run stopped early.
    pub sim_s: f64,
    /// The run was stopped before its end (Ctrl-C) and is summarised up to `sim_s`; absent from
    /// the JSON of a complete run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// Everything a run produces.
#[derive(Debug)]
pub struct SimResult {
    pub summary: Summary,
    pub flow_names: Vec<String>,
    pub link_names: Vec<String>,
    pub flows: FlowSeries,
    pub links: LinkSeries,
    pub sojourn: SojournSeries,
    pub owd: OwdSeries,
    pub conservation: Conservation,
}

/// Packet accounting at the end of a run: `injected == delivered + dropped + in_network`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conservation {
    pub injected: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_network: u64,
}

impl Conservation {
    pub fn holds(&self) -> bool {
        self.injected == self.delivered + self.dropped + self.in_network
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_extremes() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        assert!((jain_index(&[3.0, 1.0]) - 16.0 / 20.0).abs() < 1e-12);
    }

    /// The notes' worked example (`experiments-abe.md` §2): cumulative bytes (3.5, 1.5) MB at
    /// +5 s (J 0.862), (6.5, 4.0) at +10 s (J 0.946), (7.1, 4.6) at +11 s (J 0.956): 11 s.
    #[test]
    fn convergence_is_when_jain_of_cumulative_bytes_reaches_095_for_good() {
        let rows = vec![(25.0, vec![3.5, 1.5]), (30.0, vec![6.5, 4.0]), (31.0, vec![7.1, 4.6])];
        assert_eq!(settled_since(&rows, 20.0), Some(11.0));
        // A dip below 0.95 afterwards moves it later; never settling gives None.
        let dip = vec![(21.0, vec![1.0, 1.0]), (22.0, vec![3.0, 1.0]), (23.0, vec![4.0, 3.9])];
        assert_eq!(settled_since(&dip, 20.0), Some(3.0));
        assert_eq!(settled_since(&dip[..2], 20.0), None);
    }

    /// From the series: flow 1 starts at 1 s; bytes count from then, per 1 s bin.
    #[test]
    fn convergence_from_the_flow_series() {
        let mut s = FlowSeries::default();
        for (t, a, b) in [(1.0, 8.0, 0.0), (2.0, 6.0, 2.0), (3.0, 5.0, 3.0), (4.0, 4.0, 4.0), (5.0, 4.0, 4.0)]
        {
            for (flow, mbps) in [(0, a), (1, b)] {
                s.t_s.push(t);
                s.flow.push(flow);
                s.goodput_mbps.push(mbps);
            }
        }
        // Cumulative since 1 s: (6, 2) J 0.8, (11, 5) J 0.89, (15, 9) J 0.94, (19, 13) J 0.966.
        let c = convergence_time(&s, &[(0, 0.0), (1, 1.0)], 1.0);
        assert_eq!((c.settled_s, c.first_s), (Some(4.0), Some(4.0)));
        assert_eq!(convergence_time(&s, &[(0, 0.0)], 1.0), Convergence::default(), "one flow");
        // Fair for a while, then the first flow takes the link back: first reach, never settled.
        let mut s = FlowSeries::default();
        for (t, a, b) in [(1.0, 8.0, 0.0), (2.0, 0.0, 8.0), (3.0, 8.0, 1.0), (4.0, 4.0, 7.0)] {
            for (flow, mbps) in [(0, a), (1, b)] {
                s.t_s.push(t);
                s.flow.push(flow);
                s.goodput_mbps.push(mbps);
            }
        }
        // Since 1 s: (0, 8) J 0.5, (8, 9) J 0.997, (12, 16) J 0.98: first and settled at 2 s.
        let c = convergence_time(&s, &[(0, 0.0), (1, 1.0)], 1.0);
        assert_eq!((c.first_s, c.settled_s), (Some(2.0), Some(2.0)));
        s.t_s.extend([5.0, 5.0]);
        s.flow.extend([0, 1]);
        s.goodput_mbps.extend([30.0, 0.0]);
        // Then (42, 16): J 0.83 at the end, so it never settles; the first reach stays.
        let c = convergence_time(&s, &[(0, 0.0), (1, 1.0)], 1.0);
        assert_eq!((c.first_s, c.settled_s), (Some(2.0), None));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let p = percentiles(&mut v).unwrap();
        assert_eq!((p.p50, p.p90, p.p99), (50.0, 90.0, 99.0));
        assert!((p.mean - 50.5).abs() < 1e-12);
        assert!(percentiles(&mut []).is_none());
    }
}
