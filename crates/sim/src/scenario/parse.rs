//! TOML scenario files → validated [`Scenario`].
//!
//! The raw `toml::Table` is walked by hand (no serde derive) so that every error names the exact
//! dotted field (`flows[0].cc.beta`, `bottleneck.changes[1].at`) and unknown keys are rejected.
//! `--set key=value` overrides are applied to the raw table before validation. The schema is
//! documented in `docs/scenarios.md`.

use std::collections::HashMap;
use std::fmt;

use ccbench_cc::{CaCounting, ParamError, ParamValue, Params};
use toml::{Table, Value};

use super::config::{
    Aqm, Bottleneck, BufferSize, CbrOptions, Flow, FlowKind, LinkChange, Nanos, Output, Scenario, TcpOptions,
};
use super::units::{self, format_duration};

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

/// Internal error without the source label.
#[derive(Debug)]
struct Fe {
    field: String,
    message: String,
}

type R<T> = Result<T, Fe>;

fn fe(field: impl Into<String>, message: impl Into<String>) -> Fe {
    Fe { field: field.into(), message: message.into() }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Parse a scenario from TOML text. `source` labels errors (usually the file name); `overrides`
/// are `key=value` strings (CLI `--set`) applied before validation; `seed` replaces the file's.
pub fn parse_str(
    text: &str,
    source: &str,
    overrides: &[String],
    seed: Option<u64>,
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
    parse_table(table, source, overrides, seed)
}

/// Validate an already-parsed TOML table (see [`parse_str`]).
pub fn parse_table(
    mut table: Table,
    source: &str,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    let with_source =
        |e: Fe| ScenarioError { source: source.to_string(), field: e.field, message: e.message };
    for spec in overrides {
        apply_override(&mut table, spec).map_err(with_source)?;
    }
    let mut scenario = build(&table).map_err(with_source)?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    Ok(scenario)
}

fn one_line(s: &str) -> String {
    s.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

// ---------------------------------------------------------------------------------------------
// Overrides
// ---------------------------------------------------------------------------------------------

struct Seg {
    name: String,
    index: Option<usize>,
}

fn parse_path(key: &str) -> Result<Vec<Seg>, String> {
    let mut segs = Vec::new();
    for part in key.split('.') {
        let part = part.trim();
        let (name, index) = match part.find('[') {
            Some(open) => {
                let inner = part[open + 1..]
                    .strip_suffix(']')
                    .ok_or_else(|| format!("malformed index in \"{part}\" (expected name[N])"))?;
                let idx: usize = inner.trim().parse().map_err(|_| {
                    format!("bad index \"{inner}\" in \"{part}\" (expected a non-negative integer)")
                })?;
                (&part[..open], Some(idx))
            }
            None => (part, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(format!(
                "malformed key \"{key}\" (expected a dotted path like bottleneck.rate or flows[0].cca)"
            ));
        }
        segs.push(Seg { name: name.to_string(), index });
    }
    Ok(segs)
}

/// A TOML value if `raw` is one (number, boolean, quoted string, inline array or table),
/// otherwise the bare string.
fn parse_override_value(raw: &str) -> Value {
    if let Ok(t) = format!("v = {raw}").parse::<Table>() {
        if t.len() == 1 {
            match t.get("v") {
                // `inf` / `nan` are TOML floats, but as overrides they mean the string ("size=inf").
                Some(Value::Float(f)) if !f.is_finite() => {}
                Some(v) => return v.clone(),
                None => {}
            }
        }
    }
    Value::String(raw.to_string())
}

fn apply_override(table: &mut Table, spec: &str) -> R<()> {
    let Some((key, raw)) = spec.split_once('=') else {
        return Err(fe(format!("--set {}", spec.trim()), "expected key=value"));
    };
    let key = key.trim();
    let field = format!("--set {key}");
    if key.is_empty() {
        return Err(fe(field, "expected key=value, the key is empty"));
    }
    let segs = parse_path(key).map_err(|m| fe(&field, m))?;
    let value = parse_override_value(raw.trim());
    set_path(table, &segs, &value, "").map_err(|m| fe(&field, m))
}

fn set_path(t: &mut Table, segs: &[Seg], value: &Value, prefix: &str) -> Result<(), String> {
    let seg = &segs[0];
    let rest = &segs[1..];
    let here = join(prefix, &seg.name);
    match seg.index {
        Some(idx) => {
            let arr = match t.get_mut(&seg.name) {
                Some(Value::Array(a)) => a,
                Some(_) => return Err(format!("{here} is not an array, cannot index it")),
                None => return Err(format!("index {idx} out of range ({here} does not exist)")),
            };
            if idx >= arr.len() {
                return Err(format!("index {idx} out of range ({here} has {} entries)", arr.len()));
            }
            let here = format!("{here}[{idx}]");
            if rest.is_empty() {
                arr[idx] = value.clone();
                return Ok(());
            }
            match &mut arr[idx] {
                Value::Table(sub) => set_path(sub, rest, value, &here),
                _ => Err(format!("{here} is not a table")),
            }
        }
        None => {
            if rest.is_empty() {
                t.insert(seg.name.clone(), value.clone());
                return Ok(());
            }
            if !t.contains_key(&seg.name) {
                t.insert(seg.name.clone(), Value::Table(Table::new()));
            }
            match t.get_mut(&seg.name) {
                Some(Value::Table(sub)) => set_path(sub, rest, value, &here),
                // `flows.cca=x`: apply to every entry of an array of tables.
                Some(Value::Array(arr)) if !arr.is_empty() && arr.iter().all(Value::is_table) => {
                    for (i, item) in arr.iter_mut().enumerate() {
                        if let Value::Table(sub) = item {
                            set_path(sub, rest, value, &format!("{here}[{i}]"))?;
                        }
                    }
                    Ok(())
                }
                _ => Err(format!("{here} is not a table")),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Typed getters: each returns Ok(None) when the key is absent.
// ---------------------------------------------------------------------------------------------

fn check_keys(t: &Table, path: &str, allowed: &[&str]) -> R<()> {
    match t.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(fe(join(path, k), "unknown key")),
        None => Ok(()),
    }
}

fn get_table<'a>(t: &'a Table, path: &str, key: &str) -> R<Option<&'a Table>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Table(sub)) => Ok(Some(sub)),
        Some(v) => Err(fe(join(path, key), format!("expected a table, got {v}"))),
    }
}

fn get_str<'a>(t: &'a Table, path: &str, key: &str) -> R<Option<&'a str>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(fe(join(path, key), format!("expected a string, got {v}"))),
    }
}

fn get_bool(t: &Table, path: &str, key: &str) -> R<Option<bool>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Boolean(b)) => Ok(Some(*b)),
        Some(v) => Err(fe(join(path, key), format!("expected true or false, got {v}"))),
    }
}

fn get_int(t: &Table, path: &str, key: &str, min: i64, max: i64) -> R<Option<i64>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::Integer(i)) => {
            if *i < min || *i > max {
                let range = if max == i64::MAX {
                    format!("must be at least {min}")
                } else {
                    format!("must be between {min} and {max}")
                };
                Err(fe(join(path, key), format!("{range}, got {i}")))
            } else {
                Ok(Some(*i))
            }
        }
        Some(v) => Err(fe(join(path, key), format!("expected an integer, got {v}"))),
    }
}

/// A unit-carrying string parsed by `parse`; anything else is `{hint}, got {value}`.
fn get_unit<T>(
    t: &Table,
    path: &str,
    key: &str,
    hint: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> R<Option<T>> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => parse(s).map(Some).map_err(|m| fe(join(path, key), m)),
        Some(v) => Err(fe(join(path, key), format!("{hint}, got {v}"))),
    }
}

fn get_duration(t: &Table, path: &str, key: &str) -> R<Option<Nanos>> {
    if let Some(Value::Integer(0)) = t.get(key) {
        return Ok(Some(0));
    }
    get_unit(t, path, key, "expected a duration like \"100ms\"", units::parse_duration)
}

fn get_positive_duration(t: &Table, path: &str, key: &str) -> R<Option<Nanos>> {
    match get_duration(t, path, key)? {
        Some(0) => Err(fe(join(path, key), "must be > 0")),
        other => Ok(other),
    }
}

fn get_rate(t: &Table, path: &str, key: &str) -> R<Option<f64>> {
    get_unit(t, path, key, "expected a rate like \"10Mbps\"", units::parse_rate)
}

fn get_size(t: &Table, path: &str, key: &str) -> R<Option<u64>> {
    get_unit(t, path, key, "expected a size like \"1MB\"", units::parse_size)
}

fn get_probability(t: &Table, path: &str, key: &str) -> R<Option<f64>> {
    let v = match t.get(key) {
        None => return Ok(None),
        Some(Value::Float(f)) => *f,
        Some(Value::Integer(i)) => *i as f64,
        Some(v) => return Err(fe(join(path, key), format!("expected a probability in [0, 1), got {v}"))),
    };
    if !(0.0..1.0).contains(&v) {
        return Err(fe(join(path, key), format!("expected a probability in [0, 1), got {v}")));
    }
    Ok(Some(v))
}

fn required<T>(v: Option<T>, field: impl Into<String>, example: &str) -> R<T> {
    v.ok_or_else(|| fe(field, format!("missing required key (e.g. {example})")))
}

/// `[flows.cc]`-style table → Params. Nested tables, arrays and datetimes are errors.
fn get_params(t: &Table, path: &str, key: &str) -> R<Params> {
    let mut params = Params::new();
    let Some(sub) = get_table(t, path, key)? else {
        return Ok(params);
    };
    let here = join(path, key);
    for (k, v) in sub {
        let value = match v {
            Value::Float(f) => ParamValue::Float(*f),
            Value::Integer(i) => ParamValue::Int(*i),
            Value::Boolean(b) => ParamValue::Bool(*b),
            Value::String(s) => ParamValue::Str(s.clone()),
            Value::Table(_) => return Err(fe(join(&here, k), "nested tables are not allowed here")),
            Value::Array(_) => return Err(fe(join(&here, k), "arrays are not allowed here")),
            Value::Datetime(_) => {
                return Err(fe(join(&here, k), "expected a number, boolean or string, got a date/time"))
            }
        };
        params.insert(k.clone(), value);
    }
    Ok(params)
}

// ---------------------------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------------------------

/// Most time-series bins a run may have.
const MAX_BINS: u64 = 1_000_000;

const TOP_KEYS: &[&str] = &["name", "duration", "warmup", "seed", "bottleneck", "flows", "output"];
const OUTPUT_KEYS: &[&str] = &["bin", "sojourn_samples"];
const BOTTLENECK_KEYS: &[&str] =
    &["rate", "reverse_rate", "rtt", "delay", "buffer", "aqm", "ecn", "jitter", "loss", "changes"];
const CHANGE_KEYS: &[&str] = &["at", "rate", "delay"];
const FLOW_COMMON_KEYS: &[&str] = &["name", "type", "count", "start", "stop", "rtt", "header_bytes"];
const FLOW_TCP_KEYS: &[&str] = &[
    "cca",
    "cc",
    "size",
    "mss",
    "initial_window",
    "sack",
    "delayed_ack",
    "delayed_ack_timeout",
    "quickack_segments",
    "timestamps",
    "ts_granularity",
    "rcv_buf",
    "wscale",
    "handshake",
    "ecn",
    "rto_min",
    "rto_initial",
    "rto_max",
    "ca_counting",
    "receiver_cca",
    "receiver_cc",
];
const FLOW_CBR_KEYS: &[&str] = &["packet_size", "interval"];
const AQMS: &[&str] = &["droptail"];
const DEFAULT_RTT: Nanos = 100_000_000;
const DEFAULT_BIN: Nanos = 100_000_000;

fn build(t: &Table) -> R<Scenario> {
    check_keys(t, "", TOP_KEYS)?;
    get_str(t, "", "name")?;
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
    let seed = get_int(t, "", "seed", 0, i64::MAX)?.map_or(1, |s| s as u64);
    let output = build_output(get_table(t, "", "output")?)?;
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
    let bt = required(get_table(t, "", "bottleneck")?, "bottleneck", "[bottleneck] with rate = \"10Mbps\"")?;
    let bottleneck = build_bottleneck(bt, duration)?;
    let flows = build_flows(t.get("flows"), &bottleneck, duration)?;
    Ok(Scenario { duration, warmup, seed, bottleneck, flows, output })
}

fn build_output(t: Option<&Table>) -> R<Output> {
    let Some(t) = t else {
        return Ok(Output { bin: DEFAULT_BIN, sojourn_samples: true });
    };
    let p = "output";
    check_keys(t, p, OUTPUT_KEYS)?;
    Ok(Output {
        bin: get_positive_duration(t, p, "bin")?.unwrap_or(DEFAULT_BIN),
        sojourn_samples: get_bool(t, p, "sojourn_samples")?.unwrap_or(true),
    })
}

fn build_bottleneck(t: &Table, duration: Nanos) -> R<Bottleneck> {
    let p = "bottleneck";
    check_keys(t, p, BOTTLENECK_KEYS)?;
    let rate = required(get_rate(t, p, "rate")?, "bottleneck.rate", "rate = \"10Mbps\"")?;
    let reverse_rate = get_rate(t, p, "reverse_rate")?.unwrap_or(rate);
    let rtt = get_positive_duration(t, p, "rtt")?.unwrap_or(DEFAULT_RTT);
    let delay = get_duration(t, p, "delay")?.unwrap_or(0);
    let buffer = get_unit(
        t,
        p,
        "buffer",
        "expected a buffer size like \"50p\", \"64KB\", \"30ms\" or \"0.5bdp\"",
        units::parse_buffer,
    )?
    .unwrap_or(BufferSize::Bdp(1.0));
    let aqm = match get_str(t, p, "aqm")? {
        None => Aqm::DropTail,
        Some(s) if s.eq_ignore_ascii_case("droptail") => Aqm::DropTail,
        Some(s) => {
            return Err(fe("bottleneck.aqm", format!("unknown AQM \"{s}\" (known: {})", AQMS.join(", "))))
        }
    };
    let ecn = get_bool(t, p, "ecn")?.unwrap_or(false);
    let jitter = get_duration(t, p, "jitter")?.unwrap_or(0);
    let loss = get_probability(t, p, "loss")?.unwrap_or(0.0);

    let mut changes = Vec::new();
    match t.get("changes") {
        None => {}
        Some(Value::Array(items)) => {
            for (j, item) in items.iter().enumerate() {
                let cp = format!("bottleneck.changes[{j}]");
                let Value::Table(ct) = item else {
                    return Err(fe(cp, format!("expected a table ([[bottleneck.changes]]), got {item}")));
                };
                check_keys(ct, &cp, CHANGE_KEYS)?;
                let at = required(get_duration(ct, &cp, "at")?, join(&cp, "at"), "at = \"30s\"")?;
                if at >= duration {
                    return Err(fe(
                        join(&cp, "at"),
                        format!(
                            "must be less than duration ({}), got {}",
                            format_duration(duration),
                            format_duration(at)
                        ),
                    ));
                }
                let rate = get_rate(ct, &cp, "rate")?;
                let delay = get_duration(ct, &cp, "delay")?;
                if rate.is_none() && delay.is_none() {
                    return Err(fe(cp, "a change needs rate and/or delay"));
                }
                changes.push(LinkChange { at, rate, delay });
            }
        }
        Some(v) => {
            return Err(fe(
                "bottleneck.changes",
                format!("expected an array of tables ([[bottleneck.changes]]), got {v}"),
            ))
        }
    }
    // Stable: changes at the same instant keep their file order.
    changes.sort_by_key(|c| c.at);

    Ok(Bottleneck { rate, reverse_rate, rtt, delay, buffer, aqm, ecn, jitter, loss, changes })
}

fn map_param_error(e: ParamError, path: &str, name_key: &str, table_key: &str) -> Fe {
    if e.key == name_key {
        fe(join(path, name_key), e.message)
    } else {
        fe(join(&join(path, table_key), &e.key), e.message)
    }
}

fn build_flows(v: Option<&Value>, b: &Bottleneck, duration: Nanos) -> R<Vec<Flow>> {
    let entries = match v {
        None => return Err(fe("flows", "at least one [[flows]] entry is required")),
        Some(Value::Array(a)) if a.is_empty() => {
            return Err(fe("flows", "at least one [[flows]] entry is required"))
        }
        Some(Value::Array(a)) => a,
        Some(v) => return Err(fe("flows", format!("expected an array of tables ([[flows]]), got {v}"))),
    };
    let mut flows = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    for (i, entry) in entries.iter().enumerate() {
        let p = format!("flows[{i}]");
        let Value::Table(ft) = entry else {
            return Err(fe(p, format!("expected a table ([[flows]]), got {entry}")));
        };
        let (template, count, explicit_name, rtt_explicit) = build_flow(ft, &p, b, duration)?;
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
            check_delay(b, &p, template.rtt, rtt_explicit)?;
            flows.push(Flow { name, ..template.clone() });
        }
    }
    for (j, c) in b.changes.iter().enumerate() {
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
    Ok(flows)
}

/// The bottleneck link's own propagation delay is part of every flow's RTT.
fn check_delay(b: &Bottleneck, p: &str, rtt: Nanos, rtt_explicit: bool) -> R<()> {
    let two = b.delay.saturating_mul(2);
    if two <= rtt {
        return Ok(());
    }
    if rtt_explicit {
        Err(fe(
            join(p, "rtt"),
            format!(
                "must be at least 2 × bottleneck.delay ({}), got {}",
                format_duration(two),
                format_duration(rtt)
            ),
        ))
    } else {
        Err(fe(
            "bottleneck.delay",
            format!(
                "2 × delay ({}) exceeds the RTT of {p} ({}, from bottleneck.rtt)",
                format_duration(two),
                format_duration(rtt)
            ),
        ))
    }
}

/// One `[[flows]]` entry → (flow with a placeholder name, count, explicit name, rtt given?).
fn build_flow(t: &Table, p: &str, b: &Bottleneck, duration: Nanos) -> R<(Flow, usize, Option<String>, bool)> {
    let kind = match get_str(t, p, "type")? {
        None | Some("tcp") => FlowKind::Tcp,
        Some("cbr") => FlowKind::Cbr,
        Some(other) => {
            return Err(fe(join(p, "type"), format!("expected \"tcp\" or \"cbr\", got \"{other}\"")))
        }
    };
    for key in t.keys() {
        let k = key.as_str();
        let ok = FLOW_COMMON_KEYS.contains(&k)
            || (kind == FlowKind::Tcp && FLOW_TCP_KEYS.contains(&k))
            || (kind == FlowKind::Cbr && FLOW_CBR_KEYS.contains(&k));
        if ok {
            continue;
        }
        let msg = if FLOW_TCP_KEYS.contains(&k) {
            "only allowed for TCP flows (this flow has type = \"cbr\")"
        } else if FLOW_CBR_KEYS.contains(&k) {
            "only allowed for CBR flows (add type = \"cbr\")"
        } else {
            "unknown key"
        };
        return Err(fe(join(p, k), msg));
    }

    let explicit_name = match get_str(t, p, "name")? {
        Some(n) if n.trim().is_empty() => return Err(fe(join(p, "name"), "must not be empty")),
        Some(n) => Some(n.to_string()),
        None => None,
    };
    let count = get_int(t, p, "count", 1, 1_000_000)?.unwrap_or(1) as usize;
    let start = get_duration(t, p, "start")?.unwrap_or(0);
    if start >= duration {
        return Err(fe(
            join(p, "start"),
            format!(
                "must be less than duration ({}), got {}",
                format_duration(duration),
                format_duration(start)
            ),
        ));
    }
    let stop = get_duration(t, p, "stop")?;
    if let Some(stop) = stop {
        if stop <= start {
            return Err(fe(
                join(p, "stop"),
                format!("must be after start ({}), got {}", format_duration(start), format_duration(stop)),
            ));
        }
    }
    let rtt_explicit = t.contains_key("rtt");
    let rtt = get_positive_duration(t, p, "rtt")?.unwrap_or(b.rtt);

    let mut flow = Flow {
        name: String::new(),
        kind: kind.clone(),
        cca: String::new(),
        cc: Params::new(),
        start,
        stop,
        rtt,
        size: None,
        tcp: TcpOptions::default(),
        cbr: CbrOptions::default(),
    };

    match kind {
        FlowKind::Tcp => {
            flow.cca = get_str(t, p, "cca")?.unwrap_or("cubic").to_string();
            flow.cc = get_params(t, p, "cc")?;
            ccbench_cc::build_controller(&flow.cca, &flow.cc.clone())
                .map_err(|e| map_param_error(e, p, "cca", "cc"))?;
            flow.size = match t.get("size") {
                None => None,
                Some(_) => get_unit(
                    t,
                    p,
                    "size",
                    "expected a size like \"1MB\" or \"inf\"",
                    units::parse_size_or_inf,
                )?
                .flatten(),
            };
            flow.tcp = build_tcp(t, p)?;
        }
        FlowKind::Cbr => {
            let c = &mut flow.cbr;
            if let Some(v) = get_int(t, p, "packet_size", 1, 65_507)? {
                c.packet_size = v as u32;
            }
            if let Some(v) = get_positive_duration(t, p, "interval")? {
                c.interval = v;
            }
            if let Some(v) = get_int(t, p, "header_bytes", 0, 65_535)? {
                c.header_bytes = v as u32;
            }
        }
    }
    Ok((flow, count, explicit_name, rtt_explicit))
}

fn build_tcp(t: &Table, p: &str) -> R<TcpOptions> {
    let mut o = TcpOptions::default();
    if let Some(v) = get_int(t, p, "mss", 64, 65_000)? {
        o.mss = v as u32;
    }
    if let Some(v) = get_int(t, p, "header_bytes", 0, 65_535)? {
        o.header_bytes = v as u32;
    }
    if let Some(v) = get_int(t, p, "initial_window", 1, 1_000_000)? {
        o.initial_window = v as u32;
    }
    if let Some(v) = get_bool(t, p, "sack")? {
        o.sack = v;
    }
    if let Some(v) = get_bool(t, p, "delayed_ack")? {
        o.delayed_ack = v;
    }
    if let Some(v) = get_positive_duration(t, p, "delayed_ack_timeout")? {
        o.delayed_ack_timeout = v;
    }
    if let Some(v) = get_int(t, p, "quickack_segments", 0, 1_000_000)? {
        o.quickack_segments = v as u32;
    }
    if let Some(v) = get_bool(t, p, "timestamps")? {
        o.timestamps = v;
    }
    if let Some(v) = get_positive_duration(t, p, "ts_granularity")? {
        o.ts_granularity = v;
    }
    if let Some(v) = get_size(t, p, "rcv_buf")? {
        o.rcv_buf = v;
    }
    if let Some(v) = get_int(t, p, "wscale", 0, 14)? {
        o.wscale = Some(v as u8);
    }
    if let Some(v) = get_bool(t, p, "handshake")? {
        o.handshake = v;
    }
    if let Some(v) = get_bool(t, p, "ecn")? {
        o.ecn = v;
    }
    if let Some(v) = get_positive_duration(t, p, "rto_min")? {
        o.rto_min = v;
    }
    if let Some(v) = get_positive_duration(t, p, "rto_initial")? {
        o.rto_initial = v;
    }
    if let Some(v) = get_positive_duration(t, p, "rto_max")? {
        o.rto_max = v;
    }
    if o.rto_max < o.rto_min {
        return Err(fe(
            join(p, "rto_max"),
            format!(
                "must be at least rto_min ({}), got {}",
                format_duration(o.rto_min),
                format_duration(o.rto_max)
            ),
        ));
    }
    if o.rto_initial < o.rto_min || o.rto_initial > o.rto_max {
        return Err(fe(
            join(p, "rto_initial"),
            format!(
                "must lie between rto_min ({}) and rto_max ({}), got {}",
                format_duration(o.rto_min),
                format_duration(o.rto_max),
                format_duration(o.rto_initial)
            ),
        ));
    }
    o.ca_counting = match get_str(t, p, "ca_counting")? {
        None | Some("segments") => CaCounting::Segments,
        Some("acks") => CaCounting::Acks,
        Some(other) => {
            return Err(fe(
                join(p, "ca_counting"),
                format!("expected \"segments\" or \"acks\", got \"{other}\""),
            ))
        }
    };
    o.receiver_cca = get_str(t, p, "receiver_cca")?.map(str::to_string);
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
    use super::*;

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

        let b = &s.bottleneck;
        assert_eq!(b.rate, 20e6);
        assert_eq!(b.reverse_rate, 1e6);
        assert_eq!(b.rtt, 80_000_000);
        assert_eq!(b.delay, 5_000_000);
        assert_eq!(b.buffer, BufferSize::Bdp(0.5));
        assert_eq!(b.aqm, Aqm::DropTail);
        assert!(b.ecn);
        assert_eq!(b.jitter, 1_000_000);
        assert_eq!(b.loss, 0.01);
        // Sorted by time.
        assert_eq!(
            b.changes,
            vec![
                LinkChange { at: 30_000_000_000, rate: None, delay: Some(10_000_000) },
                LinkChange { at: 50_000_000_000, rate: Some(10e6), delay: None },
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
        assert!(s.output.sojourn_samples);
        let b = &s.bottleneck;
        assert_eq!(b.rate, 10e6);
        assert_eq!(b.reverse_rate, 10e6);
        assert_eq!(b.rtt, 100_000_000);
        assert_eq!(b.delay, 0);
        assert_eq!(b.buffer, BufferSize::Bdp(1.0));
        assert_eq!(b.aqm, Aqm::DropTail);
        assert!(!b.ecn);
        assert_eq!(b.jitter, 0);
        assert_eq!(b.loss, 0.0);
        assert!(b.changes.is_empty());
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
        assert_eq!(s.bottleneck.reverse_rate, 10e6);
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
            ("aqm = \"red\"", "bottleneck.aqm"),
            ("ecn = \"yes\"", "bottleneck.ecn"),
            ("loss = 1.0", "bottleneck.loss"),
            ("loss = -0.1", "bottleneck.loss"),
            ("loss = \"1%\"", "bottleneck.loss"),
            ("jitter = \"-1ms\"", "bottleneck.jitter"),
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
        let e = err(&with_bottleneck("aqm = \"red\""));
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
        assert_eq!(s.bottleneck.rate, 20e6);
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
        assert_eq!(s.bottleneck.changes.len(), 1);
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
