//! CoDel, Controlled Delay (RFC 8289, Nichols, Jacobson, McGregor and Iyengar, 2018), as Linux's
//! `sch_codel` runs it (`include/net/codel_impl.h`: `codel_should_drop` and `codel_dequeue`), and,
//! with `profile = "ns2"` or `"ns2-patch"`, as Kathleen Nichols' ns-2 `queue/codel.cc` runs it
//! (the code the ABE paper's simulations ran, L203, L376; see `ns2.rs`).
//!
//! Each packet is stamped on arrival. At dequeue CoDel looks at the head's sojourn time (RFC 8289
//! §3, "Building Blocks": the estimator is the sojourn time of the packet being dequeued). Once it
//! has stayed at or above `target` for a whole `interval` the queue enters the *dropping state*
//! and signals (drops, or CE-marks an ECN-capable packet) at the head. The next signal is scheduled
//! by the control law (RFC 8289 §5 pseudocode `control_law`; equation (12.6) of the reference
//! notes, `algorithms.md` §12.3):
//!
//! ```text
//! drop_next = t + interval / sqrt(count)
//! ```
//!
//! so after entering the dropping state the signals are spaced 100, 70.7, 57.7, 50, 44.7, … ms
//! with the default interval. The state is left as soon as the sojourn time is below `target`
//! (or the backlog falls to one MTU, or the queue empties).
//!
//! # Parameters (`aqm_params`)
//!
//! * `profile`, default `"linux"`: which implementation's rules (section "Profiles" below):
//!   `"linux"` (Linux `sch_codel`, the RFC 8289 §5 pseudocode), `"ns2"` (Pollere's revised ns-2
//!   `codel.cc`, published from July 2012 on beside `sfqcodel.cc`), `"ns2-patch"` (the first
//!   release, Pollere's `CoDel-ns-2.35.patch` of May 2012).
//! * `target`, default `"5ms"`: RFC 8289 §4 ("Setting TARGET") and the §5 pseudocode's `TARGET`;
//!   Linux `codel_params_init` (`MS2TIME(5)`); the ABE paper, L203 (`experiments-abe.md` §1.3).
//! * `interval`, default `"100ms"`: RFC 8289 §4 ("Setting INTERVAL") and the §5 pseudocode's
//!   `INTERVAL`; Linux `codel_params_init` (`MS2TIME(100)`); the ABE paper, L203.
//!   ns-2: `tcl/lib/ns-default.tcl` of the Pollere patch, `Queue/CoDel set target_ .005`,
//!   `interval_ 0.1` (same defaults for every profile).
//! * `mtu`, default 1514 bytes: Linux `psched_mtu(dev)` of an Ethernet device, `dev->mtu` 1500 +
//!   `hard_header_len` 14 (`sch_codel.c`: `q->params.mtu = psched_mtu(qdisc_dev(sch))`). Default
//!   0 with the ns-2 profiles: ns-2 compares the backlog with `maxpacket_`, the largest packet
//!   dequeued so far, starting at 256 bytes (`CoDelQueue::reset`; ns-2 has no MTU, `codel.h`).
//!
//! The physical buffer is the link's `limit` (overflow drops the arrival, [`DropReason::Overflow`];
//! Linux's `codel` default is 1000 packets, set by the scenario, not here). ECN marking is on when
//! the link's `ecn` is (Linux `codel` default: off).
//!
//! `mtu` is the *MAXPACKET* rule of RFC 8289 §5 (`dodequeue`: `bytes() <= maxpacket`): with at
//! most one MTU left in the queue after taking the head, the queue is not "above target", because
//! at low rates one MTU takes longer than `target` to send. Current Linux compares the backlog with
//! `params->mtu` (`psched_mtu`); Linux 3.x (`include/net/codel.h` of that era, the kernel the ABE
//! testbed ran, 3.17.4) compared it with `stats->maxpacket`, the largest packet dequeued so far.
//! `mtu = 0` selects that older rule. Packet sizes here are [`QueuedPacket::wire_bytes`]; Linux's
//! `qdisc_pkt_len` includes the 14-byte Ethernet header.
//!
//! # What exactly is implemented, line by line
//!
//! * Sojourn time and "ok to drop" (RFC 8289 §5 `dodequeue`; Linux `codel_should_drop`): the
//!   head is popped first and `bytes` is the backlog *after* it left. If `sojourn < target` or
//!   `bytes <= mtu`, `first_above_time` is cleared. Otherwise, if unset it becomes
//!   `now + interval`; if set, it is ok to drop when `now >= first_above_time` (RFC 8289 §5
//!   `dodequeue`, `else if (now >= first_above_time_)`). Linux uses a strict `codel_time_after(now,
//!   first_above_time)` at 1024 ns resolution; the two differ only for a dequeue at exactly
//!   `first_above_time`, where this follows the RFC (and the reference notes' §12.3).
//! * Empty queue (RFC 8289 §5 `dodequeue` and `dequeue`): popping from an empty queue clears
//!   `first_above_time` and leaves the dropping state.
//! * Dropping state (RFC 8289 §5 `dequeue`; Linux `codel_dequeue` `if (vars->dropping)`): when
//!   not ok to drop, leave it. Otherwise `while dropping && now >= drop_next`: `count += 1`; if the
//!   head can be marked, mark it, `drop_next = control_law(drop_next, count)` and deliver it (Linux
//!   `goto end`); else drop the head, pop the next packet, and either leave the dropping state
//!   (not ok) or `drop_next = control_law(drop_next, count)`. Several drops may thus happen in one
//!   dequeue.
//! * Entering the dropping state (RFC 8289 §5 `dequeue`, `else if (r.ok_to_drop)`; Linux `else if
//!   (drop)`): mark the head, or drop it and pop the next one; `dropping = true`; then the count
//!   carry-over of Linux, which the RFC adopts verbatim ("this is the Linux version"):
//!   `delta = count - lastcount; count = (delta > 1 && now - drop_next < 16 * interval) ? delta :
//!   1` (RFC 8289 §5 `dequeue`; equation (12.7) of the notes; Linux `codel_dequeue`, `if (delta >
//!   1 && codel_time_before(now - vars->drop_next, 16 * params->interval))`); then
//!   `drop_next = control_law(now, count)` and `lastcount = count`. `now - drop_next` is taken
//!   signed: a `drop_next` still in the future counts as recent, as Linux's wrapping compare does.
//!   The entry signal sets `count` (to 1 or `delta`) rather than adding to it.
//! * Marks: a packet is marked instead of dropped when the link has ECN on and the packet is
//!   ECN-capable, i.e. ECT(0), ECT(1) or already CE (Linux `INET_ECN_set_ce` returns true for CE
//!   too); a mark counts exactly like a drop in `count`. Plain CoDel never drops a markable packet:
//!   it has no overload rule (Linux `codel`).
//!
//! # Profiles
//!
//! Everything above is the `"linux"` profile. The ns-2 profiles keep the same structure (sojourn
//! at dequeue, head drop, the same `while` loop, exact `interval / sqrt(count)` in `double`
//! seconds) and differ in the rules listed, function by function, in `ns2.rs`. In short:
//!
//! | rule | `linux` | `ns2` (Pollere `codel.cc`, 2012–13) | `ns2-patch` (May 2012) |
//! |---|---|---|---|
//! | count on re-entry | `count - lastcount` if > 1 and within 16 intervals, else 1 | `count - 2` if `count > 2` and within 8 intervals (× 0.9844 above 128), else 1 | `count - 1` if `count > 1` and within 16 intervals, else 1 |
//! | `count` after a drop that ends the state | + 1 | unchanged | + 1 |
//! | `first_above_time` when the sojourn goes above target | `now + interval` | `now + interval / sqrt(count)` if `count > 1` and within 8 intervals of `drop_next`, else `now + interval` | `now + interval` |
//! | backlog test | `mtu` (1514) | `maxpacket_` (largest seen, from 256) | same as `ns2` |
//! | at start | `first_above_time` unset | `first_above_time_ = -1`: the first above-target head is ok to drop at once | same as `ns2` |
//! | ECN | marks ECT packets (`params->ecn`) | none in the stock code: marked here where it drops (see `ns2.rs`) | same as `ns2` |
//!
//! The `linux` re-entry rule restarts from the signals of the last spell only (`count -
//! lastcount`); ns-2 keeps the whole `count` and steps it down by 1 or 2 per re-entry, so after a
//! run of short dropping spells ns-2 re-enters at a high count (signals every
//! `interval / sqrt(count)`) where Linux starts again at 1 or 2 (every 100 or 70.7 ms).
//!
//! # Deliberate differences from Linux
//!
//! * The control law uses an exact `interval / sqrt(count)` (in `f64`, truncated to whole
//!   nanoseconds), as RFC 8289 §5 `control_law` writes it. Linux keeps `1/sqrt(count)` as a
//!   16-bit fixed-point value refined by one Newton step per count change (`codel_Newton_step`),
//!   which after a carry-over re-entry can be off by several percent for a few signals.
//! * Time is in nanoseconds, not Linux's 1024 ns units.
//! * No `ce_threshold` (a later Linux addition, off by default).

use ccbench_params::{ParamError, Params};

use crate::fifo::Fifo;
use crate::{
    DequeueSink, Dequeued, DropReason, Ecn, Enqueued, Nanos, QueueConfig, QueueDisc, QueuedPacket, S, US,
};

mod ns2;
#[cfg(test)]
mod tests;

pub use ns2::{
    ns2_patch_reentry_count, ns2_reentry_count, NS2_DECAY, NS2_DECAY_ABOVE, NS2_FIRST_MAXPACKET,
    NS2_PATCH_RECENT_INTERVALS, NS2_RECENT_INTERVALS,
};

/// Linux `codel_dequeue` / RFC 8289 §5: a re-entry within this many intervals of the last
/// `drop_next` carries the count over.
pub const LINUX_RECENT_INTERVALS: u64 = 16;

/// `t + interval / sqrt(count)` (RFC 8289 §5 `control_law`; (12.6) of the notes), in `f64`
/// truncated to whole nanoseconds. Shared with FQ-CoDel's per-flow CoDel.
pub(crate) fn control_law(t: Nanos, interval: Nanos, count: u64) -> Nanos {
    t + (interval as f64 / (count as f64).sqrt()) as Nanos
}

/// `now - drop_next < intervals * interval`, taken signed as Linux's wrapping compare does: a
/// `drop_next` still ahead is recent.
pub(crate) fn drop_next_is_recent(now: Nanos, drop_next: Nanos, intervals: u64, interval: Nanos) -> bool {
    now < drop_next || now - drop_next < intervals * interval
}

/// `count` on entering the dropping state, Linux `codel_dequeue` / RFC 8289 §5: the signals of
/// the last spell (`count - lastcount`) if more than one and `recent`, else 1.
pub(crate) fn linux_reentry_count(count: u64, lastcount: u64, recent: bool) -> u64 {
    let delta = count.saturating_sub(lastcount);
    if delta > 1 && recent {
        delta
    } else {
        1
    }
}

/// Whether CoDel may CE-mark instead of dropping (Linux `params->ecn && INET_ECN_set_ce(skb)`:
/// true for ECT(0), ECT(1) and CE alike).
pub(crate) fn markable(ecn_on: bool, e: Ecn) -> bool {
    ecn_on && (e.is_ect() || e == Ecn::Ce)
}

/// Which CoDel. Parameter `profile`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CoDelProfile {
    /// Linux `sch_codel` (`codel_impl.h`), the RFC 8289 §5 pseudocode. `"linux"`.
    #[default]
    Linux,
    /// ns-2 `queue/codel.cc`, Pollere's revision of July 2012 on (kmn's count rules). `"ns2"`.
    Ns2,
    /// ns-2 `queue/codel.cc` of Pollere's first `CoDel-ns-2.35.patch` (May 2012). `"ns2-patch"`.
    Ns2Patch,
}

impl CoDelProfile {
    /// Read `profile` (default `"linux"`).
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Ok(match p.choice("profile", "linux", &["linux", "ns2", "ns2-patch"])?.as_str() {
            "ns2" => Self::Ns2,
            "ns2-patch" => Self::Ns2Patch,
            _ => Self::Linux,
        })
    }

    fn is_ns2(self) -> bool {
        self != Self::Linux
    }
}

/// CoDel's own parameters (the buffer limit and ECN come from [`QueueConfig`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoDelConfig {
    /// Acceptable standing queue delay (RFC 8289 `TARGET`). Default 5 ms.
    pub target: Nanos,
    /// Sliding window for the minimum, and the control-law period (RFC 8289 `INTERVAL`). Default
    /// 100 ms.
    pub interval: Nanos,
    /// Backlog in bytes at or below which the queue never counts as above target (RFC 8289
    /// MAXPACKET; Linux `params->mtu`). Default 1514. `0`: the largest packet dequeued so far
    /// (Linux 3.x `stats->maxpacket`; ns-2 `maxpacket_`).
    pub mtu: u64,
}

impl Default for CoDelConfig {
    fn default() -> Self {
        Self { target: 5_000_000, interval: 100_000_000, mtu: 1514 }
    }
}

impl CoDelConfig {
    /// The defaults of `profile`: Linux's, or ns-2's (`ns-default.tcl`: the same 5 ms and
    /// 100 ms; `maxpacket_` instead of an MTU, so `mtu = 0`).
    pub fn for_profile(profile: CoDelProfile) -> Self {
        match profile {
            CoDelProfile::Linux => Self::default(),
            CoDelProfile::Ns2 | CoDelProfile::Ns2Patch => Self { mtu: 0, ..Self::default() },
        }
    }

    /// `target`, `interval` and `mtu` with the Linux defaults (`profile` is read by
    /// [`CoDelProfile::from_params`]).
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        Self::from_params_for(p, CoDelProfile::Linux)
    }

    /// `target`, `interval` and `mtu` with the defaults of `profile`.
    pub fn from_params_for(p: &Params, profile: CoDelProfile) -> Result<Self, ParamError> {
        let d = Self::for_profile(profile);
        Ok(Self {
            target: p.duration("target", d.target, US, 10 * S)?,
            interval: p.duration("interval", d.interval, US, 100 * S)?,
            mtu: p.u64_in("mtu", d.mtu, 0, 1 << 20)?,
        })
    }
}

/// The popped head with its sojourn time and the verdict of `dodequeue`.
/// The packet just taken from the head, how long it waited, and whether CoDel may signal on it
/// (RFC 8289 §5 `dodequeue`'s result); FQ-CoDel's per-flow CoDel returns the same.
pub(crate) struct Head<P> {
    pub(crate) pkt: P,
    pub(crate) sojourn: Nanos,
    pub(crate) ok_to_drop: bool,
}

impl<P: QueuedPacket> Head<P> {
    /// CE-mark the head instead of dropping it, if ECN allows it (Linux `params->ecn &&
    /// INET_ECN_set_ce(skb)`), telling `sink`.
    pub(crate) fn try_mark(&mut self, ecn: bool, sink: &mut dyn DequeueSink<P>) -> bool {
        if !markable(ecn, self.pkt.ecn()) {
            return false;
        }
        self.pkt.set_ecn(Ecn::Ce);
        sink.marked(&self.pkt, self.sojourn);
        true
    }
}

pub struct CoDel<P> {
    cfg: CoDelConfig,
    profile: CoDelProfile,
    ecn: bool,
    fifo: Fifo<P>,
    /// When the sojourn time will have been above target for a whole interval (RFC 8289
    /// `first_above_time_`; `None` is the RFC's 0).
    first_above_time: Option<Nanos>,
    /// Time of the next signal while dropping; after that, of the last one (Linux `drop_next`).
    drop_next: Nanos,
    /// Signals since the dropping state was entered, plus the carried-over count.
    count: u64,
    /// `count` when the dropping state was last entered.
    lastcount: u64,
    dropping: bool,
    /// Largest packet dequeued so far (Linux 3.x `stats->maxpacket`, ns-2 `maxpacket_`), for
    /// `mtu = 0`.
    max_packet: u64,
}

impl<P: QueuedPacket> CoDel<P> {
    /// Linux's CoDel.
    pub fn new(queue: QueueConfig, cfg: CoDelConfig) -> Self {
        Self::with_profile(queue, cfg, CoDelProfile::Linux)
    }

    pub fn with_profile(queue: QueueConfig, cfg: CoDelConfig, profile: CoDelProfile) -> Self {
        let ns2 = profile.is_ns2();
        Self {
            cfg,
            profile,
            ecn: queue.ecn,
            fifo: Fifo::new(queue.limit),
            // ns-2 `reset`: `first_above_time_ = -1`, i.e. set and already passed.
            first_above_time: if ns2 { Some(0) } else { None },
            drop_next: 0,
            count: 0,
            lastcount: 0,
            dropping: false,
            max_packet: if ns2 { NS2_FIRST_MAXPACKET } else { 0 },
        }
    }

    pub fn config(&self) -> CoDelConfig {
        self.cfg
    }

    pub fn profile(&self) -> CoDelProfile {
        self.profile
    }

    /// `t + interval / sqrt(count)` (RFC 8289 §5 `control_law`; (12.6) of the notes).
    fn control_law(&self, t: Nanos) -> Nanos {
        control_law(t, self.cfg.interval, self.count)
    }

    /// `now - drop_next < intervals * interval`, signed: a `drop_next` still ahead is recent.
    fn recent(&self, now: Nanos, intervals: u64) -> bool {
        drop_next_is_recent(now, self.drop_next, intervals, self.cfg.interval)
    }

    /// When a head that has just gone above target will make it ok to drop.
    fn first_above_deadline(&self, now: Nanos) -> Nanos {
        match self.profile {
            // ns-2 `dodeque`, kmn's lines: soon after a dropping spell, wait interval/sqrt(count).
            CoDelProfile::Ns2 if self.count > 1 && self.recent(now, NS2_RECENT_INTERVALS) => {
                self.control_law(now)
            }
            _ => now + self.cfg.interval,
        }
    }

    /// `count` on entering the dropping state (before `drop_next = control_law(now)`).
    fn reentry_count(&self, now: Nanos) -> u64 {
        match self.profile {
            CoDelProfile::Linux => {
                linux_reentry_count(self.count, self.lastcount, self.recent(now, LINUX_RECENT_INTERVALS))
            }
            CoDelProfile::Ns2 => ns2_reentry_count(self.count, self.recent(now, NS2_RECENT_INTERVALS)),
            CoDelProfile::Ns2Patch => {
                ns2_patch_reentry_count(self.count, self.recent(now, NS2_PATCH_RECENT_INTERVALS))
            }
        }
    }

    /// Whether every signal in the dropping loop adds to `count` (Linux, the first ns-2 patch);
    /// ns-2's revision counts a drop only when the state goes on (`++count_` after `dodeque`).
    fn counts_every_signal(&self) -> bool {
        self.profile != CoDelProfile::Ns2
    }
}

impl<P: QueuedPacket> CoDel<P> {
    /// Pop the head and judge it (RFC 8289 §5 `dodequeue`; Linux `codel_should_drop`; ns-2
    /// `CoDelQueue::dodeque`).
    fn pop(&mut self, now: Nanos) -> Option<Head<P>> {
        let Some((pkt, enqueued_at)) = self.fifo.pop() else {
            self.first_above_time = None;
            return None;
        };
        let size = pkt.wire_bytes() as u64;
        self.max_packet = self.max_packet.max(size);
        let sojourn = now.saturating_sub(enqueued_at);
        let mtu = if self.cfg.mtu == 0 { self.max_packet } else { self.cfg.mtu };
        let mut ok_to_drop = false;
        if sojourn < self.cfg.target || self.fifo.bytes() <= mtu {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(self.first_above_deadline(now)),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        Some(Head { pkt, sojourn, ok_to_drop })
    }
}

impl<P: QueuedPacket + Send> QueueDisc<P> for CoDel<P> {
    fn name(&self) -> &'static str {
        "codel"
    }

    fn enqueue(&mut self, pkt: P, now: Nanos) -> Enqueued<P> {
        self.fifo.enqueue(pkt, now)
    }

    fn drops_at_dequeue(&self) -> bool {
        true
    }

    fn dequeue(&mut self, now: Nanos, sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>> {
        let mut head = self.pop(now);
        let Some(h) = &head else {
            self.dropping = false;
            return None;
        };
        let every = self.counts_every_signal();
        if self.dropping {
            if !h.ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                let Some(mut h) = head.take() else { break };
                if every {
                    self.count += 1;
                }
                if h.try_mark(self.ecn, sink) {
                    if !every {
                        self.count += 1;
                    }
                    self.drop_next = self.control_law(self.drop_next);
                    head = Some(h);
                    break;
                }
                sink.dropped(h.pkt, DropReason::Aqm, h.sojourn);
                head = self.pop(now);
                match &head {
                    Some(h) if h.ok_to_drop => {
                        if !every {
                            self.count += 1;
                        }
                        self.drop_next = self.control_law(self.drop_next)
                    }
                    _ => self.dropping = false,
                }
            }
        } else if h.ok_to_drop {
            if let Some(mut h) = head.take() {
                if h.try_mark(self.ecn, sink) {
                    head = Some(h);
                } else {
                    sink.dropped(h.pkt, DropReason::Aqm, h.sojourn);
                    head = self.pop(now);
                }
            }
            self.dropping = true;
            self.count = self.reentry_count(now);
            self.drop_next = self.control_law(now);
            self.lastcount = self.count;
        }
        head.map(|h| Dequeued { pkt: h.pkt, sojourn: h.sojourn })
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
}
