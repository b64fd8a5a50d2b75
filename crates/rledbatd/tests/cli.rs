//! The `rledbatd` program given bad or hostile arguments: one line `error: …` naming the flag,
//! exit 2, before it touches anything (no root, NFQUEUE or iptables is reached: every `run`
//! below also says `--no-iptables`, in case a check ever lets one through).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A fresh folder of the test's own, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("rledbatd-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Exit code and stderr of `rledbatd args…`; killed (and failed) after 10 s.
fn rledbatd<S: AsRef<OsStr>>(args: &[S]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rledbatd"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("rledbatd {:?} hung", args.iter().map(|a| a.as_ref().to_owned()).collect::<Vec<_>>());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    (status.code().unwrap_or(-1), err)
}

/// `line` split into words (paths here have no spaces).
fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(String::from).collect()
}

/// Exit 2 and exactly one line `error: …` containing `expect`.
fn refused<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S], expect: &str) {
    let (code, err) = rledbatd(args);
    assert_eq!(code, 2, "{args:?}: exit {code}, {err:?}");
    assert!(
        err.starts_with("error: ") && err.ends_with('\n') && err.lines().count() == 1,
        "{args:?}: {err:?}"
    );
    assert!(err.contains(expect), "{args:?}: {err:?} lacks {expect:?}");
}

#[test]
fn a_users_file_at_the_socket_path_is_left_alone() {
    let d = Dir::new("victim");
    let victim = d.path("victim.txt");
    std::fs::write(&victim, "the user's").unwrap();
    let args = words(&format!("run --no-iptables --remote-port 443 --duration 1s --socket {victim}"));
    refused(&args, &format!("--socket {victim}: is a regular file, not a socket"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's");
    // Nor through a link, nor a folder (which used to say "Address already in use").
    let link = d.path("link.sock");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    refused(&words(&format!("run --no-iptables --duration 1s --socket {link}")), "is a symbolic link");
    let folder = d.0.display().to_string();
    refused(&words(&format!("run --no-iptables --duration 1s --socket {folder}")), "is a directory");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's");
}

#[test]
fn a_live_daemons_socket_is_refused() {
    let d = Dir::new("live");
    let sock = d.path("r.sock");
    let _live = UnixListener::bind(&sock).unwrap();
    refused(&words(&format!("run --no-iptables --socket {sock}")), "another rledbatd answers there");
    assert!(Path::new(&sock).exists());
}

#[test]
fn missing_folders_and_bad_paths_exit_2_naming_the_flag() {
    let d = Dir::new("paths");
    let nope = d.path("nope");
    let file = d.path("file");
    std::fs::write(&file, "").unwrap();
    for (args, expect) in [
        (
            format!("run --no-iptables --socket {nope}/s.sock"),
            format!("--socket {nope}/s.sock: folder {nope} does not exist"),
        ),
        (
            format!("run --no-iptables --log {nope}/l.csv"),
            format!("--log {nope}/l.csv: folder {nope} does not exist"),
        ),
        (
            format!("run --no-iptables --log {file}/l.csv"),
            format!("--log {file}/l.csv: {file} is a regular file, not a folder"),
        ),
        (
            format!("run --no-iptables --socket {}/s.sock --log {}", d.0.display(), d.0.display()),
            "--log".into(),
        ),
        (
            format!("run --no-iptables --config {}", d.0.display()),
            "is a directory, not a regular file".into(),
        ),
        ("run --no-iptables --config /dev/zero".into(), "--config /dev/zero: is a character device".into()),
        (
            format!("status --socket {nope}/s.sock"),
            format!("--socket {nope}/s.sock: folder {nope} does not exist"),
        ),
        (format!("status --socket {nope}"), format!("--socket {nope}: no daemon is listening")),
        (format!("status --socket {file}"), "is a regular file, not a socket".into()),
    ] {
        refused(&words(&args), &expect);
    }
    refused(&["run", "--no-iptables", "--socket="], "--socket: the path is empty");
    refused(&["status", "--socket="], "--socket: the path is empty");
}

#[test]
fn bad_flags_exit_2_naming_the_flag_and_never_panic() {
    for (args, expect) in [
        ("run --no-iptables --queue 65535", "--queue: expected a queue number 0-65534"),
        ("run --no-iptables --queue 99999999999999999999999", "--queue"),
        ("run --no-iptables --queue", "--queue needs a value"),
        ("run --no-iptables --remote-port 1,,2", "--remote-port"),
        ("run --no-iptables --local-port -5", "--local-port"),
        ("run --no-iptables --remote-addr 300.1.1.1", "--remote-addr"),
        ("run --no-iptables --duration 0", "--duration: must be longer than 0"),
        ("run --no-iptables --duration 1e30s", "--duration"),
        ("run --no-iptables --duration 99999999999999s", "--duration: duration too large"),
        ("run --no-iptables --log-interval -1s", "--log-interval"),
        ("run --no-iptables --idle-timeout 5parsecs", "--idle-timeout"),
        ("run --no-iptables --cc =5", "--cc: expected KEY=VALUE"),
        ("run --no-iptables --no-iptables=yes", "--no-iptables takes no value"),
        ("run --no-iptables --log --duration 1s", "--log needs a value"),
        ("run --no-iptables --bogus", "unknown argument --bogus"),
        ("run", "no rules"),
        ("cleanup --queue 65535", "--queue: expected a queue number 0-65534"),
        ("cleanup --queue", "--queue"),
        ("status --socket", "--socket"),
        ("frobnicate", "unknown command"),
    ] {
        refused(&words(args), expect);
    }
    refused(
        &["run", "--no-iptables", "--remote-port", ""],
        "--remote-port: expected a port number, got \"\"",
    );
    refused(&["run", "--no-iptables", "--remote-addr", ""], "--remote-addr");
    refused(&["run", "--no-iptables", "--duration", ""], "--duration");
}

#[test]
fn no_command_is_a_one_line_usage_error() {
    refused(&Vec::<String>::new(), "no command; usage: rledbatd run");
    let (code, _) = rledbatd(&["--help"]);
    assert_eq!(code, 0);
}

#[test]
fn a_non_utf8_argument_is_an_error_not_a_panic() {
    let bad = OsStr::from_bytes(b"/tmp/\xff.sock");
    let (code, err) = rledbatd(&[OsStr::new("run"), OsStr::new("--socket"), bad]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("error: argument ") && err.contains("is not UTF-8") && err.lines().count() == 1,
        "{err:?}"
    );
}
