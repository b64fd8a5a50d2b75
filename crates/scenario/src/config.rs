//! The validated, unit-free form of a scenario file. All times are nanoseconds, rates bits per
//! second, sizes bytes. `parse.rs` builds it from TOML; everything downstream reads only this.

use ccbench_aqm::Limit;
use ccbench_cc::{CaCounting, Params};

pub type Nanos = u64;

#[derive(Clone, Debug)]
pub struct Scenario {
    /// The scenario's `name`, if given.
    pub name: Option<String>,
    /// Simulated time.
    pub duration: Nanos,
    /// Start of the measurement window for summary metrics.
    pub warmup: Nanos,
    pub seed: u64,
    pub topology: Topology,
    /// One entry per flow (a `count = n` table is expanded into n flows).
    pub flows: Vec<Flow>,
    pub output: Output,
}

impl Scenario {
    /// The scenario as if it had lasted only until `end`: how a run stopped early is summarised.
    /// Flows and changes after `end` are moved to it or dropped, so no window is negative.
    pub fn cut_at(&self, end: Nanos) -> Scenario {
        let mut cut = self.clone();
        cut.duration = end.min(self.duration);
        cut.warmup = self.warmup.min(cut.duration);
        for f in &mut cut.flows {
            f.start = f.start.min(cut.duration);
            f.stop = f.stop.map(|s| s.min(cut.duration));
        }
        cut.topology.changes.retain(|c| c.at <= cut.duration);
        cut
    }
}

#[derive(Clone, Debug)]
pub struct Output {
    /// Width of time-series bins (default 100 ms).
    pub bin: Nanos,
    /// Keep every packet's sojourn time at the measured links as a series (default false: the
    /// summary's percentiles come from streaming histograms, `crate::metrics::quantiles`, and
    /// the exact series grows with simulated time).
    pub sojourn_samples: bool,
    /// Keep every CBR datagram's one-way delay as a series (default false, as above).
    pub owd_samples: bool,
    /// Each flow's queueing-delay percentiles in the summary (default false: a histogram per flow
    /// costs memory in proportion to the flows, 1.4 GB at 10,000).
    pub flow_delays: bool,
    /// Links (topology indices) whose ingress is written as a pcap trace (`crate::trace`).
    pub pcap: Vec<usize>,
}

/// Nodes and directional links. Every direction of a link is its own entry with its own queue;
/// links and nodes are referred to by their index here and by their name everywhere else.
#[derive(Clone, Debug)]
pub struct Topology {
    /// The generator that produced it (`"links"` for explicit `[[links]]`, `"dumbbell"` for
    /// `[bottleneck]`, …).
    pub generator: &'static str,
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
    /// Scheduled changes of all links, sorted by time (file order among equal times).
    pub changes: Vec<LinkChange>,
    /// Per node (same index as `nodes`): how many of the chunked flows leaving it may send at
    /// once (a peer's upload slots); None = all of them.
    pub upload_slots: Vec<Option<u32>>,
}

impl Topology {
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n == name)
    }
}

pub use ccbench_params::units::BufferSize;

/// A link's delivery trace (`trace = "file"`): mahimahi's format (`ccbench_link::delivery_trace`).
#[derive(Clone, Debug)]
pub struct LinkTrace {
    /// The file as read (relative paths resolved against the scenario file's folder).
    pub path: String,
    pub trace: std::sync::Arc<ccbench_link::DeliveryTrace>,
}

/// One direction of a link.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub name: String,
    pub from: usize,
    pub to: usize,
    /// Bits per second.
    pub rate: f64,
    /// One-way propagation delay.
    pub delay: Nanos,
    /// Per-packet extra delay drawn uniformly from [0, jitter]; never reorders unless
    /// `jitter_reorder`.
    pub jitter: Nanos,
    pub jitter_reorder: bool,
    /// Per-packet service rate drawn uniformly from [rate, rate_max] (None: always `rate`).
    pub rate_max: Option<f64>,
    /// Bernoulli loss probability applied to arriving packets before the queue.
    pub loss: f64,
    /// A token-bucket shaper in place of a fixed-rate transmitter (None: every packet leaves at
    /// `rate`, back to back).
    pub shaper: Option<TokenBucket>,
    /// A packet-delivery trace that paces the link in place of its rate (`rate` is then the
    /// trace's mean rate).
    pub trace: Option<LinkTrace>,
    pub buffer: BufferSize,
    /// The RTT `bdp` buffers refer to.
    pub rtt: Nanos,
    /// `buffer` resolved against rate and rtt.
    pub limit: Limit,
    /// Queue discipline (a name from the AQM registry) and its parameters.
    pub aqm: String,
    pub aqm_params: Params,
    /// Whether the queue may CE-mark ECT packets instead of dropping them.
    pub ecn: bool,
    /// For the reverse direction of a bidirectional link: the forward direction.
    pub reverse_of: Option<usize>,
    /// Record queueing delay (summary percentiles and the sojourn series) on this link.
    pub measure_sojourn: bool,
}

/// Linux `tbf` (a token bucket filter): tokens accrue at the link's `rate` up to `burst` bytes,
/// and a packet leaves once the bucket holds its size, serialised at the interface's
/// `line_rate`. After an idle spell a whole burst leaves back to back at line rate — the
/// bursts that a receiver's GRO then acknowledges in one ACK (the rLEDBAT paper's testbed
/// shaped its bottleneck with tbf, §6, L309).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TokenBucket {
    /// Bucket size in bytes (`tc … tbf burst`).
    pub burst: u64,
    /// Bits per second at which a packet is serialised once it has its tokens.
    pub line_rate: f64,
}

/// The line rate a token bucket serialises at when a link gives none: Gigabit Ethernet, the
/// testbeds' interfaces.
pub const DEFAULT_LINE_RATE: f64 = 1e9;

#[derive(Clone, Debug, PartialEq)]
pub struct LinkChange {
    pub at: Nanos,
    /// The link whose rate changes.
    pub link: usize,
    /// Its other direction, which shares the propagation delay.
    pub reverse: Option<usize>,
    /// New rate of `link` (bits/s).
    pub rate: Option<f64>,
    /// New one-way propagation delay of both directions.
    pub delay: Option<Nanos>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    Tcp,
    /// Constant-bit-rate datagrams (e.g. VoIP: 160-byte payloads every 20 ms).
    Cbr,
}

/// What carries a TCP-type flow's bytes (`transport`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// The simulator's TCP, or the kernel's in the emulator.
    #[default]
    Tcp,
    /// QUIC (quinn) with any controller of the registry: the emulator only (crate `ccbench-quic`).
    Quic,
}

#[derive(Clone, Debug)]
pub struct Flow {
    /// Unique name; defaults to `<cca>-<index>`.
    pub name: String,
    pub kind: FlowKind,
    /// Congestion controller name (TCP only).
    pub cca: String,
    /// `[flows.cc]` parameters, validated by the controller's constructor.
    pub cc: Params,
    pub start: Nanos,
    /// Stop sending new data at this time (None = run until the end / until `size` is done).
    pub stop: Option<Nanos>,
    /// Sending and receiving host.
    pub from: usize,
    pub to: usize,
    /// Links from sender to receiver, and from receiver back to sender (ACKs).
    pub path: Vec<usize>,
    pub ack_path: Vec<usize>,
    /// Extra propagation delay of the flow's own access (round trip), beyond its path's links.
    pub access_delay: Nanos,
    /// Base RTT: the path's delays both ways plus the access delay (propagation only).
    pub rtt: Nanos,
    /// Bytes of payload to transfer; None = infinite (greedy).
    pub size: Option<u64>,
    /// Largest seeded extra delay the sending host adds to each packet (TCP; 0 = none).
    pub host_noise: Nanos,
    pub tcp: TcpOptions,
    /// `transport`: TCP, or QUIC in the emulator.
    pub transport: Transport,
    pub cbr: CbrOptions,
    /// Chunk-by-chunk transfer (TCP): the application writes one chunk at a time.
    pub chunks: Option<Chunks>,
}

/// A chunk-by-chunk transfer, as BitTorrent peers upload (the fLEDBAT paper, Section 7.1 and 9):
/// the next chunk is written only once the last one is fully acknowledged, then after `gap`;
/// with probability `persistence` it goes over the same connection (its congestion state
/// kept), else over a fresh connection (to another neighbour when the sending node has upload
/// slots to share).
#[derive(Clone, Debug, PartialEq)]
pub struct Chunks {
    pub size: ChunkSize,
    /// P_P, in [0, 1] (default 1: always the same connection).
    pub persistence: f64,
    /// Pause after a chunk's last ACK before the next chunk starts (default 0).
    pub gap: Nanos,
    /// Instead of `gap`: time from one chunk's start to the next's, drawn uniformly from
    /// [min, max] per chunk (short flows arriving at random, the SIAD thesis's Table 4.7); a
    /// chunk due while the last is unfinished starts when that one finishes.
    pub interval: Option<(Nanos, Nanos)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChunkSize {
    Fixed(u64),
    /// Drawn uniformly from [min, max] bytes for every chunk (HTTP objects, U[0, 512] KB).
    Uniform(u64, u64),
}

#[derive(Clone, Debug)]
pub struct CbrOptions {
    /// Payload bytes per datagram (default 160).
    pub packet_size: u32,
    /// Interval between datagrams (default 20 ms).
    pub interval: Nanos,
    /// Header bytes added on the wire (default 28: IPv4 + UDP).
    pub header_bytes: u32,
}

/// How a SACK sender decides that a segment is lost. Without SACK both fall back to NewReno's
/// duplicate-ACK rules (RFC 6582), as Linux does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossRecovery {
    /// RACK-TLP (RFC 8985): time-based detection, reorder timer, tail loss probe.
    Rack,
    /// RFC 6675 `IsLost` (three SACKed segments above), no probe, and a retransmission lost
    /// once data sent after it is SACKed (`tcp_mark_lost_retrans`): Linux before RACK.
    Rfc6675,
}

/// Where TCP stacks differ outside the congestion controller: the ECN-Echo response, and the
/// window after a timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackProfile {
    /// Linux: an ECN-Echo enters CWR and PRR walks cwnd down to the new ssthresh over one RTT
    /// (`tcp_enter_cwr`, `tcp_cwnd_reduction`).
    Linux,
    /// Linux 3.5 (the SIAD thesis's kernel, before the 3.10 F-RTO rework): as `Linux`, and in
    /// the Loss state after a timeout every ACK caps cwnd at in-flight + 3 segments
    /// (`tcp_moderate_cwnd`), so a cumulative ACK that fills the hole releases no burst.
    Linux35,
    /// FreeBSD: cwnd drops to the new ssthresh at once (`cc_cong_signal` with `CC_ECN`, as the
    /// ABE paper's FreeBSD runs did).
    FreeBsd,
}

#[derive(Clone, Debug)]
pub struct TcpOptions {
    /// Payload bytes per segment (default 1448).
    pub mss: u32,
    /// Header bytes per segment on the wire (default 52: IPv4 20 + TCP 20 + timestamps 12).
    pub header_bytes: u32,
    /// Initial window in segments (default 10).
    pub initial_window: u32,
    /// Initial slow-start threshold in segments (None: infinite), Linux's
    /// `tcp_initial_ssthresh` sysctl of the SIAD thesis's kernels (Appendix A.2).
    pub initial_ssthresh: Option<u32>,
    pub sack: bool,
    pub delayed_ack: bool,
    /// Delayed-ACK timer (default 40 ms).
    pub delayed_ack_timeout: Nanos,
    /// Receive offload at the receiving host (GRO): segments arriving within this gap of the
    /// one before are acknowledged as one (0, the default: every segment on its own, as a
    /// host without offload or at rates where packets never arrive back to back).
    pub gro: Nanos,
    /// Segments ACKed immediately at connection start (Linux quick-ACK mode; default 16).
    pub quickack_segments: u32,
    pub timestamps: bool,
    /// TCP timestamp clock tick (default 1 ms).
    pub ts_granularity: Nanos,
    /// Receive buffer in bytes, i.e. the largest advertised window (default 64 MB).
    pub rcv_buf: u64,
    /// Window-scale shift announced by the receiver; None = smallest that fits `rcv_buf`.
    pub wscale: Option<u8>,
    /// Three-way handshake before data (default true).
    pub handshake: bool,
    /// Negotiate ECN (RFC 3168); default: on where the controller needs it (`EcnUse`).
    pub ecn: bool,
    /// Accurate ECN feedback (AccECN, RFC 9768): every CE mark counted back to the sender;
    /// default: on where the controller needs every mark (DCTCP, Prague).
    pub accecn: bool,
    /// Send ECT(1), the L4S identifier (RFC 9331), instead of ECT(0); default: on for a scalable
    /// controller (Prague).
    pub ect1: bool,
    pub rto_min: Nanos,
    pub rto_initial: Nanos,
    pub rto_max: Nanos,
    pub ca_counting: CaCounting,
    /// Loss detection with SACK (default RACK-TLP, as Linux since 4.18).
    pub recovery: LossRecovery,
    /// Whose TCP stack's conventions the sender follows where stacks differ (default Linux).
    pub stack: StackProfile,
    /// F-RTO (RFC 5682) judges timeouts (default true, as Linux's `tcp_frto`).
    pub frto: bool,
    /// Receive-side window controller (rLEDBAT later); None = plain flow control.
    pub receiver_cca: Option<String>,
    pub receiver_cc: Params,
    /// The receiving host's clock against the sender's: it reads
    /// `t + clock_offset + t · clock_skew_ppm / 10⁶`. Only one-way-delay samples see it.
    pub clock_offset: i64,
    pub clock_skew_ppm: f64,
}

impl Default for TcpOptions {
    fn default() -> Self {
        Self {
            mss: 1448,
            header_bytes: 52,
            initial_window: 10,
            initial_ssthresh: None,
            sack: true,
            delayed_ack: true,
            delayed_ack_timeout: 40_000_000,
            gro: 0,
            quickack_segments: 16,
            timestamps: true,
            ts_granularity: 1_000_000,
            rcv_buf: 64 << 20,
            wscale: None,
            handshake: true,
            ecn: false,
            accecn: false,
            ect1: false,
            rto_min: 200_000_000,
            rto_initial: 1_000_000_000,
            rto_max: 120_000_000_000,
            ca_counting: CaCounting::Segments,
            recovery: LossRecovery::Rack,
            stack: StackProfile::Linux,
            frto: true,
            receiver_cca: None,
            receiver_cc: Params::new(),
            clock_offset: 0,
            clock_skew_ppm: 0.0,
        }
    }
}

impl Default for CbrOptions {
    fn default() -> Self {
        Self { packet_size: 160, interval: 20_000_000, header_bytes: 28 }
    }
}

/// Which controllers `cca` may name: the simulator's registry, or those of a real stack (the
/// emulator runs the kernel's own, which take no `[flows.cc]` parameters).
#[derive(Clone, Copy, Debug)]
pub enum Controllers<'a> {
    Simulator,
    Kernel(&'a [&'a str]),
}
