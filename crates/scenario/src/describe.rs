//! The validated scenario as JSON: unit-free (`_ns`, `_bps`, `_bytes`), links and nodes by name.
//! This is what `ccbench.validate()` hands Python, so nothing downstream parses units again.

use ccbench_aqm::Limit;
use ccbench_cc::{ParamValue, Params};
use serde_json::{json, Map, Value};

use super::config::{
    BufferSize, Flow, FlowKind, LinkSpec, LossRecovery, Scenario, StackProfile, Topology, Transport,
};

pub fn describe(sc: &Scenario) -> Value {
    let t = &sc.topology;
    json!({
        "name": sc.name,
        "duration_ns": sc.duration,
        "warmup_ns": sc.warmup,
        "seed": sc.seed,
        "output": output(sc),
        "topology": {"generator": t.generator, "nodes": t.nodes},
        "links": t.links.iter().map(|l| link(t, l)).collect::<Vec<_>>(),
        "flows": sc.flows.iter().map(|f| flow(t, f)).collect::<Vec<_>>(),
    })
}

/// `pcap` only when asked for, so the description (and what is keyed on it) of every run without
/// traces stays as it was.
fn output(sc: &Scenario) -> Value {
    let mut out = json!({
        "bin_ns": sc.output.bin,
        "sojourn_samples": sc.output.sojourn_samples,
        "owd_samples": sc.output.owd_samples,
        "flow_delays": sc.output.flow_delays,
    });
    if !sc.output.pcap.is_empty() {
        let names: Vec<&str> = sc.output.pcap.iter().map(|&l| sc.topology.links[l].name.as_str()).collect();
        out["pcap"] = json!(names);
    }
    out
}

fn link(t: &Topology, l: &LinkSpec) -> Value {
    let me = t.link_index(&l.name);
    let changes: Vec<Value> = t
        .changes
        .iter()
        .filter(|c| Some(c.link) == me || (c.delay.is_some() && c.reverse == me))
        .map(|c| {
            let rate = if Some(c.link) == me { c.rate } else { None };
            json!({"at_ns": c.at, "rate_bps": rate, "delay_ns": c.delay})
        })
        .filter(|c| !(c["rate_bps"].is_null() && c["delay_ns"].is_null()))
        .collect();
    json!({
        "name": l.name,
        "from": t.nodes[l.from],
        "to": t.nodes[l.to],
        "rate_bps": l.rate,
        "delay_ns": l.delay,
        "jitter_ns": l.jitter, "jitter_reorder": l.jitter_reorder, "rate_max_bps": l.rate_max,
        "loss": l.loss,
        "shaper": l.shaper.map(|s| json!({"burst_bytes": s.burst, "line_rate_bps": s.line_rate})),
        // The trace's content, not only its name, so a run's key changes with the file.
        "trace": l.trace.as_ref().map(|tr| json!({
            "path": tr.path,
            "opportunities": tr.trace.opportunities(),
            "period_ns": tr.trace.period(),
            "digest": format!("{:016x}", tr.trace.digest()),
        })),
        "buffer": buffer(&l.buffer),
        "limit": match l.limit {
            Limit::Packets(n) => json!({"packets": n}),
            Limit::Bytes(b) => json!({"bytes": b}),
        },
        "rtt_ns": l.rtt,
        "aqm": l.aqm,
        "aqm_params": params(&l.aqm_params),
        "ecn": l.ecn,
        "reverse_of": l.reverse_of.map(|r| t.links[r].name.clone()),
        "measure_sojourn": l.measure_sojourn,
        "changes": changes,
    })
}

fn buffer(b: &BufferSize) -> Value {
    match *b {
        BufferSize::Packets(n) => json!({"packets": n}),
        BufferSize::Bytes(n) => json!({"bytes": n}),
        BufferSize::Time(ns) => json!({"time_ns": ns}),
        BufferSize::Bdp(x) => json!({"bdp": x}),
    }
}

fn params(p: &Params) -> Value {
    let mut m = Map::new();
    for (k, v) in p.iter() {
        let v = match v {
            ParamValue::Float(f) => json!(f),
            ParamValue::Int(i) => json!(i),
            ParamValue::Bool(b) => json!(b),
            ParamValue::Str(s) => json!(s),
        };
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

fn flow(t: &Topology, f: &Flow) -> Value {
    let names = |path: &[usize]| path.iter().map(|&l| t.links[l].name.clone()).collect::<Vec<_>>();
    let o = &f.tcp;
    json!({
        "name": f.name,
        "type": match f.kind { FlowKind::Tcp => "tcp", FlowKind::Cbr => "cbr" },
        "transport": match f.transport { Transport::Tcp => "tcp", Transport::Quic => "quic" },
        "cca": f.cca,
        "cc": params(&f.cc),
        "from": t.nodes[f.from],
        "to": t.nodes[f.to],
        "path": names(&f.path),
        "ack_path": names(&f.ack_path),
        "access_delay_ns": f.access_delay,
        "host_noise_ns": f.host_noise,
        "rtt_ns": f.rtt,
        "start_ns": f.start,
        "stop_ns": f.stop,
        "size_bytes": f.size,
        "tcp": {
            "mss": o.mss, "header_bytes": o.header_bytes, "initial_window": o.initial_window, "initial_ssthresh": o.initial_ssthresh,
            "sack": o.sack, "delayed_ack": o.delayed_ack, "delayed_ack_timeout_ns": o.delayed_ack_timeout,
            "gro_ns": o.gro,
            "quickack_segments": o.quickack_segments, "timestamps": o.timestamps,
            "ts_granularity_ns": o.ts_granularity, "rcv_buf_bytes": o.rcv_buf, "wscale": o.wscale,
            "handshake": o.handshake, "ecn": o.ecn, "accecn": o.accecn, "ect1": o.ect1, "rto_min_ns": o.rto_min,
            "rto_initial_ns": o.rto_initial, "rto_max_ns": o.rto_max,
            "ca_counting": match o.ca_counting { ccbench_cc::CaCounting::Segments => "segments", ccbench_cc::CaCounting::Acks => "acks" },
            "recovery": match o.recovery { LossRecovery::Rack => "rack", LossRecovery::Rfc6675 => "rfc6675" },
            "frto": o.frto,
            "clock_offset_ns": o.clock_offset, "clock_skew_ppm": o.clock_skew_ppm,
            "stack": match o.stack {
                StackProfile::Linux => "linux",
                StackProfile::Linux35 => "linux-3.5",
                StackProfile::FreeBsd => "freebsd",
            },
            "receiver_cca": o.receiver_cca, "receiver_cc": params(&o.receiver_cc),
        },
        "cbr": {"packet_size": f.cbr.packet_size, "interval_ns": f.cbr.interval, "header_bytes": f.cbr.header_bytes},
    })
}
