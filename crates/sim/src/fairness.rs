//! The fLEDBAT paper's sharing metrics (Section 8, L306–L308; Section 9, L371), computed from
//! wire bytes (headers included) that each flow's receiver got:
//!
//! * long-term Jain's index `F = (Σx)² / (N·Σx²)` over the flows' mean rates in the window;
//! * short-term Jain's index: `F` of each one-second bin's rates (1 Hz, L371), over the flows
//!   active in that bin (idle flows are not starved, they have nothing to send), averaged over
//!   the bins of the window with at least two active flows;
//! * efficiency `η = Σx / C`;
//! * protocol breakdown: the share of the bytes sent by less-than-best-effort controllers.

use crate::metrics::jain_index;

/// Cumulative wire bytes received per flow at each whole second (`marks[s][flow]`).
#[derive(Default)]
pub struct SecondMarks {
    flows: usize,
    cumulative: Vec<u64>,
}

impl SecondMarks {
    pub fn new(flows: usize) -> Self {
        SecondMarks { flows, cumulative: Vec::new() }
    }

    /// Record the counters at the end of second `seconds()`.
    pub fn push(&mut self, per_flow: impl Iterator<Item = u64>) {
        self.cumulative.extend(per_flow);
    }

    pub fn seconds(&self) -> usize {
        self.cumulative.len() / self.flows.max(1)
    }

    /// Bytes of `flow` received during second `s` (the bin ending at mark `s`).
    fn bin(&self, s: usize, flow: usize) -> u64 {
        let at = |k: usize| self.cumulative[k * self.flows + flow];
        if s == 0 {
            at(0)
        } else {
            at(s) - at(s - 1)
        }
    }

    /// Mean short-term Jain's index of `flows` over the bins starting at or after `first_bin`.
    pub fn short_term_jain(&self, flows: &[usize], first_bin: usize) -> Option<f64> {
        let mut rates = Vec::with_capacity(flows.len());
        let (mut sum, mut bins) = (0.0, 0usize);
        for s in first_bin..self.seconds() {
            rates.clear();
            rates.extend(flows.iter().map(|&f| self.bin(s, f) as f64).filter(|&b| b > 0.0));
            if rates.len() >= 2 {
                sum += jain_index(&rates);
                bins += 1;
            }
        }
        (bins > 0).then(|| sum / bins as f64)
    }
}

/// Share of `bytes` (per flow) that LBE flows carried; None when nothing moved.
pub fn lbe_share(bytes: &[(u64, bool)]) -> Option<f64> {
    let total: u64 = bytes.iter().map(|(b, _)| b).sum();
    let lbe: u64 = bytes.iter().filter(|(_, lbe)| *lbe).map(|(b, _)| b).sum();
    (total > 0).then(|| lbe as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The notes' worked examples (experiments-fledbat.md §1.4).
    #[test]
    fn worked_examples() {
        assert!((jain_index(&[4.6, 4.4]) - 0.9995).abs() < 1e-4);
        assert!((jain_index(&[9.0, 0.5]) - 0.555).abs() < 1e-3);
        let share = lbe_share(&[(95, false), (5, true)]).unwrap();
        assert!((share - 0.05).abs() < 1e-12);
        assert_eq!(lbe_share(&[(0, true)]), None);
    }

    #[test]
    fn short_term_index_skips_idle_flows_and_lonely_bins() {
        let mut m = SecondMarks::new(3);
        // Second 0: only flow 0 sends; 1: flows 0 and 1 equally; 2: flows 0 and 2, 3:1.
        m.push([10, 0, 0].into_iter());
        m.push([20, 10, 0].into_iter());
        m.push([50, 10, 10].into_iter());
        assert_eq!(m.seconds(), 3);
        let f = m.short_term_jain(&[0, 1, 2], 0).unwrap();
        let expect = (1.0 + jain_index(&[30.0, 10.0])) / 2.0;
        assert!((f - expect).abs() < 1e-12, "{f} vs {expect}");
        assert_eq!(m.short_term_jain(&[0, 1, 2], 1).unwrap(), f, "bin 0 had one flow only");
        assert_eq!(m.short_term_jain(&[0], 0), None, "one flow: no sharing to judge");
        assert_eq!(m.short_term_jain(&[0, 1], 2), None, "flow 1 idle in the last bin");
    }
}
