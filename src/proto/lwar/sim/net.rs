//! The virtual network between the simulated peers: netem/clumsy-style faults,
//! one set of rates per direction, and the capture tap.
//!
//! # The network and tap model
//!
//! Every datagram a peer sends goes through these steps, in this order, with the
//! rates of its direction (`c2s` or `s2c`):
//!
//! 1. **loss**: the datagram vanishes. It is neither captured nor delivered.
//! 2. **corruption**: a kind is chosen uniformly among the enabled
//!    [`CorruptKind`]s; it changes this datagram, or the next one of the same
//!    direction it applies to (a string corruption waits for a datagram that
//!    carries a string).
//! 3. **duplication** (only of datagrams that were not corrupted): a second,
//!    identical copy follows the first by a few microseconds.
//! 4. **delay**: `latency` plus a uniform `0..=jitter`, plus a 200 µs wire time.
//!    Jitter alone may reorder datagrams, as netem does.
//! 5. **reordering**: the datagram is held back 80 to 160 ms more, so that the
//!    datagrams sent after it overtake it.
//! 6. **noise**: a non-lwar UDP datagram (random bytes that never start with the
//!    lwar appId, between the same hosts, to port 9) is put on the wire just
//!    before this datagram arrives.
//!
//! Then the datagram reaches the **capture tap**, which sits just before the
//! receiver: every fault above is visible in the capture, which records the
//! datagram at its arrival time. A `tap-miss` rate drops the datagram from the
//! capture only, as a kernel drop would: the receiver still gets it. The receiver
//! gets exactly the bytes the tap saw. Faults are recorded in the ground truth with
//! the frame number that shows them (none for losses and tap misses).
//!
//! **A tap away from the clients** (`--tap-to-client`): each client may sit a
//! fixed one-way delay beyond the tap, both ways, on a fault-free stretch of
//! the path (a tap beside the server, the clients 30 to 80 ms away). A
//! client's datagram crosses that stretch before the steps above, so the tap
//! (beside the server) captures it that much later; a server's datagram
//! goes through the steps above, is captured, and reaches its client that
//! much after the tap. With `--latency 0`, the tap is where the server is:
//! what the server sends is captured as it is sent, and a client repeats a
//! message while the ack the tap already captured is still on its way.

use crate::engine::Direction;
use crate::proto::lwar::wire::{
    Collision, Id, MAX_PACKET_SIZE, MessageRepr, MessageType, Packet, is_lwar,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Fault rates (0.0 to 1.0) and delays of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Faults {
    pub loss: f64,
    pub duplicate: f64,
    pub reorder: f64,
    pub corrupt: f64,
    pub noise: f64,
    pub tap_miss: f64,
    /// Microseconds.
    pub latency_us: u64,
    /// Microseconds.
    pub jitter_us: u64,
}

/// The ways a datagram can be corrupted: one per kind of malformed packet the
/// codec distinguishes, plus the two violations that corruption can cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CorruptKind {
    /// Cut the datagram inside a message (`truncated-message`).
    Truncated,
    /// Cut the datagram inside the header, keeping the appId (`short-header`).
    ShortHeader,
    /// Replace a message's type id by one the specification does not define.
    UnknownType,
    /// Replace a message's type id by the deprecated 102.
    DeprecatedType,
    /// A string length byte larger than what remains (`truncated-message`).
    BadStringLength,
    /// A byte of a name or chat text that is not UTF-8 (a violation).
    InvalidUtf8,
    /// Padding past 512 bytes with extra valid unreliable messages (a violation).
    Oversize,
}

impl CorruptKind {
    pub const ALL: [CorruptKind; 7] = [
        CorruptKind::Truncated,
        CorruptKind::ShortHeader,
        CorruptKind::UnknownType,
        CorruptKind::DeprecatedType,
        CorruptKind::BadStringLength,
        CorruptKind::InvalidUtf8,
        CorruptKind::Oversize,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            CorruptKind::Truncated => "truncated",
            CorruptKind::ShortHeader => "short-header",
            CorruptKind::UnknownType => "unknown-type",
            CorruptKind::DeprecatedType => "deprecated-type",
            CorruptKind::BadStringLength => "bad-string-length",
            CorruptKind::InvalidUtf8 => "invalid-utf8",
            CorruptKind::Oversize => "oversize",
        }
    }
}

/// What happened to a datagram on its way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// `loss`, `duplicate`, `reorder`, `tap-miss`, `noise` or `corrupt:<kind>`.
    pub kind: String,
    pub detail: String,
}

/// A datagram on the wire.
#[derive(Debug)]
pub struct InFlight {
    pub arrival_us: u64,
    seq: u64,
    /// Index of the client of the session.
    pub client: usize,
    pub dir: Direction,
    pub payload: Vec<u8>,
    /// Faults to record when (and if) the tap sees it.
    pub faults: Vec<Fault>,
    /// A noise datagram that arrives just before this one.
    pub noise: Option<Vec<u8>>,
    /// False when the tap misses it (it is still delivered).
    pub captured: bool,
    /// Microseconds between the tap and the receiver: the datagram reaches
    /// the receiver this long after the tap saw it.
    pub beyond_tap_us: u64,
}

impl PartialEq for InFlight {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for InFlight {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.arrival_us, self.seq).cmp(&(other.arrival_us, other.seq))
    }
}

/// Wire time of every datagram, so that nothing arrives in the step it was sent.
pub const WIRE_US: u64 = 200;

/// The virtual network: datagrams in flight, ordered by arrival time.
#[derive(Debug)]
pub struct Network {
    rates: [Faults; 2],
    kinds: Vec<CorruptKind>,
    rng: ChaCha8Rng,
    in_flight: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    /// Per direction, a corruption chosen but waiting for a datagram it applies to.
    pending: [Option<CorruptKind>; 2],
    /// Faults of datagrams that never reach the tap (losses), in order.
    pub lost: Vec<(usize, Direction, Fault)>,
    /// Each client's one-way delay beyond the tap, in µs (none: 0).
    beyond_tap_us: Vec<u64>,
    /// Datagrams past the tap, on their way to a client beyond it.
    beyond_tap: BinaryHeap<Reverse<InFlight>>,
}

impl Network {
    /// A network with these rates (`c2s`, `s2c`) and corruption kinds.
    pub fn new(c2s: Faults, s2c: Faults, kinds: Vec<CorruptKind>, seed: u64) -> Self {
        Network {
            rates: [c2s, s2c],
            kinds,
            rng: ChaCha8Rng::seed_from_u64(seed),
            in_flight: BinaryHeap::new(),
            seq: 0,
            pending: [None; 2],
            lost: Vec::new(),
            beyond_tap_us: Vec::new(),
            beyond_tap: BinaryHeap::new(),
        }
    }

    /// Puts each client `k` `delays_us[k]` µs beyond the tap, both ways (see
    /// the module's docs).
    pub fn with_clients_beyond_tap(mut self, delays_us: Vec<u64>) -> Self {
        self.beyond_tap_us = delays_us;
        self
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.random_bool(p.min(1.0))
    }

    /// Puts a datagram on the wire at `now_us`.
    pub fn send(&mut self, now_us: u64, client: usize, dir: Direction, mut payload: Vec<u8>) {
        let f = self.rates[dir.index()];
        if self.chance(f.loss) {
            self.lost.push((
                client,
                dir,
                Fault {
                    kind: "loss".into(),
                    detail: format!("{} bytes", payload.len()),
                },
            ));
            return;
        }
        let mut faults = Vec::new();
        let mut corrupted = false;
        if self.chance(f.corrupt) && !self.kinds.is_empty() {
            let kind = self.kinds[self.rng.random_range(0..self.kinds.len())];
            self.pending[dir.index()].get_or_insert(kind);
        }
        if let Some(kind) = self.pending[dir.index()]
            && applies(kind, &payload, dir)
        {
            self.pending[dir.index()] = None;
            let detail = corrupt(kind, &mut payload, dir, &mut self.rng);
            faults.push(Fault {
                kind: format!("corrupt:{}", kind.name()),
                detail,
            });
            corrupted = true;
        }
        let duplicate = !corrupted && self.chance(f.duplicate);
        let beyond = self.beyond_tap_us.get(client).copied().unwrap_or(0);
        // A client beyond the tap: its datagrams cross that stretch before
        // the tap, the server's after it.
        let (before_tap, beyond_tap_us) = match dir {
            Direction::ClientToServer => (beyond, 0),
            Direction::ServerToClient => (0, beyond),
        };
        let mut arrival = now_us + before_tap + WIRE_US + f.latency_us;
        if f.jitter_us > 0 {
            arrival += self.rng.random_range(0..=f.jitter_us);
        }
        if self.chance(f.reorder) {
            let hold = self.rng.random_range(80_000..=160_000);
            arrival += hold;
            faults.push(Fault {
                kind: "reorder".into(),
                detail: format!("held back {} ms", hold / 1000),
            });
        }
        if duplicate {
            let copy = InFlight {
                arrival_us: arrival + self.rng.random_range(1..=50),
                seq: 0,
                client,
                dir,
                payload: payload.clone(),
                faults: vec![Fault {
                    kind: "duplicate".into(),
                    detail: "copy of the previous datagram".into(),
                }],
                noise: None,
                captured: true,
                beyond_tap_us,
            };
            self.push(copy, f);
        }
        let datagram = InFlight {
            arrival_us: arrival,
            seq: 0,
            client,
            dir,
            payload,
            faults,
            noise: None,
            captured: true,
            beyond_tap_us,
        };
        self.push(datagram, f);
    }

    fn push(&mut self, mut d: InFlight, f: Faults) {
        if self.chance(f.noise) {
            let len = self.rng.random_range(8..=96);
            let mut noise: Vec<u8> = (0..len).map(|_| self.rng.random()).collect();
            if is_lwar(&noise) {
                noise[0] ^= 0xff;
            }
            d.noise = Some(noise);
        }
        if self.chance(f.tap_miss) {
            d.captured = false;
        }
        // Ties in arrival time keep the sending order.
        d.seq = self.seq;
        self.seq += 1;
        self.in_flight.push(Reverse(d));
    }

    /// The next datagram that has arrived by `now_us`.
    pub fn pop_due(&mut self, now_us: u64) -> Option<InFlight> {
        if self.in_flight.peek()?.0.arrival_us <= now_us {
            self.in_flight.pop().map(|r| r.0)
        } else {
            None
        }
    }

    /// A datagram the tap has seen (or missed), on its way to a receiver
    /// beyond the tap: [`Network::pop_delivery`] hands it over once there.
    pub fn past_tap(&mut self, mut d: InFlight) {
        d.arrival_us += std::mem::take(&mut d.beyond_tap_us);
        self.beyond_tap.push(Reverse(d));
    }

    /// The next datagram past the tap that has reached its receiver by `now_us`.
    pub fn pop_delivery(&mut self, now_us: u64) -> Option<InFlight> {
        if self.beyond_tap.peek()?.0.arrival_us <= now_us {
            self.beyond_tap.pop().map(|r| r.0)
        } else {
            None
        }
    }

    pub fn is_idle(&self) -> bool {
        self.in_flight.is_empty() && self.beyond_tap.is_empty()
    }
}

/// Where each decodable message of a datagram starts, its length and type.
fn layout(payload: &[u8]) -> Vec<(usize, usize, MessageType)> {
    let Ok(packet) = Packet::new_checked(payload) else {
        return Vec::new();
    };
    packet
        .messages()
        .map_while(Result::ok)
        .map(|v| (v.offset, v.bytes.len(), v.msg_type()))
        .collect()
}

/// The offset of a string's length byte in a message of this type.
fn string_len_at(t: MessageType) -> usize {
    t.header_len() + t.fixed_body_len() - 1
}

fn applies(kind: CorruptKind, payload: &[u8], dir: Direction) -> bool {
    let msgs = layout(payload);
    match kind {
        CorruptKind::ShortHeader => true,
        CorruptKind::Truncated => msgs.iter().any(|m| m.1 >= 2),
        CorruptKind::UnknownType | CorruptKind::DeprecatedType => !msgs.is_empty(),
        CorruptKind::BadStringLength => msgs
            .iter()
            .any(|m| m.2.has_string() && payload[m.0 + string_len_at(m.2)] < 255),
        CorruptKind::InvalidUtf8 => msgs
            .iter()
            .any(|m| m.2.has_string() && payload[m.0 + string_len_at(m.2)] > 0),
        CorruptKind::Oversize => match dir {
            Direction::ClientToServer => msgs.iter().any(|m| m.2 == MessageType::Input),
            Direction::ServerToClient => true,
        },
    }
}

/// Changes `payload` into `kind` (which [`applies`]); returns the detail.
fn corrupt(
    kind: CorruptKind,
    payload: &mut Vec<u8>,
    dir: Direction,
    rng: &mut ChaCha8Rng,
) -> String {
    let msgs = layout(payload);
    let pick = |rng: &mut ChaCha8Rng, ok: &dyn Fn(&(usize, usize, MessageType)) -> bool| {
        let candidates: Vec<_> = msgs.iter().copied().filter(|m| ok(m)).collect();
        candidates[rng.random_range(0..candidates.len())]
    };
    match kind {
        CorruptKind::ShortHeader => {
            let len = rng.random_range(4..12);
            payload.truncate(len);
            format!("cut to {len} bytes, inside the header")
        }
        CorruptKind::Truncated => {
            let (offset, len, t) = pick(rng, &|m| m.1 >= 2);
            let cut = offset + rng.random_range(1..len);
            payload.truncate(cut);
            format!("cut at byte {cut}, inside {t} at offset {offset}")
        }
        CorruptKind::UnknownType => {
            let (offset, _, t) = pick(rng, &|_| true);
            let id = rng.random_range(114..=255u8);
            payload[offset] = id;
            format!("type of {t} at offset {offset} set to {id}")
        }
        CorruptKind::DeprecatedType => {
            let (offset, _, t) = pick(rng, &|_| true);
            payload[offset] = crate::proto::lwar::wire::DEPRECATED_TYPE_ID;
            format!("type of {t} at offset {offset} set to 102")
        }
        CorruptKind::BadStringLength => {
            let (offset, len, t) = pick(rng, &|m| {
                m.2.has_string() && payload[m.0 + string_len_at(m.2)] < 255
            });
            let at = offset + string_len_at(t);
            payload.truncate(offset + len);
            let remaining = payload.len() - at - 1;
            let bad = rng.random_range(remaining + 1..=255) as u8;
            payload[at] = bad;
            format!(
                "string length of {t} at offset {offset} set to {bad}, {remaining} bytes remain"
            )
        }
        CorruptKind::InvalidUtf8 => {
            let (offset, _, t) = pick(rng, &|m| {
                m.2.has_string() && payload[m.0 + string_len_at(m.2)] > 0
            });
            let at = offset + string_len_at(t);
            let len = payload[at] as usize;
            let byte = at + 1 + rng.random_range(0..len);
            payload[byte] = 0xff;
            format!("byte {byte} of the string of {t} at offset {offset} set to 0xff")
        }
        CorruptKind::Oversize => {
            let before = payload.len();
            let filler = match dir {
                Direction::ClientToServer => {
                    let (offset, len, _) = pick(rng, &|m| m.2 == MessageType::Input);
                    payload[offset..offset + len].to_vec()
                }
                Direction::ServerToClient => {
                    let mut b = Vec::new();
                    MessageRepr::Collision(Collision {
                        entities: [Id::new(1, 1), Id::new(1, 2)],
                        x: 0,
                        y: 0,
                    })
                    .emit(&mut b);
                    b
                }
            };
            while payload.len() <= MAX_PACKET_SIZE {
                payload.extend_from_slice(&filler);
            }
            format!(
                "padded from {before} to {} bytes with copies of a {}-byte message",
                payload.len(),
                filler.len()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::lwar::wire::{ErrorKind, Header, PacketRepr, ViolationKind};

    fn sample(dir: Direction) -> Vec<u8> {
        let mut messages = vec![MessageRepr::Chat {
            seqno: 3,
            player: Id::new(1, 1),
            text: b"hello there".to_vec(),
        }];
        if dir == Direction::ClientToServer {
            messages.push(MessageRepr::Input(Default::default()));
        }
        PacketRepr {
            header: Header {
                ack: 1,
                timestamp: 5,
            },
            messages,
        }
        .to_bytes()
    }

    /// What the codec says of a payload: the decode error's kind, or the violations.
    fn verdict(payload: &[u8]) -> (Option<ErrorKind>, Vec<ViolationKind>) {
        let packet = match Packet::new_checked(payload) {
            Ok(p) => p,
            Err(e) => return (Some(e.kind()), Vec::new()),
        };
        let mut violations: Vec<_> = packet.oversize().map(|v| v.kind()).into_iter().collect();
        for m in packet.messages() {
            match m {
                Ok(v) => violations.extend(v.violations().map(|v| v.kind())),
                Err(e) => return (Some(e.kind()), violations),
            }
        }
        (None, violations)
    }

    #[test]
    fn every_kind_gives_what_the_codec_reports() {
        let expected = [
            (CorruptKind::Truncated, Some(ErrorKind::Truncated), None),
            (CorruptKind::ShortHeader, Some(ErrorKind::ShortHeader), None),
            (CorruptKind::UnknownType, Some(ErrorKind::UnknownType), None),
            (
                CorruptKind::DeprecatedType,
                Some(ErrorKind::DeprecatedType),
                None,
            ),
            (
                CorruptKind::BadStringLength,
                Some(ErrorKind::Truncated),
                None,
            ),
            (
                CorruptKind::InvalidUtf8,
                None,
                Some(ViolationKind::InvalidUtf8),
            ),
            (CorruptKind::Oversize, None, Some(ViolationKind::Oversize)),
        ];
        for dir in [Direction::ClientToServer, Direction::ServerToClient] {
            for seed in 0..20 {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                for (kind, error, violation) in expected {
                    let mut p = sample(dir);
                    assert!(applies(kind, &p, dir), "{kind:?}");
                    corrupt(kind, &mut p, dir, &mut rng);
                    let (e, v) = verdict(&p);
                    assert_eq!(e, error, "{kind:?} {dir}");
                    if let Some(violation) = violation {
                        assert!(v.contains(&violation), "{kind:?} {v:?}");
                    }
                    assert!(is_lwar(&p));
                }
            }
        }
    }

    #[test]
    fn loss_and_tap_miss_follow_their_rates() {
        let all = Faults {
            loss: 1.0,
            ..Faults::default()
        };
        let mut net = Network::new(all, Faults::default(), CorruptKind::ALL.to_vec(), 1);
        net.send(
            0,
            0,
            Direction::ClientToServer,
            sample(Direction::ClientToServer),
        );
        assert!(net.is_idle());
        assert_eq!(net.lost.len(), 1);
        let miss = Faults {
            tap_miss: 1.0,
            ..Faults::default()
        };
        let mut net = Network::new(miss, Faults::default(), Vec::new(), 1);
        net.send(
            0,
            0,
            Direction::ClientToServer,
            sample(Direction::ClientToServer),
        );
        assert!(net.pop_due(WIRE_US - 1).is_none());
        let d = net.pop_due(WIRE_US).expect("delivered");
        assert!(!d.captured);
    }

    #[test]
    fn a_held_back_datagram_is_overtaken() {
        let f = Faults {
            reorder: 1.0,
            ..Faults::default()
        };
        let mut net = Network::new(f, Faults::default(), Vec::new(), 7);
        net.send(0, 0, Direction::ClientToServer, vec![1]);
        net.rates[0].reorder = 0.0;
        net.send(1000, 0, Direction::ClientToServer, vec![2]);
        let first = net.pop_due(u64::MAX).unwrap();
        let second = net.pop_due(u64::MAX).unwrap();
        assert_eq!((first.payload[0], second.payload[0]), (2, 1));
        assert_eq!(second.faults[0].kind, "reorder");
    }
}
