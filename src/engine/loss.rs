//! Packets lost before the capture point, estimated from the sender's own clock.
//!
//! A game peer sends on a fixed tick (lwar's server its Update family at ~15 Hz,
//! its clients an Input every frame at ~30 Hz) and stamps each packet with its
//! clock. Between two captured packets of that stream whose stamps are
//! `d` ms apart, with the sender's tick `T` (the median of those gaps, once 10
//! are known), `round(d / T) - 1` packets were sent and never reached the
//! capture point. Gaps over 3 s are silence (a pause, a timeout), not loss, and
//! count nothing. The estimate is `lost` out of `expected` = captured stamped
//! packets of the stream + `lost`.
//!
//! The stream is followed from its first periodic packet on
//! ([`Cadence::stamp`]); the protocol says which packets are periodic (lwar:
//! the client's packets that carry an Input, the server's that carry a
//! message of the Update family). Before it, a sender is idle by design, not
//! on its tick: an lwar client stamps its Connect at 100 ms and an ack-only
//! packet at 200 ms while it waits for the handshake, then its Inputs every
//! 33 ms from 233 ms, and its gaps before the first Input are the
//! handshake's pace, not missed ticks. From that first periodic packet on,
//! every stamped packet of the sender counts: a packet on the tick may carry
//! no periodic message (an lwar server whose resends fill the packet leaves
//! its Updates out; a client saying Disconnect sends no Input) and is no
//! hole in the stream. A packet stamped before the latest (overtaken on the
//! way) is not sampled: captured, it fills one of the holes counted in the gap
//! it left behind ([`Cadence::overtaken`]), and is counted back: one packet
//! fewer lost, one more captured, when it is stamped after the stream began
//! and at most 3 s before the latest (in a gap counted). A packet reordered
//! before the capture point is no loss (`sim-reorder.pcap`, which loses
//! nothing, showed 3 to 8 % before).
//!
//! Loss after the capture point (a packet captured but never received) is not
//! estimated: the capture cannot see it.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Gaps longer than this are silence, not loss.
const MAX_GAP_MS: u64 = 3_000;
/// Gaps needed before the tick is trusted.
const MIN_GAPS: u64 = 10;

/// An estimate of packets lost before the capture point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LossEstimate {
    pub lost: u64,
    /// Captured stamped packets plus `lost`.
    pub expected: u64,
}

impl LossEstimate {
    /// Lost packets per packet sent, as a fraction.
    pub fn fraction(&self) -> f64 {
        if self.expected == 0 {
            0.0
        } else {
            self.lost as f64 / self.expected as f64
        }
    }
}

/// Gaps below this many ms are counted one by one ([`Cadence::short`]).
const SHORT_MS: usize = 256;

/// The gaps between a sender's stamps, in ms.
///
/// A gap is sampled for almost every packet, and a sender's tick is far
/// below 256 ms (`SHORT_MS`): the gaps below it are counted in an array, one
/// increment, and the rest in a histogram. The histogram keeps 2
/// significant digits, which holds every value below 256 exactly (its
/// first bucket: 256 steps of 1 ms), so the two together answer as one
/// histogram of every gap would (a test holds them to it).
#[derive(Debug)]
pub struct Cadence {
    /// Gaps of `i` ms, for `i` below [`SHORT_MS`] (saturating: 2^32 gaps of
    /// one value are 4 years of a 30 Hz stream).
    short: [u32; SHORT_MS],
    /// How many gaps `short` counts.
    short_total: u64,
    /// The gaps of [`SHORT_MS`] and more.
    gaps_ms: Histogram<u64>,
    /// The latest gap recorded, in ms.
    last_ms: u64,
    /// The stamp of the periodic stream's latest packet (a u32 millisecond
    /// clock, wrapping), once one was seen.
    last_stamp: Option<u32>,
    /// The stamp of the stream's first packet.
    first_stamp: u32,
    /// Packets captured overtaken within the stream: holes filled.
    late: u64,
}

impl Default for Cadence {
    fn default() -> Self {
        Cadence {
            short: [0; SHORT_MS],
            short_total: 0,
            // 1 ms to 3 s, 2 significant digits: a fixed size, allocated once.
            gaps_ms: Histogram::new_with_bounds(1, MAX_GAP_MS, 2)
                .expect("static histogram bounds are valid"),
            last_ms: 0,
            last_stamp: None,
            first_stamp: 0,
            late: 0,
        }
    }
}

impl Cadence {
    /// A packet of the sender stamped `stamp` ms on its u32 millisecond clock
    /// (which wraps); `periodic` when it carries a message of the sender's
    /// periodic stream. Until the first periodic packet, nothing is sampled;
    /// from it on, the gap since the latest stamp is. A stamp before the
    /// latest (overtaken on the way, judged wrap-safe as serial numbers are)
    /// samples nothing and keeps the latest.
    pub fn stamp(&mut self, stamp: u32, periodic: bool) {
        match self.last_stamp {
            Some(last) => {
                let gap = stamp.wrapping_sub(last);
                if gap < 1 << 31 {
                    self.sample(u64::from(gap));
                    self.last_stamp = Some(stamp);
                }
            }
            None if periodic => {
                self.last_stamp = Some(stamp);
                self.first_stamp = stamp;
            }
            None => {}
        }
    }

    /// A packet of the sender stamped `stamp`, before the latest stamp
    /// (overtaken on the way): captured, it fills one of the holes counted
    /// in the gap it belongs to, if it is stamped after the stream's first
    /// packet and at most 3 s before the latest (wrap-safe).
    pub fn overtaken(&mut self, stamp: u32) {
        if let Some(last) = self.last_stamp {
            let after_first = stamp.wrapping_sub(self.first_stamp);
            let age = last.wrapping_sub(stamp);
            if (1..1 << 31).contains(&after_first) && (1..=MAX_GAP_MS as u32).contains(&age) {
                self.late += 1;
            }
        }
    }

    /// Packets counted back by [`Cadence::overtaken`].
    pub fn late(&self) -> u64 {
        self.late
    }

    /// `n` more packets counted back (a part of the capture, from the
    /// whole's [`Cadence::late`]).
    pub fn add_late(&mut self, n: u64) {
        self.late += n;
    }

    /// Whether the periodic stream has begun (a periodic packet was seen).
    pub fn started(&self) -> bool {
        self.last_stamp.is_some()
    }

    /// A packet stamped `gap_ms` after the latest stamp before it.
    pub fn sample(&mut self, gap_ms: u64) {
        if (1..=MAX_GAP_MS).contains(&gap_ms) {
            match self.short.get_mut(gap_ms as usize) {
                Some(n) => {
                    *n = n.saturating_add(1);
                    self.short_total += 1;
                }
                // In bounds: recording cannot fail.
                None => _ = self.gaps_ms.record(gap_ms),
            }
            self.last_ms = gap_ms;
        }
    }

    /// Gaps recorded so far (cheap: two counts).
    pub fn samples(&self) -> u64 {
        self.short_total + self.gaps_ms.len()
    }

    /// Every gap recorded, by value (each value the highest the histogram
    /// holds it as), in increasing order: the values with a count.
    fn recorded(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let short = (self.short.iter().enumerate())
            .filter(|(_, n)| **n != 0)
            .map(|(v, n)| (v as u64, u64::from(*n)));
        let long =
            (self.gaps_ms.iter_recorded()).map(|v| (v.value_iterated_to(), v.count_at_value()));
        short.chain(long)
    }

    /// The median gap, as hdrhistogram's `value_at_quantile(0.5)` gives it:
    /// the first value at which the count reaches half the gaps (rounded
    /// up, at least 1).
    fn median(&self) -> u64 {
        let target = ((0.5 * self.samples() as f64).ceil() as u64).max(1);
        let mut below = 0;
        self.recorded()
            .find(|(_, n)| {
                below += n;
                below >= target
            })
            .map_or(0, |(v, _)| v)
    }

    /// The latest gap recorded, in ms.
    pub fn last_ms(&self) -> u64 {
        self.last_ms
    }

    /// The sender's tick, once enough gaps are known: their median, in ms.
    pub fn tick_ms(&self) -> Option<u64> {
        (self.samples() >= MIN_GAPS).then(|| self.median().max(1))
    }

    /// The packets lost in these gaps with the tick of `tick_ms` (the whole
    /// direction's, for a part of it), and the packets expected: each gap's
    /// packet, the lost ones, and `first` for the packet before the first gap.
    pub fn estimate_with(&self, tick_ms: u64, first: bool) -> LossEstimate {
        let lost = self.lost_with(tick_ms.max(1) as f64);
        self.counted(lost, u64::from(first))
    }

    /// The estimate from the holes the gaps show, less the packets that
    /// came late into them (captured: counted as such).
    fn counted(&self, holes: u64, first: u64) -> LossEstimate {
        let lost = holes.saturating_sub(self.late);
        LossEstimate {
            lost,
            expected: self.samples() + first + self.late + lost,
        }
    }

    fn lost_with(&self, tick: f64) -> u64 {
        self.recorded()
            .map(|(value, count)| {
                let missed = (value as f64 / tick).round() - 1.0;
                if missed >= 1.0 {
                    missed as u64 * count
                } else {
                    0
                }
            })
            .sum()
    }

    /// The estimate, once the tick is known.
    pub fn estimate(&self) -> Option<LossEstimate> {
        let tick = self.tick_ms()? as f64;
        Some(self.counted(self.lost_with(tick), 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_tick_with_holes() {
        let mut c = Cadence::default();
        for _ in 0..90 {
            c.sample(66);
        }
        // Three holes: one packet, two packets, and a 10 s pause that is no loss.
        c.sample(133);
        c.sample(200);
        c.sample(10_000);
        let e = c.estimate().unwrap();
        assert_eq!(e.lost, 3);
        assert_eq!(e.expected, 92 + 1 + 3);
        assert!((e.fraction() - 3.0 / 96.0).abs() < 1e-9);
    }

    /// A packet overtaken on the way fills one of the holes its gap counted:
    /// no loss, one more packet captured. One stamped before the stream
    /// began, or more than 3 s before the latest, fills none counted.
    #[test]
    fn a_packet_overtaken_on_the_way_is_no_loss() {
        let mut c = Cadence::default();
        c.stamp(1_000, true);
        for k in 1..=12u32 {
            // 1 033 comes after 1 066: the gap 1 000 -> 1 066 counts a hole.
            match k {
                1 => {}
                2 => {
                    c.stamp(1_066, true);
                    c.overtaken(1_033);
                }
                _ => c.stamp(1_000 + 33 * k, true),
            }
        }
        c.overtaken(990); // before the stream
        c.overtaken(1_000 + 33 * 12); // not before the latest
        let e = c.estimate().unwrap();
        // 13 captured, the late one with them, none lost.
        assert_eq!((e.lost, e.expected), (0, 13));
        assert_eq!(c.late(), 1);
    }

    #[test]
    fn parts_judged_by_the_whole_tick_add_up_to_it() {
        let gaps = [66, 66, 133, 66, 66, 66, 200, 66, 66, 66, 66, 133, 66, 66];
        let (mut whole, mut a, mut b) =
            (Cadence::default(), Cadence::default(), Cadence::default());
        for (i, &g) in gaps.iter().enumerate() {
            whole.sample(g);
            if i < 5 { a.sample(g) } else { b.sample(g) }
        }
        let tick = whole.tick_ms().unwrap();
        assert_eq!(tick, 66);
        assert_eq!(b.last_ms(), 66);
        assert_eq!(whole.estimate_with(tick, true), whole.estimate().unwrap());
        let (ea, eb) = (a.estimate_with(tick, true), b.estimate_with(tick, false));
        assert_eq!((ea.lost, eb.lost), (1, 3));
        let e = whole.estimate().unwrap();
        assert_eq!(ea.lost + eb.lost, e.lost);
        assert_eq!(ea.expected + eb.expected, e.expected);
        // A part alone has too few gaps for a tick of its own.
        assert_eq!(a.tick_ms(), None);
    }

    #[test]
    fn the_stream_is_followed_from_its_first_periodic_packet() {
        // lwar's client: Connect at 100, an ack-only packet at 200 (neither
        // is periodic), then an Input every 33 ms from 233, and a Disconnect
        // without Input on the tick after the last.
        let mut c = Cadence::default();
        c.stamp(100, false);
        c.stamp(200, false);
        assert!(!c.started());
        for i in 0..30u32 {
            c.stamp(233 + 33 * i, true);
        }
        assert!(c.started());
        c.stamp(233 + 33 * 30, false);
        assert_eq!(c.samples(), 30);
        assert_eq!(
            c.estimate(),
            Some(LossEstimate {
                lost: 0,
                expected: 31
            })
        );
        // One packet lost, one captured again late (overtaken: sampled
        // nothing), across the clock's wrap.
        let mut c = Cadence::default();
        let start = u32::MAX - 33 * 12;
        for i in (0..30u32).filter(|&i| i != 14) {
            c.stamp(start.wrapping_add(33 * i), i % 3 != 1);
        }
        c.stamp(start.wrapping_add(33 * 20), true);
        assert_eq!(c.samples(), 28);
        assert_eq!(
            c.estimate(),
            Some(LossEstimate {
                lost: 1,
                expected: 30
            })
        );
    }

    /// The array of short gaps and the histogram of the others answer as
    /// one histogram of every gap: the tick, the estimate and the count.
    #[test]
    fn short_and_long_gaps_answer_as_one_histogram() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            seed >> 33
        };
        for round in 0..200 {
            let (mut c, mut h) = (
                Cadence::default(),
                Histogram::<u64>::new_with_bounds(1, MAX_GAP_MS, 2).unwrap(),
            );
            let spread = [40, 300, 3_001, 600][round % 4];
            for _ in 0..(10 + round) {
                let gap = 1 + next() % spread;
                c.sample(gap);
                if gap <= MAX_GAP_MS {
                    h.record(gap).unwrap();
                }
            }
            assert_eq!(c.samples(), h.len());
            assert_eq!(c.median(), h.value_at_quantile(0.5), "round {round}");
            let tick = h.value_at_quantile(0.5).max(1);
            assert_eq!(c.tick_ms(), Some(tick));
            let lost: u64 = h
                .iter_recorded()
                .map(|v| {
                    let missed = (v.value_iterated_to() as f64 / tick as f64).round() - 1.0;
                    if missed >= 1.0 {
                        missed as u64 * v.count_at_value()
                    } else {
                        0
                    }
                })
                .sum();
            assert_eq!(c.lost_with(tick as f64), lost, "round {round}");
        }
    }

    #[test]
    fn no_estimate_before_the_tick_is_known() {
        let mut c = Cadence::default();
        for _ in 0..9 {
            c.sample(33);
        }
        assert_eq!(c.estimate(), None);
        c.sample(33);
        assert_eq!(
            c.estimate(),
            Some(LossEstimate {
                lost: 0,
                expected: 11
            })
        );
    }
}
