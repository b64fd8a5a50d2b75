//! Helpers shared by the integration tests (each test file includes this module).
#![allow(dead_code)]

use ccbench_sim::{parse_str, SimResult, Simulation};

/// Parse and run `toml` with `overrides` and `seed`, panicking with the scenario error.
pub fn run(toml: &str, overrides: &[&str], seed: Option<u64>) -> SimResult {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    ccbench_sim::run_str(toml, "test.toml", &ov, seed).unwrap_or_else(|e| panic!("{e:?}"))
}

/// Parse and run with scoreboard invariants checked every `every` events.
pub fn run_checked(toml: &str, overrides: &[&str], seed: Option<u64>, every: u64) -> SimResult {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let sc = parse_str(toml, "test.toml", &ov, seed).unwrap_or_else(|e| panic!("{e:?}"));
    let sim = Simulation::new(&sc).unwrap_or_else(|e| panic!("{}: {}", e.field, e.message));
    sim.run_checked(every).unwrap_or_else(|e| panic!("invariant violated: {e}"))
}

/// Summary as JSON with the wall-clock field zeroed.
pub fn summary_json(r: &SimResult) -> String {
    let mut s = r.summary.clone();
    s.wall_s = 0.0;
    serde_json::to_string(&s).unwrap()
}

/// Bit-exact equality of two f64 columns (NaN == NaN when the bits match).
pub fn same_f64(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Index of the link called `name` in the summary's links.
pub fn link<'a>(r: &'a SimResult, name: &str) -> &'a ccbench_sim::metrics::LinkSummary {
    r.summary.links.iter().find(|l| l.name == name).unwrap_or_else(|| panic!("no link {name}"))
}

/// Rows of the flows series for `flow`: (t_s, goodput_mbps).
pub fn flow_goodput(r: &SimResult, flow: u32) -> Vec<(f64, f64)> {
    let f = &r.flows;
    (0..f.t_s.len()).filter(|&i| f.flow[i] == flow).map(|i| (f.t_s[i], f.goodput_mbps[i])).collect()
}
