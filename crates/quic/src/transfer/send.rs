//! The sending end: one connection with the chosen controller, the files one after another.

use std::io::{IsTerminal, SeekFrom, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ccbench_params::Params;
use tokio::io::{AsyncReadExt, AsyncSeekExt, BufReader};

use super::{check_name, hash_file, read_line, write_line, Answer, Header, CHUNK};
use crate::sender::Probe;
use crate::tls::{client_config, SERVER_NAME};
use crate::CcFactory;

/// Bytes the sender may have unacknowledged on the connection.
const SEND_WINDOW: u64 = 64 << 20;
/// How often the terminal line is redrawn.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);
/// Longest wait for the receiver's handshake: an address where nothing answers fails in this
/// time, not after the transport's idle timeout or never.
pub const CONNECT_DEADLINE: Duration = Duration::from_secs(10);
/// Longest wait for the receiver's answer to a file's header (where to resume).
pub const ANSWER_DEADLINE: Duration = Duration::from_secs(10);

/// An error and the exit status it gives: 2 for bad input (files, flags, a certificate that is
/// not the pinned one), 1 for a failure on the way.
pub type Failure = (u8, String);

/// What `ccbench-quic send` was asked.
pub struct SendOptions {
    pub to: SocketAddr,
    pub fingerprint: String,
    pub cc: String,
    pub params: Params,
    pub log: Option<PathBuf>,
    pub log_interval: Duration,
}

/// A file to send, checked and hashed before connecting.
struct Outgoing {
    path: PathBuf,
    header: Header,
}

/// Send every file; the first failure stops the transfer.
pub async fn send_files(files: &[PathBuf], opt: SendOptions) -> Result<(), Failure> {
    let mut outgoing = Vec::new();
    for path in files {
        outgoing.push(prepare(path).await?);
    }
    let factory = CcFactory::new(&opt.cc, &opt.params).map_err(|e| {
        let flag = if e.key == "cca" { "--cc".to_string() } else { format!("--cc-param {}", e.key) };
        (2, format!("{flag}: {}", e.message))
    })?;
    let probe = factory.probe();
    let conn = connect(&opt, factory).await?;
    let sent = Arc::new(AtomicU64::new(0));
    let logger = opt.log.as_ref().map(|path| start_log(path, opt.log_interval, &conn, &probe)).transpose()?;
    let mut result = Ok(());
    for file in &outgoing {
        result = send_one(&conn, file, &sent, &probe).await;
        if result.is_err() {
            break;
        }
    }
    conn.close(0u32.into(), b"done");
    if let Some(task) = logger {
        task.abort();
    }
    result
}

async fn prepare(path: &Path) -> Result<Outgoing, Failure> {
    let meta = tokio::fs::metadata(path).await.map_err(|e| (2, format!("{}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err((2, format!("{}: not a regular file", path.display())));
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    check_name(&name).map_err(|e| (2, format!("{}: {e}", path.display())))?;
    let (sha256, size) = hash_file(path).await.map_err(|e| (2, format!("{}: {e}", path.display())))?;
    Ok(Outgoing { path: path.to_path_buf(), header: Header { name, size, sha256 } })
}

async fn connect(opt: &SendOptions, factory: CcFactory) -> Result<quinn::Connection, Failure> {
    let mut config = client_config(&opt.fingerprint).map_err(|e| (1, e))?;
    let mut transport = quinn::TransportConfig::default();
    transport.congestion_controller_factory(Arc::new(factory));
    transport.send_window(SEND_WINDOW);
    config.transport_config(Arc::new(transport));
    let local: SocketAddr = if opt.to.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
    let mut endpoint = quinn::Endpoint::client(local).map_err(|e| (1, format!("binding {local}: {e}")))?;
    endpoint.set_default_client_config(config);
    let connecting =
        endpoint.connect(opt.to, SERVER_NAME).map_err(|e| (2, format!("--to {}: {e}", opt.to)))?;
    let deadline = CONNECT_DEADLINE;
    let connected = tokio::time::timeout(deadline, connecting)
        .await
        .map_err(|_| (1, format!("connecting to {}: no answer within {} s", opt.to, deadline.as_secs())))?;
    connected.map_err(|e| {
        let text = e.to_string();
        // The pinned-certificate check's own words (tls.rs) say the receiver is not the one pinned.
        if text.contains("not the pinned") {
            (2, format!("refused {}: {text}", opt.to))
        } else {
            (1, format!("connecting to {}: {text}", opt.to))
        }
    })
}

async fn send_one(
    conn: &quinn::Connection,
    file: &Outgoing,
    sent: &Arc<AtomicU64>,
    probe: &Arc<Mutex<Option<Probe>>>,
) -> Result<(), Failure> {
    let lost = |e: String| (1, format!("{}: {e}", file.header.name));
    let (mut send, recv) = conn.open_bi().await.map_err(|e| lost(e.to_string()))?;
    let mut recv = BufReader::new(recv);
    write_line(&mut send, &file.header).await.map_err(lost)?;
    let answer = tokio::time::timeout(ANSWER_DEADLINE, read_line::<Answer>(&mut recv))
        .await
        .map_err(|_| lost(format!("the receiver did not answer within {} s", ANSWER_DEADLINE.as_secs())))?;
    let offset = match answer.map_err(lost)? {
        Answer::Offset { offset } if offset <= file.header.size => offset,
        Answer::Error { error } => {
            return Err((1, format!("{}: the receiver says: {error}", file.header.name)))
        }
        other => return Err(lost(format!("unexpected answer {other:?}"))),
    };
    sent.store(offset, Ordering::Relaxed);
    let progress = tokio::spawn(progress(file.header.clone(), Arc::clone(sent), Arc::clone(probe)));
    let copied = copy(&file.path, offset, &mut send, sent).await;
    let _ = send.finish();
    let answer = match copied {
        Ok(()) => read_line::<Answer>(&mut recv).await.map_err(lost),
        Err(e) => Err(lost(e)),
    };
    progress.abort();
    if std::io::stderr().is_terminal() {
        eprintln!();
    }
    match answer? {
        Answer::Done { ok: true } => {
            let resumed = match offset {
                0 => String::new(),
                o if o == file.header.size => ", already at the receiver".to_string(),
                o => format!(", resumed at byte {o}"),
            };
            eprintln!(
                "sent {} ({} bytes{resumed}), sha256 checked by the receiver",
                file.header.name, file.header.size
            );
            Ok(())
        }
        Answer::Error { error } => Err((1, format!("{}: the receiver says: {error}", file.header.name))),
        other => Err(lost(format!("unexpected answer {other:?}"))),
    }
}

async fn copy(
    path: &Path,
    offset: u64,
    send: &mut quinn::SendStream,
    sent: &AtomicU64,
) -> Result<(), String> {
    let file =
        ccbench_files::open_input(path, ccbench_files::InputKind::TRANSFER).map_err(|e| e.to_string())?;
    let mut file = tokio::fs::File::from_std(file);
    file.seek(SeekFrom::Start(offset)).await.map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = file.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(());
        }
        send.write_all(&buf[..n]).await.map_err(|e| e.to_string())?;
        sent.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// The terminal line: the share handed to QUIC, the rate acknowledged on the wire (datagram
/// bytes over the last interval), and what the controller is doing.
async fn progress(header: Header, sent: Arc<AtomicU64>, probe: Arc<Mutex<Option<Probe>>>) {
    let terminal = std::io::stderr().is_terminal();
    let every = if terminal { PROGRESS_EVERY } else { 10 * PROGRESS_EVERY };
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    let delivered = || probe.lock().unwrap_or_else(PoisonError::into_inner).map_or(0, |p| p.delivered);
    let mut last = delivered();
    loop {
        tick.tick().await;
        let done = sent.load(Ordering::Relaxed);
        let share = if header.size > 0 { 100.0 * done as f64 / header.size as f64 } else { 100.0 };
        let now = delivered();
        let rate = now.saturating_sub(last) as f64 * 8.0 / every.as_secs_f64() / 1e6;
        last = now;
        let cc = probe.lock().unwrap_or_else(PoisonError::into_inner).map(|p| {
            let srtt = p.srtt.map_or("-".into(), |r| format!("{:.1} ms", r as f64 / 1e6));
            format!("  cwnd {} kB  srtt {srtt}  {:?}", p.cwnd / 1000, p.state)
        });
        let line = format!(
            "{}  {share:5.1}% handed to QUIC  {rate:.2} Mbit/s acknowledged{}",
            header.name,
            cc.unwrap_or_default()
        );
        let mut err = std::io::stderr();
        let _ = if terminal { write!(err, "\r{line}\x1b[K") } else { writeln!(err, "{line}") };
    }
}

/// The controller's state, sampled every `interval`, as CSV.
fn start_log(
    path: &Path,
    interval: Duration,
    conn: &quinn::Connection,
    probe: &Arc<Mutex<Option<Probe>>>,
) -> Result<tokio::task::JoinHandle<()>, Failure> {
    let (mut out, _) = ccbench_files::publish(path).map_err(|e| (2, e.labelled("--log")))?;
    writeln!(out, "{LOG_COLUMNS}").map_err(|e| (2, format!("--log {}: {e}", path.display())))?;
    let (conn, probe) = (conn.clone(), Arc::clone(probe));
    Ok(tokio::spawn(async move {
        let start = Instant::now();
        let mut tick = tokio::time::interval(interval);
        loop {
            tick.tick().await;
            let snapshot = *probe.lock().unwrap_or_else(PoisonError::into_inner);
            let line = log_line(start.elapsed(), snapshot, &conn.stats());
            if writeln!(out, "{line}").is_err() {
                return;
            }
        }
    }))
}

/// The log's header line.
pub const LOG_COLUMNS: &str =
    "t_s,cwnd_bytes,ssthresh_bytes,pacing_rate_bps,srtt_ms,min_rtt_ms,inflight_bytes,\
delivered_bytes,lost_bytes,congestion_events,state,udp_tx_bytes,quic_rtt_ms";

fn log_line(t: Duration, probe: Option<Probe>, stats: &quinn::ConnectionStats) -> String {
    let ms = |n: Option<u64>| n.map_or(String::new(), |v| format!("{:.3}", v as f64 / 1e6));
    let tail = format!("{},{:.3}", stats.udp_tx.bytes, stats.path.rtt.as_secs_f64() * 1e3);
    match probe {
        Some(p) => format!(
            "{:.3},{},{},{},{},{},{},{},{},{},{:?},{tail}",
            t.as_secs_f64(),
            p.cwnd,
            p.ssthresh.map_or(String::new(), |s| s.to_string()),
            p.pacing_rate.map_or(String::new(), |r| format!("{:.0}", r * 8.0)),
            ms(p.srtt),
            ms(p.min_rtt),
            p.inflight,
            p.delivered,
            p.lost,
            p.congestion_events,
            p.state,
        ),
        None => format!("{:.3},,,,,,,,,,,{tail}", t.as_secs_f64()),
    }
}
