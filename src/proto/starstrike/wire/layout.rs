//! Starstrike's wire layout, declared once: the registered fields
//! ([`FIELDS`]) and, for the header and each packet type, its fields in wire
//! order with their primitive (size, sign, how each shows). The machinery is
//! shared by every native protocol (`crate::proto::layout`: primitives,
//! items, entries, the walk and the visitors); this file holds Starstrike's
//! table only. One walk over a payload's bytes (`walk`) reads it, and
//! every view is a visitor of it: the typed field walk of `-Y`, `-T fields`
//! and JSON ([`super::walk_fields`]), the `-V` tree ([`super::walk_tree`]),
//! the one-line text (the core's `TextOut`: every field ` label=value`, an
//! entity's ` [e].label=value`, enums named) and the violation checks
//! ([`super::Packet::for_each_violation`]). The lengths come from it too:
//! each type's payload ([`PacketType::min_payload_len`], [`needed_len`]), an
//! entity's ([`ENTITY`]), and the field a truncation's first missing byte
//! belongs to ([`field_at`]).
//!
//! The typed messages the analysis and the simulator read and write are
//! declared with these rows, a field and its items together (`record!` of
//! `crate::proto::codec`, below): each struct's row is its fields' items
//! in order, and its reader and writer take offsets, sizes and byte order
//! from it, checked at compile time to hold it field for field (a
//! `Vector3` three `f32` items); a snapshot's entities are read and
//! written where its row puts its count and entries
//! (`codec::read_entries`, `write_entries`), and the dispatch on the type
//! (reader, writer, length, owned copy) is generated from one list of the
//! messages (the codec's `messages!` in `message.rs`, a line a type).
//! What stays hand-written: the compact token (`WorldSnapshot(3)`,
//! `dissect.rs`), and the rules the violations check (which enums, floats
//! and strings they look at come from here).
//!
//! # Adding a message type
//!
//! Its `packetType` in `types.rs` (`packet_types!`), its node and fields
//! in `fields!`, its struct with its row (`record!`) and its line in
//! `payloads!` below, and its line in `messages!` in `message.rs`.
//!
//! # Adding a field to a message
//!
//! 1. Register it in `fields!` below (filter name, tree label, type,
//!    documentation).
//! 2. Add it to its message's struct in `record!` below (or to
//!    [`EntityState`]'s), in wire order, with its items:
//!    `pub owner_id: u8 = [it(SP_OWNER, U8)]` (a vector, one item a
//!    float). The row follows, and from it the field walk, the tree, the
//!    text, the violation checks (an enum, a float, a padded text), the
//!    payload length, the field of a truncation and `--list-fields`'
//!    groups; the decoder and the encoder follow from the struct. Set it
//!    where the simulator builds the message, and add it to
//!    `protocols/starstrike.ksy` (the cross-check compares the fields of
//!    both on the corpus).

use super::types::{
    CHAT_MESSAGE_LEN, EnumKind, FixedStr, HEADER_LEN, MAX_PAYLOAD, PLAYER_NAME_LEN, PacketType,
    Quaternion, REASON_MESSAGE_LEN, Vector3,
};
use crate::proto::codec::{count_item, counted_len, record};
use crate::proto::layout::{
    self as core, ByteOrder, Int, Names, Prim, Show, Table, Visit, entry, labelled,
};

/// One `EntityState` of a WorldSnapshot (47 bytes: its layout's).
pub const ENTITY_STATE_LEN: usize = ENTITY.len;
/// The WorldSnapshot's fixed part: `u32 tick`, `u8 entityCount` (its
/// layout's).
pub const SNAPSHOT_FIXED_LEN: usize = PacketType::WorldSnapshot.min_payload_len();
/// Entities that fit in one snapshot within the MTU: (1188 - 5) / 47.
pub const MAX_ENTITIES_IN_MTU: usize = (MAX_PAYLOAD - SNAPSHOT_FIXED_LEN) / ENTITY_STATE_LEN;

/// The registered fields by name (`f::SEQ`).
pub mod f {
    pub use super::FieldId::*;
}

core::fields! {
    /// A registered field: its index in [`FIELDS`]. Small enough to travel
    /// inside a finding's numbers.
    pub enum FieldId;
    /// Every Starstrike field, registered for the display filter (`strs.seq`),
    /// field output and documentation.
    pub static FIELDS;
    HEADER = "strs.header", "header", Node, "The 12-byte packet header.";
    MAGIC = "strs.magic", "protocolId", Unsigned, "The magic 0x53545253 (\"STRS\").";
    TYPE = "strs.type", "packetType", Enum, "The packet type.";
    SEQ = "strs.seq", "sequenceNumber", Unsigned, "The sender's own sequence number (16 bits, wrapping).";
    ACK_BITS = "strs.ack_bits", "ackBits", Bits, "Bit N set: the sender received the peer's packet seq - N - 1.";
    // Message nodes, one per type.
    N_REQUEST = "strs.connection_request", "ConnectionRequest", Node, "ConnectionRequest (0x0001).";
    N_ACCEPT = "strs.connection_accept", "ConnectionAccept", Node, "ConnectionAccept (0x0002).";
    N_REJECT = "strs.connection_reject", "ConnectionReject", Node, "ConnectionReject (0x0003).";
    N_DISCONNECT = "strs.disconnect", "Disconnect", Node, "Disconnect (0x0004).";
    N_HEARTBEAT = "strs.heartbeat", "Heartbeat", Node, "Heartbeat (0x0005).";
    N_INPUT = "strs.input", "PlayerInput", Node, "PlayerInput (0x0100).";
    N_SNAPSHOT = "strs.snapshot", "WorldSnapshot", Node, "WorldSnapshot (0x0101).";
    N_SPAWN = "strs.spawn", "EntitySpawn", Node, "EntitySpawn (0x0102).";
    N_DESTROY = "strs.destroy", "EntityDestroy", Node, "EntityDestroy (0x0103).";
    N_SCORED = "strs.scored", "PlayerScored", Node, "PlayerScored (0x0200).";
    N_DIED = "strs.died", "PlayerDied", Node, "PlayerDied (0x0201).";
    N_MATCH = "strs.match", "MatchState", Node, "MatchState (0x0202).";
    N_CHAT = "strs.chat", "ChatMessage", Node, "ChatMessage (0x0300).";
    // ConnectionRequest
    REQ_VERSION = "strs.request.version", "protocolVersion", Unsigned, "Protocol version (1).";
    REQ_NAME = "strs.request.player_name", "playerName", Text, "Player name (32 bytes, NUL-padded).";
    REQ_CLIENT_ID = "strs.request.client_id", "clientId", Unsigned, "Unique client identifier.";
    // ConnectionAccept
    ACC_PLAYER_ID = "strs.accept.player_id", "assignedPlayerId", Unsigned, "Server-assigned player id.";
    ACC_SERVER_TICK = "strs.accept.server_tick", "serverTick", Unsigned, "Current server tick.";
    ACC_TICK_RATE = "strs.accept.tick_rate", "tickRate", Unsigned, "Server tick rate (Hz).";
    // ConnectionReject
    REJ_REASON = "strs.reject.reason", "reason", Enum, "RejectReason.";
    REJ_MESSAGE = "strs.reject.message", "message", Text, "Human-readable message (128 bytes).";
    // Disconnect
    DIS_REASON = "strs.disconnect.reason", "reason", Enum, "DisconnectReason.";
    DIS_MESSAGE = "strs.disconnect.message", "message", Text, "Optional message (128 bytes).";
    // Heartbeat
    HB_TIMESTAMP = "strs.heartbeat.timestamp", "timestamp", Unsigned, "Sender's clock (ms).";
    // PlayerInput
    IN_TICK = "strs.input.tick", "tick", Unsigned, "Client tick number.";
    IN_MOVE_X = "strs.input.move_x", "moveX", Float, "Movement X axis, in [-1, 1].";
    IN_MOVE_Y = "strs.input.move_y", "moveY", Float, "Movement Y axis, in [-1, 1].";
    IN_LOOK_X = "strs.input.look_x", "lookX", Float, "Look direction X.";
    IN_LOOK_Y = "strs.input.look_y", "lookY", Float, "Look direction Y.";
    IN_BUTTONS = "strs.input.buttons", "buttonState", Bits, "Buttons: Fire 0x01, AltFire 0x02, Jump 0x04, Boost 0x08, Shield 0x10.";
    // WorldSnapshot
    SN_TICK = "strs.snapshot.tick", "tick", Unsigned, "Server tick number.";
    SN_COUNT = "strs.snapshot.entity_count", "entityCount", Unsigned, "Entities in this packet.";
    N_ENTITY = "strs.entity", "EntityState", Node, "One entity state (47 bytes).";
    EN_ID = "strs.entity.id", "entityId", Unsigned, "Entity id.";
    EN_TYPE = "strs.entity.type", "entityType", Enum, "EntityType.";
    EN_POS_X = "strs.entity.pos_x", "position.x", Float, "World position X.";
    EN_POS_Y = "strs.entity.pos_y", "position.y", Float, "World position Y.";
    EN_POS_Z = "strs.entity.pos_z", "position.z", Float, "World position Z.";
    EN_ROT_X = "strs.entity.rot_x", "rotation.x", Float, "Rotation quaternion X.";
    EN_ROT_Y = "strs.entity.rot_y", "rotation.y", Float, "Rotation quaternion Y.";
    EN_ROT_Z = "strs.entity.rot_z", "rotation.z", Float, "Rotation quaternion Z.";
    EN_ROT_W = "strs.entity.rot_w", "rotation.w", Float, "Rotation quaternion W.";
    EN_VEL_X = "strs.entity.vel_x", "velocity.x", Float, "Linear velocity X.";
    EN_VEL_Y = "strs.entity.vel_y", "velocity.y", Float, "Linear velocity Y.";
    EN_VEL_Z = "strs.entity.vel_z", "velocity.z", Float, "Linear velocity Z.";
    EN_HEALTH = "strs.entity.health", "health", Unsigned, "Health (0-255).";
    EN_FLAGS = "strs.entity.flags", "flags", Bits, "IsAlive 0x01, IsGrounded 0x02, IsBoosting 0x04, HasShield 0x08.";
    // EntitySpawn
    SP_ID = "strs.spawn.entity_id", "entityId", Unsigned, "New entity id.";
    SP_TYPE = "strs.spawn.entity_type", "entityType", Enum, "EntityType.";
    SP_POS_X = "strs.spawn.pos_x", "position.x", Float, "Initial position X.";
    SP_POS_Y = "strs.spawn.pos_y", "position.y", Float, "Initial position Y.";
    SP_POS_Z = "strs.spawn.pos_z", "position.z", Float, "Initial position Z.";
    SP_ROT_X = "strs.spawn.rot_x", "rotation.x", Float, "Initial rotation X.";
    SP_ROT_Y = "strs.spawn.rot_y", "rotation.y", Float, "Initial rotation Y.";
    SP_ROT_Z = "strs.spawn.rot_z", "rotation.z", Float, "Initial rotation Z.";
    SP_ROT_W = "strs.spawn.rot_w", "rotation.w", Float, "Initial rotation W.";
    SP_OWNER = "strs.spawn.owner_id", "ownerId", Unsigned, "Owner player id (0 if none).";
    // EntityDestroy
    DE_ID = "strs.destroy.entity_id", "entityId", Unsigned, "Entity to destroy.";
    DE_REASON = "strs.destroy.reason", "reason", Enum, "DestroyReason.";
    // PlayerScored
    SC_PLAYER = "strs.scored.player_id", "playerId", Unsigned, "Player who scored.";
    SC_POINTS = "strs.scored.points", "points", Unsigned, "Points awarded.";
    SC_TYPE = "strs.scored.score_type", "scoreType", Enum, "ScoreType.";
    // PlayerDied
    DI_VICTIM = "strs.died.victim_id", "victimId", Unsigned, "Player who died.";
    DI_KILLER = "strs.died.killer_id", "killerId", Unsigned, "Killer (0 if environmental).";
    DI_TYPE = "strs.died.death_type", "deathType", Enum, "DeathType.";
    // MatchState
    MS_STATE = "strs.match.state", "state", Enum, "GameState.";
    MS_TIME = "strs.match.time_remaining", "timeRemaining", Unsigned, "Time remaining in the state (ms).";
    MS_TEAM_SCORE = "strs.match.team_score", "teamScores", Unsigned, "Score of one of up to 4 teams.";
    // ChatMessage
    CH_SENDER = "strs.chat.sender_id", "senderId", Unsigned, "Sender player id.";
    CH_CHANNEL = "strs.chat.channel", "channel", Enum, "ChatChannel.";
    CH_MESSAGE = "strs.chat.message", "message", Text, "Message content (256 bytes).";
}

/// Starstrike's items, entries and layouts (every number big-endian).
pub type Item = core::Item<FieldId>;
pub type Entry = core::Entry<FieldId>;
pub type Layout = core::Layout<FieldId>;

/// A field, labelled in the tree and the text as registered (the text's
/// ` label=value`, ` [e].label=value` in an entity).
const fn it(f: FieldId, prim: Prim) -> Item {
    labelled(f, prim, FieldId::DEFS[f as usize].label)
}

// Starstrike's primitives.
const U8: Prim = Prim::Int(Int::U8, Show::Dec);
const U16: Prim = Prim::Int(Int::U16, Show::Dec);
const U32: Prim = Prim::Int(Int::U32, Show::Dec);
const U64: Prim = Prim::Int(Int::U64, Show::Dec);
const F32: Prim = Prim::F32;
/// A u32 shown in hex (the magic).
const HEX32: Prim = Prim::Int(Int::U32, Show::Hex);
/// Bit fields, shown in binary.
const BITS8: Prim = Prim::Int(Int::U8, Show::Bits);
const BITS32: Prim = Prim::Int(Int::U32, Show::Bits);
/// A `char name[N]`: `N` bytes, NUL-padded.
const fn text(n: usize) -> Prim {
    Prim::Padded(n)
}
/// A `u8` enumeration: a value it does not list still reads (a violation).
const fn enum8(names: &'static Names) -> Prim {
    Prim::Int(Int::U8, Show::Enum(names))
}

macro_rules! enum_names {
    ($( $id:ident = $kind:ident; )*) => {
        $(
            const $id: Names = Names {
                name: |raw, _| EnumKind::$kind.value_name(raw),
                known: false,
                tree_named: true,
                text_named: true,
            };
        )*
    };
}

enum_names! {
    ENTITY_TYPE = EntityType;
    REJECT_REASON = RejectReason;
    DISCONNECT_REASON = DisconnectReason;
    DESTROY_REASON = DestroyReason;
    SCORE_TYPE = ScoreType;
    DEATH_TYPE = DeathType;
    GAME_STATE = GameState;
    CHAT_CHANNEL = ChatChannel;
}

const PACKET_TYPE: Names = Names {
    name: |raw, _| match u16::try_from(raw) {
        Ok(id) => match PacketType::from_u16(id) {
            Some(t) => Some(t.name()),
            None => None,
        },
        Err(_) => None,
    },
    known: false,
    tree_named: true,
    text_named: true,
};

use FieldId::*;

/// The header's fields, from the start of the packet.
pub(super) const HEADER_ITEMS: [Item; 4] = [
    it(MAGIC, HEX32),
    it(TYPE, Prim::Int(Int::U16, Show::Enum(&PACKET_TYPE))),
    it(SEQ, U16),
    it(ACK_BITS, BITS32),
];
/// The header's fields at a fixed address (the key of its group).
pub static HEADER: [Item; 4] = HEADER_ITEMS;

record! {
    /// One entity of a WorldSnapshot: 47 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct EntityState in const ENTITY_ITEMS: &[Item] {
        pub entity_id: u32 = [it(EN_ID, U32)],
        pub entity_type: u8 = [it(EN_TYPE, enum8(&ENTITY_TYPE))],
        pub position: Vector3 = [it(EN_POS_X, F32), it(EN_POS_Y, F32), it(EN_POS_Z, F32)],
        pub rotation: Quaternion = [
            it(EN_ROT_X, F32), it(EN_ROT_Y, F32), it(EN_ROT_Z, F32), it(EN_ROT_W, F32),
        ],
        pub velocity: Vector3 = [it(EN_VEL_X, F32), it(EN_VEL_Y, F32), it(EN_VEL_Z, F32)],
        pub health: u8 = [it(EN_HEALTH, U8)],
        pub flags: u8 = [it(EN_FLAGS, BITS8)],
    }
}

/// One EntityState of a WorldSnapshot, from the start of the entity.
pub const ENTITY: Entry = entry(N_ENTITY, ENTITY_ITEMS);

/// A payload of `items`.
const fn row(items: &'static [Item]) -> Layout {
    core::layout(&[], items, None, &[])
}

// The typed messages, each declared with its row: a field and its items
// (what the codec reads and writes it at, `record!`).

record! {
    /// 0x0001: 41 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct ConnectionRequest in const REQUEST: &[Item] {
        pub protocol_version: u8 = [it(REQ_VERSION, U8)],
        pub player_name: FixedStr<PLAYER_NAME_LEN> = [it(REQ_NAME, text(PLAYER_NAME_LEN))],
        pub client_id: u64 = [it(REQ_CLIENT_ID, U64)],
    }
}

record! {
    /// 0x0002: 12 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct ConnectionAccept in const ACCEPT: &[Item] {
        pub assigned_player_id: u32 = [it(ACC_PLAYER_ID, U32)],
        pub server_tick: u32 = [it(ACC_SERVER_TICK, U32)],
        pub tick_rate: u32 = [it(ACC_TICK_RATE, U32)],
    }
}

record! {
    /// 0x0003 ConnectionReject and 0x0004 Disconnect: 129 bytes, a reason code
    /// (RejectReason or DisconnectReason) and a message (declared with
    /// ConnectionReject's row; Disconnect's, `DISCONNECT`, has the same
    /// shapes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Reason in const REJECT: &[Item] {
        pub reason: u8 = [it(REJ_REASON, enum8(&REJECT_REASON))],
        pub message: FixedStr<REASON_MESSAGE_LEN> = [it(REJ_MESSAGE, text(REASON_MESSAGE_LEN))],
    }
}

/// Disconnect's row: a [`Reason`] (`message.rs` checks the shapes).
const DISCONNECT: &[Item] = &[
    it(DIS_REASON, enum8(&DISCONNECT_REASON)),
    it(DIS_MESSAGE, text(REASON_MESSAGE_LEN)),
];

record! {
    /// 0x0005: 4 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Heartbeat in const HEARTBEAT: &[Item] {
        /// The sender's clock, in ms.
        pub timestamp: u32 = [it(HB_TIMESTAMP, U32)],
    }
}

record! {
    /// 0x0100: 24 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct PlayerInput in const INPUT: &[Item] {
        pub tick: u32 = [it(IN_TICK, U32)],
        pub move_x: f32 = [it(IN_MOVE_X, F32)],
        pub move_y: f32 = [it(IN_MOVE_Y, F32)],
        pub look_x: f32 = [it(IN_LOOK_X, F32)],
        pub look_y: f32 = [it(IN_LOOK_Y, F32)],
        pub button_state: u32 = [it(IN_BUTTONS, BITS32)],
    }
}

/// WorldSnapshot's items: its tick, then the count of the entities that
/// follow them (`message.rs` reads them where the row puts them).
const SNAPSHOT: &[Item] = &[it(SN_TICK, U32), it(SN_COUNT, Prim::Count(Int::U8))];

record! {
    /// 0x0102: 34 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct EntitySpawn in const SPAWN: &[Item] {
        pub entity_id: u32 = [it(SP_ID, U32)],
        pub entity_type: u8 = [it(SP_TYPE, enum8(&ENTITY_TYPE))],
        pub position: Vector3 = [it(SP_POS_X, F32), it(SP_POS_Y, F32), it(SP_POS_Z, F32)],
        pub rotation: Quaternion = [
            it(SP_ROT_X, F32), it(SP_ROT_Y, F32), it(SP_ROT_Z, F32), it(SP_ROT_W, F32),
        ],
        pub owner_id: u8 = [it(SP_OWNER, U8)],
    }
}

record! {
    /// 0x0103: 5 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct EntityDestroy in const DESTROY: &[Item] {
        pub entity_id: u32 = [it(DE_ID, U32)],
        pub reason: u8 = [it(DE_REASON, enum8(&DESTROY_REASON))],
    }
}

record! {
    /// 0x0200: 9 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct PlayerScored in const SCORED: &[Item] {
        pub player_id: u32 = [it(SC_PLAYER, U32)],
        pub points: u32 = [it(SC_POINTS, U32)],
        pub score_type: u8 = [it(SC_TYPE, enum8(&SCORE_TYPE))],
    }
}

record! {
    /// 0x0201: 9 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct PlayerDied in const DIED: &[Item] {
        pub victim_id: u32 = [it(DI_VICTIM, U32)],
        pub killer_id: u32 = [it(DI_KILLER, U32)],
        pub death_type: u8 = [it(DI_TYPE, enum8(&DEATH_TYPE))],
    }
}

record! {
    /// 0x0202: 9 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct MatchState in const MATCH: &[Item] {
        pub state: u8 = [it(MS_STATE, enum8(&GAME_STATE))],
        pub time_remaining: u32 = [it(MS_TIME, U32)],
        pub team_scores: [u8; 4] = [
            it(MS_TEAM_SCORE, U8).at(0),
            it(MS_TEAM_SCORE, U8).at(1),
            it(MS_TEAM_SCORE, U8).at(2),
            it(MS_TEAM_SCORE, U8).at(3),
        ],
    }
}

record! {
    /// 0x0300: 261 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct ChatMessage in const CHAT: &[Item] {
        pub sender_id: u32 = [it(CH_SENDER, U32)],
        pub channel: u8 = [it(CH_CHANNEL, enum8(&CHAT_CHANNEL))],
        pub message: FixedStr<CHAT_MESSAGE_LEN> = [it(CH_MESSAGE, text(CHAT_MESSAGE_LEN))],
    }
}

/// `LAYOUTS`: a row per type, `Type: NODE = ITEMS`, with `+ ENTRY` for
/// the entries its count counts. The types must come in the order of
/// [`PacketType::ALL`] (checked at compile time).
macro_rules! payloads {
    ($( $t:ident: $node:ident $(+ $entry:ident)? = $items:expr; )*) => {
        /// Every type's payload, in the order of [`PacketType::ALL`] (by
        /// [`PacketType::ordinal`]), with the node its fields hang from. A
        /// constant, so that each row's walk is compiled with its fields as
        /// constants ([`walk`]); [`ROWS`] is where it lives at run time.
        pub(super) const LAYOUTS: [(FieldId, Layout); PacketType::COUNT] = [$(
            ($node, core::layout(&[], $items, payloads!(@entry $($entry)?), &[])),
        )*];

        const _: () = {
            let mut i = 0;
            $(
                assert!(PacketType::$t.ordinal() == i, "LAYOUTS: the types out of order");
                i += 1;
            )*
            assert!(i == PacketType::COUNT);
        };
    };
    (@entry) => { None };
    (@entry $e:ident) => { Some(&$e) };
}

payloads! {
    ConnectionRequest: N_REQUEST = REQUEST;
    ConnectionAccept: N_ACCEPT = ACCEPT;
    ConnectionReject: N_REJECT = REJECT;
    Disconnect: N_DISCONNECT = DISCONNECT;
    Heartbeat: N_HEARTBEAT = HEARTBEAT;
    PlayerInput: N_INPUT = INPUT;
    WorldSnapshot: N_SNAPSHOT + ENTITY = SNAPSHOT;
    EntitySpawn: N_SPAWN = SPAWN;
    EntityDestroy: N_DESTROY = DESTROY;
    PlayerScored: N_SCORED = SCORED;
    PlayerDied: N_DIED = DIED;
    MatchState: N_MATCH = MATCH;
    ChatMessage: N_CHAT = CHAT;
}

/// The rows alone, a constant (what the walk reads).
const PAYLOADS: [Layout; PacketType::COUNT] = {
    let mut rows = [row(&[]); PacketType::COUNT];
    let mut i = 0;
    while i < rows.len() {
        rows[i] = LAYOUTS[i].1;
        i += 1;
    }
    rows
};

/// [`PAYLOADS`] at a fixed address (a group's key is its row's).
static ROWS: [Layout; PacketType::COUNT] = PAYLOADS;

/// The items of a payload of type `t` (what its typed message reads,
/// `message.rs`).
pub(super) const fn items(t: PacketType) -> &'static [Item] {
    PAYLOADS[t.ordinal()].items
}

/// The layout of a payload of type `t`, a constant (what a counted
/// message's reader and writer take its count and entries from).
pub(super) const fn payload(t: PacketType) -> Layout {
    PAYLOADS[t.ordinal()]
}

impl PacketType {
    /// This type's payload layout.
    pub fn layout(self) -> &'static Layout {
        &ROWS[self.ordinal()]
    }

    /// The node of this type's message (`strs.heartbeat`).
    pub const fn node(self) -> FieldId {
        LAYOUTS[self.ordinal()].0
    }

    /// The payload length of a fixed-size type; for WorldSnapshot, its
    /// fixed part (the entities follow): the layout's.
    pub const fn min_payload_len(self) -> usize {
        PAYLOADS[self.ordinal()].fixed
    }
}

/// Starstrike's payloads, for the shared walk.
struct Payloads;

impl Table for Payloads {
    type H = FieldId;
    const ROWS: &'static [Layout] = &PAYLOADS;
}

/// The header, for the shared walk.
struct HeaderTable;

impl Table for HeaderTable {
    type H = FieldId;
    const ROWS: &'static [Layout] = &[row(&HEADER_ITEMS)];
}

/// The payload length a type needs, given what is present: a fixed type
/// its size; a counted one (WorldSnapshot) its fixed part and as many
/// entries as its count (the last of its items, `codec::read_count`)
/// says, or its fixed part while the count is missing.
pub fn needed_len(t: PacketType, payload: &[u8]) -> usize {
    let s = &SIZES[t.ordinal()];
    match payload.get(s.count_at) {
        Some(&count) => s.fixed + s.entry * usize::from(count),
        None => s.fixed,
    }
}

/// A WorldSnapshot's entity count, its count byte; 0 for the other types
/// or while the count is missing (`codec::read_count`'s, from `SIZES`).
pub fn entry_count(t: PacketType, payload: &[u8]) -> usize {
    let s = &SIZES[t.ordinal()];
    match payload.get(s.count_at) {
        Some(&count) if s.entry != 0 => usize::from(count),
        _ => 0,
    }
}

/// What a payload's length depends on, by type: its fixed part, and for a
/// counted one where its `u8` count is and its entries' length (the count
/// at 0 and no entries for the others: their length is the fixed part
/// whatever byte 0 holds). Taken from the layouts at compile time, so that
/// [`needed_len`] reads a byte and a row, not the layout's items (twice a
/// packet, ~20 instructions each).
struct Sizes {
    fixed: usize,
    count_at: usize,
    entry: usize,
}

const SIZES: [Sizes; PacketType::COUNT] = {
    let mut out = [const {
        Sizes {
            fixed: 0,
            count_at: 0,
            entry: 0,
        }
    }; PacketType::COUNT];
    let mut i = 0;
    while i < out.len() {
        let l = &PAYLOADS[i];
        out[i].fixed = l.fixed;
        match count_item(l) {
            Some((at, Int::U8)) => {
                out[i].count_at = at;
                out[i].entry = counted_len(l, 1) - l.fixed;
            }
            Some(_) => panic!("Starstrike's counts are u8"),
            None => {}
        }
        i += 1;
    }
    out
};

/// Walks the payload of a checked packet of type `t` (exactly as long as
/// [`needed_len`] says): [`walk`] without its length test.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn walk_whole<V: Visit<FieldId>>(t: PacketType, payload: &[u8], v: &mut V) {
    core::walk_table::<Payloads, V>(t.ordinal(), payload, HEADER_LEN, ByteOrder::Big, v);
}

/// Walks a payload of type `t` (`payload`, after the header): its fields,
/// a snapshot's entities. A whole payload's walk is straight code of its
/// own per type (`core::walk_row`), inlined into each view's one caller;
/// one cut short walks every field whose bytes are all present
/// (`core::walk_cut`).
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn walk<V: Visit<FieldId>>(t: PacketType, payload: &[u8], v: &mut V) {
    if payload.len() >= needed_len(t, payload) {
        core::walk_table::<Payloads, V>(t.ordinal(), payload, HEADER_LEN, ByteOrder::Big, v);
    } else {
        core::walk_cut(t.layout(), payload, HEADER_LEN, ByteOrder::Big, v);
    }
}

/// Walks the header's fields (`bytes`, the packet, at least a header long).
pub(super) fn walk_header<V: Visit<FieldId>>(bytes: &[u8], v: &mut V) {
    core::walk_row::<HeaderTable, 0, V>(bytes, 0, ByteOrder::Big, v);
}

/// The item of a payload of type `t` that holds the byte at `offset` (from
/// the start of the payload), with where it starts; `None` past the fixed
/// part of a type without entries (`core::item_at`). A truncation names
/// the field its first missing byte belongs to.
pub fn item_at_offset(t: PacketType, offset: usize) -> Option<(usize, &'static Item)> {
    core::item_at(t.layout(), offset)
}

/// [`item_at_offset`]'s field.
pub fn field_at(t: PacketType, offset: usize) -> Option<(usize, FieldId)> {
    item_at_offset(t, offset).map(|(at, item)| (at, item.def))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::layout::size;

    /// The notes' sizes: an entity of 47 bytes, a snapshot's fixed 5, and
    /// 25 entities within the MTU.
    #[test]
    fn snapshot_lengths_are_the_notes() {
        assert_eq!(ENTITY_STATE_LEN, 47);
        assert_eq!(SNAPSHOT_FIXED_LEN, 5);
        assert_eq!(MAX_ENTITIES_IN_MTU, 25);
    }

    #[test]
    fn layouts_are_as_long_as_the_notes_say() {
        let sizes = [41, 12, 129, 129, 4, 24, 5, 34, 5, 9, 9, 9, 261];
        for (t, n) in PacketType::ALL.iter().zip(sizes) {
            assert_eq!(size(t.layout().items), n, "{t}");
        }
        assert_eq!(ENTITY.len, 47);
        assert_eq!(size(&HEADER), HEADER_LEN);
        // A row a type, as ALL lists them, under the node of its name.
        for t in PacketType::ALL {
            assert_eq!(t.node().def().label, t.name());
            assert_eq!(t.layout().entry.is_some(), t == PacketType::WorldSnapshot);
        }
    }

    #[test]
    fn field_names_are_unique_and_namespaced() {
        let mut names: Vec<_> = FIELDS.iter().map(|f| f.name).collect();
        assert!(names.iter().all(|n| n.starts_with("strs.")));
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
        assert_eq!(f::SEQ.def().name, "strs.seq");
        assert_eq!(
            FieldId::from_index(u64::from(f::CH_MESSAGE.index())),
            Some(f::CH_MESSAGE)
        );
        assert_eq!(FieldId::from_index(9999), None);
    }

    #[test]
    fn the_field_of_a_byte() {
        assert_eq!(
            field_at(PacketType::ConnectionRequest, 5),
            Some((1, f::REQ_NAME))
        );
        assert_eq!(field_at(PacketType::ConnectionRequest, 41), None);
        // Second entity's health.
        let health = SNAPSHOT_FIXED_LEN + ENTITY_STATE_LEN + 45;
        assert_eq!(
            field_at(PacketType::WorldSnapshot, health),
            Some((health, f::EN_HEALTH))
        );
    }

    /// A packet's text needs a JSON escape only in its pieces from the wire
    /// (the padded texts: `Text::write_json` tells JSON Lines to search
    /// from the first of those): the type's name, every label (an entity's
    /// too) and every name an enum shows need none.
    #[test]
    fn fixed_texts_need_no_json_escape() {
        use crate::proto::layout::{fixed_texts, json_plain};
        for t in PacketType::ALL {
            assert!(json_plain(t.name()), "{}", t.name());
            for s in fixed_texts(t.layout()) {
                assert!(json_plain(s), "{s:?}");
            }
        }
    }

    #[test]
    fn a_snapshot_needs_its_count_of_entities() {
        let t = PacketType::WorldSnapshot;
        assert_eq!(needed_len(t, &[0, 0, 0, 1]), 5);
        assert_eq!(needed_len(t, &[0, 0, 0, 1, 2]), 5 + 94);
        assert_eq!(needed_len(PacketType::Heartbeat, &[]), 4);
        assert_eq!(needed_len(PacketType::Heartbeat, &[9, 9, 9, 9]), 4);
        // The table gives what the layout's count item says.
        for t in PacketType::ALL {
            for b in [&[][..], &[0, 0, 0, 0], &[0, 0, 0, 0, 3], &[7; 40]] {
                let l = t.layout();
                let count = crate::proto::codec::read_count(l, b, ByteOrder::Big);
                let needed = count.map_or(l.fixed, |n| counted_len(l, n));
                assert_eq!(needed_len(t, b), needed, "{t:?} {b:?}");
                assert_eq!(entry_count(t, b), count.unwrap_or(0), "{t:?} {b:?}");
            }
        }
    }
}
