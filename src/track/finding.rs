//! The expert findings: what the tracker flags, how bad it is, and where.

use crate::codec::{ErrorKind, ViolationKind};
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
