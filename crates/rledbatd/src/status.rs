//! What the daemon shows: `rledbatd status` over a Unix socket (one table per request), and
//! the optional CSV log, one row per flow every `log_interval`.
//!
//! Both show, per flow: the window the last ACK carried and what the kernel had offered, the
//! controller's target, its RTT, base RTT and queueing delay, its state, and bytes received.

use std::fmt::Write as _;
use std::io::{BufWriter, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ccbench_cc::Nanos;

use crate::flow::FlowStatus;
use crate::paths::{self, SocketPath};
use crate::shared::Shared;
use crate::signals::{block_stop_signals, stop_daemon};
use crate::table::{Counters, Key};

/// How often the helper thread wakes to log, expire flows and check for the end.
const TICK: Duration = Duration::from_millis(20);
/// The most `rledbatd status` reads: a table of some 100,000 flows.
const STATUS_MAX_BYTES: u64 = 16 << 20;

/// Bind the status socket: refused if anything but a stale socket is at `path` (a live
/// daemon, a file, a directory, a link), which alone is removed (see [`paths::check_socket`]).
pub fn listen(path: &Path) -> Result<(UnixListener, ccbench_files::Owned), String> {
    if let SocketPath::Stale(dev, ino) = paths::check_socket(path)? {
        paths::remove_stale(path, dev, ino)?; // left by a daemon that was killed
    }
    // Fails (address in use) if anything appeared at `path` since: it is never replaced.
    let listener = UnixListener::bind(path).map_err(|e| format!("--socket {}: {e}", path.display()))?;
    listener.set_nonblocking(true).map_err(|e| format!("--socket {}: {e}", path.display()))?;
    // What was bound, so that only this socket is ever removed (not a file put there since).
    let ours = ccbench_files::Owned::record(path).map_err(|e| e.labelled("--socket"))?;
    Ok((listener, ours))
}

/// The helper thread: status requests, the log, idle expiry, `--duration`.
pub fn serve(shared: &Shared, listener: UnixListener, mut log: Option<Log>, stop: &AtomicBool) {
    block_stop_signals();
    let mut next_log = 0;
    while !stop.load(Ordering::SeqCst) {
        let now = shared.clock.now();
        if shared.duration.is_some_and(|d| now >= d) {
            stop_daemon();
            break;
        }
        while let Ok((mut conn, _)) = listener.accept() {
            let _ = conn.set_nonblocking(false);
            let _ = conn.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = conn.write_all(report(shared, now).as_bytes());
        }
        if let Some(l) = log.as_mut().filter(|_| now >= next_log) {
            let rows = shared.table().status();
            l.write(now, &rows);
            next_log = now.saturating_add(shared.log_interval); // a huge interval: never again
        }
        shared.table().expire(now);
        std::thread::sleep(TICK);
    }
    if let Some(mut l) = log {
        l.write(shared.clock.now(), &shared.table().status());
    }
}

fn report(shared: &Shared, now: Nanos) -> String {
    let (rows, counters) = {
        let t = shared.table();
        (t.status(), t.counters)
    };
    format_report(shared.queue, now, &counters, &rows)
}

/// Milliseconds with one decimal, or `missing`.
fn ms_or(ns: Option<Nanos>, missing: &str) -> String {
    ns.map_or(missing.into(), |v| format!("{:.1}", v as f64 / 1e6))
}

fn ms(ns: Option<Nanos>) -> String {
    ms_or(ns, "-")
}

fn bytes(b: Option<u64>) -> String {
    b.map_or("-".into(), |v| v.to_string())
}

/// The text `rledbatd status` prints.
pub fn format_report(queue: u16, now: Nanos, c: &Counters, rows: &[(Key, FlowStatus, Nanos)]) -> String {
    let mut s = format!(
        "rledbatd on NFQUEUE {queue}/{}, up {:.1} s: packets {}, rewritten {}, unreadable {}, flows {} (opened {}, closed {})\n",
        queue + 1,
        now as f64 / 1e9,
        c.packets,
        c.rewritten,
        c.unreadable,
        rows.len(),
        c.flows_opened,
        c.flows_closed
    );
    let _ = writeln!(
        s,
        "{:<24} {:<24} {:<10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>12}",
        "local",
        "remote",
        "state",
        "window_B",
        "kernel_B",
        "target_B",
        "rtt_ms",
        "base_ms",
        "qdelay_ms",
        "received_B"
    );
    for (k, f, _) in rows {
        let state = if f.controlled { f.probe.state } else { "untracked" };
        let _ = writeln!(
            s,
            "{:<24} {:<24} {:<10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>12}",
            endpoint(k.0, k.1),
            endpoint(k.2, k.3),
            state,
            f.advertised,
            f.offered,
            bytes(f.target),
            ms(f.probe.rtt),
            ms(f.probe.base_rtt),
            ms(f.probe.queuing_delay),
            f.bytes_in
        );
    }
    s
}

fn endpoint(addr: std::net::IpAddr, port: u16) -> String {
    std::net::SocketAddr::new(addr, port).to_string()
}

/// `rledbatd status`: connect to the daemon at `path` (an error: no daemon answers there).
pub fn connect(path: &Path) -> Result<UnixStream, String> {
    UnixStream::connect(path).map_err(|e| paths::no_daemon(path, &e))
}

/// Longest `rledbatd status` waits for the whole table, however slowly it trickles in.
pub const STATUS_DEADLINE: Duration = Duration::from_secs(5);

/// The table the daemon on `conn` (at `path`) sends.
pub fn query(mut conn: UnixStream, path: &Path) -> Result<String, String> {
    let err = |why: String| format!("--socket {}: {why}", path.display());
    let deadline = std::time::Instant::now() + STATUS_DEADLINE;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    // Capped in size and in time: whatever answers at `path` may not be an rledbatd, and may
    // never stop, or send a byte every few seconds.
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(err(format!("no complete answer within {} s", STATUS_DEADLINE.as_secs())));
        }
        conn.set_read_timeout(Some(left)).map_err(|e| err(e.to_string()))?;
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                continue
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(err(e.to_string())),
        }
        if bytes.len() as u64 >= STATUS_MAX_BYTES {
            bytes.truncate(STATUS_MAX_BYTES as usize);
            break;
        }
    }
    String::from_utf8(bytes).map_err(|_| err("the answer is not UTF-8 text; not an rledbatd".into()))
}

/// The CSV log: flushed after every interval's rows, so a killed daemon loses at most one.
pub struct Log(BufWriter<std::fs::File>);

pub const LOG_HEADER: &str =
    "t_s,local,remote,state,window_bytes,kernel_window_bytes,target_bytes,rtt_ms,base_rtt_ms,queuing_delay_ms,received_bytes";

impl Log {
    pub fn create(path: &Path) -> Result<Log, String> {
        let mut w = BufWriter::new(paths::create_log(path)?);
        writeln!(w, "{LOG_HEADER}").map_err(|e| format!("--log {}: {e}", path.display()))?;
        Ok(Log(w))
    }

    fn write(&mut self, now: Nanos, rows: &[(Key, FlowStatus, Nanos)]) {
        for (k, f, _) in rows {
            let state = if f.controlled { f.probe.state } else { "untracked" };
            let _ = writeln!(
                self.0,
                "{:.3},{},{},{},{},{},{},{},{},{},{}",
                now as f64 / 1e9,
                endpoint(k.0, k.1),
                endpoint(k.2, k.3),
                state,
                f.advertised,
                f.offered,
                f.target.map_or(String::new(), |t| t.to_string()),
                ms_or(f.probe.rtt, ""),
                ms_or(f.probe.base_rtt, ""),
                ms_or(f.probe.queuing_delay, ""),
                f.bytes_in
            );
        }
        let _ = self.0.flush();
    }
}
