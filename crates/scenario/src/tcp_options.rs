//! A TCP flow's stack options (`mss`, `sack`, `rto_min`, …) read through [`Params`] like every
//! controller and queue parameter: the getters that read them also list them, so the keys a
//! `[[flows]]` entry accepts, their ranges and defaults come from this one function
//! ([`option_specs`]) and cannot drift from it. Defaults are [`TcpOptions::default`]'s.

use ccbench_cc::{CaCounting, EcnUse, ParamError, ParamSpec, Params};

use super::config::{LossRecovery, StackProfile, TcpOptions};
use super::units::format_duration;

/// Longest duration an option takes (an RTO of a day is already no timeout at all).
const MAX_DURATION: u64 = 86_400_000_000_000;

impl TcpOptions {
    /// The options a flow's table gives, each checked against its range; the controller and
    /// the receive-side controller (tables of their own) are not among them.
    pub fn from_params(p: &Params) -> Result<TcpOptions, ParamError> {
        Self::from_params_for(p, EcnUse::Optional)
    }

    /// [`Self::from_params`] for a flow whose controller needs `ecn` of the stack: what the
    /// flow does not set about ECN follows the controller.
    pub fn from_params_for(p: &Params, ecn: EcnUse) -> Result<TcpOptions, ParamError> {
        let d = TcpOptions::default();
        let needs = ecn != EcnUse::Optional;
        let positive = |key: &str, default| p.duration(key, default, 1, MAX_DURATION);
        let o = TcpOptions {
            mss: p.u64_in("mss", d.mss.into(), 64, 65_000)? as u32,
            header_bytes: p.u64_in("header_bytes", d.header_bytes.into(), 0, 65_535)? as u32,
            initial_window: p.u64_in("initial_window", d.initial_window.into(), 1, 1_000_000)? as u32,
            initial_ssthresh: p
                .opt_u64_in("initial_ssthresh", 2, 1_000_000_000, "none (infinite)")?
                .map(|v| v as u32),
            sack: p.bool("sack", d.sack)?,
            delayed_ack: p.bool("delayed_ack", d.delayed_ack)?,
            delayed_ack_timeout: positive("delayed_ack_timeout", d.delayed_ack_timeout)?,
            gro: p.duration("gro", d.gro, 0, MAX_DURATION)?,
            quickack_segments: p.u64_in("quickack_segments", d.quickack_segments.into(), 0, 1_000_000)?
                as u32,
            timestamps: p.bool("timestamps", d.timestamps)?,
            ts_granularity: positive("ts_granularity", d.ts_granularity)?,
            rcv_buf: p.size("rcv_buf", d.rcv_buf, 0)?,
            wscale: p.opt_u64_in("wscale", 0, 14, "the smallest that fits rcv_buf")?.map(|v| v as u8),
            handshake: p.bool("handshake", d.handshake)?,
            ecn: p
                .opt_bool("ecn", "on for a controller that needs it (dctcp, prague), else false")?
                .unwrap_or(needs),
            accecn: p
                .opt_bool("accecn", "on for a controller that counts every mark (dctcp, prague), else false")?
                .unwrap_or(needs),
            ect1: p
                .opt_bool("ect1", "on for a scalable (L4S) controller (prague), else false")?
                .unwrap_or(ecn == EcnUse::L4s),
            rto_min: positive("rto_min", d.rto_min)?,
            rto_initial: positive("rto_initial", d.rto_initial)?,
            rto_max: positive("rto_max", d.rto_max)?,
            ca_counting: match p.choice("ca_counting", "segments", &["segments", "acks"])?.as_str() {
                "acks" => CaCounting::Acks,
                _ => CaCounting::Segments,
            },
            recovery: match p.choice("recovery", "rack", &["rack", "rfc6675"])?.as_str() {
                "rfc6675" => LossRecovery::Rfc6675,
                _ => LossRecovery::Rack,
            },
            stack: match p.choice("stack", "linux", &["linux", "linux-3.5", "freebsd"])?.as_str() {
                "linux-3.5" => StackProfile::Linux35,
                "freebsd" => StackProfile::FreeBsd,
                _ => StackProfile::Linux,
            },
            frto: p.bool("frto", d.frto)?,
            clock_offset: p.signed_duration("clock_offset", d.clock_offset)?,
            clock_skew_ppm: p.f64_in("clock_skew_ppm", d.clock_skew_ppm, -10_000.0, 10_000.0)?,
            ..d
        };
        o.check()?;
        Ok(o)
    }

    /// The first option set that only the simulator's stack offers (AccECN, ECT(1)).
    pub fn accurate_ecn_key(&self) -> Option<&'static str> {
        [("accecn", self.accecn), ("ect1", self.ect1)].into_iter().find(|(_, on)| *on).map(|(k, _)| k)
    }

    /// What one option says of another: the RTO bounds in order, a buffer for one segment.
    fn check(&self) -> Result<(), ParamError> {
        let err = |key: &str, message: String| Err(ParamError { key: key.into(), message });
        let show = format_duration;
        if self.rto_max < self.rto_min {
            let (min, max) = (show(self.rto_min), show(self.rto_max));
            return err("rto_max", format!("must be at least rto_min ({min}), got {max}"));
        }
        if self.rto_initial < self.rto_min || self.rto_initial > self.rto_max {
            let (min, max, got) = (show(self.rto_min), show(self.rto_max), show(self.rto_initial));
            return err(
                "rto_initial",
                format!("must lie between rto_min ({min}) and rto_max ({max}), got {got}"),
            );
        }
        if (self.accecn || self.ect1) && !self.ecn {
            let key = if self.accecn { "accecn" } else { "ect1" };
            return err(key, "needs ecn = true".into());
        }
        if self.rcv_buf < u64::from(self.mss) {
            let (mss, buf) = (self.mss, self.rcv_buf);
            return err(
                "rcv_buf",
                format!("must hold at least one segment (mss = {mss} bytes), got {buf} bytes"),
            );
        }
        Ok(())
    }
}

/// Every stack option with its accepted values and default, in the order they are read.
pub fn option_specs() -> Vec<ParamSpec> {
    let p = Params::new();
    TcpOptions::from_params(&p).expect("the defaults are valid");
    p.specs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccbench_cc::ParamValue;

    #[test]
    fn the_defaults_are_the_structs_and_every_option_is_listed() {
        let o = TcpOptions::from_params(&Params::new()).unwrap();
        let d = TcpOptions::default();
        assert_eq!(
            (o.mss, o.rcv_buf, o.rto_initial, o.wscale, o.stack),
            (d.mss, d.rcv_buf, d.rto_initial, None, d.stack)
        );
        let keys: Vec<String> = option_specs().into_iter().map(|s| s.key).collect();
        assert_eq!(keys.len(), 26);
        assert!(keys.iter().any(|k| k == "initial_ssthresh") && keys.iter().any(|k| k == "clock_skew_ppm"));
    }

    #[test]
    fn values_and_cross_checks_name_their_option() {
        let with = |key: &str, v: ParamValue| {
            let mut p = Params::new();
            p.insert(key, v);
            TcpOptions::from_params(&p)
        };
        let o = with("clock_offset", ParamValue::Str("-2.5ms".into())).unwrap();
        assert_eq!(o.clock_offset, -2_500_000);
        assert_eq!(with("initial_ssthresh", ParamValue::Int(10)).unwrap().initial_ssthresh, Some(10));
        assert_eq!(with("gro", ParamValue::Int(0)).unwrap().gro, 0);
        for (key, v) in [
            ("mss", ParamValue::Int(63)),
            ("initial_ssthresh", ParamValue::Int(1)),
            ("wscale", ParamValue::Int(15)),
            ("rcv_buf", ParamValue::Str("1B".into())),
            ("rto_max", ParamValue::Str("100ms".into())),
            ("rto_min", ParamValue::Str("2s".into())),
            ("stack", ParamValue::Str("windows".into())),
        ] {
            let e = with(key, v).unwrap_err();
            let want = if key == "rto_min" { "rto_initial" } else { key };
            assert_eq!(e.key, want, "{e}");
        }
    }
}
