//! Vessel's wire format: one proto3 message per datagram (`protocols/vessel.proto`,
//! from `vessel-NOTES.md`), `vesselToEnvironment` from the vessel and
//! `environmentToVessel` from the environment.
//!
//! Two views of the same bytes, both on `prost`:
//! - the messages, derived with `prost::Message` ([`VesselToEnvironment`],
//!   [`EnvironmentToVessel`], ...): what the analysis decodes, merged into
//!   messages it keeps and clears ([`Decoder`]), so that once their strings and
//!   lists have grown nothing is allocated per packet;
//! - a field walk ([`walk`]) over `prost::encoding`'s own key, varint and
//!   skip primitives, with a table of the same fields ([`V2E`], [`E2V`]): the
//!   byte offset and span of every field for the dissector (`-V`, `-T fields`,
//!   the display filter, JSON), and the offset of what makes a datagram
//!   malformed. A test holds both to accepting exactly the same datagrams.
//!
//! Both come from one declaration (`messages!`): each message's fields in
//! prost's own attributes, each followed by its registered field. The
//! walk's tables ([`Declared::FIELDS`]) and the fields that tell the two
//! messages apart ([`TELLS`], read by [`classify`]) are derived from it.
//!
//! # Adding a field to a message
//!
//! 1. Register it in [`FIELDS`] (`fields!` below: filter name, tree label,
//!    type, documentation), unless it reuses one (`vessel.syncNumber`).
//! 2. Add it to its message in `messages!`, with its prost attribute and
//!    its registered field: `#[prost(uint32, tag = 5)] pub fuel: u32 =>
//!    FUEL,`. The decoder, the encoder, the field walk and with it `-V`,
//!    `-T fields`, the text and JSON follow. Add it to
//!    `protocols/vessel.proto` too (a test holds the two equal).
//!
//! **Malformed** is what no proto3 decoder accepts: a truncated or overlong
//! varint, a key with wire type 6 or 7 or field number 0, a length (or a
//! fixed 32/64-bit value) past the end of the datagram or of its enclosing
//! message, a known field sent with a wire type that contradicts its declared
//! type, a `string` that is not UTF-8, a group that does not end. Unknown
//! field numbers are skipped (proto3), absent fields read as their defaults
//! (a syncNumber of 0 is not on the wire).

use crate::proto::field::{FieldDef, GroupDefs, Value, group_key};
use crate::proto::wire_error::{At, Short, Within};
use prost::Message as _;
use prost::encoding::{DecodeContext, WireType, decode_key, decode_varint, skip_field};
use std::fmt;

/// The environment's default UDP port.
pub const PORT: u16 = 39461;
/// Sync numbers are kept in 0..=255.
pub const SYNC_MAX: u32 = 255;
/// Packets a second each side sends (the game's rate).
pub const RATE_HZ: f64 = 60.0;

/// A message whose fields the walk knows: their declarations ([`Decl`]),
/// made by `messages!` from the field list prost derives the message from.
pub trait Declared {
    const FIELDS: &'static [Decl];
}

impl<T: Declared> Declared for Option<T> {
    const FIELDS: &'static [Decl] = T::FIELDS;
}

impl<T: Declared> Declared for Vec<T> {
    const FIELDS: &'static [Decl] = T::FIELDS;
}

/// Vessel's messages, each declared once, in prost's own words: a field's
/// attribute and type (what prost derives the decoder and the encoder from),
/// followed by its registered field (`=> ID`, an enum's value names in
/// parentheses). From the same list comes the message's
/// [`Declared::FIELDS`], what the field walk reads: each field's number,
/// type and whether it repeats, and its registered definition.
macro_rules! messages {
    ($(
        $(#[$attr:meta])*
        pub struct $name:ident {
            $(
                #[prost($($p:tt)*)]
                pub $field:ident: $ty:ty => $def:ident $(($names:expr))?,
            )*
        }
    )*) => {$(
        $(#[$attr])*
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct $name {
            $(#[prost($($p)*)] pub $field: $ty,)*
        }

        impl Declared for $name {
            const FIELDS: &'static [Decl] = &[$(decl!([$($p)*] $ty, $def $(, $names)?)),*];
        }
    )*};
}

/// A field's [`Decl`], from its prost attribute, its type and its
/// registered field.
macro_rules! decl {
    ([string, tag = $n:literal] $ty:ty, $def:ident) => {
        Decl::new($n, Kind::Str, field(FieldId::$def))
    };
    ([bool, tag = $n:literal] $ty:ty, $def:ident) => {
        Decl::new($n, Kind::Bool, field(FieldId::$def))
    };
    ([uint32, tag = $n:literal] $ty:ty, $def:ident) => {
        Decl::new($n, Kind::U32, field(FieldId::$def))
    };
    ([float, tag = $n:literal] $ty:ty, $def:ident) => {
        Decl::new($n, Kind::Float, field(FieldId::$def))
    };
    ([double, tag = $n:literal] $ty:ty, $def:ident) => {
        Decl::new($n, Kind::Double, field(FieldId::$def))
    };
    ([enumeration = $e:literal, tag = $n:literal] $ty:ty, $def:ident, $names:expr) => {
        Decl::new($n, Kind::Enum($names), field(FieldId::$def))
    };
    ([message, optional, tag = $n:literal] $ty:ty, $def:ident) => {
        Decl::new(
            $n,
            Kind::Msg(<$ty as Declared>::FIELDS),
            field(FieldId::$def),
        )
    };
    ([message, repeated, tag = $n:literal] $ty:ty, $def:ident) => {
        Decl {
            repeated: true,
            ..Decl::new(
                $n,
                Kind::Msg(<$ty as Declared>::FIELDS),
                field(FieldId::$def),
            )
        }
    };
}

messages! {
    /// `vesselToEnvironment`.
    pub struct VesselToEnvironment {
        #[prost(string, tag = 1)]
        pub protocol_version: String => PROTOCOL_VERSION,
        #[prost(string, tag = 2)]
        pub vessel_id: String => VESSEL_ID,
        #[prost(uint32, tag = 3)]
        pub sync_number: u32 => SYNC,
        #[prost(message, optional, tag = 4)]
        pub ship_input: Option<ShipInput> => INPUT,
    }

    /// `environmentToVessel`.
    pub struct EnvironmentToVessel {
        #[prost(string, tag = 1)]
        pub protocol_version: String => PROTOCOL_VERSION,
        #[prost(bool, tag = 2)]
        pub join_status: bool => JOIN,
        #[prost(string, tag = 3)]
        pub vessel_id: String => VESSEL_ID,
        #[prost(uint32, tag = 4)]
        pub sync_number: u32 => SYNC,
        #[prost(message, optional, tag = 5)]
        pub ship_input: Option<ShipInput> => INPUT,
        #[prost(message, optional, tag = 6)]
        pub ship_sensors: Option<ShipSensors> => SENSORS,
    }

    /// `ShipInput`.
    #[derive(Copy)]
    pub struct ShipInput {
        #[prost(float, tag = 1)]
        pub throttle_left_engine: f32 => T_LEFT,
        #[prost(float, tag = 2)]
        pub throttle_right_engine: f32 => T_RIGHT,
        #[prost(bool, tag = 3)]
        pub thruster_front_left: bool => FRONT_LEFT,
        #[prost(bool, tag = 4)]
        pub thruster_front_right: bool => FRONT_RIGHT,
        #[prost(bool, tag = 5)]
        pub thruster_left_front: bool => LEFT_FRONT,
        #[prost(bool, tag = 6)]
        pub thruster_left_rear: bool => LEFT_REAR,
        #[prost(bool, tag = 7)]
        pub thruster_right_front: bool => RIGHT_FRONT,
        #[prost(bool, tag = 8)]
        pub thruster_right_rear: bool => RIGHT_REAR,
        #[prost(bool, tag = 9)]
        pub thruster_rear_left: bool => REAR_LEFT,
        #[prost(bool, tag = 10)]
        pub thruster_rear_right: bool => REAR_RIGHT,
        #[prost(bool, tag = 11)]
        pub fire_gun: bool => FIRE,
    }

    /// `ShipSensors`.
    pub struct ShipSensors {
        #[prost(message, optional, tag = 1)]
        pub visual: Option<VisualSensors> => VISUAL,
        #[prost(message, optional, tag = 2)]
        pub health: Option<HealthSensor> => HEALTH,
    }

    /// `VisualSensors`.
    pub struct VisualSensors {
        #[prost(message, repeated, tag = 1)]
        pub visible_objects: Vec<VisibleObject> => OBJECTS,
    }

    /// `VisibleObject`.
    #[derive(Copy)]
    pub struct VisibleObject {
        #[prost(enumeration = "ObjectType", tag = 1)]
        pub r#type: i32 => OBJ_TYPE(ObjectType::NAMES),
        #[prost(message, optional, tag = 2)]
        pub position: Option<Position> => OBJ_POS,
        #[prost(double, tag = 3)]
        pub orientation: f64 => OBJ_ORIENT,
        #[prost(message, optional, tag = 4)]
        pub velocity: Option<Velocity> => OBJ_VEL,
    }

    /// `Position`.
    #[derive(Copy)]
    pub struct Position {
        #[prost(double, tag = 1)]
        pub x: f64 => OBJ_POS_X,
        #[prost(double, tag = 2)]
        pub y: f64 => OBJ_POS_Y,
    }

    /// `Velocity`.
    #[derive(Copy)]
    pub struct Velocity {
        #[prost(double, tag = 1)]
        pub x: f64 => OBJ_VEL_X,
        #[prost(double, tag = 2)]
        pub y: f64 => OBJ_VEL_Y,
    }

    /// `HealthSensor`.
    #[derive(Copy)]
    pub struct HealthSensor {
        #[prost(uint32, tag = 1)]
        pub health: u32 => HEALTH_VALUE,
    }
}

/// `VisibleObject.ObjectType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum ObjectType {
    Ship = 0,
    Bullet = 1,
}

impl ObjectType {
    /// Its values' names, by value (what the walk shows).
    pub const NAMES: &[&str] = &["Ship", "Bullet"];
}

/// Which message a datagram holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// `vesselToEnvironment`.
    ToEnvironment,
    /// `environmentToVessel`.
    ToVessel,
    /// Nothing in it tells the two apart (protocolVersion at most, and
    /// unknown fields): both decode it the same. The environment's
    /// version-only reply is one.
    Either,
}

impl Which {
    /// The message type's ordinal in [`super::INFO`]'s `message_types`.
    pub const fn ordinal(self) -> usize {
        match self {
            Which::ToEnvironment => 0,
            Which::ToVessel => 1,
            Which::Either => 2,
        }
    }
}

/// The message types as registered: the two messages, and the
/// environment's version-only reply.
pub const MESSAGE_TYPES: &[&str] = &["vesselToEnvironment", "environmentToVessel", "versionOnly"];

/// Why a datagram does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A varint (a key, a length, a value) runs past the end.
    TruncatedVarint,
    /// A varint longer than 10 bytes, or one that overflows 64 bits.
    BadVarint,
    /// A key with wire type 6 or 7, field number 0, or over 32 bits.
    BadKey,
    /// A length, or a fixed 32- or 64-bit value, past the end of the
    /// datagram or of its enclosing message.
    PastEnd,
    /// A known field sent with a wire type its declared type contradicts.
    WireType,
    /// A `string` that is not UTF-8.
    NotUtf8,
    /// A group that does not end, or an end without its start.
    Group,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::TruncatedVarint,
        ErrorKind::BadVarint,
        ErrorKind::BadKey,
        ErrorKind::PastEnd,
        ErrorKind::WireType,
        ErrorKind::NotUtf8,
        ErrorKind::Group,
    ];

    /// Its stable name (the malformed reason).
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::TruncatedVarint => "truncated-varint",
            ErrorKind::BadVarint => "bad-varint",
            ErrorKind::BadKey => "bad-key",
            ErrorKind::PastEnd => "past-end",
            ErrorKind::WireType => "wire-type",
            ErrorKind::NotUtf8 => "not-utf8",
            ErrorKind::Group => "group",
        }
    }

    pub const fn ordinal(self) -> usize {
        self as usize
    }

    pub fn from_ordinal(i: u64) -> ErrorKind {
        ErrorKind::ALL
            .get(i as usize)
            .copied()
            .unwrap_or(ErrorKind::BadKey)
    }
}

/// A datagram that does not decode: why, where (byte offset of the key,
/// length or value at fault), the field number and the wire type found
/// (for `WireType`: the one sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError {
    pub kind: ErrorKind,
    pub offset: usize,
    /// The field number, where the key was read (0 otherwise).
    pub field: u32,
    /// The wire type sent, where the key was read.
    pub wire: u8,
    /// The declared field's definition, where the field is known.
    pub def: Option<&'static FieldDef>,
    /// The bytes a length asked for (`PastEnd`), and those left.
    pub needed: u64,
    pub left: u64,
}

impl DecodeError {
    /// Whether more bytes would have let it decode further (the capture
    /// may have cut the datagram there).
    pub fn is_short(&self) -> bool {
        matches!(self.kind, ErrorKind::TruncatedVarint | ErrorKind::PastEnd)
    }
}

fn wire_name(w: u8) -> &'static str {
    match w {
        0 => "varint",
        1 => "64-bit",
        2 => "length-delimited",
        3 => "start-group",
        4 => "end-group",
        5 => "32-bit",
        _ => "invalid",
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = At::of(self.offset);
        let field = FieldName(self);
        match self.kind {
            ErrorKind::TruncatedVarint => write!(f, "varint cut short {at}"),
            ErrorKind::BadVarint => write!(f, "varint over 64 bits {at}"),
            ErrorKind::BadKey => write!(f, "invalid key {at}"),
            ErrorKind::PastEnd => Short {
                what: field,
                offset: at.0,
                needed: self.needed,
                left: self.left,
                within: Within::Datagram,
            }
            .fmt(f),
            ErrorKind::WireType => write!(
                f,
                "{field} {at} sent as {}, its type needs another wire type",
                wire_name(self.wire)
            ),
            ErrorKind::NotUtf8 => write!(f, "{field} {at}: string not UTF-8"),
            ErrorKind::Group => write!(f, "group of field {} unended {at}", self.field),
        }
    }
}

/// A field as an error names it: `field 4 (vessel.syncNumber)`.
struct FieldName<'a>(&'a DecodeError);

impl fmt::Display for FieldName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.def {
            Some(d) => write!(f, "field {} ({})", self.0.field, d.name),
            None => write!(f, "field {}", self.0.field),
        }
    }
}

/// A declared field's type.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Str,
    Bool,
    U32,
    Float,
    Double,
    /// An enum, its names by value.
    Enum(&'static [&'static str]),
    /// A message, its fields.
    Msg(&'static [Decl]),
}

impl Kind {
    const fn wire(self) -> WireType {
        match self {
            Kind::Str | Kind::Msg(_) => WireType::LengthDelimited,
            Kind::Bool | Kind::U32 | Kind::Enum(_) => WireType::Varint,
            Kind::Float => WireType::ThirtyTwoBit,
            Kind::Double => WireType::SixtyFourBit,
        }
    }
}

/// A declared field: its number, type, registered definition, whether it
/// repeats.
#[derive(Debug, Clone, Copy)]
pub struct Decl {
    pub number: u32,
    pub kind: Kind,
    pub def: &'static FieldDef,
    pub repeated: bool,
}

/// A registered field's definition, in a constant.
const fn field(id: FieldId) -> &'static FieldDef {
    &FIELDS[id as usize]
}

impl Decl {
    const fn new(number: u32, kind: Kind, def: &'static FieldDef) -> Decl {
        Decl {
            number,
            kind,
            def,
            repeated: false,
        }
    }
}

crate::proto::layout::fields! {
    /// A registered field: its index in [`FIELDS`].
    pub enum FieldId;
    /// Every registered field.
    pub static FIELDS;
    TO_ENV = "vessel.vesselToEnvironment", "vesselToEnvironment", Node, "A vessel's packet (message vesselToEnvironment)";
    TO_VESSEL = "vessel.environmentToVessel", "environmentToVessel", Node, "The environment's packet (message environmentToVessel)";
    VERSION_ONLY = "vessel.versionOnly", "versionOnly", Node, "A packet with protocolVersion at most: the environment's version-only reply, or a packet nothing in which tells its message";
    PROTOCOL_VERSION = "vessel.protocolVersion", "protocolVersion", Text, "protocolVersion (field 1 of both messages)";
    VESSEL_ID = "vessel.vesselID", "vesselID", Text, "vesselID (field 2 from the vessel, 3 from the environment)";
    SYNC = "vessel.syncNumber", "syncNumber", Unsigned, "syncNumber, 0..255, +1 per packet (field 3 from the vessel, 4 from the environment); 0 when absent";
    JOIN = "vessel.joinStatus", "joinStatus", Bool, "joinStatus (environment, field 2); false when absent";
    INPUT = "vessel.shipInput", "shipInput", Node, "ShipInput (field 4 from the vessel, 5 from the environment)";
    T_LEFT = "vessel.shipInput.throttleLeftEngine", "throttleLeftEngine", Float, "Left engine throttle, 0..1";
    T_RIGHT = "vessel.shipInput.throttleRightEngine", "throttleRightEngine", Float, "Right engine throttle, 0..1";
    FRONT_LEFT = "vessel.shipInput.thrusterFrontLeft", "thrusterFrontLeft", Bool, "Thruster";
    FRONT_RIGHT = "vessel.shipInput.thrusterFrontRight", "thrusterFrontRight", Bool, "Thruster";
    LEFT_FRONT = "vessel.shipInput.thrusterLeftFront", "thrusterLeftFront", Bool, "Thruster";
    LEFT_REAR = "vessel.shipInput.thrusterLeftRear", "thrusterLeftRear", Bool, "Thruster";
    RIGHT_FRONT = "vessel.shipInput.thrusterRightFront", "thrusterRightFront", Bool, "Thruster";
    RIGHT_REAR = "vessel.shipInput.thrusterRightRear", "thrusterRightRear", Bool, "Thruster";
    REAR_LEFT = "vessel.shipInput.thrusterRearLeft", "thrusterRearLeft", Bool, "Thruster";
    REAR_RIGHT = "vessel.shipInput.thrusterRearRight", "thrusterRearRight", Bool, "Thruster";
    FIRE = "vessel.shipInput.fireGun", "fireGun", Bool, "Gun trigger (fires continuously while true)";
    SENSORS = "vessel.shipSensors", "shipSensors", Node, "ShipSensors (environment, field 6)";
    VISUAL = "vessel.shipSensors.visual", "visual", Node, "VisualSensors";
    OBJECTS = "vessel.shipSensors.visual.visibleObjects", "visibleObjects", Node, "A VisibleObject (repeated)";
    OBJ_TYPE = "vessel.shipSensors.visual.visibleObjects.type", "type", Enum, "ObjectType: Ship (0), Bullet (1)";
    OBJ_POS = "vessel.shipSensors.visual.visibleObjects.position", "position", Node, "Position, relative to the seeing ship";
    OBJ_POS_X = "vessel.shipSensors.visual.visibleObjects.position.x", "x", Float, "x (right)";
    OBJ_POS_Y = "vessel.shipSensors.visual.visibleObjects.position.y", "y", Float, "y (forwards)";
    OBJ_ORIENT = "vessel.shipSensors.visual.visibleObjects.orientation", "orientation", Float, "Orientation, radians";
    OBJ_VEL = "vessel.shipSensors.visual.visibleObjects.velocity", "velocity", Node, "Velocity";
    OBJ_VEL_X = "vessel.shipSensors.visual.visibleObjects.velocity.x", "x", Float, "x";
    OBJ_VEL_Y = "vessel.shipSensors.visual.visibleObjects.velocity.y", "y", Float, "y";
    HEALTH = "vessel.shipSensors.health", "health", Node, "HealthSensor";
    HEALTH_VALUE = "vessel.shipSensors.health.health", "health", Unsigned, "The ship's health";
}

/// `vesselToEnvironment`'s fields.
pub static V2E: &[Decl] = VesselToEnvironment::FIELDS;

/// `environmentToVessel`'s fields.
pub static E2V: &[Decl] = EnvironmentToVessel::FIELDS;

impl Which {
    /// Its fields and its node's definition.
    pub fn schema(self) -> (&'static [Decl], &'static FieldDef) {
        match self {
            Which::ToEnvironment => (V2E, FieldId::TO_ENV.def()),
            Which::ToVessel => (E2V, FieldId::TO_VESSEL.def()),
            Which::Either => (E2V, FieldId::VERSION_ONLY.def()),
        }
    }
}

/// Which message a datagram holds, by its content alone: the first field
/// that tells ([`TELLS`]: 2 or 4 length-delimited, 3 varint: the vessel's;
/// 2 or 4 varint, 3 length-delimited, 5, 6: the environment's). `Either`
/// when none does before the end or the first error.
pub fn classify(payload: &[u8]) -> Which {
    let mut buf = payload;
    while !buf.is_empty() {
        let Ok((tag, wire)) = decode_key(&mut buf) else {
            return Which::Either;
        };
        let told = TELLS
            .get(tag as usize)
            .map_or(Which::Either, |t| t[wire as usize]);
        if told != Which::Either {
            return told;
        }
        if skip_field(wire, tag, &mut buf, DecodeContext::default()).is_err() {
            return Which::Either;
        }
    }
    Which::Either
}

/// Field numbers [`TELLS`] has room for: above every number either message
/// declares (checked when the crate compiles).
const TOLD_NUMBERS: usize = 16;

/// What a field of each number and wire type tells of its message, from the
/// two messages' declarations: a number only one of them declares tells
/// that one, whatever its wire type; a number both declare, the one that
/// declares it with this wire type, if only one does.
pub const TELLS: [[Which; 6]; TOLD_NUMBERS] = {
    /// The wire type `decls` declares number `n` with.
    const fn declared(decls: &[Decl], n: usize) -> Option<u8> {
        let mut i = 0;
        while i < decls.len() {
            assert!((decls[i].number as usize) < TOLD_NUMBERS);
            if decls[i].number as usize == n {
                return Some(decls[i].kind.wire() as u8);
            }
            i += 1;
        }
        None
    }
    let mut t = [[Which::Either; 6]; TOLD_NUMBERS];
    let mut n = 1;
    while n < TOLD_NUMBERS {
        let to_env = declared(VesselToEnvironment::FIELDS, n);
        let to_vessel = declared(EnvironmentToVessel::FIELDS, n);
        let mut w = 0;
        while w < 6 {
            t[n][w as usize] = match (to_env, to_vessel) {
                (Some(_), None) => Which::ToEnvironment,
                (None, Some(_)) => Which::ToVessel,
                (Some(a), Some(b)) if a != b && a == w => Which::ToEnvironment,
                (Some(a), Some(b)) if a != b && b == w => Which::ToVessel,
                _ => Which::Either,
            };
            w += 1;
        }
        n += 1;
    }
    t
};

/// What a walk hands on: each field with its span and value, nodes
/// entered and left (the sink's calls of [`crate::proto::field::FieldSink`]).
pub trait Visit {
    fn field(
        &mut self,
        def: &'static FieldDef,
        index: Option<u32>,
        span: (usize, usize),
        value: Value<'_>,
    );
    fn enter(&mut self, def: &'static FieldDef, index: Option<u32>, span: (usize, usize));
    fn leave(&mut self);
    /// Whether any field of a message is wanted ([`crate::proto::field::FieldSink::wants_any`]:
    /// the group is the message's declarations, `key` their address);
    /// told no, the walk decodes the message without handing anything on.
    fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
        true
    }
}

/// Every registered field of a message of `decls` (and of the messages in
/// it), for [`Visit::wants_any`].
fn message_defs(decls: &'static [Decl], each: &mut dyn FnMut(&'static FieldDef)) {
    for d in decls {
        each(d.def);
        if let Kind::Msg(fields) = d.kind {
            message_defs(fields, each);
        }
    }
}

/// Nesting of the declared messages at most (packet, sensors, visual,
/// object, position): a walk never goes deeper than the table.
const MAX_FIELDS: usize = 16;

/// Walks the message `which` over `payload`: every field on the wire, in
/// order, then (within each message walked) the declared scalar fields that
/// were absent, with their default value and an empty span at the message's
/// end. The root node spans the payload.
///
/// A visitor that wants none of a message's fields ([`Visit::wants_any`],
/// asked of the packet's message and of each nested one) is handed none of
/// them: the message is still decoded, so the walk's result is the same.
pub fn walk(payload: &[u8], which: Which, v: &mut dyn Visit) -> Result<(), DecodeError> {
    let (decls, node) = which.schema();
    if !v.wants_any(group_key(decls), &|each| {
        each(node);
        message_defs(decls, each);
    }) {
        return walk_message(payload, 0, decls, &mut Nothing);
    }
    v.enter(node, None, (0, payload.len()));
    let r = walk_message(payload, 0, decls, v);
    v.leave();
    r
}

fn err(kind: ErrorKind, offset: usize) -> DecodeError {
    DecodeError {
        kind,
        offset,
        field: 0,
        wire: 0,
        def: None,
        needed: 0,
        left: 0,
    }
}

/// A varint at the start of `buf` (absolute offset `at`): its value, or
/// why not, by prost's `decode_varint`.
fn varint(buf: &mut &[u8], at: usize) -> Result<u64, DecodeError> {
    let rest = *buf;
    decode_varint(buf).map_err(|_| {
        // Every byte left continues it: cut short; else over 10 bytes or 64 bits.
        let cut = rest.len() < 10 && rest.iter().all(|b| b & 0x80 != 0);
        err(
            if cut {
                ErrorKind::TruncatedVarint
            } else {
                ErrorKind::BadVarint
            },
            at,
        )
    })
}

/// A nested message (`def`, its element `index` if repeated, its key and
/// bytes over `span`): walked into `v` if it wants any of its fields, else
/// only checked.
fn walk_nested(
    body: &[u8],
    body_at: usize,
    def: &'static FieldDef,
    fields: &'static [Decl],
    index: Option<u32>,
    span: (usize, usize),
    v: &mut dyn Visit,
) -> Result<(), DecodeError> {
    let wanted = v.wants_any(group_key(fields), &|each| {
        each(def);
        message_defs(fields, each);
    });
    if !wanted {
        return walk_message(body, body_at, fields, &mut Nothing);
    }
    v.enter(def, index, span);
    let r = walk_message(body, body_at, fields, v);
    v.leave();
    r
}

fn walk_message(
    bytes: &[u8],
    base: usize,
    decls: &'static [Decl],
    v: &mut dyn Visit,
) -> Result<(), DecodeError> {
    let mut buf = bytes;
    let mut seen: u32 = 0;
    let mut counts = [0u32; MAX_FIELDS];
    while !buf.is_empty() {
        let key_at = base + bytes.len() - buf.len();
        let (tag, wire_raw, wire) = read_key(&mut buf, key_at)?;
        let at = |buf: &[u8]| base + bytes.len() - buf.len();
        let Some((i, d)) = decls.iter().enumerate().find(|(_, d)| d.number == tag) else {
            // Unknown: skipped as proto3 says, by prost.
            let before = buf;
            if skip_field(wire, tag, &mut buf, DecodeContext::default()).is_err() {
                return Err(skip_error(before, at(before), tag, wire_raw));
            }
            continue;
        };
        let fail = |kind, offset, needed: u64, left: u64| DecodeError {
            kind,
            offset,
            field: tag,
            wire: wire_raw,
            def: Some(d.def),
            needed,
            left,
        };
        if wire != d.kind.wire() {
            return Err(fail(ErrorKind::WireType, key_at, 0, 0));
        }
        seen |= 1 << (tag.min(31));
        // An element of a repeated field: its index.
        let index = d.repeated.then(|| counts.get_mut(i)).flatten().map(|c| {
            *c += 1;
            *c - 1
        });
        match d.kind {
            Kind::Bool | Kind::U32 | Kind::Enum(_) => {
                let value_at = at(buf);
                let x = varint(&mut buf, value_at)?;
                v.field(d.def, index, (key_at, at(buf)), varint_value(d.kind, x));
            }
            Kind::Float | Kind::Double => {
                let n = if matches!(d.kind, Kind::Float) { 4 } else { 8 };
                if buf.len() < n {
                    return Err(fail(
                        ErrorKind::PastEnd,
                        at(buf),
                        n as u64,
                        buf.len() as u64,
                    ));
                }
                let (raw, rest) = buf.split_at(n);
                buf = rest;
                v.field(
                    d.def,
                    index,
                    (key_at, at(buf)),
                    Value::Float(fixed_float(raw)),
                );
            }
            Kind::Str | Kind::Msg(_) => {
                let len_at = at(buf);
                let len = varint(&mut buf, len_at)?;
                if len > buf.len() as u64 {
                    return Err(fail(ErrorKind::PastEnd, len_at, len, buf.len() as u64));
                }
                let (body, rest) = buf.split_at(len as usize);
                let body_at = at(buf);
                buf = rest;
                match d.kind {
                    Kind::Msg(fields) => {
                        let span = (key_at, at(buf));
                        walk_nested(body, body_at, d.def, fields, index, span, v)?;
                    }
                    _ => {
                        if std::str::from_utf8(body).is_err() {
                            return Err(fail(ErrorKind::NotUtf8, key_at, 0, 0));
                        }
                        v.field(d.def, index, (key_at, at(buf)), Value::Text(body));
                    }
                }
            }
        }
    }
    absent_defaults(decls, seen, base + bytes.len(), v);
    Ok(())
}

/// A field's key at the start of `buf` (absolute offset `at`): its number,
/// its wire type as sent and as prost's; a number of 0 or above `u32`, or an
/// unknown wire type, is a bad key.
fn read_key(buf: &mut &[u8], at: usize) -> Result<(u32, u8, WireType), DecodeError> {
    let key = varint(buf, at)?;
    if key > u64::from(u32::MAX) || key >> 3 == 0 || key & 7 > 5 {
        return Err(err(ErrorKind::BadKey, at));
    }
    let wire = WireType::try_from(key & 7).map_err(|_| err(ErrorKind::BadKey, at))?;
    Ok(((key >> 3) as u32, (key & 7) as u8, wire))
}

/// The value of a varint field of `kind` (proto3: a `uint32` keeps the low
/// 32 bits, an enum is an `int32` named where it has a name).
fn varint_value(kind: Kind, x: u64) -> Value<'static> {
    match kind {
        Kind::Bool => Value::Bool(x != 0),
        Kind::U32 => Value::Unsigned(u64::from(x as u32)),
        Kind::Enum(names) => {
            let raw = x as i32;
            Value::Enum {
                raw: raw as u64,
                name: usize::try_from(raw)
                    .ok()
                    .and_then(|r| names.get(r))
                    .copied(),
            }
        }
        _ => Value::None,
    }
}

/// A little-endian `float` (4 bytes) or `double` (8), as an `f64`.
fn fixed_float(raw: &[u8]) -> f64 {
    match raw.try_into() {
        Ok(b4) => f64::from(f32::from_le_bytes(b4)),
        _ => raw.try_into().map(f64::from_le_bytes).unwrap_or_default(),
    }
}

/// The scalars of `decls` not on the wire (`seen` holds the numbers that
/// were), read as their proto3 defaults, at the message's end `end`.
fn absent_defaults(decls: &'static [Decl], seen: u32, end: usize, v: &mut dyn Visit) {
    for d in decls {
        if seen & (1 << d.number.min(31)) != 0 || d.repeated {
            continue;
        }
        let value = match d.kind {
            Kind::Str => Value::Text(b""),
            Kind::Bool => Value::Bool(false),
            Kind::U32 => Value::Unsigned(0),
            Kind::Float | Kind::Double => Value::Float(0.0),
            Kind::Enum(names) => Value::Enum {
                raw: 0,
                name: names.first().copied(),
            },
            Kind::Msg(_) => continue,
        };
        v.field(d.def, None, (end, end), value);
    }
}

/// Why prost's `skip_field` refused an unknown field starting at `buf`
/// (absolute offset `at`), found again step by step for its offset.
fn skip_error(buf: &[u8], at: usize, tag: u32, wire_raw: u8) -> DecodeError {
    let mut b = buf;
    let e = |kind, offset| DecodeError {
        kind,
        offset,
        field: tag,
        wire: wire_raw,
        def: None,
        needed: 0,
        left: 0,
    };
    let pos = |b: &[u8]| at + buf.len() - b.len();
    match wire_raw {
        0 => match varint(&mut b, at) {
            Err(x) => DecodeError { field: tag, ..x },
            Ok(_) => e(ErrorKind::BadVarint, at),
        },
        1 | 5 => {
            let n = if wire_raw == 1 { 8 } else { 4 };
            DecodeError {
                needed: n,
                left: b.len() as u64,
                ..e(ErrorKind::PastEnd, at)
            }
        }
        2 => match varint(&mut b, at) {
            Err(x) => DecodeError { field: tag, ..x },
            Ok(len) => DecodeError {
                needed: len,
                left: b.len() as u64,
                ..e(ErrorKind::PastEnd, at)
            },
        },
        3 => {
            // Find where the group stops making sense.
            loop {
                let k_at = pos(b);
                let Ok((t, w)) = decode_key(&mut b) else {
                    return e(ErrorKind::Group, k_at);
                };
                if w == WireType::EndGroup {
                    return e(ErrorKind::Group, k_at);
                }
                if skip_field(w, t, &mut b, DecodeContext::default()).is_err() {
                    return e(ErrorKind::Group, k_at);
                }
            }
        }
        _ => e(ErrorKind::Group, at.saturating_sub(1)),
    }
}

/// The analysis' decoder: prost merges each datagram into messages it keeps
/// (cleared first), so a steady stream of packets allocates nothing once
/// their strings and lists have grown. Where prost refuses a datagram, the
/// field walk finds the offset.
#[derive(Debug, Default)]
pub struct Decoder {
    pub v2e: VesselToEnvironment,
    pub e2v: EnvironmentToVessel,
}

/// The walk with nothing to hand on: only its error.
struct Nothing;
impl Visit for Nothing {
    fn field(&mut self, _: &'static FieldDef, _: Option<u32>, _: (usize, usize), _: Value<'_>) {}
    fn enter(&mut self, _: &'static FieldDef, _: Option<u32>, _: (usize, usize)) {}
    fn leave(&mut self) {}
}

/// Where a datagram prost refused fails, by the walk; a refusal the walk
/// does not place (never seen: a test holds them together) at offset 0.
pub fn locate(payload: &[u8], which: Which) -> DecodeError {
    walk(payload, which, &mut Nothing)
        .err()
        .unwrap_or(err(ErrorKind::BadKey, 0))
}

impl Decoder {
    /// Decodes a vessel's packet into [`Decoder::v2e`].
    pub fn vessel(&mut self, payload: &[u8]) -> Result<&VesselToEnvironment, DecodeError> {
        self.v2e.clear();
        match self.v2e.merge(payload) {
            Ok(()) => Ok(&self.v2e),
            Err(_) => Err(locate(payload, Which::ToEnvironment)),
        }
    }

    /// Decodes the environment's packet into [`Decoder::e2v`]. Its sensors
    /// stay in place from one packet to the next, cleared, so that the list
    /// of visible objects keeps its room (prost's `clear` would drop the
    /// `Option` with the list inside): once a packet has had sensors,
    /// `ship_sensors` is `Some` whether or not this one has them. Their
    /// presence is not told by it; the version-only reply is told by the
    /// bytes ([`classify`]).
    pub fn environment(&mut self, payload: &[u8]) -> Result<&EnvironmentToVessel, DecodeError> {
        let mut sensors = self.e2v.ship_sensors.take();
        self.e2v.clear();
        if let Some(s) = &mut sensors {
            let visual = s.visual.take().map(|mut v| {
                v.clear();
                v
            });
            s.clear();
            s.visual = visual;
        }
        self.e2v.ship_sensors = sensors;
        match self.e2v.merge(payload) {
            Ok(()) => Ok(&self.e2v),
            Err(_) => Err(locate(payload, Which::ToVessel)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_e2v() -> EnvironmentToVessel {
        EnvironmentToVessel {
            protocol_version: "0.0.2".into(),
            join_status: true,
            vessel_id: "v-1".into(),
            sync_number: 200,
            ship_input: Some(ShipInput {
                throttle_left_engine: 0.25,
                fire_gun: true,
                ..Default::default()
            }),
            ship_sensors: Some(ShipSensors {
                visual: Some(VisualSensors {
                    visible_objects: vec![
                        VisibleObject {
                            r#type: 1,
                            position: Some(Position { x: 1.5, y: -2.0 }),
                            orientation: 3.0,
                            velocity: None,
                        };
                        2
                    ],
                }),
                health: Some(HealthSensor { health: 90 }),
            }),
        }
    }

    #[derive(Default)]
    struct Lines(Vec<String>);
    impl Visit for Lines {
        fn field(
            &mut self,
            def: &'static FieldDef,
            index: Option<u32>,
            span: (usize, usize),
            value: Value<'_>,
        ) {
            let i = index.map(|i| format!("[{i}]")).unwrap_or_default();
            self.0.push(format!(
                "{}{i}@{}+{}={value}",
                def.name,
                span.0,
                span.1 - span.0
            ));
        }
        fn enter(&mut self, def: &'static FieldDef, index: Option<u32>, span: (usize, usize)) {
            let i = index.map(|i| format!("[{i}]")).unwrap_or_default();
            self.0
                .push(format!("{}{i}@{}+{}", def.name, span.0, span.1 - span.0));
        }
        fn leave(&mut self) {}
    }

    #[test]
    fn the_walk_sees_what_prost_encodes_with_spans_and_defaults() {
        let bytes = VesselToEnvironment {
            protocol_version: "0.0.2".into(),
            vessel_id: String::new(),
            sync_number: 0,
            ship_input: Some(ShipInput {
                throttle_left_engine: 0.5,
                ..Default::default()
            }),
        }
        .encode_to_vec();
        assert_eq!(classify(&bytes), Which::ToEnvironment);
        let mut l = Lines::default();
        walk(&bytes, Which::ToEnvironment, &mut l).unwrap();
        assert_eq!(
            l.0,
            [
                "vessel.vesselToEnvironment@0+14",
                "vessel.protocolVersion@0+7=\"0.0.2\"",
                "vessel.shipInput@7+7",
                "vessel.shipInput.throttleLeftEngine@9+5=0.5",
                "vessel.shipInput.throttleRightEngine@14+0=0",
                "vessel.shipInput.thrusterFrontLeft@14+0=false",
                "vessel.shipInput.thrusterFrontRight@14+0=false",
                "vessel.shipInput.thrusterLeftFront@14+0=false",
                "vessel.shipInput.thrusterLeftRear@14+0=false",
                "vessel.shipInput.thrusterRightFront@14+0=false",
                "vessel.shipInput.thrusterRightRear@14+0=false",
                "vessel.shipInput.thrusterRearLeft@14+0=false",
                "vessel.shipInput.thrusterRearRight@14+0=false",
                "vessel.shipInput.fireGun@14+0=false",
                "vessel.vesselID@14+0=\"\"",
                "vessel.syncNumber@14+0=0",
            ]
        );
        let e = sample_e2v().encode_to_vec();
        assert_eq!(classify(&e), Which::ToVessel);
        let mut l = Lines::default();
        walk(&e, Which::ToVessel, &mut l).unwrap();
        assert!(
            l.0.contains(&"vessel.syncNumber@14+3=200".to_owned()),
            "{:?}",
            l.0
        );
        assert!(
            l.0.iter()
                .any(|x| x.starts_with("vessel.shipSensors.visual.visibleObjects[1]@")),
            "{:?}",
            l.0
        );
        assert!(
            l.0.contains(
                &"vessel.shipSensors.visual.visibleObjects.type@32+2=Bullet (1)".to_owned()
            ),
            "{:?}",
            l.0
        );
        let mut d = Decoder::default();
        let m = d.environment(&e).unwrap();
        let want = sample_e2v();
        assert_eq!(
            (
                &m.protocol_version,
                m.join_status,
                &m.vessel_id,
                m.sync_number
            ),
            (&want.protocol_version, true, &want.vessel_id, 200)
        );
        assert_eq!(m.ship_input, want.ship_input);
        let sensors = want.ship_sensors.unwrap();
        let kept = m.ship_sensors.as_ref().unwrap();
        assert_eq!(kept.visual, sensors.visual);
        assert_eq!(kept.health, sensors.health);
    }

    /// The table derived from the declarations tells each field as the
    /// notes' tables say (written here by hand from vessel-NOTES.md).
    #[test]
    fn the_fields_that_tell_the_messages_apart_are_the_notes() {
        use WireType::{LengthDelimited as Len, Varint};
        for (n, row) in TELLS.iter().enumerate() {
            for (w, told) in row.iter().enumerate() {
                let wire = WireType::try_from(w as u64).unwrap();
                let want = match (n, wire) {
                    (2 | 4, Len) | (3, Varint) => Which::ToEnvironment,
                    (2 | 4, Varint) | (3, Len) | (5 | 6, _) => Which::ToVessel,
                    _ => Which::Either,
                };
                assert_eq!(*told, want, "field {n}, wire type {w}");
            }
        }
    }

    #[test]
    fn version_only_is_either_message() {
        let e = EnvironmentToVessel {
            protocol_version: "0.0.3".into(),
            ..Default::default()
        };
        assert_eq!(classify(&e.encode_to_vec()), Which::Either);
    }

    #[test]
    fn malformed_datagrams_name_their_offset() {
        let e = sample_e2v().encode_to_vec();
        // Cut anywhere inside: prost refuses, the walk says where.
        let mut d = Decoder::default();
        for cut in 1..e.len() {
            let r = d.environment(&e[..cut]);
            let walk = walk(&e[..cut], Which::ToVessel, &mut Nothing);
            assert_eq!(r.is_err(), walk.is_err(), "cut {cut}");
            if let Err(x) = r {
                assert!(x.offset <= cut, "cut {cut}: {x}");
                assert!(x.is_short(), "cut {cut}: {x}");
            }
        }
        // Wire type contradicting the field: syncNumber (4) as a string.
        let bad = [0x0a, 0x01, b'1', 0x22, 0x01, b'x'];
        let x = d.environment(&bad).unwrap_err();
        assert_eq!((x.kind, x.offset, x.field), (ErrorKind::WireType, 3, 4));
        assert_eq!(
            x.to_string(),
            "field 4 (vessel.syncNumber) at offset 3 sent as length-delimited, its type needs another wire type"
        );
        // A length past the end.
        let x = d.vessel(&[0x0a, 0x05, b'1']).unwrap_err();
        assert_eq!(
            (x.kind, x.offset, x.needed, x.left),
            (ErrorKind::PastEnd, 1, 5, 1)
        );
        // Unknown fields are skipped; their faults still count.
        assert!(d.vessel(&[0x0a, 0x01, b'1', 0x78, 0x05]).is_ok());
        let x = d.vessel(&[0x0a, 0x01, b'1', 0x7a, 0x09, 0]).unwrap_err();
        assert_eq!((x.kind, x.offset, x.field), (ErrorKind::PastEnd, 4, 15));
        let x = d.vessel(&[0x18, 0xff]).unwrap_err();
        assert_eq!((x.kind, x.offset), (ErrorKind::TruncatedVarint, 1));
        let x = d.vessel(&[0x0f]).unwrap_err();
        assert_eq!((x.kind, x.offset), (ErrorKind::BadKey, 0));
        let x = d.vessel(&[0x0a, 0x01, 0xff]).unwrap_err();
        assert_eq!((x.kind, x.offset), (ErrorKind::NotUtf8, 0));
    }

    /// `protocols/vessel.proto` and the walk's tables declare the same
    /// fields: per message, each field's name, number, type and label.
    #[test]
    fn the_tables_are_the_proto_file() {
        let text = include_str!("../../../protocols/vessel.proto");
        // message NAME { [repeated] TYPE NAME = N; ... }, nested enums skipped.
        type Fields = Vec<(String, String, u32, bool)>;
        let mut proto: Vec<(String, Fields)> = Vec::new();
        let mut depth = 0;
        for line in text.lines() {
            let line = line.split("//").next().unwrap().trim();
            if let Some(rest) = line.strip_prefix("message ") {
                let name = rest.trim_end_matches('{').trim().to_owned();
                proto.push((name, Vec::new()));
                depth = 1;
            } else if line.starts_with("enum ") {
                depth += 1;
            } else if line == "}" {
                depth -= 1;
            } else if depth == 1 && line.ends_with(';') && line.contains('=') {
                let (decl, number) = line.trim_end_matches(';').split_once('=').unwrap();
                let words: Vec<&str> = decl.split_whitespace().collect();
                let repeated = words[0] == "repeated";
                let (ty, name) = (words[words.len() - 2], words[words.len() - 1]);
                let number: u32 = number.trim().parse().unwrap();
                proto
                    .last_mut()
                    .unwrap()
                    .1
                    .push((ty.into(), name.into(), number, repeated));
            }
        }
        let kind_name = |k: Kind| match k {
            Kind::Str => "string".to_owned(),
            Kind::Bool => "bool".into(),
            Kind::U32 => "uint32".into(),
            Kind::Float => "float".into(),
            Kind::Double => "double".into(),
            Kind::Enum(_) => "ObjectType".into(),
            Kind::Msg(_) => "message".into(),
        };
        let tables: [(&str, &[Decl]); 9] = [
            ("vesselToEnvironment", V2E),
            ("environmentToVessel", E2V),
            ("ShipInput", ShipInput::FIELDS),
            ("ShipSensors", ShipSensors::FIELDS),
            ("VisualSensors", VisualSensors::FIELDS),
            ("VisibleObject", VisibleObject::FIELDS),
            ("Position", Position::FIELDS),
            ("Velocity", Velocity::FIELDS),
            ("HealthSensor", HealthSensor::FIELDS),
        ];
        assert_eq!(proto.len(), tables.len());
        for ((pname, pfields), (tname, decls)) in proto.iter().zip(tables) {
            assert_eq!(pname, tname);
            assert_eq!(pfields.len(), decls.len(), "{tname}");
            for ((ty, name, number, repeated), d) in pfields.iter().zip(decls) {
                assert_eq!(
                    (name.as_str(), *number, *repeated),
                    (d.def.label, d.number, d.repeated),
                    "{tname}"
                );
                let scalar = ["string", "bool", "uint32", "float", "double", "ObjectType"];
                let want = if scalar.contains(&ty.as_str()) {
                    ty.clone()
                } else {
                    "message".into()
                };
                assert_eq!(want, kind_name(d.kind), "{tname}.{name}");
            }
        }
    }

    /// prost and the walk accept exactly the same datagrams: every one-byte
    /// change of real packets, and every cut.
    #[test]
    fn prost_and_the_walk_agree_on_every_mutation() {
        let mut d = Decoder::default();
        let packets = [
            (sample_e2v().encode_to_vec(), Which::ToVessel),
            (
                VesselToEnvironment {
                    protocol_version: "0.0.2".into(),
                    vessel_id: "abc".into(),
                    sync_number: 300,
                    ship_input: Some(ShipInput {
                        throttle_right_engine: 1.5,
                        thruster_rear_left: true,
                        ..Default::default()
                    }),
                }
                .encode_to_vec(),
                Which::ToEnvironment,
            ),
        ];
        for (p, which) in packets {
            for i in 0..p.len() {
                for b in [
                    0x00, 0x01, 0x02, 0x05, 0x07, 0x08, 0x0b, 0x0c, 0x7f, 0x80, 0xff,
                ] {
                    let mut m = p.clone();
                    m[i] = b;
                    let prost_ok = match which {
                        Which::ToEnvironment => d.vessel(&m).is_ok(),
                        _ => d.environment(&m).is_ok(),
                    };
                    let walk_ok = walk(&m, which, &mut Nothing).is_ok();
                    assert_eq!(prost_ok, walk_ok, "byte {i} = {b:#x}: {m:02x?}");
                }
            }
        }
    }
}
