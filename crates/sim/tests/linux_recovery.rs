//! Issue 7's reference case: one CUBIC flow, 10 Mbps, RTT 100 ms, a one-BDP drop-tail buffer,
//! 100 s. Slow start overshoots into the buffer; Linux 6.18 recovers with no timeout at
//! 9.62 Mbps (docs/linux-reference.md). RACK-TLP must too; RFC 6675 may time out, but a
//! repeated timeout must never collapse ssthresh to two segments (Linux `tcp_enter_loss`).

mod common;

use common::*;

const OVERSHOOT: &str = r#"
duration = "100s"
[bottleneck]
rate = "10Mbps"
rtt = "100ms"
buffer = "1bdp"
[[flows]]
cca = "cubic"
"#;

#[test]
fn rack_recovers_the_slow_start_overshoot_without_a_timeout() {
    for seed in 1..=3 {
        let r = run(OVERSHOOT, &[], Some(seed));
        let f = &r.summary.flows[0];
        assert_eq!(f.timeouts, 0, "seed {seed}");
        assert!(f.goodput_mbps >= 9.45, "seed {seed}: {} Mbps", f.goodput_mbps);
    }
}

#[test]
fn rfc6675_never_collapses_ssthresh_to_two_segments() {
    for seed in 1..=3 {
        let r = run(OVERSHOOT, &["flows[0].recovery=\"rfc6675\""], Some(seed));
        let least =
            r.flows.ssthresh_bytes.iter().copied().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
        assert!(least > 2.0 * 1448.0, "seed {seed}: ssthresh fell to {least} bytes");
        assert!(r.summary.flows[0].goodput_mbps >= 9.45, "seed {seed}");
    }
}
