//! The bounds on the model: the long-term `inflight_hi` (and v2alpha's `bw_hi`) learnt from
//! loss or ECN while probing, the short-term `inflight_lo` / `bw_lo` cut in rounds with loss
//! or ECN outside probing, the headroom kept under `inflight_hi`, and the congestion signals
//! (per-round loss and delivery, ECN `alpha`) behind them.

use std::collections::VecDeque;

use super::{Engine, Generation, Sample, UNSET};
use crate::{AckSample, CcState, LossInfo, PathInfo};

/// DCTCP-style ECN state (`ecn_alpha` and the CE byte count behind `rs->delivered_ce`).
#[derive(Clone, Debug)]
pub struct EcnState {
    /// The flow uses the ECN logic (`ecn_eligible`: `ecn` on, `ecn_factor` > 0 and
    /// `min_rtt ≤ ecn_max_rtt` once); sticky.
    pub eligible: bool,
    /// EWMA of the CE fraction per round, starting at 1 (`bbr_ecn_alpha_init`).
    pub alpha: f64,
    /// CE-marked bytes delivered so far (`tp->delivered_ce`, in bytes).
    pub delivered_ce: u64,
    last_delivered: u64,
    last_delivered_ce: u64,
    startup_rounds: u64,
    /// `(delivered, delivered_ce)` after each ACK, so a sample can count the CE bytes of its
    /// own interval (Linux stamps `tx.delivered_ce` on each packet instead).
    history: VecDeque<(u64, u64)>,
}

impl Default for EcnState {
    fn default() -> Self {
        Self::new(0)
    }
}

impl EcnState {
    /// Linux `bbr_init` zeroes `alpha_last_delivered`; counting from the connection's
    /// start is the same thing here.
    pub fn new(delivered: u64) -> Self {
        Self {
            eligible: false,
            alpha: 1.0,
            delivered_ce: 0,
            last_delivered: delivered,
            last_delivered_ce: 0,
            startup_rounds: 0,
            history: VecDeque::from([(delivered, 0)]),
        }
    }

    /// Counts this ACK's CE bytes (v3): with accurate ECN (AccECN), the CE byte counter
    /// (`ce_bytes`), else the CE packet count (`ce_delta` segments); with classic feedback
    /// every byte an ECE-carrying ACK delivers (what Linux's `delivered_ce` counts with a
    /// DCTCP-style receiver).
    pub(crate) fn on_ack(&mut self, delivered: u64, acked: u64, ack: &AckSample, mss: u64) {
        if ack.ce_bytes > 0 {
            self.count(delivered, acked, ack.ce_bytes.min(acked));
        } else {
            self.on_ack_packets(delivered, acked, ack, mss);
        }
    }

    /// Counts this ACK's CE bytes as v2alpha: `ce_delta` segments when the stack has
    /// accurate ECN, otherwise every byte an ECE-carrying ACK delivers.
    pub(super) fn on_ack_packets(&mut self, delivered: u64, acked: u64, ack: &AckSample, mss: u64) {
        let ce = if ack.ce_delta > 0 {
            (ack.ce_delta as u64 * mss).min(acked)
        } else if ack.ece {
            acked
        } else {
            0
        };
        self.count(delivered, acked, ce);
    }

    fn count(&mut self, delivered: u64, acked: u64, ce: u64) {
        self.delivered_ce += ce;
        if acked > 0 {
            self.history.push_back((delivered, self.delivered_ce));
        }
    }

    /// CE bytes delivered since `delivered` was `prior_delivered`.
    pub(crate) fn ce_since(&mut self, prior_delivered: u64) -> u64 {
        while self.history.len() > 1 && self.history[1].0 <= prior_delivered {
            self.history.pop_front();
        }
        let base = self.history.front().map_or(0, |&(_, ce)| ce);
        self.delivered_ce - base
    }
}

impl<C: Generation> Engine<C> {
    /// Linux `bbr_update_ecn_alpha`, once per round: become ECN-eligible on a short path and
    /// `alpha += gain · (ce_ratio − alpha)` over what was delivered since the last update. v3
    /// moves alpha only once eligible (PLB, the other user of alpha, is omitted); v2alpha
    /// moves it with `ecn` on and becomes eligible in a round that delivered something.
    pub(super) fn update_ecn_alpha(&mut self, path: &PathInfo, st: &CcState) {
        let cfg = &self.t;
        if !cfg.ecn || cfg.ecn_factor == 0.0 {
            return;
        }
        let rtt_ok = cfg.ecn_max_rtt == 0 || self.min_rtt.is_some_and(|r| r <= cfg.ecn_max_rtt);
        if self.v3() {
            self.ecn.eligible |= rtt_ok;
            if !self.ecn.eligible {
                return;
            }
        }
        let e = &mut self.ecn;
        let delivered = path.delivered.saturating_sub(e.last_delivered);
        if delivered == 0 {
            return;
        }
        e.eligible |= rtt_ok;
        let ce_ratio = (e.delivered_ce - e.last_delivered_ce) as f64 / delivered as f64;
        let g = self.t.ecn_alpha_gain;
        e.alpha = ((1.0 - g) * e.alpha + g * ce_ratio).min(1.0);
        e.last_delivered = path.delivered;
        e.last_delivered_ce = e.delivered_ce;
        self.check_ecn_too_high_in_startup(ce_ratio, st, path.mss as u64);
    }

    /// Linux `bbr_check_ecn_too_high_in_startup`: `full_ecn_cnt` consecutive rounds with
    /// a CE ratio of at least `ecn_thresh` end Startup.
    fn check_ecn_too_high_in_startup(&mut self, ce_ratio: f64, st: &CcState, mss: u64) {
        let cfg = &self.t;
        if self.full_bw_reached || !self.ecn.eligible || cfg.full_ecn_cnt == 0 || cfg.ecn_thresh == 0.0 {
            return;
        }
        if ce_ratio >= cfg.ecn_thresh {
            self.ecn.startup_rounds += 1;
        } else {
            self.ecn.startup_rounds = 0;
        }
        if self.ecn.startup_rounds >= cfg.full_ecn_cnt {
            self.handle_queue_too_high_in_startup(st, mss);
        }
    }

    /// Linux `bbr_ecn_cut`: what remains after an ECN cut, `1 − alpha · ecn_factor`.
    pub fn ecn_cut(&self) -> f64 {
        1.0 - self.ecn.alpha * self.t.ecn_factor
    }

    /// The ECN state (eligibility, alpha, CE count).
    pub fn ecn_state(&self) -> &EcnState {
        &self.ecn
    }

    /// Linux `bbr_is_inflight_too_high`: more than `loss_thresh` of what was in flight at the
    /// sample's send was lost, or (ECN-eligible) at least (v3: more than) `ecn_thresh` of what
    /// it delivered was CE.
    pub(super) fn is_inflight_too_high(&self, s: &Sample) -> bool {
        if s.lost > 0 && s.tx_in_flight > 0 && s.lost as f64 > s.tx_in_flight as f64 * self.t.loss_thresh {
            return true;
        }
        let (ce, limit) = (s.delivered_ce as f64, s.delivered as f64 * self.t.ecn_thresh);
        self.ecn.eligible
            && self.t.ecn_thresh > 0.0
            && s.delivered_ce > 0
            && s.delivered > 0
            && if self.v3() { ce > limit } else { ce >= limit }
    }

    /// Linux `bbr_inflight_hi_from_lost_skb`: the in-flight level at which the loss rate
    /// crossed `loss_thresh` inside the lost packet of `bytes`, solving
    /// `(lost_prev + x) / (inflight_prev + x) = thresh` for the prefix `x`.
    pub(crate) fn inflight_hi_from_lost_skb(&self, s: &Sample, bytes: u64) -> u64 {
        let inflight_prev = s.tx_in_flight.saturating_sub(bytes);
        let lost_prev = s.lost.saturating_sub(bytes);
        let thresh = self.t.loss_thresh;
        let budget = (inflight_prev as f64 * thresh).ceil() as u64;
        let prefix =
            if lost_prev >= budget { 0 } else { ((budget - lost_prev) as f64 / (1.0 - thresh)) as u64 };
        inflight_prev + prefix
    }

    /// Linux `bbr_inflight_with_headroom`: `inflight_hi` less 15 % (at least one packet),
    /// never below 4 packets.
    pub(super) fn inflight_with_headroom(&self, mss: u64) -> u64 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = ((self.inflight_hi as f64 * self.t.inflight_headroom) as u64).max(mss);
        self.inflight_hi.saturating_sub(headroom).max(crate::bbr::mode::CWND_MIN_TARGET * mss)
    }

    /// Linux `bbr_adapt_lower_bounds`, once per loss round outside probing: ECN cuts
    /// `inflight_lo` (v2alpha: and `bw_lo`) to `1 − alpha/3`, loss cuts both to `beta`, never
    /// below what the last round delivered; the lower of the two levels wins. v3 floors
    /// `bw_lo` at 1 B/s (`max(1U, bw_lo)`).
    fn adapt_lower_bounds(&mut self, st: &CcState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let cut_bw = !self.v3();
        let (mut ecn_inflight_lo, mut ecn_bw_lo) = (UNSET, f64::INFINITY);
        if self.ecn_in_round && self.ecn.eligible && self.t.ecn_factor > 0.0 {
            let cut = self.ecn_cut();
            self.init_lower_bounds(st, cut_bw);
            ecn_inflight_lo = (self.inflight_lo as f64 * cut) as u64;
            if cut_bw {
                ecn_bw_lo = self.bw_lo * cut;
            }
        }
        if self.loss_in_round {
            self.init_lower_bounds(st, true);
            let beta = self.t.beta;
            self.bw_lo = self.bw_latest.max(self.bw_lo * beta);
            self.inflight_lo = self.inflight_latest.max((self.inflight_lo as f64 * beta) as u64);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.min(ecn_bw_lo);
        if self.v3() {
            self.bw_lo = self.bw_lo.max(1.0);
        }
    }

    /// Linux `bbr_init_lower_bounds`.
    fn init_lower_bounds(&mut self, st: &CcState, init_bw: bool) {
        if init_bw && self.bw_lo.is_infinite() {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNSET {
            self.inflight_lo = st.cwnd;
        }
    }

    /// Linux `bbr_reset_lower_bounds`.
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = f64::INFINITY;
        self.inflight_lo = UNSET;
    }

    /// Linux `bbr_reset_congestion_signals` (with v3's per-cycle flags).
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
    }

    /// Linux `bbr_update_latest_delivery_signals`: the latest round's maximum rate and
    /// volume, and whether this ACK starts a new loss round.
    pub(super) fn update_latest_delivery_signals(&mut self, path: &PathInfo, s: &Sample) {
        self.loss_round_start = false;
        if !s.valid {
            return;
        }
        self.bw_latest = self.bw_latest.max(s.bw);
        self.inflight_latest = self.inflight_latest.max(s.delivered);
        if s.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = path.delivered;
            self.loss_round_start = true;
        }
    }

    /// Linux `bbr_advance_latest_delivery_signals`: a new loss round starts from this
    /// sample (the TLP exception is omitted: the stack reports no TLP). v2alpha does this
    /// right after the lower bounds adapt (`bbr2_update_congestion_signals`), v3 at the end
    /// of `bbr_main`.
    pub(super) fn advance_latest_delivery_signals(&mut self, s: &Sample) {
        if self.loss_round_start {
            self.bw_latest = s.bw;
            self.inflight_latest = s.delivered;
        }
    }

    /// Linux `bbr_update_congestion_signals`: feed the max filter, note loss, and at each
    /// loss-round start adapt the lower bounds.
    pub(super) fn update_congestion_signals(&mut self, st: &CcState, s: &Sample) {
        if !s.valid {
            return;
        }
        if !s.is_app_limited || s.bw >= self.max_bw() {
            self.take_max_bw_sample(s.bw);
        }
        self.loss_in_round |= s.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(st);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// Linux `bbr_handle_inflight_too_high`: once per probe, `inflight_hi` drops to what was
    /// in flight (at least `beta` of the target), and an UP phase ends.
    pub(super) fn handle_inflight_too_high(&mut self, st: &CcState, path: &PathInfo, s: &Sample) {
        let mss = path.mss as u64;
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !s.is_app_limited {
            let floor = (self.target_inflight(st, mss) as f64 * self.t.beta) as u64;
            self.inflight_hi = s.tx_in_flight.max(floor);
            if !self.v3() {
                self.handle_inflight_too_high_via_ecn();
            }
        }
        if self.mode == super::Mode::ProbeBw && self.phase == super::Phase::Up {
            self.start_bw_probe_down(path);
        }
    }

    /// Linux `bbr2_handle_inflight_too_high_via_ecn` (`bbr_ecn_bw_hi` on; v2alpha only).
    fn handle_inflight_too_high_via_ecn(&mut self) {
        if self.ecn.eligible && !self.got_ok_bw_probe_sample {
            let bw_hi = if self.bw_hi.is_infinite() { self.max_bw() } else { self.bw_hi };
            self.bw_hi = bw_hi * self.ecn_cut();
        }
    }

    /// Linux `bbr_skb_marked_lost` (with v3's `bbr_note_loss`): start a loss round, note loss
    /// in the cycle; while probing, see whether the loss rate up to this packet crossed
    /// `loss_thresh` and if so set `inflight_hi` at the crossing point.
    pub(super) fn skb_marked_lost(&mut self, st: &CcState, path: &PathInfo, lost: &LossInfo) {
        if !self.loss_in_round {
            self.loss_round_delivered = path.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
        if !self.bw_probe_samples {
            return;
        }
        let mut s = Sample {
            tx_in_flight: lost.tx_in_flight,
            lost: lost.lost_since_tx,
            is_app_limited: lost.tx_app_limited,
            ..Default::default()
        };
        if self.is_inflight_too_high(&s) {
            s.tx_in_flight = self.inflight_hi_from_lost_skb(&s, lost.bytes as u64);
            self.handle_inflight_too_high(st, path, &s);
        }
    }
}
