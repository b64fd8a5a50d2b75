//! `ccbench-emu sink`: accept one TCP connection and count what arrives, per bin.

use super::args::Flags;
use super::clock::{now_ns, Bins, Timeline};
use super::{opt_secs, AppError};
use serde_json::{json, Value};
use std::io::{ErrorKind, Read};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

pub const FLAGS: &[&str] = &["listen", "accept-timeout", "deadline", "epoch-mono-ns", "bin", "out"];

/// Longest single blocking read, so the deadline is checked at least this often.
const READ_SLICE: Duration = Duration::from_millis(100);

pub fn run(flags: &Flags) -> Result<Value, AppError> {
    let listen = flags.addr("listen")?;
    let tl = Timeline::from_flags(flags)?;
    let deadline = tl.at(flags.secs("deadline")?.unwrap_or(120_000_000_000));
    // By default wait for the connection until the deadline: a flow may start late in a run.
    let accept_timeout = flags.secs("accept-timeout")?.unwrap_or(u64::MAX);
    let listener = TcpListener::bind(listen).map_err(|e| AppError::run(format!("bind {listen}: {e}")))?;
    let accept_by = now_ns().saturating_add(accept_timeout).min(deadline);
    let (stream, peer) = accept_until(&listener, accept_by)?;
    drop(listener); // one connection per sink: later connects are refused, not queued.
    let accepted = now_ns();
    let rx = receive(stream, &tl, deadline);
    Ok(json!({
        "program": "sink",
        "listen": listen.to_string(),
        "peer": peer,
        "epoch_mono_ns": tl.epoch,
        "bin_s": tl.bin as f64 / 1e9,
        "accepted_s": tl.secs(accepted),
        "first_byte_s": opt_secs(&tl, rx.first),
        "last_byte_s": opt_secs(&tl, rx.last),
        "bytes": rx.bytes,
        "end": rx.end,
        "error": rx.error,
        "bytes_per_bin": rx.bins.0,
    }))
}

/// Waits in poll(2) (no spinning) until a connection arrives or `by` passes.
fn accept_until(listener: &TcpListener, by: u64) -> Result<(TcpStream, String), AppError> {
    loop {
        let now = now_ns();
        if now >= by {
            return Err(AppError::run("no connection before the accept timeout or deadline"));
        }
        let ms = ((by - now) / 1_000_000).clamp(1, 1000) as libc::c_int;
        let mut pfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, count 1.
        let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
        if ready > 0 {
            let (s, peer) = listener.accept().map_err(|e| AppError::run(format!("accept: {e}")))?;
            return Ok((s, peer.to_string()));
        }
    }
}

struct Received {
    bytes: u64,
    first: Option<u64>,
    last: Option<u64>,
    bins: Bins,
    /// "eof" (the source closed), "deadline", or "error".
    end: &'static str,
    error: Option<String>,
}

/// Reads until EOF, an error, or `deadline`; every read is stamped when it returns.
fn receive(mut stream: TcpStream, tl: &Timeline, deadline: u64) -> Received {
    let mut rx =
        Received { bytes: 0, first: None, last: None, bins: Bins::default(), end: "deadline", error: None };
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let now = now_ns();
        if now >= deadline {
            return rx;
        }
        let slice = Duration::from_nanos(deadline - now).min(READ_SLICE).max(Duration::from_millis(1));
        if let Err(e) = stream.set_read_timeout(Some(slice)) {
            return rx.failed(e);
        }
        match stream.read(&mut buf) {
            Ok(0) => {
                rx.end = "eof";
                return rx;
            }
            Ok(n) => rx.record(tl, now_ns(), n as u64),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => return rx.failed(e),
        }
    }
}

impl Received {
    fn record(&mut self, tl: &Timeline, t: u64, n: u64) {
        self.bytes += n;
        self.first.get_or_insert(t);
        self.last = Some(t);
        self.bins.add(tl.bin_of(t), n);
    }

    fn failed(mut self, e: std::io::Error) -> Received {
        self.end = "error";
        self.error = Some(e.to_string());
        self
    }
}
