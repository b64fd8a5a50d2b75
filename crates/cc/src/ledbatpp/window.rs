//! The LEDBAT++ window machine: RTT samples and acknowledged bytes in, a window in bytes out.
//!
//! It knows nothing of the TCP stack. The sender adapter ([`super::LedbatPlusPlus`]) feeds it the
//! stack's RTT samples and credited bytes and copies its window into `cwnd`; the rLEDBAT receiver
//! feeds it RTTs measured from TCP timestamps and bytes received and advertises the window.
//! Rules and their sources are listed in the module documentation of [`super`].

use crate::ledbat::DelayEstimator;
use crate::Nanos;

use super::{
    LedbatPpConfig, GAIN_DIVISOR_CAP, INITIAL_SLOWDOWN_RTTS, SLOWDOWN_CWND, SLOWDOWN_FREEZE_RTTS,
    SLOWDOWN_INTERVAL, SS_EXIT_FRACTION,
};

/// Where the machine is in the draft's cycle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Phase {
    /// The initial slow start (also after a timeout or an idle restart), up to `ssthresh`.
    SlowStart,
    /// Delay-based AIMD, eqs. (3)–(4).
    Avoidance,
    /// A periodic slowdown's first part: the window pinned at two packets until `until`.
    Freeze { started: Nanos, until: Nanos, goal: u64 },
    /// A periodic slowdown's second part: slow start back to `goal`, the window before it.
    Ramp { started: Nanos, goal: u64 },
}

/// The per-RTT cap on the multiplicative decrease: the window may not fall below `floor`
/// before `bytes_left` more bytes (one window) have been acknowledged.
#[derive(Clone, Copy, Debug)]
struct DecreaseRound {
    floor: f64,
    bytes_left: u64,
}

/// `GAIN = 1 / min(GAIN_DIVISOR_CAP, ⌈2·T / RTT_b⌉)` (rLEDBAT paper eq. (2), L89).
pub fn gain(target: Nanos, base_rtt: Nanos) -> f64 {
    let divisor = if base_rtt == 0 { GAIN_DIVISOR_CAP } else { (2 * target).div_ceil(base_rtt) };
    1.0 / divisor.clamp(1, GAIN_DIVISOR_CAP) as f64
}

/// The LEDBAT++ congestion-window state, independent of who measures the delay.
#[derive(Clone, Debug)]
pub struct LedbatPpWindow {
    cfg: LedbatPpConfig,
    mss: u64,
    delay: DelayEstimator,
    /// RFC 6298-style smoothed RTT of the samples given (slowdown timing, filter age limit).
    srtt: Option<Nanos>,
    /// Window in bytes; fractions carried.
    cwnd: f64,
    /// Slow-start threshold in bytes while in [`Phase::SlowStart`] (`u64::MAX` = none).
    ssthresh: u64,
    phase: Phase,
    next_slowdown: Option<Nanos>,
    round: Option<DecreaseRound>,
    last_queuing_delay: Option<Nanos>,
}

impl LedbatPpWindow {
    /// A fresh connection: `initial_window` bytes (the stack's IW, lowered to `init_cwnd`
    /// segments unless that is 0), in the initial slow start.
    pub fn new(cfg: LedbatPpConfig, mss: u32, initial_window: u64) -> Self {
        let mss = mss.max(1) as u64;
        let iw = if cfg.init_cwnd > 0 { initial_window.min(cfg.init_cwnd * mss) } else { initial_window };
        Self {
            delay: DelayEstimator::new(cfg.base_history, cfg.current_filter),
            cfg,
            mss,
            srtt: None,
            cwnd: iw.max(1) as f64,
            ssthresh: u64::MAX,
            phase: Phase::SlowStart,
            next_slowdown: None,
            round: None,
            last_queuing_delay: None,
        }
    }

    pub fn window(&self) -> u64 {
        self.cwnd.floor().max(1.0) as u64
    }

    /// The slow-start threshold a stack should show: the slow start's limit, the window a
    /// slowdown returns to, or the window itself in congestion avoidance.
    pub fn ssthresh(&self) -> u64 {
        match self.phase {
            Phase::SlowStart => self.ssthresh,
            Phase::Freeze { goal, .. } | Phase::Ramp { goal, .. } => goal,
            Phase::Avoidance => self.window(),
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    pub fn next_slowdown(&self) -> Option<Nanos> {
        self.next_slowdown
    }

    pub fn srtt(&self) -> Option<Nanos> {
        self.srtt
    }

    pub fn base_rtt(&self) -> Option<Nanos> {
        self.delay.base_delay().map(|b| b.max(0) as Nanos)
    }

    /// The queueing delay the last ACK showed.
    pub fn queuing_delay(&self) -> Option<Nanos> {
        self.last_queuing_delay
    }

    /// The target in force: `T`, or `min(T, RTT_b)` with `enhanced_target` (paper §7.1, L500).
    pub fn effective_target(&self) -> Nanos {
        match (self.cfg.enhanced_target, self.base_rtt()) {
            (true, Some(b)) => self.cfg.target.min(b.max(1)),
            _ => self.cfg.target,
        }
    }

    /// GAIN from the nominal `T` and the current base RTT (1/16 before any sample).
    pub fn gain(&self) -> f64 {
        gain(self.cfg.target, self.base_rtt().unwrap_or(0))
    }

    /// The stack (PRR, an RTO, an undo, an idle restart) set the window itself.
    pub fn set_window(&mut self, bytes: u64) {
        self.cwnd = bytes.max(1) as f64;
        self.round = None;
    }

    /// One RTT sample: `RTT_b` and `RTT_c` estimators (minute buckets and minimum filter, as
    /// RFC 6817 §2.4.2) and the smoothed RTT (α = 1/8).
    pub fn on_delay_sample(&mut self, now: Nanos, rtt: Nanos) {
        self.delay.add(now, rtt.min(i64::MAX as u64) as i64);
        self.srtt = Some(match self.srtt {
            None => rtt,
            Some(s) => s - s / 8 + rtt / 8,
        });
    }

    /// `bytes` newly acknowledged (or received) at `now`; `may_grow` is false when the
    /// window was not the limit (RFC 7661: no growth then, decreases still apply).
    pub fn on_ack(&mut self, now: Nanos, bytes: u64, may_grow: bool) {
        self.on_timer(now);
        let Some(qd) = self.delay.queuing_delay(now, self.srtt) else {
            return;
        };
        self.last_queuing_delay = Some(qd);
        match self.phase {
            Phase::Freeze { .. } => self.cwnd = self.slowdown_window(),
            Phase::SlowStart => self.slow_start_ack(now, qd, bytes, may_grow),
            Phase::Ramp { started, goal } => self.ramp_ack(now, bytes, may_grow, started, goal),
            Phase::Avoidance => self.avoidance_ack(qd, bytes, may_grow),
        }
        self.cwnd = self.cwnd.max(self.floor());
    }

    /// Time-driven transitions: a due slowdown starts, a finished freeze gives way to the ramp.
    pub fn on_timer(&mut self, now: Nanos) {
        match self.phase {
            Phase::Avoidance if self.next_slowdown.is_some_and(|t| now >= t) => self.start_slowdown(now),
            Phase::Freeze { started, until, goal } if now >= until => {
                self.phase = Phase::Ramp { started, goal };
            }
            _ => {}
        }
    }

    /// The earliest time [`on_timer`](Self::on_timer) has something to do.
    pub fn next_event(&self) -> Option<Nanos> {
        match self.phase {
            Phase::Avoidance => self.next_slowdown,
            Phase::Freeze { until, .. } => Some(until),
            _ => None,
        }
    }

    /// A loss (or ECN-Echo): halve, with the `min_cwnd` floor (paper L79). A slow start or a
    /// ramp ends there; a loss during a freeze halves the window the ramp will return to.
    /// Returns the new window.
    pub fn on_loss(&mut self, now: Nanos) -> u64 {
        self.round = None;
        match self.phase {
            Phase::Freeze { started, until, goal } => {
                self.phase = Phase::Freeze { started, until, goal: self.halved(goal as f64) as u64 };
            }
            Phase::SlowStart => {
                self.cwnd = self.halved(self.cwnd);
                self.enter_avoidance_after_slow_start(now);
            }
            Phase::Ramp { started, .. } => {
                self.cwnd = self.halved(self.cwnd);
                self.end_slowdown(now, started);
            }
            Phase::Avoidance => self.cwnd = self.halved(self.cwnd),
        }
        self.window()
    }

    /// A retransmission timeout: restart as a new connection would (the initial slow start,
    /// up to half the window, then a new initial slowdown); the window is one segment.
    pub fn on_timeout(&mut self) {
        self.ssthresh = self.halved(self.cwnd) as u64;
        self.restart_slow_start(self.mss);
    }

    /// Same data timed out again: one segment, slow start to the threshold already set.
    pub fn on_repeated_timeout(&mut self) {
        self.restart_slow_start(self.mss);
    }

    /// Sending resumes after idling with `window` bytes: slow start back towards the window
    /// before the idle period, slowdown schedule cleared.
    pub fn on_idle_restart(&mut self, window: u64) {
        self.ssthresh = self.window().max(window);
        self.restart_slow_start(window);
    }

    fn restart_slow_start(&mut self, window: u64) {
        self.set_window(window);
        self.phase = Phase::SlowStart;
        self.next_slowdown = None;
    }

    // ----- per-phase rules --------------------------------------------------------------------

    /// Modified slow start (draft §4.1 in -01's numbering): `cwnd += GAIN · acked`, left at once
    /// when the queueing delay passes 3/4 of the target (paper L113) or at ssthresh.
    fn slow_start_ack(&mut self, now: Nanos, qd: Nanos, bytes: u64, may_grow: bool) {
        if qd as f64 > SS_EXIT_FRACTION * self.effective_target() as f64 {
            self.enter_avoidance_after_slow_start(now);
            return;
        }
        if may_grow {
            self.cwnd += self.gain() * bytes as f64;
        }
        if self.cwnd >= self.ssthresh as f64 {
            self.cwnd = self.ssthresh as f64;
            self.enter_avoidance_after_slow_start(now);
        }
    }

    /// The ramp after a freeze: the same slow start, back to the window before the slowdown,
    /// without a delay exit (L358: the ramp overshoots the target and the decrease follows).
    fn ramp_ack(&mut self, now: Nanos, bytes: u64, may_grow: bool, started: Nanos, goal: u64) {
        if may_grow {
            self.cwnd += self.gain() * bytes as f64;
        }
        if self.cwnd >= goal as f64 {
            self.cwnd = goal as f64;
            self.end_slowdown(now, started);
        }
    }

    /// Eqs. (3)–(4) spread over the ACKs of one RTT: per acknowledged byte the window moves by
    /// `(GAIN·MSS/cwnd − C·(q/T − 1)·1{q > T})`, so one window of ACKs adds `GAIN` segments
    /// below the target and `GAIN − C·W·(q/T − 1)` above it, never below half the window the
    /// decrease round started with.
    fn avoidance_ack(&mut self, qd: Nanos, bytes: u64, may_grow: bool) {
        let target = self.effective_target() as f64;
        let excess = (qd as f64 / target - 1.0).max(0.0);
        let grow = if may_grow { self.gain() * self.mss as f64 / self.cwnd } else { 0.0 };
        if excess == 0.0 {
            self.cwnd += grow * bytes as f64;
            self.count_round(bytes);
            return;
        }
        let round =
            *self.round.get_or_insert(DecreaseRound { floor: self.cwnd / 2.0, bytes_left: self.cwnd as u64 });
        let delta = (grow - self.cfg.decrease_constant * excess) * bytes as f64;
        self.cwnd = (self.cwnd + delta).max(round.floor);
        self.count_round(bytes);
    }

    fn count_round(&mut self, bytes: u64) {
        if let Some(r) = &mut self.round {
            r.bytes_left = r.bytes_left.saturating_sub(bytes);
            if r.bytes_left == 0 {
                self.round = None;
            }
        }
    }

    // ----- slowdowns ----------------------------------------------------------------------------

    /// Leaving the initial slow start: ssthresh is the window reached, and the first slowdown
    /// comes `INITIAL_SLOWDOWN_RTTS` RTTs later (paper L115).
    fn enter_avoidance_after_slow_start(&mut self, now: Nanos) {
        self.ssthresh = self.window();
        self.phase = Phase::Avoidance;
        self.round = None;
        self.next_slowdown = self.cfg.slowdown.then(|| now + INITIAL_SLOWDOWN_RTTS * self.rtt());
    }

    /// Two packets for two RTTs, remembering the window to return to (paper L115).
    fn start_slowdown(&mut self, now: Nanos) {
        let goal = self.window();
        let until = now + SLOWDOWN_FREEZE_RTTS * self.rtt();
        self.phase = Phase::Freeze { started: now, until, goal };
        self.cwnd = self.slowdown_window();
        self.next_slowdown = None;
        self.round = None;
    }

    /// The ramp is over: the next slowdown comes `SLOWDOWN_INTERVAL` times the slowdown's
    /// duration (freeze and ramp) later, which keeps it near 10% of the time.
    fn end_slowdown(&mut self, now: Nanos, started: Nanos) {
        self.phase = Phase::Avoidance;
        self.round = None;
        let duration = now.saturating_sub(started).max(1);
        self.next_slowdown = self.cfg.slowdown.then(|| now + SLOWDOWN_INTERVAL * duration);
    }

    fn slowdown_window(&self) -> f64 {
        (SLOWDOWN_CWND * self.mss) as f64
    }

    /// The RTT slowdowns are timed with: the smoothed RTT, or the current filter's RTT.
    fn rtt(&self) -> Nanos {
        self.srtt.unwrap_or(0).max(1)
    }

    fn floor(&self) -> f64 {
        (self.cfg.min_cwnd * self.mss) as f64
    }

    /// `max(w / 2, MIN_CWND)`, never above `w` (a window below the floor is kept).
    fn halved(&self, w: f64) -> f64 {
        (w / 2.0).max(self.floor()).min(w).floor()
    }
}
