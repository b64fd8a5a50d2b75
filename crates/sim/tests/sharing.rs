//! The fLEDBAT paper's sharing metrics end to end: long- and short-term Jain's index per link
//! and overall, efficiency η, and the less-than-best-effort share ("protocol breakdown").

mod common;

use common::*;

const TWO: &str = r#"
duration = "40s"
warmup = "10s"
[bottleneck]
rate = "10Mbps"
rtt = "50ms"
buffer = "100p"
[[flows]]
cca = "newreno"
count = 2
delayed_ack = false
"#;

#[test]
fn two_equal_flows_share_fairly_and_fill_the_link() {
    let r = run(TWO, &[], None);
    let l = link(&r, "bottleneck");
    let (long, short) = (l.jain_long.unwrap(), l.jain_short.unwrap());
    assert!(long > 0.95 && short > 0.85, "F {long}, short-term {short}");
    assert!(short <= long + 1e-9, "1 s bins see the sawtooth's swings a long mean hides");
    assert_eq!(l.lbe_share, Some(0.0));
    assert!(
        (l.efficiency - l.utilization).abs() < 0.01,
        "η {} vs utilization {}",
        l.efficiency,
        l.utilization
    );
    assert_eq!(r.summary.jain_short, l.jain_short, "every flow crosses the bottleneck");
    assert_eq!(link(&r, "bottleneck-rev").jain_long, None, "no data crosses the ACK direction");
}

#[test]
fn a_starved_lbe_flow_shows_in_every_metric() {
    let toml = TWO.replace("count = 2\n", "")
        + "[[flows]]\ncca = \"fledbat\"\ndelayed_ack = false\nmss = 1460\n[flows.cc]\nzeta = 0.1\n";
    let r = run(&toml, &[], None);
    let l = link(&r, "bottleneck");
    let share = l.lbe_share.unwrap();
    assert!(share < 0.2, "fLEDBAT kept {share} of the bytes beside NewReno");
    let long = l.jain_long.unwrap();
    // One flow (nearly) alone: F tends to 1/N = 0.5 (the notes' (9.0, 0.5) example gives 0.555).
    assert!((0.5..0.7).contains(&long), "F {long}");
    assert_eq!(r.summary.lbe_share, l.lbe_share);
}

#[test]
fn each_link_judges_the_flows_that_cross_it() {
    let toml =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/parking-lot.toml"))
            .unwrap();
    let r = run(&toml, &[], None);
    for name in ["l1", "l2", "l3"] {
        let l = link(&r, name);
        assert!(l.jain_long.is_some() && l.jain_short.is_some(), "{name}: the long flow and one cross flow");
        assert!(l.efficiency > 0.8, "{name}: η {}", l.efficiency);
    }
    assert!(r.summary.jain_short.unwrap() > 0.0);
}
