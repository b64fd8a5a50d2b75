//! Accurate ECN feedback (AccECN, RFC 9768): the receiver counts CE-marked packets and bytes and
//! every ACK carries the counts, so the sender learns of each mark rather than RFC 3168's one
//! ECE per round trip. What a scalable controller (DCTCP, Prague) needs to size its response.
//!
//! Modelled: the ACE field (RFC 9768 §3.2.2: the CE packet counter `r.cep` modulo 8 in the
//! AE, CWR and ECE header bits, starting at 5, §3.2.2.1) and the AccECN option's CE byte counter
//! (§3.2.3: `r.ceb`, 24 bits), present on every ACK here (Linux's default `tcp_ecn_option = 2`
//! sends it whenever a counter changed; ours never changes in between, so this is the same
//! information). Not modelled: the ECT(0) and ECT(1) byte counters (nothing here reads them),
//! option-stripping middleboxes and the zeroed-ACE fallback (no middlebox in the simulator).
//!
//! Negotiation (§3.1): an AccECN SYN sets AE, CWR and ECE ([`SYN_REQUEST`]); a SYN-ACK that
//! answers with a non-zero ACE other than RFC 3168's ECE-only reply accepts it; anything else
//! falls back to classic ECN (§3.1.2) or none.

/// The ACE field of an AccECN SYN: AE, CWR and ECE all set (RFC 9768 §3.1.1, Table 1).
pub const SYN_REQUEST: u8 = 0b111;
/// The ACE field of the SYN-ACK accepting AccECN for a Not-ECT SYN: AE = 0, CWR = 1, ECE = 0
/// (RFC 9768 §3.1.1, Table 2).
pub const SYN_ACK_ACCEPT: u8 = 0b010;
/// Where both counters of packets start, so a path that zeroes the field shows (§3.2.2.1).
const CEP_INITIAL: u32 = 5;
/// The byte counter's width in the option (§3.2.3: 24 bits).
const CEB_MASK: u32 = (1 << 24) - 1;

/// Whether a SYN-ACK's ACE field accepts AccECN: anything but 0 (no ECN) and RFC 3168's
/// ECE-only reply `0b001` (§3.1.2: the classic fallback).
pub fn accepts(syn_ack_ace: u8) -> bool {
    !matches!(syn_ack_ace & 0b111, 0b000 | 0b001)
}

/// The data receiver's counters (RFC 9768 §3.2.1).
#[derive(Clone, Copy, Debug)]
pub struct Counters {
    /// CE-marked packets received (`r.cep`).
    cep: u32,
    /// Payload bytes of CE-marked packets received (`r.ceb`).
    ceb: u32,
}

impl Default for Counters {
    fn default() -> Self {
        Counters { cep: CEP_INITIAL, ceb: 0 }
    }
}

impl Counters {
    /// A data segment of `len` payload bytes arrived, CE-marked or not.
    pub fn on_segment(&mut self, ce: bool, len: u32) {
        if ce {
            self.cep = self.cep.wrapping_add(1);
            self.ceb = self.ceb.wrapping_add(len);
        }
    }

    /// What an ACK carries: the ACE field and the option's CE byte counter.
    pub fn echo(&self) -> (u8, u32) {
        ((self.cep & 0b111) as u8, self.ceb & CEB_MASK)
    }
}

/// The data sender's view of the receiver's counters (RFC 9768 §3.2.2.3, `s.cep`, `s.ceb`).
#[derive(Clone, Copy, Debug)]
pub struct Feedback {
    cep: u32,
    ceb: u32,
}

impl Default for Feedback {
    fn default() -> Self {
        Feedback { cep: CEP_INITIAL, ceb: 0 }
    }
}

/// New marks one ACK reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewMarks {
    pub packets: u32,
    pub bytes: u64,
}

impl Feedback {
    /// An ACK arrived with `ace` and `ceb`, newly acknowledging `acked_packets` segments of at
    /// most `mss` bytes. The ACE field wraps after 8 marks: when the ACK covers 8 packets or
    /// more it may have, and the byte counter (which wraps only after 16 MB) settles how many
    /// times (§3.2.2.5.1 suggests using the byte counters so; Linux `tcp_accecn_process` does).
    pub fn on_ack(&mut self, ace: u8, ceb: u32, acked_packets: u64, mss: u32) -> NewMarks {
        let d_ace = (u32::from(ace).wrapping_sub(self.cep)) & 0b111;
        let d_ceb = ceb.wrapping_sub(self.ceb) & CEB_MASK;
        self.ceb = ceb;
        let packets = if acked_packets >= 8 { unwrap_ace(d_ace, d_ceb, mss) } else { d_ace };
        self.cep = self.cep.wrapping_add(packets);
        NewMarks { packets, bytes: d_ceb as u64 }
    }
}

/// The count of new CE packets whose last three bits are `d_ace`, closest to what `d_ceb`
/// bytes of full-size segments make.
fn unwrap_ace(d_ace: u32, d_ceb: u32, mss: u32) -> u32 {
    let from_bytes = d_ceb.div_ceil(mss.max(1));
    let wraps = (from_bytes.saturating_sub(d_ace) + 4) / 8;
    d_ace + 8 * wraps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_receiver_counts_ce_packets_and_bytes_from_five() {
        let mut c = Counters::default();
        assert_eq!(c.echo(), (5, 0), "r.cep starts at 5 (RFC 9768 §3.2.2.1)");
        c.on_segment(false, 1448);
        c.on_segment(true, 1448);
        c.on_segment(true, 1000);
        // 5 + 2 = 7; 1448 + 1000 = 2448 bytes.
        assert_eq!(c.echo(), (7, 2448));
        c.on_segment(true, 1448);
        // 8 mod 8 = 0: the ACE field wraps.
        assert_eq!(c.echo(), (0, 3896));
    }

    #[test]
    fn the_sender_reads_the_difference_modulo_eight() {
        let mut f = Feedback::default();
        assert_eq!(f.on_ack(5, 0, 2, 1448), NewMarks { packets: 0, bytes: 0 });
        // ACE 7 after 5: two new marks; 2448 new CE bytes.
        assert_eq!(f.on_ack(7, 2448, 2, 1448), NewMarks { packets: 2, bytes: 2448 });
        // ACE 1 after 7: (1 − 7) mod 8 = 2 more.
        assert_eq!(f.on_ack(1, 2448 + 2896, 2, 1448), NewMarks { packets: 2, bytes: 2896 });
    }

    #[test]
    fn a_wrapped_ace_is_unwrapped_by_the_byte_counter() {
        let mut f = Feedback::default();
        // An ACK covering 12 segments, 10 of them CE (10 × 1448 = 14 480 bytes): ACE moved
        // from 5 to 15 mod 8 = 7, a difference of 2; the bytes make 10, so one wrap.
        let m = f.on_ack(7, 14_480, 12, 1448);
        assert_eq!(m, NewMarks { packets: 10, bytes: 14_480 });
        // Covering fewer than 8 packets the field cannot have wrapped: the bytes are not asked.
        let m = f.on_ack(0, 14_480 + 1448, 1, 1448);
        assert_eq!(m.packets, 1);
    }

    #[test]
    fn the_byte_counter_wraps_at_24_bits() {
        let mut f = Feedback::default();
        f.on_ack(5, CEB_MASK - 99, 1, 1448);
        // 100 bytes take the counter from 2^24 − 100 to 0.
        assert_eq!(f.on_ack(6, 0, 1, 1448), NewMarks { packets: 1, bytes: 100 });
    }

    #[test]
    fn negotiation_falls_back_on_a_classic_reply() {
        assert!(accepts(SYN_ACK_ACCEPT));
        assert!(!accepts(0b001), "RFC 3168's ECE-only SYN-ACK: classic ECN");
        assert!(!accepts(0), "no ECN at all");
    }
}
