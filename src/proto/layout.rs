//! The wire-layout machinery every native protocol declares its packets
//! with, protocol-independent: primitives ([`Prim`]: size, byte order, sign
//! and how each displays), the fields of a layout ([`Item`]), repeated
//! entries ([`Entry`]), a message's layout ([`Layout`]), the one walk over
//! a layout's bytes ([`walk_row`], [`walk_items`]; [`walk_cut`] for a
//! message cut short) with its visitor
//! ([`Visit`]), and the visitors every protocol shares: the typed field walk
//! of `-Y`, `-T fields` and JSON ([`ToSink`]), the lines of the `-V` tree
//! ([`TreeOut`]) and the pieces of the one-line text ([`TextOut`]).
//!
//! The protocols whose walk hands over registered fields rather than a
//! layout's items (the described ones, `super::described`, and the
//! built-in Vessel's protobuf walk) share the same writers through a
//! [`FieldSink`]: the one-line text ([`FieldLine`]) and the tree
//! ([`FieldTree`]). Both kinds of walk write a value by the same functions
//! ([`value_text`], [`f32_text`], [`tree_value`]) and an entry's ` [e].`
//! by [`EntryPrefix`], so a fix to how a value, a text that is not UTF-8
//! or an entry reads lands once for every protocol.
//!
//! A protocol keeps only its table: its registered fields behind a
//! [`Handle`] (an enum indexing its `FIELDS`), its rows (a [`Table`]), and
//! what is truly its own (its token, its analysis). Its typed messages are
//! read and written at its rows' offsets by `super::codec` (`record!`).
//! This module imports no protocol.
//!
//! # Straight-line code
//!
//! A row's walk ([`walk_row`]) reads the row from a constant table
//! (`T::ROWS`, an associated constant) item by item in inline `const`
//! blocks, and each item's read ([`walk_one`]) is always inlined: every
//! message type's walk compiles to code of its own, its offsets, primitives
//! and texts folded, as fast as one written by hand. A plain loop over the
//! row (what [`walk_items`] does, for a header walked rarely) made lwar's
//! JSON Lines 19 % and `-V` 25 % slower.
//!
//! The forced inlining holds in release builds only: in a debug build every
//! row of every visitor inlined whole made the library's test build take
//! 7.5 GB and two and a half minutes (1.1 GB and 16 s without it), and its
//! locals filled the test threads' stacks.

use crate::engine::dissect::{TreeBufs, TreeRef, indexed_label, reused};
use crate::engine::field::{Field, FieldDef, FieldSet, FieldSink, FieldType, Value, group_key};
use crate::engine::out::{Float as _, Out, WriteText, bits8};
use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::ops::Range;

/// A protocol's handle on one of its registered fields (an enum indexing
/// its `FIELDS`): a small constant in the table, its definition at run time.
pub trait Handle: Copy + fmt::Debug + 'static {
    fn def(self) -> &'static FieldDef;
    /// The index in the registry (what [`FieldSet`] holds).
    fn index(self) -> u16;
}

/// A protocol's field registry: its handle (an enum, a variant a field,
/// its index in the registry) and its `static` of definitions, from one
/// line a field (`ID = "filter.name", "treeLabel", Type, "Documentation.";`).
/// The enum gets [`Handle`], its definitions as a constant (`DEFS`, for
/// the tables' `const fn`s), every variant (`ALL`), its index as a
/// constant (`index`, what `codec::record!` compares) and back
/// (`from_index`); the static is what the filter compares by address.
///
/// ```text
/// fields! {
///     /// A registered field.
///     pub enum FieldId;
///     /// Every field.
///     pub static FIELDS;
///     SEQ = "strs.seq", "sequenceNumber", Unsigned, "The sender's sequence number.";
/// }
/// ```
macro_rules! fields {
    (
        $(#[$em:meta])* $evis:vis enum $f:ident;
        $(#[$sm:meta])* $svis:vis static $fields:ident;
        $( $id:ident = $name:literal, $label:literal, $ty:ident, $doc:literal; )*
    ) => {
        $(#[$em])*
        #[allow(non_camel_case_types, clippy::upper_case_acronyms, clippy::enum_variant_names)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u16)]
        $evis enum $f { $( $id, )* }

        $(#[$sm])*
        $svis static $fields: [$crate::engine::field::FieldDef; $f::ALL.len()] = $f::DEFS;

        #[allow(dead_code)]
        impl $f {
            /// Every field, in the order of the registry.
            pub const ALL: [$f; [$( $f::$id, )*].len()] = [$( $f::$id, )*];

            /// The definitions, a constant (the registry's static is their
            /// address at run time).
            pub const DEFS: [$crate::engine::field::FieldDef; $f::ALL.len()] = [ $(
                $crate::engine::field::FieldDef {
                    name: $name,
                    label: $label,
                    ty: $crate::engine::field::FieldType::$ty,
                    doc: $doc,
                },
            )* ];

            /// The registered definition: a stable address in the registry,
            /// which the filter compares by identity.
            #[inline(always)]
            pub fn def(self) -> &'static $crate::engine::field::FieldDef {
                &$fields[self as usize]
            }

            /// The index, as a number.
            pub const fn index(self) -> u16 {
                self as u16
            }

            /// A field by its index, if there is one.
            pub fn from_index(i: u64) -> Option<$f> {
                usize::try_from(i)
                    .ok()
                    .and_then(|i| $f::ALL.get(i))
                    .copied()
            }
        }

        impl $crate::proto::layout::Handle for $f {
            #[inline(always)]
            fn def(self) -> &'static $crate::engine::field::FieldDef {
                $f::def(self)
            }
            #[inline(always)]
            fn index(self) -> u16 {
                self as u16
            }
        }
    };
}

pub(crate) use fields;

/// The byte order of a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum ByteOrder {
    /// Network order.
    #[default]
    Big,
    Little,
}

/// `N` bytes at `offset`, if the slice has them.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn array<const N: usize>(bytes: &[u8], offset: usize) -> Option<[u8; N]> {
    let end = offset.checked_add(N)?;
    bytes.get(offset..end)?.try_into().ok()
}

macro_rules! reads {
    ($( $name:ident: $t:ty; )*) => {
        $(
            /// Reads one value at `offset`, if the slice has its bytes.
            #[cfg_attr(not(debug_assertions), inline(always))]
            pub fn $name(self, bytes: &[u8], offset: usize) -> Option<$t> {
                let a = array(bytes, offset)?;
                Some(match self {
                    ByteOrder::Big => <$t>::from_be_bytes(a),
                    ByteOrder::Little => <$t>::from_le_bytes(a),
                })
            }
        )*
    };
}

macro_rules! writes {
    ($( $name:ident: $t:ty; )*) => {
        $(
            /// Appends one value's bytes.
            pub fn $name(self, out: &mut Vec<u8>, v: $t) {
                match self {
                    ByteOrder::Big => out.extend_from_slice(&v.to_be_bytes()),
                    ByteOrder::Little => out.extend_from_slice(&v.to_le_bytes()),
                }
            }
        )*
    };
}

impl ByteOrder {
    pub const ALL: [ByteOrder; 2] = [ByteOrder::Big, ByteOrder::Little];

    /// `big-endian`, `little-endian`: as reports and JSON say it.
    pub const fn name(self) -> &'static str {
        match self {
            ByteOrder::Big => "big-endian",
            ByteOrder::Little => "little-endian",
        }
    }

    /// `be`, `le`: as a user sets it.
    pub const fn short(self) -> &'static str {
        match self {
            ByteOrder::Big => "be",
            ByteOrder::Little => "le",
        }
    }

    /// The other order.
    pub const fn other(self) -> ByteOrder {
        match self {
            ByteOrder::Big => ByteOrder::Little,
            ByteOrder::Little => ByteOrder::Big,
        }
    }

    reads! {
        u16: u16;
        i16: i16;
        u32: u32;
        i32: i32;
        u64: u64;
        i64: i64;
        f32: f32;
        f64: f64;
    }

    writes! {
        put_u16: u16;
        put_i16: i16;
        put_u32: u32;
        put_u64: u64;
        put_i64: i64;
        put_f32: f32;
        put_f64: f64;
    }
}

impl fmt::Display for ByteOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An integer's width and sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Int {
    U8,
    U16,
    U32,
    U64,
    I16,
    I32,
    I64,
}

impl Int {
    pub const fn size(self) -> usize {
        match self {
            Int::U8 => 1,
            Int::U16 | Int::I16 => 2,
            Int::U32 | Int::I32 => 4,
            Int::U64 | Int::I64 => 8,
        }
    }

    pub const fn signed(self) -> bool {
        matches!(self, Int::I16 | Int::I32 | Int::I64)
    }
}

/// The names of an enum's values.
#[derive(Debug)]
pub struct Names {
    /// The name of a raw value; `bytes` is the slice walked (a name that
    /// depends on another field: Battlegrounds' op by its channel).
    pub name: fn(raw: u64, bytes: &[u8]) -> Option<&'static str>,
    /// A value without a name ends the walk (lwar's message type: what
    /// follows it is not known).
    pub known: bool,
    /// The tree shows the name with the number (`MSG_ACK (17)`); the
    /// number alone otherwise.
    pub tree_named: bool,
    /// The one-line text shows it as its registered value writes it (the
    /// name with the number, `Timeout (2)`, or `7 (unknown)`); the number
    /// alone otherwise.
    pub text_named: bool,
}

/// How an integer is shown.
#[derive(Debug, Clone, Copy)]
pub enum Show {
    /// In decimal.
    Dec,
    /// In hex as sent (`0xf27087c5`) in the tree and fields; in decimal in
    /// the text.
    Hex,
    /// In binary, one digit a bit.
    Bits,
    /// A number with names.
    Enum(&'static Names),
}

/// How a text is quoted and escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    /// `char::escape_debug` inside double quotes, a single quote as is,
    /// bytes that are not UTF-8 as `\xNN` (lwar).
    Debug,
    /// [`Value::Text`]'s form (`"` and `\` escaped, control characters as
    /// `escape_default` writes them).
    Value,
}

/// How a field's bytes read and show.
#[derive(Debug, Clone, Copy)]
pub enum Prim {
    /// An integer in the walk's byte order.
    Int(Int, Show),
    F32,
    F64,
    /// A generational id: a u16 generation then a u16 index, `g:i`.
    Pair16,
    /// The length of the [`Prim::Text`] or [`Prim::Bytes`] that follows.
    Len(Int),
    /// The number of the layout's entries (after its items).
    Count(Int),
    /// Text of the length before it.
    Text(Quote),
    /// Bytes of the length before it; the text shows their number.
    Bytes,
    /// Every byte left in the slice walked; the text shows their number.
    Rest,
    /// A text of a fixed number of bytes, padded with NULs: its value is
    /// the bytes before the first NUL (all of them if there is none), in
    /// [`Quote::Value`]'s form (Starstrike's `char name[32]`).
    Padded(usize),
    /// No bytes: the byte order the walk reads in, as an enum (0 big, 1
    /// little), placed at the start of the slice walked (it is the whole
    /// slice's, wherever the row lists it).
    Order,
    /// No bytes: true (a message whose type is its meaning).
    Flag,
}

impl Prim {
    /// Its fixed size: for a length or a count, its own; none for what
    /// follows a length, the rest, or no bytes.
    pub const fn size(self) -> usize {
        match self {
            Prim::Int(i, _) | Prim::Len(i) | Prim::Count(i) => i.size(),
            Prim::F32 | Prim::Pair16 => 4,
            Prim::F64 => 8,
            Prim::Padded(n) => n,
            Prim::Text(_) | Prim::Bytes | Prim::Rest | Prim::Order | Prim::Flag => 0,
        }
    }
}

/// One field of a layout.
#[derive(Debug, Clone, Copy)]
pub struct Item<H> {
    pub def: H,
    pub prim: Prim,
    /// The label of the field tree (`playerId`).
    pub label: &'static str,
    /// The element's index, for fields that repeat (`weaponType[2]`).
    pub index: Option<u32>,
    /// What the one-line text writes before the value.
    pub pre: Pre,
    /// What it writes after the value (`")"`).
    pub post: &'static str,
}

/// What the one-line text writes before a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pre {
    /// Nothing: the field is not in the text.
    Hidden,
    /// This piece (lwar's `" player="`).
    Lit(&'static str),
    /// ` label=`, its tree label (` label[i]=` for an element of a repeated
    /// field); in an entry, ` [e].label=`, after the entry's index
    /// (Starstrike's).
    Label,
}

impl Pre {
    /// The piece a [`Pre::Lit`] writes.
    pub const fn lit(self) -> Option<&'static str> {
        match self {
            Pre::Lit(s) => Some(s),
            Pre::Hidden | Pre::Label => None,
        }
    }
}

/// A field in the text after `pre`.
pub const fn it<H>(def: H, prim: Prim, label: &'static str, pre: &'static str) -> Item<H> {
    Item {
        def,
        prim,
        label,
        index: None,
        pre: Pre::Lit(pre),
        post: "",
    }
}

/// A field the text does not show.
pub const fn hidden<H>(def: H, prim: Prim, label: &'static str) -> Item<H> {
    Item {
        def,
        prim,
        label,
        index: None,
        pre: Pre::Hidden,
        post: "",
    }
}

/// A field the text shows as ` label=value` ([`Pre::Label`]).
pub const fn labelled<H>(def: H, prim: Prim, label: &'static str) -> Item<H> {
    Item {
        def,
        prim,
        label,
        index: None,
        pre: Pre::Label,
        post: "",
    }
}

impl<H: Copy> Item<H> {
    /// The `i`-th element of a repeated field.
    pub const fn at(mut self, i: u32) -> Item<H> {
        self.index = Some(i);
        self
    }

    /// Written after the value in the text.
    pub const fn then(mut self, post: &'static str) -> Item<H> {
        self.post = post;
        self
    }
}

/// The repeated entries of a counted layout.
#[derive(Debug, Clone, Copy)]
pub struct Entry<H: 'static> {
    /// The node of each entry, labelled in the tree as its definition is.
    pub node: H,
    pub items: &'static [Item<H>],
    /// The size of one entry.
    pub len: usize,
    /// Whether the text numbers its fields (` [e].label=`: some item is
    /// [`Pre::Label`]).
    pub numbered: bool,
}

/// One message's layout: its head (lwar's type byte and seqno), its items,
/// the entries its count (the last of its items) counts, and the items
/// after them.
#[derive(Debug, Clone, Copy)]
pub struct Layout<H: 'static> {
    pub head: &'static [Item<H>],
    pub items: &'static [Item<H>],
    pub entry: Option<&'static Entry<H>>,
    pub tail: &'static [Item<H>],
    /// The bytes of the items the layout alone decides (a length or count
    /// included; the head excluded).
    pub fixed: usize,
    /// Whether the items end in a text.
    pub string: bool,
}

impl<H> Layout<H> {
    /// Every item of the layout once, in wire order: its head, its items,
    /// those of one entry, its tail (what a check of every field's texts,
    /// names or definitions walks).
    pub fn all_items(&self) -> impl Iterator<Item = &'static Item<H>> + use<H> {
        let entry = self.entry.map(|e| e.items).unwrap_or_default();
        self.head
            .iter()
            .chain(self.items)
            .chain(entry)
            .chain(self.tail)
    }
}

/// The pieces of a layout's one-line text that are its own, not the wire's:
/// every literal, label and post its items write, and every name of an
/// enum the text names (of a raw byte, 0 to 255).
#[cfg(test)]
pub(crate) fn fixed_texts<H>(l: &Layout<H>) -> Vec<&'static str> {
    let mut out = Vec::new();
    for item in l.all_items() {
        match item.pre {
            Pre::Hidden => continue,
            Pre::Lit(s) => out.push(s),
            Pre::Label => out.push(item.label),
        }
        out.push(item.post);
        if let Prim::Int(_, Show::Enum(names)) = item.prim
            && names.text_named
        {
            out.extend((0..=255).filter_map(|raw| (names.name)(raw, &[])));
        }
    }
    out
}

/// No JSON escape in `s`: no control character (C1 included), `"` or `\\`
/// (a text whose pieces are all such needs no search for escapes).
#[cfg(test)]
pub(crate) fn json_plain(s: &str) -> bool {
    !s.contains(|c: char| c == '"' || c == '\\' || c.is_control())
}

/// The fixed size of `items`.
pub const fn size<H>(items: &[Item<H>]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < items.len() {
        n += items[i].prim.size();
        i += 1;
    }
    n
}

const fn ends_in_text<H>(items: &[Item<H>]) -> bool {
    match items.last() {
        Some(item) => matches!(item.prim, Prim::Text(_)),
        None => false,
    }
}

/// A layout of `items` after `head`, with `entry`'s entries, then `tail`.
pub const fn layout<H>(
    head: &'static [Item<H>],
    items: &'static [Item<H>],
    entry: Option<&'static Entry<H>>,
    tail: &'static [Item<H>],
) -> Layout<H> {
    Layout {
        head,
        items,
        entry,
        tail,
        fixed: size(items),
        string: ends_in_text(items),
    }
}

/// The entries of `node`, each of `items`.
pub const fn entry<H>(node: H, items: &'static [Item<H>]) -> Entry<H> {
    let mut numbered = false;
    let mut i = 0;
    while i < items.len() {
        numbered |= matches!(items[i].pre, Pre::Label);
        i += 1;
    }
    Entry {
        node,
        items,
        len: size(items),
        numbered,
    }
}

/// A protocol's table of layouts, one a row (lwar: a row a message type).
pub trait Table: 'static {
    type H: Handle;
    const ROWS: &'static [Layout<Self::H>];
}

/// A field's value as the layout reads it.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    U(u64),
    I(i64),
    F32(f32),
    F64(f64),
    Pair(u32, u32),
    /// `width` bits.
    Bits(u64, u8),
    Hex(u64),
    Enum(u64, Option<&'static str>, &'static Names),
    Text(&'a [u8], Quote),
    Bytes(&'a [u8]),
    Bool(bool),
}

/// What a walk of a layout tells, in wire order.
pub trait Visit<H: 'static> {
    /// One field over `len` bytes at `at` (from the start of the packet).
    fn item(&mut self, item: &'static Item<H>, at: usize, len: usize, v: Val<'_>);
    /// Whether to walk a counted layout's entries.
    fn wants_entries(&mut self, _e: &'static Entry<H>) -> bool {
        true
    }
    /// Entry `index` starts at `at`; its items follow, then [`Visit::leave`].
    fn enter(&mut self, e: &'static Entry<H>, index: u32, at: usize);
    /// Entry `index`, of which only `len` bytes are present (the last of a
    /// message cut short, [`walk_cut`]); [`Visit::enter`] unless the
    /// visitor shows spans.
    fn enter_part(&mut self, e: &'static Entry<H>, index: u32, at: usize, _len: usize) {
        self.enter(e, index, at);
    }
    fn leave(&mut self);
}

/// Where a walk is: its offset in the slice, the last count and length read.
#[derive(Debug, Default)]
pub struct Cursor {
    pub at: usize,
    pub count: usize,
    pub len: usize,
}

/// An integer of `int` at `r`, as unsigned bits or signed, if `b` has it.
#[cfg_attr(not(debug_assertions), inline(always))]
fn read_int(int: Int, order: ByteOrder, b: &[u8], r: usize) -> Option<Val<'static>> {
    Some(match int {
        Int::U8 => Val::U(u64::from(*b.get(r)?)),
        Int::U16 => Val::U(u64::from(order.u16(b, r)?)),
        Int::U32 => Val::U(u64::from(order.u32(b, r)?)),
        Int::U64 => Val::U(order.u64(b, r)?),
        Int::I16 => Val::I(i64::from(order.i16(b, r)?)),
        Int::I32 => Val::I(i64::from(order.i32(b, r)?)),
        Int::I64 => Val::I(order.i64(b, r)?),
    })
}

/// A read count or length: a negative one (which a checked view never
/// has) as none.
#[cfg_attr(not(debug_assertions), inline(always))]
fn as_len(v: Val<'_>) -> usize {
    match v {
        Val::U(n) => usize::try_from(n).unwrap_or(usize::MAX),
        Val::I(n) => usize::try_from(n).unwrap_or(0),
        _ => 0,
    }
}

/// Reads `item` at `c.at` in `b` (whose byte 0 is at `base` in the packet),
/// tells `v` and moves `c` past it; false where `b` ends before it or a
/// value with no name ends the walk. Always inlined (in release): the walks call it with
/// each item of a row as a constant, so that each row's walk is straight
/// code of its own, its primitives and texts folded.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn walk_one<H: 'static, V: Visit<H>>(
    item: &'static Item<H>,
    b: &[u8],
    base: usize,
    order: ByteOrder,
    c: &mut Cursor,
    v: &mut V,
) -> bool {
    let Some((len, val)) = read_prim(item, b, order, c) else {
        return false;
    };
    let at = match item.prim {
        Prim::Order => base,
        _ => base + c.at,
    };
    v.item(item, at, len, val);
    c.at += len;
    true
}

/// Reads `item`'s value at `c.at` in `b`: its length and value, a length
/// or count kept in `c`; none where `b` ends before it or a value with no
/// name ends the walk. Inlined into [`walk_one`] (in release), for the same
/// reason.
#[cfg_attr(not(debug_assertions), inline(always))]
fn read_prim<'b, H: 'static>(
    item: &'static Item<H>,
    b: &'b [u8],
    order: ByteOrder,
    c: &mut Cursor,
) -> Option<(usize, Val<'b>)> {
    let r = c.at;
    Some(match item.prim {
        Prim::Int(Int::U8, Show::Dec | Show::Bits) => {
            let &x = b.get(r)?;
            let x = u64::from(x);
            match item.prim {
                Prim::Int(_, Show::Bits) => (1, Val::Bits(x, 8)),
                _ => (1, Val::U(x)),
            }
        }
        Prim::Int(int, show) => {
            let n = read_int(int, order, b, r)?;
            let val = match (show, n) {
                (Show::Dec, n) => n,
                (Show::Hex, Val::U(n)) => Val::Hex(n),
                (Show::Bits, Val::U(n)) => Val::Bits(n, (int.size() * 8) as u8),
                (Show::Enum(names), Val::U(n)) => {
                    let name = (names.name)(n, b);
                    if names.known && name.is_none() {
                        return None;
                    }
                    Val::Enum(n, name, names)
                }
                (_, n) => n,
            };
            (int.size(), val)
        }
        Prim::Len(int) | Prim::Count(int) => {
            let n = read_int(int, order, b, r)?;
            if matches!(item.prim, Prim::Count(_)) {
                c.count = as_len(n);
            } else {
                c.len = as_len(n);
            }
            (int.size(), n)
        }
        Prim::F32 => match order.f32(b, r) {
            Some(x) => (4, Val::F32(x)),
            None => return None,
        },
        Prim::F64 => match order.f64(b, r) {
            Some(x) => (8, Val::F64(x)),
            None => return None,
        },
        Prim::Pair16 => match (order.u16(b, r), order.u16(b, r + 2)) {
            (Some(g), Some(i)) => (4, Val::Pair(u32::from(g), u32::from(i))),
            _ => return None,
        },
        Prim::Text(q) => {
            let n = c.len;
            let s = b.get(r..r.saturating_add(n))?;
            (n, Val::Text(s, q))
        }
        Prim::Bytes => {
            let n = c.len;
            let s = b.get(r..r.saturating_add(n))?;
            (n, Val::Bytes(s))
        }
        Prim::Rest => {
            let s = b.get(r..).unwrap_or_default();
            (s.len(), Val::Bytes(s))
        }
        Prim::Padded(n) => {
            let s = b.get(r..r.saturating_add(n))?;
            let text = match s.iter().position(|&c| c == 0) {
                Some(end) => s.get(..end).unwrap_or(s),
                None => s,
            };
            (n, Val::Text(text, Quote::Value))
        }
        Prim::Order => (
            0,
            Val::Enum(
                u64::from(order == ByteOrder::Little),
                Some(order.name()),
                &ORDER_NAMES,
            ),
        ),
        Prim::Flag => (0, Val::Bool(true)),
    })
}

/// The names of [`Prim::Order`]'s values.
static ORDER_NAMES: Names = Names {
    name: |raw, _| {
        Some(if raw == 0 {
            "big-endian"
        } else {
            "little-endian"
        })
    },
    known: false,
    tree_named: true,
    text_named: false,
};

/// Walks `items` (a header's) from `c.at` with a plain loop: for what is
/// walked rarely, or too short for its code to matter.
pub fn walk_items<H: 'static, V: Visit<H>>(
    items: &'static [Item<H>],
    b: &[u8],
    base: usize,
    order: ByteOrder,
    c: &mut Cursor,
    v: &mut V,
) -> bool {
    for item in items {
        if !walk_one(item, b, base, order, c, v) {
            return false;
        }
    }
    true
}

/// Walks `l` over `b` (at `base` in the packet), which may end before the
/// layout does, with plain loops: every item whose bytes are all present,
/// up to the first that is not, and the entries present, the last perhaps
/// cut short ([`Visit::enter_part`], with the items it holds). For a
/// message cut short (the fields of a truncated packet before its error):
/// [`walk_row`] walks a whole one.
pub fn walk_cut<H: 'static, V: Visit<H>>(
    l: &'static Layout<H>,
    b: &[u8],
    base: usize,
    order: ByteOrder,
    v: &mut V,
) {
    let c = &mut Cursor::default();
    if !walk_items(l.head, b, base, order, c, v) || !walk_items(l.items, b, base, order, c, v) {
        return;
    }
    if let Some(e) = l.entry {
        if !v.wants_entries(e) {
            return;
        }
        for i in 0..c.count {
            let rest = b.get(c.at..).unwrap_or_default();
            if rest.is_empty() {
                return;
            }
            let entry = rest.get(..e.len).unwrap_or(rest);
            let at = base + c.at;
            v.enter_part(e, i as u32, at, entry.len());
            walk_items(e.items, entry, at, order, &mut Cursor::default(), v);
            v.leave();
            if entry.len() < e.len {
                return;
            }
            c.at += e.len;
        }
    }
    walk_items(l.tail, b, base, order, c, v);
}

/// Which part of a row.
#[derive(Clone, Copy)]
#[doc(hidden)]
pub enum Part {
    Head,
    Items,
    Entry,
    Tail,
}

/// The `j`-th item of `part` of row `r`, if it has one (for the walk's
/// constants).
#[doc(hidden)]
pub const fn nth<H>(
    rows: &'static [Layout<H>],
    r: usize,
    part: Part,
    j: usize,
) -> Option<&'static Item<H>> {
    if r >= rows.len() {
        return None;
    }
    let l = &rows[r];
    let items = match part {
        Part::Head => l.head,
        Part::Items => l.items,
        Part::Tail => l.tail,
        Part::Entry => match l.entry {
            Some(e) => e.items,
            None => &[],
        },
    };
    if j < items.len() {
        Some(&items[j])
    } else {
        None
    }
}

/// Row `r`, if the table has it.
#[doc(hidden)]
pub const fn row<H>(rows: &'static [Layout<H>], r: usize) -> Option<&'static Layout<H>> {
    if r < rows.len() { Some(&rows[r]) } else { None }
}

/// The bytes row `r` needs before any length is read: its head and items.
#[doc(hidden)]
pub const fn min_len<H>(rows: &'static [Layout<H>], r: usize) -> usize {
    match row(rows, r) {
        Some(l) => size(l.head) + l.fixed,
        None => 0,
    }
}

/// The length of row `r`'s entries, 0 if it has none.
#[doc(hidden)]
pub const fn entry_len<H>(rows: &'static [Layout<H>], r: usize) -> usize {
    match row(rows, r) {
        Some(Layout { entry: Some(e), .. }) => e.len,
        _ => 0,
    }
}

/// Walks `part` of row `$r` of `$t`'s table item by item, each a constant
/// (up to 16 items a part); `break 'row` where an item ends the walk.
macro_rules! each_item {
    ($t:ty, $r:expr, $part:expr, $b:expr, $base:expr, $order:expr, $c:expr, $v:expr) => {
        each_item!(@ $t, $r, $part, $b, $base, $order, $c, $v; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $t:ty, $r:expr, $part:expr, $b:expr, $base:expr, $order:expr, $c:expr, $v:expr; $($j:literal)*) => {
        $(
            if let Some(item) = const { nth(<$t>::ROWS, $r, $part, $j) }
                && !walk_one(item, $b, $base, $order, $c, $v)
            {
                return;
            }
        )*
    };
}

/// Walks row `R` of table `T` over `b` (the message's bytes, at `base` in
/// the packet): its head, its items, its entries (each read from a slice of
/// its own length, so that every offset and bound is a constant), its tail.
/// Always inlined, the row a constant: straight code for each row (not in
/// a debug build, where the inlined rows' locals would fill the stack).
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn walk_row<T: Table, const R: usize, V: Visit<T::H>>(
    b: &[u8],
    base: usize,
    order: ByteOrder,
    v: &mut V,
) {
    let Some(l) = (const { row(T::ROWS, R) }) else {
        return;
    };
    if b.len() < const { min_len(T::ROWS, R) } {
        return;
    }
    let c = &mut Cursor::default();
    each_item!(T, R, Part::Head, b, base, order, c, v);
    each_item!(T, R, Part::Items, b, base, order, c, v);
    if let Some(e) = l.entry
        && v.wants_entries(e)
    {
        for i in 0..c.count {
            let Some(entry) = b.get(c.at..c.at + const { entry_len(T::ROWS, R) }) else {
                break;
            };
            let entry_base = base + c.at;
            v.enter(e, i as u32, entry_base);
            let within = &mut Cursor::default();
            walk_entry::<T, R, V>(entry, entry_base, order, within, v);
            v.leave();
            c.at += e.len;
        }
    } else if let Some(e) = l.entry {
        c.at += c.count.saturating_mul(e.len);
    }
    each_item!(T, R, Part::Tail, b, base, order, c, v);
}

#[cfg_attr(not(debug_assertions), inline(always))]
fn walk_entry<T: Table, const R: usize, V: Visit<T::H>>(
    b: &[u8],
    base: usize,
    order: ByteOrder,
    c: &mut Cursor,
    v: &mut V,
) {
    each_item!(T, R, Part::Entry, b, base, order, c, v);
}

/// Walks row `row` of `T`: one arm per row (up to 32), each with its row as
/// a constant ([`walk_row`]). Always inlined (in release) into its caller (each
/// visitor's one place that walks), as a hand-written walk would be: the
/// text's pieces are then copied with their lengths known.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn walk_table<T: Table, V: Visit<T::H>>(
    row: usize,
    b: &[u8],
    base: usize,
    order: ByteOrder,
    v: &mut V,
) {
    macro_rules! rows {
        ($($r:literal)*) => {
            match row {
                $( $r if $r < T::ROWS.len() => walk_row::<T, $r, V>(b, base, order, v), )*
                _ => {}
            }
        };
    }
    rows!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}

/// The item of `items` (laid out from `at`) that holds the byte at `offset`,
/// with where it starts.
fn item_in<H>(
    items: &'static [Item<H>],
    mut at: usize,
    offset: usize,
) -> Option<(usize, &'static Item<H>)> {
    for item in items {
        let len = item.prim.size();
        if at <= offset && offset < at + len {
            return Some((at, item));
        }
        at += len;
    }
    None
}

/// The item of a message of layout `l` that holds the byte at `offset`
/// (from the start of its head), with where it starts: one of its head or
/// items, or of the entry the offset falls in; `None` past them (a text,
/// the tail). A truncation names the field its first missing byte belongs
/// to.
pub fn item_at<H>(l: &'static Layout<H>, offset: usize) -> Option<(usize, &'static Item<H>)> {
    let head = size(l.head);
    if let Some(hit) = item_in(l.head, 0, offset).or_else(|| item_in(l.items, head, offset)) {
        return Some(hit);
    }
    let e = l.entry?;
    let start = head + l.fixed;
    let rel = offset.checked_sub(start)?;
    item_in(e.items, start + rel - rel % e.len, offset)
}

/// Every definition a layout may hold, for [`FieldSink::wants_any`].
pub fn layout_defs<H: Handle>(l: &Layout<H>, each: &mut dyn FnMut(&'static FieldDef)) {
    if let Some(e) = l.entry {
        each(e.node.def());
    }
    for item in l.all_items() {
        each(item.def.def());
    }
}

/// An entry's node and fields.
pub fn entry_defs<H: Handle>(e: &Entry<H>, each: &mut dyn FnMut(&'static FieldDef)) {
    each(e.node.def());
    items_defs(e.items, each);
}

/// The definitions of `items`.
pub fn items_defs<H: Handle>(items: &[Item<H>], each: &mut dyn FnMut(&'static FieldDef)) {
    for item in items {
        each(item.def.def());
    }
}

/// A value as a registered field's.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn value(v: Val<'_>) -> Value<'_> {
    match v {
        Val::U(n) => Value::Unsigned(n),
        Val::I(n) => Value::Signed(n),
        Val::F32(x) => Value::Float(f64::from(x)),
        Val::F64(x) => Value::Float(x),
        Val::Pair(a, b) => Value::Pair(a, b),
        Val::Bits(raw, width) => Value::Bits { raw, width },
        Val::Hex(n) => Value::Hex(n),
        Val::Enum(raw, name, _) => Value::Enum { raw, name },
        Val::Text(s, _) => Value::Text(s),
        Val::Bytes(s) => Value::Bytes(s),
        Val::Bool(b) => Value::Bool(b),
    }
}

/// Hands a layout's fields to a [`FieldSink`]: the typed field walk. The
/// fields the sink does not take ([`FieldSink::wanted`], asked once) are
/// passed over without making their values.
pub struct ToSink<'s> {
    sink: &'s mut dyn FieldSink,
    wanted: FieldSet,
}

impl<'s> ToSink<'s> {
    /// The walk into `sink` of fields registered in `table`.
    pub fn new(sink: &'s mut dyn FieldSink, table: &'static [FieldDef]) -> ToSink<'s> {
        let wanted = sink.wanted(table);
        ToSink { sink, wanted }
    }
}

impl<H: Handle> Visit<H> for ToSink<'_> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn item(&mut self, item: &'static Item<H>, at: usize, len: usize, v: Val<'_>) {
        if !self.wanted.contains(item.def.index()) {
            return;
        }
        self.sink.field(Field {
            def: item.def.def(),
            index: item.index,
            offset: at,
            len,
            value: value(v),
        });
    }

    fn wants_entries(&mut self, e: &'static Entry<H>) -> bool {
        self.sink
            .wants_any(group_key(e), &|each| entry_defs(e, each))
    }

    fn enter(&mut self, e: &'static Entry<H>, index: u32, at: usize) {
        self.enter_part(e, index, at, e.len);
    }

    fn enter_part(&mut self, e: &'static Entry<H>, index: u32, at: usize, len: usize) {
        self.sink.enter(Field {
            def: e.node.def(),
            index: Some(index),
            offset: at,
            len,
            value: Value::None,
        });
    }

    fn leave(&mut self) {
        self.sink.leave();
    }
}

/// Text in double quotes as [`Quote::Debug`] writes it.
pub struct DebugQuoted<'a>(pub &'a [u8]);

impl fmt::Display for DebugQuoted<'_> {
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

/// Text as [`DebugQuoted`] writes it: printable ASCII with no `"` or `\`
/// (a player's name, most chat) copied as it is between its quotes, the
/// rest through `char::escape_debug` (`fmt`'s machinery, a character at a
/// time, was most of the cost of a text with a name).
#[cfg_attr(not(debug_assertions), inline(always))]
fn debug_quoted(f: &mut impl Out, s: &[u8]) -> fmt::Result {
    if s.iter()
        .all(|&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        f.s("\"")?;
        f.ascii(s)?;
        f.s("\"")
    } else {
        f.display(&DebugQuoted(s))
    }
}

/// `n` bits of `raw`.
#[cfg_attr(not(debug_assertions), inline(always))]
fn bits(f: &mut impl Out, raw: u64, width: u8) -> fmt::Result {
    match (width, u8::try_from(raw), u32::try_from(raw)) {
        (8, Ok(b), _) => bits8(f, b),
        (32, _, Ok(w)) => {
            for b in w.to_be_bytes() {
                bits8(f, b)?;
            }
            Ok(())
        }
        _ => f.bits(raw, width),
    }
}

/// `g:i`.
#[cfg_attr(not(debug_assertions), inline(always))]
fn pair(f: &mut impl Out, a: u32, b: u32) -> fmt::Result {
    f.int(a)?;
    f.labelled(":", b)
}

/// A value as the one-line text writes it.
#[cfg_attr(not(debug_assertions), inline(always))]
fn text_value(f: &mut impl Out, v: Val<'_>) -> fmt::Result {
    match v {
        Val::Enum(
            raw,
            name,
            Names {
                text_named: true, ..
            },
        ) => Value::Enum { raw, name }.write_text(f),
        Val::U(n) | Val::Hex(n) | Val::Enum(n, _, _) => f.int(n),
        Val::I(n) => f.int(n),
        // `Out::float`'s integer test here too, so that an integer (most
        // of Starstrike's positions) is written with the rest of this
        // inlined writer: through the call, Starstrike's JSON Lines cost
        // some 150 instructions a packet more.
        Val::F32(x) => f32_text(f, x),
        Val::F64(x) => f.float(x),
        Val::Pair(a, b) => pair(f, a, b),
        Val::Bits(raw, width) => bits(f, raw, width),
        Val::Text(s, Quote::Debug) => {
            f.wire_piece();
            debug_quoted(f, s)
        }
        Val::Text(s, Quote::Value) => {
            f.wire_piece();
            Value::Text(s).write_text(f)
        }
        Val::Bytes(s) => f.int(s.len()),
        Val::Bool(b) => f.s(if b { "true" } else { "false" }),
    }
}

/// An `f32` as the one-line text writes it: an integer below 2^24 as its
/// digits, inline (most of Starstrike's positions; through `Out::float`'s
/// call, its JSON Lines cost some 150 instructions a packet more), the
/// rest through [`Out::float`].
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn f32_text(f: &mut impl Out, x: f32) -> fmt::Result {
    match x.small_int() {
        Some(i) => f.int(i),
        None => f.float(x),
    }
}

/// A registered field's value as the one-line text writes it, for every
/// protocol: [`Value::write_text`], with [`f32_text`]'s integer test inline
/// for a float from the wire's `f32` (through the call, an integral float
/// cost some 40 instructions more).
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn value_text(f: &mut impl Out, v: &Value<'_>) -> fmt::Result {
    if let Value::Float(x) = *v
        && f64::from(x as f32) == x
        && let Some(i) = (x as f32).small_int()
    {
        return f.int(i);
    }
    v.write_text(f)
}

/// What the tree writes after a text that is not UTF-8 (its bytes escaped).
const NOT_UTF8: &str = " (not UTF-8)";

/// A value as a line of the tree writes it, for every protocol:
/// [`value_text`], and after a text that is not UTF-8, ` (not UTF-8)`.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn tree_value(f: &mut impl Out, v: &Value<'_>) -> fmt::Result {
    value_text(f, v)?;
    match *v {
        Value::Text(s) if std::str::from_utf8(s).is_err() => f.s(NOT_UTF8),
        _ => Ok(()),
    }
}

/// ` [e].`: what the one-line text writes before each field of entry (or
/// element) `e` (Starstrike's ` [0].entityId=`), for every protocol; its
/// bytes put together once an entry, copied before each of its fields.
#[derive(Debug, Clone, Copy, Default)]
pub struct EntryPrefix {
    bytes: [u8; 16],
    len: u8,
}

impl EntryPrefix {
    pub fn new(e: u32) -> EntryPrefix {
        let mut p = EntryPrefix::default();
        let mut digits = itoa::Buffer::new();
        let d = digits.format(e).as_bytes();
        let n = d.len() + 4;
        if let Some(all) = p.bytes.get_mut(..n) {
            all[..2].copy_from_slice(b" [");
            all[2..n - 2].copy_from_slice(d);
            all[n - 2..].copy_from_slice(b"].");
        }
        p.len = n as u8;
        p
    }

    /// ` [e].`
    pub fn bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }
}

/// The one-line text of a walk of registered fields (a described
/// protocol's, the built-in Vessel's): `name=value` of every leaf field in
/// wire order, a field's own elements `name[i]=value`, the fields of an
/// element of a repeated type `[e].name=value`; values by [`value_text`].
pub struct FieldLine<'o, O> {
    f: &'o mut O,
    result: fmt::Result,
    first: bool,
    /// The depth of open nodes, and that of the innermost element of a
    /// repeated type open: its fields are written `[e].name`.
    depth: u32,
    element: Option<u32>,
    /// ` [e].` of the innermost element open.
    prefix: EntryPrefix,
    /// Fields of no bytes are left out (a protobuf field not on the wire,
    /// read as its default: the line shows what the wire holds).
    skip_empty: bool,
    /// Each registered field's ` label=`, by its index
    /// ([`FieldLine::field_at`]); may be empty.
    labels: &'static [&'static str],
}

impl<'o, O: Out> FieldLine<'o, O> {
    pub fn new(f: &'o mut O, skip_empty: bool, labels: &'static [&'static str]) -> Self {
        FieldLine {
            f,
            result: Ok(()),
            first: true,
            depth: 0,
            element: None,
            prefix: EntryPrefix::default(),
            skip_empty,
            labels,
        }
    }

    /// Whether every piece was written.
    pub fn result(&self) -> fmt::Result {
        self.result
    }

    /// Where the line goes (a sink that marks places in it).
    pub fn out(&mut self) -> &mut O {
        self.f
    }

    /// Whether `field` is left out of the line.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn skips(&self, field: &Field<'_>) -> bool {
        self.result.is_err()
            || field.def.ty == FieldType::Node
            || (self.skip_empty && field.len == 0)
    }

    /// `name=value`, `name[i]=value`, or `[e].name=value` in element `e`.
    fn write(&mut self, field: &Field<'_>) -> fmt::Result {
        let skip = usize::from(std::mem::replace(&mut self.first, false));
        let f = &mut *self.f;
        match (field.index, self.element) {
            (None, Some(_)) => {
                f.ascii(self.prefix.bytes().get(skip..).unwrap_or_default())?;
                f.s(field.def.label)?;
            }
            (index, _) => {
                if skip == 0 {
                    f.s(" ")?;
                }
                indexed_label(f, field.def.label, index)?;
            }
        }
        f.s("=")?;
        value_text(f, &field.value)
    }

    /// [`FieldSink::field`] for the registered field of index `at`, its
    /// ` label=` written at once from [`FieldLine`]'s labels (and in an
    /// element, its prefix and label: not a field's own elements,
    /// `name[i]=`).
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn field_at(&mut self, at: u16, field: Field<'_>) {
        let label = self.labels.get(usize::from(at));
        let (Some(label), None) = (label, field.index) else {
            return FieldSink::field(self, field);
        };
        if self.skips(&field) {
            return;
        }
        let skip = usize::from(std::mem::replace(&mut self.first, false));
        let f = &mut *self.f;
        let named = match self.element {
            None => f.s(label.get(skip..).unwrap_or_default()),
            Some(_) => f
                .ascii(self.prefix.bytes().get(skip..).unwrap_or_default())
                .and_then(|()| f.s(label.get(1..).unwrap_or_default())),
        };
        self.result = named.and_then(|()| value_text(f, &field.value));
    }
}

impl<O: Out> FieldSink for FieldLine<'_, O> {
    fn field(&mut self, field: Field<'_>) {
        if self.skips(&field) {
            return;
        }
        self.result = self.write(&field);
    }

    fn enter(&mut self, node: Field<'_>) {
        self.depth += 1;
        if let Some(i) = node.index {
            self.element = Some(self.depth);
            self.prefix = EntryPrefix::new(i);
        }
    }

    fn leave(&mut self) {
        if self.element == Some(self.depth) {
            self.element = None;
        }
        self.depth = self.depth.saturating_sub(1);
    }
}

/// A line of a [`FieldTree`], its texts in the tree's bytes.
#[derive(Clone)]
struct TreeLine {
    /// The registered label, or an element's `label[i]` written in the
    /// tree's bytes.
    label: Result<&'static str, Range<usize>>,
    value: Range<usize>,
    span: Range<usize>,
    depth: u8,
}

/// The `-V` tree of a walk of registered fields (a described protocol's,
/// the built-in Vessel's), held until the walk ends: a node whose span is
/// not known when it opens (a described type of no fixed size) reaches to
/// the end of what it holds, known once its fields are walked. Values by
/// [`tree_value`]. A thread's own, reused from packet to packet
/// ([`FieldTree::with`]), so `-V` allocates nothing per packet.
///
/// Every piece written into its bytes is a `str` or ASCII, so they are
/// UTF-8; a label is the registered field's own, not copied, but for an
/// element's index.
#[derive(Default)]
pub struct FieldTree {
    text: Vec<u8>,
    lines: Vec<TreeLine>,
    open: Vec<usize>,
}

thread_local! {
    static FIELD_TREE: RefCell<FieldTree> = RefCell::new(FieldTree::default());
}

impl FieldTree {
    /// Runs `f` with this thread's tree, emptied (a fresh one where a
    /// callback walks another tree meanwhile).
    pub fn with<R>(f: impl FnOnce(&mut FieldTree) -> R) -> R {
        reused(&FIELD_TREE, |t| {
            t.text.clear();
            t.lines.clear();
            t.open.clear();
            f(t)
        })
    }

    /// The innermost node open reaches at least to `end` (a node cut
    /// short: the bytes present).
    pub fn reach(&mut self, end: usize) {
        if let Some(n) = self.open.last().and_then(|&o| self.lines.get_mut(o)) {
            n.span.end = n.span.end.max(end);
        }
    }

    /// Hands every line to `f`.
    pub fn emit(&self, f: &mut dyn FnMut(TreeRef<'_>)) {
        // UTF-8 (see the type's docs): checked once for the packet.
        let text = std::str::from_utf8(&self.text).unwrap_or_default();
        emit_lines(text, &self.lines, &[], f);
    }

    /// The lines written so far (the index the next field's line takes).
    pub fn line_count(&self) -> usize {
        self.lines.len()
    }
}

/// Hands every line of `lines` (their texts in `text`) to `f`, the value
/// of each line `fresh` names (by index, in order) replaced by its text.
fn emit_lines(
    text: &str,
    lines: &[TreeLine],
    fresh: &[(usize, &str)],
    f: &mut dyn FnMut(TreeRef<'_>),
) {
    let at = |r: &Range<usize>| text.get(r.clone()).unwrap_or_default();
    // The line of the next value written fresh (none: past the last line).
    let mut next = fresh.iter();
    let mut fresh_at = next.next().copied().unwrap_or((usize::MAX, ""));
    for (i, line) in lines.iter().enumerate() {
        let value = if i == fresh_at.0 {
            let v = fresh_at.1;
            fresh_at = next.next().copied().unwrap_or((usize::MAX, ""));
            v
        } else {
            at(&line.value)
        };
        f(TreeRef::Field {
            label: match &line.label {
                Ok(label) => label,
                Err(r) => at(r),
            },
            value,
            span: line.span.clone(),
            depth: line.depth,
        });
    }
}

/// A [`FieldTree`] kept to be handed out again ([`KeptTree::emit_fresh`]):
/// its room taken once, the first time one is kept
/// ([`KeptTree::keep`]), never grown, so that keeping and handing out
/// allocate nothing per packet.
#[derive(Default)]
pub struct KeptTree {
    /// UTF-8, checked when kept.
    text: String,
    lines: Vec<TreeLine>,
}

impl KeptTree {
    /// Keeps a copy of `tree` if its lines and its bytes fit in `lines`
    /// and `bytes` (false, and nothing kept, where they do not).
    pub fn keep(&mut self, tree: &FieldTree, lines: usize, bytes: usize) -> bool {
        self.text.clear();
        self.lines.clear();
        let Ok(text) = std::str::from_utf8(&tree.text) else {
            return false;
        };
        if tree.lines.len() > lines || text.len() > bytes {
            return false;
        }
        if self.lines.capacity() < lines {
            self.lines.reserve_exact(lines);
        }
        if self.text.capacity() < bytes {
            self.text.reserve_exact(bytes);
        }
        self.text.push_str(text);
        self.lines.extend_from_slice(&tree.lines);
        true
    }

    /// Hands every line to `f` as [`FieldTree::emit`] did when it was
    /// kept, the value of each line `fresh` names (by index, in order)
    /// replaced by its text.
    pub fn emit_fresh(&self, fresh: &[(usize, &str)], f: &mut dyn FnMut(TreeRef<'_>)) {
        emit_lines(&self.text, &self.lines, fresh, f);
    }
}

impl FieldSink for FieldTree {
    fn field(&mut self, field: Field<'_>) {
        let label = match field.index {
            None => Ok(field.def.label),
            Some(_) => {
                let start = self.text.len();
                let _ = indexed_label(&mut self.text, field.def.label, field.index);
                Err(start..self.text.len())
            }
        };
        let start = self.text.len();
        if field.def.ty != FieldType::Node {
            let _ = tree_value(&mut self.text, &field.value);
        }
        let value = start..self.text.len();
        // The innermost open node reaches at least to its field's end; it
        // passes its own end to its parent when it closes.
        let end = field.offset + field.len;
        if let Some(n) = self.open.last().and_then(|&o| self.lines.get_mut(o)) {
            n.span.end = n.span.end.max(end);
        }
        self.lines.push(TreeLine {
            label,
            value,
            span: field.span(),
            depth: u8::try_from(self.open.len()).unwrap_or(u8::MAX),
        });
    }

    fn enter(&mut self, node: Field<'_>) {
        self.field(node);
        self.open.push(self.lines.len() - 1);
    }

    fn leave(&mut self) {
        let end = self
            .open
            .pop()
            .and_then(|o| self.lines.get(o))
            .map(|n| n.span.end);
        if let (Some(end), Some(n)) = (end, self.open.last().and_then(|&o| self.lines.get_mut(o))) {
            n.span.end = n.span.end.max(end);
        }
    }
}

/// Writes the text's pieces of a layout's fields: each field with a
/// [`Pre`], its piece or its label, then its value, then its `post`.
pub struct TextOut<'f, O> {
    pub f: &'f mut O,
    pub r: fmt::Result,
    /// The entry whose fields come, if its fields are numbered
    /// ([`Entry::numbered`]): its index, and ` [e].` when `e` is a single
    /// digit (a snapshot's usual few), written as one piece of five bytes.
    entry: Option<(u32, Option<[u8; 5]>)>,
}

impl<'f, O: Out> TextOut<'f, O> {
    pub fn new(f: &'f mut O) -> Self {
        TextOut {
            f,
            r: Ok(()),
            entry: None,
        }
    }
}

/// ` label=`, ` label[i]=`, or ` [e].label=` in entry `e` ([`Pre::Label`]).
#[cfg_attr(not(debug_assertions), inline(always))]
fn label_pre<H>(
    f: &mut impl Out,
    entry: Option<(u32, Option<[u8; 5]>)>,
    item: &'static Item<H>,
) -> fmt::Result {
    match entry {
        Some((_, Some(prefix))) => {
            f.ascii(&prefix)?;
            f.s(item.label)?;
        }
        Some((e, None)) => {
            f.ascii(EntryPrefix::new(e).bytes())?;
            f.s(item.label)?;
        }
        None => {
            f.s(" ")?;
            indexed_label(f, item.label, item.index)?;
        }
    }
    f.s("=")
}

impl<H: 'static, O: Out> Visit<H> for TextOut<'_, O> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn item(&mut self, item: &'static Item<H>, _at: usize, _len: usize, v: Val<'_>) {
        if self.r.is_err() {
            return;
        }
        let pre = match item.pre {
            Pre::Hidden => return,
            Pre::Lit(pre) => self.f.s(pre),
            Pre::Label => label_pre(self.f, self.entry, item),
        };
        self.r = pre.and_then(|()| text_value(self.f, v));
        if self.r.is_ok() && !item.post.is_empty() {
            self.r = self.f.s(item.post);
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn enter(&mut self, e: &'static Entry<H>, index: u32, _at: usize) {
        if e.numbered {
            let digit = u8::try_from(index).ok().filter(|&i| i < 10);
            self.entry = Some((index, digit.map(|d| [b' ', b'[', b'0' + d, b']', b'.'])));
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn leave(&mut self) {
        self.entry = None;
    }
}

/// What receives each line of the tree: its label, its value, its byte span
/// and depth (the texts are valid during the call only).
pub type EmitField<'e> = dyn FnMut(&str, &str, Range<usize>, u8) + 'e;

/// Writes a layout's fields as the tree's lines, their texts in reused
/// buffers (integers through `itoa`: `fmt`'s machinery was most of `-V`'s
/// time once the allocations were gone).
pub struct TreeOut<'f, 'e> {
    pub emit: &'f mut EmitField<'e>,
    pub bufs: &'f mut TreeBufs,
    pub depth: u8,
}

impl TreeOut<'_, '_> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn line(&mut self, label: &'static str, index: Option<u32>, span: Range<usize>) {
        if index.is_none() {
            return (self.emit)(label, &self.bufs.value, span, self.depth);
        }
        self.bufs.label.clear();
        let _ = indexed_label(&mut self.bufs.label, label, index);
        (self.emit)(&self.bufs.label, &self.bufs.value, span, self.depth);
    }
}

impl<H: Handle> Visit<H> for TreeOut<'_, '_> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn item(&mut self, item: &'static Item<H>, at: usize, len: usize, v: Val<'_>) {
        let value = &mut self.bufs.value;
        value.clear();
        let _ = match v {
            Val::U(n)
            | Val::Enum(
                n,
                _,
                Names {
                    tree_named: false, ..
                },
            ) => value.int(n),
            Val::I(n) => value.int(n),
            Val::Pair(a, b) => pair(value, a, b),
            Val::Bits(raw, width) => bits(value, raw, width),
            Val::Text(s, Quote::Debug) => {
                let note = if std::str::from_utf8(s).is_ok() {
                    ""
                } else {
                    NOT_UTF8
                };
                write!(value, "{}{note}", DebugQuoted(s))
            }
            v => tree_value(value, &self::value(v)),
        };
        self.line(item.label, item.index, at..at + len);
    }

    fn enter(&mut self, e: &'static Entry<H>, index: u32, at: usize) {
        self.enter_part(e, index, at, e.len);
    }

    fn enter_part(&mut self, e: &'static Entry<H>, index: u32, at: usize, len: usize) {
        self.bufs.value.clear();
        self.line(e.node.def().label, Some(index), at..at + len);
        self.depth += 1;
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::field::FieldType;

    #[derive(Debug, Clone, Copy)]
    enum T {
        Name,
        Count,
        Node,
        X,
    }

    const fn def(name: &'static str, ty: FieldType) -> FieldDef {
        FieldDef {
            name,
            label: name,
            ty,
            doc: "",
        }
    }

    static DEFS: [FieldDef; 4] = [
        def("name", FieldType::Text),
        def("n", FieldType::Unsigned),
        def("e", FieldType::Node),
        def("x", FieldType::Unsigned),
    ];

    impl Handle for T {
        fn def(self) -> &'static FieldDef {
            &DEFS[self as usize]
        }
        fn index(self) -> u16 {
            self as u16
        }
    }

    static E: Entry<T> = entry(
        T::Node,
        &[hidden(T::X, Prim::Int(Int::U16, Show::Dec), "x")],
    );
    static L: Layout<T> = layout(
        &[],
        &[
            hidden(T::Name, Prim::Padded(4), "name"),
            hidden(T::Count, Prim::Count(Int::U8), "n"),
        ],
        Some(&E),
        &[],
    );

    struct Log(Vec<String>);

    impl Visit<T> for Log {
        fn item(&mut self, item: &'static Item<T>, at: usize, len: usize, v: Val<'_>) {
            self.0
                .push(format!("{}@{at}+{len}={}", item.label, value(v)));
        }
        fn enter(&mut self, _e: &'static Entry<T>, index: u32, at: usize) {
            self.0.push(format!("[{index}]@{at}"));
        }
        fn enter_part(&mut self, _e: &'static Entry<T>, index: u32, at: usize, len: usize) {
            self.0.push(format!("[{index}]@{at}+{len}"));
        }
        fn leave(&mut self) {
            self.0.push("]".into());
        }
    }

    /// A sink with a `wanted` set gets exactly those of the whole walk's
    /// fields (the nodes of entries still entered), the others passed over.
    #[test]
    fn a_walk_into_a_sink_passes_over_the_fields_it_does_not_want() {
        struct Sink(Vec<String>, crate::engine::field::FieldSet);
        impl FieldSink for Sink {
            fn field(&mut self, f: Field<'_>) {
                self.0
                    .push(format!("{}@{}={}", f.def.name, f.offset, f.value));
            }
            fn wanted(&mut self, _table: &'static [FieldDef]) -> FieldSet {
                self.1
            }
        }
        let b = [b'a', b'b', 0, 0, 2, 0, 7, 0, 9];
        let walk = |wanted| {
            let mut sink = Sink(Vec::new(), wanted);
            walk_cut(
                &L,
                &b,
                12,
                ByteOrder::Big,
                &mut ToSink::new(&mut sink, &DEFS),
            );
            sink.0
        };
        let all = walk(FieldSet::ALL);
        assert_eq!(
            all,
            [
                "name@12=\"ab\"",
                "n@16=2",
                "e@17=",
                "x@17=7",
                "e@19=",
                "x@19=9"
            ]
        );
        let x = FieldSet::only(&DEFS, &DEFS[T::X as usize]);
        let only: Vec<_> = (all.iter())
            .filter(|f| f.starts_with("e@") || f.starts_with("x@"))
            .cloned()
            .collect();
        assert_eq!(walk(x), only);
        assert_eq!(walk(FieldSet::NONE), ["e@17=", "e@19="]);
    }

    /// A padded text is the bytes before its first NUL; a walk of bytes
    /// cut short gives every item present and the entry cut short with
    /// the bytes it has.
    #[test]
    fn a_cut_walk_gives_what_is_present() {
        let b = [b'a', b'b', 0, 0, 3, 0, 7, 0];
        let mut log = Log(Vec::new());
        walk_cut(&L, &b, 12, ByteOrder::Big, &mut log);
        assert_eq!(
            log.0,
            [
                "name@12+4=\"ab\"",
                "n@16+1=3",
                "[0]@17+2",
                "x@17+2=7",
                "]",
                "[1]@19+1",
                "]"
            ]
        );
        let mut log = Log(Vec::new());
        walk_cut(&L, &b[..3], 12, ByteOrder::Big, &mut log);
        assert!(log.0.is_empty(), "{:?}", log.0);
        // A u8 past the end ends the walk, as every primitive does.
        let mut log = Log(Vec::new());
        walk_cut(&L, &b[..4], 12, ByteOrder::Big, &mut log);
        assert_eq!(log.0, ["name@12+4=\"ab\""]);
    }

    /// A layout's items: head, items, one entry's, tail.
    #[test]
    fn all_items_in_wire_order() {
        static HEAD: [Item<T>; 1] = [hidden(T::X, Prim::Int(Int::U8, Show::Dec), "h")];
        static TAIL: [Item<T>; 1] = [hidden(T::X, Prim::Rest, "t")];
        static FULL: Layout<T> = layout(&HEAD, L.items, Some(&E), &TAIL);
        let labels: Vec<_> = FULL.all_items().map(|i| i.label).collect();
        assert_eq!(labels, ["h", "name", "n", "x", "t"]);
        assert_eq!(L.all_items().count(), 3);
    }

    #[test]
    fn fixed_texts_and_json_plain() {
        static ITEMS: [Item<T>; 2] = [
            it(T::X, Prim::Int(Int::U8, Show::Dec), "x", " x=(").then(")"),
            hidden(T::X, Prim::Int(Int::U8, Show::Dec), "y"),
        ];
        static L2: Layout<T> = layout(&[], &ITEMS, Some(&E), &[]);
        assert_eq!(fixed_texts(&L2), [" x=(", ")"]);
        assert!(!json_plain("a\u{85}b") && !json_plain("\"") && json_plain("[0].x="));
    }

    /// The item of a byte: an item's, an entry's (the second entry's
    /// `x` at 19), none past the fixed part.
    #[test]
    fn the_item_of_a_byte() {
        let label = |o| item_at(&L, o).map(|(at, i)| (at, i.label));
        assert_eq!(label(2), Some((0, "name")));
        assert_eq!(label(4), Some((4, "n")));
        assert_eq!(label(8), Some((7, "x")));
        static EMPTY: Layout<T> = layout(&[], &[], None, &[]);
        assert!(item_at(&EMPTY, 0).is_none());
    }

    /// A registered value's text with the integer test inline is its own
    /// `write_text`'s; the tree's adds ` (not UTF-8)` after a text that is
    /// not UTF-8, and only there.
    #[test]
    fn a_values_text_with_the_integer_test_inline_is_its_own() {
        let mut floats: Vec<f64> = [0.0f32, -0.0, 1.0, -1.0, 0.5, 16_777_215.0, 16_777_216.0]
            .into_iter()
            .chain([
                f32::MAX,
                f32::MIN,
                f32::NAN,
                f32::INFINITY,
                f32::NEG_INFINITY,
            ])
            .chain((0..100_000u32).map(|i| f32::from_bits(i.wrapping_mul(42_949))))
            .chain((-3000..3000).map(|i| i as f32 * 0.25))
            .map(f64::from)
            .collect();
        floats.extend([0.1, 1e300, -2.5e-10, 16_777_217.0, 9_007_199_254_740_993.0]);
        for x in floats {
            let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
            value_text(&mut a, &Value::Float(x)).unwrap();
            Value::Float(x).write_text(&mut b).unwrap();
            tree_value(&mut c, &Value::Float(x)).unwrap();
            assert_eq!(a, b, "{x:?}");
            assert_eq!(a, c, "{x:?}");
        }
        for v in [
            Value::Unsigned(0),
            Value::Unsigned(u64::MAX),
            Value::Signed(i64::MIN),
            Value::Signed(-7),
            Value::Hex(0x5354_5253),
            Value::Enum {
                raw: 2,
                name: Some("two"),
            },
        ] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            value_text(&mut a, &v).unwrap();
            v.write_text(&mut b).unwrap();
            assert_eq!(a, b, "{v:?}");
        }
        let tree = |v: Value<'_>| {
            let mut s = String::new();
            tree_value(&mut s, &v).unwrap();
            s
        };
        assert_eq!(tree(Value::Text(b"ok")), "\"ok\"");
        assert_eq!(tree(Value::Text(b"a\xffb")), "\"a\\xffb\" (not UTF-8)");
        assert_eq!(tree(Value::Bytes(b"\xff")), "ff");
    }

    /// ` [e].` for any entry, and the line of a walk of registered fields:
    /// no space before the first piece, an element's fields after its
    /// prefix, a field's own elements indexed, nodes and (when asked)
    /// fields of no bytes left out.
    #[test]
    fn a_field_line_writes_each_piece_once() {
        for e in [0, 7, 10, 123, u32::MAX] {
            assert_eq!(EntryPrefix::new(e).bytes(), format!(" [{e}].").as_bytes());
        }
        let field = |def: &'static FieldDef, index, len, value| Field {
            def,
            index,
            offset: 0,
            len,
            value,
        };
        let (x, node) = (&DEFS[T::X as usize], &DEFS[T::Node as usize]);
        for skip_empty in [false, true] {
            let mut out = String::new();
            let mut line = FieldLine::new(&mut out, skip_empty, &[]);
            line.field(field(x, None, 1, Value::Unsigned(1)));
            line.field(field(x, Some(2), 1, Value::Unsigned(2)));
            line.field(field(x, None, 0, Value::Unsigned(0)));
            line.enter(field(node, Some(12), 2, Value::None));
            line.field(field(x, None, 1, Value::Float(0.5)));
            line.leave();
            line.field(field(node, None, 1, Value::None));
            line.result().unwrap();
            let empty = if skip_empty { "" } else { " x=0" };
            assert_eq!(out, format!("x=1 x[2]=2{empty} [12].x=0.5"));
        }
    }

    #[test]
    fn bits_are_written_as_fmt_writes_them() {
        for b in 0..=255u8 {
            let mut out = Vec::new();
            bits(&mut out, u64::from(b), 8).unwrap();
            assert_eq!(out, format!("{b:08b}").as_bytes());
        }
    }

    /// The text's own writers of floats and bits (an integer float, a
    /// byte or a word of bits, without the calls) write what `Display`
    /// writes for the field's value.
    #[test]
    fn floats_and_bits_are_written_as_display_writes_them() {
        let mut floats = vec![
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            651.0,
            -651.0,
            0.5,
            -0.7,
            16_777_215.0,
            -16_777_215.0,
            16_777_216.0,
            -16_777_216.0,
            16_777_218.0,
            3e10,
            1e-7,
            f32::MAX,
            f32::MIN,
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        floats.extend((0..100_000u32).map(|i| f32::from_bits(i.wrapping_mul(42_949))));
        floats.extend((-3000..3000).map(|i| i as f32 * 0.25));
        for x in floats {
            let mut line = String::new();
            text_value(&mut line, Val::F32(x)).unwrap();
            assert_eq!(line, value(Val::F32(x)).to_string(), "{:#x}", x.to_bits());
        }
        for raw in (0..=255).chain([256, 0x1234_5678, u64::from(u32::MAX), u64::MAX]) {
            for width in [8, 16, 32] {
                let mut line = String::new();
                text_value(&mut line, Val::Bits(raw, width)).unwrap();
                assert_eq!(line, value(Val::Bits(raw, width)).to_string(), "{raw}");
            }
        }
    }

    static NAMED: Names = Names {
        name: |raw, _| (raw == 2).then_some("Two"),
        known: false,
        tree_named: true,
        text_named: true,
    };

    /// The text's pieces: a literal, a label (indexed), a numbered entry's
    /// label, an enum named or not, nothing for a hidden field.
    #[test]
    fn the_text_writes_each_items_pre() {
        static ITEMS: [Item<T>; 4] = [
            it(T::X, Prim::Int(Int::U8, Show::Dec), "x", " x=").then("!"),
            labelled(T::X, Prim::Int(Int::U8, Show::Enum(&NAMED)), "x").at(3),
            hidden(T::X, Prim::Int(Int::U8, Show::Dec), "x"),
            labelled(T::Count, Prim::Count(Int::U8), "n"),
        ];
        static E2: Entry<T> = entry(
            T::Node,
            &[labelled(T::X, Prim::Int(Int::U8, Show::Enum(&NAMED)), "e")],
        );
        static L2: Layout<T> = layout(&[], &ITEMS, Some(&E2), &[]);
        assert!(E2.numbered && !E.numbered);
        let mut line = String::new();
        let mut out = TextOut::new(&mut line);
        let b = [1, 2, 3, 11, 2, 5, 7, 0, 0, 0, 0, 0, 0, 0, 9];
        walk_cut(&L2, &b, 0, ByteOrder::Big, &mut out);
        out.r.unwrap();
        assert!(line.starts_with(
            " x=1! x[3]=Two (2) n=11 [0].e=Two (2) [1].e=5 (unknown) [2].e=7 (unknown)"
        ));
        assert!(
            line.ends_with(" [9].e=0 (unknown) [10].e=9 (unknown)"),
            "{line}"
        );
    }
}
