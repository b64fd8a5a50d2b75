//! The spec's §13.2 vectors exactly, the variants' distinguishing behaviour, the floors, the
//! hooks (undo, RTO, ECN) and parameter errors.

use super::*;
use crate::{ParamValue, Params};

const MSS: u64 = 1000;

fn siad(variant: Variant) -> Siad {
    Siad::new(SiadConfig { variant, ..SiadConfig::default() })
}

/// The §13.2 common setup: N = 20, increase_performed = 1, given window and SIAD state.
#[allow(clippy::too_many_arguments)]
fn at(
    cwnd: u64,
    ssthresh: u64,
    incthresh: u64,
    increase: u64,
    prev_max: u64,
    min: u64,
    curr: u64,
) -> (Siad, Window) {
    let mut s = siad(Variant::Siad);
    s.incthresh = incthresh;
    s.increase = increase;
    s.prev_max_cwnd = prev_max;
    s.min_delay = min;
    s.curr_delay = curr;
    s.increase_performed = true;
    (s, Window { cwnd, ssthresh })
}

/// (ssthresh, incthresh, increase, prev_max) after the congestion event.
fn event(s: &mut Siad, w: Window) -> (u64, u64, u64, u64) {
    let ssth = s.variant_ssthresh(&w);
    (ssth, s.incthresh, s.increase, s.prev_max_cwnd)
}

#[test]
fn v1_linear_increment() {
    let (mut s, w) = at(122, 81, 124, 43, 124, 100, 150);
    assert_eq!(event(&mut s, w), (79, 116, 37, 120));
    assert_eq!(s.prev_min_delay, [100, 0, 0]);
}

#[test]
fn v2_slow_start_halves_then_applies_beta() {
    let (mut s, w) = at(200, INF, 10, 4000, 10, 100, 150);
    assert_eq!(event(&mut s, w), (65, 190, 125, 100));
}

#[test]
fn v3_slow_start_without_rtt_halves_twice() {
    let (mut s, w) = at(200, INF, 10, 4000, 10, UNSET, 150);
    assert_eq!(event(&mut s, w), (49, 190, 141, 100));
}

#[test]
fn v4_fast_increase_at_the_cap() {
    let (mut s, w) = at(150, 70, 100, 1500, 100, 100, 130);
    assert_eq!(event(&mut s, w), (75, 100, 25, 100));
}

#[test]
fn v5_fast_increase_just_entered() {
    let (mut s, w) = at(100, 60, 100, 20, 100, 100, 130);
    assert_eq!(event(&mut s, w), (74, 96, 22, 98));
}

#[test]
fn v6_fast_increase_alpha_8() {
    let (mut s, w) = at(120, 60, 100, 160, 100, 100, 130);
    assert_eq!(event(&mut s, w), (88, 132, 44, 116));
}

#[test]
fn v7_num_ms_lengthens_the_epoch() {
    let (mut s, w) = at(122, 81, 124, 43, 124, 100, 150);
    s.default_num_ms = 4000;
    assert_eq!(event(&mut s, w), (79, 116, 37, 120));
    assert_eq!(s.n, 32, "max(20, 8000/250)");
    // num_ms in milliseconds becomes ticks of the configured resolution.
    let cfg = SiadConfig { num_ms: 4000, ..SiadConfig::default() };
    assert_eq!(Siad::new(cfg).default_num_ms, 4000);
}

#[test]
fn v8_no_increase_since_recovery_keeps_cwnd() {
    let (mut s, w) = at(122, 81, 124, 43, 124, 100, 150);
    s.increase_performed = false;
    assert_eq!(event(&mut s, w), (80, 120, 40, 122));
}

#[test]
fn monotone_guard_resets_at_the_fourth_rising_minimum() {
    let mut s = siad(Variant::Siad);
    for (d, p) in [(100, [100, 0, 0]), (101, [100, 101, 0]), (102, [100, 101, 102])] {
        s.min_delay = d;
        s.monotone_min_guard();
        assert_eq!((s.min_delay, s.prev_min_delay), (d, p));
    }
    s.min_delay = 103;
    s.monotone_min_guard();
    assert_eq!((s.min_delay, s.prev_min_delay), (100, [100, 0, 0]));
    s.min_delay = 104;
    s.monotone_min_guard();
    assert_eq!(s.prev_min_delay, [100, 104, 0]);
    // A smaller minimum clears the history.
    s.min_delay = 99;
    s.monotone_min_guard();
    assert_eq!(s.prev_min_delay, [0, 0, 0]);
}

/// State right after V1's recovery (cwnd grown to 82, then 83).
fn after_v1() -> (Siad, Window) {
    let (mut s, _) = at(82, 79, 116, 37, 120, 100, 0);
    s.recovery_complete();
    s.prev_delay = UNSET;
    s.curr_min_delay = 121;
    (s, Window { cwnd: 82, ssthresh: 79 })
}

#[test]
fn a1_additional_decrease() {
    let (mut s, mut w) = after_v1();
    // The samples arrive while cwnd is within one RTT of growth (≤ ssthresh + α + 1 = 81).
    for d in [121, 120] {
        s.track_delay(d, &Window { cwnd: 80, ssthresh: 79 });
    }
    assert_eq!((s.curr_delay, s.min_delay, s.min_delay_seen), (120, 100, false));
    assert!(!s.additional_decrease_due(&w), "82 is not above 79 + 1 + 2");
    w.cwnd = 83;
    assert!(s.additional_decrease_due(&w));
    s.cong_avoid(&mut w, None, MSS, MSS, true);
    assert_eq!(w, Window { cwnd: 61, ssthresh: 60 });
    assert_eq!((s.dec_cnt, s.min_delay_seen, s.increase), (1, false, 57));
}

#[test]
fn additional_decreases_stop_at_n_minus_one_and_never_go_below_min_cwnd() {
    let (mut s, mut w) = after_v1();
    s.curr_delay = 200;
    let mut cuts = 0;
    for _ in 0..10_000 {
        w.cwnd = w.ssthresh + s.alpha_int() + 3;
        if !s.additional_decrease_due(&w) {
            break;
        }
        s.additional_decrease(&mut w);
        cuts += 1;
        assert!(w.cwnd >= MIN_CWND, "cwnd {}", w.cwnd);
    }
    assert!((1..=19).contains(&cuts), "{cuts} Additional Decreases (at most N − 1 = 19)");
    // The last allowed step must not divide by zero (§11 f): force dec_cnt = N − 2.
    let (mut s, mut w) = after_v1();
    s.curr_delay = 120;
    s.dec_cnt = 18;
    w.cwnd = 83;
    s.additional_decrease(&mut w);
    assert_eq!(s.dec_cnt, 19);
    assert!(!s.additional_decrease_due(&Window { cwnd: 1000, ssthresh: w.ssthresh }));
}

fn inc_state(cwnd: u64, ssthresh: u64, incthresh: u64, increase: u64, cnt: u64) -> (Siad, Window) {
    let mut s = siad(Variant::Siad);
    s.incthresh = incthresh;
    s.increase = increase;
    s.cwnd_cnt = cnt;
    (s, Window { cwnd, ssthresh })
}

#[test]
fn p1_linear_increment_step() {
    let (mut s, mut w) = inc_state(79, 79, 116, 37, 41);
    s.siad_increase(&mut w, 1448, 1448, true);
    assert_eq!((w.cwnd, s.cwnd_cnt, s.increase), (80, 0, 37));
}

#[test]
fn p2_acked_packets_round_up() {
    for (bytes, want) in [(2896, 2), (2897, 3), (0, 1)] {
        let (mut s, mut w) = inc_state(100, 50, 200, 20, 0);
        s.siad_increase(&mut w, bytes, 1448, true);
        assert_eq!(s.cwnd_cnt, want, "{bytes} bytes");
    }
}

#[test]
fn p3_entering_fast_increase_then_doubling_alpha() {
    let (mut s, mut w) = inc_state(115, 79, 116, 37, 200);
    s.siad_increase(&mut w, 1448, 1448, true);
    assert_eq!((w.cwnd, s.increase, s.cwnd_cnt), (116, 20, 15));
    for (cwnd, increase) in [(117, 40), (118, 60)] {
        s.cwnd_cnt = 200;
        s.siad_increase(&mut w, 1448, 1448, true);
        assert_eq!((w.cwnd, s.increase), (cwnd, increase));
    }
}

#[test]
fn p4_slow_start_sets_alpha_to_cwnd() {
    let (mut s, mut w) = inc_state(10, INF, 10, 200, 0);
    s.min_delay_seen = false;
    s.cong_avoid(&mut w, Some(100), 1448, 1448, true);
    assert_eq!((w.cwnd, s.increase, s.min_delay_seen), (11, 220, true));
}

#[test]
fn p5_p6_leaving_slow_start() {
    let (mut s, mut w) = inc_state(64, 65, 100, 64 * 20, 0);
    s.siad_increase(&mut w, 1448, 1448, true);
    assert_eq!((w.cwnd, s.increase), (65, 35), "rule (a): Linear Increment");
    let (mut s, mut w) = inc_state(64, 65, 60, 64 * 20, 0);
    s.siad_increase(&mut w, 1448, 1448, true);
    assert_eq!((w.cwnd, s.increase), (65, 20), "rule (b): Fast Increase from alpha 1");
}

#[test]
fn p7_p8_min_delay_raised_only_after_one_rtt_of_growth() {
    for (cwnd, min, seen) in [(82, 105, true), (81, 100, false)] {
        let mut s = siad(Variant::Siad);
        s.increase = 37;
        s.min_delay = 100;
        s.curr_min_delay = 105;
        s.min_delay_seen = false;
        s.track_delay(105, &Window { cwnd, ssthresh: 79 });
        assert_eq!((s.min_delay, s.curr_min_delay, s.min_delay_seen), (min, 105, seen), "cwnd {cwnd}");
    }
}

fn path() -> PathInfo {
    let mut p = crate::newreno::tests::path(0);
    p.mss = MSS as u32;
    p
}

fn cc_state(cwnd: u64, ssthresh: u64) -> CcState {
    CcState {
        cwnd: cwnd * MSS,
        ssthresh: if ssthresh == INF { u64::MAX } else { ssthresh * MSS },
        pacing_rate: None,
    }
}

#[test]
fn u1_undo_restores_the_target() {
    let (mut s, _) = at(122, 81, 116, 37, 120, 100, 150);
    s.mss = MSS;
    s.min_delay_seen = false;
    assert_eq!(s.undo_cwnd(&cc_state(79, 79), 122 * MSS), 116 * MSS);
    assert_eq!((s.incthresh, s.min_delay_seen), (120, true));
}

#[test]
fn init_starts_like_slow_start_from_the_initial_window() {
    let mut s = siad(Variant::Siad);
    let mut st = cc_state(4, INF);
    s.init(&mut st, &path());
    assert_eq!((s.increase, s.incthresh, s.prev_max_cwnd, s.n), (80, 4, 4, 20));
    assert_eq!((s.min_delay, s.prev_delay, s.curr_delay, s.min_delay_seen), (UNSET, UNSET, 0, true));
}

/// The delay is the TS-echo difference at 1 ms: the same 100.4 ms RTT reads 100 or 101 ticks
/// depending on where the clock ticks fall (spec §1, L2427).
#[test]
fn delays_have_the_timestamp_clock_granularity() {
    let s = siad(Variant::Siad);
    let mut a = crate::newreno::tests::ack(1);
    a.rtt = Some(100_400_000);
    let mut p = path();
    p.now = 1_000_300_000;
    assert_eq!(s.delay_sample(&p, &a), Some(101));
    p.now = 1_000_700_000;
    assert_eq!(s.delay_sample(&p, &a), Some(100));
    a.rtt = None;
    p.srtt = Some(99_900_000);
    assert_eq!(s.delay_sample(&p, &a), Some(99), "SRTT without a sample");
    // Without timestamps a sequence-number sample is no TS echo: the module reads SRTT.
    a.rtt = Some(100_400_000);
    p.timestamps = false;
    assert_eq!(s.delay_sample(&p, &a), Some(99), "SRTT without timestamps");
}

/// With a timestamp echo the module's `now − TSecr` is the delay, not the newest segment's RTT:
/// a delayed ACK echoes the first of its two segments (RFC 7323 §4.3), 1.2 ms earlier at
/// 10 Mbit/s, so it reads one tick more here (L3115).
#[test]
fn the_delay_is_now_minus_tsecr_when_the_ack_echoes_one() {
    let s = siad(Variant::Siad);
    let mut a = crate::newreno::tests::ack(2);
    a.rtt = Some(100_400_000);
    a.ts_echo = Some(102_000_000);
    let mut p = path();
    p.now = 1_000_300_000;
    assert_eq!(s.delay_sample(&p, &a), Some(102));
    p.timestamps = false;
    p.srtt = Some(99_900_000);
    assert_eq!(s.delay_sample(&p, &a), Some(99), "no timestamps: SRTT");
}

fn ack_of(segs: u64, inflight_segs: u64) -> AckSample {
    let mut a = crate::newreno::tests::ack(segs as u32);
    a.acked = segs * MSS;
    a.prior_inflight = inflight_segs * MSS;
    a
}

#[test]
fn no_growth_in_recovery_cwr_on_dupacks_or_when_application_limited() {
    for (state, acked, inflight) in
        [(CaState::Recovery, 1, 100), (CaState::Cwr, 1, 100), (CaState::Open, 0, 100), (CaState::Open, 1, 20)]
    {
        let mut s = siad(Variant::Siad);
        let mut st = cc_state(30, INF);
        let mut p = path();
        p.state = state;
        for _ in 0..50 {
            s.on_ack(&mut st, &p, &ack_of(acked, inflight));
        }
        assert_eq!(st.cwnd, 30 * MSS, "{state:?} acked {acked} inflight {inflight}");
    }
}

#[test]
fn slow_start_doubles_per_rtt_and_delayed_acks_count_packets() {
    for per_ack in [1, 2] {
        let mut s = siad(Variant::Siad);
        let mut st = cc_state(10, INF);
        s.init(&mut st, &path());
        for _ in 0..10 / per_ack {
            let a = ack_of(per_ack, st.cwnd / MSS);
            s.on_ack(&mut st, &path(), &a);
        }
        assert_eq!(st.cwnd, 20 * MSS, "{per_ack} packets per ACK");
    }
}

/// Bytes of ACKs that do not reach `cong_avoid` count at the next one (`ack − prior_snd_una`),
/// and a finished recovery restarts the count (`prior_snd_una = snd_una`).
#[test]
fn bytes_acked_spans_acks_skipped_by_the_stack() {
    let mut s = siad(Variant::Siad);
    s.increase = s.n; // alpha 1: one packet per cwnd acked, so cwnd_cnt shows the credit
    let mut st = cc_state(20, 10);
    let mut p = path();
    p.state = CaState::Recovery;
    s.on_ack(&mut st, &p, &ack_of(3, 20));
    assert_eq!(s.unreported_acked, 3 * MSS);
    s.on_episode_end(&mut st, &p, Cause::Loss);
    assert_eq!(s.unreported_acked, 0);
    p.state = CaState::Open;
    s.on_ack(&mut st, &p, &ack_of(3, 20));
    assert_eq!(s.cwnd_cnt, 3);
}

fn ev(cause: Cause, open: Option<Cause>) -> CongestionEvent {
    CongestionEvent { cause, open_episode: open, flight_size: 0, in_slow_start: false }
}

#[test]
fn loss_and_ecn_react_alike_and_recovery_end_arms_additional_decrease() {
    for cause in [Cause::Loss, Cause::Ecn] {
        let (mut s, _) = at(122, 81, 124, 43, 124, 100, 150);
        let mut st = cc_state(122, 81);
        assert_eq!(s.on_congestion(&mut st, &path(), &ev(cause, None)), Reaction::Prr { ssthresh: 79 * MSS });
        s.on_episode_end(&mut st, &path(), cause);
        assert_eq!((s.min_delay_seen, s.increase_performed, s.dec_cnt), (false, false, 0));
        assert_eq!(s.curr_min_delay, UNSET);
    }
    // A loss inside the ECN episode starts no new reduction (3.5.7 tcp_enter_recovery in CWR).
    let (mut s, _) = at(122, 81, 124, 43, 124, 100, 150);
    let mut st = cc_state(100, 79);
    let r = s.on_congestion(&mut st, &path(), &ev(Cause::Loss, Some(Cause::Ecn)));
    assert_eq!(r, Reaction::Prr { ssthresh: 79 * MSS });
    assert_eq!(s.incthresh, 124, "state untouched");
}

/// §8.3: an RTO runs the event once; repeated back-offs keep ssthresh; the Loss state ends
/// without COMPLETE_CWR, so slow start's `min_delay_seen = 1` carries over.
#[test]
fn rto_reduces_once_slow_starts_and_does_not_arm_additional_decrease() {
    let (mut s, _) = at(122, 81, 124, 43, 124, 100, 150);
    s.min_delay_seen = false;
    let mut st = cc_state(122, 81);
    let r = s.on_congestion(&mut st, &path(), &ev(Cause::Rto { backoffs: 0 }, None));
    assert_eq!(r, Reaction::Prr { ssthresh: 79 * MSS });
    st = cc_state(1, 79);
    let r = s.on_congestion(&mut st, &path(), &ev(Cause::Rto { backoffs: 2 }, None));
    assert_eq!(r, Reaction::Prr { ssthresh: 79 * MSS });
    assert_eq!(s.incthresh, 116, "a back-off does not run the event again");
    let mut p = path();
    p.state = CaState::Loss;
    s.on_ack(&mut st, &p, &ack_of(1, 1));
    assert_eq!(st.cwnd, 2 * MSS);
    assert!(s.min_delay_seen);
    s.on_episode_end(&mut st, &p, Cause::Rto { backoffs: 0 });
    assert!(s.min_delay_seen, "no COMPLETE_CWR after Loss");
}

#[test]
fn ssthresh_never_below_min_cwnd() {
    for cwnd in 1..12 {
        for variant in Variant::ALL {
            let mut s = siad(variant);
            s.min_delay = 10;
            s.curr_delay = 1000;
            s.increase_performed = true;
            let ssth = s.variant_ssthresh(&Window { cwnd, ssthresh: 5 });
            assert!(ssth >= 1, "{variant:?} cwnd {cwnd}");
            if !matches!(variant, Variant::SiOnly | Variant::SiTrend | Variant::FixedDecrease) {
                assert!(ssth >= MIN_CWND, "{variant:?} cwnd {cwnd}: {ssth}");
            }
        }
    }
}

#[test]
fn socket_option_sets_and_clears_num_rtt() {
    let (mut s, mut w) = inc_state(79, 79, 116, 37, 0);
    s.set_num_rtt(40);
    s.siad_increase(&mut w, 1448, 1448, true);
    assert_eq!(s.n, 40, "on the next increasing ACK");
    s.set_num_rtt(0);
    s.variant_ssthresh(&w);
    assert_eq!(s.n, 20, "cleared: defaults at the next event");
}

// ---- variants ---------------------------------------------------------------------------

#[test]
fn si_only_halves_and_spreads_the_halving_over_n() {
    let mut s = siad(Variant::SiOnly);
    s.min_delay = 100;
    s.curr_delay = 150;
    assert_eq!(event(&mut s, Window { cwnd: 100, ssthresh: 60 }), (50, 100, 50, 10));
    // Stock AI: w = min(cwnd, cwnd·N/increase) = 40; Linux 3.5.7 tcp_cong_avoid_ai adds one
    // packet on the ACK after the counter reached w, i.e. every w + 1 ACKs.
    let mut w = Window { cwnd: 100, ssthresh: 50 };
    for (acks, cwnd) in [(40, 100), (1, 101), (40, 101), (1, 102)] {
        for _ in 0..acks {
            s.stock_increase(&mut w);
        }
        assert_eq!(w.cwnd, cwnd);
    }
}

#[test]
fn fixed_increase_grows_alpha_per_rtt_and_halves() {
    let mut s =
        Siad::new(SiadConfig { variant: Variant::FixedIncrease, fixed_alpha: 2, ..Default::default() });
    assert_eq!(s.variant_ssthresh(&Window { cwnd: 100, ssthresh: 60 }), 50);
    let mut w = Window { cwnd: 100, ssthresh: 50 };
    for _ in 0..102 {
        s.stock_increase(&mut w);
    }
    assert_eq!(w.cwnd, 102, "w = cwnd/2: two packets per window of ACKs");
}

#[test]
fn si_trend_follows_the_change_of_the_maximum() {
    let mut s = siad(Variant::SiTrend);
    s.prev_max_cwnd = 90;
    assert_eq!(event(&mut s, Window { cwnd: 100, ssthresh: 60 }), (50, 110, 60, 100));
    // As printed, the trend compares ssthresh with the old maximum: alpha pinned to 1.
    let mut s =
        Siad::new(SiadConfig { variant: Variant::SiTrend, literal_trend: true, ..Default::default() });
    s.prev_max_cwnd = 90;
    assert_eq!(event(&mut s, Window { cwnd: 100, ssthresh: 60 }), (50, 50, 20, 100));
}

#[test]
fn si_trend_fast_increase_halves_the_corrected_maximum() {
    let mut s = siad(Variant::SiTrendFastIncrease);
    s.incthresh = 124;
    s.increase = 43;
    s.prev_max_cwnd = 124;
    s.increase_performed = true;
    s.min_delay = 100;
    s.curr_delay = 150;
    assert_eq!(event(&mut s, Window { cwnd: 122, ssthresh: 81 }), (60, 116, 56, 120));
    // No delay logic: samples are not kept, no Additional Decrease.
    s.track_delay(5, &Window { cwnd: 10, ssthresh: 5 });
    let mut w = Window { cwnd: 70, ssthresh: 60 };
    s.recovery_complete();
    s.cong_avoid(&mut w, Some(300), MSS, MSS, true);
    assert_eq!(s.dec_cnt, 0);
}

#[test]
fn ad_only_uses_the_delay_ratio_without_offset() {
    let mut s = siad(Variant::AdOnly);
    assert_eq!(s.prev_delay, 0, "first curr_delay is 0");
    s.min_delay = 100;
    s.curr_delay = 150;
    assert_eq!(s.variant_ssthresh(&Window { cwnd: 120, ssthresh: 60 }), 80);
    assert_eq!(s.variant_ssthresh(&Window { cwnd: 120, ssthresh: 120 }), 40, "halve first in slow start");
    s.curr_delay = 0;
    assert_eq!(s.variant_ssthresh(&Window { cwnd: 120, ssthresh: 60 }), 60, "no info: halve");
}

#[test]
fn fixed_decrease_subtracts_a_constant() {
    let mut s = siad(Variant::FixedDecrease);
    assert_eq!(s.variant_ssthresh(&Window { cwnd: 100, ssthresh: 60 }), 58);
    assert_eq!(s.variant_ssthresh(&Window { cwnd: 44, ssthresh: 20 }), 2);
    assert_eq!(s.variant_ssthresh(&Window { cwnd: 100, ssthresh: INF }), 50);
    let mut s =
        Siad::new(SiadConfig { variant: Variant::FixedDecrease, fixed_decrease: 10, ..Default::default() });
    assert_eq!(s.variant_ssthresh(&Window { cwnd: 100, ssthresh: 60 }), 90);
}

#[test]
fn siad_only_targets_cwnd_max_and_never_raises_min_delay() {
    let mut s = siad(Variant::SiadOnly);
    s.increase = 43;
    s.min_delay = 100;
    s.curr_delay = 150;
    // V1's window: cwnd_max 120 (−α), ssthresh 79, target cwnd_max itself (no trend).
    assert_eq!(event(&mut s, Window { cwnd: 122, ssthresh: 81 }), (79, 120, 41, 10));
    s.curr_min_delay = 120;
    s.track_delay(110, &Window { cwnd: 200, ssthresh: 80 });
    assert_eq!(s.min_delay, 100, "only lowered");
}

#[test]
fn siad_trend_adds_the_trend_to_siad_only() {
    let mut s = siad(Variant::SiadTrend);
    s.increase = 43;
    s.prev_max_cwnd = 124;
    s.min_delay = 100;
    s.curr_delay = 150;
    assert_eq!(event(&mut s, Window { cwnd: 122, ssthresh: 81 }), (79, 116, 37, 120));
}

#[test]
fn siad_add_decrease_has_no_trend_and_no_fast_increase() {
    let (mut s, w) = at(122, 81, 124, 43, 90, 100, 150);
    s.cfg.variant = Variant::SiadAddDecrease;
    assert_eq!(event(&mut s, w), (79, 120, 41, 120));
    // Above the target alpha stays: no rule (b)/(c).
    let mut w = Window { cwnd: 120, ssthresh: 79 };
    s.cwnd_cnt = 1000;
    s.siad_increase(&mut w, 1448, 1448, false);
    assert_eq!((w.cwnd, s.increase), (121, 41));
    // Additional Decrease is armed as in full SIAD.
    s.recovery_complete();
    s.min_delay = 100;
    s.curr_delay = 120;
    assert!(s.additional_decrease_due(&Window { cwnd: 84, ssthresh: 79 }));
}

#[test]
fn only_the_full_variants_run_additional_decrease() {
    for v in Variant::ALL {
        let (mut s, _) = after_v1();
        s.cfg.variant = v;
        s.curr_delay = 120;
        let due = s.additional_decrease_due(&Window { cwnd: 90, ssthresh: 79 });
        assert_eq!(due, matches!(v, Variant::Siad | Variant::SiadAddDecrease), "{v:?}");
    }
}

// ---- parameters -------------------------------------------------------------------------

#[test]
fn params_are_read_and_errors_name_the_key() {
    let mut p = Params::new();
    p.insert("num_rtt", ParamValue::Int(40));
    p.insert("num_ms", ParamValue::Int(4000));
    p.insert("variant", ParamValue::Str("SIAD_trend".into()));
    p.insert("literal_trend", ParamValue::Bool(true));
    p.insert("fixed_alpha", ParamValue::Int(3));
    p.insert("fixed_decrease", ParamValue::Int(30));
    p.insert("delay_resolution", ParamValue::Str("4ms".into()));
    let cfg = SiadConfig::from_params(&p).unwrap();
    p.reject_unknown("siad").unwrap();
    let want = SiadConfig {
        num_rtt: 40,
        num_ms: 4000,
        variant: Variant::SiadTrend,
        literal_trend: true,
        fixed_alpha: 3,
        fixed_decrease: 30,
        delay_resolution: 4_000_000,
    };
    assert_eq!(cfg, want);
    assert_eq!(cfg.num_ms_ticks(), 1000);
    assert_eq!(SiadConfig::from_params(&Params::new()).unwrap(), SiadConfig::default());
    for (key, bad) in [
        ("num_rtt", ParamValue::Int(1)),
        ("num_ms", ParamValue::Int(-5)),
        ("variant", ParamValue::Str("si_only".into())),
        ("literal_trend", ParamValue::Int(1)),
        ("fixed_alpha", ParamValue::Int(0)),
        ("fixed_decrease", ParamValue::Float(4.5)),
        ("delay_resolution", ParamValue::Str("0ms".into())),
    ] {
        let mut p = Params::new();
        p.insert(key, bad);
        assert_eq!(crate::build_controller("siad", &p).err().unwrap().key, key);
    }
    for v in Variant::ALL {
        assert_eq!(Variant::from_name(v.name()), Some(v));
    }
    assert_eq!(crate::build_controller("siad", &Params::new()).unwrap().name(), "siad");
}
