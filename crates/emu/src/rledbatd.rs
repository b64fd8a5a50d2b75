//! Flows with `receiver_cca = "rledbat"` on the real stack: one `rledbatd` per receiving host,
//! started in its namespace before any flow, selecting those flows by their local (listening)
//! ports, with the flow's `[flows.receiver_cc]` parameters, and stopped (SIGTERM: it removes
//! its rules) after the run.
//!
//! The program is `$CCBENCH_RLEDBATD`, else `rledbatd` beside `ccbench-emu` (both are built
//! into `target/release/`).

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use ccbench_aqm::ParamValue;
use ccbench_scenario::Scenario;

use crate::apps::BASE_PORT;
use crate::netns::Testbed;

pub const ENV: &str = "CCBENCH_RLEDBATD";
/// How long a daemon may take to install its rules and answer.
const READY: Duration = Duration::from_secs(10);

/// The `rledbatd` program, or why there is none.
pub fn program() -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var(ENV) {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find ccbench-emu itself: {e}"))?;
    let beside = exe.with_file_name("rledbatd");
    if beside.is_file() {
        return Ok(beside);
    }
    Err(format!(
        "receiver_cca = \"rledbat\" needs rledbatd: build it (cargo build --release -p rledbatd) or set ${ENV}"
    ))
}

/// A running daemon and where it answers.
pub struct Daemon {
    child: Child,
    pub host: usize,
    pub socket: PathBuf,
}

/// Start a daemon on each host that receives an rLEDBAT flow (socket in `dir`, CSV log
/// `rledbatd-<host>.csv` in `out`); wait until each answers.
pub fn start(sc: &Scenario, tb: &Testbed, dir: &Path, out: &Path) -> Result<Vec<Daemon>, String> {
    let mut daemons = Vec::new();
    let mut hosts: Vec<usize> =
        sc.flows.iter().filter(|f| f.tcp.receiver_cca.is_some()).map(|f| f.to).collect();
    hosts.sort_unstable();
    hosts.dedup();
    for host in hosts {
        let socket = dir.join(format!("rledbatd-{host}.sock"));
        let mut args = vec!["run".to_string(), "--socket".into(), socket.display().to_string()];
        args.extend(["--duration".into(), format!("{}ns", sc.duration + 30_000_000_000)]);
        let log = out.join(format!("rledbatd-{}.csv", tb.hosts()[host].name));
        args.extend(["--log".into(), log.display().to_string()]);
        let flows: Vec<_> = sc
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.to == host && f.tcp.receiver_cca.is_some())
            .collect();
        for (i, _) in &flows {
            args.extend(["--local-port".into(), (BASE_PORT as usize + i).to_string()]);
        }
        // One daemon runs one parameter set: the host's first rLEDBAT flow's.
        let params = &flows[0].1.tcp.receiver_cc;
        if let Some((i, _)) = flows.iter().find(|(_, f)| &f.tcp.receiver_cc != params) {
            return Err(format!("flows[{i}].receiver_cc: rLEDBAT flows into one host must share parameters"));
        }
        for (k, v) in params.iter() {
            let v = match v {
                ParamValue::Str(s) => format!("\"{s}\""),
                other => other.to_string(),
            };
            args.extend(["--cc".into(), format!("{k}={v}")]);
        }
        let program = program()?;
        let mut cmd = tb.command(host, &program.to_string_lossy()).map_err(|e| e.to_string())?;
        cmd.args(&args).stdout(Stdio::null()).stderr(Stdio::piped());
        let child = cmd.spawn().map_err(|e| format!("cannot start rledbatd: {e}"))?;
        let mut d = Daemon { child, host, socket };
        wait_ready(&mut d)?;
        daemons.push(d);
    }
    Ok(daemons)
}

fn wait_ready(d: &mut Daemon) -> Result<(), String> {
    let deadline = Instant::now() + READY;
    while !d.socket.exists() {
        if let Some(status) = d.child.try_wait().map_err(|e| e.to_string())? {
            return Err(format!("rledbatd exited ({status}): {}", stderr_of(&mut d.child)));
        }
        if Instant::now() > deadline {
            let _ = d.child.kill();
            return Err("rledbatd did not start within 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut text);
    }
    text.lines().filter(|l| l.contains("error")).collect::<Vec<_>>().join(" ")
}

/// Stop every daemon (SIGTERM, then SIGKILL after 5 s); an error if one had died meanwhile.
pub fn stop(daemons: Vec<Daemon>) -> Result<(), String> {
    let mut failed = None;
    for mut d in daemons {
        if let Some(status) = d.child.try_wait().map_err(|e| e.to_string())? {
            // Killed by someone else (a fail-open test) is not the run's failure.
            if status.code().is_some_and(|c| c != 0) {
                failed = Some(format!("rledbatd on host {} failed: {}", d.host, stderr_of(&mut d.child)));
            }
            continue;
        }
        // SAFETY: kill(2) takes plain integers; the pid is our own child, not yet reaped.
        unsafe { libc::kill(d.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while d.child.try_wait().map_err(|e| e.to_string())?.is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = d.child.kill();
        let _ = d.child.wait();
    }
    failed.map_or(Ok(()), Err)
}
