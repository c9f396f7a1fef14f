//! Owned representations that encode back to bytes: what tests (and a
//! simulator) build packets from.

use super::defs::HEADER_LEN;
use super::error::{DecodeError, EmitError};
use super::layout::{MSG_FIXED_LEN, PayloadOf};
use super::packet::{Header, Packet, Payload};
use super::payload::Owned;
use super::types::{ByteOrder, Dialect};

/// An owned payload, that encodes back to bytes: the declaration's enum
/// ([`PayloadOf`], `layout.rs`) over [`Owned`] parts (names are raw bytes,
/// so that a test can build invalid UTF-8 on purpose). Its encoder
/// (`emit_in`) and length (`wire_len`) come from the declaration.
pub type PayloadRepr = PayloadOf<Owned>;

impl PayloadRepr {
    /// Appends the payload's wire bytes, little-endian: `emit_in`.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), EmitError> {
        self.emit_in(ByteOrder::Little, out)
    }
}

impl From<&Payload<'_>> for PayloadRepr {
    fn from(p: &Payload<'_>) -> Self {
        p.to_owned_repr()
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
    use super::super::{Movement, Part};
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
        // The maxima are the length fields' widths (an i16 count and
        // length), checked in wire order before anything is written.
        let polygon = |vertices: usize, render: usize| PayloadRepr::PropPolygon {
            prop_id: 1,
            position: Default::default(),
            shape_type: super::super::Tag,
            vertices: vec![Default::default(); vertices],
            render_data: vec![0; render],
        };
        let too_long = |part, len| {
            Err(EmitError::TooLong {
                part,
                len,
                max: 32767,
            })
        };
        assert_eq!(
            polygon(32768, 32768).emit(&mut out),
            too_long(Part::Vertices, 32768)
        );
        assert_eq!(
            polygon(32767, 32768).emit(&mut out),
            too_long(Part::RenderData, 32768)
        );
        assert_eq!(out, vec![0xee]);
        assert!(polygon(32767, 32767).emit(&mut out).is_ok());
        assert_eq!(out.len(), 1 + 25 + 2 + 32767 * 8 + 2 + 32767);
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
