//! Battlegrounds' wire layout, declared once (`battlegrounds-protocol.rst`
//! with the settlements of `battlegrounds-NOTES.md`): for each form of
//! payload, the fields in wire order with their primitive (size, sign;
//! every number in the session's byte order, big- or little-endian,
//! chosen at run time), the label of the field tree and the piece of the
//! one-line text each writes. The registered fields ([`FIELDS`]), the
//! primitives and the header's row are in `defs.rs`, below the payload
//! machinery (`payload.rs`), which reads and writes their items. The
//! machinery is shared with the other native protocols
//! (`crate::proto::layout`); this file is Battlegrounds' table only.
//!
//! The payload is declared once, a variant a *form* ([`PayloadOf`],
//! `payloads!`; its forms are [`Form`]): a packet type, and for the types
//! the notes give two shapes (PING and PONG with or without the
//! reference's `seq`, AUTH_OK whole or a timestamp only, PROP's circle or
//! polygon) one variant each, its fields in wire order, each with its
//! items (its primitive, tree label and text piece). The enum is generic
//! over where its variable parts live: the decoder's [`super::Payload`]
//! borrows them from the packet, the encoder's [`super::PayloadRepr`] owns
//! them. Derived from the declaration: each form's row (its fields'
//! items, the entries a polygon's count counts, the render data after
//! them), the reader of each form (the decoder's checks, `packet.rs`,
//! choose the form; every field is then read at a cursor that moves past
//! it, in the session's byte order), the encoder with its length checks
//! (the maximum of each length field is its width's), the encoded
//! length, the owned copy of a view; and from the rows, the field walk of
//! `-Y`, `-T fields` and JSON (`fields.rs`, with the groups `-T fields`
//! skips: the header, each form, the polygon's vertices), the `-V` tree
//! (made from that walk in `dissect.rs`), the one-line text, and the
//! lengths the decoder checks ([`MOVEMENT_LEN`], [`PacketType::fixed_len`]
//! and the others below).
//!
//! The fixed-size structs of the typed payload ([`Movement`], [`MoveOp`],
//! [`MoveEvent`], [`MsgAck`]) are declared here with their rows, a field
//! and its items together (`record!` of `crate::proto::codec`): a
//! struct's row is its fields' items in order, and a field that is
//! itself a record or a shared part (the movement structure of AUTH_OK,
//! MOVE_OP and MOVE_EVENT; the position of the movement and of a PROP)
//! names that row, spliced in (`splice!`), so that its items are written
//! once.
//!
//! What stays hand-written: the decoder's checks, one pass that tells the
//! form (lengths, shapes, trailing bytes: the errors and their offsets,
//! `packet.rs`), the byte-order evidence (`order.rs`) and the compact
//! token (`MSG#5/2`).
//!
//! # Adding a field to a message
//!
//! 1. Register it in [`FIELDS`] (`fields!` in `defs.rs`: filter name, tree label,
//!    type, documentation), unless it reuses one (`bg.timestamp`).
//! 2. Add it, in wire order, with its items, to its variant in
//!    `payloads!` below (`seq: u8 = [SEQ]`), to each variant of its type
//!    for a type of several forms; for a record (the movement structure,
//!    MOVE_OP, MOVE_EVENT, MSG_ACK), to its struct in `record!` (`pub
//!    op_sig: u8 = [it(OP_SIG, U8, "op_sig", " op_sig=")]`). The row
//!    follows, every row that splices it in too, and from them the field
//!    walk, the `-V` tree, the text, `-T fields`' groups and the lengths;
//!    the reader, the encoder, the owned form and its length follow from
//!    the declaration. A field whose type does not hold its items does
//!    not compile.
//!
//! A field whose length is told by another (bytes after a `u8` or `i16`
//! length, a count of vertices) also needs the decoder's check of that
//! length (`check_payload` in `packet.rs`) and, for the encoder's error,
//! the part its length item names (`Part::counted_by`, `error.rs`).

use super::defs::F::{self, *};
#[cfg(doc)]
use super::defs::FIELDS;
use super::defs::{BITS8, F32, F64, HEADER_ITEMS, I64, Item, Layout, SHAPE_BYTE, U8, U16, U32};
use super::payload::{Owned, Store, Tag, payloads};
use super::types::{PacketType, VectorD, VectorF};
use crate::proto::codec::{item_offset, record};
use crate::proto::layout::{self as core, Int, Prim, Quote, Table, hidden, it, size};

// The typed payloads' records, each declared with its row: a field and
// its items, or a row it holds whole (the movement structure, a
// position), spliced in (what the codec reads and writes it at,
// `record!`).

const TS: Item = it(TIMESTAMP, I64, "timestamp", " ts=");
/// A position (the movement's, a PROP's): two doubles.
const POSITION: &[Item] = &[
    it(POSITION_X, F64, "position.x", " pos=("),
    it(POSITION_Y, F64, "position.y", ", ").then(")"),
];

record! {
    /// The movement structure AUTH_OK, MOVE_OP and MOVE_EVENT start with.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct Movement in pub(super) const MOVEMENT: &[Item] {
        pub timestamp: i64 = [TS],
        pub position: VectorD = POSITION,
        /// A unit vector.
        pub forward: VectorF = [
            it(FORWARD_X, F32, "forward.x", " fwd=("),
            it(FORWARD_Y, F32, "forward.y", ", ").then(")"),
        ],
        pub movement_bits: u8 = [it(MOVEMENT_BITS, BITS8, "movementBits", " bits=")],
    }
}

const OP_SIG_ITEM: Item = it(OP_SIG, U8, "op_sig", " op_sig=");

record! {
    /// MOVE_OP's payload.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct MoveOp in const MOVE_OP: &[Item] {
        pub movement: Movement = MOVEMENT,
        /// The client's operation counter (u8, wrapping).
        pub op_sig: u8 = [OP_SIG_ITEM],
    }
}

record! {
    /// MOVE_EVENT's payload.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct MoveEvent in const MOVE_EVENT: &[Item] {
        pub movement: Movement = MOVEMENT,
        /// The last op_sig the server received.
        pub op_sig: u8 = [OP_SIG_ITEM],
        /// The server's event counter (u8, wrapping).
        pub event_sig: u8 = [it(EVENT_SIG, U8, "event_sig", " event_sig=")],
    }
}

/// AUTH_OK's name after its movement: a `u8` length, then the name.
const NAME_ITEMS: &[Item] = &[
    hidden(NAME_LEN, Prim::Len(Int::U8), "name_len"),
    it(NAME, Prim::Text(Quote::Value), "name", " name="),
];
/// PING's and PONG's seq (the reference's forms).
const SEQ: Item = hidden(PING_SEQ, U8, "seq");
const PROP_ID_ITEM: Item = it(PROP_ID, I64, "prop_id", " id=");
const SHAPE_TYPE_ITEM: Item = hidden(SHAPE_TYPE, SHAPE_BYTE, "shape_type");
/// The render data every PROP ends with: an i16 length, then its bytes.
const RENDER: &[Item] = &[
    it(
        RENDER_DATA_LEN,
        Prim::Len(Int::I16),
        "render_data_len",
        " render_data=",
    )
    .then("B"),
    hidden(RENDER_DATA, Prim::Bytes, "render_data"),
];
const MSG_ID_ITEM: Item = it(MSG_ID, U32, "msg_id", " msg_id=");
const BLOCK_ID: Item = it(MSG_BLOCK, U16, "block_id", " block=");

record! {
    /// MSG_ACK's payload.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct MsgAck in const MSG_ACK: &[Item] {
        pub msg_id: u32 = [MSG_ID_ITEM],
        pub block_id: u16 = [BLOCK_ID],
    }
}

payloads! {
    /// A packet's payload, a variant a form ([`Form`]): a packet type, and
    /// for the types the notes give two shapes one variant each (PING and
    /// PONG with or without the reference's `seq`, AUTH_OK whole or a
    /// timestamp only, PROP's circle or polygon). `S` says where its
    /// variable parts live: a [`super::Payload`] borrows them from the
    /// packet, a [`super::PayloadRepr`] owns them. Each field is declared
    /// with its items, in wire order: they are its form's row, which the
    /// decoder reads it from and the encoder writes it to.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub enum PayloadOf<S: Store> {
        /// AUTH, empty.
        Auth,
        /// The reference's AUTH_OK: a `u64` timestamp only (read as `i64`).
        AuthOkTimestamp { timestamp: i64 = [TS] },
        /// The specification's AUTH_OK: the movement structure, then the
        /// character's name after its `u8` length, as sent (it should be
        /// UTF-8).
        AuthOk { movement: Movement = MOVEMENT, name: S::Bytes = NAME_ITEMS },
        /// The specification's PING: empty.
        Ping,
        /// The reference's PING: a `u8` ping counter.
        PingSeq { seq: u8 = [SEQ] },
        /// The specification's PONG: an `i64` timestamp.
        Pong { timestamp: i64 = [TS] },
        /// The reference's PONG: the PING's seq, then a `u64` timestamp
        /// (read as `i64`).
        PongSeq { seq: u8 = [SEQ], timestamp: i64 = [TS] },
        MoveOp(MoveOp = MOVE_OP),
        MoveEvent(MoveEvent = MOVE_EVENT),
        /// A PROP whose shape is a circle (`shape_type` 0), then its
        /// render data after their `i16` length.
        PropCircle {
            prop_id: i64 = [PROP_ID_ITEM],
            position: VectorD = POSITION,
            shape_type: Tag<0> = [SHAPE_TYPE_ITEM],
            center: VectorF = [
                it(CENTER_X, F32, "center.x", " circle center=("),
                it(CENTER_Y, F32, "center.y", ", ").then(")"),
            ],
            radius: f32 = [it(RADIUS, F32, "radius", " radius=")];
            render_data: S::Bytes = RENDER,
        },
        /// A PROP whose shape is a polygon (`shape_type` 1): its vertices
        /// after their `i16` count, then its render data.
        PropPolygon {
            prop_id: i64 = [PROP_ID_ITEM],
            position: VectorD = POSITION,
            shape_type: Tag<1> = [SHAPE_TYPE_ITEM],
            vertices: S::Vertices = [it(
                VERTICES_LEN,
                Prim::Count(Int::I16),
                "vertices_len",
                " polygon vertices=",
            )];
            render_data: S::Bytes = RENDER,
        },
        /// One block of a message: the block is every byte after its
        /// fixed part.
        Msg {
            msg_id: u32 = [MSG_ID_ITEM],
            /// The whole message's length.
            msg_len: u32 = [it(MSG_LEN, U32, "msg_len", " msg_len=")],
            /// The block's index, from 0.
            block_id: u16 = [BLOCK_ID],
            block: S::Bytes = [it(MSG_DATA, Prim::Rest, "block", " bytes=")],
        },
        MsgAck(MsgAck = MSG_ACK),
        /// CLOSE, empty, from either side: its type is its meaning.
        Close = [hidden(CLOSE, Prim::Flag, "close")],
    }
    forms Form[FORMS];
}

/// A payload's form: a variant of [`PayloadOf`], and the row of the
/// layout it is read and written by (the header's row follows theirs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Auth,
    AuthOkTimestamp,
    AuthOk,
    Ping,
    PingSeq,
    Pong,
    PongSeq,
    MoveOp,
    MoveEvent,
    PropCircle,
    PropPolygon,
    Msg,
    MsgAck,
    Close,
}

/// The number of forms.
const FORMS: usize = Form::Close as usize + 1;
/// The header's row: after the forms'.
pub(super) const HEADER_ROW: usize = FORMS;

impl Form {
    /// Its packet type.
    pub const fn packet_type(self) -> PacketType {
        match self {
            Form::Auth => PacketType::Auth,
            Form::AuthOkTimestamp | Form::AuthOk => PacketType::AuthOk,
            Form::Ping | Form::PingSeq => PacketType::Ping,
            Form::Pong | Form::PongSeq => PacketType::Pong,
            Form::MoveOp => PacketType::MoveOp,
            Form::MoveEvent => PacketType::MoveEvent,
            Form::PropCircle | Form::PropPolygon => PacketType::Prop,
            Form::Msg => PacketType::Msg,
            Form::MsgAck => PacketType::MsgAck,
            Form::Close => PacketType::Close,
        }
    }
}

const fn row(items: &'static [Item]) -> Layout {
    core::layout(&[], items, None, &[])
}

/// Every form's layout, by [`Form`] (from the declaration of
/// [`PayloadOf`]); the header's last. A constant, so that each row's walk
/// is compiled with the row's fields as constants.
const LAYOUTS: [Layout; FORMS + 1] = {
    let forms = PayloadOf::<Owned>::ROWS;
    let mut rows = [row(HEADER_ITEMS); FORMS + 1];
    let mut i = 0;
    while i < FORMS {
        rows[i] = forms[i];
        i += 1;
    }
    rows
};

/// [`LAYOUTS`] at a fixed address (a group's key is its row's).
static ROWS: [Layout; FORMS + 1] = LAYOUTS;

/// Battlegrounds' table, for the shared walk.
pub(super) struct Bg;

impl Table for Bg {
    type H = F;
    const ROWS: &'static [Layout] = &LAYOUTS;
}

/// The items of a form's row.
pub(super) const fn items(form: Form) -> &'static [Item] {
    LAYOUTS[form as usize].items
}

impl Form {
    /// Its layout.
    pub(super) fn layout(self) -> &'static Layout {
        &ROWS[self as usize]
    }
}

/// The header's layout.
pub(super) fn header_layout() -> &'static Layout {
    &ROWS[HEADER_ROW]
}

// The lengths the decoder and the encoder read, from the table.

/// The character movement structure: `i64 timestamp, VectorD position, VectorF
/// forward, u8 movementBits`.
pub const MOVEMENT_LEN: usize = size(MOVEMENT);
/// A PROP's fixed part before its shape: `i64 prop_id, VectorD position, u8 shape_type`.
pub const PROP_FIXED_LEN: usize = item_offset!(items(Form::PropCircle), F::CENTER_X);
/// Where a PROP's shape type is.
pub(super) const PROP_SHAPE_TYPE: usize = item_offset!(items(Form::PropCircle), F::SHAPE_TYPE);
/// A Circle shape: `VectorF center, float radius`.
pub const CIRCLE_LEN: usize = fixed_len(Form::PropCircle) - PROP_FIXED_LEN;
/// The fixed part of a MSG payload: `u32 msg_id, u32 msg_len, u16 block_id`.
pub const MSG_FIXED_LEN: usize = fixed_len(Form::Msg);
/// A MSG_ACK payload: `u32 msg_id, u16 block_id`.
pub const MSG_ACK_LEN: usize = fixed_len(Form::MsgAck);
/// Where AUTH_OK's name length and name are.
pub(super) const AUTH_OK_NAME_LEN: usize = item_offset!(items(Form::AuthOk), F::NAME_LEN);
pub(super) const AUTH_OK_NAME: usize = item_offset!(items(Form::AuthOk), F::NAME);

/// The fixed part of a form's payload (a length byte included).
pub(super) const fn fixed_len(form: Form) -> usize {
    LAYOUTS[form as usize].fixed
}

impl PacketType {
    /// The bytes of the payload that do not depend on a length field: a payload
    /// shorter than this is truncated. For PING, PONG and AUTH_OK, the
    /// specification's form (the reference's forms are told apart by size:
    /// [`PacketType::seq_len`]). From the layout.
    pub const fn fixed_len(self) -> usize {
        match self {
            PacketType::Auth => fixed_len(Form::Auth),
            PacketType::Ping => fixed_len(Form::Ping),
            PacketType::Close => fixed_len(Form::Close),
            PacketType::Pong => fixed_len(Form::Pong),
            PacketType::AuthOk => fixed_len(Form::AuthOk),
            PacketType::MoveOp => fixed_len(Form::MoveOp),
            PacketType::MoveEvent => fixed_len(Form::MoveEvent),
            PacketType::Prop => PROP_FIXED_LEN,
            PacketType::Msg => MSG_FIXED_LEN,
            PacketType::MsgAck => MSG_ACK_LEN,
        }
    }

    /// The payload of the reference's form of PING, PONG and AUTH_OK (a
    /// `u8` seq; a timestamp alone for AUTH_OK), from the layout; none for
    /// the other types.
    pub const fn seq_len(self) -> Option<usize> {
        match self {
            PacketType::Ping => Some(fixed_len(Form::PingSeq)),
            PacketType::Pong => Some(fixed_len(Form::PongSeq)),
            PacketType::AuthOk => Some(fixed_len(Form::AuthOkTimestamp)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::defs::{HEADER_LEN, VERTEX_LEN};
    use super::*;

    /// The rows the walk reads and the lengths the decoder reads agree:
    /// each form's fixed part is as the specification gives it.
    #[test]
    fn the_table_gives_the_specifications_lengths() {
        assert_eq!(HEADER_LEN, 8);
        assert_eq!(MOVEMENT_LEN, 8 + 16 + 8 + 1);
        assert_eq!(PROP_FIXED_LEN, 8 + 16 + 1);
        assert_eq!(CIRCLE_LEN, 12);
        assert_eq!(VERTEX_LEN, 8);
        let fixed: Vec<_> = [
            Form::Auth,
            Form::AuthOkTimestamp,
            Form::AuthOk,
            Form::Ping,
            Form::PingSeq,
            Form::Pong,
            Form::PongSeq,
            Form::MoveOp,
            Form::MoveEvent,
            Form::PropCircle,
            Form::PropPolygon,
            Form::Msg,
            Form::MsgAck,
            Form::Close,
        ]
        .iter()
        .map(|&f| fixed_len(f))
        .collect();
        assert_eq!(fixed, [0, 8, 34, 0, 1, 8, 9, 34, 35, 37, 27, 10, 6, 0]);
        assert_eq!((PROP_FIXED_LEN, PROP_SHAPE_TYPE), (25, 24));
        assert_eq!(
            (AUTH_OK_NAME_LEN, AUTH_OK_NAME, MSG_FIXED_LEN, MSG_ACK_LEN),
            (33, 34, 10, 6)
        );
    }

    /// A packet's text needs a JSON escape only in its pieces from the
    /// wire (`Text::write_json` tells JSON Lines to search from the first
    /// of those, AUTH_OK's name): the names of the types (its token) and
    /// every piece the layout writes around a value need none.
    #[test]
    fn fixed_texts_need_no_json_escape() {
        use crate::proto::layout::{fixed_texts, json_plain};
        for t in PacketType::ALL {
            assert!(json_plain(t.name()), "{}", t.name());
        }
        for s in LAYOUTS.iter().flat_map(fixed_texts) {
            assert!(json_plain(s), "{s:?}");
        }
    }

    /// Every form's encoder writes as many bytes as the layout gives it, in
    /// both byte orders, and the decoder reads it back as that form and
    /// that payload.
    #[test]
    fn the_decoder_and_the_encoder_agree_with_the_layout() {
        use super::super::{
            ByteOrder, Dialect, MoveEvent, MoveOp, MsgAck, Packet, PacketRepr, PayloadRepr, Tag,
            VectorF,
        };
        let v = VectorF { x: 1.0, y: 2.0 };
        let all = [
            PayloadRepr::Auth,
            PayloadRepr::AuthOk {
                movement: Default::default(),
                name: b"ann".to_vec(),
            },
            PayloadRepr::AuthOkTimestamp { timestamp: 5 },
            PayloadRepr::Ping,
            PayloadRepr::PingSeq { seq: 3 },
            PayloadRepr::Pong { timestamp: 7 },
            PayloadRepr::PongSeq {
                seq: 3,
                timestamp: 7,
            },
            PayloadRepr::MoveOp(MoveOp::default()),
            PayloadRepr::MoveEvent(MoveEvent::default()),
            PayloadRepr::PropCircle {
                prop_id: 1,
                position: Default::default(),
                shape_type: Tag,
                center: v,
                radius: 3.0,
                render_data: vec![1, 2, 3],
            },
            PayloadRepr::PropPolygon {
                prop_id: 1,
                position: Default::default(),
                shape_type: Tag,
                vertices: vec![v, v, v],
                render_data: vec![9],
            },
            PayloadRepr::Msg {
                msg_id: 1,
                msg_len: 4,
                block_id: 0,
                block: vec![0; 4],
            },
            PayloadRepr::MsgAck(MsgAck {
                msg_id: 1,
                block_id: 0,
            }),
            PayloadRepr::Close,
        ];
        for p in all {
            for order in ByteOrder::ALL {
                let bytes = PacketRepr::new(0x1234, 0, p.clone())
                    .to_bytes_in(order)
                    .unwrap();
                assert_eq!(bytes.len(), HEADER_LEN + p.wire_len(), "{p:?}");
                let d = Packet::new_checked_in(&bytes, Dialect { order, ping: None }).unwrap();
                assert_eq!(d.payload().form(), p.form(), "{p:?}");
                assert_eq!(d.payload().to_owned_repr(), p, "{order}");
            }
        }
    }
}
