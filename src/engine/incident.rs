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

use crate::capture::Timestamp;

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
}
