//! Hand-computed cases for the LEDBAT++ window machine and its sender adapter.

use super::*;
use crate::newreno::tests::{ack, event, path, M, MSS};
use crate::ParamValue;

const MS: Nanos = 1_000_000;
const SEC: Nanos = 1_000_000_000;

fn cfg(pairs: &[(&str, ParamValue)]) -> LedbatPpConfig {
    let mut p = Params::new();
    for (k, v) in pairs {
        p.insert(*k, v.clone());
    }
    let c = LedbatPpConfig::from_params(&p).unwrap();
    p.reject_unknown("ledbat++").unwrap();
    c
}

fn machine(pairs: &[(&str, ParamValue)]) -> LedbatPpWindow {
    LedbatPpWindow::new(cfg(pairs), MSS, 10 * M)
}

/// One `base` sample, then the current filter filled with `base + q`.
fn queue(w: &mut LedbatPpWindow, now: Nanos, base: Nanos, q: Nanos) {
    w.on_delay_sample(now, base);
    for _ in 0..CURRENT_FILTER {
        w.on_delay_sample(now, base + q);
    }
}

/// A machine in congestion avoidance with a `segs`-segment window over `base` (no slowdowns).
fn avoiding(base: Nanos, segs: u64, extra: &[(&str, ParamValue)]) -> LedbatPpWindow {
    let mut pairs = vec![("slowdown", ParamValue::Bool(false))];
    pairs.extend_from_slice(extra);
    let mut w = machine(&pairs);
    queue(&mut w, SEC, base, 50 * MS);
    w.on_ack(SEC, M, true);
    assert_eq!(w.phase(), Phase::Avoidance);
    w.set_window(segs * M);
    w
}

fn segs(w: &LedbatPpWindow) -> f64 {
    w.window() as f64 / M as f64
}

/// Eq. (2) for T = 60 ms against the notes' table (§7.4) and the paper's L96.
#[test]
fn gain_follows_the_base_rtt() {
    for (base_ms, divisor) in [
        (5.0, 16),
        (7.5, 16),
        (10.0, 12),
        (20.0, 6),
        (30.0, 4),
        (40.0, 3),
        (50.0, 3),
        (60.0, 2),
        (100.0, 2),
        (120.0, 1),
        (200.0, 1),
        (1000.0, 1),
    ] {
        let base = (base_ms * MS as f64) as Nanos;
        assert_eq!(gain(TARGET, base), 1.0 / divisor as f64, "base RTT {base_ms} ms");
    }
    assert_eq!(gain(TARGET, 0), 1.0 / 16.0, "no base yet: the smallest gain");
    assert_eq!(gain(25 * MS, 25 * MS), 0.5, "scales with the target");
}

/// Eq. (3) per ACK: `GAIN · MSS · acked / cwnd`; equality with the target counts as below.
#[test]
fn additive_increase_is_gain_segments_per_window() {
    let mut w = avoiding(20 * MS, 10, &[]);
    queue(&mut w, SEC, 20 * MS, 10 * MS);
    w.on_ack(SEC, M, true);
    // GAIN 1/6: 1000 · 1000 / 10000 / 6 = 16.67 B.
    assert_eq!(w.window(), 10_016);
    let mut w = avoiding(20 * MS, 10, &[]);
    queue(&mut w, SEC, 20 * MS, TARGET);
    w.on_ack(SEC, 2 * M, true);
    assert_eq!(w.window(), 10_033, "q = T still grows (two segments: 33.3 B)");
    // Not window-limited: no growth.
    let mut w = avoiding(20 * MS, 10, &[]);
    w.on_ack(SEC, M, false);
    assert_eq!(w.window(), 10 * M);
    // Over one window of ACKs at GAIN 1 (base 200 ms): one segment.
    let mut w = avoiding(200 * MS, 50, &[]);
    queue(&mut w, SEC, 200 * MS, 0);
    for _ in 0..50 {
        w.on_ack(SEC, M, true);
    }
    assert!((segs(&w) - 51.0).abs() < 0.02, "{}", segs(&w));
}

/// Eq. (4) over one window of ACKs: the notes' worked example (W = 100, GAIN 1/2): 75 ms of
/// queueing gives 75.5 segments, 150 ms exactly half, and the cap holds for the whole round.
#[test]
fn multiplicative_decrease_is_capped_at_half_per_round() {
    let mut w = avoiding(60 * MS, 100, &[]);
    assert_eq!(w.gain(), 0.5);
    queue(&mut w, SEC, 60 * MS, 75 * MS);
    w.on_ack(SEC, M, true);
    // One ACK: 0.5 · 1000 / 100 − 1000 · 0.25 = −245 B.
    assert_eq!(w.window(), 99_755);
    for _ in 1..100 {
        w.on_ack(SEC, M, true);
    }
    // Per-ACK spreading makes W shrink inside the round, so the GAIN term adds a little more
    // than 0.5: 75.57 against the per-RTT 75.5.
    assert!((75.45..=75.7).contains(&segs(&w)), "{} segments", segs(&w));

    let mut w = avoiding(60 * MS, 100, &[]);
    queue(&mut w, SEC, 60 * MS, 150 * MS);
    for k in 0..100 {
        w.on_ack(SEC, M, true);
        assert!(w.window() >= 50 * M, "ACK {k}: never below half within the round");
    }
    assert_eq!(w.window(), 50 * M);
    // The next window of ACKs opens a new round: half of 50.
    w.on_ack(SEC, M, true);
    assert!(w.window() < 50 * M);
    for _ in 1..50 {
        w.on_ack(SEC, M, true);
    }
    assert_eq!(w.window(), 25 * M, "the round lasts one window of 50 segments");
    w.on_ack(SEC, M, true);
    assert!(w.window() < 25 * M, "then another round starts");
    // Far above the target at a small window: the floor.
    let mut w = avoiding(60 * MS, 3, &[]);
    queue(&mut w, SEC, 60 * MS, SEC);
    w.on_ack(SEC, M, true);
    assert_eq!(w.window(), 2 * M);
}

/// Decreases apply also when the window is not the limit.
#[test]
fn decrease_applies_without_window_limitation() {
    let mut w = avoiding(60 * MS, 100, &[]);
    queue(&mut w, SEC, 60 * MS, 75 * MS);
    w.on_ack(SEC, M, false);
    assert_eq!(w.window(), 99_750, "−0.25 segment, no GAIN term");
}

/// Slow start: `cwnd += GAIN · acked`; it ends once q_d > 3/4 T (45 ms), with ssthresh the
/// window reached and the first slowdown two RTTs later.
#[test]
fn slow_start_grows_by_gain_and_exits_at_three_quarters_of_the_target() {
    let mut w = machine(&[]);
    assert_eq!(w.window(), 2 * M, "initial window of two segments");
    assert_eq!(w.ssthresh(), u64::MAX);
    queue(&mut w, SEC, 20 * MS, 0);
    w.on_ack(SEC, 2 * M, true);
    assert_eq!(w.window(), 2_333, "2000 + 2000/6");
    queue(&mut w, SEC, 20 * MS, 45 * MS);
    w.on_ack(SEC, 2 * M, true);
    assert_eq!((w.phase(), w.window()), (Phase::SlowStart, 2_666), "45 ms is not above 3/4 T");
    queue(&mut w, SEC, 20 * MS, 46 * MS);
    let srtt = w.srtt().unwrap();
    w.on_ack(SEC, 2 * M, true);
    assert_eq!(w.phase(), Phase::Avoidance);
    assert_eq!((w.window(), w.ssthresh()), (2_666, 2_666), "the exiting ACK does not grow");
    assert_eq!(w.next_slowdown(), Some(SEC + 2 * srtt));
    assert_eq!(w.next_event(), w.next_slowdown());

    // At GAIN 1 (base 200 ms) the window doubles per window of ACKs.
    let mut w = machine(&[("init_cwnd", ParamValue::Int(4))]);
    queue(&mut w, SEC, 200 * MS, 0);
    for _ in 0..4 {
        w.on_ack(SEC, M, true);
    }
    assert_eq!(w.window(), 8 * M);
    // Not window-limited: no growth, but the exit test still runs.
    w.on_ack(SEC, M, false);
    assert_eq!(w.window(), 8 * M);
}

/// The srtt used for slowdown timing: RFC 6298's α = 1/8 over the samples given.
#[test]
fn srtt_is_an_eighth_weighted_average() {
    let mut w = machine(&[]);
    w.on_delay_sample(0, 80 * MS);
    assert_eq!(w.srtt(), Some(80 * MS));
    w.on_delay_sample(0, 160 * MS);
    assert_eq!(w.srtt(), Some(90 * MS));
    assert_eq!(w.base_rtt(), Some(80 * MS));
}

/// L115: two RTTs after the initial slow start the window drops to two packets for two RTTs,
/// then slow-starts back to where it was; the next slowdown is nine durations later.
#[test]
fn slowdown_schedule() {
    let mut w = machine(&[]);
    let base = 40 * MS;
    // Leave slow start by delay at t0 with a 20-segment window.
    queue(&mut w, SEC, base, 0);
    w.set_window(20 * M);
    queue(&mut w, SEC, base, 50 * MS);
    w.on_ack(SEC, M, true);
    let t_slow = w.next_slowdown().unwrap();
    // Queue back to zero (every later sample is the base RTT); growth at GAIN 1/3 until then.
    queue(&mut w, SEC, base, 0);
    w.on_timer(t_slow - 1);
    assert_eq!(w.phase(), Phase::Avoidance, "not yet");
    w.set_window(30 * M);
    let srtt = w.srtt().unwrap();
    w.on_ack(t_slow, M, true);
    let until = t_slow + 2 * srtt;
    assert_eq!(w.phase(), Phase::Freeze { started: t_slow, until, goal: 30 * M });
    assert_eq!((w.window(), w.ssthresh()), (2 * M, 30 * M));
    assert_eq!(w.next_event(), Some(until));
    // Held at two packets, whatever the ACKs say.
    for k in 1..10 {
        w.on_ack(t_slow + k * MS, 2 * M, true);
        assert_eq!(w.window(), 2 * M);
    }
    // The freeze ends; the ramp is a slow start at GAIN 1/3 (base 40 ms).
    w.on_ack(until, 3 * M, true);
    assert_eq!(w.phase(), Phase::Ramp { started: t_slow, goal: 30 * M });
    assert_eq!(w.window(), 3 * M);
    let mut now = until;
    while w.phase() != Phase::Avoidance {
        now += MS;
        w.on_ack(now, M, true);
        assert!(w.window() <= 30 * M);
    }
    assert_eq!(w.window(), 30 * M, "back to the window before the slowdown");
    assert_eq!(w.next_slowdown(), Some(now + 9 * (now - t_slow)));
    // With `slowdown = false` none is ever scheduled.
    let mut w = machine(&[("slowdown", ParamValue::Bool(false))]);
    queue(&mut w, SEC, base, 50 * MS);
    w.on_ack(SEC, M, true);
    assert_eq!((w.phase(), w.next_slowdown(), w.next_event()), (Phase::Avoidance, None, None));
}

/// L358: the ramp is not cut short by the queueing delay; it returns to the saved window.
#[test]
fn the_ramp_ignores_the_delay() {
    let mut w = machine(&[]);
    queue(&mut w, SEC, 40 * MS, 50 * MS);
    w.on_ack(SEC, M, true);
    w.set_window(30 * M);
    let t = w.next_slowdown().unwrap();
    w.on_timer(t);
    let Phase::Freeze { until, .. } = w.phase() else { panic!("{:?}", w.phase()) };
    w.on_timer(until);
    assert!(matches!(w.phase(), Phase::Ramp { .. }));
    queue(&mut w, until + MS, 40 * MS, 200 * MS);
    for _ in 0..3 {
        w.on_ack(until + MS, 3 * M, true);
    }
    assert!(matches!(w.phase(), Phase::Ramp { .. }));
    assert_eq!(w.window(), 5 * M, "2 + 9/3 segments at GAIN 1/3, 200 ms of queueing or not");
}

/// Paper §7.1 (L500): the target becomes min(T, RTT_b); GAIN keeps the nominal T.
#[test]
fn enhanced_target_is_the_smaller_of_target_and_base_rtt() {
    let on = [("enhanced_target", ParamValue::Bool(true))];
    let mut w = avoiding(20 * MS, 10, &on);
    assert_eq!((w.effective_target(), w.gain()), (20 * MS, 1.0 / 6.0));
    queue(&mut w, SEC, 20 * MS, 25 * MS);
    w.on_ack(SEC, M, true);
    // 25/20 − 1 = 0.25 segment down, 16.67 B up.
    assert_eq!(w.window(), 9_766);
    let mut plain = avoiding(20 * MS, 10, &[]);
    queue(&mut plain, SEC, 20 * MS, 25 * MS);
    plain.on_ack(SEC, M, true);
    assert_eq!((plain.effective_target(), plain.window()), (TARGET, 10_016));
    // Above the target the base RTT no longer matters.
    assert_eq!(avoiding(100 * MS, 10, &on).effective_target(), TARGET);
    // Slow start leaves at 3/4 of 20 ms.
    let mut w = machine(&on);
    queue(&mut w, SEC, 20 * MS, 16 * MS);
    w.on_ack(SEC, M, true);
    assert_eq!(w.phase(), Phase::Avoidance);
    let mut w = machine(&[]);
    queue(&mut w, SEC, 20 * MS, 16 * MS);
    w.on_ack(SEC, M, true);
    assert_eq!(w.phase(), Phase::SlowStart);
}

#[test]
fn loss_halves_and_ends_slow_starts_and_ramps() {
    let mut w = avoiding(40 * MS, 40, &[]);
    assert_eq!(w.on_loss(SEC), 20 * M);
    w.set_window(3 * M);
    assert_eq!(w.on_loss(SEC), 2 * M, "floor");
    // In the initial slow start: halve and schedule the first slowdown.
    let mut w = machine(&[]);
    queue(&mut w, SEC, 40 * MS, 0);
    w.set_window(40 * M);
    let srtt = w.srtt().unwrap();
    assert_eq!(w.on_loss(2 * SEC), 20 * M);
    assert_eq!((w.phase(), w.ssthresh()), (Phase::Avoidance, 20 * M));
    assert_eq!(w.next_slowdown(), Some(2 * SEC + 2 * srtt));
    // In a freeze: the ramp's goal halves; in the ramp: the ramp ends.
    let t = w.next_slowdown().unwrap();
    w.set_window(40 * M);
    w.on_timer(t);
    assert_eq!(w.on_loss(t + MS), 2 * M);
    let Phase::Freeze { until, goal, .. } = w.phase() else { panic!() };
    assert_eq!(goal, 20 * M);
    w.on_timer(until);
    w.set_window(10 * M);
    assert_eq!(w.on_loss(until + MS), 5 * M);
    assert_eq!(w.phase(), Phase::Avoidance);
    assert_eq!(w.next_slowdown(), Some(until + MS + 9 * (until + MS - t)));
}

#[test]
fn timeout_restarts_the_initial_slow_start() {
    let mut w = avoiding(40 * MS, 40, &[]);
    w.on_timeout();
    assert_eq!((w.window(), w.ssthresh(), w.phase()), (M, 20 * M, Phase::SlowStart));
    assert_eq!(w.next_event(), None);
    w.on_repeated_timeout();
    assert_eq!((w.window(), w.ssthresh()), (M, 20 * M));
    // The next ACK lifts the window to the floor and slow start resumes.
    queue(&mut w, SEC, 40 * MS, 0);
    w.on_ack(SEC, M, true);
    assert_eq!(w.window(), 2 * M);
    w.on_idle_restart(2 * M);
    assert_eq!((w.window(), w.ssthresh(), w.phase()), (2 * M, 2 * M, Phase::SlowStart));
}

// ----- the sender adapter ---------------------------------------------------------------------

fn rtt_ack(segs: u32, rtt: Nanos) -> AckSample {
    let mut a = ack(segs);
    a.rtt = Some(rtt);
    a
}

fn st(cwnd_segs: u64) -> CcState {
    CcState { cwnd: cwnd_segs * M, ssthresh: u64::MAX, pacing_rate: None }
}

#[test]
fn the_sender_drives_the_machine_with_rtt_samples_and_timers() {
    let mut cc = LedbatPlusPlus::default();
    let mut s = st(10);
    cc.init(&mut s, &path(0));
    assert_eq!((s.cwnd, s.ssthresh), (2 * M, u64::MAX));
    // OWD samples are ignored: LEDBAT++ is RTT-based.
    let mut a = rtt_ack(2, 40 * MS);
    a.owd = Some(SEC);
    cc.on_ack(&mut s, &path(SEC), &a);
    assert_eq!(s.cwnd, 2 * M + 2 * M / 3, "GAIN 1/3 slow start");
    for _ in 0..4 {
        cc.on_ack(&mut s, &path(SEC), &rtt_ack(0, 90 * MS));
    }
    assert_eq!(cc.machine().unwrap().phase(), Phase::Avoidance);
    assert_eq!(s.ssthresh, s.cwnd);
    let t = cc.next_timer().unwrap();
    // The timer starts the slowdown without an ACK.
    cc.on_timer(&mut s, &path(t));
    assert_eq!(s.cwnd, 2 * M);
    let Phase::Freeze { until, .. } = cc.machine().unwrap().phase() else { panic!() };
    assert_eq!(cc.next_timer(), Some(until));
    cc.on_timer(&mut s, &path(until));
    assert!(matches!(cc.machine().unwrap().phase(), Phase::Ramp { .. }));
    assert_eq!(cc.next_timer(), None);
}

#[test]
fn recovery_is_left_to_prr_and_the_stack_window_is_taken_back() {
    let mut cc = LedbatPlusPlus::default();
    let mut s = st(10);
    cc.init(&mut s, &path(0));
    cc.on_ack(&mut s, &path(SEC), &rtt_ack(0, 40 * MS));
    s.cwnd = 40 * M;
    let r = cc.on_congestion(&mut s, &path(SEC), &event(Cause::Loss, 40 * M));
    assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
    let mut p = path(SEC);
    p.state = CaState::Recovery;
    s.cwnd = 33 * M;
    cc.on_ack(&mut s, &p, &rtt_ack(1, 40 * MS));
    assert_eq!(s.cwnd, 33 * M, "PRR owns the window");
    // Episode over: the stack set cwnd = ssthresh; the machine continues from there.
    s.cwnd = 20 * M;
    cc.on_ack(&mut s, &path(SEC), &rtt_ack(1, 40 * MS));
    assert_eq!(s.cwnd, 20 * M + M / 60, "GAIN 1/3 · 1000 · 1000 / 20000");
    // ECN-Echo halves too; a loss inside its episode does not cut again.
    s.cwnd = 20 * M;
    let r = cc.on_congestion(&mut s, &path(SEC), &event(Cause::Ecn, 20 * M));
    assert_eq!(r, Reaction::Prr { ssthresh: 10 * M });
    s.ssthresh = 10 * M;
    let mut ev = event(Cause::Loss, 20 * M);
    ev.open_episode = Some(Cause::Ecn);
    assert_eq!(cc.on_congestion(&mut s, &path(SEC), &ev), Reaction::Prr { ssthresh: 10 * M });
    // A timeout: half the window, then the stack's one segment is taken back.
    s.cwnd = 10 * M;
    let r = cc.on_congestion(&mut s, &path(SEC), &event(Cause::Rto { backoffs: 0 }, 10 * M));
    assert_eq!(r, Reaction::Prr { ssthresh: 5 * M });
    s.cwnd = M;
    let mut p = path(2 * SEC);
    p.state = CaState::Loss;
    cc.on_ack(&mut s, &p, &rtt_ack(1, 40 * MS));
    assert_eq!(s.cwnd, 2 * M, "one segment, lifted to the floor");
    assert_eq!(cc.machine().unwrap().phase(), Phase::SlowStart);
    let r = cc.on_congestion(&mut s, &path(3 * SEC), &event(Cause::Rto { backoffs: 1 }, M));
    assert_eq!(r, Reaction::Prr { ssthresh: 5 * M }, "a repeated timeout keeps ssthresh");
}

#[test]
fn init_cwnd_zero_keeps_the_stack_window() {
    let mut cc = LedbatPlusPlus::new(cfg(&[("init_cwnd", ParamValue::Int(0))]));
    let mut s = st(10);
    cc.init(&mut s, &path(0));
    assert_eq!(s.cwnd, 10 * M);
    let mut s = st(1);
    LedbatPlusPlus::default().init(&mut s, &path(0));
    assert_eq!(s.cwnd, M, "never raised at init");
}

#[test]
fn bad_params_name_the_key() {
    for (key, v) in [
        ("target", ParamValue::Str("-5ms".into())),
        ("target", ParamValue::Str("0ms".into())),
        ("target", ParamValue::Float(0.06)),
        ("enhanced_target", ParamValue::Str("yes".into())),
        ("min_cwnd", ParamValue::Int(0)),
        ("init_cwnd", ParamValue::Int(-2)),
        ("slowdown", ParamValue::Int(1)),
        ("base_history", ParamValue::Int(0)),
        ("current_filter", ParamValue::Int(0)),
        ("decrease_constant", ParamValue::Float(0.0)),
        ("decrease_constant", ParamValue::Float(-1.0)),
    ] {
        let mut p = Params::new();
        p.insert(key, v.clone());
        let e = LedbatPpConfig::from_params(&p).unwrap_err();
        assert_eq!(e.key, key, "{v:?}");
        assert!(!e.to_string().contains('\n'));
    }
}

#[test]
fn every_key_is_read_and_defaults_hold() {
    let c = cfg(&[
        ("target", ParamValue::Str("25ms".into())),
        ("enhanced_target", ParamValue::Bool(true)),
        ("min_cwnd", ParamValue::Int(4)),
        ("init_cwnd", ParamValue::Int(8)),
        ("slowdown", ParamValue::Bool(false)),
        ("base_history", ParamValue::Int(3)),
        ("current_filter", ParamValue::Int(8)),
        ("decrease_constant", ParamValue::Float(0.5)),
    ]);
    let want = LedbatPpConfig {
        target: 25 * MS,
        enhanced_target: true,
        min_cwnd: 4,
        init_cwnd: 8,
        slowdown: false,
        base_history: 3,
        current_filter: 8,
        decrease_constant: 0.5,
    };
    assert_eq!(c, want);
    assert_eq!(LedbatPpConfig::from_params(&Params::new()).unwrap(), LedbatPpConfig::default());
    assert_eq!(LedbatPlusPlus::default().name(), "ledbat++");
}
