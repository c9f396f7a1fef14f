//! Frames from memory to UDP datagrams: the link, IP and UDP dissection and the
//! bounded fragment reassembly that a [`Source`](super::Source) applies to each
//! frame it reads, for frames that are already in memory (tests, fuzzing, a
//! reader of its own).

use super::frame::{FrameClass, FrameCounts};
use super::link::{Dissected, Udp, dissect, reassembled_udp};
use super::reassembly::{Added, Reassembler, ReassemblyLimits};
use super::{Datagram, LinkType, Timestamp};
use std::net::SocketAddr;

/// Classifies frames one after the other, reassembling IP fragments within
/// [`ReassemblyLimits`], and counts them as a source does.
///
/// ```
/// use lwarscope::capture::synth::{Link, udp_frame};
/// use lwarscope::capture::{FrameClass, Framer, LinkType, ReassemblyLimits, Timestamp};
/// let frame = udp_frame(
///     Link::Ethernet,
///     "10.0.0.1:5000".parse().unwrap(),
///     "10.0.0.2:32422".parse().unwrap(),
///     b"hello",
/// );
/// let mut framer = Framer::new(ReassemblyLimits::default());
/// let class = framer.frame(LinkType::Ethernet, &frame, false, 1, Timestamp(0));
/// // The frame: Ethernet (14 bytes), IPv4 (20), UDP (8) and the payload.
/// assert!(matches!(class, FrameClass::Udp(d)
///     if d.payload == b"hello" && (d.frame_len, d.frame_cap_len) == (47, 47)));
/// assert_eq!(framer.counts().udp, 1);
/// ```
pub struct Framer {
    reasm: Reassembler,
    /// The datagram the last frame completed, while its class borrows it.
    reassembled: Vec<u8>,
    counts: FrameCounts,
}

impl Framer {
    pub fn new(limits: ReassemblyLimits) -> Self {
        Framer {
            reasm: Reassembler::new(limits),
            reassembled: Vec::new(),
            counts: FrameCounts::default(),
        }
    }

    /// Classifies frame `number` (its bytes as captured, `cut` when the
    /// capture kept less than the frame's length), captured at `ts`. The last
    /// fragment of a datagram gives the whole datagram. A datagram's frame
    /// lengths: `data`'s, and for a cut frame the UDP payload's bytes cut
    /// off added to it.
    pub fn frame<'a>(
        &'a mut self,
        link: LinkType,
        data: &'a [u8],
        cut: bool,
        number: u64,
        ts: Timestamp,
    ) -> FrameClass<'a> {
        if !self.reassembled.is_empty() {
            let done = std::mem::take(&mut self.reassembled);
            self.reasm.recycle(done);
        }
        self.counts.frames += 1;
        self.counts.bytes += data.len() as u64;
        self.reasm.expire(ts);
        let (class, reassembled) = match dissect(link, data, cut) {
            Dissected::Udp(udp) => (FrameClass::Udp(datagram(udp, number, ts, data, cut)), None),
            Dissected::Fragment(frag) => {
                self.counts.ip_fragments += 1;
                match self.reasm.add(number, ts, &frag) {
                    Added::Held => (FrameClass::Fragment, None),
                    Added::Conflict => (FrameClass::Malformed, None),
                    Added::Complete(bytes) => {
                        self.counts.reassembled += 1;
                        (FrameClass::Fragment, Some((frag.key, bytes)))
                    }
                }
            }
            Dissected::NotUdp => (FrameClass::NotUdp, None),
            Dissected::NotIp => (FrameClass::NotIp, None),
            Dissected::Truncated => (FrameClass::Truncated, None),
            Dissected::Malformed => (FrameClass::Malformed, None),
        };
        let class = match reassembled {
            Some((key, bytes)) => {
                self.reassembled = bytes;
                match reassembled_udp(&key, &self.reassembled) {
                    Dissected::Udp(udp) => FrameClass::Udp(datagram(udp, number, ts, data, cut)),
                    _ => FrameClass::Malformed,
                }
            }
            None => class,
        };
        count(&mut self.counts, &class);
        class
    }

    /// The end of the frames: fragmented datagrams still incomplete are given up.
    pub fn finish(&mut self) {
        self.reasm.finish();
    }

    /// The counters so far.
    pub fn counts(&self) -> FrameCounts {
        let mut c = self.counts;
        c.incomplete = self.reasm.given_up();
        c.incomplete_by = self.reasm.given_up_by();
        c.duplicate_fragments = self.reasm.duplicates();
        c
    }

    /// Bytes the reassembly holds now (bounded by [`ReassemblyLimits::max_bytes`]).
    pub fn pending_bytes(&self) -> usize {
        self.reasm.bytes()
    }
}

fn datagram<'a>(udp: Udp<'a>, frame: u64, ts: Timestamp, data: &[u8], cut: bool) -> Datagram<'a> {
    let (frame_len, frame_cap_len) = frame_lens(&udp, data, cut);
    Datagram {
        digest: None,
        probes: None,
        frame,
        ts,
        src: SocketAddr::new(udp.src, udp.src_port),
        dst: SocketAddr::new(udp.dst, udp.dst_port),
        payload: udp.payload,
        payload_len: udp.payload_len,
        frame_len,
        frame_cap_len,
    }
}

/// The lengths on the wire and captured of frame `data`, which carried (or
/// completed) `udp`, for a caller that says only whether the capture cut it:
/// what was captured, and for a cut frame the payload bytes the UDP header
/// says are missing added (a link trailer cut off too is not known).
pub(super) fn frame_lens(udp: &Udp<'_>, data: &[u8], cut: bool) -> (u32, u32) {
    let captured = u32::try_from(data.len()).unwrap_or(u32::MAX);
    let missing = match cut {
        true => udp.payload_len.saturating_sub(udp.payload.len()),
        false => 0,
    };
    (
        captured.saturating_add(u32::try_from(missing).unwrap_or(u32::MAX)),
        captured,
    )
}

/// Counts a frame under its class, as a source does.
fn count(counts: &mut FrameCounts, class: &FrameClass<'_>) {
    match class {
        FrameClass::Udp(d) => {
            counts.udp += 1;
            if d.truncated_by_capture() {
                counts.udp_truncated += 1;
            }
        }
        FrameClass::NotUdp => counts.not_udp += 1,
        FrameClass::NotIp => counts.not_ip += 1,
        FrameClass::Fragment => counts.fragment += 1,
        FrameClass::Truncated => counts.truncated += 1,
        FrameClass::Malformed => counts.malformed += 1,
    }
}
