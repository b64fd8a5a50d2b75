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
            header_bytes: 40
        }
    );
    assert_eq!(PragueConfig::from_params(&Params::new()).unwrap(), PragueConfig::default());
    assert_eq!(PragueConfig::default().target_units(), 195);
}
