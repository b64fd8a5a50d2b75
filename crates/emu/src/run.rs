//! `ccbench-emu run SCENARIO.toml --out DIR`: a scenario on real kernel TCP.
//!
//! One namespace per node of the topology, our forwarder serving every link, a sink or CBR
//! receiver per flow on its `to` host and a source or CBR sender on its `from` host, all on one
//! clock (the forwarder's start is scenario time zero). The run directory it writes is the
//! simulator's: `summary.json` and the four Parquet series ([`crate::results`]).

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use ccbench_aqm::Limit;
use ccbench_scenario::{
    parse_str_for, BufferSize, Controllers, Flow, FlowKind, LinkSpec, Params, Scenario, Topology, Transport,
};
use serde_json::Value;

use crate::apps::sockopt::{available, kernel_cca, KERNEL_CCAS};
use crate::apps::{AppError, Outputs, BASE_PORT};
use crate::forwarder::{Forwarder, ForwarderConfig, Report};
use crate::netns::{self, Testbed};
use crate::results;
use crate::rledbatd;

/// How long after the scenario's end programs may take to report before they are killed.
const GRACE: Duration = Duration::from_secs(5);

struct Args {
    scenario: PathBuf,
    out: PathBuf,
    seed: Option<u64>,
    sets: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Args, AppError> {
    let usage =
        || AppError::usage("usage: ccbench-emu run SCENARIO.toml --out DIR [--seed N] [--set KEY=VALUE]...");
    let (mut scenario, mut out, mut seed, mut sets) = (None, None, None, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(|| AppError::usage(format!("{a} needs a value")));
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(value()?)),
            "--set" => sets.push(value()?),
            "--seed" => {
                let v = value()?;
                seed = Some(v.parse().map_err(|_| {
                    AppError::usage(format!("--seed: expected a non-negative integer, got {v:?}"))
                })?);
            }
            s if s.starts_with("--") => return Err(AppError::usage(format!("unknown flag {s}"))),
            s if scenario.is_none() => scenario = Some(PathBuf::from(s)),
            _ => return Err(usage()),
        }
    }
    Ok(Args { scenario: scenario.ok_or_else(usage)?, out: out.ok_or_else(usage)?, seed, sets })
}

/// The `run` subcommand: exit status 2 for bad input, 1 for a failed run.
pub fn main(args: &[String]) -> Result<(), AppError> {
    let a = parse_args(args)?;
    let source = a.scenario.display().to_string();
    let sc = load(&a.scenario, &a.sets, a.seed)?;
    // Before anything is built: every kernel flow's controller must exist in this kernel.
    for (i, f) in sc.flows.iter().enumerate().filter(|(_, f)| kernel_tcp(f)) {
        kernel_cca(&f.cca).map_err(|e| AppError::usage(format!("{source}: flows[{i}].cca: {e}")))?;
    }
    let emu = emulated_topology(&sc).map_err(|m| AppError::usage(format!("{source}: {m}")))?;
    netns::preflight().map_err(|e| AppError::usage(e.to_string()))?;
    if sc.flows.iter().any(|f| f.tcp.receiver_cca.is_some()) {
        rledbatd::program().map_err(|e| AppError::usage(format!("{source}: {e}")))?;
    }
    netns::reap_stale();
    let wall = Instant::now();
    // The run is written into a folder staged beside `--out` (the daemons' logs too) and
    // swapped in at the end: a kill leaves the previous run's folder, or this one.
    ccbench_files::check_run_folder(&a.out).map_err(|e| AppError::usage(e.labelled("--out")))?;
    let staged =
        ccbench_files::StagedDir::create(&a.out).map_err(|e| AppError::usage(e.labelled("--out")))?;
    let (report, outputs) = emulate(&sc, &emu, staged.path()).map_err(AppError::run)?;
    let result = results::build(&sc, &emu.topo, &report, &outputs, wall.elapsed().as_secs_f64());
    let summary = result.summary.clone();
    let series = ccbench_output::series_tables(result);
    ccbench_output::write_run_into(staged.path(), &summary, &series).map_err(AppError::run)?;
    staged.commit().map_err(|e| AppError::run(e.labelled("--out")))?;
    println!("{}", serde_json::to_string_pretty(&summary).unwrap_or_default());
    Ok(())
}

/// A scenario file as the real stack runs it: its controllers the kernel's (QUIC flows ours).
pub fn load(path: &Path, sets: &[String], seed: Option<u64>) -> Result<Scenario, AppError> {
    let source = path.display().to_string();
    let text = ccbench_files::read_text(path, ccbench_files::InputKind::SCENARIO)
        .map_err(|e| AppError::usage(format!("cannot read file {e}")))?;
    let names: Vec<&str> = KERNEL_CCAS.iter().map(|(name, _)| *name).collect();
    parse_str_for(&text, &source, sets, seed, Controllers::Kernel(&names)).map_err(|e| {
        // The parser knows the names the real stack maps (`KERNEL_CCAS`); say what this kernel
        // runs too, as `kernel_cca` does for a mapped name the kernel lacks.
        let offers = if e.field.ends_with(".cca") {
            format!("; this kernel offers: {}", available())
        } else {
            String::new()
        };
        AppError::usage(format!("{e}{offers}"))
    })
}

/// A flow on the kernel's TCP (not QUIC, not CBR).
fn kernel_tcp(f: &Flow) -> bool {
    f.kind == FlowKind::Tcp && f.transport == Transport::Tcp
}

/// The topology the forwarder serves, and the host each flow sends from.
pub struct Emulated {
    pub topo: Topology,
    pub senders: Vec<usize>,
}

/// Hosts are the topology's nodes, so a flow with access delay (its RTT beyond its path's
/// links) gets a host of its own, joined to its path's first node by an infinitely fast link
/// that carries the delay, half each way: the simulator's access links, made real.
pub fn emulated_topology(sc: &Scenario) -> Result<Emulated, String> {
    if let Some(f) = sc.flows.iter().find(|f| f.tcp.receiver_cca.as_deref().is_some_and(|c| c != "rledbat")) {
        return Err(format!(
            "flows[{}].receiver_cca: the emulator runs only \"rledbat\" (rledbatd)",
            flow_index(sc, f)
        ));
    }
    // Real hosts share the machine's clock; an offset or drift between them cannot be staged.
    if let Some(f) = sc.flows.iter().find(|f| f.tcp.clock_offset != 0 || f.tcp.clock_skew_ppm != 0.0) {
        return Err(format!(
            "flows[{}].clock_offset: the emulator's hosts share one clock (no offset or skew)",
            flow_index(sc, f)
        ));
    }
    if let Some(f) = sc.flows.iter().find(|f| f.chunks.is_some()) {
        return Err(format!(
            "flows[{}].chunk_size: chunked transfers are not supported by the emulator yet",
            flow_index(sc, f)
        ));
    }
    if let Some(f) = sc.flows.iter().find(|f| f.tcp.gro > 0) {
        return Err(format!(
            "flows[{}].gro: not supported by the emulator yet (its hosts' offload is the kernel's own)",
            flow_index(sc, f)
        ));
    }
    if let Some(f) = sc.flows.iter().find(|f| f.tcp.initial_ssthresh.is_some()) {
        return Err(format!(
            "flows[{}].initial_ssthresh: not supported by the emulator yet (Linux has no such sysctl)",
            flow_index(sc, f)
        ));
    }
    if !sc.output.pcap.is_empty() {
        return Err("output.pcap: not supported by the emulator yet".into());
    }
    let mut topo = sc.topology.clone();
    let mut senders = Vec::with_capacity(sc.flows.len());
    for f in &sc.flows {
        if f.access_delay == 0 {
            senders.push(f.from);
            continue;
        }
        let host = topo.nodes.len();
        topo.nodes.push(format!("h-{}", f.name));
        let first = f.path.first().map_or(f.to, |&l| sc.topology.links[l].from);
        let fwd = access_link(&format!("access-{}", f.name), (host, first), f.access_delay / 2, None);
        topo.links.push(fwd);
        let back = f.access_delay - f.access_delay / 2;
        let rev =
            access_link(&format!("access-rev-{}", f.name), (first, host), back, Some(topo.links.len() - 1));
        topo.links.push(rev);
        senders.push(host);
    }
    Ok(Emulated { topo, senders })
}

fn access_link(name: &str, (from, to): (usize, usize), delay: u64, reverse_of: Option<usize>) -> LinkSpec {
    LinkSpec {
        name: name.to_string(),
        from,
        to,
        rate: f64::INFINITY,
        delay,
        jitter: 0,
        jitter_reorder: false,
        rate_max: None,
        loss: 0.0,
        shaper: None,
        trace: None,
        buffer: BufferSize::Packets(u64::MAX),
        rtt: 0,
        limit: Limit::Packets(u64::MAX),
        aqm: "droptail".into(),
        aqm_params: Params::new(),
        ecn: false,
        reverse_of,
        measure_sojourn: false,
    }
}

fn flow_index(sc: &Scenario, f: &Flow) -> usize {
    sc.flows.iter().position(|g| std::ptr::eq(g, f)).unwrap_or(0)
}

/// Run the programs; `rledbatd` logs (if any flow uses it) go to `out`.
fn emulate(sc: &Scenario, emu: &Emulated, out: &Path) -> Result<(Report, Outputs), String> {
    let topo = &emu.topo;
    let tb = Testbed::new(&topo.nodes).map_err(|e| e.to_string())?;
    let dir = ResultDir::new(tb.run_id())?;
    configure_hosts(sc, &emu.senders, &tb)?;
    let daemons = rledbatd::start(sc, &tb, dir.0.path(), out)?;
    let cfg = ForwarderConfig { sample_every: sc.output.bin.min(10_000_000), ..ForwarderConfig::default() };
    let running = Forwarder::from_topology(topo, sc.seed, &tb, cfg)?.start()?;
    let t0 = running.t0();
    // QUIC sinks serve one certificate, made for this run; sources pin it.
    let fingerprint = ccbench_quic::tls::Identity::load_or_create(dir.0.path())?.fingerprint();
    let quic = Quic { identity: dir.0.path(), fingerprint: &fingerprint };
    let mut receivers = Vec::new();
    for (i, f) in sc.flows.iter().enumerate() {
        receivers.push(spawn(&tb, f.to, &receiver_args(sc, i, t0, &quic), &dir.file(i, "recv"))?);
    }
    let mut senders = Vec::new();
    for i in 0..sc.flows.len() {
        senders.push(spawn(&tb, emu.senders[i], &sender_args(sc, &tb, i, t0, &quic), &dir.file(i, "send"))?);
    }
    let deadline = Instant::now() + Duration::from_nanos(sc.duration) + GRACE;
    let mut outputs = Vec::new();
    for (i, (s, r)) in senders.into_iter().zip(receivers).enumerate() {
        let sent = collect(s, &dir.file(i, "send"), deadline)?;
        outputs.push((sent, collect(r, &dir.file(i, "recv"), deadline)?));
    }
    rledbatd::stop(daemons)?;
    let report = running.stop()?;
    drop(tb);
    Ok((report, outputs))
}

/// Per-namespace TCP settings the scenario asks for; flows sharing a host must agree.
fn configure_hosts(sc: &Scenario, senders: &[usize], tb: &Testbed) -> Result<(), String> {
    let mut set: Vec<Option<(bool, bool, bool)>> = vec![None; tb.hosts().len()];
    for (i, f) in sc.flows.iter().enumerate().filter(|(_, f)| kernel_tcp(f)) {
        let o = &f.tcp;
        for (host, ecn) in [(senders[i], o.ecn), (f.to, false)] {
            let want = (o.sack, o.timestamps, ecn);
            match set[host] {
                Some(have) if have != want && host == senders[i] => {
                    return Err(format!(
                        "flows[{i}]: hosts shared by flows need the same sack, timestamps and ecn"
                    ))
                }
                Some(_) => {}
                None => set[host] = Some(want),
            }
        }
    }
    for (host, s) in set.iter().enumerate() {
        let Some((sack, ts, ecn)) = *s else { continue };
        // Receivers answer ECN when asked (tcp_ecn = 2, the kernel default); senders ask with 1.
        for (key, v) in
            [("tcp_sack", sack as u8), ("tcp_timestamps", ts as u8), ("tcp_ecn", if ecn { 1 } else { 2 })]
        {
            let path = format!("/proc/sys/net/ipv4/{key}");
            tb.enter(host, || std::fs::write(&path, v.to_string()))
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("{path}: {e}"))?;
        }
    }
    Ok(())
}

fn secs(ns: u64) -> String {
    format!("{:.9}", ns as f64 / 1e9)
}

/// What QUIC flows share in a run: the sinks' certificate and its fingerprint.
struct Quic<'a> {
    identity: &'a Path,
    fingerprint: &'a str,
}

fn receiver_args(sc: &Scenario, i: usize, t0: u64, quic: &Quic) -> Vec<String> {
    let f = &sc.flows[i];
    let program = match (&f.kind, f.transport) {
        (FlowKind::Cbr, _) => "cbr-recv",
        (FlowKind::Tcp, Transport::Tcp) => "sink",
        (FlowKind::Tcp, Transport::Quic) => "quic-sink",
    };
    let listen = format!("0.0.0.0:{}", BASE_PORT as usize + i);
    let mut a = vec![program.into(), "--listen".into(), listen, "--deadline".into(), secs(sc.duration)];
    if f.transport == Transport::Quic {
        a.extend(["--identity".into(), quic.identity.display().to_string()]);
    }
    a.extend(["--epoch-mono-ns".into(), t0.to_string(), "--bin".into(), secs(sc.output.bin)]);
    a
}

fn sender_args(sc: &Scenario, tb: &Testbed, i: usize, t0: u64, quic: &Quic) -> Vec<String> {
    let f = &sc.flows[i];
    let to = format!("{}:{}", tb.hosts()[f.to].addr, BASE_PORT as usize + i);
    let stop = f.stop.unwrap_or(sc.duration).min(sc.duration);
    let mut a: Vec<String> = match f.kind {
        FlowKind::Tcp if f.transport == Transport::Quic => {
            let mut a = vec!["quic-source".into(), "--connect".into(), to, "--cca".into(), f.cca.clone()];
            a.extend(["--fingerprint".into(), quic.fingerprint.to_string(), "--cc".into(), cc_json(&f.cc)]);
            a.extend(["--deadline".into(), secs(sc.duration)]);
            match f.size {
                Some(size) => a.extend(["--size".into(), size.to_string()]),
                None => a.extend(["--stop".into(), secs(stop)]),
            }
            a
        }
        FlowKind::Tcp => {
            let mut a = vec!["source".into(), "--connect".into(), to, "--cca".into(), f.cca.clone()];
            a.extend(["--mss".into(), f.tcp.mss.to_string(), "--deadline".into(), secs(sc.duration)]);
            match f.size {
                Some(size) => a.extend(["--size".into(), size.to_string()]),
                None => a.extend(["--stop".into(), secs(stop)]),
            }
            a
        }
        FlowKind::Cbr => {
            let c = &f.cbr;
            let mut a = vec!["cbr-send".into(), "--connect".into(), to, "--stop".into(), secs(stop)];
            a.extend([
                "--packet-size".into(),
                c.packet_size.to_string(),
                "--interval".into(),
                secs(c.interval),
            ]);
            a
        }
    };
    a.extend(["--start".into(), secs(f.start), "--epoch-mono-ns".into(), t0.to_string()]);
    if f.kind == FlowKind::Tcp {
        a.extend(["--bin".into(), secs(sc.output.bin)]);
    }
    a
}

/// A controller's parameters as the JSON object `quic-source --cc` reads.
fn cc_json(cc: &Params) -> String {
    let object: serde_json::Map<String, Value> = cc
        .iter()
        .map(|(k, v)| {
            let v = match v {
                ccbench_params::ParamValue::Float(x) => serde_json::json!(x),
                ccbench_params::ParamValue::Int(i) => serde_json::json!(i),
                ccbench_params::ParamValue::Bool(b) => serde_json::json!(b),
                ccbench_params::ParamValue::Str(s) => serde_json::json!(s),
            };
            (k.to_string(), v)
        })
        .collect();
    Value::Object(object).to_string()
}

/// Start a traffic program in `host`'s namespace; its JSON result goes to `out` (a file, not a
/// pipe, so a large result never blocks it), its one-line error to stderr.
fn spawn(tb: &Testbed, host: usize, args: &[String], out: &Path) -> Result<Child, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find ccbench-emu itself: {e}"))?;
    let mut cmd = tb.command(host, &exe.to_string_lossy()).map_err(|e| e.to_string())?;
    cmd.args(args).arg("--out").arg(out).stdout(Stdio::null()).stderr(Stdio::piped());
    cmd.spawn().map_err(|e| format!("cannot start {}: {e}", args[0]))
}

/// Wait for a program until `deadline` (then kill it) and read its JSON result.
fn collect(mut child: Child, out: &Path, deadline: Instant) -> Result<Value, String> {
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if Instant::now() >= deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = child.wait_with_output().map_err(|e| e.to_string())?;
    if !status.status.success() {
        let err = String::from_utf8_lossy(&status.stderr);
        return Err(format!("a traffic program failed ({}): {}", status.status, err.trim()));
    }
    let text =
        ccbench_files::read_input(out, ccbench_files::InputKind::SUMMARY).map_err(|e| e.to_string())?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: not JSON: {e}", out.display()))
}

/// A private folder for the programs' results, created afresh and removed with the run.
struct ResultDir(ccbench_files::TempDir);

impl ResultDir {
    fn new(run_id: &str) -> Result<ResultDir, String> {
        ccbench_files::TempDir::create(run_id).map(ResultDir).map_err(|e| e.to_string())
    }

    fn file(&self, flow: usize, side: &str) -> PathBuf {
        self.0.path().join(format!("flow{flow}-{side}.json"))
    }
}

#[cfg(test)]
mod pcap_tests {
    /// Traces come from the simulator's links; the emulator refuses them in one line.
    #[test]
    fn pcap_is_refused() {
        let text = "duration = \"1s\"\n[bottleneck]\nrate = \"10Mbps\"\n[[flows]]\n[output]\npcap = [\"bottleneck\"]\n";
        let sc = ccbench_scenario::parse_str(text, "t.toml", &[], None).unwrap();
        let e = super::emulated_topology(&sc).err();
        assert_eq!(e.as_deref(), Some("output.pcap: not supported by the emulator yet"));
    }

    /// The emulator builds its links with the simulator's `link_model`, so every link key runs:
    /// a per-packet rate spread, reordering jitter and a token bucket.
    #[test]
    fn every_link_key_is_accepted() {
        for key in ["rate_max = \"20Mbps\"", "jitter = \"2ms\"\njitter_reorder = true", "burst = \"15KB\""] {
            let text = format!("duration = \"1s\"\n[bottleneck]\nrate = \"10Mbps\"\n{key}\n[[flows]]\n");
            let sc = ccbench_scenario::parse_str(&text, "t.toml", &[], None).unwrap();
            let topo = super::emulated_topology(&sc).unwrap_or_else(|e| panic!("{key}: {e}")).topo;
            let link = crate::link::Link::from_spec(&topo.links[0], sc.seed, 0).unwrap();
            assert_eq!(link.rate(), 10e6, "{key}");
        }
    }
}
