//! Hand-built segments through one flow, with a controller whose target the test sets.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use super::*;
use crate::packet::Endpoints;

const MS: Nanos = 1_000_000;

/// A controller with a settable target that records the sequence numbers it was shown.
#[derive(Clone, Default)]
struct Scripted(Arc<Mutex<(Option<u64>, Vec<u64>)>>);

impl ReceiveWindowControl for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn on_segment_received(&mut self, _: &ReceiverInfo, seg: &ReceivedSegment) {
        self.0.lock().unwrap().1.push(seg.seq);
    }
    fn window_target(&self) -> Option<u64> {
        self.0.lock().unwrap().0
    }
}

fn seg(seq: u32, ack: u32, window: u16, payload_len: usize) -> Segment {
    let ends =
        Endpoints { src: IpAddr::from([10, 0, 0, 1]), dst: IpAddr::from([10, 0, 0, 2]), sport: 1, dport: 2 };
    Segment {
        ends,
        seq,
        ack,
        syn: false,
        fin: false,
        rst: false,
        has_ack: true,
        window,
        wscale: None,
        mss_option: None,
        timestamps: Some((1, 1)),
        payload_len,
        tcp_at: 0,
    }
}

fn syn(isn: u32, wscale: u8) -> Segment {
    Segment { syn: true, wscale: Some(wscale), ..seg(isn, 0, 65535, 0) }
}

/// A flow whose handshake went by: this host announced `shift`, the peer's ISN is `isn`.
fn established(shift: u8, isn: u32) -> (Flow, Scripted) {
    let ctl = Scripted::default();
    let mut f = Flow::new(Box::new(ctl.clone()));
    f.on_outgoing(&syn(0, shift), 0);
    f.on_incoming(&syn(isn, 7), 0);
    (f, ctl)
}

#[test]
fn without_the_handshake_acks_pass_unchanged() {
    let ctl = Scripted::default();
    ctl.0.lock().unwrap().0 = Some(1000);
    let mut f = Flow::new(Box::new(ctl));
    assert_eq!(f.on_outgoing(&seg(0, 100, 5000, 0), MS), None);
}

#[test]
fn the_window_is_the_controllers_rounded_up_to_the_scale_unit() {
    let (mut f, ctl) = established(7, 1000);
    ctl.0.lock().unwrap().0 = Some(10_000);
    assert_eq!(f.on_outgoing(&seg(0, 1001, 65535, 0), MS), Some(79), "⌈10 000 / 128⌉");
}

#[test]
fn never_more_than_the_kernel_offers() {
    let (mut f, ctl) = established(7, 1000);
    ctl.0.lock().unwrap().0 = Some(10 << 20);
    assert_eq!(f.on_outgoing(&seg(0, 1001, 100, 0), MS), None);
    ctl.0.lock().unwrap().0 = None;
    assert_eq!(f.on_outgoing(&seg(0, 1001, 100, 0), MS), None);
}

/// The target collapses from 100 000 B to 2000 B: each ACK's right edge stays where the last
/// one was until the data has caught up, then the window is the target's.
#[test]
fn a_collapse_never_moves_the_right_edge_left() {
    let (mut f, ctl) = established(7, 0);
    ctl.0.lock().unwrap().0 = Some(100_000);
    let mut last_edge = 0u64;
    for k in 0..200u32 {
        if k == 5 {
            ctl.0.lock().unwrap().0 = Some(2000);
        }
        let ack = 1 + 1000 * k;
        let field = f.on_outgoing(&seg(0, ack, 65535, 0), MS * k as u64).unwrap_or(65535);
        let edge = (ack - 1) as u64 + ((field as u64) << 7);
        assert!(edge >= last_edge, "ACK {k}: edge {edge} < {last_edge}");
        last_edge = edge;
    }
    assert_eq!(f.on_outgoing(&seg(0, 200_001, 65535, 0), 300 * MS), Some(16), "⌈2000 / 128⌉");
}

/// A download into a listening port: tracking starts at this host's SYN-ACK, after the peer's
/// SYN went by, so the peer's sequence space comes from the SYN-ACK's acknowledgment number.
#[test]
fn a_flow_accepted_by_this_host_learns_the_peers_isn_from_its_syn_ack() {
    let ctl = Scripted::default();
    let mut f = Flow::new(Box::new(ctl.clone()));
    let isn = 7_000_000u32;
    f.on_outgoing(&Segment { syn: true, wscale: Some(7), ..seg(0, isn.wrapping_add(1), 65535, 0) }, 0);
    for k in 0..3u32 {
        f.on_incoming(&seg(isn.wrapping_add(1 + 1000 * k), 0, 100, 1000), MS);
    }
    assert_eq!(ctl.0.lock().unwrap().1, [0, 1000, 2000]);
    ctl.0.lock().unwrap().0 = Some(10_000);
    assert_eq!(f.on_outgoing(&seg(0, isn.wrapping_add(3001), 65535, 0), MS), Some(79));
}

#[test]
fn sequence_numbers_unwrap_across_two_to_the_32() {
    let isn = u32::MAX - 2500;
    let (mut f, ctl) = established(7, isn);
    for k in 0..5u32 {
        f.on_incoming(&seg(isn.wrapping_add(1 + 1000 * k), 0, 100, 1000), MS);
    }
    assert_eq!(ctl.0.lock().unwrap().1, [0, 1000, 2000, 3000, 4000]);
}

/// The simulator's rLEDBAT, unchanged, driven from wire segments: a download at one 1000 B
/// segment per millisecond whose RTT rises from 20 ms to 220 ms (a queue building past the
/// 60 ms target). The window its ACKs carry shrinks once the queue passes the target.
#[test]
fn rledbat_from_the_wire_caps_a_download_whose_queue_grows() {
    let ctl = ccbench_cc::build_receiver_control("rledbat", &ccbench_cc::Params::new()).unwrap();
    let mut f = Flow::new(ctl);
    f.on_outgoing(&syn(0, 7), 0);
    f.on_incoming(&syn(5000, 7), 0);
    let window_at = |f: &mut Flow, ms: u64| {
        let rtt = if ms < 2000 { 20 } else { 20 + (ms - 2000) / 10 };
        let echo = ms.saturating_sub(rtt) as u32;
        let data =
            Segment { timestamps: Some((ms as u32, echo)), ..seg(5001 + 1000 * ms as u32, 1, 0, 1000) };
        f.on_incoming(&data, ms * MS);
        let ack = Segment {
            timestamps: Some((ms as u32, ms as u32)),
            ..seg(1, 1 + 1000 * (ms as u32 + 1), 65535, 0)
        };
        (f.on_outgoing(&ack, ms * MS).unwrap_or(65535) as u64) << 7
    };
    let windows: Vec<u64> = (1..4000).map(|ms| window_at(&mut f, ms)).collect();
    let (flat, queued) = (windows[1998], windows[3998]);
    assert!(queued < flat / 2 && queued < 1 << 20, "window {flat} B at 20 ms of RTT, {queued} B at 220 ms");
}
