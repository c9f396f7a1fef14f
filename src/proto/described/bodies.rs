//! A described packet's one-line text, copied where its packet repeats
//! one but for its sequence number and acks.
//!
//! A described message is the whole packet, header included: a game
//! server's snapshot sent to eight clients is eight packets whose bytes
//! differ only in the header's sequence number and acks, so their texts
//! differ only in those numbers. A packet's text is remembered by its
//! bytes but for those of the head's numbers that decide nothing else
//! ([`Head`]: an integer or a float among the root type's leading fields
//! in fixed places that no later field reads, with no `valid`, not the
//! message type): the next packet that has the same copies it, each such
//! number written fresh where the first had its own. On Starstrike's bench
//! capture 25 200 of the first 30 000 packets repeat one kept (the
//! snapshots' copies, and the clients' repeated inputs).
//!
//! The copy is the walk's text, byte for byte: the walk is sequential, and
//! what it writes of a field depends only on the field's bytes and on the
//! values of earlier fields of its own `seq` that later fields read
//! ([`CAttr::slot`](super::decode::CAttr::slot)); a number left out decides
//! nothing but its own text, which is written by the walk's function
//! (`layout::value_text`) from the value the walk would tell
//! ([`Compiled::fixed_root_value`]). Everything else is compared: the
//! description, the length, the head's other bytes (the magic, the message
//! type) and every byte after the head. Where the first piece from the
//! wire begins ([`Out::wire_piece`], for JSON's escape search) is kept
//! with the text.
//!
//! Fixed size, allocated once per thread ([`PLACES`] places, a packet in
//! the one its bytes after the head name, the last one written there
//! kept): a place shared only costs the walk again. A protobuf
//! description's packets, a head with no number to leave out, and packets
//! or texts longer than a place holds are walked into the line as before.

use super::Described;
use super::decode::{CKind, Compiled, Events, Side};
use crate::engine::digits::{Decimal, int_into};
use crate::engine::out::Out;
use crate::proto::field::{Field, GroupDefs, Value};
use crate::proto::layout::{FieldLine, value_text};
use std::cell::RefCell;
use std::fmt;

/// The longest head, in bytes.
const HEAD_MAX: usize = 32;
/// The numbers of a head left out of the comparison, at most.
pub(super) const MASKED: usize = 4;
/// The places; a tick's packets to every client are a few dozen at most.
pub(super) const PLACES: usize = 64;
/// The longest packet remembered, in bytes.
pub(super) const KEY: usize = 512;
/// The longest text remembered, in bytes (a Starstrike snapshot of four
/// entities writes some 450).
const TEXT: usize = 2048;

/// The root type's leading fields in fixed places ([`Compiled::prefix`]),
/// and which of their numbers are left out of the comparison.
#[derive(Debug, Clone)]
pub struct Head {
    /// The bytes the head takes.
    len: usize,
    /// `0xff` for a byte compared, `0` for one of a number left out.
    mask: [u8; HEAD_MAX],
    /// The numbers left out, in wire order: their index in the root type
    /// and their registered field.
    masked: Vec<(usize, u16)>,
}

impl Head {
    /// The head of a layout's packets, if one of its numbers may be left
    /// out of the comparison (none for a protobuf description).
    pub fn of(c: &Compiled) -> Option<Head> {
        if c.proto.is_some() {
            return None;
        }
        let mut head = Head {
            len: 0,
            mask: [0xff; HEAD_MAX],
            masked: Vec::new(),
        };
        for (i, (ca, &at)) in c.root.attrs.iter().zip(&c.prefix).enumerate() {
            let (n, number) = match &ca.kind {
                CKind::Int { bytes, .. } | CKind::Float { bytes, .. } => {
                    (usize::from(*bytes), true)
                }
                CKind::Contents(b) => (b.len(), false),
                _ => break,
            };
            let end = at
                .checked_add(n)
                .filter(|&e| e <= HEAD_MAX && at == head.len);
            let Some(end) = end else {
                break;
            };
            let type_field = c.strict_enum.is_some_and(|(f, _)| f == ca.field);
            let decides = ca.slot.is_some() || ca.valid.is_some() || type_field;
            if number && !decides && head.masked.len() < MASKED {
                head.mask.get_mut(at..end).unwrap_or_default().fill(0);
                head.masked.push((i, ca.field));
            }
            head.len = end;
        }
        (!head.masked.is_empty()).then_some(head)
    }

    /// Whether `a` and `b` (a head's bytes each) agree but for the bytes
    /// left out.
    #[inline]
    fn same(&self, a: &[u8], b: &[u8]) -> bool {
        let mask = self.mask.get(..self.len).unwrap_or_default();
        a.iter()
            .zip(b)
            .zip(mask)
            .all(|((x, y), m)| (x ^ y) & m == 0)
    }

    /// The place of `p`, if it holds a head and fits one.
    #[inline]
    pub(super) fn place(&self, p: &[u8]) -> Option<usize> {
        let body = p.get(self.len..).filter(|_| p.len() <= KEY)?;
        Some(place_of(body, p.len()))
    }

    /// Whether a place that holds `kept` (the description's address, the
    /// packet's length, its bytes) holds `p` of description `id`: the same
    /// bytes but for the numbers left out.
    #[inline]
    pub(super) fn holds(
        &self,
        (d, len, key): (usize, usize, &[u8; KEY]),
        id: usize,
        p: &[u8],
    ) -> bool {
        let kept = key.get(..p.len()).unwrap_or_default();
        d == id
            && len == p.len()
            && kept.get(self.len..) == p.get(self.len..)
            && self.same(kept, p.get(..self.len).unwrap_or_default())
    }

    /// The numbers left out: their index in the root type and their
    /// registered field.
    pub fn masked(&self) -> &[(usize, u16)] {
        &self.masked
    }
}

/// What a walk told of a packet (the analysis's keys and violations),
/// remembered as a text is ([`Place`]): by the packet's bytes but for the
/// head's numbers left out, which the caller reads again. Fixed size,
/// allocated once.
pub struct Seen<T> {
    places: Vec<(usize, usize, [u8; KEY], T)>,
}

impl<T: Copy> Seen<T> {
    /// [`PLACES`] places, each holding `empty` and no packet.
    pub fn new(empty: T) -> Seen<T> {
        Seen {
            places: vec![(0, 0, [0; KEY], empty); PLACES],
        }
    }

    /// What was kept for a packet of description `d` with the bytes of
    /// `p` but for the numbers `head` leaves out.
    #[inline]
    pub fn get(&self, d: &'static Described, head: &Head, p: &[u8]) -> Option<&T> {
        let (id, len, key, value) = self.places.get(head.place(p)?)?;
        let id_of = std::ptr::from_ref(d) as usize;
        head.holds((*id, *len, key), id_of, p).then_some(value)
    }

    /// Keeps `value` for `p` (a packet of description `d`), in its place.
    pub fn put(&mut self, d: &'static Described, head: &Head, p: &[u8], value: T) {
        let Some(place) = head.place(p).and_then(|at| self.places.get_mut(at)) else {
            return;
        };
        if let Some(key) = place.2.get_mut(..p.len()) {
            key.copy_from_slice(p);
            *place = (std::ptr::from_ref(d) as usize, p.len(), place.2, value);
        }
    }
}

/// A packet's text, and the packet it was written for.
struct Place {
    /// The description's address (0: empty).
    d: usize,
    len: usize,
    key: [u8; KEY],
    text: [u8; TEXT],
    text_len: usize,
    /// Where its first piece from the wire begins.
    wire: Option<usize>,
    /// Every byte of the text is ASCII.
    ascii: bool,
    /// Where the value of each number left out is in the text.
    values: [(usize, usize); MASKED],
}

thread_local! {
    static PLACES_OF_THREAD: RefCell<Vec<Place>> = RefCell::new(
        (0..PLACES)
            .map(|_| Place {
                d: 0,
                len: 0,
                key: [0; KEY],
                text: [0; TEXT],
                text_len: 0,
                wire: None,
                ascii: true,
                values: [(0, 0); MASKED],
            })
            .collect(),
    );
}

/// The place of a packet: the first and last eight bytes after its head,
/// and its length, mixed (Fibonacci hashing).
#[inline]
fn place_of(body: &[u8], len: usize) -> usize {
    let first = match body.first_chunk::<8>() {
        Some(b) => u64::from_le_bytes(*b),
        None => body.iter().fold(0, |h, &b| h << 8 | u64::from(b)),
    };
    let last = body.last_chunk::<8>().map_or(0, |b| u64::from_le_bytes(*b));
    let mixed = first ^ last.rotate_left(29) ^ (len as u64) << 48;
    (mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - PLACES.trailing_zeros())) as usize
}

/// Writes the one-line text of `p` (a layout's packet, `head` its head):
/// copied where its place holds the same packet but for the numbers left
/// out, else walked and kept there.
pub(super) fn write(d: &'static Described, head: &Head, p: &[u8], f: &mut impl Out) -> fmt::Result {
    let Some(at) = head.place(p) else {
        return walk(d, p, f);
    };
    let id = std::ptr::from_ref(d) as usize;
    PLACES_OF_THREAD
        .try_with(|places| {
            let Ok(mut places) = places.try_borrow_mut() else {
                return walk(d, p, f);
            };
            let Some(place) = places.get_mut(at) else {
                return walk(d, p, f);
            };
            if head.holds((place.d, place.len, &place.key), id, p) {
                return copy(d, head, p, place, f);
            }
            if keep(d, head, p, place) {
                return put(f, place, 0, place.text_len);
            }
            walk(d, p, f)
        })
        .unwrap_or_else(|_| walk(d, p, f))
}

/// The text by the walk alone.
pub(super) fn walk(d: &'static Described, p: &[u8], f: &mut impl Out) -> fmt::Result {
    let mut sink = FieldLine::new(f, false, d.compiled.line_labels);
    let _ = d.compiled.walk_with(p, Side::Any, &mut sink);
    sink.result()
}

/// The text kept in `place`, each number left out written fresh from `p`.
fn copy(
    d: &'static Described,
    head: &Head,
    p: &[u8],
    place: &Place,
    f: &mut impl Out,
) -> fmt::Result {
    let mut values = [Value::None; MASKED];
    for ((i, _), v) in head.masked.iter().zip(&mut values) {
        match d.compiled.fixed_root_value(p, *i) {
            Some(value) => *v = value,
            None => return walk(d, p, f),
        }
    }
    let mut from = 0;
    for (&(start, end), v) in place.values.iter().zip(&values).take(head.masked.len()) {
        put(f, place, from, start)?;
        value_text(f, v)?;
        from = end;
    }
    put(f, place, from, place.text_len)
}

/// The text's bytes from `from` to `to`, the wire's mark told where it is.
fn put(f: &mut impl Out, place: &Place, from: usize, to: usize) -> fmt::Result {
    let piece = |a: usize, b: usize| place.text.get(a..b).unwrap_or_default();
    match place.wire.filter(|w| (from..=to).contains(w)) {
        Some(w) => {
            bytes(f, piece(from, w), place.ascii)?;
            f.wire_piece();
            bytes(f, piece(w, to), place.ascii)
        }
        None => bytes(f, piece(from, to), place.ascii),
    }
}

/// A piece of a kept text (ASCII, or UTF-8 cut where pieces met).
#[inline]
fn bytes(f: &mut impl Out, b: &[u8], ascii: bool) -> fmt::Result {
    if ascii {
        return f.ascii(b);
    }
    f.s(std::str::from_utf8(b).map_err(|_| fmt::Error)?)
}

/// Walks `p` into `place`'s text, keeping it with the packet; false (the
/// place emptied) where it does not fit, or a number left out was not told.
fn keep(d: &'static Described, head: &Head, p: &[u8], place: &mut Place) -> bool {
    place.d = 0;
    let mut out = Keep {
        buf: &mut place.text,
        n: 0,
        wire: None,
        ascii: true,
        fits: true,
    };
    let mut split = Marks {
        line: FieldLine::new(&mut out, false, d.compiled.line_labels),
        masked: &head.masked,
        values: [(0, 0); MASKED],
        told: 0,
        lost: false,
    };
    let _ = d.compiled.walk_with(p, Side::Any, &mut split);
    let told_all = split.told == head.masked.len() && !split.lost;
    let values = split.values;
    let (fits, n, wire, ascii) = (out.fits, out.n, out.wire, out.ascii);
    let Some(key) = place.key.get_mut(..p.len()).filter(|_| fits && told_all) else {
        return false;
    };
    key.copy_from_slice(p);
    place.d = std::ptr::from_ref(d) as usize;
    place.len = p.len();
    place.text_len = n;
    place.wire = wire;
    place.ascii = ascii;
    place.values = values;
    true
}

/// The walk's events into the line, marking where the value of each
/// number left out is.
struct Marks<'h, 'o, 'b> {
    line: FieldLine<'o, Keep<'b>>,
    masked: &'h [(usize, u16)],
    values: [(usize, usize); MASKED],
    told: usize,
    /// A number left out wrote less than its value (never: kept from use).
    lost: bool,
}

impl Events for Marks<'_, '_, '_> {
    fn field(&mut self, field: Field<'_>) {
        Events::field(&mut self.line, field);
    }
    fn field_at(&mut self, at: u16, field: Field<'_>) {
        if self.masked.get(self.told).is_none_or(|&(_, f)| f != at) {
            return self.line.field_at(at, field);
        }
        let mut len = Count(0);
        let _ = value_text(&mut len, &field.value);
        self.line.field_at(at, field);
        let end = self.line.out().n;
        match (end.checked_sub(len.0), self.values.get_mut(self.told)) {
            (Some(start), Some(v)) => *v = (start, end),
            _ => self.lost = true,
        }
        self.told += 1;
    }
    fn enter(&mut self, node: Field<'_>) {
        Events::enter(&mut self.line, node);
    }
    fn leave(&mut self) {
        Events::leave(&mut self.line);
    }
    fn wants_any(&mut self, key: usize, defs: &GroupDefs<'_>) -> bool {
        Events::wants_any(&mut self.line, key, defs)
    }
    fn done(&self) -> bool {
        Events::done(&self.line)
    }
    fn judges(&self) -> bool {
        Events::judges(&self.line)
    }
    fn cut(&mut self, end: usize) {
        Events::cut(&mut self.line, end);
    }
}

/// A text written into a place's bytes: where the first piece from the
/// wire (or through `Display`, as [`Marked`](crate::engine::out::Marked)
/// counts it) begins, whether it is all ASCII, and whether it fit.
struct Keep<'b> {
    buf: &'b mut [u8; TEXT],
    n: usize,
    wire: Option<usize>,
    ascii: bool,
    fits: bool,
}

impl Keep<'_> {
    #[inline]
    fn put(&mut self, b: &[u8]) {
        match self.buf.get_mut(self.n..self.n + b.len()) {
            Some(dst) => {
                dst.copy_from_slice(b);
                self.n += b.len();
            }
            None => self.fits = false,
        }
    }
}

impl Out for Keep<'_> {
    #[inline]
    fn s(&mut self, s: &str) -> fmt::Result {
        self.ascii &= s.is_ascii();
        self.put(s.as_bytes());
        Ok(())
    }
    #[inline]
    fn ascii(&mut self, b: &[u8]) -> fmt::Result {
        self.ascii &= b.is_ascii();
        self.put(b);
        Ok(())
    }
    fn display(&mut self, v: &dyn fmt::Display) -> fmt::Result {
        use std::fmt::Write as _;
        self.wire_piece();
        // Into the place's bytes through `fmt::Write`.
        struct W<'k, 'b>(&'k mut Keep<'b>);
        impl fmt::Write for W<'_, '_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0.s(s)
            }
        }
        write!(W(self), "{v}")
    }
    #[inline]
    fn wire_piece(&mut self) {
        if self.wire.is_none() {
            self.wire = Some(self.n);
        }
    }
    #[inline]
    fn int(&mut self, n: impl itoa::Integer + Decimal) -> fmt::Result {
        match self
            .buf
            .get_mut(self.n..self.n + 24)
            .and_then(|d| <&mut [u8; 24]>::try_from(d).ok())
        {
            Some(dst) => self.n += int_into(dst, n),
            None => self.s(itoa::Buffer::new().format(n))?,
        }
        Ok(())
    }
}

/// The bytes a text takes.
struct Count(usize);

impl Out for Count {
    fn s(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
    fn ascii(&mut self, b: &[u8]) -> fmt::Result {
        self.0 += b.len();
        Ok(())
    }
    fn display(&mut self, v: &dyn fmt::Display) -> fmt::Result {
        use std::fmt::Write as _;
        struct W<'c>(&'c mut Count);
        impl fmt::Write for W<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                self.0.s(s)
            }
        }
        write!(W(self), "{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::{PLACES_OF_THREAD, walk, write};
    use crate::engine::out::Marked;
    use crate::proto::described::{
        self, Described, starstrike_ksy as starstrike, strs_chat as chat,
        strs_snapshot as snapshot, variants,
    };

    /// The text of `p` for JSON (its bytes, and where the first from the
    /// wire begins), by `write` or by the walk alone.
    fn json(d: &'static Described, p: &[u8], copied: bool) -> (Vec<u8>, usize) {
        let mut out = b"{\"text\":\"".to_vec();
        let mut marked = Marked::new(&mut out);
        let head = d.text_head.as_ref().unwrap();
        if copied {
            write(d, head, p, &mut marked).unwrap();
        } else {
            walk(d, p, &mut marked).unwrap();
        }
        let from = marked.finish();
        drop(marked);
        (out, from)
    }

    /// Whether the place of `p` holds its text (a packet of the same bytes
    /// but for the numbers left out).
    fn kept(d: &'static Described, p: &[u8]) -> bool {
        let head = d.text_head.as_ref().unwrap();
        let Some(at) = head.place(p) else {
            return false;
        };
        PLACES_OF_THREAD.with(|places| {
            let places = places.borrow();
            let place = &places[at];
            head.holds(
                (place.d, place.len, &place.key),
                std::ptr::from_ref(d) as usize,
                p,
            )
        })
    }

    /// The sequence number and the ack bits are left out; the magic and
    /// the message type (which the payload's switch reads) are compared.
    /// The shipped Vessel and Timewarp have no such number in their heads.
    #[test]
    fn the_heads_numbers_that_decide_nothing_are_left_out() {
        let d = starstrike();
        let head = d.text_head.as_ref().unwrap();
        assert_eq!(head.len, 12);
        let names: Vec<&str> = head
            .masked
            .iter()
            .map(|&(_, f)| d.compiled.defs[usize::from(f)].label)
            .collect();
        assert_eq!(names, ["sequence_number", "ack_bits"]);
        assert_eq!(
            &head.mask[..12],
            &[255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 0]
        );
        for (file, text) in described::SHIPPED {
            let d = described::parse(file, text).unwrap();
            assert_eq!(d.text_head.is_some(), file.contains("starstrike"), "{file}");
        }
    }

    /// A packet's text is the walk's, byte for byte, and its first byte
    /// from the wire where the walk's is: for every truncation and one-byte
    /// change of a snapshot and a chat message (written after one another,
    /// so that many are copies of one kept), each also with other sequence
    /// numbers and acks (copies of it, all of them).
    #[test]
    fn a_copied_text_is_the_walks() {
        let d = starstrike();
        let mut copies = 0;
        for whole in [snapshot(3), chat(), snapshot(0)] {
            for p in variants(&whole) {
                assert_eq!(json(d, &p, true), json(d, &p, false), "{p:02x?}");
                for (at, x) in [(7, 0x12), (6, 0xff), (11, 0x80), (8, 0x01)] {
                    let mut q = p.clone();
                    if let Some(b) = q.get_mut(at) {
                        *b ^= x;
                    }
                    copies += usize::from(kept(d, &q));
                    assert_eq!(json(d, &q, true), json(d, &q, false), "{q:02x?}");
                }
            }
        }
        assert!(copies > 1000, "{copies}");
    }

    /// A packet that differs from the one kept in anything but its
    /// sequence number and acks is walked, not copied.
    #[test]
    fn only_the_numbers_left_out_may_differ() {
        let d = starstrike();
        let p = snapshot(2);
        let _ = json(d, &p, true);
        let mut q = p.clone();
        q[6..12].copy_from_slice(&[0x12, 0x34, 0xff, 0xff, 0xff, 0xff]);
        assert!(kept(d, &q));
        let text = String::from_utf8(json(d, &q, true).0).unwrap();
        assert!(
            text.contains(" sequence_number=4660 ack_bits=4294967295 tick=256 "),
            "{text}"
        );
        for at in [0, 3, 4, 5, 12, 20, p.len() - 1] {
            let mut r = q.clone();
            r[at] ^= 1;
            assert!(!kept(d, &r), "{at}");
        }
        assert!(!kept(d, &q[..q.len() - 1]));
    }
}
