//! What can go wrong with bytes: decode errors (the bytes cannot be read),
//! violations (the bytes read, but break a rule), and encode errors (a
//! representation whose lengths do not fit their fields). Each text places
//! itself as every protocol's does: `at offset N` ([`At`]), a shortage in
//! [`Short`]'s one sentence (`crate::proto::wire_error`).

use super::defs::{F, HEADER_LEN};
use super::types::PacketType;
use crate::engine::finding::Word;
use crate::proto::wire_error::{At, Short, Within};
use std::fmt;

/// Which part of a payload a length or truncation concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// The fixed part of the payload (every field before a variable length).
    Fixed,
    /// AUTH_OK's name.
    Name,
    /// A PROP's shape (a circle, or a polygon's `vertices_len`).
    Shape,
    /// A polygon's vertices.
    Vertices,
    /// A PROP's `render_data_len` and render data.
    RenderData,
    /// A MSG's block (only a capture can cut it: it is the rest of the packet).
    Block,
    /// Whatever followed a payload that decoded (only a capture can cut it).
    Rest,
}

impl Part {
    pub const fn name(self) -> &'static str {
        match self {
            Part::Fixed => "fixed part",
            Part::Name => "name",
            Part::Shape => "shape",
            Part::Vertices => "vertices",
            Part::RenderData => "render data",
            Part::Block => "block",
            Part::Rest => "end",
        }
    }

    /// The part a length or count field counts, as the encoder's
    /// [`EmitError::TooLong`] names it ([`Part::Fixed`] for any other field).
    pub(super) const fn counted_by(f: F) -> Part {
        match f {
            F::NAME_LEN => Part::Name,
            F::VERTICES_LEN => Part::Vertices,
            F::RENDER_DATA_LEN => Part::RenderData,
            _ => Part::Fixed,
        }
    }

    pub(crate) const fn from_u8(v: u8) -> Part {
        match v {
            1 => Part::Name,
            2 => Part::Shape,
            3 => Part::Vertices,
            4 => Part::RenderData,
            5 => Part::Block,
            6 => Part::Rest,
            _ => Part::Fixed,
        }
    }

    pub(crate) const fn to_u8(self) -> u8 {
        match self {
            Part::Fixed => 0,
            Part::Name => 1,
            Part::Shape => 2,
            Part::Vertices => 3,
            Part::RenderData => 4,
            Part::Block => 5,
            Part::Rest => 6,
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::proto::wire_error::wire_errors! {
    /// The bytes cannot be decoded. Offsets are from the start of the packet (the
    /// UDP payload, or the rebuilt message).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    pub enum DecodeError {
        /// Fewer than the 8 bytes of the header.
        #[error("packet of {len} bytes is shorter than the {HEADER_LEN}-byte header")]
        ShortHeader { len: usize } = "short-header",
        /// A version other than 0: the payload's layout is unknown.
        #[error("version {version} {} is unknown (only version 0 is defined)", At(6))]
        UnknownVersion { version: u8 } = "unknown-version",
        /// A (channel, op_code) pair the specification does not define.
        #[error(
            "channel {channel}, op 0x{op:02x} {} is not a defined packet type",
            At(4)
        )]
        UnknownType { channel: u8, op: u8 } = "unknown-type",
        /// A part of the payload needs more bytes than are left.
        #[error("{}", Short {
            what: format_args!("{packet_type} {part}"),
            offset: *offset as u64,
            needed: *needed as u64,
            left: *available as u64,
            within: Within::Datagram,
        })]
        Truncated {
            offset: usize,
            packet_type: PacketType,
            part: Part,
            needed: usize,
            available: usize,
        } = "truncated-payload",
        /// A signed length field below zero.
        #[error("{packet_type} {part} length {} is negative ({len})", At::of(*offset))]
        NegativeLength {
            offset: usize,
            packet_type: PacketType,
            part: Part,
            len: i16,
        } = "negative-length",
        /// A PROP `shape_type` other than 0 (Circle) or 1 (Polygon).
        #[error("PROP shape_type {shape_type} {} is unknown (0 circle, 1 polygon)", At::of(*offset))]
        UnknownShape { offset: usize, shape_type: u8 } = "unknown-shape",
        /// Bytes after a fully decoded payload.
        #[error("{count} trailing bytes {} after a complete {packet_type}", At::of(*offset))]
        TrailingBytes {
            offset: usize,
            packet_type: PacketType,
            count: usize,
        } = "trailing-bytes",
    }
    /// The reason of a [`DecodeError`], without its numbers: what malformed packets
    /// are counted by.
    kinds ErrorKind;
}

/// A packet type in a finding's numbers: its ordinal.
impl Word for PacketType {
    const BITS: u32 = 8;
    fn to_arg(self) -> u64 {
        self.ordinal() as u64
    }
    fn from_arg(bits: u64) -> Self {
        // Only ever packed from a real PacketType; the fallback is never reached.
        PacketType::from_ordinal(bits as usize).unwrap_or(PacketType::Auth)
    }
}

/// A part in a finding's numbers.
impl Word for Part {
    const BITS: u32 = 8;
    fn to_arg(self) -> u64 {
        u64::from(self.to_u8())
    }
    fn from_arg(bits: u64) -> Self {
        Part::from_u8(bits as u8)
    }
}

impl ErrorKind {
    /// True for the kinds a capture's snaplen can cause: bytes missing at the end.
    pub const fn is_shortage(self) -> bool {
        matches!(self, ErrorKind::ShortHeader | ErrorKind::Truncated)
    }
}

impl DecodeError {
    /// The offset where the undecodable bytes start.
    pub const fn offset(&self) -> usize {
        match *self {
            DecodeError::ShortHeader { .. } => 0,
            DecodeError::UnknownVersion { .. } => 6,
            DecodeError::UnknownType { .. } => 4,
            DecodeError::Truncated { offset, .. }
            | DecodeError::NegativeLength { offset, .. }
            | DecodeError::UnknownShape { offset, .. }
            | DecodeError::TrailingBytes { offset, .. } => offset,
        }
    }

    /// The bytes needed from [`DecodeError::offset`], for a shortage.
    pub const fn needed(&self) -> Option<usize> {
        match *self {
            DecodeError::ShortHeader { .. } => Some(HEADER_LEN),
            DecodeError::Truncated { needed, .. } => Some(needed),
            _ => None,
        }
    }

    /// The bytes that were left from [`DecodeError::offset`], for a shortage.
    pub const fn available(&self) -> Option<usize> {
        match *self {
            DecodeError::ShortHeader { len } => Some(len),
            DecodeError::Truncated { available, .. } => Some(available),
            _ => None,
        }
    }

    /// The packet type concerned, where the header named one.
    pub const fn packet_type(&self) -> Option<PacketType> {
        match *self {
            DecodeError::Truncated { packet_type, .. }
            | DecodeError::NegativeLength { packet_type, .. }
            | DecodeError::TrailingBytes { packet_type, .. } => Some(packet_type),
            DecodeError::UnknownShape { .. } => Some(PacketType::Prop),
            _ => None,
        }
    }
}

crate::proto::wire_error::wire_errors! {
    /// The bytes decode, but break a rule of the specification or its notes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Violation {
        /// The header's reserved byte is not 0.
        ReservedNonZero { reserved: u8 } = "reserved-nonzero",
        /// AUTH_OK's name is not UTF-8.
        InvalidUtf8 { offset: usize } = "invalid-utf8",
        /// A MSG whose `msg_len` is below the 8-byte header every message starts with.
        MsgLenShort { msg_len: u32 } = "msg-len-short",
        /// A MSG block with more bytes than the whole message.
        BlockOverrun { block_len: usize, msg_len: u32 } = "block-overrun",
        /// A MSG block without bytes, of a message that has some.
        EmptyBlock { block_id: u16 } = "empty-block",
    }
    /// The rule a [`Violation`] breaks, without its numbers: the rule of the
    /// `violation` finding.
    kinds ViolationKind;
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Violation::ReservedNonZero { reserved } => {
                write!(f, "reserved byte {} is {reserved}, not 0", At(7))
            }
            Violation::InvalidUtf8 { offset } => {
                write!(f, "AUTH_OK name {} is not UTF-8", At::of(offset))
            }
            Violation::MsgLenShort { msg_len } => write!(
                f,
                "MSG msg_len {msg_len} {} is shorter than a {HEADER_LEN}-byte packet header",
                At(12)
            ),
            Violation::BlockOverrun { block_len, msg_len } => write!(
                f,
                "MSG block of {block_len} bytes {} exceeds msg_len {msg_len}",
                At(18)
            ),
            Violation::EmptyBlock { block_id } => {
                write!(f, "MSG block {block_id} {} is empty", At(18))
            }
        }
    }
}

/// A representation that cannot be encoded: a length that does not fit its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error("{part} of {len} items does not fit its length field (max {max})")]
    TooLong { part: Part, len: usize, max: usize },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_where_and_how_much() {
        let e = DecodeError::Truncated {
            offset: 42,
            packet_type: PacketType::AuthOk,
            part: Part::Name,
            needed: 10,
            available: 3,
        };
        assert_eq!(
            e.to_string(),
            "AUTH_OK name at offset 42 is truncated: it needs 10 bytes, 3 are left"
        );
        assert_eq!(
            (e.offset(), e.needed(), e.available()),
            (42, Some(10), Some(3))
        );
        assert_eq!(e.kind().name(), "truncated-payload");
        let s = DecodeError::ShortHeader { len: 5 };
        assert_eq!(
            (s.offset(), s.needed(), s.available()),
            (0, Some(8), Some(5))
        );
        assert!(s.kind().is_shortage());
        assert!(
            !DecodeError::UnknownVersion { version: 1 }
                .kind()
                .is_shortage()
        );
        let mut names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }

    /// Every text, as the findings' details show it: each places itself
    /// as every protocol's does (`proto::wire_error`).
    #[test]
    fn every_text_places_itself() {
        let t = PacketType::Prop;
        let texts: Vec<String> = [
            DecodeError::ShortHeader { len: 5 },
            DecodeError::UnknownVersion { version: 2 },
            DecodeError::UnknownType {
                channel: 3,
                op: 0x1f,
            },
            DecodeError::Truncated {
                offset: 33,
                packet_type: t,
                part: Part::Vertices,
                needed: 16,
                available: 9,
            },
            DecodeError::NegativeLength {
                offset: 33,
                packet_type: t,
                part: Part::Shape,
                len: -2,
            },
            DecodeError::UnknownShape {
                offset: 32,
                shape_type: 7,
            },
            DecodeError::TrailingBytes {
                offset: 16,
                packet_type: PacketType::Pong,
                count: 3,
            },
        ]
        .iter()
        .map(ToString::to_string)
        .chain(
            [
                Violation::ReservedNonZero { reserved: 4 },
                Violation::InvalidUtf8 { offset: 42 },
                Violation::MsgLenShort { msg_len: 3 },
                Violation::BlockOverrun {
                    block_len: 20,
                    msg_len: 10,
                },
                Violation::EmptyBlock { block_id: 2 },
            ]
            .iter()
            .map(ToString::to_string),
        )
        .collect();
        assert_eq!(
            texts,
            [
                "packet of 5 bytes is shorter than the 8-byte header",
                "version 2 at offset 6 is unknown (only version 0 is defined)",
                "channel 3, op 0x1f at offset 4 is not a defined packet type",
                "PROP vertices at offset 33 is truncated: it needs 16 bytes, 9 are left",
                "PROP shape length at offset 33 is negative (-2)",
                "PROP shape_type 7 at offset 32 is unknown (0 circle, 1 polygon)",
                "3 trailing bytes at offset 16 after a complete PONG",
                "reserved byte at offset 7 is 4, not 0",
                "AUTH_OK name at offset 42 is not UTF-8",
                "MSG msg_len 3 at offset 12 is shorter than a 8-byte packet header",
                "MSG block of 20 bytes at offset 18 exceeds msg_len 10",
                "MSG block 2 at offset 18 is empty",
            ]
        );
    }

    #[test]
    fn parts_pack_and_unpack() {
        for p in [
            Part::Fixed,
            Part::Name,
            Part::Shape,
            Part::Vertices,
            Part::RenderData,
            Part::Block,
            Part::Rest,
        ] {
            assert_eq!(Part::from_u8(p.to_u8()), p);
        }
    }
}
