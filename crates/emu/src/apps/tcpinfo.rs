//! `TCP_INFO` samples of the source's socket, one per bin edge, kept as columns (one JSON array
//! per field) so a result loads straight into a table.

use super::clock::Timeline;
use super::sockopt::tcp_info;
use serde::Serialize;
use std::os::fd::RawFd;

#[derive(Default, Serialize)]
pub struct Series {
    /// Sample time, seconds since the epoch.
    pub t_s: Vec<f64>,
    /// Congestion window: `tcpi_snd_cwnd` (segments) × `tcpi_snd_mss`.
    pub cwnd_bytes: Vec<u64>,
    /// Smoothed RTT (`tcpi_rtt`), microseconds.
    pub srtt_us: Vec<u32>,
    /// Payload bytes the program has handed to the socket so far.
    pub bytes_written: Vec<u64>,
    /// Cumulative payload bytes acknowledged ([`payload_acked`]).
    pub bytes_acked: Vec<u64>,
    /// Cumulative bytes retransmitted (`tcpi_bytes_retrans`).
    pub bytes_retrans: Vec<u64>,
    /// Cumulative retransmitted segments (`tcpi_total_retrans`).
    pub retrans_total: Vec<u32>,
    /// Segments in flight, not yet acknowledged (`tcpi_unacked`).
    pub unacked_segs: Vec<u32>,
    /// Bytes in the socket buffer not yet sent (`tcpi_notsent_bytes`).
    pub notsent_bytes: Vec<u32>,
    /// The kernel's delivery-rate estimate (`tcpi_delivery_rate` × 8), bits/s.
    pub delivery_rate_bps: Vec<u64>,
    /// Pacing rate (`tcpi_pacing_rate` × 8), bits/s; null while the kernel sets none.
    pub pacing_rate_bps: Vec<Option<u64>>,
    /// Cumulative segments delivered with a CE mark (`tcpi_delivered_ce`).
    pub delivered_ce: Vec<u32>,
}

/// Takes a sample whenever a bin edge has passed.
pub struct Sampler {
    tl: Timeline,
    next: u64,
    pub series: Series,
}

impl Sampler {
    pub fn new(tl: Timeline, now: u64) -> Sampler {
        Sampler { tl, next: now, series: Series::default() }
    }

    /// Samples if the next bin edge is due (several missed edges give one sample, not a burst).
    pub fn maybe(&mut self, fd: RawFd, now: u64, written: u64) {
        if now >= self.next {
            self.sample(fd, now, written);
            self.next = self.tl.next_edge(now);
        }
    }

    /// Samples now; a failing getsockopt only costs the sample.
    pub fn sample(&mut self, fd: RawFd, now: u64, written: u64) -> Option<libc::tcp_info> {
        let i = tcp_info(fd).ok()?;
        let s = &mut self.series;
        s.t_s.push(self.tl.secs(now));
        s.cwnd_bytes.push(i.tcpi_snd_cwnd as u64 * i.tcpi_snd_mss as u64);
        s.srtt_us.push(i.tcpi_rtt);
        s.bytes_written.push(written);
        s.bytes_acked.push(payload_acked(&i, written));
        s.bytes_retrans.push(i.tcpi_bytes_retrans);
        s.retrans_total.push(i.tcpi_total_retrans);
        s.unacked_segs.push(i.tcpi_unacked);
        s.notsent_bytes.push(i.tcpi_notsent_bytes);
        s.delivery_rate_bps.push(i.tcpi_delivery_rate.saturating_mul(8));
        s.pacing_rate_bps.push(bps(i.tcpi_pacing_rate));
        s.delivered_ce.push(i.tcpi_delivered_ce);
        Some(i)
    }
}

/// `tcpi_bytes_acked` counts the SYN and the FIN as one byte each (it follows snd_una); this
/// is the payload part: minus the SYN, capped at what was written (drops the FIN).
pub fn payload_acked(i: &libc::tcp_info, written: u64) -> u64 {
    i.tcpi_bytes_acked.saturating_sub(1).min(written)
}

/// Bytes/s to bits/s; the kernel reports "no pacing" as all ones.
pub fn bps(bytes_per_s: u64) -> Option<u64> {
    (bytes_per_s != u64::MAX).then(|| bytes_per_s.saturating_mul(8))
}
