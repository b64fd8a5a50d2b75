//! FQ-CoDel, Flow Queue CoDel (RFC 8290, Høiland-Jørgensen, McKenney, Taht, Gettys and Dumazet,
//! 2018), as Linux's `net/sched/sch_fq_codel.c` runs it, with CoDel per flow by the rules of
//! `include/net/codel_impl.h` (`codel_should_drop`, `codel_dequeue`), the `"linux"` profile of
//! [`crate::codel`].
//!
//! Packets are hashed into `flows` queues (RFC 8290 §4.1; Linux `fq_codel_classify`,
//! `fq_codel_hash`). Each queue is a FIFO with its own CoDel state and a byte *deficit*. A
//! deficit round robin (DRR, Shreedhar and Varghese 1995) serves two lists of queues: *new*
//! flows, queues that had nothing queued when their packet arrived, and *old* flows, which have
//! used up a quantum or emptied while new (RFC 8290 §4.2). New flows are served first, once:
//! that is what lets a sparse flow (a DNS query, a VoIP packet, a TCP handshake) overtake bulk
//! flows. CoDel runs on the selected queue only, so one flow's standing queue is dropped or
//! marked while a sparse flow sharing the link is never touched (RFC 8290 §1, §4).
//!
//! # Parameters (`aqm_params`)
//!
//! | key | default | source |
//! |---|---|---|
//! | `flows` | 1024 | Linux `fq_codel_init` (`q->flows_cnt = 1024`); RFC 8290 §5.2, "Flows"; 1 to 65536 as `fq_codel_change` |
//! | `quantum` | 1514 bytes | Linux `fq_codel_init`: `psched_mtu(dev)` of an Ethernet device (1500 + 14); RFC 8290 §5.2, "Quantum"; 256 to 1 MiB |
//! | `target` | `"5ms"` | Linux `codel_params_init` (`MS2TIME(5)`); RFC 8290 §5.2, "Target" |
//! | `interval` | `"100ms"` | Linux `codel_params_init` (`MS2TIME(100)`); RFC 8290 §5.2, "Interval" |
//! | `mtu` | 1514 bytes | Linux `fq_codel_init`: `q->cparams.mtu = psched_mtu(dev)` (not a `tc` option); 0 to 1 MiB, 0 = the largest packet dequeued so far (Linux 3.x `stats->maxpacket`) |
//! | `drop_batch` | 64 packets | Linux `fq_codel_init` (`q->drop_batch_size = 64`) |
//! | `memory_limit` | 33554432 bytes (32 MiB) | Linux `fq_codel_init` on x86-64 (`32 << 20`; 4 MiB on other architectures); at most 2 GiB as `fq_codel_change` |
//! | `ce_threshold` | absent (off) | Linux `codel_params_init` (`CODEL_DISABLED_THRESHOLD`); RFC 8290 §5.2, "CE Threshold" |
//!
//! The packet limit is the link's `limit` (Linux `sch->limit`, default 10240 packets, set by the
//! scenario, not here); a byte limit is honoured the same way. ECN marking follows the link's
//! `ecn` (RFC 8290 §5.2, "Explicit Congestion Notification (ECN)"). Linux's `fq_codel` turns ECN
//! **on** by default (`fq_codel_init`: `q->cparams.ecn = true`), unlike `codel`, so a scenario
//! reproducing a Linux default `fq_codel` should set `ecn = true` on the link.
//!
//! # What exactly is implemented, function by function
//!
//! * Classification (Linux `fq_codel_hash`: `reciprocal_scale(skb_get_hash(skb), flows_cnt)`):
//!   a 32-bit hash of [`QueuedPacket::flow_id`] keyed by a perturbation drawn from the link's
//!   `seed`, scaled to a bucket by `(hash * flows) >> 32`. Flows that collide share a queue, its
//!   deficit and its CoDel state, as in Linux (RFC 8290 §5, "Probability of Hash Collisions").
//! * Enqueue (Linux `fq_codel_enqueue`; RFC 8290 §4.1): stamp the packet, append it to its
//!   queue; if the queue is on neither list, add it to the tail of the new list with
//!   `deficit = quantum`. Then, if the total packets exceed the limit or the memory in use
//!   exceeds `memory_limit`, drop from the fattest queue (below).
//! * Overflow (Linux `fq_codel_drop`): the queue with the largest byte backlog (strictly
//!   largest; ties go to the lowest bucket) loses packets from its head until `drop_batch`
//!   packets are gone or at least half of its backlog at the start (`threshold = backlog >> 1`),
//!   one packet at least. Its CoDel `count` grows by the number dropped ("tell codel to increase
//!   its signal strength also"). The queue stays on its list. One dropped packet is returned as
//!   [`Enqueued::Dropped`] with [`DropReason::Overflow`], the others come from
//!   [`QueueDisc::take_extra_drop`]; if the arriving packet was among them, it is the one
//!   returned (so the contract "the offered one is queued otherwise" holds).
//! * Dequeue (Linux `fq_codel_dequeue`; RFC 8290 §4.2): take the first queue of the new list,
//!   else of the old list, else return nothing. A queue whose deficit is `<= 0` gets `+quantum`
//!   and moves to the tail of the old list; look again. Otherwise run CoDel on it. If CoDel
//!   returns nothing (the queue was empty, or CoDel dropped what was left), a queue taken from
//!   the new list moves to the tail of the old list (the anti-starvation rule of RFC 8290 §4.2)
//!   if that list is not empty, otherwise it leaves the lists; look again. (The RFC moves it
//!   unconditionally; Linux's extra test changes nothing visible: alone on the old list, the
//!   empty queue would come straight back to the front and be removed.) If CoDel returns a
//!   packet, the queue's deficit loses its size (packets CoDel dropped do not count).
//! * CoDel per queue (Linux `codel_dequeue` as called by `fq_codel_dequeue`): exactly the
//!   `"linux"` profile of [`crate::codel`] (see there, with the control law and re-entry count
//!   shared from that module), on the queue's own FIFO and state, with one difference that is
//!   Linux's: the MTU rule (`codel_should_drop`: `*backlog <= params->mtu`) compares the
//!   **whole** qdisc's backlog, `sch->qstats.backlog`, after the head left, not the queue's.
//!   A lone flow with one packet left is thus still judged when other flows hold packets.
//!   CoDel state lives with the bucket and is never reset (Linux resets `cvars` only in
//!   `fq_codel_reset`), so a queue that empties and comes back keeps its `count`, `lastcount`
//!   and `drop_next`.
//! * `ce_threshold` (Linux `codel_dequeue`, label `end`): a delivered packet whose sojourn is
//!   strictly above the threshold is CE-marked if it is ECT, whatever the `ecn` setting (the
//!   DCTCP-style step marking of RFC 8290 §5.2, "CE Threshold"). A packet already CE is left
//!   alone and not reported again (Linux counts it in `ce_mark` all the same).
//! * Marks and drops at dequeue go to the [`DequeueSink`] with the packet's sojourn time.
//!
//! # Deliberate differences from Linux
//!
//! * The hash: Linux hashes the 5-tuple with the flow dissector's `jhash`, keyed by a secret
//!   drawn once per boot (`skb_get_hash`); Linux 3.x drew a per-qdisc `q->perturbation` at init
//!   and fed it to `jhash_3words`. Here the input is the simulator's `flow_id` and the mixer is
//!   SplitMix64's finaliser keyed by a 32-bit perturbation from the link's `seed`: only the
//!   uniformity of the 32-bit result matters, then `reciprocal_scale` as Linux.
//! * Memory in use counts [`QueuedPacket::wire_bytes`]; Linux counts `skb->truesize` (the
//!   buffer with its overhead, larger than the packet), so `memory_limit` binds later here.
//! * CoDel details as [`crate::codel`]'s `"linux"` profile: exact `interval / sqrt(count)`
//!   rather than Linux's Newton-step fixed point, nanoseconds rather than 1024 ns units, and
//!   "ok to drop" at `now >= first_above_time` (RFC 8289) rather than Linux's strict `after`.
//! * No external classifier (`tc filter`) and no `skb->priority` override: every packet is
//!   hashed. No `ce_threshold_selector`/`mask`.
//! * Parameters out of Linux's range are errors naming the key; Linux silently raises a quantum
//!   below 256 to 256, a `drop_batch` of 0 to 1, and caps `memory_limit` at 2 GiB.

use std::collections::VecDeque;

use ccbench_params::{ParamError, Params};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::codel::{control_law, drop_next_is_recent, linux_reentry_count, Head, LINUX_RECENT_INTERVALS};
use crate::{
    DequeueSink, Dequeued, DropReason, Ecn, Enqueued, Limit, Nanos, QueueConfig, QueueDisc, QueuedPacket, S,
    US,
};

#[cfg(test)]
mod tests;

/// The smallest quantum Linux `fq_codel_change` keeps (`max(256U, quantum)`).
const QUANTUM_MIN: u64 = 256;
/// Linux `FQ_CODEL_QUANTUM_MAX`, the largest quantum (and, in `fq_codel_init`, MTU).
const QUANTUM_MAX: u64 = 1 << 20;
/// Linux `fq_codel_change`: `flows_cnt` in 1..=65536.
const FLOWS_MAX: u64 = 65536;
/// Linux `fq_codel_change`: `memory_limit = min(1U << 31, value)`.
const MEMORY_LIMIT_MAX: u64 = 1 << 31;

/// FQ-CoDel's own parameters (the packet limit, ECN and the hash seed come from
/// [`QueueConfig`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqCoDelConfig {
    /// Number of flow queues (hash buckets). Default 1024 (Linux `fq_codel_init`).
    pub flows: u32,
    /// Bytes a queue may send per DRR round. Default 1514 (Linux `psched_mtu` of Ethernet).
    pub quantum: u32,
    /// CoDel `TARGET`. Default 5 ms.
    pub target: Nanos,
    /// CoDel `INTERVAL`. Default 100 ms.
    pub interval: Nanos,
    /// Total backlog in bytes at or below which no queue counts as above target (Linux
    /// `cparams.mtu`). Default 1514; 0 = the largest packet dequeued so far.
    pub mtu: u64,
    /// Most packets one overflow drops from the fattest queue. Default 64.
    pub drop_batch: u32,
    /// Bytes queued above which an arrival triggers an overflow drop. Default 32 MiB.
    pub memory_limit: u64,
    /// Sojourn time above which ECT packets are CE-marked at dequeue. Default off.
    pub ce_threshold: Option<Nanos>,
}

impl Default for FqCoDelConfig {
    fn default() -> Self {
        Self {
            flows: 1024,
            quantum: 1514,
            target: 5_000_000,
            interval: 100_000_000,
            mtu: 1514,
            drop_batch: 64,
            memory_limit: 32 << 20,
            ce_threshold: None,
        }
    }
}

impl FqCoDelConfig {
    /// Read `flows`, `quantum`, `target`, `interval`, `mtu`, `drop_batch`, `memory_limit` and
    /// `ce_threshold`, with Linux's defaults.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        let given = |key: &str| p.iter().any(|(k, _)| k == key);
        let cfg = Self {
            flows: p.u64_in("flows", d.flows.into(), 1, FLOWS_MAX)? as u32,
            quantum: p.u64_in("quantum", d.quantum.into(), QUANTUM_MIN, QUANTUM_MAX)? as u32,
            target: p.duration("target", d.target, US, 10 * S)?,
            interval: p.duration("interval", d.interval, US, 100 * S)?,
            mtu: p.u64_in("mtu", d.mtu, 0, QUANTUM_MAX)?,
            drop_batch: p.u64_in("drop_batch", d.drop_batch.into(), 1, u32::MAX.into())? as u32,
            memory_limit: p.size("memory_limit", d.memory_limit, 1)?,
            // Absent is off (Linux `CODEL_DISABLED_THRESHOLD`); any value given, 0 too, is on.
            ce_threshold: Some(p.duration("ce_threshold", 0, 0, 10 * S)?).filter(|_| given("ce_threshold")),
        };
        if cfg.memory_limit > MEMORY_LIMIT_MAX {
            return Err(ParamError {
                key: "memory_limit".into(),
                message: format!("must be at most {MEMORY_LIMIT_MAX} B (2 GiB), got {} B", cfg.memory_limit),
            });
        }
        Ok(cfg)
    }
}

/// Which DRR list a queue is on (Linux: `flowchain` linked into `new_flows`, `old_flows`, or
/// `list_empty`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Idle,
    New,
    Old,
}

/// One queue's CoDel variables (Linux `struct codel_vars`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct CoDelVars {
    /// `None` is Linux's 0: the sojourn time is not above target.
    first_above_time: Option<Nanos>,
    drop_next: Nanos,
    count: u64,
    lastcount: u64,
    dropping: bool,
}

/// One hash bucket (Linux `struct fq_codel_flow` and its `q->backlogs[idx]`).
struct Flow<P> {
    packets: VecDeque<(P, Nanos)>,
    /// Bytes queued.
    backlog: u64,
    deficit: i64,
    list: List,
    codel: CoDelVars,
}

impl<P> Flow<P> {
    fn new() -> Self {
        Self {
            packets: VecDeque::new(),
            backlog: 0,
            deficit: 0,
            list: List::Idle,
            codel: CoDelVars::default(),
        }
    }
}

pub struct FqCoDel<P> {
    cfg: FqCoDelConfig,
    ecn: bool,
    limit: Limit,
    /// Key of the flow hash, drawn from the link's seed (Linux 3.x `q->perturbation`).
    perturbation: u32,
    flows: Vec<Flow<P>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Totals over all queues (Linux `sch->q.qlen`, `sch->qstats.backlog`).
    packets: usize,
    bytes: u64,
    /// Largest packet dequeued so far (Linux `cstats.maxpacket`), for `mtu = 0`.
    max_packet: u64,
    /// Packets the last overflow dropped and `take_extra_drop` has not handed out yet. Kept
    /// between enqueues so its buffer is reused.
    overflow: VecDeque<P>,
}

impl<P: QueuedPacket> FqCoDel<P> {
    pub fn new(queue: QueueConfig, cfg: FqCoDelConfig) -> Self {
        Self {
            cfg,
            ecn: queue.ecn,
            limit: queue.limit,
            perturbation: Xoshiro256PlusPlus::seed_from_u64(queue.seed).next_u32(),
            flows: (0..cfg.flows).map(|_| Flow::new()).collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            packets: 0,
            bytes: 0,
            max_packet: 0,
            overflow: VecDeque::new(),
        }
    }

    pub fn from_params(cfg: QueueConfig, p: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(cfg, FqCoDelConfig::from_params(p)?))
    }

    pub fn config(&self) -> FqCoDelConfig {
        self.cfg
    }

    /// The bucket of `flow_id` (Linux `fq_codel_hash`: `reciprocal_scale` of a 32-bit hash).
    pub fn bucket(&self, flow_id: u64) -> usize {
        let hash = (splitmix64_mix(flow_id ^ u64::from(self.perturbation)) >> 32) as u32;
        ((u64::from(hash) * self.flows.len() as u64) >> 32) as usize
    }

    /// Bytes the MTU rule compares with: the largest packet seen if `mtu = 0`.
    fn mtu(&self) -> u64 {
        if self.cfg.mtu == 0 {
            self.max_packet
        } else {
            self.cfg.mtu
        }
    }

    fn over_limit(&self) -> bool {
        let over = match self.limit {
            Limit::Packets(n) => self.packets as u64 > n,
            Limit::Bytes(b) => self.bytes > b,
        };
        // Memory in use is the bytes queued (Linux: the sum of `skb->truesize`).
        over || self.bytes > self.cfg.memory_limit
    }

    /// Take the head of queue `idx`, keeping every count in step (Linux `dequeue_func`,
    /// `dequeue_head`).
    fn pop_head(&mut self, idx: usize) -> Option<(P, Nanos)> {
        let (pkt, at) = self.flows[idx].packets.pop_front()?;
        let size = u64::from(pkt.wire_bytes());
        self.flows[idx].backlog -= size;
        self.packets -= 1;
        self.bytes -= size;
        Some((pkt, at))
    }

    /// Pop queue `idx`'s head and judge it (Linux `codel_should_drop`, with the whole qdisc's
    /// backlog, as `fq_codel_dequeue` passes `&sch->qstats.backlog`).
    fn judge(&mut self, idx: usize, now: Nanos) -> Option<Head<P>> {
        let Some((pkt, enqueued_at)) = self.pop_head(idx) else {
            self.flows[idx].codel.first_above_time = None;
            return None;
        };
        self.max_packet = self.max_packet.max(u64::from(pkt.wire_bytes()));
        let sojourn = now.saturating_sub(enqueued_at);
        let below = sojourn < self.cfg.target || self.bytes <= self.mtu();
        let (interval, vars) = (self.cfg.interval, &mut self.flows[idx].codel);
        let mut ok_to_drop = false;
        if below {
            vars.first_above_time = None;
        } else {
            match vars.first_above_time {
                None => vars.first_above_time = Some(now + interval),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        Some(Head { pkt, sojourn, ok_to_drop })
    }

    /// CoDel on queue `idx` (Linux `codel_dequeue`): the packet to send, if any is left.
    fn codel_dequeue(&mut self, idx: usize, now: Nanos, sink: &mut dyn DequeueSink<P>) -> Option<Head<P>> {
        let head = self.judge(idx, now);
        let Some(h) = &head else {
            self.flows[idx].codel.dropping = false;
            return None;
        };
        if self.flows[idx].codel.dropping {
            if h.ok_to_drop {
                self.signal_while_due(idx, head, now, sink)
            } else {
                self.flows[idx].codel.dropping = false;
                head
            }
        } else if h.ok_to_drop {
            self.enter_dropping(idx, head, now, sink)
        } else {
            head
        }
    }

    /// In the dropping state: signal at every `drop_next` that has come (several drops in one
    /// call if the dequeue is late), until a mark, or the state ends.
    fn signal_while_due(
        &mut self,
        idx: usize,
        mut head: Option<Head<P>>,
        now: Nanos,
        sink: &mut dyn DequeueSink<P>,
    ) -> Option<Head<P>> {
        let interval = self.cfg.interval;
        while self.flows[idx].codel.dropping && now >= self.flows[idx].codel.drop_next {
            let mut h = head.take()?;
            let vars = &mut self.flows[idx].codel;
            vars.count += 1;
            if h.try_mark(self.ecn, sink) {
                let vars = &mut self.flows[idx].codel;
                vars.drop_next = control_law(vars.drop_next, interval, vars.count);
                return Some(h);
            }
            sink.dropped(h.pkt, DropReason::Aqm, h.sojourn);
            head = self.judge(idx, now);
            let vars = &mut self.flows[idx].codel;
            match &head {
                Some(h) if h.ok_to_drop => vars.drop_next = control_law(vars.drop_next, interval, vars.count),
                _ => vars.dropping = false,
            }
        }
        head
    }

    /// Enter the dropping state: signal the head, carry the last spell's count over if recent.
    fn enter_dropping(
        &mut self,
        idx: usize,
        head: Option<Head<P>>,
        now: Nanos,
        sink: &mut dyn DequeueSink<P>,
    ) -> Option<Head<P>> {
        let mut h = head?;
        let head = if h.try_mark(self.ecn, sink) {
            Some(h)
        } else {
            sink.dropped(h.pkt, DropReason::Aqm, h.sojourn);
            self.judge(idx, now)
        };
        let interval = self.cfg.interval;
        let vars = &mut self.flows[idx].codel;
        vars.dropping = true;
        let recent = drop_next_is_recent(now, vars.drop_next, LINUX_RECENT_INTERVALS, interval);
        vars.count = linux_reentry_count(vars.count, vars.lastcount, recent);
        vars.lastcount = vars.count;
        vars.drop_next = control_law(now, interval, vars.count);
        head
    }

    /// Step marking of a delivered packet (Linux `codel_dequeue`, label `end`).
    fn ce_threshold_mark(&self, head: &mut Head<P>, sink: &mut dyn DequeueSink<P>) {
        let Some(threshold) = self.cfg.ce_threshold else { return };
        if head.sojourn > threshold && head.pkt.ecn().is_ect() {
            head.pkt.set_ecn(Ecn::Ce);
            sink.marked(&head.pkt, head.sojourn);
        }
    }

    /// The list to serve: new flows first, then old (Linux `fq_codel_dequeue`, `begin:`).
    fn front(&self) -> Option<(usize, List)> {
        match self.new_flows.front() {
            Some(&i) => Some((i as usize, List::New)),
            None => self.old_flows.front().map(|&i| (i as usize, List::Old)),
        }
    }

    /// Unlink the first queue of `list`.
    fn pop_list(&mut self, list: List) {
        match list {
            List::New => self.new_flows.pop_front(),
            _ => self.old_flows.pop_front(),
        };
    }

    /// Move the first queue of `list` to the tail of the old flows (Linux `list_move_tail`).
    fn move_to_old(&mut self, idx: usize, from: List) {
        self.pop_list(from);
        self.old_flows.push_back(idx as u32);
        self.flows[idx].list = List::Old;
    }

    /// Queue `idx`, first on `from`, had nothing to send: the anti-starvation rule.
    fn retire(&mut self, idx: usize, from: List) {
        if from == List::New && !self.old_flows.is_empty() {
            self.move_to_old(idx, from);
        } else {
            self.pop_list(from);
            self.flows[idx].list = List::Idle;
        }
    }

    /// Drop from the head of the fattest queue (Linux `fq_codel_drop`) into `overflow`; returns
    /// that queue's bucket. `arrival` is the bucket of the packet just queued, used only if no
    /// queue holds a byte (zero-size packets), where Linux would pop an empty bucket 0.
    fn drop_from_fattest(&mut self, arrival: usize) -> usize {
        let (mut idx, mut fattest) = (arrival, 0);
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > fattest {
                (idx, fattest) = (i, f.backlog);
            }
        }
        let threshold = fattest >> 1;
        let (mut len, mut dropped) = (0, 0);
        while let Some((pkt, _)) = self.pop_head(idx) {
            len += u64::from(pkt.wire_bytes());
            dropped += 1;
            self.overflow.push_back(pkt);
            if dropped >= self.cfg.drop_batch || len >= threshold {
                break;
            }
        }
        // "Tell codel to increase its signal strength also."
        self.flows[idx].codel.count += u64::from(dropped);
        idx
    }
}

/// SplitMix64's output function (Steele, Lea and Flood 2014): a bijective 64-bit mixer.
fn splitmix64_mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<P: QueuedPacket + Send> QueueDisc<P> for FqCoDel<P> {
    fn name(&self) -> &'static str {
        "fq_codel"
    }

    fn enqueue(&mut self, pkt: P, now: Nanos) -> Enqueued<P> {
        let idx = self.bucket(pkt.flow_id());
        let size = u64::from(pkt.wire_bytes());
        let quantum = i64::from(self.cfg.quantum);
        let flow = &mut self.flows[idx];
        flow.packets.push_back((pkt, now));
        flow.backlog += size;
        if flow.list == List::Idle {
            flow.list = List::New;
            flow.deficit = quantum;
            self.new_flows.push_back(idx as u32);
        }
        self.packets += 1;
        self.bytes += size;
        if !self.over_limit() {
            return Enqueued::Queued;
        }
        let before = self.overflow.len();
        let fattest = self.drop_from_fattest(idx);
        // The arrival was dropped iff its own queue was emptied: it was that queue's tail.
        let arrival_dropped = fattest == idx && self.flows[idx].packets.is_empty();
        let returned = if arrival_dropped { self.overflow.pop_back() } else { self.overflow.remove(before) };
        Enqueued::Dropped(returned.expect("an overflow drops at least one packet"), DropReason::Overflow)
    }

    fn take_extra_drop(&mut self) -> Option<P> {
        self.overflow.pop_front()
    }

    fn dequeue(&mut self, now: Nanos, sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>> {
        loop {
            let (idx, list) = self.front()?;
            if self.flows[idx].deficit <= 0 {
                self.flows[idx].deficit += i64::from(self.cfg.quantum);
                self.move_to_old(idx, list);
                continue;
            }
            let Some(mut head) = self.codel_dequeue(idx, now, sink) else {
                self.retire(idx, list);
                continue;
            };
            self.flows[idx].deficit -= i64::from(head.pkt.wire_bytes());
            self.ce_threshold_mark(&mut head, sink);
            return Some(Dequeued { pkt: head.pkt, sojourn: head.sojourn });
        }
    }

    fn len_packets(&self) -> usize {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn drops_at_dequeue(&self) -> bool {
        true
    }
}
