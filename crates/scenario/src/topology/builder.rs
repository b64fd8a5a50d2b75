//! What every topology generator shares: reading a link's properties from a table, and a
//! builder that names, checks and stores directional links.

use std::collections::HashMap;
use std::sync::Arc;

use ccbench_link::DeliveryTrace;

use ccbench_aqm::{build_queue, Limit, QueueConfig};
use toml::{Table, Value};

use crate::config::LinkTrace;
use crate::config::{TokenBucket, DEFAULT_LINE_RATE};
use crate::fields::{
    check_keys, fe, get_bool, get_duration, get_params, get_positive_duration, get_probability, get_rate,
    get_size, get_str, get_unit, join, map_param_error, required, shown, R,
};
use crate::units::{self, format_duration};
use crate::{BufferSize, LinkChange, LinkSpec, Nanos, Params, Topology};

/// The RTT `bdp` buffers refer to when a link gives none.
pub const DEFAULT_RTT: Nanos = 100_000_000;

/// Keys of a link's properties, accepted by every link-like table.
pub const PROP_KEYS: &[&str] = &[
    "rate",
    "rate_max",
    "delay",
    "rtt",
    "buffer",
    "aqm",
    "aqm_params",
    "ecn",
    "jitter",
    "jitter_reorder",
    "loss",
    "burst",
    "line_rate",
    "trace",
];
/// Keys of a `reverse` table: what the other direction may set differently (it shares `delay`).
pub const REVERSE_KEYS: &[&str] = &[
    "rate",
    "rate_max",
    "buffer",
    "aqm",
    "aqm_params",
    "ecn",
    "jitter",
    "jitter_reorder",
    "loss",
    "burst",
    "line_rate",
    "trace",
];
const CHANGE_KEYS: &[&str] = &["at", "rate", "delay"];

/// One direction's properties as written, before the link is placed between nodes.
#[derive(Clone, Debug)]
pub struct LinkProps {
    pub rate: f64,
    pub delay: Nanos,
    pub rtt: Nanos,
    pub buffer: BufferSize,
    pub aqm: String,
    pub aqm_params: Params,
    pub ecn: bool,
    pub jitter: Nanos,
    /// Jitter may reorder packets (each packet's extra delay drawn independently).
    pub jitter_reorder: bool,
    /// Largest per-packet service rate: each packet's drawn uniformly from [rate, rate_max].
    pub rate_max: Option<f64>,
    pub loss: f64,
    /// `burst` (and `line_rate`): a token-bucket shaper ([`TokenBucket`]).
    pub shaper: Option<TokenBucket>,
    /// `trace`: a delivery trace that paces the link ([`LinkTrace`]).
    pub trace: Option<LinkTrace>,
    /// Where errors about this direction's queue land (`links[0]`, `bottleneck`, …).
    pub field: String,
}

/// Read a link's properties from table `t` at `p` (`rate` is required unless a `trace` gives it).
pub fn parse_props(t: &Table, p: &str) -> R<LinkProps> {
    let trace = get_trace(t, p)?;
    let rate = match &trace {
        Some(tr) => tr.trace.mean_rate(),
        None => required(get_rate(t, p, "rate")?, join(p, "rate"), "rate = \"10Mbps\"")?,
    };
    let aqm = get_str(t, p, "aqm")?.unwrap_or("droptail").to_ascii_lowercase();
    Ok(LinkProps {
        rate,
        delay: get_duration(t, p, "delay")?.unwrap_or(0),
        rtt: get_positive_duration(t, p, "rtt")?.unwrap_or(DEFAULT_RTT),
        buffer: get_buffer(t, p)?.unwrap_or(BufferSize::Bdp(1.0)),
        ecn: get_bool(t, p, "ecn")?.unwrap_or_else(|| ccbench_aqm::marks_by_default(&aqm)),
        aqm,
        aqm_params: get_params(t, p, "aqm_params")?,
        jitter: get_duration(t, p, "jitter")?.unwrap_or(0),
        jitter_reorder: get_bool(t, p, "jitter_reorder")?.unwrap_or(false),
        rate_max: get_rate_max(t, p, rate)?,
        loss: get_probability(t, p, "loss")?.unwrap_or(0.0),
        shaper: get_shaper(t, p, rate)?,
        trace,
        field: p.to_string(),
    })
    .and_then(|props| check_pacing(t, p, props))
}

/// One way of pacing at most: a token bucket, a rate spread and a trace exclude each other, and
/// a trace-driven link takes its rate from the trace.
fn check_pacing(t: &Table, p: &str, props: LinkProps) -> R<LinkProps> {
    if props.shaper.is_some() && props.rate_max.is_some() {
        return Err(fe(
            join(p, "burst"),
            "a token bucket paces at rate: it cannot be combined with rate_max",
        ));
    }
    if props.trace.is_some() {
        if let Some(key) = ["rate", "rate_max", "burst", "line_rate"].into_iter().find(|k| t.contains_key(*k))
        {
            return Err(fe(
                join(p, key),
                "a trace-driven link is paced by its trace (its rate is the trace's mean)",
            ));
        }
    }
    Ok(props)
}

/// `trace`: a mahimahi packet-delivery trace file, read and checked now.
fn get_trace(t: &Table, p: &str) -> R<Option<LinkTrace>> {
    let Some(path) = get_str(t, p, "trace")? else {
        return Ok(None);
    };
    let field = join(p, "trace");
    let text = ccbench_files::read_text(std::path::Path::new(path), ccbench_files::InputKind::TRACE)
        .map_err(|e| fe(&field, format!("cannot read {e}")))?;
    let trace = DeliveryTrace::parse(&text).map_err(|e| fe(&field, format!("{path}: {e}")))?;
    Ok(Some(LinkTrace { path: path.to_string(), trace: Arc::new(trace) }))
}

/// Smallest bucket: one full Ethernet frame, or no packet could ever leave (Linux refuses
/// such a `tbf` too).
const MIN_BURST: u64 = 1514;

/// `burst` (bytes) and `line_rate` (above `rate`; default Gigabit Ethernet): a token bucket.
fn get_shaper(t: &Table, p: &str, rate: f64) -> R<Option<TokenBucket>> {
    let burst = get_size(t, p, "burst")?;
    let line_rate = get_rate(t, p, "line_rate")?;
    let Some(burst) = burst else {
        return match line_rate {
            Some(_) => {
                Err(fe(join(p, "line_rate"), "needs burst (a token bucket's size, e.g. burst = \"15KB\")"))
            }
            None => Ok(None),
        };
    };
    if burst < MIN_BURST {
        return Err(fe(join(p, "burst"), format!("must hold a full frame ({MIN_BURST} bytes), got {burst}")));
    }
    let line_rate = line_rate.unwrap_or(DEFAULT_LINE_RATE.max(rate * 2.0));
    if line_rate <= rate || line_rate.is_infinite() {
        return Err(fe(
            join(p, "line_rate"),
            format!("must be a finite rate above rate ({} Mbps), got {} Mbps", rate / 1e6, line_rate / 1e6),
        ));
    }
    Ok(Some(TokenBucket { burst, line_rate }))
}

/// `rate_max`, which must exceed `rate`.
fn get_rate_max(t: &Table, p: &str, rate: f64) -> R<Option<f64>> {
    match get_rate(t, p, "rate_max")? {
        Some(max) if max <= rate || max.is_infinite() => Err(fe(
            join(p, "rate_max"),
            format!("must be a finite rate above rate ({} Mbps), got {} Mbps", rate / 1e6, max / 1e6),
        )),
        max => Ok(max),
    }
}

/// The other direction of a bidirectional link: the forward direction's rate, buffer and queue
/// unless `reverse` (at `p`) says otherwise; no loss, no jitter and no shaper unless given.
pub fn parse_reverse(t: Option<&Table>, p: &str, fwd: &LinkProps) -> R<LinkProps> {
    let mut r = LinkProps {
        jitter: 0,
        jitter_reorder: false,
        rate_max: None,
        loss: 0.0,
        shaper: None,
        trace: None,
        field: p.to_string(),
        ..fwd.clone()
    };
    let Some(t) = t else {
        return Ok(r);
    };
    check_keys(t, p, REVERSE_KEYS)?;
    r.trace = get_trace(t, p)?;
    if let Some(tr) = &r.trace {
        r.rate = tr.trace.mean_rate();
    } else if let Some(rate) = get_rate(t, p, "rate")? {
        r.rate = rate;
    }
    r.shaper = get_shaper(t, p, r.rate)?;
    if let Some(b) = get_buffer(t, p)? {
        r.buffer = b;
    }
    if let Some(aqm) = get_str(t, p, "aqm")? {
        r.aqm = aqm.to_ascii_lowercase();
        r.aqm_params = Params::new();
        // Another queue, another default for marking.
        r.ecn = ccbench_aqm::marks_by_default(&r.aqm);
    }
    if t.contains_key("aqm_params") {
        r.aqm_params = get_params(t, p, "aqm_params")?;
    }
    r.ecn = get_bool(t, p, "ecn")?.unwrap_or(r.ecn);
    r.jitter = get_duration(t, p, "jitter")?.unwrap_or(0);
    r.jitter_reorder = get_bool(t, p, "jitter_reorder")?.unwrap_or(false);
    r.rate_max = get_rate_max(t, p, r.rate)?;
    r.loss = get_probability(t, p, "loss")?.unwrap_or(0.0);
    check_pacing(t, p, r)
}

fn get_buffer(t: &Table, p: &str) -> R<Option<BufferSize>> {
    let hint = "expected a buffer size like \"50p\", \"64KB\", \"30ms\" or \"0.5bdp\"";
    get_unit(t, p, "buffer", hint, units::parse_buffer)
}

/// A change as written: `at`, and a new `rate` and/or `delay`.
#[derive(Clone, Debug)]
pub struct RawChange {
    pub at: Nanos,
    pub rate: Option<f64>,
    pub delay: Option<Nanos>,
}

/// `[[<p>.changes]]`, each before the end of the run; no rate changes on a link its trace paces.
pub fn parse_changes(t: &Table, p: &str, duration: Nanos, traced: bool) -> R<Vec<RawChange>> {
    let here = join(p, "changes");
    let items = match t.get("changes") {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(v) => {
            return Err(fe(here, format!("expected an array of tables ([[{p}.changes]]), got {}", shown(v))))
        }
    };
    let mut changes = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let cp = format!("{here}[{j}]");
        let Value::Table(ct) = item else {
            return Err(fe(cp, format!("expected a table ([[{p}.changes]]), got {}", shown(item))));
        };
        check_keys(ct, &cp, CHANGE_KEYS)?;
        let at = required(get_duration(ct, &cp, "at")?, join(&cp, "at"), "at = \"30s\"")?;
        if at >= duration {
            let (d, a) = (format_duration(duration), format_duration(at));
            return Err(fe(join(&cp, "at"), format!("must be less than duration ({d}), got {a}")));
        }
        let rate = get_rate(ct, &cp, "rate")?;
        let delay = get_duration(ct, &cp, "delay")?;
        if rate.is_none() && delay.is_none() {
            return Err(fe(cp, "a change needs rate and/or delay"));
        }
        if traced && rate.is_some() {
            return Err(fe(join(&cp, "rate"), "a trace-driven link's rate follows its trace"));
        }
        changes.push(RawChange { at, rate, delay });
    }
    Ok(changes)
}

/// Translate a buffer size into a queue limit for a link of `rate` bits/s and reference `rtt`.
pub fn queue_limit(buffer: &BufferSize, rate: f64, rtt: Nanos) -> Limit {
    match *buffer {
        BufferSize::Packets(n) => Limit::Packets(n),
        BufferSize::Bytes(b) => Limit::Bytes(b),
        BufferSize::Time(t) => Limit::Bytes((rate * t as f64 / 8e9).round() as u64),
        BufferSize::Bdp(x) => Limit::Bytes((x * rate * rtt as f64 / 8e9).round() as u64),
    }
}

/// Collects nodes and directional links, rejecting duplicate names and bad queues as it goes.
#[derive(Default)]
pub struct TopologyBuilder {
    nodes: Vec<String>,
    links: Vec<LinkSpec>,
    changes: Vec<LinkChange>,
    /// Link name → the field that declared it, for duplicate-name errors.
    declared: HashMap<String, String>,
    /// Node name → index: thousands of hosts must not cost a scan each.
    node_index: HashMap<String, usize>,
}

impl TopologyBuilder {
    /// The node called `name`, added if new.
    pub fn node(&mut self, name: &str) -> usize {
        if let Some(&i) = self.node_index.get(name) {
            return i;
        }
        self.nodes.push(name.to_string());
        self.node_index.insert(name.to_string(), self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// Add one direction; `name_field` is where a duplicate name is reported.
    pub fn link(
        &mut self,
        name: &str,
        name_field: &str,
        ends: (usize, usize),
        props: &LinkProps,
    ) -> R<usize> {
        if let Some(prev) = self.declared.get(name) {
            return Err(fe(name_field, format!("duplicate link name \"{name}\" (also used by {prev})")));
        }
        let limit = queue_limit(&props.buffer, props.rate, props.rtt);
        let cfg = QueueConfig { limit, ecn: props.ecn, seed: 0 };
        build_queue::<Probe>(&props.aqm, cfg, &props.aqm_params.clone())
            .map_err(|e| map_param_error(e, &props.field, "aqm", "aqm_params"))?;
        self.declared.insert(name.to_string(), name_field.to_string());
        self.links.push(LinkSpec {
            name: name.to_string(),
            from: ends.0,
            to: ends.1,
            rate: props.rate,
            delay: props.delay,
            jitter: props.jitter,
            jitter_reorder: props.jitter_reorder,
            rate_max: props.rate_max,
            loss: props.loss,
            shaper: props.shaper,
            trace: props.trace.clone(),
            buffer: props.buffer.clone(),
            rtt: props.rtt,
            limit,
            aqm: props.aqm.clone(),
            aqm_params: props.aqm_params.clone(),
            ecn: props.ecn,
            reverse_of: None,
            measure_sojourn: true,
        });
        Ok(self.links.len() - 1)
    }

    /// Add the other direction of link `fwd`, named `<fwd>-rev`.
    pub fn reverse(&mut self, fwd: usize, name_field: &str, props: &LinkProps) -> R<usize> {
        let (name, from, to) = {
            let f = &self.links[fwd];
            (format!("{}-rev", f.name), f.to, f.from)
        };
        let r = self.link(&name, name_field, (from, to), props)?;
        self.links[r].reverse_of = Some(fwd);
        // Queueing delay is measured in the declared direction, where the data goes.
        self.links[r].measure_sojourn = false;
        Ok(r)
    }

    pub fn changes(&mut self, link: usize, reverse: Option<usize>, raw: &[RawChange]) {
        for c in raw {
            self.changes.push(LinkChange { at: c.at, link, reverse, rate: c.rate, delay: c.delay });
        }
    }

    pub fn finish(mut self, generator: &'static str) -> Topology {
        // Stable: changes at the same instant keep their file order.
        self.changes.sort_by_key(|c| c.at);
        let upload_slots = vec![None; self.nodes.len()];
        Topology { generator, nodes: self.nodes, links: self.links, changes: self.changes, upload_slots }
    }
}

/// What a queue is built with to check its parameters: a queue's parameters do not depend on the
/// packets it will hold.
#[derive(Clone, Copy)]
struct Probe;

impl ccbench_aqm::QueuedPacket for Probe {
    fn wire_bytes(&self) -> u32 {
        0
    }
    fn ecn(&self) -> ccbench_aqm::Ecn {
        ccbench_aqm::Ecn::NotEct
    }
    fn set_ecn(&mut self, _: ccbench_aqm::Ecn) {}
    fn flow_id(&self) -> u64 {
        0
    }
}
