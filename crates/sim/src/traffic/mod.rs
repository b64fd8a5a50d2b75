//! Non-TCP traffic sources. Greedy and fixed-size transfers are TCP flows (`tcp::TcpSender`
//! with or without a size); constant-bit-rate datagram flows and the chunk-by-chunk
//! application live here.

pub mod cbr;
pub mod chunks;

pub use cbr::{CbrReceiver, CbrSender};
pub use chunks::{ChunkApp, Next};
