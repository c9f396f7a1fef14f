//! Serial-number arithmetic (RFC 1982) for sequence numbers of 8, 16 or 32 bits:
//! wrap-safe comparisons and distances, so that a counter going from its
//! maximum back to 0 is never taken for a regression.
//!
//! `a` is newer than `b` when `(a - b) mod 2^bits` is in `1..2^(bits-1)`; exactly
//! half the space apart is undefined by the RFC ([`SerialSpace::compare`] says
//! `None`). Protocols whose rule differs (Vessel's "128 or fewer ahead in the
//! 256-step cycle is newer") use [`SerialSpace::ahead`] with their own window.

use std::cmp::Ordering;

/// The numbers of `bits` bits (1 to 32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SerialSpace {
    bits: u8,
}

impl SerialSpace {
    pub const U8: SerialSpace = SerialSpace { bits: 8 };
    pub const U16: SerialSpace = SerialSpace { bits: 16 };
    pub const U32: SerialSpace = SerialSpace { bits: 32 };

    /// A space of `bits` bits; `None` outside 1..=32.
    pub const fn new(bits: u8) -> Option<SerialSpace> {
        if bits >= 1 && bits <= 32 {
            Some(SerialSpace { bits })
        } else {
            None
        }
    }

    pub const fn bits(self) -> u8 {
        self.bits
    }

    /// The largest number: `2^bits - 1`.
    pub const fn max(self) -> u32 {
        (((1u64) << self.bits) - 1) as u32
    }

    /// Half the space: `2^(bits-1)`.
    pub const fn half(self) -> u32 {
        1 << (self.bits - 1)
    }

    /// `a + n`, wrapping.
    pub const fn add(self, a: u32, n: u32) -> u32 {
        a.wrapping_add(n) & self.max()
    }

    /// `a - n`, wrapping.
    pub const fn sub(self, a: u32, n: u32) -> u32 {
        a.wrapping_sub(n) & self.max()
    }

    /// How far `a` is ahead of `b`: `(a - b) mod 2^bits`.
    pub const fn ahead(self, a: u32, b: u32) -> u32 {
        self.sub(a, b)
    }

    /// The signed distance from `b` to `a`: positive when `a` is newer, in
    /// `-(2^(bits-1)) + 1 ..= 2^(bits-1) - 1`; `None` exactly half apart.
    pub const fn distance(self, a: u32, b: u32) -> Option<i64> {
        let d = self.ahead(a, b);
        if d == self.half() {
            None
        } else if d < self.half() {
            Some(d as i64)
        } else {
            Some(d as i64 - (1i64 << self.bits))
        }
    }

    /// RFC 1982 comparison: `Greater` when `a` is newer than `b`; `None`
    /// exactly half the space apart (undefined).
    pub const fn compare(self, a: u32, b: u32) -> Option<Ordering> {
        match self.distance(a, b) {
            None => None,
            Some(0) => Some(Ordering::Equal),
            Some(d) if d > 0 => Some(Ordering::Greater),
            Some(_) => Some(Ordering::Less),
        }
    }

    /// `a` is newer than `b` (RFC 1982).
    pub const fn newer(self, a: u32, b: u32) -> bool {
        matches!(self.compare(a, b), Some(Ordering::Greater))
    }
}

/// A 32-bit acknowledgement bitfield anchored on a sequence number, as
/// Starstrike's draft defines it: bit `n` (0 the least significant) set
/// acknowledges the peer's packet `anchor - n - 1`.
pub fn bitfield_acks(space: SerialSpace, anchor: u32, bits: u32) -> impl Iterator<Item = u32> {
    (0..32u32)
        .filter(move |n| bits & (1 << n) != 0)
        .map(move |n| space.sub(anchor, n + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bits_wrap_at_65535() {
        let s = SerialSpace::U16;
        assert!(s.newer(0, 65535));
        assert!(s.newer(5, 65530));
        assert!(!s.newer(65535, 0));
        assert_eq!(s.distance(0, 65535), Some(1));
        assert_eq!(s.distance(65535, 0), Some(-1));
        assert_eq!(s.add(65535, 1), 0);
        assert_eq!(s.sub(0, 1), 65535);
        assert_eq!(s.ahead(2, 65534), 4);
    }

    #[test]
    fn half_apart_is_undefined() {
        for s in [SerialSpace::U8, SerialSpace::U16, SerialSpace::U32] {
            assert_eq!(s.compare(s.half(), 0), None, "{s:?}");
            assert_eq!(s.compare(s.half() - 1, 0), Some(Ordering::Greater));
            assert_eq!(s.compare(s.add(s.half(), 1), 0), Some(Ordering::Less));
            assert_eq!(s.compare(7, 7), Some(Ordering::Equal));
        }
    }

    #[test]
    fn eight_bits_at_every_boundary() {
        let s = SerialSpace::U8;
        assert_eq!(s.max(), 255);
        assert!(s.newer(0, 255));
        assert_eq!(s.ahead(127, 0), 127);
        assert!(s.newer(127, 0));
        assert_eq!(s.compare(128, 0), None);
        assert!(!s.newer(129, 0));
        // Vessel's own rule: 128 or fewer ahead is newer.
        let vessel_newer = |a, b| (1..=128).contains(&s.ahead(a, b));
        assert!(vessel_newer(128, 0));
        assert!(!vessel_newer(129, 0));
        assert!(vessel_newer(0, 255));
    }

    #[test]
    fn thirty_two_bits_wrap() {
        let s = SerialSpace::U32;
        assert_eq!(s.max(), u32::MAX);
        assert!(s.newer(0, u32::MAX));
        assert_eq!(s.distance(1, u32::MAX), Some(2));
        assert_eq!(SerialSpace::new(0), None);
        assert_eq!(SerialSpace::new(33), None);
        assert_eq!(SerialSpace::new(12).map(|s| s.max()), Some(4095));
    }

    #[test]
    fn bitfield_acks_count_back_from_the_anchor() {
        let acked: Vec<u32> = bitfield_acks(SerialSpace::U16, 100, 0b1011).collect();
        assert_eq!(acked, [99, 98, 96]);
        let wrapped: Vec<u32> = bitfield_acks(SerialSpace::U16, 1, 0b11 | 1 << 31).collect();
        assert_eq!(wrapped, [0, 65535, 65505]);
        assert_eq!(bitfield_acks(SerialSpace::U16, 5, 0).count(), 0);
    }
}
