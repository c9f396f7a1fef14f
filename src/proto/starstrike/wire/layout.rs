//! The registered fields ([`FIELDS`]) and where each sits in each packet type:
//! one table drives the field walk, the violation checks and the offset of a
//! truncation, so that the three always agree with the byte layout.

use super::types::{EnumKind, PacketType, SNAPSHOT_FIXED_LEN};
use crate::proto::field::{FieldDef, FieldType};

macro_rules! fields {
    ($( $id:ident = $name:literal, $label:literal, $ty:ident, $doc:literal; )*) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u16)]
        enum Idx { $( $id, )* }

        /// Every Starstrike field, registered for the display filter (`strs.seq`),
        /// field output and documentation.
        pub static FIELDS: &[FieldDef] = &[
            $( FieldDef { name: $name, label: $label, ty: FieldType::$ty, doc: $doc }, )*
        ];

        /// Handles on the registered fields.
        pub mod f {
            use super::{FieldId, Idx};
            $( pub const $id: FieldId = FieldId(Idx::$id as u16); )*
        }
    };
}

fields! {
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

/// A handle on a registered field: its index in [`FIELDS`]. Small enough to
/// travel inside a finding's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldId(u16);

impl FieldId {
    /// The registered definition.
    pub fn def(self) -> &'static FieldDef {
        // Every FieldId is made from the table's own indices.
        FIELDS.get(usize::from(self.0)).unwrap_or(&PLACEHOLDER)
    }

    /// The index, as a number.
    pub const fn index(self) -> u16 {
        self.0
    }

    /// A field by its index, if there is one.
    pub fn from_index(i: u64) -> Option<FieldId> {
        (i < FIELDS.len() as u64).then_some(FieldId(i as u16))
    }
}

static PLACEHOLDER: FieldDef = FieldDef {
    name: "strs",
    label: "?",
    ty: FieldType::Node,
    doc: "",
};

/// How the bytes of a field read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prim {
    U8,
    U16,
    U32,
    U64,
    F32,
    /// A fixed string, NUL-padded.
    Str,
    /// A `u8` enumeration.
    Enum(EnumKind),
    /// A bit field of `len * 8` bits.
    Bits,
    /// A `u32` written in hexadecimal (a magic number, as lwar's appId).
    Hex32,
}

/// One field of a layout: where it is (from the start of the payload, or of the
/// entity), how long, how it reads, and for a repeated field its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub field: FieldId,
    pub offset: usize,
    pub len: usize,
    pub prim: Prim,
    pub index: Option<u32>,
}

const fn s(field: FieldId, offset: usize, len: usize, prim: Prim) -> Slot {
    Slot {
        field,
        offset,
        len,
        prim,
        index: None,
    }
}

const fn si(field: FieldId, offset: usize, index: u32) -> Slot {
    Slot {
        field,
        offset,
        len: 1,
        prim: Prim::U8,
        index: Some(index),
    }
}

use Prim::*;

/// The header, from the start of the packet.
pub static HEADER: [Slot; 4] = [
    s(f::MAGIC, 0, 4, Hex32),
    s(f::TYPE, 4, 2, U16),
    s(f::SEQ, 6, 2, U16),
    s(f::ACK_BITS, 8, 4, Bits),
];

static REQUEST: [Slot; 3] = [
    s(f::REQ_VERSION, 0, 1, U8),
    s(f::REQ_NAME, 1, 32, Str),
    s(f::REQ_CLIENT_ID, 33, 8, U64),
];
static ACCEPT: [Slot; 3] = [
    s(f::ACC_PLAYER_ID, 0, 4, U32),
    s(f::ACC_SERVER_TICK, 4, 4, U32),
    s(f::ACC_TICK_RATE, 8, 4, U32),
];
static REJECT: [Slot; 2] = [
    s(f::REJ_REASON, 0, 1, Enum(EnumKind::RejectReason)),
    s(f::REJ_MESSAGE, 1, 128, Str),
];
static DISCONNECT: [Slot; 2] = [
    s(f::DIS_REASON, 0, 1, Enum(EnumKind::DisconnectReason)),
    s(f::DIS_MESSAGE, 1, 128, Str),
];
static HEARTBEAT: [Slot; 1] = [s(f::HB_TIMESTAMP, 0, 4, U32)];
static INPUT: [Slot; 6] = [
    s(f::IN_TICK, 0, 4, U32),
    s(f::IN_MOVE_X, 4, 4, F32),
    s(f::IN_MOVE_Y, 8, 4, F32),
    s(f::IN_LOOK_X, 12, 4, F32),
    s(f::IN_LOOK_Y, 16, 4, F32),
    s(f::IN_BUTTONS, 20, 4, Bits),
];
static SNAPSHOT: [Slot; 2] = [s(f::SN_TICK, 0, 4, U32), s(f::SN_COUNT, 4, 1, U8)];
/// One EntityState, from the start of the entity.
pub static ENTITY: [Slot; 14] = [
    s(f::EN_ID, 0, 4, U32),
    s(f::EN_TYPE, 4, 1, Enum(EnumKind::EntityType)),
    s(f::EN_POS_X, 5, 4, F32),
    s(f::EN_POS_Y, 9, 4, F32),
    s(f::EN_POS_Z, 13, 4, F32),
    s(f::EN_ROT_X, 17, 4, F32),
    s(f::EN_ROT_Y, 21, 4, F32),
    s(f::EN_ROT_Z, 25, 4, F32),
    s(f::EN_ROT_W, 29, 4, F32),
    s(f::EN_VEL_X, 33, 4, F32),
    s(f::EN_VEL_Y, 37, 4, F32),
    s(f::EN_VEL_Z, 41, 4, F32),
    s(f::EN_HEALTH, 45, 1, U8),
    s(f::EN_FLAGS, 46, 1, Bits),
];
static SPAWN: [Slot; 10] = [
    s(f::SP_ID, 0, 4, U32),
    s(f::SP_TYPE, 4, 1, Enum(EnumKind::EntityType)),
    s(f::SP_POS_X, 5, 4, F32),
    s(f::SP_POS_Y, 9, 4, F32),
    s(f::SP_POS_Z, 13, 4, F32),
    s(f::SP_ROT_X, 17, 4, F32),
    s(f::SP_ROT_Y, 21, 4, F32),
    s(f::SP_ROT_Z, 25, 4, F32),
    s(f::SP_ROT_W, 29, 4, F32),
    s(f::SP_OWNER, 33, 1, U8),
];
static DESTROY: [Slot; 2] = [
    s(f::DE_ID, 0, 4, U32),
    s(f::DE_REASON, 4, 1, Enum(EnumKind::DestroyReason)),
];
static SCORED: [Slot; 3] = [
    s(f::SC_PLAYER, 0, 4, U32),
    s(f::SC_POINTS, 4, 4, U32),
    s(f::SC_TYPE, 8, 1, Enum(EnumKind::ScoreType)),
];
static DIED: [Slot; 3] = [
    s(f::DI_VICTIM, 0, 4, U32),
    s(f::DI_KILLER, 4, 4, U32),
    s(f::DI_TYPE, 8, 1, Enum(EnumKind::DeathType)),
];
static MATCH: [Slot; 6] = [
    s(f::MS_STATE, 0, 1, Enum(EnumKind::GameState)),
    s(f::MS_TIME, 1, 4, U32),
    si(f::MS_TEAM_SCORE, 5, 0),
    si(f::MS_TEAM_SCORE, 6, 1),
    si(f::MS_TEAM_SCORE, 7, 2),
    si(f::MS_TEAM_SCORE, 8, 3),
];
static CHAT: [Slot; 3] = [
    s(f::CH_SENDER, 0, 4, U32),
    s(f::CH_CHANNEL, 4, 1, Enum(EnumKind::ChatChannel)),
    s(f::CH_MESSAGE, 5, 256, Str),
];

/// The fields of a type's payload, in wire order (for WorldSnapshot, its fixed
/// part: the entities follow, each laid out as [`ENTITY`]).
pub fn payload_layout(t: PacketType) -> &'static [Slot] {
    match t {
        PacketType::ConnectionRequest => &REQUEST,
        PacketType::ConnectionAccept => &ACCEPT,
        PacketType::ConnectionReject => &REJECT,
        PacketType::Disconnect => &DISCONNECT,
        PacketType::Heartbeat => &HEARTBEAT,
        PacketType::PlayerInput => &INPUT,
        PacketType::WorldSnapshot => &SNAPSHOT,
        PacketType::EntitySpawn => &SPAWN,
        PacketType::EntityDestroy => &DESTROY,
        PacketType::PlayerScored => &SCORED,
        PacketType::PlayerDied => &DIED,
        PacketType::MatchState => &MATCH,
        PacketType::ChatMessage => &CHAT,
    }
}

/// The node field of a type's message.
pub const fn node(t: PacketType) -> FieldId {
    match t {
        PacketType::ConnectionRequest => f::N_REQUEST,
        PacketType::ConnectionAccept => f::N_ACCEPT,
        PacketType::ConnectionReject => f::N_REJECT,
        PacketType::Disconnect => f::N_DISCONNECT,
        PacketType::Heartbeat => f::N_HEARTBEAT,
        PacketType::PlayerInput => f::N_INPUT,
        PacketType::WorldSnapshot => f::N_SNAPSHOT,
        PacketType::EntitySpawn => f::N_SPAWN,
        PacketType::EntityDestroy => f::N_DESTROY,
        PacketType::PlayerScored => f::N_SCORED,
        PacketType::PlayerDied => f::N_DIED,
        PacketType::MatchState => f::N_MATCH,
        PacketType::ChatMessage => f::N_CHAT,
    }
}

/// The field of a payload that holds the byte at `offset` (from the start of the
/// payload), for a payload of type `t` with `entities` entities; `None` past
/// its end. A truncation names the field its first missing byte belongs to.
pub fn field_at(t: PacketType, offset: usize) -> Option<(usize, FieldId)> {
    let fixed = payload_layout(t);
    if let Some(slot) = fixed
        .iter()
        .find(|s| s.offset <= offset && offset < s.offset + s.len)
    {
        return Some((slot.offset, slot.field));
    }
    if t != PacketType::WorldSnapshot || offset < SNAPSHOT_FIXED_LEN {
        return None;
    }
    let rel = offset - SNAPSHOT_FIXED_LEN;
    let base = rel - rel % super::types::ENTITY_STATE_LEN;
    let within = rel % super::types::ENTITY_STATE_LEN;
    ENTITY
        .iter()
        .find(|s| s.offset <= within && within < s.offset + s.len)
        .map(|s| (SNAPSHOT_FIXED_LEN + base + s.offset, s.field))
}

#[cfg(test)]
mod tests {
    use super::super::types::ENTITY_STATE_LEN;
    use super::*;

    fn contiguous(slots: &[Slot], len: usize) {
        let mut at = 0;
        for slot in slots {
            assert_eq!(slot.offset, at, "{}", slot.field.def().name);
            at += slot.len;
        }
        assert_eq!(at, len);
    }

    #[test]
    fn layouts_are_contiguous_and_as_long_as_the_notes_say() {
        for t in PacketType::ALL {
            contiguous(payload_layout(t), t.min_payload_len());
        }
        contiguous(&ENTITY, ENTITY_STATE_LEN);
        contiguous(&HEADER, super::super::types::HEADER_LEN);
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
}
