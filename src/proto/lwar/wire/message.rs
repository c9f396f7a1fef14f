//! The messages: [`MessageOf`], declared once (`messages!`, a line a
//! type, a reliable message's fields with their items), read in place
//! from a packet ([`Message`], zero-copy) or owned ([`MessageRepr`], what
//! the encoder writes); the table of every type's row (`LAYOUTS`: the
//! items the declaration gives, or a record's, or a count and its
//! entries) and the walk over it; the views of the messages inside a
//! packet ([`MessageView`], [`MessageHead`]).

use super::entries::{
    Collision, Entries, Input, ORDER, Record, StatsEntry, UpdateCircleEntry, UpdateEntry,
    UpdatePosEntry, UpdateRayEntry,
};
use super::error::{DecodeError, Violation};
use super::layout::{
    COLLISION, COUNT, Entry, F, ID, INPUT, Item, Layout, NAME_STR, PLAYER_ID, SEQNO_ITEM,
    STATS_ENTRY, STR_LEN, TEXT, TYPE_ITEM, U8, UPDATE_CIRCLE_ENTRY, UPDATE_ENTRY, UPDATE_POS_ENTRY,
    UPDATE_RAY_ENTRY, field,
};
use super::types::{DEPRECATED_TYPE_ID, Id, MAX_CHAT_LEN, MAX_NAME_LEN, MessageType};
use crate::proto::codec::{
    self as codec, Own, Part, ReadPart, TEXT8, item_index, messages, offset, put_text8, text8,
};
use crate::proto::field::FieldDef;
use crate::proto::layout::{self as core, ByteOrder, Table, Visit, it};
use std::fmt::{self, Write};
use std::marker::PhantomData;

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

/// Where a message's texts and entries live: borrowed from the packet's
/// bytes ([`View`], a [`Message`]) or owned ([`Owned`], a [`MessageRepr`]).
pub trait Store {
    /// A text after its length.
    type Text;
    /// The entries of a counted message.
    type List<R: Record>;
}

/// Texts and entries borrowed from the packet: what the decoder gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct View<'a>(PhantomData<&'a [u8]>);

/// Owned texts (raw bytes, so that a test or the fault injector can build
/// invalid UTF-8 or over-long names on purpose) and entries: what the
/// simulator and the tests build packets from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Owned;

impl<'a> Store for View<'a> {
    type Text = Str<'a>;
    type List<R: Record> = Entries<'a, R>;
}

impl Store for Owned {
    type Text = Vec<u8>;
    type List<R: Record> = Vec<R>;
}

/// A text after its `u8` length, borrowed.
impl Part for Str<'_> {
    const SHAPE: &'static [codec::Shape] = TEXT8;
    #[inline(always)]
    fn part_len(&self) -> usize {
        self.len()
    }
    fn part_write(&self, b: &mut [u8], at: usize, _order: ByteOrder) {
        put_text8(b, at, self.0);
    }
}

impl<'a> ReadPart<'a> for Str<'a> {
    #[inline(always)]
    fn part_read(b: &'a [u8], at: usize, _order: ByteOrder) -> Self {
        Str(text8(b, at))
    }
}

impl Own for Str<'_> {
    type Owned = Vec<u8>;
    fn own(&self) -> Vec<u8> {
        self.0.to_vec()
    }
}

messages! {
    /// One message: reliable variants carry their sequence number, the
    /// others are the unreliable messages. `S` says where its texts and
    /// entries live: a [`Message`] borrows them from the packet, a
    /// [`MessageRepr`] owns them. A reliable message's seqno names its
    /// item in its row's head; its other fields are declared with their
    /// items (a text, its length and itself), which are its type's row
    /// (`LAYOUTS`): the decoder reads each field and the encoder writes
    /// it there.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum MessageOf<S: Store> {
        Connect { seqno: u32 = F::SEQNO; name: S::Text = [STR_LEN, NAME_STR] },
        Disconnect { seqno: u32 = F::SEQNO; },
        Join {
            seqno: u32 = F::SEQNO;
            player: Id = [PLAYER_ID],
            name: S::Text = [STR_LEN, NAME_STR],
        },
        Leave { seqno: u32 = F::SEQNO; player: Id = [PLAYER_ID] },
        Chat {
            seqno: u32 = F::SEQNO;
            player: Id = [PLAYER_ID],
            text: S::Text = [STR_LEN, it(F::CHAT, TEXT, "msg", " text=")],
        },
        Add {
            seqno: u32 = F::SEQNO;
            entity: Id = [it(F::ENTITY, ID, "entityId", " entity=")],
            player: Id = [PLAYER_ID],
            type_id: u8 = [it(F::TYPE_ID, U8, "typeId", " type=")],
        },
        Remove { seqno: u32 = F::SEQNO; entity: Id = [it(F::ENTITY, ID, "entityId", " entity=")] },
        Selection {
            seqno: u32 = F::SEQNO;
            player: Id = [PLAYER_ID],
            ship_type: u8 = [it(F::SHIP, U8, "shipType", " ship=")],
            weapon_types: [u8; 4] = [
                it(F::WEAPON, U8, "weaponType", " weapons=").at(0),
                it(F::WEAPON, U8, "weaponType", ",").at(1),
                it(F::WEAPON, U8, "weaponType", ",").at(2),
                it(F::WEAPON, U8, "weaponType", ",").at(3),
            ],
        },
        Name {
            seqno: u32 = F::SEQNO;
            player: Id = [PLAYER_ID],
            name: S::Text = [STR_LEN, NAME_STR],
        },
        Synced { seqno: u32 = F::SEQNO; },
        Stats(S::List<StatsEntry>),
        Input(Input),
        Full,
        Collision(Collision),
        Update(S::List<UpdateEntry>),
        UpdatePos(S::List<UpdatePosEntry>),
        UpdateRay(S::List<UpdateRayEntry>),
        UpdateCircle(S::List<UpdateCircleEntry>),
    }
    type MessageType, fn msg_type;
    rows row, ORDER;
    items Item;
    read read_message<'a> -> MessageOf<View<'a>>;
    owned MessageOf<Owned>;
}

/// Every message type's row after its head, in the order of
/// [`MessageType::ALL`] (by [`MessageType::ordinal`]): a type declared
/// field by field above, its fields' items (`fields_row`); the others,
/// their record, or their count and entries ([`body_row`]). A constant,
/// so that each row's walk is compiled with the row's fields as constants
/// (`walk`); [`ROWS`] is where it lives at run time.
pub(super) const LAYOUTS: [Layout; MessageType::COUNT] = {
    let mut rows = [layout(&[], None); MessageType::COUNT];
    let mut i = 0;
    while i < rows.len() {
        let t = MessageType::ALL[i];
        rows[i] = match t.fields_row() {
            Some(items) => layout(items, None),
            None => body_row(t),
        };
        i += 1;
    }
    rows
};

/// The row of a type whose message is its body (a record, counted
/// entries) or nothing.
const fn body_row(t: MessageType) -> Layout {
    match t {
        MessageType::Stats => layout(&[COUNT], Some(&STATS_ENTRY)),
        MessageType::Input => layout(INPUT, None),
        MessageType::Collision => layout(COLLISION, None),
        MessageType::Update => layout(&[COUNT], Some(&UPDATE_ENTRY)),
        MessageType::UpdatePos => layout(&[COUNT], Some(&UPDATE_POS_ENTRY)),
        MessageType::UpdateRay => layout(&[COUNT], Some(&UPDATE_RAY_ENTRY)),
        MessageType::UpdateCircle => layout(&[COUNT], Some(&UPDATE_CIRCLE_ENTRY)),
        _ => layout(&[], None),
    }
}

/// [`LAYOUTS`] at a fixed address (a group's key is its row's), each row
/// headed by its type byte and, for a reliable type, its seqno.
static ROWS: [Layout; MessageType::COUNT] = HEADED;
/// [`LAYOUTS`] with their heads, a constant (what the walk reads).
const HEADED: [Layout; MessageType::COUNT] = with_heads(LAYOUTS);

/// A message's head: its type byte, then its seqno if reliable.
const RELIABLE_HEAD: &[Item] = &[TYPE_ITEM, SEQNO_ITEM];
const UNRELIABLE_HEAD: &[Item] = &[TYPE_ITEM];

/// A row of `items`, then `entry`'s entries; its head is its type's
/// ([`with_heads`]).
const fn layout(items: &'static [Item], entry: Option<&'static Entry>) -> Layout {
    core::layout(&[], items, entry, &[])
}

const fn with_heads(mut rows: [Layout; MessageType::COUNT]) -> [Layout; MessageType::COUNT] {
    let mut i = 0;
    while i < rows.len() {
        rows[i].head = if MessageType::ALL[i].is_reliable() {
            RELIABLE_HEAD
        } else {
            UNRELIABLE_HEAD
        };
        i += 1;
    }
    rows
}

/// The row of a message of type `t`, headed, a constant (what its typed
/// message is read and written at, `messages!` in `message.rs`).
pub(super) const fn row(t: MessageType) -> Layout {
    HEADED[t.ordinal()]
}

impl MessageType {
    /// This type's layout.
    pub(super) fn layout(self) -> &'static Layout {
        &ROWS[self.ordinal()]
    }
}

/// lwar's table of layouts, for the shared walk.
pub(super) struct Lwar;

impl Table for Lwar {
    type H = F;
    const ROWS: &'static [Layout] = &HEADED;
}

/// Walks a whole message (`b`, its bytes, type byte first, at `base` in the
/// packet): its type, its seqno if reliable, its items, its entries. Each
/// message type's walk is straight code of its own (`core::walk_row`),
/// inlined into each view's one caller.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(super) fn walk<V: Visit<F>>(t: MessageType, b: &[u8], base: usize, v: &mut V) {
    core::walk_table::<Lwar, V>(t.ordinal(), b, base, ByteOrder::Big, v);
}

/// Every definition a message of type `t` may hold (its node's included),
/// for `FieldSink::wants_any`.
pub(super) fn message_defs(t: MessageType, each: &mut dyn FnMut(&'static FieldDef)) {
    each(field(F::MESSAGE));
    core::layout_defs(t.layout(), each);
}

/// One decoded message, borrowing the packet's bytes.
pub type Message<'a> = MessageOf<View<'a>>;

/// An owned message, that encodes back to bytes.
pub type MessageRepr = MessageOf<Owned>;

/// A reliable message, its seqno bound to `$seqno`.
macro_rules! reliable {
    ($seqno:ident) => {
        MessageOf::Connect { seqno: $seqno, .. }
            | MessageOf::Disconnect { seqno: $seqno }
            | MessageOf::Join { seqno: $seqno, .. }
            | MessageOf::Leave { seqno: $seqno, .. }
            | MessageOf::Chat { seqno: $seqno, .. }
            | MessageOf::Add { seqno: $seqno, .. }
            | MessageOf::Remove { seqno: $seqno, .. }
            | MessageOf::Selection { seqno: $seqno, .. }
            | MessageOf::Name { seqno: $seqno, .. }
            | MessageOf::Synced { seqno: $seqno }
    };
}

impl<S: Store> MessageOf<S> {
    pub const fn is_reliable(&self) -> bool {
        self.msg_type().is_reliable()
    }

    /// The sequence number of a reliable message.
    pub const fn seqno(&self) -> Option<u32> {
        match self {
            reliable!(seqno) => Some(*seqno),
            _ => None,
        }
    }

    /// Sets the sequence number of a reliable message; unreliable ones have none and
    /// are left alone.
    pub fn set_seqno(&mut self, value: u32) {
        if let reliable!(seqno) = self {
            *seqno = value;
        }
    }

    /// The player the message speaks of or for, where it names one.
    pub const fn player(&self) -> Option<Id> {
        match self {
            MessageOf::Join { player, .. }
            | MessageOf::Leave { player, .. }
            | MessageOf::Chat { player, .. }
            | MessageOf::Add { player, .. }
            | MessageOf::Selection { player, .. }
            | MessageOf::Name { player, .. } => Some(*player),
            MessageOf::Input(input) => Some(input.player),
            _ => None,
        }
    }
}

impl<'a> Message<'a> {
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
        self.msg_type().entry_len().map(|_| self.count())
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
        let layout = &LAYOUTS[t.ordinal()];
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
            // The player its row names, if any ([`Message::player`]).
            player_at: {
                let j = item_index!(layout.items, F::PLAYER);
                if j < layout.items.len() {
                    (head + offset(layout.items, j)) as u8
                } else {
                    0
                }
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
        let message = read_message(self.msg_type, self.bytes);
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
