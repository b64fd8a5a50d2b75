//! `ccbench-emu run` end to end: a real CUBIC download over our 10 Mbps / 40 ms bottleneck, the
//! run directory it writes, and what killing it at any moment leaves behind (nothing, once the
//! next run has reaped). Needs root; skipped with a printed reason otherwise.

mod common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

const EXE: &str = env!("CARGO_BIN_EXE_ccbench-emu");

const DUMBBELL: &str = r#"
duration = "DURATION"
warmup = "2s"
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
buffer = "1bdp"
[[flows]]
cca = "cubic"
"#;

fn scenario(dir: &Path, duration: &str) -> std::path::PathBuf {
    let path = dir.join("s.toml");
    std::fs::write(&path, DUMBBELL.replace("DURATION", duration)).unwrap();
    path
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ccbench-emu-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `ccbench-emu run SCENARIO --out OUT` in the background, output discarded.
fn spawn_run(scenario: &Path, out: &Path) -> Child {
    Command::new(EXE)
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Namespaces a `ccbench-emu` process with `pid` owns (their names start `ccb-<pid>-`).
fn namespaces_of(pid: u32) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let prefix = format!("ccb-{pid}-");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(str::to_string)
        .collect()
}

fn wait_bounded(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait().ok()
}

#[test]
fn cubic_download_fills_our_bottleneck_and_writes_a_run_directory() {
    require_netns!();
    let dir = tmp("run");
    let out = dir.join("out");
    let mut child = spawn_run(&scenario(&dir, "8s"), &out);
    let status = wait_bounded(&mut child, Duration::from_secs(40)).unwrap();
    assert!(status.success(), "ccbench-emu run failed: {status}");
    assert!(namespaces_of(child.id()).is_empty(), "namespaces left behind");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let flow = &summary["flows"][0];
    let goodput = flow["goodput_mbps"].as_f64().unwrap();
    assert!(goodput > 8.5, "goodput {goodput} Mbps of 10");
    assert_eq!(flow["path"][0], "bottleneck");
    let link = summary["links"].as_array().unwrap().iter().find(|l| l["name"] == "bottleneck").unwrap();
    let util = link["utilization"].as_f64().unwrap();
    assert!(util > 0.9 && util < 1.02, "utilization {util}");
    // A 1-BDP buffer: queueing delay up to about one RTT (40 ms).
    let p99 = link["queue_delay_ms"]["p99"].as_f64().unwrap();
    assert!(p99 > 10.0 && p99 < 45.0, "p99 queueing delay {p99} ms");
    for name in ["flows", "links", "sojourn", "owd"] {
        assert!(out.join(format!("{name}.parquet")).is_file(), "{name}.parquet");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A VoIP-like CBR flow beside a bulk CUBIC flow: its one-way delay shows the queue.
#[test]
fn cbr_beside_cubic_measures_one_way_delay() {
    require_netns!();
    let dir = tmp("cbr");
    let path = dir.join("voip.toml");
    let text = DUMBBELL.replace("DURATION", "6s").replace("rtt = \"40ms\"", "rtt = \"100ms\"")
        + "[[flows]]\nname = \"voip\"\ntype = \"cbr\"\n";
    std::fs::write(&path, text).unwrap();
    let out = dir.join("out");
    let mut child = spawn_run(&path, &out);
    assert!(wait_bounded(&mut child, Duration::from_secs(40)).unwrap().success());
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let voip = summary["flows"].as_array().unwrap().iter().find(|f| f["name"] == "voip").unwrap();
    assert_eq!(voip["kind"], "cbr");
    // 50 ms one way plus up to one 100 ms buffer of queueing.
    let (p50, p99) = (voip["owd_ms"]["p50"].as_f64().unwrap(), voip["owd_ms"]["p99"].as_f64().unwrap());
    assert!(p50 > 50.0 && p99 < 160.0, "one-way delay p50 {p50} p99 {p99}");
    assert!(voip["packets_lost"].as_u64().unwrap() < 10);
    // 160-byte payloads every 20 ms: 64 kbit/s.
    let goodput = voip["goodput_mbps"].as_f64().unwrap();
    assert!((goodput - 0.064).abs() < 0.005, "{goodput}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_scenarios_are_one_line_errors() {
    let dir = tmp("bad");
    let path = dir.join("bad.toml");
    std::fs::write(&path, DUMBBELL.replace("DURATION", "8s").replace("\"cubic\"", "\"vegas\"")).unwrap();
    let out = Command::new(EXE).arg("run").arg(&path).args(["--out", "/nonexistent/x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("flows[0].cca") && err.contains("this kernel offers: "), "{err}");
    let out = Command::new(EXE).args(["run", "--out"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Start a long run and wait until its namespaces exist (bounded).
fn start_long_run(dir: &Path) -> Child {
    let child = spawn_run(&scenario(dir, "60s"), &dir.join("out"));
    let until = Instant::now() + Duration::from_secs(15);
    while namespaces_of(child.id()).len() < 2 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the traffic programs start too.
    std::thread::sleep(Duration::from_millis(1500));
    child
}

fn pids_in(namespaces: &[String]) -> Vec<i32> {
    let mut pids = Vec::new();
    for ns in namespaces {
        let out = Command::new("ip").args(["netns", "pids", ns]).output().unwrap();
        pids.extend(
            String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|p| p.parse::<i32>().ok()),
        );
    }
    pids
}

/// Running (a zombie waiting for its reparented parent to reap it counts as gone).
fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit_once(") ").and_then(|(_, rest)| rest.chars().next());
    kill(Pid::from_raw(pid), None).is_ok() && !matches!(state, None | Some('Z') | Some('X'))
}

/// Whether all of `pids` are gone within two seconds (a SIGKILLed process needs a moment).
fn all_gone(pids: &[i32]) -> bool {
    let until = Instant::now() + Duration::from_secs(2);
    while pids.iter().any(|&p| alive(p)) {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[test]
fn interrupting_a_run_removes_everything_it_made() {
    require_netns!();
    let dir = tmp("int");
    let mut child = start_long_run(&dir);
    let namespaces = namespaces_of(child.id());
    assert!(!namespaces.is_empty(), "the run never created its namespaces");
    let programs = pids_in(&namespaces);
    assert!(!programs.is_empty(), "no traffic program was running");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let status = wait_bounded(&mut child, Duration::from_secs(15)).unwrap();
    assert!(!status.success());
    assert!(namespaces_of(child.id()).is_empty(), "namespaces left after SIGINT");
    assert!(all_gone(&programs), "traffic programs left after SIGINT");
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGKILL at several moments, setting up included: the next reap always leaves nothing.
#[test]
fn a_run_killed_at_any_moment_is_reaped() {
    require_netns!();
    let dir = tmp("anytime");
    for delay_ms in [0, 20, 100, 300, 800] {
        let mut child = spawn_run(&scenario(&dir, "60s"), &dir.join("out"));
        std::thread::sleep(Duration::from_millis(delay_ms));
        let programs = pids_in(&namespaces_of(child.id()));
        kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
        let _ = wait_bounded(&mut child, Duration::from_secs(5));
        // An `ip netns add` it started may still be finishing: let it, then reap.
        std::thread::sleep(Duration::from_millis(300));
        ccbench_emu::netns::reap_stale();
        assert!(namespaces_of(child.id()).is_empty(), "namespaces left after a kill at {delay_ms} ms");
        assert!(all_gone(&programs), "programs left after a kill at {delay_ms} ms");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_run_is_reaped_by_the_next_one() {
    require_netns!();
    let dir = tmp("kill");
    let mut child = start_long_run(&dir);
    let namespaces = namespaces_of(child.id());
    assert!(!namespaces.is_empty(), "the run never created its namespaces");
    let programs = pids_in(&namespaces);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    let _ = wait_bounded(&mut child, Duration::from_secs(5));
    // A SIGKILL cannot be caught: what it left stays until a reap, which every run does first
    // (another test's run may already have done it), removing only what dead owners left.
    ccbench_emu::netns::reap_stale();
    assert!(namespaces_of(child.id()).is_empty(), "namespaces left after the reap");
    assert!(all_gone(&programs), "traffic programs left after the reap");
    let _ = std::fs::remove_dir_all(&dir);
}
