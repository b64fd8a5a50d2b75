//! The tail loss probe, the TLP half of RACK-TLP (RFC 8985 §7; Linux
//! `tcp_schedule_loss_probe`, `tcp_send_loss_probe`, `tcp_process_tlp_ack`): when the ACKs stop
//! while data is outstanding, send one segment after about two round trips instead of waiting
//! for the RTO, so that the ACK it draws lets RACK find a loss at the tail.

use super::Nanos;

/// Linux `TCP_TIMEOUT_MIN` at HZ = 1000: the allowance added to 2·SRTT with several segments
/// in flight.
const PROBE_SLACK: Nanos = 2_000_000;
/// Linux `TCP_TIMEOUT_INIT`: the probe timeout before any RTT sample.
const PROBE_WITHOUT_RTT: Nanos = 1_000_000_000;

/// Linux's probe timeout: 2·SRTT, plus the minimum RTO when a lone segment may wait for a
/// delayed ACK, else plus the timer allowance; capped by the caller at the RTO.
pub(super) fn probe_timeout(srtt: Option<Nanos>, segments_out: usize, rto_min: Nanos) -> Nanos {
    match srtt {
        Some(srtt) if segments_out == 1 => 2 * srtt + rto_min,
        Some(srtt) => 2 * srtt + PROBE_SLACK,
        None => PROBE_WITHOUT_RTT,
    }
}

/// What the ACK after a probe means (Linux `tcp_process_tlp_ack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProbeOutcome {
    /// Nothing decided yet, or no probe outstanding.
    Pending,
    /// The probe was new data, or it and the original both arrived: no loss.
    NoLoss,
    /// The probe repaired a loss at the tail: reduce the window once, at once.
    Loss,
}

#[derive(Default)]
pub(super) struct Tlp {
    /// `snd_nxt` when the probe went out; at most one probe is outstanding (`tlp_high_seq`).
    high_seq: Option<u64>,
    /// The probe was a retransmission (`tlp_retrans`).
    retransmitted: bool,
}

impl Tlp {
    pub fn outstanding(&self) -> bool {
        self.high_seq.is_some()
    }

    pub fn on_probe_sent(&mut self, snd_nxt: u64, retransmitted: bool) {
        self.high_seq = Some(snd_nxt);
        self.retransmitted = retransmitted;
    }

    /// A reduction began: the probe's episode is covered by it (`tcp_init_cwnd_reduction`).
    pub fn forget(&mut self) {
        self.high_seq = None;
    }

    /// `ack` is the cumulative ACK; `dsack` whether it reports a duplicate; `pure_dupack` an
    /// ACK that neither advances snd_una nor SACKs new data.
    pub fn on_ack(&mut self, ack: u64, dsack: bool, pure_dupack: bool) -> ProbeOutcome {
        let Some(high) = self.high_seq else {
            return ProbeOutcome::Pending;
        };
        if ack < high {
            return ProbeOutcome::Pending;
        }
        let outcome = if !self.retransmitted || dsack {
            ProbeOutcome::NoLoss
        } else if ack > high {
            ProbeOutcome::Loss
        } else if pure_dupack {
            ProbeOutcome::NoLoss
        } else {
            return ProbeOutcome::Pending;
        };
        self.high_seq = None;
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn probe_timeout_is_two_srtt_plus_linux_allowances() {
        assert_eq!(probe_timeout(Some(100 * MS), 5, 200 * MS), 202 * MS);
        assert_eq!(
            probe_timeout(Some(100 * MS), 1, 200 * MS),
            400 * MS,
            "a lone segment waits for a delayed ACK"
        );
        assert_eq!(probe_timeout(None, 5, 200 * MS), 1000 * MS);
    }

    /// Every branch of `tcp_process_tlp_ack`, for a probe sent at snd_nxt = 10.
    #[test]
    fn the_ack_after_a_probe() {
        use ProbeOutcome::*;
        // (retransmitted, ack, dsack, pure dupack) → outcome
        let cases = [
            (false, 10, false, false, NoLoss),
            (false, 9, false, false, Pending),
            (true, 9, false, true, Pending),
            (true, 10, true, false, NoLoss),
            (true, 11, false, false, Loss),
            (true, 11, true, false, NoLoss),
            (true, 10, false, true, NoLoss),
            (true, 10, false, false, Pending),
        ];
        for (retransmitted, ack, dsack, dupack, expect) in cases {
            let mut t = Tlp::default();
            t.on_probe_sent(10, retransmitted);
            let case = format!("retransmitted {retransmitted} ack {ack} dsack {dsack} dupack {dupack}");
            assert_eq!(t.on_ack(ack, dsack, dupack), expect, "{case}");
            assert_eq!(t.outstanding(), expect == Pending, "{case}");
        }
        assert_eq!(Tlp::default().on_ack(100, false, false), Pending, "no probe");
    }
}
