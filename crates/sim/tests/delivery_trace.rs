//! Trace-driven links (`trace = "file"`, mahimahi's format): the scenario keys, their errors,
//! and a bulk flow that follows the trace's capacity.

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use std::fmt::Write;

/// A trace file of this test's own, removed when dropped.
struct TraceFile(PathBuf);

impl TraceFile {
    fn new(name: &str, text: &str) -> Self {
        // Tests run in parallel threads: each file gets a name of its own.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("ccbench-{}-{n}-{name}.trace", std::process::id()));
        std::fs::write(&path, text).unwrap();
        TraceFile(path)
    }
    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TraceFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One opportunity per ms for 5 s (12.03 Mbit/s), then four per ms for 5 s (48.13 Mbit/s);
/// the period is 10 s.
fn step_trace() -> TraceFile {
    let mut text = String::new();
    for ms in 1..=10_000 {
        let opportunities = if ms <= 5_000 { 1 } else { 4 };
        (0..opportunities).for_each(|_| writeln!(text, "{ms}").unwrap());
    }
    TraceFile::new("step", &text)
}

fn scenario(trace: &str, extra: &str) -> String {
    format!(
        "duration = \"10s\"\n[bottleneck]\ntrace = \"{trace}\"\nrtt = \"20ms\"\nbuffer = \"100p\"\n{extra}\n\
         [[flows]]\ncca = \"cubic\"\n[output]\nbin = \"1s\"\n"
    )
}

/// The bottleneck delivers what the trace offers: the flow's goodput per second steps from
/// about 12 to about 48 Mbit/s with the trace, and the link's rate is the trace's mean.
#[test]
fn a_bulk_flow_follows_the_trace() {
    let trace = step_trace();
    let r = run(&scenario(&trace.path(), ""), &[], None);
    let mean = (5_000.0 + 20_000.0) * 1504.0 * 8.0 / 10.0;
    assert!((link(&r, "bottleneck").rate_mbps - mean / 1e6).abs() < 1e-9);
    let rows = flow_goodput(&r, 0);
    // Payload of 1,448 B in each 1,500 B packet, a packet per 1,504 B opportunity.
    let payload = 1448.0 / 1504.0;
    for (t, mbps) in rows {
        let capacity = if t <= 5.0 { 12.032 } else { 48.128 } * payload;
        if (2.0..=5.0).contains(&t) || t >= 7.0 {
            assert!((mbps / capacity - 1.0).abs() < 0.05, "{mbps} Mbit/s at {t} s against {capacity}");
        }
    }
    assert_eq!(
        r.conservation.injected,
        r.conservation.delivered + r.conservation.dropped + r.conservation.in_network
    );
}

/// Same scenario and trace ⇒ the same run; and a relative path names a file beside the scenario.
#[test]
fn trace_runs_are_deterministic_and_paths_are_relative_to_the_scenario() {
    let trace = step_trace();
    let a = run(&scenario(&trace.path(), ""), &[], None);
    let b = run(&scenario(&trace.path(), ""), &[], None);
    assert_eq!(summary_json(&a), summary_json(&b));
    let file = trace.0.file_name().unwrap().to_str().unwrap().to_string();
    let toml = std::env::temp_dir().join(format!("ccbench-{}-relative.toml", std::process::id()));
    std::fs::write(&toml, scenario(&file, "")).unwrap();
    let text = std::fs::read_to_string(&toml).unwrap();
    let sc = ccbench_sim::parse_str(&text, toml.to_str().unwrap(), &[], None);
    std::fs::remove_file(&toml).unwrap();
    let sc = sc.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.topology.links[0].trace.as_ref().unwrap().path, trace.path());
}

fn error(toml: &str) -> String {
    ccbench_sim::parse_str(toml, "t.toml", &[], None).expect_err("an error").to_string()
}

#[test]
fn bad_traces_and_conflicting_keys_are_one_line_errors() {
    let trace = step_trace();
    let p = trace.path();
    assert_eq!(
        error(&scenario(&p, "rate = \"10Mbps\"")),
        "t.toml: bottleneck.rate: a trace-driven link is paced by its trace (its rate is the trace's mean)"
    );
    assert!(error(&scenario(&p, "rate_max = \"10Mbps\"")).starts_with("t.toml: bottleneck.rate_max: "));
    assert!(error(&scenario(&p, "burst = \"15KB\"")).starts_with("t.toml: bottleneck.burst: "));
    let change = scenario(&p, "[[bottleneck.changes]]\nat = \"1s\"\nrate = \"5Mbps\"");
    assert_eq!(
        error(&change),
        "t.toml: bottleneck.changes[0].rate: a trace-driven link's rate follows its trace"
    );
    let missing = error(&scenario("/nonexistent/x.trace", ""));
    assert!(missing.starts_with("t.toml: bottleneck.trace: cannot read /nonexistent/x.trace: "), "{missing}");
    let bad = TraceFile::new("bad", "1\n2\nthree\n");
    let e = error(&scenario(&bad.path(), ""));
    assert_eq!(
        e,
        format!(
            "t.toml: bottleneck.trace: {}: line 3: \"three\" is not a whole number of milliseconds",
            bad.path()
        )
    );
    assert!(!e.contains('\n'));
}
