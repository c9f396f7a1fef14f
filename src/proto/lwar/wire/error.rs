//! What can go wrong with bytes: decode errors (the bytes cannot be read) and
//! violations (the bytes read, but break the specification).

use super::types::{HEADER_LEN, MAX_CHAT_LEN, MAX_NAME_LEN, MAX_PACKET_SIZE, MessageType};
use std::fmt;

/// The bytes cannot be decoded. Offsets are from the start of the UDP payload.
///
/// Every variant carries the offset of the message (or header) it concerns, and what
/// decoded before it stays available to the caller: see [`super::Messages`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The payload is shorter than the 12-byte packet header.
    #[error("payload of {len} bytes is shorter than the {HEADER_LEN}-byte header")]
    ShortHeader { len: usize },
    /// The payload does not start with lwar's appId.
    #[error("appId 0x{found:08x} at offset 0 is not lwar's 0xf27087c5")]
    WrongAppId { found: u32 },
    /// A message needs more bytes than the packet has left.
    #[error(
        "{msg_type} at offset {offset} is truncated: it needs {needed} bytes, {available} are left"
    )]
    Truncated {
        offset: usize,
        msg_type: MessageType,
        needed: usize,
        available: usize,
    },
    /// A type id that the specification does not define; the rest of the packet is undecodable.
    #[error("unknown message type {type_id} at offset {offset}")]
    UnknownType { offset: usize, type_id: u8 },
    /// The deprecated type 102 (once Update); the rest of the packet is undecodable.
    #[error("deprecated message type 102 at offset {offset}")]
    DeprecatedType { offset: usize },
}

/// The reason of a [`DecodeError`], without its numbers: what malformed packets are
/// counted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    ShortHeader,
    WrongAppId,
    Truncated,
    UnknownType,
    DeprecatedType,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 5] = [
        ErrorKind::ShortHeader,
        ErrorKind::WrongAppId,
        ErrorKind::Truncated,
        ErrorKind::UnknownType,
        ErrorKind::DeprecatedType,
    ];

    /// A stable kebab-case name, used in JSON and rules.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::ShortHeader => "short-header",
            ErrorKind::WrongAppId => "wrong-app-id",
            ErrorKind::Truncated => "truncated-message",
            ErrorKind::UnknownType => "unknown-type",
            ErrorKind::DeprecatedType => "deprecated-type",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl DecodeError {
    pub const fn kind(&self) -> ErrorKind {
        match self {
            DecodeError::ShortHeader { .. } => ErrorKind::ShortHeader,
            DecodeError::WrongAppId { .. } => ErrorKind::WrongAppId,
            DecodeError::Truncated { .. } => ErrorKind::Truncated,
            DecodeError::UnknownType { .. } => ErrorKind::UnknownType,
            DecodeError::DeprecatedType { .. } => ErrorKind::DeprecatedType,
        }
    }

    /// The offset where undecodable bytes start.
    pub const fn offset(&self) -> usize {
        match *self {
            DecodeError::ShortHeader { .. } | DecodeError::WrongAppId { .. } => 0,
            DecodeError::Truncated { offset, .. }
            | DecodeError::UnknownType { offset, .. }
            | DecodeError::DeprecatedType { offset } => offset,
        }
    }

    /// The message type concerned, where it is known.
    pub const fn msg_type(&self) -> Option<MessageType> {
        match *self {
            DecodeError::Truncated { msg_type, .. } => Some(msg_type),
            _ => None,
        }
    }
}

/// The bytes decode, but break a rule of the specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Violation {
    /// The packet is longer than 512 bytes.
    Oversize { len: usize },
    /// A reliable message with sequence number 0 (they start at 1).
    SeqnoZero {
        offset: usize,
        msg_type: MessageType,
    },
    /// A player name of 32 bytes or more.
    NameTooLong {
        offset: usize,
        msg_type: MessageType,
        len: usize,
    },
    /// A chat message of 255 bytes or more.
    ChatTooLong { offset: usize, len: usize },
    /// A string that is not valid UTF-8.
    InvalidUtf8 {
        offset: usize,
        msg_type: MessageType,
    },
}

/// The rule a [`Violation`] breaks, without its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViolationKind {
    Oversize,
    SeqnoZero,
    NameTooLong,
    ChatTooLong,
    InvalidUtf8,
}

impl ViolationKind {
    pub const ALL: [ViolationKind; 5] = [
        ViolationKind::Oversize,
        ViolationKind::SeqnoZero,
        ViolationKind::NameTooLong,
        ViolationKind::ChatTooLong,
        ViolationKind::InvalidUtf8,
    ];

    /// A stable kebab-case name, used as the sub-kind of a `violation` finding.
    pub const fn name(self) -> &'static str {
        match self {
            ViolationKind::Oversize => "oversize",
            ViolationKind::SeqnoZero => "seqno-zero",
            ViolationKind::NameTooLong => "name-too-long",
            ViolationKind::ChatTooLong => "chat-too-long",
            ViolationKind::InvalidUtf8 => "invalid-utf8",
        }
    }
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Violation {
    pub const fn kind(&self) -> ViolationKind {
        match self {
            Violation::Oversize { .. } => ViolationKind::Oversize,
            Violation::SeqnoZero { .. } => ViolationKind::SeqnoZero,
            Violation::NameTooLong { .. } => ViolationKind::NameTooLong,
            Violation::ChatTooLong { .. } => ViolationKind::ChatTooLong,
            Violation::InvalidUtf8 { .. } => ViolationKind::InvalidUtf8,
        }
    }

    /// Offset of the message concerned (0 for the whole packet).
    pub const fn offset(&self) -> usize {
        match *self {
            Violation::Oversize { .. } => 0,
            Violation::SeqnoZero { offset, .. }
            | Violation::NameTooLong { offset, .. }
            | Violation::ChatTooLong { offset, .. }
            | Violation::InvalidUtf8 { offset, .. } => offset,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Violation::Oversize { len } => {
                write!(
                    f,
                    "packet of {len} bytes exceeds the {MAX_PACKET_SIZE}-byte maximum"
                )
            }
            Violation::SeqnoZero { offset, msg_type } => {
                write!(
                    f,
                    "{msg_type} at offset {offset} has seqno 0 (seqnos start at 1)"
                )
            }
            Violation::NameTooLong {
                offset,
                msg_type,
                len,
            } => write!(
                f,
                "{msg_type} at offset {offset} has a name of {len} bytes (must be < {MAX_NAME_LEN})"
            ),
            Violation::ChatTooLong { offset, len } => write!(
                f,
                "Chat at offset {offset} has a message of {len} bytes (must be < {MAX_CHAT_LEN})"
            ),
            Violation::InvalidUtf8 { offset, msg_type } => {
                write!(
                    f,
                    "{msg_type} at offset {offset} has a string that is not UTF-8"
                )
            }
        }
    }
}
