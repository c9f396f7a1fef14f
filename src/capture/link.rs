//! From link-layer bytes to a UDP datagram (or the reason there is none), with
//! etherparse's lax slicing: no copy, no allocation.

use etherparse::{
    EtherType, IpFragOffset, IpNumber, Ipv6ExtensionSlice, LaxIpSlice, LaxNetSlice,
    LaxSlicedPacket, TransportSlice, UdpSlice, ether_type,
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

/// The EtherType of a Linux cooked frame's payload, from its ARPHRD type and
/// protocol field (see `pcap-linktype(7)`, LINKTYPE_LINUX_SLL): for every
/// device type that carries IP (Ethernet, loopback, tunnels, PPP, `tun`...) the
/// protocol field is an EtherType. A few types use the field for something
/// else: netlink (824) and CAN (280) frames, and the 802.2 and Novell values
/// below 0x0600, which are not EtherTypes.
fn sll_ether_type(arphrd: u16, protocol: u16) -> Option<EtherType> {
    const ARPHRD_CAN: u16 = 280;
    const ARPHRD_NETLINK: u16 = 824;
    match arphrd {
        ARPHRD_CAN | ARPHRD_NETLINK => None,
        _ if protocol < 0x0600 => None,
        _ => Some(EtherType(protocol)),
    }
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
        LinkType::Ethernet => {
            // Ethernet II: destination, source, EtherType (what
            // `LaxSlicedPacket::from_ethernet` reads, without the copy).
            let Some((header, rest)) = data.split_first_chunk::<14>() else {
                return bad;
            };
            let ether_type = EtherType(u16::from_be_bytes([header[12], header[13]]));
            return from_ether_type(ether_type, rest, cut, bad);
        }
        LinkType::LinuxSll => {
            // Packet type (2), ARPHRD type (2), address length (2), address
            // (8), protocol type (2). Read here rather than by etherparse, which
            // refuses ARPHRD types it does not list (loopback, 772, is what
            // `-i any` gives for `lo`).
            let Some((header, rest)) = data.split_first_chunk::<16>() else {
                return bad;
            };
            let arphrd = u16::from_be_bytes([header[2], header[3]]);
            let protocol = u16::from_be_bytes([header[14], header[15]]);
            return match sll_ether_type(arphrd, protocol) {
                Some(et) => from_ether_type(et, rest, cut, bad),
                None => Dissected::NotIp,
            };
        }
        LinkType::LinuxSll2 => {
            // etherparse has no SLL2: protocol type (2), reserved (2), interface
            // index (4), ARPHRD type (2), packet type (1), address length (1),
            // address (8).
            let Some((header, rest)) = data.split_first_chunk::<20>() else {
                return bad;
            };
            let protocol = u16::from_be_bytes([header[0], header[1]]);
            let arphrd = u16::from_be_bytes([header[8], header[9]]);
            return match sll_ether_type(arphrd, protocol) {
                Some(et) => from_ether_type(et, rest, cut, bad),
                None => Dissected::NotIp,
            };
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
            return from_ether_type(ether_type, rest, cut, bad);
        }
        LinkType::RawIp => {
            if let Some(d) = plain_udp(data, cut) {
                return d;
            }
            match LaxSlicedPacket::from_ip(data) {
                Ok(p) => p,
                Err(etherparse::err::ip::LaxHeaderSliceError::Len(_)) => return bad,
                Err(etherparse::err::ip::LaxHeaderSliceError::Content(_)) => {
                    return Dissected::Malformed;
                }
            }
        }
    };
    examine(&sliced, cut, bad)
}

/// Dissects what follows a link header of type `ether_type`.
fn from_ether_type<'a>(
    ether_type: EtherType,
    rest: &'a [u8],
    cut: bool,
    bad: Dissected<'a>,
) -> Dissected<'a> {
    if matches!(ether_type, ether_type::IPV4 | ether_type::IPV6)
        && let Some(d) = plain_udp(rest, cut)
    {
        return d;
    }
    examine(
        &LaxSlicedPacket::from_ether_type(ether_type, rest),
        cut,
        bad,
    )
}

/// The common case, sliced layer by layer: an IP packet that etherparse slices
/// without error, carrying a whole unfragmented UDP datagram. It gives what
/// [`examine`] gives for such a packet, without building a [`LaxSlicedPacket`]
/// (a large value that etherparse moves through each layer: twice the cost).
/// `None` for anything else, left to [`examine`].
fn plain_udp(ip: &[u8], cut: bool) -> Option<Dissected<'_>> {
    let (ip, None) = LaxIpSlice::from_slice(ip).ok()? else {
        return None;
    };
    let payload = ip.payload();
    if payload.ip_number != IpNumber::UDP || payload.fragmented || payload.incomplete {
        return None;
    }
    let udp = UdpSlice::from_slice_lax(payload.payload).ok()?;
    let (src, dst) = match &ip {
        LaxIpSlice::Ipv4(v4) => (
            IpAddr::V4(v4.header().source_addr()),
            IpAddr::V4(v4.header().destination_addr()),
        ),
        LaxIpSlice::Ipv6(v6) => (
            IpAddr::V6(v6.header().source_addr()),
            IpAddr::V6(v6.header().destination_addr()),
        ),
    };
    Some(udp_of(src, dst, &udp, cut))
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
    // A length below the header is broken (Linux drops the datagram), but for
    // 0 over IPv6, which a jumbogram uses: its length is the IP one.
    let payload_len = if length >= 8 {
        length - 8
    } else if length == 0 && src.is_ipv6() {
        payload.len()
    } else {
        return Dissected::Malformed;
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

/// libpcap's name of a link type (DLT), `unknown` if it has none.
pub(crate) fn dlt_name(dlt: i32) -> String {
    pcap::Linktype(dlt)
        .get_name()
        .unwrap_or_else(|_| "unknown".into())
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

    /// The fast path for plain UDP gives what the general path gives, on valid
    /// packets and on every truncation and single-byte change of them.
    #[test]
    fn plain_udp_agrees_with_the_general_path() {
        use crate::capture::synth::{Link, frame, udp_fragments, udp_packet};
        let v4 = (
            "10.0.0.1:5000".parse().unwrap(),
            "10.0.0.2:32422".parse().unwrap(),
        );
        let v6 = (
            "[::1]:5000".parse().unwrap(),
            "[::2]:32422".parse().unwrap(),
        );
        let payload = b"\x6c\x77\x61\x72 some lwar-looking payload";
        let mut packets = Vec::new();
        for (src, dst) in [v4, v6] {
            packets.push(udp_packet(src, dst, payload));
            packets.extend(udp_fragments(src, dst, 7, payload, 16));
        }
        let mut checked = 0;
        let mut fast = 0;
        let mut check = |ether_type: EtherType, ip: &[u8]| {
            for cut in [false, true] {
                let bad = if cut {
                    Dissected::Truncated
                } else {
                    Dissected::Malformed
                };
                let general = examine(&LaxSlicedPacket::from_ether_type(ether_type, ip), cut, bad);
                assert_eq!(
                    from_ether_type(ether_type, ip, cut, bad),
                    general,
                    "{ip:02x?}"
                );
                if let Some(d) = plain_udp(ip, cut) {
                    assert_eq!(d, general);
                    fast += 1;
                }
                checked += 1;
            }
        };
        for packet in &packets {
            for ether_type in [ether_type::IPV4, ether_type::IPV6] {
                for len in 0..=packet.len() {
                    check(ether_type, &packet[..len]);
                }
                for i in 0..packet.len() {
                    for value in [0x00, 0x01, 0x06, 0x11, 0x2c, 0x45, 0x60, 0x80, 0xff] {
                        let mut changed = packet.clone();
                        changed[i] = value;
                        check(ether_type, &changed);
                    }
                }
            }
        }
        // Both paths were exercised.
        assert!(fast > 100 && fast < checked, "{fast} of {checked}");

        // Ethernet frames, with and without a VLAN tag, as etherparse slices them.
        for packet in &packets {
            for link in [Link::Ethernet, Link::Vlan(7)] {
                let frame = frame(link, packet);
                for len in 0..=frame.len() {
                    let data = &frame[..len];
                    for cut in [false, true] {
                        let bad = if cut {
                            Dissected::Truncated
                        } else {
                            Dissected::Malformed
                        };
                        let general = match LaxSlicedPacket::from_ethernet(data) {
                            Ok(p) => examine(&p, cut, bad),
                            Err(_) => bad,
                        };
                        assert_eq!(dissect(LinkType::Ethernet, data, cut), general);
                    }
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
