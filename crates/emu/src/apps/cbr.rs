//! `ccbench-emu cbr-send` / `cbr-recv`: constant-bit-rate UDP datagrams whose first 16 bytes are
//! the sequence number and the sender's CLOCK_MONOTONIC send time (both big-endian u64), so the
//! receiver measures one-way delay directly (all namespaces share the host clock).

use super::args::Flags;
use super::clock::{now_ns, sleep_until, Bins, Timeline};
use super::{opt_secs, AppError};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

pub const SEND_FLAGS: &[&str] =
    &["connect", "packet-size", "interval", "start", "stop", "epoch-mono-ns", "out"];
pub const RECV_FLAGS: &[&str] = &["listen", "deadline", "idle-timeout", "epoch-mono-ns", "bin", "out"];

/// Bytes of the sequence number + send time at the start of every payload.
const HEADER: usize = 16;

pub fn send(flags: &Flags) -> Result<Value, AppError> {
    let addr = flags.addr("connect")?;
    let tl = Timeline::from_flags(flags)?;
    let size = flags.u64("packet-size")?.unwrap_or(160);
    let interval = flags.secs("interval")?.unwrap_or(20_000_000);
    let start = tl.at(flags.secs("start")?.unwrap_or(0));
    let stop = tl.at(flags.secs("stop")?.ok_or_else(|| AppError::usage("--stop is required"))?);
    if !(HEADER as u64..=65507).contains(&size) {
        return Err(AppError::usage(format!("--packet-size must be {HEADER}..65507 bytes")));
    }
    if interval < 10_000 {
        return Err(AppError::usage("--interval must be at least 0.00001 s"));
    }
    let socket = udp_to(addr)?;
    let s = transmit(&socket, size as usize, start, interval, stop);
    Ok(json!({
        "program": "cbr-send",
        "connect": addr.to_string(),
        "epoch_mono_ns": tl.epoch,
        "packet_size_bytes": size,
        "interval_s": interval as f64 / 1e9,
        "packets_sent": s.packets,
        "bytes_sent": s.packets * size,
        "send_errors": s.errors,
        "slots_skipped": s.skipped,
        "first_send_s": opt_secs(&tl, s.first),
        "last_send_s": opt_secs(&tl, s.last),
        "late_max_us": s.late_max as f64 / 1e3,
    }))
}

#[derive(Default)]
struct Sent {
    packets: u64,
    errors: u64,
    skipped: u64,
    late_max: u64,
    first: Option<u64>,
    last: Option<u64>,
}

/// Sends datagram k at start + (skipped + k)·interval while that is before `stop`. Slots
/// already past when we begin are skipped (not sent as a burst); a late wake-up later on sends
/// at once and keeps the grid.
fn transmit(socket: &UdpSocket, size: usize, start: u64, interval: u64, stop: u64) -> Sent {
    let mut buf = vec![0u8; size];
    let mut s = Sent { skipped: now_ns().saturating_sub(start).div_ceil(interval), ..Sent::default() };
    loop {
        let due = start.saturating_add((s.skipped + s.packets).saturating_mul(interval));
        if due >= stop {
            return s;
        }
        sleep_until(due);
        let now = now_ns();
        buf[..8].copy_from_slice(&s.packets.to_be_bytes());
        buf[8..HEADER].copy_from_slice(&now.to_be_bytes());
        // A refused send (ICMP port unreachable: receiver not up yet) only loses that datagram.
        if socket.send(&buf).is_err() {
            s.errors += 1;
        }
        s.late_max = s.late_max.max(now.saturating_sub(due));
        s.first.get_or_insert(now);
        s.last = Some(now);
        s.packets += 1;
    }
}

fn udp_to(addr: SocketAddr) -> Result<UdpSocket, AppError> {
    let local: SocketAddr = if addr.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }.parse().expect("literal");
    let s = UdpSocket::bind(local).map_err(|e| AppError::run(format!("bind: {e}")))?;
    s.connect(addr).map_err(|e| AppError::run(format!("connect {addr}: {e}")))?;
    Ok(s)
}

pub fn recv(flags: &Flags) -> Result<Value, AppError> {
    let listen = flags.addr("listen")?;
    let tl = Timeline::from_flags(flags)?;
    let deadline = tl.at(flags.secs("deadline")?.unwrap_or(120_000_000_000));
    let idle = flags.secs("idle-timeout")?;
    let socket = UdpSocket::bind(listen).map_err(|e| AppError::run(format!("bind {listen}: {e}")))?;
    let mut log = Log::default();
    let mut buf = vec![0u8; 65536];
    let end = loop {
        let now = now_ns();
        let idle_end = match (idle, log.last_arrival) {
            (Some(i), Some(last)) => last.saturating_add(i),
            _ => u64::MAX,
        };
        if now >= deadline.min(idle_end) {
            break if now >= deadline { "deadline" } else { "idle" };
        }
        let wait = (deadline.min(idle_end) - now).clamp(1_000_000, 100_000_000);
        socket
            .set_read_timeout(Some(Duration::from_nanos(wait)))
            .map_err(|e| AppError::run(e.to_string()))?;
        match socket.recv(&mut buf) {
            Ok(n) => log.record(&tl, now_ns(), &buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(AppError::run(format!("recv: {e}"))),
        }
    };
    Ok(log.report(&tl, listen, end))
}

/// Everything the receiver saw, one entry per datagram.
#[derive(Default)]
struct Log {
    seq: Vec<u64>,
    sent_s: Vec<f64>,
    owd_us: Vec<f64>,
    seen: HashSet<u64>,
    max_seq: Option<u64>,
    duplicates: u64,
    reordered: u64,
    malformed: u64,
    bytes: u64,
    bins: Bins,
    last_arrival: Option<u64>,
}

impl Log {
    fn record(&mut self, tl: &Timeline, now: u64, d: &[u8]) {
        self.last_arrival = Some(now);
        let (Some(seq), Some(sent)) = (be_u64(d, 0), be_u64(d, 8)) else {
            self.malformed += 1;
            return;
        };
        if !self.seen.insert(seq) {
            self.duplicates += 1;
            return;
        }
        if self.max_seq.is_some_and(|m| seq < m) {
            self.reordered += 1;
        }
        self.max_seq = Some(self.max_seq.map_or(seq, |m| m.max(seq)));
        self.bytes += d.len() as u64;
        self.bins.add(tl.bin_of(now), d.len() as u64);
        self.seq.push(seq);
        self.sent_s.push(tl.secs(sent));
        self.owd_us.push((now as i128 - sent as i128) as f64 / 1e3);
    }

    fn report(self, tl: &Timeline, listen: SocketAddr, end: &str) -> Value {
        let received = self.seq.len() as u64;
        let lost = self.max_seq.map_or(0, |m| m + 1 - received);
        json!({
            "program": "cbr-recv",
            "listen": listen.to_string(),
            "epoch_mono_ns": tl.epoch,
            "bin_s": tl.bin as f64 / 1e9,
            "end": end,
            "received": received,
            "lost": lost,
            "duplicates": self.duplicates,
            "reordered": self.reordered,
            "malformed": self.malformed,
            "bytes": self.bytes,
            "last_arrival_s": opt_secs(tl, self.last_arrival),
            "owd_us": summary(&self.owd_us),
            "bytes_per_bin": self.bins.0,
            "datagrams": { "seq": self.seq, "sent_s": self.sent_s, "owd_us": self.owd_us },
        })
    }
}

fn be_u64(d: &[u8], at: usize) -> Option<u64> {
    d.get(at..at + 8).map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
}

/// min / mean / percentiles (nearest rank) / max; null fields when nothing arrived.
fn summary(v: &[f64]) -> Value {
    if v.is_empty() {
        return json!({ "min": null, "mean": null, "p50": null, "p95": null, "p99": null, "max": null });
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let pct = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    json!({
        "min": s[0],
        "mean": s.iter().sum::<f64>() / s.len() as f64,
        "p50": pct(0.5),
        "p95": pct(0.95),
        "p99": pct(0.99),
        "max": s[s.len() - 1],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_counts_losses_duplicates_reordering() {
        let tl = Timeline { epoch: 0, bin: 100 };
        let mut log = Log::default();
        let dgram = |seq: u64, sent: u64| [seq.to_be_bytes(), sent.to_be_bytes()].concat();
        for (seq, t) in [(0, 10), (2, 30), (1, 20), (2, 30), (5, 60)] {
            log.record(&tl, t + 5, &dgram(seq, t));
        }
        log.record(&tl, 99, b"short");
        let r = log.report(&tl, "127.0.0.1:1".parse().unwrap(), "idle");
        assert_eq!(r["received"], 4);
        assert_eq!(r["lost"], 2); // 3 and 4
        assert_eq!(r["duplicates"], 1);
        assert_eq!(r["reordered"], 1);
        assert_eq!(r["malformed"], 1);
        assert_eq!(r["owd_us"]["max"], 0.005);
    }
}
