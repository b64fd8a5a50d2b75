//! `rledbatd` (issue 11): a real Linux receiver's TCP downloads made less-than-best-effort by
//! rewriting the window field of the ACKs it sends, driven by the same `rledbat` controller the
//! simulator runs (`ccbench-cc`, unchanged).
//!
//! - [`packet`]: what a packet handed over by NFQUEUE says, and the one rewrite ever made;
//! - [`flow`]: one download's window from the wire; [`table`]: every download, by rules;
//! - [`daemon`]: the queues and the packet loop; [`iptables`]: the rules that feed them;
//! - [`shared`]: what its two threads share; [`signals`]: how it stops;
//! - [`status`]: `rledbatd status` and the CSV log; [`config`]: the TOML file and flags;
//! - [`paths`]: the files it is given, checked before anything on the system changes.
//!
//! Anything it cannot read passes untouched, every packet gets ACCEPT, and the kernel lets
//! traffic through while the daemon is dead or stalled: the daemon fails open.

pub mod config;
pub mod daemon;
pub mod flow;
pub mod iptables;
pub mod packet;
pub mod paths;
pub mod shared;
pub mod signals;
pub mod status;
pub mod table;
