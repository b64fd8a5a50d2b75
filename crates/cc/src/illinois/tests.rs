use super::*;
use crate::newreno::tests::{ack, event, path, M};
use crate::ParamValue;

const MS: Nanos = 1_000_000;

fn state(w: u64) -> CcState {
    CcState { cwnd: w * M, ssthresh: 2 * M, pacing_rate: None }
}

/// One round of ACKs, one per RTT sample, the first flagged as a round start; no growth.
fn round(cc: &mut Illinois, st: &mut CcState, rtts_ms: &[u64]) {
    let mut p = path(0);
    p.is_cwnd_limited = false;
    for (i, &r) in rtts_ms.iter().enumerate() {
        let mut a = ack(1);
        a.rtt = Some(r * MS);
        a.round_start = i == 0;
        cc.on_ack(st, &p, &a);
    }
}

/// Thesis Eq. 2.44/2.45 and 2.42 literally: κ1 / (κ2 + d_a).
fn thesis_alpha(da: f64, dm: f64, amin: f64, amax: f64) -> f64 {
    let d1 = 0.01 * dm;
    let k1 = (dm - d1) * amin * amax / (amax - amin);
    let k2 = (dm - d1) * amin / (amax - amin) - d1;
    if da <= d1 {
        amax
    } else {
        k1 / (k2 + da)
    }
}

/// Eq. 2.46/2.47 and 2.43 (first case with d2).
fn thesis_beta(da: f64, dm: f64) -> f64 {
    let (d2, d3, bmin, bmax) = (0.1 * dm, 0.8 * dm, 0.125, 0.5);
    let k3 = (bmin * d3 - bmax * d2) / (d3 - d2);
    let k4 = (bmax - bmin) / (d3 - d2);
    if da <= d2 {
        bmin
    } else if da < d3 {
        k3 + k4 * da
    } else {
        bmax
    }
}

/// Linux's fixed point (µs, α << 7 with ALPHA_MIN = 38, β << 6), for comparison.
fn linux_alpha(da_us: u64, dm_us: u64) -> f64 {
    let d1 = dm_us / 100;
    if da_us <= d1 {
        return 10.0;
    }
    let (dm, da) = (dm_us - d1, da_us - d1);
    ((dm * 1280) / (dm + (da * (1280 - 38)) / 38)) as f64 / 128.0
}

fn linux_beta(da_us: u64, dm_us: u64) -> f64 {
    let d2 = dm_us / 10;
    let d3 = 8 * dm_us / 10;
    if da_us <= d2 {
        return 8.0 / 64.0;
    }
    if da_us >= d3 {
        return 32.0 / 64.0;
    }
    ((8 * d3 - 32 * d2 + 24 * da_us) / (d3 - d2)) as f64 / 64.0
}

/// α(d_a) and b(d_a) over the whole delay range against the thesis's closed forms (exact up to
/// f64) and against Linux's fixed point (α within 1/128 + the 0.297-vs-0.3 α_min, b within 1/64).
#[test]
fn alpha_and_beta_curves_match_the_thesis_and_linux() {
    let dm = 100 * MS;
    for da_ms in [0u64, 1, 2, 5, 10, 20, 35, 45, 60, 79, 80, 90, 100] {
        let mut cc = Illinois::default();
        let da = da_ms * MS;
        let a = cc.alpha_for(da, dm);
        let b = cc.beta_for(da, dm);
        let (ta, tb) = (thesis_alpha(da as f64, dm as f64, 0.3, 10.0), thesis_beta(da as f64, dm as f64));
        assert!((a - ta).abs() < 1e-9 * ta, "α at {da_ms} ms: {a} vs {ta}");
        assert!((b - tb).abs() < 1e-9, "b at {da_ms} ms: {b} vs {tb}");
        let (la, lb) = (linux_alpha(da_ms * 1000, 100_000), linux_beta(da_ms * 1000, 100_000));
        assert!((a - la).abs() <= 1.0 / 128.0 + 0.01 * a, "α at {da_ms} ms: {a} vs Linux {la}");
        assert!((b - lb).abs() <= 1.0 / 64.0, "b at {da_ms} ms: {b} vs Linux {lb}");
    }
    let mut cc = Illinois::default();
    assert_eq!(cc.alpha_for(0, dm), 10.0);
    assert!((cc.alpha_for(dm, dm) - 0.3).abs() < 1e-12, "α_min at d_m");
    assert_eq!(cc.beta_for(10 * MS, dm), 0.125);
    assert_eq!(cc.beta_for(45 * MS, dm), 0.3125, "halfway between d2 and d3");
    assert_eq!(cc.beta_for(80 * MS, dm), 0.5);
}

/// The thesis text's α_min = 0.1 is one key away.
#[test]
fn thesis_alpha_min_is_configurable() {
    let mut p = Params::new();
    p.insert("alpha_min", ParamValue::Float(0.1));
    let mut cc = Illinois::new(IllinoisConfig::from_params(&p).unwrap());
    assert!((cc.alpha_for(100 * MS, 100 * MS) - 0.1).abs() < 1e-12);
    let want = thesis_alpha(30e6, 100e6, 0.1, 10.0);
    assert!((cc.alpha_for(30 * MS, 100 * MS) - want).abs() < 1e-9);
}

/// Once per round, from the previous round's mean: base 100 ms, max 200 ms, mean 150 ms →
/// d_a = 50 ms, d_m = 100 ms.
#[test]
fn parameters_follow_each_rounds_mean_delay() {
    let mut cc = Illinois::default();
    let mut st = state(100);
    round(&mut cc, &mut st, &[100, 200]);
    round(&mut cc, &mut st, &[100]);
    let (a, b) = (thesis_alpha(50e6, 100e6, 0.3, 10.0), thesis_beta(50e6, 100e6));
    assert!((cc.alpha() - a).abs() < 1e-9 && (cc.beta() - b).abs() < 1e-9, "{} {}", cc.alpha(), cc.beta());
    // ssthresh = w - floor(b w).
    let flight = st.cwnd;
    let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, flight));
    assert_eq!(r, Reaction::Prr { ssthresh: (100 - (100.0 * b).floor() as u64) * M });
}

/// theta: after a high-delay round, α stays put for 4 quiet rounds and jumps back to α_max on
/// the 5th; b follows the delay at once.
#[test]
fn alpha_returns_to_max_after_theta_quiet_rounds() {
    let mut cc = Illinois::default();
    let mut st = state(100);
    round(&mut cc, &mut st, &[100, 200]);
    round(&mut cc, &mut st, &[180]);
    let congested = cc.alpha();
    assert!(congested < 1.0, "{congested}");
    for quiet in 1..=5 {
        round(&mut cc, &mut st, &[100]);
        if quiet < 5 {
            assert_eq!(cc.alpha(), congested, "quiet round {quiet}");
        } else {
            assert_eq!(cc.alpha(), 10.0);
        }
        if quiet > 1 {
            assert_eq!(cc.beta(), 0.125);
        }
    }
}

/// Below win_thresh Illinois is Reno, α = 1 and b = 1/2, whatever the delay.
#[test]
fn small_windows_are_reno() {
    let mut cc = Illinois::default();
    let mut st = state(14);
    round(&mut cc, &mut st, &[100, 100]);
    round(&mut cc, &mut st, &[100]);
    assert_eq!((cc.alpha(), cc.beta()), (1.0, 0.5));
    let flight = st.cwnd;
    let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, flight));
    assert_eq!(r, Reaction::Prr { ssthresh: 7 * M });
}

/// Increase per RTT is α: +10 per window of ACKs at α_max, +0.3 (one segment per 3.34
/// windows) at α_min. A delayed ACK of two packets credits two whatever `segments_acked` says.
#[test]
fn increase_per_rtt_is_alpha() {
    let mut cc = Illinois::default();
    let mut st = state(100);
    round(&mut cc, &mut st, &[100]);
    assert_eq!(cc.alpha(), 10.0);
    for _ in 0..100 {
        cc.on_ack(&mut st, &path(0), &ack(1));
    }
    assert!((109..=110).contains(&(st.cwnd / M)), "{}", st.cwnd / M);

    let mut cc = Illinois::default();
    let mut st = state(100);
    cc.alpha = 0.3;
    for _ in 0..333 {
        cc.on_ack(&mut st, &path(0), &ack(1));
    }
    assert_eq!(st.cwnd, 100 * M);
    cc.on_ack(&mut st, &path(0), &ack(1));
    assert_eq!(st.cwnd, 101 * M);

    let mut cc = Illinois::default();
    let mut st = state(100);
    cc.alpha = 1.0;
    let mut a = ack(1);
    a.acked = 2 * M;
    for _ in 0..50 {
        cc.on_ack(&mut st, &path(0), &a);
    }
    assert_eq!(st.cwnd, 101 * M);
}

/// The round update waits while the window may not rise (CWR, Recovery) and happens on the
/// first ACK after; samples keep being collected meanwhile.
#[test]
fn round_update_waits_for_recovery_to_end() {
    let mut cc = Illinois::default();
    let mut st = state(100);
    round(&mut cc, &mut st, &[100, 200]);
    let mut p = path(0);
    p.state = CaState::Recovery;
    let mut a = ack(1);
    a.round_start = true;
    a.rtt = Some(200 * MS);
    cc.on_ack(&mut st, &p, &a);
    assert_eq!(cc.alpha(), 10.0, "no update in Recovery");
    let mut a = ack(1);
    a.rtt = Some(100 * MS);
    p.state = CaState::Open;
    cc.on_ack(&mut st, &p, &a);
    // The round's samples: 200 (after the last update), 200 (in Recovery), 100 → d_a = 66.7 ms.
    let want = thesis_alpha((500 * MS / 3 - 100 * MS) as f64, 100e6, 0.3, 10.0);
    assert!((cc.alpha() - want).abs() < 1e-9, "{} vs {want}", cc.alpha());
}

#[test]
fn timeout_resets_to_reno_after_computing_ssthresh() {
    let mut cc = Illinois::default();
    let mut st = state(1000);
    round(&mut cc, &mut st, &[100]);
    round(&mut cc, &mut st, &[100]);
    assert_eq!(cc.beta(), 0.125);
    let flight = st.cwnd;
    let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Rto { backoffs: 0 }, flight));
    assert_eq!(r, Reaction::Prr { ssthresh: 875 * M });
    assert_eq!((cc.alpha(), cc.beta()), (1.0, 0.5));
    st.ssthresh = 875 * M;
    let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Rto { backoffs: 1 }, M));
    assert_eq!(r, Reaction::Prr { ssthresh: 875 * M });
}

#[test]
fn ecn_floor_loss_inside_cwr_and_undo() {
    let mut cc = Illinois::default();
    let mut st = state(1000);
    let flight = st.cwnd;
    let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Ecn, flight));
    assert_eq!(r, Reaction::Prr { ssthresh: 500 * M });
    st.ssthresh = 500 * M;
    let mut ev = event(Cause::Loss, st.cwnd);
    ev.open_episode = Some(Cause::Ecn);
    assert_eq!(cc.on_congestion(&mut st, &path(0), &ev), Reaction::Prr { ssthresh: 500 * M });
    for w in [1, 2, 3] {
        let mut st = state(w);
        assert_eq!(
            cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, w * M)),
            Reaction::Prr { ssthresh: 2 * M }
        );
    }
    assert_eq!(cc.undo_cwnd(&state(500), 1000 * M), 1000 * M);
}

#[test]
fn rtt_samples_are_clamped_like_linux() {
    let mut cc = Illinois::default();
    cc.sample(10 * NANOS);
    assert_eq!(cc.max_rtt, RTT_MAX);
    assert!((RTT_MAX as f64 / 1e9 - 3.355).abs() < 0.001);
}

const NANOS: Nanos = 1_000_000_000;

#[test]
fn bad_params_name_the_key_and_defaults_hold() {
    for (key, value) in [
        ("alpha_min", ParamValue::Float(0.0)),
        ("alpha_max", ParamValue::Float(0.2)),
        ("beta_min", ParamValue::Float(1.5)),
        ("beta_max", ParamValue::Float(0.1)),
        ("win_thresh", ParamValue::Int(-1)),
        ("theta", ParamValue::Int(0)),
    ] {
        let mut p = Params::new();
        p.insert(key, value);
        assert_eq!(IllinoisConfig::from_params(&p).unwrap_err().key, key);
    }
    let mut p = Params::new();
    for (k, v) in [("alpha_min", 0.1), ("alpha_max", 8.0), ("beta_min", 0.2), ("beta_max", 0.4)] {
        p.insert(k, ParamValue::Float(v));
    }
    p.insert("win_thresh", ParamValue::Int(10));
    p.insert("theta", ParamValue::Int(3));
    let cfg = IllinoisConfig::from_params(&p).unwrap();
    p.reject_unknown("illinois").unwrap();
    assert_eq!(
        cfg,
        IllinoisConfig {
            alpha_min: 0.1,
            alpha_max: 8.0,
            beta_min: 0.2,
            beta_max: 0.4,
            win_thresh: 10,
            theta: 3
        }
    );
    assert_eq!(IllinoisConfig::from_params(&Params::new()).unwrap(), IllinoisConfig::default());
    assert_eq!(Illinois::default().name(), "illinois");
}
