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
pub(crate) fn int_right(out: &mut Vec<u8>, n: impl itoa::Integer, width: usize) {
    let mut b = itoa::Buffer::new();
    let s = b.format(n);
    out.resize(out.len() + width.saturating_sub(s.len()), b' ');
    out.extend_from_slice(s.as_bytes());
}

/// An integer zero-padded to `width` digits, as `{:0width$}` writes a
/// non-negative one.
pub(crate) fn int_zero(out: &mut Vec<u8>, n: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    let s = b.format(n);
    out.resize(out.len() + width.saturating_sub(s.len()), b'0');
    out.extend_from_slice(s.as_bytes());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_writes_what_fmt_writes() {
        let mut out = Vec::new();
        for n in [0u64, 7, 42, 123_456, u64::MAX] {
            for w in [0, 1, 6, 11, 25] {
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
        ] {
            let a: SocketAddr = a.parse().unwrap();
            out.clear();
            addr(&mut out, &a);
            assert_eq!(out, a.to_string().as_bytes());
            out.clear();
            ip(&mut out, a.ip());
            assert_eq!(out, a.ip().to_string().as_bytes());
        }
    }
}
