//! Undoing a reduction that turns out to be spurious (Linux `tcp_init_undo`,
//! `tcp_check_dsack`, `tcp_may_undo`, `tcp_undo_cwnd_reduction`): the episode remembers the
//! window and threshold it cut and counts its retransmissions; each D-SACK (RFC 2883) for one of
//! them shows it was needless, and a timestamp echo older than the first retransmission shows
//! the original arrived (RFC 7323 §4). When every retransmission is accounted for, or the echo
//! proves the delay, the cut is undone. After a timeout F-RTO (RFC 5682) sends new data
//! first and undoes the timeout if the ACKs then cover data sent before it.

use ccbench_cc::{CaState, Cause};

use super::{Acked, Nanos, TcpSender};

#[derive(Default)]
pub(super) struct Undo {
    /// snd_una when the episode began; None once undone or when there is nothing to undo
    /// (`undo_marker`).
    marker: Option<u64>,
    /// Retransmissions not yet shown needless; None before the first (`undo_retrans` = −1).
    retransmissions: Option<u64>,
    /// What to restore (`prior_ssthresh`, `prior_cwnd`); ssthresh 0 = keep the current one.
    pub prior_ssthresh: u64,
    pub prior_cwnd: u64,
    /// Timestamp clock (ticks) of the episode's first retransmission (`retrans_stamp`).
    first_retransmission: Option<u32>,
    /// F-RTO (RFC 5682, SACK-enhanced) is judging the last timeout (`tp->frto`).
    pub frto: bool,
}

impl Undo {
    /// A loss episode or a timeout begins at `snd_una` (`tcp_init_undo`). Linux also counts the
    /// retransmissions already in flight then (`retrans_out`); we start from none.
    pub fn begin(&mut self, snd_una: u64, prior_ssthresh: u64, prior_cwnd: u64) {
        self.marker = Some(snd_una);
        self.retransmissions = None;
        self.prior_ssthresh = prior_ssthresh;
        self.prior_cwnd = prior_cwnd;
    }

    /// An ECN reduction cannot be spurious (`tcp_enter_cwr` clears the marker).
    pub fn forget(&mut self) {
        self.marker = None;
    }

    /// `tcp_retransmit_skb`.
    pub fn on_retransmit(&mut self, tick: u32) {
        *self.retransmissions.get_or_insert(0) += 1;
        self.first_retransmission.get_or_insert(tick);
    }

    /// Everything outstanding was acknowledged: no retransmission is in flight any more
    /// (`tcp_try_to_open` clears `retrans_stamp`).
    pub fn on_all_acked(&mut self) {
        self.first_retransmission = None;
    }

    /// A D-SACK for `segments` segments ending at `end` (`tcp_check_dsack`, `tcp_sacktag_one`):
    /// below snd_una it is counted blindly, above only if it covers a retransmitted segment.
    pub fn on_dsack(&mut self, end: u64, segments: u64, prior_una: u64, covers_retransmission: bool) {
        let (Some(marker), Some(left)) = (self.marker, self.retransmissions) else {
            return;
        };
        let counts = if end <= prior_una { true } else { covers_retransmission };
        if left > 0 && end > marker && counts {
            self.retransmissions = Some(left.saturating_sub(segments));
        }
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp older than the first retransmission.
    fn delayed(&self, tsecr: Option<u32>) -> bool {
        match (tsecr, self.first_retransmission) {
            (Some(echo), Some(first)) => (echo.wrapping_sub(first) as i32) < 0,
            _ => false,
        }
    }

    /// `tcp_try_undo_dsack`: every retransmission of the episode came back as a D-SACK.
    pub fn all_needless(&self) -> bool {
        self.marker.is_some() && self.retransmissions == Some(0)
    }

    /// `tcp_may_undo`.
    pub fn may_undo(&self, tsecr: Option<u32>) -> bool {
        self.marker.is_some() && (self.retransmissions == Some(0) || self.delayed(tsecr))
    }

    /// The undo happened (`tcp_undo_cwnd_reduction` clears the marker).
    pub fn done(&mut self) {
        self.marker = None;
    }
}

/// Segments a D-SACK block covers (`tcp_dsack_seen`).
pub(super) fn dsack_segments(start: u64, end: u64, mss: u64) -> u64 {
    end.saturating_sub(start).div_ceil(mss)
}

impl TcpSender {
    /// The window the controller compares against when a loss episode begins (Linux
    /// `tcp_current_ssthresh`): ssthresh itself during a reduction, else at least 3/4 of cwnd.
    fn current_ssthresh(&self) -> u64 {
        if matches!(self.rec.ca_state(), CaState::Cwr | CaState::Recovery) {
            self.st.ssthresh
        } else {
            self.st.ssthresh.max(self.st.cwnd / 2 + self.st.cwnd / 4)
        }
    }

    /// A reduction episode begins: what the undo would restore (Linux `tcp_enter_recovery`,
    /// `tcp_enter_loss`, `tcp_enter_cwr`). Call before the controller cuts.
    pub(super) fn prepare_undo(&mut self, cause: Cause) {
        let snd_una = self.sb.snd_una();
        match cause {
            Cause::Ecn => self.undo.forget(),
            Cause::Loss => {
                let in_reduction = matches!(self.rec.ca_state(), CaState::Cwr | CaState::Recovery);
                let prior_ssthresh = if in_reduction { 0 } else { self.current_ssthresh() };
                self.undo.begin(snd_una, prior_ssthresh, self.st.cwnd);
            }
            Cause::Rto { backoffs: 0 } => {
                let prior_ssthresh = self.current_ssthresh();
                self.undo.begin(snd_una, prior_ssthresh, self.st.cwnd);
            }
            Cause::Rto { .. } => {}
        }
    }

    /// A D-SACK arrived (first block `[start, end)`), `prior_una` being snd_una before the ACK.
    pub(super) fn count_dsack(&mut self, (start, end): (u64, u64), prior_una: u64) {
        let covers_retransmission =
            self.sb.index_of(start).is_some_and(|i| self.sb.seg(i).ever_retransmitted);
        let segments = dsack_segments(start, end, self.mss());
        self.undo.on_dsack(end, segments, prior_una, covers_retransmission);
    }

    /// Linux `tcp_fastretrans_alert`'s undo paths: at the end of recovery or on progress after a
    /// timeout if the cut may be undone (`tcp_try_undo_recovery`, `tcp_try_undo_loss`), and at
    /// any time once every retransmission came back as a D-SACK (`tcp_try_undo_dsack`).
    pub(super) fn try_undo(&mut self, a: &Acked, tsecr: Option<u32>, now: Nanos) {
        let state = self.rec.ca_state();
        if state == CaState::Open {
            self.undo.on_all_acked();
        }
        let recovered = self.rec.open_cause().is_some() && self.sb.snd_una() >= self.rec.recovery_point();
        let undo = match state {
            CaState::Recovery if recovered => self.undo.may_undo(tsecr),
            CaState::Loss if a.acked > 0 && self.undo.may_undo(tsecr) => true,
            CaState::Loss => self.frto(a, recovered) || (recovered && self.undo.may_undo(tsecr)),
            CaState::Cwr => false,
            _ => self.undo.all_needless(),
        };
        if undo {
            self.undo_reduction(state == CaState::Loss, now);
        }
    }

    /// F-RTO, SACK-enhanced (RFC 5682 §3.1; Linux `tcp_process_loss`): after a timeout, the
    /// first ACK that advances snd_una sends new data instead of retransmitting; if what is
    /// acknowledged next was never retransmitted, data sent before the timeout arrived and the
    /// timeout was spurious. Returns whether to undo.
    fn frto(&mut self, a: &Acked, recovered: bool) -> bool {
        if !self.undo.frto {
            return false;
        }
        if a.original_delivered {
            return true; // step 3.b
        }
        let snd_nxt = self.sb.snd_nxt();
        if snd_nxt > self.rec.recovery_point() {
            if a.sacked > 0 || a.is_dupack {
                self.undo.frto = false; // step 3.a: the loss was real
            }
        } else if a.acked > 0 && !recovered {
            // Step 2.b: new data if the application and the peer's window allow, else give up.
            self.rec.set_recovery_point(snd_nxt);
            let window_end = self.sb.snd_una() + self.snd_wnd;
            if snd_nxt < self.app_end && snd_nxt < window_end {
                self.new_data_only = true;
            } else {
                self.undo.frto = false;
            }
        }
        false
    }

    /// Linux `tcp_undo_cwnd_reduction`: the window and threshold come back, the episode ends.
    fn undo_reduction(&mut self, unmark_loss: bool, now: Nanos) {
        if unmark_loss {
            self.sb.unmark_lost();
            self.rack.rewind();
            self.timers.forget_retries();
        }
        if self.undo.prior_ssthresh > 0 {
            self.st.cwnd = self.cc.undo_cwnd(&self.st, self.undo.prior_cwnd);
            self.st.ssthresh = self.st.ssthresh.max(self.undo.prior_ssthresh);
        }
        self.undo.done();
        self.stats.undos += 1;
        if let Some(cause) = self.rec.open_cause() {
            self.rec.close();
            let path = self.path(now);
            self.cc.on_episode_end(&mut self.st, &path, cause);
        }
    }
}
