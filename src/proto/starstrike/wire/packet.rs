//! The zero-copy packet view: the header and the payload's length checked once,
//! then every accessor reads in place and cannot panic.

use super::error::{DecodeError, Violation};
use super::layout::{self, ENTITY, FieldId, HEADER, Prim, Slot, f};
use super::message::{Entities, Message, padding_error, read_message, text_of};
use super::types::{
    ENTITY_STATE_LEN, EnumKind, HEADER_LEN, MAGIC, MTU, PacketType, SNAPSHOT_FIXED_LEN,
};
use crate::proto::field::{Field, FieldSink, Value};

/// True when a UDP payload starts with the magic "STRS": how Starstrike is
/// recognised on any port. A payload this accepts may still not decode.
pub fn is_starstrike(payload: &[u8]) -> bool {
    payload.get(..4) == Some(&MAGIC.to_be_bytes()[..])
}

pub(crate) fn be_u16(b: &[u8], at: usize) -> u16 {
    let mut out = [0u8; 2];
    if let Some(s) = b.get(at..at.saturating_add(2)) {
        out.copy_from_slice(s);
    }
    u16::from_be_bytes(out)
}

pub(crate) fn be_u32(b: &[u8], at: usize) -> u32 {
    let mut out = [0u8; 4];
    if let Some(s) = b.get(at..at.saturating_add(4)) {
        out.copy_from_slice(s);
    }
    u32::from_be_bytes(out)
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut out = [0u8; 8];
    if let Some(s) = b.get(at..at.saturating_add(8)) {
        out.copy_from_slice(s);
    }
    u64::from_be_bytes(out)
}

/// The header's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    pub packet_type: PacketType,
    pub seq: u16,
    pub ack_bits: u32,
}

/// Checks the header alone: the length, the magic, the type.
pub fn check_header(bytes: &[u8]) -> Result<Header, DecodeError> {
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::ShortHeader { len: bytes.len() });
    }
    let magic = be_u32(bytes, 0);
    if magic != MAGIC {
        return Err(DecodeError::WrongMagic { found: magic });
    }
    let type_id = be_u16(bytes, 4);
    let packet_type = PacketType::from_u16(type_id).ok_or(DecodeError::UnknownType { type_id })?;
    Ok(Header {
        packet_type,
        seq: be_u16(bytes, 6),
        ack_bits: be_u32(bytes, 8),
    })
}

/// The payload length a type needs, given what is present: fixed types their
/// size; WorldSnapshot `5 + 47 * entityCount`, or 5 while its count is missing.
fn needed_len(t: PacketType, payload: &[u8]) -> usize {
    match t {
        PacketType::WorldSnapshot => match payload.get(4) {
            Some(&count) => SNAPSHOT_FIXED_LEN + ENTITY_STATE_LEN * usize::from(count),
            None => SNAPSHOT_FIXED_LEN,
        },
        t => t.min_payload_len(),
    }
}

/// Checks the payload's length against its type.
fn check_payload(t: PacketType, payload: &[u8]) -> Result<(), DecodeError> {
    let needed = needed_len(t, payload);
    let available = payload.len();
    if available < needed {
        // The field of the first missing byte; every byte below `needed` has one.
        let (offset, field) = layout::field_at(t, available).unwrap_or((available, f::HEADER));
        return Err(DecodeError::Truncated {
            packet_type: t,
            offset: HEADER_LEN + offset,
            field,
            needed,
            available,
        });
    }
    if available > needed {
        return Err(DecodeError::TrailingBytes {
            packet_type: t,
            offset: HEADER_LEN + needed,
            expected: needed,
            extra: available - needed,
        });
    }
    Ok(())
}

/// A checked view of one Starstrike packet (a UDP payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    bytes: &'a [u8],
    header: Header,
}

impl<'a> Packet<'a> {
    /// Checks the header (length, magic, known type) and that the payload is
    /// exactly as long as its type says. Larger than the MTU still decodes
    /// ([`Packet::oversize`]).
    pub fn new_checked(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let header = check_header(bytes)?;
        check_payload(
            header.packet_type,
            bytes.get(HEADER_LEN..).unwrap_or_default(),
        )?;
        Ok(Packet { bytes, header })
    }

    pub const fn header(&self) -> Header {
        self.header
    }

    pub const fn packet_type(&self) -> PacketType {
        self.header.packet_type
    }

    /// The sender's own sequence number.
    pub const fn seq(&self) -> u16 {
        self.header.seq
    }

    /// Bit N set: the sender received the peer's packet `seq - N - 1`.
    pub const fn ack_bits(&self) -> u32 {
        self.header.ack_bits
    }

    /// The whole packet.
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The payload, after the header.
    pub fn payload(&self) -> &'a [u8] {
        self.bytes.get(HEADER_LEN..).unwrap_or_default()
    }

    pub const fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Never: a packet has a header.
    pub const fn is_empty(&self) -> bool {
        false
    }

    /// The message, read in place (a snapshot's entities stay borrowed).
    pub fn message(&self) -> Message<Entities<'a>> {
        read_message(self.header.packet_type, self.payload())
    }

    /// A WorldSnapshot's entity count (0 for other types).
    pub fn entity_count(&self) -> usize {
        match self.header.packet_type {
            PacketType::WorldSnapshot => usize::from(self.payload().get(4).copied().unwrap_or(0)),
            _ => 0,
        }
    }

    /// The first byte of a Reject's or a Disconnect's payload: its reason.
    pub fn reason(&self) -> Option<u8> {
        match self.header.packet_type {
            PacketType::ConnectionReject | PacketType::Disconnect => {
                self.payload().first().copied()
            }
            _ => None,
        }
    }

    /// A packet over the 1200-byte MTU still decodes, but breaks the notes.
    pub const fn oversize(&self) -> Option<Violation> {
        if self.bytes.len() > MTU {
            Some(Violation::Oversize {
                len: self.bytes.len(),
            })
        } else {
            None
        }
    }

    /// Every violation of the payload's fields, in wire order: enumerations
    /// outside their values, NaN and infinite floats, moveX/moveY outside
    /// [-1, 1], non-NUL bytes after a fixed string's first NUL. (Oversize is
    /// [`Packet::oversize`].) Allocates nothing.
    pub fn for_each_violation(&self, mut f: impl FnMut(Violation)) {
        let t = self.header.packet_type;
        let payload = self.payload();
        check_slots(t, payload, HEADER_LEN, layout::payload_layout(t), &mut f);
        if t == PacketType::WorldSnapshot {
            let entities = payload.get(SNAPSHOT_FIXED_LEN..).unwrap_or_default();
            for (i, e) in entities.chunks_exact(ENTITY_STATE_LEN).enumerate() {
                let base = HEADER_LEN + SNAPSHOT_FIXED_LEN + i * ENTITY_STATE_LEN;
                check_slots(t, e, base, &ENTITY, &mut f);
            }
        }
    }

    /// The violations, collected (for tests and tools; allocates).
    pub fn violations(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        self.for_each_violation(|v| out.push(v));
        out
    }
}

fn check_slots(
    t: PacketType,
    bytes: &[u8],
    base: usize,
    slots: &[Slot],
    f: &mut impl FnMut(Violation),
) {
    for slot in slots {
        let Some(raw) = bytes.get(slot.offset..slot.offset + slot.len) else {
            continue;
        };
        let offset = base + slot.offset;
        match slot.prim {
            Prim::Enum(kind) => {
                let value = raw.first().copied().unwrap_or(0);
                if !kind.is_valid(u64::from(value)) {
                    f(Violation::InvalidEnum {
                        offset,
                        packet_type: t,
                        field: slot.field,
                        value,
                    });
                }
            }
            Prim::F32 => {
                let bits = be_u32(raw, 0);
                let value = f32::from_bits(bits);
                if !value.is_finite() {
                    f(Violation::NonFinite {
                        offset,
                        packet_type: t,
                        field: slot.field,
                        bits,
                    });
                } else if is_move(slot.field) && !(-1.0..=1.0).contains(&value) {
                    f(Violation::InputRange {
                        offset,
                        field: slot.field,
                        value,
                    });
                }
            }
            Prim::Str => {
                if let Some(at) = padding_error(raw) {
                    f(Violation::StringPadding {
                        offset,
                        packet_type: t,
                        field: slot.field,
                        at: offset + at,
                    });
                }
            }
            _ => {}
        }
    }
}

fn is_move(field: FieldId) -> bool {
    field == f::IN_MOVE_X || field == f::IN_MOVE_Y
}

/// The value of a slot's bytes.
fn value<'b>(slot: &Slot, raw: &'b [u8]) -> Value<'b> {
    match slot.prim {
        Prim::U8 => Value::Unsigned(u64::from(raw.first().copied().unwrap_or(0))),
        Prim::U16 if slot.field == f::TYPE => {
            let raw = be_u16(raw, 0);
            Value::Enum {
                raw: u64::from(raw),
                name: PacketType::from_u16(raw).map(PacketType::name),
            }
        }
        Prim::U16 => Value::Unsigned(u64::from(be_u16(raw, 0))),
        Prim::U32 => Value::Unsigned(u64::from(be_u32(raw, 0))),
        Prim::U64 => Value::Unsigned(be_u64(raw, 0)),
        Prim::F32 => Value::Float(f64::from(f32::from_bits(be_u32(raw, 0)))),
        Prim::Str => Value::Text(text_of(raw)),
        Prim::Enum(kind) => enum_value(kind, raw.first().copied().unwrap_or(0)),
        Prim::Bits => {
            let mut v = 0u64;
            for b in raw {
                v = v << 8 | u64::from(*b);
            }
            Value::Bits {
                raw: v,
                width: (raw.len() * 8) as u8,
            }
        }
        Prim::Hex32 => Value::Hex(u64::from(be_u32(raw, 0))),
    }
}

fn enum_value(kind: EnumKind, raw: u8) -> Value<'static> {
    Value::Enum {
        raw: u64::from(raw),
        name: kind.value_name(u64::from(raw)),
    }
}

fn walk_slots(bytes: &[u8], base: usize, slots: &[Slot], sink: &mut dyn FieldSink) {
    for slot in slots {
        let Some(raw) = bytes.get(slot.offset..slot.offset + slot.len) else {
            return;
        };
        sink.field(Field {
            def: slot.field.def(),
            index: slot.index,
            offset: base + slot.offset,
            len: slot.len,
            value: value(slot, raw),
        });
    }
}

/// Walks the typed fields of any bytes, in wire order, as far as they decode:
/// the header node and its fields, then the message node with its fields (a
/// snapshot's entities as indexed nodes), every field whose bytes are all
/// present. Returns why the packet does not decode, if it does not (after the
/// fields that could be read). Allocates nothing.
pub fn walk_fields(bytes: &[u8], sink: &mut dyn FieldSink) -> Result<(), DecodeError> {
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::ShortHeader { len: bytes.len() });
    }
    if wants(sink, f::HEADER, &HEADER, None) {
        walk_header(bytes, sink);
    }
    let h = check_header(bytes)?;
    let t = h.packet_type;
    let payload = bytes.get(HEADER_LEN..).unwrap_or_default();
    let entities = (t == PacketType::WorldSnapshot).then_some(&ENTITY);
    if wants(sink, layout::node(t), layout::payload_layout(t), entities) {
        walk_payload(t, payload, sink);
    }
    check_payload(t, payload)
}

/// Whether `sink` takes a field of a group walked from `slots`, under the
/// node `node` (a snapshot's `entities` too): [`FieldSink::wants_any`].
fn wants(
    sink: &mut dyn FieldSink,
    node: FieldId,
    slots: &'static [Slot],
    entities: Option<&'static [Slot; 14]>,
) -> bool {
    sink.wants_any(crate::proto::field::group_key(slots), &|each| {
        each(node.def());
        for s in slots.iter().chain(entities.into_iter().flatten()) {
            each(s.field.def());
        }
        if entities.is_some() {
            each(f::N_ENTITY.def());
        }
    })
}

fn walk_header(bytes: &[u8], sink: &mut dyn FieldSink) {
    let header = bytes.get(..HEADER_LEN).unwrap_or_default();
    sink.enter(Field {
        def: f::HEADER.def(),
        index: None,
        offset: 0,
        len: HEADER_LEN,
        value: Value::None,
    });
    walk_slots(header, 0, &HEADER, sink);
    sink.leave();
}

fn walk_payload(t: PacketType, payload: &[u8], sink: &mut dyn FieldSink) {
    sink.enter(Field {
        def: layout::node(t).def(),
        index: None,
        offset: HEADER_LEN,
        len: payload.len(),
        value: Value::None,
    });
    walk_slots(payload, HEADER_LEN, layout::payload_layout(t), sink);
    if t == PacketType::WorldSnapshot && wants(sink, f::N_ENTITY, &ENTITY, None) {
        let entities = payload.get(SNAPSHOT_FIXED_LEN..).unwrap_or_default();
        let count = usize::from(payload.get(4).copied().unwrap_or(0));
        for (i, e) in entities.chunks(ENTITY_STATE_LEN).take(count).enumerate() {
            let base = HEADER_LEN + SNAPSHOT_FIXED_LEN + i * ENTITY_STATE_LEN;
            sink.enter(Field {
                def: f::N_ENTITY.def(),
                index: Some(i as u32),
                offset: base,
                len: e.len(),
                value: Value::None,
            });
            walk_slots(e, base, &ENTITY, sink);
            sink.leave();
        }
    }
    sink.leave();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heartbeat(seq: u16) -> Vec<u8> {
        let mut b = MAGIC.to_be_bytes().to_vec();
        b.extend_from_slice(&0x0005u16.to_be_bytes());
        b.extend_from_slice(&seq.to_be_bytes());
        b.extend_from_slice(&0x8000_0001u32.to_be_bytes());
        b.extend_from_slice(&1234u32.to_be_bytes());
        b
    }

    #[test]
    fn header_checks_in_order() {
        assert_eq!(
            Packet::new_checked(&[0x53, 0x54]),
            Err(DecodeError::ShortHeader { len: 2 })
        );
        let mut b = heartbeat(7);
        b[0] = 0;
        assert_eq!(
            Packet::new_checked(&b),
            Err(DecodeError::WrongMagic { found: 0x0054_5253 })
        );
        let mut b = heartbeat(7);
        b[5] = 0x09;
        assert_eq!(
            Packet::new_checked(&b),
            Err(DecodeError::UnknownType { type_id: 0x0009 })
        );
        let hb = heartbeat(65535);
        let p = Packet::new_checked(&hb).unwrap();
        assert_eq!(p.seq(), 65535);
        assert_eq!(p.ack_bits(), 0x8000_0001);
        assert_eq!(p.packet_type(), PacketType::Heartbeat);
        assert!(is_starstrike(p.bytes()));
        assert!(!is_starstrike(b"STR"));
    }

    #[test]
    fn short_and_long_payloads_are_malformed_with_their_offsets() {
        let b = heartbeat(1);
        assert_eq!(
            Packet::new_checked(&b[..14]).map_err(|e| e.needed_available()),
            Err(Some((4, 2)))
        );
        assert_eq!(
            Packet::new_checked(&b[..5]).map_err(|e| e.needed_available()),
            Err(Some((12, 5)))
        );
        assert_eq!(
            Packet::new_checked(&b[..14]),
            Err(DecodeError::Truncated {
                packet_type: PacketType::Heartbeat,
                offset: 12,
                field: f::HB_TIMESTAMP,
                needed: 4,
                available: 2
            })
        );
        let mut long = b.clone();
        long.push(0);
        assert_eq!(
            Packet::new_checked(&long),
            Err(DecodeError::TrailingBytes {
                packet_type: PacketType::Heartbeat,
                offset: 16,
                expected: 4,
                extra: 1
            })
        );
    }

    #[test]
    fn a_snapshot_is_exactly_as_long_as_its_count_says() {
        let mut b = MAGIC.to_be_bytes().to_vec();
        b.extend_from_slice(&0x0101u16.to_be_bytes());
        b.extend_from_slice(&[0, 1, 0, 0, 0, 0]);
        b.extend_from_slice(&[0, 0, 0, 9, 2]); // tick 9, two entities
        b.extend_from_slice(&[0; ENTITY_STATE_LEN]);
        let e = Packet::new_checked(&b).unwrap_err();
        assert_eq!(
            e,
            DecodeError::Truncated {
                packet_type: PacketType::WorldSnapshot,
                offset: 12 + 5 + 47,
                field: f::EN_ID,
                needed: 5 + 94,
                available: 5 + 47
            }
        );
        b.extend_from_slice(&[0; ENTITY_STATE_LEN + 3]);
        assert_eq!(
            Packet::new_checked(&b).unwrap_err().kind(),
            super::super::ErrorKind::TrailingBytes
        );
    }

    #[test]
    fn walking_a_truncated_packet_gives_what_is_there_then_the_error() {
        struct Names(Vec<&'static str>);
        impl FieldSink for Names {
            fn field(&mut self, field: Field<'_>) {
                self.0.push(field.def.name);
            }
        }
        let b = heartbeat(1);
        let mut names = Names(Vec::new());
        let r = walk_fields(&b[..13], &mut names);
        assert!(matches!(r, Err(DecodeError::Truncated { .. })));
        assert_eq!(
            names.0,
            [
                "strs.header",
                "strs.magic",
                "strs.type",
                "strs.seq",
                "strs.ack_bits",
                "strs.heartbeat"
            ]
        );
    }
}
