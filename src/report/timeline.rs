//! The capture over time, per session: what `--plot` draws and the TUI's IO
//! graph shows.
//!
//! Each session's packets, bytes, resends, lost messages and ack delays are
//! counted per direction in buckets of time from the first packet. The bucket
//! width starts at [`FIRST_WIDTH_NS`] and doubles (neighbouring buckets merged)
//! whenever the capture outgrows [`MAX_BUCKETS`], so a picture of a minute and
//! one of a day cost the same: memory is bounded by the sessions followed
//! ([`MAX_SESSIONS`], the rest counted together as "other sessions") times the
//! buckets each one spans, and a session of one packet costs one bucket.

use super::stats::DirInterval;
use crate::capture::Timestamp;
use crate::engine::{Finding, FindingKind, Flow, Observer, PacketEvent, SessionId};

/// Buckets across the whole capture at most: about one per two pixels of a plot.
pub const MAX_BUCKETS: usize = 256;

/// The first bucket width: 100 ms.
pub const FIRST_WIDTH_NS: u64 = 100_000_000;

/// Sessions followed one by one; later ones are counted together.
pub const MAX_SESSIONS: usize = 4096;

/// One session's buckets (or the other sessions', together).
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// The bucket of `buckets[0]`, counted from the first packet.
    first: usize,
    /// Per direction ([`crate::engine::Direction::index`]).
    buckets: Vec<[DirInterval; 2]>,
    packets: u64,
}

impl Series {
    /// The counts of bucket `i` (from the capture's first packet); zero outside
    /// the session's span.
    pub fn bucket(&self, i: usize) -> [DirInterval; 2] {
        i.checked_sub(self.first)
            .and_then(|j| self.buckets.get(j))
            .copied()
            .unwrap_or_default()
    }

    /// Packets counted, both directions.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// The buckets this series spans: `first..end`.
    pub fn span(&self) -> std::ops::Range<usize> {
        self.first..self.first + self.buckets.len()
    }

    fn at(&mut self, i: usize) -> &mut [DirInterval; 2] {
        if self.buckets.is_empty() {
            self.first = i;
        }
        if i < self.first {
            // A packet earlier than the session's first (a capture not in time
            // order): the span grows to the left.
            let more = self.first - i;
            self.buckets
                .splice(0..0, std::iter::repeat_n(Default::default(), more));
            self.first = i;
        }
        let j = i - self.first;
        if j >= self.buckets.len() {
            self.buckets.resize(j + 1, Default::default());
        }
        &mut self.buckets[j]
    }

    /// Halves the resolution: bucket `i` goes into bucket `i / 2`.
    fn halve(&mut self) {
        if self.buckets.is_empty() {
            return;
        }
        let first = self.first / 2;
        let last = (self.first + self.buckets.len() - 1) / 2;
        let mut merged = vec![<[DirInterval; 2]>::default(); last - first + 1];
        for (j, b) in self.buckets.iter().enumerate() {
            let to = &mut merged[(self.first + j) / 2 - first];
            for (t, d) in to.iter_mut().zip(b) {
                t.merge(d);
            }
        }
        self.first = first;
        self.buckets = merged;
    }
}

/// Every session's series, collected as packets and findings come.
#[derive(Debug, Clone)]
pub struct Timeline {
    origin: Option<Timestamp>,
    width_ns: u64,
    /// By session id, up to [`MAX_SESSIONS`].
    sessions: Vec<Series>,
    other: Series,
    /// The last packet's time: the end of the capture so far.
    end: Option<Timestamp>,
    /// (frame, time) where the bucket of the packets read changed: a `lost`
    /// finding raised at the end of the capture carries the frame of its gap,
    /// and is counted at that frame's time.
    marks: Vec<(u64, Timestamp)>,
    last_frame: Option<u64>,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            origin: None,
            width_ns: FIRST_WIDTH_NS,
            sessions: Vec::new(),
            other: Series::default(),
            end: None,
            marks: Vec::new(),
            last_frame: None,
        }
    }
}

impl Timeline {
    pub fn new() -> Self {
        Self::default()
    }

    /// The width of a bucket, in ns.
    pub fn width_ns(&self) -> u64 {
        self.width_ns
    }

    /// The time of the first packet: where bucket 0 starts.
    pub fn origin(&self) -> Option<Timestamp> {
        self.origin
    }

    /// Buckets from the first packet to the last.
    pub fn len(&self) -> usize {
        match (self.origin, self.end) {
            (Some(o), Some(e)) => self.bucket_of(e.since(o)) + 1,
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.origin.is_none()
    }

    /// A session's series, if it is followed one by one.
    pub fn session(&self, id: SessionId) -> Option<&Series> {
        self.sessions.get(id).filter(|s| s.packets > 0)
    }

    /// The sessions past [`MAX_SESSIONS`], together.
    pub fn other(&self) -> &Series {
        &self.other
    }

    /// Up to `n` sessions with the most packets, busiest first (the first
    /// seen of equals).
    pub fn busiest(&self, n: usize) -> Vec<SessionId> {
        let mut ids: Vec<SessionId> = (0..self.sessions.len())
            .filter(|&i| self.sessions[i].packets > 0)
            .collect();
        ids.sort_by_key(|&i| std::cmp::Reverse(self.sessions[i].packets));
        ids.truncate(n);
        ids
    }

    fn bucket_of(&self, since_ns: u64) -> usize {
        usize::try_from(since_ns / self.width_ns).unwrap_or(usize::MAX)
    }

    /// The bucket of `ts`, widening the buckets until it fits.
    fn bucket(&mut self, ts: Timestamp) -> usize {
        let origin = *self.origin.get_or_insert(ts);
        let since = ts.since(origin);
        while self.bucket_of(since) >= MAX_BUCKETS {
            self.width_ns = self.width_ns.saturating_mul(2);
            for s in self.sessions.iter_mut().chain([&mut self.other]) {
                s.halve();
            }
        }
        self.bucket_of(since)
    }

    fn series(&mut self, id: SessionId) -> &mut Series {
        if id < MAX_SESSIONS {
            if id >= self.sessions.len() {
                self.sessions.resize_with(id + 1, Series::default);
            }
            &mut self.sessions[id]
        } else {
            &mut self.other
        }
    }
}

impl Observer for Timeline {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        let ts = e.datagram.ts;
        let i = self.bucket(ts);
        self.end = Some(self.end.map_or(ts, |end| end.max(ts)));
        self.last_frame = Some(e.datagram.frame);
        let origin = self.origin.unwrap_or(ts);
        // Marks go forward only: a capture out of time order adds none.
        if self
            .marks
            .last()
            .is_none_or(|&(_, t)| self.bucket_of(t.since(origin)) < i)
        {
            self.marks.push((e.datagram.frame, ts));
        }
        let series = self.series(e.session);
        series.packets += 1;
        let dirs = series.at(i);
        let d = &mut dirs[e.direction.index()];
        d.packets += 1;
        d.bytes += e.datagram.payload_len as u64;
        d.resends += u64::from(e.resends);
        for (dir, acks) in dirs.iter_mut().zip(e.acks) {
            dir.acks.merge(acks);
        }
        Flow::Continue
    }

    fn finding(&mut self, f: &Finding) {
        if f.kind != FindingKind::LOST {
            return;
        }
        // A finding of a frame already read counts at that frame's time.
        let read = self.last_frame.is_some_and(|last| f.frame <= last);
        let ts = match self.marks.partition_point(|&(frame, _)| frame <= f.frame) {
            n if read && n > 0 => self.marks[n - 1].1,
            _ => f.ts,
        };
        let i = self.bucket(ts);
        let series = self.series(f.session);
        series.at(i)[f.direction.index()].lost += f.numbers();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Datagram;
    use crate::engine::{AckTally, Direction};

    fn event_at(t: &mut Timeline, ms: u64, session: SessionId, direction: Direction, frame: u64) {
        let addr = "127.0.0.1:1".parse().expect("an address");
        let d = Datagram::new(frame, Timestamp(ms * 1_000_000), addr, addr, &[0; 10])
            .with_payload_len(10);
        let e = PacketEvent {
            datagram: &d,
            protocol: crate::proto::REGISTRY[0].info,
            session,
            direction,
            findings: &[],
            acks: [AckTally::default(); 2],
            ack_samples: [&[], &[]],
            resends: 1,
            dissector: None,
        };
        t.packet(&e);
    }

    #[test]
    fn buckets_widen_and_keep_every_count() {
        let mut t = Timeline::new();
        // Ten packets a second for 60 s: 600 packets over 600 buckets of
        // 100 ms, which must fit in MAX_BUCKETS: 400 ms buckets.
        for k in 0..600 {
            event_at(&mut t, k * 100, 0, Direction::ClientToServer, k + 1);
        }
        assert_eq!(t.width_ns(), 400_000_000);
        assert!(t.len() <= MAX_BUCKETS);
        let s = t.session(0).expect("followed");
        let total: u64 = (0..t.len()).map(|i| s.bucket(i)[0].packets).sum();
        assert_eq!(total, 600);
        assert_eq!(s.bucket(0)[0].packets, 4);
        assert_eq!(s.bucket(0)[0].resends, 4);
        assert_eq!(s.bucket(0)[1].packets, 0);
    }

    #[test]
    fn a_late_session_spans_only_its_own_buckets() {
        let mut t = Timeline::new();
        event_at(&mut t, 0, 0, Direction::ClientToServer, 1);
        event_at(&mut t, 20_000, 1, Direction::ServerToClient, 2);
        let late = t.session(1).expect("followed");
        assert_eq!(late.span(), 200..201);
        assert_eq!(late.bucket(200)[1].packets, 1);
        assert_eq!(late.bucket(0)[1].packets, 0);
        assert_eq!(t.busiest(5), vec![0, 1]);
    }

    #[test]
    fn time_going_back_and_forth_adds_no_marks() {
        let mut t = Timeline::new();
        for k in 0..1000 {
            event_at(&mut t, (k % 2) * 500, 0, Direction::ClientToServer, k + 1);
        }
        assert_eq!(t.marks.len(), 2);
        assert_eq!(t.session(0).expect("followed").packets(), 1000);
    }

    #[test]
    fn sessions_past_the_bound_are_counted_together() {
        let mut t = Timeline::new();
        event_at(&mut t, 0, MAX_SESSIONS, Direction::ClientToServer, 1);
        event_at(&mut t, 0, MAX_SESSIONS + 7, Direction::ClientToServer, 2);
        assert_eq!(t.other().packets(), 2);
        assert!(t.session(MAX_SESSIONS).is_none());
    }
}
