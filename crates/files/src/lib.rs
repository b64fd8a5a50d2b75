//! The file layer every ccbench program goes through (`ccbench` via the Python bindings,
//! `ccbench-emu`, `rledbatd`, `ccbench-quic`). They run as root beside users' files, so each
//! rule is kept here once rather than at each call site:
//!
//! - **Inputs** ([`input`]) are opened non-blocking (a FIFO cannot hang us), must be regular
//!   files, and are read with a cap stated per [`InputKind`] (`/dev/zero` cannot fill memory).
//! - **Outputs** ([`output`]) are created beside their target under a fresh name with
//!   `O_CREAT | O_EXCL | O_NOFOLLOW` and renamed into place: a link planted at the target is
//!   replaced, never written through, and a kill leaves the old file or the new one.
//! - **Run folders** ([`folder`]) are staged the same way and swapped in whole with
//!   `renameat2(RENAME_EXCHANGE)`: a kill at any moment leaves the old run or the new one.
//! - **Removal** ([`owned`]) only of what this process created, checked by device and inode at
//!   the moment of removal.
//!
//! Errors are [`FileError`]: the path and why, on one line; callers prefix the flag or field.

#![forbid(unsafe_code)]

pub mod folder;
pub mod input;
pub mod output;
pub mod owned;

use std::fmt;
use std::fs::Metadata;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

pub use folder::{check_run_folder, is_run_file, StagedDir, TempDir, RUN_FILES};
pub use input::{open_input, read_input, read_text, InputKind, INPUT_KINDS};
pub use output::{open_resumable, own_folder, publish, rename_into_place, write_atomic, NewFile};
pub use owned::Owned;

/// A file operation refused or failed: the path and why, for a one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub path: PathBuf,
    pub why: String,
}

impl FileError {
    pub fn new(path: &Path, why: impl Into<String>) -> Self {
        FileError { path: path.to_path_buf(), why: why.into() }
    }

    fn io(path: &Path, e: &std::io::Error) -> Self {
        FileError::new(path, io_why(e))
    }

    /// The message with `label` (a flag, a field) in front: `--log /x: is a FIFO, …`.
    pub fn labelled(&self, label: &str) -> String {
        if label.is_empty() {
            self.to_string()
        } else {
            format!("{label} {self}")
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", shown(&self.path), self.why)
    }
}

impl std::error::Error for FileError {}

/// Longest path shown in a message; control characters are escaped so the message stays one
/// line.
const SHOW_AT_MOST: usize = 160;

/// `path` for a one-line message.
pub fn shown(path: &Path) -> String {
    let text: String = path.display().to_string().chars().flat_map(char::escape_default).collect();
    if text.chars().count() <= SHOW_AT_MOST {
        return text;
    }
    let half = SHOW_AT_MOST / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(text.chars().count() - half).collect();
    format!("{head}…{tail}")
}

/// What kind of file `meta` describes, in words.
pub fn kind(meta: &Metadata) -> &'static str {
    let ft = meta.file_type();
    match () {
        _ if ft.is_symlink() => "symbolic link",
        _ if ft.is_dir() => "directory",
        _ if ft.is_file() => "regular file",
        _ if ft.is_socket() => "socket",
        _ if ft.is_fifo() => "FIFO",
        _ if ft.is_char_device() => "character device",
        _ if ft.is_block_device() => "block device",
        _ => "special file",
    }
}

/// An I/O error without Rust's `(os error N)` suffix.
pub fn io_why(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The folder `path` is created in (`.` for a bare name).
pub fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A name for a scratch file or folder beside `target` that no other writer picks: the
/// process id, a per-process counter and the clock's nanoseconds. Hidden, and saying whose it
/// is, so a kill's leftovers are recognisable.
fn scratch_name(target: &Path, what: &str) -> PathBuf {
    let name = target.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    folder_of(target).join(format!(".{name}.{what}-{}", unique()))
}

/// `<pid>-<counter>-<nanoseconds>`: unique among this machine's processes at any one time.
fn unique() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}-{n}-{nanos:08x}", std::process::id())
}
