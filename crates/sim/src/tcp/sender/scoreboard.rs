//! The retransmission queue and what is known about each segment in it: cumulative and selective
//! acknowledgment, loss marks and retransmissions, and the RFC 6675 pipe kept incrementally
//! (Linux: the `tcp_clean_rtx_queue` / `tcp_sacktag_*` half of `tcp_input.c`).
//!
//! Which segments are lost is decided elsewhere (`recovery.rs`); the scoreboard only records it.

use std::collections::{vec_deque, VecDeque};

use super::rate::TxStamp;

/// One transmitted, not yet cumulatively acknowledged segment.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Seg {
    pub seq: u64,
    pub len: u32,
    pub sacked: bool,
    /// Marked lost (by SACK, duplicate ACKs or RTO) and not yet delivered.
    pub lost: bool,
    /// A retransmission of this segment is in flight.
    pub retrans: bool,
    pub ever_retransmitted: bool,
    /// `snd_nxt` when it was last retransmitted (Linux `TCP_SKB_CB(skb)->ack_seq`): data from
    /// here on left after that retransmission.
    pub retrans_nxt: u64,
    pub tx: TxStamp,
}

impl Seg {
    /// Bytes this segment contributes to the pipe (Linux: packets_out − sacked − lost + retrans).
    pub fn in_flight(&self) -> u64 {
        if self.sacked || (self.lost && !self.retrans) {
            0
        } else {
            self.len as u64
        }
    }

    /// Lost, and no retransmission of it in flight or delivered.
    fn awaits_retransmission(&self) -> bool {
        self.lost && !self.retrans && !self.sacked
    }
}

pub(super) struct Scoreboard {
    mss: u64,
    snd_una: u64,
    snd_nxt: u64,
    segs: VecDeque<Seg>,
    /// Sum of `Seg::in_flight` over the queue.
    pipe: u64,
    sacked_bytes: u64,
    /// Segments awaiting retransmission (makes "anything to retransmit?" O(1)).
    lost_pending: u64,
    /// Bytes ever marked lost (Linux `tp->lost`), for rate samples and `newly_lost`.
    lost_total: u64,
    /// No segment below this index awaits retransmission.
    retx_hint: usize,
    /// Without SACK, duplicate ACKs stand for segments that left the network (Linux
    /// `sacked_out` under `tcp_is_reno`).
    reno_sacked: u64,
    /// End of the highest segment ever SACKed (Linux `tcp_highest_sack_seq`).
    highest_sacked: u64,
    /// The last SACK blocks processed (Linux's `recv_sack_cache`, kept per block).
    recent_sacks: SackCache,
}

/// The SACK blocks most recently processed. A segment is never un-SACKed, so every segment
/// lying wholly inside one of them stays SACKed until the cumulative ACK removes it: a new block
/// that repeats an old one, as each ACK of a recovery does while its block grows by a segment,
/// need only walk the part beyond it. Without this, recovery with a window of 30,000 segments
/// walked every SACKed segment again on every ACK.
#[derive(Clone, Copy, Debug, Default)]
struct SackCache {
    blocks: [(u64, u64); SACK_CACHE_BLOCKS],
    next: usize,
}

/// As many as one ACK carries (RFC 2018 §3: at most 4 with timestamps off).
const SACK_CACHE_BLOCKS: usize = 4;

impl SackCache {
    fn remember(&mut self, block: (u64, u64)) {
        self.blocks[self.next] = block;
        self.next = (self.next + 1) % SACK_CACHE_BLOCKS;
    }

    /// The end of a remembered block that wholly holds `[seq, end)`, if any.
    fn covering(&self, seq: u64, end: u64) -> Option<u64> {
        self.blocks.iter().find(|&&(s, e)| s <= seq && end <= e && s < e).map(|&(_, e)| e)
    }
}

impl Scoreboard {
    pub fn new(mss: u32) -> Self {
        Scoreboard {
            mss: mss as u64,
            snd_una: 0,
            snd_nxt: 0,
            segs: VecDeque::with_capacity(64),
            pipe: 0,
            sacked_bytes: 0,
            lost_pending: 0,
            lost_total: 0,
            retx_hint: 0,
            reno_sacked: 0,
            highest_sacked: 0,
            recent_sacks: SackCache::default(),
        }
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// RFC 5681 FlightSize: sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
    pub fn len(&self) -> usize {
        self.segs.len()
    }
    pub fn seg(&self, i: usize) -> &Seg {
        &self.segs[i]
    }
    /// Segments `0..n`, oldest first.
    pub fn segs_below(&self, n: usize) -> vec_deque::Iter<'_, Seg> {
        self.segs.range(..n)
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }

    /// RFC 6675 pipe, less the segments duplicate ACKs reported gone when SACK is off.
    pub fn inflight(&self) -> u64 {
        self.pipe.saturating_sub(self.reno_sacked * self.mss)
    }

    // ----- sending ------------------------------------------------------------------------

    /// New data at `snd_nxt`; it joins the pipe when `on_transmit` stamps it.
    pub fn push(&mut self, len: u64) -> usize {
        self.segs.push_back(Seg { seq: self.snd_nxt, len: len as u32, ..Seg::default() });
        self.snd_nxt += len;
        self.segs.len() - 1
    }

    /// Segment `i` leaves with stamp `tx`: new data just pushed, or (`is_retx`) the segment
    /// `next_retransmission` named.
    #[inline]
    pub fn on_transmit(&mut self, i: usize, is_retx: bool, tx: TxStamp) -> &Seg {
        let s = &mut self.segs[i];
        // A new segment is not in the pipe yet; a retransmitted one may be (if not marked lost).
        let old_contribution = if is_retx { s.in_flight() } else { 0 };
        if is_retx {
            // A tail loss probe may resend a segment not marked lost.
            if s.awaits_retransmission() {
                self.lost_pending -= 1;
            }
            s.retrans = true;
            s.ever_retransmitted = true;
            s.retrans_nxt = self.snd_nxt;
        }
        s.tx = tx;
        self.pipe = self.pipe - old_contribution + s.in_flight();
        s
    }

    /// The lowest segment awaiting retransmission (RFC 6675 NextSeg rule 1).
    pub fn next_retransmission(&mut self) -> Option<usize> {
        if self.lost_pending == 0 {
            return None;
        }
        while self.retx_hint < self.segs.len() {
            if self.segs[self.retx_hint].awaits_retransmission() {
                return Some(self.retx_hint);
            }
            self.retx_hint += 1;
        }
        None
    }

    // ----- acknowledgments ----------------------------------------------------------------

    /// Cumulative ACK: drops the covered segments and returns the bytes newly acknowledged.
    /// `delivered` sees each one not SACKed before, oldest first (Linux `tcp_clean_rtx_queue`).
    #[inline]
    pub fn ack_cumulative(&mut self, ack: u64, mut delivered: impl FnMut(&Seg)) -> u64 {
        let ack = ack.min(self.snd_nxt);
        if ack <= self.snd_una {
            return 0;
        }
        let mut popped = 0usize;
        while let Some(seg) = self.segs.front().copied() {
            if seg.seq + seg.len as u64 > ack {
                break;
            }
            self.segs.pop_front();
            popped += 1;
            self.pipe -= seg.in_flight();
            if seg.awaits_retransmission() {
                self.lost_pending -= 1;
            }
            if seg.sacked {
                self.sacked_bytes -= seg.len as u64;
            } else {
                delivered(&seg);
            }
        }
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        self.retx_hint = self.retx_hint.saturating_sub(popped);
        acked
    }

    /// SACK block `[start, end)`: marks the whole segments inside it and returns the bytes newly
    /// SACKed; `delivered` sees each such segment (Linux `tcp_sacktag_one`). Runs of segments a
    /// recent block already covered are skipped: they are SACKed already ([`SackCache`]).
    #[inline]
    pub fn mark_sacked(&mut self, start: u64, end: u64, mut delivered: impl FnMut(&Seg)) -> u64 {
        let mut newly = 0;
        let Some(mut i) = self.index_of(start.max(self.snd_una)) else {
            return 0;
        };
        while i < self.segs.len() {
            let s = &mut self.segs[i];
            let s_end = s.seq + s.len as u64;
            if s_end > end {
                break;
            }
            if let Some(covered) = self.recent_sacks.covering(s.seq, s_end) {
                // On to the segment holding `covered`: it ends beyond it, so if that is beyond
                // `end` the loop stops as it would have.
                i = self.index_of(covered).unwrap_or(self.segs.len());
                continue;
            }
            if s.seq >= start && !s.sacked {
                self.pipe -= s.in_flight();
                if s.awaits_retransmission() {
                    self.lost_pending -= 1;
                }
                s.sacked = true;
                s.retrans = false;
                self.highest_sacked = self.highest_sacked.max(s_end);
                self.sacked_bytes += s.len as u64;
                newly += s.len as u64;
                delivered(s);
            }
            i += 1;
        }
        self.recent_sacks.remember((start, end));
        newly
    }

    /// The index of the segment holding byte `seq`, None past the last. Segments are one MSS
    /// long, so the byte maps to its index; only the last may be shorter (the end of what the
    /// application wrote), and a byte just past it then maps to it: the walk forward, one
    /// comparison when the estimate is right, turns that into None. (Were a short segment ever
    /// left mid-queue, the estimate would fall short of the true index, never beyond it, and
    /// the walk would find it too.)
    pub fn index_of(&self, seq: u64) -> Option<usize> {
        let front = self.segs.front()?;
        if seq < front.seq {
            return None;
        }
        let mut i = ((seq - front.seq) / self.mss) as usize;
        while self.segs.get(i).is_some_and(|s| s.seq + s.len as u64 <= seq) {
            i += 1;
        }
        (i < self.segs.len()).then_some(i)
    }

    // ----- loss marks ---------------------------------------------------------------------

    /// Marks segment `i` lost, or its retransmission in flight lost too, and returns it; does
    /// nothing to a SACKed segment or one already awaiting retransmission (Linux
    /// `tcp_mark_skb_lost`).
    pub fn mark_lost(&mut self, i: usize) -> Option<Seg> {
        let seg = self.segs[i];
        if seg.sacked || seg.awaits_retransmission() {
            return None;
        }
        self.pipe -= seg.in_flight();
        let s = &mut self.segs[i];
        s.lost = true;
        s.retrans = false;
        self.lost_pending += 1;
        self.lost_total += seg.len as u64;
        self.retx_hint = self.retx_hint.min(i);
        Some(seg)
    }

    /// The first retransmission in flight, from index `from` on, that data sent after it has
    /// overtaken: a segment sent later was SACKed, so it is lost too (Linux ≤ 4.3
    /// `tcp_mark_lost_retrans`, with FACK's immediate verdict; RACK finds these by time).
    pub fn next_lost_retransmission(&self, from: usize) -> Option<usize> {
        let upto = self.highest_sacked;
        let mut candidates = self.segs.range(from.min(self.segs.len())..).take_while(|s| s.seq < upto);
        let hit = candidates.position(|s| s.retrans && !s.sacked && s.retrans_nxt < upto);
        hit.map(|k| from + k)
    }

    /// A reduction was undone (Linux `tcp_undo_cwnd_reduction` with `unmark_loss`): no
    /// segment is presumed lost any more; those awaiting retransmission count as in flight.
    pub fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut().filter(|s| s.lost) {
            let before = s.in_flight();
            s.lost = false;
            self.pipe = self.pipe - before + s.in_flight();
        }
        self.lost_pending = 0;
    }

    /// RTO (Linux `tcp_timeout_mark_lost`): the head and every segment not SACKed are presumed
    /// lost, retransmissions in flight included, except those `keep` spares (RACK: sent within
    /// the last RTT); go back N from `snd_una`. `lost` sees each segment newly marked.
    pub fn enter_loss(&mut self, keep: impl Fn(&Seg) -> bool, mut lost: impl FnMut(&Seg)) {
        for i in 0..self.segs.len() {
            if i == 0 || !keep(&self.segs[i]) {
                if let Some(seg) = self.mark_lost(i) {
                    lost(&seg);
                }
            }
        }
        self.reno_sacked = 0;
    }

    // ----- SACK emulation without SACK (Linux tcp_add_reno_sack & co.) --------------------

    /// A duplicate ACK: one more segment left the network, but never more than are out.
    pub fn add_reno_sack(&mut self) {
        let outstanding = self.segs.len() as u64;
        self.reno_sacked = (self.reno_sacked + 1).min(outstanding.saturating_sub(1));
    }

    /// A cumulative ACK of `acked` bytes: one segment filled the hole, the rest were already
    /// counted by duplicate ACKs (`tcp_remove_reno_sacks`). Returns how many it consumed.
    pub fn remove_reno_sacks(&mut self, acked: u64) -> u64 {
        let before = self.reno_sacked;
        let acked_segs = acked.div_ceil(self.mss);
        self.reno_sacked = self.reno_sacked.saturating_sub(acked_segs.saturating_sub(1));
        before - self.reno_sacked
    }

    /// The episode is over: its duplicate ACKs are all accounted for (`tcp_reset_reno_sack`).
    pub fn reset_reno_sacks(&mut self) {
        self.reno_sacked = 0;
    }

    /// The incremental counters agree with a recount of the queue.
    pub fn check(&self) -> Result<(), String> {
        let pipe: u64 = self.segs.iter().map(|s| s.in_flight()).sum();
        let sacked: u64 = self.segs.iter().filter(|s| s.sacked).map(|s| s.len as u64).sum();
        let lost = self.segs.iter().filter(|s| s.awaits_retransmission()).count() as u64;
        let outstanding: u64 = self.segs.iter().map(|s| s.len as u64).sum();
        if pipe != self.pipe || sacked != self.sacked_bytes || lost != self.lost_pending {
            return Err(format!(
                "pipe {}/{} sacked {}/{} lost {}/{}",
                pipe, self.pipe, sacked, self.sacked_bytes, lost, self.lost_pending
            ));
        }
        if outstanding != self.flight_size() {
            return Err(format!(
                "scoreboard holds {} bytes, snd_nxt-snd_una = {}",
                outstanding,
                self.flight_size()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rand::Rng;

    use super::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;

    /// `n` full segments sent at `n` distinct times.
    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(MSS);
        for k in 0..n {
            let i = sb.push(M);
            sb.on_transmit(i, false, TxStamp { sent_time: k, ..TxStamp::default() });
        }
        sb.check().unwrap();
        sb
    }

    fn retransmit_next(sb: &mut Scoreboard) -> Option<usize> {
        let i = sb.next_retransmission()?;
        sb.on_transmit(i, true, TxStamp::default());
        Some(i)
    }

    /// Segment numbers (seq / MSS) the callback saw.
    fn sacked(sb: &mut Scoreboard, start: u64, end: u64) -> (u64, Vec<u64>) {
        let mut seen = Vec::new();
        let newly = sb.mark_sacked(start, end, |s| seen.push(s.seq / M));
        sb.check().unwrap();
        (newly, seen)
    }

    fn cum_ack(sb: &mut Scoreboard, ack: u64) -> (u64, Vec<u64>) {
        let mut seen = Vec::new();
        let acked = sb.ack_cumulative(ack, |s| seen.push(s.seq / M));
        sb.check().unwrap();
        (acked, seen)
    }

    /// The remembered blocks only save work: blocks that grow, repeat, overlap, start or end
    /// inside a segment, interleaved with cumulative ACKs, mark exactly the segments a plain
    /// walk marks (a model: the set of SACKed segment numbers).
    #[test]
    fn skipping_remembered_blocks_marks_what_a_plain_walk_marks() {
        const N: u64 = 400;
        let mut sb = board(N);
        let mut model = vec![false; N as usize];
        let mut una = 0u64;
        let mut rng = crate::rng::stream(1, "sack-test", 0);
        let mut next = |m: u64| rng.gen_range(0..m);
        for step in 0..3000 {
            if step % 97 == 96 {
                una = (una + next(8) * M).min(N * M);
                let expect: Vec<u64> = (sb.snd_una() / M..una / M).filter(|&k| !model[k as usize]).collect();
                assert_eq!(cum_ack(&mut sb, una).1, expect);
                continue;
            }
            // Blocks anchored at a few starts, growing by a segment or so (as in recovery),
            // with an odd byte now and then.
            let start = (next(5) * 60 + next(3)) * M + if next(4) == 0 { M / 2 } else { 0 };
            let end = (start + (step % 60 + 1) * M + next(2) * (M / 3)).min(N * M);
            let expect: Vec<u64> = (0..N)
                .filter(|&k| k * M >= start.max(una) && (k + 1) * M <= end && !model[k as usize])
                .collect();
            let (newly, seen) = sacked(&mut sb, start, end);
            assert_eq!(seen, expect, "block [{start}, {end}) at step {step}");
            assert_eq!(newly, expect.len() as u64 * M);
            expect.iter().for_each(|&k| model[k as usize] = true);
        }
    }

    /// Short segments, mid-queue and last: every byte maps to the segment that holds it, a byte
    /// past the last to none, and skipping a remembered block marks the right segments.
    #[test]
    fn short_segments_keep_indices_and_sack_marking_right() {
        let mut sb = Scoreboard::new(MSS);
        for len in [M, M / 2, M, M, M, M / 2] {
            let i = sb.push(len);
            sb.on_transmit(i, false, TxStamp::default());
        }
        // Segments start at 0, 1000, 1500, 2500, 3500, 4500; the last ends at 5000.
        let starts = [0, 1000, 1500, 2500, 3500, 4500];
        for seq in 0..5000 {
            let i = sb.index_of(seq).unwrap();
            assert!(starts[i] <= seq && (i == 5 || seq < starts[i + 1]), "byte {seq} → segment {i}");
        }
        assert_eq!(sb.index_of(5000), None, "just past the short last segment");
        let mut mark = |start, end| {
            let mut seen = Vec::new();
            let newly = sb.mark_sacked(start, end, |s| seen.push(s.seq));
            (newly, seen)
        };
        assert_eq!(mark(M, 2500), (1500, vec![1000, 1500]));
        assert_eq!(mark(M, 4500), (2000, vec![2500, 3500]), "skips the remembered [1000, 2500)");
        assert_eq!(mark(M, 5000), (500, vec![4500]), "a block reaching the end of the data");
        assert_eq!(mark(M, 5000), (0, vec![]), "and again, skipped to the end");
        assert_eq!(sb.sacked_bytes(), 4000);
    }

    #[test]
    fn new_data_joins_the_pipe_when_transmitted() {
        let mut sb = board(2);
        let i = sb.push(500);
        assert_eq!((i, sb.snd_nxt(), sb.flight_size()), (2, 2 * M + 500, 2 * M + 500));
        assert_eq!(sb.inflight(), 2 * M, "pushed, not sent");
        let seg = sb.on_transmit(i, false, TxStamp { sent_time: 9, ..TxStamp::default() });
        assert_eq!((seg.seq, seg.len, seg.tx.sent_time), (2 * M, 500, 9));
        assert_eq!(sb.inflight(), 2 * M + 500);
        sb.check().unwrap();
    }

    #[test]
    fn cumulative_ack_pops_covered_segments_and_reports_only_unsacked_ones() {
        let mut sb = board(5);
        assert_eq!(sacked(&mut sb, M, 2 * M), (M, vec![1]));
        assert_eq!(cum_ack(&mut sb, 3 * M), (3 * M, vec![0, 2]));
        assert_eq!((sb.snd_una(), sb.len(), sb.sacked_bytes(), sb.inflight()), (3 * M, 2, 0, 2 * M));
        assert_eq!(cum_ack(&mut sb, 2 * M), (0, vec![]), "old ACK");
        assert_eq!(cum_ack(&mut sb, 3 * M), (0, vec![]), "duplicate");
        assert_eq!(cum_ack(&mut sb, 99 * M), (2 * M, vec![3, 4]), "clamped to snd_nxt");
        assert_eq!((sb.len(), sb.inflight()), (0, 0));
    }

    #[test]
    fn sack_marks_whole_segments_inside_the_block_once() {
        let mut sb = board(5);
        assert_eq!(sacked(&mut sb, M + 100, 4 * M), (2 * M, vec![2, 3]), "seg 1 starts below the block");
        assert_eq!(sacked(&mut sb, 2 * M, 4 * M), (0, vec![]), "already SACKed");
        assert_eq!(sacked(&mut sb, 4 * M, 4 * M + 999), (0, vec![]), "seg 4 ends beyond the block");
        assert_eq!(sacked(&mut sb, 10 * M, 12 * M), (0, vec![]), "beyond snd_nxt");
        assert_eq!((sb.sacked_bytes(), sb.inflight()), (2 * M, 3 * M));
        cum_ack(&mut sb, 2 * M);
        assert_eq!(sacked(&mut sb, 0, 5 * M), (M, vec![4]), "clipped at snd_una");
    }

    #[test]
    fn a_lost_segment_leaves_the_pipe_until_retransmitted() {
        let mut sb = board(4);
        let seg = sb.mark_lost(1).expect("newly lost");
        assert_eq!(seg.seq, M);
        assert_eq!((sb.inflight(), sb.lost_total()), (3 * M, M));
        assert!(sb.mark_lost(1).is_none(), "already lost");
        sacked(&mut sb, 2 * M, 3 * M);
        assert!(sb.mark_lost(2).is_none(), "SACKed segments are not lost");
        assert_eq!(retransmit_next(&mut sb), Some(1));
        assert_eq!(sb.inflight(), 3 * M, "segments 0, 1 (again) and 3");
        assert_eq!(sb.next_retransmission(), None);
        assert_eq!(sb.lost_total(), M, "a retransmission is not a new loss");
        sb.check().unwrap();
    }

    #[test]
    fn retransmissions_go_lowest_first_whatever_the_marking_order() {
        let mut sb = board(5);
        sb.mark_lost(3);
        assert_eq!(sb.next_retransmission(), Some(3));
        sb.mark_lost(1);
        assert_eq!(retransmit_next(&mut sb), Some(1));
        // The hint follows the queue when its head is acknowledged.
        cum_ack(&mut sb, 2 * M);
        assert_eq!(sb.next_retransmission(), Some(1));
        assert_eq!(sb.seg(1).seq, 3 * M);
        assert_eq!(retransmit_next(&mut sb), Some(1));
        assert_eq!(retransmit_next(&mut sb), None);
    }

    #[test]
    fn sack_of_a_lost_segment_cancels_its_retransmission() {
        let mut sb = board(4);
        sb.mark_lost(2);
        assert_eq!(sacked(&mut sb, 2 * M, 3 * M), (M, vec![2]));
        assert_eq!(sb.next_retransmission(), None);
        assert_eq!(sb.lost_total(), M, "it was lost; the count stays");
    }

    #[test]
    fn rto_presumes_everything_not_sacked_lost() {
        let mut sb = board(4);
        sacked(&mut sb, 2 * M, 3 * M);
        sb.mark_lost(0);
        retransmit_next(&mut sb);
        sb.add_reno_sack();
        sb.enter_loss(|_| false, |_| {});
        sb.check().unwrap();
        assert_eq!(sb.inflight(), 0);
        assert_eq!(sb.lost_total(), 4 * M, "0 and its lost retransmission, then 1 and 3");
        let order: Vec<_> = std::iter::from_fn(|| retransmit_next(&mut sb)).collect();
        assert_eq!(order, vec![0, 1, 3], "go-back-N, the retransmission of 0 included");
        assert_eq!(sb.inflight(), 3 * M);
    }

    #[test]
    fn duplicate_acks_stand_for_departed_segments_without_sack() {
        let mut sb = board(5);
        for k in 1..=6u64 {
            sb.add_reno_sack();
            assert_eq!(sb.inflight(), 5 * M - k.min(4) * M, "at most all but one");
        }
        // A cumulative ACK of two segments: one filled the hole, one had been counted.
        cum_ack(&mut sb, 2 * M);
        assert_eq!(sb.remove_reno_sacks(2 * M), 1);
        assert_eq!(sb.inflight(), 0, "three segments out, three reported gone");
        assert_eq!(sb.remove_reno_sacks(M), 0, "a one-segment ACK consumes none");
        assert_eq!(sb.remove_reno_sacks(10 * M), 3, "never below zero");
        sb.add_reno_sack();
        sb.reset_reno_sacks();
        assert_eq!(sb.inflight(), 3 * M);
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Sack(u64),
        Lost(usize),
        Retransmit,
        Ack(u64),
        Rto,
        RenoSack,
    }

    fn apply(sb: &mut Scoreboard, op: Op) {
        match op {
            Op::Sack(k) => {
                sb.mark_sacked(k * M, (k + 1) * M, |_| {});
            }
            Op::Lost(i) if i < sb.len() => {
                sb.mark_lost(i);
            }
            Op::Lost(_) => {}
            Op::Retransmit => {
                retransmit_next(sb);
            }
            Op::Ack(k) => {
                sb.ack_cumulative(k * M, |_| {});
            }
            Op::Rto => sb.enter_loss(|_| false, |_| {}),
            Op::RenoSack => sb.add_reno_sack(),
        }
    }

    /// Every sequence of three operations on a four-segment queue keeps the incremental pipe,
    /// SACK and loss counters equal to a recount, and the loss count never goes backwards.
    #[test]
    fn counters_match_a_recount_after_any_three_operations() {
        let mut ops = vec![Op::Retransmit, Op::Rto, Op::RenoSack];
        for k in 0..4 {
            ops.extend([Op::Sack(k as u64), Op::Lost(k), Op::Ack(k as u64 + 1)]);
        }
        for &a in &ops {
            for &b in &ops {
                for &c in &ops {
                    let mut sb = board(4);
                    let mut lost = 0;
                    for op in [a, b, c] {
                        apply(&mut sb, op);
                        sb.check().unwrap_or_else(|e| panic!("{a:?} {b:?} {c:?}: {e}"));
                        assert!(sb.lost_total() >= lost && sb.inflight() <= sb.flight_size());
                        lost = sb.lost_total();
                    }
                }
            }
        }
    }
}
