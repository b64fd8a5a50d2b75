//! Real Linux TCP between two namespaces through one emulated 10 Mbps, 20 ms link each way.
//! Needs root; skipped with a printed reason otherwise.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::thread;
use std::time::{Duration, Instant};

use ccbench_aqm::{DropTail, Limit};
use ccbench_emu::forwarder::{Forwarder, ForwarderConfig, Port, QueueSample, Report};
use ccbench_emu::link::Link;
use ccbench_emu::netns::{self, Testbed};
use ccbench_scenario::rng::link_streams;

const RATE: f64 = 10e6;
const MS: u64 = 1_000_000;
const DELAY: u64 = 20 * MS;
const TRANSFER: Duration = Duration::from_secs(8);

fn ports() -> Vec<Port> {
    // One BDP at an 80 ms RTT: 10 Mbps × 80 ms = 100 kB.
    let q = || Box::new(DropTail::new(Limit::Bytes(100_000)));
    let mut ab = Link::new("a>b".into(), RATE, DELAY, 0, 0.0, q(), link_streams(1, 0));
    ab.measure_sojourn = true;
    let ba = Link::new("b>a".into(), RATE, DELAY, 0, 0.0, q(), link_streams(1, 1));
    vec![Port { link: ab, from: 0, to: 1 }, Port { link: ba, from: 1, to: 0 }]
}

fn config() -> ForwarderConfig {
    let mut c = ForwarderConfig::default();
    if let Some(us) = std::env::var("CCBENCH_EMU_SPIN_US").ok().and_then(|v| v.parse::<u64>().ok()) {
        c.spin = us * 1000;
    }
    c.realtime = std::env::var_os("CCBENCH_EMU_NO_RT").is_none();
    c
}

fn serialisation_ns(bytes: u64) -> u64 {
    bytes * 8 * 1_000_000_000 / RATE as u64
}

/// Minimum RTT of `n` UDP echoes of `payload` bytes from host a to host b.
fn udp_echo_rtt(tb: &Testbed, payload: usize, n: usize) -> Duration {
    let b_addr = SocketAddr::new(tb.hosts()[1].addr.into(), 7);
    let server = tb.enter(1, || UdpSocket::bind(b_addr)).unwrap().unwrap();
    server.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let echo = thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let end = Instant::now() + Duration::from_secs(5);
        let mut echoed = 0;
        while Instant::now() < end && echoed < n {
            if let Ok((k, from)) = server.recv_from(&mut buf) {
                let _ = server.send_to(&buf[..k], from);
                echoed += 1;
            }
        }
    });
    let client =
        tb.enter(0, || UdpSocket::bind(SocketAddr::new(tb.hosts()[0].addr.into(), 0))).unwrap().unwrap();
    client.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut best = Duration::MAX;
    let mut buf = [0u8; 2048];
    for _ in 0..n {
        let sent = Instant::now();
        client.send_to(&vec![7u8; payload], b_addr).unwrap();
        if client.recv_from(&mut buf).is_ok() {
            best = best.min(sent.elapsed());
        }
        thread::sleep(Duration::from_millis(30));
    }
    let _ = echo.join();
    best
}

fn set_cubic(s: &TcpStream) {
    let name = b"cubic";
    // SAFETY: setsockopt reads `name.len()` bytes from a live buffer.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as u32,
        )
    };
    assert_eq!(r, 0, "TCP_CONGESTION cubic: {}", std::io::Error::last_os_error());
}

/// tcpi_min_rtt in microseconds.
fn min_rtt_us(s: &TcpStream) -> u32 {
    // SAFETY: tcp_info is plain data; getsockopt fills at most `len` bytes of it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` and `len` live across the call and `len` is the size of `info`.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    assert_eq!(r, 0, "TCP_INFO");
    info.tcpi_min_rtt
}

/// Receive on `listener` until EOF or 15 s; returns (bytes, first-to-last-byte time).
fn receive(listener: TcpListener) -> (u64, Duration) {
    listener.set_nonblocking(true).unwrap();
    let end = Instant::now() + Duration::from_secs(15);
    let mut conn = None;
    while conn.is_none() && Instant::now() < end {
        match listener.accept() {
            Ok((c, _)) => conn = Some(c),
            Err(_) => thread::sleep(Duration::from_millis(1)),
        }
    }
    let Some(mut c) = conn else { return (0, Duration::ZERO) };
    c.set_nonblocking(false).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let start = Instant::now();
    let (mut bytes, mut last) = (0u64, start);
    let mut buf = vec![0u8; 1 << 16];
    while Instant::now() < end {
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(k) => (bytes, last) = (bytes + k as u64, Instant::now()),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock || e.kind() == std::io::ErrorKind::TimedOut => {
            }
            Err(_) => break,
        }
    }
    (bytes, last - start)
}

/// Send for `TRANSFER`; returns tcpi_min_rtt in µs.
fn send(tb: &Testbed) -> u32 {
    let to = SocketAddr::new(tb.hosts()[1].addr.into(), 5001);
    let mut s = tb.enter(0, || TcpStream::connect_timeout(&to, Duration::from_secs(3))).unwrap().unwrap();
    set_cubic(&s);
    s.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
    let chunk = vec![0x5au8; 1 << 16];
    let start = Instant::now();
    while start.elapsed() < TRANSFER {
        if s.write(&chunk).is_err() {
            break;
        }
    }
    let rtt = min_rtt_us(&s);
    let _ = s.shutdown(std::net::Shutdown::Write);
    rtt
}

/// Departure rate over the stretches where the queue stayed non-empty at every sample.
fn backlogged_rate(samples: &[QueueSample]) -> (f64, f64) {
    let (mut bytes, mut ns) = (0u64, 0u64);
    let mut run_start: Option<&QueueSample> = None;
    for w in samples.windows(2) {
        let busy = w[0].queue_packets > 0 && w[1].queue_packets > 0;
        match (busy, run_start) {
            (true, None) => run_start = Some(&w[0]),
            (false, Some(s)) => {
                bytes += w[0].bytes_departed - s.bytes_departed;
                ns += w[0].t - s.t;
                run_start = None;
            }
            _ => {}
        }
    }
    (bytes as f64 * 8e9 / ns.max(1) as f64, ns as f64 / 1e9)
}

fn summarise(r: &Report) {
    for l in &r.links {
        let c = &l.counters;
        eprintln!(
            "link {}: arrivals {} departures {} drops {} bytes {}; lateness mean {:.1} µs max {:.1} µs, >100 µs: {} of {}",
            l.name, c.arrivals, c.departures, c.drops(), c.bytes_departed,
            l.lateness.mean_ns() / 1e3, l.lateness.max_ns as f64 / 1e3, l.lateness.over_us(100), l.lateness.packets
        );
    }
    for l in &r.links {
        eprintln!("lateness histogram {}: {:?}", l.name, l.lateness.histogram);
    }
    eprintln!(
        "foreign {} unroutable {} write errors {} realtime {} cpu {:.2} s of {:.2} s",
        r.foreign,
        r.unroutable,
        r.write_errors,
        r.realtime,
        r.cpu_ns as f64 / 1e9,
        r.elapsed as f64 / 1e9
    );
}

#[test]
fn cubic_through_a_10mbps_40ms_link() {
    require_netns!();
    let tb = Testbed::new(&["a", "b"]).unwrap();
    let run_id = tb.run_id().to_string();
    let fwd = Forwarder::new(tb.tun_fds().unwrap(), ports(), config()).unwrap();
    let running = fwd.start().unwrap();

    let echo = udp_echo_rtt(&tb, 100, 20);
    let echo_want = 2 * DELAY + 2 * serialisation_ns(128);
    let listener =
        tb.enter(1, || TcpListener::bind(SocketAddr::new(tb.hosts()[1].addr.into(), 5001))).unwrap().unwrap();
    let rx = thread::spawn(move || receive(listener));
    let min_rtt = send(&tb) as u64 * 1000;
    let (bytes, took) = rx.join().unwrap();
    let report = running.stop().unwrap();
    summarise(&report);

    let goodput = bytes as f64 * 8.0 / took.as_secs_f64();
    let (rate, backlogged) = backlogged_rate(&report.links[0].samples);
    let echo_err = (echo.as_nanos() as f64 - echo_want as f64) / echo_want as f64;
    // The client's min RTT comes from the SYN/SYN-ACK exchange or a full-size segment.
    let (rtt_lo, rtt_hi) = (2 * DELAY + 2 * serialisation_ns(60), 2 * DELAY + serialisation_ns(1500 + 52));
    eprintln!(
        "goodput {:.3} Mbps ({bytes} B in {:.2} s); departure rate {:.4} Mbps over {backlogged:.2} s backlogged; \
         UDP echo RTT {:.3} ms (want {:.3}, error {:+.2}%); TCP min_rtt {:.3} ms (want {:.3}..{:.3})",
        goodput / 1e6, took.as_secs_f64(), rate / 1e6, echo.as_secs_f64() * 1e3, echo_want as f64 / 1e6,
        echo_err * 100.0, min_rtt as f64 / 1e6, rtt_lo as f64 / 1e6, rtt_hi as f64 / 1e6
    );
    assert!(goodput > 0.85 * RATE, "goodput {goodput}");
    assert!(took > Duration::from_secs(7), "the transfer lasted {took:?}");
    assert!(backlogged > 1.0, "backlogged only {backlogged} s");
    assert!((rate / RATE - 1.0).abs() < 0.02, "departure rate {rate}");
    assert!(echo_err.abs() < 0.02, "UDP echo RTT {echo:?}");
    assert!(
        min_rtt as f64 > 0.98 * rtt_lo as f64 && (min_rtt as f64) < 1.02 * rtt_hi as f64,
        "min_rtt {min_rtt}"
    );
    assert!(!report.links[0].sojourn.is_empty());

    drop(tb);
    assert_eq!(netns::namespaces_of(&run_id), Vec::<String>::new(), "namespaces left behind");
}

/// A parsed `[bottleneck]` scenario becomes hosts r1, r2 and the simulator's two links.
#[test]
fn dumbbell_scenario_builds_and_forwards() {
    require_netns!();
    let text =
        "duration = \"2s\"\nseed = 3\n[bottleneck]\nrate = \"10Mbps\"\ndelay = \"20ms\"\nrtt = \"40ms\"\n\
                buffer = \"1bdp\"\n[[flows]]\ncca = \"cubic\"\n";
    let sc = ccbench_scenario::parse_str(text, "t", &[], None).unwrap();
    let tb = Testbed::new(&sc.topology.nodes).unwrap();
    let fwd = Forwarder::from_topology(&sc.topology, sc.seed, &tb, config()).unwrap();
    let running = fwd.start().unwrap();
    let echo = udp_echo_rtt(&tb, 100, 5);
    let report = running.stop().unwrap();
    let names: Vec<&str> = report.links.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["bottleneck", "bottleneck-rev"]);
    let want = 2 * DELAY + 2 * serialisation_ns(128);
    let err = (echo.as_nanos() as f64 - want as f64) / want as f64;
    eprintln!(
        "dumbbell echo RTT {:.3} ms (want {:.3}, {:+.2}%)",
        echo.as_secs_f64() * 1e3,
        want as f64 / 1e6,
        err * 100.0
    );
    assert!(err.abs() < 0.02);
    assert_eq!(report.links[0].counters.departures, 5);
}
