//! The messages as values: one struct per packet type and [`Message`] over
//! them, read from a payload and written into a buffer. The owned packet that
//! parses from and emits to bytes, [`super::PacketRepr`], is in `repr.rs`; the
//! checked view, [`super::Packet`], in `packet.rs`; both build on this file.
//!
//! [`Message`] is generic over how a WorldSnapshot holds its entities: the view
//! ([`super::Packet::message`]) borrows them ([`Entities`], no allocation), the
//! owned [`MessageRepr`] keeps a `Vec`. Every other field is a plain value, and
//! enumerations stay raw `u8` so that any byte round-trips (an out-of-range value
//! is a violation, not an error).
//!
//! Each struct is declared with its row in `layout.rs` (`record!`,
//! `crate::proto::codec`): a field names the item it starts at, and its
//! reader and writer take their offsets, sizes and byte order from the row;
//! a struct that does not hold its row field for field, in order and shape,
//! does not compile. A snapshot's entities are the codec's counted
//! [`Entries`] of [`EntityState`], their count where the row puts it
//! (`codec::read_entries`, `write_entries`). The dispatch on the type (the
//! message's type, its payload's length, reader, writer and owned copy)
//! comes from one list, the codec's `messages!` (lwar's too): a line a
//! type, its variant and its struct.

pub use super::layout::{
    ChatMessage, ConnectionAccept, ConnectionRequest, EntityDestroy, EntitySpawn, EntityState,
    Heartbeat, MatchState, PlayerDied, PlayerInput, PlayerScored, Reason,
};
use super::layout::{HEADER_ITEMS, Item, f, items, payload};
use super::types::PacketType;
use crate::proto::codec::{
    Body, Entries, List, Own, ReadBody, Record, Wire, count_item, counted_len, fits, item_offset,
    messages, read_entries, record, same_shapes, write_entries,
};
use crate::proto::layout::{ByteOrder, Layout};

/// Every Starstrike number is big-endian.
pub(super) const ORDER: ByteOrder = ByteOrder::Big;

record! {
    /// The header as sent (`check_header` checks it, `emit_packet` writes it).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) struct WireHeader in [&HEADER_ITEMS] {
        pub(super) magic: u32 = f::MAGIC,
        pub(super) packet_type: u16 = f::TYPE,
        pub(super) seq: u16 = f::SEQ,
        pub(super) ack_bits: u32 = f::ACK_BITS,
    }
}

const _: () = assert!(
    same_shapes(
        items(PacketType::ConnectionReject),
        items(PacketType::Disconnect)
    ),
    "Reason: ConnectionReject and Disconnect differ"
);

/// The offset of a Reject's or a Disconnect's reason.
pub(super) const REASON: usize = item_offset!(items(PacketType::ConnectionReject), f::REJ_REASON);

/// 0x0101: `5 + 47 * entityCount` bytes. `E` holds the entities: borrowed
/// ([`Entities`]) in a view, a `Vec` in a [`MessageRepr`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorldSnapshot<E> {
    pub tick: u32,
    pub entities: E,
}

/// The snapshot's items: its tick, then the count of the entities that
/// follow them (read and written where the row puts them, `Body`).
const SNAPSHOT: &[Item] = items(PacketType::WorldSnapshot);
const SNAPSHOT_TICK: usize = item_offset!(SNAPSHOT, f::SN_TICK);
const _: () = assert!(
    fits(SNAPSHOT, 0, <u32 as Wire>::SHAPE)
        && SNAPSHOT.len() == 2
        && count_item(SNAPSHOT_ROW).is_some()
        && matches!(SNAPSHOT_ROW.entry, Some(e) if e.len == <EntityState as Record>::LEN),
    "WorldSnapshot: its row is not a u32 tick, a count and EntityStates"
);

/// A snapshot's entities, borrowed from the packet: `len() * 47` bytes
/// (the codec's counted entries of [`EntityState`]).
pub type Entities<'a> = Entries<'a, EntityState>;

/// What a snapshot's entities must offer to be encoded: the codec's
/// [`List`] of [`EntityState`] (borrowed [`Entities`] or a `Vec`).
pub trait EntityList: List<EntityState> {}

impl<T: List<EntityState>> EntityList for T {}

/// The snapshot's row: its tick, its count, the entities it counts.
const SNAPSHOT_ROW: &super::layout::Layout = &payload(PacketType::WorldSnapshot);

/// A snapshot: its tick, then its count and entities where the row puts
/// them.
impl<E: EntityList> Body for WorldSnapshot<E> {
    fn body_len<H>(&self, l: &Layout<H>) -> usize {
        counted_len(l, self.entities.count())
    }
    fn body_count(&self) -> usize {
        self.entities.count()
    }
    fn body_write<H>(&self, l: &Layout<H>, b: &mut [u8], order: ByteOrder) {
        self.tick.put(b, SNAPSHOT_TICK, order);
        write_entries(l, &self.entities, b, order);
    }
}

impl<'a> ReadBody<'a> for WorldSnapshot<Entities<'a>> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn body_read<H>(l: &Layout<H>, b: &'a [u8], order: ByteOrder) -> Self {
        WorldSnapshot {
            tick: Wire::get(b, SNAPSHOT_TICK, order),
            entities: read_entries(l, b, order),
        }
    }
}

impl Own for WorldSnapshot<Entities<'_>> {
    type Owned = WorldSnapshot<Vec<EntityState>>;
    fn own(&self) -> Self::Owned {
        WorldSnapshot {
            tick: self.tick,
            entities: self.entities.iter().collect(),
        }
    }
}

messages! {
    /// The one message of a packet. `E` holds a WorldSnapshot's entities.
    #[derive(Debug, Clone, PartialEq)]
    pub enum Message<E> {
        ConnectionRequest(ConnectionRequest),
        ConnectionAccept(ConnectionAccept),
        ConnectionReject(Reason),
        Disconnect(Reason),
        Heartbeat(Heartbeat),
        PlayerInput(PlayerInput),
        WorldSnapshot(WorldSnapshot<E>),
        EntitySpawn(EntitySpawn),
        EntityDestroy(EntityDestroy),
        PlayerScored(PlayerScored),
        PlayerDied(PlayerDied),
        MatchState(MatchState),
        ChatMessage(ChatMessage),
    }
    type PacketType, fn packet_type;
    rows payload, ORDER;
    items super::layout::Item;
    read read_message<'a> -> Message<Entities<'a>>;
    owned MessageRepr;
}

/// A message that owns its entities.
pub type MessageRepr = Message<Vec<EntityState>>;

#[cfg(test)]
mod tests {
    use super::super::types::FixedStr;
    use super::*;

    /// A value whose bytes are missing reads as zeros, without a panic.
    #[test]
    fn reading_past_the_end_gives_zeros() {
        assert_eq!(
            read_message(PacketType::PlayerScored, &[0, 0, 0, 7, 0, 0]),
            Message::PlayerScored(PlayerScored {
                player_id: 7,
                points: 0,
                score_type: 0
            })
        );
    }

    /// Each struct's fields land at its row's offsets: a ConnectionRequest
    /// written by hand from the notes (u8 version, char name[32], u64 id).
    #[test]
    fn a_record_is_its_rows_bytes() {
        let m = ConnectionRequest {
            protocol_version: 1,
            player_name: FixedStr::new(b"ab"),
            client_id: 0x0102_0304_0506_0708,
        };
        let mut b = [0xffu8; 41];
        m.write(&mut b, ORDER);
        let mut want = [0u8; 41];
        want[0] = 1;
        want[1..3].copy_from_slice(b"ab");
        want[33..].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(b, want);
        assert_eq!(ConnectionRequest::read(&b, ORDER), m);
        assert_eq!(ConnectionRequest::LEN, 41);
    }
}
