//! Starstrike's analysis: what a session is, and the rules applied to each
//! packet, on the engine's generic session table.
//!
//! # The contract
//!
//! These definitions are what the analyzer implements and what the tests (and
//! the simulator's ground truth) state. "Side" is client or server; "direction"
//! the packets one side sends (`c2s`, `s2c`). Sequence numbers are 16 bits and
//! compared with serial-number arithmetic (RFC 1982): `a` is newer than `b` when
//! `(a - b) mod 65536` is in `1..32768`. Wrapping from 65535 to 0 is the next
//! number, and never raises anything. Unless stated otherwise, a finding is
//! raised at the packet that shows it, in the direction of that packet.
//!
//! **Sessions.** A session is a (client address, server address) pair. The
//! server is the sender of a server-only type (ConnectionAccept, ConnectionReject,
//! WorldSnapshot, EntitySpawn, EntityDestroy, PlayerScored, PlayerDied,
//! MatchState) or the receiver of a client-only one (ConnectionRequest,
//! PlayerInput); failing both, the side on port 7777; failing that, the
//! destination of the first packet. A ConnectionRequest from the client after
//! the session ended (disconnected, timed out, or rejected, unless it is a copy
//! of the rejected Request) starts a new session on the same ports.
//!
//! **Per packet**, in this order:
//! 1. `duplicate-packet`: the same bytes as one of the last 64 packets of the
//!    direction (a network duplicate: the same sequence number too). It raises
//!    nothing else and is not analysed further.
//! 2. A payload whose header does not decode (shorter than 12 bytes, another
//!    magic, an unknown `packetType`) raises one `malformed` (or `truncated`
//!    when the capture cut it short and the header is incomplete), with the
//!    offset of the bad bytes in its detail. Such a datagram reaches the
//!    analyzer by its flow: a datagram without the magic, on the address pair
//!    of a session, is that session's (the engine's `Recognition`). Its
//!    sequence number still counts (rule 4, so it may raise `reordered`) when
//!    its first 8 bytes are there and the number is within 32 of the
//!    direction's highest (a number further off is not trusted from a damaged
//!    header), or wherever it is when only the `packetType` is unknown (the
//!    magic intact: the header is the sender's): the packet was captured,
//!    malformed, not lost. Nothing else is read from it (no acknowledgements,
//!    no type).
//! 3. `oversize`: a packet over 1200 bytes as sent (`payload_len`, whatever the
//!    capture kept); it is decoded all the same.
//! 4. Sequence numbers of the direction. The first packet sets the baseline.
//!    A number newer than the highest seen becomes the highest; the numbers it
//!    skips are *missing* (at most the 255 below it are followed). A number not
//!    newer than the highest raises `reordered` (the packet was overtaken), and
//!    fills its number if it was missing. Every missing number still missing at
//!    the end of the session (or when 256 newer numbers push it out) raises one
//!    `not-captured` if the peer acknowledged it (it was delivered: the capture
//!    missed it); one `lost` if a peer packet captured after it went missing
//!    showed it had not arrived (rule 5: its window reached it without
//!    acknowledging it, and acknowledged a newer number of its direction, or
//!    was captured at least the round trip after the packet that skipped it)
//!    and none acknowledged it (never captured, never acknowledged); and
//!    otherwise, when no window of the peer reached it after it could have
//!    arrived (the literal windows drift apart, or the only ones that reached
//!    it were sent while it was in flight: a tap far from the peer captures
//!    them before the number arrives), one `not-captured` with the detail
//!    "unconfirmed: no ack window reached it after it could have arrived":
//!    the capture cannot tell loss from a miss there. Each at the
//!    frame of the packet that skipped it; the numbers of one gap judged
//!    alike make one finding, how many and the last in its detail
//!    (`engine::missed`: random numbers give about one finding a packet, not
//!    one per number), and the counts count numbers.
//!    The direction's loss estimate (the sessions table's `loss`, the JSON
//!    summary's `loss`) follows from it: `expected` counts the numbers from
//!    the first captured to the highest (serial arithmetic, so a wrap counts
//!    on), `lost` the `lost` numbers as they are judged (unconfirmed ones are
//!    not: they stay in `expected` only, as delivered), plus numbers skipped
//!    more than 255 below a new highest (never captured, their acks not
//!    followed).
//! 5. Acknowledgements, literally as the draft says: bit N of `ackBits` set
//!    acknowledges the peer's packet `(seq - N - 1) mod 65536`, `seq` being the
//!    sender's own number in the same header. A bit for a peer packet newer than
//!    every one captured from the peer is *of the unseen*; consecutive packets of
//!    a direction with such bits make one incident, which raises one
//!    `ack-unseen` when it ends (at the first packet without, or at the end),
//!    at the frame where it began, with the newest unseen number acknowledged,
//!    the peer's highest captured, and the packets in the run. Bits for packets
//!    before the peer's first captured one, or more than 255 below its highest,
//!    judge nothing. `ack-unseen` is a note: the capture missed a packet the
//!    peer delivered, or the acker acknowledged a number never sent; it cannot
//!    tell which. The first bit that acknowledges a captured packet gives an
//!    ack delay sample (capture of the packet to capture of the acknowledging
//!    packet) to the packet's direction: its histogram and smoothed ack delay.
//!    A peer number the window reaches and leaves unacknowledged is *shown
//!    not arrived* when the packet was sent after it could have arrived: the
//!    window acknowledges a newer number of the peer (a packet sent after
//!    it had arrived), or the packet was captured at least the round trip
//!    between the tap and its sender (the peer direction's smoothed ack
//!    delay, before this packet's samples) after the number could last have
//!    passed the tap (a captured packet's capture; for a missing number, the
//!    capture of the packet that skipped it). A window acknowledging nothing
//!    newer, captured sooner, may have been sent while the number was in
//!    flight, and shows nothing.
//! 6. `ack-drift`: after a packet of side A numbered `a`, with the peer B's
//!    newest captured number `b`: the window of A's packets reaches B's packets
//!    only while `-32 <= a - b <= 32` (serial distance; exactly half the space
//!    apart is out of reach). Outside it, B's packets fall outside every window
//!    A sends and can never be acknowledged. An incident opens at the first
//!    packet out of reach, raising one `ack-drift` (with `a`, `b` and the
//!    distance) in A's direction; it stays open, for both sides, until a packet
//!    is back in reach. One finding per incident, not per packet.
//! 7. A payload that does not decode past its header (shorter than its type
//!    needs, trailing bytes, a WorldSnapshot not `5 + 47 * entityCount` long)
//!    raises one `malformed`, or `truncated` when the capture cut the packet
//!    short and the payload is short: the sender is not at fault. Its sequence
//!    number and acknowledgements still count (rules 4 to 6); nothing below
//!    applies.
//! 8. Violations of a packet that decodes (`violation` with a rule):
//!    `invalid-enum`, `non-finite-float`, `input-range` (moveX, moveY outside
//!    [-1, 1]), `string-padding`; and `wrong-direction` for a type from the side
//!    that may not send it. These and `oversize` are incidents per (rule, packet
//!    type, field) and direction: one finding at the first packet that breaks
//!    it, none while the following packets of that type in that direction break
//!    it too; a packet of that type that does not break it ends the incident.
//!    Entities of one snapshot breaking the same field make one finding.
//!
//! **Reliable packets** (0x0001 to 0x0005, 0x0102, 0x0103, 0x0200 to 0x0202,
//! 0x0300) are followed as *messages*: a packet of the same type with the same
//! payload bytes as an earlier one of its direction, whose latest copy was sent
//! less than 10 s before, is a copy of the same message (the draft's
//! retransmission: a new packet, a new number, the same type and payload). A
//! message is acknowledged when a bit acknowledges any of its copies. For a
//! copy, the first rule that applies wins:
//! 1. A copy already acknowledged by a packet captured before this one:
//!    `repeat`, "unconfirmed: its sender had not received the acknowledging
//!    packet", when the copy's own `ackBits` reach the first acknowledging
//!    packet's number and leave it out (the acknowledgement was lost after
//!    the tap, as on a dead uplink: the copy is no fault of its sender);
//!    else `spurious-retransmission` (the detail names the acknowledging frame)
//!    when the first such acknowledgement was captured at least the round
//!    trip between the tap and this copy's sender before it (the peer
//!    direction's smoothed ack delay: the packets this sender acknowledges,
//!    from their capture to the capture of its acknowledgement, tap to
//!    sender and back; `engine::DirState::ack_reached`): the acknowledgement
//!    had reached the sender, which sent again what had arrived. Otherwise,
//!    while that delay is not measured, or when the copy's packet was
//!    overtaken on the way (its number not newer than the direction's
//!    highest, rule 4: sent before it was captured), `repeat`, "unconfirmed:
//!    the ack may not have reached the sender" (a tap far from the sender
//!    captures the acknowledgement long before the sender gets it), with the
//!    acknowledged copy's number, and the time since the acknowledgement
//!    against the round trip.
//! 2. `retransmit-limit`: the 6th retransmission (7th send) or later: raised
//!    once per message, at the 6th; later copies raise nothing.
//! 3. `retransmission`: otherwise, with the try count (1 for the first
//!    retransmission), the delay since the first copy, the delay since the
//!    previous copy, and whether that respected the 500 ms timeout.
//!
//! Copies count as resends (an unconfirmed `repeat` too: the sender did send
//! the message again, on its timeout), first copies as first sends. At the end of the
//! session, every message none of whose copies was acknowledged, if the peer
//! sent a packet more than 500 ms after its last copy (it had every chance
//! to acknowledge it), raises one finding at the frame of its first copy
//! (otherwise nothing is judged): `never-acked` when the capture shows every
//! copy unacknowledged, `no-ack-captured` (a note, "unconfirmed", with the
//! copies not shown) when it does not: a packet of the peer the tap missed
//! may have acknowledged one. A copy is shown unacknowledged when a window of
//! the peer showed it not arrived (rule 5), when the last window that can
//! reach it (the peer's number 32 past it) left it out, whenever that was
//! sent, or when the peer's highest number captured before the copy was
//! already that far past it: no later packet of the peer can acknowledge
//! it. The last 256 messages per direction are
//! followed ([`RELIABLE_LOG`]: 4 s of the draft's fastest rate, more than the
//! 2.5 s a message's copies span); one pushed out earlier is judged then, the
//! same way. A message pushed out while still being sent (its latest copy
//! less than 1 s, two retransmission timeouts, before the packet that pushes
//! it out) is *forgotten*: a later copy would count as a first send. The
//! forgotten messages of a direction raise one `reliable-forgotten` note at
//! the end of the session, at the frame where the first was forgotten, with
//! their count: the retransmissions are never undercounted silently.
//!
//! **Handshake and lifecycle.** A session whose first packet is the client's
//! ConnectionRequest starts `connecting`; one captured mid-way starts
//! `connected`, and the handshake rules below do not apply to it.
//! - ConnectionAccept: `connecting` -> `connected`. ConnectionReject:
//!   `connecting` -> `rejected`, raising `connection-rejected` with the reason (first copy
//!   only). An answer contradicting an earlier one (Accept after Reject or the
//!   reverse), or a ConnectionRequest with another payload after the answer,
//!   raises `handshake-order` (first copies only).
//! - `before-accept`: a game packet (0x0100 and up) before ConnectionAccept in
//!   a session whose start was captured; one per direction and session. After
//!   a captured ConnectionReject, at the packet. Before any captured answer,
//!   the capture cannot tell whether an Accept the tap missed came first:
//!   the direction's first such packet is judged when the first answer is
//!   captured, and raises the violation (at its own frame) only if it is the
//!   client's, its `ackBits` acknowledge nothing (the client had received
//!   none of the server's packets its window reaches) and the answer is the
//!   first packet of the server captured at all (the server had sent nothing
//!   the capture saw before answering). Otherwise (the server's packets came
//!   first: it had answered; or no answer is ever captured) nothing is
//!   raised.
//! - Disconnect from either side: `disconnected`, raising `disconnect-sent` with
//!   the reason (first Disconnect of each side). Afterwards,
//!   `sent-after-disconnect` is raised once per direction and session: for a
//!   packet of the side that sent the Disconnect other than a copy of it, or
//!   for a packet of the peer other than Disconnect once a packet of the peer
//!   captured earlier acknowledged the Disconnect (packets the peer sent before
//!   it received the Disconnect are not its fault).
//! - `heartbeat-missing`: in a `connected` session, a packet whose sender was
//!   silent for more than 1 s before it (one per silence, with its length):
//!   its number is the next after that of the sender's previous packet with a
//!   header. A number that skipped some shows the sender sent packets in
//!   between (the tap missed them, or they were lost before it: rule 4
//!   judges them), so the capture shows no silence and nothing is raised.
//!   And at the end of a `connected` session, a side whose last packet is
//!   more than 1 s before the peer's last one (silent until the end).
//! - `timed-out`: a side that has sent packets silent for more than 10 s of
//!   capture time (checked about once a second and at the end); `rejected`,
//!   `disconnected` and `timed-out` sessions are over.
//!
//! **Packets the capture cut short** (snaplen): the engine raises one
//! `truncated` per cut packet; its header (number, acknowledgements) counts as
//! above, and nothing is inferred from what it did not keep:
//! - a cut packet with the number of one captured may be its network duplicate
//!   (the bytes cannot be compared): it raises no `reordered`;
//! - its type alone moves the lifecycle: a cut ConnectionAccept or
//!   ConnectionReject answers the Request (no `before-accept` after it), a cut
//!   Disconnect disconnects (and a later copy is not the side's first
//!   `disconnect-sent`);
//! - a cut reliable packet may have been a copy of any message of its type
//!   sent from 10 s before that message's first copy on: those messages' later
//!   copies raise no retransmission finding (the try count and the
//!   acknowledgement are unknown), and they raise no `never-acked`.
//!
//! **Metrics.** Messages and bytes per type; first sends and resends (reliable
//! messages); the ack delay histogram and smoothed ack delay per direction
//! (rule 5); the interarrival jitter (RFC 3550) of Heartbeats, from their
//! timestamps. In [`StrsSession`]: the bandwidth per direction against the
//! draft's budget per client ([`Bandwidth`]), and entities per WorldSnapshot
//! ([`EntityStats`]).
//!
//! **Bandwidth.** Every datagram of a direction (duplicates and malformed ones
//! included: the link carried them) counts its UDP payload bytes (as sent) in
//! one-second windows, the first starting at the direction's first packet and
//! each next one at the first packet after the previous one ends. A window
//! over the budget (upstream, c2s: 10 KB/s; downstream, s2c: 30 KB/s; the
//! upper ends of the draft's 5-10 and 20-30 KB/s, KB = 1000 bytes) raises one
//! `over-budget` per direction and session, at the packet that takes the
//! window over, with the window's first frame and its bytes so far; the
//! busiest window's rate is [`Bandwidth::peak_bytes_per_s`].
//!
//! **Bounds.** Per direction: 256 sequence numbers, 256 reliable messages, 16
//! open violation incidents, in fixed arrays allocated with the session. No
//! allocation per packet.

use super::findings::{self, rules};
use super::wire::{
    self, ACK_WINDOW, CONNECTION_TIMEOUT_MS, DecodeError, ErrorKind, FieldId,
    HEARTBEAT_INTERVAL_MS, MTU, Message, Packet, PacketType, RETRANSMIT_TIMEOUT_MS, Sender,
    layout::f,
};
use crate::capture::{Datagram, Timestamp};
use crate::engine::serial::SerialSpace;
use crate::engine::{
    self, AckReach, Detail, DirState, Direction, Finding, FindingKind, MissedCounts, ProtoSession,
    ProtocolInfo, Raise, Rule, TrackerConfig,
};
use std::fmt;
use xxhash_rust::xxh3::xxh3_64;

/// A Starstrike session on the engine.
pub type Session = engine::Session<StrsSession>;

/// The engine's tracker for Starstrike.
pub type Tracker = engine::Tracker<Analyzer>;

const S16: SerialSpace = SerialSpace::U16;
/// Sequence numbers followed per direction.
pub const SEQ_RING: usize = 256;
/// Reliable messages followed per direction, sized from the notes: a
/// message is copied at most 5 times, 500 ms apart, so its copies span 2.5 s
/// (3 s with the network's delay); with 1 s of margin, at the draft's fastest
/// rate (a reliable message every tick of 60 Hz), 4 s hold 240 messages.
pub const RELIABLE_LOG: usize = 256;
/// Open violation incidents per direction.
const OPEN_INCIDENTS: usize = 16;
const _: () = assert!(OPEN_INCIDENTS <= 16, "Track::open_mask's bits");
const MS: u64 = 1_000_000;

/// Where a Starstrike session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum State {
    /// ConnectionRequest seen, no answer yet.
    Connecting,
    /// Accepted, or captured mid-way.
    #[default]
    Connected,
    /// The server answered ConnectionReject.
    Rejected,
    /// A side sent Disconnect.
    Disconnected,
    /// A side that had sent packets was silent for more than 10 s.
    TimedOut,
}

impl State {
    pub const fn name(self) -> &'static str {
        match self {
            State::Connecting => "connecting",
            State::Connected => "connected",
            State::Rejected => "rejected",
            State::Disconnected => "disconnected",
            State::TimedOut => "timed-out",
        }
    }

    pub const fn is_final(self) -> bool {
        matches!(
            self,
            State::Rejected | State::Disconnected | State::TimedOut
        )
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum SlotState {
    #[default]
    Empty,
    /// Skipped by a newer number, not captured (yet).
    Missing,
    Seen,
}

/// One sequence number of a direction.
#[derive(Debug, Clone, Copy, Default)]
struct SeqSlot {
    seq: u16,
    state: SlotState,
    acked: bool,
    /// Missing: a peer packet captured after it went missing acknowledged
    /// it, or left it unacknowledged while acknowledging a newer number.
    /// Seen, carrying a reliable message: a peer packet showed it
    /// unacknowledged (rule 5's coverage), counted in [`Reliable::shown`].
    covered: bool,
    /// Seen: the frame of the capture; Missing: the frame that skipped it.
    frame: u64,
    ts: Timestamp,
    /// The reliable message it carried (its id), 0 for none.
    msg: u32,
}

impl SeqSlot {
    /// Whether no window of the peer can change it any more (rule 5): an
    /// empty slot, or one acknowledged and, unless it carries no reliable
    /// message (Seen), covered. [`window_shows`] and [`acknowledgements`]
    /// would leave it as it is, whatever packet's window reaches it.
    fn settled(&self) -> bool {
        match self.state {
            SlotState::Empty => true,
            SlotState::Missing => self.acked && self.covered,
            SlotState::Seen => self.acked && (self.covered || self.msg == 0),
        }
    }
}

/// One reliable message of a direction: its copies.
#[derive(Debug, Clone, Copy, Default)]
struct Reliable {
    /// 0: unused.
    id: u32,
    packet_type: u16,
    hash: u64,
    first_frame: u64,
    first_ts: Timestamp,
    first_seq: u16,
    last_ts: Timestamp,
    sends: u32,
    /// The first acknowledgement: its frame, the copy it acknowledged, and
    /// its capture time (whether it can have reached the sender before a
    /// later copy).
    acked: Option<Ack>,
    limit_reported: bool,
    /// The peer's packet count at the last copy.
    peer_packets: u64,
    /// Copies a window of the peer showed unacknowledged (see
    /// [`acknowledgements`]): when every copy is, `never-acked` is proven.
    shown: u32,
}

/// The first acknowledgement of a reliable message.
#[derive(Debug, Clone, Copy)]
struct Ack {
    frame: u64,
    /// The copy it acknowledged.
    seq: u16,
    ts: Timestamp,
    /// The acknowledging packet's own number (the peer's numbering).
    by: u16,
}

/// An open run of acknowledgements of the unseen.
#[derive(Debug, Clone, Copy)]
struct Unseen {
    frame: u64,
    ts: Timestamp,
    ack: u16,
    highest: u16,
    packets: u32,
}

/// A Disconnect a side sent.
#[derive(Debug, Clone, Copy)]
struct Disconnect {
    frame: u64,
    reason: u8,
    hash: u64,
    msg: u32,
}

/// A game packet captured before any answer to the Request.
#[derive(Debug, Clone, Copy)]
struct BeforeAccept {
    frame: u64,
    ts: Timestamp,
    seq: u16,
    packet_type: PacketType,
    /// Its `ackBits` acknowledge nothing: its sender had received none of
    /// the peer's packets its window reaches.
    acks_nothing: bool,
}

/// An open violation incident: (code, packet type, field).
type IncidentKey = (u8, u16, u16);

/// What the analyzer follows of one direction, in fixed arrays.
#[derive(Debug)]
struct Track {
    slots: Box<[SeqSlot; SEQ_RING]>,
    /// One bit a slot, by its place in `slots`: clear when the slot is
    /// [`SeqSlot::settled`]. Rule 5's windows visit only the slots whose bit
    /// is set (most of a window's 32 numbers are settled, acknowledged by an
    /// earlier window): [`Track::slot_mut`] sets it, the windows clear it.
    unsettled: [u64; SEQ_RING / 64],
    highest: Option<u16>,
    log: Box<[Reliable; RELIABLE_LOG]>,
    /// The low 32 bits of each logged message's hash, side by side: a
    /// reliable packet is looked for among the copies of the log's messages,
    /// and where no tag is its own (almost always: a first copy) none is,
    /// found by a scan of 1 KiB of tags (a few vector compares) rather
    /// than of the log's messages. Written with each message's place
    /// ([`first_copy`]).
    log_tags: Box<[u32; RELIABLE_LOG]>,
    next_log: usize,
    next_id: u32,
    /// The latest packet with a header: its time and frame, and its number.
    last: Option<(Timestamp, u64)>,
    last_seq: u16,
    unseen: Option<Unseen>,
    open: [Option<IncidentKey>; OPEN_INCIDENTS],
    /// One bit a place of `open`, set when it holds an incident: a packet
    /// of a direction with none open (almost every one) looks at none.
    open_mask: u16,
    next_open: usize,
    disconnect: Option<Disconnect>,
    /// A Disconnect of this side was captured cut short (its reason and bytes
    /// unknown): the first Disconnect came no later than it.
    disconnect_cut: bool,
    after_disconnect_reported: bool,
    before_accept_reported: bool,
    /// The first game packet of this side before any answer was captured,
    /// judged when the answer comes.
    before_accept: Option<BeforeAccept>,
    /// Packets of this side with a header (those that set `last`).
    headers: u64,
    /// Reliable messages pushed out of the log while still being sent, and
    /// the frame and time of the first.
    forgotten: u64,
    first_forgotten: Option<(u64, Timestamp)>,
    /// By reliable packet type: the latest packet of the type whose payload
    /// the capture cut short. A message of that type sent around it (from 10 s
    /// before its first copy on) may have had that packet as a copy, and
    /// that copy's acknowledgement: its copies and acks are not judged.
    cut_at: [Option<Timestamp>; PacketType::COUNT],
}

impl Default for Track {
    fn default() -> Self {
        Track {
            slots: Box::new([SeqSlot::default(); SEQ_RING]),
            unsettled: [0; SEQ_RING / 64],
            highest: None,
            log: Box::new([Reliable::default(); RELIABLE_LOG]),
            log_tags: Box::new([Reliable::default().hash as u32; RELIABLE_LOG]),
            next_log: 0,
            next_id: 1,
            last: None,
            last_seq: 0,
            unseen: None,
            open: [None; OPEN_INCIDENTS],
            open_mask: 0,
            next_open: 0,
            disconnect: None,
            disconnect_cut: false,
            after_disconnect_reported: false,
            before_accept_reported: false,
            before_accept: None,
            headers: 0,
            forgotten: 0,
            first_forgotten: None,
            cut_at: [None; PacketType::COUNT],
        }
    }
}

impl Track {
    fn slot(&self, seq: u16) -> &SeqSlot {
        &self.slots[usize::from(seq) % SEQ_RING]
    }

    /// The place in the log of the message a packet of type `t` whose
    /// payload hashes to `hash`, captured at `ts`, is a copy of. A copy has
    /// its message's hash: no tag of it, no copy (the tags scanned without
    /// early exit, the messages only on a tag's match).
    #[inline]
    fn copy_of(&self, t: PacketType, hash: u64, ts: Timestamp) -> Option<usize> {
        let tag = hash as u32;
        let tagged = self
            .log_tags
            .iter()
            .fold(0u32, |hit, t| hit | u32::from(*t == tag))
            != 0;
        tagged
            .then(|| {
                self.log.iter().position(|m| {
                    m.id != 0
                        && m.packet_type == t.id()
                        && m.hash == hash
                        && ts.since(m.last_ts) < CONNECTION_TIMEOUT_MS * MS
                })
            })
            .flatten()
    }

    /// Whether a packet cut short by the capture may have been a copy of `m`
    /// (see [`Track::cut_at`]).
    fn cut_may_copy(&self, m: &Reliable) -> bool {
        PacketType::from_u16(m.packet_type)
            .and_then(|t| self.cut_at[t.ordinal()])
            .is_some_and(|cut| cut.0 >= m.first_ts.0.saturating_sub(CONNECTION_TIMEOUT_MS * MS))
    }

    /// The slot of `seq`, to change: marked unsettled.
    fn slot_mut(&mut self, seq: u16) -> &mut SeqSlot {
        let i = usize::from(seq) % SEQ_RING;
        self.unsettled[i / 64] |= 1 << (i % 64);
        &mut self.slots[i]
    }

    /// The slot of `seq` for rule 5's windows, which mark it settled when
    /// they leave it so ([`Track::settle`]).
    fn window_slot(&mut self, seq: u16) -> &mut SeqSlot {
        &mut self.slots[usize::from(seq) % SEQ_RING]
    }

    /// Clears the slot's bit in [`Track::unsettled`] if it is settled.
    fn settle(&mut self, seq: u16) {
        let i = usize::from(seq) % SEQ_RING;
        if self.slots[i].settled() {
            self.unsettled[i / 64] &= !(1 << (i % 64));
        }
    }

    /// The numbers of the window below `seq` (bit n: `seq - n - 1`, n below
    /// [`ACK_WINDOW`]) whose slot is not settled: the 32 bits of
    /// [`Track::unsettled`] from the slot of `seq - 32` on, reversed.
    fn unsettled_window(&self, seq: u16) -> u32 {
        const WORDS: usize = SEQ_RING / 64;
        let start = usize::from(seq.wrapping_sub(ACK_WINDOW as u16)) % SEQ_RING;
        let (word, shift) = (start / 64, start % 64);
        let low = self.unsettled[word] >> shift;
        let high = match shift {
            0 => 0,
            _ => self.unsettled[(word + 1) % WORDS] << (64 - shift),
        };
        // Bit j is the slot of seq - 32 + j, that is n = 31 - j.
        ((low | high) as u32).reverse_bits()
    }

    /// The message of id `id` (0: none), if the log still holds it: ids are
    /// given in the order of the log's places ([`first_copy`]), so message
    /// `id` can only be in place `(id - 1) % RELIABLE_LOG`.
    fn message(&mut self, id: u32) -> Option<&mut Reliable> {
        let pos = (id.wrapping_sub(1) as usize) % RELIABLE_LOG;
        let m = &mut self.log[pos];
        (id != 0 && m.id == id).then_some(m)
    }
}

/// The draft's bandwidth budget per client, in bytes per second: upstream
/// (client to server) and downstream.
pub const BUDGET_BYTES_PER_S: [u64; 2] = [10_000, 30_000];

/// One direction's bandwidth, in one-second windows of UDP payload bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bandwidth {
    /// Every byte of the direction.
    pub bytes: u64,
    /// The busiest window ended so far (at the end of the session, of every
    /// window), in bytes: bytes per second.
    pub peak_bytes_per_s: u64,
    /// The window open: its first packet's time and frame, and its bytes.
    window: Option<(Timestamp, u64)>,
    window_bytes: u64,
    reported: bool,
}

impl Bandwidth {
    fn end_window(&mut self) {
        self.peak_bytes_per_s = self.peak_bytes_per_s.max(self.window_bytes);
        self.window = None;
        self.window_bytes = 0;
    }

    /// True when the busiest window ended was over `budget` bytes per second.
    pub fn over(&self, budget: u64) -> bool {
        self.peak_bytes_per_s > budget
    }
}

/// Entities per WorldSnapshot (those that decode).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntityStats {
    pub snapshots: u64,
    pub entities: u64,
    pub max: u8,
}

impl EntityStats {
    /// The mean entity count per snapshot; `None` before the first.
    pub fn mean(&self) -> Option<f64> {
        (self.snapshots > 0).then(|| self.entities as f64 / self.snapshots as f64)
    }
}

/// Starstrike's part of a session.
#[derive(Debug, Default)]
pub struct StrsSession {
    /// Bandwidth per direction (c2s, s2c), against [`BUDGET_BYTES_PER_S`].
    pub bandwidth: [Bandwidth; 2],
    /// Entities per WorldSnapshot.
    pub snapshot_entities: EntityStats,
    pub state: State,
    /// True when the capture saw the session begin (its ConnectionRequest).
    pub saw_start: bool,
    /// The server's answer: ConnectionAccept or ConnectionReject.
    pub answer: Option<PacketType>,
    /// The player id ConnectionAccept assigned.
    pub player_id: Option<u32>,
    /// The player name of the ConnectionRequest.
    pub player_name: Option<String>,
    /// The client's chat messages (first copies).
    pub chats: u64,
    request_hash: Option<u64>,
    drift_open: bool,
    tracks: [Track; 2],
}

impl ProtoSession for StrsSession {
    fn state(&self) -> &'static str {
        self.state.name()
    }

    fn is_final(&self) -> bool {
        self.state.is_final()
    }

    fn time_out(&mut self) {
        self.state = State::TimedOut;
    }

    fn player(&self) -> Option<engine::Player> {
        let id = self.player_id?;
        Some(engine::Player {
            id: id.to_string(),
            name: self.player_name.clone().unwrap_or_default(),
            renames: 0,
            chats: self.chats,
        })
    }
}

/// Starstrike's analyzer: the rules above.
#[derive(Debug, Default)]
pub struct Analyzer;

const TYPE_NAMES: [&str; PacketType::COUNT] = crate::names_of!(PacketType::ALL);

const MALFORMED_NAMES: [&str; ErrorKind::ALL.len()] = crate::names_of!(ErrorKind::ALL);

/// Starstrike's registered data.
pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "strs",
    title: "Starstrike",
    message_types: &TYPE_NAMES,
    kinds: findings::KINDS,
    rules: findings::RULES,
    malformed: &MALFORMED_NAMES,
    states: &[
        "connecting",
        "connected",
        "rejected",
        "disconnected",
        "timed-out",
    ],
    // The draft's rates: PlayerInput every client frame (about 60 Hz);
    // WorldSnapshot at the server tick rate (ConnectionAccept.tickRate, 60 Hz
    // in the draft's example).
    spec_rates: &[
        (PacketType::PlayerInput.ordinal(), 60.0),
        (PacketType::WorldSnapshot.ordinal(), 60.0),
    ],
    dissector: &super::dissect::Starstrike,
};

impl engine::NewAnalyzer for Analyzer {
    fn new(_config: &TrackerConfig) -> Self {
        Analyzer
    }
}

impl engine::Analyzer for Analyzer {
    type Session = StrsSession;
    fn info(&self) -> &'static ProtocolInfo {
        &INFO
    }
    fn timeout_ns(&self) -> u64 {
        CONNECTION_TIMEOUT_MS * MS
    }

    fn src_is_server(&self, d: &Datagram<'_>) -> bool {
        match wire::check_header(d.payload).map(|h| h.packet_type.sender()) {
            Ok(Sender::Server) => true,
            Ok(Sender::Client) => false,
            _ => d.src.port() == wire::DEFAULT_PORT,
        }
    }

    #[inline]
    fn restarts(&self, session: &Session, d: &Datagram<'_>) -> bool {
        // The state first (a field, almost never final), then the addresses
        // (two compares of a socket address): no call for most packets.
        if !session.proto.state.is_final() || d.src != session.client {
            return false;
        }
        restarts_with(session, d)
    }

    fn packet(&mut self, session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) {
        analyse(session, raise, d);
    }

    fn end(&mut self, session: &mut Session, raise: &mut Raise<'_>) {
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            raise.direction = direction;
            end_direction(session, raise, direction);
        }
    }
}

/// [`engine::Analyzer::restarts`] for the client's packet of a session in
/// a final state: a ConnectionRequest that is not a copy of the rejected one.
#[inline(never)]
fn restarts_with(session: &Session, d: &Datagram<'_>) -> bool {
    let Ok(p) = Packet::new_checked(d.payload) else {
        return false;
    };
    if p.packet_type() != PacketType::ConnectionRequest {
        return false;
    }
    // A copy of the rejected Request is the same attempt.
    !(session.proto.state == State::Rejected
        && session.proto.request_hash == Some(xxh3_64(p.payload())))
}

fn idx(direction: Direction) -> usize {
    direction.index()
}

/// Raises a finding of an earlier frame (an incident that began there), with
/// its sequence number, counted in `dir`.
fn raise_earlier(
    raise: &mut Raise<'_>,
    dir: &mut DirState,
    kind: FindingKind,
    frame: u64,
    ts: Timestamp,
    seqno: Option<u32>,
    detail: Detail,
) {
    dir.findings[kind.ordinal()] += 1;
    raise.out.push(Finding {
        kind,
        rule: None,
        frame,
        ts,
        session: raise.session,
        direction: raise.direction,
        seqno,
        detail,
    });
}

/// Everything about one packet.
fn analyse(session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) {
    let direction = raise.direction;
    let i = idx(direction);
    bandwidth(session, raise, d);
    // 1. Network duplicates.
    if duplicate(session, raise, d) {
        return;
    }
    // 2. The header.
    let header = match wire::check_header(d.payload) {
        Ok(h) => h,
        Err(e) => {
            damaged_number(session, raise, d, e.kind() == ErrorKind::UnknownType);
            return undecodable(raise, session.dir_mut(direction), d, e);
        }
    };
    let t = header.packet_type;
    header_seen(session, raise, t, header.seq, d);
    // 3. Oversize, as sent.
    oversize(session, raise, t, d);
    // 4 to 6. Numbers and acknowledgements. A number not newer than the
    // highest: the packet was overtaken on the way.
    let overtaken = session.proto.tracks[i]
        .highest
        .is_some_and(|h| !S16.newer(u32::from(header.seq), u32::from(h)));
    sequence(session, raise, header.seq, d);
    acknowledgements(session, raise, header.seq, header.ack_bits, d);
    drift(session, raise, header.seq);

    // 7. The payload.
    let packet = match Packet::with_header(d.payload, header) {
        Ok(p) => p,
        Err(e) => {
            close_incidents_of_type(&mut session.proto.tracks[i], t, &[]);
            if d.truncated_by_capture() {
                cut_payload(session, raise, t, d);
            }
            return undecodable(raise, session.dir_mut(direction), d, e);
        }
    };
    let this = session.dir_mut(direction);
    this.messages[t.ordinal()] += 1;
    this.message_bytes[t.ordinal()] += d.payload_len as u64;

    // 8. Violations, as incidents.
    codec_and_direction(session, raise, &packet);

    // Reliable messages.
    let first_copy = if t.is_reliable() {
        reliable(session, raise, &packet, d, overtaken)
    } else {
        true
    };
    lifecycle(session, raise, &packet, first_copy, d);
    metrics(session, direction, &packet, d);
}

/// Rule 1: a network duplicate of one of the direction's last 64 packets,
/// counted by its type (when its header decodes) and raising nothing else.
/// Returns true for a duplicate.
fn duplicate(session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) -> bool {
    let this = session.dir_mut(raise.direction);
    let Some(frame) = this.duplicate_datagram(d) else {
        return false;
    };
    if let Ok(h) = wire::check_header(d.payload) {
        this.messages[h.packet_type.ordinal()] += 1;
        this.message_bytes[h.packet_type.ordinal()] += d.payload_len as u64;
    }
    raise.raise(
        this,
        FindingKind::DUPLICATE_PACKET,
        None,
        None,
        Detail::DuplicateOf { frame },
    );
    true
}

/// A packet of type `t` numbered `seq` whose header decodes: the session's
/// start (a ConnectionRequest first), and the silence of its sender before
/// it (`heartbeat-missing` while connected, when no number was skipped
/// since its previous packet).
fn header_seen(
    session: &mut Session,
    raise: &mut Raise<'_>,
    t: PacketType,
    seq: u16,
    d: &Datagram<'_>,
) {
    let direction = raise.direction;
    let i = idx(direction);
    if session.c2s.packets + session.s2c.packets == 1
        && direction == Direction::ClientToServer
        && t == PacketType::ConnectionRequest
    {
        session.proto.saw_start = true;
        session.proto.state = State::Connecting;
    }
    // Heartbeat (silence before this packet).
    let track = &mut session.proto.tracks[i];
    let previous = track.last;
    let next = seq == track.last_seq.wrapping_add(1);
    track.last = Some((d.ts, d.frame));
    track.last_seq = seq;
    track.headers += 1;
    if session.proto.state == State::Connected
        && next
        && let Some((last_ts, last_frame)) = previous
    {
        let silence = d.ts.since(last_ts);
        if silence > HEARTBEAT_INTERVAL_MS * MS {
            let this = session.dir_mut(direction);
            raise.raise(
                this,
                findings::HEARTBEAT_MISSING,
                None,
                None,
                findings::silence(silence, last_frame, false),
            );
        }
    }
}

/// Rule 3: a packet of type `t` over the MTU as sent, as an incident.
fn oversize(session: &mut Session, raise: &mut Raise<'_>, t: PacketType, d: &Datagram<'_>) {
    incident(
        session,
        raise,
        (CODE_OVERSIZE, t.id(), 0),
        d.payload_len > MTU,
        FindingKind::OVERSIZE,
        None,
        Detail::Oversize {
            len: d.payload_len,
            max: MTU,
        },
    );
}

/// The metrics a decoded packet gives: the Heartbeats' jitter, the entities
/// per WorldSnapshot.
fn metrics(session: &mut Session, direction: Direction, packet: &Packet<'_>, d: &Datagram<'_>) {
    // Only these two types give one: the others are not read.
    if !matches!(
        packet.packet_type(),
        PacketType::Heartbeat | PacketType::WorldSnapshot
    ) {
        return;
    }
    if packet.packet_type() == PacketType::WorldSnapshot {
        // Its count byte, which the checked length holds to its entities
        // (a snapshot is not read: half the packets are snapshots).
        let stats = &mut session.proto.snapshot_entities;
        let n = u8::try_from(packet.entity_count()).unwrap_or(u8::MAX);
        stats.snapshots += 1;
        stats.entities += u64::from(n);
        stats.max = stats.max.max(n);
    } else if let Message::Heartbeat(hb) = packet.message() {
        session.dir_mut(direction).jitter_sample(d.ts, hb.timestamp);
    }
}

/// A packet whose header says `t` and whose payload the capture cut short:
/// what its type alone tells (an answer, a Disconnect), and the reliable
/// messages of its type that it may have been a copy of.
fn cut_payload(session: &mut Session, raise: &mut Raise<'_>, t: PacketType, d: &Datagram<'_>) {
    let direction = raise.direction;
    let i = idx(direction);
    let c2s = direction == Direction::ClientToServer;
    if t.is_reliable() {
        session.proto.tracks[i].cut_at[t.ordinal()] = Some(d.ts);
    }
    match t {
        PacketType::ConnectionAccept if !c2s => {
            if session.proto.state == State::Connecting {
                session.proto.state = State::Connected;
            }
            judge_before_accept(session, raise);
            session.proto.answer.get_or_insert(t);
        }
        PacketType::ConnectionReject if !c2s => {
            if session.proto.state == State::Connecting {
                session.proto.state = State::Rejected;
            }
            judge_before_accept(session, raise);
            session.proto.answer.get_or_insert(t);
        }
        PacketType::Disconnect => {
            session.proto.tracks[i].disconnect_cut = true;
            if !matches!(session.proto.state, State::Rejected | State::TimedOut) {
                session.proto.state = State::Disconnected;
            }
        }
        _ => {}
    }
}

/// Counts `d` in its direction's bandwidth window, ending the window first if
/// `d` is past it; the first packet that takes a window over the budget raises
/// `over-budget` (once per direction).
fn bandwidth(session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) {
    let direction = raise.direction;
    let i = idx(direction);
    let b = &mut session.proto.bandwidth[i];
    if b.window
        .is_some_and(|(start, _)| d.ts.since(start) >= 1_000 * MS)
    {
        b.end_window();
    }
    let (_, first) = *b.window.get_or_insert((d.ts, d.frame));
    b.window_bytes += d.payload_len as u64;
    b.bytes += d.payload_len as u64;
    let budget = BUDGET_BYTES_PER_S[i];
    if b.window_bytes > budget && !b.reported {
        b.reported = true;
        let detail = findings::over_budget(b.window_bytes, first, i == 1, budget);
        let this = session.dir_mut(direction);
        raise.raise(this, findings::OVER_BUDGET, None, None, detail);
    }
}

/// A header that does not decode but keeps its sequence number (bytes 6 and
/// 7): the number counts (rule 4) when it is within 32 of the direction's
/// highest, so that a damaged packet is malformed and not lost as well; or
/// wherever it is when only the type is unknown (`whole`: the magic is
/// intact, the number as much the sender's as any packet's).
fn damaged_number(session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>, whole: bool) {
    let Some(&[a, b]) = d.payload.get(6..8) else {
        return;
    };
    let seq = u16::from_be_bytes([a, b]);
    let Some(highest) = session.proto.tracks[idx(raise.direction)].highest else {
        return;
    };
    let window = i64::from(ACK_WINDOW);
    if whole
        || S16
            .distance(u32::from(seq), u32::from(highest))
            .is_some_and(|x| (-window..=window).contains(&x))
    {
        sequence(session, raise, seq, d);
    }
}

/// A payload that does not decode.
fn undecodable(raise: &mut Raise<'_>, dir: &mut DirState, d: &Datagram<'_>, e: DecodeError) {
    raise.undecodable(dir, d, e.is_short(), e.kind() as usize, findings::decode(e));
}

const CODE_OVERSIZE: u8 = 0;
const CODE_WRONG_DIRECTION: u8 = 1;
/// Codec violations: 2 + the violation kind.
const CODE_CODEC: u8 = 2;

/// One incident key of a packet: raise its finding unless the incident is
/// open; `present == false` closes it. With none open and the key absent
/// (the oversize key of almost every packet) there is nothing to do: tested
/// inline, the rest out of line.
#[inline(always)]
fn incident(
    session: &mut Session,
    raise: &mut Raise<'_>,
    key: IncidentKey,
    present: bool,
    kind: FindingKind,
    rule: Option<Rule>,
    detail: Detail,
) {
    if !present && session.proto.tracks[idx(raise.direction)].open_mask == 0 {
        return;
    }
    incident_of_track(session, raise, key, present, kind, rule, detail);
}

/// [`incident`] where an incident is open or the key present.
#[inline(never)]
fn incident_of_track(
    session: &mut Session,
    raise: &mut Raise<'_>,
    key: IncidentKey,
    present: bool,
    kind: FindingKind,
    rule: Option<Rule>,
    detail: Detail,
) {
    let direction = raise.direction;
    let track = &mut session.proto.tracks[idx(direction)];
    let pos = track.open.iter().position(|k| *k == Some(key));
    match (present, pos) {
        (true, Some(_)) => {}
        (true, None) => {
            track.open[track.next_open] = Some(key);
            track.open_mask |= 1 << track.next_open;
            track.next_open = (track.next_open + 1) % OPEN_INCIDENTS;
            let this = session.dir_mut(direction);
            raise.raise(this, kind, rule, None, detail);
        }
        (false, Some(p)) => {
            track.open[p] = None;
            track.open_mask &= !(1 << p);
        }
        (false, None) => {}
    }
}

/// Closes the open codec and direction incidents of type `t` whose key is not
/// in `present`.
fn close_incidents_of_type(track: &mut Track, t: PacketType, present: &[IncidentKey]) {
    if track.open_mask == 0 {
        return;
    }
    for (p, slot) in track.open.iter_mut().enumerate() {
        if let Some(key) = *slot
            && key.1 == t.id()
            && key.0 != CODE_OVERSIZE
            && !present.contains(&key)
        {
            *slot = None;
            track.open_mask &= !(1 << p);
        }
    }
}

/// Codec violations and the direction of the type, grouped into incidents.
fn codec_and_direction(session: &mut Session, raise: &mut Raise<'_>, packet: &Packet<'_>) {
    let t = packet.packet_type();
    let direction = raise.direction;
    let from_server = direction == Direction::ServerToClient;
    let wrong = match t.sender() {
        Sender::Client => from_server,
        Sender::Server => !from_server,
        Sender::Both => false,
    };
    // The incidents this packet has, up to 32: made on the first (almost
    // every packet has none, and zeroing 32 keys was 64 stores a packet).
    let mut present: Option<[IncidentKey; 32]> = None;
    let mut n = 0;
    if wrong {
        let key = (CODE_WRONG_DIRECTION, t.id(), 0);
        present.get_or_insert([(0, 0, 0); 32])[0] = key;
        n = 1;
        incident(
            session,
            raise,
            key,
            true,
            FindingKind::VIOLATION,
            Some(rules::WRONG_DIRECTION),
            findings::wrong_direction(t, from_server),
        );
    }
    packet.for_each_violation(|v| {
        let Some(rule) = findings::codec_rule(v.kind()) else {
            return;
        };
        let field = violation_field(&v);
        let key = (CODE_CODEC + v.kind() as u8, t.id(), field.index());
        let keys = present.get_or_insert([(0, 0, 0); 32]);
        if keys[..n].contains(&key) {
            return;
        }
        if n < keys.len() {
            keys[n] = key;
            n += 1;
        }
        incident(
            session,
            raise,
            key,
            true,
            FindingKind::VIOLATION,
            Some(rule),
            findings::codec(v),
        );
    });
    let present = present.as_ref().map_or(&[][..], |keys| &keys[..n]);
    close_incidents_of_type(&mut session.proto.tracks[idx(direction)], t, present);
}

fn violation_field(v: &wire::Violation) -> FieldId {
    match *v {
        wire::Violation::Oversize { .. } => f::HEADER,
        wire::Violation::InvalidEnum { field, .. }
        | wire::Violation::NonFinite { field, .. }
        | wire::Violation::InputRange { field, .. }
        | wire::Violation::StringPadding { field, .. } => field,
    }
}

/// Rule 4: the direction's sequence numbers.
fn sequence(session: &mut Session, raise: &mut Raise<'_>, seq: u16, d: &Datagram<'_>) {
    let direction = raise.direction;
    let i = idx(direction);
    let track = &mut session.proto.tracks[i];
    let seen = SeqSlot {
        seq,
        state: SlotState::Seen,
        acked: false,
        covered: false,
        frame: d.frame,
        ts: d.ts,
        msg: 0,
    };
    let Some(highest) = track.highest else {
        track.highest = Some(seq);
        *track.slot_mut(seq) = seen;
        session.dir_mut(direction).count_expected(1);
        return;
    };
    let ahead = S16.ahead(u32::from(seq), u32::from(highest));
    if S16.newer(u32::from(seq), u32::from(highest)) {
        if ahead == 1 && next_is_quiet(session, direction, seq) {
            let track = &mut session.proto.tracks[i];
            *track.slot_mut(seq) = seen;
            track.highest = Some(seq);
            session.dir_mut(direction).count_expected(1);
            return;
        }
        // Skipped numbers become missing; what they push out of the ring is judged.
        let skipped = ahead - 1;
        let followed = skipped.min(SEQ_RING as u32 - 1);
        let mut counts = MissedCounts::resume(session.dir_mut(direction));
        let track = &mut session.proto.tracks[i];
        let session_id = raise.session;
        for back in (1..=followed).rev() {
            let s = S16.sub(u32::from(seq), back) as u16;
            evict(
                track,
                s,
                raise.out,
                &mut counts,
                d.ts,
                session_id,
                direction,
            );
            *track.slot_mut(s) = SeqSlot {
                seq: s,
                state: SlotState::Missing,
                acked: false,
                covered: false,
                frame: d.frame,
                ts: d.ts,
                msg: 0,
            };
        }
        evict(
            track,
            seq,
            raise.out,
            &mut counts,
            d.ts,
            session_id,
            direction,
        );
        *track.slot_mut(seq) = seen;
        track.highest = Some(seq);
        let dir = session.dir_mut(direction);
        // The loss estimate: every number up to this one was sent; those
        // skipped past the followed window count as lost (never captured,
        // their acks not followed), the followed ones as they are judged.
        dir.count_expected(u64::from(ahead));
        dir.count_lost(u64::from(skipped - followed) + counts.lost());
        counts.add_to(dir, raise.out);
        return;
    }
    // Not newer: overtaken. A packet the capture cut short with the number of
    // one captured may be its network duplicate: the bytes cannot tell.
    let slot = track.slot_mut(seq);
    let followed = S16.ahead(u32::from(highest), u32::from(seq)) < SEQ_RING as u32;
    if d.truncated_by_capture() && followed && slot.seq == seq && slot.state == SlotState::Seen {
        return;
    }
    if followed && slot.seq == seq && slot.state == SlotState::Missing {
        let acked = slot.acked;
        *slot = SeqSlot { acked, ..seen };
    }
    let this = session.dir_mut(direction);
    raise.raise(
        this,
        FindingKind::REORDERED,
        None,
        Some(u32::from(seq)),
        Detail::Fill {
            highest: u32::from(highest),
        },
    );
}

/// Whether `seq`, the next number of `direction` (almost every packet),
/// judges nothing: its slot holds no missing number to judge, and no run
/// of judged numbers is open (the rest of a gap) that a packet judging
/// none would close. [`sequence`] then counts it without [`MissedCounts`],
/// which would count nothing and raise nothing.
fn next_is_quiet(session: &Session, direction: Direction, seq: u16) -> bool {
    let old = session.proto.tracks[idx(direction)].slot(seq);
    !(old.state == SlotState::Missing && old.seq != seq)
        && session.dir(direction).missed.iter().all(Option::is_none)
}

/// A slot about to be reused for `seq`: a missing number it held is judged now.
fn evict(
    track: &mut Track,
    seq: u16,
    out: &mut Vec<Finding>,
    counts: &mut MissedCounts,
    ts: Timestamp,
    session: usize,
    direction: Direction,
) {
    let old = *track.slot(seq);
    if old.state == SlotState::Missing && old.seq != seq {
        judge_missing(&old, counts, ts, session, direction, out);
    }
}

/// A missing number judged: `not-captured` if the peer acknowledged it,
/// `lost` if a window of the peer covered it without acknowledging it, an
/// unconfirmed `not-captured` if no window of the peer ever covered it.
fn judge_missing(
    slot: &SeqSlot,
    counts: &mut MissedCounts,
    ts: Timestamp,
    session: usize,
    direction: Direction,
    out: &mut Vec<Finding>,
) {
    let seq = u32::from(slot.seq);
    if slot.acked || slot.covered {
        counts.missed(seq, slot.frame, slot.acked, ts, session, direction, out);
    } else {
        counts.unconfirmed(seq, slot.frame, ts, session, direction, out);
    }
}

/// Rule 5: the bits of this packet acknowledge the peer's packets.
fn acknowledgements(
    session: &mut Session,
    raise: &mut Raise<'_>,
    seq: u16,
    bits: u32,
    d: &Datagram<'_>,
) {
    let direction = raise.direction;
    let j = idx(direction.reverse());
    let Some(peer_highest) = session.proto.tracks[j].highest else {
        return;
    };
    // A number up to `SEQ_RING - 1` behind the peer's highest is never newer
    // than it (RFC 1982: it is `2^16 - k` ahead of it, `k < SEQ_RING`), so
    // one test of the distance behind says both what the rule asks (not
    // newer, and within the ring).
    let behind = behind_window(peer_highest, seq);
    // The set bits in order, as `bitfield_acks` gives them: bit n acks seq - n - 1.
    let unseen = newest_unseen(bits & !behind, seq, peer_highest);
    // The peer's round trip as it was before this packet's acknowledgements
    // (which update it): what its window shows is judged with it.
    let round_trip = session.dir(direction.reverse()).srtt_ns();
    let (track, peer_dir) = match direction {
        Direction::ClientToServer => (&mut session.proto.tracks[j], &mut session.s2c),
        Direction::ServerToClient => (&mut session.proto.tracks[j], &mut session.c2s),
    };
    // Of those in the ring, a settled slot is left as it is (acknowledged
    // already, shown): only the others are visited, in order, each once
    // for what the window shows of it and what the bits acknowledge.
    let mut rest = behind & track.unsettled_window(seq);
    while rest != 0 {
        let n = rest.trailing_zeros();
        rest &= rest - 1;
        let s = seq.wrapping_sub(n as u16 + 1);
        let acked_here = bits & (1 << n) != 0;
        if track.slot(s).seq == s {
            window_shows(track, s, n, bits, d.ts, round_trip);
            if acked_here {
                acknowledged(track, peer_dir, s, seq, d);
            }
        } else if !acked_here {
            // Another number's slot: the window shows nothing of it, and
            // only an acknowledgement settles it.
            continue;
        }
        track.settle(s);
    }
    note_unseen(session, raise, unseen, peer_highest, d);
}

/// What the window of a packet `seq` shows of the peer's number `s`, `seq -
/// n - 1` (its slot holds it), before its bits acknowledge it: a number it
/// leaves unacknowledged had not arrived when this packet was sent if it
/// acknowledges a newer one (a packet sent after it), or if it was
/// captured at least the round trip between the tap and this packet's
/// sender after the number could have passed the tap (the peer
/// direction's smoothed ack delay; for a missing number, after the packet
/// that skipped it): a missing one is covered (lost, unless acknowledged);
/// a captured copy of a reliable message is shown unacknowledged, as it is
/// when this is the last window that can reach it (seq - 32). Otherwise
/// this packet may have been sent while the number was in flight, and
/// shows nothing.
#[inline(always)]
fn window_shows(
    track: &mut Track,
    s: u16,
    n: u32,
    bits: u32,
    ts: Timestamp,
    round_trip: Option<f64>,
) {
    let acked_here = bits & (1 << n) != 0;
    let slot = track.window_slot(s);
    let passed =
        bits & ((1 << n) - 1) != 0 || round_trip.is_some_and(|r| ts.since(slot.ts) as f64 >= r);
    match slot.state {
        SlotState::Missing if acked_here || passed => slot.covered = true,
        SlotState::Seen
            if !acked_here && !slot.covered && slot.msg != 0 && (passed || n == ACK_WINDOW - 1) =>
        {
            slot.covered = true;
            let msg = slot.msg;
            if let Some(m) = track.message(msg) {
                m.shown += 1;
            }
        }
        _ => {}
    }
}

/// The peer's number `s` (its slot holds it) acknowledged by the bits of
/// this packet, numbered `by`: the first acknowledgement of a number
/// marks it, and of a captured one gives its delay (into the peer's
/// direction, `peer_dir`) and acknowledges the reliable message it
/// carried.
#[inline(always)]
fn acknowledged(track: &mut Track, peer_dir: &mut DirState, s: u16, by: u16, d: &Datagram<'_>) {
    let slot = track.window_slot(s);
    if slot.acked {
        return;
    }
    match slot.state {
        SlotState::Empty => {}
        SlotState::Missing => slot.acked = true,
        SlotState::Seen => {
            slot.acked = true;
            let (sent, msg) = (slot.ts, slot.msg);
            if let Some(m) = track.message(msg)
                && m.acked.is_none()
            {
                m.acked = Some(Ack {
                    frame: d.frame,
                    seq: s,
                    ts: d.ts,
                    by,
                });
            }
            peer_dir.ack_delay_between(sent, d.ts);
        }
    }
}

/// The numbers of the window below `seq` (bit n: `seq - n - 1`, n below
/// [`ACK_WINDOW`]) at most `SEQ_RING - 1` behind `highest`, the peer's
/// highest number: number n is `k + n` behind it (mod 2^16), `k` the
/// distance of `seq - 1`.
fn behind_window(highest: u16, seq: u16) -> u32 {
    let k = u32::from(highest.wrapping_sub(seq.wrapping_sub(1)));
    let (ring, wrap) = (SEQ_RING as u32, 1 << 16);
    if k < ring {
        // From n = 0 while k + n < SEQ_RING.
        match ring - k {
            count if count >= ACK_WINDOW => u32::MAX,
            count => (1 << count) - 1,
        }
    } else if k > wrap - ACK_WINDOW {
        // k + n reaches 2^16 (0 behind) at n = 2^16 - k, and stays in the
        // ring to the window's end.
        u32::MAX << (wrap - k)
    } else {
        0
    }
}

/// The newest of the numbers `bits` acknowledges (bit n: `seq - n - 1`)
/// that is newer than the peer's highest, if any: an acknowledgement of
/// the unseen.
fn newest_unseen(bits: u32, seq: u16, peer_highest: u16) -> Option<u16> {
    let mut unseen: Option<u16> = None;
    let mut rest = bits;
    while rest != 0 {
        let n = rest.trailing_zeros();
        rest &= rest - 1;
        let s = seq.wrapping_sub(n as u16 + 1);
        if S16.newer(u32::from(s), u32::from(peer_highest))
            && unseen.is_none_or(|u| S16.newer(u32::from(s), u32::from(u)))
        {
            unseen = Some(s);
        }
    }
    unseen
}

/// Extends or opens this direction's run of acknowledgements of numbers the
/// peer was not seen to send (`unseen`, the newest of this packet), or ends
/// the run when this packet has none.
fn note_unseen(
    session: &mut Session,
    raise: &mut Raise<'_>,
    unseen: Option<u16>,
    peer_highest: u16,
    d: &Datagram<'_>,
) {
    let direction = raise.direction;
    let track = &mut session.proto.tracks[idx(direction)];
    match (unseen, &mut track.unseen) {
        (Some(ack), Some(run)) => {
            run.packets += 1;
            if S16.newer(u32::from(ack), u32::from(run.ack)) {
                run.ack = ack;
            }
        }
        (Some(ack), None) => {
            track.unseen = Some(Unseen {
                frame: d.frame,
                ts: d.ts,
                ack,
                highest: peer_highest,
                packets: 1,
            });
        }
        (None, _) => close_unseen(session, raise, direction),
    }
}

/// Ends an open run of acknowledgements of the unseen: one `ack-unseen`.
fn close_unseen(session: &mut Session, raise: &mut Raise<'_>, direction: Direction) {
    if let Some(run) = session.proto.tracks[idx(direction)].unseen.take() {
        let detail = Detail::AckUnseen {
            ack: u32::from(run.ack),
            highest: u32::from(run.highest),
            packets: run.packets,
        };
        let dir = session.dir_mut(direction);
        raise_earlier(
            raise,
            dir,
            FindingKind::ACK_UNSEEN,
            run.frame,
            run.ts,
            Some(u32::from(run.ack)),
            detail,
        );
    }
}

/// Rule 6: the two sides' numbers more than 32 apart.
fn drift(session: &mut Session, raise: &mut Raise<'_>, seq: u16) {
    let direction = raise.direction;
    let Some(peer) = session.proto.tracks[idx(direction.reverse())].highest else {
        return;
    };
    let distance = S16.distance(u32::from(seq), u32::from(peer));
    let window = i64::from(ACK_WINDOW);
    let in_reach = distance.is_some_and(|d| (-window..=window).contains(&d));
    if in_reach {
        session.proto.drift_open = false;
    } else if !session.proto.drift_open {
        session.proto.drift_open = true;
        let this = session.dir_mut(direction);
        raise.raise(
            this,
            findings::ACK_DRIFT,
            None,
            Some(u32::from(seq)),
            findings::ack_drift(seq, peer, distance.unwrap_or(32768)),
        );
    }
}

/// Whether the peer's numbers are already past every window that can reach
/// `seq` of `direction` (the last is seq + 32): its later packets cannot
/// acknowledge it.
fn past_every_window(session: &Session, direction: Direction, seq: u16) -> bool {
    session.proto.tracks[idx(direction.reverse())]
        .highest
        .is_some_and(|h| {
            S16.newer(u32::from(h), u32::from(seq))
                && S16.ahead(u32::from(h), u32::from(seq)) >= ACK_WINDOW
        })
}

/// A first copy of a reliable message (`first`, its id still 0): into the
/// direction's log under a new id, judging the message it pushes out
/// (`beyond`: the peer's numbers are already past every window that can
/// reach it).
fn first_copy(
    session: &mut Session,
    raise: &mut Raise<'_>,
    mut first: Reliable,
    beyond: bool,
    d: &Datagram<'_>,
) {
    let direction = raise.direction;
    let track = &mut session.proto.tracks[idx(direction)];
    let old = track.log[track.next_log];
    first.id = track.next_id;
    // The place of message `id` is `(id - 1) % RELIABLE_LOG` (what
    // `Track::message` looks up): ids run from 1 to LAST_ID, a multiple of
    // the log's size, and start again at 1.
    const LAST_ID: u32 = u32::MAX - u32::MAX % RELIABLE_LOG as u32;
    debug_assert_eq!(track.next_log, (first.id - 1) as usize % RELIABLE_LOG);
    track.next_id = if first.id == LAST_ID { 1 } else { first.id + 1 };
    track.log[track.next_log] = first;
    track.log_tags[track.next_log] = first.hash as u32;
    if mark_message(track, first.first_seq, first.id, beyond) {
        track.log[track.next_log].shown = 1;
    }
    track.next_log = (track.next_log + 1) % RELIABLE_LOG;
    if old.id != 0 && d.ts.since(old.last_ts) < 2 * RETRANSMIT_TIMEOUT_MS * MS {
        track.forgotten += 1;
        track.first_forgotten.get_or_insert((d.frame, d.ts));
    }
    if old.id != 0 {
        judge_never_acked(session, raise, direction, &old);
    }
    session.dir_mut(direction).first_sends += 1;
}

/// A reliable packet: a first copy, or which kind of copy (`overtaken`: its
/// number was not newer than the direction's highest). Returns true for a
/// first copy.
fn reliable(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    d: &Datagram<'_>,
    overtaken: bool,
) -> bool {
    let direction = raise.direction;
    let i = idx(direction);
    let t = packet.packet_type();
    let hash = xxh3_64(packet.payload());
    let seq = packet.seq();
    let peer_packets = session.dir(direction.reverse()).packets;
    let beyond = past_every_window(session, direction, seq);
    let track = &mut session.proto.tracks[i];
    let Some(pos) = track.copy_of(t, hash, d.ts) else {
        let first = Reliable {
            id: 0,
            packet_type: t.id(),
            hash,
            first_frame: d.frame,
            first_ts: d.ts,
            first_seq: seq,
            last_ts: d.ts,
            sends: 1,
            acked: None,
            limit_reported: false,
            peer_packets,
            shown: 0,
        };
        first_copy(session, raise, first, beyond, d);
        return true;
    };
    let uncertain = track.cut_may_copy(&track.log[pos]);
    let m = &mut track.log[pos];
    m.sends += 1;
    let tries = m.sends - 1;
    let since_first = d.ts.since(m.first_ts);
    let since_prev = d.ts.since(m.last_ts);
    m.last_ts = d.ts;
    m.peer_packets = peer_packets;
    let (acked, first_frame, limit_reported, id) = (m.acked, m.first_frame, m.limit_reported, m.id);
    if tries > wire::MAX_RETRANSMISSIONS {
        m.limit_reported = true;
    }
    if mark_message(track, seq, id, beyond) {
        track.log[pos].shown += 1;
    }
    // Whether the acknowledgement had reached the sender: the round trip
    // between the tap and the sender is the peer direction's ack delay.
    let reach = acked.map(|a| {
        let peer = session.dir(direction.reverse());
        (a, peer.ack_reached(Some(a.ts), d.ts, overtaken))
    });
    // The copy's own ack bits reach the acknowledging packet and leave it
    // out: its sender had not received it (lost after the tap).
    let unreceived = acked.is_some_and(|a| {
        let n = u32::from(seq.wrapping_sub(a.by).wrapping_sub(1));
        n < ACK_WINDOW && packet.ack_bits() & (1 << n) == 0
    });
    let this = session.dir_mut(direction);
    this.resends += 1;
    let seqno = Some(u32::from(seq));
    if uncertain {
        // A copy the capture cut short may have come between: the try count
        // and the acknowledgement are unknown.
    } else if reach.is_some() && unreceived {
        let detail = Detail::Unconfirmed(ACK_UNRECEIVED);
        raise.raise(this, FindingKind::REPEAT, None, seqno, detail);
    } else if let Some((ack, AckReach::Reached)) = reach {
        let detail = findings::spurious(t, tries, first_frame, ack.frame, ack.seq);
        raise.raise(this, findings::SPURIOUS_RETRANSMISSION, None, seqno, detail);
    } else if let Some((ack, reach)) = reach {
        // The copy may have crossed the acknowledgement in flight.
        let detail = ack_in_flight(reach, ack.seq, first_frame);
        raise.raise(this, FindingKind::REPEAT, None, seqno, detail);
    } else if tries > wire::MAX_RETRANSMISSIONS {
        if !limit_reported {
            let detail = findings::retransmit_limit(t, tries, first_frame, since_first);
            raise.raise(this, findings::RETRANSMIT_LIMIT, None, seqno, detail);
        }
    } else {
        let detail = findings::retransmission(t, tries, first_frame, since_first, since_prev);
        raise.raise(this, findings::RETRANSMISSION, None, seqno, detail);
    }
    false
}

/// The reason of a copy whose own ack bits show its sender had not received
/// the packet that acknowledged an earlier copy.
const ACK_UNRECEIVED: &str =
    "its sender had not received the acknowledging packet (the copy's ack bits leave it out)";

/// The detail of a copy that may have crossed the acknowledgement of copy
/// `acked_seq` in flight (`reach` is not [`AckReach::Reached`]).
fn ack_in_flight(reach: AckReach, acked_seq: u16, first_frame: u64) -> Detail {
    let (since_ack_ns, round_trip_ns) = match reach {
        AckReach::Unconfirmed {
            since_ack_ns,
            round_trip_ns,
        } => (since_ack_ns, round_trip_ns),
        AckReach::Reached | AckReach::Overtaken => (None, None),
    };
    Detail::AckInFlight {
        ack: u32::from(acked_seq),
        first_frame,
        since_ack_ns,
        round_trip_ns,
        overtaken: reach == AckReach::Overtaken,
    }
}

/// The sequence slot of `seq` carries message `id`.
/// With `beyond` (no window of the peer that can still come reaches it), the
/// copy is shown unacknowledged: returns true when it is counted so.
fn mark_message(track: &mut Track, seq: u16, id: u32, beyond: bool) -> bool {
    let slot = track.slot_mut(seq);
    if slot.seq == seq && slot.state == SlotState::Seen {
        slot.msg = id;
        if beyond && !slot.covered && !slot.acked {
            slot.covered = true;
            return true;
        }
    }
    false
}

/// `never-acked` for a message leaving the log or the session: unacknowledged,
/// though the peer sent a packet more than 500 ms after its last copy.
fn judge_never_acked(
    session: &mut Session,
    raise: &mut Raise<'_>,
    direction: Direction,
    m: &Reliable,
) {
    if m.acked.is_some() || session.proto.tracks[idx(direction)].cut_may_copy(m) {
        return;
    }
    let Some((peer_last, _)) = session.proto.tracks[idx(direction.reverse())].last else {
        return;
    };
    if peer_last.since(m.last_ts) <= RETRANSMIT_TIMEOUT_MS * MS {
        return;
    }
    let t = PacketType::from_u16(m.packet_type).unwrap_or(PacketType::Heartbeat);
    let after = session
        .dir(direction.reverse())
        .packets
        .saturating_sub(m.peer_packets);
    // Proven only when the peer's windows showed every copy unacknowledged:
    // otherwise a packet of the peer the tap missed may have acknowledged one.
    let unshown = m.sends.saturating_sub(m.shown);
    let (kind, detail) = if unshown == 0 {
        let detail = findings::never_acked(t, m.sends, m.first_frame, after);
        (findings::NEVER_ACKED, detail)
    } else {
        let detail = findings::no_ack_captured(t, m.sends, m.first_frame, after, unshown);
        (findings::NO_ACK_CAPTURED, detail)
    };
    let saved = raise.direction;
    raise.direction = direction;
    let dir = session.dir_mut(direction);
    raise_earlier(
        raise,
        dir,
        kind,
        m.first_frame,
        m.first_ts,
        Some(u32::from(m.first_seq)),
        detail,
    );
    raise.direction = saved;
}

/// The handshake, Disconnect and the lifecycle.
fn lifecycle(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    first_copy: bool,
    d: &Datagram<'_>,
) {
    let c2s = raise.direction == Direction::ClientToServer;
    let t = packet.packet_type();
    let seqno = Some(u32::from(packet.seq()));
    after_disconnect(session, raise, packet, seqno, d);
    // Only these types move the lifecycle: the others (almost every packet)
    // are neither read nor hashed.
    let read = matches!(
        t,
        PacketType::ConnectionRequest
            | PacketType::ConnectionAccept
            | PacketType::ConnectionReject
            | PacketType::Disconnect
    );
    if !read {
        if t == PacketType::ChatMessage && c2s && first_copy {
            session.proto.chats += 1;
        }
        game_before_answer(session, raise, packet, d);
        return;
    }
    let payload_hash = xxh3_64(packet.payload());
    match packet.message() {
        Message::ConnectionRequest(r) if c2s => {
            let name = r.player_name.text();
            request(session, raise, name, first_copy, payload_hash, seqno);
        }
        Message::ConnectionAccept(a) if !c2s => {
            judge_before_accept(session, raise);
            answer(session, raise, t, first_copy, seqno);
            if session.proto.state == State::Connecting {
                session.proto.state = State::Connected;
            }
            if session.proto.answer.is_none() || session.proto.answer == Some(t) {
                session.proto.answer = Some(t);
                session.proto.player_id.get_or_insert(a.assigned_player_id);
            }
        }
        Message::ConnectionReject(r) if !c2s => {
            rejected(session, raise, r.reason, first_copy, seqno);
        }
        Message::Disconnect(r) => disconnect(session, raise, packet, r.reason, payload_hash, d),
        _ => {}
    }
    game_before_answer(session, raise, packet, d);
}

/// `sent-after-disconnect`, once per direction: a packet of type `t` after a
/// Disconnect of this side (other than its copies), or of the peer once
/// this side acknowledged it in an earlier packet.
#[inline(always)]
fn after_disconnect(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    seqno: Option<u32>,
    d: &Datagram<'_>,
) {
    let (i, j) = (idx(raise.direction), idx(raise.direction.reverse()));
    let tracks = &session.proto.tracks;
    // Without a Disconnect of either side (almost every packet), no breach.
    if tracks[i].after_disconnect_reported
        || (tracks[i].disconnect.is_none() && tracks[j].disconnect.is_none())
    {
        return;
    }
    disconnect_breach(session, raise, packet, seqno, d);
}

/// [`after_disconnect`] once a side has sent a Disconnect.
#[inline(never)]
fn disconnect_breach(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    seqno: Option<u32>,
    d: &Datagram<'_>,
) {
    let direction = raise.direction;
    let t = packet.packet_type();
    let (i, j) = (idx(direction), idx(direction.reverse()));
    let own = session.proto.tracks[i].disconnect;
    // A copy of this side's Disconnect: its type, and its payload's hash.
    let copy = |hash: u64| t == PacketType::Disconnect && hash == xxh3_64(packet.payload());
    let own_breach = own.filter(|disc| !copy(disc.hash));
    let peer_breach = session.proto.tracks[j].disconnect.filter(|disc| {
        t != PacketType::Disconnect
            && session.proto.tracks[j]
                .log
                .iter()
                .any(|m| m.id == disc.msg && m.acked.is_some_and(|a| a.frame < d.frame))
    });
    if let Some(disc) = own_breach.or(peer_breach) {
        session.proto.tracks[i].after_disconnect_reported = true;
        let this = session.dir_mut(direction);
        raise.violation(
            this,
            rules::SENT_AFTER_DISCONNECT,
            seqno,
            findings::after_disconnect(t, disc.frame, disc.reason),
        );
    }
}
/// A ConnectionRequest of the client (its player name `name`): the first
/// sets the session's Request; a first copy with another payload after the
/// answer breaks the handshake's order.
fn request(
    session: &mut Session,
    raise: &mut Raise<'_>,
    name: &[u8],
    first_copy: bool,
    payload_hash: u64,
    seqno: Option<u32>,
) {
    if session.proto.request_hash.is_none() {
        session.proto.request_hash = Some(payload_hash);
        session.proto.player_name = Some(String::from_utf8_lossy(name).into_owned());
    }
    if first_copy
        && let Some(answer) = session.proto.answer
        && session.proto.request_hash != Some(payload_hash)
    {
        let this = session.dir_mut(raise.direction);
        raise.violation(
            this,
            rules::HANDSHAKE_ORDER,
            seqno,
            findings::handshake(PacketType::ConnectionRequest, answer),
        );
    }
}

/// A ConnectionReject of the server (`reason`): it judges the game packets
/// before it, and rejects a session still connecting.
fn rejected(
    session: &mut Session,
    raise: &mut Raise<'_>,
    reason: u8,
    first_copy: bool,
    seqno: Option<u32>,
) {
    let t = PacketType::ConnectionReject;
    judge_before_accept(session, raise);
    answer(session, raise, t, first_copy, seqno);
    if first_copy {
        let this = session.dir_mut(raise.direction);
        raise.raise(
            this,
            findings::REJECTED,
            None,
            seqno,
            findings::reject_reason(reason),
        );
    }
    if session.proto.state == State::Connecting {
        session.proto.state = State::Rejected;
    }
    session.proto.answer.get_or_insert(t);
}

/// A Disconnect (`reason`) of the packet's side: its first is remembered
/// (and raises `disconnect-sent`, unless one was cut short before), and the
/// session is disconnected unless it was over already.
fn disconnect(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    reason: u8,
    payload_hash: u64,
    d: &Datagram<'_>,
) {
    let direction = raise.direction;
    let i = idx(direction);
    if session.proto.tracks[i].disconnect.is_none() {
        // After one cut short, this is not the side's first.
        let first = !session.proto.tracks[i].disconnect_cut;
        let msg = session.proto.tracks[i].slot(packet.seq()).msg;
        session.proto.tracks[i].disconnect = Some(Disconnect {
            frame: d.frame,
            reason,
            hash: payload_hash,
            msg,
        });
        if first {
            let this = session.dir_mut(direction);
            raise.raise(
                this,
                findings::DISCONNECTED,
                None,
                Some(u32::from(packet.seq())),
                findings::disconnect_reason(reason),
            );
        }
    }
    if !matches!(session.proto.state, State::Rejected | State::TimedOut) {
        session.proto.state = State::Disconnected;
    }
}

/// A game packet (0x0100 and up) of a session whose start was captured,
/// before the Accept: after a captured Reject, `before-accept` at once;
/// before any captured answer, the direction's first is kept, judged when
/// the answer comes ([`judge_before_accept`]).
#[inline(always)]
fn game_before_answer(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    d: &Datagram<'_>,
) {
    let i = idx(raise.direction);
    let t = packet.packet_type();
    if t.id() < 0x0100 || !session.proto.saw_start || session.proto.tracks[i].before_accept_reported
    {
        return;
    }
    game_before_any_answer(session, raise, packet, d);
}

/// [`game_before_answer`] for a game packet of a session whose start was
/// captured, not yet reported.
#[inline(never)]
fn game_before_any_answer(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    d: &Datagram<'_>,
) {
    let direction = raise.direction;
    let i = idx(direction);
    let t = packet.packet_type();
    match session.proto.answer {
        Some(PacketType::ConnectionAccept) => {}
        Some(_) => {
            session.proto.tracks[i].before_accept_reported = true;
            let this = session.dir_mut(direction);
            raise.violation(
                this,
                rules::BEFORE_ACCEPT,
                Some(u32::from(packet.seq())),
                findings::before_accept(t),
            );
        }
        None => {
            let track = &mut session.proto.tracks[i];
            track.before_accept.get_or_insert(BeforeAccept {
                frame: d.frame,
                ts: d.ts,
                seq: packet.seq(),
                packet_type: t,
                acks_nothing: packet.ack_bits() == 0,
            });
        }
    }
}

/// The first answer to the Request is captured (the packet being analysed):
/// the game packets captured before it are judged. The capture proves one
/// came before every answer only when it is the client's, acknowledges none
/// of the server's packets, and this answer is the first packet of the
/// server captured at all: otherwise an answer the tap missed may have come
/// first (the server's other packets show it had answered), and nothing is
/// raised.
fn judge_before_accept(session: &mut Session, raise: &mut Raise<'_>) {
    if session.proto.answer.is_some() {
        return;
    }
    let server_first = session.proto.tracks[idx(Direction::ServerToClient)].headers == 1;
    for direction in [Direction::ClientToServer, Direction::ServerToClient] {
        let track = &mut session.proto.tracks[idx(direction)];
        let Some(p) = track.before_accept.take() else {
            continue;
        };
        if direction != Direction::ClientToServer || !p.acks_nothing || !server_first {
            continue;
        }
        track.before_accept_reported = true;
        let span = engine::RunSpan {
            frame: p.frame,
            ts: p.ts,
            seqno: Some(u32::from(p.seq)),
            messages: 1,
            packets: 1,
            last_frame: p.frame,
        };
        let saved = raise.direction;
        raise.direction = direction;
        let dir = session.dir_mut(direction);
        raise.violation_at(
            dir,
            rules::BEFORE_ACCEPT,
            &span,
            findings::before_accept(p.packet_type),
        );
        raise.direction = saved;
    }
}

/// An Accept or a Reject contradicting an earlier answer.
fn answer(
    session: &mut Session,
    raise: &mut Raise<'_>,
    t: PacketType,
    first_copy: bool,
    seqno: Option<u32>,
) {
    if let Some(earlier) = session.proto.answer
        && earlier != t
        && first_copy
    {
        let this = session.dir_mut(raise.direction);
        raise.violation(
            this,
            rules::HANDSHAKE_ORDER,
            seqno,
            findings::handshake(t, earlier),
        );
    }
}

/// The end of a session, for one direction: the open run of unseen
/// acknowledgements, the missing numbers, the unacknowledged messages, and a
/// side silent until the end.
fn end_direction(session: &mut Session, raise: &mut Raise<'_>, direction: Direction) {
    let i = idx(direction);
    session.proto.bandwidth[i].end_window();
    close_unseen(session, raise, direction);
    // Missing numbers, in order from the oldest.
    if let Some(highest) = session.proto.tracks[i].highest {
        let mut counts = MissedCounts::resume(session.dir_mut(direction));
        for back in (0..SEQ_RING as u32).rev() {
            let s = S16.sub(u32::from(highest), back) as u16;
            let slot = session.proto.tracks[i].slot_mut(s);
            if slot.seq == s && slot.state == SlotState::Missing {
                slot.state = SlotState::Empty;
                let judged = *slot;
                judge_missing(
                    &judged,
                    &mut counts,
                    raise.ts,
                    raise.session,
                    direction,
                    raise.out,
                );
            }
        }
        let dir = session.dir_mut(direction);
        dir.count_lost(counts.lost());
        // The session ends: its gaps are complete, reported in this direction's turn.
        counts.close(raise.out);
        counts.add_to(dir, raise.out);
    }
    // Unacknowledged messages, oldest first.
    let track = &mut session.proto.tracks[i];
    let start = track.next_log;
    for k in 0..RELIABLE_LOG {
        let pos = (start + k) % RELIABLE_LOG;
        let m = session.proto.tracks[i].log[pos];
        if m.id != 0 {
            session.proto.tracks[i].log[pos].id = 0;
            judge_never_acked(session, raise, direction, &m);
        }
    }
    // Messages forgotten while still being sent.
    let track = &session.proto.tracks[i];
    if let Some((frame, ts)) = track.first_forgotten {
        let detail = findings::reliable_forgotten(track.forgotten, RELIABLE_LOG);
        let dir = session.dir_mut(direction);
        raise_earlier(
            raise,
            dir,
            findings::RELIABLE_FORGOTTEN,
            frame,
            ts,
            None,
            detail,
        );
    }
    // Silent until the end.
    if session.proto.state == State::Connected
        && let (Some((last, frame)), Some((peer_last, _))) = (
            session.proto.tracks[i].last,
            session.proto.tracks[idx(direction.reverse())].last,
        )
        && peer_last.since(last) > HEARTBEAT_INTERVAL_MS * MS
    {
        let detail = findings::silence(peer_last.since(last), frame, true);
        let dir = session.dir_mut(direction);
        raise_earlier(
            raise,
            dir,
            findings::HEARTBEAT_MISSING,
            frame,
            last,
            None,
            detail,
        );
    }
}

/// The rules above on hand-built packet sequences, with what the analyzer
/// keeps of each direction (its number ring, its reliable log, its open
/// incidents) in view. The contract's every finding, as users see it, is in
/// `tests/starstrike_findings.rs`.
#[cfg(test)]
mod tests {
    use super::super::wire::{
        ChatMessage, EntityState, FixedStr, MessageRepr, PacketRepr, PlayerInput, Reason,
        WorldSnapshot,
    };
    use super::*;
    use crate::engine::testing::Played;

    /// One capture played packet by packet; every packet at `ms` (from the
    /// start), one frame each. The session starts mid-way (its first packet
    /// is not a ConnectionRequest): connected, no handshake rules.
    struct Run(Played<Analyzer>);

    const START_MS: u64 = 1_704_067_200_000;

    /// The window's masks agree with the tests they stand for, number by
    /// number: every distance behind the peer's highest, and every place of
    /// the window in the ring.
    #[test]
    fn the_window_masks_are_the_per_number_tests() {
        for seq in [0u16, 1, 31, 32, 255, 256, 40_000, u16::MAX] {
            for highest in 0..=u16::MAX {
                let expected = (0..ACK_WINDOW).fold(0u32, |m, n| {
                    let s = seq.wrapping_sub(n as u16 + 1);
                    let behind = usize::from(highest.wrapping_sub(s)) < SEQ_RING;
                    m | (u32::from(behind) << n)
                });
                assert_eq!(behind_window(highest, seq), expected, "{highest} {seq}");
            }
        }
        let mut track = Track::default();
        // Every third slot unsettled.
        for i in (0..SEQ_RING as u16).step_by(3) {
            track.slot_mut(i);
        }
        for seq in 0..=u16::MAX {
            let expected = (0..ACK_WINDOW).fold(0u32, |m, n| {
                let s = usize::from(seq.wrapping_sub(n as u16 + 1)) % SEQ_RING;
                m | (u32::from(s.is_multiple_of(3)) << n)
            });
            assert_eq!(track.unsettled_window(seq), expected, "{seq}");
        }
    }

    /// Message `id` is found in its place of the log, and only while the
    /// log holds it.
    #[test]
    fn a_message_is_found_by_its_id_while_the_log_holds_it() {
        let mut track = Track::default();
        for id in 1..=(RELIABLE_LOG as u32 + 10) {
            let pos = track.next_log;
            track.log[pos] = Reliable {
                id,
                ..Reliable::default()
            };
            track.next_log = (pos + 1) % RELIABLE_LOG;
        }
        assert!(track.message(0).is_none());
        assert!(track.message(10).is_none(), "pushed out");
        for id in 11..=(RELIABLE_LOG as u32 + 10) {
            assert_eq!(track.message(id).map(|m| m.id), Some(id));
        }
    }

    impl Run {
        fn new() -> Self {
            Run(Played::new("10.0.0.2:40000", "10.0.0.1:7777", START_MS))
        }

        /// Feeds `payload` of one side at `ms`: the findings it raised, as
        /// `label frame seqno: detail`.
        fn raw(&mut self, c2s: bool, ms: u64, payload: &[u8]) -> Vec<String> {
            let found = self.0.feed_at(c2s, START_MS + ms, payload, payload.len());
            found.iter().map(show).collect()
        }

        fn send(&mut self, c2s: bool, ms: u64, seq: u16, bits: u32, m: MessageRepr) -> Vec<String> {
            self.raw(c2s, ms, &encode(seq, bits, m))
        }

        fn end(&mut self) -> Vec<String> {
            self.0.finish().iter().map(show).collect()
        }

        fn session(&self) -> &Session {
            self.0.tracker.sessions().next().expect("a session").1
        }

        fn track(&self, c2s: bool) -> &Track {
            &self.session().proto.tracks[usize::from(!c2s)]
        }
    }

    fn show(f: &Finding) -> String {
        let seqno = f.seqno.map_or(String::new(), |s| format!(" #{s}"));
        format!("{} {}{seqno}: {}", f.label(), f.frame, f.detail)
    }

    fn encode(seq: u16, bits: u32, m: MessageRepr) -> Vec<u8> {
        PacketRepr::new(seq, bits, m).to_bytes().unwrap()
    }

    fn input(move_x: f32) -> MessageRepr {
        Message::PlayerInput(PlayerInput {
            tick: 1,
            move_x,
            ..PlayerInput::default()
        })
    }

    fn chat(text: &str) -> MessageRepr {
        Message::ChatMessage(ChatMessage {
            sender_id: 1,
            channel: 1,
            message: FixedStr::new(text.as_bytes()),
        })
    }

    fn snapshot(entities: usize) -> MessageRepr {
        let e = EntityState {
            entity_id: 1,
            entity_type: 1,
            health: 100,
            ..EntityState::default()
        };
        Message::WorldSnapshot(WorldSnapshot {
            tick: 1,
            entities: vec![e; entities],
        })
    }

    fn disconnect() -> MessageRepr {
        Message::Disconnect(Reason {
            reason: 1,
            message: FixedStr::new(b"bye"),
        })
    }

    /// The bit of a packet numbered `own` that acknowledges the peer's `peer`.
    fn bit(own: u16, peer: u16) -> u32 {
        1 << own.wrapping_sub(peer).wrapping_sub(1)
    }

    /// Rule 4: numbers a newer one skips are missing, at the frame that
    /// skipped them; an ack of a missing one is kept when it comes late
    /// (reordered) and fills its slot; what is still missing at the end is
    /// judged by the windows that covered it.
    #[test]
    fn skipped_numbers_are_missing_until_a_late_packet_fills_them() {
        let mut r = Run::new();
        assert_eq!(r.send(true, 0, 10, 0, input(0.0)), [""; 0]);
        assert_eq!(r.send(true, 10, 13, 0, input(0.0)), [""; 0]);
        for seq in [11, 12] {
            let slot = r.track(true).slot(seq);
            assert_eq!(
                (slot.seq, slot.state, slot.frame),
                (seq, SlotState::Missing, 2)
            );
            assert!(!slot.acked && !slot.covered);
        }
        // The server's window (14 - 1 down to 14 - 32) covers 11 to 13; its
        // bits acknowledge 11 and 13: 12, left out while 13 (sent after it)
        // had arrived, is covered.
        assert_eq!(
            r.send(false, 20, 14, bit(14, 11) | bit(14, 13), snapshot(1)),
            [""; 0]
        );
        let slot = r.track(true).slot(11);
        assert!(slot.acked && slot.covered);
        assert!(r.track(true).slot(12).covered && !r.track(true).slot(12).acked);
        // 11 comes late: reordered, its slot seen, its ack kept.
        assert_eq!(
            r.send(true, 30, 11, 0, input(0.0)),
            ["reordered 4 #11: fills a gap below seqno 13"]
        );
        let slot = r.track(true).slot(11);
        assert_eq!(
            (slot.state, slot.acked, slot.frame),
            (SlotState::Seen, true, 4)
        );
        // 12, covered and never acknowledged, is lost at the end.
        assert_eq!(r.end(), ["lost 2 #12: "]);
        assert_eq!(r.track(true).highest, Some(13));
    }

    /// Rule 5: the first bit that acknowledges a captured packet gives the
    /// ack delay to the packet's direction and marks the reliable message it
    /// carried acknowledged (the frame, the copy and the time); later bits
    /// for it give nothing.
    #[test]
    fn the_first_ack_of_a_packet_gives_its_delay_and_acks_its_message() {
        let mut r = Run::new();
        r.send(true, 0, 100, 0, chat("hi"));
        assert_eq!(r.send(false, 30, 110, bit(110, 100), snapshot(1)), [""; 0]);
        assert_eq!(r.send(false, 60, 111, bit(111, 100), snapshot(1)), [""; 0]);
        let c2s = &r.session().c2s;
        assert_eq!(c2s.ack_delay_samples(), 1);
        assert_eq!(c2s.srtt_ns(), Some(30e6));
        let m = r.track(true).log.iter().find(|m| m.id != 0).unwrap();
        let ack = m.acked.expect("acknowledged");
        assert_eq!(
            (ack.frame, ack.seq, ack.ts),
            (2, 100, Timestamp::from_millis(START_MS + 30))
        );
        assert_eq!((m.first_frame, m.sends), (1, 1));
    }

    /// The detail of a copy that may have crossed the acknowledgement in
    /// flight: the time since the ack against the round trip, or that its
    /// packet was overtaken.
    #[test]
    fn a_copy_in_flight_says_why_it_is_unconfirmed() {
        let unconfirmed = AckReach::Unconfirmed {
            since_ack_ns: Some(5_000_000),
            round_trip_ns: Some(40_000_000),
        };
        assert_eq!(
            ack_in_flight(unconfirmed, 7, 3).to_string(),
            "unconfirmed: the ack may not have reached the sender (ack 7 captured 5.0 ms earlier < round trip 40.0 ms); first in frame 3"
        );
        assert_eq!(
            ack_in_flight(AckReach::Overtaken, 7, 3).to_string(),
            "unconfirmed: the ack may not have reached the sender (ack 7; packet overtaken, sent earlier); first in frame 3"
        );
    }

    /// Reliable messages: the same type and payload less than 10 s after the
    /// latest copy is a copy (a resend); 10 s or more after it, a new
    /// message (a first send).
    #[test]
    fn the_same_payload_is_a_copy_only_within_10_s_of_the_latest() {
        let mut r = Run::new();
        assert_eq!(r.send(true, 0, 100, 0, chat("gg")), [""; 0]);
        assert_eq!(
            r.send(true, 500, 101, 0, chat("gg")),
            [
                "retransmission 2 #101: ChatMessage retransmission 1, first sent in frame 1 500.0 ms earlier, 500.0 ms after the previous copy (the 500 ms timeout respected)"
            ]
        );
        // 10 s after the latest copy: a new message. The silence is the
        // client's own (the server sent nothing): no heartbeat finding
        // before the session times out.
        r.send(true, 10_500, 102, 0, chat("gg"));
        let c2s = &r.session().c2s;
        assert_eq!((c2s.first_sends, c2s.resends), (2, 1));
        let used: Vec<u32> = r
            .track(true)
            .log
            .iter()
            .map(|m| m.sends)
            .filter(|&n| n > 0)
            .collect();
        assert_eq!(used, [2, 1]);
    }

    /// The log's tags are its messages' hashes (their low 32 bits), place
    /// by place, over more messages than the log holds: the scan that
    /// skips the log where no tag matches misses no copy, and finds the
    /// copy of a message still in the log.
    #[test]
    fn the_log_tags_are_its_messages_hashes() {
        let mut r = Run::new();
        let n = RELIABLE_LOG as u16 + 20;
        for k in 0..n {
            r.send(true, u64::from(k) * 10, 100 + k, 0, chat(&format!("m{k}")));
        }
        let track = r.track(true);
        for (m, tag) in track.log.iter().zip(track.log_tags.iter()) {
            assert_eq!(m.hash as u32, *tag);
        }
        let latest = format!("m{}", n - 1);
        r.send(true, u64::from(n) * 10, 100 + n, 0, chat(&latest));
        let c2s = &r.session().c2s;
        assert_eq!((c2s.first_sends, c2s.resends), (u64::from(n), 1));
    }

    /// Rule 2: a header that does not decode still counts its number when it
    /// is within 32 of the direction's highest; further off, it is not
    /// trusted.
    #[test]
    fn a_damaged_header_counts_its_number_only_near_the_highest() {
        let mut r = Run::new();
        r.send(true, 0, 100, 0, input(0.0));
        let mut near = encode(102, 0, input(0.0));
        near[0] = b's';
        let f = r.raw(true, 10, &near);
        assert_eq!(f.len(), 1);
        assert!(f[0].starts_with("malformed 2: "), "{f:?}");
        assert_eq!(r.track(true).highest, Some(102));
        assert_eq!(r.track(true).slot(101).state, SlotState::Missing);
        let mut far = encode(140, 0, input(0.0));
        far[0] = b's';
        r.raw(true, 20, &far);
        assert_eq!(r.track(true).highest, Some(102));
        assert_eq!(r.session().c2s.packets, 3);
    }

    /// Bandwidth: one-second windows of payload bytes; the packet that takes
    /// a window over the budget raises `over-budget`, once per direction.
    #[test]
    fn over_budget_once_per_direction_at_the_packet_that_crosses_it() {
        let mut r = Run::new();
        // 1192 bytes each (12 + 5 + 47 * 25): 25 make 29 800 bytes, the 26th
        // 30 992, over the downstream 30 000 B/s.
        let mut found = Vec::new();
        for k in 0..60u16 {
            found.extend(r.send(false, u64::from(k) * 10, 1000 + k, 0, snapshot(25)));
        }
        assert_eq!(
            found,
            [
                "over-budget 26: 31.0 KB within the second from frame 1: over the draft's downstream budget of 30 KB/s"
            ]
        );
        r.end();
        let b = r.session().proto.bandwidth[1];
        // Every packet within the first second: one window.
        assert_eq!((b.bytes, b.peak_bytes_per_s), (60 * 1192, 60 * 1192));
    }

    /// `sent-after-disconnect`: the side's own copies of its Disconnect are
    /// not after it, its first other packet is (once); the peer's packets
    /// are only once a packet of the peer captured earlier acknowledged the
    /// Disconnect.
    #[test]
    fn after_a_disconnect_once_per_direction() {
        let mut r = Run::new();
        r.send(true, 0, 100, 0, input(0.0));
        assert_eq!(
            r.send(true, 10, 101, 0, disconnect()),
            ["disconnect-sent 2 #101: reason ClientQuit (1)"]
        );
        // The server had not received it: its packet acknowledges nothing.
        assert_eq!(r.send(false, 20, 101, 0, snapshot(1)), [""; 0]);
        // A copy of the Disconnect: a retransmission, not after it.
        let f = r.send(true, 520, 102, 0, disconnect());
        assert!(f.iter().all(|f| !f.starts_with("violation")), "{f:?}");
        assert_eq!(
            r.send(true, 530, 103, 0, input(0.0)),
            [
                "violation/sent-after-disconnect 5 #103: PlayerInput after the Disconnect of frame 2 (reason ClientQuit (1))"
            ]
        );
        assert_eq!(r.send(true, 540, 104, 0, input(0.0)), [""; 0]);
        assert!(r.track(true).after_disconnect_reported);
        // The server acknowledges the Disconnect (in frame 7), then sends a
        // snapshot: after it, once.
        assert_eq!(r.send(false, 550, 102, bit(102, 101), snapshot(1)), [""; 0]);
        assert_eq!(
            r.send(false, 560, 103, 0, snapshot(1)),
            [
                "violation/sent-after-disconnect 8 #103: WorldSnapshot after the Disconnect of frame 2 (reason ClientQuit (1))"
            ]
        );
        assert_eq!(r.send(false, 570, 104, 0, snapshot(1)), [""; 0]);
        assert_eq!(r.session().proto.state, State::Disconnected);
    }

    /// Rule 6: the sides' numbers more than 32 apart open one incident, for
    /// both sides, until a packet is back in reach.
    #[test]
    fn drift_is_one_incident_until_back_in_reach() {
        let mut r = Run::new();
        r.send(true, 0, 100, 0, input(0.0));
        let f = r.send(false, 10, 200, 0, snapshot(1));
        assert_eq!(f.len(), 1);
        assert!(
            f[0].starts_with(
                "ack-drift 2 #200: own seq 200 and the peer's newest seq 100 are 100 apart"
            ),
            "{f:?}"
        );
        assert!(r.session().proto.drift_open);
        assert_eq!(r.send(false, 20, 201, 0, snapshot(1)), [""; 0]);
        assert_eq!(r.send(true, 30, 101, 0, input(0.0)), [""; 0]);
        // 199 is within 32 of the server's 201: back in reach.
        assert_eq!(r.send(true, 40, 199, 0, input(0.0)), [""; 0]);
        assert!(!r.session().proto.drift_open);
        assert_eq!(r.send(false, 50, 300, 0, snapshot(1)).len(), 1);
    }

    /// Rule 8: a violation is an incident per (rule, type, field) and
    /// direction: raised at the first packet that breaks it, silent while
    /// the next ones of that type break it too, ended by one that does not.
    #[test]
    fn a_violation_is_one_incident_until_a_clean_packet_of_its_type() {
        let mut r = Run::new();
        assert_eq!(
            r.send(true, 0, 100, 0, input(2.0)),
            ["violation/input-range 1: PlayerInput moveX at offset 16 is 2, outside [-1, 1]"]
        );
        let open = |r: &Run| r.track(true).open.iter().flatten().count();
        assert_eq!(open(&r), 1);
        assert_eq!(r.send(true, 10, 101, 0, input(3.0)), [""; 0]);
        // A chat does not end an incident of PlayerInput.
        assert_eq!(r.send(true, 20, 102, 0, chat("x")), [""; 0]);
        assert_eq!(open(&r), 1);
        assert_eq!(r.send(true, 30, 103, 0, input(0.5)), [""; 0]);
        assert_eq!(open(&r), 0);
        assert_eq!(r.send(true, 40, 104, 0, input(2.0)).len(), 1);
    }
}
