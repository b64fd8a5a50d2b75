//! Pure congestion controllers for ccbench.
//!
//! Nothing here knows about the simulator: time is an integer number of nanoseconds, every input
//! arrives as an explicit sample, and every output is a change to [`CcState`] (or a [`Reaction`]).
//! The same controllers are meant to drive real sockets later.
//!
//! Division of labour (see `shared/reference/algorithms.md` §13): the TCP stack owns reliability,
//! SACK, loss detection, RTO, PRR, ECN signalling, RTT/delivery-rate sampling, pacing execution
//! and once-per-RTT gating of reductions. A controller owns `cwnd`, `ssthresh`, an optional
//! pacing rate and its response to each congestion signal. A controller may lower `cwnd` at any
//! time (delay-based schemes do); the stack then simply stops sending until `inflight < cwnd`.
//!
//! Receiver-side controllers (rLEDBAT) implement [`ReceiveWindowControl`] and bound the
//! advertised window; the stack keeps the right edge from moving left.

#![forbid(unsafe_code)]

pub mod bbr;
pub mod bbr2;
pub mod bbr3;
pub mod bbr_engine;
pub mod cubic;
pub mod dctcp;
pub mod fledbat;
pub mod highspeed;
pub mod htcp;
pub mod illinois;
pub mod ledbat;
pub mod ledbatpp;
pub mod newreno;
pub mod prague;
pub mod registry;
pub mod rledbat;
pub mod scalable;
pub mod siad;

pub use ccbench_params::{ParamError, ParamSpec, ParamValue, Params};
pub use registry::{
    build_controller, build_receiver_control, controller_names, is_less_than_best_effort, CONTROLLERS,
    RECEIVERS,
};

/// Nanoseconds since the start of the connection's clock.
pub type Nanos = u64;

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Congestion-control state owned by the stack, written by the controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcState {
    /// Congestion window in bytes. The stack never lets it fall below one MSS.
    pub cwnd: u64,
    /// Slow-start threshold in bytes (`u64::MAX` = infinite).
    pub ssthresh: u64,
    /// Pacing rate in bytes per second; `None` sends as fast as ACK clocking allows.
    pub pacing_rate: Option<f64>,
}

impl CcState {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// Linux-like sender congestion state (`tcp_ca_state`), given to controllers so that
/// loss-based ones skip growth during recovery while delay-based ones keep sampling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// Nothing unusual.
    Open,
    /// Duplicate ACKs or SACKs seen, no reduction yet.
    Disorder,
    /// ECN-triggered reduction episode (RFC 3168 CWR) in progress.
    Cwr,
    /// Fast recovery after loss detected by duplicate ACKs / SACK.
    Recovery,
    /// Recovery after a retransmission timeout.
    Loss,
}

/// How the stack credits segments for congestion-avoidance growth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaCounting {
    /// Linux: each ACK credits the number of segments it newly acknowledges
    /// (`tcp_cong_avoid_ai`, RFC 3465 byte counting in segment units).
    Segments,
    /// Each ACK credits one segment regardless of how much it covers (RFC 5681 eq. 3, ns-2);
    /// with delayed ACKs the window then grows half as fast.
    Acks,
}

/// What the connection looks like right now; read-only for the controller.
#[derive(Clone, Copy, Debug)]
pub struct PathInfo {
    pub now: Nanos,
    /// Sender maximum segment size (payload bytes).
    pub mss: u32,
    /// Smoothed RTT (RFC 6298), if a sample exists.
    pub srtt: Option<Nanos>,
    pub rttvar: Option<Nanos>,
    /// Windowed minimum RTT kept by the stack: over 300 s, as Linux's `tcp_min_rtt_wlen`.
    pub min_rtt: Option<Nanos>,
    /// Bytes in flight (RFC 6675 pipe).
    pub inflight: u64,
    /// Total bytes delivered (cumulatively ACKed or SACKed) since the start.
    pub delivered: u64,
    pub state: CaState,
    /// The sender used the whole window recently (growth is only allowed then, RFC 7661).
    pub is_cwnd_limited: bool,
    /// Receiver's advertised window in bytes.
    pub rwnd: u64,
    /// Initial window in bytes (for idle restart and controllers that reset to it).
    pub initial_window: u64,
    /// The connection carries TCP timestamps (RFC 7323): RTT samples are timestamp echoes.
    /// Without them samples come from sequence numbers (Karn), and Linux 3.x modules that read
    /// `now − tsecr` fall back to the smoothed RTT instead (the SIAD thesis's module, L3121).
    pub timestamps: bool,
}

/// Delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), for rate-based controllers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Bytes delivered over the interval.
    pub delivered: u64,
    pub interval: Nanos,
    /// `delivered / interval` in bytes per second.
    pub delivery_rate: f64,
    pub prior_delivered: u64,
    /// Bytes in flight when the reference packet was sent.
    pub tx_in_flight: u64,
    /// Bytes lost over the interval.
    pub lost: u64,
    pub is_app_limited: bool,
}

/// Everything one incoming ACK tells the controller. Sent for every ACK, duplicates included.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    /// Bytes newly acknowledged cumulatively.
    pub acked: u64,
    /// Bytes newly selectively acknowledged.
    pub sacked: u64,
    /// Segments credited for window growth (see [`CaCounting`]).
    pub segments_acked: u32,
    /// RTT sample from this ACK (timestamps or Karn-filtered sequence sample).
    pub rtt: Option<Nanos>,
    /// One-way delay sample (receiver clock minus sender stamp), when the path provides it.
    pub owd: Option<Nanos>,
    /// `now − TSecr` of this ACK, in whole ticks of the timestamp clock times the tick, when
    /// it echoes a timestamp (RFC 7323): what a Linux 3.x module reads as its delay
    /// (`tcp_time_stamp − rx_opt.rcv_tsecr`). With delayed ACKs or a hole it echoes an older
    /// segment than the `rtt` sample (§4.3's rules), so the two can differ.
    pub ts_echo: Option<Nanos>,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    /// Newly CE-marked packets, when accurate ECN feedback is available (AccECN's ACE counter,
    /// RFC 9768 §3.2.2); 0 with classic ECN, whose ECE says only "some mark since the last CWR".
    pub ce_delta: u32,
    /// Newly CE-marked payload bytes, when accurate ECN feedback is available (AccECN's CE byte
    /// counter, RFC 9768 §3.2.3); what a scalable controller's additive increase skips.
    pub ce_bytes: u64,
    pub rate: Option<RateSample>,
    /// Bytes newly marked lost while processing this ACK.
    pub newly_lost: u64,
    /// First ACK of a new round trip (BBR-style round counting).
    pub round_start: bool,
    pub round_count: u64,
    pub prior_inflight: u64,
    pub is_dupack: bool,
}

/// Why the stack opened a reduction episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Loss detected by duplicate ACKs or SACK (fast retransmit).
    Loss,
    /// ECN-Echo received.
    Ecn,
    /// Retransmission timeout. `backoffs` is 0 when the stack wants a fresh reduction (Linux
    /// `tcp_enter_loss`: no cut for the same data under way), otherwise how many times the same
    /// data has timed out; controllers keep ssthresh then.
    Rto { backoffs: u32 },
}

#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    pub cause: Cause,
    /// Cause of the episode already open when this signal arrived (e.g. a loss inside an
    /// ECN-opened CWR episode), so ABE-style controllers can deepen the cut.
    pub open_episode: Option<Cause>,
    /// RFC 5681 FlightSize at detection, in bytes.
    pub flight_size: u64,
    pub in_slow_start: bool,
}

/// How the stack should carry out a controller's response to a congestion event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reaction {
    /// Loss-style: the stack runs PRR (RFC 6937) down to `ssthresh`, or on an RTO sets
    /// `cwnd` to one MSS and slow-starts up to it.
    Prr { ssthresh: u64 },
    /// RFC 3168-style: cwnd and ssthresh take these values at once, nothing is retransmitted.
    Immediate { ssthresh: u64, cwnd: u64 },
    /// The controller already set cwnd/ssthresh itself (BBR); the stack only retransmits.
    SelfManaged,
    /// Ignore the signal.
    Ignore,
}

/// The ECN a controller asks of the stack, which a flow follows unless it says otherwise
/// (`ecn`, `accecn`, `ect1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EcnUse {
    /// ECN only where the flow turns it on, with classic feedback (RFC 3168): one reduction per
    /// round trip with marks, whatever their number.
    #[default]
    Optional,
    /// ECN on and every mark counted: accurate feedback (AccECN, RFC 9768), ECT(0). DCTCP
    /// (RFC 8257 §3.3 needs the fraction of marked bytes).
    Accurate,
    /// ECN on, accurate feedback and the L4S identifier ECT(1) (RFC 9331 §4.1): a scalable
    /// controller (TCP Prague).
    L4s,
}

/// A transmission, for controllers that track per-packet state.
#[derive(Clone, Copy, Debug)]
pub struct SentInfo {
    pub seq: u64,
    pub bytes: u32,
    pub is_retransmission: bool,
    pub inflight_after: u64,
}

/// A packet newly marked lost.
#[derive(Clone, Copy, Debug)]
pub struct LossInfo {
    pub seq: u64,
    pub bytes: u32,
    /// Bytes in flight just after this packet's last transmission (Linux `tx.in_flight`).
    pub tx_in_flight: u64,
    /// Bytes marked lost since that transmission, this packet included (Linux
    /// `tp->lost - tx.lost`).
    pub lost_since_tx: u64,
    /// The transmission was application-limited.
    pub tx_app_limited: bool,
}

/// A sender-side congestion controller.
///
/// Call order within one ACK is fixed by the stack: congestion signal → [`on_congestion`],
/// episode end → [`on_episode_end`], then [`on_ack`] for every ACK.
///
/// [`on_congestion`]: CongestionControl::on_congestion
/// [`on_episode_end`]: CongestionControl::on_episode_end
/// [`on_ack`]: CongestionControl::on_ack
pub trait CongestionControl: Send {
    /// Short algorithm name as used in scenario files (`"newreno"`, `"cubic"`).
    fn name(&self) -> &'static str;

    /// Called once when the connection is established; may set the initial window.
    fn init(&mut self, _st: &mut CcState, _path: &PathInfo) {}

    /// Every ACK, including duplicates and ACKs inside recovery (`path.state` says which).
    fn on_ack(&mut self, st: &mut CcState, path: &PathInfo, ack: &AckSample);

    /// A new reduction episode opens (at most once per RTT). Returns what the stack should do.
    fn on_congestion(&mut self, st: &mut CcState, path: &PathInfo, ev: &CongestionEvent) -> Reaction;

    /// The episode opened by `cause` has closed (`snd_una >= recovery point`).
    fn on_episode_end(&mut self, _st: &mut CcState, _path: &PathInfo, _cause: Cause) {}

    /// The stack found the last reduction spurious (a D-SACK or a timestamp showed that the
    /// original transmissions arrived) and undoes it; returns the window to resume with. Linux
    /// `undo_cwnd`; the default is `tcp_reno_undo_cwnd`, which Reno and CUBIC use.
    fn undo_cwnd(&mut self, st: &CcState, prior_cwnd: u64) -> u64 {
        st.cwnd.max(prior_cwnd)
    }

    fn on_packet_sent(&mut self, _st: &mut CcState, _path: &PathInfo, _sent: &SentInfo) {}

    fn on_packet_lost(&mut self, _st: &mut CcState, _path: &PathInfo, _lost: &LossInfo) {}

    /// Sending resumes after an idle period longer than the RTO.
    fn on_idle_restart(&mut self, _st: &mut CcState, _path: &PathInfo, _idle: Nanos) {}

    /// The ECN this controller needs from the stack (see [`EcnUse`]).
    fn ecn_use(&self) -> EcnUse {
        EcnUse::Optional
    }

    /// Earliest controller-owned wake-up, if any (LEDBAT++ slowdowns, BBR ProbeRTT).
    fn next_timer(&self) -> Option<Nanos> {
        None
    }

    fn on_timer(&mut self, _st: &mut CcState, _path: &PathInfo) {}
}

/// One data segment as seen by the receiving stack.
#[derive(Clone, Copy, Debug)]
pub struct ReceivedSegment {
    pub now: Nanos,
    pub seq: u64,
    pub len: u32,
    /// Timestamp option values (in the peer's / our own TS clock ticks), when negotiated.
    pub tsval: Option<u32>,
    pub tsecr: Option<u32>,
    /// Arrived with CE set.
    pub ce: bool,
    /// The stack's verdict that this is a retransmission (sequence below the highest seen).
    pub is_retransmission: bool,
    /// The segment arrived out of order (a hole exists below it).
    pub out_of_order: bool,
}

/// Context a receive-window controller sees.
#[derive(Clone, Copy, Debug)]
pub struct ReceiverInfo {
    pub now: Nanos,
    /// Receiver MSS (payload bytes).
    pub mss: u32,
    /// `RCV.NXT`: the next in-order byte expected (the left edge of the advertised window).
    pub rcv_nxt: u64,
    /// The flow-control window the buffer alone would allow, in bytes.
    pub flow_control_window: u64,
    /// Window scale shift this receiver announced.
    pub wscale: u8,
    /// TS clock granularity in nanoseconds.
    pub ts_granularity: Nanos,
}

/// A receiver-side controller that bounds the advertised window (rLEDBAT).
pub trait ReceiveWindowControl: Send {
    fn name(&self) -> &'static str;
    /// Every arriving data segment.
    fn on_segment_received(&mut self, rx: &ReceiverInfo, seg: &ReceivedSegment);
    /// Every segment this receiver sends (ACKs), with the TSval it carries and the window in bytes.
    fn on_segment_sent(&mut self, _rx: &ReceiverInfo, _tsval: Option<u32>, _window: u64) {}
    /// Desired cap on the advertised window in bytes; `None` = no cap.
    fn window_target(&self) -> Option<u64>;
    fn next_timer(&self) -> Option<Nanos> {
        None
    }
    fn on_timer(&mut self, _rx: &ReceiverInfo) {}
    /// Departures from the configured behaviour worth telling the user (a fallback taken),
    /// reported in the flow's summary.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// What the controller currently sees, for status displays and logs; no logic reads it.
    fn probe(&self) -> ReceiverProbe {
        ReceiverProbe::default()
    }
}

/// A receive-window controller's state as a status display shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverProbe {
    /// The current RTT estimate and the base (minimum) RTT.
    pub rtt: Option<Nanos>,
    pub base_rtt: Option<Nanos>,
    /// The queueing delay the last sample showed.
    pub queuing_delay: Option<Nanos>,
    /// A short name of the controller's state (e.g. `slow-start`, `avoidance`, `freeze`).
    pub state: &'static str,
}

/// Integer-cube-root-free helpers shared by window-based controllers.
pub(crate) fn segments(bytes: u64, mss: u32) -> f64 {
    bytes as f64 / mss as f64
}
