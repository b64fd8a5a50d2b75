//! quinn's call sequences, built by hand (as quinn-proto makes them for one ACK frame), and what
//! a controller sees of them.

use std::sync::{Arc, Mutex};

use ccbench_cc::newreno::NewReno;
use ccbench_cc::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, Nanos, PathInfo, Reaction,
};

use super::Sender;

const MSS: u16 = 1200;
const M: u64 = MSS as u64;
const MS: Nanos = 1_000_000;

/// Records every call, and answers congestion with a fixed reaction.
struct Recorder {
    log: Arc<Mutex<Vec<String>>>,
    reaction: Reaction,
    timer: Option<Nanos>,
}

impl Recorder {
    fn new(reaction: Reaction) -> (Box<Self>, Arc<Mutex<Vec<String>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        (Box::new(Self { log: Arc::clone(&log), reaction, timer: None }), log)
    }

    fn push(&self, entry: String) {
        self.log.lock().unwrap().push(entry);
    }
}

impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }

    fn on_ack(&mut self, _st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        self.push(format!(
            "ack {} ece={} lost={} rtt={} round_start={} state={:?}",
            ack.acked,
            ack.ece,
            ack.newly_lost,
            ack.rtt.unwrap() / MS,
            ack.round_start,
            path.state
        ));
    }

    fn on_congestion(&mut self, _st: &mut CcState, _path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        self.push(format!("congestion {:?} open={:?}", ev.cause, ev.open_episode));
        self.reaction
    }

    fn on_episode_end(&mut self, _st: &mut CcState, _path: &PathInfo, cause: Cause) {
        self.push(format!("end {cause:?}"));
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.timer
    }

    fn on_timer(&mut self, st: &mut CcState, path: &PathInfo) {
        self.push(format!("timer at {}", path.now / MS));
        self.timer = None;
        st.cwnd = 3 * M;
    }
}

/// Send `n` full packets at `t` ms, numbered from `first`.
fn send(s: &mut Sender, t: u64, first: u64, n: u64) {
    for k in 0..n {
        s.on_sent(t * MS, M, first + k);
    }
}

/// One ACK frame at `t` ms for the packets sent at `sent` ms.
fn ack(s: &mut Sender, t: u64, sent: &[u64]) {
    for &at in sent {
        s.on_ack(t * MS, at * MS, M, false);
    }
    let in_flight = s.inflight;
    s.end_acks(t * MS, in_flight, false);
}

#[test]
fn starts_with_rfc9002s_initial_window() {
    let s = Sender::new(Box::<NewReno>::default(), MSS);
    assert_eq!(s.initial_window(), 10 * M);
    // A large datagram is held to 14,720 bytes' worth, but never under two datagrams.
    assert_eq!(Sender::new(Box::<NewReno>::default(), 9000).initial_window(), 18_000);
    assert_eq!(Sender::new(Box::<NewReno>::default(), 1472).initial_window(), 14_720);
}

#[test]
fn slow_start_grows_by_the_bytes_acknowledged() {
    let mut s = Sender::new(Box::<NewReno>::default(), MSS);
    send(&mut s, 0, 0, 10);
    ack(&mut s, 40, &[0, 0, 0, 0]);
    assert_eq!(s.window(40 * MS), 14 * M);
    assert_eq!(s.probe().srtt, Some(40 * MS));
}

#[test]
fn a_loss_cuts_at_once_and_once_per_recovery_period() {
    let mut s = Sender::new(Box::<NewReno>::default(), MSS);
    send(&mut s, 0, 0, 10);
    ack(&mut s, 40, &[0, 0]);
    assert_eq!(s.window(40 * MS), 12 * M);
    send(&mut s, 40, 10, 4);
    // quinn declares packets sent at 0 lost after the frame's ACKs: NewReno halves at once.
    s.on_congestion(41 * MS, 0, false, M);
    assert_eq!(s.window(41 * MS), 6 * M);
    assert_eq!(s.probe().state, CaState::Recovery);
    // Another loss of a packet sent before the period began: no second cut.
    s.on_congestion(42 * MS, 0, false, M);
    assert_eq!(s.window(42 * MS), 6 * M);
    // A packet sent after the period began is acknowledged: the episode ends.
    send(&mut s, 45, 14, 1);
    ack(&mut s, 90, &[45]);
    s.window(90 * MS);
    assert_eq!(s.probe().state, CaState::Open);
}

#[test]
fn the_congestion_signal_comes_before_the_ack_that_carries_it() {
    let (cc, log) = Recorder::new(Reaction::SelfManaged);
    let mut s = Sender::new(cc, MSS);
    send(&mut s, 0, 0, 4);
    // One frame: two packets acknowledged, then quinn's ECN check finds the CE count risen.
    s.on_ack(30 * MS, 0, M, false);
    s.on_ack(30 * MS, 0, M, false);
    s.end_acks(30 * MS, 2 * M, false);
    s.on_congestion(30 * MS, 0, false, 0);
    assert!(log.lock().unwrap().iter().all(|l| !l.starts_with("ack")), "held until the window is read");
    s.window(30 * MS);
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        ["congestion Ecn open=None", "ack 2400 ece=true lost=0 rtt=30 round_start=true state=Cwr"]
    );
}

#[test]
fn losses_ride_on_their_frames_ack_and_a_later_packet_ends_the_episode() {
    let (cc, log) = Recorder::new(Reaction::Prr { ssthresh: 5 * M });
    let mut s = Sender::new(cc, MSS);
    send(&mut s, 0, 0, 6);
    ack(&mut s, 30, &[0]);
    s.on_congestion(30 * MS, 0, false, 2 * M);
    assert_eq!(s.window(30 * MS), 5 * M, "cwnd = ssthresh at once: QUIC has no PRR");
    send(&mut s, 31, 6, 1);
    ack(&mut s, 61, &[31]);
    s.window(61 * MS);
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            "congestion Loss open=None",
            "ack 1200 ece=false lost=2400 rtt=30 round_start=true state=Recovery",
            "end Loss",
            "ack 1200 ece=false lost=0 rtt=30 round_start=true state=Open",
        ]
    );
}

#[test]
fn persistent_congestion_is_a_timeout_down_to_the_minimum_window() {
    let (cc, log) = Recorder::new(Reaction::Prr { ssthresh: 4 * M });
    let mut s = Sender::new(cc, MSS);
    send(&mut s, 0, 0, 10);
    s.on_congestion(500 * MS, 0, true, 10 * M);
    assert_eq!(s.window(500 * MS), 2 * M);
    assert_eq!(s.probe().ssthresh, Some(4 * M));
    assert_eq!(log.lock().unwrap()[0], "congestion Rto { backoffs: 0 } open=None");
    // Even inside an open episode, persistent congestion reaches the controller.
    s.on_congestion(501 * MS, 0, true, 0);
    assert_eq!(log.lock().unwrap().len(), 2);
}

#[test]
fn rounds_and_delivery_rates_follow_the_packets_in_flight() {
    let (cc, log) = Recorder::new(Reaction::Ignore);
    let mut s = Sender::new(cc, MSS);
    // Ten packets paced 1 ms apart, acknowledged 20 ms after each was sent.
    for k in 0..10 {
        s.on_sent(k * MS, M, k);
    }
    let mut rates = Vec::new();
    for k in 0..10 {
        s.on_ack((20 + k) * MS, k * MS, M, false);
        s.end_acks((20 + k) * MS, (9 - k) * M, false);
        rates.push(s.held.unwrap().sample.rate.unwrap().delivery_rate);
        s.window((20 + k) * MS);
    }
    let starts = log.lock().unwrap().iter().filter(|l| l.contains("round_start=true")).count();
    assert_eq!(starts, 1, "one flight, one round");
    // The last sample: 10 packets over max(9 ms of sending, 29 ms since the first delivery).
    let expected = 10.0 * M as f64 / 0.029;
    assert!((rates[9] - expected).abs() < 1.0, "{rates:?}");
}

#[test]
fn a_controller_timer_fires_at_the_next_look_at_the_window() {
    let (mut cc, log) = Recorder::new(Reaction::Ignore);
    cc.timer = Some(100 * MS);
    let mut s = Sender::new(cc, MSS);
    assert_eq!(s.window(99 * MS), 10 * M);
    assert_eq!(s.window(120 * MS), 3 * M);
    assert_eq!(log.lock().unwrap().clone(), ["timer at 120"]);
}

#[test]
fn the_window_never_falls_under_two_datagrams() {
    let (cc, _) = Recorder::new(Reaction::Immediate { ssthresh: 0, cwnd: 0 });
    let mut s = Sender::new(cc, MSS);
    send(&mut s, 0, 0, 2);
    s.on_congestion(10 * MS, 0, false, M);
    assert_eq!(s.window(10 * MS), 2 * M);
}

#[test]
fn a_gso_batch_is_one_record_and_its_datagrams_keep_the_rate_sample() {
    let (cc, _) = Recorder::new(Reaction::Ignore);
    let mut s = Sender::new(cc, MSS);
    // quinn: one call for a batch of three datagrams, then one acknowledgement per datagram.
    s.on_sent(0, 3 * M, 2);
    for _ in 0..3 {
        s.on_ack(20 * MS, 0, M, false);
    }
    s.end_acks(20 * MS, 0, false);
    let rate = s.held.unwrap().sample.rate.expect("the batch's record gives a rate sample");
    assert_eq!((rate.delivered, rate.tx_in_flight), (3 * M, 3 * M));
    assert!((rate.delivery_rate - 3.0 * M as f64 / 0.020).abs() < 1.0);
    assert!(s.held.unwrap().sample.round_start);
}

#[test]
fn delivery_rates_measure_the_last_round_not_the_whole_flight() {
    let (cc, _) = Recorder::new(Reaction::Ignore);
    let mut s = Sender::new(cc, MSS);
    // A flow that never goes idle: one packet every 10 ms, each acknowledged 40 ms later, for
    // 2 s. The rate is one packet per 10 ms at any point, however old the flight.
    let mut last = 0.0;
    for k in 0..200u64 {
        s.on_sent(k * 10 * MS, M, k);
        if k >= 4 {
            let sent = (k - 4) * 10;
            s.on_ack((sent + 40) * MS, sent * MS, M, false);
            let inflight = s.inflight;
            s.end_acks((sent + 40) * MS, inflight, false);
            last = s.held.unwrap().sample.rate.unwrap().delivery_rate;
            s.window((sent + 40) * MS);
        }
    }
    let expected = M as f64 / 0.010;
    assert!((last - expected).abs() / expected < 0.05, "{last} against {expected}");
}
