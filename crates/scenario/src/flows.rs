//! `[[flows]]`: TCP and CBR flows, expanded by `count`, each given a route through the topology.

use std::collections::HashMap;

use ccbench_cc::{EcnUse, ParamSpec, Params};
use toml::{Table, Value};

use super::config::{CbrOptions, Controllers, Flow, FlowKind, Nanos, TcpOptions, Topology, Transport};
use super::fields::{
    fe, get_duration, get_params, get_positive_duration, get_str, join, map_param_error, param_value,
    params_of, shown, R,
};
use super::flow_keys::{accepted_keys, FlowKeys, TcpKeys, COMMON_STRUCTURED, TCP_STRUCTURED};
use super::tcp_options::option_specs;
use super::traffic::{get_chunks, get_rtt_spec, RttDraws};
use super::units::format_duration;
use crate::topology::routes::{check_path, Router};
use crate::topology::Attach;

pub use super::flow_keys::MAX_FLOWS;

pub fn build_flows(
    v: Option<&Value>,
    topo: &Topology,
    attach: Attach,
    duration: Nanos,
    ccas: Controllers<'_>,
    noise: HostNoise,
    seed: u64,
) -> R<Vec<Flow>> {
    let entries = match v {
        None => return Err(fe("flows", "at least one [[flows]] entry is required")),
        Some(Value::Array(a)) if a.is_empty() => {
            return Err(fe("flows", "at least one [[flows]] entry is required"))
        }
        Some(Value::Array(a)) => a,
        Some(v) => {
            return Err(fe("flows", format!("expected an array of tables ([[flows]]), got {}", shown(v))))
        }
    };
    let mut flows = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    let router = Router::new(topo);
    for (i, entry) in entries.iter().enumerate() {
        let p = format!("flows[{i}]");
        let Value::Table(ft) = entry else {
            return Err(fe(p, format!("expected a table ([[flows]]), got {entry}")));
        };
        let (template, count, explicit_name) = build_flow(ft, &p, &router, attach, duration, ccas, noise)?;
        let jitter = get_duration(ft, &p, "rtt_jitter")?.unwrap_or(0);
        let mut draws = RttDraws::new(get_rtt_spec(ft, &p, count)?, jitter, seed, i);
        if flows.len() + count > MAX_FLOWS {
            return Err(fe(
                join(&p, "count"),
                format!("the scenario would have more than {MAX_FLOWS} flows"),
            ));
        }
        for k in 0..count {
            let g = flows.len();
            let name = match &explicit_name {
                Some(n) if count > 1 => format!("{n}-{k}"),
                Some(n) => n.clone(),
                None if template.kind == FlowKind::Cbr => format!("cbr-{g}"),
                None => format!("{}-{g}", template.cca),
            };
            if let Some(prev) = names.insert(name.clone(), i) {
                let field = if explicit_name.is_some() { join(&p, "name") } else { p.clone() };
                return Err(fe(
                    field,
                    format!("duplicate flow name \"{name}\" (also used by flows[{prev}])"),
                ));
            }
            let mut flow = Flow { name, ..template.clone() };
            if let Some(rtt) = draws.rtt(k) {
                set_rtt(&mut flow, rtt, topo, attach);
            }
            let extra = draws.jitter();
            flow.access_delay += extra;
            flow.rtt += extra;
            flows.push(flow);
        }
    }
    if let Attach::Dumbbell { link, .. } = attach {
        check_dumbbell_changes(topo, link, &flows)?;
    }
    Ok(flows)
}

/// A drawn RTT: the whole base RTT on the dumbbell (never below the bottleneck's own two
/// ways), the extra access delay with `[[links]]`, as the plain `rtt` key means.
fn set_rtt(flow: &mut Flow, rtt: Nanos, topo: &Topology, attach: Attach) {
    let links = flow.rtt - flow.access_delay;
    flow.access_delay = match attach {
        Attach::Dumbbell { link, .. } => rtt.saturating_sub(topo.links[link].delay.saturating_mul(2)),
        Attach::Named => rtt,
    };
    flow.rtt = links + flow.access_delay;
}

/// A delay change on the dumbbell must still fit inside every flow's RTT.
fn check_dumbbell_changes(topo: &Topology, link: usize, flows: &[Flow]) -> R<()> {
    let changes = topo.changes.iter().filter(|c| c.link == link);
    for (j, c) in changes.enumerate() {
        if let Some(d) = c.delay {
            if let Some(f) = flows.iter().find(|f| d.saturating_mul(2) > f.rtt) {
                return Err(fe(
                    format!("bottleneck.changes[{j}].delay"),
                    format!(
                        "2 × delay ({}) exceeds the RTT of flow \"{}\" ({})",
                        format_duration(d.saturating_mul(2)),
                        f.name,
                        format_duration(f.rtt)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Where a flow goes: its hosts, both paths, and its access delay and base RTT.
struct Route {
    from: usize,
    to: usize,
    path: Vec<usize>,
    ack_path: Vec<usize>,
    access_delay: Nanos,
    rtt: Nanos,
}

fn route(t: &Table, p: &str, router: &Router, attach: Attach) -> R<Route> {
    match attach {
        Attach::Dumbbell { link, reverse, default_rtt } => {
            dumbbell_route(t, p, router.topology(), link, reverse, default_rtt)
        }
        Attach::Named => named_route(t, p, router),
    }
}

fn dumbbell_route(
    t: &Table,
    p: &str,
    topo: &Topology,
    link: usize,
    reverse: usize,
    default_rtt: Nanos,
) -> R<Route> {
    if let Some(k) = ["from", "to", "path", "ack_path"].into_iter().find(|k| t.contains_key(*k)) {
        return Err(fe(join(p, k), "only used with [[links]] topologies (every flow crosses [bottleneck])"));
    }
    let rtt_explicit = t.contains_key("rtt");
    let rtt = get_positive_duration(t, p, "rtt")?.unwrap_or(default_rtt);
    let delay = topo.links[link].delay;
    let two = delay.saturating_mul(2);
    if two > rtt {
        let (two, rtt) = (format_duration(two), format_duration(rtt));
        return Err(if rtt_explicit {
            fe(join(p, "rtt"), format!("must be at least 2 × bottleneck.delay ({two}), got {rtt}"))
        } else {
            fe(
                "bottleneck.delay",
                format!("2 × delay ({two}) exceeds the RTT of {p} ({rtt}, from bottleneck.rtt)"),
            )
        });
    }
    let (from, to) = (topo.links[link].from, topo.links[link].to);
    Ok(Route { from, to, path: vec![link], ack_path: vec![reverse], access_delay: rtt - two, rtt })
}

fn named_route(t: &Table, p: &str, router: &Router) -> R<Route> {
    let topo = router.topology();
    let from = host(t, p, "from", router)?;
    let to = host(t, p, "to", router)?;
    if from == to {
        return Err(fe(join(p, "to"), format!("must differ from from (\"{}\")", topo.nodes[from])));
    }
    let path = match link_list(t, p, "path", router)? {
        Some(path) => {
            check_path(topo, &path, from, to).map_err(|m| fe(join(p, "path"), m))?;
            path
        }
        None => router.shortest_path(from, to).ok_or_else(|| {
            fe(join(p, "to"), format!("no route from \"{}\" to \"{}\"", topo.nodes[from], topo.nodes[to]))
        })?,
    };
    let ack_path = match link_list(t, p, "ack_path", router)? {
        Some(back) => {
            check_path(topo, &back, to, from).map_err(|m| fe(join(p, "ack_path"), m))?;
            back
        }
        None => router.reverse_path(&path).or_else(|| router.shortest_path(to, from)).ok_or_else(|| {
            let (a, b) = (&topo.nodes[to], &topo.nodes[from]);
            fe(join(p, "ack_path"), format!("no route back from \"{a}\" to \"{b}\" for ACKs; give ack_path"))
        })?,
    };
    let access_delay = get_duration(t, p, "rtt")?.unwrap_or(0);
    let delays: Nanos = path.iter().chain(&ack_path).map(|&l| topo.links[l].delay).sum();
    Ok(Route { from, to, path, ack_path, access_delay, rtt: delays + access_delay })
}

fn host(t: &Table, p: &str, key: &str, router: &Router) -> R<usize> {
    let nodes = &router.topology().nodes;
    let name = get_str(t, p, key)?
        .ok_or_else(|| fe(join(p, key), format!("missing required key (e.g. {key} = \"{}\")", nodes[0])))?;
    router
        .node(name)
        .ok_or_else(|| fe(join(p, key), format!("unknown node \"{name}\" (known: {})", some_of(nodes))))
}

/// The first few of `names`, for a message that stays one short line with thousands of them.
fn some_of(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let listed = names.iter().take(SHOWN).map(String::as_str).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        format!("{listed}, … {} in all", names.len())
    } else {
        listed
    }
}

/// An array of link names (`path = ["l1", "l2"]`) as link indices.
fn link_list(t: &Table, p: &str, key: &str, router: &Router) -> R<Option<Vec<usize>>> {
    let here = join(p, key);
    let items = match t.get(key) {
        None => return Ok(None),
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(v) => {
            return Err(fe(
                here,
                format!("expected a list of link names like [\"l1\", \"l2\"], got {}", shown(v)),
            ))
        }
    };
    let mut links = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let Value::String(name) = item else {
            return Err(fe(format!("{here}[{j}]"), format!("expected a link name, got {}", shown(item))));
        };
        let l = router.link(name).ok_or_else(|| {
            let known: Vec<String> = router.topology().links.iter().map(|l| l.name.clone()).collect();
            fe(format!("{here}[{j}]"), format!("unknown link \"{name}\" (known: {})", some_of(&known)))
        })?;
        links.push(l);
    }
    Ok(Some(links))
}

/// One `[[flows]]` entry → (flow with a placeholder name, count, explicit name).
fn build_flow(
    t: &Table,
    p: &str,
    router: &Router,
    attach: Attach,
    duration: Nanos,
    ccas: Controllers<'_>,
    noise: HostNoise,
) -> R<(Flow, usize, Option<String>)> {
    let kind = kind_of(t, p)?;
    check_flow_keys(t, p, &kind)?;
    let keys = FlowKeys::read(&scalar_params(t, p)?).map_err(|e| fe(join(p, &e.key), e.message))?;
    let (explicit_name, count) = (keys.name.clone(), keys.count);
    let (start, stop) = start_stop(&keys, p, duration)?;
    let r = match t.get("rtt") {
        // Drawn per flow later; the route takes the default meanwhile.
        Some(Value::Array(_) | Value::Table(_)) => {
            let mut plain = t.clone();
            plain.remove("rtt");
            route(&plain, p, router, attach)?
        }
        _ => route(t, p, router, attach)?,
    };
    let mut flow = Flow {
        name: String::new(),
        kind: kind.clone(),
        cca: String::new(),
        cc: Params::new(),
        start,
        stop,
        from: r.from,
        to: r.to,
        path: r.path,
        ack_path: r.ack_path,
        access_delay: r.access_delay,
        rtt: r.rtt,
        size: None,
        host_noise: 0,
        tcp: TcpOptions::default(),
        transport: Transport::Tcp,
        cbr: CbrOptions::default(),
        chunks: None,
    };
    match kind {
        FlowKind::Tcp => {
            let options = option_specs();
            flow.transport = transport(&keys.tcp, t, p, ccas, &options)?;
            flow.cca = keys.tcp.cca.clone();
            flow.cc = get_params(t, p, "cc")?;
            // A QUIC flow runs our own controllers, in the emulator too.
            let ccas = if flow.transport == Transport::Quic { Controllers::Simulator } else { ccas };
            let ecn_use = check_cca(&flow.cca, &flow.cc, p, ccas)?;
            flow.chunks = get_chunks(t, p, keys.tcp.persistence, keys.tcp.chunk_gap)?;
            flow.size = keys.tcp.size;
            if flow.transport == Transport::Tcp {
                flow.tcp = build_tcp(t, p, &options, ecn_use, &keys)?;
            }
            if let (Controllers::Kernel(_), Some(key)) = (ccas, flow.tcp.accurate_ecn_key()) {
                return Err(fe(
                    join(p, key),
                    "this kernel negotiates classic ECN only (net.ipv4.tcp_ecn 0-2, no AccECN, no ECT(1))",
                ));
            }
            let noise = get_host_noise(t, p, "host_noise")?.unwrap_or(noise);
            flow.host_noise =
                noise.resolve(router.topology(), &flow.path, flow.tcp.mss + flow.tcp.header_bytes);
        }
        FlowKind::Cbr => flow.cbr = keys.cbr.clone(),
    }
    Ok((flow, count, explicit_name))
}

/// `transport = "quic"` runs only in the emulator and takes none of TCP's stack options.
fn transport(
    keys: &TcpKeys,
    t: &Table,
    p: &str,
    ccas: Controllers<'_>,
    options: &[ParamSpec],
) -> R<Transport> {
    if keys.transport == Transport::Tcp {
        return Ok(Transport::Tcp);
    }
    if let Controllers::Simulator = ccas {
        return Err(fe(
            join(p, "transport"),
            "\"quic\" runs only in `ccbench emu` (the simulator models TCP, not QUIC)",
        ));
    }
    let tcp_only = ["receiver_cca", "receiver_cc", "host_noise", "chunk_size"];
    let stack = options.iter().map(|o| o.key.as_str());
    if let Some(key) = tcp_only.into_iter().chain(stack).find(|k| t.contains_key(*k)) {
        return Err(fe(join(p, key), "a TCP option; a QUIC flow (quinn's stack, ECN on) takes none"));
    }
    Ok(Transport::Quic)
}

/// Seeded timing noise at a sending host (docs/model.md, "Host timing noise").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostNoise {
    /// Up to one full-size packet's time on the slowest link of the flow's path.
    Auto,
    Fixed(Nanos),
}

impl HostNoise {
    /// The largest extra delay per packet for a flow whose packets are `wire_bytes` long.
    fn resolve(self, topo: &Topology, path: &[usize], wire_bytes: u32) -> Nanos {
        match self {
            HostNoise::Fixed(d) => d,
            HostNoise::Auto => {
                let slowest = path.iter().map(|&l| topo.links[l].rate).fold(f64::INFINITY, f64::min);
                if slowest.is_finite() {
                    (wire_bytes as f64 * 8e9 / slowest).ceil() as Nanos
                } else {
                    0
                }
            }
        }
    }
}

/// `host_noise = "auto" | "off" | "<duration>"` (also `true` = auto, `false` = off).
pub fn get_host_noise(t: &Table, p: &str, key: &str) -> R<Option<HostNoise>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Boolean(true)) => Ok(Some(HostNoise::Auto)),
        Some(Value::Boolean(false)) => Ok(Some(HostNoise::Fixed(0))),
        Some(Value::String(s)) if s == "auto" => Ok(Some(HostNoise::Auto)),
        Some(Value::String(s)) if s == "off" => Ok(Some(HostNoise::Fixed(0))),
        Some(v) => match get_duration(t, p, key) {
            Ok(d) => Ok(d.map(HostNoise::Fixed)),
            Err(_) => Err(fe(
                join(p, key),
                format!("expected \"auto\", \"off\" or a duration like \"500us\", got {}", shown(v)),
            )),
        },
    }
}

/// The controller exists for the back end and takes these parameters; returns the ECN it needs
/// of the stack.
fn check_cca(cca: &str, cc: &Params, p: &str, ccas: Controllers<'_>) -> R<EcnUse> {
    match ccas {
        Controllers::Simulator => ccbench_cc::build_controller(cca, &cc.clone())
            .map(|c| c.ecn_use())
            .map_err(|e| map_param_error(e, p, "cca", "cc")),
        Controllers::Kernel(known) if !known.contains(&cca) => Err(fe(
            join(p, "cca"),
            format!("unknown algorithm \"{cca}\" for the real stack (known: {})", known.join(", ")),
        )),
        Controllers::Kernel(_) if !cc.is_empty() => {
            Err(fe(join(p, "cc"), "the kernel's controllers take no [flows.cc] parameters here"))
        }
        Controllers::Kernel(_) => Ok(EcnUse::Optional),
    }
}

/// `type`, read first: it decides which keys the entry may have.
fn kind_of(t: &Table, p: &str) -> R<FlowKind> {
    let mut q = Params::new();
    if let Some(v) = t.get("type") {
        q.insert("type", param_value(v, p, "type")?);
    }
    FlowKeys::kind(&q).map_err(|e| fe(join(p, &e.key), e.message))
}

/// Unknown keys, and keys of the other flow type, are errors naming the key.
fn check_flow_keys(t: &Table, p: &str, kind: &FlowKind) -> R<()> {
    let accepted = accepted_keys(kind);
    let other = match kind {
        FlowKind::Tcp => FlowKind::Cbr,
        FlowKind::Cbr => FlowKind::Tcp,
    };
    let Some(key) = t.keys().find(|k| !accepted.contains(k.as_str())) else {
        return Ok(());
    };
    let msg = match (accepted_keys(&other).contains(key.as_str()), kind) {
        (true, FlowKind::Cbr) => "only allowed for TCP flows (this flow has type = \"cbr\")",
        (true, FlowKind::Tcp) => "only allowed for CBR flows (add type = \"cbr\")",
        (false, _) => "unknown key",
    };
    Err(fe(join(p, key), msg))
}

/// The entry's keys that are not read by code of their own, as parameters.
fn scalar_params(t: &Table, p: &str) -> R<Params> {
    let mut params = Params::new();
    let structured = |k: &str| COMMON_STRUCTURED.contains(&k) || TCP_STRUCTURED.contains(&k);
    for (key, value) in t.iter().filter(|(k, _)| !structured(k)) {
        params.insert(key.clone(), param_value(value, p, key)?);
    }
    Ok(params)
}

/// `start` before the end of the run, `stop` (if any) after `start`.
fn start_stop(keys: &FlowKeys, p: &str, duration: Nanos) -> R<(Nanos, Option<Nanos>)> {
    let (start, stop) = (keys.start, keys.stop);
    if start >= duration {
        let (d, s) = (format_duration(duration), format_duration(start));
        return Err(fe(join(p, "start"), format!("must be less than duration ({d}), got {s}")));
    }
    if let Some(stop) = stop.filter(|&stop| stop <= start) {
        let (a, b) = (format_duration(start), format_duration(stop));
        return Err(fe(join(p, "stop"), format!("must be after start ({a}), got {b}")));
    }
    Ok((start, stop))
}

/// The stack options through [`TcpOptions::from_params`], and the receive-side controller.
fn build_tcp(t: &Table, p: &str, options: &[ParamSpec], ecn: EcnUse, keys: &FlowKeys) -> R<TcpOptions> {
    let params = params_of(t, p, options)?;
    let mut o = TcpOptions::from_params_for(&params, ecn).map_err(|e| fe(join(p, &e.key), e.message))?;
    o.receiver_cca = keys.tcp.receiver_cca.clone();
    o.receiver_cc = get_params(t, p, "receiver_cc")?;
    match &o.receiver_cca {
        Some(name) => {
            ccbench_cc::build_receiver_control(name, &o.receiver_cc.clone())
                .map_err(|e| map_param_error(e, p, "receiver_cca", "receiver_cc"))?;
        }
        None if !o.receiver_cc.is_empty() => {
            return Err(fe(join(p, "receiver_cc"), "given without receiver_cca"));
        }
        None => {}
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use crate::flow_keys::accepted_keys;
    use crate::parse::parse_str;
    use crate::FlowKind;
    use crate::Scenario;

    fn parse(text: &str, sets: &[&str]) -> Result<Scenario, (String, String)> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        parse_str(text, "test.toml", &sets, None).map_err(|e| (e.field, e.message))
    }

    const TWO_LINKS: &str = r#"
duration = "10s"
[[links]]
name = "fast"
from = "a"
to = "b"
rate = "100Mbps"
[[links]]
name = "slow"
from = "b"
to = "c"
rate = "20Mbps"
[[flows]]
from = "a"
to = "c"
[[flows]]
type = "cbr"
from = "a"
to = "c"
"#;

    /// The keys of the docs' flow tables, by table: the first cell's backticked names
    /// (`[flows.cc]` is `cc`) of each row between `from` and the first of `to` after it.
    fn documented_keys(text: &str, from: &str, to: &str) -> BTreeSet<String> {
        let start = text.find(from).unwrap_or_else(|| panic!("docs/scenarios.md lacks {from:?}"));
        let section = &text[start..];
        let section = &section[..section.find(to).unwrap_or(section.len())];
        let rows = section.lines().filter(|l| l.starts_with("| `"));
        let first_cells = rows.map(|l| l.split('|').nth(1).unwrap_or_default().to_string());
        let names =
            first_cells.flat_map(|c| c.split('`').skip(1).step_by(2).map(str::to_string).collect::<Vec<_>>());
        names.map(|n| n.trim_start_matches("[flows.").trim_end_matches(']').to_string()).collect()
    }

    /// The docs' tables of flow keys and the keys the parser accepts are the same sets, both
    /// ways: a key added to the code without a row, or a row for a key the code refuses, fails.
    #[test]
    fn the_docs_tables_hold_exactly_the_keys_the_parser_accepts() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
        let text = std::fs::read_to_string(path).expect("docs/scenarios.md");
        let (tcp, cbr) = (accepted_keys(&FlowKind::Tcp), accepted_keys(&FlowKind::Cbr));
        let common: BTreeSet<String> = tcp.intersection(&cbr).cloned().collect();
        let documented_common: BTreeSet<String> =
            documented_keys(&text, "### Flows in the general form", "\n## ")
                .union(&documented_keys(&text, "## `[[flows]]`", "### TCP flows"))
                .cloned()
                .collect();
        assert_eq!(documented_common, common);
        assert_eq!(documented_keys(&text, "### TCP flows", "#### "), &tcp - &common);
        assert_eq!(documented_keys(&text, "### CBR flows", "\n## "), &cbr - &common);
    }

    /// "auto" is one full-size packet (1448 + 52 bytes) at the slowest link of the path.
    #[test]
    fn host_noise_defaults_to_one_packet_time_at_the_slowest_link() {
        let s = parse(TWO_LINKS, &[]).unwrap();
        assert_eq!(s.flows[0].host_noise, 600_000, "1500 B at 20 Mbps");
        assert_eq!(s.flows[1].host_noise, 0, "CBR flows keep their exact period");
        let s = parse(TWO_LINKS, &["flows[0].mss=948"]).unwrap();
        assert_eq!(s.flows[0].host_noise, 400_000);
    }

    #[test]
    fn host_noise_per_flow_and_for_the_whole_scenario() {
        let cases: [(&[&str], u64); 6] = [
            (&["host_noise=\"off\""], 0),
            (&["host_noise=false"], 0),
            (&["host_noise=\"2ms\""], 2_000_000),
            (&["host_noise=\"off\"", "flows[0].host_noise=\"auto\""], 600_000),
            (&["host_noise=\"off\"", "flows[0].host_noise=true"], 600_000),
            (&["flows[0].host_noise=\"0s\""], 0),
        ];
        for (sets, expect) in cases {
            assert_eq!(parse(TWO_LINKS, sets).unwrap().flows[0].host_noise, expect, "{sets:?}");
        }
    }

    #[test]
    fn bad_host_noise_names_its_field() {
        for (set, field) in [
            ("host_noise=\"loud\"", "host_noise"),
            ("flows[0].host_noise=3", "flows[0].host_noise"),
            ("flows[0].host_noise=\"-1ms\"", "flows[0].host_noise"),
            ("flows[1].host_noise=\"1ms\"", "flows[1].host_noise"),
        ] {
            let (f, message) = parse(TWO_LINKS, &[set]).unwrap_err();
            assert_eq!(f, field, "{set}: {message}");
        }
    }

    #[test]
    fn receiver_clock_offset_may_be_negative_and_skew_is_bounded() {
        let s =
            parse(TWO_LINKS, &["flows[0].clock_offset=\"-2.5s\"", "flows[0].clock_skew_ppm=-40"]).unwrap();
        assert_eq!((s.flows[0].tcp.clock_offset, s.flows[0].tcp.clock_skew_ppm), (-2_500_000_000, -40.0));
        for (set, field) in [
            ("flows[0].clock_offset=\"soon\"", "flows[0].clock_offset"),
            ("flows[0].clock_offset=5", "flows[0].clock_offset"),
            ("flows[0].clock_skew_ppm=20000", "flows[0].clock_skew_ppm"),
            ("flows[0].clock_skew_ppm=\"5ppm\"", "flows[0].clock_skew_ppm"),
            ("flows[1].clock_offset=\"1s\"", "flows[1].clock_offset"),
        ] {
            let (f, message) = parse(TWO_LINKS, &[set]).unwrap_err();
            assert_eq!(f, field, "{set}: {message}");
        }
    }
}
