//! Scenario files: TOML → validated, unit-free [`Scenario`]. See `docs/scenarios.md`.

pub mod config;
pub mod describe;
pub mod fields;
pub mod flows;
pub(crate) mod overrides;
pub mod parse;
pub mod tcp_options;
pub mod traffic;
pub use ccbench_params::units;

pub use ccbench_cc::Params;
pub use config::*;
pub use describe::describe;
pub use parse::{parse_str, parse_str_for, parse_table, ScenarioError};
