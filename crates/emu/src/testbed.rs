//! `ccbench-emu testbed SCENARIO.toml [--for S] [--set KEY=VALUE]...`: a scenario's network with
//! no traffic of ours, held for your own programs.
//!
//! The hosts, links and queues are those `ccbench-emu run` builds (flows give hosts their access
//! delay; their traffic is not started). One JSON line on stdout says where everything is:
//! `{"run_id", "hosts": [{"name", "netns", "addr"}], "flows": [{"name", "from_netns",
//! "to_netns", "to_addr"}]}`; then the network serves until `--for` seconds have passed (default
//! 600) or the process gets SIGINT/SIGTERM, and the namespaces are removed. Run programs in a
//! host with `ip netns exec NETNS …`, e.g. `ccbench-quic` between a flow's two ends.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::apps::AppError;
use crate::forwarder::{Forwarder, ForwarderConfig};
use crate::netns::{self, Testbed};
use crate::run::{emulated_topology, load};

/// Longest hold (a day): the testbed is for experiments, not a service.
const MAX_HOLD: u64 = 86_400;

struct Args {
    scenario: PathBuf,
    hold: Duration,
    sets: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Args, AppError> {
    let usage = || AppError::usage("usage: ccbench-emu testbed SCENARIO.toml [--for S] [--set KEY=VALUE]...");
    let (mut scenario, mut hold, mut sets) = (None, Duration::from_secs(600), Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| AppError::usage(format!("{a} needs a value")));
        match a.as_str() {
            "--set" => sets.push(value()?),
            "--for" => {
                let v = value()?;
                let secs =
                    v.parse::<f64>().ok().filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_HOLD as f64);
                hold = Duration::from_secs_f64(secs.ok_or_else(|| {
                    AppError::usage(format!("--for {v:?}: expected seconds in (0, {MAX_HOLD}]"))
                })?);
            }
            s if s.starts_with("--") => return Err(AppError::usage(format!("unknown flag {s}"))),
            s if scenario.is_none() => scenario = Some(PathBuf::from(s)),
            _ => return Err(usage()),
        }
    }
    Ok(Args { scenario: scenario.ok_or_else(usage)?, hold, sets })
}

/// The `testbed` subcommand: exit status 2 for bad input, 1 for a failure.
pub fn main(args: &[String]) -> Result<(), AppError> {
    let a = parse_args(args)?;
    let source = a.scenario.display().to_string();
    let sc = load(&a.scenario, &a.sets, None)?;
    let emu = emulated_topology(&sc).map_err(|m| AppError::usage(format!("{source}: {m}")))?;
    netns::preflight().map_err(|e| AppError::usage(e.to_string()))?;
    netns::reap_stale();
    let tb = Testbed::new(&emu.topo.nodes).map_err(|e| AppError::run(e.to_string()))?;
    let running = Forwarder::from_topology(&emu.topo, sc.seed, &tb, ForwarderConfig::default())
        .and_then(Forwarder::start)
        .map_err(AppError::run)?;
    let hosts = tb.hosts();
    let where_ = json!({
        "run_id": tb.run_id(),
        "hosts": hosts.iter().map(|h| json!({"name": h.name, "netns": h.netns, "addr": h.addr.to_string()})).collect::<Vec<_>>(),
        "flows": sc.flows.iter().enumerate().map(|(i, f)| json!({
            "name": f.name,
            "from_netns": hosts[emu.senders[i]].netns,
            "to_netns": hosts[f.to].netns,
            "to_addr": hosts[f.to].addr.to_string(),
        })).collect::<Vec<_>>(),
    });
    let mut out = std::io::stdout();
    writeln!(out, "{where_}").and_then(|()| out.flush()).map_err(|e| AppError::run(e.to_string()))?;
    let until = Instant::now() + a.hold;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100).min(until - Instant::now()));
    }
    running.stop().map_err(AppError::run)?;
    drop(tb);
    Ok(())
}
