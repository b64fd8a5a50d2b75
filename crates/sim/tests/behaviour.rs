//! End-to-end behaviour of the simulator against first-principles expectations.

mod common;

use common::*;

/// Serialisation time in ms of `wire_bytes` at `rate_bps`.
fn ser_ms(wire_bytes: f64, rate_bps: f64) -> f64 {
    wire_bytes * 8.0 / rate_bps * 1e3
}

// ----- CBR on an idle link -------------------------------------------------------------------

const LONE_CBR: &str = r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
[[flows]]
name = "voip"
type = "cbr"
packet_size = 160
interval = "20ms"
[output]
owd_samples = true
"#;

#[test]
fn lone_cbr_owd_is_propagation_plus_serialisation() {
    let r = run(LONE_CBR, &[], None);
    let expect = 20.0 + ser_ms(160.0 + 28.0, 10e6);
    assert!(r.owd.owd_ms.len() >= 499, "only {} datagrams received", r.owd.owd_ms.len());
    for (&t, &owd) in r.owd.t_s.iter().zip(&r.owd.owd_ms) {
        assert!((owd - expect).abs() < 0.2, "OWD {owd} ms at t={t}, expected ≈ {expect}");
    }
    let f = &r.summary.flows[0];
    let p = f.owd_ms.expect("owd percentiles");
    assert!((p.p99 - expect).abs() < 0.2 && (p.mean - expect).abs() < 0.2);
    assert!((f.goodput_mbps - 0.064).abs() < 0.064 * 0.02, "goodput {} Mbps, expected 0.064", f.goodput_mbps);
    assert_eq!(r.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().drops, 0);
    assert_eq!(r.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().random_losses, 0);
}

/// Nothing is dropped on an idle link, so the CBR flow must report no loss. Datagrams still in
/// flight when the run ends are not lost.
#[test]
fn lone_cbr_reports_no_loss() {
    let r = run(LONE_CBR, &[], None);
    assert!(r.conservation.holds());
    assert_eq!(r.summary.flows[0].packets_lost, Some(0), "in network at end: {}", r.conservation.in_network);
}

// ----- finite TCP flows ----------------------------------------------------------------------

const SHORT: &str = r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
rtt = "100ms"
buffer = "1bdp"
[[flows]]
cca = "cubic"
size = "200KB"
"#;

#[test]
fn finite_flow_delivers_exactly_its_size() {
    let r = run(SHORT, &[], None);
    let f = &r.summary.flows[0];
    assert_eq!(f.bytes_delivered, 200_000);
    assert_eq!(f.size_bytes, Some(200_000));
    let fct = f.fct_s.expect("finished");
    assert!(fct > 0.15, "fct {fct} s must exceed 1.5 RTT (handshake + data)");
    assert!(fct < 1.0, "fct {fct} s");
    assert!(r.conservation.holds());
}

#[test]
fn handshake_costs_one_rtt() {
    let with = run(SHORT, &[], None).summary.flows[0].fct_s.unwrap();
    let without = run(SHORT, &["flows.handshake=false"], None);
    assert_eq!(without.summary.flows[0].bytes_delivered, 200_000);
    let without = without.summary.flows[0].fct_s.unwrap();
    let diff = with - without;
    assert!((diff - 0.1).abs() < 0.005, "handshake added {diff} s, expected ≈ 1 RTT (0.1 s)");
}

#[test]
fn finite_flow_sizes_not_a_multiple_of_mss() {
    for size in ["1B", "1447B", "1448B", "1449B", "14481B", "1MB"] {
        let r = run(SHORT, &[&format!("flows.size={size}")], None);
        let f = &r.summary.flows[0];
        let want = f.size_bytes.unwrap();
        assert_eq!(f.bytes_delivered, want, "size {size}");
        assert!(f.fct_s.is_some(), "size {size} did not finish");
    }
}

// ----- greedy flows: utilization, rate changes, loss -----------------------------------------

#[test]
fn newreno_fills_a_one_bdp_buffer() {
    let toml = r#"
duration = "70s"
warmup = "10s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
buffer = "1bdp"
[[flows]]
cca = "newreno"
sack = false
"#;
    let r = run(toml, &[], None);
    let u = link(&r, "bottleneck").utilization;
    assert!(u > 0.95, "utilization {u}");
    assert!(r.summary.flows[0].retransmits > 0, "a 1-BDP buffer overflows periodically");
}

#[test]
fn goodput_follows_a_rate_change() {
    let toml = r#"
duration = "40s"
[bottleneck]
rate = "20Mbps"
rtt = "50ms"
buffer = "1bdp"
[[bottleneck.changes]]
at = "20s"
rate = "5Mbps"
[[flows]]
cca = "cubic"
"#;
    let r = run(toml, &[], None);
    let g = flow_goodput(&r, 0);
    let mean = |lo: f64, hi: f64| {
        let v: Vec<f64> = g.iter().filter(|(t, _)| *t > lo && *t <= hi).map(|&(_, x)| x).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    let before = mean(5.0, 20.0);
    let after = mean(25.0, 40.0);
    assert!(before > 10.0, "goodput before the change {before} Mbps");
    assert!(after < 5.0 && after > 3.5, "goodput after the change {after} Mbps");
    let l = link(&r, "bottleneck");
    assert_eq!(l.rate_mbps, 5.0, "summary reports the final rate");
}

#[test]
fn delayed_ack_halves_the_ack_count() {
    let toml = r#"
duration = "20s"
warmup = "5s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
buffer = "2bdp"
[[flows]]
cca = "cubic"
"#;
    let on = run(toml, &[], None);
    let off = run(toml, &["flows.delayed_ack=false"], None);
    let acks_on = link(&on, "bottleneck-rev").packets as f64;
    let acks_off = link(&off, "bottleneck-rev").packets as f64;
    let ratio = acks_on / acks_off;
    assert!(ratio > 0.4 && ratio < 0.7, "ACK ratio on/off = {ratio} ({acks_on} / {acks_off})");
    // Without delayed ACKs there is one ACK per data segment.
    let data = link(&off, "bottleneck").packets as f64;
    assert!((acks_off / data - 1.0).abs() < 0.02, "acks {acks_off} vs data {data}");
}

#[test]
fn newreno_under_random_loss_is_near_mathis() {
    let toml = r#"
duration = "60s"
warmup = "10s"
[bottleneck]
rate = "10Mbps"
rtt = "100ms"
buffer = "1bdp"
loss = 0.01
[[flows]]
cca = "newreno"
"#;
    let r = run(toml, &[], None);
    let g = r.summary.flows[0].goodput_mbps;
    // Mathis: MSS/RTT · 1.22/sqrt(p) ≈ 1.41 Mbps.
    assert!(g > 0.5 && g < 3.0, "goodput {g} Mbps");
    let lr = link(&r, "bottleneck").loss_rate;
    assert!((lr - 0.01).abs() < 0.004, "loss rate {lr}");
}

// ----- queues --------------------------------------------------------------------------------

#[test]
fn time_buffer_bounds_queue_delay() {
    let toml = r#"
duration = "30s"
warmup = "5s"
[bottleneck]
rate = "20Mbps"
rtt = "50ms"
buffer = "30ms"
[[flows]]
cca = "cubic"
"#;
    let r = run(toml, &[], None);
    let q = link(&r, "bottleneck").queue_delay_ms.expect("the bottleneck is measured");
    assert!(q.p99 <= 31.0 && q.p99 > 10.0, "p99 queue delay {} ms", q.p99);
    let max = r.sojourn.sojourn_ms.iter().cloned().fold(0.0, f64::max);
    assert!(max <= 31.0, "max sojourn {max} ms");
}

#[test]
fn packet_buffer_bounds_queue_length() {
    let toml = r#"
duration = "30s"
[bottleneck]
rate = "10Mbps"
rtt = "100ms"
buffer = "50p"
[[flows]]
cca = "cubic"
count = 2
"#;
    let r = run(toml, &[], None);
    let l = &r.links;
    let mut peak: f64 = 0.0;
    for i in 0..l.t_s.len() {
        if l.link[i] == 0 {
            assert!(
                l.queue_packets[i] <= 50.0 + 1e-9,
                "queue {} packets at t={}",
                l.queue_packets[i],
                l.t_s[i]
            );
            peak = peak.max(l.queue_packets[i]);
        }
    }
    assert!(peak > 25.0, "the queue never filled (peak {peak})");
    assert!(link(&r, "bottleneck").drops > 0);
    // Sojourn ≤ 50 full-sized packets ahead (incl. the one in service) at 10 Mbps.
    let bound = ser_ms(1500.0, 10e6) * 50.0 + 0.01;
    let max = r.sojourn.sojourn_ms.iter().cloned().fold(0.0, f64::max);
    assert!(max <= bound, "max sojourn {max} ms > {bound}");
}

// ----- ECN negotiation -----------------------------------------------------------------------

#[test]
fn ecn_negotiation_follows_the_flow_option() {
    let toml = r#"
duration = "2s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
[[flows]]
cca = "cubic"
"#;
    assert!(!run(toml, &[], None).summary.flows[0].ecn_negotiated);
    assert!(run(toml, &["flows.ecn=true"], None).summary.flows[0].ecn_negotiated);
    assert!(run(toml, &["flows.ecn=true", "flows.handshake=false"], None).summary.flows[0].ecn_negotiated);
    assert!(!run(toml, &["flows.handshake=false"], None).summary.flows[0].ecn_negotiated);
}

// ----- flow control and observers ------------------------------------------------------------

#[test]
fn receive_window_limits_throughput() {
    let toml = r#"
duration = "20s"
warmup = "5s"
[bottleneck]
rate = "20Mbps"
rtt = "100ms"
buffer = "1bdp"
[[flows]]
cca = "cubic"
rcv_buf = "64KiB"
"#;
    let r = run(toml, &[], None);
    let g = r.summary.flows[0].goodput_mbps;
    // At most one window per RTT (the RTT grows a little by serialisation).
    let limit = 65536.0 * 8.0 / 0.1 / 1e6;
    assert!(g <= limit * 1.01 && g > limit * 0.85, "goodput {g} Mbps vs window limit {limit}");
    assert_eq!(link(&r, "bottleneck").drops, 0);
}

/// The time-series bin width and sojourn recording are observers: they must not change what
/// the flows and links do.
#[test]
fn output_settings_do_not_change_the_simulation() {
    let toml = r#"
duration = "15s"
warmup = "3s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
buffer = "0.5bdp"
loss = 0.005
[[flows]]
cca = "cubic"
[[flows]]
cca = "newreno"
rtt = "80ms"
[[flows]]
type = "cbr"
"#;
    let base = run(toml, &[], None);
    // The spread of binned rates and the reach times are measured at the bins' resolution.
    let strip = |r: &ccbench_sim::SimResult| {
        let mut flows = serde_json::to_value(&r.summary.flows).unwrap();
        for f in flows.as_array_mut().unwrap() {
            let f = f.as_object_mut().unwrap();
            f.remove("throughput_std_mbps");
            f.remove("reallocations");
        }
        (flows.to_string(), serde_json::to_string(&r.summary.links).unwrap())
    };
    for ov in ["output.bin=1s", "output.bin=7ms", "output.sojourn_samples=false"] {
        let other = run(toml, &[ov], None);
        assert_eq!(strip(&base), strip(&other), "{ov} changed the results");
        assert_eq!(base.conservation, other.conservation, "{ov}");
    }
    assert!(run(toml, &["output.sojourn_samples=false"], None).sojourn.t_s.is_empty());
}

/// `fct_s` is "None if unfinished or infinite" (metrics.rs): a sized transfer cut short by
/// `stop` did not finish, and a greedy flow is infinite even when it stops.
#[test]
fn stopped_flows_report_no_completion_time() {
    let toml = r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
[[flows]]
name = "sized"
size = "10MB"
stop = "1s"
[[flows]]
name = "greedy"
stop = "1s"
"#;
    let r = run(toml, &[], None);
    let sized = &r.summary.flows[0];
    assert!(sized.bytes_delivered < 10_000_000);
    assert_eq!(
        sized.fct_s, None,
        "unfinished 10 MB transfer ({} B delivered) has an fct",
        sized.bytes_delivered
    );
    assert_eq!(r.summary.flows[1].fct_s, None, "greedy flow has an fct");
}

/// A sized flow stopped *after* it completed keeps its completion time.
#[test]
fn stop_after_completion_keeps_fct() {
    let toml = r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
[[flows]]
size = "100KB"
stop = "5s"
"#;
    let f = &run(toml, &[], None).summary.flows[0];
    assert_eq!(f.bytes_delivered, 100_000);
    assert!(f.fct_s.is_some_and(|t| t < 1.0));
}

// ----- convergence time (ABE paper, L270) ----------------------------------------------------

/// A CUBIC flow joining another converges to a fair share: Jain's index over the bytes since it
/// joined reaches 0.95 for good within the run. One flow alone has no convergence time.
#[test]
fn a_late_flow_converges_and_the_summary_says_when() {
    let text = r#"
duration = "120s"
[bottleneck]
rate = "20Mbps"
rtt = "50ms"
[[flows]]
name = "early"
[[flows]]
name = "late"
start = "20s"
"#;
    let r = run(text, &[], Some(1));
    let t = r.summary.convergence_s.expect("converges");
    assert!(t > 0.0 && t < 90.0, "convergence after {t} s");
    let one = run(&text.replace("[[flows]]\nname = \"late\"\nstart = \"20s\"\n", ""), &[], Some(1));
    assert_eq!(one.summary.convergence_s, None);
}
