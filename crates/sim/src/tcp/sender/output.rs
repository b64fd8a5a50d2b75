//! Segment transmission (Linux `tcp_output.c`): which segment goes next, the congestion and
//! receive windows, the pacing gate, and the packets themselves (SYN, data, window probe).

use ccbench_aqm::Ecn;
use ccbench_cc::SentInfo;

use super::scoreboard::Seg;
use super::timers::Pending;
use super::{ticks, Nanos, Phase, TcpSender};
use crate::packet::{Kind, Packet};
use crate::tcp::accecn;

/// The segment `transmit` would send next.
#[derive(Clone, Copy)]
struct Next {
    /// Index of a lost segment to retransmit; `None` for new data at `snd_nxt`.
    retx: Option<usize>,
    len: u64,
}

impl TcpSender {
    /// Sends whatever the windows, pacing and the application allow: retransmissions first,
    /// then new data (RFC 6675 NextSeg).
    pub fn transmit(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.phase != Phase::Established {
            return;
        }
        let mut sent_new = false;
        while let Some(next) = self.next_segment() {
            if !self.window_allows(next, now) || !self.pacing_allows(next.len, now) {
                break;
            }
            match next.retx {
                Some(i) => self.send_segment(i, true, now, out),
                None => {
                    self.send_new_segment(next.len, now, out);
                    sent_new = true;
                }
            }
        }
        if sent_new {
            self.after_new_data(now);
        }
    }

    fn send_new_segment(&mut self, len: u64, now: Nanos, out: &mut Vec<Packet>) {
        if self.inflight() == 0 {
            self.idle_restart(now);
        }
        let i = self.sb.push(len);
        self.send_segment(i, false, now, out);
    }

    /// Linux `tcp_event_new_data_sent` and the end of `tcp_write_xmit`: new data moves a loss
    /// probe back to a full probe timeout from now.
    fn after_new_data(&mut self, now: Nanos) {
        if !self.schedule_loss_probe(now, false) && self.timers.pending() == Pending::Probe {
            self.rearm_rto(now);
        }
    }

    /// The tail loss probe's new segment: it goes whatever cwnd and pacing say, if the
    /// application has data and the peer's window takes it (Linux `tcp_write_xmit` with
    /// `push_one = 2`). Returns whether it was sent.
    pub(super) fn send_probe_of_new_data(&mut self, now: Nanos, out: &mut Vec<Packet>) -> bool {
        let snd_nxt = self.sb.snd_nxt();
        let len = self.app_end.saturating_sub(snd_nxt).min(self.mss());
        if len == 0 || snd_nxt + len > self.sb.snd_una() + self.snd_wnd {
            return false;
        }
        self.send_new_segment(len, now, out);
        true
    }

    /// `None` when everything written is sent: then the flow is application-limited.
    fn next_segment(&mut self) -> Option<Next> {
        if let Some(i) = self.sb.next_retransmission().filter(|_| !self.new_data_only) {
            return Some(Next { retx: Some(i), len: self.sb.seg(i).len as u64 });
        }
        let snd_nxt = self.sb.snd_nxt();
        if snd_nxt < self.app_end {
            return Some(Next { retx: None, len: (self.app_end - snd_nxt).min(self.mss()) });
        }
        self.rate.on_app_limited(self.inflight(), self.st.cwnd);
        // Linux tcp_is_cwnd_limited: in slow start, using more than half the window counts.
        self.cwnd_limited = self.st.in_slow_start() && 2 * self.inflight() > self.st.cwnd;
        None
    }

    /// The congestion window bounds everything; the peer's window bounds new data only
    /// (retransmissions lie below data it already accepted).
    fn window_allows(&mut self, next: Next, now: Nanos) -> bool {
        if self.inflight() + next.len > self.st.cwnd {
            self.cwnd_limited = true;
            return false;
        }
        if next.retx.is_none() && self.sb.snd_nxt() + next.len > self.sb.snd_una() + self.snd_wnd {
            self.cwnd_limited = false;
            if self.sb.flight_size() == 0 {
                // Nothing in flight will bring a window update: the persist timer will.
                self.timers.start_if_idle(&mut self.rto_timer, now);
            }
            return false;
        }
        true
    }

    /// One segment per `wire bytes / pacing rate`; the send timer releases the next one (as
    /// Linux's `tcp_pacing_check` with the internal pacer).
    fn pacing_allows(&mut self, len: u64, now: Nanos) -> bool {
        let Some(rate) = self.st.pacing_rate else {
            return true;
        };
        if now < self.next_send_time {
            self.send_timer.set(self.next_send_time);
            self.cwnd_limited = true;
            return false;
        }
        let wire = len + self.opt.header_bytes as u64;
        let gap = (wire as f64 * 1e9 / rate.max(1.0)) as Nanos;
        self.next_send_time = self.next_send_time.max(now) + gap;
        true
    }

    /// RFC 5681 §4.1: after an idle period longer than the RTO, restart from at most IW.
    fn idle_restart(&mut self, now: Nanos) {
        let Some(last) = self.last_send_time else {
            return;
        };
        let idle = now - last;
        if idle > self.timers.rtt().rto() {
            let iw = self.opt.initial_window as u64 * self.mss();
            self.st.cwnd = self.st.cwnd.min(iw);
            let path = self.path(now);
            self.cc.on_idle_restart(&mut self.st, &path, idle);
            self.clamp_cwnd();
        }
    }

    pub(super) fn send_segment(&mut self, i: usize, is_retx: bool, now: Nanos, out: &mut Vec<Packet>) {
        let tx = self.rate.on_send(now, self.inflight(), self.sb.seg(i).len, self.sb.lost_total());
        let &Seg { seq, len, .. } = self.sb.on_transmit(i, is_retx, tx);
        self.rec.on_sent(len);
        out.push(self.data_packet(seq, len, is_retx, now));
        self.stats.segments_sent += 1;
        self.stats.retransmits += is_retx as u64;
        self.stats.bytes_sent += len as u64;
        self.last_send_time = Some(now);
        if is_retx {
            self.rack.on_retransmit(seq, now);
            self.undo.on_retransmit(ticks(now, self.opt.ts_granularity));
        }
        if is_retx && i == 0 && self.timers.pending() != Pending::Reorder {
            // Linux `tcp_xmit_retransmit_queue`: resending the head restarts the RTO.
            self.timers.restart(&mut self.rto_timer, now);
        } else {
            self.timers.start_if_idle(&mut self.rto_timer, now);
        }
        let path = self.path(now);
        let info = SentInfo { seq, bytes: len, is_retransmission: is_retx, inflight_after: self.inflight() };
        self.cc.on_packet_sent(&mut self.st, &path, &info);
    }

    /// RFC 3168 §6.1.5: retransmissions are never ECT, so a mark always means new data;
    /// §6.1.2: the first new segment after a reduction carries CWR. An L4S flow sends ECT(1)
    /// (RFC 9331 §4.1).
    fn data_packet(&mut self, seq: u64, len: u32, is_retx: bool, now: Nanos) -> Packet {
        let mut p = Packet::new(self.flow, Kind::Data, len + self.opt.header_bytes, now);
        p.seq = seq;
        p.len = len;
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.tsecr = self.ts_recent;
        p.is_retx = is_retx;
        if self.ecn_ok && !is_retx {
            p.ecn = if self.opt.ect1 { Ecn::Ect1 } else { Ecn::Ect0 };
            p.cwr = std::mem::take(&mut self.cwr_pending);
        }
        p
    }

    /// RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR (and is itself Not-ECT); an
    /// AccECN SYN sets AE too (RFC 9768 §3.1.1).
    pub(super) fn send_syn(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.flow, Kind::Syn, self.opt.header_bytes + 8, now);
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.ece = self.opt.ecn;
        p.cwr = self.opt.ecn;
        if self.opt.ecn && self.opt.accecn {
            p.ace = accecn::SYN_REQUEST;
        }
        self.syn_sent_at = now;
        out.push(p);
        self.timers.restart(&mut self.rto_timer, now);
    }

    /// The peer's window is closed and nothing is outstanding: an empty segment at `snd_una`
    /// elicits an ACK with the current window; back off like the RTO until it opens.
    pub(super) fn send_window_probe(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.flow, Kind::Data, self.opt.header_bytes, now);
        p.seq = self.sb.snd_una();
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.tsecr = self.ts_recent;
        out.push(p);
        self.timers.back_off();
        self.timers.restart(&mut self.rto_timer, now);
    }
}

#[cfg(test)]
mod tests {
    use ccbench_cc::{AckSample, CcState, CongestionControl, CongestionEvent, PathInfo, Reaction};

    use super::*;
    use crate::scenario::TcpOptions;

    const MS: Nanos = 1_000_000;
    const M: u64 = 1448;

    /// A controller that only sets a window and a pacing rate, so what `transmit` does is the
    /// stack's own doing.
    struct Fixed {
        cwnd: u64,
        pacing: Option<f64>,
    }

    impl CongestionControl for Fixed {
        fn name(&self) -> &'static str {
            "fixed"
        }
        fn init(&mut self, st: &mut CcState, _: &PathInfo) {
            st.cwnd = self.cwnd;
            st.pacing_rate = self.pacing;
        }
        fn on_ack(&mut self, _: &mut CcState, _: &PathInfo, _: &AckSample) {}
        fn on_congestion(&mut self, _: &mut CcState, _: &PathInfo, _: &CongestionEvent) -> Reaction {
            Reaction::Ignore
        }
    }

    fn sender(cwnd: u64, pacing: Option<f64>) -> TcpSender {
        let opt = TcpOptions { handshake: false, ..TcpOptions::default() };
        TcpSender::new(opt, 0, Box::new(Fixed { cwnd, pacing }), None)
    }

    fn ack(s: &mut TcpSender, ack: u64, window: u64, now: Nanos) -> Vec<Packet> {
        let mut p = Packet::new(0, Kind::Ack, 52, now);
        (p.ack, p.window, p.tsval) = (ack, window, (now / MS) as u32);
        let mut out = Vec::new();
        s.on_packet(&p, now, &mut out);
        out
    }

    /// 1500 wire bytes at 1.5 MB/s: one segment per millisecond, released by the send timer.
    #[test]
    fn pacing_spaces_segments_and_banks_no_credit() {
        let mut s = sender(100 * M, Some(1_500_000.0));
        let mut out = Vec::new();
        s.start(0, &mut out);
        assert_eq!(out.len(), 1, "the window would allow 100");
        assert_eq!(s.send_timer.deadline(), Some(MS));
        for (now, sent, next) in [(MS, 1, 2 * MS), (MS + MS / 2, 0, 2 * MS), (10 * MS, 1, 11 * MS)] {
            out.clear();
            s.on_send_timer(now, &mut out);
            assert_eq!(out.len(), sent, "at {now} ns");
            assert_eq!(s.send_timer.deadline(), Some(next), "at {now} ns");
        }
    }

    /// RFC 5681 §4.1: new data after more than one RTO of silence starts from at most IW;
    /// a shorter pause keeps the window.
    #[test]
    fn idle_longer_than_the_rto_restarts_from_the_initial_window() {
        for (idle, expect) in [(5000 * MS, 10), (100 * MS, 20)] {
            let mut s = sender(20 * M, None);
            let mut out = Vec::new();
            s.start(0, &mut out);
            assert_eq!(out.len(), 20);
            // Everything acknowledged, but the peer's window closes: nothing more may go out.
            assert!(ack(&mut s, 20 * M, 0, 100 * MS).is_empty());
            assert_eq!(s.timers.rto(), 300 * MS, "SRTT 100 ms + 200 ms floor");
            let out = ack(&mut s, 20 * M, 64 << 20, 100 * MS + idle);
            assert_eq!(out.len(), expect, "idle {} ms", idle / MS);
        }
    }
}
