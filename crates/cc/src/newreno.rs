//! Reno / NewReno congestion control: the loss-based baseline.
//!
//! Window rules (all in bytes, `MSS` = `path.mss`):
//!
//! * Slow start while `cwnd < ssthresh`, with Appropriate Byte Counting
//!   (RFC 5681 §3.1 eq. 2, RFC 3465 §2.2): `cwnd += min(acked, L * MSS)` per ACK, `L = 2`,
//!   and `L = 1` while recovering from a retransmission timeout (RFC 3465 §2.3). Growth is
//!   capped at `ssthresh` and what is left of the ACK is credited to congestion avoidance, as
//!   Linux `tcp_slow_start` does.
//! * Congestion avoidance: `+1 MSS` per window's worth of credited segments (RFC 5681 eq. 3 in
//!   its byte-counting form, RFC 3465 §2.1), counted like Linux `tcp_cong_avoid_ai`. The stack
//!   decides what a "credited segment" is ([`crate::CaCounting`]).
//! * Loss: `ssthresh = max(beta * base, 2 * MSS)` (RFC 5681 eq. 4 with `beta = 1/2`), where
//!   `base` is cwnd (Linux `tcp_reno_ssthresh`, default) or FlightSize (RFC 5681). The stack
//!   runs the NewReno / PRR recovery itself (RFC 6582, RFC 6937) and sets `cwnd = ssthresh`
//!   when the episode ends.
//! * ECN-Echo: the same `ssthresh`, applied at once to cwnd (RFC 3168 §6.1.2).
//! * RTO: the same `ssthresh` on the first expiry only; later back-offs keep it
//!   (RFC 5681 §3.1, "ssthresh MUST NOT be reduced further"). The stack sets `cwnd = 1 MSS`.
//!
//! The reduction factor is looked up per cause ([`NewReno::beta_for`]): ABE (RFC 8511) gives ECN
//! its own, milder `beta_ecn`, in congestion avoidance and at the end of slow start alike.

use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, ParamError, Params, PathInfo,
    Reaction,
};

/// RFC 5681 eq. 4 / RFC 3465: ssthresh never drops below two segments.
pub const MIN_SSTHRESH_SEGMENTS: u64 = 2;

/// The byte-counting limit `L` of RFC 3465 §2.2 in slow start, in segments; 0 = none. Linux
/// dropped the limit (and `tcp_abc`) in 3.9: `tcp_slow_start` credits every segment an ACK
/// delivers, after a timeout too (RFC 3465 §2.3 would take L = 1 there), so slow start doubles
/// per RTT with delayed ACKs and stretch ACKs alike.
pub const ABC_L: u64 = 0;

/// What the multiplicative decrease is applied to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsthreshBase {
    /// Current cwnd (Linux `tcp_reno_ssthresh`, ns-3). Parameter value `"cwnd"`.
    Cwnd,
    /// RFC 5681 FlightSize at detection (`CongestionEvent::flight_size`). Parameter value `"flight"`.
    Flight,
}

impl SsthreshBase {
    pub(crate) fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(match p.choice("ssthresh_from", "cwnd", &["cwnd", "flight"])?.as_str() {
            "flight" => SsthreshBase::Flight,
            _ => SsthreshBase::Cwnd,
        })
    }

    pub(crate) fn bytes(self, st: &CcState, ev: &CongestionEvent) -> u64 {
        match self {
            SsthreshBase::Cwnd => st.cwnd,
            SsthreshBase::Flight => ev.flight_size,
        }
    }
}

/// NewReno parameters. Scenario keys are the field names.
#[derive(Clone, Debug, PartialEq)]
pub struct NewRenoConfig {
    /// Multiplicative decrease factor on loss. Default 0.5 (RFC 5681). Key `beta`.
    pub beta: f64,
    /// Factor on an ECN-Echo: ABE (RFC 8511 §3) backs off less than on loss. Default `beta`
    /// (plain RFC 3168); RFC 8511 §3.1 recommends 0.8, the ABE paper 0.7–0.85. Key `beta_ecn`.
    pub beta_ecn: f64,
    /// Base of the decrease. Default [`SsthreshBase::Cwnd`] (Linux). Key `ssthresh_from`.
    pub ssthresh_from: SsthreshBase,
    /// RFC 3465 `L` in segments for slow start; 0 (default) = no limit, as Linux. Key `abc_limit`.
    pub abc_limit: u64,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        Self { beta: 0.5, beta_ecn: 0.5, ssthresh_from: SsthreshBase::Cwnd, abc_limit: ABC_L }
    }
}

impl NewRenoConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let beta = p.f64_in("beta", d.beta, 0.01, 0.99)?;
        Ok(Self {
            beta,
            beta_ecn: p.f64_in("beta_ecn", beta, 0.01, 0.99)?,
            ssthresh_from: SsthreshBase::from_params(p)?,
            abc_limit: p.u64_in("abc_limit", d.abc_limit, 0, 1_000_000)?,
        })
    }
}

/// Loss-based controllers may only open the window while nothing is being repaired by
/// fast recovery or CWR (those episodes end with `cwnd = ssthresh` anyway), while the window
/// is actually used (RFC 7661), and on ACKs that acknowledge something new. `Loss` (after an
/// RTO) is allowed: RFC 5681 §3.1 slow-starts from one segment during that recovery.
pub(crate) fn growth_allowed(path: &PathInfo, ack: &AckSample) -> bool {
    matches!(path.state, CaState::Open | CaState::Disorder | CaState::Loss)
        && path.is_cwnd_limited
        && ack.acked > 0
}

/// RFC 3465 slow start capped at ssthresh. Returns the segments of this ACK that slow start
/// did not use, which the caller credits to congestion avoidance (Linux `tcp_slow_start`).
pub(crate) fn slow_start(st: &mut CcState, path: &PathInfo, ack: &AckSample, abc_limit: u64) -> u32 {
    let mss = path.mss as u64;
    let limit = if abc_limit == 0 { u64::MAX } else { abc_limit.saturating_mul(mss) };
    // What this ACK newly delivered (Linux `acked_sacked`: segments SACKed earlier counted then,
    // not again when the cumulative ACK passes them), or one segment per ACK when counting ACKs.
    let inc = (ack.segments_acked as u64 * mss).min(limit);
    if inc == 0 {
        return 0;
    }
    let new_cwnd = st.cwnd.saturating_add(inc).min(st.ssthresh);
    let used = new_cwnd.saturating_sub(st.cwnd);
    st.cwnd = st.cwnd.max(new_cwnd);
    let leftover = inc - used.min(inc);
    if leftover == 0 {
        return 0;
    }
    // Share the ACK's credited segments out in proportion to the bytes slow start left over.
    let segs = ack.segments_acked as u64;
    ((segs * leftover + inc / 2) / inc) as u32
}

/// A loss while an ECN reduction is still under way (FreeBSD `cc_abe_frlossreduce`): deepen
/// the ECN cut to what a loss cut would have been, `ssthresh · beta / beta_ecn`, not cut again
/// from the shrinking window. With `beta_ecn = beta` this keeps ssthresh, as Linux does when a
/// loss arrives in CWR (`tcp_enter_recovery` starts no new reduction).
pub(crate) fn loss_in_ecn_episode(st: &CcState, beta: f64, beta_ecn: f64, mss: u32) -> u64 {
    if st.ssthresh == u64::MAX {
        return st.ssthresh;
    }
    reduced_ssthresh(st.ssthresh, beta / beta_ecn, mss)
}

/// `max(beta * base, 2 * MSS)`, in bytes. Rounded rather than truncated so that, e.g.,
/// 0.7 × 100 segments is exactly 70 segments despite binary floating point.
pub(crate) fn reduced_ssthresh(base: u64, beta: f64, mss: u32) -> u64 {
    ((base as f64 * beta).round() as u64).max(MIN_SSTHRESH_SEGMENTS * mss as u64)
}

/// The Reno / NewReno controller ("newreno", alias "reno").
#[derive(Clone, Debug)]
pub struct NewReno {
    cfg: NewRenoConfig,
    /// Segments credited since the last additive increase (Linux `snd_cwnd_cnt`).
    cwnd_cnt: u64,
}

impl NewReno {
    pub fn new(cfg: NewRenoConfig) -> Self {
        Self { cfg, cwnd_cnt: 0 }
    }

    pub fn config(&self) -> &NewRenoConfig {
        &self.cfg
    }

    /// Segments credited towards the next `+1 MSS` in congestion avoidance.
    pub fn cwnd_cnt(&self) -> u64 {
        self.cwnd_cnt
    }

    /// Decrease factor for a congestion signal. One place to change when ABE (RFC 8511) gives
    /// ECN its own factor.
    pub fn beta_for(&self, cause: Cause) -> f64 {
        match cause {
            Cause::Ecn => self.cfg.beta_ecn,
            _ => self.cfg.beta,
        }
    }

    /// Linux `tcp_cong_avoid_ai` with `w` = cwnd in whole segments.
    fn congestion_avoidance(&mut self, st: &mut CcState, mss: u32, segs: u32) {
        let mss = mss as u64;
        let w = (st.cwnd / mss).max(1);
        // The window may have shrunk since the counter was filled; do not carry a debt.
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            st.cwnd = st.cwnd.saturating_add(mss);
        }
        self.cwnd_cnt += segs as u64;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            st.cwnd = st.cwnd.saturating_add(delta * mss);
        }
    }
}

impl Default for NewReno {
    fn default() -> Self {
        Self::new(NewRenoConfig::default())
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn init(&mut self, _st: &mut CcState, _path: &PathInfo) {
        self.cwnd_cnt = 0;
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        if !growth_allowed(path, ack) {
            return;
        }
        let mut segs = ack.segments_acked;
        if st.in_slow_start() {
            segs = slow_start(st, path, ack, self.cfg.abc_limit);
            if segs == 0 {
                return;
            }
        }
        self.congestion_avoidance(st, path.mss, segs);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        self.cwnd_cnt = 0;
        if let (Cause::Loss, Some(Cause::Ecn)) = (ev.cause, ev.open_episode) {
            return Reaction::Prr {
                ssthresh: loss_in_ecn_episode(st, self.cfg.beta, self.cfg.beta_ecn, path.mss),
            };
        }
        let ssthresh =
            reduced_ssthresh(self.cfg.ssthresh_from.bytes(st, ev), self.beta_for(ev.cause), path.mss);
        match ev.cause {
            // How fast cwnd follows (PRR in Linux, at once in FreeBSD) is the stack's business.
            Cause::Loss | Cause::Ecn => Reaction::Prr { ssthresh },
            Cause::Rto { backoffs: 0 } => Reaction::Prr { ssthresh },
            // RFC 5681 §3.1: repeated expiries of the same segment must not shrink ssthresh
            // again, since cwnd is already one segment and flight says nothing new.
            Cause::Rto { .. } => Reaction::Prr { ssthresh: st.ssthresh },
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{ParamValue, Params};

    pub const MSS: u32 = 1000;
    pub const M: u64 = MSS as u64;

    pub fn path(now: u64) -> PathInfo {
        PathInfo {
            now,
            mss: MSS,
            srtt: Some(100_000_000),
            rttvar: Some(10_000_000),
            min_rtt: Some(100_000_000),
            inflight: 0,
            delivered: 0,
            state: CaState::Open,
            is_cwnd_limited: true,
            rwnd: u64::MAX,
            initial_window: 10 * M,
            timestamps: true,
        }
    }

    /// A plain ACK for `segs` full segments.
    pub fn ack(segs: u32) -> AckSample {
        AckSample {
            acked: segs as u64 * M,
            sacked: 0,
            segments_acked: segs,
            rtt: Some(100_000_000),
            owd: None,
            ts_echo: None,
            ece: false,
            ce_delta: 0,
            ce_bytes: 0,
            rate: None,
            newly_lost: 0,
            round_start: false,
            round_count: 0,
            prior_inflight: 0,
            is_dupack: false,
        }
    }

    pub fn event(cause: Cause, flight_size: u64) -> CongestionEvent {
        CongestionEvent { cause, open_episode: None, flight_size, in_slow_start: false }
    }

    fn state(cwnd_segs: u64, ssthresh: u64) -> CcState {
        CcState { cwnd: cwnd_segs * M, ssthresh, pacing_rate: None }
    }

    #[test]
    fn slow_start_doubles_per_rtt_with_per_segment_acks() {
        let mut cc = NewReno::default();
        let mut st = state(10, u64::MAX);
        let p = path(0);
        for round in 0..4 {
            let before = st.cwnd;
            for _ in 0..before / M {
                cc.on_ack(&mut st, &p, &ack(1));
            }
            assert_eq!(st.cwnd, 2 * before, "round {round}");
        }
        assert_eq!(st.cwnd, 160 * M);
    }

    #[test]
    fn slow_start_doubles_per_rtt_with_delayed_acks() {
        let mut cc = NewReno::default();
        let mut st = state(10, u64::MAX);
        let p = path(0);
        for _ in 0..3 {
            let before = st.cwnd;
            for _ in 0..before / (2 * M) {
                cc.on_ack(&mut st, &p, &ack(2));
            }
            assert_eq!(st.cwnd, 2 * before);
        }
    }

    /// Linux `tcp_slow_start`: every segment an ACK delivers counts, a stretch ACK's and after a
    /// timeout too (2× per RTT with delayed ACKs); RFC 3465's `L` only if asked for.
    #[test]
    fn slow_start_credits_every_delivered_segment_unless_abc_l_is_set() {
        let mut cc = NewReno::default();
        let mut st = state(10, u64::MAX);
        cc.on_ack(&mut st, &path(0), &ack(10));
        assert_eq!(st.cwnd, 20 * M, "a stretch ACK of ten segments");
        let mut p = path(0);
        p.state = CaState::Loss;
        let mut st = state(1, 10 * M);
        cc.on_ack(&mut st, &p, &ack(2));
        assert_eq!(st.cwnd, 3 * M, "after a timeout as well");

        let mut params = Params::new();
        params.insert("abc_limit", ParamValue::Int(2));
        let mut cc = NewReno::new(NewRenoConfig::from_params(&params).unwrap());
        let mut st = state(10, u64::MAX);
        cc.on_ack(&mut st, &path(0), &ack(10));
        assert_eq!(st.cwnd, 12 * M, "L = 2 segments per ACK");
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_carries_leftover() {
        let mut cc = NewReno::default();
        let mut st = state(9, 10 * M);
        cc.on_ack(&mut st, &path(0), &ack(2));
        assert_eq!(st.cwnd, 10 * M);
        assert_eq!(cc.cwnd_cnt(), 1, "the second segment goes to congestion avoidance");
        // From here on, linear growth.
        for _ in 0..8 {
            cc.on_ack(&mut st, &path(0), &ack(1));
        }
        assert_eq!(st.cwnd, 10 * M);
        cc.on_ack(&mut st, &path(0), &ack(1));
        assert_eq!(st.cwnd, 11 * M);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window_of_segments() {
        let mut cc = NewReno::default();
        let mut st = state(20, 10 * M);
        let p = path(0);
        for i in 1..=19 {
            cc.on_ack(&mut st, &p, &ack(1));
            assert_eq!(st.cwnd, 20 * M, "after {i} segments");
        }
        cc.on_ack(&mut st, &p, &ack(1));
        assert_eq!(st.cwnd, 21 * M);
        assert_eq!(cc.cwnd_cnt(), 0);
        // Next increase needs 21 segments; delayed ACKs credit two at a time.
        for _ in 0..10 {
            cc.on_ack(&mut st, &p, &ack(2));
        }
        assert_eq!(st.cwnd, 21 * M);
        cc.on_ack(&mut st, &p, &ack(2));
        assert_eq!(st.cwnd, 22 * M);
        assert_eq!(cc.cwnd_cnt(), 1);
    }

    #[test]
    fn congestion_avoidance_handles_large_credit() {
        let mut cc = NewReno::default();
        let mut st = state(10, 10 * M);
        let mut a = ack(25);
        a.acked = 25 * M;
        cc.on_ack(&mut st, &path(0), &a);
        assert_eq!(st.cwnd, 12 * M);
        assert_eq!(cc.cwnd_cnt(), 5);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_in_recovery_or_on_dupacks() {
        let mut cc = NewReno::default();
        for (limited, ca_state) in [(false, CaState::Open), (true, CaState::Recovery), (true, CaState::Cwr)] {
            for ssthresh in [u64::MAX, 5 * M] {
                let mut st = state(10, ssthresh);
                let mut p = path(0);
                p.is_cwnd_limited = limited;
                p.state = ca_state;
                for _ in 0..100 {
                    cc.on_ack(&mut st, &p, &ack(1));
                }
                assert_eq!(st.cwnd, 10 * M, "{limited} {ca_state:?} {ssthresh}");
            }
        }
        let mut st = state(10, u64::MAX);
        let mut dup = ack(0);
        dup.is_dupack = true;
        dup.sacked = M;
        cc.on_ack(&mut st, &path(0), &dup);
        assert_eq!(st.cwnd, 10 * M);
    }

    #[test]
    fn loss_response_uses_beta_times_cwnd_with_floor() {
        for (beta, cwnd_segs, want) in
            [(0.5, 100, 50 * M), (0.7, 100, 70 * M), (0.5, 3, 2 * M), (0.7, 2, 2 * M)]
        {
            let mut p = Params::new();
            p.insert("beta", ParamValue::Float(beta));
            let mut cc = NewReno::new(NewRenoConfig::from_params(&p).unwrap());
            let mut st = state(cwnd_segs, u64::MAX);
            // Flight differs from cwnd to show which one is used by default.
            let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, 40 * M));
            assert_eq!(r, Reaction::Prr { ssthresh: want }, "beta {beta} cwnd {cwnd_segs}");
        }
    }

    #[test]
    fn loss_response_can_use_flight_size() {
        let mut p = Params::new();
        p.insert("ssthresh_from", ParamValue::Str("flight".into()));
        let mut cc = NewReno::new(NewRenoConfig::from_params(&p).unwrap());
        let mut st = state(100, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
    }

    #[test]
    fn congestion_resets_the_ai_counter() {
        let mut cc = NewReno::default();
        let mut st = state(20, 10 * M);
        for _ in 0..15 {
            cc.on_ack(&mut st, &path(0), &ack(1));
        }
        assert_eq!(cc.cwnd_cnt(), 15);
        cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, 20 * M));
        assert_eq!(cc.cwnd_cnt(), 0);
    }

    /// RFC 8511 §3: an ECN-Echo cuts by `beta_ecn`, a loss by `beta`; a loss inside the ECN
    /// episode deepens the cut to the loss cut (FreeBSD `cc_abe_frlossreduce`).
    #[test]
    fn abe_backs_off_less_on_ecn_and_a_loss_inside_deepens_to_beta() {
        let mut p = Params::new();
        p.insert("beta_ecn", ParamValue::Float(0.8));
        let mut cc = NewReno::new(NewRenoConfig::from_params(&p).unwrap());
        let mut st = state(40, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Ecn, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 32 * M });
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Loss, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M }, "loss keeps beta 0.5");
        st.ssthresh = 32 * M;
        let mut ev = event(Cause::Loss, 36 * M);
        ev.open_episode = Some(Cause::Ecn);
        let r = cc.on_congestion(&mut st, &path(0), &ev);
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M }, "32 · 0.5 / 0.8");
        // Without ABE the same loss keeps the ECN episode's ssthresh (Linux: no new cut in CWR).
        let mut cc = NewReno::default();
        assert_eq!(cc.on_congestion(&mut st, &path(0), &ev), Reaction::Prr { ssthresh: 32 * M });
        assert_eq!(NewRenoConfig::from_params(&Params::new()).unwrap().beta_ecn, 0.5, "default: beta");
    }

    #[test]
    fn ecn_sets_ssthresh_like_a_loss() {
        let mut cc = NewReno::default();
        let mut st = state(40, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Ecn, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
    }

    #[test]
    fn rto_reduces_ssthresh_only_on_first_expiry() {
        let mut cc = NewReno::default();
        let mut st = state(40, u64::MAX);
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Rto { backoffs: 0 }, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
        // The stack applied it and set cwnd to one segment; the next expiry keeps ssthresh.
        st.ssthresh = 20 * M;
        st.cwnd = M;
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Rto { backoffs: 1 }, M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
        let r = cc.on_congestion(&mut st, &path(0), &event(Cause::Rto { backoffs: 3 }, M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
    }

    #[test]
    fn bad_params_name_the_key() {
        let mut p = Params::new();
        p.insert("beta", ParamValue::Float(1.5));
        assert_eq!(NewRenoConfig::from_params(&p).unwrap_err().key, "beta");

        let mut p = Params::new();
        p.insert("ssthresh_from", ParamValue::Str("inflight".into()));
        assert_eq!(NewRenoConfig::from_params(&p).unwrap_err().key, "ssthresh_from");

        let mut p = Params::new();
        p.insert("abc_limit", ParamValue::Int(-1));
        assert_eq!(NewRenoConfig::from_params(&p).unwrap_err().key, "abc_limit");
    }

    #[test]
    fn every_key_is_read_and_defaults_hold() {
        let mut p = Params::new();
        p.insert("beta", ParamValue::Float(0.7));
        p.insert("ssthresh_from", ParamValue::Str("flight".into()));
        p.insert("abc_limit", ParamValue::Int(4));
        let cfg = NewRenoConfig::from_params(&p).unwrap();
        p.reject_unknown("newreno").unwrap();
        assert_eq!(
            cfg,
            NewRenoConfig { beta: 0.7, beta_ecn: 0.7, ssthresh_from: SsthreshBase::Flight, abc_limit: 4 }
        );
        assert_eq!(NewRenoConfig::from_params(&Params::new()).unwrap(), NewRenoConfig::default());
        assert_eq!(NewReno::default().name(), "newreno");
    }
}
