//! `ccbench-quic`'s file transfer: one bidirectional stream per file.
//!
//! 1. The sender opens a stream with a header line, JSON: `{"name", "size", "sha256"}`.
//! 2. The receiver answers `{"offset": K}`: the bytes it already holds of that content (a
//!    partial file kept under its output directory, named by the content's hash), or
//!    `{"error": "…"}`.
//! 3. The sender sends bytes `K..size` and finishes the stream.
//! 4. The receiver hashes the whole file: if it matches, the file takes its name in the output
//!    directory and the answer is `{"ok": true}`; if not, the partial is removed and the answer is
//!    an error. A transfer cut short keeps its partial, so the next one sends only the rest.

pub mod recv;
pub mod send;

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The longest header or answer line accepted.
const MAX_LINE: u64 = 4096;
/// Read and write in pieces this large.
const CHUNK: usize = 256 * 1024;

/// What the sender says of a file before its bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub name: String,
    pub size: u64,
    pub sha256: String,
}

/// The receiver's answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    Offset { offset: u64 },
    Done { ok: bool },
    Error { error: String },
}

/// A file name the receiver may write: one plain component, not one of ours.
pub fn check_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && !name.starts_with(crate::tls::IDENTITY_DIR);
    if plain {
        Ok(())
    } else {
        Err(format!("file name {name:?} is not a plain file name"))
    }
}

/// SHA-256 of a file, lower-case hex, and its size.
pub async fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    // A regular file only: a FIFO planted at a received file's name must not hang the receiver.
    let file = ccbench_files::open_input(path, ccbench_files::InputKind::TRANSFER)
        .map_err(|e| std::io::Error::other(e.why))?;
    let mut file = tokio::fs::File::from_std(file);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((crate::tls::hex(&hasher.finalize()), size))
}

/// One JSON line, at most [`MAX_LINE`] bytes.
async fn read_line<T: for<'de> Deserialize<'de>>(r: &mut (impl AsyncBufRead + Unpin)) -> Result<T, String> {
    let mut line = String::new();
    let n = r.take(MAX_LINE).read_line(&mut line).await.map_err(|e| e.to_string())?;
    if n == 0 {
        return Err("the peer closed the stream".into());
    }
    if !line.ends_with('\n') {
        return Err(format!("a line longer than {MAX_LINE} bytes"));
    }
    serde_json::from_str(line.trim_end()).map_err(|e| format!("a malformed line {:?}: {e}", line.trim_end()))
}

async fn write_line<T: Serialize>(w: &mut (impl AsyncWrite + Unpin), value: &T) -> Result<(), String> {
    let mut line = serde_json::to_string(value).map_err(|e| e.to_string())?;
    line.push('\n');
    w.write_all(line.as_bytes()).await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_are_written() {
        assert!(check_name("backup.tar").is_ok());
        for bad in ["", ".", "..", "../etc/passwd", "a/b", "a\\b", ".ccbench-quic", "nul\0"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn answers_read_back_as_written() {
        for a in
            [Answer::Offset { offset: 7 }, Answer::Done { ok: true }, Answer::Error { error: "x".into() }]
        {
            let text = serde_json::to_string(&a).unwrap();
            assert_eq!(serde_json::from_str::<Answer>(&text).unwrap(), a);
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_line_too_long_or_malformed_is_an_error_not_a_panic() {
        let long = vec![b'x'; MAX_LINE as usize + 10];
        let err = read_line::<Header>(&mut &long[..]).await.unwrap_err();
        assert!(err.contains("longer than"), "{err}");
        let err = read_line::<Header>(&mut &b"{\"name\": 3}\n"[..]).await.unwrap_err();
        assert!(err.starts_with("a malformed line"), "{err}");
    }
}
