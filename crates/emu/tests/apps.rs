//! The traffic programs end to end on loopback in the default namespace. Every child process
//! runs under a timeout and is killed if it overruns, so no test can hang.

use serde_json::Value;
use std::net::{TcpListener, UdpSocket};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_ccbench-emu");

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn")
}

/// Waits for `child` at most `limit` (reading its pipes in a thread so a big result cannot
/// block it); kills it and fails the test on overrun.
fn finish(child: Child, limit: Duration) -> Output {
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("ccbench-emu still running after {limit:?}");
        }
    }
}

fn json(out: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    serde_json::from_slice(&out.stdout).expect("one JSON document on stdout")
}

/// A free port on `ip`; each test uses its own loopback address (all of 127/8 is loopback), so
/// tests running in parallel cannot pick each other's ports.
fn tcp_port(ip: &str) -> String {
    TcpListener::bind((ip, 0)).unwrap().local_addr().unwrap().to_string()
}

fn udp_port(ip: &str) -> String {
    UdpSocket::bind((ip, 0)).unwrap().local_addr().unwrap().to_string()
}

/// A UDP receiver started on a free port of 127.0.0.6. The port is free when picked but may be
/// taken before the child binds it (by another test run on this machine), so a child that exits
/// at once is started again on another port, a bounded number of times.
fn listening(start: impl Fn(&str) -> Child) -> (String, Child) {
    for _ in 0..5 {
        let addr = udp_port("127.0.0.6");
        let mut child = start(&addr);
        std::thread::sleep(Duration::from_millis(100));
        match child.try_wait().expect("try_wait") {
            Some(_) => continue, // could not bind: pick another port
            None => return (addr, child),
        }
    }
    panic!("cbr-recv could not bind a port on 127.0.0.6 in 5 attempts");
}

fn epoch() -> String {
    ccbench_emu::apps::clock::now_ns().to_string()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

const LIMIT: Duration = Duration::from_secs(20);

#[test]
fn sized_cubic_transfer_counts_bytes_and_finishes() {
    let (addr, ep) = (tcp_port("127.0.0.2"), epoch());
    let sink = spawn(&["sink", "--listen", &addr, "--deadline", "15", "--epoch-mono-ns", &ep]);
    let args =
        ["--connect", &addr, "--cca", "cubic", "--size", "2000000", "--mss", "1448", "--epoch-mono-ns", &ep];
    let src = spawn(&[&["source"], &args[..]].concat());
    let (src, sink) = (json(&finish(src, LIMIT)), json(&finish(sink, LIMIT)));
    assert_eq!(src["cca_kernel"], "cubic");
    assert_eq!(src["mss_bytes"], 1448, "payload per segment, as the scenario's mss");
    assert_eq!(src["bytes_sent"], 2_000_000);
    assert_eq!(src["bytes_acked"], 2_000_000);
    assert_eq!(src["completed"], true);
    assert_eq!(src["end"], "done");
    let fct = f(&src["fct_s"]);
    assert!(fct > 0.0 && fct < 5.0, "fct {fct}");
    assert!(f(&src["last_ack_s"]) >= f(&src["writes_done_s"]));
    assert_eq!(sink["bytes"], 2_000_000);
    assert_eq!(sink["end"], "eof");
    let binned: u64 = sink["bytes_per_bin"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).sum();
    assert_eq!(binned, 2_000_000);
    assert!(!src["series"]["t_s"].as_array().unwrap().is_empty());
}

#[test]
fn greedy_transfer_stops_at_its_stop_time() {
    let (addr, ep) = (tcp_port("127.0.0.3"), epoch());
    let sink = spawn(&["sink", "--listen", &addr, "--deadline", "10", "--epoch-mono-ns", &ep]);
    let args =
        ["--connect", &addr, "--cca", "reno", "--start", "0.3", "--stop", "1.3", "--epoch-mono-ns", &ep];
    let src = spawn(&[&["source"], &args[..]].concat());
    let (src, sink) = (json(&finish(src, LIMIT)), json(&finish(sink, LIMIT)));
    assert_eq!(src["cca_kernel"], "reno");
    assert!(f(&src["connect_start_s"]) >= 0.3);
    let done = f(&src["writes_done_s"]);
    assert!((1.3..1.4).contains(&done), "writes done at {done}");
    let last = f(&sink["last_byte_s"]);
    assert!((1.2..1.4).contains(&last), "last byte at {last}");
    assert_eq!(src["completed"], true);
    assert_eq!(src["fct_s"], Value::Null, "greedy flows have no FCT");
    assert_eq!(sink["bytes"], src["bytes_sent"]);
    assert_eq!(src["bytes_acked"], src["bytes_sent"]);
    // One TCP_INFO sample per 100 ms bin between connect and stop, plus the first and last.
    let samples = src["series"]["srtt_us"].as_array().unwrap().len();
    assert!((10..=14).contains(&samples), "{samples} samples");
}

#[test]
fn sink_deadline_cuts_a_longer_flow_and_both_end_in_time() {
    let (addr, ep) = (tcp_port("127.0.0.7"), epoch());
    let sink = spawn(&["sink", "--listen", &addr, "--deadline", "0.5", "--epoch-mono-ns", &ep]);
    let src = spawn(&["source", "--connect", &addr, "--cca", "bbr", "--stop", "5", "--epoch-mono-ns", &ep]);
    let (src, sink) = (json(&finish(src, Duration::from_secs(3))), json(&finish(sink, LIMIT)));
    assert_eq!(sink["end"], "deadline");
    assert!(f(&sink["last_byte_s"]) <= 0.6);
    assert_eq!(src["end"], "error", "the sink's close resets the connection");
    assert_eq!(src["completed"], false);
    assert!(f(&src["writes_done_s"]) < 1.0);
}

#[test]
fn bad_cca_is_a_one_line_usage_error() {
    let available = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap();
    for cca in ["vegas", "ledbat"] {
        let out = finish(spawn(&["source", "--connect", "127.0.0.1:9", "--cca", cca, "--size", "1"]), LIMIT);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: "), "{err}");
        for name in available.split_whitespace() {
            assert!(err.contains(name), "{err} lacks {name}");
        }
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn bad_flags_exit_2_and_failed_runs_exit_1_in_bounded_time() {
    for args in [&["source", "--bogus", "1"][..], &["sink"], &["cbr-send", "--connect", "x"], &["nope"]] {
        let out = finish(spawn(args), LIMIT);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
    }
    // Nobody listens: the source retries, then gives up after its connect timeout.
    let src = spawn(&[
        "source",
        "--connect",
        &tcp_port("127.0.0.4"),
        "--cca",
        "cubic",
        "--size",
        "1",
        "--connect-timeout",
        "0.3",
    ]);
    let out = finish(src, LIMIT);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8(out.stderr).unwrap().contains("connect"));
    // Nobody connects: the sink gives up after its accept timeout.
    let out = finish(spawn(&["sink", "--listen", &tcp_port("127.0.0.5"), "--accept-timeout", "0.3"]), LIMIT);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn cbr_on_loopback_has_tiny_delay_and_no_loss() {
    let ep = epoch();
    let (addr, recv) = listening(|addr| {
        spawn(&[
            "cbr-recv",
            "--listen",
            addr,
            "--idle-timeout",
            "0.5",
            "--deadline",
            "10",
            "--epoch-mono-ns",
            &ep,
        ])
    });
    let args =
        ["--connect", &addr, "--packet-size", "200", "--interval", "0.01", "--start", "0.2", "--stop", "1"];
    let send = spawn(&[&["cbr-send"], &args[..], &["--epoch-mono-ns", &ep]].concat());
    let (send, recv) = (json(&finish(send, LIMIT)), json(&finish(recv, LIMIT)));
    // 0.2 + k·0.01 < 1.0: 80 slots. A sender that starts late on a loaded machine skips the
    // slots already past (and says so) rather than bursting them.
    let sent = send["packets_sent"].as_u64().unwrap();
    assert_eq!(sent + send["slots_skipped"].as_u64().unwrap(), 80);
    assert!(sent >= 60, "{sent} sent");
    assert_eq!(send["send_errors"], 0);
    assert_eq!(recv["received"], sent);
    assert_eq!(recv["lost"], 0);
    assert_eq!(recv["duplicates"], 0);
    assert_eq!(recv["bytes"], sent * 200);
    assert_eq!(recv["end"], "idle");
    let (min, max) = (f(&recv["owd_us"]["min"]), f(&recv["owd_us"]["max"]));
    assert!(min > 0.0 && max < 20_000.0, "owd {min}..{max} µs");
    let sent_s = recv["datagrams"]["sent_s"].as_array().unwrap();
    assert!((f(&sent_s[0]) - 0.2).abs() < 0.05, "first send at {}", sent_s[0]);
}
