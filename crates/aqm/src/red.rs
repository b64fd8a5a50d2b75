//! RED, Random Early Detection (Floyd & Jacobson 1993), with gentle RED (Floyd 2000) and the
//! ECN and idle-time details of Linux `sch_red` / `include/net/red.h`.
//!
//! On every arrival (before the arriving packet is counted; Linux reads the backlog first):
//!
//! * **Average.** `avg = (1 - w_q)·avg + w_q·q` with `q` the instantaneous queue in the
//!   threshold unit. If the link has been idle since the last arrival, the average instead decays
//!   as if `m` small packets had been sent during the idle time: `avg = (1 - w_q)^m · avg`,
//!   `m = idle_time / s` with `s = avpkt · 8 / link_rate` (F&J §4 and Fig. 2; Linux
//!   `red_calc_qavg_from_idle_time`, which tabulates the same decay coarsely; here it is exact
//!   with a real `m`). The idle period starts, as in Linux and ns-2, when a dequeue finds the
//!   queue empty (the transmitter goes idle), and ends at the next arrival. An arrival to an
//!   empty queue while the last packet is still being sent is a plain EWMA step with `q = 0`.
//!   Without a link rate (no [`QueueDisc::set_link_rate`], or a non-finite one) `s` uses 10
//!   Mbit/s, iproute2's default `bandwidth`.
//! * **Physical limit first.** A packet that does not fit the buffer is dropped as
//!   [`DropReason::Overflow`], ECT or not, and `count = 0` (ns-2 `red.cc` resets `count` on a
//!   tail drop). The average has already counted the arrival.
//! * **Regions.** `avg < min_th`: enqueue, `count = -1`. `min_th <= avg < max_th`: `count += 1`,
//!   `p_b = max_p·(avg - min_th)/(max_th - min_th)`. With `gentle`, `max_th <= avg < 2·max_th`:
//!   `count += 1`, `p_b = max_p + (1 - max_p)·(avg - max_th)/max_th`. In both, the probability
//!   actually used is `p_a = p_b / (1 - count·p_b)` (`p_a = 1` once `count·p_b >= 1`, F&J §7),
//!   which spreads signals evenly; one uniform draw `u` in `[0, 1)` is taken from the queue's
//!   seeded RNG for every arrival in these regions, and the packet is signalled when `u < p_a`,
//!   then `count = 0`. Above (`avg >= max_th`, or `>= 2·max_th` with `gentle`): forced signal,
//!   `count = 0` (F&J Fig. 2; Linux sets -1 there, which only delays the next early signal by
//!   one packet).
//! * **Signal.** With the link's `ecn` on, an ECN-capable packet (ECT(0), ECT(1), or already CE as
//!   Linux `INET_ECN_set_ce` accepts it) is CE-marked and queued ([`Enqueued::Marked`]); anything
//!   else is dropped ([`DropReason::Aqm`]). In the forced region Linux marks as well unless
//!   `harddrop` is set, and so does this queue: `harddrop = true` drops every forced signal
//!   (the RFC 3168 intent and ns-2's behaviour, algorithms.md §12.2), keeping marks for the
//!   random regions only.
//!
//! **Units.** Thresholds and the average are in packets or in bytes, following how the thresholds
//! are given (`th_unit`): `"packets"` or `"bytes"` directly, or `"buffer"` (the default):
//! fractions of the physical buffer, whose unit they take (a byte limit, as `bdp`/time buffers
//! resolve to, gives byte mode; a packet limit gives packet mode). Byte mode only changes the
//! unit of `q` and `avg` (Linux's RED is byte-based this way); F&J's byte-mode scaling of `p_b` by
//! packet size is not implemented.
//!
//! # Parameters (`aqm_params`)
//!
//! | key | default | meaning / source |
//! |---|---|---|
//! | `preset` | `"none"` | a SIAD-thesis configuration, below; explicit keys override its values |
//! | `th_unit` | `"buffer"` | `buffer` (fractions of the limit), `packets` or `bytes` |
//! | `min_th` | 0.25 | ¼ of the buffer: Floyd's recommendation as cited by the SIAD thesis (seed 002 L1154) |
//! | `max_th` | 0.75 | ¾ of the buffer (same source). With `packets`/`bytes` and only one threshold given, the other follows `max_th = 3·min_th` (iproute2 `tc/q_red.c`, Floyd's REDparameters) |
//! | `w_q` | 0.002 | EWMA weight (F&J 1993; thesis L1154); 1 = instantaneous queue |
//! | `max_p` | 0.1 | Floyd's later guidance and the thesis (L1154); F&J 1993 simulated 0.02, iproute2's `probability` defaults to 0.02 |
//! | `gentle` | true | gentle RED (Floyd 2000; ns-2's default, algorithms.md §12.2). Linux `sch_red` has no gentle mode |
//! | `harddrop` | false | drop instead of mark in the forced region (Linux `harddrop`, off by default) |
//! | `avpkt` | 1000 | bytes of the "small packet" whose transmission time `s` ages the average over idle time (tc-red(8)'s typical `avpkt`) |
//!
//! # Presets: SIAD thesis Table 4.8 (seed 002 L2753-2760; `siad-eval.md` §2)
//!
//! | preset | Table 4.8 line | min_th | max_th | max_p | w_q |
//! |---|---|---|---|---|---|
//! | `red4` | `RED4 4.0 1/4 3/4 0.1 0.002` | ¼ | ¾ | 0.1 | 0.002 |
//! | `red1` | `RED1 1.0 1/4 3/4 0.1 0.002` | ¼ | ¾ | 0.1 | 0.002 |
//! | `nred4` | `NRED4 4.0 1/4 3/4 0.1 1` | ¼ | ¾ | 0.1 | 1 |
//! | `nred1` | `NRED1 1.0 1/4 3/4 0.1 1` | ¼ | ¾ | 0.1 | 1 |
//!
//! The first column of the table, the queue size (4·BDP or 1·BDP), is the link's `buffer`, not a
//! RED parameter: `red4` and `red1` are the same RED and differ only in the buffer the scenario
//! gives the link. Thresholds are fractions of that buffer (`th_unit = "buffer"`). The thesis
//! describes RED with probability 1 at and above `Max_Thresh` (L1152, Fig. 2.5) and does not
//! state gentle mode, so the presets set `gentle = false`. Its AQM runs use drops, not ECN
//! (`ecn` is the link's setting).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::fifo::Fifo;
use crate::{
    DequeueSink, Dequeued, DropReason, Ecn, Enqueued, Limit, Nanos, ParamError, Params, QueueConfig,
    QueueDisc, QueuedPacket,
};

/// Rate used for the idle-time decay until the link tells its own (iproute2's default).
const DEFAULT_RATE_BPS: f64 = 10e6;

/// The unit of the thresholds and of the average queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedMode {
    Packets,
    Bytes,
}

/// A named RED configuration of the SIAD thesis, Table 4.8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedPreset {
    Red1,
    Red4,
    Nred1,
    Nred4,
}

/// What a preset (or the default) sets; thresholds are fractions of the buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedProfile {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
}

/// No preset: Floyd's recommendations as the thesis cites them, with gentle RED.
pub const DEFAULT_PROFILE: RedProfile =
    RedProfile { min_th: 0.25, max_th: 0.75, max_p: 0.1, w_q: 0.002, gentle: true };

impl RedPreset {
    pub const NAMES: [&'static str; 4] = ["red1", "red4", "nred1", "nred4"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "red1" => Some(Self::Red1),
            "red4" => Some(Self::Red4),
            "nred1" => Some(Self::Nred1),
            "nred4" => Some(Self::Nred4),
            _ => None,
        }
    }

    /// The Table 4.8 values. RED1/RED4 and NRED1/NRED4 differ only in the link's buffer.
    pub fn profile(self) -> RedProfile {
        let w_q = match self {
            Self::Red1 | Self::Red4 => 0.002,
            Self::Nred1 | Self::Nred4 => 1.0,
        };
        RedProfile { min_th: 0.25, max_th: 0.75, max_p: 0.1, w_q, gentle: false }
    }

    /// The queue size Table 4.8 pairs with the preset, in BDPs (for the scenario's `buffer`).
    pub fn buffer_bdp(self) -> f64 {
        match self {
            Self::Red1 | Self::Nred1 => 1.0,
            Self::Red4 | Self::Nred4 => 4.0,
        }
    }
}

/// A resolved RED configuration: thresholds in the unit of `mode`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    pub mode: RedMode,
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub harddrop: bool,
    /// Bytes of the packet whose transmission time ages the average while idle.
    pub avpkt: u32,
}

fn err(key: &str, message: impl Into<String>) -> ParamError {
    ParamError { key: key.to_string(), message: message.into() }
}

impl RedConfig {
    /// The configuration `p` asks for on a buffer of `limit` (fractions resolve against it).
    pub fn from_params(p: &Params, limit: Limit) -> Result<Self, ParamError> {
        let mut choices = vec!["none"];
        choices.extend(RedPreset::NAMES);
        let preset = RedPreset::from_name(&p.choice("preset", "none", &choices)?);
        let base = preset.map_or(DEFAULT_PROFILE, RedPreset::profile);
        let unit = p.choice("th_unit", "buffer", &["buffer", "packets", "bytes"])?;
        let given = |key: &str| p.iter().any(|(k, _)| k == key);
        let (min_given, max_given) = (given("min_th"), given("max_th"));
        let min_th = p.f64_in("min_th", base.min_th, 0.0, 1e15)?;
        let max_th = p.f64_in("max_th", base.max_th, 0.0, 1e15)?;
        let w_q = p.f64_in("w_q", base.w_q, 1e-9, 1.0)?;
        let max_p = p.f64_in("max_p", base.max_p, 0.0, 1.0)?;
        let gentle = p.bool("gentle", base.gentle)?;
        let harddrop = p.bool("harddrop", false)?;
        let avpkt = p.u64_in("avpkt", 1000, 1, 65_535)? as u32;

        let (mode, min_th, max_th) = match unit.as_str() {
            "buffer" => {
                for (key, v) in [("min_th", min_th), ("max_th", max_th)] {
                    if v > 1.0 {
                        return Err(err(key, format!("a fraction of the buffer must be at most 1, got {v}")));
                    }
                }
                match limit {
                    Limit::Packets(n) => (RedMode::Packets, min_th * n as f64, max_th * n as f64),
                    Limit::Bytes(b) => (RedMode::Bytes, min_th * b as f64, max_th * b as f64),
                }
            }
            absolute => {
                let mode = if absolute == "bytes" { RedMode::Bytes } else { RedMode::Packets };
                match (min_given, max_given) {
                    (true, true) => (mode, min_th, max_th),
                    (true, false) => (mode, min_th, 3.0 * min_th),
                    (false, true) => (mode, max_th / 3.0, max_th),
                    (false, false) => {
                        return Err(err(
                            "th_unit",
                            format!("th_unit = \"{absolute}\" needs min_th or max_th in {absolute}"),
                        ))
                    }
                }
            }
        };
        if min_th > max_th {
            return Err(err("max_th", format!("must not be below min_th ({min_th}), got {max_th}")));
        }
        Ok(Self { mode, min_th, max_th, max_p, w_q, gentle, harddrop, avpkt })
    }
}

/// Where an average falls, with the early probability `p_b` where there is one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RedRegion {
    Below,
    /// Between the thresholds, or in the gentle region.
    Early(f64),
    Forced,
}

impl RedConfig {
    /// F&J's `p_b` (and the gentle extension) for average `avg`.
    pub fn region(&self, avg: f64) -> RedRegion {
        if avg < self.min_th {
            RedRegion::Below
        } else if avg < self.max_th {
            RedRegion::Early(self.max_p * (avg - self.min_th) / (self.max_th - self.min_th))
        } else if self.gentle && avg < 2.0 * self.max_th {
            RedRegion::Early(self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th)
        } else {
            RedRegion::Forced
        }
    }
}

/// F&J §7: `p_a = p_b / (1 - count·p_b)`, 1 once `count·p_b >= 1`.
pub fn spread(p_b: f64, count: i64) -> f64 {
    let c = count as f64 * p_b;
    if c >= 1.0 {
        1.0
    } else {
        (p_b / (1.0 - c)).min(1.0)
    }
}

pub struct Red<P> {
    cfg: RedConfig,
    ecn: bool,
    fifo: Fifo<P>,
    rng: Xoshiro256PlusPlus,
    avg: f64,
    /// Arrivals in the early regions since the last signal; -1 below `min_th`.
    count: i64,
    /// Since when the transmitter has found the queue empty.
    idle_since: Option<Nanos>,
    rate_bps: f64,
    /// `p_a` of the last arrival (0 outside the early regions, 1 when forced).
    last_p: f64,
}

impl<P: QueuedPacket> Red<P> {
    pub fn new(cfg: RedConfig, queue: QueueConfig) -> Self {
        Self {
            cfg,
            ecn: queue.ecn,
            fifo: Fifo::new(queue.limit),
            rng: Xoshiro256PlusPlus::seed_from_u64(queue.seed),
            avg: 0.0,
            count: -1,
            idle_since: None,
            rate_bps: DEFAULT_RATE_BPS,
            last_p: 0.0,
        }
    }

    /// Build from the link's queue settings and `aqm_params`.
    pub fn from_params(queue: QueueConfig, p: &Params) -> Result<Self, ParamError> {
        Ok(Self::new(RedConfig::from_params(p, queue.limit)?, queue))
    }

    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// The average queue, in the threshold unit.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// F&J's `count`: arrivals in the early regions since the last signal, -1 below `min_th`.
    pub fn count(&self) -> i64 {
        self.count
    }

    /// The signal probability applied to the last arrival (`p_a`; 1 in the forced region, 0 below
    /// `min_th` or on overflow).
    pub fn last_probability(&self) -> f64 {
        self.last_p
    }

    fn queue_len(&self) -> f64 {
        match self.cfg.mode {
            RedMode::Packets => self.fifo.len() as f64,
            RedMode::Bytes => self.fifo.bytes() as f64,
        }
    }

    fn update_avg(&mut self, now: Nanos) {
        let w = self.cfg.w_q;
        match self.idle_since.take() {
            Some(since) => {
                let s_ns = self.cfg.avpkt as f64 * 8e9 / self.rate_bps;
                let m = now.saturating_sub(since) as f64 / s_ns;
                self.avg = if w >= 1.0 { 0.0 } else { self.avg * (1.0 - w).powf(m) };
            }
            None => self.avg = (1.0 - w) * self.avg + w * self.queue_len(),
        }
    }
}

impl<P: QueuedPacket + Send> QueueDisc<P> for Red<P> {
    fn name(&self) -> &'static str {
        "red"
    }

    fn enqueue(&mut self, mut pkt: P, now: Nanos) -> Enqueued<P> {
        self.update_avg(now);
        if !self.fifo.admits(pkt.wire_bytes()) {
            self.count = 0;
            self.last_p = 0.0;
            return Enqueued::Dropped(pkt, DropReason::Overflow);
        }
        let (signal, forced) = match self.cfg.region(self.avg) {
            RedRegion::Below => {
                self.count = -1;
                self.last_p = 0.0;
                (false, false)
            }
            RedRegion::Early(p_b) => {
                self.count += 1;
                self.last_p = spread(p_b, self.count);
                let u: f64 = self.rng.gen();
                (u < self.last_p, false)
            }
            RedRegion::Forced => {
                self.last_p = 1.0;
                (true, true)
            }
        };
        let mut marked = false;
        if signal {
            self.count = 0;
            let capable = matches!(pkt.ecn(), Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce);
            if !(self.ecn && capable) || (forced && self.cfg.harddrop) {
                return Enqueued::Dropped(pkt, DropReason::Aqm);
            }
            pkt.set_ecn(Ecn::Ce);
            marked = true;
        }
        self.fifo.push(pkt, now);
        if marked {
            Enqueued::Marked
        } else {
            Enqueued::Queued
        }
    }

    fn dequeue(&mut self, now: Nanos, _sink: &mut dyn DequeueSink<P>) -> Option<Dequeued<P>> {
        let Some((pkt, enqueued_at)) = self.fifo.pop() else {
            self.idle_since.get_or_insert(now);
            return None;
        };
        Some(Dequeued { pkt, sojourn: now - enqueued_at })
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn signal_probability(&mut self, _now: Nanos) -> Option<f64> {
        Some(self.last_p)
    }

    fn set_link_rate(&mut self, bits_per_sec: f64) {
        if bits_per_sec.is_finite() && bits_per_sec > 0.0 {
            self.rate_bps = bits_per_sec;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParamValue;

    use crate::testing::{NoSink, Pkt};

    const MS: Nanos = 1_000_000;

    fn params(kv: &[(&str, ParamValue)]) -> Params {
        let mut p = Params::new();
        for (k, v) in kv {
            p.insert(*k, v.clone());
        }
        p
    }

    fn qcfg(limit: Limit, ecn: bool, seed: u64) -> QueueConfig {
        QueueConfig { limit, ecn, seed }
    }

    /// Packet-mode RED with thresholds `min`/`max` packets and the given `w_q`, `max_p`, `gentle`.
    fn red(min: f64, max: f64, w_q: f64, max_p: f64, gentle: bool, ecn: bool) -> Red<Pkt> {
        let cfg = RedConfig {
            mode: RedMode::Packets,
            min_th: min,
            max_th: max,
            max_p,
            w_q,
            gentle,
            harddrop: false,
            avpkt: 1500,
        };
        Red::new(cfg, qcfg(Limit::Packets(1000), ecn, 7))
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn ewma_follows_each_arrival_with_the_queue_before_it() {
        // w_q = 1/4: arrivals see q = 0, 1, 2, 3 (thresholds out of reach).
        let mut q = red(100.0, 300.0, 0.25, 0.1, true, false);
        let mut want = 0.0;
        for (k, expect) in [0.0, 0.25, 0.6875, 1.265625].into_iter().enumerate() {
            assert!(matches!(q.enqueue(Pkt(1500, Ecn::NotEct), 0), Enqueued::Queued));
            want = 0.75 * want + 0.25 * k as f64;
            assert_eq!(want, expect);
            assert_eq!(q.avg(), expect, "after arrival {k}");
        }
    }

    #[test]
    fn ewma_with_floyds_weight_converges_geometrically() {
        // Hold the queue at 20: each arrival sees q = 19 after a departure, so after n such
        // arrivals avg = 19 + (avg_0 - 19)·(1 - 0.002)^n.
        let mut q = red(100.0, 300.0, 0.002, 0.1, true, false);
        for _ in 0..20 {
            q.enqueue(Pkt(1500, Ecn::NotEct), 0);
        }
        // avg after filling: sum_{k<20} 0.002·0.998^(19-k)·k
        let avg0: f64 = (0..20).map(|k| 0.002 * 0.998f64.powi(19 - k) * k as f64).sum();
        assert!(close(q.avg(), avg0));
        for _ in 0..500 {
            q.dequeue(0, &mut NoSink).unwrap();
            q.enqueue(Pkt(1500, Ecn::NotEct), 0);
        }
        let want = 19.0 + (avg0 - 19.0) * 0.998f64.powi(500);
        assert!(close(q.avg(), want), "{} vs {want}", q.avg());
        // avg0 = 0.37548 (≈ 0.002·190), avg = 12.1553: ~1 - 1/e of the way after 1/w_q arrivals.
        assert!((avg0 - 0.37548).abs() < 1e-5 && (q.avg() - 12.1553).abs() < 1e-4, "{avg0} {}", q.avg());
    }

    #[test]
    fn idle_time_ages_the_average_as_m_small_packets() {
        // 12 Mbit/s and avpkt 1500 B: s = 1 ms. w_q = 1/4.
        let mut q = red(100.0, 300.0, 0.25, 0.1, true, false);
        q.set_link_rate(12e6);
        for _ in 0..4 {
            q.enqueue(Pkt(1500, Ecn::NotEct), 0);
        }
        assert_eq!(q.avg(), 1.265625);
        for _ in 0..4 {
            q.dequeue(0, &mut NoSink).unwrap();
        }
        // The queue is empty but the last packet is still on the wire: a plain step with q = 0.
        q.enqueue(Pkt(1500, Ecn::NotEct), MS / 2);
        assert_eq!(q.avg(), 1.265625 * 0.75);
        q.dequeue(MS / 2, &mut NoSink).unwrap();
        // The transmitter finds the queue empty at 1 ms: idle from then on.
        assert!(q.dequeue(MS, &mut NoSink).is_none());
        assert!(q.dequeue(2 * MS, &mut NoSink).is_none(), "a second empty poll keeps the start");
        // Next arrival 3 ms later: m = 3, avg = 0.94921875 · 0.75^3.
        q.enqueue(Pkt(1500, Ecn::NotEct), 4 * MS);
        assert!(close(q.avg(), 0.94921875 * 0.421875));
        // A fractional m: 2.5 ms idle.
        let before = q.avg();
        q.dequeue(4 * MS, &mut NoSink).unwrap();
        q.dequeue(5 * MS, &mut NoSink);
        q.enqueue(Pkt(1500, Ecn::NotEct), 7 * MS + MS / 2);
        assert!(close(q.avg(), before * 0.75f64.powf(2.5)));
    }

    #[test]
    fn idle_time_without_a_link_rate_uses_10_mbit() {
        // avpkt 1000 B at 10 Mbit/s: s = 0.8 ms; 1.6 ms idle is m = 2.
        let mut p = Params::new();
        p.insert("th_unit", ParamValue::Str("packets".into()));
        p.insert("min_th", ParamValue::Int(100));
        p.insert("w_q", ParamValue::Float(0.5));
        let mut q: Red<Pkt> = Red::from_params(qcfg(Limit::Packets(1000), false, 1), &p).unwrap();
        q.enqueue(Pkt(1500, Ecn::NotEct), 0);
        q.enqueue(Pkt(1500, Ecn::NotEct), 0);
        assert_eq!(q.avg(), 0.5);
        q.dequeue(0, &mut NoSink);
        q.dequeue(0, &mut NoSink);
        assert!(q.dequeue(0, &mut NoSink).is_none());
        q.enqueue(Pkt(1500, Ecn::NotEct), 1_600_000);
        assert!(close(q.avg(), 0.5 * 0.25));
        // The link's own rate replaces it: 80 Mbit/s makes s = 0.1 ms; 0.3 ms idle is m = 3.
        q.set_link_rate(80e6);
        q.dequeue(2_000_000, &mut NoSink).unwrap();
        assert!(q.dequeue(2_000_000, &mut NoSink).is_none());
        q.enqueue(Pkt(1500, Ecn::NotEct), 2_300_000);
        assert!(close(q.avg(), 0.125 * 0.125));
    }

    #[test]
    fn early_probability_and_count_spreading_by_hand() {
        let cfg = red(5.0, 15.0, 0.002, 0.1, false, false).cfg;
        assert_eq!(cfg.region(4.999), RedRegion::Below);
        assert_eq!(cfg.region(5.0), RedRegion::Early(0.0));
        // avg 10: p_b = 0.1·5/10 = 0.05.
        let RedRegion::Early(p_b) = cfg.region(10.0) else { panic!() };
        assert!(close(p_b, 0.05));
        assert!(close(spread(p_b, 0), 0.05));
        assert!(close(spread(p_b, 1), 0.05 / 0.95));
        assert!(close(spread(p_b, 10), 0.1));
        assert!(close(spread(p_b, 18), 0.5));
        assert_eq!(spread(p_b, 20), 1.0, "count·p_b = 1");
        assert_eq!(spread(p_b, 25), 1.0);
        // Without gentle, max_th and above is forced.
        assert_eq!(cfg.region(15.0), RedRegion::Forced);
        assert_eq!(cfg.region(29.0), RedRegion::Forced);
    }

    #[test]
    fn gentle_region_rises_from_max_p_to_one() {
        let cfg = red(5.0, 15.0, 0.002, 0.1, true, false).cfg;
        assert_eq!(cfg.region(15.0), RedRegion::Early(0.1));
        // avg 20: 0.1 + 0.9·5/15 = 0.4; avg 27: 0.1 + 0.9·12/15 = 0.82.
        let RedRegion::Early(p) = cfg.region(20.0) else { panic!() };
        assert!(close(p, 0.4));
        let RedRegion::Early(p) = cfg.region(27.0) else { panic!() };
        assert!(close(p, 0.82));
        assert!(close(spread(0.4, 1), 0.4 / 0.6));
        assert_eq!(spread(0.4, 3), 1.0);
        assert_eq!(cfg.region(30.0), RedRegion::Forced);
    }

    /// Replays the queue's documented draw discipline: one uniform per early-region arrival.
    #[test]
    fn queue_trace_pins_average_probability_count_and_decisions() {
        // NRED-style (w_q = 1: avg = q), thresholds 5/15 packets, max_p 0.1, gentle, ECN on with
        // ECT packets so every signal is a mark and the queue grows one packet per arrival.
        let mut q = red(5.0, 15.0, 1.0, 0.1, true, true);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut count: i64 = -1;
        let mut marks = 0;
        for k in 0..40u32 {
            let out = q.enqueue(Pkt(1500, Ecn::Ect0), 0);
            let avg = k as f64;
            assert_eq!(q.avg(), avg);
            let (p_a, signal) = if avg < 5.0 {
                count = -1;
                (0.0, false)
            } else if avg < 30.0 {
                let p_b = if avg < 15.0 { 0.1 * (avg - 5.0) / 10.0 } else { 0.1 + 0.9 * (avg - 15.0) / 15.0 };
                count += 1;
                let c = count as f64 * p_b;
                let p_a = if c >= 1.0 { 1.0 } else { (p_b / (1.0 - c)).min(1.0) };
                (p_a, rng.gen::<f64>() < p_a)
            } else {
                (1.0, true)
            };
            if signal {
                count = 0;
                marks += 1;
            }
            assert!(close(q.last_probability(), p_a), "arrival {k}: {} vs {p_a}", q.last_probability());
            assert_eq!(q.count(), count, "count at arrival {k}");
            assert_eq!(matches!(out, Enqueued::Marked), signal, "arrival {k}");
        }
        assert_eq!(q.len_packets(), 40);
        assert!(marks >= 10, "every arrival from q = 30 on is forced: {marks}");
    }

    #[test]
    fn ecn_marks_capable_packets_and_drops_the_rest() {
        // min = max = 2 packets, w_q = 1, no gentle: every arrival at q >= 2 is a forced signal.
        for (ecn, codepoint, marked) in [
            (true, Ecn::Ect0, true),
            (true, Ecn::Ect1, true),
            (true, Ecn::Ce, true),
            (true, Ecn::NotEct, false),
            (false, Ecn::Ect0, false),
        ] {
            let mut q = red(2.0, 2.0, 1.0, 0.1, false, ecn);
            q.enqueue(Pkt(1500, codepoint), 0);
            q.enqueue(Pkt(1500, codepoint), 0);
            match q.enqueue(Pkt(1500, codepoint), 0) {
                Enqueued::Marked => assert!(marked),
                Enqueued::Dropped(p, DropReason::Aqm) => {
                    assert!(!marked);
                    assert_eq!(p.1, codepoint, "a dropped packet keeps its codepoint");
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(q.len_packets(), if marked { 3 } else { 2 });
            if marked {
                q.dequeue(0, &mut NoSink);
                q.dequeue(0, &mut NoSink);
                assert_eq!(q.dequeue(0, &mut NoSink).unwrap().pkt.1, Ecn::Ce);
            }
        }
    }

    #[test]
    fn harddrop_drops_forced_signals_but_still_marks_early_ones() {
        let mut q = red(2.0, 2.0, 1.0, 0.1, false, true);
        q.cfg.harddrop = true;
        q.enqueue(Pkt(1500, Ecn::Ect0), 0);
        q.enqueue(Pkt(1500, Ecn::Ect0), 0);
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Dropped(_, DropReason::Aqm)));
        // Gentle with max_p = 1: p_b = 1 in [max_th, 2·max_th), an early (random) region.
        let mut q = red(2.0, 2.0, 1.0, 1.0, true, true);
        q.cfg.harddrop = true;
        q.enqueue(Pkt(1500, Ecn::Ect0), 0);
        q.enqueue(Pkt(1500, Ecn::Ect0), 0);
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Marked));
        assert_eq!(q.last_probability(), 1.0);
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Marked));
        // q = 4 = 2·max_th: forced, and harddrop drops it.
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Dropped(_, DropReason::Aqm)));
    }

    #[test]
    fn overflow_comes_first_and_drops_even_ect() {
        let p = params(&[("th_unit", ParamValue::Str("packets".into())), ("min_th", ParamValue::Int(100))]);
        let mut q: Red<Pkt> = Red::from_params(qcfg(Limit::Packets(3), true, 0), &p).unwrap();
        for _ in 0..3 {
            assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Queued));
        }
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Dropped(_, DropReason::Overflow)));
        assert_eq!(q.count(), 0, "a tail drop restarts count (ns-2)");
        assert!(q.avg() > 0.0, "the overflowing arrival still updates the average");
        // Byte limit: a forced signal never turns an overflow into a mark.
        let mut q = red(0.0, 0.0, 1.0, 0.1, false, true);
        q.fifo.set_limit(Limit::Bytes(3000));
        assert!(matches!(q.enqueue(Pkt(1500, Ecn::Ect0), 0), Enqueued::Marked));
        assert!(matches!(q.enqueue(Pkt(1000, Ecn::Ect0), 0), Enqueued::Marked));
        assert!(matches!(q.enqueue(Pkt(600, Ecn::Ect0), 0), Enqueued::Dropped(_, DropReason::Overflow)));
        assert!(matches!(q.enqueue(Pkt(500, Ecn::Ect0), 0), Enqueued::Marked));
        assert_eq!(q.len_bytes(), 3000);
        let d = q.dequeue(5, &mut NoSink).unwrap();
        assert_eq!((d.pkt.0, d.sojourn), (1500, 5));
    }

    #[test]
    fn byte_mode_averages_bytes() {
        // Buffer fractions of a byte limit: thresholds 2500 and 7500 bytes.
        let p = params(&[("w_q", ParamValue::Float(0.5))]);
        let mut q: Red<Pkt> = Red::from_params(qcfg(Limit::Bytes(10_000), false, 0), &p).unwrap();
        assert_eq!(q.config().mode, RedMode::Bytes);
        assert_eq!((q.config().min_th, q.config().max_th), (2500.0, 7500.0));
        q.enqueue(Pkt(1000, Ecn::NotEct), 0);
        q.enqueue(Pkt(1500, Ecn::NotEct), 0);
        assert_eq!(q.avg(), 500.0);
        q.enqueue(Pkt(100, Ecn::NotEct), 0);
        assert_eq!(q.avg(), 0.5 * 500.0 + 0.5 * 2500.0);
        assert_eq!(q.last_probability(), 0.0, "1500 is below min_th");
    }

    #[test]
    fn presets_follow_table_4_8_and_explicit_keys_override() {
        let bytes = Limit::Bytes(500_000);
        for (name, w_q, bdp) in
            [("red1", 0.002, 1.0), ("red4", 0.002, 4.0), ("nred1", 1.0, 1.0), ("nred4", 1.0, 4.0)]
        {
            let p = params(&[("preset", ParamValue::Str(name.into()))]);
            let c = RedConfig::from_params(&p, bytes).unwrap();
            assert_eq!(
                c,
                RedConfig {
                    mode: RedMode::Bytes,
                    min_th: 125_000.0,
                    max_th: 375_000.0,
                    max_p: 0.1,
                    w_q,
                    gentle: false,
                    harddrop: false,
                    avpkt: 1000,
                },
                "{name}"
            );
            assert_eq!(RedPreset::from_name(name).unwrap().buffer_bdp(), bdp);
        }
        let p = params(&[
            ("preset", ParamValue::Str("nred1".into())),
            ("w_q", ParamValue::Float(0.5)),
            ("min_th", ParamValue::Float(0.1)),
            ("gentle", ParamValue::Bool(true)),
        ]);
        let c = RedConfig::from_params(&p, Limit::Packets(200)).unwrap();
        assert_eq!(
            (c.mode, c.min_th, c.max_th, c.w_q, c.max_p, c.gentle),
            (RedMode::Packets, 20.0, 150.0, 0.5, 0.1, true)
        );
        // No preset: the thesis fractions with Floyd's w_q and max_p, gentle on.
        let c = RedConfig::from_params(&Params::new(), Limit::Packets(100)).unwrap();
        assert_eq!(
            (c.min_th, c.max_th, c.w_q, c.max_p, c.gentle, c.harddrop),
            (25.0, 75.0, 0.002, 0.1, true, false)
        );
    }

    #[test]
    fn absolute_thresholds_choose_the_mode_and_default_to_three_to_one() {
        let limit = Limit::Bytes(1_000_000);
        let p = params(&[("th_unit", ParamValue::Str("packets".into())), ("min_th", ParamValue::Int(5))]);
        let c = RedConfig::from_params(&p, limit).unwrap();
        assert_eq!((c.mode, c.min_th, c.max_th), (RedMode::Packets, 5.0, 15.0));
        let p = params(&[("th_unit", ParamValue::Str("bytes".into())), ("max_th", ParamValue::Int(30_000))]);
        let c = RedConfig::from_params(&p, Limit::Packets(100)).unwrap();
        assert_eq!((c.mode, c.min_th, c.max_th), (RedMode::Bytes, 10_000.0, 30_000.0));
    }

    #[test]
    fn parameter_errors_name_the_key() {
        let limit = Limit::Packets(100);
        for (kv, key) in [
            (vec![("preset", ParamValue::Str("red2".into()))], "preset"),
            (vec![("th_unit", ParamValue::Str("packets".into()))], "th_unit"),
            (
                vec![
                    ("preset", ParamValue::Str("red1".into())),
                    ("th_unit", ParamValue::Str("bytes".into())),
                ],
                "th_unit",
            ),
            (vec![("min_th", ParamValue::Float(1.5))], "min_th"),
            (vec![("min_th", ParamValue::Float(0.8))], "max_th"),
            (vec![("w_q", ParamValue::Float(0.0))], "w_q"),
            (vec![("max_p", ParamValue::Float(1.5))], "max_p"),
            (vec![("harddrop", ParamValue::Int(1))], "harddrop"),
        ] {
            let p = params(&kv);
            assert_eq!(RedConfig::from_params(&p, limit).unwrap_err().key, key, "{kv:?}");
        }
    }

    #[test]
    fn registry_row_lists_its_parameters_and_rejects_unknown_ones() {
        let table = crate::queues::<Pkt>();
        let row = table.iter().find(|e| e.name == "red").unwrap();
        let specs = crate::queue_params(row.build.build);
        let keys: Vec<_> = specs.iter().map(|s| (s.key.as_str(), s.default.as_str())).collect();
        assert_eq!(
            keys,
            [
                ("preset", "\"none\""),
                ("th_unit", "\"buffer\""),
                ("min_th", "0.25"),
                ("max_th", "0.75"),
                ("w_q", "0.002"),
                ("max_p", "0.1"),
                ("gentle", "true"),
                ("harddrop", "false"),
                ("avpkt", "1000"),
            ]
        );
        let cfg = qcfg(Limit::Bytes(125_000), true, 3);
        let p = params(&[("preset", ParamValue::Str("nred1".into()))]);
        assert_eq!(crate::build_queue::<Pkt>("RED", cfg, &p).unwrap().name(), "red");
        let p = params(&[("preset", ParamValue::Str("red1".into())), ("wq", ParamValue::Float(0.1))]);
        assert_eq!(crate::build_queue::<Pkt>("red", cfg, &p).err().unwrap().key, "wq");
    }

    #[test]
    fn same_seed_same_decisions() {
        let run = |seed: u64| {
            let p = params(&[
                ("th_unit", ParamValue::Str("packets".into())),
                ("min_th", ParamValue::Int(2)),
                ("max_th", ParamValue::Int(12)),
                ("w_q", ParamValue::Float(0.2)),
                ("max_p", ParamValue::Float(0.3)),
            ]);
            let mut q: Red<Pkt> = Red::from_params(qcfg(Limit::Packets(40), false, seed), &p).unwrap();
            let mut trace = Vec::new();
            for k in 0..3000u64 {
                let out = q.enqueue(Pkt(1500, Ecn::NotEct), k * 100);
                trace.push(matches!(out, Enqueued::Queued));
                if k % 3 != 0 {
                    q.dequeue(k * 100, &mut NoSink);
                }
            }
            trace
        };
        let a = run(42);
        assert_eq!(a, run(42));
        assert_ne!(a, run(43));
        assert!(a.iter().filter(|&&x| !x).count() > 100, "the trace exercises early drops");
    }
}
