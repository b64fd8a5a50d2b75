//! The queue-discipline table: every name a scenario may give in `aqm`.
//!
//! Adding a queue discipline is one file and one row here; the scenario parser, its errors, the
//! docs and `ccbench list` read this table. Queues are generic over the packet type, so the table
//! is built per packet type by [`queues`].

use ccbench_params::{lookup, Entry, ParamError, ParamSpec, Params};

use crate::codel::CoDelProfile;
use crate::dualpi2::DualPi2;
use crate::fq_codel::FqCoDel;
use crate::pi2::Pi2;
use crate::{CoDel, CoDelConfig, DropTail, Limit, Pie, PieConfig, QueueDisc, QueuedPacket, Red};

/// What every queue gets from its link besides its own parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueConfig {
    /// The physical buffer; overflow always drops.
    pub limit: Limit,
    /// Whether the queue may CE-mark ECT packets instead of dropping them.
    pub ecn: bool,
    /// Seed of the queue's own random stream (RED's and PIE's drop decisions); the simulator
    /// derives one per link from the scenario seed.
    pub seed: u64,
}

pub type BuildQueue<P> = fn(QueueConfig, &Params) -> Result<Box<dyn QueueDisc<P>>, ParamError>;

/// A queue discipline's row: how to build it, and whether a link marks by default with it (the
/// link's `ecn` when the scenario does not say): as Linux ships each one — `fq_codel` marks
/// (`q->cparams.ecn = true` in `fq_codel_init`), `dualpi2` has no switch and always marks
/// ECN-capable packets, PI2 is DualPI2's base AQM; `codel`, `red` and `pie` do not
/// (their `ecn` flag is off unless set).
#[derive(Clone, Copy)]
pub struct QueueKind<P> {
    pub build: BuildQueue<P>,
    pub marks_by_default: bool,
}

const fn kind<P>(build: BuildQueue<P>, marks_by_default: bool) -> QueueKind<P> {
    QueueKind { build, marks_by_default }
}

/// The queue disciplines, for packets of type `P`.
pub fn queues<P: QueuedPacket + Send + 'static>() -> [Entry<QueueKind<P>>; 7] {
    [
        Entry {
            name: "droptail",
            aliases: &[],
            summary: "drop-tail FIFO: drops arrivals beyond the buffer, never marks",
            build: kind(|cfg, _| Ok(Box::new(DropTail::new(cfg.limit))), false),
        },
        Entry {
            name: "codel",
            aliases: &[],
            summary: "CoDel (RFC 8289; profiles \"linux\" = sch_codel, \"ns2\" = Pollere's ns-2 codel.cc of \
                      the ABE paper's simulations, \"ns2-patch\" = its first release; the ns-2 profiles \
                      default mtu to 0, the largest packet seen): head drop, or CE mark with ecn, once \
                      the sojourn time has stayed above target for an interval; then at interval/sqrt(count)",
            build: kind(
                |cfg, p| {
                    let profile = CoDelProfile::from_params(p)?;
                    let codel = CoDelConfig::from_params_for(p, profile)?;
                    Ok(Box::new(CoDel::with_profile(cfg, codel, profile)))
                },
                false,
            ),
        },
        Entry {
            name: "red",
            aliases: &[],
            summary: "RED (Floyd & Jacobson 1993, gentle RED, Linux ECN/harddrop); presets red1, red4, \
                      nred1, nred4 (SIAD thesis Table 4.8)",
            build: kind(|cfg, p| Ok(Box::new(Red::from_params(cfg, p)?)), false),
        },
        Entry {
            name: "pie",
            aliases: &[],
            summary: "PIE (RFC 8033; profiles \"linux-3.17\" = the sch_pie of the ABE paper's testbed, \
                      \"ns2\" = the ns-2 pie.cc of its simulations): random early drop/mark steered to a \
                      delay target",
            build: kind(
                |cfg, p| Ok(Box::new(Pie::from_queue_config(cfg, PieConfig::from_params(p)?))),
                false,
            ),
        },
        Entry {
            name: "fq_codel",
            aliases: &["fq-codel"],
            summary: "FQ-CoDel (RFC 8290, Linux sch_fq_codel): flows hashed into 1024 queues served by \
                      deficit round robin (new flows first, once), CoDel per queue (head drop, or CE mark \
                      with ecn; Linux defaults ecn on), overflow drops a batch from the fattest queue",
            build: kind(|cfg, p| Ok(Box::new(FqCoDel::from_params(cfg, p)?)), true),
        },
        Entry {
            name: "pi2",
            aliases: &[],
            summary: "PI2 (De Schepper et al., CoNEXT 2016; RFC 9332 App. A.1's base AQM): one FIFO, a PI \
                      controller on the head sojourn every tupdate; at dequeue classic packets are \
                      dropped/marked with p'^2, ECT(1)/CE marked with min(k*p', 1)",
            build: kind(|cfg, p| Ok(Box::new(Pi2::from_params(cfg, p)?)), true),
        },
        Entry {
            name: "dualpi2",
            aliases: &[],
            summary: "DualPI2 (RFC 9332, Linux sch_dualpi2 defaults): ECT(1)/CE to a low-latency L queue, \
                      the rest to C, scheduled with a 10% C weight; coupled PI2 on the larger head sojourn: \
                      C dropped/marked with p'^2, L marked with max(k*p', step above 1 ms); overload drops \
                      classic-style",
            build: kind(|cfg, p| Ok(Box::new(DualPi2::from_params(cfg, p)?)), true),
        },
    ]
}

/// Build queue `name` with `params` (the link's `aqm_params`); errors name `aqm` or the parameter.
pub fn build_queue<P: QueuedPacket + Send + 'static>(
    name: &str,
    cfg: QueueConfig,
    params: &Params,
) -> Result<Box<dyn QueueDisc<P>>, ParamError> {
    let table = queues::<P>();
    let q = (lookup(&table, &name.to_ascii_lowercase(), "aqm", "AQM")?.build.build)(cfg, params)?;
    params.reject_unknown(name)?;
    Ok(q)
}

/// Whether a link with queue `name` marks unless told otherwise (see [`QueueKind`]); false for
/// a name the table lacks (the parser reports that one).
pub fn marks_by_default(name: &str) -> bool {
    let table = queues::<Probe>();
    lookup(&table, &name.to_ascii_lowercase(), "aqm", "AQM").is_ok_and(|e| e.build.marks_by_default)
}

/// A packet type to read the table with: which queue marks does not depend on the packets.
struct Probe;

impl QueuedPacket for Probe {
    fn wire_bytes(&self) -> u32 {
        0
    }
    fn ecn(&self) -> crate::Ecn {
        crate::Ecn::NotEct
    }
    fn set_ecn(&mut self, _: crate::Ecn) {}
    fn flow_id(&self) -> u64 {
        0
    }
}

/// The parameters queue `name` reads, found by building it once with defaults.
pub fn queue_params<P: QueuedPacket + Send + 'static>(build: BuildQueue<P>) -> Vec<ParamSpec> {
    let p = Params::new();
    let _ = build(QueueConfig { limit: Limit::Packets(100), ecn: false, seed: 0 }, &p);
    p.specs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ecn;

    struct Pkt;
    impl QueuedPacket for Pkt {
        fn wire_bytes(&self) -> u32 {
            1500
        }
        fn ecn(&self) -> Ecn {
            Ecn::NotEct
        }
        fn set_ecn(&mut self, _: Ecn) {}
        fn flow_id(&self) -> u64 {
            0
        }
    }

    const CFG: QueueConfig = QueueConfig { limit: Limit::Packets(5), ecn: false, seed: 0 };

    #[test]
    fn every_row_builds_under_its_own_name() {
        for e in queues::<Pkt>() {
            assert_eq!(build_queue::<Pkt>(e.name, CFG, &Params::new()).unwrap().name(), e.name);
        }
        assert_eq!(build_queue::<Pkt>("DropTail", CFG, &Params::new()).unwrap().name(), "droptail");
    }

    #[test]
    fn unknown_names_and_parameters_are_errors() {
        let e = build_queue::<Pkt>("blue", CFG, &Params::new()).err().unwrap();
        assert_eq!(
            (e.key.as_str(), e.message.as_str()),
            ("aqm", "unknown AQM \"blue\" (known: droptail, codel, red, pie, fq_codel, pi2, dualpi2)")
        );
        let mut p = Params::new();
        p.insert("target", ccbench_params::ParamValue::Str("5ms".into()));
        let e = build_queue::<Pkt>("droptail", CFG, &p).err().unwrap();
        assert_eq!(e.key, "target");
    }

    #[test]
    fn codel_reads_its_parameters() {
        let codel = queues::<Pkt>().into_iter().find(|e| e.name == "codel").unwrap();
        let specs = queue_params::<Pkt>(codel.build.build);
        let keys: Vec<_> = specs.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["profile", "target", "interval", "mtu"]);
        let defaults: Vec<_> = specs.iter().map(|s| s.default.as_str()).collect();
        assert_eq!(defaults, ["\"linux\"", "\"5ms\"", "\"100ms\"", "1514"]);
        let mut p = Params::new();
        p.insert("target", ccbench_params::ParamValue::Str("10ms".into()));
        assert_eq!(build_queue::<Pkt>("CoDel", CFG, &p).unwrap().name(), "codel");
        p.insert("interval", ccbench_params::ParamValue::Str("-1ms".into()));
        assert_eq!(build_queue::<Pkt>("codel", CFG, &p).err().unwrap().key, "interval");
        let mut p = Params::new();
        p.insert("target", ccbench_params::ParamValue::Float(5.0));
        assert_eq!(build_queue::<Pkt>("codel", CFG, &p).err().unwrap().key, "target");
        for profile in ["linux", "ns2", "ns2-patch"] {
            let mut p = Params::new();
            p.insert("profile", ccbench_params::ParamValue::Str(profile.into()));
            assert_eq!(build_queue::<Pkt>("codel", CFG, &p).unwrap().name(), "codel");
        }
        let mut p = Params::new();
        p.insert("profile", ccbench_params::ParamValue::Str("ns-3".into()));
        assert_eq!(build_queue::<Pkt>("codel", CFG, &p).err().unwrap().key, "profile");
    }
}
