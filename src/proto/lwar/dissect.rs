//! lwar's dissector: how outputs see an lwar packet.

use super::findings;
use super::wire::{DecodeError, HEADER_LEN, Packet, walk_header_tree};
use crate::engine::ProtoDetail;
use crate::proto::dissect::{Dissector, HeaderNumber, MessageItem, TreeBufs, TreeRef};

fn error_ref(e: DecodeError) -> TreeRef<'static> {
    TreeRef::Error {
        error: findings::decode(e),
        offset: e.offset(),
    }
}

/// The lwar dissector.
pub struct Lwar;

impl Dissector for Lwar {
    fn header(&self, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail> {
        let p = Packet::new_checked(payload).map_err(findings::decode)?;
        f(HeaderNumber {
            name: "ack",
            short: "ack",
            value: u64::from(p.ack()),
        });
        f(HeaderNumber {
            name: "timestamp",
            short: "ts",
            value: u64::from(p.timestamp()),
        });
        Ok(())
    }

    fn messages(
        &self,
        payload: &[u8],
        f: &mut dyn FnMut(&MessageItem<'_>),
    ) -> Result<(), ProtoDetail> {
        let p = Packet::new_checked(payload).map_err(findings::decode)?;
        // Each message found, its body read once, by its text's walk (a
        // `Message` read first cost some 60 instructions a message).
        for m in p.heads() {
            let m = m.map_err(findings::decode)?;
            let text = m.text();
            f(&MessageItem {
                type_name: m.msg_type.name(),
                seqno: text.token().seqno(),
                player: m
                    .player()
                    .map(|id| (u32::from(id.generation), u32::from(id.index))),
                offset: m.offset,
                len: m.bytes.len(),
                token: text.token(),
                text: &text,
            });
        }
        Ok(())
    }

    fn tree_ref(&self, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>)) {
        let p = match Packet::new_checked(payload) {
            Ok(p) => p,
            Err(e) => return f(error_ref(e)),
        };
        f(TreeRef::Field {
            label: "header",
            value: "",
            span: 0..HEADER_LEN,
            depth: 0,
        });
        // Messages stop at the first that does not decode: its error ends
        // the tree.
        let error = TreeBufs::with(|bufs| {
            let mut field = |label: &str, value: &str, span, depth| {
                f(TreeRef::Field {
                    label,
                    value,
                    span,
                    depth,
                });
            };
            walk_header_tree(payload, bufs, &mut field);
            for m in p.messages() {
                match m {
                    Ok(m) => m.walk_tree(bufs, &mut field),
                    Err(e) => return Some(e),
                }
            }
            None
        });
        if let Some(e) = error {
            f(error_ref(e));
        }
    }

    /// A message's length is read from its own bytes (its type's fixed
    /// part, then its count or string length), and its token and text
    /// from those bytes alone.
    fn messages_stand_alone(&self) -> bool {
        true
    }

    fn message_types(&self) -> &'static [&'static str] {
        super::INFO.message_types
    }

    fn field_defs(&self) -> &'static [crate::proto::field::FieldDef] {
        &super::wire::FIELDS
    }

    fn fields(
        &self,
        payload: &[u8],
        sink: &mut dyn crate::proto::field::FieldSink,
    ) -> Result<(), ProtoDetail> {
        let p = Packet::new_checked(payload).map_err(findings::decode)?;
        p.walk_fields(sink).map_err(findings::decode)
    }
}
