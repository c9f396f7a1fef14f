//! Human-readable forms of messages: a compact token (`Join#1`, `Update(5)`), a
//! one-line description, and a field list with the byte span of every field.

use super::layout;
use super::message::{self, Message, MessageHead, MessageView};
use super::packet::Packet;
use super::types::MessageType;
use crate::proto::dissect::{MarksWire, Out, TextBytes, TreeBufs, WriteText};
pub use crate::proto::layout::EmitField;
use crate::proto::layout::{TextOut, TreeOut};
use std::fmt::{self, Write};
use std::ops::Range;

/// The compact token of a message: `Join#1` for reliable ones, `Update(5)` for
/// counted ones, the bare type otherwise. Writes without allocating. What
/// it writes is its type, seqno and entry count, read from a [`Message`]
/// or a [`MessageHead`] alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    msg_type: MessageType,
    seqno: Option<u32>,
    count: Option<usize>,
}

impl Token {
    /// The sequence number of a reliable message.
    pub fn seqno(&self) -> Option<u32> {
        self.seqno
    }
}

fn token(m: &Token, f: &mut impl Out) -> fmt::Result {
    f.s(m.msg_type.name())?;
    if let Some(seqno) = m.seqno {
        f.labelled("#", seqno)
    } else if let Some(n) = m.count {
        f.labelled("(", n)?;
        f.s(")")
    } else {
        Ok(())
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        token(self, f)
    }
}

impl WriteText for Token {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result {
        token(self, out)
    }
}

/// Each type's name padded to 16 bytes, and its length: copied as 16
/// bytes then cut.
static PADDED_NAMES: [([u8; 16], usize); MessageType::COUNT] =
    crate::engine::out::padded_names!(MessageType, 16);

/// The token's bytes, as `token` writes them, put together in a local
/// array (the name a copy of 16 bytes, the number by
/// `digits::int_into`) and copied into the line at once, a copy of fixed
/// size then cut: written for every message of every packet line, where
/// the pieces one by one, a call each, cost more than the line's other
/// columns.
impl TextBytes for Token {
    fn write_bytes(&self, out: &mut Vec<u8>) {
        let (name, len) = PADDED_NAMES
            .get(self.msg_type.ordinal())
            .copied()
            .unwrap_or_default();
        let mut t = [0u8; 48];
        if let Some(place) = t.get_mut(..16) {
            place.copy_from_slice(&name);
        }
        let (open, n, close) = match (self.seqno, self.count) {
            (Some(seqno), _) => (b'#', seqno as u64, None),
            (None, Some(n)) => (b'(', n as u64, Some(b')')),
            (None, None) => (0, 0, None),
        };
        let mut end = len;
        if open != 0 {
            if let Some(b) = t.get_mut(end) {
                *b = open;
            }
            if let Some(digits) = t
                .get_mut(end + 1..end + 25)
                .and_then(|d| <&mut [u8; 24]>::try_from(d).ok())
            {
                end += 1 + crate::proto::digits::int_into(digits, n);
            }
            if let (Some(c), Some(b)) = (close, t.get_mut(end)) {
                *b = c;
                end += 1;
            }
        }
        let at = out.len() + end;
        out.extend_from_slice(&t);
        out.truncate(at);
    }
}

impl Message<'_> {
    /// The compact token used in packet summaries: `Join#1`, `Update(5)`, `Input`.
    pub fn token(&self) -> Token {
        Token {
            msg_type: self.msg_type(),
            seqno: self.seqno(),
            count: self.entry_count(),
        }
    }
}

impl<'a> MessageHead<'a> {
    /// [`Message::token`], read from the message's header and count byte.
    #[inline]
    pub fn token(&self) -> Token {
        Token {
            msg_type: self.msg_type,
            seqno: self.seqno(),
            count: self.entry_count(),
        }
    }

    /// [`MessageView::text`], its body read once, for the text.
    #[inline]
    pub fn text(&self) -> Text<'a> {
        Text {
            token: self.token(),
            bytes: self.bytes,
            offset: self.offset,
        }
    }
}

// The text of a message is written for every packet of `--packets`,
// `--format jsonl` and `-V`: pieces go straight to the formatter (or the
// line's bytes), numbers through `itoa`, rather than through `write!`'s
// argument machinery (which took a third of `--format jsonl`).

/// The one-line text of a message: its token, then each field the layout
/// puts in the text (`Join#1 player=0:1 name="alice"`). Writes without
/// allocating.
pub struct Text<'a> {
    token: Token,
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> MessageView<'a> {
    /// The one-line text: `Join#1 player=0:1 name="alice"`.
    pub fn text(&self) -> Text<'a> {
        Text {
            token: self.message.token(),
            bytes: self.bytes,
            offset: self.offset,
        }
    }
}

impl Text<'_> {
    /// The message's token, which the text begins with.
    pub fn token(&self) -> &Token {
        &self.token
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text(self, f)
    }
}

impl WriteText for Text<'_> {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result {
        text(self, out)
    }
}

/// The text's bytes; for JSON, where the first from the wire begins (a
/// name's or a chat's): the token and the layout's pieces and numbers never
/// need an escape (`fixed_texts_need_no_json_escape`).
impl MarksWire for Text<'_> {}

/// [`MessageView::text`].
impl fmt::Display for MessageView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text(&self.text(), f)
    }
}

/// The one-line text of a message, into `f`.
fn text(m: &Text<'_>, f: &mut impl Out) -> fmt::Result {
    token(&m.token, f)?;
    let mut out = TextOut::new(f);
    message::walk(m.token.msg_type, m.bytes, m.offset, &mut out);
    out.r
}

/// One field of the detailed view: a label, its value, where its bytes are in the
/// packet, and its depth in the tree (0 for the message line, 1 for its fields, 2
/// for the fields of an entry).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Field {
    pub label: String,
    pub value: String,
    /// Absolute byte range in the packet.
    pub span: Range<usize>,
    pub depth: u8,
}

/// The header's fields as the tree's lines, at depth 1.
pub(crate) fn walk_header_tree(bytes: &[u8], bufs: &mut TreeBufs, emit: &mut EmitField<'_>) {
    let mut tree = TreeOut {
        emit,
        bufs,
        depth: 1,
    };
    layout::walk_header(bytes, &mut tree);
}

impl MessageView<'_> {
    /// Every field of the message as a tree, with byte spans for hex highlighting.
    pub fn fields(&self) -> Vec<Field> {
        let mut out = Vec::new();
        self.walk_tree(
            &mut TreeBufs::default(),
            &mut |label, value, span, depth| {
                out.push(Field {
                    label: label.to_owned(),
                    value: value.to_owned(),
                    span,
                    depth,
                });
            },
        );
        out
    }

    /// [`MessageView::fields`] one at a time, their texts in `bufs`:
    /// allocates nothing once `bufs` has grown.
    pub fn walk_tree(&self, bufs: &mut TreeBufs, emit: &mut EmitField<'_>) {
        let start = self.offset;
        bufs.value.clear();
        let _ = token(&self.message.token(), &mut bufs.value);
        emit(
            self.msg_type().name(),
            &bufs.value,
            start..start + self.bytes.len(),
            0,
        );
        let mut tree = TreeOut {
            emit,
            bufs,
            depth: 1,
        };
        message::walk(self.msg_type(), self.bytes, start, &mut tree);
    }
}

impl Packet<'_> {
    /// The header's fields, with their byte spans.
    pub fn header_fields(&self) -> [Field; 3] {
        let mut out = Vec::with_capacity(3);
        walk_header_tree(
            self.bytes(),
            &mut TreeBufs::default(),
            &mut |label, value, span, depth| {
                out.push(Field {
                    label: label.to_owned(),
                    value: value.to_owned(),
                    span,
                    depth,
                });
            },
        );
        std::array::from_fn(|i| out.get(i).cloned().unwrap_or_default())
    }

    /// The tokens of every decodable message, space-separated: `Join#1 Add#2 Update(5)`.
    /// Stops at the first decode error.
    pub fn summary(&self) -> impl fmt::Display + '_ {
        fmt::from_fn(move |f| {
            let mut first = true;
            for m in self.messages().map_while(Result::ok) {
                if !first {
                    f.write_char(' ')?;
                }
                first = false;
                write!(f, "{}", m.message.token())?;
            }
            Ok(())
        })
    }
}
