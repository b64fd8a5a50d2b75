//! ccbench's deterministic packet-level simulator.
//!
//! * [`engine`] — integer-nanosecond event queue with stable tie-breaking, lazy timers;
//! * [`endpoint`] — what the event loop needs of a flow's ends (packets in, timers);
//! * [`net`] — links (queue + transmitter + propagation), routes, the network of a scenario;
//! * [`topology`] — the topology generators (dumbbell, general links) and routing (the
//!   `ccbench-scenario` crate's, re-exported);
//! * [`tcp`] — the TCP sender/receiver machinery around pure `ccbench_cc` controllers;
//! * [`traffic`] — non-TCP sources (constant bit rate);
//! * [`scenario`] — the TOML scenario format and its validated form (the `ccbench-scenario`
//!   crate, shared with the emulator and the output writer, re-exported);
//! * [`metrics`] — the recorder of per-packet measurements, and the result types and summaries
//!   of `ccbench_scenario::results`; [`world`] — the event loop tying it together;
//! * [`trace`] — pcap traces of chosen links (`[output] pcap`).
//!
//! Same scenario and seed ⇒ bit-identical results: all randomness comes from per-component
//! streams in [`rng`], and no hash-ordered containers are iterated.

#![forbid(unsafe_code)]

pub mod cost;
pub mod endpoint;
pub mod engine;
pub mod fairness;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod registry;
pub mod tcp;
pub mod trace;
pub mod traffic;
pub mod world;

/// The per-component random streams (shared with the emulator through the link model).
pub use ccbench_link::rng;

pub use ccbench_scenario as scenario;
pub use ccbench_scenario::topology;
pub use metrics::{Conservation, SimResult};
pub use scenario::{parse_str, parse_table, Scenario, ScenarioError};
pub use world::Simulation;

/// Parse and run a scenario given as TOML text.
pub fn run_str(
    text: &str,
    source: &str,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<SimResult, ScenarioError> {
    let sc = parse_str(text, source, overrides, seed)?;
    run(&sc, source)
}

/// Run a validated scenario. Errors if a controller rejects its parameters, or (a bug, never
/// bad input) if a receiver broke a window invariant: field `invariants`. Traces the scenario
/// asks for go to a fresh temporary folder; [`run_traced`] says where.
pub fn run(sc: &Scenario, source: &str) -> Result<SimResult, ScenarioError> {
    run_traced(sc, source, None).map(|(result, _)| result)
}

/// [`run`], writing the pcap traces of `output.pcap` into `pcap_dir` (created if needed; None:
/// a fresh folder under the system's temporary directory) and returning each as (link, path).
/// A trace that cannot be written is an error of field `output.pcap`.
pub fn run_traced(
    sc: &Scenario,
    source: &str,
    pcap_dir: Option<&std::path::Path>,
) -> Result<(SimResult, Vec<(String, std::path::PathBuf)>), ScenarioError> {
    run_controlled(sc, source, Control { pcap_dir, memory_limit: None, keep_going: &mut |_| true })
}

/// How a run is carried out, beyond its scenario.
pub struct Control<'c> {
    /// Where the pcap traces go (None: a fresh temporary folder).
    pub pcap_dir: Option<&'c std::path::Path>,
    /// Refuse, before building anything, a scenario whose [`cost::estimate`] holds more bytes
    /// than this (None: no limit).
    pub memory_limit: Option<u64>,
    /// Called every [`world::WATCH_EVERY`] events with the simulated time; false stops the run
    /// there and summarises what it simulated (`summary.partial`).
    pub keep_going: &'c mut dyn FnMut(scenario::Nanos) -> bool,
}

/// [`run_traced`] under a [`Control`].
pub fn run_controlled(
    sc: &Scenario,
    source: &str,
    control: Control<'_>,
) -> Result<(SimResult, Vec<(String, std::path::PathBuf)>), ScenarioError> {
    let error = |field: &str, message: String| ScenarioError {
        source: source.to_string(),
        field: field.into(),
        message,
    };
    if let Some(limit) = control.memory_limit {
        let cost = cost::estimate(sc);
        cost.check(limit).map_err(|m| error(&cost.field, m))?;
    }
    let mut sim = Simulation::new(sc).map_err(|e| error(&e.field, e.message))?;
    let captures = if sc.output.pcap.is_empty() {
        None
    } else {
        let dir = match control.pcap_dir {
            Some(d) => d.to_path_buf(),
            None => trace::temp_dir().map_err(|e| error("output.pcap", e.to_string()))?,
        };
        Some(sim.capture(&dir).map_err(|e| error("output.pcap", e.to_string()))?)
    };
    let result = sim
        .run_watched(0, control.keep_going)
        .map_err(|e| error("invariants", format!("internal error, please report it: {e}")))?;
    let files = match captures {
        Some(c) => c.close().map_err(|e| error("output.pcap", e.to_string()))?,
        None => Vec::new(),
    };
    Ok((result, files))
}
