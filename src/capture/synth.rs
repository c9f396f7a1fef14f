//! Synthetic frames and pcap files: for test fixtures and the simulator.
//!
//! IP and UDP headers come from etherparse's `PacketBuilder` (checksums
//! included); the link headers are written here, for every link type the capture
//! front end reads.
//!
//! ```
//! use lwarscope::capture::synth::{Link, udp_frame};
//! let frame = udp_frame(
//!     Link::Vlan(7),
//!     "10.0.0.1:5000".parse().unwrap(),
//!     "10.0.0.2:32422".parse().unwrap(),
//!     b"payload",
//! );
//! assert_eq!(frame.len(), 14 + 4 + 20 + 8 + 7);
//! ```

use super::Timestamp;
use super::error::CaptureError;
use super::link::LinkType;
use etherparse::{IpFragOffset, IpNumber, Ipv4Header, Ipv6FragmentHeader, Ipv6Header, UdpHeader};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

/// ARPHRD type of an Ethernet device, in a Linux cooked header.
pub const ARPHRD_ETHER: u16 = 1;
/// ARPHRD type of the loopback device (`lo`, as `-i any` shows it).
pub const ARPHRD_LOOPBACK: u16 = 772;
/// ARPHRD type of a netlink socket (not IP).
pub const ARPHRD_NETLINK: u16 = 824;

/// How a synthetic frame is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Link {
    /// Ethernet II.
    Ethernet,
    /// Ethernet with one 802.1Q tag.
    Vlan(u16),
    /// Ethernet with an 802.1ad outer tag and an 802.1Q inner tag.
    QinQ { outer: u16, inner: u16 },
    /// Linux cooked capture v1, from a device of this ARPHRD type
    /// ([`ARPHRD_ETHER`], [`ARPHRD_LOOPBACK`], ...).
    LinuxSll(u16),
    /// Linux cooked capture v2 (what `-i any` gives), from a device of this
    /// ARPHRD type.
    LinuxSll2(u16),
    /// BSD loopback, little-endian family (as an x86 or ARM host writes it),
    /// AF_INET6 as macOS numbers it (30).
    Null,
    /// BSD loopback written by a big-endian host, AF_INET6 as FreeBSD numbers it (28).
    NullBigEndian,
    /// OpenBSD loopback: network byte order, AF_INET6 = 24.
    Loop,
    /// Raw IP, no link header.
    RawIp,
}

impl Link {
    /// Every variant, for tests that go over all of them.
    pub const ALL: [Link; 11] = [
        Link::Ethernet,
        Link::Vlan(7),
        Link::QinQ {
            outer: 100,
            inner: 7,
        },
        Link::LinuxSll(ARPHRD_ETHER),
        Link::LinuxSll(ARPHRD_LOOPBACK),
        Link::LinuxSll2(ARPHRD_ETHER),
        Link::LinuxSll2(ARPHRD_LOOPBACK),
        Link::Null,
        Link::NullBigEndian,
        Link::Loop,
        Link::RawIp,
    ];

    /// The link type of a capture file holding such frames.
    pub const fn link_type(self) -> LinkType {
        match self {
            Link::Ethernet | Link::Vlan(_) | Link::QinQ { .. } => LinkType::Ethernet,
            Link::LinuxSll(_) => LinkType::LinuxSll,
            Link::LinuxSll2(_) => LinkType::LinuxSll2,
            Link::Null | Link::NullBigEndian => LinkType::Null,
            Link::Loop => LinkType::Loop,
            Link::RawIp => LinkType::RawIp,
        }
    }
}

const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

/// An IPv4 or IPv6 packet carrying one UDP datagram (checksums computed).
///
/// # Panics
/// If `src` and `dst` are not of the same address family, or the payload does
/// not fit in one IP packet.
pub fn udp_packet(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
    let builder = match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            etherparse::PacketBuilder::ipv4(s.octets(), d.octets(), 64)
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            etherparse::PacketBuilder::ipv6(s.octets(), d.octets(), 64)
        }
        _ => panic!("udp_packet: {src} and {dst} are of different address families"),
    };
    let mut out = Vec::new();
    builder
        .udp(src.port(), dst.port())
        .write_to_vec(&mut out, payload)
        .expect("payload fits in an IP packet");
    out
}

/// The IP fragments of one UDP datagram, in order: each carries at most
/// `max_data` bytes of the UDP header and payload (rounded down to a multiple
/// of 8, at least 8).
///
/// # Panics
/// As [`udp_packet`].
pub fn udp_fragments(
    src: SocketAddr,
    dst: SocketAddr,
    id: u32,
    payload: &[u8],
    max_data: usize,
) -> Vec<Vec<u8>> {
    let chunk = (max_data / 8).max(1) * 8;
    let mut out = Vec::new();
    match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let full =
                Ipv4Header::new(0, 64, IpNumber::UDP, s.octets(), d.octets()).expect("no payload");
            let udp = UdpHeader::with_ipv4_checksum(src.port(), dst.port(), &full, payload)
                .expect("payload fits");
            let data = [&udp.to_bytes()[..], payload].concat();
            for (i, piece) in data.chunks(chunk).enumerate() {
                let offset = i * chunk;
                let mut h = Ipv4Header::new(
                    piece.len() as u16,
                    64,
                    IpNumber::UDP,
                    s.octets(),
                    d.octets(),
                )
                .expect("fits");
                h.identification = id as u16;
                h.more_fragments = offset + piece.len() < data.len();
                h.fragment_offset = IpFragOffset::try_new((offset / 8) as u16).expect("fits");
                h.header_checksum = h.calc_header_checksum();
                out.push([&h.to_bytes()[..], piece].concat());
            }
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            let full = Ipv6Header {
                next_header: IpNumber::UDP,
                hop_limit: 64,
                source: s.octets(),
                destination: d.octets(),
                ..Default::default()
            };
            let udp = UdpHeader::with_ipv6_checksum(src.port(), dst.port(), &full, payload)
                .expect("payload fits");
            let data = [&udp.to_bytes()[..], payload].concat();
            for (i, piece) in data.chunks(chunk).enumerate() {
                let offset = i * chunk;
                let frag = Ipv6FragmentHeader::new(
                    IpNumber::UDP,
                    IpFragOffset::try_new((offset / 8) as u16).expect("fits"),
                    offset + piece.len() < data.len(),
                    id,
                );
                let h = Ipv6Header {
                    payload_length: (Ipv6FragmentHeader::LEN + piece.len()) as u16,
                    next_header: IpNumber::IPV6_FRAGMENTATION_HEADER,
                    ..full.clone()
                };
                out.push([&h.to_bytes()[..], &frag.to_bytes()[..], piece].concat());
            }
        }
        _ => panic!("udp_fragments: {src} and {dst} are of different address families"),
    }
    out
}

/// An IP packet framed for `link`. The IP version is read from the packet.
pub fn frame(link: Link, ip_packet: &[u8]) -> Vec<u8> {
    let v6 = ip_packet.first().is_some_and(|b| b >> 4 == 6);
    let ether_type: u16 = if v6 { 0x86dd } else { 0x0800 };
    let mut out = Vec::with_capacity(ip_packet.len() + 24);
    match link {
        Link::Ethernet | Link::Vlan(_) | Link::QinQ { .. } => {
            out.extend_from_slice(&DST_MAC);
            out.extend_from_slice(&SRC_MAC);
            match link {
                Link::Vlan(id) => push_tag(&mut out, 0x8100, id),
                Link::QinQ { outer, inner } => {
                    push_tag(&mut out, 0x88a8, outer);
                    push_tag(&mut out, 0x8100, inner);
                }
                _ => {}
            }
            out.extend_from_slice(&ether_type.to_be_bytes());
        }
        Link::LinuxSll(arphrd) => {
            out.extend_from_slice(&0u16.to_be_bytes()); // packet type: to us
            out.extend_from_slice(&arphrd.to_be_bytes());
            out.extend_from_slice(&6u16.to_be_bytes()); // address length
            out.extend_from_slice(&SRC_MAC);
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(&ether_type.to_be_bytes());
        }
        Link::LinuxSll2(arphrd) => {
            out.extend_from_slice(&ether_type.to_be_bytes());
            out.extend_from_slice(&[0, 0]); // reserved
            out.extend_from_slice(&2u32.to_be_bytes()); // interface index
            out.extend_from_slice(&arphrd.to_be_bytes());
            out.push(0); // packet type: to us
            out.push(6); // address length
            out.extend_from_slice(&SRC_MAC);
            out.extend_from_slice(&[0, 0]);
        }
        Link::Null => out.extend_from_slice(&(if v6 { 30u32 } else { 2 }).to_le_bytes()),
        Link::NullBigEndian => out.extend_from_slice(&(if v6 { 28u32 } else { 2 }).to_be_bytes()),
        Link::Loop => out.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes()),
        Link::RawIp => {}
    }
    out.extend_from_slice(ip_packet);
    out
}

fn push_tag(out: &mut Vec<u8>, tpid: u16, vlan_id: u16) {
    out.extend_from_slice(&tpid.to_be_bytes());
    out.extend_from_slice(&(vlan_id & 0x0fff).to_be_bytes());
}

/// A UDP datagram in a frame for `link`: [`udp_packet`] then [`frame`].
pub fn udp_frame(link: Link, src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> Vec<u8> {
    frame(link, &udp_packet(src, dst, payload))
}

/// A classic pcap file, byte for byte what libpcap's dumper writes (host byte
/// order, snaplen 65535), written through std's I/O so that every write error
/// is seen: libpcap's dumper drops a buffer it failed to write, and a later
/// flush with nothing left succeeds (`-w /dev/full` or a full disk looked
/// like a success).
pub struct PcapFile {
    out: BufWriter<File>,
    /// The first write error, reported by [`PcapFile::finish`].
    error: Option<io::Error>,
}

impl PcapFile {
    /// Creates (or truncates) `path` with the file header: `linktype` as files
    /// number it (LINKTYPE), timestamps in nanoseconds or microseconds, the
    /// snapshot length 65535 (libpcap's for a dead capture).
    pub fn create(path: &Path, linktype: u32, nanos: bool) -> io::Result<Self> {
        Self::with_snaplen(path, linktype, nanos, 65_535)
    }

    /// [`PcapFile::create`] with the header's snapshot length.
    pub fn with_snaplen(path: &Path, linktype: u32, nanos: bool, snaplen: u32) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&magic.to_ne_bytes());
        h.extend_from_slice(&2u16.to_ne_bytes());
        h.extend_from_slice(&4u16.to_ne_bytes());
        h.extend_from_slice(&0i32.to_ne_bytes());
        h.extend_from_slice(&0u32.to_ne_bytes());
        h.extend_from_slice(&snaplen.to_ne_bytes());
        h.extend_from_slice(&linktype.to_ne_bytes());
        out.write_all(&h)?;
        Ok(PcapFile { out, error: None })
    }

    /// Writes one record: `secs` and `frac` (ns or µs, as the file was
    /// created), the bytes kept, and the frame's length on the wire.
    pub fn record(&mut self, secs: u32, frac: u32, data: &[u8], orig_len: u32) {
        if self.error.is_some() {
            return;
        }
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&secs.to_ne_bytes());
        h[4..8].copy_from_slice(&frac.to_ne_bytes());
        h[8..12].copy_from_slice(&(data.len() as u32).to_ne_bytes());
        h[12..16].copy_from_slice(&orig_len.to_ne_bytes());
        if let Err(e) = self
            .out
            .write_all(&h)
            .and_then(|()| self.out.write_all(data))
        {
            self.error = Some(e);
        }
    }

    /// Flushes: the first write error since the last flush, if any.
    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }

    /// Flushes and closes the file: the first write error, if any.
    pub fn finish(mut self) -> io::Result<()> {
        self.flush()
    }
}

/// The LINKTYPE value files carry for a link type (DLT_RAW is 12 in memory,
/// LINKTYPE_RAW 101 in files).
pub const fn file_linktype(link: LinkType) -> u32 {
    match link {
        LinkType::RawIp => 101,
        other => other.dlt() as u32,
    }
}

/// Writes frames to a classic pcap file with nanosecond timestamps.
pub struct PcapWriter {
    file: PcapFile,
    path: String,
}

impl PcapWriter {
    /// Creates (or truncates) `path` for frames of `link`.
    pub fn create(path: impl AsRef<Path>, link: LinkType) -> Result<Self, CaptureError> {
        let shown = path.as_ref().display().to_string();
        let file = PcapFile::create(path.as_ref(), file_linktype(link), true).map_err(|e| {
            CaptureError::Savefile {
                path: shown.clone(),
                reason: e.to_string(),
            }
        })?;
        Ok(PcapWriter { file, path: shown })
    }

    /// Writes a whole frame.
    pub fn write(&mut self, ts: Timestamp, frame: &[u8]) {
        self.write_cut(ts, frame, frame.len());
    }

    /// Writes a frame of `orig_len` bytes of which the capture kept only `captured`
    /// (as a snaplen does).
    pub fn write_cut(&mut self, ts: Timestamp, captured: &[u8], orig_len: usize) {
        self.file.record(
            (ts.nanos() / 1_000_000_000) as u32,
            (ts.nanos() % 1_000_000_000) as u32,
            captured,
            orig_len.max(captured.len()) as u32,
        );
    }

    /// Flushes and closes the file; a write error (a full disk) is an error.
    pub fn finish(self) -> Result<(), CaptureError> {
        let path = self.path;
        self.file.finish().map_err(|e| CaptureError::Savefile {
            path,
            reason: e.to_string(),
        })
    }
}
