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

use std::collections::HashMap;

use super::builder::{parse_changes, parse_props, parse_reverse, TopologyBuilder, PROP_KEYS};
use super::Attach;
use crate::fields::{check_keys, fe, get_bool, get_int, get_str, get_table, join, required, shown, R};
use crate::{Nanos, Topology};

const LINK_KEYS: &[&str] = &["name", "from", "to", "bidirectional", "reverse", "changes"];
/// Most `[[nodes]]` and most `[[links]]` a scenario may declare: a bound on the work of building
/// and routing it (a datacenter fabric of thousands of hosts is well inside).
pub const MAX_NODES: usize = 100_000;
pub const MAX_LINKS: usize = 200_000;
const NODE_KEYS: &[&str] = &["name", "upload_slots"];

pub fn build(t: &Table, duration: Nanos) -> R<(Topology, Attach)> {
    let (declared, slots) = declared_nodes(t)?;
    let mut b = TopologyBuilder::default();
    for n in &declared {
        b.node(n);
    }
    let links = array_of_tables(t, "links")?;
    if links.is_empty() {
        return Err(fe("links", "at least one [[links]] entry is required"));
    }
    if links.len() > MAX_LINKS {
        return Err(fe(
            "links",
            format!("{} links, more than the {MAX_LINKS} a scenario may have", links.len()),
        ));
    }
    let index: HashMap<&str, usize> =
        declared.iter().enumerate().rev().map(|(i, n)| (n.as_str(), i)).collect();
    let mut touched = vec![false; declared.len()];
    for (i, lt) in links.iter().enumerate() {
        let p = format!("links[{i}]");
        check_link_keys(lt, &p)?;
        let name = non_empty(lt, &p, "name", "name = \"l1\"")?;
        let from = endpoint(lt, &p, "from", (&declared, &index), &mut touched)?;
        let to = endpoint(lt, &p, "to", (&declared, &index), &mut touched)?;
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
        b.changes(fwd, rev, &parse_changes(lt, &p, duration, props.trace.is_some())?);
    }
    if let Some(j) = touched.iter().position(|t| !t) {
        return Err(fe(
            format!("nodes[{j}]"),
            format!("node \"{}\" is not connected: no link touches it", declared[j]),
        ));
    }
    let mut topo = b.finish("links");
    for (j, s) in slots.into_iter().enumerate() {
        topo.upload_slots[j] = s;
    }
    Ok((topo, Attach::Named))
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
        Some(v) => Err(fe(key, format!("expected an array of tables ([[{key}]]), got {}", shown(v)))),
    }
}

fn non_empty(t: &Table, p: &str, key: &str, example: &str) -> R<String> {
    let v = required(get_str(t, p, key)?, join(p, key), example)?;
    if v.trim().is_empty() {
        return Err(fe(join(p, key), "must not be empty"));
    }
    Ok(v.to_string())
}

/// `[[nodes]]` names, unique, in file order, with their upload slots.
fn declared_nodes(t: &Table) -> R<(Vec<String>, Vec<Option<u32>>)> {
    let mut names: Vec<String> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut slots = Vec::new();
    let tables = array_of_tables(t, "nodes")?;
    if tables.len() > MAX_NODES {
        return Err(fe(
            "nodes",
            format!("{} nodes, more than the {MAX_NODES} a scenario may have", tables.len()),
        ));
    }
    for (i, nt) in tables.into_iter().enumerate() {
        let p = format!("nodes[{i}]");
        check_keys(nt, &p, NODE_KEYS)?;
        let name = non_empty(nt, &p, "name", "name = \"a\"")?;
        if let Some(j) = seen.get(&name) {
            return Err(fe(
                join(&p, "name"),
                format!("duplicate node name \"{name}\" (also used by nodes[{j}])"),
            ));
        }
        seen.insert(name.clone(), i);
        names.push(name);
        slots.push(get_int(nt, &p, "upload_slots", 1, 1_000_000)?.map(|n| n as u32));
    }
    Ok((names, slots))
}

/// A link's `from`/`to`: any name if no `[[nodes]]` are declared, else a declared one.
fn endpoint(
    t: &Table,
    p: &str,
    key: &str,
    (declared, index): (&[String], &HashMap<&str, usize>),
    touched: &mut [bool],
) -> R<String> {
    let name = non_empty(t, p, key, &format!("{key} = \"a\""))?;
    if declared.is_empty() {
        return Ok(name);
    }
    match index.get(name.as_str()) {
        Some(&j) => {
            touched[j] = true;
            Ok(name)
        }
        None => {
            let shown: Vec<&str> = declared.iter().take(10).map(String::as_str).collect();
            let more =
                if declared.len() > 10 { format!(", … {} in all", declared.len()) } else { String::new() };
            Err(fe(join(p, key), format!("unknown node \"{name}\" (known: {}{more})", shown.join(", "))))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_str, ScenarioError};

    const TWO: &str = r#"
duration = "10s"
[[links]]
name = "l1"
from = "a"
to = "b"
rate = "10Mbps"
[[links]]
name = "l2"
from = "b"
to = "c"
rate = "10Mbps"
[[flows]]
from = "a"
to = "c"
"#;

    fn err(text: &str, sets: &[&str]) -> ScenarioError {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match parse_str(text, "t.toml", &sets, None) {
            Ok(_) => panic!("parsed, expected an error: {sets:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn every_topology_mistake_names_its_field() {
        for (sets, field, words) in [
            (&["flows[0].from=x"][..], "flows[0].from", "unknown node \"x\" (known: a, b, c)"),
            (&["flows[0].to=a"], "flows[0].to", "must differ"),
            (&["links[1].name=l1"], "links[1].name", "duplicate link name \"l1\""),
            (&["links[1].name=l1-rev"], "links[1].name", "duplicate link name \"l1-rev\""),
            (&["links[0].rate=0Mbps"], "links[0].rate", "> 0"),
            (&["links[0].rate=10"], "links[0].rate", "expected a rate"),
            (&["links[0].to=a"], "links[0].to", "two different nodes"),
            (&["links[0].name=\"\""], "links[0].name", "must not be empty"),
            (&["links[0].colour=red"], "links[0].colour", "unknown key"),
            (
                &["links[0].aqm=blue"],
                "links[0].aqm",
                "unknown AQM \"blue\" (known: droptail, codel, red, pie, fq_codel, pi2, dualpi2)",
            ),
            (&["links[0].aqm_params={target=\"5ms\"}"], "links[0].aqm_params.target", "unknown parameter"),
            (&["links[0].reverse={aqm_params={x=1}}"], "links[0].reverse.aqm_params.x", "unknown parameter"),
            (&["links[0].reverse={delay=\"1ms\"}"], "links[0].reverse.delay", "unknown key"),
            (
                &["links[0].bidirectional=false", "links[0].reverse={rate=\"1Mbps\"}"],
                "links[0].reverse",
                "bidirectional",
            ),
            (
                &["links[1].bidirectional=false", "links[0].bidirectional=false"],
                "flows[0].ack_path",
                "no route back",
            ),
            (&["links[1].from=d", "links[1].to=c"], "flows[0].to", "no route from \"a\" to \"c\""),
            (&["flows[0].path=[\"l1\", \"l3\"]"], "flows[0].path[1]", "unknown link \"l3\""),
            (&["flows[0].path=[\"l2\"]"], "flows[0].path", "starts at \"b\""),
            (&["flows[0].path=[\"l1\"]"], "flows[0].path", "ends at \"b\""),
            (&["flows[0].path=\"l1\""], "flows[0].path", "list of link names"),
            (&["flows[0].ack_path=[\"l1\"]"], "flows[0].ack_path", "starts at \"a\""),
            (&["flows[0].rtt=\"-1ms\""], "flows[0].rtt", ""),
            (
                &["links[0].changes=[{at=\"20s\", rate=\"1Mbps\"}]"],
                "links[0].changes[0].at",
                "less than duration",
            ),
            (&["bottleneck.rate=1Mbps"], "links", "cannot be combined with bottleneck"),
            (&["links=[]"], "links", "at least one"),
            (&["links=3"], "links", "array of tables"),
        ] {
            let e = err(TWO, sets);
            assert_eq!(e.field, field, "{sets:?}: {e}");
            assert!(e.message.contains(words), "{sets:?}: {e}");
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn declared_nodes_are_checked() {
        let nodes = "[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n[[nodes]]\nname = \"c\"\n";
        let text = format!("{TWO}{nodes}");
        parse_str(&text, "t", &[], None).unwrap();
        let e = err(&format!("{TWO}{nodes}[[nodes]]\nname = \"z\"\n"), &[]);
        assert_eq!((e.field.as_str(), e.message.contains("not connected")), ("nodes[3]", true));
        let e = err(&format!("{TWO}{nodes}[[nodes]]\nname = \"a\"\n"), &[]);
        assert_eq!(e.field, "nodes[3].name");
        let e = err(&text, &["links[1].to=x"]);
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            ("links[1].to", "unknown node \"x\" (known: a, b, c)")
        );
        let dumbbell =
            "duration = \"1s\"\n[[nodes]]\nname = \"a\"\n[bottleneck]\nrate = \"1Mbps\"\n[[flows]]\n";
        assert_eq!(err(dumbbell, &[]).field, "nodes");
    }

    #[test]
    fn dumbbell_flows_do_not_name_hosts() {
        let text = "duration = \"1s\"\n[bottleneck]\nrate = \"1Mbps\"\n[[flows]]\nfrom = \"r1\"\n";
        let e = err(text, &[]);
        assert_eq!(e.field, "flows[0].from");
        let e = err("duration = \"1s\"\n[[flows]]\n", &[]);
        assert_eq!(e.field, "bottleneck");
        assert!(e.message.contains("[links]"), "{}", e.message);
        let e = err("duration = \"1s\"\n[bottleneck]\nrate = \"1Mbps\"\n[bottleneck.aqm_params]\ntarget = \"5ms\"\n[[flows]]\n", &[]);
        assert_eq!(e.field, "bottleneck.aqm_params.target");
    }

    #[test]
    fn the_general_form_resolves_routes_and_rtts() {
        let sets = ["links[0].delay=10ms", "links[1].delay=5ms", "flows[0].rtt=4ms"].map(String::from);
        let s = parse_str(TWO, "t", &sets, None).unwrap();
        let t = &s.topology;
        let names = |p: &[usize]| p.iter().map(|&l| t.links[l].name.as_str()).collect::<Vec<_>>();
        let f = &s.flows[0];
        assert_eq!((names(&f.path), names(&f.ack_path)), (vec!["l1", "l2"], vec!["l2-rev", "l1-rev"]));
        assert_eq!((f.access_delay, f.rtt), (4_000_000, 34_000_000));
        assert_eq!(t.generator, "links");
        assert_eq!(t.nodes, ["a", "b", "c"]);
        assert_eq!(t.links.len(), 4);
        assert_eq!(t.links[1].reverse_of, Some(0));
        assert!(t.links[0].measure_sojourn && !t.links[1].measure_sojourn);
    }
}
