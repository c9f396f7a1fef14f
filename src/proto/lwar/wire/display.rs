//! Human-readable forms of messages: a compact token (`Join#1`, `Update(5)`), a
//! one-line description, and a field list with the byte span of every field.

use super::layout::{self, Entry, F, HEADER, Item, Val, Visit, field};
use super::message::{Message, MessageView};
use super::packet::Packet;
use super::types::Id;
use crate::proto::dissect::{Out, TreeBufs, WriteText, indexed_label};
use std::fmt::{self, Write};
use std::ops::Range;

/// The compact token of a message: `Join#1` for reliable ones, `Update(5)` for
/// counted ones, the bare type otherwise. Writes without allocating.
pub struct Token<'m, 'a>(&'m Message<'a>);

fn token(m: &Message<'_>, f: &mut impl Out) -> fmt::Result {
    f.s(m.msg_type().name())?;
    if let Some(seqno) = m.seqno() {
        f.labelled("#", seqno)
    } else if let Some(n) = m.entry_count() {
        f.labelled("(", n)?;
        f.s(")")
    } else {
        Ok(())
    }
}

impl fmt::Display for Token<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        token(self.0, f)
    }
}

impl WriteText for Token<'_, '_> {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result {
        token(self.0, out)
    }
}

impl<'a> Message<'a> {
    /// The compact token used in packet summaries: `Join#1`, `Update(5)`, `Input`.
    pub fn token(&self) -> Token<'_, 'a> {
        Token(self)
    }
}

// The text of a message is written for every packet of `--packets`,
// `--format jsonl` and `-V`: pieces go straight to the formatter (or the
// line's bytes), numbers through `itoa`, rather than through `write!`'s
// argument machinery (which took a third of `--format jsonl`).

/// `label` then an id, `generation:index`.
fn labelled_id(f: &mut impl Out, label: &str, id: Id) -> fmt::Result {
    f.labelled(label, id.generation)?;
    f.labelled(":", id.index)
}

/// A key state byte, as `{:08b}` writes it.
fn keys(f: &mut impl Out, b: u8) -> fmt::Result {
    let mut bits = [b'0'; 8];
    for (i, c) in bits.iter_mut().enumerate() {
        *c += (b >> (7 - i)) & 1;
    }
    f.ascii(&bits)
}

/// The one-line text of a message: its token, then each field the layout
/// puts in the text (`Join#1 player=0:1 name="alice"`). Writes without
/// allocating.
pub struct Text<'m, 'a>(&'m MessageView<'a>);

impl<'a> MessageView<'a> {
    /// The one-line text: `Join#1 player=0:1 name="alice"`.
    pub fn text(&self) -> Text<'_, 'a> {
        Text(self)
    }
}

impl fmt::Display for Text<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text(self.0, f)
    }
}

impl WriteText for Text<'_, '_> {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result {
        text(self.0, out)
    }
}

/// [`MessageView::text`].
impl fmt::Display for MessageView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text(self, f)
    }
}

/// Writes the text's pieces of the layout's fields.
struct TextOut<'f, O> {
    f: &'f mut O,
    r: fmt::Result,
}

#[inline(always)]
fn text_item(f: &mut impl Out, pre: &str, post: &str, v: Val<'_>) -> fmt::Result {
    f.s(pre)?;
    match v {
        Val::Num(n) | Val::Hex(n) => f.int(n)?,
        Val::Signed(n) => f.int(n)?,
        Val::Id(id) => labelled_id(f, "", id)?,
        Val::Keys(k) => keys(f, k)?,
        Val::Type(t) => f.s(t.name())?,
        Val::Str(s) => f.display(&s)?,
    }
    if post.is_empty() { Ok(()) } else { f.s(post) }
}

impl<O: Out> Visit for TextOut<'_, O> {
    #[inline(always)]
    fn item(&mut self, item: &'static Item, _at: usize, _len: usize, v: Val<'_>) {
        if let Some(pre) = item.pre
            && self.r.is_ok()
        {
            self.r = text_item(self.f, pre, item.post, v);
        }
    }
    fn enter(&mut self, _e: &'static Entry, _index: u32, _at: usize) {}
    fn leave(&mut self) {}
}

/// The one-line text of a message, into `f`.
fn text(m: &MessageView<'_>, f: &mut impl Out) -> fmt::Result {
    token(&m.message, f)?;
    let mut out = TextOut { f, r: Ok(()) };
    layout::walk(m.msg_type(), m.bytes, m.offset, &mut out);
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

/// What receives each field: its label, its value, its byte span and depth
/// (the texts are valid during the call only).
pub type EmitField<'e> = dyn FnMut(&str, &str, Range<usize>, u8) + 'e;

/// Writes the layout's fields as the tree's lines, their texts in reused
/// buffers (integers through `itoa`: `fmt`'s machinery was most of `-V`'s
/// time once the allocations were gone).
struct Tree<'f, 'e> {
    emit: &'f mut EmitField<'e>,
    bufs: &'f mut TreeBufs,
    depth: u8,
}

impl Tree<'_, '_> {
    #[inline(always)]
    fn line(&mut self, label: &'static str, index: Option<u32>, span: Range<usize>) {
        if index.is_none() {
            return (self.emit)(label, &self.bufs.value, span, self.depth);
        }
        self.bufs.label.clear();
        let _ = indexed_label(&mut self.bufs.label, label, index);
        (self.emit)(&self.bufs.label, &self.bufs.value, span, self.depth);
    }
}

impl Visit for Tree<'_, '_> {
    #[inline(always)]
    fn item(&mut self, item: &'static Item, at: usize, len: usize, v: Val<'_>) {
        let value = &mut self.bufs.value;
        value.clear();
        let int = |value: &mut String, n: u64| value.push_str(itoa::Buffer::new().format(n));
        let mut at = at;
        let mut len = len;
        match v {
            Val::Num(n) => int(value, n),
            Val::Signed(n) => value.push_str(itoa::Buffer::new().format(n)),
            Val::Id(id) => {
                let _ = labelled_id(value, "", id);
            }
            Val::Keys(k) => {
                let _ = keys(value, k);
            }
            Val::Hex(n) => {
                let _ = crate::proto::field::Value::Hex(n).write_text(value);
            }
            Val::Type(t) => int(value, u64::from(t.id())),
            Val::Str(s) => {
                int(value, s.len() as u64);
                self.line(field(F::NAME_LEN).label, None, at..at + 1);
                at += 1;
                len -= 1;
                let note = if s.is_utf8() { "" } else { " (not UTF-8)" };
                self.bufs.value.clear();
                let _ = write!(self.bufs.value, "{s}{note}");
            }
        }
        self.line(item.label, item.index, at..at + len);
    }

    fn enter(&mut self, e: &'static Entry, index: u32, at: usize) {
        self.bufs.value.clear();
        self.line(field(e.node).label, Some(index), at..at + e.len);
        self.depth += 1;
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }
}

/// The header's fields as the tree's lines, at depth 1.
pub(crate) fn walk_header_tree(bytes: &[u8], bufs: &mut TreeBufs, emit: &mut EmitField<'_>) {
    let mut tree = Tree {
        emit,
        bufs,
        depth: 1,
    };
    layout::walk_items(&HEADER, bytes, 0, &mut 0, &mut tree);
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
        let _ = token(&self.message, &mut bufs.value);
        emit(
            self.msg_type().name(),
            &bufs.value,
            start..start + self.bytes.len(),
            0,
        );
        let mut tree = Tree {
            emit,
            bufs,
            depth: 1,
        };
        layout::walk(self.msg_type(), self.bytes, start, &mut tree);
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
