//! The lwar wire format (specification revision 14, with the clarifications of
//! `NOTES.md`): everything else in lwarscope decodes and encodes through here.
//!
//! Two sides, as in smoltcp's `wire` module:
//!
//! - **Views** borrow the bytes: [`Packet::new_checked`] checks the header once,
//!   then [`Packet::messages`] decodes each [`Message`] in place. Decoding never
//!   allocates, and never panics: bad bytes give a [`DecodeError`] that names the
//!   offset and the message type, and what decoded before it is kept.
//!   [`Packet::heads`] finds the same messages without reading their bodies
//!   ([`MessageHead`]: type, place, seqno, entry count, player, token and
//!   text), for the outputs, which read each body once, for its text.
//! - **Representations** own their data: [`MessageRepr`] and [`PacketRepr`] encode
//!   back to bytes, and [`PacketBuilder`] fills packets up to the 512-byte limit,
//!   reliable messages first.
//!
//! Bytes that decode but break the specification (a seqno of 0, an over-long
//! name, invalid UTF-8, a packet over 512 bytes...) are [`Violation`]s, not errors.
//!
//! The codec does no I/O and knows nothing of captures: it sees UDP payloads.

mod builder;
mod display;
mod entries;
mod error;
mod fields;
mod layout;
mod message;
mod packet;
mod repr;
mod types;

pub use builder::{Filled, PacketBuilder};
pub(crate) use display::walk_header_tree;
pub use display::{EmitField, Field, Text, Token};
pub use entries::{
    Collision, Entries, Input, Record, StatsEntry, UpdateCircleEntry, UpdateEntry, UpdatePosEntry,
    UpdateRayEntry,
};
pub use error::{DecodeError, ErrorKind, Violation, ViolationKind};
pub use layout::FIELDS;
pub use message::{
    Message, MessageHead, MessageOf, MessageRepr, MessageView, Owned, Store, Str, View, Violations,
};
pub use packet::{Header, Heads, Messages, Packet, is_lwar};
pub use repr::PacketRepr;
pub use types::{
    APP_ID, DEFAULT_PORT, DEPRECATED_TYPE_ID, DISCONNECT_TIMEOUT_SECS, HEADER_LEN, Id,
    MAX_CHAT_LEN, MAX_NAME_LEN, MAX_PACKET_SIZE, MAX_PLAYERS, MessageType, RELIABLE_HEADER_LEN,
    Sender, UNRELIABLE_HEADER_LEN,
};
