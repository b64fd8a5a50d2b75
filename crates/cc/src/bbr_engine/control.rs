//! The outputs: BDP and in-flight targets with the quantization budget, the pacing rate, and
//! cwnd with the bounds of the model applied (v2alpha and v3 alike but for the TSO floor).

use super::{Engine, Generation, Mode, Phase, MS, UNSET};
use crate::bbr::mode::{CWND_MIN_TARGET, MIN_TSO_RATE};
use crate::{CcState, PathInfo, NANOS_PER_SEC};

impl<C: Generation> Engine<C> {
    /// Linux `bbr_tso_segs_goal` (v2alpha) / `bbr_tso_segs_generic` (v3) in bytes: about 1 ms
    /// at the pacing rate (`sk_pacing_shift` 10) plus a min-RTT allowance of
    /// `64 KB >> (min_rtt / 512 µs)`, at least 2 segments (v3's `tcp_min_tso_segs`; v2alpha
    /// took 1 below 1.2 Mb/s).
    pub(super) fn send_quantum(&self, st: &CcState, mss: u64) -> u64 {
        let rate = st.pacing_rate.unwrap_or(0.0);
        let rtt_shift = self.min_rtt.map_or(u32::MAX, |r| ((r / 1_000) >> 9).min(64) as u32);
        let rtt_allowance = 65_536u64.checked_shr(rtt_shift).unwrap_or(0);
        let bytes = ((rate / 1024.0) as u64 + rtt_allowance).min(65_536 - 1 - 320);
        let min_segs = if !self.v3() && rate < MIN_TSO_RATE { 1 } else { 2 };
        (bytes / mss).max(min_segs) * mss
    }

    /// Linux `bbr_bdp`: `ceil(bw · min_rtt · gain)` in whole segments; the initial window
    /// while there is no RTT sample.
    pub(super) fn bdp(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        let Some(rtt) = self.min_rtt else {
            return self.init_cwnd;
        };
        let bytes = bw * rtt as f64 / NANOS_PER_SEC as f64 * gain;
        (bytes / mss as f64).ceil() as u64 * mss
    }

    /// Linux `bbr_quantization_budget` with v2alpha's `bbr_cwnd_tso_budget = 1` (floor, not
    /// pad; v3's): at least three send quanta and 4 packets, plus 2 packets while probing up.
    pub(super) fn quantization_budget(&self, cwnd: u64, st: &CcState, mss: u64) -> u64 {
        let floor = (3 * self.send_quantum(st, mss)).max(CWND_MIN_TARGET * mss);
        let up = self.mode == Mode::ProbeBw && self.phase == Phase::Up;
        cwnd.max(floor) + if up { 2 * mss } else { 0 }
    }

    /// Linux `bbr_inflight`.
    pub(super) fn inflight(&self, bw: f64, gain: f64, st: &CcState, mss: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain, mss), st, mss)
    }

    /// Linux `bbr_target_inflight`: the BDP, unless congestion already cut cwnd lower.
    pub(super) fn target_inflight(&self, st: &CcState, mss: u64) -> u64 {
        self.inflight(self.bw(), 1.0, st, mss).min(st.cwnd)
    }

    /// Linux `bbr_packets_in_net_at_edt` without a pacing queue: in flight, plus the quantum
    /// about to leave when the gain pushes in flight up.
    pub(super) fn in_net_at_edt(&self, inflight: u64, st: &CcState, mss: u64) -> u64 {
        inflight + if self.pacing_gain > 1.0 { self.send_quantum(st, mss) } else { 0 }
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`.
    pub(super) fn init_pacing_rate(&mut self, st: &mut CcState, path: &PathInfo) {
        let rtt = match path.srtt {
            Some(srtt) => {
                self.has_init_pacing = true;
                srtt.max(1_000)
            }
            None => MS,
        };
        let bw = st.cwnd as f64 * NANOS_PER_SEC as f64 / rtt as f64;
        st.pacing_rate = Some(self.t.startup_pacing_gain * bw * (1.0 - self.t.pacing_margin));
    }

    /// Linux `bbr_set_pacing_rate`: only rises until the pipe is full.
    pub(super) fn set_pacing_rate(&mut self, st: &mut CcState, path: &PathInfo, bw: f64, gain: f64) {
        let rate = gain * bw * (1.0 - self.t.pacing_margin);
        if !self.has_init_pacing && path.srtt.is_some() {
            self.init_pacing_rate(st, path);
        }
        if self.full_bw_reached || rate > st.pacing_rate.unwrap_or(0.0) {
            st.pacing_rate = Some(rate);
        }
    }

    /// Linux `bbr_probe_rtt_cwnd`.
    pub(super) fn probe_rtt_cwnd(&self, mss: u64) -> u64 {
        let floor = CWND_MIN_TARGET * mss;
        if self.t.probe_rtt_cwnd_gain == 0.0 {
            return floor;
        }
        floor.max(self.bdp(self.bw(), self.t.probe_rtt_cwnd_gain, mss))
    }

    /// Linux `bbr_set_cwnd` (no packet conservation in v2alpha or v3): grow by what was
    /// delivered towards `cwnd_gain · BDP` plus the ACK-aggregation allowance (then the
    /// quantization budget), snap down to it once the pipe was full.
    pub(super) fn set_cwnd(&mut self, st: &mut CcState, path: &PathInfo, acked: u64) {
        let mss = path.mss as u64;
        if acked > 0 {
            let bdp = self.bdp(self.bw(), self.cwnd_gain, mss);
            let target = self.quantization_budget(bdp + self.ack_aggregation_cwnd(mss), st, mss);
            let mut cwnd = st.cwnd;
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd += acked;
            }
            st.cwnd = cwnd.max(CWND_MIN_TARGET * mss);
        }
        if self.mode == Mode::ProbeRtt {
            st.cwnd = st.cwnd.min(self.probe_rtt_cwnd(mss));
        }
    }

    /// Linux `bbr_bound_cwnd_for_inflight_model`: `inflight_hi` while probing, its headroom
    /// level while cruising or in ProbeRTT, and always `inflight_lo`.
    pub(super) fn bound_cwnd_for_inflight_model(&self, st: &mut CcState, mss: u64) {
        let cruising = self.mode == Mode::ProbeBw && self.phase == Phase::Cruise;
        let cap = if self.mode == Mode::ProbeBw && !cruising {
            self.inflight_hi
        } else if self.mode == Mode::ProbeRtt || cruising {
            self.inflight_with_headroom(mss)
        } else {
            UNSET
        };
        let cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET * mss);
        st.cwnd = st.cwnd.min(cap);
    }
}
