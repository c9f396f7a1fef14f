//! The tracker: sessions, reliable sequence numbers, acks and inputs as seen at the
//! capture point, and the findings they raise.
//!
//! # The contract
//!
//! These definitions are what the tracker implements and what the simulator's
//! ground truth states; both follow this text, not each other.
//!
//! **Sessions.** A session is a (client address, server address) pair. The server
//! side is the one that sends server-only messages (Join, Leave, Add, Remove,
//! Synced, Stats, Full, Collision, Update*) or receives client-only ones (Connect,
//! Disconnect, Input); failing both, the side on port 32422; failing that, the
//! destination of the first packet. Directions are `c2s` and `s2c`.
//!
//! **Per packet**, in this order:
//! 1. `packets += 1`, `bytes += payload_len` (the UDP payload length, as sent).
//! 2. A payload the codec rejects at the header, or a message it cannot decode,
//!    raises one `malformed` finding (reason and offset in the detail), or one
//!    `truncated` finding instead when the capture cut the frame short. The
//!    messages decoded before the error are counted and analysed as below.
//! 3. A payload identical to one of the last 64 packets of the same direction
//!    raises `duplicate-packet`, whether it decodes or not; its messages are counted by type but raise
//!    nothing else and count as neither first sends nor resends. Packets with
//!    header timestamp 0 are not checked: a sender that stamps no clock repeats
//!    the same bytes on purpose (a Connect resent, a Full answered again).
//! 4. A header timestamp lower than the highest seen in that direction raises
//!    `reordered` (the packet was overtaken). Timestamp 0 is ignored: senders
//!    stamp 0 on packets without unreliable messages (the original server's Full).
//! 5. An ack lower than the highest ack seen in that direction raises
//!    `ack-regression`; an ack above the highest reliable seqno captured in the
//!    other direction raises `ack-unseen`. While the other direction has shown no
//!    reliable message, acks are not judged (they may cover messages sent before
//!    the capture began).
//! 6. A packet over 512 bytes as sent (`payload_len`, whatever the capture kept)
//!    raises `oversize` (and is decoded all the same).
//!
//! **Per reliable message**, the first rule that applies wins:
//! 1. `expected-repeat`: a Leave from the server, seen before, after the client's
//!    Disconnect was captured. Not a resend.
//! 2. `spurious-resend`: the seqno was seen in an earlier packet, and a packet of
//!    the other direction captured earlier acked it (ack >= seqno).
//! 3. `resend`: the seqno was seen in an earlier packet.
//! 4. `duplicate-in-packet`: the same seqno earlier in the same packet.
//! 5. `out-of-order`: never seen, below the highest seen: it fills a gap.
//! 6. `gap`: more than one above the highest seen. One finding per jump, the
//!    missing count in the detail. Every skipped seqno still unseen at the end of
//!    the capture (or when its session is evicted) raises one `lost`, with the
//!    frame of its gap. Only the last 512 seqnos below the highest are tracked:
//!    a single jump of more than 511 reports at most 511 `lost`.
//!
//! Otherwise the message is the next in sequence. Rules 5 and 6, and a plain next
//! message, count as first sends; rules 2 and 3 count as resends. The first
//! reliable message of a direction sets the baseline and raises nothing. A
//! resend (or spurious resend, or expected repeat) whose bytes differ from the
//! first transmission also raises a `violation` (`resend-differs`).
//!
//! **Per input stream** (Input from one client): `input-regression` for a frame
//! number lower than the last, `input-gap` when 1 to 8 frames are skipped,
//! `inputs-lost` when more than 8 are. A repeated frame number raises nothing.
//!
//! **Violations** (`violation` with a rule): the codec's (seqno 0, name or chat
//! too long, invalid UTF-8, empty update: one finding per message and rule;
//! oversize is its own kind), a message from the wrong side, the handshake
//! rules, a client using another player's id, anything but the Leave of the
//! client's own player from the server after the client's Disconnect (one per
//! message, in the server's packets that ack the Disconnect: those it sent before
//! processing it may still be in flight), more than 8 players (the server's own
//! player, index 0, counts: the original server holds 8 including it).
//!
//! **Players**: the Join answering the client's Connect names its player; a
//! rename counts when a Name changes that player's name (the client's request and
//! the server's broadcast count once); chats count the client's Chat messages,
//! first captures only.
//!
//! **Lifecycle**: `connecting` (Connect seen) -> `syncing` (Join seen) ->
//! `playing` (Synced seen) -> `disconnecting` (Disconnect seen) -> `closed` (Leave
//! after Disconnect); `rejected` (Full); `timed-out` (a peer that has sent packets
//! stays silent for more than 15 s of capture time; checked about once a second of
//! capture time and at the end; closed and rejected sessions do not time out). A
//! session whose first packet is not a Connect starts as `playing`.

pub mod finding;
mod seq;
pub mod session;
pub mod summary;
mod tracker;

pub use finding::{Detail, Direction, Finding, FindingKind, Rule, SessionId, Severity};
pub use session::{DirState, Player, Session, State};
pub use summary::{Counts, DirectionSummary, SessionSummary, Summary};
pub use tracker::{Observer, PacketEvent, Tracker, TrackerConfig};
