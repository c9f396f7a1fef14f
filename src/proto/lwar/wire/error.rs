//! What can go wrong with bytes: decode errors (the bytes cannot be read) and
//! violations (the bytes read, but break the specification).

use super::types::{HEADER_LEN, MAX_CHAT_LEN, MAX_NAME_LEN, MAX_PACKET_SIZE, MessageType};
use std::fmt;

crate::proto::wire_error::wire_errors! {
    /// The bytes cannot be decoded. Offsets are from the start of the UDP payload.
    ///
    /// Every variant carries the offset of the message (or header) it concerns, and what
    /// decoded before it stays available to the caller: see [`super::Messages`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    pub enum DecodeError {
        /// The payload is shorter than the 12-byte packet header.
        #[error("payload of {len} bytes is shorter than the {HEADER_LEN}-byte header")]
        ShortHeader { len: usize } = "short-header",
        /// The payload does not start with lwar's appId.
        #[error("appId 0x{found:08x} at offset 0 is not lwar's 0xf27087c5")]
        WrongAppId { found: u32 } = "wrong-app-id",
        /// A message needs more bytes than the packet has left.
        #[error(
            "{msg_type} at offset {offset} is truncated: it needs {needed} bytes, {available} are left"
        )]
        Truncated {
            offset: usize,
            msg_type: MessageType,
            needed: usize,
            available: usize,
        } = "truncated-message",
        /// A type id that the specification does not define; the rest of the packet is undecodable.
        #[error("unknown message type {type_id} at offset {offset}")]
        UnknownType { offset: usize, type_id: u8 } = "unknown-type",
        /// The deprecated type 102 (once Update); the rest of the packet is undecodable.
        #[error("deprecated message type 102 at offset {offset}")]
        DeprecatedType { offset: usize } = "deprecated-type",
    }
    /// The reason of a [`DecodeError`], without its numbers: what malformed packets are
    /// counted by.
    kinds ErrorKind;
}

/// A message type in a finding's numbers: its id.
impl crate::engine::finding::Word for MessageType {
    const BITS: u32 = 8;
    fn to_arg(self) -> u64 {
        u64::from(self.id())
    }
    fn from_arg(bits: u64) -> Self {
        // Only ever packed from a real MessageType; the fallback is never reached.
        MessageType::from_u8(bits as u8).unwrap_or(MessageType::Connect)
    }
}

impl DecodeError {
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

crate::proto::wire_error::wire_errors! {
    /// The bytes decode, but break a rule of the specification.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Violation {
        /// The packet is longer than 512 bytes.
        Oversize { len: usize } = "oversize",
        /// A reliable message with sequence number 0 (they start at 1).
        SeqnoZero {
            offset: usize,
            msg_type: MessageType,
        } = "seqno-zero",
        /// A player name of 32 bytes or more.
        NameTooLong {
            offset: usize,
            msg_type: MessageType,
            len: usize,
        } = "name-too-long",
        /// A chat message of 255 bytes or more.
        ChatTooLong { offset: usize, len: usize } = "chat-too-long",
        /// A string that is not valid UTF-8.
        InvalidUtf8 {
            offset: usize,
            msg_type: MessageType,
        } = "invalid-utf8",
    }
    /// The rule a [`Violation`] breaks, without its numbers: the sub-kind of
    /// a `violation` finding.
    kinds ViolationKind;
}

impl Violation {
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
