//! Traffic programs run inside the emulator's host namespaces (`ip netns exec <ns> ccbench-emu …`).
//!
//! # Contract
//!
//! Every program takes `--flag value` (or `--flag=value`) pairs only, runs for a bounded time,
//! and writes **one JSON document** to stdout, or to `--out FILE` (written to `FILE.tmp` and
//! renamed, so a reader never sees half a file). On failure it writes one line
//! `error: …` to stderr and exits with status **2** for a bad invocation (unknown flag, bad
//! value, unknown or unavailable congestion control) or **1** for a failed run (bind, accept or
//! connect timeout, I/O error); status 0 means the JSON was written.
//!
//! Units: `S` flags are seconds as decimal numbers; `*_s` fields are seconds since the epoch,
//! `*_us` microseconds, `*_bps` bits/s, `*_bytes`/`bytes*` bytes; absent values are `null`.
//!
//! Common flags:
//! - `--epoch-mono-ns N`: CLOCK_MONOTONIC ns of scenario time 0 (default: the program's own
//!   start). Pass the same value to every program of a run: `--start`/`--stop`/`--deadline`
//!   are then scenario times, and all bins share one grid. Choose it far enough ahead (≈0.5 s)
//!   that sinks listen before sources start, or the first connect attempts are refused.
//! - `--bin S` (default 0.1): bin width of per-bin series; bin k covers [k·bin, (k+1)·bin).
//! - `--out FILE`: write the JSON there instead of stdout.
//!
//! ## `sink --listen IP:PORT [--deadline S=120] [--accept-timeout S]`
//! Accepts one TCP connection (waiting until the deadline, or at most the accept timeout counted
//! from its own start), reads until EOF or the deadline, then closes. JSON: `program`, `listen`, `peer`,
//! `epoch_mono_ns`, `bin_s`, `accepted_s`, `first_byte_s`, `last_byte_s` (when the read holding
//! the last byte returned), `bytes`, `end` (`"eof"`|`"deadline"`|`"error"`), `error`,
//! `bytes_per_bin` (payload bytes read per bin, from bin 0 to the last byte's bin).
//!
//! ## `source --connect IP:PORT --cca NAME [--size BYTES] [--start S=0] [--stop S] [--deadline S] [--connect-timeout S=10] [--mss BYTES] [--notsent-lowat BYTES=131072]`
//! Sleeps until `start`, connects (retrying every 20 ms while refused or unreachable, for at most
//! the connect timeout), writes `size` bytes — or, without `--size`, writes greedily (then
//! `--stop` is required) — stops writing at `stop`, half-closes (FIN), and waits until everything
//! is acknowledged or the deadline (default: `stop`, else `start`, + 120 s) passes.
//! - `--cca`: scenario name → kernel module: `newreno`/`reno` → `reno`, `cubic` → `cubic`,
//!   `bbr` → `bbr`, set with `TCP_CONGESTION` before the SYN. Anything else, or a module the kernel
//!   refuses, exits 2 listing `/proc/sys/net/ipv4/tcp_available_congestion_control`.
//! - `--mss`: payload bytes per segment (the scenario's `mss`), set as `TCP_MAXSEG` = mss + 12
//!   when this namespace's `net.ipv4.tcp_timestamps` is on (timestamp options take 12 bytes per
//!   segment). The path MTU caps it too (MTU − 40, − 12 with timestamps); `mss_bytes` reports
//!   the outcome. Without `--mss` the MTU alone decides (1500 → 1448, the scenario default).
//! - `--notsent-lowat`: `TCP_NOTSENT_LOWAT` (0 = kernel default, unbounded). Keeps unsent data in
//!   the socket buffer small, so at `stop` little more than this still leaves (reported).
//! - ECN is not a socket option: the integrator sets `net.ipv4.tcp_ecn=1` in the *sender's*
//!   namespace (receivers accept ECN with the default 2); `ecn_negotiated` reports the outcome.
//! - Delayed ACKs, SACK, timestamps and buffer sizes are likewise the namespace's sysctls
//!   (`net.ipv4.tcp_sack`, `tcp_timestamps`, `tcp_rmem`/`tcp_wmem`).
//!
//! JSON: `program`, `connect`, `cca` (as given), `cca_kernel` (read back), `epoch_mono_ns`,
//! `bin_s`, `size_bytes`, `start_s`, `stop_s`, `connect_attempts`, `connect_start_s` (start of
//! the attempt that succeeded), `established_s`, `writes_done_s`, `unsent_at_stop_bytes`,
//! `last_ack_s` (every written byte acknowledged, i.e. the simulator's `snd_una ≥ size`; 1 ms
//! polling resolution),
//! `completed`, `fct_s` (sized and completed only: `last_ack_s − connect_start_s`),
//! `bytes_sent` (payload written), `end` (`"done"`|`"deadline"`|`"error"`), `error`; from the
//! final `TCP_INFO`: `bytes_acked`, `bytes_retrans`, `wire_bytes_sent` (incl. retransmissions),
//! `retransmits` (segments), `mss_bytes`, `min_rtt_us`, `ecn_negotiated`, `delivered_ce`; and
//! `series`, one sample per bin edge, as columns: `t_s`, `cwnd_bytes`, `srtt_us`,
//! `bytes_written`, `bytes_acked`, `bytes_retrans`, `retrans_total`, `unacked_segs`,
//! `notsent_bytes`, `delivery_rate_bps`, `pacing_rate_bps`, `delivered_ce` (see [`tcpinfo`]).
//!
//! ## `cbr-send --connect IP:PORT --stop S [--packet-size BYTES=160] [--interval S=0.02] [--start S=0]`
//! Sends datagram k at `start + k·interval` while that is before `stop`; payload = sequence
//! number (u64 BE) + CLOCK_MONOTONIC send time in ns (u64 BE) + zero padding (size ≥ 16).
//! JSON: `program`, `connect`, `epoch_mono_ns`, `packet_size_bytes`, `interval_s`,
//! `packets_sent` (sequence numbers used, failed sends included), `bytes_sent` (payload),
//! `send_errors`, `slots_skipped` (slots already past when the program started: skipped, not
//! sent as a burst, not numbered), `first_send_s`, `last_send_s`, `late_max_us` (worst lateness
//! against the schedule).
//!
//! ## `cbr-recv --listen IP:PORT [--deadline S=120] [--idle-timeout S]`
//! Receives until the deadline, or until no datagram arrived for the idle timeout (counted once
//! the first one arrived). JSON: `program`, `listen`, `epoch_mono_ns`, `bin_s`, `end`
//! (`"deadline"`|`"idle"`), `received` (distinct), `lost` (gaps below the highest sequence seen;
//! tail losses show only as `cbr-send.packets_sent − received`), `duplicates`, `reordered`,
//! `malformed`, `bytes` (payload), `last_arrival_s`, `owd_us` {`min`,`mean`,`p50`,`p95`,`p99`,
//! `max`}, `bytes_per_bin`, and `datagrams` {`seq`, `sent_s`, `owd_us`} per distinct datagram in
//! arrival order. OWD = receive time (after recv returns) − send time.
//!
//! ## `quic-sink --listen IP:PORT --identity DIR [--deadline S=120]` and `quic-source --connect IP:PORT --fingerprint HEX --cca NAME [--cc JSON] [--size BYTES] [--start S=0] [--stop S] [--deadline S] [--connect-timeout S=10] [--mtu BYTES=1500]`
//! A flow over QUIC (quinn) with any controller of our registry (`--cca`, `--cc` its parameters
//! as a JSON object), through `ccbench_quic`: the sink serves the certificate kept in `DIR`, the
//! source pins its fingerprint and sends one stream. Their JSON is the TCP programs' (the sink's
//! exactly; the source's `series` has `t_s`, `cwnd_bytes`, `srtt_us`, `bytes_written`,
//! `bytes_acked` (datagram bytes), `retrans_total` (packets declared lost), `unacked_segs`,
//! `pacing_rate_bps` (the controller's; quinn paces at its own), `congestion_events`, `ecn_reductions`), with
//! `retransmits` the packets declared lost, `mss_bytes` the datagram payload (`--mtu` − 28), and
//! `ecn_negotiated` null (quinn does not report it). See [`quic`].
//!
//! ## Notes for the integrator
//! - Start sinks and `cbr-recv` first and give every program the same epoch, ≈0.5 s ahead.
//! - `fct_s` starts at the SYN of the attempt that succeeded and so includes the handshake, as
//!   the simulator's FCT does; refused earlier attempts (sink not yet listening) are excluded but
//!   counted in `connect_attempts`.
//! - Only payload goes into byte counts; add `header_bytes` per segment/datagram for wire rates.
//! - Times are stamped in user space (after read/recv returns, 1 ms TCP_INFO polling), so they
//!   carry scheduling latency: tens of µs idle, more on a loaded machine.

pub mod args;
pub mod cbr;
pub mod clock;
pub mod quic;
pub mod sink;
pub mod sockopt;
pub mod source;
pub mod tcpinfo;

use args::Flags;
use clock::Timeline;
use serde_json::Value;
use std::fmt;

/// Data ports: flow `i` listens on `BASE_PORT + i`.
pub const BASE_PORT: u16 = 5000;

/// Outputs of each flow's programs: (sender JSON, receiver JSON).
pub type Outputs = Vec<(Value, Value)>;

/// The subcommands this module implements.
pub const COMMANDS: &[&str] = &["sink", "source", "cbr-send", "cbr-recv", "quic-sink", "quic-source"];

#[derive(Debug)]
pub enum AppError {
    /// Bad invocation: exit status 2.
    Usage(String),
    /// The run failed: exit status 1.
    Run(String),
}

impl AppError {
    pub fn usage(msg: impl Into<String>) -> AppError {
        AppError::Usage(msg.into())
    }

    pub fn run(msg: impl Into<String>) -> AppError {
        AppError::Run(msg.into())
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            AppError::Usage(_) => 2,
            AppError::Run(_) => 1,
        }
    }
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            AppError::Usage(m) | AppError::Run(m) => f.write_str(m),
        }
    }
}

/// A program's body: parsed flags in, JSON result out.
type Program = fn(&Flags) -> Result<Value, AppError>;

/// Runs subcommand `cmd` with its flags and writes its JSON result.
pub fn run(cmd: &str, args: &[String]) -> Result<(), AppError> {
    let (allowed, program): (&[&str], Program) = match cmd {
        "sink" => (sink::FLAGS, sink::run),
        "source" => (source::FLAGS, source::run),
        "cbr-send" => (cbr::SEND_FLAGS, cbr::send),
        "cbr-recv" => (cbr::RECV_FLAGS, cbr::recv),
        "quic-sink" => (quic::SINK_FLAGS, quic::sink),
        "quic-source" => (quic::SOURCE_FLAGS, quic::source),
        _ => {
            return Err(AppError::usage(format!("unknown program {cmd:?} (known: {})", COMMANDS.join(", "))))
        }
    };
    let flags = Flags::parse(args, allowed)?;
    let result = program(&flags)?;
    emit(flags.str("out"), &result)
}

/// Writes the result to stdout, or whole to `out` (`ccbench_files::write_atomic`).
fn emit(out: Option<&str>, result: &Value) -> Result<(), AppError> {
    let text = format!("{result}\n");
    let Some(path) = out else {
        print!("{text}");
        return Ok(());
    };
    ccbench_files::write_atomic(std::path::Path::new(path), text.as_bytes())
        .map(drop)
        .map_err(|e| AppError::run(format!("writing {e}")))
}

/// Seconds since the epoch of an optional monotonic time.
fn opt_secs(tl: &Timeline, t: Option<u64>) -> Option<f64> {
    t.map(|t| tl.secs(t))
}
