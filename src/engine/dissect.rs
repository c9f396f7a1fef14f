//! The stateless side of a protocol: what outputs need to show a packet without
//! knowing its wire format. One-line summaries, JSON messages, the field tree of
//! `-V` and the terminal UI, and the values the display filter tests. It is the
//! plug between the protocols (`proto/`, which implement [`Dissector`]) and the
//! outputs, so it lives with the engine, below both.

use super::field::{FieldDef, FieldSink, Value};
use super::finding::ProtoDetail;
pub use super::out::{
    Float, Marked, MarksWire, Out, TextBytes, WriteText, Written, indexed_label, put_small,
};
use std::cell::RefCell;
use std::fmt;
use std::ops::Range;

/// A number of the packet's header: `ack`, `timestamp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderNumber {
    /// The name in JSON and the display filter: `timestamp`.
    pub name: &'static str,
    /// The label on a packet line: `ts`.
    pub short: &'static str,
    pub value: u64,
}

/// One decoded message of a packet, as outputs see it.
pub struct MessageItem<'a> {
    /// The message type's name: `Join`.
    pub type_name: &'static str,
    /// Its sequence number, for a reliable message.
    pub seqno: Option<u32>,
    /// The player it names, as (generation, index), where it names one.
    pub player: Option<(u32, u32)>,
    /// Byte offset in the payload, and length.
    pub offset: usize,
    pub len: usize,
    /// The compact token of packet lines: `Join#1`, `Update(5)`.
    pub token: &'a dyn TextBytes,
    /// One line with every field: `Join#1 player=0:1 name="alice"`.
    pub text: &'a dyn TextBytes,
}

/// One line of the field tree: a label, its value, where its bytes are, and its
/// depth (0 for a message or the header, 1 for their fields, 2 for an entry's).
/// An item at depth 0, or without a value, is a node (the header, a message, a
/// structure whose fields follow): `-V` shows its span for every protocol alike,
/// `header (12 bytes at offset 0)`, so a dissector gives nodes their whole span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeItem {
    pub label: String,
    pub value: String,
    /// Absolute byte range in the payload.
    pub span: Range<usize>,
    pub depth: u8,
}

/// An item of the field tree: a field, or why decoding stopped there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeEntry {
    Field(TreeItem),
    /// Decoding stopped at byte `offset`, for this reason.
    Error {
        error: ProtoDetail,
        offset: usize,
    },
}

/// [`TreeEntry`] borrowed: its texts are valid during the call only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeRef<'a> {
    Field {
        label: &'a str,
        value: &'a str,
        /// Absolute byte range in the payload.
        span: Range<usize>,
        depth: u8,
    },
    /// Decoding stopped at byte `offset`, for this reason.
    Error { error: ProtoDetail, offset: usize },
}

/// The reused text of the field being walked: a packet's field tree is
/// written for every packet of `-V`, without an allocation per field.
#[derive(Debug, Default)]
pub struct TreeBufs {
    pub label: String,
    pub value: String,
}

thread_local! {
    static TREE_BUFS: RefCell<TreeBufs> = RefCell::new(TreeBufs::default());
}

impl TreeBufs {
    /// Runs `f` with this thread's buffers: allocates nothing once they have
    /// grown (fresh ones where a callback walks another tree meanwhile).
    pub fn with<R>(f: impl FnOnce(&mut TreeBufs) -> R) -> R {
        reused(&TREE_BUFS, f)
    }

    /// Writes a field's label (`label[i]` for an element) and value.
    pub fn field(&mut self, label: &str, index: Option<u32>, value: &Value<'_>) {
        self.label.clear();
        let _ = indexed_label(&mut self.label, label, index);
        self.value.clear();
        let _ = value.write_text(&mut self.value);
    }
}

/// Runs `f` with the thread's value behind `key`, or with a fresh one where
/// it is borrowed already (a callback reentering).
pub fn reused<T: Default + 'static, R>(
    key: &'static std::thread::LocalKey<RefCell<T>>,
    f: impl FnOnce(&mut T) -> R,
) -> R {
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut t) => f(&mut t),
        Err(_) => f(&mut T::default()),
    })
}

/// A protocol's dissector: stateless, recognition aside.
impl fmt::Debug for dyn Dissector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Dissector")
    }
}

pub trait Dissector: Sync + 'static {
    /// The header's numbers, in order, or why the header does not decode.
    fn header(&self, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail>;

    /// Every message that decodes, in order; then why the rest does not decode,
    /// if it does not (a header error included).
    fn messages(
        &self,
        payload: &[u8],
        f: &mut dyn FnMut(&MessageItem<'_>),
    ) -> Result<(), ProtoDetail>;

    /// The field tree: the header, then each message, an error where decoding
    /// stops, its texts borrowed (valid during the call only): what writes the
    /// tree of every packet (`-V`) allocates nothing per packet.
    fn tree_ref(&self, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>));

    /// [`Dissector::tree_ref`] owned, for one packet at a time (the terminal
    /// UI, tests). Allocates.
    fn tree(&self, payload: &[u8], f: &mut dyn FnMut(TreeEntry)) {
        self.tree_ref(payload, &mut |e| {
            f(match e {
                TreeRef::Field {
                    label,
                    value,
                    span,
                    depth,
                } => TreeEntry::Field(TreeItem {
                    label: label.to_owned(),
                    value: value.to_owned(),
                    span,
                    depth,
                }),
                TreeRef::Error { error, offset } => TreeEntry::Error { error, offset },
            })
        });
    }

    /// The message type names, for the display filter (`type == Join`).
    fn message_types(&self) -> &'static [&'static str];

    /// Every field the protocol registers (`strs.seq`, `lwar.input.aim_x`), for
    /// the display filter's `proto.field` names, field output and documentation.
    fn field_defs(&self) -> &'static [FieldDef] {
        &[]
    }

    /// Walks the typed fields of a packet in wire order (a registered
    /// [`FieldDef`] each), then why the rest does not decode, if it does not.
    /// Allocates nothing.
    fn fields(&self, _payload: &[u8], _sink: &mut dyn FieldSink) -> Result<(), ProtoDetail> {
        Ok(())
    }

    /// The dissector that reads `payload` exactly as this one does, with
    /// what this one decides from the payload's own bytes decided once
    /// (Battlegrounds' registered dissector guesses a packet's byte order
    /// in each of its calls, some 270 instructions: one checked reading,
    /// the other order judged from it; the dissector of the order it
    /// guessed reads on without guessing). An output that calls several
    /// methods on one payload settles it first. `None`: this one.
    fn settled(&self, _payload: &[u8]) -> Option<&'static dyn Dissector> {
        None
    }

    /// Whether this dissector (a session's,
    /// [`Analyzer::dissector`](crate::engine::Analyzer::dissector)) reads
    /// `payload` exactly as `rendered_with` did: the protocol's registered
    /// dissector, or what it [settled](Dissector::settled) to for this
    /// payload. Then what the reader's thread rendered ahead with it is
    /// this packet's output too (`run::ahead`). `false` by default.
    fn reads_as_registered(&self, _payload: &[u8], _rendered_with: &dyn Dissector) -> bool {
        false
    }

    /// Whether each message [`Dissector::messages`] hands (its player,
    /// token and text) is decided by its type, seqno and offset and its own
    /// bytes, `payload[offset..offset + len]`, whatever else the payload
    /// holds. An output may then reuse what it wrote of a message for the
    /// same type, seqno and bytes at the same offset: a server sends each
    /// tick's messages to every client, and JSON Lines writes each of them
    /// once (`report::repeats`). `false` by default.
    fn messages_stand_alone(&self) -> bool {
        false
    }

    /// Which dissector this is, for what outputs keep of the packets it
    /// read (`report::repeats`). Not to be overridden.
    fn id(&self) -> DissectorId {
        DissectorId(
            std::any::TypeId::of::<Self>(),
            std::ptr::from_ref(self).cast::<()>() as usize,
        )
    }
}

/// A dissector's type and address ([`Dissector::id`]): two dissectors of
/// one type at one address read alike (a type without data, whose values
/// are all the same; the address of one may be another's), and a pointer
/// to a trait object does not tell them apart (its table of methods may be
/// one type's in one place and another in the next).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DissectorId(std::any::TypeId, usize);
