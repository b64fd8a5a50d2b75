//! rLEDBAT as the authors' Linux prototype decides it (`profile = "authors"`).
//!
//! Source: `net-research/rledbat_module`, `SRC/rledbat_receive.c` (Mandalari, García, Verde,
//! UC3M; Linux 3.13 netfilter hook for draft-irtf-iccrg-rledbat-02), function
//! `rledbat_incoming_hook_func` and its helpers `qd_min_lastN`, `min_rtt`, `clear_rtt_table`,
//! `ceil_rledbat`, `gain` and `bytes_to_decrease_rledbat`. Read, not copied: the rules are
//! restated here, in the module's order, for what RFC 9840 leaves open.
//!
//! * **Units.** The window `rcwnd` is kept in window-scale units (`2^wscale` bytes) and starts
//!   at `ceil(1 MSS / unit)` (`INIT_WINDOW`); no reduction goes below `ceil(2 MSS / unit)`
//!   (`MIN_REDUCTION_BYTES`); `ssthresh` starts at 65 535 units (`MAX_WINDOW`), the cap of
//!   congestion-avoidance growth. Growth accumulates bytes (`increase_bytes`) and moves the
//!   window by whole units.
//! * **RTT.** The TSval and send time of outgoing ACKs go into a table (`tsval_rtt_array`,
//!   filled by the module's outgoing half, `xt_TWIN.c`, which is not published; here the first
//!   ACK per TSval since the table was last cleared). A data segment's TSecr found in the table
//!   gives `rtt = now − sent`, only for the first segment with that TSecr (a repeat keeps the
//!   previous `rtt`); a TSecr not in the table (the table was cleared since) sets
//!   `rtt = rtt_min`. `rtt_min` is the minimum of all samples, never aged.
//! * **Queueing delay.** `rtt − rtt_min` of every data segment enters a ring of the last
//!   `LAST_QDS` = 10 values (`current_filter`, at most 20); the delay used is their minimum.
//! * **Retransmission.** A segment whose sequence number is not above the previous segment's
//!   (`last_seq <= last_seq_old`; the TSval half of the module's test, `tsval_rtt >=
//!   tsval_rtt_old`, is always true: `tsval_rtt` is never assigned).
//!   A reordered segment counts too.
//! * **GAIN.** `1/g` with `g = min(16, ceil_rledbat(2·T, rtt_min))`, the module's integer ceiling,
//!   `floor(2·T / rtt_min) + 1`, one too high when `2·T` is a multiple of `rtt_min` (`g` = 4 at
//!   40 ms, not 3; 7 at 20 ms, not 6); `g` = 1 when `2·T ≤ rtt_min` or before any sample. `T` is
//!   the nominal target even with `enhanced_target` (the module's RLEDBAT2), as in the module.
//! * **Per segment**, in this order:
//!   1. *Reducing* (a reduction is being spread): the window loses the bytes received, in
//!      units (rounded up while above the minimum), until the amount decided is gone or the
//!      minimum is reached. A retransmission then (the first since the last reduction ended)
//!      halves `ssthresh` if a periodic slowdown is under way, else restarts the reduction down
//!      to the minimum window (`ssthresh` = half), clears the RTT table and sets `rtt = rtt_min`.
//!   2. *Frozen* (`keep_window_time` not reached): nothing, but a retransmission halves `ssthresh`.
//!   3. Otherwise the first of: the freeze after a periodic slowdown's reduction starts (2 `rtt`);
//!      a periodic slowdown is due (reduce to the minimum window, `ssthresh` = the window);
//!      a retransmission (reduce to `ssthresh = max(window/2, minimum)`, end the first slow start
//!      and schedule the first slowdown 2 `rtt` later, clear the RTT table); the delay above the
//!      target outside the first slow start (at most once per `rtt`, `next_decrease_time`: reduce
//!      by `max(1/g − W·(q/T − 1), −W/2)` bytes, rounded toward zero, at least one unit, floor at
//!      the minimum, then clear the RTT table; a positive value grows the window instead); or
//!      growth: the first slow start ends when the delay exceeds 3/4 of the target or the
//!      window reaches `ssthresh` (one last increment of the bytes received, first slowdown 2
//!      `rtt` later); slow start adds `acked / g` bytes; congestion avoidance adds
//!      `acked · MSS / g / (window in bytes)` bytes (with carries) and schedules the next
//!      slowdown 9 times the last one's duration later.
//!
//! Differences, each for a reason: the module's constant MSS (1448) is the receiver's MSS here;
//! zero-length segments are ignored (the module would compare their sequence numbers too); the
//! first data segment is never a retransmission (the module compares it with the handshake's
//! ACK, which has the same sequence number, and would take it for one; the controller does not
//! see the handshake); the window is capped from the first data segment on, not from the
//! SYN-ACK; the stack never moves the right edge left, which the module's spreading of each
//! reduction over the bytes received also avoids; sequence numbers do not wrap (the module
//! compares 32-bit ones); arithmetic that would overflow in C saturates. Modelled as the module
//! has them: a retransmission that arrives when the window is below the minimum (only possible
//! before the first slow start passed 2 MSS) asks for a negative reduction, which the module
//! never completes, so the window stays where it is for the rest of the connection.

use std::collections::{HashMap, VecDeque};

use crate::Nanos;

/// `LAST_QDS`: queueing-delay values whose minimum is used (`current_filter` default here).
pub const LAST_QDS: u64 = 10;
/// Size of the module's ring (`last_qd_values[20]`): the most `LAST_QDS` can be.
pub const MAX_LAST_QDS: u64 = 20;
/// `MAX_COUNT_RTT`: TSvals the table holds.
pub const MAX_COUNT_RTT: usize = 10_000;
/// `MAX_WINDOW`: the initial `ssthresh` and the cap of avoidance growth, in units.
pub const MAX_WINDOW_UNITS: i64 = 65_535;
/// `INIT_WINDOW` = 1 MSS, in segments (`init_cwnd` default here).
pub const INIT_WINDOW_SEGMENTS: u64 = 1;
/// `MIN_REDUCTION_BYTES` = 2 MSS, in segments (`min_cwnd`, the same default as LEDBAT++'s).
pub const MIN_WINDOW_SEGMENTS: u64 = 2;
/// `GAIN_CONSTANT`: the cap of GAIN's divisor.
pub const GAIN_CONSTANT: u64 = 16;

/// The module's knobs (`#define`s) that have a scenario key.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthorsConfig {
    /// `TARGET` (key `target`).
    pub target: Nanos,
    /// `RLEDBAT2`: target `min(T, rtt_min)` (key `enhanced_target`).
    pub rledbat2: bool,
    /// `LAST_QDS` (key `current_filter`).
    pub last_qds: usize,
    /// `INIT_WINDOW` in segments (key `init_cwnd`).
    pub init_segments: u64,
    /// `MIN_REDUCTION_BYTES` in segments (key `min_cwnd`).
    pub min_segments: u64,
}

impl Default for AuthorsConfig {
    fn default() -> Self {
        Self {
            target: crate::ledbatpp::TARGET,
            rledbat2: false,
            last_qds: LAST_QDS as usize,
            init_segments: INIT_WINDOW_SEGMENTS,
            min_segments: MIN_WINDOW_SEGMENTS,
        }
    }
}

/// `ceil_rledbat`: `floor(num/den) + 1` when `num > den` (so one too high for exact
/// multiples), else 1.
pub fn ceil_rledbat(num: u64, den: u64) -> u64 {
    if num > den {
        num / den + 1
    } else {
        1
    }
}

/// `gain`: the divisor `g` of GAIN = 1/g, from the nominal target and `rtt_min`.
pub fn gain_divisor(target: Nanos, rtt_min: Option<Nanos>) -> u64 {
    match rtt_min {
        Some(b) if b > 0 => ceil_rledbat(2 * target, b).min(GAIN_CONSTANT),
        _ => 1,
    }
}

/// What a TSecr finds in the table (`min_rtt`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lookup {
    Sample(Nanos),
    Repeated,
    Missing,
}

/// `tsval_rtt_array` / `time_rtt_array` and `tsecr_already_checked`.
#[derive(Clone, Debug, Default)]
struct RttTable {
    sent: HashMap<u32, Nanos>,
    order: VecDeque<u32>,
    checked: Option<u32>,
}

impl RttTable {
    fn on_sent(&mut self, tsval: u32, now: Nanos) {
        if self.sent.contains_key(&tsval) {
            return;
        }
        if self.order.len() == MAX_COUNT_RTT {
            if let Some(old) = self.order.pop_front() {
                self.sent.remove(&old);
            }
        }
        self.sent.insert(tsval, now);
        self.order.push_back(tsval);
    }

    fn lookup(&mut self, tsecr: u32, now: Nanos) -> Lookup {
        let Some(&sent) = self.sent.get(&tsecr) else { return Lookup::Missing };
        if self.checked == Some(tsecr) {
            return Lookup::Repeated;
        }
        self.checked = Some(tsecr);
        Lookup::Sample(now.saturating_sub(sent))
    }

    /// `clear_rtt_table` (the last TSecr checked is kept, as in the module).
    fn clear(&mut self) {
        self.sent.clear();
        self.order.clear();
    }
}

/// The module's per-connection state; windows in units, `to_reduce` and the growth
/// accumulators in bytes.
#[derive(Clone, Debug)]
pub struct AuthorsWindow {
    cfg: AuthorsConfig,
    /// Bytes per window unit (`window_scale`).
    unit: i64,
    mss: i64,
    /// `rcwnd_ok`, `ssthresh`, `minimum_window`, in units.
    rcwnd: i64,
    ssthresh: i64,
    min_window: i64,
    /// `reduction` and `rcwnd_scale`: bytes still to take off the window.
    reduction: bool,
    to_reduce: i64,
    /// `increase_bytes` and `to_increase_CA`.
    increase_bytes: i64,
    to_increase_ca: i64,
    keep_window_until: Nanos,
    periodic_at: Nanos,
    periodic_begin: Nanos,
    next_decrease: Nanos,
    first_ss: bool,
    ss_allowed: bool,
    freeze_ended: bool,
    recent_retransmission: bool,
    periodic_scheduled: bool,
    /// `last_qd_values` and `qd_values_pointer`.
    qds: [i64; MAX_LAST_QDS as usize],
    qd_next: usize,
    /// The filtered queueing delay of the last segment.
    queuing_delay: i64,
    rtt: Option<Nanos>,
    rtt_min: Option<Nanos>,
    /// `last_seq_old`.
    last_seq: Option<u64>,
    table: RttTable,
    state: &'static str,
}

impl AuthorsWindow {
    /// The state after the SYN: window `ceil(init · MSS / unit)` units, minimum
    /// `ceil(min · MSS / unit)` units.
    pub fn new(cfg: AuthorsConfig, mss: u32, wscale: u8) -> Self {
        let unit = 1i64 << wscale.min(14);
        let mss = mss.max(1) as i64;
        let units = |segments: u64| (segments as i64 * mss + unit - 1) / unit;
        let last_qds = cfg.last_qds.clamp(1, MAX_LAST_QDS as usize);
        Self {
            rcwnd: units(cfg.init_segments).max(1),
            min_window: units(cfg.min_segments).max(1),
            cfg: AuthorsConfig { last_qds, ..cfg },
            unit,
            mss,
            ssthresh: MAX_WINDOW_UNITS,
            reduction: false,
            to_reduce: 0,
            increase_bytes: 0,
            to_increase_ca: 0,
            keep_window_until: 0,
            periodic_at: 0,
            periodic_begin: 0,
            next_decrease: 0,
            first_ss: true,
            ss_allowed: true,
            freeze_ended: true,
            recent_retransmission: false,
            periodic_scheduled: false,
            qds: [i64::MAX; MAX_LAST_QDS as usize],
            qd_next: 0,
            queuing_delay: 0,
            rtt: None,
            rtt_min: None,
            last_seq: None,
            table: RttTable::default(),
            state: "slow-start",
        }
    }

    /// The window in bytes (`rcwnd_ok · window_scale`).
    pub fn window(&self) -> u64 {
        (self.rcwnd.max(0) as u64).saturating_mul(self.unit as u64)
    }

    /// The window in units, as the module keeps it.
    pub fn window_units(&self) -> i64 {
        self.rcwnd
    }

    pub fn ssthresh_units(&self) -> i64 {
        self.ssthresh
    }

    pub fn rtt(&self) -> Option<Nanos> {
        self.rtt
    }

    pub fn rtt_min(&self) -> Option<Nanos> {
        self.rtt_min
    }

    /// The filtered queueing delay the last segment saw.
    pub fn queuing_delay(&self) -> Nanos {
        self.queuing_delay.max(0) as Nanos
    }

    /// What the last segment did, in the words of the status display.
    pub fn state(&self) -> &'static str {
        self.state
    }

    /// An outgoing segment carried `tsval` (the module's outgoing half records it).
    pub fn on_sent(&mut self, tsval: u32, now: Nanos) {
        self.table.on_sent(tsval, now);
    }

    /// `T`, or with RLEDBAT2 `min(T, rtt_min)`.
    fn target(&self) -> i64 {
        let t = self.cfg.target;
        let t = match (self.cfg.rledbat2, self.rtt_min) {
            (true, Some(b)) => t.min(b),
            _ => t,
        };
        t.min(i64::MAX as u64) as i64
    }

    fn gain(&self) -> i64 {
        gain_divisor(self.cfg.target, self.rtt_min) as i64
    }

    /// `now + k · rtt`, saturating (the module's value before any sample would overflow).
    fn after_rtts(&self, now: Nanos, k: u64) -> Nanos {
        now.saturating_add(self.rtt.unwrap_or(Nanos::MAX).saturating_mul(k))
    }

    /// `min_rtt`: update `rtt` and `rtt_min` from the segment's TSecr.
    fn take_rtt(&mut self, tsecr: u32, now: Nanos) {
        match self.table.lookup(tsecr, now) {
            Lookup::Sample(rtt) => {
                self.rtt = Some(rtt);
                self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
            }
            Lookup::Repeated => {}
            Lookup::Missing => self.rtt = self.rtt_min,
        }
    }

    /// `qd_min_lastN`: record `qd`, return the minimum of the last `LAST_QDS` values.
    fn filter(&mut self, qd: i64) -> i64 {
        let n = self.cfg.last_qds;
        if n == 1 {
            return qd;
        }
        self.qds[self.qd_next % n] = qd;
        self.qd_next += 1;
        self.qds[..n].iter().copied().min().unwrap_or(qd)
    }

    /// `max(rcwnd / 2, minimum_window)`: the `ssthresh` a retransmission sets.
    fn half(&self) -> i64 {
        (self.rcwnd / 2).max(self.min_window)
    }

    /// Whole units of `increase_bytes` move the window.
    fn grow_by(&mut self, bytes: i64, cap: bool) {
        self.increase_bytes += bytes;
        if self.increase_bytes >= self.unit {
            let units = self.increase_bytes / self.unit;
            self.rcwnd += units;
            if cap {
                self.rcwnd = self.rcwnd.min(MAX_WINDOW_UNITS);
            }
            self.increase_bytes -= units * self.unit;
        }
    }

    /// `bytes_to_decrease_rledbat`: `max((T − g·W·(q − T)) / (g·T), −W/2)` bytes, the division
    /// truncating toward zero as C's does.
    fn decrease_bytes(&self, qd: i64) -> i64 {
        let w = self.rcwnd as i128 * self.unit as i128;
        let t = self.target() as i128;
        let g = self.gain() as i128;
        let num = t - g * w * (qd as i128 - t);
        let den = (g * t).max(1);
        (num / den).max(-(w / 2)).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// Schedule the next periodic slowdown 9 times the last one's duration from now.
    fn schedule_periodic(&mut self, now: Nanos) {
        self.periodic_scheduled = true;
        self.periodic_at = now.saturating_add(9 * now.saturating_sub(self.periodic_begin));
    }

    /// End the first slow start: `ssthresh` is the window, the first slowdown comes 2 `rtt`
    /// later, and the window takes one last increment of the bytes received.
    fn end_first_slow_start(&mut self, now: Nanos, acked: i64) {
        self.first_ss = false;
        self.ss_allowed = false;
        self.periodic_at = self.after_rtts(now, 2);
        self.periodic_scheduled = true;
        let extra = acked / (self.rcwnd * self.unit).max(1) / self.gain();
        self.grow_by(acked + extra, false);
    }

    /// `rledbat_incoming_hook_func` for one data segment `[seq, seq + len)` echoing `tsecr`.
    pub fn on_segment(&mut self, now: Nanos, seq: u64, len: u32, tsecr: u32) {
        let retransmission = self.last_seq.is_some_and(|prev| seq <= prev);
        self.last_seq = Some(seq);
        self.take_rtt(tsecr, now);
        let acked = len as i64;
        let raw = match (self.rtt, self.rtt_min) {
            (Some(r), Some(m)) => r as i64 - m as i64,
            _ => 0,
        };
        let qd = self.filter(raw);
        self.queuing_delay = qd;
        if self.reduction {
            self.reducing(acked, retransmission);
        } else if now < self.keep_window_until {
            self.state = "freeze";
            if retransmission {
                self.ssthresh = self.half();
            }
        } else {
            self.change(now, acked, qd, retransmission);
        }
    }

    /// Step 1: spread the reduction over the bytes received; a retransmission meanwhile.
    fn reducing(&mut self, acked: i64, retransmission: bool) {
        let (unit, min) = (self.unit, self.min_window);
        if self.to_reduce > 0 {
            if acked >= self.to_reduce {
                self.rcwnd -= self.to_reduce / unit;
                self.reduction = false;
                self.recent_retransmission = false;
                // The remainder takes one more unit while above the minimum (the module's
                // `rcwnd_ok - 1 >= minimum_window`).
                if self.to_reduce % unit > 0 && self.rcwnd > min {
                    self.rcwnd -= 1;
                }
                self.to_reduce = 0;
            } else {
                let mut units = acked / unit;
                if acked % unit > 0 && self.rcwnd > min {
                    units += 1;
                }
                if self.rcwnd - units >= min {
                    self.rcwnd -= units;
                    self.to_reduce -= units * unit;
                } else {
                    self.rcwnd = min;
                }
                if self.to_reduce <= 0 || self.rcwnd == min {
                    self.reduction = false;
                    self.to_reduce = 0;
                    self.recent_retransmission = false;
                }
            }
            self.state = "reducing";
        } else if self.to_reduce == 0 {
            // A reduction of nothing was asked for.
            self.reduction = false;
            self.state = "reducing";
        }
        if retransmission && !self.recent_retransmission {
            self.recent_retransmission = true;
            if !self.periodic_scheduled && !self.freeze_ended {
                // During a periodic slowdown only the slow start's goal halves.
                self.ssthresh = self.half();
            } else {
                self.to_reduce = (self.rcwnd - min) * unit;
                self.ssthresh = self.half();
                self.reduction = true;
                self.ss_allowed = true;
                self.table.clear();
                self.rtt = self.rtt_min;
            }
        }
    }

    /// Step 3: freeze, periodic slowdown, loss, delay-based decrease or growth.
    fn change(&mut self, now: Nanos, acked: i64, qd: i64, retransmission: bool) {
        let (unit, min) = (self.unit, self.min_window);
        let target = self.target();
        if !self.freeze_ended {
            // The slowdown's reduction is over: hold the window for 2 RTTs.
            self.keep_window_until = self.after_rtts(now, 2);
            self.freeze_ended = true;
            self.state = "freeze";
            if retransmission {
                self.ssthresh = self.half();
            }
        } else if !self.first_ss && now > self.periodic_at && self.periodic_scheduled {
            self.to_reduce = ((self.rcwnd - min) * unit).max(0);
            self.reduction = true;
            self.periodic_begin = now;
            self.ssthresh = self.rcwnd;
            self.freeze_ended = false;
            self.ss_allowed = true;
            self.periodic_scheduled = false;
            self.state = "freeze";
            if retransmission {
                self.ssthresh = self.half();
            }
        } else if retransmission {
            self.recent_retransmission = true;
            self.ssthresh = self.half();
            self.to_reduce = (self.rcwnd - self.ssthresh) * unit;
            self.reduction = true;
            self.ss_allowed = true;
            self.state = "reducing";
            if self.first_ss {
                self.first_ss = false;
                self.periodic_at = self.after_rtts(now, 2);
                self.periodic_scheduled = true;
            }
            self.table.clear();
        } else if qd > target && (!self.first_ss || self.periodic_scheduled) {
            if now < self.next_decrease {
                self.state = "avoidance";
                return;
            }
            self.ss_allowed = false;
            let d = self.decrease_bytes(qd);
            if d < 0 {
                if self.rcwnd > min {
                    self.to_reduce += -d;
                    if self.to_reduce >= unit && self.rcwnd - self.to_reduce / unit < min {
                        self.to_reduce = (self.rcwnd - min) * unit;
                    }
                    // Less than a unit still takes one unit off (rounded up while reducing).
                    self.reduction = true;
                    self.next_decrease = self.after_rtts(now, 1);
                } else {
                    self.reduction = false;
                }
                self.table.clear();
                self.state = "reducing";
            } else {
                self.grow_by(d, false);
                self.state = "avoidance";
            }
            if now > self.periodic_at {
                self.schedule_periodic(now);
            }
        } else {
            self.grow(now, acked, qd, target);
        }
    }

    /// Step 3, growth: the first slow start's exits, slow start, congestion avoidance.
    fn grow(&mut self, now: Nanos, acked: i64, qd: i64, target: i64) {
        let g = self.gain();
        if self.first_ss && qd > 3 * target / 4 {
            self.ssthresh = self.rcwnd;
            self.end_first_slow_start(now, acked);
            self.state = "avoidance";
        } else if self.rcwnd < self.ssthresh && self.ss_allowed {
            self.grow_by(acked / g, false);
            self.state = "slow-start";
        } else if self.rcwnd >= self.ssthresh && self.first_ss {
            self.rcwnd = self.ssthresh;
            self.end_first_slow_start(now, acked);
            self.state = "avoidance";
        } else {
            self.ss_allowed = false;
            if now > self.periodic_at {
                self.schedule_periodic(now);
            }
            self.to_increase_ca += acked * self.mss / g;
            let window_bytes = (self.rcwnd * self.unit).max(1);
            if self.to_increase_ca > window_bytes {
                let bytes = self.to_increase_ca / window_bytes;
                self.increase_bytes += bytes;
                self.to_increase_ca -= bytes * window_bytes;
            }
            self.grow_by(0, true);
            self.state = "avoidance";
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const MSS: u32 = 1000;

    /// Window scale 7 (128-byte units): the window starts at ceil(1000/128) = 8 units, the
    /// minimum is ceil(2000/128) = 16 units.
    fn machine() -> AuthorsWindow {
        AuthorsWindow::new(AuthorsConfig::default(), MSS, 7)
    }

    /// In congestion avoidance with `units`, `rtt_min` = `rtt` = 20 ms (g = 7), no slowdown due.
    fn avoiding(units: i64) -> AuthorsWindow {
        let mut m = machine();
        m.rtt_min = Some(20 * MS);
        m.rtt = Some(20 * MS);
        m.first_ss = false;
        m.ss_allowed = false;
        m.rcwnd = units;
        m.ssthresh = units;
        m.periodic_scheduled = true;
        m.periodic_at = Nanos::MAX;
        m
    }

    #[test]
    fn the_window_starts_at_one_mss_in_units_with_a_two_mss_floor() {
        let m = machine();
        assert_eq!((m.window_units(), m.min_window, m.ssthresh_units()), (8, 16, 65_535));
        assert_eq!(m.window(), 1024);
        let unscaled = AuthorsWindow::new(AuthorsConfig::default(), 1448, 0);
        assert_eq!((unscaled.window(), unscaled.min_window), (1448, 2896));
    }

    /// `ceil_rledbat` is one too high for exact multiples; GAIN's divisor is capped at 16.
    #[test]
    fn gain_uses_the_modules_ceiling() {
        let t = 60 * MS;
        assert_eq!(gain_divisor(t, Some(20 * MS)), 7, "120/20 = 6 exactly: the module says 7");
        assert_eq!(gain_divisor(t, Some(50 * MS)), 3, "ceil(2.4) = 3");
        assert_eq!(gain_divisor(t, Some(100 * MS)), 2);
        assert_eq!(gain_divisor(t, Some(120 * MS)), 1, "2T not above rtt_min");
        assert_eq!(gain_divisor(t, Some(5 * MS)), 16, "25 capped at 16");
        assert_eq!(gain_divisor(t, None), 1);
    }

    /// The first segment per TSecr gives a sample, repeats keep it, a TSecr missing from the
    /// table (cleared) reads as `rtt_min`. The delay used is the minimum of the last 10.
    #[test]
    fn rtt_from_the_table_and_the_minimum_of_the_last_ten_delays() {
        let mut m = machine();
        m.on_segment(MS, 0, MSS, 7); // nothing sent yet: rtt = rtt_min = none, q = 0
        assert_eq!((m.rtt(), m.queuing_delay()), (None, 0));
        m.on_sent(100, 10 * MS);
        m.on_sent(100, 11 * MS); // same TSval: the first send time stays
        m.on_sent(101, 20 * MS);
        m.on_segment(40 * MS, 1000, MSS, 100);
        assert_eq!((m.rtt(), m.rtt_min()), (Some(30 * MS), Some(30 * MS)));
        m.on_segment(41 * MS, 2000, MSS, 100);
        assert_eq!(m.rtt(), Some(30 * MS), "a repeated TSecr keeps the last rtt");
        // rtt 50 ms: q = 20 ms, but the ring still holds three zeros.
        m.on_segment(70 * MS, 3000, MSS, 101);
        assert_eq!((m.rtt(), m.queuing_delay()), (Some(50 * MS), 0));
        // Nine more values of 20 ms: the ring of 10 holds a zero until the 13th value.
        for k in 0..9u32 {
            let k64 = k as u64;
            m.on_sent(102 + k, (70 + k64) * MS);
            m.on_segment((120 + k64) * MS, 4000 + k64 * 1000, MSS, 102 + k);
            let expected = if k < 8 { 0 } else { 20 * MS };
            assert_eq!(m.queuing_delay(), expected, "value {}", k + 5);
        }
        m.table.clear();
        m.on_segment(200 * MS, 13_000, MSS, 111);
        assert_eq!(m.rtt(), Some(30 * MS), "not in the table: rtt = rtt_min");
        assert_eq!(m.queuing_delay(), 0);
    }

    /// Slow start adds `acked / g` bytes per segment; the window moves by whole units.
    #[test]
    fn slow_start_adds_acked_over_g_in_units() {
        let mut m = machine();
        m.rtt_min = Some(20 * MS); // g = 7: 1000/7 = 142 bytes per segment
        m.on_segment(MS, 0, MSS, 0); // TSecr 0 not in the table: rtt = rtt_min, q = 0
        assert_eq!((m.window_units(), m.increase_bytes), (9, 14), "142 B = 1 unit + 14 B");
        m.on_segment(2 * MS, 1000, MSS, 0);
        assert_eq!((m.window_units(), m.increase_bytes), (10, 28));
    }

    /// The first slow start ends once the delay exceeds 3/4 of the target (45 ms):
    /// `ssthresh` = the window, one last increment of the bytes received, the first periodic
    /// slowdown 2 `rtt` later.
    #[test]
    fn the_first_slow_start_ends_at_three_quarters_of_the_target() {
        let mut m = machine();
        m.cfg.last_qds = 1;
        m.rcwnd = 100;
        m.on_sent(1, 0);
        m.on_segment(20 * MS, 0, MSS, 1); // rtt_min 20 ms, q = 0: +142 B → 101 units, 14 B
        m.on_sent(2, 100 * MS);
        m.on_segment(165 * MS, 1000, MSS, 2); // rtt 65 ms: q = 45 ms is not above: 102, 28 B
        assert!(m.first_ss);
        assert_eq!((m.window_units(), m.increase_bytes), (102, 28));
        m.on_sent(3, 200 * MS);
        m.on_segment(266 * MS, 2000, MSS, 3); // rtt 66 ms: q = 46 ms
        assert!(!m.first_ss && m.periodic_scheduled && !m.ss_allowed);
        assert_eq!(m.ssthresh_units(), 102);
        assert_eq!(m.periodic_at, 266 * MS + 2 * 66 * MS);
        // The last increment is the 1000 bytes received: 28 + 1000 = 8 units and 4 bytes.
        assert_eq!((m.window_units(), m.increase_bytes), (110, 4));
    }

    /// Delay above the target: once per `rtt` the reduction
    /// `max((T − g·W·(q − T)) / (g·T), −W/2)` is spread over the bytes received, rounded up
    /// to units, and the RTT table is cleared. W = 400 units = 51 200 B, g = 7, q = 75 ms:
    /// (6e7 − 7 · 51 200 · 1.5e7) / 4.2e8 = −12 799.86 → −12 799 B.
    #[test]
    fn a_decrease_is_decided_once_per_rtt_and_spread_over_the_bytes_received() {
        let mut m = avoiding(400);
        m.cfg.last_qds = 1;
        assert_eq!(m.decrease_bytes(75 * MS as i64), -12_799);
        m.on_sent(50, 0);
        m.on_segment(95 * MS, 0, MSS, 50); // rtt 95 ms: q = 75 ms
        assert_eq!((m.reduction, m.to_reduce, m.window_units()), (true, 12_799, 400));
        assert!(m.table.sent.is_empty(), "the RTT table is cleared");
        assert_eq!(m.next_decrease, 190 * MS, "one rtt (95 ms) later");
        // Each 1000-byte segment takes 8 units (1024 B) off: 12 segments, 96 units. (Their
        // TSecr is gone from the table: rtt = rtt_min, q = 0.)
        for k in 1..=12 {
            m.on_segment(95 * MS + k * MS, k * 1000, MSS, 50);
        }
        assert_eq!((m.window_units(), m.to_reduce), (304, 12_799 - 12 * 1024));
        assert_eq!(m.rtt(), Some(20 * MS));
        // The 13th covers the 511 bytes left: 3 units and one for the remainder.
        m.on_segment(108 * MS, 13_000, MSS, 50);
        assert_eq!((m.window_units(), m.reduction), (300, false));
        // Before next_decrease nothing is decided, whatever the delay.
        m.on_sent(51, 99 * MS);
        m.on_segment(189 * MS, 14_000, MSS, 51); // rtt 90 ms: q = 70 ms
        assert_eq!((m.window_units(), m.reduction), (300, false));
        // At it: W = 38 400 B, q = 80 ms: (6e7 − 7 · 38 400 · 2e7) / 4.2e8 → −12 799 B again.
        m.on_sent(52, 150 * MS);
        m.on_segment(250 * MS, 15_000, MSS, 52); // rtt 100 ms
        assert_eq!((m.reduction, m.to_reduce, m.next_decrease), (true, 12_799, 350 * MS));
    }

    /// A reduction never takes the window below the minimum (16 units).
    #[test]
    fn a_decrease_stops_at_the_minimum_window() {
        let mut m = avoiding(20);
        m.cfg.last_qds = 1;
        m.on_sent(50, 0);
        m.on_segment(200 * MS, 0, MSS, 50); // q = 180 ms: −W/2 = −1280 B = 10 units
        assert_eq!(m.to_reduce, 4 * 128, "capped at 20 − 16 units");
        m.on_segment(201 * MS, 1000, MSS, 50);
        assert_eq!((m.window_units(), m.reduction), (16, false));
    }

    /// A segment not above the previous one is a retransmission: `ssthresh` = half, and the
    /// window is reduced to it over the bytes received. Another one during that reduction is
    /// the same event.
    #[test]
    fn a_retransmission_halves_through_the_received_bytes() {
        let mut m = avoiding(100);
        m.on_segment(MS, 50_000, MSS, 0);
        m.on_segment(2 * MS, 40_000, MSS, 0); // below the previous segment
        assert_eq!((m.ssthresh_units(), m.to_reduce), (50, 50 * 128));
        assert!(m.recent_retransmission && m.reduction);
        for k in 0..3 {
            m.on_segment((3 + k) * MS, 51_000 + k * 1000, MSS, 0); // 8 units each
        }
        assert_eq!((m.window_units(), m.to_reduce), (76, 6400 - 3 * 1024));
        m.on_segment(6 * MS, 30_000, MSS, 0); // a retransmission meanwhile: 8 units, no more
        assert_eq!((m.window_units(), m.ssthresh_units(), m.to_reduce), (68, 50, 2304));
        m.on_segment(7 * MS, 54_000, MSS, 0);
        m.on_segment(8 * MS, 55_000, MSS, 0);
        m.on_segment(9 * MS, 56_000, MSS, 0); // 256 B left: 2 units
        assert_eq!((m.window_units(), m.reduction, m.recent_retransmission), (50, false, false));
    }

    /// A retransmission during a delay-based reduction (none since the last reduction ended)
    /// restarts it down to the minimum window, `ssthresh` = half; the window then slow-starts
    /// back. W = 100 units, q = 75 ms: (6e7 − 7 · 12 800 · 1.5e7) / 4.2e8 → −3 199 B.
    #[test]
    fn a_retransmission_while_reducing_goes_to_the_minimum_window() {
        let mut m = avoiding(100);
        m.cfg.last_qds = 1;
        m.on_sent(50, 0);
        m.on_segment(95 * MS, 10_000, MSS, 50);
        assert_eq!(m.to_reduce, 3_199);
        m.on_segment(96 * MS, 5_000, MSS, 50); // 8 units off (92), then the retransmission
        assert_eq!((m.to_reduce, m.ssthresh_units(), m.rtt()), ((92 - 16) * 128, 46, Some(20 * MS)));
        // 9 segments take 72 units (20 left, 512 B to go), the 10th the last 4.
        for k in 1..=10 {
            m.on_segment((96 + k) * MS, 10_000 + k * 1000, MSS, 50);
        }
        assert_eq!((m.window_units(), m.reduction), (16, false));
        m.on_segment(107 * MS, 21_000, MSS, 50); // slow start: +142 B
        assert_eq!(m.window_units(), 17);
    }

    /// Congestion avoidance adds `acked · MSS / g` per window of bytes, with carries: here
    /// 8-byte units, g = 2 (rtt_min 100 ms), 500 000 per 1000-byte segment against W in bytes.
    #[test]
    fn avoidance_grows_by_mss_over_g_per_window() {
        let mut m = AuthorsWindow::new(AuthorsConfig::default(), MSS, 3);
        m.rtt_min = Some(100 * MS);
        m.first_ss = false;
        m.ss_allowed = false;
        m.periodic_scheduled = true;
        m.periodic_at = Nanos::MAX;
        m.rcwnd = 6_250; // 50 000 B
        m.ssthresh = 6_250;
        // 1: 500 000 / 50 000 = 10 B → 1 unit, 2 B carried.
        m.on_segment(MS, 0, MSS, 0);
        assert_eq!((m.window_units(), m.increase_bytes, m.to_increase_ca), (6_251, 2, 0));
        // 2: 500 000 / 50 008 → 9 B (450 072), 49 928 carried; 11 B → 1 unit, 3 B.
        m.on_segment(2 * MS, 1000, MSS, 0);
        assert_eq!((m.window_units(), m.increase_bytes, m.to_increase_ca), (6_252, 3, 49_928));
        // 3: 549 928 / 50 016 → 10 B (500 160), 49 768 carried; 13 B → 1 unit, 5 B.
        m.on_segment(3 * MS, 2000, MSS, 0);
        assert_eq!((m.window_units(), m.increase_bytes, m.to_increase_ca), (6_253, 5, 49_768));
        // The cap: 65 535 units.
        m.rcwnd = MAX_WINDOW_UNITS;
        m.increase_bytes = 7;
        m.on_segment(4 * MS, 3000, MSS, 0);
        assert_eq!(m.window_units(), MAX_WINDOW_UNITS);
    }

    /// A periodic slowdown: when due, the window is reduced to the minimum over the bytes
    /// received (`ssthresh` = the window before), then held for 2 `rtt`, then slow-starts
    /// back; once in avoidance again the next comes 9 × (its start to now) later.
    #[test]
    fn periodic_slowdown_reduces_freezes_and_ramps() {
        let mut m = avoiding(40);
        m.periodic_at = 10 * MS;
        m.on_segment(11 * MS, 0, MSS, 0);
        assert_eq!((m.to_reduce, m.ssthresh_units(), m.freeze_ended), (24 * 128, 40, false));
        for k in 1..=3 {
            m.on_segment((11 + k) * MS, k * 1000, MSS, 0); // 8 units each
        }
        assert_eq!((m.window_units(), m.reduction), (16, false));
        m.on_segment(15 * MS, 4000, MSS, 0); // the freeze starts: 2 · 20 ms
        assert_eq!(m.keep_window_until, 55 * MS);
        m.on_segment(54 * MS, 5000, MSS, 0);
        assert_eq!(m.window_units(), 16, "frozen");
        m.on_segment(55 * MS, 6000, MSS, 0); // slow start: 1000/7 = 142 B
        assert_eq!(m.window_units(), 17);
        m.rcwnd = 40; // back at ssthresh: avoidance, the next slowdown 9 · (56 − 11) ms later
        m.on_segment(56 * MS, 7000, MSS, 0);
        assert_eq!(m.periodic_at, 56 * MS + 9 * 45 * MS);
    }
}
