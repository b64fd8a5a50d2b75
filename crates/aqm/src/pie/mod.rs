//! PIE, Proportional Integral controller Enhanced (RFC 8033), in three profiles: the RFC itself,
//! the Linux 3.14–4.x `sch_pie` (as shipped in 3.17.4) that the ABE paper ran on its testbed, and
//! the ns-2 PIE that the ABE paper ran in its simulations (ABE L203).
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
//! * §5.4 derandomisation is optional and is not implemented (Linux 3.17 and ns-2 have none
//!   outside ns-2's DOCSIS mode either).
//!
//! # Profiles (`profile`)
//!
//! `"rfc8033"` (default) follows the RFC as above, with the timestamp delay estimate by default
//! (the sojourn of the packet last dequeued, 0 when that dequeue emptied the queue, as ns-3 and
//! Linux ≥ 5.2 do; without that 0 the §4.2 decay could never apply). Update rules in
//! `rfc8033.rs`.
//!
//! `"linux-3.17"` follows `net/sched/sch_pie.c` of Linux 3.14–4.x, which differs from the RFC in
//! ways that change results (lab notes §12.4, ABE L203–L207). Update rules in `linux.rs`:
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
//! `"ns2"` follows ns-2's `queue/pie.cc` / `queue/pie.h` (Cisco and CableLabs, 2013–2014,
//! `PIEQueue`) outside its DOCSIS mode, the code the ABE paper's simulations ran. Update rules and
//! the function-by-function account in `ns2.rs`; in short, against Linux 3.17:
//!
//! * same defaults (`qdelay_ref_` 20 ms, `tUpdate_` 30 ms, `a_` 0.125, `b_` 1.25,
//!   `burst_allowance_` 100 ms, `dq_threshold_` 10 000 B); the first update at `sUpdate_ = 0`;
//! * auto-scaling in six tiers: dp divided by 32 below 0.1 %, by 8 below 1 %, by 2 below 10 %,
//!   and *multiplied* by 2 below 1, by 8 below 10 and by 32 above (`p /= 0.5` etc.);
//! * the 2 % step cap from `p >= 10 %`, then `+2 %` when the delay exceeds 200 ms (Linux: 250 ms),
//!   but only when the decay does not apply; `p` is bounded below by 0 and **not above by 1**;
//! * `p *= 0.98` whenever both delays are 0, including "no rate known yet";
//! * while the burst allowance is positive an update sets `p = 0` and skips the controller; the
//!   allowance shrinks by tupdate per update; it is (re)armed to `max_burst` by the first
//!   early-drop check after a quiet period of about 1.5 s (`burst_state_` machine);
//! * the dequeue-rate average weighs old and new equally (0.5/0.5, Linux 7/8 and 1/8); the quiet
//!   reset clears the average only (not the burst allowance) and does not stop a running
//!   measurement;
//! * ECT packets are marked while `p < mark_p_` (strictly), or always with `use_mark_p_ false`.
//!
//! Dequeue-rate estimator (Linux 3.17, ns-2; also the RFC profile's `qdelay_estimator =
//! "dq_rate"`): after each dequeue, if the remaining backlog is at least `dq_threshold` bytes and
//! no measurement runs, one starts (now, 0 bytes); while one runs, the dequeued packet's bytes are
//! added, and once they reach the threshold, `rate = bytes / elapsed` and
//! `avg = 7/8 avg + 1/8 rate` (ns-2: `avg = avg/2 + rate/2`; the first sample is taken as is); the
//! measurement restarts if the backlog is still at or above the threshold (ns-2: above it), and
//! stops otherwise.
//!
//! # Parameters (`aqm_params`)
//!
//! | key | rfc8033 | linux-3.17 | ns2 | source |
//! |---|---|---|---|---|
//! | `profile` | `"rfc8033"` | | | `"rfc8033"`, `"linux-3.17"` or `"ns2"` |
//! | `target` | `"15ms"` | `"20ms"` | `"20ms"` | RFC §4.2 `QDELAY_REF`; Linux `pie_params_init`; ns-2 `qdelay_ref_`; ABE L203 |
//! | `tupdate` | `"15ms"` | `"30ms"` | `"30ms"` | RFC §4.2 `T_UPDATE`; Linux; ns-2 `tUpdate_`; ABE L203 |
//! | `alpha` (1/s) | 0.125 | 0.125 | 0.125 | RFC §4.2; Linux `alpha = 2` (in 1/16); ns-2 `a_`; ABE L203 |
//! | `beta` (1/s) | 1.25 | 1.25 | 1.25 | RFC §4.2; Linux `beta = 20` (in 1/16); ns-2 `b_`; ABE L203 |
//! | `max_burst` | `"150ms"` | `"100ms"` | `"100ms"` | RFC §4.4 `MAX_BURST`; Linux `pie_vars_init`; ns-2 `burst_allowance_` (→ `max_burst_`); ABE L203 |
//! | `ecn_drop_above` | 0.1 | 0.1 | 0.1 | RFC §5.1 `mark_ecnth`; Linux `MAX_PROB / 10`; ns-2 `mark_p_`; ABE L207 |
//! | `qdelay_estimator` | `"timestamp"` | `"dq_rate"` | `"dq_rate"` | RFC §4.3; Linux 3.17 and ns-2 `calculate_p` have only the rate |
//! | `dq_threshold_bytes` | 16384 | 10000 | 10000 | RFC §5.2 `DQ_THRESHOLD`; Linux `QUEUE_THRESHOLD`; ns-2 `dq_threshold_` |
//! | `pkt_bytes` | 1500 | 1500 | 1500 | RFC §4.1 `MEAN_PKTSIZE`; Linux `psched_mtu` (lab MTU 1500); ns-2 `mean_pktsize_` |
//! | `cap_step` | true | true | true | RFC §5.5 (optional there); always on in Linux and ns-2 |
//!
//! The ns-2 defaults are those of the ns-3 port of this code (NITK 2016, `PieQueue::GetTypeId`:
//! 0.125, 1.25, 30 ms, start 0 s, 10 000 B, 20 ms, 100 ms) and of NITK's ns-2 PIE scripts; the
//! paper confirms 20 ms, 30 ms, 0.125, 1.25 and "100 ms by default in the simulation code" (L203).
//! ns-2's `mean_pktsize_` default is not known here (those sources use 1000); 1500 makes the
//! guard "at most two full-size packets", the packet-mode reading of the paper's runs
//! (`queue_in_bytes_` disabled, L203).
//!
//! `ecn_drop_above` is a probability in `[0, 1]`: with `ecn` on, an ECN-capable packet that PIE
//! picks is marked while `p <= ecn_drop_above` (ns2: `p < ecn_drop_above`) and dropped above.
//! `1` disables the rule (for rfc8033 and linux-3.17 `p` never exceeds 1; for ns2 it stands for
//! `use_mark_p_ false`, marking at any `p`), as in the ABE paper's runs except Fig. 19(b); `0`
//! drops ECN-capable packets whenever `p > 0`.
//!
//! # The update timer without a timer
//!
//! Updates fall at fixed instants (`first + k * tupdate`; start = time 0, when queues are built).
//! The queue state an update reads (backlog, delay samples, rate estimate) changes only in
//! `enqueue`/`dequeue`, so both first run every update due at or before `now`, each seeing exactly
//! the state it would have seen from a timer; [`Pie::next_timer`]/[`Pie::on_timer`] (which the
//! tests use to step update by update) do the same for a caller with a timer, with identical
//! results. To stay O(1) amortised over
//! long gaps, the catch-up stops stepping as soon as one update leaves the controller state
//! unchanged: the state is then a fixed point of the update for the unchanged queue, so every
//! further update until the next enqueue/dequeue would change nothing, and the schedule simply
//! skips to the first update after `now`. This is exact, not an approximation. Every gap over an
//! empty queue converges in a bounded number of steps: the delay input is constant (0), so `p`
//! falls monotonically to 0; from `p = 1` that takes under 180 updates with the RFC defaults
//! (under 3 s), about 145 with Linux's (4.4 s) and a few hundred with ns-2's (whose burst state
//! also needs 52 quiet updates), after which idle time costs nothing. A gap over a standing queue
//! that is not served (a stalled link) settles once `p` is clamped at 1, except with ns2, whose
//! `p` has no upper bound and keeps rising; such a gap is stepped through, as ns-2's timer does.
//! [`Pie::next_timer`] always reports the next update instant; calling [`Pie::on_timer`] there
//! is O(1) once settled.

mod linux;
mod ns2;
mod rfc8033;
#[cfg(test)]
mod tests;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::fifo::Fifo;
use crate::{
    DequeueSink, Dequeued, DropReason, Ecn, Enqueued, Limit, Nanos, ParamError, Params, QueueConfig,
    QueueDisc, QueuedPacket, MS, S, US,
};

pub use linux::{linux_3_17_scale, LINUX_FIRST_UPDATE, LINUX_HIGH_DELAY};
pub use ns2::{ns2_scale, NS2_BURST_RESET_TIMEOUT, NS2_HIGH_DELAY};
pub use rfc8033::rfc8033_scale;

const NANOS_PER_SEC: f64 = 1e9;

/// RFC 8033 §5.5 / Linux / ns-2: the step cap, applied from `p >= 10 %`.
pub const STEP_CAP: f64 = 0.02;
/// The step cap applies from this probability on.
pub const STEP_CAP_FROM: f64 = 0.1;
/// RFC 8033 §4.1 / Linux `drop_early` / ns-2 `drop_early`: the delay guard only holds while `p`
/// is below this.
pub const GUARD_MAX_PROB: f64 = 0.2;
/// RFC 8033 §4.2 / Linux / ns-2: decay factor when the delay has been 0 for two updates.
pub const DECAY: f64 = 0.98;

/// Which PIE. Parameter `profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieProfile {
    /// RFC 8033. `"rfc8033"`.
    Rfc8033,
    /// Linux 3.14–4.x `sch_pie` (3.17.4 in the ABE paper). `"linux-3.17"`.
    Linux317,
    /// ns-2 `queue/pie.cc` (Cisco/CableLabs 2013–14), non-DOCSIS mode. `"ns2"`.
    Ns2,
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
    /// `QDELAY_REF` / Linux `target` / ns-2 `qdelay_ref_`. Key `target`.
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

    /// ns-2 `Queue/PIE` defaults (`qdelay_ref_`, `tUpdate_`, `a_`, `b_`, `burst_allowance_`,
    /// `mark_p_`, `dq_threshold_`; ABE L203), see the module documentation.
    pub fn ns2() -> Self {
        Self { profile: PieProfile::Ns2, ..Self::linux_3_17() }
    }

    pub fn for_profile(profile: PieProfile) -> Self {
        match profile {
            PieProfile::Rfc8033 => Self::rfc8033(),
            PieProfile::Linux317 => Self::linux_3_17(),
            PieProfile::Ns2 => Self::ns2(),
        }
    }

    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let profile = match p.choice("profile", "rfc8033", &["rfc8033", "linux-3.17", "ns2"])?.as_str() {
            "linux-3.17" => PieProfile::Linux317,
            "ns2" => PieProfile::Ns2,
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
        let only_rate = match profile {
            PieProfile::Rfc8033 => None,
            PieProfile::Linux317 => Some("linux-3.17"),
            PieProfile::Ns2 => Some("ns2"),
        };
        if let (Some(name), QdelayEstimator::Timestamp) = (only_rate, estimator) {
            return Err(ParamError {
                key: "qdelay_estimator".into(),
                message: format!("{name} estimates the delay from the dequeue rate only (\"dq_rate\")"),
            });
        }
        Ok(cfg)
    }

    fn first_update(&self) -> Nanos {
        match self.profile {
            PieProfile::Rfc8033 => self.tupdate,
            PieProfile::Linux317 => LINUX_FIRST_UPDATE,
            PieProfile::Ns2 => ns2::NS2_FIRST_UPDATE,
        }
    }
}

fn secs(n: Nanos) -> f64 {
    n as f64 / NANOS_PER_SEC
}

/// ns-2's burst protection state (`burst_state_t` in `pie.h`); unused by the other profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BurstState {
    /// `NO_BURST`: the next early-drop check arms the allowance.
    NoBurst,
    /// `IN_BURST`: the allowance is used up; counting quiet updates.
    InBurst,
    /// `IN_BURST_PROTECTING`: armed; the allowance runs down.
    Protecting,
}

/// Everything a T_UPDATE step reads or writes besides the queue itself.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Vars {
    /// Drop probability (ns2: may exceed 1).
    prob: f64,
    /// Seconds. RFC profile with timestamps: the last dequeue's sample (`current_qdelay`).
    /// Linux: the estimate of the last update (`vars.qdelay`); ns-2: the same (`edv_.qdelay_old`
    /// between updates). Unused by RFC + `dq_rate`.
    qdelay: f64,
    /// Seconds; the delay of the previous update.
    qdelay_old: f64,
    /// Remaining burst allowance.
    burst: Nanos,
    /// ns-2 `burst_state_`.
    burst_state: BurstState,
    /// ns-2 `burst_reset_`: quiet updates counted in `InBurst`.
    burst_reset: u32,
    /// Bytes per second; 0 = no estimate yet.
    avg_dq_rate: f64,
    /// Bytes counted by the running rate measurement; `None` when none runs. Signed because
    /// ns-2's quiet reset sets a running count to -1 without stopping the measurement.
    dq_count: Option<i64>,
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
    /// The next T_UPDATE instant (see "The update timer without a timer" above).
    pub fn next_timer(&self) -> Nanos {
        self.next_update
    }

    /// Run every update due at or before `now`, as a timer would.
    pub fn on_timer(&mut self, now: Nanos) {
        self.catch_up(now);
    }

    pub fn new(cfg: PieConfig, limit: Limit, ecn: bool, seed: u64) -> Self {
        let vars = Vars {
            prob: 0.0,
            qdelay: 0.0,
            qdelay_old: 0.0,
            // ns-2 starts with no allowance (`burst_allowance_(0)`) and arms it at the first
            // early-drop check; the RFC and Linux start with it.
            burst: if cfg.profile == PieProfile::Ns2 { 0 } else { cfg.max_burst },
            burst_state: BurstState::NoBurst,
            burst_reset: 0,
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

    /// The current drop/mark probability (as of the last update run). With the ns2 profile it
    /// may exceed 1, as ns-2's traced `prob_` does; every pick is then a drop or mark.
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
                PieProfile::Ns2 => self.update_ns2(),
            }
            self.updates_run += 1;
            self.next_update += period;
            self.settled = self.vars == before;
        }
    }

    /// The dequeue-rate estimator, after a packet of `size` bytes left at `now` (Linux
    /// `pie_process_dequeue`, ns-2 `PIEQueue::deque`).
    fn measure_dequeue_rate(&mut self, size: u32, now: Nanos) {
        let threshold = self.cfg.dq_threshold as i64;
        let backlog = self.fifo.bytes() as i64;
        let profile = self.cfg.profile;
        let v = &mut self.vars;
        if backlog >= threshold && v.dq_count.is_none() {
            v.dq_count = Some(0);
            v.dq_start = now;
        }
        let Some(count) = v.dq_count else { return };
        let count = count + size as i64;
        v.dq_count = Some(count);
        if count < threshold {
            return;
        }
        let elapsed = now - v.dq_start;
        if elapsed == 0 {
            return;
        }
        let rate = count as f64 / secs(elapsed);
        v.avg_dq_rate = if v.avg_dq_rate == 0.0 {
            rate
        } else if profile == PieProfile::Ns2 {
            0.5 * v.avg_dq_rate + 0.5 * rate
        } else {
            v.avg_dq_rate * 7.0 / 8.0 + rate / 8.0
        };
        // ns-2 restarts only above the threshold (`byteLength() > dq_threshold`), Linux at it.
        let restart = if profile == PieProfile::Ns2 { backlog > threshold } else { backlog >= threshold };
        if restart {
            v.dq_count = Some(0);
            v.dq_start = now;
        } else {
            v.dq_count = None;
        }
        if profile == PieProfile::Linux317 {
            v.burst = v.burst.saturating_sub(elapsed);
        }
    }

    /// Whether PIE picks the arriving packet (RFC §4.1, §4.4; Linux and ns-2 `drop_early`).
    fn pick(&mut self) -> bool {
        let c = &self.cfg;
        let backlog = self.fifo.bytes();
        let v = &mut self.vars;
        if v.burst > 0 {
            return false;
        }
        if c.profile == PieProfile::Ns2 && v.burst_state == BurstState::NoBurst {
            // ns-2 `drop_early`: the first check after a quiet period arms the allowance, then
            // goes on to decide this packet as usual.
            v.burst_state = BurstState::Protecting;
            v.burst = c.max_burst;
        }
        let half_target = secs(c.target) / 2.0;
        let guarded = match c.profile {
            PieProfile::Rfc8033 => {
                (v.qdelay_old < half_target && v.prob < GUARD_MAX_PROB) || backlog <= 2 * c.pkt_bytes
            }
            PieProfile::Linux317 => {
                (v.qdelay < half_target && v.prob < GUARD_MAX_PROB) || backlog < 2 * c.pkt_bytes
            }
            PieProfile::Ns2 => {
                (v.qdelay < half_target && v.prob < GUARD_MAX_PROB) || backlog <= 2 * c.pkt_bytes
            }
        };
        if guarded || v.prob <= 0.0 {
            return false;
        }
        self.rng.gen::<f64>() < v.prob
    }

    /// Whether a picked ECN-capable packet is marked rather than dropped (ECN on).
    fn marks_ect(&self) -> bool {
        let (p, limit) = (self.vars.prob, self.cfg.ecn_drop_above);
        match self.cfg.profile {
            // ns-2 `drop_early`: `!use_mark_p || p < mark_p`.
            PieProfile::Ns2 => limit >= 1.0 || p < limit,
            _ => p <= limit,
        }
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
        } else if self.ecn && pkt.ecn() != Ecn::NotEct && self.marks_ect() {
            // ECT(0), ECT(1), or CE already (Linux INET_ECN_set_ce succeeds on CE too; ns-2
            // keeps `ect()` set on CE packets).
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

    fn signal_probability(&mut self, now: Nanos) -> Option<f64> {
        // Catching up early runs the same T_UPDATE instants a later catch-up would.
        self.catch_up(now);
        Some(self.vars.prob)
    }
}
