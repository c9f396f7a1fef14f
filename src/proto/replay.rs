//! Replays the datagrams of a capture file on loopback, as fast as the sockets
//! take them, at a set rate, or at the pace the capture was taken: traffic for
//! measuring a live capture (`lwarscope sim --live --replay FILE [--pps N]`),
//! and the live mode of the simulators that write captures (`sim --proto NAME
//! --live`: the simulated game, replayed in real time).
//!
//! Each endpoint of the capture gets its own UDP socket on the loopback address
//! of its family (the server port is kept when it is free), so the capture sees
//! the same sessions. Nothing reads the sockets: the frames cross `lo`, where a
//! capture sees them, and the receiving sockets drop what overflows.

use crate::capture::{FrameClass, Source, Timestamp};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How fast to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// As fast as the sockets take them.
    AsFast,
    /// This many datagrams per second.
    Pps(u64),
    /// As the capture was taken: each datagram at its time from the first.
    Capture,
}

/// What to replay, and how fast.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    pub file: PathBuf,
    pub pace: Pace,
    /// The datagrams to send (a protocol's probe); the others are skipped.
    pub keep: fn(&[u8]) -> bool,
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("--replay: {0}")]
    Capture(#[from] crate::capture::CaptureError),
    #[error("replay: a loopback socket: {0}")]
    Socket(#[from] std::io::Error),
}

/// What a replay did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ReplayStats {
    pub sent: u64,
    /// Sends the kernel refused (a full socket buffer, mostly).
    pub failed: u64,
    pub secs: f64,
}

impl fmt::Display for ReplayStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "replay: {} datagrams sent in {:.3} s ({:.0}/s), {} sends failed",
            self.sent,
            self.secs,
            self.sent as f64 / self.secs.max(1e-9),
            self.failed
        )
    }
}

/// The loopback socket standing for each endpoint of the capture.
#[derive(Default)]
struct Endpoints {
    sockets: crate::engine::wire_map::WireMap<SocketAddr, (UdpSocket, SocketAddr)>,
}

impl Endpoints {
    fn get(&mut self, endpoint: SocketAddr) -> Result<&(UdpSocket, SocketAddr), ReplayError> {
        use std::collections::hash_map::Entry;
        Ok(match self.sockets.entry(endpoint) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let host = match endpoint.ip() {
                    IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::LOCALHOST),
                    IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::LOCALHOST),
                };
                let socket = UdpSocket::bind(SocketAddr::new(host, endpoint.port()))
                    .or_else(|_| UdpSocket::bind(SocketAddr::new(host, 0)))?;
                let local = socket.local_addr()?;
                e.insert((socket, local))
            }
        })
    }
}

/// Replays `cfg.file`'s datagrams that `cfg.keep` takes, on loopback.
pub fn run_replay(cfg: &ReplayConfig) -> Result<ReplayStats, ReplayError> {
    let mut source = Source::files(&[&cfg.file])?;
    let mut endpoints = Endpoints::default();
    let mut stats = ReplayStats::default();
    let start = Instant::now();
    let mut first: Option<Timestamp> = None;
    while let Some(frame) = source.next_frame()? {
        let FrameClass::Udp(d) = frame.class else {
            continue;
        };
        if !(cfg.keep)(d.payload) {
            continue;
        }
        let to = endpoints.get(d.dst)?.1;
        let (socket, _) = endpoints.get(d.src)?;
        let due = match cfg.pace {
            Pace::AsFast => None,
            Pace::Pps(pps) => Some(Duration::from_secs_f64(
                (stats.sent + stats.failed) as f64 / pps as f64,
            )),
            Pace::Capture => Some(Duration::from_nanos(d.ts.since(*first.get_or_insert(d.ts)))),
        };
        if let Some(due) = due {
            // Never ahead of time; sleeps only when a millisecond ahead.
            let elapsed = start.elapsed();
            if due > elapsed + Duration::from_millis(1) {
                std::thread::sleep(due - elapsed);
            }
            while start.elapsed() < due {
                std::hint::spin_loop();
            }
        }
        match socket.send_to(d.payload, to) {
            Ok(_) => stats.sent += 1,
            Err(_) => stats.failed += 1,
        }
    }
    stats.secs = start.elapsed().as_secs_f64();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::lwar::sim::{VirtualConfig, run_virtual};
    use crate::proto::lwar::wire::is_lwar;

    #[test]
    fn every_lwar_datagram_is_sent_at_the_rate_asked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("small.pcap");
        let mut config = VirtualConfig::clean(1, 2, 0);
        config.duration_ms = None;
        config.packets = Some(300);
        run_virtual(&config, &file, None).unwrap();
        let stats = run_replay(&ReplayConfig {
            file: file.clone(),
            pace: Pace::Pps(3_000),
            keep: is_lwar,
        })
        .unwrap();
        assert_eq!((stats.sent, stats.failed), (300, 0));
        // Paced: 300 datagrams at 3000/s take at least 0.1 s.
        assert!(stats.secs >= 0.099, "{stats}");
        // At the capture's own pace: as long as the capture spans.
        let span = {
            let run = Source::files(&[&file]).unwrap();
            let mut run = run;
            let (mut lo, mut hi) = (None, None);
            while let Some(f) = run.next_frame().unwrap() {
                lo.get_or_insert(f.ts);
                hi = Some(f.ts);
            }
            hi.unwrap().since(lo.unwrap()) as f64 / 1e9
        };
        let stats = run_replay(&ReplayConfig {
            file,
            pace: Pace::Capture,
            keep: is_lwar,
        })
        .unwrap();
        assert_eq!(stats.sent, 300);
        assert!(
            stats.secs >= span * 0.99,
            "{stats} for a capture of {span} s"
        );
    }
}
