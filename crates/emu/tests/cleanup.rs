//! A process holding a testbed dies: by SIGTERM it cleans up itself; by SIGKILL it cannot, and
//! `reap_stale` removes what it left. The holder is this test binary re-run in helper mode.
//! Needs root; skipped with a printed reason otherwise.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ccbench_emu::netns::{self, Testbed};

const HELPER_ENV: &str = "CCBENCH_EMU_HOLD_TESTBED";

/// Helper mode only (a no-op in a normal test run): hold a testbed with a process inside it.
#[test]
fn hold_testbed_helper() {
    if std::env::var_os(HELPER_ENV).is_none() {
        eprintln!("hold_testbed_helper: only does something when spawned by the cleanup tests");
        return;
    }
    let tb = Testbed::new(&["x", "y"]).unwrap();
    let mut sleeper = tb.command(0, "sleep").unwrap().arg("30").stdout(Stdio::null()).spawn().unwrap();
    println!("RUN {} {}", tb.run_id(), sleeper.id());
    // Killed long before this by the test that spawned us.
    std::thread::sleep(Duration::from_secs(20));
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

/// The helper process; killed and reaped on drop, so a failing test leaves nothing behind.
struct Holder {
    child: Child,
    run_id: String,
    sleeper: i32,
}

impl Holder {
    fn start() -> Holder {
        let exe = std::env::current_exe().unwrap();
        let mut child = Command::new(exe)
            .args(["--exact", "hold_testbed_helper", "--nocapture", "--test-threads=1"])
            .env(HELPER_ENV, "1")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        // Bounded: the helper prints within a second or exits (EOF).
        // libtest prints "test hold_testbed_helper ... " first, on the same line.
        let line =
            out.lines().map_while(Result::ok).find_map(|l| l.split_once("RUN ").map(|(_, r)| r.to_string()));
        let line = line.expect("helper did not start");
        let mut f = line.split_whitespace();
        let run_id = f.next().unwrap().to_string();
        let sleeper = f.next().unwrap().parse().unwrap();
        Holder { child, run_id, sleeper }
    }

    fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), sig).unwrap();
    }

    /// Wait up to 10 s for the helper to exit.
    fn wait(&mut self) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        netns::reap_stale();
    }
}

/// Whether `pid` is gone (or a zombie: dead, waiting for a parent that may never reap it).
fn dead(pid: i32) -> bool {
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(s) if s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')) => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

#[test]
fn sigterm_cleans_up() {
    require_netns!();
    let mut h = Holder::start();
    assert_eq!(netns::namespaces_of(&h.run_id).len(), 2);
    h.signal(nix::sys::signal::SIGTERM);
    let status = h.wait().expect("the helper did not exit after SIGTERM");
    assert_eq!(status.code(), Some(130));
    assert_eq!(netns::namespaces_of(&h.run_id), Vec::<String>::new());
    assert!(dead(h.sleeper), "the process inside the namespace survived");
}

#[test]
fn reap_stale_removes_what_sigkill_left() {
    require_netns!();
    let mut h = Holder::start();
    h.signal(nix::sys::signal::SIGKILL);
    h.wait().expect("the helper did not die");
    let left = netns::namespaces_of(&h.run_id);
    assert_eq!(left.len(), 2, "a SIGKILLed holder cannot clean up");
    let reaped = netns::reap_stale();
    for n in &left {
        assert!(reaped.contains(n), "{n} not reaped: {reaped:?}");
    }
    assert_eq!(netns::namespaces_of(&h.run_id), Vec::<String>::new());
    assert!(dead(h.sleeper), "the process inside the namespace survived");
}

#[test]
fn reap_stale_spares_live_testbeds() {
    require_netns!();
    let tb = Testbed::new(&["only"]).unwrap();
    netns::reap_stale();
    assert_eq!(netns::namespaces_of(tb.run_id()).len(), 1);
    let id = tb.run_id().to_string();
    drop(tb);
    assert!(netns::namespaces_of(&id).is_empty());
}
