//! `ccbench emu`: a scenario's topology on real kernel TCP.
//!
//! Hosts are network namespaces; every link is served by our own userspace forwarder
//! ([`link`], [`forwarder`]) that reads IP packets from TUN devices and applies the link's rate,
//! delay, jitter, loss and queue discipline from `ccbench_aqm` — the simulator's code,
//! unchanged. [`netns`] creates and always removes the namespaces; [`apps`] are the traffic
//! programs run inside them; [`ip`] is the IPv4 packet the links carry.

pub mod apps;
pub mod forwarder;
pub mod ip;
pub mod link;
pub mod netns;
pub mod results;
pub mod rledbatd;
pub mod run;
pub mod testbed;
