//! The expert findings: what the tracker flags, how bad it is, and where.

use crate::capture::Timestamp;
use crate::proto::lwar::wire::{DecodeError, ErrorKind, Id, MessageType, Violation, ViolationKind};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which way a packet travels within a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Direction {
    /// Client to server.
    #[serde(rename = "c2s")]
    ClientToServer,
    /// Server to client.
    #[serde(rename = "s2c")]
    ServerToClient,
}

impl Direction {
    pub const fn name(self) -> &'static str {
        match self {
            Direction::ClientToServer => "c2s",
            Direction::ServerToClient => "s2c",
        }
    }

    pub const fn reverse(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }

    /// 0 for c2s, 1 for s2c: an index for per-direction arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How bad a finding is. Ordered: `Error` is the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub const fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! kinds {
    ($( $(#[$doc:meta])* $name:ident = $text:literal, $severity:ident; )*) => {
        /// Every kind of finding, with its stable kebab-case name (used alike in JSON,
        /// `check` rules and the display filter).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum FindingKind {
            $( $(#[$doc])* $name, )*
        }

        impl FindingKind {
            /// A dense index in `0..FindingKind::ALL.len()`.
            pub const fn ordinal(self) -> usize {
                self as usize
            }

            pub const ALL: [FindingKind; 18] = [ $( FindingKind::$name, )* ];

            pub const fn name(self) -> &'static str {
                match self { $( FindingKind::$name => $text, )* }
            }

            pub const fn severity(self) -> Severity {
                match self { $( FindingKind::$name => Severity::$severity, )* }
            }

            pub fn from_name(name: &str) -> Option<Self> {
                match name { $( $text => Some(FindingKind::$name), )* _ => None }
            }
        }
    };
}

kinds! {
    /// A reliable message seen before, whose seqno the receiver had already acked in
    /// a packet captured earlier: the sender resent what had arrived.
    SpuriousResend = "spurious-resend", Warning;
    /// A reliable message whose seqno was seen in an earlier packet.
    Resend = "resend", Note;
    /// The server's repeated Leave to a client that sent Disconnect: the
    /// specification's way, not loss. Kept out of the resend rate.
    ExpectedRepeat = "expected-repeat", Note;
    /// The same seqno twice in one packet.
    DuplicateInPacket = "duplicate-in-packet", Note;
    /// A seqno never seen before but below the highest seen: it fills a gap.
    OutOfOrder = "out-of-order", Note;
    /// A seqno more than one above the highest seen.
    Gap = "gap", Note;
    /// A seqno skipped by a gap and never seen by the end of the capture.
    Lost = "lost", Warning;
    /// The same payload bytes as a recent packet in the same direction.
    DuplicatePacket = "duplicate-packet", Note;
    /// A header timestamp lower than an earlier packet's in the same direction.
    Reordered = "reordered", Warning;
    /// An ack lower than an earlier ack in the same direction.
    AckRegression = "ack-regression", Warning;
    /// An ack above every reliable seqno captured in the other direction.
    AckUnseen = "ack-unseen", Warning;
    /// A payload the codec cannot decode (reason and offset in the detail).
    Malformed = "malformed", Error;
    /// A frame cut short by the capture's snaplen: not the sender's fault.
    Truncated = "truncated", Warning;
    /// A packet over 512 bytes.
    Oversize = "oversize", Warning;
    /// An Input frame number lower than the last.
    InputRegression = "input-regression", Warning;
    /// Input frames skipped (8 or fewer: the history bits cover them).
    InputGap = "input-gap", Note;
    /// More than 8 Input frames skipped: inputs were lost for good.
    InputsLost = "inputs-lost", Warning;
    /// A rule of the specification broken; the [`Rule`] names which.
    Violation = "violation", Error;
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The rule a `violation` finding breaks: its sub-kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// A rule the codec checks on the bytes (seqno 0, name too long, ...).
    Codec(ViolationKind),
    /// A client-only message sent by the server, or a server-only one by the client.
    WrongSender,
    /// The first reliable message to a new client is not Join with seqno 1.
    HandshakeFirstNotJoin,
    /// The packet carrying the first Join does not ack the client's Connect.
    HandshakeJoinNoAck,
    /// Input sent before the client saw Synced.
    InputBeforeSynced,
    /// A client speaking with a player id other than the one its Join assigned.
    WrongPlayerId,
    /// The server sent something other than Leave to a client after its Disconnect.
    AfterDisconnect,
    /// More than 8 players on one server.
    TooManyPlayers,
    /// A resent seqno whose bytes differ from its first transmission.
    ResendDiffers,
}

impl Rule {
    /// Every rule; [`Rule::ordinal`] indexes this array.
    pub const ALL: [Rule; 14] = [
        Rule::Codec(ViolationKind::Oversize),
        Rule::Codec(ViolationKind::SeqnoZero),
        Rule::Codec(ViolationKind::NameTooLong),
        Rule::Codec(ViolationKind::ChatTooLong),
        Rule::Codec(ViolationKind::InvalidUtf8),
        Rule::Codec(ViolationKind::EmptyUpdate),
        Rule::WrongSender,
        Rule::HandshakeFirstNotJoin,
        Rule::HandshakeJoinNoAck,
        Rule::InputBeforeSynced,
        Rule::WrongPlayerId,
        Rule::AfterDisconnect,
        Rule::TooManyPlayers,
        Rule::ResendDiffers,
    ];

    /// A dense index in `0..Rule::ALL.len()`.
    pub const fn ordinal(self) -> usize {
        match self {
            Rule::Codec(v) => v as usize,
            Rule::WrongSender => 6,
            Rule::HandshakeFirstNotJoin => 7,
            Rule::HandshakeJoinNoAck => 8,
            Rule::InputBeforeSynced => 9,
            Rule::WrongPlayerId => 10,
            Rule::AfterDisconnect => 11,
            Rule::TooManyPlayers => 12,
            Rule::ResendDiffers => 13,
        }
    }

    pub fn from_name(name: &str) -> Option<Rule> {
        Rule::ALL.into_iter().find(|r| r.name() == name)
    }

    pub const fn name(self) -> &'static str {
        match self {
            Rule::Codec(v) => v.name(),
            Rule::WrongSender => "wrong-sender",
            Rule::HandshakeFirstNotJoin => "handshake-first-not-join",
            Rule::HandshakeJoinNoAck => "handshake-join-no-ack",
            Rule::InputBeforeSynced => "input-before-synced",
            Rule::WrongPlayerId => "wrong-player-id",
            Rule::AfterDisconnect => "after-disconnect",
            Rule::TooManyPlayers => "too-many-players",
            Rule::ResendDiffers => "resend-differs",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a malformed or truncated packet could not be fully decoded.
pub type MalformedReason = ErrorKind;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names: Vec<_> = FindingKind::ALL.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FindingKind::ALL.len());
        for k in FindingKind::ALL {
            assert_eq!(FindingKind::from_name(k.name()), Some(k));
        }
        assert_eq!(FindingKind::from_name("resends"), None);
        for (i, r) in Rule::ALL.iter().enumerate() {
            assert_eq!(r.ordinal(), i, "{r}");
            assert_eq!(Rule::from_name(r.name()), Some(*r));
        }
    }

    #[test]
    fn severities_follow_the_issue() {
        use FindingKind::*;
        for k in [Malformed, Violation] {
            assert_eq!(k.severity(), Severity::Error, "{k}");
        }
        for k in [
            SpuriousResend,
            Lost,
            Reordered,
            AckUnseen,
            Oversize,
            InputsLost,
        ] {
            assert_eq!(k.severity(), Severity::Warning, "{k}");
        }
        for k in [Resend, OutOfOrder, DuplicateInPacket, DuplicatePacket, Gap] {
            assert_eq!(k.severity(), Severity::Note, "{k}");
        }
    }
}

/// Identifies a session within one tracker run: an index in the order sessions were
/// first seen.
pub type SessionId = usize;

/// One finding: what, how bad, where, and the numbers behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// The rule broken, for `violation` findings.
    pub rule: Option<Rule>,
    /// The frame that raised it (for `lost`, the frame of the gap).
    pub frame: u64,
    pub ts: Timestamp,
    pub session: SessionId,
    pub direction: Direction,
    /// The reliable message concerned, where there is one.
    pub seqno: Option<u32>,
    pub detail: Detail,
}

impl Finding {
    pub const fn severity(&self) -> Severity {
        self.kind.severity()
    }

    /// `violation/wrong-sender` for violations, the kind's name otherwise.
    pub fn label(&self) -> impl fmt::Display + '_ {
        fmt::from_fn(move |f| match self.rule {
            Some(rule) => write!(f, "{}/{}", self.kind, rule),
            None => write!(f, "{}", self.kind),
        })
    }
}

/// The numbers behind a finding. Plain values, so raising a finding never allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    None,
    /// A repeat of a seqno first captured in `first_frame`, `delay_ns` earlier;
    /// this is capture number `tries` of it.
    Repeat {
        first_frame: u64,
        delay_ns: u64,
        tries: u32,
    },
    /// For a spurious resend: the ack, captured earlier, that covered it.
    AckedBefore {
        ack: u32,
        first_frame: u64,
    },
    /// A seqno that jumped past `missing` unseen ones.
    Gap {
        highest: u32,
        missing: u32,
    },
    /// A seqno that fills a gap below `highest`.
    Fill {
        highest: u32,
    },
    /// The same bytes as the packet of `frame`.
    DuplicateOf {
        frame: u64,
    },
    /// A header timestamp below the highest seen.
    Timestamp {
        timestamp: u32,
        highest: u32,
    },
    /// An ack below an earlier one.
    AckRegression {
        ack: u32,
        previous: u32,
    },
    /// The first Join's packet acks less than the client's Connect.
    ConnectNotAcked {
        ack: u32,
        connect: u32,
    },
    /// An ack above the highest seqno captured the other way.
    AckUnseen {
        ack: u32,
        highest: u32,
    },
    /// What the codec could not decode. For `truncated` findings, the capture
    /// kept `captured` of the datagram's `len` bytes.
    Decode {
        error: DecodeError,
        captured: usize,
        len: usize,
    },
    /// Input frame numbers: the new one and the last one.
    InputFrames {
        frame: u32,
        last: u32,
    },
    /// A rule the codec checks.
    Codec(Violation),
    /// A message type where it does not belong (wrong sender, after disconnect,
    /// handshake).
    Message {
        msg_type: MessageType,
    },
    /// A player id other than the client's own.
    Player {
        used: Id,
        own: Id,
    },
    /// The number of players on the server.
    Players {
        count: usize,
    },
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Detail::None => Ok(()),
            Detail::Repeat {
                first_frame,
                delay_ns,
                tries,
            } => write!(
                f,
                "try {tries}, first in frame {first_frame}, {:.1} ms earlier",
                delay_ns as f64 / 1e6
            ),
            Detail::AckedBefore { ack, first_frame } => {
                write!(f, "already acked (ack {ack}); first in frame {first_frame}")
            }
            Detail::Gap { highest, missing } => {
                write!(f, "{missing} missing after seqno {highest}")
            }
            Detail::Fill { highest } => write!(f, "fills a gap below seqno {highest}"),
            Detail::DuplicateOf { frame } => write!(f, "same bytes as frame {frame}"),
            Detail::Timestamp { timestamp, highest } => {
                write!(f, "timestamp {timestamp} after {highest}")
            }
            Detail::AckRegression { ack, previous } => write!(f, "ack {ack} after ack {previous}"),
            Detail::ConnectNotAcked { ack, connect } => {
                write!(
                    f,
                    "the packet acks {ack}, not the Connect (seqno {connect})"
                )
            }
            Detail::AckUnseen { ack, highest } => {
                write!(
                    f,
                    "ack {ack}, highest seqno captured the other way is {highest}"
                )
            }
            Detail::Decode {
                error,
                captured,
                len,
            } => {
                write!(f, "{error}")?;
                if captured < len {
                    write!(f, " (capture kept {captured} of {len} bytes)")?;
                }
                Ok(())
            }
            Detail::InputFrames { frame, last } => write!(f, "frame {frame} after frame {last}"),
            Detail::Codec(v) => write!(f, "{v}"),
            Detail::Message { msg_type } => write!(f, "{msg_type}"),
            Detail::Player { used, own } => write!(f, "player {used}, own id is {own}"),
            Detail::Players { count } => write!(f, "{count} players (max 8)"),
        }
    }
}
