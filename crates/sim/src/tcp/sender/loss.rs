//! The loss detectors wired into the sender, and the one timer they share with the RTO (Linux
//! `tcp_identify_packet_loss`, `tcp_rack_reo_timeout`, `tcp_send_loss_probe`,
//! `tcp_retransmit_timer`, `tcp_enter_loss`).
//!
//! With SACK and `recovery = "rack"` (the default) RACK-TLP alone decides what is lost, as in
//! Linux since 4.18; with `recovery = "rfc6675"`, or without SACK, the sequence-based rules of
//! `recovery.rs` do, and no probe is sent.

use ccbench_cc::{CaState, Cause, LossInfo, Reaction};

use super::rack::TIMER_SLACK;
use super::scoreboard::Seg;
use super::timers::Pending;
use super::tlp::{self, ProbeOutcome};
use super::{Acked, LossRecovery, Nanos, Phase, TcpSender};
use crate::packet::Packet;

/// What the loss detectors found on one ACK.
#[derive(Default)]
pub(super) struct Detected {
    /// Bytes newly marked lost.
    pub newly_lost: u64,
    /// One of them was a retransmission.
    pub lost_retransmission: bool,
    pub reorder_timer_armed: bool,
}

impl TcpSender {
    fn rack_enabled(&self) -> bool {
        self.opt.sack && self.opt.recovery == LossRecovery::Rack
    }

    /// Marks what the loss detector finds on this ACK and tells the controller of each loss.
    pub(super) fn detect_losses(&mut self, a: &Acked, now: Nanos) -> Detected {
        let lost_before = self.sb.lost_total();
        let mut found = Detected::default();
        if self.rack_enabled() {
            let delivered = self.rate.delivered();
            self.rack.update_reo_wnd(a.deliveries.prior_delivered, delivered);
            let (wait, lost_retransmission) = self.rack_detect(now, false);
            found.lost_retransmission = lost_retransmission;
            if let Some(wait) = wait {
                let at = now + wait + TIMER_SLACK;
                self.timers.arm(&mut self.rto_timer, Pending::Reorder, at);
                found.reorder_timer_armed = true;
            }
        } else {
            let mut scan = self.rec.loss_scan(&self.sb, a.acked, a.sacked);
            while let Some(i) = scan.next(&self.sb) {
                if let Some(seg) = self.sb.mark_lost(i) {
                    self.report_loss(&seg, now, self.sb.lost_total());
                }
            }
            if a.sacked > 0 && self.opt.sack {
                found.lost_retransmission = self.mark_lost_retransmissions(now);
            }
        }
        found.newly_lost = self.sb.lost_total() - lost_before;
        found
    }

    /// Without RACK: marks every retransmission that later data overtook (see
    /// `Scoreboard::next_lost_retransmission`); whether there was one.
    fn mark_lost_retransmissions(&mut self, now: Nanos) -> bool {
        let mut from = 0;
        let mut found = false;
        while let Some(i) = self.sb.next_lost_retransmission(from) {
            if let Some(seg) = self.sb.mark_lost(i) {
                self.report_loss(&seg, now, self.sb.lost_total());
                found = true;
            }
            from = i + 1;
        }
        found
    }

    /// One RACK pass; returns how long until the next pending segment expires, and whether a
    /// retransmission was found lost (Linux `FLAG_LOST_RETRANS`).
    fn rack_detect(&mut self, now: Nanos, force: bool) -> (Option<Nanos>, bool) {
        let in_recovery = matches!(self.rec.ca_state(), CaState::Recovery | CaState::Loss);
        let sacked_segments = self.sb.sacked_bytes() / self.mss();
        let min_rtt = self.min_rtt.get().unwrap_or(0);
        let srtt = self.timers.rtt().srtt().unwrap_or(0);
        let reo_wnd = self.rack.reo_wnd(in_recovery, sacked_segments, min_rtt, srtt);
        let mut lost = std::mem::take(&mut self.lost_buf);
        let wait = self.rack.detect(&mut self.sb, now, reo_wnd, force, &mut |seg: &Seg| lost.push(*seg));
        let lost_retransmission = lost.iter().any(|seg| seg.retrans);
        self.report_losses(&mut lost, now);
        self.lost_buf = lost;
        (wait, lost_retransmission)
    }

    /// One packet newly marked lost, with the scoreboard's lost total as it stood once this
    /// packet was counted (Linux calls the controller from `tcp_mark_skb_lost`, per packet).
    fn report_loss(&mut self, seg: &Seg, now: Nanos, lost_total: u64) {
        let path = self.path(now);
        let info = LossInfo {
            seq: seg.seq,
            bytes: seg.len,
            tx_in_flight: seg.tx.inflight,
            lost_since_tx: lost_total - seg.tx.lost,
            tx_app_limited: seg.tx.app_limited,
        };
        self.cc.on_packet_lost(&mut self.st, &path, &info);
    }

    /// A batch the scoreboard already counted, reported one by one as if marked in order.
    fn report_losses(&mut self, lost: &mut Vec<Seg>, now: Nanos) {
        let mut total = self.sb.lost_total() - lost.iter().map(|s| s.len as u64).sum::<u64>();
        for seg in lost.drain(..) {
            total += seg.len as u64;
            self.report_loss(&seg, now, total);
        }
    }

    // ----- the shared timer -------------------------------------------------------------------

    /// Linux `tcp_set_xmit_timer`, after an ACK that advanced snd_una: a loss probe if one is
    /// allowed, else the RTO.
    pub(super) fn set_xmit_timer(&mut self, now: Nanos) {
        if !self.schedule_loss_probe(now, true) {
            self.rearm_rto(now);
        }
    }

    pub(super) fn rearm_rto(&mut self, now: Nanos) {
        if self.sb.len() == 0 {
            self.rto_timer.cancel();
            return;
        }
        let head_sent = self.sb.seg(0).tx.sent_time;
        self.timers.rearm_rto(&mut self.rto_timer, now, head_sent);
    }

    /// Linux `tcp_schedule_loss_probe`: with RACK-TLP, data outstanding and no recovery under
    /// way, probe after the probe timeout, but never later than the RTO would fire.
    pub(super) fn schedule_loss_probe(&mut self, now: Nanos, advancing_rto: bool) -> bool {
        let open = matches!(self.rec.ca_state(), CaState::Open | CaState::Cwr);
        if !self.rack_enabled() || self.sb.len() == 0 || !open || self.phase != Phase::Established {
            return false;
        }
        let mut timeout = tlp::probe_timeout(self.timers.rtt().srtt(), self.sb.len(), self.opt.rto_min);
        let rto_at = if advancing_rto {
            now + self.timers.rto()
        } else {
            self.sb.seg(0).tx.sent_time + self.timers.rto()
        };
        if rto_at > now {
            timeout = timeout.min(rto_at - now);
        }
        self.timers.arm(&mut self.rto_timer, Pending::Probe, now + timeout);
        true
    }

    /// What the retransmission timer was armed for decides what its expiry does.
    pub fn on_rto(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        match self.timers.pending() {
            Pending::Reorder if self.phase == Phase::Established => self.on_reorder_timeout(now, out),
            Pending::Probe if self.phase == Phase::Established => self.on_probe_timeout(now, out),
            _ => self.on_retransmission_timeout(now, out),
        }
        self.sync_cc_timer();
    }

    /// Linux `tcp_rack_reo_timeout`: the segments RACK was waiting on are due; mark them, open
    /// recovery if none is open (PRR as for one delivered segment), and fall back to the RTO.
    fn on_reorder_timeout(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let lost_before = self.sb.lost_total();
        let (_, lost_retransmission) = self.rack_detect(now, true);
        let newly_lost = self.sb.lost_total() - lost_before;
        if newly_lost > 0 {
            if let Some(cause) = self.rec.signal(newly_lost, lost_retransmission, false, false) {
                self.congestion(cause, now);
                let (pipe, mss) = (self.inflight(), self.mss());
                self.rec.prr_update(&mut self.st, mss, pipe, false, true);
                self.clamp_cwnd();
            }
            self.transmit(now, out);
        }
        if self.timers.pending() != Pending::Rto {
            self.rearm_rto(now);
        }
    }

    /// Linux `tcp_send_loss_probe`: one new segment if the windows let new data go (cwnd
    /// aside), else the highest segment again; at most one probe outstanding.
    fn on_probe_timeout(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.tlp.outstanding() || self.sb.len() == 0 {
            self.rearm_rto(now);
            return;
        }
        let sent_new = self.send_probe_of_new_data(now, out);
        if !sent_new {
            let last = self.sb.len() - 1;
            self.send_segment(last, true, now, out);
        }
        self.tlp.on_probe_sent(self.sb.snd_nxt(), !sent_new);
        // The RTO now counts from the probe.
        self.timers.restart(&mut self.rto_timer, now);
    }

    /// Linux `tcp_process_tlp_ack`: a retransmitted probe whose ACK covers data sent after it
    /// repaired a tail loss; reduce once, at once (CWR entered and left on the spot).
    pub(super) fn process_probe_ack(&mut self, ack: u64, a: &Acked, now: Nanos) {
        let pure_dupack = a.is_dupack && a.sacked == 0;
        if self.tlp.on_ack(ack, a.dsack, pure_dupack) != ProbeOutcome::Loss {
            return;
        }
        if let Reaction::Prr { ssthresh } = self.congestion(Cause::Loss, now) {
            self.st.cwnd = ssthresh;
        }
        self.clamp_cwnd();
        self.rec.close();
        let path = self.path(now);
        self.cc.on_episode_end(&mut self.st, &path, Cause::Loss);
    }

    /// The timer expired as an RTO (Linux `tcp_retransmit_timer`): resend the SYN, probe a
    /// closed window, or, with data outstanding, report the timeout and go back N (RFC 6298
    /// §5.4–5.6, RFC 5681 §3.1).
    fn on_retransmission_timeout(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        match self.phase {
            Phase::SynSent => {
                self.syn_retransmitted = true;
                self.timers.back_off();
                self.stats.timeouts += 1;
                self.send_syn(now, out);
                return;
            }
            Phase::Established if self.sb.flight_size() > 0 => {}
            Phase::Established if self.sb.snd_nxt() < self.app_end => {
                self.send_window_probe(now, out);
                return;
            }
            _ => return,
        }
        // The controller sees a fresh timeout (0) only when Linux would cut ssthresh; otherwise
        // how often the same data has timed out.
        let retries = self.timers.retries();
        let fresh = self.rec.rto_reduces(self.sb.snd_una(), retries);
        // Linux `tcp_enter_loss`: F-RTO judges a timeout that hit outside recovery, or a repeat.
        let outside_recovery =
            matches!(self.rec.ca_state(), CaState::Open | CaState::Disorder | CaState::Cwr);
        self.undo.frto = self.opt.frto && (outside_recovery || retries > 0);
        let reaction = self.congestion(Cause::Rto { backoffs: if fresh { 0 } else { retries.max(1) } }, now);
        self.timeout_mark_lost(now);
        if let Reaction::Prr { .. } = reaction {
            // Linux `tcp_enter_loss`: restart from what is still in flight, plus one.
            self.st.cwnd = self.inflight() + self.mss();
        }
        self.clamp_cwnd();
        self.timers.back_off();
        self.timers.count_retry();
        self.stats.timeouts += 1;
        self.timers.restart(&mut self.rto_timer, now);
        self.transmit(now, out);
    }

    /// Linux `tcp_timeout_mark_lost`: the head and everything not SACKed is lost, except, with
    /// RACK, segments sent within the last RACK RTT (they may still arrive).
    fn timeout_mark_lost(&mut self, now: Nanos) {
        let rack = self.rack_enabled();
        let rtt = self.rack.rtt();
        let mut lost = std::mem::take(&mut self.lost_buf);
        self.sb.enter_loss(|seg| rack && seg.tx.sent_time + rtt > now, |seg| lost.push(*seg));
        self.report_losses(&mut lost, now);
        self.lost_buf = lost;
    }
}
