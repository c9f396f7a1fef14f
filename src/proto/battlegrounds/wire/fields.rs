//! The typed walk of a packet in wire order ([`walk_in`]): what the
//! dissector, the filter, field output and JSON read, a visitor of the
//! layout (`layout.rs`, which registers the fields, [`super::FIELDS`]). The
//! walk borrows from the packet and allocates nothing.

use super::defs::{F, FIELDS, HEADER_LEN, field};
use super::error::DecodeError;
use super::layout::{Bg, Form, HEADER_ROW, header_layout};
use super::packet::{Header, Packet};
use super::types::{ByteOrder, Dialect};
use crate::proto::dissect::Out;
use crate::proto::field::{Field, FieldSink, Value, group_key};
use crate::proto::layout::{TextOut, ToSink, Visit, layout_defs, walk_row, walk_table};
use std::fmt;

/// Walks the header's fields of `bytes` (its first 8, read in `order`) for
/// `v`.
pub(super) fn visit_header<V: Visit<F>>(bytes: &[u8], order: ByteOrder, v: &mut V) {
    walk_row::<Bg, HEADER_ROW, V>(bytes, 0, order, v);
}

/// Walks a decoded packet's payload fields (the bytes after the header, by
/// the row of its form) for `v`.
pub(super) fn visit_payload<V: Visit<F>>(p: &Packet<'_>, form: Form, v: &mut V) {
    let payload = p.bytes().get(HEADER_LEN..).unwrap_or_default();
    walk_table::<Bg, V>(form as usize, payload, HEADER_LEN, p.order(), v);
}

/// Writes the pieces of the one-line text the layout gives the packet's
/// fields: ` session=4660 ch=0`, then its payload's (` ts=1000 pos=(1.5,
/// -2) ...`).
pub fn write_fields_text(p: &Packet<'_>, f: &mut impl Out) -> fmt::Result {
    let mut out = TextOut::new(f);
    visit_header(p.bytes(), p.order(), &mut out);
    visit_payload(p, p.payload().form(), &mut out);
    out.r
}

/// Walks the header's fields of `bytes` (a node and its children), read in
/// `order`; nothing if it is shorter than a header.
pub fn walk_header(bytes: &[u8], order: ByteOrder, sink: &mut dyn FieldSink) {
    if bytes.len() < HEADER_LEN {
        return;
    }
    sink.enter(Field {
        def: field(F::HEADER),
        index: None,
        offset: 0,
        len: HEADER_LEN,
        value: Value::None,
    });
    visit_header(bytes, order, &mut ToSink::new(sink, &FIELDS));
    sink.leave();
}

/// Walks a little-endian packet's typed fields: [`walk_in`].
pub fn walk(bytes: &[u8], sink: &mut dyn FieldSink) -> Result<(), DecodeError> {
    walk_in(bytes, Dialect::LITTLE, sink)
}

/// Walks a packet's typed fields in wire order: the header, then the payload
/// (a node and its fields); then why the rest does not decode, if it does not.
/// Allocates nothing. A sink that shows only some fields is asked about the
/// header, the payload's form and a polygon's vertices, and the walk skips
/// the groups it does not want.
pub fn walk_in(
    bytes: &[u8],
    dialect: Dialect,
    sink: &mut dyn FieldSink,
) -> Result<(), DecodeError> {
    Header::parse_in(bytes, dialect.order)?;
    let header = header_layout();
    if sink.wants_any(group_key(header), &|each| {
        each(field(F::HEADER));
        layout_defs(header, each);
    }) {
        walk_header(bytes, dialect.order, sink);
    }
    let p = Packet::new_checked_in(bytes, dialect)?;
    walk_payload(&p, sink);
    Ok(())
}

/// Walks a decoded packet's payload: its node, then its fields; nothing if
/// the sink takes none of its form's fields.
pub fn walk_payload(p: &Packet<'_>, sink: &mut dyn FieldSink) {
    let form = p.payload().form();
    let l = form.layout();
    if !sink.wants_any(group_key(l), &|each| {
        each(field(F::PAYLOAD));
        layout_defs(l, each);
    }) {
        return;
    }
    sink.enter(Field {
        def: field(F::PAYLOAD),
        index: None,
        offset: HEADER_LEN,
        len: p.len() - HEADER_LEN,
        value: Value::Enum {
            raw: p.packet_type().ordinal() as u64,
            name: Some(p.packet_type().name()),
        },
    });
    visit_payload(p, form, &mut ToSink::new(sink, &FIELDS));
    sink.leave();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::battlegrounds::wire::FIELDS;

    struct Collect(Vec<(&'static str, usize, usize, String)>);
    impl FieldSink for Collect {
        fn field(&mut self, f: Field<'_>) {
            self.0
                .push((f.def.name, f.offset, f.len, f.value.to_string()));
        }
    }

    #[test]
    fn names_are_unique_and_namespaced() {
        let mut names: Vec<_> = FIELDS.iter().map(|f| f.name).collect();
        assert!(names.iter().all(|n| n.starts_with("bg.")));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FIELDS.len());
    }

    #[test]
    fn a_msg_ack_walks_with_spans() {
        let mut b = vec![1, 0, 0, 0, 2, 0x11, 0, 0];
        b.extend_from_slice(&5u32.to_le_bytes());
        b.extend_from_slice(&3u16.to_le_bytes());
        let mut c = Collect(Vec::new());
        walk(&b, &mut c).unwrap();
        let names: Vec<_> = c.0.iter().map(|f| f.0).collect();
        assert_eq!(
            names,
            [
                "bg.header",
                "bg.session_id",
                "bg.byte_order",
                "bg.channel",
                "bg.op",
                "bg.version",
                "bg.reserved",
                "bg.payload",
                "bg.msg.id",
                "bg.msg.block"
            ]
        );
        assert_eq!(c.0[8], ("bg.msg.id", 8, 4, "5".to_owned()));
        assert_eq!(c.0[9], ("bg.msg.block", 12, 2, "3".to_owned()));
        assert_eq!(c.0[4].3, "MSG_ACK (17)");
        // The byte order has no bytes: it is the whole header's, at its start.
        assert_eq!(
            c.0[1..7],
            [
                ("bg.session_id", 0, 4, "0x1".to_owned()),
                ("bg.byte_order", 0, 0, "little-endian (1)".to_owned()),
                ("bg.channel", 4, 1, "environment (2)".to_owned()),
                ("bg.op", 5, 1, "MSG_ACK (17)".to_owned()),
                ("bg.version", 6, 1, "0".to_owned()),
                ("bg.reserved", 7, 1, "0".to_owned()),
            ]
        );
    }

    /// A polygon's vertices are nodes of their own, each at its offset, and
    /// the render data follows them; the text counts them.
    #[test]
    fn a_polygon_walks_its_vertices_in_either_order() {
        use super::super::{PacketRepr, PayloadRepr, Tag, VectorD, VectorF};
        let prop = PayloadRepr::PropPolygon {
            prop_id: -7,
            position: VectorD { x: 1.5, y: -2.0 },
            shape_type: Tag,
            vertices: vec![VectorF { x: 0.5, y: 1.0 }, VectorF { x: -3.0, y: 4.25 }],
            render_data: vec![9, 8, 7],
        };
        for order in ByteOrder::ALL {
            let b = PacketRepr::new(0x1234, 2, prop.clone())
                .to_bytes_in(order)
                .unwrap();
            let d = Dialect { order, ping: None };
            let mut c = Collect(Vec::new());
            walk_in(&b, d, &mut c).unwrap();
            let payload: Vec<_> = c.0[7..]
                .iter()
                .map(|(n, at, len, v)| (*n, *at, *len, v.as_str()))
                .collect();
            assert_eq!(
                payload,
                [
                    ("bg.payload", 8, 48, "PROP (6)"),
                    ("bg.prop.id", 8, 8, "-7"),
                    ("bg.position.x", 16, 8, "1.5"),
                    ("bg.position.y", 24, 8, "-2"),
                    ("bg.prop.shape_type", 32, 1, "polygon (1)"),
                    ("bg.prop.vertices_len", 33, 2, "2"),
                    ("bg.prop.vertex", 35, 8, ""),
                    ("bg.prop.vertex.x", 35, 4, "0.5"),
                    ("bg.prop.vertex.y", 39, 4, "1"),
                    ("bg.prop.vertex", 43, 8, ""),
                    ("bg.prop.vertex.x", 43, 4, "-3"),
                    ("bg.prop.vertex.y", 47, 4, "4.25"),
                    ("bg.prop.render_data_len", 51, 2, "3"),
                    ("bg.prop.render_data", 53, 3, "090807"),
                ],
                "{order}"
            );
            let p = Packet::new_checked_in(&b, d).unwrap();
            let mut text = String::new();
            write_fields_text(&p, &mut text).unwrap();
            assert_eq!(
                text,
                " session=4660 ch=2 id=-7 pos=(1.5, -2) polygon vertices=2 render_data=3B"
            );
        }
    }

    #[test]
    fn a_bad_payload_walks_its_header_then_fails() {
        let b = [1, 0, 0, 0, 0, 3, 0, 0, 1];
        let mut c = Collect(Vec::new());
        let e = walk(&b, &mut c).unwrap_err();
        assert_eq!(e.offset(), 8);
        assert_eq!(c.0.len(), 7);
    }
}
