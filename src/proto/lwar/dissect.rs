//! lwar's dissector: how outputs see an lwar packet.

use super::findings;
use super::wire::{DecodeError, HEADER_LEN, Packet};
use crate::engine::ProtoDetail;
use crate::proto::dissect::{Dissector, HeaderNumber, MessageItem, TreeEntry, TreeItem};

fn error(e: DecodeError) -> TreeEntry {
    TreeEntry::Error {
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
        for m in p.messages() {
            let m = m.map_err(findings::decode)?;
            f(&MessageItem {
                type_name: m.msg_type().name(),
                seqno: m.seqno(),
                player: m
                    .message
                    .player()
                    .map(|id| (u32::from(id.generation), u32::from(id.index))),
                offset: m.offset,
                len: m.bytes.len(),
                token: &m.message.token(),
                text: &m.message,
            });
        }
        Ok(())
    }

    fn tree(&self, payload: &[u8], f: &mut dyn FnMut(TreeEntry)) {
        let p = match Packet::new_checked(payload) {
            Ok(p) => p,
            Err(e) => return f(error(e)),
        };
        f(TreeEntry::Field(TreeItem {
            label: "header".to_owned(),
            value: String::new(),
            span: 0..HEADER_LEN,
            depth: 0,
        }));
        for field in p.header_fields() {
            f(TreeEntry::Field(TreeItem {
                label: field.label,
                value: field.value,
                span: field.span,
                depth: field.depth,
            }));
        }
        for m in p.messages() {
            match m {
                Ok(m) => {
                    for field in m.fields() {
                        f(TreeEntry::Field(TreeItem {
                            label: field.label,
                            value: field.value,
                            span: field.span,
                            depth: field.depth,
                        }));
                    }
                }
                Err(e) => f(error(e)),
            }
        }
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
