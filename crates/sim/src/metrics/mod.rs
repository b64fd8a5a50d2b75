//! Measurements while the simulation runs: the recorder of per-packet samples and loss events,
//! cwnd swings, and what the summary needs of the simulator's own state. The result types and
//! the summary's assembly are `ccbench_scenario::results`, shared with the emulator.

pub mod measurements;
pub mod oscillation;
pub mod window_stats;

pub use ccbench_scenario::results::*;
pub use oscillation::Swings;

use crate::net::LinkObserver;

fn secs(t: Nanos) -> f64 {
    t as f64 / 1e9
}

fn ms(t: Nanos) -> f64 {
    t as f64 / 1e6
}

/// What the summary needs of a flow's losses: its base RTT and the links of its data path.
#[derive(Clone, Debug, Default)]
pub struct LossWindow {
    pub rtt: Nanos,
    pub path: Box<[u32]>,
}

/// Collects per-packet measurements while the simulation runs: streaming percentiles and loss
/// events for the summary (memory flat in simulated time), and the exact per-packet series
/// only where the scenario asks for them (`output.sojourn_samples`, `output.owd_samples`).
#[derive(Default)]
pub struct Recorder {
    pub warmup: Nanos,
    pub keep_sojourn_series: bool,
    pub sojourn: SojournSeries,
    /// Sojourn times (ns) of measured links inside the measurement window, per link.
    pub window_sojourns: Vec<Quantiles>,
    pub keep_owd_series: bool,
    pub owd: OwdSeries,
    /// One-way delays (ns) of CBR datagrams inside the measurement window, per flow.
    pub window_owds: Vec<Quantiles>,
    /// Sojourn times (ns) of each flow's data packets at the measured links of its path, inside
    /// the measurement window; empty unless `output.flow_delays` asks for them.
    pub window_flow_sojourns: Vec<Quantiles>,
    /// Per link: the largest base RTT of the TCP flows crossing it (its loss-grouping RTT).
    pub link_rtts: Vec<Nanos>,
    pub link_losses: Vec<LossGrouper>,
    pub flow_windows: Vec<LossWindow>,
    pub flow_losses: Vec<LossGrouper>,
}

impl Recorder {
    pub fn record_owd(&mut self, flow: u32, now: Nanos, owd: Nanos) {
        if self.keep_owd_series {
            self.owd.t_s.push(secs(now));
            self.owd.flow.push(flow);
            self.owd.owd_ms.push(ms(owd));
        }
        if now >= self.warmup {
            self.window_owds[flow as usize].record(owd);
        }
    }
}

impl LinkObserver for Recorder {
    fn sojourn(&mut self, link: u32, now: Nanos, flow: u32, sojourn: Nanos) {
        if self.keep_sojourn_series {
            self.sojourn.t_s.push(secs(now));
            self.sojourn.link.push(link);
            self.sojourn.flow.push(flow);
            self.sojourn.sojourn_ms.push(ms(sojourn));
        }
        if now >= self.warmup {
            if let Some(q) = self.window_sojourns.get_mut(link as usize) {
                q.record(sojourn);
            }
            let f = flow as usize;
            if let (Some(q), Some(w)) = (self.window_flow_sojourns.get_mut(f), self.flow_windows.get(f)) {
                if w.path.contains(&link) {
                    q.record(sojourn);
                }
            }
        }
    }

    /// Loss events at the link, each loss grouped within 2 × (the link's RTT + its queueing),
    /// and of the flow when the link is on its data path, within 2 × (the flow's RTT + queueing).
    fn loss(&mut self, link: u32, now: Nanos, flow: u32, queue_delay: Nanos) {
        let l = link as usize;
        if let (Some(g), Some(&rtt)) = (self.link_losses.get_mut(l), self.link_rtts.get(l)) {
            g.add(now, 2 * (rtt + queue_delay), self.warmup);
        }
        let f = flow as usize;
        if let (Some(g), Some(w)) = (self.flow_losses.get_mut(f), self.flow_windows.get(f)) {
            if w.path.contains(&link) {
                g.add(now, 2 * (w.rtt + queue_delay), self.warmup);
            }
        }
    }
}
