//! The files `rledbatd` is given (`--config`, `--socket`, `--log`), checked before anything on
//! the system changes: each problem is one line naming the flag. The daemon runs as root, so
//! it never follows a symbolic link at a path it creates or removes, and removes nothing but a
//! socket that no one answers on.

use std::fs::{File, Metadata};
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::Path;

use ccbench_files::{folder_of, io_why, kind};

/// A configuration file is a few lines; a larger one is a wrong path (`/dev/zero`, a log).
pub const CONFIG_MAX_BYTES: u64 = ccbench_files::InputKind::CONFIG.max_bytes;
/// `sun_path` holds 108 bytes including the terminating NUL.
pub const SOCKET_MAX_BYTES: usize = 107;

/// What is at the status socket's path before the daemon binds it.
#[derive(Debug, PartialEq)]
pub enum SocketPath {
    Absent,
    /// A socket no one answers on, left by a killed daemon: (device, inode), so it is
    /// removed only if it is still that file.
    Stale(u64, u64),
}

/// Every path of a `run` configuration — its status socket and its log — before the daemon
/// touches the system.
pub fn check(socket: &Path, log: Option<&Path>) -> Result<(), String> {
    check_socket(socket)?;
    if let Some(log) = log {
        check_log(log)?;
    }
    Ok(())
}

/// `--config`: a regular file of at most [`CONFIG_MAX_BYTES`] (a link to one is fine: it is
/// only read), read through the shared file layer (never waiting on a FIFO).
pub fn read_config(path: &str) -> Result<String, String> {
    if path.is_empty() {
        return Err("--config: the path is empty".into());
    }
    ccbench_files::read_text(Path::new(path), ccbench_files::InputKind::CONFIG)
        .map_err(|e| e.labelled("--config"))
}

/// `--socket` for `run`: absent, or a socket no one answers on; anything else is refused.
pub fn check_socket(path: &Path) -> Result<SocketPath, String> {
    let flag = "--socket";
    check_new(flag, path)?;
    let err = |why: String| format!("{flag} {}: {why}", path.display());
    if path.as_os_str().len() > SOCKET_MAX_BYTES {
        return Err(err(format!("longer than the {SOCKET_MAX_BYTES} bytes a socket's path may have")));
    }
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(SocketPath::Absent),
        Err(e) => return Err(err(io_why(&e))),
        Ok(m) => m,
    };
    if !meta.file_type().is_socket() {
        return Err(err(refusal(&meta, "a socket")));
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(err("another rledbatd answers there".into())),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => Ok(SocketPath::Stale(meta.dev(), meta.ino())),
        Err(e) => Err(err(format!(
            "a socket that is neither answering nor stale ({}); remove it yourself",
            io_why(&e)
        ))),
    }
}

/// Remove the stale socket [`check_socket`] found, if the path still names that very file.
/// Binding afterwards fails if anything has appeared there since.
pub fn remove_stale(path: &Path, dev: u64, ino: u64) -> Result<(), String> {
    let same = std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.file_type().is_socket() && (m.dev(), m.ino()) == (dev, ino));
    if !same {
        return Err(format!("--socket {}: changed while it was being checked; try again", path.display()));
    }
    std::fs::remove_file(path).map_err(|e| format!("--socket {}: {}", path.display(), io_why(&e)))
}

/// `--log`: absent (created) or a regular file (overwritten); never through a link.
pub fn check_log(path: &Path) -> Result<(), String> {
    check_new("--log", path)?;
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("--log {}: {}", path.display(), io_why(&e))),
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(format!("--log {}: {}", path.display(), refusal(&m, "a regular file"))),
    }
}

/// Create the log checked by [`check_log`] afresh beside its path and rename it into place
/// (`ccbench_files::publish`): a file there is replaced, never truncated or written through (a
/// hard link's other name keeps its bytes; a link planted since is replaced, not followed).
pub fn create_log(path: &Path) -> Result<File, String> {
    check_log(path)?;
    ccbench_files::publish(path).map(|(file, _)| file).map_err(|e| e.labelled("--log"))
}

/// Why `rledbatd status` could not connect to `path` (`e`), in one line naming `--socket`.
pub fn no_daemon(path: &Path, e: &std::io::Error) -> String {
    if let Err(why) = check_new("--socket", path) {
        return why;
    }
    let err = |why: String| format!("--socket {}: {why}", path.display());
    // A client may follow a link: connecting changes nothing.
    match std::fs::metadata(path) {
        Ok(m) if !m.file_type().is_socket() => err(format!("is a {}, not a socket", kind(&m))),
        Err(e) if e.kind() == ErrorKind::NotFound => err("no daemon is listening (no socket there)".into()),
        _ => err(format!("no daemon is listening ({})", io_why(e))),
    }
}

/// A path the daemon will create: not empty, in a folder that exists.
fn check_new(flag: &str, path: &Path) -> Result<(), String> {
    if path.as_os_str().is_empty() {
        return Err(format!("{flag}: the path is empty"));
    }
    let folder = folder_of(path);
    match std::fs::metadata(&folder) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) => {
            Err(format!("{flag} {}: {} is a {}, not a folder", path.display(), folder.display(), kind(&m)))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {
            Err(format!("{flag} {}: folder {} does not exist", path.display(), folder.display()))
        }
        Err(e) => Err(format!("{flag} {}: folder {}: {}", path.display(), folder.display(), io_why(&e))),
    }
}

/// Why an existing file that is not `wanted` is left alone.
fn refusal(meta: &Metadata, wanted: &str) -> String {
    let ft = meta.file_type();
    if ft.is_symlink() {
        format!("is a symbolic link; give {wanted}'s own path (a link is never followed)")
    } else if ft.is_dir() {
        format!("is a directory; give a path for {wanted} inside it")
    } else {
        format!("is a {}, not {wanted}; it is left alone", kind(meta))
    }
}

#[cfg(test)]
mod tests;
