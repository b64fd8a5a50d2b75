//! LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus), a less-than-best-effort sender that keeps the
//! queueing delay near 60 ms from RTT samples, and the "enhanced" variant of the rLEDBAT paper
//! (Bagnulo et al., `shared/seeds/000_0bcdc4d0e80e9a68.txt`, cited as `Lnnn`).
//!
//! The paper's §2.1 (L75–L115), written by the draft's co-authors, is the primary text; draft
//! section numbers are -01's (the draft the paper cites, L550: §4.1 slow start, §4.2 GAIN,
//! §4.3 multiplicative decrease, §4.4 periodic slowdowns, §4.5 target), which later revisions
//! may renumber. Where the paper leaves a choice, the notes' defaults (`algorithms.md` §7,
//! marked [D] there) are followed and said so.
//!
//! * Delay (L83, eq. (1)): `q_d = RTT_c − RTT_b`, RTT-based, so no clock offset or skew
//!   matters. `RTT_b` is the minimum over the last `base_history` minutes (10 by default,
//!   L83), `RTT_c` the minimum of the last `current_filter` samples (≥ 4, L83), both kept by
//!   LEDBAT's [`DelayEstimator`](crate::ledbat::DelayEstimator); samples older than the
//!   smoothed RTT leave the current filter (RFC 6817 §2.5).
//! * Target (L81; draft §4.5): `T` = 60 ms. Enhanced (§7.1, L500, `enhanced_target = true`):
//!   `T_eff = min(T, RTT_b)`, used wherever `T` decides (slow-start exit, the AI/MD branch,
//!   `q_d/T` in the decrease), so the flow never queues more than one base
//!   RTT. GAIN keeps the nominal `T`: the paper does not say, and `T_eff` would raise GAIN on
//!   short paths, against eq. (2)'s intent (notes §7.10 [D]).
//! * GAIN (eq. (2), L89; draft §4.2): `1 / min(16, ⌈2·T / RTT_b⌉)`, recomputed on every ACK;
//!   1 above 120 ms base RTT, 1/2 at 60 ms, 1/16 below 7.5 ms (L96).
//! * Congestion avoidance (eqs. (3)–(4), L98–L104; draft §4.3), per RTT in packets:
//!   `W += GAIN` when `q_d ≤ T` (the paper's `<`, equality read as below target, [D]), and
//!   `W += max(−W/2, GAIN − C·W·(q_d/T − 1))` above it, `C` the draft's `Constant` (1). Both
//!   are spread over the ACKs of one window (byte counting): per acknowledged byte
//!   `Δcwnd = GAIN·MSS/cwnd − C·(q_d/T − 1)`, and the decrease "capped to half" (L111) holds
//!   per round: within one window of acknowledged bytes since a decrease began, the window
//!   never falls below half its value then. Worked example (notes §7.7): `W = 100`,
//!   GAIN 1/2, `q_d` = 75 ms gives about 75.5, `q_d` = 150 ms exactly 50.
//! * Slow start (L113; draft §4.1): `cwnd += GAIN · acked` per ACK, so the window grows by
//!   `(1 + GAIN)` per RTT (the paper's "multiplies by 2·GAIN" would shrink it for GAIN < 1/2;
//!   read as GAIN scaling the doubling, notes §7.6). The initial slow start ends for good
//!   once `q_d > 3/4 · T`, at ssthresh, or at the first loss. Initial window `init_cwnd` = 2
//!   segments (draft §4.1, notes §7.2).
//! * Periodic slowdowns (L115; draft §4.4), switchable with `slowdown`: the first starts 2 RTTs
//!   after the initial slow start ends; a slowdown saves the window, pins it at 2 packets for
//!   2 RTTs (the queue drains and `RTT_b` is re-measured), then slow-starts (as above) back to
//!   the saved window. The ramp has no delay exit: L358 describes it overshooting the target
//!   and the decrease following "immediately after exiting the slow start" (tinalee77 does the
//!   same). **Against the notes** (§7.6 [D], XNU's exit at `q_d > T`): the seed wins; with a
//!   second LEDBAT++ flow holding the queue at `T`, that exit would end every ramp at two
//!   packets, leaving the flow to climb back at GAIN packets per RTT (measured: two flows at
//!   20 ms base RTT then split 15.5 : 3.4 Mbps).
//!   The next slowdown comes 9 × the slowdown's duration after the ramp ends. The duration is
//!   freeze plus ramp (the draft's slowdown duration, and what keeps the cost near 10%, L123);
//!   the paper's L115 names only the ramp time `Tss` (notes §7.8 [D]). RTTs here are the
//!   smoothed RTT of the samples given. Slowdowns are timed: the adapter asks for a wake-up,
//!   so one starts even when ACKs are sparse.
//! * Loss (L79): halve, floor `min_cwnd` = 2 segments; a loss ends a slow start or a ramp
//!   (then the next slowdown is 9 × the time spent so far away); in a freeze it halves the
//!   window the ramp returns to. ECN-Echo counts as loss (not in the draft, notes §7.9 [D]);
//!   the stack runs PRR to the halved window and owns the window until the episode ends.
//! * Timeout: one segment, the initial slow start again up to half the window, slowdown
//!   schedule cleared (XNU, notes §7.9). Idle restart: slow start from the stack's restart
//!   window back towards the previous one, schedule cleared [D].
//!
//! The logic lives in [`LedbatPpWindow`], which takes RTT samples and acknowledged bytes and
//! knows nothing of the stack, so that the rLEDBAT receiver can drive it with RTTs from TCP
//! timestamps and received bytes. [`LedbatPlusPlus`] is the sender adapter.
//!
//! Public code read for contrast, not copied: tinalee77/LEDBAT-Plus-Plus `tcp_ledbatpp.c`
//! (draft -01; per-ACK decrease with a per-RTT quota of cwnd/2, the same reading as here;
//! slowdowns timed with 2·srtt; next slowdown 9 × (freeze + ramp)); ns-3 `tcp-ledbat.cc` is RFC
//! 6817 LEDBAT (OWD, additive decrease, no slowdowns).

mod window;

#[cfg(test)]
mod tests;

pub use window::{gain, LedbatPpWindow, Phase};

use crate::ledbat::{BASE_HISTORY, CURRENT_FILTER};
use crate::{
    AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, Nanos, ParamError, Params,
    PathInfo, Reaction,
};

/// `T`, the target queueing delay (L81; draft §4.5).
pub const TARGET: Nanos = 60_000_000;
/// The cap on GAIN's divisor, `min(16, ⌈2T/RTT_b⌉)` (eq. (2), L89).
pub const GAIN_DIVISOR_CAP: u64 = 16;
/// The draft's `Constant` in the multiplicative decrease (draft §4.3, recommended 1).
pub const DECREASE_CONSTANT: f64 = 1.0;
/// The initial slow start ends once `q_d` exceeds this fraction of `T` (L113).
pub const SS_EXIT_FRACTION: f64 = 0.75;
/// Window during a slowdown, in segments (L115).
pub const SLOWDOWN_CWND: u64 = 2;
/// How long a slowdown holds the window at `SLOWDOWN_CWND`, in RTTs (L115).
pub const SLOWDOWN_FREEZE_RTTS: u64 = 2;
/// The first slowdown starts this many RTTs after the initial slow start (L115).
pub const INITIAL_SLOWDOWN_RTTS: u64 = 2;
/// The next slowdown starts this many slowdown durations after one ends (L115; draft §4.4).
pub const SLOWDOWN_INTERVAL: u64 = 9;
/// Floor in segments (notes §7.2, XNU).
pub const MIN_CWND: u64 = 2;
/// Initial window in segments (draft §4.1).
pub const INIT_CWND: u64 = 2;

/// `written` value that makes the next ACK take the stack's window whatever it is.
const RESYNC: u64 = u64::MAX;

/// LEDBAT++ parameters. Scenario keys are given per field.
#[derive(Clone, Debug, PartialEq)]
pub struct LedbatPpConfig {
    /// `T`, default 60 ms. Key `target`, a duration.
    pub target: Nanos,
    /// Use `min(T, RTT_b)` as the target (paper §7), default false. Key `enhanced_target`.
    pub enhanced_target: bool,
    /// Floor in segments, default 2. Key `min_cwnd`.
    pub min_cwnd: u64,
    /// Initial window in segments, default 2; 0 keeps the stack's. Key `init_cwnd`.
    pub init_cwnd: u64,
    /// Periodic slowdowns, default on. Key `slowdown`.
    pub slowdown: bool,
    /// One-minute buckets of base-RTT history, default 10. Key `base_history`.
    pub base_history: u64,
    /// Samples in the current-RTT minimum filter, default 4. Key `current_filter`.
    pub current_filter: u64,
    /// The draft's `Constant` of the multiplicative decrease, default 1. Key `decrease_constant`.
    pub decrease_constant: f64,
}

impl Default for LedbatPpConfig {
    fn default() -> Self {
        Self {
            target: TARGET,
            enhanced_target: false,
            min_cwnd: MIN_CWND,
            init_cwnd: INIT_CWND,
            slowdown: true,
            base_history: BASE_HISTORY,
            current_filter: CURRENT_FILTER,
            decrease_constant: DECREASE_CONSTANT,
        }
    }
}

impl LedbatPpConfig {
    /// Read every supported key; the caller rejects unknown ones afterwards.
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        let d = Self::default();
        Ok(Self {
            target: p.duration("target", d.target, 100_000, 1_000_000_000)?,
            enhanced_target: p.bool("enhanced_target", d.enhanced_target)?,
            min_cwnd: p.u64_in("min_cwnd", d.min_cwnd, 1, 1000)?,
            init_cwnd: p.u64_in("init_cwnd", d.init_cwnd, 0, 1000)?,
            slowdown: p.bool("slowdown", d.slowdown)?,
            base_history: p.u64_in("base_history", d.base_history, 1, 1440)?,
            current_filter: p.u64_in("current_filter", d.current_filter, 1, 1000)?,
            decrease_constant: p.f64_in("decrease_constant", d.decrease_constant, 0.01, 100.0)?,
        })
    }
}

/// The LEDBAT++ sender ("ledbat++"): a [`LedbatPpWindow`] fed with the stack's RTT samples and
/// credited segments, its window copied into `cwnd`.
#[derive(Clone, Debug)]
pub struct LedbatPlusPlus {
    cfg: LedbatPpConfig,
    /// Created at `init` (or the first ACK), when the MSS and initial window are known.
    window: Option<LedbatPpWindow>,
    /// The cwnd last written, to notice when the stack changed it (PRR, RTO, undo);
    /// [`RESYNC`] after a congestion event.
    written: u64,
}

impl LedbatPlusPlus {
    pub fn new(cfg: LedbatPpConfig) -> Self {
        Self { cfg, window: None, written: 0 }
    }

    pub fn config(&self) -> &LedbatPpConfig {
        &self.cfg
    }

    /// The window machine, once the connection has started.
    pub fn machine(&self) -> Option<&LedbatPpWindow> {
        self.window.as_ref()
    }

    fn machine_for(&mut self, st: &CcState, path: &PathInfo) -> &mut LedbatPpWindow {
        let cfg = &self.cfg;
        self.window.get_or_insert_with(|| LedbatPpWindow::new(cfg.clone(), path.mss, st.cwnd))
    }

    /// Take the stack's window if it moved it, so the machine continues from there.
    fn sync_from(&mut self, st: &CcState, path: &PathInfo) {
        let written = self.written;
        let w = self.machine_for(st, path);
        if st.cwnd != written {
            w.set_window(st.cwnd);
        }
    }

    fn write(&mut self, st: &mut CcState) {
        if let Some(w) = &self.window {
            st.cwnd = w.window();
            st.ssthresh = w.ssthresh();
            self.written = st.cwnd;
        }
    }
}

impl Default for LedbatPlusPlus {
    fn default() -> Self {
        Self::new(LedbatPpConfig::default())
    }
}

impl CongestionControl for LedbatPlusPlus {
    fn name(&self) -> &'static str {
        "ledbat++"
    }

    fn init(&mut self, st: &mut CcState, path: &PathInfo) {
        self.window = Some(LedbatPpWindow::new(self.cfg.clone(), path.mss, st.cwnd));
        self.write(st);
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.machine_for(st, path).on_delay_sample(path.now, rtt);
        }
        // Fast recovery and CWR: PRR owns the window until the episode ends.
        if !matches!(path.state, CaState::Open | CaState::Disorder | CaState::Loss) {
            return;
        }
        self.sync_from(st, path);
        let bytes = ack.segments_acked as u64 * path.mss as u64;
        self.machine_for(st, path).on_ack(path.now, bytes, path.is_cwnd_limited);
        self.write(st);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        self.sync_from(st, path);
        let w = self.machine_for(st, path);
        let ssthresh = match ev.cause {
            // The same event as the ECN-Echo that opened the episode: no second cut.
            Cause::Loss if ev.open_episode == Some(Cause::Ecn) => {
                return Reaction::Prr { ssthresh: st.ssthresh }
            }
            Cause::Loss | Cause::Ecn => w.on_loss(path.now),
            Cause::Rto { backoffs: 0 } => {
                w.on_timeout();
                w.ssthresh()
            }
            Cause::Rto { .. } => {
                w.on_repeated_timeout();
                st.ssthresh
            }
        };
        // The stack carries the cut out (PRR, or a restart from one segment on a timeout);
        // the next ACK in the open state hands its window back to the machine.
        self.written = RESYNC;
        Reaction::Prr { ssthresh }
    }

    fn on_idle_restart(&mut self, st: &mut CcState, path: &PathInfo, _idle: Nanos) {
        self.machine_for(st, path).on_idle_restart(st.cwnd);
        self.write(st);
    }

    fn next_timer(&self) -> Option<Nanos> {
        self.window.as_ref().and_then(LedbatPpWindow::next_event)
    }

    fn on_timer(&mut self, st: &mut CcState, path: &PathInfo) {
        let open = matches!(path.state, CaState::Open | CaState::Disorder | CaState::Loss);
        if open {
            self.sync_from(st, path);
        }
        self.machine_for(st, path).on_timer(path.now);
        if open {
            self.write(st);
        }
    }
}
