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

use crate::capture::Timestamp;

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

/// A stream's open run of values below its highest, if any. Allocates nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Regression {
    open: Option<RegressionRun>,
}

impl Regression {
    /// A packet of `frame` whose `value` is below the stream's `highest`: it
    /// opens a run, or extends the open one.
    pub fn below(&mut self, value: u32, highest: u32, frame: u64, ts: Timestamp) {
        match &mut self.open {
            Some(run) => {
                run.packets = run.packets.saturating_add(1);
                run.last_frame = frame;
            }
            None => {
                self.open = Some(RegressionRun {
                    frame,
                    ts,
                    value,
                    highest,
                    packets: 1,
                    last_frame: frame,
                })
            }
        }
    }

    /// The stream is back at or above its highest, or it ends: the run that
    /// was open, to report.
    pub fn end(&mut self) -> Option<RegressionRun> {
        self.open.take()
    }

    /// Whether a run is open.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
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
}
