//! The owned [`PacketRepr`]: a whole packet as a value, parsed from bytes
//! through the checked view ([`Packet`]) and emitted through the messages'
//! own writer (each at its row's offsets, `message.rs`).

use super::error::DecodeError;
use super::message::*;
use super::packet::Packet;
use super::types::{HEADER_LEN, MAGIC, PacketType};
use crate::proto::codec::{Record, max_count};

/// Why a representation cannot be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// `entityCount` is a `u8`.
    #[error("a WorldSnapshot holds at most 255 entities, not {count}")]
    TooManyEntities { count: usize },
    /// The buffer is smaller than the packet.
    #[error("the packet needs {needed} bytes, the buffer has {available}")]
    BufferTooSmall { needed: usize, available: usize },
}

/// An owned packet: the header's numbers and the message (its type is the
/// message's).
#[derive(Debug, Clone, PartialEq)]
pub struct PacketRepr {
    pub seq: u16,
    pub ack_bits: u32,
    pub message: MessageRepr,
}

impl PacketRepr {
    pub fn new(seq: u16, ack_bits: u32, message: MessageRepr) -> Self {
        PacketRepr {
            seq,
            ack_bits,
            message,
        }
    }

    /// Parses a whole packet: the same checks as [`Packet::new_checked`].
    pub fn parse(bytes: &[u8]) -> Result<PacketRepr, DecodeError> {
        let p = Packet::new_checked(bytes)?;
        Ok(PacketRepr {
            seq: p.seq(),
            ack_bits: p.ack_bits(),
            message: p.message().to_owned_repr(),
        })
    }

    pub const fn packet_type(&self) -> PacketType {
        self.message.packet_type()
    }

    /// The length of the encoded packet, header included.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.message.wire_len()
    }

    /// Encodes the packet at the start of `buf`; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        emit_packet(self.seq, self.ack_bits, &self.message, buf)
    }

    /// The encoded packet.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EmitError> {
        let mut buf = vec![0u8; self.buffer_len()];
        let n = self.emit(&mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }
}

/// Encodes a packet of `message` (owned or borrowed) at the start of `buf`.
pub fn emit_packet<E: EntityList>(
    seq: u16,
    ack_bits: u32,
    message: &Message<E>,
    buf: &mut [u8],
) -> Result<usize, EmitError> {
    let count = message.count();
    if count > max_count(message.packet_type().layout()) {
        return Err(EmitError::TooManyEntities { count });
    }
    let needed = HEADER_LEN + message.wire_len();
    if buf.len() < needed {
        return Err(EmitError::BufferTooSmall {
            needed,
            available: buf.len(),
        });
    }
    let (header, payload) = buf.split_at_mut(HEADER_LEN);
    let header_fields = WireHeader {
        magic: MAGIC,
        packet_type: message.packet_type().id(),
        seq,
        ack_bits,
    };
    header_fields.write(header, ORDER);
    message.write(payload.get_mut(..needed - HEADER_LEN).unwrap_or_default());
    Ok(needed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_entities_and_small_buffers_are_errors() {
        let snap = PacketRepr::new(
            0,
            0,
            Message::WorldSnapshot(WorldSnapshot {
                tick: 1,
                entities: vec![EntityState::default(); 256],
            }),
        );
        assert_eq!(
            snap.to_bytes(),
            Err(EmitError::TooManyEntities { count: 256 })
        );
        let hb = PacketRepr::new(0, 0, Message::Heartbeat(Heartbeat { timestamp: 1 }));
        let mut small = [0u8; 15];
        assert_eq!(
            hb.emit(&mut small),
            Err(EmitError::BufferTooSmall {
                needed: 16,
                available: 15
            })
        );
    }
}
