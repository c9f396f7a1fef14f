//! Owned representations that encode back to bytes: what tests (and a
//! simulator) build packets from.

use super::error::{DecodeError, EmitError, Part};
use super::layout::{
    Circle, Form, HEADER_LEN, MSG_FIXED_LEN, MoveEvent, MoveOp, Movement, MsgAck, MsgHead, PropHead,
};
use super::packet::{Header, Packet, Payload, Shape};
use super::types::{ByteOrder, Dialect, PacketType, VectorD, VectorF};
use crate::proto::codec::Record;

/// An owned PROP shape.
#[derive(Debug, Clone, PartialEq)]
pub enum ShapeRepr {
    Circle { center: VectorF, radius: f32 },
    Polygon(Vec<VectorF>),
}

/// An owned payload. Names are raw bytes, so that a test can build invalid
/// UTF-8 on purpose.
#[derive(Debug, Clone, PartialEq)]
pub enum PayloadRepr {
    Auth,
    AuthOk {
        movement: Movement,
        name: Vec<u8>,
    },
    Ping,
    Pong {
        timestamp: i64,
    },
    MoveOp(MoveOp),
    MoveEvent(MoveEvent),
    Prop {
        prop_id: i64,
        position: VectorD,
        shape: ShapeRepr,
        render_data: Vec<u8>,
    },
    Msg {
        msg_id: u32,
        msg_len: u32,
        block_id: u16,
        block: Vec<u8>,
    },
    MsgAck(MsgAck),
    /// The reference's PING: a `u8` ping counter.
    PingSeq {
        seq: u8,
    },
    /// The reference's PONG: the PING's seq, then a `u64` timestamp.
    PongSeq {
        seq: u8,
        timestamp: u64,
    },
    /// The reference's AUTH_OK: a `u64` timestamp only.
    AuthOkTimestamp {
        timestamp: u64,
    },
    /// CLOSE, empty, from either side.
    Close,
}

impl PayloadRepr {
    pub fn packet_type(&self) -> PacketType {
        match self {
            PayloadRepr::Auth => PacketType::Auth,
            PayloadRepr::AuthOk { .. } | PayloadRepr::AuthOkTimestamp { .. } => PacketType::AuthOk,
            PayloadRepr::Ping | PayloadRepr::PingSeq { .. } => PacketType::Ping,
            PayloadRepr::Pong { .. } | PayloadRepr::PongSeq { .. } => PacketType::Pong,
            PayloadRepr::Close => PacketType::Close,
            PayloadRepr::MoveOp(_) => PacketType::MoveOp,
            PayloadRepr::MoveEvent(_) => PacketType::MoveEvent,
            PayloadRepr::Prop { .. } => PacketType::Prop,
            PayloadRepr::Msg { .. } => PacketType::Msg,
            PayloadRepr::MsgAck(_) => PacketType::MsgAck,
        }
    }

    /// Its form: the layout's row it is written by.
    pub(super) fn form(&self) -> Form {
        match self {
            PayloadRepr::Auth => Form::Auth,
            PayloadRepr::AuthOk { .. } => Form::AuthOk,
            PayloadRepr::AuthOkTimestamp { .. } => Form::AuthOkShort,
            PayloadRepr::Ping => Form::Ping,
            PayloadRepr::PingSeq { .. } => Form::PingSeq,
            PayloadRepr::Pong { .. } => Form::Pong,
            PayloadRepr::PongSeq { .. } => Form::PongSeq,
            PayloadRepr::MoveOp(_) => Form::MoveOp,
            PayloadRepr::MoveEvent(_) => Form::MoveEvent,
            PayloadRepr::Prop {
                shape: ShapeRepr::Circle { .. },
                ..
            } => Form::PropCircle,
            PayloadRepr::Prop {
                shape: ShapeRepr::Polygon(_),
                ..
            } => Form::PropPolygon,
            PayloadRepr::Msg { .. } => Form::Msg,
            PayloadRepr::MsgAck(_) => Form::MsgAck,
            PayloadRepr::Close => Form::Close,
        }
    }

    /// The number of bytes [`PayloadRepr::emit`] writes: its form's
    /// layout, with its entries and variable bytes.
    pub fn wire_len(&self) -> usize {
        let (entries, bytes) = match self {
            PayloadRepr::AuthOk { name, .. } => (0, name.len()),
            PayloadRepr::Prop {
                shape, render_data, ..
            } => match shape {
                ShapeRepr::Circle { .. } => (0, render_data.len()),
                ShapeRepr::Polygon(v) => (v.len(), render_data.len()),
            },
            PayloadRepr::Msg { block, .. } => (0, block.len()),
            _ => (0, 0),
        };
        self.form().wire_len(entries, bytes)
    }

    /// Appends the payload's wire bytes, little-endian; lengths that do not
    /// fit their field (a name over 255 bytes, more than 32767 vertices or
    /// render bytes) are refused before anything is written.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), EmitError> {
        self.emit_in(ByteOrder::Little, out)
    }

    /// [`PayloadRepr::emit`] in `order`.
    pub fn emit_in(&self, order: ByteOrder, out: &mut Vec<u8>) -> Result<(), EmitError> {
        let o = order;
        let too_long = |part, len: usize, max: usize| {
            if len > max {
                Err(EmitError::TooLong { part, len, max })
            } else {
                Ok(())
            }
        };
        let i16_max = i16::MAX as usize;
        match self {
            PayloadRepr::AuthOk { name, .. } => too_long(Part::Name, name.len(), 255)?,
            PayloadRepr::Prop {
                shape, render_data, ..
            } => {
                if let ShapeRepr::Polygon(v) = shape {
                    too_long(Part::Vertices, v.len(), i16_max)?;
                }
                too_long(Part::RenderData, render_data.len(), i16_max)?;
            }
            _ => {}
        }
        match self {
            PayloadRepr::Auth | PayloadRepr::Ping | PayloadRepr::Close => {}
            PayloadRepr::PingSeq { seq } => out.push(*seq),
            PayloadRepr::PongSeq { seq, timestamp } => {
                out.push(*seq);
                o.put_u64(out, *timestamp);
            }
            PayloadRepr::AuthOkTimestamp { timestamp } => o.put_u64(out, *timestamp),
            PayloadRepr::AuthOk { movement, name } => {
                movement.append(out, o);
                out.push(name.len() as u8);
                out.extend_from_slice(name);
            }
            PayloadRepr::Pong { timestamp } => o.put_i64(out, *timestamp),
            PayloadRepr::MoveOp(m) => m.append(out, o),
            PayloadRepr::MoveEvent(m) => m.append(out, o),
            PayloadRepr::Prop {
                prop_id,
                position,
                shape,
                render_data,
            } => {
                let head = PropHead {
                    prop_id: *prop_id,
                    position: *position,
                    shape_type: match shape {
                        ShapeRepr::Circle { .. } => 0,
                        ShapeRepr::Polygon(_) => 1,
                    },
                };
                head.append(out, o);
                match shape {
                    ShapeRepr::Circle { center, radius } => Circle {
                        center: *center,
                        radius: *radius,
                    }
                    .append(out, o),
                    ShapeRepr::Polygon(vertices) => {
                        o.put_i16(out, vertices.len() as i16);
                        for v in vertices {
                            v.write(o, out);
                        }
                    }
                }
                o.put_i16(out, render_data.len() as i16);
                out.extend_from_slice(render_data);
            }
            PayloadRepr::Msg {
                msg_id,
                msg_len,
                block_id,
                block,
            } => {
                let head = MsgHead {
                    msg_id: *msg_id,
                    msg_len: *msg_len,
                    block_id: *block_id,
                };
                head.append(out, o);
                out.extend_from_slice(block);
            }
            PayloadRepr::MsgAck(a) => a.append(out, o),
        }
        Ok(())
    }
}

impl From<&Payload<'_>> for PayloadRepr {
    fn from(p: &Payload<'_>) -> Self {
        match *p {
            Payload::Auth => PayloadRepr::Auth,
            Payload::Close => PayloadRepr::Close,
            Payload::AuthOk(a) if !a.full => PayloadRepr::AuthOkTimestamp {
                timestamp: a.movement.timestamp as u64,
            },
            Payload::AuthOk(a) => PayloadRepr::AuthOk {
                movement: a.movement,
                name: a.name.to_vec(),
            },
            Payload::Ping { seq: None } => PayloadRepr::Ping,
            Payload::Ping { seq: Some(seq) } => PayloadRepr::PingSeq { seq },
            Payload::Pong {
                seq: Some(seq),
                timestamp,
            } => PayloadRepr::PongSeq {
                seq,
                timestamp: timestamp as u64,
            },
            Payload::Pong {
                seq: None,
                timestamp,
            } => PayloadRepr::Pong { timestamp },
            Payload::MoveOp(m) => PayloadRepr::MoveOp(m),
            Payload::MoveEvent(m) => PayloadRepr::MoveEvent(m),
            Payload::Prop(p) => PayloadRepr::Prop {
                prop_id: p.prop_id,
                position: p.position,
                shape: match p.shape {
                    Shape::Circle { center, radius } => ShapeRepr::Circle { center, radius },
                    Shape::Polygon(v) => ShapeRepr::Polygon(v.iter().collect()),
                },
                render_data: p.render_data.to_vec(),
            },
            Payload::Msg(m) => PayloadRepr::Msg {
                msg_id: m.msg_id,
                msg_len: m.msg_len,
                block_id: m.block_id,
                block: m.block.to_vec(),
            },
            Payload::MsgAck(a) => PayloadRepr::MsgAck(a),
        }
    }
}

/// An owned packet: a header and its payload. The header's channel and op are
/// written as they are: keep them matching the payload (use
/// [`PacketRepr::new`]) unless a test wants otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct PacketRepr {
    pub header: Header,
    pub payload: PayloadRepr,
}

impl PacketRepr {
    /// A packet of version 0, reserved 0, on `channel` for MSG and MSG_ACK (the
    /// other types have their own channel, and `channel` is ignored).
    pub fn new(session_id: u32, channel: u8, payload: PayloadRepr) -> Self {
        PacketRepr {
            header: Header::new(session_id, channel, payload.packet_type()),
            payload,
        }
    }

    /// Decodes a whole little-endian packet.
    pub fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        PacketRepr::parse_in(bytes, Dialect::LITTLE)
    }

    /// Decodes a whole packet of `dialect`.
    pub fn parse_in(bytes: &[u8], dialect: Dialect) -> Result<Self, DecodeError> {
        let p = Packet::new_checked_in(bytes, dialect)?;
        Ok(PacketRepr {
            header: p.header(),
            payload: PayloadRepr::from(&p.payload()),
        })
    }

    /// The number of bytes [`PacketRepr::emit`] writes.
    pub fn wire_len(&self) -> usize {
        HEADER_LEN + self.payload.wire_len()
    }

    /// Appends the packet's wire bytes, little-endian.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), EmitError> {
        self.emit_in(ByteOrder::Little, out)
    }

    /// Appends the packet's wire bytes in `order`.
    pub fn emit_in(&self, order: ByteOrder, out: &mut Vec<u8>) -> Result<(), EmitError> {
        let start = out.len();
        out.extend_from_slice(&self.header.to_bytes_in(order));
        self.payload
            .emit_in(order, out)
            .inspect_err(|_| out.truncate(start))
    }

    /// The little-endian wire bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EmitError> {
        self.to_bytes_in(ByteOrder::Little)
    }

    /// The wire bytes in `order`.
    pub fn to_bytes_in(&self, order: ByteOrder) -> Result<Vec<u8>, EmitError> {
        let mut out = Vec::with_capacity(self.wire_len());
        self.emit_in(order, &mut out)?;
        Ok(out)
    }

    /// The MSG packets that carry `message` (a whole packet's bytes) as message
    /// `msg_id` on `channel`, in blocks of `block_size` bytes (the last may be
    /// shorter; at least one block, even for an empty message).
    pub fn split_message(
        session_id: u32,
        channel: u8,
        msg_id: u32,
        message: &[u8],
        block_size: usize,
    ) -> Vec<PacketRepr> {
        let block_size = block_size.max(1);
        let msg_len = message.len() as u32;
        let mut chunks: Vec<&[u8]> = message.chunks(block_size).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        chunks
            .into_iter()
            .enumerate()
            .map(|(i, block)| {
                PacketRepr::new(
                    session_id,
                    channel,
                    PayloadRepr::Msg {
                        msg_id,
                        msg_len,
                        block_id: i as u16,
                        block: block.to_vec(),
                    },
                )
            })
            .collect()
    }
}

/// The bytes before a MSG's block: header and fixed part.
pub const MSG_BLOCK_OFFSET: usize = HEADER_LEN + MSG_FIXED_LEN;

/// A MOVE_OP whose numbers read differently in the two byte orders: what
/// the tests of the order's evidence and of the dissectors encode.
#[cfg(test)]
pub(crate) fn sample_move_op() -> PayloadRepr {
    PayloadRepr::MoveOp(super::MoveOp {
        movement: super::Movement {
            timestamp: 1250,
            position: super::VectorD { x: 12.5, y: -3.0 },
            forward: super::VectorF { x: 0.6, y: 0.8 },
            movement_bits: 3,
        },
        op_sig: 7,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_refuses_lengths_that_do_not_fit() {
        let p = PacketRepr::new(
            1,
            0,
            PayloadRepr::AuthOk {
                movement: Movement::default(),
                name: vec![b'a'; 256],
            },
        );
        let mut out = vec![0xee];
        assert_eq!(
            p.emit(&mut out),
            Err(EmitError::TooLong {
                part: Part::Name,
                len: 256,
                max: 255
            })
        );
        assert_eq!(out, vec![0xee]);
    }

    #[test]
    fn split_message_blocks() {
        let msg: Vec<u8> = (0..25).collect();
        let blocks = PacketRepr::split_message(7, 2, 1, &msg, 10);
        assert_eq!(blocks.len(), 3);
        let mut rebuilt = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            let PayloadRepr::Msg {
                block_id,
                msg_len,
                block,
                ..
            } = &b.payload
            else {
                panic!("not a MSG");
            };
            assert_eq!((*block_id as usize, *msg_len), (i, 25));
            rebuilt.extend_from_slice(block);
            assert_eq!(b.header.channel, 2);
        }
        assert_eq!(rebuilt, msg);
    }
}
