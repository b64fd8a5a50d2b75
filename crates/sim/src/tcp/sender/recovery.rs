//! Loss detection and the reduction episodes that follow it (Linux `tcp_recovery.c` and the
//! `tcp_fastretrans_alert` half of `tcp_input.c`):
//!
//! * which segments an ACK shows lost: RFC 6675 `IsLost` with SACK, RFC 6582 NewReno (third
//!   duplicate ACK, partial ACKs) without;
//! * when a loss, an ECN-Echo or an RTO opens an episode, and when the episode ends;
//! * Proportional Rate Reduction (RFC 6937) while a loss- or ECN-triggered episode lasts.
//!
//! The controller decides how much to reduce; this part carries its [`Reaction`] out.

use ccbench_cc::{CaState, Cause, CcState, Reaction};

use super::scoreboard::Scoreboard;

/// RFC 5681 / RFC 6675 duplicate-ACK threshold.
const DUP_THRESH: u64 = 3;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Episode {
    cause: Cause,
    /// RFC 6675 RecoveryPoint / RFC 6582 `recover`: `snd_nxt` when the episode opened.
    recovery_point: u64,
    /// PRR governs cwnd until the episode ends.
    prr: bool,
}

pub(super) struct Recovery {
    sack: bool,
    mss: u64,
    ca_state: CaState,
    episode: Option<Episode>,
    dupacks: u64,
    // RFC 6937 state.
    prr_delivered: u64,
    prr_out: u64,
    /// RecoverFS: Linux uses the window before the reduction (`prior_cwnd`).
    recover_fs: u64,
}

/// Carries out a controller's reaction to `cause`; returns whether PRR governs the descent. On
/// an RTO a loss-style reaction leaves cwnd to the sender, which restarts it from what is still
/// in flight once the timeout has marked its losses (Linux `tcp_enter_loss`).
pub(super) fn apply_reaction(st: &mut CcState, r: Reaction, cause: Cause) -> bool {
    match r {
        Reaction::Prr { ssthresh } => {
            st.ssthresh = ssthresh;
            !matches!(cause, Cause::Rto { .. })
        }
        Reaction::Immediate { ssthresh, cwnd } => {
            st.ssthresh = ssthresh;
            st.cwnd = cwnd;
            false
        }
        Reaction::SelfManaged | Reaction::Ignore => false,
    }
}

/// The segments one ACK shows lost, one at a time: the caller marks each and tells the
/// controller before the scan looks further (Linux `tcp_update_scoreboard`).
pub(super) enum LossScan {
    Done,
    /// RFC 6582 §3.2: the first unacknowledged segment.
    Head,
    /// RFC 6675 `IsLost`: an un-SACKed segment with more than (DupThresh−1)·MSS SACKed above
    /// it, walking down from the top.
    Sack {
        next: usize,
        sacked_above: u64,
        threshold: u64,
    },
}

impl LossScan {
    pub fn next(&mut self, sb: &Scoreboard) -> Option<usize> {
        match self {
            LossScan::Done => None,
            LossScan::Head => {
                *self = LossScan::Done;
                // Linux `tcp_newreno_mark_lost`: a head already marked is not marked again.
                (!sb.seg(0).lost).then_some(0)
            }
            LossScan::Sack { next, sacked_above, threshold } => {
                let (mut above, threshold) = (*sacked_above, *threshold);
                for (i, seg) in sb.segs_below(*next).enumerate().rev() {
                    if seg.sacked {
                        above += seg.len as u64;
                    } else if above > threshold {
                        if seg.lost {
                            // The threshold only grows downwards: an earlier ACK marked the rest.
                            break;
                        }
                        (*next, *sacked_above) = (i, above);
                        return Some(i);
                    }
                }
                *self = LossScan::Done;
                None
            }
        }
    }
}

impl Recovery {
    pub fn new(sack: bool, mss: u32) -> Self {
        Recovery {
            sack,
            mss: mss as u64,
            ca_state: CaState::Open,
            episode: None,
            dupacks: 0,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
        }
    }

    pub fn ca_state(&self) -> CaState {
        self.ca_state
    }

    /// The cause of the episode in progress, if any.
    pub fn open_cause(&self) -> Option<Cause> {
        self.episode.map(|e| e.cause)
    }

    /// Linux `tcp_enter_loss`: a timeout reduces ssthresh only when no reduction for the same
    /// data is under way — in Open or Disorder, once snd_una reached the recovery point, or in
    /// Loss after snd_una advanced since the last timeout (`retries` back at 0).
    pub fn rto_reduces(&self, snd_una: u64, retries: u32) -> bool {
        match self.ca_state {
            CaState::Open | CaState::Disorder => true,
            _ if snd_una >= self.recovery_point() => true,
            CaState::Loss => retries == 0,
            CaState::Recovery | CaState::Cwr => false,
        }
    }

    pub fn in_prr(&self) -> bool {
        self.episode.is_some_and(|e| e.prr)
    }

    /// F-RTO step 2.b moves the point to `snd_nxt` before new data goes out (`tp->high_seq`).
    pub fn set_recovery_point(&mut self, snd_nxt: u64) {
        if let Some(ep) = self.episode.as_mut() {
            ep.recovery_point = snd_nxt;
        }
    }

    pub fn recovery_point(&self) -> u64 {
        self.episode.map_or(0, |e| e.recovery_point)
    }

    /// RFC 5681 §2 duplicate ACKs, counted until the cumulative ACK moves.
    pub fn count_dupack(&mut self, new_data_acked: bool, is_dupack: bool) {
        if new_data_acked {
            self.dupacks = 0;
        }
        if is_dupack {
            self.dupacks += 1;
        }
    }

    /// Which detector runs on this ACK: with SACK, RFC 6675 whenever new blocks arrived;
    /// without, NewReno on the third duplicate ACK (RFC 5681 §3.2) or on a partial ACK in
    /// recovery (RFC 6582 §3.2, partial acknowledgments). With RACK (`rack.rs`) the sender uses
    /// this only without SACK, as Linux does.
    pub fn loss_scan(&self, sb: &Scoreboard, acked: u64, sacked_new: u64) -> LossScan {
        if self.sack {
            return if sacked_new > 0 {
                LossScan::Sack { next: sb.len(), sacked_above: 0, threshold: (DUP_THRESH - 1) * self.mss }
            } else {
                LossScan::Done
            };
        }
        let in_episode = matches!(self.ca_state, CaState::Recovery | CaState::Loss);
        let third_dupack = self.dupacks >= DUP_THRESH && !in_episode;
        let partial_ack =
            self.ca_state == CaState::Recovery && acked > 0 && sb.snd_una() < self.recovery_point();
        if third_dupack || partial_ack {
            LossScan::Head
        } else {
            LossScan::Done
        }
    }

    /// The episode this ACK opens, if any: a loss unless one is already being recovered; an
    /// ECN-Echo on an ACK that delivers data only when no episode is open, so at most once per
    /// RTT (RFC 3168 §6.1.2).
    /// After a timeout, a retransmission found lost too moves Loss to Recovery (Linux
    /// `tcp_fastretrans_alert` on `FLAG_LOST_RETRANS`).
    pub fn signal(
        &self,
        newly_lost: u64,
        lost_retransmission: bool,
        ece: bool,
        delivered: bool,
    ) -> Option<Cause> {
        let opens = match self.ca_state {
            CaState::Open | CaState::Disorder | CaState::Cwr => newly_lost > 0,
            CaState::Loss => lost_retransmission,
            CaState::Recovery => false,
        };
        if opens {
            Some(Cause::Loss)
        } else if ece && self.episode.is_none() && delivered {
            Some(Cause::Ecn)
        } else {
            None
        }
    }

    /// Opens an episode until `snd_nxt` is acknowledged (Linux `tcp_enter_recovery`,
    /// `tcp_enter_cwr`, `tcp_enter_loss`); `prior_cwnd` is the window before the reduction.
    pub fn enter(&mut self, cause: Cause, prr: bool, prior_cwnd: u64, snd_nxt: u64) {
        self.ca_state = match cause {
            Cause::Loss => CaState::Recovery,
            Cause::Ecn => CaState::Cwr,
            Cause::Rto { .. } => CaState::Loss,
        };
        self.episode = Some(Episode { cause, recovery_point: snd_nxt, prr });
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.recover_fs = prior_cwnd.max(1);
        if let Cause::Rto { .. } = cause {
            // Go-back-N: the duplicate ACKs seen so far say nothing about the new round.
            self.dupacks = 0;
        }
    }

    /// Ends the episode once everything outstanding at its start is acknowledged, and returns
    /// its cause. A PRR descent lands exactly on ssthresh (RFC 6937, Linux
    /// `tcp_end_cwnd_reduction`).
    pub fn finish(&mut self, snd_una: u64, st: &mut CcState) -> Option<Cause> {
        let ep = self.episode?;
        if snd_una < ep.recovery_point {
            return None;
        }
        if ep.prr && st.ssthresh != u64::MAX {
            st.cwnd = st.ssthresh;
        }
        self.episode = None;
        self.ca_state = CaState::Open;
        Some(ep.cause)
    }

    /// Ends the episode at once, cwnd as it stands (Linux enters and leaves CWR on the spot when
    /// a tail loss probe turns out to have repaired a loss).
    pub fn close(&mut self) {
        self.episode = None;
        self.ca_state = CaState::Open;
    }

    /// Outside an episode, Disorder while SACKs or duplicate ACKs hint at reordering or loss
    /// (Linux `tcp_try_keep_open`).
    pub fn settle(&mut self, sacked_any: bool) {
        if self.episode.is_none() {
            self.ca_state = if sacked_any || self.dupacks > 0 { CaState::Disorder } else { CaState::Open };
        }
    }

    /// RFC 6937 `prr_out`.
    pub fn on_sent(&mut self, len: u32) {
        if self.episode.is_some() {
            self.prr_out += len as u64;
        }
    }

    /// RFC 6937 DeliveredData of one ACK. Without SACK a duplicate ACK stands for one delivered
    /// segment, and a cumulative ACK counts only what its duplicates did not already
    /// (`reno_consumed` segments).
    pub fn delivered_data(&self, delivered: u64, is_dupack: bool, acked: u64, reno_consumed: u64) -> u64 {
        if self.sack {
            delivered
        } else if is_dupack {
            self.mss
        } else {
            acked.saturating_sub(reno_consumed * self.mss)
        }
    }

    /// RFC 6937 §3 as Linux runs it (`tcp_cwnd_reduction`): an ACK that delivers nothing
    /// changes nothing; above ssthresh, send in proportion to what was delivered so the
    /// reduction spreads over one RTT; below it, climb back towards ssthresh at most as fast as
    /// data is delivered, plus one segment only on an ACK that advances snd_una and reports no
    /// new loss. The first segment of an episode always goes (the fast retransmission).
    pub fn prr_update(
        &mut self,
        st: &mut CcState,
        delivered: u64,
        pipe: u64,
        una_advanced: bool,
        newly_lost: bool,
    ) {
        if delivered == 0 {
            return;
        }
        let mss = self.mss;
        self.prr_delivered += delivered;
        let ssthresh = st.ssthresh;
        let mut sndcnt: i64 = if pipe > ssthresh {
            let target = (self.prr_delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            target as i64 - self.prr_out as i64
        } else {
            let mut limit = (self.prr_delivered as i64 - self.prr_out as i64).max(delivered as i64);
            if una_advanced && !newly_lost {
                limit += mss as i64;
            }
            (ssthresh.saturating_sub(pipe).min(i64::MAX as u64) as i64).min(limit)
        };
        if self.prr_out == 0 {
            sndcnt = sndcnt.max(mss as i64);
        }
        st.cwnd = pipe + sndcnt.max(0) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::super::rate::TxStamp;
    use super::*;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    const INF: u64 = u64::MAX;

    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(MSS);
        for _ in 0..n {
            let i = sb.push(M);
            sb.on_transmit(i, false, TxStamp::default());
        }
        sb
    }

    fn st(cwnd: u64, ssthresh: u64) -> CcState {
        CcState { cwnd, ssthresh, pacing_rate: None }
    }

    /// Runs a scan to the end, marking as the sender does; returns the indices in scan order.
    fn scan_all(rec: &Recovery, sb: &mut Scoreboard, acked: u64, sacked_new: u64) -> Vec<usize> {
        let mut scan = rec.loss_scan(sb, acked, sacked_new);
        let mut marked = Vec::new();
        while let Some(i) = scan.next(sb) {
            sb.mark_lost(i);
            marked.push(i);
        }
        marked
    }

    #[test]
    fn reaction_by_cause() {
        let causes = [Cause::Loss, Cause::Ecn, Cause::Rto { backoffs: 0 }, Cause::Rto { backoffs: 3 }];
        let reactions = [
            Reaction::Prr { ssthresh: 5 * M },
            Reaction::Immediate { ssthresh: 6 * M, cwnd: 4 * M },
            Reaction::SelfManaged,
            Reaction::Ignore,
        ];
        for cause in causes {
            let rto = matches!(cause, Cause::Rto { .. });
            for r in reactions {
                let mut s = st(10 * M, INF);
                let prr = apply_reaction(&mut s, r, cause);
                let expect = match r {
                    // cwnd is the sender's to set once the timeout has marked its losses.
                    Reaction::Prr { .. } if rto => (10 * M, 5 * M, false),
                    Reaction::Prr { .. } => (10 * M, 5 * M, true),
                    Reaction::Immediate { .. } => (4 * M, 6 * M, false),
                    _ => (10 * M, INF, false),
                };
                assert_eq!((s.cwnd, s.ssthresh, prr), expect, "{cause:?} {r:?}");
            }
        }
    }

    /// Every SACK pattern on seven segments: the scan marks exactly the RFC 6675 `IsLost`
    /// segments (un-SACKed, more than two segments SACKed above), top down, and a second scan
    /// of the same board finds nothing.
    #[test]
    fn sack_scan_is_rfc6675_islost_for_every_pattern() {
        const N: u64 = 7;
        let rec = Recovery::new(true, MSS);
        for pattern in 0u32..1 << N {
            let is_sacked = |k: u64| pattern & (1 << k) != 0;
            let mut sb = board(N);
            for k in (0..N).filter(|&k| is_sacked(k)) {
                sb.mark_sacked(k * M, (k + 1) * M, |_| {});
            }
            let expect: Vec<usize> = (0..N)
                .rev()
                .filter(|&k| !is_sacked(k) && (k + 1..N).filter(|&j| is_sacked(j)).count() > 2)
                .map(|k| k as usize)
                .collect();
            assert_eq!(scan_all(&rec, &mut sb, 0, M), expect, "pattern {pattern:07b}");
            assert_eq!(scan_all(&rec, &mut sb, 0, M), Vec::<usize>::new(), "pattern {pattern:07b}, again");
        }
    }

    #[test]
    fn sack_scan_runs_only_when_new_blocks_arrive() {
        let rec = Recovery::new(true, MSS);
        let mut sb = board(5);
        for k in 2..5 {
            sb.mark_sacked(k * M, (k + 1) * M, |_| {});
        }
        assert_eq!(scan_all(&rec, &mut sb, M, 0), Vec::<usize>::new(), "a cumulative ACK alone");
        assert_eq!(scan_all(&rec, &mut sb, 0, M), vec![1, 0]);
    }

    #[test]
    fn sack_scan_stops_at_a_segment_an_earlier_ack_marked() {
        let rec = Recovery::new(true, MSS);
        let mut sb = board(6);
        sb.mark_lost(1);
        for k in 3..6 {
            sb.mark_sacked(k * M, (k + 1) * M, |_| {});
        }
        assert_eq!(scan_all(&rec, &mut sb, 0, M), vec![2]);
    }

    #[test]
    fn newreno_marks_the_head_on_the_third_dupack_and_on_partial_acks() {
        let mut rec = Recovery::new(false, MSS);
        let mut sb = board(8);
        for k in 1..=4 {
            rec.count_dupack(false, true);
            let head = matches!(rec.loss_scan(&sb, 0, 0), LossScan::Head);
            assert_eq!(head, k >= 3, "dupack {k}");
        }
        rec.enter(Cause::Loss, true, 0, 8 * M);
        rec.count_dupack(false, true);
        assert!(matches!(rec.loss_scan(&sb, 0, 0), LossScan::Done), "more dupacks in recovery");
        // Partial ACK: the next hole is the new head.
        let acked = sb.ack_cumulative(3 * M, |_| {});
        rec.count_dupack(true, false);
        assert_eq!(scan_all(&rec, &mut sb, acked, 0), vec![0]);
        assert_eq!(sb.seg(0).seq, 3 * M);
        // Full ACK: recovery is over, nothing is marked.
        let acked = sb.ack_cumulative(8 * M, |_| {});
        assert!(matches!(rec.loss_scan(&sb, acked, 0), LossScan::Done));
    }

    #[test]
    fn newreno_after_rto_ignores_old_dupacks_and_partial_acks() {
        let mut rec = Recovery::new(false, MSS);
        let mut sb = board(8);
        (0..3).for_each(|_| rec.count_dupack(false, true));
        rec.enter(Cause::Rto { backoffs: 0 }, false, 0, 8 * M);
        assert_eq!(rec.dupacks, 0, "go-back-N forgets the duplicates");
        (0..3).for_each(|_| rec.count_dupack(false, true));
        assert!(matches!(rec.loss_scan(&sb, 0, 0), LossScan::Done), "dupacks in Loss");
        let acked = sb.ack_cumulative(2 * M, |_| {});
        assert!(matches!(rec.loss_scan(&sb, acked, 0), LossScan::Done), "partial ACK in Loss");
    }

    /// One state per way of getting there, and every combination of what an ACK can signal.
    #[test]
    fn which_signal_opens_an_episode() {
        type Setup = fn(&mut Recovery);
        let states: [(&str, Setup); 5] = [
            ("open", |_| {}),
            ("disorder", |r| r.settle(true)),
            ("cwr", |r| r.enter(Cause::Ecn, false, 0, 10 * M)),
            ("recovery", |r| r.enter(Cause::Loss, true, 0, 10 * M)),
            ("loss", |r| r.enter(Cause::Rto { backoffs: 0 }, false, 0, 10 * M)),
        ];
        for (name, setup) in states {
            for newly_lost in [0, M] {
                for ece in [false, true] {
                    for delivered in [false, true] {
                        let mut rec = Recovery::new(true, MSS);
                        setup(&mut rec);
                        let expect = match name {
                            _ if newly_lost > 0 && ["open", "disorder", "cwr"].contains(&name) => {
                                Some(Cause::Loss)
                            }
                            "loss" if newly_lost > 0 => Some(Cause::Loss),
                            "open" | "disorder" if ece && delivered => Some(Cause::Ecn),
                            _ => None,
                        };
                        let case = format!("{name} lost {newly_lost} ece {ece} delivered {delivered}");
                        // In these cases every newly lost segment is a lost retransmission.
                        assert_eq!(rec.signal(newly_lost, newly_lost > 0, ece, delivered), expect, "{case}");
                    }
                }
            }
        }
    }

    #[test]
    fn entering_sets_state_and_cause() {
        for (cause, state) in [
            (Cause::Loss, CaState::Recovery),
            (Cause::Ecn, CaState::Cwr),
            (Cause::Rto { backoffs: 2 }, CaState::Loss),
        ] {
            let mut rec = Recovery::new(true, MSS);
            rec.enter(cause, cause != Cause::Ecn, 10 * M, 12 * M);
            assert_eq!((rec.ca_state(), rec.open_cause()), (state, Some(cause)));
            assert_eq!(rec.in_prr(), cause != Cause::Ecn);
            assert_eq!((rec.recovery_point(), rec.recover_fs), (12 * M, 10 * M));
        }
    }

    #[test]
    fn episode_ends_at_the_recovery_point() {
        for (prr, ssthresh, cwnd_after) in [(true, 5 * M, 5 * M), (true, INF, 7 * M), (false, 5 * M, 7 * M)] {
            let mut rec = Recovery::new(true, MSS);
            rec.enter(Cause::Loss, prr, 0, 10 * M);
            let mut s = st(7 * M, ssthresh);
            assert_eq!(rec.finish(10 * M - 1, &mut s), None);
            assert_eq!((rec.ca_state(), s.cwnd), (CaState::Recovery, 7 * M));
            assert_eq!(rec.finish(10 * M, &mut s), Some(Cause::Loss));
            assert_eq!((rec.ca_state(), rec.open_cause(), s.cwnd), (CaState::Open, None, cwnd_after));
        }
        let mut rec = Recovery::new(true, MSS);
        assert_eq!(rec.finish(INF, &mut st(M, M)), None, "no episode");
    }

    #[test]
    fn disorder_while_sacks_or_dupacks_outside_episodes() {
        for (sacked, dupack, state) in [
            (false, false, CaState::Open),
            (true, false, CaState::Disorder),
            (false, true, CaState::Disorder),
        ] {
            let mut rec = Recovery::new(true, MSS);
            rec.count_dupack(false, dupack);
            rec.settle(sacked);
            assert_eq!(rec.ca_state(), state);
            rec.enter(Cause::Loss, true, 0, M);
            rec.settle(false);
            assert_eq!(rec.ca_state(), CaState::Recovery, "an episode keeps its state");
        }
    }

    #[test]
    fn delivered_data_with_and_without_sack() {
        let sack = Recovery::new(true, MSS);
        let reno = Recovery::new(false, MSS);
        // (delivered, is_dupack, acked, reno_consumed)
        assert_eq!(sack.delivered_data(3 * M, false, M, 0), 3 * M);
        assert_eq!(reno.delivered_data(0, true, 0, 0), M, "a duplicate ACK: one segment left");
        assert_eq!(reno.delivered_data(4 * M, false, 4 * M, 3), M, "three already counted");
        assert_eq!(reno.delivered_data(2 * M, false, 2 * M, 0), 2 * M);
        assert_eq!(reno.delivered_data(0, false, 0, 0), 0, "neither new data nor a duplicate");
    }

    /// Feeds PRR one ACK per entry (segments delivered, snd_una advanced, new loss) and sends
    /// whatever it allows; returns the segments sent per ACK and the final pipe.
    fn run_prr(
        rec: &mut Recovery,
        s: &mut CcState,
        mut pipe: u64,
        acks: &[(u64, bool, bool)],
    ) -> (Vec<u64>, u64) {
        let mut sent = Vec::new();
        for &(segments, una_advanced, newly_lost) in acks {
            pipe -= segments * M;
            rec.prr_update(s, segments * M, pipe, una_advanced, newly_lost);
            let n = s.cwnd.saturating_sub(pipe) / M;
            (0..n).for_each(|_| rec.on_sent(MSS));
            pipe += n * M;
            sent.push(n);
            assert!(s.cwnd <= pipe.max(s.ssthresh) + M, "never above ssthresh but for the forced segment");
        }
        (sent, pipe)
    }

    /// RFC 6937 with ssthresh = RecoverFS / 2 (RecoverFS = the window before the reduction, as
    /// Linux) and SACKs of two segments each: one segment per ACK while pipe > ssthresh, then
    /// PRR-SSRB sends what is delivered and no more, since no ACK advances snd_una.
    #[test]
    fn prr_sends_in_proportion_then_settles_at_ssthresh() {
        let mut rec = Recovery::new(true, MSS);
        rec.enter(Cause::Loss, true, 20 * M, 20 * M);
        let mut s = st(20 * M, 10 * M);
        let (sent, pipe) = run_prr(&mut rec, &mut s, 19 * M, &[(2, false, false); 9]);
        assert_eq!(sent, vec![1, 1, 1, 1, 1, 1, 1, 0, 2]);
        assert_eq!((pipe, s.cwnd), (10 * M, 10 * M));
    }

    /// Linux's PRR-SSRB adds its extra segment only on an ACK that advances snd_una and reports
    /// no new loss (RFC 6937 adds it on every ACK): into a full queue, SACKs must not send
    /// three segments for every two delivered.
    #[test]
    fn the_slow_start_bound_adds_a_segment_only_for_progress_without_new_loss() {
        for (una_advanced, newly_lost, expect) in
            [(false, false, 1), (false, true, 1), (true, true, 1), (true, false, 2)]
        {
            let mut rec = Recovery::new(true, MSS);
            rec.enter(Cause::Loss, true, 20 * M, 20 * M);
            rec.on_sent(MSS); // the fast retransmission went
            let mut s = st(20 * M, 10 * M);
            let (sent, _) = run_prr(&mut rec, &mut s, 5 * M, &[(1, una_advanced, newly_lost)]);
            assert_eq!(sent, vec![expect], "una_advanced {una_advanced} newly_lost {newly_lost}");
        }
    }

    /// After heavy loss (pipe far below ssthresh) cumulative ACKs let PRR-SSRB send what was
    /// delivered plus one segment, like slow start, and stop at ssthresh.
    #[test]
    fn prr_slow_start_reduction_bound_after_heavy_loss() {
        let mut rec = Recovery::new(true, MSS);
        rec.enter(Cause::Loss, true, 20 * M, 20 * M);
        let mut s = st(20 * M, 10 * M);
        let (sent, pipe) = run_prr(&mut rec, &mut s, 2 * M, &[(1, true, false); 9]);
        assert_eq!(sent, vec![2, 2, 2, 2, 2, 2, 2, 2, 1]);
        assert_eq!(pipe, 10 * M);
    }

    #[test]
    fn an_ack_that_delivers_nothing_leaves_cwnd_alone() {
        let mut rec = Recovery::new(true, MSS);
        rec.enter(Cause::Loss, true, 20 * M, 20 * M);
        let mut s = st(20 * M, 10 * M);
        rec.prr_update(&mut s, 0, 15 * M, false, false);
        assert_eq!(s.cwnd, 20 * M);
    }

    /// Linux `tcp_cwnd_reduction`: while nothing has been sent in the episode, at least one
    /// segment may go — the fast retransmission, or the first segment of an ECN reduction.
    #[test]
    fn the_first_segment_of_an_episode_always_goes() {
        for cause in [Cause::Loss, Cause::Ecn] {
            let mut rec = Recovery::new(true, MSS);
            rec.enter(cause, true, 20 * M, 20 * M);
            let mut s = st(20 * M, 2 * M);
            // In proportion: ceil(2/20 of one segment) is a tenth of a segment.
            rec.prr_update(&mut s, M, 15 * M, false, false);
            assert_eq!(s.cwnd, 16 * M, "{cause:?}");
            rec.on_sent(MSS);
            rec.prr_update(&mut s, M, 15 * M, false, false);
            assert_eq!(s.cwnd, 15 * M, "{cause:?}: only once");
        }
    }

    /// An infinite ssthresh (a controller that keeps none) never turns the bound negative.
    #[test]
    fn prr_with_an_infinite_ssthresh_is_bounded_by_delivery() {
        let mut rec = Recovery::new(true, MSS);
        rec.enter(Cause::Loss, true, 20 * M, 20 * M);
        rec.on_sent(MSS);
        let mut s = st(20 * M, INF);
        rec.prr_update(&mut s, 2 * M, 10 * M, true, false);
        assert_eq!(s.cwnd, 13 * M);
    }

    #[test]
    fn prr_out_counts_only_inside_an_episode() {
        let mut rec = Recovery::new(true, MSS);
        rec.on_sent(MSS);
        assert_eq!(rec.prr_out, 0);
        rec.enter(Cause::Ecn, true, 10 * M, 10 * M);
        rec.on_sent(MSS);
        assert_eq!(rec.prr_out, M);
        rec.finish(10 * M, &mut st(M, M));
        rec.on_sent(MSS);
        assert_eq!(rec.prr_out, M);
    }
}
