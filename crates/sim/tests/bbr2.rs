//! BBRv2 end to end (issue 10 item 3): alone on 20 Mb/s, 100 ms with a 5·BDP buffer it fills
//! the link with an almost empty queue and visits ProbeRTT (half the BDP) every 5 s or more;
//! in a shallow buffer its loss response keeps the loss rate far below BBRv1's; against CUBIC
//! in a deep buffer it takes less than BBRv1; and against an rLEDBAT download it yields at
//! short RTTs and takes the larger share at long ones (paper Figs. 18–19, L462–L476 of
//! `shared/seeds/000_0bcdc4d0e80e9a68.txt`).

mod common;

use common::*;

/// 20 Mb/s · 100 ms in bytes.
const BDP: f64 = 250_000.0;

fn path(rtt_ms: u32, buffer: &str, duration_s: u32, warmup_s: u32) -> String {
    format!(
        "duration = \"{duration_s}s\"\nwarmup = \"{warmup_s}s\"\n[bottleneck]\nrate = \"20Mbps\"\n\
         rtt = \"{rtt_ms}ms\"\nbuffer = \"{buffer}\"\n"
    )
}

fn flow(name: &str, cca: &str, extra: &str) -> String {
    format!("[[flows]]\nname = \"{name}\"\ncca = \"{cca}\"\n{extra}\n")
}

/// Runs of consecutive bins of flow 0 whose cwnd is at most `limit` bytes: (first, last) bin end.
fn low_cwnd_episodes(r: &ccbench_sim::SimResult, limit: f64, bin_s: f64) -> Vec<(f64, f64)> {
    let f = &r.flows;
    let mut episodes: Vec<(f64, f64)> = Vec::new();
    for i in (0..f.t_s.len()).filter(|&i| f.flow[i] == 0 && f.cwnd_bytes[i] <= limit && f.t_s[i] > 1.0) {
        match episodes.last_mut() {
            Some(last) if f.t_s[i] - last.1 < 1.5 * bin_s => last.1 = f.t_s[i],
            _ => episodes.push((f.t_s[i], f.t_s[i])),
        }
    }
    episodes
}

#[test]
fn alone_bbr2_fills_the_link_with_an_almost_empty_queue() {
    let r = run(&(path(100, "5bdp", 60, 5) + &flow("a", "bbr2", "")), &["output.bin=\"50ms\""], None);
    let l = link(&r, "bottleneck");
    let q = l.queue_delay_ms.unwrap();
    // Cruising paces 1 % under the estimate and leaves the link idle a little between probes:
    // measured 0.937. The queue is empty except during UP (≤ 0.25·BDP = 25 ms): measured p50
    // 0.15 ms, p90 0.44 ms, p99 19.8 ms.
    assert!(l.utilization > 0.9, "utilization {}", l.utilization);
    assert!(q.p50 < 5.0, "median queueing delay {} ms", q.p50);
    assert!(q.p90 < 25.0, "p90 queueing delay {} ms", q.p90);
    assert_eq!(l.drops, 0, "a 5·BDP buffer never overflows under BBRv2 alone");
    // ProbeRTT (v2: every 5 s unless an RTT sample matched the minimum, at 0.5·BDP, not v1's
    // 4 packets): cwnd between 0.4 and 0.55 BDP for 200 ms plus a round. Measured at 5.15,
    // 11.95, 19.8, 28.0, 33.3, 41.45, 46.7 and 51.95 s, 0.25–0.3 s each, cwnd 84 packets.
    let episodes = low_cwnd_episodes(&r, 0.55 * BDP, 0.05);
    assert!(episodes.len() >= 6, "ProbeRTT episodes {episodes:?}");
    assert!((5.0..5.5).contains(&episodes[0].0), "first ProbeRTT {episodes:?}");
    for w in episodes.windows(2) {
        assert!(w[1].0 - w[0].1 >= 4.9, "ProbeRTT less than 5 s apart: {episodes:?}");
    }
    let f = &r.flows;
    for (start, end) in &episodes {
        assert!((0.2..=0.5).contains(&(end - start + 0.05)), "ProbeRTT {start}–{end} s");
        let lowest = (0..f.t_s.len())
            .filter(|&i| f.t_s[i] >= *start && f.t_s[i] <= *end)
            .map(|i| f.cwnd_bytes[i])
            .fold(f64::MAX, f64::min);
        assert!(lowest >= 0.4 * BDP, "ProbeRTT cwnd {lowest} B at {start} s");
    }
}

/// Loss rate at the bottleneck and utilization of `cca` alone behind a 0.1·BDP (17-packet) buffer.
fn shallow(cca: &str) -> (f64, f64) {
    let r = run(&(path(100, "0.1bdp", 60, 10) + &flow("a", cca, "")), &[], None);
    let l = link(&r, "bottleneck");
    (l.loss_rate, l.utilization)
}

/// BBRv2's point against v1: a probe that loses more than 2 % sets `inflight_hi`, and later
/// probes stay under it, so the loss rate stays low where v1 keeps pushing 2·BDP. Measured:
/// BBRv2 0.16 % (utilization 0.922), BBRv1 2.4 % (0.929).
#[test]
fn shallow_buffer_bbr2_keeps_losses_low_where_bbr_does_not() {
    let (v2_loss, v2_util) = shallow("bbr2");
    let (v1_loss, _) = shallow("bbr");
    assert!(v2_loss < 0.005, "BBRv2 loss rate {v2_loss}");
    assert!(v2_loss < v1_loss / 5.0, "BBRv2 {v2_loss} vs BBRv1 {v1_loss}");
    assert!(v2_util > 0.85, "BBRv2 utilization {v2_util}");
}

/// `cca`'s share of the goodput of two flows, `cca` and CUBIC, over 20–120 s (5·BDP buffer).
fn share_against_cubic(cca: &str) -> f64 {
    let r = run(&(path(100, "5bdp", 120, 20) + &flow("a", cca, "") + &flow("b", "cubic", "")), &[], None);
    assert!(link(&r, "bottleneck").utilization > 0.95, "{cca}");
    let (a, b) = (r.summary.flows[0].goodput_mbps, r.summary.flows[1].goodput_mbps);
    a / (a + b)
}

/// In a deep buffer CUBIC's standing queue inflates BBR's RTT; BBRv2 also cruises with
/// headroom and drains to the BDP, so it yields more than v1. Measured BBRv2 share 0.21
/// (1·BDP 0.32, 2·BDP 0.31, 16·BDP 0.06), BBRv1 0.36.
#[test]
fn bbr2_takes_less_than_bbr_from_cubic_in_a_deep_buffer() {
    let v2 = share_against_cubic("bbr2");
    assert!((0.1..=0.35).contains(&v2), "BBRv2 share against CUBIC {v2}");
    assert!(v2 < share_against_cubic("bbr"), "BBRv2 {v2} takes less than BBRv1");
}

/// rLEDBAT's share of the goodput beside a BBRv2 flow over 20–120 s, both starting at 0.
fn rledbat_share(rtt_ms: u32, buffer: &str) -> f64 {
    let toml = path(rtt_ms, buffer, 120, 20)
        + &flow("lbe", "cubic", "receiver_cca = \"rledbat\"")
        + &flow("be", "bbr2", "");
    let r = run(&toml, &[], None);
    let (lbe, be) = (r.summary.flows[0].goodput_mbps, r.summary.flows[1].goodput_mbps);
    lbe / (lbe + be)
}

/// Fig. 18 (L462–L466), 500 ms buffer: BBRv2 yields to rLEDBAT below its 60 ms target (its
/// in-flight bound holds it to ~2·BDP of a min RTT that rLEDBAT's slowdowns keep at the base
/// RTT, while rLEDBAT's queue adds 60 ms), and takes the larger share above.
/// Fig. 19 (L468–L476), 30 ms buffer: the same with the buffer (30 ms) as the boundary.
/// Measured rLEDBAT shares, RTT 10/20/40/60/80/100/150/200 ms: 500 ms buffer 0.96, 0.97, 0.88,
/// 0.25, 0.13, 0.28, 0.12, 0.21; 30 ms buffer 0.89, 0.83, 0.43, 0.36, 0.38, 0.16, 0.07, 0.06.
/// Not reached, so not asserted (`rledbat-fig18`'s comparison.md says so): the notes' ≤ 15 %
/// at 100 ms (measured 0.28; seeds 1–6 0.18–0.28). Without loss BBRv2 never sets
/// `inflight_hi`; it cruises at its max-bandwidth estimate of the last probe cycles, and
/// since rLEDBAT grows whenever the queue is under 60 ms (BBRv2 keeps it lower between its
/// 2–3 s probes) each UP phase measures a slightly smaller share, so the estimate drifts down
/// until rLEDBAT's delay response balances it near a quarter of the link.
#[test]
fn bbr2_yields_to_rledbat_at_short_rtts_and_takes_more_at_long_ones() {
    let deep_20 = rledbat_share(20, "500ms");
    assert!(deep_20 > 0.5, "500 ms buffer, RTT 20 ms: rLEDBAT share {deep_20}");
    let deep_100 = rledbat_share(100, "500ms");
    assert!(deep_100 < 0.5, "500 ms buffer, RTT 100 ms: rLEDBAT share {deep_100}");
    let shallow_20 = rledbat_share(20, "30ms");
    assert!(shallow_20 > 0.5, "30 ms buffer, RTT 20 ms: rLEDBAT share {shallow_20}");
    let shallow_100 = rledbat_share(100, "30ms");
    assert!(shallow_100 < 0.5, "30 ms buffer, RTT 100 ms: rLEDBAT share {shallow_100}");
}
