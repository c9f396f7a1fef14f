//! lwar's registered fields ([`FIELDS`]) and the typed walk of a packet through
//! them ([`Packet::walk_fields`]): what the display filter's `lwar.*` names,
//! field output and JSON read. The walk borrows from the packet and allocates
//! nothing.
//!
//! Names follow the specification's labels in snake case, under the message
//! they belong to where the same label means different things (`lwar.input.frame`
//! is the input's frame number); fields every message type shares (`type`,
//! `seqno`, `player`, `entity`, `name`) have one name.

use super::entries::Record;
use super::error::DecodeError;
use super::message::{Message, MessageView, Str};
use super::packet::Packet;
use super::types::{HEADER_LEN, Id, MessageType};
use crate::proto::field::{Field, FieldDef, FieldSink, FieldType, Value};

macro_rules! fields {
    ($( $id:ident = $name:literal, $label:literal, $ty:ident, $doc:literal; )*) => {
        /// Each field's index in [`FIELDS`].
        #[allow(non_camel_case_types, clippy::upper_case_acronyms, clippy::enum_variant_names)]
        #[derive(Clone, Copy)]
        enum F { $( $id, )* }

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
fn field(f: F) -> &'static FieldDef {
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

/// The fields a message of type `t` may hold, its node's included: the
/// group a sink that shows only some fields is asked about
/// ([`FieldSink::wants_any`]) before the message is walked.
fn message_group(t: MessageType) -> &'static [F] {
    use F::*;
    match t {
        MessageType::Connect => &[MESSAGE, TYPE, SEQNO, NAME_LEN, NAME],
        MessageType::Disconnect | MessageType::Synced => &[MESSAGE, TYPE, SEQNO],
        MessageType::Full => &[MESSAGE, TYPE],
        MessageType::Join | MessageType::Name => &[MESSAGE, TYPE, SEQNO, PLAYER, NAME_LEN, NAME],
        MessageType::Leave => &[MESSAGE, TYPE, SEQNO, PLAYER],
        MessageType::Chat => &[MESSAGE, TYPE, SEQNO, PLAYER, NAME_LEN, CHAT],
        MessageType::Add => &[MESSAGE, TYPE, SEQNO, ENTITY, PLAYER, TYPE_ID],
        MessageType::Remove => &[MESSAGE, TYPE, SEQNO, ENTITY],
        MessageType::Selection => &[MESSAGE, TYPE, SEQNO, PLAYER, SHIP, WEAPON],
        MessageType::Input => &[
            MESSAGE,
            TYPE,
            PLAYER,
            INPUT_FRAME,
            FORWARD,
            BACKWARD,
            TURN_LEFT,
            TURN_RIGHT,
            STRAFE_LEFT,
            STRAFE_RIGHT,
            SHOOTING,
            AIM_X,
            AIM_Y,
        ],
        MessageType::Collision => &[MESSAGE, TYPE, ENTITY, X, Y],
        MessageType::Stats => &[MESSAGE, TYPE, NUM, STATS, PLAYER, KILLS, DEATHS, PING],
        MessageType::Update => &[
            MESSAGE,
            TYPE,
            NUM,
            UPDATE,
            ENTITY,
            X,
            Y,
            ORIENTATION,
            HEALTH,
        ],
        MessageType::UpdatePos => &[MESSAGE, TYPE, NUM, UPDATE, ENTITY, X, Y],
        MessageType::UpdateRay => &[
            MESSAGE,
            TYPE,
            NUM,
            UPDATE,
            ENTITY,
            X,
            Y,
            ORIENTATION,
            LENGTH,
        ],
        MessageType::UpdateCircle => &[MESSAGE, TYPE, NUM, UPDATE, ENTITY, X, Y, RADIUS],
    }
}

/// The header's fields, a group of their own.
static HEADER_GROUP: [F; 3] = [F::APP_ID, F::ACK, F::TIMESTAMP];

/// Whether `sink` takes a field of `group`.
fn wants(sink: &mut dyn FieldSink, group: &'static [F]) -> bool {
    group.is_empty()
        || sink.wants_any(crate::proto::field::group_key(group), &|f| {
            for &id in group {
                f(field(id));
            }
        })
}

/// Walks fields with a running offset.
struct Walk<'s> {
    sink: &'s mut dyn FieldSink,
    at: usize,
}

impl Walk<'_> {
    fn put(&mut self, def: &'static FieldDef, index: Option<u32>, len: usize, value: Value<'_>) {
        self.sink.field(Field {
            def,
            index,
            offset: self.at,
            len,
            value,
        });
        self.at += len;
    }

    fn unsigned(&mut self, def: &'static FieldDef, len: usize, v: impl Into<u64>) {
        self.put(def, None, len, Value::Unsigned(v.into()));
    }

    fn signed(&mut self, def: &'static FieldDef, v: i16) {
        self.put(def, None, 2, Value::Signed(i64::from(v)));
    }

    fn id(&mut self, def: &'static FieldDef, id: Id, index: Option<u32>) {
        let value = Value::Pair(u32::from(id.generation), u32::from(id.index));
        self.put(def, index, 4, value);
    }

    /// An entity and where it is: the start of every update entry.
    fn entity_at(&mut self, entity: Id, x: i16, y: i16) {
        self.id(field(F::ENTITY), entity, None);
        self.signed(field(F::X), x);
        self.signed(field(F::Y), y);
    }

    fn keys(&mut self, def: &'static FieldDef, index: Option<u32>, v: u8) {
        self.put(
            def,
            index,
            1,
            Value::Bits {
                raw: u64::from(v),
                width: 8,
            },
        );
    }

    fn string(&mut self, def: &'static FieldDef, s: Str<'_>) {
        self.unsigned(field(F::NAME_LEN), 1, s.len() as u64);
        self.put(def, None, s.len(), Value::Text(s.as_bytes()));
    }

    /// A node over `len` bytes whose children `each` walks.
    fn node(
        &mut self,
        def: &'static FieldDef,
        index: Option<u32>,
        len: usize,
        value: Value<'_>,
        each: impl FnOnce(&mut Self),
    ) {
        self.sink.enter(Field {
            def,
            index,
            offset: self.at,
            len,
            value,
        });
        each(self);
        self.sink.leave();
    }

    /// The entries of a counted message, skipped whole when the sink takes
    /// none of `group`'s fields (the entry node's and its own).
    fn entries<E: Record>(
        &mut self,
        group: &'static [F],
        items: impl ExactSizeIterator<Item = E>,
        mut each: impl FnMut(&mut Self, E),
    ) {
        let Some(&node) = group.first() else { return };
        if !wants(self.sink, group) {
            self.at += items.len() * E::LEN;
            return;
        }
        let def = field(node);
        for (i, e) in items.enumerate() {
            let index = u32::try_from(i).ok();
            self.node(def, index, E::LEN, Value::None, |w| each(w, e));
        }
    }
}

impl MessageView<'_> {
    /// Walks the message's fields: a `lwar.message` node, then its fields in
    /// wire order.
    pub fn walk_fields(&self, sink: &mut dyn FieldSink) {
        let t = self.msg_type();
        if !wants(sink, message_group(t)) {
            return;
        }
        let mut w = Walk {
            sink,
            at: self.offset,
        };
        let value = Value::Enum {
            raw: u64::from(t.id()),
            name: Some(t.name()),
        };
        w.node(
            field(F::MESSAGE),
            None,
            self.bytes.len(),
            Value::None,
            |w| {
                w.put(field(F::TYPE), None, 1, value);
                if let Some(seqno) = self.seqno() {
                    w.unsigned(field(F::SEQNO), 4, seqno);
                }
                message_fields(w, &self.message);
            },
        );
    }
}

fn message_fields(w: &mut Walk<'_>, m: &Message<'_>) {
    match *m {
        Message::Connect { name, .. } => w.string(field(F::NAME), name),
        Message::Disconnect { .. } | Message::Synced { .. } | Message::Full => {}
        Message::Join { player, name, .. } | Message::Name { player, name, .. } => {
            w.id(field(F::PLAYER), player, None);
            w.string(field(F::NAME), name);
        }
        Message::Leave { player, .. } => w.id(field(F::PLAYER), player, None),
        Message::Chat { player, text, .. } => {
            w.id(field(F::PLAYER), player, None);
            w.string(field(F::CHAT), text);
        }
        Message::Add {
            entity,
            player,
            type_id,
            ..
        } => {
            w.id(field(F::ENTITY), entity, None);
            w.id(field(F::PLAYER), player, None);
            w.unsigned(field(F::TYPE_ID), 1, type_id);
        }
        Message::Remove { entity, .. } => w.id(field(F::ENTITY), entity, None),
        Message::Selection {
            player,
            ship_type,
            weapon_types,
            ..
        } => {
            w.id(field(F::PLAYER), player, None);
            w.unsigned(field(F::SHIP), 1, ship_type);
            for (i, t) in (0u32..).zip(weapon_types) {
                w.put(field(F::WEAPON), Some(i), 1, Value::Unsigned(u64::from(t)));
            }
        }
        Message::Input(i) => {
            w.id(field(F::PLAYER), i.player, None);
            w.unsigned(field(F::INPUT_FRAME), 4, i.frame);
            for (def, v) in [
                (field(F::FORWARD), i.forward),
                (field(F::BACKWARD), i.backward),
                (field(F::TURN_LEFT), i.turn_left),
                (field(F::TURN_RIGHT), i.turn_right),
                (field(F::STRAFE_LEFT), i.strafe_left),
                (field(F::STRAFE_RIGHT), i.strafe_right),
            ] {
                w.keys(def, None, v);
            }
            for (n, v) in (0u32..).zip(i.shooting) {
                w.keys(field(F::SHOOTING), Some(n), v);
            }
            w.signed(field(F::AIM_X), i.aim_x);
            w.signed(field(F::AIM_Y), i.aim_y);
        }
        Message::Collision(c) => {
            w.id(field(F::ENTITY), c.entities[0], Some(0));
            w.id(field(F::ENTITY), c.entities[1], Some(1));
            w.signed(field(F::X), c.x);
            w.signed(field(F::Y), c.y);
        }
        Message::Stats(e) => {
            w.unsigned(field(F::NUM), 1, e.len() as u64);
            w.entries(
                &[F::STATS, F::PLAYER, F::KILLS, F::DEATHS, F::PING],
                e.iter(),
                |w, s| {
                    w.id(field(F::PLAYER), s.player, None);
                    w.unsigned(field(F::KILLS), 2, s.kills);
                    w.unsigned(field(F::DEATHS), 2, s.deaths);
                    w.unsigned(field(F::PING), 2, s.ping);
                },
            );
        }
        Message::Update(e) => {
            w.unsigned(field(F::NUM), 1, e.len() as u64);
            w.entries(
                &[F::UPDATE, F::ENTITY, F::X, F::Y, F::ORIENTATION, F::HEALTH],
                e.iter(),
                |w, u| {
                    w.entity_at(u.entity, u.x, u.y);
                    w.unsigned(field(F::ORIENTATION), 2, u.orientation);
                    w.unsigned(field(F::HEALTH), 1, u.health);
                },
            );
        }
        Message::UpdatePos(e) => {
            w.unsigned(field(F::NUM), 1, e.len() as u64);
            w.entries(&[F::UPDATE, F::ENTITY, F::X, F::Y], e.iter(), |w, u| {
                w.entity_at(u.entity, u.x, u.y);
            });
        }
        Message::UpdateRay(e) => {
            w.unsigned(field(F::NUM), 1, e.len() as u64);
            w.entries(
                &[F::UPDATE, F::ENTITY, F::X, F::Y, F::ORIENTATION, F::LENGTH],
                e.iter(),
                |w, u| {
                    w.entity_at(u.entity, u.x, u.y);
                    w.unsigned(field(F::ORIENTATION), 2, u.orientation);
                    w.unsigned(field(F::LENGTH), 2, u.length);
                },
            );
        }
        Message::UpdateCircle(e) => {
            w.unsigned(field(F::NUM), 1, e.len() as u64);
            w.entries(
                &[F::UPDATE, F::ENTITY, F::X, F::Y, F::RADIUS],
                e.iter(),
                |w, u| {
                    w.entity_at(u.entity, u.x, u.y);
                    w.unsigned(field(F::RADIUS), 2, u.radius);
                },
            );
        }
    }
}

impl Packet<'_> {
    /// Walks every field of the packet in wire order: the header, then each
    /// message; the first message that does not decode ends the walk with its
    /// error.
    pub fn walk_fields(&self, sink: &mut dyn FieldSink) -> Result<(), DecodeError> {
        let mut w = Walk { sink, at: 0 };
        if !wants(w.sink, &HEADER_GROUP) {
            w.at = HEADER_LEN;
        } else {
            w.header(self);
        }
        for m in self.messages() {
            m?.walk_fields(w.sink);
        }
        Ok(())
    }
}

impl Walk<'_> {
    fn header(&mut self, p: &Packet<'_>) {
        let w = self;
        // The magic, in hexadecimal as every view writes it.
        w.put(
            field(F::APP_ID),
            None,
            4,
            Value::Hex(u64::from(super::APP_ID)),
        );
        w.unsigned(field(F::ACK), 4, p.ack());
        w.unsigned(field(F::TIMESTAMP), HEADER_LEN - 8, p.timestamp());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::lwar::wire::{Header, MessageRepr, MessageType, PacketRepr, UpdateEntry};

    fn packet(messages: Vec<MessageRepr>) -> Vec<u8> {
        let repr = PacketRepr {
            header: Header {
                ack: 3,
                timestamp: 1000,
            },
            messages,
        };
        let mut out = Vec::new();
        repr.emit_into(&mut out);
        out
    }

    /// Every field as `name[index]@offset+len=value`, nodes with `{` and `}`.
    #[derive(Default)]
    struct Dump(Vec<String>);
    impl FieldSink for Dump {
        fn field(&mut self, f: Field<'_>) {
            let index = f.index.map(|i| format!("[{i}]")).unwrap_or_default();
            self.0.push(format!(
                "{}{index}@{}+{}={}",
                f.def.name, f.offset, f.len, f.value
            ));
        }
        fn enter(&mut self, node: Field<'_>) {
            self.field(node);
            self.0.push("{".into());
        }
        fn leave(&mut self) {
            self.0.push("}".into());
        }
    }

    #[test]
    fn the_walk_names_every_byte_once_in_wire_order() {
        let bytes = packet(vec![
            MessageRepr::Join {
                seqno: 2,
                player: Id::new(0, 1),
                name: b"ann".to_vec(),
            },
            MessageRepr::Update(vec![UpdateEntry {
                entity: Id::new(1, 2),
                x: -5,
                y: 7,
                orientation: 90,
                health: 100,
            }]),
        ]);
        let p = Packet::new_checked(&bytes).unwrap();
        let mut d = Dump::default();
        p.walk_fields(&mut d).unwrap();
        let want = [
            "lwar.app_id@0+4=0xf27087c5",
            "lwar.ack@4+4=3",
            "lwar.timestamp@8+4=1000",
            "lwar.message@12+13=",
            "{",
            "lwar.type@12+1=Join (3)",
            "lwar.seqno@13+4=2",
            "lwar.player@17+4=0:1",
            "lwar.name_len@21+1=3",
            "lwar.name@22+3=\"ann\"",
            "}",
            "lwar.message@25+13=",
            "{",
            "lwar.type@25+1=Update (110)",
            "lwar.num@26+1=1",
            "lwar.update[0]@27+11=",
            "{",
            "lwar.entity@27+4=1:2",
            "lwar.x@31+2=-5",
            "lwar.y@33+2=7",
            "lwar.update.orientation@35+2=90",
            "lwar.update.health@37+1=100",
            "}",
            "}",
        ];
        assert_eq!(d.0, want);
        assert_eq!(MessageType::Update.id(), 110);
    }

    #[test]
    fn a_message_that_does_not_decode_ends_the_walk_with_its_error() {
        let mut bytes = packet(vec![MessageRepr::Synced { seqno: 1 }]);
        bytes.push(0xee); // no such message type
        let p = Packet::new_checked(&bytes).unwrap();
        let mut d = Dump::default();
        let e = p.walk_fields(&mut d).unwrap_err();
        assert_eq!(e.offset(), 17);
        assert!(
            d.0.contains(&"lwar.type@12+1=Synced (10)".to_owned()),
            "{:?}",
            d.0
        );
    }

    /// Takes only `lwar.seqno`: says so for each group asked.
    #[derive(Default)]
    struct SeqnoOnly {
        got: Vec<String>,
        asked: usize,
    }
    impl FieldSink for SeqnoOnly {
        fn field(&mut self, f: Field<'_>) {
            self.got
                .push(format!("{}@{}={}", f.def.name, f.offset, f.value));
        }
        fn wants_any(&mut self, _key: usize, defs: &crate::proto::field::GroupDefs<'_>) -> bool {
            self.asked += 1;
            let mut any = false;
            defs(&mut |d| any |= d.name == "lwar.seqno");
            any
        }
    }

    /// A sink that takes only some fields gets the groups that hold them,
    /// and the walk skips the rest whole: no header, no Update (which has
    /// no seqno), no entries, each group asked once.
    #[test]
    fn the_walk_skips_the_groups_a_sink_does_not_want() {
        let bytes = packet(vec![
            MessageRepr::Update(vec![UpdateEntry::default(); 3]),
            MessageRepr::Synced { seqno: 4 },
            MessageRepr::Stats(vec![Default::default(); 2]),
        ]);
        let p = Packet::new_checked(&bytes).unwrap();
        let mut s = SeqnoOnly::default();
        p.walk_fields(&mut s).unwrap();
        assert_eq!(
            s.got,
            [
                "lwar.message@47=",
                "lwar.type@47=Synced (10)",
                "lwar.seqno@48=4"
            ]
        );
        // The header, each of the three messages.
        assert_eq!(s.asked, 4);
    }

    #[test]
    fn field_names_are_unique_and_namespaced() {
        let mut names: Vec<_> = FIELDS.iter().map(|f| f.name).collect();
        assert!(names.iter().all(|n| n.starts_with("lwar.")));
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FIELDS.len());
    }
}
