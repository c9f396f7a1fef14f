//! Numbers never captured, reported one finding per gap and judgement.
//!
//! A sequence number skipped by a jump and never captured is judged when it
//! leaves its protocol's window or at the end of the session: `lost` (the
//! other side never acknowledged it), `not-captured` (it did: the capture
//! missed it), or `not-captured` "unconfirmed: ..." (no ack window of the
//! peer ever covered it). Every number is counted, in the direction's
//! counters, as before: the `lost` and `not-captured` counts (and the loss
//! estimates built on them) are counts of numbers. But the findings are
//! incidents: the numbers one packet skipped (one gap frame: its jump, or
//! the gaps between its messages) judged alike make one finding, whatever
//! the number of packets that judged them, its `seqno` the first of them,
//! and, for more than one, a [`Detail::Missed`] with how many and the last
//! (`127 seqnos, 5 to 131`: not always every number between, when some were
//! captured late or judged otherwise). A gap's numbers judged in turn lost
//! and not captured (an acker that acknowledges every other one) make two
//! findings, not one per number: each judgement gathers its own run. A
//! capture of random numbers (each packet skipping hundreds) so gives about
//! one finding per packet, not hundreds (issue 36: 300 000 Starstrike
//! packets made 38 M findings).
//!
//! The runs being gathered live in the direction ([`super::DirState`]) from
//! packet to packet: numbers of one gap are often judged one per packet (a
//! window moving on a number at a time). A run is reported (raised with the
//! packet being analysed, at the frame of its gap) when a number of another
//! gap is judged alike, or when the direction's sequence is followed on a
//! packet without judging any number (the window moved past the gaps' last
//! numbers); and at the end of the session (the tracker's `report_lost`,
//! after the protocol's own end).
//! Fixed size, no allocation.

use super::{Detail, DirState, Direction, Finding, FindingKind, SessionId};
use crate::capture::Timestamp;

/// How a number never captured was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    Lost,
    NotCaptured,
    /// Not captured, and the capture cannot tell loss from a miss: why.
    Unconfirmed(&'static str),
}

/// Why a number no ack window reached is unconfirmed.
pub const UNREACHED: &str = "no ack window reached it after it could have arrived";

/// Why a number skipped by a protocol without acks is unconfirmed.
pub const NO_ACKS: &str =
    "the protocol has no acks: lost before the tap or missed by it, the capture cannot tell";

/// Whether the capture shows a packet of the acking side (its last captured
/// at `acker_last`) captured at least the smoothed ack delay of the numbers'
/// direction (`ack_delay`, ns) after a gap captured at `gap_ts`: an ack of
/// what the gap skipped, had it been delivered, could have been captured, so
/// a number no ack covered is `lost`. Otherwise (a gap in the capture's last
/// round trip, an acker never captured, no ack delay measured) the capture
/// cannot tell: [`MissedCounts::unconfirmed`].
pub fn ack_could_come(
    gap_ts: Timestamp,
    ack_delay: Option<f64>,
    acker_last: Option<Timestamp>,
) -> bool {
    match (ack_delay, acker_last) {
        (Some(delay), Some(last)) => last.0.saturating_sub(gap_ts.0) as f64 >= delay,
        _ => false,
    }
}

/// The run of numbers being gathered into one finding.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Open {
    judged: Judged,
    gap_frame: u64,
    first: u32,
    last: u32,
    count: u32,
    ts: Timestamp,
    session: SessionId,
    direction: Direction,
}

impl Open {
    fn finding(&self) -> Finding {
        let (kind, reason) = match self.judged {
            Judged::Lost => (FindingKind::LOST, None),
            Judged::NotCaptured => (FindingKind::NOT_CAPTURED, None),
            Judged::Unconfirmed(why) => (FindingKind::NOT_CAPTURED, Some(why)),
        };
        let detail = match (self.count, reason) {
            (1, None) => Detail::None,
            (1, Some(why)) => Detail::Unconfirmed(why),
            (count, reason) => Detail::Missed {
                first: self.first,
                last: self.last,
                count,
                reason,
            },
        };
        Finding {
            kind,
            rule: None,
            frame: self.gap_frame,
            ts: self.ts,
            session: self.session,
            direction: self.direction,
            seqno: Some(self.first),
            detail,
        }
    }
}

/// The runs a direction holds open between packets: one per judgement.
pub(crate) type OpenRuns = [Option<Open>; 3];

impl Judged {
    const fn index(self) -> usize {
        match self {
            Judged::Lost => 0,
            Judged::NotCaptured => 1,
            Judged::Unconfirmed(_) => 2,
        }
    }
}

/// Numbers skipped by a gap and never captured, counted as they are judged
/// (`not-captured` when the other side acked them, `lost` otherwise) and
/// reported one finding per gap and judgement. Taken from the direction
/// with [`MissedCounts::resume`] (the runs its earlier packets left open),
/// given back with [`MissedCounts::add_to`].
#[derive(Debug, Default)]
pub struct MissedCounts {
    lost: u64,
    not_captured: u64,
    /// Of `not_captured`: numbers of a protocol without acks, which the
    /// capture cannot tell lost from missed (counted in the loss estimate).
    unproven: u64,
    /// The protocol has no acks ([`MissedCounts::without_acks`]).
    no_acks: bool,
    open: OpenRuns,
    /// A number joined or opened the run of that judgement here.
    grew: [bool; 3],
}

impl MissedCounts {
    /// The counts of this packet, continuing the runs `dir` holds open.
    #[inline]
    pub fn resume(dir: &mut DirState) -> Self {
        let mut counts = Self::default();
        // Almost always no run is open: nothing to move.
        if dir.missed.iter().any(Option::is_some) {
            counts.open = std::mem::take(&mut dir.missed);
        }
        counts
    }

    /// `seqno`, skipped by the gap of `gap_frame`, judged at `ts`: `acked`
    /// (the other side acknowledged it: `not-captured`) or not (`lost`).
    /// Counted; a finding goes to `out` when it closes the run before it.
    #[allow(clippy::too_many_arguments)]
    pub fn missed(
        &mut self,
        seqno: u32,
        gap_frame: u64,
        acked: bool,
        ts: Timestamp,
        session: SessionId,
        direction: Direction,
        out: &mut Vec<Finding>,
    ) {
        let judged = if acked {
            self.not_captured += 1;
            Judged::NotCaptured
        } else if self.no_acks {
            self.not_captured += 1;
            self.unproven += 1;
            Judged::Unconfirmed(NO_ACKS)
        } else {
            self.lost += 1;
            Judged::Lost
        };
        self.gather(judged, seqno, gap_frame, ts, session, direction, out);
    }

    /// `seqno`, never captured, whose position no ack window of the peer
    /// covered after it could have arrived (a protocol whose literal ack
    /// window can miss the peer's numbers, or whose windows came only while
    /// it was in flight): the capture cannot tell loss from a miss, so it is
    /// a `not-captured` note "unconfirmed: no ack window reached it after it
    /// could have arrived", not counted as lost. Counted; gathered as [`MissedCounts::missed`].
    pub fn unconfirmed(
        &mut self,
        seqno: u32,
        gap_frame: u64,
        ts: Timestamp,
        session: SessionId,
        direction: Direction,
        out: &mut Vec<Finding>,
    ) {
        self.unconfirmed_for(UNREACHED, seqno, gap_frame, ts, session, direction, out);
    }

    /// [`MissedCounts::unconfirmed`] for another reason `why` (the detail's
    /// "unconfirmed: ..."): a `not-captured` note, not counted as lost.
    #[allow(clippy::too_many_arguments)]
    pub fn unconfirmed_for(
        &mut self,
        why: &'static str,
        seqno: u32,
        gap_frame: u64,
        ts: Timestamp,
        session: SessionId,
        direction: Direction,
        out: &mut Vec<Finding>,
    ) {
        self.not_captured += 1;
        self.gather(
            Judged::Unconfirmed(why),
            seqno,
            gap_frame,
            ts,
            session,
            direction,
            out,
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn gather(
        &mut self,
        judged: Judged,
        seqno: u32,
        gap_frame: u64,
        ts: Timestamp,
        session: SessionId,
        direction: Direction,
        out: &mut Vec<Finding>,
    ) {
        let i = judged.index();
        self.grew[i] = true;
        let slot = &mut self.open[i];
        if let Some(open) = slot
            && open.gap_frame == gap_frame
            && open.session == session
            && open.direction == direction
            && open.count < u32::MAX
        {
            open.last = seqno;
            open.count += 1;
            return;
        }
        if let Some(done) = slot.take() {
            out.push(done.finding());
        }
        *slot = Some(Open {
            judged,
            gap_frame,
            first: seqno,
            last: seqno,
            count: 1,
            ts,
            session,
            direction,
        });
    }

    /// Reports the open runs (at the end of the session), the earliest gap
    /// first.
    #[inline]
    pub fn close(&mut self, out: &mut Vec<Finding>) {
        // Almost always none is open (a reliable message that judged nothing).
        if self.open.iter().any(Option::is_some) {
            self.close_open(out);
        }
    }

    /// [`MissedCounts::close`] with a run open.
    #[inline(never)]
    fn close_open(&mut self, out: &mut Vec<Finding>) {
        let mut open: OpenRuns = std::mem::take(&mut self.open);
        open.sort_by_key(|o| o.map(|o| (o.gap_frame, o.first)));
        out.extend(open.iter().flatten().map(Open::finding));
    }

    /// The numbers judged `lost` here.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// For a protocol without acks: a number skipped and never captured was
    /// lost before the tap or missed by it, and nothing in the capture tells
    /// which, so it is a `not-captured` note, "unconfirmed: the protocol has
    /// no acks ..." (the capture proves no loss), never a `lost` warning. It
    /// still counts in the loss estimate ([`MissedCounts::lost_or_unproven`]),
    /// as the most that can have been lost.
    pub fn without_acks(mut self) -> Self {
        self.no_acks = true;
        self
    }

    /// The numbers judged `lost`, and those a protocol without acks cannot
    /// tell lost from missed: what the loss estimate counts.
    pub fn lost_or_unproven(&self) -> u64 {
        self.lost + self.unproven
    }

    /// Adds the counts to the direction's findings. When a number was judged
    /// here, the runs stay open with the direction for the numbers its next
    /// packets judge (the rest of a gap, leaving the window one a packet);
    /// when none was (the window moved past the gaps' last numbers), they
    /// are complete and go to `out`.
    #[inline]
    pub fn add_to(mut self, dir: &mut DirState, out: &mut Vec<Finding>) {
        dir.findings[FindingKind::LOST.ordinal()] += self.lost;
        dir.findings[FindingKind::NOT_CAPTURED.ordinal()] += self.not_captured;
        if !self.grew.iter().any(|&g| g) {
            self.close(out);
        }
        // `resume` left the direction's runs empty (it took them, or there
        // were none): only open runs need moving back.
        if self.open.iter().any(Option::is_some) {
            dir.missed = self.open;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C2S: Direction = Direction::ClientToServer;

    fn rows(out: &[Finding]) -> Vec<(&'static str, u64, Option<u32>, u64, String)> {
        out.iter()
            .map(|f| {
                (
                    f.kind.name(),
                    f.frame,
                    f.seqno,
                    f.ts.0,
                    f.detail.to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn one_finding_per_gap_across_packets() {
        let mut dir = DirState::default();
        let mut out = Vec::new();
        // A gap of frame 10 (numbers 5 to 9) judged one number a packet:
        // nothing raised while it grows.
        for s in 5..10 {
            let mut c = MissedCounts::resume(&mut dir);
            c.missed(s, 10, false, Timestamp(u64::from(s)), 0, C2S, &mut out);
            c.add_to(&mut dir, &mut out);
        }
        assert!(out.is_empty(), "{out:?}");
        // A packet that skipped numbers between its messages (frame 20: 30
        // to 33, and 35), judged in turn acked, lost and unconfirmed: one
        // finding per judgement; the lost ones close the gap of frame 10.
        let mut c = MissedCounts::resume(&mut dir);
        c.missed(30, 20, true, Timestamp(40), 0, C2S, &mut out);
        c.missed(31, 20, false, Timestamp(40), 0, C2S, &mut out);
        c.unconfirmed(32, 20, Timestamp(41), 0, C2S, &mut out);
        c.missed(33, 20, true, Timestamp(41), 0, C2S, &mut out);
        c.missed(35, 20, false, Timestamp(41), 0, C2S, &mut out);
        c.add_to(&mut dir, &mut out);
        assert_eq!(
            rows(&out),
            [("lost", 10, Some(5), 5, "5 seqnos, 5 to 9".to_owned())]
        );
        // A packet that judges no number: the runs are complete, the
        // earliest first.
        MissedCounts::resume(&mut dir).add_to(&mut dir, &mut out);
        assert_eq!(
            rows(&out[1..]),
            [
                (
                    "not-captured",
                    20,
                    Some(30),
                    40,
                    "2 seqnos, 30 to 33".to_owned()
                ),
                ("lost", 20, Some(31), 40, "2 seqnos, 31 to 35".to_owned()),
                (
                    "not-captured",
                    20,
                    Some(32),
                    41,
                    "unconfirmed: no ack window reached it after it could have arrived".to_owned()
                ),
            ]
        );
        // The counts are numbers, not findings.
        assert_eq!(dir.finding_count(FindingKind::LOST), 7);
        assert_eq!(dir.finding_count(FindingKind::NOT_CAPTURED), 3);
        assert!(dir.missed.iter().all(Option::is_none));
        // At the end of a session, what is open is raised.
        let mut c = MissedCounts::resume(&mut dir);
        c.missed(50, 60, false, Timestamp(70), 0, C2S, &mut out);
        c.close(&mut out);
        c.add_to(&mut dir, &mut out);
        assert_eq!(rows(&out[4..]), [("lost", 60, Some(50), 70, String::new())]);
    }
}
