//! The receiving end: accept connections, write each file into the output directory.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};

use super::{check_name, hash_file, read_line, write_line, Answer, Header, CHUNK};
use crate::tls::{Identity, IDENTITY_DIR};

/// Receive window per stream and per connection: room for a long fat path.
const RECEIVE_WINDOW: u32 = 64 << 20;

/// Where the receiver writes, and the contents it is receiving now.
#[derive(Clone, Debug)]
pub struct Receiver {
    pub out: PathBuf,
    receiving: Arc<Mutex<HashSet<String>>>,
}

impl Receiver {
    pub fn new(out: PathBuf) -> Self {
        Self { out, receiving: Arc::default() }
    }

    fn partial(&self, sha256: &str) -> PathBuf {
        self.out.join(IDENTITY_DIR).join("partial").join(format!("{sha256}.part"))
    }

    /// Claim a content for one stream: two senders of the same file would append to one partial.
    fn claim(&self, sha256: &str) -> Result<Claim, String> {
        let mut receiving = self.receiving.lock().unwrap_or_else(PoisonError::into_inner);
        if !receiving.insert(sha256.to_string()) {
            return Err(
                "this content is being received from another stream now; try again when it ends".into()
            );
        }
        Ok(Claim { receiving: Arc::clone(&self.receiving), sha256: sha256.to_string() })
    }
}

/// A content being received; released when the stream ends, however it ends.
#[derive(Debug)]
struct Claim {
    receiving: Arc<Mutex<HashSet<String>>>,
    sha256: String,
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.receiving.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.sha256);
    }
}

/// Bind `listen` with the identity kept in `out`; returns the endpoint and the fingerprint.
pub fn bind(listen: SocketAddr, out: &Path) -> Result<(quinn::Endpoint, String), String> {
    std::fs::create_dir_all(out.join(IDENTITY_DIR).join("partial"))
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let identity = Identity::load_or_create(out)?;
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
    let _claim = rx.claim(&header.sha256)?;
    let target = rx.out.join(&header.name);
    if matches!(hash_file(&target).await, Ok((sha, size)) if sha == header.sha256 && size == header.size) {
        write_line(send, &Answer::Offset { offset: header.size }).await?;
        return Ok(());
    }
    let partial = rx.partial(&header.sha256);
    let offset = match tokio::fs::metadata(&partial).await {
        Ok(m) if m.len() <= header.size => m.len(),
        _ => 0,
    };
    let mut out = tokio::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(offset == 0)
        .append(offset > 0)
        .open(&partial)
        .await
        .map_err(|e| format!("{}: {e}", partial.display()))?;
    write_line(send, &Answer::Offset { offset }).await?;
    let got = copy(recv, &mut out, header.size - offset).await?;
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
        let _ = tokio::fs::remove_file(&partial).await;
        return Err(format!(
            "the bytes received hash to {sha}, not the announced {}; discarded",
            header.sha256
        ));
    }
    tokio::fs::rename(&partial, &target).await.map_err(|e| format!("{}: {e}", target.display()))
}

/// Copy at most `limit` bytes until the stream ends; more than `limit` is an error.
async fn copy(
    recv: &mut BufReader<quinn::RecvStream>,
    out: &mut tokio::fs::File,
    limit: u64,
) -> Result<u64, String> {
    let mut buf = vec![0u8; CHUNK];
    let mut got = 0u64;
    loop {
        let n = match recv.read(&mut buf).await {
            Ok(n) => n,
            // A reset or a lost connection: what arrived is kept.
            Err(_) => return Ok(got),
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

    #[test]
    fn one_content_is_received_by_one_stream_at_a_time() {
        let rx = Receiver::new(PathBuf::from("/nonexistent"));
        let first = rx.claim("aa").unwrap();
        assert!(rx.claim("aa").unwrap_err().contains("another stream"));
        assert!(rx.claim("bb").is_ok(), "other contents go on");
        drop(first);
        assert!(rx.claim("aa").is_ok(), "released when the stream ends");
    }
}
