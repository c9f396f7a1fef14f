//! How outputs see a Vessel packet: everything comes from the field walk
//! ([`wire::walk`]), so the tree, the one-line text and the typed fields
//! agree. A dissector is handed the payload alone (no ports, no direction),
//! so it tells the message by content ([`wire::classify`]): a packet nothing
//! in which tells the two messages apart (protocolVersion at most) is shown
//! as `versionOnly`. Absent fields are shown with their default value and
//! an empty span at the end of their message (proto3: `vessel.syncNumber ==
//! 0` selects the packets that carry no syncNumber); the one-line text shows
//! only the fields on the wire.

use super::findings;
use super::wire::{self, Visit, Which};
use crate::engine::ProtoDetail;
use crate::proto::dissect::{
    Dissector, HeaderNumber, MessageItem, Out, TreeRef, WriteText, Written,
};
use crate::proto::field::{Field, FieldDef, FieldSink, GroupDefs, Value};
use crate::proto::layout::{FieldLine, FieldTree};
use std::fmt;

/// The Vessel dissector.
#[derive(Debug)]
pub struct Vessel;

/// Passes the walk's fields to a [`FieldSink`].
struct ToSink<'s>(&'s mut dyn FieldSink);

fn field<'a>(
    def: &'static FieldDef,
    index: Option<u32>,
    span: (usize, usize),
    value: Value<'a>,
) -> Field<'a> {
    Field {
        def,
        index,
        offset: span.0,
        len: span.1.saturating_sub(span.0),
        value,
    }
}

impl Visit for ToSink<'_> {
    fn field(
        &mut self,
        def: &'static FieldDef,
        index: Option<u32>,
        span: (usize, usize),
        value: Value<'_>,
    ) {
        self.0.field(field(def, index, span, value));
    }
    fn enter(&mut self, def: &'static FieldDef, index: Option<u32>, span: (usize, usize)) {
        self.0.enter(field(def, index, span, Value::None));
    }
    fn leave(&mut self) {
        self.0.leave();
    }
    fn wants_any(&mut self, key: usize, defs: &GroupDefs<'_>) -> bool {
        self.0.wants_any(key, defs)
    }
}

/// The sync number, as the walk finds it.
#[derive(Default)]
struct Sync(Option<u64>);

impl Visit for Sync {
    fn field(&mut self, def: &'static FieldDef, _: Option<u32>, _: (usize, usize), v: Value<'_>) {
        if def.name == "vessel.syncNumber"
            && self.0.is_none()
            && let Value::Unsigned(n) = v
        {
            self.0 = Some(n);
        }
    }
    fn enter(&mut self, _: &'static FieldDef, _: Option<u32>, _: (usize, usize)) {}
    fn leave(&mut self) {}
}

fn key(payload: &[u8]) -> (Which, Option<u64>, Result<(), wire::DecodeError>) {
    let which = wire::classify(payload);
    let mut s = Sync::default();
    let r = wire::walk(payload, which, &mut s);
    let sync = if which == Which::Either { None } else { s.0 };
    (which, sync, r)
}

/// `name=value` of every leaf field on the wire, in wire order.
struct Text<'a>(&'a [u8]);

impl WriteText for Text<'_> {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        // A field not on the wire (read as its default, with an empty
        // span) is left out of the line, as the wire leaves it.
        let mut sink = FieldLine::new(f, true, &[]);
        let _ = wire::walk(self.0, wire::classify(self.0), &mut ToSink(&mut sink));
        sink.result()
    }
}

/// The message type's name.
struct Token(&'static str);

impl WriteText for Token {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        f.s(self.0)
    }
}

impl Dissector for Vessel {
    fn header(&self, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail> {
        let (_, sync, r) = key(payload);
        if let Some(seq) = sync {
            f(HeaderNumber {
                name: "seq",
                short: "seq",
                value: seq,
            });
        }
        match r {
            Err(e) if sync.is_none() => Err(findings::decode(e)),
            _ => Ok(()),
        }
    }

    fn messages(
        &self,
        payload: &[u8],
        f: &mut dyn FnMut(&MessageItem<'_>),
    ) -> Result<(), ProtoDetail> {
        let (which, sync, r) = key(payload);
        r.map_err(findings::decode)?;
        let name = wire::MESSAGE_TYPES[which.ordinal()];
        f(&MessageItem {
            type_name: name,
            seqno: sync.map(|s| s as u32),
            player: None,
            offset: 0,
            len: payload.len(),
            token: &Written(Token(name)),
            text: &Written(Text(payload)),
        });
        Ok(())
    }

    fn tree_ref(&self, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>)) {
        let r = FieldTree::with(|tree| {
            let r = wire::walk(payload, wire::classify(payload), &mut ToSink(&mut *tree));
            tree.emit(f);
            r
        });
        if let Err(e) = r {
            f(TreeRef::Error {
                error: findings::decode(e),
                offset: e.offset,
            });
        }
    }

    fn message_types(&self) -> &'static [&'static str] {
        wire::MESSAGE_TYPES
    }

    fn field_defs(&self) -> &'static [FieldDef] {
        &wire::FIELDS
    }

    fn fields(&self, payload: &[u8], sink: &mut dyn FieldSink) -> Result<(), ProtoDetail> {
        wire::walk(payload, wire::classify(payload), &mut ToSink(sink)).map_err(findings::decode)
    }
}
