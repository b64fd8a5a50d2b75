//! The sender machinery our controllers expect of a stack, built from what QUIC's loss recovery
//! (RFC 9002) tells quinn's congestion interface. Pure: integer nanoseconds in, no quinn types,
//! so the tests drive it by hand.
//!
//! quinn calls, for each ACK frame: `on_ack` per newly acknowledged packet, `on_end_acks` once,
//! then `on_congestion_event` for packets declared lost and for a rise in the peer's ECN-CE count
//! (with no lost bytes). Our stacks signal congestion *before* the ACK that carries it
//! ([`CongestionControl`]'s call order), so the ACK is held ([`Sender::end_acks`]) and delivered
//! at the next look at the window or the next send, after any congestion event of the same frame.
//!
//! What the stack does here, after RFC 9002:
//! * a recovery period (§7.3.2): a loss or CE rise opens an episode unless it concerns a packet
//!   sent before the open episode began; the episode ends when a packet sent after its start is
//!   acknowledged ([`CongestionControl::on_episode_end`]);
//! * a loss-style reaction ([`Reaction::Prr`]) sets cwnd to ssthresh at once: QUIC has no PRR;
//!   persistent congestion (§7.6.2) is a [`Cause::Rto`] and sets cwnd to the minimum window;
//! * the minimum window is two datagrams (§7.2, `kMinimumWindow`), the initial window
//!   `min(10·mss, max(14720, 2·mss))` (§7.2);
//! * no undo: quinn detects no spurious loss;
//! * RTT samples are `now − sent` of the newest acknowledged packet (the peer's ACK delay is not
//!   subtracted, as TCP's samples include delayed ACKs); smoothed RTT and variance as RFC 6298,
//!   the minimum over 300 s as Linux's `tcp_min_rtt_wlen`;
//! * delivery-rate samples as draft-cheng-iccrg-delivery-rate-estimation, from a record kept
//!   per packet in flight;
//! * a controller's timer fires at the first send or window look at or after it (quinn has no
//!   controller timer).

use std::collections::VecDeque;

use ccbench_cc::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, Nanos, PathInfo, RateSample,
    Reaction, SentInfo,
};

/// RFC 9002 §7.2: the initial window's floor in bytes.
const INITIAL_WINDOW_FLOOR: u64 = 14_720;
/// Linux's `tcp_min_rtt_wlen`: the minimum RTT is kept over this long.
const MIN_RTT_WINDOW: Nanos = 300 * 1_000_000_000;

/// One packet in flight, for delivery-rate samples and round counting.
#[derive(Clone, Copy, Debug)]
struct SentRecord {
    time: Nanos,
    /// Bytes delivered when it was sent, and when that count last grew.
    delivered: u64,
    delivered_time: Nanos,
    /// Send time of the first packet of the flight it went out in.
    first_sent_time: Nanos,
    /// Bytes in flight just after it went out, and bytes declared lost by then.
    inflight: u64,
    lost: u64,
    app_limited: bool,
}

/// The ACK frame being assembled from quinn's per-packet calls.
#[derive(Clone, Copy, Debug, Default)]
struct Batch {
    acked: u64,
    /// The newest acknowledged packet's record, when it was still kept.
    newest: Option<SentRecord>,
    newest_sent: Option<Nanos>,
    ends_episode: bool,
}

/// An ACK held until the congestion events of its frame are known.
#[derive(Clone, Copy, Debug)]
struct Held {
    now: Nanos,
    sample: AckSample,
    ends_episode: bool,
}

#[derive(Clone, Copy, Debug)]
struct Episode {
    cause: Cause,
    started: Nanos,
}

/// RFC 6298's estimator, and the windowed minimum.
#[derive(Clone, Copy, Debug, Default)]
struct Rtt {
    srtt: Option<Nanos>,
    rttvar: Option<Nanos>,
    min: Option<(Nanos, Nanos)>,
}

impl Rtt {
    fn sample(&mut self, now: Nanos, rtt: Nanos) {
        match (self.srtt, self.rttvar) {
            (Some(srtt), Some(var)) => {
                self.rttvar = Some((3 * var + srtt.abs_diff(rtt)) / 4);
                self.srtt = Some((7 * srtt + rtt) / 8);
            }
            _ => {
                self.srtt = Some(rtt);
                self.rttvar = Some(rtt / 2);
            }
        }
        let expired = self.min.is_some_and(|(_, at)| now.saturating_sub(at) > MIN_RTT_WINDOW);
        if expired || self.min.is_none_or(|(m, _)| rtt <= m) {
            self.min = Some((rtt, now));
        }
    }
}

/// A controller and the QUIC sender state it reads, fed quinn's calls.
pub struct Sender {
    cc: Box<dyn CongestionControl>,
    st: CcState,
    mss: u64,
    initial_window: u64,
    inflight: u64,
    delivered: u64,
    delivered_time: Nanos,
    first_sent_time: Nanos,
    app_limited: bool,
    rtt: Rtt,
    episode: Option<Episode>,
    round_count: u64,
    next_round_delivered: u64,
    flight: VecDeque<SentRecord>,
    batch: Batch,
    held: Option<Held>,
    lost: u64,
    congestion_events: u64,
    ecn_reductions: u64,
}

/// What a log or a status line shows of the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    pub cwnd: u64,
    /// `None` while infinite.
    pub ssthresh: Option<u64>,
    pub pacing_rate: Option<f64>,
    pub srtt: Option<Nanos>,
    pub min_rtt: Option<Nanos>,
    pub inflight: u64,
    pub delivered: u64,
    pub lost: u64,
    /// Reduction episodes opened, and those of them opened by a CE rise (the rest: losses and
    /// persistent congestion).
    pub congestion_events: u64,
    pub ecn_reductions: u64,
    pub state: CaState,
}

impl Sender {
    /// A sender for datagrams of `mss` bytes of UDP payload; `cc` is initialised at time 0.
    pub fn new(cc: Box<dyn CongestionControl>, mss: u16) -> Self {
        let mss = u64::from(mss.max(1));
        let initial_window = (10 * mss).min(INITIAL_WINDOW_FLOOR.max(2 * mss));
        let mut sender = Self {
            cc,
            st: CcState { cwnd: initial_window, ssthresh: u64::MAX, pacing_rate: None },
            mss,
            initial_window,
            inflight: 0,
            delivered: 0,
            delivered_time: 0,
            first_sent_time: 0,
            app_limited: false,
            rtt: Rtt::default(),
            episode: None,
            round_count: 0,
            next_round_delivered: 0,
            flight: VecDeque::new(),
            batch: Batch::default(),
            held: None,
            lost: 0,
            congestion_events: 0,
            ecn_reductions: 0,
        };
        let path = sender.path(0);
        sender.cc.init(&mut sender.st, &path);
        sender.clamp();
        sender
    }

    /// The window in bytes, after any held ACK and due timer.
    pub fn window(&mut self, now: Nanos) -> u64 {
        self.settle(now);
        self.st.cwnd
    }

    /// The datagram size the window is counted in.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// quinn's `initial_window`.
    pub fn initial_window(&self) -> u64 {
        self.initial_window
    }

    /// One or more packets went out, the last numbered `packet_number`.
    pub fn on_sent(&mut self, now: Nanos, bytes: u64, packet_number: u64) {
        self.settle(now);
        if self.inflight == 0 {
            // A new flight: its rate samples measure from here (draft-cheng §3.2).
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        self.inflight += bytes;
        self.flight.push_back(SentRecord {
            time: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            inflight: self.inflight,
            lost: self.lost,
            app_limited: self.app_limited,
        });
        let sent = SentInfo {
            seq: packet_number,
            bytes: u32::try_from(bytes).unwrap_or(u32::MAX),
            is_retransmission: false,
            inflight_after: self.inflight,
        };
        let path = self.path(now);
        self.cc.on_packet_sent(&mut self.st, &path, &sent);
        self.clamp();
    }

    /// A packet sent at `sent` was acknowledged (`bytes` of it).
    pub fn on_ack(&mut self, now: Nanos, sent: Nanos, bytes: u64, app_limited: bool) {
        if self.batch.acked == 0 && self.batch.newest_sent.is_none() {
            self.settle(now);
        }
        self.app_limited = app_limited;
        self.delivered += bytes;
        self.delivered_time = now;
        self.inflight = self.inflight.saturating_sub(bytes);
        self.batch.acked += bytes;
        if self.episode.is_some_and(|e| sent > e.started) {
            self.batch.ends_episode = true;
        }
        // quinn reports each datagram of a GSO batch with the batch's one send time, and we keep
        // one record per batch: the first of them takes it.
        if self.batch.newest_sent.is_none_or(|t| sent >= t) {
            self.batch.newest_sent = Some(sent);
            if let Some(record) = self.take_record(sent) {
                self.batch.newest = Some(record);
            }
        }
    }

    /// The frame's acknowledgements are all in; quinn's count of bytes in flight.
    pub fn end_acks(&mut self, now: Nanos, in_flight: u64, app_limited: bool) {
        let batch = std::mem::take(&mut self.batch);
        self.inflight = in_flight;
        self.app_limited = app_limited;
        let Some(newest_sent) = batch.newest_sent else {
            return;
        };
        let rtt = now.saturating_sub(newest_sent);
        self.rtt.sample(now, rtt);
        let round_start = batch.newest.is_some_and(|r| r.delivered >= self.next_round_delivered);
        if round_start {
            self.round_count += 1;
            self.next_round_delivered = self.delivered;
        }
        let rate = batch.newest.map(|r| self.rate_sample(now, &r));
        if let Some(r) = batch.newest {
            // draft-cheng-iccrg-delivery-rate-estimation §3.3: the next samples' send phase
            // starts at the send time of the packet just acknowledged.
            self.first_sent_time = r.time;
        }
        let sample = AckSample {
            acked: batch.acked,
            sacked: 0,
            segments_acked: u32::try_from(batch.acked.div_ceil(self.mss)).unwrap_or(u32::MAX),
            rtt: Some(rtt),
            owd: None,
            ts_echo: None,
            ece: false,
            ce_delta: 0,
            ce_bytes: 0,
            rate,
            newly_lost: 0,
            round_start,
            round_count: self.round_count,
            prior_inflight: in_flight + batch.acked,
            is_dupack: false,
        };
        self.held = Some(Held { now, sample, ends_episode: batch.ends_episode });
    }

    /// Packets sent up to `sent` were declared lost (`lost_bytes` > 0), or the peer's CE count
    /// rose (`lost_bytes` = 0); `persistent`: RFC 9002's persistent congestion.
    pub fn on_congestion(&mut self, now: Nanos, sent: Nanos, persistent: bool, lost_bytes: u64) {
        let cause = match (persistent, lost_bytes) {
            (true, _) => Cause::Rto { backoffs: 0 },
            (false, 0) => Cause::Ecn,
            (false, _) => Cause::Loss,
        };
        self.inflight = self.inflight.saturating_sub(lost_bytes);
        self.lost += lost_bytes;
        if let Some(held) = self.held.as_mut() {
            held.sample.newly_lost += lost_bytes;
            held.sample.ece |= cause == Cause::Ecn;
        }
        let in_episode = self.episode.is_some_and(|e| sent <= e.started);
        if in_episode && !persistent {
            return;
        }
        self.congestion_events += 1;
        self.ecn_reductions += u64::from(cause == Cause::Ecn);
        let open_episode = self.episode.map(|e| e.cause);
        self.episode = Some(Episode { cause, started: now });
        let ev = CongestionEvent {
            cause,
            open_episode,
            flight_size: self.inflight + lost_bytes,
            in_slow_start: self.st.in_slow_start(),
        };
        let path = self.path(now);
        let reaction = self.cc.on_congestion(&mut self.st, &path, &ev);
        self.apply(cause, reaction);
    }

    /// The datagram size changed (path MTU discovery).
    pub fn on_mtu_update(&mut self, mtu: u16) {
        self.mss = u64::from(mtu.max(1));
        self.clamp();
    }

    /// The sender as a log shows it.
    pub fn probe(&self) -> Probe {
        Probe {
            cwnd: self.st.cwnd,
            ssthresh: (self.st.ssthresh != u64::MAX).then_some(self.st.ssthresh),
            pacing_rate: self.st.pacing_rate,
            srtt: self.rtt.srtt,
            min_rtt: self.rtt.min.map(|(m, _)| m),
            inflight: self.inflight,
            delivered: self.delivered,
            lost: self.lost,
            congestion_events: self.congestion_events,
            ecn_reductions: self.ecn_reductions,
            state: self.ca_state(),
        }
    }

    fn apply(&mut self, cause: Cause, reaction: Reaction) {
        match reaction {
            Reaction::Prr { ssthresh } => {
                self.st.ssthresh = ssthresh;
                self.st.cwnd =
                    if matches!(cause, Cause::Rto { .. }) { self.minimum_window() } else { ssthresh };
            }
            Reaction::Immediate { ssthresh, cwnd } => {
                self.st.ssthresh = ssthresh;
                self.st.cwnd = cwnd;
            }
            Reaction::SelfManaged => {}
            Reaction::Ignore => self.episode = None,
        }
        self.clamp();
    }

    /// Deliver the held ACK (episode end first, as our stacks order it) and any due timer.
    fn settle(&mut self, now: Nanos) {
        if let Some(held) = self.held.take() {
            if held.ends_episode {
                if let Some(e) = self.episode.take() {
                    let path = self.path(held.now);
                    self.cc.on_episode_end(&mut self.st, &path, e.cause);
                }
            }
            let path = self.path(held.now);
            self.cc.on_ack(&mut self.st, &path, &held.sample);
            self.clamp();
        }
        if self.cc.next_timer().is_some_and(|t| t <= now) {
            let path = self.path(now);
            self.cc.on_timer(&mut self.st, &path);
            self.clamp();
        }
    }

    /// The record of the packet sent at `sent`; older records go (lost, or acknowledged out
    /// of order and no longer the newest).
    fn take_record(&mut self, sent: Nanos) -> Option<SentRecord> {
        while self.flight.front().is_some_and(|r| r.time < sent) {
            self.flight.pop_front();
        }
        match self.flight.front() {
            Some(r) if r.time == sent => self.flight.pop_front(),
            _ => None,
        }
    }

    fn rate_sample(&self, now: Nanos, r: &SentRecord) -> RateSample {
        let send_elapsed = r.time.saturating_sub(r.first_sent_time);
        let ack_elapsed = now.saturating_sub(r.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        let delivered = self.delivered - r.delivered;
        RateSample {
            delivered,
            interval,
            delivery_rate: if interval > 0 { delivered as f64 * 1e9 / interval as f64 } else { 0.0 },
            prior_delivered: r.delivered,
            tx_in_flight: r.inflight,
            lost: self.lost - r.lost,
            is_app_limited: r.app_limited,
        }
    }

    fn minimum_window(&self) -> u64 {
        2 * self.mss
    }

    fn clamp(&mut self) {
        self.st.cwnd = self.st.cwnd.max(self.minimum_window());
    }

    fn ca_state(&self) -> CaState {
        match self.episode.map(|e| e.cause) {
            None => CaState::Open,
            Some(Cause::Ecn) => CaState::Cwr,
            Some(Cause::Loss) => CaState::Recovery,
            Some(Cause::Rto { .. }) => CaState::Loss,
        }
    }

    fn path(&self, now: Nanos) -> PathInfo {
        PathInfo {
            now,
            mss: u32::try_from(self.mss).unwrap_or(u32::MAX),
            srtt: self.rtt.srtt,
            rttvar: self.rtt.rttvar,
            min_rtt: self.rtt.min.map(|(m, _)| m),
            inflight: self.inflight,
            delivered: self.delivered,
            state: self.ca_state(),
            is_cwnd_limited: !self.app_limited,
            rwnd: u64::MAX,
            initial_window: self.initial_window,
            timestamps: false,
        }
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
