//! The TCP stack: a data sender and a data receiver per flow. Congestion control is plugged in
//! through `ccbench_cc`; everything else (recovery, RTO, SACK, PRR, ECN, delayed ACKs) is here.

pub mod receiver;
pub mod rtt;
pub mod sender;

pub use receiver::TcpReceiver;
pub use sender::{Phase, TcpSender};

#[cfg(test)]
mod tests;
