//! Zero-copy views of the messages inside a packet.

use super::entries::{
    Collision, Entries, Input, ORDER, Record, StatsEntry, UpdateCircleEntry, UpdateEntry,
    UpdatePosEntry, UpdateRayEntry, be_u32, id_at,
};
use super::error::{DecodeError, Violation};
use super::layout::{F, SEQNO_ITEM, TYPE_ITEM, items};
use super::types::{DEPRECATED_TYPE_ID, Id, MAX_CHAT_LEN, MAX_NAME_LEN, MessageType};
use crate::proto::codec::{Wire, item_offset};
use std::fmt::{self, Write};

/// A string of the wire format: its raw bytes, which may or may not be UTF-8.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Str<'a>(&'a [u8]);

impl<'a> Str<'a> {
    pub const fn new(bytes: &'a [u8]) -> Self {
        Str(bytes)
    }

    /// The raw bytes, exactly as on the wire.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// The string, if it is valid UTF-8.
    pub fn to_str(&self) -> Option<&'a str> {
        std::str::from_utf8(self.0).ok()
    }

    pub fn is_utf8(&self) -> bool {
        self.to_str().is_some()
    }

    pub const fn len(&self) -> usize {
        self.0.len()
    }

    pub const fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Quoted, with invalid UTF-8 and control characters escaped (`"b\xffd"`).
impl fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for chunk in self.0.utf8_chunks() {
            for c in chunk.valid().chars() {
                // Inside double quotes a single quote needs no escape (`"it's"`).
                match c {
                    '\'' => f.write_char(c)?,
                    _ => write!(f, "{}", c.escape_debug())?,
                }
            }
            for b in chunk.invalid() {
                write!(f, "\\x{b:02x}")?;
            }
        }
        f.write_str("\"")
    }
}

impl fmt::Debug for Str<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// One decoded message, borrowing the packet's bytes. Reliable variants carry their
/// sequence number; the others are the unreliable messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message<'a> {
    Connect {
        seqno: u32,
        name: Str<'a>,
    },
    Disconnect {
        seqno: u32,
    },
    Join {
        seqno: u32,
        player: Id,
        name: Str<'a>,
    },
    Leave {
        seqno: u32,
        player: Id,
    },
    Chat {
        seqno: u32,
        player: Id,
        text: Str<'a>,
    },
    Add {
        seqno: u32,
        entity: Id,
        player: Id,
        type_id: u8,
    },
    Remove {
        seqno: u32,
        entity: Id,
    },
    Selection {
        seqno: u32,
        player: Id,
        ship_type: u8,
        weapon_types: [u8; 4],
    },
    Name {
        seqno: u32,
        player: Id,
        name: Str<'a>,
    },
    Synced {
        seqno: u32,
    },
    Stats(Entries<'a, StatsEntry>),
    Input(Input),
    Full,
    Collision(Collision),
    Update(Entries<'a, UpdateEntry>),
    UpdatePos(Entries<'a, UpdatePosEntry>),
    UpdateRay(Entries<'a, UpdateRayEntry>),
    UpdateCircle(Entries<'a, UpdateCircleEntry>),
}

impl<'a> Message<'a> {
    pub const fn msg_type(&self) -> MessageType {
        match self {
            Message::Connect { .. } => MessageType::Connect,
            Message::Disconnect { .. } => MessageType::Disconnect,
            Message::Join { .. } => MessageType::Join,
            Message::Leave { .. } => MessageType::Leave,
            Message::Chat { .. } => MessageType::Chat,
            Message::Add { .. } => MessageType::Add,
            Message::Remove { .. } => MessageType::Remove,
            Message::Selection { .. } => MessageType::Selection,
            Message::Name { .. } => MessageType::Name,
            Message::Synced { .. } => MessageType::Synced,
            Message::Stats(_) => MessageType::Stats,
            Message::Input(_) => MessageType::Input,
            Message::Full => MessageType::Full,
            Message::Collision(_) => MessageType::Collision,
            Message::Update(_) => MessageType::Update,
            Message::UpdatePos(_) => MessageType::UpdatePos,
            Message::UpdateRay(_) => MessageType::UpdateRay,
            Message::UpdateCircle(_) => MessageType::UpdateCircle,
        }
    }

    /// The sequence number of a reliable message.
    pub const fn seqno(&self) -> Option<u32> {
        match *self {
            Message::Connect { seqno, .. }
            | Message::Disconnect { seqno }
            | Message::Join { seqno, .. }
            | Message::Leave { seqno, .. }
            | Message::Chat { seqno, .. }
            | Message::Add { seqno, .. }
            | Message::Remove { seqno, .. }
            | Message::Selection { seqno, .. }
            | Message::Name { seqno, .. }
            | Message::Synced { seqno } => Some(seqno),
            _ => None,
        }
    }

    /// The player the message speaks of or for, where it names one.
    pub const fn player(&self) -> Option<Id> {
        match *self {
            Message::Join { player, .. }
            | Message::Leave { player, .. }
            | Message::Chat { player, .. }
            | Message::Add { player, .. }
            | Message::Selection { player, .. }
            | Message::Name { player, .. } => Some(player),
            Message::Input(input) => Some(input.player),
            _ => None,
        }
    }

    /// The string a message carries, if any (name or chat text).
    pub const fn string(&self) -> Option<Str<'a>> {
        match *self {
            Message::Connect { name, .. }
            | Message::Join { name, .. }
            | Message::Name { name, .. } => Some(name),
            Message::Chat { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Number of entries of a counted message (Stats and the Update family).
    pub fn entry_count(&self) -> Option<usize> {
        match self {
            Message::Stats(e) => Some(e.len()),
            Message::Update(e) => Some(e.len()),
            Message::UpdatePos(e) => Some(e.len()),
            Message::UpdateRay(e) => Some(e.len()),
            Message::UpdateCircle(e) => Some(e.len()),
            _ => None,
        }
    }
}

/// A message and where it sits in its packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageView<'a> {
    /// Offset of the message's type byte from the start of the packet.
    pub offset: usize,
    /// The message's own bytes, header included.
    pub bytes: &'a [u8],
    pub message: Message<'a>,
}

/// The violations of one message: at most three (seqno 0, string too long, not UTF-8).
pub struct Violations {
    items: [Option<Violation>; 3],
    next: usize,
}

impl Iterator for Violations {
    type Item = Violation;
    fn next(&mut self) -> Option<Violation> {
        while let Some(slot) = self.items.get_mut(self.next) {
            self.next += 1;
            if let Some(v) = slot.take() {
                return Some(v);
            }
        }
        None
    }
}

impl<'a> MessageView<'a> {
    pub const fn msg_type(&self) -> MessageType {
        self.message.msg_type()
    }

    pub const fn seqno(&self) -> Option<u32> {
        self.message.seqno()
    }

    /// Whether the message can break a rule of [`MessageView::violations`]:
    /// a seqno of 0 or a string. Most messages
    /// cannot, and this is asked of every message of every packet.
    pub fn may_violate(&self) -> bool {
        self.seqno() == Some(0) || self.message.string().is_some()
    }

    /// The rules of the specification this message breaks, although it decodes.
    pub fn violations(&self) -> Violations {
        let offset = self.offset;
        let msg_type = self.msg_type();
        let mut items = [None; 3];
        if self.seqno() == Some(0) {
            items[0] = Some(Violation::SeqnoZero { offset, msg_type });
        }
        if let Some(s) = self.message.string() {
            let len = s.len();
            items[1] = match msg_type {
                MessageType::Chat if len >= MAX_CHAT_LEN => {
                    Some(Violation::ChatTooLong { offset, len })
                }
                MessageType::Chat => None,
                _ if len >= MAX_NAME_LEN => Some(Violation::NameTooLong {
                    offset,
                    msg_type,
                    len,
                }),
                _ => None,
            };
            if !s.is_utf8() {
                items[2] = Some(Violation::InvalidUtf8 { offset, msg_type });
            }
        }
        Violations { items, next: 0 }
    }
}

/// [`MessageType::from_u8`] as one load: asked of every message.
/// What the decoder asks of a type byte, found with one load: its type,
/// and the lengths its layout decides (`layout.rs`).
#[derive(Clone, Copy)]
struct Shape {
    msg_type: Option<MessageType>,
    /// The header: type byte and seqno, if any.
    head: u8,
    /// The header and the body the type alone decides.
    fixed_end: u8,
    /// The body ends in a u8-length string.
    string: bool,
    /// The size of one entry of a counted message; 0 for the others.
    entry_len: u8,
    /// Where the player the message names is, from its type byte; 0 where
    /// it names none ([`Message::player`]).
    player_at: u8,
}

/// [`Shape`] by type byte, from the layouts; `None` for ids that are no type.
static SHAPES: [Shape; 256] = {
    let mut out = [Shape {
        msg_type: None,
        head: 0,
        fixed_end: 0,
        string: false,
        entry_len: 0,
        player_at: 0,
    }; 256];
    let mut i = 0;
    while i < MessageType::ALL.len() {
        let t = MessageType::ALL[i];
        let layout = &super::layout::LAYOUTS[t.ordinal()];
        let head = t.header_len();
        out[t.id() as usize] = Shape {
            msg_type: Some(t),
            head: head as u8,
            fixed_end: (head + layout.fixed) as u8,
            string: layout.string,
            entry_len: match layout.entry {
                Some(e) => e.len as u8,
                None => 0,
            },
            player_at: match t {
                MessageType::Join
                | MessageType::Leave
                | MessageType::Chat
                | MessageType::Name
                | MessageType::Selection => (head + PLAYER_AT) as u8,
                MessageType::Add => (head + ADD_PLAYER) as u8,
                MessageType::Input => (head + INPUT_PLAYER) as u8,
                _ => 0,
            },
        };
        i += 1;
    }
    out
};

/// A message found in its packet, its body not read: its type, where it
/// is, and what outputs ask of every message before they walk its layout
/// for its text (its seqno, entry count and player, each read from its
/// bytes when asked). What [`super::Packet::heads`] yields: the dissector
/// reads a message's body once, for its text, where a [`MessageView`]
/// would have read it for the [`Message`] first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHead<'a> {
    /// Offset of the message's type byte from the start of the packet.
    pub offset: usize,
    /// The message's own bytes, header included.
    pub bytes: &'a [u8],
    pub msg_type: MessageType,
    /// The header: type byte and seqno, if any.
    head: u8,
    /// The header and the body the type alone decides ([`Shape`]).
    fixed_end: u8,
    /// The entries of a counted message are this long; 0 for the others.
    entry_len: u8,
    /// Where the player the message names is; 0 where it names none.
    player_at: u8,
}

impl<'a> MessageHead<'a> {
    /// The message read: what [`Packet::messages`](super::Packet::messages)
    /// gives for it.
    #[inline]
    pub fn view(self) -> MessageView<'a> {
        let message = read_message(
            self.msg_type,
            self.bytes,
            usize::from(self.head),
            usize::from(self.fixed_end),
        );
        MessageView {
            offset: self.offset,
            bytes: self.bytes,
            message,
        }
    }

    /// The body of an Input, read as [`MessageHead::view`] reads it (without
    /// reading the rest: the analysis judges every Input of the client, the
    /// most common message it reads); `None` for the other types.
    #[inline]
    pub fn input(self) -> Option<Input> {
        let body = self.bytes.get(usize::from(self.head)..)?;
        (self.msg_type == MessageType::Input).then(|| Input::read(body, ORDER))
    }

    /// [`Message::seqno`].
    #[inline]
    pub fn seqno(&self) -> Option<u32> {
        if self.msg_type.is_reliable() {
            self.bytes
                .get(1..5)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map(u32::from_be_bytes)
        } else {
            None
        }
    }

    /// [`Message::entry_count`]: the count byte, which ends the part the
    /// type decides.
    #[inline]
    pub fn entry_count(&self) -> Option<usize> {
        if self.entry_len == 0 {
            return None;
        }
        let count = usize::from(self.fixed_end).checked_sub(1)?;
        self.bytes.get(count).map(|&n| usize::from(n))
    }

    /// [`Message::player`].
    #[inline]
    pub fn player(&self) -> Option<Id> {
        if self.player_at == 0 {
            return None;
        }
        let at = usize::from(self.player_at);
        self.bytes
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(Id::from_bytes)
    }
}

/// Finds the message whose type byte is at `offset` (which must be inside
/// `packet`) and checks its length: the same errors as [`decode_at`], which
/// reads its body on. Always inlined into its callers (`Messages`' and
/// `Heads`' `next`).
#[inline(always)]
pub(crate) fn head_at(packet: &[u8], offset: usize) -> Result<MessageHead<'_>, DecodeError> {
    let rest = packet.get(offset..).unwrap_or_default();
    let Some(&type_id) = rest.first() else {
        // The iterator never asks past the end; answer sensibly all the same.
        return Err(DecodeError::UnknownType { offset, type_id: 0 });
    };
    let shape = SHAPES[usize::from(type_id)];
    let Some(msg_type) = shape.msg_type else {
        return Err(if type_id == DEPRECATED_TYPE_ID {
            DecodeError::DeprecatedType { offset }
        } else {
            DecodeError::UnknownType { offset, type_id }
        });
    };
    let available = rest.len();
    let truncated = |needed: usize| DecodeError::Truncated {
        offset,
        msg_type,
        needed,
        available,
    };

    // First the part whose length the type alone decides; its last byte is the
    // string length or entry count where there is one.
    let fixed_end = usize::from(shape.fixed_end);
    if available < fixed_end {
        return Err(truncated(fixed_end));
    }
    let variable = match rest.get(fixed_end.wrapping_sub(1)) {
        Some(&n) if shape.string => usize::from(n),
        Some(&n) => usize::from(n) * usize::from(shape.entry_len),
        None => 0,
    };
    let total = fixed_end + variable;
    if available < total {
        return Err(truncated(total));
    }
    Ok(MessageHead {
        offset,
        bytes: &rest[..total],
        msg_type,
        head: shape.head,
        fixed_end: shape.fixed_end,
        entry_len: shape.entry_len,
        player_at: shape.player_at,
    })
}

/// Decodes the message whose type byte is at `offset` (which must be inside `packet`).
/// Always inlined into [`super::Messages`]' `next`, its one caller: called, it
/// wrote its result to memory for the caller to read back, about a third of
/// the ~110 instructions each message of a packet cost the analysis.
#[inline(always)]
pub(crate) fn decode_at(packet: &[u8], offset: usize) -> Result<MessageView<'_>, DecodeError> {
    head_at(packet, offset).map(MessageHead::view)
}

#[cfg(test)]
#[test]
fn shapes_agree_with_the_layouts() {
    for id in 0..=255u8 {
        let shape = SHAPES[usize::from(id)];
        assert_eq!(shape.msg_type, MessageType::from_u8(id), "{id}");
        let Some(t) = shape.msg_type else { continue };
        assert_eq!(
            usize::from(shape.fixed_end),
            t.header_len() + t.fixed_body_len(),
            "{t}"
        );
        assert_eq!(shape.string, t.has_string(), "{t}");
        assert_eq!(
            usize::from(shape.entry_len),
            t.entry_len().unwrap_or(0),
            "{t}"
        );
    }
}

// Where the fixed bodies' fields are, from their rows (the decoder reads
// them there, the encoder, `repr.rs`, writes them there).
/// A reliable message's seqno, after its type byte.
pub(super) const SEQNO_AT: usize = item_offset!(&[TYPE_ITEM, SEQNO_ITEM], F::SEQNO);
/// A player's id, first in every body that names one.
pub(super) const PLAYER_AT: usize = {
    let at = item_offset!(items(MessageType::Join), F::PLAYER);
    assert!(
        at == item_offset!(items(MessageType::Leave), F::PLAYER)
            && at == item_offset!(items(MessageType::Chat), F::PLAYER)
            && at == item_offset!(items(MessageType::Name), F::PLAYER)
            && at == item_offset!(items(MessageType::Selection), F::PLAYER)
    );
    at
};
const INPUT_PLAYER: usize = item_offset!(items(MessageType::Input), F::PLAYER);
pub(super) const ADD_ENTITY: usize = item_offset!(items(MessageType::Add), F::ENTITY);
pub(super) const ADD_PLAYER: usize = item_offset!(items(MessageType::Add), F::PLAYER);
pub(super) const ADD_TYPE_ID: usize = item_offset!(items(MessageType::Add), F::TYPE_ID);
pub(super) const REMOVE_ENTITY: usize = item_offset!(items(MessageType::Remove), F::ENTITY);
pub(super) const SELECTION_SHIP: usize = item_offset!(items(MessageType::Selection), F::SHIP);
pub(super) const SELECTION_WEAPONS: usize = item_offset!(items(MessageType::Selection), F::WEAPON);

/// The message of `msg_type` in `bytes`, whose length was checked: `head`
/// bytes of header, then the fixed body up to `fixed_end`, then the string
/// or the entries.
#[inline]
fn read_message(msg_type: MessageType, bytes: &[u8], head: usize, fixed_end: usize) -> Message<'_> {
    let seqno = if msg_type.is_reliable() {
        be_u32(bytes, SEQNO_AT)
    } else {
        0
    };
    let body = &bytes[head..];
    let tail = &bytes[fixed_end..];
    match msg_type {
        MessageType::Connect => Message::Connect {
            seqno,
            name: Str(tail),
        },
        MessageType::Disconnect => Message::Disconnect { seqno },
        MessageType::Join => Message::Join {
            seqno,
            player: id_at(body, PLAYER_AT),
            name: Str(tail),
        },
        MessageType::Leave => Message::Leave {
            seqno,
            player: id_at(body, PLAYER_AT),
        },
        MessageType::Chat => Message::Chat {
            seqno,
            player: id_at(body, PLAYER_AT),
            text: Str(tail),
        },
        MessageType::Add => Message::Add {
            seqno,
            entity: id_at(body, ADD_ENTITY),
            player: id_at(body, ADD_PLAYER),
            type_id: body[ADD_TYPE_ID],
        },
        MessageType::Remove => Message::Remove {
            seqno,
            entity: id_at(body, REMOVE_ENTITY),
        },
        MessageType::Selection => Message::Selection {
            seqno,
            player: id_at(body, PLAYER_AT),
            ship_type: body[SELECTION_SHIP],
            weapon_types: Wire::get(body, SELECTION_WEAPONS, ORDER),
        },
        MessageType::Name => Message::Name {
            seqno,
            player: id_at(body, PLAYER_AT),
            name: Str(tail),
        },
        MessageType::Synced => Message::Synced { seqno },
        MessageType::Stats => Message::Stats(Entries::new(tail, ORDER)),
        MessageType::Input => Message::Input(Input::read(body, ORDER)),
        MessageType::Full => Message::Full,
        MessageType::Collision => Message::Collision(Collision::read(body, ORDER)),
        MessageType::Update => Message::Update(Entries::new(tail, ORDER)),
        MessageType::UpdatePos => Message::UpdatePos(Entries::new(tail, ORDER)),
        MessageType::UpdateRay => Message::UpdateRay(Entries::new(tail, ORDER)),
        MessageType::UpdateCircle => Message::UpdateCircle(Entries::new(tail, ORDER)),
    }
}
