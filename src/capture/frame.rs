//! What a source yields for each frame, and the counters it keeps.

use super::{Datagram, Timestamp};
use std::net::IpAddr;

/// One captured frame, numbered as Wireshark numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// 1-based over every file of the run.
    pub number: u64,
    pub ts: Timestamp,
    /// The frame's length on the wire.
    pub orig_len: u32,
    /// The bytes the capture kept (less than `orig_len` when the snaplen cut it).
    pub cap_len: u32,
    pub class: FrameClass<'a>,
    /// The frame's bytes as captured, link header first.
    pub data: &'a [u8],
    pub link: super::LinkType,
    /// For the frame that completes a reassembled datagram: the frames of all
    /// its fragments, in the order seen (this one last); empty otherwise.
    pub fragment_frames: &'a [u64],
}

impl<'a> Frame<'a> {
    /// The UDP datagram this frame carries (or completes, for a last fragment).
    pub fn datagram(&self) -> Option<&Datagram<'a>> {
        match &self.class {
            FrameClass::Udp(d) => Some(d),
            _ => None,
        }
    }
}

/// What a frame is, up to UDP. Which protocol a datagram belongs to is the
/// engine's business: the capture layer knows none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameClass<'a> {
    /// A UDP datagram, whole or cut by the snaplen after its UDP header. For the
    /// last fragment of a reassembled datagram: the whole datagram.
    Udp(Datagram<'a>),
    /// IP, but not UDP.
    NotUdp,
    /// Not IPv4 or IPv6 (ARP, other EtherTypes, other address families).
    NotIp,
    /// An IP fragment, held until its datagram is complete.
    Fragment,
    /// The capture's snaplen cut the frame inside a link, IP or UDP header.
    Truncated,
    /// Headers that contradict themselves in a complete frame (an IP or UDP length
    /// beyond the frame, a bad IP version, a fragment that conflicts with another).
    Malformed,
}

/// Frames counted by class. `frames` is the sum of the class counters
/// (`udp` + `not_udp` + `not_ip` + `fragment` + `truncated` + `malformed` +
/// `filtered`); the fragment counters below cut across classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameCounts {
    pub frames: u64,
    /// Captured bytes, link headers included.
    pub bytes: u64,
    /// Frames that gave a UDP datagram (reassembled ones included).
    pub udp: u64,
    /// Of `udp`: datagrams whose payload the snaplen cut short.
    pub udp_truncated: u64,
    pub not_udp: u64,
    pub not_ip: u64,
    /// Fragments held for reassembly (every fragment but the completing one).
    pub fragment: u64,
    pub truncated: u64,
    pub malformed: u64,
    /// Frames of a file that the user's capture filter (`-f`) rejected.
    pub filtered: u64,
    /// Frames that carried an IP fragment of a UDP datagram (held or completing).
    pub ip_fragments: u64,
    /// UDP datagrams rebuilt from fragments.
    pub reassembled: u64,
    /// Fragmented datagrams given up: timed out, over the memory bounds,
    /// conflicting or overlapping, too many fragments, or still incomplete at
    /// the end of the capture.
    pub incomplete: u64,
    /// `incomplete` by why each datagram was given up.
    pub incomplete_by: IncompleteCounts,
    /// Fragments dropped as exact copies of one held (same offset and length:
    /// the first copy is kept, as Linux keeps it).
    pub duplicate_fragments: u64,
}

/// Fragmented datagrams given up, by [`IncompleteReason`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IncompleteCounts {
    pub timed_out: u64,
    pub memory_limit: u64,
    pub conflict: u64,
    pub overlap: u64,
    pub too_many: u64,
    pub end_of_capture: u64,
}

impl IncompleteCounts {
    pub fn add(&mut self, reason: IncompleteReason) {
        *self.slot(reason) += 1;
    }

    fn slot(&mut self, reason: IncompleteReason) -> &mut u64 {
        match reason {
            IncompleteReason::TimedOut => &mut self.timed_out,
            IncompleteReason::MemoryLimit => &mut self.memory_limit,
            IncompleteReason::Conflict => &mut self.conflict,
            IncompleteReason::Overlap => &mut self.overlap,
            IncompleteReason::TooManyFragments => &mut self.too_many,
            IncompleteReason::EndOfCapture => &mut self.end_of_capture,
        }
    }

    /// How many were given up for `reason`.
    pub fn get(&self, reason: IncompleteReason) -> u64 {
        match reason {
            IncompleteReason::TimedOut => self.timed_out,
            IncompleteReason::MemoryLimit => self.memory_limit,
            IncompleteReason::Conflict => self.conflict,
            IncompleteReason::Overlap => self.overlap,
            IncompleteReason::TooManyFragments => self.too_many,
            IncompleteReason::EndOfCapture => self.end_of_capture,
        }
    }

    /// Each reason with its count, in [`IncompleteReason::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (IncompleteReason, u64)> + '_ {
        IncompleteReason::ALL.into_iter().map(|r| (r, self.get(r)))
    }
}

/// libpcap's own counters for a live capture (see `pcap_stats(3PCAP)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PcapStats {
    /// Packets the capture received (after the filter, on Linux).
    pub received: u64,
    /// Packets dropped because the buffer was full: lwarscope never saw them.
    pub dropped_by_kernel: u64,
    /// Packets dropped by the interface or its driver.
    pub dropped_by_interface: u64,
}

/// Everything a source has counted so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaptureStats {
    pub counts: FrameCounts,
    /// Present for live captures.
    pub pcap: Option<PcapStats>,
}

/// Why a fragmented datagram was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IncompleteReason {
    /// Not complete within the timeout (in capture time) after its first fragment.
    TimedOut,
    /// Evicted to keep reassembly within its memory bounds.
    MemoryLimit,
    /// A fragment contradicted the others (two different ends, a fragment past
    /// the end, a length IP cannot carry).
    Conflict,
    /// A fragment overlapped bytes another had brought (other than an exact
    /// copy): Linux drops such datagrams (IPv6: RFC 5722), so the receiver
    /// never saw it, and the bytes it would have kept are not known.
    Overlap,
    /// More fragments than [`ReassemblyLimits::max_fragments`](super::ReassemblyLimits).
    TooManyFragments,
    /// Still incomplete when the capture ended.
    EndOfCapture,
}

impl IncompleteReason {
    pub const ALL: [IncompleteReason; 6] = [
        IncompleteReason::TimedOut,
        IncompleteReason::MemoryLimit,
        IncompleteReason::Conflict,
        IncompleteReason::Overlap,
        IncompleteReason::TooManyFragments,
        IncompleteReason::EndOfCapture,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            IncompleteReason::TimedOut => "timed out",
            IncompleteReason::MemoryLimit => "memory limit",
            IncompleteReason::Conflict => "conflicting fragment",
            IncompleteReason::Overlap => "overlapping fragment",
            IncompleteReason::TooManyFragments => "too many fragments",
            IncompleteReason::EndOfCapture => "end of capture",
        }
    }

    /// A stable kebab-case key, for JSON.
    pub const fn key(self) -> &'static str {
        match self {
            IncompleteReason::TimedOut => "timed-out",
            IncompleteReason::MemoryLimit => "memory-limit",
            IncompleteReason::Conflict => "conflict",
            IncompleteReason::Overlap => "overlap",
            IncompleteReason::TooManyFragments => "too-many-fragments",
            IncompleteReason::EndOfCapture => "end-of-capture",
        }
    }
}

/// A fragmented UDP datagram that was never completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncompleteDatagram {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IPv4 identification or IPv6 fragment identification.
    pub id: u32,
    pub first_frame: u64,
    pub last_frame: u64,
    pub first_ts: Timestamp,
    /// Fragments received.
    pub fragments: u32,
    pub reason: IncompleteReason,
}
