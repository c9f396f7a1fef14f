//! Battlegrounds' analysis: what a session is, and the rules applied to each
//! packet, on the engine's generic session table and reliability core.
//!
//! # The contract
//!
//! These definitions are what the analyzer implements; tests (and a simulator's
//! ground truth) follow this text.
//!
//! **Sessions.** A session is a (client address, server address) pair with one
//! session id. The client is the sender of client-only packets (AUTH, PING,
//! MOVE_OP) or the receiver of server-only ones (AUTH_OK, PONG, MOVE_EVENT,
//! PROP); failing both, the source of the first packet. Its first header's
//! session id is the session's. A session whose first packet is an AUTH was
//! recognised by it (`saw_auth`, states `auth-sent` -> `auth-recv` on AUTH_OK ->
//! `established` on the first PING); any other first packet means the capture
//! began after the handshake (state `midstream` for the rest of the session,
//! and the handshake rules below are not applied). An AUTH from the client with
//! another session id starts a new session on the same addresses (a reconnect);
//! the old one ends there. A peer silent for more than 15 s of capture time
//! times the session out (`timed-out`).
//!
//! **Byte order** (the revised notes: the reference implementation sends
//! big-endian, the corpus's first form is little-endian; both occur). Each
//! session reads all its packets in one order ([`BgSession::order`]), decided
//! before each packet is read until it is final: the user's preference
//! (`-o bg.byte_order:be|le`; `auto`, the default, decides per session) is
//! final; else the first packet that decodes in one order only, or whose
//! numbers are plausible in one order only (timestamps, MSG ids and lengths
//! against the packet, floats, polygon vertex counts: [`super::wire::evidence`]),
//! decides it for good; until then the session id read as the smaller number
//! is a guess (an AUTH, a PING and CLOSE tell nothing else), and when a later
//! packet decides otherwise the session id is read again in that order (packet
//! lines already written keep the id they showed). Big-endian when nothing
//! told. Outputs read each packet with its session's dialect
//! ([`engine::Analyzer::dissector`]). The order, how it was decided, the
//! session id as sent (hex), the PING round trips and who closed the session
//! are the session's notes (report and JSON). The PING/PONG form (the
//! specification's empty PING and 8-byte PONG, or the reference's PING of a
//! `u8` seq and PONG of that seq and a `u64` timestamp) is told apart by size
//! until the session's first PING; from then on the session's form is the
//! size a PING or PONG must have (a PONG one byte longer is trailing bytes,
//! as before). AUTH_OK of 8 bytes is the reference's timestamp-only form.
//!
//! **CLOSE** (channel 0, op 0x04, either side) ends the session (state
//! `closed`, [`BgSession::closed`]): by whom, at which frame, and why where
//! the capture tells: the server after 0.5 s or more without a packet from
//! the client (its idle timeout), the client after its latest PING got no
//! PONG (`ping-unanswered`, a warning, with the PINGs in a row before it that
//! got none: the reference client closes for it, so its CLOSE proves the
//! PONG did not reach it; a PING sent after the server's CLOSE is owed
//! nothing), or the client whose AUTHs were never answered. The warning
//! needs the server silent in the capture from that PING to the CLOSE: a
//! server packet captured after the PING shows the server answering, and a
//! client may close for its own reasons, so the PONG the capture lacks may
//! have been missed by the tap: `pong-not-captured`, a note
//! ("unconfirmed"), with the same detail. A packet other than CLOSE after the first CLOSE raises
//! `sent-after-close` (once per session) when captured later than the CLOSE
//! plus the session's longest PING round trip (1 s when none was measured):
//! earlier, one from the other side may have crossed the CLOSE in flight,
//! and one from the side that closed may have been sent before it and
//! overtaken by it on the way to the tap (reordered), and nothing is raised.
//!
//! **AUTHs never answered**: at the end of a session recognised by its AUTH,
//! no AUTH_OK captured (nor a server packet cut before its type), at least
//! two AUTHs (the client retried), and no client packet but AUTH and CLOSE
//! (it never behaved as if an AUTH_OK had reached it): one `auth-unanswered`
//! warning at the first AUTH, with the number of tries, their span, and
//! whether the client closed.
//!
//! **Per packet**, in this order:
//! 1. `packets += 1`, `bytes += payload_len`.
//! 2. Shorter than the header: one `truncated` finding if the capture cut it,
//!    one `malformed` (`short-header`) otherwise; nothing else.
//! 3. A session id other than the session's: `violation/session-id-changed`,
//!    once per incident (consecutive packets with the same foreign id; the
//!    incident closes at the next packet with the session's id). The packet is
//!    analysed all the same.
//! 4. A payload that does not decode: one `malformed` (reason and offset in the
//!    detail, counted by reason), or one `truncated` instead when the capture cut
//!    the datagram and the error is a shortage. A datagram the capture cut that
//!    still decodes (a MSG whose block lost its end, or a payload whose trailing
//!    bytes were cut) raises one `truncated`: its bytes are analysed, but a MSG
//!    block is not used to rebuild its message.
//! 5. Network duplicates: a packet other than AUTH, PING, MSG and MSG_ACK
//!    (AUTH and PING repeat the same 8 bytes by design; MSG and MSG_ACK are
//!    judged per block below) with the same bytes as one of the last 64 of its
//!    direction raises `duplicate-packet` and nothing else (an AUTH_OK carries
//!    the server's timestamp: two answers to two AUTHs differ).
//! 6. The codec's violations (`reserved-nonzero`, `name-not-utf8`,
//!    `msg-len-short`, `block-overrun`, `empty-block`): one finding each.
//! 7. `wrong-direction`: a client-only type from the server or a server-only
//!    one from the client (MSG and MSG_ACK go both ways). One per packet.
//!
//! **Handshake** (sessions recognised by their AUTH only):
//! - `auth-first`: client packets other than AUTH captured before the first
//!   AUTH_OK, shown to have come first: the capture later shows the AUTH_OK
//!   answering the session's only AUTH captured, or the client sending AUTH
//!   again (it had no AUTH_OK yet: a client that had one would break
//!   `auth-repeat`). One per session, at the first such packet, with their
//!   number, the last one's frame and the frame that proved them early. A
//!   tap that missed the AUTH_OK shows the same packets with no proof: they
//!   raise `auth-ok-unseen`, a note ("unconfirmed"), when the session ends,
//!   or at an AUTH_OK that may answer another AUTH than the first (the
//!   client sent more than one before it). (A capture with the AUTH_OK
//!   missed was one `auth-first` error for every client packet.)
//! - `auth-repeat`: an AUTH after a PING that followed an AUTH_OK (the client
//!   had its AUTH_OK).
//! - `auth-ok-count`: an AUTH_OK beyond the number of AUTHs captured (one
//!   AUTH_OK per AUTH). One per extra AUTH_OK.
//! - `before-ping`: server data on channel 1 or 2 (MOVE_EVENT, PROP, MSG; not
//!   MSG_ACK) before the client's first PING. Once per session: the first
//!   such packet captured before any PING is judged at the first PING the
//!   capture shows, and raised (at its frame) only when that PING is the
//!   reference's of seq 1, the client's first (its seq counts from 1). A
//!   later seq shows that the tap missed the first PINGs, and the
//!   specification's PING carries no seq: the capture cannot tell, nothing
//!   is raised; nor when no PING is captured.
//!
//! **PING and PONG**: the reference's form matches a PONG to the latest
//! live PING of its seq (the last 16 PINGs are followed): the round trip is
//! a sample; a PONG of a seq no captured PING carried raises
//! `pong-unmatched`, a note (the tap missed the PING, or it was sent before
//! the capture). The specification's form: every PING captured is owed one
//! PONG (a network duplicate of a PING is answered twice); a PONG when none
//! is owed raises `pong-unmatched` (not before the first PING captured: the
//! capture may have begun between a PING and its PONG; at most 16 are owed,
//! as PINGs lost after the capture point are never answered); the first PONG
//! after a PING is a round-trip sample from the latest PING. Samples go to
//! the client direction's ack-delay histogram and smoothed RTT, and to the
//! session's `rtt`. (Issue 30: a PONG whose PING the tap missed was
//! `violation/pong-without-ping`, an error: it proves nothing but a capture
//! miss.)
//!
//! **Movement**: `op_sig` (MOVE_OP) and `event_sig` (MOVE_EVENT) are u8 counters
//! compared with 8-bit serial arithmetic: +1 is the next, more skips values
//! (`sig-gap`, the count in the detail), older or exactly half the space away
//! is a `sig-regression` (the counter keeps its place), the same value again
//! raises nothing. Consecutive values of a stream behind its highest make one
//! `sig-regression` incident (one value overtaken, or a run behind a value
//! that jumped ahead), which raises one finding when it ends (at the first
//! value at or past the highest, or at the end of the session), at the frame
//! where it began, with its first value, the highest and the frame that
//! carried it, and the number of packets and the last frame in the detail. A MOVE_EVENT echoing an `op_sig` that no MOVE_OP captured
//! carried (among the last 128 values), once MOVE_OPs have been captured,
//! raises `echo-unseen`, once per echoed value.
//!
//! **Loss**: the movement streams are the only ones Battlegrounds numbers per
//! packet, so a direction's loss estimate (the sessions table's `loss`, the
//! JSON summary's `loss`) is the loss of its movement messages (MOVE_OP c2s,
//! MOVE_EVENT s2c), not of all its packets: `expected` counts the counter's
//! steps from the first value captured to the highest (the first counts one),
//! `lost` the values skipped (the `sig-gap` counts). A message overtaken past a
//! later one counts as lost (its regression does not give it back), and so does
//! a damaged one that does not decode.
//!
//! **Timings** (numbers on the session, `BgSession`; no finding): the PING to
//! PONG round trip is the client direction's ack delay (above). The server's
//! answer time (`answer`): from the capture of a MOVE_OP to the capture of the
//! first MOVE_EVENT echoing its `op_sig` (the latest MOVE_OP of that value, the
//! first echo only). The message completion time (`completion`): from the
//! first capture of a message's first captured block to the capture of the
//! MSG_ACK that acks its last unacked block, for a message whose blocks, each
//! captured whole before its first ack, add up to its `msg_len` (the latest 32
//! messages of a session are followed).
//!
//! **PROP**: a PROP sent bare, not inside a message, raises
//! `violation/bare-reliable` (channel 2 packets travel in MSG blocks).
//!
//! **MSG blocks**, per session, direction and channel, each block by
//! (msg_id, block_id):
//! - The first capture of a block counts as a first send. A capture again less
//!   than 100 ms after the previous one (within one retransmission round: the
//!   notes' timeouts are 200 ms to 1 s) is a network `duplicate-packet`; later,
//!   a `resend` (seqno = msg_id; the try count and the delay since the first
//!   capture in the detail), counted as a resend.
//! - msg_ids are compared with 32-bit serial arithmetic. Messages are not
//!   delivered in order: a msg_id below the highest is normal and raises
//!   nothing. A msg_id 1024 or more away from the highest (either way) raises
//!   `violation/msg-id-window` (once per msg_id in a row) and is not recorded.
//!   msg_ids skipped by a higher one and never captured by the end of the
//!   session (or pushed out of the window of the last 1024) raise a
//!   `not-captured` note, "unconfirmed: neither it nor an ack of it was
//!   captured: the tap may have missed both" (never `lost`: a block lost on
//!   the way is resent until acked, and the capture shows its resend), with
//!   the frame that skipped them, unless a MSG_ACK for them was captured (then
//!   `not-captured` was raised for it already, or `ack-unseen` when the ack
//!   came while the msg_id was above every one captured: the last 16 such
//!   msg_ids per direction and channel are remembered, so a later jump past
//!   one finds it delivered): one finding per gap, how many
//!   and the last in its detail (`engine::missed`); the count counts msg_ids.
//! - The block rebuilds its message (`engine::reassembly`: at most 4 MiB per
//!   message, 64 messages in progress per session, 64 MiB in total). A block
//!   that disagrees with its message raises `violation/block-inconsistent`; a
//!   refused message, or one given up to make room, raises `msg-given-up`
//!   (once), a note: the bound is the analyzer's, and messages pile up in
//!   progress when the tap misses blocks; a message still incomplete when
//!   the session ends raises `msg-incomplete`, a note ("unconfirmed": the blocks the capture never
//!   showed may have been missed by the tap, their acks too), at the frame of
//!   its first block. A completed message is
//!   decoded as a packet: it is counted by its type, undecodable bytes raise
//!   `malformed` (offsets in the message, its msg_id in the detail), a packet of
//!   another channel or session id raises `violation/inner-mismatch`, a MSG or
//!   MSG_ACK inside raises `violation/nested-msg`, and its payload follows the
//!   rules of its type (direction, movement) like a bare packet.
//!
//! **MSG_ACK** (raised on the acknowledging direction unless said otherwise):
//! - The first ack of a captured block ends its wait: the delay from its first
//!   capture (blocks captured once only, Karn's rule) is recorded in the block
//!   sender's ack-delay histogram and smoothed ack delay.
//! - An ack of a block never captured: `ack-unseen` if its msg_id is newer than
//!   every msg_id captured the other way on that channel (or none was), else
//!   `not-captured` on the block's direction (delivered; the capture missed it).
//!   Once per block.
//! - The receiver acks every copy of a block it gets (first, resends, network
//!   duplicates), and the capture cannot tell which copy an ack answers: each
//!   captured copy may be answered by one ack. An ack beyond the copies of its
//!   block captured before it is `duplicate-packet` within 100 ms of the
//!   previous ack, else `duplicate-ack`.
//! - At the end of the session, every captured block never acked is judged
//!   (its direction, the frame of its first capture), if the other direction
//!   sent at least one MSG_ACK on that channel (otherwise the capture sees one
//!   way only). The sender resends every unacked block after its timeout, so
//!   a block its direction's capture went on longer than the longest timeout
//!   of the notes (1 s) after, without a copy of it, got its ack (the capture
//!   missed it): `ack-missed`, a note, "the sender went on N ms without
//!   resending it" (for a block resent before, "captured N times, its last
//!   ack not captured": the resends were `resend` already). Otherwise a block
//!   sent once raises `ack-missed`, "unconfirmed" (issue 30: it was
//!   `block-unacked`), and a block resent raises `block-unacked` (a warning:
//!   its resends until its sender's capture ended prove no ack reached the
//!   sender). Blocks are followed up to 1024 per session: the oldest
//!   is judged the same way when it leaves.
//!
//! **Packets the capture cut short** (snaplen): the engine raises one
//! `truncated` per cut datagram; what a cut packet kept is analysed as above,
//! and nothing is inferred from what it did not keep. A packet cut before its
//! payload decoded may have been any packet of its header's type (any type at
//! all when the header was cut too), and the rules that count such packets
//! stand aside:
//! - an AUTH_OK it may have been: no `auth-first` after it (a cut AUTH_OK also
//!   moves the state to `auth-recv`); an AUTH: one more AUTH for
//!   `auth-ok-count`; a PING: no `before-ping` after it, and one more PONG owed;
//! - a MOVE_OP or MOVE_EVENT cut before its counter: the next step of its
//!   stream raises no `sig-gap` (the skipped values count as lost only beyond
//!   the cut packets), and no echo of an op_sig it may have carried is
//!   `echo-unseen`;
//! - a MSG cut before its msg_id: msg_ids skipped past the highest after it are
//!   neither `lost` nor `not-captured`; an ack of a block never captured that
//!   it may have been raises neither `ack-unseen` nor `not-captured`, and an ack
//!   beyond a block's captured copies is taken as its ack (no
//!   `duplicate-ack`);
//! - a MSG cut inside its block: its message is dropped from reassembly
//!   without a finding (no `msg-incomplete`), and an empty block is no
//!   `empty-block` violation;
//! - a MSG_ACK cut before its block: blocks first captured before it raise no
//!   `block-unacked`.
//!
//! Allocation: the MSG state of a session (its block table, msg_id windows
//! and reassembler) is allocated when it sends its first MSG, empty, and grows
//! with the blocks and msg_ids it holds, up to the bounds above (1024 blocks
//! followed, windows of 1024 msg_ids per direction and channel, 1024 finished
//! messages remembered): a session of one MSG costs a few hundred bytes, not
//! tables for 1024 of each. Once a table has reached its bound it no longer
//! allocates; the rest of the hot path allocates nothing per packet.

use super::findings::{self, AuthFirstBy, BlockNote, Sig, rules};
use super::wire::{
    ByteOrder, CHANNELS, DecodeError, Dialect, ErrorKind, Evidence, Header, MoveEvent, Msg, MsgAck,
    Packet, PacketType, Part, Payload, PingForm, Sender,
};
use crate::capture::{Datagram, Timestamp};
use crate::engine::reassembly::{Block, Budget, Limits, Push, Reassembler};
use crate::engine::serial::SerialSpace;
use crate::engine::wire_map::WireMap;
use crate::engine::{
    self, Detail, DirState, Direction, FindingKind, MissedCounts, ProtoSession, ProtocolInfo,
    Raise, TrackerConfig,
};
use std::collections::VecDeque;
use std::fmt;

/// A Battlegrounds session on the engine.
pub type Session = engine::Session<BgSession>;

/// The engine's tracker for Battlegrounds.
pub type Tracker = engine::Tracker<Analyzer>;

/// Silence after which a session times out.
pub const TIMEOUT_SECS: u64 = 15;
/// A block or ack captured again within this is a network duplicate.
pub const DUPLICATE_NS: u64 = 100_000_000;
/// msg_ids remembered per direction and channel; farther is out of the window.
pub const MSG_ID_WINDOW: u32 = 1024;
/// Blocks followed per session.
pub const MAX_BLOCKS_FOLLOWED: usize = 1024;
/// Unanswered PINGs counted at most: PINGs lost after the capture point are
/// never answered, and must not excuse unsolicited PONGs for ever.
pub const MAX_PINGS_OUTSTANDING: u32 = 16;
/// What the reassemblers of all sessions may hold together.
pub const TOTAL_BUFFER_BYTES: usize = 64 << 20;
/// The longest retransmission timeout of the notes: a block sent once whose
/// sender goes on this long without resending it was acknowledged.
pub const MAX_RTO_NS: u64 = 1_000_000_000;
/// PINGs of the reference's form followed for their PONG, per session.
pub const PINGS_FOLLOWED: usize = 16;
/// The server's idle timeout in the reference implementation: it closes a
/// session after this long without a packet from the client.
pub const SERVER_IDLE_NS: u64 = 500_000_000;
/// Why a msg_id never captured and never acked is not `lost`: a block lost
/// on the way is resent until acked, and the capture shows the resend; one
/// neither captured nor acked in the capture was missed by the tap with its
/// acks, or was still in flight.
pub const NEITHER_CAPTURED: &str =
    "neither it nor an ack of it was captured: the tap may have missed both";

/// The user's preference for the byte order (`-o bg.byte_order:be|le|auto`).
pub const BYTE_ORDER_PREF: &str = "bg.byte_order";

/// Where a session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum State {
    /// AUTH captured, no AUTH_OK yet.
    AuthSent,
    /// AUTH_OK captured, no PING yet.
    AuthRecv,
    /// The client's first PING captured.
    Established,
    /// The capture began after the handshake: the first packet was not AUTH.
    #[default]
    Midstream,
    /// A peer fell silent for more than 15 s.
    TimedOut,
    /// A CLOSE was captured (either side).
    Closed,
}

impl State {
    pub const fn name(self) -> &'static str {
        match self {
            State::AuthSent => "auth-sent",
            State::AuthRecv => "auth-recv",
            State::Established => "established",
            State::Midstream => "midstream",
            State::TimedOut => "timed-out",
            State::Closed => "closed",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A u8 counter stream: the highest value, the packet that carried it
/// first, and an open run of values behind it.
#[derive(Debug, Default, Clone, Copy)]
struct SigStream {
    last: Option<u8>,
    last_at: u64,
    regression: engine::Regression,
}

impl SigStream {
    /// The new value: `Ok(skipped)` when it moves forward, `Err(())` for a
    /// regression (the stream keeps its place).
    fn next(&mut self, v: u8) -> Result<u32, ()> {
        let Some(last) = self.last else {
            self.last = Some(v);
            return Ok(0);
        };
        match SerialSpace::U8.distance(u32::from(v), u32::from(last)) {
            Some(d) if d >= 0 => {
                self.last = Some(v);
                Ok(d.saturating_sub(1) as u32)
            }
            _ => Err(()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Slot {
    #[default]
    Empty,
    /// Skipped by a jump in `frame`, not captured; `acked` once a MSG_ACK of it came.
    Missing {
        frame: u64,
        ts: Timestamp,
        acked: bool,
    },
    Seen,
    /// Skipped by a jump after a MSG the capture cut before its msg_id: it
    /// may have been that one, so nothing is known of it.
    Unknown,
}

/// The msg_ids of one direction and channel: the highest, and the last
/// [`MSG_ID_WINDOW`] by their state.
///
/// The window holds the msg_ids from the lowest captured (or skipped) to the
/// highest, at most [`MSG_ID_WINDOW`] of them: it grows with what the session
/// sends (one slot for a session of one MSG), and once it spans the whole
/// window its oldest slot leaves as a new one comes, without allocating.
#[derive(Debug, Default)]
struct MsgIds {
    highest: Option<u32>,
    /// The msg_id of `slots[0]`; the last slot is the highest's.
    base: u32,
    slots: VecDeque<Slot>,
    /// The msg_id of the open out-of-window incident.
    out_of_window: Option<u32>,
    /// The latest msg_ids acked while above every one captured (acks of
    /// the unseen): delivered, so not `lost` when a later jump skips them.
    acked_ahead: AckedAhead,
}

/// The latest msg_ids acked above every one captured, a few at once (the
/// receiver acks each block as it comes: they are the last sent). Fixed
/// size, no allocation.
#[derive(Debug, Default, Clone, Copy)]
struct AckedAhead {
    ids: [u32; ACKED_AHEAD],
    len: usize,
    next: usize,
}

/// Acks of the unseen remembered per direction and channel.
const ACKED_AHEAD: usize = 16;

impl AckedAhead {
    fn insert(&mut self, id: u32) {
        if self.contains(id) {
            return;
        }
        self.ids[self.next] = id;
        self.next = (self.next + 1) % ACKED_AHEAD;
        self.len = (self.len + 1).min(ACKED_AHEAD);
    }

    fn contains(&self, id: u32) -> bool {
        self.ids[..self.len].contains(&id)
    }
}

/// What the window says of a msg_id.
enum IdCheck {
    Ok,
    OutOfWindow { highest: u32 },
}

impl MsgIds {
    /// The slot of `id`, if the window holds it.
    fn slot(&self, id: u32) -> Option<&Slot> {
        self.slots.get(id.wrapping_sub(self.base) as usize)
    }

    fn slot_mut(&mut self, id: u32) -> Option<&mut Slot> {
        self.slots.get_mut(id.wrapping_sub(self.base) as usize)
    }

    fn check(&self, id: u32) -> IdCheck {
        let Some(highest) = self.highest else {
            return IdCheck::Ok;
        };
        match SerialSpace::U32.distance(id, highest) {
            Some(d) if d.unsigned_abs() < u64::from(MSG_ID_WINDOW) => IdCheck::Ok,
            _ => IdCheck::OutOfWindow { highest },
        }
    }

    /// Records a capture of `id` (in the window); `lost` gets each missing
    /// msg_id pushed out of the window unseen and unacked, from the oldest.
    /// `after_cut`: a MSG of this direction and channel was cut before its
    /// msg_id since the highest was recorded, so the msg_ids this one skips
    /// are unknown rather than missing. Returns whether `id` is a new highest.
    fn record(
        &mut self,
        id: u32,
        frame: u64,
        ts: Timestamp,
        after_cut: bool,
        lost: &mut impl FnMut(u32, u64, Timestamp),
    ) -> bool {
        let s = SerialSpace::U32;
        let Some(highest) = self.highest else {
            self.highest = Some(id);
            self.base = id;
            self.slots.clear();
            self.slots.push_back(Slot::Seen);
            return false;
        };
        let ahead = s.distance(id, highest).unwrap_or(0);
        if ahead > 0 {
            // The msg_ids that leave the window, from the oldest.
            while !self.slots.is_empty() && id.wrapping_sub(self.base) >= MSG_ID_WINDOW {
                if let Some(Slot::Missing {
                    frame,
                    ts,
                    acked: false,
                }) = self.slots.pop_front()
                {
                    lost(self.base, frame, ts);
                }
                self.base = self.base.wrapping_add(1);
            }
            if self.slots.is_empty() {
                self.base = s.sub(id, (ahead - 1).min(i64::from(MSG_ID_WINDOW) - 1) as u32);
            }
            let skipped = if after_cut {
                Slot::Unknown
            } else {
                Slot::Missing {
                    frame,
                    ts,
                    acked: false,
                }
            };
            while self.base.wrapping_add(self.slots.len() as u32) != id {
                let next = self.base.wrapping_add(self.slots.len() as u32);
                let slot = match skipped {
                    Slot::Missing { frame, ts, .. } if self.acked_ahead.contains(next) => {
                        Slot::Missing {
                            frame,
                            ts,
                            acked: true,
                        }
                    }
                    other => other,
                };
                self.slots.push_back(slot);
            }
            self.slots.push_back(Slot::Seen);
            self.highest = Some(id);
        } else {
            // Behind the highest, in the window: below the lowest held, the
            // window reaches down to it.
            while id.wrapping_sub(self.base) as usize >= self.slots.len() {
                self.slots.push_front(Slot::Empty);
                self.base = self.base.wrapping_sub(1);
            }
            if let Some(slot) = self.slot_mut(id) {
                *slot = Slot::Seen;
            }
        }
        ahead > 0
    }

    /// Whether `id` was skipped after a MSG cut before its msg_id.
    fn unknown(&self, id: u32) -> bool {
        self.slot(id) == Some(&Slot::Unknown)
    }

    /// A MSG_ACK of `id` from the other side: a missing msg_id is delivered.
    fn acked(&mut self, id: u32) {
        if self.above_all(id) {
            self.acked_ahead.insert(id);
        } else if let Some(Slot::Missing { acked, .. }) = self.slot_mut(id) {
            *acked = true;
        }
    }

    /// Whether `id` is newer than every msg_id captured (or none was).
    fn above_all(&self, id: u32) -> bool {
        self.highest.is_none_or(|h| SerialSpace::U32.newer(id, h))
    }

    /// Every msg_id still missing and unacked, in msg_id order from the oldest.
    fn drain(&mut self, mut lost: impl FnMut(u32, u64, Timestamp)) {
        let below_highest = self.slots.len().saturating_sub(1);
        for (k, slot) in self.slots.iter_mut().take(below_highest).enumerate() {
            if let Slot::Missing {
                frame,
                ts,
                acked: false,
            } = *slot
            {
                lost(self.base.wrapping_add(k as u32), frame, ts);
            }
            *slot = Slot::Empty;
        }
    }
}

/// A block, by its sender's direction, channel, msg_id and block_id.
type BlockKey = (u8, u8, u32, u16);

#[derive(Debug, Clone, Copy, Default)]
struct BlockState {
    captured: bool,
    first_frame: u64,
    first_ts: Timestamp,
    last_frame: u64,
    last_ts: Timestamp,
    tries: u32,
    acked: bool,
    last_ack_frame: u64,
    last_ack_ts: Timestamp,
    /// Captured copies (first, resends, network duplicates) not answered by
    /// an ack yet: the receiver acks every copy it gets.
    unanswered: u32,
    /// The block's length, when its first capture kept it whole (0 otherwise).
    len: u32,
}

/// Messages followed for their completion time, per session.
const MSG_TIMINGS: usize = 32;
const _: () = assert!(MSG_TIMINGS <= 32, "timing_ack's mask");

/// A message followed for its completion time (its key in
/// [`Reliable::timing_keys`]).
#[derive(Debug, Clone, Copy, Default)]
struct MsgTiming {
    msg_len: u32,
    first_ts: Timestamp,
    /// Bytes of its blocks acked so far (each block once).
    acked_bytes: u64,
    done: bool,
}

/// What a session follows of its MSG traffic, allocated at its first MSG.
#[derive(Debug, Default)]
struct Reliable {
    blocks: WireMap<BlockKey, BlockState>,
    order: VecDeque<BlockKey>,
    /// By direction and channel.
    ids: [[MsgIds; CHANNELS as usize]; 2],
    /// MSG_ACKs sent, by direction and channel.
    acks_sent: [[u64; CHANNELS as usize]; 2],
    reassembler: Reassembler<(u8, u8, u32)>,
    /// The latest messages, for their completion time (the oldest replaced).
    timings: [MsgTiming; MSG_TIMINGS],
    /// Their keys side by side, packed ([`timing_key`]; 0: unused): looked
    /// for at every new block and first ack, found by a scan of 32 words
    /// without early exit (a few vector compares) where 32 optional tuples
    /// compared one by one cost ~130 a packet.
    timing_keys: [u64; MSG_TIMINGS],
    next_timing: usize,
}

/// A message's (direction, channel, msg_id) as one word, never 0.
fn timing_key((di, channel, msg_id): (u8, u8, u32)) -> u64 {
    1 << 48 | u64::from(di) << 40 | u64::from(channel) << 32 | u64::from(msg_id)
}

impl Reliable {
    /// A block of `key`'s message captured for the first time at `ts`.
    fn timing_start(&mut self, key: (u8, u8, u32), msg_len: u32, ts: Timestamp) {
        let key = timing_key(key);
        let held = self
            .timing_keys
            .iter()
            .fold(false, |held, k| held | (*k == key));
        if held {
            return;
        }
        self.timing_keys[self.next_timing] = key;
        self.timings[self.next_timing] = MsgTiming {
            msg_len,
            first_ts: ts,
            acked_bytes: 0,
            done: false,
        };
        self.next_timing = (self.next_timing + 1) % MSG_TIMINGS;
    }

    /// The first ack of a captured block of `len` bytes, at `ts`: the
    /// message's completion time once its blocks' bytes are all acked.
    fn timing_ack(&mut self, key: (u8, u8, u32), len: u32, ts: Timestamp) -> Option<u64> {
        let key = timing_key(key);
        // A key is held at one place at most (timing_start adds none twice).
        let at = self
            .timing_keys
            .iter()
            .enumerate()
            .fold(0u32, |at, (i, k)| at | u32::from(*k == key) << i);
        let t = self.timings.get_mut(at.trailing_zeros() as usize)?;
        t.acked_bytes += u64::from(len);
        if t.done || t.acked_bytes < u64::from(t.msg_len) {
            return None;
        }
        t.done = true;
        Some(ts.since(t.first_ts))
    }
}

/// How a session's byte order was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrderBy {
    /// Nothing told yet: big-endian, the default.
    #[default]
    Default,
    /// The session id read as the smaller number: a guess the first packet
    /// with stronger evidence overrides (the session id is then read again).
    SessionId,
    /// A packet that decodes, or whose numbers are plausible, in this order
    /// only: final.
    Bytes,
    /// The user's preference (`-o bg.byte_order:be|le`): final.
    User,
}

impl OrderBy {
    pub const fn name(self) -> &'static str {
        match self {
            OrderBy::Default => "the default: nothing told",
            OrderBy::SessionId => "the session id",
            OrderBy::Bytes => "the packets' numbers",
            OrderBy::User => "the user's preference",
        }
    }
}

/// Who closed a session, and why where the capture tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed {
    pub by: Direction,
    pub frame: u64,
    pub ts: Timestamp,
    pub reason: CloseReason,
}

/// Why a session was closed, as far as the capture tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    /// The server, after `silent_ns` without a packet from the client (its
    /// idle timeout is 0.5 s).
    ServerIdle { silent_ns: u64 },
    /// The client, after a PING got no PONG.
    MissedPong { seq: Option<u8> },
    /// The client, its AUTHs never answered.
    AuthUnanswered { tries: u64 },
    /// The capture does not tell.
    Unknown,
}

/// A PING followed for its PONG.
#[derive(Debug, Clone, Copy, Default)]
struct PingRec {
    seq: Option<u8>,
    frame: u64,
    ts: Timestamp,
    /// Not answered yet.
    live: bool,
    /// Sent after the server's CLOSE: owed nothing.
    after_close: bool,
}

/// Client packets other than AUTH captured before any AUTH_OK: one incident
/// (see the contract's `auth-first`).
#[derive(Debug, Clone, Copy)]
struct AuthFirst {
    frame: u64,
    ts: Timestamp,
    t: PacketType,
    packets: u64,
    last_frame: u64,
}

/// Battlegrounds' part of a session.
#[derive(Debug, Default)]
pub struct BgSession {
    pub state: State,
    /// The byte order its packets are read in.
    pub order: ByteOrder,
    /// How it was decided.
    pub order_by: OrderBy,
    /// The PING/PONG form its first PING showed.
    pub ping_form: Option<PingForm>,
    /// The first CLOSE captured.
    pub closed: Option<Closed>,
    after_close_raised: bool,
    /// PING to PONG round trips (matched by seq in the reference's form; the
    /// first PONG after the latest PING in the specification's).
    pub rtt: Durations,
    /// The latest PINGs, for their PONG.
    ping_recs: [PingRec; PINGS_FOLLOWED],
    next_ping: usize,
    /// Frame and capture time of the first AUTH, time of the latest.
    first_auth: Option<(u64, Timestamp)>,
    last_auth: Option<Timestamp>,
    /// Client packets other than AUTH and CLOSE.
    client_other: u64,
    /// The flow was recognised by its AUTH: the session's first packet was one.
    pub saw_auth: bool,
    /// The session id of its first packet.
    pub session_id: Option<u32>,
    wrong_id: Option<u32>,
    pub auths: u64,
    pub auth_oks: u64,
    pub pings: u64,
    /// A PING after an AUTH_OK: the client had its AUTH_OK.
    pinged_after_ok: bool,
    ping_at: Option<Timestamp>,
    /// The frame of the latest PING.
    ping_frame: u64,
    /// PINGs captured and not answered yet (at most [`MAX_PINGS_OUTSTANDING`]).
    pings_outstanding: u32,
    before_ping_raised: bool,
    /// The server's first data before any PING captured (its frame, time and
    /// type): judged at the first PING captured.
    before_ping_pending: Option<(u64, Timestamp, PacketType)>,
    /// Client packets other than AUTH captured while no AUTH_OK had been:
    /// judged when the capture shows they came first, or at the end.
    auth_first: Option<AuthFirst>,
    /// `auth_first` was judged: one finding a session.
    auth_first_judged: bool,
    op_sig: SigStream,
    event_sig: SigStream,
    /// op_sigs captured among the last 128 values.
    op_sigs: [u64; 4],
    echo_reported: Option<u8>,
    /// Capture time of the latest MOVE_OP of each op_sig value.
    op_ts: OpTimes,
    /// op_sig values whose MOVE_OP (the latest captured) an echo answered.
    op_answered: [u64; 4],
    reliable: Option<Box<Reliable>>,
    /// What packets the capture cut short may have hidden.
    cut: Cut,
    /// The server's answer time: from the capture of a MOVE_OP to the capture
    /// of the first MOVE_EVENT echoing its op_sig (the way from the tap to the
    /// server and back, and the server's own time). One sample per MOVE_OP
    /// answered, the first echo only.
    pub answer: Durations,
    /// Message completion time: from the first capture of a message's first
    /// block (the first captured) to the capture of the MSG_ACK that acked its
    /// last unacked block, for messages whose every block was captured and
    /// acked (a message of `msg_len` bytes, its blocks' bytes adding up to it).
    /// Both directions, every channel.
    pub completion: Durations,
}

/// What packets the capture cut short may have hidden, so that nothing is
/// inferred from their absence (see the contract).
#[derive(Debug, Default)]
struct Cut {
    /// A server packet cut before the first AUTH_OK may have been one.
    auth_ok_maybe: bool,
    /// Client packets cut before their type: AUTHs they may have been.
    auths_maybe: u64,
    /// A client packet cut before its type may have been a PING.
    ping_maybe: bool,
    /// Movement packets cut before their counter since the stream's last
    /// value: by direction (c2s op_sig, s2c event_sig).
    sigs: [u32; 2],
    /// By direction and channel: a MSG cut before its msg_id since the
    /// highest msg_id was recorded.
    msg_tail: [[bool; CHANNELS as usize]; 2],
    /// By direction and channel: MSGs cut before their block was known, whose
    /// acks may come (each answers one ack beyond a block's captured copies).
    msg_copies: [[u32; CHANNELS as usize]; 2],
    /// By acking direction and channel: the latest MSG_ACK cut before the
    /// block it acks was known.
    ack_at: [[Option<Timestamp>; CHANNELS as usize]; 2],
    /// op_sig values that MOVE_OPs cut before their op_sig may have carried.
    op_maybe: [u64; 4],
}

/// The capture time of a MOVE_OP per op_sig value.
#[derive(Debug, Clone, Copy)]
struct OpTimes([Timestamp; 256]);

impl Default for OpTimes {
    fn default() -> Self {
        OpTimes([Timestamp::default(); 256])
    }
}

/// Durations of one kind: how many, their sum, the shortest and the longest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Durations {
    pub samples: u64,
    pub total_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Durations {
    fn add(&mut self, ns: u64) {
        self.min_ns = if self.samples == 0 {
            ns
        } else {
            self.min_ns.min(ns)
        };
        self.max_ns = self.max_ns.max(ns);
        self.samples += 1;
        self.total_ns = self.total_ns.saturating_add(ns);
    }

    /// The mean, once there is a sample.
    pub fn mean_ns(&self) -> Option<u64> {
        self.total_ns.checked_div(self.samples)
    }
}

impl ProtoSession for BgSession {
    fn state(&self) -> &'static str {
        self.state.name()
    }

    fn is_final(&self) -> bool {
        matches!(self.state, State::TimedOut | State::Closed)
    }

    fn notes(&self) -> Vec<(&'static str, String)> {
        let mut n = vec![(
            "byte_order",
            format!(
                "byte order {} (from {})",
                self.order.name(),
                self.order_by.name()
            ),
        )];
        if let Some(id) = self.session_id {
            n.push(("session_id", format!("session id 0x{id:04x}")));
        }
        if self.rtt.samples > 0 {
            let ms = |ns: u64| ns as f64 / 1e6;
            n.push((
                "ping_rtt",
                format!(
                    "{} PING/PONG round trip{}: min {:.3} ms, mean {:.3} ms, max {:.3} ms",
                    self.rtt.samples,
                    if self.rtt.samples == 1 { "" } else { "s" },
                    ms(self.rtt.min_ns),
                    ms(self.rtt.mean_ns().unwrap_or(0)),
                    ms(self.rtt.max_ns)
                ),
            ));
        }
        if let Some(c) = self.closed {
            let who = match c.by {
                Direction::ClientToServer => "the client",
                Direction::ServerToClient => "the server",
            };
            let why = match c.reason {
                CloseReason::ServerIdle { silent_ns } => format!(
                    ": its idle timeout, no packet from the client for {} ms",
                    silent_ns / 1_000_000
                ),
                CloseReason::MissedPong { seq: Some(s) } => {
                    format!(": PING {s} got no PONG")
                }
                CloseReason::MissedPong { seq: None } => ": a PING got no PONG".to_owned(),
                CloseReason::AuthUnanswered { tries } => {
                    format!(": {tries} AUTHs never answered")
                }
                CloseReason::Unknown => String::new(),
            };
            n.push((
                "closed_by",
                format!("closed by {who} (CLOSE, frame {}){why}", c.frame),
            ));
        }
        n
    }

    fn time_out(&mut self) {
        self.state = State::TimedOut;
    }
}

/// Battlegrounds' analyzer: the rules above, per packet.
#[derive(Debug)]
pub struct Analyzer {
    budget: Budget,
    /// The byte order the user forces (`-o bg.byte_order:be|le`).
    forced: Option<ByteOrder>,
}

/// The byte order a configuration forces: `be` or `le` for
/// [`BYTE_ORDER_PREF`]; `auto` (or nothing) decides per session.
pub fn forced_order(config: &TrackerConfig) -> Option<ByteOrder> {
    match config.preference(BYTE_ORDER_PREF) {
        Some("be") => Some(ByteOrder::Big),
        Some("le") => Some(ByteOrder::Little),
        _ => None,
    }
}

const TYPE_NAMES: [&str; PacketType::COUNT] = crate::names_of!(PacketType::ALL);

const MALFORMED_NAMES: [&str; ErrorKind::ALL.len()] = crate::names_of!(ErrorKind::ALL);

/// Battlegrounds' registered data.
pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "bg",
    title: "Battlegrounds",
    message_types: &TYPE_NAMES,
    kinds: findings::KINDS,
    rules: findings::RULES,
    malformed: &MALFORMED_NAMES,
    states: &[
        "auth-sent",
        "auth-recv",
        "established",
        "midstream",
        "timed-out",
        "closed",
    ],
    spec_rates: &[],
    dissector: &super::dissect::Battlegrounds,
};

fn dir_index(d: Direction) -> u8 {
    d.index() as u8
}

fn direction_of(i: u8) -> Direction {
    if i == 0 {
        Direction::ClientToServer
    } else {
        Direction::ServerToClient
    }
}

/// Raises a finding of an earlier frame, with a seqno, on `direction`.
#[allow(clippy::too_many_arguments)]
fn raise_on(
    raise: &mut Raise<'_>,
    dir: &mut DirState,
    direction: Direction,
    kind: FindingKind,
    frame: u64,
    ts: Timestamp,
    seqno: Option<u32>,
    detail: Detail,
) {
    let (f, t, d) = (raise.frame, raise.ts, raise.direction);
    raise.frame = frame;
    raise.ts = ts;
    raise.direction = direction;
    raise.raise(dir, kind, None, seqno, detail);
    raise.frame = f;
    raise.ts = t;
    raise.direction = d;
}

impl engine::NewAnalyzer for Analyzer {
    fn new(config: &TrackerConfig) -> Self {
        Analyzer {
            budget: Budget::new(TOTAL_BUFFER_BYTES),
            forced: forced_order(config),
        }
    }
}

impl engine::Analyzer for Analyzer {
    type Session = BgSession;
    fn info(&self) -> &'static ProtocolInfo {
        &INFO
    }
    fn timeout_ns(&self) -> u64 {
        TIMEOUT_SECS * 1_000_000_000
    }

    fn src_is_server(&self, d: &Datagram<'_>) -> bool {
        let t = Header::parse(d.payload)
            .ok()
            .and_then(|h| h.packet_type().ok());
        t.is_some_and(|t| t.sender() == Sender::Server)
    }

    /// An AUTH from the client with another session id: a reconnect on the
    /// same addresses. The AUTH's length and zeros are tested first (a
    /// length compare that almost every datagram fails), before the
    /// addresses, inline in the engine's lookup.
    #[inline]
    fn restarts(&self, session: &Session, d: &Datagram<'_>) -> bool {
        super::wire::is_auth(d.payload)
            && d.src == session.client
            && !d.truncated_by_capture()
            && Header::parse_in(d.payload, session.proto.order)
                .is_ok_and(|h| session.proto.session_id.is_some_and(|s| s != h.session_id))
    }

    fn dissector(
        &self,
        session: &Session,
    ) -> Option<&'static dyn crate::proto::dissect::Dissector> {
        Some(super::dissect::for_dialect(session.proto.dialect()))
    }

    fn end(&mut self, session: &mut Session, raise: &mut Raise<'_>) {
        auth_unanswered(session, raise);
        if let Some(a) = session.proto.auth_first.take() {
            judge_auth_first(session, raise, a, AuthFirstBy::Nothing);
        }
        // Counters still behind their highest.
        raise.direction = Direction::ClientToServer;
        close_sig_regression(&mut session.c2s, raise, Sig::Op, &mut session.proto.op_sig);
        raise.direction = Direction::ServerToClient;
        let stream = &mut session.proto.event_sig;
        close_sig_regression(&mut session.s2c, raise, Sig::Event, stream);
        let Some(mut rel) = session.proto.reliable.take() else {
            return;
        };
        // Blocks never acked, in the order they were first captured (each
        // key is in `order` once, as in `blocks`: read, not removed, from
        // a map dropped after).
        for key in &rel.order {
            if let Some(b) = rel.blocks.get(key) {
                judge_unacked(session, &rel.acks_sent, raise, *key, b);
            }
        }
        // msg_ids never captured.
        for (di, ids) in rel.ids.iter_mut().enumerate() {
            let direction = direction_of(di as u8);
            for channel_ids in ids.iter_mut() {
                let dir = session.dir_mut(direction);
                let mut counts = MissedCounts::resume(dir);
                let (out, sid) = (&mut *raise.out, raise.session);
                channel_ids.drain(|msg_id, frame, ts| {
                    counts.unconfirmed_for(
                        NEITHER_CAPTURED,
                        msg_id,
                        frame,
                        ts,
                        sid,
                        direction,
                        out,
                    );
                });
                counts.close(out);
                counts.add_to(dir, out);
            }
        }
        // Messages never completed.
        let mut ended = Vec::new();
        rel.reassembler
            .drain(&mut self.budget, |_| true, |g| ended.push(g));
        ended.sort_by_key(|g| g.first_frame);
        for g in ended {
            let (di, _, msg_id) = g.key;
            let direction = direction_of(di);
            let detail = findings::incomplete(msg_id, g.msg_len, g.received, g.blocks, g.reason);
            raise_on(
                raise,
                session.dir_mut(direction),
                direction,
                findings::MSG_INCOMPLETE,
                g.first_frame,
                g.first_ts,
                Some(msg_id),
                detail,
            );
        }
    }

    fn packet(&mut self, session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) {
        decide_order(&mut session.proto, self.forced, d.payload);
        analyse(session, &mut self.budget, raise, d);
    }
}

/// A block that leaves the table, or whose session ends: `block-unacked` if it
/// was captured, never acked, and the other side acks on that channel.
fn judge_unacked(
    session: &mut Session,
    acks_sent: &[[u64; CHANNELS as usize]; 2],
    raise: &mut Raise<'_>,
    key: BlockKey,
    b: &BlockState,
) {
    let (di, channel, msg_id, block_id) = key;
    let other = usize::from(1 - di.min(1));
    let acker_acks = acks_sent
        .get(other)
        .and_then(|a| a.get(usize::from(channel)))
        .copied()
        .unwrap_or(0);
    // A MSG_ACK cut before its block, since this block's first capture, may
    // have acked it.
    let ack_cut = session
        .proto
        .cut
        .ack_at
        .get(other)
        .and_then(|a| a.get(usize::from(channel)))
        .copied()
        .flatten()
        .is_some_and(|at| at >= b.first_ts);
    if b.captured && !b.acked && acker_acks > 0 && !ack_cut {
        let direction = direction_of(di);
        // The sender resends every unacked block after its timeout, so its
        // silence since the block's last copy says the ack reached it, once
        // it went on for longer than the longest timeout: for a block resent
        // before as well, whose resends prove only that earlier acks did not
        // come (`resend` said so already).
        let after = session.dir(direction).last_ts.since(b.last_ts);
        let silent = after > MAX_RTO_NS;
        let (kind, note) = match (b.tries, silent) {
            (1, _) => (
                findings::ACK_MISSED,
                BlockNote::AckMissed {
                    ms: after / 1_000_000,
                    confirmed: silent,
                },
            ),
            (tries, true) => (
                findings::ACK_MISSED,
                BlockNote::ResentThenSilent {
                    tries,
                    ms: u32::try_from(after / 1_000_000).unwrap_or(u32::MAX),
                },
            ),
            (tries, false) => (findings::BLOCK_UNACKED, BlockNote::Unacked { tries }),
        };
        raise_on(
            raise,
            session.dir_mut(direction),
            direction,
            kind,
            b.first_frame,
            b.first_ts,
            Some(msg_id),
            findings::block(msg_id, block_id, note),
        );
    }
}

impl BgSession {
    /// How its packets are read.
    pub fn dialect(&self) -> Dialect {
        Dialect {
            order: self.order,
            ping: self.ping_form,
        }
    }
}

/// Decides (or keeps) a session's byte order before its packet is read: the
/// user's preference, else the first packet whose bytes tell it (a guess
/// from the session id until then; big-endian when nothing told).
fn decide_order(s: &mut BgSession, forced: Option<ByteOrder>, payload: &[u8]) {
    if let Some(o) = forced {
        s.order = o;
        s.order_by = OrderBy::User;
        return;
    }
    if matches!(s.order_by, OrderBy::Bytes | OrderBy::User) {
        return;
    }
    match super::wire::evidence(payload, s.ping_form) {
        Evidence::Bytes(o) => {
            if o != s.order {
                // The guess was wrong: the session id was read in the
                // other order.
                s.session_id = s.session_id.map(u32::swap_bytes);
                s.wrong_id = s.wrong_id.map(u32::swap_bytes);
            }
            s.order = o;
            s.order_by = OrderBy::Bytes;
        }
        Evidence::SessionId(o) if s.order_by == OrderBy::Default => {
            s.order = o;
            s.order_by = OrderBy::SessionId;
        }
        _ => {}
    }
}

/// At the end of a session: its AUTHs never answered, if the client retried.
fn auth_unanswered(session: &mut Session, raise: &mut Raise<'_>) {
    let s = &session.proto;
    if !s.saw_auth || s.auth_oks > 0 || s.cut.auth_ok_maybe || s.auths < 2 || s.client_other > 0 {
        return;
    }
    let (Some((frame, first)), Some(last)) = (s.first_auth, s.last_auth) else {
        return;
    };
    let closed = s.closed.is_some_and(|c| c.by == Direction::ClientToServer);
    let detail = findings::auth_unanswered(s.auths, last.since(first) / 1_000_000, closed);
    raise_on(
        raise,
        &mut session.c2s,
        Direction::ClientToServer,
        findings::AUTH_UNANSWERED,
        frame,
        first,
        None,
        detail,
    );
}

/// A payload that does not decode, as the engine counts it.
fn undecodable(raise: &mut Raise<'_>, dir: &mut DirState, d: &Datagram<'_>, error: DecodeError) {
    // A shortage is the capture's doing when the capture cut the datagram.
    let at_cut = error.kind().is_shortage();
    raise.undecodable(
        dir,
        d,
        at_cut,
        error.kind() as usize,
        findings::decode(error),
    );
}

/// Everything about one datagram of one session.
fn analyse(session: &mut Session, budget: &mut Budget, raise: &mut Raise<'_>, d: &Datagram<'_>) {
    let direction = raise.direction;
    let cut = d.truncated_by_capture();
    let dialect = session.proto.dialect();
    let header = match Header::parse_in(d.payload, dialect.order) {
        Ok(h) => h,
        Err(e) => {
            if cut {
                cut_unknown(session, direction, None, None, d.ts);
            }
            return undecodable(raise, session.dir_mut(direction), d, e);
        }
    };
    session_id(session, raise, d, &header);

    let packet = match Packet::new_checked_in(d.payload, dialect) {
        Ok(p) => p,
        Err(e) => {
            if cut && let Ok(t) = header.packet_type() {
                cut_unknown(session, direction, Some(t), Some(header.channel), d.ts);
            }
            let this = session.dir_mut(direction);
            undecodable(raise, this, d, e);
            return;
        }
    };
    if cut {
        kept_decodes(session.dir_mut(direction), raise, d, &packet);
    }
    let t = packet.packet_type();
    {
        let this = session.dir_mut(direction);
        this.messages[t.ordinal()] += 1;
        this.message_bytes[t.ordinal()] += d.payload.len() as u64;
    }
    if network_duplicate(session.dir_mut(direction), raise, d, t) {
        return;
    }
    // A network duplicate above was no packet sent after a CLOSE.
    after_close(session, raise, t);
    for v in packet.violations() {
        // A block the capture cut to nothing was not sent empty.
        if cut && v.kind() == super::wire::ViolationKind::EmptyBlock {
            continue;
        }
        raise.violation(
            session.dir_mut(direction),
            findings::codec_rule(v.kind()),
            None,
            findings::codec(v, None),
        );
    }
    match packet.payload() {
        payload @ Payload::Msg { .. } => {
            before_ping(session, raise, packet.channel(), t);
            if let Some(m) = payload.msg() {
                msg_block(session, budget, raise, packet.channel(), m, !cut);
            }
        }
        Payload::MsgAck(a) => msg_ack(session, raise, packet.channel(), a),
        payload => {
            if t == PacketType::Prop {
                raise.violation(
                    session.dir_mut(direction),
                    rules::BARE_RELIABLE,
                    None,
                    findings::packet(t, None),
                );
            }
            payload_rules(session, raise, packet.channel(), &payload, None);
        }
    }
}

/// The session's id is its first header's (it was recognised by its AUTH
/// when that is its very first packet); another id is
/// `session-id-changed`, once per incident.
fn session_id(session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>, header: &Header) {
    let direction = raise.direction;
    let c2s = direction == Direction::ClientToServer;
    if session.proto.session_id.is_none() {
        let first = session.c2s.packets + session.s2c.packets == 1;
        session.proto.session_id = Some(header.session_id);
        let is_auth = first && c2s && super::wire::is_auth(d.payload);
        session.proto.saw_auth = is_auth;
        session.proto.state = if is_auth {
            State::AuthSent
        } else {
            State::Midstream
        };
    }
    // The session id, once per incident.
    let own = session.proto.session_id.unwrap_or(header.session_id);
    if header.session_id != own {
        if session.proto.wrong_id != Some(header.session_id) {
            session.proto.wrong_id = Some(header.session_id);
            raise.violation(
                session.dir_mut(direction),
                rules::SESSION_ID_CHANGED,
                None,
                findings::session_ids(header.session_id, own),
            );
        }
    } else {
        session.proto.wrong_id = None;
    }
}

/// A datagram the capture cut whose kept bytes decode: its end is missing,
/// one `truncated`.
fn kept_decodes(this: &mut DirState, raise: &mut Raise<'_>, d: &Datagram<'_>, packet: &Packet<'_>) {
    let part = if packet.packet_type() == PacketType::Msg {
        Part::Block
    } else {
        Part::Rest
    };
    let error = DecodeError::Truncated {
        offset: d.payload.len(),
        packet_type: packet.packet_type(),
        part,
        needed: d.payload_len - d.payload.len(),
        available: 0,
    };
    raise.undecodable(
        this,
        d,
        true,
        ErrorKind::Truncated as usize,
        findings::decode(error),
    );
}

/// Network duplicates, for the packets whose bytes vary (not AUTH, PING,
/// MSG, MSG_ACK): true, with `duplicate-packet` raised, for the same bytes
/// as a recent packet of the direction.
fn network_duplicate(
    this: &mut DirState,
    raise: &mut Raise<'_>,
    d: &Datagram<'_>,
    t: PacketType,
) -> bool {
    if matches!(
        t,
        PacketType::Auth | PacketType::Ping | PacketType::Msg | PacketType::MsgAck
    ) {
        return false;
    }
    let Some(frame) = this.duplicate_datagram(d) else {
        return false;
    };
    raise.raise(
        this,
        FindingKind::DUPLICATE_PACKET,
        None,
        None,
        Detail::DuplicateOf { frame },
    );
    true
}

/// A packet after a CLOSE: `sent-after-close`, once per session, once no
/// packet sent before the CLOSE could still arrive after it (later than the
/// session's longest round trip after it; 1 s when none was measured): from
/// the other side, one that crossed the CLOSE in flight; from the side that
/// closed, one the CLOSE overtook (reordered before the tap).
fn after_close(session: &mut Session, raise: &mut Raise<'_>, t: PacketType) {
    let s = &mut session.proto;
    let Some(c) = s.closed else { return };
    if t == PacketType::Close || s.after_close_raised {
        return;
    }
    let after = raise.ts.since(c.ts);
    let reach = if s.rtt.samples > 0 {
        s.rtt.max_ns
    } else {
        1_000_000_000
    };
    if after <= reach {
        return;
    }
    s.after_close_raised = true;
    let detail = findings::sent_after_close(
        t,
        c.by == Direction::ServerToClient,
        c.frame,
        after / 1_000_000,
    );
    let direction = raise.direction;
    raise.raise(
        session.dir_mut(direction),
        findings::SENT_AFTER_CLOSE,
        None,
        None,
        detail,
    );
}

/// A CLOSE: the first ends the session (who, and why where the capture
/// tells); a client's CLOSE after a PING got no PONG raises
/// `ping-unanswered`.
fn close(session: &mut Session, raise: &mut Raise<'_>) {
    let direction = raise.direction;
    let (frame, ts) = (raise.frame, raise.ts);
    let s = &mut session.proto;
    let mut reason = CloseReason::Unknown;
    if direction == Direction::ClientToServer {
        // The latest PING, if it was owed a PONG and got none; with the
        // PINGs before it that got none either.
        let mut recent: [PingRec; PINGS_FOLLOWED] = s.ping_recs;
        recent.sort_unstable_by_key(|p| std::cmp::Reverse(p.ts));
        let owed = |p: &PingRec| p.live && !p.after_close;
        let count = recent.iter().take_while(|p| owed(p)).count() as u64;
        let unanswered = recent.first().copied().filter(|_| count > 0);
        let spec_owed = s.ping_form != Some(PingForm::Seq)
            && s.pings_outstanding > 0
            && !s.cut.ping_maybe
            && s.closed.is_none();
        if s.saw_auth && s.auth_oks == 0 && s.client_other == 0 && !s.cut.auth_ok_maybe {
            reason = CloseReason::AuthUnanswered { tries: s.auths };
        } else if let Some(p) = unanswered {
            reason = CloseReason::MissedPong { seq: p.seq };
            let answering = server_since(&session.s2c, p.ts);
            let detail = findings::ping_unanswered(
                p.seq,
                p.frame,
                ts.since(p.ts) / 1_000_000,
                count,
                answering,
            );
            for r in s.ping_recs.iter_mut() {
                r.live = false;
            }
            raise.raise(
                &mut session.c2s,
                unanswered_kind(answering),
                None,
                None,
                detail,
            );
        } else if spec_owed && let Some(at) = s.ping_at {
            reason = CloseReason::MissedPong { seq: None };
            let answering = server_since(&session.s2c, at);
            let detail = findings::ping_unanswered(
                None,
                s.ping_frame,
                ts.since(at) / 1_000_000,
                u64::from(s.pings_outstanding),
                answering,
            );
            s.pings_outstanding = 0;
            raise.raise(
                &mut session.c2s,
                unanswered_kind(answering),
                None,
                None,
                detail,
            );
        }
    } else {
        // The server's idle timeout: the client's last packet before it.
        let silent = ts.since(session.c2s.last_ts);
        if session.c2s.packets > 0 && silent >= SERVER_IDLE_NS {
            reason = CloseReason::ServerIdle { silent_ns: silent };
        }
    }
    let s = &mut session.proto;
    if s.closed.is_none() {
        s.closed = Some(Closed {
            by: direction,
            frame,
            ts,
            reason,
        });
        s.state = State::Closed;
    }
}

/// A server packet captured after `ts`: the server was answering.
fn server_since(s2c: &DirState, ts: Timestamp) -> bool {
    s2c.packets > 0 && s2c.last_ts > ts
}

/// A PING unanswered when its client closed: a warning when the server was
/// silent in the capture since, a note otherwise (the tap may have missed
/// the PONG).
fn unanswered_kind(answering: bool) -> FindingKind {
    if answering {
        findings::PONG_NOT_CAPTURED
    } else {
        findings::PING_UNANSWERED
    }
}

/// A packet the capture cut short before its payload decoded: `t` its type,
/// `channel` its header's channel (`None`: the header was cut too, it may have
/// been any packet). What it may have been is remembered, so that no rule
/// judges its absence.
fn cut_unknown(
    session: &mut Session,
    direction: Direction,
    t: Option<PacketType>,
    channel: Option<u8>,
    ts: Timestamp,
) {
    let maybe = |x: PacketType| t.is_none_or(|t| t == x);
    let s = &mut session.proto;
    let di = usize::from(dir_index(direction));
    if direction == Direction::ClientToServer {
        if maybe(PacketType::Auth) {
            s.cut.auths_maybe += 1;
        }
        if maybe(PacketType::Ping) {
            s.cut.ping_maybe = true;
            s.pings_outstanding = (s.pings_outstanding + 1).min(MAX_PINGS_OUTSTANDING);
        }
        if maybe(PacketType::MoveOp) {
            s.cut.sigs[0] += 1;
        }
    } else {
        if maybe(PacketType::AuthOk) {
            s.cut.auth_ok_maybe = true;
            if t.is_some() && s.state == State::AuthSent {
                s.state = State::AuthRecv;
            }
        }
        if maybe(PacketType::MoveEvent) {
            s.cut.sigs[1] += 1;
        }
    }
    let channels = match channel {
        Some(c) if c < CHANNELS => c..c + 1,
        Some(_) => return,
        None => 0..CHANNELS,
    };
    for ch in channels.map(usize::from) {
        if maybe(PacketType::Msg) {
            s.cut.msg_tail[di][ch] = true;
            s.cut.msg_copies[di][ch] = s.cut.msg_copies[di][ch].saturating_add(1);
        }
        if maybe(PacketType::MsgAck) {
            s.cut.ack_at[di][ch] = Some(ts);
        }
    }
}

/// Server data on channels 1 and 2 before the client's first PING.
fn before_ping(session: &mut Session, raise: &mut Raise<'_>, channel: u8, t: PacketType) {
    let s = &mut session.proto;
    if raise.direction == Direction::ServerToClient
        && s.saw_auth
        && s.pings == 0
        && !s.cut.ping_maybe
        && !s.before_ping_raised
        && (channel == 1 || channel == 2)
        && t != PacketType::MsgAck
    {
        s.before_ping_raised = true;
        s.before_ping_pending = Some((raise.frame, raise.ts, t));
    }
}

/// The first PING captured (`seq`: the reference's): the server's data
/// captured before it, if any, came before the client's first PING only if
/// this is it (seq 1); otherwise the tap may have missed the first.
fn judge_before_ping(session: &mut Session, raise: &mut Raise<'_>, seq: Option<u8>) {
    let Some((frame, ts, t)) = session.proto.before_ping_pending.take() else {
        return;
    };
    if seq != Some(1) {
        return;
    }
    let at = engine::RunSpan {
        frame,
        ts,
        seqno: None,
        messages: 1,
        packets: 1,
        last_frame: frame,
    };
    let direction = std::mem::replace(&mut raise.direction, Direction::ServerToClient);
    let detail = findings::packet(t, None);
    raise.violation_at(&mut session.s2c, rules::BEFORE_PING, &at, detail);
    raise.direction = direction;
}

/// The rules of a payload by its type, for a bare packet or one rebuilt from a
/// message (`msg_id`).
fn payload_rules(
    session: &mut Session,
    raise: &mut Raise<'_>,
    channel: u8,
    payload: &Payload<'_>,
    msg_id: Option<u32>,
) {
    let c2s = raise.direction == Direction::ClientToServer;
    type_rules(session, raise, channel, payload.packet_type(), msg_id);
    match *payload {
        // A CLOSE inside a message closes nothing: it was not sent bare.
        Payload::Close if msg_id.is_none() => close(session, raise),
        Payload::Auth if c2s => auth(session, raise, msg_id),
        Payload::AuthOk { .. } | Payload::AuthOkTimestamp { .. } if !c2s => {
            auth_ok(session, raise, msg_id)
        }
        Payload::Ping | Payload::PingSeq { .. } if c2s => {
            ping(session, raise, payload.seq(), msg_id)
        }
        Payload::PongSeq { seq, .. } if !c2s => pong_of_seq(session, raise, seq, msg_id),
        Payload::Pong { .. } if !c2s => pong(session, raise, msg_id),
        Payload::MoveOp(m) if c2s => move_op(session, raise, m.op_sig),
        Payload::MoveEvent(m) if !c2s => move_event(session, raise, m, msg_id),
        _ => {}
    }
}

/// The rules of a packet's type whatever it carries: who may send it, what
/// comes before the AUTH_OK and before the first PING, and the client's
/// packets other than AUTH and CLOSE.
fn type_rules(
    session: &mut Session,
    raise: &mut Raise<'_>,
    channel: u8,
    t: PacketType,
    msg_id: Option<u32>,
) {
    let direction = raise.direction;
    let c2s = direction == Direction::ClientToServer;
    let wrong = match t.sender() {
        Sender::Client => !c2s,
        Sender::Server => c2s,
        Sender::Both => false,
    };
    if wrong {
        raise.violation(
            session.dir_mut(direction),
            rules::WRONG_DIRECTION,
            msg_id,
            findings::packet(t, msg_id),
        );
    }
    let s = &mut session.proto;
    if c2s
        && s.saw_auth
        && s.auth_oks == 0
        && !s.cut.auth_ok_maybe
        && !s.auth_first_judged
        && t != PacketType::Auth
        && t.sender() == Sender::Client
    {
        let frame = raise.frame;
        match &mut s.auth_first {
            Some(a) => {
                a.packets += 1;
                a.last_frame = frame;
            }
            None => {
                s.auth_first = Some(AuthFirst {
                    frame,
                    ts: raise.ts,
                    t,
                    packets: 1,
                    last_frame: frame,
                });
            }
        }
    }
    if msg_id.is_none() {
        before_ping(session, raise, channel, t);
    }
    let s = &mut session.proto;
    if c2s && !matches!(t, PacketType::Auth | PacketType::Close) {
        s.client_other += 1;
    }
}

/// An AUTH from the client: counted; after a PING that followed an
/// AUTH_OK, `auth-repeat`.
fn auth(session: &mut Session, raise: &mut Raise<'_>, msg_id: Option<u32>) {
    if let Some(a) = session.proto.auth_first.take() {
        judge_auth_first(session, raise, a, AuthFirstBy::Auth);
    }
    let s = &mut session.proto;
    s.auths += 1;
    s.first_auth.get_or_insert((raise.frame, raise.ts));
    s.last_auth = Some(raise.ts);
    if s.saw_auth && s.pinged_after_ok {
        raise.violation(
            &mut session.c2s,
            rules::AUTH_REPEAT,
            msg_id,
            findings::packet(PacketType::Auth, msg_id),
        );
    }
}

/// Client packets before any AUTH_OK, judged at the packet that shows
/// whether they came first (`by`, this frame) or at the end: `auth-first`
/// when shown, else `auth-ok-unseen`, at their first packet.
fn judge_auth_first(session: &mut Session, raise: &mut Raise<'_>, a: AuthFirst, by: AuthFirstBy) {
    session.proto.auth_first_judged = true;
    let detail = findings::auth_first(a.t, a.packets, a.last_frame, by, raise.frame);
    if by.proves() {
        let at = engine::RunSpan {
            frame: a.frame,
            ts: a.ts,
            seqno: None,
            messages: a.packets.min(u64::from(u32::MAX)) as u32,
            packets: a.packets.min(u64::from(u32::MAX)) as u32,
            last_frame: a.last_frame,
        };
        let direction = std::mem::replace(&mut raise.direction, Direction::ClientToServer);
        raise.violation_at(&mut session.c2s, rules::AUTH_FIRST, &at, detail);
        raise.direction = direction;
    } else {
        raise_on(
            raise,
            &mut session.c2s,
            Direction::ClientToServer,
            findings::AUTH_OK_UNSEEN,
            a.frame,
            a.ts,
            None,
            detail,
        );
    }
}

/// An AUTH_OK from the server: one beyond the AUTHs captured is
/// `auth-ok-count`.
fn auth_ok(session: &mut Session, raise: &mut Raise<'_>, msg_id: Option<u32>) {
    if let Some(a) = session.proto.auth_first.take() {
        let s = &session.proto;
        let by = if s.auths == 1 && s.cut.auths_maybe == 0 {
            AuthFirstBy::AuthOk
        } else {
            AuthFirstBy::AuthOkOfAnother
        };
        judge_auth_first(session, raise, a, by);
    }
    let s = &mut session.proto;
    s.auth_oks += 1;
    if s.state == State::AuthSent {
        s.state = State::AuthRecv;
    }
    if s.saw_auth && s.auth_oks > s.auths + s.cut.auths_maybe {
        let detail = findings::auth_counts(s.auth_oks, s.auths);
        raise.violation(&mut session.s2c, rules::AUTH_OK_COUNT, msg_id, detail);
    }
}

/// A PING from the client: owed a PONG; the session's form is its first
/// bare PING's; the reference's form is followed by its seq.
fn ping(session: &mut Session, raise: &mut Raise<'_>, seq: Option<u8>, msg_id: Option<u32>) {
    if session.proto.pings == 0 {
        judge_before_ping(session, raise, seq);
    }
    let s = &mut session.proto;
    s.pings += 1;
    s.pinged_after_ok |= s.auth_oks > 0;
    s.ping_at = Some(raise.ts);
    s.ping_frame = raise.frame;
    s.pings_outstanding = (s.pings_outstanding + 1).min(MAX_PINGS_OUTSTANDING);
    if msg_id.is_none() && s.ping_form.is_none() {
        s.ping_form = Some(if seq.is_some() {
            PingForm::Seq
        } else {
            PingForm::Spec
        });
    }
    if seq.is_some() {
        let after_close = s.closed.is_some_and(|c| c.by == Direction::ServerToClient);
        s.ping_recs[s.next_ping] = PingRec {
            seq,
            frame: raise.frame,
            ts: raise.ts,
            live: true,
            after_close,
        };
        s.next_ping = (s.next_ping + 1) % PINGS_FOLLOWED;
    }
    if matches!(s.state, State::AuthSent | State::AuthRecv) {
        s.state = State::Established;
    }
}

/// The reference's PONG of seq `q`: the round trip from the latest live PING
/// of that seq, or `pong-unmatched` when none was captured.
fn pong_of_seq(session: &mut Session, raise: &mut Raise<'_>, q: u8, msg_id: Option<u32>) {
    let s = &mut session.proto;
    let rec = s
        .ping_recs
        .iter_mut()
        .filter(|p| p.live && p.seq == Some(q))
        .max_by_key(|p| p.ts);
    match rec {
        Some(p) => {
            p.live = false;
            let rtt = raise.ts.since(p.ts);
            if raise.ts >= p.ts {
                s.rtt.add(rtt);
            }
            s.pings_outstanding = s.pings_outstanding.saturating_sub(1);
            session.c2s.ack_delay_between(p.ts, raise.ts);
        }
        None => {
            let detail = findings::pong_unmatched(Some(q), s.pings);
            raise.raise(
                &mut session.s2c,
                findings::PONG_UNMATCHED,
                None,
                msg_id,
                detail,
            );
        }
    }
}

/// The specification's PONG: the round trip from the latest PING, and
/// `pong-unmatched` when no PING is owed one (once a PING was captured).
fn pong(session: &mut Session, raise: &mut Raise<'_>, msg_id: Option<u32>) {
    let s = &mut session.proto;
    if let Some(at) = s.ping_at.take() {
        if raise.ts >= at {
            s.rtt.add(raise.ts.since(at));
        }
        session.c2s.ack_delay_between(at, raise.ts);
    }
    let s = &mut session.proto;
    match s.pings_outstanding.checked_sub(1) {
        Some(n) => s.pings_outstanding = n,
        None if s.pings > 0 => {
            let detail = findings::pong_unmatched(None, s.pings);
            raise.raise(
                &mut session.s2c,
                findings::PONG_UNMATCHED,
                None,
                msg_id,
                detail,
            );
        }
        None => {}
    }
}

/// A MOVE_OP's `op_sig` (`v`): remembered for the echoes, and a step of the
/// client's counter.
fn move_op(session: &mut Session, raise: &mut Raise<'_>, v: u8) {
    let s = &mut session.proto;
    let last = s.op_sig.last;
    if s.cut.sigs[0] > 0
        && let Some(last) = last
    {
        // The MOVE_OPs cut before their op_sig carried values between.
        let mut x = last.wrapping_add(1);
        while x != v && x != last.wrapping_add(128) {
            s.cut.op_maybe[usize::from(x / 64)] |= 1 << (x % 64);
            x = x.wrapping_add(1);
        }
    }
    s.op_sigs[usize::from(v / 64)] |= 1 << (v % 64);
    s.cut.op_maybe[usize::from(v / 64)] &= !(1 << (v % 64));
    let far = v.wrapping_add(128);
    s.op_sigs[usize::from(far / 64)] &= !(1 << (far % 64));
    s.cut.op_maybe[usize::from(far / 64)] &= !(1 << (far % 64));
    s.op_ts.0[usize::from(v)] = raise.ts;
    s.op_answered[usize::from(v / 64)] &= !(1 << (v % 64));
    sig_step(
        &mut session.c2s,
        raise,
        Sig::Op,
        &mut session.proto.op_sig,
        v,
        last,
        &mut session.proto.cut.sigs[0],
    );
}

/// A MOVE_EVENT: the answer time of the `op_sig` it echoes, `echo-unseen`
/// for one no MOVE_OP captured carried, and a step of the server's counter.
fn move_event(session: &mut Session, raise: &mut Raise<'_>, m: MoveEvent, msg_id: Option<u32>) {
    let s = &mut session.proto;
    let last = s.event_sig.last;
    if let Some(last_op) = s.op_sig.last {
        let e = m.op_sig;
        let seen = s.op_sigs[usize::from(e / 64)] & (1 << (e % 64)) != 0;
        let answered = &mut s.op_answered[usize::from(e / 64)];
        if seen && *answered & (1 << (e % 64)) == 0 {
            *answered |= 1 << (e % 64);
            s.answer.add(raise.ts.since(s.op_ts.0[usize::from(e)]));
        }
        // An op_sig a MOVE_OP cut short may have carried is not unseen.
        let maybe = s.cut.sigs[0] > 0 || s.cut.op_maybe[usize::from(e / 64)] & (1 << (e % 64)) != 0;
        if !seen && !maybe && s.echo_reported != Some(e) {
            s.echo_reported = Some(e);
            raise.raise(
                &mut session.s2c,
                findings::ECHO_UNSEEN,
                None,
                msg_id,
                findings::echo(e, last_op),
            );
        }
    }
    sig_step(
        &mut session.s2c,
        raise,
        Sig::Event,
        &mut session.proto.event_sig,
        m.event_sig,
        last,
        &mut session.proto.cut.sigs[1],
    );
}

/// One value of a u8 counter stream. `cut`: packets of the stream cut before
/// their value since the last one (taken): the values they carried are among
/// those skipped, which then are no `sig-gap`.
fn sig_step(
    dir: &mut DirState,
    raise: &mut Raise<'_>,
    which: Sig,
    stream: &mut SigStream,
    v: u8,
    last: Option<u8>,
    cut: &mut u32,
) {
    let cut = std::mem::take(cut);
    let Some(last) = last else {
        stream.last = Some(v);
        stream.last_at = raise.frame;
        dir.count_expected(1);
        return;
    };
    let step = stream.next(v);
    if step.is_ok() {
        close_sig_regression(dir, raise, which, stream);
        if v != last {
            stream.last_at = raise.frame;
        }
    }
    if let Ok(skipped) = step
        && stream.last == Some(v)
        && v != last
    {
        // The loss estimate of the movement stream: every step was sent; the
        // packets cut short were captured.
        dir.count_expected(u64::from(skipped) + 1);
        dir.count_lost(u64::from(skipped.saturating_sub(cut)));
    }
    match step {
        Ok(0) => {}
        Ok(_) if cut > 0 => {}
        Ok(skipped) => raise.raise(
            dir,
            findings::SIG_GAP,
            None,
            None,
            findings::sigs(which, v, last, skipped),
        ),
        Err(()) => stream
            .regression
            .below(u32::from(v), u32::from(last), raise.frame, raise.ts),
    }
}

/// Ends an open run of values behind a counter's highest: one
/// `sig-regression`, at the frame where it began, in the raise's direction.
fn close_sig_regression(
    dir: &mut DirState,
    raise: &mut Raise<'_>,
    which: Sig,
    stream: &mut SigStream,
) {
    if let Some(run) = stream.regression.end() {
        let detail = findings::sig_regression(which, run, stream.last_at);
        raise.raise_at(dir, findings::SIG_REGRESSION, run.frame, run.ts, detail);
    }
}

/// The session's MSG state, allocated at its first MSG or MSG_ACK.
fn reliable(session: &mut Session) -> &mut Reliable {
    session.proto.reliable.get_or_insert_with(|| {
        // Its tables start empty and grow with the blocks and msg_ids the
        // session sends (issue 36: reserved whole here, they cost a quarter
        // of a megabyte a session before anything happened).
        Box::new(Reliable {
            reassembler: Reassembler::new(Limits::default()),
            ..Reliable::default()
        })
    })
}

/// Follows a new block key, judging the oldest one if the table is full.
fn follow(session: &mut Session, raise: &mut Raise<'_>, key: BlockKey, state: BlockState) {
    let rel = reliable(session);
    // Past half the blocks followed, a table that would grow on this insert
    // takes that room at once: the growth in between (to room for 1792)
    // rehashed its blocks for a table it then left.
    let growing =
        rel.blocks.len() >= MAX_BLOCKS_FOLLOWED / 2 && rel.blocks.len() == rel.blocks.capacity();
    if (rel.order.len() >= MAX_BLOCKS_FOLLOWED || growing)
        && rel.blocks.capacity() < 2 * MAX_BLOCKS_FOLLOWED
    {
        // The table is full and blocks start to come and go: room, once,
        // for twice the blocks followed. A table more than half full grows
        // when its tombstones run out, where one at most half full is
        // rehashed in place; where they fall depends on the hash's seed, and
        // a table of this size never grows, whatever it. Until now blocks
        // only came, and the table grew with them.
        rel.blocks
            .reserve(2 * MAX_BLOCKS_FOLLOWED - rel.blocks.len());
    }
    let evicted = if rel.order.len() >= MAX_BLOCKS_FOLLOWED {
        rel.order
            .pop_front()
            .and_then(|old| rel.blocks.remove(&old).map(|b| (old, b)))
    } else {
        None
    };
    rel.order.push_back(key);
    rel.blocks.insert(key, state);
    let acks_sent = rel.acks_sent;
    if let Some((old, b)) = evicted {
        judge_unacked(session, &acks_sent, raise, old, &b);
    }
}

/// One MSG block.
fn msg_block(
    session: &mut Session,
    budget: &mut Budget,
    raise: &mut Raise<'_>,
    channel: u8,
    m: Msg<'_>,
    whole: bool,
) {
    if !msg_id_window(session, raise, channel, &m) {
        return;
    }
    block_capture(session, raise, channel, &m, whole);
    rebuild(session, budget, raise, channel, &m, whole);
}

/// The msg_id window: a msg_id out of it raises `msg-id-window` (once per
/// msg_id in a row) and is judged no further (false); one in it is
/// recorded, and the msg_ids it skipped are followed.
fn msg_id_window(session: &mut Session, raise: &mut Raise<'_>, channel: u8, m: &Msg<'_>) -> bool {
    let direction = raise.direction;
    let di = dir_index(direction);
    let (frame, ts) = (raise.frame, raise.ts);
    let ch = usize::from(channel);

    // The msg_id window.
    let rel = reliable(session);
    let ids = &mut rel.ids[usize::from(di)][ch];
    if let IdCheck::OutOfWindow { highest } = ids.check(m.msg_id) {
        if ids.out_of_window != Some(m.msg_id) {
            ids.out_of_window = Some(m.msg_id);
            raise.violation(
                session.dir_mut(direction),
                rules::MSG_ID_WINDOW,
                Some(m.msg_id),
                findings::msg_window(m.msg_id, highest, MSG_ID_WINDOW),
            );
        }
        return false;
    }
    ids.out_of_window = None;
    {
        let rel = session.proto.reliable.as_deref_mut();
        if let Some(rel) = rel {
            let ids = &mut rel.ids[usize::from(di)][ch];
            let this = match direction {
                Direction::ClientToServer => &mut session.c2s,
                Direction::ServerToClient => &mut session.s2c,
            };
            let tail = &mut session.proto.cut.msg_tail[usize::from(di)][ch];
            let after_cut = *tail;
            let mut counts = MissedCounts::resume(this);
            let (out, sid) = (&mut *raise.out, raise.session);
            let new_highest = ids.record(
                m.msg_id,
                frame,
                ts,
                after_cut,
                &mut |id, gap_frame, gap_ts| {
                    counts.unconfirmed_for(
                        NEITHER_CAPTURED,
                        id,
                        gap_frame,
                        gap_ts,
                        sid,
                        direction,
                        out,
                    );
                },
            );
            counts.add_to(this, out);
            if new_highest {
                *tail = false;
            }
        }
    }
    true
}

/// The block: its first capture, a network duplicate (within
/// [`DUPLICATE_NS`] of the last copy) or a resend.
fn block_capture(
    session: &mut Session,
    raise: &mut Raise<'_>,
    channel: u8,
    m: &Msg<'_>,
    whole: bool,
) {
    let direction = raise.direction;
    let di = dir_index(direction);
    let (frame, ts) = (raise.frame, raise.ts);

    // The block: first capture, duplicate or resend.
    let key = (di, channel, m.msg_id, m.block_id);
    let block_len = if whole {
        u32::try_from(m.block.len()).unwrap_or(0)
    } else {
        0
    };
    let existing = reliable(session).blocks.get(&key).copied();
    match existing {
        Some(mut b) if b.captured => {
            let since_last = ts.since(b.last_ts);
            let this = session.dir_mut(direction);
            if since_last < DUPLICATE_NS {
                raise.raise(
                    this,
                    FindingKind::DUPLICATE_PACKET,
                    None,
                    Some(m.msg_id),
                    Detail::DuplicateOf {
                        frame: b.last_frame,
                    },
                );
            } else {
                b.tries += 1;
                this.resends += 1;
                raise.raise(
                    this,
                    FindingKind::RESEND,
                    None,
                    Some(m.msg_id),
                    Detail::Repeat {
                        first_frame: b.first_frame,
                        delay_ns: ts.since(b.first_ts),
                        tries: b.tries,
                    },
                );
            }
            // The receiver acks every copy it gets, a network duplicate's too.
            b.unanswered = b.unanswered.saturating_add(1);
            b.last_frame = frame;
            b.last_ts = ts;
            if let Some(slot) = reliable(session).blocks.get_mut(&key) {
                *slot = b;
            }
        }
        Some(mut b) => {
            // Acked before it was captured: its first capture now.
            session.dir_mut(direction).first_sends += 1;
            b.captured = true;
            b.first_frame = frame;
            b.first_ts = ts;
            b.last_frame = frame;
            b.last_ts = ts;
            b.tries = 1;
            b.unanswered = 1;
            b.len = block_len;
            let rel = reliable(session);
            rel.timing_start((di, channel, m.msg_id), m.msg_len, ts);
            if let Some(slot) = rel.blocks.get_mut(&key) {
                *slot = b;
            }
        }
        None => {
            session.dir_mut(direction).first_sends += 1;
            let state = BlockState {
                captured: true,
                first_frame: frame,
                first_ts: ts,
                last_frame: frame,
                last_ts: ts,
                tries: 1,
                unanswered: 1,
                len: block_len,
                ..BlockState::default()
            };
            reliable(session).timing_start((di, channel, m.msg_id), m.msg_len, ts);
            follow(session, raise, key, state);
        }
    }
}

/// Rebuilds the message from its blocks: not from a block the capture cut
/// short (`whole` false), and then not at all. A message complete is judged
/// as a packet ([`inner`]); one given up or inconsistent raises its finding.
fn rebuild(
    session: &mut Session,
    budget: &mut Budget,
    raise: &mut Raise<'_>,
    channel: u8,
    m: &Msg<'_>,
    whole: bool,
) {
    let direction = raise.direction;
    let di = dir_index(direction);
    let (frame, ts) = (raise.frame, raise.ts);

    // Rebuild the message: not from a block the capture cut short, and then
    // not at all (nothing can be said of a message one block of which is
    // unknown: it is dropped, without a finding).
    if !whole {
        if let Some(rel) = session.proto.reliable.as_deref_mut() {
            rel.reassembler.abandon((di, channel, m.msg_id), budget);
        }
        return;
    }
    let mut rel = match session.proto.reliable.take() {
        Some(r) => r,
        None => return,
    };
    let block = Block {
        msg_len: m.msg_len,
        block_id: u32::from(m.block_id),
        data: m.block,
        frame,
        ts,
    };
    let mut gave_up = [None; 4];
    let mut n_gave_up = 0usize;
    let outcome = rel
        .reassembler
        .push((di, channel, m.msg_id), block, budget, |g| {
            if let Some(slot) = gave_up.get_mut(n_gave_up) {
                *slot = Some(g);
            }
            n_gave_up += 1;
        });
    match outcome {
        Push::Complete(bytes) => {
            inner(session, raise, channel, m.msg_id, bytes);
        }
        Push::Refused(r) => raise.raise(
            session.dir_mut(direction),
            findings::MSG_GIVEN_UP,
            None,
            Some(m.msg_id),
            findings::refused(m.msg_id, r),
        ),
        Push::Inconsistent(i) => raise.violation(
            session.dir_mut(direction),
            rules::BLOCK_INCONSISTENT,
            Some(m.msg_id),
            findings::inconsistent(m.msg_id, m.block_id, i),
        ),
        Push::Buffered | Push::Duplicate | Push::Done | Push::Abandoned => {}
    }
    for g in gave_up.into_iter().flatten() {
        let (gdi, _, msg_id) = g.key;
        let gdir = direction_of(gdi);
        raise_on(
            raise,
            session.dir_mut(gdir),
            gdir,
            findings::MSG_GIVEN_UP,
            frame,
            ts,
            Some(msg_id),
            findings::incomplete(msg_id, g.msg_len, g.received, g.blocks, g.reason),
        );
    }
    session.proto.reliable = Some(rel);
}

/// A message rebuilt from its blocks, decoded as a packet.
fn inner(session: &mut Session, raise: &mut Raise<'_>, channel: u8, msg_id: u32, bytes: &[u8]) {
    let direction = raise.direction;
    let packet = match Packet::new_checked_in(bytes, session.proto.dialect()) {
        Ok(p) => p,
        Err(error) => {
            let this = session.dir_mut(direction);
            this.malformed[error.kind() as usize] += 1;
            raise.raise(
                this,
                FindingKind::MALFORMED,
                None,
                Some(msg_id),
                Detail::Decode {
                    error: findings::decode_in_message(error, msg_id),
                    captured: bytes.len(),
                    len: bytes.len(),
                },
            );
            return;
        }
    };
    let t = packet.packet_type();
    {
        let this = session.dir_mut(direction);
        this.messages[t.ordinal()] += 1;
        this.message_bytes[t.ordinal()] += bytes.len() as u64;
    }
    for v in packet.violations() {
        raise.violation(
            session.dir_mut(direction),
            findings::codec_rule(v.kind()),
            Some(msg_id),
            findings::codec(v, Some(msg_id)),
        );
    }
    let own = session.proto.session_id.unwrap_or(packet.session_id());
    if packet.channel() != channel || packet.session_id() != own {
        raise.violation(
            session.dir_mut(direction),
            rules::INNER_MISMATCH,
            Some(msg_id),
            findings::inner_mismatch(msg_id, channel, packet.channel(), packet.session_id(), own),
        );
    }
    if matches!(t, PacketType::Msg | PacketType::MsgAck) {
        raise.violation(
            session.dir_mut(direction),
            rules::NESTED_MSG,
            Some(msg_id),
            findings::packet(t, Some(msg_id)),
        );
        return;
    }
    payload_rules(
        session,
        raise,
        packet.channel(),
        &packet.payload(),
        Some(msg_id),
    );
}

/// One MSG_ACK: it acknowledges a block the other direction sent.
fn msg_ack(session: &mut Session, raise: &mut Raise<'_>, channel: u8, a: MsgAck) {
    let acker = raise.direction;
    let owner = acker.reverse();
    let ch = usize::from(channel);
    let rel = reliable(session);
    rel.acks_sent[acker.index()][ch] += 1;
    let key = (dir_index(owner), channel, a.msg_id, a.block_id);
    let existing = rel.blocks.get(&key).copied();
    match existing {
        None => ack_of_unseen(session, raise, channel, a, key),
        Some(b) => ack_of_followed(session, raise, channel, a, key, b),
    }
}

/// A MSG_ACK of a block not followed: followed from now on, acked; the
/// block above every msg_id captured is `ack-unseen`, one below
/// `not-captured` (the tap missed it), unless a MSG the capture cut short
/// may have been it.
fn ack_of_unseen(
    session: &mut Session,
    raise: &mut Raise<'_>,
    channel: u8,
    a: MsgAck,
    key: BlockKey,
) {
    let acker = raise.direction;
    let owner = acker.reverse();
    let (frame, ts) = (raise.frame, raise.ts);
    let ch = usize::from(channel);
    let rel = reliable(session);
    let ids = &mut rel.ids[owner.index()][ch];
    let above = ids.above_all(a.msg_id);
    let highest = ids.highest;
    let unknown = ids.unknown(a.msg_id);
    ids.acked(a.msg_id);
    // A MSG cut before its msg_id may have been that block.
    let cut = &mut session.proto.cut;
    let copies = &mut cut.msg_copies[owner.index()][ch];
    let cut_may_hold = unknown || (above && cut.msg_tail[owner.index()][ch]) || *copies > 0;
    *copies = copies.saturating_sub(1);
    let state = BlockState {
        acked: true,
        last_ack_frame: frame,
        last_ack_ts: ts,
        ..BlockState::default()
    };
    follow(session, raise, key, state);
    if cut_may_hold {
    } else if above {
        let detail = findings::block(a.msg_id, a.block_id, BlockNote::AckUnseen { highest });
        raise.raise(
            session.dir_mut(acker),
            FindingKind::ACK_UNSEEN,
            None,
            Some(a.msg_id),
            detail,
        );
    } else {
        let detail = findings::block(a.msg_id, a.block_id, BlockNote::NotCaptured);
        raise_on(
            raise,
            session.dir_mut(owner),
            owner,
            FindingKind::NOT_CAPTURED,
            frame,
            ts,
            Some(a.msg_id),
            detail,
        );
    }
}

/// A MSG_ACK of a block followed: the first ack of a block captured is its
/// ack delay and may complete its message's timing; an ack of a copy owed
/// one raises nothing; another is a network duplicate (within
/// [`DUPLICATE_NS`] of the last) or a `duplicate-ack`.
fn ack_of_followed(
    session: &mut Session,
    raise: &mut Raise<'_>,
    channel: u8,
    a: MsgAck,
    key: BlockKey,
    mut b: BlockState,
) {
    let acker = raise.direction;
    let owner = acker.reverse();
    let (frame, ts) = (raise.frame, raise.ts);
    let ch = usize::from(channel);
    if !b.captured {
        // Acks of a block never captured: reported once, at the first.
    } else if !b.acked || b.unanswered > 0 {
        b.unanswered = b.unanswered.saturating_sub(1);
        if !b.acked && b.tries == 1 {
            session.dir_mut(owner).ack_delay_between(b.first_ts, ts);
        }
        if !b.acked
            && let Some(ns) =
                reliable(session).timing_ack((dir_index(owner), channel, a.msg_id), b.len, ts)
        {
            session.proto.completion.add(ns);
        }
        b.acked = true;
    } else if let Some(n) = session.proto.cut.msg_copies[owner.index()][ch].checked_sub(1) {
        // The ack of a copy the capture cut before its block.
        session.proto.cut.msg_copies[owner.index()][ch] = n;
    } else if ts.since(b.last_ack_ts) < DUPLICATE_NS {
        raise.raise(
            session.dir_mut(acker),
            FindingKind::DUPLICATE_PACKET,
            None,
            Some(a.msg_id),
            Detail::DuplicateOf {
                frame: b.last_ack_frame,
            },
        );
    } else {
        raise.raise(
            session.dir_mut(acker),
            findings::DUPLICATE_ACK,
            None,
            Some(a.msg_id),
            findings::block(a.msg_id, a.block_id, BlockNote::AckedAgain),
        );
    }
    b.last_ack_frame = frame;
    b.last_ack_ts = ts;
    if let Some(slot) = reliable(session).blocks.get_mut(&key) {
        *slot = b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testing::{F, Played, compact, f};
    use crate::proto::battlegrounds::wire::{
        ByteOrder, MoveEvent, MoveOp, Movement, PacketRepr, PayloadRepr, Tag, VectorD,
    };

    // The rules on packets built here (big-endian, session id 0x1234), fed
    // to the tracker one frame every 10 ms unless told otherwise: each test
    // shows one rule's findings exactly (direction, label, frame).

    const SID: u32 = 0x1234;

    /// One capture between a client and a server on Battlegrounds' port, a
    /// frame every 10 ms unless told to wait.
    struct Capture(Played<Analyzer>);

    impl std::ops::Deref for Capture {
        type Target = Played<Analyzer>;
        fn deref(&self) -> &Self::Target {
            &self.0
        }
    }

    impl std::ops::DerefMut for Capture {
        fn deref_mut(&mut self) -> &mut Self::Target {
            &mut self.0
        }
    }

    impl Capture {
        fn new() -> Self {
            Capture(Played::new("10.0.0.2:43267", "10.0.0.1:7455", 1_000_000))
        }

        fn wait(&mut self, ms: u64) {
            self.0.now_ms += ms;
        }

        fn raw(&mut self, c2s: bool, b: &[u8]) -> Vec<F> {
            let at = self.0.now_ms + 10;
            compact(&self.0.feed_at(c2s, at, b, b.len()))
        }

        fn on(&mut self, c2s: bool, sid: u32, channel: u8, p: PayloadRepr) -> Vec<F> {
            self.raw(c2s, &bytes(sid, channel, p))
        }

        fn c2s(&mut self, p: PayloadRepr) -> Vec<F> {
            let channel = channel_of(&p);
            self.on(true, SID, channel, p)
        }

        fn s2c(&mut self, p: PayloadRepr) -> Vec<F> {
            let channel = channel_of(&p);
            self.on(false, SID, channel, p)
        }

        fn finish(&mut self) -> Vec<F> {
            compact(&self.0.finish())
        }

        /// AUTH, AUTH_OK, PING, PONG (the specification's forms): frames 1-4.
        fn established() -> Self {
            let mut c = Capture::new();
            assert_eq!(c.c2s(PayloadRepr::Auth), []);
            assert_eq!(c.session().proto.state, State::AuthSent);
            assert_eq!(c.s2c(auth_ok(1)), []);
            assert_eq!(c.session().proto.state, State::AuthRecv);
            assert_eq!(c.c2s(PayloadRepr::Ping), []);
            assert_eq!(c.session().proto.state, State::Established);
            assert_eq!(c.s2c(PayloadRepr::Pong { timestamp: 0 }), []);
            c
        }
    }

    fn bytes(sid: u32, channel: u8, p: PayloadRepr) -> Vec<u8> {
        PacketRepr::new(sid, channel, p)
            .to_bytes_in(ByteOrder::Big)
            .unwrap()
    }

    /// The channel of a type that may travel on any (the header of the
    /// others names theirs whatever is asked): movement on 1, MSG on 2, the
    /// rest on 0.
    fn channel_of(p: &PayloadRepr) -> u8 {
        match p.packet_type() {
            PacketType::MoveOp | PacketType::MoveEvent => 1,
            PacketType::Msg | PacketType::MsgAck | PacketType::Prop => 2,
            _ => 0,
        }
    }

    /// An AUTH_OK: the server's clock at `timestamp`.
    fn auth_ok(timestamp: i64) -> PayloadRepr {
        PayloadRepr::AuthOk {
            movement: Movement {
                timestamp,
                ..Default::default()
            },
            name: b"ann".to_vec(),
        }
    }

    fn op(op_sig: u8) -> PayloadRepr {
        PayloadRepr::MoveOp(MoveOp {
            op_sig,
            ..MoveOp::default()
        })
    }

    fn event(op_sig: u8, event_sig: u8) -> PayloadRepr {
        PayloadRepr::MoveEvent(MoveEvent {
            op_sig,
            event_sig,
            ..MoveEvent::default()
        })
    }

    fn prop() -> PayloadRepr {
        PayloadRepr::PropCircle {
            prop_id: 1,
            position: VectorD::default(),
            shape_type: Tag,
            center: Default::default(),
            radius: 1.0,
            render_data: vec![],
        }
    }

    /// One MSG carrying `inner` whole in its block 0.
    fn msg(msg_id: u32, inner: Vec<u8>) -> PayloadRepr {
        PayloadRepr::Msg {
            msg_id,
            msg_len: inner.len() as u32,
            block_id: 0,
            block: inner,
        }
    }

    fn ack(msg_id: u32, block_id: u16) -> PayloadRepr {
        PayloadRepr::MsgAck(MsgAck { msg_id, block_id })
    }

    #[test]
    fn a_clean_handshake_raises_nothing_and_a_close_ends_the_session() {
        let mut c = Capture::established();
        assert_eq!(c.s2c(event(0, 1)), []);
        assert_eq!(c.c2s(PayloadRepr::Close), []);
        let s = &c.session().proto;
        assert_eq!(s.state, State::Closed);
        assert!(s.saw_auth);
        assert_eq!(
            s.closed.map(|c| (c.by, c.frame)),
            Some((Direction::ClientToServer, 6))
        );
        assert_eq!(c.finish(), []);
    }

    #[test]
    fn handshake_rules_judge_a_session_recognised_by_its_auth() {
        let mut c = Capture::new();
        assert_eq!(c.c2s(PayloadRepr::Auth), []);
        // A MOVE_OP before the AUTH_OK of the only AUTH: shown by it.
        assert_eq!(c.c2s(op(1)), []);
        assert_eq!(c.s2c(auth_ok(1)), [f("c2s", "violation/auth-first", 2)]);
        // A second AUTH_OK for one AUTH.
        assert_eq!(c.s2c(auth_ok(2)), [f("s2c", "violation/auth-ok-count", 4)]);
        // Server data on channel 1 before the first PING: once, judged at
        // the client's PING seq 1.
        assert_eq!(c.s2c(event(1, 1)), []);
        assert_eq!(c.s2c(event(1, 2)), []);
        assert_eq!(
            c.raw(true, &seq_ping(1)),
            [f("s2c", "violation/before-ping", 5)]
        );
        // An AUTH after a PING that followed the AUTH_OK.
        assert_eq!(
            c.c2s(PayloadRepr::Auth),
            [f("c2s", "violation/auth-repeat", 8)]
        );
    }

    #[test]
    fn a_session_seen_midstream_is_not_judged_by_the_handshake() {
        let mut c = Capture::new();
        assert_eq!(c.c2s(op(1)), []);
        assert_eq!(c.s2c(event(1, 1)), []);
        assert_eq!(c.session().proto.state, State::Midstream);
        assert!(!c.session().proto.saw_auth);
        assert_eq!(c.finish(), []);
    }

    #[test]
    fn a_type_from_the_wrong_side_and_a_bare_prop_are_violations() {
        let mut c = Capture::established();
        assert_eq!(c.s2c(op(1)), [f("s2c", "violation/wrong-direction", 5)]);
        assert_eq!(c.s2c(prop()), [f("s2c", "violation/bare-reliable", 6)]);
    }

    #[test]
    fn a_foreign_session_id_is_one_violation_per_incident() {
        let mut c = Capture::established();
        let foreign = |c: &mut Capture, sig| c.on(true, 0x9999, 1, op(sig));
        let changed = |frame| [f("c2s", "violation/session-id-changed", frame)];
        assert_eq!(foreign(&mut c, 1), changed(5));
        assert_eq!(foreign(&mut c, 2), []);
        assert_eq!(c.c2s(op(3)), []);
        assert_eq!(foreign(&mut c, 4), changed(8));
    }

    #[test]
    fn movement_counters_skip_regress_and_echo() {
        let mut c = Capture::established();
        assert_eq!(c.c2s(op(1)), []);
        assert_eq!(c.c2s(op(2)), []);
        // Two values skipped.
        assert_eq!(c.c2s(op(5)), [f("c2s", "sig-gap", 7)]);
        assert_eq!(c.detail("sig-gap"), "op_sig 5 after 2 (2 skipped)");
        // Behind the highest: one regression, raised when the stream is back.
        assert_eq!(c.c2s(op(4)), []);
        assert_eq!(c.c2s(op(6)), [f("c2s", "sig-regression", 8)]);
        // The server echoes an op_sig no MOVE_OP carried: once per value.
        assert_eq!(c.s2c(event(3, 1)), [f("s2c", "echo-unseen", 10)]);
        assert_eq!(c.s2c(event(3, 2)), []);
        assert_eq!(c.s2c(event(6, 3)), []);
        // Answered: from the MOVE_OP of 6 (frame 9) to its first echo.
        assert_eq!(c.session().proto.answer.samples, 1);
        assert_eq!(c.finish(), []);
    }

    #[test]
    fn a_pong_no_ping_is_owed_is_unmatched() {
        let mut c = Capture::established();
        assert_eq!(
            c.s2c(PayloadRepr::Pong { timestamp: 1 }),
            [f("s2c", "pong-unmatched", 5)]
        );
        // The round trip of the handshake's PING was sampled.
        assert_eq!(c.session().proto.rtt.samples, 1);
    }

    #[test]
    fn a_packet_sent_after_close_is_raised_once() {
        let mut c = Capture::established();
        // A round trip of 60 ms.
        assert_eq!(c.c2s(PayloadRepr::Ping), []);
        c.wait(50);
        assert_eq!(c.s2c(PayloadRepr::Pong { timestamp: 1 }), []);
        assert_eq!(c.s2c(PayloadRepr::Close), []);
        // From the other side, soon after: it may have crossed the CLOSE.
        assert_eq!(c.c2s(op(1)), []);
        // From the side that closed, soon after: the CLOSE may have
        // overtaken it on the way to the tap.
        assert_eq!(c.s2c(event(1, 1)), []);
        c.wait(100);
        // Later than any round trip: raised, once.
        assert_eq!(c.s2c(event(1, 2)), [f("s2c", "sent-after-close", 10)]);
        assert_eq!(c.s2c(event(1, 3)), []);
    }

    #[test]
    fn msg_blocks_are_first_sends_duplicates_and_resends_and_their_acks_are_judged() {
        let mut c = Capture::established();
        let inner = bytes(SID, 2, prop());
        assert_eq!(c.s2c(msg(1, inner.clone())), []);
        assert_eq!(c.session().s2c.first_sends, 1);
        // The same block again within 100 ms: the network's copy.
        assert_eq!(
            c.s2c(msg(1, inner.clone())),
            [f("s2c", "duplicate-packet", 6)]
        );
        // Later: the sender's resend.
        c.wait(200);
        assert_eq!(c.s2c(msg(1, inner.clone())), [f("s2c", "resend", 7)]);
        // Three copies captured, three acks owed; a fourth is a duplicate ack.
        for _ in 0..3 {
            assert_eq!(c.c2s(ack(1, 0)), []);
        }
        c.wait(200);
        assert_eq!(c.c2s(ack(1, 0)), [f("c2s", "duplicate-ack", 11)]);
        // An ack above every msg_id captured: of a block unseen.
        assert_eq!(c.c2s(ack(5, 0)), [f("c2s", "ack-unseen", 12)]);
        // Block 0 of msg 3 never captured, acked below the highest: the tap
        // missed it.
        assert_eq!(c.s2c(msg(4, inner.clone())), []);
        assert_eq!(c.c2s(ack(3, 0)), [f("s2c", "not-captured", 14)]);
    }

    /// A tap missing the server's MSG #2 while the client's ack of it was
    /// captured (an ack of the unseen: #2 above every msg_id captured then):
    /// #3 skips it, and it was `lost` at the end; the ack shows it delivered.
    #[test]
    fn a_msg_id_acked_before_a_jump_skipped_it_is_not_lost() {
        let mut c = Capture::established();
        let inner = bytes(SID, 2, prop());
        assert_eq!(c.s2c(msg(1, inner.clone())), []);
        assert_eq!(c.c2s(ack(1, 0)), []);
        assert_eq!(c.c2s(ack(2, 0)), [f("c2s", "ack-unseen", 7)]);
        assert_eq!(c.s2c(msg(3, inner.clone())), []);
        assert_eq!(c.c2s(ack(3, 0)), []);
        assert_eq!(c.finish(), []);
    }

    /// The reference's PING: the specification's and its `u8` seq.
    fn seq_ping(seq: u8) -> Vec<u8> {
        let mut b = bytes(SID, 0, PayloadRepr::Ping);
        b.push(seq);
        b
    }

    /// A tap missing the client's first PINGs made the server's data after
    /// them `violation/before-ping`: only data captured before PING seq 1 is.
    #[test]
    fn data_before_ping_is_judged_by_the_first_pings_seq() {
        let start = |c: &mut Capture| {
            assert_eq!(c.c2s(PayloadRepr::Auth), []);
            assert_eq!(c.s2c(auth_ok(1)), []);
            assert_eq!(c.s2c(event(1, 1)), []);
        };
        // PING 3 first: PINGs 1 and 2 were missed.
        let mut c = Capture::new();
        start(&mut c);
        assert_eq!(c.raw(true, &seq_ping(3)), []);
        assert_eq!(c.finish(), []);
        // PING 1: the client's first came after the data.
        let mut c = Capture::new();
        start(&mut c);
        assert_eq!(
            c.raw(true, &seq_ping(1)),
            [f("s2c", "violation/before-ping", 3)]
        );
        // No PING at all: nothing.
        let mut c = Capture::new();
        start(&mut c);
        assert_eq!(c.finish(), []);
    }

    #[test]
    fn a_message_rebuilt_from_its_blocks_is_judged_as_a_packet() {
        let mut c = Capture::established();
        // A PROP inside a MSG: reliable, as it should be.
        assert_eq!(c.s2c(msg(1, bytes(SID, 2, prop()))), []);
        assert_eq!(c.session().s2c.messages[PacketType::Prop.ordinal()], 1);
        // Another session id inside than outside.
        assert_eq!(
            c.s2c(msg(2, bytes(0x9999, 2, prop()))),
            [f("s2c", "violation/inner-mismatch", 6)]
        );
        // A MSG inside a MSG.
        let nested = bytes(SID, 2, msg(9, bytes(SID, 2, prop())));
        assert_eq!(c.s2c(msg(3, nested)), [f("s2c", "violation/nested-msg", 7)]);
    }

    /// The msg_id window as it was before issue 36: 1024 slots reserved
    /// whole, each holding the latest msg_id of its residue.
    /// With the acks of the unseen of today's window (`AckedAhead`).
    struct Model {
        highest: Option<u32>,
        slots: Vec<(u32, Slot)>,
        acked_ahead: AckedAhead,
    }

    impl Model {
        fn new() -> Self {
            Model {
                highest: None,
                slots: vec![(0, Slot::Empty); MSG_ID_WINDOW as usize],
                acked_ahead: AckedAhead::default(),
            }
        }

        fn index(id: u32) -> usize {
            (id % MSG_ID_WINDOW) as usize
        }

        fn evict(&mut self, id: u32, lost: &mut Vec<(u32, u64)>) {
            let (old, slot) = self.slots[Self::index(id)];
            if old != id
                && let Slot::Missing {
                    frame,
                    acked: false,
                    ..
                } = slot
            {
                lost.push((old, frame));
            }
        }

        fn record(&mut self, id: u32, frame: u64, after_cut: bool, lost: &mut Vec<(u32, u64)>) {
            let s = SerialSpace::U32;
            let highest = *self.highest.get_or_insert(id);
            let ahead = s.distance(id, highest).unwrap_or(0);
            if ahead > 0 {
                let skipped = (ahead - 1).min(i64::from(MSG_ID_WINDOW) - 1) as u32;
                for k in (1..=skipped).rev() {
                    let m = s.sub(id, k);
                    self.evict(m, lost);
                    let slot = if after_cut {
                        Slot::Unknown
                    } else {
                        Slot::Missing {
                            frame,
                            ts: Timestamp(frame),
                            acked: self.acked_ahead.contains(m),
                        }
                    };
                    self.slots[Self::index(m)] = (m, slot);
                }
                self.evict(id, lost);
                self.highest = Some(id);
            }
            self.slots[Self::index(id)] = (id, Slot::Seen);
        }

        fn unknown(&self, id: u32) -> bool {
            self.slots[Self::index(id)] == (id, Slot::Unknown)
        }

        fn acked(&mut self, id: u32) {
            if self.highest.is_none_or(|h| SerialSpace::U32.newer(id, h)) {
                self.acked_ahead.insert(id);
            } else if let (m, Slot::Missing { acked, .. }) = &mut self.slots[Self::index(id)]
                && *m == id
            {
                *acked = true;
            }
        }

        fn drain(&mut self, lost: &mut Vec<(u32, u64)>) {
            let Some(highest) = self.highest else { return };
            for k in (1..MSG_ID_WINDOW).rev() {
                let id = highest.wrapping_sub(k);
                let slot = &mut self.slots[Self::index(id)];
                if slot.0 == id {
                    if let Slot::Missing {
                        frame,
                        acked: false,
                        ..
                    } = slot.1
                    {
                        lost.push((id, frame));
                    }
                    slot.1 = Slot::Empty;
                }
            }
        }
    }

    #[test]
    fn the_growing_msg_id_window_judges_as_the_reserved_one_did() {
        // Random walks of msg_ids (steps within and beyond the window either
        // way, across the u32 wrap), cut MSGs and acks: the same `lost` in
        // the same order, the same unknowns, the same drain, and never more
        // than MSG_ID_WINDOW slots held.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for walk in 0..200u64 {
            let (mut ids, mut model) = (MsgIds::default(), Model::new());
            let (mut got, mut want) = (Vec::new(), Vec::new());
            let mut id = if walk % 2 == 0 {
                u32::MAX - 3000
            } else {
                rnd(1 << 32) as u32
            };
            let spread = [4, 40, 1100, 3000][(walk % 4) as usize];
            for frame in 0..600u64 {
                id = id.wrapping_add((rnd(2 * spread + 1) as u32).wrapping_sub(spread as u32));
                match rnd(4) {
                    0 => {
                        ids.acked(id);
                        model.acked(id);
                    }
                    1 => assert_eq!(ids.unknown(id), model.unknown(id), "walk {walk}"),
                    _ => {
                        if matches!(ids.check(id), IdCheck::Ok) {
                            let cut = rnd(8) == 0;
                            ids.record(id, frame, Timestamp(frame), cut, &mut |m, f, _| {
                                got.push((m, f))
                            });
                            model.record(id, frame, cut, &mut want);
                            assert_eq!(ids.highest, model.highest);
                        }
                    }
                }
                assert!(ids.slots.len() <= MSG_ID_WINDOW as usize);
                assert_eq!(got, want, "walk {walk}, frame {frame}");
            }
            ids.drain(|m, f, _| got.push((m, f)));
            model.drain(&mut want);
            assert_eq!(got, want, "walk {walk}, drained");
        }
    }

    #[test]
    fn a_session_of_one_msg_holds_one_msg_id() {
        let mut ids = MsgIds::default();
        ids.record(7, 1, Timestamp(1), false, &mut |_, _, _| {});
        assert_eq!(ids.slots.len(), 1);
        ids.record(9, 2, Timestamp(2), false, &mut |_, _, _| {});
        assert_eq!(ids.slots.len(), 3);
        assert!(matches!(
            ids.check(5000),
            IdCheck::OutOfWindow { highest: 9 }
        ));
        ids.record(1000, 3, Timestamp(3), false, &mut |_, _, _| {});
        assert_eq!(ids.slots.len(), 994, "from 7 to 1000");
    }
}
