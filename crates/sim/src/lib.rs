//! ccbench's deterministic packet-level simulator.
//!
//! * [`engine`] — integer-nanosecond event queue with stable tie-breaking, lazy timers;
//! * [`net`] — links (queue + transmitter + propagation), routes, the network of a scenario;
//! * [`topology`] — the topology generators (dumbbell, general links) and routing;
//! * [`tcp`] — the TCP sender/receiver machinery around pure `ccbench_cc` controllers;
//! * [`traffic`] — non-TCP sources (constant bit rate);
//! * [`scenario`] — the TOML scenario format and its validated form;
//! * [`metrics`] — time series and summaries; [`world`] — the event loop tying it together.
//!
//! Same scenario and seed ⇒ bit-identical results: all randomness comes from per-component
//! streams in [`rng`], and no hash-ordered containers are iterated.

pub mod engine;
pub mod fairness;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod registry;
pub mod rng;
pub mod scenario;
pub mod tcp;
pub mod topology;
pub mod traffic;
pub mod world;

pub use scenario::{parse_str, parse_table, Scenario, ScenarioError};
pub use world::{Conservation, SimResult, Simulation};

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
/// bad input) if a receiver broke a window invariant: field `invariants`.
pub fn run(sc: &Scenario, source: &str) -> Result<SimResult, ScenarioError> {
    let error = |field: String, message: String| ScenarioError { source: source.to_string(), field, message };
    let sim = Simulation::new(sc).map_err(|e| error(e.field, e.message))?;
    sim.run_checked(0)
        .map_err(|e| error("invariants".into(), format!("internal error, please report it: {e}")))
}
