//! The TCP data receiver: reassembly, SACK generation (RFC 2018), delayed ACKs with Linux's
//! quick-ACK start (RFC 5681 §4.2), timestamp echo rules (RFC 7323 §4.3), ECN-Echo until CWR
//! (RFC 3168 §6.1.3), and an advertised window whose right edge never moves left (RFC 7323 §2.4),
//! optionally bounded by a receiver-side window controller (rLEDBAT).

use ccbench_aqm::Ecn;
use ccbench_cc::{ReceiveWindowControl, ReceivedSegment, ReceiverInfo};

use super::accecn;
use crate::engine::Timer;
use crate::packet::{Kind, Packet, MAX_SACK_BLOCKS};
use crate::scenario::TcpOptions;

pub type Nanos = u64;

/// The largest window a 16-bit field carries before scaling.
const MAX_UNSCALED_WINDOW: u64 = 65_535;
/// Largest GRO aggregate (Linux `GRO_MAX_SIZE` before BIG TCP, 6.3).
const GRO_MAX_BYTES: u64 = 65_536;
/// Largest window scale whose unit (2 KiB) is still about one MSS: receiver-side window control
/// needs ≤ 11 (rLEDBAT paper L201).
pub const MAX_FINE_WSCALE: u8 = 11;

/// The AccECN option with its three 24-bit counters (RFC 9768 §3.2.3: 11 bytes), padded to a
/// word: Linux's default `tcp_ecn_option = 2` sends it on every ACK where it fits.
const ACCECN_OPTION_BYTES: u32 = 12;

pub struct TcpReceiver {
    opt: TcpOptions,
    flow: u32,
    rcv_nxt: u64,
    /// Out-of-order ranges above `rcv_nxt`, sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    ooo_bytes: u64,
    /// Range containing the most recent out-of-order arrival (first SACK block).
    recent_block: Option<(u64, u64)>,
    /// A segment that arrived twice, reported once as a D-SACK block (RFC 2883).
    dsack: Option<(u64, u64)>,
    ts_recent: u32,
    /// `rcv_nxt` carried by the last ACK sent.
    last_ack_sent: u64,
    unacked_segments: u32,
    pub(crate) delack_timer: Timer,
    /// End of the GRO aggregate being built (`gro`): no segment came within the gap.
    pub(crate) gro_timer: Timer,
    /// Segments held in the GRO aggregate, and the timestamp they share.
    gro_segments: u32,
    gro_tsval: u32,
    /// Wake-up requested by the window controller.
    pub(crate) control_timer: Timer,
    quickack_left: u32,
    ecn_ok: bool,
    ece_pending: bool,
    /// AccECN's counters, once negotiated (then `ece_pending` stays unused).
    accecn: Option<accecn::Counters>,
    /// The last data segment arrived CE-marked (AccECN's change-triggered ACK).
    last_ce: bool,
    highest_seen: u64,
    wscale: u8,
    right_edge: u64,
    /// `ack + window` of the last ACK sent, and the first time one moved left (invariant).
    last_edge_sent: u64,
    edge_violation: Option<String>,
    flow_control_violation: Option<String>,
    window_control: Option<Box<dyn ReceiveWindowControl>>,
    last_owd: Nanos,
    /// Payload delivered in order to the application (goodput).
    pub delivered: u64,
    /// Wire bytes of data segments received, duplicates included (throughput).
    pub wire_bytes_received: u64,
    pub acks_sent: u64,
}

/// Smallest shift that lets `buf` fit the 16-bit window field (RFC 7323 §2.3, at most 14).
pub fn wscale_for(buf: u64) -> u8 {
    let mut shift = 0u8;
    while shift < 14 && (buf >> shift) > MAX_UNSCALED_WINDOW {
        shift += 1;
    }
    shift
}

impl TcpReceiver {
    pub fn new(opt: TcpOptions, flow: u32, window_control: Option<Box<dyn ReceiveWindowControl>>) -> Self {
        let wscale = opt.wscale.unwrap_or_else(|| wscale_for(opt.rcv_buf));
        TcpReceiver {
            flow,
            rcv_nxt: 0,
            ooo: Vec::with_capacity(16),
            ooo_bytes: 0,
            recent_block: None,
            dsack: None,
            ts_recent: 0,
            last_ack_sent: 0,
            unacked_segments: 0,
            delack_timer: Timer::default(),
            gro_timer: Timer::default(),
            gro_segments: 0,
            gro_tsval: 0,
            control_timer: Timer::default(),
            quickack_left: opt.quickack_segments,
            ecn_ok: opt.ecn && !opt.handshake,
            ece_pending: false,
            accecn: (opt.ecn && opt.accecn && !opt.handshake).then(accecn::Counters::default),
            last_ce: false,
            highest_seen: 0,
            wscale,
            right_edge: 0,
            last_edge_sent: 0,
            edge_violation: None,
            flow_control_violation: None,
            window_control,
            last_owd: 0,
            delivered: 0,
            wire_bytes_received: 0,
            acks_sent: 0,
            opt,
        }
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    fn ticks(&self, now: Nanos) -> u32 {
        (now / self.opt.ts_granularity) as u32
    }

    fn info(&self, now: Nanos) -> ReceiverInfo {
        ReceiverInfo {
            now,
            mss: self.opt.mss,
            rcv_nxt: self.rcv_nxt,
            flow_control_window: self.opt.rcv_buf.saturating_sub(self.ooo_bytes),
            wscale: self.wscale,
            ts_granularity: self.opt.ts_granularity,
        }
    }

    pub fn on_packet(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        match p.kind {
            Kind::Syn => {
                self.ecn_ok = self.opt.ecn && p.ece && p.cwr;
                let accecn = self.ecn_ok && self.opt.accecn && p.ace == accecn::SYN_REQUEST;
                self.accecn = accecn.then(accecn::Counters::default);
                self.ts_recent = p.tsval;
                let mut a = Packet::new(self.flow, Kind::SynAck, self.opt.header_bytes + 8, now);
                // RFC 9768 §3.1.1: AccECN is accepted in the ACE field, classic ECN by ECE alone.
                a.ece = self.ecn_ok && !accecn;
                a.ace = if accecn { accecn::SYN_ACK_ACCEPT } else { a.ece as u8 };
                a.tsval = self.ticks(now);
                a.tsecr = self.ts_recent;
                // SYN windows are never scaled (RFC 7323 §2.2).
                a.window = self.opt.rcv_buf.min(MAX_UNSCALED_WINDOW);
                out.push(a);
            }
            Kind::Data => self.on_data(p, now, out),
            _ => {}
        }
    }

    /// The one-way delay this host measures: its own clock (offset and skewed against the
    /// sender's, `clock_offset`, `clock_skew_ppm`) minus the sender's stamp, as a wrapping
    /// difference (negative when this clock is behind); 0 is kept for "no sample".
    fn measured_owd(&self, now: Nanos, sent_at: Nanos) -> Nanos {
        let drift = (now as f64 * self.opt.clock_skew_ppm * 1e-6) as i64;
        let clock = (now as i64).wrapping_add(self.opt.clock_offset).wrapping_add(drift);
        match clock.wrapping_sub(sent_at as i64) as u64 {
            0 => 1,
            owd => owd,
        }
    }

    fn on_data(&mut self, p: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        // Linux `tcp_gro_receive` merges only the next in-order segment with the same options
        // (so the same timestamp) and no CE; anything else ends the aggregate first.
        if self.gro_segments > 0 && (p.seq != self.rcv_nxt || p.tsval != self.gro_tsval || p.ecn == Ecn::Ce) {
            self.flush_gro(now, out);
        }
        self.wire_bytes_received += p.wire_bytes as u64;
        self.last_owd = self.measured_owd(now, p.sent_at);
        let end = p.seq + p.len as u64;
        let is_retransmission = end <= self.highest_seen;
        let out_of_order = p.seq > self.rcv_nxt;

        let mut immediate = self.note_ecn(p);

        if p.seq <= self.rcv_nxt && end > self.rcv_nxt {
            if p.seq <= self.last_ack_sent {
                // RFC 7323 §4.3: echo the earliest unacknowledged segment (delayed ACKs) or
                // the segment that filled a hole.
                self.ts_recent = p.tsval;
            }
            let before = self.rcv_nxt;
            self.rcv_nxt = end;
            let had_hole = !self.ooo.is_empty();
            while let Some(&(s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo_bytes -= e - s;
                self.ooo.remove(0);
            }
            if self.recent_block.is_some_and(|(_, e)| e <= self.rcv_nxt) {
                self.recent_block = None;
            }
            self.delivered += self.rcv_nxt - before;
            // A sub-MSS segment (end of a write) is ACKed as soon as the application drains it,
            // as Linux does via ICSK_ACK_PUSHED; our application reads immediately.
            immediate |= had_hole || p.len < self.opt.mss;
        } else if out_of_order {
            if self.ooo.iter().any(|&(s, e)| s <= p.seq && end <= e) {
                self.dsack = Some((p.seq, end));
            }
            self.insert_ooo(p.seq, end);
            immediate = true;
        } else {
            // Entirely old data: a duplicate ACK tells the sender where we are (Linux
            // `tcp_dsack_set`: and that this segment came twice).
            self.dsack = Some((p.seq, end));
            immediate = true;
        }
        self.highest_seen = self.highest_seen.max(end);

        let info = self.info(now);
        if let Some(ctl) = self.window_control.as_mut() {
            let seg = ReceivedSegment {
                now,
                seq: p.seq,
                len: p.len,
                tsval: self.opt.timestamps.then_some(p.tsval),
                tsecr: self.opt.timestamps.then_some(p.tsecr),
                ce: p.ecn == Ecn::Ce,
                is_retransmission,
                out_of_order,
            };
            ctl.on_segment_received(&info, &seg);
        }
        self.sync_control_timer();

        self.unacked_segments += 1;
        if self.opt.gro > 0 && !immediate {
            self.hold_for_gro(p.tsval, now, out);
        } else {
            self.ack_policy(immediate, now, out);
        }
    }

    /// The segment's ECN field, counted as the negotiated feedback needs; whether it calls for
    /// an ACK at once.
    fn note_ecn(&mut self, p: &Packet) -> bool {
        let ce = self.ecn_ok && p.ecn == Ecn::Ce;
        if let Some(counters) = &mut self.accecn {
            counters.on_segment(ce, p.len);
            // RFC 9768 §3.2.2.5.1: a CE mark after an unmarked segment is ACKed at once, so
            // the sender hears of the change within a segment.
            let changed = ce && !self.last_ce;
            self.last_ce = ce;
            return changed;
        }
        if p.cwr {
            self.ece_pending = false;
        }
        // RFC 3168 §6.1.3: ECE on every ACK until CWR; Linux enters quick-ACK mode on CE so the
        // echo is not delayed.
        let first = ce && !self.ece_pending;
        self.ece_pending |= ce;
        first
    }

    /// Linux's ACK decision for one received skb (`__tcp_ack_snd_check`): at once in quick-ACK
    /// mode, when asked to, or with more than one full segment unacknowledged; else after the
    /// delayed-ACK timer.
    fn ack_policy(&mut self, immediate: bool, now: Nanos, out: &mut Vec<Packet>) {
        let quick = self.quickack_left > 0;
        self.quickack_left = self.quickack_left.saturating_sub(1);
        if !self.opt.delayed_ack || quick || immediate || self.unacked_segments >= 2 {
            self.send_ack(now, out);
        } else if !self.delack_timer.is_set() {
            self.delack_timer.set(now + self.opt.delayed_ack_timeout);
        }
    }

    /// Receive offload (GRO): segments arriving back to back — each within `gro` of the one
    /// before — reach TCP as one skb, which gets one ACK decision, so a burst (a token bucket's
    /// after an idle spell) is acknowledged by one ACK for up to 64 KB. The aggregate ends when
    /// the gap passes (the NAPI poll finds the ring empty) or it is full.
    fn hold_for_gro(&mut self, tsval: u32, now: Nanos, out: &mut Vec<Packet>) {
        self.gro_segments += 1;
        self.gro_tsval = tsval;
        let full = (self.gro_segments as u64 + 1) * self.opt.mss as u64 > GRO_MAX_BYTES;
        if full {
            self.flush_gro(now, out);
        } else {
            self.gro_timer.set(now + self.opt.gro);
        }
    }

    /// The GRO aggregate reaches TCP: one ACK decision for all its segments.
    fn flush_gro(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.gro_segments > 0 {
            self.gro_segments = 0;
            self.gro_timer.cancel();
            self.ack_policy(false, now, out);
        }
    }

    pub fn on_gro_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.flush_gro(now, out);
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        let mut s = start;
        let mut e = end;
        let mut i = 0;
        // Merge with every overlapping or adjacent range.
        while i < self.ooo.len() {
            let (rs, re) = self.ooo[i];
            if re < s {
                i += 1;
                continue;
            }
            if rs > e {
                break;
            }
            s = s.min(rs);
            e = e.max(re);
            self.ooo_bytes -= re - rs;
            self.ooo.remove(i);
        }
        self.ooo.insert(i, (s, e));
        self.ooo_bytes += e - s;
        self.recent_block = Some((s, e));
    }

    pub fn on_delack_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if self.unacked_segments > 0 {
            self.send_ack(now, out);
        }
    }

    pub fn on_control_timer(&mut self, now: Nanos) {
        let info = self.info(now);
        if let Some(ctl) = self.window_control.as_mut() {
            ctl.on_timer(&info);
        }
        self.sync_control_timer();
    }

    /// Mirror the window controller's next wake-up into `control_timer`.
    pub fn sync_control_timer(&mut self) {
        match self.window_control.as_ref().and_then(|c| c.next_timer()) {
            Some(t) if self.control_timer.deadline() != Some(t) => self.control_timer.set(t),
            Some(_) => {}
            None => self.control_timer.cancel(),
        }
    }

    /// The window to advertise: buffer space, bounded by the window controller, rounded up to the
    /// scale unit, and never moving the right edge left.
    fn advertised_window(&mut self) -> u64 {
        let flow_control = self.opt.rcv_buf.saturating_sub(self.ooo_bytes);
        let target = self.window_control.as_ref().and_then(|c| c.window_target());
        let mut wnd = self.on_scale(target.map_or(flow_control, |t| t.min(flow_control)));
        let edge = self.rcv_nxt + wnd;
        if edge < self.right_edge {
            wnd = self.right_edge - self.rcv_nxt;
        } else {
            self.right_edge = edge;
        }
        self.note_flow_control(wnd, self.on_scale(flow_control));
        wnd
    }

    /// `bytes` as the header carries it: rounded up to the scale unit, at most the largest field.
    fn on_scale(&self, bytes: u64) -> u64 {
        let unit = 1u64 << self.wscale;
        (bytes.div_ceil(unit) * unit).min(MAX_UNSCALED_WINDOW << self.wscale)
    }

    /// Eq. (5), L178: a window controller only lowers the window, so a flow is never more
    /// aggressive than its sender's own controller. Record the first ACK whose edge passed both
    /// the plain receiver's edge and the edge already promised.
    fn note_flow_control(&mut self, wnd: u64, plain: u64) {
        let allowed = (self.rcv_nxt + plain).max(self.last_edge_sent);
        if self.rcv_nxt + wnd > allowed && self.flow_control_violation.is_none() {
            self.flow_control_violation = Some(format!(
                "flow {}: advertised {wnd} B, above the flow-control window {plain} B",
                self.flow
            ));
        }
    }

    /// Why this receiver's window control works differently than configured, if it does: a
    /// window scale too coarse for it (paper L201), or what its controller says (no timestamps).
    pub fn notes(&self) -> Vec<String> {
        let Some(ctl) = self.window_control.as_ref() else { return Vec::new() };
        let mut notes = ctl.notes();
        if self.wscale > MAX_FINE_WSCALE {
            let unit = 1u64 << self.wscale;
            notes.push(format!(
                "window scale {} > {MAX_FINE_WSCALE}: {} moves its window in steps of {unit} B ({:.1} MSS), \
                 too coarse to hold a small window (rLEDBAT paper L201); lower wscale or rcv_buf",
                self.wscale,
                ctl.name(),
                unit as f64 / self.opt.mss.max(1) as f64
            ));
        }
        notes
    }

    /// Record the first advertised right edge left of its predecessor (RFC 7323 §2.4).
    fn note_edge(&mut self, now: Nanos, edge: u64) {
        if edge < self.last_edge_sent && self.edge_violation.is_none() {
            let last = self.last_edge_sent;
            self.edge_violation =
                Some(format!("flow {}: right edge moved left at t={now}ns: {last} -> {edge}", self.flow));
        }
        self.last_edge_sent = self.last_edge_sent.max(edge);
    }

    /// The advertised right edge never moved left, and never passed the flow-control window.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.edge_violation.clone().or_else(|| self.flow_control_violation.clone()).map_or(Ok(()), Err)
    }

    fn send_ack(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        let mut a = Packet::new(self.flow, Kind::Ack, self.opt.header_bytes, now);
        a.ack = self.rcv_nxt;
        let dsack = self.dsack.take().filter(|_| self.opt.sack);
        if self.opt.sack && (!self.ooo.is_empty() || dsack.is_some()) {
            let mut n = 0usize;
            if let Some(b) = dsack {
                a.sack[0] = b;
                n = 1;
            }
            if let Some(b) = self.recent_block {
                a.sack[n] = b;
                n += 1;
            }
            // Then the highest other ranges: the sender's scoreboard accumulates them.
            for &b in self.ooo.iter().rev() {
                if n == MAX_SACK_BLOCKS {
                    break;
                }
                if Some(b) != self.recent_block {
                    a.sack[n] = b;
                    n += 1;
                }
            }
            a.sack_count = n as u8;
            a.wire_bytes += 2 + 8 * n as u32 + 2; // SACK option plus padding
        }
        a.window = self.advertised_window();
        self.note_edge(now, a.ack + a.window);
        a.tsval = self.ticks(now);
        a.tsecr = self.ts_recent;
        a.ece = self.ece_pending;
        if let Some(counters) = &self.accecn {
            (a.ace, a.ceb) = counters.echo();
            a.wire_bytes += ACCECN_OPTION_BYTES;
        }
        a.echo_owd = self.last_owd;
        let info = self.info(now);
        if let Some(ctl) = self.window_control.as_mut() {
            ctl.on_segment_sent(&info, self.opt.timestamps.then_some(a.tsval), a.window);
        }
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.delack_timer.cancel();
        self.gro_segments = 0;
        self.gro_timer.cancel();
        self.acks_sent += 1;
        out.push(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> TcpOptions {
        TcpOptions { handshake: false, mss: 1000, ..TcpOptions::default() }
    }

    fn data(seq: u64, len: u32, now: Nanos) -> Packet {
        let mut p = Packet::new(0, Kind::Data, len + 52, now);
        p.seq = seq;
        p.len = len;
        p.tsval = (now / 1_000_000) as u32;
        p
    }

    #[test]
    fn delayed_ack_every_second_segment_after_quickack() {
        let mut r = TcpReceiver::new(TcpOptions { quickack_segments: 0, ..opts() }, 0, None);
        let mut out = Vec::new();
        r.on_packet(&data(0, 1000, 1), 1, &mut out);
        assert!(out.is_empty());
        assert!(r.delack_timer.is_set());
        r.on_packet(&data(1000, 1000, 2), 2, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].ack, 2000);
        assert!(!r.delack_timer.is_set());
    }

    /// GRO at 50 µs: five segments 12 µs apart (a 1 Gbit/s burst) in one timestamp tick are one
    /// aggregate, ACKed once when the gap passes (48 + 50 µs); without GRO the same burst draws
    /// an ACK every second segment. A segment of the next tick ends the aggregate first.
    #[test]
    fn gro_acknowledges_a_back_to_back_burst_once() {
        const US: Nanos = 1_000;
        let burst = |r: &mut TcpReceiver, out: &mut Vec<Packet>| {
            for k in 0..5u64 {
                r.on_packet(&data(k * 1000, 1000, k * 12 * US), k * 12 * US, out);
            }
        };
        let mut plain = TcpReceiver::new(TcpOptions { quickack_segments: 0, ..opts() }, 0, None);
        let mut out = Vec::new();
        burst(&mut plain, &mut out);
        assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), [2000, 4000]);

        let mut r = TcpReceiver::new(TcpOptions { quickack_segments: 0, gro: 50 * US, ..opts() }, 0, None);
        let mut out = Vec::new();
        burst(&mut r, &mut out);
        assert!(out.is_empty(), "held while the burst lasts");
        assert_eq!(r.gro_timer.deadline(), Some(98 * US));
        r.on_gro_timer(98 * US, &mut out);
        assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), [5000], "one ACK for the aggregate");

        // Two segments in tick 0 and one in tick 1: the new tick flushes the first two.
        let mut r = TcpReceiver::new(TcpOptions { quickack_segments: 0, gro: 50 * US, ..opts() }, 0, None);
        let mut out = Vec::new();
        r.on_packet(&data(0, 1000, 990 * US), 990 * US, &mut out);
        r.on_packet(&data(1000, 1000, 995 * US), 995 * US, &mut out);
        r.on_packet(&data(2000, 1000, 1_001 * US), 1_001 * US, &mut out);
        assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), [2000]);
        assert!(r.gro_timer.is_set());
    }

    #[test]
    fn quickack_acks_every_segment_at_start() {
        let mut r = TcpReceiver::new(TcpOptions { quickack_segments: 2, ..opts() }, 0, None);
        let mut out = Vec::new();
        for i in 0..3 {
            r.on_packet(&data(i * 1000, 1000, i + 1), i + 1, &mut out);
        }
        assert_eq!(out.len(), 2, "two quick ACKs, then the third waits for a partner");
    }

    #[test]
    fn out_of_order_is_acked_at_once_with_sack_and_hole_fill_too() {
        let mut r = TcpReceiver::new(TcpOptions { quickack_segments: 0, ..opts() }, 0, None);
        let mut out = Vec::new();
        const MS: Nanos = 1_000_000;
        r.on_packet(&data(0, 1000, MS), MS, &mut out);
        r.on_packet(&data(2000, 1000, 2 * MS), 2 * MS, &mut out);
        r.on_packet(&data(4000, 1000, 3 * MS), 3 * MS, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].ack, 1000);
        assert_eq!(out[1].sack_blocks(), &[(4000, 5000), (2000, 3000)]);
        assert_eq!(out[1].tsecr, 1, "out of order: echo the last in-order segment");
        r.on_packet(&data(1000, 1000, 4 * MS), 4 * MS, &mut out);
        assert_eq!(out[2].ack, 3000);
        assert_eq!(out[2].sack_blocks(), &[(4000, 5000)]);
        assert_eq!(out[2].tsecr, 4, "hole fill echoes the filling segment's TSval");
        assert_eq!(r.delivered, 3000);
    }

    #[test]
    fn ece_is_repeated_until_cwr() {
        let mut r = TcpReceiver::new(TcpOptions { ecn: true, delayed_ack: false, ..opts() }, 0, None);
        let mut out = Vec::new();
        let mut p = data(0, 1000, 1);
        p.ecn = Ecn::Ce;
        r.on_packet(&p, 1, &mut out);
        r.on_packet(&data(1000, 1000, 2), 2, &mut out);
        let mut c = data(2000, 1000, 3);
        c.cwr = true;
        r.on_packet(&c, 3, &mut out);
        let eces: Vec<bool> = out.iter().map(|a| a.ece).collect();
        assert_eq!(eces, vec![true, true, false]);
    }

    #[test]
    fn with_delayed_acks_a_ce_segment_is_acked_at_once_and_ece_repeats_until_cwr() {
        let mut r = TcpReceiver::new(TcpOptions { ecn: true, delayed_ack: true, ..opts() }, 0, None);
        r.quickack_left = 0;
        let mut out = Vec::new();
        r.on_packet(&data(0, 1000, 1), 1, &mut out);
        assert!(out.is_empty(), "first of two segments waits for the delayed ACK");
        let mut ce = data(1000, 1000, 2);
        ce.ecn = Ecn::Ce;
        r.on_packet(&ce, 2, &mut out);
        r.on_packet(&data(2000, 1000, 3), 3, &mut out);
        assert_eq!(out.len(), 1, "the CE segment is acknowledged at once");
        assert!(out[0].ece && out[0].ack == 2000);
        r.on_packet(&data(3000, 1000, 4), 4, &mut out);
        assert_eq!(out.len(), 2, "then every second segment again");
        assert!(out[1].ece && out[1].ack == 4000, "ECE is repeated on delayed ACKs too");
        let mut cwr = data(4000, 1000, 5);
        cwr.cwr = true;
        r.on_packet(&cwr, 5, &mut out);
        r.on_packet(&data(5000, 1000, 6), 6, &mut out);
        assert!(!out[2].ece && out[2].ack == 6000, "CWR ends the echo");
    }

    /// A controller whose cap collapses after the first ACKs.
    struct Collapsing(u64);

    impl ReceiveWindowControl for Collapsing {
        fn name(&self) -> &'static str {
            "collapsing"
        }
        fn on_segment_received(&mut self, _: &ReceiverInfo, seg: &ReceivedSegment) {
            self.0 = if seg.seq < 3000 { 20_000 } else { 2000 };
        }
        fn window_target(&self) -> Option<u64> {
            Some(self.0)
        }
    }

    #[test]
    fn a_collapsing_cap_is_stepped_down_without_moving_the_edge_left() {
        let opt = TcpOptions { delayed_ack: false, rcv_buf: 1 << 16, ..opts() };
        let mut r = TcpReceiver::new(opt, 0, Some(Box::new(Collapsing(u64::MAX))));
        let mut out = Vec::new();
        for i in 0..30u64 {
            r.on_packet(&data(i * 1000, 1000, i + 1), i + 1, &mut out);
        }
        let edges: Vec<u64> = out.iter().map(|a| a.ack + a.window).collect();
        assert!(edges.windows(2).all(|w| w[1] >= w[0]), "{edges:?}");
        assert_eq!(out[3].ack + out[3].window, edges[2], "the cap fell by 18 KB: the edge holds");
        assert_eq!(out.last().unwrap().window, 2000, "reached once 18 KB more arrived");
        r.check_invariants().unwrap();
    }

    /// A controller asking for more than any buffer.
    struct Greedy;

    impl ReceiveWindowControl for Greedy {
        fn name(&self) -> &'static str {
            "greedy"
        }
        fn on_segment_received(&mut self, _: &ReceiverInfo, _: &ReceivedSegment) {}
        fn window_target(&self) -> Option<u64> {
            Some(u64::MAX)
        }
    }

    /// A cap above the buffer never lifts the window past flow control (eq. 5, L178).
    #[test]
    fn a_cap_above_the_buffer_is_clamped_to_flow_control() {
        let opt = TcpOptions { delayed_ack: false, rcv_buf: 1 << 16, ..opts() };
        let mut r = TcpReceiver::new(opt, 0, Some(Box::new(Greedy)));
        let mut out = Vec::new();
        r.on_packet(&data(0, 1000, 1), 1, &mut out);
        r.on_packet(&data(2000, 1000, 2), 2, &mut out); // 1000 B held out of order
        let unit = 1u64 << r.wscale;
        assert_eq!(out[0].window, (1u64 << 16).div_ceil(unit) * unit);
        assert!(out[1].ack + out[1].window <= out[0].ack + out[0].window, "no more than promised");
        r.check_invariants().unwrap();
        assert!(r.notes().is_empty(), "scale {} is fine", r.wscale);
    }

    #[test]
    fn window_edge_never_moves_left_and_is_scaled() {
        let mut r = TcpReceiver::new(TcpOptions { rcv_buf: 1 << 20, ..opts() }, 0, None);
        assert_eq!(r.wscale, 5);
        let mut out = Vec::new();
        r.on_packet(&data(0, 1000, 1), 1, &mut out);
        let edge = out[0].ack + out[0].window;
        assert_eq!(out[0].window % 32, 0);
        assert!(edge >= 1000 + (1 << 20) - 32);
        r.on_packet(&data(2000, 1000, 2), 2, &mut out); // out of order: 1000 bytes held
        assert_eq!(out[1].ack, 1000);
        assert_eq!(out[1].ack + out[1].window, edge, "right edge kept although buffer space shrank");
    }
}
