//! Writing a file: created beside its target under a fresh name with `O_CREAT | O_EXCL |
//! O_NOFOLLOW` (nothing planted there can be written through: the name is new, and a link
//! would be refused), then renamed over the target. `rename` replaces the name, so a link
//! planted at the target is replaced and its target keeps its bytes; a hard link's other name
//! keeps the old contents; a kill leaves the old file or the new one.
//!
//! A target that is a FIFO, a device, a socket or a directory is refused and left alone: no
//! program of ours writes one of those.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::owned::Owned;
use crate::{kind, scratch_name, FileError};

/// A file being written under a scratch name beside `target`; [`NewFile::commit`] renames it
/// into place, dropping it uncommitted removes it.
#[derive(Debug)]
pub struct NewFile {
    file: Option<File>,
    scratch: Owned,
    target: PathBuf,
}

impl NewFile {
    /// Start writing `target` (its folder must exist), readable by all.
    pub fn create(target: &Path) -> Result<NewFile, FileError> {
        NewFile::create_mode(target, 0o644)
    }

    /// Start writing `target` with permissions `mode` (`0o600` for a private key).
    pub fn create_mode(target: &Path, mode: u32) -> Result<NewFile, FileError> {
        check_target(target)?;
        for _ in 0..16 {
            let scratch = scratch_name(target, "new");
            let opened = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&scratch);
            match opened {
                Ok(file) => {
                    let meta = file.metadata().map_err(|e| FileError::io(&scratch, &e))?;
                    let owned = Owned { path: scratch, dev: meta.dev(), ino: meta.ino() };
                    return Ok(NewFile { file: Some(file), scratch: owned, target: target.to_path_buf() });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(FileError::io(target, &e)),
            }
        }
        Err(FileError::new(target, "no free scratch name beside it"))
    }

    /// The open file.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("open until committed")
    }

    /// Rename the finished file over the target.
    pub fn commit(mut self) -> Result<Owned, FileError> {
        let file = self.file.take().expect("committed once");
        file.sync_data().map_err(|e| FileError::io(&self.target, &e))?;
        drop(file);
        self.rename_into_place()
    }

    /// Rename the file into place now and keep writing it there (a log, a stream): readers
    /// see it grow; it is ours, so a later removal can check it.
    pub fn publish(mut self) -> Result<(File, Owned), FileError> {
        let file = self.file.take().expect("published once");
        let owned = self.rename_into_place()?;
        Ok((file, owned))
    }

    fn rename_into_place(&mut self) -> Result<Owned, FileError> {
        // Checked again: a FIFO or a folder may have appeared since `create`.
        check_target(&self.target)?;
        std::fs::rename(&self.scratch.path, &self.target).map_err(|e| FileError::io(&self.target, &e))?;
        let placed = Owned { path: self.target.clone(), dev: self.scratch.dev, ino: self.scratch.ino };
        self.scratch.path = PathBuf::new(); // nothing left to clean up
        Ok(placed)
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file().flush()
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if !self.scratch.path.as_os_str().is_empty() {
            let _ = self.scratch.remove();
        }
    }
}

/// A target a file may replace: absent, a regular file, or a link (replaced, never followed).
fn check_target(target: &Path) -> Result<(), FileError> {
    if target.as_os_str().is_empty() {
        return Err(FileError::new(target, "the path is empty"));
    }
    match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(FileError::io(target, &e)),
        Ok(m) if m.is_file() || m.file_type().is_symlink() => Ok(()),
        Ok(m) => {
            Err(FileError::new(target, format!("is a {}, not a regular file; it is left alone", kind(&m))))
        }
    }
}

/// Write `bytes` to `target` whole, or leave the old file.
pub fn write_atomic(target: &Path, bytes: &[u8]) -> Result<Owned, FileError> {
    let mut new = NewFile::create(target)?;
    new.write_all(bytes).map_err(|e| FileError::io(target, &e))?;
    new.commit()
}

/// Rename a finished file of ours (`from`) over `target`, which must be absent, a regular file
/// or a link (replaced, never followed); anything else is left alone.
pub fn rename_into_place(from: &Path, target: &Path) -> Result<(), FileError> {
    check_target(target)?;
    std::fs::rename(from, target).map_err(|e| FileError::io(target, &e))
}

/// A folder of this program's own inside one the user gave (`out/.ccbench-quic`): created if
/// absent, and refused if something else is there (a link planted at its name would send our
/// files elsewhere).
pub fn own_folder(path: &Path) -> Result<(), FileError> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() != ErrorKind::AlreadyExists => return Err(FileError::io(path, &e)),
        Err(_) => {}
    }
    let meta = std::fs::symlink_metadata(path).map_err(|e| FileError::io(path, &e))?;
    if meta.is_dir() {
        Ok(())
    } else {
        Err(FileError::new(path, format!("is a {}, not a folder; it is left alone", kind(&meta))))
    }
}

/// Create `target` afresh and keep writing it in place (a daemon's log): see
/// [`NewFile::publish`].
pub fn publish(target: &Path) -> Result<(File, Owned), FileError> {
    NewFile::create(target)?.publish()
}

/// Open a file this program wrote in an earlier run to continue it (a resumable transfer's
/// partial file): never through a link, never a FIFO, and never a file with another name (a
/// hard link planted there would make us write into someone else's file).
pub fn open_resumable(path: &Path) -> Result<File, FileError> {
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => FileError::new(path, "is a symbolic link; it is never followed"),
            _ => FileError::io(path, &e),
        })?;
    let meta = file.metadata().map_err(|e| FileError::io(path, &e))?;
    if !meta.is_file() {
        return Err(FileError::new(
            path,
            format!("is a {}, not a regular file; it is left alone", kind(&meta)),
        ));
    }
    if meta.nlink() != 1 {
        return Err(FileError::new(path, "has other names (hard links); it is left alone"));
    }
    Ok(file)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A fresh folder for one test.
    pub(crate) fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ccbench-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_planted_link_is_replaced_and_its_target_keeps_its_bytes() {
        let dir = scratch_dir("out-link");
        std::fs::write(dir.join("victim"), "precious").unwrap();
        std::os::unix::fs::symlink(dir.join("victim"), dir.join("summary.json")).unwrap();
        write_atomic(&dir.join("summary.json"), b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("victim")).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(dir.join("summary.json")).unwrap(), "{}\n");
        assert!(!std::fs::symlink_metadata(dir.join("summary.json")).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_hard_link_keeps_the_old_bytes() {
        let dir = scratch_dir("out-hard");
        std::fs::write(dir.join("victim"), "precious").unwrap();
        std::fs::hard_link(dir.join("victim"), dir.join("log")).unwrap();
        let (mut f, _) = publish(&dir.join("log")).unwrap();
        f.write_all(b"ours").unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("victim")).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(dir.join("log")).unwrap(), "ours");
    }

    #[test]
    fn fifos_devices_and_folders_are_left_alone() {
        let dir = scratch_dir("out-special");
        nix::unistd::mkfifo(&dir.join("fifo"), nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
        std::fs::create_dir(dir.join("folder")).unwrap();
        for name in ["fifo", "folder"] {
            let e = write_atomic(&dir.join(name), b"x").unwrap_err();
            assert!(e.why.contains("left alone"), "{e}");
        }
        assert!(write_atomic(Path::new("/dev/null"), b"x").unwrap_err().why.contains("character device"));
        // Nothing left behind but what was there.
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing() {
        let dir = scratch_dir("out-drop");
        let mut new = NewFile::create(&dir.join("a")).unwrap();
        new.write_all(b"half").unwrap();
        drop(new);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    }

    #[test]
    fn resumable_files_refuse_links_of_both_kinds() {
        let dir = scratch_dir("resume");
        std::fs::write(dir.join("victim"), "precious").unwrap();
        std::os::unix::fs::symlink(dir.join("victim"), dir.join("soft")).unwrap();
        std::fs::hard_link(dir.join("victim"), dir.join("hard")).unwrap();
        assert!(open_resumable(&dir.join("soft")).unwrap_err().why.contains("symbolic link"));
        assert!(open_resumable(&dir.join("hard")).unwrap_err().why.contains("hard links"));
        let mut f = open_resumable(&dir.join("partial")).unwrap();
        f.write_all(b"part").unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("victim")).unwrap(), "precious");
    }
}
