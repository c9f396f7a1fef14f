//! Incidents: a run of packets that one fault explains, reported once when it
//! ends, with the packets it spans, rather than once per packet.
//!
//! [`Regression`] is the run of a stream (cumulative acks, a sender's frame
//! or message counter) whose values stay below the highest it reached: one
//! value above the others (a bogus ack, a counter that jumped ahead) puts every
//! following packet below it until the stream passes it again. The stream keeps
//! its highest (what it resumes from is judged against it), and the run is one
//! finding, at its first packet, reported when a value at or above the highest
//! ends it, or when the session ends (the engine flushes the engine's own runs;
//! a protocol flushes its own in [`super::Analyzer::end`]).
//!
//! [`Run`] is the plainer incident under it: consecutive messages (or packets)
//! breaking one rule, such as a client's Inputs before the server's Synced. It
//! is opened by the first, extended by the next ones, and reported once as a
//! [`RunSpan`] when the caller says it ended (the rule is kept again, or the
//! session ends), at its first message.
//!
//! [`KeyedRuns`] keeps a few [`Run`]s of one rule apart by a key (the message
//! that is repeated, the field that is broken): each key's run is its own
//! incident, reported as a [`KeyedSpan`].

use super::finding::{Arg, ArgsReader, ArgsWriter, run_until};
use crate::capture::Timestamp;
use std::fmt;

/// One run of messages breaking one rule, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSpan {
    /// The first message's packet: where the finding is raised.
    pub frame: u64,
    pub ts: Timestamp,
    /// The first message's seqno, if it is reliable.
    pub seqno: Option<u32>,
    /// Messages in the run, the first included.
    pub messages: u32,
    /// Packets they came in (consecutive messages of one packet count once).
    pub packets: u32,
    /// The last message's packet.
    pub last_frame: u64,
}

impl RunSpan {
    /// What a finding's detail tells of the run after its first message.
    pub const fn tail(&self) -> RunTail {
        RunTail {
            messages: self.messages,
            packets: self.packets,
            last_frame: self.last_frame,
        }
    }
}

/// What a finding's detail tells of a run after its first message: how many
/// messages, in how many packets, until which frame (a detail's numbers, as
/// an [`Arg`] of 128 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunTail {
    pub messages: u32,
    pub packets: u32,
    pub last_frame: u64,
}

impl RunTail {
    /// The detail's end: `; 148 Inputs until frame 1234`, nothing for a run of
    /// one message ([`run_until`], `unit` naming the messages).
    pub fn until(self, f: &mut fmt::Formatter<'_>, unit: &str) -> fmt::Result {
        run_until(
            f,
            u64::from(self.messages),
            unit,
            u64::from(self.packets),
            self.last_frame,
        )
    }
}

impl Arg for RunTail {
    const BITS: u32 = 128;
    fn put(self, w: &mut ArgsWriter) {
        w.put(self.messages);
        w.put(self.packets);
        w.put(self.last_frame);
    }
    fn take(r: &mut ArgsReader<'_>) -> Self {
        RunTail {
            messages: r.take(),
            packets: r.take(),
            last_frame: r.take(),
        }
    }
}

/// An open run of messages breaking one rule, if any. Allocates nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Run {
    open: Option<RunSpan>,
}

impl Run {
    /// A message of packet `frame` breaking the rule: it opens a run, or
    /// extends the open one. Returns true when it opened one.
    pub fn hit(&mut self, frame: u64, ts: Timestamp, seqno: Option<u32>) -> bool {
        match &mut self.open {
            Some(run) => {
                run.messages = run.messages.saturating_add(1);
                if run.last_frame != frame {
                    run.packets = run.packets.saturating_add(1);
                    run.last_frame = frame;
                }
                false
            }
            None => {
                self.open = Some(RunSpan {
                    frame,
                    ts,
                    seqno,
                    messages: 1,
                    packets: 1,
                    last_frame: frame,
                });
                true
            }
        }
    }

    /// The rule is kept again, or the session ends: the run that was open, to
    /// report.
    pub fn end(&mut self) -> Option<RunSpan> {
        self.open.take()
    }

    /// Whether a run is open.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The open run as it stands, if one is open.
    pub fn span(&self) -> Option<RunSpan> {
        self.open
    }
}

/// One run of packets below a stream's highest value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegressionRun {
    /// The first packet below the highest: where the finding is raised.
    pub frame: u64,
    pub ts: Timestamp,
    /// The first packet's value, and the highest it fell below.
    pub value: u32,
    pub highest: u32,
    /// Packets in the run, the first included.
    pub packets: u32,
    /// The last packet of the run.
    pub last_frame: u64,
}

/// A stream's open run of values below its highest, if any: a [`Run`] of
/// packets, with the value that opened it. Allocates nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Regression {
    run: Run,
    /// The first value of the open run, and the highest it fell below.
    first: (u32, u32),
}

impl Regression {
    /// A packet of `frame` whose `value` is below the stream's `highest`: it
    /// opens a run, or extends the open one.
    pub fn below(&mut self, value: u32, highest: u32, frame: u64, ts: Timestamp) {
        if self.run.hit(frame, ts, None) {
            self.first = (value, highest);
        }
    }

    /// The stream is back at or above its highest, or it ends: the run that
    /// was open, to report.
    pub fn end(&mut self) -> Option<RegressionRun> {
        let (value, highest) = self.first;
        self.run.end().map(|run| RegressionRun {
            frame: run.frame,
            ts: run.ts,
            value,
            highest,
            // One value per packet: each is one.
            packets: run.messages,
            last_frame: run.last_frame,
        })
    }

    /// Whether a run is open.
    pub fn is_open(&self) -> bool {
        self.run.is_open()
    }
}

/// One run of a [`KeyedRuns`], ended: its key, what the caller kept of its
/// first hit, and the span to report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyedSpan<K, X> {
    pub key: K,
    pub first: X,
    pub span: RunSpan,
}

/// The open runs of one rule, one per key, at most `N` at once: each hit of a
/// key extends its run or opens one, and what the caller keeps of a run's
/// first hit (`X`) goes with it until it is reported. Allocates nothing.
#[derive(Debug, Clone, Copy)]
pub struct KeyedRuns<K, X, const N: usize> {
    /// The open runs, in the order they were opened (a run opened in an
    /// evicted one's place takes its place in the order too), then the free
    /// places.
    open: [Option<KeyedRun<K, X>>; N],
}

/// An open run of a [`KeyedRuns`].
#[derive(Debug, Clone, Copy)]
struct KeyedRun<K, X> {
    key: K,
    first: X,
    run: Run,
}

impl<K: Copy, X: Copy, const N: usize> Default for KeyedRuns<K, X, N> {
    fn default() -> Self {
        KeyedRuns { open: [None; N] }
    }
}

impl<K: Copy + PartialEq, X: Copy, const N: usize> KeyedRuns<K, X, N> {
    /// A hit of `key` in packet `frame` (see [`Run::hit`]): it extends the
    /// key's open run, or opens one that keeps `first`. Returns false when
    /// the key has no open run and there is no room for one: the hit is not
    /// counted.
    pub fn hit(&mut self, key: K, first: X, frame: u64, ts: Timestamp, seqno: Option<u32>) -> bool {
        let found = self.open.iter().flatten().position(|r| r.key == key);
        let Some(i) = found.or_else(|| self.open.iter().position(Option::is_none)) else {
            return false;
        };
        self.hit_at(i, key, first, frame, ts, seqno);
        true
    }

    /// Whether `key` has an open run.
    pub fn is_open(&self, key: K) -> bool {
        self.open.iter().flatten().any(|r| r.key == key)
    }

    /// [`KeyedRuns::hit`], but with no room the oldest run (the least `age`
    /// of what it kept, the earlier opened of equals) ends to make room: the
    /// new run takes its place, and the ended one is returned, to report.
    pub fn hit_or_evict<A: Ord>(
        &mut self,
        key: K,
        first: X,
        frame: u64,
        ts: Timestamp,
        seqno: Option<u32>,
        age: impl Fn(&X) -> A,
    ) -> Option<KeyedSpan<K, X>> {
        if self.hit(key, first, frame, ts, seqno) {
            return None;
        }
        let i = self.oldest(age)?;
        let evicted = self.open[i].take().and_then(KeyedRun::end);
        self.hit_at(i, key, first, frame, ts, seqno);
        evicted
    }

    /// Ends the first open run whose key `ends` says (in the order they were
    /// opened): the run, to report. Called until it returns `None`, it ends
    /// them all in that order, the others keeping theirs.
    pub fn end_first(&mut self, ends: impl Fn(K) -> bool) -> Option<KeyedSpan<K, X>> {
        let i = self.open.iter().flatten().position(|r| ends(r.key))?;
        self.remove(i)
    }

    /// Ends the oldest open run (the least `age` of what it kept, the earlier
    /// opened of equals): the run, to report. Called until it returns `None`
    /// (the session ends), it ends them all, oldest first.
    pub fn end_oldest<A: Ord>(&mut self, age: impl Fn(&X) -> A) -> Option<KeyedSpan<K, X>> {
        let i = self.oldest(age)?;
        self.remove(i)
    }

    /// The index of the oldest open run, if any.
    fn oldest<A: Ord>(&self, age: impl Fn(&X) -> A) -> Option<usize> {
        let open = self.open.iter().flatten().enumerate();
        open.min_by_key(|(_, r)| age(&r.first)).map(|(i, _)| i)
    }

    /// Extends the run at `i`, or opens one there for `key`.
    fn hit_at(
        &mut self,
        i: usize,
        key: K,
        first: X,
        frame: u64,
        ts: Timestamp,
        seqno: Option<u32>,
    ) {
        let run = self.open[i].get_or_insert(KeyedRun {
            key,
            first,
            run: Run::default(),
        });
        run.run.hit(frame, ts, seqno);
    }

    /// Ends the run at `i`; the ones after it move up, in their order.
    fn remove(&mut self, i: usize) -> Option<KeyedSpan<K, X>> {
        let ended = self.open[i].take();
        self.open[i..].rotate_left(1);
        ended.and_then(KeyedRun::end)
    }
}

impl<K, X> KeyedRun<K, X> {
    fn end(mut self) -> Option<KeyedSpan<K, X>> {
        let span = self.run.end()?;
        Some(KeyedSpan {
            key: self.key,
            first: self.first,
            span,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_one_incident_from_its_first_packet_to_its_last() {
        let mut r = Regression::default();
        assert_eq!(r.end(), None);
        r.below(120, 400, 7, Timestamp(70));
        r.below(121, 400, 8, Timestamp(80));
        r.below(100, 400, 9, Timestamp(90));
        assert!(r.is_open());
        assert_eq!(
            r.end(),
            Some(RegressionRun {
                frame: 7,
                ts: Timestamp(70),
                value: 120,
                highest: 400,
                packets: 3,
                last_frame: 9,
            })
        );
        assert!(!r.is_open());
        assert_eq!(r.end(), None);
    }

    #[test]
    fn a_run_counts_its_messages_and_their_packets() {
        let mut r = Run::default();
        assert_eq!(r.end(), None);
        assert!(r.hit(7, Timestamp(70), Some(3)));
        assert!(!r.hit(7, Timestamp(70), Some(4)));
        assert!(!r.hit(9, Timestamp(90), None));
        assert!(r.is_open());
        assert_eq!(
            r.end(),
            Some(RunSpan {
                frame: 7,
                ts: Timestamp(70),
                seqno: Some(3),
                messages: 3,
                packets: 2,
                last_frame: 9,
            })
        );
        assert!(!r.is_open());
        assert!(r.hit(12, Timestamp(120), None));
        assert_eq!(r.end().map(|run| (run.frame, run.messages)), Some((12, 1)));
    }

    /// The keys of the open runs, in their order, with their first frames.
    fn open_keys<const N: usize>(runs: &KeyedRuns<u32, u64, N>) -> Vec<(u32, u64)> {
        let open = runs.open.iter().flatten();
        open.map(|r| (r.key, r.run.open.map_or(0, |s| s.frame)))
            .collect()
    }

    #[test]
    fn a_key_finds_its_own_run_or_takes_a_free_place() {
        let mut runs = KeyedRuns::<u32, u64, 2>::default();
        assert!(runs.hit(5, 50, 7, Timestamp(70), Some(5)));
        assert!(runs.hit(6, 60, 8, Timestamp(80), Some(6)));
        // Key 5 again: its run, with what it kept of its first hit.
        assert!(runs.hit(5, 99, 9, Timestamp(90), Some(5)));
        assert_eq!(open_keys(&runs), [(5, 7), (6, 8)]);
        // No room for key 7: not counted.
        assert!(!runs.hit(7, 70, 10, Timestamp(100), None));
        assert_eq!(open_keys(&runs), [(5, 7), (6, 8)]);
        assert_eq!(
            runs.end_first(|key| key == 5),
            Some(KeyedSpan {
                key: 5,
                first: 50,
                span: RunSpan {
                    frame: 7,
                    ts: Timestamp(70),
                    seqno: Some(5),
                    messages: 2,
                    packets: 2,
                    last_frame: 9,
                },
            })
        );
        // Its place is free again.
        assert!(runs.hit(7, 70, 10, Timestamp(100), None));
        assert_eq!(open_keys(&runs), [(6, 8), (7, 10)]);
    }

    #[test]
    fn with_no_room_the_oldest_run_ends_and_its_place_goes_to_the_new_one() {
        let mut runs = KeyedRuns::<u32, u64, 3>::default();
        let age = |first: &u64| *first;
        for (key, first, frame) in [(1, 30, 1), (2, 10, 2), (3, 10, 3)] {
            let evicted = runs.hit_or_evict(key, first, frame, Timestamp(0), None, age);
            assert_eq!(evicted, None);
        }
        // A hit of an open key ends nothing.
        assert_eq!(runs.hit_or_evict(1, 30, 4, Timestamp(0), None, age), None);
        // Keys 2 and 3 kept the least: key 2, opened before key 3, ends.
        let evicted = runs.hit_or_evict(4, 20, 5, Timestamp(0), None, age);
        let ended = evicted.map(|e| (e.key, e.first, e.span.frame, e.span.messages));
        assert_eq!(ended, Some((2, 10, 2, 1)));
        assert_eq!(open_keys(&runs), [(1, 1), (4, 5), (3, 3)]);
        let evicted = runs.hit_or_evict(5, 40, 6, Timestamp(0), None, age);
        assert_eq!(evicted.map(|e| e.key), Some(3));
        assert_eq!(open_keys(&runs), [(1, 1), (4, 5), (5, 6)]);
    }

    #[test]
    fn runs_end_in_their_order_or_oldest_first_and_leave_none_open() {
        let mut runs = KeyedRuns::<u32, u64, 4>::default();
        for (key, first) in [(1, 30), (2, 10), (3, 20), (4, 10)] {
            assert!(runs.hit(key, first, u64::from(key), Timestamp(0), None));
        }
        // The ones `ends` says, in the order they were opened.
        assert_eq!(runs.end_first(|key| key % 2 == 1).map(|e| e.key), Some(1));
        assert_eq!(runs.end_first(|key| key % 2 == 1).map(|e| e.key), Some(3));
        assert_eq!(runs.end_first(|key| key % 2 == 1), None);
        assert_eq!(open_keys(&runs), [(2, 2), (4, 4)]);
        assert!(runs.hit(5, 5, 5, Timestamp(0), None));
        // Oldest first, the earlier opened of equals.
        let mut order = Vec::new();
        while let Some(ended) = runs.end_oldest(|first| *first) {
            order.push(ended.key);
        }
        assert_eq!(order, [5, 2, 4]);
        assert_eq!(open_keys(&runs), []);
        assert_eq!(runs.end_first(|_| true), None);
    }
}
