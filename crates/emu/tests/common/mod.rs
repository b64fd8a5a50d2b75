//! Shared by the root-only integration tests.

use ccbench_emu::netns;

/// Why these tests cannot run here, if they cannot (printed, never silent).
pub fn skip_reason() -> Option<String> {
    netns::preflight().err().map(|e| e.0)
}

#[macro_export]
macro_rules! require_netns {
    () => {
        if let Some(reason) = common::skip_reason() {
            let thread = std::thread::current();
            eprintln!("SKIPPED {}: {reason}", thread.name().unwrap_or(module_path!()));
            return;
        }
    };
}
