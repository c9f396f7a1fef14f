//! Constants, packet types and the enumerations of the Starstrike wire format
//! (`starstrike-protocol.md`, settled by `starstrike-NOTES.md`).

use crate::proto::codec::{Shape, Wire, put_bytes};
use crate::proto::layout::ByteOrder;
use std::fmt;

/// The magic `protocolId`, "STRS" on the wire (big-endian).
pub const MAGIC: u32 = 0x5354_5253;
/// The packet header: `u32 protocolId`, `u16 packetType`, `u16 sequenceNumber`,
/// `u32 ackBits`.
pub const HEADER_LEN: usize = 12;
/// The MTU: the whole UDP payload, header included. Larger packets are flagged
/// (`oversize`) and still decoded.
pub const MTU: usize = 1200;
/// The largest payload within the MTU.
pub const MAX_PAYLOAD: usize = MTU - HEADER_LEN;
/// The default server port (Starstrike is recognised by its magic on any port).
pub const DEFAULT_PORT: u16 = 7777;
/// The protocol version of the draft.
pub const PROTOCOL_VERSION: u8 = 1;
/// Lengths of the fixed strings.
pub const PLAYER_NAME_LEN: usize = 32;
pub const REASON_MESSAGE_LEN: usize = 128;
pub const CHAT_MESSAGE_LEN: usize = 256;
/// A reliable packet unacked for this long is sent again.
pub const RETRANSMIT_TIMEOUT_MS: u64 = 500;
/// At most this many retransmissions (six sends in all).
pub const MAX_RETRANSMISSIONS: u32 = 5;
/// A peer silent this long has timed out.
pub const CONNECTION_TIMEOUT_MS: u64 = 10_000;
/// A peer sends at least one packet (a Heartbeat if nothing else) this often.
pub const HEARTBEAT_INTERVAL_MS: u64 = 1_000;
/// The bits of `ackBits`: how far back one header acknowledges.
pub const ACK_WINDOW: u32 = 32;

/// Who may send a packet type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sender {
    Client,
    Server,
    Both,
}

macro_rules! packet_types {
    ($( $(#[$doc:meta])* $name:ident = $id:literal, $reliable:literal, $sender:ident; )*) => {
        /// A `packetType`: one message per packet, its payload after the header.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum PacketType {
            $( $(#[$doc])* $name = $id, )*
        }

        /// The bits of a `packetType` that tell the defined types apart: the
        /// high byte's two low bits and the low byte's three (the ids are
        /// 0x0001 to 0x0005, 0x0100 to 0x0103, 0x0200 to 0x0202, 0x0300).
        const SLOT_BITS: u16 = 0x0307;

        /// The place of an id's type in [`ORDINALS`]: its [`SLOT_BITS`],
        /// packed into 5 bits.
        #[inline(always)]
        const fn slot(id: u16) -> usize {
            (((id >> 5) & 0x18) | (id & 7)) as usize
        }

        const NO_TYPE: u8 = u8::MAX;

        /// The ordinal of each slot's type (its order in the specification),
        /// [`NO_TYPE`] for a slot no type has. Each defined id has a slot of
        /// its own and no bit outside [`SLOT_BITS`], or this fails to
        /// compile.
        const ORDINALS: [u8; 32] = {
            let ids = [ $( $id, )* ];
            let mut table = [NO_TYPE; 32];
            let mut k = 0;
            while k < ids.len() {
                let id: u16 = ids[k];
                assert!(id & !SLOT_BITS == 0, "a packet type outside SLOT_BITS");
                assert!(table[slot(id)] == NO_TYPE, "two packet types share a slot");
                table[slot(id)] = k as u8;
                k += 1;
            }
            table
        };

        impl PacketType {
            /// The index in [`PacketType::ALL`]: the counter slot of the type
            /// and its row of the layout.
            ///
            /// Read from a table of 32 places (the ids are sparse: a `match` on them
            /// was a chain of compares, some 8 instructions a call and a few
            /// calls a packet).
            #[inline(always)]
            pub const fn ordinal(self) -> usize {
                ORDINALS[slot(self as u16)] as usize
            }

            /// Every type, in the order of the specification (the ordinal).
            pub const ALL: [PacketType; 13] = [ $( PacketType::$name, )* ];
            pub const COUNT: usize = Self::ALL.len();

            /// The type of a `packetType` value, if the specification defines it.
            #[inline]
            pub const fn from_u16(id: u16) -> Option<PacketType> {
                // A defined id has its own slot (checked at compile time,
                // `ORDINALS`); an id outside the slots' bits, or another
                // id sharing a slot, is not that slot's type.
                if id & !SLOT_BITS != 0 {
                    return None;
                }
                match ORDINALS[slot(id)] {
                    NO_TYPE => None,
                    k => {
                        let t = Self::ALL[k as usize];
                        if t as u16 == id { Some(t) } else { None }
                    }
                }
            }

            /// The name in the specification: `ConnectionRequest`.
            pub const fn name(self) -> &'static str {
                match self {
                    $( PacketType::$name => stringify!($name), )*
                }
            }

            /// Reliable types are retransmitted until acknowledged.
            pub const fn is_reliable(self) -> bool {
                match self {
                    $( PacketType::$name => $reliable, )*
                }
            }

            /// Who may send it.
            pub const fn sender(self) -> Sender {
                match self {
                    $( PacketType::$name => Sender::$sender, )*
                }
            }
        }
    };
}

packet_types! {
    /// 0x0001, client to server: version, player name, client id.
    ConnectionRequest = 0x0001, true, Client;
    /// 0x0002, server to client: assigned player id, server tick, tick rate.
    ConnectionAccept = 0x0002, true, Server;
    /// 0x0003, server to client: reason and message.
    ConnectionReject = 0x0003, true, Server;
    /// 0x0004, either way: reason and message; ends the session.
    Disconnect = 0x0004, true, Both;
    /// 0x0005, either way: the sender's clock in ms.
    Heartbeat = 0x0005, true, Both;
    /// 0x0100, client to server, every frame: tick, move, look, buttons.
    PlayerInput = 0x0100, false, Client;
    /// 0x0101, server to client at the tick rate: tick and entity states.
    WorldSnapshot = 0x0101, false, Server;
    /// 0x0102, server to client.
    EntitySpawn = 0x0102, true, Server;
    /// 0x0103, server to client.
    EntityDestroy = 0x0103, true, Server;
    /// 0x0200, server to clients.
    PlayerScored = 0x0200, true, Server;
    /// 0x0201, server to clients.
    PlayerDied = 0x0201, true, Server;
    /// 0x0202, server to clients.
    MatchState = 0x0202, true, Server;
    /// 0x0300, either way.
    ChatMessage = 0x0300, true, Both;
}

impl PacketType {
    /// The `packetType` value.
    pub const fn id(self) -> u16 {
        self as u16
    }

    /// The exact payload length of a fixed-size type (`None` for WorldSnapshot).
    pub const fn payload_len(self) -> Option<usize> {
        match self {
            PacketType::WorldSnapshot => None,
            t => Some(t.min_payload_len()),
        }
    }
}

impl fmt::Display for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! enum_kinds {
    ($( $(#[$doc:meta])* $kind:ident = $label:literal { $( $value:literal => $vname:literal ),* $(,)? } )*) => {
        /// The enumerations of the specification (all `u8` on the wire). A value
        /// outside the listed ones decodes, and is a violation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum EnumKind {
            $( $(#[$doc])* $kind, )*
        }

        impl EnumKind {
            /// The enumeration's name in the specification.
            pub const fn name(self) -> &'static str {
                match self {
                    $( EnumKind::$kind => $label, )*
                }
            }

            /// The name of a value, if the specification lists it.
            pub const fn value_name(self, raw: u64) -> Option<&'static str> {
                match self {
                    $( EnumKind::$kind => match raw {
                        $( $value => Some($vname), )*
                        _ => None,
                    }, )*
                }
            }
        }
    };
}

enum_kinds! {
    EntityType = "EntityType" { 1 => "Player", 2 => "Projectile", 3 => "Asteroid", 4 => "Powerup" }
    RejectReason = "RejectReason" {
        1 => "ServerFull", 2 => "VersionMismatch", 3 => "Banned", 4 => "InvalidCredentials",
    }
    DisconnectReason = "DisconnectReason" {
        1 => "ClientQuit", 2 => "Timeout", 3 => "Kicked", 4 => "ServerShutdown",
    }
    DestroyReason = "DestroyReason" { 1 => "Timeout", 2 => "Collision", 3 => "OutOfBounds", 4 => "Killed" }
    ScoreType = "ScoreType" { 1 => "Kill", 2 => "Assist", 3 => "Objective" }
    DeathType = "DeathType" { 1 => "Weapon", 2 => "Collision", 3 => "OutOfBounds", 4 => "Suicide" }
    GameState = "GameState" {
        1 => "Waiting", 2 => "Starting", 3 => "InProgress", 4 => "Ending", 5 => "Ended",
    }
    ChatChannel = "ChatChannel" { 1 => "All", 2 => "Team", 3 => "Whisper", 4 => "System" }
}

impl EnumKind {
    /// Whether `raw` is a listed value.
    pub const fn is_valid(self, raw: u64) -> bool {
        self.value_name(raw).is_some()
    }
}

/// `DisconnectReason::Timeout`: what a sender that gave up retransmitting says.
pub const DISCONNECT_TIMEOUT: u8 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    /// The table behind `ordinal` and `from_u16` is the specification's list:
    /// each type's place in `ALL`, and every id of no type refused.
    #[test]
    fn ordinals_and_ids_are_the_list_s() {
        for (k, t) in PacketType::ALL.iter().enumerate() {
            assert_eq!(t.ordinal(), k, "{t}");
        }
        for id in 0..=u16::MAX {
            let listed = PacketType::ALL.iter().find(|t| t.id() == id).copied();
            assert_eq!(PacketType::from_u16(id), listed, "{id:#06x}");
        }
    }

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
    fn types_round_trip_their_ids_and_ordinals() {
        for (i, t) in PacketType::ALL.iter().enumerate() {
            assert_eq!(PacketType::from_u16(t.id()), Some(*t));
            assert_eq!(t.ordinal(), i);
        }
        assert_eq!(PacketType::from_u16(0), None);
        assert_eq!(PacketType::from_u16(0x0006), None);
        assert_eq!(PacketType::from_u16(0x0104), None);
        assert_eq!(PacketType::ChatMessage.id(), 0x0300);
    }

    #[test]
    fn payload_sizes_are_the_notes() {
        let sizes = [41, 12, 129, 129, 4, 24, 5, 34, 5, 9, 9, 9, 261];
        for (t, n) in PacketType::ALL.iter().zip(sizes) {
            assert_eq!(t.min_payload_len(), n, "{t}");
        }
        assert_eq!(PacketType::WorldSnapshot.payload_len(), None);
    }

    #[test]
    fn reliability_is_the_notes() {
        let unreliable: Vec<_> = PacketType::ALL
            .iter()
            .filter(|t| !t.is_reliable())
            .collect();
        assert_eq!(
            unreliable,
            [&PacketType::PlayerInput, &PacketType::WorldSnapshot]
        );
    }

    #[test]
    fn enums_name_their_values() {
        assert_eq!(EnumKind::GameState.value_name(5), Some("Ended"));
        assert_eq!(EnumKind::ScoreType.value_name(4), None);
        assert!(!EnumKind::EntityType.is_valid(0));
        assert_eq!(EnumKind::DisconnectReason.value_name(2), Some("Timeout"));
    }
}

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

/// Three `f32` items.
impl Wire for Vector3 {
    const SHAPE: &'static [Shape] = &[Shape::Float(4); 3];
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(b: &[u8], at: usize, order: ByteOrder) -> Self {
        let [x, y, z] = <[f32; 3]>::get(b, at, order);
        Vector3 { x, y, z }
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put(&self, b: &mut [u8], at: usize, order: ByteOrder) {
        [self.x, self.y, self.z].put(b, at, order);
    }
}

/// Four `f32` items.
impl Wire for Quaternion {
    const SHAPE: &'static [Shape] = &[Shape::Float(4); 4];
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(b: &[u8], at: usize, order: ByteOrder) -> Self {
        let [x, y, z, w] = <[f32; 4]>::get(b, at, order);
        Quaternion { x, y, z, w }
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put(&self, b: &mut [u8], at: usize, order: ByteOrder) {
        [self.x, self.y, self.z, self.w].put(b, at, order);
    }
}

/// One padded text item of `N` bytes, kept as sent.
impl<const N: usize> Wire for FixedStr<N> {
    const SHAPE: &'static [Shape] = &[Shape::Bytes(N)];
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(b: &[u8], at: usize, order: ByteOrder) -> Self {
        FixedStr(Wire::get(b, at, order))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put(&self, b: &mut [u8], at: usize, _order: ByteOrder) {
        put_bytes(b, at, &self.0);
    }
}
