//! LEDBAT++ end to end (issue 9): alone on 20 Mbps with a 500 ms buffer it uses about 90% of
//! the capacity for base RTTs up to 200 ms (the periodic slowdowns cost about 10%, rLEDBAT
//! paper L123, L346) and keeps the queueing delay near its 60 ms target; without slowdowns it
//! uses more; beside CUBIC it yields; a latecomer gets an even share; the enhanced target
//! (paper §7) keeps the queue within one base RTT.

mod common;

use common::*;

/// 20 Mbps, 500 ms of buffer (the paper's Fig. 7 setting), one LEDBAT++ flow.
fn solo(rtt_ms: u32, cc: &str, duration_s: u32) -> String {
    format!(
        "duration = \"{duration_s}s\"\nwarmup = \"10s\"\n[bottleneck]\nrate = \"20Mbps\"\nrtt = \"{rtt_ms}ms\"\n\
         buffer = \"500ms\"\n[[flows]]\nname = \"lbe\"\ncca = \"ledbat++\"\ncc = {{ {cc} }}\n"
    )
}

/// Link utilisation and median queueing delay (ms) after the warm-up.
fn utilization_and_delay(toml: &str) -> (f64, f64) {
    let r = run(toml, &[], None);
    let l = link(&r, "bottleneck");
    assert_eq!(l.drops, 0, "a 500 ms buffer never fills below a 60 ms target");
    (l.utilization, l.queue_delay_ms.unwrap().p50)
}

/// Paper L123 / Fig. 7: about 90% for base RTTs below 200–300 ms. Tolerance [0.80, 0.97]:
/// the slowdowns must cost something, and not more than twice the paper's 10%. The median
/// queueing delay within [45, 70] ms of the 60 ms target holds up to 100 ms of base RTT; at
/// 200 ms GAIN is 1 but one packet per 260 ms RTT refills the ~100-packet queue in ~25 s,
/// longer than the 9× slowdown period (~20 s), so the queue stays below the target most of
/// the time (the paper's "struggles to restore the rate", L123, L358): there the median is
/// only required to stay under the target.
#[test]
fn alone_it_uses_about_ninety_percent_and_holds_the_target() {
    for rtt in [20, 50, 100, 200] {
        let (util, median) = utilization_and_delay(&solo(rtt, "", 130));
        assert!((0.80..=0.97).contains(&util), "RTT {rtt} ms: utilization {util}");
        if rtt <= 100 {
            assert!((45.0..=70.0).contains(&median), "RTT {rtt} ms: median queueing delay {median} ms");
        } else {
            assert!(median <= 70.0, "RTT {rtt} ms: median queueing delay {median} ms");
        }
    }
}

/// The slowdowns are what costs the ~10%: switched off, the link is (nearly) full.
#[test]
fn without_slowdowns_utilization_is_higher() {
    for rtt in [20, 100] {
        let (with, _) = utilization_and_delay(&solo(rtt, "", 130));
        let (without, median) = utilization_and_delay(&solo(rtt, "slowdown = false", 130));
        assert!(without > with + 0.02 && without >= 0.97, "RTT {rtt} ms: {without} vs {with}");
        assert!(median <= 70.0, "RTT {rtt} ms: median queueing delay {median} ms");
    }
}

/// Paper §7.1 (L500): with `enhanced_target` the target is min(60 ms, base RTT), so at a 20 ms
/// base RTT the queue is held at 20 ms instead of 60 ms. The queue oscillates around the
/// target as the plain one does around 60 ms, so the median is required within 10% of the
/// base RTT (at most 22 ms), not strictly below it.
#[test]
fn the_enhanced_target_keeps_the_queue_within_one_base_rtt() {
    let (util, median) = utilization_and_delay(&solo(20, "enhanced_target = true", 70));
    let (_, plain) = utilization_and_delay(&solo(20, "", 70));
    assert!((15.0..=22.0).contains(&median), "median queueing delay {median} ms, base RTT 20 ms");
    assert!(plain > 45.0, "plain LEDBAT++ median {plain} ms");
    assert!(util >= 0.80, "a 20 ms queue still fills the link: {util}");
}

/// Issue 9 / paper §2.2: LEDBAT++ yields to CUBIC (below 20% of the capacity while CUBIC
/// runs). When CUBIC leaves, the window is back at two packets in congestion avoidance and
/// grows by GAIN packets per RTT (a slowdown's ramp only returns to the window before it):
/// at 20 ms (GAIN 1/6, ~8 packets/s, BDP ~33 packets) the link is back within seconds; at
/// 100 ms (GAIN 1/2, ~5 packets/s, BDP ~170 packets) it takes over 30 s, so there only growth
/// is required.
#[test]
fn ledbatpp_yields_to_cubic() {
    for rtt in [20, 100] {
        let toml = format!(
            "{}[[flows]]\nname = \"be\"\ncca = \"cubic\"\nstart = \"15s\"\nstop = \"55s\"\n",
            solo(rtt, "", 80)
        );
        let r = run(&toml, &["output.bin=\"1s\""], None);
        let mean = |flow: u32, from: f64, to: f64| {
            let g: Vec<f64> = flow_goodput(&r, flow)
                .into_iter()
                .filter(|(t, _)| *t > from && *t <= to)
                .map(|(_, g)| g)
                .collect();
            g.iter().sum::<f64>() / g.len() as f64
        };
        let (lbe, be) = (mean(0, 25.0, 55.0), mean(1, 25.0, 55.0));
        assert!(lbe < 0.2 * 20.0, "RTT {rtt} ms: LEDBAT++ kept {lbe} Mbps beside CUBIC");
        assert!(be > 0.8 * 20.0 * 1448.0 / 1500.0, "RTT {rtt} ms: CUBIC got {be} Mbps");
        let after = mean(0, 65.0, 80.0);
        let back = if rtt == 20 { 0.75 * 20.0 } else { 5.0 * lbe.max(0.1) };
        assert!(after > back, "RTT {rtt} ms: LEDBAT++ after CUBIC left: {after} Mbps");
    }
}

/// Bad parameters are one-line scenario errors naming the field.
#[test]
fn bad_parameters_name_the_field() {
    for (cc, field) in [("target = \"-5ms\"", "flows[0].cc.target"), ("slowdown = 1", "flows[0].cc.slowdown")]
    {
        let e = ccbench_sim::run_str(&solo(20, cc, 20), "t.toml", &[], None).err().unwrap();
        assert_eq!(e.field, field, "{e:?}");
        assert!(!e.message.contains('\n'));
    }
}

/// Paper L125: LEDBAT++ flows with the same base RTT split the capacity evenly whatever their
/// start times; the slowdowns are what lets a latecomer measure the true base RTT (L115). Two
/// flows 20 s apart, Jain's index over the last two minutes at least 0.95 (measured 0.99 at
/// 20 ms, 0.998 at 100 ms); with `slowdown = false` the latecomer, whose base RTT includes
/// the first flow's queue, takes nearly everything (measured 0.51 and 0.53; required < 0.7).
#[test]
fn a_latecomer_gets_an_even_share_thanks_to_the_slowdowns() {
    let jain = |rtt: u32, cc: &str| {
        let toml = format!(
            "{}[[flows]]\ncca = \"ledbat++\"\nstart = \"20s\"\ncc = {{ {cc} }}\n",
            solo(rtt, cc, 180)
        );
        run(&toml, &["warmup=\"60s\""], None).summary.jain_index
    };
    for rtt in [20, 100] {
        let (with, without) = (jain(rtt, ""), jain(rtt, "slowdown = false"));
        assert!(with >= 0.95, "RTT {rtt} ms: Jain {with}");
        assert!(without < 0.7, "RTT {rtt} ms without slowdowns: Jain {without}");
    }
}
