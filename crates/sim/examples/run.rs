//! Run a scenario file and print its summary as JSON: `cargo run --release --example run -- FILE [key=value ...]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run SCENARIO.toml [key=value ...]");
        std::process::exit(2);
    };
    let overrides: Vec<String> = args.collect();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {path}: cannot read file: {e}");
            std::process::exit(2);
        }
    };
    match ccbench_sim::run_str(&text, &path, &overrides, None) {
        Ok(r) => {
            if std::env::var("SERIES").is_ok() {
                let f = &r.flows;
                println!("t_s,flow,goodput_mbps,cwnd,ssthresh,srtt_ms,inflight,retx");
                for i in 0..f.t_s.len() {
                    println!(
                        "{:.2},{},{:.2},{},{},{:.1},{},{}",
                        f.t_s[i],
                        f.flow[i],
                        f.goodput_mbps[i],
                        f.cwnd_bytes[i],
                        f.ssthresh_bytes[i],
                        f.srtt_ms[i],
                        f.inflight_bytes[i],
                        f.retransmits[i]
                    );
                }
            }
            println!("{}", serde_json::to_string_pretty(&r.summary).unwrap())
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
