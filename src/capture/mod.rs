//! Capture front end: frames from capture files (read in place, `mapped`) or
//! libpcap (live interfaces, standard input, pipes, compressed streams) to
//! UDP datagrams. It knows no game protocol: the engine recognises them.
//!
//! A [`Source`] reads pcap and pcapng files (in order, as one stream; `-` is
//! standard input) or a live interface, and yields a [`Frame`] for each frame:
//! its number (1-based over the run, as Wireshark counts), timestamp, lengths, and
//! its [`FrameClass`]: a UDP [`Datagram`], or why it is not one. IP fragments
//! are reassembled within bounds; [`FrameCounts`] counts every class, and live
//! captures add libpcap's drop counters ([`PcapStats`]).
//!
//! ```no_run
//! use lwarscope::capture::{FrameClass, Source};
//! let mut source = Source::files(&["capture.pcap"])?;
//! while let Some(frame) = source.next_frame()? {
//!     if let FrameClass::Udp(d) = frame.class {
//!         println!("{} {} -> {}: {} bytes", d.frame, d.src, d.dst, d.payload_len);
//!     }
//! }
//! println!("{:?}", source.stats());
//! # Ok::<(), lwarscope::capture::CaptureError>(())
//! ```

pub mod compressed;
mod error;
pub mod export;
mod frame;
mod framer;
mod link;
mod mapped;
mod piped;
mod reassembly;
pub mod rotate;
mod shrink;
mod source;
pub mod synth;

pub use error::CaptureError;
pub use frame::{
    CaptureStats, Frame, FrameClass, FrameCounts, IncompleteCounts, IncompleteDatagram,
    IncompleteReason, PcapStats,
};
pub use framer::Framer;
pub use link::LinkType;
pub use reassembly::{MAX_INCOMPLETE_RECORDS, ReassemblyLimits};
pub use source::{
    DEFAULT_FILTER, DEFAULT_FILTER_NO_VLAN, DEFAULT_SNAPLEN, FileReader, Interface, LiveOptions,
    Source, StopHandle, classify_frame, default_filter, list_interfaces,
};

use std::fmt;
use std::net::SocketAddr;

/// A capture timestamp: nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

impl Timestamp {
    pub const fn from_micros(us: u64) -> Self {
        Timestamp(us * 1_000)
    }

    pub const fn from_millis(ms: u64) -> Self {
        Timestamp(ms * 1_000_000)
    }

    pub const fn nanos(self) -> u64 {
        self.0
    }

    /// Seconds as a float, for rates and display: the `f64` nearest the
    /// time (the whole seconds exact, the fraction rounded once before they
    /// are added), so that a microsecond time reads back as written
    /// (`1700000000.1012`). The nanoseconds as one `f64` would not: above
    /// 2^53 they are rounded once, the quotient again
    /// (`1700000000.1011999`).
    pub fn secs_f64(self) -> f64 {
        (self.0 / 1_000_000_000) as f64 + (self.0 % 1_000_000_000) as f64 / 1e9
    }

    /// Nanoseconds from `earlier` to `self`, zero if `earlier` is later.
    pub const fn since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// `seconds.microseconds`, as tcpdump prints it.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:06}",
            self.0 / 1_000_000_000,
            (self.0 % 1_000_000_000) / 1_000
        )
    }
}

/// A captured UDP datagram. Two are equal when what was captured is: the
/// digest and the probes' marks, taken ahead or not, are not compared.
#[derive(Debug, Clone, Copy)]
pub struct Datagram<'a> {
    /// Frame number, 1-based over the whole run, as Wireshark counts (for a
    /// reassembled datagram: the frame of its last fragment).
    pub frame: u64,
    pub ts: Timestamp,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    /// The UDP payload as captured.
    pub payload: &'a [u8],
    /// The UDP payload length the UDP header states. Larger than `payload.len()`
    /// when the capture's snaplen cut the frame short.
    pub payload_len: usize,
    /// The length of the frame that carried the datagram on the wire, link
    /// header included (tshark's `frame.len`): the capture record's original
    /// length, libpcap's `len` live. For a reassembled datagram: its last
    /// fragment's frame.
    pub frame_len: u32,
    /// The bytes of that frame the capture kept (tshark's `frame.cap_len`):
    /// `frame_len`, or fewer when the snaplen cut the frame.
    pub frame_cap_len: u32,
    /// The payload's digest ([`payload_digest`]) when whoever built the
    /// datagram computed it already: the two-thread pipeline's reader, so that
    /// the engine's thread does not hash every payload again. `None` elsewhere;
    /// [`Datagram::digest`] computes it then.
    pub digest: Option<u64>,
    /// The first of the engine's probes, in its order, that matches the
    /// datagram (bit `i`: the probe of its protocol `i`; 0: none; with
    /// [`crate::engine::BOUND`], none up to the protocol a handshake bound
    /// its flow to, the later ones untested), when whoever built it asked
    /// them already with the engine's own list ([`crate::engine::ProbeMarks`]):
    /// the two-thread pipeline's reader, so that the engine's thread does
    /// not test every payload against each protocol again. `None`
    /// elsewhere; the engine asks its probes then.
    pub probes: Option<u64>,
}

/// The digest by which the engine tells a datagram's bytes from a recent one's
/// (network duplicates): xxh3, 64 bits.
pub fn payload_digest(payload: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(payload)
}

impl PartialEq for Datagram<'_> {
    fn eq(&self, other: &Self) -> bool {
        let Datagram {
            frame,
            ts,
            src,
            dst,
            payload,
            payload_len,
            frame_len,
            frame_cap_len,
            digest: _,
            probes: _,
        } = *self;
        (frame, ts, src, dst, payload, payload_len)
            == (
                other.frame,
                other.ts,
                other.src,
                other.dst,
                other.payload,
                other.payload_len,
            )
            && (frame_len, frame_cap_len) == (other.frame_len, other.frame_cap_len)
    }
}

impl Eq for Datagram<'_> {}

/// The length of the Ethernet frame that carries a UDP payload of
/// `payload_len` bytes from `src`, as the simulators write it: the Ethernet
/// header (14 bytes), an IP header without options (20 bytes for IPv4, 40 for
/// IPv6), the UDP header (8) and the payload; no padding, no frame check
/// sequence. What a datagram built without a capture takes as its frame's.
pub fn ethernet_frame_len(src: SocketAddr, payload_len: usize) -> u32 {
    let ip = match src {
        SocketAddr::V4(_) => 20,
        SocketAddr::V6(_) => 40,
    };
    u32::try_from(14 + ip + 8 + payload_len).unwrap_or(u32::MAX)
}

impl<'a> Datagram<'a> {
    /// A datagram captured whole (the UDP header states `payload.len()`),
    /// with no digest taken, in the frame a simulator writes for it: its
    /// frame's lengths are [`ethernet_frame_len`]'s. For datagrams built
    /// without a capture (simulators, tests).
    pub fn new(
        frame: u64,
        ts: Timestamp,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &'a [u8],
    ) -> Self {
        let len = ethernet_frame_len(src, payload.len());
        Datagram {
            frame,
            ts,
            src,
            dst,
            payload,
            payload_len: payload.len(),
            frame_len: len,
            frame_cap_len: len,
            digest: None,
            probes: None,
        }
    }

    /// The same datagram, its UDP header stating `payload_len` bytes: more
    /// than the payload kept when the capture cut the frame, whose length on
    /// the wire ([`frame_len`](Self::frame_len)) follows.
    pub fn with_payload_len(self, payload_len: usize) -> Self {
        let cut = payload_len.saturating_sub(self.payload.len());
        Datagram {
            payload_len,
            frame_len: self
                .frame_cap_len
                .saturating_add(u32::try_from(cut).unwrap_or(u32::MAX)),
            ..self
        }
    }
}

impl Datagram<'_> {
    /// True when the capture (not the sender) cut the payload short.
    pub fn truncated_by_capture(&self) -> bool {
        self.payload.len() < self.payload_len
    }

    /// The payload's digest: the one computed ahead, or computed now.
    pub fn digest(&self) -> u64 {
        self.digest.unwrap_or_else(|| payload_digest(self.payload))
    }
}

/// A [`Datagram`] with its own payload: for datagrams kept beyond the capture
/// buffer (read ahead, or held in memory by tests and benchmarks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedDatagram {
    pub frame: u64,
    pub ts: Timestamp,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub payload: Vec<u8>,
    pub payload_len: usize,
    pub frame_len: u32,
    pub frame_cap_len: u32,
}

impl OwnedDatagram {
    /// A datagram captured whole, as [`Datagram::new`] builds it.
    pub fn new(
        frame: u64,
        ts: Timestamp,
        src: SocketAddr,
        dst: SocketAddr,
        payload: Vec<u8>,
    ) -> Self {
        let len = ethernet_frame_len(src, payload.len());
        OwnedDatagram {
            frame,
            ts,
            src,
            dst,
            payload_len: payload.len(),
            payload,
            frame_len: len,
            frame_cap_len: len,
        }
    }

    /// The borrowed view the tracker takes.
    pub fn as_datagram(&self) -> Datagram<'_> {
        Datagram {
            digest: None,
            probes: None,
            frame: self.frame,
            ts: self.ts,
            src: self.src,
            dst: self.dst,
            payload: &self.payload,
            payload_len: self.payload_len,
            frame_len: self.frame_len,
            frame_cap_len: self.frame_cap_len,
        }
    }
}

impl Datagram<'_> {
    /// A copy that owns its payload.
    pub fn to_owned_datagram(&self) -> OwnedDatagram {
        OwnedDatagram {
            frame: self.frame,
            ts: self.ts,
            src: self.src,
            dst: self.dst,
            payload: self.payload.to_vec(),
            payload_len: self.payload_len,
            frame_len: self.frame_len,
            frame_cap_len: self.frame_cap_len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A time's seconds read back as the capture gives them, to the
    /// microsecond and to the nanosecond.
    #[test]
    fn seconds_are_the_nearest_float() {
        // The decimal's own nearest float, as Rust's parser rounds it.
        let nearest = |text: &str| text.parse::<f64>().unwrap();
        let micros = Timestamp::from_micros(1_700_000_000_101_200);
        assert_eq!(micros.secs_f64(), nearest("1700000000.1012"));
        assert_eq!(micros.secs_f64().to_string(), "1700000000.1012");
        let nanos = Timestamp(1_700_000_000_123_456_789);
        assert_eq!(nanos.secs_f64(), nearest("1700000000.123456789"));
        assert_eq!(Timestamp(0).secs_f64(), 0.0);
        let last = Timestamp(u64::MAX);
        assert_eq!(last.secs_f64(), nearest("18446744073.709551615"));
    }

    #[test]
    fn a_digest_taken_ahead_is_the_one_taken_on_demand_and_not_compared() {
        let on_demand = Datagram::new(
            7,
            Timestamp::from_millis(5),
            "10.0.0.2:4000".parse().unwrap(),
            "10.0.0.1:5000".parse().unwrap(),
            b"payload",
        );
        let ahead = Datagram {
            digest: Some(payload_digest(b"payload")),
            probes: Some(1),
            ..on_demand
        };
        assert_eq!(ahead.digest(), on_demand.digest());
        assert_ne!(on_demand.digest(), payload_digest(b"payloae"));
        assert_eq!(ahead, on_demand);
        let other = Datagram {
            payload: b"payloae",
            ..on_demand
        };
        assert_ne!(other, on_demand);
        let padded = Datagram {
            frame_len: 60,
            frame_cap_len: 60,
            ..on_demand
        };
        assert_ne!(padded, on_demand);
    }

    #[test]
    fn a_datagram_built_without_a_capture_has_the_frame_a_simulator_writes() {
        let v4 = Datagram::new(
            1,
            Timestamp(0),
            "10.0.0.2:4000".parse().unwrap(),
            "10.0.0.1:5000".parse().unwrap(),
            &[0; 25],
        );
        assert_eq!(
            (v4.payload_len, v4.frame_len, v4.frame_cap_len),
            (25, 67, 67)
        );
        let v6 = Datagram::new(
            1,
            Timestamp(0),
            "[::1]:4000".parse().unwrap(),
            "[::1]:5000".parse().unwrap(),
            &[0; 25],
        );
        assert_eq!((v6.frame_len, v6.frame_cap_len), (87, 87));
        // Cut by the capture: 10 of 25 payload bytes kept.
        let cut = Datagram::new(1, Timestamp(0), v4.src, v4.dst, &[0; 10]).with_payload_len(25);
        assert_eq!(
            (cut.payload_len, cut.frame_len, cut.frame_cap_len),
            (25, 67, 52)
        );
        assert!(cut.truncated_by_capture());
        let owned = OwnedDatagram::new(1, Timestamp(0), v4.src, v4.dst, vec![0; 25]);
        assert_eq!(owned.as_datagram(), v4);
        assert_eq!(v4.to_owned_datagram(), owned);
    }
}
