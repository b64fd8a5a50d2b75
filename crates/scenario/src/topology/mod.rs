//! Topologies: the generators a scenario may use, and routing over what they build.
//!
//! A generator reads its top-level table (`[bottleneck]`, `[[links]]`, …) into the general
//! [`Topology`] (named nodes, directional links) and says how flows attach to it ([`Attach`]).
//! The event loop knows only the general form. Adding a generator is one file and one row.

pub mod builder;
pub mod dumbbell;
pub mod links;
pub mod routes;

use ccbench_params::Entry;
use toml::Table;

use crate::fields::R;
use crate::{Nanos, Topology};

/// How the flows of a scenario find their way through the topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attach {
    /// Flows name their `from` and `to` nodes (and optionally a `path`); a flow's `rtt` adds
    /// access delay to the delays of its path.
    Named,
    /// Every flow crosses `link` and its ACKs return over `reverse`; a flow's `rtt` is its whole
    /// base RTT, by default `default_rtt`.
    Dumbbell { link: usize, reverse: usize, default_rtt: Nanos },
}

pub type BuildTopology = fn(&Table, Nanos) -> R<(Topology, Attach)>;

/// One generator: the top-level scenario key it reads and how it builds.
pub struct Generator {
    /// Top-level key of the scenario file (`bottleneck` is a table, `links` an array of tables).
    pub key: &'static str,
    /// The generator reads the whole file (`[[nodes]]` and `[[links]]`), not just its table.
    pub whole_file: bool,
    pub build: BuildTopology,
}

/// The topology generators. A scenario uses exactly one of their keys.
pub static TOPOLOGIES: &[Entry<Generator>] = &[
    Entry {
        name: "dumbbell",
        aliases: &[],
        summary:
            "[bottleneck]: one shared link r1 → r2; every flow crosses it, its rtt is the whole base RTT",
        build: Generator { key: "bottleneck", whole_file: false, build: dumbbell::build },
    },
    Entry {
        name: "links",
        aliases: &[],
        summary:
            "[[nodes]] and [[links]]: any graph of named nodes; flows name from/to, shortest or explicit path",
        build: Generator { key: "links", whole_file: true, build: links::build },
    },
];
