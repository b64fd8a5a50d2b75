//! Hand-computed cases for BBRv2's bounds, probing cycle and modes.

use super::*;
use crate::bbr_engine::testkit::{
    lost_packets_while_probing_set_inflight_hi_at_the_crossing,
    rto_sets_cwnd_to_inflight_plus_one_and_restores_it, to_cruise, to_probe_up, Ack, BDP, BW, M, RTT,
};
use crate::bbr_engine::{Sample, MS};
use crate::{CaState, Nanos, ParamValue, Params, NANOS_PER_SEC};

type Conn = crate::bbr_engine::testkit::Conn<Bbr2Config>;

/// Defaults with the probe wait pinned to exactly 2 s (no clock draw).
fn fixed_cfg() -> Bbr2Config {
    Bbr2Config { bw_probe_rand: 0, bw_probe_rand_rounds: 0, ..Bbr2Config::default() }
}

#[test]
fn states_cycle_startup_drain_down_cruise_refill_up_down() {
    let mut c = Conn::new(fixed_cfg());
    let now = to_cruise(&mut c);
    let now = to_probe_up(&mut c, now);
    assert!((c.st.pacing_rate.unwrap() - 1.25 * BW * 0.99).abs() < 1e-6);
    // UP ends once a min RTT has passed and in flight (before the ACK, plus the 2-packet
    // send quantum about to leave) reaches 1.25·BDP + 2 packets: ceil(215.8) + 2 = 218
    // packets, so 216 packets in flight before the ACK.
    let at = |inflight: u64| Ack { inflight: inflight * M, ..Ack::default() };
    c.ack(now + RTT / 4, at(230));
    c.ack(now + RTT / 2, at(215));
    assert_eq!(c.bbr.phase(), Phase::Up, "not before a min RTT");
    c.ack(now + RTT + MS, at(216));
    assert_eq!(c.bbr.phase(), Phase::Up, "215 + 2 < 218 packets");
    c.ack(now + RTT + 2 * MS, at(216));
    assert_eq!(c.bbr.phase(), Phase::Down);
    assert!((c.st.pacing_rate.unwrap() - 0.75 * BW * 0.99).abs() < 1e-6);
}

#[test]
fn loss_above_two_percent_while_probing_sets_inflight_hi_and_ends_up() {
    let mut c = Conn::new(fixed_cfg());
    let now = to_cruise(&mut c);
    let now = to_probe_up(&mut c, now);
    // 2 % of 200 packets is exactly 4: not above the threshold.
    let tx = 200 * M;
    c.ack(now + MS, Ack { lost: 4 * M, tx_in_flight: tx, ..Ack::default() });
    assert_eq!((c.bbr.phase(), c.bbr.inflight_bounds().1), (Phase::Up, None));
    // 5 of 200 is 2.5 %: inflight_hi = max(tx_in_flight, 0.7 · target), target =
    // min(BDP + 2 packets in UP, cwnd) = 175 packets -> max(200, 122.5) packets.
    c.ack(now + 2 * MS, Ack { lost: 5 * M, tx_in_flight: tx, ..Ack::default() });
    assert_eq!(c.bbr.inflight_bounds().1, Some(tx));
    assert_eq!(c.bbr.phase(), Phase::Down);
    // A low tx_in_flight is floored at beta times the target (BDP now, 173 packets).
    let mut c2 = Conn::new(fixed_cfg());
    let now = to_cruise(&mut c2);
    let now = to_probe_up(&mut c2, now);
    c2.ack(now + MS, Ack { lost: 5 * M, tx_in_flight: 100 * M, ..Ack::default() });
    assert_eq!(c2.bbr.inflight_bounds().1, Some((175.0 * M as f64 * 0.7) as u64));
}

#[test]
fn a_lost_packet_while_probing_sets_inflight_hi_where_the_loss_rate_crossed() {
    let c = Conn::new(Bbr2Config::default());
    let s = |tx_in_flight, lost| Sample { tx_in_flight, lost, ..Sample::default() };
    // 100 packets in flight at the send of the lost one, 2 lost including it: before it
    // 99 packets and 1 lost; the budget ceil(0.02 · 143 352) = 2 868 B is reached after a
    // prefix of (2 868 − 1 448) / 0.98 = 1 448.98 -> 1 448 B: inflight_hi = 100 packets.
    assert_eq!(c.bbr.inflight_hi_from_lost_skb(&s(100 * M, 2 * M), M), 100 * M);
    // With 3 lost the earlier losses already crossed: inflight_hi = the 99 packets before it.
    assert_eq!(c.bbr.inflight_hi_from_lost_skb(&s(100 * M, 3 * M), M), 99 * M);
}

#[test]
fn marked_lost_packets_during_a_probe_use_their_send_stamps() {
    lost_packets_while_probing_set_inflight_hi_at_the_crossing(fixed_cfg());
}

#[test]
fn a_lossy_round_outside_probing_cuts_bw_lo_and_inflight_lo_by_beta() {
    let mut c = Conn::new(fixed_cfg());
    let mut now = to_cruise(&mut c);
    let half = Ack { rate: 0.5 * BW, ..Ack::default() };
    // A clean round at half the rate: the latest round's bw is 0.5·BW, nothing is cut.
    now += RTT;
    c.round(now, half);
    assert_eq!(c.bbr.bw_lo(), None);
    now += MS;
    c.lose(5_000_000, M as u32);
    c.ack(now, Ack { newly_lost: M, ..half });
    let cwnd = c.st.cwnd;
    assert_eq!(c.bbr.bw_lo(), None, "the cut waits for the loss round to end");
    now += RTT;
    c.round(now, half);
    // bw_lo = max(bw_latest = 0.5·BW, 0.7·max_bw); inflight_lo = max(one round's delivery
    // = 10 packets, 0.7·cwnd).
    assert!((c.bbr.bw_lo().unwrap() - 0.7 * BW).abs() < 1e-6);
    let inflight_lo = (cwnd as f64 * 0.7) as u64;
    assert_eq!(c.bbr.inflight_bounds().0, Some(inflight_lo));
    assert_eq!(c.st.cwnd, inflight_lo, "cwnd is held at inflight_lo");
    assert!((c.st.pacing_rate.unwrap() - 0.7 * BW * 0.99).abs() < 1e-6, "pacing follows bw_lo");
    // After a clean round at 0.2·BW, a second lossy round cuts again, to 0.49·BW (still
    // above the 0.2·BW the last round delivered).
    let slow = Ack { rate: 0.2 * BW, ..Ack::default() };
    c.round(now + RTT, slow);
    c.ack(now + RTT + MS, Ack { newly_lost: M, ..slow });
    c.round(now + 2 * RTT, slow);
    assert!((c.bbr.bw_lo().unwrap() - 0.49 * BW).abs() < 1e-6);
    let now = now + 2 * RTT;
    // REFILL lifts both lower bounds.
    let mut t = now;
    while c.bbr.phase() != Phase::Refill {
        t += RTT;
        c.round(t, Ack::default());
    }
    assert_eq!((c.bbr.inflight_bounds().0, c.bbr.bw_lo()), (None, None));
}

#[test]
fn cruise_leaves_fifteen_percent_headroom_below_inflight_hi() {
    let mut c = Conn::new(fixed_cfg());
    let now = to_cruise(&mut c);
    let now = to_probe_up(&mut c, now);
    c.ack(now + MS, Ack { lost: 10 * M, tx_in_flight: 140 * M, ..Ack::default() });
    assert_eq!((c.bbr.inflight_bounds().1, c.bbr.phase()), (Some(140 * M), Phase::Down));
    // DOWN holds cwnd at inflight_hi; cruising needs in flight under 140 − 21 = 119 packets.
    assert!(c.st.cwnd <= 140 * M);
    // (tx_in_flight stays below inflight_hi: a safe sample above it would raise it.)
    let at = |inflight: u64| Ack { inflight: inflight * M, tx_in_flight: 100 * M, ..Ack::default() };
    c.ack(now + 2 * MS, at(120));
    c.ack(now + 3 * MS, at(119));
    assert_eq!(c.bbr.phase(), Phase::Down, "120 packets in flight before this ACK");
    c.ack(now + 4 * MS, at(119));
    assert_eq!(c.bbr.phase(), Phase::Cruise);
    // 140 − floor(0.15 · 140 packets in bytes) = 140 · 1448 − 30 408 = 172 312 B.
    assert_eq!(c.st.cwnd, 140 * M - (140.0 * M as f64 * 0.15) as u64);
}

#[test]
fn probe_rtt_every_five_seconds_at_half_the_bdp() {
    let mut c = Conn::new(Bbr2Config::default());
    let mut now = to_cruise(&mut c);
    // The last 100 ms sample refreshed probe_rtt_min at `now`. Later samples are above it and
    // rise by 1 µs per ACK, so nothing refreshes it again (equal samples would: the filter
    // takes `<=`).
    let last_min_sample = now;
    let (mut entries, mut exits) = (Vec::new(), Vec::new());
    let mut rtt = RTT + 10 * MS;
    while now < 12 * NANOS_PER_SEC {
        now += 50 * MS;
        rtt += 1_000;
        let was = c.bbr.mode();
        c.round(
            now,
            Ack { rtt, inflight: if was == Mode::ProbeRtt { 80 * M } else { BDP }, ..Ack::default() },
        );
        if c.bbr.mode() == Mode::ProbeRtt {
            // max(4 packets, ceil(0.5 · BW · min_rtt) packets): 87 packets at 100 ms; after
            // 10 s the min RTT expires and takes the ~110 ms samples.
            let half_bdp = (0.5 * BW * c.bbr.min_rtt().unwrap() as f64 / 1e9 / M as f64).ceil() as u64;
            assert_eq!(c.st.cwnd, half_bdp.max(4) * M);
            assert!(!entries.is_empty() || half_bdp == 87);
            if was != Mode::ProbeRtt {
                entries.push(now);
            }
        } else if was == Mode::ProbeRtt {
            // Out after 200 ms at the ProbeRTT window and a round: back to cruising.
            assert_eq!(c.bbr.phase(), Phase::Cruise);
            exits.push(now);
        }
    }
    // 5 s after the last refresh (to the next 50 ms ACK), 5 s after each exit, each lasting
    // 200 ms from the first ACK at the window plus the 50 ms ACK spacing.
    assert_eq!((entries.len(), exits.len()), (2, 2), "{entries:?} {exits:?}");
    assert!((5_000 * MS..=5_050 * MS).contains(&(entries[0] - last_min_sample)), "{entries:?}");
    assert!((5_000 * MS..=5_050 * MS).contains(&(entries[1] - exits[0])), "{entries:?} {exits:?}");
    for (entry, exit) in entries.iter().zip(&exits) {
        assert!((250 * MS..=300 * MS).contains(&(exit - entry)), "{entries:?} {exits:?}");
    }
}

#[test]
fn high_loss_in_a_startup_recovery_round_ends_startup() {
    let mut c = Conn::new(Bbr2Config::default());
    let mut now = RTT;
    c.round(now, Ack { inflight: 300 * M, ..Ack::default() });
    c.path.state = CaState::Recovery;
    // Seven ACKs with new losses inside the loss round the first loss opened ...
    c.lose(1_000_000, M as u32);
    let lossy =
        Ack { inflight: 300 * M, newly_lost: M, lost: 10 * M, tx_in_flight: 300 * M, ..Ack::default() };
    for _ in 0..7 {
        now += MS;
        c.ack(now, lossy);
    }
    // ... and an eighth that ends it with 10 of 300 packets lost (3.3 %): Startup is over.
    now += RTT;
    c.round(now, lossy);
    assert_eq!(c.bbr.mode(), Mode::Drain);
    assert_eq!(c.bbr.inflight_bounds().1, Some(BDP), "inflight_hi = BDP at max_bw");
}

#[test]
fn fewer_loss_events_do_not_end_startup() {
    let mut c = Conn::new(Bbr2Config::default());
    let mut now = RTT;
    c.round(now, Ack { inflight: 300 * M, ..Ack::default() });
    c.path.state = CaState::Recovery;
    c.lose(1_000_000, M as u32);
    let lossy =
        Ack { inflight: 300 * M, newly_lost: M, lost: 10 * M, tx_in_flight: 300 * M, ..Ack::default() };
    for _ in 0..6 {
        now += MS;
        c.ack(now, lossy);
    }
    now += RTT;
    c.round(now, lossy);
    assert_eq!(c.bbr.mode(), Mode::Startup, "7 loss events < full_loss_cnt = 8");
}

#[test]
fn ecn_ends_startup_after_two_marked_rounds_only_when_enabled_on_a_short_path() {
    for (ecn, rtt, ends) in [(true, 2 * MS, true), (false, 2 * MS, false), (true, RTT, false)] {
        let cfg = Bbr2Config { ecn, ..Bbr2Config::default() };
        let mut c = Conn::with_rtt(cfg, rtt);
        let mut now = 0;
        // Growing 50 % per round keeps Startup going on bandwidth alone.
        for i in 0..3 {
            now += rtt;
            c.round(
                now,
                Ack { rate: BW * 1.5f64.powi(i), rtt, ece: i > 0, inflight: 300 * M, ..Ack::default() },
            );
        }
        now += rtt;
        c.round(now, Ack { rate: BW * 1.5f64.powi(3), rtt, ece: true, inflight: 300 * M, ..Ack::default() });
        let left = c.bbr.mode() != Mode::Startup;
        assert_eq!(left, ends, "ecn {ecn} rtt {rtt}");
    }
}

#[test]
fn ecn_marked_round_while_cruising_cuts_the_lower_bounds_by_alpha_over_three() {
    let cfg = Bbr2Config { ecn: true, bw_probe_rand: 0, bw_probe_rand_rounds: 0, ..Bbr2Config::default() };
    let rtt = 2 * MS;
    let mut c = Conn::with_rtt(cfg, rtt);
    let plain = Ack { rtt, inflight: 6 * M, tx_in_flight: 6 * M, ..Ack::default() };
    let mut now = 0;
    for _ in 0..4 {
        now += rtt;
        c.round(now, Ack { inflight: 300 * M, ..plain });
    }
    while (c.bbr.mode(), c.bbr.phase()) != (Mode::ProbeBw, Phase::Cruise) {
        now += rtt;
        c.round(now, plain);
        assert!(now < NANOS_PER_SEC, "never cruised");
    }
    assert!(c.bbr.ecn.eligible, "min RTT 2 ms <= ecn_max_rtt 5 ms");
    // One ECE ACK delivers 10 of the round's 20 packets: at the round end alpha moves 1/16
    // of the way to 0.5, and inflight_lo / bw_lo are cut to 1 − alpha/3 of cwnd / max_bw.
    let alpha_before = c.bbr.ecn.alpha;
    now += MS;
    c.ack(now, Ack { ece: true, ..plain });
    let cwnd = c.st.cwnd;
    now += MS;
    c.round(now, plain);
    let alpha = alpha_before * 15.0 / 16.0 + 0.5 / 16.0;
    assert!((c.bbr.ecn.alpha - alpha).abs() < 1e-12, "{} vs {alpha}", c.bbr.ecn.alpha);
    let cut = 1.0 - alpha / 3.0;
    assert_eq!(c.bbr.inflight_bounds().0, Some((cwnd as f64 * cut) as u64));
    assert!((c.bbr.bw_lo().unwrap() - BW * cut).abs() < 1e-6);
}

#[test]
fn rto_sets_cwnd_to_inflight_plus_one_and_restores_it_after_the_loss_state() {
    rto_sets_cwnd_to_inflight_plus_one_and_restores_it(fixed_cfg());
}

#[test]
fn bad_params_name_their_key() {
    let mut p = Params::new();
    p.insert("beta", ParamValue::Float(1.5));
    assert_eq!(Bbr2Config::from_params(&p).err().unwrap().key, "beta");
    let mut p = Params::new();
    p.insert("probe_rtt_window", ParamValue::Str("20s".into()));
    assert_eq!(Bbr2Config::from_params(&p).err().unwrap().key, "probe_rtt_window");
    let mut p = Params::new();
    p.insert("ecn", ParamValue::Str("yes".into()));
    assert_eq!(Bbr2Config::from_params(&p).err().unwrap().key, "ecn");
    assert_eq!(Bbr2Config::from_params(&Params::new()).unwrap(), Bbr2Config::default());
}

// ----- ACK aggregation (v2alpha `bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd`) -----

/// One segment per millisecond: BDP 100 packets at the 100 ms RTT, 100 ms of data 100.
const BW_A: f64 = 1_448_000.0;

/// Startup at `BW_A` (10-packet round ACKs), Drain, DOWN, CRUISE. Returns the time.
fn cruise_at_one_segment_per_ms(c: &mut Conn) -> Nanos {
    let mut now = 0;
    let deep = Ack { rate: BW_A, inflight: 1_000 * M, ..Ack::default() };
    for _ in 0..4 {
        now += RTT;
        c.round(now, deep);
    }
    assert_eq!(c.bbr.mode(), Mode::Drain);
    let at_bdp = Ack { bytes: M, rate: BW_A, inflight: 100 * M, tx_in_flight: 100 * M, ..Ack::default() };
    for _ in 0..2 {
        now += MS;
        c.ack(now, at_bdp);
    }
    assert_eq!((c.bbr.mode(), c.bbr.phase()), (Mode::ProbeBw, Phase::Cruise));
    now
}

/// Every 20 ms a burst of ten ACKs 0.1 ms apart delivering 2 packets each (20 ms of data in
/// 0.9 ms), within one round, until `until`.
fn bursts(c: &mut Conn, from: Nanos, until: Nanos) {
    let a = Ack { bytes: 2 * M, rate: BW_A, inflight: 100 * M, tx_in_flight: 100 * M, ..Ack::default() };
    let mut start = from + 20 * MS;
    while start <= until {
        for k in 0..10 {
            c.ack(start + k * 100_000, a);
        }
        start += 20 * MS;
    }
}

/// Startup (`bbr_extra_acked_in_startup` = 1): the allowance applies before the pipe is
/// full, and the windowed maximum's slots last one round, so an excess is gone two round
/// starts later. The first round's ACK delivers 10 packets at once: the excess is 10.
#[test]
fn startup_uses_the_allowance_with_one_round_slots() {
    let mut c = Conn::new(fixed_cfg());
    c.round(RTT, Ack { rate: BW_A, inflight: 300 * M, ..Ack::default() });
    assert_eq!(c.bbr.mode(), Mode::Startup);
    assert_eq!(c.bbr.extra_acked(), 10 * M);
    assert_eq!(c.bbr.ack_aggregation_cwnd(M), 10 * M);
    let small = Ack { bytes: M, rate: BW_A, inflight: 300 * M, ..Ack::default() };
    c.round(2 * RTT, small);
    assert_eq!(c.bbr.extra_acked(), 10 * M, "one round start later: the other slot");
    c.round(3 * RTT, small);
    assert_eq!(c.bbr.extra_acked(), M, "two round starts later: cleared");

    let mut off = Conn::new(Bbr2Config { extra_acked_in_startup: false, ..fixed_cfg() });
    off.round(RTT, Ack { rate: BW_A, inflight: 300 * M, ..Ack::default() });
    assert_eq!(off.bbr.extra_acked(), 10 * M, "measured all the same");
    assert_eq!(off.bbr.ack_aggregation_cwnd(M), 0, "but not added before the pipe is full");
}

/// In CRUISE (no bounds set) the cwnd target is `2·BDP` = 200 packets plus the allowance.
/// The bursts' excess is 20 packets: the first ACK of each burst restarts the epoch (20
/// packets delivered in the 20 ms since the last burst, 20 expected), the burst then
/// delivers 20 against floor(0.9 ms · 1 packet/ms) = 0 expected.
#[test]
fn bursts_raise_the_cruise_cwnd_by_the_excess() {
    let drive = |cfg: Bbr2Config| {
        let mut c = Conn::new(cfg);
        let now = cruise_at_one_segment_per_ms(&mut c);
        bursts(&mut c, now, now + 300 * MS);
        // The next burst's first ACK (it restarts the epoch) snaps the window to the target.
        c.st.cwnd = 1_000 * M;
        c.ack(now + 320 * MS, Ack { bytes: 2 * M, rate: BW_A, inflight: 100 * M, ..Ack::default() });
        assert_eq!(c.bbr.phase(), Phase::Cruise);
        c
    };
    let with = drive(fixed_cfg());
    assert_eq!(with.bbr.extra_acked(), 20 * M);
    assert_eq!(with.st.cwnd, 220 * M);
    let without = drive(Bbr2Config { extra_acked: false, ..fixed_cfg() });
    assert_eq!(without.st.cwnd, 200 * M);
    let no_gain = drive(Bbr2Config { extra_acked_gain: 0.0, ..fixed_cfg() });
    assert_eq!((no_gain.st.cwnd, no_gain.bbr.extra_acked()), (200 * M, 0), "gain 0 is off too");
    let half = drive(Bbr2Config { extra_acked_gain: 0.5, ..fixed_cfg() });
    assert_eq!(half.st.cwnd, 210 * M);
    // extra_acked_max = 15 ms: at most 15 packets at one packet per ms.
    let capped = drive(Bbr2Config { extra_acked_max: 15 * MS, ..fixed_cfg() });
    assert_eq!(capped.st.cwnd, 215 * M);
}

#[test]
fn extra_acked_params_are_read_and_checked() {
    let d = Bbr2Config::default();
    assert!(d.extra_acked && d.extra_acked_in_startup);
    assert_eq!((d.extra_acked_gain, d.extra_acked_rounds, d.extra_acked_max), (1.0, 5, 100 * MS));
    for (key, value) in [
        ("extra_acked", ParamValue::Int(1)),
        ("extra_acked_gain", ParamValue::Float(9.0)),
        ("extra_acked_rounds", ParamValue::Int(32)),
        ("extra_acked_max", ParamValue::Str("11s".into())),
        ("extra_acked_in_startup", ParamValue::Str("yes".into())),
    ] {
        let mut p = Params::new();
        p.insert(key, value);
        assert_eq!(Bbr2Config::from_params(&p).err().unwrap().key, key);
    }
    let mut p = Params::new();
    p.insert("extra_acked", ParamValue::Bool(false));
    p.insert("extra_acked_rounds", ParamValue::Int(10));
    let cfg = Bbr2Config::from_params(&p).unwrap();
    assert_eq!((cfg.extra_acked, cfg.extra_acked_rounds), (false, 10));
}
