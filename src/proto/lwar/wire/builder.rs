//! Filling packets as the specification's delivery rules say: every queued reliable
//! message that fits, in order, then unreliable messages while room is left.

use super::message::MessageRepr;
use super::packet::Header;
use super::types::{HEADER_LEN, MAX_PACKET_SIZE};

/// Builds one packet at a time into a reusable buffer.
///
/// ```
/// use lwarscope::proto::lwar::wire::{Header, MessageRepr, PacketBuilder, Packet};
/// let mut b = PacketBuilder::new();
/// b.start(Header { ack: 0, timestamp: 0 });
/// let filled = b.fill(&[MessageRepr::Connect { seqno: 1, name: b"alice".to_vec() }], &[]);
/// assert_eq!(filled.reliable, 1);
/// let packet = Packet::new_checked(b.bytes()).unwrap();
/// assert_eq!(packet.messages().count(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct PacketBuilder {
    buf: Vec<u8>,
    limit: usize,
}

/// How many messages of each queue went into the packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Filled {
    /// The first `reliable` messages of the reliable queue.
    pub reliable: usize,
    /// How many unreliable messages were taken (those that did not fit are skipped).
    pub unreliable: usize,
}

impl Default for PacketBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl PacketBuilder {
    /// A builder for packets of at most 512 bytes.
    pub fn new() -> Self {
        Self::with_limit(MAX_PACKET_SIZE)
    }

    /// A builder with another size limit (at least the header). Only a normal
    /// packet's worth is reserved up front, whatever the limit.
    pub fn with_limit(limit: usize) -> Self {
        let limit = limit.max(HEADER_LEN);
        PacketBuilder {
            buf: Vec::with_capacity(limit.min(MAX_PACKET_SIZE)),
            limit,
        }
    }

    /// Starts a new packet with this header, forgetting the previous one.
    pub fn start(&mut self, header: Header) {
        self.buf.clear();
        self.buf.extend_from_slice(&header.to_bytes());
    }

    /// Bytes still free under the limit.
    pub fn remaining(&self) -> usize {
        self.limit.saturating_sub(self.buf.len())
    }

    /// Appends the message if it fits; says whether it did.
    pub fn try_push(&mut self, message: &MessageRepr) -> bool {
        if message.wire_len() > self.remaining() {
            return false;
        }
        message.emit(&mut self.buf);
        true
    }

    /// Puts in the reliable messages in order, stopping at the first that does not
    /// fit (the rest wait for the next packet: order matters), then every unreliable
    /// message that still fits.
    pub fn fill<'m>(
        &mut self,
        reliable: impl IntoIterator<Item = &'m MessageRepr>,
        unreliable: impl IntoIterator<Item = &'m MessageRepr>,
    ) -> Filled {
        let mut filled = Filled::default();
        for m in reliable {
            if !self.try_push(m) {
                break;
            }
            filled.reliable += 1;
        }
        for m in unreliable {
            if self.try_push(m) {
                filled.unreliable += 1;
            }
        }
        filled
    }

    /// The packet so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// True when nothing but the header has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.len() <= HEADER_LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::lwar::wire::{Id, UpdateEntry};

    fn chat(seqno: u32, len: usize) -> MessageRepr {
        MessageRepr::Chat {
            seqno,
            player: Id::new(0, 1),
            text: vec![b'a'; len],
        }
    }

    #[test]
    fn reliable_first_in_order_then_unreliable_that_fit() {
        let mut b = PacketBuilder::new();
        b.start(Header::default());
        // 12 + 210 + 210 = 432 bytes; the third chat (210) does not fit, so the
        // fourth (small) must wait too, keeping reliable order.
        let reliable = [chat(1, 200), chat(2, 200), chat(3, 200), chat(4, 1)];
        let big_update = MessageRepr::Update(vec![UpdateEntry::default(); 10]); // 112 bytes
        let small_update = MessageRepr::Update(vec![UpdateEntry::default(); 2]); // 24 bytes
        let filled = b.fill(&reliable, &[big_update, small_update]);
        assert_eq!(
            filled,
            Filled {
                reliable: 2,
                unreliable: 1
            }
        );
        assert_eq!(b.bytes().len(), 12 + 210 + 210 + 24);
        assert!(b.bytes().len() <= MAX_PACKET_SIZE);
    }

    #[test]
    fn a_huge_limit_reserves_no_more_than_a_packet() {
        // `with_limit(usize::MAX)` used to reserve the limit up front and panic.
        let mut b = PacketBuilder::with_limit(usize::MAX);
        b.start(Header::default());
        let big = MessageRepr::Update(vec![UpdateEntry::default(); 255]);
        assert!(b.try_push(&big));
        assert_eq!(b.bytes().len(), 12 + 2 + 255 * 11);
        assert_eq!(b.remaining(), usize::MAX - b.bytes().len());
    }

    #[test]
    fn start_resets_the_packet() {
        let mut b = PacketBuilder::new();
        b.start(Header {
            ack: 1,
            timestamp: 2,
        });
        assert!(b.try_push(&MessageRepr::Full));
        b.start(Header {
            ack: 3,
            timestamp: 4,
        });
        assert!(b.is_empty());
        assert_eq!(
            b.bytes(),
            &Header {
                ack: 3,
                timestamp: 4
            }
            .to_bytes()
        );
        assert_eq!(b.remaining(), MAX_PACKET_SIZE - HEADER_LEN);
    }
}
