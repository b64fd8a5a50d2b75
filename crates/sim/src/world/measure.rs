//! What the event loop measures: the series sampled at each bin, the marks at the warm-up, and
//! the run's summary at the end, read from the simulator's state and assembled by
//! `ccbench_scenario::results`.

use super::*;

impl Simulation<'_> {
    /// Per flow, when it stops taking capacity: its `stop`, its last byte acknowledged, or the
    /// end of the run.
    pub(super) fn active_ends(&self, sc: &Scenario) -> Vec<Nanos> {
        let end = sc.duration;
        let finished = |e: &Endpoints| match e {
            Endpoints::Tcp { tx, .. } => tx.fct.map(|d| tx.start_time + d),
            Endpoints::Cbr { .. } => None,
        };
        let ends = sc.flows.iter().zip(&self.ends);
        ends.map(|(f, e)| finished(e).unwrap_or(end).min(f.stop.unwrap_or(end)).min(end)).collect()
    }

    pub(super) fn flow_mark(e: &Endpoints, carry: &Carry) -> FlowMark {
        match e {
            Endpoints::Tcp { tx, rx } => FlowMark {
                delivered: carry.mark.delivered + rx.delivered,
                wire_received: carry.mark.wire_received + rx.wire_bytes_received,
                retransmits: carry.mark.retransmits + tx.stats.retransmits,
            },
            Endpoints::Cbr { rx, .. } => {
                FlowMark { delivered: rx.delivered, wire_received: rx.wire_bytes_received, retransmits: 0 }
            }
        }
    }

    /// The measurement window opens: counters are marked, and the least backlog and the cwnd
    /// swings start afresh.
    pub(super) fn warm_up(&mut self) {
        self.warm = Some(self.marks());
        self.net.links.iter_mut().for_each(|l| l.reset_min_backlog());
        for (i, e) in self.ends.iter().enumerate() {
            if let Endpoints::Tcp { tx, .. } = e {
                let f = &self.sc.flows[i];
                self.swings[i] = Some(Swings::new(2 * f.tcp.mss as u64, tx.cc_state().cwnd));
            }
        }
    }

    pub(super) fn marks(&self) -> Marks {
        Marks {
            flows: self.ends.iter().zip(&self.carry).map(|(e, c)| Self::flow_mark(e, c)).collect(),
            links: self
                .net
                .links
                .iter()
                .map(|l| (l.counters, l.busy_until(self.now), l.queue_integrals(self.now)))
                .collect(),
        }
    }

    pub(super) fn sample(&mut self) {
        let now = self.now;
        let t = now as f64 / 1e9;
        let bin_s = self.sc.output.bin as f64 / 1e9;
        let mbps = |bytes: u64| bytes as f64 * 8.0 / bin_s / 1e6;
        for (i, e) in self.ends.iter().enumerate() {
            let m = Self::flow_mark(e, &self.carry[i]);
            let prev = self.last_sample.flows[i];
            let f = &mut self.flows;
            f.t_s.push(t);
            f.flow.push(i as u32);
            f.goodput_mbps.push(mbps(m.delivered - prev.delivered));
            f.throughput_mbps.push(mbps(m.wire_received - prev.wire_received));
            f.retransmits.push(m.retransmits - prev.retransmits);
            let lost = {
                let fl = &self.sc.flows[i];
                fl.path
                    .iter()
                    .chain(&fl.ack_path)
                    .map(|&l| self.net.links[l].losses_of(i as u32))
                    .sum::<u64>()
            };
            f.losses.push(lost - self.sampled_losses[i]);
            self.sampled_losses[i] = lost;
            match e {
                Endpoints::Tcp { tx, .. } => {
                    let st = tx.cc_state();
                    f.cwnd_bytes.push(st.cwnd as f64);
                    f.ssthresh_bytes.push(if st.ssthresh == u64::MAX {
                        f64::NAN
                    } else {
                        st.ssthresh as f64
                    });
                    f.srtt_ms.push(tx.srtt().map_or(f64::NAN, |r| r as f64 / 1e6));
                    f.inflight_bytes.push(tx.inflight() as f64);
                }
                Endpoints::Cbr { .. } => {
                    f.cwnd_bytes.push(f64::NAN);
                    f.ssthresh_bytes.push(f64::NAN);
                    f.srtt_ms.push(f64::NAN);
                    f.inflight_bytes.push(f64::NAN);
                }
            }
            self.last_sample.flows[i] = m;
        }
        let bin = self.sc.output.bin as f64;
        for (i, l) in self.net.links.iter_mut().enumerate() {
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

    pub(super) fn finish(mut self, wall_s: f64) -> SimResult {
        // A run stopped early is summarised as the scenario cut at the time it reached.
        let partial = self.now < self.sc.duration;
        let cut;
        let sc: &Scenario = if partial {
            cut = self.sc.cut_at(self.now);
            &cut
        } else {
            self.sc
        };
        let warm = self.warm.take().unwrap_or_else(|| self.marks());
        let active_ends = self.active_ends(sc);
        let (rate_std, rows) = window_stats::per_flow_rows(sc, &self.flows, &active_ends);
        let mut flows = Vec::with_capacity(self.ends.len());
        let mut shares = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            let (mut w, share) = self.flow_window(sc, i, &warm, active_ends[i]);
            w.throughput_std_mbps = rate_std[i];
            w.reallocations = window_stats::flow_reallocations(sc, i, &active_ends, &rows);
            flows.push(flow_summary(sc, f, w));
            shares.extend(share);
        }
        let links = self.link_windows(sc, &warm, &shares);

        self.conservation.dropped =
            self.net.links.iter().map(|l| l.counters.drops() + l.counters.random_losses).sum();
        self.conservation.in_network = self.net.links.iter().map(|l| l.packets_held() as u64).sum();
        let totals = RunTotals {
            sharing: self.sharing(sc, &shares.iter().collect::<Vec<_>>()),
            events: self.events.processed(),
            packets: self.conservation.injected,
            wall_s,
            sim_s: sc.duration as f64 / 1e9,
            partial,
        };
        let summary = run_summary(sc, self.sc.duration as f64 / 1e9, flows, links, &self.flows, totals);
        SimResult {
            summary,
            flow_names: sc.flows.iter().map(|f| f.name.clone()).collect(),
            link_names: self.net.links.iter().map(|l| l.name.clone()).collect(),
            flows: self.flows,
            links: self.links,
            sojourn: std::mem::take(&mut self.rec.sojourn),
            owd: std::mem::take(&mut self.rec.owd),
            conservation: self.conservation,
        }
    }

    /// What flow `i` did in the measurement window (its active part; a flow that ended before
    /// the window is measured over its whole life instead), and its share of the wire for the
    /// sharing metrics if it is a TCP flow. Its rate's deviation and reallocations are filled
    /// in by the caller.
    pub(super) fn flow_window(
        &self,
        sc: &Scenario,
        i: usize,
        warm: &Marks,
        active_end: Nanos,
    ) -> (FlowWindow, Option<Share>) {
        let (f, e, carry) = (&sc.flows[i], &self.ends[i], self.carry[i]);
        let m = Self::flow_mark(e, &carry);
        let w = if active_end <= sc.warmup { FlowMark::default() } else { warm.flows[i] };
        let (bytes, wire) = (m.delivered - w.delivered, m.wire_received - w.wire_received);
        let span = if active_end <= sc.warmup {
            active_end.saturating_sub(f.start)
        } else {
            active_end - sc.warmup.max(f.start)
        };
        let rate = |b: u64| if span > 0 { b as f64 * 8.0 / (span as f64 / 1e9) / 1e6 } else { 0.0 };
        let chunks = self.chunks.counts(i as u32);
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
            queue_delay_ms: self.rec.window_flow_sojourns.get(i).and_then(|q| q.percentiles(1e-6)),
            packets_lost: None,
            chunks,
            notes: Vec::new(),
            losses: self.rec.flow_losses[i].events(),
            oscillation: None,
            reallocations: Vec::new(),
        };
        match e {
            Endpoints::Tcp { tx, rx } => {
                let buffer = window_stats::bottleneck_buffer_bytes(sc, i);
                window.timeouts = carry.timeouts + tx.stats.timeouts;
                window.fct_s = tx.fct.map(|d| d as f64 / 1e9);
                window.ecn_reductions = carry.ecn_reductions + tx.stats.ecn_reductions;
                window.loss_reductions = carry.loss_reductions + tx.stats.loss_reductions;
                window.ecn_negotiated = tx.ecn_negotiated();
                window.notes = rx.notes();
                window.oscillation = self.swings[i].as_ref().zip(buffer).and_then(|(s, b)| s.relative_to(b));
                let lbe = is_less_than_best_effort(&f.cca)
                    || f.tcp.receiver_cca.as_deref().is_some_and(is_less_than_best_effort);
                (window, Some(Share { flow: i, rate: rate(wire), bytes: wire, lbe }))
            }
            Endpoints::Cbr { .. } => {
                window.owd_ms = self.rec.window_owds[i].percentiles(1e-6);
                window.packets_lost = Some(self.net.links.iter().map(|l| l.losses_of(i as u32)).sum());
                (window, None)
            }
        }
    }

    /// Each link with a queue over the measurement window (access links have none: nothing to
    /// report), with the sharing among the TCP `shares` crossing it.
    pub(super) fn link_windows(&self, sc: &Scenario, warm: &Marks, shares: &[Share]) -> Vec<LinkSummary> {
        let end = sc.duration;
        let window = (end - sc.warmup.min(end)).max(1) as f64 / 1e9;
        let mut links = Vec::with_capacity(self.net.links.len());
        for (i, l) in self.net.links.iter().enumerate() {
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
            links.push(link_summary(LinkWindow {
                spec: &sc.topology.links[i],
                nodes: &sc.topology.nodes,
                rate: l.rate(),
                counters,
                window_s: window,
                queue_delay: self.rec.window_sojourns[i].percentiles(1e-6),
                queue_at_signal: l.signal_backlogs.percentiles(1.0),
                fill: (fill_mean, fill_min),
                losses: self.rec.link_losses[i].events(),
                sharing: self.sharing(sc, &crossing),
            }));
        }
        links
    }

    /// The fLEDBAT paper's sharing metrics over `flows` (None for fewer than two flows).
    pub(super) fn sharing(&self, sc: &Scenario, flows: &[&Share]) -> Sharing {
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

/// One TCP flow's part of the window: mean wire rate, wire bytes, and whether it is LBE.
pub(super) struct Share {
    flow: usize,
    rate: f64,
    bytes: u64,
    lbe: bool,
}
