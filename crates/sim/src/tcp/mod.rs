//! The TCP stack: a data sender and a data receiver per flow. Congestion control is plugged in
//! through `ccbench_cc`; everything else (recovery, RTO, SACK, PRR, ECN and AccECN feedback,
//! delayed ACKs) is here.

pub mod accecn;
pub mod receiver;
pub mod rtt;
pub mod sender;

pub use receiver::TcpReceiver;
pub use sender::{Phase, TcpSender};

#[cfg(test)]
mod tests;
