//! `ccbench-emu quic-sink` and `quic-source`: a flow over QUIC (quinn) with any controller of our
//! registry, the QUIC counterparts of [`super::sink`] and [`super::source`], writing the same JSON
//! (see the module docs of [`super`]).
//!
//! The sink serves the identity the run made (`--identity DIR`, kept by
//! `ccbench_quic::tls::Identity`); the source pins its fingerprint. The source sends one
//! unidirectional stream. Datagrams are sized to the path: `--mtu` (IP) less 28 bytes of IPv4 and
//! UDP headers, with path-MTU discovery off, so the controller's segment stays one size.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ccbench_params::{ParamValue, Params};
use ccbench_quic::sender::Probe;
use ccbench_quic::tls::{client_config, Identity, SERVER_NAME};
use ccbench_quic::CcFactory;
use serde_json::{json, Value};

use super::args::Flags;
use super::clock::{now_ns, Bins, Timeline};
use super::{opt_secs, AppError};

pub const SINK_FLAGS: &[&str] = &["listen", "identity", "deadline", "epoch-mono-ns", "bin", "out"];
pub const SOURCE_FLAGS: &[&str] = &[
    "connect",
    "fingerprint",
    "cca",
    "cc",
    "size",
    "start",
    "stop",
    "deadline",
    "connect-timeout",
    "mtu",
    "epoch-mono-ns",
    "bin",
    "out",
];

/// IPv4 (20) and UDP (8) headers around each QUIC datagram.
const IP_UDP_HEADERS: u64 = 28;
/// Bytes handed to the stream per write.
const WRITE_CHUNK: usize = 64 * 1024;
/// Receive window of the sink: never the limit on an emulated path.
const RECEIVE_WINDOW: u32 = 64 << 20;

fn runtime() -> Result<tokio::runtime::Runtime, AppError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AppError::run(format!("starting the runtime: {e}")))
}

/// How long from now until monotonic time `t`.
fn until(t: u64) -> Duration {
    Duration::from_nanos(t.saturating_sub(now_ns()))
}

pub fn sink(flags: &Flags) -> Result<Value, AppError> {
    let listen = flags.addr("listen")?;
    let tl = Timeline::from_flags(flags)?;
    let deadline = tl.at(flags.secs("deadline")?.unwrap_or(120_000_000_000));
    let identity = Identity::load_or_create(std::path::Path::new(flags.required("identity")?))
        .map_err(AppError::usage)?;
    let mut config = identity.server_config().map_err(AppError::run)?;
    let mut transport = quinn::TransportConfig::default();
    transport.stream_receive_window(RECEIVE_WINDOW.into());
    transport.receive_window(RECEIVE_WINDOW.into());
    config.transport_config(Arc::new(transport));
    runtime()?.block_on(async {
        let endpoint = quinn::Endpoint::server(config, listen)
            .map_err(|e| AppError::run(format!("bind {listen}: {e}")))?;
        let incoming = tokio::time::timeout(until(deadline), endpoint.accept())
            .await
            .ok()
            .flatten()
            .ok_or_else(|| AppError::run("no connection before the deadline"))?;
        let conn = incoming.await.map_err(|e| AppError::run(format!("handshake: {e}")))?;
        let accepted = now_ns();
        let (rx, end, error) = receive(&conn, &tl, deadline).await;
        conn.close(0u32.into(), b"done");
        Ok(json!({
            "program": "quic-sink",
            "listen": listen.to_string(),
            "peer": conn.remote_address().to_string(),
            "epoch_mono_ns": tl.epoch,
            "bin_s": tl.bin as f64 / 1e9,
            "accepted_s": tl.secs(accepted),
            "first_byte_s": opt_secs(&tl, rx.first),
            "last_byte_s": opt_secs(&tl, rx.last),
            "bytes": rx.bytes,
            "end": end,
            "error": error,
            "bytes_per_bin": rx.bins.0,
        }))
    })
}

#[derive(Default)]
struct Received {
    bytes: u64,
    first: Option<u64>,
    last: Option<u64>,
    bins: Bins,
}

/// The source's one stream, to its end or the deadline: what arrived, how it ended, any error.
async fn receive(
    conn: &quinn::Connection,
    tl: &Timeline,
    deadline: u64,
) -> (Received, &'static str, Option<String>) {
    let mut rx = Received::default();
    let mut stream = match tokio::time::timeout(until(deadline), conn.accept_uni()).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return (rx, "error", Some(e.to_string())),
        Err(_) => return (rx, "deadline", None),
    };
    loop {
        match tokio::time::timeout(until(deadline), stream.read_chunk(usize::MAX, true)).await {
            Ok(Ok(Some(chunk))) => {
                let now = now_ns();
                let n = chunk.bytes.len() as u64;
                rx.first.get_or_insert(now);
                rx.last = Some(now);
                rx.bytes += n;
                rx.bins.add(tl.bin_of(now), n);
            }
            Ok(Ok(None)) => return (rx, "eof", None),
            Ok(Err(e)) => return (rx, "error", Some(e.to_string())),
            Err(_) => return (rx, "deadline", None),
        }
    }
}

/// `--cc '{"key": value}'`: the controller's parameters as JSON.
fn cc_params(flags: &Flags) -> Result<Params, AppError> {
    let mut params = Params::new();
    let Some(text) = flags.str("cc") else { return Ok(params) };
    let object: serde_json::Map<String, Value> = serde_json::from_str(text)
        .map_err(|e| AppError::usage(format!("--cc {text:?}: expected a JSON object: {e}")))?;
    for (key, value) in object {
        let value = match value {
            Value::Bool(b) => ParamValue::Bool(b),
            Value::Number(n) if n.is_i64() => ParamValue::Int(n.as_i64().unwrap_or_default()),
            Value::Number(n) => ParamValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => ParamValue::Str(s),
            other => return Err(AppError::usage(format!("--cc: {key} = {other} is not a parameter value"))),
        };
        params.insert(key, value);
    }
    Ok(params)
}

/// The sender's state at each bin edge, as the TCP source's `series`.
#[derive(Default)]
struct Series {
    t_s: Vec<f64>,
    cwnd_bytes: Vec<f64>,
    srtt_us: Vec<f64>,
    bytes_written: Vec<u64>,
    bytes_acked: Vec<u64>,
    retrans_total: Vec<u64>,
    unacked_segs: Vec<f64>,
    pacing_rate_bps: Vec<Option<f64>>,
    congestion_events: Vec<u64>,
    ecn_reductions: Vec<u64>,
}

impl Series {
    fn sample(
        &mut self,
        t: f64,
        probe: Option<Probe>,
        written: u64,
        stats: &quinn::ConnectionStats,
        mss: u64,
    ) {
        let p = probe;
        self.t_s.push(t);
        self.cwnd_bytes.push(p.map_or(f64::NAN, |p| p.cwnd as f64));
        self.srtt_us.push(p.and_then(|p| p.srtt).map_or(f64::NAN, |r| r as f64 / 1e3));
        self.bytes_written.push(written);
        self.bytes_acked.push(p.map_or(0, |p| p.delivered));
        self.retrans_total.push(stats.path.lost_packets);
        self.unacked_segs.push(p.map_or(f64::NAN, |p| p.inflight as f64 / mss as f64));
        self.pacing_rate_bps.push(p.and_then(|p| p.pacing_rate).map(|r| r * 8.0));
        self.congestion_events.push(p.map_or(0, |p| p.congestion_events));
        self.ecn_reductions.push(p.map_or(0, |p| p.ecn_reductions));
    }

    fn json(&self) -> Value {
        json!({
            "t_s": self.t_s, "cwnd_bytes": self.cwnd_bytes, "srtt_us": self.srtt_us,
            "bytes_written": self.bytes_written, "bytes_acked": self.bytes_acked,
            "retrans_total": self.retrans_total, "unacked_segs": self.unacked_segs,
            "pacing_rate_bps": self.pacing_rate_bps, "congestion_events": self.congestion_events,
            "ecn_reductions": self.ecn_reductions,
        })
    }
}

/// What the source was asked.
struct Plan {
    to: std::net::SocketAddr,
    size: Option<u64>,
    start: u64,
    stop: Option<u64>,
    deadline: u64,
    connect_by: u64,
    mss: u64,
}

pub fn source(flags: &Flags) -> Result<Value, AppError> {
    let tl = Timeline::from_flags(flags)?;
    let cca = flags.required("cca")?.to_string();
    let factory = CcFactory::new(&cca, &cc_params(flags)?)
        .map_err(|e| AppError::usage(format!("--cc {}: {}", e.key, e.message)))?;
    let fingerprint =
        ccbench_quic::tls::parse_fingerprint(flags.required("fingerprint")?).map_err(AppError::usage)?;
    let mtu = flags.u64("mtu")?.unwrap_or(1500);
    if !(1228..=65_535).contains(&mtu) {
        return Err(AppError::usage(format!("--mtu {mtu}: QUIC needs datagrams of at least 1200 bytes")));
    }
    let (size, stop) = (flags.u64("size")?, flags.secs("stop")?);
    if size.is_none() && stop.is_none() {
        return Err(AppError::usage("--stop is required without --size"));
    }
    let start = tl.at(flags.secs("start")?.unwrap_or(0));
    let stop = stop.map(|s| tl.at(s));
    let deadline = flags.secs("deadline")?.map_or(stop.unwrap_or(start) + 120_000_000_000, |d| tl.at(d));
    let connect_by = start + flags.secs("connect-timeout")?.unwrap_or(10_000_000_000);
    let plan = Plan {
        to: flags.addr("connect")?,
        size,
        start,
        stop,
        deadline,
        connect_by,
        mss: mtu - IP_UDP_HEADERS,
    };
    let mut config = client_config(&fingerprint).map_err(AppError::run)?;
    let probe = factory.probe();
    let mut transport = quinn::TransportConfig::default();
    transport.congestion_controller_factory(Arc::new(factory));
    transport.initial_mtu(plan.mss as u16);
    transport.mtu_discovery_config(None);
    transport.send_window(RECEIVE_WINDOW.into());
    config.transport_config(Arc::new(transport));
    runtime()?.block_on(run_source(&tl, config, plan, cca, probe))
}

async fn run_source(
    tl: &Timeline,
    config: quinn::ClientConfig,
    plan: Plan,
    cca: String,
    probe: Arc<Mutex<Option<Probe>>>,
) -> Result<Value, AppError> {
    tokio::time::sleep(until(plan.start)).await;
    let mut endpoint =
        quinn::Endpoint::client(([0, 0, 0, 0], 0).into()).map_err(|e| AppError::run(format!("bind: {e}")))?;
    endpoint.set_default_client_config(config);
    let connect_start = now_ns();
    let connecting =
        endpoint.connect(plan.to, SERVER_NAME).map_err(|e| AppError::usage(format!("--connect: {e}")))?;
    let conn = tokio::time::timeout(until(plan.connect_by), connecting)
        .await
        .map_err(|_| AppError::run(format!("no handshake with {} before the connect timeout", plan.to)))?
        .map_err(|e| AppError::run(format!("connecting to {}: {e}", plan.to)))?;
    let established = now_ns();
    let written = Arc::new(AtomicU64::new(0));
    let series = Arc::new(Mutex::new(Series::default()));
    let sampler = tokio::spawn(sample(
        *tl,
        conn.clone(),
        Arc::clone(&probe),
        Arc::clone(&written),
        Arc::clone(&series),
        plan.mss,
    ));
    let (end, error, writes_done, last_ack) = send(&conn, &plan, &written).await;
    sampler.abort();
    let stats = conn.stats();
    conn.close(0u32.into(), b"done");
    let last = *probe.lock().unwrap_or_else(PoisonError::into_inner);
    let completed = plan.size.is_some() && end == "done";
    let series = series.lock().unwrap_or_else(PoisonError::into_inner).json();
    Ok(json!({
        "program": "quic-source",
        "connect": plan.to.to_string(),
        "cca": cca,
        "epoch_mono_ns": tl.epoch,
        "bin_s": tl.bin as f64 / 1e9,
        "size_bytes": plan.size,
        "start_s": tl.secs(plan.start),
        "stop_s": opt_secs(tl, plan.stop),
        "connect_start_s": tl.secs(connect_start),
        "established_s": tl.secs(established),
        "writes_done_s": opt_secs(tl, writes_done),
        "last_ack_s": opt_secs(tl, last_ack),
        "completed": completed,
        "fct_s": completed.then(|| last_ack.map(|t| (t - connect_start) as f64 / 1e9)).flatten(),
        "bytes_sent": written.load(Ordering::Relaxed),
        "end": end,
        "error": error,
        "retransmits": stats.path.lost_packets,
        "lost_bytes": stats.path.lost_bytes,
        "congestion_events": last.map_or(0, |p| p.congestion_events),
        "ecn_reductions": last.map_or(0, |p| p.ecn_reductions),
        "loss_reductions": last.map_or(0, |p| p.congestion_events - p.ecn_reductions),
        "udp_tx_bytes": stats.udp_tx.bytes,
        "mss_bytes": plan.mss,
        "min_rtt_us": last.and_then(|p| p.min_rtt).map(|r| r / 1000),
        // quinn does not say whether the path's ECN validated.
        "ecn_negotiated": Value::Null,
        "series": series,
    }))
}

/// Write the stream (sized, or greedily until `stop`), finish it and wait for the receiver to
/// have it all: `(end, error, writes done, all delivered)`.
async fn send(
    conn: &quinn::Connection,
    plan: &Plan,
    written: &AtomicU64,
) -> (&'static str, Option<String>, Option<u64>, Option<u64>) {
    let body = async {
        let mut stream = conn.open_uni().await.map_err(|e| e.to_string())?;
        let chunk = vec![0u8; WRITE_CHUNK];
        loop {
            let left = plan.size.map_or(WRITE_CHUNK as u64, |s| s - written.load(Ordering::Relaxed));
            if left == 0 || plan.stop.is_some_and(|s| now_ns() >= s) {
                break;
            }
            let n = left.min(WRITE_CHUNK as u64) as usize;
            let write = stream.write_all(&chunk[..n]);
            match plan.stop {
                Some(stop) => match tokio::time::timeout(until(stop), write).await {
                    Ok(r) => r.map_err(|e| e.to_string())?,
                    Err(_) => break,
                },
                None => write.await.map_err(|e| e.to_string())?,
            }
            written.fetch_add(n as u64, Ordering::Relaxed);
        }
        let writes_done = now_ns();
        stream.finish().map_err(|e| e.to_string())?;
        stream.stopped().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((writes_done, now_ns()))
    };
    match tokio::time::timeout(until(plan.deadline), body).await {
        Ok(Ok((done, acked))) => ("done", None, Some(done), Some(acked)),
        Ok(Err(e)) => ("error", Some(e), None, None),
        Err(_) => ("deadline", None, None, None),
    }
}

/// A sample at every bin edge until aborted.
async fn sample(
    tl: Timeline,
    conn: quinn::Connection,
    probe: Arc<Mutex<Option<Probe>>>,
    written: Arc<AtomicU64>,
    series: Arc<Mutex<Series>>,
    mss: u64,
) {
    loop {
        let edge = tl.next_edge(now_ns());
        tokio::time::sleep(until(edge)).await;
        let p = *probe.lock().unwrap_or_else(PoisonError::into_inner);
        let w = written.load(Ordering::Relaxed);
        series.lock().unwrap_or_else(PoisonError::into_inner).sample(tl.secs(edge), p, w, &conn.stats(), mss);
    }
}
