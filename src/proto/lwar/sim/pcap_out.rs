//! Writing simulated datagrams as Ethernet frames into a pcap file.

use super::SimError;
use crate::capture::synth::PcapFile;
use etherparse::PacketBuilder;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

/// Seconds since the epoch of the first instant of every simulated capture
/// (2023-11-14T22:13:20Z): fixed, so that captures are reproducible.
pub const EPOCH_SECS: u64 = 1_700_000_000;

/// A pcap savefile of Ethernet frames carrying UDP datagrams.
pub struct PcapOut {
    file: PcapFile,
    path: String,
    frame: Vec<u8>,
    /// Frames written so far.
    pub frames: u64,
}

fn mac(ip: IpAddr, port: u16) -> [u8; 6] {
    let last = match ip {
        IpAddr::V4(v4) => v4.octets()[3],
        IpAddr::V6(v6) => v6.octets()[15],
    };
    let p = port.to_be_bytes();
    [0x02, 0x00, last, p[0], p[1], 0x01]
}

impl PcapOut {
    pub fn create(path: &Path) -> Result<Self, SimError> {
        // Microseconds, Ethernet (LINKTYPE 1).
        let shown = path.display().to_string();
        let file = PcapFile::create(path, 1, false).map_err(|source| SimError::Write {
            path: shown.clone(),
            source,
        })?;
        Ok(PcapOut {
            file,
            path: shown,
            frame: Vec::with_capacity(1600),
            frames: 0,
        })
    }

    /// Writes one datagram captured at `ts_us` (microseconds since [`EPOCH_SECS`]).
    pub fn write(
        &mut self,
        ts_us: u64,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &[u8],
    ) -> Result<(), SimError> {
        self.frame.clear();
        let eth = PacketBuilder::ethernet2(mac(src.ip(), src.port()), mac(dst.ip(), dst.port()));
        let written = match (src.ip(), dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => eth
                .ipv4(s.octets(), d.octets(), 64)
                .udp(src.port(), dst.port())
                .write(&mut self.frame, payload)
                .map_err(|e| e.to_string()),
            (IpAddr::V6(s), IpAddr::V6(d)) => eth
                .ipv6(s.octets(), d.octets(), 64)
                .udp(src.port(), dst.port())
                .write(&mut self.frame, payload)
                .map_err(|e| e.to_string()),
            _ => Err("mixed IPv4 and IPv6 addresses".to_owned()),
        };
        written.map_err(SimError::Frame)?;
        let secs = EPOCH_SECS + ts_us / 1_000_000;
        let len = self.frame.len() as u32;
        self.file
            .record(secs as u32, (ts_us % 1_000_000) as u32, &self.frame, len);
        self.frames += 1;
        Ok(())
    }

    /// Flushes: a write error (a full disk) is an error.
    pub fn finish(self) -> Result<(), SimError> {
        let path = self.path;
        self.file
            .finish()
            .map_err(|source| SimError::Write { path, source })
    }
}
