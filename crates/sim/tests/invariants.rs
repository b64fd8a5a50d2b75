//! Whole-simulation invariants: determinism, packet conservation, and the TCP sender's scoreboard
//! invariants (checked after every event) under stress scenarios.

mod common;

use ccbench_sim::{parse_str, SimResult};
use common::*;

// ----- determinism ---------------------------------------------------------------------------

/// Every column of every series, compared bit for bit.
fn assert_identical(a: &SimResult, b: &SimResult) {
    assert_eq!(summary_json(a), summary_json(b), "summaries differ");
    assert_eq!(a.conservation, b.conservation);
    assert_eq!(a.flow_names, b.flow_names);
    assert_eq!(a.link_names, b.link_names);

    let (x, y) = (&a.flows, &b.flows);
    assert!(same_f64(&x.t_s, &y.t_s), "flows.t_s");
    assert_eq!(x.flow, y.flow, "flows.flow");
    assert!(same_f64(&x.goodput_mbps, &y.goodput_mbps), "flows.goodput_mbps");
    assert!(same_f64(&x.throughput_mbps, &y.throughput_mbps), "flows.throughput_mbps");
    assert!(same_f64(&x.cwnd_bytes, &y.cwnd_bytes), "flows.cwnd_bytes");
    assert!(same_f64(&x.ssthresh_bytes, &y.ssthresh_bytes), "flows.ssthresh_bytes");
    assert!(same_f64(&x.srtt_ms, &y.srtt_ms), "flows.srtt_ms");
    assert!(same_f64(&x.inflight_bytes, &y.inflight_bytes), "flows.inflight_bytes");
    assert_eq!(x.retransmits, y.retransmits, "flows.retransmits");

    let (x, y) = (&a.links, &b.links);
    assert!(same_f64(&x.t_s, &y.t_s), "links.t_s");
    assert_eq!(x.link, y.link, "links.link");
    assert!(same_f64(&x.queue_bytes, &y.queue_bytes), "links.queue_bytes");
    assert!(same_f64(&x.queue_packets, &y.queue_packets), "links.queue_packets");
    assert!(same_f64(&x.utilization, &y.utilization), "links.utilization");
    assert!(same_f64(&x.throughput_mbps, &y.throughput_mbps), "links.throughput_mbps");
    assert_eq!(x.drops, y.drops, "links.drops");
    assert_eq!(x.ecn_marks, y.ecn_marks, "links.ecn_marks");
    assert_eq!(x.departed_bytes, y.departed_bytes, "links.departed_bytes");
    assert!(same_f64(&x.aqm_probability, &y.aqm_probability), "links.aqm_probability");

    let (x, y) = (&a.sojourn, &b.sojourn);
    assert!(same_f64(&x.t_s, &y.t_s), "sojourn.t_s");
    assert_eq!(x.link, y.link, "sojourn.link");
    assert_eq!(x.flow, y.flow, "sojourn.flow");
    assert!(same_f64(&x.sojourn_ms, &y.sojourn_ms), "sojourn.sojourn_ms");

    let (x, y) = (&a.owd, &b.owd);
    assert!(same_f64(&x.t_s, &y.t_s), "owd.t_s");
    assert_eq!(x.flow, y.flow, "owd.flow");
    assert!(same_f64(&x.owd_ms, &y.owd_ms), "owd.owd_ms");
}

const NOISY: &str = r#"
duration = "15s"
warmup = "2s"
seed = 3
[bottleneck]
rate = "10Mbps"
rtt = "60ms"
delay = "5ms"
buffer = "0.5bdp"
jitter = "3ms"
loss = 0.01
[[flows]]
cca = "cubic"
[[flows]]
cca = "newreno"
rtt = "90ms"
start = "1s"
sack = false
[[flows]]
name = "voip"
type = "cbr"
[output]
sojourn_samples = true
owd_samples = true
"#;

#[test]
fn same_seed_gives_identical_results() {
    let a = run(NOISY, &[], None);
    let b = run(NOISY, &[], None);
    assert!(
        a.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().random_losses > 0,
        "the scenario must exercise random loss"
    );
    assert!(!a.owd.owd_ms.is_empty() && !a.sojourn.t_s.is_empty());
    assert_identical(&a, &b);
}

#[test]
fn same_seed_gives_identical_results_checked_run() {
    // run_checked must not perturb the simulation.
    let a = run(NOISY, &[], Some(11));
    let b = run_checked(NOISY, &[], Some(11), 1);
    assert_identical(&a, &b);
}

/// NOISY long enough to make several watches' worth of events.
const FAST: &str = "duration=\"100s\"";

#[test]
fn a_watcher_that_lets_the_run_go_on_changes_nothing() {
    // The loop looks up every WATCH_EVERY events; whatever the watcher does then, the run is
    // the same (a progress line or a signal check must never perturb results).
    let sc = ccbench_sim::parse_str(NOISY, "t", &[FAST.into()], None).unwrap();
    let mut looks = 0u64;
    let watched = ccbench_sim::Simulation::new(&sc)
        .unwrap()
        .run_watched(0, &mut |_| {
            looks += 1;
            true
        })
        .unwrap();
    assert!(looks > 0, "the scenario must be long enough to be watched: {} events", watched.summary.events);
    assert!(!watched.summary.partial);
    assert_identical(&run(NOISY, &[FAST], None), &watched);
}

#[test]
fn a_stopped_run_is_summarised_up_to_where_it_got() {
    let sc = ccbench_sim::parse_str(NOISY, "t", &[FAST.into()], None).unwrap();
    let mut stopped_at = 0;
    let partial = ccbench_sim::Simulation::new(&sc)
        .unwrap()
        .run_watched(0, &mut |now| {
            stopped_at = now;
            false
        })
        .unwrap();
    let s = &partial.summary;
    assert!(s.partial);
    assert_eq!(s.sim_s, stopped_at as f64 / 1e9);
    assert!(s.sim_s < s.scenario.duration_s, "{} of {}", s.sim_s, s.scenario.duration_s);
    assert!(summary_json(&partial).contains("\"partial\":true"));
    assert!(!summary_json(&run(NOISY, &[], None)).contains("partial"));
    // The series stop where the run did, and what it counted is conserved.
    assert!(partial.flows.t_s.iter().all(|&t| t <= s.sim_s));
    let c = &partial.conservation;
    assert!(c.holds(), "{c:?}");
    for f in &s.flows {
        assert!(f.goodput_mbps.is_finite() && f.goodput_mbps >= 0.0, "{}: {}", f.name, f.goodput_mbps);
    }
}

#[test]
fn seed_argument_equals_file_seed() {
    let file_seed = run(NOISY, &[], None); // seed = 3 in the file
    let arg_seed = run(&NOISY.replace("seed = 3", "seed = 99"), &[], Some(3));
    assert_eq!(arg_seed.summary.scenario.seed, 3);
    assert_identical(&file_seed, &arg_seed);
}

#[test]
fn different_seeds_give_different_results() {
    let a = run(NOISY, &[], Some(1));
    let b = run(NOISY, &[], Some(2));
    assert_ne!(a.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().random_losses, 0);
    assert!(!same_f64(&a.flows.goodput_mbps, &b.flows.goodput_mbps), "goodput series identical across seeds");
    assert!(!same_f64(&a.owd.owd_ms, &b.owd.owd_ms), "jittered OWDs identical across seeds");
    assert_ne!(
        (
            a.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().random_losses,
            a.summary.flows[0].retransmits
        ),
        (
            b.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().random_losses,
            b.summary.flows[0].retransmits
        )
    );
}

/// The bottleneck draws its loss/jitter from its own stream: until a second flow's first packet
/// reaches the bottleneck, flow A sees exactly the same losses and delays as when alone, and two
/// runs with the same seed agree exactly.
#[test]
fn loss_pattern_depends_only_on_seed_and_arrival_sequence() {
    let alone = r#"
duration = "10s"
seed = 5
[output]
owd_samples = true
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
jitter = "2ms"
loss = 0.1
[[flows]]
name = "a"
type = "cbr"
interval = "10ms"
"#;
    let with_b = format!("{alone}\n[[flows]]\nname = \"b\"\ntype = \"cbr\"\nstart = \"5s\"\n");
    let a1 = run(alone, &[], None);
    let a2 = run(alone, &[], None);
    assert_eq!(a1.summary.flows[0].packets_lost, a2.summary.flows[0].packets_lost);
    assert!(same_f64(&a1.owd.owd_ms, &a2.owd.owd_ms));
    let lost = a1.summary.flows[0].packets_lost.unwrap();
    assert!(lost > 50 && lost < 150, "~10% of 1000 datagrams lost, got {lost}");

    let ab = run(&with_b, &[], None);
    let before = |r: &SimResult| -> Vec<(u64, u64)> {
        (0..r.owd.t_s.len())
            .filter(|&i| r.owd.flow[i] == 0 && r.owd.t_s[i] < 5.0)
            .map(|i| (r.owd.t_s[i].to_bits(), r.owd.owd_ms[i].to_bits()))
            .collect()
    };
    assert_eq!(before(&a1), before(&ab), "flow a's first 5 s changed when a later flow was added");
    // A different seed changes which datagrams are lost.
    let other = run(alone, &[], Some(6));
    assert_ne!(before(&a1), before(&other));
}

// ----- conservation and scoreboard invariants under stress ------------------------------------

/// Run with invariants checked after every event and check conservation and per-sample sanity.
fn stress(toml: &str, overrides: &[&str]) -> SimResult {
    let r = run_checked(toml, overrides, None, 1);
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse_str(toml, "test.toml", &ov, None).expect("the run above parsed it");
    assert!(r.conservation.holds(), "conservation violated: {:?}", r.conservation);
    assert!(r.conservation.injected > 0);
    let f = &r.flows;
    for i in 0..f.t_s.len() {
        let flow = &r.summary.flows[f.flow[i] as usize];
        if flow.kind != "tcp" {
            continue;
        }
        let mss = f64::from(scenario.flows[f.flow[i] as usize].tcp.mss);
        assert!(
            f.cwnd_bytes[i] >= mss,
            "flow {} cwnd {} < mss {mss} at t={}",
            flow.name,
            f.cwnd_bytes[i],
            f.t_s[i]
        );
        assert!(
            f.inflight_bytes[i] >= 0.0 && f.inflight_bytes[i] < 1e12,
            "flow {} inflight {} at t={}",
            flow.name,
            f.inflight_bytes[i],
            f.t_s[i]
        );
        assert!(f.goodput_mbps[i].is_finite() && f.goodput_mbps[i] >= 0.0);
        assert!(f.retransmits[i] < 1_000_000, "retransmits underflow? {}", f.retransmits[i]);
    }
    for l in &r.summary.links {
        assert!(
            l.utilization >= 0.0 && l.utilization <= 1.0 + 1e-9,
            "{}: utilization {}",
            l.name,
            l.utilization
        );
        assert!(l.loss_rate >= 0.0 && l.loss_rate <= 1.0);
    }
    for fl in &r.summary.flows {
        assert!(
            fl.goodput_mbps.is_finite() && fl.goodput_mbps >= 0.0,
            "{}: goodput {}",
            fl.name,
            fl.goodput_mbps
        );
        // Payload cannot exceed wire bytes over the whole run (with a warm-up, data received
        // out of order before it may be delivered in order after it, so only check without).
        if r.summary.scenario.warmup_s == 0.0 {
            assert!(
                fl.goodput_mbps <= fl.throughput_mbps + 1e-9,
                "{}: goodput {} > throughput {}",
                fl.name,
                fl.goodput_mbps,
                fl.throughput_mbps
            );
        }
    }
    r
}

/// The tests below only set `mss` through this marker comment; default 1448.
const BASE: &str = r#"
duration = "15s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
buffer = "1bdp"
[[flows]]
cca = "cubic"
"#;

#[test]
fn stress_random_loss_1pct() {
    let r = stress(BASE, &["bottleneck.loss=0.01"]);
    assert!(r.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().random_losses > 0);
    assert!(r.summary.flows[0].retransmits > 0);
}

#[test]
fn stress_random_loss_5pct_newreno() {
    let r = stress(BASE, &["bottleneck.loss=0.05", "flows.cca=newreno"]);
    assert!(r.summary.flows[0].retransmits > 0);
}

#[test]
fn stress_buffer_5_packets_two_flows() {
    let r = stress(BASE, &["bottleneck.buffer=5p", "flows[0].count=2"]);
    assert!(r.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().drops > 0);
}

#[test]
fn stress_buffer_2_packets_newreno() {
    let r = stress(BASE, &["bottleneck.buffer=2p", "flows.cca=newreno"]);
    assert!(r.summary.links.iter().find(|l| l.name == "bottleneck").unwrap().drops > 0);
}

#[test]
fn stress_sack_off_with_loss() {
    let r = stress(BASE, &["flows.sack=false", "flows.cca=newreno", "bottleneck.loss=0.02"]);
    assert!(r.summary.flows[0].retransmits > 0);
    stress(BASE, &["flows.sack=false", "bottleneck.buffer=5p"]);
}

#[test]
fn stress_delayed_ack_off() {
    stress(BASE, &["flows.delayed_ack=false", "bottleneck.buffer=0.3bdp"]);
}

#[test]
fn stress_eight_flows_different_rtts() {
    let mut toml = String::from(
        "duration = \"15s\"\n[bottleneck]\nrate = \"20Mbps\"\nrtt = \"60ms\"\ndelay = \"5ms\"\nbuffer = \"0.5bdp\"\n",
    );
    for i in 0..8 {
        let cca = if i % 2 == 0 { "cubic" } else { "newreno" };
        let sack = i % 3 != 0;
        toml += &format!(
            "[[flows]]\ncca = \"{cca}\"\nrtt = \"{}ms\"\nstart = \"{}ms\"\nsack = {sack}\n",
            20 + 20 * i,
            250 * i
        );
    }
    let r = stress(&toml, &[]);
    assert_eq!(r.summary.flows.len(), 8);
    for f in &r.summary.flows {
        assert!(f.bytes_delivered > 0, "{} delivered nothing", f.name);
    }
}

#[test]
fn stress_finite_flow_beside_greedy() {
    let toml =
        format!("{BASE}[[flows]]\nname = \"short\"\ncca = \"newreno\"\nsize = \"500KB\"\nstart = \"3s\"\n");
    let r = stress(&toml, &["bottleneck.buffer=10p"]);
    let short = &r.summary.flows[1];
    assert_eq!(short.bytes_delivered, 500_000);
    assert!(short.fct_s.is_some());
}

#[test]
fn stress_cbr_beside_tcp() {
    let toml = format!("{BASE}[[flows]]\nname = \"voip\"\ntype = \"cbr\"\ninterval = \"5ms\"\n");
    let r = stress(&toml, &["bottleneck.buffer=20p"]);
    assert!(r.summary.flows[1].owd_ms.is_some());
}

#[test]
fn stress_rate_changes_mid_run() {
    let toml = format!(
        "{BASE}[[bottleneck.changes]]\nat = \"5s\"\nrate = \"2Mbps\"\n[[bottleneck.changes]]\nat = \"10s\"\nrate = \"20Mbps\"\ndelay = \"10ms\"\n"
    );
    stress(&toml, &[]);
}

#[test]
fn stress_jitter() {
    let r = stress(BASE, &["bottleneck.jitter=10ms", "flows[0].count=2"]);
    assert!(r.summary.flows.iter().all(|f| f.bytes_delivered > 0));
}

#[test]
fn stress_ca_counting_acks() {
    stress(BASE, &["flows.ca_counting=acks", "bottleneck.loss=0.01"]);
    stress(BASE, &["flows.ca_counting=acks", "flows.cca=newreno", "bottleneck.buffer=5p"]);
}

#[test]
fn stress_handshake_off() {
    let r = stress(BASE, &["flows.handshake=false", "bottleneck.loss=0.02"]);
    assert!(r.summary.flows[0].bytes_delivered > 0);
}

#[test]
fn stress_small_mss_and_ecn() {
    let toml = BASE.replace("cca = \"cubic\"", "cca = \"cubic\"\nmss = 536\necn = true");
    stress(&toml, &["bottleneck.ecn=true", "bottleneck.buffer=8p"]);
}

#[test]
fn stress_heavy_loss_20pct() {
    let r = stress(BASE, &["bottleneck.loss=0.2", "duration=20s"]);
    assert!(r.summary.flows[0].timeouts > 0, "20% loss must cause RTOs");
    let r = stress(BASE, &["bottleneck.loss=0.2", "duration=20s", "flows.sack=false", "flows.cca=newreno"]);
    assert!(r.summary.flows[0].timeouts > 0);
}

// ----- example files -------------------------------------------------------------------------

#[test]
fn every_example_runs_and_conserves_packets() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // Cut to 5 s, unless a flow starts later (then the example's own length).
        // The file's path as the source: relative trace files are read beside it.
        let source = path.display().to_string();
        let sc =
            ccbench_sim::parse_str(&text, &source, &[], None).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let late = sc.flows.iter().any(|f| f.start >= 5_000_000_000);
        let ov = if late { vec![] } else { vec!["duration=5s".to_string(), "warmup=0s".to_string()] };
        let r = ccbench_sim::run_str(&text, &source, &ov, None).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert!(r.conservation.holds(), "{name}: {:?}", r.conservation);
        assert_eq!(r.summary.sim_s, if late { sc.duration as f64 / 1e9 } else { 5.0 }, "{name}");
        assert!(r.summary.flows.iter().all(|f| f.bytes_delivered > 0), "{name}: a flow delivered nothing");
        n += 1;
    }
    assert!(n >= 5, "found only {n} example files in {}", dir.display());
}

/// A sweep of randomly combined stress settings, each run with invariants checked every event.
#[test]
fn stress_sweep_of_combined_settings() {
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    // CCBENCH_SWEEP_CASES=<n> widens the sweep for local bug hunts.
    let cases: u64 = std::env::var("CCBENCH_SWEEP_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    for case in 0..cases {
        let loss = [0.0, 0.0, 0.005, 0.02, 0.08][next(5) as usize];
        let buffer = ["2p", "5p", "20p", "0.25bdp", "1bdp", "30ms"][next(6) as usize];
        let jitter = ["0ms", "0ms", "1ms", "8ms"][next(4) as usize];
        let mut toml = format!(
            "duration = \"20s\"\nwarmup = \"2s\"\nseed = {case}\n[bottleneck]\nrate = \"{}Mbps\"\nrtt = \"{}ms\"\nbuffer = \"{buffer}\"\nloss = {loss}\njitter = \"{jitter}\"\n",
            [2, 5, 10, 20][next(4) as usize],
            [10, 40, 100, 200][next(4) as usize],
        );
        if next(3) == 0 {
            toml += "[[bottleneck.changes]]\nat = \"8s\"\nrate = \"3Mbps\"\n[[bottleneck.changes]]\nat = \"14s\"\nrate = \"12Mbps\"\n";
        }
        let flows = 1 + next(4);
        for i in 0..flows {
            toml += &format!(
                "[[flows]]\ncca = \"{}\"\nsack = {}\ndelayed_ack = {}\nhandshake = {}\nca_counting = \"{}\"\nstart = \"{}ms\"\nrtt = \"{}ms\"\n",
                ["cubic", "newreno"][next(2) as usize],
                next(3) != 0,
                next(2) == 0,
                next(4) != 0,
                ["segments", "acks"][next(2) as usize],
                next(3000),
                [20, 60, 150][next(3) as usize],
            );
            if next(4) == 0 {
                toml += &format!("size = \"{}B\"\n", 1 + next(3_000_000));
            }
            if next(5) == 0 {
                toml += &format!("stop = \"{}s\"\n", 4 + next(10) + i);
            }
        }
        if next(2) == 0 {
            toml += "[[flows]]\ntype = \"cbr\"\ninterval = \"10ms\"\n";
        }
        let r = std::panic::catch_unwind(|| stress(&toml, &[]));
        assert!(r.is_ok(), "case {case} failed:\n{toml}");
    }
}

/// The summary's window goodput and link throughput agree with the time series.
#[test]
fn summary_agrees_with_series() {
    let toml = r#"
duration = "20s"
warmup = "5s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
buffer = "1bdp"
loss = 0.002
[[flows]]
cca = "cubic"
[[flows]]
cca = "newreno"
start = "2s"
[[flows]]
type = "cbr"
"#;
    let r = run(toml, &[], None);
    let bin = 0.1;
    for (i, f) in r.summary.flows.iter().enumerate() {
        let sum: f64 =
            flow_goodput(&r, i as u32).iter().filter(|(t, _)| *t > 5.0 + 1e-9).map(|(_, g)| g * bin).sum();
        let series = sum / 15.0;
        assert!(
            (series - f.goodput_mbps).abs() < 1e-6 * f.goodput_mbps.max(1.0),
            "{}: series {series} vs summary {}",
            f.name,
            f.goodput_mbps
        );
    }
    let l = &r.links;
    let util: f64 = (0..l.t_s.len())
        .filter(|&i| l.link[i] == 0 && l.t_s[i] > 5.0 + 1e-9)
        .map(|i| l.utilization[i])
        .sum::<f64>()
        / 150.0;
    let s = link(&r, "bottleneck");
    assert!((util - s.utilization).abs() < 1e-6, "util series {util} vs summary {}", s.utilization);
    let thr: f64 = (0..l.t_s.len())
        .filter(|&i| l.link[i] == 0 && l.t_s[i] > 5.0 + 1e-9)
        .map(|i| l.throughput_mbps[i])
        .sum::<f64>()
        / 150.0;
    assert!((thr - s.throughput_mbps).abs() < 1e-6, "thr series {thr} vs summary {}", s.throughput_mbps);
    let drops: u64 =
        (0..l.t_s.len()).filter(|&i| l.link[i] == 0 && l.t_s[i] > 5.0 + 1e-9).map(|i| l.drops[i]).sum();
    assert_eq!(drops, s.drops);
}

/// The L4S queues under every new controller at once, with a short buffer and random loss so
/// that overflow, marks, AccECN's counters and every recovery path meet: conservation and the
/// scoreboard invariants after every event.
#[test]
fn stress_l4s_queues_with_accecn_controllers() {
    const L4S: &str = r#"
duration = "8s"
[bottleneck]
rate = "10Mbps"
rtt = "30ms"
buffer = "20p"
ecn = true
loss = 0.005
[[flows]]
cca = "prague"
count = 2
[[flows]]
cca = "dctcp"
ect1 = true
[[flows]]
cca = "bbr3"
ecn = true
[[flows]]
cca = "cubic"
count = 2
ecn = true
"#;
    for aqm in ["fq_codel", "pi2", "dualpi2"] {
        let r = stress(L4S, &[&format!("bottleneck.aqm={aqm}")]);
        let link = r.summary.links.iter().find(|l| l.name == "bottleneck").unwrap();
        assert!(
            link.ecn_marks > 0 && link.random_losses > 0,
            "{aqm}: {} marks, {} losses",
            link.ecn_marks,
            link.random_losses
        );
        assert!(r.summary.flows.iter().all(|f| f.ecn_negotiated), "{aqm}");
    }
}
