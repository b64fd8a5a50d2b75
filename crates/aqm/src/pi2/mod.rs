//! PI2, the single-queue "PI Improved with a square" AQM: K. De Schepper, O. Bondarenko,
//! I.-J. Tsang, B. Briscoe, "PI2: A Linearized AQM for both Classic and Scalable TCP", ACM
//! CoNEXT 2016 (the PI2 paper), which is also the base AQM of the DualQ Coupled AQM (RFC 9332
//! §2.4, §2.5, Appendix A; the `dualpi2` module).
//!
//! A PI controller steers a *base* probability p′ that is linear in the load (PI2 paper §3–§4):
//! every `tupdate`,
//!
//! ```text
//! p′ += alpha * (qdelay - target) + beta * (qdelay - qdelay_old),  bounded to [0, 1]
//! ```
//!
//! without PIE's auto-tuning table, burst allowance or decay: squaring does the job PIE's table
//! approximates (PI2 paper §3; RFC 9332 §2.4, "p_C = (p′)²"). The signal applied to a packet
//! depends on its congestion control, recognised by its ECN codepoint (RFC 9331 §5.1, ECT(1)
//! or CE = scalable):
//!
//! * a Classic packet (Not-ECT, ECT(0)) is dropped, or CE-marked if it is ECN-capable and the
//!   queue may mark, with probability `p′²`, drawn as two independent draws that must both
//!   succeed, as Linux `dualpi2_classic_marking` does (`roll(p) && roll(p)`; RFC 9332
//!   Appendix A.2 describes it as comparing p′ with the larger of two random numbers), not as
//!   one draw against `p′ * p′`; the probability is the same;
//! * a Scalable packet (ECT(1), CE) is CE-marked with probability `min(k * p′, 1)` (RFC 9332
//!   §2.4 "p_CL = k * p′", PI2 paper §5, coupling factor k = 2).
//!
//! The delay input `qdelay` is the sojourn time of the head packet at the update instant, as
//! `sch_dualpi2` measures it (`get_queue_delays`); the signal is applied at dequeue, as in
//! `sch_dualpi2` with its default `drop_early` off and RFC 9332 Appendix A's `dualpi2_dequeue`,
//! so that this queue and `dualpi2` differ only by the second queue. With `ecn` off the queue
//! may not mark: every packet is treated as Classic Not-ECT (dropped with `p′²`).
//!
//! No signal is applied while the backlog left behind the packet is under two MTUs (Linux
//! `must_drop`: `backlog < 2 * psched_mtu`), so a queue of a packet or two is never hit.
//!
//! # Parameters (`aqm_params`)
//!
//! | key | default | source |
//! |---|---|---|
//! | `target` | `"15ms"` | RFC 9332 Appendix A.1 `target = 15 ms` (also Linux `dualpi2_reset_default`) |
//! | `tupdate` | `"16ms"` | RFC 9332 A.1 Figure 2 `Tupdate = 16 ms` (also Linux) |
//! | `alpha` (1/s) | 0.16 | RFC 9332 A.1 Figure 2 line 13, `alpha = 0.1 * Tupdate / RTT_max²` with `RTT_max = 100 ms`, stated as 0.16 |
//! | `beta` (1/s) | 3.2 | RFC 9332 A.1 Figure 2 line 14, `beta = 0.3 / RTT_max`, stated as 3.2 (Linux 819/256) |
//! | `coupling` | 2 | RFC 9332 A.1 `k = 2`; PI2 paper §5 |
//! | `mtu` (bytes) | 1514 | Linux `psched_mtu` of an Ethernet device (1500 + 14), as `codel` |
//!
//! Linux `sch_dualpi2` uses `tupdate = 16 ms`, `alpha = 41/256 ≈ 0.16`, `beta = 819/256 ≈ 3.2`
//! (the `dualpi2` defaults); the RFC's formula gives those from `Tupdate = 16 ms` except beta,
//! which Linux sets a little higher.
//!
//! # Deliberate differences
//!
//! * The PI2 paper's Linux qdisc descended from `sch_pie` and decided at enqueue with PIE's
//!   dequeue-rate delay estimate; this one decides at dequeue with the head sojourn, as
//!   `sch_dualpi2` does (see above).
//! * p′ is an `f64`; Linux keeps it in 32-bit fixed point and draws `get_random_u32() <= p`, so
//!   a p′ of 0 there still signals with probability 2⁻³²; here it never does.
//! * Updates fall at `k * tupdate` exactly and run when `enqueue`/`dequeue` first see them due,
//!   as `pie` does (see "The update timer without a timer" there): the update reads the head
//!   sojourn at its own instant, so the result is the one a timer would give. Idle stretches
//!   are skipped once p′ has decayed to 0 with an empty queue.

mod core;
#[cfg(test)]
mod tests;

pub(crate) use self::core::{PiController, Slot, TimedFifo, UpdateClock};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::{
    DequeueSink, Dequeued, DropReason, Ecn, Enqueued, Limit, Nanos, ParamError, Params, QueueConfig,
    QueueDisc, QueuedPacket, MS, S, US,
};

/// PI2 parameters; keys and sources in the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct Pi2Config {
    /// Key `target`.
    pub target: Nanos,
    /// Key `tupdate`.
    pub tupdate: Nanos,
    /// Integral gain, 1/s. Key `alpha`.
    pub alpha: f64,
    /// Proportional gain, 1/s. Key `beta`.
    pub beta: f64,
    /// k: Scalable packets are marked with `min(k * p′, 1)`. Key `coupling`.
    pub coupling: f64,
    /// Bytes; no signal while less than `2 * mtu` stays queued. Key `mtu`.
    pub mtu: u64,
}

impl Default for Pi2Config {
    /// RFC 9332 Appendix A.1, Figure 2 (the values it states for `RTT_max = 100 ms`).
    fn default() -> Self {
        Self { target: 15 * MS, tupdate: 16 * MS, alpha: 0.16, beta: 3.2, coupling: 2.0, mtu: 1514 }
    }
}

impl Pi2Config {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        Ok(Self {
            target: p.duration("target", d.target, 0, 10 * S)?,
            tupdate: p.duration("tupdate", d.tupdate, US, 10 * S)?,
            alpha: p.f64_in("alpha", d.alpha, 0.0, 1000.0)?,
            beta: p.f64_in("beta", d.beta, 0.0, 1000.0)?,
            coupling: p.f64_in("coupling", d.coupling, 0.0, 1000.0)?,
            mtu: p.u64_in("mtu", d.mtu, 1, 1 << 20)?,
        })
    }
}

/// What a dequeue-time decision does to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Pass,
    Mark,
    Drop,
}

/// One draw with success probability `p` (Linux `dualpi2_roll`).
pub(crate) fn roll(rng: &mut Xoshiro256PlusPlus, p: f64) -> bool {
    rng.gen::<f64>() < p
}

/// Two draws that must both succeed: probability `p²` (Linux `dualpi2_classic_marking`).
pub(crate) fn roll_squared(rng: &mut Xoshiro256PlusPlus, p: f64) -> bool {
    roll(rng, p) && roll(rng, p)
}

/// RFC 9331 §5.1: ECT(1) and CE identify a Scalable (L4S) packet.
pub fn is_scalable(ecn: Ecn) -> bool {
    matches!(ecn, Ecn::Ect1 | Ecn::Ce)
}

/// A PI2 queue; see the module documentation.
pub struct Pi2<P> {
    cfg: Pi2Config,
    ecn: bool,
    limit: Limit,
    rng: Xoshiro256PlusPlus,
    fifo: TimedFifo<P>,
    pi: PiController,
    clock: UpdateClock,
}

impl<P: QueuedPacket> Pi2<P> {
    pub fn new(cfg: Pi2Config, q: QueueConfig) -> Self {
        Self {
            pi: PiController::new(cfg.target, cfg.alpha, cfg.beta, 1.0),
            clock: UpdateClock::new(cfg.tupdate),
            cfg,
            ecn: q.ecn,
            limit: q.limit,
            rng: Xoshiro256PlusPlus::seed_from_u64(q.seed),
            fifo: TimedFifo::new(),
        }
    }

    pub fn from_params(q: QueueConfig, p: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(Pi2Config::from_params(p)?, q))
    }

    pub fn config(&self) -> &Pi2Config {
        &self.cfg
    }

    /// p′ as of the last update run.
    pub fn probability(&self) -> f64 {
        self.pi.prob
    }

    /// The next update instant.
    pub fn next_timer(&self) -> Nanos {
        self.clock.next
    }

    /// Run every update due at or before `now`, as a timer would.
    pub fn on_timer(&mut self, now: Nanos) {
        self.catch_up(now);
    }

    fn catch_up(&mut self, now: Nanos) {
        while let Some(at) = self.clock.due(now) {
            if self.fifo.is_empty() && self.pi.is_at_rest() {
                self.clock.skip_past(now);
                return;
            }
            self.pi.update(self.fifo.head_sojourn(at));
            self.clock.advance();
        }
    }

    /// The decision for a packet just taken from the head, `backlog` bytes staying behind it.
    fn verdict(&mut self, ecn: Ecn, backlog: u64) -> Verdict {
        if backlog < 2 * self.cfg.mtu {
            return Verdict::Pass;
        }
        let p = self.pi.prob;
        if self.ecn && is_scalable(ecn) {
            return if roll(&mut self.rng, (self.cfg.coupling * p).min(1.0)) {
                Verdict::Mark
            } else {
                Verdict::Pass
            };
        }
        if !roll_squared(&mut self.rng, p) {
            Verdict::Pass
        } else if self.ecn && ecn != Ecn::NotEct {
            Verdict::Mark
        } else {
            Verdict::Drop
        }
    }
}

impl<P: QueuedPacket + Send> QueueDisc<P> for Pi2<P> {
    fn name(&self) -> &'static str {
        "pi2"
    }

    fn enqueue(&mut self, pkt: P, now: Nanos) -> Enqueued<P> {
        self.catch_up(now);
        if !self.limit.admits(self.fifo.len(), self.fifo.bytes(), pkt.wire_bytes()) {
            return Enqueued::Dropped(pkt, DropReason::Overflow);
        }
        self.fifo.push(Slot { pkt, arrival: now, step_eligible: false });
        Enqueued::Queued
    }

    fn dequeue(&mut self, now: Nanos, sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>> {
        self.catch_up(now);
        while let Some(Slot { mut pkt, arrival, .. }) = self.fifo.pop() {
            let sojourn = now - arrival;
            match self.verdict(pkt.ecn(), self.fifo.bytes()) {
                Verdict::Drop => {
                    sink.dropped(pkt, DropReason::Aqm, sojourn);
                    continue;
                }
                Verdict::Mark => {
                    pkt.set_ecn(Ecn::Ce);
                    sink.marked(&pkt, sojourn);
                }
                Verdict::Pass => {}
            }
            return Some(Dequeued { pkt, sojourn });
        }
        None
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    /// The AQM decides at dequeue.
    fn drops_at_dequeue(&self) -> bool {
        true
    }

    /// The base probability p′ (not the Classic `p′²` nor the Scalable `k * p′`).
    fn signal_probability(&mut self, now: Nanos) -> Option<f64> {
        self.catch_up(now);
        Some(self.pi.prob)
    }
}
