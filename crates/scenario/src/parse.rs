//! TOML scenario files → validated [`Scenario`].
//!
//! The raw `toml::Table` is walked by hand (no serde derive) so that every error names the exact
//! dotted field (`flows[0].cc.beta`, `links[1].changes[0].at`) and unknown keys are rejected.
//! `--set key=value` overrides are applied to the raw table before validation. The topology comes
//! from one of the generators in [`crate::topology::TOPOLOGIES`]. The schema is documented in
//! `docs/scenarios.md`.

use std::fmt;

use toml::Table;

use super::config::{Controllers, Nanos, Output, Scenario};
use super::fields::{
    check_keys, fe, get_bool, get_duration, get_int, get_positive_duration, get_str, get_table, required,
    shown, Fe, R,
};
use super::flows::{build_flows, get_host_noise, HostNoise};
use super::overrides::apply_override;
use super::units::format_duration;
use crate::topology::TOPOLOGIES;

/// A scenario problem: `{source}: {field}: {message}`, e.g.
/// `s.toml: bottleneck.rate: expected a rate like "10Mbps", got "-3"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// File name (or other label) the scenario came from.
    pub source: String,
    /// Dotted path of the offending field (`flows[0].cca`), `line N` for TOML syntax errors,
    /// or `--set <key>` for a malformed override.
    pub field: String,
    /// One-line description.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.source, self.field, self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// Parse a scenario from TOML text. `source` labels errors (usually the file name); `overrides`
/// are `key=value` strings (CLI `--set`) applied before validation; `seed` replaces the file's.
pub fn parse_str(
    text: &str,
    source: &str,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    parse_str_for(text, source, overrides, seed, Controllers::Simulator)
}

/// [`parse_str`] for a back end with its own controllers.
pub fn parse_str_for(
    text: &str,
    source: &str,
    overrides: &[String],
    seed: Option<u64>,
    ccas: Controllers<'_>,
) -> Result<Scenario, ScenarioError> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| {
        let field = match e.span() {
            Some(span) => {
                let start = span.start.min(text.len());
                let line = text.as_bytes()[..start].iter().filter(|b| **b == b'\n').count() + 1;
                format!("line {line}")
            }
            None => "TOML".to_string(),
        };
        ScenarioError { source: source.to_string(), field, message: one_line(e.message()) }
    })?;
    parse_table_for(table, source, overrides, seed, ccas)
}

/// Validate an already-parsed TOML table (see [`parse_str`]).
pub fn parse_table(
    table: Table,
    source: &str,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    parse_table_for(table, source, overrides, seed, Controllers::Simulator)
}

fn parse_table_for(
    mut table: Table,
    source: &str,
    overrides: &[String],
    seed: Option<u64>,
    ccas: Controllers<'_>,
) -> Result<Scenario, ScenarioError> {
    let with_source =
        |e: Fe| ScenarioError { source: source.to_string(), field: e.field, message: e.message };
    for spec in overrides {
        apply_override(&mut table, spec).map_err(with_source)?;
    }
    resolve_trace_paths(&mut table, source);
    build(&table, ccas, seed).map_err(with_source)
}

/// A link's relative `trace` path names a file beside the scenario file (when `source` is one),
/// as a user writing `trace = "traces/lte.trace"` next to the scenario expects; for a scenario
/// given as text or a dict, the folder this process runs in. Made absolute here, so the path
/// means the same file wherever the scenario travels next (a campaign's workers).
fn resolve_trace_paths(table: &mut Table, source: &str) {
    let source = std::path::Path::new(source);
    let beside = source.parent().filter(|_| source.is_file()).map(std::path::Path::to_path_buf);
    let Some(dir) = beside.or_else(|| std::env::current_dir().ok()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() { std::path::PathBuf::from(".") } else { dir };
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    for (key, value) in table.iter_mut() {
        match (key.as_str(), value) {
            ("bottleneck", toml::Value::Table(link)) => resolve_link_trace(link, &dir),
            ("links", toml::Value::Array(links)) => links
                .iter_mut()
                .filter_map(|l| l.as_table_mut())
                .for_each(|link| resolve_link_trace(link, &dir)),
            _ => {}
        }
    }
}

/// `table` (a scenario, not yet validated) as TOML text with its relative paths resolved as
/// [`parse_str`] resolves them for `source`.
pub fn resolved(mut table: Table, source: &str) -> Result<String, String> {
    resolve_trace_paths(&mut table, source);
    toml::to_string(&table).map_err(|e| e.to_string())
}

/// A link table's `trace`, and its `reverse` table's, against `dir`.
fn resolve_link_trace(link: &mut Table, dir: &std::path::Path) {
    if let Some(toml::Value::Table(reverse)) = link.get_mut("reverse") {
        resolve_link_trace(reverse, dir);
    }
    let relative =
        link.get("trace").and_then(|v| v.as_str()).filter(|p| std::path::Path::new(p).is_relative());
    if let Some(path) = relative.map(|p| dir.join(p).display().to_string()) {
        link.insert("trace".into(), toml::Value::String(path));
    }
}

/// A TOML parser message on one line; never empty (a lone `\r` once gave an empty one).
fn one_line(s: &str) -> String {
    let line = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    if line.is_empty() {
        "invalid TOML syntax".to_string()
    } else {
        line
    }
}

// ---------------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------------

/// Most time-series bins a run may have.
const MAX_BINS: u64 = 1_000_000;

const TOP_KEYS: &[&str] = &["name", "duration", "warmup", "seed", "host_noise", "flows", "output", "nodes"];
const OUTPUT_KEYS: &[&str] = &["bin", "sojourn_samples", "owd_samples", "flow_delays", "pcap"];
const DEFAULT_BIN: Nanos = 100_000_000;

/// `seed` (the CLI's `--seed`) replaces the file's before anything is drawn from it.
fn build(t: &Table, ccas: Controllers<'_>, seed: Option<u64>) -> R<Scenario> {
    let generator_keys = TOPOLOGIES.iter().map(|g| g.build.key);
    let allowed: Vec<&str> = TOP_KEYS.iter().copied().chain(generator_keys).collect();
    check_keys(t, "", &allowed)?;
    let name = get_str(t, "", "name")?.map(str::to_string);
    let duration = required(get_duration(t, "", "duration")?, "duration", "duration = \"60s\"")?;
    if duration == 0 {
        return Err(fe("duration", "must be > 0"));
    }
    let warmup = get_duration(t, "", "warmup")?.unwrap_or(0);
    if warmup >= duration {
        return Err(fe(
            "warmup",
            format!(
                "must be less than duration ({}), got {}",
                format_duration(duration),
                format_duration(warmup)
            ),
        ));
    }
    let file_seed = get_int(t, "", "seed", 0, i64::MAX)?.map_or(1, |s| s as u64);
    let seed = seed.unwrap_or(file_seed);
    let mut output = build_output(get_table(t, "", "output")?)?;
    // Every bin is a row per flow and link: keep time series to a size a laptop can hold.
    let bins = duration / output.bin;
    if bins > MAX_BINS {
        return Err(fe(
            "output.bin",
            format!(
                "{} gives {bins} bins over {}; at most {MAX_BINS} are allowed",
                format_duration(output.bin),
                format_duration(duration)
            ),
        ));
    }
    let (topology, attach) = build_topology(t, duration)?;
    output.pcap = get_pcap_links(get_table(t, "", "output")?, &topology)?;
    let noise = get_host_noise(t, "", "host_noise")?.unwrap_or(HostNoise::Auto);
    let flows = build_flows(t.get("flows"), &topology, attach, duration, ccas, noise, seed)?;
    Ok(Scenario { name, duration, warmup, seed, topology, flows, output })
}

/// The one topology generator whose key the scenario uses.
fn build_topology(t: &Table, duration: Nanos) -> R<(super::Topology, crate::topology::Attach)> {
    let mut present = TOPOLOGIES.iter().filter(|g| t.contains_key(g.build.key));
    let Some(g) = present.next() else {
        let keys: Vec<String> = TOPOLOGIES
            .iter()
            .map(|g| format!("{} ({})", table_header(g.build.key, g.build.whole_file), g.name))
            .collect();
        return Err(fe(
            "bottleneck",
            format!("missing: the scenario needs a topology, one of {}", keys.join(", ")),
        ));
    };
    if let Some(other) = present.next() {
        return Err(fe(
            other.build.key,
            format!("cannot be combined with {} (one topology per scenario)", g.build.key),
        ));
    }
    if t.contains_key("nodes") && !g.build.whole_file {
        return Err(fe("nodes", "only used with [[links]]"));
    }
    let source = if g.build.whole_file {
        t
    } else {
        required(get_table(t, "", g.build.key)?, g.build.key, "a table")?
    };
    (g.build.build)(source, duration)
}

/// How a topology's table is written: `[bottleneck]`, or `[[links]]` for an array of tables.
fn table_header(key: &str, array: bool) -> String {
    if array {
        format!("[[{key}]]")
    } else {
        format!("[{key}]")
    }
}

fn build_output(t: Option<&Table>) -> R<Output> {
    let Some(t) = t else {
        return Ok(Output {
            bin: DEFAULT_BIN,
            sojourn_samples: false,
            owd_samples: false,
            flow_delays: false,
            pcap: Vec::new(),
        });
    };
    let p = "output";
    check_keys(t, p, OUTPUT_KEYS)?;
    Ok(Output {
        bin: get_positive_duration(t, p, "bin")?.unwrap_or(DEFAULT_BIN),
        sojourn_samples: get_bool(t, p, "sojourn_samples")?.unwrap_or(false),
        owd_samples: get_bool(t, p, "owd_samples")?.unwrap_or(false),
        flow_delays: get_bool(t, p, "flow_delays")?.unwrap_or(false),
        pcap: Vec::new(), // resolved once the topology's links are known
    })
}

/// `output.pcap`: names of topology links to trace, each at most once.
fn get_pcap_links(t: Option<&Table>, topo: &super::Topology) -> R<Vec<usize>> {
    let Some(value) = t.and_then(|t| t.get("pcap")) else {
        return Ok(Vec::new());
    };
    let Some(names) = value.as_array() else {
        return Err(fe("output.pcap", format!("expected a list of link names, got {}", shown(value))));
    };
    let mut links = Vec::with_capacity(names.len());
    for (i, v) in names.iter().enumerate() {
        let field = format!("output.pcap[{i}]");
        let Some(name) = v.as_str() else {
            return Err(fe(field, format!("expected a link name, got {}", shown(v))));
        };
        let Some(l) = topo.link_index(name) else {
            let known: Vec<&str> = topo.links.iter().map(|l| l.name.as_str()).collect();
            return Err(fe(field, format!("unknown link {name:?} (links: {})", known.join(", "))));
        };
        // The trace is `<link>.pcap` in the run folder: the name must stay inside it.
        if name.starts_with('.') || name.contains(['/', '\\']) {
            return Err(fe(field, format!("link {name:?} cannot name a file (no '/', '\\', leading '.')")));
        }
        if links.contains(&l) {
            return Err(fe(field, format!("link {name:?} is listed twice")));
        }
        links.push(l);
    }
    Ok(links)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BufferSize, FlowKind, LinkChange, LinkSpec, TcpOptions, Transport};
    use ccbench_cc::{CaCounting, ParamValue, Params};

    fn link<'a>(s: &'a Scenario, name: &str) -> &'a LinkSpec {
        &s.topology.links[s.topology.link_index(name).unwrap()]
    }

    const SRC: &str = "s.toml";

    fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        parse_str(text, SRC, &[], None)
    }

    fn parse_with(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        parse_str(text, SRC, &sets, None)
    }

    /// The error's field, asserting that parsing failed.
    fn err(text: &str) -> ScenarioError {
        match parse(text) {
            Ok(s) => panic!("parsed, expected an error: {s:?}"),
            Err(e) => e,
        }
    }

    fn err_field(text: &str) -> String {
        err(text).field
    }

    #[test]
    fn a_link_marks_by_default_where_linux_ships_its_queue_marking() {
        let ecn = |extra: &str| link(&parse(&with_bottleneck(extra)).unwrap(), "bottleneck").ecn;
        assert!(ecn("aqm = \"dualpi2\"") && ecn("aqm = \"fq_codel\"") && ecn("aqm = \"pi2\""));
        assert!(!ecn("aqm = \"codel\"") && !ecn("aqm = \"pie\"") && !ecn(""));
        assert!(!ecn("aqm = \"dualpi2\"\necn = false") && ecn("aqm = \"codel\"\necn = true"));
        // A reverse direction with a queue of its own takes that queue's default.
        let text = r#"
duration = "10s"
[[links]]
name = "l1"
from = "a"
to = "b"
rate = "10Mbps"
aqm = "codel"
reverse = { aqm = "dualpi2" }
[[flows]]
from = "a"
to = "b"
"#;
        let s = parse(text).unwrap();
        assert_eq!((link(&s, "l1").ecn, link(&s, "l1-rev").ecn), (false, true));
    }

    #[test]
    fn ecn_options_follow_the_controller_and_the_kernel_refuses_accurate_ecn() {
        let o = parse(&with_flow("cca = \"cubic\"")).unwrap().flows[0].tcp.clone();
        assert!(!o.ecn && !o.accecn && !o.ect1);
        let o = parse(&with_flow("cca = \"cubic\"\necn = true\naccecn = true")).unwrap().flows[0].tcp.clone();
        assert!(o.ecn && o.accecn && !o.ect1);
        assert_eq!(err_field(&with_flow("accecn = true")), "flows[0].accecn", "needs ecn");
        assert_eq!(err_field(&with_flow("ecn = true\nect1 = \"yes\"")), "flows[0].ect1");
        let kernel = Controllers::Kernel(&["cubic", "reno", "bbr"]);
        let text = with_flow("cca = \"cubic\"\necn = true\nect1 = true");
        let e = parse_str_for(&text, SRC, &[], None, kernel).unwrap_err();
        assert_eq!(e.field, "flows[0].ect1");
        assert!(e.message.contains("classic ECN only"), "{e}");
        let text = with_flow("cca = \"cubic\"\necn = true");
        assert!(parse_str_for(&text, SRC, &[], None, kernel).unwrap().flows[0].tcp.ecn);
    }

    #[test]
    fn quic_flows_run_our_controllers_in_the_emulator_only() {
        let text = with_flow("transport = \"quic\"\ncca = \"prague\"\ncc = { rtt_target = \"15ms\" }");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.field, "flows[0].transport");
        assert!(e.message.contains("only in `ccbench emu`"), "{e}");
        let kernel = Controllers::Kernel(&["cubic", "reno", "bbr"]);
        let s = parse_str_for(&text, SRC, &[], None, kernel).unwrap();
        assert_eq!((s.flows[0].transport, s.flows[0].cca.as_str()), (Transport::Quic, "prague"));
        // The stack it does not run: TCP's options are refused, ECN's accurate feedback too.
        for (extra, field) in
            [("sack = false", "flows[0].sack"), ("receiver_cca = \"rledbat\"", "flows[0].receiver_cca")]
        {
            let text = with_flow(&format!("transport = \"quic\"\n{extra}"));
            assert_eq!(parse_str_for(&text, SRC, &[], None, kernel).unwrap_err().field, field);
        }
        let bad = with_flow("transport = \"quic\"\ncc = { target = \"-1ms\" }\ncca = \"ledbat\"");
        assert_eq!(parse_str_for(&bad, SRC, &[], None, kernel).unwrap_err().field, "flows[0].cc.target");
        let text = with_flow("transport = \"sctp\"");
        assert_eq!(parse_str_for(&text, SRC, &[], None, kernel).unwrap_err().field, "flows[0].transport");
        assert_eq!(parse(&with_flow("")).unwrap().flows[0].transport, Transport::Tcp);
    }

    const MINIMAL: &str = r#"
duration = "10s"
[bottleneck]
rate = "10Mbps"
[[flows]]
"#;

    /// MINIMAL with extra lines appended to the bottleneck table / first flow.
    fn with_bottleneck(extra: &str) -> String {
        format!("duration = \"10s\"\n[bottleneck]\nrate = \"10Mbps\"\n{extra}\n[[flows]]\n")
    }

    fn with_flow(extra: &str) -> String {
        format!("duration = \"10s\"\n[bottleneck]\nrate = \"10Mbps\"\n[[flows]]\n{extra}\n")
    }

    const EXAMPLE: &str = r#"
name = "two flows"
duration = "100s"
warmup = "20s"
seed = 7

[output]
bin = "50ms"
sojourn_samples = false

[bottleneck]
rate = "20Mbps"
reverse_rate = "1Mbps"
rtt = "80ms"
delay = "5ms"
buffer = "0.5bdp"
aqm = "droptail"
ecn = true
jitter = "1ms"
loss = 0.01

[[bottleneck.changes]]
at = "50s"
rate = "10Mbps"

[[bottleneck.changes]]
at = "30s"
delay = "10ms"

[[flows]]
cca = "cubic"
start = "1s"
stop = "90s"
rtt = "100ms"
size = "262KB"
mss = 1000
header_bytes = 40
initial_window = 4
sack = false
delayed_ack = false
delayed_ack_timeout = "200ms"
quickack_segments = 0
timestamps = false
ts_granularity = "4ms"
rcv_buf = "1MiB"
wscale = 7
handshake = false
ecn = true
rto_min = "1s"
rto_initial = "3s"
rto_max = "60s"
ca_counting = "acks"

[[flows]]
name = "bulk"
cca = "newreno"
count = 2

[[flows]]
type = "cbr"
name = "voip"
packet_size = 200
interval = "10ms"
header_bytes = 40
"#;

    #[test]
    fn example_parses_with_the_right_values() {
        let s = parse(EXAMPLE).unwrap();
        assert_eq!(s.duration, 100_000_000_000);
        assert_eq!(s.warmup, 20_000_000_000);
        assert_eq!(s.seed, 7);
        assert_eq!(s.output.bin, 50_000_000);
        assert!(!s.output.sojourn_samples);

        let b = link(&s, "bottleneck");
        assert_eq!(b.rate, 20e6);
        assert_eq!(link(&s, "bottleneck-rev").rate, 1e6);
        assert_eq!(b.rtt, 80_000_000);
        assert_eq!(b.delay, 5_000_000);
        assert_eq!(b.buffer, BufferSize::Bdp(0.5));
        assert_eq!(b.aqm, "droptail");
        assert!(b.ecn);
        assert_eq!(b.jitter, 1_000_000);
        assert_eq!(b.loss, 0.01);
        // Sorted by time.
        assert_eq!(
            s.topology.changes,
            vec![
                LinkChange {
                    at: 30_000_000_000,
                    link: 0,
                    reverse: Some(1),
                    rate: None,
                    delay: Some(10_000_000)
                },
                LinkChange { at: 50_000_000_000, link: 0, reverse: Some(1), rate: Some(10e6), delay: None },
            ]
        );

        assert_eq!(s.flows.len(), 4);
        let f = &s.flows[0];
        assert_eq!(f.name, "cubic-0");
        assert_eq!(f.kind, FlowKind::Tcp);
        assert_eq!(f.cca, "cubic");
        assert_eq!(f.start, 1_000_000_000);
        assert_eq!(f.stop, Some(90_000_000_000));
        assert_eq!(f.rtt, 100_000_000);
        assert_eq!(f.size, Some(262_000));
        let o = &f.tcp;
        assert_eq!(o.mss, 1000);
        assert_eq!(o.header_bytes, 40);
        assert_eq!(o.initial_window, 4);
        assert!(!o.sack);
        assert!(!o.delayed_ack);
        assert_eq!(o.delayed_ack_timeout, 200_000_000);
        assert_eq!(o.quickack_segments, 0);
        assert!(!o.timestamps);
        assert_eq!(o.ts_granularity, 4_000_000);
        assert_eq!(o.rcv_buf, 1 << 20);
        assert_eq!(o.wscale, Some(7));
        assert!(!o.handshake);
        assert!(o.ecn);
        assert_eq!(o.rto_min, 1_000_000_000);
        assert_eq!(o.rto_initial, 3_000_000_000);
        assert_eq!(o.rto_max, 60_000_000_000);
        assert_eq!(o.ca_counting, CaCounting::Acks);

        assert_eq!(s.flows[1].name, "bulk-0");
        assert_eq!(s.flows[2].name, "bulk-1");
        assert_eq!(s.flows[1].cca, "newreno");
        assert_eq!(s.flows[2].rtt, 80_000_000, "inherits bottleneck.rtt");

        let v = &s.flows[3];
        assert_eq!(v.name, "voip");
        assert_eq!(v.kind, FlowKind::Cbr);
        assert_eq!(v.cbr.packet_size, 200);
        assert_eq!(v.cbr.interval, 10_000_000);
        assert_eq!(v.cbr.header_bytes, 40);
    }

    #[test]
    fn defaults() {
        let s = parse(MINIMAL).unwrap();
        assert_eq!(s.duration, 10_000_000_000);
        assert_eq!(s.warmup, 0);
        assert_eq!(s.seed, 1);
        assert_eq!(s.output.bin, 100_000_000);
        assert!(!s.output.sojourn_samples && !s.output.owd_samples, "exact series only when asked");
        let b = link(&s, "bottleneck");
        assert_eq!(b.rate, 10e6);
        assert_eq!(link(&s, "bottleneck-rev").rate, 10e6);
        assert_eq!(b.rtt, 100_000_000);
        assert_eq!(b.delay, 0);
        assert_eq!(b.buffer, BufferSize::Bdp(1.0));
        assert_eq!(b.aqm, "droptail");
        assert!(!b.ecn);
        assert_eq!(b.jitter, 0);
        assert_eq!(b.loss, 0.0);
        assert!(s.topology.changes.is_empty());
        assert_eq!(s.flows.len(), 1);
        let f = &s.flows[0];
        assert_eq!(f.name, "cubic-0");
        assert_eq!(f.kind, FlowKind::Tcp);
        assert_eq!(f.cca, "cubic");
        assert!(f.cc.is_empty());
        assert_eq!(f.start, 0);
        assert_eq!(f.stop, None);
        assert_eq!(f.rtt, 100_000_000);
        assert_eq!(f.size, None);
        let o = &f.tcp;
        let d = TcpOptions::default();
        assert_eq!(o.mss, 1448);
        assert_eq!(o.header_bytes, 52);
        assert_eq!(o.initial_window, 10);
        assert!(o.sack && o.delayed_ack && o.timestamps && o.handshake && !o.ecn);
        assert_eq!(o.delayed_ack_timeout, d.delayed_ack_timeout);
        assert_eq!(o.quickack_segments, d.quickack_segments);
        assert_eq!(o.ts_granularity, d.ts_granularity);
        assert_eq!(o.rcv_buf, d.rcv_buf);
        assert_eq!(o.wscale, None);
        assert_eq!((o.rto_min, o.rto_initial, o.rto_max), (d.rto_min, d.rto_initial, d.rto_max));
        assert_eq!(o.ca_counting, CaCounting::Segments);
        assert_eq!(o.receiver_cca, None);
        assert!(o.receiver_cc.is_empty());
    }

    #[test]
    fn cbr_defaults_and_names() {
        let s = parse(&with_flow("type = \"cbr\"\n[[flows]]\ntype = \"cbr\"\nstart = \"1s\"")).unwrap();
        assert_eq!(s.flows[0].name, "cbr-0");
        assert_eq!(s.flows[1].name, "cbr-1");
        let c = &s.flows[0].cbr;
        assert_eq!((c.packet_size, c.interval, c.header_bytes), (160, 20_000_000, 28));
        assert_eq!(s.flows[0].cca, "");
        assert_eq!(s.flows[1].start, 1_000_000_000);
    }

    #[test]
    fn reverse_rate_and_rtt_defaults_follow_the_bottleneck() {
        let s = parse(&with_bottleneck("rtt = \"40ms\"")).unwrap();
        assert_eq!(s.flows[0].rtt, 40_000_000);
        assert_eq!(link(&s, "bottleneck-rev").rate, 10e6);
    }

    #[test]
    fn error_display_format() {
        let e = parse(&MINIMAL.replace("\"10Mbps\"", "\"-3\"")).unwrap_err();
        assert_eq!(e.to_string(), "s.toml: bottleneck.rate: expected a rate like \"10Mbps\", got \"-3\"");
        let dyn_err: &dyn std::error::Error = &e;
        assert!(dyn_err.to_string().starts_with("s.toml: "));
    }

    #[test]
    fn bad_rates() {
        let e = err(&MINIMAL.replace("\"10Mbps\"", "\"0Mbps\""));
        assert_eq!(e.field, "bottleneck.rate");
        assert!(e.message.contains("> 0"));
        let e = err(&MINIMAL.replace("\"10Mbps\"", "10"));
        assert_eq!(e.field, "bottleneck.rate");
        assert_eq!(e.message, "expected a rate like \"10Mbps\", got 10");
        assert_eq!(err_field(&with_bottleneck("reverse_rate = \"fast\"")), "bottleneck.reverse_rate");
    }

    #[test]
    fn missing_required() {
        let e = err("[bottleneck]\nrate = \"1Mbps\"\n[[flows]]\n");
        assert_eq!(e.field, "duration");
        assert!(e.message.contains("missing"));
        assert_eq!(err_field("duration = \"1s\"\n[[flows]]\n"), "bottleneck");
        assert_eq!(err_field("duration = \"1s\"\n[bottleneck]\n[[flows]]\n"), "bottleneck.rate");
        assert_eq!(err_field("duration = \"1s\"\n[bottleneck]\nrate = \"1Mbps\"\n"), "flows");
        assert_eq!(err_field("duration = \"1s\"\nflows = []\n[bottleneck]\nrate = \"1Mbps\"\n"), "flows");
        assert_eq!(err_field("duration = \"1s\"\n[bottleneck]\nrate = \"1Mbps\"\n[flows]\n"), "flows");
        let e = err(&with_bottleneck("[[bottleneck.changes]]\nrate = \"1Mbps\""));
        assert_eq!(e.field, "bottleneck.changes[0].at");
    }

    #[test]
    fn unknown_keys_name_the_full_path() {
        let e = err(&format!("colour = \"red\"\n{MINIMAL}"));
        assert_eq!((e.field.as_str(), e.message.as_str()), ("colour", "unknown key"));
        assert_eq!(err_field(&with_flow("ccaa = \"cubic\"")), "flows[0].ccaa");
        assert_eq!(err(&with_flow("ccaa = \"cubic\"")).to_string(), "s.toml: flows[0].ccaa: unknown key");
        assert_eq!(err_field(&with_bottleneck("bandwidth = \"1Mbps\"")), "bottleneck.bandwidth");
        assert_eq!(err_field(&format!("{MINIMAL}[output]\nbins = \"1s\"\n")), "output.bins");
        assert_eq!(
            err_field(&with_bottleneck("[[bottleneck.changes]]\nat = \"1s\"\nrate = \"1Mbps\"\nloss = 0.1")),
            "bottleneck.changes[0].loss"
        );
        let two = format!("{MINIMAL}[[flows]]\ncca = \"cubic\"\nmsss = 1000\n");
        assert_eq!(err_field(&two), "flows[1].msss");
    }

    #[test]
    fn cca_and_cc_params_are_validated() {
        let e = err(&with_flow("cca = \"vegas\""));
        assert_eq!(e.field, "flows[0].cca");
        assert!(e.message.contains("vegas"), "{}", e.message);
        let e = err(&with_flow("cca = \"cubic\"\n[flows.cc]\nbeta = 1.5"));
        assert_eq!(e.field, "flows[0].cc.beta");
        let e = err(&with_flow("cca = \"newreno\"\n[flows.cc]\nbetta = 0.5"));
        assert_eq!(e.field, "flows[0].cc.betta");
        let e = err(&with_flow("[flows.cc]\nbeta = { x = 1 }"));
        assert_eq!(e.field, "flows[0].cc.beta");
        assert!(e.message.contains("nested"));
        assert_eq!(err_field(&with_flow("cca = 5")), "flows[0].cca");
        assert_eq!(err_field(&with_flow("cc = 5")), "flows[0].cc");
    }

    #[test]
    fn cc_params_are_typed() {
        // Validation happens on a clone: the stored Params keep their values and no "used" marks.
        let s = parse(&with_flow("cca = \"cubic\"\n[flows.cc]\nbeta = 0.7")).unwrap();
        let mut expect = Params::new();
        expect.insert("beta", ParamValue::Float(0.7));
        assert_eq!(s.flows[0].cc, expect);
    }

    #[test]
    fn receiver_cc() {
        let e = err(&with_flow("receiver_cca = \"nope\""));
        assert_eq!(e.field, "flows[0].receiver_cca");
        let e = err(&with_flow("[flows.receiver_cc]\ntarget = \"60ms\""));
        assert_eq!(e.field, "flows[0].receiver_cc");
    }

    #[test]
    fn bad_buffers_and_bottleneck_values() {
        for (extra, field) in [
            ("buffer = \"lots\"", "bottleneck.buffer"),
            ("buffer = 50", "bottleneck.buffer"),
            ("buffer = \"0p\"", "bottleneck.buffer"),
            ("aqm = \"blue\"", "bottleneck.aqm"),
            ("aqm = \"codel\"\n[bottleneck.aqm_params]\ntarget = 5", "bottleneck.aqm_params.target"),
            ("ecn = \"yes\"", "bottleneck.ecn"),
            ("loss = 1.0", "bottleneck.loss"),
            ("loss = -0.1", "bottleneck.loss"),
            ("loss = \"1%\"", "bottleneck.loss"),
            ("jitter = \"-1ms\"", "bottleneck.jitter"),
            ("jitter_reorder = 1", "bottleneck.jitter_reorder"),
            ("rate_max = \"5Mbps\"", "bottleneck.rate_max"),
            ("rate_max = \"fast\"", "bottleneck.rate_max"),
            ("rtt = \"0ms\"", "bottleneck.rtt"),
            ("delay = 5", "bottleneck.delay"),
            ("delay = \"60ms\"", "bottleneck.delay"),
            ("changes = 1", "bottleneck.changes"),
            ("[[bottleneck.changes]]\nat = \"1s\"", "bottleneck.changes[0]"),
            ("[[bottleneck.changes]]\nat = \"10s\"\nrate = \"1Mbps\"", "bottleneck.changes[0].at"),
            ("[[bottleneck.changes]]\nat = \"1s\"\ndelay = \"51ms\"", "bottleneck.changes[0].delay"),
        ] {
            assert_eq!(err_field(&with_bottleneck(extra)), field, "{extra}");
        }
        let e = err(&with_bottleneck("aqm = \"blue\""));
        assert!(e.message.contains("known: droptail"), "{}", e.message);
        let e = err(&with_bottleneck("delay = 5"));
        assert_eq!(e.message, "expected a duration like \"100ms\", got 5");
        // Delay fits the default 100 ms RTT exactly.
        parse(&with_bottleneck("delay = \"50ms\"")).unwrap();
    }

    #[test]
    fn delay_error_lands_on_an_explicit_flow_rtt() {
        let e =
            err(&with_flow("rtt = \"20ms\"")
                .replace("rate = \"10Mbps\"", "rate = \"10Mbps\"\ndelay = \"20ms\""));
        assert_eq!(e.field, "flows[0].rtt");
    }

    #[test]
    fn durations_and_times() {
        let e = err(&format!("warmup = \"10s\"\n{MINIMAL}"));
        assert_eq!(e.field, "warmup");
        assert_eq!(err_field(&format!("warmup = \"11s\"\n{MINIMAL}")), "warmup");
        parse(&format!("warmup = \"9.999s\"\n{MINIMAL}")).unwrap();
        let e = err(&MINIMAL.replace("\"10s\"", "10"));
        assert_eq!(e.field, "duration");
        assert_eq!(e.message, "expected a duration like \"100ms\", got 10");
        assert_eq!(err_field(&MINIMAL.replace("\"10s\"", "\"0s\"")), "duration");
        assert_eq!(err_field(&format!("seed = -1\n{MINIMAL}")), "seed");
        assert_eq!(err_field(&format!("seed = \"1\"\n{MINIMAL}")), "seed");
        assert_eq!(err_field(&format!("name = 3\n{MINIMAL}")), "name");
        assert_eq!(err_field(&format!("{MINIMAL}[output]\nbin = \"0ms\"\n")), "output.bin");
        assert_eq!(err_field(&format!("{MINIMAL}[output]\nsojourn_samples = 1\n")), "output.sojourn_samples");
        assert_eq!(err_field(&format!("output = 3\n{MINIMAL}")), "output");
    }

    /// `output.pcap` names topology links, each once; it survives into the description.
    #[test]
    fn pcap_links_are_resolved_by_name() {
        let s = parse(&format!("{MINIMAL}[output]\npcap = [\"bottleneck-rev\", \"bottleneck\"]\n")).unwrap();
        let names: Vec<&str> = s.output.pcap.iter().map(|&l| s.topology.links[l].name.as_str()).collect();
        assert_eq!(names, ["bottleneck-rev", "bottleneck"]);
        assert_eq!(crate::describe(&s)["output"]["pcap"], serde_json::json!(names));
        assert!(parse(MINIMAL).unwrap().output.pcap.is_empty());
        assert!(crate::describe(&parse(MINIMAL).unwrap())["output"].get("pcap").is_none());
        let e = err(&format!("{MINIMAL}[output]\npcap = [\"bottleneck\", \"nope\"]\n"));
        assert_eq!(e.field, "output.pcap[1]");
        assert!(e.message.contains("unknown link \"nope\""), "{}", e.message);
        for (value, field) in [("\"bottleneck\"", "output.pcap"), ("[1]", "output.pcap[0]")] {
            assert_eq!(err_field(&format!("{MINIMAL}[output]\npcap = {value}\n")), field);
        }
        let twice = format!("{MINIMAL}[output]\npcap = [\"bottleneck\", \"bottleneck\"]\n");
        assert_eq!(err_field(&twice), "output.pcap[1]");
    }

    #[test]
    fn flow_field_errors() {
        for (extra, field) in [
            ("type = \"udp\"", "flows[0].type"),
            ("count = 0", "flows[0].count"),
            ("count = 1.5", "flows[0].count"),
            ("start = \"10s\"", "flows[0].start"),
            ("start = \"2s\"\nstop = \"2s\"", "flows[0].stop"),
            ("rtt = \"0s\"", "flows[0].rtt"),
            ("size = \"0B\"", "flows[0].size"),
            ("size = 1000", "flows[0].size"),
            ("size = \"big\"", "flows[0].size"),
            ("mss = 63", "flows[0].mss"),
            ("mss = 65001", "flows[0].mss"),
            ("initial_window = 0", "flows[0].initial_window"),
            ("initial_ssthresh = 1", "flows[0].initial_ssthresh"),
            ("initial_ssthresh = \"10\"", "flows[0].initial_ssthresh"),
            ("chunk_interval = \"2s\"", "flows[0].chunk_interval"),
            ("chunk_size = \"1KB\"\nchunk_interval = \"0s\"", "flows[0].chunk_interval"),
            (
                "chunk_size = \"1KB\"\nchunk_interval = { min = \"3s\", max = \"2s\" }",
                "flows[0].chunk_interval.max",
            ),
            ("chunk_size = \"1KB\"\nchunk_interval = { min = \"3s\" }", "flows[0].chunk_interval.max"),
            (
                "chunk_size = \"1KB\"\nchunk_interval = { min = \"3s\", every = \"2s\" }",
                "flows[0].chunk_interval.every",
            ),
            ("wscale = 15", "flows[0].wscale"),
            ("sack = 1", "flows[0].sack"),
            ("ts_granularity = \"0ms\"", "flows[0].ts_granularity"),
            ("rcv_buf = \"64\"", "flows[0].rcv_buf"),
            ("ca_counting = \"bytes\"", "flows[0].ca_counting"),
            ("rto_min = \"2s\"", "flows[0].rto_initial"),
            ("rto_max = \"100ms\"", "flows[0].rto_max"),
            ("name = \"\"", "flows[0].name"),
            ("packet_size = 100", "flows[0].packet_size"),
            ("type = \"cbr\"\ncca = \"cubic\"", "flows[0].cca"),
            ("type = \"cbr\"\nsize = \"1MB\"", "flows[0].size"),
            ("type = \"cbr\"\nmss = 1000", "flows[0].mss"),
            ("type = \"cbr\"\ninterval = \"0ms\"", "flows[0].interval"),
            ("type = \"cbr\"\npacket_size = 0", "flows[0].packet_size"),
        ] {
            assert_eq!(err_field(&with_flow(extra)), field, "{extra}");
        }
        assert!(err(&with_flow("type = \"cbr\"\ncca = \"cubic\"")).message.contains("TCP"));
        assert!(err(&with_flow("interval = \"10ms\"")).message.contains("CBR"));
        let s = parse(&with_flow("size = \"inf\"")).unwrap();
        assert_eq!(s.flows[0].size, None);
        assert!(err(&with_flow("start = 5")).message.contains("got 5"));
    }

    #[test]
    fn count_expansion_gives_unique_names() {
        let s =
            parse(&with_flow("count = 3\n[[flows]]\ncca = \"newreno\"\ncount = 2\nname = \"nr\"")).unwrap();
        let names: Vec<_> = s.flows.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["cubic-0", "cubic-1", "cubic-2", "nr-0", "nr-1"]);
        assert!(s.flows[3..].iter().all(|f| f.cca == "newreno"));

        let e = err(&with_flow("name = \"a\"\n[[flows]]\nname = \"a\""));
        assert_eq!(e.field, "flows[1].name");
        assert!(e.message.contains("duplicate"));
        // A default name colliding with an explicit one.
        let e = err(&with_flow("name = \"cubic-1\"\n[[flows]]"));
        assert_eq!(e.field, "flows[1]");
    }

    #[test]
    fn syntax_errors_give_a_line() {
        let e = err("duration = \"10s\"\n[bottleneck]\nrate = = 3\n");
        assert_eq!(e.field, "line 3");
        assert!(!e.message.contains('\n'));
        assert!(e.to_string().starts_with("s.toml: line 3: "));
    }

    #[test]
    fn overrides() {
        let text = format!("{MINIMAL}[[flows]]\ncca = \"cubic\"\n");
        let s = parse_with(
            &text,
            &["bottleneck.rate=20Mbps", "duration=30s", "flows[1].cca=newreno", "warmup = \"5s\""],
        )
        .unwrap();
        assert_eq!(link(&s, "bottleneck").rate, 20e6);
        assert_eq!(s.duration, 30_000_000_000);
        assert_eq!(s.warmup, 5_000_000_000);
        assert_eq!(s.flows[0].cca, "cubic");
        assert_eq!(s.flows[1].cca, "newreno");

        let s = parse_with(&text, &["flows.cca=newreno"]).unwrap();
        assert!(s.flows.iter().all(|f| f.cca == "newreno"));
        assert_eq!(s.flows[1].name, "newreno-1");

        let s = parse_with(&text, &["flows[0].cc.beta=0.7", "flows[1].delayed_ack=false", "seed=9"]).unwrap();
        let mut expect = Params::new();
        expect.insert("beta", ParamValue::Float(0.7));
        assert_eq!(s.flows[0].cc, expect);
        assert!(!s.flows[1].tcp.delayed_ack);
        assert_eq!(s.seed, 9);

        // Creates missing tables; inline tables and arrays parse as TOML.
        let s = parse_with(MINIMAL, &["output.bin=1s", "flows[0].cc={ beta = 0.6 }"]).unwrap();
        assert_eq!(s.output.bin, 1_000_000_000);
        assert!(!s.flows[0].cc.is_empty());
        let s = parse_with(MINIMAL, &["flows[0].size=1MB"]).unwrap();
        assert_eq!(s.flows[0].size, Some(1_000_000));
        let s = parse_with(MINIMAL, &["flows[0].size=inf"]).unwrap();
        assert_eq!(s.flows[0].size, None);
        let s = parse_with(MINIMAL, &["bottleneck.changes=[{at=\"1s\", rate=\"5Mbps\"}]"]).unwrap();
        assert_eq!(s.topology.changes.len(), 1);
    }

    #[test]
    fn override_errors() {
        let e = parse_with(MINIMAL, &["duration"]).unwrap_err();
        assert_eq!(e.field, "--set duration");
        let e = parse_with(MINIMAL, &["flows[3].cca=cubic"]).unwrap_err();
        assert_eq!(e.field, "--set flows[3].cca");
        assert!(e.message.contains("out of range"), "{}", e.message);
        assert_eq!(parse_with(MINIMAL, &["flows[x].cca=cubic"]).unwrap_err().field, "--set flows[x].cca");
        assert_eq!(parse_with(MINIMAL, &["flows[0.cca=cubic"]).unwrap_err().field, "--set flows[0.cca");
        assert_eq!(parse_with(MINIMAL, &["=3"]).unwrap_err().field, "--set ");
        assert_eq!(parse_with(MINIMAL, &["duration.x=3"]).unwrap_err().field, "--set duration.x");
        assert_eq!(
            parse_with(MINIMAL, &["bottleneck[0].rate=3"]).unwrap_err().field,
            "--set bottleneck[0].rate"
        );
        // Well-formed overrides are validated like the file: the field is the real path.
        let e = parse_with(MINIMAL, &["bottleneck.rate=-3"]).unwrap_err();
        assert_eq!(e.to_string(), "s.toml: bottleneck.rate: expected a rate like \"10Mbps\", got -3");
        let e = parse_with(MINIMAL, &["flows.ccaa=cubic"]).unwrap_err();
        assert_eq!(e.field, "flows[0].ccaa");
        let e = parse_with(MINIMAL, &["flows[0].cc.beta=1.5"]).unwrap_err();
        assert_eq!(e.field, "flows[0].cc.beta");
    }

    #[test]
    fn hostile_overrides_and_values_are_one_line_errors() {
        // 20,000 dotted parts once nested 20,000 tables and overflowed the stack.
        let key = vec!["a"; 20_000].join(".");
        let e = parse_with(MINIMAL, &[&format!("{key}=1")]).unwrap_err();
        assert!(e.message.contains("at most 16"), "{e}");
        assert!(e.field.len() < 100, "{}", e.field);
        // A date-time shows as written, not as the toml crate's private marker.
        let e = err(&format!("name = 1979-05-27T07:32:00Z\n{MINIMAL}"));
        assert_eq!(e.to_string(), "s.toml: name: expected a string, got the date-time 1979-05-27T07:32:00Z");
        // A long value is cut.
        let e = err(&format!("name = [{}]\n{MINIMAL}", vec!["1"; 10_000].join(",")));
        assert!(e.message.len() < 120, "{e}");
        // A topology written as an array of tables is named that way.
        let e = err("duration = \"1s\"\n");
        assert!(
            e.message.contains("[[links]] (links)") && e.message.contains("[bottleneck] (dumbbell)"),
            "{e}"
        );
    }

    #[test]
    fn what_cannot_carry_one_packet_is_refused() {
        let field = |set: &str| parse_with(MINIMAL, &[set]).unwrap_err().field;
        assert_eq!(field("bottleneck.rate=0.0000001bps"), "bottleneck.rate");
        assert_eq!(field("bottleneck.rate=100bps"), "bottleneck.rate");
        assert!(parse_with(MINIMAL, &["bottleneck.rate=512bps"]).is_ok());
        assert_eq!(err_field(&with_bottleneck("reverse_rate = \"100bps\"")), "bottleneck.reverse_rate");
        assert_eq!(err_field(&with_flow("rcv_buf = \"1B\"")), "flows[0].rcv_buf");
        assert!(parse(&with_flow("rcv_buf = \"1448B\"")).is_ok());
    }

    #[test]
    fn seed_argument_overrides_the_file() {
        let text = format!("seed = 5\n{MINIMAL}");
        assert_eq!(parse_str(&text, SRC, &[], None).unwrap().seed, 5);
        assert_eq!(parse_str(&text, SRC, &[], Some(42)).unwrap().seed, 42);
        assert_eq!(parse_str(&text, SRC, &[], Some(u64::MAX)).unwrap().seed, u64::MAX);
        assert_eq!(parse_str(MINIMAL, SRC, &[], Some(0)).unwrap().seed, 0);
    }

    #[test]
    fn parse_table_accepts_a_prebuilt_table() {
        let table: Table = MINIMAL.parse().unwrap();
        let s = parse_table(table, "inline", &[], Some(3)).unwrap();
        assert_eq!(s.seed, 3);
        assert_eq!(s.flows.len(), 1);
    }

    #[test]
    fn example_files_parse() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut n = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) == Some("toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                if let Err(e) = parse_str(&text, &path.display().to_string(), &[], None) {
                    panic!("{e}");
                }
                n += 1;
            }
        }
        assert!(n > 0, "no example scenarios found in {dir}");
    }
}
