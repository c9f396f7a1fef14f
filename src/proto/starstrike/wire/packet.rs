//! The zero-copy packet view: the header and the payload's length checked once,
//! then every accessor reads in place and cannot panic.

use super::error::{DecodeError, Violation};
use super::layout::{self, Entry, FIELDS, FieldId, HEADER, Item, f};
use super::message::{Entities, Message, ORDER, REASON, WireHeader, read_message};
use super::types::padding_error;
use super::types::{HEADER_LEN, MAGIC, MTU, PacketType};
use crate::proto::codec::Record;
use crate::proto::dissect::TreeBufs;
use crate::proto::field::{Field, FieldSink, Value, group_key};
use crate::proto::layout::{EmitField, ToSink, TreeOut, Val, Visit, items_defs, layout_defs};

/// True when a UDP payload starts with the magic "STRS": how Starstrike is
/// recognised on any port. A payload this accepts may still not decode.
pub fn is_starstrike(payload: &[u8]) -> bool {
    payload.get(..4) == Some(&MAGIC.to_be_bytes()[..])
}

pub(crate) fn be_u32(b: &[u8], at: usize) -> u32 {
    let mut out = [0u8; 4];
    if let Some(s) = b.get(at..at.saturating_add(4)) {
        out.copy_from_slice(s);
    }
    u32::from_be_bytes(out)
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
    let h = WireHeader::read(bytes, ORDER);
    if h.magic != MAGIC {
        return Err(DecodeError::WrongMagic { found: h.magic });
    }
    let type_id = h.packet_type;
    let packet_type = PacketType::from_u16(type_id).ok_or(DecodeError::UnknownType { type_id })?;
    Ok(Header {
        packet_type,
        seq: h.seq,
        ack_bits: h.ack_bits,
    })
}

/// Checks the payload's length against its type.
fn check_payload(t: PacketType, payload: &[u8]) -> Result<(), DecodeError> {
    let needed = layout::needed_len(t, payload);
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
        Self::with_header(bytes, check_header(bytes)?)
    }

    /// The packet of `bytes` whose header [`check_header`] gave: its payload
    /// checked against its type, the header not read again (the analysis
    /// has checked it for the packet's number and acknowledgements).
    #[inline]
    pub fn with_header(bytes: &'a [u8], header: Header) -> Result<Self, DecodeError> {
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
        layout::entry_count(self.header.packet_type, self.payload())
    }

    /// A Reject's or a Disconnect's reason.
    pub fn reason(&self) -> Option<u8> {
        match self.header.packet_type {
            PacketType::ConnectionReject | PacketType::Disconnect => {
                self.payload().get(REASON).copied()
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
    pub fn for_each_violation(&self, f: impl FnMut(Violation)) {
        self.walk(&mut Check {
            packet: self.bytes,
            t: self.header.packet_type,
            f,
        });
    }

    /// Walks the payload's fields with `v`, a visitor of the layout (the
    /// one-line text's, the violation checks').
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn walk<V: Visit<FieldId>>(&self, v: &mut V) {
        // Checked: the payload is exactly as long as its type says.
        layout::walk_whole(self.header.packet_type, self.payload(), v);
    }

    /// The violations, collected (for tests and tools; allocates).
    pub fn violations(&self) -> Vec<Violation> {
        let mut out = Vec::new();
        self.for_each_violation(|v| out.push(v));
        out
    }
}

/// The violations of the fields a walk reads: a visitor of the layout.
struct Check<'b, F> {
    packet: &'b [u8],
    t: PacketType,
    f: F,
}

impl<F: FnMut(Violation)> Visit<FieldId> for Check<'_, F> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn item(&mut self, item: &'static Item, offset: usize, len: usize, v: Val<'_>) {
        let field = item.def;
        match v {
            Val::Enum(value, None, _) => (self.f)(Violation::InvalidEnum {
                offset,
                packet_type: self.t,
                field,
                value: value as u8,
            }),
            Val::F32(value) if !value.is_finite() => (self.f)(Violation::NonFinite {
                offset,
                packet_type: self.t,
                field,
                // As sent (a NaN's payload included).
                bits: be_u32(self.packet, offset),
            }),
            Val::F32(value)
                if (field == f::IN_MOVE_X || field == f::IN_MOVE_Y)
                    && !(-1.0..=1.0).contains(&value) =>
            {
                (self.f)(Violation::InputRange {
                    offset,
                    field,
                    value,
                })
            }
            Val::Text(..) => {
                let raw = self.packet.get(offset..offset + len).unwrap_or_default();
                if let Some(at) = padding_error(raw) {
                    (self.f)(Violation::StringPadding {
                        offset,
                        packet_type: self.t,
                        field,
                        at: offset + at,
                    });
                }
            }
            _ => {}
        }
    }
    fn enter(&mut self, _e: &'static Entry, _index: u32, _at: usize) {}
    fn leave(&mut self) {}
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
    if sink.wants_any(group_key(&HEADER), &|each| {
        each(f::HEADER.def());
        items_defs(&HEADER, each);
    }) {
        sink.enter(node(f::HEADER, 0, HEADER_LEN));
        layout::walk_header(bytes, &mut ToSink::new(sink, &FIELDS));
        sink.leave();
    }
    let t = check_header(bytes)?.packet_type;
    let payload = bytes.get(HEADER_LEN..).unwrap_or_default();
    let l = t.layout();
    if sink.wants_any(group_key(l), &|each| {
        each(t.node().def());
        layout_defs(l, each);
    }) {
        sink.enter(node(t.node(), HEADER_LEN, payload.len()));
        layout::walk(t, payload, &mut ToSink::new(sink, &FIELDS));
        sink.leave();
    }
    check_payload(t, payload)
}

fn node(id: FieldId, offset: usize, len: usize) -> Field<'static> {
    Field {
        def: id.def(),
        index: None,
        offset,
        len,
        value: Value::None,
    }
}

/// The fields of any bytes as the `-V` tree's lines, as far as they decode
/// ([`walk_fields`]'s, the nodes with empty values), their texts in `bufs`:
/// allocates nothing once `bufs` has grown. Returns why the packet does
/// not decode, if it does not.
pub fn walk_tree(
    bytes: &[u8],
    bufs: &mut TreeBufs,
    emit: &mut EmitField<'_>,
) -> Result<(), DecodeError> {
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::ShortHeader { len: bytes.len() });
    }
    emit(f::HEADER.def().label, "", 0..HEADER_LEN, 0);
    let tree = &mut TreeOut {
        emit,
        bufs,
        depth: 1,
    };
    layout::walk_header(bytes, tree);
    let t = check_header(bytes)?.packet_type;
    let payload = bytes.get(HEADER_LEN..).unwrap_or_default();
    (tree.emit)(t.node().def().label, "", HEADER_LEN..bytes.len(), 0);
    layout::walk(t, payload, tree);
    check_payload(t, payload)
}

#[cfg(test)]
mod tests {
    use super::super::layout::ENTITY_STATE_LEN;
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
