//! Writing numbers and addresses into a line buffer without `fmt`'s argument
//! machinery, for what is written once per packet (packet lines, field
//! output): `itoa` for integers, the dotted quad by hand. Each writes exactly
//! what `{}` (or the width given) would.

use std::net::{IpAddr, SocketAddr};

/// An integer, as `{}` writes it.
pub(crate) fn int(out: &mut Vec<u8>, n: impl crate::proto::digits::Decimal) {
    crate::proto::digits::put_int(out, n);
}

/// An integer right-aligned in `width` columns, as `{:>width$}` writes it.
pub(crate) fn int_right(out: &mut Vec<u8>, n: impl crate::proto::digits::Decimal, width: usize) {
    padded(out, n, width, b' ');
}

/// An integer zero-padded to `width` digits, as `{:0width$}` writes a
/// non-negative one.
pub(crate) fn int_zero(out: &mut Vec<u8>, n: u64, width: usize) {
    // Six digits (a packet line's microseconds): a copy of known length.
    match u32::try_from(n) {
        Ok(n) if width == 6 && n < 1_000_000 => {
            out.extend_from_slice(&crate::proto::digits::six_digits(n));
        }
        _ => padded(out, n, width, b'0'),
    }
}

/// `n` after `pad` to `width` bytes. Up to 32 bytes in all (the columns
/// of a packet line: its frame number, its time) are put together in a
/// local array, the digits after 32 bytes of `pad`, and copied at once, a
/// copy of fixed size then cut (`itoa`, `resize` and copies of unknown
/// length, each a call, were a tenth of `--packets`' engine thread).
/// Always inlined (in release): called, its saved registers were a fifth
/// of its cost.
#[cfg_attr(not(debug_assertions), inline(always))]
fn padded(out: &mut Vec<u8>, n: impl crate::proto::digits::Decimal, width: usize, pad: u8) {
    let mut column = [pad; 64];
    let len = match column
        .get_mut(32..56)
        .and_then(|d| <&mut [u8; 24]>::try_from(d).ok())
    {
        Some(digits) => crate::proto::digits::int_into(digits, n),
        None => 0,
    };
    let before = width.saturating_sub(len);
    match (32 - before.min(32), column.get(32 + len..)) {
        (start, Some(_)) if before + len <= 32 => {
            let end = out.len() + before + len;
            if let Some(text) = column.get(start..start + 32) {
                out.extend_from_slice(text);
            }
            out.truncate(end);
        }
        _ => {
            out.resize(out.len() + before, pad);
            out.extend_from_slice(column.get(32..32 + len).unwrap_or_default());
        }
    }
}

/// An IP address, as its `Display` writes it.
pub(crate) fn ip(out: &mut Vec<u8>, ip: IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            int(out, a);
            out.push(b'.');
            int(out, b);
            out.push(b'.');
            int(out, c);
            out.push(b'.');
            int(out, d);
        }
        IpAddr::V6(v6) => {
            use std::io::Write as _;
            let _ = write!(out, "{v6}");
        }
    }
}

/// A socket address, as its `Display` writes it (`[v6]:port` for IPv6).
pub(crate) fn addr(out: &mut Vec<u8>, a: &SocketAddr) {
    match a {
        SocketAddr::V4(v4) => {
            ip(out, IpAddr::V4(*v4.ip()));
            out.push(b':');
            int(out, v4.port());
        }
        SocketAddr::V6(v6) => {
            use std::io::Write as _;
            let _ = write!(out, "{v6}");
        }
    }
}

/// Socket addresses as [`addr`] writes them, remembered: a capture's
/// packets come and go between few addresses, and copying an address's
/// text costs a tenth of writing its octets and port again (which was a
/// twentieth of `--format jsonl`). IPv4 only (IPv6 goes to [`addr`]); 256
/// places, each address in the one its hash names, the last one written
/// there kept. Fixed size, allocated once.
/// The place of `key` in a table of `places` (a power of two): its bits
/// mixed into the top ones by one multiplication (Fibonacci hashing), the
/// top `log2(places)` taken. Every fixed table of the outputs' texts finds
/// its keys' places this way.
#[inline(always)]
pub(crate) fn home(key: u64, places: usize) -> usize {
    debug_assert!(places.is_power_of_two() && places > 1);
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (u64::BITS - places.ilog2())) as usize
}

pub(crate) struct AddrTexts {
    slots: Box<[AddrSlot]>,
}

/// One remembered address: its key (IPv4 address and port, with bit 63
/// set: 0 is an empty place) and its text, padded.
#[derive(Clone, Copy)]
struct AddrSlot {
    key: u64,
    len: u8,
    text: [u8; ADDR_MAX],
}

/// The longest IPv4 socket address's text: `255.255.255.255:65535`, 21
/// bytes, and a little room so that it is copied as a fixed size.
const ADDR_MAX: usize = 24;

impl Default for AddrTexts {
    fn default() -> Self {
        AddrTexts {
            slots: vec![
                AddrSlot {
                    key: 0,
                    len: 0,
                    text: [0; ADDR_MAX],
                };
                256
            ]
            .into_boxed_slice(),
        }
    }
}

impl AddrTexts {
    /// Writes `a` as [`addr`] does.
    #[inline]
    pub(crate) fn addr(&mut self, out: &mut Vec<u8>, a: &SocketAddr) {
        let SocketAddr::V4(v4) = a else {
            return addr(out, a);
        };
        let key = 1 << 63 | u64::from(v4.ip().to_bits()) << 16 | u64::from(v4.port());
        let place = home(key, 256);
        let Some(slot) = self.slots.get_mut(place) else {
            return addr(out, a);
        };
        let start = out.len();
        if slot.key == key {
            // The whole padded text, a copy of fixed size, then cut.
            out.extend_from_slice(&slot.text);
            out.truncate(start + usize::from(slot.len));
            return;
        }
        addr(out, a);
        if let Some(text) = out.get(start..)
            && let Some(place) = slot.text.get_mut(..text.len())
        {
            place.copy_from_slice(text);
            slot.len = text.len() as u8;
            slot.key = key;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_writes_what_fmt_writes() {
        let mut out = Vec::new();
        let mut texts = AddrTexts::default();
        for n in [0u64, 7, 42, 123_456, u64::MAX] {
            for w in [0, 1, 6, 11, 25, 31, 32, 40] {
                out.clear();
                int_right(&mut out, n, w);
                assert_eq!(out, format!("{n:>w$}").as_bytes());
                out.clear();
                int_zero(&mut out, n, w);
                assert_eq!(out, format!("{n:0w$}").as_bytes());
            }
        }
        for a in [
            "0.0.0.0:0",
            "127.0.0.1:32422",
            "255.255.255.255:65535",
            "[::1]:5",
            "[2001:db8::1]:40000",
            "[::ffff:10.0.0.1]:1",
            "10.0.0.1:1",
            "10.0.0.1:2",
            "10.0.0.10:1",
        ] {
            let a: SocketAddr = a.parse().unwrap();
            out.clear();
            addr(&mut out, &a);
            assert_eq!(out, a.to_string().as_bytes());
            for _ in 0..2 {
                out.clear();
                texts.addr(&mut out, &a);
                assert_eq!(out, a.to_string().as_bytes());
            }
            out.clear();
            ip(&mut out, a.ip());
            assert_eq!(out, a.ip().to_string().as_bytes());
        }
    }
}

#[cfg(test)]
mod remembered {
    use super::*;

    /// Addresses that share a place replace each other there; each is
    /// written as `Display` writes it, first time and again.
    #[test]
    fn remembered_addresses_are_written_as_display_writes_them() {
        let mut texts = AddrTexts::default();
        let mut out = Vec::new();
        let mut x = 0x853c_49e6_748f_ea9bu64;
        let mut seen = Vec::new();
        for i in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = if i % 3 == 0 && !seen.is_empty() {
                seen[(x % seen.len() as u64) as usize]
            } else {
                SocketAddr::new(
                    IpAddr::V4(std::net::Ipv4Addr::from_bits((x >> 16) as u32)),
                    x as u16,
                )
            };
            if seen.len() < 600 {
                seen.push(a);
            }
            out.clear();
            out.extend_from_slice(b"x");
            texts.addr(&mut out, &a);
            assert_eq!(out, format!("x{a}").as_bytes());
        }
    }
}
