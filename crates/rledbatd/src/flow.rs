//! One download as the receiving host's packets show it, and the window its ACKs may carry.
//!
//! Incoming data feeds the receive-window controller (`ccbench-cc`, unchanged from the
//! simulator); each outgoing ACK then carries `min(the stack's window, the controller's)`,
//! rounded up to the window-scale unit and never moving the right edge left (RFC 7323 §2.4,
//! rLEDBAT paper L191), so the daemon can only lower what the kernel offers: a flow is never
//! made more aggressive (L178). Until the handshake has shown this host's window scale the ACKs
//! pass as they are (a flow picked up mid-way is left alone: its scale is unknowable).

use ccbench_cc::{Nanos, ReceiveWindowControl, ReceivedSegment, ReceiverInfo, ReceiverProbe};

use crate::packet::Segment;

/// Linux stamps TSval in milliseconds (`TCP_TS_HZ`, since 4.13).
const TS_TICK: Nanos = 1_000_000;
/// RFC 9293 §3.7.1's default MSS, until a larger segment shows the real one.
const DEFAULT_MSS: u32 = 536;
const TWO_32: u64 = 1 << 32;

/// A sequence number made relative to the peer's initial one and unwrapped onto 64 bits,
/// taking the value nearest the last one seen.
#[derive(Clone, Copy, Debug, Default)]
struct Unwrapper {
    isn: u32,
    last: u64,
}

impl Unwrapper {
    fn unwrap(&mut self, seq: u32) -> u64 {
        let rel = seq.wrapping_sub(self.isn) as u64;
        let base = self.last & !(TWO_32 - 1);
        let candidates = [base.wrapping_sub(TWO_32).wrapping_add(rel), base + rel, base + TWO_32 + rel];
        let nearest = candidates.into_iter().min_by_key(|c| c.abs_diff(self.last)).unwrap_or(rel);
        self.last = self.last.max(nearest);
        nearest
    }
}

pub struct Flow {
    ctl: Box<dyn ReceiveWindowControl>,
    /// The shift this host announced in its SYN or SYN-ACK.
    wscale: Option<u8>,
    /// The peer's sequence space, known once its SYN or SYN-ACK went by.
    seq: Option<Unwrapper>,
    rcv_nxt: u64,
    /// The furthest right edge this host's ACKs have advertised (relative).
    right_edge: u64,
    /// The largest ordinary segment seen (0: none yet).
    mss: u32,
    /// The largest segment the peer may send: this host's MSS option less the timestamp
    /// option's 12 bytes. Anything longer is a receive-offload super-packet.
    max_segment: u32,
    /// Payload bytes seen arriving (retransmissions included).
    bytes_in: u64,
    /// The last ACK's window as the kernel offered it and as sent, in bytes.
    offered: u64,
    advertised: u64,
}

/// One flow as `rledbatd status` and the log show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStatus {
    /// The last ACK's window as sent and as the kernel offered it, in bytes.
    pub advertised: u64,
    pub offered: u64,
    /// What the controller wants (`None`: no cap).
    pub target: Option<u64>,
    pub probe: ReceiverProbe,
    pub bytes_in: u64,
    /// The window scale is known: the flow is under control.
    pub controlled: bool,
}

impl Flow {
    pub fn new(ctl: Box<dyn ReceiveWindowControl>) -> Self {
        let (bytes_in, offered, advertised) = (0, 0, 0);
        Flow {
            ctl,
            wscale: None,
            seq: None,
            rcv_nxt: 0,
            right_edge: 0,
            mss: 0,
            max_segment: u32::MAX,
            bytes_in,
            offered,
            advertised,
        }
    }

    /// The sender's segment size: the largest ordinary segment seen, else the most this host
    /// allowed in its SYN, else RFC 9293's default.
    fn mss(&self) -> u32 {
        match (self.mss, self.max_segment) {
            (0, u32::MAX) => DEFAULT_MSS,
            (0, max) => max,
            (seen, _) => seen,
        }
    }

    pub fn status(&self) -> FlowStatus {
        FlowStatus {
            advertised: self.advertised,
            offered: self.offered,
            target: self.ctl.window_target(),
            probe: self.ctl.probe(),
            bytes_in: self.bytes_in,
            controlled: self.wscale.is_some() && self.seq.is_some(),
        }
    }

    /// When the controller next wants [`Flow::on_timer`].
    pub fn next_timer(&self) -> Option<Nanos> {
        self.ctl.next_timer()
    }

    /// The controller's timers due by `now` (LEDBAT++'s slowdowns), each at its own due time;
    /// the window they set goes out with the next ACK.
    pub fn fire_timers(&mut self, now: Nanos) {
        for _ in 0..4 {
            let Some(due) = self.ctl.next_timer().filter(|&t| t <= now) else { return };
            let info = self.info(due, self.offered);
            self.ctl.on_timer(&info);
        }
    }

    fn info(&self, now: Nanos, flow_control_window: u64) -> ReceiverInfo {
        ReceiverInfo {
            now,
            mss: self.mss(),
            rcv_nxt: self.rcv_nxt,
            flow_control_window,
            wscale: self.wscale.unwrap_or(0),
            ts_granularity: TS_TICK,
        }
    }

    /// A segment from the sender (the download's data).
    pub fn on_incoming(&mut self, seg: &Segment, now: Nanos) {
        if seg.syn {
            // The data starts one past the SYN.
            self.seq = Some(Unwrapper { isn: seg.seq.wrapping_add(1), last: 0 });
            return;
        }
        let Some(seq) = self.seq.as_mut() else { return };
        if seg.payload_len == 0 {
            return;
        }
        let start = seq.unwrap(seg.seq);
        self.bytes_in += seg.payload_len as u64;
        if seg.payload_len <= self.max_segment as usize {
            self.mss = self.mss.max(seg.payload_len as u32);
        }
        let received = ReceivedSegment {
            now,
            seq: start,
            len: seg.payload_len as u32,
            tsval: seg.timestamps.map(|t| t.0),
            tsecr: seg.timestamps.map(|t| t.1),
            ce: false,
            is_retransmission: false,
            out_of_order: start > self.rcv_nxt,
        };
        let info = self.info(now, 0);
        self.ctl.on_segment_received(&info, &received);
    }

    /// An ACK this host sends: the window field it should carry instead, if any.
    pub fn on_outgoing(&mut self, seg: &Segment, now: Nanos) -> Option<u16> {
        if seg.syn {
            self.wscale = Some(seg.wscale.unwrap_or(0).min(14));
            if seg.has_ack {
                // Our SYN-ACK (a download into a listening port): the peer's SYN came before
                // tracking began, and this acknowledges it; its data starts at the ACK number.
                self.seq = Some(Unwrapper { isn: seg.ack, last: 0 });
            }
            if let Some(mss) = seg.mss_option {
                let options = if seg.timestamps.is_some() { 12 } else { 0 };
                self.max_segment = (mss as u32).saturating_sub(options).max(1);
            }
            return None;
        }
        let (Some(shift), Some(seq)) = (self.wscale, self.seq.as_mut()) else { return None };
        if !seg.has_ack || seg.rst {
            return None;
        }
        self.rcv_nxt = self.rcv_nxt.max(seq.unwrap(seg.ack));
        let offered = (seg.window as u64) << shift;
        let wanted = self.ctl.window_target().map_or(offered, |t| t.min(offered));
        let unit = 1u64 << shift;
        // Round up to the unit, never past what the kernel offered, never left of the last edge.
        let mut field = wanted.div_ceil(unit).min(seg.window as u64);
        let held = self.right_edge.saturating_sub(self.rcv_nxt).div_ceil(unit);
        field = field.max(held.min(seg.window as u64));
        self.right_edge = self.right_edge.max(self.rcv_nxt + (field << shift));
        (self.offered, self.advertised) = (offered, field << shift);
        let info = self.info(now, offered);
        self.ctl.on_segment_sent(&info, seg.timestamps.map(|t| t.0), field << shift);
        (field as u16 != seg.window).then_some(field as u16)
    }
}

#[cfg(test)]
mod tests;
