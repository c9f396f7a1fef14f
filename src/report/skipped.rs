//! The UDP traffic no protocol recognised, explained: the ports most of it
//! used, with how much of each port's traffic every protocol's decoder reads,
//! and the `-d udp.port==N,PROTO` that would decode most of it.
//!
//! Bounded: one table of 65 536 counters (allocated at the first such
//! datagram, so that a capture of game traffic alone allocates nothing) counts
//! every port exactly; a fixed table of `SLOTS` ports holds the decoders'
//! results, each port's first [`SAMPLE`] datagrams tried by every protocol's
//! [`Dissector`](crate::proto::dissect::Dissector). A port with more datagrams
//! than the least of those held takes its slot (its sample starts anew), so
//! the slots end on the busiest ports. At most [`BUDGET`] datagrams are tried
//! in a run. Nothing is allocated per datagram, but by a decoder that
//! allocates on bytes it does not read (Vessel's), within that budget.
//!
//! A datagram "decodes as" a protocol when its dissector reads every message
//! of it (`Dissector::messages` returns no error) and the payload is not
//! empty: what a port named with `-d` would show as that protocol's packets
//! rather than as malformed ones.

use crate::capture::Datagram;
use crate::engine::ProtocolInfo;
use std::fmt;

/// The ports shown, busiest first.
pub const TOP_PORTS: usize = 5;
/// The ports whose datagrams are tried by the decoders at once.
const SLOTS: usize = 8;
/// The datagrams of a port each decoder is tried on.
pub const SAMPLE: u32 = 256;
/// The protocols tried: the first of the registry (the built-in ones and the
/// shipped descriptions fit).
const TRIED: usize = 16;
/// The datagrams tried in all, over a run: the decoders' own work (and the
/// allocations of those that allocate on a decode error: Vessel's, prost's
/// errors) is bounded whatever the capture, and nothing is tried after.
pub const BUDGET: u32 = 4 * SLOTS as u32 * SAMPLE;

/// A port's share of decoded datagrams above which the hint suggests its
/// protocol (`-d`): most of them.
fn suggested(decoded: u32, sampled: u32) -> bool {
    sampled > 0 && u64::from(decoded) * 2 > u64::from(sampled)
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    port: u16,
    sampled: u32,
    decoded: [u32; TRIED],
}

/// Unrecognised datagrams per port (either side, once per datagram), and the
/// decoders tried on the busiest ports.
#[derive(Default)]
pub(super) struct PortTally {
    pub(super) datagrams: u64,
    ports: Option<Box<[u64]>>,
    slots: [Slot; SLOTS],
    used: usize,
    /// Datagrams tried so far, up to [`BUDGET`].
    tried: u32,
}

impl fmt::Debug for PortTally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PortTally({} datagrams)", self.datagrams)
    }
}

/// Whether each protocol of the registry decodes `payload` (the first
/// [`TRIED`]).
fn try_decoders(payload: &[u8]) -> [bool; TRIED] {
    let mut out = [false; TRIED];
    if payload.is_empty() {
        return out;
    }
    for (ok, p) in out.iter_mut().zip(crate::proto::REGISTRY.iter()) {
        *ok = p.info.dissector.messages(payload, &mut |_| {}).is_ok();
    }
    out
}

impl PortTally {
    pub(super) fn add(&mut self, d: &Datagram<'_>) {
        self.datagrams += 1;
        let ports = self
            .ports
            .get_or_insert_with(|| vec![0; 1 << 16].into_boxed_slice());
        let (a, b) = (d.src.port(), d.dst.port());
        let mut tried: Option<[bool; TRIED]> = None;
        for p in [Some(a), (b != a).then_some(b)].into_iter().flatten() {
            if let Some(n) = ports.get_mut(usize::from(p)) {
                *n += 1;
            }
            if self.tried >= BUDGET {
                continue;
            }
            let Some(i) = slot_for(&mut self.slots, &mut self.used, ports, p) else {
                continue;
            };
            let slot = &mut self.slots[i];
            if slot.sampled >= SAMPLE {
                continue;
            }
            let t = tried.get_or_insert_with(|| {
                self.tried += 1;
                try_decoders(d.payload)
            });
            slot.sampled += 1;
            for (n, ok) in slot.decoded.iter_mut().zip(t) {
                *n += u32::from(*ok);
            }
        }
    }

    /// The busiest ports, busiest first (the lowest port of a tie), with what
    /// the decoders made of them.
    pub(super) fn top(&self) -> Ports {
        let mut out = Ports::default();
        let Some(ports) = self.ports.as_deref() else {
            return out;
        };
        for (p, &n) in ports.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let Some(at) = (0..TOP_PORTS).find(|&i| i >= out.len || n > out.ports[i].datagrams)
            else {
                continue;
            };
            out.ports.copy_within(at..TOP_PORTS - 1, at + 1);
            out.ports[at] = PortHint {
                port: u16::try_from(p).unwrap_or(u16::MAX),
                datagrams: n,
                ..PortHint::default()
            };
            out.len = (out.len + 1).min(TOP_PORTS);
        }
        for hint in &mut out.ports[..out.len] {
            let Some(slot) = self.slots[..self.used].iter().find(|s| s.port == hint.port) else {
                continue;
            };
            hint.sampled = slot.sampled;
            // The protocol that decodes most of the sample (the first
            // registered of a tie), if any decodes one.
            let best = (slot.decoded.iter())
                .zip(crate::proto::REGISTRY.iter())
                .fold(None, |best: Option<(u32, _)>, (&n, p)| match best {
                    Some((b, _)) if b >= n => best,
                    _ if n > 0 => Some((n, p.info)),
                    _ => best,
                });
            hint.best = best.map(|(n, p)| (p, n));
        }
        out
    }
}

/// The slot of port `p`: the one it holds, a free one, or the one of the port
/// with the fewest datagrams when `p` has more (its sample starts anew).
fn slot_for(slots: &mut [Slot; SLOTS], used: &mut usize, ports: &[u64], p: u16) -> Option<usize> {
    if let Some(i) = slots[..*used].iter().position(|s| s.port == p) {
        return Some(i);
    }
    let count = |port: u16| ports.get(usize::from(port)).copied().unwrap_or(0);
    let i = match *used < SLOTS {
        true => {
            *used += 1;
            *used - 1
        }
        false => {
            let (i, least) = (slots.iter().enumerate())
                .min_by_key(|(_, s)| count(s.port))
                .map(|(i, s)| (i, count(s.port)))?;
            if count(p) <= least {
                return None;
            }
            i
        }
    };
    slots[i] = Slot {
        port: p,
        ..Slot::default()
    };
    Some(i)
}

/// One port of the unrecognised traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortHint {
    pub port: u16,
    /// Unrecognised datagrams from or to it.
    pub datagrams: u64,
    /// Of them, those the decoders were tried on (at most [`SAMPLE`]; 0 when
    /// the port never held a slot).
    pub sampled: u32,
    /// The protocol that decoded most of the sample, and how many.
    pub best: Option<(&'static ProtocolInfo, u32)>,
}

impl PortHint {
    /// The protocol to decode the port as, when it decodes most of the
    /// sample.
    pub fn suggestion(&self) -> Option<&'static ProtocolInfo> {
        self.best
            .filter(|&(_, n)| suggested(n, self.sampled))
            .map(|(p, _)| p)
    }

    /// The share of the sample its best protocol decodes, in whole percent
    /// (rounded down: 100 only when all of it does).
    fn percent(&self) -> u64 {
        let n = self.best.map_or(0, |(_, n)| n);
        u64::from(n) * 100 / u64::from(self.sampled.max(1))
    }
}

/// `port 7455: 556 datagrams, 99 % decode as Battlegrounds: try -d
/// udp.port==7455,bg`, or why nothing is suggested.
impl fmt::Display for PortHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.datagrams == 1 { "" } else { "s" };
        write!(f, "port {}: {} datagram{s}, ", self.port, self.datagrams)?;
        match (self.best, self.suggestion()) {
            _ if self.sampled == 0 => f.write_str("not tried (busier ports held the decoders)"),
            (Some((p, _)), Some(_)) => write!(
                f,
                "{} % decode as {}: try -d udp.port=={},{}",
                self.percent(),
                p.title,
                self.port,
                p.name
            ),
            (Some((p, _)), None) => write!(
                f,
                "no protocol decodes most of them (at best {} % as {})",
                self.percent(),
                p.title
            ),
            (None, _) => f.write_str("no protocol decodes any"),
        }
    }
}

/// The busiest ports of the unrecognised traffic, busiest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ports {
    ports: [PortHint; TOP_PORTS],
    len: usize,
}

impl Ports {
    pub fn iter(&self) -> impl Iterator<Item = &PortHint> {
        self.ports[..self.len].iter()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The busiest port with a protocol to suggest, if any.
    pub fn suggestion(&self) -> Option<&PortHint> {
        self.iter().find(|h| h.suggestion().is_some())
    }
}

/// The one line `--packets`, `-T fields` and `check` write on standard
/// error about the unrecognised traffic: when a port of it decodes mostly as
/// a protocol (`224 UDP datagrams of no known protocol skipped; port 7777:
/// 224 datagrams, 100 % decode as Battlegrounds: try -d
/// udp.port==7777,bg`), or when nothing at all was recognised (the busiest
/// port then). `None` otherwise: traffic no decoder reads, beside a game that
/// was recognised, is only counted.
pub fn hint(u: &super::Unknown) -> Option<String> {
    let port = match u.ports.suggestion() {
        Some(h) => h,
        None if u.recognised == 0 => u.ports.iter().next()?,
        None => return None,
    };
    let s = if u.datagrams == 1 { "" } else { "s" };
    Some(format!(
        "{} UDP datagram{s} of no known protocol skipped; {port}",
        u.datagrams
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Timestamp;
    use std::net::SocketAddr;

    fn datagram(src: u16, dst: u16, payload: &[u8]) -> Datagram<'_> {
        Datagram::new(
            1,
            Timestamp(0),
            SocketAddr::from(([10, 0, 0, 1], src)),
            SocketAddr::from(([10, 0, 0, 2], dst)),
            payload,
        )
    }

    #[test]
    fn the_busiest_ports_come_first_and_ties_go_to_the_lowest() {
        let mut t = PortTally::default();
        for _ in 0..3 {
            t.add(&datagram(5000, 53, b""));
        }
        t.add(&datagram(6000, 54, b""));
        let top = t.top();
        let ports: Vec<(u16, u64)> = top.iter().map(|h| (h.port, h.datagrams)).collect();
        assert_eq!(ports, [(53, 3), (5000, 3), (54, 1), (6000, 1)]);
        // Empty payloads decode as nothing.
        assert_eq!(
            top.iter().next().unwrap().to_string(),
            "port 53: 3 datagrams, no protocol decodes any"
        );
    }

    #[test]
    fn a_busier_port_takes_the_slot_of_the_least_busy() {
        let mut t = PortTally::default();
        for p in 0..SLOTS as u16 {
            t.add(&datagram(1000 + p, 1000 + p, b""));
        }
        // A ninth port: no slot until it has more datagrams than the least.
        t.add(&datagram(9000, 9000, b""));
        assert!(t.slots.iter().all(|s| s.port != 9000));
        t.add(&datagram(9000, 9000, b""));
        assert!(t.slots.iter().any(|s| s.port == 9000 && s.sampled == 1));
        assert_eq!(t.top().iter().next().unwrap().port, 9000);
    }

    #[test]
    fn the_sample_is_bounded() {
        let mut t = PortTally::default();
        for _ in 0..SAMPLE + 10 {
            t.add(&datagram(7000, 7000, b"x"));
        }
        let top = t.top();
        let h = top.iter().next().unwrap();
        assert_eq!((h.datagrams, h.sampled), (u64::from(SAMPLE) + 10, SAMPLE));
    }
}
