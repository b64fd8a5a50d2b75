//! Startup, Drain and ProbeRTT, full-pipe detection and the two-level min-RTT filter.

use super::{Engine, Generation, Mode, Sample, UNSET};
use crate::bbr::mode::{FULL_BW_CNT, FULL_BW_THRESH};
use crate::{CaState, CcState, PathInfo};

impl<C: Generation> Engine<C> {
    /// Linux `bbr_reset_full_bw`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// Linux `bbr_check_full_bw_reached`, v2alpha's or v3's.
    pub(super) fn check_full_bw_reached(&mut self, s: &Sample) {
        if self.v3() {
            self.check_full_bw_reached_v3(s);
        } else {
            self.check_full_bw_reached_v2(s);
        }
    }

    /// v2alpha (as v1) on the max filter: the pipe is full after three non-app-limited rounds
    /// without 25 % growth.
    fn check_full_bw_reached_v2(&mut self, s: &Sample) {
        if self.full_bw_reached || !self.round_start || s.is_app_limited {
            return;
        }
        let bw = self.max_bw();
        if bw >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = bw;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// v3: any non-app-limited sample 25 % above the baseline restarts the count (on every
    /// ACK, with the sample's own rate, not the max filter); each round start without one
    /// counts, and three make `full_bw_now` (the pipe looks full; in Startup this sets
    /// `full_bw_reached`, in UP it ends the probe).
    fn check_full_bw_reached_v3(&mut self, s: &Sample) {
        if self.full_bw_now || s.is_app_limited {
            return;
        }
        if s.bw >= self.full_bw * FULL_BW_THRESH {
            self.reset_full_bw();
            self.full_bw = s.bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// Linux `bbr_check_loss_too_high_in_startup`: at the end of a loss round in Recovery
    /// with at least `full_loss_cnt` loss events and a loss rate above `loss_thresh`, the pipe
    /// is full. App-limited samples count too.
    pub(super) fn check_loss_too_high_in_startup(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        if self.full_bw_reached {
            return;
        }
        if s.losses > 0 {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(15);
        }
        let cnt = self.t.full_loss_cnt;
        if cnt > 0
            && self.loss_round_start
            && path.state == CaState::Recovery
            && self.loss_events_in_round >= cnt
            && self.is_inflight_too_high(s)
        {
            self.handle_queue_too_high_in_startup(st, path.mss as u64);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// Linux `bbr_handle_queue_too_high_in_startup`: `inflight_hi` is the BDP (v2alpha), or
    /// the larger of the BDP and what the last round delivered (v3).
    pub(super) fn handle_queue_too_high_in_startup(&mut self, st: &CcState, mss: u64) {
        self.full_bw_reached = true;
        let bdp = self.inflight(self.max_bw(), 1.0, st, mss);
        self.inflight_hi = if self.v3() { bdp.max(self.inflight_latest) } else { bdp };
    }

    /// Linux `bbr_check_drain`: Startup → Drain once the pipe is full, Drain → ProbeBW
    /// (DOWN) once in flight is down to the BDP.
    pub(super) fn check_drain(&mut self, st: &mut CcState, path: &PathInfo) {
        let mss = path.mss as u64;
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight(self.max_bw(), 1.0, st, mss);
            self.reset_congestion_signals();
        }
        let bdp = self.inflight(self.max_bw(), 1.0, st, mss);
        if self.mode == Mode::Drain && self.in_net_at_edt(path.inflight, st, mss) <= bdp {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(path);
        }
    }

    /// Linux `bbr_update_min_rtt`: `probe_rtt_min` keeps the lowest RTT of the last 5 s (an
    /// equal sample refreshes it in v2alpha, v3 takes only a strictly lower one; any sample
    /// once expired) and feeds the 10 s `min_rtt`; when it expires, ProbeRTT holds
    /// `probe_rtt_cwnd` for `max(probe_rtt_time, 1 round)`.
    pub(super) fn update_min_rtt(&mut self, st: &mut CcState, path: &PathInfo, s: &Sample) {
        let now = path.now;
        let probe_rtt_expired = now > self.probe_rtt_min_stamp.saturating_add(self.t.probe_rtt_window);
        if let Some(rtt) = s.rtt {
            let lower = |m| if self.v3() { rtt < m } else { rtt <= m };
            if self.probe_rtt_min.is_none_or(lower) || probe_rtt_expired {
                self.probe_rtt_min = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp.saturating_add(self.t.min_rtt_window);
        let lower = match (self.probe_rtt_min, self.min_rtt) {
            (Some(p), Some(m)) => p <= m,
            (p, _) => p.is_some(),
        };
        if lower || (min_rtt_expired && self.probe_rtt_min.is_some()) {
            self.min_rtt = self.probe_rtt_min;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.t.probe_rtt_time > 0 && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt
        {
            self.enter_probe_rtt(st, path);
        }
        if self.mode == Mode::ProbeRtt {
            self.hold_probe_rtt(st, path);
        }
        if s.delivered > 0 {
            self.idle_restart = false;
        }
    }

    fn enter_probe_rtt(&mut self, st: &CcState, path: &PathInfo) {
        self.mode = Mode::ProbeRtt;
        self.save_cwnd(st);
        self.probe_rtt_done = None;
        self.ack_phase = super::AckPhase::ProbeStopping;
        self.rounds.restart(path.delivered);
    }

    /// The clock starts once in flight is at the ProbeRTT window; then one round and
    /// `probe_rtt_time` must pass.
    fn hold_probe_rtt(&mut self, st: &mut CcState, path: &PathInfo) {
        match self.probe_rtt_done {
            None if path.inflight <= self.probe_rtt_cwnd(path.mss as u64) => {
                self.probe_rtt_done = Some(path.now + self.t.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.rounds.restart(path.delivered);
            }
            None => {}
            Some(_) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(st, path);
                }
            }
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: schedule the next ProbeRTT 5 s on, restore the
    /// window, and go back to probing.
    pub(super) fn check_probe_rtt_done(&mut self, st: &mut CcState, path: &PathInfo) {
        if self.probe_rtt_done.is_none_or(|done| path.now <= done) {
            return;
        }
        self.probe_rtt_min_stamp = path.now;
        st.cwnd = st.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(path);
    }

    /// Linux `bbr_exit_probe_rtt`: in flight is below the BDP, so cruise (after a DOWN
    /// start that draws the next probe time); Startup if the pipe was never full.
    fn exit_probe_rtt(&mut self, path: &PathInfo) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(path);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Linux `bbr_set_state(TCP_CA_Loss)`: restart full-pipe detection (v2alpha: `full_bw`
    /// alone; v3: `bbr_reset_full_bw`); outside probing, the saved window (v3: the larger of
    /// it and cwnd) becomes `inflight_lo` so the loss round can cut from it. Called before
    /// the RTO sets cwnd.
    pub(super) fn enter_loss_state(&mut self, st: &CcState) {
        self.prev_ca_state = CaState::Loss;
        if self.v3() {
            self.reset_full_bw();
        } else {
            self.full_bw = 0.0;
        }
        if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
            self.inflight_lo = if self.v3() { st.cwnd.max(self.prior_cwnd) } else { self.prior_cwnd };
        }
    }
}
