//! DualPI2, the DualQ Coupled AQM of RFC 9332 as Linux runs it (`net/sched/sch_dualpi2.c`,
//! upstream since 6.17; the defaults of `dualpi2_reset_default`).
//!
//! Two FIFOs share one buffer: the L queue for Scalable (L4S) traffic and the C queue for
//! Classic traffic (RFC 9332 §2.1, §2.5.1).
//!
//! * **Classification** (`dualpi2_skb_classify`): a packet goes to L when its ECN codepoint
//!   ANDed with `ecn_mask` is non-zero; the default mask 1 (`l4s_ect`) sends ECT(1) and CE
//!   (0b01, 0b11) to L and Not-ECT and ECT(0) to C (RFC 9331 §5.1; RFC 9332 §2.5.1.1).
//! * **Scheduler** (`dequeue_packet`): a weighted round robin on a byte credit. The credit
//!   starts at `mtu * (wc - wl)` with `wc = c_protection` percent and `wl = 100 - wc`
//!   (`dualpi2_calculate_c_protection`). L is served while it has packets and either C is empty
//!   or the credit is `<= 0`; otherwise C. Serving L while C waits adds `wc * len` to the
//!   credit, serving C while L waits adds `-wl * len`; with one queue empty the credit stays.
//!   The change is applied only if the packet is sent (not when the AQM drops it). A dequeue
//!   that finds both queues empty resets the credit. With wc = 10 % and equal packets, C gets
//!   one packet in ten while both are backlogged (RFC 9332 §2.5.1.2 "C-protection").
//! * **Base AQM** (`calculate_probability`, the shared [`crate::pi2`] core): every `tupdate`,
//!   `p′ += alpha * (qdelay - target) + beta * (qdelay - last_qdelay)` bounded to `[0, 1]`,
//!   where `qdelay` is the *larger* of the two head sojourns (`get_queue_delays`,
//!   `max(qdelay_l, qdelay_c)`). Without `drop_overload` p′ is capped at `1/k`.
//! * **Coupled signals at dequeue** (`must_drop`, with `drop_early` off): none while the
//!   backlog of both queues left behind the packet is under two MTUs. Otherwise, with
//!   `overload = k * p′ > 1` (strictly):
//!   - C packets (`dualpi2_classic_marking`): two draws against p′ (probability `p′²`); a hit
//!     drops Not-ECT packets and, in overload, every packet; it CE-marks the others;
//!   - L packets (`dualpi2_scalable_marking`): outside overload, one draw against `k * p′`
//!     marks (drops a Not-ECT packet, which only a filter could put in L); in overload with
//!     `drop_overload`, two draws against p′ drop the packet classic-style and every packet
//!     not dropped is marked; in overload without it, every packet is marked.
//! * **Step AQM of the L queue** (`do_step_aqm`): after the coupled decision, an L packet whose
//!   sojourn exceeds `step_thresh` (strictly; 1 ms) is CE-marked (dropped if Not-ECT), if it
//!   was step-eligible at enqueue: the L queue then held at least `min_qlen_step` packets
//!   (`skb_apply_step`). In packet mode (`step_thresh_pkts`) the test is the L queue length
//!   left behind the packet. So an L packet is marked with probability `max(k * p′, step)`.
//!
//! A packet already CE that is picked for a mark is reported as marked, as Linux counts it
//! (`INET_ECN_set_ce` succeeds on CE).
//!
//! # Parameters (`aqm_params`)
//!
//! | key | default | source (Linux `dualpi2_reset_default` unless said) |
//! |---|---|---|
//! | `target` | `"15ms"` | `pi2_target = 15 * NSEC_PER_MSEC` |
//! | `tupdate` | `"16ms"` | `pi2_tupdate = 16 * NSEC_PER_MSEC` |
//! | `alpha` (1/s) | 0.16015625 | `dualpi2_scale_alpha_beta(41)`: 41/256 Hz |
//! | `beta` (1/s) | 3.19921875 | `dualpi2_scale_alpha_beta(819)`: 819/256 Hz |
//! | `step_thresh` | `"1ms"` | `step_thresh = 1 * NSEC_PER_MSEC`, `step_in_packets = false` |
//! | `step_thresh_pkts` | absent | `TCA_DUALPI2_STEP_THRESH_PKTS`; excludes `step_thresh` |
//! | `min_qlen_step` (packets) | 0 | `min_qlen_step = 0` ("always apply step mark") |
//! | `coupling` (k) | 2 | `coupling_factor = 2`, integer 1–255 as the `u8` netlink attribute |
//! | `c_protection` (percent) | 10 | `dualpi2_calculate_c_protection(.., 10)`: wc = 10 %, wl = 90 % |
//! | `drop_overload` | true | `TC_DUALPI2_DROP_OVERLOAD_DROP` |
//! | `drop_early` | false | `TC_DUALPI2_DROP_EARLY_DROP_DEQUEUE` (AQM at dequeue) |
//! | `ecn_mask` | `"l4s_ect"` | `TC_DUALPI2_ECN_MASK_L4S_ECT` (1); `"cla_ect"` = 2, `"any_ect"` = 3 |
//! | `mtu` (bytes) | 1514 | `psched_mtu` of an Ethernet device (1500 + 14), as `codel` |
//!
//! `c_protection` follows Linux's name and unit: the C queue's WRR weight in percent, 0–100.
//!
//! # Deliberate differences from Linux
//!
//! * The physical limit is the link's `limit` (packets or bytes) over both queues together;
//!   Linux has `limit` 10 000 packets plus a `memory_limit` on `skb->truesize`, which has no
//!   counterpart here.
//! * With the link's `ecn` off the queue may not mark (see [`QueueConfig::ecn`]): every mark
//!   becomes a drop. Linux has no such switch. Classification still follows the ECN field.
//! * p′ is an `f64` and the gains are the exact 41/256 and 819/256; Linux scales them to
//!   integers per ns (`pi2_alpha = 44`, `pi2_beta = 879` in units of 2⁻³²/64 per ns), i.e.
//!   effectively 0.160071 and 3.197769 Hz (−0.05 %). Linux's draw `get_random_u32() <= p`
//!   still signals with probability 2⁻³² at p′ = 0; here p′ = 0 never signals.
//! * No tc filters or skb priorities (the `LLLL` class), and no GSO splitting: packets here
//!   are single segments.
//! * Updates fall at `k * tupdate` exactly (Linux re-arms its timer `tupdate` after each
//!   expiry) and run when `enqueue`/`dequeue` first see them due, reading the head sojourns at
//!   their own instant, as `pie` does; idle stretches are skipped once p′ has decayed to 0.

#[cfg(test)]
mod tests;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::pi2::{roll, roll_squared, PiController, Slot, TimedFifo, UpdateClock, Verdict};
use crate::{
    DequeueSink, Dequeued, DropReason, Ecn, Enqueued, Limit, Nanos, ParamError, Params, QueueConfig,
    QueueDisc, QueuedPacket, MS, S, US,
};

/// Linux `MAX_WC`: the WRR weights are percentages.
const MAX_WC: i64 = 100;
/// Linux `step_thresh = 1 * NSEC_PER_MSEC`.
const DEFAULT_STEP_THRESH: Nanos = MS;

/// When the L queue's step marking starts. Linux `step_in_packets` / `step_thresh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepThreshold {
    /// Sojourn above this. Key `step_thresh`.
    Time(Nanos),
    /// L queue length (left behind the packet) above this. Key `step_thresh_pkts`.
    Packets(u64),
}

/// Which ECN codepoints go to the L queue (Linux `ecn_mask`, `enum tc_dualpi2_ecn_mask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMask {
    /// ECT(1) and CE (mask 1). `"l4s_ect"`.
    L4sEct,
    /// ECT(0) and CE (mask 2). `"cla_ect"`.
    ClaEct,
    /// Any ECT or CE (mask 3). `"any_ect"`.
    AnyEct,
}

impl EcnMask {
    fn bits(self) -> u8 {
        match self {
            EcnMask::L4sEct => 1,
            EcnMask::ClaEct => 2,
            EcnMask::AnyEct => 3,
        }
    }

    /// `cb->ect & q->ecn_mask` (codepoints as on the wire: Not-ECT 0, ECT(1) 1, ECT(0) 2, CE 3).
    pub fn selects(self, ecn: Ecn) -> bool {
        let wire = match ecn {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        };
        wire & self.bits() != 0
    }
}

/// One of the two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    /// The low-latency (L4S) queue.
    L,
    /// The Classic queue.
    C,
}

/// DualPI2 parameters; keys, defaults and sources in the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2Config {
    pub target: Nanos,
    pub tupdate: Nanos,
    /// 1/s.
    pub alpha: f64,
    /// 1/s.
    pub beta: f64,
    pub step: StepThreshold,
    /// Packets.
    pub min_qlen_step: u64,
    /// k.
    pub coupling: u32,
    /// The C queue's WRR weight, percent.
    pub c_protection: u8,
    pub drop_overload: bool,
    pub drop_early: bool,
    pub ecn_mask: EcnMask,
    /// Bytes (Linux `psched_mtu`).
    pub mtu: u64,
}

impl Default for DualPi2Config {
    /// Linux `dualpi2_reset_default`.
    fn default() -> Self {
        Self {
            target: 15 * MS,
            tupdate: 16 * MS,
            alpha: 41.0 / 256.0,
            beta: 819.0 / 256.0,
            step: StepThreshold::Time(DEFAULT_STEP_THRESH),
            min_qlen_step: 0,
            coupling: 2,
            c_protection: 10,
            drop_overload: true,
            drop_early: false,
            ecn_mask: EcnMask::L4sEct,
            mtu: 1514,
        }
    }
}

impl DualPi2Config {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let step_time = p.duration("step_thresh", DEFAULT_STEP_THRESH, 0, 10 * S)?;
        let step_pkts = p.opt_u64_in("step_thresh_pkts", 0, u32::MAX as u64, "absent (time-based)")?;
        let step = match step_pkts {
            None => StepThreshold::Time(step_time),
            Some(_) if p.iter().any(|(k, _)| k == "step_thresh") => {
                return Err(ParamError {
                    key: "step_thresh_pkts".into(),
                    message: "give step_thresh or step_thresh_pkts, not both (Linux: \"multiple step \
                              thresh attributes\")"
                        .into(),
                })
            }
            Some(n) => StepThreshold::Packets(n),
        };
        let ecn_mask = match p.choice("ecn_mask", "l4s_ect", &["l4s_ect", "cla_ect", "any_ect"])?.as_str() {
            "cla_ect" => EcnMask::ClaEct,
            "any_ect" => EcnMask::AnyEct,
            _ => EcnMask::L4sEct,
        };
        Ok(Self {
            target: p.duration("target", d.target, 0, 10 * S)?,
            tupdate: p.duration("tupdate", d.tupdate, US, 10 * S)?,
            alpha: p.f64_in("alpha", d.alpha, 0.0, 1000.0)?,
            beta: p.f64_in("beta", d.beta, 0.0, 1000.0)?,
            step,
            min_qlen_step: p.u64_in("min_qlen_step", d.min_qlen_step, 0, u32::MAX as u64)?,
            coupling: p.u64_in("coupling", d.coupling as u64, 1, 255)? as u32,
            c_protection: p.u64_in("c_protection", d.c_protection as u64, 0, MAX_WC as u64)? as u8,
            drop_overload: p.bool("drop_overload", d.drop_overload)?,
            drop_early: p.bool("drop_early", d.drop_early)?,
            ecn_mask,
            mtu: p.u64_in("mtu", d.mtu, 1, 1 << 20)?,
        })
    }

    /// Linux `dualpi2_calculate_c_protection`: the credit a reset starts from.
    fn initial_credit(&self) -> i64 {
        let wc = self.c_protection as i64;
        self.mtu as i64 * (wc - (MAX_WC - wc))
    }

    /// p′'s bound: `1/k` without `drop_overload` (Linux `calculate_probability`).
    fn max_prob(&self) -> f64 {
        if self.drop_overload {
            1.0
        } else {
            1.0 / self.coupling as f64
        }
    }
}

/// A DualPI2 queue; see the module documentation.
pub struct DualPi2<P> {
    cfg: DualPi2Config,
    ecn: bool,
    limit: Limit,
    rng: Xoshiro256PlusPlus,
    l: TimedFifo<P>,
    c: TimedFifo<P>,
    pi: PiController,
    clock: UpdateClock,
    /// WRR credit: L is served while it is `<= 0` (Linux `c_protection_credit`).
    credit: i64,
    /// The queue the last packet handed out came from.
    last_band: Option<Band>,
}

impl<P: QueuedPacket> DualPi2<P> {
    pub fn new(cfg: DualPi2Config, q: QueueConfig) -> Self {
        Self {
            pi: PiController::new(cfg.target, cfg.alpha, cfg.beta, cfg.max_prob()),
            clock: UpdateClock::new(cfg.tupdate),
            credit: cfg.initial_credit(),
            cfg,
            ecn: q.ecn,
            limit: q.limit,
            rng: Xoshiro256PlusPlus::seed_from_u64(q.seed),
            l: TimedFifo::new(),
            c: TimedFifo::new(),
            last_band: None,
        }
    }

    pub fn from_params(q: QueueConfig, p: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(DualPi2Config::from_params(p)?, q))
    }

    pub fn config(&self) -> &DualPi2Config {
        &self.cfg
    }

    /// p′ as of the last update run (Linux `pi2_prob`).
    pub fn probability(&self) -> f64 {
        self.pi.prob
    }

    /// Which queue a packet with this ECN codepoint joins.
    pub fn band_of(&self, ecn: Ecn) -> Band {
        if self.cfg.ecn_mask.selects(ecn) {
            Band::L
        } else {
            Band::C
        }
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
            if self.l.is_empty() && self.c.is_empty() && self.pi.is_at_rest() {
                self.clock.skip_past(now);
                return;
            }
            let qdelay = self.l.head_sojourn(at).max(self.c.head_sojourn(at));
            self.pi.update(qdelay);
            self.clock.advance();
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }

    /// Linux `dequeue_packet`: the next packet by the WRR, and the credit change that sending it
    /// would make. Resets the credit when both queues are empty.
    fn take_next(&mut self) -> Option<(Slot<P>, Band, i64)> {
        let c_waiting = !self.c.is_empty();
        if !self.l.is_empty() && (!c_waiting || self.credit <= 0) {
            let slot = self.l.pop()?;
            let weight = if c_waiting { self.cfg.c_protection as i64 } else { 0 };
            let change = weight * slot.pkt.wire_bytes() as i64;
            return Some((slot, Band::L, change));
        }
        let Some(slot) = self.c.pop() else {
            self.credit = self.cfg.initial_credit();
            return None;
        };
        let weight = if self.l.is_empty() { 0 } else { MAX_WC - self.cfg.c_protection as i64 };
        let change = -weight * slot.pkt.wire_bytes() as i64;
        Some((slot, Band::C, change))
    }

    /// Linux `must_drop` and the marking functions it calls, for a packet of `band` with `ecn`,
    /// `backlog` bytes of both queues staying behind it.
    fn coupled_verdict(&mut self, band: Band, ecn: Ecn, backlog: u64) -> Verdict {
        if backlog < 2 * self.cfg.mtu {
            return Verdict::Pass;
        }
        let p = self.pi.prob;
        let p_l = self.cfg.coupling as f64 * p;
        let overload = p_l > 1.0;
        let ect = ecn != Ecn::NotEct;
        match band {
            Band::C if !roll_squared(&mut self.rng, p) => Verdict::Pass,
            Band::C if overload || !ect => Verdict::Drop,
            Band::C => Verdict::Mark,
            Band::L if overload => {
                if self.cfg.drop_overload && roll_squared(&mut self.rng, p) {
                    Verdict::Drop
                } else {
                    Verdict::Mark
                }
            }
            Band::L if !roll(&mut self.rng, p_l) => Verdict::Pass,
            Band::L if !ect => Verdict::Drop,
            Band::L => Verdict::Mark,
        }
    }

    /// Linux `do_step_aqm` for an L packet with `sojourn`.
    fn step_verdict(&self, slot: &Slot<P>, sojourn: Nanos) -> Verdict {
        let above = match self.cfg.step {
            StepThreshold::Time(t) => sojourn > t,
            StepThreshold::Packets(n) => self.l.len() as u64 > n,
        };
        if !(slot.step_eligible && above) {
            Verdict::Pass
        } else if slot.pkt.ecn() == Ecn::NotEct {
            Verdict::Drop
        } else {
            Verdict::Mark
        }
    }

    /// A mark becomes a drop where the queue may not mark (the link's `ecn` off).
    fn allowed(&self, v: Verdict) -> Verdict {
        match v {
            Verdict::Mark if !self.ecn => Verdict::Drop,
            v => v,
        }
    }

    /// Enqueue-time AQM (`drop_early`): the coupled decision against the backlog already
    /// queued (Linux `dualpi2_enqueue_skb`); a mark is applied here.
    fn decide_early(&mut self, band: Band, pkt: &mut P) -> Verdict {
        let backlog = self.backlog_bytes();
        let v = self.coupled_verdict(band, pkt.ecn(), backlog);
        let v = self.allowed(v);
        if v == Verdict::Mark {
            pkt.set_ecn(Ecn::Ce);
        }
        v
    }

    /// The dequeue-time decisions for a packet taken from `band`: the coupled AQM (unless it
    /// ran at enqueue), then the step for L packets.
    fn decide_late(&mut self, band: Band, slot: &Slot<P>, sojourn: Nanos) -> Verdict {
        let coupled = if self.cfg.drop_early {
            Verdict::Pass
        } else {
            self.coupled_verdict(band, slot.pkt.ecn(), self.backlog_bytes())
        };
        let coupled = self.allowed(coupled);
        if coupled == Verdict::Drop || band == Band::C {
            return coupled;
        }
        match self.allowed(self.step_verdict(slot, sojourn)) {
            Verdict::Pass => coupled,
            step => step,
        }
    }
}

impl<P: QueuedPacket + Send> QueueDisc<P> for DualPi2<P> {
    fn name(&self) -> &'static str {
        "dualpi2"
    }

    fn enqueue(&mut self, mut pkt: P, now: Nanos) -> Enqueued<P> {
        self.catch_up(now);
        let total = self.l.len() + self.c.len();
        if !self.limit.admits(total, self.backlog_bytes(), pkt.wire_bytes()) {
            return Enqueued::Dropped(pkt, DropReason::Overflow);
        }
        let band = self.band_of(pkt.ecn());
        let outcome = match self.cfg.drop_early {
            false => Verdict::Pass,
            true => self.decide_early(band, &mut pkt),
        };
        if outcome == Verdict::Drop {
            return Enqueued::Dropped(pkt, DropReason::Aqm);
        }
        // Linux `skb_apply_step`: L4S-classified, and the L queue already this long.
        let step_eligible = band == Band::L && self.l.len() as u64 >= self.cfg.min_qlen_step;
        let slot = Slot { pkt, arrival: now, step_eligible };
        match band {
            Band::L => self.l.push(slot),
            Band::C => self.c.push(slot),
        }
        if outcome == Verdict::Mark {
            Enqueued::Marked
        } else {
            Enqueued::Queued
        }
    }

    fn dequeue(&mut self, now: Nanos, sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>> {
        self.catch_up(now);
        while let Some((slot, band, credit_change)) = self.take_next() {
            let sojourn = now - slot.arrival;
            let verdict = self.decide_late(band, &slot, sojourn);
            let mut pkt = slot.pkt;
            match verdict {
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
            self.credit += credit_change;
            self.last_band = Some(band);
            return Some(Dequeued { pkt, sojourn });
        }
        None
    }

    fn len_packets(&self) -> usize {
        self.l.len() + self.c.len()
    }

    fn len_bytes(&self) -> u64 {
        self.backlog_bytes()
    }

    /// True unless the coupled AQM runs at enqueue and marks are allowed: the step can then only
    /// drop a Not-ECT packet in L, which classification by ECN never puts there.
    fn drops_at_dequeue(&self) -> bool {
        !(self.cfg.drop_early && self.ecn)
    }

    /// The base probability p′ (C packets see `p′²`, L packets `k * p′`).
    fn signal_probability(&mut self, now: Nanos) -> Option<f64> {
        self.catch_up(now);
        Some(self.pi.prob)
    }
}
