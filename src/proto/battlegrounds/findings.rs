//! Battlegrounds' own registered findings: the kinds, rules and details only it
//! has, beside the shared ones of [`crate::engine::FindingKind`]. The exact
//! contract of each is in [`super::analysis`].

use super::wire::{DecodeError, PacketType, Part, Violation, ViolationKind};
use crate::engine::{
    Detail, DetailFormat, FindingKind, Group, KindDef, ProtoDetail, Rule, RuleDef, Severity,
};

const PROTO: &str = "bg";

macro_rules! bg_kinds {
    ($( $(#[$doc:meta])* $name:ident = $text:literal, $group:ident, $severity:ident, $slot:literal; )*) => {
        mod kind_defs {
            use super::*;
            $( pub static $name: KindDef = KindDef {
                name: $text,
                proto: PROTO,
                group: Group::$group,
                severity: Severity::$severity,
                doc: stringify!($($doc)*),
                slot: $slot,
            }; )*
        }
        $( $(#[$doc])* pub const $name: FindingKind = FindingKind::new(&kind_defs::$name); )*

        /// Battlegrounds' own kinds.
        pub const KINDS: &[FindingKind] = &[ $( $name, )* ];
    };
}

bg_kinds! {
    /// A message some of whose blocks were captured, never completed by the end
    /// of the capture (or of its session).
    MSG_INCOMPLETE = "msg-incomplete", Sequence, Warning, 16;
    /// A message the analyzer stopped rebuilding: over a bound of what it
    /// buffers (per message, in total, messages at once).
    MSG_GIVEN_UP = "msg-given-up", Sequence, Warning, 17;
    /// A MSG block captured and never acknowledged by a MSG_ACK the other way.
    BLOCK_UNACKED = "block-unacked", Ack, Warning, 18;
    /// An op_sig or event_sig that skipped values (u8 serial arithmetic).
    SIG_GAP = "sig-gap", Stream, Note, 19;
    /// An op_sig or event_sig older than the last one (u8 serial arithmetic).
    SIG_REGRESSION = "sig-regression", Stream, Warning, 20;
    /// A MOVE_EVENT echoing an op_sig no MOVE_OP captured carried.
    ECHO_UNSEEN = "echo-unseen", Stream, Note, 21;
    /// A MSG_ACK captured again with no capture of its block in between, later
    /// than a network duplicate.
    DUPLICATE_ACK = "duplicate-ack", Ack, Note, 22;
}

macro_rules! bg_rules {
    ($( $(#[$doc:meta])* $name:ident = $text:literal, $slot:literal; )*) => {
        mod rule_defs {
            use super::*;
            $( pub static $name: RuleDef = RuleDef {
                name: $text,
                proto: PROTO,
                doc: stringify!($($doc)*),
                slot: $slot,
            }; )*
        }
        /// Battlegrounds' rules, for `violation` findings.
        pub mod rules {
            use super::*;
            $( $(#[$doc])* pub const $name: Rule = Rule::new(&rule_defs::$name); )*
        }

        /// Every rule, in slot order.
        pub const RULES: &[Rule] = &[ $( rules::$name, )* ];
    };
}

bg_rules! {
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
    /// A new session id in a flow whose first packet is not AUTH.
    AUTH_FIRST = "auth-first", 5;
    /// More AUTH_OKs than AUTHs captured: one AUTH_OK per AUTH.
    AUTH_OK_COUNT = "auth-ok-count", 6;
    /// AUTH after the client's first PING: it had its AUTH_OK.
    AUTH_REPEAT = "auth-repeat", 7;
    /// PING before any AUTH_OK, in a session whose AUTH was captured.
    PING_BEFORE_AUTH_OK = "ping-before-auth-ok", 8;
    /// Server traffic on channel 1 or 2 before the client's first PING.
    BEFORE_PING = "before-ping", 9;
    /// A session id other than the session's, inside its flow.
    SESSION_ID_CHANGED = "session-id-changed", 10;
    /// A client-only packet from the server, or a server-only one from the client.
    WRONG_DIRECTION = "wrong-direction", 11;
    /// A msg_id far outside the window of the messages seen.
    MSG_ID_WINDOW = "msg-id-window", 12;
    /// A MSG block that disagrees with its message (msg_len, block size, count).
    BLOCK_INCONSISTENT = "block-inconsistent", 13;
    /// A packet of the reliable channel sent bare, not in MSG blocks.
    BARE_RELIABLE = "bare-reliable", 14;
    /// A message whose packet names another channel or session than its MSG.
    INNER_MISMATCH = "inner-mismatch", 15;
    /// A message that is itself a MSG or MSG_ACK.
    NESTED_MSG = "nested-msg", 16;
    /// A PONG with no PING captured since the last PONG.
    PONG_WITHOUT_PING = "pong-without-ping", 17;
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

// Decode errors: a[0] = tag | offset << 8; a[1] = type | part << 8 | extra << 16;
// a[2] = needed << 32 | available; a[3] = 1 << 32 | msg_id for a rebuilt message.

static DECODE: DetailFormat = DetailFormat {
    name: "bg.decode",
    fmt: |a, f| {
        if a[3] >> 32 == 1 {
            write!(f, "message {}: ", a[3] as u32)?;
        }
        write!(f, "{}", unpack_decode(a))
    },
};

fn unpack_decode(a: &[u64; 4]) -> DecodeError {
    let (tag, offset) = (a[0] & 0xff, (a[0] >> 8) as usize);
    let t = packet_type(a[1] & 0xff);
    let part = Part::from_u8((a[1] >> 8) as u8);
    let extra = a[1] >> 16;
    let (needed, available) = ((a[2] >> 32) as usize, (a[2] as u32) as usize);
    match tag {
        0 => DecodeError::ShortHeader { len: available },
        1 => DecodeError::UnknownVersion {
            version: extra as u8,
        },
        2 => DecodeError::UnknownType {
            channel: extra as u8,
            op: (extra >> 8) as u8,
        },
        3 => DecodeError::Truncated {
            offset,
            packet_type: t,
            part,
            needed,
            available,
        },
        4 => DecodeError::NegativeLength {
            offset,
            packet_type: t,
            part,
            len: extra as u16 as i16,
        },
        5 => DecodeError::UnknownShape {
            offset,
            shape_type: extra as u8,
        },
        _ => DecodeError::TrailingBytes {
            offset,
            packet_type: t,
            count: available,
        },
    }
}

fn pack_decode(error: DecodeError) -> [u64; 4] {
    let off = |o: usize| (o as u64) << 8;
    let ty = |t: PacketType, p: Part, extra: u64| {
        t.ordinal() as u64 | u64::from(p.to_u8()) << 8 | extra << 16
    };
    let sizes =
        |needed: usize, available: usize| (needed as u64) << 32 | u64::from(available as u32);
    match error {
        DecodeError::ShortHeader { len } => [0, 0, sizes(8, len), 0],
        DecodeError::UnknownVersion { version } => [1 | off(6), u64::from(version) << 16, 0, 0],
        DecodeError::UnknownType { channel, op } => [
            2 | off(4),
            (u64::from(channel) | u64::from(op) << 8) << 16,
            0,
            0,
        ],
        DecodeError::Truncated {
            offset,
            packet_type,
            part,
            needed,
            available,
        } => [
            3 | off(offset),
            ty(packet_type, part, 0),
            sizes(needed, available),
            0,
        ],
        DecodeError::NegativeLength {
            offset,
            packet_type,
            part,
            len,
        } => [
            4 | off(offset),
            ty(packet_type, part, u64::from(len as u16)),
            0,
            0,
        ],
        DecodeError::UnknownShape { offset, shape_type } => [
            5 | off(offset),
            ty(PacketType::Prop, Part::Shape, u64::from(shape_type)),
            0,
            0,
        ],
        DecodeError::TrailingBytes {
            offset,
            packet_type,
            count,
        } => [
            6 | off(offset),
            ty(packet_type, Part::Fixed, 0),
            sizes(0, count),
            0,
        ],
    }
}

/// A decode error of a datagram as a finding's detail.
pub fn decode(error: DecodeError) -> ProtoDetail {
    ProtoDetail {
        format: &DECODE,
        args: pack_decode(error),
    }
}

/// A decode error of the message `msg_id` rebuilt from its blocks (offsets in
/// the message).
pub fn decode_in_message(error: DecodeError, msg_id: u32) -> ProtoDetail {
    let mut args = pack_decode(error);
    args[3] = 1 << 32 | u64::from(msg_id);
    ProtoDetail {
        format: &DECODE,
        args,
    }
}

static CODEC: DetailFormat = DetailFormat {
    name: "bg.violation",
    fmt: |a, f| {
        let v = match a[0] {
            0 => Violation::ReservedNonZero {
                reserved: a[1] as u8,
            },
            1 => Violation::InvalidUtf8 {
                offset: a[1] as usize,
            },
            2 => Violation::MsgLenShort {
                msg_len: a[1] as u32,
            },
            3 => Violation::BlockOverrun {
                block_len: a[2] as usize,
                msg_len: a[1] as u32,
            },
            _ => Violation::EmptyBlock {
                block_id: a[1] as u16,
            },
        };
        if a[3] >> 32 == 1 {
            write!(f, "message {}: ", a[3] as u32)?;
        }
        write!(f, "{v}")
    },
};

/// A codec violation as a finding's detail; `msg_id` for a packet rebuilt
/// from a message's blocks.
pub fn codec(v: Violation, msg_id: Option<u32>) -> Detail {
    let mut args = match v {
        Violation::ReservedNonZero { reserved } => [0, u64::from(reserved), 0, 0],
        Violation::InvalidUtf8 { offset } => [1, offset as u64, 0, 0],
        Violation::MsgLenShort { msg_len } => [2, u64::from(msg_len), 0, 0],
        Violation::BlockOverrun { block_len, msg_len } => {
            [3, u64::from(msg_len), block_len as u64, 0]
        }
        Violation::EmptyBlock { block_id } => [4, u64::from(block_id), 0, 0],
    };
    if let Some(id) = msg_id {
        args[3] = 1 << 32 | u64::from(id);
    }
    Detail::Proto(ProtoDetail {
        format: &CODEC,
        args,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_rules_have_unique_slots_and_names() {
        for (i, r) in RULES.iter().enumerate() {
            assert_eq!(r.ordinal(), i, "{r}");
        }
        for k in KINDS {
            assert!(
                k.ordinal() >= 16 && k.ordinal() < crate::engine::MAX_KINDS,
                "{k}"
            );
            assert!(FindingKind::shared(k.name()).is_none(), "{k}");
        }
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
            assert_eq!(unpack_decode(&pack_decode(e)), e);
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
        }
    }
}
