//! RFC 6298 in one place: the RTT estimator that yields the RTO, the exponential back-off, and
//! when the retransmission timer starts, restarts and stops (Linux `tcp_timer.c`,
//! `tcp_rearm_rto`, `inet_csk_rto_backoff`). The same timer serves as the SYN timer and, with
//! nothing outstanding and the peer's window closed, as the persist timer.
//!
//! The two [`Timer`]s themselves stay fields of `TcpSender`: the event loop arms and fires them
//! there. This part decides their deadlines.

use super::Nanos;
use crate::engine::Timer;
use crate::scenario::TcpOptions;
use crate::tcp::rtt::RttEstimator;

/// What the retransmission timer is armed for (Linux `icsk_pending`): one timer serves the RTO,
/// RACK's reorder timeout and the tail loss probe, as in Linux.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pending {
    Rto,
    Reorder,
    Probe,
}

pub(super) struct Timers {
    rtt: RttEstimator,
    pending: Pending,
    /// Consecutive expiries without a valid RTT sample since (Linux `icsk_backoff`): the RTO's
    /// exponent.
    backoffs: u32,
    /// Timeouts of the same data: expiries since snd_una last advanced (Linux
    /// `icsk_retransmits`). Kept apart from `backoffs`, which any valid RTT sample (a SACKed
    /// segment's too) resets, while only progress of snd_una resets this.
    retries: u32,
    rto_max: Nanos,
}

impl Timers {
    pub fn new(opt: &TcpOptions) -> Self {
        let rtt = RttEstimator::new(opt.rto_initial, opt.rto_min, opt.rto_max, opt.ts_granularity);
        Timers { rtt, pending: Pending::Rto, backoffs: 0, retries: 0, rto_max: opt.rto_max }
    }

    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    #[cfg(test)]
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }

    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// A timeout was undone as spurious (Linux `tcp_try_undo_loss` zeroes `icsk_retransmits`).
    pub fn forget_retries(&mut self) {
        self.retries = 0;
    }

    /// A data timeout retransmitted the head (Linux `tcp_retransmit_timer`: `icsk_retransmits++`).
    pub fn count_retry(&mut self) {
        self.retries += 1;
    }

    /// RFC 6298 §5.5: the RTO doubles with every expiry, up to `rto_max` (the exponent is capped
    /// so the product cannot overflow).
    pub fn rto(&self) -> Nanos {
        let rto = self.rtt.rto().saturating_mul(1u64 << self.backoffs.min(30));
        rto.min(self.rto_max)
    }

    /// A valid RTT measurement; only such a sample forgets the back-off (RFC 6298 §5, the note
    /// after rule 5.7; Linux `tcp_ack_update_rtt`).
    pub fn on_rtt_sample(&mut self, rtt: Nanos) {
        self.rtt.update(rtt);
        self.backoffs = 0;
    }

    /// RFC 6298 §5.7: the SYN timed out, so data starts from a 3 s RTO until a sample arrives.
    pub fn after_syn_timeout(&mut self) {
        self.rtt.fall_back_after_syn_timeout();
    }

    /// The handshake is done: the SYN's timer and back-off end with it.
    pub fn on_established(&mut self, rto_timer: &mut Timer) {
        self.backoffs = 0;
        rto_timer.cancel();
    }

    /// The timer expired (RTO, SYN or persist): the next one waits twice as long.
    pub fn back_off(&mut self) {
        self.backoffs += 1;
    }

    pub fn pending(&self) -> Pending {
        self.pending
    }

    /// Start the timer anew from `now` (RFC 6298 §5.3, §5.6).
    pub fn restart(&mut self, t: &mut Timer, now: Nanos) {
        self.pending = Pending::Rto;
        t.set(now + self.rto());
    }

    /// Arms the timer for a reorder timeout or a loss probe at `at`.
    pub fn arm(&mut self, t: &mut Timer, kind: Pending, at: Nanos) {
        self.pending = kind;
        t.set(at);
    }

    /// Linux `tcp_rearm_rto`: back to an RTO; one replacing a reorder timeout or a probe counts
    /// from when the head segment `head_sent` left, not from now.
    pub fn rearm_rto(&mut self, t: &mut Timer, now: Nanos, head_sent: Nanos) {
        if self.pending == Pending::Rto {
            self.restart(t, now);
        } else {
            self.pending = Pending::Rto;
            t.set((head_sent + self.rto()).max(now + 1));
        }
    }

    /// RFC 6298 §5.1: a transmission starts the timer only if it is not running; likewise the
    /// persist timer when a closed window stops new data (RFC 9293 §3.8.6.1).
    pub fn start_if_idle(&mut self, t: &mut Timer, now: Nanos) {
        if !t.is_set() {
            self.restart(t, now);
        }
    }

    /// RFC 6298 §5.2: an ACK that covers everything stops the timer (nothing left to back off
    /// for, e.g. an answered window probe). Returns whether the ACK advanced snd_una with data
    /// still outstanding, when the caller re-arms it (RFC 6298 §5.3; Linux `tcp_set_xmit_timer`).
    pub fn on_ack(&mut self, t: &mut Timer, new_data_acked: bool, all_acked: bool) -> bool {
        if new_data_acked {
            // Linux `tcp_ack`: snd_una advanced, so the data is no longer being retried.
            self.retries = 0;
        }
        if all_acked {
            self.backoffs = 0;
            self.pending = Pending::Rto;
            t.cancel();
        }
        new_data_acked && !all_acked
    }

    /// The send timer serves pacing and the controller's wake-ups: the controller may move it
    /// earlier, never later.
    pub fn pull_in(t: &mut Timer, deadline: Option<Nanos>) {
        if let Some(at) = deadline {
            if t.deadline().is_none_or(|d| at < d) {
                t.set(at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const SEC: Nanos = 1_000_000_000;

    fn timers(rto_max: Nanos) -> Timers {
        Timers::new(&TcpOptions { rto_max, ..TcpOptions::default() })
    }

    fn timer(deadline: Option<Nanos>) -> Timer {
        let mut t = Timer::default();
        if let Some(d) = deadline {
            t.set(d);
        }
        t
    }

    #[test]
    fn rto_doubles_per_expiry_up_to_rto_max() {
        let mut t = timers(120 * SEC);
        for b in 0..=40u32 {
            let expect = ((SEC as u128) << b).min(120 * SEC as u128) as Nanos;
            assert_eq!((t.backoffs(), t.rto()), (b, expect));
            t.back_off();
        }
        // Without a ceiling the exponent stops at 30 instead of overflowing.
        let mut t = timers(Nanos::MAX);
        (0..64).for_each(|_| t.back_off());
        assert_eq!(t.rto(), SEC << 30);
    }

    #[test]
    fn a_valid_rtt_sample_forgets_the_backoff() {
        let mut t = timers(120 * SEC);
        (0..3).for_each(|_| t.back_off());
        assert_eq!(t.rto(), 8 * SEC);
        t.on_rtt_sample(100 * MS);
        assert_eq!((t.backoffs(), t.rto()), (0, 300 * MS), "100 ms + max(4 * 50 ms, 200 ms)");
        assert_eq!(t.rtt().srtt(), Some(100 * MS));
    }

    #[test]
    fn ack_stops_restarts_or_leaves_the_timer() {
        let now = 10 * SEC;
        for armed in [None, Some(11 * SEC)] {
            for (new_data, all) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut t = timers(120 * SEC);
                (0..2).for_each(|_| t.back_off());
                let mut rto = timer(armed);
                let rearm = t.on_ack(&mut rto, new_data, all);
                let (deadline, backoffs) = if all { (None, 0) } else { (armed, 2) };
                let case = format!("armed {armed:?} new_data {new_data} all {all}");
                assert_eq!(
                    (rto.deadline(), t.backoffs(), rearm),
                    (deadline, backoffs, new_data && !all),
                    "{case}"
                );
                if rearm {
                    t.rearm_rto(&mut rto, now, 0);
                    assert_eq!(rto.deadline(), Some(now + 4 * SEC), "{case}");
                }
            }
        }
    }

    /// Linux `tcp_rearm_rto`: an RTO replacing a reorder timeout or a probe counts from the head
    /// segment's transmission, never earlier than now.
    #[test]
    fn an_rto_replacing_a_probe_counts_from_the_head_transmission() {
        for kind in [Pending::Reorder, Pending::Probe] {
            let mut t = timers(120 * SEC);
            let mut rto = timer(None);
            t.arm(&mut rto, kind, 10 * SEC + 5 * MS);
            assert_eq!((t.pending(), rto.deadline()), (kind, Some(10 * SEC + 5 * MS)));
            t.rearm_rto(&mut rto, 10 * SEC, 10 * SEC - 300 * MS);
            assert_eq!((t.pending(), rto.deadline()), (Pending::Rto, Some(10 * SEC + 700 * MS)));
            t.arm(&mut rto, kind, 20 * SEC);
            t.rearm_rto(&mut rto, 20 * SEC, 0);
            assert_eq!(rto.deadline(), Some(20 * SEC + 1), "an overdue head: at once");
        }
    }

    #[test]
    fn a_transmission_never_moves_a_running_timer() {
        let mut t = timers(120 * SEC);
        let mut rto = timer(Some(5 * SEC));
        t.start_if_idle(&mut rto, SEC);
        assert_eq!(rto.deadline(), Some(5 * SEC));
        let mut rto = timer(None);
        t.start_if_idle(&mut rto, SEC);
        assert_eq!(rto.deadline(), Some(2 * SEC), "initial RTO 1 s");
    }

    #[test]
    fn controller_deadline_only_pulls_the_send_timer_earlier() {
        let cases = [
            (None, None, None),
            (None, Some(5), Some(5)),
            (Some(3), Some(5), Some(3)),
            (Some(7), Some(5), Some(5)),
            (Some(7), None, Some(7)),
        ];
        for (armed, controller, expect) in cases {
            let mut send = timer(armed);
            Timers::pull_in(&mut send, controller);
            assert_eq!(send.deadline(), expect, "armed {armed:?} controller {controller:?}");
        }
    }

    #[test]
    fn syn_timeout_starts_data_from_three_seconds_unless_sampled() {
        let mut t = timers(120 * SEC);
        t.after_syn_timeout();
        assert_eq!(t.rto(), 3 * SEC);
        let mut t = timers(2 * SEC);
        t.after_syn_timeout();
        assert_eq!(t.rto(), 2 * SEC, "never above rto_max");
        let mut t = timers(120 * SEC);
        t.on_rtt_sample(40 * MS);
        t.after_syn_timeout();
        assert_eq!(t.rto(), 240 * MS, "a sample exists: keep it");
    }

    #[test]
    fn establishing_stops_the_syn_timer_and_its_backoff() {
        let mut t = timers(120 * SEC);
        t.back_off();
        let mut rto = timer(Some(3 * SEC));
        t.on_established(&mut rto);
        assert_eq!((rto.deadline(), t.backoffs(), t.rto()), (None, 0, SEC));
    }
}
