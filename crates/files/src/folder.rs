//! Run folders that are whole or absent. A run (an experiment, a campaign) writes into a
//! staging folder it creates beside the target, then swaps it in with one
//! `renameat2(RENAME_EXCHANGE)` (or `RENAME_NOREPLACE` when there is no previous folder): a kill
//! at any moment leaves the previous run's folder or the new one, never the new series beside
//! the old `summary.json`. The previous folder, now at the staging name, is removed only if it
//! is still the folder that was swapped out (device and inode).
//!
//! Nothing inside a folder this process just created can have been planted by anyone else, so
//! writers (Parquet, JSON, figures) write into [`StagedDir::path`] by plain paths.

use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{renameat2, RenameFlags, AT_FDCWD};

use crate::owned::Owned;
use crate::{kind, scratch_name, FileError};

/// A folder being filled beside `target`; [`StagedDir::commit`] swaps it in, dropping it
/// uncommitted removes it.
#[derive(Debug)]
pub struct StagedDir {
    staging: Option<Owned>,
    target: PathBuf,
}

impl StagedDir {
    /// Create the staging folder for `target`. A link at `target` is resolved (`--out` naming
    /// a link to a folder writes where it points); its parent must exist.
    pub fn create(target: &Path) -> Result<StagedDir, FileError> {
        let target = resolve(target)?;
        check_target(&target)?;
        let parent = crate::folder_of(&target);
        std::fs::create_dir_all(&parent).map_err(|e| FileError::io(&parent, &e))?;
        for _ in 0..16 {
            let staging = scratch_name(&target, "staging");
            match std::fs::DirBuilder::new().mode(0o755).create(&staging) {
                Ok(()) => {
                    let owned = Owned::record(&staging)?;
                    return Ok(StagedDir { staging: Some(owned), target });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(FileError::io(&target, &e)),
            }
        }
        Err(FileError::new(&target, "no free staging name beside it"))
    }

    /// Where to write the folder's files.
    pub fn path(&self) -> &Path {
        &self.staging.as_ref().expect("staged until committed").path
    }

    /// The folder this becomes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Start from what the target holds now: hard links to its files (and its folders made
    /// again, its links copied), leaving out the top-level entries `leave`. A campaign that
    /// reruns some experiments keeps the others' folders this way, at the cost of a link per
    /// file. Safe because no writer of ours changes a file in place: each writes a new file and
    /// renames it, so the previous folder's files never change through these links.
    pub fn link_previous(&self, leave: &[&str]) -> Result<(), FileError> {
        match std::fs::symlink_metadata(&self.target) {
            Ok(m) if m.is_dir() => link_tree(&self.target, self.path(), leave, 0),
            _ => Ok(()),
        }
    }

    /// [`StagedDir::commit`], first moving the target's top-level entries `carry` into the
    /// staged folder (one rename each): what must outlive the swap without being copied, like a
    /// campaign's run cache, which other processes may be using.
    pub fn commit_carrying(self, carry: &[&str]) -> Result<PathBuf, FileError> {
        let staging = self.path().to_path_buf();
        let mut carried = Vec::new();
        for name in carry {
            let (from, to) = (self.target.join(name), staging.join(name));
            if std::fs::symlink_metadata(&from).is_err() || std::fs::symlink_metadata(&to).is_ok() {
                continue;
            }
            std::fs::rename(&from, &to).map_err(|e| FileError::io(&from, &e))?;
            carried.push((from, to));
        }
        let target = self.target.clone();
        let committed = self.commit();
        if committed.is_err() {
            for (from, to) in carried {
                let _ = std::fs::rename(&to, &from); // put back what the failed swap did not take
            }
        }
        committed.map(|_| target)
    }

    /// Swap the staged folder in; the previous folder at the target, if any, is removed.
    pub fn commit(mut self) -> Result<PathBuf, FileError> {
        let staging = self.staging.take().expect("committed once");
        if !staging.is_there() {
            return Err(FileError::new(&staging.path, "the staging folder was replaced; nothing committed"));
        }
        let swapped = swap_in(&staging.path, &self.target);
        if swapped.is_err() {
            let _ = staging.remove();
        }
        if let Some(previous) = swapped? {
            // The old run's folder, now at the staging name: removed only if it is still that.
            let _ = previous.remove();
        }
        Ok(self.target.clone())
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if let Some(staging) = self.staging.take() {
            let _ = staging.remove();
        }
    }
}

/// Deepest folder [`link_tree`] descends into: run and experiment folders are two or three deep.
const LINK_DEPTH: usize = 32;

/// Hard-link the files of `from` into `to` (folders made again, symbolic links copied as
/// links, FIFOs, devices and sockets left out), but the top-level names in `leave`.
fn link_tree(from: &Path, to: &Path, leave: &[&str], depth: usize) -> Result<(), FileError> {
    if depth > LINK_DEPTH {
        return Err(FileError::new(from, format!("folders nested deeper than {LINK_DEPTH}")));
    }
    for entry in std::fs::read_dir(from).map_err(|e| FileError::io(from, &e))? {
        let entry = entry.map_err(|e| FileError::io(from, &e))?;
        let name = entry.file_name();
        if depth == 0 && leave.iter().any(|l| name == std::ffi::OsStr::new(l)) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let meta = std::fs::symlink_metadata(&src).map_err(|e| FileError::io(&src, &e))?;
        let linked = if meta.is_dir() {
            std::fs::DirBuilder::new()
                .mode(meta.mode() & 0o7777)
                .create(&dst)
                .map_err(|e| FileError::io(&dst, &e))?;
            link_tree(&src, &dst, leave, depth + 1)?;
            Ok(())
        } else if meta.is_file() {
            std::fs::hard_link(&src, &dst).or_else(|_| std::fs::copy(&src, &dst).map(drop))
        } else if meta.file_type().is_symlink() {
            std::fs::read_link(&src).and_then(|at| std::os::unix::fs::symlink(at, &dst))
        } else {
            Ok(()) // not something a run writes
        };
        linked.map_err(|e| FileError::io(&dst, &e))?;
    }
    Ok(())
}

/// Put `staging` at `target`; the folder swapped out (now at `staging`'s name), if any.
fn swap_in(staging: &Path, target: &Path) -> Result<Option<Owned>, FileError> {
    for _ in 0..4 {
        match std::fs::symlink_metadata(target) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                match renameat2(AT_FDCWD, staging, AT_FDCWD, target, RenameFlags::RENAME_NOREPLACE) {
                    Ok(()) => return Ok(None),
                    Err(Errno::EEXIST) => continue, // appeared meanwhile: swap with it
                    Err(e) => return Err(errno(target, e)),
                }
            }
            Err(e) => return Err(FileError::io(target, &e)),
            Ok(m) if m.is_dir() => {
                match renameat2(AT_FDCWD, staging, AT_FDCWD, target, RenameFlags::RENAME_EXCHANGE) {
                    Ok(()) => {
                        return Ok(Some(Owned { path: staging.to_path_buf(), dev: m.dev(), ino: m.ino() }))
                    }
                    Err(Errno::ENOENT) => continue, // gone meanwhile: rename without swapping
                    Err(e) => return Err(errno(target, e)),
                }
            }
            Ok(m) => return Err(not_a_folder(target, &m)),
        }
    }
    Err(FileError::new(target, "kept changing while the run was put in place"))
}

/// `target`, or where it leads when it is a symbolic link, or named by `.` or `..` (a folder
/// is swapped by its name in its parent).
fn resolve(target: &Path) -> Result<PathBuf, FileError> {
    if target.as_os_str().is_empty() {
        return Err(FileError::new(target, "the path is empty"));
    }
    if target.file_name().is_none() {
        return std::fs::canonicalize(target).map_err(|e| FileError::io(target, &e));
    }
    match std::fs::symlink_metadata(target) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(target) {
            Ok(real) => Ok(real),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                Err(FileError::new(target, "is a broken symbolic link; give a folder"))
            }
            Err(e) => Err(FileError::io(target, &e)),
        },
        _ => Ok(target.to_path_buf()),
    }
}

fn check_target(target: &Path) -> Result<(), FileError> {
    match std::fs::symlink_metadata(target) {
        Ok(m) if !m.is_dir() => Err(not_a_folder(target, &m)),
        _ => Ok(()),
    }
}

fn not_a_folder(target: &Path, meta: &std::fs::Metadata) -> FileError {
    FileError::new(target, format!("is a {}, not a folder; it is left alone", kind(meta)))
}

fn errno(path: &Path, e: Errno) -> FileError {
    FileError::new(path, e.desc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::scratch_dir;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_new_run_replaces_the_old_whole() {
        let dir = scratch_dir("stage");
        let target = dir.join("run");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("summary.json"), "old").unwrap();
        std::fs::write(target.join("owd.parquet"), "old").unwrap();
        let staged = StagedDir::create(&target).unwrap();
        std::fs::write(staged.path().join("summary.json"), "new").unwrap();
        // Until the commit the old run is all there is.
        assert_eq!(std::fs::read_to_string(target.join("summary.json")).unwrap(), "old");
        staged.commit().unwrap();
        assert_eq!(names(&target), ["summary.json"]);
        assert_eq!(std::fs::read_to_string(target.join("summary.json")).unwrap(), "new");
        assert_eq!(names(&dir), ["run"], "no staging folder or old run left");
    }

    #[test]
    fn a_planted_link_inside_the_old_run_goes_and_its_target_stays() {
        let dir = scratch_dir("stage-link");
        let target = dir.join("run");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(dir.join("victim"), "precious").unwrap();
        std::os::unix::fs::symlink(dir.join("victim"), target.join("summary.json")).unwrap();
        let staged = StagedDir::create(&target).unwrap();
        std::fs::write(staged.path().join("summary.json"), "new").unwrap();
        staged.commit().unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("victim")).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(target.join("summary.json")).unwrap(), "new");
    }

    #[test]
    fn a_run_folder_holds_run_files_only_and_each_a_file() {
        let dir = scratch_dir("run-check");
        let run = dir.join("run");
        assert!(check_run_folder(&run).is_ok(), "absent is fine");
        std::fs::create_dir(&run).unwrap();
        std::fs::write(run.join("summary.json"), "{}").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", run.join("owd.parquet")).unwrap();
        assert!(check_run_folder(&run).is_ok());
        std::fs::create_dir(run.join("flows.parquet")).unwrap();
        let e = check_run_folder(&run).unwrap_err();
        assert!(e.to_string().contains("flows.parquet: is a directory, not a run's file"), "{e}");
        std::fs::remove_dir(run.join("flows.parquet")).unwrap();
        std::fs::write(run.join("thesis.tex"), "mine").unwrap();
        let e = check_run_folder(&run).unwrap_err();
        assert!(e.why.contains("not a run's (thesis.tex)"), "{e}");
    }

    #[test]
    fn a_folder_named_by_dot_dot_is_swapped_by_its_own_name() {
        let dir = scratch_dir("stage-dots");
        std::fs::create_dir_all(dir.join("run/sub")).unwrap();
        let staged = StagedDir::create(&dir.join("run/sub/..")).unwrap();
        assert_eq!(staged.target(), std::fs::canonicalize(dir.join("run")).unwrap());
        std::fs::write(staged.path().join("summary.json"), "new").unwrap();
        staged.commit().unwrap();
        assert_eq!(names(&dir.join("run")), ["summary.json"]);
    }

    #[test]
    fn a_campaign_keeps_what_it_does_not_rewrite_and_carries_its_cache() {
        let dir = scratch_dir("stage-campaign");
        let root = dir.join("reproduce");
        std::fs::create_dir_all(root.join("experiments/a")).unwrap();
        std::fs::create_dir_all(root.join("experiments/b")).unwrap();
        std::fs::create_dir_all(root.join("cache")).unwrap();
        std::fs::write(root.join("experiments/a/meta.json"), "old a").unwrap();
        std::fs::write(root.join("experiments/b/meta.json"), "old b").unwrap();
        std::fs::write(root.join("cache/seg"), "runs").unwrap();
        let cache_ino = std::fs::metadata(root.join("cache/seg")).unwrap().ino();
        let staged = StagedDir::create(&root).unwrap();
        staged.link_previous(&["cache"]).unwrap();
        assert!(!staged.path().join("cache").exists(), "the cache is not linked, it is carried");
        // Rerun `a` only: its folder replaced (a new file, renamed), `b` kept as it was.
        crate::write_atomic(&staged.path().join("experiments/a/meta.json"), b"new a").unwrap();
        // Until the swap, the previous campaign is all there is.
        assert_eq!(std::fs::read_to_string(root.join("experiments/a/meta.json")).unwrap(), "old a");
        staged.commit_carrying(&["cache"]).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("experiments/a/meta.json")).unwrap(), "new a");
        assert_eq!(std::fs::read_to_string(root.join("experiments/b/meta.json")).unwrap(), "old b");
        assert_eq!(std::fs::metadata(root.join("cache/seg")).unwrap().ino(), cache_ino, "moved, not copied");
        assert_eq!(names(&dir), ["reproduce"]);
    }

    #[test]
    fn a_file_at_the_target_is_left_alone() {
        let dir = scratch_dir("stage-file");
        std::fs::write(dir.join("run"), "mine").unwrap();
        let e = StagedDir::create(&dir.join("run")).unwrap_err();
        assert!(e.why.contains("regular file, not a folder"), "{e}");
        assert_eq!(std::fs::read_to_string(dir.join("run")).unwrap(), "mine");
    }

    #[test]
    fn an_uncommitted_stage_leaves_nothing_and_a_link_to_a_folder_is_followed() {
        let dir = scratch_dir("stage-drop");
        std::fs::create_dir(dir.join("real")).unwrap();
        std::os::unix::fs::symlink(dir.join("real"), dir.join("out")).unwrap();
        drop(StagedDir::create(&dir.join("out")).unwrap());
        assert_eq!(names(&dir), ["out", "real"]);
        let staged = StagedDir::create(&dir.join("out")).unwrap();
        std::fs::write(staged.path().join("summary.json"), "new").unwrap();
        staged.commit().unwrap();
        assert!(std::fs::symlink_metadata(dir.join("out")).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(dir.join("out/summary.json")).unwrap(), "new");
    }
}

/// What a run folder holds (`summary.json`, the series, the plots `ccbench plot` adds), besides
/// `<link>.pcap` traces and the emulator's `rledbatd-<host>.csv` logs: a run may replace a
/// folder holding only these, and nothing else.
pub const RUN_FILES: &[&str] = &[
    "summary.json",
    "flows.parquet",
    "links.parquet",
    "sojourn.parquet",
    "owd.parquet",
    "cwnd.png",
    "rate.png",
    "queue.png",
];

/// Whether a file called `name` belongs to a run folder.
pub fn is_run_file(name: &str) -> bool {
    RUN_FILES.contains(&name)
        || name.ends_with(".pcap")
        || (name.starts_with("rledbatd-") && name.ends_with(".csv"))
}

/// `dir` is absent, empty, or a previous run's folder: only [`is_run_file`] names, each a
/// regular file (or a link, which is replaced, never followed). A run swapped in there replaces
/// nothing else: `--out ~` must not take a home folder with it, nor a folder or FIFO someone
/// put at `summary.json` its contents.
pub fn check_run_folder(dir: &Path) -> Result<(), FileError> {
    let entries = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
            let meta = std::fs::metadata(dir).map_err(|e| FileError::io(dir, &e))?;
            return Err(not_a_folder(dir, &meta));
        }
        Err(e) => return Err(FileError::io(dir, &e)),
        Ok(entries) => entries,
    };
    let mut foreign = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !is_run_file(&name) {
            foreign.push(name);
            continue;
        }
        let meta = std::fs::symlink_metadata(entry.path()).map_err(|e| FileError::io(&entry.path(), &e))?;
        if !(meta.is_file() || meta.file_type().is_symlink()) {
            return Err(FileError::new(
                &entry.path(),
                format!("is a {}, not a run's file; it is left alone (give another folder)", kind(&meta)),
            ));
        }
    }
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    let more = if foreign.len() > 3 { ", …" } else { "" };
    let listed: Vec<String> = foreign.iter().take(3).map(|n| crate::shown(Path::new(n))).collect();
    Err(FileError::new(
        dir,
        format!(
            "holds files that are not a run's ({}{more}); give a new or empty folder, or a previous run's",
            listed.join(", ")
        ),
    ))
}

/// A private scratch folder under the system's temporary folder, created afresh (never an
/// existing one: a folder planted at a predictable name would receive our files) and removed
/// when dropped, if it is still ours.
#[derive(Debug)]
pub struct TempDir(Owned);

impl TempDir {
    /// `<temp>/<prefix>-<pid>-<n>-<ns>`, mode 0700.
    pub fn create(prefix: &str) -> Result<TempDir, FileError> {
        let base = std::env::temp_dir().join(prefix);
        for _ in 0..16 {
            let path = std::env::temp_dir().join(format!("{prefix}-{}", crate::unique()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Owned::record(&path).map(TempDir),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(FileError::io(&path, &e)),
            }
        }
        Err(FileError::new(&base, "no free temporary name"))
    }

    pub fn path(&self) -> &Path {
        &self.0.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = self.0.remove();
    }
}
