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

use super::layout::{ENTITY_STATE_LEN, SNAPSHOT_FIXED_LEN};
use super::types::{CHAT_MESSAGE_LEN, PLAYER_NAME_LEN, PacketType, REASON_MESSAGE_LEN};
use std::fmt;

/// A fixed string of `N` bytes on the wire: UTF-8, NUL-padded after the text. A
/// field with no NUL is a full-length string. The bytes are kept as sent, so
/// that a padding violation round-trips.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedStr<const N: usize>(pub [u8; N]);

impl<const N: usize> Default for FixedStr<N> {
    fn default() -> Self {
        FixedStr([0; N])
    }
}

impl<const N: usize> FixedStr<N> {
    /// `text`, cut to `N` bytes, NUL-padded.
    pub fn new(text: &[u8]) -> Self {
        let mut bytes = [0u8; N];
        let n = text.len().min(N);
        bytes[..n].copy_from_slice(&text[..n]);
        FixedStr(bytes)
    }

    /// The text: the bytes before the first NUL (all of them if there is none).
    pub fn text(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(N);
        &self.0[..end]
    }

    /// The index of the first non-NUL byte after the first NUL, if any: the
    /// padding must be NUL.
    pub fn padding_error(&self) -> Option<usize> {
        padding_error(&self.0)
    }
}

/// The text of fixed-string bytes: before the first NUL.
pub fn text_of(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    bytes.get(..end).unwrap_or(bytes)
}

/// The index of the first non-NUL byte after the first NUL of `bytes`.
pub fn padding_error(bytes: &[u8]) -> Option<usize> {
    let nul = bytes.iter().position(|&b| b == 0)?;
    bytes
        .iter()
        .enumerate()
        .skip(nul)
        .find(|(_, b)| **b != 0)
        .map(|(i, _)| i)
}

impl<const N: usize> fmt::Debug for FixedStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.text()))
    }
}

/// Three floats: x, y, z.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vector3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

/// Four floats: x, y, z, w.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Quaternion {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub w: f32,
}

/// 0x0001: 41 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ConnectionRequest {
    pub protocol_version: u8,
    pub player_name: FixedStr<PLAYER_NAME_LEN>,
    pub client_id: u64,
}

/// 0x0002: 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnectionAccept {
    pub assigned_player_id: u32,
    pub server_tick: u32,
    pub tick_rate: u32,
}

/// 0x0003 ConnectionReject and 0x0004 Disconnect: 129 bytes, a reason code
/// (RejectReason or DisconnectReason) and a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reason {
    pub reason: u8,
    pub message: FixedStr<REASON_MESSAGE_LEN>,
}

/// 0x0005: 4 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Heartbeat {
    /// The sender's clock, in ms.
    pub timestamp: u32,
}

/// 0x0100: 24 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PlayerInput {
    pub tick: u32,
    pub move_x: f32,
    pub move_y: f32,
    pub look_x: f32,
    pub look_y: f32,
    pub button_state: u32,
}

/// One entity of a WorldSnapshot: 47 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EntityState {
    pub entity_id: u32,
    pub entity_type: u8,
    pub position: Vector3,
    pub rotation: Quaternion,
    pub velocity: Vector3,
    pub health: u8,
    pub flags: u8,
}

/// 0x0101: `5 + 47 * entityCount` bytes. `E` holds the entities: borrowed
/// ([`Entities`]) in a view, a `Vec` in a [`MessageRepr`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorldSnapshot<E> {
    pub tick: u32,
    pub entities: E,
}

/// 0x0102: 34 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EntitySpawn {
    pub entity_id: u32,
    pub entity_type: u8,
    pub position: Vector3,
    pub rotation: Quaternion,
    pub owner_id: u8,
}

/// 0x0103: 5 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EntityDestroy {
    pub entity_id: u32,
    pub reason: u8,
}

/// 0x0200: 9 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlayerScored {
    pub player_id: u32,
    pub points: u32,
    pub score_type: u8,
}

/// 0x0201: 9 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlayerDied {
    pub victim_id: u32,
    pub killer_id: u32,
    pub death_type: u8,
}

/// 0x0202: 9 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchState {
    pub state: u8,
    pub time_remaining: u32,
    pub team_scores: [u8; 4],
}

/// 0x0300: 261 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChatMessage {
    pub sender_id: u32,
    pub channel: u8,
    pub message: FixedStr<CHAT_MESSAGE_LEN>,
}

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

/// A message that owns its entities.
pub type MessageRepr = Message<Vec<EntityState>>;

/// A snapshot's entities, borrowed from the packet: `len() * 47` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Entities<'a> {
    bytes: &'a [u8],
}

impl<'a> Entities<'a> {
    /// The entities in `bytes` (whole entities only: a partial one at the end
    /// is ignored).
    pub fn new(bytes: &'a [u8]) -> Self {
        let whole = bytes.len() - bytes.len() % ENTITY_STATE_LEN;
        Entities {
            bytes: bytes.get(..whole).unwrap_or_default(),
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len() / ENTITY_STATE_LEN
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The `i`th entity.
    pub fn get(&self, i: usize) -> Option<EntityState> {
        let start = i.checked_mul(ENTITY_STATE_LEN)?;
        let bytes = self.bytes.get(start..start + ENTITY_STATE_LEN)?;
        Some(read_entity(&mut Reader { bytes, pos: 0 }))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = EntityState> + 'a {
        let bytes = self.bytes;
        bytes
            .chunks_exact(ENTITY_STATE_LEN)
            .map(|bytes| read_entity(&mut Reader { bytes, pos: 0 }))
    }
}

/// What a snapshot's entities must offer to be encoded.
pub trait EntityList {
    fn count(&self) -> usize;
    fn each(&self, f: &mut dyn FnMut(&EntityState));
}

impl EntityList for Entities<'_> {
    fn count(&self) -> usize {
        self.len()
    }
    fn each(&self, f: &mut dyn FnMut(&EntityState)) {
        for e in self.iter() {
            f(&e);
        }
    }
}

impl EntityList for Vec<EntityState> {
    fn count(&self) -> usize {
        self.len()
    }
    fn each(&self, f: &mut dyn FnMut(&EntityState)) {
        self.iter().for_each(f);
    }
}

impl<E> Message<E> {
    pub const fn packet_type(&self) -> PacketType {
        match self {
            Message::ConnectionRequest(_) => PacketType::ConnectionRequest,
            Message::ConnectionAccept(_) => PacketType::ConnectionAccept,
            Message::ConnectionReject(_) => PacketType::ConnectionReject,
            Message::Disconnect(_) => PacketType::Disconnect,
            Message::Heartbeat(_) => PacketType::Heartbeat,
            Message::PlayerInput(_) => PacketType::PlayerInput,
            Message::WorldSnapshot(_) => PacketType::WorldSnapshot,
            Message::EntitySpawn(_) => PacketType::EntitySpawn,
            Message::EntityDestroy(_) => PacketType::EntityDestroy,
            Message::PlayerScored(_) => PacketType::PlayerScored,
            Message::PlayerDied(_) => PacketType::PlayerDied,
            Message::MatchState(_) => PacketType::MatchState,
            Message::ChatMessage(_) => PacketType::ChatMessage,
        }
    }
}

impl<E: EntityList> Message<E> {
    /// The payload length.
    pub fn payload_len(&self) -> usize {
        match self {
            Message::WorldSnapshot(s) => SNAPSHOT_FIXED_LEN + ENTITY_STATE_LEN * s.entities.count(),
            m => m.packet_type().min_payload_len(),
        }
    }

    /// Writes the payload.
    pub(super) fn write(&self, w: &mut Writer<'_>) {
        match self {
            Message::ConnectionRequest(m) => {
                w.u8(m.protocol_version);
                w.bytes(&m.player_name.0);
                w.u64(m.client_id);
            }
            Message::ConnectionAccept(m) => {
                w.u32(m.assigned_player_id);
                w.u32(m.server_tick);
                w.u32(m.tick_rate);
            }
            Message::ConnectionReject(m) | Message::Disconnect(m) => {
                w.u8(m.reason);
                w.bytes(&m.message.0);
            }
            Message::Heartbeat(m) => w.u32(m.timestamp),
            Message::PlayerInput(m) => {
                w.u32(m.tick);
                for v in [m.move_x, m.move_y, m.look_x, m.look_y] {
                    w.f32(v);
                }
                w.u32(m.button_state);
            }
            Message::WorldSnapshot(m) => {
                w.u32(m.tick);
                // Checked by the caller: at most 255.
                w.u8(m.entities.count() as u8);
                m.entities.each(&mut |e| {
                    w.u32(e.entity_id);
                    w.u8(e.entity_type);
                    w.vector(e.position);
                    w.quaternion(e.rotation);
                    w.vector(e.velocity);
                    w.u8(e.health);
                    w.u8(e.flags);
                });
            }
            Message::EntitySpawn(m) => {
                w.u32(m.entity_id);
                w.u8(m.entity_type);
                w.vector(m.position);
                w.quaternion(m.rotation);
                w.u8(m.owner_id);
            }
            Message::EntityDestroy(m) => {
                w.u32(m.entity_id);
                w.u8(m.reason);
            }
            Message::PlayerScored(m) => {
                w.u32(m.player_id);
                w.u32(m.points);
                w.u8(m.score_type);
            }
            Message::PlayerDied(m) => {
                w.u32(m.victim_id);
                w.u32(m.killer_id);
                w.u8(m.death_type);
            }
            Message::MatchState(m) => {
                w.u8(m.state);
                w.u32(m.time_remaining);
                w.bytes(&m.team_scores);
            }
            Message::ChatMessage(m) => {
                w.u32(m.sender_id);
                w.u8(m.channel);
                w.bytes(&m.message.0);
            }
        }
    }
}

impl Message<Entities<'_>> {
    /// An owned copy.
    pub fn to_owned_repr(&self) -> MessageRepr {
        match self {
            Message::WorldSnapshot(s) => Message::WorldSnapshot(WorldSnapshot {
                tick: s.tick,
                entities: s.entities.iter().collect(),
            }),
            Message::ConnectionRequest(m) => Message::ConnectionRequest(*m),
            Message::ConnectionAccept(m) => Message::ConnectionAccept(*m),
            Message::ConnectionReject(m) => Message::ConnectionReject(*m),
            Message::Disconnect(m) => Message::Disconnect(*m),
            Message::Heartbeat(m) => Message::Heartbeat(*m),
            Message::PlayerInput(m) => Message::PlayerInput(*m),
            Message::EntitySpawn(m) => Message::EntitySpawn(*m),
            Message::EntityDestroy(m) => Message::EntityDestroy(*m),
            Message::PlayerScored(m) => Message::PlayerScored(*m),
            Message::PlayerDied(m) => Message::PlayerDied(*m),
            Message::MatchState(m) => Message::MatchState(*m),
            Message::ChatMessage(m) => Message::ChatMessage(*m),
        }
    }
}

/// Reads big-endian values from bytes whose length was checked; a read past
/// the end gives zeros instead of panicking.
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        if let Some(src) = self
            .pos
            .checked_add(N)
            .and_then(|end| self.bytes.get(self.pos..end))
        {
            out.copy_from_slice(src);
        }
        self.pos = self.pos.saturating_add(N);
        out
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.take())
    }
    fn f32(&mut self) -> f32 {
        f32::from_be_bytes(self.take())
    }
    fn vector(&mut self) -> Vector3 {
        Vector3 {
            x: self.f32(),
            y: self.f32(),
            z: self.f32(),
        }
    }
    fn quaternion(&mut self) -> Quaternion {
        Quaternion {
            x: self.f32(),
            y: self.f32(),
            z: self.f32(),
            w: self.f32(),
        }
    }
    fn fixed<const N: usize>(&mut self) -> FixedStr<N> {
        FixedStr(self.take())
    }
}

fn read_entity(r: &mut Reader<'_>) -> EntityState {
    EntityState {
        entity_id: r.u32(),
        entity_type: r.u8(),
        position: r.vector(),
        rotation: r.quaternion(),
        velocity: r.vector(),
        health: r.u8(),
        flags: r.u8(),
    }
}

/// Reads the message of type `t` from its payload (whose length the caller
/// checked: missing bytes would read as zeros).
pub(crate) fn read_message(t: PacketType, payload: &[u8]) -> Message<Entities<'_>> {
    let r = &mut Reader {
        bytes: payload,
        pos: 0,
    };
    match t {
        PacketType::ConnectionRequest => Message::ConnectionRequest(ConnectionRequest {
            protocol_version: r.u8(),
            player_name: r.fixed(),
            client_id: r.u64(),
        }),
        PacketType::ConnectionAccept => Message::ConnectionAccept(ConnectionAccept {
            assigned_player_id: r.u32(),
            server_tick: r.u32(),
            tick_rate: r.u32(),
        }),
        PacketType::ConnectionReject => Message::ConnectionReject(Reason {
            reason: r.u8(),
            message: r.fixed(),
        }),
        PacketType::Disconnect => Message::Disconnect(Reason {
            reason: r.u8(),
            message: r.fixed(),
        }),
        PacketType::Heartbeat => Message::Heartbeat(Heartbeat { timestamp: r.u32() }),
        PacketType::PlayerInput => Message::PlayerInput(PlayerInput {
            tick: r.u32(),
            move_x: r.f32(),
            move_y: r.f32(),
            look_x: r.f32(),
            look_y: r.f32(),
            button_state: r.u32(),
        }),
        PacketType::WorldSnapshot => Message::WorldSnapshot(WorldSnapshot {
            tick: r.u32(),
            entities: Entities::new(payload.get(SNAPSHOT_FIXED_LEN..).unwrap_or_default()),
        }),
        PacketType::EntitySpawn => Message::EntitySpawn(EntitySpawn {
            entity_id: r.u32(),
            entity_type: r.u8(),
            position: r.vector(),
            rotation: r.quaternion(),
            owner_id: r.u8(),
        }),
        PacketType::EntityDestroy => Message::EntityDestroy(EntityDestroy {
            entity_id: r.u32(),
            reason: r.u8(),
        }),
        PacketType::PlayerScored => Message::PlayerScored(PlayerScored {
            player_id: r.u32(),
            points: r.u32(),
            score_type: r.u8(),
        }),
        PacketType::PlayerDied => Message::PlayerDied(PlayerDied {
            victim_id: r.u32(),
            killer_id: r.u32(),
            death_type: r.u8(),
        }),
        PacketType::MatchState => Message::MatchState(MatchState {
            state: r.u8(),
            time_remaining: r.u32(),
            team_scores: r.take(),
        }),
        PacketType::ChatMessage => Message::ChatMessage(ChatMessage {
            sender_id: r.u32(),
            channel: r.u8(),
            message: r.fixed(),
        }),
    }
}

/// Writes big-endian values into a buffer the caller sized.
pub(super) struct Writer<'a> {
    pub(super) buf: &'a mut [u8],
    pub(super) pos: usize,
}

impl Writer<'_> {
    fn bytes(&mut self, b: &[u8]) {
        if let Some(dst) = self.buf.get_mut(self.pos..self.pos + b.len()) {
            dst.copy_from_slice(b);
        }
        self.pos += b.len();
    }
    fn u8(&mut self, v: u8) {
        self.bytes(&[v]);
    }
    pub(super) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_be_bytes());
    }
    pub(super) fn u32(&mut self, v: u32) {
        self.bytes(&v.to_be_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_be_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.bytes(&v.to_be_bytes());
    }
    fn vector(&mut self, v: Vector3) {
        for x in [v.x, v.y, v.z] {
            self.f32(x);
        }
    }
    fn quaternion(&mut self, q: Quaternion) {
        for x in [q.x, q.y, q.z, q.w] {
            self.f32(x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_strings_pad_and_cut() {
        let s = FixedStr::<4>::new(b"ab");
        assert_eq!(s.0, *b"ab\0\0");
        assert_eq!(s.text(), b"ab");
        assert_eq!(s.padding_error(), None);
        assert_eq!(FixedStr::<2>::new(b"abc").text(), b"ab");
        assert_eq!(FixedStr::<4>(*b"a\0b\0").padding_error(), Some(2));
        assert_eq!(FixedStr::<3>(*b"abc").padding_error(), None);
        assert_eq!(text_of(b"xy\0z"), b"xy");
    }

    #[test]
    fn reading_past_the_end_gives_zeros() {
        let mut r = Reader {
            bytes: &[1, 2],
            pos: 0,
        };
        assert_eq!(r.u32(), 0);
        assert_eq!(r.u8(), 0);
    }
}
