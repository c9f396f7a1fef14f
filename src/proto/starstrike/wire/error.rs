//! What can go wrong with bytes: decode errors (the packet cannot be read past
//! some offset) and violations (the packet reads, but breaks a rule).

use super::layout::FieldId;
use super::types::{HEADER_LEN, MAGIC, MTU, PacketType};
use crate::engine::finding::Word;
use crate::proto::wire_error::{Short, Within};
use std::fmt;

/// A truncation's text: the type and field cut, at the field's offset, the
/// payload's counts taken from there.
fn truncated(
    t: PacketType,
    offset: usize,
    field: FieldId,
    needed: usize,
    available: usize,
) -> Short<impl fmt::Display> {
    let from = offset.saturating_sub(HEADER_LEN);
    Short {
        what: fmt::from_fn(move |f| write!(f, "{t} {}", field.def().label)),
        offset: offset as u64,
        needed: needed.saturating_sub(from) as u64,
        left: available.saturating_sub(from) as u64,
        within: Within::Datagram,
    }
}

crate::proto::wire_error::wire_errors! {
    /// The bytes cannot be decoded. Offsets are from the start of the UDP payload.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
    pub enum DecodeError {
        /// The payload is shorter than the 12-byte header.
        #[error("payload of {len} bytes is shorter than the {HEADER_LEN}-byte header")]
        ShortHeader { len: usize } = "short-header",
        /// The payload does not start with the magic "STRS".
        #[error("protocolId 0x{found:08x} at offset 0 is not Starstrike's 0x{MAGIC:08x} (\"STRS\")")]
        WrongMagic { found: u32 } = "wrong-magic",
        /// A `packetType` the specification does not define: nothing past the
        /// header can be read.
        #[error("unknown packetType 0x{type_id:04x} at offset 4")]
        UnknownType { type_id: u16 } = "unknown-type",
        /// The payload is shorter than its type needs (for WorldSnapshot: than
        /// `5 + 47 * entityCount`). `offset` is where the first missing byte's field
        /// starts; `needed` and `available` count payload bytes. The text is the
        /// shared shortage ([`Short`]), which counts from `offset`: `WorldSnapshot
        /// position.y at offset 73 is truncated: it needs 38 bytes, 0 are left`.
        #[error(
            "{}",
            truncated(*packet_type, *offset, *field, *needed, *available)
        )]
        Truncated {
            packet_type: PacketType,
            offset: usize,
            field: FieldId,
            needed: usize,
            available: usize,
        } = "truncated-payload",
        /// The payload is longer than its type allows: `extra` bytes from `offset`.
        #[error(
            "{packet_type} has {extra} trailing bytes at offset {offset}: its payload is {expected} bytes"
        )]
        TrailingBytes {
            packet_type: PacketType,
            offset: usize,
            expected: usize,
            extra: usize,
        } = "trailing-bytes",
    }
    /// The reason of a [`DecodeError`], without its numbers: what malformed packets
    /// are counted by.
    kinds ErrorKind;
}

/// A packet type in a finding's numbers: its id.
impl Word for PacketType {
    const BITS: u32 = 16;
    fn to_arg(self) -> u64 {
        u64::from(self.id())
    }
    fn from_arg(bits: u64) -> Self {
        // Only ever packed from a real PacketType; the fallback is never reached.
        PacketType::from_u16(bits as u16).unwrap_or(PacketType::Heartbeat)
    }
}

/// A field in a finding's numbers: its index in the layout.
impl Word for FieldId {
    const BITS: u32 = 16;
    fn to_arg(self) -> u64 {
        u64::from(self.index())
    }
    fn from_arg(bits: u64) -> Self {
        FieldId::from_index(bits).unwrap_or(super::layout::f::HEADER)
    }
}

impl DecodeError {
    /// The offset where undecodable bytes start.
    pub const fn offset(&self) -> usize {
        match *self {
            DecodeError::ShortHeader { .. } | DecodeError::WrongMagic { .. } => 0,
            DecodeError::UnknownType { .. } => 4,
            DecodeError::Truncated { offset, .. } | DecodeError::TrailingBytes { offset, .. } => {
                offset
            }
        }
    }

    /// The packet type concerned, where it is known.
    pub const fn packet_type(&self) -> Option<PacketType> {
        match *self {
            DecodeError::Truncated { packet_type, .. }
            | DecodeError::TrailingBytes { packet_type, .. } => Some(packet_type),
            _ => None,
        }
    }

    /// The bytes needed and the bytes present, where the error is a short read:
    /// the whole header for `ShortHeader`, the payload for `Truncated`.
    pub const fn needed_available(&self) -> Option<(usize, usize)> {
        match *self {
            DecodeError::ShortHeader { len } => Some((HEADER_LEN, len)),
            DecodeError::Truncated {
                needed, available, ..
            } => Some((needed, available)),
            _ => None,
        }
    }

    /// Whether the packet ends too early (so a capture's snaplen may be the
    /// cause, rather than the sender).
    pub const fn is_short(&self) -> bool {
        matches!(
            self,
            DecodeError::ShortHeader { .. } | DecodeError::Truncated { .. }
        )
    }
}

crate::proto::wire_error::wire_errors! {
    /// The bytes decode, but break a rule of the specification (or of its notes).
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum Violation {
        /// The packet is longer than the 1200-byte MTU.
        Oversize { len: usize } = "oversize",
        /// An enumeration field holds a value the specification does not list.
        InvalidEnum {
            offset: usize,
            packet_type: PacketType,
            field: FieldId,
            value: u8,
        } = "invalid-enum",
        /// A float that is NaN or infinite.
        NonFinite {
            offset: usize,
            packet_type: PacketType,
            field: FieldId,
            bits: u32,
        } = "non-finite-float",
        /// PlayerInput's moveX or moveY outside [-1, 1] (finite).
        InputRange {
            offset: usize,
            field: FieldId,
            value: f32,
        } = "input-range",
        /// A fixed string with a non-NUL byte after its first NUL, at `at`.
        StringPadding {
            offset: usize,
            packet_type: PacketType,
            field: FieldId,
            at: usize,
        } = "string-padding",
    }
    /// The rule a [`Violation`] breaks, without its numbers: the rule of the
    /// `violation` finding.
    kinds ViolationKind;
}

impl Violation {
    /// The offset of the field concerned (0 for the whole packet).
    pub const fn offset(&self) -> usize {
        match *self {
            Violation::Oversize { .. } => 0,
            Violation::InvalidEnum { offset, .. }
            | Violation::NonFinite { offset, .. }
            | Violation::InputRange { offset, .. }
            | Violation::StringPadding { offset, .. } => offset,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Violation::Oversize { len } => {
                write!(f, "packet of {len} bytes exceeds the {MTU}-byte MTU")
            }
            Violation::InvalidEnum {
                offset,
                packet_type,
                field,
                value,
            } => write!(
                f,
                "{packet_type} {} at offset {offset} is {value}, not a listed value",
                field.def().label
            ),
            Violation::NonFinite {
                offset,
                packet_type,
                field,
                bits,
            } => write!(
                f,
                "{packet_type} {} at offset {offset} is {} (0x{bits:08x})",
                field.def().label,
                f32::from_bits(bits)
            ),
            Violation::InputRange {
                offset,
                field,
                value,
            } => write!(
                f,
                "PlayerInput {} at offset {offset} is {value}, outside [-1, 1]",
                field.def().label
            ),
            Violation::StringPadding {
                offset,
                packet_type,
                field,
                at,
            } => write!(
                f,
                "{packet_type} {} at offset {offset} has a non-NUL byte at offset {at}, after its first NUL",
                field.def().label
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::f;
    use super::*;
    use crate::proto::wire_error::At;

    /// A truncation reads as every protocol's shortage, counted from the
    /// field cut; the other errors place themselves `at offset N`.
    #[test]
    fn errors_say_where_they_lie_as_every_protocol_does() {
        let e = DecodeError::Truncated {
            packet_type: PacketType::WorldSnapshot,
            offset: 73,
            field: f::EN_POS_Y,
            needed: 99,
            available: 63,
        };
        let short = Short {
            what: "WorldSnapshot position.y",
            offset: 73,
            needed: 38,
            left: 2,
            within: Within::Datagram,
        };
        assert_eq!(e.to_string(), short.to_string());
        assert_eq!(
            e.to_string(),
            "WorldSnapshot position.y at offset 73 is truncated: it needs 38 bytes, 2 are left"
        );
        assert!(
            DecodeError::UnknownType { type_id: 9 }
                .to_string()
                .ends_with(&At(4).to_string())
        );
        assert!(
            DecodeError::WrongMagic { found: 0 }
                .to_string()
                .contains(&At(0).to_string())
        );
    }
}
