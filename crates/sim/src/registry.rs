//! Every registry a scenario draws names from, in one place for `ccbench list`, the Python
//! front end and the generated lists in `docs/scenarios.md`. Each family is read straight from
//! its table; parameters are listed by building each entry once with defaults.

use std::fmt::Write;

use ccbench_aqm::{queue_params, queues};
use ccbench_cc::registry::param_specs;
use ccbench_cc::{ParamSpec, CONTROLLERS, RECEIVERS};
use ccbench_params::Entry;

use crate::net::InFlight;
use crate::scenario::tcp_options::option_specs;
use crate::topology::TOPOLOGIES;

/// One family: its name, the scenario key that picks a member, and the members.
pub struct Family {
    pub name: &'static str,
    pub key: &'static str,
    pub rows: Vec<Row>,
}

pub struct Row {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub params: Vec<ParamSpec>,
    /// Controllers only: how the row runs on QUIC (`ccbench_cc::OnQuic`).
    pub quic: Option<String>,
}

fn rows<B>(table: &[Entry<B>], params: impl Fn(&B) -> Vec<ParamSpec>) -> Vec<Row> {
    let row = |e: &Entry<B>| Row {
        name: e.name,
        aliases: e.aliases,
        summary: e.summary,
        params: params(&e.build),
        quic: None,
    };
    table.iter().map(row).collect()
}

pub fn families() -> Vec<Family> {
    vec![
        Family { name: "controllers", key: "flows.cca", rows: controller_rows() },
        Family { name: "receivers", key: "flows.receiver_cca", rows: rows(RECEIVERS, |b| param_specs(*b)) },
        Family { name: "queues", key: "aqm", rows: rows(&queues::<InFlight>(), |b| queue_params(b.build)) },
        Family { name: "topologies", key: "top-level key", rows: rows(TOPOLOGIES, |_| Vec::new()) },
        Family { name: "stack", key: "[[flows]] of type tcp", rows: vec![stack_row()] },
    ]
}

fn controller_rows() -> Vec<Row> {
    let mut rows = rows(CONTROLLERS, |k| param_specs(k.build));
    for (row, entry) in rows.iter_mut().zip(CONTROLLERS) {
        row.quic = Some(entry.build.quic.describe());
    }
    rows
}

/// The TCP stack's options: keys of a `[[flows]]` entry, read like any algorithm's parameters.
fn stack_row() -> Row {
    Row {
        name: "tcp",
        aliases: &[],
        summary: "the sending and receiving TCP stacks (Linux's defaults); see docs/scenarios.md",
        params: option_specs(),
        quic: None,
    }
}

/// The families as Markdown, the block `docs/scenarios.md` carries between its registry markers.
pub fn markdown() -> String {
    let mut out = String::new();
    for f in families() {
        let _ = writeln!(out, "### {} (`{}`)\n", f.name, f.key);
        if f.rows.is_empty() {
            out.push_str("None yet.\n\n");
            continue;
        }
        for r in &f.rows {
            let aliases = if r.aliases.is_empty() {
                String::new()
            } else {
                format!(" (also `{}`)", r.aliases.join("`, `"))
            };
            let _ = writeln!(out, "- **`{}`**{aliases}: {}", r.name, r.summary);
            if let Some(quic) = &r.quic {
                let _ = writeln!(out, "  - on QUIC: {quic}");
            }
            for p in &r.params {
                let _ = writeln!(out, "  - `{}`: {}; default {}", p.key, p.kind, p.default);
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_lists_its_table() {
        let f = families();
        let names: Vec<_> = f.iter().map(|f| f.name).collect();
        assert_eq!(names, ["controllers", "receivers", "queues", "topologies", "stack"]);
        assert!(f[0].rows.iter().any(|r| r.name == "cubic" && r.params.iter().any(|p| p.key == "beta")));
        assert!(f[2].rows.iter().any(|r| r.name == "droptail"));
        assert!(f[3].rows.iter().any(|r| r.name == "dumbbell"));
        assert!(f[4].rows[0].params.iter().any(|p| p.key == "rto_min"));
    }

    /// The docs carry the generated lists; `UPDATE_DOCS=1 cargo test` rewrites them.
    #[test]
    fn docs_list_what_the_registries_hold() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
        let (begin, end) = ("<!-- registry:begin -->\n", "<!-- registry:end -->");
        let text = std::fs::read_to_string(path).expect("docs/scenarios.md");
        let (Some(b), Some(e)) = (text.find(begin), text.find(end)) else {
            panic!("docs/scenarios.md lacks the registry markers");
        };
        let generated = markdown();
        if std::env::var("UPDATE_DOCS").is_ok() {
            let updated = format!("{}{begin}{generated}{}", &text[..b], &text[e..]);
            std::fs::write(path, updated).unwrap();
            return;
        }
        assert_eq!(
            &text[b + begin.len()..e],
            generated,
            "run `UPDATE_DOCS=1 cargo test -p ccbench-sim docs_list`"
        );
    }
}
