//! `ccbench-emu source`: one TCP flow with a chosen kernel congestion control, sized or greedy,
//! with `TCP_INFO` sampled every bin.

use super::args::Flags;
use super::clock::{now_ns, sleep_until, Timeline};
use super::sockopt::{self, ConnectOptions, TCPI_OPT_ECN};
use super::tcpinfo::{payload_acked, Sampler};
use super::{opt_secs, AppError};
use serde_json::{json, Value};
use std::io::{self, ErrorKind, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

pub const FLAGS: &[&str] = &[
    "connect",
    "cca",
    "size",
    "start",
    "stop",
    "deadline",
    "connect-timeout",
    "epoch-mono-ns",
    "bin",
    "mss",
    "notsent-lowat",
    "out",
];

/// Longest blocking write: bounds how late a sample or the stop can be.
const WRITE_SLICE: Duration = Duration::from_millis(2);
/// TCP_INFO polling period while waiting for the last ACK: the FCT's resolution.
const DRAIN_POLL: Duration = Duration::from_millis(1);
/// Pause between connect attempts refused because the sink is not listening yet.
const RETRY_GAP: u64 = 20_000_000;
const SECOND: u64 = 1_000_000_000;
/// `tcpi_state` of a socket that is closed (reset, or done after the peer's FIN).
const TCP_CLOSE: u8 = 7;

struct Plan {
    addr: SocketAddr,
    /// The scenario's name, and the kernel's.
    cca_name: String,
    cca: &'static str,
    size: Option<u64>,
    start_at: u64,
    stop_at: Option<u64>,
    deadline: u64,
    connect_timeout: u64,
    mss: Option<u32>,
    notsent_lowat: Option<u32>,
}

fn plan(flags: &Flags, tl: &Timeline) -> Result<Plan, AppError> {
    let addr = flags.addr("connect")?;
    let cca_name = flags.required("cca")?.to_string();
    let cca = sockopt::kernel_cca(&cca_name)?;
    let size = flags.u64("size")?;
    let start = flags.secs("start")?.unwrap_or(0);
    let stop = flags.secs("stop")?;
    if size == Some(0) {
        return Err(AppError::usage("--size must be at least 1 byte"));
    }
    if size.is_none() && stop.is_none() {
        return Err(AppError::usage("a greedy source (no --size) needs --stop"));
    }
    if stop.is_some_and(|s| s <= start) {
        return Err(AppError::usage("--stop must be after --start"));
    }
    let deadline = flags.secs("deadline")?.unwrap_or(stop.unwrap_or(start) + 120 * SECOND);
    if deadline <= start {
        return Err(AppError::usage("--deadline must be after --start"));
    }
    let lowat = flags.u64("notsent-lowat")?.unwrap_or(128 * 1024);
    Ok(Plan {
        addr,
        cca_name,
        cca,
        size,
        start_at: tl.at(start),
        stop_at: stop.map(|s| tl.at(s)),
        deadline: tl.at(deadline),
        connect_timeout: flags.secs("connect-timeout")?.unwrap_or(10 * SECOND),
        mss: small(flags, "mss")?,
        notsent_lowat: (lowat > 0).then(|| u32::try_from(lowat).unwrap_or(u32::MAX)),
    })
}

fn small(flags: &Flags, name: &str) -> Result<Option<u32>, AppError> {
    match flags.u64(name)? {
        Some(v) if !(1..=65535).contains(&v) => Err(AppError::usage(format!("--{name} must be 1..65535"))),
        v => Ok(v.map(|v| v as u32)),
    }
}

pub fn run(flags: &Flags) -> Result<Value, AppError> {
    let tl = Timeline::from_flags(flags)?;
    let p = plan(flags, &tl)?;
    sleep_until(p.start_at);
    let c = connect_retrying(&p)?;
    let fd = c.stream.as_raw_fd();
    let mut sampler = Sampler::new(tl, c.established);
    let sent = send(&c.stream, &p, &mut sampler);
    let _ = c.stream.shutdown(Shutdown::Write); // FIN after the queued data; fails only if reset
    let last_ack = drain(&c.stream, &p, &mut sampler, sent.written);
    let info = sampler.sample(fd, now_ns(), sent.written);
    let written = sent.written;
    let mut out = report(&tl, &p, &Outcome { c, sent, last_ack });
    if let Some(o) = out.as_object_mut() {
        o.extend(kernel_totals(info.as_ref(), written));
        o.insert("series".into(), json!(sampler.series));
    }
    Ok(out)
}

struct Outcome {
    c: Connected,
    sent: Sent,
    last_ack: Option<u64>,
}

/// The run's own account: times, and what it wrote.
fn report(tl: &Timeline, p: &Plan, o: &Outcome) -> Value {
    let completed = o.last_ack.is_some() && p.size.is_none_or(|s| o.sent.written == s);
    let fct =
        o.last_ack.filter(|_| completed && p.size.is_some()).map(|t| (t - o.c.attempt_start) as f64 / 1e9);
    let end = match (&o.sent.error, completed) {
        (Some(_), _) => "error",
        (None, true) => "done",
        (None, false) => "deadline",
    };
    json!({
        "program": "source",
        "connect": p.addr.to_string(),
        "cca": p.cca_name,
        "cca_kernel": sockopt::get_cca(o.c.stream.as_raw_fd()).unwrap_or_default(),
        "epoch_mono_ns": tl.epoch,
        "bin_s": tl.bin as f64 / 1e9,
        "size_bytes": p.size,
        "start_s": tl.secs(p.start_at),
        "stop_s": p.stop_at.map(|t| tl.secs(t)),
        "connect_attempts": o.c.attempts,
        "connect_start_s": tl.secs(o.c.attempt_start),
        "established_s": tl.secs(o.c.established),
        "writes_done_s": tl.secs(o.sent.done_at),
        "unsent_at_stop_bytes": o.sent.unsent_at_stop,
        "last_ack_s": opt_secs(tl, o.last_ack),
        "completed": completed,
        "fct_s": fct,
        "bytes_sent": o.sent.written,
        "end": end,
        "error": o.sent.error,
    })
}

/// Totals from the final `TCP_INFO` (all null if it could not be read).
fn kernel_totals(info: Option<&libc::tcp_info>, written: u64) -> serde_json::Map<String, Value> {
    let get = |f: &dyn Fn(&libc::tcp_info) -> Value| info.map_or(Value::Null, f);
    let mut m = serde_json::Map::new();
    m.insert("bytes_acked".into(), get(&|i| payload_acked(i, written).into()));
    m.insert("bytes_retrans".into(), get(&|i| i.tcpi_bytes_retrans.into()));
    m.insert("wire_bytes_sent".into(), get(&|i| i.tcpi_bytes_sent.into()));
    m.insert("retransmits".into(), get(&|i| i.tcpi_total_retrans.into()));
    m.insert("mss_bytes".into(), get(&|i| i.tcpi_snd_mss.into()));
    m.insert("min_rtt_us".into(), get(&|i| i.tcpi_min_rtt.into()));
    m.insert("ecn_negotiated".into(), get(&|i| (i.tcpi_options & TCPI_OPT_ECN != 0).into()));
    m.insert("delivered_ce".into(), get(&|i| i.tcpi_delivered_ce.into()));
    m
}

struct Connected {
    stream: TcpStream,
    attempts: u32,
    /// Start of the attempt that succeeded: the FCT's origin.
    attempt_start: u64,
    established: u64,
}

/// Connects, retrying while the sink is not listening (or the route not up) yet, until the
/// connect timeout or the deadline.
fn connect_retrying(p: &Plan) -> Result<Connected, AppError> {
    let opts = ConnectOptions { cca: p.cca, mss: p.mss, notsent_lowat: p.notsent_lowat };
    let give_up = now_ns().saturating_add(p.connect_timeout).min(p.deadline);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let attempt_start = now_ns();
        let left = Duration::from_nanos(give_up.saturating_sub(attempt_start));
        match sockopt::connect(p.addr, &opts, left) {
            Ok(stream) => return Ok(Connected { stream, attempts, attempt_start, established: now_ns() }),
            Err(e) if retryable(&e) && now_ns() + RETRY_GAP < give_up => sleep_until(now_ns() + RETRY_GAP),
            Err(e) => return Err(AppError::run(format!("connect {}: {e} (attempts: {attempts})", p.addr))),
        }
    }
}

fn retryable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNREFUSED | libc::ENETUNREACH | libc::EHOSTUNREACH | libc::EINTR)
    )
}

struct Sent {
    written: u64,
    done_at: u64,
    /// Bytes still unsent in the socket buffer when writing stopped; they go out after `stop`.
    unsent_at_stop: Option<u32>,
    error: Option<String>,
}

/// Writes until `size` bytes are in the socket, or `stop`/the deadline passes.
fn send(mut stream: &TcpStream, p: &Plan, sampler: &mut Sampler) -> Sent {
    let fd = stream.as_raw_fd();
    let buf = vec![0u8; 64 * 1024];
    let end = p.stop_at.unwrap_or(u64::MAX).min(p.deadline);
    let mut sent = Sent { written: 0, done_at: 0, unsent_at_stop: None, error: None };
    if let Err(e) = stream.set_write_timeout(Some(WRITE_SLICE)) {
        sent.error = Some(format!("SO_SNDTIMEO: {e}"));
    }
    while sent.error.is_none() {
        let now = now_ns();
        sampler.maybe(fd, now, sent.written);
        let left = p.size.map_or(u64::MAX, |s| s - sent.written);
        if left == 0 || now >= end {
            break;
        }
        match stream.write(&buf[..left.min(buf.len() as u64) as usize]) {
            Ok(n) => sent.written += n as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => sent.error = Some(format!("send: {e}")),
        }
    }
    sent.done_at = now_ns();
    sent.unsent_at_stop = sockopt::tcp_info(fd).ok().map(|i| i.tcpi_notsent_bytes);
    sent
}

/// Polls TCP_INFO until every written byte is acknowledged (the simulator's `snd_una ≥ size`;
/// the FIN need not be); returns that time, or None if the deadline passes or the connection
/// dies first.
fn drain(stream: &TcpStream, p: &Plan, sampler: &mut Sampler, written: u64) -> Option<u64> {
    let fd = stream.as_raw_fd();
    loop {
        let now = now_ns();
        sampler.maybe(fd, now, written);
        let i = sockopt::tcp_info(fd).ok()?;
        if payload_acked(&i, written) == written {
            return Some(now);
        }
        if now >= p.deadline || i.tcpi_state == TCP_CLOSE {
            return None;
        }
        std::thread::sleep(DRAIN_POLL);
    }
}
