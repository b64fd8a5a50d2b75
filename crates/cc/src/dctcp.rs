//! DCTCP (RFC 8257) as Linux `net/ipv4/tcp_dctcp.c` runs it over Reno.
//!
//! Read from: RFC 8257 §3.3 (the sender's α estimate and its reaction to ECN-Echo) and §3.5
//! (loss "in the same way as conventional TCP", as cited by the Linux commit below); Linux
//! `tcp_dctcp.c` as in torvalds/linux today (`dctcp_update_alpha`, `dctcp_ssthresh`,
//! `dctcp_react_to_loss`, `dctcp_state`, `dctcp_cwnd_event`, `dctcp_cwnd_undo`; `.cong_avoid =
//! tcp_reno_cong_avoid`), and the same file in L4STeam/linux (identical logic, plus `dctcp_ect`).
//!
//! * α, once per window of data (RFC 8257 §3.3 steps 1-8, `dctcp_update_alpha`):
//!   `α ← (1 − g)·α + g·F` with `F = marked bytes / delivered bytes` over the window, `g = 1/16`
//!   (`dctcp_shift_g = 4`) and `α₀ = 1` (`dctcp_alpha_on_init = DCTCP_MAX_ALPHA`). A window ends
//!   when the stack reports a new round (`AckSample::round_start`): the ACK that delivers the
//!   first packet sent after the previous round began. That is the split of Linux's
//!   `snd_una ≥ next_seq` (next_seq = snd_nxt at the previous update) seen from the other
//!   side: every packet sent before the update belongs to the old window, the round-start
//!   ACK's own data to the new one. Delivered bytes come from `PathInfo::delivered` (cumulative
//!   and selective, each byte once, like Linux `tp->delivered`), not from `acked + sacked`,
//!   which counts a SACKed byte again when the cumulative ACK passes it.
//! * Marked bytes per ACK: AccECN's CE byte counter (`ce_bytes`); if only the packet counter
//!   moved (`ce_delta` without byte counts: AccECN without its option), `ce_delta · MSS`; with
//!   classic feedback (an ECN-Echo and no counters), every byte the ACK delivers, as Linux's
//!   `tcp_count_delivered` does for an RFC 3168 ACK with ECE. Linux pairs that with DCTCP's own
//!   receiver, which echoes CE exactly (`dctcp_ece_ack_update`); against a classic receiver that
//!   latches ECE until CWR, F over-counts. Once a flow has shown accurate counts, a bare ECE no
//!   longer counts as a mark. The fraction is capped at 1 (Linux caps α).
//! * ECN-Echo episode (the stack opens at most one per round trip, as Linux's CWR state):
//!   `ssthresh = max(cwnd − ⌊cwnd·α/2⌋, 2·MSS)` (`dctcp_ssthresh`, `cwnd − (cwnd·α >> 11)`),
//!   carried out by PRR as Linux's `tcp_enter_cwr` → `tcp_cwnd_reduction` does
//!   ([`Reaction::Prr`]).
//! * Loss (fast retransmit, also inside an ECN episode) and a fresh RTO: `ssthresh =
//!   max(cwnd/2, 2·MSS)` (`dctcp_react_to_loss`, from `dctcp_state(TCP_CA_Recovery)` and
//!   `CA_EVENT_LOSS`; Linux ≥ 5.1, commit "tcp: Ensure DCTCP reacts to losses", which also
//!   removed `dctcp_clamp_alpha_on_loss`). Repeated RTOs keep ssthresh.
//! * Growth: Reno, as conventional TCP (slow start, then +1 MSS per cwnd of credited segments),
//!   exactly [`NewReno`]'s with its defaults (`tcp_reno_cong_avoid`).
//! * Undo: `max(cwnd, cwnd at the last reduction)` (`dctcp_cwnd_undo`).
//!
//! | key | default | source |
//! |---|---|---|
//! | `g` | 0.0625 (1/16) | Linux `dctcp_shift_g = 4` (the RFC's recommended gain) |
//! | `initial_alpha` | 1.0 | Linux `dctcp_alpha_on_init = DCTCP_MAX_ALPHA` (1024/1024) |
//!
//! Deliberate differences: α is a real number, not Linux's 10-bit fixed point, so α decays
//! smoothly (Linux truncates `F·1024/16` and, since `min_not_zero`, drops a small α straight to
//! 0); the window is in bytes (RFC 8257), where Linux counts packets; the cut is computed in
//! bytes, where Linux floors whole segments. `dctcp_clamp_alpha_on_loss` (Linux 3.18–5.0, off
//! by default) is not offered: the current source halves on loss instead.
//!
//! Stack order: the stack calls `on_congestion` before `on_ack` for the same ACK, so an ACK
//! that both ends a window and opens an episode cuts with the α of the window before. In
//! Linux `dctcp_update_alpha` (`in_ack_event`) runs before `tcp_fastretrans_alert` enters CWR.
//! The difference is one window's update, on that ACK only.

use crate::newreno::NewReno;
use crate::{
    AckSample, Cause, CcState, CongestionControl, CongestionEvent, EcnUse, ParamError, Params, PathInfo,
    Reaction,
};

/// RFC 8257 / Linux floor of ssthresh, in segments.
const MIN_SSTHRESH_SEGMENTS: u64 = 2;

/// DCTCP parameters. Scenario keys are the field names.
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpConfig {
    /// EWMA gain `g`, default 1/16 (Linux `dctcp_shift_g = 4`). Key `g`.
    pub g: f64,
    /// α before the first window, default 1 (Linux `dctcp_alpha_on_init`). Key `initial_alpha`.
    pub initial_alpha: f64,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        Self { g: 1.0 / 16.0, initial_alpha: 1.0 }
    }
}

impl DctcpConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        Ok(Self {
            // Linux accepts shifts 0..=10, i.e. g from 1 down to 1/1024.
            g: p.f64_in("g", d.g, 1.0 / 1024.0, 1.0)?,
            initial_alpha: p.f64_in("initial_alpha", d.initial_alpha, 0.0, 1.0)?,
        })
    }
}

/// Bytes of this ACK's delivery that carried CE, by the best feedback at hand (see the module
/// documentation). Shared with Prague.
pub(crate) fn marked_bytes(ack: &AckSample, newly_delivered: u64, mss: u32, accurate_seen: bool) -> u64 {
    if ack.ce_bytes > 0 {
        ack.ce_bytes
    } else if ack.ce_delta > 0 {
        ack.ce_delta as u64 * mss as u64
    } else if ack.ece && !accurate_seen {
        newly_delivered
    } else {
        0
    }
}

/// The DCTCP controller ("dctcp").
#[derive(Clone, Debug)]
pub struct Dctcp {
    cfg: DctcpConfig,
    alpha: f64,
    /// Bytes delivered and CE-marked bytes in the current window.
    window_delivered: u64,
    window_marked: u64,
    /// `PathInfo::delivered` at the previous ACK.
    last_delivered: u64,
    /// AccECN counters have moved at least once.
    accurate_seen: bool,
    /// cwnd when the last reduction began (Linux `loss_cwnd`), for undo.
    loss_cwnd: u64,
    reno: NewReno,
}

impl Dctcp {
    pub fn new(cfg: DctcpConfig) -> Self {
        let alpha = cfg.initial_alpha;
        Self {
            cfg,
            alpha,
            window_delivered: 0,
            window_marked: 0,
            last_delivered: 0,
            accurate_seen: false,
            loss_cwnd: 0,
            reno: NewReno::default(),
        }
    }

    pub fn config(&self) -> &DctcpConfig {
        &self.cfg
    }

    /// The current estimate of the marked fraction, α ∈ [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Delivered and CE-marked bytes of the window under way.
    pub fn window(&self) -> (u64, u64) {
        (self.window_delivered, self.window_marked)
    }

    /// RFC 8257 §3.3 steps 6-8: fold the window's marked fraction into α, start a new window.
    fn end_window(&mut self) {
        let f = if self.window_marked == 0 {
            0.0
        } else {
            (self.window_marked as f64 / self.window_delivered.max(1) as f64).min(1.0)
        };
        self.alpha = ((1.0 - self.cfg.g) * self.alpha + self.cfg.g * f).clamp(0.0, 1.0);
        self.window_delivered = 0;
        self.window_marked = 0;
    }

    /// `dctcp_ssthresh`: `cwnd − ⌊cwnd·α/2⌋`, at least two segments.
    pub fn ecn_ssthresh(&self, cwnd: u64, mss: u32) -> u64 {
        let cut = (cwnd as f64 * self.alpha / 2.0).floor() as u64;
        cwnd.saturating_sub(cut).max(MIN_SSTHRESH_SEGMENTS * mss as u64)
    }
}

impl Default for Dctcp {
    fn default() -> Self {
        Self::new(DctcpConfig::default())
    }
}

/// `dctcp_react_to_loss` / `tcp_reno_ssthresh`: half the window, at least two segments.
fn halved(cwnd: u64, mss: u32) -> u64 {
    (cwnd / 2).max(MIN_SSTHRESH_SEGMENTS * mss as u64)
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn init(&mut self, st: &mut CcState, path: &PathInfo) {
        self.alpha = self.cfg.initial_alpha;
        self.window_delivered = 0;
        self.window_marked = 0;
        self.last_delivered = path.delivered;
        self.accurate_seen = false;
        self.loss_cwnd = 0;
        self.reno.init(st, path);
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        let newly = path.delivered.saturating_sub(self.last_delivered);
        self.last_delivered = self.last_delivered.max(path.delivered);
        if ack.round_start {
            self.end_window();
        }
        let marked = marked_bytes(ack, newly, path.mss, self.accurate_seen);
        self.accurate_seen |= ack.ce_delta > 0 || ack.ce_bytes > 0;
        self.window_delivered += newly;
        self.window_marked += marked;
        self.reno.on_ack(st, path, ack);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        // Linux `tcp_init_cwnd_reduction` zeroes `snd_cwnd_cnt`; NewReno does the same.
        let _ = self.reno.on_congestion(st, path, ev);
        match ev.cause {
            Cause::Ecn => {
                self.loss_cwnd = st.cwnd;
                Reaction::Prr { ssthresh: self.ecn_ssthresh(st.cwnd, path.mss) }
            }
            Cause::Loss | Cause::Rto { backoffs: 0 } => {
                self.loss_cwnd = st.cwnd;
                Reaction::Prr { ssthresh: halved(st.cwnd, path.mss) }
            }
            // `tcp_enter_loss` neither asks for ssthresh nor sends CA_EVENT_LOSS again.
            Cause::Rto { .. } => Reaction::Prr { ssthresh: st.ssthresh },
        }
    }

    fn undo_cwnd(&mut self, st: &CcState, _prior_cwnd: u64) -> u64 {
        st.cwnd.max(self.loss_cwnd)
    }

    fn ecn_use(&self) -> EcnUse {
        EcnUse::Accurate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::newreno::tests::{ack, event, path, M, MSS};
    use crate::{CaState, ParamValue};

    fn state(cwnd_segs: u64, ssthresh: u64) -> CcState {
        CcState { cwnd: cwnd_segs * M, ssthresh, pacing_rate: None }
    }

    /// Feeds one window of `segs` single-segment ACKs, `marked` of them CE-marked (AccECN
    /// counts), then the ACK that starts the next round (it carries one unmarked segment).
    /// Returns the path's delivered counter after it.
    fn window(cc: &mut Dctcp, st: &mut CcState, delivered: u64, segs: u64, marked: u64) -> u64 {
        let mut d = delivered;
        for i in 0..segs {
            d += M;
            let mut p = path(0);
            p.delivered = d;
            let mut a = ack(1);
            if i < marked {
                a.ce_delta = 1;
                a.ce_bytes = M;
            }
            cc.on_ack(st, &p, &a);
        }
        d += M;
        let mut p = path(0);
        p.delivered = d;
        let mut a = ack(1);
        a.round_start = true;
        cc.on_ack(st, &p, &a);
        d
    }

    #[test]
    fn alpha_after_one_window_with_a_quarter_marked() {
        let mut cc = Dctcp::default();
        let mut st = state(10, 5 * M);
        cc.init(&mut st, &path(0));
        assert_eq!(cc.alpha(), 1.0);
        window(&mut cc, &mut st, 0, 20, 5);
        // α₁ = 15/16 · 1 + 1/16 · 5/20 = 0.953125.
        assert_eq!(cc.alpha(), 0.953125);
        // The round-start ACK's own segment opened the next window.
        assert_eq!(cc.window(), (M, 0));
    }

    #[test]
    fn alpha_converges_geometrically_to_the_marked_fraction() {
        let mut cc = Dctcp::default();
        let mut st = state(10, 5 * M);
        cc.init(&mut st, &path(0));
        // The first window: 20 segments, 5 marked (F = 0.25). Later windows hold the round-start
        // ACK's segment plus 19 more, 5 marked: F = 5/20 again.
        let mut d = window(&mut cc, &mut st, 0, 20, 5);
        for _ in 1..40 {
            d = window(&mut cc, &mut st, d, 19, 5);
        }
        // α_n = F + (α₀ − F)(15/16)^n.
        let want = 0.25 + 0.75 * (15.0f64 / 16.0).powi(40);
        assert!((cc.alpha() - want).abs() < 1e-12, "{} vs {want}", cc.alpha());
        // Unmarked windows decay α by 15/16 each: 0.953125 · 15/16 = 0.8935546875.
        let mut cc = Dctcp::default();
        let mut d = window(&mut cc, &mut st, 0, 20, 5);
        d = window(&mut cc, &mut st, d, 19, 0);
        assert_eq!(cc.alpha(), 0.8935546875);
        window(&mut cc, &mut st, d, 19, 20);
        // All 20 marked (the round-start ACK's segment was not, 19 of 20 were): F = 19/20.
        assert!((cc.alpha() - (0.8935546875 * 15.0 / 16.0 + 0.95 / 16.0)).abs() < 1e-15);
    }

    /// Classic feedback: an ECE ACK's delivered bytes count as marked (Linux
    /// `tcp_count_delivered`); after AccECN counts were seen, a bare ECE does not.
    #[test]
    fn classic_ece_marks_the_acks_bytes_until_accurate_counts_appear() {
        let mut cc = Dctcp::default();
        let mut st = state(10, 5 * M);
        let mut p = path(0);
        p.delivered = 2 * M;
        let mut a = ack(2);
        a.ece = true;
        cc.on_ack(&mut st, &p, &a);
        assert_eq!(cc.window(), (2 * M, 2 * M));
        p.delivered = 4 * M;
        let mut a = ack(2);
        a.ce_delta = 1;
        a.ce_bytes = 500;
        cc.on_ack(&mut st, &p, &a);
        assert_eq!(cc.window(), (4 * M, 2 * M + 500));
        p.delivered = 6 * M;
        let mut a = ack(2);
        a.ece = true;
        cc.on_ack(&mut st, &p, &a);
        assert_eq!(cc.window(), (6 * M, 2 * M + 500), "bare ECE ignored with AccECN");
        // Packet counter only: one MSS per newly marked packet.
        p.delivered = 8 * M;
        let mut a = ack(2);
        a.ce_delta = 2;
        cc.on_ack(&mut st, &p, &a);
        assert_eq!(cc.window(), (8 * M, 4 * M + 500));
    }

    #[test]
    fn ecn_episode_sets_ssthresh_from_alpha_with_a_two_segment_floor() {
        let mut cc = Dctcp::default();
        let mut st = state(100, u64::MAX);
        // α = 1: halve.
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Ecn, 100 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 50 * M });
        window(&mut cc, &mut st, 0, 20, 5);
        assert_eq!(cc.alpha(), 0.953125);
        // 100 000 · (1 − 0.953125/2) = 100 000 − ⌊47 656.25⌋ = 52 344 bytes.
        let mut st = state(100, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Ecn, 100 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 52_344 });
        // Small windows stop at two segments: 3 MSS · (1 − 0.4765625) = 1570 < 2000.
        let mut st = state(3, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Ecn, 3 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 2 * M });
        // α = 0 (no marks ever, initial_alpha 0): no reduction at all.
        let mut p = Params::new();
        p.insert("initial_alpha", ParamValue::Float(0.0));
        let mut cc = Dctcp::new(DctcpConfig::from_params(&p).unwrap());
        let mut st = state(40, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Ecn, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 40 * M });
    }

    #[test]
    fn loss_halves_whatever_alpha_and_undo_restores_the_window() {
        let mut p = Params::new();
        p.insert("initial_alpha", ParamValue::Float(0.1));
        let mut cc = Dctcp::new(DctcpConfig::from_params(&p).unwrap());
        let mut st = state(40, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, 30 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
        // Inside an ECN episode: half of the window as it stands (`dctcp_react_to_loss`).
        st.cwnd = 36 * M;
        let mut ev = event(Cause::Loss, 36 * M);
        ev.open_episode = Some(Cause::Ecn);
        assert_eq!(cc.on_congestion(&mut st, &path(0), &ev), Reaction::Prr { ssthresh: 18 * M });
        // The stack finished PRR at 18 segments; a D-SACK shows the loss spurious.
        st.cwnd = 18 * M;
        assert_eq!(cc.undo_cwnd(&st, 0), 36 * M);
        // RTO: fresh halves, repeats keep ssthresh.
        let mut st = state(40, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Rto { backoffs: 0 }, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
        st.ssthresh = 20 * M;
        st.cwnd = M;
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Rto { backoffs: 2 }, M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
    }

    #[test]
    fn growth_is_renos() {
        let mut cc = Dctcp::default();
        let mut reno = NewReno::default();
        for ssthresh in [u64::MAX, 10 * M] {
            let mut a = state(10, ssthresh);
            let mut b = state(10, ssthresh);
            for i in 0..200u64 {
                let mut p = path(0);
                p.delivered = (i + 1) * M;
                let mut k = ack(1);
                k.ce_delta = (i % 3 == 0) as u32;
                k.ce_bytes = k.ce_delta as u64 * M;
                cc.on_ack(&mut a, &p, &k);
                reno.on_ack(&mut b, &p, &k);
                assert_eq!(a, b, "ACK {i}");
            }
        }
        // Slow start doubles, congestion avoidance adds one per window: 10 + 10 → 20 after 10
        // ACKs in slow start; 21 after 20 more in avoidance.
        let mut cc = Dctcp::default();
        let mut st = state(10, 20 * M);
        for _ in 0..10 {
            cc.on_ack(&mut st, &path(0), &ack(1));
        }
        assert_eq!(st.cwnd, 20 * M);
        for _ in 0..20 {
            cc.on_ack(&mut st, &path(0), &ack(1));
        }
        assert_eq!(st.cwnd, 21 * M);
        // No growth in CWR (Linux: `tcp_in_cwnd_reduction`).
        let mut p = path(0);
        p.state = CaState::Cwr;
        cc.on_ack(&mut st, &p, &ack(50));
        assert_eq!(st.cwnd, 21 * M);
    }

    #[test]
    fn params_name_the_key_and_defaults_hold() {
        for (key, v) in [("g", 0.0), ("g", 1.5), ("initial_alpha", -0.1), ("initial_alpha", 1.01)] {
            let mut p = Params::new();
            p.insert(key, ParamValue::Float(v));
            assert_eq!(DctcpConfig::from_params(&p).unwrap_err().key, key, "{key} = {v}");
        }
        let mut p = Params::new();
        p.insert("g", ParamValue::Float(0.125));
        p.insert("initial_alpha", ParamValue::Float(0.0));
        let cfg = DctcpConfig::from_params(&p).unwrap();
        p.reject_unknown("dctcp").unwrap();
        assert_eq!(cfg, DctcpConfig { g: 0.125, initial_alpha: 0.0 });
        assert_eq!(DctcpConfig::from_params(&Params::new()).unwrap(), DctcpConfig::default());
        let cc = Dctcp::default();
        assert_eq!((cc.name(), cc.ecn_use(), cc.config().g), ("dctcp", EcnUse::Accurate, 0.0625));
        let _ = MSS;
    }
}
