//! Measurements: columnar time series sampled at bin boundaries, per-packet sojourn and one-way
//! delay records, and the summary over the measurement window `[warmup, duration]`.

use serde::Serialize;

use crate::net::SojournRecorder;
use crate::packet::Packet;

pub type Nanos = u64;

fn secs(t: Nanos) -> f64 {
    t as f64 / 1e9
}

fn ms(t: Nanos) -> f64 {
    t as f64 / 1e6
}

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
    pub ecn_marks: Vec<u64>,
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

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Percentiles {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
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

#[derive(Clone, Debug, Serialize)]
pub struct ScenarioSummary {
    pub duration_s: f64,
    pub warmup_s: f64,
    pub seed: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowSummary {
    pub name: String,
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
    pub retransmits: u64,
    pub timeouts: u64,
    /// Start (SYN) to acknowledgment of the last byte; None if unfinished or infinite.
    pub fct_s: Option<f64>,
    pub bytes_delivered: u64,
    pub ecn_negotiated: bool,
    /// One-way delay of CBR datagrams in the window.
    pub owd_ms: Option<Percentiles>,
    /// CBR datagrams dropped or lost on the way, whole run (datagrams still travelling are not lost).
    pub packets_lost: Option<u64>,
}

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
    pub drops: u64,
    pub ecn_marks: u64,
    pub random_losses: u64,
    /// Packets that arrived at the link in the window.
    pub packets: u64,
    pub loss_rate: f64,
    /// Queueing delay of packets leaving the link in the window; None where it is not measured
    /// (the reverse direction of a bidirectional link).
    pub queue_delay_ms: Option<Percentiles>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub scenario: ScenarioSummary,
    pub flows: Vec<FlowSummary>,
    pub links: Vec<LinkSummary>,
    /// Over the mean goodputs of TCP flows.
    pub jain_index: f64,
    pub events: u64,
    /// Packets created by all endpoints.
    pub packets: u64,
    pub wall_s: f64,
    pub sim_s: f64,
}

/// Collects per-packet records while the simulation runs.
#[derive(Default)]
pub struct Recorder {
    pub warmup: Nanos,
    pub keep_sojourn_series: bool,
    pub sojourn: SojournSeries,
    /// Sojourn times of measured links inside the measurement window, for the summary percentiles.
    pub window_sojourns: Vec<Vec<f64>>,
    pub owd: OwdSeries,
    pub window_owds: Vec<Vec<f64>>,
}

impl Recorder {
    pub fn record_owd(&mut self, flow: u32, now: Nanos, owd: Nanos) {
        self.owd.t_s.push(secs(now));
        self.owd.flow.push(flow);
        self.owd.owd_ms.push(ms(owd));
        if now >= self.warmup {
            self.window_owds[flow as usize].push(ms(owd));
        }
    }
}

impl SojournRecorder for Recorder {
    fn record(&mut self, link: u32, now: Nanos, pkt: &Packet, sojourn: Nanos) {
        if self.keep_sojourn_series {
            self.sojourn.t_s.push(secs(now));
            self.sojourn.link.push(link);
            self.sojourn.flow.push(pkt.flow);
            self.sojourn.sojourn_ms.push(ms(sojourn));
        }
        if now >= self.warmup {
            if let Some(v) = self.window_sojourns.get_mut(link as usize) {
                v.push(ms(sojourn));
            }
        }
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

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let p = percentiles(&mut v).unwrap();
        assert_eq!((p.p50, p.p90, p.p99), (50.0, 90.0, 99.0));
        assert!((p.mean - 50.5).abs() < 1e-12);
        assert!(percentiles(&mut []).is_none());
    }
}
