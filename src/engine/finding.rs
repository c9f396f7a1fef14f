//! The expert findings: what the tracker flags, how bad it is, and where.

use crate::capture::Timestamp;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which way a packet travels within a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Direction {
    /// Client to server.
    #[serde(rename = "c2s")]
    ClientToServer,
    /// Server to client.
    #[serde(rename = "s2c")]
    ServerToClient,
}

impl Direction {
    pub const fn name(self) -> &'static str {
        match self {
            Direction::ClientToServer => "c2s",
            Direction::ServerToClient => "s2c",
        }
    }

    pub const fn reverse(self) -> Direction {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }

    /// 0 for c2s, 1 for s2c: an index for per-direction arrays.
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How bad a finding is. Ordered: `Error` is the worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub const fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a finding is about, as Wireshark's expert info groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    /// Sequence numbers: resends, gaps, loss, order, duplicates.
    Sequence,
    /// Acknowledgements.
    Ack,
    /// Bytes that do not decode, or were cut by the capture.
    Malformed,
    /// A rule of the protocol broken by bytes that decode.
    Protocol,
    /// A stream of the protocol's own numbers (input frames, counters).
    Stream,
}

impl Group {
    pub const fn name(self) -> &'static str {
        match self {
            Group::Sequence => "sequence",
            Group::Ack => "ack",
            Group::Malformed => "malformed",
            Group::Protocol => "protocol",
            Group::Stream => "stream",
        }
    }
}

/// A registered kind of finding: a stable name, a group, a severity, and the slot
/// its counters use. Protocols register their own kinds beside the shared ones
/// ([`FindingKind::SHARED`]); slots `0..17` are the shared kinds', a protocol's own
/// kinds use `17..`[`MAX_KINDS`].
#[derive(Debug)]
pub struct KindDef {
    /// The kind's name, as users type it in `-Y`, `check` and see in JSON:
    /// `resend`, or for a protocol's own kind `input-gap`.
    pub name: &'static str,
    /// The protocol that registers it, or `""` for a shared kind.
    pub proto: &'static str,
    pub group: Group,
    pub severity: Severity,
    /// What it means, from its documentation (each line after a space).
    pub doc: &'static str,
    pub slot: u8,
}

/// Counter slots per direction: every protocol's kinds fit below this.
pub const MAX_KINDS: usize = 32;

/// A kind of finding: a handle on its registered [`KindDef`]. Kinds compare by
/// identity, and format as their name.
#[derive(Clone, Copy)]
pub struct FindingKind(&'static KindDef);

impl PartialEq for FindingKind {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}
impl Eq for FindingKind {}

impl std::hash::Hash for FindingKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.proto.hash(state);
        self.0.slot.hash(state);
    }
}

impl PartialOrd for FindingKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for FindingKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0.slot, self.0.proto).cmp(&(other.0.slot, other.0.proto))
    }
}

impl fmt::Debug for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

macro_rules! shared_kinds {
    ($( $(#[doc = $doc:literal])* $name:ident = $text:literal, $group:ident, $severity:ident, $slot:literal; )*) => {
        /// The shared kinds' definitions.
        pub mod shared {
            use super::*;
            $( $(#[doc = $doc])* pub static $name: KindDef = KindDef {
                name: $text,
                proto: "",
                group: Group::$group,
                severity: Severity::$severity,
                doc: concat!($($doc),*),
                slot: $slot,
            }; )*
        }

        impl FindingKind {
            $( $(#[doc = $doc])* pub const $name: FindingKind = FindingKind(&shared::$name); )*

            /// The kinds every protocol shares, in slot order.
            pub const SHARED: &'static [FindingKind] = &[ $( FindingKind::$name, )* ];
        }
    };
}

shared_kinds! {
    /// A reliable message seen before, whose seqno the receiver had already acked in
    /// a packet captured earlier, at least the round trip between the tap and the
    /// sender before (the other direction's smoothed ack delay, tap to sender and
    /// back): the ack had reached the sender, which resent what had arrived. A
    /// repeat captured sooner after the ack (or before that round trip is
    /// measured), or in a packet overtaken on the way (sent before it was
    /// captured), may have crossed the ack in flight: a `repeat`, "unconfirmed".
    /// So is a repeat whose ack came only in packets that do not decode (the
    /// capture cannot tell that their receiver took the ack from them).
    SPURIOUS_RESEND = "spurious-resend", Sequence, Warning, 0;
    /// A reliable message whose seqno was seen in an earlier packet.
    RESEND = "resend", Sequence, Note, 1;
    /// The same seqno twice in one packet.
    DUPLICATE_IN_PACKET = "duplicate-in-packet", Sequence, Note, 2;
    /// A seqno never seen before but below the highest seen: it fills a gap.
    OUT_OF_ORDER = "out-of-order", Sequence, Note, 3;
    /// A seqno more than one above the highest seen.
    GAP = "gap", Sequence, Note, 4;
    /// A seqno skipped by a gap and never seen by the end of the capture (or
    /// before it left the protocol's window), and never acknowledged. One
    /// finding per gap: the numbers one packet skipped, judged alike, are
    /// one finding at the frame of that packet, its seqno the first, its detail how
    /// many and the last (`127 seqnos, 5 to 131`) when more than one. The
    /// `lost` count (and the loss estimate) counts numbers, not findings.
    LOST = "lost", Sequence, Warning, 5;
    /// The same payload bytes as a recent packet in the same direction.
    DUPLICATE_PACKET = "duplicate-packet", Sequence, Note, 6;
    /// A packet older than one captured before it in the same direction.
    REORDERED = "reordered", Sequence, Warning, 7;
    /// A run of acks lower than the highest earlier ack in the same direction
    /// (one per run, with its length: one bogus high ack is one finding); the
    /// older ack of a packet known to be overtaken is not one.
    ACK_REGRESSION = "ack-regression", Ack, Warning, 8;
    /// An ack of something never captured the other way: a packet newer than
    /// every one captured from the peer was acknowledged. A note: a packet
    /// reaches the receiver only past the tap, so the capture shows only that
    /// it missed what the peer delivered (a tap miss), or that the acker
    /// acknowledged a number never sent; it cannot tell the two apart (the
    /// peer's packets may have been missed up to the end), so it proves no
    /// fault of either side. Every protocol raises it under this severity.
    ACK_UNSEEN = "ack-unseen", Ack, Note, 9;
    /// A payload that cannot be decoded (reason and offset in the detail).
    MALFORMED = "malformed", Malformed, Error, 10;
    /// A frame cut short by the capture's snaplen: not the sender's fault.
    TRUNCATED = "truncated", Malformed, Warning, 11;
    /// A packet over the protocol's size limit.
    OVERSIZE = "oversize", Protocol, Warning, 12;
    /// A rule of the protocol broken; its rule (`lwar.violation.wrong-sender`)
    /// names which.
    VIOLATION = "violation", Protocol, Error, 13;
    /// A seqno never captured that the other side acknowledged: it was delivered,
    /// and the capture missed it (Wireshark's "ACKed segment that wasn't
    /// captured"). Not loss. Also, with the detail "unconfirmed: no ack window
    /// reached it after it could have arrived", a seqno never captured whose
    /// position no ack the other side sent after it could have arrived
    /// covered (a protocol whose ack window can drift away from the peer's
    /// numbers, or whose windows that reached it were sent while it was in
    /// flight): the capture cannot tell loss from a miss, so it is not
    /// counted as loss either. And, with the detail "unconfirmed: the protocol
    /// has no acks ...", a number never captured of a protocol without acks (a
    /// description with no `ack:` key): lost before the tap or missed by it,
    /// which nothing in the capture tells; counted in the loss estimate as the
    /// most that can have been lost, never a `lost` warning. One finding per
    /// gap, as `lost`; the count counts numbers.
    NOT_CAPTURED = "not-captured", Sequence, Note, 14;
    /// A reliable message captured again before an ack could have come back
    /// (within the direction's smoothed ack delay of its first capture): the
    /// sender repeating what is unacked, by design. Not a sign of loss. Also a
    /// repeat captured after an ack of it, but less than the round trip between
    /// the tap and the sender after that ack (or in a packet overtaken on the
    /// way): "unconfirmed: the ack may not have reached the sender"; or one
    /// whose ack came only in packets that do not decode: "unconfirmed: the
    /// ack (ack N) came only in packets that do not decode"; or (a protocol
    /// whose packets acknowledge the peer's packets, Starstrike) one whose own
    /// acks leave out the packet that carried the ack: "unconfirmed: its
    /// sender had not received the acknowledging packet".
    REPEAT = "repeat", Sequence, Note, 15;
    /// A packet of a session captured before the session's previous packet
    /// (frame numbers in the capture's order): the capture's clock stepped
    /// back (a clock set back while capturing, captures joined out of
    /// order). One per step, at the packet captured before its predecessor,
    /// in its direction; the detail names the previous packet's frame and
    /// how far back it stepped.
    /// A note: it is the capture's clock, not the protocol. The session's
    /// durations add up only the steps forward, and an ack captured before
    /// what it acknowledges gives no ack delay.
    TIME_BACKWARDS = "time-backwards", Stream, Note, 16;
}

impl FindingKind {
    /// A kind from its definition (a protocol's own kinds are made so).
    pub const fn new(def: &'static KindDef) -> Self {
        FindingKind(def)
    }

    pub const fn def(self) -> &'static KindDef {
        self.0
    }

    /// The counter slot, in `0..MAX_KINDS`.
    pub const fn ordinal(self) -> usize {
        self.0.slot as usize
    }

    pub const fn name(self) -> &'static str {
        self.0.name
    }

    pub const fn severity(self) -> Severity {
        self.0.severity
    }

    pub const fn group(self) -> Group {
        self.0.group
    }

    /// A shared kind by name.
    pub fn shared(name: &str) -> Option<Self> {
        Self::SHARED.iter().copied().find(|k| k.name() == name)
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Declares a protocol's own finding kinds: a `static` [`KindDef`] each (in a
/// private `kind_defs` module), a `pub const` [`FindingKind`] each, and `KINDS`,
/// all of them in slot order. Used in a protocol's `findings.rs`:
///
/// ```text
/// protocol_kinds! { "strs";
///     /// A reliable packet sent again.
///     RETRANSMISSION = "retransmission", Sequence, Note, 16;
/// }
/// ```
#[macro_export]
macro_rules! protocol_kinds {
    ($proto:literal; $( $(#[doc = $doc:literal])* $name:ident = $text:literal, $group:ident, $severity:ident, $slot:literal; )*) => {
        mod kind_defs {
            use $crate::engine::{Group, KindDef, Severity};
            $( pub static $name: KindDef = KindDef {
                name: $text,
                proto: $proto,
                group: Group::$group,
                severity: Severity::$severity,
                doc: concat!($($doc),*),
                slot: $slot,
            }; )*
        }
        $( $(#[doc = $doc])* pub const $name: $crate::engine::FindingKind =
            $crate::engine::FindingKind::new(&kind_defs::$name); )*

        /// The protocol's own kinds, in slot order.
        pub const KINDS: &[$crate::engine::FindingKind] = &[ $( $name, )* ];
    };
}

/// Declares a protocol's rules: a `static` [`RuleDef`] each, a `pub const`
/// [`Rule`] each in a `rules` module, and `RULES`, in slot order.
#[macro_export]
macro_rules! protocol_rules {
    ($proto:literal; $( $(#[doc = $doc:literal])* $name:ident = $text:literal, $slot:literal; )*) => {
        mod rule_defs {
            use $crate::engine::RuleDef;
            $( pub static $name: RuleDef = RuleDef {
                name: $text,
                proto: $proto,
                doc: concat!($($doc),*),
                slot: $slot,
            }; )*
        }
        /// The protocol's rules, for `violation` findings.
        pub mod rules {
            $( $(#[doc = $doc])* pub const $name: $crate::engine::Rule =
                $crate::engine::Rule::new(&super::rule_defs::$name); )*
        }

        /// Every rule of the protocol, in slot order.
        pub const RULES: &[$crate::engine::Rule] = &[ $( rules::$name, )* ];
    };
}

/// A registered rule of a protocol: the sub-kind of a `violation` finding.
#[derive(Debug)]
pub struct RuleDef {
    /// `after-disconnect`.
    pub name: &'static str,
    /// The protocol that registers it: `lwar`.
    pub proto: &'static str,
    pub doc: &'static str,
    /// The counter slot, in `0..MAX_RULES`.
    pub slot: u8,
}

/// Counter slots for rules per direction.
pub const MAX_RULES: usize = 32;

/// The rule a `violation` finding breaks: a handle on its registered [`RuleDef`].
#[derive(Clone, Copy)]
pub struct Rule(&'static RuleDef);

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}
impl Eq for Rule {}

impl std::hash::Hash for Rule {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.proto.hash(state);
        self.0.slot.hash(state);
    }
}

impl PartialOrd for Rule {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Rule {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0.proto, self.0.slot).cmp(&(other.0.proto, other.0.slot))
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Rule {
    pub const fn new(def: &'static RuleDef) -> Self {
        Rule(def)
    }

    pub const fn def(self) -> &'static RuleDef {
        self.0
    }

    /// The counter slot, in `0..MAX_RULES`.
    pub const fn ordinal(self) -> usize {
        self.0.slot as usize
    }

    /// The short name: `after-disconnect`.
    pub const fn name(self) -> &'static str {
        self.0.name
    }

    /// The namespaced name: `lwar.violation.after-disconnect`.
    pub fn full_name(self) -> impl fmt::Display {
        let def = self.0;
        fmt::from_fn(move |f| write!(f, "{}.violation.{}", def.proto, def.name))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a protocol formats the numbers of one of its own details.
#[derive(Debug)]
pub struct DetailFormat {
    pub name: &'static str,
    pub fmt: fn(&[u64; 4], &mut fmt::Formatter<'_>) -> fmt::Result,
}

/// The numbers behind a protocol's own finding (a decode error, a message type
/// where it does not belong): plain values and the protocol's formatter, so that
/// raising it never allocates and the engine never knows the protocol's types.
#[derive(Debug, Clone, Copy)]
pub struct ProtoDetail {
    pub format: &'static DetailFormat,
    pub args: [u64; 4],
}

impl PartialEq for ProtoDetail {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.format, other.format) && self.args == other.args
    }
}
impl Eq for ProtoDetail {}

impl fmt::Display for ProtoDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.format.fmt)(&self.args, f)
    }
}

/// A value a protocol carries in a [`ProtoDetail`]'s numbers: how many bits
/// it takes, how it is packed and how it reads back. Packed one after another
/// by [`ArgsWriter`] and read back in the same order by [`ArgsReader`], so
/// that an error type declared once (`proto::wire_error::wire_errors!`) or a
/// detail declared once ([`proto_details!`](crate::proto_details)) gets both
/// directions from its declaration. A value of one word is a [`Word`]; a
/// value of several (a run's tail) writes its parts itself.
pub trait Arg: Copy {
    /// The width in bits.
    const BITS: u32;
    fn put(self, w: &mut ArgsWriter);
    /// The value back from what [`Arg::put`] wrote.
    fn take(r: &mut ArgsReader<'_>) -> Self;
}

/// An [`Arg`] of at most 64 bits: a number, an id, a type.
pub trait Word: Copy {
    /// The width in bits: every value [`Word::to_arg`] gives fits in it.
    const BITS: u32;
    fn to_arg(self) -> u64;
    /// The value back from the bits [`Word::to_arg`] gave.
    fn from_arg(bits: u64) -> Self;
}

impl<T: Word> Arg for T {
    const BITS: u32 = <T as Word>::BITS;
    fn put(self, w: &mut ArgsWriter) {
        w.bits(self.to_arg(), <T as Word>::BITS);
    }
    fn take(r: &mut ArgsReader<'_>) -> Self {
        T::from_arg(r.bits(<T as Word>::BITS))
    }
}

macro_rules! unsigned_args {
    ($($t:ty),*) => {$(
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            fn to_arg(self) -> u64 {
                u64::from(self)
            }
            fn from_arg(bits: u64) -> Self {
                bits as $t
            }
        }
    )*};
}
unsigned_args!(u8, u16, u32, u64);

impl Word for bool {
    const BITS: u32 = 1;
    fn to_arg(self) -> u64 {
        u64::from(self)
    }
    fn from_arg(bits: u64) -> Self {
        bits != 0
    }
}

impl Word for i16 {
    const BITS: u32 = 16;
    fn to_arg(self) -> u64 {
        u64::from(self as u16)
    }
    fn from_arg(bits: u64) -> Self {
        bits as u16 as i16
    }
}

impl Word for i64 {
    const BITS: u32 = 64;
    fn to_arg(self) -> u64 {
        self as u64
    }
    fn from_arg(bits: u64) -> Self {
        bits as i64
    }
}

impl Word for f32 {
    const BITS: u32 = 32;
    fn to_arg(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn from_arg(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

impl Word for f64 {
    const BITS: u32 = 64;
    fn to_arg(self) -> u64 {
        self.to_bits()
    }
    fn from_arg(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

/// Offsets and lengths: within a datagram or a rebuilt message (at most
/// 64 MiB), far below 2^48, where a larger one would stop.
impl Word for usize {
    const BITS: u32 = 48;
    fn to_arg(self) -> u64 {
        (self as u64).min((1 << 48) - 1)
    }
    fn from_arg(bits: u64) -> Self {
        bits as usize
    }
}

/// A number that may be absent: a presence bit, then the number.
impl Word for Option<u32> {
    const BITS: u32 = 33;
    fn to_arg(self) -> u64 {
        self.map_or(0, |x| 1 << 32 | u64::from(x))
    }
    fn from_arg(bits: u64) -> Self {
        (bits >> 32 == 1).then_some(bits as u32)
    }
}

/// A byte that may be absent: a presence bit, then the byte.
impl Word for Option<u8> {
    const BITS: u32 = 9;
    fn to_arg(self) -> u64 {
        self.map_or(0, |x| 1 << 8 | u64::from(x))
    }
    fn from_arg(bits: u64) -> Self {
        (bits >> 8 == 1).then_some(bits as u8)
    }
}

/// How many bits of a detail's numbers an error's variant may fill: the
/// fourth word stays free for what the caller adds (Battlegrounds: the
/// message a rebuilt packet belongs to).
pub const ARGS_BITS: u32 = 192;

/// Packs [`Arg`]s one after another into a detail's numbers, after an 8-bit
/// tag.
#[derive(Debug)]
pub struct ArgsWriter {
    words: [u64; 4],
    at: u32,
}

impl ArgsWriter {
    pub const fn new(tag: u8) -> ArgsWriter {
        ArgsWriter {
            words: [tag as u64, 0, 0, 0],
            at: 8,
        }
    }

    pub fn put<T: Arg>(&mut self, value: T) {
        value.put(self);
    }

    /// The low `width` bits of `bits` (the rest is 0), next.
    pub fn bits(&mut self, bits: u64, width: u32) {
        let (word, shift) = ((self.at / 64) as usize, self.at % 64);
        self.words[word] |= bits << shift;
        if shift + width > 64 {
            self.words[word + 1] |= bits >> (64 - shift);
        }
        self.at += width;
    }

    pub const fn finish(self) -> [u64; 4] {
        self.words
    }
}

/// Reads back what an [`ArgsWriter`] packed, in the same order.
#[derive(Debug)]
pub struct ArgsReader<'a> {
    words: &'a [u64; 4],
    at: u32,
}

impl<'a> ArgsReader<'a> {
    /// The reader past the tag, and the tag.
    pub const fn new(words: &'a [u64; 4]) -> (ArgsReader<'a>, u8) {
        (ArgsReader { words, at: 8 }, words[0] as u8)
    }

    pub fn take<T: Arg>(&mut self) -> T {
        T::take(self)
    }

    /// The next `width` bits.
    pub fn bits(&mut self, width: u32) -> u64 {
        let (word, shift) = ((self.at / 64) as usize, self.at % 64);
        let mut bits = self.words[word] >> shift;
        if shift + width > 64 {
            bits |= self.words[word + 1] << (64 - shift);
        }
        if width < 64 {
            bits &= (1 << width) - 1;
        }
        self.at += width;
        bits
    }
}

/// A protocol's own finding details, each declared once: a function with the
/// values the detail tells, and the text it reads as, written with them. The
/// macro makes the function (it packs its arguments into a [`ProtoDetail`]'s
/// numbers, allocation-free, and returns the [`Detail`]) and the
/// [`DetailFormat`] that reads them back, in the same order, for the text:
/// no word layout to keep in step by hand. Every argument is an [`Arg`]; a
/// compile-time check holds them to the numbers' 248 bits. A function
/// declared `-> ProtoDetail` returns the numbers without the [`Detail`]
/// around them (a decode error's, which the engine files as malformed).
///
/// ```
/// lwarscope::proto_details! { "lwar";
///     /// The first Join's packet acks less than the client's Connect.
///     pub fn connect_not_acked(ack: u32, connect: u32) => |f| {
///         write!(f, "the packet acks {ack}, not the Connect (seqno {connect})")
///     }
/// }
/// assert_eq!(
///     connect_not_acked(3, 1).to_string(),
///     "the packet acks 3, not the Connect (seqno 1)"
/// );
/// ```
#[macro_export]
macro_rules! proto_details {
    ($proto:literal; $(
        $(#[$meta:meta])*
        $vis:vis fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) $(-> $ret:ident)? => |$f:ident| $body:expr
    );+ $(;)?) => {$(
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) -> $crate::proto_details!(@ret $($ret)?) {
            fn show(
                words: &[u64; 4],
                $f: &mut ::std::fmt::Formatter<'_>,
            ) -> ::std::fmt::Result {
                #[allow(unused_mut, unused_variables)]
                let (mut r, _) = $crate::engine::finding::ArgsReader::new(words);
                $(let $arg: $ty = r.take();)*
                $body
            }
            static FORMAT: $crate::engine::DetailFormat = $crate::engine::DetailFormat {
                name: concat!($proto, ".", stringify!($name)),
                fmt: show,
            };
            const _: () = assert!(
                8 $(+ <$ty as $crate::engine::finding::Arg>::BITS)* <= 256,
                concat!(stringify!($name), ": too many bits for a finding's numbers"),
            );
            #[allow(unused_mut)]
            let mut w = $crate::engine::finding::ArgsWriter::new(0);
            $(w.put($arg);)*
            let detail = $crate::engine::ProtoDetail {
                format: &FORMAT,
                args: w.finish(),
            };
            $crate::proto_details!(@wrap $($ret)? detail)
        }
    )+};
    (@ret) => { $crate::engine::Detail };
    (@ret ProtoDetail) => { $crate::engine::ProtoDetail };
    (@wrap $detail:ident) => { $crate::engine::Detail::Proto($detail) };
    (@wrap ProtoDetail $detail:ident) => { $detail };
}

/// A value packed and read back, as a detail's numbers carry it.
#[cfg(test)]
pub fn round_trip<T: Arg>(value: T) -> T {
    let mut w = ArgsWriter::new(0);
    w.put(value);
    let words = w.finish();
    ArgsReader::new(&words).0.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values packed one after another read back the same, across the words'
    /// boundaries, each masked to its width.
    #[test]
    fn args_read_back_what_was_packed() {
        let mut w = ArgsWriter::new(5);
        w.put(0xabu8);
        w.put(-2i16);
        w.put(usize::MAX); // held to 48 bits
        w.put(0x0123_4567_89ab_cdefu64);
        w.put(-0.5f32);
        w.put(0xffff_fffeu32);
        let words = w.finish();
        // 8 + 8 + 16 + 48 + 64 + 32 bits, then the last value crosses from
        // the third word into the fourth.
        assert_eq!(words[3], 0xffff);
        let (mut r, tag) = ArgsReader::new(&words);
        assert_eq!(tag, 5);
        assert_eq!(r.take::<u8>(), 0xab);
        assert_eq!(r.take::<i16>(), -2);
        assert_eq!(r.take::<usize>(), (1 << 48) - 1);
        assert_eq!(r.take::<u64>(), 0x0123_4567_89ab_cdef);
        assert_eq!(r.take::<f32>(), -0.5);
        assert_eq!(r.take::<u32>(), 0xffff_fffe);
    }

    crate::proto_details! { "test";
        /// Every kind of argument, crossing the words' boundaries.
        #[allow(clippy::too_many_arguments)]
        fn mixed(a: u8, b: Option<u32>, c: usize, d: u64, e: f32, g: bool, h: Option<u8>, i: i16) => |f| {
            write!(f, "{a} {b:?} {c} {d} {e} {g} {h:?} {i}")
        };

        /// Nothing to carry.
        fn bare() -> ProtoDetail => |f| f.write_str("bare")
    }

    /// A detail declared once reads back the values it was made of, at 248
    /// bits; one returned as `ProtoDetail` without the `Detail` around it.
    #[test]
    fn declared_details_read_back_their_values() {
        let d = mixed(
            7,
            Some(u32::MAX),
            (1 << 48) - 1,
            u64::MAX,
            -0.25,
            true,
            None,
            -3,
        );
        assert_eq!(
            d.to_string(),
            format!(
                "7 Some({}) {} {} -0.25 true None -3",
                u32::MAX,
                (1u64 << 48) - 1,
                u64::MAX
            )
        );
        let other = mixed(7, None, 0, 0, 0.5, false, Some(255), i16::MIN);
        assert_eq!(other.to_string(), "7 None 0 0 0.5 false Some(255) -32768");
        assert_ne!(d, other);
        assert_eq!(bare().to_string(), "bare");
        let tail = super::super::RunTail {
            messages: 82,
            packets: u32::MAX,
            last_frame: u64::MAX - 1,
        };
        assert_eq!(round_trip(tail), tail);
        assert_eq!(round_trip(Some(0u32)), Some(0));
        assert_eq!(round_trip(None::<u32>), None);
    }

    #[test]
    fn shared_names_and_slots_are_unique() {
        let mut names: Vec<_> = FindingKind::SHARED.iter().map(|k| k.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FindingKind::SHARED.len());
        for (i, k) in FindingKind::SHARED.iter().enumerate() {
            assert_eq!(k.ordinal(), i, "{k}");
            assert_eq!(FindingKind::shared(k.name()), Some(*k));
        }
        assert!(FindingKind::SHARED.len() <= 17);
        assert_eq!(FindingKind::shared("resends"), None);
    }

    #[test]
    fn severities_follow_the_issue() {
        for k in [FindingKind::MALFORMED, FindingKind::VIOLATION] {
            assert_eq!(k.severity(), Severity::Error, "{k}");
        }
        for k in [
            FindingKind::SPURIOUS_RESEND,
            FindingKind::LOST,
            FindingKind::REORDERED,
            FindingKind::OVERSIZE,
        ] {
            assert_eq!(k.severity(), Severity::Warning, "{k}");
        }
        // Issue 30: what only shows a tap miss is a note.
        for k in [
            FindingKind::ACK_UNSEEN,
            FindingKind::NOT_CAPTURED,
            FindingKind::RESEND,
            FindingKind::OUT_OF_ORDER,
            FindingKind::DUPLICATE_IN_PACKET,
            FindingKind::DUPLICATE_PACKET,
            FindingKind::GAP,
        ] {
            assert_eq!(k.severity(), Severity::Note, "{k}");
        }
    }
}

/// Identifies a session within one tracker run: an index in the order sessions were
/// first seen.
pub type SessionId = usize;

/// One finding: what, how bad, where, and the numbers behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// The rule broken, for `violation` findings.
    pub rule: Option<Rule>,
    /// The frame that raised it (for `lost`, the frame of the gap).
    pub frame: u64,
    pub ts: Timestamp,
    pub session: SessionId,
    pub direction: Direction,
    /// The reliable message concerned, where there is one.
    pub seqno: Option<u32>,
    pub detail: Detail,
}

impl Finding {
    pub const fn severity(&self) -> Severity {
        self.kind.severity()
    }

    /// How many sequence numbers it stands for: a `lost` or `not-captured`
    /// finding stands for every number of its gap judged alike
    /// ([`Detail::Missed`]); any other finding, for one.
    pub const fn numbers(&self) -> u64 {
        match self.detail {
            Detail::Missed { count, .. } => count as u64,
            _ => 1,
        }
    }

    /// `violation/wrong-sender` for violations, the kind's name otherwise.
    pub fn label(&self) -> impl fmt::Display + '_ {
        fmt::from_fn(move |f| match self.rule {
            Some(rule) => write!(f, "{}/{}", self.kind, rule),
            None => write!(f, "{}", self.kind),
        })
    }
}

/// The end of a regression's detail: for a run of more than one packet (or
/// message: `unit`), how many and where it ended (`; 37 packets below it,
/// until frame 812`). Shared by every kind reported per run
/// ([`super::incident::Regression`]).
pub fn below_until(
    f: &mut fmt::Formatter<'_>,
    packets: u32,
    unit: &str,
    last_frame: u64,
) -> fmt::Result {
    if packets > 1 {
        write!(f, "; {packets} {unit} below it, until frame {last_frame}")?;
    }
    Ok(())
}

/// The tail of a run's detail ([`super::incident::Run`]): how many messages
/// (`unit`) it held, in how many packets when they differ, and where it ended
/// (`; 148 Inputs until frame 1234`, `; 82 messages in 53 packets until frame
/// 525`, `; 4 messages in one packet`). Nothing for a run of one message.
pub fn run_until(
    f: &mut fmt::Formatter<'_>,
    messages: u64,
    unit: &str,
    packets: u64,
    last_frame: u64,
) -> fmt::Result {
    if messages > 1 {
        write!(f, "; {messages} {unit}")?;
        if packets == 1 {
            return f.write_str(" in one packet");
        }
        if packets != messages {
            write!(f, " in {packets} packets")?;
        }
        write!(f, " until frame {last_frame}")?;
    }
    Ok(())
}

/// The numbers behind a finding. Plain values, so raising a finding never allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    #[default]
    None,
    /// A repeat of a seqno first captured in `first_frame`, `delay_ns` earlier;
    /// this is capture number `tries` of it.
    Repeat {
        first_frame: u64,
        delay_ns: u64,
        tries: u32,
    },
    /// For a spurious resend: the ack, captured earlier, that covered it.
    AckedBefore { ack: u32, first_frame: u64 },
    /// For a repeat after an ack that may not have reached its sender: the
    /// ack (`ack`, the highest), captured `since_ack_ns` before the repeat
    /// (unknown: not followed), less than the round trip between the tap and
    /// the sender (`round_trip_ns`; none: not measured yet); or the repeat's
    /// packet was `overtaken` on the way (sent before it was captured).
    AckInFlight {
        ack: u32,
        first_frame: u64,
        since_ack_ns: Option<u64>,
        round_trip_ns: Option<u64>,
        overtaken: bool,
    },
    /// For a repeat of a seqno that the other side acked (up to `ack`) only
    /// in packets that do not decode: whether their receiver took the ack
    /// from them the capture cannot tell.
    AckUndecodable { ack: u32, first_frame: u64 },
    /// A seqno that jumped past `missing` unseen ones.
    Gap { highest: u32, missing: u32 },
    /// A seqno that fills a gap below `highest`.
    Fill { highest: u32 },
    /// For `lost` and `not-captured`: the `count` numbers one packet
    /// skipped (its gap) that the capture never showed, judged alike, from
    /// `first` (the finding's seqno) to `last` (not always every number
    /// between: some may have been captured late, or judged otherwise).
    /// `reason`: why the capture cannot tell loss from a miss, for
    /// unconfirmed ones.
    Missed {
        first: u32,
        last: u32,
        count: u32,
        reason: Option<&'static str>,
    },
    /// The same bytes as the packet of `frame`.
    DuplicateOf { frame: u64 },
    /// A header timestamp below the highest seen.
    Timestamp { timestamp: u32, highest: u32 },
    /// A packet captured `step_ns` before the session's previous packet,
    /// of `previous_frame` (`time-backwards`).
    Backwards { previous_frame: u64, step_ns: u64 },
    /// Acks below the highest ack `previous` (first carried in `previous_frame`),
    /// over `packets` packets in a row, the last in `last_frame`: `ack` is the
    /// first of them.
    AckRegression {
        ack: u32,
        previous: u32,
        previous_frame: u64,
        packets: u32,
        last_frame: u64,
    },
    /// Acks above the highest seqno captured the other way, over `packets`
    /// packets in a row: `ack` is the highest of them.
    AckUnseen {
        ack: u32,
        highest: u32,
        packets: u32,
    },
    /// A seqno outside the window the receiver can process: `expected` is the
    /// next one it would.
    OutOfWindow { seqno: u32, expected: u32 },
    /// What the protocol could not decode. For `truncated` findings, the capture
    /// kept `captured` of the datagram's `len` bytes.
    Decode {
        error: ProtoDetail,
        captured: usize,
        len: usize,
    },
    /// A packet the capture cut short, whose kept part decoded: the capture
    /// kept `captured` of its `len` bytes, and what it did not keep is unknown.
    Cut { captured: usize, len: usize },
    /// A packet over the protocol's size limit of `max` bytes.
    Oversize { len: usize, max: usize },
    /// A seqno never captured about which the capture cannot tell loss from
    /// a miss: the reason (`no ack window reached it after it could have arrived`).
    Unconfirmed(&'static str),
    /// The protocol's own numbers.
    Proto(ProtoDetail),
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Detail::None => Ok(()),
            Detail::Repeat {
                first_frame,
                delay_ns,
                tries,
            } => write!(
                f,
                "try {tries}, first in frame {first_frame}, {:.1} ms earlier",
                delay_ns as f64 / 1e6
            ),
            Detail::AckedBefore { ack, first_frame } => {
                write!(f, "already acked (ack {ack}); first in frame {first_frame}")
            }
            Detail::AckInFlight {
                ack,
                first_frame,
                since_ack_ns,
                round_trip_ns,
                overtaken,
            } => {
                f.write_str("unconfirmed: the ack may not have reached the sender (")?;
                if overtaken {
                    write!(f, "ack {ack}; packet overtaken, sent earlier")?;
                } else {
                    write!(f, "ack {ack}")?;
                    if let Some(since) = since_ack_ns {
                        write!(f, " captured {:.1} ms earlier", since as f64 / 1e6)?;
                    }
                    match round_trip_ns {
                        Some(rt) => write!(f, " < round trip {:.1} ms", rt as f64 / 1e6)?,
                        None => f.write_str(", round trip not measured yet")?,
                    }
                }
                write!(f, "); first in frame {first_frame}")
            }
            Detail::AckUndecodable { ack, first_frame } => write!(
                f,
                "unconfirmed: the ack (ack {ack}) came only in packets that do not decode; first in frame {first_frame}"
            ),
            Detail::Gap { highest, missing } => {
                write!(f, "{missing} missing after seqno {highest}")
            }
            Detail::Fill { highest } => write!(f, "fills a gap below seqno {highest}"),
            Detail::Missed {
                first,
                last,
                count,
                reason,
            } => {
                if let Some(why) = reason {
                    write!(f, "unconfirmed: {why}; ")?;
                }
                write!(f, "{count} seqnos, {first} to {last}")
            }
            Detail::DuplicateOf { frame } => write!(f, "same bytes as frame {frame}"),
            Detail::Backwards {
                previous_frame,
                step_ns,
            } => write!(
                f,
                "captured {:.3} ms before frame {previous_frame}, the session's previous packet",
                step_ns as f64 / 1e6
            ),
            Detail::Timestamp { timestamp, highest } => {
                write!(f, "timestamp {timestamp} after {highest}")
            }
            Detail::AckRegression {
                ack,
                previous,
                previous_frame,
                packets,
                last_frame,
            } => {
                write!(
                    f,
                    "ack {ack} after ack {previous} of frame {previous_frame}"
                )?;
                below_until(f, packets, "packets", last_frame)
            }
            Detail::AckUnseen {
                ack,
                highest,
                packets,
            } => {
                write!(
                    f,
                    "ack {ack}, highest seqno captured the other way is {highest}"
                )?;
                if packets > 1 {
                    write!(f, "; {packets} packets in a row")?;
                }
                Ok(())
            }
            Detail::OutOfWindow { seqno, expected } => write!(
                f,
                "seqno {seqno} is outside the window: the receiver expects {expected}"
            ),
            Detail::Decode {
                error,
                captured,
                len,
            } => {
                write!(f, "{error}")?;
                if captured < len {
                    write!(f, " (capture kept {captured} of {len} bytes)")?;
                }
                Ok(())
            }
            Detail::Cut { captured, len } => {
                write!(f, "the capture kept {captured} of {len} bytes")
            }
            Detail::Oversize { len, max } => {
                write!(f, "packet of {len} bytes exceeds the {max}-byte maximum")
            }
            Detail::Unconfirmed(why) => write!(f, "unconfirmed: {why}"),
            Detail::Proto(d) => write!(f, "{d}"),
        }
    }
}
