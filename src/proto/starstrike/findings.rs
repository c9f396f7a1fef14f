//! Starstrike's own registered findings: the kinds, rules and details only it
//! has, beside the shared ones of [`crate::engine::FindingKind`]. The contract
//! of each is in [`super::analysis`].

use super::wire::{DecodeError, EnumKind, PacketType, Violation, ViolationKind};
use crate::engine::Rule;
use std::fmt;

crate::protocol_kinds! { "strs";
    /// A reliable packet sent again (a new sequence number, the same type and
    /// payload) while no earlier copy was acknowledged.
    RETRANSMISSION = "retransmission", Sequence, Note, 17;
    /// More than 5 retransmissions of one reliable packet.
    RETRANSMIT_LIMIT = "retransmit-limit", Sequence, Error, 18;
    /// A retransmission of a reliable packet whose earlier copy the peer had
    /// already acknowledged in a packet captured at least the round trip
    /// between the tap and the sender before it (the peer direction's
    /// smoothed ack delay, tap to sender and back): the acknowledgement had
    /// reached the sender, which sent again what had arrived. A copy captured
    /// sooner after the acknowledgement (or before that round trip is
    /// measured), or in a packet overtaken on the way (sent before it was
    /// captured), may have crossed the acknowledgement in flight: a `repeat`,
    /// "unconfirmed: the ack may not have reached the sender", still counted
    /// as a resend. So is a copy whose own ack bits reach the acknowledging
    /// packet and leave it out: its sender had not received it (lost after
    /// the tap).
    SPURIOUS_RETRANSMISSION = "spurious-retransmission", Sequence, Warning, 19;
    /// The two sides' sequence numbers are more than 32 apart: one side's
    /// packets fall outside every acknowledgement window the other sends.
    ACK_DRIFT = "ack-drift", Ack, Warning, 20;
    /// A side of an established session silent for more than the 1 s heartbeat
    /// interval: a packet more than 1 s after its side's previous one, its
    /// number the next (a number that skipped some shows packets sent in
    /// between, not captured: no silence), or a side silent until the end.
    HEARTBEAT_MISSING = "heartbeat-missing", Stream, Warning, 21;
    /// A reliable packet none of whose copies was acknowledged by the end,
    /// though the peer sent packets more than 500 ms after its last copy,
    /// and each copy shown unacknowledged by a captured packet of the peer:
    /// one whose window left it out while acknowledging a newer packet of
    /// its sender (it had not arrived when a later one had), or the last
    /// window that can reach it (the peer's number 32 past it). Without that
    /// for every copy, `no-ack-captured` (a note).
    NEVER_ACKED = "never-acked", Ack, Warning, 22;
    /// The server rejected the connection (the reason in the detail).
    REJECTED = "connection-rejected", Protocol, Note, 23;
    /// A side sent Disconnect (the reason in the detail).
    DISCONNECTED = "disconnect-sent", Protocol, Note, 24;
    /// A direction carried more than the draft's bandwidth budget per client
    /// (upstream 10 KB/s, downstream 30 KB/s, UDP payload bytes) within one
    /// second: once per direction and session, at the packet that crosses it.
    OVER_BUDGET = "over-budget", Stream, Warning, 25;
    /// Reliable messages of a direction that left the analyzer's log (the
    /// last 256 messages per direction) while still being sent (a copy less
    /// than 1 s, two retransmission timeouts, before): their later copies
    /// count as first sends, so the retransmissions are undercounted by at
    /// most that many messages' copies. Once per direction and session, at the
    /// end, at the frame of the first, with the count. A note: a bound of the
    /// analyzer, not a fault of the capture.
    RELIABLE_FORGOTTEN = "reliable-forgotten", Sequence, Note, 26;
    /// A reliable packet no captured packet acknowledged, though the peer
    /// sent packets more than 500 ms after its last copy, where a copy was
    /// never shown unacknowledged (as `never-acked` requires): the peer's
    /// windows that could have acknowledged it were not captured (the tap
    /// missed them, or they came before the copy could arrive), so a packet
    /// the tap missed may have. A note, "unconfirmed", with the copies not
    /// shown.
    NO_ACK_CAPTURED = "no-ack-captured", Ack, Note, 27;
}

crate::protocol_rules! { "strs";
    /// The handshake out of order: an answer (Accept or Reject) contradicting an
    /// earlier one, or a new ConnectionRequest (another payload) after the answer.
    HANDSHAKE_ORDER = "handshake-order", 0;
    /// PlayerInput, WorldSnapshot or another game packet before ConnectionAccept,
    /// as far as the capture proves it: after a captured ConnectionReject; or
    /// a client packet acknowledging nothing, captured before the first answer,
    /// when that answer is the first packet of the server captured at all. A
    /// game packet after an Accept the tap missed (the server's packets came
    /// first, or no answer was captured) raises nothing.
    BEFORE_ACCEPT = "before-accept", 1;
    /// A packet type sent by the side that may not send it.
    WRONG_DIRECTION = "wrong-direction", 2;
    /// A packet after a Disconnect: from its sender (other than its
    /// retransmissions), or from the peer once it acknowledged it.
    SENT_AFTER_DISCONNECT = "sent-after-disconnect", 3;
    /// An enumeration field outside its listed values.
    INVALID_ENUM = "invalid-enum", 4;
    /// A NaN or infinite float.
    NON_FINITE_FLOAT = "non-finite-float", 5;
    /// PlayerInput moveX or moveY outside [-1, 1].
    INPUT_RANGE = "input-range", 6;
    /// A non-NUL byte after the first NUL of a fixed string.
    STRING_PADDING = "string-padding", 7;
}

/// The rule of a codec violation (oversize is its own kind: `None`).
pub const fn codec_rule(kind: ViolationKind) -> Option<Rule> {
    match kind {
        ViolationKind::Oversize => None,
        ViolationKind::InvalidEnum => Some(rules::INVALID_ENUM),
        ViolationKind::NonFinite => Some(rules::NON_FINITE_FLOAT),
        ViolationKind::InputRange => Some(rules::INPUT_RANGE),
        ViolationKind::StringPadding => Some(rules::STRING_PADDING),
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn reason(kind: EnumKind, raw: u8) -> impl fmt::Display {
    fmt::from_fn(move |f| match kind.value_name(u64::from(raw)) {
        Some(name) => write!(f, "{name} ({raw})"),
        None => write!(f, "{raw}, not a listed {}", kind.name()),
    })
}

/// Whether `since_prev_ns` kept the retransmission timeout.
fn timeout_kept(since_prev_ns: u64) -> &'static str {
    if since_prev_ns >= super::wire::RETRANSMIT_TIMEOUT_MS * 1_000_000 {
        "the 500 ms timeout respected"
    } else {
        "sooner than the 500 ms timeout"
    }
}

crate::proto_details! { "strs";
    /// A decode error as a finding's detail.
    pub fn decode(error: DecodeError) -> ProtoDetail => |f| write!(f, "{error}");

    /// A codec violation as a finding's detail.
    pub fn codec(v: Violation) => |f| write!(f, "{v}");

    // Where a packet type does not belong.

    /// A type from the side that may not send it (`from_server`: who sent it).
    pub fn wrong_direction(t: PacketType, from_server: bool) => |f| {
        let side = if from_server { "server" } else { "client" };
        write!(f, "{} from the {side}", t.name())
    };

    /// A game packet before ConnectionAccept.
    pub fn before_accept(t: PacketType) => |f| write!(f, "{} before ConnectionAccept", t.name());

    /// A handshake packet after the answer `answer`.
    pub fn handshake(t: PacketType, answer: PacketType) => |f| {
        write!(f, "{} after the answer {}", t.name(), answer.name())
    };

    /// A packet after the Disconnect of `frame`, sent with `reason`.
    pub fn after_disconnect(t: PacketType, frame: u64, raw: u8) => |f| {
        let why = reason(EnumKind::DisconnectReason, raw);
        write!(f, "{} after the Disconnect of frame {frame} (reason {why})", t.name())
    };

    // Retransmissions.

    /// Retransmission `tries` of a `t` first sent in `first`,
    /// `since_first_ns` after it and `since_prev_ns` after the previous copy.
    pub fn retransmission(
        t: PacketType,
        tries: u32,
        first: u64,
        since_first_ns: u64,
        since_prev_ns: u64,
    ) => |f| {
        write!(
            f,
            "{} retransmission {tries}, first sent in frame {first} {:.1} ms earlier, \
             {:.1} ms after the previous copy ({})",
            t.name(),
            ms(since_first_ns),
            ms(since_prev_ns),
            timeout_kept(since_prev_ns)
        )
    };

    /// More retransmissions than allowed.
    pub fn retransmit_limit(t: PacketType, tries: u32, first: u64, since_first_ns: u64) => |f| {
        write!(
            f,
            "{} retransmitted {tries} times (at most 5), first sent in frame {first} {:.1} ms earlier",
            t.name(),
            ms(since_first_ns)
        )
    };

    /// A retransmission of what the peer had acknowledged (copy `acked_seq`, in
    /// `ack_frame`).
    pub fn spurious(t: PacketType, tries: u32, first: u64, ack_frame: u64, acked_seq: u16) => |f| {
        write!(
            f,
            "{} retransmission {tries}, first sent in frame {first}: its copy seq {acked_seq} \
             was acknowledged in frame {ack_frame}",
            t.name()
        )
    };

    /// A reliable packet sent `sends` times, never acknowledged, though the peer
    /// sent `peer_packets` packets after its last copy.
    pub fn never_acked(t: PacketType, sends: u32, first: u64, peer_packets: u64) => |f| {
        write!(
            f,
            "{} sent {sends} times from frame {first}, never acknowledged; the peer sent \
             {peer_packets} packets after its last copy",
            t.name()
        )
    };

    /// A reliable packet sent `sends` times, no acknowledgement of it captured,
    /// `unshown` of its copies never shown unacknowledged by a window of the
    /// peer; the peer sent `peer_packets` packets after its last copy.
    pub fn no_ack_captured(
        t: PacketType,
        sends: u32,
        first: u64,
        peer_packets: u64,
        unshown: u32,
    ) => |f| {
        write!(
            f,
            "unconfirmed: {} sent {sends} times from frame {first}, no acknowledgement captured, \
             but no captured window of the peer showed {unshown} of its copies unacknowledged \
             (a packet the tap missed may have acknowledged it); the peer sent {peer_packets} \
             packets after its last copy",
            t.name()
        )
    };

    // Acks, heartbeats, reasons.

    /// The sender's own seq, the peer's newest, and how far the first is ahead
    /// (negative: behind; 32 768: exactly half the space).
    pub fn ack_drift(own: u16, peer: u16, distance: i64) => |f| {
        write!(
            f,
            "own seq {own} and the peer's newest seq {peer} are {distance} apart: the ack \
             window spans 32, so the peer's packets fall outside it"
        )
    };

    /// A side silent for `silence_ns` after `frame` (`to_end`: until the end).
    pub fn silence(silence_ns: u64, frame: u64, to_end: bool) => |f| {
        write!(
            f,
            "silent for {:.3} s after frame {frame} (heartbeat interval 1 s){}",
            silence_ns as f64 / 1e9,
            if to_end { ", until the end" } else { "" }
        )
    };

    /// `bytes` within the one-second window from `frame` (at the packet that
    /// takes it over), over `budget` (bytes/s) of the direction (`downstream`:
    /// server to client).
    pub fn over_budget(bytes: u64, frame: u64, downstream: bool, budget: u64) => |f| {
        write!(
            f,
            "{:.1} KB within the second from frame {frame}: over the draft's {} budget of {} KB/s",
            bytes as f64 / 1000.0,
            if downstream { "downstream" } else { "upstream" },
            budget / 1000
        )
    };

    /// `count` reliable messages forgotten while still being sent, by a log of
    /// `log` messages.
    pub fn reliable_forgotten(count: u64, log: usize) => |f| {
        write!(
            f,
            "{count} reliable messages left the log of the last {log} while still being sent; \
             their later copies count as first sends"
        )
    };

    /// A Reject's reason.
    pub fn reject_reason(raw: u8) => |f| write!(f, "reason {}", reason(EnumKind::RejectReason, raw));

    /// A Disconnect's reason.
    pub fn disconnect_reason(raw: u8) => |f| {
        write!(f, "reason {}", reason(EnumKind::DisconnectReason, raw))
    };
}

#[cfg(test)]
mod tests {
    use super::super::wire::layout::f;
    use super::*;
    use crate::engine::finding::round_trip;

    #[test]
    fn rules_have_their_full_names() {
        // Slots and names of every protocol: `proto::tests`.
        assert_eq!(
            rules::SENT_AFTER_DISCONNECT.full_name().to_string(),
            "strs.violation.sent-after-disconnect"
        );
    }

    #[test]
    fn details_read_as_the_errors_and_violations() {
        for e in [
            DecodeError::ShortHeader { len: 3 },
            DecodeError::WrongMagic { found: 0xdead_beef },
            DecodeError::UnknownType { type_id: 0x0400 },
            DecodeError::Truncated {
                packet_type: PacketType::ChatMessage,
                offset: 17,
                field: f::CH_MESSAGE,
                needed: 261,
                available: 20,
            },
            DecodeError::TrailingBytes {
                packet_type: PacketType::WorldSnapshot,
                offset: 64,
                expected: 52,
                extra: 3,
            },
        ] {
            assert_eq!(decode(e).to_string(), e.to_string());
            assert_eq!(round_trip(e), e);
        }
        for v in [
            Violation::Oversize { len: 1239 },
            Violation::InvalidEnum {
                offset: 16,
                packet_type: PacketType::EntityDestroy,
                field: f::DE_REASON,
                value: 9,
            },
            Violation::NonFinite {
                offset: 16,
                packet_type: PacketType::PlayerInput,
                field: f::IN_MOVE_X,
                bits: 0x7fc0_0000,
            },
            Violation::InputRange {
                offset: 20,
                field: f::IN_MOVE_Y,
                value: -1.5,
            },
            Violation::StringPadding {
                offset: 17,
                packet_type: PacketType::ChatMessage,
                field: f::CH_MESSAGE,
                at: 19,
            },
        ] {
            assert_eq!(codec(v).to_string(), v.to_string());
            assert_eq!(round_trip(v), v);
        }
        assert_eq!(
            after_disconnect(PacketType::WorldSnapshot, 12, 2).to_string(),
            "WorldSnapshot after the Disconnect of frame 12 (reason Timeout (2))"
        );
        assert_eq!(reject_reason(1).to_string(), "reason ServerFull (1)");
        assert_eq!(
            reliable_forgotten(3, 256).to_string(),
            "3 reliable messages left the log of the last 256 while still being sent; \
             their later copies count as first sends"
        );
        assert_eq!(
            over_budget(31_250, 7, true, 30_000).to_string(),
            "31.2 KB within the second from frame 7: over the draft's downstream budget of 30 KB/s"
        );
        assert_eq!(
            disconnect_reason(9).to_string(),
            "reason 9, not a listed DisconnectReason"
        );
        assert!(
            retransmission(PacketType::ChatMessage, 2, 5, 1_000_000_000, 400_000_000)
                .to_string()
                .contains("sooner than the 500 ms timeout")
        );
        assert_eq!(
            ack_drift(40000, 100, -25636).to_string(),
            "own seq 40000 and the peer's newest seq 100 are -25636 apart: the ack window spans 32, so the peer's packets fall outside it"
        );
    }
}
