//! The controller tables: every name a scenario may give in `cca` / `receiver_cca`.
//!
//! Adding a controller is one file and one row here; the scenario parser, its errors, the docs
//! and `ccbench list` all read these tables.

use ccbench_params::{lookup, Entry};

use crate::bbr::{Bbr, BbrConfig};
use crate::bbr2::{Bbr2, Bbr2Config};
use crate::bbr3::{Bbr3, Bbr3Config};
use crate::cubic::{Cubic, CubicConfig};
use crate::dctcp::{Dctcp, DctcpConfig};
use crate::fledbat::{Fledbat, FledbatConfig};
use crate::highspeed::{HighSpeed, HighSpeedConfig};
use crate::htcp::{Htcp, HtcpConfig};
use crate::illinois::{Illinois, IllinoisConfig};
use crate::ledbat::{Ledbat, LedbatConfig};
use crate::ledbatpp::{LedbatPlusPlus, LedbatPpConfig};
use crate::newreno::{NewReno, NewRenoConfig};
use crate::prague::{Prague, PragueConfig};
use crate::rledbat::{Rledbat, RledbatConfig};
use crate::scalable::{Scalable, ScalableConfig};
use crate::siad::{Siad, SiadConfig};
use crate::{CongestionControl, ParamError, ParamSpec, Params, ReceiveWindowControl};

pub type BuildController = fn(&Params) -> Result<Box<dyn CongestionControl>, ParamError>;
pub type BuildReceiver = fn(&Params) -> Result<Box<dyn ReceiveWindowControl>, ParamError>;

/// A sender-side controller's row: how to build it and how it runs on QUIC.
pub struct ControllerKind {
    pub build: BuildController,
    pub quic: OnQuic,
}

/// How a controller runs on a QUIC connection (the `ccbench-quic` crate drives it through quinn's
/// congestion interface). What every controller shares there, RFC 9002's recovery (the cut at
/// once, no PRR, no undo), is said once in that crate; a row names only what its own controller
/// reads and QUIC or quinn does not give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnQuic {
    /// Every input the controller reads arrives as in the simulator's TCP.
    Faithful,
    /// It runs; what differs, and why.
    Approximate(&'static str),
}

impl OnQuic {
    /// One line for listings: `faithful` or `approximate: …`.
    pub fn describe(&self) -> String {
        match self {
            OnQuic::Faithful => "faithful".into(),
            OnQuic::Approximate(why) => format!("approximate: {why}"),
        }
    }
}

/// Sender-side congestion controllers (`cca`).
pub static CONTROLLERS: &[Entry<ControllerKind>] = &[
    Entry {
        name: "newreno",
        aliases: &["reno"],
        summary: "NewReno AIMD (RFC 5681, RFC 6582) with a configurable beta",
        build: ControllerKind {
            build: |p| Ok(Box::new(NewReno::new(NewRenoConfig::from_params(p)?))),
            quic: OnQuic::Faithful,
        },
    },
    Entry {
        name: "cubic",
        aliases: &[],
        summary: "CUBIC (RFC 9438) as Linux tcp_cubic.c, with HyStart",
        build: ControllerKind {
            build: |p| Ok(Box::new(Cubic::new(CubicConfig::from_params(p)?))),
            quic: OnQuic::Faithful,
        },
    },
    Entry {
        name: "ledbat",
        aliases: &[],
        summary: "LEDBAT (RFC 6817): one-way-delay less-than-best-effort, 100 ms target",
        build: ControllerKind {
            build: |p| Ok(Box::new(Ledbat::new(LedbatConfig::from_params(p)?))),
            quic: OnQuic::Approximate(
                "QUIC carries no timestamps, so the delay it controls is the RTT's, not the one-way delay RFC 6817 measures: the reverse path's queue counts too",
            ),
        },
    },
    Entry {
        name: "fledbat",
        aliases: &[],
        summary: "fLEDBAT (Carofiglio et al. 2013): Reno-like AI, delay-driven MD, 25 ms target",
        build: ControllerKind {
            build: |p| Ok(Box::new(Fledbat::new(FledbatConfig::from_params(p)?))),
            quic: OnQuic::Approximate(
                "QUIC carries no timestamps, so the delay it controls is the RTT's, not the one-way delay: the reverse path's queue counts too",
            ),
        },
    },
    Entry {
        name: "ledbat++",
        aliases: &[],
        summary: "LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus): RTT-based, 60 ms target, periodic slowdowns",
        build: ControllerKind {
            build: |p| Ok(Box::new(LedbatPlusPlus::new(LedbatPpConfig::from_params(p)?))),
            quic: OnQuic::Approximate(
                "its slowdown timer fires at the next send or acknowledgement (quinn has no controller timer)",
            ),
        },
    },
    Entry {
        name: "bbr",
        aliases: &[],
        summary: "BBRv1 as Linux tcp_bbr.c: paced, model-based (max bw, min RTT), 2·BDP in-flight cap",
        build: ControllerKind {
            build: |p| Ok(Box::new(Bbr::new(BbrConfig::from_params(p)?))),
            quic: OnQuic::Approximate(
                "quinn paces at 1.25 × cwnd / smoothed RTT, not at BBR's pacing rate: the gains act through cwnd only, so it runs cwnd-limited with up to a BDP queued",
            ),
        },
    },
    Entry {
        name: "bbr2",
        aliases: &[],
        summary:
            "BBRv2 as Linux tcp_bbr2.c (v2alpha): BBR plus inflight_hi/lo bounds, 2 % loss and ECN response",
        build: ControllerKind {
            build: |p| Ok(Box::new(Bbr2::new(Bbr2Config::from_params(p)?))),
            quic: OnQuic::Approximate(
                "quinn paces at 1.25 × cwnd / smoothed RTT, not at BBR's pacing rate (the gains act through cwnd only, so it runs cwnd-limited with up to a BDP queued), and reports losses in batches of bytes: the loss-rate bound sees them in rate samples, not packet by packet",
            ),
        },
    },
    Entry {
        name: "siad",
        aliases: &[],
        summary: "TCP SIAD (Kühlewind 2016): adaptive decrease to RTT_min/RTT_curr, increase timed to Num_RTT RTTs",
        build: ControllerKind {
            build: |p| Ok(Box::new(Siad::new(SiadConfig::from_params(p)?))),
            quic: OnQuic::Faithful,
        },
    },
    Entry {
        name: "highspeed",
        aliases: &["hstcp"],
        summary: "HighSpeed TCP (RFC 3649) as Linux tcp_highspeed.c: App. B a(w)/b(w) table, Reno below 38 segments",
        build: ControllerKind {
            build: |p| Ok(Box::new(HighSpeed::new(HighSpeedConfig::from_params(p)?))),
            quic: OnQuic::Faithful,
        },
    },
    Entry {
        name: "scalable",
        aliases: &["stcp"],
        summary: "Scalable TCP as Linux 3.x tcp_scalable.c: MIMD, +1 segment per 50 ACKed, x7/8 on loss",
        build: ControllerKind {
            build: |p| Ok(Box::new(Scalable::new(ScalableConfig::from_params(p)?))),
            quic: OnQuic::Faithful,
        },
    },
    Entry {
        name: "htcp",
        aliases: &["h-tcp"],
        summary: "H-TCP as Linux tcp_htcp.c: alpha grows with time since the last loss, beta = minRTT/maxRTT in [0.5, 0.8]",
        build: ControllerKind {
            build: |p| Ok(Box::new(Htcp::new(HtcpConfig::from_params(p)?))),
            quic: OnQuic::Faithful,
        },
    },
    Entry {
        name: "illinois",
        aliases: &[],
        summary: "TCP Illinois as Linux tcp_illinois.c: loss-triggered, alpha in [0.3, 10] and beta in [1/8, 1/2] from queueing delay",
        build: ControllerKind {
            build: |p| Ok(Box::new(Illinois::new(IllinoisConfig::from_params(p)?))),
            quic: OnQuic::Faithful,
        },
    },
    Entry {
        name: "dctcp",
        aliases: &[],
        summary: "DCTCP (RFC 8257) as Linux tcp_dctcp.c: Reno growth, cut by alpha/2 per ECN episode, alpha = EWMA of the marked fraction (g = 1/16)",
        build: ControllerKind {
            build: |p| Ok(Box::new(Dctcp::new(DctcpConfig::from_params(p)?))),
            quic: OnQuic::Approximate(
                "quinn reports a rise in the peer's CE count as one event, without the count: every byte of an ACK that raised it counts as marked; packets go out ECT(0)",
            ),
        },
    },
    Entry {
        name: "prague",
        aliases: &[],
        summary: "TCP Prague as L4STeam tcp_prague.c 0.6: scalable L4S response, fractional cwnd, AI skipping CE bytes, paced, RTT-independent after 500 rounds",
        build: ControllerKind {
            build: |p| Ok(Box::new(Prague::new(PragueConfig::from_params(p)?))),
            quic: OnQuic::Approximate(
                "quinn reports a rise in the peer's CE count as one event, without the count (every byte of that ACK counts as marked), sends ECT(0) not ECT(1), and paces at 1.25 × cwnd / smoothed RTT, not at Prague's rate",
            ),
        },
    },
    Entry {
        name: "bbr3",
        aliases: &[],
        summary: "BBRv3 as google/bbr v3 tcp_bbr.c: Startup 2.77, DOWN 0.91, probes end on a plateau or 2 % loss, ECN only below 5 ms min RTT",
        build: ControllerKind {
            build: |p| Ok(Box::new(Bbr3::new(Bbr3Config::from_params(p)?))),
            quic: OnQuic::Approximate(
                "quinn paces at 1.25 × cwnd / smoothed RTT, not at BBR's pacing rate (the gains act through cwnd only, so it runs cwnd-limited with up to a BDP queued), and reports losses in batches of bytes: the loss-rate bound sees them in rate samples, not packet by packet",
            ),
        },
    },
];

/// The less-than-best-effort controllers, sender or receiver side: their share of the bytes
/// is the "protocol breakdown" of the fLEDBAT paper (L308).
pub static LESS_THAN_BEST_EFFORT: &[&str] = &["ledbat", "fledbat", "ledbat++", "rledbat"];

pub fn is_less_than_best_effort(cca: &str) -> bool {
    LESS_THAN_BEST_EFFORT.contains(&cca)
}

/// Receiver-side window controllers (`receiver_cca`).
pub static RECEIVERS: &[Entry<BuildReceiver>] = &[Entry {
    name: "rledbat",
    aliases: &[],
    summary: "rLEDBAT (RFC 9840): LEDBAT++ at the receiver via the advertised window; RTT from \
              TSval/TSecr, or from window edges without timestamps",
    build: |p| Ok(Box::new(Rledbat::new(RledbatConfig::from_params(p)?))),
}];

/// Every name `cca` accepts (canonical names and aliases).
pub fn controller_names() -> Vec<&'static str> {
    CONTROLLERS.iter().flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied())).collect()
}

/// Build a sender-side controller by name. Unknown names and bad parameters are errors whose
/// `key` is `"cca"` or the parameter's name.
pub fn build_controller(name: &str, params: &Params) -> Result<Box<dyn CongestionControl>, ParamError> {
    let cc = (lookup(CONTROLLERS, name, "cca", "algorithm")?.build.build)(params)?;
    params.reject_unknown(name)?;
    Ok(cc)
}

/// Build a receiver-side window controller by name.
pub fn build_receiver_control(
    name: &str,
    params: &Params,
) -> Result<Box<dyn ReceiveWindowControl>, ParamError> {
    let entry = lookup(RECEIVERS, name, "receiver_cca", "receiver-side algorithm")?;
    let wc = (entry.build)(params)?;
    params.reject_unknown(name)?;
    Ok(wc)
}

/// The parameters an entry reads, found by building it once with defaults.
pub fn param_specs<T: ?Sized>(build: fn(&Params) -> Result<Box<T>, ParamError>) -> Vec<ParamSpec> {
    let p = Params::new();
    let _ = build(&p);
    p.specs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_builds_with_defaults_under_its_own_name() {
        for e in CONTROLLERS {
            let cc = build_controller(e.name, &Params::new()).unwrap();
            assert_eq!(cc.name(), e.name);
            for alias in e.aliases {
                build_controller(alias, &Params::new()).unwrap();
            }
        }
    }

    #[test]
    fn unknown_names_list_the_table() {
        let e = build_controller("vegas", &Params::new()).err().unwrap();
        assert_eq!(e.key, "cca");
        assert_eq!(
            e.message,
            "unknown algorithm \"vegas\" (known: newreno, cubic, ledbat, fledbat, ledbat++, bbr, bbr2, siad, \
             highspeed, scalable, htcp, illinois, dctcp, prague, bbr3)"
        );
        let e = build_receiver_control("rledbatt", &Params::new()).err().unwrap();
        assert_eq!(e.key, "receiver_cca");
        assert_eq!(build_receiver_control("rledbat", &Params::new()).unwrap().name(), "rledbat");
    }

    #[test]
    fn params_are_listed_from_the_code_that_reads_them() {
        let keys: Vec<String> = param_specs(CONTROLLERS[1].build.build).into_iter().map(|s| s.key).collect();
        assert!(keys.contains(&"beta".to_string()) && keys.contains(&"hystart".to_string()), "{keys:?}");
        let specs = param_specs(CONTROLLERS[2].build.build);
        let target = specs.iter().find(|s| s.key == "target").unwrap();
        assert_eq!((target.kind.as_str(), target.default.as_str()), ("duration in [100us, 1s]", "\"100ms\""));
    }

    #[test]
    fn ledbat_errors_name_the_key() {
        let mut p = Params::new();
        p.insert("target", crate::ParamValue::Str("-5ms".into()));
        assert_eq!(build_controller("ledbat", &p).err().unwrap().key, "target");
        let mut p = Params::new();
        p.insert("gian", crate::ParamValue::Float(0.5));
        assert_eq!(build_controller("ledbat", &p).err().unwrap().key, "gian");
    }
}
