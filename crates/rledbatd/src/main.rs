//! `rledbatd`: make this host's TCP downloads less-than-best-effort (see the crate docs and
//! the README's "rledbatd" section).

use std::path::PathBuf;
use std::process::ExitCode;

use rledbatd::config::{self, FLAGS};
use rledbatd::{daemon, iptables, status};

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

/// Exit 2 for bad input, 1 for a failure while running.
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, rest) = match args.split_first() {
        Some((c, rest)) => (c.as_str(), rest),
        None => ("--help", &args[..]),
    };
    let result = match cmd {
        "run" => match config::from_args(rest) {
            Ok(cfg) => daemon::run(cfg).map_err(|e| (1, e)),
            Err(e) => Err((2, e)),
        },
        "status" => {
            socket_arg(rest).and_then(|p| status::query(&p).map_err(|e| (1, e))).map(|text| print!("{text}"))
        }
        "cleanup" => queue_arg(rest).map(iptables::remove),
        "-h" | "--help" | "help" => {
            print!("{}", usage());
            Ok(())
        }
        other => Err((2, format!("unknown command {other:?} (run, status, cleanup)"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, message)) => {
            eprintln!("rledbatd: error: {message}");
            ExitCode::from(code)
        }
    }
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
    v.parse().map_err(|_| (2, format!("--queue: expected a queue number 0-65534, got {v:?}")))
}
