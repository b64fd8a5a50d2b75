//! ECN end to end through the AQMs: the queue marks instead of dropping, the receiver echoes,
//! the sender reduces once per episode and tells the controller the cause.

mod common;

use common::*;

fn codel_newreno(rtt: &str) -> String {
    format!(
        r#"
duration = "60s"
warmup = "10s"
[bottleneck]
rate = "10Mbps"
rtt = "{rtt}"
buffer = "1000p"
aqm = "codel"
ecn = true
[[flows]]
cca = "newreno"
ecn = true
"#
    )
}

/// Issue 8: one NewReno flow with ECN over CoDel at 10 Mbps keeps the median queueing delay
/// near CoDel's 5 ms target (±3 ms, the ABE notes' delay tolerance), with no drop, and every
/// reduction comes from an ECN-Echo. At short RTTs a standing queue forms between marks; at
/// long RTTs one flow drains the queue after each halving (the link idles, ABE eq. 6), so the
/// median falls below the target while the no-drop, ECN-only part still holds.
#[test]
fn newreno_over_codel_with_ecn_keeps_the_target_delay_without_drops() {
    for (rtt, near_target) in [("10ms", true), ("20ms", true), ("100ms", false)] {
        let r = run(&codel_newreno(rtt), &[], None);
        let link = link(&r, "bottleneck");
        let flow = &r.summary.flows[0];
        assert_eq!(link.drops, 0, "{rtt}: CoDel marked ECT packets instead of dropping");
        assert!(link.ecn_marks > 0 && flow.ecn_reductions > 0, "{rtt}: marks {}", link.ecn_marks);
        assert_eq!((flow.loss_reductions, flow.timeouts), (0, 0), "{rtt}: every reduction is ECN-caused");
        let median = link.queue_delay_ms.unwrap().p50;
        if near_target {
            assert!((median - 5.0).abs() <= 3.0, "{rtt}: median queueing delay {median} ms");
        } else {
            assert!(median < 5.0, "{rtt}: median {median} ms");
        }
    }
}

/// Without ECN at the queue (or at the flow) CoDel drops what it would have marked.
#[test]
fn codel_drops_when_either_end_lacks_ecn() {
    for off in ["bottleneck.ecn=false", "flows[0].ecn=false"] {
        let r = run(&codel_newreno("20ms"), &[off], None);
        let link = link(&r, "bottleneck");
        let flow = &r.summary.flows[0];
        assert_eq!(link.ecn_marks, 0, "{off}");
        assert!(link.aqm_drops > 0 && link.overflow_drops == 0, "{off}: {} AQM drops", link.aqm_drops);
        assert_eq!(flow.ecn_reductions, 0, "{off}");
        assert!(flow.loss_reductions > 0, "{off}");
    }
}

/// A 1000-packet buffer never overflows with one flow; the signals come at a backlog near
/// what CoDel's target allows (5 ms is about 4 packets at 10 Mbps, plus what arrives during
/// the interval), far below the buffer.
#[test]
fn backlog_at_the_signals_is_bounded_by_the_aqm_not_the_buffer() {
    let r = run(&codel_newreno("20ms"), &[], None);
    let at_signal = link(&r, "bottleneck").queue_at_signal_packets.expect("signals in the window");
    assert!(at_signal.p50 >= 3.0 && at_signal.p50 <= 30.0, "median backlog at a mark {}", at_signal.p50);
}

/// PIE with ECN marks at enqueue; its probability is sampled into the links series. (With the
/// default rule, RFC 8033 §5.1, slow start pushes the probability above 10% and PIE drops ECT
/// packets there; `ecn_drop_above = 1` marks at any probability.)
#[test]
fn pie_probability_is_in_the_series_and_marks_are_ecn_reductions() {
    let pie = ["bottleneck.aqm=\"pie\"", "bottleneck.aqm_params={ecn_drop_above = 1.0}", "warmup=\"0s\""];
    let r = run(&codel_newreno("50ms"), &pie, None);
    let link = link(&r, "bottleneck");
    assert_eq!(link.drops, 0);
    assert!(r.summary.flows[0].ecn_reductions > 0 && r.summary.flows[0].loss_reductions == 0);
    let bottleneck = r.link_names.iter().position(|n| n == "bottleneck").unwrap() as u32;
    let p: Vec<f64> = r
        .links
        .link
        .iter()
        .zip(&r.links.aqm_probability)
        .filter(|(l, _)| **l == bottleneck)
        .map(|(_, p)| *p)
        .collect();
    assert!(p.iter().all(|p| (0.0..=1.0).contains(p)));
    assert!(p.iter().any(|&p| p > 0.0), "PIE raised its probability at some point");
    let departed = r.links.departed_bytes.iter().zip(&r.links.link).filter(|(_, l)| **l == bottleneck);
    let last = departed.map(|(d, _)| *d).next_back().unwrap();
    assert!(last >= link.bytes_departed, "cumulative count covers the window's");
}
