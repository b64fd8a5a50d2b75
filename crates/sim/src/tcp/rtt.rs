//! RTT estimation (RFC 6298) with Linux's RTO floor, and a windowed minimum-RTT filter.

pub type Nanos = u64;

/// RFC 6298 §5.7 (Linux `TCP_TIMEOUT_FALLBACK`).
const SYN_TIMEOUT_FALLBACK_RTO: Nanos = 3_000_000_000;

#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: Option<Nanos>,
    rttvar: Nanos,
    rto: Nanos,
    rto_min: Nanos,
    rto_max: Nanos,
    granularity: Nanos,
}

impl RttEstimator {
    pub fn new(rto_initial: Nanos, rto_min: Nanos, rto_max: Nanos, granularity: Nanos) -> Self {
        RttEstimator { srtt: None, rttvar: 0, rto: rto_initial, rto_min, rto_max, granularity }
    }

    pub fn srtt(&self) -> Option<Nanos> {
        self.srtt
    }

    pub fn rttvar(&self) -> Option<Nanos> {
        self.srtt.map(|_| self.rttvar)
    }

    /// Current (un-backed-off) RTO.
    pub fn rto(&self) -> Nanos {
        self.rto
    }

    /// RFC 6298 §5.7: after the SYN timed out, data starts with a 3 s RTO until a sample arrives.
    pub fn fall_back_after_syn_timeout(&mut self) {
        if self.srtt.is_none() {
            self.rto = SYN_TIMEOUT_FALLBACK_RTO.min(self.rto_max);
        }
    }

    /// RFC 6298 §2.2–2.3 (alpha 1/8, beta 1/4). Linux floors the variance term, not the RTO,
    /// at `rto_min`: RTO = SRTT + max(G, 4·RTTVAR, rto_min).
    pub fn update(&mut self, sample: Nanos) {
        match self.srtt {
            None => {
                self.srtt = Some(sample);
                self.rttvar = sample / 2;
            }
            Some(srtt) => {
                let err = srtt.abs_diff(sample);
                self.rttvar = (3 * self.rttvar + err) / 4;
                self.srtt = Some((7 * srtt + sample) / 8);
            }
        }
        let var = (4 * self.rttvar).max(self.granularity).max(self.rto_min);
        self.rto = (self.srtt.unwrap() + var).min(self.rto_max);
    }
}

/// RTT candidates of one ACK from the segments it newly covers: the oldest and the newest
/// (Linux uses the first for SRTT, so the delayed-ACK wait counts, and the last for congestion
/// control).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RttSamples {
    oldest: Option<Nanos>,
    newest: Option<Nanos>,
}

impl RttSamples {
    pub fn add(&mut self, rtt: Nanos) {
        self.oldest.get_or_insert(rtt);
        self.newest = Some(rtt);
    }
}

/// Linux `tcp_clean_rtx_queue` + `tcp_ack_update_rtt`: the (SRTT, controller) samples of one
/// ACK. SRTT takes the oldest newly cumulatively ACKed segment, else the oldest newly SACKed
/// one; the controller takes the newest SACKed segment when there is one (it left last, so its
/// RTT is the freshest), else the newest cumulatively ACKed. Once the ACK covers a
/// retransmission (`FLAG_RETRANS_DATA_ACKED`) cumulative samples are ambiguous (Karn), and with
/// no sample left an ACK of new data falls back to the timestamp echo (RFC 7323 §4).
pub(crate) fn ack_rtt(
    cumulative: RttSamples,
    sacked: RttSamples,
    retransmitted_acked: bool,
    new_data_acked: bool,
    ts_echo_rtt: impl FnOnce() -> Option<Nanos>,
) -> (Option<Nanos>, Option<Nanos>) {
    let (mut seq, mut ca) =
        if retransmitted_acked { (None, None) } else { (cumulative.oldest, cumulative.newest) };
    if sacked.newest.is_some() {
        ca = sacked.newest;
        seq = seq.or(sacked.oldest);
    }
    if seq.is_none() && new_data_acked {
        if let Some(r) = ts_echo_rtt() {
            (seq, ca) = (Some(r), Some(r));
        }
    }
    if seq.is_none() {
        return (None, None);
    }
    (seq, ca)
}

/// Windowed minimum (Nichols' three-sample min tracker, as Linux `win_minmax`): O(1) per sample.
#[derive(Clone, Copy, Debug)]
pub struct WindowedMin {
    window: Nanos,
    s: [(Nanos, Nanos); 3], // (time, value)
    valid: bool,
}

impl WindowedMin {
    pub fn new(window: Nanos) -> Self {
        WindowedMin { window, s: [(0, 0); 3], valid: false }
    }

    pub fn get(&self) -> Option<Nanos> {
        self.valid.then_some(self.s[0].1)
    }

    pub fn update(&mut self, now: Nanos, v: Nanos) {
        let sample = (now, v);
        if !self.valid || v <= self.s[0].1 || now - self.s[2].0 > self.window {
            self.s = [sample; 3];
            self.valid = true;
            return;
        }
        if v <= self.s[1].1 {
            self.s[1] = sample;
            self.s[2] = sample;
        } else if v <= self.s[2].1 {
            self.s[2] = sample;
        }
        // Expire the best sample(s) once they age out of the window.
        let dt = now - self.s[0].0;
        if dt > self.window {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = sample;
            if now - self.s[0].0 > self.window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = sample;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > self.window / 4 {
            self.s[1] = sample;
            self.s[2] = sample;
        } else if self.s[2].0 == self.s[1].0 && dt > self.window / 2 {
            self.s[2] = sample;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut r = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, MS);
        r.update(100 * MS);
        assert_eq!(r.srtt(), Some(100 * MS));
        assert_eq!(r.rttvar(), Some(50 * MS));
        assert_eq!(r.rto(), 300 * MS); // 100 + max(4*50, 200)
        r.update(200 * MS);
        assert_eq!(r.srtt(), Some(112_500_000));
        assert_eq!(r.rttvar(), Some(62_500_000));
    }

    #[test]
    fn linux_floor_applies_to_variance_term() {
        let mut r = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, MS);
        for _ in 0..50 {
            r.update(10 * MS);
        }
        assert_eq!(r.rto(), 210 * MS);
    }

    fn samples(rtts: &[Nanos]) -> RttSamples {
        let mut s = RttSamples::default();
        rtts.iter().for_each(|&r| s.add(r));
        s
    }

    #[test]
    fn ack_samples_keep_the_oldest_and_the_newest() {
        assert_eq!(samples(&[]), RttSamples { oldest: None, newest: None });
        assert_eq!(samples(&[50]), RttSamples { oldest: Some(50), newest: Some(50) });
        assert_eq!(samples(&[50, 70, 30]), RttSamples { oldest: Some(50), newest: Some(30) });
    }

    #[test]
    fn ack_rtt_as_linux_takes_it() {
        let none = || -> Option<Nanos> { panic!("timestamps are consulted only without a sequence sample") };
        let (cum, sack, empty) = (samples(&[100 * MS, 80 * MS]), samples(&[60 * MS, 40 * MS]), samples(&[]));
        assert_eq!(ack_rtt(cum, empty, false, true, none), (Some(100 * MS), Some(80 * MS)));
        assert_eq!(
            ack_rtt(cum, sack, false, true, none),
            (Some(100 * MS), Some(40 * MS)),
            "the SACK's for the controller"
        );
        assert_eq!(ack_rtt(empty, sack, false, false, none), (Some(60 * MS), Some(40 * MS)));
        assert_eq!(ack_rtt(empty, empty, false, false, none), (None, None));
        // A covered retransmission: SACK samples stand; without them, the echo or nothing.
        assert_eq!(ack_rtt(cum, sack, true, true, none), (Some(60 * MS), Some(40 * MS)));
        for c in [cum, empty] {
            assert_eq!(ack_rtt(c, empty, true, true, || Some(7 * MS)), (Some(7 * MS), Some(7 * MS)));
            assert_eq!(ack_rtt(c, empty, true, true, || None), (None, None));
            assert_eq!(ack_rtt(c, empty, true, false, none), (None, None), "no new data acked");
        }
    }

    #[test]
    fn windowed_min_expires_old_minimum() {
        let mut m = WindowedMin::new(10_000 * MS);
        m.update(0, 50 * MS);
        m.update(1000 * MS, 80 * MS);
        assert_eq!(m.get(), Some(50 * MS));
        m.update(6000 * MS, 70 * MS);
        m.update(10_500 * MS, 90 * MS);
        assert!(m.get().unwrap() > 50 * MS, "old minimum must age out");
        m.update(11_000 * MS, 40 * MS);
        assert_eq!(m.get(), Some(40 * MS));
    }
}
