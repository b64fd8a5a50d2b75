//! One link model for the simulator and the emulator: a clock-driven link ([`link::Link`]) over
//! any queue discipline of `ccbench_aqm`, with loss, serialisation (fixed rate, a per-packet rate
//! spread, a token bucket or a delivery trace), rate and delay changes, jitter, and the random
//! streams ([`rng`]) that make a link draw the same losses wherever it runs. Pure: no I/O, no
//! simulator types; the caller passes the time in and hears back through [`link::Hooks`].
//!
//! * [`link`] — the link and its counters;
//! * [`delivery_trace`] — mahimahi's packet-delivery traces;
//! * [`quantiles`] — streaming percentiles with a stated error bound;
//! * [`rng`] — per-component seeded random streams;
//! * [`synthetic_trace`] — a cellular-like delivery trace generated from a seed.

#![forbid(unsafe_code)]

pub mod delivery_trace;
pub mod link;
pub mod quantiles;
pub mod rng;
pub mod synthetic_trace;

pub use delivery_trace::{DeliveryTrace, OPPORTUNITY_BYTES};
pub use link::{Hooks, Link, LinkCounters};
