//! Scenario files: TOML → validated, unit-free [`Scenario`]. See `docs/scenarios.md`.

pub mod config;
pub mod parse;
pub mod units;

pub use config::*;
pub use parse::{parse_str, parse_table, ScenarioError};
