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
//! Reading allocates nothing and borrows nothing (a value is copied out of
//! the bytes): one length check, then each value at its constant offset in
//! bytes of a constant length, as fast as reads written by hand. Bytes
//! missing at the end read as zeros (the view checks the length first, so
//! the decoder never meets them). Writing into a
//! slice the caller sized skips a value that does not fit.

use super::layout::{ByteOrder, Int, Item, Layout, Prim, array};
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
}

impl Shape {
    const fn same(self, other: Shape) -> bool {
        match (self, other) {
            (Shape::Uint(a), Shape::Uint(b))
            | (Shape::Sint(a), Shape::Sint(b))
            | (Shape::Float(a), Shape::Float(b))
            | (Shape::Bytes(a), Shape::Bytes(b)) => a == b,
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

/// Declares a struct read from and written to a row's items:
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
/// Each field names the item it starts at; its type ([`Wire`]) says how
/// many items it holds. The struct gets [`Record`] (read and write at the
/// row's offsets), and the compile-time check that it holds the row: its
/// fields in order, each of the shape of its items, none left over.
macro_rules! record {
    (
        $(#[$m:meta])*
        $vis:vis struct $name:ident in [$items:expr] {
            $( $(#[$fm:meta])* $fvis:vis $field:ident: $ty:ty = $id:expr ),* $(,)?
        }
    ) => {
        $(#[$m])*
        $vis struct $name { $( $(#[$fm])* $fvis $field: $ty, )* }

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
                $name { $(
                    $field: <$ty as $crate::proto::codec::Wire>::get(
                        b,
                        const { $crate::proto::codec::item_offset!($items, $id) },
                        order,
                    ),
                )* }
            }

            #[cfg_attr(not(debug_assertions), inline(always))]
            fn write(&self, b: &mut [u8], order: $crate::proto::layout::ByteOrder) {
                $(
                    $crate::proto::codec::Wire::put(
                        &self.$field,
                        b,
                        const { $crate::proto::codec::item_offset!($items, $id) },
                        order,
                    );
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
}

pub(crate) use {item_index, item_offset, record};

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

    #[test]
    fn shapes_compare_size_and_kind() {
        assert!(fits(ITEMS, 0, &[Shape::Uint(2), Shape::Float(4)]));
        assert!(!fits(ITEMS, 0, &[Shape::Sint(2)]));
        assert!(!fits(ITEMS, 2, &[Shape::Uint(1), Shape::Uint(1)]));
        assert!(same_shapes(ITEMS, ITEMS) && !same_shapes(ITEMS, &ITEMS[1..]));
        assert_eq!(offset(ITEMS, 2), 6);
    }
}
