//! Human-readable forms of messages: a compact token (`Join#1`, `Update(5)`), a
//! one-line description, and a field list with the byte span of every field.

use super::entries::Record;
use super::message::{Message, MessageView, Str};
use super::packet::Packet;
use super::types::{HEADER_LEN, Id};
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

/// A key state byte as a value of its own, `{:08b}`.
struct Keys(u8);

impl fmt::Display for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        keys(f, self.0)
    }
}

/// `(x,y)`.
fn point(f: &mut impl Out, x: i16, y: i16) -> fmt::Result {
    f.labelled("(", x)?;
    f.labelled(",", y)?;
    f.s(")")
}

/// ` [entity (x,y)`, the start of an update entry.
fn entry_head(f: &mut impl Out, entity: Id, x: i16, y: i16) -> fmt::Result {
    labelled_id(f, " [", entity)?;
    f.s(" ")?;
    point(f, x, y)
}

/// One line with every scalar field: `Join#1 player=0:1 name="alice"`.
impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        text(self, f)
    }
}

impl WriteText for Message<'_> {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result {
        text(self, out)
    }
}

/// The one-line text of a message, into `f`.
fn text(m: &Message<'_>, f: &mut impl Out) -> fmt::Result {
    token(m, f)?;
    match *m {
        Message::Connect { name, .. } => {
            f.s(" name=")?;
            f.display(&name)
        }
        Message::Disconnect { .. } | Message::Synced { .. } | Message::Full => Ok(()),
        Message::Join { player, name, .. } | Message::Name { player, name, .. } => {
            labelled_id(f, " player=", player)?;
            f.s(" name=")?;
            f.display(&name)
        }
        Message::Leave { player, .. } => labelled_id(f, " player=", player),
        Message::Chat { player, text, .. } => {
            labelled_id(f, " player=", player)?;
            f.s(" text=")?;
            f.display(&text)
        }
        Message::Add {
            entity,
            player,
            type_id,
            ..
        } => {
            labelled_id(f, " entity=", entity)?;
            labelled_id(f, " player=", player)?;
            f.labelled(" type=", type_id)
        }
        Message::Remove { entity, .. } => labelled_id(f, " entity=", entity),
        Message::Selection {
            player,
            ship_type,
            weapon_types: w,
            ..
        } => {
            labelled_id(f, " player=", player)?;
            f.labelled(" ship=", ship_type)?;
            f.labelled(" weapons=", w[0])?;
            f.labelled(",", w[1])?;
            f.labelled(",", w[2])?;
            f.labelled(",", w[3])
        }
        Message::Input(i) => {
            labelled_id(f, " player=", i.player)?;
            f.labelled(" frame=", i.frame)?;
            for (label, k) in [
                (" fwd=", i.forward),
                (" back=", i.backward),
                (" left=", i.turn_left),
                (" right=", i.turn_right),
                (" sleft=", i.strafe_left),
                (" sright=", i.strafe_right),
                (" shoot=", i.shooting[0]),
                (",", i.shooting[1]),
                (",", i.shooting[2]),
                (",", i.shooting[3]),
            ] {
                f.s(label)?;
                keys(f, k)?;
            }
            f.s(" aim=")?;
            point(f, i.aim_x, i.aim_y)
        }
        Message::Collision(c) => {
            labelled_id(f, " entities=", c.entities[0])?;
            labelled_id(f, ",", c.entities[1])?;
            f.s(" at=")?;
            point(f, c.x, c.y)
        }
        Message::Stats(e) => {
            for s in e.iter() {
                labelled_id(f, " [", s.player)?;
                f.labelled(" k=", s.kills)?;
                f.labelled(" d=", s.deaths)?;
                f.labelled(" ping=", s.ping)?;
                f.s("]")?;
            }
            Ok(())
        }
        Message::Update(e) => {
            for u in e.iter() {
                entry_head(f, u.entity, u.x, u.y)?;
                f.labelled(" ", u.orientation)?;
                f.labelled("° hp=", u.health)?;
                f.s("]")?;
            }
            Ok(())
        }
        Message::UpdatePos(e) => {
            for u in e.iter() {
                entry_head(f, u.entity, u.x, u.y)?;
                f.s("]")?;
            }
            Ok(())
        }
        Message::UpdateRay(e) => {
            for u in e.iter() {
                entry_head(f, u.entity, u.x, u.y)?;
                f.labelled(" ", u.orientation)?;
                f.labelled("° len=", u.length)?;
                f.s("]")?;
            }
            Ok(())
        }
        Message::UpdateCircle(e) => {
            for u in e.iter() {
                entry_head(f, u.entity, u.x, u.y)?;
                f.labelled(" r=", u.radius)?;
                f.s("]")?;
            }
            Ok(())
        }
    }
}

/// One field of the detailed view: a label, its value, where its bytes are in the
/// packet, and its depth in the tree (0 for the message line, 1 for its fields, 2
/// for the fields of an entry).
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// A field's value, written into the tree's reused text as `{}` writes it
/// (integers through `itoa`: `fmt`'s machinery was most of `-V`'s time once
/// the allocations were gone).
trait Val {
    fn put(&self, s: &mut String);
}

macro_rules! int_val {
    ($($t:ty),*) => {$(
        impl Val for $t {
            fn put(&self, s: &mut String) {
                s.push_str(itoa::Buffer::new().format(*self));
            }
        }
    )*};
}

int_val!(u8, u16, u32, i16, usize);

impl Val for Id {
    fn put(&self, s: &mut String) {
        let _ = labelled_id(s, "", *self);
    }
}

impl Val for Keys {
    fn put(&self, s: &mut String) {
        let _ = keys(s, self.0);
    }
}

impl Val for fmt::Arguments<'_> {
    fn put(&self, s: &mut String) {
        let _ = s.write_fmt(*self);
    }
}

impl<T: Val + ?Sized> Val for &T {
    fn put(&self, s: &mut String) {
        (**self).put(s);
    }
}

/// Walks fields with running offsets.
struct Fields<'f, 'e> {
    emit: &'f mut EmitField<'e>,
    bufs: &'f mut TreeBufs,
    at: usize,
    depth: u8,
}

impl Fields<'_, '_> {
    fn push(&mut self, label: &str, len: usize, value: impl Val) {
        self.bufs.value.clear();
        value.put(&mut self.bufs.value);
        (self.emit)(label, &self.bufs.value, self.at..self.at + len, self.depth);
        self.at += len;
    }

    /// `label[i]`.
    fn push_indexed(&mut self, label: &str, i: usize, len: usize, value: impl Val) {
        let mut l = std::mem::take(&mut self.bufs.label);
        l.clear();
        let _ = indexed_label(&mut l, label, u32::try_from(i).ok());
        self.push(&l, len, value);
        self.bufs.label = l;
    }

    fn id(&mut self, label: &str, id: Id) {
        self.push(label, 4, id);
    }

    fn string(&mut self, label: &str, s: Str<'_>) {
        self.push("len", 1, s.len());
        let note = if s.is_utf8() { "" } else { " (not UTF-8)" };
        self.push(label, s.len(), format_args!("{s}{note}"));
    }

    fn entries<E: Record>(
        &mut self,
        kind: &str,
        items: impl Iterator<Item = E>,
        mut each: impl FnMut(&mut Self, E),
    ) {
        for (i, e) in items.enumerate() {
            let mut l = std::mem::take(&mut self.bufs.label);
            l.clear();
            let _ = indexed_label(&mut l, kind, u32::try_from(i).ok());
            (self.emit)(&l, "", self.at..self.at + E::LEN, self.depth);
            self.bufs.label = l;
            self.depth += 1;
            each(self, e);
            self.depth -= 1;
        }
    }
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
        let mut f = Fields {
            emit,
            bufs,
            at: start,
            depth: 1,
        };
        f.push("type", 1, self.msg_type().id());
        if let Some(seqno) = self.seqno() {
            f.push("seqno", 4, seqno);
        }
        match self.message {
            Message::Connect { name, .. } => f.string("name", name),
            Message::Disconnect { .. } | Message::Synced { .. } | Message::Full => {}
            Message::Join { player, name, .. } | Message::Name { player, name, .. } => {
                f.id("playerId", player);
                f.string("name", name);
            }
            Message::Leave { player, .. } => f.id("playerId", player),
            Message::Chat { player, text, .. } => {
                f.id("playerId", player);
                f.string("msg", text);
            }
            Message::Add {
                entity,
                player,
                type_id,
                ..
            } => {
                f.id("entityId", entity);
                f.id("playerId", player);
                f.push("typeId", 1, type_id);
            }
            Message::Remove { entity, .. } => f.id("entityId", entity),
            Message::Selection {
                player,
                ship_type,
                weapon_types,
                ..
            } => {
                f.id("playerId", player);
                f.push("shipType", 1, ship_type);
                for (i, w) in weapon_types.iter().enumerate() {
                    f.push_indexed("weaponType", i, 1, w);
                }
            }
            Message::Input(i) => {
                f.id("playerId", i.player);
                f.push("frameNo", 4, i.frame);
                for (label, v) in [
                    ("forward", i.forward),
                    ("backward", i.backward),
                    ("turnLeft", i.turn_left),
                    ("turnRight", i.turn_right),
                    ("strafeLeft", i.strafe_left),
                    ("strafeRight", i.strafe_right),
                ] {
                    f.push(label, 1, Keys(v));
                }
                for (n, v) in i.shooting.iter().enumerate() {
                    f.push_indexed("shooting", n, 1, Keys(*v));
                }
                f.push("aimX", 2, i.aim_x);
                f.push("aimY", 2, i.aim_y);
            }
            Message::Collision(c) => {
                f.id("entityId[0]", c.entities[0]);
                f.id("entityId[1]", c.entities[1]);
                f.push("x", 2, c.x);
                f.push("y", 2, c.y);
            }
            Message::Stats(e) => {
                f.push("num", 1, e.len());
                f.entries("stats", e.iter(), |f, s| {
                    f.id("player", s.player);
                    f.push("kills", 2, s.kills);
                    f.push("deaths", 2, s.deaths);
                    f.push("ping", 2, s.ping);
                });
            }
            Message::Update(e) => {
                f.push("num", 1, e.len());
                f.entries("update", e.iter(), |f, u| {
                    f.id("entityId", u.entity);
                    f.push("x", 2, u.x);
                    f.push("y", 2, u.y);
                    f.push("orientation", 2, u.orientation);
                    f.push("health", 1, u.health);
                });
            }
            Message::UpdatePos(e) => {
                f.push("num", 1, e.len());
                f.entries("update", e.iter(), |f, u| {
                    f.id("entityId", u.entity);
                    f.push("x", 2, u.x);
                    f.push("y", 2, u.y);
                });
            }
            Message::UpdateRay(e) => {
                f.push("num", 1, e.len());
                f.entries("update", e.iter(), |f, u| {
                    f.id("entityId", u.entity);
                    f.push("x", 2, u.x);
                    f.push("y", 2, u.y);
                    f.push("orientation", 2, u.orientation);
                    f.push("length", 2, u.length);
                });
            }
            Message::UpdateCircle(e) => {
                f.push("num", 1, e.len());
                f.entries("update", e.iter(), |f, u| {
                    f.id("entityId", u.entity);
                    f.push("x", 2, u.x);
                    f.push("y", 2, u.y);
                    f.push("radius", 2, u.radius);
                });
            }
        }
        debug_assert_eq!(f.at, start + self.bytes.len(), "{:?}", self.message);
    }
}

impl Packet<'_> {
    /// The header's fields, with their byte spans.
    pub fn header_fields(&self) -> [Field; 3] {
        let field = |label: &str, span: Range<usize>, value: String| Field {
            label: label.to_owned(),
            value,
            span,
            depth: 1,
        };
        [
            field("appId", 0..4, "0xf27087c5".to_owned()),
            field("ack", 4..8, self.ack().to_string()),
            field("timestamp", 8..HEADER_LEN, self.timestamp().to_string()),
        ]
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
