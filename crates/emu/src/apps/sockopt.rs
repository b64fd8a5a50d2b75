//! The few raw socket calls std does not offer: choosing the congestion control, reading
//! `TCP_INFO`, and a connect() that happens *after* those options are set (std's
//! `TcpStream::connect_timeout` creates and connects the socket in one step).

use super::AppError;
use std::io;
use std::mem::size_of;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::time::Duration;

const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";
/// Bit of `tcpi_options` set when ECN was negotiated on the connection (linux/tcp.h).
pub const TCPI_OPT_ECN: u8 = 8;

/// Scenario `cca` names the real stack offers, and the kernel module each one selects.
pub const KERNEL_CCAS: &[(&str, &str)] = &[
    ("newreno", "reno"),
    ("reno", "reno"),
    ("cubic", "cubic"),
    ("bbr", "bbr"),
    // Linux modules of the thesis's high-speed controllers (tcp_highspeed.c, …), where loaded.
    ("highspeed", "highspeed"),
    ("scalable", "scalable"),
    ("htcp", "htcp"),
    ("illinois", "illinois"),
];

/// Maps a scenario `cca` to the kernel's module name and checks that this kernel accepts it (by
/// setting it on a throwaway socket: as root, the kernel may load a module that is not listed
/// as available yet). Both failures are usage errors that list what the kernel offers.
pub fn kernel_cca(scenario_name: &str) -> Result<&'static str, AppError> {
    let lower = scenario_name.to_ascii_lowercase();
    let Some(&(_, kernel)) = KERNEL_CCAS.iter().find(|(name, _)| *name == lower) else {
        let known: Vec<&str> = KERNEL_CCAS.iter().map(|(name, _)| *name).collect();
        return Err(AppError::usage(format!(
            "cca {scenario_name:?} has no kernel counterpart (known: {}); this kernel offers: {}",
            known.join(", "),
            available()
        )));
    };
    let probe = socket(libc::AF_INET).map_err(|e| AppError::run(format!("socket: {e}")))?;
    set_cca(probe.as_raw_fd(), kernel).map_err(|e| {
        AppError::usage(format!(
            "cca {scenario_name:?} (kernel {kernel:?}) is not usable here ({e}); this kernel offers: {}",
            available()
        ))
    })?;
    Ok(kernel)
}

/// The kernel's list of congestion controls, for error messages.
pub fn available() -> String {
    std::fs::read_to_string(AVAILABLE)
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|e| format!("(cannot read {AVAILABLE}: {e})"))
}

/// Opens a TCP socket of `family`, owned by a `TcpStream` so every path closes it.
fn socket(family: libc::c_int) -> io::Result<TcpStream> {
    // SAFETY: plain socket(2); the returned fd is checked and then owned by the TcpStream.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh socket nobody else owns.
    Ok(unsafe { TcpStream::from_raw_fd(fd) })
}

fn setsockopt(fd: RawFd, level: libc::c_int, name: libc::c_int, val: &[u8]) -> io::Result<()> {
    // SAFETY: `val` is valid for `val.len()` bytes; the kernel only reads it.
    let rc = unsafe { libc::setsockopt(fd, level, name, val.as_ptr().cast(), val.len() as libc::socklen_t) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    setsockopt(fd, level, name, &v.to_ne_bytes())
}

pub fn set_cca(fd: RawFd, kernel_name: &str) -> io::Result<()> {
    setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, kernel_name.as_bytes())
}

/// The congestion control the kernel actually runs on `fd`.
pub fn get_cca(fd: RawFd) -> io::Result<String> {
    let mut buf = [0u8; 16]; // TCP_CA_NAME_MAX
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is writable for `len` bytes; the kernel writes at most that and updates len.
    let rc = unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, buf.as_mut_ptr().cast(), &mut len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let name = &buf[..len as usize];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

pub fn tcp_info(fd: RawFd) -> io::Result<libc::tcp_info> {
    // SAFETY: tcp_info is plain integers, so all-zero is a valid value; the kernel fills at most
    // `len` bytes (older kernels fewer, leaving the newest fields zero).
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` and `len` live across the call and `len` is the size of `info`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok(info)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Options applied before the SYN leaves.
pub struct ConnectOptions<'a> {
    pub cca: &'a str,
    /// Payload bytes per segment (the scenario's `mss`), applied as `TCP_MAXSEG` (see
    /// `maxseg`).
    pub mss: Option<u32>,
    /// `TCP_NOTSENT_LOWAT`: bytes of not-yet-sent data the socket buffer may hold.
    pub notsent_lowat: Option<u32>,
}

/// `TCP_MAXSEG` is the MSS announced in the SYN; with timestamps the kernel then carries 12
/// bytes of options per segment, leaving `MAXSEG − 12` of payload. Whether timestamps are on is
/// this namespace's `net.ipv4.tcp_timestamps` (assumed equal on the sink's side).
fn maxseg(payload: u32) -> u32 {
    let ts = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_timestamps").map_or(true, |v| v.trim() != "0");
    payload + if ts { 12 } else { 0 }
}

/// One connect attempt, bounded by `timeout` (on Linux SO_SNDTIMEO bounds a blocking connect).
pub fn connect(addr: SocketAddr, opts: &ConnectOptions, timeout: Duration) -> io::Result<TcpStream> {
    let family = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    let stream = socket(family)?;
    let fd = stream.as_raw_fd();
    set_cca(fd, opts.cca)?;
    if let Some(mss) = opts.mss {
        set_int(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, maxseg(mss) as libc::c_int)?;
    }
    if let Some(lowat) = opts.notsent_lowat {
        set_int(fd, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, lowat as libc::c_int)?;
    }
    stream.set_write_timeout(Some(timeout.max(Duration::from_millis(1))))?;
    let (storage, len) = sockaddr(addr);
    // SAFETY: `storage` holds a sockaddr of the right family and `len` is its size.
    let rc = unsafe { libc::connect(fd, (&storage as *const libc::sockaddr_storage).cast(), len) };
    if rc == 0 {
        return refuse_self_connect(stream);
    }
    let err = io::Error::last_os_error();
    // A connect cut short by SO_SNDTIMEO reports EINPROGRESS.
    if err.raw_os_error() == Some(libc::EINPROGRESS) {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out"));
    }
    Err(err)
}

/// With no listener, a connect to a local port can pick that same port as its source and
/// connect to itself (TCP simultaneous open); report it as the refusal it really is.
fn refuse_self_connect(stream: TcpStream) -> io::Result<TcpStream> {
    if stream.local_addr()? == stream.peer_addr()? {
        return Err(io::Error::from_raw_os_error(libc::ECONNREFUSED));
    }
    Ok(stream)
}

fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all-zero is valid and we fill the family's fields.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_names_map_to_kernel_names() {
        assert_eq!(kernel_cca("newreno").unwrap(), "reno");
        assert_eq!(kernel_cca("cubic").unwrap(), "cubic");
        let e = kernel_cca("vegas").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("this kernel offers: "), "{e}");
    }

    #[test]
    fn unknown_kernel_module_is_refused() {
        let s = socket(libc::AF_INET).unwrap();
        assert!(set_cca(s.as_raw_fd(), "no-such-cca").is_err());
        set_cca(s.as_raw_fd(), "reno").unwrap();
        assert_eq!(get_cca(s.as_raw_fd()).unwrap(), "reno");
    }
}
