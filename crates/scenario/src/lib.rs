//! Scenarios and results, shared by every back end (the simulator, the emulator) and the writer
//! of run directories: scenario files (TOML → validated, unit-free [`Scenario`]; see
//! `docs/scenarios.md`), the topologies they describe ([`topology`]), the link model a link spec
//! builds ([`link_model`]), and what a run produces and how its summary is computed
//! ([`results`]).

// The run description (`describe.rs`) is one `json!` literal per flow, deeper than the default.
#![recursion_limit = "256"]
#![forbid(unsafe_code)]

pub mod config;
pub mod describe;
pub mod fields;
pub mod flow_keys;
pub mod flows;
pub mod link_model;
pub(crate) mod overrides;
pub mod parse;
pub mod results;
pub mod tcp_options;
pub mod topology;
pub mod traffic;
pub use ccbench_link::rng;
pub use ccbench_params::units;

pub use ccbench_cc::Params;
pub use config::*;
pub use describe::describe;
pub use parse::{parse_str, parse_str_for, parse_table, ScenarioError};
