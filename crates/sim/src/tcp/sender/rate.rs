//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation; Linux `tcp_rate.c`) and
//! round counting: every (re)transmission is stamped with the connection's delivery state, and
//! an ACK compares the stamp of the most recently sent segment it delivers with the state now.

use ccbench_cc::RateSample;

use super::Nanos;

/// What a segment carries from its latest (re)transmission (Linux `tcp_skb_cb::tx` plus the
/// send timestamp).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct TxStamp {
    pub sent_time: Nanos,
    pub delivered: u64,
    pub delivered_time: Nanos,
    pub first_sent: Nanos,
    pub app_limited: bool,
    /// Bytes lost so far (for the sample's loss count).
    pub lost: u64,
    /// Bytes in flight including this segment.
    pub inflight: u64,
}

/// One ACK's deliveries, gathered while the scoreboard is walked (Linux fills `struct
/// rate_sample` the same way in `tcp_rate_skb_delivered`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Deliveries {
    /// `delivered` before this ACK.
    pub prior_delivered: u64,
    /// The stamp of the most recently sent segment delivered: the sample's reference.
    reference: Option<TxStamp>,
    /// This ACK delivered the first segment sent after the previous round ended.
    pub round_start: bool,
}

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RateSampler {
    /// Bytes delivered (cumulatively ACKed or SACKed) since the start.
    delivered: u64,
    delivered_time: Nanos,
    first_sent_time: Nanos,
    /// Non-zero while the application, not the network, limits sending: samples of data sent
    /// before `delivered` passes this mark are app-limited (Linux `tp->app_limited`).
    app_limited_until: u64,
    round_count: u64,
    next_round_delivered: u64,
}

impl RateSampler {
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    pub fn round_count(&self) -> u64 {
        self.round_count
    }

    /// Linux `tcp_rate_skb_sent`: the stamp for a segment of `len` bytes sent now. After an idle
    /// period (nothing in flight) the intervals restart here, so the idle time is not counted.
    pub fn on_send(&mut self, now: Nanos, inflight: u64, len: u32, lost: u64) -> TxStamp {
        if inflight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        TxStamp {
            sent_time: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent: self.first_sent_time,
            app_limited: self.app_limited_until != 0,
            lost,
            inflight: inflight + len as u64,
        }
    }

    /// Linux `tcp_rate_check_app_limited`: the sender ran out of data with room in the window.
    pub fn on_app_limited(&mut self, inflight: u64, cwnd: u64) {
        if inflight < cwnd {
            self.app_limited_until = (self.delivered + inflight).max(1);
        }
    }

    pub fn begin_ack(&self) -> Deliveries {
        Deliveries { prior_delivered: self.delivered, reference: None, round_start: false }
    }

    /// Linux `tcp_rate_skb_delivered` (and `bbr_update_round` for the round count): a segment
    /// of `len` bytes stamped `tx` is delivered for the first time.
    pub fn on_delivered(&mut self, d: &mut Deliveries, len: u32, tx: &TxStamp, now: Nanos) {
        self.delivered += len as u64;
        self.delivered_time = now;
        if tx.delivered >= self.next_round_delivered {
            self.next_round_delivered = self.delivered;
            self.round_count += 1;
            d.round_start = true;
        }
        if d.reference.is_none_or(|r| tx.sent_time >= r.sent_time) {
            d.reference = Some(*tx);
            self.first_sent_time = tx.sent_time;
        }
    }

    /// Linux `tcp_rate_gen`: the sample of one ACK, if it delivered anything. `lost` is the
    /// connection's lost-bytes count after the ACK's loss detection.
    pub fn finish_ack(&mut self, d: &Deliveries, now: Nanos, lost: u64) -> Option<RateSample> {
        let sample = d.reference.map(|r| self.sample(&r, now, lost));
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        sample
    }

    /// The interval is the longer of the send and the ACK phase, so that neither ACK
    /// compression nor a burst of sends inflates the rate (draft §3.3).
    fn sample(&self, r: &TxStamp, now: Nanos, lost: u64) -> RateSample {
        let send_elapsed = r.sent_time.saturating_sub(r.first_sent);
        let ack_elapsed = now.saturating_sub(r.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        let delivered = self.delivered - r.delivered;
        let delivery_rate = if interval > 0 { delivered as f64 * 1e9 / interval as f64 } else { 0.0 };
        RateSample {
            delivered,
            interval,
            delivery_rate,
            prior_delivered: r.delivered,
            tx_in_flight: r.inflight,
            lost: lost - r.lost,
            is_app_limited: r.app_limited,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const M: u32 = 1000;

    /// Sends `n` segments of `M` bytes at `at`, in flight on top of `inflight`.
    fn send_burst(r: &mut RateSampler, n: u64, at: Nanos, inflight: u64) -> Vec<TxStamp> {
        (0..n).map(|k| r.on_send(at, inflight + k * M as u64, M, 0)).collect()
    }

    fn deliver_all(r: &mut RateSampler, stamps: &[TxStamp], now: Nanos) -> Deliveries {
        let mut d = r.begin_ack();
        for tx in stamps {
            r.on_delivered(&mut d, M, tx, now);
        }
        d
    }

    #[test]
    fn stamp_records_the_state_at_send() {
        let mut r = RateSampler::default();
        let a = r.on_send(5 * MS, 0, M, 7);
        assert_eq!(
            a,
            TxStamp {
                sent_time: 5 * MS,
                delivered: 0,
                delivered_time: 5 * MS,
                first_sent: 5 * MS,
                app_limited: false,
                lost: 7,
                inflight: M as u64,
            }
        );
        // Not idle: the intervals keep their start.
        let b = r.on_send(6 * MS, M as u64, M, 7);
        assert_eq!((b.first_sent, b.delivered_time, b.inflight), (5 * MS, 5 * MS, 2 * M as u64));
    }

    #[test]
    fn one_round_of_a_window_gives_window_over_rtt() {
        let mut r = RateSampler::default();
        let sent = send_burst(&mut r, 10, 0, 0);
        let d = deliver_all(&mut r, &sent, 100 * MS);
        assert!(d.round_start);
        let s = r.finish_ack(&d, 100 * MS, 0).unwrap();
        assert_eq!(s.delivered, 10 * M as u64);
        assert_eq!(s.interval, 100 * MS);
        assert_eq!(s.delivery_rate, 100_000.0, "10 000 B in 0.1 s");
        assert_eq!((s.prior_delivered, s.tx_in_flight, s.lost), (0, 10 * M as u64, 0));
        assert!(!s.is_app_limited);
        assert_eq!(r.delivered(), 10 * M as u64);
        assert_eq!(r.round_count(), 1);
    }

    #[test]
    fn interval_is_the_longer_of_send_and_ack_phases() {
        let mut r = RateSampler::default();
        let a = r.on_send(0, 0, M, 0);
        let b = r.on_send(0, M as u64, M, 0);
        let d = deliver_all(&mut r, &[a], 100 * MS);
        r.finish_ack(&d, 100 * MS, 0);
        // c leaves while b is still out, so its send phase starts at a's send time; its ACK
        // comes back compressed: send phase 100 ms, ACK phase 10 ms.
        let c = r.on_send(100 * MS, M as u64, M, 0);
        let d = deliver_all(&mut r, &[c], 110 * MS);
        let s = r.finish_ack(&d, 110 * MS, 0).unwrap();
        assert_eq!((s.interval, s.delivered), (100 * MS, M as u64));
        // b's ACK arrives late: its ACK phase (300 ms) is the longer one.
        let d = deliver_all(&mut r, &[b], 300 * MS);
        let s = r.finish_ack(&d, 300 * MS, 0).unwrap();
        assert_eq!((s.interval, s.delivered), (300 * MS, 3 * M as u64));
        assert_eq!(s.delivery_rate, 10_000.0, "3000 B in 0.3 s");
    }

    #[test]
    fn reference_is_the_most_recently_sent_delivered_segment() {
        let mut r = RateSampler::default();
        let a = r.on_send(0, 0, M, 0);
        let b = r.on_send(10 * MS, M as u64, M, 0);
        let c = r.on_send(20 * MS, 2 * M as u64, M, 0);
        // Delivered out of send order (a SACK of c before the cumulative ACK of a and b).
        let d = deliver_all(&mut r, &[c, a, b], 120 * MS);
        let s = r.finish_ack(&d, 120 * MS, 0).unwrap();
        assert_eq!(s.tx_in_flight, c.inflight);
        assert_eq!(s.interval, 120 * MS);
    }

    #[test]
    fn no_delivery_no_sample() {
        let mut r = RateSampler::default();
        send_burst(&mut r, 3, 0, 0);
        let d = r.begin_ack();
        assert_eq!(r.finish_ack(&d, 10 * MS, 0), None);
        assert!(!d.round_start);
    }

    #[test]
    fn lost_bytes_are_counted_from_the_reference_stamp() {
        let mut r = RateSampler::default();
        let a = r.on_send(0, 0, M, 3 * M as u64);
        let d = deliver_all(&mut r, &[a], 100 * MS);
        assert_eq!(r.finish_ack(&d, 100 * MS, 5 * M as u64).unwrap().lost, 2 * M as u64);
    }

    #[test]
    fn a_round_ends_when_data_sent_after_its_start_is_delivered() {
        let mut r = RateSampler::default();
        let w1 = send_burst(&mut r, 2, 0, 0);
        assert!(
            deliver_all(&mut r, &w1[..1], 100 * MS).round_start,
            "the very first delivery starts round 1"
        );
        // Sent after round 1 started, but stamped before its end mark was set.
        let w2 = send_burst(&mut r, 2, 100 * MS, M as u64);
        assert!(!deliver_all(&mut r, &w1[1..], 110 * MS).round_start);
        assert!(deliver_all(&mut r, &w2[..1], 200 * MS).round_start);
        assert!(!deliver_all(&mut r, &w2[1..], 201 * MS).round_start);
        assert_eq!(r.round_count(), 2);
    }

    #[test]
    fn app_limited_marks_samples_until_the_bubble_is_delivered() {
        let mut r = RateSampler::default();
        let w = send_burst(&mut r, 2, 0, 0);
        r.on_app_limited(2 * M as u64, 10 * M as u64);
        let c = r.on_send(MS, 2 * M as u64, M, 0);
        assert!(c.app_limited && !w[0].app_limited);
        // Delivering the two segments in flight at the mark is not enough ...
        let d = deliver_all(&mut r, &w, 100 * MS);
        assert!(!r.finish_ack(&d, 100 * MS, 0).unwrap().is_app_limited);
        assert!(r.on_send(101 * MS, M as u64, M, 0).app_limited);
        // ... delivering past it ends the app-limited phase.
        let d = deliver_all(&mut r, &[c], 110 * MS);
        assert!(r.finish_ack(&d, 110 * MS, 0).unwrap().is_app_limited, "c itself was sent app-limited");
        assert!(!r.on_send(111 * MS, 0, M, 0).app_limited);
    }

    #[test]
    fn full_window_is_not_app_limited() {
        for (inflight, cwnd, limited) in [(0, 1, true), (9, 10, true), (10, 10, false), (11, 10, false)] {
            let mut r = RateSampler::default();
            r.on_app_limited(inflight, cwnd);
            assert_eq!(r.on_send(0, inflight, M, 0).app_limited, limited, "inflight {inflight} cwnd {cwnd}");
        }
    }
}
