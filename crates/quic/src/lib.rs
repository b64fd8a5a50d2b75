//! ccbench's sender controllers on real QUIC connections.
//!
//! quinn (RFC 9000/9002) takes its congestion controller through a trait; [`CcFactory`] builds
//! any controller of `ccbench_cc`'s registry behind it, unchanged: [`sender::Sender`] turns
//! quinn's calls into the ACK samples, congestion events and episode ends our controllers read,
//! and their `cwnd` into quinn's window. How faithfully each controller runs there is in its
//! registry row (`ccbench_cc::registry::OnQuic`, shown by `ccbench list`).
//!
//! What no controller gets on QUIC, whatever it is:
//! * quinn paces at 1.25 × window / smoothed RTT; a controller's own pacing rate is not used;
//! * QUIC has no timestamps: no one-way delay, RTT samples only;
//! * a rise in the peer's ECN-CE count arrives as one congestion event without the count;
//!   packets carry ECT(0) when the path supports ECN, never ECT(1);
//! * RFC 9002's recovery: the cut at once (no PRR), no undo of spurious reductions.
//!
//! [`transfer`] is the `ccbench-quic` file transfer: a receiver with a self-signed certificate
//! whose fingerprint the sender pins ([`tls`]), and resumable, hash-checked transfers.

pub mod controller;
pub mod sender;
pub mod tls;
pub mod transfer;

pub use controller::{CcFactory, QuicController};
