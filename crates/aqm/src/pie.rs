//! PIE, Proportional Integral controller Enhanced (RFC 8033), in two profiles: the RFC itself and
//! the Linux 3.14–4.x `sch_pie` (as shipped in 3.17.4) that the ABE paper ran.
//!
//! PIE drops (or CE-marks) arriving packets at random with a probability `p` that a PI controller
//! updates every `T_UPDATE` from an estimate of the queueing delay. RFC 8033 sections:
//!
//! * §4.1 random dropping on enqueue, with the "work-conserving" safeguard: no early drop while
//!   `qdelay_old < QDELAY_REF/2 and p < 0.2`, or while the queue holds at most two packets
//!   (`byte_length <= 2 * MEAN_PKTSIZE`).
//! * §4.2 the update, every `T_UPDATE` (the lab notes' eq. 12.8):
//!   `dp = alpha * (current_qdelay - QDELAY_REF) + beta * (current_qdelay - qdelay_old)`,
//!   auto-tuned by the current `p` (divide by 2048 below 1e-6, 512 below 1e-5, 128 below 1e-4,
//!   32 below 1e-3, 8 below 1 %, 2 below 10 %, 1 above), `p += dp`, then `p *= 0.98` when both
//!   the current and the previous delay are 0, then `p` is bounded to `[0, 1]` and
//!   `qdelay_old = current_qdelay`. Defaults `QDELAY_REF = 15 ms`, `T_UPDATE = 15 ms`,
//!   `alpha = 0.125 Hz`, `beta = 1.25 Hz`.
//! * §4.3 the delay estimate: Little's law (`byte_length / dequeue_rate`, §5.2) or per-packet
//!   timestamps.
//! * §4.4 burst tolerance: `burst_allowance` starts at `MAX_BURST = 150 ms`; no early drop while
//!   it is positive; it shrinks by `T_UPDATE` at each update; on a packet arrival with `p == 0`
//!   and both delays below `QDELAY_REF/2` it is reset to `MAX_BURST`.
//! * §5.1 ECN: a PIE decision on an ECN-capable packet marks it while `p <= mark_ecnth`
//!   (10 %) and drops it above.
//! * §5.2 dequeue-rate estimation (`DQ_THRESHOLD = 16 KB`).
//! * §5.5 cap drop adjustment: when `p >= 10 %`, one update may raise `p` by at most 2 %.
//! * §5.4 derandomisation is optional and is not implemented (Linux 3.17 has none either).
//!
//! # Profiles (`profile`)
//!
//! `"rfc8033"` (default) follows the RFC as above, with the timestamp delay estimate by default
//! (the sojourn of the packet last dequeued, 0 when that dequeue emptied the queue, as ns-3 and
//! Linux ≥ 5.2 do; without that 0 the §4.2 decay could never apply).
//!
//! `"linux-3.17"` follows `net/sched/sch_pie.c` of Linux 3.14–4.x, which differs from the RFC in
//! ways that change results (lab notes §12.4, ABE L203–L207):
//!
//! * defaults target 20 ms, tupdate 30 ms, alpha 2/16 = 0.125, beta 20/16 = 1.25, burst allowance
//!   100 ms (hard-coded; the draft said 150 ms), packet mode (no byte mode);
//! * the first update runs 500 ms after start (`HZ/2`), then every tupdate;
//! * the delay is always Little's law, `backlog / avg_dq_rate`, computed at the update and kept
//!   for the enqueue guard; the rate is measured by the estimator below;
//! * auto-scaling in three tiers only: alpha and beta divided by 8 when `p < 1 %`, by 2 when
//!   `p < 10 %`, used as they are above;
//! * the same 2 % step cap when `p >= 10 %`, then `+2 %` more whenever the delay exceeds 250 ms
//!   (absent from the RFC);
//! * `p *= 0.98` when both delays are 0, except when the estimate is 0 while the queue is not
//!   empty (no rate known yet: Linux's `update_prob = false`), and except right after `p`
//!   saturated at 1;
//! * the guard uses the delay of the last update (not the previous one) and a backlog *below*
//!   two MTUs (`backlog < 2 * mtu`, the RFC has `<=`);
//! * the burst allowance shrinks by each completed rate measurement interval (at dequeue), not by
//!   tupdate; when both delays are below target/2, `p == 0` and a rate is known, the update resets
//!   the rate estimator and the burst allowance (`pie_vars_init`).
//!
//! Dequeue-rate estimator (Linux 3.17; also the RFC profile's `qdelay_estimator = "dq_rate"`):
//! after each dequeue, if the remaining backlog is at least `dq_threshold` bytes and no
//! measurement runs, one starts (now, 0 bytes); while one runs, the dequeued packet's bytes are
//! added, and once they reach the threshold, `rate = bytes / elapsed` and
//! `avg = 7/8 avg + 1/8 rate` (the first sample is taken as is); the measurement restarts if the
//! backlog is still at or above the threshold, and stops otherwise.
//!
//! # Parameters (`aqm_params`)
//!
//! | key | rfc8033 | linux-3.17 | source |
//! |---|---|---|---|
//! | `profile` | `"rfc8033"` | | `"rfc8033"` or `"linux-3.17"` |
//! | `target` | `"15ms"` | `"20ms"` | RFC §4.2 `QDELAY_REF`; Linux `pie_params_init`, ABE L203 |
//! | `tupdate` | `"15ms"` | `"30ms"` | RFC §4.2 `T_UPDATE`; Linux, ABE L203 |
//! | `alpha` (1/s) | 0.125 | 0.125 | RFC §4.2; Linux `alpha = 2` (in 1/16), ABE L203 |
//! | `beta` (1/s) | 1.25 | 1.25 | RFC §4.2; Linux `beta = 20` (in 1/16), ABE L203 |
//! | `max_burst` | `"150ms"` | `"100ms"` | RFC §4.4 `MAX_BURST`; Linux `pie_vars_init`, ABE L203 |
//! | `ecn_drop_above` | 0.1 | 0.1 | RFC §5.1 `mark_ecnth`; Linux `MAX_PROB / 10`, ABE L207 |
//! | `qdelay_estimator` | `"timestamp"` | `"dq_rate"` | RFC §4.3; Linux 3.17 has only the rate |
//! | `dq_threshold_bytes` | 16384 | 10000 | RFC §5.2 `DQ_THRESHOLD`; Linux `QUEUE_THRESHOLD` |
//! | `pkt_bytes` | 1500 | 1500 | RFC §4.1 `MEAN_PKTSIZE`; Linux `psched_mtu` (lab MTU 1500) |
//! | `cap_step` | true | true | RFC §5.5 (optional there); always on in Linux |
//!
//! `ecn_drop_above` is a probability in `[0, 1]`: with `ecn` on, an ECN-capable packet that PIE
//! picks is marked while `p <= ecn_drop_above` and dropped when `p > ecn_drop_above`. `1`
//! disables the rule (`p` never exceeds 1), as in the ABE paper's runs except Fig. 19(b); `0`
//! drops ECN-capable packets whenever `p > 0`.
//!
//! # The update timer without a timer
//!
//! Updates fall at fixed instants (`first + k * tupdate`; start = time 0, when queues are built).
//! The queue state an update reads (backlog, delay samples, rate estimate) changes only in
//! `enqueue`/`dequeue`, so both first run every update due at or before `now`, each seeing exactly
//! the state it would have seen from a timer; [`QueueDisc::next_timer`]/[`QueueDisc::on_timer`]
//! do the same for a caller with a timer, with identical results. To stay O(1) amortised over
//! long gaps, the catch-up stops stepping as soon as one update leaves the controller state
//! unchanged: the state is then a fixed point of the update for the unchanged queue, so every
//! further update until the next enqueue/dequeue would change nothing, and the schedule simply
//! skips to the first update after `now`. This is exact, not an approximation. Every gap converges
//! in a bounded number of steps: with the queue unchanged the delay input is constant, so `p`
//! moves monotonically until it is clamped at 0 or 1 (or stops moving); from `p = 1` to 0 over an
//! empty queue takes under 180 updates with the RFC defaults (under 3 s) and about 145 with
//! Linux's (4.4 s), after which idle time costs nothing. [`QueueDisc::next_timer`] always reports
//! the next update instant; calling [`QueueDisc::on_timer`] there is O(1) once settled.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::fifo::Fifo;
use crate::{
    DequeueSink, Dequeued, DropReason, Ecn, Enqueued, Limit, Nanos, ParamError, Params, QueueConfig,
    QueueDisc, QueuedPacket, MS, S, US,
};
const NANOS_PER_SEC: f64 = 1e9;

/// Linux 3.17 `pie_init`: the first update runs `HZ / 2` after the qdisc is set up.
pub const LINUX_FIRST_UPDATE: Nanos = 500 * MS;
/// Linux 3.17 `calculate_probability`: above this delay, `p` gets another 2 % per update.
pub const LINUX_HIGH_DELAY: f64 = 0.250;
/// RFC 8033 §5.5 / Linux: the step cap, applied from `p >= 10 %`.
pub const STEP_CAP: f64 = 0.02;
/// The step cap applies from this probability on.
pub const STEP_CAP_FROM: f64 = 0.1;
/// RFC 8033 §4.1 / Linux `drop_early`: the delay guard only holds while `p` is below this.
pub const GUARD_MAX_PROB: f64 = 0.2;
/// RFC 8033 §4.2 / Linux: decay factor when the delay has been 0 for two updates.
pub const DECAY: f64 = 0.98;

/// Which PIE. Parameter `profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieProfile {
    /// RFC 8033. `"rfc8033"`.
    Rfc8033,
    /// Linux 3.14–4.x `sch_pie` (3.17.4 in the ABE paper). `"linux-3.17"`.
    Linux317,
}

/// How the current queueing delay is estimated. Parameter `qdelay_estimator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QdelayEstimator {
    /// Sojourn of the packet last dequeued; 0 once a dequeue empties the queue. `"timestamp"`.
    Timestamp,
    /// Little's law with the dequeue-rate estimator. `"dq_rate"`.
    DequeueRate,
}

/// PIE parameters; keys and per-profile defaults are in the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct PieConfig {
    pub profile: PieProfile,
    /// `QDELAY_REF` / Linux `target`. Key `target`.
    pub target: Nanos,
    /// `T_UPDATE`. Key `tupdate`.
    pub tupdate: Nanos,
    /// In 1/s. Key `alpha`.
    pub alpha: f64,
    /// In 1/s. Key `beta`.
    pub beta: f64,
    /// `MAX_BURST`. Key `max_burst`.
    pub max_burst: Nanos,
    /// ECN-capable packets are dropped instead of marked while `p` is above this. Key
    /// `ecn_drop_above`.
    pub ecn_drop_above: f64,
    /// Key `qdelay_estimator`.
    pub estimator: QdelayEstimator,
    /// Bytes per rate measurement. Key `dq_threshold_bytes`.
    pub dq_threshold: u64,
    /// A packet's size for the "only a couple of packets queued" guard. Key `pkt_bytes`.
    pub pkt_bytes: u64,
    /// RFC 8033 §5.5 step cap. Key `cap_step`.
    pub cap_step: bool,
}

impl PieConfig {
    /// RFC 8033 defaults (§4.2, §4.4, §5.1, §5.2, §5.5).
    pub fn rfc8033() -> Self {
        Self {
            profile: PieProfile::Rfc8033,
            target: 15 * MS,
            tupdate: 15 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst: 150 * MS,
            ecn_drop_above: 0.1,
            estimator: QdelayEstimator::Timestamp,
            dq_threshold: 16_384,
            pkt_bytes: 1500,
            cap_step: true,
        }
    }

    /// Linux 3.17 `pie_params_init` / `pie_vars_init` defaults (ABE L203–L207).
    pub fn linux_3_17() -> Self {
        Self {
            profile: PieProfile::Linux317,
            target: 20 * MS,
            tupdate: 30 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst: 100 * MS,
            ecn_drop_above: 0.1,
            estimator: QdelayEstimator::DequeueRate,
            dq_threshold: 10_000,
            pkt_bytes: 1500,
            cap_step: true,
        }
    }

    pub fn for_profile(profile: PieProfile) -> Self {
        match profile {
            PieProfile::Rfc8033 => Self::rfc8033(),
            PieProfile::Linux317 => Self::linux_3_17(),
        }
    }

    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let profile = match p.choice("profile", "rfc8033", &["rfc8033", "linux-3.17"])?.as_str() {
            "linux-3.17" => PieProfile::Linux317,
            _ => PieProfile::Rfc8033,
        };
        let d = Self::for_profile(profile);
        let default_estimator = match d.estimator {
            QdelayEstimator::Timestamp => "timestamp",
            QdelayEstimator::DequeueRate => "dq_rate",
        };
        let estimator =
            match p.choice("qdelay_estimator", default_estimator, &["timestamp", "dq_rate"])?.as_str() {
                "timestamp" => QdelayEstimator::Timestamp,
                _ => QdelayEstimator::DequeueRate,
            };
        let cfg = Self {
            profile,
            target: p.duration("target", d.target, US, 10 * S)?,
            tupdate: p.duration("tupdate", d.tupdate, 100 * US, 10 * S)?,
            alpha: p.f64_in("alpha", d.alpha, 0.0, 100.0)?,
            beta: p.f64_in("beta", d.beta, 0.0, 100.0)?,
            max_burst: p.duration("max_burst", d.max_burst, 0, 100 * S)?,
            ecn_drop_above: p.f64_in("ecn_drop_above", d.ecn_drop_above, 0.0, 1.0)?,
            estimator,
            dq_threshold: p.u64_in("dq_threshold_bytes", d.dq_threshold, 1, 1 << 32)?,
            pkt_bytes: p.u64_in("pkt_bytes", d.pkt_bytes, 1, 1 << 20)?,
            cap_step: p.bool("cap_step", d.cap_step)?,
        };
        if profile == PieProfile::Linux317 && estimator == QdelayEstimator::Timestamp {
            return Err(ParamError {
                key: "qdelay_estimator".into(),
                message: "linux-3.17 estimates the delay from the dequeue rate only (\"dq_rate\")".into(),
            });
        }
        Ok(cfg)
    }

    fn first_update(&self) -> Nanos {
        match self.profile {
            PieProfile::Rfc8033 => self.tupdate,
            PieProfile::Linux317 => LINUX_FIRST_UPDATE,
        }
    }
}

fn secs(n: Nanos) -> f64 {
    n as f64 / NANOS_PER_SEC
}

/// RFC 8033 §4.2 auto-tuning: the factor applied to `dp` at drop probability `p`.
pub fn rfc8033_scale(p: f64) -> f64 {
    if p < 1e-6 {
        1.0 / 2048.0
    } else if p < 1e-5 {
        1.0 / 512.0
    } else if p < 1e-4 {
        1.0 / 128.0
    } else if p < 1e-3 {
        1.0 / 32.0
    } else if p < 1e-2 {
        1.0 / 8.0
    } else if p < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

/// Linux 3.17 `calculate_probability`: alpha and beta are shifted by 7, 5 or 4 instead of 4.
pub fn linux_3_17_scale(p: f64) -> f64 {
    if p < 0.01 {
        1.0 / 8.0
    } else if p < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

/// Everything a T_UPDATE step reads or writes besides the queue itself.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Vars {
    /// Drop probability.
    prob: f64,
    /// Seconds. RFC profile with timestamps: the last dequeue's sample (`current_qdelay`).
    /// Linux: the estimate of the last update (`vars.qdelay`). Unused by RFC + `dq_rate`.
    qdelay: f64,
    /// Seconds; the delay of the previous update.
    qdelay_old: f64,
    /// Remaining burst allowance.
    burst: Nanos,
    /// Bytes per second; 0 = no estimate yet.
    avg_dq_rate: f64,
    /// Bytes counted by the running rate measurement; `None` when none runs.
    dq_count: Option<u64>,
    /// Start of the running rate measurement.
    dq_start: Nanos,
}

/// A PIE queue; see the module documentation.
pub struct Pie<P> {
    cfg: PieConfig,
    ecn: bool,
    rng: Xoshiro256PlusPlus,
    fifo: Fifo<P>,
    vars: Vars,
    /// The next T_UPDATE instant not yet run.
    next_update: Nanos,
    /// The last update changed nothing and the queue has not changed since: further updates are
    /// no-ops until the next enqueue/dequeue.
    settled: bool,
    /// Updates actually computed (not skipped); for tests of the catch-up cost.
    updates_run: u64,
}

impl<P: QueuedPacket> Pie<P> {
    pub fn new(cfg: PieConfig, limit: Limit, ecn: bool, seed: u64) -> Self {
        let vars = Vars {
            prob: 0.0,
            qdelay: 0.0,
            qdelay_old: 0.0,
            burst: cfg.max_burst,
            avg_dq_rate: 0.0,
            dq_count: None,
            dq_start: 0,
        };
        Self {
            next_update: cfg.first_update(),
            cfg,
            ecn,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            fifo: Fifo::new(limit),
            vars,
            settled: false,
            updates_run: 0,
        }
    }

    pub fn from_queue_config(q: QueueConfig, cfg: PieConfig) -> Self {
        Self::new(cfg, q.limit, q.ecn, q.seed)
    }

    pub fn config(&self) -> &PieConfig {
        &self.cfg
    }

    /// The current drop/mark probability (as of the last update run).
    pub fn probability(&self) -> f64 {
        self.vars.prob
    }

    /// The remaining burst allowance.
    pub fn burst_allowance(&self) -> Nanos {
        self.vars.burst
    }

    /// The current delay estimate in seconds, as the next update would read it.
    fn current_qdelay(&self) -> f64 {
        match self.cfg.estimator {
            QdelayEstimator::Timestamp => self.vars.qdelay,
            QdelayEstimator::DequeueRate if self.vars.avg_dq_rate > 0.0 => {
                self.fifo.bytes() as f64 / self.vars.avg_dq_rate
            }
            QdelayEstimator::DequeueRate => 0.0,
        }
    }

    /// Run every update due at or before `now` (see "The update timer without a timer").
    fn catch_up(&mut self, now: Nanos) {
        let period = self.cfg.tupdate;
        while self.next_update <= now {
            if self.settled {
                self.next_update += ((now - self.next_update) / period + 1) * period;
                return;
            }
            let before = self.vars;
            match self.cfg.profile {
                PieProfile::Rfc8033 => self.update_rfc8033(),
                PieProfile::Linux317 => self.update_linux_3_17(),
            }
            self.updates_run += 1;
            self.next_update += period;
            self.settled = self.vars == before;
        }
    }

    /// RFC 8033 §4.2, §4.4 (burst allowance decrement) and §5.5.
    fn update_rfc8033(&mut self) {
        let c = &self.cfg;
        let qdelay = self.current_qdelay();
        let v = &mut self.vars;
        let (target, old) = (secs(c.target), v.qdelay_old);
        let mut dp = rfc8033_scale(v.prob) * (c.alpha * (qdelay - target) + c.beta * (qdelay - old));
        if c.cap_step && v.prob >= STEP_CAP_FROM && dp > STEP_CAP {
            dp = STEP_CAP;
        }
        let mut p = v.prob + dp;
        if qdelay == 0.0 && old == 0.0 {
            p *= DECAY;
        }
        v.prob = p.clamp(0.0, 1.0);
        v.qdelay_old = qdelay;
        v.burst = v.burst.saturating_sub(c.tupdate);
    }

    /// Linux 3.17 `calculate_probability`.
    fn update_linux_3_17(&mut self) {
        let c = &self.cfg;
        let backlog = self.fifo.bytes();
        let v = &mut self.vars;
        let target = secs(c.target);
        let old = v.qdelay;
        v.qdelay_old = v.qdelay;
        let qdelay = if v.avg_dq_rate > 0.0 { backlog as f64 / v.avg_dq_rate } else { 0.0 };
        // A zero estimate over a non-empty queue means no rate yet: no decay this round.
        let mut decay_allowed = !(qdelay == 0.0 && backlog != 0);
        let mut dp = linux_3_17_scale(v.prob) * (c.alpha * (qdelay - target) + c.beta * (qdelay - old));
        if c.cap_step && dp > STEP_CAP && v.prob >= STEP_CAP_FROM {
            dp = STEP_CAP;
        }
        if qdelay > LINUX_HIGH_DELAY {
            dp += STEP_CAP;
        }
        let mut p = v.prob + dp;
        if p > 1.0 {
            p = 1.0;
            decay_allowed = false;
        } else if p < 0.0 {
            p = 0.0;
        }
        if qdelay == 0.0 && old == 0.0 && decay_allowed {
            p *= DECAY;
        }
        v.prob = p;
        v.qdelay = qdelay;
        if v.qdelay < target / 2.0 && v.qdelay_old < target / 2.0 && v.prob == 0.0 && v.avg_dq_rate > 0.0 {
            // pie_vars_init
            v.dq_count = None;
            v.avg_dq_rate = 0.0;
            v.burst = c.max_burst;
        }
    }

    /// The dequeue-rate estimator, after a packet of `size` bytes left at `now`.
    fn measure_dequeue_rate(&mut self, size: u32, now: Nanos) {
        let threshold = self.cfg.dq_threshold;
        let backlog = self.fifo.bytes();
        let linux = self.cfg.profile == PieProfile::Linux317;
        let v = &mut self.vars;
        if backlog >= threshold && v.dq_count.is_none() {
            v.dq_count = Some(0);
            v.dq_start = now;
        }
        let Some(count) = v.dq_count else { return };
        let count = count + size as u64;
        v.dq_count = Some(count);
        if count < threshold {
            return;
        }
        let elapsed = now - v.dq_start;
        if elapsed == 0 {
            return;
        }
        let rate = count as f64 / secs(elapsed);
        v.avg_dq_rate = if v.avg_dq_rate == 0.0 { rate } else { v.avg_dq_rate * 7.0 / 8.0 + rate / 8.0 };
        if backlog < threshold {
            v.dq_count = None;
        } else {
            v.dq_count = Some(0);
            v.dq_start = now;
        }
        if linux {
            v.burst = v.burst.saturating_sub(elapsed);
        }
    }

    /// Whether PIE picks the arriving packet (RFC §4.1, §4.4; Linux `drop_early`).
    fn pick(&mut self) -> bool {
        let c = &self.cfg;
        let v = &self.vars;
        if v.burst > 0 {
            return false;
        }
        let half_target = secs(c.target) / 2.0;
        let guarded = match c.profile {
            PieProfile::Rfc8033 => {
                (v.qdelay_old < half_target && v.prob < GUARD_MAX_PROB)
                    || self.fifo.bytes() <= 2 * c.pkt_bytes
            }
            PieProfile::Linux317 => {
                (v.qdelay < half_target && v.prob < GUARD_MAX_PROB) || self.fifo.bytes() < 2 * c.pkt_bytes
            }
        };
        if guarded || v.prob <= 0.0 {
            return false;
        }
        self.rng.gen::<f64>() < v.prob
    }
}

impl<P: QueuedPacket + Send> QueueDisc<P> for Pie<P> {
    fn name(&self) -> &'static str {
        "pie"
    }

    fn enqueue(&mut self, mut pkt: P, now: Nanos) -> Enqueued<P> {
        self.catch_up(now);
        self.settled = false;
        if !self.fifo.admits(pkt.wire_bytes()) {
            return Enqueued::Dropped(pkt, DropReason::Overflow);
        }
        let picked = self.pick();
        if self.cfg.profile == PieProfile::Rfc8033 {
            // §4.4: congestion is over; the allowance is restored.
            let half_target = secs(self.cfg.target) / 2.0;
            if self.vars.prob == 0.0
                && self.current_qdelay() < half_target
                && self.vars.qdelay_old < half_target
            {
                self.vars.burst = self.cfg.max_burst;
            }
        }
        let outcome = if !picked {
            Enqueued::Queued
        } else if self.ecn && pkt.ecn() != Ecn::NotEct && self.vars.prob <= self.cfg.ecn_drop_above {
            // ECT(0), ECT(1), or CE already (Linux INET_ECN_set_ce succeeds on CE too).
            pkt.set_ecn(Ecn::Ce);
            Enqueued::Marked
        } else {
            return Enqueued::Dropped(pkt, DropReason::Aqm);
        };
        self.fifo.push(pkt, now);
        outcome
    }

    fn dequeue(&mut self, now: Nanos, _sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>> {
        self.catch_up(now);
        let (pkt, enqueued_at) = self.fifo.pop()?;
        self.settled = false;
        let size = pkt.wire_bytes();
        let sojourn = now - enqueued_at;
        match self.cfg.estimator {
            QdelayEstimator::Timestamp => {
                self.vars.qdelay = if self.fifo.bytes() == 0 { 0.0 } else { secs(sojourn) };
            }
            QdelayEstimator::DequeueRate => self.measure_dequeue_rate(size, now),
        }
        Some(Dequeued { pkt, sojourn })
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn next_timer(&self) -> Option<Nanos> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, now: Nanos) {
        self.catch_up(now);
    }

    fn signal_probability(&mut self, now: Nanos) -> Option<f64> {
        // Catching up early runs the same T_UPDATE instants a later catch-up would.
        self.catch_up(now);
        Some(self.vars.prob)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{NoSink, Pkt};

    /// Puts `bytes` of 1500-byte packets in the queue without going through the AQM.
    fn backlog(q: &mut Pie<Pkt>, bytes: u64) {
        (0..bytes / 1500).for_each(|_| q.fifo.push(Pkt(1500, Ecn::NotEct), 0));
    }

    fn full() -> Pkt {
        Pkt(1500, Ecn::NotEct)
    }
    fn ect() -> Pkt {
        Pkt(1500, Ecn::Ect0)
    }

    fn rfc() -> Pie<Pkt> {
        Pie::new(PieConfig::rfc8033(), Limit::Packets(1000), false, 1)
    }
    fn linux() -> Pie<Pkt> {
        Pie::new(PieConfig::linux_3_17(), Limit::Packets(1000), false, 1)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-9)
    }
    macro_rules! assert_close {
        ($a:expr, $b:expr) => {{
            let (a, b) = ($a, $b);
            assert!(close(a, b), "{a} != {b}");
        }};
    }

    /// RFC profile: the timestamp sample the next update reads, set by hand.
    fn rfc_update_with(q: &mut Pie<Pkt>, qdelay_ms: f64) -> f64 {
        q.vars.qdelay = qdelay_ms / 1e3;
        q.settled = false; // the state was edited by hand
        let t = q.next_update;
        q.on_timer(t);
        q.probability()
    }

    #[test]
    fn rfc_update_follows_eq_4_2_from_zero() {
        let mut q = rfc();
        assert_eq!(q.next_timer(), Some(15 * MS));
        // qdelay 25 ms, qdelay_old 0, p = 0 < 1e-6: dp = (0.125 * 0.010 + 1.25 * 0.025) / 2048.
        let p1 = 0.0325 / 2048.0;
        assert_close!(rfc_update_with(&mut q, 25.0), p1);
        assert!((1e-5..1e-4).contains(&p1));
        // Standing 25 ms: only the alpha term, now divided by 128.
        let p2 = p1 + 0.00125 / 128.0;
        assert_close!(rfc_update_with(&mut q, 25.0), p2);
        // The delay falls to 5 ms: dp = (0.125 * -0.010 + 1.25 * -0.020) / 128 < 0, bounded at 0.
        assert_eq!(rfc_update_with(&mut q, 5.0), 0.0);
        assert_eq!(q.next_timer(), Some(60 * MS));
    }

    #[test]
    fn rfc_auto_tuning_tiers() {
        // A standing delay of 25 ms against 15 ms: dp = 0.125 * 0.010 / scale.
        for (p, scale) in [
            (0.0, 2048.0),
            (9.9e-7, 2048.0),
            (1e-6, 512.0),
            (5e-6, 512.0),
            (1e-5, 128.0),
            (5e-5, 128.0),
            (1e-4, 32.0),
            (5e-4, 32.0),
            (1e-3, 8.0),
            (5e-3, 8.0),
            (0.01, 2.0),
            (0.05, 2.0),
            (0.1, 1.0),
            (0.5, 1.0),
        ] {
            let mut q = rfc();
            q.vars.prob = p;
            q.vars.qdelay_old = 0.025;
            assert_close!(rfc_update_with(&mut q, 25.0), p + 0.00125 / scale);
        }
        // The notes' oracle (§12.4): p = 5 %, 25 ms standing → dp = 6.25e-4.
        let mut q = rfc();
        q.vars.prob = 0.05;
        q.vars.qdelay_old = 0.025;
        assert_close!(rfc_update_with(&mut q, 25.0) - 0.05, 6.25e-4);
    }

    #[test]
    fn linux_auto_tuning_has_three_tiers() {
        for (p, scale) in
            [(0.0, 8.0), (1e-6, 8.0), (0.005, 8.0), (0.01, 2.0), (0.05, 2.0), (0.1, 1.0), (0.5, 1.0)]
        {
            let mut q = linux();
            q.vars.prob = p;
            // 30 ms standing against 20 ms: Little's law 45 000 B at 1.5 MB/s.
            q.vars.avg_dq_rate = 1.5e6;
            q.vars.qdelay = 0.030;
            backlog(&mut q, 45_000);
            q.on_timer(LINUX_FIRST_UPDATE);
            assert_close!(q.probability(), p + 0.00125 / scale);
        }
    }

    #[test]
    fn step_cap_above_ten_percent_and_only_there() {
        // delay 100 ms, previous 50 ms: dp = 0.125 * 0.085 + 1.25 * 0.050 = 0.073125.
        let mut q = rfc();
        q.vars.prob = 0.15;
        q.vars.qdelay_old = 0.050;
        assert_close!(rfc_update_with(&mut q, 100.0), 0.17);
        // Below 10 % the step is halved but not capped.
        let mut q = rfc();
        q.vars.prob = 0.09;
        q.vars.qdelay_old = 0.050;
        assert_close!(rfc_update_with(&mut q, 100.0), 0.09 + 0.073125 / 2.0);
        // cap_step = false (ns-3 UseCapDropAdjustment = false).
        let mut q =
            Pie::new(PieConfig { cap_step: false, ..PieConfig::rfc8033() }, Limit::Packets(10), false, 1);
        q.vars.prob = 0.15;
        q.vars.qdelay_old = 0.050;
        assert_close!(rfc_update_with(&mut q, 100.0), 0.15 + 0.073125);
        // A falling delay is never capped.
        let mut q = rfc();
        q.vars.prob = 0.5;
        q.vars.qdelay_old = 0.100;
        assert_close!(rfc_update_with(&mut q, 20.0), 0.5 + 0.125 * 0.005 + 1.25 * -0.080);
    }

    #[test]
    fn rfc_has_no_high_delay_boost_linux_does() {
        // 300 ms standing: dp = 0.125 * 0.285 = 0.035625, capped at 0.02.
        let mut q = rfc();
        q.vars.prob = 0.5;
        q.vars.qdelay_old = 0.300;
        assert_close!(rfc_update_with(&mut q, 300.0), 0.52);
        // Linux: 0.125 * 0.280 = 0.035, capped at 0.02, then +0.02 above 250 ms.
        let mut q = linux();
        q.vars.prob = 0.5;
        q.vars.avg_dq_rate = 1.5e6;
        q.vars.qdelay = 0.300;
        backlog(&mut q, 450_000);
        q.on_timer(LINUX_FIRST_UPDATE);
        assert_close!(q.probability(), 0.54);
    }

    #[test]
    fn decay_when_the_queue_stays_empty() {
        // RFC: p = 0.5, both delays 0: p = (0.5 - 0.125 * 0.015) * 0.98, twice.
        let mut q = rfc();
        q.vars.prob = 0.5;
        let p1 = (0.5 - 0.001875) * 0.98;
        assert_close!(rfc_update_with(&mut q, 0.0), p1);
        assert_close!(rfc_update_with(&mut q, 0.0), (p1 - 0.001875) * 0.98);
        // One non-zero delay of the two: no decay.
        let mut q = rfc();
        q.vars.prob = 0.5;
        q.vars.qdelay_old = 0.002;
        assert_close!(rfc_update_with(&mut q, 0.0), 0.5 - 0.001875 - 1.25 * 0.002);

        // Linux: empty queue with a known rate, target 20 ms: p = (0.5 - 0.125 * 0.020) * 0.98.
        let mut q = linux();
        q.vars.prob = 0.5;
        q.vars.avg_dq_rate = 1.5e6;
        q.on_timer(LINUX_FIRST_UPDATE);
        let p1 = (0.5 - 0.0025) * 0.98;
        assert_close!(q.probability(), p1);
        q.on_timer(LINUX_FIRST_UPDATE + 30 * MS);
        assert_close!(q.probability(), (p1 - 0.0025) * 0.98);
        // Linux: no rate known but a packet queued: the estimate is 0 and there is no decay.
        let mut q = linux();
        q.vars.prob = 0.5;
        backlog(&mut q, 1500);
        q.on_timer(LINUX_FIRST_UPDATE);
        assert_close!(q.probability(), 0.5 - 0.0025);
    }

    #[test]
    fn linux_update_sequence_through_the_queue() {
        // A known drain rate of 1.5 MB/s makes each queued 1500-byte packet 1 ms of delay.
        let mut q = linux();
        q.vars.avg_dq_rate = 1.5e6;
        let fill = |q: &mut Pie<Pkt>, n: usize, t: Nanos| {
            for _ in 0..n {
                assert!(matches!(q.enqueue(full(), t), Enqueued::Queued), "burst allowance protects");
            }
        };
        fill(&mut q, 30, 0);
        assert_eq!(q.next_timer(), Some(500 * MS));
        // 30 ms, previous 0, p < 1 %: dp = (0.125 * 0.010 + 1.25 * 0.030) / 8.
        let mut p = 0.03875 / 8.0;
        q.on_timer(500 * MS);
        assert_close!(q.probability(), p);
        assert_close!(q.vars.qdelay, 0.030);
        // Standing 30 ms: dp = 0.125 * 0.010 / 8.
        p += 0.00125 / 8.0;
        q.on_timer(530 * MS);
        assert_close!(q.probability(), 0.005);
        // 130 ms (100 more packets, burst allowance still unused): dp = (0.125*0.110 + 1.25*0.100)/8.
        fill(&mut q, 100, 540 * MS);
        p += 0.13875 / 8.0;
        q.on_timer(560 * MS);
        assert_close!(q.probability(), p);
        // Standing 130 ms, 1 % <= p < 10 %: dp = 0.125 * 0.110 / 2.
        p += 0.006875;
        q.on_timer(590 * MS);
        assert_close!(q.probability(), p);
        // 230 ms: dp = (0.125 * 0.210 + 1.25 * 0.100) / 2; p < 10 % before, so no cap.
        fill(&mut q, 100, 600 * MS);
        p += 0.075625;
        q.on_timer(620 * MS);
        assert_close!(q.probability(), p);
        assert!(p > 0.1);
        // Standing 230 ms at p >= 10 %: 0.125 * 0.210 = 0.02625, capped at 0.02.
        p += 0.02;
        q.on_timer(650 * MS);
        assert_close!(q.probability(), p);
        // 280 ms: capped 0.02, plus 0.02 above 250 ms.
        fill(&mut q, 50, 660 * MS);
        p += 0.04;
        q.on_timer(680 * MS);
        assert_close!(q.probability(), p);
        assert_close!(p, 0.16484375);
    }

    #[test]
    fn rfc_timestamp_estimate_is_the_last_sojourn_and_zero_when_empty() {
        let mut q = rfc();
        q.enqueue(full(), 0);
        q.enqueue(full(), MS);
        let d = q.dequeue(10 * MS, &mut NoSink).unwrap();
        assert_eq!(d.sojourn, 10 * MS);
        assert_close!(q.current_qdelay(), 0.010);
        // The update at 15 ms reads 10 ms: dp = (0.125 * -0.005 + 1.25 * 0.010) / 2048.
        q.on_timer(15 * MS);
        assert_close!(q.probability(), (0.0125 - 0.000625) / 2048.0);
        assert_close!(q.vars.qdelay_old, 0.010);
        let d = q.dequeue(16 * MS, &mut NoSink).unwrap();
        assert_eq!(d.sojourn, 15 * MS);
        assert_eq!(q.current_qdelay(), 0.0, "the queue emptied");
    }

    #[test]
    fn linux_dequeue_rate_estimator_and_burst_allowance() {
        let mut q = linux();
        for _ in 0..20 {
            q.enqueue(full(), 0);
        }
        // One 1500-byte packet leaves per ms. The first dequeue leaves 28 500 B >= 10 000 B and
        // starts a measurement at 1 ms that counts its own packet, as Linux does.
        for k in 1..=7 {
            q.dequeue(k * MS, &mut NoSink).unwrap();
        }
        // 7 packets = 10 500 B by 7 ms: rate 10 500 B / 6 ms; 19 500 B remain, so it restarts.
        assert_close!(q.vars.avg_dq_rate, 1.75e6);
        assert_eq!(q.burst_allowance(), 94 * MS);
        assert_eq!(q.vars.dq_count, Some(0));
        for k in 8..=14 {
            q.dequeue(k * MS, &mut NoSink).unwrap();
        }
        // 10 500 B in 7 ms = 1.5 MB/s; avg = 7/8 * 1.75e6 + 1/8 * 1.5e6; 9 000 B left: stop.
        assert_close!(q.vars.avg_dq_rate, 1.71875e6);
        assert_eq!(q.burst_allowance(), 87 * MS);
        assert_eq!(q.vars.dq_count, None);
        // The update reads 9 000 B / 1.71875 MB/s.
        q.on_timer(LINUX_FIRST_UPDATE);
        assert_close!(q.vars.qdelay, 9000.0 / 1.71875e6);
    }

    #[test]
    fn linux_resets_rate_and_burst_once_quiet() {
        let mut q = linux();
        q.vars.burst = 0;
        q.vars.avg_dq_rate = 1.5e6;
        q.vars.prob = 0.0005;
        // Empty queue, p < 1 %: (0.0005 - 0.0025 / 8) * 0.98 = 0.00018375; not yet 0.
        q.on_timer(LINUX_FIRST_UPDATE);
        assert_close!(q.probability(), 0.00018375);
        assert_eq!(q.burst_allowance(), 0);
        // Next update reaches 0: the estimator and the burst allowance are reset.
        q.on_timer(LINUX_FIRST_UPDATE + 30 * MS);
        assert_eq!(q.probability(), 0.0);
        assert_eq!(q.burst_allowance(), 100 * MS);
        assert_eq!(q.vars.avg_dq_rate, 0.0);
    }

    #[test]
    fn rfc_burst_allowance_shrinks_per_update_and_is_restored() {
        let mut q = rfc();
        for _ in 0..5 {
            q.enqueue(full(), 0);
        }
        q.vars.prob = 1.0;
        q.vars.qdelay = 0.100;
        // Updates at 15, 30, ..., 135 ms leave 15 ms of the 150 ms.
        assert!(matches!(q.enqueue(full(), 140 * MS), Enqueued::Queued));
        assert_eq!(q.burst_allowance(), 15 * MS);
        assert_eq!(q.probability(), 1.0);
        // The tenth update, at 150 ms, uses it up: p = 1 drops every arrival.
        assert!(matches!(q.enqueue(full(), 150 * MS), Enqueued::Dropped(_, DropReason::Aqm)));
        assert_eq!(q.burst_allowance(), 0);
        // Congestion over (p = 0, both delays < 7.5 ms): the next arrival restores MAX_BURST.
        q.vars.prob = 0.0;
        q.vars.qdelay = 0.001;
        q.vars.qdelay_old = 0.001;
        q.enqueue(full(), 151 * MS);
        assert_eq!(q.burst_allowance(), 150 * MS);
    }

    /// AQM drops among `n` arrivals at 1 ms to a queue past its burst allowance holding `queued`
    /// packets, with `p` and the delays forced (no update is due before 1 ms).
    fn drops(profile: PieProfile, prob: f64, qdelay: f64, qdelay_old: f64, queued: usize, n: usize) -> usize {
        let mut q = Pie::new(PieConfig::for_profile(profile), Limit::Packets(1000), false, 7);
        for _ in 0..queued {
            q.enqueue(full(), 0);
        }
        (q.vars.burst, q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (0, prob, qdelay, qdelay_old);
        (0..n).filter(|_| matches!(q.enqueue(full(), MS), Enqueued::Dropped(_, DropReason::Aqm))).count()
    }

    #[test]
    fn no_drop_rules() {
        use PieProfile::*;
        for profile in [Rfc8033, Linux317] {
            // p = 1 and a long queue: every arrival is dropped.
            assert_eq!(drops(profile, 1.0, 0.1, 0.1, 10, 5), 5);
            // p = 19 % drops about one in five ...
            assert!((20..60).contains(&drops(profile, 0.19, 0.1, 0.1, 10, 200)));
            // ... but not while the delay is below target/2 (7.5 or 10 ms) and p < 20 %.
            assert_eq!(drops(profile, 0.19, 0.005, 0.005, 10, 200), 0);
            // Delay below target/2 but p >= 20 %: the guard is off.
            assert_eq!(drops(profile, 1.0, 0.005, 0.005, 10, 5), 5);
            // Burst allowance left: nothing, whatever p.
            let mut q = Pie::new(PieConfig::for_profile(profile), Limit::Packets(100), false, 7);
            for _ in 0..10 {
                q.enqueue(full(), 0);
            }
            (q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (1.0, 0.1, 0.1);
            assert!(q.burst_allowance() > 0);
            assert!((0..5).all(|_| matches!(q.enqueue(full(), MS), Enqueued::Queued)));
            // One packet queued: never. Three (4 500 B, more than two packets): always at p = 1.
            assert_eq!(drops(profile, 1.0, 0.1, 0.1, 1, 1), 0);
            assert_eq!(drops(profile, 1.0, 0.1, 0.1, 3, 1), 1);
        }
        // Two packets queued (3 000 B): RFC `<= 2 * MEAN_PKTSIZE` protects, Linux `< 2 * mtu` not.
        assert_eq!(drops(Rfc8033, 1.0, 0.1, 0.1, 2, 1), 0);
        assert_eq!(drops(Linux317, 1.0, 0.1, 0.1, 2, 1), 1);
        // The RFC guard reads qdelay_old (the previous update), Linux the last update's estimate.
        assert_eq!(drops(Rfc8033, 0.19, 0.100, 0.005, 10, 200), 0);
        assert!(drops(Rfc8033, 0.19, 0.005, 0.100, 10, 200) > 20);
        assert_eq!(drops(Linux317, 0.19, 0.005, 0.100, 10, 200), 0);
        assert!(drops(Linux317, 0.19, 0.100, 0.005, 10, 200) > 20);
    }

    fn ecn_queue(ecn: bool, ecn_drop_above: f64, prob: f64) -> Pie<Pkt> {
        let cfg = PieConfig { ecn_drop_above, ..PieConfig::rfc8033() };
        let mut q = Pie::new(cfg, Limit::Packets(10_000), ecn, 3);
        for _ in 0..10 {
            q.enqueue(full(), 0);
        }
        (q.vars.burst, q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (0, prob, 0.05, 0.05);
        q
    }

    #[test]
    fn ecn_marks_instead_of_dropping_up_to_ecn_drop_above() {
        // p = 1 > 0.1: ECT packets are dropped like the others (RFC §5.1, Linux 3.17).
        let mut q = ecn_queue(true, 0.1, 1.0);
        assert!(matches!(q.enqueue(ect(), MS), Enqueued::Dropped(_, DropReason::Aqm)));
        // ecn_drop_above = 1 disables that: ECT marked, not-ECT still dropped, CE stays CE.
        let mut q = ecn_queue(true, 1.0, 1.0);
        assert!(matches!(q.enqueue(ect(), MS), Enqueued::Marked));
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect1), MS), Enqueued::Marked));
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ce), MS), Enqueued::Marked));
        assert!(matches!(q.enqueue(full(), MS), Enqueued::Dropped(_, DropReason::Aqm)));
        for _ in 0..10 {
            q.dequeue(2 * MS, &mut NoSink);
        }
        for _ in 0..3 {
            assert_eq!(q.dequeue(2 * MS, &mut NoSink).unwrap().pkt.1, Ecn::Ce);
        }
        // ECN off on the queue: ECT packets are dropped.
        let mut q = ecn_queue(false, 1.0, 1.0);
        assert!(matches!(q.enqueue(ect(), MS), Enqueued::Dropped(_, DropReason::Aqm)));
        // At p = 0.1 exactly, with the default 0.1: marks only, never an AQM drop of ECT.
        let mut q = ecn_queue(true, 0.1, 0.1);
        let outcomes: Vec<_> = (0..400).map(|_| q.enqueue(ect(), MS)).collect();
        let marks = outcomes.iter().filter(|o| matches!(o, Enqueued::Marked)).count();
        assert!(outcomes.iter().all(|o| !matches!(o, Enqueued::Dropped(..))));
        assert!((20..70).contains(&marks), "{marks} marks of 400 at p = 0.1");
        // Just above 0.1: the same draws drop instead.
        let mut q = ecn_queue(true, 0.1, 0.1 + 1e-9);
        let drops = (0..400).filter(|_| matches!(q.enqueue(ect(), MS), Enqueued::Dropped(..))).count();
        assert_eq!(drops, marks);
    }

    #[test]
    fn overflow_comes_first_and_drops_ect() {
        let mut q = Pie::new(PieConfig::rfc8033(), Limit::Packets(3), true, 1);
        for _ in 0..3 {
            assert!(matches!(q.enqueue(ect(), 0), Enqueued::Queued));
        }
        // Burst allowance left and p = 0: still an overflow drop, ECT or not.
        assert!(matches!(q.enqueue(ect(), 0), Enqueued::Dropped(_, DropReason::Overflow)));
        let mut q = Pie::new(PieConfig::linux_3_17(), Limit::Bytes(4000), true, 1);
        q.enqueue(ect(), 0);
        q.enqueue(ect(), 0);
        assert!(matches!(q.enqueue(ect(), 0), Enqueued::Dropped(_, DropReason::Overflow)));
        assert!(matches!(q.enqueue(Pkt(1000, Ecn::Ect0), 0), Enqueued::Queued));
        assert_eq!((q.len_packets(), q.len_bytes()), (3, 4000));
    }

    fn verdicts(seed: u64) -> Vec<bool> {
        let mut q = Pie::new(PieConfig::rfc8033(), Limit::Packets(10_000), false, seed);
        for _ in 0..10 {
            q.enqueue(full(), 0);
        }
        (q.vars.burst, q.vars.prob, q.vars.qdelay, q.vars.qdelay_old) = (0, 0.3, 0.05, 0.05);
        (0..300).map(|_| matches!(q.enqueue(full(), MS), Enqueued::Dropped(..))).collect()
    }

    #[test]
    fn same_seed_same_decisions() {
        assert_eq!(verdicts(42), verdicts(42));
        assert_ne!(verdicts(42), verdicts(43));
        let drops = verdicts(42).iter().filter(|&&d| d).count();
        assert!((60..120).contains(&drops), "{drops} of 300 at p = 0.3");
    }

    /// A scripted run: bursts into a 10 Mb/s link (1.2 ms per packet), pauses, one long idle gap.
    /// Returns every outcome and the probability after every event.
    fn scripted(cfg: PieConfig, with_timer: bool) -> (Vec<String>, Vec<f64>, u64) {
        let mut q = Pie::new(cfg, Limit::Packets(200), true, 9);
        let mut log = Vec::new();
        let mut probs = Vec::new();
        let mut t: Nanos = 0;
        let tx = 1_200_000;
        let step = |q: &mut Pie<Pkt>, to: Nanos| {
            if with_timer {
                while let Some(w) = q.next_timer().filter(|&w| w <= to) {
                    q.on_timer(w);
                }
            }
        };
        let mut next_dq = 0;
        for round in 0..80u64 {
            // A burst of arrivals every 40 ms, more than the link drains, with a pause now and then.
            let burst = if round % 10 < 8 { 60 } else { 0 };
            for i in 0..burst {
                let at = t + i * 300_000;
                while next_dq <= at {
                    step(&mut q, next_dq);
                    if let Some(d) = q.dequeue(next_dq, &mut NoSink) {
                        log.push(format!("d{}", d.sojourn));
                    }
                    probs.push(q.probability());
                    next_dq += tx;
                }
                step(&mut q, at);
                let p = if i % 2 == 0 { ect() } else { full() };
                log.push(format!("{:?}", q.enqueue(p, at)));
                probs.push(q.probability());
            }
            t += 40 * MS;
            if round == 40 {
                // A minute of silence: the queue drains, then nothing happens.
                while q.len_packets() > 0 {
                    step(&mut q, next_dq);
                    q.dequeue(next_dq, &mut NoSink);
                    next_dq += tx;
                }
                t += 60_000 * MS;
                next_dq = t;
            }
        }
        step(&mut q, t);
        q.on_timer(t);
        probs.push(q.probability());
        (log, probs, q.updates_run)
    }

    #[test]
    fn catching_up_equals_a_timer_at_every_update() {
        for cfg in [PieConfig::rfc8033(), PieConfig::linux_3_17()] {
            let (log_a, probs_a, run_a) = scripted(cfg.clone(), false);
            let (log_b, probs_b, run_b) = scripted(cfg.clone(), true);
            assert_eq!(log_a, log_b);
            assert_eq!(probs_a, probs_b, "probabilities bit for bit");
            assert!(probs_a.iter().any(|&p| p > 0.1), "{:?}: PIE acted", cfg.profile);
            assert!(log_a.iter().any(|o| o.starts_with("Dropped(Pkt(1500, NotEct), Aqm)")));
            assert!(log_a.iter().any(|o| o.starts_with("Marked")));
            // The minute of silence (4 000 or 2 000 updates) was not stepped through.
            assert!(run_a < 2_500 && run_b < 2_500, "{run_a} {run_b} updates computed");
        }
    }

    #[test]
    fn long_idle_costs_a_bounded_number_of_updates() {
        let mut q = rfc();
        q.vars.prob = 1.0;
        q.vars.qdelay_old = 0.3;
        // An hour of empty queue: p decays to 0 in 157 updates (a fixed point), then nothing runs.
        q.on_timer(3_600_000 * MS);
        assert_eq!(q.probability(), 0.0);
        assert!(q.updates_run < 200, "{} updates", q.updates_run);
        assert_eq!(q.next_timer(), Some(3_600_000 * MS + 15 * MS));
        // The same with the update stepped one by one gives the same state.
        let mut r = rfc();
        r.vars.prob = 1.0;
        r.vars.qdelay_old = 0.3;
        while r.next_update <= 3_600_000 * MS {
            let t = r.next_update;
            r.settled = false;
            r.on_timer(t);
        }
        assert_eq!(r.vars, q.vars);
        assert_eq!(r.updates_run, 240_000);
    }

    #[test]
    fn params_defaults_per_profile_and_errors() {
        use crate::ParamValue;
        assert_eq!(PieConfig::from_params(&Params::new()).unwrap(), PieConfig::rfc8033());
        let mut p = Params::new();
        p.insert("profile", ParamValue::Str("linux-3.17".into()));
        assert_eq!(PieConfig::from_params(&p).unwrap(), PieConfig::linux_3_17());
        p.insert("ecn_drop_above", ParamValue::Float(1.0));
        p.insert("target", ParamValue::Str("5ms".into()));
        p.insert("tupdate", ParamValue::Str("16ms".into()));
        p.insert("max_burst", ParamValue::Str("150ms".into()));
        p.insert("cap_step", ParamValue::Bool(false));
        p.insert("dq_threshold_bytes", ParamValue::Int(16384));
        let c = PieConfig::from_params(&p).unwrap();
        assert_eq!(
            (c.ecn_drop_above, c.target, c.tupdate, c.max_burst, c.cap_step, c.dq_threshold),
            (1.0, 5 * MS, 16 * MS, 150 * MS, false, 16384)
        );
        p.reject_unknown("pie").unwrap();
        p.insert("qdelay_estimator", ParamValue::Str("timestamp".into()));
        assert_eq!(PieConfig::from_params(&p).unwrap_err().key, "qdelay_estimator");
        for (k, v) in [
            ("profile", ParamValue::Str("ns3".into())),
            ("ecn_drop_above", ParamValue::Float(1.5)),
            ("ecn_drop_above", ParamValue::Bool(false)),
            ("tupdate", ParamValue::Str("0ms".into())),
            ("alpha", ParamValue::Float(-1.0)),
        ] {
            let mut p = Params::new();
            p.insert(k, v);
            assert_eq!(PieConfig::from_params(&p).unwrap_err().key, k);
        }
        let mut p = Params::new();
        p.insert("qdelay_estimator", ParamValue::Str("dq_rate".into()));
        let c = PieConfig::from_params(&p).unwrap();
        assert_eq!(
            (c.profile, c.estimator, c.dq_threshold),
            (PieProfile::Rfc8033, QdelayEstimator::DequeueRate, 16384)
        );
    }

    #[test]
    fn registry_row_reads_these_parameters() {
        use crate::{build_queue, queue_params, queues, ParamValue};
        let row = queues::<Pkt>().into_iter().find(|e| e.name == "pie").unwrap();
        let specs = queue_params(row.build);
        let keys: Vec<_> = specs.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "profile",
                "qdelay_estimator",
                "target",
                "tupdate",
                "alpha",
                "beta",
                "max_burst",
                "ecn_drop_above",
                "dq_threshold_bytes",
                "pkt_bytes",
                "cap_step"
            ]
        );
        assert_eq!(specs[0].kind, "one of rfc8033, linux-3.17");
        let mut p = Params::new();
        p.insert("profile", ParamValue::Str("linux-3.17".into()));
        p.insert("ecn_drop_above", ParamValue::Float(1.0));
        let cfg = QueueConfig { limit: Limit::Packets(1000), ecn: true, seed: 5 };
        let q = build_queue::<Pkt>("pie", cfg, &p).unwrap();
        assert_eq!((q.name(), q.next_timer()), ("pie", Some(LINUX_FIRST_UPDATE)));
        p.insert("target", ParamValue::Float(5.0));
        assert_eq!(build_queue::<Pkt>("pie", cfg, &p).err().unwrap().key, "target");
    }

    #[test]
    fn rfc_with_dequeue_rate_uses_littles_law() {
        let cfg = PieConfig { estimator: QdelayEstimator::DequeueRate, ..PieConfig::rfc8033() };
        let mut q = Pie::new(cfg, Limit::Packets(1000), false, 1);
        for _ in 0..30 {
            q.enqueue(full(), 0);
        }
        // 1 packet per ms: the measurement starts at the first dequeue (43 500 B left) and ends
        // with the 11th packet (16 500 B >= 16 384 B) at 11 ms: 16 500 B / 10 ms.
        for k in 1..=11 {
            q.dequeue(k * MS, &mut NoSink);
        }
        assert_close!(q.vars.avg_dq_rate, 1.65e6);
        assert_eq!(q.burst_allowance(), 150 * MS, "the RFC shrinks it per update, not per measurement");
        // At 15 ms: 19 packets = 28 500 B / 1.65 MB/s; qdelay_old 0.
        let d = 28_500.0 / 1.65e6;
        q.on_timer(15 * MS);
        assert_close!(q.probability(), (0.125 * (d - 0.015) + 1.25 * d) / 2048.0);
        assert_eq!(q.burst_allowance(), 135 * MS);
    }
}
