//! Integers written in decimal straight into a line's bytes, as `{}` writes
//! them, for the outputs that write every packet: numbers below 1000 from a
//! table of their digits, those of four digits from a table of pairs, the
//! rest below 10^8 (nearly every field of a game packet) turned into their
//! eight digits at once in one 64-bit word and stored with one 8-byte
//! write, rather than digit by digit into a buffer and copied from there
//! (`itoa`, which remains for the larger ones).

/// An integer as a sign and a magnitude.
pub trait Decimal: Copy {
    /// Whether it is negative, and its absolute value.
    fn sign_magnitude(self) -> (bool, u64);
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Decimal for $t {
            #[inline]
            fn sign_magnitude(self) -> (bool, u64) {
                (false, self as u64)
            }
        }
    )*};
}

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Decimal for $t {
            #[inline]
            fn sign_magnitude(self) -> (bool, u64) {
                (self < 0, self.unsigned_abs() as u64)
            }
        }
    )*};
}

unsigned!(u8, u16, u32, u64, usize);
signed!(i8, i16, i32, i64);

/// Appends `n` in decimal to `out`, as `{}` writes it.
///
/// Always inlined: most numbers written have up to three digits (ids,
/// counts, offsets, angles, an address's octets), read from a table with
/// no call (whose saving and restoring of registers was half the cost of
/// one); the rest go to `put_large`.
#[inline(always)]
pub fn put_int(out: &mut Vec<u8>, n: impl Decimal) {
    let (negative, m) = n.sign_magnitude();
    if negative {
        out.push(b'-');
    }
    if m < 1000 {
        // Three bytes copied (a copy of fixed size), then cut.
        let [a, b, c, len] = SMALL[m as usize];
        let end = out.len() + usize::from(len);
        out.extend_from_slice(&[a, b, c]);
        out.truncate(end);
    } else if m < 10_000 {
        out.extend_from_slice(&four_digits(m as u32));
    } else {
        put_large(out, m);
    }
}

/// `n` in decimal at the start of `dst`, as `{}` writes it: how many bytes
/// it took. For a writer that stages its text in a buffer of its own
/// (`out::Marked`): numbers below 10^8 with no call.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn int_into(dst: &mut [u8; 24], n: impl Decimal) -> usize {
    let (negative, m) = n.sign_magnitude();
    // The sign written always, then overwritten where there is none.
    dst[0] = b'-';
    let s = usize::from(negative);
    if m < 1000 {
        let [a, b, c, len] = SMALL[m as usize];
        dst[s] = a;
        dst[s + 1] = b;
        dst[s + 2] = c;
        s + usize::from(len)
    } else if m < 10_000 {
        if let Some(d) = dst.get_mut(s..s + 4) {
            d.copy_from_slice(&four_digits(m as u32));
        }
        s + 4
    } else if m < 100_000_000 {
        let (digits, len) = eight_digits(m as u32);
        if let Some(d) = dst.get_mut(s..s + 8) {
            d.copy_from_slice(&digits);
        }
        s + len
    } else {
        s + large_into(dst.get_mut(s..).unwrap_or_default(), m)
    }
}

/// A magnitude of nine digits or more (at most twenty) at the start of
/// `dst`, for [`int_into`].
#[inline(never)]
fn large_into(dst: &mut [u8], m: u64) -> usize {
    let mut buffer = itoa::Buffer::new();
    let text = buffer.format(m).as_bytes();
    match dst.get_mut(..text.len()) {
        Some(d) => {
            d.copy_from_slice(text);
            text.len()
        }
        None => 0,
    }
}

/// A magnitude of four digits or more, for [`put_int`].
#[inline(never)]
fn put_large(out: &mut Vec<u8>, m: u64) {
    match u32::try_from(m) {
        Ok(small) if small < 100_000_000 => {
            let (digits, len) = eight_digits(small);
            let end = out.len() + len;
            out.extend_from_slice(&digits);
            out.truncate(end);
        }
        _ => out.extend_from_slice(itoa::Buffer::new().format(m).as_bytes()),
    }
}

/// Each number below 1000: its digits, the most significant first, padded
/// to three bytes, and how many they are.
static SMALL: [[u8; 4]; 1000] = {
    let mut t = [[0u8; 4]; 1000];
    let mut n = 0;
    while n < 1000 {
        let (a, b, c) = ((n / 100) as u8, (n / 10 % 10) as u8, (n % 10) as u8);
        t[n] = if n < 10 {
            [b'0' + c, 0, 0, 1]
        } else if n < 100 {
            [b'0' + b, b'0' + c, 0, 2]
        } else {
            [b'0' + a, b'0' + b, b'0' + c, 3]
        };
        n += 1;
    }
    t
};

/// Every number below 100 as two digits, `00` to `99`.
static PAIRS: [[u8; 2]; 100] = {
    let mut t = [[0u8; 2]; 100];
    let mut n = 0;
    while n < 100 {
        t[n] = [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
        n += 1;
    }
    t
};

/// `n` (below 10 000) as its four digits, zero-padded below 1000: two
/// pairs from a table, `n / 100`
/// by a multiply and a shift (exact below 43 699). A four-digit number (a
/// coordinate, a timestamp, a frame number) is common in game packets:
/// some 12 instructions rather than the 40 of [`eight_digits`].
#[cfg_attr(not(debug_assertions), inline(always))]
fn four_digits(n: u32) -> [u8; 4] {
    let hi = (n * 5243) >> 19;
    let lo = n - hi * 100;
    let pair = |k: u32| PAIRS.get(k as usize).copied().unwrap_or_default();
    let ([a, b], [c, d]) = (pair(hi), pair(lo));
    [a, b, c, d]
}

/// `n` (below 10^6) as its six digits, zero-padded (`{:06}`): a pair and
/// `four_digits` (which pads a number below 1000 with zeros too), for
/// the microseconds of a packet line's time.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn six_digits(n: u32) -> [u8; 6] {
    let n = n.min(999_999);
    let [a, b] = PAIRS
        .get((n / 10_000) as usize)
        .copied()
        .unwrap_or_default();
    let [c, d, e, f] = four_digits(n % 10_000);
    [a, b, c, d, e, f]
}

/// `n` (below 10^8) as ASCII digits, the most significant first, and how
/// many of the eight bytes they take (the rest is to be dropped).
///
/// The eight decimal digits are computed side by side in one word: `n`
/// splits into two 4-digit halves (32-bit lanes), each of those into two
/// 2-digit quarters (16-bit lanes), each of those into two digits (8-bit
/// lanes), dividing by 100 and by 10 with a multiply and a shift that are
/// exact for the lane's range (below 10^4 and below 100). The lanes are laid
/// out so that the most significant digit is the word's lowest byte: the
/// bytes in memory order (little-endian) are the digits in reading order.
#[inline]
fn eight_digits(n: u32) -> ([u8; 8], usize) {
    if n == 0 {
        return (*b"00000000", 1);
    }
    let n = u64::from(n);
    // [high 4 digits, low 4 digits] in 32-bit lanes.
    let halves = (n / 10_000) | ((n % 10_000) << 32);
    // x / 100 for x < 10^4: (x * 10486) >> 20, per lane.
    let hundreds = ((halves * 10_486) >> 20) & 0x0000_007f_0000_007f;
    let quarters = hundreds | ((halves - hundreds * 100) << 16);
    // x / 10 for x < 100: (x * 103) >> 10, per lane.
    let tens = ((quarters * 103) >> 10) & 0x000f_000f_000f_000f;
    let digits = tens | ((quarters - tens * 10) << 8);
    // Leading zeros are the lowest bytes: shift them out.
    let leading = (digits.trailing_zeros() / 8) as usize;
    let ascii = (digits + 0x3030_3030_3030_3030) >> (8 * leading);
    (ascii.to_le_bytes(), 8 - leading)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(n: impl Decimal) -> String {
        let mut out = b"x".to_vec();
        put_int(&mut out, n);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn int_into_writes_as_display_does() {
        let into = |n: i64| {
            let mut dst = [b'x'; 24];
            let len = int_into(&mut dst, n);
            String::from_utf8(dst[..len].to_vec()).unwrap()
        };
        for n in [0, 7, -7, 999, -999, 1000, -1000, 99_999_999, -100_000_000] {
            assert_eq!(into(n), n.to_string());
        }
        for n in [i64::MIN, i64::MAX] {
            assert_eq!(into(n), n.to_string());
        }
        let mut dst = [0; 24];
        let len = int_into(&mut dst, u64::MAX);
        assert_eq!(&dst[..len], u64::MAX.to_string().as_bytes());
    }

    #[test]
    fn every_lane_value_is_written_as_display_does() {
        // Each lane's arithmetic is the same: every value of the low half,
        // every value of the high half, and both together.
        for a in 0..10_000u32 {
            for n in [
                a,
                a * 10_000,
                a * 10_000 + (9_999 - a),
                a * 10_001 % 100_000_000,
            ] {
                assert_eq!(written(n), format!("x{n}"));
            }
        }
    }

    /// Every number of four digits, and those beside them, through both
    /// writers, signed too.
    #[test]
    fn four_digit_numbers_are_written_as_display_does() {
        for n in 990..10_010i64 {
            for v in [n, -n] {
                assert_eq!(written(v), format!("x{v}"));
                let mut dst = [b'x'; 24];
                let len = int_into(&mut dst, v);
                assert_eq!(&dst[..len], v.to_string().as_bytes());
            }
        }
    }

    #[test]
    fn six_digits_are_zero_padded_as_fmt_pads_them() {
        for n in (0..1_000_000)
            .step_by(7)
            .chain([0, 9, 10, 999, 1000, 99_999, 999_999])
        {
            assert_eq!(six_digits(n), *format!("{n:06}").as_bytes(), "{n}");
        }
    }

    #[test]
    fn edges_signs_and_large_values() {
        for n in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            99_999_999,
            100_000_000,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            assert_eq!(written(n), format!("x{n}"));
        }
        for n in [i64::MIN, -100_000_000, -99_999_999, -1, 0, 1, i64::MAX] {
            assert_eq!(written(n), format!("x{n}"));
        }
        for n in [i16::MIN, -1, 0, i16::MAX] {
            assert_eq!(written(n), format!("x{n}"));
        }
        assert_eq!(written(i8::MIN), "x-128");
        assert_eq!(written(u8::MAX), "x255");
        assert_eq!(written(usize::MAX), format!("x{}", usize::MAX));
    }

    #[test]
    fn a_pseudo_random_sample_of_the_range() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = x % 100_000_000;
            assert_eq!(written(n), format!("x{n}"));
            assert_eq!(written(x), format!("x{x}"));
        }
    }
}
