//! Flows of different RTTs sharing a drop-tail queue: the SIAD thesis's Table 4.4 setting (two
//! flows of base RTT 100 and 200 ms, 20 Mbps, a buffer of one BDP at 150 ms, 600 s, real Linux
//! kernels with delayed ACKs). The short flow must win, as it does on real hosts; without the
//! hosts' timing noise a perfectly periodic simulation lets drop-tail phase effects decide
//! instead, and the short flow can starve (Floyd and Jacobson 1992; docs/model.md).

mod common;

use common::*;

const PAIR: &str = r#"
duration = "600s"
[bottleneck]
rate = "20Mbps"
rtt = "100ms"
buffer = "375kB"
[[flows]]
name = "short"
rtt = "100ms"
[[flows]]
name = "long"
rtt = "200ms"
"#;

const SEEDS: u64 = 5;

/// Mean goodput (Mbps) of the short and the long flow over five seeds.
fn mean_pair(cca: &str, delayed_ack: bool) -> (f64, f64) {
    let (cca, dack) = (format!("\"{cca}\""), delayed_ack.to_string());
    let sets = [
        format!("flows[0].cca={cca}"),
        format!("flows[1].cca={cca}"),
        format!("flows[0].delayed_ack={dack}"),
        format!("flows[1].delayed_ack={dack}"),
    ];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let (mut short, mut long) = (0.0, 0.0);
    for seed in 1..=SEEDS {
        let r = run(PAIR, &sets, Some(seed));
        short += r.summary.flows[0].goodput_mbps;
        long += r.summary.flows[1].goodput_mbps;
    }
    (short / SEEDS as f64, long / SEEDS as f64)
}

/// Table 4.4: NewReno 15.13 / 4.87 Mbps, CUBIC 12.73 / 7.27 Mbps (short / long RTT flow).
#[test]
fn with_delayed_acks_the_short_rtt_flow_wins_and_cubic_matches_table_4_4() {
    let (short, long) = mean_pair("newreno", true);
    assert!(short > long, "NewReno: short {short:.2} Mbps, long {long:.2} Mbps");
    let (short, long) = mean_pair("cubic", true);
    assert!(short > long, "CUBIC: short {short:.2} Mbps, long {long:.2} Mbps");
    for (ours, paper) in [(short, 12.73), (long, 7.27)] {
        assert!((ours - paper).abs() <= 0.15 * paper, "CUBIC {ours:.2} Mbps vs Table 4.4 {paper}");
    }
}

#[test]
fn without_delayed_acks_no_flow_starves() {
    for cca in ["newreno", "cubic"] {
        let (short, long) = mean_pair(cca, false);
        assert!(short.min(long) > 0.25 * 20.0, "{cca}: short {short:.2} Mbps, long {long:.2} Mbps");
    }
}
