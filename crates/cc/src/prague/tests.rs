//! Hand-computed checks of Prague's fixed-point arithmetic (`tcp_prague.c` 0.6). `O = 2²⁰`
//! (`ONE_CWND`, also α = 1); MSS 1000 bytes; the path's srtt is 100 ms unless a test says so.

use super::*;
use crate::newreno::tests::{ack, event, path, M};
use crate::ParamValue;

const O: u64 = ONE_CWND;

/// A controller, its state and a path whose delivered counter follows the ACKs.
struct Run {
    cc: Prague,
    st: CcState,
    p: PathInfo,
}

impl Run {
    fn with(cfg: PragueConfig, cwnd_segs: u64, ssthresh: u64) -> Self {
        let mut r = Run {
            cc: Prague::new(cfg),
            st: CcState { cwnd: cwnd_segs * M, ssthresh, pacing_rate: None },
            p: path(0),
        };
        r.cc.init(&mut r.st, &r.p);
        r
    }

    /// Default configuration without RTT independence, so that increases are unscaled.
    fn new(cwnd_segs: u64, ssthresh: u64) -> Self {
        Self::with(cfg(&[("rtt_scaling", ParamValue::Str("none".into()))]), cwnd_segs, ssthresh)
    }

    /// An ACK delivering `segs` full segments of which `ce_segs` were CE-marked (AccECN).
    fn ack(&mut self, segs: u64, ce_segs: u64, round_start: bool) {
        self.p.delivered += segs * M;
        let mut a = ack(segs as u32);
        a.ce_delta = ce_segs as u32;
        a.ce_bytes = ce_segs * M;
        a.round_start = round_start;
        self.cc.on_ack(&mut self.st, &self.p, &a);
    }

    fn congestion(&mut self, cause: Cause) -> Reaction {
        let ev = event(cause, self.st.cwnd);
        self.cc.on_congestion(&mut self.st, &self.p, &ev)
    }

    fn segs(&self) -> u64 {
        self.st.cwnd / M
    }
}

fn cfg(kv: &[(&str, ParamValue)]) -> PragueConfig {
    let mut p = Params::new();
    for (k, v) in kv {
        p.insert(*k, v.clone());
    }
    PragueConfig::from_params(&p).unwrap()
}

#[test]
fn init_takes_the_window_alpha_one_and_paces_at_twice_cwnd_over_srtt_in_slow_start() {
    let r = Run::new(10, u64::MAX);
    assert_eq!((r.cc.frac_cwnd(), r.cc.alpha_fixed(), r.cc.ai_ack_increase()), (10 * O, O, O));
    assert_eq!(r.cc.alpha(), 1.0);
    // (1000 + 52) bytes · 10 / 0.1 s, doubled below ssthresh/2.
    assert_eq!(r.st.pacing_rate, Some(210_400.0));
    assert_eq!((r.cc.name(), r.cc.ecn_use()), ("prague", EcnUse::L4s));
}

#[test]
fn alpha_is_updated_once_per_round_and_only_after_the_first_mark() {
    let mut r = Run::new(20, 20 * M);
    for _ in 0..5 {
        r.ack(1, 0, false);
    }
    r.ack(1, 0, true);
    assert_eq!(r.cc.alpha_fixed(), O, "no EWMA before any CE (saw_ce)");
    // This window: the round-start ACK's segment plus nine more, the third of them marked.
    for i in 0..9 {
        r.ack(1, (i == 2) as u64, false);
        assert_eq!(r.cc.alpha_fixed(), O, "not before the round ends");
    }
    assert!(r.cc.saw_ce());
    r.ack(1, 0, true);
    // F = ⌊O/10⌋ = 104 857; upscaled α = 16·O − O + 104 857 = 15 833 497; α = ⌊/16⌋ = 989 593
    // (0.94375·O = 989 593.6).
    assert_eq!(r.cc.upscaled_alpha, 15_833_497);
    assert_eq!(r.cc.alpha_fixed(), 989_593);
    // A round without marks: 15 833 497 − 989 593 = 14 843 904, α = 927 744 = 0.884765625·O.
    for _ in 0..9 {
        r.ack(1, 0, false);
    }
    r.ack(1, 0, true);
    assert_eq!(r.cc.alpha_fixed(), 927_744);
    // Marks on every segment drive α back up to 1: the truncated EWMA closes its last gap of
    // d < 16 units by one per round, and the cap holds it there.
    for _ in 0..300 {
        for _ in 0..9 {
            r.ack(1, 1, false);
        }
        r.ack(1, 1, true);
    }
    assert_eq!(r.cc.alpha_fixed(), O);
}

#[test]
fn ce_reduction_is_alpha_half_of_frac_cwnd_then_cwnd_steps_down_one_per_ack() {
    let mut r = Run::new(100, 100 * M);
    // α = 1: (O·100·O + O) >> 21 = 50·O (the half segment of rounding is floored away).
    assert_eq!(r.congestion(Cause::Ecn), Reaction::SelfManaged);
    assert_eq!(r.cc.frac_cwnd(), 50 * O);
    assert_eq!((r.st.cwnd, r.st.ssthresh), (100 * M, 100 * M), "the stack's window is untouched");
    // Every ACK moves cwnd one segment toward ⌈frac_cwnd⌉, ssthresh following it down.
    r.ack(1, 1, false);
    assert_eq!((r.st.cwnd, r.st.ssthresh), (99 * M, 99 * M));
    for _ in 0..49 {
        r.ack(1, 1, false);
    }
    assert_eq!((r.segs(), r.st.ssthresh), (50, 50 * M));
    r.ack(1, 1, false);
    assert_eq!(r.segs(), 50, "all-marked ACKs add nothing");
    assert_eq!(r.cc.frac_cwnd(), 50 * O);

    // α = 989 593 (one round with 10 % marks, above): reduction
    // ⌊(989 593·100·O + O) / 2²¹⌋ = ⌊98 959 301 / 2⌋ = 49 479 650, frac_cwnd = 104 857 600 −
    // 49 479 650 = 55 377 950 = 52.81 segments, so cwnd settles at 53.
    let mut r = Run::new(100, 100 * M);
    r.cc.upscaled_alpha = 15_833_497;
    r.congestion(Cause::Ecn);
    assert_eq!(r.cc.frac_cwnd(), 55_377_950);
    for _ in 0..60 {
        r.ack(1, 1, false);
    }
    assert_eq!(r.segs(), 53);
    // The floor: cwnd never steps below two segments.
    let mut r = Run::new(3, 3 * M);
    r.congestion(Cause::Ecn);
    r.congestion(Cause::Ecn);
    assert_eq!(r.cc.frac_cwnd(), 3 * O / 4);
    for _ in 0..5 {
        r.ack(1, 1, false);
    }
    assert_eq!(r.segs(), 2);
}

#[test]
fn additive_increase_skips_ce_marked_bytes() {
    let mut r = Run::new(20, 20 * M);
    // Two segments, one marked: one unmarked segment credited, (O + 10)/20 = 52 429.
    // (Both credited would give (2·O + 10)/20 = 104 858.)
    r.ack(2, 1, false);
    assert_eq!(r.cc.frac_cwnd(), 20 * O + 52_429);
    assert_eq!(r.segs(), 21, "cwnd is ⌈frac_cwnd⌉");
    // With W = 21: (O + 10)/21 = 49 932 per segment. After 19 more frac_cwnd is 21 972 657,
    // below 21·O = 22 020 096; the 20th takes it to 22 022 589 and cwnd to 22.
    for _ in 0..19 {
        r.ack(1, 0, false);
    }
    assert_eq!((r.cc.frac_cwnd(), r.segs()), (21_972_657, 21));
    r.ack(1, 0, false);
    assert_eq!((r.cc.frac_cwnd(), r.segs()), (22_022_589, 22));
    // A fully marked ACK (even one reporting more CE than it delivers) adds nothing.
    let before = r.cc.frac_cwnd();
    r.ack(1, 1, false);
    r.p.delivered += M;
    let mut a = ack(1);
    a.ce_delta = 2;
    a.ce_bytes = 2 * M;
    r.cc.on_ack(&mut r.st, &r.p, &a);
    assert_eq!(r.cc.frac_cwnd(), before);

    // AccECN byte counts: half a segment marked leaves 500 bytes:
    // (500·O + 10·1000) / (20·1000) = 26 214.
    let mut r = Run::new(20, 20 * M);
    r.p.delivered += M;
    let mut a = ack(1);
    a.ce_delta = 1;
    a.ce_bytes = 500;
    r.cc.on_ack(&mut r.st, &r.p, &a);
    assert_eq!(r.cc.frac_cwnd(), 20 * O + 26_214);
}

#[test]
fn slow_start_growth_is_credited_to_frac_cwnd_and_a_marked_ack_ends_it() {
    let mut r = Run::new(10, u64::MAX);
    for _ in 0..10 {
        r.ack(1, 0, false);
    }
    assert_eq!((r.segs(), r.cc.frac_cwnd()), (20, 20 * O));
    // First CE (α = 1): frac_cwnd halves; unmarked data keeps slow start going meanwhile.
    r.congestion(Cause::Ecn);
    assert_eq!(r.cc.frac_cwnd(), 10 * O);
    r.ack(1, 0, false);
    assert_eq!((r.segs(), r.cc.frac_cwnd()), (21, 11 * O));
    // An ACK with nothing unmarked steps cwnd toward frac_cwnd and sets ssthresh: avoidance.
    r.ack(1, 1, false);
    assert_eq!((r.segs(), r.st.ssthresh), (20, 20 * M));
    assert!(!r.st.in_slow_start());
}

#[test]
fn at_most_one_reduction_per_episode_and_per_target_rtt_when_rtt_independent() {
    // Default mode: marks inside the episode never cut again, only a new episode does.
    let mut r = Run::new(40, 40 * M);
    r.congestion(Cause::Ecn);
    for _ in 0..10 {
        r.ack(1, 1, false);
    }
    assert_eq!((r.cc.frac_cwnd(), r.segs()), (20 * O, 30));

    // RTT independent from the start (transition 0, out of slow start): a second episode within
    // the target (195 units of 128 µs = 24.96 ms) is let through without a cut.
    let c = cfg(&[("rtt_transition", ParamValue::Int(0))]);
    let mut r = Run::with(c, 40, 40 * M);
    assert!(r.cc.is_rtt_indep(&r.st));
    r.congestion(Cause::Ecn);
    assert_eq!(r.cc.frac_cwnd(), 20 * O);
    r.p.now = 20_000_000;
    assert_eq!(r.congestion(Cause::Ecn), Reaction::SelfManaged);
    assert_eq!(r.cc.frac_cwnd(), 20 * O, "20 ms < 24.96 ms");
    r.p.now = 24_960_000;
    r.congestion(Cause::Ecn);
    assert_eq!(r.cc.frac_cwnd(), 10 * O);
}

#[test]
fn loss_halves_without_growth_until_the_episode_ends_and_undo_restores() {
    let mut r = Run::new(40, 40 * M);
    assert_eq!(r.congestion(Cause::Loss), Reaction::SelfManaged);
    assert_eq!(r.cc.frac_cwnd(), 20 * O);
    assert!(r.cc.in_loss());
    r.ack(1, 0, false);
    assert_eq!((r.segs(), r.st.ssthresh), (39, 39 * M));
    for _ in 0..25 {
        r.ack(1, 0, false);
    }
    assert_eq!((r.segs(), r.cc.frac_cwnd()), (20, 20 * O), "no increase while in loss");
    r.cc.on_episode_end(&mut r.st, &r.p, Cause::Loss);
    r.ack(1, 0, false);
    assert_eq!((r.cc.frac_cwnd(), r.segs()), (20 * O + 52_429, 21));
    // A spurious cut: frac_cwnd and the window come back (`prague_cwnd_undo`).
    assert_eq!(r.cc.undo_cwnd(&r.st, 0), 40 * M);
    assert_eq!(r.cc.frac_cwnd(), 40 * O);

    // Odd windows: 41·O − ⌊41·O/2⌋ = 20.5·O, so 21 segments.
    let mut r = Run::new(41, 41 * M);
    r.congestion(Cause::Loss);
    assert_eq!(r.cc.frac_cwnd(), 41 * O - 41 * O / 2);
    // A loss inside an ECN episode halves what the ECN cut left.
    let mut r = Run::new(40, 40 * M);
    r.congestion(Cause::Ecn);
    r.congestion(Cause::Loss);
    assert_eq!(r.cc.frac_cwnd(), 10 * O);

    // RTO: halve once and keep ssthresh (`prague_ssthresh`); the stack restarts cwnd.
    let mut r = Run::new(40, 40 * M);
    assert_eq!(r.congestion(Cause::Rto { backoffs: 0 }), Reaction::Prr { ssthresh: 40 * M });
    assert_eq!(r.cc.frac_cwnd(), 20 * O);
    assert_eq!(r.congestion(Cause::Rto { backoffs: 1 }), Reaction::Prr { ssthresh: 40 * M });
    assert_eq!(r.cc.frac_cwnd(), 20 * O);
}

#[test]
fn pacing_rate_is_mtu_frac_cwnd_over_srtt_doubled_below_half_ssthresh() {
    // 1052 · 20 / 0.1 s; 20 ≥ 20/2.
    let mut r = Run::new(20, 20 * M);
    r.ack(1, 1, false);
    assert_eq!(r.st.pacing_rate, Some(210_400.0));
    // Slow start with cwnd 10 < 40/2: doubled.
    let r = Run::new(10, 40 * M);
    assert_eq!(r.st.pacing_rate, Some(210_400.0));
    // 25 ≥ 40/2: not doubled, 1052 · 25 / 0.1.
    let r = Run::new(25, 40 * M);
    assert_eq!(r.st.pacing_rate, Some(263_000.0));
    // The fractional window counts: 20.5 segments → 215 660 B/s.
    let mut r = Run::new(20, 20 * M);
    r.cc.frac_cwnd = 20 * O + O / 2;
    r.cc.update_pacing_rate(&mut r.st, &r.p);
    assert_eq!(r.st.pacing_rate, Some(215_660.0));
    // No RTT sample yet: no pacing rate.
    let mut p = path(0);
    p.srtt = None;
    let mut st = CcState { cwnd: 10 * M, ssthresh: u64::MAX, pacing_rate: None };
    Prague::default().init(&mut st, &p);
    assert_eq!(st.pacing_rate, None);
}

#[test]
fn rtt_independence_scales_the_increase_after_the_transition() {
    let srtt = 12_800_000; // 12 800 µs = 100 units of 128 µs
    let run = |kv: &[(&str, ParamValue)]| {
        let mut r = Run {
            cc: Prague::new(cfg(kv)),
            st: CcState { cwnd: 20 * M, ssthresh: 20 * M, pacing_rate: None },
            p: path(0),
        };
        r.p.srtt = Some(srtt);
        r.cc.init(&mut r.st, &r.p);
        r
    };
    let now = ("rtt_transition", ParamValue::Int(0));
    // Target 25.6 ms = 200 units: (100/200)² · O = 262 144, then (262 144 + 10)/20 = 13 107.
    let mut r = run(&[now.clone(), ("rtt_target", ParamValue::Str("25.6ms".into()))]);
    assert_eq!(r.cc.ai_ack_increase(), O / 4);
    r.ack(1, 0, false);
    assert_eq!(r.cc.frac_cwnd(), 20 * O + 13_107);
    // The default 25 ms is 195 units: (100·100·O + ⌊195²/2⌋) / 195² = 275 760.
    assert_eq!(run(std::slice::from_ref(&now)).cc.ai_ack_increase(), 275_760);
    // Scalable: ((O/8)·128 + O·min(100 − 12, 128))·100 / 128², rounded = 665 600.
    let s = run(&[now.clone(), ("rtt_scaling", ParamValue::Str("scalable".into()))]);
    assert_eq!(s.cc.ai_ack_increase(), 665_600);
    // Additive: the target becomes 195 + 100 units: (100²·O + ⌊295²/2⌋) / 295² = 120 491.
    let a = run(&[now.clone(), ("rtt_scaling", ParamValue::Str("additive".into()))]);
    assert_eq!(a.cc.ai_ack_increase(), 120_491);
    // Unscaled: without the mode, before 500 rounds outside slow start, or at RTTs ≥ target.
    assert_eq!(run(&[now.clone(), ("rtt_scaling", ParamValue::Str("none".into()))]).cc.ai_ack_increase(), O);
    let mut before = run(&[]);
    assert_eq!((before.cc.round(), before.cc.ai_ack_increase()), (1, O));
    before.p.srtt = Some(30_000_000);
    before.cc.update_ai_ack_increase(&before.p);
    assert_eq!(before.cc.ai_ack_increase(), O);
    // 499 more rounds (each round start updates α's window and counts one) switch it on.
    let mut r = run(&[]);
    for _ in 0..498 {
        r.ack(1, 0, true);
    }
    assert_eq!((r.cc.round(), r.cc.ai_ack_increase()), (499, O));
    r.ack(1, 0, true);
    assert_eq!((r.cc.round(), r.cc.ai_ack_increase()), (500, 275_760));
}

#[test]
fn rtt_independent_alpha_waits_for_a_target_rtt() {
    let srtt = 12_800_000;
    let mk = |scaling: &str| {
        let c = cfg(&[
            ("rtt_transition", ParamValue::Int(0)),
            ("rtt_target", ParamValue::Str("25.6ms".into())),
            ("rtt_scaling", ParamValue::Str(scaling.into())),
        ]);
        let mut r = Run {
            cc: Prague::new(c),
            st: CcState { cwnd: 20 * M, ssthresh: 20 * M, pacing_rate: None },
            p: path(0),
        };
        r.p.srtt = Some(srtt);
        r.cc.init(&mut r.st, &r.p);
        r
    };
    let mut r = mk("rate");
    r.p.now = 1_000_000;
    r.ack(1, 1, false);
    r.p.now = 10_000_000;
    r.ack(1, 0, true);
    assert_eq!(r.cc.alpha_fixed(), O, "the round ended, but 10 ms < 25.6 ms");
    r.p.now = 25_600_000;
    r.ack(1, 0, false);
    // The window held all three ACKs, one marked: F = ⌊O/3⌋ = 349 525; 16·O − O + F =
    // 16 078 165; α = 1 004 885.
    assert_eq!(r.cc.alpha_fixed(), 1_004_885);
    // Without RTT independence the round start updates at once, from the first ACK alone (F = 1).
    let mut r = mk("none");
    r.p.now = 1_000_000;
    r.ack(1, 1, false);
    r.p.now = 10_000_000;
    r.ack(1, 0, true);
    assert_eq!(r.cc.upscaled_alpha, 16 * O);
    assert_eq!(r.cc.window_delivered, M, "the round-start ACK opened the new window");
}

#[test]
fn params_name_the_key_and_defaults_hold() {
    let bad: [(&str, ParamValue); 5] = [
        ("rtt_scaling", ParamValue::Str("fast".into())),
        ("rtt_target", ParamValue::Str("50us".into())),
        ("rtt_target", ParamValue::Str("11s".into())),
        ("rtt_transition", ParamValue::Int(-1)),
        ("header_bytes", ParamValue::Int(70_000)),
    ];
    for (k, v) in bad {
        let mut p = Params::new();
        p.insert(k, v.clone());
        assert_eq!(PragueConfig::from_params(&p).unwrap_err().key, k, "{k} = {v:?}");
    }
    let mut p = Params::new();
    p.insert("rtt_scaling", ParamValue::Str("scalable".into()));
    p.insert("rtt_target", ParamValue::Str("10ms".into()));
    p.insert("rtt_transition", ParamValue::Int(8));
    p.insert("header_bytes", ParamValue::Int(40));
    let c = PragueConfig::from_params(&p).unwrap();
    p.reject_unknown("prague").unwrap();
    assert_eq!(
        c,
        PragueConfig {
            rtt_scaling: RttScaling::Scalable,
            rtt_target: 10_000_000,
            rtt_transition: 8,
            header_bytes: 40,
            ecn_fallback: EcnFallback::Off,
        }
    );
    assert_eq!(PragueConfig::from_params(&Params::new()).unwrap(), PragueConfig::default());
    assert_eq!(PragueConfig::default().target_units(), 195);
}

// Classic-ECN detection and fallback (`prague_rtt_estimator`, `prague_update_rtt_scaling`,
// `prague_classic_ecn_detection`, `prague_classic_ecn_fallback`). `L = 2²⁰` below is one unit of
// `classic_ecn` (α's scale): L_STICKY = 8·L, CLASSIC_ECN = 9·L, C_STICKY = 17·L.

const L: u64 = 1 << 20;

#[test]
fn detector_constants_are_the_modules() {
    assert_eq!((L_STICKY, CLASSIC_ECN, C_STICKY), (8 * L, 9 * L, 17 * L));
    // V0_LG = 10 014 683 >> 1, D0_LG = 11 498 458 >> 1.
    assert_eq!((classic_ecn::V0_LG, classic_ecn::D0_LG), (5_007_341, 5_749_229));
    let d = ClassicEcnDetector::new(100_000);
    // 100 000 µs << 18; 1 µs << 19; carries 741 455 and 370 727.
    assert_eq!((d.srtt_pace_us(), d.mdev_pace_us()), (26_214_400_000, 524_288));
    assert_eq!(
        (d.g_srtt_shift(), d.g_mdev_shift(), d.rest_mdev_us(), d.rest_depth_us()),
        (18, 19, 741_455, 370_727)
    );
    assert_eq!(d.classic_ecn(), 0);
}

#[test]
fn estimator_and_gain_shifts_follow_the_integer_arithmetic() {
    // No srtt at init: srtt_pace = 0. ssthresh 20: ilog2 = 4, g_srtt = 4 + 2 + 1 = 7, g_mdev = 8;
    // the change of −11 shifts everything right: mdev 2¹⁹ >> 11 = 256, carries
    // ⌊741 455/2048⌋ = 362 and ⌊370 727/2048⌋ = 181.
    let mut d = ClassicEcnDetector::new(0);
    d.update_rtt_scaling(20);
    assert_eq!((d.g_srtt_shift(), d.g_mdev_shift()), (7, 8));
    assert_eq!((d.srtt_pace_us(), d.mdev_pace_us(), d.rest_mdev_us(), d.rest_depth_us()), (0, 256, 362, 181));
    // First sample, no previous measure: srtt_pace = 20 000 << 7, mdev_pace = 1 << 8.
    d.rtt_sample(20_000);
    assert_eq!((d.srtt_pace_us(), d.mdev_pace_us()), (2_560_000, 256));
    // 30 ms: m = 30 000 − 20 000 = 10 000, srtt_pace 2 570 000; |m| − (256 >> 8) = 9 999,
    // mdev_pace 10 255.
    d.rtt_sample(30_000);
    assert_eq!((d.srtt_pace_us(), d.mdev_pace_us()), (2_570_000, 10_255));
    // 10 ms: m = 10 000 − ⌊2 570 000/128⌋ = 10 000 − 20 078 = −10 078, srtt_pace 2 559 922;
    // 10 078 − ⌊10 255/256⌋ = 10 078 − 40 = 10 038, mdev_pace 20 293.
    d.rtt_sample(10_000);
    assert_eq!((d.srtt_pace_us(), d.mdev_pace_us()), (2_559_922, 20_293));
    // Unscaled: srtt ⌊2 559 922/128⌋ = 19 999 µs, mdev ⌊20 293/256⌋ = 79 µs.
    assert_eq!((d.srtt_pace_us() >> 7, d.mdev_pace_us() >> 8), (19_999, 79));

    // ssthresh 1000: ilog2 = 9, 9 + 4 + 1 = 14; +7 shifts everything left by 7 (×128): the
    // unscaled values stay.
    let mut up = d.clone();
    up.update_rtt_scaling(1000);
    assert_eq!((up.g_srtt_shift(), up.g_mdev_shift()), (14, 15));
    assert_eq!((up.srtt_pace_us(), up.mdev_pace_us()), (327_670_016, 2_597_504));
    assert_eq!((up.rest_mdev_us(), up.rest_depth_us()), (46_336, 23_168));
    assert_eq!((up.srtt_pace_us() >> 14, up.mdev_pace_us() >> 15), (19_999, 79));
    // The shift tops out at 18 (infinite ssthresh, or ilog2 ≥ 12), and is 2 for ssthresh 2 or 3.
    up.update_rtt_scaling(u64::MAX / 1000);
    assert_eq!((up.g_srtt_shift(), up.g_mdev_shift()), (18, 19));
    up.update_rtt_scaling(4096);
    assert_eq!(up.g_srtt_shift(), 18, "12 + 6 + 1 = 19, capped");
    up.update_rtt_scaling(3);
    assert_eq!((up.g_srtt_shift(), up.g_mdev_shift()), (2, 3));

    // The first detection from here, min RTT 10 ms: adj = 2¹⁸ >> (19 − 8) = 128.
    // mdev: 79·362 + 128 = 28 726, ilog2 14, lg = 14 − 8 = 6, carry ⌊28 726/64⌋ = 448;
    // 6·2¹⁹ − V0_LG = 3 145 728 − 5 007 341 = −1 861 613.
    // depth: (19 999 − 10 000)·181 + 64 = 1 809 883, ilog2 20, lg = 20 − 7 = 13, carry
    // ⌊1 809 883/8192⌋ = 220; 13·2¹⁹ − D0_LG = 6 815 744 − 5 749 229 = 1 066 515.
    // Sum −795 098: clamped to 0.
    d.detect(Some(10_000));
    assert_eq!((d.rest_mdev_us(), d.rest_depth_us(), d.classic_ecn()), (448, 220, 0));
    // Without a min RTT (the stack's ~0U) nothing moves.
    let before = d.clone();
    d.detect(None);
    assert_eq!(d, before);
}

#[test]
fn detector_scores_variance_and_depth_and_carries_the_log_fraction() {
    // ssthresh 4: ilog2 2, g_srtt = 2 + 1 + 1 = 4, g_mdev = 5 (−14: mdev 32, carries 45 and 22).
    let mut d = ClassicEcnDetector::new(0);
    d.update_rtt_scaling(4);
    assert_eq!((d.mdev_pace_us(), d.rest_mdev_us(), d.rest_depth_us()), (32, 45, 22));
    // 40 ms: srtt_pace 640 000, mdev_pace 32. 80 ms: m = 40 000, srtt_pace 680 000;
    // 40 000 − 1 = 39 999, mdev_pace 40 031. 40 ms: m = 40 000 − 42 500 = −2 500,
    // srtt_pace 677 500; 2 500 − ⌊40 031/32⌋ = 1 250, mdev_pace 41 281.
    for rtt in [40_000, 80_000, 40_000] {
        d.rtt_sample(rtt);
    }
    assert_eq!((d.srtt_pace_us(), d.mdev_pace_us()), (677_500, 41_281));
    // srtt ⌊677 500/16⌋ = 42 343 µs, mdev ⌊41 281/32⌋ = 1 290 µs; adj = 2¹⁸ >> 14 = 16.
    // mdev: 1 290·45 + 16 = 58 066, ilog2 15, lg 10, carry ⌊58 066/1024⌋ = 56;
    //   10·2¹⁹ − 5 007 341 = 235 539.
    // depth: (42 343 − 10 000)·22 + 8 = 711 554, ilog2 19, lg 15, carry ⌊711 554/2¹⁵⌋ = 21;
    //   15·2¹⁹ − 5 749 229 = 2 115 091.
    d.detect(Some(10_000));
    assert_eq!((d.rest_mdev_us(), d.rest_depth_us()), (56, 21));
    assert_eq!(d.classic_ecn(), 2_350_630);
    // Same srtt and mdev again: the carried mantissas (56/32 = 1.75, 21/16) move the logs.
    // mdev: 1 290·56 + 16 = 72 256, ilog2 16, lg 11 (one more), carry ⌊72 256/2048⌋ = 35;
    //   11·2¹⁹ − 5 007 341 = 759 827.
    // depth: 32 343·21 + 8 = 679 211, ilog2 19, lg 15, carry 20; + 2 115 091.
    d.detect(Some(10_000));
    assert_eq!((d.rest_mdev_us(), d.rest_depth_us()), (35, 20));
    assert_eq!(d.classic_ecn(), 2_350_630 + 759_827 + 2_115_091);
    // srtt at or below the min RTT: only the variance term (1 290·35 + 16 = 45 166, ilog2 15,
    // lg 10: +235 539); the depth carry is left alone.
    let mut e = d.clone();
    e.detect(Some(42_343));
    assert_eq!((e.rest_depth_us(), e.classic_ecn()), (20, 5_225_548 + 235_539));
    // The ceiling: C_STICKY.
    for _ in 0..10 {
        d.detect(Some(10_000));
    }
    assert_eq!(d.classic_ecn(), C_STICKY);
}

#[test]
fn fallback_floors_alpha_at_most_at_0_625() {
    let mut d = ClassicEcnDetector::new(0);
    // c = min(classic_ecn, 9·L) − 8·L, then ⌊c/2⌋ + ⌊c/8⌋.
    d.classic_ecn = 8 * L + L / 2;
    // c = 524 288: 262 144 + 65 536 = 327 680 (0.3125).
    assert_eq!(d.fallback_alpha(100_000), 327_680);
    assert_eq!(d.fallback_alpha(400_000), 400_000, "a larger α stays");
    d.classic_ecn = C_STICKY;
    // c = L: 524 288 + 131 072 = 655 360 (0.625).
    assert_eq!(d.fallback_alpha(0), 655_360);
    assert_eq!(d.fallback_alpha(L), L);
}

/// Rounds of 20 one-segment ACKs whose RTT samples cycle through `rtts` (ms), the sixth ACK
/// CE-marked; each round opens with a round-start ACK (the α update, and the detector).
fn rounds(r: &mut Run, n: usize, rtts: &[u64]) -> Vec<u64> {
    let mut seen = Vec::new();
    for _ in 0..n {
        for j in 0..20 {
            r.p.delivered += M;
            let mut a = ack(1);
            a.rtt = Some(rtts[j % rtts.len()] * 1_000_000);
            a.round_start = j == 0;
            if j == 5 {
                a.ce_delta = 1;
                a.ce_bytes = M;
            }
            r.cc.on_ack(&mut r.st, &r.p, &a);
        }
        seen.push(r.cc.classic_ecn());
    }
    seen
}

/// A flow at cwnd 20 over a path of min RTT 20 ms whose srtt is `srtt_ms` at init, with
/// `ecn_fallback = mode`, after its first CE (CWR: the gains follow ssthresh 20, shifts 7/8).
fn fallback_run(mode: i64, srtt_ms: u64) -> Run {
    let c = cfg(&[("rtt_scaling", ParamValue::Str("none".into())), ("ecn_fallback", ParamValue::Int(mode))]);
    let mut r = Run {
        cc: Prague::new(c),
        st: CcState { cwnd: 20 * M, ssthresh: 20 * M, pacing_rate: None },
        p: path(0),
    };
    r.p.srtt = Some(srtt_ms * 1_000_000);
    r.p.min_rtt = Some(20_000_000);
    r.cc.init(&mut r.st, &r.p);
    r.congestion(Cause::Ecn);
    assert_eq!(r.cc.classic_ecn_detector().g_srtt_shift(), 7);
    r
}

/// α = 0.25 and 100 segments, then a CE episode: the resulting `frac_cwnd`.
fn cut_at_quarter_alpha(r: &mut Run) -> u64 {
    r.cc.upscaled_alpha = 4 * O;
    r.cc.frac_cwnd = 100 * O;
    r.congestion(Cause::Ecn);
    assert_eq!(r.cc.alpha_fixed(), O / 4, "the stored α is not touched");
    r.cc.frac_cwnd()
}

// α = 0.25 on 100 segments: (2¹⁸·100·O + O) >> 21 = ⌊26 214 401/2⌋ = 13 107 200 off, leaving
// 91 750 400 (87.5 segments). At the fallback floor 0.625: ⌊65 536 001/2⌋ = 32 768 000 off,
// leaving 72 089 600 (68.75 segments).
const CUT_L4S: u64 = 91_750_400;
const CUT_CLASSIC: u64 = 72_089_600;

#[test]
fn deep_variable_queue_drives_classic_ecn_to_c_sticky_and_mode_1_cuts_deeper() {
    // Samples alternate 60 and 100 ms over a 20 ms min RTT: srtt ≈ 80 ms (60 ms of queue, D0 is
    // 2 ms), mdev ≈ 20 ms (V0 is 0.75 ms). Round 0 holds the first CE, so detection starts at
    // round 1's first ACK. Each round adds ≈ ½·lg(20/0.75) + ½·lg(60/2) ≈ 2.4 + 2.5 units.
    let deep = [60, 100];
    let mut runs: Vec<Run> = (0..3).map(|m| fallback_run(m, 80)).collect();
    let seen: Vec<Vec<u64>> = runs.iter_mut().map(|r| rounds(r, 7, &deep)).collect();
    assert_eq!(seen[0], vec![0; 7], "mode 0: no detection");
    assert_eq!(seen[1], seen[2], "modes 1 and 2 detect alike");
    // From an independent transcription of the C arithmetic (not by hand).
    assert_eq!(seen[1], vec![0, 3_399_206, 6_798_412, 10_721_906, 14_645_400, C_STICKY, C_STICKY]);
    assert!(seen[1][3] > CLASSIC_ECN, "classic after three detections");
    // Nothing else differs between the modes while no CE episode opens: the estimator runs in
    // all three, and window, α and pacing are the same.
    for r in &runs[1..] {
        assert_eq!(
            r.cc.classic_ecn_detector().srtt_pace_us(),
            runs[0].cc.classic_ecn_detector().srtt_pace_us()
        );
        assert_eq!(
            (r.cc.frac_cwnd(), r.cc.upscaled_alpha, r.st, r.cc.round()),
            (runs[0].cc.frac_cwnd(), runs[0].cc.upscaled_alpha, runs[0].st, runs[0].cc.round())
        );
    }
    // The reduction: mode 1 takes α up to 0.625; modes 0 and 2 keep α.
    let cuts: Vec<u64> = runs.iter_mut().map(cut_at_quarter_alpha).collect();
    assert_eq!(cuts, vec![CUT_L4S, CUT_CLASSIC, CUT_L4S]);
    // An α above the floor is used as it is, fallback or not: α = 1 halves.
    let mut r = fallback_run(1, 80);
    rounds(&mut r, 7, &deep);
    r.cc.upscaled_alpha = 16 * O;
    r.cc.frac_cwnd = 100 * O;
    r.congestion(Cause::Ecn);
    assert_eq!(r.cc.frac_cwnd(), 50 * O);
}

#[test]
fn shallow_steady_queue_stays_l4s() {
    // 21 ms samples over a 20 ms min RTT, srtt 21 ms from the start. After the rescale
    // srtt_pace = 21 000·128 exactly, so every error is 0; mdev_pace goes 256 → 255 and stays
    // (255 >> 8 = 0). First detection: mdev 0·362 + 128 = 128, ilog2 7 < 8, lg 0, carry 128:
    // −V0_LG; depth 1 000·181 + 64 = 181 064, ilog2 17, lg 10, carry ⌊181 064/1024⌋ = 176,
    // 10·2¹⁹ = 5 242 880 ≤ D0_LG: nothing. −5 007 341 clamps to 0.
    let mut r = fallback_run(1, 21);
    assert_eq!(rounds(&mut r, 2, &[21]), vec![0; 2]);
    let d = r.cc.classic_ecn_detector();
    assert_eq!(
        (d.srtt_pace_us(), d.mdev_pace_us(), d.rest_mdev_us(), d.rest_depth_us()),
        (2_688_000, 255, 128, 176)
    );
    // Next: 1 000·176 + 64 = 176 064, lg 10 again, carry 171 (lg 1000 = 9.97 < 10, so the
    // mantissa drifts down); the score stays 0 round after round.
    assert_eq!(rounds(&mut r, 1, &[21]), vec![0]);
    assert_eq!(r.cc.classic_ecn_detector().rest_depth_us(), 171);
    assert_eq!(rounds(&mut r, 20, &[21]), vec![0; 20]);
    assert_eq!(cut_at_quarter_alpha(&mut r), CUT_L4S);
    // A queue of 2 ms (22 ms samples): 2 000·181 + 64 = 362 064, ilog2 18, lg 11, and
    // 11·2¹⁹ − D0_LG = 17 939 (½·(11 − lg 2000)·L), less than the −V0_LG of a zero deviation:
    // still 0.
    let mut r = fallback_run(1, 22);
    assert_eq!(rounds(&mut r, 8, &[22]), vec![0; 8]);
}

#[test]
fn classic_ecn_decays_once_the_queue_turns_shallow_and_the_fallback_stops() {
    let mut r = fallback_run(1, 80);
    rounds(&mut r, 7, &[60, 100]);
    assert_eq!(r.cc.classic_ecn(), C_STICKY);
    // 21 ms from now on. The deviation decays with gain 1/256 per sample; while it stays above
    // V0 the score holds at the ceiling, then each round takes up to V0_LG (4.78 L) off. (Not
    // monotonically: when the carried mantissa wraps, a round's integer log is one higher.)
    let seen = rounds(&mut r, 120, &[21]);
    assert!(seen[..40].iter().all(|&c| c > CLASSIC_ECN), "held while mdev ≫ V0: {seen:?}");
    let first_below = seen.iter().position(|&c| c <= L_STICKY).expect("falls back to L4S");
    assert!(seen[first_below..].iter().all(|&c| c <= L_STICKY), "{seen:?}");
    assert_eq!(seen[90..], [0; 30]);
    assert_eq!(cut_at_quarter_alpha(&mut r), CUT_L4S);
    // Mid-way, a score between L_STICKY and CLASSIC_ECN gives a partial floor: 8.5 L → 0.3125.
    let mut r = fallback_run(1, 80);
    r.cc.classic.classic_ecn = 8 * L + L / 2;
    r.cc.upscaled_alpha = 4 * O;
    r.cc.frac_cwnd = 100 * O;
    r.congestion(Cause::Ecn);
    // (327 680·100·O + O) >> 21 = ⌊32 768 001/2⌋ = 16 384 000 off.
    assert_eq!(r.cc.frac_cwnd(), 100 * O - 16_384_000);
    // Exactly L_STICKY is still L4S (`classic_ecn > L_STICKY`).
    let mut r = fallback_run(1, 80);
    r.cc.classic.classic_ecn = L_STICKY;
    assert_eq!(cut_at_quarter_alpha(&mut r), CUT_L4S);
}

#[test]
fn detection_waits_for_the_first_ce_and_init_resets_it() {
    // Without a CE, α is never updated, and neither is the detector (`prague_update_alpha`).
    let c = cfg(&[("rtt_scaling", ParamValue::Str("none".into())), ("ecn_fallback", ParamValue::Int(1))]);
    let mut r = Run::with(c, 20, 20 * M);
    r.p.min_rtt = Some(20_000_000);
    r.congestion(Cause::Loss);
    for round in 0..10 {
        for j in 0..20 {
            r.p.delivered += M;
            let mut a = ack(1);
            a.rtt = Some(if j % 2 == 0 { 60_000_000 } else { 100_000_000 });
            a.round_start = j == 0 && round > 0;
            r.cc.on_ack(&mut r.st, &r.p, &a);
        }
    }
    assert!(!r.cc.saw_ce());
    assert_eq!(r.cc.classic_ecn(), 0);
    assert!(r.cc.classic_ecn_detector().mdev_pace_us() > 256, "but the estimator runs");
    // A loss (Recovery) rescales as a CE episode does: ssthresh 20 → shifts 7/8.
    assert_eq!(r.cc.classic_ecn_detector().g_srtt_shift(), 7);
    // A repeated RTO does not call `prague_ssthresh`; a fresh one does (with ssthresh 4, as
    // set here: shifts 4/5).
    r.st.ssthresh = 4 * M;
    r.congestion(Cause::Rto { backoffs: 2 });
    assert_eq!(r.cc.classic_ecn_detector().g_srtt_shift(), 7);
    r.congestion(Cause::Rto { backoffs: 0 });
    assert_eq!(r.cc.classic_ecn_detector().g_srtt_shift(), 4);
    // init starts the detector afresh from the stack's srtt (100 ms).
    r.cc.init(&mut r.st, &r.p);
    assert_eq!(*r.cc.classic_ecn_detector(), ClassicEcnDetector::new(100_000));
}

#[test]
fn ecn_fallback_param_takes_0_1_2_and_names_the_key() {
    for (v, want) in [(0, EcnFallback::Off), (1, EcnFallback::Fallback), (2, EcnFallback::DetectOnly)] {
        assert_eq!(cfg(&[("ecn_fallback", ParamValue::Int(v))]).ecn_fallback, want);
    }
    assert_eq!(PragueConfig::default().ecn_fallback, EcnFallback::Off);
    for bad in [ParamValue::Int(3), ParamValue::Int(-1), ParamValue::Str("1".into())] {
        let mut p = Params::new();
        p.insert("ecn_fallback", bad.clone());
        let e = PragueConfig::from_params(&p).unwrap_err();
        assert_eq!(e.key, "ecn_fallback", "{bad:?}");
    }
    let mut p = Params::new();
    p.insert("ecn_fallback", ParamValue::Int(3));
    let msg = PragueConfig::from_params(&p).unwrap_err().to_string();
    assert!(msg.contains("ecn_fallback") && msg.contains('3'), "{msg}");
    let mut p = Params::new();
    p.insert("ecn_fallback", ParamValue::Int(2));
    PragueConfig::from_params(&p).unwrap();
    p.reject_unknown("prague").unwrap();
}
