//! Hosts as network namespaces, each with one TUN device whose fd this process holds, and the
//! guarantee that a run leaves nothing behind.
//!
//! Every namespace of a run is named `ccb-<pid>-<start>-<n>-<host index>-<host>`, where `<start>`
//! is the process's start time (field 22 of `/proc/<pid>/stat`, so a recycled pid is not
//! mistaken for us) and `<n>` counts testbeds within the process. Removal happens on three paths:
//! [`Testbed`]'s `Drop`; SIGINT/SIGTERM/SIGHUP, whose handler removes every namespace still
//! registered and exits with status 130; and, since SIGKILL cannot be caught, [`reap_stale`] at
//! the next start, which removes namespaces whose owner process no longer exists. Removing a
//! namespace first SIGKILLs the processes inside it (`ip netns pids`), so traffic programs die
//! with it; the TUN devices vanish when their fds close (they are not persistent).
//!
//! Host `i` has address [`host_addr`]`(i)` in 10.100.0.0/16 on its `tun0`, and the /16 route
//! points at `tun0`, so every packet to another host is handed to the forwarder.

use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, Once};

use nix::sched::{setns, CloneFlags};

/// Where `ip netns` keeps its namespace handles.
const NETNS_DIR: &str = "/var/run/netns";
const PREFIX: &str = "ccb-";
/// The TUN device's name inside each host namespace (names are per namespace, so no clashes).
pub const TUN_NAME: &str = "tun0";
/// Most hosts a testbed addresses: 10.100.<0..=255>.<1..=250>.
pub const MAX_HOSTS: usize = 256 * 250;

/// A setup or teardown failure, as one line for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetError(pub String);

impl std::fmt::Display for NetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NetError {}

fn err<T>(msg: impl Into<String>) -> Result<T, NetError> {
    Err(NetError(msg.into()))
}

/// Namespaces created and not yet removed, for the signal handler.
static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());
static TESTBEDS: AtomicU32 = AtomicU32::new(0);

fn live() -> std::sync::MutexGuard<'static, Vec<String>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Address of host `i`.
pub fn host_addr(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 100, (i / 250) as u8, (i % 250 + 1) as u8)
}

/// The host owning `addr`, if it is a testbed address.
pub fn host_index(addr: Ipv4Addr) -> Option<usize> {
    let [a, b, c, d] = addr.octets();
    (a == 10 && b == 100 && (1..=250).contains(&d)).then(|| c as usize * 250 + d as usize - 1)
}

/// Check that this process may build a testbed: root, `ip`, TUN and namespaces available.
pub fn preflight() -> Result<(), NetError> {
    if !nix::unistd::geteuid().is_root() {
        return err("ccbench emu needs root (it creates network namespaces and TUN devices)");
    }
    if File::open("/proc/self/ns/net").is_err() {
        return err("network namespaces are not available (no /proc/self/ns/net)");
    }
    if let Err(e) = File::options().read(true).write(true).open("/dev/net/tun") {
        return err(format!("TUN devices are not available: /dev/net/tun: {e}"));
    }
    match Command::new("ip").arg("-V").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => err("the `ip` command (iproute2) is not available"),
    }
}

/// Run `ip` with `args`; a failure becomes one line naming the command.
fn ip(args: &[&str]) -> Result<String, NetError> {
    let out =
        Command::new("ip").args(args).output().map_err(|e| NetError(format!("cannot run `ip`: {e}")))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        let first = msg.lines().next().unwrap_or("failed");
        return err(format!("`ip {}`: {first}", args.join(" ")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Start time of process `pid` in clock ticks since boot, if it exists.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name start at field 3; starttime is field 22.
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

/// The owner (pid, start time) a namespace name claims, if it is one of ours.
fn owner_of(name: &str) -> Option<(u32, u64)> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let pid = parts.next()?.parse().ok()?;
    let start = u64::from_str_radix(parts.next()?, 36).ok()?;
    Some((pid, start))
}

/// Kill what runs inside namespace `name`, then remove it. Errors are returned, not fatal.
fn remove_netns(name: &str) -> Result<(), NetError> {
    let me = std::process::id();
    if let Ok(pids) = ip(&["netns", "pids", name]) {
        for pid in pids.split_whitespace().filter_map(|p| p.parse::<i32>().ok()) {
            if pid as u32 != me {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
            }
        }
    }
    let r = ip(&["netns", "del", name]).map(drop);
    live().retain(|n| n != name);
    r
}

/// Remove the namespaces of ccbench processes that no longer exist (left by a SIGKILL).
/// Returns their names. Namespaces of live processes, including this one, are left alone.
pub fn reap_stale() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else { return Vec::new() };
    let mut removed = Vec::new();
    for entry in dir.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, start)) = owner_of(&name) else { continue };
        if process_start(pid) != Some(start) && remove_netns(&name).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// Remove every namespace this process still has; for signal handlers and fatal paths.
pub fn remove_all_live() {
    let names: Vec<String> = live().clone();
    for n in names.iter().rev() {
        let _ = remove_netns(n);
    }
}

/// Make SIGINT, SIGTERM and SIGHUP remove this process's namespaces and exit with status 130.
/// Done once per process, by the first [`Testbed::new`]. Fails if the program installed its own
/// handler first; that handler should then call [`remove_all_live`].
pub fn install_signal_cleanup() -> Result<(), NetError> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = ctrlc::set_handler(|| {
            remove_all_live();
            std::process::exit(130);
        })
        .map_err(|e| NetError(format!("cannot install the cleanup signal handler: {e}")));
    });
    result
}

/// Run `f` with the calling thread in network namespace `netns` (sockets it creates stay there).
pub fn in_netns<T>(netns: &str, f: impl FnOnce() -> T) -> Result<T, NetError> {
    let home = File::open("/proc/thread-self/ns/net")
        .map_err(|e| NetError(format!("cannot open this thread's namespace: {e}")))?;
    let target = File::open(format!("{NETNS_DIR}/{netns}"))
        .map_err(|e| NetError(format!("no network namespace \"{netns}\": {e}")))?;
    setns(target.as_fd(), CloneFlags::CLONE_NEWNET)
        .map_err(|e| NetError(format!("cannot enter namespace \"{netns}\": {e}")))?;
    // Restored even if `f` unwinds: a thread silently left in a host's namespace would put
    // everything it does later in the wrong network.
    struct Home(File);
    impl Drop for Home {
        fn drop(&mut self) {
            if setns(self.0.as_fd(), CloneFlags::CLONE_NEWNET).is_err() {
                eprintln!("error: cannot return a thread to its network namespace");
                std::process::abort();
            }
        }
    }
    let _home = Home(home);
    Ok(f())
}

/// Create TUN device `name` (IFF_TUN | IFF_NO_PI: bare IP packets, no offloads) in the calling
/// thread's namespace, non-blocking.
fn open_tun(name: &str) -> io::Result<OwnedFd> {
    let path = c"/dev/net/tun";
    // SAFETY: plain open(2) of a constant path; the fd is owned right away.
    let raw = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh fd nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes().take(libc::IFNAMSIZ - 1)) {
        *d = s as libc::c_char;
    }
    ifr.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads and writes one ifreq, which outlives the call.
    if unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&fd), libc::TUNSETIFF, &mut ifr) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

/// One host: a namespace, its address and the TUN fd that carries all its traffic.
pub struct Host {
    pub name: String,
    pub netns: String,
    pub addr: Ipv4Addr,
    tun: OwnedFd,
}

impl Host {
    pub fn tun(&self) -> &OwnedFd {
        &self.tun
    }
}

/// The namespaces of one run. Dropping it removes them all.
pub struct Testbed {
    run_id: String,
    hosts: Vec<Host>,
}

/// Keep names readable and safe as file names: letters, digits and `_`, at most 16 characters.
fn sanitise(name: &str) -> String {
    name.chars().take(16).map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

impl Testbed {
    /// Create one namespace per host name. On any failure what was made is removed again.
    pub fn new<S: AsRef<str>>(hosts: &[S]) -> Result<Testbed, NetError> {
        preflight()?;
        if hosts.len() > MAX_HOSTS {
            return err(format!("at most {MAX_HOSTS} hosts, not {}", hosts.len()));
        }
        // A program that installed its own handler calls `remove_all_live` itself.
        let _ = install_signal_cleanup();
        let me = std::process::id();
        let start = process_start(me).ok_or_else(|| NetError("cannot read /proc/self/stat".into()))?;
        let n = TESTBEDS.fetch_add(1, Ordering::Relaxed);
        let run_id = format!("{PREFIX}{me}-{}-{n}", to_base36(start));
        let mut tb = Testbed { run_id, hosts: Vec::new() };
        for (i, h) in hosts.iter().enumerate() {
            let host = tb.add_host(i, h.as_ref())?;
            tb.hosts.push(host);
        }
        Ok(tb)
    }

    fn add_host(&self, i: usize, name: &str) -> Result<Host, NetError> {
        let netns = format!("{}-{i}-{}", self.run_id, sanitise(name));
        // Registered before creation, so a signal during `ip netns add` still removes it.
        live().push(netns.clone());
        if let Err(e) = ip(&["netns", "add", &netns]) {
            live().retain(|n| n != &netns);
            return Err(e);
        }
        let tun = in_netns(&netns, || {
            // No IPv6 on the TUN: router solicitations and the like would only be noise.
            let _ = std::fs::write("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
            open_tun(TUN_NAME)
        })?
        .map_err(|e| NetError(format!("cannot create {TUN_NAME} in \"{netns}\": {e}")))?;
        let addr = host_addr(i);
        let cidr = format!("{addr}/16");
        ip(&["-n", &netns, "link", "set", "lo", "up"])?;
        ip(&["-n", &netns, "addr", "add", &cidr, "dev", TUN_NAME])?;
        ip(&["-n", &netns, "link", "set", TUN_NAME, "mtu", "1500", "up"])?;
        Ok(Host { name: name.to_string(), netns, addr, tun })
    }

    /// `ccb-<pid>-<start>-<n>`: the prefix of every namespace name of this run.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// Duplicates of the hosts' TUN fds, in host order, for the forwarder. A TUN device lives
    /// while any fd of it is open, so stop the forwarder before dropping the testbed (declare
    /// its `Running` after the `Testbed`, and drop order does it).
    pub fn tun_fds(&self) -> Result<Vec<OwnedFd>, NetError> {
        let dup = |h: &Host| h.tun.try_clone().map_err(|e| NetError(format!("cannot dup a TUN fd: {e}")));
        self.hosts.iter().map(dup).collect()
    }

    fn host(&self, host: usize) -> Result<&Host, NetError> {
        self.hosts.get(host).ok_or_else(|| NetError(format!("no host {host}")))
    }

    /// Run `f` on this thread inside `host`'s namespace; sockets made there stay there.
    pub fn enter<T>(&self, host: usize, f: impl FnOnce() -> T) -> Result<T, NetError> {
        in_netns(&self.host(host)?.netns, f)
    }

    /// `ip netns exec <ns> <program>`: add arguments and spawn it. Whatever still runs in the
    /// namespace when the testbed is dropped is killed with SIGKILL.
    pub fn command(&self, host: usize, program: &str) -> Result<Command, NetError> {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.host(host)?.netns, program]);
        Ok(c)
    }
}

fn to_base36(mut v: u64) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(v % 36) as usize]);
        v /= 36;
        if v == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8_lossy(&s).into_owned()
}

impl Drop for Testbed {
    fn drop(&mut self) {
        for h in self.hosts.iter().rev() {
            if let Err(e) = remove_netns(&h.netns) {
                eprintln!("warning: {e}");
            }
        }
        // A host whose setup failed half-way is registered but not in `hosts`.
        let prefix = format!("{}-", self.run_id);
        let partial: Vec<String> = live().iter().filter(|n| n.starts_with(&prefix)).cloned().collect();
        for n in partial {
            let _ = remove_netns(&n);
        }
    }
}

/// The namespaces (by name) that currently exist for `run_id`.
pub fn namespaces_of(run_id: &str) -> Vec<String> {
    let prefix = format!("{run_id}-");
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else { return Vec::new() };
    let names = dir.flatten().map(|e| e.file_name().to_string_lossy().into_owned());
    names.filter(|n| n.starts_with(&prefix)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        for i in [0, 1, 249, 250, 251, MAX_HOSTS - 1] {
            assert_eq!(host_index(host_addr(i)), Some(i), "host {i}");
        }
        assert_eq!(host_addr(0), Ipv4Addr::new(10, 100, 0, 1));
        assert_eq!(host_index(Ipv4Addr::new(10, 100, 0, 0)), None);
        assert_eq!(host_index(Ipv4Addr::new(10, 101, 0, 1)), None);
    }

    #[test]
    fn names_say_their_owner() {
        assert_eq!(owner_of("ccb-123-2s-0-1-a"), Some((123, 100)));
        assert_eq!(owner_of("other-123-2s"), None);
        assert_eq!(owner_of("ccb-x-2s"), None);
        assert_eq!(to_base36(100), "2s");
        assert_eq!(sanitise("r1/a b"), "r1_a_b");
        let me = std::process::id();
        assert!(process_start(me).is_some());
    }
}
