//! `rledbatd run`: the queues, the rules, the packet loop and its helpers.
//!
//! One thread takes every packet from NFQUEUE, gives it to the [`FlowTable`] and returns it
//! with the verdict ACCEPT, rewritten or not: the daemon never drops a packet. Incoming packets
//! (queue N) are read, never changed, so only their headers are copied out of the kernel and
//! receive-offload super-packets come whole (`NFQA_CFG_F_GSO`); outgoing ones (queue N + 1) are
//! copied whole, and the kernel segments any GSO packet before queueing it, so a rewritten ACK
//! always carries a complete checksum. Both queues are fail-open, and the rules use
//! `--queue-bypass` ([`crate::iptables`]): a dead or stalled daemon lets traffic through.
//!
//! A second thread answers `rledbatd status` on a Unix socket, writes the CSV log and forgets
//! idle flows. Controller timers fire in the packet thread, before the first packet after they
//! fall due, at their due time: the window they set can only leave with an ACK anyway.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ccbench_cc::{build_receiver_control, ReceiveWindowControl};
use nfq::{Queue, Verdict};

use crate::config::{Config, CONTROLLER};
use crate::iptables;
use crate::shared::{Clock, Shared};
use crate::signals::{self, STOP};
use crate::status::{self, Log};
use crate::table::{Direction, FlowTable};

/// Bytes of an incoming packet copied to us: any IPv4/IPv6 + TCP header fits.
const HEADER_COPY: u16 = 256;
/// Packets the kernel holds for us per queue before failing open.
const QUEUE_LEN: u32 = 4096;

/// Run until SIGINT/SIGTERM (or `--duration`); an `Err` is a one-line reason to exit. The
/// caller has checked the paths ([`crate::paths::check`]).
pub fn run(cfg: Config) -> Result<(), String> {
    // SAFETY: geteuid(2) has no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root (CAP_NET_ADMIN) for NFQUEUE and iptables".into());
    }
    let cc = cfg.cc.clone();
    let make = move || -> Box<dyn ReceiveWindowControl> {
        build_receiver_control(CONTROLLER, &cc).expect("checked when the configuration was read")
    };
    let table = FlowTable::new(cfg.rules.clone(), cfg.idle_timeout, Box::new(make));
    let shared = Arc::new(Shared {
        table: Mutex::new(table),
        clock: Clock::start(),
        queue: cfg.queue,
        socket: cfg.socket.clone(),
        log_interval: cfg.log_interval,
        duration: cfg.duration,
    });
    let mut queue = open_queues(cfg.queue)?;
    signals::install_signal_handlers();
    let rules = if cfg.iptables { Some(iptables::install(&cfg.rules, cfg.queue)?) } else { None };
    // Last, so a live socket means the rules are in place (the emulator waits for it).
    let (listener, socket) = status::listen(&cfg.socket)?;
    // After the socket, so nothing is created before the daemon can run (its path was checked
    // before anything changed); on failure the rules go with `rules`, the socket here.
    let log = match cfg.log.as_deref().map(Log::create).transpose() {
        Ok(log) => log,
        Err(e) => {
            let _ = socket.remove();
            return Err(e);
        }
    };
    let helper = {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || status::serve(&shared, listener, log, &STOP))
    };
    eprintln!(
        "rledbatd: running on queues {}/{}; status: rledbatd status --socket {}",
        shared.queue,
        shared.queue + 1,
        shared.socket.display()
    );
    let result = packet_loop(&shared, &mut queue);
    // New packets bypass us from here; the ones already queued get their verdicts.
    drop(rules);
    drain(&shared, &mut queue);
    STOP.store(true, Ordering::SeqCst);
    let _ = helper.join();
    // Only the socket bound at start: whatever has been put at its path since stays.
    if let Err(e) = socket.remove() {
        eprintln!("rledbatd: {}", e.labelled("--socket"));
    }
    let c = shared.table().counters;
    eprintln!(
        "rledbatd: stopped; packets {}, rewritten {}, unreadable {}, flows {}",
        c.packets, c.rewritten, c.unreadable, c.flows_opened
    );
    result
}

fn open_queues(n: u16) -> Result<Queue, String> {
    let busy = |e: std::io::Error| match e.raw_os_error() {
        Some(libc::EBUSY) | Some(libc::EEXIST) => {
            format!("--queue {n}: NFQUEUE {n} or {} is in use (another rledbatd?)", n + 1)
        }
        _ => format!("NFQUEUE {n}: {e}"),
    };
    let mut q = Queue::open().map_err(|e| format!("cannot open NFQUEUE: {e}"))?;
    // The socket's receive buffer follows the last copy range set: the whole-packet queue
    // goes last, so a 64 KB packet always fits.
    for (num, whole) in [(n, false), (n + 1, true)] {
        q.bind(num).map_err(busy)?;
        q.set_fail_open(num, true).map_err(busy)?;
        q.set_queue_max_len(num, QUEUE_LEN).map_err(busy)?;
        if !whole {
            q.set_copy_range(num, HEADER_COPY).map_err(busy)?;
            q.set_recv_gso(num, true).map_err(busy)?;
        }
    }
    Ok(q)
}

fn packet_loop(shared: &Shared, queue: &mut Queue) -> Result<(), String> {
    while !STOP.load(Ordering::SeqCst) {
        match queue.recv() {
            Ok(msg) => verdict(shared, queue, msg)?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // The socket's buffer overflowed: those packets were failed open by the kernel.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => continue,
            // A message larger than the buffer (cannot happen with the ranges above): skip it.
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => continue,
            Err(e) => return Err(format!("NFQUEUE receive: {e}")),
        }
    }
    Ok(())
}

/// Whatever is still queued after the rules are gone, answered without blocking.
fn drain(shared: &Shared, queue: &mut Queue) {
    queue.set_nonblocking(true);
    let deadline = Instant::now() + Duration::from_millis(200);
    while Instant::now() < deadline {
        match queue.recv() {
            Ok(msg) => {
                let _ = verdict(shared, queue, msg);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}

fn verdict(shared: &Shared, queue: &mut Queue, mut msg: nfq::Message) -> Result<(), String> {
    let dir = if msg.get_queue_num() == shared.queue { Direction::Incoming } else { Direction::Outgoing };
    let now = shared.clock.now();
    let rewrite = {
        let mut table = shared.table();
        table.fire_timers(now);
        table.inspect(msg.get_payload(), msg.get_original_len(), dir, now)
    };
    if let Some(r) = rewrite {
        r.apply(msg.get_payload_mut());
    }
    msg.set_verdict(Verdict::Accept);
    queue.verdict(msg).map_err(|e| format!("NFQUEUE verdict: {e}"))
}
