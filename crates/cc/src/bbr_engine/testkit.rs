//! A BBR connection driven by hand, for the tests of `bbr2` and `bbr3`: ACKs with rate
//! samples, rounds, losses with their send stamps, and the walk from Startup to CRUISE and UP;
//! and the cases whose numbers are the same in both.

use super::{Engine, Generation, Mode, Phase, MS};
use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, LossInfo, Nanos, PathInfo,
    RateSample, Reaction, NANOS_PER_SEC,
};

pub(crate) const M: u64 = 1448;
/// 20 Mb/s in bytes per second.
pub(crate) const BW: f64 = 2.5e6;
pub(crate) const RTT: Nanos = 100 * MS;
/// `ceil(2.5e6 B/s · 0.1 s / 1448 B)` = 173 packets.
pub(crate) const BDP: u64 = 173 * M;

/// A connection driven by hand.
pub(crate) struct Conn<C: Generation> {
    pub(crate) bbr: Engine<C>,
    pub(crate) st: CcState,
    pub(crate) path: PathInfo,
    /// The reference of the last round-ending ACK: in-round ACKs reuse it.
    pub(crate) round_prior: u64,
    /// What the stack stamps on each send: (seq, bytes in flight after it, lost total then).
    sends: Vec<(u64, u64, u64)>,
    lost_total: u64,
}

/// One ACK: `bytes` delivered, the rate sample's reference sent when `prior` bytes had been
/// delivered with `tx_in_flight` in flight, `lost` bytes lost over its interval.
#[derive(Clone, Copy)]
pub(crate) struct Ack {
    pub(crate) bytes: u64,
    pub(crate) rate: f64,
    pub(crate) rtt: Nanos,
    pub(crate) inflight: u64,
    pub(crate) lost: u64,
    pub(crate) tx_in_flight: u64,
    pub(crate) newly_lost: u64,
    pub(crate) ece: bool,
    pub(crate) ce_delta: u32,
    pub(crate) ce_bytes: u64,
    pub(crate) app_limited: bool,
}

impl Default for Ack {
    fn default() -> Self {
        Ack {
            bytes: 10 * M,
            rate: BW,
            rtt: RTT,
            inflight: BDP,
            lost: 0,
            tx_in_flight: BDP,
            newly_lost: 0,
            ece: false,
            ce_delta: 0,
            ce_bytes: 0,
            app_limited: false,
        }
    }
}

impl<C: Generation> Conn<C> {
    pub(crate) fn new(cfg: C) -> Self {
        Self::with_rtt(cfg, RTT)
    }

    pub(crate) fn with_rtt(cfg: C, rtt: Nanos) -> Self {
        let path = PathInfo {
            now: 0,
            mss: M as u32,
            srtt: Some(rtt),
            rttvar: None,
            min_rtt: Some(rtt),
            inflight: 0,
            delivered: 0,
            state: CaState::Open,
            is_cwnd_limited: true,
            rwnd: u64::MAX,
            initial_window: 10 * M,
            timestamps: true,
        };
        let mut c = Self {
            bbr: Engine::new(cfg),
            st: CcState { cwnd: 10 * M, ssthresh: u64::MAX, pacing_rate: None },
            path,
            round_prior: 0,
            sends: Vec::new(),
            lost_total: 0,
        };
        c.bbr.init(&mut c.st, &c.path);
        c
    }

    pub(crate) fn pacing(&self) -> f64 {
        self.st.pacing_rate.unwrap()
    }

    /// An ACK at `now` whose rate sample spans `prior..delivered`.
    pub(crate) fn ack_from(&mut self, now: Nanos, prior: u64, a: Ack) {
        let prior_inflight = self.path.inflight;
        self.path.now = now;
        self.path.delivered += a.bytes;
        self.path.inflight = a.inflight;
        let rs = RateSample {
            delivered: self.path.delivered - prior,
            interval: RTT,
            delivery_rate: a.rate,
            prior_delivered: prior,
            tx_in_flight: a.tx_in_flight,
            lost: a.lost,
            is_app_limited: a.app_limited,
        };
        let ack = AckSample {
            acked: a.bytes,
            sacked: 0,
            segments_acked: a.bytes.div_ceil(M) as u32,
            rtt: Some(a.rtt),
            owd: None,
            ts_echo: None,
            ece: a.ece,
            ce_delta: a.ce_delta,
            ce_bytes: a.ce_bytes,
            rate: Some(rs),
            newly_lost: a.newly_lost,
            round_start: false,
            round_count: 0,
            prior_inflight,
            is_dupack: false,
        };
        self.bbr.on_ack(&mut self.st, &self.path, &ack);
    }

    /// An ACK inside the current round (its reference was sent before the round started).
    pub(crate) fn ack(&mut self, now: Nanos, a: Ack) {
        self.ack_from(now, self.round_prior, a);
    }

    /// An ACK that ends a round: its reference was sent once everything so far was delivered.
    pub(crate) fn round(&mut self, now: Nanos, a: Ack) {
        self.round_prior = self.path.delivered;
        self.ack_from(now, self.round_prior, a);
    }

    /// The stack marks `seq` lost, with the stamps of its send (none if never `send`-ed here).
    pub(crate) fn lose(&mut self, seq: u64, bytes: u32) {
        self.lost_total += bytes as u64;
        let (tx_in_flight, lost_at_send) =
            self.sends.iter().find(|s| s.0 == seq).map_or((0, self.lost_total), |s| (s.1, s.2));
        let info = LossInfo {
            seq,
            bytes,
            tx_in_flight,
            lost_since_tx: self.lost_total - lost_at_send,
            tx_app_limited: false,
        };
        self.bbr.on_packet_lost(&mut self.st, &self.path, &info);
    }

    pub(crate) fn send(&mut self, seq: u64, inflight_after: u64) {
        self.sends.push((seq, inflight_after, self.lost_total));
    }
}

/// Startup at a steady rate fills the pipe on the fourth round (three rounds without 25 %
/// growth), Drain ends once in flight is the BDP (ProbeBW DOWN), and the next ACK with in
/// flight at the BDP cruises. `a` is the steady ACK (in flight at the BDP). Returns the time.
pub(crate) fn to_cruise_with<C: Generation>(c: &mut Conn<C>, a: Ack) -> Nanos {
    let mut now = 0;
    let deep = Ack { inflight: 1_000 * M, ..a };
    for _ in 0..3 {
        now += RTT;
        c.round(now, deep);
        assert_eq!(c.bbr.mode(), Mode::Startup);
    }
    now += RTT;
    c.round(now, deep);
    assert_eq!(c.bbr.mode(), Mode::Drain);
    now += MS;
    c.ack(now, a);
    assert_eq!((c.bbr.mode(), c.bbr.phase()), (Mode::ProbeBw, Phase::Down));
    now += MS;
    c.ack(now, a);
    assert_eq!(c.bbr.phase(), Phase::Cruise, "in flight at the BDP and no inflight_hi: cruise");
    now
}

pub(crate) fn to_cruise<C: Generation>(c: &mut Conn<C>) -> Nanos {
    to_cruise_with(c, Ack::default())
}

/// From CRUISE (entered at `start` − 1 ms, DOWN at `start` − 2 ms): REFILL once the 2 s probe
/// wait has passed, UP after one REFILL round.
pub(crate) fn to_probe_up<C: Generation>(c: &mut Conn<C>, start: Nanos) -> Nanos {
    let mut now = start;
    while c.bbr.phase() == Phase::Cruise {
        now += RTT;
        c.round(now, Ack::default());
        assert!(now <= start + 2 * NANOS_PER_SEC + RTT, "no probe after the 2 s wait");
    }
    assert_eq!(c.bbr.phase(), Phase::Refill);
    assert!(now > start - 2 * MS + 2 * NANOS_PER_SEC, "REFILL at {now}");
    now += RTT;
    c.round(now, Ack::default());
    assert_eq!(c.bbr.phase(), Phase::Up);
    now
}

/// A probe's lost packets, marked one by one with their send stamps, set `inflight_hi` where
/// the loss rate crossed `loss_thresh` and end UP (bbr2 and bbr3 alike).
pub(crate) fn lost_packets_while_probing_set_inflight_hi_at_the_crossing<C: Generation>(cfg: C) {
    let mut c = Conn::new(cfg);
    let now = to_cruise(&mut c);
    to_probe_up(&mut c, now);
    // Five packets sent in UP with 200..204 packets in flight, all lost. After the fourth,
    // 4 of 203 are lost (1.97 %); the fifth makes 5 of 204 (2.45 %). Before it: 203 packets
    // in flight, 4 lost; the budget ceil(0.02 · 293 944) = 5 879 B is reached after
    // (5 879 − 5 792) / 0.98 = 88 B of it: inflight_hi = 293 944 + 88 B, and UP ends.
    let base = 1_000_000;
    for k in 0..5 {
        c.send(base + k * M, (200 + k) * M);
    }
    for k in 0..4 {
        c.lose(base + k * M, M as u32);
    }
    assert_eq!((c.bbr.phase(), c.bbr.inflight_bounds().1), (Phase::Up, None));
    c.lose(base + 4 * M, M as u32);
    assert_eq!(c.bbr.inflight_bounds().1, Some(203 * M + 88));
    assert_eq!(c.bbr.phase(), Phase::Down);
}

/// An RTO in CRUISE sets cwnd to in flight plus one segment; leaving the Loss state restores
/// the pre-RTO window (bbr2 and bbr3 alike).
pub(crate) fn rto_sets_cwnd_to_inflight_plus_one_and_restores_it<C: Generation>(cfg: C) {
    let mut c = Conn::new(cfg);
    let now = to_cruise(&mut c);
    let before = c.st.cwnd;
    c.path.inflight = 50 * M;
    let ev = CongestionEvent {
        cause: Cause::Rto { backoffs: 0 },
        open_episode: None,
        flight_size: 50 * M,
        in_slow_start: false,
    };
    c.path.state = CaState::Loss;
    assert_eq!(c.bbr.on_congestion(&mut c.st, &c.path, &ev), Reaction::SelfManaged);
    assert_eq!(c.st.cwnd, 51 * M);
    c.path.state = CaState::Open;
    c.ack(now + MS, Ack { inflight: 10 * M, ..Ack::default() });
    // bbr_set_state: leaving Loss restores the pre-RTO window, which outside probing also
    // became inflight_lo, for the loss round to cut from (v3: max(cwnd, prior_cwnd) before
    // the RTO).
    assert_eq!(c.st.cwnd, before);
    assert_eq!(c.bbr.inflight_bounds().0, Some(before));
}
