//! TCP SIAD, Scalable Increase Adaptive Decrease (M. Kühlewind, Dr.-Ing. thesis, Univ.
//! Stuttgart; `shared/seeds/002_e09c17529d909204.txt`, `Lnnnn`), as the thesis's Linux 3.5.7
//! module `tcp_siad.c` (Appendix A.1, L2842–3766) and `shared/reference/siad-spec.md` specify.
//!
//! An AIMD whose step and factor are recomputed at every congestion event (L1520–1526):
//! * Adaptive Decrease: `ssthresh = RTT_min/RTT_curr · cwnd_max − 1` (Eq. 3.3, L1713–1723),
//!   `cwnd_max` = the window about one RTT ago (§6.1) — [`decrease`].
//! * Scalable Increase: `α = (incthresh − ssthresh)/Num_RTT ≥ 1` so the target is reached in
//!   Num_RTT RTTs (L1664–1673); target `incthresh = cwnd_max + trend` (L1677–1686); Fast
//!   Increase above it (α from 1, doubling per RTT, ≤ ×1.5 cwnd per RTT, L1690–1695).
//! * Additional Decrease when RTT_min is not seen again ~1 RTT after a reduction
//!   (L1731–1755) — [`additional_decrease`].
//!
//! Units follow the module: windows in packets (`cwnd / mss`), delays in integer ticks of
//! `delay_resolution` (jiffies, 1 ms). The module reads the delay as `now − TSecr` (L3115), and
//! so does this: [`AckSample::ts_echo`], whole timestamp ticks, 1 ms granularity effects
//! included (L2427). TSecr follows RFC 7323 §4.3, so with delayed ACKs it echoes the first of
//! the two segments acknowledged, and during a hole the last in-order one: not the newest
//! segment's RTT. Where the stack gives no echo but an RTT sample, the sample `r` taken at
//! `now` stands for it as `⌊now/g⌋ − ⌊(now − r)/g⌋`. Without a timestamp echo (a connection
//! without timestamps, whose samples come from sequence numbers) the module reads SRTT
//! (L3121), as here (`PathInfo::timestamps`).
//!
//! Hook mapping (spec §4):
//! * `tcp_siad_cong_avoid` runs from [`CongestionControl::on_ack`] only where Linux 3.5.7 calls
//!   it: the ACK acknowledges new data, the state is Open, Disorder or Loss (not Recovery/CWR,
//!   `tcp_may_raise_cwnd`), and not on an ECN-Echo while `cwnd ≥ ssthresh`. Its
//!   `bytes_acked = ack − prior_snd_una` covers every ACK since the last call, so the bytes of
//!   ACKs that do not reach it are accumulated.
//! * `tcp_siad_ssthresh` → [`CongestionControl::on_congestion`], returning PRR to ssthresh for
//!   loss and ECN alike (spec §8.4). Linux calls it only for a fresh reduction: a repeated RTO
//!   back-off or a loss inside an ECN CWR episode keeps ssthresh (`tcp_enter_loss`,
//!   `tcp_enter_recovery` in 3.5.7).
//! * `CA_EVENT_COMPLETE_CWR` → [`CongestionControl::on_episode_end`] for loss and ECN episodes
//!   (after an undo at the end of recovery too, as `tcp_complete_cwr` follows
//!   `tcp_try_undo_recovery`); the Loss state of an RTO ends without it in 3.5.7 (spec §8.3).
//! * `tcp_siad_undo_cwnd` → [`CongestionControl::undo_cwnd`].
//! * `CA_EVENT_CWND_RESTART` is ignored by the module, so [`CongestionControl::on_idle_restart`]
//!   keeps the default (the stack restarts cwnd from at most IW; SIAD slow-starts back).
//! * `tcp_is_cwnd_limited(in_flight)` (3.5.7): `in_flight ≥ cwnd` or `cwnd − in_flight ≤ 3`,
//!   with in_flight the packets in flight before the ACK (`ack.prior_inflight`).

pub mod additional_decrease;
pub mod config;
pub mod decrease;
#[cfg(test)]
mod tests;
pub mod variants;

pub use config::SiadConfig;
pub use variants::Variant;

use crate::{AckSample, CaState, Cause, CcState, CongestionControl, CongestionEvent, PathInfo, Reaction};
use variants::Increase;

/// Lower bound for ssthresh and for cwnd after an Additional Decrease (L2861).
pub const MIN_CWND: u64 = 2;
/// Packets subtracted after every ratio step to empty the queue completely (L1723, L2858).
pub const OFFSET: u64 = 1;
/// "Unset" delay sentinel of the module, INT_MAX (L3038–3043; spec §14 #4).
pub const UNSET: u64 = i32::MAX as u64;
/// Infinite ssthresh, in packets.
pub const INF: u64 = u64::MAX;
/// Linux 3.5.7 `tp->reordering`: a flow `≤ 3` packets short of cwnd still counts as cwnd-limited.
const CWND_LIMITED_SLACK: u64 = 3;
/// `snd_cwnd_clamp` (Linux default `~0` in u32).
const CWND_CLAMP: u64 = u32::MAX as u64;

/// cwnd and ssthresh in packets, as Linux keeps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    /// [`INF`] while slow start has no threshold.
    pub ssthresh: u64,
}

impl Window {
    fn from_state(st: &CcState, mss: u64) -> Self {
        let ssthresh = if st.ssthresh == u64::MAX { INF } else { st.ssthresh / mss };
        Window { cwnd: (st.cwnd / mss).max(1), ssthresh }
    }

    /// Writes back only what changed, so the stack's sub-packet bytes survive untouched fields.
    fn store(self, before: Window, st: &mut CcState, mss: u64) {
        if self.cwnd != before.cwnd {
            st.cwnd = self.cwnd * mss;
        }
        if self.ssthresh != before.ssthresh {
            st.ssthresh = if self.ssthresh == INF { u64::MAX } else { self.ssthresh * mss };
        }
    }
}

/// The SIAD controller ("siad"); field names follow `struct siad` (L2893–2990, spec §3.1).
#[derive(Clone, Debug)]
pub struct Siad {
    cfg: SiadConfig,
    /// Socket option `TCP_SIAD_NUM_RTT`, 0 = unset.
    config_num_rtt: u64,
    default_num_rtt: u64,
    default_num_ms: u64,
    /// `curr_num_rtt`, N.
    n: u64,
    /// α·N.
    increase: u64,
    prev_max_cwnd: u64,
    incthresh: u64,
    /// Bytes cumulatively acknowledged since the last `cong_avoid` (`ack − prior_snd_una`).
    unreported_acked: u64,
    prev_delay: u64,
    curr_delay: u64,
    min_delay: u64,
    curr_min_delay: u64,
    dec_cnt: u64,
    min_delay_seen: bool,
    increase_performed: bool,
    /// `prev_min_delay1..3` of the monotone guard (§6.2).
    prev_min_delay: [u64; 3],
    /// `snd_cwnd_cnt`, owned by the controller here.
    cwnd_cnt: u64,
    /// The MSS of the last hook, for `undo_cwnd`, which the trait calls without `PathInfo`.
    mss: u64,
}

impl Siad {
    /// A controller for a connection that starts at the usual IW of 10 packets; the stack's
    /// `init` restarts it at the real IW.
    pub fn new(cfg: SiadConfig) -> Self {
        Siad::initial(&cfg, 10, 1448)
    }

    pub fn config(&self) -> &SiadConfig {
        &self.cfg
    }

    /// `tcp_siad_init` (L2992–3057) for a connection starting at `cwnd` packets.
    fn initial(cfg: &SiadConfig, cwnd: u64, mss: u64) -> Siad {
        let n = cfg.num_rtt;
        let first_prev = if cfg.variant.first_prev_delay_is_zero() { 0 } else { UNSET };
        // Fixed_Increase keeps no N; its listing reuses the sysctl for alpha (L4541).
        Siad {
            cfg: cfg.clone(),
            config_num_rtt: 0,
            default_num_rtt: n,
            default_num_ms: cfg.num_ms_ticks(),
            n,
            increase: cwnd * n,
            prev_max_cwnd: cwnd,
            incthresh: cwnd,
            unreported_acked: 0,
            prev_delay: first_prev,
            curr_delay: 0,
            min_delay: UNSET,
            curr_min_delay: UNSET,
            dec_cnt: 0,
            min_delay_seen: true,
            increase_performed: false,
            prev_min_delay: [0; 3],
            cwnd_cnt: 0,
            mss,
        }
    }

    /// Socket option `TCP_SIAD_NUM_RTT` (L3812, L4055–4074): `n > 0` sets the connection's N,
    /// used from the next increasing ACK and at every congestion event; 0 clears it so the
    /// defaults return at the next event (the prose's reading, L1800, spec §14 #6). Not clamped,
    /// as the patch does not clamp it.
    pub fn set_num_rtt(&mut self, n: u64) {
        self.config_num_rtt = n;
    }

    /// α in whole packets per RTT, `increase / N`.
    pub fn alpha_int(&self) -> u64 {
        self.increase / self.n.max(1)
    }

    /// `incthresh`, the Linear-Increment target in packets.
    pub fn incthresh(&self) -> u64 {
        self.incthresh
    }

    /// `curr_num_rtt`, the N in force.
    pub fn num_rtt(&self) -> u64 {
        self.n
    }

    /// RTT_min and RTT_curr in delay ticks (`UNSET` / 0 before the first sample).
    pub fn delays(&self) -> (u64, u64) {
        (self.min_delay, self.curr_delay)
    }

    /// Additional Decreases taken in this epoch.
    pub fn additional_decreases(&self) -> u64 {
        self.dec_cnt
    }

    /// The ACK's delay in ticks: `now − TSecr`, else the RTT sample as a TS echo, else SRTT.
    fn delay_sample(&self, path: &PathInfo, ack: &AckSample) -> Option<u64> {
        let g = self.cfg.delay_resolution;
        // Linux 3.5.7's module reads `now − tsecr` only when the ACK echoes a timestamp.
        if let Some(echo) = ack.ts_echo.filter(|_| path.timestamps) {
            return Some(echo / g);
        }
        match (ack.rtt.filter(|_| path.timestamps), path.srtt) {
            (Some(r), _) => Some(path.now / g - path.now.saturating_sub(r) / g),
            (None, Some(srtt)) => Some(srtt / g),
            (None, None) => None,
        }
    }

    /// §5.1–5.3: outlier filter and base-delay tracking (L3109–3164).
    fn track_delay(&mut self, d: u64, w: &Window) {
        self.curr_delay = d.min(self.prev_delay);
        self.prev_delay = d;
        if self.min_delay == UNSET || d <= self.min_delay {
            self.min_delay = d;
            self.curr_min_delay = d;
            self.min_delay_seen = true;
        } else if d <= self.curr_min_delay {
            self.curr_min_delay = d;
            // Seen again after ~1 RTT of growth: the queue is empty, the base delay is real.
            if self.cfg.variant.additional_decrease()
                && w.cwnd > w.ssthresh.saturating_add(self.alpha_int() + 1)
            {
                self.min_delay = d;
                self.min_delay_seen = true;
            }
        }
    }

    /// `tcp_siad_cong_avoid` (spec §5) on one ACK, in packets.
    pub(crate) fn cong_avoid(
        &mut self,
        w: &mut Window,
        delay: Option<u64>,
        bytes_acked: u64,
        mss: u64,
        cwnd_limited: bool,
    ) {
        if let (Some(d), true) = (delay, self.cfg.variant.tracks_delay()) {
            self.track_delay(d, w);
        }
        // §5.4: no Additional Decrease in Fast Increase or slow start.
        if w.cwnd > self.incthresh || w.cwnd < w.ssthresh {
            self.min_delay_seen = true;
        }
        if !cwnd_limited {
            return;
        }
        if self.additional_decrease_due(w) {
            self.additional_decrease(w);
            return;
        }
        match self.cfg.variant.increase() {
            Increase::Siad { fast_increase } => self.siad_increase(w, bytes_acked, mss, fast_increase),
            _ => self.stock_increase(w),
        }
    }

    /// §5.8 (L3344–3463): `cwnd += α/cwnd` per acknowledged packet, with the phase rules.
    fn siad_increase(&mut self, w: &mut Window, bytes_acked: u64, mss: u64, fast_increase: bool) {
        if self.config_num_rtt != 0 && self.config_num_rtt != self.n {
            self.n = self.config_num_rtt;
        }
        let n = self.n;
        // Delayed-ACK compensation: count packets, not ACKs (L1956–1976).
        let acked_pkts = bytes_acked.div_ceil(mss).max(1);
        self.cwnd_cnt += acked_pkts;
        let next = (w.cwnd * n / self.increase.max(1)).max(1);
        if self.cwnd_cnt < next {
            return;
        }
        let k = self.cwnd_cnt / next;
        if w.cwnd < CWND_CLAMP {
            let inc = acked_pkts.min(k).min(CWND_CLAMP - w.cwnd);
            let old = w.cwnd;
            w.cwnd += inc;
            self.increase_performed = true;
            let crossed_ss = w.cwnd >= w.ssthresh && old < w.ssthresh;
            let crossed_it = w.cwnd >= self.incthresh && old < self.incthresh;
            if crossed_ss && self.incthresh > w.ssthresh {
                // (a) slow start → Linear Increment towards the target.
                self.increase = n.max(self.incthresh - w.ssthresh);
            } else if (crossed_ss && self.incthresh <= w.ssthresh) || (fast_increase && crossed_it) {
                // (b) α := 1 (no target, or target reached: Fast Increase starts).
                self.increase = n;
            } else if fast_increase && w.cwnd > self.incthresh && self.increase < (w.cwnd / 2) * n {
                // (c) Fast Increase: α grows by the packets added, doubling per RTT, ≤ cwnd/2.
                self.increase += inc * n;
            } else if w.cwnd < w.ssthresh {
                // (d) slow start: α = cwnd.
                self.increase = w.cwnd * n;
            }
        }
        self.cwnd_cnt -= k * next;
    }

    /// `tcp_siad_cwnd_event(CA_EVENT_COMPLETE_CWR)` (L3064–3083): a new epoch starts.
    fn recovery_complete(&mut self) {
        self.unreported_acked = 0;
        self.curr_min_delay = UNSET;
        self.dec_cnt = 0;
        self.min_delay_seen = false;
        self.increase_performed = false;
    }
}

impl Default for Siad {
    fn default() -> Self {
        Self::new(SiadConfig::default())
    }
}

/// Linux 3.5.7 calls `cong_avoid` only on ACKs of new data outside Recovery/CWR, and not on
/// an ECN-Echo unless in slow start (`tcp_may_raise_cwnd`).
fn cong_avoid_runs(st: &CcState, path: &PathInfo, ack: &AckSample) -> bool {
    matches!(path.state, CaState::Open | CaState::Disorder | CaState::Loss)
        && ack.acked > 0
        && (!ack.ece || st.in_slow_start())
}

impl CongestionControl for Siad {
    fn name(&self) -> &'static str {
        "siad"
    }

    fn init(&mut self, st: &mut CcState, path: &PathInfo) {
        let mss = path.mss as u64;
        *self = Siad::initial(&self.cfg, (st.cwnd / mss).max(1), mss);
    }

    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample) {
        self.unreported_acked += ack.acked;
        if !cong_avoid_runs(st, path, ack) {
            return;
        }
        let mss = path.mss as u64;
        self.mss = mss;
        let before = Window::from_state(st, mss);
        let mut w = before;
        let in_flight = ack.prior_inflight.div_ceil(mss);
        let cwnd_limited = in_flight >= w.cwnd || w.cwnd - in_flight <= CWND_LIMITED_SLACK;
        let bytes = std::mem::take(&mut self.unreported_acked);
        let delay = self.delay_sample(path, ack);
        self.cong_avoid(&mut w, delay, bytes, mss, cwnd_limited);
        w.store(before, st, mss);
    }

    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction {
        let keep = Reaction::Prr { ssthresh: st.ssthresh };
        match (ev.cause, ev.open_episode) {
            (Cause::Rto { backoffs }, _) if backoffs > 0 => return keep,
            (Cause::Loss, Some(Cause::Ecn)) => return keep,
            _ => {}
        }
        let mss = path.mss as u64;
        self.mss = mss;
        let ssthresh = self.variant_ssthresh(&Window::from_state(st, mss));
        Reaction::Prr { ssthresh: ssthresh * mss }
    }

    fn on_episode_end(&mut self, _st: &mut CcState, _path: &PathInfo, cause: Cause) {
        if matches!(cause, Cause::Loss | Cause::Ecn) {
            self.recovery_complete();
        }
    }

    /// `tcp_siad_undo_cwnd` (L3708–3722): back to the spurious event's target, whose cwnd_max
    /// becomes the target; no Additional Decrease this epoch. `increase` is not restored.
    fn undo_cwnd(&mut self, _st: &CcState, _prior_cwnd: u64) -> u64 {
        let restore = self.incthresh;
        self.incthresh = self.prev_max_cwnd;
        self.min_delay_seen = true;
        restore.saturating_mul(self.mss)
    }
}
