//! What every Battlegrounds row is made of: the registered fields
//! ([`FIELDS`], `fields!`), the primitives the rows read them as, the
//! header's row, which every packet starts with, and the entry a polygon's
//! vertices repeat. The payloads' rows are declared from these in
//! `layout.rs`, by way of the payload machinery (`payload.rs`), which
//! reads and writes the items declared here; the errors quote the
//! header's length from here too.

use super::types::PacketType;
use crate::proto::field::FieldDef;
use crate::proto::layout::{self as core, Int, Names, Prim, Show, entry, hidden, it, size};

/// A registered field by its index: a stable address in [`FIELDS`].
pub(super) fn field(f: F) -> &'static FieldDef {
    f.def()
}

core::fields! {
    /// Each field's index in [`FIELDS`].
    pub(super) enum F;
    /// Every Battlegrounds field, in wire order.
    pub static FIELDS;
    HEADER = "bg.header", "header", Node, "The 8-byte packet header.";
    SESSION_ID = "bg.session_id", "session_id", Unsigned, "The session id the REST API gave (u32), read in the session's byte order and shown in hex as sent (0x1234); it compares as a number (bg.session_id == 4660 or == 0x1234).";
    BYTE_ORDER = "bg.byte_order", "byte_order", Enum, "The byte order the packet is read in, its session's: 0 big-endian (the reference's), 1 little-endian (the corpus's first form).";
    CHANNEL = "bg.channel", "channel", Enum, "0 command, 1 character movement, 2 environment sync.";
    OP = "bg.op", "op_code", Enum, "The op code; with the channel, the packet type.";
    VERSION = "bg.version", "version", Unsigned, "0 for every defined packet.";
    RESERVED = "bg.reserved", "reserved", Unsigned, "0; anything else is a violation.";
    PAYLOAD = "bg.payload", "payload", Node, "The payload, named by its packet type.";
    TIMESTAMP = "bg.timestamp", "timestamp", Signed, "The sender's timestamp (i64; the reference's u64 PONG and AUTH_OK timestamps read as i64).";
    PING_SEQ = "bg.ping.seq", "seq", Unsigned, "PING and PONG of the reference's form: the client's ping counter (u8, +1 per PING, wrapping).";
    CLOSE = "bg.close", "close", Bool, "CLOSE (channel 0, op 0x04): the sender ends the session (true on every CLOSE).";
    POSITION_X = "bg.position.x", "position.x", Float, "Position, x (double).";
    POSITION_Y = "bg.position.y", "position.y", Float, "Position, y (double).";
    FORWARD_X = "bg.forward.x", "forward.x", Float, "Forward unit vector, x (float).";
    FORWARD_Y = "bg.forward.y", "forward.y", Float, "Forward unit vector, y (float).";
    MOVEMENT_BITS = "bg.movement_bits", "movementBits", Bits, "Movement bits (u8).";
    NAME_LEN = "bg.name_len", "name_len", Unsigned, "AUTH_OK: the name's length.";
    NAME = "bg.name", "name", Text, "AUTH_OK: the character's name.";
    OP_SIG = "bg.move.op_sig", "op_sig", Unsigned, "The client's operation counter (u8, wrapping).";
    EVENT_SIG = "bg.move.event_sig", "event_sig", Unsigned, "The server's event counter (u8, wrapping).";
    PROP_ID = "bg.prop.id", "prop_id", Signed, "PROP: the prop's id (i64).";
    SHAPE_TYPE = "bg.prop.shape_type", "shape_type", Enum, "PROP: 0 circle, 1 polygon.";
    CENTER_X = "bg.prop.center.x", "center.x", Float, "PROP circle: center, x.";
    CENTER_Y = "bg.prop.center.y", "center.y", Float, "PROP circle: center, y.";
    RADIUS = "bg.prop.radius", "radius", Float, "PROP circle: radius.";
    VERTICES_LEN = "bg.prop.vertices_len", "vertices_len", Signed, "PROP polygon: the number of vertices (i16).";
    VERTEX = "bg.prop.vertex", "vertex", Node, "PROP polygon: one vertex.";
    VERTEX_X = "bg.prop.vertex.x", "x", Float, "A vertex, x.";
    VERTEX_Y = "bg.prop.vertex.y", "y", Float, "A vertex, y.";
    RENDER_DATA_LEN = "bg.prop.render_data_len", "render_data_len", Signed, "PROP: render data length (i16).";
    RENDER_DATA = "bg.prop.render_data", "render_data", Bytes, "PROP: render data.";
    MSG_ID = "bg.msg.id", "msg_id", Unsigned, "MSG and MSG_ACK: the message id (u32, from 1, wrapping).";
    MSG_LEN = "bg.msg.len", "msg_len", Unsigned, "MSG: the whole message's length.";
    MSG_BLOCK = "bg.msg.block", "block_id", Unsigned, "MSG and MSG_ACK: the block's index, from 0.";
    MSG_DATA = "bg.msg.data", "block", Bytes, "MSG: the block's bytes.";
}

/// Battlegrounds' items, entries and layouts.
pub(super) type Item = core::Item<F>;
pub(super) type Layout = core::Layout<F>;
pub(super) type Entry = core::Entry<F>;

/// The name of a channel.
pub const fn channel_name(channel: u8) -> Option<&'static str> {
    match channel {
        0 => Some("command"),
        1 => Some("movement"),
        2 => Some("environment"),
        _ => None,
    }
}

static CHANNEL_NAMES: Names = Names {
    name: |raw, _| match raw {
        0..=2 => channel_name(raw as u8),
        _ => None,
    },
    known: false,
    tree_named: true,
    text_named: false,
};

/// The op's name is its packet type's, by the channel before it (byte 4).
static OP_NAMES: Names = Names {
    name: |raw, b| match (b.get(4), u8::try_from(raw)) {
        (Some(&channel), Ok(op)) => match PacketType::from_wire(channel, op) {
            Some(t) => Some(t.name()),
            None => None,
        },
        _ => None,
    },
    known: false,
    tree_named: true,
    text_named: false,
};

static SHAPE_NAMES: Names = Names {
    name: |raw, _| Some(if raw == 0 { "circle" } else { "polygon" }),
    known: false,
    tree_named: true,
    text_named: false,
};

pub(super) const U8: Prim = Prim::Int(Int::U8, Show::Dec);
pub(super) const U16: Prim = Prim::Int(Int::U16, Show::Dec);
pub(super) const U32: Prim = Prim::Int(Int::U32, Show::Dec);
pub(super) const I64: Prim = Prim::Int(Int::I64, Show::Dec);
pub(super) const F32: Prim = Prim::F32;
pub(super) const F64: Prim = Prim::F64;
/// A u32 shown in hex as sent (the session id).
pub(super) const HEX32: Prim = Prim::Int(Int::U32, Show::Hex);
/// A byte shown in binary (the movement bits).
pub(super) const BITS8: Prim = Prim::Int(Int::U8, Show::Bits);
pub(super) const CHANNEL_BYTE: Prim = Prim::Int(Int::U8, Show::Enum(&CHANNEL_NAMES));
pub(super) const OP_BYTE: Prim = Prim::Int(Int::U8, Show::Enum(&OP_NAMES));
pub(super) const SHAPE_BYTE: Prim = Prim::Int(Int::U8, Show::Enum(&SHAPE_NAMES));

use F::*;

/// The packet header, from the start of the packet: the byte order it is
/// read in is a field of no bytes, placed at its start.
pub(super) const HEADER_ITEMS: &[Item] = &[
    it(SESSION_ID, HEX32, "session_id", " session="),
    hidden(BYTE_ORDER, Prim::Order, "byte_order"),
    it(CHANNEL, CHANNEL_BYTE, "channel", " ch="),
    hidden(OP, OP_BYTE, "op_code"),
    hidden(VERSION, U8, "version"),
    hidden(RESERVED, U8, "reserved"),
];

/// A polygon's vertices, after their count.
pub(super) const VERTEX_ENTRY: Entry = entry(
    VERTEX,
    &[hidden(VERTEX_X, F32, "x"), hidden(VERTEX_Y, F32, "y")],
);

/// Length of the header: `u32 session_id, u8 channel, u8 op_code, u8 version, u8 reserved`.
pub const HEADER_LEN: usize = size(HEADER_ITEMS);
/// One polygon vertex, a `VectorF`.
pub const VERTEX_LEN: usize = VERTEX_ENTRY.len;
