//! Removing only what this process created. A path is a name, and between creating a file and
//! removing it anyone may have put something else at that name (a user's file, another
//! program's live socket); so a creation is recorded by device and inode, and removal checks
//! the name still leads to that very file the moment before unlinking it.

use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::FileError;

/// A file or folder this process created: its path and identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
}

impl Owned {
    /// Record what is at `path` now (not following a link), right after creating it.
    pub fn record(path: &Path) -> Result<Owned, FileError> {
        let meta = std::fs::symlink_metadata(path).map_err(|e| FileError::io(path, &e))?;
        Ok(Owned { path: path.to_path_buf(), dev: meta.dev(), ino: meta.ino() })
    }

    /// Whether `path` still names the file created.
    pub fn is_there(&self) -> bool {
        std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == (self.dev, self.ino))
    }

    /// Remove the file (or the folder and what is in it) if the path still names it; otherwise
    /// leave whatever is there alone and say so. Already gone is fine.
    pub fn remove(&self) -> Result<(), FileError> {
        let meta = match std::fs::symlink_metadata(&self.path) {
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(FileError::io(&self.path, &e)),
            Ok(m) => m,
        };
        if (meta.dev(), meta.ino()) != (self.dev, self.ino) {
            return Err(FileError::new(&self.path, "is no longer the file this program created; left alone"));
        }
        // `remove_dir_all` never follows links inside the folder: a planted link goes, its
        // target stays.
        let removed = if meta.is_dir() {
            std::fs::remove_dir_all(&self.path)
        } else {
            std::fs::remove_file(&self.path)
        };
        match removed {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(FileError::io(&self.path, &e)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::scratch_dir;

    #[test]
    fn a_replaced_file_is_left_alone() {
        let dir = scratch_dir("owned");
        let path = dir.join("sock");
        std::fs::write(&path, "ours").unwrap();
        let ours = Owned::record(&path).unwrap();
        // Moved away (not removed, so its inode cannot be reused for theirs).
        std::fs::rename(&path, dir.join("moved")).unwrap();
        std::fs::write(dir.join("theirs"), "theirs").unwrap();
        std::fs::rename(dir.join("theirs"), &path).unwrap();
        let e = ours.remove().unwrap_err();
        assert!(e.why.contains("no longer the file"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "theirs");
    }

    #[test]
    fn our_file_goes_and_gone_is_fine() {
        let dir = scratch_dir("owned2");
        let path = dir.join("f");
        std::fs::write(&path, "ours").unwrap();
        let ours = Owned::record(&path).unwrap();
        ours.remove().unwrap();
        assert!(!path.exists());
        ours.remove().unwrap();
    }
}
