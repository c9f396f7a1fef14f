//! Battlegrounds' own registered findings: the kinds, rules and details only it
//! has, beside the shared ones of [`crate::engine::FindingKind`]. The exact
//! contract of each is in [`super::analysis`].

use super::wire::{DecodeError, PacketType, Violation, ViolationKind};
use crate::engine::finding::Word;
use crate::engine::reassembly::{GiveUpReason, Inconsistency, Refusal};
use crate::engine::{Detail, RegressionRun, Rule};
use std::fmt;

crate::protocol_kinds! { "bg";
    /// A message some of whose blocks were captured, never completed in the
    /// capture by its end (or of its session). A note, "unconfirmed": a
    /// block the capture never showed was lost or missed by the tap, and a
    /// capture cannot tell which (its ack may have been missed too), so the
    /// message may well have reached its receiver whole.
    MSG_INCOMPLETE = "msg-incomplete", Sequence, Note, 17;
    /// A message the analyzer stopped rebuilding: over a bound of what it
    /// buffers (per message, in total, messages at once). A note: the bound
    /// is the analyzer's, not the protocol's, and messages pile up in
    /// progress when the tap misses blocks, so it says nothing against the
    /// traffic.
    MSG_GIVEN_UP = "msg-given-up", Sequence, Note, 18;
    /// A MSG block its sender resent, never acknowledged by a MSG_ACK the
    /// other way by the end of its session, and resent until its sender's
    /// capture ended (its last copy within the longest retransmission
    /// timeout, 1 s, of it): the sender's resends prove no ack reached it (a
    /// block whose sender went on longer without resending it got its ack,
    /// which the capture missed: `ack-missed`).
    BLOCK_UNACKED = "block-unacked", Ack, Warning, 19;
    /// An op_sig or event_sig that skipped values (u8 serial arithmetic).
    SIG_GAP = "sig-gap", Stream, Note, 20;
    /// A run of op_sig or event_sig values older than the highest (u8 serial
    /// arithmetic): one per run, with its length.
    SIG_REGRESSION = "sig-regression", Stream, Warning, 21;
    /// A MOVE_EVENT echoing an op_sig no MOVE_OP captured carried.
    ECHO_UNSEEN = "echo-unseen", Stream, Note, 22;
    /// A MSG_ACK captured again with no capture of its block in between, later
    /// than a network duplicate.
    DUPLICATE_ACK = "duplicate-ack", Ack, Note, 23;
    /// A PONG no captured PING owed (the reference's form: no PING of its seq
    /// captured; the specification's: no PING owed): the tap missed the PING
    /// (or it was sent before the capture began). A capture miss, not a fault.
    PONG_UNMATCHED = "pong-unmatched", Sequence, Note, 24;
    /// A session whose client sent AUTH at least twice (it retried: the first
    /// went unanswered), never answered by an AUTH_OK, and never sent anything
    /// but AUTH and CLOSE (it never behaved as if one had reached it): the
    /// server is down or does not know the session. One per session, with the
    /// number of tries.
    AUTH_UNANSWERED = "auth-unanswered", Protocol, Warning, 25;
    /// The client's latest PING got no PONG captured, the server sent
    /// nothing captured since, and the client closed the session (the
    /// reference client closes when a PING gets no PONG: its CLOSE proves the
    /// PONG did not reach it). Not for a PING sent after the
    /// server's CLOSE, which owes nothing. One per CLOSE, with the PINGs in a
    /// row that got none.
    PING_UNANSWERED = "ping-unanswered", Protocol, Warning, 26;
    /// A packet other than CLOSE after a CLOSE, from either side, captured
    /// later than the CLOSE plus the session's longest round trip (1 s when
    /// none was measured), so that it could not have crossed the CLOSE in
    /// flight (the other side's) nor been overtaken by it on the way to the
    /// tap (the closing side's). One per session.
    SENT_AFTER_CLOSE = "sent-after-close", Protocol, Warning, 27;
    /// A MSG block whose MSG_ACK was not captured and whose sender stopped
    /// sending it: its sender's silence shows it was acknowledged (the capture
    /// missed the ack) once the sender went on for longer than the longest
    /// retransmission timeout (1 s) after its last copy. A block captured
    /// once whose capture ended sooner: "unconfirmed" (one resent is
    /// `block-unacked` then).
    ACK_MISSED = "ack-missed", Ack, Note, 28;
    /// Client packets other than AUTH captured before any AUTH_OK, which the
    /// capture does not show came first: no AUTH_OK captured after them
    /// answers the session's only AUTH, and the client sent no AUTH after
    /// them (the tap may have missed the AUTH_OK). A note, "unconfirmed"; one
    /// per session, at the first such packet, with their number.
    AUTH_OK_UNSEEN = "auth-ok-unseen", Protocol, Note, 29;
    /// The client closed after its latest PING got no PONG captured, while
    /// server packets were captured after the PING: the server was
    /// answering, and the PONG was lost or missed by the tap (a capture
    /// cannot tell which; a client may close for its own reasons). A note,
    /// "unconfirmed"; `ping-unanswered` when the server was silent since.
    PONG_NOT_CAPTURED = "pong-not-captured", Protocol, Note, 30;
}

crate::protocol_rules! { "bg";
    /// The header's reserved byte is not 0.
    RESERVED_NONZERO = "reserved-nonzero", 0;
    /// AUTH_OK's name is not UTF-8.
    NAME_NOT_UTF8 = "name-not-utf8", 1;
    /// A MSG whose msg_len is shorter than a packet header.
    MSG_LEN_SHORT = "msg-len-short", 2;
    /// A MSG block longer than its whole message.
    BLOCK_OVERRUN = "block-overrun", 3;
    /// An empty MSG block of a message that has bytes.
    EMPTY_BLOCK = "empty-block", 4;
    /// Client packets other than AUTH before the first AUTH_OK, in a session
    /// whose AUTH was captured, shown to have come first: the AUTH_OK
    /// answering the only AUTH, or an AUTH from the client, captured after
    /// them. AUTH must come first. One per session.
    AUTH_FIRST = "auth-first", 5;
    /// More AUTH_OKs than AUTHs captured: one AUTH_OK per AUTH.
    AUTH_OK_COUNT = "auth-ok-count", 6;
    /// AUTH after the client's first PING: it had its AUTH_OK.
    AUTH_REPEAT = "auth-repeat", 7;
    /// Server data on channel 1 or 2 captured before the client's first PING,
    /// shown as such: the first PING captured is the reference's of seq 1.
    BEFORE_PING = "before-ping", 8;
    /// A session id other than the session's, inside its flow.
    SESSION_ID_CHANGED = "session-id-changed", 9;
    /// A client-only packet from the server, or a server-only one from the client.
    WRONG_DIRECTION = "wrong-direction", 10;
    /// A msg_id far outside the window of the messages seen.
    MSG_ID_WINDOW = "msg-id-window", 11;
    /// A MSG block that disagrees with its message (msg_len, block size, count, bytes).
    BLOCK_INCONSISTENT = "block-inconsistent", 12;
    /// A packet of the reliable channel sent bare, not in MSG blocks.
    BARE_RELIABLE = "bare-reliable", 13;
    /// A message whose packet names another channel or session than its MSG.
    INNER_MISMATCH = "inner-mismatch", 14;
    /// A message that is itself a MSG or MSG_ACK.
    NESTED_MSG = "nested-msg", 15;
}

/// The rule of a codec violation.
pub const fn codec_rule(kind: ViolationKind) -> Rule {
    match kind {
        ViolationKind::ReservedNonZero => rules::RESERVED_NONZERO,
        ViolationKind::InvalidUtf8 => rules::NAME_NOT_UTF8,
        ViolationKind::MsgLenShort => rules::MSG_LEN_SHORT,
        ViolationKind::BlockOverrun => rules::BLOCK_OVERRUN,
        ViolationKind::EmptyBlock => rules::EMPTY_BLOCK,
    }
}

/// Which u8 counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sig {
    Op,
    Event,
}

impl Sig {
    pub const fn name(self) -> &'static str {
        match self {
            Sig::Op => "op_sig",
            Sig::Event => "event_sig",
        }
    }
}

/// What is said of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockNote {
    /// Captured `tries` times, never acked.
    Unacked { tries: u32 },
    /// Acked, never captured.
    NotCaptured,
    /// Acked, above every msg_id captured the other way (`None`: none was).
    AckUnseen { highest: Option<u32> },
    /// Acked again.
    AckedAgain,
    /// Sent once, its ack not captured; the sender went on `ms` without
    /// resending it (`confirmed`: longer than a retransmission timeout).
    AckMissed { ms: u64, confirmed: bool },
    /// Captured `tries` times, its last ack not captured; the sender went on
    /// `ms`, longer than a retransmission timeout, after its last copy
    /// without resending it.
    ResentThenSilent { tries: u32, ms: u32 },
}

/// What judged client packets captured before any AUTH_OK (`auth-first`,
/// `auth-ok-unseen`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFirstBy {
    /// The AUTH_OK answering the session's only AUTH, captured after them.
    AuthOk,
    /// An AUTH from the client captured after them.
    Auth,
    /// An AUTH_OK that may answer a later AUTH than the first.
    AuthOkOfAnother,
    /// Nothing by the session's end.
    Nothing,
}

impl AuthFirstBy {
    /// The capture shows the packets came before the client had an AUTH_OK.
    pub const fn proves(self) -> bool {
        matches!(self, AuthFirstBy::AuthOk | AuthFirstBy::Auth)
    }
}

/// "message N: " before the detail of a packet rebuilt from a message's
/// blocks.
fn in_message(msg: Option<u32>) -> impl fmt::Display {
    fmt::from_fn(move |f| match msg {
        Some(id) => write!(f, "message {id}: "),
        None => Ok(()),
    })
}

/// One block of one message, and what is said of it.
pub fn block(msg_id: u32, block_id: u16, note: BlockNote) -> Detail {
    match note {
        BlockNote::Unacked { tries } => block_unacked(msg_id, block_id, tries),
        BlockNote::NotCaptured => block_not_captured(msg_id, block_id),
        BlockNote::AckUnseen { highest } => ack_unseen(msg_id, block_id, highest.unwrap_or(0)),
        BlockNote::AckedAgain => acked_again(msg_id, block_id),
        BlockNote::AckMissed { ms, confirmed } => ack_missed(msg_id, block_id, ms, confirmed),
        BlockNote::ResentThenSilent { tries, ms } => {
            resent_then_silent(msg_id, block_id, tries, ms)
        }
    }
}

/// A message the reassembler refuses.
pub fn refused(msg_id: u32, r: Refusal) -> Detail {
    match r {
        Refusal::TooLarge { msg_len, max } => too_large(msg_id, msg_len, max),
        Refusal::TooManyBlocks { blocks, max } => too_many_blocks(msg_id, blocks, max),
        Refusal::NoBudget { msg_len, available } => no_budget(msg_id, msg_len, available),
    }
}

/// A block that disagrees with its message.
pub fn inconsistent(msg_id: u32, block_id: u16, i: Inconsistency) -> Detail {
    match i {
        Inconsistency::LengthChanged { msg_len, expected } => {
            length_changed(msg_id, block_id, msg_len, expected)
        }
        Inconsistency::BeyondEnd { blocks, .. } => beyond_end(msg_id, block_id, blocks),
        Inconsistency::WrongSize { len, expected, .. } => {
            wrong_size(msg_id, block_id, len, expected)
        }
        Inconsistency::Overlong { len, msg_len } => overlong(msg_id, block_id, len, msg_len),
        Inconsistency::Empty { .. } => empty_block(msg_id, block_id),
        Inconsistency::Differs { .. } => block_differs(msg_id, block_id),
    }
}

impl Word for Sig {
    const BITS: u32 = 1;
    fn to_arg(self) -> u64 {
        u64::from(self == Sig::Event)
    }
    fn from_arg(bits: u64) -> Self {
        if bits == 0 { Sig::Op } else { Sig::Event }
    }
}

impl Word for AuthFirstBy {
    const BITS: u32 = 2;
    fn to_arg(self) -> u64 {
        self as u64
    }
    fn from_arg(bits: u64) -> Self {
        match bits {
            0 => AuthFirstBy::AuthOk,
            1 => AuthFirstBy::Auth,
            2 => AuthFirstBy::AuthOkOfAnother,
            _ => AuthFirstBy::Nothing,
        }
    }
}

impl Word for GiveUpReason {
    const BITS: u32 = 2;
    fn to_arg(self) -> u64 {
        match self {
            GiveUpReason::Capacity => 0,
            GiveUpReason::Budget => 1,
            GiveUpReason::Ended => 2,
        }
    }
    fn from_arg(bits: u64) -> Self {
        match bits {
            0 => GiveUpReason::Capacity,
            1 => GiveUpReason::Budget,
            _ => GiveUpReason::Ended,
        }
    }
}

/// Why an analyzer's bound is not the traffic's fault, as a detail says it.
const BOUND: &str = "(the analyzer's bound, not a fault of the traffic)";

crate::proto_details! { "bg";
    /// A decode error of a datagram as a finding's detail.
    pub fn decode(error: DecodeError) -> ProtoDetail => |f| write!(f, "{error}");

    /// A decode error of the message `msg_id` rebuilt from its blocks (offsets in
    /// the message).
    pub fn decode_in_message(error: DecodeError, msg_id: u32) -> ProtoDetail => |f| {
        write!(f, "{}{error}", in_message(Some(msg_id)))
    };

    /// A codec violation as a finding's detail; `msg_id` for a packet rebuilt
    /// from a message's blocks.
    pub fn codec(v: Violation, msg_id: Option<u32>) => |f| write!(f, "{}{v}", in_message(msg_id));

    /// A packet type where it does not belong; `msg_id` when it was rebuilt from
    /// a message.
    pub fn packet(t: PacketType, msg_id: Option<u32>) => |f| {
        f.write_str(t.name())?;
        match msg_id {
            Some(id) => write!(f, " in message {id}"),
            None => Ok(()),
        }
    };

    /// A session id other than the session's own.
    pub fn session_ids(seen: u32, own: u32) => |f| {
        write!(f, "session id {seen} in the flow of session {own}")
    };

    /// AUTH_OKs and AUTHs captured so far.
    pub fn auth_counts(auth_oks: u64, auths: u64) => |f| {
        write!(f, "AUTH_OK number {auth_oks} for {auths} AUTH captured")
    };

    /// A counter's new value after its last, with the values skipped.
    pub fn sigs(which: Sig, value: u8, last: u8, skipped: u32) => |f| {
        write!(f, "{} {value} after {last}", which.name())?;
        if skipped > 0 {
            write!(f, " ({skipped} skipped)")?;
        }
        Ok(())
    };

    /// A run of a counter's values behind its highest (`highest`, first
    /// carried in `last_at`): the first of them (`value`), the run's length and
    /// last frame.
    fn sig_run(which: Sig, value: u8, highest: u8, last_at: u64, packets: u32, last_frame: u64) => |f| {
        write!(f, "{} {value} after {highest} of frame {last_at}", which.name())?;
        crate::engine::finding::below_until(f, packets, "packets", last_frame)
    };

    /// An echoed op_sig never captured, and the last one captured.
    pub fn echo(op_sig: u8, last: u8) => |f| {
        write!(f, "MOVE_EVENT echoes op_sig {op_sig}; the last op_sig captured is {last}")
    };

    /// A msg_id outside the window around the highest seen.
    pub fn msg_window(msg_id: u32, highest: u32, window: u32) => |f| {
        write!(
            f,
            "msg_id {msg_id} is outside the window of {window} around the highest msg_id {highest}"
        )
    };

    fn block_unacked(msg_id: u32, block_id: u16, tries: u32) => |f| {
        write!(f, "block {block_id} of message {msg_id}, captured {tries} times, never acknowledged")
    };

    fn block_not_captured(msg_id: u32, block_id: u16) => |f| {
        write!(
            f,
            "block {block_id} of message {msg_id} was never captured: the other side acknowledged it"
        )
    };

    fn ack_unseen(msg_id: u32, block_id: u16, highest: u32) => |f| {
        write!(
            f,
            "block {block_id} of message {msg_id} acknowledged, above every msg_id captured the \
             other way (highest {highest})"
        )
    };

    fn acked_again(msg_id: u32, block_id: u16) => |f| {
        write!(
            f,
            "block {block_id} of message {msg_id} acknowledged again, its block not captured again"
        )
    };

    fn ack_missed(msg_id: u32, block_id: u16, ms: u64, confirmed: bool) => |f| {
        write!(f, "block {block_id} of message {msg_id} sent once, its ack not captured")?;
        if confirmed {
            write!(f, ": the sender went on {ms} ms without resending it")
        } else {
            write!(
                f,
                "; unconfirmed: the sender's capture ended {ms} ms after it, within a \
                 retransmission timeout"
            )
        }
    };

    fn resent_then_silent(msg_id: u32, block_id: u16, tries: u32, ms: u32) => |f| {
        write!(
            f,
            "block {block_id} of message {msg_id}, captured {tries} times, its last ack not \
             captured: the sender went on {ms} ms after its last copy without resending it"
        )
    };

    /// A message given up in progress.
    pub fn incomplete(
        msg_id: u32,
        msg_len: u32,
        received: u32,
        blocks: Option<u32>,
        reason: GiveUpReason,
    ) => |f| {
        write!(f, "message {msg_id} of {msg_len} bytes: {received}")?;
        match blocks {
            None | Some(0) => write!(
                f,
                " {} captured (block 0 never captured, count unknown)",
                if received == 1 { "block" } else { "blocks" }
            )?,
            Some(blocks) => write!(f, " of its {blocks} blocks captured")?,
        }
        match reason {
            GiveUpReason::Capacity => write!(f, "; given up: too many messages in progress {BOUND}"),
            GiveUpReason::Budget => {
                write!(f, "; given up: the total buffer budget needed room {BOUND}")
            }
            GiveUpReason::Ended => f.write_str(
                "; never completed in the capture; unconfirmed: the tap may have missed the rest",
            ),
        }
    };

    fn too_large(msg_id: u32, msg_len: u32, max: u32) => |f| {
        write!(
            f,
            "message {msg_id} not rebuilt {BOUND}: msg_len {msg_len} is over the {max}-byte limit \
             per message"
        )
    };

    fn too_many_blocks(msg_id: u32, blocks: u64, max: u32) => |f| {
        write!(
            f,
            "message {msg_id} not rebuilt {BOUND}: its block size makes {blocks} blocks (at most {max})"
        )
    };

    fn no_budget(msg_id: u32, msg_len: u32, available: usize) => |f| {
        write!(
            f,
            "message {msg_id} not rebuilt {BOUND}: msg_len {msg_len} does not fit the {available} \
             bytes left of the total budget"
        )
    };

    fn length_changed(msg_id: u32, block_id: u16, msg_len: u32, expected: u32) => |f| {
        write!(
            f,
            "message {msg_id} block {block_id}: msg_len {msg_len} differs from its message's {expected}"
        )
    };

    fn beyond_end(msg_id: u32, block_id: u16, blocks: u32) => |f| {
        write!(f, "message {msg_id} block {block_id}: beyond the message's {blocks} blocks")
    };

    fn wrong_size(msg_id: u32, block_id: u16, len: usize, expected: usize) => |f| {
        write!(
            f,
            "message {msg_id} block {block_id}: {len} bytes where its place needs {expected}"
        )
    };

    fn overlong(msg_id: u32, block_id: u16, len: usize, msg_len: u32) => |f| {
        write!(
            f,
            "message {msg_id} block {block_id}: block 0 of {len} bytes is longer than msg_len {msg_len}"
        )
    };

    fn empty_block(msg_id: u32, block_id: u16) => |f| {
        write!(f, "message {msg_id} block {block_id}: empty")
    };

    fn block_differs(msg_id: u32, block_id: u16) => |f| {
        write!(f, "message {msg_id} block {block_id}: captured again with other bytes")
    };

    /// A rebuilt packet whose channel or session id differs from its MSG's.
    pub fn inner_mismatch(msg_id: u32, msg_channel: u8, channel: u8, sid: u32, own: u32) => |f| {
        write!(
            f,
            "message {msg_id} on channel {msg_channel} carries a packet of channel {channel} and \
             session {sid} (the session's is {own})"
        )
    };

    /// A PONG no captured PING owed: its seq (the reference's form), the PINGs
    /// captured.
    pub fn pong_unmatched(seq: Option<u8>, pings: u64) => |f| match seq {
        Some(seq) => write!(
            f,
            "PONG seq {seq}: no PING of that seq captured (not captured: the tap missed it, or it \
             was sent before the capture)"
        ),
        None => write!(
            f,
            "PONG with no PING owed ({pings} PINGs captured; not captured: the tap missed one, or \
             it was sent before the capture)"
        ),
    };

    /// Client packets before any AUTH_OK: the first one's type, how many, the
    /// last one's frame, what judged them and at which frame.
    pub fn auth_first(t: PacketType, packets: u64, last_frame: u64, by: AuthFirstBy, frame: u64) => |f| {
        f.write_str(t.name())?;
        match packets {
            0 | 1 => {}
            2 => write!(f, " and 1 more client packet (frame {last_frame})")?,
            n => write!(f, " and {} more client packets (to frame {last_frame})", n - 1)?,
        }
        match by {
            AuthFirstBy::AuthOk => write!(
                f,
                " before the AUTH_OK at frame {frame}, the answer to the only AUTH captured"
            ),
            AuthFirstBy::Auth => write!(
                f,
                " before the client's AUTH again at frame {frame}: it had no AUTH_OK yet"
            ),
            AuthFirstBy::AuthOkOfAnother => write!(
                f,
                " before the AUTH_OK at frame {frame}; unconfirmed: the client sent more than one \
                 AUTH, this may answer a later one, and the tap may have missed the AUTH_OK of an \
                 earlier one"
            ),
            AuthFirstBy::Nothing => f.write_str(
                " with no AUTH_OK captured before them; unconfirmed: the tap may have missed the AUTH_OK",
            ),
        }
    };

    /// AUTHs never answered: how many, over how long, and whether the client
    /// closed.
    pub fn auth_unanswered(tries: u64, span_ms: u64, closed: bool) => |f| {
        write!(f, "AUTH sent {tries} times over {span_ms} ms, never answered by an AUTH_OK")?;
        if closed {
            f.write_str("; the client gave up with CLOSE")?;
        }
        Ok(())
    };

    /// The latest PING without a PONG before the client's CLOSE; `answering`:
    /// server packets were captured after it.
    pub fn ping_unanswered(
        seq: Option<u8>,
        frame: u64,
        waited_ms: u64,
        count: u64,
        answering: bool,
    ) => |f| {
        f.write_str("PING")?;
        if let Some(seq) = seq {
            write!(f, " seq {seq}")?;
        }
        write!(f, " of frame {frame} got no PONG in {waited_ms} ms; the client closed the session")?;
        if count > 1 {
            write!(f, " ({count} PINGs unanswered)")?;
        }
        if answering {
            f.write_str(
                "; unconfirmed: server packets were captured after the PING, the tap may have \
                 missed the PONG",
            )?;
        }
        Ok(())
    };

    /// A packet of type `t` sent `after_ms` after the CLOSE of frame
    /// `close_frame` that the client or the server (`closer_is_server`) sent.
    pub fn sent_after_close(
        t: PacketType,
        closer_is_server: bool,
        close_frame: u64,
        after_ms: u64,
    ) => |f| {
        write!(
            f,
            "{} {after_ms} ms after the {}'s CLOSE of frame {close_frame}",
            t.name(),
            if closer_is_server { "server" } else { "client" }
        )
    };
}

/// A run of a counter's values behind its highest (`run.highest`, first
/// carried in `last_at`): the first of them, the run's length and last frame.
pub fn sig_regression(which: Sig, run: RegressionRun, last_at: u64) -> Detail {
    sig_run(
        which,
        run.value as u8,
        run.highest as u8,
        last_at,
        run.packets,
        run.last_frame,
    )
}

#[cfg(test)]
mod tests {
    use super::super::wire::Part;
    use super::*;
    use crate::engine::finding::round_trip;

    #[test]
    fn rules_have_their_full_names() {
        // Slots and names of every protocol: `proto::tests`.
        assert_eq!(
            rules::BEFORE_PING.full_name().to_string(),
            "bg.violation.before-ping"
        );
    }

    /// Each disagreement of a block reads as its own sentence after the
    /// message and block it names.
    #[test]
    fn inconsistent_blocks_read_as_their_kind() {
        let all = [
            (
                Inconsistency::LengthChanged {
                    msg_len: 90,
                    expected: 80,
                },
                "msg_len 90 differs from its message's 80",
            ),
            (
                Inconsistency::BeyondEnd {
                    block_id: 4,
                    blocks: 3,
                },
                "beyond the message's 3 blocks",
            ),
            (
                Inconsistency::WrongSize {
                    block_id: 4,
                    len: 12,
                    expected: 16,
                },
                "12 bytes where its place needs 16",
            ),
            (
                Inconsistency::Overlong {
                    len: 40,
                    msg_len: 30,
                },
                "block 0 of 40 bytes is longer than msg_len 30",
            ),
            (Inconsistency::Empty { block_id: 4 }, "empty"),
            (
                Inconsistency::Differs { block_id: 4 },
                "captured again with other bytes",
            ),
        ];
        for (i, text) in all {
            assert_eq!(
                inconsistent(7, 4, i).to_string(),
                format!("message 7 block 4: {text}")
            );
        }
    }

    #[test]
    fn decode_details_read_as_the_errors() {
        let all = [
            DecodeError::ShortHeader { len: 3 },
            DecodeError::UnknownVersion { version: 7 },
            DecodeError::UnknownType {
                channel: 3,
                op: 0x10,
            },
            DecodeError::Truncated {
                offset: 42,
                packet_type: PacketType::AuthOk,
                part: Part::Name,
                needed: 200,
                available: 3,
            },
            DecodeError::NegativeLength {
                offset: 45,
                packet_type: PacketType::Prop,
                part: Part::RenderData,
                len: -300,
            },
            DecodeError::UnknownShape {
                offset: 32,
                shape_type: 9,
            },
            DecodeError::TrailingBytes {
                offset: 16,
                packet_type: PacketType::Pong,
                count: 5,
            },
        ];
        for e in all {
            assert_eq!(round_trip(e), e);
            assert_eq!(decode(e).to_string(), e.to_string());
        }
        assert_eq!(
            decode_in_message(all[3], 9).to_string(),
            format!("message 9: {}", all[3])
        );
        for v in [
            Violation::ReservedNonZero { reserved: 3 },
            Violation::InvalidUtf8 { offset: 42 },
            Violation::MsgLenShort { msg_len: 2 },
            Violation::BlockOverrun {
                block_len: 9,
                msg_len: 8,
            },
            Violation::EmptyBlock { block_id: 4 },
        ] {
            assert_eq!(codec(v, None).to_string(), v.to_string());
            assert_eq!(round_trip(v), v);
            assert_eq!(codec(v, Some(7)).to_string(), format!("message 7: {v}"));
        }
    }
}
