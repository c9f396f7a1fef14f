//! The registered fields ([`FIELDS`]) and the typed walk of a packet in wire
//! order ([`walk`]): what the dissector, the filter and field output read.

use super::error::DecodeError;
use super::packet::{Header, Movement, Msg, MsgAck, Packet, Payload, Prop, Shape};
use super::types::{
    ByteOrder, Dialect, HEADER_LEN, MOVEMENT_LEN, PROP_FIXED_LEN, PacketType, VERTEX_LEN,
};
use crate::proto::field::{Field, FieldDef, FieldSink, FieldType, Value};

macro_rules! fields {
    ($( $id:ident = $name:literal, $label:literal, $ty:ident, $doc:literal; )*) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        enum Ix { $( $id, )* Count }

        /// Every Battlegrounds field, in wire order.
        pub static FIELDS: [FieldDef; Ix::Count as usize] = [ $( FieldDef {
            name: $name,
            label: $label,
            ty: FieldType::$ty,
            doc: $doc,
        }, )* ];

        /// The registered field definitions, by name.
        pub mod defs {
            use crate::proto::field::FieldDef;
            $( pub static $id: &FieldDef = &super::FIELDS[super::Ix::$id as usize]; )*
        }
    };
}

fields! {
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

/// The name of a channel.
pub const fn channel_name(channel: u8) -> Option<&'static str> {
    match channel {
        0 => Some("command"),
        1 => Some("movement"),
        2 => Some("environment"),
        _ => None,
    }
}

struct Walk<'s> {
    sink: &'s mut dyn FieldSink,
}

impl Walk<'_> {
    fn field(&mut self, def: &'static FieldDef, offset: usize, len: usize, value: Value<'_>) {
        self.sink.field(Field {
            def,
            index: None,
            offset,
            len,
            value,
        });
    }

    fn movement(&mut self, m: &Movement, at: usize) {
        self.field(defs::TIMESTAMP, at, 8, Value::Signed(m.timestamp));
        self.field(defs::POSITION_X, at + 8, 8, Value::Float(m.position.x));
        self.field(defs::POSITION_Y, at + 16, 8, Value::Float(m.position.y));
        self.field(
            defs::FORWARD_X,
            at + 24,
            4,
            Value::Float(f64::from(m.forward.x)),
        );
        self.field(
            defs::FORWARD_Y,
            at + 28,
            4,
            Value::Float(f64::from(m.forward.y)),
        );
        self.field(
            defs::MOVEMENT_BITS,
            at + 32,
            1,
            Value::Bits {
                raw: u64::from(m.movement_bits),
                width: 8,
            },
        );
    }
}

/// Walks the header's fields (a node and its children), `order` the byte
/// order it was read in.
pub fn walk_header(h: &Header, order: ByteOrder, sink: &mut dyn FieldSink) {
    let mut w = Walk { sink };
    w.sink.enter(Field {
        def: defs::HEADER,
        index: None,
        offset: 0,
        len: HEADER_LEN,
        value: Value::None,
    });
    w.field(defs::SESSION_ID, 0, 4, Value::Hex(u64::from(h.session_id)));
    w.field(
        defs::BYTE_ORDER,
        0,
        0,
        Value::Enum {
            raw: u64::from(order == ByteOrder::Little),
            name: Some(order.name()),
        },
    );
    w.field(
        defs::CHANNEL,
        4,
        1,
        Value::Enum {
            raw: u64::from(h.channel),
            name: channel_name(h.channel),
        },
    );
    let t = PacketType::from_wire(h.channel, h.op);
    w.field(
        defs::OP,
        5,
        1,
        Value::Enum {
            raw: u64::from(h.op),
            name: t.map(PacketType::name),
        },
    );
    w.field(defs::VERSION, 6, 1, Value::Unsigned(u64::from(h.version)));
    w.field(defs::RESERVED, 7, 1, Value::Unsigned(u64::from(h.reserved)));
    w.sink.leave();
}

/// Walks a little-endian packet's typed fields: [`walk_in`].
pub fn walk(bytes: &[u8], sink: &mut dyn FieldSink) -> Result<(), DecodeError> {
    walk_in(bytes, Dialect::LITTLE, sink)
}

/// Walks a packet's typed fields in wire order: the header, then the payload
/// (a node and its fields); then why the rest does not decode, if it does not.
/// Allocates nothing.
pub fn walk_in(
    bytes: &[u8],
    dialect: Dialect,
    sink: &mut dyn FieldSink,
) -> Result<(), DecodeError> {
    let header = Header::parse_in(bytes, dialect.order)?;
    if wants(sink, &FIELDS[..Ix::PAYLOAD as usize]) {
        walk_header(&header, dialect.order, sink);
    }
    let p = Packet::new_checked_in(bytes, dialect)?;
    if wants(sink, &FIELDS[Ix::PAYLOAD as usize..]) {
        walk_payload(&p, sink);
    }
    Ok(())
}

/// Whether `sink` takes a field of `group`, the header's fields or the
/// payload's: [`FieldSink::wants_any`].
fn wants(sink: &mut dyn FieldSink, group: &'static [FieldDef]) -> bool {
    sink.wants_any(crate::proto::field::group_key(group), &|each| {
        group.iter().for_each(&mut *each);
    })
}

/// Walks a decoded packet's payload.
pub fn walk_payload(p: &Packet<'_>, sink: &mut dyn FieldSink) {
    let mut w = Walk { sink };
    let at = HEADER_LEN;
    w.sink.enter(Field {
        def: defs::PAYLOAD,
        index: None,
        offset: at,
        len: p.len() - HEADER_LEN,
        value: Value::Enum {
            raw: p.packet_type().ordinal() as u64,
            name: Some(p.packet_type().name()),
        },
    });
    match p.payload() {
        Payload::Auth | Payload::Ping { seq: None } => {}
        Payload::Close => w.field(defs::CLOSE, at, 0, Value::Bool(true)),
        Payload::Ping { seq: Some(seq) } => {
            w.field(defs::PING_SEQ, at, 1, Value::Unsigned(u64::from(seq)))
        }
        Payload::Pong {
            seq: None,
            timestamp,
        } => w.field(defs::TIMESTAMP, at, 8, Value::Signed(timestamp)),
        Payload::Pong {
            seq: Some(seq),
            timestamp,
        } => {
            w.field(defs::PING_SEQ, at, 1, Value::Unsigned(u64::from(seq)));
            w.field(defs::TIMESTAMP, at + 1, 8, Value::Signed(timestamp));
        }
        Payload::AuthOk(a) if !a.full => {
            w.field(defs::TIMESTAMP, at, 8, Value::Signed(a.movement.timestamp));
        }
        Payload::AuthOk(a) => {
            w.movement(&a.movement, at);
            let n = at + MOVEMENT_LEN;
            w.field(defs::NAME_LEN, n, 1, Value::Unsigned(a.name.len() as u64));
            w.field(defs::NAME, n + 1, a.name.len(), Value::Text(a.name));
        }
        Payload::MoveOp(m) => {
            w.movement(&m.movement, at);
            let n = at + MOVEMENT_LEN;
            w.field(defs::OP_SIG, n, 1, Value::Unsigned(u64::from(m.op_sig)));
        }
        Payload::MoveEvent(m) => {
            w.movement(&m.movement, at);
            let n = at + MOVEMENT_LEN;
            w.field(defs::OP_SIG, n, 1, Value::Unsigned(u64::from(m.op_sig)));
            w.field(
                defs::EVENT_SIG,
                n + 1,
                1,
                Value::Unsigned(u64::from(m.event_sig)),
            );
        }
        Payload::Prop(prop) => w.prop(&prop, at),
        Payload::Msg(m) => w.msg(&m, at),
        Payload::MsgAck(a) => w.msg_ack(&a, at),
    }
    w.sink.leave();
}

impl Walk<'_> {
    /// A PROP's fields from `at`: id, position, shape, render data.
    fn prop(&mut self, prop: &Prop<'_>, at: usize) {
        self.field(defs::PROP_ID, at, 8, Value::Signed(prop.prop_id));
        self.field(defs::POSITION_X, at + 8, 8, Value::Float(prop.position.x));
        self.field(defs::POSITION_Y, at + 16, 8, Value::Float(prop.position.y));
        let s = at + PROP_FIXED_LEN - 1;
        let shape_type = prop.shape.shape_type();
        self.field(
            defs::SHAPE_TYPE,
            s,
            1,
            Value::Enum {
                raw: u64::from(shape_type),
                name: Some(if shape_type == 0 { "circle" } else { "polygon" }),
            },
        );
        let end = self.shape(&prop.shape, s + 1);
        let n = prop.render_data.len();
        self.field(defs::RENDER_DATA_LEN, end, 2, Value::Signed(n as i64));
        self.field(
            defs::RENDER_DATA,
            end + 2,
            n,
            Value::Bytes(prop.render_data),
        );
    }

    /// A shape's fields from `at`; the offset after them.
    fn shape(&mut self, shape: &Shape<'_>, at: usize) -> usize {
        let mut end = at;
        match *shape {
            Shape::Circle { center, radius } => {
                self.field(defs::CENTER_X, end, 4, Value::Float(f64::from(center.x)));
                self.field(
                    defs::CENTER_Y,
                    end + 4,
                    4,
                    Value::Float(f64::from(center.y)),
                );
                self.field(defs::RADIUS, end + 8, 4, Value::Float(f64::from(radius)));
                end += 12;
            }
            Shape::Polygon(vertices) => {
                self.field(
                    defs::VERTICES_LEN,
                    end,
                    2,
                    Value::Signed(vertices.len() as i64),
                );
                end += 2;
                for (i, v) in vertices.iter().enumerate() {
                    self.sink.enter(Field {
                        def: defs::VERTEX,
                        index: Some(i as u32),
                        offset: end,
                        len: VERTEX_LEN,
                        value: Value::None,
                    });
                    self.field(defs::VERTEX_X, end, 4, Value::Float(f64::from(v.x)));
                    self.field(defs::VERTEX_Y, end + 4, 4, Value::Float(f64::from(v.y)));
                    self.sink.leave();
                    end += VERTEX_LEN;
                }
            }
        }
        end
    }

    /// A MSG block's fields from `at`.
    fn msg(&mut self, m: &Msg<'_>, at: usize) {
        self.field(defs::MSG_ID, at, 4, Value::Unsigned(u64::from(m.msg_id)));
        self.field(
            defs::MSG_LEN,
            at + 4,
            4,
            Value::Unsigned(u64::from(m.msg_len)),
        );
        self.field(
            defs::MSG_BLOCK,
            at + 8,
            2,
            Value::Unsigned(u64::from(m.block_id)),
        );
        self.field(
            defs::MSG_DATA,
            at + 10,
            m.block.len(),
            Value::Bytes(m.block),
        );
    }

    /// A MSG_ACK's fields from `at`.
    fn msg_ack(&mut self, a: &MsgAck, at: usize) {
        self.field(defs::MSG_ID, at, 4, Value::Unsigned(u64::from(a.msg_id)));
        self.field(
            defs::MSG_BLOCK,
            at + 4,
            2,
            Value::Unsigned(u64::from(a.block_id)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
