//! lwar's wire layout, declared once: the registered fields ([`FIELDS`]) and,
//! for the header and each record, the fields in wire order with their
//! primitive (size, byte order, sign), the label of the field tree and the
//! piece of the one-line text each writes. The machinery is shared by every
//! native protocol (`crate::proto::layout`: primitives, items, entries, the
//! walk and the visitors); this file and the messages' declaration
//! (`message.rs`) hold lwar's table only. One walk over a message's bytes
//! (`message.rs`, `walk`, on the table of the messages' rows) reads it, and
//! every view is a visitor of it: the typed field walk of `-Y`, `-T fields`
//! and JSON (`fields.rs`), the field tree of `-V` and the one-line text
//! (`display.rs`), the groups a sink that shows only some fields is asked
//! about. The decoder reads its lengths from it too
//! ([`MessageType::fixed_body_len`], [`MessageType::entry_len`],
//! [`MessageType::has_string`]), so the views and the decoder cannot
//! disagree on where a field is.
//!
//! The fixed-size records (the entries of Stats and the Update family,
//! Input, Collision) are declared with their rows below, a field and its
//! items together (`record!` of `crate::proto::codec`): their reader and
//! writer take offsets, sizes and byte order from the rows, checked at
//! compile time to hold them field for field. The message enum,
//! [`super::MessageOf`] (borrowed, [`super::Message`], or owned,
//! [`super::MessageRepr`]), is declared once with the codec's `messages!`
//! (`message.rs`, a line a type): a reliable message's seqno names its item
//! in its row's head, its other fields are declared with their items
//! (which are its type's row: `message.rs`, `LAYOUTS`), an unreliable one
//! holds its record or its entries; from it come the decoder, the encoder,
//! the owned copy and the type of a message, each field read and written
//! at its row's offset, a text's length and an entry count where the row
//! puts them, and the entries read in place by the codec's `Entries`
//! (Starstrike's too). What stays hand-written: the accessors the analysis
//! asks of any message (its seqno, player, text) and the compact token
//! (`Join#1`, `Update(5)`).
//!
//! # Adding a field to a message
//!
//! 1. Register it in [`FIELDS`] (`fields!` below: filter name, tree label,
//!    type, documentation), unless it reuses one (`lwar.player`).
//! 2. For a record (an entry, Input, Collision): add it to its struct in
//!    `record!` below, in wire order, with its items: `pub health: u8 =
//!    [it(HEALTH, U8, "health", "° hp=")]` (its primitive, tree label and
//!    text piece). The row follows, and from it the field walk, the tree,
//!    the text, `--list-fields`' groups and the decoder's lengths; the
//!    decoder, the encoder and the owned copy follow from the struct.
//!
//!    For a reliable message: add it to its line in `messages!`
//!    (`message.rs`), in wire order, with its items: `type_id: u8 =
//!    [it(F::TYPE_ID, U8, "typeId", " type=")]`. Its type's row follows
//!    (and the views with it), and the decoder, the encoder and the owned
//!    copy.
//!
//! Set it where the simulator builds the message.

use super::types::{Id, MessageType};
use crate::proto::codec::record;
use crate::proto::field::FieldDef;
use crate::proto::layout::{
    self as core, ByteOrder, Int, Names, Quote, Show, Visit, entry, hidden, it,
};

/// A registered field by its index: a stable address in [`FIELDS`].
pub(super) fn field(f: F) -> &'static FieldDef {
    f.def()
}

/// lwar's items, entries and layouts (every number big-endian).
pub(super) type Item = core::Item<F>;
pub(super) type Entry = core::Entry<F>;
pub(super) type Layout = core::Layout<F>;

// lwar's primitives.
pub(super) const U8: Prim = Prim::Int(Int::U8, Show::Dec);
const U16: Prim = Prim::Int(Int::U16, Show::Dec);
const U32: Prim = Prim::Int(Int::U32, Show::Dec);
const I16: Prim = Prim::Int(Int::I16, Show::Dec);
/// A generational id: u16 generation, u16 index.
pub(super) const ID: Prim = Prim::Pair16;
/// A key state byte, shown in binary.
const KEYS: Prim = Prim::Int(Int::U8, Show::Bits);
/// A u32 shown in hex (the appId).
const HEX32: Prim = Prim::Int(Int::U32, Show::Hex);
/// The message type byte: a type lwar does not define ends the walk.
const TYPE_BYTE: Prim = Prim::Int(Int::U8, Show::Enum(&TYPE_NAMES));
/// A string's u8 length (`lwar.name_len`, labelled `len`), then its text.
const LEN: Prim = Prim::Len(Int::U8);
pub(super) const TEXT: Prim = Prim::Text(Quote::Debug);
/// A u8 count of the entries that follow the message's items.
const COUNT_BYTE: Prim = Prim::Count(Int::U8);

use crate::proto::layout::Prim;

static TYPE_NAMES: Names = Names {
    name: |raw, _| match u8::try_from(raw) {
        Ok(id) => match MessageType::from_u8(id) {
            Some(t) => Some(t.name()),
            None => None,
        },
        Err(_) => None,
    },
    known: true,
    tree_named: false,
    text_named: false,
};

core::fields! {
    /// Each field's index in [`FIELDS`].
    pub(super) enum F;
    /// Every field lwar registers, in wire order of first appearance.
    pub static FIELDS;
    APP_ID = "lwar.app_id", "appId", Unsigned, "The protocol's identifier, 0xf27087c5.";
    ACK = "lwar.ack", "ack", Unsigned, "Highest reliable seqno received from the peer, in order.";
    TIMESTAMP = "lwar.timestamp", "timestamp", Unsigned, "The sender's clock, in ms.";
    MESSAGE = "lwar.message", "message", Node, "One message of the packet.";
    TYPE = "lwar.type", "type", Enum, "The message type.";
    SEQNO = "lwar.seqno", "seqno", Unsigned, "The sequence number of a reliable message.";
    PLAYER = "lwar.player", "playerId", Pair, "A player's id, generation:index.";
    ENTITY = "lwar.entity", "entityId", Pair, "An entity's id, generation:index.";
    NAME_LEN = "lwar.name_len", "len", Unsigned, "The length of the string that follows.";
    NAME = "lwar.name", "name", Text, "A player's name (Connect, Join, Name).";
    CHAT = "lwar.chat.text", "msg", Text, "A chat message's text.";
    TYPE_ID = "lwar.add.type_id", "typeId", Unsigned, "The type of an added entity.";
    SHIP = "lwar.selection.ship_type", "shipType", Unsigned, "The ship a player selected.";
    WEAPON = "lwar.selection.weapon_type", "weaponType", Unsigned, "A weapon a player selected (4 slots).";
    INPUT_FRAME = "lwar.input.frame", "frameNo", Unsigned, "The input's frame number.";
    FORWARD = "lwar.input.forward", "forward", Bits, "Forward key, one bit per sub-frame.";
    BACKWARD = "lwar.input.backward", "backward", Bits, "Backward key, one bit per sub-frame.";
    TURN_LEFT = "lwar.input.turn_left", "turnLeft", Bits, "Turn-left key, one bit per sub-frame.";
    TURN_RIGHT = "lwar.input.turn_right", "turnRight", Bits, "Turn-right key, one bit per sub-frame.";
    STRAFE_LEFT = "lwar.input.strafe_left", "strafeLeft", Bits, "Strafe-left key, one bit per sub-frame.";
    STRAFE_RIGHT = "lwar.input.strafe_right", "strafeRight", Bits, "Strafe-right key, one bit per sub-frame.";
    SHOOTING = "lwar.input.shooting", "shooting", Bits, "A weapon's trigger, one bit per sub-frame (4 weapons).";
    AIM_X = "lwar.input.aim_x", "aimX", Signed, "Aim, x.";
    AIM_Y = "lwar.input.aim_y", "aimY", Signed, "Aim, y.";
    X = "lwar.x", "x", Signed, "A position's x (Collision, Update entries).";
    Y = "lwar.y", "y", Signed, "A position's y (Collision, Update entries).";
    NUM = "lwar.num", "num", Unsigned, "The number of entries that follow.";
    STATS = "lwar.stats", "stats", Node, "One player's statistics.";
    KILLS = "lwar.stats.kills", "kills", Unsigned, "Kills.";
    DEATHS = "lwar.stats.deaths", "deaths", Unsigned, "Deaths.";
    PING = "lwar.stats.ping", "ping", Unsigned, "Ping, in ms.";
    UPDATE = "lwar.update", "update", Node, "One entity's update.";
    ORIENTATION = "lwar.update.orientation", "orientation", Unsigned, "An entity's orientation.";
    HEALTH = "lwar.update.health", "health", Unsigned, "An entity's health.";
    LENGTH = "lwar.update.length", "length", Unsigned, "A ray's length.";
    RADIUS = "lwar.update.radius", "radius", Unsigned, "A circle's radius.";
}

use F::*;

/// The packet header, from the start of the packet.
pub(super) static HEADER: [Item; 3] = [
    hidden(APP_ID, HEX32, "appId"),
    hidden(ACK, U32, "ack"),
    hidden(TIMESTAMP, U32, "timestamp"),
];

/// Every message's type byte.
pub(super) const TYPE_ITEM: Item = hidden(TYPE, TYPE_BYTE, "type");
/// A reliable message's seqno, after its type.
pub(super) const SEQNO_ITEM: Item = hidden(SEQNO, U32, "seqno");

pub(super) const PLAYER_ID: Item = it(PLAYER, ID, "playerId", " player=");
/// A string's length, before its text.
pub(super) const STR_LEN: Item = hidden(NAME_LEN, LEN, "len");
pub(super) const NAME_STR: Item = it(NAME, TEXT, "name", " name=");

// The fixed-size records, each declared with its row: a field and its
// items (what the codec reads and writes it at, `record!`).

record! {
    /// One player's line of a Stats message (10 bytes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct StatsEntry in const STATS_ITEMS: &[Item] {
        pub player: Id = [it(PLAYER, ID, "player", " [")],
        pub kills: u16 = [it(KILLS, U16, "kills", " k=")],
        pub deaths: u16 = [it(DEATHS, U16, "deaths", " d=")],
        pub ping: u16 = [it(PING, U16, "ping", " ping=").then("]")],
    }
}

pub(super) const STATS_ENTRY: Entry = entry(STATS, STATS_ITEMS);
/// An update entry starts `[entity (x,y)`.
const UPDATE_ENTITY: Item = it(ENTITY, ID, "entityId", " [");
const UPDATE_X: Item = it(X, I16, "x", " (");
const UPDATE_Y: Item = it(Y, I16, "y", ",");

record! {
    /// One entity of an Update message (11 bytes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct UpdateEntry in const UPDATE_ITEMS: &[Item] {
        pub entity: Id = [UPDATE_ENTITY],
        pub x: i16 = [UPDATE_X],
        pub y: i16 = [UPDATE_Y.then(")")],
        pub orientation: u16 = [it(ORIENTATION, U16, "orientation", " ")],
        pub health: u8 = [it(HEALTH, U8, "health", "° hp=").then("]")],
    }
}

record! {
    /// One entity of an UpdatePos message (8 bytes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct UpdatePosEntry in const UPDATE_POS_ITEMS: &[Item] {
        pub entity: Id = [UPDATE_ENTITY],
        pub x: i16 = [UPDATE_X],
        pub y: i16 = [UPDATE_Y.then(")]")],
    }
}

record! {
    /// One entity of an UpdateRay message (12 bytes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct UpdateRayEntry in const UPDATE_RAY_ITEMS: &[Item] {
        pub entity: Id = [UPDATE_ENTITY],
        pub x: i16 = [UPDATE_X],
        pub y: i16 = [UPDATE_Y.then(")")],
        pub orientation: u16 = [it(ORIENTATION, U16, "orientation", " ")],
        pub length: u16 = [it(LENGTH, U16, "length", "° len=").then("]")],
    }
}

record! {
    /// One entity of an UpdateCircle message (10 bytes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct UpdateCircleEntry in const UPDATE_CIRCLE_ITEMS: &[Item] {
        pub entity: Id = [UPDATE_ENTITY],
        pub x: i16 = [UPDATE_X],
        pub y: i16 = [UPDATE_Y.then(")")],
        pub radius: u16 = [it(RADIUS, U16, "radius", " r=").then("]")],
    }
}

pub(super) const UPDATE_ENTRY: Entry = entry(UPDATE, UPDATE_ITEMS);
pub(super) const UPDATE_POS_ENTRY: Entry = entry(UPDATE, UPDATE_POS_ITEMS);
pub(super) const UPDATE_RAY_ENTRY: Entry = entry(UPDATE, UPDATE_RAY_ITEMS);
pub(super) const UPDATE_CIRCLE_ENTRY: Entry = entry(UPDATE, UPDATE_CIRCLE_ITEMS);

record! {
    /// The body of an Input message (22 bytes). Each key state holds the
    /// current state in bit 0 and the seven previous ones in bits 1 to 7.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct Input in pub(super) const INPUT: &[Item] {
        pub player: Id = [PLAYER_ID],
        pub frame: u32 = [it(INPUT_FRAME, U32, "frameNo", " frame=")],
        pub forward: u8 = [it(FORWARD, KEYS, "forward", " fwd=")],
        pub backward: u8 = [it(BACKWARD, KEYS, "backward", " back=")],
        pub turn_left: u8 = [it(TURN_LEFT, KEYS, "turnLeft", " left=")],
        pub turn_right: u8 = [it(TURN_RIGHT, KEYS, "turnRight", " right=")],
        pub strafe_left: u8 = [it(STRAFE_LEFT, KEYS, "strafeLeft", " sleft=")],
        pub strafe_right: u8 = [it(STRAFE_RIGHT, KEYS, "strafeRight", " sright=")],
        pub shooting: [u8; 4] = [
            it(SHOOTING, KEYS, "shooting", " shoot=").at(0),
            it(SHOOTING, KEYS, "shooting", ",").at(1),
            it(SHOOTING, KEYS, "shooting", ",").at(2),
            it(SHOOTING, KEYS, "shooting", ",").at(3),
        ],
        pub aim_x: i16 = [it(AIM_X, I16, "aimX", " aim=(")],
        pub aim_y: i16 = [it(AIM_Y, I16, "aimY", ",").then(")")],
    }
}

record! {
    /// The body of a Collision message (12 bytes).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct Collision in pub(super) const COLLISION: &[Item] {
        pub entities: [Id; 2] = [
            it(ENTITY, ID, "entityId", " entities=").at(0),
            it(ENTITY, ID, "entityId", ",").at(1),
        ],
        pub x: i16 = [it(X, I16, "x", " at=(")],
        pub y: i16 = [it(Y, I16, "y", ",").then(")")],
    }
}

/// A counted message's count, after its head.
pub(super) const COUNT: Item = hidden(NUM, COUNT_BYTE, "num");

/// Walks the packet header's fields.
pub(super) fn walk_header<V: Visit<F>>(b: &[u8], v: &mut V) {
    core::walk_items(
        &HEADER,
        b,
        0,
        ByteOrder::Big,
        &mut core::Cursor::default(),
        v,
    );
}

#[cfg(test)]
mod tests {
    use super::super::entries::{
        Collision, Input, Record, StatsEntry, UpdateCircleEntry, UpdateEntry, UpdatePosEntry,
        UpdateRayEntry,
    };
    use super::*;
    use crate::proto::layout::size;

    /// A message's text needs a JSON escape only in its pieces from the
    /// wire (`Text::write_json` tells JSON Lines to search from the first
    /// of those): the names of the types (its token) and every piece the
    /// layout writes around a value need none.
    #[test]
    fn fixed_texts_need_no_json_escape() {
        use crate::proto::layout::{fixed_texts, json_plain};
        for t in MessageType::ALL {
            assert!(json_plain(t.name()), "{}", t.name());
            for s in fixed_texts(t.layout()) {
                assert!(json_plain(s), "{s:?}");
            }
        }
        assert!(json_plain("1° hp="));
    }

    /// The records the decoder and the encoder use are as long as the
    /// layout says.
    #[test]
    fn records_agree_with_the_layout() {
        assert_eq!(STATS_ENTRY.len, StatsEntry::LEN);
        assert_eq!(UPDATE_ENTRY.len, UpdateEntry::LEN);
        assert_eq!(UPDATE_POS_ENTRY.len, UpdatePosEntry::LEN);
        assert_eq!(UPDATE_RAY_ENTRY.len, UpdateRayEntry::LEN);
        assert_eq!(UPDATE_CIRCLE_ENTRY.len, UpdateCircleEntry::LEN);
        assert_eq!(MessageType::Input.layout().fixed, Input::LEN);
        assert_eq!(MessageType::Collision.layout().fixed, Collision::LEN);
        assert_eq!(size(&HEADER), super::super::HEADER_LEN);
        // The table is in wire-id order: a row per type, as ALL lists them.
        let strings: Vec<_> = MessageType::ALL
            .iter()
            .filter(|t| t.has_string())
            .map(|t| t.name())
            .collect();
        assert_eq!(strings, ["Connect", "Join", "Chat", "Name"]);
        let counted: Vec<_> = MessageType::ALL
            .iter()
            .filter_map(|t| Some((t.name(), t.entry_len()?)))
            .collect();
        assert_eq!(
            counted,
            [
                ("Stats", 10),
                ("Update", 11),
                ("UpdatePos", 8),
                ("UpdateRay", 12),
                ("UpdateCircle", 10)
            ]
        );
        let fixed: Vec<_> = MessageType::ALL
            .iter()
            .map(|t| t.fixed_body_len())
            .collect();
        assert_eq!(
            fixed,
            [1, 0, 5, 4, 5, 9, 4, 9, 5, 0, 1, 22, 0, 12, 1, 1, 1, 1]
        );
    }
}
