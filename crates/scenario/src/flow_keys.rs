//! A `[[flows]]` entry's scalar keys, read through [`Params`] like its stack options
//! ([`crate::tcp_options`]) and every controller's parameters: the getters that read them also
//! list them, so the keys a flow accepts, their types and defaults come from [`FlowKeys::read`]
//! and cannot drift from it. The keys whose values may be lists or tables (routes, RTT draws,
//! controller tables, ranges) are read by their own code and named in [`COMMON_STRUCTURED`] and
//! [`TCP_STRUCTURED`].

use std::collections::BTreeSet;

use ccbench_cc::{ParamError, ParamSpec, ParamValue, Params};

use super::config::{CbrOptions, FlowKind, Nanos, Transport};
use super::tcp_options::option_specs;

/// Most flows a scenario may expand to (a swarm has hundreds; this bounds memory, not realism),
/// and so the largest `count`.
pub const MAX_FLOWS: usize = 100_000;
const MAX_COUNT: u64 = MAX_FLOWS as u64;
/// Longest start, stop or gap accepted: a year, beyond any run.
const MAX_TIME: Nanos = 365 * 86_400 * 1_000_000_000;

/// Keys of every flow read by code of their own: `rtt` (a duration, a list or a distribution,
/// `traffic.rs`), and the route (`from`, `to`, `path`, `ack_path`, `topology/routes.rs`).
pub const COMMON_STRUCTURED: &[&str] = &["rtt", "from", "to", "path", "ack_path"];
/// Keys of a TCP flow read by code of their own: the controllers' tables, the host noise
/// (`true`, `"auto"` or a duration) and the chunk ranges (a size or duration, or `{min, max}`).
pub const TCP_STRUCTURED: &[&str] = &["cc", "receiver_cc", "host_noise", "chunk_size", "chunk_interval"];

/// A flow's scalar keys, as read.
#[derive(Clone, Debug)]
pub struct FlowKeys {
    pub kind: FlowKind,
    pub name: Option<String>,
    pub count: usize,
    pub start: Nanos,
    pub stop: Option<Nanos>,
    pub rtt_jitter: Nanos,
    pub tcp: TcpKeys,
    pub cbr: CbrOptions,
}

/// A TCP flow's scalar keys beyond its stack options.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpKeys {
    pub transport: Transport,
    pub cca: String,
    /// `None`: no total (greedy, or chunked).
    pub size: Option<u64>,
    pub receiver_cca: Option<String>,
    pub persistence: f64,
    pub chunk_gap: Nanos,
}

impl Default for TcpKeys {
    fn default() -> Self {
        Self {
            transport: Transport::Tcp,
            cca: "cubic".into(),
            size: None,
            receiver_cca: None,
            persistence: 1.0,
            chunk_gap: 0,
        }
    }
}

impl FlowKeys {
    /// Every scalar key of a flow of the `type` it gives, checked against its range.
    pub fn read(p: &Params) -> Result<FlowKeys, ParamError> {
        let kind = FlowKeys::kind(p)?;
        let name = p.opt_text("name", "\"<cca>-<index>\" (\"cbr-<index>\"); with count, \"<name>-<k>\"")?;
        if name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(ParamError { key: "name".into(), message: "must not be empty".into() });
        }
        let keys = FlowKeys {
            name,
            count: p.u64_in("count", 1, 1, MAX_COUNT)? as usize,
            start: p.duration("start", 0, 0, MAX_TIME)?,
            stop: p.opt_duration("stop", 0, MAX_TIME, "none (the run's end, or when size is sent)")?,
            rtt_jitter: p.duration("rtt_jitter", 0, 0, MAX_TIME)?,
            tcp: if kind == FlowKind::Tcp { tcp_keys(p)? } else { TcpKeys::default() },
            cbr: if kind == FlowKind::Cbr { cbr_keys(p)? } else { CbrOptions::default() },
            kind,
        };
        Ok(keys)
    }

    /// `type`: the flow's kind, which decides the keys it accepts.
    pub fn kind(p: &Params) -> Result<FlowKind, ParamError> {
        Ok(match p.choice("type", "tcp", &["tcp", "cbr"])?.as_str() {
            "cbr" => FlowKind::Cbr,
            _ => FlowKind::Tcp,
        })
    }

    /// The scalar keys a flow of `kind` accepts, as the getters list them.
    pub fn specs(kind: &FlowKind) -> Vec<ParamSpec> {
        let p = Params::new();
        if *kind == FlowKind::Cbr {
            let mut with_type = Params::new();
            with_type.insert("type", ParamValue::Str("cbr".into()));
            FlowKeys::read(&with_type).expect("the defaults are valid");
            return with_type.specs();
        }
        FlowKeys::read(&p).expect("the defaults are valid");
        p.specs()
    }
}

fn tcp_keys(p: &Params) -> Result<TcpKeys, ParamError> {
    let d = TcpKeys::default();
    Ok(TcpKeys {
        transport: match p.choice("transport", "tcp", &["tcp", "quic"])?.as_str() {
            "quic" => Transport::Quic,
            _ => Transport::Tcp,
        },
        cca: p.text("cca", &d.cca)?,
        size: p.size_or_inf("size", "none (infinite: greedy until stop)")?,
        receiver_cca: p.opt_text("receiver_cca", "none")?,
        persistence: p.f64_in("persistence", d.persistence, 0.0, 1.0)?,
        chunk_gap: p.duration("chunk_gap", d.chunk_gap, 0, MAX_TIME)?,
    })
}

fn cbr_keys(p: &Params) -> Result<CbrOptions, ParamError> {
    let d = CbrOptions::default();
    Ok(CbrOptions {
        packet_size: p.u64_in("packet_size", d.packet_size.into(), 1, 65_507)? as u32,
        interval: p.duration("interval", d.interval, 1, MAX_TIME)?,
        header_bytes: p.u64_in("header_bytes", d.header_bytes.into(), 0, 65_535)? as u32,
    })
}

/// Every key a flow of `kind` accepts: its scalar keys, its structured ones, and for TCP the
/// stack options.
pub fn accepted_keys(kind: &FlowKind) -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = FlowKeys::specs(kind).into_iter().map(|s| s.key).collect();
    keys.extend(COMMON_STRUCTURED.iter().map(|k| k.to_string()));
    if *kind == FlowKind::Tcp {
        keys.extend(TCP_STRUCTURED.iter().map(|k| k.to_string()));
        keys.extend(option_specs().into_iter().map(|s| s.key));
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_getters_list_the_keys_with_their_types_and_defaults() {
        let tcp = FlowKeys::specs(&FlowKind::Tcp);
        let cca = tcp.iter().find(|s| s.key == "cca").unwrap();
        assert_eq!((cca.kind.as_str(), cca.default.as_str()), ("string", "\"cubic\""));
        assert!(tcp.iter().all(|s| s.key != "packet_size"));
        let cbr = FlowKeys::specs(&FlowKind::Cbr);
        let size = cbr.iter().find(|s| s.key == "packet_size").unwrap();
        assert_eq!((size.kind.as_str(), size.default.as_str()), ("integer in [1, 65507]", "160"));
        assert!(cbr.iter().all(|s| s.key != "cca"));
        assert!(accepted_keys(&FlowKind::Tcp).contains("sack"), "stack options");
        assert!(accepted_keys(&FlowKind::Cbr).contains("header_bytes"));
    }

    #[test]
    fn bad_values_name_their_key() {
        let mut p = Params::new();
        p.insert("count", ParamValue::Int(0));
        assert_eq!(FlowKeys::read(&p).unwrap_err().key, "count");
        let mut p = Params::new();
        p.insert("name", ParamValue::Str("  ".into()));
        assert_eq!(FlowKeys::read(&p).unwrap_err().message, "must not be empty");
        let mut p = Params::new();
        p.insert("size", ParamValue::Str("inf".into()));
        p.insert("transport", ParamValue::Str("quic".into()));
        let keys = FlowKeys::read(&p).unwrap();
        assert_eq!((keys.tcp.size, keys.tcp.transport), (None, Transport::Quic));
    }
}
