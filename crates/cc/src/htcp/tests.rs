use super::*;
use crate::newreno::tests::{ack, event, path, M};
use crate::ParamValue;

const MS: Nanos = 1_000_000;
const S: Nanos = NANOS_PER_SEC;

fn state(w: u64) -> CcState {
    CcState { cwnd: w * M, ssthresh: 2 * M, pacing_rate: None }
}

fn without_bandwidth_switch() -> Htcp {
    let mut p = Params::new();
    p.insert("bandwidth_switch", ParamValue::Bool(false));
    Htcp::new(HtcpConfig::from_params(&p).unwrap())
}

fn rtt_ack(rtt: Nanos) -> AckSample {
    let mut a = ack(1);
    a.rtt = Some(rtt);
    a
}

fn ssthresh_of(r: Reaction) -> u64 {
    match r {
        Reaction::Prr { ssthresh } => ssthresh / M,
        other => panic!("unexpected {other:?}"),
    }
}

/// Eq. 2.50/2.51 as Linux computes it: `factor = 1 + floor(10 d + (d/2)²)`, d = Δ - 1 s, and
/// α = 2 factor (1 - β). With minRTT = 100 ms the RTT scaling is neutral. Each value is the
/// thesis's formula rounded down (within 1).
#[test]
fn alpha_follows_time_since_the_last_episode() {
    let mut cc = Htcp { min_rtt: Some(100 * MS), ..Htcp::default() };
    for (delta_ms, want) in
        [(0, 1.0), (500, 1.0), (1000, 1.0), (1500, 6.0), (2000, 11.0), (3000, 22.0), (5000, 45.0)]
    {
        cc.update_alpha(delta_ms * MS);
        assert_eq!(cc.alpha(), want, "Δ = {delta_ms} ms");
        let d = (delta_ms as f64 / 1000.0 - 1.0).max(0.0);
        let thesis = if d > 0.0 { 1.0 + 10.0 * d + (d / 2.0).powi(2) } else { 1.0 };
        assert!(thesis - want < 1.0 && thesis >= want, "Δ = {delta_ms} ms: thesis {thesis}");
    }
    // Reno-fairness: α = 2 factor (1 - β); β = 102/128 gives 2 · 11 · 26/128.
    cc.beta = BETA_MAX;
    cc.update_alpha(2 * S);
    assert_eq!(cc.alpha(), 2.0 * 11.0 * 26.0 / 128.0);
}

/// Linux RTT scaling: factor · minRTT / 100 ms, the ratio limited to [0.1, 2] (scale [0.5, 10]
/// in eighths), floored, at least 1.
#[test]
fn alpha_is_scaled_by_min_rtt() {
    let mut cc = Htcp::default();
    for (min_ms, at_2s, at_0s) in
        [(200, 22.0, 2.0), (1000, 22.0, 2.0), (100, 11.0, 1.0), (50, 5.0, 1.0), (20, 2.0, 1.0), (5, 1.0, 1.0)]
    {
        cc.min_rtt = Some(min_ms * MS);
        cc.update_alpha(2 * S);
        assert_eq!(cc.alpha(), at_2s, "minRTT {min_ms} ms, Δ 2 s");
        cc.update_alpha(0);
        assert_eq!(cc.alpha(), at_0s, "minRTT {min_ms} ms, Δ 0");
    }
    let mut p = Params::new();
    p.insert("rtt_scaling", ParamValue::Bool(false));
    let mut cc = Htcp::new(HtcpConfig::from_params(&p).unwrap());
    cc.min_rtt = Some(20 * MS);
    cc.update_alpha(2 * S);
    assert_eq!(cc.alpha(), 11.0);
}

/// Eq. 2.48/2.49: β = minRTT/maxRTT in 1/128 steps, clamped to [0.5, 102/128], only once armed
/// and with minRTT > 10 ms.
#[test]
fn adaptive_backoff_is_min_over_max_rtt_clamped() {
    let mut cc = without_bandwidth_switch();
    for (min_ms, max_ms, want) in
        [(100, 150, 85), (100, 110, BETA_MAX), (100, 300, BETA_MIN), (8, 9, BETA_MIN)]
    {
        cc.min_rtt = Some(min_ms * MS);
        cc.max_rtt = max_ms * MS;
        cc.modeswitch = true;
        cc.update_beta();
        assert_eq!(cc.beta, want, "{min_ms}/{max_ms}");
        assert!(cc.modeswitch);
    }
    // Not armed yet: 0.5 this time, adaptive the next.
    let mut cc = without_bandwidth_switch();
    cc.min_rtt = Some(100 * MS);
    cc.max_rtt = 150 * MS;
    cc.update_beta();
    assert_eq!((cc.beta, cc.modeswitch), (BETA_MIN, true));
    cc.update_beta();
    assert_eq!(cc.beta, 85);
}

/// End to end through the ACK path: maxRTT learnt in ≤ 20 ms steps in Open only, the first
/// event halves and arms, the second backs off by minRTT/maxRTT, and maxRTT fades by 5 %.
#[test]
fn decrease_from_rtt_samples() {
    let mut cc = without_bandwidth_switch();
    let mut st = state(1000);
    cc.init(&mut st, &path(0));
    let mut p = path(0);
    p.is_cwnd_limited = false;
    for rtt_ms in [100, 130, 115, 130, 150] {
        cc.on_ack(&mut st, &p, &rtt_ack(rtt_ms * MS));
    }
    assert_eq!((cc.min_rtt(), cc.max_rtt()), (Some(100 * MS), 150 * MS), "130 after 100 skipped");
    let mut rec = p;
    rec.state = CaState::Recovery;
    cc.on_ack(&mut st, &rec, &rtt_ack(160 * MS));
    assert_eq!(cc.max_rtt(), 150 * MS, "no maxRTT update outside Open");

    let flight = st.cwnd;
    assert_eq!(ssthresh_of(cc.on_congestion(&mut st, &p, &event(Cause::Loss, flight))), 500);
    assert_eq!(cc.max_rtt(), 100 * MS + 50 * MS * 95 / 100);
    cc.on_episode_end(&mut st, &p, Cause::Loss);
    cc.on_ack(&mut st, &p, &rtt_ack(150 * MS));
    assert_eq!(cc.max_rtt(), 150 * MS);
    let flight = st.cwnd;
    assert_eq!(ssthresh_of(cc.on_congestion(&mut st, &p, &event(Cause::Loss, flight))), (1000 * 85) >> 7);
    assert_eq!(cc.beta(), 85.0 / 128.0);
}

/// Steady ACK clock for `secs` seconds: `w` one-segment ACKs per 100 ms RTT; returns the end.
fn drive(cc: &mut Htcp, st: &mut CcState, from: Nanos, until: Nanos, w: u64) -> Nanos {
    st.cwnd = w * M;
    let rtt = 100 * MS;
    let mut now = from;
    while now < until {
        for i in 0..w {
            let mut p = path(now + rtt * i / w);
            p.is_cwnd_limited = false;
            cc.on_ack(st, &p, &rtt_ack(rtt));
        }
        now += rtt;
    }
    now
}

fn lose(cc: &mut Htcp, st: &mut CcState, now: Nanos) -> f64 {
    cc.on_congestion(st, &path(now), &event(Cause::Loss, st.cwnd));
    cc.on_episode_end(st, &path(now + 100 * MS), Cause::Loss);
    cc.beta()
}

/// The bandwidth switch: a maximum throughput that moved by more than 20 % since the previous
/// event forces β = 0.5 and disarms the adaptive backoff for one more event.
#[test]
fn bandwidth_switch_resets_beta() {
    let mut cc = Htcp::default();
    let mut st = state(100);
    cc.init(&mut st, &path(0));
    let t = drive(&mut cc, &mut st, 0, 5 * S, 100);
    assert!((cc.max_throughput() - 1000.0).abs() < 20.0, "{} pkt/s", cc.max_throughput());
    assert_eq!(lose(&mut cc, &mut st, t), 0.5, "0 → 1000 pkt/s is a switch");
    let t = drive(&mut cc, &mut st, t + 100 * MS, t + 5 * S, 100);
    assert_eq!(lose(&mut cc, &mut st, t), 0.5, "stable, but only now armed");
    let t = drive(&mut cc, &mut st, t + 100 * MS, t + 5 * S, 100);
    assert_eq!(lose(&mut cc, &mut st, t), BETA_MAX as f64 / 128.0, "stable and armed: minRTT = maxRTT");
    let t = drive(&mut cc, &mut st, t + 100 * MS, t + 5 * S, 50);
    assert!((cc.max_throughput() - 500.0).abs() < 20.0, "{} pkt/s", cc.max_throughput());
    assert_eq!(lose(&mut cc, &mut st, t), 0.5, "halved throughput");
}

/// Linux checks before it adds: `+1` once `cnt · α ≥ w`, one ACK later than a strict
/// `α / w` per ACK would. α = 1: 101 ACKs per segment at w = 100. α = 11 (Δ = 2 s):
/// every 92 ACKs at w = 1000, so 10 segments in an RTT of 1000 ACKs (α·w/(w + α) = 10.9).
#[test]
fn increase_per_rtt_is_alpha() {
    let mut cc = Htcp::default();
    let mut st = state(100);
    cc.init(&mut st, &path(0));
    for _ in 0..100 {
        cc.on_ack(&mut st, &path(0), &ack(1));
    }
    assert_eq!(st.cwnd, 100 * M);
    cc.on_ack(&mut st, &path(0), &ack(1));
    assert_eq!(st.cwnd, 101 * M);

    let mut cc = Htcp::default();
    let mut st = state(1000);
    cc.init(&mut st, &path(0));
    cc.min_rtt = Some(100 * MS);
    cc.update_alpha(2 * S);
    for _ in 0..1000 {
        cc.on_ack(&mut st, &path(2 * S), &ack(1));
    }
    assert_eq!(st.cwnd, 1010 * M);
    assert_eq!(cc.alpha(), 11.0);
}

/// Linux credits the packets an ACK cumulatively acks (`pkts_acked`), whatever the stack's
/// `ca_counting`: a delayed ACK credited as one segment still counts two.
#[test]
fn credit_is_packets_acked_not_the_stack_counting() {
    let mut cc = Htcp::default();
    let mut st = state(100);
    cc.init(&mut st, &path(0));
    let mut a = ack(1);
    a.acked = 2 * M;
    for _ in 0..51 {
        cc.on_ack(&mut st, &path(0), &a);
    }
    assert_eq!(st.cwnd, 101 * M);
}

#[test]
fn undo_restores_the_epoch() {
    let mut cc = without_bandwidth_switch();
    let mut st = state(1000);
    cc.init(&mut st, &path(0));
    cc.on_ack(&mut st, &path(0), &rtt_ack(100 * MS));
    cc.on_ack(&mut st, &path(0), &rtt_ack(120 * MS));
    let flight = st.cwnd;
    cc.on_congestion(&mut st, &path(10 * S), &event(Cause::Loss, flight));
    assert_eq!(cc.last_congestion(), 10 * S);
    assert_eq!(cc.max_rtt(), 119 * MS);
    st.cwnd = 500 * M;
    assert_eq!(cc.undo_cwnd(&st, 1000 * M), 1000 * M);
    // Linux saves maxRTT for undo in `htcp_reset` (set_state), after `ssthresh` faded it, so
    // the faded value stays: only Δ's origin really comes back.
    assert_eq!((cc.last_congestion(), cc.max_rtt()), (0, 119 * MS));
    cc.on_episode_end(&mut st, &path(10 * S + 50 * MS), Cause::Loss);
    assert_eq!(cc.last_congestion(), 0, "the undone episode does not restart Δ");
    // Without an undo Δ restarts when the episode ends.
    let flight = st.cwnd;
    cc.on_congestion(&mut st, &path(20 * S), &event(Cause::Loss, flight));
    cc.on_episode_end(&mut st, &path(20 * S + 300 * MS), Cause::Loss);
    assert_eq!(cc.last_congestion(), 20 * S + 300 * MS);
}

#[test]
fn ecn_rto_floor_and_loss_inside_cwr() {
    let mut cc = Htcp::default();
    let mut st = state(1000);
    cc.init(&mut st, &path(0));
    for cause in [Cause::Ecn, Cause::Rto { backoffs: 0 }, Cause::Loss] {
        let flight = st.cwnd;
        assert_eq!(ssthresh_of(cc.on_congestion(&mut st, &path(0), &event(cause, flight))), 500, "{cause:?}");
    }
    st.ssthresh = 321 * M;
    assert_eq!(ssthresh_of(cc.on_congestion(&mut st, &path(0), &event(Cause::Rto { backoffs: 2 }, M))), 321);
    let mut ev = event(Cause::Loss, st.cwnd);
    ev.open_episode = Some(Cause::Ecn);
    assert_eq!(ssthresh_of(cc.on_congestion(&mut st, &path(5 * S), &ev)), 321);
    assert_eq!(cc.last_congestion(), 5 * S, "the state change still restarts the epoch");
    for w in [1, 2, 3] {
        let mut st = state(w);
        assert_eq!(ssthresh_of(cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, w * M))), 2);
    }
}

#[test]
fn no_growth_in_recovery_but_slow_start_before_the_first_loss() {
    let mut cc = Htcp::default();
    let mut st = CcState { cwnd: 10 * M, ssthresh: u64::MAX, pacing_rate: None };
    cc.init(&mut st, &path(0));
    for _ in 0..10 {
        cc.on_ack(&mut st, &path(0), &ack(1));
    }
    assert_eq!(st.cwnd, 20 * M);
    let mut p = path(0);
    p.state = CaState::Recovery;
    for _ in 0..100 {
        cc.on_ack(&mut st, &p, &ack(1));
    }
    assert_eq!(st.cwnd, 20 * M);
}

#[test]
fn bad_params_name_the_key_and_defaults_hold() {
    for key in ["rtt_scaling", "bandwidth_switch"] {
        let mut p = Params::new();
        p.insert(key, ParamValue::Int(1));
        assert_eq!(HtcpConfig::from_params(&p).unwrap_err().key, key);
    }
    let mut p = Params::new();
    p.insert("rtt_scaling", ParamValue::Bool(false));
    p.insert("bandwidth_switch", ParamValue::Bool(false));
    let cfg = HtcpConfig::from_params(&p).unwrap();
    p.reject_unknown("htcp").unwrap();
    assert_eq!(cfg, HtcpConfig { rtt_scaling: false, bandwidth_switch: false });
    assert_eq!(HtcpConfig::from_params(&Params::new()).unwrap(), HtcpConfig::default());
    assert_eq!(Htcp::default().name(), "htcp");
}
