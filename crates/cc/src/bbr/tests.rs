//! Hand-computed cases for BBRv1's formulas and state machine.

use super::*;
use crate::{ParamValue, RateSample};

const M: u64 = 1448;
/// 20 Mb/s in bytes per second.
const BW: f64 = 2.5e6;
const RTT: Nanos = 100 * MS;
const HIGH: f64 = mode::HIGH_GAIN;

/// A connection driven by hand: every `ack` delivers `bytes` at the given rate sample.
struct Conn {
    bbr: Bbr,
    st: CcState,
    path: PathInfo,
}

impl Conn {
    fn new(cfg: BbrConfig) -> Self {
        let path = PathInfo {
            now: 0,
            mss: M as u32,
            srtt: Some(RTT),
            rttvar: None,
            min_rtt: Some(RTT),
            inflight: 0,
            delivered: 0,
            state: CaState::Open,
            is_cwnd_limited: true,
            rwnd: u64::MAX,
            initial_window: 10 * M,
            timestamps: true,
        };
        let mut c = Self {
            bbr: Bbr::new(cfg),
            st: CcState { cwnd: 10 * M, ssthresh: u64::MAX, pacing_rate: None },
            path,
        };
        c.bbr.init(&mut c.st, &c.path);
        c
    }

    /// One ACK at `now` delivering `bytes`, whose reference packet was sent when `prior`
    /// bytes had been delivered; `inflight` is the pipe after the ACK.
    fn ack(&mut self, now: Nanos, bytes: u64, prior: u64, rate: f64, rtt: Nanos, inflight: u64) {
        let prior_inflight = self.path.inflight;
        self.path.now = now;
        self.path.delivered += bytes;
        self.path.inflight = inflight;
        let rs = RateSample {
            delivered: bytes,
            interval: RTT,
            delivery_rate: rate,
            prior_delivered: prior,
            ..Default::default()
        };
        let ack = AckSample {
            acked: bytes,
            sacked: 0,
            segments_acked: bytes.div_ceil(M) as u32,
            rtt: Some(rtt),
            owd: None,
            ts_echo: None,
            ece: false,
            ce_delta: 0,
            ce_bytes: 0,
            rate: Some(rs),
            newly_lost: 0,
            round_start: false,
            round_count: 0,
            prior_inflight,
            is_dupack: false,
        };
        self.bbr.on_ack(&mut self.st, &self.path, &ack);
    }

    /// One whole round at `rate`: an ACK whose reference was sent at the round's start.
    fn round(&mut self, now: Nanos, rate: f64, inflight: u64) {
        let prior = self.path.delivered;
        self.ack(now, 10 * M, prior, rate, RTT, inflight);
    }
}

fn cfg(cycle: usize) -> BbrConfig {
    BbrConfig { cycle_start: CycleStart::Phase(cycle), ..BbrConfig::default() }
}

/// Startup at a steady 20 Mb/s: round 1 sets full_bw, rounds 2–4 grow < 25 %, so the pipe is
/// full on the fourth round and Drain starts; Drain ends once in flight is one BDP.
fn fill_pipe(c: &mut Conn) -> Nanos {
    let mut now = 0;
    for _ in 0..3 {
        now += RTT;
        c.round(now, BW, 1_000 * M);
        assert_eq!(c.bbr.mode(), Mode::Startup);
    }
    now += RTT;
    c.round(now, BW, 1_000 * M);
    assert_eq!(c.bbr.mode(), Mode::Drain);
    now
}

#[test]
fn initial_pacing_is_high_gain_times_iw_over_srtt() {
    let c = Conn::new(BbrConfig::default());
    // 2.885 · 14480 B / 0.1 s · 0.99 = 413 566.9 B/s
    let rate = c.st.pacing_rate.unwrap();
    assert!((rate - 2.885 * 144_800.0 * 0.99).abs() < 1e-6, "{rate}");
}

#[test]
fn startup_grows_cwnd_by_delivered_and_paces_at_high_gain() {
    let mut c = Conn::new(BbrConfig::default());
    c.ack(RTT, 2 * M, 0, BW, RTT, 8 * M);
    assert_eq!(c.st.cwnd, 12 * M);
    assert!((c.st.pacing_rate.unwrap() - 2.885 * BW * 0.99).abs() < 1e-6);
    // A lower rate never lowers Startup's pacing rate (bbr_set_pacing_rate).
    c.ack(RTT + MS, 2 * M, 0, BW / 2.0, RTT, 8 * M);
    assert!((c.st.pacing_rate.unwrap() - 2.885 * BW * 0.99).abs() < 1e-6);
}

#[test]
fn full_bandwidth_after_three_rounds_below_25_percent_growth() {
    let mut c = Conn::new(cfg(2));
    let mut now = 0;
    // Growing 30 % per round keeps Startup going.
    for i in 0..6 {
        now += RTT;
        c.round(now, BW * 1.3f64.powi(i), 1_000 * M);
    }
    assert_eq!(c.bbr.mode(), Mode::Startup);
    // A plateau 24 % above the last reset is not growth: three such rounds fill the pipe.
    let bw = BW * 1.3f64.powi(5) * 1.24;
    for _ in 0..2 {
        now += RTT;
        c.round(now, bw, 1_000 * M);
        assert_eq!(c.bbr.mode(), Mode::Startup);
    }
    now += RTT;
    c.round(now, bw, 1_000 * M);
    assert_eq!(c.bbr.mode(), Mode::Drain);
    let (pacing, _) = gains(Mode::Drain, 0, HIGH, 2.0);
    assert!((c.st.pacing_rate.unwrap() - pacing * bw * 0.99).abs() < 1e-3);
}

#[test]
fn drain_ends_at_one_bdp_and_probe_bw_starts_at_the_chosen_phase() {
    let mut c = Conn::new(cfg(3));
    let now = fill_pipe(&mut c);
    // ssthresh = inflight(bw, 1) at Startup's pacing rate (2.885 · 2.5 MB/s · 0.99 = 6.97 KB
    // per ms: a 4-segment quantum): BDP 250 000 B = 173 segments, + 3·4 = 185, even 186.
    assert_eq!(c.st.ssthresh, 186 * M);
    // At Drain's pacing rate the quantum is 2 segments: inflight(bw, 1) = 173 + 6 → 180.
    c.ack(now + MS, M, 0, BW, RTT, 181 * M);
    assert_eq!(c.bbr.mode(), Mode::Drain);
    c.ack(now + 2 * MS, M, 0, BW, RTT, 180 * M);
    assert_eq!((c.bbr.mode(), c.bbr.cycle_idx()), (Mode::ProbeBw, 3));
}

#[test]
fn probe_bw_cwnd_is_two_bdp_plus_quantization_and_pacing_has_the_margin() {
    // Without the ACK-aggregation allowance (Linux before 5.1):
    // 2 · 250 000 B = 345.3 → 346 segments, + 3·2 = 352 (even).
    let mut old = Conn::new(BbrConfig { extra_acked: false, ..cfg(2) });
    let now = fill_pipe(&mut old);
    old.ack(now + MS, M, 0, BW, RTT, 100 * M);
    old.st.cwnd = 1_000 * M;
    old.ack(now + 2 * MS, M, 0, BW, RTT, 100 * M);
    assert_eq!(old.st.cwnd, 352 * M);
    assert_eq!(old.bbr.extra_acked(), 0);
    // By default fill_pipe's ACKs, each delivering 10 segments at once, are aggregation:
    // each restarts the epoch (100 ms apart they are behind the estimate) and its 10
    // segments are the excess, so the target is 346 + 10 segments, + 3·2 = 362 (even).
    let mut c = Conn::new(cfg(2));
    let now = fill_pipe(&mut c);
    c.ack(now + MS, M, 0, BW, RTT, 100 * M);
    assert_eq!((c.bbr.mode(), c.bbr.cycle_idx()), (Mode::ProbeBw, 2));
    c.st.cwnd = 1_000 * M;
    c.ack(now + 2 * MS, M, 0, BW, RTT, 100 * M);
    assert_eq!(c.bbr.extra_acked(), 10 * M);
    assert_eq!(c.st.cwnd, 362 * M);
    assert!((c.st.pacing_rate.unwrap() - BW * 0.99).abs() < 1e-6);
    // Below the target the window grows by what is delivered.
    c.st.cwnd = 300 * M;
    c.ack(now + 3 * MS, 3 * M, 0, BW, RTT, 100 * M);
    assert_eq!(c.st.cwnd, 303 * M);
}

#[test]
fn gain_cycle_phases_last_one_min_rtt_and_probe_waits_for_inflight() {
    let mut c = Conn::new(cfg(7));
    let mut now = fill_pipe(&mut c) + MS;
    c.ack(now, M, 0, BW, RTT, 100 * M);
    assert_eq!(c.bbr.cycle_idx(), 7);
    // Not a full min_rtt yet.
    c.ack(now + RTT, M, 0, BW, RTT, 100 * M);
    assert_eq!(c.bbr.cycle_idx(), 7);
    now += RTT + 1;
    c.ack(now, M, 0, BW, RTT, 100 * M);
    assert_eq!(c.bbr.cycle_idx(), 0);
    assert!((c.st.pacing_rate.unwrap() - 1.25 * BW * 0.99).abs() < 1e-6);
    // 1.25 phase: after one min_rtt it still waits until prior in flight reaches
    // inflight(bw, 1.25) = 215.8 → 216 + 3·2 = 222 (even) + 2 (phase 0) = 224 segments.
    now += RTT + 1;
    c.ack(now, M, 0, BW, RTT, 223 * M);
    assert_eq!(c.bbr.cycle_idx(), 0);
    c.ack(now + 1, M, 0, BW, RTT, 100 * M); // prior in flight was 223: not yet
    assert_eq!(c.bbr.cycle_idx(), 0);
    c.path.inflight = 224 * M;
    c.ack(now + 2, M, 0, BW, RTT, 200 * M);
    assert_eq!(c.bbr.cycle_idx(), 1);
    // 0.75 phase ends early once prior in flight is down to inflight(bw, 1) = 180 segments.
    c.ack(now + 3, M, 0, BW, RTT, 180 * M);
    assert_eq!(c.bbr.cycle_idx(), 1);
    c.ack(now + 4, M, 0, BW, RTT, 180 * M);
    assert_eq!(c.bbr.cycle_idx(), 2);
}

#[test]
fn probe_rtt_after_ten_seconds_without_a_lower_rtt_holds_four_segments() {
    let mut c = Conn::new(cfg(2));
    let now = fill_pipe(&mut c);
    c.ack(now + MS, M, 0, BW, RTT, 100 * M);
    let cwnd = 352 * M;
    c.st.cwnd = cwnd;
    // The min RTT was stamped at init (t = 0); 10 s later a sample equal to it does not refresh.
    let t = 10 * NANOS_PER_SEC + 1;
    c.ack(t, M, 0, BW, RTT + 5 * MS, 300 * M);
    assert_eq!(c.bbr.mode(), Mode::ProbeRtt);
    assert_eq!(c.st.cwnd, 4 * M);
    assert_eq!(c.bbr.min_rtt(), Some(RTT + 5 * MS)); // the expired filter took the sample
                                                     // In flight drains to 4 segments: the 200 ms clock starts and a round is restarted.
    c.ack(t + 50 * MS, M, 0, BW, RTT, 4 * M);
    let drained = c.path.delivered;
    c.ack(t + 260 * MS, M, 0, BW, RTT, 4 * M); // 200 ms passed, but no round yet
    assert_eq!(c.bbr.mode(), Mode::ProbeRtt);
    c.ack(t + 270 * MS, M, drained, BW, RTT, 4 * M); // a round ended, 200 ms passed
    assert_eq!(c.bbr.mode(), Mode::ProbeBw);
    // The prior cwnd is restored and grows by the ACK's segment: the target is 362 segments
    // (352 plus fill_pipe's 10-segment aggregates, still in the windowed maximum).
    assert_eq!(c.st.cwnd, cwnd + M, "prior cwnd restored, then grown below the target");
    assert_eq!(c.bbr.min_rtt(), Some(RTT));
}

#[test]
fn probe_rtt_exit_returns_to_startup_when_the_pipe_was_not_full() {
    let mut c = Conn::new(cfg(2));
    let t = 10 * NANOS_PER_SEC + 1;
    c.ack(t, M, 0, BW, RTT, 50 * M);
    assert_eq!(c.bbr.mode(), Mode::ProbeRtt);
    c.ack(t + MS, M, 0, BW, RTT, 4 * M);
    let d = c.path.delivered;
    c.ack(t + 202 * MS, M, d, BW, RTT, 4 * M);
    assert_eq!(c.bbr.mode(), Mode::Startup);
}

#[test]
fn recovery_conserves_packets_for_a_round_then_restores_the_window() {
    let mut c = Conn::new(cfg(2));
    let now = fill_pipe(&mut c);
    c.ack(now + MS, M, 0, BW, RTT, 100 * M);
    c.st.cwnd = 300 * M;
    let ev = CongestionEvent {
        cause: Cause::Loss,
        open_episode: None,
        flight_size: 300 * M,
        in_slow_start: false,
    };
    assert_eq!(c.bbr.on_congestion(&mut c.st, &c.path, &ev), Reaction::SelfManaged);
    c.path.state = CaState::Recovery;
    // Entering recovery: cwnd = inflight + delivered.
    c.ack(now + 2 * MS, 2 * M, 0, BW, RTT, 250 * M);
    assert_eq!(c.st.cwnd, 252 * M);
    // Still conserving: never below inflight + delivered.
    c.ack(now + 3 * MS, M, 0, BW, RTT, 260 * M);
    assert_eq!(c.st.cwnd, 261 * M);
    // Recovery over: the window before the loss comes back.
    c.path.state = CaState::Open;
    c.ack(now + 4 * MS, M, 0, BW, RTT, 200 * M);
    assert_eq!(c.st.cwnd, 301 * M.min(352 * M));
}

#[test]
fn rto_sets_cwnd_to_inflight_plus_one_and_ecn_is_ignored() {
    let mut c = Conn::new(cfg(2));
    c.path.inflight = 30 * M;
    let ecn = CongestionEvent { cause: Cause::Ecn, open_episode: None, flight_size: 0, in_slow_start: true };
    assert_eq!(c.bbr.on_congestion(&mut c.st, &c.path, &ecn), Reaction::Ignore);
    let rto = CongestionEvent { cause: Cause::Rto { backoffs: 0 }, ..ecn };
    assert_eq!(c.bbr.on_congestion(&mut c.st, &c.path, &rto), Reaction::SelfManaged);
    assert_eq!(c.st.cwnd, 31 * M);
    c.path.inflight = 2 * M; // the timeout marked the rest lost
    c.bbr.on_packet_lost(
        &mut c.st,
        &c.path,
        &LossInfo { seq: 0, bytes: M as u32, tx_in_flight: 0, lost_since_tx: M, tx_app_limited: false },
    );
    assert_eq!(c.st.cwnd, 3 * M);
}

#[test]
fn bad_params_name_the_key() {
    for (key, value) in [
        ("cwnd_gain", ParamValue::Float(0.5)),
        ("probe_rtt_time", ParamValue::Str("20s".into())),
        ("cycle_start", ParamValue::Str("1".into())),
        ("bw_rounds", ParamValue::Int(33)),
    ] {
        let mut p = Params::new();
        p.insert(key, value);
        assert_eq!(BbrConfig::from_params(&p).err().unwrap().key, key);
    }
    let mut p = Params::new();
    p.insert("cycle_start", ParamValue::Str("5".into()));
    assert_eq!(BbrConfig::from_params(&p).unwrap().cycle_start, CycleStart::Phase(5));
}

// ----- ACK aggregation (Linux `bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`) -----

/// One segment per millisecond: the BDP at the 100 ms RTT is 100 segments, `cwnd_gain · BDP`
/// 200, and 100 ms of data (the allowance's cap) 100 segments.
const BW_A: f64 = 1_448_000.0;

/// Startup at `BW_A` until the pipe is full, then ProbeBW at phase 2. Returns the time.
fn probe_bw_at_one_segment_per_ms(c: &mut Conn) -> Nanos {
    let mut now = 0;
    for _ in 0..4 {
        now += RTT;
        c.round(now, BW_A, 1_000 * M);
    }
    assert_eq!(c.bbr.mode(), Mode::Drain);
    now += MS;
    c.ack(now, M, 0, BW_A, RTT, 50 * M);
    assert_eq!(c.bbr.mode(), Mode::ProbeBw);
    now
}

/// ACKs in aggregates: every `period` a burst of `acks` ACKs `spacing` apart, each
/// delivering `segs` segments, until `until`. Every ACK acknowledges data sent one RTT
/// (100 segments) before, so a round ends every 100 segments delivered. In flight stays at
/// 140 segments, enough for the 1.25 phase to end after its min RTT.
fn aggregates(c: &mut Conn, from: Nanos, until: Nanos, period: Nanos, acks: u64, spacing: Nanos, segs: u64) {
    let mut start = from + period;
    while start <= until {
        for k in 0..acks {
            let prior = c.path.delivered.saturating_sub(100 * M);
            c.ack(start + k * spacing, segs * M, prior, BW_A, RTT, 140 * M);
        }
        start += period;
    }
}

/// Steady ACKs: one per millisecond, one segment each, after a 20 ms silence, until
/// `until`. (The silence lets the estimate catch up with any earlier excess, so the first
/// ACK restarts the epoch: ACKs at exactly the estimated rate never would.)
fn steady(c: &mut Conn, from: Nanos, until: Nanos) {
    aggregates(c, from + 20 * MS, until, MS, 1, 0, 1);
}

/// With one ACK per segment at the estimated rate every ACK restarts the epoch (it delivered
/// no more than expected): the excess is one ACK's data, 1 segment, once the 10-segment
/// Startup ACKs have aged out of the windowed maximum (10 rounds, 1 s here).
#[test]
fn steady_acks_leave_the_allowance_at_one_acks_data() {
    let mut c = Conn::new(cfg(2));
    let now = probe_bw_at_one_segment_per_ms(&mut c);
    assert_eq!(c.bbr.extra_acked(), 10 * M, "Startup's ACKs delivered 10 segments at once");
    steady(&mut c, now, now + 1_200 * MS);
    assert_eq!(c.bbr.aggregation.epoch().1, M, "each ACK restarted the epoch");
    assert_eq!(c.bbr.extra_acked(), M);
    assert_eq!(c.bbr.ack_aggregation_cwnd(M as u32), M);
}

/// Every 20 ms a burst of ten ACKs 0.1 ms apart, each delivering 2 segments: 20 ms of data
/// within 0.9 ms. The first ACK of a burst finds the epoch (started at the previous burst,
/// 20 ms ago, with 20 segments delivered against 20 expected) not ahead and restarts it; by
/// the burst's last ACK 20 segments arrived against floor(0.9) = 0 expected. The cwnd target
/// rises by those 20 segments over the same flow without the allowance.
#[test]
fn bursts_of_acks_raise_the_cwnd_target_by_the_excess() {
    let drive = |extra_acked: bool| {
        let mut c = Conn::new(BbrConfig { extra_acked, ..cfg(2) });
        let now = probe_bw_at_one_segment_per_ms(&mut c);
        aggregates(&mut c, now, now + 400 * MS, 20 * MS, 10, 100_000, 2);
        // Snap the window down to the target with one more ACK of the next burst.
        c.st.cwnd = 1_000 * M;
        let prior = c.path.delivered.saturating_sub(100 * M);
        c.ack(now + 420 * MS, 2 * M, prior, BW_A, RTT, 140 * M);
        c
    };
    let with = drive(true);
    let without = drive(false);
    assert_eq!(with.bbr.extra_acked(), 20 * M);
    assert_eq!(with.bbr.ack_aggregation_cwnd(M as u32), 20 * M);
    assert_eq!(without.bbr.ack_aggregation_cwnd(M as u32), 0);
    // Without: 200 + 3·2 = 206 segments (+ 2 in the 1.25 phase); with: 20 more.
    let phase0 = if without.bbr.cycle_idx() == 0 { 2 } else { 0 };
    assert_eq!(without.st.cwnd, (206 + phase0) * M);
    assert_eq!(with.bbr.cycle_idx(), without.bbr.cycle_idx());
    assert_eq!(with.st.cwnd, (226 + phase0) * M);
}

/// The windowed maximum has two slots of 5 rounds: a burst's excess outlives 5 rounds of
/// steady ACKs and is gone after 10.
#[test]
fn the_excess_expires_after_five_to_ten_rounds() {
    let mut c = Conn::new(cfg(2));
    let now = probe_bw_at_one_segment_per_ms(&mut c);
    steady(&mut c, now, now + 1_200 * MS);
    let now = now + 1_200 * MS;
    aggregates(&mut c, now, now + 20 * MS, 20 * MS, 10, 100_000, 2);
    assert_eq!(c.bbr.extra_acked(), 20 * M);
    // A silent 20 ms (the next burst's slot), then steady ACKs one by one.
    let (mut t, start_round) = (now + 40 * MS, c.bbr.rounds.count);
    let mut gone_after = None;
    while gone_after.is_none() {
        aggregates(&mut c, t, t + MS, MS, 1, 0, 1);
        t += MS;
        let rounds = c.bbr.rounds.count - start_round;
        if c.bbr.extra_acked() < 20 * M {
            assert_eq!(c.bbr.extra_acked(), M);
            gone_after = Some(rounds);
        }
        assert!(rounds <= 10, "still {} after {rounds} rounds", c.bbr.extra_acked());
    }
    let rounds = gone_after.unwrap();
    assert!((6..=10).contains(&rounds), "gone after {rounds} rounds");
}

/// One ACK acknowledging 150 segments after a 150 ms silence: the excess is 150 segments,
/// (the epoch restarts at it), but the allowance is capped at 100 ms of data, 100 segments;
/// and the excess itself never exceeds the cwnd when it is measured.
#[test]
fn the_allowance_is_capped_at_100_ms_of_data_and_the_excess_at_cwnd() {
    let mut c = Conn::new(cfg(2));
    let now = probe_bw_at_one_segment_per_ms(&mut c);
    c.st.cwnd = 1_000 * M;
    let prior = c.path.delivered;
    c.ack(now + 150 * MS, 150 * M, prior, BW_A, RTT, 140 * M);
    assert_eq!(c.bbr.extra_acked(), 150 * M);
    assert_eq!(c.bbr.ack_aggregation_cwnd(M as u32), 100 * M);
    // The window snapped down to 200 + 100 + 3·2 = 306 segments (+ 2 in the 1.25 phase).
    let phase0 = if c.bbr.cycle_idx() == 0 { 2 } else { 0 };
    assert_eq!(c.st.cwnd, (306 + phase0) * M);

    let mut c = Conn::new(cfg(2));
    let now = probe_bw_at_one_segment_per_ms(&mut c);
    c.st.cwnd = 120 * M;
    let prior = c.path.delivered;
    c.ack(now + 150 * MS, 150 * M, prior, BW_A, RTT, 140 * M);
    assert_eq!(c.bbr.extra_acked(), 120 * M, "capped by the cwnd before this ACK");
}

/// BBRv1 adds the allowance only once the pipe is full (`bbr_ack_aggregation_cwnd` tests
/// `bbr_full_bw_reached`), though it measures from the start; a restart after idle starts a
/// new epoch.
#[test]
fn v1_adds_nothing_in_startup_and_an_idle_restart_opens_a_new_epoch() {
    let mut c = Conn::new(cfg(2));
    c.round(RTT, BW_A, 1_000 * M);
    assert_eq!(c.bbr.mode(), Mode::Startup);
    assert_eq!(c.bbr.extra_acked(), 10 * M);
    assert_eq!(c.bbr.ack_aggregation_cwnd(M as u32), 0);
    assert_eq!(c.bbr.aggregation.epoch(), (RTT, 10 * M));
    c.path.now = 7 * RTT;
    c.bbr.on_idle_restart(&mut c.st, &c.path, 5 * RTT);
    assert_eq!(c.bbr.aggregation.epoch(), (7 * RTT, 0));
    assert_eq!(c.bbr.extra_acked(), 10 * M, "the windowed maximum is kept");
}

#[test]
fn extra_acked_is_a_switch() {
    let mut p = Params::new();
    assert!(BbrConfig::from_params(&p).unwrap().extra_acked);
    p.insert("extra_acked", ParamValue::Bool(false));
    assert!(!BbrConfig::from_params(&p).unwrap().extra_acked);
    let mut p = Params::new();
    p.insert("extra_acked", ParamValue::Str("off".into()));
    assert_eq!(BbrConfig::from_params(&p).err().unwrap().key, "extra_acked");
}
