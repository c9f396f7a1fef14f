//! A session's state: its two directions, generic, and the protocol's own part.

use super::ProtocolInfo;
use super::finding::{FindingKind, MAX_KINDS, MAX_RULES};
use super::seq::SeqWindow;
use super::summary::{Counts, DirectionSummary, bump};
use crate::capture::Timestamp;
use hdrhistogram::Histogram;
use std::net::SocketAddr;

/// Message types a protocol may register (counters per direction).
pub const MAX_MESSAGE_TYPES: usize = 32;
/// Malformed reasons a protocol may register.
pub const MAX_MALFORMED: usize = 16;

/// Packet hashes of the last packets of a direction, to spot network duplicates.
pub(crate) const DUP_WINDOW: usize = 64;

/// Bytes of each packet's start the duplicate window keeps, to tell whether a
/// packet the capture cut short may duplicate one of them.
const PREFIX: usize = 16;

/// The hashes of a direction's last [`DUP_WINDOW`] packets (that were not
/// duplicates themselves), with the frame of each.
#[derive(Debug, Clone)]
pub(crate) struct DupWindow {
    /// The low 32 bits of each hash: every packet is compared with all of them,
    /// and 32-bit lanes are what baseline x86-64 (SSE2) compares in bulk.
    tags: [u32; DUP_WINDOW],
    hashes: [u64; DUP_WINDOW],
    /// `u64::MAX` for a slot not used yet, or taken by a packet the capture
    /// cut short (whose hash matches nothing).
    frames: [u64; DUP_WINDOW],
    /// The first [`PREFIX`] bytes of each packet, how many it had, and its
    /// length as sent.
    prefixes: [[u8; PREFIX]; DUP_WINDOW],
    prefix_lens: [u8; DUP_WINDOW],
    sent_lens: [u32; DUP_WINDOW],
    next: usize,
    /// How many of the packets compared (`frames` not `u64::MAX`) have a hash
    /// whose top [`BUCKET_BITS`] bits are the index: a packet whose count is
    /// 0 matches none, found with one load (about 15 packets in 16 with a
    /// full window; 3 in 4 with 256 buckets) rather than the scan of every tag.
    buckets: [u8; 1 << BUCKET_BITS],
}

/// The bits of a hash that pick its place in [`DupWindow::buckets`].
const BUCKET_BITS: u32 = 10;

/// A hash's place in [`DupWindow::buckets`].
#[inline]
fn bucket(hash: u64) -> usize {
    (hash >> (64 - BUCKET_BITS)) as usize
}

impl Default for DupWindow {
    fn default() -> Self {
        DupWindow {
            tags: [0; DUP_WINDOW],
            hashes: [0; DUP_WINDOW],
            frames: [u64::MAX; DUP_WINDOW],
            prefixes: [[0; PREFIX]; DUP_WINDOW],
            prefix_lens: [0; DUP_WINDOW],
            sent_lens: [0; DUP_WINDOW],
            next: 0,
            buckets: [0; 1 << BUCKET_BITS],
        }
    }
}

impl DupWindow {
    /// The frame of a recent packet with this hash; if there is none, the packet
    /// is remembered as `frame`.
    #[inline]
    pub(crate) fn check(&mut self, hash: u64, frame: u64) -> Option<u64> {
        // Almost no packet is a duplicate: a scan of the tags without early exit
        // (a few vector compares), then the full hashes only on a tag match.
        let tag = hash as u32;
        let tag_hit = self.buckets[bucket(hash)] != 0
            && self
                .tags
                .iter()
                .fold(0u32, |hit, t| hit | u32::from(*t == tag))
                != 0;
        if tag_hit
            && let Some(i) = self
                .hashes
                .iter()
                .zip(&self.frames)
                .position(|(h, f)| *h == hash && *f != u64::MAX)
        {
            return Some(self.frames[i]);
        }
        // The place read once, known below DUP_WINDOW: no bounds check, and
        // no reload after each store.
        let i = self.next % DUP_WINDOW;
        self.leave(i);
        self.buckets[bucket(hash)] += 1;
        self.tags[i] = tag;
        self.hashes[i] = hash;
        self.frames[i] = frame;
        self.next = (i + 1) % DUP_WINDOW;
        None
    }

    /// The packet in place `i` leaves the window's buckets (when it was
    /// compared: one the capture cut short is in none).
    #[inline]
    fn leave(&mut self, i: usize) {
        if self.frames[i] != u64::MAX {
            let b = bucket(self.hashes[i]);
            self.buckets[b] = self.buckets[b].saturating_sub(1);
        }
    }

    /// Keeps the start and the length sent of the packet just checked (or
    /// skipped).
    fn keep_prefix(&mut self, payload: &[u8], sent: usize) {
        let slot = (self.next % DUP_WINDOW + DUP_WINDOW - 1) % DUP_WINDOW;
        self.sent_lens[slot] = u32::try_from(sent).unwrap_or(u32::MAX);
        // Almost every packet has the whole prefix: one fixed copy.
        if let Some(p) = payload.first_chunk::<PREFIX>() {
            self.prefixes[slot] = *p;
            self.prefix_lens[slot] = PREFIX as u8;
            return;
        }
        let n = payload.len().min(PREFIX);
        self.prefixes[slot][..n].copy_from_slice(&payload[..n]);
        self.prefix_lens[slot] = n as u8;
    }

    /// A packet that is not compared (the capture cut it short) still takes
    /// its place in the window, which matches nothing: the window spans the
    /// same packets as in a capture that kept them whole.
    pub(crate) fn skip(&mut self) {
        let i = self.next % DUP_WINDOW;
        self.leave(i);
        self.frames[i] = u64::MAX;
        self.prefix_lens[i] = 0;
        self.next = (i + 1) % DUP_WINDOW;
    }

    /// Whether a recent packet of the same length as sent starts as `kept`
    /// does (as far as both go, up to [`PREFIX`] bytes): a packet cut to `kept`
    /// may then be its duplicate.
    fn shares_prefix(&self, kept: &[u8], sent: usize) -> bool {
        let n = kept.len().min(PREFIX);
        let sent = u32::try_from(sent).unwrap_or(u32::MAX);
        (0..DUP_WINDOW).any(|i| {
            self.sent_lens[i] == sent
                && usize::from(self.prefix_lens[i]) >= n
                && self.prefixes[i][..n] == kept[..n]
        })
    }
}

/// Everything tracked about one direction of a session.
#[derive(Debug)]
pub struct DirState {
    pub packets: u64,
    pub bytes: u64,
    pub first_ts: Option<Timestamp>,
    pub last_ts: Timestamp,
    /// Messages by the protocol's message type ordinal.
    pub messages: [u64; MAX_MESSAGE_TYPES],
    pub message_bytes: [u64; MAX_MESSAGE_TYPES],
    /// Findings by kind slot.
    pub findings: [u64; MAX_KINDS],
    /// Violations by rule slot.
    pub violations: [u64; MAX_RULES],
    /// Malformed packets by the protocol's reason ordinal.
    pub malformed: [u64; MAX_MALFORMED],
    pub first_sends: u64,
    pub resends: u64,
    pub expected_repeats: u64,
    /// Repeats made by design: captured again before an ack could come back.
    pub repeats: u64,
    /// Smoothed ack delay of this direction's reliable messages (as TCP's SRTT:
    /// each sample weighs 1/8), in ns, once there is a sample.
    srtt_ns: Option<f64>,
    /// The reliable sequence, for protocols with cumulative acks.
    pub seq: SeqWindow,
    /// Highest ack this direction has sent that covers only what was captured
    /// the other way (an ack of nothing ever sent judges nothing).
    pub max_ack: Option<u32>,
    /// An open run of acks above everything captured the other way.
    ack_unseen: Option<AckIncident>,
    /// An open run of acks below `max_ack`.
    ack_regression: super::Regression,
    /// Frame of the packet that first carried `max_ack`.
    pub max_ack_frame: u64,
    /// The highest ack (not of the unseen) carried by a packet that decoded
    /// whole: an ack only in packets that do not decode proves nothing of
    /// what their receiver took from them (set by the protocol).
    pub max_ack_whole: Option<u32>,
    /// Highest sender timestamp seen, for protocols whose header has one.
    pub max_timestamp: Option<u32>,
    pub(crate) recent: DupWindow,
    /// Interarrival jitter of packets carrying unreliable messages (RFC 3550), in ms.
    pub jitter_ms: f64,
    /// The previous sample's arrival, in ms as the jitter reckons it, and
    /// its sender's stamp.
    pub jitter_prev: Option<(f64, u32)>,
    /// The sender's tick, for the estimate of packets lost before the capture.
    pub cadence: super::Cadence,
    /// The protocol's own count of packets lost before the capture point, for
    /// protocols that number their packets (`count_expected`, `count_lost`):
    /// when set, the summary's estimate instead of the cadence's.
    proto_loss: Option<super::LossEstimate>,
    /// Ack delay of this direction's reliable messages, in microseconds: made
    /// at the first sample (32 KiB), so a session that is never acked costs none.
    ack_delay_us: Option<Box<Histogram<u64>>>,
    /// The ack delays measured while the engine handles the current packet.
    packet_acks: AckTally,
    /// The same delays one by one, in ns: what a report of part of the
    /// capture takes its percentiles from. Cleared with each packet, so its
    /// capacity is reused.
    packet_samples: Vec<u64>,
    /// The latest packet's own time (`last_ts` is the highest), and the
    /// steps forward between consecutive packets added up.
    latest_ts: Option<Timestamp>,
    elapsed_ns: u64,
    /// Numbers never captured being gathered into one finding per gap
    /// ([`super::missed`]).
    pub(crate) missed: super::missed::OpenRuns,
}

/// Whether an ack captured before a repeat had reached the repeat's sender
/// ([`DirState::ack_reached_sender`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckReach {
    /// Captured at least the round trip between the tap and the sender
    /// before the repeat: the sender had it, and resent what had arrived.
    Reached,
    /// Captured `since_ack_ns` before the repeat (unknown: not followed),
    /// less than the round trip between the tap and the sender
    /// (`round_trip_ns`; none: not measured yet): the repeat may have
    /// crossed the ack in flight.
    Unconfirmed {
        since_ack_ns: Option<u64>,
        round_trip_ns: Option<u64>,
    },
    /// The repeat's packet was overtaken on the way: sent before it was
    /// captured, maybe before the ack reached the sender.
    Overtaken,
}

/// Ack delays measured on one packet: how many, their sum and the largest, in
/// ns. What an observer sees per packet to plot ack delay over time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckTally {
    pub count: u32,
    pub sum_ns: u64,
    pub max_ns: u64,
}

impl AckTally {
    fn add(&mut self, delay_ns: u64) {
        self.count += 1;
        self.sum_ns = self.sum_ns.saturating_add(delay_ns);
        self.max_ns = self.max_ns.max(delay_ns);
    }

    /// Adds another tally.
    pub fn merge(&mut self, other: AckTally) {
        self.count += other.count;
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }
}

impl Default for DirState {
    fn default() -> Self {
        DirState {
            packets: 0,
            bytes: 0,
            first_ts: None,
            last_ts: Timestamp::default(),
            messages: [0; MAX_MESSAGE_TYPES],
            message_bytes: [0; MAX_MESSAGE_TYPES],
            findings: [0; MAX_KINDS],
            violations: [0; MAX_RULES],
            malformed: [0; MAX_MALFORMED],
            first_sends: 0,
            resends: 0,
            expected_repeats: 0,
            repeats: 0,
            srtt_ns: None,
            seq: SeqWindow::default(),
            max_ack: None,
            ack_unseen: None,
            ack_regression: super::Regression::default(),
            max_ack_frame: 0,
            max_ack_whole: None,
            max_timestamp: None,
            recent: DupWindow::default(),
            jitter_ms: 0.0,
            jitter_prev: None,
            cadence: super::Cadence::default(),
            proto_loss: None,
            ack_delay_us: None,
            packet_acks: AckTally::default(),
            packet_samples: Vec::new(),
            latest_ts: None,
            elapsed_ns: 0,
            missed: [None; 3],
        }
    }
}

fn counts<'n>(values: &[u64], names: impl IntoIterator<Item = (usize, &'n str)>) -> Counts {
    let mut out = Counts::new();
    for (slot, name) in names {
        bump(&mut out, name, values[slot]);
    }
    out
}

impl DirState {
    /// Seconds from the first to the last packet: the steps forward between
    /// consecutive packets added up, so that a capture clock set back in
    /// between (`time-backwards`) neither shortens nor lengthens it by the
    /// step.
    pub fn duration_secs(&self) -> f64 {
        self.elapsed_ns as f64 / 1e9
    }

    /// Counts one captured packet of `len` bytes.
    pub fn count_packet(&mut self, ts: Timestamp, len: usize) {
        self.packets += 1;
        self.bytes += len as u64;
        self.first_ts.get_or_insert(ts);
        self.last_ts = self.last_ts.max(ts);
        if let Some(latest) = self.latest_ts {
            // Saturating: a clock jumping by years back and forth (a hostile
            // capture) adds more than u64 nanoseconds hold.
            self.elapsed_ns = self.elapsed_ns.saturating_add(ts.since(latest));
        }
        self.latest_ts = Some(ts);
    }

    /// Interarrival jitter (RFC 3550) of a packet that arrived at `arrival` and
    /// was stamped `sent_ms` by its sender's clock, in ms.
    pub fn jitter_sample(&mut self, arrival: Timestamp, sent_ms: u32) {
        let arrival_ms = arrival.nanos() as f64 / 1e6;
        if let Some((prev_arrival, prev_stamp)) = self.jitter_prev {
            // The stamps' difference wrap-safe: a u32 millisecond clock wraps.
            let sent_delta = f64::from(sent_ms.wrapping_sub(prev_stamp) as i32);
            let delta = (arrival_ms - prev_arrival) - sent_delta;
            self.jitter_ms += (delta.abs() - self.jitter_ms) / 16.0;
        }
        self.jitter_prev = Some((arrival_ms, sent_ms));
    }

    /// A cumulative ack this direction sent, acknowledging `other`'s reliable
    /// messages up to `ack`. Acks above every seqno captured the other way form
    /// one incident, reported once when it ends ([`DirState::close_ack_incident`]),
    /// with the number of packets it spans; they judge nothing else (not
    /// regressions, not resends), except that a missing seqno of the other
    /// way at or below them was delivered: `not-captured`, never `lost`
    /// ([`SeqWindow::unseen_ack`]). While the other way has shown no reliable
    /// message, acks are not judged (they may cover messages sent before the
    /// capture). An ack above them that may cover messages in the tail of a
    /// packet the capture cut short ([`SeqWindow::cut_may_cover`]) is no ack
    /// of the unseen: it is taken as any other. Otherwise: acks below the
    /// highest ack form one `ack-regression` incident, reported once when an
    /// ack at or above the highest ends it ([`DirState::close_ack_regression`]),
    /// at its first packet, with the packets it spans (the highest stays: one
    /// bogus high ack is one finding, not one per packet after it); and the ack
    /// delay of each message an ack above the highest newly covers.
    ///
    /// `overtaken`: the protocol knows the packet was sent before one captured
    /// earlier in this direction (its own numbering or clock says so, and it
    /// raised `reordered`): an ack below the highest is then as old as the
    /// packet, not the sender going back, and is not judged (a cumulative ack
    /// only ever grows in the order of sending).
    #[inline]
    pub fn cumulative_ack(
        &mut self,
        other: &mut DirState,
        raise: &mut super::Raise<'_>,
        ack: u32,
        ts: Timestamp,
        frame: u64,
        overtaken: bool,
    ) {
        // Most packets repeat the highest ack, with no incident open and
        // nothing of the unseen: they change nothing (the rules below agree),
        // found inline.
        if self.max_ack == Some(ack)
            && self.ack_unseen.is_none()
            && !self.ack_regression.is_open()
            && other.seq.highest().is_none_or(|highest| ack <= highest)
        {
            return;
        }
        self.new_ack(other, raise, ack, ts, frame, overtaken);
    }

    /// [`DirState::cumulative_ack`] of an ack that may change something.
    #[inline(never)]
    fn new_ack(
        &mut self,
        other: &mut DirState,
        raise: &mut super::Raise<'_>,
        ack: u32,
        ts: Timestamp,
        frame: u64,
        overtaken: bool,
    ) {
        if let Some(highest) = other.seq.highest()
            && ack > highest
            && !other.seq.cut_may_cover(ack)
        {
            other.seq.unseen_ack(ack);
            match &mut self.ack_unseen {
                Some(incident) => {
                    incident.packets += 1;
                    incident.ack = incident.ack.max(ack);
                }
                None => {
                    self.ack_unseen = Some(AckIncident {
                        frame,
                        ts,
                        ack,
                        highest,
                        packets: 1,
                    });
                }
            }
            return;
        }
        self.close_ack_incident(raise);
        let previous = self.max_ack;
        if let Some(previous) = previous
            && ack < previous
        {
            if !overtaken {
                self.ack_regression.below(ack, previous, frame, ts);
            }
            return;
        }
        self.close_ack_regression(raise);
        if previous.is_none_or(|p| ack > p) {
            let (histogram, srtt, tally, samples) = (
                &mut other.ack_delay_us,
                &mut other.srtt_ns,
                &mut other.packet_acks,
                &mut other.packet_samples,
            );
            other.seq.ack(previous.unwrap_or(0), ack, ts, |first| {
                // An ack captured before what it acks (the capture's clock
                // stepped back) measures nothing.
                if ts < first {
                    return;
                }
                let delay = ts.since(first);
                tally.add(delay);
                samples.push(delay);
                record_delay(histogram, srtt, delay);
            });
            self.max_ack = Some(ack);
            self.max_ack_frame = frame;
        }
    }

    /// One ack delay (or round trip) of this direction's packets, in ns: into
    /// the histogram of its percentiles and the smoothed delay (TCP's SRTT,
    /// each sample weighing 1/8). Allocates nothing.
    /// The ack delay of a packet captured at `sent` and acked by one
    /// captured at `acked`: none when the ack was captured first (the
    /// capture's clock stepped back in between: `time-backwards`).
    pub fn ack_delay_between(&mut self, sent: Timestamp, acked: Timestamp) {
        if acked >= sent {
            self.ack_delay_sample(acked.since(sent));
        }
    }

    pub fn ack_delay_sample(&mut self, delay_ns: u64) {
        self.packet_acks.add(delay_ns);
        self.packet_samples.push(delay_ns);
        record_delay(&mut self.ack_delay_us, &mut self.srtt_ns, delay_ns);
    }

    /// One ack delay into the percentiles and the smoothed delay only, not
    /// the packet's tally: what a window of the capture counts.
    pub(crate) fn add_ack_delay(&mut self, delay_ns: u64) {
        record_delay(&mut self.ack_delay_us, &mut self.srtt_ns, delay_ns);
    }

    /// The ack delays measured since the last call: the engine takes them after
    /// each packet, for [`PacketEvent::acks`](super::PacketEvent), and appends
    /// each delay to `samples` ([`PacketEvent::ack_samples`](super::PacketEvent)).
    pub fn take_packet_acks(&mut self, samples: &mut Vec<u64>) -> AckTally {
        // Most packets measure no delay of this direction (a tally counts
        // every sample it adds): nothing to move.
        if self.packet_acks.count == 0 && self.packet_samples.is_empty() {
            return AckTally::default();
        }
        // Almost always one delay: pushed, not copied by a call to memcpy.
        match self.packet_samples[..] {
            [one] => samples.push(one),
            ref all => samples.extend_from_slice(all),
        }
        self.packet_samples.clear();
        std::mem::take(&mut self.packet_acks)
    }

    /// The ack delay at `quantile` (0.5 for the median), in ms; `None` before a
    /// sample.
    pub fn ack_delay_ms(&self, quantile: f64) -> Option<f64> {
        let h = self.histogram()?;
        Some(h.value_at_quantile(quantile) as f64 / 1e3)
    }

    /// The ack delay at `quantile`, in µs as the histogram holds it; `None`
    /// before a sample.
    pub fn ack_delay_us(&self, quantile: f64) -> Option<u64> {
        Some(self.histogram()?.value_at_quantile(quantile))
    }

    /// The ack delay histogram, once it has a sample.
    fn histogram(&self) -> Option<&Histogram<u64>> {
        self.ack_delay_us.as_deref().filter(|h| !h.is_empty())
    }

    /// The smallest ack delay, in ms; `None` before a sample.
    pub fn ack_delay_min_ms(&self) -> Option<f64> {
        self.histogram().map(|h| h.min() as f64 / 1e3)
    }

    /// The largest ack delay, in ms; `None` before a sample.
    pub fn ack_delay_max_ms(&self) -> Option<f64> {
        self.histogram().map(|h| h.max() as f64 / 1e3)
    }

    /// How many ack delays were measured.
    pub fn ack_delay_samples(&self) -> u64 {
        self.ack_delay_us.as_ref().map_or(0, |h| h.len())
    }

    /// The smoothed ack delay, in ns, once there is a sample.
    pub fn srtt_ns(&self) -> Option<f64> {
        self.srtt_ns
    }

    /// A message of this direction numbered `seqno`, captured again at `now`
    /// after the other direction acked it: whether the capture proves that
    /// the ack had reached this direction's sender before it sent the
    /// repeat.
    ///
    /// The tap need not sit beside the sender. The ack, captured at `A`,
    /// reaches the sender `d1` later; the repeat, sent at `t`, is captured
    /// `d2` after it. The sender had the ack only if `t >= A + d1`, that is
    /// if the repeat is captured at least `d1 + d2` after the ack: the round
    /// trip between the tap and the sender. The capture measures it as the
    /// other direction's smoothed ack delay (from the capture of a message
    /// of the other side to the capture of this sender's ack of it: tap to
    /// sender, the sender's wait before it acks, sender to tap), which is no
    /// shorter than that round trip. A repeat captured less than that after
    /// the ack, or before any such delay is measured, crossed the ack in
    /// flight as far as the capture can tell. So did a repeat in a packet
    /// that was `overtaken` on the way (stamped before a packet of its
    /// direction captured earlier): it was sent before it was captured, by
    /// how much the capture cannot tell.
    pub fn ack_reached_sender(
        &self,
        other: &DirState,
        seqno: u32,
        now: Timestamp,
        overtaken: bool,
    ) -> AckReach {
        other.ack_reached(self.seq.acked_at(seqno), now, overtaken)
    }

    /// The rule of [`DirState::ack_reached_sender`] for a protocol that
    /// follows its acks itself: `self` is the direction whose messages the
    /// repeat's sender acks (its smoothed ack delay is the round trip
    /// between the tap and that sender), `acked_at` when the first ack of the
    /// repeated message was captured (`None`: not followed), `now` the
    /// repeat's capture, `overtaken` its packet was overtaken on the way.
    /// Shared by every protocol that judges spurious repeats (lwar's
    /// `spurious-resend`, Starstrike's `spurious-retransmission`).
    pub fn ack_reached(
        &self,
        acked_at: Option<Timestamp>,
        now: Timestamp,
        overtaken: bool,
    ) -> AckReach {
        if overtaken {
            return AckReach::Overtaken;
        }
        let round_trip_ns = self.srtt_ns.map(|r| r as u64);
        let Some(acked_at) = acked_at else {
            return AckReach::Unconfirmed {
                since_ack_ns: None,
                round_trip_ns,
            };
        };
        let since = now.since(acked_at);
        match self.srtt_ns {
            Some(rtt) if since as f64 >= rtt => AckReach::Reached,
            _ => AckReach::Unconfirmed {
                since_ack_ns: Some(since),
                round_trip_ns,
            },
        }
    }

    /// Ends an open run of acks of the unseen: one `ack-unseen`, at the frame
    /// where it began, with the packets it spanned.
    pub fn close_ack_incident(&mut self, raise: &mut super::Raise<'_>) {
        if let Some(i) = self.ack_unseen.take() {
            let detail = super::Detail::AckUnseen {
                ack: i.ack,
                highest: i.highest,
                packets: i.packets,
            };
            raise.raise_at(self, super::FindingKind::ACK_UNSEEN, i.frame, i.ts, detail);
        }
    }

    /// Ends an open run of acks below the highest: one `ack-regression`, at
    /// the frame where it began, with the highest ack and its frame, and the
    /// packets it spanned.
    pub fn close_ack_regression(&mut self, raise: &mut super::Raise<'_>) {
        if let Some(run) = self.ack_regression.end() {
            let detail = super::Detail::AckRegression {
                ack: run.value,
                previous: run.highest,
                previous_frame: self.max_ack_frame,
                packets: run.packets,
                last_frame: run.last_frame,
            };
            let kind = super::FindingKind::ACK_REGRESSION;
            raise.raise_at(self, kind, run.frame, run.ts, detail);
        }
    }

    /// Whether `hash` is a recent packet's: the frame of that packet; otherwise the
    /// packet is remembered as `frame`.
    #[inline]
    pub fn duplicate_of(&mut self, hash: u64, frame: u64) -> Option<u64> {
        self.recent.check(hash, frame)
    }

    /// Whether the datagram has the same bytes as a recent one of this
    /// direction (a network duplicate): the frame of that one. A datagram the
    /// capture cut short is never judged: its bytes are only a prefix, and two
    /// different packets may share it.
    pub fn duplicate_datagram(&mut self, d: &crate::capture::Datagram<'_>) -> Option<u64> {
        if d.truncated_by_capture() {
            self.recent.skip();
            self.recent.keep_prefix(d.payload, d.payload_len);
            return None;
        }
        let dup = self.duplicate_of(d.digest(), d.frame);
        if dup.is_none() {
            self.recent.keep_prefix(d.payload, d.payload_len);
        }
        dup
    }

    /// For a datagram the capture cut short, before
    /// [`DirState::duplicate_datagram`]: whether it may be the network duplicate
    /// of a recent packet of this direction (one of them was sent as long and
    /// starts with the bytes it kept, as far as the window keeps them). Its
    /// bytes cannot say more.
    pub fn may_duplicate(&self, d: &crate::capture::Datagram<'_>) -> bool {
        d.truncated_by_capture() && self.recent.shares_prefix(d.payload, d.payload_len)
    }

    /// Resends per reliable message captured, as a fraction.
    pub fn resend_rate(&self) -> f64 {
        super::summary::resend_rate(self.first_sends, self.repeats, self.resends)
    }

    /// Reliable messages captured that the other side never acked.
    pub fn unacked(&self) -> usize {
        self.seq.unacked()
    }

    /// `n` more packets the sender's numbering says were sent: from then on
    /// the protocol's count is this direction's loss estimate.
    pub fn count_expected(&mut self, n: u64) {
        let e = self.proto_loss.get_or_insert_with(Default::default);
        e.expected += n;
    }

    /// `n` of the expected packets lost before the capture point.
    pub fn count_lost(&mut self, n: u64) {
        let e = self.proto_loss.get_or_insert_with(Default::default);
        e.lost += n;
    }

    /// The protocol's own count of packets lost, when it keeps one.
    pub fn proto_loss(&self) -> Option<super::LossEstimate> {
        self.proto_loss
    }

    /// The loss estimate: the protocol's count when it keeps one, the
    /// sender's cadence (`engine::loss`) otherwise.
    pub fn loss(&self) -> Option<super::LossEstimate> {
        self.proto_loss.or_else(|| self.cadence.estimate())
    }

    pub fn finding_count(&self, kind: FindingKind) -> u64 {
        self.findings[kind.ordinal()]
    }

    /// The counts by name, with the names `proto` registers.
    /// The bytes of its messages by type, with the names `proto` registers.
    pub fn message_byte_counts(&self, proto: &ProtocolInfo) -> Counts {
        counts(
            &self.message_bytes,
            proto.message_types.iter().copied().enumerate(),
        )
    }

    pub fn summary(&self, proto: &ProtocolInfo) -> DirectionSummary {
        let kinds = FindingKind::SHARED.iter().chain(proto.kinds);
        DirectionSummary {
            packets: self.packets,
            bytes: self.bytes,
            messages: counts(
                &self.messages,
                proto.message_types.iter().copied().enumerate(),
            ),
            findings: counts(&self.findings, kinds.map(|k| (k.ordinal(), k.name()))),
            violations: counts(
                &self.violations,
                proto.rules.iter().map(|r| (r.ordinal(), r.name())),
            ),
            malformed: counts(&self.malformed, proto.malformed.iter().copied().enumerate()),
            first_sends: self.first_sends,
            loss: self.loss(),
            repeats: self.repeats,
            resends: self.resends,
        }
    }
}

/// One ack delay into a direction's histogram (µs) and smoothed delay (ns).
fn record_delay(
    histogram: &mut Option<Box<Histogram<u64>>>,
    srtt_ns: &mut Option<f64>,
    delay_ns: u64,
) {
    // Up to an hour, 2 significant digits: a fixed size, made once.
    if histogram.is_none()
        && let Ok(h) = Histogram::new_with_bounds(1, 3_600_000_000, 2)
    {
        *histogram = Some(Box::new(h));
    }
    // Out-of-range values only come from absurd clocks; they are dropped.
    if let Some(h) = histogram {
        let _ = h.record(delay_ns / 1_000);
    }
    let sample = delay_ns as f64;
    *srtt_ns = Some(srtt_ns.map_or(sample, |s| s + (sample - s) / 8.0));
}

/// A run of acks above everything captured the other way.
#[derive(Debug, Clone, Copy)]
struct AckIncident {
    /// Where it began.
    frame: u64,
    ts: Timestamp,
    /// The highest ack of the run, and the highest seqno captured the other way
    /// when it began.
    ack: u32,
    highest: u32,
    packets: u32,
}

/// A player as a session's messages tell of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// The id as the protocol writes it (`0:1`).
    pub id: String,
    /// The latest name, lossily decoded if it was not UTF-8.
    pub name: String,
    pub renames: u32,
    pub chats: u64,
}

/// The protocol's own part of a session: its lifecycle and whatever its rules
/// follow.
pub trait ProtoSession: Default + std::fmt::Debug + Send + 'static {
    /// The lifecycle state's name: `playing`, `closed`, `timed-out`...
    fn state(&self) -> &'static str;
    /// Over: silence after it is expected, and it does not time out.
    fn is_final(&self) -> bool;
    /// A peer fell silent for longer than the protocol's timeout.
    fn time_out(&mut self);
    /// The client's own player, where the protocol has one.
    fn player(&self) -> Option<Player> {
        None
    }
    /// What the protocol tells of the session beyond the engine's counts, as
    /// (key, text) pairs for the report's session notes and JSON (a byte order
    /// decided per session, who closed it and why, round trips). Called when
    /// a report is made, never per packet. Nothing by default.
    fn notes(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// One client-server session: generic state the engine keeps, and the
/// protocol's own part.
#[derive(Debug)]
pub struct Session<S> {
    pub id: super::finding::SessionId,
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// How its flow was taken for its protocol.
    pub recognised_by: super::RecognisedBy,
    /// The analyzer's session key within the address pair (0 when the pair
    /// is the session: [`super::Analyzer::session_key`]).
    pub key: u64,
    pub c2s: DirState,
    pub s2c: DirState,
    pub proto: S,
    /// The latest packet either way: its time and frame.
    pub(crate) latest: Option<(Timestamp, u64)>,
    /// The steps forward between consecutive packets either way, added up.
    pub(crate) elapsed_ns: u64,
}

impl<S: ProtoSession> Session<S> {
    pub(crate) fn new(
        id: super::finding::SessionId,
        client: SocketAddr,
        server: SocketAddr,
    ) -> Self {
        Session {
            id,
            client,
            server,
            recognised_by: super::RecognisedBy::Probe,
            key: 0,
            c2s: DirState::default(),
            s2c: DirState::default(),
            proto: S::default(),
            latest: None,
            elapsed_ns: 0,
        }
    }
}

impl<S> Session<S> {
    /// The capture time of the last packet either way.
    pub fn last_seen(&self) -> Timestamp {
        self.c2s.last_ts.max(self.s2c.last_ts)
    }

    /// One direction.
    pub fn dir(&self, direction: super::Direction) -> &DirState {
        match direction {
            super::Direction::ClientToServer => &self.c2s,
            super::Direction::ServerToClient => &self.s2c,
        }
    }

    /// One direction, mutable.
    pub fn dir_mut(&mut self, direction: super::Direction) -> &mut DirState {
        match direction {
            super::Direction::ClientToServer => &mut self.c2s,
            super::Direction::ServerToClient => &mut self.s2c,
        }
    }

    /// This direction and the other one, both mutable.
    pub fn split(&mut self, direction: super::Direction) -> (&mut DirState, &mut DirState) {
        match direction {
            super::Direction::ClientToServer => (&mut self.c2s, &mut self.s2c),
            super::Direction::ServerToClient => (&mut self.s2c, &mut self.c2s),
        }
    }

    /// Seconds from the first to the last packet either way: the steps
    /// forward between consecutive packets added up (a step back of the
    /// capture's clock, `time-backwards`, counts as none).
    pub fn duration_secs(&self) -> f64 {
        self.elapsed_ns as f64 / 1e9
    }

    /// Follows the session's clock with a packet of `frame` captured at
    /// `ts`: the step back from the previous packet (its frame and the
    /// step, in ns) when `ts` is before it.
    pub(crate) fn clock(&mut self, ts: Timestamp, frame: u64) -> Option<(u64, u64)> {
        let back = match self.latest {
            Some((latest, latest_frame)) if ts < latest => Some((latest_frame, latest.since(ts))),
            Some((latest, _)) => {
                self.elapsed_ns = self.elapsed_ns.saturating_add(ts.since(latest));
                None
            }
            None => None,
        };
        self.latest = Some((ts, frame));
        back
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Datagram;

    fn dgram(payload: &[u8], len: usize, frame: u64) -> Datagram<'_> {
        Datagram::new(
            frame,
            Timestamp::from_millis(frame),
            "10.0.0.1:1".parse().unwrap(),
            "10.0.0.2:2".parse().unwrap(),
            payload,
        )
        .with_payload_len(len)
    }

    #[test]
    fn the_jitter_takes_the_stamps_difference_across_the_clock_wrap() {
        // Sent and received 33 ms apart each time, the sender's u32 ms clock
        // wrapping between: no jitter.
        let mut d = DirState::default();
        for (i, stamp) in [u32::MAX - 32, 0, 33, 66].into_iter().enumerate() {
            d.jitter_sample(Timestamp::from_millis(1000 + 33 * i as u64), stamp);
        }
        assert!(d.jitter_ms.abs() < 1e-6, "jitter {} ms", d.jitter_ms);
        // One packet late by 16 ms: the jitter moves by a sixteenth of it.
        d.jitter_sample(Timestamp::from_millis(1000 + 33 * 4 + 16), 99);
        assert!(
            (d.jitter_ms - 1.0).abs() < 1e-6,
            "jitter {} ms",
            d.jitter_ms
        );
    }

    #[test]
    fn the_window_finds_the_last_64_packets_only() {
        // Hashes that share their top byte (one bucket) and hashes that do
        // not, packets cut short in between: what leaves the window leaves
        // its bucket too.
        let mut w = DupWindow::default();
        let hash = |i: u64| (i % 3) << 56 | i;
        for i in 0..200u64 {
            if i % 10 == 9 {
                w.skip();
                continue;
            }
            assert_eq!(w.check(hash(i), i), None, "packet {i}");
        }
        // The window spans places 136 to 199; 139, 149, ... were skipped.
        assert_eq!(w.check(hash(150), 1000), Some(150));
        assert_eq!(w.check(hash(136), 1001), Some(136));
        assert_eq!(w.check(hash(135), 1002), None);
        assert_eq!(w.check(hash(139), 1003), None);
        assert!(w.buckets.iter().map(|&n| usize::from(n)).sum::<usize>() <= DUP_WINDOW);
    }

    #[test]
    fn the_same_bytes_again_are_a_duplicate_but_a_cut_prefix_is_not_judged() {
        let mut d = DirState::default();
        assert_eq!(d.duplicate_datagram(&dgram(b"abcdef", 6, 1)), None);
        assert_eq!(d.duplicate_datagram(&dgram(b"abcdef", 6, 2)), Some(1));
        // Two packets cut by the snaplen to the same prefix: different packets
        // as far as anyone can tell.
        assert_eq!(d.duplicate_datagram(&dgram(b"abc", 6, 3)), None);
        assert_eq!(d.duplicate_datagram(&dgram(b"abc", 9, 4)), None);
        // Even sent as long, and with a whole packet of those bytes before.
        assert_eq!(d.duplicate_datagram(&dgram(b"abc", 3, 5)), None);
        assert_eq!(d.duplicate_datagram(&dgram(b"abc", 6, 6)), None);
        assert_eq!(d.duplicate_datagram(&dgram(b"abc", 6, 7)), None);
    }
}
