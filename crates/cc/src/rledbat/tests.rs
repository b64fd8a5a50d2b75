use super::rtt::{EdgeRttSampler, TsRttSampler};
use super::*;
use crate::{build_receiver_control, ParamValue};

const MS: Nanos = 1_000_000;
const MSS: u32 = 1000;

fn info(now: Nanos, rcv_nxt: u64) -> ReceiverInfo {
    ReceiverInfo { now, mss: MSS, rcv_nxt, flow_control_window: 1 << 30, wscale: 7, ts_granularity: MS }
}

fn seg(now: Nanos, seq: u64, tsval: Option<u32>, tsecr: Option<u32>) -> ReceivedSegment {
    ReceivedSegment {
        now,
        seq,
        len: MSS,
        tsval,
        tsecr,
        ce: false,
        is_retransmission: false,
        out_of_order: false,
    }
}

fn controller(keys: &[(&str, ParamValue)]) -> Rledbat {
    let mut p = Params::new();
    for (k, v) in keys {
        p.insert(*k, v.clone());
    }
    Rledbat::new(RledbatConfig::from_params(&p).unwrap())
}

/// An open-loop path: one segment per millisecond, each echoing the TSval of the ACK this
/// receiver sent `rtt(t)` earlier (never an older one than the last echo: when the RTT jumps
/// up, the sender keeps echoing what it last saw), then one ACK per segment stamped with the
/// millisecond.
struct Drive {
    t: Nanos,
    seq: u64,
    echo: u32,
}

impl Drive {
    fn new() -> Self {
        Drive { t: 1000 * MS, seq: 0, echo: 0 }
    }

    fn run(&mut self, ctl: &mut Rledbat, for_ms: u64, rtt: impl Fn(Nanos) -> Nanos) {
        for _ in 0..for_ms {
            self.t += MS;
            self.echo = self.echo.max(((self.t - rtt(self.t)) / MS) as u32);
            let s = seg(self.t, self.seq, Some((self.t / MS) as u32), Some(self.echo));
            ctl.on_segment_received(&info(self.t, self.seq), &s);
            self.seq += MSS as u64;
            let w = ctl.window_target().unwrap_or(1 << 30);
            ctl.on_segment_sent(&info(self.t, self.seq), Some((self.t / MS) as u32), w);
        }
    }
}

#[test]
fn only_the_first_packet_per_tsval_and_per_tsecr_is_timed() {
    let mut s = TsRttSampler::default();
    s.on_sent(5, 0, false);
    s.on_sent(5, MS, false); // same TSval: the first send time stays
    assert_eq!(s.on_received(5, 30 * MS), Some(30 * MS));
    assert_eq!(s.on_received(5, 31 * MS), None, "second segment echoing 5");
    s.on_sent(6, 40 * MS, false);
    s.on_sent(7, 41 * MS, false);
    assert_eq!(s.on_received(7, 71 * MS), Some(30 * MS), "6 is skipped and forgotten");
    assert_eq!(s.on_received(6, 72 * MS), None);
}

#[test]
fn samples_from_a_tsval_sent_while_reducing_are_discarded() {
    let mut s = TsRttSampler::default();
    s.on_sent(9, 0, false);
    s.on_sent(9, MS, true); // a later packet with the same TSval stepped the window down
    assert_eq!(s.on_received(9, 50 * MS), None);
    s.on_sent(u32::MAX, 60 * MS, false);
    s.on_sent(0, 61 * MS, false); // the TS clock wraps
    assert_eq!(s.on_received(0, 90 * MS), Some(29 * MS));
}

#[test]
fn without_timestamps_data_beyond_an_edge_is_timed_from_the_ack_that_opened_it() {
    let mut e = EdgeRttSampler::beyond(9_000);
    e.on_sent(8_000, 0); // below the hidden edge: not an advance
    assert_eq!(e.on_received(8_500, MS), None, "may have been sent under the SYN-ACK's window");
    e.on_sent(10_000, 0);
    e.on_sent(10_000, MS); // not an advance
    e.on_sent(12_000, 5 * MS);
    assert_eq!(e.on_received(11_000, 40 * MS), Some(35 * MS), "first edge ≥ 11000 went out at 5 ms");
    assert_eq!(e.on_received(11_500, 41 * MS), None, "that edge already gave its sample");
    assert_eq!(e.on_received(13_000, 42 * MS), None, "no edge advertised beyond it");
}

#[test]
fn a_later_stamped_segment_below_the_highest_byte_is_a_retransmission() {
    let mut d = LossDetector::default();
    assert!(!d.on_segment(0, MSS, Some(1)));
    assert!(!d.on_segment(2000, MSS, Some(2)), "a hole alone is not a retransmission");
    assert!(!d.on_segment(1000, MSS, Some(2)), "reordered original: TS2 = TS1");
    assert!(d.on_segment(1000, MSS, Some(5)), "S2 < S1 and TS2 > TS1");
    assert!(!d.on_segment(3000, 0, Some(9)), "zero-length segments are ignored");
}

#[test]
fn without_timestamps_a_new_hole_is_the_loss_signal() {
    let mut d = LossDetector::default();
    assert!(!d.on_segment(0, MSS, None));
    assert!(d.on_segment(2000, MSS, None));
    assert!(!d.on_segment(1000, MSS, None), "the hole filling is not a second signal");
}

/// Run at a 20 ms base RTT until the queue, growing by 0.5 ms per ms, makes LEDBAT++ leave
/// its initial slow start; returns the window it leaves with.
fn until_bounded(ctl: &mut Rledbat, d: &mut Drive) -> u64 {
    d.run(ctl, 1000, |_| 20 * MS);
    assert!(ctl.is_unbounded(), "q_d = 0 keeps the sender's slow start in charge");
    let t0 = d.t;
    let ramp = move |t: Nanos| 20 * MS + ((t - t0) / 2).min(50 * MS);
    for _ in 0..200 {
        d.run(ctl, 1, ramp);
        if !ctl.is_unbounded() {
            return ctl.window_target().unwrap();
        }
    }
    panic!("never bounded");
}

/// L254: no cap while the sender's slow start governs; once `q_d > 3/4·T` (45 ms) the window
/// becomes the bytes received over the last `RTT_c` (about 66 ms at 1 KB/ms).
#[test]
fn starts_unbounded_and_bounds_at_the_senders_flight() {
    let mut ctl = Rledbat::default();
    let w = until_bounded(&mut ctl, &mut Drive::new());
    let m = ctl.machine().unwrap();
    let rtt_c = m.base_rtt().unwrap() + m.queuing_delay().unwrap();
    assert_eq!(m.base_rtt(), Some(20 * MS));
    assert!((64 * MS..=67 * MS).contains(&rtt_c), "RTT_c {rtt_c}");
    let flight = (rtt_c / MS + 1) * MSS as u64;
    assert!(w.abs_diff(flight) <= 1000, "rlWND {w}, bytes over the last RTT_c {flight}");
}

/// Eqs. (3)–(4): above the target the window falls (never below half per RTT), below it
/// grows by GAIN packets per RTT.
/// Meanwhile the cap is an autotuned flow-control window: 64 KB, then per RTT four times the
/// bytes received while the rate grows by half or more (the first RTT here: 21 KB), and
/// twice them plus 16 segments afterwards (56 KB at a steady 1 KB/ms, below what it has).
#[test]
fn the_unbounded_start_advertises_an_autotuned_flow_window() {
    let mut ctl = Rledbat::default();
    let mut d = Drive::new();
    d.run(&mut ctl, 1, |_| 20 * MS);
    assert_eq!(ctl.window_target(), Some(65_535));
    d.run(&mut ctl, 99, |_| 20 * MS);
    assert_eq!(ctl.window_target(), Some(4 * 21 * MSS as u64));
    d.run(&mut ctl, 900, |_| 20 * MS);
    assert_eq!(ctl.window_target(), Some(4 * 21 * MSS as u64), "a steady rate does not raise it");
}

#[test]
fn decreases_above_the_target_and_grows_below_it() {
    let mut ctl = controller(&[("slowdown", ParamValue::Bool(false))]);
    let mut d = Drive::new();
    until_bounded(&mut ctl, &mut d);
    d.run(&mut ctl, 100, |_| 70 * MS);
    let start = ctl.window_target().unwrap();
    d.run(&mut ctl, 200, |_| 110 * MS); // q_d = 90 ms: W·(q_d/T − 1) = W/2 per window
    let after = ctl.window_target().unwrap();
    assert!(after < start / 2 && after >= 2 * MSS as u64, "{start} -> {after}");
    d.run(&mut ctl, 2000, |_| 30 * MS); // q_d = 10 ms, GAIN 1/6 (base RTT 20 ms)
    let grown = ctl.window_target().unwrap() as f64;
    // GAIN·MSS/W per byte received: W² grows by 2·GAIN·MSS per byte (2 MB here).
    let expected = ((after as f64).powi(2) + 2.0 / 6.0 * MSS as f64 * 2e6).sqrt();
    assert!((grown / expected - 1.0).abs() < 0.1, "{after} -> {grown}, expected {expected}");
}

/// Fig. 2 line 9: halve on a retransmission, at most once per `RTT_c` (20 ms).
#[test]
fn a_retransmission_halves_the_window_once_per_rtt() {
    let mut ctl = controller(&[
        ("initial_rlwnd", ParamValue::Str("init_cwnd".into())),
        ("loss_episode", ParamValue::Str("rtt".into())),
    ]);
    let mut d = Drive::new();
    d.run(&mut ctl, 500, |_| 20 * MS);
    let retransmit = |ctl: &mut Rledbat, d: &Drive| {
        let s = seg(d.t, 0, Some((d.t / MS) as u32 + 1), Some(((d.t - 20 * MS) / MS) as u32));
        ctl.on_segment_received(&info(d.t, d.seq), &s);
        ctl.window_target().unwrap()
    };
    let w0 = ctl.window_target().unwrap();
    let w1 = retransmit(&mut ctl, &d);
    assert!(w1 <= w0 / 2 + 1000, "{w0} -> {w1}");
    d.run(&mut ctl, 5, |_| 20 * MS);
    let w2 = retransmit(&mut ctl, &d);
    assert!(w2 >= w1, "a second retransmission within one RTT: {w1} -> {w2}");
    d.run(&mut ctl, 25, |_| 20 * MS);
    let w3 = retransmit(&mut ctl, &d);
    assert!(w3 <= w2 / 2 + 1000, "one RTT later: {w2} -> {w3}");
}

/// `loss_episode = "window"`: retransmissions of data below the edge advertised at the last
/// reaction are the same overflow, however late they come; one above it halves again.
#[test]
fn one_halving_per_loss_episode() {
    let mut ctl = controller(&[
        ("initial_rlwnd", ParamValue::Str("init_cwnd".into())),
        ("slowdown", ParamValue::Bool(false)),
    ]);
    let mut d = Drive::new();
    d.run(&mut ctl, 500, |_| 20 * MS);
    let retransmit = |ctl: &mut Rledbat, d: &Drive, seq: u64| {
        let s = seg(d.t, seq, Some((d.t / MS) as u32 + 1), Some(((d.t - 20 * MS) / MS) as u32));
        ctl.on_segment_received(&info(d.t, d.seq), &s);
        ctl.window_target().unwrap()
    };
    let w0 = ctl.window_target().unwrap();
    let edge = d.seq + w0;
    let w1 = retransmit(&mut ctl, &d, d.seq - 10 * MSS as u64);
    assert!(w1 <= w0 / 2 + 1000, "{w0} -> {w1}");
    d.run(&mut ctl, 60, |_| 20 * MS);
    let w2 = retransmit(&mut ctl, &d, edge - MSS as u64);
    assert!(w2 >= w1, "three RTTs later, but data below the old edge {edge}: {w1} -> {w2}");
    d.run(&mut ctl, 100, |_| 20 * MS);
    let w2 = ctl.window_target().unwrap();
    assert!(d.seq - (MSS as u64) >= edge);
    let w3 = retransmit(&mut ctl, &d, d.seq - MSS as u64);
    assert!(w3 <= w2 / 2 + 1000, "data sent under the smaller window: {w2} -> {w3}");
}

#[test]
fn the_enhanced_target_is_the_base_rtt_when_smaller() {
    let mut ctl = controller(&[("enhanced_target", ParamValue::Bool(true))]);
    Drive::new().run(&mut ctl, 200, |_| 20 * MS);
    assert_eq!(ctl.machine().unwrap().effective_target(), 20 * MS);
    let mut plain = Rledbat::default();
    Drive::new().run(&mut plain, 200, |_| 20 * MS);
    assert_eq!(plain.machine().unwrap().effective_target(), 60 * MS);
}

/// An ACK whose window is still stepping down towards rlWND marks its TSval: the data
/// echoing it gives no sample, however late it arrives.
#[test]
fn acks_stepping_the_window_down_give_no_sample() {
    let mut ctl = controller(&[("initial_rlwnd", ParamValue::Str("init_cwnd".into()))]);
    let mut d = Drive::new();
    d.run(&mut ctl, 200, |_| 20 * MS);
    let target = ctl.window_target().unwrap();
    let srtt = ctl.machine().unwrap().srtt();
    d.t += MS;
    ctl.on_segment_sent(&info(d.t, d.seq), Some((d.t / MS) as u32), target + 5000);
    let late = d.t + 400 * MS;
    ctl.on_segment_received(&info(late, d.seq), &seg(late, d.seq, Some(1), Some((d.t / MS) as u32)));
    assert_eq!(ctl.machine().unwrap().srtt(), srtt);
}

#[test]
fn without_timestamps_the_window_starts_bounded_or_not_at_all() {
    let mut ctl = Rledbat::default();
    ctl.on_segment_received(&info(MS, 0), &seg(MS, 0, None, None));
    assert_eq!(ctl.window_target(), Some(2 * MSS as u64), "init_cwnd segments, binding at once");
    let mut off = controller(&[("no_timestamps", ParamValue::Str("off".into()))]);
    off.on_segment_received(&info(MS, 0), &seg(MS, 0, None, None));
    assert_eq!(off.window_target(), None);
    assert!(off.is_unbounded());
}

#[test]
fn bad_parameters_name_the_key() {
    for (key, value) in [
        ("initial_rlwnd", ParamValue::Str("huge".into())),
        ("no_timestamps", ParamValue::Bool(true)),
        ("target", ParamValue::Str("-5ms".into())),
        ("current_filter", ParamValue::Int(0)),
    ] {
        let mut p = Params::new();
        p.insert(key, value);
        assert_eq!(build_receiver_control("rledbat", &p).err().unwrap().key, key);
    }
    let mut p = Params::new();
    p.insert("targett", ParamValue::Str("5ms".into()));
    assert_eq!(build_receiver_control("rledbat", &p).err().unwrap().key, "targett");
}

// ----- profile = "authors" (net-research/rledbat_module, SRC/rledbat_receive.c) -----

fn authors(extra: &[(&str, ParamValue)]) -> Rledbat {
    let mut keys = vec![("profile", ParamValue::Str("authors".into()))];
    keys.extend(extra.iter().cloned());
    controller(&keys)
}

#[test]
fn the_profile_key_selects_the_authors_module_and_its_defaults() {
    assert_eq!(RledbatConfig::from_params(&Params::new()).unwrap(), RledbatConfig::default());
    assert_eq!(RledbatConfig::default().profile, Profile::Rfc);
    let ctl = authors(&[]);
    assert_eq!(ctl.config(), &RledbatConfig::authors());
    let a = ctl.config().authors_config();
    assert_eq!((a.last_qds, a.init_segments, a.min_segments, a.target), (10, 1, 2, 60 * MS));
    let ctl = authors(&[("current_filter", ParamValue::Int(4)), ("enhanced_target", ParamValue::Bool(true))]);
    let a = ctl.config().authors_config();
    assert_eq!((a.last_qds, a.rledbat2), (4, true));
}

#[test]
fn keys_the_module_has_no_counterpart_for_are_refused_with_the_authors_profile() {
    for (key, value) in [
        ("slowdown", ParamValue::Bool(false)),
        ("base_history", ParamValue::Int(3)),
        ("decrease_constant", ParamValue::Float(2.0)),
        ("initial_rlwnd", ParamValue::Str("max".into())),
        ("no_timestamps", ParamValue::Str("off".into())),
        ("loss_episode", ParamValue::Str("rtt".into())),
        ("current_filter", ParamValue::Int(21)),
        ("init_cwnd", ParamValue::Int(0)),
    ] {
        let mut p = Params::new();
        p.insert("profile", ParamValue::Str("authors".into()));
        p.insert(key, value.clone());
        assert_eq!(build_receiver_control("rledbat", &p).err().unwrap().key, key);
        // The same keys are fine with the default profile.
        let mut p = Params::new();
        p.insert(key, value);
        if key != "current_filter" && key != "init_cwnd" {
            build_receiver_control("rledbat", &p).unwrap();
        }
    }
    let mut p = Params::new();
    p.insert("profile", ParamValue::Str("linux".into()));
    assert_eq!(build_receiver_control("rledbat", &p).err().unwrap().key, "profile");
}

/// The open-loop path at a 20 ms RTT, one 1000-byte segment per ms (window scale 7:
/// 128-byte units). The window starts at ceil(1000/128) = 8 units. The first 20 segments
/// echo TSvals sent before any ACK went out: not in the table, no `rtt_min`, g = 1, +1000 B
/// each. From the 21st, `rtt_min` = 20 ms and g = ceil_rledbat(120, 20) = 7: +142 B each.
/// After 1000 segments: 20 000 + 980 · 142 = 159 160 B = 1243 units (56 B carried), so 1251
/// units. The queue stays empty: still the first slow start.
#[test]
fn authors_slow_start_then_a_retransmission_computed_by_hand() {
    let mut ctl = authors(&[]);
    let mut d = Drive::new();
    d.run(&mut ctl, 1, |_| 20 * MS);
    assert_eq!(ctl.window_target(), Some(15 * 128), "8 units + 1000 B: 7 units, 104 B carried");
    d.run(&mut ctl, 999, |_| 20 * MS);
    let m = ctl.authors_machine().unwrap();
    assert_eq!(m.window_units(), 1251);
    assert_eq!(ctl.window_target(), Some(1251 * 128));
    assert_eq!((m.rtt_min(), ctl.probe().state), (Some(20 * MS), "slow-start"));
    // A segment below the previous one: ssthresh = 625 units, the 626 units above it leave
    // with the bytes received, 8 units per 1000 B: 78 segments take 624, the 79th the last 2.
    let echo = ((d.t - 20 * MS) / MS) as u32;
    let s = seg(d.t, 5_000, Some((d.t / MS) as u32), Some(echo));
    ctl.on_segment_received(&info(d.t, d.seq), &s);
    assert_eq!(ctl.authors_machine().unwrap().ssthresh_units(), 625);
    d.run(&mut ctl, 78, |_| 20 * MS);
    assert_eq!(ctl.window_target(), Some(627 * 128));
    d.run(&mut ctl, 1, |_| 20 * MS);
    assert_eq!(ctl.window_target(), Some(625 * 128));
    // The retransmission ended the first slow start and scheduled the first periodic
    // slowdown 2 RTTs (40 ms) later: overdue, it starts with the next segment, down to the
    // minimum window (ceil(2000/128) = 16 units) over the bytes received.
    d.run(&mut ctl, 1, |_| 20 * MS);
    assert_eq!(ctl.probe().state, "freeze");
    d.run(&mut ctl, 200, |_| 20 * MS);
    assert_eq!(ctl.authors_machine().unwrap().ssthresh_units(), 625);
    assert!(ctl.window_target().unwrap() < 625 * 128);
}

#[test]
fn authors_without_timestamps_caps_nothing_and_says_so() {
    let mut ctl = authors(&[]);
    ctl.on_segment_received(&info(MS, 0), &seg(MS, 0, None, None));
    assert_eq!(ctl.window_target(), None);
    assert!(ctl.is_unbounded());
    assert_eq!(ctl.notes(), vec![AUTHORS_NO_TIMESTAMPS.to_string()]);
    assert_eq!(ctl.probe().state, "passive");
}
