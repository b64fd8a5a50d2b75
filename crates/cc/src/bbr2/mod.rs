//! BBRv2 as Linux `net/ipv4/tcp_bbr2.c` of the `google/bbr` v2alpha branch (the code wins over
//! the notes for `"bbr2"`; notes `algorithms.md` §10.2 describe v3 where they differ). Windows
//! are in bytes, rates in bytes per second; constants keep the C names. The state machine is
//! [`crate::bbr_engine`], shared with [`crate::bbr3`]: this module holds v2alpha's parameters
//! ([`Bbr2Config`]) and the engine follows v2alpha's code where v3 changed it.
//!
//! * Model: `max_bw` = max delivery rate over the last one or two ProbeBW cycles
//!   (`bbr2_advance_max_bw_filter`), `min_rtt` over 10 s fed by a 5 s `probe_rtt_min`
//!   filter (`bbr_engine::modes`), rounds counted as BBRv1 does ([`crate::bbr::model::Rounds`]).
//! * Bounds (`bbr_engine::bounds`): the long-term `inflight_hi` (set when a bandwidth probe sees more
//!   than 2 % loss, `bbr_loss_thresh`, or, with ECN, ≥ 50 % CE, `bbr_ecn_thresh`) and the
//!   short-term `bw_lo` / `inflight_lo`, cut to 0.7 of themselves (`bbr_beta` = 30 % cut)
//!   in every round with loss outside probing. `bw = min(max_bw, bw_lo, bw_hi)`.
//! * ProbeBW (`bbr_engine::probe`): DOWN (0.75) → CRUISE (1.0, in flight ≤ 0.85·`inflight_hi`) →
//!   REFILL (1.0, one round) → UP (1.25) → DOWN. A probe starts after 2–3 s of wall clock or
//!   `min(63, BDP in packets)` rounds, whichever comes first (Reno coexistence).
//! * Startup 2.885 (`bbr_high_gain`, v2alpha keeps v1's), exit on a full pipe or on high loss
//!   (`bbr_full_loss_cnt` = 8 loss events in a Recovery round with > 2 % loss); Drain
//!   1/2.885 (`bbr_drain_gain`); ProbeRTT every 5 s (`bbr_probe_rtt_win_ms`) at
//!   `0.5·BDP` (`bbr_probe_rtt_cwnd_gain`) for `max(200 ms, 1 round)`.
//! * `cwnd = min(cwnd_gain·BDP (+ quantization), inflight_hi or its headroom level,
//!   inflight_lo)`; cwnd_gain 2. Loss gets no PRR: [`Reaction::SelfManaged`], as
//!   `cong_control` bypasses it in Linux. RTO: `cwnd = inflight + 1 segment`
//!   (`tcp_enter_loss`), the pre-RTO window restored when the Loss state ends
//!   (`bbr2_set_state`).
//! * ECN (param `ecn`, default off as `bbr_ecn_enable = false`): DCTCP-style `ecn_alpha`
//!   (gain 1/16) cuts `inflight_lo`/`bw_lo` by `alpha/3` per marked round, a probe round with
//!   ≥ 50 % CE bytes counts as too high, two such Startup rounds end Startup; only on paths
//!   with `min_rtt ≤ ecn_max_rtt` (5 ms). The stack gives RFC 3168 ECE, not per-packet CE
//!   counts: an ACK with ECE counts the bytes it delivers as CE (exact with a DCTCP-style
//!   receiver, an over-estimate with RFC 3168 latching); `ce_delta` is used when the stack
//!   provides it.
//! * ACK aggregation (params `extra_acked*`, on by default): the cwnd target is
//!   `cwnd_gain · BDP + min(gain · extra_acked, bw · 100 ms)` before the quantization budget,
//!   with v2alpha's `bbr_update_ack_aggregation` / `bbr_ack_aggregation_cwnd` (shared
//!   estimator in [`crate::bbr::aggregation`]); v2 differs from v1 in using the bounded
//!   `bw` (`bbr_bw`: max_bw, bw_lo, bw_hi) and, with `bbr_extra_acked_in_startup`, in
//!   applying the allowance in Startup too, where the maximum's slots last 1 round instead of
//!   5 (`extra_acked_rounds`).
//! * Omitted, as in our BBRv1: the app-limited fast path (a CPU saving), marking ProbeRTT
//!   app-limited (the stack owns the mark), `ecn_reprobe_gain` and `refill_add_inc` (both 0
//!   upstream; the engine's `loss_in_cycle`/`ecn_in_cycle` flags serve v3's re-probe), and EDT
//!   pacing (nothing waits in a pacing queue here, so `bbr_packets_in_net_at_edt` is in
//!   flight plus one send quantum when probing up).
//! * Where the notes (§10.2, v3 values) differ, the v2alpha code wins: `bbr_beta` is a 30 %
//!   cut (our `beta` = 0.7 is what remains, as CUBIC's beta), Startup 2.885 not 2.77, DOWN
//!   0.75 not 0.9, Drain 1/2.885, cwnd gain 2 in UP too (v3: 2.25), `bbr_full_loss_cnt` 8.
//!   The notes ask for the simulation RNG for the probe wait; controllers have none here.
//! * Random draws (`bbr2_pick_probe_wait`) come from the connection clock, as BBRv1's
//!   `cycle_start` does: the wait is `bw_probe_base + (now in µs mod bw_probe_rand)` and the
//!   round offset `now in ms mod bw_probe_rand_rounds`, taken when the DOWN phase starts.

mod config;
#[cfg(test)]
mod tests;

use crate::bbr_engine::Engine;
pub use crate::bbr_engine::{AckPhase, EcnState, Mode, Phase};
#[cfg(doc)]
use crate::Reaction;
pub use config::Bbr2Config;

/// BBRv2: the shared engine with v2alpha's parameters and code.
pub type Bbr2 = Engine<Bbr2Config>;
