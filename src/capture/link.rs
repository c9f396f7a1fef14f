//! From link-layer bytes to a UDP datagram (or the reason there is none), with
//! etherparse's lax slicing: no copy, no allocation.

use etherparse::{
    EtherType, IpFragOffset, IpNumber, Ipv6ExtensionSlice, LaxNetSlice, LaxSlicedPacket,
    LinuxSllProtocolType, LinuxSllSlice, TransportSlice, UdpSlice, ether_type,
};
use std::net::IpAddr;

/// The link types lwarscope reads, by what their frames start with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// Ethernet II, with any 802.1Q / 802.1ad (QinQ) tags.
    Ethernet,
    /// Linux cooked capture v1 (16-byte header).
    LinuxSll,
    /// Linux cooked capture v2 (20-byte header), what `-i any` gives.
    LinuxSll2,
    /// BSD loopback: a 4-byte address family in the capturing host's byte order.
    Null,
    /// OpenBSD loopback: the same, in network byte order.
    Loop,
    /// Raw IP: IPv4 or IPv6 by the version nibble (`RAW`, `IPV4`, `IPV6`).
    RawIp,
}

impl LinkType {
    /// The link type for a libpcap DLT / LINKTYPE value, if lwarscope reads it.
    pub const fn from_dlt(dlt: i32) -> Option<LinkType> {
        Some(match dlt {
            1 => LinkType::Ethernet,
            113 => LinkType::LinuxSll,
            276 => LinkType::LinuxSll2,
            0 => LinkType::Null,
            108 => LinkType::Loop,
            // DLT_RAW is 12 (14 on OpenBSD) in memory, LINKTYPE_RAW 101 in files.
            12 | 14 | 101 | 228 | 229 => LinkType::RawIp,
            _ => return None,
        })
    }

    /// The DLT value libpcap uses for it in memory (files get the matching LINKTYPE).
    pub const fn dlt(self) -> i32 {
        match self {
            LinkType::Ethernet => 1,
            LinkType::LinuxSll => 113,
            LinkType::LinuxSll2 => 276,
            LinkType::Null => 0,
            LinkType::Loop => 108,
            LinkType::RawIp => 12,
        }
    }
}

/// A UDP datagram found in a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Udp<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    /// As captured: may be shorter than `payload_len` when the snaplen cut it.
    pub payload: &'a [u8],
    pub payload_len: usize,
}

/// Which datagram a fragment belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FragKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub id: u32,
}

/// An IP fragment of a UDP datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fragment<'a> {
    pub key: FragKey,
    pub offset: IpFragOffset,
    pub more: bool,
    /// The fragment's share of the IP payload (the UDP header is in the first).
    pub payload: &'a [u8],
}

/// What one frame holds, before reassembly and the lwar check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dissected<'a> {
    Udp(Udp<'a>),
    Fragment(Fragment<'a>),
    NotUdp,
    NotIp,
    Truncated,
    Malformed,
}

/// Dissects one frame. `cut` says the capture kept less than the frame's length:
/// a header that ends early is then *truncated*, otherwise *malformed*.
pub(crate) fn dissect(link: LinkType, data: &[u8], cut: bool) -> Dissected<'_> {
    let bad = if cut {
        Dissected::Truncated
    } else {
        Dissected::Malformed
    };
    let sliced = match link {
        LinkType::Ethernet => match LaxSlicedPacket::from_ethernet(data) {
            Ok(p) => p,
            Err(_) => return bad,
        },
        LinkType::LinuxSll => match LinuxSllSlice::from_slice(data) {
            Ok(sll) => match sll.protocol_type() {
                LinuxSllProtocolType::EtherType(et) => {
                    LaxSlicedPacket::from_ether_type(et, sll.payload_slice())
                }
                _ => return Dissected::NotIp,
            },
            Err(etherparse::err::linux_sll::HeaderSliceError::Len(_)) => return bad,
            // An ARPHRD type etherparse does not know: not an IP frame.
            Err(_) => return Dissected::NotIp,
        },
        LinkType::LinuxSll2 => {
            // etherparse has no SLL2: protocol type (2), reserved (2), interface
            // index (4), ARPHRD type (2), packet type (1), address length (1),
            // address (8).
            let Some((header, rest)) = data.split_first_chunk::<20>() else {
                return bad;
            };
            let protocol = u16::from_be_bytes([header[0], header[1]]);
            LaxSlicedPacket::from_ether_type(EtherType(protocol), rest)
        }
        LinkType::Null | LinkType::Loop => {
            let Some((family, rest)) = data.split_first_chunk::<4>() else {
                return bad;
            };
            let family = if link == LinkType::Loop {
                u32::from_be_bytes(*family)
            } else {
                // Host byte order of the capturing machine: families are small,
                // so the zero half tells the order.
                let le = u32::from_le_bytes(*family);
                if le & 0xffff == 0 {
                    le.swap_bytes()
                } else {
                    le
                }
            };
            let ether_type = match family {
                2 => ether_type::IPV4,
                // AF_INET6: NetBSD/OpenBSD, FreeBSD, Darwin, Linux.
                24 | 28 | 30 | 10 => ether_type::IPV6,
                _ => return Dissected::NotIp,
            };
            LaxSlicedPacket::from_ether_type(ether_type, rest)
        }
        LinkType::RawIp => match LaxSlicedPacket::from_ip(data) {
            Ok(p) => p,
            Err(etherparse::err::ip::LaxHeaderSliceError::Len(_)) => return bad,
            Err(etherparse::err::ip::LaxHeaderSliceError::Content(_)) => {
                return Dissected::Malformed;
            }
        },
    };
    examine(&sliced, cut, bad)
}

/// Classifies a sliced frame.
fn examine<'a>(p: &LaxSlicedPacket<'a>, cut: bool, bad: Dissected<'a>) -> Dissected<'a> {
    let ip = match &p.net {
        Some(LaxNetSlice::Ipv4(v4)) => IpRef::V4(v4),
        Some(LaxNetSlice::Ipv6(v6)) => IpRef::V6(v6),
        Some(LaxNetSlice::Arp(_)) => return Dissected::NotIp,
        None => {
            // An IP EtherType whose header failed to slice, or a VLAN tag cut short.
            return if p.stop_err.is_some() {
                stop_class(p, cut, bad)
            } else {
                Dissected::NotIp
            };
        }
    };
    let payload = ip.payload();
    if payload.ip_number != IpNumber::UDP {
        return if p.stop_err.is_some() {
            stop_class(p, cut, bad)
        } else {
            Dissected::NotUdp
        };
    }
    if p.stop_err.is_some() {
        return stop_class(p, cut, bad);
    }
    if payload.incomplete && !cut {
        // The IP length reaches beyond a frame that was captured whole.
        return Dissected::Malformed;
    }
    if payload.fragmented {
        if payload.incomplete {
            return Dissected::Truncated;
        }
        return match ip.fragment(payload.payload) {
            Some(f) => Dissected::Fragment(f),
            None => Dissected::Malformed,
        };
    }
    let Some(TransportSlice::Udp(udp)) = &p.transport else {
        return stop_class(p, cut, bad);
    };
    udp_of(ip.src(), ip.dst(), udp, cut)
}

/// The class of a frame whose slicing stopped on an error.
fn stop_class<'a>(p: &LaxSlicedPacket<'a>, cut: bool, bad: Dissected<'a>) -> Dissected<'a> {
    use etherparse::err::packet::SliceError;
    match &p.stop_err {
        Some((SliceError::Len(_), _)) if cut => Dissected::Truncated,
        _ => bad,
    }
}

/// The datagram of a sliced UDP header, or why it is not usable.
fn udp_of<'a>(src: IpAddr, dst: IpAddr, udp: &UdpSlice<'a>, cut: bool) -> Dissected<'a> {
    let payload = udp.payload();
    let length = usize::from(udp.length());
    // A length below the header (0 for IPv6 jumbograms): trust the IP length.
    let payload_len = if length >= 8 {
        length - 8
    } else {
        payload.len()
    };
    if payload.len() < payload_len && !cut {
        return Dissected::Malformed;
    }
    Dissected::Udp(Udp {
        src,
        dst,
        src_port: udp.source_port(),
        dst_port: udp.destination_port(),
        payload,
        payload_len,
    })
}

/// The UDP datagram of a reassembled IP payload.
pub(crate) fn reassembled_udp<'a>(key: &FragKey, data: &'a [u8]) -> Dissected<'a> {
    match UdpSlice::from_slice_lax(data) {
        Ok(udp) => udp_of(key.src, key.dst, &udp, false),
        Err(_) => Dissected::Malformed,
    }
}

/// Either IP version, for the few things `examine` asks of it.
enum IpRef<'p, 'a> {
    V4(&'p etherparse::LaxIpv4Slice<'a>),
    V6(&'p etherparse::LaxIpv6Slice<'a>),
}

impl<'a> IpRef<'_, 'a> {
    fn payload(&self) -> &etherparse::LaxIpPayloadSlice<'a> {
        match self {
            IpRef::V4(v4) => v4.payload(),
            IpRef::V6(v6) => v6.payload(),
        }
    }

    fn src(&self) -> IpAddr {
        match self {
            IpRef::V4(v4) => IpAddr::V4(v4.header().source_addr()),
            IpRef::V6(v6) => IpAddr::V6(v6.header().source_addr()),
        }
    }

    fn dst(&self) -> IpAddr {
        match self {
            IpRef::V4(v4) => IpAddr::V4(v4.header().destination_addr()),
            IpRef::V6(v6) => IpAddr::V6(v6.header().destination_addr()),
        }
    }

    /// The fragment this packet carries (its payload is `payload`).
    fn fragment(&self, payload: &'a [u8]) -> Option<Fragment<'a>> {
        let (id, offset, more) = match self {
            IpRef::V4(v4) => {
                let h = v4.header();
                (
                    u32::from(h.identification()),
                    h.fragments_offset(),
                    h.more_fragments(),
                )
            }
            IpRef::V6(v6) => {
                let frag = v6.extensions().clone().into_iter().find_map(|e| match e {
                    Ipv6ExtensionSlice::Fragment(f) => Some(f),
                    _ => None,
                })?;
                (
                    frag.identification(),
                    frag.fragment_offset(),
                    frag.more_fragments(),
                )
            }
        };
        Some(Fragment {
            key: FragKey {
                src: self.src(),
                dst: self.dst(),
                id,
            },
            offset,
            more,
            payload,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_bytes_never_panic_and_are_never_lwar() {
        for link in [
            LinkType::Ethernet,
            LinkType::LinuxSll,
            LinkType::LinuxSll2,
            LinkType::Null,
            LinkType::Loop,
            LinkType::RawIp,
        ] {
            for len in 0..64 {
                let data = vec![0xffu8; len];
                for cut in [false, true] {
                    let d = dissect(link, &data, cut);
                    assert!(!matches!(d, Dissected::Udp(_)), "{link:?} {len}");
                }
            }
        }
    }

    #[test]
    fn dlt_values_map_to_link_types() {
        assert_eq!(LinkType::from_dlt(1), Some(LinkType::Ethernet));
        assert_eq!(LinkType::from_dlt(12), Some(LinkType::RawIp));
        assert_eq!(LinkType::from_dlt(276), Some(LinkType::LinuxSll2));
        assert_eq!(LinkType::from_dlt(105), None); // 802.11
    }
}
