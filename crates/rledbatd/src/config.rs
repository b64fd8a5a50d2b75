//! What `rledbatd run` is told: a TOML file (`--config`) and flags, flags winning. Every
//! problem is one line naming the offending field or flag.
//!
//! ```toml
//! remote_ports = [443, 8080]      # downloads from these server ports (empty: any)
//! remote_addrs = ["192.0.2.7"]    # from these servers (empty: any)
//! local_ports  = []               # to these ports of this host (empty: any)
//! queue = 4350                    # NFQUEUE numbers `queue` (incoming) and `queue + 1` (outgoing)
//! socket = "/run/rledbatd.sock"   # where `rledbatd status` asks
//! log = "rledbatd.csv"            # per-flow CSV log (absent: none)
//! log_interval = "100ms"
//! idle_timeout = "120s"           # a flow silent this long is forgotten
//! iptables = true                 # install (and remove) the rules that feed the queues
//! [cc]                            # the rledbat controller's parameters, as a scenario's receiver_cc
//! target = "60ms"
//! ```

use std::net::IpAddr;
use std::path::PathBuf;

use ccbench_cc::{build_receiver_control, Nanos, ParamValue, Params};
use ccbench_params::units::parse_duration;

use crate::table::Rules;

/// The receiver-side controller the daemon runs.
pub const CONTROLLER: &str = "rledbat";

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub rules: Rules,
    /// Incoming packets go to `queue`, outgoing ones to `queue + 1`.
    pub queue: u16,
    pub socket: PathBuf,
    pub log: Option<PathBuf>,
    pub log_interval: Nanos,
    pub idle_timeout: Nanos,
    pub iptables: bool,
    /// Stop by itself after this long (tests, timed experiments).
    pub duration: Option<Nanos>,
    pub cc: Params,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rules: Rules::default(),
            queue: 4350,
            socket: PathBuf::from("/run/rledbatd.sock"),
            log: None,
            log_interval: 100_000_000,
            idle_timeout: 120_000_000_000,
            iptables: true,
            duration: None,
            cc: Params::new(),
        }
    }
}

/// Which of the flags are known and whether they take a value.
pub const FLAGS: &[(&str, &str)] = &[
    ("--config", "FILE     the TOML file above"),
    ("--remote-port", "PORT  a server port to match (repeat or comma-separate)"),
    ("--remote-addr", "ADDR  a server address to match"),
    ("--local-port", "PORT   a port of this host to match"),
    ("--queue", "N            NFQUEUE numbers N and N+1 (default 4350)"),
    ("--socket", "PATH       status socket (default /run/rledbatd.sock)"),
    ("--log", "FILE          per-flow CSV log"),
    ("--log-interval", "D   log period (default 100ms)"),
    ("--idle-timeout", "D   forget a flow silent this long (default 120s)"),
    ("--duration", "D       exit by itself after D"),
    ("--cc", "KEY=VALUE      a controller parameter (repeat), e.g. target=60ms"),
    ("--no-iptables", "     install no rules: feed the queues yourself"),
];

/// The configuration from `args` (after `run`).
pub fn from_args(args: &[String]) -> Result<Config, String> {
    let mut cfg = Config::default();
    if let Some(path) = flag_values(args, "--config")?.last() {
        let text = crate::paths::read_config(path)?;
        from_toml(&mut cfg, &text).map_err(|e| format!("{path}: {e}"))?;
    }
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (flag.as_str(), None),
        };
        if flag == "--no-iptables" {
            if inline.is_some() {
                return Err("--no-iptables takes no value".into());
            }
            cfg.iptables = false;
            continue;
        }
        if !FLAGS.iter().any(|(f, _)| *f == flag) {
            return Err(format!("unknown argument {flag} (see rledbatd --help)"));
        }
        let value = match inline {
            Some(v) => v,
            None => value_after(it.next(), flag)?.to_string(),
        };
        apply_flag(&mut cfg, flag, &value).map_err(|e| format!("{flag}: {e}"))?;
    }
    check(&cfg)?;
    Ok(cfg)
}

fn flag_values<'a>(args: &'a [String], name: &str) -> Result<Vec<&'a str>, String> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if a == name {
            out.push(value_after(args.get(i + 1), name)?);
        } else if let Some(v) = a.strip_prefix(name).and_then(|v| v.strip_prefix('=')) {
            out.push(v);
        }
    }
    Ok(out)
}

/// The value after `flag`: a flag in its place means the value was forgotten (`--log --queue 5`
/// must not create a file named `--queue`).
fn value_after<'a>(next: Option<&'a String>, flag: &str) -> Result<&'a str, String> {
    match next {
        Some(v) if !v.starts_with("--") => Ok(v),
        _ => Err(format!("{flag} needs a value")),
    }
}

fn apply_flag(cfg: &mut Config, flag: &str, v: &str) -> Result<(), String> {
    match flag {
        "--config" => {}
        "--remote-port" => cfg.rules.remote_ports.extend(ports(v)?),
        "--local-port" => cfg.rules.local_ports.extend(ports(v)?),
        "--remote-addr" => {
            for a in v.split(',') {
                cfg.rules.remote_addrs.push(addr(a)?);
            }
        }
        "--queue" => cfg.queue = parse_queue(v)?,
        "--socket" => cfg.socket = PathBuf::from(v),
        "--log" => cfg.log = Some(PathBuf::from(v)),
        "--log-interval" => cfg.log_interval = positive(v)?,
        "--idle-timeout" => cfg.idle_timeout = positive(v)?,
        "--duration" => cfg.duration = Some(positive(v)?),
        "--cc" => {
            let (k, val) = v
                .split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .ok_or_else(|| format!("expected KEY=VALUE, got {v:?}"))?;
            cfg.cc.insert(k.trim(), scalar(val.trim()));
        }
        _ => unreachable!("FLAGS lists {flag}"),
    }
    Ok(())
}

fn from_toml(cfg: &mut Config, text: &str) -> Result<(), String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let at = e.span().map(|s| format!(" (byte {})", s.start)).unwrap_or_default();
        format!("not TOML{at}: {}", e.message())
    })?;
    for (key, value) in &table {
        let as_str = || value.as_str().ok_or_else(|| format!("{key}: expected a string"));
        match key.as_str() {
            "remote_ports" | "local_ports" => {
                let list = ports_list(key, value)?;
                let target = if key == "remote_ports" { &mut cfg.rules.remote_ports } else { &mut cfg.rules.local_ports };
                *target = list;
            }
            "remote_addrs" => {
                let items = value.as_array().ok_or_else(|| format!("{key}: expected a list of addresses"))?;
                cfg.rules.remote_addrs = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| v.as_str().ok_or("expected a string".to_string()).and_then(addr).map_err(|e| format!("{key}[{i}]: {e}")))
                    .collect::<Result<_, _>>()?;
            }
            "queue" => cfg.queue = queue(value.as_integer().ok_or_else(|| format!("{key}: expected an integer"))?).map_err(|e| format!("{key}: {e}"))?,
            "socket" => cfg.socket = PathBuf::from(as_str()?),
            "log" => cfg.log = Some(PathBuf::from(as_str()?)),
            "log_interval" => cfg.log_interval = positive(as_str()?).map_err(|e| format!("{key}: {e}"))?,
            "idle_timeout" => cfg.idle_timeout = positive(as_str()?).map_err(|e| format!("{key}: {e}"))?,
            "iptables" => cfg.iptables = value.as_bool().ok_or_else(|| format!("{key}: expected true or false"))?,
            "cc" => {
                let cc = value.as_table().ok_or_else(|| format!("{key}: expected a table of parameters"))?;
                for (k, v) in cc {
                    cfg.cc.insert(k.clone(), param(v).ok_or_else(|| format!("cc.{k}: expected a number, string or boolean"))?);
                }
            }
            _ => return Err(format!("{key}: unknown setting (known: remote_ports, remote_addrs, local_ports, queue, socket, log, log_interval, idle_timeout, iptables, cc)")),
        }
    }
    Ok(())
}

/// Settings that only make sense together, and the controller's parameters, checked before
/// anything is installed.
fn check(cfg: &Config) -> Result<(), String> {
    build_receiver_control(CONTROLLER, &cfg.cc).map_err(|e| format!("cc.{e}"))?;
    if cfg.iptables && cfg.rules == Rules::default() {
        return Err("no rules: give --remote-port, --remote-addr or --local-port (matching every TCP download is never a default)".into());
    }
    Ok(())
}

fn ports(v: &str) -> Result<Vec<u16>, String> {
    v.split(',')
        .map(|p| port(p.trim().parse::<i64>().map_err(|_| format!("expected a port number, got {p:?}"))?))
        .collect()
}

fn ports_list(key: &str, value: &toml::Value) -> Result<Vec<u16>, String> {
    let items = value.as_array().ok_or_else(|| format!("{key}: expected a list of port numbers"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_integer()
                .ok_or("expected an integer".to_string())
                .and_then(port)
                .map_err(|e| format!("{key}[{i}]: {e}"))
        })
        .collect()
}

fn port(p: i64) -> Result<u16, String> {
    u16::try_from(p)
        .ok()
        .filter(|&p| p != 0)
        .ok_or_else(|| format!("expected a port number 1-65535, got {p}"))
}

/// A `--queue` value (`run` and `cleanup`).
pub fn parse_queue(v: &str) -> Result<u16, String> {
    queue(v.trim().parse::<i64>().map_err(|_| format!("expected a queue number 0-65534, got {v:?}"))?)
}

fn queue(q: i64) -> Result<u16, String> {
    u16::try_from(q)
        .ok()
        .filter(|&q| q < u16::MAX)
        .ok_or_else(|| format!("expected a queue number 0-65534, got {q}"))
}

fn addr(a: &str) -> Result<IpAddr, String> {
    a.trim().parse().map_err(|_| format!("expected an IPv4 or IPv6 address, got {a:?}"))
}

fn positive(v: &str) -> Result<Nanos, String> {
    match parse_duration(v)? {
        0 => Err(format!("must be longer than 0, got {v:?}")),
        ns => Ok(ns),
    }
}

fn param(v: &toml::Value) -> Option<ParamValue> {
    Some(match v {
        toml::Value::Integer(i) => ParamValue::Int(*i),
        toml::Value::Float(f) => ParamValue::Float(*f),
        toml::Value::Boolean(b) => ParamValue::Bool(*b),
        toml::Value::String(s) => ParamValue::Str(s.clone()),
        _ => return None,
    })
}

/// A `--cc` value as TOML would read it bare: an integer, a float, a boolean, else a string.
fn scalar(v: &str) -> ParamValue {
    if let Ok(i) = v.parse() {
        ParamValue::Int(i)
    } else if let Ok(f) = v.parse() {
        ParamValue::Float(f)
    } else if let Ok(b) = v.parse() {
        ParamValue::Bool(b)
    } else {
        ParamValue::Str(v.trim_matches('"').to_string())
    }
}

#[cfg(test)]
mod tests;
