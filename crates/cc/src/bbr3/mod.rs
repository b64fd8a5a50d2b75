//! BBRv3 as Linux `net/ipv4/tcp_bbr.c` of the `google/bbr` v3 branch (`BBR_VERSION 3`, file
//! at commit `001a430b`), checked against draft-ietf-ccwg-bbr (editor's copy of 3 Aug 2026,
//! `4ce5e87`, after -06). Where the draft and the code disagree the code wins, listed below.
//! Windows are in bytes, rates in bytes per second; functions keep the C names. BBRv3 is our
//! [`crate::bbr2`] (v2alpha) with the changes listed here; both run one state machine,
//! [`crate::bbr_engine`], which follows v3's code where it differs: this module holds v3's
//! parameters ([`Bbr3Config`]).
//!
//! # State machine
//! ```text
//!   Startup (pacing 2.77, cwnd 2) --full pipe: 3 rounds < +25 %, or 6 loss events and
//!      |                             > 2 % loss in a Recovery round, or 2 rounds ≥ 50 % CE
//!      v
//!   Drain (1/2.885, cwnd 2) --in flight ≤ BDP--> ProbeBW:
//!      DOWN (0.91) --in flight ≤ min(BDP, 0.85·inflight_hi)--> CRUISE (1.0)
//!      CRUISE / DOWN --2-3 s, or min(63, BDP pkts) rounds, or CE without loss--> REFILL (1.0,
//!        1 round, lower bounds lifted) --> UP (1.25, cwnd 2.25) --plateau, > 2 % loss,
//!        > 50 % CE, or in flight back at a too-high inflight_hi--> DOWN
//!   any --5 s without a lower RTT--> ProbeRTT (cwnd 0.5·BDP, ≥ 200 ms and a round) -->
//!      ProbeBW CRUISE if the pipe was full, else Startup
//! ```
//!
//! # Differences from our bbr2 (v2alpha `tcp_bbr2.c`), each with its v3 function
//! * Gains (`bbr_update_gains`, constants at the top): Startup pacing 2.77
//!   (`bbr_startup_pacing_gain`, v2 2.885) with cwnd gain 2 (`bbr_startup_cwnd_gain`, v2
//!   2.885), Drain cwnd gain 2; DOWN 0.91 (`bbr_pacing_gain[]`, v2 0.75); cwnd gain 2.25 in
//!   UP (`bbr_bw_probe_cwnd_gain` = 1/4 added).
//! * Model: the max filter is `bw_hi[2]` and `bbr_bw = min(max_bw, bw_lo)`; v2alpha's separate
//!   `bw_hi` bound, `got_ok_bw_probe_sample` and the ECN cut of `bw_hi` are gone.
//! * Full pipe (`bbr_check_full_bw_reached`): uses each sample's rate (not the max filter),
//!   any non-app-limited sample ≥ 1.25·`full_bw` restarts the count on any ACK, a count needs
//!   a round start; it also runs after Startup, as `full_bw_now`, to end UP.
//! * UP ends (`bbr_update_cycle_phase`) on a plateau (`full_bw_now`, detector restarted in
//!   `bbr_start_bw_probe_up` and whenever cwnd-limited at `inflight_hi`), not v2's "a min RTT
//!   at 1.25·BDP" (`bw_probe_pif_gain` is gone).
//! * Startup exit on loss (`bbr_check_loss_too_high_in_startup`): 6 loss events
//!   (`bbr_full_loss_cnt`, v2 8); `bbr_handle_queue_too_high_in_startup` sets `inflight_hi =
//!   max(BDP, inflight_latest)` (v2: BDP).
//! * Probe spacing (`bbr_is_reno_coexistence_probe_time`): `min(63, target in packets)`
//!   rounds; v2's `bw_probe_reno_gain` is gone.
//! * ECN (`bbr_update_ecn_alpha`, `bbr_adapt_lower_bounds`, `bbr_check_time_to_probe_bw`): the
//!   alpha EWMA only moves once ECN-eligible (min RTT ≤ 5 ms); a marked round cuts
//!   `inflight_lo` alone to `1 − alpha/3` (v2 also cut `bw_lo`); a sample is too high with
//!   CE > 50 % (strict); and, new in v3, `bbr_ecn_reprobe_gain` = 1/2: CE marks in a cycle
//!   without loss, in CA state Open, send DOWN/CRUISE straight to REFILL, UP starting its
//!   growth at `2^floor(log2(inflight_hi/2))` packets. On by default (`ecn`), see below.
//! * Lower bounds: `bw_lo` floored at 1 B/s (`max(1U, bw_lo)`); `bbr_update_latest_delivery_signals`
//!   / `bbr_advance_latest_delivery_signals` split v2's update (same values);
//!   `loss_in_cycle` / `ecn_in_cycle` kept for the re-probe.
//! * `bbr_update_min_rtt`: `probe_rtt_min` takes only a strictly lower RTT (v2 `<=`).
//! * ACK aggregation: always applied, 1-round slots until the pipe is full (v2's
//!   `extra_acked_in_startup` flag is gone).
//! * `bbr_tso_segs_generic`: at least `tcp_min_tso_segs` = 2 segments at any rate.
//! * RTO (`bbr_set_state`): `inflight_lo = max(cwnd, prior_cwnd)` outside probing and the full
//!   bandwidth detector reset; undo (`bbr_undo_cwnd`) also resets it.
//!
//! # Parameters (key, default, source in `tcp_bbr.c`)
//! | key | default | source |
//! |---|---|---|
//! | `startup_pacing_gain` | 2.77 | `bbr_startup_pacing_gain` (277/100 + 1/256) |
//! | `startup_cwnd_gain` | 2 | `bbr_startup_cwnd_gain` |
//! | `drain_gain` | 1/2.885 | `bbr_drain_gain` |
//! | `cwnd_gain` | 2 | `bbr_cwnd_gain` |
//! | `bw_probe_cwnd_gain` | 0.25 | `bbr_bw_probe_cwnd_gain` (1 × 1/4) |
//! | `probe_up_gain`, `probe_down_gain` | 1.25, 0.91 | `bbr_pacing_gain[]` |
//! | `beta` | 0.7 | `bbr_beta` (a 30 % cut) |
//! | `loss_thresh` | 0.02 | `bbr_loss_thresh` |
//! | `inflight_headroom` | 0.15 | `bbr_inflight_headroom` |
//! | `bw_probe_max_rounds`, `bw_probe_rand_rounds` | 63, 2 | same names |
//! | `bw_probe_base`, `bw_probe_rand` | 2 s, 1 s | `bbr_bw_probe_base_us`, `_rand_us` |
//! | `full_loss_cnt`, `full_ecn_cnt` | 6, 2 | same names |
//! | `min_rtt_window` | 10 s | `bbr_min_rtt_win_sec` |
//! | `probe_rtt_window`, `probe_rtt_time` | 5 s, 200 ms | `bbr_probe_rtt_win_ms`, `_mode_ms` |
//! | `probe_rtt_cwnd_gain` | 0.5 | `bbr_probe_rtt_cwnd_gain` |
//! | `pacing_margin` | 0.01 | `bbr_pacing_margin_percent` |
//! | `ecn` | true | stands for `TCP_ECN_LOW` in `bbr_can_use_ecn` |
//! | `ecn_thresh`, `ecn_factor`, `ecn_alpha_gain` | 0.5, 1/3, 1/16 | same names |
//! | `ecn_max_rtt` | 5 ms | `bbr_ecn_max_rtt_us` |
//! | `ecn_reprobe_gain` | 0.5 | `bbr_ecn_reprobe_gain` |
//! | `extra_acked`, `extra_acked_gain` | true, 1 | `bbr_extra_acked_gain` |
//! | `extra_acked_rounds`, `extra_acked_max` | 5, 100 ms | `bbr_extra_acked_win_rtts`, `_max_us` |
//!
//! Keys as bbr2's where they mean the same. Differing: bbr2's `high_gain` is split into
//! `startup_pacing_gain` and `startup_cwnd_gain`; new `bw_probe_cwnd_gain`, `probe_up_gain`,
//! `probe_down_gain`, `full_ecn_cnt`, `ecn_reprobe_gain`; bbr2's `bw_probe_pif_gain`,
//! `bw_probe_reno_gain` and `extra_acked_in_startup` do not exist (unknown keys); `ecn`
//! defaults to true (bbr2: false).
//!
//! # Draft versus code (the code is followed)
//! * Drain pacing gain: draft 0.5 (`BBR.DrainPacingGain`), code 1/2.885.
//! * DOWN pacing gain: draft 0.90, code 0.91.
//! * Drain exit: the draft also leaves Drain after 3 rounds (`drain_start_round`, test case
//!   "Exiting DRAIN Based on Time"); the code waits for in flight ≤ BDP only.
//! * `ExtraAckedFilterLen`: draft 10 rounds, code 5 (1 in Startup).
//! * `CheckFullBWReached`: the draft compares only at round starts; the code restarts the
//!   count on any ACK whose sample is 25 % above the baseline.
//! * ECN: the draft specifies no ECN response (§ "ECN"); the code has the DCTCP-style one
//!   above, gated on a ≤ 5 ms min RTT.
//! * Startup loss exit: the draft also sets `full_bw_now`; the code sets `full_bw_reached`.
//!
//! # Notes (`l4s-bbrv3.md`) versus code
//! All the notes' numbers match the code (2.77, 2, ≈0.35 vs draft 0.5, 0.91 vs 0.90, 0.7 /
//! 2 % / 15 %, 5 s / 200 ms / 0.5, 2–3 s or 63 rounds, 6 loss events, α 1/16, 1/3, 50 %,
//! ≤ 5 ms, 10 vs 5 rounds). Missing from them: the ECN re-probe (`ecn_reprobe_gain` 1/2), the
//! 2.25 UP cwnd gain, and that UP now ends on a bandwidth plateau.
//!
//! # What the stack must give
//! Per-ACK delivery-rate samples (`rate`: delivered, interval, prior_delivered,
//! `tx_in_flight`, lost, app-limited), `newly_lost`, `prior_inflight`, RTT samples, and per
//! lost packet its send stamps ([`LossInfo`]); `PathInfo::is_cwnd_limited` and CA state
//! (Recovery for the Startup loss exit, Open for the ECN re-probe). ECN only when the flow
//! negotiates it ([`EcnUse::Optional`]): CE bytes are read from `ce_bytes` (AccECN byte
//! counters), else `ce_delta` × MSS (ACE packet count), else every byte of an ACK with ECE
//! (RFC 3168; exact with a DCTCP-style receiver, an over-estimate with latching ECE). The
//! stack keeps pacing at `pacing_rate`. Loss gets no PRR ([`Reaction::SelfManaged`]).
//!
//! # Deliberate differences
//! * Omitted: the app-limited fast path (a CPU saving), PLB (flow-label rehash), TLP loss
//!   recovery (`bbr_run_loss_probe_recovery`; the stack reports no TLP), `is_ack_delayed`
//!   (no such flag: any sample refreshes an expired `probe_rtt_min`), marking ProbeRTT
//!   app-limited (the stack owns the mark), EDT pacing (`bbr_packets_in_net_at_edt` is in
//!   flight plus one send quantum when the gain is above 1), `bbr_precise_ece_ack` (receiver
//!   side).
//! * Random draws (`get_random_u32_below`) come from the connection clock, as in our bbr2:
//!   the wait is `bw_probe_base + (now in µs mod bw_probe_rand)`, the round offset
//!   `now in ms mod bw_probe_rand_rounds`.
//! * Fixed-point gains become floats (2.77 rather than 710/256 = 2.7734; 0.91 rather than
//!   232/256 = 0.906); counts are bytes where Linux counts packets.

mod config;
#[cfg(test)]
mod tests;

use crate::bbr_engine::Engine;
pub use crate::bbr_engine::{AckPhase, EcnState, Mode, Phase};
#[cfg(doc)]
use crate::{EcnUse, LossInfo, Reaction};
pub use config::{Bbr3Config, STARTUP_PACING_GAIN};

/// BBRv3: the shared engine with v3's parameters and code.
pub type Bbr3 = Engine<Bbr3Config>;
