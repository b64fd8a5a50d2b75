//! The daemon's stop: SIGINT, SIGTERM and SIGHUP set [`STOP`] and interrupt the packet loop's
//! blocking receive; the helper thread blocks them so they reach the packet thread, and stops
//! the daemon itself (`--duration`, `rledbatd stop`) by the same path.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set once the daemon is to stop; both threads poll it.
pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Route the stop signals to [`STOP`].
pub fn install_signal_handlers() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // No SA_RESTART: the blocking receive returns EINTR, so the loop sees STOP.
        // SAFETY: an all-zero sigaction is valid (empty mask, no flags); the handler only stores
        // to an atomic, which is async-signal-safe.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = handler;
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}

/// Block the stop signals in the calling (helper) thread, so they interrupt the packet loop.
pub fn block_stop_signals() {
    // SAFETY: the set is initialised by sigemptyset before use and outlives the calls.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Wake the packet loop from another thread (its receive is interrupted by the signal).
pub fn stop_daemon() {
    STOP.store(true, Ordering::SeqCst);
    // SAFETY: kill(2) and getpid(2) take and return plain integers.
    unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
}
