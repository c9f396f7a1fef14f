//! Battlegrounds' own registered findings: the kinds, rules and details only it
//! has, beside the shared ones of [`crate::engine::FindingKind`]. The exact
//! contract of each is in [`super::analysis`].

use super::wire::{DecodeError, PacketType, Violation, ViolationKind};
use crate::engine::reassembly::{GiveUpReason, Inconsistency, Refusal};
use crate::engine::{Detail, DetailFormat, ProtoDetail, RegressionRun, Rule};
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

fn packet_type(ordinal: u64) -> PacketType {
    // Only ever packed from a real type; the fallback is never reached.
    PacketType::from_ordinal(ordinal as usize).unwrap_or(PacketType::Auth)
}

// Decode errors and violations: packed by their declaration (`to_args`), with
// a[3] = 1 << 32 | msg_id for a packet rebuilt from a message's blocks.

/// "message N: " before the detail of a rebuilt packet.
fn in_message(a: &[u64; 4], f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if a[3] >> 32 == 1 {
        write!(f, "message {}: ", a[3] as u32)?;
    }
    Ok(())
}

static DECODE: DetailFormat = DetailFormat {
    name: "bg.decode",
    fmt: |a, f| {
        in_message(a, f)?;
        write!(f, "{}", DecodeError::from_args(a))
    },
};

/// A decode error of a datagram as a finding's detail.
pub fn decode(error: DecodeError) -> ProtoDetail {
    ProtoDetail {
        format: &DECODE,
        args: error.to_args(),
    }
}

/// A decode error of the message `msg_id` rebuilt from its blocks (offsets in
/// the message).
pub fn decode_in_message(error: DecodeError, msg_id: u32) -> ProtoDetail {
    let mut args = error.to_args();
    args[3] = 1 << 32 | u64::from(msg_id);
    ProtoDetail {
        format: &DECODE,
        args,
    }
}

static CODEC: DetailFormat = DetailFormat {
    name: "bg.violation",
    fmt: |a, f| {
        in_message(a, f)?;
        write!(f, "{}", Violation::from_args(a))
    },
};

/// A codec violation as a finding's detail; `msg_id` for a packet rebuilt
/// from a message's blocks.
pub fn codec(v: Violation, msg_id: Option<u32>) -> Detail {
    let mut args = v.to_args();
    if let Some(id) = msg_id {
        args[3] = 1 << 32 | u64::from(id);
    }
    Detail::Proto(ProtoDetail {
        format: &CODEC,
        args,
    })
}

fn detail(format: &'static DetailFormat, args: [u64; 4]) -> Detail {
    Detail::Proto(ProtoDetail { format, args })
}

static PACKET_TYPE: DetailFormat = DetailFormat {
    name: "bg.packet-type",
    fmt: |a, f| {
        write!(f, "{}", packet_type(a[0]))?;
        if a[1] >> 32 == 1 {
            write!(f, " in message {}", a[1] as u32)?;
        }
        Ok(())
    },
};

/// A packet type where it does not belong; `msg_id` when it was rebuilt from
/// a message.
pub fn packet(t: PacketType, msg_id: Option<u32>) -> Detail {
    let m = msg_id.map_or(0, |id| 1 << 32 | u64::from(id));
    detail(&PACKET_TYPE, [t.ordinal() as u64, m, 0, 0])
}

static SESSION_IDS: DetailFormat = DetailFormat {
    name: "bg.session-ids",
    fmt: |a, f| write!(f, "session id {} in the flow of session {}", a[0], a[1]),
};

/// A session id other than the session's own.
pub fn session_ids(seen: u32, own: u32) -> Detail {
    detail(&SESSION_IDS, [u64::from(seen), u64::from(own), 0, 0])
}

static AUTH_COUNTS: DetailFormat = DetailFormat {
    name: "bg.auth-counts",
    fmt: |a, f| write!(f, "AUTH_OK number {} for {} AUTH captured", a[0], a[1]),
};

/// AUTH_OKs and AUTHs captured so far.
pub fn auth_counts(auth_oks: u64, auths: u64) -> Detail {
    detail(&AUTH_COUNTS, [auth_oks, auths, 0, 0])
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

static SIGS: DetailFormat = DetailFormat {
    name: "bg.sigs",
    fmt: |a, f| {
        let name = if a[0] == 0 { "op_sig" } else { "event_sig" };
        write!(f, "{name} {} after {}", a[1], a[2])?;
        if a[3] > 0 {
            write!(f, " ({} skipped)", a[3])?;
        }
        Ok(())
    },
};

/// A counter's new value after its last, with the values skipped.
pub fn sigs(which: Sig, value: u8, last: u8, skipped: u32) -> Detail {
    let w = u64::from(which == Sig::Event);
    detail(
        &SIGS,
        [w, u64::from(value), u64::from(last), u64::from(skipped)],
    )
}

static SIG_RUN: DetailFormat = DetailFormat {
    name: "bg.sig-regression",
    fmt: |a, f| {
        let name = if a[0] & 1 == 0 { "op_sig" } else { "event_sig" };
        let (value, last) = ((a[0] >> 8) & 0xff, (a[0] >> 16) & 0xff);
        write!(f, "{name} {value} after {last} of frame {}", a[2])?;
        crate::engine::finding::below_until(f, a[1] as u32, "packets", a[3])
    },
};

/// A run of a counter's values behind its highest (`run.highest`, first
/// carried in `last_at`): the first of them, the run's length and last frame.
pub fn sig_regression(which: Sig, run: RegressionRun, last_at: u64) -> Detail {
    let w = u64::from(which == Sig::Event);
    detail(
        &SIG_RUN,
        [
            w | u64::from(run.value & 0xff) << 8 | u64::from(run.highest & 0xff) << 16,
            u64::from(run.packets),
            last_at,
            run.last_frame,
        ],
    )
}

static ECHO: DetailFormat = DetailFormat {
    name: "bg.echo",
    fmt: |a, f| {
        write!(
            f,
            "MOVE_EVENT echoes op_sig {}; the last op_sig captured is {}",
            a[0], a[1]
        )
    },
};

/// An echoed op_sig never captured, and the last one captured.
pub fn echo(op_sig: u8, last: u8) -> Detail {
    detail(&ECHO, [u64::from(op_sig), u64::from(last), 0, 0])
}

static MSG_WINDOW: DetailFormat = DetailFormat {
    name: "bg.msg-window",
    fmt: |a, f| {
        write!(
            f,
            "msg_id {} is outside the window of {} around the highest msg_id {}",
            a[0], a[2], a[1]
        )
    },
};

/// A msg_id outside the window around the highest seen.
pub fn msg_window(msg_id: u32, highest: u32, window: u32) -> Detail {
    detail(
        &MSG_WINDOW,
        [u64::from(msg_id), u64::from(highest), u64::from(window), 0],
    )
}

static BLOCK: DetailFormat = DetailFormat {
    name: "bg.block",
    fmt: |a, f| {
        write!(f, "block {} of message {}", a[1], a[0])?;
        match a[2] {
            0 => Ok(()),
            1 => write!(f, ", captured {} times, never acknowledged", a[3]),
            5 => write!(
                f,
                " sent once, its ack not captured: the sender went on {} ms without resending it",
                a[3]
            ),
            6 => write!(
                f,
                " sent once, its ack not captured; unconfirmed: the sender's capture ended {} ms after it, within a retransmission timeout",
                a[3]
            ),
            7 => write!(
                f,
                ", captured {} times, its last ack not captured: the sender went on {} ms after its last copy without resending it",
                a[3] >> 32,
                a[3] as u32
            ),
            2 => write!(f, " was never captured: the other side acknowledged it"),
            3 => write!(
                f,
                " acknowledged, above every msg_id captured the other way (highest {})",
                a[3]
            ),
            _ => write!(f, " acknowledged again, its block not captured again"),
        }
    },
};

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

/// One block of one message, and what is said of it.
pub fn block(msg_id: u32, block_id: u16, note: BlockNote) -> Detail {
    let (tag, n) = match note {
        BlockNote::Unacked { tries } => (1, u64::from(tries)),
        BlockNote::NotCaptured => (2, 0),
        BlockNote::AckUnseen { highest } => (3, highest.map_or(0, u64::from)),
        BlockNote::AckedAgain => (4, 0),
        BlockNote::ResentThenSilent { tries, ms } => (7, u64::from(tries) << 32 | u64::from(ms)),
        BlockNote::AckMissed { ms, confirmed } => (if confirmed { 5 } else { 6 }, ms),
    };
    detail(&BLOCK, [u64::from(msg_id), u64::from(block_id), tag, n])
}

static INCOMPLETE: DetailFormat = DetailFormat {
    name: "bg.incomplete",
    fmt: |a, f| {
        let (msg_id, received) = (a[0] as u32, a[1] as u32);
        let reason = match a[3] {
            0 => {
                "given up: too many messages in progress (the analyzer's bound, not a fault of the traffic)"
            }
            1 => {
                "given up: the total buffer budget needed room (the analyzer's bound, not a fault of the traffic)"
            }
            _ => {
                "never completed in the capture; unconfirmed: the tap may have missed \
                 the rest"
            }
        };
        write!(f, "message {msg_id} of {} bytes: {received}", a[2] >> 32)?;
        match a[2] as u32 {
            0 => write!(
                f,
                " {} captured (block 0 never captured, count unknown)",
                if received == 1 { "block" } else { "blocks" }
            )?,
            blocks => write!(f, " of its {blocks} blocks captured")?,
        }
        write!(f, "; {reason}")
    },
};

/// A message given up in progress.
pub fn incomplete(
    msg_id: u32,
    msg_len: u32,
    received: u32,
    blocks: Option<u32>,
    reason: GiveUpReason,
) -> Detail {
    let r = match reason {
        GiveUpReason::Capacity => 0,
        GiveUpReason::Budget => 1,
        GiveUpReason::Ended => 2,
    };
    detail(
        &INCOMPLETE,
        [
            u64::from(msg_id),
            u64::from(received),
            u64::from(msg_len) << 32 | u64::from(blocks.unwrap_or(0)),
            r,
        ],
    )
}

static REFUSED: DetailFormat = DetailFormat {
    name: "bg.refused",
    fmt: |a, f| {
        write!(
            f,
            "message {} not rebuilt (the analyzer's bound, not a fault of the traffic): ",
            a[0]
        )?;
        match a[1] {
            0 => write!(
                f,
                "msg_len {} is over the {}-byte limit per message",
                a[2], a[3]
            ),
            1 => write!(f, "its block size makes {} blocks (at most {})", a[2], a[3]),
            _ => write!(
                f,
                "msg_len {} does not fit the {} bytes left of the total budget",
                a[2], a[3]
            ),
        }
    },
};

/// A message the reassembler refuses.
pub fn refused(msg_id: u32, r: Refusal) -> Detail {
    let (tag, x, y) = match r {
        Refusal::TooLarge { msg_len, max } => (0, u64::from(msg_len), u64::from(max)),
        Refusal::TooManyBlocks { blocks, max } => (1, blocks, u64::from(max)),
        Refusal::NoBudget { msg_len, available } => (2, u64::from(msg_len), available as u64),
    };
    detail(&REFUSED, [u64::from(msg_id), tag, x, y])
}

static INCONSISTENT: DetailFormat = DetailFormat {
    name: "bg.inconsistent",
    fmt: |a, f| {
        let (msg_id, block_id) = (a[0] as u32, a[0] >> 32);
        write!(f, "message {msg_id} block {block_id}: ")?;
        match a[1] {
            0 => write!(f, "msg_len {} differs from its message's {}", a[2], a[3]),
            1 => write!(f, "beyond the message's {} blocks", a[3]),
            2 => write!(f, "{} bytes where its place needs {}", a[2], a[3]),
            3 => write!(
                f,
                "block 0 of {} bytes is longer than msg_len {}",
                a[2], a[3]
            ),
            4 => write!(f, "empty"),
            _ => write!(f, "captured again with other bytes"),
        }
    },
};

/// A block that disagrees with its message.
pub fn inconsistent(msg_id: u32, block_id: u16, i: Inconsistency) -> Detail {
    let (tag, x, y) = match i {
        Inconsistency::LengthChanged { msg_len, expected } => {
            (0, u64::from(msg_len), u64::from(expected))
        }
        Inconsistency::BeyondEnd { blocks, .. } => (1, 0, u64::from(blocks)),
        Inconsistency::WrongSize { len, expected, .. } => (2, len as u64, expected as u64),
        Inconsistency::Overlong { len, msg_len } => (3, len as u64, u64::from(msg_len)),
        Inconsistency::Empty { .. } => (4, 0, 0),
        Inconsistency::Differs { .. } => (5, 0, 0),
    };
    detail(
        &INCONSISTENT,
        [u64::from(msg_id) | u64::from(block_id) << 32, tag, x, y],
    )
}

static INNER_MISMATCH: DetailFormat = DetailFormat {
    name: "bg.inner-mismatch",
    fmt: |a, f| {
        write!(
            f,
            "message {} on channel {} carries a packet of channel {} and session {} (the session's is {})",
            a[0],
            a[1] >> 8,
            a[1] & 0xff,
            a[2],
            a[3]
        )
    },
};

/// A rebuilt packet whose channel or session id differs from its MSG's.
pub fn inner_mismatch(msg_id: u32, msg_channel: u8, channel: u8, sid: u32, own: u32) -> Detail {
    detail(
        &INNER_MISMATCH,
        [
            u64::from(msg_id),
            u64::from(msg_channel) << 8 | u64::from(channel),
            u64::from(sid),
            u64::from(own),
        ],
    )
}

static PONG_UNMATCHED_FMT: DetailFormat = DetailFormat {
    name: "bg.pong-unmatched",
    fmt: |a, f| {
        if a[0] == 1 {
            write!(
                f,
                "PONG seq {}: no PING of that seq captured (not captured: the tap missed it, or it was sent before the capture)",
                a[1]
            )
        } else {
            write!(
                f,
                "PONG with no PING owed ({} PINGs captured; not captured: the tap missed one, or it was sent before the capture)",
                a[2]
            )
        }
    },
};

/// A PONG no captured PING owed: its seq (the reference's form), the PINGs
/// captured.
pub fn pong_unmatched(seq: Option<u8>, pings: u64) -> Detail {
    detail(
        &PONG_UNMATCHED_FMT,
        [
            u64::from(seq.is_some()),
            u64::from(seq.unwrap_or(0)),
            pings,
            0,
        ],
    )
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

static AUTH_FIRST_FMT: DetailFormat = DetailFormat {
    name: "bg.auth-first",
    fmt: |a, f| {
        write!(f, "{}", packet_type(a[0] & 0xff))?;
        match a[1] {
            0 | 1 => {}
            2 => write!(f, " and 1 more client packet (frame {})", a[2])?,
            n => write!(f, " and {} more client packets (to frame {})", n - 1, a[2])?,
        }
        match a[0] >> 8 {
            0 => write!(
                f,
                " before the AUTH_OK at frame {}, the answer to the only AUTH captured",
                a[3]
            ),
            1 => write!(
                f,
                " before the client's AUTH again at frame {}: it had no AUTH_OK yet",
                a[3]
            ),
            2 => write!(
                f,
                " before the AUTH_OK at frame {}; unconfirmed: the client sent more than one AUTH, this may answer a later one, and the tap may have missed the AUTH_OK of an earlier one",
                a[3]
            ),
            _ => write!(
                f,
                " with no AUTH_OK captured before them; unconfirmed: the tap may have missed the AUTH_OK"
            ),
        }
    },
};

/// Client packets before any AUTH_OK: the first one's type, how many, the
/// last one's frame, what judged them and at which frame.
pub fn auth_first(
    t: PacketType,
    packets: u64,
    last_frame: u64,
    by: AuthFirstBy,
    frame: u64,
) -> Detail {
    let by = match by {
        AuthFirstBy::AuthOk => 0,
        AuthFirstBy::Auth => 1,
        AuthFirstBy::AuthOkOfAnother => 2,
        AuthFirstBy::Nothing => 3,
    };
    detail(
        &AUTH_FIRST_FMT,
        [t.ordinal() as u64 | by << 8, packets, last_frame, frame],
    )
}

static AUTH_UNANSWERED_FMT: DetailFormat = DetailFormat {
    name: "bg.auth-unanswered",
    fmt: |a, f| {
        write!(
            f,
            "AUTH sent {} times over {} ms, never answered by an AUTH_OK",
            a[0], a[1]
        )?;
        if a[2] == 1 {
            write!(f, "; the client gave up with CLOSE")?;
        }
        Ok(())
    },
};

/// AUTHs never answered: how many, over how long, and whether the client
/// closed.
pub fn auth_unanswered(tries: u64, span_ms: u64, closed: bool) -> Detail {
    detail(&AUTH_UNANSWERED_FMT, [tries, span_ms, u64::from(closed), 0])
}

static PING_UNANSWERED_FMT: DetailFormat = DetailFormat {
    name: "bg.ping-unanswered",
    fmt: |a, f| {
        write!(f, "PING")?;
        if a[0] >> 8 & 1 == 1 {
            write!(f, " seq {}", a[0] & 0xff)?;
        }
        write!(
            f,
            " of frame {} got no PONG in {} ms; the client closed the session",
            a[1], a[2]
        )?;
        if a[3] > 1 {
            write!(f, " ({} PINGs unanswered)", a[3])?;
        }
        if a[0] >> 9 & 1 == 1 {
            write!(
                f,
                "; unconfirmed: server packets were captured after the PING, the tap may have missed the PONG"
            )?;
        }
        Ok(())
    },
};

/// The latest PING without a PONG before the client's CLOSE; `answering`:
/// server packets were captured after it.
pub fn ping_unanswered(
    seq: Option<u8>,
    frame: u64,
    waited_ms: u64,
    count: u64,
    answering: bool,
) -> Detail {
    let s = seq.map_or(0, |s| 1 << 8 | u64::from(s)) | u64::from(answering) << 9;
    detail(&PING_UNANSWERED_FMT, [s, frame, waited_ms, count])
}

static SENT_AFTER_CLOSE_FMT: DetailFormat = DetailFormat {
    name: "bg.sent-after-close",
    fmt: |a, f| {
        let side = |x: u64| if x == 0 { "client" } else { "server" };
        write!(
            f,
            "{} {} ms after the {}'s CLOSE of frame {}",
            packet_type(a[0] & 0xff),
            a[2],
            side(a[0] >> 8 & 1),
            a[1]
        )
    },
};

/// A packet of type `t` sent `after_ms` after the CLOSE of frame `close_frame`
/// that side `closer` (0 client, 1 server) sent.
pub fn sent_after_close(
    t: PacketType,
    closer_is_server: bool,
    close_frame: u64,
    after_ms: u64,
) -> Detail {
    detail(
        &SENT_AFTER_CLOSE_FMT,
        [
            t.ordinal() as u64 | u64::from(closer_is_server) << 8,
            close_frame,
            after_ms,
            0,
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::super::wire::Part;
    use super::*;

    #[test]
    fn rules_have_their_full_names() {
        // Slots and names of every protocol: `proto::tests`.
        assert_eq!(
            rules::BEFORE_PING.full_name().to_string(),
            "bg.violation.before-ping"
        );
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
            assert_eq!(DecodeError::from_args(&e.to_args()), e);
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
            assert_eq!(Violation::from_args(&v.to_args()), v);
            assert_eq!(codec(v, Some(7)).to_string(), format!("message 7: {v}"));
        }
    }
}
