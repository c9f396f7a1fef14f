//! Battlegrounds' dissector: how outputs see a packet. One packet is one
//! message item; a MSG whose block is its whole message (block 0, as long as
//! `msg_len`) also shows the packet it carries, decoded, as a second item and
//! a subtree. Messages of several blocks are rebuilt by the analysis, which
//! keeps state; a stateless dissector shows their blocks.

use super::findings;
use super::wire::{self, DecodeError, HEADER_LEN, MSG_BLOCK_OFFSET, Packet, Payload, Shape};
use crate::engine::ProtoDetail;
use crate::proto::dissect::{Dissector, HeaderNumber, MessageItem, TreeEntry, TreeItem};
use crate::proto::field::{Field, FieldDef, FieldSink, Value};
use std::fmt;

/// The Battlegrounds dissector.
pub struct Battlegrounds;

/// The compact token of a packet: `MSG#5/2` (msg_id 5, block 2), `MOVE_OP(7)`
/// (op_sig), `MOVE_EVENT(7/3)` (op_sig/event_sig), `PROP#42`, the bare type
/// otherwise. Writes without allocating.
pub struct Token<'p, 'a>(pub &'p Packet<'a>);

impl fmt::Display for Token<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.0;
        f.write_str(p.packet_type().name())?;
        match p.payload() {
            Payload::Msg(m) => write!(f, "#{}/{}", m.msg_id, m.block_id),
            Payload::MsgAck(a) => write!(f, "#{}/{}", a.msg_id, a.block_id),
            Payload::MoveOp(m) => write!(f, "({})", m.op_sig),
            Payload::MoveEvent(m) => write!(f, "({}/{})", m.op_sig, m.event_sig),
            Payload::Prop(prop) => write!(f, "#{}", prop.prop_id),
            _ => Ok(()),
        }
    }
}

/// One line with every scalar field: `AUTH_OK ts=1000 pos=(1.5, -2) ...`.
pub struct Text<'p, 'a>(pub &'p Packet<'a>);

impl fmt::Display for Text<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.0;
        write!(
            f,
            "{} session={} ch={}",
            Token(p),
            p.session_id(),
            p.channel()
        )?;
        let movement = |f: &mut fmt::Formatter<'_>, m: &wire::Movement| {
            write!(
                f,
                " ts={} pos={} fwd={} bits={:08b}",
                m.timestamp, m.position, m.forward, m.movement_bits
            )
        };
        match p.payload() {
            Payload::Auth | Payload::Ping => Ok(()),
            Payload::Pong { timestamp } => write!(f, " ts={timestamp}"),
            Payload::AuthOk(a) => {
                movement(f, &a.movement)?;
                write!(f, " name={}", Value::Text(a.name))
            }
            Payload::MoveOp(m) => {
                movement(f, &m.movement)?;
                write!(f, " op_sig={}", m.op_sig)
            }
            Payload::MoveEvent(m) => {
                movement(f, &m.movement)?;
                write!(f, " op_sig={} event_sig={}", m.op_sig, m.event_sig)
            }
            Payload::Prop(prop) => {
                write!(f, " id={} pos={}", prop.prop_id, prop.position)?;
                match prop.shape {
                    Shape::Circle { center, radius } => {
                        write!(f, " circle center={center} radius={radius}")?
                    }
                    Shape::Polygon(v) => write!(f, " polygon vertices={}", v.len())?,
                }
                write!(f, " render_data={}B", prop.render_data.len())
            }
            Payload::Msg(m) => write!(
                f,
                " msg_id={} msg_len={} block={} bytes={}",
                m.msg_id,
                m.msg_len,
                m.block_id,
                m.block.len()
            ),
            Payload::MsgAck(a) => write!(f, " msg_id={} block={}", a.msg_id, a.block_id),
        }
    }
}

/// The packet a MSG carries whole: block 0 of a message of one block.
fn whole_message<'a>(p: &Packet<'a>) -> Option<(u32, &'a [u8])> {
    match p.payload() {
        Payload::Msg(m) if m.block_id == 0 && m.block.len() == m.msg_len as usize => {
            Some((m.msg_id, m.block))
        }
        _ => None,
    }
}

fn error_entry(e: DecodeError, base: usize) -> TreeEntry {
    TreeEntry::Error {
        error: findings::decode(e),
        offset: base + e.offset(),
    }
}

/// Turns the field walk into tree entries: labels, values, absolute spans, depth.
struct TreeSink<'f> {
    f: &'f mut dyn FnMut(TreeEntry),
    base: usize,
    depth: u8,
}

impl TreeSink<'_> {
    fn item(&mut self, field: &Field<'_>) -> TreeItem {
        let label = match (field.def.name, field.index, field.value) {
            ("bg.payload", _, Value::Enum { name: Some(n), .. }) => n.to_owned(),
            (_, Some(i), _) => format!("{}[{i}]", field.def.label),
            _ => field.def.label.to_owned(),
        };
        let value = if field.def.name == "bg.payload" {
            String::new()
        } else {
            field.value.to_string()
        };
        TreeItem {
            label,
            value,
            span: self.base + field.offset..self.base + field.offset + field.len,
            depth: self.depth,
        }
    }
}

impl FieldSink for TreeSink<'_> {
    fn field(&mut self, field: Field<'_>) {
        let item = self.item(&field);
        (self.f)(TreeEntry::Field(item));
    }

    fn enter(&mut self, node: Field<'_>) {
        self.field(node);
        self.depth = self.depth.saturating_add(1);
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

impl Dissector for Battlegrounds {
    fn header(&self, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail> {
        let h = wire::Header::parse(payload).map_err(findings::decode)?;
        f(HeaderNumber {
            name: "session_id",
            short: "sid",
            value: u64::from(h.session_id),
        });
        f(HeaderNumber {
            name: "channel",
            short: "ch",
            value: u64::from(h.channel),
        });
        f(HeaderNumber {
            name: "op",
            short: "op",
            value: u64::from(h.op),
        });
        Ok(())
    }

    fn messages(
        &self,
        payload: &[u8],
        f: &mut dyn FnMut(&MessageItem<'_>),
    ) -> Result<(), ProtoDetail> {
        let p = Packet::new_checked(payload).map_err(findings::decode)?;
        let seqno = match p.payload() {
            Payload::Msg(m) => Some(m.msg_id),
            Payload::MsgAck(a) => Some(a.msg_id),
            _ => None,
        };
        f(&MessageItem {
            type_name: p.packet_type().name(),
            seqno,
            player: None,
            offset: HEADER_LEN,
            len: p.len() - HEADER_LEN,
            token: &Token(&p),
            text: &Text(&p),
        });
        if let Some((msg_id, bytes)) = whole_message(&p) {
            let inner =
                Packet::new_checked(bytes).map_err(|e| findings::decode_in_message(e, msg_id))?;
            f(&MessageItem {
                type_name: inner.packet_type().name(),
                seqno: Some(msg_id),
                player: None,
                offset: MSG_BLOCK_OFFSET,
                len: bytes.len(),
                token: &Token(&inner),
                text: &Text(&inner),
            });
        }
        Ok(())
    }

    fn tree(&self, payload: &[u8], f: &mut dyn FnMut(TreeEntry)) {
        let mut sink = TreeSink {
            f,
            base: 0,
            depth: 0,
        };
        if let Err(e) = wire::walk(payload, &mut sink) {
            return (sink.f)(error_entry(e, 0));
        }
        let Ok(p) = Packet::new_checked(payload) else {
            return;
        };
        if let Some((msg_id, bytes)) = whole_message(&p) {
            let t = Packet::new_checked(bytes)
                .map(|i| i.packet_type().name())
                .unwrap_or("undecodable");
            (sink.f)(TreeEntry::Field(TreeItem {
                label: format!("message {msg_id}"),
                value: t.to_owned(),
                span: MSG_BLOCK_OFFSET..payload.len(),
                depth: 0,
            }));
            let mut inner = TreeSink {
                f: sink.f,
                base: MSG_BLOCK_OFFSET,
                depth: 1,
            };
            if let Err(e) = wire::walk(bytes, &mut inner) {
                (inner.f)(error_entry(e, MSG_BLOCK_OFFSET));
            }
        }
    }

    fn message_types(&self) -> &'static [&'static str] {
        super::INFO.message_types
    }

    fn field_defs(&self) -> &'static [FieldDef] {
        &wire::FIELDS
    }

    fn fields(&self, payload: &[u8], sink: &mut dyn FieldSink) -> Result<(), ProtoDetail> {
        wire::walk(payload, sink).map_err(findings::decode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::battlegrounds::wire::{MsgAck, PacketRepr, PacketType, PayloadRepr};

    #[test]
    fn a_single_block_message_shows_what_it_carries() {
        let pong = PacketRepr::new(9, 0, PayloadRepr::Pong { timestamp: 5 })
            .to_bytes()
            .unwrap();
        let msg = PacketRepr::split_message(9, 0, 3, &pong, 512)
            .remove(0)
            .to_bytes()
            .unwrap();
        let mut items = Vec::new();
        Battlegrounds
            .messages(&msg, &mut |m| {
                items.push((m.type_name, m.seqno, m.offset, m.token.to_string()))
            })
            .unwrap();
        assert_eq!(
            items,
            [
                ("MSG", Some(3), 8, "MSG#3/0".to_owned()),
                ("PONG", Some(3), 18, "PONG".to_owned())
            ]
        );
        let mut tree = Vec::new();
        Battlegrounds.tree(&msg, &mut |e| tree.push(e));
        let labels: Vec<_> = tree
            .iter()
            .filter_map(|e| match e {
                TreeEntry::Field(i) => Some((i.label.as_str(), i.depth, i.span.clone())),
                TreeEntry::Error { .. } => None,
            })
            .collect();
        assert!(labels.contains(&("MSG", 0, 8..34)), "{labels:?}");
        assert!(labels.contains(&("message 3", 0, 18..34)), "{labels:?}");
        assert!(labels.contains(&("timestamp", 2, 26..34)), "{labels:?}");
        assert!(labels.contains(&("session_id", 1, 0..4)), "{labels:?}");
    }

    #[test]
    fn header_numbers_and_errors() {
        let ack = PacketRepr::new(
            7,
            2,
            PayloadRepr::MsgAck(MsgAck {
                msg_id: 1,
                block_id: 2,
            }),
        )
        .to_bytes()
        .unwrap();
        let mut numbers = Vec::new();
        Battlegrounds
            .header(&ack, &mut |n| numbers.push((n.name, n.value)))
            .unwrap();
        assert_eq!(numbers, [("session_id", 7), ("channel", 2), ("op", 0x11)]);
        let e = Battlegrounds.messages(&ack[..10], &mut |_| {}).unwrap_err();
        assert!(
            e.to_string().contains("MSG_ACK fixed part at offset 8"),
            "{e}"
        );
        assert_eq!(Battlegrounds.field_defs().len(), wire::FIELDS.len());
        assert_eq!(PacketType::COUNT, Battlegrounds.message_types().len());
    }
}
