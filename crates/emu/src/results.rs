//! From what the traffic programs and the forwarder measured to the simulator's result types:
//! the same summary (`goodput_mbps` over each flow's active part of `[warmup, duration]`, link
//! counters over the window, queueing-delay percentiles) and the same four series, so a run
//! directory of `ccbench emu` reads like one of `ccbench run`.
//!
//! What the kernel does not tell a user-space program is reported as such: `throughput_mbps`
//! of a flow is NaN (wire bytes per flow are not counted), `timeouts` is 0, and so are a kernel
//! TCP flow's `ecn_reductions` and `loss_reductions` (`TCP_INFO` counts none of them; a QUIC
//! flow's controller counts its own), `queue_at_signal_packets` is
//! None, `events` is 0, `packets` counts link arrivals.

use ccbench_aqm::Limit;
use ccbench_link::LinkCounters;
use ccbench_scenario::results::{
    self, flow_summary, percentiles, run_summary, FlowSeries, FlowSummary, FlowWindow, LinkSeries,
    LinkSummary, LinkWindow, LossEvents, OwdSeries, Percentiles, RunTotals, Sharing, SojournSeries,
};
use ccbench_scenario::results::{Conservation, SimResult};
use ccbench_scenario::{FlowKind, LinkSpec, Scenario, Topology};
use serde_json::Value;

use crate::apps::{Outputs, BASE_PORT};
use crate::forwarder::{LinkReport, QueueSample, Report};

type Nanos = u64;

fn f64s(v: &Value, key: &str) -> Vec<f64> {
    v[key].as_array().map(|a| a.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect()).unwrap_or_default()
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v[key].as_f64()
}

/// The run as the simulator would report it.
pub fn build(sc: &Scenario, topo: &Topology, report: &Report, outputs: &Outputs, wall_s: f64) -> SimResult {
    let flows: Vec<FlowSummary> = sc
        .flows
        .iter()
        .enumerate()
        .zip(flow_queue_delays(sc, topo, report))
        .map(|((i, f), delays)| {
            let window = FlowWindow { queue_delay_ms: delays, ..flow_window(sc, i, &outputs[i]) };
            flow_summary(sc, f, window)
        })
        .collect();
    // Access links (infinitely fast, no queue) are not reported, as in the simulator.
    let queues = |&(i, _): &(usize, &LinkReport)| topo.links[i].rate.is_finite();
    let links =
        report.links.iter().enumerate().filter(queues).map(|(i, l)| link_summary(sc, topo, i, l)).collect();
    let series = flow_series(sc, outputs);
    let totals = RunTotals {
        sharing: Sharing::default(),
        events: 0,
        packets: report.links.iter().map(|l| l.counters.arrivals).sum(),
        wall_s,
        sim_s: secs(sc.duration),
        partial: false,
    };
    let summary = run_summary(sc, secs(sc.duration), flows, links, &series, totals);
    SimResult {
        summary,
        flow_names: sc.flows.iter().map(|f| f.name.clone()).collect(),
        link_names: report.links.iter().map(|l| l.name.clone()).collect(),
        flows: series,
        links: link_series(sc, topo, report),
        sojourn: sojourn_series(sc, topo, report),
        owd: if sc.output.owd_samples { owd_series(outputs) } else { OwdSeries::default() },
        conservation: Conservation::default(),
    }
}

fn secs(ns: Nanos) -> f64 {
    ns as f64 / 1e9
}

fn bins(sc: &Scenario) -> usize {
    (sc.duration / sc.output.bin) as usize
}

/// Payload bytes the receiver got per bin, and its total.
fn received(rx: &Value) -> (Vec<f64>, f64) {
    (f64s(rx, "bytes_per_bin"), num(rx, "bytes").or_else(|| num(rx, "received")).unwrap_or(0.0))
}

fn flow_window(sc: &Scenario, i: usize, (tx, rx): &(Value, Value)) -> FlowWindow {
    let f = &sc.flows[i];
    let bin = secs(sc.output.bin);
    let finished = num(tx, "last_ack_s").filter(|_| f.size.is_some() && tx["completed"] == Value::Bool(true));
    let end = secs(sc.duration);
    let active_end = finished.unwrap_or(end).min(f.stop.map_or(end, secs)).min(end);
    let (per_bin, total) = received(rx);
    let (warm, start) = (secs(sc.warmup), secs(f.start));
    let (bytes, span) = if active_end <= warm {
        (total, active_end - start)
    } else {
        let first = (warm / bin).round() as usize;
        let last = ((active_end / bin).ceil() as usize).min(per_bin.len());
        (per_bin.get(first..last).map_or(0.0, |b| b.iter().sum()), active_end - warm.max(start))
    };
    let goodput = if span > 0.0 { bytes * 8.0 / span / 1e6 } else { 0.0 };
    let tcp = f.kind == FlowKind::Tcp;
    let mut owd: Vec<f64> = f64s(&rx["datagrams"], "owd_us").iter().map(|us| us / 1e3).collect();
    FlowWindow {
        goodput_mbps: goodput,
        throughput_mbps: f64::NAN,
        throughput_std_mbps: f64::NAN,
        retransmits: window_retransmits(sc, tx, active_end),
        timeouts: 0,
        fct_s: num(tx, "fct_s"),
        bytes_delivered: total as u64,
        // A QUIC source counts its controller's reduction episodes; TCP_INFO shows none.
        ecn_reductions: num(tx, "ecn_reductions").unwrap_or(0.0) as u64,
        chunks: None,
        notes: Vec::new(),
        loss_reductions: num(tx, "loss_reductions").unwrap_or(0.0) as u64,
        ecn_negotiated: tx["ecn_negotiated"] == Value::Bool(true),
        owd_ms: if tcp { None } else { percentiles(&mut owd) },
        // Filled from the forwarder's sojourn records (`flow_queue_delays`).
        queue_delay_ms: None,
        packets_lost: (!tcp).then(|| (num(tx, "packets_sent").unwrap_or(0.0) - total).max(0.0) as u64),
        // Not measured on the real stack: the forwarder logs no loss times per flow and
        // the kernel's cwnd is sampled per bin, not per ACK.
        losses: LossEvents::default(),
        oscillation: None,
        reallocations: Vec::new(),
    }
}

/// Segments retransmitted in the flow's window, from `TCP_INFO`'s cumulative count sampled at
/// each bin edge (the whole run's total if the flow was never sampled).
fn window_retransmits(sc: &Scenario, tx: &Value, active_end: f64) -> u64 {
    let series = &tx["series"];
    let (t, total) = (f64s(series, "t_s"), f64s(series, "retrans_total"));
    let at = |when: f64| t.iter().rposition(|&ts| ts <= when + 1e-9).and_then(|j| total.get(j).copied());
    match (at(secs(sc.warmup)), at(active_end).or_else(|| total.last().copied())) {
        (from, Some(to)) if active_end > secs(sc.warmup) => (to - from.unwrap_or(0.0)).max(0.0) as u64,
        _ => num(tx, "retransmits").unwrap_or(0.0) as u64,
    }
}

/// The last sample at or before `t` (cumulative counters there), or zeros.
fn at(samples: &[QueueSample], t: Nanos) -> QueueSample {
    samples.iter().take_while(|s| s.t <= t).last().copied().unwrap_or_default()
}

/// Mean and least backlog of the forwarder's samples in the window, as fractions of the limit
/// (the samples are periodic, so their mean is time-weighted at their resolution).
fn queue_fill(spec: &LinkSpec, samples: &[QueueSample], sc: &Scenario) -> (f64, f64) {
    let inside = samples.iter().filter(|q| (sc.warmup..=sc.duration).contains(&q.t));
    let fills: Vec<f64> = match spec.limit {
        Limit::Bytes(b) => inside.map(|q| q.queue_bytes as f64 / b as f64).collect(),
        Limit::Packets(n) => inside.map(|q| q.queue_packets as f64 / n as f64).collect(),
    };
    let mean = fills.iter().sum::<f64>() / fills.len().max(1) as f64;
    (mean, fills.iter().copied().fold(f64::NAN, f64::min))
}

fn link_summary(sc: &Scenario, topo: &Topology, i: usize, l: &LinkReport) -> LinkSummary {
    let spec = &topo.links[i];
    // The window's counters, from the samples at its edges: the forwarder runs on a little
    // after the scenario's end while the programs report.
    let (w, c) = (at(&l.samples, sc.warmup), at(&l.samples, sc.duration));
    let mut delays: Vec<f64> = l
        .sojourn
        .iter()
        .filter(|s| (sc.warmup..sc.duration).contains(&s.at))
        .map(|s| s.sojourn as f64 / 1e6)
        .collect();
    results::link_summary(LinkWindow {
        spec,
        nodes: &topo.nodes,
        rate: l.rate,
        counters: counters(&c).since(&counters(&w)),
        window_s: secs(sc.duration - sc.warmup),
        queue_delay: percentiles(&mut delays),
        // Not measured on the real stack: the forwarder logs no signal backlogs, loss times
        // or per-flow shares.
        queue_at_signal: None,
        fill: queue_fill(spec, &l.samples, sc),
        losses: LossEvents::default(),
        sharing: Sharing::default(),
    })
}

/// A forwarder sample's counters as the link model counts them.
fn counters(q: &QueueSample) -> LinkCounters {
    LinkCounters {
        arrivals: q.arrivals,
        departures: q.departures,
        bytes_departed: q.bytes_departed,
        overflow_drops: q.drops - q.aqm_drops,
        aqm_drops: q.aqm_drops,
        ecn_marks: q.ecn_marks,
        random_losses: q.random_losses,
        busy_ns: q.busy_ns,
        ..LinkCounters::default()
    }
}

fn flow_series(sc: &Scenario, outputs: &Outputs) -> FlowSeries {
    let mut s = FlowSeries::default();
    let bin = secs(sc.output.bin);
    for (i, (tx, rx)) in outputs.iter().enumerate() {
        let (per_bin, _) = received(rx);
        let series = &tx["series"];
        let (t, cwnd, srtt) = (f64s(series, "t_s"), f64s(series, "cwnd_bytes"), f64s(series, "srtt_us"));
        let (unacked, retx) = (f64s(series, "unacked_segs"), f64s(series, "retrans_total"));
        // A QUIC source counts its controller's ECN reductions; TCP_INFO has no such count.
        let ecn = f64s(series, "ecn_reductions");
        let mss = num(tx, "mss_bytes").unwrap_or(f64::NAN);
        let (mut prev_retx, mut prev_ecn) = (0.0, 0.0);
        for k in 0..bins(sc) {
            let edge = (k + 1) as f64 * bin;
            // The sender's last sample at or before the bin's end.
            let j = t.iter().rposition(|&ts| ts <= edge + 1e-9);
            let pick = |v: &[f64]| j.and_then(|j| v.get(j).copied()).unwrap_or(f64::NAN);
            s.t_s.push(edge);
            s.flow.push(i as u32);
            s.goodput_mbps.push(per_bin.get(k).copied().unwrap_or(0.0) * 8.0 / bin / 1e6);
            s.throughput_mbps.push(f64::NAN);
            s.cwnd_bytes.push(pick(&cwnd));
            s.ssthresh_bytes.push(f64::NAN);
            s.srtt_ms.push(pick(&srtt) / 1e3);
            s.inflight_bytes.push(pick(&unacked) * mss);
            let r = pick(&retx);
            let r = if r.is_nan() { prev_retx } else { r };
            s.retransmits.push((r - prev_retx).max(0.0) as u64);
            s.losses.push(0); // the forwarder counts drops per link, not per flow
            prev_retx = r;
            let e = pick(&ecn);
            let e = if e.is_nan() { prev_ecn } else { e };
            s.ecn_reductions.push((e - prev_ecn).max(0.0) as u64);
            prev_ecn = e;
        }
    }
    s
}

fn link_series(sc: &Scenario, topo: &Topology, report: &Report) -> LinkSeries {
    let mut s = LinkSeries::default();
    let bin = sc.output.bin;
    for (i, l) in report.links.iter().enumerate().filter(|(i, _)| topo.links[*i].rate.is_finite()) {
        let mut prev = QueueSample::default();
        for k in 0..bins(sc) {
            let (from, to) = (k as Nanos * bin, (k as Nanos + 1) * bin);
            let inside: Vec<&QueueSample> = l.samples.iter().filter(|q| q.t > from && q.t <= to).collect();
            let n = inside.len().max(1) as f64;
            let now = at(&l.samples, to);
            let bytes = (now.bytes_departed - prev.bytes_departed) as f64;
            s.t_s.push(secs(to));
            s.link.push(i as u32);
            s.queue_bytes.push(inside.iter().map(|q| q.queue_bytes as f64).sum::<f64>() / n);
            s.queue_packets.push(inside.iter().map(|q| q.queue_packets as f64).sum::<f64>() / n);
            s.utilization.push((now.busy_ns - prev.busy_ns) as f64 / 1e9 / secs(bin));
            s.throughput_mbps.push(bytes * 8.0 / secs(bin) / 1e6);
            s.drops.push(now.drops - prev.drops);
            s.arrivals.push(now.arrivals - prev.arrivals);
            s.random_losses.push(now.random_losses - prev.random_losses);
            s.ecn_marks.push(now.ecn_marks - prev.ecn_marks);
            s.departed_bytes.push(now.bytes_departed);
            s.aqm_probability.push(now.aqm_probability);
            prev = now;
        }
    }
    s
}

/// Flow `i` listens on `BASE_PORT + i`: its data goes to that port, its ACKs come from it.
fn flow_of(sport: u16, dport: u16, flows: usize) -> Option<u32> {
    [dport, sport]
        .into_iter()
        .map(|p| p.wrapping_sub(BASE_PORT) as usize)
        .find(|&i| i < flows)
        .map(|i| i as u32)
}

/// Per flow, the sojourns of its data packets in the window at the measured links of its path
/// (the simulator's `FlowSummary::queue_delay_ms`).
fn flow_queue_delays(sc: &Scenario, topo: &Topology, report: &Report) -> Vec<Option<Percentiles>> {
    if !sc.output.flow_delays {
        return vec![None; sc.flows.len()];
    }
    let mut delays = vec![Vec::new(); sc.flows.len()];
    for (i, l) in report.links.iter().enumerate().filter(|(i, _)| topo.links[*i].measure_sojourn) {
        let inside = l.sojourn.iter().filter(|s| (sc.warmup..sc.duration).contains(&s.at));
        for p in inside {
            let flow = flow_of(p.flow.sport, p.flow.dport, sc.flows.len()).map(|f| f as usize);
            if let Some(f) = flow.filter(|&f| sc.flows[f].path.contains(&i)) {
                delays[f].push(p.sojourn as f64 / 1e6);
            }
        }
    }
    delays.iter_mut().map(|d| percentiles(d)).collect()
}

fn sojourn_series(sc: &Scenario, topo: &Topology, report: &Report) -> SojournSeries {
    let mut s = SojournSeries::default();
    if !sc.output.sojourn_samples {
        return s;
    }
    for (i, l) in report.links.iter().enumerate().filter(|(i, _)| topo.links[*i].measure_sojourn) {
        for p in &l.sojourn {
            if let Some(flow) = flow_of(p.flow.sport, p.flow.dport, sc.flows.len()) {
                s.t_s.push(secs(p.at));
                s.link.push(i as u32);
                s.flow.push(flow);
                s.sojourn_ms.push(p.sojourn as f64 / 1e6);
            }
        }
    }
    s
}

fn owd_series(outputs: &Outputs) -> OwdSeries {
    let mut s = OwdSeries::default();
    for (i, (_, rx)) in outputs.iter().enumerate() {
        let d = &rx["datagrams"];
        for (t, owd) in f64s(d, "sent_s").into_iter().zip(f64s(d, "owd_us")) {
            s.t_s.push(t + owd / 1e6);
            s.flow.push(i as u32);
            s.owd_ms.push(owd / 1e3);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_are_found_by_their_port_in_either_direction() {
        assert_eq!(flow_of(40000, BASE_PORT + 2, 3), Some(2));
        assert_eq!(flow_of(BASE_PORT + 1, 40000, 3), Some(1));
        assert_eq!(flow_of(40000, BASE_PORT + 3, 3), None);
        assert_eq!(flow_of(53, 80, 3), None);
    }

    #[test]
    fn goodput_counts_the_window_from_the_receivers_bins() {
        let text = "duration = \"2s\"\nwarmup = \"1s\"\n[bottleneck]\nrate = \"10Mbps\"\n[[flows]]\n";
        let sc = ccbench_scenario::parse_str(text, "t", &[], None).unwrap();
        // 20 bins of 100 ms; 125 000 bytes each = 10 Mbps.
        let rx = serde_json::json!({"bytes": 2_500_000.0, "bytes_per_bin": vec![125_000.0; 20]});
        let series = serde_json::json!({"t_s": [0.5, 1.0, 1.5, 2.0], "retrans_total": [1, 3, 4, 6]});
        let tx = serde_json::json!({"retransmits": 7, "fct_s": null, "series": series});
        let f = flow_window(&sc, 0, &(tx, rx));
        assert!((f.goodput_mbps - 10.0).abs() < 1e-9, "{}", f.goodput_mbps);
        // Retransmissions in the window [1 s, 2 s]: 6 − 3.
        assert_eq!((f.retransmits, f.bytes_delivered), (3, 2_500_000));
        assert!(f.throughput_mbps.is_nan());
    }
}
