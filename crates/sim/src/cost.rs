//! What a run will cost before it runs: packets, events, time-series rows and the memory they
//! hold. A scenario whose estimate cannot fit the machine is refused in one line naming the field
//! that drives the cost, instead of growing until the machine swaps (issue 24: a CBR flow every
//! nanosecond grew to 10.8 GB in 2 s of simulated time).
//!
//! The estimate is an upper bound of what the core keeps today: every link busy all the time,
//! every TCP flow as fast as the slowest link of its path, every CBR datagram offered. What grows
//! with packets is the per-packet record at measured links (the sojourn series and the window's
//! samples for the percentiles), each CBR datagram's one-way delay, and the loss log of every
//! datagram a link drops; what grows with time is one series row per bin per flow and link.

use crate::scenario::{FlowKind, Nanos, Scenario};

/// Bytes a measured link holds per departing packet: the sojourn series' four columns (24 B),
/// the window's sample (8 B), doubled for vector growth, plus the series' copy when the run is
/// handed to Python (24 B). Measured: one CUBIC flow at 1 Gbit/s peaks at 155 MB for 30 s and
/// 555 MB for 120 s of `ccbench run --out`, 53 B per extra packet, so this bounds it from above.
const SOJOURN_BYTES: u64 = 2 * (24 + 8) + 24;
/// Bytes per CBR datagram received: the one-way-delay series (20 B) and the window's sample
/// (8 B), doubled for growth, plus the copy handed to Python.
const OWD_BYTES: u64 = 2 * (20 + 8) + 20;
/// Bytes per datagram a link drops: the loss log's (time, flow) entry, doubled for growth.
/// Measured: a 1.2 Gbit/s CBR flow into 100 Mbit/s for 120 s (11 million drops) peaks at 326 MB;
/// estimated 510 MB.
const DROP_BYTES: u64 = 2 * 16;
/// Bytes per time-series row (one bin of one flow or link, about a dozen 8-byte columns, kept in
/// Rust and copied once to Python).
const ROW_BYTES: u64 = 2 * 12 * 8;
/// Bytes each flow holds whatever it sends (its endpoints, scoreboard, series and summary).
/// Measured: 2,000 and 100,000 CUBIC flows over one link for 2 s peak at 72 MB and 2.70 GB.
const FLOW_BYTES: u64 = 27_000;
/// Bytes a pcap record takes: its 16-byte header and the packet's headers (no payload is
/// captured): IPv4 20, TCP 20 and at most 40 of options, or UDP's 8.
const PCAP_RECORD_BYTES: u64 = 16 + 20 + 20 + 40;
/// Events per packet and hop (its arrival and the end of its transmission) plus the sender's.
const EVENTS_PER_PACKET_HOP: u64 = 3;
/// Size of an ACK on the wire (IPv4 + TCP + timestamps), for counting the reverse path's packets.
const ACK_BYTES: u64 = 52;

/// The estimate, and the scenario field that drives most of it (named in the refusal).
#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    pub packets: u64,
    pub events: u64,
    pub series_rows: u64,
    pub memory_bytes: u64,
    /// `duration`, `output.bin`, `flows` (their number) or `flows[i].interval`.
    pub field: String,
    /// Bytes the pcap traces of `output.pcap` will take on disk.
    pub pcap_bytes: u64,
}

/// Largest rate a link ever serves at (its rate, `rate_max`, and any scheduled change), bit/s.
fn peak_rate(sc: &Scenario, link: usize) -> f64 {
    let spec = &sc.topology.links[link];
    let changes = sc.topology.changes.iter().filter(|c| c.link == link).filter_map(|c| c.rate);
    changes.chain(spec.rate_max).fold(spec.rate, f64::max)
}

/// Packets a link of `peak` bit/s can carry in `span` ns at `bytes` per packet (infinite links
/// carry whatever arrives: `u64::MAX`).
fn capacity(peak: f64, span: Nanos, bytes: u64) -> u64 {
    if !peak.is_finite() {
        return u64::MAX;
    }
    (peak * span as f64 / 1e9 / (8.0 * bytes.max(1) as f64)).ceil() as u64
}

/// A flow's packets on the wire and the datagrams it offers: a CBR flow offers one every
/// `interval`; a TCP flow offers what the slowest link of its path carries (its window adapts),
/// and a sized one at most its bytes with one retransmission each.
fn flow_offer(sc: &Scenario, i: usize) -> (u64, u64) {
    let f = &sc.flows[i];
    let span = f.stop.unwrap_or(sc.duration).min(sc.duration).saturating_sub(f.start);
    match f.kind {
        FlowKind::Cbr => {
            let bytes = u64::from(f.cbr.packet_size + f.cbr.header_bytes);
            (bytes, span / f.cbr.interval.max(1) + 1)
        }
        FlowKind::Tcp => {
            let bytes = u64::from(f.tcp.mss + f.tcp.header_bytes);
            let sized = f.size.map_or(u64::MAX, |s| 2 * (s / u64::from(f.tcp.mss.max(1)) + 1));
            let path = f.path.iter().map(|&l| capacity(peak_rate(sc, l), span, bytes));
            (bytes, path.min().unwrap_or(u64::MAX).min(sized))
        }
    }
}

/// Per link: packets that arrive, packets that leave, and the smallest packet that crosses it.
#[derive(Clone, Copy)]
struct LinkLoad {
    arrivals: u64,
    departures: u64,
    smallest: u64,
}

/// The cost of running `sc` (see the module's comment for what it counts).
pub fn estimate(sc: &Scenario) -> Cost {
    let mut load = vec![LinkLoad { arrivals: 0, departures: 0, smallest: u64::MAX }; sc.topology.links.len()];
    let mut memory = 0u64;
    let mut packets = 0u64;
    let mut worst: (u64, String) = (0, "duration".into());
    for (i, f) in sc.flows.iter().enumerate() {
        let span = f.stop.unwrap_or(sc.duration).min(sc.duration).saturating_sub(f.start);
        let (bytes, offered) = flow_offer(sc, i);
        packets = packets.saturating_add(offered);
        // Walk the path: each link passes what it can carry and drops (and logs) the rest.
        let mut through = offered;
        for &l in &f.path {
            let passed = through.min(capacity(peak_rate(sc, l), span, bytes));
            let at = &mut load[l];
            (at.arrivals, at.departures) =
                (at.arrivals.saturating_add(through), at.departures.saturating_add(passed));
            at.smallest = at.smallest.min(bytes);
            through = passed;
        }
        for &l in &f.ack_path {
            let at = &mut load[l];
            (at.arrivals, at.departures) =
                (at.arrivals.saturating_add(through), at.departures.saturating_add(through));
            at.smallest = at.smallest.min(ACK_BYTES);
        }
        if f.kind == FlowKind::Cbr {
            let drops = offered - through;
            let bytes = drops.saturating_mul(DROP_BYTES).saturating_add(through.saturating_mul(OWD_BYTES));
            memory = memory.saturating_add(bytes);
            if bytes > worst.0 {
                worst = (bytes, format!("flows[{i}].interval"));
            }
        }
    }
    let flow_bytes = (sc.flows.len() as u64).saturating_mul(FLOW_BYTES);
    memory = memory.saturating_add(flow_bytes);
    if flow_bytes > worst.0 {
        worst = (flow_bytes, "flows".into());
    }
    let mut link_bytes = 0u64;
    let mut hops = 0u64;
    for (l, spec) in sc.topology.links.iter().enumerate() {
        let at = load[l];
        hops = hops.saturating_add(at.arrivals);
        if spec.measure_sojourn {
            // Flows sharing the link share its capacity too.
            let departures = at.departures.min(capacity(peak_rate(sc, l), sc.duration, at.smallest));
            link_bytes = link_bytes.saturating_add(departures.saturating_mul(SOJOURN_BYTES));
        }
    }
    memory = memory.saturating_add(link_bytes);
    if link_bytes > worst.0 {
        worst = (link_bytes, "duration".into());
    }
    let bins = sc.duration / sc.output.bin.max(1) + 1;
    let series_rows = bins.saturating_mul((sc.flows.len() + sc.topology.links.len()) as u64);
    let row_bytes = series_rows.saturating_mul(ROW_BYTES);
    memory = memory.saturating_add(row_bytes);
    if row_bytes > worst.0 {
        worst = (row_bytes, "output.bin".into());
    }
    // A trace records every packet that arrives at its link.
    let traced = sc.output.pcap.iter().map(|&l| load[l].arrivals);
    let pcap_bytes = traced.fold(0u64, |sum, n| sum.saturating_add(n.saturating_mul(PCAP_RECORD_BYTES)));
    Cost {
        packets,
        events: hops.saturating_mul(EVENTS_PER_PACKET_HOP),
        series_rows,
        memory_bytes: memory,
        field: worst.1,
        pcap_bytes,
    }
}

impl Cost {
    /// `Err(message)` when the run would hold more than `limit` bytes; the message gives the
    /// estimate and how to raise the limit.
    pub fn check(&self, limit: u64) -> Result<(), String> {
        if self.memory_bytes <= limit {
            return Ok(());
        }
        Err(format!(
            "this run would hold about {} ({} packets, {} events, {} series rows), more than the \
             memory limit of {}; shorten it, or raise the limit (ccbench run --max-memory, \
             max_memory= in the API)",
            gigabytes(self.memory_bytes),
            count(self.packets),
            count(self.events),
            count(self.series_rows),
            gigabytes(limit)
        ))
    }
}

/// Bytes in the largest unit that keeps a digit before the point (`19.0 GB`, `84 kB`).
fn gigabytes(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        n if n >= 1_000_000_000 => format!("{:.1} GB", b / 1e9),
        n if n >= 1_000_000 => format!("{:.1} MB", b / 1e6),
        n if n >= 1_000 => format!("{:.0} kB", b / 1e3),
        n => format!("{n} B"),
    }
}

fn count(n: u64) -> String {
    match n {
        n if n >= 1_000_000_000 => format!("{:.1} billion", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{:.1} million", n as f64 / 1e6),
        n => n.to_string(),
    }
}

/// The default memory limit: three quarters of what this machine (or the cgroup the process
/// runs in) has, leaving room for the Python side and the rest of the machine. None when it
/// cannot be read (then no limit applies).
pub fn default_memory_limit() -> Option<u64> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    })?;
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(u64::MAX);
    Some(total.min(cgroup) / 4 * 3)
}

/// This process's resident memory (`VmRSS`), what a run watches while it runs: the estimate is
/// an upper bound of what the scenario needs, but this is what the machine is giving.
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_str;

    fn cost(text: &str) -> Cost {
        estimate(&parse_str(text, "t", &[], None).unwrap())
    }

    const ONE_CUBIC: &str = "duration = \"600s\"\n[bottleneck]\nrate = \"1Gbps\"\nrtt = \"20ms\"\n\
                             [[flows]]\ncca = \"cubic\"\n";

    #[test]
    fn a_bulk_flow_costs_what_its_bottleneck_carries() {
        let c = cost(ONE_CUBIC);
        // 1 Gbit/s of 1500-byte segments for 600 s: 50 million packets.
        let expected = (1e9_f64 * 600.0 / (8.0 * 1500.0)).ceil() as u64;
        assert_eq!(c.packets, expected);
        assert_eq!(c.field, "duration");
        // The bottleneck is measured: its sojourn records dominate.
        assert!(c.memory_bytes >= expected * SOJOURN_BYTES, "{c:?}");
        assert!(c.memory_bytes < expected * SOJOURN_BYTES * 2, "{c:?}");
    }

    #[test]
    fn a_cbr_flood_is_blamed_on_its_interval() {
        let c = cost(
            "duration = \"2s\"\n[bottleneck]\nrate = \"10Mbps\"\nrtt = \"20ms\"\n\
             [[flows]]\ntype = \"cbr\"\ninterval = \"1ns\"\npacket_size = 65507\n",
        );
        assert_eq!(c.field, "flows[0].interval");
        assert!(c.packets >= 2_000_000_000, "{c:?}");
        assert!(c.memory_bytes > 50_000_000_000, "{c:?}");
    }

    #[test]
    fn many_bins_are_blamed_on_the_bin() {
        let c = cost(
            "duration = \"100000s\"\n[output]\nbin = \"100ms\"\n[bottleneck]\nrate = \"1kbps\"\n\
             rtt = \"20ms\"\n[[flows]]\ncca = \"cubic\"\n",
        );
        assert_eq!(c.field, "output.bin");
        assert_eq!(c.series_rows, (1_000_000 + 1) * 3);
    }

    #[test]
    fn many_flows_are_blamed_on_the_flows() {
        let c = cost(
            "duration = \"2s\"\n[bottleneck]\nrate = \"10Mbps\"\nrtt = \"20ms\"\n\
             [[flows]]\ncount = 100000\n",
        );
        assert_eq!(c.field, "flows");
        assert!(c.memory_bytes >= 100_000 * FLOW_BYTES, "{c:?}");
    }

    #[test]
    fn traces_cost_a_record_per_arriving_packet() {
        assert_eq!(cost(ONE_CUBIC).pcap_bytes, 0);
        let c = cost(&ONE_CUBIC.replace("[bottleneck]", "[output]\npcap = [\"bottleneck\"]\n[bottleneck]"));
        assert_eq!(c.pcap_bytes, c.packets * PCAP_RECORD_BYTES);
    }

    #[test]
    fn check_refuses_above_the_limit_only() {
        let c = cost(ONE_CUBIC);
        assert!(c.check(c.memory_bytes).is_ok());
        let e = c.check(c.memory_bytes - 1).unwrap_err();
        assert!(e.contains("50.0 million packets") && e.contains("--max-memory"), "{e}");
    }

    #[test]
    fn a_sized_flow_costs_its_size() {
        let c = cost(&format!("{ONE_CUBIC}size = \"15MB\"\n"));
        assert!(c.packets < 25_000, "{c:?}");
    }
}
