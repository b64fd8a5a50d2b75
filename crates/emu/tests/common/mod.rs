//! Shared by the root-only integration tests.

use ccbench_emu::netns;

/// Why these tests cannot run here, if they cannot (printed, never silent).
pub fn skip_reason() -> Option<String> {
    netns::preflight().err().map(|e| e.0)
}

/// One real-time test at a time: two forwarders spinning on a 2-core machine would starve
/// each other's traffic and make the timing checks meaningless.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Skip (with the reason printed) unless namespaces work; then hold [`serial`] for the test.
#[macro_export]
macro_rules! require_netns {
    () => {
        if let Some(reason) = common::skip_reason() {
            let thread = std::thread::current();
            eprintln!("SKIPPED {}: {reason}", thread.name().unwrap_or(module_path!()));
            return;
        }
        let _serial = common::serial();
    };
}
