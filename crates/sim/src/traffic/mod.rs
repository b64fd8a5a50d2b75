//! Non-TCP traffic sources. Greedy and fixed-size transfers are TCP flows (`tcp::TcpSender`
//! with or without a size); constant-bit-rate datagram flows live here.

pub mod cbr;

pub use cbr::{CbrReceiver, CbrSender};
