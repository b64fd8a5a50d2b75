//! `rledbatd` (issue 11): a real Linux receiver's TCP downloads made less-than-best-effort by
//! rewriting the window field of the ACKs it sends, driven by the same `rledbat` controller the
//! simulator runs. This crate starts with its packet path ([`packet`]): what a packet handed
//! over by NFQUEUE says, and the one rewrite the daemon ever makes. Anything it cannot read
//! passes untouched: the daemon fails open.

pub mod flow;
pub mod packet;
pub mod table;
