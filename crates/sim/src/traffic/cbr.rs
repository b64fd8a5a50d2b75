//! Constant-bit-rate datagrams (e.g. VoIP: 160-byte payloads every 20 ms), unreliable and
//! unresponsive; the receiver measures each packet's one-way delay.

use crate::engine::Timer;
use crate::packet::{Kind, Packet};
use crate::scenario::CbrOptions;

pub type Nanos = u64;

pub struct CbrSender {
    opt: CbrOptions,
    flow: u32,
    stop: Nanos,
    next_seq: u64,
    pub(crate) timer: Timer,
    pub packets_sent: u64,
}

impl CbrSender {
    pub fn new(opt: CbrOptions, flow: u32, stop: Nanos) -> Self {
        CbrSender { opt, flow, stop, next_seq: 0, timer: Timer::default(), packets_sent: 0 }
    }

    pub fn start(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.send(now, out);
    }

    pub fn stop(&mut self, now: Nanos) {
        self.stop = self.stop.min(now);
        self.timer.cancel();
    }

    pub fn on_timer(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        self.send(now, out);
    }

    fn send(&mut self, now: Nanos, out: &mut Vec<Packet>) {
        if now >= self.stop {
            return;
        }
        let mut p = Packet::new(self.flow, Kind::Datagram, self.opt.packet_size + self.opt.header_bytes, now);
        p.seq = self.next_seq;
        p.len = self.opt.packet_size;
        self.next_seq += self.opt.packet_size as u64;
        self.packets_sent += 1;
        out.push(p);
        self.timer.set(now + self.opt.interval);
    }
}

#[derive(Default)]
pub struct CbrReceiver {
    pub delivered: u64,
    pub wire_bytes_received: u64,
    pub packets_received: u64,
}

impl CbrReceiver {
    /// Returns the packet's one-way delay.
    pub fn on_packet(&mut self, p: &Packet, now: Nanos) -> Nanos {
        self.delivered += p.len as u64;
        self.wire_bytes_received += p.wire_bytes as u64;
        self.packets_received += 1;
        now - p.sent_at
    }
}
