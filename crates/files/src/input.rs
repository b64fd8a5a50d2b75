//! Reading what a user names: a scenario, a delivery trace, a daemon's configuration, a
//! certificate, a file to send. Opened with `O_NONBLOCK` (a FIFO answers at once instead of
//! waiting for a writer), refused unless a regular file, and read with a cap per kind (a device
//! or a runaway file is refused before it fills memory). A symbolic link to a regular file is
//! fine: reading changes nothing.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::{kind, FileError};

/// A kind of input and the most bytes one may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputKind {
    /// Name used by the bindings (`"scenario"`, `"trace"`, …).
    pub name: &'static str,
    /// What it is, in messages: "larger than 1 MiB, more than a scenario file holds".
    pub what: &'static str,
    /// Cap in bytes; `u64::MAX` for files that are streamed, never held whole.
    pub max_bytes: u64,
}

impl InputKind {
    /// A scenario file: real ones are a few kB of TOML.
    pub const SCENARIO: InputKind =
        InputKind { name: "scenario", what: "a scenario file", max_bytes: 1 << 20 };
    /// A mahimahi delivery trace: one line per opportunity, about 7 bytes each; 256 MiB is an
    /// hour at 1 Gbps of 1500-byte opportunities.
    pub const TRACE: InputKind = InputKind { name: "trace", what: "a delivery trace", max_bytes: 256 << 20 };
    /// `rledbatd --config`: a few lines.
    pub const CONFIG: InputKind =
        InputKind { name: "config", what: "a configuration file", max_bytes: 1 << 20 };
    /// A DER certificate or key: a few kB.
    pub const CERTIFICATE: InputKind =
        InputKind { name: "certificate", what: "a certificate or key", max_bytes: 1 << 20 };
    /// A run's `summary.json` read back (`Result.load`, the report): grows with flows and links.
    pub const SUMMARY: InputKind = InputKind { name: "summary", what: "a run summary", max_bytes: 256 << 20 };
    /// A file `ccbench-quic send` streams: any size, never held whole.
    pub const TRANSFER: InputKind =
        InputKind { name: "transfer", what: "a file to send", max_bytes: u64::MAX };
}

/// Every kind, for the bindings and the docs (looked up by [`InputKind::name`]).
pub const INPUT_KINDS: &[InputKind] = &[
    InputKind::SCENARIO,
    InputKind::TRACE,
    InputKind::CONFIG,
    InputKind::CERTIFICATE,
    InputKind::SUMMARY,
    InputKind::TRANSFER,
];

impl InputKind {
    /// The kind called `name`.
    pub fn named(name: &str) -> Option<InputKind> {
        INPUT_KINDS.iter().copied().find(|k| k.name == name)
    }
}

/// `path` opened for reading: a regular file (through a link is fine), never waited on.
pub fn open_input(path: &Path, kind_of: InputKind) -> Result<File, FileError> {
    if path.as_os_str().is_empty() {
        return Err(FileError::new(path, "the path is empty"));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| FileError::io(path, &e))?;
    let meta = file.metadata().map_err(|e| FileError::io(path, &e))?;
    if !meta.is_file() {
        return Err(FileError::new(
            path,
            format!("is a {}, not a regular file ({} must be one)", kind(&meta), kind_of.what),
        ));
    }
    if meta.len() > kind_of.max_bytes {
        return Err(too_large(path, kind_of));
    }
    Ok(file)
}

/// The bytes of `path`, at most `kind_of.max_bytes` of them.
pub fn read_input(path: &Path, kind_of: InputKind) -> Result<Vec<u8>, FileError> {
    let file = open_input(path, kind_of)?;
    let mut bytes = Vec::new();
    // One byte past the cap: the file may have grown since it was measured.
    file.take(kind_of.max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io(path, &e))?;
    if bytes.len() as u64 > kind_of.max_bytes {
        return Err(too_large(path, kind_of));
    }
    Ok(bytes)
}

/// [`read_input`] as UTF-8 text.
pub fn read_text(path: &Path, kind_of: InputKind) -> Result<String, FileError> {
    let bytes = read_input(path, kind_of)?;
    String::from_utf8(bytes).map_err(|e| {
        FileError::new(path, format!("not UTF-8 text (invalid byte at {})", e.utf8_error().valid_up_to()))
    })
}

fn too_large(path: &Path, kind_of: InputKind) -> FileError {
    FileError::new(path, format!("larger than {}, more than {} holds", size(kind_of.max_bytes), kind_of.what))
}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::scratch_dir;

    #[test]
    fn a_fifo_is_refused_at_once() {
        let dir = scratch_dir("fifo");
        let fifo = dir.join("trace");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
        let e = read_input(&fifo, InputKind::TRACE).unwrap_err();
        assert!(e.why.contains("is a FIFO, not a regular file (a delivery trace must be one)"), "{e}");
    }

    #[test]
    fn a_device_is_refused_and_a_directory_too() {
        let e = read_input(Path::new("/dev/zero"), InputKind::SCENARIO).unwrap_err();
        assert!(e.why.contains("character device"), "{e}");
        let e = read_input(Path::new("/tmp"), InputKind::SCENARIO).unwrap_err();
        assert!(e.why.contains("directory"), "{e}");
    }

    #[test]
    fn the_cap_holds() {
        let dir = scratch_dir("cap");
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; (1 << 20) + 1]).unwrap();
        let e = read_input(&big, InputKind::SCENARIO).unwrap_err();
        assert!(e.why.contains("larger than 1 MiB"), "{e}");
        std::fs::write(&big, vec![b'#'; 1 << 20]).unwrap();
        assert_eq!(read_input(&big, InputKind::SCENARIO).unwrap().len(), 1 << 20);
    }

    #[test]
    fn a_link_to_a_regular_file_is_read() {
        let dir = scratch_dir("link-in");
        std::fs::write(dir.join("real"), "x = 1\n").unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        assert_eq!(read_text(&dir.join("link"), InputKind::SCENARIO).unwrap(), "x = 1\n");
    }

    #[test]
    fn every_kind_is_found_by_name() {
        for k in INPUT_KINDS {
            assert_eq!(InputKind::named(k.name), Some(*k));
        }
    }
}
