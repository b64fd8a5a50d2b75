//! What the packet thread and the helper thread share: the flow table and the daemon's clock.

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use ccbench_cc::Nanos;

use crate::table::FlowTable;

/// Time since the daemon started, the clock every controller runs on.
#[derive(Clone, Copy)]
pub struct Clock(Instant);

impl Clock {
    pub fn start() -> Self {
        Clock(Instant::now())
    }

    pub fn now(&self) -> Nanos {
        self.0.elapsed().as_nanos() as Nanos
    }
}

/// What the packet thread and the helper thread share.
pub struct Shared {
    pub table: Mutex<FlowTable>,
    pub clock: Clock,
    pub queue: u16,
    pub socket: std::path::PathBuf,
    pub log_interval: Nanos,
    pub duration: Option<Nanos>,
}

impl Shared {
    pub fn table(&self) -> MutexGuard<'_, FlowTable> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}
