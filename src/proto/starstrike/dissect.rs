//! Starstrike's dissector: how outputs see a Starstrike packet. Everything is
//! a walk of the wire's one layout (`wire::layout`): the typed fields
//! ([`wire::walk_fields`]), the tree ([`wire::walk_tree`]) and the one-line
//! text (the layout core's `TextOut`), so they always agree. The compact
//! token is hand-written.

use super::findings;
use super::wire::{self, FIELDS, Message, Packet, PacketType};
use crate::engine::ProtoDetail;
use crate::proto::dissect::{
    Dissector, HeaderNumber, MarksWire, MessageItem, Out, TextBytes, TreeBufs, TreeRef, WriteText,
};
use crate::proto::field::{FieldDef, FieldSink};
use crate::proto::layout::TextOut;
use std::fmt;

/// The Starstrike dissector.
pub struct Starstrike;

/// The compact token of packet lines: `WorldSnapshot(3)`, `Disconnect(Timeout)`.
struct Token<'a>(&'a Packet<'a>);

impl WriteText for Token<'_> {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        f.s(self.0.packet_type().name())?;
        match self.0.message() {
            Message::WorldSnapshot(s) => {
                f.s("(")?;
                f.int(s.entities.len())?;
                f.s(")")
            }
            Message::ConnectionReject(r) => reason(f, wire::EnumKind::RejectReason, r.reason),
            Message::Disconnect(r) => reason(f, wire::EnumKind::DisconnectReason, r.reason),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

/// Each type's name padded to 32 bytes, and its length: copied as 32
/// bytes then cut.
static PADDED_NAMES: [([u8; 32], usize); PacketType::COUNT] =
    crate::engine::out::padded_names!(PacketType, 32);

/// The token's bytes, as its `write_text` writes them, put together in a
/// local array (the name a copy of 32 bytes, a snapshot's count by
/// `digits::int_into`) and copied into the line at once, a copy of fixed
/// size then cut: piece by piece into the line's `Vec` it cost about 150
/// instructions a packet of `--packets`. A reason's token (rare) is
/// written piece by piece.
impl TextBytes for Token<'_> {
    fn write_bytes(&self, out: &mut Vec<u8>) {
        let t = self.0.packet_type();
        if matches!(t, PacketType::ConnectionReject | PacketType::Disconnect) {
            let _ = self.write_text(out);
            return;
        }
        let (name, len) = PADDED_NAMES.get(t.ordinal()).copied().unwrap_or_default();
        let mut b = [0u8; 64];
        if let Some(place) = b.get_mut(..32) {
            place.copy_from_slice(&name);
        }
        let mut end = len;
        if t == PacketType::WorldSnapshot {
            if let Some(open) = b.get_mut(end) {
                *open = b'(';
            }
            if let Some(digits) = b
                .get_mut(end + 1..end + 25)
                .and_then(|d| <&mut [u8; 24]>::try_from(d).ok())
            {
                end += 1 + crate::proto::digits::int_into(digits, self.0.entity_count());
            }
            if let Some(close) = b.get_mut(end) {
                *close = b')';
                end += 1;
            }
        }
        let at = out.len() + end;
        out.extend_from_slice(&b);
        out.truncate(at);
    }
}

fn reason(f: &mut impl Out, kind: wire::EnumKind, raw: u8) -> fmt::Result {
    f.s("(")?;
    match kind.value_name(u64::from(raw)) {
        Some(name) => f.s(name)?,
        None => f.int(raw)?,
    }
    f.s(")")
}

/// One line with every field of the message: `PlayerInput tick=7 moveX=0.5 ...`;
/// a snapshot's entity fields are prefixed with their index (`[0].entityId=9`):
/// the type's name, then the layout core's text of the payload (every item
/// [`Pre::Label`](crate::proto::layout::Pre::Label), the enums named).
struct Text<'a>(&'a Packet<'a>);

/// The one-line text of `p`, into `f`.
fn text(p: &Packet<'_>, f: &mut impl Out) -> fmt::Result {
    f.s(p.packet_type().name())?;
    let mut out = TextOut::new(f);
    p.walk(&mut out);
    out.r
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text(self.0, f)
    }
}

impl WriteText for Text<'_> {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result {
        text(self.0, out)
    }
}

/// The text's bytes; for JSON, where the first from the wire begins (a
/// padded name's, a message's or a chat's, told by `Value::Text`): the type's
/// name, the labels, the enums' names and the numbers never need an escape
/// (`fixed_texts_need_no_json_escape`), so a snapshot's or an input's text
/// is not searched at all.
impl MarksWire for Text<'_> {}

impl Dissector for Starstrike {
    fn header(&self, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail> {
        let h = wire::check_header(payload).map_err(findings::decode)?;
        f(HeaderNumber {
            name: "seq",
            short: "seq",
            value: u64::from(h.seq),
        });
        f(HeaderNumber {
            name: "ack_bits",
            short: "ackbits",
            value: u64::from(h.ack_bits),
        });
        Ok(())
    }

    fn messages(
        &self,
        payload: &[u8],
        f: &mut dyn FnMut(&MessageItem<'_>),
    ) -> Result<(), ProtoDetail> {
        let p = Packet::new_checked(payload).map_err(findings::decode)?;
        let t = p.packet_type();
        f(&MessageItem {
            type_name: t.name(),
            seqno: t.is_reliable().then_some(u32::from(p.seq())),
            player: None,
            offset: wire::HEADER_LEN,
            len: p.payload().len(),
            token: &Token(&p),
            text: &Text(&p),
        });
        Ok(())
    }

    fn tree_ref(&self, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>)) {
        let result = TreeBufs::with(|bufs| {
            wire::walk_tree(payload, bufs, &mut |label, value, span, depth| {
                f(TreeRef::Field {
                    label,
                    value,
                    span,
                    depth,
                })
            })
        });
        if let Err(e) = result {
            f(TreeRef::Error {
                error: findings::decode(e),
                offset: e.offset(),
            });
        }
    }

    /// A packet's one message is its payload after the header, read as
    /// its packet type says; its seqno is the header's (for a reliable
    /// type); nothing else of the header reaches its token or text.
    fn messages_stand_alone(&self) -> bool {
        true
    }

    fn message_types(&self) -> &'static [&'static str] {
        super::INFO.message_types
    }

    fn field_defs(&self) -> &'static [FieldDef] {
        &FIELDS
    }

    fn fields(&self, payload: &[u8], sink: &mut dyn FieldSink) -> Result<(), ProtoDetail> {
        wire::walk_fields(payload, sink).map_err(findings::decode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::dissect::TreeEntry;
    use crate::proto::starstrike::wire::{
        Heartbeat, PacketRepr, PlayerInput, Reason, WorldSnapshot,
    };

    fn bytes(m: wire::MessageRepr) -> Vec<u8> {
        PacketRepr::new(7, 3, m).to_bytes().unwrap()
    }

    #[test]
    fn header_numbers_and_one_message() {
        let b = bytes(Message::Heartbeat(Heartbeat { timestamp: 99 }));
        let mut numbers = Vec::new();
        Starstrike
            .header(&b, &mut |n| numbers.push((n.name, n.value)))
            .unwrap();
        assert_eq!(numbers, [("seq", 7), ("ack_bits", 3)]);
        let mut items = Vec::new();
        Starstrike
            .messages(&b, &mut |m| {
                items.push((
                    m.type_name,
                    m.seqno,
                    m.token.to_string(),
                    m.text.to_string(),
                ))
            })
            .unwrap();
        assert_eq!(
            items,
            [(
                "Heartbeat",
                Some(7),
                "Heartbeat".to_owned(),
                "Heartbeat timestamp=99".to_owned()
            )]
        );
    }

    #[test]
    fn tokens_and_text() {
        let b = bytes(Message::Disconnect(Reason {
            reason: 2,
            message: wire::FixedStr::new(b"bye"),
        }));
        let mut text = String::new();
        Starstrike
            .messages(&b, &mut |m| {
                text = format!("{} | {}", m.token, m.text);
            })
            .unwrap();
        assert_eq!(
            text,
            "Disconnect(Timeout) | Disconnect reason=Timeout (2) message=\"bye\""
        );
        let b = bytes(Message::WorldSnapshot(WorldSnapshot {
            tick: 1,
            entities: vec![wire::EntityState::default(); 2],
        }));
        Starstrike
            .messages(&b, &mut |m| {
                assert_eq!(m.seqno, None);
                text = format!("{} | {}", m.token, m.text);
            })
            .unwrap();
        assert!(
            text.starts_with(
                "WorldSnapshot(2) | WorldSnapshot tick=1 entityCount=2 [0].entityId=0"
            ),
            "{text}"
        );
        assert!(text.contains("[1].flags=00000000"), "{text}");
    }

    /// An entity of two digits has its prefix written piece by piece; the
    /// token's bytes hold a count of two digits.
    #[test]
    fn entities_past_the_ninth_are_numbered() {
        let b = bytes(Message::WorldSnapshot(WorldSnapshot {
            tick: 1,
            entities: vec![wire::EntityState::default(); 12],
        }));
        let (mut text, mut token) = (String::new(), Vec::new());
        Starstrike
            .messages(&b, &mut |m| {
                text = m.text.to_string();
                m.token.write_bytes(&mut token);
            })
            .unwrap();
        assert_eq!(token, b"WorldSnapshot(12)");
        assert!(
            text.contains(" [9].flags=00000000 [10].entityId=0 "),
            "{text}"
        );
        assert!(text.ends_with(" [11].flags=00000000"), "{text}");
    }

    #[test]
    fn the_tree_has_depths_spans_and_the_error() {
        let b = bytes(Message::PlayerInput(PlayerInput {
            tick: 1,
            move_x: 0.5,
            ..PlayerInput::default()
        }));
        let mut tree = Vec::new();
        Starstrike.tree(&b[..20], &mut |e| tree.push(e));
        let TreeEntry::Field(first) = &tree[0] else {
            panic!()
        };
        assert_eq!(
            (first.label.as_str(), first.depth, first.span.clone()),
            ("header", 0, 0..12)
        );
        let labels: Vec<_> = tree
            .iter()
            .filter_map(|e| match e {
                TreeEntry::Field(i) => Some((i.label.clone(), i.depth)),
                TreeEntry::Error { .. } => None,
            })
            .collect();
        assert!(labels.contains(&("moveX".to_owned(), 1)), "{labels:?}");
        assert!(!labels.iter().any(|l| l.0 == "moveY"));
        assert!(matches!(
            tree.last(),
            Some(TreeEntry::Error { offset: 20, .. })
        ));
        assert_eq!(Starstrike.field_defs().len(), FIELDS.len());
    }

    /// A text that is not UTF-8 says so in the tree, as every protocol's
    /// tree does (the layout core's); the fields and the text do not.
    #[test]
    fn the_tree_names_a_text_that_is_not_utf8() {
        let b = bytes(Message::Disconnect(Reason {
            reason: 2,
            message: wire::FixedStr::new(b"ab\xffc"),
        }));
        let mut tree = Vec::new();
        Starstrike.tree(&b, &mut |e| tree.push(e));
        let values: Vec<_> = tree
            .iter()
            .filter_map(|e| match e {
                TreeEntry::Field(i) if i.label == "message" => Some(i.value.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(values, ["\"ab\\xffc\" (not UTF-8)"]);
        let mut text = String::new();
        Starstrike
            .messages(&b, &mut |m| text = m.text.to_string())
            .unwrap();
        assert_eq!(text, "Disconnect reason=Timeout (2) message=\"ab\\xffc\"");
    }
}
