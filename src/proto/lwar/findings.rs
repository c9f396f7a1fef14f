//! lwar's own registered findings: the kinds, rules and details that only lwar
//! has, beside the shared ones of [`crate::engine::FindingKind`].

use super::wire::{DecodeError, Id, MessageType, Violation, ViolationKind};
use crate::engine::finding::Word;
use crate::engine::{Detail, RegressionRun, Rule, RunTail};

crate::protocol_kinds! { "lwar";
    /// The server's repeated Leave to a client that sent Disconnect: the
    /// specification's way, not loss. One per Leave, however many repeats
    /// (each counted in the direction's `expected_repeats`); kept out of the
    /// resend rate.
    EXPECTED_REPEAT = "expected-repeat", Sequence, Note, 17;
    /// A run of Input frame numbers lower than the highest (one per run, with
    /// its length), in packets not overtaken on the way.
    INPUT_REGRESSION = "input-regression", Stream, Warning, 18;
    /// Input frames skipped (7 or fewer: the eight history bits cover them).
    INPUT_GAP = "input-gap", Stream, Note, 19;
    /// 8 or more Input frames skipped in the capture: if the network lost
    /// their packets, inputs were lost for good (the spec: "an input is only
    /// missed if eight consecutive packets are lost"). A note, "unconfirmed":
    /// Inputs are never acknowledged, so the capture cannot tell packets the
    /// network lost from packets the tap missed.
    INPUTS_LOST = "inputs-lost", Stream, Note, 20;
}

crate::protocol_rules! { "lwar";
    /// A packet over 512 bytes (raised as the `oversize` kind; the rule names it).
    OVERSIZE = "oversize", 0;
    /// A reliable message with seqno 0 (seqnos start at 1).
    SEQNO_ZERO = "seqno-zero", 1;
    /// A player name of 32 bytes or more.
    NAME_TOO_LONG = "name-too-long", 2;
    /// A chat message of 255 bytes or more (the spec: len < 255).
    CHAT_TOO_LONG = "chat-too-long", 3;
    /// A string that is not UTF-8.
    INVALID_UTF8 = "invalid-utf8", 4;
    /// A client-only message sent by the server, or a server-only one by the client.
    WRONG_SENDER = "wrong-sender", 5;
    /// The first reliable message to a new client is not Join with seqno 1.
    HANDSHAKE_FIRST_NOT_JOIN = "handshake-first-not-join", 6;
    /// The packet carrying the first Join does not ack the client's Connect.
    HANDSHAKE_JOIN_NO_ACK = "handshake-join-no-ack", 7;
    /// Input sent before the client saw Synced.
    INPUT_BEFORE_SYNCED = "input-before-synced", 8;
    /// A client speaking with a player id other than the one its Join assigned.
    WRONG_PLAYER_ID = "wrong-player-id", 9;
    /// The server sent something other than Leave to a client after its Disconnect.
    AFTER_DISCONNECT = "after-disconnect", 10;
    /// More than 8 players on one server.
    TOO_MANY_PLAYERS = "too-many-players", 11;
    /// A resent seqno whose bytes differ from its first transmission.
    RESEND_DIFFERS = "resend-differs", 12;
    /// A seqno so far beyond (or behind) the last one that the receiver, which
    /// processes only the next seqno, can never process it.
    SEQNO_OUT_OF_WINDOW = "seqno-out-of-window", 13;
    /// A regular reliable message (Leave, Chat, Remove) the server sent to a
    /// syncing client before its Synced (a lower seqno).
    REGULAR_BEFORE_SYNCED = "regular-before-synced", 14;
}

/// The rule of a codec violation.
pub const fn codec_rule(kind: ViolationKind) -> Rule {
    match kind {
        ViolationKind::Oversize => rules::OVERSIZE,
        ViolationKind::SeqnoZero => rules::SEQNO_ZERO,
        ViolationKind::NameTooLong => rules::NAME_TOO_LONG,
        ViolationKind::ChatTooLong => rules::CHAT_TOO_LONG,
        ViolationKind::InvalidUtf8 => rules::INVALID_UTF8,
    }
}

crate::proto_details! { "lwar";
    /// A decode error as a finding's detail.
    pub fn decode(error: DecodeError) -> ProtoDetail => |f| write!(f, "{error}");

    /// A codec violation as a finding's detail.
    pub fn codec(v: Violation) => |f| write!(f, "{v}");

    /// A message type where it does not belong (wrong sender, after disconnect,
    /// handshake).
    pub fn message(t: MessageType) => |f| f.write_str(t.name());

    /// The first Join's packet acks less than the client's Connect.
    pub fn connect_not_acked(ack: u32, connect: u32) => |f| {
        write!(f, "the packet acks {ack}, not the Connect (seqno {connect})")
    };

    /// Input frame numbers: the new one and the last one.
    pub fn input_frames(frame: u32, last: u32) => |f| write!(f, "frame {frame} after frame {last}");

    /// 8 or more Input frames skipped: the new frame and the last one, and why
    /// the capture cannot tell they were lost.
    pub fn inputs_lost(frame: u32, last: u32) => |f| {
        write!(
            f,
            "frame {frame} after frame {last}; unconfirmed: Inputs are not acknowledged, \
             the tap may have missed their packets"
        )
    };

    /// A run of Input frame numbers below the highest (`highest`, captured in
    /// `last_at`): the first of them (`value`), and the run's length and last
    /// frame.
    fn input_run(value: u32, highest: u32, last_at: u64, packets: u32, last_frame: u64) => |f| {
        write!(f, "Input frame {value} after Input frame {highest} of frame {last_at}")?;
        crate::engine::finding::below_until(f, packets, "Inputs", last_frame)
    };

    /// The repeats of one Leave to a client that said Disconnect (the
    /// specification's way: the server repeats it until the client stops): the
    /// frame of its first send, how many repeats, until which frame.
    pub fn expected_repeats(first_frame: u64, run: RunTail) => |f| {
        write!(f, "Leave first sent in frame {first_frame}")?;
        if run.messages == 1 {
            f.write_str("; repeated once")
        } else {
            run.until(f, "repeats")
        }
    };

    /// A run of the client's Inputs before the server's Synced: how many, and
    /// the last one's frame.
    pub fn input_before_synced(run: RunTail) => |f| {
        f.write_str("Input before Synced")?;
        run.until(f, "Inputs")
    };

    /// The server's regular messages to a syncing client sent before its Synced:
    /// the first one's type and seqno, the Synced's seqno, how many, and the last
    /// one's frame.
    pub fn regular_before_synced(first: MessageType, seqno: u32, synced: u32, run: RunTail) => |f| {
        write!(f, "{}#{seqno} before Synced#{synced}", first.name())?;
        run.until(f, "messages")
    };

    /// A run of the client's messages with the same player id `used`, other than
    /// its own: how many, and the last one's frame.
    pub fn player(used: Id, own: Id, run: RunTail) => |f| {
        write!(f, "player {used}, own id is {own}")?;
        run.until(f, "messages")
    };

    /// The server's messages after it processed the client's Disconnect: the
    /// first one's type and frame, how many, and the last one's frame.
    pub fn after_disconnect(first: MessageType, frame: u64, run: RunTail) => |f| {
        write!(f, "{} in frame {frame}", first.name())?;
        run.until(f, "messages")
    };

    /// The number of players on the server.
    pub fn players(count: u64) => |f| write!(f, "{count} players (max 8)");
}

/// A run of Input frame numbers below the highest (`run.highest`, captured
/// in `last_at`): the first of them, and the run's length and last frame.
pub fn input_regression(run: RegressionRun, last_at: u64) -> Detail {
    input_run(run.value, run.highest, last_at, run.packets, run.last_frame)
}

/// A player id in a finding's numbers: the `uint32` the specification names.
impl Word for Id {
    const BITS: u32 = 32;
    fn to_arg(self) -> u64 {
        u64::from(self.to_u32())
    }
    fn from_arg(bits: u64) -> Self {
        Id::new((bits >> 16) as u16, bits as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::finding::round_trip;

    #[test]
    fn rules_have_their_full_names() {
        // Slots and names of every protocol: `proto::tests`.
        assert_eq!(
            rules::AFTER_DISCONNECT.full_name().to_string(),
            "lwar.violation.after-disconnect"
        );
    }

    #[test]
    fn details_read_as_before() {
        let e = DecodeError::Truncated {
            offset: 12,
            msg_type: MessageType::Join,
            needed: 10,
            available: 3,
        };
        assert_eq!(decode(e).to_string(), e.to_string());
        for e in [
            DecodeError::ShortHeader { len: 3 },
            DecodeError::WrongAppId { found: 0xdeadbeef },
            DecodeError::UnknownType {
                offset: 40,
                type_id: 214,
            },
            DecodeError::DeprecatedType { offset: 7 },
            DecodeError::Truncated {
                offset: (1 << 48) - 1,
                msg_type: MessageType::Update,
                needed: 1 << 47,
                available: 65_535,
            },
        ] {
            assert_eq!(decode(e).to_string(), e.to_string());
            assert_eq!(round_trip(e), e);
        }
        for v in [
            Violation::Oversize { len: 600 },
            Violation::SeqnoZero {
                offset: 12,
                msg_type: MessageType::Chat,
            },
            Violation::NameTooLong {
                offset: 12,
                msg_type: MessageType::Name,
                len: 40,
            },
            Violation::ChatTooLong {
                offset: 30,
                len: 300,
            },
            Violation::InvalidUtf8 {
                offset: 12,
                msg_type: MessageType::Join,
            },
        ] {
            assert_eq!(codec(v).to_string(), v.to_string());
            assert_eq!(round_trip(v), v);
        }
        let one = RunTail {
            messages: 1,
            packets: 1,
            last_frame: 5,
        };
        assert_eq!(
            player(Id::new(1, 2), Id::new(0, 1), one).to_string(),
            "player 1:2, own id is 0:1"
        );
        let run = RunTail {
            messages: 82,
            packets: 53,
            last_frame: 525,
        };
        assert_eq!(
            player(Id::new(1, 2), Id::new(0, 1), run).to_string(),
            "player 1:2, own id is 0:1; 82 messages in 53 packets until frame 525"
        );
        assert_eq!(
            after_disconnect(MessageType::Update, 5, run).to_string(),
            "Update in frame 5; 82 messages in 53 packets until frame 525"
        );
        let inputs = RunTail {
            messages: 148,
            packets: 148,
            last_frame: 1234,
        };
        assert_eq!(
            input_before_synced(inputs).to_string(),
            "Input before Synced; 148 Inputs until frame 1234"
        );
        assert_eq!(input_before_synced(one).to_string(), "Input before Synced");
        assert_eq!(
            regular_before_synced(MessageType::Remove, 70_000, 70_002, one).to_string(),
            "Remove#70000 before Synced#70002"
        );
        assert_eq!(message(MessageType::Join).to_string(), "Join");
    }
}
