//! Where a packet's text goes, written once for every output: the [`Out`]
//! trait (a formatter, a line's bytes, a reused string), the [`WriteText`]
//! writers behind every one-line text and tree value, and numbers and floats
//! written as `fmt` writes them without its machinery.

use super::digits::{Decimal, int_into, put_int};
use std::fmt;

/// A text written once per message of every packet line and JSON Lines
/// object: what its `Display` writes, also written straight into a line's
/// bytes. The built-in and described protocols hand a [`Written`], whose
/// `Display` and bytes are one [`WriteText`] writer; the default goes
/// through `fmt`.
pub trait TextBytes: fmt::Display {
    /// Appends what `Display` writes to `out`.
    fn write_bytes(&self, out: &mut Vec<u8>) {
        use std::io::Write as _;
        let _ = write!(out, "{self}");
    }

    /// Appends what `Display` writes to `out`, for a JSON string, and tells
    /// where in `out` the bytes that may need an escape begin (`out.len()`
    /// when none can): a writer that knows which of its pieces come from
    /// the wire ([`Out::wire_piece`], [`Marked`]) spares JSON Lines the
    /// search of the rest. By default, all of them.
    fn write_json(&self, out: &mut Vec<u8>) -> usize {
        let start = out.len();
        self.write_bytes(out);
        start
    }
}

/// Where a text goes: a formatter (its `Display`), a line's bytes (packet
/// lines and JSON Lines, without `fmt`'s machinery) or a reused string (the
/// field tree of `-V`). A text written by one generic function receives the
/// same pieces whichever it goes to, so it is the same text in each.
pub trait Out {
    fn s(&mut self, s: &str) -> fmt::Result;
    /// ASCII bytes.
    fn ascii(&mut self, b: &[u8]) -> fmt::Result;
    /// A value through its `Display` (rare pieces: a control character's
    /// escape).
    fn display(&mut self, v: &dyn fmt::Display) -> fmt::Result;

    /// Told before a piece whose bytes come from the wire (a text field's)
    /// rather than from the protocol's own tables or digits: [`Marked`]
    /// remembers where the first one began.
    #[inline]
    fn wire_piece(&mut self) {}

    /// An integer, as `{}` writes it.
    #[inline]
    fn int(&mut self, n: impl itoa::Integer + Decimal) -> fmt::Result {
        self.s(itoa::Buffer::new().format(n))
    }

    /// `label` then an integer. Always inlined: the label is a literal, and
    /// its copy then one of known length (a third of the text's cost when
    /// it was not).
    #[inline(always)]
    fn labelled(&mut self, label: &str, n: impl itoa::Integer + Decimal) -> fmt::Result {
        self.s(label)?;
        self.int(n)
    }

    /// A float, as `{}` writes it: its shortest digits, never with an
    /// exponent. An integer whose neighbours are a unit apart or closer
    /// ([`Float::small_int`]: most of Starstrike's positions, many of
    /// Battlegrounds' and lwar's) is its digits, written as an integer:
    /// `zmij` and the move of its point cost some 150 instructions a float.
    /// An `f32` of one to three digits after its point (Starstrike's
    /// inputs: `-0.9`, `0.25`) is found by arithmetic on its decimals
    /// ([`Float::short_decimal`]), some 50 instructions rather than 330.
    #[inline]
    fn float(&mut self, v: impl Float) -> fmt::Result {
        match v.small_int() {
            Some(i) => self.int(i),
            None => float(self, v),
        }
    }

    /// `raw` in binary, at least `width` digits, as `{raw:0width$b}` writes it.
    fn bits(&mut self, raw: u64, width: u8) -> fmt::Result {
        let digits = (u64::BITS - raw.leading_zeros()).max(1) as usize;
        zeros(self, usize::from(width).saturating_sub(digits))?;
        let mut all = [b'0'; 64];
        for (i, b) in all.iter_mut().rev().take(digits).enumerate() {
            *b += ((raw >> i) & 1) as u8;
        }
        self.ascii(all.get(64 - digits..).unwrap_or_default())
    }
}

impl Out for fmt::Formatter<'_> {
    fn s(&mut self, s: &str) -> fmt::Result {
        self.write_str(s)
    }
    fn ascii(&mut self, b: &[u8]) -> fmt::Result {
        self.write_str(std::str::from_utf8(b).unwrap_or_default())
    }
    fn display(&mut self, v: &dyn fmt::Display) -> fmt::Result {
        fmt::Display::fmt(v, self)
    }
}

impl Out for Vec<u8> {
    #[inline]
    fn s(&mut self, s: &str) -> fmt::Result {
        put_small(self, s.as_bytes());
        Ok(())
    }
    #[inline]
    fn ascii(&mut self, b: &[u8]) -> fmt::Result {
        // Fixed-length pieces (a key byte's eight bits): one copy of known
        // length.
        self.extend_from_slice(b);
        Ok(())
    }
    fn display(&mut self, v: &dyn fmt::Display) -> fmt::Result {
        use std::io::Write as _;
        write!(self, "{v}").map_err(|_| fmt::Error)
    }
    #[inline]
    fn int(&mut self, n: impl itoa::Integer + Decimal) -> fmt::Result {
        put_int(self, n);
        Ok(())
    }
}

impl Out for String {
    fn s(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
    fn ascii(&mut self, b: &[u8]) -> fmt::Result {
        self.extend(b.iter().map(|&c| char::from(c)));
        Ok(())
    }
    fn display(&mut self, v: &dyn fmt::Display) -> fmt::Result {
        use std::fmt::Write as _;
        write!(self, "{v}")
    }
}

/// A line's bytes that remember where the first piece from the wire
/// ([`Out::wire_piece`]) or written through `Display` began: what may need
/// a JSON escape is after it ([`TextBytes::write_json`]), where the
/// writer's other pieces (its own names and texts, digits) need none.
///
/// The pieces are staged in a buffer of its own and copied into the line a
/// few hundred bytes at a time ([`Marked::finish`] copies the last): a
/// byte written into a `Vec` may be its length for all the compiler knows,
/// which it then reads again for every piece; the buffer's fill stays in a
/// register.
pub struct Marked<'o> {
    out: &'o mut Vec<u8>,
    buf: [u8; STAGE],
    n: usize,
    from: Option<usize>,
}

/// The bytes [`Marked`] stages.
const STAGE: usize = 256;

impl<'o> Marked<'o> {
    pub fn new(out: &'o mut Vec<u8>) -> Self {
        Marked {
            out,
            buf: [0; STAGE],
            n: 0,
            from: None,
        }
    }

    /// Copies what is staged into the line, and tells where the bytes that
    /// may need an escape begin: the end if none.
    pub fn finish(&mut self) -> usize {
        self.flush();
        self.from.unwrap_or(self.out.len())
    }

    fn flush(&mut self) {
        self.out
            .extend_from_slice(self.buf.get(..self.n).unwrap_or_default());
        self.n = 0;
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put(&mut self, b: &[u8]) {
        let n = self.n;
        match self.buf.get_mut(n..n + b.len()) {
            Some(dst) => {
                dst.copy_from_slice(b);
                self.n = n + b.len();
            }
            None => self.put_full(b),
        }
    }

    /// [`Marked::put`] where the buffer has no room.
    #[cold]
    #[inline(never)]
    fn put_full(&mut self, b: &[u8]) {
        self.flush();
        match self.buf.get_mut(..b.len()) {
            Some(dst) => {
                dst.copy_from_slice(b);
                self.n = b.len();
            }
            None => self.out.extend_from_slice(b),
        }
    }
}

impl Out for Marked<'_> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn s(&mut self, s: &str) -> fmt::Result {
        self.put(s.as_bytes());
        Ok(())
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn ascii(&mut self, b: &[u8]) -> fmt::Result {
        self.put(b);
        Ok(())
    }
    fn display(&mut self, v: &dyn fmt::Display) -> fmt::Result {
        self.wire_piece();
        self.flush();
        self.out.display(v)
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn int(&mut self, n: impl itoa::Integer + Decimal) -> fmt::Result {
        let at = self.n;
        match self
            .buf
            .get_mut(at..at + 24)
            .and_then(|d| <&mut [u8; 24]>::try_from(d).ok())
        {
            Some(dst) => self.n = at + int_into(dst, n),
            None => {
                self.flush();
                put_int(self.out, n);
            }
        }
        Ok(())
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn wire_piece(&mut self) {
        if self.from.is_none() {
            self.from = Some(self.out.len() + self.n);
        }
    }
}

impl Drop for Marked<'_> {
    /// What is staged reaches the line even without [`Marked::finish`].
    fn drop(&mut self) {
        self.flush();
    }
}

/// `n` zeros.
fn zeros(out: &mut (impl Out + ?Sized), mut n: usize) -> fmt::Result {
    const ZEROS: &[u8; 32] = &[b'0'; 32];
    while n > 0 {
        let k = n.min(ZEROS.len());
        out.ascii(ZEROS.get(..k).unwrap_or_default())?;
        n -= k;
    }
    Ok(())
}

/// A float [`Out::float`] writes: `f32` or `f64`.
pub trait Float: zmij::Float + Copy {
    /// The absolute value as an odd significand times a power of two, if it
    /// is finite and not zero.
    fn odd_binary(self) -> Option<(u64, i64)>;

    /// The value, if it is an integer of magnitude below 2^24 (`f32`) or
    /// 2^53 (`f64`), negative zero aside: its neighbours are then at most
    /// one apart, so no decimal with fewer digits lies within half of that
    /// of it, and its shortest digits, which `{}` writes, are its own.
    fn small_int(self) -> Option<Self::Int>;

    /// The integer [`Float::small_int`] gives: `i32` for `f32`, whose
    /// digits cost less than an `i64`'s.
    type Int: itoa::Integer + Decimal;

    /// What `{}` writes of a value that is no integer, if its shortest
    /// decimal has one to three digits after the point ([`ShortDecimal`]);
    /// none for the rest, which take the long way.
    #[inline]
    fn short_decimal(self) -> Option<ShortDecimal> {
        None
    }
}

/// A float's shortest decimal with a few digits after its point, as `{}`
/// writes it: `-` if `negative`, `int`, `.`, then `frac` in `digits`
/// digits (leading zeros included, never a trailing one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortDecimal {
    negative: bool,
    int: u32,
    frac: u16,
    digits: u8,
}

impl ShortDecimal {
    /// Written in three pieces, the last of a length known in each arm.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn write(self, out: &mut (impl Out + ?Sized)) -> fmt::Result {
        if self.negative {
            out.s("-")?;
        }
        out.int(self.int)?;
        let f = self.frac;
        let digit = |n: u16| b'0' + (n % 10) as u8;
        match self.digits {
            1 => out.ascii(&[b'.', digit(f)]),
            2 => out.ascii(&[b'.', digit(f / 10), digit(f)]),
            _ => out.ascii(&[b'.', digit(f / 100), digit(f / 10), digit(f)]),
        }
    }
}

/// `significand × 2^exponent` with the significand made odd.
fn odd(significand: u64, exponent: i64) -> Option<(u64, i64)> {
    if significand == 0 {
        return None;
    }
    let zeros = significand.trailing_zeros();
    Some((significand >> zeros, exponent + i64::from(zeros)))
}

impl Float for f32 {
    fn odd_binary(self) -> Option<(u64, i64)> {
        let bits = self.to_bits();
        let (biased, fraction) = (i64::from((bits >> 23) & 0xff), u64::from(bits & 0x7f_ffff));
        match biased {
            0xff => None,
            0 => odd(fraction, -149),
            _ => odd(fraction | 1 << 23, biased - 150),
        }
    }

    type Int = i32;

    #[inline]
    fn small_int(self) -> Option<i32> {
        const LIMIT: i32 = 1 << 24;
        let i = self as i32;
        let exact = i as f32 == self && -LIMIT < i && i < LIMIT;
        (exact && (i != 0 || self.is_sign_positive())).then_some(i)
    }

    /// `{}` writes a float's shortest decimal that reads back as it, the
    /// closest of those where two of the same length do, the one further
    /// from zero where they are equally close (`core::fmt`'s Dragon4 and
    /// Grisu, which agree). A value `a` (magnitude) that is no integer and
    /// below 2^23 has no integer that reads back as it (its neighbours
    /// are at most half a unit apart and integers lie on the grid of its
    /// own bits), so its shortest decimal is found by the fewest digits
    /// after the point: for `k` = 1, 2, 3, the two decimals of `k` digits
    /// around `a`, `lo / 10^k` and `(lo + 1) / 10^k` with `lo = ⌊a·10^k⌋`,
    /// the first `k` where either reads back as `a`, the closer (ties up)
    /// where both do. Exact in `f64`: `a·10^k` needs 24 + 10 bits, and
    /// the quotient, rounded once to `f64` then to `f32`, rounds as the
    /// decimal read as an `f32` does (a quotient of denominator `10^k`
    /// that is no `f32` midpoint lies at least `1/(10^k·2^25)` of its
    /// size from every one, far beyond an `f64`'s rounding). A value that
    /// needs more digits takes the long way (`float`).
    #[inline]
    fn short_decimal(self) -> Option<ShortDecimal> {
        let a = self.abs();
        // NaN and infinities fail the first test; signed conversions
        // (`i32`, `i64`) are one instruction, unsigned ones a few.
        if !a.is_finite() || a >= 8_388_608.0 || (a as i32) as f32 == a {
            return None;
        }
        let x = f64::from(a);
        for (digits, p) in [(1u8, 10i64), (2, 100), (3, 1000)] {
            let scale = p as f64;
            let scaled = x * scale;
            let lo = scaled as i64;
            let reads = |n: i64| (n as f64 / scale) as f32 == a;
            let m = match (reads(lo), reads(lo + 1)) {
                (true, true) if scaled - lo as f64 >= 0.5 => lo + 1,
                (true, _) => lo,
                (false, true) => lo + 1,
                (false, false) => continue,
            };
            return Some(ShortDecimal {
                negative: self.is_sign_negative(),
                int: u32::try_from(m / p).ok()?,
                frac: u16::try_from(m % p).ok()?,
                digits,
            });
        }
        None
    }
}

impl Float for f64 {
    fn odd_binary(self) -> Option<(u64, i64)> {
        let bits = self.to_bits();
        let (biased, fraction) = (((bits >> 52) & 0x7ff) as i64, bits & 0xf_ffff_ffff_ffff);
        match biased {
            0x7ff => None,
            0 => odd(fraction, -1074),
            _ => odd(fraction | 1 << 52, biased - 1075),
        }
    }

    type Int = i64;

    #[inline]
    fn small_int(self) -> Option<i64> {
        const LIMIT: i64 = 1 << 53;
        let i = self as i64;
        let exact = i as f64 == self && -LIMIT < i && i < LIMIT;
        (exact && (i != 0 || self.is_sign_positive())).then_some(i)
    }
}

/// A float as `{}` writes it, from the shortest form `zmij` writes
/// (`1.5`, `1.0`, `1e-7`, `1.5e+16`, `NaN`, `inf`): the same digits, the
/// decimal point moved by the exponent, no trailing `.0`. Where the value
/// lies exactly halfway between the two closest shortest forms, `zmij`
/// takes the even one and `fmt` the one further from zero: so does this.
fn float(out: &mut (impl Out + ?Sized), v: impl Float) -> fmt::Result {
    if let Some(short) = v.short_decimal() {
        return short.write(out);
    }
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format(v);
    let b = text.as_bytes();
    let (mut dot, mut e) = (None, None);
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'.' => dot = Some(i),
            b'e' => e = Some(i),
            _ => {}
        }
    }
    let trailing_zeros = |d: &[u8]| d.iter().rev().take_while(|&&c| c == b'0').count() as i64;
    let Some(e) = e else {
        // Most values: zmij's text without its `.0`, unless halfway (which
        // needs the place after the last digit to be the binary exponent).
        // NaN, inf and -inf too.
        let (plain, place) = match (text.strip_suffix(".0"), dot) {
            (None, Some(dot)) => (text, dot as i64 - b.len() as i64),
            (whole, _) => {
                let whole = whole.unwrap_or(text);
                (whole, trailing_zeros(whole.as_bytes()) - 1)
            }
        };
        if v.odd_binary().is_none_or(|(_, exponent)| exponent != place) {
            return out.s(plain);
        }
        return decimal(out, v, b, dot, b.len(), 0);
    };
    let exp = std::str::from_utf8(b.get(e + 1..).unwrap_or_default())
        .ok()
        .and_then(|x| x.parse::<i64>().ok())
        .unwrap_or(0);
    decimal(out, v, b, dot, e, exp)
}

/// A float in `fmt`'s form from zmij's text `b` (its point at `dot`, its
/// mantissa ending at `end`, then `×10^exp`).
fn decimal(
    out: &mut (impl Out + ?Sized),
    v: impl Float,
    b: &[u8],
    dot: Option<usize>,
    end: usize,
    exp: i64,
) -> fmt::Result {
    let (negative, start) = match b.first() {
        Some(b'-') => (true, 1),
        _ => (false, 0),
    };
    let int = b.get(start..dot.unwrap_or(end)).unwrap_or_default();
    let frac = dot.and_then(|d| b.get(d + 1..end)).unwrap_or_default();
    // The significant digits, at most 17, and where the point goes among them.
    let mut digits = [0u8; 32];
    let mut n = 0;
    let mut point = int.len() as i64 + exp;
    for &c in int.iter().chain(frac) {
        if n == 0 && c == b'0' {
            point -= 1;
        } else if let Some(d) = digits.get_mut(n) {
            *d = c;
            n += 1;
        }
    }
    while n > 0 && digits.get(n - 1) == Some(&b'0') {
        n -= 1;
    }
    let digits = digits.get_mut(..n).unwrap_or_default();
    if let Some((significand, exponent)) = v.odd_binary()
        && halfway_above(digits, point, significand, exponent)
        && let Some(last @ b'0'..=b'8') = digits.last_mut()
    {
        *last += 1;
    }
    if negative {
        out.s("-")?;
    }
    if digits.is_empty() {
        return out.s("0");
    }
    let len = digits.len() as i64;
    if point <= 0 {
        out.s("0.")?;
        zeros(out, usize::try_from(-point).unwrap_or(0))?;
        out.ascii(digits)
    } else if point >= len {
        out.ascii(digits)?;
        zeros(out, usize::try_from(point - len).unwrap_or(0))
    } else {
        let (a, b) = digits.split_at(usize::try_from(point).unwrap_or(0));
        out.ascii(a)?;
        out.s(".")?;
        out.ascii(b)
    }
}

/// Whether `significand × 2^exponent` (odd significand) is exactly halfway
/// between the decimal `digits` (the point after `point` of them) and the
/// next one up: `(10·D + 5) × 10^q`, q the place after the last digit.
/// That is `(2D + 1) × 5^(q+1) × 2^q`, or `(2D + 1) / (5^(-q-1) × 2^-q)`:
/// odd times a power of two, so the powers of two must agree.
fn halfway_above(digits: &[u8], point: i64, significand: u64, exponent: i64) -> bool {
    let q = point - digits.len() as i64 - 1;
    if digits.is_empty() || digits.len() > 18 || q != exponent {
        return false;
    }
    let d = digits
        .iter()
        .fold(0u128, |d, c| d * 10 + u128::from(c.saturating_sub(b'0')));
    let odd = 2 * d + 1;
    let (lhs, rhs, power) = if q >= 0 {
        (u128::from(significand), odd, q + 1)
    } else {
        (odd, u128::from(significand), -q - 1)
    };
    u32::try_from(power)
        .ok()
        .and_then(|p| 5u128.checked_pow(p))
        .and_then(|p| rhs.checked_mul(p))
        == Some(lhs)
}

/// A text written by one generic function into any [`Out`].
pub trait WriteText {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result;
}

impl<T: WriteText + ?Sized> WriteText for &T {
    fn write_text(&self, out: &mut impl Out) -> fmt::Result {
        (**self).write_text(out)
    }
}

/// A [`WriteText`] writer that calls [`Out::wire_piece`] before every piece
/// it takes from the wire (the core's `TextOut` and `Value::Text` do):
/// its bytes for JSON are staged in [`Marked`], which tells where the first
/// such piece begins, so JSON Lines searches for escapes from there only.
/// Its fixed pieces (names, labels, numbers) must need no escape; each
/// protocol's `fixed_texts_need_no_json_escape` test holds them to it.
pub trait MarksWire: WriteText + fmt::Display {}

impl<T: MarksWire> TextBytes for T {
    fn write_bytes(&self, out: &mut Vec<u8>) {
        let _ = self.write_text(out);
    }

    fn write_json(&self, out: &mut Vec<u8>) -> usize {
        let mut marked = Marked::new(out);
        let _ = self.write_text(&mut marked);
        marked.finish()
    }
}

/// A message's token or text: its `Display` and its bytes are the one
/// [`WriteText`] writer's, so the two cannot differ.
pub struct Written<T>(pub T);

impl<T: WriteText> fmt::Display for Written<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_text(f)
    }
}

impl<T: WriteText> TextBytes for Written<T> {
    fn write_bytes(&self, out: &mut Vec<u8>) {
        let _ = self.0.write_text(out);
    }
}

/// `label`, or `label[i]` for an element of a repeated field.
pub fn indexed_label(out: &mut impl Out, label: &str, index: Option<u32>) -> fmt::Result {
    out.s(label)?;
    match index {
        Some(i) => {
            out.s("[")?;
            out.int(i)?;
            out.s("]")
        }
        None => Ok(()),
    }
}

/// `name` padded with zeros to `W` bytes, and its length: a token's name
/// in a table built at compile time, copied as `W` bytes then cut (a copy
/// of fixed size is a few moves; one of the name's length, a call).
pub const fn padded<const W: usize>(name: &str) -> ([u8; W], usize) {
    let name = name.as_bytes();
    assert!(name.len() <= W, "a name longer than its padded place");
    let mut b = [0u8; W];
    let mut j = 0;
    while j < name.len() {
        b[j] = name[j];
        j += 1;
    }
    (b, name.len())
}

/// Each byte's eight binary digits, the highest bit first.
static BITS8: [[u8; 8]; 256] = {
    let mut t = [[b'0'; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut i = 0;
        while i < 8 {
            t[b][i] += ((b >> (7 - i)) & 1) as u8;
            i += 1;
        }
        b += 1;
    }
    t
};

/// A byte in binary, as `{:08b}` writes it: from a table (a bit at a time
/// was a sixth of lwar's text, its Input writing nine key bytes).
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn bits8(f: &mut (impl Out + ?Sized), b: u8) -> fmt::Result {
    f.ascii(&BITS8[usize::from(b)])
}

/// The [`padded`] names of every value of a protocol's type enum (one with
/// `ALL`, `COUNT` and a const `name()`), `W` bytes each, as a table built
/// at compile time: what each protocol's token copies its name from.
macro_rules! padded_names {
    ($ty:ident, $w:literal) => {{
        let mut t = [([0u8; $w], 0usize); $ty::COUNT];
        let mut i = 0;
        while i < $ty::COUNT {
            t[i] = $crate::engine::out::padded($ty::ALL[i].name());
            i += 1;
        }
        t
    }};
}
pub(crate) use padded_names;

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

#[cfg(test)]
mod tests {
    #[test]
    fn a_padded_name_is_its_bytes_then_zeros() {
        const P: ([u8; 8], usize) = super::padded("Input");
        assert_eq!(P, (*b"Input\0\0\0", 5));
        assert_eq!(super::padded::<4>(""), ([0; 4], 0));
    }

    use super::*;
    use crate::engine::field::Value;

    fn written(f: impl FnOnce(&mut Vec<u8>) -> fmt::Result) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Floats as `{}` writes them, ties between two shortest forms included
    /// (`fmt` takes the one further from zero; zmij the even one). Every
    /// `f32` was compared once, outside the suite; here a spread of them.
    #[test]
    fn floats_are_written_as_fmt_writes_them() {
        let f32s = [
            0.0,
            -0.0,
            1.0,
            -0.7,
            0.5,
            1e20,
            1e-7,
            1.5e16,
            f32::MAX,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x3980_0000), // 0.000244140625: a tie
            f32::from_bits(0x4000_4000), // 2.00390625: a tie
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let spread = (0..200_000u32).map(|i| f32::from_bits(i.wrapping_mul(21_473)));
        for v in f32s.into_iter().chain(spread) {
            assert_eq!(written(|o| o.float(v)), v.to_string(), "{:#x}", v.to_bits());
        }
        let f64s = [
            0.1,
            -0.0,
            1e16,
            1e22,
            5e-324,
            f64::MAX,
            f64::from_bits(0x4317_9085_685d_83c9), // 1658206780088562.25: a tie
            f64::from_bits(0x42ea_8090_bb0f_6d84), // 233115890514796.125: a tie
            f64::NAN,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let spread = std::iter::from_fn(|| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Some([
                f64::from_bits(x),
                (x >> 20) as f64 * 2f64.powi((x % 140) as i32 - 70),
            ])
        });
        for v in f64s.into_iter().chain(spread.take(100_000).flatten()) {
            assert_eq!(written(|o| o.float(v)), v.to_string(), "{:#x}", v.to_bits());
        }
    }

    /// The integers [`Out::float`] writes as integers are what the long
    /// way (`float`) and `{}` write, at and around the limits of the fast
    /// path, and the values beside them that it leaves to the long way.
    #[test]
    fn small_integers_are_written_as_the_long_way_writes_them() {
        let mut f32s: Vec<f32> = vec![0.0, -0.0, 1.0, -1.0, 651.0, 0.5, -0.5, 1e-45];
        for limit in [16_777_216.0f32, 8_388_608.0, 1024.0] {
            for d in [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0] {
                f32s.extend([limit + d, -(limit + d)]);
            }
        }
        f32s.extend((-3000..3000).map(|i| i as f32 * 0.25));
        f32s.extend([
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN,
        ]);
        for v in f32s {
            let fast = written(|o| o.float(v));
            assert_eq!(fast, written(|o| float(o, v)), "{:#x}", v.to_bits());
            assert_eq!(fast, v.to_string(), "{:#x}", v.to_bits());
        }
        let mut f64s: Vec<f64> = vec![0.0, -0.0, 1e15, 1e16, -7.0, 0.1];
        for limit in [
            9_007_199_254_740_992.0f64,
            4_503_599_627_370_496.0,
            16_777_216.0,
        ] {
            for d in [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 4.0] {
                f64s.extend([limit + d, -(limit + d)]);
            }
        }
        f64s.extend((-3000..3000).map(|i| f64::from(i) * 0.25));
        f64s.extend([f64::NAN, f64::INFINITY, f64::MAX, f64::MIN, 1e300]);
        for v in f64s {
            let fast = written(|o| o.float(v));
            assert_eq!(fast, written(|o| float(o, v)), "{:#x}", v.to_bits());
            assert_eq!(fast, v.to_string(), "{:#x}", v.to_bits());
        }
    }

    /// Floats of one to three digits after the point ([`Float::short_decimal`])
    /// and their neighbours, which need more, are what `{}` and the long
    /// way write; the integers, powers of two and ties beside them too.
    /// Every `f32` of magnitude below 2^23 was compared once, outside the
    /// suite (the fast path's text against `{}`: 166 985 728 values, none
    /// differed).
    #[test]
    fn short_decimals_are_written_as_fmt_writes_them() {
        let mut f32s = Vec::new();
        for (k, p) in [(1, 10.0f64), (2, 100.0), (3, 1000.0)] {
            for n in (-30_000..30_000).chain([8_388_607_000 / 10i64.pow(3 - k)]) {
                let v = (n as f64 / p) as f32;
                f32s.extend([v, v.next_up(), v.next_down()]);
            }
        }
        for e in -30..24 {
            let v = 2f32.powi(e);
            f32s.extend([v, -v, v.next_up(), v.next_down(), v * 1.5]);
        }
        f32s.extend([8_388_607.5, 8_388_608.5, 0.1, 0.7, 1e-3, 1.5e-3, 0.0625]);
        let mut short = 0;
        for v in f32s {
            short += usize::from(v.short_decimal().is_some());
            let fast = written(|o| o.float(v));
            assert_eq!(fast, v.to_string(), "{:#x}", v.to_bits());
            assert_eq!(written(|o| float(o, v)), fast, "{:#x}", v.to_bits());
        }
        assert!(short > 100_000, "{short}");
        assert_eq!(
            0.25f32.short_decimal().map(|d| (d.frac, d.digits)),
            Some((25, 2))
        );
        assert_eq!((-0.9f32).short_decimal().map(|d| d.negative), Some(true));
        assert_eq!(1.0f32.short_decimal(), None);
        assert_eq!(0.1f64.short_decimal(), None);
    }

    #[test]
    fn integers_and_bits_are_written_as_fmt_writes_them() {
        for raw in [0u64, 1, 5, 0xff, 0x1_0000, u64::MAX] {
            for width in [0u8, 1, 8, 32, 64, 100] {
                let w = usize::from(width);
                assert_eq!(written(|o| o.bits(raw, width)), format!("{raw:0w$b}"));
            }
            assert_eq!(written(|o| o.labelled("n=", raw)), format!("n={raw}"));
        }
        assert_eq!(written(|o| indexed_label(o, "x", Some(3))), "x[3]");
    }

    /// The three outs receive the same pieces.
    #[test]
    fn every_out_holds_the_same_text() {
        let values = [
            Value::Float(f64::from(-0.7f32)),
            Value::Text(b"a\x1b[2J\"b\xff\\"),
            Value::Bytes(&[0xde; 40]),
            Value::Bits { raw: 5, width: 8 },
            Value::Enum {
                raw: 2,
                name: Some("Timeout"),
            },
            Value::Enum { raw: 9, name: None },
            Value::Pair(1, 2),
            Value::Bool(true),
            Value::Signed(-3),
        ];
        for v in values {
            let mut s = String::new();
            v.write_text(&mut s).unwrap();
            assert_eq!(written(|o| v.write_text(o)), s);
            assert_eq!(Written(v).to_string(), s);
            let mut bytes = Vec::new();
            Written(v).write_bytes(&mut bytes);
            assert_eq!(bytes, s.as_bytes());
            let mut staged = b"line ".to_vec();
            let mut marked = Marked::new(&mut staged);
            v.write_text(&mut marked).unwrap();
            let from = marked.finish();
            drop(marked);
            assert_eq!(&staged[5..], s.as_bytes());
            assert_eq!(
                from,
                if matches!(v, Value::Text(_)) {
                    5
                } else {
                    staged.len()
                }
            );
        }
    }

    /// [`Marked`] stages its pieces and copies them into the line whole,
    /// past its buffer's end too, and remembers where the first piece from
    /// the wire began.
    #[test]
    fn marked_keeps_every_piece_in_order() {
        let mut line = b"{".to_vec();
        let mut expected = String::from("{");
        {
            let mut m = Marked::new(&mut line);
            for i in 0..200i64 {
                m.s(" [").unwrap();
                m.int(i * 7919 - 500_000).unwrap();
                m.ascii(b"0110").unwrap();
                expected.push_str(&format!(" [{}0110", i * 7919 - 500_000));
                if i == 150 {
                    m.wire_piece();
                    assert_eq!(m.finish(), expected.len());
                }
            }
            let long = "x".repeat(STAGE + 3);
            m.s(&long).unwrap();
            m.display(&7u8).unwrap();
            m.int(u64::MAX).unwrap();
            expected.push_str(&format!("{long}7{}", u64::MAX));
        }
        assert_eq!(String::from_utf8(line).unwrap(), expected);
    }
}
