//! `rledbatd`: make this host's TCP downloads less-than-best-effort (see the crate docs and
//! the README's "rledbatd" section).

use std::path::PathBuf;
use std::process::ExitCode;

use rledbatd::config::{self, FLAGS};
use rledbatd::{daemon, iptables, paths, status};

fn usage() -> String {
    let mut s = String::from(
        "usage: rledbatd run [FLAGS]          make matching downloads less-than-best-effort\n       \
         rledbatd status [--socket PATH]  show each flow's window, RTT, queueing delay, state\n       \
         rledbatd cleanup [--queue N]     remove rules a killed daemon left (they fail open)\n\nrun flags:\n",
    );
    for (flag, help) in FLAGS {
        s.push_str(&format!("  {flag} {help}\n"));
    }
    s
}

/// Exit 2 for bad input (checked before anything on the system changes), 1 for a failure
/// while running.
fn main() -> ExitCode {
    match args().and_then(|args| command(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, message)) => {
            eprintln!("error: {message}");
            ExitCode::from(code)
        }
    }
}

/// The arguments after the program's name; a non-UTF-8 one is an error, not a panic.
fn args() -> Result<Vec<String>, (u8, String)> {
    std::env::args_os()
        .skip(1)
        .map(|a| a.into_string().map_err(|a| (2, format!("argument {a:?} is not UTF-8"))))
        .collect()
}

fn command(args: &[String]) -> Result<(), (u8, String)> {
    let Some((cmd, rest)) = args.split_first() else {
        return Err((2, "no command; usage: rledbatd run [FLAGS] | status [--socket PATH] | cleanup [--queue N] (rledbatd --help)".into()));
    };
    match cmd.as_str() {
        "run" => run(rest),
        "status" => {
            let path = socket_arg(rest)?;
            let conn = status::connect(&path).map_err(|e| (2, e))?;
            status::query(conn, &path).map(|text| print!("{text}")).map_err(|e| (1, e))
        }
        "cleanup" => queue_arg(rest).map(iptables::remove),
        "-h" | "--help" | "help" => {
            print!("{}", usage());
            Ok(())
        }
        other => Err((2, format!("unknown command {other:?} (run, status, cleanup)"))),
    }
}

/// Every flag and path is checked before the daemon touches the system (queues, rules).
fn run(rest: &[String]) -> Result<(), (u8, String)> {
    let cfg = config::from_args(rest).map_err(|e| (2, e))?;
    paths::check(&cfg.socket, cfg.log.as_deref()).map_err(|e| (2, e))?;
    daemon::run(cfg).map_err(|e| (1, e))
}

fn one_flag<'a>(rest: &'a [String], name: &str) -> Result<Option<&'a str>, (u8, String)> {
    match rest {
        [] => Ok(None),
        [f, v] if f == name => Ok(Some(v)),
        [f] if f.starts_with(&format!("{name}=")) => Ok(Some(&f[name.len() + 1..])),
        _ => Err((2, format!("expected at most {name} VALUE, got {:?}", rest.join(" ")))),
    }
}

fn socket_arg(rest: &[String]) -> Result<PathBuf, (u8, String)> {
    Ok(PathBuf::from(one_flag(rest, "--socket")?.unwrap_or("/run/rledbatd.sock")))
}

fn queue_arg(rest: &[String]) -> Result<u16, (u8, String)> {
    let Some(v) = one_flag(rest, "--queue")? else { return Ok(config::Config::default().queue) };
    config::parse_queue(v).map_err(|e| (2, format!("--queue: {e}")))
}
