//! The typed reader and writer of a layout's rows (`super::layout`): a
//! protocol's message structs read from and write to bytes at the offsets,
//! sizes and byte order the rows declare, so that the typed decoder the
//! analysis reads and the encoder the simulators write through are not
//! written by hand.
//!
//! A struct declared with `record!` names, for each of its fields, the
//! registered field of the row it starts at (`pub tick: u32 = SN_TICK`).
//! From that come [`Record::read`] and [`Record::write`], each field at a
//! constant offset (the sizes of the row's items before it, computed at
//! compile time) in the walk's byte order, and a compile-time check that
//! the struct holds the row: its fields in the row's order, every item held
//! by one field whose type has the item's shape ([`Wire::SHAPE`]: a `u32`
//! an unsigned 4-byte integer, a three-float vector three `f32`), none
//! left over. A row changed without its struct, or a struct without its
//! row, does not compile.
//!
//! A protocol's message enum is declared with `messages!`, a line a
//! message type: a body after its row's head ([`Body`]: a record, counted
//! [`Entries`], or a protocol's own), or its fields one by one ([`Part`]:
//! a value, or a text after its length), those of its row's head naming
//! their items, the others declared with their items, which make its
//! row, or none. From that list come the type of a message, its length,
//! its reader, its writer, its owned copy and the rows of the types
//! declared field by field, for every protocol that declares its messages
//! this way (lwar, Starstrike). A row may include another's items
//! (`splice!`: a record that holds another, Battlegrounds' movement).
//!
//! Reading allocates nothing and borrows nothing (a value is copied out of
//! the bytes): one length check, then each value at its constant offset in
//! bytes of a constant length, as fast as reads written by hand. Bytes
//! missing at the end read as zeros (the view checks the length first, so
//! the decoder never meets them). Writing into a
//! slice the caller sized skips a value that does not fit.

use super::layout::{ByteOrder, Int, Item, Layout, Prim, array, size};
use std::fmt;
use std::marker::PhantomData;

/// The shape of one item's bytes, as a typed value reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// An unsigned integer of that many bytes (an enum's raw value too).
    Uint(usize),
    /// A signed integer of that many bytes.
    Sint(usize),
    /// A float of that many bytes.
    Float(usize),
    /// That many bytes as they are (a padded text).
    Bytes(usize),
    /// The text or bytes a length before it counts (a message's [`Part`],
    /// never a record's).
    Tail,
}

impl Shape {
    const fn same(self, other: Shape) -> bool {
        match (self, other) {
            (Shape::Uint(a), Shape::Uint(b))
            | (Shape::Sint(a), Shape::Sint(b))
            | (Shape::Float(a), Shape::Float(b))
            | (Shape::Bytes(a), Shape::Bytes(b)) => a == b,
            (Shape::Tail, Shape::Tail) => true,
            _ => false,
        }
    }
}

/// The shape of a primitive's bytes; none for what has no fixed size (a
/// text after its length, the rest) or no bytes.
pub const fn shape(p: Prim) -> Option<Shape> {
    match p {
        Prim::Int(i, _) | Prim::Len(i) | Prim::Count(i) => Some(int_shape(i)),
        Prim::F32 => Some(Shape::Float(4)),
        Prim::F64 => Some(Shape::Float(8)),
        Prim::Pair16 => Some(Shape::Uint(4)),
        Prim::Padded(n) => Some(Shape::Bytes(n)),
        Prim::Text(_) | Prim::Bytes | Prim::Rest | Prim::Order | Prim::Flag => None,
    }
}

const fn int_shape(i: Int) -> Shape {
    if i.signed() {
        Shape::Sint(i.size())
    } else {
        Shape::Uint(i.size())
    }
}

/// A value of one or more consecutive items (a number one, a vector of
/// three floats three).
pub trait Wire: Sized {
    /// The shapes of the items it holds, in wire order.
    const SHAPE: &'static [Shape];
    /// Reads it at `at` in `order`; zeros where its bytes are missing.
    fn get(b: &[u8], at: usize, order: ByteOrder) -> Self;
    /// Writes it at `at` in `order`, if `b` has room.
    fn put(&self, b: &mut [u8], at: usize, order: ByteOrder);
}

/// The `N` first bytes of `b`, zeros after its end (a record read from
/// bytes cut short).
#[cold]
pub fn zero_padded<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    let n = b.len().min(N);
    if let (Some(dst), Some(src)) = (out.get_mut(..n), b.get(..n)) {
        dst.copy_from_slice(src);
    }
    out
}

/// Writes `bytes` at `at`, if `b` has room.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn put_bytes(b: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(dst) = at
        .checked_add(bytes.len())
        .and_then(|end| b.get_mut(at..end))
    {
        dst.copy_from_slice(bytes);
    }
}

macro_rules! numbers {
    ($( $t:ty = $shape:ident($n:literal); )*) => {
        $(
            impl Wire for $t {
                const SHAPE: &'static [Shape] = &[Shape::$shape($n)];
                #[cfg_attr(not(debug_assertions), inline(always))]
                fn get(b: &[u8], at: usize, order: ByteOrder) -> Self {
                    match (array(b, at), order) {
                        (Some(a), ByteOrder::Big) => <$t>::from_be_bytes(a),
                        (Some(a), ByteOrder::Little) => <$t>::from_le_bytes(a),
                        (None, _) => <$t>::from_be_bytes([0; $n]),
                    }
                }
                #[cfg_attr(not(debug_assertions), inline(always))]
                fn put(&self, b: &mut [u8], at: usize, order: ByteOrder) {
                    let a = match order {
                        ByteOrder::Big => self.to_be_bytes(),
                        ByteOrder::Little => self.to_le_bytes(),
                    };
                    put_bytes(b, at, &a);
                }
            }

            impl Scalar for $t {
                const ONE: Shape = Shape::$shape($n);
                const SIZE: usize = $n;
            }
        )*
    };
}

numbers! {
    u8 = Uint(1);
    u16 = Uint(2);
    u32 = Uint(4);
    u64 = Uint(8);
    i16 = Sint(2);
    i32 = Sint(4);
    i64 = Sint(8);
    f32 = Float(4);
    f64 = Float(8);
}

/// A value of one item: a number.
pub trait Scalar: Wire + Copy {
    /// Its item's shape.
    const ONE: Shape;
    /// Its bytes.
    const SIZE: usize;
}

/// `N` items of one shape (Starstrike's four team scores, a vector's
/// floats).
impl<T: Scalar, const N: usize> Wire for [T; N] {
    const SHAPE: &'static [Shape] = &[T::ONE; N];
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(b: &[u8], at: usize, order: ByteOrder) -> Self {
        std::array::from_fn(|i| T::get(b, at + i * T::SIZE, order))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put(&self, b: &mut [u8], at: usize, order: ByteOrder) {
        for (i, v) in self.iter().enumerate() {
            v.put(b, at + i * T::SIZE, order);
        }
    }
}

/// A struct read from and written to a row's items (`record!`).
pub trait Record: Sized {
    /// The bytes of its items.
    const LEN: usize;
    /// Reads it from `b` (its first item at 0) in `order`.
    fn read(b: &[u8], order: ByteOrder) -> Self;
    /// Writes it into `b` (its first item at 0) in `order`.
    fn write(&self, b: &mut [u8], order: ByteOrder);

    /// Appends its bytes to `out` in `order` (for an encoder that builds
    /// its packet in a `Vec`).
    fn append(&self, out: &mut Vec<u8>, order: ByteOrder) {
        let at = out.len();
        out.resize(at + Self::LEN, 0);
        if let Some(b) = out.get_mut(at..) {
            self.write(b, order);
        }
    }
}

/// The counted entries of a row (Starstrike's entities after a snapshot's
/// count), borrowed from the bytes: whole entries of `R` only (a part at
/// the end is left out), each read when asked, at its record's offsets.
pub struct Entries<'a, R> {
    bytes: &'a [u8],
    order: ByteOrder,
    record: PhantomData<fn() -> R>,
}

impl<'a, R: Record> Entries<'a, R> {
    /// The entries in `bytes`, read in `order`.
    pub fn new(bytes: &'a [u8], order: ByteOrder) -> Self {
        let whole = bytes.len() - bytes.len() % R::LEN.max(1);
        Entries {
            bytes: bytes.get(..whole).unwrap_or_default(),
            order,
            record: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len() / R::LEN.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The `i`th entry.
    pub fn get(&self, i: usize) -> Option<R> {
        let start = i.checked_mul(R::LEN)?;
        let bytes = self.bytes.get(start..start.checked_add(R::LEN)?)?;
        Some(R::read(bytes, self.order))
    }

    /// The bytes of the whole entries.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = R> + use<'a, R> {
        let order = self.order;
        self.bytes
            .chunks_exact(R::LEN.max(1))
            .map(move |bytes| R::read(bytes, order))
    }
}

impl<R> Clone for Entries<'_, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Entries<'_, R> {}

impl<R> PartialEq for Entries<'_, R> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes && self.order == other.order
    }
}

impl<R> Eq for Entries<'_, R> {}

impl<R> Default for Entries<'_, R> {
    fn default() -> Self {
        Entries {
            bytes: &[],
            order: ByteOrder::default(),
            record: PhantomData,
        }
    }
}

/// The entries, as a list.
impl<R: Record + fmt::Debug> fmt::Debug for Entries<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Counted entries as the encoder takes them: borrowed ([`Entries`]) or
/// owned (a `Vec`).
pub trait List<R> {
    fn count(&self) -> usize;
    fn each(&self, f: &mut dyn FnMut(&R));
}

impl<R: Record> List<R> for Entries<'_, R> {
    fn count(&self) -> usize {
        self.len()
    }
    fn each(&self, f: &mut dyn FnMut(&R)) {
        for e in self.iter() {
            f(&e);
        }
    }
}

impl<R> List<R> for Vec<R> {
    fn count(&self) -> usize {
        self.len()
    }
    fn each(&self, f: &mut dyn FnMut(&R)) {
        self.iter().for_each(f);
    }
}

/// The count of a counted layout (the last of its items): its offset from
/// the first of its items and its width; none for a layout without entries.
pub const fn count_item<H>(l: &Layout<H>) -> Option<(usize, Int)> {
    match (l.entry, l.items.last()) {
        (
            Some(_),
            Some(Item {
                prim: Prim::Count(int),
                ..
            }),
        ) => Some((l.fixed - int.size(), *int)),
        _ => None,
    }
}

/// The most entries the count of `l` can say (0 without entries).
pub const fn max_count<H>(l: &Layout<H>) -> usize {
    match count_item(l) {
        Some((_, Int::U8)) => u8::MAX as usize,
        Some((_, Int::U16)) => u16::MAX as usize,
        Some(_) => u32::MAX as usize,
        None => 0,
    }
}

/// The count of a counted layout's entries in its bytes `b` (its first
/// item at 0), if `b` has it.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn read_count<H>(l: &Layout<H>, b: &[u8], order: ByteOrder) -> Option<usize> {
    let (at, int) = count_item(l)?;
    let n = match int {
        Int::U8 => u64::from(*b.get(at)?),
        Int::U16 | Int::I16 => u64::from(order.u16(b, at)?),
        Int::U32 | Int::I32 => u64::from(order.u32(b, at)?),
        Int::U64 | Int::I64 => order.u64(b, at)?,
    };
    usize::try_from(n).ok()
}

/// The entries of a counted layout's bytes `b` (its first item at 0):
/// those after its fixed items.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn read_entries<'a, H, R: Record>(
    l: &Layout<H>,
    b: &'a [u8],
    order: ByteOrder,
) -> Entries<'a, R> {
    Entries::new(b.get(l.fixed..).unwrap_or_default(), order)
}

/// Writes `list`'s count (cut to its width: the caller checks
/// [`max_count`]) and its entries after a counted layout's fixed items
/// into `b` (its first item at 0; what does not fit is left out).
pub fn write_entries<H, R: Record>(
    l: &Layout<H>,
    list: &impl List<R>,
    b: &mut [u8],
    order: ByteOrder,
) {
    let Some((at, int)) = count_item(l) else {
        return;
    };
    put_uint(b, at, int, list.count(), order);
    let mut at = l.fixed;
    list.each(&mut |e| {
        if let Some(rest) = b.get_mut(at..) {
            e.write(rest, order);
        }
        at += R::LEN;
    });
}

/// The length of a layout's text (its items ending in a length, then the
/// text it counts: lwar's names): its offset from the first of its items
/// and its width; none for a layout without.
pub const fn text_len_item<H>(l: &Layout<H>) -> Option<(usize, Int)> {
    let n = l.items.len();
    if !l.string || n < 2 {
        return None;
    }
    match l.items[n - 2].prim {
        Prim::Len(int) => Some((l.fixed - int.size(), int)),
        _ => None,
    }
}

/// Writes `text`'s length (cut to its width: the caller keeps a text
/// within it) and `text` after a layout's fixed items into `b` (its first
/// item at 0; what does not fit is left out).
pub fn write_text<H>(l: &Layout<H>, text: &[u8], b: &mut [u8], order: ByteOrder) {
    let Some((at, int)) = text_len_item(l) else {
        return;
    };
    put_uint(b, at, int, text.len(), order);
    put_bytes(b, l.fixed, text);
}

/// Writes `n` at `at` as an unsigned integer of `int`'s width.
fn put_uint(b: &mut [u8], at: usize, int: Int, n: usize, order: ByteOrder) {
    match int {
        Int::U8 => (n as u8).put(b, at, order),
        Int::U16 | Int::I16 => (n as u16).put(b, at, order),
        Int::U32 | Int::I32 => (n as u32).put(b, at, order),
        Int::U64 | Int::I64 => (n as u64).put(b, at, order),
    }
}

/// The bytes of a counted layout's items and `count` entries (of a layout
/// without entries, its items').
pub const fn counted_len<H>(l: &Layout<H>, count: usize) -> usize {
    match l.entry {
        Some(e) => l.fixed + e.len * count,
        None => l.fixed,
    }
}

/// The shapes of `N` items (a record's, when it is a field of another).
pub const fn shapes<const N: usize, H>(items: &[Item<H>]) -> [Shape; N] {
    let mut out = [Shape::Bytes(0); N];
    let mut j = 0;
    while j < N {
        out[j] = match shape(items[j].prim) {
            Some(s) => s,
            None => panic!("a record of items without a fixed size is no field"),
        };
        j += 1;
    }
    out
}

/// The offset of item `j` of `items`: the sizes of those before it.
pub const fn offset<H>(items: &[Item<H>], j: usize) -> usize {
    let mut at = 0;
    let mut i = 0;
    while i < j && i < items.len() {
        at += items[i].prim.size();
        i += 1;
    }
    at
}

/// The offsets of `N` consecutive fields of `items`, the `k`th holding
/// `lens[k]` items: each the sizes of the items before it.
pub const fn field_offsets<H, const N: usize>(items: &[Item<H>], lens: [usize; N]) -> [usize; N] {
    let mut out = [0; N];
    let (mut j, mut k) = (0, 0);
    while k < N {
        out[k] = offset(items, j);
        j += lens[k];
        k += 1;
    }
    out
}

/// The number of items of `parts` one after another (a row that includes
/// another's, `splice!`).
pub const fn total<H>(parts: &[&[Item<H>]]) -> usize {
    let mut n = 0;
    let mut k = 0;
    while k < parts.len() {
        n += parts[k].len();
        k += 1;
    }
    n
}

/// The items of `parts` one after another, `N` of them ([`total`]): what
/// `splice!` makes a row of.
pub const fn concat<H: Copy, const N: usize>(parts: &[&[Item<H>]]) -> [Item<H>; N] {
    assert!(total(parts) == N, "a spliced row of another length");
    let mut k = 0;
    while k < parts.len() && parts[k].is_empty() {
        k += 1;
    }
    assert!(k < parts.len(), "a spliced row of no items");
    let mut out = [parts[k][0]; N];
    let (mut at, mut k) = (0, 0);
    while k < parts.len() {
        let mut j = 0;
        while j < parts[k].len() {
            out[at] = parts[k][j];
            at += 1;
            j += 1;
        }
        k += 1;
    }
    out
}

/// A row of the items of `parts` one after another, a constant slice:
/// each part a constant slice of items (a sub-row: the movement structure
/// that three of Battlegrounds' payloads start with) or a bracketed list
/// of them, so that a row includes another's items without repeating
/// them:
///
/// ```text
/// const AUTH_OK: &[Item] = splice![MOVEMENT, [NAME_LEN, NAME]];
/// ```
macro_rules! splice {
    () => { &[] };
    ($( $part:tt ),+ $(,)?) => {
        &$crate::proto::codec::concat::<
            _,
            { $crate::proto::codec::total(&[$( $crate::proto::codec::splice!(@part $part) ),*]) },
        >(&[$( $crate::proto::codec::splice!(@part $part) ),*])
    };
    (@part [ $( $item:expr ),* $(,)? ]) => { &[ $( $item ),* ] };
    (@part $sub:expr) => { $sub };
}

/// Whether the items of `items` from `j` have the shapes `shapes`.
pub const fn fits<H>(items: &[Item<H>], j: usize, shapes: &[Shape]) -> bool {
    if j + shapes.len() > items.len() {
        return false;
    }
    let mut k = 0;
    while k < shapes.len() {
        match shape(items[j + k].prim) {
            Some(s) if s.same(shapes[k]) => {}
            _ => return false,
        }
        k += 1;
    }
    true
}

/// Whether two rows have the same shapes (two messages one struct reads).
pub const fn same_shapes<H>(a: &[Item<H>], b: &[Item<H>]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut j = 0;
    while j < a.len() {
        match (shape(a[j].prim), shape(b[j].prim)) {
            (Some(x), Some(y)) if x.same(y) => {}
            _ => return false,
        }
        j += 1;
    }
    true
}

/// The index of the item of `$items` whose field is `$id` (the handle's
/// `const fn index`), `$items.len()` if none: a constant.
macro_rules! item_index {
    ($items:expr, $id:expr) => {{
        let items = $items;
        let mut j = 0;
        while j < items.len() && items[j].def.index() != $id.index() {
            j += 1;
        }
        j
    }};
}

/// The offset of the item of `$items` whose field is `$id`: a constant.
macro_rules! item_offset {
    ($items:expr, $id:expr) => {
        $crate::proto::codec::offset($items, $crate::proto::codec::item_index!($items, $id))
    };
}

/// Declares a struct read from and written to a row's items, in one of
/// two forms. On a row declared elsewhere, each field naming the item it
/// starts at:
///
/// ```text
/// record! {
///     /// 0x0005: 4 bytes.
///     #[derive(Debug, Clone, Copy)]
///     pub struct Heartbeat in [items(PacketType::Heartbeat)] {
///         pub timestamp: u32 = HB_TIMESTAMP,
///     }
/// }
/// ```
///
/// or declaring its row with it, each field with its items (a constant
/// slice of them, `HEARTBEAT`, is the row), so that a field is named once:
///
/// ```text
/// record! {
///     /// 0x0005: 4 bytes.
///     #[derive(Debug, Clone, Copy)]
///     pub struct Heartbeat in const HEARTBEAT: &[Item] {
///         pub timestamp: u32 = [it(HB_TIMESTAMP, U32)],
///     }
/// }
/// ```
///
/// A field that is itself a record names that record's row instead of
/// listing items (`pub movement: Movement = MOVEMENT`): its items are
/// spliced into the row (`splice!`), written once for every row that
/// holds them.
///
/// A field's type ([`Wire`]) says how many items it holds. The struct gets
/// [`Record`] (read and write at the row's offsets: each field at the
/// offset of its first item, the items of the fields before it, computed
/// at compile time), and the compile-time check that it holds the row: its
/// fields in order, each of the shape of its items, none left over.
macro_rules! record {
    (@impl $name:ident [$items:expr] $( $field:ident: $ty:ty ),*) => {
        impl $crate::proto::codec::Record for $name {
            const LEN: usize = $crate::proto::layout::size($items);

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn read(b: &[u8], order: $crate::proto::layout::ByteOrder) -> Self {
                // One length check, then every read at a constant offset
                // in bytes of a constant length (no check left).
                let short;
                let b: &[u8; $crate::proto::layout::size($items)] = match b.first_chunk() {
                    Some(whole) => whole,
                    None => {
                        short = $crate::proto::codec::zero_padded(b);
                        &short
                    }
                };
                // Each field's offset, by the field's name.
                let [$( $field ),*] = const {
                    $crate::proto::codec::field_offsets(
                        $items,
                        [$( <$ty as $crate::proto::codec::Wire>::SHAPE.len() ),*],
                    )
                };
                $name { $(
                    $field: <$ty as $crate::proto::codec::Wire>::get(b, $field, order),
                )* }
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn write(&self, b: &mut [u8], order: $crate::proto::layout::ByteOrder) {
                let [$( $field ),*] = const {
                    $crate::proto::codec::field_offsets(
                        $items,
                        [$( <$ty as $crate::proto::codec::Wire>::SHAPE.len() ),*],
                    )
                };
                $(
                    $crate::proto::codec::Wire::put(&self.$field, b, $field, order);
                )*
            }
        }

        /// A record is a value of its items in another record (a
        /// movement in a move).
        impl $crate::proto::codec::Wire for $name {
            const SHAPE: &'static [$crate::proto::codec::Shape] =
                &$crate::proto::codec::shapes::<{ $items.len() }, _>($items);
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn get(b: &[u8], at: usize, order: $crate::proto::layout::ByteOrder) -> Self {
                <$name as $crate::proto::codec::Record>::read(b.get(at..).unwrap_or_default(), order)
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn put(&self, b: &mut [u8], at: usize, order: $crate::proto::layout::ByteOrder) {
                if let Some(b) = b.get_mut(at..) {
                    <$name as $crate::proto::codec::Record>::write(self, b, order);
                }
            }
        }
    };
    (
        $(#[$m:meta])*
        $vis:vis struct $name:ident in [$items:expr] {
            $( $(#[$fm:meta])* $fvis:vis $field:ident: $ty:ty = $id:expr ),* $(,)?
        }
    ) => {
        $(#[$m])*
        $vis struct $name { $( $(#[$fm])* $fvis $field: $ty, )* }

        $crate::proto::codec::record!(@impl $name [$items] $( $field: $ty ),*);

        const _: () = {
            let items = $items;
            let mut next = 0;
            $(
                let j = $crate::proto::codec::item_index!(items, $id);
                assert!(j == next, concat!(stringify!($name), ".", stringify!($field), ": not the next item of its row"));
                let shape = <$ty as $crate::proto::codec::Wire>::SHAPE;
                assert!(
                    $crate::proto::codec::fits(items, j, shape),
                    concat!(stringify!($name), ".", stringify!($field), ": its type is not its items' shape")
                );
                next = j + shape.len();
            )*
            assert!(next == items.len(), concat!(stringify!($name), ": items of its row it does not hold"));
        };
    };
    (
        $(#[$m:meta])*
        $vis:vis struct $name:ident in $ivis:vis const $items:ident: $ity:ty {
            $( $(#[$fm:meta])* $fvis:vis $field:ident: $ty:ty = $part:tt ),* $(,)?
        }
    ) => {
        /// The row of its record, a field's items after another's.
        $ivis const $items: $ity = $crate::proto::codec::splice![$( $part ),*];

        $(#[$m])*
        $vis struct $name { $( $(#[$fm])* $fvis $field: $ty, )* }

        $crate::proto::codec::record!(@impl $name [$items] $( $field: $ty ),*);

        const _: () = {
            let mut next = 0;
            $(
                let shape = <$ty as $crate::proto::codec::Wire>::SHAPE;
                assert!(
                    shape.len() == $crate::proto::codec::splice!(@part $part).len()
                        && $crate::proto::codec::fits($items, next, shape),
                    concat!(stringify!($name), ".", stringify!($field), ": its type is not its items' shape")
                );
                next += shape.len();
            )*
            assert!(next == $items.len());
        };
    };
}

/// A message's body as its row holds it, after the row's head: a record
/// (its items), counted entries (a count where the row puts it, then the
/// entries), or a protocol's own (Starstrike's snapshot: a tick, then
/// counted entries). What `messages!` writes a tuple variant through.
pub trait Body {
    /// Its bytes, in the row `l`.
    fn body_len<H>(&self, l: &Layout<H>) -> usize;
    /// The entries its count counts (none for a record).
    fn body_count(&self) -> usize {
        0
    }
    /// Writes it into `b` (sized by the caller: what does not fit is left
    /// out) at the row's offsets.
    fn body_write<H>(&self, l: &Layout<H>, b: &mut [u8], order: ByteOrder);
}

/// A body read from its bytes (the caller checked the length: missing
/// bytes read as zeros, missing entries as none).
pub trait ReadBody<'a>: Sized {
    fn body_read<H>(l: &Layout<H>, b: &'a [u8], order: ByteOrder) -> Self;
}

/// A value's owned copy (borrowed entries in a `Vec`, a borrowed text's
/// bytes in a `Vec`; a plain value itself).
pub trait Own {
    type Owned;
    fn own(&self) -> Self::Owned;
}

impl<T: Record> Body for T {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn body_len<H>(&self, _l: &Layout<H>) -> usize {
        T::LEN
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn body_write<H>(&self, _l: &Layout<H>, b: &mut [u8], order: ByteOrder) {
        self.write(b, order);
    }
}

impl<'a, T: Record> ReadBody<'a> for T {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn body_read<H>(_l: &Layout<H>, b: &'a [u8], order: ByteOrder) -> Self {
        T::read(b, order)
    }
}

impl<T: Wire + Copy> Own for T {
    type Owned = T;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn own(&self) -> T {
        *self
    }
}

/// Counted entries: the count where the row puts it, the entries after
/// its fixed items.
macro_rules! counted_body {
    ($($t:ty),*) => {$(
        impl<R: Record> Body for $t {
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn body_len<H>(&self, l: &Layout<H>) -> usize {
                counted_len(l, List::count(self))
            }
            #[cfg_attr(not(debug_assertions), inline(always))]
            fn body_count(&self) -> usize {
                List::count(self)
            }
            fn body_write<H>(&self, l: &Layout<H>, b: &mut [u8], order: ByteOrder) {
                write_entries(l, self, b, order);
            }
        }
    )*};
}

counted_body!(Vec<R>, Entries<'_, R>);

impl<'a, R: Record> ReadBody<'a> for Entries<'a, R> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn body_read<H>(l: &Layout<H>, b: &'a [u8], order: ByteOrder) -> Self {
        read_entries(l, b, order)
    }
}

impl<R: Record> Own for Entries<'_, R> {
    type Owned = Vec<R>;
    fn own(&self) -> Vec<R> {
        self.iter().collect()
    }
}

/// One field of a message declared field by field in `messages!` (lwar's
/// reliable messages): a value of one or more items ([`Wire`]), or a text
/// after its length ([`Shape::Tail`]), read from and written to the
/// message's bytes (its head included) at the row's offset of its first
/// item.
pub trait Part {
    /// The shapes of the items it holds, in wire order.
    const SHAPE: &'static [Shape];
    /// Its bytes past the row's fixed items (a text's).
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn part_len(&self) -> usize {
        0
    }
    /// Writes it at `at`, if `b` has room.
    fn part_write(&self, b: &mut [u8], at: usize, order: ByteOrder);
}

/// A [`Part`] read from a message's bytes (the caller checked the length).
pub trait ReadPart<'a>: Sized {
    fn part_read(b: &'a [u8], at: usize, order: ByteOrder) -> Self;
}

impl<T: Wire> Part for T {
    const SHAPE: &'static [Shape] = T::SHAPE;
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn part_write(&self, b: &mut [u8], at: usize, order: ByteOrder) {
        self.put(b, at, order);
    }
}

impl<'a, T: Wire> ReadPart<'a> for T {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn part_read(b: &'a [u8], at: usize, order: ByteOrder) -> Self {
        T::get(b, at, order)
    }
}

/// The shape of a text after its `u8` length: two items.
pub const TEXT8: &[Shape] = &[Shape::Uint(1), Shape::Tail];

/// The text after a `u8` length at `at` (as much of it as `b` has).
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn text8(b: &[u8], at: usize) -> &[u8] {
    let len = b.get(at).map_or(0, |&n| usize::from(n));
    let start = at + 1;
    b.get(start..start + len)
        .or_else(|| b.get(start..))
        .unwrap_or_default()
}

/// Writes `text`'s `u8` length at `at` (cut to its width: the caller keeps
/// a text within it), then `text`.
pub fn put_text8(b: &mut [u8], at: usize, text: &[u8]) {
    debug_assert!(
        text.len() <= u8::MAX as usize,
        "text of {} bytes",
        text.len()
    );
    put_bytes(b, at, &[text.len() as u8]);
    put_bytes(b, at + 1, text);
}

/// An owned text after its `u8` length.
impl Part for Vec<u8> {
    const SHAPE: &'static [Shape] = TEXT8;
    fn part_len(&self) -> usize {
        self.len()
    }
    fn part_write(&self, b: &mut [u8], at: usize, _order: ByteOrder) {
        put_text8(b, at, self);
    }
}

/// Whether the items of `items` from `j` have the shapes `shapes`, a
/// [`Shape::Tail`] the text or bytes after a length.
pub const fn fits_part<H>(items: &[Item<H>], j: usize, shapes: &[Shape]) -> bool {
    if j + shapes.len() > items.len() {
        return false;
    }
    let mut k = 0;
    while k < shapes.len() {
        let ok = match (shapes[k], items[j + k].prim) {
            (Shape::Tail, Prim::Text(_) | Prim::Bytes) => true,
            (s, p) => match shape(p) {
                Some(t) => t.same(s),
                None => false,
            },
        };
        if !ok {
            return false;
        }
        k += 1;
    }
    true
}

/// The bytes of a row's head.
pub const fn head_len<H>(l: &Layout<H>) -> usize {
    size(l.head)
}

/// The offset of the item of the row `$l` whose field is `$id`, from the
/// start of its head (a head's item, or one of its items after the
/// head): a constant.
macro_rules! row_offset {
    ($l:expr, $id:expr) => {{
        let l = $l;
        let j = $crate::proto::codec::item_index!(l.head, $id);
        if j < l.head.len() {
            $crate::proto::codec::offset(l.head, j)
        } else {
            $crate::proto::layout::size(l.head) + $crate::proto::codec::item_offset!(l.items, $id)
        }
    }};
}

/// Declares a protocol's message enum, a variant a type (named as the
/// type), and from it the dispatch every side needs, at the offsets of
/// the type's row (`rows`, a `const fn` of the type, head included):
///
/// ```text
/// messages! {
///     /// One message. `S` holds the borrowed or owned parts.
///     pub enum MessageOf<S: Store> {
///         Connect { seqno: u32 = F::SEQNO; name: S::Text = [STR_LEN, NAME_STR] },
///         Stats(S::List<StatsEntry>),
///         Input(Input),
///         Full,
///     }
///     type MessageType, fn msg_type;
///     rows row, ORDER;
///     items Item;
///     read read_message<'a> -> MessageOf<View<'a>>;
///     owned MessageOf<Owned>;
/// }
/// ```
///
/// Three kinds of variant: a body after the row's head (`Input(Input)`:
/// a [`Body`], a record, counted entries or a protocol's own), the row's
/// items field by field (`Connect { .. }`), or none. A field-by-field
/// variant lists the fields its row's head holds, each a [`Part`] naming
/// its item (`seqno: u32 = F::SEQNO`), then, after a `;`, its fields with
/// their items (`name: S::Text = [STR_LEN, NAME_STR]`: a text, its length
/// and itself; or a constant slice of items, a sub-row, `splice!`): those
/// items, in order, are the items of its type's row after the head,
/// which the protocol's table takes from the generated `fn fields_row`
/// of the type (`items`: the type of an item), so that a field is named
/// once, with its items.
///
/// Generated: the type of a message (`fn msg_type`), its bytes
/// (`wire_len`: head, items, entries or text), the entries it counts
/// (`count`), its writer (`write`: every field and body, at its row's
/// offsets, into bytes that start at its head; what the head holds
/// besides its fields, a type byte, is the protocol's), its reader (`read`:
/// the message of a type from its bytes, length checked by the caller),
/// its owned copy (`to_owned_repr`) and the items of each field-by-field
/// type's row (`fields_row`). A field-by-field variant whose row does not
/// hold its items in order and shape, every one, does not compile.
macro_rules! messages {
    (
        $(#[$m:meta])*
        $vis:vis enum $name:ident<$p:ident $(: $bound:path)?> {
            $(
                $(#[$vm:meta])*
                $v:ident $( ( $t:ty ) )? $( {
                    $( $hf:ident : $hft:ty = $hid:expr ),* ;
                    $( $f:ident : $ft:ty = $part:tt ),* $(,)?
                } )?
            ),* $(,)?
        }
        type $kt:ident, fn $kind:ident;
        rows $rows:path, $order:expr;
        items $item:ty;
        read $read:ident<$lt:lifetime> -> $view:ty;
        owned $owned:ty;
    ) => {
        $(#[$m])*
        $vis enum $name<$p $(: $bound)?> {
            $( $(#[$vm])* $v $( ( $t ) )? $( { $( $hf: $hft, )* $( $f: $ft ),* } )?, )*
        }

        impl<$p $(: $bound)?> $name<$p> {
            /// Its type.
            pub const fn $kind(&self) -> $kt {
                match self {
                    $( $name::$v { .. } => $kt::$v, )*
                }
            }
        }

        #[allow(dead_code)]
        impl $kt {
            /// The items of its row after the head, for a type whose
            /// message is declared field by field (none for the others):
            /// each field's items, in order.
            pub(super) const fn fields_row(self) -> Option<&'static [$item]> {
                match self { $(
                    $kt::$v => $crate::proto::codec::messages!(@items $item; $( { $( $part )* } )?),
                )* }
            }
        }

        impl<$p $(: $bound)?> $name<$p>
        where
            $( $( $t: $crate::proto::codec::Body, )? $( $( $hft: $crate::proto::codec::Part, )* $( $ft: $crate::proto::codec::Part, )* )? )*
        {
            /// Checks, at compile time, that each field-by-field variant's
            /// row holds its fields: the head's where its head has them,
            /// the others each the next of its items, of its type's shape,
            /// every item held.
            const HOLDS_ITS_ROW: () = { $( $(
                let l = &$rows($kt::$v);
                $(
                    assert!(
                        $crate::proto::codec::item_index!(l.head, $hid) < l.head.len(),
                        concat!(stringify!($v), ".", stringify!($hf), ": not in its row's head")
                    );
                )*
                #[allow(unused_mut)]
                let mut next = 0;
                $(
                    let first = $crate::proto::codec::splice!(@part $part)[0].def;
                    assert!(
                        $crate::proto::codec::item_index!(l.head, first) == l.head.len()
                            && $crate::proto::codec::item_index!(l.items, first) == next,
                        concat!(stringify!($v), ".", stringify!($f), ": not the next item of its row")
                    );
                    let shape = <$ft as $crate::proto::codec::Part>::SHAPE;
                    assert!(
                        shape.len() == $crate::proto::codec::splice!(@part $part).len()
                            && $crate::proto::codec::fits_part(l.items, next, shape),
                        concat!(stringify!($v), ".", stringify!($f), ": its type is not its items' shape")
                    );
                    next += shape.len();
                )*
                assert!(next == l.items.len(), concat!(stringify!($v), ": items of its row it does not hold"));
            )? )* };

            /// Its bytes: its row's head and items, then its entries or
            /// text.
            pub fn wire_len(&self) -> usize {
                let () = Self::HOLDS_ITS_ROW;
                match self { $(
                    $crate::proto::codec::messages!(@pat m $name $v $( ($t) )? $( { $($hf)* $($f)* } )?) =>
                        $crate::proto::codec::messages!(@len m $rows, $kt $v $( ($t) )? $( { $($hf)* $($f)* } )?),
                )* }
            }

            /// The entries its count counts (none for a type without).
            pub fn count(&self) -> usize {
                match self { $(
                    $crate::proto::codec::messages!(@pat m $name $v $( ($t) )?) =>
                        $crate::proto::codec::messages!(@count m $( ($t) )?),
                )* }
            }

            /// Writes it into `b`, its bytes from its head on (sized by the
            /// caller: what does not fit is left out), each field and body
            /// at its row's offsets.
            #[cfg_attr(not(debug_assertions), inline(always))]
            pub(crate) fn write(&self, b: &mut [u8]) {
                match self { $(
                    $crate::proto::codec::messages!(@pat m $name $v $( ($t) )? $( { $($hf)* $($f)* } )?) =>
                        $crate::proto::codec::messages!(@write m b $order, $rows, $kt $v $( ($t) )? $( {
                            $( $hf = $hid, )*
                            $( $f = ($crate::proto::codec::splice!(@part $part)[0].def), )*
                        } )?),
                )* }
            }
        }

        impl<$lt> $view {
            /// An owned copy.
            pub fn to_owned_repr(&self) -> $owned {
                match self { $(
                    $crate::proto::codec::messages!(@pat m $name $v $( ($t) )? $( { $($hf)* $($f)* } )?) =>
                        $crate::proto::codec::messages!(@own m $name $v $( ($t) )? $( { $($hf)* $($f)* } )?),
                )* }
            }
        }

        /// Reads the message of type `t` from its bytes, its head first,
        /// each field and body at its row's offsets (the caller checked
        /// the length: missing bytes read as zeros).
        #[cfg_attr(not(debug_assertions), inline(always))]
        $vis fn $read<$lt>(t: $kt, b: &$lt [u8]) -> $view {
            match t { $(
                $kt::$v => $crate::proto::codec::messages!(@read b $order, $rows, $kt $name $v $( ($t) )? $( {
                    $( $hf = $hid, )*
                    $( $f = ($crate::proto::codec::splice!(@part $part)[0].def), )*
                } )?),
            )* }
        }
    };

    (@items $item:ty;) => { None };
    (@items $item:ty; { $( $part:tt )* }) => {
        Some({
            const ITEMS: &[$item] = $crate::proto::codec::splice![$( $part ),*];
            ITEMS
        })
    };

    (@pat $m:ident $name:ident $v:ident ($t:ty)) => { $name::$v($m) };
    (@pat $m:ident $name:ident $v:ident { $($f:ident)* }) => { $name::$v { $($f),* } };
    (@pat $m:ident $name:ident $v:ident) => { $name::$v { .. } };

    (@len $m:ident $rows:path, $kt:ident $v:ident ($t:ty)) => {
        const { $crate::proto::codec::head_len(&$rows($kt::$v)) }
            + $crate::proto::codec::Body::body_len($m, const { &$rows($kt::$v) })
    };
    (@len $m:ident $rows:path, $kt:ident $v:ident { $($f:ident)* }) => {
        const { $crate::proto::codec::head_len(&$rows($kt::$v)) + $rows($kt::$v).fixed }
            $( + $crate::proto::codec::Part::part_len($f) )*
    };
    (@len $m:ident $rows:path, $kt:ident $v:ident) => {
        const { $crate::proto::codec::head_len(&$rows($kt::$v)) + $rows($kt::$v).fixed }
    };

    (@count $m:ident ($t:ty)) => { $crate::proto::codec::Body::body_count($m) };
    (@count $m:ident) => { 0 };

    (@write $m:ident $b:ident $order:expr, $rows:path, $kt:ident $v:ident ($t:ty)) => {
        if let Some(body) = $b.get_mut(const { $crate::proto::codec::head_len(&$rows($kt::$v)) }..) {
            $crate::proto::codec::Body::body_write($m, const { &$rows($kt::$v) }, body, $order)
        }
    };
    (@write $m:ident $b:ident $order:expr, $rows:path, $kt:ident $v:ident { $( $f:ident = $id:expr, )* }) => {{ $(
        $crate::proto::codec::Part::part_write(
            $f,
            $b,
            const { $crate::proto::codec::row_offset!(&$rows($kt::$v), $id) },
            $order,
        );
    )* }};
    (@write $m:ident $b:ident $order:expr, $rows:path, $kt:ident $v:ident) => { {} };

    (@own $m:ident $name:ident $v:ident ($t:ty)) => {
        $name::$v($crate::proto::codec::Own::own($m))
    };
    (@own $m:ident $name:ident $v:ident { $($f:ident)* }) => {
        $name::$v { $( $f: $crate::proto::codec::Own::own($f) ),* }
    };
    (@own $m:ident $name:ident $v:ident) => { $name::$v };

    (@read $b:ident $order:expr, $rows:path, $kt:ident $name:ident $v:ident ($t:ty)) => {
        $name::$v($crate::proto::codec::ReadBody::body_read(
            const { &$rows($kt::$v) },
            $b.get(const { $crate::proto::codec::head_len(&$rows($kt::$v)) }..).unwrap_or_default(),
            $order,
        ))
    };
    (@read $b:ident $order:expr, $rows:path, $kt:ident $name:ident $v:ident { $( $f:ident = $id:expr, )* }) => {
        $name::$v { $(
            $f: $crate::proto::codec::ReadPart::part_read(
                $b,
                const { $crate::proto::codec::row_offset!(&$rows($kt::$v), $id) },
                $order,
            ),
        )* }
    };
    (@read $b:ident $order:expr, $rows:path, $kt:ident $name:ident $v:ident) => { $name::$v };
}

pub(crate) use {item_index, item_offset, messages, record, row_offset, splice};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::layout::{Show, hidden};

    #[derive(Debug, Clone, Copy)]
    enum T {
        A,
        B,
        C,
    }

    impl T {
        const fn index(self) -> u16 {
            self as u16
        }
    }

    const ITEMS: &[Item<T>] = &[
        hidden(T::A, Prim::Int(Int::U16, Show::Dec), "a"),
        hidden(T::B, Prim::F32, "b"),
        hidden(T::C, Prim::Int(Int::U8, Show::Dec), "c"),
    ];

    record! {
        #[derive(Debug, PartialEq)]
        struct Abc in [ITEMS] {
            a: u16 = T::A,
            b: f32 = T::B,
            c: u8 = T::C,
        }
    }

    /// A record reads and writes each field at its row's offset in the
    /// order asked; the bytes a short slice lacks read as zeros (0x3f000000
    /// is 0.5), and it is written what fits.
    #[test]
    fn a_record_reads_and_writes_at_its_rows_offsets() {
        let v = Abc {
            a: 0x0102,
            b: 1.5,
            c: 9,
        };
        assert_eq!(Abc::LEN, 7);
        let mut be = [0u8; 7];
        v.write(&mut be, ByteOrder::Big);
        assert_eq!(be, [1, 2, 0x3f, 0xc0, 0, 0, 9]);
        assert_eq!(Abc::read(&be, ByteOrder::Big), v);
        let mut le = [0u8; 7];
        v.write(&mut le, ByteOrder::Little);
        assert_eq!(le, [2, 1, 0, 0, 0xc0, 0x3f, 9]);
        assert_eq!(Abc::read(&le, ByteOrder::Little), v);
        assert_eq!(
            Abc::read(&be[..3], ByteOrder::Big),
            Abc {
                a: 0x0102,
                b: 0.5,
                c: 0
            }
        );
        let mut short = [0u8; 3];
        v.write(&mut short, ByteOrder::Big);
        assert_eq!(short, [1, 2, 0]);
    }

    record! {
        #[derive(Debug, Clone, Copy, PartialEq)]
        struct Inner in const INNER: &[Item<T>] {
            a: u16 = [hidden(T::A, Prim::Int(Int::U16, Show::Dec), "a")],
            b: f32 = [hidden(T::B, Prim::F32, "b")],
        }
    }

    record! {
        #[derive(Debug, PartialEq)]
        struct Outer in const OUTER: &[Item<T>] {
            c: u8 = [hidden(T::C, Prim::Int(Int::U8, Show::Dec), "c")],
            inner: Inner = INNER,
        }
    }

    /// A record's field that is a record names its row: the row holds
    /// its items, spliced in after the items before it, and the field is
    /// read and written at its first item's offset.
    #[test]
    fn a_record_holds_a_sub_row() {
        let labels: Vec<_> = OUTER.iter().map(|i| i.label).collect();
        assert_eq!(labels, ["c", "a", "b"]);
        const TWICE: &[Item<T>] = splice![INNER, [OUTER[0]], INNER];
        assert_eq!(TWICE.len(), 5);
        assert_eq!(size(TWICE), 13);
        let v = Outer {
            c: 9,
            inner: Inner { a: 0x0102, b: 1.5 },
        };
        assert_eq!(Outer::LEN, 7);
        let mut b = [0u8; 7];
        v.write(&mut b, ByteOrder::Big);
        assert_eq!(b, [9, 1, 2, 0x3f, 0xc0, 0, 0]);
        assert_eq!(Outer::read(&b, ByteOrder::Big), v);
    }

    const ENTRY: crate::proto::layout::Entry<T> = crate::proto::layout::entry(
        T::C,
        &[
            hidden(T::A, Prim::Int(Int::U16, Show::Dec), "a"),
            hidden(T::C, Prim::Int(Int::U8, Show::Dec), "c"),
        ],
    );
    const COUNTED: Layout<T> = crate::proto::layout::layout(
        &[],
        &[
            hidden(T::B, Prim::F32, "b"),
            hidden(T::C, Prim::Count(Int::U16), "n"),
        ],
        Some(&ENTRY),
        &[],
    );

    record! {
        #[derive(Debug, Clone, Copy, PartialEq)]
        struct Ac in [ENTRY.items] {
            a: u16 = T::A,
            c: u8 = T::C,
        }
    }

    /// A counted row's count is where its row puts it, as wide as the row
    /// says (a u16 here), its entries after its fixed items; read back
    /// borrowed, whole entries only.
    #[test]
    fn counted_entries_are_where_the_row_puts_them() {
        assert_eq!(count_item(&COUNTED), Some((4, Int::U16)));
        assert_eq!(max_count(&COUNTED), 65_535);
        assert_eq!(counted_len(&COUNTED, 2), 12);
        let list = vec![Ac { a: 0x0102, c: 3 }, Ac { a: 4, c: 5 }];
        for order in ByteOrder::ALL {
            let mut b = [0xffu8; 12];
            write_entries(&COUNTED, &list, &mut b, order);
            let n = match order {
                ByteOrder::Big => [0, 2],
                ByteOrder::Little => [2, 0],
            };
            assert_eq!(b[..6], [0xff, 0xff, 0xff, 0xff, n[0], n[1]]);
            assert_eq!(read_count(&COUNTED, &b, order), Some(2));
            let e: Entries<'_, Ac> = read_entries(&COUNTED, &b, order);
            assert_eq!(e.iter().collect::<Vec<_>>(), list);
            assert_eq!((e.len(), e.get(1), e.get(2)), (2, Some(list[1]), None));
            let cut: Entries<'_, Ac> = read_entries(&COUNTED, &b[..11], order);
            assert_eq!(cut.len(), 1);
            assert_eq!(List::<Ac>::count(&cut), 1);
        }
        assert_eq!(read_count(&COUNTED, &[0; 5], ByteOrder::Big), None);
        static PLAIN: Layout<T> = crate::proto::layout::layout(&[], ITEMS, None, &[]);
        assert_eq!((count_item(&PLAIN), max_count(&PLAIN)), (None, 0));
    }

    /// A text's length is where the row puts it, as wide as it says; the
    /// text follows the fixed items.
    #[test]
    fn a_text_is_where_the_row_puts_it() {
        use crate::proto::layout::Quote;
        static TEXT: Layout<T> = crate::proto::layout::layout(
            &[],
            &[
                hidden(T::A, Prim::Int(Int::U8, Show::Dec), "a"),
                hidden(T::B, Prim::Len(Int::U16), "n"),
                hidden(T::C, Prim::Text(Quote::Value), "t"),
            ],
            None,
            &[],
        );
        assert_eq!(text_len_item(&TEXT), Some((1, Int::U16)));
        assert_eq!(text_len_item(&COUNTED), None);
        let mut b = [0xffu8; 6];
        write_text(&TEXT, b"abc", &mut b, ByteOrder::Little);
        assert_eq!(b, [0xff, 3, 0, b'a', b'b', b'c']);
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum K {
        One,
        Two,
        Three,
    }

    const ONE_HEAD: &[Item<T>] = &[hidden(T::A, Prim::Int(Int::U16, Show::Dec), "a")];

    /// `One`: a head of `a`, then its items (`c`, declared with its
    /// field); `Two`: [`COUNTED`]; `Three`: none.
    const fn krow(k: K) -> Layout<T> {
        match k {
            K::One => {
                let items = match K::One.fields_row() {
                    Some(items) => items,
                    None => &[],
                };
                crate::proto::layout::layout(ONE_HEAD, items, None, &[])
            }
            K::Two => COUNTED,
            K::Three => crate::proto::layout::layout(&[], &[], None, &[]),
        }
    }

    messages! {
        #[derive(Debug, PartialEq)]
        enum Msg<L> {
            One { a: u16 = T::A; c: u8 = [hidden(T::C, Prim::Int(Int::U8, Show::Dec), "c")] },
            Two(L),
            Three,
        }
        type K, fn kind;
        rows krow, ByteOrder::Little;
        items Item<T>;
        read read_msg<'a> -> Msg<Entries<'a, Ac>>;
        owned Msg<Vec<Ac>>;
    }

    /// The three kinds of a message: fields at their row's offsets (the
    /// head's too), a body after the head (counted entries), none; read
    /// back as written, and owned. A field-by-field type's row holds the
    /// items its fields declare.
    #[test]
    fn messages_read_and_write_at_their_rows_offsets() {
        assert_eq!(K::One.fields_row().map(|i| i.len()), Some(1));
        assert!(K::Two.fields_row().is_none() && K::Three.fields_row().is_none());
        let one = Msg::<Vec<Ac>>::One { a: 0x0102, c: 7 };
        assert_eq!((one.kind(), one.wire_len(), one.count()), (K::One, 3, 0));
        let mut b = [0u8; 3];
        one.write(&mut b);
        assert_eq!(b, [2, 1, 7]);
        assert_eq!(read_msg(K::One, &b).to_owned_repr(), one);
        let two = Msg::Two(vec![Ac { a: 1, c: 2 }]);
        assert_eq!((two.kind(), two.wire_len(), two.count()), (K::Two, 9, 1));
        let mut b = [0u8; 9];
        two.write(&mut b);
        assert_eq!(b, [0, 0, 0, 0, 1, 0, 1, 0, 2]);
        let read = read_msg(K::Two, &b);
        assert_eq!((read.kind(), read.count()), (K::Two, 1));
        assert_eq!(read.to_owned_repr(), two);
        assert_eq!(Msg::<Vec<Ac>>::Three.wire_len(), 0);
        assert_eq!(read_msg(K::Three, &[]), Msg::Three);
    }

    /// A text after its `u8` length: written, and read back as long as
    /// its length says.
    #[test]
    fn a_text_after_its_length() {
        let mut b = [0xffu8; 5];
        b"abc".to_vec().part_write(&mut b, 1, ByteOrder::Big);
        assert_eq!(b, [0xff, 3, b'a', b'b', b'c']);
        assert_eq!(text8(&b, 1), b"abc");
        assert_eq!(text8(&[9, b'x'], 0), b"x");
        assert_eq!(text8(&[], 0), b"");
    }

    #[test]
    fn shapes_compare_size_and_kind() {
        assert!(fits(ITEMS, 0, &[Shape::Uint(2), Shape::Float(4)]));
        assert!(!fits(ITEMS, 0, &[Shape::Sint(2)]));
        assert!(!fits(ITEMS, 2, &[Shape::Uint(1), Shape::Uint(1)]));
        assert!(same_shapes(ITEMS, ITEMS) && !same_shapes(ITEMS, &ITEMS[1..]));
        assert_eq!(offset(ITEMS, 2), 6);
    }
}
