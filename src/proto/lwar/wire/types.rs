//! Constants and the small value types of the lwar wire format.

use std::fmt;

/// Every lwar packet starts with this application id (big-endian on the wire).
pub const APP_ID: u32 = 0xf270_87c5;
/// The packet header: appId, ack and timestamp, three big-endian u32.
pub const HEADER_LEN: usize = 12;
/// Maximum packet size, header included. Larger packets still decode but are a violation.
pub const MAX_PACKET_SIZE: usize = 512;
/// A player name must be shorter than this many bytes.
pub const MAX_NAME_LEN: usize = 32;
/// A chat message must be shorter than this many bytes.
pub const MAX_CHAT_LEN: usize = 255;
/// A server holds at most this many players.
pub const MAX_PLAYERS: usize = 8;
/// The default UDP port of an lwar server.
pub const DEFAULT_PORT: u16 = 32422;
/// Seconds without any packet after which a peer is considered gone.
pub const DISCONNECT_TIMEOUT_SECS: u64 = 15;
/// Length of a reliable message header (type and seqno).
pub const RELIABLE_HEADER_LEN: usize = 5;
/// Length of an unreliable message header (type only).
pub const UNRELIABLE_HEADER_LEN: usize = 1;

/// A generational identifier: on the wire a big-endian u16 generation, then a u16 index.
///
/// Displayed as `generation:index`, in wire order, so a reader of a hex dump finds
/// the same numbers in the same order.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Id {
    pub generation: u16,
    pub index: u16,
}

impl Id {
    pub const fn new(generation: u16, index: u16) -> Self {
        Id { generation, index }
    }

    /// Reads an id from its four wire bytes.
    pub const fn from_bytes(b: [u8; 4]) -> Self {
        Id {
            generation: u16::from_be_bytes([b[0], b[1]]),
            index: u16::from_be_bytes([b[2], b[3]]),
        }
    }

    /// The four wire bytes of this id.
    pub const fn to_bytes(self) -> [u8; 4] {
        let g = self.generation.to_be_bytes();
        let i = self.index.to_be_bytes();
        [g[0], g[1], i[0], i[1]]
    }

    /// The id as the u32 the specification names (`uint32(Id)`).
    pub const fn to_u32(self) -> u32 {
        ((self.generation as u32) << 16) | self.index as u32
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Written for every message of every packet line: no `write!`.
        f.write_str(itoa::Buffer::new().format(self.generation))?;
        f.write_str(":")?;
        f.write_str(itoa::Buffer::new().format(self.index))
    }
}

/// Which peer may send a message type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sender {
    Client,
    Server,
    Both,
}

macro_rules! message_types {
    ($( $(#[$doc:meta])* $name:ident = $id:literal, $sender:ident; )*) => {
        /// The message types of the specification, with their wire ids.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum MessageType {
            $( $(#[$doc])* $name = $id, )*
        }

        impl MessageType {
            /// Every message type, in wire-id order.
            pub const ALL: [MessageType; 18] = [ $( MessageType::$name, )* ];

            /// The type for a wire id; `None` for unknown ids and the deprecated 102.
            #[inline]
            pub const fn from_u8(id: u8) -> Option<Self> {
                match id {
                    $( $id => Some(MessageType::$name), )*
                    _ => None,
                }
            }

            /// The name the specification uses (`Connect`, ..., `UpdateCircle`).
            pub const fn name(self) -> &'static str {
                match self {
                    $( MessageType::$name => stringify!($name), )*
                }
            }

            /// Which peer may send this type.
            pub const fn sender(self) -> Sender {
                match self {
                    $( MessageType::$name => Sender::$sender, )*
                }
            }
        }
    };
}

message_types! {
    /// Client wants to connect to a server.
    Connect = 1, Client;
    /// Client wants to disconnect from a server.
    Disconnect = 2, Client;
    /// Informs all clients about a new player.
    Join = 3, Server;
    /// Informs all clients that a client left.
    Leave = 4, Server;
    /// Broadcasts a chat message.
    Chat = 5, Both;
    /// Adds a new entity to the clients' worlds.
    Add = 6, Server;
    /// Removes an entity from the clients' worlds.
    Remove = 7, Server;
    /// Broadcasts a ship or weapon type change.
    Selection = 8, Both;
    /// Broadcasts a player name change.
    Name = 9, Both;
    /// The game state has been fully synced.
    Synced = 10, Server;
    /// Periodic player stats (pings, scores).
    Stats = 101, Server;
    /// Periodic client input state.
    Input = 103, Client;
    /// The server is full.
    Full = 104, Server;
    /// Two entities collided.
    Collision = 105, Server;
    /// Entity states.
    Update = 110, Server;
    /// Position-only entity updates.
    UpdatePos = 111, Server;
    /// Ray entity updates.
    UpdateRay = 112, Server;
    /// Circle entity updates.
    UpdateCircle = 113, Server;
}

/// The wire id of the deprecated message type (it used to be Update).
pub const DEPRECATED_TYPE_ID: u8 = 102;

impl MessageType {
    /// The number of message types; [`MessageType::ordinal`] is below it.
    pub const COUNT: usize = Self::ALL.len();

    /// The wire id.
    pub const fn id(self) -> u8 {
        self as u8
    }

    /// Reliable types have ids 1 to 99 and carry a sequence number.
    pub const fn is_reliable(self) -> bool {
        (self as u8) < 100
    }

    /// A dense index in `0..COUNT`, for per-type counters kept in arrays.
    pub const fn ordinal(self) -> usize {
        match self as u8 {
            id @ 1..=10 => id as usize - 1,
            101 => 10,
            id @ 103..=105 => id as usize - 92,
            id => id as usize - 96,
        }
    }

    /// Length of the message header: 5 for reliable types, 1 for unreliable ones.
    pub const fn header_len(self) -> usize {
        if self.is_reliable() {
            RELIABLE_HEADER_LEN
        } else {
            UNRELIABLE_HEADER_LEN
        }
    }

    /// The bytes of the body that do not depend on a length or count: for strings and
    /// counted messages this includes the u8 length or count itself (from
    /// the type's layout, `layout.rs`).
    pub fn fixed_body_len(self) -> usize {
        self.layout().fixed
    }

    /// For counted messages, the size of one entry.
    pub fn entry_len(self) -> Option<usize> {
        self.layout().entry.map(|e| e.len)
    }

    /// True for the messages whose body ends in a u8-length string.
    pub fn has_string(self) -> bool {
        self.layout().string
    }

    /// True for the Update family (Update, UpdatePos, UpdateRay, UpdateCircle).
    pub const fn is_update(self) -> bool {
        matches!(
            self,
            MessageType::Update
                | MessageType::UpdatePos
                | MessageType::UpdateRay
                | MessageType::UpdateCircle
        )
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_are_dense_and_in_wire_order() {
        for (i, t) in MessageType::ALL.iter().enumerate() {
            assert_eq!(t.ordinal(), i, "{t}");
            assert_eq!(MessageType::from_u8(t.id()), Some(*t));
        }
    }

    #[test]
    fn reliable_split_follows_the_id_ranges() {
        let reliable: Vec<_> = MessageType::ALL
            .iter()
            .filter(|t| t.is_reliable())
            .collect();
        assert_eq!(reliable.len(), 10);
        assert!(MessageType::from_u8(DEPRECATED_TYPE_ID).is_none());
        assert!(MessageType::from_u8(0).is_none());
        assert!(MessageType::from_u8(11).is_none());
        assert!(MessageType::from_u8(114).is_none());
    }

    #[test]
    fn id_is_generation_then_index_big_endian() {
        let id = Id::from_bytes([0x00, 0x02, 0x01, 0x00]);
        assert_eq!(id, Id::new(2, 256));
        assert_eq!(id.to_bytes(), [0x00, 0x02, 0x01, 0x00]);
        assert_eq!(id.to_u32(), 0x0002_0100);
        assert_eq!(id.to_string(), "2:256");
    }
}
