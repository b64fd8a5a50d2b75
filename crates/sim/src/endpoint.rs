//! What the event loop needs of a flow's end — htsim's event source and packet sink in one:
//! packets in, timers fired, and its timers listed so the loop keeps one event armed for each.
//! A TCP sender and receiver and a CBR source and sink are endpoints; the loop knows none of
//! their fields. Calls are static (the loop matches its flow's kind once), so an event costs no
//! virtual call.

use crate::engine::Nanos;
use crate::engine::{Timer, TimerKind};
use crate::packet::Packet;
use crate::tcp::{TcpReceiver, TcpSender};
use crate::traffic::{CbrReceiver, CbrSender};

pub trait Endpoint {
    /// A packet for this end; what it sends in reply goes to `out`.
    fn receive(&mut self, pkt: &Packet, now: Nanos, out: &mut Vec<Packet>);
    /// The event of its timer `kind` came at `now`; a timer moved or stopped since it was armed
    /// does not fire.
    fn fire(&mut self, kind: TimerKind, now: Nanos, out: &mut Vec<Packet>);
    /// Each of its timers, with its kind.
    fn timers(&mut self, each: &mut impl FnMut(&mut Timer, TimerKind));
}

impl Endpoint for TcpSender {
    fn receive(&mut self, pkt: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        self.on_packet(pkt, now, out);
    }
    fn fire(&mut self, kind: TimerKind, now: Nanos, out: &mut Vec<Packet>) {
        match kind {
            TimerKind::Rto if self.rto_timer.fire(now) => self.on_rto(now, out),
            TimerKind::Send if self.send_timer.fire(now) => self.on_send_timer(now, out),
            _ => {}
        }
    }
    fn timers(&mut self, each: &mut impl FnMut(&mut Timer, TimerKind)) {
        each(&mut self.rto_timer, TimerKind::Rto);
        each(&mut self.send_timer, TimerKind::Send);
    }
}

impl Endpoint for TcpReceiver {
    fn receive(&mut self, pkt: &Packet, now: Nanos, out: &mut Vec<Packet>) {
        self.on_packet(pkt, now, out);
    }
    fn fire(&mut self, kind: TimerKind, now: Nanos, out: &mut Vec<Packet>) {
        match kind {
            TimerKind::DelayedAck if self.delack_timer.fire(now) => self.on_delack_timer(now, out),
            TimerKind::GroFlush if self.gro_timer.fire(now) => self.on_gro_timer(now, out),
            TimerKind::ReceiverCc if self.control_timer.fire(now) => self.on_control_timer(now),
            _ => {}
        }
    }
    fn timers(&mut self, each: &mut impl FnMut(&mut Timer, TimerKind)) {
        each(&mut self.delack_timer, TimerKind::DelayedAck);
        each(&mut self.gro_timer, TimerKind::GroFlush);
        each(&mut self.control_timer, TimerKind::ReceiverCc);
    }
}

impl Endpoint for CbrSender {
    /// A CBR source hears nothing back.
    fn receive(&mut self, _: &Packet, _: Nanos, _: &mut Vec<Packet>) {}
    fn fire(&mut self, kind: TimerKind, now: Nanos, out: &mut Vec<Packet>) {
        if kind == TimerKind::Send && self.timer.fire(now) {
            self.on_timer(now, out);
        }
    }
    fn timers(&mut self, each: &mut impl FnMut(&mut Timer, TimerKind)) {
        each(&mut self.timer, TimerKind::Send);
    }
}

impl Endpoint for CbrReceiver {
    /// Counts the datagram; the loop records its one-way delay ([`CbrReceiver::on_packet`]).
    fn receive(&mut self, pkt: &Packet, now: Nanos, _: &mut Vec<Packet>) {
        self.on_packet(pkt, now);
    }
    fn fire(&mut self, _: TimerKind, _: Nanos, _: &mut Vec<Packet>) {}
    fn timers(&mut self, _: &mut impl FnMut(&mut Timer, TimerKind)) {}
}

impl TimerKind {
    /// The end whose timer this is: the receiver's delayed ACK, GRO flush and window controller,
    /// the sender's everything else.
    pub fn side(self) -> crate::net::Side {
        match self {
            TimerKind::DelayedAck | TimerKind::GroFlush | TimerKind::ReceiverCc => crate::net::Side::Receiver,
            _ => crate::net::Side::Sender,
        }
    }
}
