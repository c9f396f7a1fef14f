//! How outputs see a described packet: everything comes from the decoder's
//! field walk, so the tree, the one-line text and the typed fields agree.

use super::Described;
use super::decode::{DecodeErr, Events, Side};
use crate::engine::ProtoDetail;
use crate::proto::dissect::{
    Dissector, HeaderNumber, MarksWire, MessageItem, Out, TreeRef, WriteText, Written,
};
use crate::proto::field::{Field, FieldDef, FieldSink, GroupDefs};
use crate::proto::layout::{FieldLine, FieldTree};
use std::cell::RefCell;
use std::fmt;

/// A described protocol's dissector: the registered one reads a protobuf
/// description's packet as the message its content tells
/// ([`Side::Any`](super::decode::Side)); a session's reads its packets as
/// their direction's message ([`Described::side_dissector`]).
#[derive(Debug)]
pub struct Dissect(pub &'static Described, pub Side);

impl Dissect {
    /// The dissector of `side`'s packets.
    pub fn side(d: &'static Described, side: Side) -> Dissect {
        Dissect(d, side)
    }
}

/// Passes the walk's fields to a [`FieldSink`].
struct ToSink<'s>(&'s mut dyn FieldSink);

impl Events for ToSink<'_> {
    fn field(&mut self, field: Field<'_>) {
        self.0.field(field);
    }
    fn enter(&mut self, node: Field<'_>) {
        self.0.enter(node);
    }
    fn leave(&mut self) {
        self.0.leave();
    }
    fn wants_any(&mut self, key: usize, defs: &GroupDefs<'_>) -> bool {
        self.0.wants_any(key, defs)
    }
    /// No violation is told: no `valid` is judged.
    fn judges(&self) -> bool {
        false
    }
}

/// The message type and the sequence number of a packet.
#[derive(Default)]
struct Key {
    type_field: Option<u16>,
    seq_field: Option<u16>,
    ty: Option<i64>,
    seq: Option<i64>,
    /// Only the sequence number is wanted: the walk stops once it is read.
    seq_only: bool,
}

impl Events for Key {
    /// Only the root type's integers: no field handed over.
    fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
        false
    }

    fn int(&mut self, field: u16, value: i64) {
        if Some(field) == self.type_field && self.ty.is_none() {
            self.ty = Some(value);
        }
        if Some(field) == self.seq_field && self.seq.is_none() {
            self.seq = Some(value);
        }
    }

    fn done(&self) -> bool {
        self.seq_only && self.seq.is_some()
    }
    /// No violation is told: no `valid` is judged.
    fn judges(&self) -> bool {
        false
    }
}

/// The longest payload whose walk [`LastWalk`] keeps.
const REMEMBERED: usize = 512;

/// The message type, the sequence number and the end of the last packet
/// the analysis walked on this thread (a layout's: a protobuf message is
/// read by side), with the payload's bytes and its description. The engine
/// analyses a packet before its output asks the dissector for its message
/// (one thread, or the engine's thread of two), so [`Dissect::messages`]
/// takes them from here rather than walking the same bytes again: they are
/// what its own walk tells ([`Key`] and the analysis's sink take the same
/// integers; a walk that judges `valid`s ends as one that does not). Any
/// other payload (compared whole: the reader's thread rendering ahead,
/// another description, a duplicate the analysis did not walk) is walked.
struct LastWalk {
    d: usize,
    len: usize,
    bytes: [u8; REMEMBERED],
    ty: Option<i64>,
    seq: Option<i64>,
    result: Result<usize, DecodeErr>,
}

thread_local! {
    static LAST: RefCell<LastWalk> = const {
        RefCell::new(LastWalk {
            d: 0,
            len: usize::MAX,
            bytes: [0; REMEMBERED],
            ty: None,
            seq: None,
            result: Ok(0),
        })
    };
}

/// Keeps what the analysis's walk of `payload` told ([`LastWalk`]).
pub(super) fn remember(
    d: &'static Described,
    payload: &[u8],
    (ty, seq): (Option<i64>, Option<i64>),
    result: Result<usize, DecodeErr>,
) {
    let _ = LAST.try_with(|last| {
        let mut last = last.borrow_mut();
        let Some(bytes) = last.bytes.get_mut(..payload.len()) else {
            last.len = usize::MAX;
            return;
        };
        bytes.copy_from_slice(payload);
        last.d = std::ptr::from_ref(d) as usize;
        last.len = payload.len();
        (last.ty, last.seq, last.result) = (ty, seq, result);
    });
}

impl Dissect {
    /// What the analysis's walk of `payload` told, if it was the last on
    /// this thread ([`LastWalk`]).
    fn remembered(&self, payload: &[u8]) -> Option<(Key, Result<usize, DecodeErr>)> {
        if self.0.compiled.proto.is_some() {
            return None;
        }
        LAST.try_with(|last| {
            let last = last.borrow();
            let same = last.d == std::ptr::from_ref(self.0) as usize
                && last.len == payload.len()
                && last.bytes.get(..payload.len()) == Some(payload);
            same.then(|| {
                let k = Key {
                    ty: last.ty,
                    seq: last.seq,
                    ..Key::default()
                };
                (k, last.result)
            })
        })
        .ok()
        .flatten()
    }

    fn error(&self, e: DecodeErr) -> ProtoDetail {
        super::decode_detail(self.0, e)
    }

    /// The packet's keys, and how its decode ended (with `seq_only`, the
    /// walk stops at the sequence number: then it ends there).
    fn key(&self, payload: &[u8], seq_only: bool) -> (Key, Result<usize, DecodeErr>) {
        let mut k = Key {
            type_field: self.0.type_field,
            seq_field: self.0.seq_field.map(|(f, _)| f),
            seq_only,
            ..Key::default()
        };
        let r = self.0.compiled.walk_with(payload, self.1, &mut k);
        (k, r)
    }

    fn type_name(&self, ty: Option<i64>) -> &'static str {
        let info = self.0.info();
        match ty.and_then(|t| self.0.type_ordinal(t)) {
            Some(i) => info.message_types.get(i).copied().unwrap_or(info.name),
            None => info.message_types.first().copied().unwrap_or(info.name),
        }
    }
}

/// `name=value` of every leaf field, in wire order.
struct Text<'a>(&'static Described, Side, &'a [u8]);

/// The walk's fields straight into the line (the one-line text every
/// protocol walked as registered fields shares: `layout::FieldLine`).
impl<O: Out> Events for FieldLine<'_, O> {
    fn field(&mut self, field: Field<'_>) {
        FieldSink::field(self, field);
    }
    fn field_at(&mut self, at: u16, field: Field<'_>) {
        FieldLine::field_at(self, at, field);
    }
    fn enter(&mut self, node: Field<'_>) {
        FieldSink::enter(self, node);
    }
    fn leave(&mut self) {
        FieldSink::leave(self);
    }
    /// No violation is told: no `valid` is judged.
    fn judges(&self) -> bool {
        false
    }
}

impl Text<'_> {
    fn write(&self, f: &mut impl Out) -> fmt::Result {
        let c = &self.0.compiled;
        if c.proto.is_none() {
            // A layout's: its repeated bodies copied (`bodies`).
            return match &self.0.text_head {
                Some(head) => super::bodies::write(self.0, head, self.2, f),
                None => super::bodies::walk(self.0, self.2, f),
            };
        }
        // A protobuf field that is not on the wire (read as its default,
        // with an empty span) is left out of the line, as the wire leaves it.
        let mut sink = FieldLine::new(f, true, c.line_labels);
        let _ = c.walk_with(self.2, self.1, &mut sink);
        sink.result()
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f)
    }
}

impl WriteText for Text<'_> {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result {
        self.write(out)
    }
}

/// The text's bytes; for JSON, where the first from the wire begins (a text
/// field's, told by `Value::Text`): labels, enum names and numbers never
/// need an escape, so a text without a string is not searched.
impl MarksWire for Text<'_> {}

/// The message type's name.
struct Token(&'static str);

impl WriteText for Token {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        f.s(self.0)
    }
}

/// The walk's fields straight into the tree (the `-V` tree every protocol
/// walked as registered fields shares: `layout::FieldTree`).
impl Events for FieldTree {
    fn field(&mut self, field: Field<'_>) {
        FieldSink::field(self, field);
    }
    fn enter(&mut self, node: Field<'_>) {
        FieldSink::enter(self, node);
    }
    fn leave(&mut self) {
        FieldSink::leave(self);
    }
    /// A node cut short spans the bytes present.
    fn cut(&mut self, end: usize) {
        self.reach(end);
    }
    /// No violation is told: no `valid` is judged.
    fn judges(&self) -> bool {
        false
    }
}

impl Dissector for Dissect {
    fn header(&self, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail> {
        // A sequence number in a fixed place is read there (the walk would
        // stop at it: what it tells is the same).
        let fixed = self
            .0
            .ksy
            .sem
            .sequence
            .and_then(|(i, _)| self.0.compiled.fixed_root_int(payload, i));
        if let Some(seq) = fixed {
            f(HeaderNumber {
                name: "seq",
                short: "seq",
                value: seq as u64,
            });
            return Ok(());
        }
        // The error matters only without a sequence number.
        let (k, r) = self.key(payload, true);
        if let Some(seq) = k.seq {
            f(HeaderNumber {
                name: "seq",
                short: "seq",
                value: seq as u64,
            });
        }
        match r {
            Err(e) if k.seq.is_none() => Err(self.error(e)),
            _ => Ok(()),
        }
    }

    fn messages(
        &self,
        payload: &[u8],
        f: &mut dyn FnMut(&MessageItem<'_>),
    ) -> Result<(), ProtoDetail> {
        let (k, r) = match self.remembered(payload) {
            Some(kr) => kr,
            None => self.key(payload, false),
        };
        if let Err(e) = r {
            return Err(self.error(e));
        }
        let name = self.type_name(k.ty);
        f(&MessageItem {
            type_name: name,
            seqno: k.seq.map(|s| s as u32),
            player: None,
            offset: 0,
            len: payload.len(),
            token: &Written(Token(name)),
            text: &Text(self.0, self.1, payload),
        });
        Ok(())
    }

    fn tree_ref(&self, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>)) {
        // The walk's root node is the packet; its fields are below it. A
        // layout's repeated packets have their trees copied (`trees`).
        let r = match &self.0.text_head {
            Some(head) => super::trees::tree(self.0, head, payload, self.1, f),
            None => super::trees::walk(self.0, payload, self.1, f),
        };
        if let Err(e) = r {
            f(TreeRef::Error {
                error: self.error(e),
                offset: e.offset,
            });
        }
    }

    fn message_types(&self) -> &'static [&'static str] {
        self.0.info().message_types
    }

    fn field_defs(&self) -> &'static [FieldDef] {
        self.0.compiled.defs
    }

    fn fields(&self, payload: &[u8], sink: &mut dyn FieldSink) -> Result<(), ProtoDetail> {
        self.0
            .compiled
            .walk_with(payload, self.1, &mut ToSink(sink))
            .map(|_| ())
            .map_err(|e| self.error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::{Dissect, Side};
    use crate::proto::described::{
        self, starstrike_ksy as starstrike, strs_snapshot as snapshot, tree_line, variants,
    };
    use crate::proto::dissect::Dissector;
    use crate::proto::layout::FieldLine;

    /// The one-line text of `p`; with `labels`, the labels and elements'
    /// prefixes written at once, else each piece by itself.
    fn line(d: &'static described::Described, p: &[u8], labels: bool) -> String {
        let mut out = Vec::new();
        let labels = if labels { d.compiled.line_labels } else { &[] };
        let mut sink = FieldLine::new(&mut out, false, labels);
        let _ = d.compiled.walk_with(p, Side::Any, &mut sink);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_lines_labels_and_element_prefixes_written_at_once_are_the_pieces() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/protocols/starstrike.ksy"
        ))
        .unwrap();
        let d = described::leak(described::parse("s.ksy", &text).unwrap(), usize::MAX);
        let mut chat = b"STRS\x03\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\x02\x01".to_vec();
        chat.extend(b"hi \"there\"");
        chat.resize(chat.len() + 245, 0);
        for whole in [snapshot(12), chat] {
            for p in variants(&whole) {
                assert_eq!(line(d, &p, true), line(d, &p, false), "{p:02x?}");
            }
        }
        let whole = line(d, &snapshot(11), true);
        assert!(
            whole.contains(" [10].entity_id=10 [10].entity_type=1 [10].x=-1 "),
            "{whole}"
        );
    }

    /// The `-V` tree of `p`: a line a field, `depth label: value start..end`.
    fn tree(d: &'static described::Described, p: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        Dissect(d, Side::Any).tree_ref(p, &mut |t| out.push(tree_line(t)));
        out
    }

    /// A node whose bytes run out spans the bytes present, as the native
    /// trees' messages and entries cut short do (`payload (3 bytes at
    /// offset 12)`, not `(0 bytes ...)`); whole, what it holds.
    #[test]
    fn a_node_cut_short_spans_the_bytes_present() {
        let d = starstrike();
        let whole = snapshot(2);
        let line = |p: &[u8], label: &str| {
            let t = tree(d, p);
            t.iter()
                .find(|l| l.split(' ').nth(1) == Some(label))
                .cloned()
                .unwrap_or_else(|| panic!("{label} in {t:#?}"))
        };
        assert_eq!(line(&whole, "payload:"), "1 payload:  12..111");
        assert_eq!(line(&whole[..15], "payload:"), "1 payload:  12..15");
        assert_eq!(tree(d, &whole[..15]).last().unwrap(), "error at 12");
        let cut = &whole[..74];
        assert_eq!(line(cut, "payload:"), "1 payload:  12..74");
        assert_eq!(line(cut, "entities[1]:"), "2 entities[1]:  64..74");
        assert_eq!(line(cut, "entities[0]:"), "2 entities[0]:  17..64");
        assert_eq!(line(cut, "position:"), "3 position:  22..34");
    }

    /// A text that is not UTF-8 is escaped, and the tree says so after it,
    /// as every protocol's tree does (`layout::tree_value`).
    #[test]
    fn a_text_that_is_not_utf8_is_named_in_the_tree() {
        let mut p = b"STRS\x00\x01\x00\x07\x00\x00\x00\x00\x01\xffab".to_vec();
        p.resize(12 + 1 + 32 + 8, 0);
        let t = tree(starstrike(), &p);
        assert!(
            t.contains(&r#"2 player_name: "\xffab" (not UTF-8) 13..45"#.to_string()),
            "{t:#?}"
        );
    }

    /// The text's labels and enum names need no JSON escape
    /// (`Text::write_json` tells JSON Lines to search only from the first
    /// text field): a `.ksy`'s ids are lower_snake_case, a `.proto`'s names
    /// identifiers. Every shipped description, and the protobuf example.
    #[test]
    fn labels_and_enum_names_need_no_json_escape() {
        let plain = |s: &str| !s.contains(|c: char| c == '"' || c == '\\' || c.is_control());
        let mut all: Vec<described::Described> = described::SHIPPED
            .iter()
            .map(|(f, t)| described::parse(f, t).unwrap())
            .collect();
        let proto = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/protocols/vessel-protobuf.yaml"
        );
        all.push(described::parse(proto, &std::fs::read_to_string(proto).unwrap()).unwrap());
        for d in &all {
            for s in &d.compiled.specs {
                assert!(plain(&s.label), "{:?}", s.label);
            }
            for e in &d.compiled.enums {
                for (_, name) in &e.values {
                    assert!(plain(name), "{name:?}");
                }
            }
        }
        assert!(!plain("a\"b"));
    }
}
