//! rLEDBAT (Bagnulo et al., `shared/seeds/000_0bcdc4d0e80e9a68.txt`, cited as `Lnnn`; RFC 9840):
//! a TCP receiver runs LEDBAT++ and conveys its window, `rlWND`, through the advertised
//! receive window, so an unmodified sender becomes less-than-best-effort (L121, L170).
//!
//! The controller sees only what a receiver sees on the wire: arriving data segments (seq,
//! length, TSval, TSecr) and its own outgoing ACKs (TSval, advertised window, `RCV.NXT`). The
//! stack advertises `min(fcWND, rlWND)` and never moves the right edge left (L187–L191); the
//! sender's window is `min(sCWND, rlWND, fcWND)` (eq. (5), L182), so rLEDBAT can never make a
//! flow more aggressive than its sender's own controller (L178).
//!
//! * **RTT** ([`rtt`]): outgoing TSval matched with incoming TSecr, first packet per value
//!   only, samples whose TSval went out while the window was being stepped down discarded
//!   (L148–L160, footnote 5). An ACK counts as stepping down while its window is still at
//!   least one scale unit above `rlWND`, i.e. while the stack holds the right edge and the
//!   window shrinks only by the bytes arriving (§3.3.1, L191). A gradual LEDBAT++ decrease
//!   that the edge can follow does not count: the edge still advances on every ACK, so the
//!   window-limited sender answers at once and the sample is sound; discarding those too would
//!   freeze `RTT_c` above the target for as long as the decrease lasts.
//! * **Current and base RTT**: LEDBAT++'s estimator in [`LedbatPpWindow`]. `RTT_c` is the
//!   minimum of the last `current_filter` samples (default 4: Fig. 2 line 4, L215, and
//!   LEDBAT++'s "at least 4", L83). The prototype instead filters the last 10 *queueing-delay*
//!   values (L297); `current_filter = 10` approximates it (`profile = "authors"` below does
//!   it exactly). `RTT_b` is the minimum over the last `base_history` minutes (default 10:
//!   L83 and "the last 10 min", L256); Fig. 2 says 180 s (L217), which is `base_history = 3`.
//!   Both inconsistencies are the paper's own; the defaults follow its text and LEDBAT++.
//! * **Loss** ([`LossDetector`]): a segment below the highest byte received (`S2 < S1`) with a later
//!   TSval (`TS2 > TS1`) is a retransmission (L164). The reaction is LEDBAT++'s halving, at
//!   most once per `RTT_c` (Fig. 2 line 9) and by default once per loss episode
//!   ([`LossEpisode`]).
//! * **Window**: LEDBAT++ growth, multiplicative decrease capped at half per RTT, the 3/4·T
//!   exit of the initial slow start and the periodic slowdowns, all by the same
//!   [`LedbatPpWindow`] the sender-side LEDBAT++ uses, fed with RTT samples and bytes
//!   received (Fig. 2 lines 7–15). `enhanced_target = true` uses `min(T, RTT_b)` (§7, L500).
//! * **Start** (L254): `rlWND` starts at its maximum, so the sender's slow start and flow
//!   control govern, until LEDBAT++ leaves its initial slow start (on `q_d > 3/4·T` or a
//!   retransmission). `rlWND` then becomes the bytes received over the last `RTT_c`, the
//!   sender's flight (halved when a loss ended the slow start): the paper does not say how to
//!   leave a slow start that began at "max" (the notes' default, §8.5). Meanwhile the cap
//!   is the flow-control window the paper's Linux receiver would advertise, which autotunes
//!   (`FlowWindowTuner`, Linux `tcp_rcv_space_adjust`: 64 KB, then per RTT twice the bytes
//!   received plus 16 segments, doubled while the rate grows by half or more), never the
//!   socket buffer itself: an edge advertised 64 MB ahead cannot be taken back (no
//!   shrinking), so the sender would stay unbounded for 64 MB after LEDBAT++ took over
//!   (measured: a 500 ms buffer overflowed at every start).
//!   `initial_rlwnd = "init_cwnd"` instead starts at `init_cwnd` segments and slow-starts
//!   as a LEDBAT++ sender would, as the authors' module does (`INIT_WINDOW`).
//! * **Without timestamps** (`timestamps = false`): the TSval rules cannot be evaluated (the
//!   paper: rLEDBAT "can only work if the TimeStamp option is enabled by both ends", L146).
//!   `no_timestamps = "edge"` (default) falls back to what a receiver can still measure on
//!   the wire. (RFC 9840's text was not available here; this follows the notes, §8.4's hole
//!   option, and Linux's receiver-side RTT estimate. `"off"` is the other reading.) The RTT
//!   is the time from the ACK that first advertised a right edge to the first data beyond
//!   the previous edge (exact while the sender is window-limited, too long otherwise, so
//!   errors only make it yield more), and a new sequence hole is the loss signal. Data
//!   within the first 64 KB is not timed: the sender may have sent it under the SYN-ACK's
//!   window before any of these ACKs reached it (timing that burst against them gave
//!   sub-millisecond "RTTs" and starved the flow at 100 ms). The window starts at
//!   `init_cwnd` segments, so it binds from the start and the edge samples are sound.
//!   `no_timestamps = "off"` advertises no cap at all (a plain receiver, as the paper's
//!   L146 implies). ECN CE marks are not used: neither the paper nor Fig. 2 reacts to them
//!   at the receiver.
//!
//! **Profiles** (key `profile`). `"rfc"` (default) is everything above. `"authors"` is the
//! authors' Linux prototype, `net-research/rledbat_module` `SRC/rledbat_receive.c` (Linux 3.13,
//! draft -02), which decides what RFC 9840 leaves open in its own way: the window in
//! window-scale units from 1 MSS with a 2 MSS floor, the RTT table cleared after each
//! decrease and each loss reaction, the minimum of the last 10 queueing-delay values, a
//! reduction decided at most once per RTT and spread over the bytes received, a segment not
//! above the previous one taken as a retransmission, GAIN with the module's integer ceiling.
//! The rules and the differences are in [`authors`]. Of the keys above it reads `target`,
//! `enhanced_target` (the module's `RLEDBAT2`), `current_filter` (`LAST_QDS`, default 10 there,
//! at most 20), `init_cwnd` (`INIT_WINDOW`, default 1 there) and `min_cwnd`
//! (`MIN_REDUCTION_BYTES`, 2); the others have no counterpart in the module and are refused
//! with it. Without timestamps the module has no RTT: the profile then caps nothing and says
//! so in the notes.

pub mod authors;
mod loss;
pub mod rtt;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use crate::ledbatpp::{LedbatPpConfig, LedbatPpWindow, Phase};
use crate::{Nanos, ParamError, Params, ReceiveWindowControl, ReceivedSegment, ReceiverInfo, ReceiverProbe};

use authors::{AuthorsConfig, AuthorsWindow};
pub use loss::LossDetector;
use rtt::{EdgeRttSampler, TsRttSampler};

/// The largest window a 16-bit field carries before scaling (RFC 7323 §2.2).
const MAX_UNSCALED_WINDOW: u64 = 65_535;

/// rLEDBAT parameters: LEDBAT++'s (same keys, see [`LedbatPpConfig`]) and two of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct RledbatConfig {
    pub ledbat: LedbatPpConfig,
    /// Start at the maximum window (paper L254) rather than at `init_cwnd` segments.
    /// Key `initial_rlwnd`, `"max"` (default) or `"init_cwnd"`.
    pub start_unbounded: bool,
    /// Without timestamps, control the window with edge-timed RTTs (true, default) or not
    /// at all. Key `no_timestamps`, `"edge"` or `"off"`.
    pub edge_fallback: bool,
    /// Which retransmissions may halve the window again. Key `loss_episode`.
    pub loss_episode: LossEpisode,
    /// Whose decisions fill what RFC 9840 leaves open. Key `profile`.
    pub profile: Profile,
}

/// Key `profile`: `"rfc"` (default) or `"authors"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// RFC 9840 and the paper, with this module's documented readings.
    #[default]
    Rfc,
    /// The authors' Linux module (`net-research/rledbat_module`), see [`authors`].
    Authors,
}

/// Keys with no counterpart in the authors' module, refused with `profile = "authors"`.
const NOT_IN_THE_MODULE: &[(&str, &str)] = &[
    ("slowdown", "the module always makes periodic slowdowns"),
    ("base_history", "the module's rtt_min never ages"),
    ("decrease_constant", "the module's constant is 1"),
    ("initial_rlwnd", "the module starts at init_cwnd segments"),
    ("no_timestamps", "the module has no RTT without timestamps"),
    ("loss_episode", "the module reacts to the first retransmission after a reduction"),
];

/// When a retransmission starts a new loss reaction (Fig. 2 line 9 says only "once per RTT").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossEpisode {
    /// `"window"` (default): once per RTT, and only for data above the right edge advertised
    /// at the last reaction. Everything below it may have been sent before the sender saw the
    /// smaller window, so its losses belong to the same overflow, as a sender's recovery point
    /// makes one episode of them (RFC 6582 §3.2; LEDBAT++ at the sender halves once per
    /// episode). In the paper's Fig. 9 setting (20 Mbps, 30 ms buffer) the two rules give
    /// utilizations within 0.03 of each other from 20 to 300 ms of base RTT.
    Window,
    /// `"rtt"`: Fig. 2 literally, any retransmission once `RTT_c` has passed since the last.
    Rtt,
}

impl Default for RledbatConfig {
    fn default() -> Self {
        Self {
            ledbat: LedbatPpConfig::default(),
            start_unbounded: true,
            edge_fallback: true,
            loss_episode: LossEpisode::Window,
            profile: Profile::Rfc,
        }
    }
}

impl RledbatConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let profile = match p.choice("profile", "rfc", &["rfc", "authors"])?.as_str() {
            "authors" => Profile::Authors,
            _ => Profile::Rfc,
        };
        let mut cfg = Self {
            ledbat: LedbatPpConfig::from_params(p)?,
            start_unbounded: p.choice("initial_rlwnd", "max", &["max", "init_cwnd"])? == "max",
            edge_fallback: p.choice("no_timestamps", "edge", &["edge", "off"])? == "edge",
            loss_episode: match p.choice("loss_episode", "window", &["window", "rtt"])?.as_str() {
                "rtt" => LossEpisode::Rtt,
                _ => LossEpisode::Window,
            },
            profile,
        };
        if profile == Profile::Authors {
            cfg.authors_keys(p)?;
        }
        Ok(cfg)
    }

    /// `profile = "authors"` with the module's defaults (`LAST_QDS` = 10, `INIT_WINDOW` = 1
    /// MSS) and the shared keys' defaults otherwise.
    pub fn authors() -> Self {
        let mut cfg = Self { profile: Profile::Authors, ..Self::default() };
        cfg.ledbat.current_filter = authors::LAST_QDS;
        cfg.ledbat.init_cwnd = authors::INIT_WINDOW_SEGMENTS;
        cfg
    }

    /// `profile = "authors"`: the module's defaults where a key was not given, and no key the
    /// module has no counterpart for.
    fn authors_keys(&mut self, p: &Params) -> Result<(), ParamError> {
        let given = |key: &str| p.iter().any(|(k, _)| k == key);
        let refuse = |key: &str, message: String| Err(ParamError { key: key.into(), message });
        for (key, why) in NOT_IN_THE_MODULE {
            if given(key) {
                return refuse(key, format!("does not apply with profile = \"authors\" ({why})"));
            }
        }
        let defaults = Self::authors().ledbat;
        if !given("current_filter") {
            self.ledbat.current_filter = defaults.current_filter;
        } else if self.ledbat.current_filter > authors::MAX_LAST_QDS {
            let max = authors::MAX_LAST_QDS;
            return refuse("current_filter", format!("at most {max} with profile = \"authors\""));
        }
        if !given("init_cwnd") {
            self.ledbat.init_cwnd = defaults.init_cwnd;
        } else if self.ledbat.init_cwnd == 0 {
            return refuse("init_cwnd", "at least 1 with profile = \"authors\"".into());
        }
        Ok(())
    }

    /// The module's knobs as this configuration sets them.
    pub fn authors_config(&self) -> AuthorsConfig {
        AuthorsConfig {
            target: self.ledbat.target,
            rledbat2: self.ledbat.enhanced_target,
            last_qds: self.ledbat.current_filter as usize,
            init_segments: self.ledbat.init_cwnd,
            min_segments: self.ledbat.min_cwnd,
        }
    }
}

/// The authors' profile once the first data segment has shown whether timestamps are in use.
#[derive(Clone, Debug)]
struct AuthorsRunning {
    window: AuthorsWindow,
    /// No timestamps: no RTT, no cap.
    passive: bool,
}

impl AuthorsRunning {
    fn new(cfg: &RledbatConfig, rx: &ReceiverInfo, first: &ReceivedSegment) -> Self {
        Self {
            window: AuthorsWindow::new(cfg.authors_config(), rx.mss, rx.wscale),
            passive: first.tsecr.is_none(),
        }
    }

    fn on_segment(&mut self, seg: &ReceivedSegment) {
        match seg.tsecr {
            Some(tsecr) if !self.passive && seg.len > 0 => {
                self.window.on_segment(seg.now, seg.seq, seg.len, tsecr)
            }
            _ => {}
        }
    }

    fn on_sent(&mut self, rx: &ReceiverInfo, tsval: Option<u32>) {
        if let Some(v) = tsval.filter(|_| !self.passive) {
            self.window.on_sent(v, rx.now);
        }
    }

    fn target(&self) -> Option<u64> {
        (!self.passive).then(|| self.window.window())
    }
}

/// Arrival times and sizes of recent data (the sender's flight while the window is unbounded).
#[derive(Clone, Debug, Default)]
struct RecentBytes {
    arrivals: VecDeque<(Nanos, u64)>,
}

impl RecentBytes {
    /// Record `bytes` arriving at `now`, forgetting arrivals older than `keep`.
    fn add(&mut self, now: Nanos, bytes: u64, keep: Nanos) {
        self.arrivals.push_back((now, bytes));
        while self.arrivals.front().is_some_and(|&(t, _)| now.saturating_sub(t) > keep) {
            self.arrivals.pop_front();
        }
    }

    /// Bytes that arrived within `span` before `now`.
    fn within(&self, now: Nanos, span: Nanos) -> u64 {
        let recent = self.arrivals.iter().rev().take_while(|&&(t, _)| now.saturating_sub(t) <= span);
        recent.map(|&(_, b)| b).sum()
    }

    fn release(&mut self) {
        self.arrivals = VecDeque::new();
    }
}

/// A Linux-like autotuned flow-control window (DRS; `tcp_rcv_space_adjust`, 3.x–4.x): starts
/// at 64 KB and, once per RTT, rises to twice the bytes received in that RTT plus 16
/// segments, or four times them while the rate grows by half or more (slow start).
#[derive(Clone, Debug)]
struct FlowWindowTuner {
    window: u64,
    epoch_start: Nanos,
    epoch_bytes: u64,
    last_epoch_bytes: u64,
}

impl FlowWindowTuner {
    const INITIAL: u64 = 65_535;

    fn new() -> Self {
        Self { window: Self::INITIAL, epoch_start: 0, epoch_bytes: 0, last_epoch_bytes: 0 }
    }

    fn on_data(&mut self, now: Nanos, bytes: u64, rtt: Option<Nanos>, mss: u64) {
        self.epoch_bytes += bytes;
        let Some(rtt) = rtt else { return };
        if now < self.epoch_start + rtt {
            return;
        }
        let copied = self.epoch_bytes;
        let growing = 2 * copied >= 3 * self.last_epoch_bytes;
        let tuned = if growing { 4 * copied } else { 2 * copied + 16 * mss };
        self.window = self.window.max(tuned);
        self.last_epoch_bytes = copied;
        self.epoch_start = now;
        self.epoch_bytes = 0;
    }
}

/// The controller once the first data segment has shown whether timestamps are in use.
#[derive(Clone, Debug)]
struct Running {
    window: LedbatPpWindow,
    timestamps: bool,
    /// rLEDBAT's window not in force yet: the initial slow start from "max" (L254), or no
    /// control at all.
    unbounded: bool,
    /// The flow-control window advertised meanwhile.
    flow_window: FlowWindowTuner,
    mss: u64,
    /// Control given up (no timestamps and `no_timestamps = "off"`).
    passive: bool,
    ts_rtt: TsRttSampler,
    edge_rtt: EdgeRttSampler,
    loss: LossDetector,
    last_loss_reaction: Option<Nanos>,
    loss_episode: LossEpisode,
    /// Highest right edge advertised so far, and its value at the last loss reaction.
    edge_sent: u64,
    recovery_point: u64,
    /// Longest RTT sample so far: how much arrival history the unbounded start keeps.
    longest_rtt: Nanos,
    recent: RecentBytes,
    /// `min_cwnd` segments in bytes, and the largest window the header can carry.
    floor: u64,
    max_window: u64,
}

impl Running {
    fn new(cfg: &RledbatConfig, rx: &ReceiverInfo, first: &ReceivedSegment) -> Self {
        let timestamps = first.tsecr.is_some();
        let mss = rx.mss.max(1) as u64;
        let iw = cfg.ledbat.init_cwnd.max(1) * mss;
        let passive = !timestamps && !cfg.edge_fallback;
        Self {
            window: LedbatPpWindow::new(cfg.ledbat.clone(), rx.mss, iw),
            timestamps,
            unbounded: passive || (timestamps && cfg.start_unbounded),
            passive,
            flow_window: FlowWindowTuner::new(),
            mss,
            ts_rtt: TsRttSampler::default(),
            edge_rtt: EdgeRttSampler::beyond(first.seq + MAX_UNSCALED_WINDOW),
            loss: LossDetector::default(),
            last_loss_reaction: None,
            loss_episode: cfg.loss_episode,
            edge_sent: 0,
            recovery_point: 0,
            longest_rtt: 0,
            recent: RecentBytes::default(),
            floor: cfg.ledbat.min_cwnd * mss,
            max_window: MAX_UNSCALED_WINDOW << rx.wscale.min(14),
        }
    }

    fn target(&self) -> Option<u64> {
        match (self.passive, self.unbounded) {
            (true, _) => None,
            (false, true) => Some(self.flow_window.window),
            (false, false) => Some(self.window.window()),
        }
    }

    /// `RTT_c`, the current filter's RTT: `RTT_b + q_d` as of the last segment, else the
    /// smoothed RTT of the samples.
    fn current_rtt(&self) -> Option<Nanos> {
        match (self.window.base_rtt(), self.window.queuing_delay()) {
            (Some(b), Some(q)) => Some(b + q),
            _ => self.window.srtt(),
        }
    }

    fn rtt_sample(&mut self, seg: &ReceivedSegment, fresh: bool) -> Option<Nanos> {
        if self.timestamps {
            seg.tsecr.and_then(|e| self.ts_rtt.on_received(e, seg.now))
        } else if fresh {
            self.edge_rtt.on_received(seg.seq + seg.len as u64, seg.now)
        } else {
            None
        }
    }

    fn on_segment(&mut self, seg: &ReceivedSegment) {
        if self.passive || seg.len == 0 {
            return;
        }
        let now = seg.now;
        let fresh = seg.seq + seg.len as u64 > self.loss.highest_end();
        if let Some(rtt) = self.rtt_sample(seg, fresh) {
            self.window.on_delay_sample(now, rtt);
            self.longest_rtt = self.longest_rtt.max(rtt);
        }
        let bytes = seg.len as u64;
        if self.unbounded {
            // Twice the longest RTT seen: RTT_c when the start ends may exceed every sample
            // before it.
            self.recent.add(now, bytes, 2 * self.longest_rtt);
            self.flow_window.on_data(now, bytes, self.current_rtt(), self.mss);
        }
        if self.loss.on_segment(seg.seq, seg.len, seg.tsval) {
            self.react_to_loss(now, seg.seq);
        }
        self.window.on_ack(now, bytes, !self.unbounded);
        if self.unbounded && self.window.phase() != Phase::SlowStart {
            self.bound(now, 1.0);
        }
        if self.window.window() > self.max_window {
            self.window.set_window(self.max_window);
        }
    }

    /// Halve at most once per `RTT_c` (Fig. 2 line 9) and, by default, once per episode
    /// ([`LossEpisode`]). A loss during the unbounded start bounds the window at half the
    /// sender's flight.
    fn react_to_loss(&mut self, now: Nanos, seq: u64) {
        let rtt = self.current_rtt().unwrap_or(0);
        if self.last_loss_reaction.is_some_and(|t| now < t + rtt) {
            return;
        }
        if self.loss_episode == LossEpisode::Window && seq < self.recovery_point {
            return;
        }
        self.last_loss_reaction = Some(now);
        self.recovery_point = self.edge_sent;
        self.window.on_loss(now);
        if self.unbounded {
            self.bound(now, 0.5);
        }
    }

    /// Leave the unbounded start: `rlWND` = `fraction` of the bytes received over the last
    /// `RTT_c` (the sender's flight), at least the floor.
    fn bound(&mut self, now: Nanos, fraction: f64) {
        let span = self.current_rtt().unwrap_or(self.longest_rtt);
        let flight = (self.recent.within(now, span) as f64 * fraction) as u64;
        self.window.set_window(flight.max(self.floor));
        self.unbounded = false;
        self.recent.release();
    }

    fn on_sent(&mut self, rx: &ReceiverInfo, tsval: Option<u32>, window: u64) {
        if self.passive {
            return;
        }
        self.edge_sent = self.edge_sent.max(rx.rcv_nxt + window);
        let unit = 1u64 << rx.wscale.min(14);
        let reducing = self.target().is_some_and(|t| window >= t.saturating_add(unit));
        match tsval.filter(|_| self.timestamps) {
            Some(v) => self.ts_rtt.on_sent(v, rx.now, reducing),
            None if !self.timestamps => self.edge_rtt.on_sent(rx.rcv_nxt + window, rx.now),
            None => {}
        }
    }
}

/// The rLEDBAT receive-window controller (`receiver_cca = "rledbat"`).
#[derive(Clone, Debug)]
pub struct Rledbat {
    cfg: RledbatConfig,
    running: Option<Running>,
    /// The controller with `profile = "authors"` (then `running` stays `None`).
    authors: Option<AuthorsRunning>,
}

impl Rledbat {
    pub fn new(cfg: RledbatConfig) -> Self {
        Self { cfg, running: None, authors: None }
    }

    pub fn config(&self) -> &RledbatConfig {
        &self.cfg
    }

    /// The LEDBAT++ machine, once the first data segment arrived.
    pub fn machine(&self) -> Option<&LedbatPpWindow> {
        self.running.as_ref().map(|r| &r.window)
    }

    /// The authors' module's machine (`profile = "authors"`), once the first data segment
    /// arrived.
    pub fn authors_machine(&self) -> Option<&AuthorsWindow> {
        self.authors.as_ref().map(|a| &a.window)
    }

    /// rLEDBAT's window is not in force (the start from "max", or no control without
    /// timestamps).
    pub fn is_unbounded(&self) -> bool {
        match self.cfg.profile {
            Profile::Rfc => self.running.as_ref().is_none_or(|r| r.unbounded),
            Profile::Authors => self.authors.as_ref().is_none_or(|a| a.passive),
        }
    }
}

impl Default for Rledbat {
    fn default() -> Self {
        Self::new(RledbatConfig::default())
    }
}

impl ReceiveWindowControl for Rledbat {
    fn name(&self) -> &'static str {
        "rledbat"
    }

    fn on_segment_received(&mut self, rx: &ReceiverInfo, seg: &ReceivedSegment) {
        let cfg = &self.cfg;
        if cfg.profile == Profile::Authors {
            self.authors.get_or_insert_with(|| AuthorsRunning::new(cfg, rx, seg)).on_segment(seg);
            return;
        }
        self.running.get_or_insert_with(|| Running::new(cfg, rx, seg)).on_segment(seg);
    }

    fn on_segment_sent(&mut self, rx: &ReceiverInfo, tsval: Option<u32>, window: u64) {
        if let Some(a) = self.authors.as_mut() {
            a.on_sent(rx, tsval);
        }
        if let Some(r) = self.running.as_mut() {
            r.on_sent(rx, tsval, window);
        }
    }

    fn window_target(&self) -> Option<u64> {
        if let Some(a) = self.authors.as_ref() {
            return a.target();
        }
        self.running.as_ref().and_then(Running::target)
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.running.as_ref().filter(|r| !r.unbounded).and_then(|r| r.window.next_event())
    }

    fn on_timer(&mut self, rx: &ReceiverInfo) {
        if let Some(r) = self.running.as_mut().filter(|r| !r.unbounded) {
            r.window.on_timer(rx.now);
        }
    }

    fn probe(&self) -> ReceiverProbe {
        if let Some(a) = self.authors.as_ref() {
            let w = &a.window;
            return ReceiverProbe {
                rtt: w.rtt(),
                base_rtt: w.rtt_min(),
                queuing_delay: Some(w.queuing_delay()),
                state: if a.passive { "passive" } else { w.state() },
            };
        }
        let Some(r) = self.running.as_ref() else {
            return ReceiverProbe { state: "waiting", ..Default::default() };
        };
        let state = match (r.passive, r.unbounded, r.window.phase()) {
            (true, _, _) => "passive",
            (_, true, _) => "unbounded",
            (_, _, Phase::SlowStart) => "slow-start",
            (_, _, Phase::Avoidance) => "avoidance",
            (_, _, Phase::Freeze { .. }) => "freeze",
            (_, _, Phase::Ramp { .. }) => "ramp",
        };
        ReceiverProbe {
            rtt: r.current_rtt(),
            base_rtt: r.window.base_rtt(),
            queuing_delay: r.window.queuing_delay(),
            state,
        }
    }

    fn notes(&self) -> Vec<String> {
        if self.authors.as_ref().is_some_and(|a| a.passive) {
            return vec![AUTHORS_NO_TIMESTAMPS.to_string()];
        }
        match self.running.as_ref() {
            Some(r) if r.passive => vec![NO_TIMESTAMPS_OFF.to_string()],
            Some(r) if !r.timestamps => vec![NO_TIMESTAMPS_EDGE.to_string()],
            _ => Vec::new(),
        }
    }
}

/// What the summary says when the sender sent no timestamps (`no_timestamps` = "edge" / "off").
pub const NO_TIMESTAMPS_EDGE: &str = "rledbat: no TCP timestamps; RTT timed from advertised window \
     edges and sequence holes taken as losses (no_timestamps = \"edge\")";
pub const NO_TIMESTAMPS_OFF: &str =
    "rledbat: no TCP timestamps; window control given up, a plain receiver (no_timestamps = \"off\")";
pub const AUTHORS_NO_TIMESTAMPS: &str = "rledbat: no TCP timestamps; the authors' module has no RTT \
     without them, window control given up, a plain receiver (profile = \"authors\")";
