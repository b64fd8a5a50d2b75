//! Packet traces: `[output] pcap = ["bottleneck"]` writes `<link>.pcap` for each named link, a
//! classic libpcap file (nanosecond timestamps, magic 0xa1b23c4d; LINKTYPE_RAW, IPv4) that
//! tshark and Wireshark read like a capture of real hosts.
//!
//! The capture point is the link's ingress: every packet offered to the link, before its random
//! loss and its queue, so a segment the link drops and its retransmission both appear (tshark
//! flags the second as a retransmission). Headers are synthesised by [`wire`]; packets carry
//! no payload, so each record holds the headers only (`incl_len` < `orig_len`, as a capture
//! with a snap length). Only the links named pay anything: theirs is the only [`Capture`].

pub mod wire;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::packet::{Nanos, Packet};
use wire::{encode, FlowWire};

/// Nanosecond-resolution pcap (the classic format's other magic number).
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: each record is an IP packet, its version in the first nibble.
const LINKTYPE_RAW: u32 = 101;
/// Largest record we claim to keep: our records are headers only (at most 80 bytes).
const SNAPLEN: u32 = 262_144;

/// One open pcap file.
struct PcapFile {
    out: BufWriter<File>,
    /// Reused for every packet's headers: no allocation per packet.
    buf: Vec<u8>,
    flows: Arc<[FlowWire]>,
    /// The first write error; later packets are skipped and [`Captures::close`] reports it.
    error: Option<io::Error>,
}

impl PcapFile {
    fn create(path: &Path, flows: Arc<[FlowWire]>) -> io::Result<Self> {
        // Created beside `path` and renamed into place: a link planted there is replaced.
        let (file, _) = ccbench_files::publish(path).map_err(|e| io::Error::other(e.why))?;
        let mut out = BufWriter::with_capacity(1 << 16, file);
        let mut header = [0u8; 24];
        header[..4].copy_from_slice(&MAGIC_NANOS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes());
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        header[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapFile { out, buf: Vec::with_capacity(128), flows, error: None })
    }

    fn record(&mut self, now: Nanos, pkt: &Packet) {
        if self.error.is_some() {
            return;
        }
        let Some(w) = self.flows.get(pkt.flow as usize) else { return };
        let orig_len = encode(pkt, w, &mut self.buf);
        let mut header = [0u8; 16];
        header[..4].copy_from_slice(&((now / 1_000_000_000) as u32).to_le_bytes());
        header[4..8].copy_from_slice(&((now % 1_000_000_000) as u32).to_le_bytes());
        header[8..12].copy_from_slice(&(self.buf.len() as u32).to_le_bytes());
        header[12..16].copy_from_slice(&orig_len.to_le_bytes());
        let written = self.out.write_all(&header).and_then(|_| self.out.write_all(&self.buf));
        self.error = written.err();
    }
}

/// A link's writer. Shared with the [`Captures`] that closes it once the run is over; the lock
/// is never contended (one thread runs the simulation).
#[derive(Clone)]
pub struct Capture(Arc<Mutex<PcapFile>>);

impl Capture {
    /// Record a packet offered to the link at `now`.
    pub fn record(&self, now: Nanos, pkt: &Packet) {
        lock(&self.0).record(now, pkt);
    }
}

fn lock(file: &Mutex<PcapFile>) -> MutexGuard<'_, PcapFile> {
    file.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The traces of one run, by link name.
pub struct Captures {
    files: Vec<(String, PathBuf, Capture)>,
}

impl Captures {
    /// Create `<dir>/<link>.pcap` for each of `links` (creating `dir` if needed).
    pub fn create(dir: &Path, links: &[String], flows: Vec<FlowWire>) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let flows: Arc<[FlowWire]> = flows.into();
        let mut files = Vec::with_capacity(links.len());
        for name in links {
            let path = dir.join(format!("{name}.pcap"));
            let file = PcapFile::create(&path, flows.clone())
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            files.push((name.clone(), path, Capture(Arc::new(Mutex::new(file)))));
        }
        Ok(Captures { files })
    }

    /// The writer of each link, in the order given to [`Captures::create`].
    pub fn writers(&self) -> impl Iterator<Item = (&str, Capture)> + '_ {
        self.files.iter().map(|(name, _, c)| (name.as_str(), c.clone()))
    }

    /// Flush every file; the (link, path) of each, or the first write error.
    pub fn close(self) -> io::Result<Vec<(String, PathBuf)>> {
        let mut done = Vec::with_capacity(self.files.len());
        for (name, path, capture) in self.files {
            let mut file = lock(&capture.0);
            let failed = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
            if let Some(e) = file.error.take() {
                return Err(failed(e));
            }
            file.out.flush().map_err(failed)?;
            drop(file);
            done.push((name, path));
        }
        Ok(done)
    }
}

/// A fresh folder for the traces of a run that names none: `<temp>/ccbench-pcap-<pid>-<n>`.
pub fn temp_dir() -> io::Result<PathBuf> {
    let base = std::env::temp_dir();
    for n in 0u32.. {
        let dir = base.join(format!("ccbench-pcap-{}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", base.display()))),
        }
    }
    unreachable!("a u32 of folder names is never exhausted")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    /// The global header, then one record: its time split into seconds and nanoseconds, the
    /// headers captured and the wire length announced.
    #[test]
    fn file_layout_is_nanosecond_pcap_of_raw_ip() {
        let dir = temp_dir().unwrap();
        let flows =
            vec![FlowWire { sender: [10, 0, 0, 1], receiver: [10, 0, 0, 2], flow: 0, flows: 1, tcp: None }];
        let caps = Captures::create(&dir, &["l".into()], flows).unwrap();
        let (_, c) = caps.writers().next().unwrap();
        c.record(2_500_000_123, &Packet::new(0, Kind::Datagram, 188, 0));
        let files = caps.close().unwrap();
        let bytes = std::fs::read(&files[0].1).unwrap();
        let le = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        assert_eq!((le(0), le(20)), (0xa1b2_3c4d, 101));
        assert_eq!((le(24), le(28), le(32), le(36)), (2, 500_000_123, 28, 188));
        assert_eq!(bytes.len(), 24 + 16 + 28);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
