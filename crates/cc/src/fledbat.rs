//! fLEDBAT, "fair LEDBAT" (Carofiglio, Muscariello, Rossi, Testa, Valenti, *Rethinking the Low
//! Extra Delay Background Transport (LEDBAT) Protocol*, Computer Networks 2013): LEDBAT's delay
//! estimators with a Reno-like constant additive increase `α` and a multiplicative decrease
//! driven continuously by the excess queueing delay over the target, `ζ · (q − τ) / τ`.
//!
//! `Lnnn` is a line of the paper's text, `shared/seeds/003_f568696438f6a57a.txt`.
//!
//! # The per-ACK rule, derived
//!
//! The paper's packet-level rule, eq. (5), is missing from the text: L118 ends "we propose to
//! modify the congestion window evolution as follows:" and no equation follows; L150 says the
//! fluid law (6) is what (5) gives at flow level. So the rule is derived back from (6) (L152),
//! windows in segments, `R` the RTT, `q = Q/C` the queueing delay, `τ` the target:
//!
//! ```text
//! dW/dt = α/R − (ζ/τ)·(q − τ)·(W/R)·1{W ≥ 0}·1{q ≥ τ}                      (6)
//! ```
//!
//! Both terms are *per-RTT* quantities divided by `R`: `α` segments per RTT of additive increase
//! (Reno's one segment per RTT at α = 1, "a constant factor α as in TCP Reno", L118), and a
//! decrease of the fraction `ζ·(q − τ)/τ` of the window per RTT (the "multiplicative decrease
//! continuously driven by the estimated distance from the target", L118). ACKs, one per
//! segment, arrive at `W/R` per second (Little's law, `X = W/R`,
//! L140). Over `dt` the window changes by `dt·(dW/dt)` while `dt·W/R` ACKs arrive, so one ACK
//! carries the change `dt·(dW/dt) / (dt·W/R)`, i.e. the per-RTT change divided by the `W` ACKs
//! of one RTT:
//!
//! ```text
//! per ACK:  ΔW = (R/W)·dW/dt = α/W − ζ·(q − τ)/τ·1{q ≥ τ}
//! ```
//!
//! `R` cancels: neither term needs an RTT estimate. The increase is `α/W` segments per ACK,
//! and the decrease a constant `ζ·(q − τ)/τ` segments per ACK, which sums over the `W` ACKs of
//! a round to the multiplicative `W·ζ·(q − τ)/τ`. The indicator `1{q ≥ τ}` (L152) makes the
//! decrease act only above the target; below it fLEDBAT grows like Reno, whatever the
//! distance (L118: "independent of Δ(t)"). `1{W ≥ 0}` becomes the `MIN_CWND` floor. Loss
//! halves the window, the loss branch of eq. (2) (L82) that fLEDBAT keeps (L118 changes only
//! the increase and the delay-based decrease).
//!
//! In bytes, with `n` = segments credited by the ACK (each counts as one of the model's ACKs,
//! the byte counting of ledbat.rs):
//!
//! ```text
//! cwnd += n · MSS · (α · MSS / cwnd − ζ · max(0, qd − τ) / τ)
//! cwnd  = max(cwnd, MIN_CWND · MSS)
//! ```
//!
//! **Against the notes** (`shared/reference/experiments-fledbat.md` §3.2, and
//! `algorithms.md` §6.4): the same rule (`cwnd += α/cwnd`, and `cwnd −= ζ(q̂ − τ)/τ` when
//! `q̂ > τ`), the same check (ACK rate `W/R` gives back (6)) and the same worked numbers,
//! reproduced in the tests. They differ on: the floor (the notes' §3.2 floors at 1 packet,
//! `algorithms.md` at `MIN_CWND`; the paper says neither; here `min_cwnd`, default 2 as
//! LEDBAT); `algorithms.md` §6.4's [D] clamp of the per-RTT decrease at 1/2, which the paper
//! does not have (and Fig. 3(b)'s queue flushing at ζ = 5, L298, suggests no clamp), so the
//! seed wins and there is none. The notes' proposed "MD once per RTT" variant switch is the
//! `decrease = "per-rtt"` reading below. `Δ` is read as the estimated queueing delay, as in
//! (6)'s explicit `Q/C − τ` (eq. (1) at L78 would subtract τ twice; notes §5.1).
//!
//! **Equilibrium** (Prop. 5.1, eq. (10), L173–L176; Obs. 5.9, L255): `X_i* = C/N`,
//! `Q* = Cτ + Nατ/(ζR)`, i.e. `q* = τ + Nατ/(CζR)`. Per ACK the drift is zero where
//! `α/W = ζ(q − τ)/τ`, with `W = C·R/N`: the same point. The model takes the RTT as the
//! propagation delay (`R_t ≈ R`, L137); a real loop has `W = C·(R + q*)/N`, so `R` there
//! stands for the RTT at equilibrium (the test checks both readings).
//!
//! # The second reading: one decrease per RTT (`decrease = "per-rtt"`)
//!
//! The missing eq. (5) (L118–L120) leaves open *when* the decrease is applied. (6) is a
//! per-RTT law divided by `R` (both terms above), so it is also the fluid limit of the rule
//! that applies the whole round's change at once, an Euler step of (6) of length `R`:
//!
//! ```text
//! after one window of ACKs:  W ← W·(1 − ζ·max(0, q̂ − τ)/τ) + α,  floored at MIN_CWND
//! ```
//!
//! the notes' variant switch (`experiments-fledbat.md` §3.2: "MD once per RTT: cwnd ← cwnd·(1 −
//! ζ(q̂−τ)/τ) + α, floored", added "for comparison"). Both readings fit L118's words ("a
//! multiplicative decrease continuously driven by the estimated distance from the target": per
//! ACK it is continuous in time, per RTT it is literally multiplicative) and L150's (6); they
//! differ in timing. Per ACK the decrease starts with the first ACK whose `q̂` passes `τ` and
//! each later ACK sees the smaller window's effect; per RTT the window holds for a round and
//! then drops by the round's whole `ζ·(q̂ − τ)/τ` fraction at once, on the `q̂` of the ACK that
//! closes the round. With a large ζ (Fig. 3(b)'s ζ = 5, L298) one such cut can exceed the
//! window (`ζ·(q̂ − τ)/τ ≥ 1` once `q̂ ≥ τ + τ/ζ`, 5 ms above τ at ζ = 5), so the window falls to
//! the floor in one step, which may empty the queue where the per-ACK reading's gradual cut does
//! not (the paper's "as the queue flushes", L298; notes §3.2 caveat: "for ζ ≥ ~1 a single ACK can
//! remove ≥ 1 packet").
//!
//! Here a round is one window of credited segments: it opens at the first ACK after the
//! previous one closed (or after a congestion event, whose halving restarts it), with `W₀` the
//! window then, and closes at the ACK that brings the segments credited since to `W₀`. Within
//! it the window does not change. The increase is the per-ACK reading's `α/W₀` per credited
//! segment, gated by `is_cwnd_limited` as there, summed over the round (α for a round that
//! used its window) and added at the close with the decrease:
//!
//! ```text
//! cwnd ← max((cwnd + carry)·(1 − ζ·max(0, qd − τ)/τ) + MSS·Σ α/W₀, MIN_CWND·MSS)
//! ```
//!
//! Equilibrium: the same zero drift `α = ζ·(q − τ)/τ·W` per round, so the same `q*` (eq. (10)).
//! The controller's default stays `"per-ack"`, the per-ACK rule above; the fLEDBAT experiments
//! run `"per-rtt"`, the reading that reproduces the paper's Fig. 3(b) flush and Figs. 1(b), 5(a),
//! 5(b) fairness (see `python/ccbench/experiments/fledbat/common.py`), per-ACK as a contrast.
//!
//! # Estimators and the rest
//!
//! * Delay samples, base delay and current filter: LEDBAT's [`DelayEstimator`] (RFC 6817
//!   §2.4.2; one-minute buckets, `base_history` of them, minimum of the last `current_filter`
//!   samples no older than an RTT), which the paper's fluid model idealises as an exact
//!   queueing-delay measurement (`D_min = 0`, L139). OWD when the path provides it, otherwise
//!   the RTT samples, exactly as ledbat.rs.
//! * Parameters: `target` τ default 25 ms (the paper's simulations, L273; footnote 10, L275:
//!   the results hold for BEP 29's 100 ms too), `alpha` default 1 (L118, L316: α < 1 is at
//!   most as aggressive as TCP), `zeta` default 0.1 (L273; Figs. 3–5 sweep 0.01 to 5, L278,
//!   L298, L324). The paper has no separate GAIN: α is the increase gain of both eq. (2) and
//!   (6), so there is no `gain` key.
//! * Not in the paper, as LEDBAT here ([D] in `algorithms.md` §6.4): ECN-Echo is treated as
//!   loss; an RTO halves ssthresh on a fresh timeout and keeps it on back-offs; during fast
//!   recovery and CWR the stack's PRR owns the window and only delay samples are taken. No
//!   slow start and no initial-window override (the stack's IW). The additive increase is
//!   applied only while the window is used (`is_cwnd_limited`, RFC 7661, as Reno); the
//!   delay-driven decrease always.
//! * Floating point, as the paper's ns-2 module (L265); fractions of a byte are carried.

use crate::ledbat::{halving_reaction, DelaySignal, BASE_HISTORY, CURRENT_FILTER, MIN_CWND};
use crate::{
    AckSample, CaState, CcState, CongestionControl, CongestionEvent, Nanos, ParamError, Params, PathInfo,
    Reaction,
};

/// τ of the paper's simulations (L273).
pub const TARGET: Nanos = 25_000_000;
/// α, segments per RTT (L118, L316).
pub const ALPHA: f64 = 1.0;
/// ζ of the reference scenario (L273).
pub const ZETA: f64 = 0.1;

/// When the delay-driven decrease is applied (the missing eq. (5); module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decrease {
    /// On every ACK: `cwnd += α/W − ζ·max(0, q̂ − τ)/τ` segments (default). Value `"per-ack"`.
    PerAck,
    /// Once per window of ACKs: `cwnd ← cwnd·(1 − ζ·max(0, q̂ − τ)/τ) + α`, floored (the
    /// notes' §3.2 variant switch). Value `"per-rtt"`.
    PerRtt,
}

/// fLEDBAT parameters. Scenario keys are given per field.
#[derive(Clone, Debug, PartialEq)]
pub struct FledbatConfig {
    /// Queueing-delay target τ, default 25 ms. Key `target`, a duration.
    pub target: Nanos,
    /// Additive increase α in segments per RTT, default 1. Key `alpha`.
    pub alpha: f64,
    /// Multiplicative-decrease factor ζ, default 0.1, must be > 0. Key `zeta`.
    pub zeta: f64,
    /// Floor in segments, default 2 (RFC 6817's MIN_CWND). Key `min_cwnd`.
    pub min_cwnd: u64,
    /// One-minute buckets of base-delay history, default 10. Key `base_history`.
    pub base_history: u64,
    /// Samples in the current-delay minimum filter, default 4. Key `current_filter`.
    pub current_filter: u64,
    /// Per-ACK (default) or once-per-RTT decrease. Key `decrease`, `"per-ack"` or `"per-rtt"`.
    pub decrease: Decrease,
}

impl Default for FledbatConfig {
    fn default() -> Self {
        Self {
            target: TARGET,
            alpha: ALPHA,
            zeta: ZETA,
            min_cwnd: MIN_CWND,
            base_history: BASE_HISTORY,
            current_filter: CURRENT_FILTER,
            decrease: Decrease::PerAck,
        }
    }
}

impl FledbatConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        Ok(Self {
            target: p.duration("target", d.target, 100_000, 1_000_000_000)?,
            alpha: p.f64_in("alpha", d.alpha, 0.001, 10.0)?,
            // ζ > 0: the lower bound is the smallest value worth simulating (the notes' sweep
            // goes down to 1e-4); 0 or less is an error naming `zeta`.
            zeta: p.f64_in("zeta", d.zeta, 1e-6, 100.0)?,
            min_cwnd: p.u64_in("min_cwnd", d.min_cwnd, 1, 1000)?,
            base_history: p.u64_in("base_history", d.base_history, 1, 1440)?,
            current_filter: p.u64_in("current_filter", d.current_filter, 1, 1000)?,
            decrease: match p.choice("decrease", "per-ack", &["per-ack", "per-rtt"])?.as_str() {
                "per-rtt" => Decrease::PerRtt,
                _ => Decrease::PerAck,
            },
        })
    }
}

/// The fLEDBAT controller ("fledbat").
#[derive(Clone, Debug)]
pub struct Fledbat {
    cfg: FledbatConfig,
    delay: DelaySignal,
    /// Fraction of a byte of window not yet applied, in `[0, 1)`.
    carry: f64,
    /// `decrease = "per-rtt"`: the open round, `None` until the next ACK opens one.
    round: Option<Round>,
}

/// One window of ACKs of the once-per-RTT reading.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Round {
    /// `W₀`, the window in segments when the round opened (at least 1).
    window: f64,
    /// Segments credited since.
    acked: f64,
    /// The increase due at the close, in segments: `α/W₀` per credited segment of a used window.
    increase: f64,
}

impl Fledbat {
    pub fn new(cfg: FledbatConfig) -> Self {
        Self { delay: DelaySignal::new(cfg.base_history, cfg.current_filter), carry: 0.0, round: None, cfg }
    }

    /// The multiplicative factor `1 − ζ·max(0, qd − τ)/τ` the once-per-RTT reading applies at a
    /// round's close (negative when the cut exceeds the window; the floor then holds).
    pub fn per_rtt_factor(&self, queuing_delay: Nanos) -> f64 {
        let tau = self.cfg.target as f64;
        let excess = (queuing_delay as f64 - tau).max(0.0);
        1.0 - self.cfg.zeta * excess / tau
    }

    /// `decrease = "per-rtt"`: count the ACK into the round and apply the round's change when it
    /// closes.
    fn on_ack_per_rtt(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample, qd: Nanos) {
        let mss = path.mss as f64;
        let segs = ack.segments_acked as f64;
        let round = self.round.get_or_insert(Round {
            window: (st.cwnd as f64 / mss).max(1.0),
            acked: 0.0,
            increase: 0.0,
        });
        round.acked += segs;
        if path.is_cwnd_limited {
            round.increase += segs * self.cfg.alpha / round.window;
        }
        if round.acked < round.window {
            return;
        }
        let increase = round.increase;
        self.round = None;
        let mut w = (st.cwnd as f64 + self.carry) * self.per_rtt_factor(qd) + increase * mss;
        w = w.max((self.cfg.min_cwnd * path.mss as u64) as f64);
        st.cwnd = w.floor() as u64;
        self.carry = w - w.floor();
    }

    pub fn config(&self) -> &FledbatConfig {
        &self.cfg
    }

    /// The queueing delay the last ACK showed (`None` before any delay sample).
    pub fn queuing_delay(&self) -> Option<Nanos> {
        self.delay.last()
    }

    /// The per-ACK change in segments for one credited segment at window `w` segments:
    /// `α/W` (when `grow`) minus `ζ·max(0, qd − τ)/τ`.
    pub fn per_ack_segments(&self, w: f64, queuing_delay: Nanos, grow: bool) -> f64 {
        let tau = self.cfg.target as f64;
        let excess = (queuing_delay as f64 - tau).max(0.0);
        let inc = if grow { self.cfg.alpha / w } else { 0.0 };
        inc - self.cfg.zeta * excess / tau
    }
}

impl Default for Fledbat {
    fn default() -> Self {
        Self::new(FledbatConfig::default())
    }
}

impl CongestionControl for Fledbat {
    fn name(&self) -> &'static str {
        "fledbat"
    }

    fn init(&mut self, _st: &mut CcState, _path: &PathInfo) {
        self.carry = 0.0;
        self.round = None;
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        let Some(qd) = self.delay.on_ack(ack, path) else {
            return;
        };
        if !matches!(path.state, CaState::Open | CaState::Disorder | CaState::Loss) {
            return;
        }
        if ack.segments_acked == 0 {
            return;
        }
        if self.cfg.decrease == Decrease::PerRtt {
            return self.on_ack_per_rtt(st, path, ack, qd);
        }
        let mss = path.mss as f64;
        let old = st.cwnd.max(1);
        let per_seg = self.per_ack_segments(old as f64 / mss, qd, path.is_cwnd_limited);
        let mut w = old as f64 + self.carry + ack.segments_acked as f64 * mss * per_seg;
        w = w.max((self.cfg.min_cwnd * path.mss as u64) as f64);
        st.cwnd = w.floor() as u64;
        self.carry = w - w.floor();
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        self.carry = 0.0;
        // The halved window opens a new round (per-RTT reading).
        self.round = None;
        // Eq. (2), loss branch: halve, as LEDBAT does.
        halving_reaction(st, path, ev, self.cfg.min_cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledbat::tests::{built, feed_delay, owd_ack, st};
    use crate::newreno::tests::{event, path, M};
    use crate::{Cause, ParamValue};

    const MS: Nanos = 1_000_000;
    const SEC: Nanos = 1_000_000_000;

    fn with(pairs: &[(&str, ParamValue)]) -> Fledbat {
        built("fledbat", pairs, |p| Fledbat::new(FledbatConfig::from_params(p).unwrap()))
    }

    /// A 20 ms base sample, then the current filter filled with `qd` of queueing on top.
    fn prime(cc: &mut Fledbat, now: Nanos, qd: Nanos) {
        feed_delay(cc, now, qd);
        assert_eq!(cc.queuing_delay(), Some(qd));
    }

    /// The cwnd change in bytes one ACK of `segs` segments makes at queueing delay `qd`.
    fn change_at(cc: &mut Fledbat, cwnd_segs: u64, segs: u32, qd: Nanos) -> i64 {
        prime(cc, SEC, qd);
        let mut s = st(cwnd_segs);
        cc.carry = 0.0;
        cc.on_ack(&mut s, &path(SEC), &owd_ack(segs, 20 * MS + qd, cwnd_segs * M));
        s.cwnd as i64 - (cwnd_segs * M) as i64
    }

    /// `ΔW = α/W − ζ·max(0, q − τ)/τ` segments per ACK; MSS 1000 B, cwnd 10 segments,
    /// τ 25 ms, α 1, ζ 0.1: the increase is 1000/10 = 100 B, the decrease 100 B per target of
    /// excess delay.
    #[test]
    fn per_ack_change_below_at_and_above_target() {
        for (qd_ms, want) in [
            (0, 100),    // below: Reno-like AI only, independent of the distance (L118)
            (10, 100),   // below
            (25, 100),   // at target: the decrease term is zero
            (30, 80),    // 0.1 · 5/25 · 1000 = 20 B
            (50, 0),     // 0.1 · 1 · 1000 = 100 B: balances α/W at W = 10
            (75, -100),  // 0.1 · 2 · 1000
            (275, -900), // 0.1 · 10 · 1000
        ] {
            let mut cc = Fledbat::default();
            assert_eq!(change_at(&mut cc, 10, 1, qd_ms * MS), want, "queueing delay {qd_ms} ms");
        }
        // A 2-segment ACK counts as two of the model's ACKs.
        assert_eq!(change_at(&mut Fledbat::default(), 10, 2, 75 * MS), -200);
        assert_eq!(change_at(&mut Fledbat::default(), 10, 2, 0), 200);
        // The notes' §3.2 worked example, cwnd 20: q 30 ms → +0.03 segment, 50 ms → −0.05.
        assert_eq!(change_at(&mut Fledbat::default(), 20, 1, 30 * MS), 30);
        assert_eq!(change_at(&mut Fledbat::default(), 20, 1, 50 * MS), -50);
        // α and ζ scale their own terms.
        let mut cc = with(&[("alpha", ParamValue::Float(0.5))]);
        assert_eq!(change_at(&mut cc, 10, 1, 0), 50);
        let mut cc = with(&[("zeta", ParamValue::Float(1.0))]);
        assert_eq!(change_at(&mut cc, 10, 1, 50 * MS), -900);
        let mut cc = with(&[("target", ParamValue::Str("100ms".into()))]);
        assert_eq!(change_at(&mut cc, 10, 1, 150 * MS), 50);
        // Not using the window: no increase, the decrease still applies.
        let mut cc = Fledbat::default();
        prime(&mut cc, SEC, 75 * MS);
        let mut p = path(SEC);
        p.is_cwnd_limited = false;
        let mut s = st(10);
        cc.on_ack(&mut s, &p, &owd_ack(1, 95 * MS, 5 * M));
        assert_eq!(s.cwnd, 10 * M - 200);
        cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, 5 * M));
        assert_eq!(s.cwnd, 10 * M - 200, "current filter min is 0 ms of queueing: no change");
    }

    /// Over one round of W ACKs the rule is `W ← W·(1 − ζ(q − τ)/τ) + α` (to first order).
    #[test]
    fn one_round_is_multiplicative_decrease_plus_alpha() {
        let mut cc = Fledbat::default();
        prime(&mut cc, SEC, 50 * MS);
        let mut s = st(20);
        for _ in 0..20 {
            let inflight = s.cwnd;
            cc.on_ack(&mut s, &path(SEC), &owd_ack(1, 70 * MS, inflight));
        }
        // 20 · 0.9 + 1 = 19 segments; α/W rises from 50 B to 52.6 B along the way.
        assert!((19_000..19_060).contains(&s.cwnd), "{}", s.cwnd);
    }

    /// One flow, closed loop: the queueing delay settles where the drift is zero, eq. (10)
    /// `q* = τ + ατ/(CζR)` with R the RTT at equilibrium (the model's R_t ≈ R).
    /// One flow in a closed loop with a bottleneck of `rate` packets/s: each ACK sees the queue its
    /// window holds beyond the BDP. Returns the mean queueing delay (s) from round `from` on.
    fn settled_queue_s(cc: &mut Fledbat, rate: f64, base_rtt: Nanos, rounds: u32, from: u32) -> f64 {
        let mut s = st(2);
        let (mut now, mut sum, mut n) = (0, 0.0, 0u64);
        for round in 0..rounds {
            let w = (s.cwnd / M).max(1);
            for _ in 0..w {
                let q = ((s.cwnd as f64 / M as f64 / rate) * 1e9 - base_rtt as f64).max(0.0) as Nanos;
                now += (base_rtt + q) / w;
                let mut p = path(now);
                p.srtt = Some(base_rtt + q);
                let inflight = s.cwnd;
                cc.on_ack(&mut s, &p, &owd_ack(1, base_rtt / 2 + q, inflight));
                if round >= from {
                    sum += q as f64 / 1e9;
                    n += 1;
                }
            }
        }
        sum / n as f64
    }

    #[test]
    fn equilibrium_of_one_flow_matches_the_fluid_model() {
        for (zeta, rate, base_rtt) in
            [(0.1, 1000.0, 40 * MS), (0.01, 1000.0, 200 * MS), (1.0, 500.0, 40 * MS)]
        {
            let mut cc = with(&[("zeta", ParamValue::Float(zeta))]);
            let q = settled_queue_s(&mut cc, rate, base_rtt, 1500, 1000);
            let tau = TARGET as f64 / 1e9;
            let r_t = base_rtt as f64 / 1e9 + q;
            // Zero drift: α/W = ζ(q − τ)/τ with W = C·R_t.
            let want = tau + ALPHA * tau / (rate * zeta * r_t);
            assert!((q - want).abs() < 0.05e-3, "ζ {zeta}: q {q} s, fluid model {want} s");
            // The paper's closed form with the propagation RTT overestimates by the R_t ≈ R
            // approximation only.
            let paper = tau + ALPHA * tau / (rate * zeta * base_rtt as f64 / 1e9);
            assert!(paper >= want - 0.5e-3);
        }
        // Sanity of the closed form itself: the notes' table, N = 2, ζ 0.1 → 37 ms.
        let q2: f64 = 0.025 + 2.0 * 1.0 * 0.025 / (833.33 * 0.1 * 0.05);
        assert!((q2 - 0.037).abs() < 1e-4);
    }

    #[test]
    fn loss_and_ecn_halve_with_a_floor_and_rto_keeps_ssthresh_on_backoff() {
        let mut cc = Fledbat::default();
        let p = path(SEC);
        for (cwnd, want) in [(40, 20 * M), (3, 2 * M), (2, 2 * M), (1, M)] {
            let mut s = st(cwnd);
            assert_eq!(
                cc.on_congestion(&mut s, &p, &event(Cause::Loss, 0)),
                Reaction::Prr { ssthresh: want }
            );
            assert_eq!(cc.on_congestion(&mut s, &p, &event(Cause::Ecn, 0)), Reaction::Prr { ssthresh: want });
        }
        let mut s = CcState { ssthresh: 20 * M, ..st(30) };
        let mut ev = event(Cause::Loss, 30 * M);
        ev.open_episode = Some(Cause::Ecn);
        assert_eq!(cc.on_congestion(&mut s, &p, &ev), Reaction::Prr { ssthresh: 20 * M });
        let mut s = st(40);
        let r = cc.on_congestion(&mut s, &p, &event(Cause::Rto { backoffs: 0 }, 40 * M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
        let mut s = CcState { ssthresh: 20 * M, ..st(1) };
        let r = cc.on_congestion(&mut s, &p, &event(Cause::Rto { backoffs: 2 }, M));
        assert_eq!(r, Reaction::Prr { ssthresh: 20 * M });
        // Recovery: PRR owns the window, samples are still taken.
        let mut p = path(SEC);
        p.state = CaState::Recovery;
        prime(&mut cc, SEC, 300 * MS);
        let mut s = st(10);
        cc.on_ack(&mut s, &p, &owd_ack(1, 320 * MS, 10 * M));
        assert_eq!(s.cwnd, 10 * M);
    }

    #[test]
    fn the_window_never_falls_below_min_cwnd() {
        let mut cc = Fledbat::default();
        prime(&mut cc, SEC, 1000 * MS);
        let mut s = st(3);
        // 1 s of queueing: 0.1 · 39 segments off per ACK.
        cc.on_ack(&mut s, &path(SEC), &owd_ack(1, 1020 * MS, 3 * M));
        assert_eq!(s.cwnd, 2 * M);
        cc.on_ack(&mut s, &path(SEC), &owd_ack(1, 1020 * MS, 2 * M));
        assert_eq!(s.cwnd, 2 * M);
        let mut cc = with(&[("min_cwnd", ParamValue::Int(4))]);
        let mut s = st(3);
        cc.on_ack(&mut s, &path(SEC), &owd_ack(1, 20 * MS, 3 * M));
        assert_eq!(s.cwnd, 4 * M, "the floor lifts a window below it");
    }

    /// The unknown sender/receiver clock offset cancels: shifted OWD samples give the same run.
    #[test]
    fn clock_offset_does_not_matter() {
        let offsets: [i64; 4] = [0, 3_700_000_000, -5_000_000_000, 1 << 50];
        let mut ccs: Vec<Fledbat> = offsets.iter().map(|_| Fledbat::default()).collect();
        let mut sts: Vec<CcState> = offsets.iter().map(|_| st(10)).collect();
        let mut now = 0;
        for i in 0..4000u64 {
            now += 97 * MS;
            let owd = 20 * MS + (i * 7919 % 100) * MS;
            for ((cc, s), off) in ccs.iter_mut().zip(sts.iter_mut()).zip(offsets) {
                let a = owd_ack(1 + (i % 2) as u32, (owd as i64).wrapping_add(off) as u64, s.cwnd);
                cc.on_ack(s, &path(now), &a);
                if i % 500 == 499 {
                    if let Reaction::Prr { ssthresh } =
                        cc.on_congestion(s, &path(now), &event(Cause::Loss, s.cwnd))
                    {
                        s.cwnd = ssthresh;
                    }
                }
            }
        }
        assert!(now > 6 * crate::ledbat::BASE_BUCKET);
        for (s, cc) in sts.iter().zip(&ccs) {
            assert_eq!(s.cwnd, sts[0].cwnd);
            assert_eq!(cc.queuing_delay(), ccs[0].queuing_delay());
        }
    }

    #[test]
    fn bad_params_name_the_key() {
        for (key, v) in [
            ("zeta", ParamValue::Float(0.0)),
            ("zeta", ParamValue::Float(-0.1)),
            ("zeta", ParamValue::Int(0)),
            ("zeta", ParamValue::Str("big".into())),
            ("alpha", ParamValue::Float(0.0)),
            ("alpha", ParamValue::Float(-1.0)),
            ("target", ParamValue::Str("0ms".into())),
            ("target", ParamValue::Str("-5ms".into())),
            ("target", ParamValue::Float(0.025)),
            ("min_cwnd", ParamValue::Int(0)),
            ("base_history", ParamValue::Int(0)),
            ("current_filter", ParamValue::Int(0)),
            ("decrease", ParamValue::Str("per-packet".into())),
            ("decrease", ParamValue::Int(1)),
        ] {
            let mut p = Params::new();
            p.insert(key, v.clone());
            let e = FledbatConfig::from_params(&p).unwrap_err();
            assert_eq!(e.key, key, "{v:?}");
            assert!(!e.to_string().contains('\n'));
        }
        let mut p = Params::new();
        p.insert("zeta", ParamValue::Float(0.0));
        assert_eq!(crate::build_controller("fledbat", &p).err().unwrap().key, "zeta");
        let mut p = Params::new();
        p.insert("gain", ParamValue::Float(0.5));
        assert_eq!(crate::build_controller("fledbat", &p).err().unwrap().key, "gain", "no gain key");
    }

    #[test]
    fn every_key_is_read_and_defaults_hold() {
        let cc = with(&[
            ("target", ParamValue::Str("100ms".into())),
            ("alpha", ParamValue::Float(0.5)),
            ("zeta", ParamValue::Int(5)),
            ("min_cwnd", ParamValue::Int(1)),
            ("base_history", ParamValue::Int(2)),
            ("current_filter", ParamValue::Int(8)),
            ("decrease", ParamValue::Str("per-rtt".into())),
        ]);
        assert_eq!(
            cc.config(),
            &FledbatConfig {
                target: 100 * MS,
                alpha: 0.5,
                zeta: 5.0,
                min_cwnd: 1,
                base_history: 2,
                current_filter: 8,
                decrease: Decrease::PerRtt,
            }
        );
        let d = FledbatConfig::from_params(&Params::new()).unwrap();
        assert_eq!(d, FledbatConfig::default());
        assert_eq!((d.target, d.alpha, d.zeta, d.min_cwnd), (25 * MS, 1.0, 0.1, 2));
        assert_eq!(d.decrease, Decrease::PerAck);
        let mut p = Params::new();
        p.insert("decrease", ParamValue::Str("per-ack".into()));
        assert_eq!(FledbatConfig::from_params(&p).unwrap(), FledbatConfig::default());
        assert_eq!(Fledbat::default().name(), "fledbat");
    }

    // ------------------------------------------------------------ decrease = "per-rtt"

    fn per_rtt(pairs: &[(&str, ParamValue)]) -> Fledbat {
        let mut all = vec![("decrease", ParamValue::Str("per-rtt".into()))];
        all.extend(pairs.iter().cloned());
        with(&all)
    }

    /// `n` one-segment ACKs at queueing delay `qd` (window used); the windows after each.
    fn acks(cc: &mut Fledbat, s: &mut CcState, n: usize, qd: Nanos) -> Vec<u64> {
        (0..n)
            .map(|_| {
                let inflight = s.cwnd;
                cc.on_ack(s, &path(SEC), &owd_ack(1, 20 * MS + qd, inflight));
                s.cwnd
            })
            .collect()
    }

    /// The notes' example (α 1, ζ 0.1, τ 25 ms, cwnd 20, q̂ 50 ms): nothing for 19 ACKs, then
    /// `20·(1 − 0.1·(50 − 25)/25) + 1 = 19` at the 20th; the next round is 19 ACKs long and
    /// ends at `19·0.9 + 1 = 18.1`.
    #[test]
    fn per_rtt_cuts_once_after_a_window_of_acks() {
        let mut cc = per_rtt(&[]);
        prime(&mut cc, SEC, 50 * MS);
        let mut s = st(20);
        let w = acks(&mut cc, &mut s, 20, 50 * MS);
        assert_eq!(w[..19], [20 * M; 19], "nothing before the round closes");
        assert_eq!(w[19], 19 * M);
        let w = acks(&mut cc, &mut s, 19, 50 * MS);
        assert_eq!(w[..18], [19 * M; 18]);
        assert_eq!(w[18], 18_100);
        // Below or at the target: only the round's α, 20 → 21 after 20 ACKs.
        for qd in [0, 10 * MS, 25 * MS] {
            let mut cc = per_rtt(&[]);
            prime(&mut cc, SEC, qd);
            let mut s = st(20);
            let w = acks(&mut cc, &mut s, 20, qd);
            assert_eq!((w[18], w[19]), (20 * M, 21 * M), "queueing delay {qd}");
        }
        // 75 ms: the cut is 0.1·2 = 20 %, 20·0.8 + 1 = 17.
        let mut cc = per_rtt(&[]);
        prime(&mut cc, SEC, 75 * MS);
        let mut s = st(20);
        assert_eq!(acks(&mut cc, &mut s, 20, 75 * MS)[19], 17 * M);
        // ζ, α and τ scale their terms: ζ 0.5 at 30 ms cuts 10 %, α 2 adds 2, τ 100 ms at 150 ms
        // cuts 0.1·0.5 = 5 %.
        for (pairs, qd, want) in [
            (vec![("zeta", ParamValue::Float(0.5))], 30 * MS, 19 * M),
            (vec![("alpha", ParamValue::Float(2.0))], 50 * MS, 20 * M),
            (vec![("target", ParamValue::Str("100ms".into()))], 150 * MS, 20 * M),
        ] {
            let mut cc = per_rtt(&pairs);
            prime(&mut cc, SEC, qd);
            let mut s = st(20);
            assert_eq!(acks(&mut cc, &mut s, 20, qd)[19], want, "{pairs:?}");
        }
    }

    /// The round counts credited segments; the cut uses the delay of the ACK that closes it.
    #[test]
    fn per_rtt_rounds_count_segments_and_read_the_closing_delay() {
        // Ten 2-segment ACKs close a 20-segment round.
        let mut cc = per_rtt(&[]);
        prime(&mut cc, SEC, 50 * MS);
        let mut s = st(20);
        for i in 0..10 {
            cc.on_ack(&mut s, &path(SEC), &owd_ack(2, 70 * MS, 20 * M));
            assert_eq!(s.cwnd, if i < 9 { 20 * M } else { 19 * M }, "ACK {i}");
        }
        // The current filter's minimum at the close sets the cut: 19 ACKs at 50 ms, then a
        // filter of 75 ms samples (the minimum of the last 4) when the 20th arrives.
        let mut cc = per_rtt(&[]);
        prime(&mut cc, SEC, 50 * MS);
        let mut s = st(20);
        acks(&mut cc, &mut s, 16, 50 * MS);
        assert_eq!(acks(&mut cc, &mut s, 4, 75 * MS)[3], 17 * M);
        // A window not used: no increase, the cut still applies (20·0.9 = 18).
        let mut cc = per_rtt(&[]);
        prime(&mut cc, SEC, 50 * MS);
        let mut p = path(SEC);
        p.is_cwnd_limited = false;
        let mut s = st(20);
        for _ in 0..20 {
            cc.on_ack(&mut s, &p, &owd_ack(1, 70 * MS, 10 * M));
        }
        assert_eq!(s.cwnd, 18 * M);
        // Half the round used: half the increase (20 + 0.5 below the target).
        let mut cc = per_rtt(&[]);
        prime(&mut cc, SEC, 0);
        let mut s = st(20);
        for i in 0..20 {
            p.is_cwnd_limited = i % 2 == 0;
            cc.on_ack(&mut s, &p, &owd_ack(1, 20 * MS, 20 * M));
        }
        assert_eq!(s.cwnd, 20 * M + 500);
    }

    /// `ζ·(q̂ − τ)/τ ≥ 1` takes the window to the floor in one cut (ζ 5: from 5 ms above τ).
    #[test]
    fn per_rtt_floors_a_cut_larger_than_the_window() {
        for (pairs, qd, want) in [
            // ζ 5 at 50 ms: 20·(1 − 5) + 1 < 0 → MIN_CWND 2.
            (vec![("zeta", ParamValue::Float(5.0))], 50 * MS, 2 * M),
            // ζ 5 at 30 ms: exactly the whole window, 0 + 1 → 2.
            (vec![("zeta", ParamValue::Float(5.0))], 30 * MS, 2 * M),
            // ζ 5 at 28 ms: 20·(1 − 0.6) + 1 = 9.
            (vec![("zeta", ParamValue::Float(5.0))], 28 * MS, 9 * M),
            // ζ 1 at 50 ms, floor 1 segment: 0 + α = 1.
            (vec![("zeta", ParamValue::Float(1.0)), ("min_cwnd", ParamValue::Int(1))], 50 * MS, M),
            (vec![("zeta", ParamValue::Float(5.0)), ("min_cwnd", ParamValue::Int(4))], 50 * MS, 4 * M),
        ] {
            let mut cc = per_rtt(&pairs);
            prime(&mut cc, SEC, qd);
            let mut s = st(20);
            let w = acks(&mut cc, &mut s, 20, qd);
            assert_eq!((w[18], w[19]), (20 * M, want), "{pairs:?} at {qd}");
        }
        // At the floor the next round is MIN_CWND ACKs long and stays there.
        let mut cc = per_rtt(&[("zeta", ParamValue::Float(5.0))]);
        prime(&mut cc, SEC, 50 * MS);
        let mut s = st(20);
        acks(&mut cc, &mut s, 20, 50 * MS);
        assert_eq!(acks(&mut cc, &mut s, 2, 50 * MS), [2 * M, 2 * M]);
    }

    /// Loss halves as in the per-ACK reading and opens a new round from the halved window.
    #[test]
    fn per_rtt_loss_halves_and_restarts_the_round() {
        let p = path(SEC);
        for (cwnd, want) in [(40, 20 * M), (3, 2 * M), (1, M)] {
            let mut s = st(cwnd);
            let mut cc = per_rtt(&[]);
            assert_eq!(
                cc.on_congestion(&mut s, &p, &event(Cause::Loss, 0)),
                Reaction::Prr { ssthresh: want }
            );
            let mut s = st(cwnd);
            assert_eq!(
                Fledbat::default().on_congestion(&mut s, &p, &event(Cause::Loss, 0)),
                Reaction::Prr { ssthresh: want }
            );
        }
        let mut cc = per_rtt(&[]);
        prime(&mut cc, SEC, 75 * MS);
        let mut s = st(20);
        acks(&mut cc, &mut s, 10, 75 * MS);
        assert_eq!(
            cc.on_congestion(&mut s, &p, &event(Cause::Loss, 20 * M)),
            Reaction::Prr { ssthresh: 10 * M }
        );
        // The stack's PRR ends at ssthresh.
        s.cwnd = 10 * M;
        // The next round is the halved window's 10 ACKs: 10·0.8 + 1 = 9.
        let w = acks(&mut cc, &mut s, 10, 75 * MS);
        assert_eq!((w[8], w[9]), (10 * M, 9 * M));
        // During recovery nothing is counted.
        let mut cc = per_rtt(&[]);
        prime(&mut cc, SEC, 75 * MS);
        let mut rec = path(SEC);
        rec.state = CaState::Recovery;
        let mut s = st(20);
        for _ in 0..30 {
            cc.on_ack(&mut s, &rec, &owd_ack(1, 95 * MS, 20 * M));
        }
        assert_eq!(s.cwnd, 20 * M);
        assert_eq!(acks(&mut cc, &mut s, 20, 75 * MS)[19], 17 * M);
    }

    /// One flow, closed loop (as the per-ACK equilibrium test): the per-RTT reading has the same
    /// zero drift, `α = ζ·(q − τ)/τ·W` per round, so the queue settles at the same `q*`.
    #[test]
    fn per_rtt_equilibrium_of_one_flow_matches_the_fluid_model() {
        let (zeta, rate, base_rtt) = (0.1, 1000.0, 40 * MS);
        let mut cc = per_rtt(&[("zeta", ParamValue::Float(zeta))]);
        let q = settled_queue_s(&mut cc, rate, base_rtt, 3000, 2000);
        let tau = TARGET as f64 / 1e9;
        let want = tau + ALPHA * tau / (rate * zeta * (base_rtt as f64 / 1e9 + q));
        assert!((q - want).abs() < 0.5e-3, "q {q} s, fluid model {want} s");
    }

    /// The default is the per-ACK rule: a per-ACK run and an explicit `decrease = "per-ack"` run
    /// give the same windows, and the per-RTT run differs.
    #[test]
    fn the_default_is_per_ack() {
        let run = |cc: &mut Fledbat| {
            prime(cc, SEC, 50 * MS);
            let mut s = st(20);
            acks(cc, &mut s, 5, 50 * MS)
        };
        let default = run(&mut Fledbat::default());
        assert_eq!(run(&mut with(&[("decrease", ParamValue::Str("per-ack".into()))])), default);
        assert_eq!(default[0], 20 * M - 50);
        assert_eq!(run(&mut per_rtt(&[])), [20 * M; 5]);
    }
}
