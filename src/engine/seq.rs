//! The reliable sequence of one direction: a fixed window of recent seqnos, so the
//! state stays bounded however long the capture runs.

use crate::capture::Timestamp;

/// How many recent seqnos a direction remembers. A resend or gap fill older than
/// this cannot be told apart from a first send; no real peer lags that far.
pub const WINDOW: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum SlotState {
    #[default]
    Empty,
    /// Skipped by a gap, not captured yet; `frame` and `ts` are the gap's.
    /// `acked`: the other side acknowledged it, so it was delivered and the
    /// capture missed it.
    Missing,
    /// Captured at least once; `frame` is the frame of the first capture.
    Seen,
    /// Skipped by a jump that came after a packet the capture cut short: the
    /// cut tail may have held it, so nothing is known of it (neither missing
    /// nor seen).
    Unknown,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    seqno: u32,
    state: SlotState,
    acked: bool,
    tries: u32,
    frame: u64,
    ts: Timestamp,
    hash: u64,
    /// When the first ack of the other side covering it was captured (kept
    /// when a missing seqno is captured after it: the ack came first).
    acked_ts: Option<Timestamp>,
}

/// What the window knows of a seqno about to be recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// The first reliable message of the direction: it sets the baseline.
    Baseline,
    /// Below the baseline: sent before the capture began.
    BeforeBaseline,
    /// Captured before, first in `first_frame` at `first_ts`, `tries` times so far.
    Seen {
        first_frame: u64,
        first_ts: Timestamp,
        tries: u32,
        hash: u64,
    },
    /// Below the highest seen and never captured: it fills a gap.
    Fill,
    /// Too far below the highest for the window to say.
    TooOld,
    /// The next seqno.
    Next,
    /// Above the next seqno: `missing` seqnos were skipped.
    Jump { missing: u32 },
    /// The first capture of a seqno that the cut tail of an earlier packet
    /// may have held (above the highest after a cut, or skipped then): the
    /// capture cannot tell a first send from a resend or a gap, and judges
    /// nothing.
    AfterCut,
}

/// An empty slot, for a window that has recorded nothing yet.
const EMPTY: Slot = Slot {
    seqno: 0,
    state: SlotState::Empty,
    acked: false,
    tries: 0,
    frame: 0,
    ts: Timestamp(0),
    hash: 0,
    acked_ts: None,
};

/// The reliable sequence of one direction.
#[derive(Debug, Default)]
pub struct SeqWindow {
    /// Made at the first seqno recorded: a session that carries no reliable
    /// message (most of a flood of spoofed peers) costs no window.
    slots: Box<[Slot]>,
    base: Option<u32>,
    highest: u32,
    /// A packet of this direction was cut short by the capture since the
    /// highest seqno was recorded: its lost tail may have held higher seqnos.
    tail_unknown: bool,
    /// The highest ack applied (`ack`), which may lie above `highest` while
    /// the tail is unknown: seqnos up to it are acked when first captured.
    acked_to: u32,
    /// When `acked_to` last rose: a seqno first captured at or below it was
    /// acked by then (or earlier).
    acked_to_ts: Option<Timestamp>,
    /// The highest ack of the unseen ([`SeqWindow::unseen_ack`]): a missing
    /// seqno at or below it was delivered, the capture missed it.
    unseen_acked_to: u32,
}

impl SeqWindow {
    fn slot(&self, seqno: u32) -> &Slot {
        self.slots.get(seqno as usize % WINDOW).unwrap_or(&EMPTY)
    }

    fn slot_mut(&mut self, seqno: u32) -> &mut Slot {
        if self.slots.is_empty() {
            self.slots = vec![Slot::default(); WINDOW].into_boxed_slice();
        }
        &mut self.slots[seqno as usize % WINDOW]
    }

    /// The highest seqno captured, once there is one.
    pub fn highest(&self) -> Option<u32> {
        self.base.map(|_| self.highest)
    }

    /// A packet of this direction was cut short by the capture: its lost tail
    /// may have held seqnos above the highest recorded. The next jump above it
    /// then skips seqnos that are unknown (not missing, no gap), and acks above
    /// it are not acks of the unseen.
    pub fn mark_cut(&mut self) {
        self.tail_unknown = true;
    }

    /// Whether a cut packet may have held seqnos above the highest recorded.
    pub fn tail_unknown(&self) -> bool {
        self.tail_unknown
    }

    /// Whether an ack of `ack`, above the highest seqno recorded, may cover
    /// messages that the cut tail of a packet held (so it is no ack of the
    /// unseen): a cut packet came since the highest, or an earlier ack taken
    /// so already reached as far.
    pub fn cut_may_cover(&self, ack: u32) -> bool {
        self.tail_unknown || ack <= self.acked_to
    }

    pub fn lookup(&self, seqno: u32) -> Lookup {
        let Some(base) = self.base else {
            return Lookup::Baseline;
        };
        if seqno < base {
            return Lookup::BeforeBaseline;
        }
        if seqno > self.highest {
            if self.tail_unknown || seqno <= self.acked_to {
                return Lookup::AfterCut;
            }
            return match seqno - self.highest - 1 {
                0 => Lookup::Next,
                missing => Lookup::Jump { missing },
            };
        }
        if (self.highest - seqno) as usize >= WINDOW {
            return Lookup::TooOld;
        }
        let slot = self.slot(seqno);
        match slot.state {
            SlotState::Seen if slot.seqno == seqno => Lookup::Seen {
                first_frame: slot.frame,
                first_ts: slot.ts,
                tries: slot.tries,
                hash: slot.hash,
            },
            SlotState::Unknown if slot.seqno == seqno => Lookup::AfterCut,
            _ => Lookup::Fill,
        }
    }

    /// Records a capture of `seqno`. For a jump, the skipped seqnos become missing;
    /// `lost` is called for each missing seqno pushed out of the window unseen,
    /// with the frame and capture time of the gap that skipped it and whether
    /// the other side acknowledged it (then the capture missed it; otherwise
    /// it was lost, if an ack could have been captured).
    pub fn record(
        &mut self,
        seqno: u32,
        frame: u64,
        ts: Timestamp,
        hash: u64,
        mut lost: impl FnMut(u32, u64, Timestamp, bool),
    ) {
        if self.base.is_none() {
            self.base = Some(seqno);
            self.highest = seqno;
        }
        // Acked before it was first captured: only a cut tail can hide a
        // message the other side then acks.
        let mut acked_before = false;
        if seqno > self.highest {
            // Mark what the jump skipped, as far back as the window reaches:
            // missing, or unknown when a cut tail may have held them (the
            // other side acked them, or a cut packet came since the highest).
            let first_tracked = seqno
                .saturating_sub(WINDOW as u32 - 1)
                .max(self.highest + 1);
            for s in first_tracked..seqno {
                self.evict(s, &mut lost);
                let acked = s <= self.acked_to;
                let state = if self.tail_unknown || acked {
                    SlotState::Unknown
                } else {
                    SlotState::Missing
                };
                let acked_ts = if acked { self.acked_to_ts } else { None };
                *self.slot_mut(s) = Slot {
                    seqno: s,
                    state,
                    acked,
                    frame,
                    ts,
                    acked_ts,
                    ..Slot::default()
                };
            }
            self.evict(seqno, &mut lost);
            acked_before = seqno <= self.acked_to;
            self.highest = seqno;
            self.tail_unknown = false;
        } else if (self.highest - seqno) as usize >= WINDOW {
            return;
        }
        let acked_to_ts = self.acked_to_ts;
        let slot = self.slot_mut(seqno);
        if slot.seqno == seqno && slot.state == SlotState::Seen {
            slot.tries += 1;
        } else {
            let same = slot.seqno == seqno;
            acked_before |= same && slot.state == SlotState::Unknown && slot.acked;
            // An ack that covered it while it was missing came first.
            let acked_ts = match (same, slot.acked_ts) {
                (true, Some(at)) => Some(at),
                _ if acked_before => acked_to_ts.or(Some(ts)),
                _ => None,
            };
            *slot = Slot {
                seqno,
                state: SlotState::Seen,
                acked: acked_before,
                tries: 1,
                frame,
                ts,
                hash,
                acked_ts,
            };
        }
    }

    fn evict(&mut self, seqno: u32, lost: &mut impl FnMut(u32, u64, Timestamp, bool)) {
        let old = *self.slot(seqno);
        if old.state == SlotState::Missing && old.seqno != seqno {
            lost(
                old.seqno,
                old.frame,
                old.ts,
                old.acked || old.seqno <= self.unseen_acked_to,
            );
        }
    }

    /// The other side acked up to `ack`, above every seqno captured here (an
    /// ack of the unseen, which judges nothing else): a missing seqno at or
    /// below it (skipped by a jump before or after it: sent) was delivered,
    /// not lost, when it is judged.
    pub fn unseen_ack(&mut self, ack: u32) {
        self.unseen_acked_to = self.unseen_acked_to.max(ack);
    }

    /// The other side acked up to `ack` (having acked up to `previous` before)
    /// in a packet captured at `at`: calls `acked` with the first capture time
    /// of every seqno newly covered; missing seqnos it covers are marked
    /// delivered but not captured.
    pub fn ack(
        &mut self,
        previous: u32,
        ack: u32,
        at: Timestamp,
        mut acked: impl FnMut(Timestamp),
    ) {
        if self.base.is_none() || ack <= previous {
            return;
        }
        if ack > self.acked_to {
            self.acked_to = ack;
            self.acked_to_ts = Some(at);
        }
        let low = previous
            .saturating_add(1)
            .max(self.highest.saturating_sub(WINDOW as u32 - 1));
        let high = ack.min(self.highest);
        for s in low..=high {
            let slot = self.slot_mut(s);
            if slot.seqno == s && !slot.acked {
                match slot.state {
                    SlotState::Seen => {
                        slot.acked = true;
                        slot.acked_ts = Some(at);
                        acked(slot.ts);
                    }
                    SlotState::Missing | SlotState::Unknown => {
                        slot.acked = true;
                        slot.acked_ts = Some(at);
                    }
                    SlotState::Empty => {}
                }
            }
        }
    }

    /// Calls `lost` for every seqno still missing (at the end of the capture),
    /// with the frame and capture time of its gap and whether the other side
    /// acknowledged it.
    pub fn drain_missing(&mut self, mut lost: impl FnMut(u32, u64, Timestamp, bool)) {
        let unseen_acked_to = self.unseen_acked_to;
        let mut missing: Vec<(u32, u64, Timestamp, bool)> = self
            .slots
            .iter_mut()
            .filter(|s| s.state == SlotState::Missing)
            .map(|s| {
                s.state = SlotState::Empty;
                let acked = s.acked || s.seqno <= unseen_acked_to;
                (s.seqno, s.frame, s.ts, acked)
            })
            .collect();
        missing.sort_unstable();
        for (seqno, frame, ts, acked) in missing {
            lost(seqno, frame, ts, acked);
        }
    }

    /// When the first ack of the other side that covered `seqno` was
    /// captured, while the window holds it.
    pub fn acked_at(&self, seqno: u32) -> Option<Timestamp> {
        let slot = self.slot(seqno);
        if slot.seqno == seqno && slot.state != SlotState::Empty {
            slot.acked_ts
        } else {
            None
        }
    }

    /// Captured seqnos the other side has not acked.
    pub fn unacked(&self) -> usize {
        self.unacked_frames().count()
    }

    /// The frame that first carried each reliable message not acked.
    pub fn unacked_frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots
            .iter()
            .filter(|s| s.state == SlotState::Seen && !s.acked)
            .map(|s| s.frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(w: &mut SeqWindow, s: u32, frame: u64) -> Vec<u32> {
        let mut lost = Vec::new();
        w.record(s, frame, Timestamp(frame), 0, |s, _, _, _| lost.push(s));
        lost
    }

    #[test]
    fn baseline_then_next_then_seen() {
        let mut w = SeqWindow::default();
        assert_eq!(w.lookup(7), Lookup::Baseline);
        rec(&mut w, 7, 1);
        assert_eq!(w.lookup(8), Lookup::Next);
        assert_eq!(w.lookup(6), Lookup::BeforeBaseline);
        assert!(matches!(
            w.lookup(7),
            Lookup::Seen {
                first_frame: 1,
                tries: 1,
                ..
            }
        ));
        rec(&mut w, 7, 2);
        assert!(matches!(
            w.lookup(7),
            Lookup::Seen {
                first_frame: 1,
                tries: 2,
                ..
            }
        ));
    }

    #[test]
    fn a_jump_leaves_fills_and_the_unfilled_are_lost() {
        let mut w = SeqWindow::default();
        rec(&mut w, 1, 1);
        assert_eq!(w.lookup(5), Lookup::Jump { missing: 3 });
        rec(&mut w, 5, 2);
        assert_eq!(w.lookup(3), Lookup::Fill);
        rec(&mut w, 3, 3);
        assert!(matches!(w.lookup(3), Lookup::Seen { .. }));
        let mut lost = Vec::new();
        w.drain_missing(|s, frame, _, _| lost.push((s, frame)));
        assert_eq!(lost, vec![(2, 2), (4, 2)]);
    }

    #[test]
    fn missing_seqnos_pushed_out_of_the_window_are_lost_at_once() {
        let mut w = SeqWindow::default();
        rec(&mut w, 1, 1);
        rec(&mut w, 3, 2); // 2 missing
        let lost = rec(&mut w, 3 + WINDOW as u32, 3);
        assert_eq!(lost, vec![2]);
        assert_eq!(w.lookup(3), Lookup::TooOld);
    }

    #[test]
    fn acks_cover_each_seqno_once() {
        let mut w = SeqWindow::default();
        for (s, f) in [(1, 1), (2, 2), (3, 3)] {
            rec(&mut w, s, f);
        }
        let mut times = Vec::new();
        w.ack(0, 2, Timestamp(50), |t| times.push(t.0));
        w.ack(2, 2, Timestamp(60), |t| times.push(t.0));
        w.ack(1, 9, Timestamp(70), |t| times.push(t.0));
        assert_eq!(times, vec![1, 2, 3]);
        assert_eq!(w.unacked(), 0);
        // Each seqno keeps the capture time of the first ack that covered it.
        assert_eq!(w.acked_at(1), Some(Timestamp(50)));
        assert_eq!(w.acked_at(2), Some(Timestamp(50)));
        assert_eq!(w.acked_at(3), Some(Timestamp(70)));
        assert_eq!(w.acked_at(4), None);
        // A missing seqno acked, then captured: the ack came first.
        let mut w = SeqWindow::default();
        rec(&mut w, 1, 1);
        rec(&mut w, 3, 2); // 2 missing
        w.ack(0, 3, Timestamp(80), |_| {});
        rec(&mut w, 2, 3);
        assert_eq!(w.acked_at(2), Some(Timestamp(80)));
    }
}
