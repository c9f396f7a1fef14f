//! The Battlegrounds wire format (`battlegrounds-protocol.rst`, with the
//! settlements of `battlegrounds-NOTES.md`, which win where they differ):
//! everything else in the module decodes and encodes through here.
//!
//! Two sides, as in smoltcp's `wire` module:
//!
//! - **Views** borrow the bytes: [`Packet::new_checked`] checks a whole packet
//!   once (one UDP datagram carries one packet: an 8-byte header and the
//!   payload its (channel, op_code) pair defines, every number in the
//!   session's byte order, [`ByteOrder`]: big-endian as the reference
//!   implementation sends, or little-endian as the first notes and the
//!   corpus; the PING, PONG and AUTH_OK forms told apart by size, [`Dialect`]),
//!   then its accessors
//!   and [`Payload`] read without failing. Decoding never allocates and never
//!   panics.
//! - **Representations** own their data: [`PacketRepr`] and [`PayloadRepr`]
//!   `parse` and `emit` (lengths that do not fit their field are an
//!   [`EmitError`], not a wrapped length byte).
//! - **The layout** (`layout.rs`) declares the packets once, on the shared
//!   core (`crate::proto::layout`): the registered fields ([`FIELDS`]) and
//!   the payload, one enum of its forms ([`PayloadOf`], a variant a
//!   [`Form`], each field with its items) that both sides share: the view
//!   [`Payload`] is it over borrowed parts ([`View`]), the representation
//!   [`PayloadRepr`] over owned ones ([`Owned`]). From it come each form's
//!   row, the reader of the form the decoder's checks chose, the encoder,
//!   and from the rows the field walk (`fields.rs`), the `-V` tree, the
//!   one-line text and the lengths both sides read. Its module docs say
//!   what adding a field takes.
//!
//! Three outcomes, kept apart:
//!
//! - **Shortage** ([`ErrorKind::ShortHeader`], [`ErrorKind::Truncated`]): bytes
//!   missing at the end. The analyzer calls it `truncated` when the capture's
//!   snaplen cut the datagram at that point, `malformed` otherwise (a sender
//!   that sent a payload shorter than its fixed part).
//! - **Malformed**: trailing bytes after a complete payload, a (channel, op)
//!   pair that is not defined, a version other than 0 (undecodable past the
//!   header), a negative length, an unknown PROP shape.
//! - **Violation** ([`Violation`]): the packet decodes but breaks a rule (a
//!   non-zero reserved byte, a name that is not UTF-8, a MSG block longer than
//!   its message...).
//!
//! Decisions where the notes leave room: MSG and MSG_ACK are defined on the
//! three channels the specification names (0, 1, 2); a channel above 2 is an
//! undefined (channel, op) pair whatever the op. A MSG block is every byte after
//! the MSG fixed part.

mod defs;
mod error;
mod fields;
mod layout;
mod order;
mod packet;
mod payload;
mod repr;
mod types;

pub use defs::{FIELDS, HEADER_LEN, VERTEX_LEN, channel_name};
pub use error::{DecodeError, EmitError, ErrorKind, Part, Violation, ViolationKind};
pub use fields::{walk, walk_header, walk_in, walk_payload, write_fields_text};
pub use layout::{
    CIRCLE_LEN, Form, MOVEMENT_LEN, MSG_ACK_LEN, MSG_FIXED_LEN, MoveEvent, MoveOp, Movement,
    MsgAck, PROP_FIXED_LEN, PayloadOf,
};
pub use order::{Evidence, evidence, guess};
pub use packet::{Header, Msg, Packet, Payload, is_auth, plausible};
pub use payload::{Owned, Store, Tag, Vertices, View};
#[cfg(test)]
pub(crate) use repr::sample_move_op;
pub use repr::{MSG_BLOCK_OFFSET, PacketRepr, PayloadRepr};
pub use types::{
    ByteOrder, CHANNEL_COMMAND, CHANNEL_ENVIRONMENT, CHANNEL_MOVEMENT, CHANNELS, Dialect,
    MAX_BLOCKS, OP_MSG, OP_MSG_ACK, PacketType, PingForm, Sender, VERSION, VectorD, VectorF,
};
