//! The generic analysis of a described protocol, on the engine's session table.
//!
//! # The contract
//!
//! A session is an address pair, or with `session: {field: F}` an address
//! pair and the value of F (packets whose F does not decode go to the pair's
//! session without a value). Its server is the side on the server port
//! (`-lwarscope: server: port:`, by default the recognition port); failing
//! that, the sender of a type the server sends / the receiver of one it
//! receives (`server: sends:`, `receives:`); failing that, the destination of
//! the first packet. A protobuf description whose directions carry two
//! messages reads each packet as its direction's message (and, for a new
//! session's server, failing the port, the message its content tells names
//! its sender); its message type is which message, unless `message-type`
//! names a field. Each packet, in order:
//!
//! 1. `duplicate-packet`: with a sequence field, the same bytes as one of
//!    the last 64 packets of its direction; without one (identical packets
//!    may then be sent on purpose), the same bytes as the direction's
//!    previous packet, captured at most 5 ms after it. Nothing else is judged.
//! 2. `oversize`: a payload (as sent) over `mtu`, if one is given.
//! 3. The layout is decoded. If it does not fit (too short, a `contents`
//!    magic that differs, bytes left after it unless `trailing: allow`, a
//!    message type outside its enum): one `malformed` (`truncated` when the
//!    capture cut the packet where the layout ran out), with the field and the
//!    byte offset. The sequence rules still apply when the sequence field (and
//!    the message type, if any) decoded before the error. A message type
//!    outside its enum is read, and so are the fields after it up to the
//!    first whose layout depends on it (a switch on it, an `if`, a size or a
//!    count naming it): a sequence number before the body is read, and the
//!    packet, malformed, takes its number's place in the sequence (it is not
//!    lost). A protobuf description's message (`protobuf.rs`) is read whole
//!    or not at all, as proto3 decoders read it: its fields come in any
//!    order, so none is before the error, and a malformed one takes no place
//!    in the sequence (nor do its acks count).
//! 4. Sequence numbers (`sequence:`), per direction, `w` bits wide (the
//!    field's width, or `bits:` when narrower: a number of `2^bits` or more
//!    then takes no place in the sequence), compared by the recency rule: `serial` (RFC 1982: `p`
//!    is newer than `s` when `(p - s) mod 2^w` is in `1..2^(w-1)`) or
//!    `{ahead: N}` (newer when it is 1 to N ahead in the cycle: Vessel's "128
//!    or fewer ahead in the 256-step cycle", `ahead: 128`). The first packet
//!    sets the baseline. A newer number becomes the highest; the numbers it
//!    skips are *missing* (the 255 below it at most). A number not newer than
//!    the highest raises `reordered`: out of date by the recency rule, what
//!    the receiver discards (Vessel's stale packet), and fills its number if
//!    it was missing. The numbers followed are the *window*: the highest and
//!    those behind it that a late packet can still fill (not newer than the
//!    highest: `2^w` minus the newest distance, 129 for a serial `u1`, 128
//!    for Vessel's `ahead: 128`), at most 256. A missing number is known once
//!    it leaves the window (no later packet can be it: the same number would
//!    now be newer) or the session ends: it raises `not-captured` if the peer
//!    acknowledged it, `lost` otherwise; without an `ack:` key nothing tells
//!    a number lost before the tap from one the tap missed, so it is a
//!    `not-captured` note "unconfirmed: the protocol has no acks ..." (still
//!    counted in the loss estimate, as the most that can have been lost),
//!    whatever the width of the numbers
//!    (a `u1`'s number comes round every 256: a missing one is never
//!    overwritten unreported); the numbers of one gap judged alike make one
//!    finding, how many and the last in its detail (`engine::missed`), raised
//!    with the first packet after them that judges none, and the counts
//!    count numbers. A jump past the window counts the numbers it
//!    skips beyond it as lost in the estimate, without a finding each.
//!    Wrapping is the next number, never a
//!    finding. The loss estimate counts the numbers expected and lost.
//! 5. Acks (`ack:`): `{cumulative: F}` acknowledges every peer number not
//!    newer than F; `{bitfield: F, anchor: A}`: bit N set acknowledges the
//!    peer's `A - N - 1` (mod `2^w`), `A` a field of the same packet. An
//!    acknowledged missing number is `not-captured`, not `lost`.
//! 6. `violation/valid`: a number outside its `valid` (eq, min, max, any-of),
//!    raised on the packet that holds it, as it is read (so `-Y violation`
//!    selects it and `-w` exports it), with the field, its value and offset.
//!    Consecutive packets of a direction breaking the same field's `valid`
//!    make one incident: its first packet raises the finding, the later
//!    ones nothing. The incident ends at the first packet of the direction
//!    that decodes whole and keeps that field, or with the session; a packet
//!    that does not decode whole (malformed, or cut by the capture) ends no
//!    incident: it may not have reached the field. A bound naming an earlier
//!    field (`valid: {min: this_packet}`) is compared with that field's
//!    value in the packet (its value is in the detail); a bound whose field
//!    was not read holds.
//! 7. `violation/dropped-address` (`server: drops: {ipv4-last-byte: [...]}`):
//!    a packet the server sends to a client whose IPv4 address (or one
//!    mapped into IPv6) ends in one of those bytes (Timewarp's "IP addresses
//!    ending in 0 or 255 are dropped"). Every such packet of the session is
//!    one incident (the session is one client address): one finding when the
//!    session ends, at the first, with the address, the number of packets
//!    and the last frame. A network duplicate (rule 1) is not counted again.
//! 8. `violation/wrong-direction` (`server: sends:`, `receives:`): a packet
//!    whose message type decoded, of a type only the other side sends (a
//!    type of `sends` from the client, of `receives` from the server). A
//!    direction's such packets are one incident: one finding when the
//!    session ends, at the first, with its type, the number of packets and
//!    the last frame.
//!
//! **Packets the capture cut short** (snaplen): the engine raises one
//! `truncated` per cut packet, and the fields it kept count as above. Its
//! bytes are never compared for rule 1 (a prefix may be shared), but it is
//! still the direction's previous packet and takes its place among the last
//! 64; and with the number of a packet captured it may be that packet's
//! network duplicate, so it raises no `reordered`.
//!
//! Messages are counted per message type (one per packet that decodes). A
//! side silent for longer than `timeout` (capture time) ends the session
//! `timed-out`; sessions are `open` otherwise. Expected rates (`rates:`) are
//! the protocol's registered rates, which the report compares with the
//! measured ones.
//!
//! **Bounds.** 256 sequence numbers per direction (the window, at most), in
//! a fixed array allocated with the session; no allocation per packet.

use super::bodies::Seen;
use super::decode::{DecodeErr, Events, Side};
use super::{AckFields, Broke, Described};
use crate::capture::{Datagram, Timestamp};
use crate::engine::{
    self, Detail, Direction, FindingKind, MissedCounts, ProtoSession, ProtocolInfo, Raise, Run,
};
use crate::proto::field::GroupDefs;
use std::cell::RefCell;

/// Sequence numbers followed per direction.
pub const SEQ_RING: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum SlotState {
    #[default]
    Empty,
    Missing,
    Seen,
}

/// A followed number's slot; whether it is acknowledged is kept beside the
/// slots ([`Track::acked`]).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    seq: u32,
    state: SlotState,
    frame: u64,
}

#[derive(Debug)]
struct Track {
    slots: Box<[Slot; SEQ_RING]>,
    /// Whether each slot's number is acknowledged: bit `i % 64` of word
    /// `i / 64` for slot `i` (an ack window is then read in a few words:
    /// [`Track::acked_below`]).
    acked: [u64; SEQ_RING / 64],
    highest: Option<u32>,
}

impl Default for Track {
    fn default() -> Self {
        Track {
            slots: Box::new([Slot::default(); SEQ_RING]),
            acked: [0; SEQ_RING / 64],
            highest: None,
        }
    }
}

impl Track {
    fn slot_mut(&mut self, seq: u32) -> &mut Slot {
        &mut self.slots[seq as usize % SEQ_RING]
    }

    /// Whether the slot of `seq` holds an acknowledged number.
    fn acked(&self, seq: u32) -> bool {
        let i = seq as usize % SEQ_RING;
        (self.acked[i / 64] >> (i % 64)) & 1 == 1
    }

    fn set_acked(&mut self, seq: u32, on: bool) {
        let i = seq as usize % SEQ_RING;
        let bit = 1u64 << (i % 64);
        if on {
            self.acked[i / 64] |= bit;
        } else {
            self.acked[i / 64] &= !bit;
        }
    }

    /// `seq`'s slot holds `slot`, not acknowledged.
    fn put(&mut self, seq: u32, slot: Slot) {
        *self.slot_mut(seq) = slot;
        self.set_acked(seq, false);
    }

    /// Bit `n`: whether the slot of `anchor - n - 1` is acknowledged, for
    /// `n` below 64. The slots of numbers counted down from `anchor` are
    /// the ring's down from its slot where the numbers' cycle is a multiple
    /// of the ring ([`Recency::ring_follows`]).
    fn acked_below(&self, anchor: u32) -> u64 {
        const WORDS: usize = SEQ_RING / 64;
        // The slot of `anchor - 64`, and the 64 bits from it up.
        let start = (anchor as usize).wrapping_sub(64) % SEQ_RING;
        let (w, b) = (start / 64, start % 64);
        let low = self.acked[w] >> b;
        let high = match b {
            0 => 0,
            _ => self.acked[(w + 1) % WORDS] << (64 - b),
        };
        // Bit k is `anchor - 64 + k`: reversed, bit n is `anchor - n - 1`.
        (low | high).reverse_bits()
    }
}

/// A described protocol's part of a session.
#[derive(Debug, Default)]
pub struct DescSession {
    timed_out: bool,
    /// Per direction, without a sequence field: the previous packet's hash,
    /// time and frame.
    previous: [Option<(u64, Timestamp, u64)>; 2],
    tracks: [Track; 2],
    /// Per direction, the open runs of packets breaking a field's `valid`.
    valid: [ValidRuns; 2],
    /// The server's packets to a client address it drops (`server: drops:`).
    dropped: Run,
    /// Per direction, its packets of a type the other side sends (`server:
    /// sends:`, `receives:`), and the first one's type.
    wrong: [(Run, i64); 2],
    /// The last packet came from the server (a protobuf description whose
    /// directions carry two messages reads it as the server's message).
    last_from_server: bool,
}

/// A direction's open runs of packets breaking a field's `valid`, by field,
/// with what its first packet broke: room for every field a description may
/// give a `valid`, so a run always finds room. Allocates nothing.
type ValidRuns = engine::KeyedRuns<u16, Broke, MAX_VIOLATIONS>;

/// The `valid` violations one packet keeps: one per field, for as many
/// fields as a description may give a `valid`, so none is left out.
const MAX_VIOLATIONS: usize = super::ksy::MAX_VALID_FIELDS;

impl ProtoSession for DescSession {
    fn state(&self) -> &'static str {
        if self.timed_out { "timed-out" } else { "open" }
    }
    fn is_final(&self) -> bool {
        self.timed_out
    }
    fn time_out(&mut self) {
        self.timed_out = true;
    }
}

pub type Session = engine::Session<DescSession>;

/// The recency rule over `w`-bit numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recency {
    /// `2^w - 1`.
    mask: u64,
    /// Newer when the distance ahead is in `1..=newest`.
    newest: u64,
}

impl Recency {
    pub fn new(bits: u32, rule: super::ksy::Recency) -> Recency {
        let bits = bits.clamp(1, 32);
        let modulus = 1u64 << bits;
        let newest = match rule {
            super::ksy::Recency::Serial => modulus / 2 - 1,
            super::ksy::Recency::Ahead(n) => u64::from(n).min(modulus - 1),
        };
        Recency {
            mask: modulus - 1,
            newest,
        }
    }

    /// How far `p` is ahead of `s` in the cycle.
    pub fn ahead(&self, p: u32, s: u32) -> u32 {
        (u64::from(p).wrapping_sub(u64::from(s)) & self.mask) as u32
    }

    /// How many numbers are followed, the highest included: those a late
    /// packet can still fill, i.e. not newer than the highest (`2^w -
    /// newest` of them), at most [`SEQ_RING`]. A missing number that falls
    /// out of it is known: no later packet can be it (8-bit serial: 129;
    /// Vessel's `ahead: 128`: 128; 16 bits: 256).
    pub fn window(&self) -> u32 {
        (self.mask + 1 - self.newest).min(SEQ_RING as u64) as u32
    }

    /// Whether a packet numbered `p` is newer than the stored `s`.
    pub fn newer(&self, p: u32, s: u32) -> bool {
        let d = u64::from(self.ahead(p, s));
        d >= 1 && d <= self.newest
    }

    fn sub(&self, p: u32, n: u32) -> u32 {
        (u64::from(p).wrapping_sub(u64::from(n)) & self.mask) as u32
    }

    /// Whether the numbers' cycle (`2^w`) is a multiple of [`SEQ_RING`]:
    /// then the slots of numbers counted down are the ring's counted down
    /// ([`Track::acked_below`]).
    fn ring_follows(&self) -> bool {
        self.mask + 1 >= SEQ_RING as u64
    }
}

/// The analyzer of one described protocol.
#[derive(Debug)]
pub struct Analyzer {
    d: &'static Described,
    recency: Option<Recency>,
}

impl Analyzer {
    pub fn new(d: &'static Described) -> Analyzer {
        let recency = d.ksy.sem.sequence.and_then(|(_, rule)| {
            let (_, bits) = d.seq_field?;
            Some(Recency::new(bits, rule))
        });
        Analyzer { d, recency }
    }
}

/// What the analyzer keeps of a decode: key values, the violations.
#[derive(Debug, Clone, Copy)]
struct Keys {
    type_field: Option<u16>,
    seq_field: Option<u16>,
    ack: AckFields,
    ty: Option<i64>,
    seq: Option<i64>,
    ack_value: Option<i64>,
    anchor: Option<i64>,
    violations: [Broke; MAX_VIOLATIONS],
    n_violations: usize,
}

impl Events for Keys {
    /// The analysis takes integers and violations, no field: the walk hands
    /// none over.
    fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
        false
    }

    fn int(&mut self, field: u16, value: i64) {
        if Some(field) == self.type_field && self.ty.is_none() {
            self.ty = Some(value);
        }
        if Some(field) == self.seq_field && self.seq.is_none() {
            self.seq = Some(value);
        }
        match self.ack {
            AckFields::Cumulative(f) | AckFields::Bitfield { bits: f, .. }
                if f == field && self.ack_value.is_none() =>
            {
                self.ack_value = Some(value);
            }
            _ => {}
        }
        if let AckFields::Bitfield { anchor, .. } = self.ack
            && anchor == field
            && self.anchor.is_none()
        {
            self.anchor = Some(value);
        }
    }

    fn violation(&mut self, field: u16, offset: usize, value: f64, bound: Option<i64>) {
        if self.violations[..self.n_violations]
            .iter()
            .any(|b| b.field == field)
        {
            return;
        }
        if let Some(slot) = self.violations.get_mut(self.n_violations) {
            *slot = Broke {
                field,
                offset,
                value,
                bound,
            };
            self.n_violations += 1;
        }
    }
}

impl Keys {
    /// No key field, nothing told.
    const NONE: Keys = Keys {
        type_field: None,
        seq_field: None,
        ack: AckFields::None,
        ty: None,
        seq: None,
        ack_value: None,
        anchor: None,
        violations: [NO_BREAK; MAX_VIOLATIONS],
        n_violations: 0,
    };

    /// What `kept` was told (its violations, not the room for more).
    #[inline]
    fn take(&mut self, kept: &Keys) {
        (self.ty, self.seq, self.ack_value, self.anchor) =
            (kept.ty, kept.seq, kept.ack_value, kept.anchor);
        let n = kept.n_violations.min(MAX_VIOLATIONS);
        self.violations[..n].copy_from_slice(&kept.violations[..n]);
        self.n_violations = n;
    }

    /// Forgets what `field` told.
    fn forget(&mut self, field: u16) {
        if self.type_field == Some(field) {
            self.ty = None;
        }
        if self.seq_field == Some(field) {
            self.seq = None;
        }
        match self.ack {
            AckFields::Cumulative(f) | AckFields::Bitfield { bits: f, .. } if f == field => {
                self.ack_value = None;
            }
            _ => {}
        }
        if let AckFields::Bitfield { anchor, .. } = self.ack
            && anchor == field
        {
            self.anchor = None;
        }
    }
}

/// A walk kept ([`WALKS`]), with which of the head's numbers left out it
/// told (a bit each, in order).
type Kept = (Keys, Result<usize, DecodeErr>, u8);

thread_local! {
    /// The walks of this thread's packets, by their bytes but for their
    /// heads' numbers that decide nothing else (`bodies::Seen`).
    static WALKS: RefCell<Seen<Kept>> = RefCell::new(Seen::new((
        Keys::NONE,
        Ok(0),
        0,
    )));
}

/// An empty place among a walk's violations.
const NO_BREAK: Broke = Broke {
    field: 0,
    offset: 0,
    value: 0.0,
    bound: None,
};

fn idx(d: Direction) -> usize {
    d.index()
}

impl engine::Analyzer for Analyzer {
    type Session = DescSession;

    fn info(&self) -> &'static ProtocolInfo {
        self.d.info()
    }

    fn timeout_ns(&self) -> u64 {
        self.d.ksy.sem.timeout_ms.saturating_mul(1_000_000)
    }

    fn session_key(&self, d: &Datagram<'_>) -> u64 {
        let Some(field) = self.d.session_field else {
            return 0;
        };
        struct Key(u16, Option<i64>);
        impl Events for Key {
            fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
                false
            }

            fn int(&mut self, field: u16, value: i64) {
                if field == self.0 && self.1.is_none() {
                    self.1 = Some(value);
                }
            }
        }
        let mut k = Key(field, None);
        let _ = self.d.compiled.walk(d.payload, &mut k);
        k.1.map_or(0, |v| (v as u64).wrapping_add(1))
    }

    fn src_is_server(&self, d: &Datagram<'_>) -> bool {
        let sem = &self.d.ksy.sem;
        if let Some(p) = sem.server_port {
            if d.src.port() == p && d.dst.port() != p {
                return true;
            }
            if d.dst.port() == p && d.src.port() != p {
                return false;
            }
        }
        // Two protobuf messages: the one the content tells names its sender.
        if let Some(side) = self
            .d
            .compiled
            .proto
            .as_ref()
            .and_then(|s| s.classify(d.payload))
        {
            return side == Side::Server;
        }
        let mut keys = self.keys();
        let _ = self.d.compiled.walk(d.payload, &mut keys);
        if let Some(t) = keys.ty {
            if sem.server_sends.contains(&t) {
                return true;
            }
            if sem.client_sends.contains(&t) {
                return false;
            }
        }
        false
    }

    fn packet(&mut self, session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) {
        let direction = raise.direction;
        // 1, 2. Network duplicates (nothing more is read of one), oversize.
        if self.duplicate_or_oversize(session, raise, d) {
            return;
        }
        // 3. The layout (a protobuf description: the direction's message).
        let from_server = direction == Direction::ServerToClient;
        session.proto.last_from_server = from_server;
        let side = if from_server {
            Side::Server
        } else {
            Side::Client
        };
        let mut keys = self.keys();
        let result = self.walk_keys(d.payload, side, &mut keys);
        if self.d.compiled.proto.is_none() {
            // The output's dissector asks for the same keys next.
            super::dissect::remember(self.d, d.payload, (keys.ty, keys.seq), result);
        }
        // The header: the message type (known or not: an unknown one is
        // still read, and the fields before the body with it), the sequence
        // number and the ack fields all decoded.
        let acked = match self.d.ack {
            AckFields::None => true,
            AckFields::Cumulative(_) => keys.ack_value.is_some(),
            AckFields::Bitfield { .. } => keys.ack_value.is_some() && keys.anchor.is_some(),
        };
        // A protobuf message is read whole or not at all (its fields come in
        // any order: none is "before" the error), so one that does not
        // decode takes no place in the sequence.
        let readable = self.d.compiled.proto.is_none() || result.is_ok();
        let header_ok = (self.d.type_field.is_none() || keys.ty.is_some()) && acked && readable;
        let known_type = keys.ty.and_then(|t| self.d.type_ordinal(t));
        // 4, 5. Numbers and acks.
        // A number past `sequence: bits:` takes no place in the sequence.
        let in_range = |s: i64| self.d.seq_max.is_none_or(|m| s >= 0 && s as u64 <= m);
        if header_ok
            && let (Some(rec), Some(seq)) = (self.recency, keys.seq.filter(|s| in_range(*s)))
        {
            let seq = (seq as u64 & rec.mask) as u32;
            let no_acks = matches!(self.d.ack, AckFields::None);
            sequence(rec, session, raise, seq, d, no_acks);
            acks(rec, self.d.ack, session, direction, &keys);
        }
        match result {
            Err(e) => {
                let this = session.dir_mut(direction);
                let detail = super::decode_detail(self.d, e);
                let at_cut = e.is_short() && e.offset + e.have >= d.payload.len();
                raise.undecodable(this, d, at_cut, e.kind.ordinal(), detail);
            }
            Ok(_) => {
                let this = session.dir_mut(direction);
                let ordinal = known_type.unwrap_or(0);
                if ordinal < this.messages.len() {
                    this.messages[ordinal] += 1;
                    this.message_bytes[ordinal] += d.payload_len as u64;
                }
            }
        }
        // 6. Valid.
        if !self.d.rules.is_empty() {
            let broken = &keys.violations[..keys.n_violations];
            self.valid(session, raise, broken, result.is_ok());
        }
        // 7. A client address the server drops.
        if direction == Direction::ServerToClient && self.drops(d.dst.ip()).is_some() {
            session.proto.dropped.hit(raise.frame, raise.ts, None);
        }
        // 8. A type from the side that does not send it.
        if header_ok && let Some(t) = keys.ty {
            let sem = &self.d.ksy.sem;
            let wrong = match direction {
                Direction::ServerToClient => sem.client_sends.contains(&t),
                Direction::ClientToServer => sem.server_sends.contains(&t),
            };
            if wrong {
                let (run, first) = &mut session.proto.wrong[idx(direction)];
                if run.hit(raise.frame, raise.ts, None) {
                    *first = t;
                }
            }
        }
    }

    fn dissector(
        &self,
        session: &Session,
    ) -> Option<&'static dyn crate::proto::dissect::Dissector> {
        let side = if session.proto.last_from_server {
            Side::Server
        } else {
            Side::Client
        };
        self.d.side_dissector(side)
    }

    fn end(&mut self, session: &mut Session, raise: &mut Raise<'_>) {
        if let Some(run) = session.proto.dropped.end()
            && let Some(rule) = self.rule(super::DROPPED_ADDRESS)
        {
            raise.direction = Direction::ServerToClient;
            let client = self
                .drops(session.client.ip())
                .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED);
            let detail = super::dropped_detail(client, &run);
            let this = session.dir_mut(Direction::ServerToClient);
            raise.violation_at(this, rule, &run, Detail::Proto(detail));
        }
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            let (run, first) = &mut session.proto.wrong[idx(direction)];
            let first = *first;
            if let Some(run) = run.end()
                && let Some(rule) = self.rule(super::WRONG_DIRECTION)
            {
                raise.direction = direction;
                let from_server = direction == Direction::ServerToClient;
                let detail = super::wrong_direction_detail(self.d, first, from_server, &run);
                let this = session.dir_mut(direction);
                raise.violation_at(this, rule, &run, Detail::Proto(detail));
            }
        }
        let Some(rec) = self.recency else {
            return;
        };
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            raise.direction = direction;
            let i = idx(direction);
            let Some(highest) = session.proto.tracks[i].highest else {
                continue;
            };
            let no_acks = matches!(self.d.ack, AckFields::None);
            let mut counts = missed_counts(session.dir_mut(direction), no_acks);
            for back in (0..rec.window()).rev() {
                let s = rec.sub(highest, back);
                let acked = session.proto.tracks[i].acked(s);
                let slot = session.proto.tracks[i].slot_mut(s);
                if slot.seq == s && slot.state == SlotState::Missing {
                    slot.state = SlotState::Empty;
                    counts.missed(
                        s,
                        slot.frame,
                        acked,
                        raise.ts,
                        raise.session,
                        direction,
                        raise.out,
                    );
                }
            }
            let dir = session.dir_mut(direction);
            dir.count_lost(counts.lost_or_unproven());
            counts.close(raise.out);
            counts.add_to(dir, raise.out);
        }
    }
}

/// Without a sequence number, the same bytes as the previous packet of the
/// direction within this long are a network duplicate.
pub const DUPLICATE_WITHIN_NS: u64 = 5_000_000;

impl Analyzer {
    /// Rules 1 and 2: a network duplicate raises `duplicate-packet` (and is
    /// read no further: true); a packet over the description's MTU raises
    /// `oversize` and is read on.
    fn duplicate_or_oversize(
        &self,
        session: &mut Session,
        raise: &mut Raise<'_>,
        d: &Datagram<'_>,
    ) -> bool {
        let direction = raise.direction;
        if let Some(frame) = self.duplicate(session, direction, d) {
            let this = session.dir_mut(direction);
            let detail = Detail::DuplicateOf { frame };
            raise.raise(this, FindingKind::DUPLICATE_PACKET, None, None, detail);
            return true;
        }
        if let Some(mtu) = self.d.ksy.sem.mtu
            && d.payload_len > mtu
        {
            let this = session.dir_mut(direction);
            let detail = Detail::Oversize {
                len: d.payload_len,
                max: mtu,
            };
            raise.raise(this, FindingKind::OVERSIZE, None, None, detail);
        }
        false
    }

    /// Rule 1: the frame this packet duplicates, if it does.
    fn duplicate(
        &self,
        session: &mut Session,
        direction: Direction,
        d: &Datagram<'_>,
    ) -> Option<u64> {
        if self.recency.is_some() {
            return session.dir_mut(direction).duplicate_datagram(d);
        }
        if d.truncated_by_capture() {
            // Not compared, but it is the direction's previous packet now.
            session.proto.previous[idx(direction)] = None;
            return None;
        }
        let hash = d.digest();
        let previous = &mut session.proto.previous[idx(direction)];
        let dup = previous
            .filter(|(h, ts, _)| *h == hash && d.ts.since(*ts) <= DUPLICATE_WITHIN_NS)
            .map(|(_, _, frame)| frame);
        *previous = Some((hash, d.ts, d.frame));
        dup
    }

    /// Rule 6: a packet that decoded whole (`whole`) ends the runs of the
    /// fields it kept; each broken field extends its run, or opens one and
    /// raises its finding on this packet.
    fn valid(&self, session: &mut Session, raise: &mut Raise<'_>, broken: &[Broke], whole: bool) {
        let i = idx(raise.direction);
        if whole {
            let ends = |field| !broken.iter().any(|b: &Broke| b.field == field);
            while session.proto.valid[i].end_first(ends).is_some() {}
        }
        let Some(rule) = self.d.rules.first().copied() else {
            return;
        };
        for &b in broken {
            let runs = &mut session.proto.valid[i];
            let opens = !runs.is_open(b.field);
            // Never without room: one run per field with a `valid`, at most.
            let kept = runs.hit(b.field, b, raise.frame, raise.ts, None);
            debug_assert!(kept, "a `valid` run found no room");
            if opens {
                let detail = super::valid_detail(self.d, &b);
                let this = session.dir_mut(raise.direction);
                raise.violation(this, rule, None, Detail::Proto(detail));
            }
        }
    }

    /// The IPv4 address (an IPv4 one, or one mapped into IPv6) if the server
    /// drops it: its last byte is one of `server: drops: ipv4-last-byte`.
    fn drops(&self, ip: std::net::IpAddr) -> Option<std::net::Ipv4Addr> {
        let v4 = match ip {
            std::net::IpAddr::V4(a) => a,
            std::net::IpAddr::V6(a) => a.to_ipv4_mapped()?,
        };
        let last = self
            .d
            .ksy
            .sem
            .drops_ipv4_last_byte
            .contains(&v4.octets()[3]);
        last.then_some(v4)
    }

    /// The description's rule of this name, if it has it.
    fn rule(&self, name: &str) -> Option<engine::Rule> {
        self.d.rules.iter().copied().find(|r| r.name() == name)
    }

    /// The keys and violations of `payload` and how its decode ended:
    /// those of a packet of the same bytes but for its head's numbers that
    /// decide nothing else, if this thread walked one last in its place
    /// (`bodies::Seen`), those numbers read again; else walked (and kept).
    /// The walk is sequential, and those numbers are told and decide
    /// nothing else (no `valid`, read by no later field), so the rest of
    /// what it tells is the same.
    fn walk_keys(&self, payload: &[u8], side: Side, keys: &mut Keys) -> Result<usize, DecodeErr> {
        let c = &self.d.compiled;
        let Some(head) = self.d.text_head.as_ref() else {
            return c.walk_with(payload, side, keys);
        };
        WALKS
            .try_with(|seen| {
                let Ok(mut seen) = seen.try_borrow_mut() else {
                    return c.walk_with(payload, side, keys);
                };
                if let Some((kept, result, told)) = seen.get(self.d, head, payload) {
                    keys.take(kept);
                    for (n, &(i, field)) in head.masked().iter().enumerate() {
                        keys.forget(field);
                        if (told >> n) & 1 == 1
                            && let Some(v) = c.root_int_in_place(payload, i)
                        {
                            keys.int(field, v);
                        }
                    }
                    return *result;
                }
                let result = c.walk_with(payload, side, keys);
                // What the walk told of them is what their places hold.
                let told = head
                    .masked()
                    .iter()
                    .enumerate()
                    .fold(0u8, |t, (n, &(i, _))| {
                        t | (u8::from(c.fixed_root_int(payload, i).is_some()) << n)
                    });
                seen.put(self.d, head, payload, (*keys, result, told));
                result
            })
            .unwrap_or_else(|_| c.walk_with(payload, side, keys))
    }

    fn keys(&self) -> Keys {
        Keys {
            type_field: self.d.type_field,
            seq_field: self.d.seq_field.map(|(f, _)| f),
            ack: self.d.ack,
            ..Keys::NONE
        }
    }
}

/// Rule 4.
fn sequence(
    rec: Recency,
    session: &mut Session,
    raise: &mut Raise<'_>,
    seq: u32,
    d: &Datagram<'_>,
    no_acks: bool,
) {
    let direction = raise.direction;
    let track = &mut session.proto.tracks[idx(direction)];
    let seen = Slot {
        seq,
        state: SlotState::Seen,
        frame: d.frame,
    };
    let Some(highest) = track.highest else {
        track.highest = Some(seq);
        track.put(seq, seen);
        session.dir_mut(direction).count_expected(1);
        return;
    };
    if rec.newer(seq, highest) {
        let ahead = rec.ahead(seq, highest);
        let window = rec.window();
        let mut counts = missed_counts(session.dir_mut(direction), no_acks);
        let track = &mut session.proto.tracks[idx(direction)];
        let (id, ts) = (raise.session, d.ts);
        // The oldest followed numbers leave the window as the highest moves
        // on: one still missing is reported now (a late packet could no
        // longer be told from a new one), whatever the numbers' width.
        for k in 0..ahead.min(window) {
            let s = rec.sub(highest, window - 1 - k);
            let acked = track.acked(s);
            let slot = track.slot_mut(s);
            if slot.seq == s && slot.state == SlotState::Missing {
                counts.missed(s, slot.frame, acked, ts, id, direction, raise.out);
            }
            if slot.seq == s {
                slot.state = SlotState::Empty;
            }
        }
        let skipped = ahead - 1;
        let followed = skipped.min(window - 1);
        for back in (1..=followed).rev() {
            let s = rec.sub(seq, back);
            evict(track, s, raise, &mut counts, ts, id, direction);
            let missing = Slot {
                seq: s,
                state: SlotState::Missing,
                frame: d.frame,
            };
            track.put(s, missing);
        }
        evict(track, seq, raise, &mut counts, ts, id, direction);
        track.put(seq, seen);
        track.highest = Some(seq);
        let dir = session.dir_mut(direction);
        dir.count_expected(u64::from(ahead));
        dir.count_lost(u64::from(skipped - followed) + counts.lost_or_unproven());
        counts.add_to(dir, raise.out);
        return;
    }
    let followed = rec.ahead(highest, seq) < rec.window();
    let slot = track.slot_mut(seq);
    // A packet the capture cut short with the number of one captured may be
    // its network duplicate: the bytes cannot tell.
    if d.truncated_by_capture() && followed && slot.seq == seq && slot.state == SlotState::Seen {
        return;
    }
    if followed && slot.seq == seq && slot.state == SlotState::Missing {
        // Acknowledged or not, as it was.
        *slot = seen;
    }
    let this = session.dir_mut(direction);
    raise.raise(
        this,
        FindingKind::REORDERED,
        None,
        Some(seq),
        Detail::Fill { highest },
    );
}

/// The direction's missed numbers, resumed: without acks (no `ack:` key), a
/// number never captured is unconfirmed, not lost (rule 4).
fn missed_counts(dir: &mut engine::DirState, no_acks: bool) -> MissedCounts {
    let counts = MissedCounts::resume(dir);
    if no_acks {
        counts.without_acks()
    } else {
        counts
    }
}

fn evict(
    track: &mut Track,
    seq: u32,
    raise: &mut Raise<'_>,
    counts: &mut MissedCounts,
    ts: Timestamp,
    session: usize,
    direction: Direction,
) {
    let old = *track.slot_mut(seq);
    if old.state == SlotState::Missing && old.seq != seq {
        let acked = track.acked(seq);
        counts.missed(old.seq, old.frame, acked, ts, session, direction, raise.out);
    }
}

/// Rule 5: marks the peer's numbers this packet acknowledges.
fn acks(rec: Recency, model: AckFields, session: &mut Session, direction: Direction, keys: &Keys) {
    let peer = &mut session.proto.tracks[idx(direction.reverse())];
    let Some(peer_highest) = peer.highest else {
        return;
    };
    // A number the peer's window follows: fewer than `window` behind its
    // highest (a newer one is at least `2^w - newest` behind: never).
    let window = rec.window();
    let mark = |s: u32, peer: &mut Track| {
        let slot = peer.slot_mut(s);
        if slot.seq == s && slot.state != SlotState::Empty {
            peer.set_acked(s, true);
        }
    };
    match model {
        AckFields::None => {}
        AckFields::Cumulative(_) => {
            if let Some(a) = keys.ack_value {
                let a = (a as u64 & rec.mask) as u32;
                // The peer's followed numbers at or behind the ack.
                for back in 0..window {
                    let s = rec.sub(peer_highest, back);
                    if s == a || rec.newer(a, s) {
                        mark(s, peer);
                    }
                }
            }
        }
        AckFields::Bitfield { width, .. } => {
            if let (Some(bits), Some(anchor)) = (keys.ack_value, keys.anchor) {
                let anchor = (anchor as u64 & rec.mask) as u32;
                let width_mask = 1u64.checked_shl(width).map_or(u64::MAX, |b| b - 1);
                // Bit N set acknowledges `anchor - N - 1`: the set ones only.
                let mut set = bits as u64 & width_mask;
                // A slot acknowledged already stays so whatever it holds:
                // only the others are visited.
                if rec.ring_follows() {
                    set &= !peer.acked_below(anchor);
                }
                while set != 0 {
                    let n = set.trailing_zeros();
                    set &= set - 1;
                    let s = rec.sub(anchor, n + 1);
                    if rec.ahead(peer_highest, s) < window {
                        mark(s, peer);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Datagram;
    use crate::engine::{Finding, Observer, RecognisedBy};
    use crate::proto::described::ksy::Recency as Rule;

    /// The ack window read in words is each number's own flag, for every
    /// anchor (the ring's wrap and the numbers' included) and many rings.
    #[test]
    fn the_acked_window_read_at_once_is_each_slots_flag() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..64 {
            let mut track = Track::default();
            for w in &mut track.acked {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                *w = x;
            }
            for anchor in (0..600u32).chain(u32::MAX - 300..=u32::MAX) {
                let window = track.acked_below(anchor);
                for n in 0..64u32 {
                    let one = track.acked(anchor.wrapping_sub(n + 1));
                    assert_eq!((window >> n) & 1 == 1, one, "anchor {anchor}, bit {n}");
                }
            }
        }
        // Set and cleared one at a time.
        let mut track = Track::default();
        track.set_acked(300, true);
        assert!(track.acked(300) && track.acked(44) && !track.acked(301));
        assert_eq!(track.acked_below(301), 1);
        assert_eq!(track.acked_below(310), 1 << 9);
        track.put(44, Slot::default());
        assert!(!track.acked(300));
        // 16-bit numbers follow the ring; 7-bit ones do not.
        assert!(Recency::new(16, Rule::Serial).ring_follows());
        assert!(Recency::new(8, Rule::Serial).ring_follows());
        assert!(!Recency::new(7, Rule::Serial).ring_follows());
    }

    /// What the dissector tells of a packet's message: its type, sequence
    /// number and span, or its error.
    fn message_of(dissect: &super::super::dissect::Dissect, p: &[u8]) -> String {
        use crate::engine::dissect::Dissector;
        let mut told = String::new();
        let r = dissect.messages(p, &mut |m| {
            told = format!("{} {:?} {}+{}", m.type_name, m.seqno, m.offset, m.len);
        });
        match r {
            Ok(()) => told,
            Err(e) => format!("error: {e}"),
        }
    }

    /// A walk kept for a packet that repeats one but for its sequence
    /// number and ack bits (`bodies::Seen`) tells what a walk of it tells:
    /// its keys (those numbers its own), violations and end, on every cut
    /// and one-byte change of a snapshot whose entity types break their
    /// `valid` and of a chat message, each also with other numbers (read
    /// one after another, so that many are copies of one kept).
    #[test]
    fn a_kept_walk_tells_what_the_packets_own_walk_tells() {
        let d = crate::proto::described::starstrike_ksy();
        let analyzer = Analyzer::new(d);
        let snapshot = crate::proto::described::strs_snapshot_of(&[(9, 0), (10, 77)], f32::from);
        let mut chat = b"STRS\x03\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\x02\x01hi".to_vec();
        chat.resize(chat.len() + 254, 0);
        let (mut copies, mut broken) = (0, 0);
        for whole in [snapshot, chat] {
            for p in crate::proto::described::variants(&whole) {
                for (at, x) in [(0, 0), (7, 0x12), (6, 0xff), (11, 0x80), (8, 0x01)] {
                    let mut q = p.clone();
                    if let Some(b) = q.get_mut(at) {
                        *b ^= x;
                    }
                    let head = d.text_head.as_ref().unwrap();
                    copies += usize::from(WALKS.with(|w| w.borrow().get(d, head, &q).is_some()));
                    let mut kept = analyzer.keys();
                    let r = analyzer.walk_keys(&q, Side::Client, &mut kept);
                    let mut own = analyzer.keys();
                    let s = d.compiled.walk_with(&q, Side::Client, &mut own);
                    assert_eq!(
                        format!("{r:?} {kept:?}"),
                        format!("{s:?} {own:?}"),
                        "{q:02x?}"
                    );
                    broken += own.n_violations;
                }
            }
        }
        assert!(copies > 1000 && broken > 1000, "{copies} {broken}");
    }

    /// The dissector's message from the analysis's walk (its last on the
    /// thread) is the one its own walk finds, on every cut and one-byte
    /// change of a snapshot and an input.
    #[test]
    fn the_message_from_the_analysiss_walk_is_the_dissectors_own() {
        let d = crate::proto::described::starstrike_ksy();
        let analyzer = Analyzer::new(d);
        let dissect = super::super::dissect::Dissect(d, Side::Any);
        let snapshot = crate::proto::described::strs_snapshot_of(&[(9, 2), (10, 3)], f32::from);
        let mut input = b"STRS\x01\x00\x00\x09\x00\x00\x00\x00".to_vec();
        for f in [7u32, 0x3f80_0000, 0xc000_0000, 0x4000_0000, 0, 1] {
            input.extend(f.to_be_bytes());
        }
        let mut errors = 0;
        for whole in [snapshot, input] {
            let mut variants: Vec<Vec<u8>> =
                (0..=whole.len()).map(|n| whole[..n].to_vec()).collect();
            for i in 0..whole.len() {
                for x in [0x00, 0x05, 0xff] {
                    let mut p = whole.clone();
                    p[i] = x;
                    variants.push(p);
                }
            }
            for p in &variants {
                // Another payload last: the dissector walks.
                super::super::dissect::remember(d, b"none", (None, None), Ok(0));
                let own = message_of(&dissect, p);
                let mut keys = analyzer.keys();
                let result = d.compiled.walk_with(p, Side::Client, &mut keys);
                super::super::dissect::remember(d, p, (keys.ty, keys.seq), result);
                assert_eq!(message_of(&dissect, p), own, "{p:02x?}");
                errors += usize::from(own.starts_with("error"));
            }
        }
        assert!(errors > 100, "{errors}");
    }

    #[derive(Default)]
    struct Seen(Vec<Finding>);
    impl Observer for Seen {
        fn finding(&mut self, f: &Finding) {
            self.0.push(*f);
        }
    }

    /// A two-byte protocol: its own number, and the peer's highest received.
    const CUMULATIVE: &str = "meta:\n  id: cumul\nseq:\n  - id: seq\n    type: u1\n  - id: ack\n    type: u1\n-lwarscope:\n  recognise:\n    port: 5555\n  sequence:\n    field: seq\n  ack:\n    cumulative: ack\n";

    /// Packet `i` (frame i + 1, 10 ms apart) between the client
    /// 10.0.0.2:4000 and `server`, the client's way when `c2s`.
    fn datagram<'a>(i: usize, c2s: bool, server: &str, payload: &'a [u8]) -> Datagram<'a> {
        let client = "10.0.0.2:4000".parse().unwrap();
        let server = server.parse().unwrap();
        let (src, dst) = if c2s {
            (client, server)
        } else {
            (server, client)
        };
        Datagram::new(
            i as u64 + 1,
            Timestamp::from_millis(i as u64 * 10),
            src,
            dst,
            payload,
        )
    }

    fn run(packets: &[(bool, u8, u8)]) -> Vec<(String, Option<u32>, Direction)> {
        let d = crate::proto::described::parse("t.ksy", CUMULATIVE).unwrap();
        let d = crate::proto::described::leak(d, usize::MAX);
        let mut t = crate::proto::described::tracker(d, Default::default());
        let mut seen = Seen::default();
        let mut next = 0;
        for (i, &(c2s, seq, ack)) in packets.iter().enumerate() {
            let payload = [seq, ack];
            let dg = datagram(i, c2s, "10.0.0.1:5555", &payload);
            t.observe(&dg, &mut seen, &mut next, RecognisedBy::Probe);
        }
        t.finish(&mut seen);
        seen.0
            .iter()
            .map(|f| (f.kind.name().to_owned(), f.seqno, f.direction))
            .collect()
    }

    #[test]
    fn a_missing_one_byte_number_is_lost_as_it_leaves_the_window_every_cycle() {
        // The client numbers 700 packets from 0 (serial, 8 bits: the window
        // is the highest and the 128 behind it), skipping 3 and, two cycles
        // later, 3 + 512 = 515 (number 3 again): each is one `lost`, judged
        // as the packet that pushes it out of the window comes (number 3 +
        // 129) and raised with the next (engine::missed: the next packet
        // judges nothing more of its gap, so the gap's finding is complete).
        let d = crate::proto::described::parse("t.ksy", CUMULATIVE).unwrap();
        let d = crate::proto::described::leak(d, usize::MAX);
        let mut t = crate::proto::described::tracker(d, Default::default());
        let mut seen = Seen::default();
        let mut next = 0;
        let mut raised_with = Vec::new();
        for n in (0..700u32).filter(|n| *n != 3 && *n != 515) {
            let payload = [n as u8, 0];
            let dg = datagram(n as usize, true, "10.0.0.1:5555", &payload);
            let before = seen.0.len();
            t.observe(&dg, &mut seen, &mut next, RecognisedBy::Probe);
            for f in &seen.0[before..] {
                raised_with.push((f.kind.name().to_owned(), f.seqno, n));
            }
        }
        t.finish(&mut seen);
        assert_eq!(
            raised_with,
            [
                ("lost".to_owned(), Some(3), 3 + 130),
                ("lost".to_owned(), Some(3), 515 + 130),
            ]
        );
        assert_eq!(seen.0.len(), 2, "{:?}", seen.0);
        // The window of each rule.
        assert_eq!(Recency::new(8, Rule::Serial).window(), 129);
        assert_eq!(Recency::new(8, Rule::Ahead(128)).window(), 128);
        assert_eq!(Recency::new(16, Rule::Serial).window(), 256);
        assert_eq!(Recency::new(4, Rule::Serial).window(), 9);
    }

    #[test]
    fn a_session_field_tells_sessions_of_one_address_pair_apart() {
        let text = "meta:\n  id: conn\nseq:\n  - id: conn_id\n    type: u1\n  - id: seq\n    type: u1\n-lwarscope:\n  recognise:\n    port: 5556\n  session:\n    field: conn_id\n  sequence:\n    field: seq\n";
        let d = crate::proto::described::parse("t.ksy", text).unwrap();
        let d = crate::proto::described::leak(d, usize::MAX);
        let mut t = crate::proto::described::tracker(d, Default::default());
        let mut seen = Seen::default();
        let mut next = 0;
        // Two connections behind one address pair, interleaved, each numbered
        // on its own: no reordering, no loss.
        for (i, (conn, seq)) in [(1u8, 10u8), (2, 200), (1, 11), (2, 201), (1, 12), (2, 202)]
            .into_iter()
            .enumerate()
        {
            let payload = [conn, seq];
            let dg = Datagram::new(
                i as u64 + 1,
                Timestamp::from_millis(i as u64),
                "10.0.0.2:4000".parse().unwrap(),
                "10.0.0.1:5556".parse().unwrap(),
                &payload,
            )
            .with_payload_len(2);
            t.observe(&dg, &mut seen, &mut next, RecognisedBy::Probe);
        }
        t.finish(&mut seen);
        assert_eq!(t.session_count(), 2);
        assert!(seen.0.is_empty(), "{:?}", seen.0);
    }

    #[test]
    fn a_cumulative_ack_turns_a_missing_number_into_not_captured() {
        use Direction::*;
        // The client skips 3; the server acks up to 4: 3 was delivered.
        let acked = run(&[(true, 1, 0), (true, 2, 0), (true, 4, 0), (false, 1, 4)]);
        assert_eq!(
            acked,
            [("not-captured".to_owned(), Some(3), ClientToServer)]
        );
        // Acked only up to 2: 3 is lost.
        let lost = run(&[(true, 1, 0), (true, 2, 0), (true, 4, 0), (false, 1, 2)]);
        assert_eq!(lost, [("lost".to_owned(), Some(3), ClientToServer)]);
        // 3 arrives late: reordered, and nothing is missing.
        let late = run(&[(true, 1, 0), (true, 2, 0), (true, 4, 0), (true, 3, 0)]);
        assert_eq!(late, [("reordered".to_owned(), Some(3), ClientToServer)]);
        // Serial 8-bit: 255 -> 0 is the next number, no finding.
        let wrap = run(&[(true, 254, 0), (true, 255, 0), (true, 0, 0), (true, 1, 0)]);
        assert!(wrap.is_empty(), "{wrap:?}");
    }

    #[test]
    fn consecutive_packets_breaking_one_fields_valid_are_one_incident() {
        let text = "meta:\n  id: ranged\nseq:\n  - id: a\n    type: u1\n    valid:\n      max: 10\n  - id: b\n    type: u1\n    valid:\n      max: 10\n-lwarscope:\n  recognise:\n    port: 5557\n";
        let d = crate::proto::described::parse("t.ksy", text).unwrap();
        let d = crate::proto::described::leak(d, usize::MAX);
        let mut t = crate::proto::described::tracker(d, Default::default());
        let mut seen = Seen::default();
        let mut next = 0;
        // (c2s, a, b), frames from 1.
        let packets: [(bool, u8, u8); 7] = [
            (true, 20, 0),  // 1: a opens a run: raised here
            (true, 30, 0),  // 2: a goes on
            (false, 50, 0), // 3: the other direction: its own run
            (true, 1, 0),   // 4: a kept: its run (1, 2) ends
            (true, 99, 99), // 5: a and b open runs: both raised here
            (true, 98, 1),  // 6: b kept: its run (5) ends; a goes on
            (true, 97, 2),  // 7: a goes on, to the end
        ];
        let mut per_packet = Vec::new();
        for (i, &(c2s, a, b)) in packets.iter().enumerate() {
            let payload = [a, b];
            let dg = datagram(i, c2s, "10.0.0.1:5557", &payload);
            let before = seen.0.len();
            t.observe(&dg, &mut seen, &mut next, RecognisedBy::Probe);
            per_packet.push(seen.0.len() - before);
        }
        // Each incident is raised on its first packet, as it is read; the
        // later packets of the run raise nothing.
        assert_eq!(per_packet, [1, 0, 1, 0, 2, 0, 0]);
        t.finish(&mut seen);
        let got: Vec<_> = seen
            .0
            .iter()
            .map(|f| {
                assert_eq!(f.label().to_string(), "violation/valid");
                (f.frame, f.direction, f.detail.to_string())
            })
            .collect();
        use Direction::*;
        // (A description outside the loaded registry: its fields read `?`.)
        assert_eq!(
            got,
            [
                (1, ClientToServer, "`?` = 20 at offset 0".to_owned()),
                (3, ServerToClient, "`?` = 50 at offset 0".to_owned()),
                (5, ClientToServer, "`?` = 99 at offset 0".to_owned()),
                (5, ClientToServer, "`?` = 99 at offset 1".to_owned()),
            ]
        );
    }

    #[test]
    fn every_field_with_a_valid_keeps_its_own_run() {
        // As many fields with a `valid` as a description may have, then a
        // two-byte tail the packets below leave out: none decodes whole, so
        // no run ends before the session does.
        let fields = (0..MAX_VIOLATIONS).fold(String::new(), |seq, i| {
            seq + &format!("  - id: f{i}\n    type: u1\n    valid:\n      max: 10\n")
        });
        let text = format!(
            "meta:\n  id: many\nseq:\n{fields}  - id: tail\n    type: u2be\n-lwarscope:\n  recognise:\n    port: 5558\n"
        );
        let d = crate::proto::described::parse("t.ksy", &text).unwrap();
        let d = crate::proto::described::leak(d, usize::MAX);
        let broken = |fields: std::ops::Range<usize>| -> Vec<usize> {
            let mut t = crate::proto::described::tracker(d, Default::default());
            let mut seen = Seen::default();
            let mut next = 0;
            // The first packet breaks the first half of the fields, the
            // second the other half; or one packet breaks them all.
            let half = MAX_VIOLATIONS / 2;
            let packets: Vec<std::ops::Range<usize>> = if fields.len() == MAX_VIOLATIONS {
                vec![fields]
            } else {
                vec![0..half, half..MAX_VIOLATIONS]
            };
            for (i, range) in packets.into_iter().enumerate() {
                let payload: Vec<u8> = (0..MAX_VIOLATIONS)
                    .map(|f| if range.contains(&f) { 99 } else { 0 })
                    .collect();
                let dg = datagram(i, true, "10.0.0.1:5558", &payload);
                t.observe(&dg, &mut seen, &mut next, RecognisedBy::Probe);
            }
            t.finish(&mut seen);
            let mut offsets: Vec<usize> = seen
                .0
                .iter()
                .filter(|f| f.label().to_string() == "violation/valid")
                .map(|f| {
                    let detail = f.detail.to_string();
                    let at = detail.split("at offset ").nth(1).unwrap_or_default();
                    at.trim().parse().unwrap_or(usize::MAX)
                })
                .collect();
            offsets.sort_unstable();
            offsets
        };
        let all: Vec<usize> = (0..MAX_VIOLATIONS).collect();
        // Sixteen runs open at once, from two packets: each its own finding.
        assert_eq!(broken(0..1), all);
        // Sixteen fields broken in one packet: each its own finding.
        assert_eq!(broken(0..MAX_VIOLATIONS), all);
    }

    #[test]
    fn vessels_rule_at_every_boundary() {
        let v = Recency::new(8, Rule::Ahead(128));
        for s in [0u32, 5, 127, 128, 200, 255] {
            let at = |n: u32| (s + n) % 256;
            assert!(v.newer(at(1), s), "1 ahead of {s}");
            assert!(v.newer(at(127), s), "127 ahead of {s}");
            assert!(
                v.newer(at(128), s),
                "128 ahead of {s}: 128 or fewer is newer"
            );
            assert!(!v.newer(at(129), s), "129 ahead of {s} is out of date");
            assert!(!v.newer(s, s), "the same number is not newer");
            assert!(!v.newer(at(255), s), "one behind is out of date");
        }
        // The wrap: 0 is one ahead of 255, and 255 is out of date after 0.
        assert!(v.newer(0, 255));
        assert_eq!(v.ahead(0, 255), 1);
        assert!(!v.newer(255, 0));
        assert!(v.newer(127, 255), "128 ahead across the wrap");
        assert!(!v.newer(128, 255), "129 ahead across the wrap");
    }

    #[test]
    fn serial_half_window_excludes_the_half() {
        let s = Recency::new(16, Rule::Serial);
        assert!(s.newer(0, 65535));
        assert!(s.newer(32767, 0));
        assert!(!s.newer(32768, 0));
        assert!(!s.newer(0, 0));
        let b = Recency::new(8, Rule::Serial);
        assert!(b.newer(127, 0));
        assert!(!b.newer(128, 0));
    }
}
