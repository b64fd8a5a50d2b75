//! BBRv1's state machine constants and the ProbeBW gain cycle (Linux `tcp_bbr.c`).

/// `bbr_high_gain = 2885/1000`: 2/ln 2, the smallest gain that doubles the delivery rate each
/// round in Startup.
pub const HIGH_GAIN: f64 = 2.885;
/// `bbr_cwnd_gain`: ProbeBW's cwnd is twice the estimated BDP.
pub const CWND_GAIN: f64 = 2.0;
/// `bbr_pacing_gain[]`: probe up, drain what the probe queued, cruise six phases.
pub const PACING_GAIN: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
pub const CYCLE_LEN: usize = 8;
/// `bbr_cycle_rand`: Linux draws the start phase among the `CYCLE_LEN - 1` phases other than 0.75.
pub const CYCLE_RAND: u64 = 7;
/// `bbr_full_bw_thresh = 1.25`, `bbr_full_bw_cnt = 3`: the pipe is full once three rounds in a
/// row grew the max bandwidth by less than 25 %.
pub const FULL_BW_THRESH: f64 = 1.25;
pub const FULL_BW_CNT: u32 = 3;
/// `bbr_cwnd_min_target`: never below 4 packets; ProbeRTT holds exactly this.
pub const CWND_MIN_TARGET: u64 = 4;
/// `bbr_pacing_margin_percent`: pace 1 % below the estimate so the queue does not creep up.
pub const PACING_MARGIN: f64 = 0.01;
/// `bbr_min_tso_rate`: below 1.2 Mb/s the send quantum is one segment, above it two.
pub const MIN_TSO_RATE: f64 = 1.2e6 / 8.0;
/// `GSO_MAX_SIZE`-like cap on the send quantum (64 KB).
pub const MAX_QUANTUM_BYTES: u64 = 65_536;
/// `sk_pacing_shift = 10`: the send quantum is about 1 ms of data at the pacing rate.
pub const QUANTUM_TIME_S: f64 = 1.0 / 1024.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up at `HIGH_GAIN` until the pipe is full.
    Startup,
    /// Drain the Startup queue at `1 / HIGH_GAIN` until in flight is one BDP.
    Drain,
    /// Cycle the pacing gain around 1 to probe for bandwidth.
    ProbeBw,
    /// Four packets in flight for at least 200 ms and a round, to measure the base RTT.
    ProbeRtt,
}

/// Linux `bbr_update_gains`: (pacing gain, cwnd gain) for `mode` in phase `cycle_idx`.
pub fn gains(mode: Mode, cycle_idx: usize, high_gain: f64, cwnd_gain: f64) -> (f64, f64) {
    match mode {
        Mode::Startup => (high_gain, high_gain),
        Mode::Drain => (1.0 / high_gain, high_gain),
        Mode::ProbeBw => (PACING_GAIN[cycle_idx % CYCLE_LEN], cwnd_gain),
        Mode::ProbeRtt => (1.0, 1.0),
    }
}

/// Linux `bbr_reset_probe_bw_mode` draws `r` uniformly in `0..CYCLE_RAND` and starts at
/// `(CYCLE_LEN - 1 - r) + 1`, i.e. any phase but 1 (the 0.75 drain). This is the same map
/// from a caller-supplied `r`.
pub fn start_phase(r: u64) -> usize {
    (CYCLE_LEN - (r % CYCLE_RAND) as usize) % CYCLE_LEN
}

/// Linux `bbr_tso_segs_goal` in bytes: about 1 ms at the pacing rate, at least 1 or 2 segments
/// (`bbr_min_tso_segs`), at most 64 KB.
pub fn send_quantum(pacing_rate: f64, mss: u64) -> u64 {
    let min_segs = if pacing_rate < MIN_TSO_RATE { 1 } else { 2 };
    let segs = ((pacing_rate * QUANTUM_TIME_S) as u64 / mss).max(min_segs);
    (segs * mss).min(MAX_QUANTUM_BYTES.max(mss))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_phase_is_never_the_drain_phase() {
        let phases: Vec<usize> = (0..CYCLE_RAND).map(start_phase).collect();
        assert_eq!(phases, vec![0, 7, 6, 5, 4, 3, 2]);
    }

    #[test]
    fn gains_per_mode() {
        assert_eq!(gains(Mode::Startup, 0, HIGH_GAIN, CWND_GAIN), (2.885, 2.885));
        let (drain, cwnd) = gains(Mode::Drain, 0, HIGH_GAIN, CWND_GAIN);
        assert!((drain - 0.3466).abs() < 1e-4 && cwnd == 2.885);
        assert_eq!(gains(Mode::ProbeBw, 1, HIGH_GAIN, CWND_GAIN), (0.75, 2.0));
        assert_eq!(gains(Mode::ProbeRtt, 3, HIGH_GAIN, CWND_GAIN), (1.0, 1.0));
    }

    #[test]
    fn send_quantum_is_one_ms_of_data_within_bounds() {
        assert_eq!(send_quantum(100_000.0, 1448), 1448); // 0.8 Mb/s: one segment
        assert_eq!(send_quantum(2.5e6, 1448), 2 * 1448); // 20 Mb/s: 2.4 KB per ms -> 2 segments
        assert_eq!(send_quantum(50e6, 1448), 33 * 1448); // 400 Mb/s: 48.8 KB per ms -> 33 segments
        assert_eq!(send_quantum(125e6, 1448), 65_536); // 1 Gb/s: 122 KB per ms, capped at 64 KB
    }
}
