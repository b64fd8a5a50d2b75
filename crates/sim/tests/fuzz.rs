//! Fuzzed scenarios: random text, mutated example files (topologies included) and random
//! `--set` overrides go through the parser; no input may panic, hang or allocate without bound,
//! and every rejection is one line naming a field. Scenarios that parse are built and run for a
//! short while, so a value the parser lets through cannot crash the simulator either.
//!
//! Cases that once broke something are kept in `REGRESSIONS` and always run.

use std::path::Path;

use ccbench_sim::{parse_str, Simulation};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Values that have broken parsers before: empty, negative, NaN/inf, huge, wrong types.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "1.5",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "9223372036854775807",
    "-9223372036854775808",
    "true",
    "\"\"",
    "\"x\"",
    "[]",
    "{}",
    "[1, 2]",
    "{ a = 1 }",
    "\"0s\"",
    "\"1e400s\"",
    "\"NaNms\"",
    "\"infMbps\"",
    "\"-3Mbps\"",
    "\"1e-300Mbps\"",
    "\"1e30Gbps\"",
    "\"99999999999999999999p\"",
    "\"0.0000001bdp\"",
    "\"1e300bdp\"",
    "\"5p\"",
    "\"1KB\"",
    "\"100ms\"",
    "\"1000000s\"",
    "\"1ns\"",
    "\"10Mbps\"",
    "\"a\"",
    "\"b\"",
    "\"l1\"",
    "[\"l1\", \"l2\"]",
    "[\"l2\"]",
    "\"cubic\"",
    "\"newreno\"",
    "\"droptail\"",
    "\"dualpi2\"",
    "\"fq_codel\"",
    "\"prague\"",
    "\"cbr\"",
    "1000000",
    "65535",
    "0.999999",
    "\"1Tbps\"",
    "\"100000000000000000000000KB\"",
];

/// Keys a mutation may set (top level, topology, flows, nested tables).
const KEYS: &[&str] = &[
    "duration",
    "warmup",
    "seed",
    "name",
    "output.bin",
    "output.sojourn_samples",
    "bottleneck.rate",
    "bottleneck.reverse_rate",
    "bottleneck.rtt",
    "bottleneck.delay",
    "bottleneck.buffer",
    "bottleneck.aqm",
    "bottleneck.ecn",
    "bottleneck.jitter",
    "bottleneck.loss",
    "bottleneck.changes",
    "bottleneck.aqm_params.target",
    "bottleneck.aqm_params.step_thresh",
    "links[0].rate",
    "links[0].delay",
    "links[0].buffer",
    "links[0].from",
    "links[0].to",
    "links[0].name",
    "links[0].bidirectional",
    "links[0].reverse",
    "links[0].changes",
    "links[1].rate",
    "links[1].name",
    "links[1].loss",
    "links[0].reverse.rate",
    "nodes",
    "flows.cca",
    "flows.count",
    "flows[0].count",
    "flows[0].rtt",
    "flows[0].start",
    "flows[0].stop",
    "flows[0].size",
    "flows[0].mss",
    "flows[0].initial_window",
    "flows[0].rcv_buf",
    "flows[0].wscale",
    "flows[0].type",
    "flows[0].interval",
    "flows[0].packet_size",
    "flows[0].from",
    "flows[0].to",
    "flows[0].path",
    "flows[0].ack_path",
    "flows[0].cc.beta",
    "flows[0].accecn",
    "flows[0].ect1",
    "flows[0].cc",
    "flows[0].receiver_cca",
    "flows[0].rto_min",
    "flows[0].rto_max",
    "flows[0].rto_initial",
    "flows[0].ts_granularity",
    "flows[0].delayed_ack_timeout",
    "flows[0].header_bytes",
    "flows[1].name",
    "flows",
];

/// Valid but extreme values per key, so that many scenarios parse and reach the simulator.
const EXTREMES: &[(&str, &[&str])] = &[
    ("bottleneck.rate", &["1kbps", "64kbps", "1Gbps", "10Gbps"]),
    ("bottleneck.reverse_rate", &["1kbps", "100kbps"]),
    ("bottleneck.buffer", &["1p", "2p", "1B", "0.01bdp", "100bdp", "1ms", "100000p"]),
    ("bottleneck.delay", &["0ms", "1ns", "50ms"]),
    ("bottleneck.rtt", &["1ns", "1ms", "10s"]),
    ("bottleneck.loss", &["0.5", "0.999", "1e-9"]),
    ("bottleneck.jitter", &["1ns", "100ms", "10s"]),
    (
        "bottleneck.changes",
        &["[{at=\"0s\", rate=\"1kbps\"}]", "[{at=\"1ms\", delay=\"0ms\"}, {at=\"1ms\", rate=\"1Gbps\"}]"],
    ),
    ("flows.mss", &["64", "65000"]),
    ("flows.initial_window", &["1", "1000000"]),
    ("flows.rcv_buf", &["1B", "1KB", "1GB", "1TB"]),
    ("flows.wscale", &["0", "14"]),
    ("flows.size", &["1B", "1", "1GB"]),
    ("flows.sack", &["false"]),
    ("flows.timestamps", &["false"]),
    ("flows.delayed_ack", &["false"]),
    ("flows.handshake", &["false"]),
    ("flows.ecn", &["true"]),
    ("flows.ts_granularity", &["1ns", "10s"]),
    ("flows.delayed_ack_timeout", &["1ns", "10s"]),
    ("flows.quickack_segments", &["0", "1000000"]),
    ("flows.rto_min", &["1ns", "1ms"]),
    ("flows.rto_initial", &["1ms", "60s"]),
    ("flows.rto_max", &["120s", "1000s"]),
    ("flows.ca_counting", &["acks"]),
    ("flows.start", &["0s", "100ms"]),
    ("flows.count", &["1", "7"]),
    ("flows.rtt", &["1ns", "1ms", "5s"]),
    ("flows.cc", &["{beta = 0.01}", "{beta = 0.99, ssthresh_from = \"flight\"}", "{abc_limit = 1}"]),
    ("flows.header_bytes", &["0", "65535"]),
];

/// Known-bad inputs found on the way, kept so they never come back: (scenario, overrides).
const REGRESSIONS: &[(&str, &[&str])] = &[
    // A lone carriage return: the TOML error came back with an empty message.
    ("\r", &[]),
    ("duration = \"1s\"\r\n[bottleneck]\rrate = \"1Mbps\"", &[]),
];

fn seeds() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    texts.sort();
    assert!(texts.len() >= 5, "examples missing");
    texts
}

/// Parse; on success build and run briefly. Panics (the test failure) only on a real defect.
/// Returns whether the scenario was valid.
fn check(text: &str, sets: &[String]) -> bool {
    match parse_str(text, "fuzz.toml", sets, None) {
        Err(e) => {
            assert!(!e.field.is_empty() && !e.message.is_empty(), "{e:?}");
            assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
            false
        }
        Ok(sc) => {
            assert!(sc.flows.len() <= ccbench_sim::scenario::flows::MAX_FLOWS);
            let Ok(sim) = Simulation::new(&sc) else { return true };
            // Keep the run short and small: what matters is that it neither panics nor hangs.
            let fast = sc.topology.links.iter().all(|l| l.rate <= 1e10);
            if sc.flows.len() <= 20 && fast {
                let mut short = sc.clone();
                short.duration = short.duration.min(300_000_000);
                short.warmup = short.warmup.min(short.duration - 1);
                short.output.sojourn_samples = false;
                drop(sim);
                let r = Simulation::new(&short).unwrap().run();
                assert!(r.conservation.holds(), "{:?}", r.conservation);
            }
            true
        }
    }
}

fn mutate(text: &str, ops: &[(u8, usize, usize)]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for &(op, a, b) in ops {
        if lines.is_empty() {
            break;
        }
        let i = a % lines.len();
        match op % 5 {
            0 => {
                lines.remove(i);
            }
            1 => lines.insert(i, lines[b % lines.len()].clone()),
            2 => {
                if let Some((k, _)) = lines[i].split_once('=') {
                    lines[i] = format!("{k}= {}", VALUES[b % VALUES.len()]);
                }
            }
            3 => {
                let key = KEYS[b % KEYS.len()].rsplit('.').next().unwrap().to_string();
                lines.insert(i, format!("{key} = {}", VALUES[a % VALUES.len()]));
            }
            _ => {
                let cut = b % (lines[i].len() + 1);
                let cut = lines[i].floor_char_boundary(cut);
                lines[i].truncate(cut);
            }
        }
    }
    lines.join("\n")
}

/// A deterministic runner, so `make test` is repeatable; `FUZZ_EXPLORE=N` runs N times the
/// cases from a random seed to look for new failures (then keep them in `REGRESSIONS`).
fn runner(cases: u32) -> TestRunner {
    let explore: Option<u32> = std::env::var("FUZZ_EXPLORE").ok().and_then(|v| v.parse().ok());
    let config =
        Config { cases: cases * explore.unwrap_or(1), failure_persistence: None, ..Config::default() };
    match explore {
        Some(_) => TestRunner::new(config),
        None => TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha)),
    }
}

#[test]
fn regressions_stay_fixed() {
    for (text, sets) in REGRESSIONS {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        check(text, &sets);
    }
}

#[test]
fn random_text_never_panics() {
    runner(2000)
        .run(&prop::collection::vec(any::<u8>(), 0..400), |bytes| {
            check(&String::from_utf8_lossy(&bytes), &[]);
            Ok(())
        })
        .unwrap();
}

#[test]
fn mutated_examples_never_panic() {
    let texts = seeds();
    let ops = prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 1..6);
    runner(1500)
        .run(&(0..texts.len(), ops), |(which, ops)| {
            check(&mutate(&texts[which], &ops), &[]);
            Ok(())
        })
        .unwrap();
}

#[test]
fn extreme_but_valid_values_never_break_the_simulator() {
    let texts = seeds();
    let set = (0..EXTREMES.len(), any::<usize>()).prop_map(|(k, v)| {
        let (key, values) = EXTREMES[k];
        format!("{key}={}", values[v % values.len()])
    });
    let valid = std::cell::Cell::new(0);
    runner(600)
        .run(&(0..texts.len(), prop::collection::vec(set, 1..7)), |(which, sets)| {
            valid.set(valid.get() + check(&texts[which], &sets) as u32);
            Ok(())
        })
        .unwrap();
    // Most must reach the simulator, or this test would only exercise the parser's errors.
    assert!(valid.get() > 300, "only {} of 600 scenarios were valid", valid.get());
}

#[test]
fn random_overrides_never_panic() {
    let texts = seeds();
    let set = (0..KEYS.len(), 0..VALUES.len()).prop_map(|(k, v)| format!("{}={}", KEYS[k], VALUES[v]));
    let raw = "[a-z\\[\\]0-9.=\"{} ]{0,24}";
    let sets = prop::collection::vec(prop_oneof![4 => set, 1 => raw.prop_map(String::from)], 1..5);
    runner(1500)
        .run(&(0..texts.len(), sets), |(which, sets)| {
            check(&texts[which], &sets);
            Ok(())
        })
        .unwrap();
}
