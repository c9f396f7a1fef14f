//! Where a run's frames come from: a capture [`Source`] (files, streams, a
//! live interface), or UDP datagrams already in memory ([`Datagrams`]: tests,
//! fixtures, the terminal UI's snapshots). The loop reads either the same way.

use crate::capture::{
    CaptureError, CaptureStats, Frame, FrameClass, FrameCounts, LinkType, OwnedDatagram, Source,
};

/// What the run loop reads frames from (on the reader's thread, with two
/// threads: hence `Send`).
pub trait Input: Send {
    /// The next frame; `None` at the end of the input, or once stopped.
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError>;

    /// What the input noticed that the user should hear of (time going
    /// backwards where one file follows another); taken once.
    fn take_warnings(&mut self) -> Vec<String>;

    /// The frame counters so far.
    fn counts(&self) -> FrameCounts;

    /// The counters, with libpcap's statistics read now for a live capture.
    fn stats(&mut self) -> CaptureStats;

    /// Whether the frames come from a live interface (whose pace it sets).
    fn is_live(&self) -> bool;

    /// The bytes still to read, when known (`None`: a stream, a live
    /// interface, a compressed file).
    fn input_bytes(&self) -> Option<u64>;
}

impl Input for Source {
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        Source::next_frame(self)
    }

    fn take_warnings(&mut self) -> Vec<String> {
        Source::take_warnings(self)
    }

    fn counts(&self) -> FrameCounts {
        Source::counts(self)
    }

    fn stats(&mut self) -> CaptureStats {
        Source::stats(self)
    }

    fn is_live(&self) -> bool {
        Source::is_live(self)
    }

    fn input_bytes(&self) -> Option<u64> {
        Source::input_bytes(self)
    }
}

/// UDP datagrams already in memory, read as frames that each carry one, of
/// the lengths the datagram tells (no link, IP or UDP header in their bytes:
/// nothing to export).
#[derive(Debug)]
pub struct Datagrams {
    datagrams: std::vec::IntoIter<OwnedDatagram>,
    /// The datagram of the frame handed out last.
    current: Option<OwnedDatagram>,
    total: usize,
    bytes: u64,
    counts: FrameCounts,
}

impl Datagrams {
    pub fn new(datagrams: Vec<OwnedDatagram>) -> Self {
        Datagrams {
            total: datagrams.len(),
            bytes: datagrams.iter().map(|d| d.payload.len() as u64).sum(),
            datagrams: datagrams.into_iter(),
            current: None,
            counts: FrameCounts::default(),
        }
    }

    /// How many datagrams there are in all.
    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

impl Input for Datagrams {
    fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        self.current = self.datagrams.next();
        let Some(d) = &self.current else {
            return Ok(None);
        };
        self.counts.frames += 1;
        self.counts.udp += 1;
        self.counts.bytes += u64::from(d.frame_cap_len);
        Ok(Some(Frame {
            number: d.frame,
            ts: d.ts,
            orig_len: d.frame_len,
            cap_len: d.frame_cap_len,
            class: FrameClass::Udp(d.as_datagram()),
            data: &[],
            link: LinkType::RawIp,
            fragment_frames: &[],
        }))
    }

    fn take_warnings(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn counts(&self) -> FrameCounts {
        self.counts
    }

    fn stats(&mut self) -> CaptureStats {
        CaptureStats {
            counts: self.counts,
            pcap: None,
        }
    }

    fn is_live(&self) -> bool {
        false
    }

    /// The payload bytes held.
    fn input_bytes(&self) -> Option<u64> {
        Some(self.bytes)
    }
}
