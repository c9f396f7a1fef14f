//! The Starstrike wire format (`starstrike-protocol.md` version 1.0, settled by
//! `starstrike-NOTES.md`, which wins where they differ): everything else in the
//! Starstrike module decodes and encodes through here.
//!
//! As in smoltcp's `wire` module, two sides:
//!
//! - **The view** borrows the bytes: [`Packet::new_checked`] checks the header
//!   (length, magic, known `packetType`) and the payload's exact length once;
//!   then every accessor reads in place, allocates nothing and cannot panic.
//! - **Representations** own their data: [`PacketRepr`] parses from and emits to
//!   bytes (big-endian, fixed strings NUL-padded, f32 as IEEE-754 binary32).
//!
//! Three outcomes for bytes, kept apart:
//!
//! - a [`DecodeError`] when they cannot be read: a short header, a wrong magic,
//!   an unknown type, a payload shorter than its type needs (`Truncated`, with
//!   the offset and name of the field of the first missing byte: the capture's
//!   snaplen may be the cause, which the analyzer tells apart), or longer
//!   (`TrailingBytes`; for WorldSnapshot, length != `5 + 47 * entityCount`);
//! - a [`Violation`] when they read but break a rule: an enumeration outside its
//!   values, a NaN or infinite float, moveX/moveY outside [-1, 1], a non-NUL byte
//!   after a fixed string's first NUL, a packet over the 1200-byte MTU;
//! - nothing, for a valid packet.
//!
//! The registered fields ([`FIELDS`]) and the byte layout of each type
//! ([`layout`]) come from one table, on the layout core shared by every
//! native protocol: it drives the field walk ([`walk_fields`]), the `-V`
//! tree ([`walk_tree`]), the one-line text, the violation checks, the
//! payload lengths and the truncation offsets.

mod error;
pub mod layout;
mod message;
mod packet;
mod repr;
mod types;

pub use error::{DecodeError, ErrorKind, Violation, ViolationKind};
pub use layout::{ENTITY_STATE_LEN, FIELDS, FieldId, MAX_ENTITIES_IN_MTU, SNAPSHOT_FIXED_LEN};
pub use message::{
    ChatMessage, ConnectionAccept, ConnectionRequest, Entities, EntityDestroy, EntityList,
    EntitySpawn, EntityState, Heartbeat, MatchState, Message, MessageRepr, PlayerDied, PlayerInput,
    PlayerScored, Reason, WorldSnapshot,
};
pub use packet::{Header, Packet, check_header, is_starstrike, walk_fields, walk_tree};
pub use repr::{EmitError, PacketRepr, emit_packet};
pub use types::*;
