//! The receiving end: accept connections, write each file into the output directory.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

use super::{check_name, hash_file, read_line, write_line, Answer, Header, CHUNK};
use crate::tls::{Identity, IDENTITY_DIR};

/// Receive window per stream and per connection: room for a long fat path.
const RECEIVE_WINDOW: u32 = 64 << 20;

/// Where the receiver writes, and the contents it is receiving now.
#[derive(Clone, Debug)]
pub struct Receiver {
    pub out: PathBuf,
    receiving: Arc<Mutex<HashMap<String, Arc<Lane>>>>,
}

/// One content's partial: one writer at a time. A newer stream of the same content (a sender
/// restarted after a kill, whose old connection the receiver has not yet seen die) asks the
/// writer to stop, and takes over once it has.
#[derive(Debug, Default)]
struct Lane {
    writer: Arc<tokio::sync::Mutex<()>>,
    generation: AtomicU64,
    stop: Notify,
}

/// The right to write one content's partial, until a newer stream takes it.
struct Claim {
    lane: Arc<Lane>,
    generation: u64,
    _writer: tokio::sync::OwnedMutexGuard<()>,
}

impl Claim {
    fn superseded(&self) -> bool {
        self.lane.generation.load(Ordering::SeqCst) != self.generation
    }
}

impl Receiver {
    pub fn new(out: PathBuf) -> Self {
        Self { out, receiving: Arc::default() }
    }

    fn partial(&self, sha256: &str) -> PathBuf {
        self.out.join(IDENTITY_DIR).join("partial").join(format!("{sha256}.part"))
    }

    /// Claim a content for this stream, stopping an older stream that writes it.
    async fn claim(&self, sha256: &str) -> Claim {
        let lane = Arc::clone(
            self.receiving.lock().unwrap_or_else(PoisonError::into_inner).entry(sha256.into()).or_default(),
        );
        let generation = lane.generation.fetch_add(1, Ordering::SeqCst) + 1;
        lane.stop.notify_waiters();
        let _writer = Arc::clone(&lane.writer).lock_owned().await;
        Claim { lane, generation, _writer }
    }
}

/// Bind `listen` with the identity kept in `out`; returns the endpoint and the fingerprint.
pub fn bind(listen: SocketAddr, out: &Path) -> Result<(quinn::Endpoint, String), String> {
    let identity = Identity::load_or_create(out)?;
    // Our own folder for partial files: a link planted at its name is refused.
    ccbench_files::own_folder(&out.join(IDENTITY_DIR).join("partial")).map_err(|e| e.to_string())?;
    let mut config = identity.server_config()?;
    let mut transport = quinn::TransportConfig::default();
    transport.stream_receive_window(RECEIVE_WINDOW.into());
    transport.receive_window(RECEIVE_WINDOW.into());
    config.transport_config(Arc::new(transport));
    let endpoint = quinn::Endpoint::server(config, listen).map_err(|e| format!("--listen {listen}: {e}"))?;
    Ok((endpoint, identity.fingerprint()))
}

/// Serve connections until the endpoint closes; with `once`, return after the first connection
/// ends. Each file's outcome is reported on stderr.
pub async fn serve(endpoint: quinn::Endpoint, receiver: Receiver, once: bool) {
    while let Some(incoming) = endpoint.accept().await {
        let receiver = receiver.clone();
        let task = tokio::spawn(async move {
            match incoming.await {
                Ok(conn) => connection(conn, receiver).await,
                Err(e) => eprintln!("a connection failed: {e}"),
            }
        });
        if once {
            let _ = task.await;
            return;
        }
    }
}

async fn connection(conn: quinn::Connection, receiver: Receiver) {
    let peer = conn.remote_address();
    while let Ok((send, recv)) = conn.accept_bi().await {
        let receiver = receiver.clone();
        tokio::spawn(async move {
            if let Err(e) = file(send, recv, &receiver).await {
                eprintln!("{peer}: {e}");
            }
        });
    }
}

/// One file's stream.
async fn file(mut send: quinn::SendStream, recv: quinn::RecvStream, rx: &Receiver) -> Result<(), String> {
    let mut recv = BufReader::with_capacity(CHUNK, recv);
    let header: Header = read_line(&mut recv).await?;
    let answer = match receive(&mut recv, &mut send, &header, rx).await {
        Ok(()) => Answer::Done { ok: true },
        Err(e) => Answer::Error { error: e },
    };
    let outcome = match &answer {
        Answer::Error { error } => Err(format!("{}: {error}", header.name)),
        _ => {
            eprintln!("received {} ({} bytes, sha256 {})", header.name, header.size, header.sha256);
            Ok(())
        }
    };
    write_line(&mut send, &answer).await?;
    let _ = send.finish();
    let _ = send.stopped().await;
    outcome
}

async fn receive(
    recv: &mut BufReader<quinn::RecvStream>,
    send: &mut quinn::SendStream,
    header: &Header,
    rx: &Receiver,
) -> Result<(), String> {
    check_name(&header.name)?;
    crate::tls::parse_fingerprint(&header.sha256)
        .map_err(|_| format!("sha256 {:?} is not a SHA-256", header.sha256))?;
    let claim = rx.claim(&header.sha256).await;
    let target = rx.out.join(&header.name);
    if matches!(hash_file(&target).await, Ok((sha, size)) if sha == header.sha256 && size == header.size) {
        write_line(send, &Answer::Offset { offset: header.size }).await?;
        return Ok(());
    }
    let partial = rx.partial(&header.sha256);
    // Never through a link, never a FIFO, never a file with another name (`open_resumable`).
    let file = ccbench_files::open_resumable(&partial).map_err(|e| e.to_string())?;
    let ours = ccbench_files::Owned::record(&partial).map_err(|e| e.to_string())?;
    let len = file.metadata().map_err(|e| format!("{}: {e}", partial.display()))?.len();
    let offset = if len <= header.size { len } else { 0 };
    if offset == 0 {
        file.set_len(0).map_err(|e| format!("{}: {e}", partial.display()))?;
    }
    let mut out = tokio::fs::File::from_std(file);
    write_line(send, &Answer::Offset { offset }).await?;
    let got = copy(recv, &mut out, header.size - offset, &claim).await?;
    out.sync_all().await.map_err(|e| e.to_string())?;
    if offset + got < header.size {
        return Err(format!(
            "the sender stopped at byte {} of {}; kept for resuming",
            offset + got,
            header.size
        ));
    }
    let (sha, _) = hash_file(&partial).await.map_err(|e| e.to_string())?;
    if sha != header.sha256 {
        let _ = ours.remove();
        return Err(format!(
            "the bytes received hash to {sha}, not the announced {}; discarded",
            header.sha256
        ));
    }
    ccbench_files::rename_into_place(&partial, &target).map_err(|e| e.to_string())
}

/// Copy at most `limit` bytes until the stream ends, or a newer stream of the same content takes
/// over; more than `limit` is an error.
async fn copy(
    recv: &mut BufReader<quinn::RecvStream>,
    out: &mut tokio::fs::File,
    limit: u64,
    claim: &Claim,
) -> Result<u64, String> {
    let mut buf = vec![0u8; CHUNK];
    let mut got = 0u64;
    loop {
        // Registered before the check, so a takeover between the two still wakes the wait.
        let stop = claim.lane.stop.notified();
        tokio::pin!(stop);
        stop.as_mut().enable();
        if claim.superseded() {
            return Ok(got);
        }
        let n = tokio::select! {
            read = recv.read(&mut buf) => match read {
                Ok(n) => n,
                // A reset or a lost connection: what arrived is kept.
                Err(_) => return Ok(got),
            },
            () = &mut stop => continue,
        };
        if n == 0 {
            return Ok(got);
        }
        got += n as u64;
        if got > limit {
            return Err(format!("the sender sent more than the {limit} bytes announced"));
        }
        out.write_all(&buf[..n]).await.map_err(|e| e.to_string())?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn a_newer_stream_of_a_content_takes_over_from_the_older() {
        let rx = Receiver::new(PathBuf::from("/nonexistent"));
        let first = rx.claim("aa").await;
        assert!(!first.superseded());
        let other = rx.claim("bb").await;
        assert!(!first.superseded() && !other.superseded(), "other contents go on");
        // The older writer notices, lets go, and the newer one gets the partial.
        let newer = tokio::spawn({
            let rx = rx.clone();
            async move { rx.claim("aa").await.generation }
        });
        tokio::task::yield_now().await;
        assert!(first.superseded());
        drop(first);
        assert_eq!(newer.await.unwrap(), 2);
    }
}
