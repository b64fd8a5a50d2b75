//! `ccbench-quic`: move files over QUIC with any ccbench controller, less-than-best-effort by
//! default (LEDBAT++). See the README's "ccbench-quic" section.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use ccbench_params::{ParamValue, Params};
use ccbench_quic::tls::parse_fingerprint;
use ccbench_quic::transfer::recv::{self, Receiver};
use ccbench_quic::transfer::send::{send_files, Failure, SendOptions};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ccbench-quic",
    version,
    about = "Move files over QUIC with any ccbench congestion controller"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Receive files into a directory; prints the certificate fingerprint senders pin.
    Recv {
        /// Address and UDP port to listen on, e.g. 0.0.0.0:4433.
        #[arg(long)]
        listen: SocketAddr,
        /// Directory the files are written to (made if missing; keeps the certificate and
        /// partial transfers under .ccbench-quic/).
        #[arg(long)]
        out: PathBuf,
        /// Stop after the first connection ends.
        #[arg(long)]
        once: bool,
    },
    /// Send files to a receiver; a transfer cut short resumes where it stopped.
    Send {
        /// The files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The receiver's address and UDP port.
        #[arg(long)]
        to: SocketAddr,
        /// The receiver's certificate fingerprint, as `ccbench-quic recv` prints it.
        #[arg(long)]
        fingerprint: String,
        /// Congestion controller, any of `ccbench list controllers`.
        #[arg(long, default_value = "ledbat++")]
        cc: String,
        /// A controller parameter, KEY=VALUE (repeatable), e.g. target=25ms.
        #[arg(long = "cc-param", value_name = "KEY=VALUE")]
        cc_param: Vec<String>,
        /// Write the controller's state as CSV here.
        #[arg(long)]
        log: Option<PathBuf>,
        /// How often the log samples, in milliseconds.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=60_000))]
        log_interval_ms: u64,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail((1, format!("starting the runtime: {e}"))),
    };
    match runtime.block_on(run(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => fail(failure),
    }
}

/// clap's answer as the rest of our programs give bad input: one line, status 2 (help and the
/// version are printed as clap writes them, status 0).
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            fail((2, "give a command: recv or send (see ccbench-quic --help)".into()))
        }
        _ => fail((2, one_line_usage(&e.to_string()))),
    }
}

/// clap's message without its usage block and tips, on one line.
fn one_line_usage(rendered: &str) -> String {
    let said: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:"))
        .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
        .collect();
    let text = said.join(" ");
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    format!("{text} (see ccbench-quic --help)")
}

fn fail((code, message): Failure) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(code)
}

async fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Recv { listen, out, once } => {
            let (endpoint, fingerprint) = recv::bind(listen, &out).map_err(|e| (2, e))?;
            println!(
                "listening on {} ; senders pin --fingerprint {fingerprint}",
                endpoint.local_addr().map_err(|e| (1, e.to_string()))?
            );
            tokio::select! {
                () = recv::serve(endpoint, Receiver::new(out), once) => Ok(()),
                _ = tokio::signal::ctrl_c() => Ok(()),
            }
        }
        Command::Send { files, to, fingerprint, cc, cc_param, log, log_interval_ms } => {
            let fingerprint = parse_fingerprint(&fingerprint).map_err(|e| (2, e))?;
            let params = parse_params(&cc_param)?;
            let opt = SendOptions {
                to,
                fingerprint,
                cc,
                params,
                log,
                log_interval: Duration::from_millis(log_interval_ms),
            };
            send_files(&files, opt).await
        }
    }
}

/// `KEY=VALUE` pairs as controller parameters: integers, floats and booleans as such, the rest
/// (durations, rates, names) as text, which each parameter reads as it does in a scenario.
fn parse_params(pairs: &[String]) -> Result<Params, Failure> {
    let mut params = Params::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return Err((2, format!("--cc-param {pair:?}: expected KEY=VALUE")));
        };
        let value = if let Ok(i) = value.parse::<i64>() {
            ParamValue::Int(i)
        } else if let Ok(x) = value.parse::<f64>() {
            ParamValue::Float(x)
        } else if let Ok(b) = value.parse::<bool>() {
            ParamValue::Bool(b)
        } else {
            ParamValue::Str(value.to_string())
        };
        params.insert(key, value);
    }
    Ok(params)
}
