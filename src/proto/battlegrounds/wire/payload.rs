//! The machinery of Battlegrounds' one declaration of its payloads
//! (`payloads!`, invoked in `layout.rs`): a payload is one of its forms
//! (`Form`, in `layout.rs`), a variant each, its fields declared with
//! their items in wire order; the enum is generic over where its variable
//! parts live ([`Store`]: borrowed from the packet, [`View`], what the
//! decoder gives; or owned, [`Owned`], what the tests and the simulator
//! encode). From the declaration come each form's row (the items, a
//! polygon's entries, the items after them), the reader of a form the
//! decoder chose (every field at a cursor that moves past it, in the
//! packet's byte order), the encoder with its length checks
//! ([`EmitError::TooLong`], the maximum its length field's width allows),
//! the length it writes and the owned copy of a view.
//!
//! A field's type says what it is made of ([`Piece`]): a value of one or
//! more items ([`Wire`]: a number, a vector, a record such as the movement
//! structure), bytes after their length or to the end of the packet
//! ([`Store::Bytes`]), a polygon's vertices after their count
//! ([`Store::Vertices`]), or a byte whose value is its form's ([`Tag`]);
//! a field whose type does not hold its items does not compile.

use super::defs::{Entry, VERTEX_ENTRY, VERTEX_LEN};
use super::error::Part;
use super::types::VectorF;
use crate::proto::codec::{Shape, Wire, fits};
use crate::proto::layout::{Int, Prim};
// What the expansion of `payloads!` names, by one short path.
pub(super) use super::defs::{Item, Layout};
pub(super) use super::error::EmitError;
pub(super) use crate::proto::codec::{Own, splice};
pub(super) use crate::proto::layout::{ByteOrder, layout, size};
use std::marker::PhantomData;

/// Where a payload's variable parts live: borrowed from the packet
/// ([`View`]) or owned ([`Owned`]).
pub trait Store {
    /// Bytes after their length (a name, render data), or every byte
    /// left (a MSG's block).
    type Bytes;
    /// A polygon's vertices, after their count.
    type Vertices;
}

/// Parts borrowed from the packet's bytes: what the decoder gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct View<'a>(PhantomData<&'a [u8]>);

/// Owned parts (names as raw bytes, so that a test can build invalid UTF-8
/// on purpose): what the tests and the simulator build packets from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Owned;

impl<'a> Store for View<'a> {
    type Bytes = &'a [u8];
    type Vertices = Vertices<'a>;
}

impl Store for Owned {
    type Bytes = Vec<u8>;
    type Vertices = Vec<VectorF>;
}

/// A polygon's vertices, read in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vertices<'a> {
    bytes: &'a [u8],
    order: ByteOrder,
}

impl<'a> Vertices<'a> {
    /// The vertices of `bytes` (whole vertices only), read in `order`.
    pub(super) const fn new(bytes: &'a [u8], order: ByteOrder) -> Self {
        Vertices { bytes, order }
    }

    pub const fn len(&self) -> usize {
        self.bytes.len() / VERTEX_LEN
    }

    pub const fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<VectorF> {
        self.order.vector_f(self.bytes, i.checked_mul(VERTEX_LEN)?)
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = VectorF> + 'a {
        let (bytes, order) = (self.bytes, self.order);
        (0..bytes.len() / VERTEX_LEN)
            .map(move |i| order.vector_f(bytes, i * VERTEX_LEN).unwrap_or_default())
    }
}

/// What a field is made of, checked against its items at compile time.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A value of one item a shape.
    Fixed(&'static [Shape]),
    /// Bytes after a length item (then a text or bytes item), or every
    /// byte left (one rest item).
    Bytes,
    /// The entries of `Entry` after a count item.
    Entries(&'static Entry),
}

/// One field of a payload: written after the fields before it.
pub trait Piece {
    const KIND: Kind;
    /// The entries or bytes its length item counts (none for a value).
    fn count(&self) -> usize {
        0
    }
    /// The bytes it writes, in its items `items`.
    fn len(&self, items: &'static [Item]) -> usize;
    /// Appends it to `out` in `order`.
    fn put(&self, items: &'static [Item], out: &mut Vec<u8>, order: ByteOrder);
}

/// A field read from a payload whose lengths the decoder checked.
pub trait ReadPiece<'a>: Sized {
    /// Reads it at `*at` in `b` (the payload) and moves `at` past it.
    fn get(items: &'static [Item], b: &'a [u8], at: &mut usize, order: ByteOrder) -> Self;
}

const fn shape_size(shapes: &[Shape]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < shapes.len() {
        n += match shapes[i] {
            Shape::Uint(k) | Shape::Sint(k) | Shape::Float(k) | Shape::Bytes(k) => k,
            Shape::Tail => 0,
        };
        i += 1;
    }
    n
}

impl<T: Wire> Piece for T {
    const KIND: Kind = Kind::Fixed(T::SHAPE);
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn len(&self, _items: &'static [Item]) -> usize {
        const { shape_size(T::SHAPE) }
    }
    fn put(&self, _items: &'static [Item], out: &mut Vec<u8>, order: ByteOrder) {
        let at = out.len();
        out.resize(at + const { shape_size(T::SHAPE) }, 0);
        Wire::put(self, out, at, order);
    }
}

impl<'a, T: Wire> ReadPiece<'a> for T {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(_items: &'static [Item], b: &'a [u8], at: &mut usize, order: ByteOrder) -> Self {
        let v = T::get(b, *at, order);
        *at += const { shape_size(T::SHAPE) };
        v
    }
}

/// A byte whose value is its form's (a PROP's shape type): read as
/// nothing (the decoder chose the form by it), written as `V`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tag<const V: u8>;

impl<const V: u8> Wire for Tag<V> {
    const SHAPE: &'static [Shape] = &[Shape::Uint(1)];
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(_b: &[u8], _at: usize, _order: ByteOrder) -> Self {
        Tag
    }
    fn put(&self, b: &mut [u8], at: usize, order: ByteOrder) {
        Wire::put(&V, b, at, order);
    }
}

/// The width of a payload's length or count item, if it starts with one.
const fn length_int(items: &[Item]) -> Option<Int> {
    match items.first() {
        Some(Item {
            prim: Prim::Len(i) | Prim::Count(i),
            ..
        }) => Some(*i),
        _ => None,
    }
}

/// The largest number an integer of `i` holds (for a length: a negative
/// one is no length).
const fn max_of(i: Int) -> usize {
    match i {
        Int::U8 => u8::MAX as usize,
        Int::U16 => u16::MAX as usize,
        Int::I16 => i16::MAX as usize,
        Int::U32 | Int::U64 => u32::MAX as usize,
        Int::I32 | Int::I64 => i32::MAX as usize,
    }
}

/// `n` fits the length or count item `items` start with, or names the
/// part it counts as too long.
pub fn fits_length(n: usize, items: &'static [Item]) -> Result<(), EmitError> {
    match (length_int(items), items.first()) {
        (Some(i), Some(item)) if n > max_of(i) => Err(EmitError::TooLong {
            part: Part::counted_by(item.def),
            len: n,
            max: max_of(i),
        }),
        _ => Ok(()),
    }
}

/// Appends `n` as the length or count item `items` start with (none for
/// bytes to the end); the caller checked it fits.
fn put_length(n: usize, items: &'static [Item], out: &mut Vec<u8>, order: ByteOrder) {
    match length_int(items) {
        Some(Int::U8) => out.push(n as u8),
        Some(Int::U16 | Int::I16) => order.put_u16(out, n as u16),
        Some(Int::U32 | Int::I32) => order.put_u32(out, n as u32),
        Some(Int::U64 | Int::I64) => order.put_u64(out, n as u64),
        None => {}
    }
}

/// Reads the length or count at `*at` (0 for a negative one, which a
/// checked packet never has) and moves past it; none for bytes to the end.
#[cfg_attr(not(debug_assertions), inline(always))]
fn get_length(items: &'static [Item], b: &[u8], at: &mut usize, order: ByteOrder) -> Option<usize> {
    let r = *at;
    let n = match length_int(items)? {
        Int::U8 => b.get(r).map(|&n| usize::from(n)),
        Int::U16 => order.u16(b, r).map(usize::from),
        Int::I16 => order.i16(b, r).map(|n| usize::try_from(n).unwrap_or(0)),
        Int::U32 => order.u32(b, r).map(|n| n as usize),
        Int::I32 => order.i32(b, r).map(|n| usize::try_from(n).unwrap_or(0)),
        Int::U64 => order.u64(b, r).map(|n| usize::try_from(n).unwrap_or(0)),
        Int::I64 => order.i64(b, r).map(|n| usize::try_from(n).unwrap_or(0)),
    };
    *at += size(items);
    Some(n.unwrap_or(0))
}

/// Bytes after their length, or to the end.
macro_rules! bytes_piece {
    ($($t:ty),*) => {$(
        impl Piece for $t {
            const KIND: Kind = Kind::Bytes;
            fn count(&self) -> usize {
                <[u8]>::len(self)
            }
            fn len(&self, items: &'static [Item]) -> usize {
                size(items) + <[u8]>::len(self)
            }
            fn put(&self, items: &'static [Item], out: &mut Vec<u8>, order: ByteOrder) {
                put_length(<[u8]>::len(self), items, out, order);
                out.extend_from_slice(self);
            }
        }
    )*};
}

bytes_piece!(&[u8], Vec<u8>);

impl<'a> ReadPiece<'a> for &'a [u8] {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(items: &'static [Item], b: &'a [u8], at: &mut usize, order: ByteOrder) -> Self {
        let start = *at;
        match get_length(items, b, at, order) {
            Some(n) => {
                let s = *at;
                *at = s.saturating_add(n);
                b.get(s..*at).unwrap_or_default()
            }
            None => {
                *at = b.len().max(start);
                b.get(start..).unwrap_or_default()
            }
        }
    }
}

impl Own for &[u8] {
    type Owned = Vec<u8>;
    fn own(&self) -> Vec<u8> {
        self.to_vec()
    }
}

/// A polygon's vertices after their count.
macro_rules! vertices_piece {
    ($($t:ty),*) => {$(
        impl Piece for $t {
            const KIND: Kind = Kind::Entries(&VERTEX_ENTRY);
            fn count(&self) -> usize {
                self.len()
            }
            fn len(&self, items: &'static [Item]) -> usize {
                size(items) + self.len() * VERTEX_ENTRY.len
            }
            fn put(&self, items: &'static [Item], out: &mut Vec<u8>, order: ByteOrder) {
                put_length(self.len(), items, out, order);
                for v in self.iter() {
                    v.write(order, out);
                }
            }
        }
    )*};
}

vertices_piece!(Vertices<'_>, Vec<VectorF>);

impl<'a> ReadPiece<'a> for Vertices<'a> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(items: &'static [Item], b: &'a [u8], at: &mut usize, order: ByteOrder) -> Self {
        let n = get_length(items, b, at, order).unwrap_or(0);
        let s = *at;
        *at = s.saturating_add(n.saturating_mul(VERTEX_ENTRY.len));
        Vertices::new(b.get(s..*at).unwrap_or_default(), order)
    }
}

impl Own for Vertices<'_> {
    type Owned = Vec<VectorF>;
    fn own(&self) -> Vec<VectorF> {
        self.iter().collect()
    }
}

/// Whether a field of `kind` holds `items`, every one.
pub const fn holds(kind: Kind, items: &[Item]) -> bool {
    match kind {
        Kind::Fixed(shapes) => shapes.len() == items.len() && fits(items, 0, shapes),
        Kind::Bytes => matches!(
            items,
            [
                Item {
                    prim: Prim::Len(_),
                    ..
                },
                Item {
                    prim: Prim::Text(_) | Prim::Bytes,
                    ..
                },
            ] | [Item {
                prim: Prim::Rest,
                ..
            }]
        ),
        Kind::Entries(_) => matches!(
            items,
            [Item {
                prim: Prim::Count(_),
                ..
            }]
        ),
    }
}

/// The entries of a form whose fields are of `kinds`, if one counts some.
pub const fn entry_of(kinds: &[Kind]) -> Option<&'static Entry> {
    let mut i = 0;
    while i < kinds.len() {
        if let Kind::Entries(e) = kinds[i] {
            return Some(e);
        }
        i += 1;
    }
    None
}

/// Declares Battlegrounds' payload enum, a variant a form, named as the
/// form (`forms`, a hand-written enum whose discriminant is the form's
/// row), and from it every side's dispatch:
///
/// ```text
/// payloads! {
///     pub enum PayloadOf<S: Store> {
///         Auth,
///         Pong { timestamp: i64 = [TS] },
///         MoveOp(MoveOp = MOVE_OP),
///         PropPolygon {
///             prop_id: i64 = [PROP_ID_ITEM],
///             vertices: S::Vertices = [VERTICES_LEN_ITEM];
///             render_data: S::Bytes = RENDER
///         },
///         Close = [CLOSE_ITEM],
///     }
///     forms Form[14];
/// }
/// ```
///
/// Four kinds of variant: a record (`MoveOp(MoveOp = MOVE_OP)`: its type
/// and row), fields each with its items (a bracketed list or a constant
/// slice of them, `splice!`), the items of the row's tail after a `;`
/// (the render data after a polygon's vertices), nothing, or nothing
/// with items (`Close = [CLOSE_ITEM]`, a flag of no bytes).
///
/// Generated (the expansion names this module `bg_payload` where it is
/// invoked): the form of a payload (`form`), the rows of every form
/// (`ROWS`: its fields' items, the entries a field counts, the tail),
/// the bytes it writes (`wire_len`), its encoder (`emit_in`: every
/// length checked against its item's width first, then each field in
/// order), the owned copy of a view (`to_owned_repr`) and the reader of a
/// form the decoder chose (`read_payload`). A field whose type does not
/// hold its items, every one, does not compile.
macro_rules! payloads {
    (
        $(#[$m:meta])*
        $vis:vis enum $name:ident<$s:ident: $bound:path> {
            $(
                $(#[$vm:meta])*
                $v:ident
                $( ( $t:ty = $tp:tt ) )?
                $( {
                    $( $(#[$fm:meta])* $f:ident : $ft:ty = $fp:tt ),* $(,)?
                    $( ; $( $(#[$gm:meta])* $g:ident : $gt:ty = $gp:tt ),* $(,)? )?
                } )?
                $( = $up:tt )?
            ),* $(,)?
        }
        forms $form:ident[$n:expr];
    ) => {
        use $crate::proto::battlegrounds::wire::payload as bg_payload;

        $(#[$m])*
        $vis enum $name<$s: $bound> {
            $(
                $(#[$vm])*
                $v $( ( $t ) )? $( { $( $(#[$fm])* $f: $ft, )* $( $( $(#[$gm])* $g: $gt, )* )? } )?,
            )*
        }

        impl<$s: $bound> $name<$s> {
            /// Its form: the row it is read and written by.
            pub const fn form(&self) -> $form {
                match self {
                    $( $name::$v { .. } => $form::$v, )*
                }
            }
        }

        /// What is generic over the storage, where its parts are pieces
        /// (`payload::Piece`; a private trait: the pieces are the wire
        /// module's own).
        trait Declared {
            /// Every form's row, by its discriminant; each field's type
            /// checked, at compile time, to hold its items, every one.
            const ROWS: [bg_payload::Layout; $n];
            fn wire_len(&self) -> usize;
            fn emit_in(&self, o: bg_payload::ByteOrder, out: &mut Vec<u8>)
                -> Result<(), bg_payload::EmitError>;
        }

        impl<$s: $bound> Declared for $name<$s>
        where
            $s::Bytes: bg_payload::Piece,
            $s::Vertices: bg_payload::Piece,
        {
            const ROWS: [bg_payload::Layout; $n] = {
                let mut rows = [bg_payload::layout(&[], &[], None, &[]); $n];
                $( rows[$form::$v as usize] = bg_payload::payloads!(@row $v
                    $( ($t = $tp) )?
                    $( { $( $f: $ft = $fp ),* ; $( $( $g: $gt = $gp ),* )? } )?
                    $( = $up )?
                ); )*
                rows
            };

            fn wire_len(&self) -> usize {
                match self { $(
                    bg_payload::payloads!(@pat m $name $v $( ($t) )? $( { $( $f )* $( $( $g )* )? } )?)
                        => 0 $( + bg_payload::payloads!(@len m $tp) )?
                            $( $( + bg_payload::payloads!(@len $f $fp) )*
                               $( $( + bg_payload::payloads!(@len $g $gp) )* )? )?
                            $( + const { bg_payload::size(bg_payload::splice!(@part $up)) } )?,
                )* }
            }

            fn emit_in(&self, o: bg_payload::ByteOrder, out: &mut Vec<u8>)
                -> Result<(), bg_payload::EmitError>
            {
                match self { $(
                    bg_payload::payloads!(@pat m $name $v $( ($t) )? $( { $( $f )* $( $( $g )* )? } )?) => {
                        // Every length first, then every field, in order.
                        $( $( bg_payload::payloads!(@fits $f $fp); )*
                           $( $( bg_payload::payloads!(@fits $g $gp); )* )? )?
                        $( bg_payload::payloads!(@put m $tp, out, o); )?
                        $( $( bg_payload::payloads!(@put $f $fp, out, o); )*
                           $( $( bg_payload::payloads!(@put $g $gp, out, o); )* )? )?
                        $( out.resize(out.len() + const { bg_payload::size(bg_payload::splice!(@part $up)) }, 0); )?
                    }
                )* }
                Ok(())
            }
        }

        impl $name<bg_payload::Owned> {
            /// Every form's row, by its discriminant.
            pub(super) const ROWS: [bg_payload::Layout; $n] = <Self as Declared>::ROWS;

            /// The bytes [`Self::emit_in`] writes.
            pub fn wire_len(&self) -> usize {
                Declared::wire_len(self)
            }

            /// Appends its wire bytes in `order`; lengths that do not fit
            /// their field (a name over 255 bytes, more than 32767
            /// vertices or render bytes) are refused before anything is
            /// written.
            pub fn emit_in(&self, order: bg_payload::ByteOrder, out: &mut Vec<u8>)
                -> Result<(), bg_payload::EmitError>
            {
                Declared::emit_in(self, order, out)
            }
        }

        impl<'a> $name<bg_payload::View<'a>> {
            /// An owned copy.
            pub fn to_owned_repr(&self) -> $name<bg_payload::Owned> {
                match self { $(
                    bg_payload::payloads!(@pat m $name $v $( ($t) )? $( { $( $f )* $( $( $g )* )? } )?)
                        => bg_payload::payloads!(@own m $name $v $( ($t) )? $( { $( $f )* $( $( $g )* )? } )?),
                )* }
            }
        }

        /// Reads the payload of form `form` from `b` (the bytes after the
        /// header, every length checked by the decoder), each field at a
        /// cursor that moves past it, in `order`.
        #[cfg_attr(not(debug_assertions), inline(always))]
        pub(super) fn read_payload<'a>(form: $form, b: &'a [u8], o: bg_payload::ByteOrder)
            -> $name<bg_payload::View<'a>>
        {
            #[allow(unused_mut, unused_variables)]
            let mut at = 0usize;
            match form { $(
                $form::$v => bg_payload::payloads!(@read b at o $name $v
                    $( ($tp) )? $( { $( $f = $fp ),* ; $( $( $g = $gp ),* )? } )?),
            )* }
        }
    };

    (@items $($part:tt),*) => {{
        const ITEMS: &[bg_payload::Item] = bg_payload::splice![$( $part ),*];
        ITEMS
    }};
    (@holds $v:ident $t:ty = $p:tt) => {
        assert!(
            bg_payload::holds(<$t as bg_payload::Piece>::KIND, bg_payload::splice!(@part $p)),
            concat!(stringify!($v), ": a field's type does not hold its items"),
        )
    };

    (@row $v:ident ($t:ty = $tp:tt)) => {{
        bg_payload::payloads!(@holds $v $t = $tp);
        bg_payload::layout(&[], bg_payload::payloads!(@items $tp), None, &[])
    }};
    (@row $v:ident { $( $f:ident : $ft:ty = $fp:tt ),* ; $( $g:ident : $gt:ty = $gp:tt ),* }) => {{
        $( bg_payload::payloads!(@holds $v $ft = $fp); )*
        $( bg_payload::payloads!(@holds $v $gt = $gp); )*
        bg_payload::layout(
            &[],
            bg_payload::payloads!(@items $( $fp ),*),
            bg_payload::entry_of(&[$( <$ft as bg_payload::Piece>::KIND ),*]),
            bg_payload::payloads!(@items $( $gp ),*),
        )
    }};
    (@row $v:ident = $up:tt) => {
        bg_payload::layout(&[], bg_payload::payloads!(@items $up), None, &[])
    };
    (@row $v:ident) => { bg_payload::layout(&[], &[], None, &[]) };

    (@pat $m:ident $name:ident $v:ident ($t:ty)) => { $name::$v($m) };
    (@pat $m:ident $name:ident $v:ident { $($f:ident)* }) => { $name::$v { $($f),* } };
    (@pat $m:ident $name:ident $v:ident) => { $name::$v };

    (@len $f:ident $p:tt) => {
        bg_payload::Piece::len($f, const { bg_payload::splice!(@part $p) })
    };
    (@fits $f:ident $p:tt) => {
        bg_payload::fits_length(bg_payload::Piece::count($f), const { bg_payload::splice!(@part $p) })?
    };
    (@put $f:ident $p:tt, $out:ident, $o:ident) => {
        bg_payload::Piece::put($f, const { bg_payload::splice!(@part $p) }, $out, $o)
    };
    (@get $p:tt, $b:ident, $at:ident, $o:ident) => {
        bg_payload::ReadPiece::get(const { bg_payload::splice!(@part $p) }, $b, &mut $at, $o)
    };

    (@own $m:ident $name:ident $v:ident ($t:ty)) => { $name::$v(bg_payload::Own::own($m)) };
    (@own $m:ident $name:ident $v:ident { $($f:ident)* }) => {
        $name::$v { $( $f: bg_payload::Own::own($f) ),* }
    };
    (@own $m:ident $name:ident $v:ident) => { $name::$v };

    (@read $b:ident $at:ident $o:ident $name:ident $v:ident ($tp:tt)) => {
        $name::$v(bg_payload::payloads!(@get $tp, $b, $at, $o))
    };
    (@read $b:ident $at:ident $o:ident $name:ident $v:ident
        { $( $f:ident = $fp:tt ),* ; $( $g:ident = $gp:tt ),* }) => {
        $name::$v {
            $( $f: bg_payload::payloads!(@get $fp, $b, $at, $o), )*
            $( $g: bg_payload::payloads!(@get $gp, $b, $at, $o), )*
        }
    };
    (@read $b:ident $at:ident $o:ident $name:ident $v:ident) => { $name::$v };
}

pub(crate) use payloads;
