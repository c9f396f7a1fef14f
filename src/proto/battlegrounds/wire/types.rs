//! The numbers of the format: channels, the (channel, op) table,
//! the vector types, and little-endian reads that cannot panic.

use crate::proto::codec::{Shape, Wire};
use crate::proto::dissect::{Float, Out, WriteText};
use std::fmt;

/// The only version this module decodes: every packet of the specification is version 0.
pub const VERSION: u8 = 0;
/// The channels the specification defines: 0 command, 1 character movement,
/// 2 environment sync (reliable). MSG and MSG_ACK travel on any of them.
pub const CHANNELS: u8 = 3;
/// The command channel.
pub const CHANNEL_COMMAND: u8 = 0;
/// The character movement channel.
pub const CHANNEL_MOVEMENT: u8 = 1;
/// The environment sync channel (reliable).
pub const CHANNEL_ENVIRONMENT: u8 = 2;
/// MSG's op code, on any channel.
pub const OP_MSG: u8 = 0x10;
/// MSG_ACK's op code, on any channel.
pub const OP_MSG_ACK: u8 = 0x11;
/// Blocks a message may have at most (`block_id` is a u16).
pub const MAX_BLOCKS: u32 = 1 << 16;

/// The PING and PONG form a session uses: the specification's (empty PING,
/// PONG of an `i64` timestamp) or the reference's (PING of a `u8` seq, PONG of
/// that seq and a `u64` timestamp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PingForm {
    /// Empty PING, 8-byte PONG.
    Spec,
    /// 1-byte PING, 9-byte PONG.
    Seq,
}

/// How a session's packets are read: its byte order, and the PING/PONG form
/// its first PING showed (`None`: either, told apart by size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Dialect {
    pub order: ByteOrder,
    pub ping: Option<PingForm>,
}

impl Dialect {
    /// The corpus's form: little-endian, either PING form.
    pub const LITTLE: Dialect = Dialect {
        order: ByteOrder::Little,
        ping: None,
    };
    /// The reference's order: big-endian, either PING form.
    pub const BIG: Dialect = Dialect {
        order: ByteOrder::Big,
        ping: None,
    };
}

/// Which side sends a packet type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sender {
    Client,
    Server,
    Both,
}

/// A packet type: a known (channel, op_code) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PacketType {
    /// (0, 0x00), client -> server, empty.
    Auth,
    /// (0, 0x01), server -> client, the movement structure and a name.
    AuthOk,
    /// (0, 0x02), client -> server, empty.
    Ping,
    /// (0, 0x03), server -> client, a timestamp.
    Pong,
    /// (1, 0x00), client -> server.
    MoveOp,
    /// (1, 0x01), server -> client.
    MoveEvent,
    /// (2, 0x00), server -> client.
    Prop,
    /// (any, 0x10), both ways: one block of a message.
    Msg,
    /// (any, 0x11), both ways: the acknowledgement of one block.
    MsgAck,
    /// (0, 0x04), either side, empty: ends the session (the revised notes).
    Close,
}

impl PacketType {
    pub const COUNT: usize = 10;
    pub const ALL: [PacketType; PacketType::COUNT] = [
        PacketType::Auth,
        PacketType::AuthOk,
        PacketType::Ping,
        PacketType::Pong,
        PacketType::MoveOp,
        PacketType::MoveEvent,
        PacketType::Prop,
        PacketType::Msg,
        PacketType::MsgAck,
        PacketType::Close,
    ];

    /// The type of a (channel, op_code) pair; `None` for a pair the
    /// specification does not define (a channel above 2 included).
    pub const fn from_wire(channel: u8, op: u8) -> Option<PacketType> {
        if channel >= CHANNELS {
            return None;
        }
        Some(match (channel, op) {
            (_, OP_MSG) => PacketType::Msg,
            (_, OP_MSG_ACK) => PacketType::MsgAck,
            (0, 0x00) => PacketType::Auth,
            (0, 0x01) => PacketType::AuthOk,
            (0, 0x02) => PacketType::Ping,
            (0, 0x03) => PacketType::Pong,
            (0, 0x04) => PacketType::Close,
            (1, 0x00) => PacketType::MoveOp,
            (1, 0x01) => PacketType::MoveEvent,
            (2, 0x00) => PacketType::Prop,
            _ => return None,
        })
    }

    /// The op code.
    pub const fn op(self) -> u8 {
        match self {
            PacketType::Auth | PacketType::MoveOp | PacketType::Prop => 0x00,
            PacketType::AuthOk | PacketType::MoveEvent => 0x01,
            PacketType::Ping => 0x02,
            PacketType::Pong => 0x03,
            PacketType::Close => 0x04,
            PacketType::Msg => OP_MSG,
            PacketType::MsgAck => OP_MSG_ACK,
        }
    }

    /// The channel, for the types bound to one (MSG and MSG_ACK travel on any).
    pub const fn channel(self) -> Option<u8> {
        match self {
            PacketType::Auth
            | PacketType::AuthOk
            | PacketType::Ping
            | PacketType::Pong
            | PacketType::Close => Some(CHANNEL_COMMAND),
            PacketType::MoveOp | PacketType::MoveEvent => Some(CHANNEL_MOVEMENT),
            PacketType::Prop => Some(CHANNEL_ENVIRONMENT),
            PacketType::Msg | PacketType::MsgAck => None,
        }
    }

    /// The name the specification uses: `AUTH_OK`.
    pub const fn name(self) -> &'static str {
        match self {
            PacketType::Auth => "AUTH",
            PacketType::AuthOk => "AUTH_OK",
            PacketType::Ping => "PING",
            PacketType::Pong => "PONG",
            PacketType::MoveOp => "MOVE_OP",
            PacketType::MoveEvent => "MOVE_EVENT",
            PacketType::Prop => "PROP",
            PacketType::Msg => "MSG",
            PacketType::MsgAck => "MSG_ACK",
            PacketType::Close => "CLOSE",
        }
    }

    /// The counter ordinal, in `0..COUNT`.
    pub const fn ordinal(self) -> usize {
        self as usize
    }

    /// The type of an ordinal.
    pub const fn from_ordinal(i: usize) -> Option<PacketType> {
        if i < PacketType::COUNT {
            Some(PacketType::ALL[i])
        } else {
            None
        }
    }

    /// Who sends it.
    pub const fn sender(self) -> Sender {
        match self {
            PacketType::Auth | PacketType::Ping | PacketType::MoveOp => Sender::Client,
            PacketType::AuthOk | PacketType::Pong | PacketType::MoveEvent | PacketType::Prop => {
                Sender::Server
            }
            PacketType::Msg | PacketType::MsgAck | PacketType::Close => Sender::Both,
        }
    }
}

impl fmt::Display for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Two floats: `struct VectorF { float x; float y; }`, 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VectorF {
    pub x: f32,
    pub y: f32,
}

/// Two doubles: `struct VectorD { double x; double y; }`, 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VectorD {
    pub x: f64,
    pub y: f64,
}

impl VectorF {
    pub fn write(&self, order: ByteOrder, out: &mut Vec<u8>) {
        order.put_f32(out, self.x);
        order.put_f32(out, self.y);
    }
}

/// Two `f32` items.
impl Wire for VectorF {
    const SHAPE: &'static [Shape] = &[Shape::Float(4); 2];
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(b: &[u8], at: usize, order: ByteOrder) -> Self {
        let [x, y] = <[f32; 2]>::get(b, at, order);
        VectorF { x, y }
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put(&self, b: &mut [u8], at: usize, order: ByteOrder) {
        [self.x, self.y].put(b, at, order);
    }
}

/// Two `f64` items.
impl Wire for VectorD {
    const SHAPE: &'static [Shape] = &[Shape::Float(8); 2];
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(b: &[u8], at: usize, order: ByteOrder) -> Self {
        let [x, y] = <[f64; 2]>::get(b, at, order);
        VectorD { x, y }
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put(&self, b: &mut [u8], at: usize, order: ByteOrder) {
        [self.x, self.y].put(b, at, order);
    }
}

/// `(x, y)`, as `Display` writes it.
fn pair(f: &mut impl Out, x: impl Float, y: impl Float) -> fmt::Result {
    f.s("(")?;
    f.float(x)?;
    f.s(", ")?;
    f.float(y)?;
    f.s(")")
}

impl WriteText for VectorF {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        pair(f, self.x, self.y)
    }
}

impl WriteText for VectorD {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        pair(f, self.x, self.y)
    }
}

impl fmt::Display for VectorF {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

impl fmt::Display for VectorD {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

/// The byte order of every integer and float of a packet, header included.
/// The reference implementation sends big-endian (network order, the
/// default when nothing tells); the first notes and the corpus's earlier
/// `bg-*.pcap` little-endian. A session uses one. The shared layout's type,
/// with its reads and writes.
pub use crate::proto::layout::ByteOrder;

/// Battlegrounds' vectors in either order.
impl ByteOrder {
    pub(crate) fn vector_f(self, bytes: &[u8], offset: usize) -> Option<VectorF> {
        Some(VectorF {
            x: self.f32(bytes, offset)?,
            y: self.f32(bytes, offset.checked_add(4)?)?,
        })
    }
}

#[cfg(test)]
pub(crate) fn le_u16(bytes: &[u8], offset: usize) -> Option<u16> {
    ByteOrder::Little.u16(bytes, offset)
}

#[cfg(test)]
pub(crate) fn le_u32(bytes: &[u8], offset: usize) -> Option<u32> {
    ByteOrder::Little.u32(bytes, offset)
}

#[cfg(test)]
pub(crate) fn le_i16(bytes: &[u8], offset: usize) -> Option<i16> {
    ByteOrder::Little.i16(bytes, offset)
}

#[cfg(test)]
pub(crate) fn le_i64(bytes: &[u8], offset: usize) -> Option<i64> {
    ByteOrder::Little.i64(bytes, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_round_trips() {
        for t in PacketType::ALL {
            assert_eq!(PacketType::from_ordinal(t.ordinal()), Some(t));
            match t.channel() {
                Some(c) => assert_eq!(PacketType::from_wire(c, t.op()), Some(t)),
                None => {
                    for c in 0..CHANNELS {
                        assert_eq!(PacketType::from_wire(c, t.op()), Some(t));
                    }
                }
            }
        }
        assert_eq!(PacketType::from_wire(3, OP_MSG), None);
        assert_eq!(PacketType::from_wire(0, 0x04), Some(PacketType::Close));
        assert_eq!(PacketType::from_wire(0, 0x05), None);
        assert_eq!(PacketType::from_wire(2, 0x01), None);
        assert_eq!(PacketType::from_ordinal(PacketType::COUNT), None);
    }

    #[test]
    fn reads_are_little_endian_and_never_panic() {
        let b = [0x01, 0x02, 0x03, 0x04, 0xff];
        assert_eq!(le_u16(&b, 0), Some(0x0201));
        assert_eq!(le_u32(&b, 0), Some(0x0403_0201));
        assert_eq!(le_i16(&b, 3), Some(i16::from_le_bytes([0x04, 0xff])));
        assert_eq!(le_u32(&b, 2), None);
        assert_eq!(le_u32(&b, usize::MAX), None);
        assert_eq!(le_i64(&b, 0), None);
    }
}
