//! One direction pair of ordered-reliable delivery between two peers: what the
//! specification's "Message Delivery Guarantees" section asks of each side.

use crate::proto::lwar::wire::{Header, MessageRepr, PacketBuilder};
use std::collections::VecDeque;

/// The reliable state a peer keeps for one remote peer.
///
/// Outgoing: messages get seqnos from 1 and stay queued (and are resent in every
/// packet) until the remote acks them. Incoming: only the direct successor of the
/// last processed seqno is processed; the header ack is that last seqno.
#[derive(Debug, Clone, Default)]
pub struct Channel {
    next_seqno: u32,
    unacked: VecDeque<MessageRepr>,
    last_processed: u32,
    /// The highest seqno put in a packet so far.
    sent_upto: u32,
    /// When set, every message given to [`Channel::push`], in order (for tests).
    pub sent_log: Option<Vec<MessageRepr>>,
    /// When set, every reliable message processed, in order (for tests).
    pub recv_log: Option<Vec<MessageRepr>>,
}

impl Channel {
    pub fn new(log: bool) -> Self {
        Channel {
            next_seqno: 1,
            unacked: VecDeque::new(),
            last_processed: 0,
            sent_upto: 0,
            sent_log: log.then(Vec::new),
            recv_log: log.then(Vec::new),
        }
    }

    /// Queues a reliable message under the next seqno; returns that seqno.
    pub fn push(&mut self, mut message: MessageRepr) -> u32 {
        let seqno = self.next_seqno;
        message.set_seqno(seqno);
        self.next_seqno += 1;
        if let Some(log) = &mut self.sent_log {
            log.push(message.clone());
        }
        self.unacked.push_back(message);
        seqno
    }

    /// Forgets every queued message the remote has acked.
    pub fn on_ack(&mut self, ack: u32) {
        while self
            .unacked
            .front()
            .is_some_and(|m| m.seqno().is_some_and(|s| s <= ack))
        {
            self.unacked.pop_front();
        }
    }

    /// Drops every queued message (a server that only sends Leave from now on).
    /// Seqnos never put in a packet are taken back, so that the next message
    /// follows the last one sent without a gap.
    pub fn clear(&mut self) {
        self.unacked.clear();
        if let Some(log) = &mut self.sent_log {
            log.retain(|m| m.seqno().is_some_and(|s| s <= self.sent_upto));
        }
        self.next_seqno = self.sent_upto + 1;
    }

    /// True when `seqno` is the next to process; it then counts as processed.
    pub fn accept(&mut self, seqno: u32) -> bool {
        if seqno == self.last_processed.wrapping_add(1) {
            self.last_processed = seqno;
            true
        } else {
            false
        }
    }

    /// Logs a processed message (when logging).
    pub fn log_received(&mut self, message: impl FnOnce() -> MessageRepr) {
        if let Some(log) = &mut self.recv_log {
            log.push(message());
        }
    }

    /// The ack to put in every packet header.
    pub const fn ack(&self) -> u32 {
        self.last_processed
    }

    pub fn has_unacked(&self) -> bool {
        !self.unacked.is_empty()
    }

    /// Builds a packet: header, every unacked reliable message that fits (in
    /// order), then the unreliable messages while room is left. Returns the bytes.
    pub fn build(
        &mut self,
        builder: &mut PacketBuilder,
        timestamp: u32,
        unreliable: &[MessageRepr],
    ) -> Vec<u8> {
        builder.start(Header {
            ack: self.last_processed,
            timestamp,
        });
        let filled = builder.fill(&self.unacked, unreliable);
        if let Some(last) = filled.reliable.checked_sub(1)
            && let Some(seqno) = self.unacked.get(last).and_then(MessageRepr::seqno)
        {
            self.sent_upto = self.sent_upto.max(seqno);
        }
        builder.bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::lwar::wire::PacketRepr;

    #[test]
    fn seqnos_start_at_one_and_stay_until_acked() {
        let mut c = Channel::new(true);
        assert_eq!(c.push(MessageRepr::Disconnect { seqno: 0 }), 1);
        assert_eq!(c.push(MessageRepr::Synced { seqno: 0 }), 2);
        let mut b = PacketBuilder::new();
        let p = PacketRepr::parse(&c.build(&mut b, 7, &[MessageRepr::Full])).unwrap();
        assert_eq!(p.messages.len(), 3);
        assert_eq!(p.messages[1].seqno(), Some(2));
        c.on_ack(1);
        let p = PacketRepr::parse(&c.build(&mut b, 8, &[])).unwrap();
        assert_eq!(p.messages, vec![MessageRepr::Synced { seqno: 2 }]);
        c.on_ack(2);
        assert!(!c.has_unacked());
    }

    #[test]
    fn clearing_takes_back_unsent_seqnos() {
        let mut c = Channel::new(true);
        c.push(MessageRepr::Synced { seqno: 0 });
        c.build(&mut PacketBuilder::new(), 1, &[]);
        c.push(MessageRepr::Synced { seqno: 0 });
        c.clear();
        assert_eq!(c.push(MessageRepr::Disconnect { seqno: 0 }), 2);
        assert_eq!(c.sent_log.as_ref().map(Vec::len), Some(2));
    }

    #[test]
    fn only_the_next_seqno_is_processed() {
        let mut c = Channel::new(false);
        assert!(!c.accept(2));
        assert!(c.accept(1));
        assert!(!c.accept(1));
        assert!(c.accept(2));
        assert_eq!(c.ack(), 2);
    }
}
