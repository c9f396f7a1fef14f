//! lwar's wire layout, declared once: the registered fields ([`FIELDS`]) and,
//! for the header and each message type, the fields in wire order with their
//! primitive (size, byte order, sign), the label of the field tree and the
//! piece of the one-line text each writes. One walk over a message's bytes
//! ([`walk`]) reads this table, and every view is a visitor of it: the typed
//! field walk of `-Y`, `-T fields` and JSON (`fields.rs`), the field tree of
//! `-V` and the one-line text (`display.rs`), the groups a sink that shows
//! only some fields is asked about. The decoder reads its lengths from it
//! too ([`MessageType::fixed_body_len`], [`MessageType::entry_len`],
//! [`MessageType::has_string`]), so the views and the decoder cannot
//! disagree on where a field is.
//!
//! What stays hand-written: the checked view's [`super::Message`] (the
//! typed values the analysis reads, zero-copy) and the owned
//! [`super::MessageRepr`] that encodes, with the records of `entries.rs`
//! (tests check them against this table: same lengths, same bytes), and
//! the compact token (`Join#1`, `Update(5)`).
//!
//! # Adding a field to a message
//!
//! 1. Register it in [`FIELDS`] (`fields!` below: filter name, tree label,
//!    type, documentation), unless it reuses one (`lwar.player`).
//! 2. Add one [`Item`] to the message's row in `LAYOUTS` (or its entry's
//!    table): its primitive, tree label and text piece. The field walk, the
//!    tree, the text, `--list-fields`' groups and the decoder's lengths
//!    follow.
//! 3. Add the value to the typed views the analysis and the simulator use,
//!    [`super::Message`] and [`super::MessageRepr`] (or the record of
//!    `entries.rs`), where they read or write it; the layout test
//!    (`records_agree_with_the_layout`) fails until their lengths agree.

use super::entries::{be_u16, be_u32, id_at};
use super::message::Str;
use super::types::{Id, MessageType};
use crate::proto::field::{FieldDef, FieldType};

macro_rules! fields {
    ($( $id:ident = $name:literal, $label:literal, $ty:ident, $doc:literal; )*) => {
        /// Each field's index in [`FIELDS`].
        #[allow(non_camel_case_types, clippy::upper_case_acronyms, clippy::enum_variant_names)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(super) enum F { $( $id, )* }

        /// Every field lwar registers, in wire order of first appearance.
        pub static FIELDS: [FieldDef; [$( F::$id, )*].len()] = [ $( FieldDef {
            name: $name,
            label: $label,
            ty: FieldType::$ty,
            doc: $doc,
        }, )* ];
    };
}

/// A registered field by its index: a stable address in [`FIELDS`], which the
/// filter compares by identity.
pub(super) fn field(f: F) -> &'static FieldDef {
    &FIELDS[f as usize]
}

fields! {
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

/// How a field's bytes read (big-endian, as every lwar number).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Prim {
    U8,
    U16,
    U32,
    I16,
    /// A generational id: u16 generation, u16 index.
    Id,
    /// A key state byte, shown in binary.
    Keys,
    /// A u32 shown in hex (the appId).
    Hex32,
    /// The message type byte.
    Type,
    /// A u8 length, then that many bytes of text (the length is
    /// `lwar.name_len`, labelled `len`).
    Str,
    /// A u8 count of the entries that follow the message's items.
    Count,
}

impl Prim {
    /// Its fixed size: for a string or a count, its length byte.
    const fn size(self) -> usize {
        match self {
            Prim::U8 | Prim::Keys | Prim::Type | Prim::Str | Prim::Count => 1,
            Prim::U16 | Prim::I16 => 2,
            Prim::U32 | Prim::Id | Prim::Hex32 => 4,
        }
    }
}

/// One field of a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Item {
    pub def: F,
    pub prim: Prim,
    /// The label of the field tree (`playerId`; `len` and this for a string).
    pub label: &'static str,
    /// The element's index, for fields that repeat (`weaponType[2]`).
    pub index: Option<u32>,
    /// What the one-line text writes before the value (`" player="`); none:
    /// the field is not in the text.
    pub pre: Option<&'static str>,
    /// What it writes after the value (`")"`).
    pub post: &'static str,
}

/// A field in the text after `pre`.
const fn it(def: F, prim: Prim, label: &'static str, pre: &'static str) -> Item {
    Item {
        def,
        prim,
        label,
        index: None,
        pre: Some(pre),
        post: "",
    }
}

/// A field the text does not show.
const fn hidden(def: F, prim: Prim, label: &'static str) -> Item {
    Item {
        def,
        prim,
        label,
        index: None,
        pre: None,
        post: "",
    }
}

impl Item {
    /// The `i`-th element of a repeated field.
    const fn at(mut self, i: u32) -> Item {
        self.index = Some(i);
        self
    }

    /// Written after the value in the text.
    const fn then(mut self, post: &'static str) -> Item {
        self.post = post;
        self
    }
}

/// The repeated entries of a counted message.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Entry {
    /// The node of each entry (`lwar.update`), labelled in the tree as its
    /// definition is.
    pub node: F,
    pub items: &'static [Item],
    /// The size of one entry.
    pub len: usize,
}

/// One message type's layout, after its type byte and seqno.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Layout {
    pub items: &'static [Item],
    /// The entries, after the count that ends `items`.
    pub entry: Option<&'static Entry>,
    /// The bytes of the body the type alone decides (a length or count
    /// byte included).
    pub fixed: usize,
    /// Whether the body ends in a u8-length string.
    pub string: bool,
}

const fn size(items: &[Item]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < items.len() {
        n += items[i].prim.size();
        i += 1;
    }
    n
}

const fn ends_in_string(items: &[Item]) -> bool {
    match items.last() {
        Some(item) => matches!(item.prim, Prim::Str),
        None => false,
    }
}

const fn layout(items: &'static [Item], entry: Option<&'static Entry>) -> Layout {
    Layout {
        items,
        entry,
        fixed: size(items),
        string: ends_in_string(items),
    }
}

const fn entry(node: F, items: &'static [Item]) -> Entry {
    Entry {
        node,
        items,
        len: size(items),
    }
}

use F::*;
use Prim::*;

/// The packet header, from the start of the packet.
pub(super) static HEADER: [Item; 3] = [
    hidden(APP_ID, Hex32, "appId"),
    hidden(ACK, U32, "ack"),
    hidden(TIMESTAMP, U32, "timestamp"),
];

/// Every message's type byte.
pub(super) const TYPE_ITEM: Item = hidden(TYPE, Type, "type");
/// A reliable message's seqno, after its type.
pub(super) const SEQNO_ITEM: Item = hidden(SEQNO, U32, "seqno");

const PLAYER_ID: Item = it(PLAYER, Id, "playerId", " player=");
const NAME_STR: Item = it(NAME, Str, "name", " name=");

const STATS_ENTRY: Entry = entry(
    STATS,
    &[
        it(PLAYER, Id, "player", " ["),
        it(KILLS, U16, "kills", " k="),
        it(DEATHS, U16, "deaths", " d="),
        it(PING, U16, "ping", " ping=").then("]"),
    ],
);
/// An update entry starts `[entity (x,y)`.
const UPDATE_ENTITY: Item = it(ENTITY, Id, "entityId", " [");
const UPDATE_X: Item = it(X, I16, "x", " (");
const UPDATE_Y: Item = it(Y, I16, "y", ",");
const UPDATE_ENTRY: Entry = entry(
    UPDATE,
    &[
        UPDATE_ENTITY,
        UPDATE_X,
        UPDATE_Y.then(")"),
        it(ORIENTATION, U16, "orientation", " "),
        it(HEALTH, U8, "health", "° hp=").then("]"),
    ],
);
const UPDATE_POS_ENTRY: Entry = entry(UPDATE, &[UPDATE_ENTITY, UPDATE_X, UPDATE_Y.then(")]")]);
const UPDATE_RAY_ENTRY: Entry = entry(
    UPDATE,
    &[
        UPDATE_ENTITY,
        UPDATE_X,
        UPDATE_Y.then(")"),
        it(ORIENTATION, U16, "orientation", " "),
        it(LENGTH, U16, "length", "° len=").then("]"),
    ],
);
const UPDATE_CIRCLE_ENTRY: Entry = entry(
    UPDATE,
    &[
        UPDATE_ENTITY,
        UPDATE_X,
        UPDATE_Y.then(")"),
        it(RADIUS, U16, "radius", " r=").then("]"),
    ],
);
const COUNT: Item = hidden(NUM, Count, "num");

/// Every message type's layout, in the order of [`MessageType::ALL`]
/// (by [`MessageType::ordinal`]). A constant, so that each row's walk is
/// compiled with the row's fields as constants (`walk`); [`ROWS`] is where
/// it lives at run time.
pub(super) const LAYOUTS: [Layout; MessageType::COUNT] = [
    // Connect
    layout(&[NAME_STR], None),
    // Disconnect
    layout(&[], None),
    // Join
    layout(&[PLAYER_ID, NAME_STR], None),
    // Leave
    layout(&[PLAYER_ID], None),
    // Chat
    layout(&[PLAYER_ID, it(CHAT, Str, "msg", " text=")], None),
    // Add
    layout(
        &[
            it(ENTITY, Id, "entityId", " entity="),
            PLAYER_ID,
            it(TYPE_ID, U8, "typeId", " type="),
        ],
        None,
    ),
    // Remove
    layout(&[it(ENTITY, Id, "entityId", " entity=")], None),
    // Selection
    layout(
        &[
            PLAYER_ID,
            it(SHIP, U8, "shipType", " ship="),
            it(WEAPON, U8, "weaponType", " weapons=").at(0),
            it(WEAPON, U8, "weaponType", ",").at(1),
            it(WEAPON, U8, "weaponType", ",").at(2),
            it(WEAPON, U8, "weaponType", ",").at(3),
        ],
        None,
    ),
    // Name
    layout(&[PLAYER_ID, NAME_STR], None),
    // Synced
    layout(&[], None),
    // Stats
    layout(&[COUNT], Some(&STATS_ENTRY)),
    // Input
    layout(
        &[
            PLAYER_ID,
            it(INPUT_FRAME, U32, "frameNo", " frame="),
            it(FORWARD, Keys, "forward", " fwd="),
            it(BACKWARD, Keys, "backward", " back="),
            it(TURN_LEFT, Keys, "turnLeft", " left="),
            it(TURN_RIGHT, Keys, "turnRight", " right="),
            it(STRAFE_LEFT, Keys, "strafeLeft", " sleft="),
            it(STRAFE_RIGHT, Keys, "strafeRight", " sright="),
            it(SHOOTING, Keys, "shooting", " shoot=").at(0),
            it(SHOOTING, Keys, "shooting", ",").at(1),
            it(SHOOTING, Keys, "shooting", ",").at(2),
            it(SHOOTING, Keys, "shooting", ",").at(3),
            it(AIM_X, I16, "aimX", " aim=("),
            it(AIM_Y, I16, "aimY", ",").then(")"),
        ],
        None,
    ),
    // Full
    layout(&[], None),
    // Collision
    layout(
        &[
            it(ENTITY, Id, "entityId", " entities=").at(0),
            it(ENTITY, Id, "entityId", ",").at(1),
            it(X, I16, "x", " at=("),
            it(Y, I16, "y", ",").then(")"),
        ],
        None,
    ),
    // Update
    layout(&[COUNT], Some(&UPDATE_ENTRY)),
    // UpdatePos
    layout(&[COUNT], Some(&UPDATE_POS_ENTRY)),
    // UpdateRay
    layout(&[COUNT], Some(&UPDATE_RAY_ENTRY)),
    // UpdateCircle
    layout(&[COUNT], Some(&UPDATE_CIRCLE_ENTRY)),
];

/// [`LAYOUTS`] at a fixed address (a group's key is its row's).
static ROWS: [Layout; MessageType::COUNT] = LAYOUTS;

impl MessageType {
    /// This type's layout.
    pub(super) fn layout(self) -> &'static Layout {
        &ROWS[self.ordinal()]
    }
}

/// A field's value as the layout reads it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Val<'a> {
    Num(u64),
    Signed(i64),
    Id(Id),
    Keys(u8),
    Hex(u64),
    Type(MessageType),
    /// A string: its length byte, then its bytes.
    Str(Str<'a>),
}

/// What a walk of a layout tells, in wire order.
pub(super) trait Visit {
    /// One field over `len` bytes at `at` (from the start of the packet).
    fn item(&mut self, item: &'static Item, at: usize, len: usize, v: Val<'_>);
    /// Whether to walk a counted message's entries.
    fn wants_entries(&mut self, _e: &'static Entry) -> bool {
        true
    }
    /// Entry `index` starts at `at`; its items follow, then [`Visit::leave`].
    fn enter(&mut self, e: &'static Entry, index: u32, at: usize);
    fn leave(&mut self);
}

/// `n` bytes of `b` at `at`; fewer (none) past its end, which a checked view
/// never asks.
fn bytes(b: &[u8], at: usize, n: usize) -> &[u8] {
    b.get(at..at.saturating_add(n)).unwrap_or_default()
}

fn byte(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

/// Reads `item` at `*at` in `b` (whose byte 0 is at `base` in the packet),
/// tells `v` and moves `at` past it; a count sets `count`. Always inlined:
/// `walk` calls it with each item of a row as a constant, so that each
/// message type's walk is straight code of its own, its primitives and
/// texts folded, as fast as one written by hand (the texts took 2.4 times
/// as long through a loop over the row).
#[inline(always)]
fn walk_one<V: Visit>(
    item: &'static Item,
    b: &[u8],
    base: usize,
    at: &mut usize,
    count: &mut usize,
    v: &mut V,
) -> bool {
    let r = *at;
    let (len, val) = match item.prim {
        U8 => (1, Val::Num(u64::from(byte(b, r)))),
        Keys => (1, Val::Keys(byte(b, r))),
        Count => {
            *count = usize::from(byte(b, r));
            (1, Val::Num(*count as u64))
        }
        Type => match MessageType::from_u8(byte(b, r)) {
            Some(t) => (1, Val::Type(t)),
            None => return false,
        },
        U16 if b.len() >= r + 2 => (2, Val::Num(u64::from(be_u16(b, r)))),
        I16 if b.len() >= r + 2 => (2, Val::Signed(i64::from(be_u16(b, r) as i16))),
        U32 if b.len() >= r + 4 => (4, Val::Num(u64::from(be_u32(b, r)))),
        Hex32 if b.len() >= r + 4 => (4, Val::Hex(u64::from(be_u32(b, r)))),
        Id if b.len() >= r + 4 => (4, Val::Id(id_at(b, r))),
        Str => {
            let n = usize::from(byte(b, r));
            (1 + n, Val::Str(Str::new(bytes(b, r + 1, n))))
        }
        // Past the end: a checked view never is.
        _ => return false,
    };
    v.item(item, base + r, len, val);
    *at += len;
    true
}

/// Walks `items` (the header's) from `*at`, moving it past them.
pub(super) fn walk_items<V: Visit>(
    items: &'static [Item],
    b: &[u8],
    base: usize,
    at: &mut usize,
    v: &mut V,
) {
    let mut count = 0;
    for item in items {
        if !walk_one(item, b, base, at, &mut count, v) {
            return;
        }
    }
}

/// The `j`-th item of `items`, if it has one (for `walk`'s constants).
const fn nth(items: &'static [Item], j: usize) -> Option<&'static Item> {
    if j < items.len() {
        Some(&items[j])
    } else {
        None
    }
}

/// The items of a row's entries, none if it has none.
const fn entry_items(l: &Layout) -> &'static [Item] {
    match l.entry {
        Some(e) => e.items,
        None => &[],
    }
}

/// Walks `$items` (a constant) item by item: up to 14, the longest row's.
macro_rules! each_item {
    ($items:expr, $b:ident, $base:ident, $at:ident, $count:ident, $v:ident) => {
        each_item!(@ $items, $b, $base, $at, $count, $v; 0 1 2 3 4 5 6 7 8 9 10 11 12 13)
    };
    (@ $items:expr, $b:ident, $base:ident, $at:ident, $count:ident, $v:ident; $($j:literal)*) => {
        'items: {
            $(
                if let Some(item) = const { nth($items, $j) }
                    && !walk_one(item, $b, $base, &mut $at, &mut $count, $v)
                {
                    break 'items;
                }
            )*
        }
    };
}

/// Walks row `$r` of [`LAYOUTS`]: the message's type, its seqno if
/// reliable, its items, then its entries, each read from a slice of its own
/// length (so that every offset and bound is a constant).
macro_rules! row {
    ($r:literal, $b:ident, $base:ident, $v:ident) => {{
        const T: MessageType = MessageType::ALL[$r];
        let mut at = 0;
        let mut count = 0;
        if $b.len() < const { T.header_len() + LAYOUTS[$r].fixed } {
            return;
        }
        walk_one(&TYPE_ITEM, $b, $base, &mut at, &mut count, $v);
        if const { T.is_reliable() } {
            walk_one(&SEQNO_ITEM, $b, $base, &mut at, &mut count, $v);
        }
        each_item!(LAYOUTS[$r].items, $b, $base, at, count, $v);
        if let Some(e) = const { LAYOUTS[$r].entry }
            && $v.wants_entries(e)
        {
            for i in 0..count {
                let Some(entry) = $b.get(at..at + const { entry_len(&LAYOUTS[$r]) }) else {
                    break;
                };
                let entry_base = $base + at;
                $v.enter(e, i as u32, entry_base);
                let mut within = 0;
                let mut none = 0;
                each_item!(
                    entry_items(&LAYOUTS[$r]),
                    entry,
                    entry_base,
                    within,
                    none,
                    $v
                );
                $v.leave();
                at += e.len;
            }
        }
    }};
}

/// The length of a row's entries, 0 if it has none.
const fn entry_len(l: &Layout) -> usize {
    match l.entry {
        Some(e) => e.len,
        None => 0,
    }
}

/// Walks a whole message (`b`, its bytes, type byte first, at `base` in the
/// packet): its type, its seqno if reliable, its items, its entries.
pub(super) fn walk<V: Visit>(t: MessageType, b: &[u8], base: usize, v: &mut V) {
    // One arm per row, each with its row as a constant (see `walk_one`).
    macro_rules! rows {
        ($($r:literal)*) => {
            match t.ordinal() {
                $( $r => row!($r, b, base, v), )*
                _ => {}
            }
        };
    }
    rows!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17);
}

/// Every definition a message of type `t` may hold (its node's included),
/// for `FieldSink::wants_any`.
pub(super) fn message_defs(t: MessageType, each: &mut dyn FnMut(&'static FieldDef)) {
    each(field(MESSAGE));
    each(field(TYPE));
    if t.is_reliable() {
        each(field(SEQNO));
    }
    let l = t.layout();
    items_defs(l.items, each);
    if let Some(e) = l.entry {
        entry_defs(e, each);
    }
}

/// An entry's node and fields.
pub(super) fn entry_defs(e: &Entry, each: &mut dyn FnMut(&'static FieldDef)) {
    each(field(e.node));
    items_defs(e.items, each);
}

/// The definitions of `items` (a string's length's included).
pub(super) fn items_defs(items: &[Item], each: &mut dyn FnMut(&'static FieldDef)) {
    for item in items {
        if item.prim == Str {
            each(field(NAME_LEN));
        }
        each(field(item.def));
    }
}

#[cfg(test)]
mod tests {
    use super::super::entries::{
        Collision, Input, Record, StatsEntry, UpdateCircleEntry, UpdateEntry, UpdatePosEntry,
        UpdateRayEntry,
    };
    use super::*;

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
