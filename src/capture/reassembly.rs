//! IPv4 and IPv6 fragment reassembly with bounded memory and a timeout in
//! capture time, over etherparse's `IpDefragBuf` (which merges the ranges).
//!
//! etherparse's own `IpDefragPool` is unbounded by design; this pool bounds the
//! number of pending datagrams, their bytes and their fragments, evicting the
//! oldest, and reports every datagram it gives up, with why
//! ([`IncompleteReason`]).
//!
//! Overlaps are judged as Linux judges them (IPv4 since 4.19, IPv6 per RFC
//! 5722), not merged with the last fragment's bytes winning (etherparse's
//! way): an exact copy of a fragment held (same offset and length) is dropped
//! and the first copy kept; any other overlap gives the whole datagram up, as
//! the receiver drops it. The later fragments of a datagram given up for a
//! fault of its own (overlap, conflict, too many) are dropped with it for the
//! timeout, rather than starting a new one.

use super::Timestamp;
use super::frame::{IncompleteCounts, IncompleteDatagram, IncompleteReason};
use super::link::{FragKey, Fragment};
use etherparse::IpNumber;
use etherparse::defrag::{IpDefragBuf, IpFragRange};
use std::collections::HashMap;

/// Bounds of the reassembly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReassemblyLimits {
    /// Datagrams pending at once; the oldest is given up beyond.
    pub max_datagrams: usize,
    /// Bytes pending at once; the oldest datagrams are given up beyond.
    pub max_bytes: usize,
    /// Capture time after its first fragment that a datagram is given up.
    pub timeout_ns: u64,
    /// Fragments of one datagram (copies included); it is given up beyond.
    pub max_fragments: usize,
}

impl Default for ReassemblyLimits {
    /// 1024 datagrams, 16 MiB, 30 s (Linux's `ipfrag_time`), 1024 fragments
    /// per datagram (a 64 KiB datagram in 64-byte fragments).
    fn default() -> Self {
        ReassemblyLimits {
            max_datagrams: 1024,
            max_bytes: 16 << 20,
            timeout_ns: 30_000_000_000,
            max_fragments: 1024,
        }
    }
}

/// Datagrams given up for a fault of their own whose later fragments are
/// dropped with them: the most recent, with when they were given up.
const DEAD_KEYS: usize = 64;

/// At most this many given-up datagrams are kept for the report; all are counted.
pub const MAX_INCOMPLETE_RECORDS: usize = 1000;

struct Pending {
    buf: IpDefragBuf,
    /// The byte ranges of the fragments held, sorted by start, for the overlap
    /// rule (etherparse's own sections are merged).
    ranges: Vec<(u32, u32)>,
    /// Where the last fragment ends, once one came.
    end: Option<u32>,
    /// Every fragment's frame, in the order seen (for an export that writes
    /// the frames of a datagram).
    frames: Vec<u64>,
    first_frame: u64,
    last_frame: u64,
    first_ts: Timestamp,
    fragments: u32,
}

/// What adding a fragment gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Added {
    /// Held until the rest arrives.
    Held,
    /// The datagram is complete: its IP payload (UDP header first). Give the
    /// buffer back with [`Reassembler::recycle`].
    Complete(Vec<u8>),
    /// The fragment conflicts with the others: the datagram is given up.
    Conflict,
}

/// The pending datagrams.
pub(crate) struct Reassembler {
    limits: ReassemblyLimits,
    pending: HashMap<FragKey, Pending>,
    bytes: usize,
    /// The earliest time a pending datagram may time out (may be early, never late).
    next_expiry: Option<u64>,
    free_data: Vec<Vec<u8>>,
    free_sections: Vec<Vec<IpFragRange>>,
    /// A frame list to reuse, and the list of the datagram completed last.
    free_frames: Vec<u64>,
    completed_frames: Vec<u64>,
    given_up: u64,
    given_up_by: IncompleteCounts,
    duplicates: u64,
    records: Vec<IncompleteDatagram>,
    /// Datagrams given up for their own fault, and when ([`DEAD_KEYS`]).
    dead: std::collections::VecDeque<(FragKey, Timestamp)>,
}

impl Reassembler {
    pub fn new(limits: ReassemblyLimits) -> Self {
        Reassembler {
            limits,
            pending: HashMap::new(),
            bytes: 0,
            next_expiry: None,
            free_data: Vec::new(),
            free_sections: Vec::new(),
            free_frames: Vec::new(),
            completed_frames: Vec::new(),
            given_up: 0,
            given_up_by: IncompleteCounts::default(),
            duplicates: 0,
            records: Vec::new(),
            dead: std::collections::VecDeque::new(),
        }
    }

    /// Datagrams given up so far.
    pub fn given_up(&self) -> u64 {
        self.given_up
    }

    /// Datagrams given up so far, by why.
    pub fn given_up_by(&self) -> IncompleteCounts {
        self.given_up_by
    }

    /// Fragments dropped as exact copies of one held.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Bytes held for the datagrams pending.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The given-up datagrams (the first [`MAX_INCOMPLETE_RECORDS`]).
    pub fn records(&self) -> &[IncompleteDatagram] {
        &self.records
    }

    #[cfg(test)]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Gives up the datagrams whose first fragment is older than the timeout.
    pub fn expire(&mut self, now: Timestamp) {
        let Some(at) = self.next_expiry else { return };
        if now.nanos() < at {
            return;
        }
        let timeout = self.limits.timeout_ns;
        let expired: Vec<FragKey> = self
            .pending
            .iter()
            .filter(|(_, p)| now.since(p.first_ts) >= timeout)
            .map(|(k, _)| *k)
            .collect();
        for key in expired {
            self.give_up(&key, IncompleteReason::TimedOut);
        }
        self.next_expiry = self
            .pending
            .values()
            .map(|p| p.first_ts.nanos().saturating_add(timeout))
            .min();
    }

    /// Whether `key` is of a datagram given up within the timeout (those
    /// older than it are forgotten first).
    fn is_buried(&mut self, key: FragKey, ts: Timestamp) -> bool {
        if self.dead.is_empty() {
            return false;
        }
        let timeout = self.limits.timeout_ns;
        while self
            .dead
            .front()
            .is_some_and(|(_, at)| ts.since(*at) >= timeout)
        {
            self.dead.pop_front();
        }
        self.dead.iter().any(|(k, _)| *k == key)
    }

    /// A datagram's first fragment captured: room is made (the oldest
    /// evicted at the bound), and buffers are reused.
    fn begin(&mut self, key: FragKey, frame: u64, ts: Timestamp) {
        if self.pending.len() >= self.limits.max_datagrams {
            self.evict_oldest();
        }
        let data = self.free_data.pop().unwrap_or_default();
        let sections = self.free_sections.pop().unwrap_or_default();
        let mut frames = std::mem::take(&mut self.free_frames);
        frames.clear();
        self.pending.insert(
            key,
            Pending {
                buf: IpDefragBuf::new(IpNumber::UDP, data, sections),
                ranges: Vec::new(),
                end: None,
                frames,
                first_frame: frame,
                last_frame: frame,
                first_ts: ts,
                fragments: 0,
            },
        );
        let expiry = ts.nanos().saturating_add(self.limits.timeout_ns);
        self.next_expiry = Some(self.next_expiry.map_or(expiry, |e| e.min(expiry)));
    }

    /// Adds a fragment seen in `frame` at `ts`.
    pub fn add(&mut self, frame: u64, ts: Timestamp, frag: &Fragment<'_>) -> Added {
        if !self.pending.contains_key(&frag.key) {
            if self.is_buried(frag.key, ts) {
                // A fragment of a datagram given up: dropped with it.
                return Added::Held;
            }
            self.begin(frag.key, frame, ts);
        }
        let Some(p) = self.pending.get_mut(&frag.key) else {
            return Added::Held;
        };
        let before = p.buf.data().len();
        p.fragments += 1;
        p.last_frame = frame;
        if p.fragments as usize > self.limits.max_fragments {
            self.give_up(&frag.key, IncompleteReason::TooManyFragments);
            self.bury(frag.key, ts);
            return Added::Held;
        }
        p.frames.push(frame);
        let start = u32::from(frag.offset.byte_offset());
        let end = start + u32::try_from(frag.payload.len()).unwrap_or(u32::MAX - start);
        // Two ends, or a fragment past the end: a conflict (etherparse's rule,
        // judged before the overlap).
        if p.end.is_some_and(|e| end > e || (!frag.more && end != e)) {
            self.give_up(&frag.key, IncompleteReason::Conflict);
            self.bury(frag.key, ts);
            return Added::Conflict;
        }
        let at = p.ranges.partition_point(|&(s, _)| s < start);
        if p.ranges.get(at) == Some(&(start, end)) {
            // An exact copy of a fragment held: dropped, the first kept.
            self.duplicates += 1;
            return Added::Held;
        }
        let overlaps = at
            .checked_sub(1)
            .and_then(|i| p.ranges.get(i))
            .is_some_and(|&(_, e)| e > start)
            || p.ranges.get(at).is_some_and(|&(s, _)| s < end);
        if overlaps && end > start {
            self.give_up(&frag.key, IncompleteReason::Overlap);
            self.bury(frag.key, ts);
            return Added::Conflict;
        }
        if p.buf.add(frag.offset, frag.more, frag.payload).is_err() {
            self.give_up(&frag.key, IncompleteReason::Conflict);
            self.bury(frag.key, ts);
            return Added::Conflict;
        }
        p.ranges.insert(at, (start, end));
        if !frag.more {
            p.end = Some(end);
        }
        // The buffer can shrink (a last fragment below data seen before it):
        // the count follows it down, or it would only ever grow.
        let after = p.buf.data().len();
        self.bytes = self.bytes - before.min(self.bytes) + after;
        if p.buf.is_complete() {
            let p = self.pending.remove(&frag.key).expect("present");
            self.bytes -= p.buf.data().len().min(self.bytes);
            let (data, sections) = p.buf.take_bufs();
            self.free_sections.push(sections);
            self.free_frames = std::mem::replace(&mut self.completed_frames, p.frames);
            return Added::Complete(data);
        }
        while self.bytes > self.limits.max_bytes && !self.pending.is_empty() {
            self.evict_oldest();
        }
        // Held, even when this very datagram was the one evicted: the frame is a
        // fragment, and the datagram is among the given-up ones.
        Added::Held
    }

    /// The frames of the fragments of the datagram completed last, in the order
    /// they were seen (the completing one last).
    pub fn completed_frames(&self) -> &[u64] {
        &self.completed_frames
    }

    /// Gives a completed datagram's buffer back for reuse.
    pub fn recycle(&mut self, mut data: Vec<u8>) {
        data.clear();
        if self.free_data.len() < 64 {
            self.free_data.push(data);
        }
    }

    /// Gives up everything still pending: the capture has ended.
    pub fn finish(&mut self) {
        let mut keys: Vec<(u64, FragKey)> = self
            .pending
            .iter()
            .map(|(k, p)| (p.first_frame, *k))
            .collect();
        keys.sort_by_key(|(frame, _)| *frame);
        for (_, key) in keys {
            self.give_up(&key, IncompleteReason::EndOfCapture);
        }
        self.next_expiry = None;
    }

    fn evict_oldest(&mut self) {
        let oldest = self
            .pending
            .iter()
            .min_by_key(|(_, p)| (p.first_ts, p.first_frame))
            .map(|(k, _)| *k);
        if let Some(key) = oldest {
            self.give_up(&key, IncompleteReason::MemoryLimit);
        }
    }

    /// Remembers a datagram given up for a fault of its own, so that its later
    /// fragments are dropped with it (for the timeout).
    fn bury(&mut self, key: FragKey, ts: Timestamp) {
        if self.dead.len() >= DEAD_KEYS {
            self.dead.pop_front();
        }
        self.dead.push_back((key, ts));
    }

    fn give_up(&mut self, key: &FragKey, reason: IncompleteReason) {
        let Some(p) = self.pending.remove(key) else {
            return;
        };
        self.bytes -= p.buf.data().len().min(self.bytes);
        self.given_up += 1;
        self.given_up_by.add(reason);
        if self.records.len() < MAX_INCOMPLETE_RECORDS {
            self.records.push(IncompleteDatagram {
                src: key.src,
                dst: key.dst,
                id: key.id,
                first_frame: p.first_frame,
                last_frame: p.last_frame,
                first_ts: p.first_ts,
                fragments: p.fragments,
                reason,
            });
        }
        let (data, sections) = p.buf.take_bufs();
        self.recycle(data);
        self.free_sections.push(sections);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::IpFragOffset;
    use std::net::{IpAddr, Ipv4Addr};

    fn key(id: u32) -> FragKey {
        FragKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            id,
        }
    }

    fn frag(id: u32, offset_units: u16, more: bool, payload: &[u8]) -> Fragment<'_> {
        Fragment {
            key: key(id),
            offset: IpFragOffset::try_new(offset_units).unwrap(),
            more,
            payload,
        }
    }

    #[test]
    fn out_of_order_fragments_complete() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let a = [1u8; 16];
        let b = [2u8; 5];
        assert_eq!(r.add(1, Timestamp(0), &frag(7, 2, false, &b)), Added::Held);
        let Added::Complete(data) = r.add(2, Timestamp(1), &frag(7, 0, true, &a)) else {
            panic!("not complete");
        };
        assert_eq!(&data[..16], &a);
        assert_eq!(&data[16..], &b);
        assert_eq!(r.pending(), 0);
        assert_eq!(r.given_up(), 0);
    }

    #[test]
    fn a_datagram_times_out_in_capture_time() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let a = [1u8; 8];
        r.add(3, Timestamp(1_000_000_000), &frag(1, 0, true, &a));
        r.expire(Timestamp(30_999_999_999));
        assert_eq!(r.pending(), 1);
        r.expire(Timestamp(31_000_000_000));
        assert_eq!(r.pending(), 0);
        assert_eq!(r.given_up(), 1);
        let rec = r.records()[0];
        assert_eq!(rec.reason, IncompleteReason::TimedOut);
        assert_eq!((rec.first_frame, rec.last_frame, rec.fragments), (3, 3, 1));
    }

    #[test]
    fn the_oldest_is_evicted_beyond_the_bounds() {
        let limits = ReassemblyLimits {
            max_datagrams: 2,
            max_bytes: 64,
            timeout_ns: u64::MAX,
            ..ReassemblyLimits::default()
        };
        let mut r = Reassembler::new(limits);
        let a = [0u8; 8];
        for id in 0..3 {
            r.add(
                u64::from(id) + 1,
                Timestamp(u64::from(id)),
                &frag(id, 0, true, &a),
            );
        }
        assert_eq!(r.pending(), 2);
        assert_eq!(r.records()[0].id, 0);
        assert_eq!(r.records()[0].reason, IncompleteReason::MemoryLimit);
        // 72 bytes in one datagram are over 64: it is given up at once.
        let big = [0u8; 72];
        assert_eq!(r.add(9, Timestamp(9), &frag(9, 0, true, &big)), Added::Held);
        assert!(r.bytes <= 64);
        assert_eq!(r.pending(), 0);
        assert_eq!(r.given_up(), 4);
    }

    #[test]
    fn conflicting_ends_give_the_datagram_up() {
        let mut r = Reassembler::new(ReassemblyLimits::default());
        r.add(1, Timestamp(0), &frag(5, 1, false, &[0u8; 8]));
        assert_eq!(
            r.add(2, Timestamp(0), &frag(5, 1, false, &[0u8; 16])),
            Added::Conflict
        );
        assert_eq!(r.records()[0].reason, IncompleteReason::Conflict);
        r.add(3, Timestamp(0), &frag(6, 0, true, &[0u8; 8]));
        r.finish();
        assert_eq!(r.records()[1].reason, IncompleteReason::EndOfCapture);
        assert_eq!(r.given_up(), 2);
    }

    #[test]
    fn overlapping_fragments_give_the_datagram_up_as_linux_does() {
        // Regression: the overlap was merged, the last fragment's bytes winning
        // (a way to show an analyzer other bytes than the receiver keeps).
        let mut r = Reassembler::new(ReassemblyLimits::default());
        assert_eq!(
            r.add(1, Timestamp(0), &frag(1, 0, true, &[1u8; 16])),
            Added::Held
        );
        assert_eq!(
            r.add(2, Timestamp(0), &frag(1, 1, true, &[2u8; 16])),
            Added::Conflict
        );
        assert_eq!(r.given_up(), 1);
        assert_eq!(r.records()[0].reason, IncompleteReason::Overlap);
        assert_eq!(r.given_up_by().overlap, 1);
        // The datagram's later fragments are dropped with it, not a new one.
        assert_eq!(
            r.add(3, Timestamp(0), &frag(1, 4, false, &[3u8; 8])),
            Added::Held
        );
        assert_eq!(r.pending(), 0);
        r.finish();
        assert_eq!(r.given_up(), 1);
        // An exact duplicate of a fragment is dropped, the datagram kept (the
        // first copy's bytes).
        assert_eq!(
            r.add(4, Timestamp(0), &frag(2, 0, true, &[1u8; 16])),
            Added::Held
        );
        assert_eq!(
            r.add(5, Timestamp(0), &frag(2, 0, true, &[9u8; 16])),
            Added::Held
        );
        let Added::Complete(data) = r.add(6, Timestamp(0), &frag(2, 2, false, &[3u8; 8])) else {
            panic!("not complete");
        };
        assert_eq!(&data[..16], &[1u8; 16]);
        assert_eq!(r.duplicates(), 1);
    }

    #[test]
    fn too_many_fragments_give_the_datagram_up() {
        let limits = ReassemblyLimits {
            max_fragments: 4,
            ..ReassemblyLimits::default()
        };
        let mut r = Reassembler::new(limits);
        for i in 0..4u16 {
            assert_eq!(
                r.add(u64::from(i), Timestamp(0), &frag(1, i, true, &[0u8; 8])),
                Added::Held
            );
        }
        assert_eq!(
            r.add(9, Timestamp(0), &frag(1, 4, true, &[0u8; 8])),
            Added::Held
        );
        assert_eq!(r.pending(), 0);
        assert_eq!(r.records()[0].reason, IncompleteReason::TooManyFragments);
        assert_eq!(r.given_up_by().too_many, 1);
        // Duplicates count too: a fragment sent a million times is bounded.
        for i in 0..10 {
            r.add(20 + i, Timestamp(0), &frag(2, 0, true, &[0u8; 8]));
        }
        assert_eq!(r.given_up_by().too_many, 2);
    }

    #[test]
    fn the_byte_count_follows_every_buffer_back_to_zero() {
        // Regression: a buffer that shrank left its difference in the count for
        // good, and enough of them made every later datagram "evicted for
        // memory". Whatever the fragments do, once nothing is pending the
        // count is zero.
        let mut r = Reassembler::new(ReassemblyLimits::default());
        let mut frame = 0;
        for id in 0..200u32 {
            for (offset_units, more, len) in [
                (0u16, true, 800usize),
                (125, true, 400),
                (100, false, 8),
                (2, true, 16),
                (100, false, 8),
            ] {
                frame += 1;
                r.add(
                    frame,
                    Timestamp(frame),
                    &frag(id, offset_units, more, &vec![0u8; len]),
                );
            }
        }
        r.finish();
        assert_eq!(r.pending(), 0);
        assert_eq!(r.bytes, 0, "bytes left counted with nothing pending");
        // A datagram in order still reassembles after all that.
        let a = [7u8; 16];
        r.add(frame + 1, Timestamp(frame + 1), &frag(999, 0, true, &a));
        assert!(matches!(
            r.add(frame + 2, Timestamp(frame + 2), &frag(999, 2, false, &a)),
            Added::Complete(_)
        ));
    }
}
