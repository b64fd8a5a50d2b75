//! Segment transmission (Linux `tcp_output.c`): which segment goes next, the congestion and
//! receive windows, the pacing gate, and the packets themselves (SYN, data, window probe).

use ccbench_aqm::Ecn;
use ccbench_cc::SentInfo;

use super::scoreboard::Seg;
use super::{ticks, Nanos, Phase, TcpSender};
use crate::packet::{Kind, Packet};

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
        while let Some(next) = self.next_segment() {
            if !self.window_allows(next, now) || !self.pacing_allows(next.len, now) {
                return;
            }
            match next.retx {
                Some(i) => self.send_segment(i, true, now, out),
                None => {
                    if self.inflight() == 0 {
                        self.idle_restart(now);
                    }
                    let i = self.sb.push(next.len);
                    self.send_segment(i, false, now, out);
                }
            }
        }
    }

    /// `None` when everything written is sent: then the flow is application-limited.
    fn next_segment(&mut self) -> Option<Next> {
        if let Some(i) = self.sb.next_retransmission() {
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

    fn send_segment(&mut self, i: usize, is_retx: bool, now: Nanos, out: &mut Vec<Packet>) {
        let tx = self.rate.on_send(now, self.inflight(), self.sb.seg(i).len, self.sb.lost_total());
        let &Seg { seq, len, .. } = self.sb.on_transmit(i, is_retx, tx);
        self.rec.on_sent(len);
        out.push(self.data_packet(seq, len, is_retx, now));
        self.stats.segments_sent += 1;
        self.stats.retransmits += is_retx as u64;
        self.stats.bytes_sent += len as u64;
        self.last_send_time = Some(now);
        self.timers.start_if_idle(&mut self.rto_timer, now);
        let path = self.path(now);
        let info = SentInfo { seq, bytes: len, is_retransmission: is_retx, inflight_after: self.inflight() };
        self.cc.on_packet_sent(&mut self.st, &path, &info);
    }

    /// RFC 3168 §6.1.5: retransmissions are never ECT, so a mark always means new data;
    /// §6.1.2: the first new segment after a reduction carries CWR.
    fn data_packet(&mut self, seq: u64, len: u32, is_retx: bool, now: Nanos) -> Packet {
        let mut p = Packet::new(self.flow, 0, Kind::Data, len + self.opt.header_bytes, now);
        p.seq = seq;
        p.len = len;
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.tsecr = self.ts_recent;
        p.is_retx = is_retx;
        if self.ecn_ok && !is_retx {
            p.ecn = Ecn::Ect0;
            p.cwr = std::mem::take(&mut self.cwr_pending);
        }
        p
    }

    /// RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR (and is itself Not-ECT).
    pub(super) fn send_syn(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.flow, 0, Kind::Syn, self.opt.header_bytes + 8, now);
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.ece = self.opt.ecn;
        p.cwr = self.opt.ecn;
        self.syn_sent_at = now;
        out.push(p);
        self.timers.restart(&mut self.rto_timer, now);
    }

    /// The peer's window is closed and nothing is outstanding: an empty segment at `snd_una`
    /// elicits an ACK with the current window; back off like the RTO until it opens.
    pub(super) fn send_window_probe(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut p = Packet::new(self.flow, 0, Kind::Data, self.opt.header_bytes, now);
        p.seq = self.sb.snd_una();
        p.tsval = ticks(now, self.opt.ts_granularity);
        p.tsecr = self.ts_recent;
        out.push(p);
        self.timers.back_off();
        self.timers.restart(&mut self.rto_timer, now);
    }
}
