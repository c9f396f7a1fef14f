//! The stateless side of a protocol: what outputs need to show a packet without
//! knowing its wire format. One-line summaries, JSON messages, the field tree of
//! `-V` and the terminal UI, and the values the display filter tests.

use crate::engine::ProtoDetail;
use crate::proto::field::{FieldDef, FieldSink};
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

/// A text written once per message of every packet line and JSON Lines
/// object: what its `Display` writes, also written straight into a line's
/// bytes. The default goes through `fmt`; a protocol overrides it where a
/// profile shows it (lwar's messages).
pub trait TextBytes: fmt::Display {
    /// Appends what `Display` writes to `out`.
    fn write_bytes(&self, out: &mut Vec<u8>) {
        use std::io::Write as _;
        let _ = write!(out, "{self}");
    }
}

/// One line of the field tree: a label, its value, where its bytes are, and its
/// depth (0 for a message or the header, 1 for their fields, 2 for an entry's).
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

/// Appends `s` to `out`: the few bytes of a number or a label, copied a byte
/// at a time when short (a call to `memmove` for each of them took a sixth of
/// `--format jsonl`).
#[inline]
pub fn put_small(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 8 {
        out.reserve(8);
        for &b in s {
            out.push(b);
        }
    } else {
        out.extend_from_slice(s);
    }
}

/// A protocol's dissector: stateless, recognition aside.
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
    /// stops. Allocates (it is for one packet at a time).
    fn tree(&self, payload: &[u8], f: &mut dyn FnMut(TreeEntry));

    /// [`Dissector::tree`] with borrowed texts, for what writes the tree of
    /// every packet (`-V`). The default goes through `tree` (allocating); a
    /// protocol overrides it to allocate nothing per packet (lwar).
    fn tree_ref(&self, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>)) {
        self.tree(payload, &mut |e| match e {
            TreeEntry::Field(i) => f(TreeRef::Field {
                label: &i.label,
                value: &i.value,
                span: i.span,
                depth: i.depth,
            }),
            TreeEntry::Error { error, offset } => f(TreeRef::Error { error, offset }),
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
}
