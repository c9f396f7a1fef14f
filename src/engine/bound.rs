//! The flows a protocol's handshake bound to it, as the reader of a
//! two-thread run saw them ([`super::ProbeMarks`]): Wireshark binds a
//! conversation to its dissector once recognised, and the reader stops
//! testing probes for such a flow's datagrams at that protocol. A guess, not
//! the engine's sessions (which end, time out and are evicted): the engine
//! checks it against its own flows, and a flow forgotten here (two flows in
//! one place, IPv6) only costs the probes tested again.

use crate::capture::Datagram;
use std::net::SocketAddr;

/// Places in the table: one flow each.
const PLACES: usize = 1024;

/// Bound flows by their IPv4 address pair, one place per pair (the latest
/// bound of those that share it): bounded, with nothing to sweep.
#[derive(Debug, Clone)]
pub(crate) struct BoundFlows {
    places: Box<[Place; PLACES]>,
    /// Whether any flow was bound (none: nothing to look up).
    any: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct Place {
    /// The pair's addresses as words, lower first.
    lo: u64,
    hi: u64,
    /// The protocol's index + 1; 0: empty.
    protocol: u8,
}

impl Default for BoundFlows {
    fn default() -> Self {
        BoundFlows {
            places: Box::new([Place::default(); PLACES]),
            any: false,
        }
    }
}

impl BoundFlows {
    /// The datagram's address pair as two words, lower first; `None` for
    /// IPv6 (never bound).
    #[inline]
    fn pair(d: &Datagram<'_>) -> Option<(u64, u64)> {
        let word = |a: &SocketAddr| match a {
            SocketAddr::V4(v4) => Some((u64::from(v4.ip().to_bits()) << 16) | u64::from(v4.port())),
            SocketAddr::V6(_) => None,
        };
        let (a, b) = (word(&d.src)?, word(&d.dst)?);
        Some((a.min(b), a.max(b)))
    }

    #[inline]
    fn place(lo: u64, hi: u64) -> usize {
        let h = (lo ^ hi.rotate_left(24)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - PLACES.trailing_zeros())) as usize
    }

    /// Binds the datagram's flow to protocol `protocol`.
    #[inline(never)]
    pub(crate) fn bind(&mut self, d: &Datagram<'_>, protocol: usize) {
        let (Some((lo, hi)), Ok(protocol)) = (Self::pair(d), u8::try_from(protocol + 1)) else {
            return;
        };
        if let Some(p) = self.places.get_mut(Self::place(lo, hi)) {
            *p = Place { lo, hi, protocol };
            self.any = true;
        }
    }

    /// The protocol the datagram's flow is bound to.
    #[inline]
    pub(crate) fn protocol_of(&self, d: &Datagram<'_>) -> Option<usize> {
        if !self.any {
            return None;
        }
        let (lo, hi) = Self::pair(d)?;
        let p = self.places.get(Self::place(lo, hi))?;
        (p.lo == lo && p.hi == hi && p.protocol > 0).then(|| usize::from(p.protocol) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::OwnedDatagram;

    fn datagram(src: &str, dst: &str) -> OwnedDatagram {
        let ts = crate::capture::Timestamp::default();
        OwnedDatagram::new(
            1,
            ts,
            src.parse().unwrap(),
            dst.parse().unwrap(),
            vec![0; 8],
        )
    }

    #[test]
    fn a_flow_is_bound_both_ways_to_its_latest_protocol() {
        let mut bound = BoundFlows::default();
        let there = datagram("10.0.0.1:5000", "10.0.0.2:7000");
        let back = datagram("10.0.0.2:7000", "10.0.0.1:5000");
        let other = datagram("10.0.0.1:5001", "10.0.0.2:7000");
        assert_eq!(bound.protocol_of(&there.as_datagram()), None);
        bound.bind(&there.as_datagram(), 2);
        assert_eq!(bound.protocol_of(&there.as_datagram()), Some(2));
        assert_eq!(bound.protocol_of(&back.as_datagram()), Some(2));
        assert_eq!(bound.protocol_of(&other.as_datagram()), None);
        bound.bind(&there.as_datagram(), 1);
        assert_eq!(bound.protocol_of(&back.as_datagram()), Some(1));
        let v6 = datagram("[::1]:5000", "[::1]:7000");
        bound.bind(&v6.as_datagram(), 2);
        assert_eq!(bound.protocol_of(&v6.as_datagram()), None);
    }
}
