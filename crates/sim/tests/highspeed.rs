//! The high-speed controllers of issue 12 end to end: each alone on 100 Mb/s, 100 ms with a
//! one-BDP buffer fills the link (> 90 % from 10 s to 30 s, after the first slow start), as a
//! loss-based controller whose decrease is at most 1/2 must when the buffer holds a BDP.
//!
//! Measured (seed default): utilization 1.000 for all four; drops in the window: HighSpeed 6
//! (one event near 20 s, cwnd ≈ 1190–1670 segments, b(1670) ≈ 0.30), Scalable 425, H-TCP 160,
//! Illinois 0 — after the slow-start loss its α falls with the standing queue (≈ 0.6 segments
//! per RTT at ~35 ms of queueing), so it creeps from 1108 to ~1350 segments in 60 s and only
//! meets the buffer limit later: the concave approach Illinois is designed for.

mod common;

use common::*;

const ALONE: &str = r#"
duration = "30s"
warmup = "10s"
[bottleneck]
rate = "100Mbps"
rtt = "100ms"
buffer = "1bdp"
[[flows]]
name = "hs"
"#;

#[test]
fn each_high_speed_controller_fills_a_one_bdp_link() {
    for cca in ["highspeed", "scalable", "htcp", "illinois"] {
        let r = run(ALONE, &[&format!("flows.cca=\"{cca}\"")], None);
        let l = link(&r, "bottleneck");
        eprintln!("{cca}: utilization {:.4}, drops {}", l.utilization, l.drops);
        assert!(l.utilization > 0.9, "{cca}: utilization {}", l.utilization);
    }
}

/// The aliases reach the same controllers.
#[test]
fn aliases_run() {
    for cca in ["hstcp", "stcp", "h-tcp"] {
        let r = run(ALONE, &[&format!("flows.cca=\"{cca}\""), "duration=\"2s\"", "warmup=\"0s\""], None);
        assert!(link(&r, "bottleneck").utilization > 0.3, "{cca}");
    }
}
