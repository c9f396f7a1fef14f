//! lwar's own registered findings: the kinds, rules and details that only lwar
//! has, beside the shared ones of [`crate::engine::FindingKind`].

use super::wire::{DecodeError, Id, MessageType, Violation, ViolationKind};
use crate::engine::finding::run_until;
use crate::engine::{Detail, DetailFormat, ProtoDetail, RegressionRun, Rule, RunSpan};
use std::fmt;

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

fn msg_type(id: u64) -> impl fmt::Display {
    fmt::from_fn(move |f| match MessageType::from_u8(id as u8) {
        Some(t) => f.write_str(t.name()),
        None => write!(f, "type {id}"),
    })
}

// Details: how lwar's numbers travel inside a finding, and how they read.

static DECODE: DetailFormat = DetailFormat {
    name: "lwar.decode",
    fmt: |a, f| write!(f, "{}", DecodeError::from_args(a)),
};

/// A decode error as a finding's detail.
pub fn decode(error: DecodeError) -> ProtoDetail {
    ProtoDetail {
        format: &DECODE,
        args: error.to_args(),
    }
}

static CODEC: DetailFormat = DetailFormat {
    name: "lwar.violation",
    fmt: |a, f| write!(f, "{}", Violation::from_args(a)),
};

/// A codec violation as a finding's detail.
pub fn codec(v: Violation) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &CODEC,
        args: v.to_args(),
    })
}

static MESSAGE: DetailFormat = DetailFormat {
    name: "lwar.message",
    fmt: |a, f| write!(f, "{}", msg_type(a[0])),
};

/// A message type where it does not belong (wrong sender, after disconnect,
/// handshake).
pub fn message(t: MessageType) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &MESSAGE,
        args: [u64::from(t.id()), 0, 0, 0],
    })
}

static CONNECT_NOT_ACKED: DetailFormat = DetailFormat {
    name: "lwar.connect-not-acked",
    fmt: |a, f| {
        write!(
            f,
            "the packet acks {}, not the Connect (seqno {})",
            a[0], a[1]
        )
    },
};

/// The first Join's packet acks less than the client's Connect.
pub fn connect_not_acked(ack: u32, connect: u32) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &CONNECT_NOT_ACKED,
        args: [u64::from(ack), u64::from(connect), 0, 0],
    })
}

static INPUT_FRAMES: DetailFormat = DetailFormat {
    name: "lwar.input-frames",
    fmt: |a, f| write!(f, "frame {} after frame {}", a[0], a[1]),
};

/// Input frame numbers: the new one and the last one.
pub fn input_frames(frame: u32, last: u32) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &INPUT_FRAMES,
        args: [u64::from(frame), u64::from(last), 0, 0],
    })
}

static INPUTS_LOST_FRAMES: DetailFormat = DetailFormat {
    name: "lwar.inputs-lost",
    fmt: |a, f| {
        write!(
            f,
            "frame {} after frame {}; unconfirmed: Inputs are not acknowledged, \
             the tap may have missed their packets",
            a[0], a[1]
        )
    },
};

/// 8 or more Input frames skipped: the new frame and the last one, and why
/// the capture cannot tell they were lost.
pub fn inputs_lost(frame: u32, last: u32) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &INPUTS_LOST_FRAMES,
        args: [u64::from(frame), u64::from(last), 0, 0],
    })
}

static INPUT_RUN: DetailFormat = DetailFormat {
    name: "lwar.input-regression",
    fmt: |a, f| {
        let (frame, last) = (a[0] & 0xffff_ffff, a[0] >> 32);
        write!(
            f,
            "Input frame {frame} after Input frame {last} of frame {}",
            a[2]
        )?;
        crate::engine::finding::below_until(f, a[1] as u32, "Inputs", a[3])
    },
};

/// A run of Input frame numbers below the highest (`last`, captured in
/// `last_at`): the first of them, and the run's length and last frame.
pub fn input_regression(run: RegressionRun, last_at: u64) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &INPUT_RUN,
        args: [
            u64::from(run.value) | u64::from(run.highest) << 32,
            u64::from(run.packets),
            last_at,
            run.last_frame,
        ],
    })
}

/// A run's messages and packets, packed in one argument.
fn pack_run(run: &RunSpan) -> u64 {
    u64::from(run.messages) | u64::from(run.packets) << 32
}

/// The tail of a run's detail, from [`pack_run`] and its last frame.
fn until(f: &mut fmt::Formatter<'_>, packed: u64, unit: &str, last_frame: u64) -> fmt::Result {
    run_until(f, packed & 0xffff_ffff, unit, packed >> 32, last_frame)
}

static EXPECTED_REPEATS: DetailFormat = DetailFormat {
    name: "lwar.expected-repeats",
    fmt: |a, f| {
        write!(f, "Leave first sent in frame {}", a[0])?;
        let (repeats, packets) = (a[1] & 0xffff_ffff, a[1] >> 32);
        if repeats == 1 {
            f.write_str("; repeated once")
        } else {
            run_until(f, repeats, "repeats", packets, a[2])
        }
    },
};

/// The repeats of one Leave to a client that said Disconnect (the
/// specification's way: the server repeats it until the client stops): the
/// frame of its first send, how many repeats, until which frame.
pub fn expected_repeats(first_frame: u64, run: &RunSpan) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &EXPECTED_REPEATS,
        args: [first_frame, pack_run(run), run.last_frame, 0],
    })
}

static INPUT_BEFORE_SYNCED: DetailFormat = DetailFormat {
    name: "lwar.input-before-synced",
    fmt: |a, f| {
        f.write_str("Input before Synced")?;
        until(f, a[0], "Inputs", a[1])
    },
};

/// A run of the client's Inputs before the server's Synced: how many, and
/// the last one's frame.
pub fn input_before_synced(run: &RunSpan) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &INPUT_BEFORE_SYNCED,
        args: [pack_run(run), run.last_frame, 0, 0],
    })
}

static REGULAR_BEFORE_SYNCED: DetailFormat = DetailFormat {
    name: "lwar.regular-before-synced",
    fmt: |a, f| {
        let (first, seqno) = (a[0] & 0xff, a[0] >> 8);
        write!(f, "{}#{seqno} before Synced#{}", msg_type(first), a[3])?;
        until(f, a[1], "messages", a[2])
    },
};

/// The server's regular messages to a syncing client sent before its Synced:
/// the first one's type and seqno, the Synced's seqno, how many, and the last
/// one's frame.
pub fn regular_before_synced(first: MessageType, seqno: u32, synced: u32, run: &RunSpan) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &REGULAR_BEFORE_SYNCED,
        args: [
            u64::from(first.id()) | u64::from(seqno) << 8,
            pack_run(run),
            run.last_frame,
            u64::from(synced),
        ],
    })
}

static PLAYER: DetailFormat = DetailFormat {
    name: "lwar.player",
    fmt: |a, f| {
        let id = |x: u64| Id::new((x >> 16) as u16, x as u16);
        write!(f, "player {}, own id is {}", id(a[0]), id(a[1]))?;
        until(f, a[2], "messages", a[3])
    },
};

/// A run of the client's messages with the same player id `used`, other than
/// its own: how many, and the last one's frame.
pub fn player(used: Id, own: Id, run: &RunSpan) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &PLAYER,
        args: [
            u64::from(used.to_u32()),
            u64::from(own.to_u32()),
            pack_run(run),
            run.last_frame,
        ],
    })
}

static AFTER_DISCONNECT: DetailFormat = DetailFormat {
    name: "lwar.after-disconnect",
    fmt: |a, f| {
        write!(f, "{} in frame {}", msg_type(a[0]), a[3])?;
        until(f, a[1], "messages", a[2])
    },
};

/// The server's messages after it processed the client's Disconnect: the
/// first one's type and frame (`run.frame`), how many, and the last one's
/// frame.
pub fn after_disconnect(first: MessageType, run: &RunSpan) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &AFTER_DISCONNECT,
        args: [
            u64::from(first.id()),
            pack_run(run),
            run.last_frame,
            run.frame,
        ],
    })
}

static PLAYERS: DetailFormat = DetailFormat {
    name: "lwar.players",
    fmt: |a, f| write!(f, "{} players (max 8)", a[0]),
};

/// The number of players on the server.
pub fn players(count: usize) -> Detail {
    Detail::Proto(ProtoDetail {
        format: &PLAYERS,
        args: [count as u64, 0, 0, 0],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(DecodeError::from_args(&e.to_args()), e);
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
            assert_eq!(Violation::from_args(&v.to_args()), v);
        }
        let one = RunSpan {
            frame: 5,
            ts: crate::capture::Timestamp(0),
            seqno: None,
            messages: 1,
            packets: 1,
            last_frame: 5,
        };
        assert_eq!(
            player(Id::new(1, 2), Id::new(0, 1), &one).to_string(),
            "player 1:2, own id is 0:1"
        );
        let run = RunSpan {
            messages: 82,
            packets: 53,
            last_frame: 525,
            ..one
        };
        assert_eq!(
            player(Id::new(1, 2), Id::new(0, 1), &run).to_string(),
            "player 1:2, own id is 0:1; 82 messages in 53 packets until frame 525"
        );
        assert_eq!(
            after_disconnect(MessageType::Update, &run).to_string(),
            "Update in frame 5; 82 messages in 53 packets until frame 525"
        );
        let inputs = RunSpan {
            messages: 148,
            packets: 148,
            last_frame: 1234,
            ..one
        };
        assert_eq!(
            input_before_synced(&inputs).to_string(),
            "Input before Synced; 148 Inputs until frame 1234"
        );
        assert_eq!(input_before_synced(&one).to_string(), "Input before Synced");
        assert_eq!(
            regular_before_synced(MessageType::Remove, 70_000, 70_002, &one).to_string(),
            "Remove#70000 before Synced#70002"
        );
        assert_eq!(message(MessageType::Join).to_string(), "Join");
    }
}
