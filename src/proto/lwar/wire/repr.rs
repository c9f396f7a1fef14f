//! Owned representations that encode back to bytes: what the simulator and the
//! tests build packets from.

use super::entries::ORDER;
use super::error::DecodeError;
use super::message::{Message, MessageRepr};
use super::packet::{Header, Packet};
use super::types::HEADER_LEN;
use crate::proto::codec::Wire;

impl MessageRepr {
    /// Appends the message's wire bytes, header included, each field at
    /// its row's offset (where the decoder reads it), a text's length and
    /// an entry count where the row puts them (`messages!`). A text or a
    /// list longer than its length or count can say (255) cannot be
    /// encoded: refused loudly in debug builds.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.wire_len(), 0);
        let Some(b) = out.get_mut(start..) else {
            return;
        };
        debug_assert!(self.count() <= u8::MAX as usize, "{} entries", self.count());
        self.msg_type().id().put(b, 0, ORDER);
        self.write(b);
    }
}

impl From<&Message<'_>> for MessageRepr {
    fn from(m: &Message<'_>) -> Self {
        m.to_owned_repr()
    }
}

/// An owned packet: header and messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PacketRepr {
    pub header: Header,
    pub messages: Vec<MessageRepr>,
}

impl PacketRepr {
    /// Decodes a whole packet, failing on the first error.
    pub fn parse(bytes: &[u8]) -> Result<Self, DecodeError> {
        let packet = Packet::new_checked(bytes)?;
        let messages = packet
            .messages()
            .map(|m| m.map(|view| MessageRepr::from(&view.message)))
            .collect::<Result<_, _>>()?;
        Ok(PacketRepr {
            header: packet.header(),
            messages,
        })
    }

    /// The number of bytes [`PacketRepr::emit_into`] writes.
    pub fn wire_len(&self) -> usize {
        HEADER_LEN
            + self
                .messages
                .iter()
                .map(MessageRepr::wire_len)
                .sum::<usize>()
    }

    /// Appends the packet's wire bytes. No size limit is applied: use
    /// [`super::PacketBuilder`] to fill packets as the specification says.
    pub fn emit_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.header.to_bytes());
        for m in &self.messages {
            m.emit(out);
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.wire_len());
        self.emit_into(&mut out);
        out
    }
}
