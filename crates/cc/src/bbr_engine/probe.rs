//! The ProbeBW cycle: DOWN → CRUISE → REFILL → UP → DOWN, the randomised wall-clock probe
//! wait, the Reno-coexistence round bound, v3's ECN re-probe, and the upper bounds that
//! probing adapts.

use super::{Engine, Generation, Mode, Sample, UNSET};
use crate::{CaState, CcState, Nanos, PathInfo};

/// ProbeBW phases (Linux `enum bbr_pacing_gain_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Push in flight up (pacing gain 1.25; v3's cwnd gain 2.25) to probe for bandwidth.
    Up,
    /// Drain what the probe queued (v2alpha 0.75, v3 0.91) until in flight leaves headroom and fits the BDP.
    Down,
    /// Pace at the estimate, in flight below `inflight_hi` less headroom.
    Cruise,
    /// One round at the estimate with the lower bounds lifted, to fill the pipe before UP.
    Refill,
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

impl<C: Generation> Engine<C> {
    fn has_elapsed_in_phase(&self, now: Nanos, interval: Nanos) -> bool {
        now > self.cycle_stamp.saturating_add(interval)
    }

    /// Linux `bbr_take_max_bw_sample`.
    pub(super) fn take_max_bw_sample(&mut self, bw: f64) {
        self.max_bw[1] = self.max_bw[1].max(bw);
    }

    /// Linux `bbr_advance_max_bw_filter`: keep the max of the last one or two cycles.
    fn advance_max_bw_filter(&mut self) {
        if self.max_bw[1] == 0.0 {
            return;
        }
        self.max_bw = [self.max_bw[1], 0.0];
    }

    /// Linux `bbr_pick_probe_wait` with the connection clock as the random source: a round
    /// offset of `now_ms mod bw_probe_rand_rounds` and a wall-clock wait of
    /// `bw_probe_base + now_µs mod bw_probe_rand`.
    fn pick_probe_wait(&mut self, now: Nanos) {
        let rand_rounds = self.t.bw_probe_rand_rounds;
        self.rounds_since_probe = if rand_rounds > 0 { (now / 1_000_000) % rand_rounds } else { 0 };
        let rand_us = self.t.bw_probe_rand / 1_000;
        let jitter_us = if rand_us > 0 { (now / 1_000) % rand_us } else { 0 };
        self.probe_wait = self.t.bw_probe_base + jitter_us * 1_000;
    }

    /// Linux `bbr_is_reno_coexistence_probe_time`: probe at least every
    /// `min(bw_probe_max_rounds, reno_gain · target in packets)` rounds, as often as a Reno
    /// flow with our BDP would see its loss epochs (v3: reno gain 1).
    fn is_reno_coexistence_probe_time(&self, st: &CcState, mss: u64) -> bool {
        let mut rounds = self.t.bw_probe_max_rounds;
        if self.t.bw_probe_reno_gain > 0.0 {
            let target_pkts = self.target_inflight(st, mss) / mss;
            rounds = rounds.min((target_pkts as f64 * self.t.bw_probe_reno_gain) as u64);
        }
        self.rounds_since_probe >= rounds
    }

    /// Linux `bbr_raise_inflight_hi_slope`: each UP round doubles the growth of `inflight_hi`.
    fn raise_inflight_hi_slope(&mut self, st: &CcState, mss: u64) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (st.cwnd / mss / growth_this_round).max(1);
    }

    /// Linux `bbr_probe_inflight_hi_upward`: while UP is cwnd-limited at `inflight_hi`,
    /// raise it by one packet per `bw_probe_up_cnt` packets delivered.
    fn probe_inflight_hi_upward(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        let mss = path.mss as u64;
        if !path.is_cwnd_limited || st.cwnd < self.inflight_hi {
            if !self.v3() {
                // v2alpha starts the count again; v3 keeps it.
                self.bw_probe_up_acks = 0;
            }
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

    /// Linux `bbr_adapt_upper_bounds` (`bw_hi` moves in v2alpha only: in v3 it stays
    /// infinite). Returns whether it already changed phase.
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

    /// Linux `bbr_check_time_to_probe_bw`: with v3's ECN re-probe (`ecn_reprobe_gain` > 0;
    /// 0 in v2alpha), after a cycle with CE marks but no loss (ECN in use, CA state Open)
    /// probe again at once, starting UP's growth at
    /// `2^floor(log2(ecn_reprobe_gain · inflight_hi in packets))`; otherwise once the
    /// wall-clock wait or the Reno-coexistence round count has passed.
    fn check_time_to_probe_bw(&mut self, st: &CcState, path: &PathInfo) -> bool {
        let mss = path.mss as u64;
        if self.t.ecn_reprobe_gain > 0.0
            && self.ecn.eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && path.state == CaState::Open
        {
            let hi_pkts = if self.inflight_hi == UNSET { u32::MAX as u64 } else { self.inflight_hi / mss };
            let target = (hi_pkts as f64 * self.t.ecn_reprobe_gain) as u64;
            let n = target.checked_ilog2().unwrap_or(0).min(30);
            self.start_bw_probe_refill(path, n);
            return true;
        }
        if self.has_elapsed_in_phase(path.now, self.probe_wait)
            || self.is_reno_coexistence_probe_time(st, mss)
        {
            self.start_bw_probe_refill(path, 0);
            return true;
        }
        false
    }

    /// Linux `bbr_check_time_to_cruise` with `bbr_drain_to_target`: in flight must leave the
    /// headroom and fit the BDP.
    fn check_time_to_cruise(&self, inflight: u64, bw: f64, st: &CcState, mss: u64) -> bool {
        inflight <= self.inflight_with_headroom(mss) && inflight <= self.inflight(bw, 1.0, st, mss)
    }

    /// Linux `bbr_update_cycle_phase`: the ProbeBW state machine, run once the pipe was full.
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
                    self.start_bw_probe_up(st, path, s);
                }
            }
            Phase::Up => {
                // UP ends when a probe that went too high last time reaches inflight_hi again,
                // or (v2alpha) after a min RTT at `bw_probe_pif_gain` · BDP, or (v3) when the
                // delivery rate plateaus (full_bw_now) while inflight_hi does not limit it.
                let risky = self.prev_probe_too_high && inflight >= self.inflight_hi;
                let done = if risky {
                    true
                } else if !self.v3() {
                    self.has_elapsed_in_phase(path.now, self.min_rtt.unwrap_or(Nanos::MAX))
                        && inflight >= self.inflight(bw, self.t.bw_probe_pif_gain, st, mss)
                } else if path.is_cwnd_limited && st.cwnd >= self.inflight_hi {
                    // inflight_hi limits bw growth: restart the plateau detector.
                    self.reset_full_bw();
                    self.full_bw = s.bw;
                    false
                } else {
                    self.full_bw_now
                };
                self.stopped_risky_probe |= risky;
                if done {
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

    /// Linux `bbr_start_bw_probe_refill`: lift the lower bounds and fill the pipe for a round.
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

    /// Linux `bbr_start_bw_probe_up`; v3 also restarts the plateau detector from this
    /// sample's rate.
    fn start_bw_probe_up(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.rounds.restart(path.delivered);
        self.cycle_stamp = path.now;
        if self.v3() {
            self.reset_full_bw();
            self.full_bw = s.bw;
        }
        self.phase = Phase::Up;
        self.raise_inflight_hi_slope(st, path.mss as u64);
    }

    /// Linux `bbr_start_bw_probe_down`: a new cycle; draw when the next probe may start.
    pub(super) fn start_bw_probe_down(&mut self, path: &PathInfo) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait(path.now);
        self.cycle_stamp = path.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.rounds.restart(path.delivered);
        self.phase = Phase::Down;
    }

    /// Linux `bbr_start_bw_probe_cruise`.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = Phase::Cruise;
    }
}
