//! What is at a path decides what the daemon may do there: only a stale socket is removed.

use std::os::unix::net::UnixListener;

use super::*;
use crate::status::listen;
use std::path::PathBuf;

/// A fresh folder of the test's own, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("rledbatd-paths-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A socket file no one listens on, as a killed daemon leaves it.
fn stale_socket(path: &Path) {
    drop(UnixListener::bind(path).unwrap());
    assert!(std::fs::symlink_metadata(path).unwrap().file_type().is_socket());
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn one_line(e: &str, contains: &str) {
    assert!(e.contains(contains), "{e:?} lacks {contains:?}");
    assert!(!e.contains('\n') && !e.contains("os error"), "{e:?}");
}

#[test]
fn listen_leaves_a_regular_file_alone() {
    let d = Dir::new("victim");
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "the user's").unwrap();
    let e = listen(&victim).unwrap_err();
    one_line(&e, "--socket");
    one_line(&e, "is a regular file, not a socket");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's");
}

#[test]
fn listen_never_follows_a_symbolic_link() {
    let d = Dir::new("link");
    let (target, link) = (d.join("victim.txt"), d.join("link.sock"));
    std::fs::write(&target, "the user's").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    one_line(&listen(&link).unwrap_err(), "is a symbolic link");
    // Not even to a stale socket: the link and what it points to stay.
    let sock = d.join("stale.sock");
    stale_socket(&sock);
    let link2 = d.join("link2.sock");
    std::os::unix::fs::symlink(&sock, &link2).unwrap();
    one_line(&listen(&link2).unwrap_err(), "is a symbolic link");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::symlink_metadata(&sock).unwrap().file_type().is_socket());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "the user's");
}

#[test]
fn listen_on_a_directory_says_so() {
    let d = Dir::new("dir");
    let e = listen(&d.0).unwrap_err();
    one_line(&e, "is a directory");
    assert!(d.0.is_dir());
}

#[test]
fn listen_leaves_a_fifo_alone() {
    let d = Dir::new("fifo");
    let fifo = d.join("f");
    mkfifo(&fifo);
    one_line(&listen(&fifo).unwrap_err(), "is a FIFO, not a socket");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn listen_replaces_a_stale_socket_and_refuses_a_live_one() {
    let d = Dir::new("stale");
    let path = d.join("r.sock");
    stale_socket(&path);
    assert!(matches!(check_socket(&path), Ok(SocketPath::Stale(..))));
    let live = listen(&path).unwrap();
    one_line(&listen(&path).unwrap_err(), "another rledbatd answers there");
    assert!(path.exists(), "the live daemon's socket stays");
    drop(live);
}

#[test]
fn a_stale_socket_replaced_since_its_check_is_not_removed() {
    let d = Dir::new("race");
    let path = d.join("r.sock");
    stale_socket(&path);
    let Ok(SocketPath::Stale(dev, ino)) = check_socket(&path) else { panic!("not stale") };
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, "appeared meanwhile").unwrap();
    one_line(&remove_stale(&path, dev, ino).unwrap_err(), "changed while it was being checked");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "appeared meanwhile");
}

#[test]
fn a_missing_folder_empty_path_or_long_path_is_named() {
    let d = Dir::new("folder");
    let missing = d.join("nope/s.sock");
    let e = check_socket(&missing).unwrap_err();
    assert_eq!(
        e,
        format!("--socket {}: folder {} does not exist", missing.display(), d.join("nope").display())
    );
    let e = check_log(&missing).unwrap_err();
    one_line(&e, "--log");
    one_line(&e, "does not exist");
    let file = d.join("file");
    std::fs::write(&file, "").unwrap();
    one_line(&check_socket(&file.join("s.sock")).unwrap_err(), "is a regular file, not a folder");
    assert_eq!(check_socket(Path::new("")).unwrap_err(), "--socket: the path is empty");
    assert_eq!(check_log(Path::new("")).unwrap_err(), "--log: the path is empty");
    let long = d.join(&"x".repeat(120));
    one_line(&check_socket(&long).unwrap_err(), "longer than the 107 bytes");
    assert_eq!(check_socket(Path::new("bare-name.sock")).ok(), Some(SocketPath::Absent), "folder .");
}

#[test]
fn the_log_is_a_regular_file_or_nothing() {
    let d = Dir::new("log");
    let log = d.join("l.csv");
    check_log(&log).unwrap();
    std::fs::write(&log, "old").unwrap();
    check_log(&log).unwrap(); // overwritten, as `>` would
    one_line(&check_log(&d.0).unwrap_err(), "is a directory");
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    one_line(&check_log(&fifo).unwrap_err(), "is a FIFO, not a regular file");
    let (target, link) = (d.join("victim"), d.join("link.csv"));
    std::fs::write(&target, "the user's").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    one_line(&check_log(&link).unwrap_err(), "is a symbolic link");
    // Even if the link appears after the check, opening does not follow it, nor block on a FIFO.
    one_line(&create_log(&link).unwrap_err(), "--log");
    one_line(&create_log(&fifo).unwrap_err(), "is a FIFO");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "the user's");
}

#[test]
fn the_config_file_is_a_small_regular_file() {
    let d = Dir::new("config");
    let dir = d.0.display().to_string();
    assert_eq!(
        read_config(&dir).unwrap_err(),
        format!("--config {dir}: is a directory, not a regular file (a configuration file must be one)")
    );
    one_line(&read_config("/dev/zero").unwrap_err(), "is a character device, not a regular file");
    assert_eq!(read_config("").unwrap_err(), "--config: the path is empty");
    let big = d.join("big.toml");
    std::fs::write(&big, vec![b'#'; CONFIG_MAX_BYTES as usize + 1]).unwrap();
    one_line(&read_config(&big.display().to_string()).unwrap_err(), "larger than 1 MiB");
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    one_line(&read_config(&fifo.display().to_string()).unwrap_err(), "is a FIFO");
    // no hang
}

#[test]
fn status_says_why_no_daemon_answers() {
    let d = Dir::new("status");
    let why = |p: &Path| no_daemon(p, &UnixStream::connect(p).unwrap_err());
    let missing = d.join("none.sock");
    assert_eq!(
        why(&missing),
        format!("--socket {}: no daemon is listening (no socket there)", missing.display())
    );
    let stale = d.join("stale.sock");
    stale_socket(&stale);
    one_line(&why(&stale), "no daemon is listening (Connection refused)");
    one_line(&why(&d.join("nope/s.sock")), "does not exist");
    one_line(&why(&d.0), "is a directory, not a socket");
}
