//! BBRv2's ProbeBW cycle (v2alpha `tcp_bbr2.c`): DOWN → CRUISE → REFILL → UP → DOWN, the
//! randomised wall-clock probe wait, the Reno-coexistence round bound, and the upper bounds
//! that probing adapts.

use super::{Bbr2, Mode, Sample, UNSET};
use crate::{CcState, Nanos, PathInfo};

/// ProbeBW phases (Linux `enum bbr_pacing_gain_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Push in flight up (pacing gain 1.25) to probe for bandwidth.
    Up,
    /// Drain what the probe queued (0.75) until in flight leaves headroom and fits the BDP.
    Down,
    /// Pace at the estimate, in flight below `inflight_hi` less headroom.
    Cruise,
    /// One round at the estimate with the lower bounds lifted, to fill the pipe before UP.
    Refill,
}

impl Phase {
    /// `bbr_pacing_gain[]` for the phases v2 uses.
    pub fn pacing_gain(self) -> f64 {
        match self {
            Phase::Up => 1.25,
            Phase::Down => 0.75,
            Phase::Cruise | Phase::Refill => 1.0,
        }
    }
}

/// What the arriving ACKs say about probing (Linux `enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

impl Bbr2 {
    fn has_elapsed_in_phase(&self, now: Nanos, interval: Nanos) -> bool {
        now > self.cycle_stamp.saturating_add(interval)
    }

    /// Linux `bbr2_advance_max_bw_filter`: keep the max of the last one or two cycles.
    fn advance_max_bw_filter(&mut self) {
        if self.max_bw[1] == 0.0 {
            return;
        }
        self.max_bw = [self.max_bw[1], 0.0];
    }

    /// Linux `bbr2_pick_probe_wait` with the connection clock as the random source: a round
    /// offset of `now_ms mod bw_probe_rand_rounds` and a wall-clock wait of
    /// `bw_probe_base + now_µs mod bw_probe_rand`.
    fn pick_probe_wait(&mut self, now: Nanos) {
        let rand_rounds = self.cfg.bw_probe_rand_rounds;
        self.rounds_since_probe = if rand_rounds > 0 { (now / 1_000_000) % rand_rounds } else { 0 };
        let rand_us = self.cfg.bw_probe_rand / 1_000;
        let jitter_us = if rand_us > 0 { (now / 1_000) % rand_us } else { 0 };
        self.probe_wait = self.cfg.bw_probe_base + jitter_us * 1_000;
    }

    /// Linux `bbr2_is_reno_coexistence_probe_time`: probe at least every
    /// `min(bw_probe_max_rounds, reno_gain · target in packets)` rounds, as often as a Reno
    /// flow with our BDP would see its loss epochs.
    fn is_reno_coexistence_probe_time(&self, st: &CcState, mss: u64) -> bool {
        let mut rounds = self.cfg.bw_probe_max_rounds;
        if self.cfg.bw_probe_reno_gain > 0.0 {
            let target_pkts = self.target_inflight(st, mss) / mss;
            rounds = rounds.min((target_pkts as f64 * self.cfg.bw_probe_reno_gain) as u64);
        }
        self.rounds_since_probe >= rounds
    }

    /// Linux `bbr2_raise_inflight_hi_slope`: each UP round doubles the growth of `inflight_hi`.
    fn raise_inflight_hi_slope(&mut self, st: &CcState, mss: u64) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (st.cwnd / mss / growth_this_round).max(1);
    }

    /// Linux `bbr2_probe_inflight_hi_upward`: while UP is cwnd-limited at `inflight_hi`,
    /// raise it by one packet per `bw_probe_up_cnt` packets delivered.
    fn probe_inflight_hi_upward(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        let mss = path.mss as u64;
        if !path.is_cwnd_limited || st.cwnd < self.inflight_hi {
            self.bw_probe_up_acks = 0;
            return;
        }
        self.bw_probe_up_acks += s.acked_sacked;
        let step = self.bw_probe_up_cnt.saturating_mul(mss);
        if self.bw_probe_up_acks >= step {
            let delta = self.bw_probe_up_acks / step;
            self.bw_probe_up_acks -= delta * step;
            self.inflight_hi += delta * mss;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(st, mss);
        }
    }

    /// Linux `bbr2_adapt_upper_bounds`. Returns whether it already changed phase.
    fn adapt_upper_bounds(&mut self, st: &CcState, path: &PathInfo, s: &Sample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The probe's samples are all in: a good time to forget the previous cycle's bw.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !s.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(path, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(s) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(st, path, s);
            }
            return false;
        }
        self.got_ok_bw_probe_sample |= self.bw_probe_samples;
        if self.inflight_hi == UNSET && self.bw_hi.is_infinite() {
            return false;
        }
        // Resilience to random loss: any level seen safe raises the bounds.
        if s.tx_in_flight > self.inflight_hi {
            self.inflight_hi = s.tx_in_flight;
        }
        if s.bw > self.bw_hi {
            self.bw_hi = s.bw;
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.probe_inflight_hi_upward(st, path, s);
        }
        false
    }

    /// Linux `bbr2_check_time_to_probe_bw` (without `ecn_reprobe_gain`, 0 upstream).
    fn check_time_to_probe_bw(&mut self, st: &CcState, path: &PathInfo) -> bool {
        let mss = path.mss as u64;
        if self.has_elapsed_in_phase(path.now, self.probe_wait)
            || self.is_reno_coexistence_probe_time(st, mss)
        {
            self.start_bw_probe_refill(path, 0);
            return true;
        }
        false
    }

    /// Linux `bbr2_check_time_to_cruise` with `bbr_drain_to_target`: in flight must leave the
    /// headroom and fit the BDP.
    fn check_time_to_cruise(&self, inflight: u64, bw: f64, st: &CcState, mss: u64) -> bool {
        inflight <= self.inflight_with_headroom(mss) && inflight <= self.inflight(bw, 1.0, st, mss)
    }

    /// Linux `bbr2_update_cycle_phase`: the ProbeBW state machine, run once the pipe was full.
    pub(super) fn update_cycle_phase(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        if !self.full_bw_reached || self.adapt_upper_bounds(st, path, s) || self.mode != Mode::ProbeBw {
            return;
        }
        let mss = path.mss as u64;
        let inflight = self.in_net_at_edt(s.prior_inflight, st, mss);
        let bw = self.max_bw();
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(st, path);
            }
            Phase::Refill => {
                // A round of REFILL: its samples now reflect the refilled pipe.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(st, path);
                }
            }
            Phase::Up => {
                let risky = self.prev_probe_too_high && inflight >= self.inflight_hi;
                let queuing = !risky
                    && self.has_elapsed_in_phase(path.now, self.min_rtt.unwrap_or(Nanos::MAX))
                    && inflight >= self.inflight(bw, self.cfg.bw_probe_pif_gain, st, mss);
                self.stopped_risky_probe |= risky;
                if risky || queuing {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(path);
                }
            }
            Phase::Down => {
                if !self.check_time_to_probe_bw(st, path) && self.check_time_to_cruise(inflight, bw, st, mss)
                {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    /// Linux `bbr2_start_bw_probe_refill`: lift the lower bounds and fill the pipe for a round.
    pub(super) fn start_bw_probe_refill(&mut self, path: &PathInfo, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.got_ok_bw_probe_sample = false;
        self.ack_phase = AckPhase::Refilling;
        self.rounds.restart(path.delivered);
        self.phase = Phase::Refill;
    }

    /// Linux `bbr2_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, st: &CcState, path: &PathInfo) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.rounds.restart(path.delivered);
        self.cycle_stamp = path.now;
        self.phase = Phase::Up;
        self.raise_inflight_hi_slope(st, path.mss as u64);
    }

    /// Linux `bbr2_start_bw_probe_down`: a new cycle; draw when the next probe may start.
    pub(super) fn start_bw_probe_down(&mut self, path: &PathInfo) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait(path.now);
        self.cycle_stamp = path.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.rounds.restart(path.delivered);
        self.phase = Phase::Down;
    }

    /// Linux `bbr2_start_bw_probe_cruise`.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = Phase::Cruise;
    }
}
