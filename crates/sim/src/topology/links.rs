//! The general form: optional `[[nodes]]` and a list of `[[links]]`, each bidirectional by
//! default (the reverse direction is `<name>-rev`, with its own queue).
//!
//! ```toml
//! [[links]]
//! name = "l1"
//! from = "a"
//! to = "b"
//! rate = "10Mbps"
//! delay = "10ms"
//! buffer = "100p"
//! ```

use toml::{Table, Value};

use super::builder::{parse_changes, parse_props, parse_reverse, TopologyBuilder, PROP_KEYS};
use super::Attach;
use crate::scenario::fields::{check_keys, fe, get_bool, get_str, get_table, join, required, R};
use crate::scenario::{Nanos, Topology};

const LINK_KEYS: &[&str] = &["name", "from", "to", "bidirectional", "reverse", "changes"];
const NODE_KEYS: &[&str] = &["name"];

pub fn build(t: &Table, duration: Nanos) -> R<(Topology, Attach)> {
    let declared = declared_nodes(t)?;
    let mut b = TopologyBuilder::default();
    for n in &declared {
        b.node(n);
    }
    let links = array_of_tables(t, "links")?;
    if links.is_empty() {
        return Err(fe("links", "at least one [[links]] entry is required"));
    }
    let mut touched = vec![false; declared.len()];
    for (i, lt) in links.iter().enumerate() {
        let p = format!("links[{i}]");
        check_link_keys(lt, &p)?;
        let name = non_empty(lt, &p, "name", "name = \"l1\"")?;
        let from = endpoint(lt, &p, "from", &declared, &mut touched)?;
        let to = endpoint(lt, &p, "to", &declared, &mut touched)?;
        if from == to {
            return Err(fe(join(&p, "to"), format!("a link needs two different nodes, got \"{to}\" twice")));
        }
        let props = parse_props(lt, &p)?;
        let ends = (b.node(&from), b.node(&to));
        let fwd = b.link(&name, &join(&p, "name"), ends, &props)?;
        let rev = if get_bool(lt, &p, "bidirectional")?.unwrap_or(true) {
            let rp = join(&p, "reverse");
            let rprops = parse_reverse(get_table(lt, &p, "reverse")?, &rp, &props)?;
            Some(b.reverse(fwd, &join(&p, "name"), &rprops)?)
        } else if lt.contains_key("reverse") {
            return Err(fe(join(&p, "reverse"), "given for a link with bidirectional = false"));
        } else {
            None
        };
        b.changes(fwd, rev, &parse_changes(lt, &p, duration)?);
    }
    if let Some(j) = touched.iter().position(|t| !t) {
        return Err(fe(
            format!("nodes[{j}]"),
            format!("node \"{}\" is not connected: no link touches it", declared[j]),
        ));
    }
    Ok((b.finish("links"), Attach::Named))
}

fn check_link_keys(t: &Table, p: &str) -> R<()> {
    match t.keys().find(|k| !LINK_KEYS.contains(&k.as_str()) && !PROP_KEYS.contains(&k.as_str())) {
        Some(k) => Err(fe(join(p, k), "unknown key")),
        None => Ok(()),
    }
}

/// `[[key]]` as a list of tables (absent = empty).
pub fn array_of_tables<'a>(t: &'a Table, key: &str) -> R<Vec<&'a Table>> {
    match t.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Table(sub) => Ok(sub),
                other => Err(fe(format!("{key}[{i}]"), format!("expected a table ([[{key}]]), got {other}"))),
            })
            .collect(),
        Some(v) => Err(fe(key, format!("expected an array of tables ([[{key}]]), got {v}"))),
    }
}

fn non_empty(t: &Table, p: &str, key: &str, example: &str) -> R<String> {
    let v = required(get_str(t, p, key)?, join(p, key), example)?;
    if v.trim().is_empty() {
        return Err(fe(join(p, key), "must not be empty"));
    }
    Ok(v.to_string())
}

/// `[[nodes]]` names, unique, in file order.
fn declared_nodes(t: &Table) -> R<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for (i, nt) in array_of_tables(t, "nodes")?.into_iter().enumerate() {
        let p = format!("nodes[{i}]");
        check_keys(nt, &p, NODE_KEYS)?;
        let name = non_empty(nt, &p, "name", "name = \"a\"")?;
        if let Some(j) = names.iter().position(|n| *n == name) {
            return Err(fe(
                join(&p, "name"),
                format!("duplicate node name \"{name}\" (also used by nodes[{j}])"),
            ));
        }
        names.push(name);
    }
    Ok(names)
}

/// A link's `from`/`to`: any name if no `[[nodes]]` are declared, else a declared one.
fn endpoint(t: &Table, p: &str, key: &str, declared: &[String], touched: &mut [bool]) -> R<String> {
    let name = non_empty(t, p, key, &format!("{key} = \"a\""))?;
    if declared.is_empty() {
        return Ok(name);
    }
    match declared.iter().position(|n| *n == name) {
        Some(j) => {
            touched[j] = true;
            Ok(name)
        }
        None => Err(fe(join(p, key), format!("unknown node \"{name}\" (known: {})", declared.join(", ")))),
    }
}
