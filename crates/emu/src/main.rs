//! The `ccbench-emu` program: a thin dispatcher. The traffic programs (`sink`, `source`,
//! `cbr-send`, `cbr-recv`) live in [`ccbench_emu::apps`], which documents their contract.

use ccbench_emu::apps;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((cmd, rest)) if cmd == "run" => ccbench_emu::run::main(rest),
        Some((cmd, rest)) if cmd == "testbed" => ccbench_emu::testbed::main(rest),
        Some((cmd, rest)) if apps::COMMANDS.contains(&cmd.as_str()) => apps::run(cmd, rest),
        _ => Err(apps::AppError::usage(format!(
            "usage: ccbench-emu run SCENARIO.toml --out DIR | testbed SCENARIO.toml [--for S] | <{}> [--flag value]...",
            apps::COMMANDS.join("|")
        ))),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(e.exit_code());
    }
}
