//! The engine: one generic session table and drive loop for every protocol, the
//! shared reliability core, and the registered findings.
//!
//! A protocol plugs in with an [`Analyzer`] (what a session is, the rules per
//! packet) and its registered data, a [`ProtocolInfo`] (message types, its own
//! finding kinds and rules, malformed reasons). The engine owns what is the same
//! for all: the session table keyed by the address pair (and the analyzer's
//! session key, [`Analyzer::session_key`]), eviction of idle
//! sessions past [`TrackerConfig::max_sessions`] (their counts still go into the
//! totals), timeouts, counters per direction sized from the registry, the
//! duplicate window, the cumulative-ack sequence window ([`seq`]), and the
//! findings' plumbing to every [`Observer`].
//!
//! Each protocol's contract (the exact definition of its findings) is in its
//! analysis module's docs, e.g. `proto::lwar::analysis`.

mod bound;
pub mod digits;
pub mod dissect;
pub mod field;
pub mod finding;
pub mod incident;
pub mod loss;
pub mod missed;
pub mod out;
pub mod reassembly;
pub mod seq;
pub mod serial;
pub mod session;
pub mod summary;
#[cfg(test)]
pub(crate) mod testing;
mod tracker;
pub mod window;
pub mod wire_map;

pub use finding::{
    Detail, DetailFormat, Direction, Finding, FindingKind, Group, KindDef, MAX_KINDS, MAX_RULES,
    ProtoDetail, Rule, RuleDef, SessionId, Severity,
};
pub use incident::{KeyedRuns, KeyedSpan, Regression, RegressionRun, Run, RunSpan, RunTail};
pub use loss::{Cadence, LossEstimate};

pub use missed::{MissedCounts, ack_could_come};
pub use session::{
    AckReach, AckTally, DirState, MAX_MALFORMED, MAX_MESSAGE_TYPES, Player, ProtoSession, Session,
};
pub use summary::{Counts, DirectionSummary, SessionSummary, Summary};
pub use tracker::{Flow, Observer, PacketEvent, Preference, Raise, Tracker, TrackerConfig};
pub use window::{FrameSet, Window, WindowSummary};

use crate::capture::Datagram;

/// What a protocol registers with the engine: the names its counters are
/// reported by.
pub struct ProtocolInfo {
    /// Short name, used as the prefix of its fields: `lwar`.
    pub name: &'static str,
    /// The name shown to users.
    pub title: &'static str,
    /// Message types, by the ordinal the analyzer counts them with.
    pub message_types: &'static [&'static str],
    /// The protocol's own finding kinds (slots `17..MAX_KINDS`), beside
    /// [`FindingKind::SHARED`].
    pub kinds: &'static [FindingKind],
    /// The protocol's rules, for `violation` findings.
    pub rules: &'static [Rule],
    /// Why a packet may not decode, by the ordinal the analyzer counts it with.
    pub malformed: &'static [&'static str],
    /// The lifecycle states a session can end in, by name.
    pub states: &'static [&'static str],
    /// Expected rates of message types, by the specification: (ordinal, Hz).
    pub spec_rates: &'static [(usize, f64)],
    /// How outputs show its packets.
    pub dissector: &'static dyn dissect::Dissector,
}

impl std::fmt::Debug for ProtocolInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Protocols are told apart by name.
impl PartialEq for ProtocolInfo {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for ProtocolInfo {}

impl ProtocolInfo {
    /// Every kind a session of this protocol can raise: the shared ones, then
    /// the protocol's own.
    pub fn all_kinds(&self) -> impl Iterator<Item = FindingKind> + '_ {
        FindingKind::SHARED.iter().chain(self.kinds).copied()
    }
}

/// A protocol's analysis on the engine: what a session is, and the rules it
/// applies to each packet. One analyzer serves every session of a capture; the
/// per-session state is [`Analyzer::Session`].
pub trait Analyzer: Send + 'static {
    /// The protocol's part of a session.
    type Session: ProtoSession;
    /// The protocol's registered data.
    fn info(&self) -> &'static ProtocolInfo;
    /// Silence from a peer, in capture time, after which a session times out.
    fn timeout_ns(&self) -> u64;

    /// Which session of its address pair a datagram belongs to: 0 (the
    /// default) when the address pair is the session; a described protocol
    /// may key its sessions by a field too (a connection id), 1 + its value.
    fn session_key(&self, _d: &Datagram<'_>) -> u64 {
        0
    }

    /// For a new session: whether the first datagram's source is the server.
    fn src_is_server(&self, d: &Datagram<'_>) -> bool;

    /// Whether `d`, of the address pair of `session`, starts a new session
    /// instead (a reconnect from the same ports: Wireshark's "port numbers
    /// reused"). The old session ends there; its gaps are reported.
    fn restarts(&self, _session: &Session<Self::Session>, _d: &Datagram<'_>) -> bool {
        false
    }

    /// Analyses one datagram of `session` (its packet and byte counts are
    /// already taken); findings go to `raise`.
    fn packet(
        &mut self,
        session: &mut Session<Self::Session>,
        raise: &mut Raise<'_>,
        d: &Datagram<'_>,
    );

    /// The session ends: at the end of the capture, when it is evicted, or when
    /// a new session replaces it. Findings only the end can tell (what was never
    /// acknowledged, messages still in progress) go to `raise` (frame 0, the
    /// capture's latest time; set its direction). Before the engine reports the
    /// seqnos its gaps skipped. Nothing by default.
    fn end(&mut self, _session: &mut Session<Self::Session>, _raise: &mut Raise<'_>) {}

    /// The dissector outputs read `session`'s packets with, where it is not
    /// the protocol's registered one ([`ProtocolInfo::dissector`]): for a
    /// protocol whose packets read differently per session (Battlegrounds'
    /// byte order). Asked after each packet's analysis, and handed to
    /// outputs in [`PacketEvent::dissector`]. `None` by default.
    fn dissector(
        &self,
        _session: &Session<Self::Session>,
    ) -> Option<&'static dyn dissect::Dissector> {
        None
    }
}

/// One session as outputs see it, whatever its protocol.
#[derive(Debug, Clone, Copy)]
pub struct SessionRef<'a> {
    pub id: SessionId,
    pub protocol: &'static ProtocolInfo,
    pub client: std::net::SocketAddr,
    pub server: std::net::SocketAddr,
    /// The lifecycle state's name.
    pub state: &'static str,
    /// How its flow was taken for its protocol.
    pub recognised_by: RecognisedBy,
    pub c2s: &'a DirState,
    pub s2c: &'a DirState,
    elapsed_ns: u64,
    proto: &'a dyn ProtoSessionDyn,
}

impl<'a> SessionRef<'a> {
    /// The client's own player, where the protocol has one.
    pub fn player(&self) -> Option<Player> {
        self.proto.player()
    }

    /// What the protocol tells of the session beyond the counts
    /// ([`ProtoSession::notes`]).
    pub fn notes(&self) -> Vec<(&'static str, String)> {
        self.proto.notes()
    }

    pub fn dir(&self, d: Direction) -> &'a DirState {
        match d {
            Direction::ClientToServer => self.c2s,
            Direction::ServerToClient => self.s2c,
        }
    }

    /// Seconds from the first to the last packet either way
    /// ([`Session::duration_secs`]).
    pub fn duration_secs(&self) -> f64 {
        self.elapsed_ns as f64 / 1e9
    }
}

/// [`ProtoSession`] as a trait object.
trait ProtoSessionDyn: std::fmt::Debug {
    fn player(&self) -> Option<Player>;
    fn notes(&self) -> Vec<(&'static str, String)>;
}

impl<S: ProtoSession> ProtoSessionDyn for S {
    fn player(&self) -> Option<Player> {
        ProtoSession::player(self)
    }
    fn notes(&self) -> Vec<(&'static str, String)> {
        ProtoSession::notes(self)
    }
}

impl<'a, S: ProtoSession> Session<S> {
    fn as_ref_with(&'a self, protocol: &'static ProtocolInfo) -> SessionRef<'a> {
        SessionRef {
            id: self.id,
            protocol,
            client: self.client,
            server: self.server,
            state: self.proto.state(),
            recognised_by: self.recognised_by,
            c2s: &self.c2s,
            s2c: &self.s2c,
            elapsed_ns: self.elapsed_ns,
            proto: &self.proto,
        }
    }
}

/// An analyzer made from the configuration alone (every built-in protocol's):
/// what [`Tracker::new`] needs. A described protocol's analyzer carries its
/// description instead ([`Tracker::with_analyzer`]).
pub trait NewAnalyzer: Analyzer {
    fn new(config: &TrackerConfig) -> Self;
}

/// One protocol's [`Tracker`] as the engine drives it, without its types.
pub trait ProtocolTracker: Send {
    fn info(&self) -> &'static ProtocolInfo;
    /// Analyses one datagram of this protocol; new sessions take their ids from
    /// `next_id`, shared by every protocol of the capture.
    fn observe(
        &mut self,
        d: &Datagram<'_>,
        observer: &mut dyn Observer,
        next_id: &mut SessionId,
        by: RecognisedBy,
    ) -> Flow;
    fn finish(&mut self, observer: &mut dyn Observer) -> Summary;
    fn summary(&self) -> Summary;
    /// The counts of the sessions `keep` takes, evicted ones left out.
    fn summary_of(&self, keep: &dyn Fn(SessionId) -> bool) -> Summary;
    /// The sessions kept, in the order they were first seen.
    fn for_each_session(&self, f: &mut dyn FnMut(SessionRef<'_>));
    fn session(&self, id: SessionId) -> Option<SessionRef<'_>>;
    fn session_count(&self) -> usize;
    fn evicted_sessions(&self) -> u64;
    /// Whether a session of this protocol is kept for the datagram's address pair.
    fn has_flow(&self, d: &Datagram<'_>) -> bool;
    /// The session kept for the datagram's address pair (and session key).
    fn session_for(&self, d: &Datagram<'_>) -> Option<SessionRef<'_>>;
}

impl<A: Analyzer> ProtocolTracker for Tracker<A> {
    fn info(&self) -> &'static ProtocolInfo {
        self.analyzer().info()
    }
    fn observe(
        &mut self,
        d: &Datagram<'_>,
        observer: &mut dyn Observer,
        next_id: &mut SessionId,
        by: RecognisedBy,
    ) -> Flow {
        self.observe_numbered(d, observer, next_id, by)
    }
    fn finish(&mut self, observer: &mut dyn Observer) -> Summary {
        Tracker::finish(self, observer)
    }
    fn summary(&self) -> Summary {
        Tracker::summary(self)
    }
    fn summary_of(&self, keep: &dyn Fn(SessionId) -> bool) -> Summary {
        Tracker::summary_of(self, Some(keep))
    }
    fn for_each_session(&self, f: &mut dyn FnMut(SessionRef<'_>)) {
        let info = self.analyzer().info();
        for (_, s) in self.sessions() {
            f(s.as_ref_with(info));
        }
    }
    fn session(&self, id: SessionId) -> Option<SessionRef<'_>> {
        Tracker::session(self, id).map(|s| s.as_ref_with(self.analyzer().info()))
    }
    fn session_count(&self) -> usize {
        Tracker::session_count(self)
    }
    fn evicted_sessions(&self) -> u64 {
        Tracker::evicted_sessions(self)
    }
    fn has_flow(&self, d: &Datagram<'_>) -> bool {
        Tracker::has_flow(self, d)
    }
    fn session_for(&self, d: &Datagram<'_>) -> Option<SessionRef<'_>> {
        Tracker::session_for(self, d).map(|s| s.as_ref_with(self.analyzer().info()))
    }
}

/// How the engine recognises a protocol's datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recognition {
    /// Every datagram carries the protocol's mark (a magic, an appId), so each
    /// is probed on its own: comparing four bytes costs less than looking a flow
    /// up. A datagram without the mark that no other protocol claims either,
    /// on the address pair of a session the protocol keeps, is still that
    /// session's (its mark damaged: a malformed packet of the session, as
    /// Wireshark binds a conversation to its dissector); any other datagram
    /// without the mark is someone else's.
    EveryDatagram,
    /// Only a flow's first datagram (a handshake) says what it is: once the
    /// probe recognises it, the flow's later datagrams (its address pair, while
    /// the protocol keeps the session) follow it.
    FirstOfFlow,
}

/// How a datagram says it is of a protocol.
#[derive(Debug, Clone, Copy)]
pub enum Probe {
    /// A built-in protocol's test of the payload (its magic, its appId, its
    /// handshake): a plain function, as cheap as it gets on the hot path.
    Payload(fn(&[u8]) -> bool),
    /// A built-in protocol's test of the whole payload (Battlegrounds' AUTH,
    /// exactly 8 bytes): a datagram the capture cut short never passes it,
    /// whatever its kept bytes look like.
    WholePayload(fn(&[u8]) -> bool),
    /// A described protocol's mark: magic bytes at an offset, a port, or both
    /// (both must hold).
    Mark(Mark),
}

/// Magic bytes at an offset of the payload and/or a UDP port (source or
/// destination).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub offset: usize,
    /// Empty: no magic.
    pub magic: &'static [u8],
    pub port: Option<u16>,
}

impl Probe {
    /// Whether the datagram carries the protocol's mark.
    #[inline]
    pub fn matches(&self, d: &Datagram<'_>) -> bool {
        match self {
            Probe::Payload(f) => f(d.payload),
            Probe::WholePayload(f) => !d.truncated_by_capture() && f(d.payload),
            Probe::Mark(m) => m.matches(d),
        }
    }

    /// Whether the payload alone says it is of the protocol (a mark with a
    /// port and no magic cannot tell from the bytes: false).
    pub fn payload(&self, payload: &[u8]) -> bool {
        match self {
            Probe::Payload(f) | Probe::WholePayload(f) => f(payload),
            Probe::Mark(m) => !m.magic.is_empty() && m.magic_matches(payload),
        }
    }
}

impl Mark {
    /// Whether the datagram carries the mark. Out of line: a loop over the
    /// probes would otherwise read both ports of every datagram ahead, even
    /// of one the first probe takes.
    #[inline(never)]
    fn matches(&self, d: &Datagram<'_>) -> bool {
        self.port
            .is_none_or(|p| d.src.port() == p || d.dst.port() == p)
            && self.magic_matches(d.payload)
    }

    fn magic_matches(&self, payload: &[u8]) -> bool {
        self.magic.is_empty()
            || payload
                .get(self.offset..)
                .is_some_and(|rest| rest.starts_with(self.magic))
    }
}

/// A protocol the engine can serve: how to recognise its datagrams, and its
/// tracker. The registry (`proto`) makes these.
pub struct Entry {
    /// How a datagram says it is of this protocol (its magic, its appId, its
    /// handshake, its port).
    pub probe: Probe,
    pub recognition: Recognition,
    pub tracker: Box<dyn ProtocolTracker>,
}

/// The protocol the engine will most likely take a datagram for, judged
/// away from the engine's state (on the reader's thread of a two-thread
/// run), the way the engine judges: a port the user decodes as a protocol,
/// else, protocol by protocol in the engine's order, the datagram's own mark
/// or a flow that protocol's handshake named earlier. The flows are this
/// guess's own record of the handshakes it saw (bounded: forgotten all at
/// once past [`GUESS_FLOWS`]), not the engine's sessions, which end and time
/// out: whoever uses a guess checks it against the protocol the engine chose.
#[derive(Debug, Clone)]
pub struct Guess {
    /// As the engine's: (port, protocol index).
    decode_as: Vec<(u16, usize)>,
    probes: Vec<(Probe, Recognition, &'static ProtocolInfo)>,
    /// The flows a handshake named (the address pair, lower first), with
    /// the index of their protocol.
    flows: wire_map::WireMap<(std::net::SocketAddr, std::net::SocketAddr), usize>,
}

/// Flows a [`Guess`] remembers at most.
pub const GUESS_FLOWS: usize = 4096;

impl Guess {
    /// The protocol `d` most likely is, if any.
    pub fn protocol(&mut self, d: &Datagram<'_>) -> Option<&'static ProtocolInfo> {
        // Ordering addresses costs: only for a protocol followed by flow.
        let flow = || (d.src.min(d.dst), d.src.max(d.dst));
        let flows = &self.flows;
        let protocols = self.probes.iter().enumerate();
        let (i, by) = recognition(
            d,
            &self.decode_as,
            protocols.map(|(i, &(probe, recognition, _))| (probe, recognition, i)),
            |i| !flows.is_empty() && flows.get(&flow()) == Some(&i),
        )?;
        let &(_, recognition, protocol) = self.probes.get(i)?;
        if by == RecognisedBy::Probe && recognition == Recognition::FirstOfFlow {
            if self.flows.len() >= GUESS_FLOWS {
                self.flows.clear();
            }
            self.flows.insert(flow(), i);
        }
        Some(protocol)
    }
}

/// The engine's probes, in its order, to test datagrams with away from the
/// engine (on the reader's thread of a two-thread run): what they find is
/// the datagram's [`Datagram::probes`], which the engine then reads instead
/// of testing the payload again. A probe is a pure function of what was
/// captured (the payload, its length as sent, the ports), so the marks are
/// what the engine's own tests would find.
///
/// It also keeps the flows a handshake bound to a protocol recognised by a
/// flow's first datagram ([`Recognition::FirstOfFlow`]: Battlegrounds'
/// AUTH), as it saw them: a later datagram of such a flow is tested up to
/// that protocol only ([`BOUND`]), as Wireshark binds a conversation to its
/// dissector. The engine checks the binding against the sessions it keeps.
#[derive(Debug, Clone)]
pub struct ProbeMarks {
    probes: Vec<Probe>,
    /// The protocols recognised by a flow's first datagram, as bits.
    first_of_flow: u64,
    bound: bound::BoundFlows,
}

/// A mark's flag ([`ProbeMarks::marks`]): the one other bit set names the
/// protocol a handshake bound the datagram's flow to, where the reader
/// stopped; none of the probes up to it and its own match, the probes after
/// it were not tested.
pub const BOUND: u64 = 1 << 63;

impl ProbeMarks {
    /// Bit `i` set: protocol `i` is the first in order whose probe matches
    /// `d`; none set: no probe matches. The probes after the first match are
    /// not tested: recognition, which goes in order, never reads their
    /// marks (`recognition` stops at the first protocol that takes the
    /// datagram, `Engine::recognise_marked` reads the lowest mark only).
    /// [`BOUND`] with bit `i`: no probe up to `i`'s matches and `d`'s flow
    /// was bound to protocol `i` (recognised by a flow's first datagram),
    /// which takes it if it keeps the flow (recognition asks that protocol
    /// for the flow before any later one); the later probes were not tested.
    pub fn marks(&mut self, d: &Datagram<'_>) -> u64 {
        // A flow binds to one protocol at most: the probes up to it, and
        // no further, whatever their order.
        let (probes, bound) = match self.bound.protocol_of(d) {
            Some(k) => (
                self.probes.get(..=k).unwrap_or(&self.probes),
                BOUND | 1u64.checked_shl(k as u32).unwrap_or(0),
            ),
            None => (&self.probes[..], 0),
        };
        for (i, probe) in probes.iter().enumerate() {
            if probe.matches(d) {
                if self.first_of_flow >> i & 1 == 1 {
                    self.bound.bind(d, i);
                }
                return 1 << i;
            }
        }
        bound
    }
}

/// Whether the probe of protocol `i` matches `d`: its mark taken ahead
/// ([`Datagram::probes`]), or its test (a probe past a [`BOUND`] mark's,
/// not tested ahead).
#[inline]
fn probe_matches(probe: &Probe, i: usize, d: &Datagram<'_>) -> bool {
    match d.probes {
        Some(marks) if marks & BOUND == 0 => (marks >> i) & 1 == 1,
        Some(marks) if i as u32 <= (marks & !BOUND).trailing_zeros() => false,
        _ => probe.matches(d),
    }
}

/// Recognition's one rule, for the engine and for a [`Guess`]: a port the
/// user decodes as a protocol first; then, protocol by protocol in order,
/// the datagram's own mark, or for a protocol recognised by its handshake a
/// flow that handshake named (`has_flow`); then, when none took it, the
/// first protocol recognised by its mark that keeps a session of the
/// datagram's flow (a datagram of a known flow whose mark was damaged).
/// The protocol `T` that takes `d`, and how.
/// A probe's test is its mark taken ahead where the datagram has them
/// ([`probe_matches`]).
fn recognition<P>(
    d: &Datagram<'_>,
    decode_as: &[(u16, usize)],
    protocols: P,
    mut has_flow: impl FnMut(usize) -> bool,
) -> Option<(usize, RecognisedBy)>
where
    P: IntoIterator<Item = (Probe, Recognition, usize)>,
    P::IntoIter: Clone,
{
    if !decode_as.is_empty()
        && let Some(&(_, t)) = decode_as
            .iter()
            .find(|(p, _)| *p == d.src.port() || *p == d.dst.port())
    {
        return Some((t, RecognisedBy::Port));
    }
    let protocols = protocols.into_iter();
    protocols
        .clone()
        .find_map(|(probe, recognition, t)| {
            if probe_matches(&probe, t, d) {
                Some((t, RecognisedBy::Probe))
            } else if recognition == Recognition::FirstOfFlow && has_flow(t) {
                Some((t, RecognisedBy::Flow))
            } else {
                None
            }
        })
        .or_else(|| {
            // Only for a datagram no protocol took: a flow lookup per
            // protocol recognised by its mark.
            protocols.into_iter().find_map(|(_, recognition, t)| {
                (recognition == Recognition::EveryDatagram && has_flow(t))
                    .then_some((t, RecognisedBy::Flow))
            })
        })
}

/// How a flow came to be taken for its protocol (shown in the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecognisedBy {
    #[default]
    /// The datagram's own mark, or the flow's handshake.
    Probe,
    /// A port the user named (`-d udp.port==N,proto`).
    Port,
    /// The flow was already the protocol's.
    Flow,
}

impl RecognisedBy {
    pub const fn name(self) -> &'static str {
        match self {
            RecognisedBy::Probe => "probe",
            RecognisedBy::Port => "port",
            RecognisedBy::Flow => "flow",
        }
    }
}

/// One protocol's messages by type: how many, and their bytes.
#[derive(Debug, Clone)]
pub struct ProtocolMessages {
    pub protocol: &'static ProtocolInfo,
    pub counts: summary::Counts,
    pub bytes: summary::Counts,
}

impl ProtocolMessages {
    pub fn of(protocol: &'static ProtocolInfo, s: Summary) -> Self {
        ProtocolMessages {
            protocol,
            counts: s.messages,
            bytes: s.message_bytes,
        }
    }
}

/// Datagrams no protocol recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Unrecognised {
    /// Other traffic, skipped.
    pub other: u64,
    /// Of `other`: cut by the snaplen before 4 bytes of payload, so too short
    /// for any protocol to recognise.
    pub cut: u64,
}

/// The engine of a capture: every registered protocol's tracker, each datagram
/// handed to the protocol that recognises it (a port the user named first, then
/// the protocols in registry order). Session ids are shared, in the order
/// sessions were first seen, whatever their protocol.
pub struct Engine {
    entries: Vec<Entry>,
    /// The entries (of the first 64) recognised by a flow's first datagram
    /// ([`Recognition::FirstOfFlow`]), and the others, as bits: what
    /// recognition asks of the protocols that come before the first whose
    /// probe a datagram's marks say match ([`Datagram::probes`]).
    first_of_flow: u64,
    every_datagram: u64,
    /// Ports the user decodes as a protocol: (port, entry index).
    decode_as: Vec<(u16, usize)>,
    next_id: SessionId,
    recognised: u64,
    limit: Option<u64>,
    unrecognised: Unrecognised,
}

impl Engine {
    pub fn new(entries: Vec<Entry>) -> Self {
        let bits = |r: Recognition| {
            entries
                .iter()
                .take(64)
                .enumerate()
                .filter(|(_, e)| e.recognition == r)
                .fold(0u64, |m, (i, _)| m | 1 << i)
        };
        Engine {
            first_of_flow: bits(Recognition::FirstOfFlow),
            every_datagram: bits(Recognition::EveryDatagram),
            entries,
            decode_as: Vec::new(),
            next_id: 0,
            recognised: 0,
            limit: None,
            unrecognised: Unrecognised::default(),
        }
    }

    /// Decodes datagrams from or to `port` as the protocol of entry `index`
    /// (tshark's `-d udp.port==N,proto`), before any probe.
    /// An index that is not an entry's is ignored.
    pub fn decode_port_as(&mut self, port: u16, index: usize) {
        if index >= self.entries.len() {
            return;
        }
        self.decode_as.retain(|(p, _)| *p != port);
        self.decode_as.push((port, index));
    }

    /// Stops (the observe that reaches it returns [`Flow::Stop`]) after `n`
    /// recognised datagrams (`-c N`).
    pub fn stop_after(&mut self, n: u64) {
        self.limit = Some(n);
    }

    /// The engine's probes, to test datagrams with on another thread
    /// ([`Datagram::probes`]); `None` past 63 protocols (a mark is a bit,
    /// and one bit is [`BOUND`]).
    pub fn probe_marks(&self) -> Option<ProbeMarks> {
        (self.entries.len() < 64).then(|| ProbeMarks {
            probes: self.entries.iter().map(|e| e.probe).collect(),
            first_of_flow: self.first_of_flow,
            bound: bound::BoundFlows::default(),
        })
    }

    /// What recognition can tell of a datagram without the engine's state:
    /// for work done on another thread ([`Guess`]).
    pub fn guess(&self) -> Guess {
        Guess {
            decode_as: self.decode_as.clone(),
            probes: self
                .entries
                .iter()
                .map(|e| (e.probe, e.recognition, e.tracker.info()))
                .collect(),
            flows: wire_map::wire_map(),
        }
    }

    /// The entry that takes `d`, and how it was recognised.
    #[inline]
    fn recognise(&self, d: &Datagram<'_>) -> Option<(usize, RecognisedBy)> {
        // The common case first, inline: no port named, and the first
        // protocol's mark on the datagram (what `recognition` finds first
        // too).
        if self.decode_as.is_empty() {
            if let Some(marks) = d.probes {
                return self.recognise_marked(d, marks);
            }
            if let Some(first) = self.entries.first()
                && first.probe.matches(d)
            {
                return Some((0, RecognisedBy::Probe));
            }
        }
        self.recognise_all(d)
    }

    /// [`recognition`] of a datagram whose probes were tested ahead, no
    /// port named, over bits: protocol by protocol before the first whose
    /// mark is set, only those recognised by a flow's first datagram are
    /// asked for a flow; then that protocol; with no mark, the protocols
    /// recognised by their mark are asked for a flow, in order.
    #[inline]
    fn recognise_marked(&self, d: &Datagram<'_>, marks: u64) -> Option<(usize, RecognisedBy)> {
        // The first protocol's mark: none comes before it.
        if marks == 1 {
            return Some((0, RecognisedBy::Probe));
        }
        if marks & BOUND != 0 {
            return self.recognise_bound(d, marks);
        }
        let first = marks.trailing_zeros();
        let before = 1u64.checked_shl(first).map_or(u64::MAX, |b| b - 1);
        // The common case, inline: a mark, and no protocol before it to
        // ask for a flow.
        if marks != 0 && self.first_of_flow & before == 0 {
            return Some((first as usize, RecognisedBy::Probe));
        }
        self.recognise_by_flow(d, marks, before)
    }

    /// [`Engine::recognise_marked`] past its common case: `before`, the
    /// protocols before the first marked (all of them with no mark).
    #[inline(never)]
    fn recognise_by_flow(
        &self,
        d: &Datagram<'_>,
        marks: u64,
        before: u64,
    ) -> Option<(usize, RecognisedBy)> {
        let first = marks.trailing_zeros();
        if let Some(i) = self.flow_of(d, self.first_of_flow & before) {
            return Some((i, RecognisedBy::Flow));
        }
        if marks != 0 {
            return Some((first as usize, RecognisedBy::Probe));
        }
        self.flow_of(d, self.every_datagram)
            .map(|i| (i, RecognisedBy::Flow))
    }

    /// [`Engine::recognise_marked`] of a [`BOUND`] mark at protocol `k`:
    /// the protocols before it recognised by a flow's first datagram asked
    /// for the flow, then `k` (a datagram of a Battlegrounds flow after its
    /// AUTH, in the common case); else [`Engine::recognise_past`].
    #[inline(never)]
    fn recognise_bound(&self, d: &Datagram<'_>, marks: u64) -> Option<(usize, RecognisedBy)> {
        let bit = marks & !BOUND;
        let k = bit.trailing_zeros() as usize;
        let before = self.first_of_flow & bit.wrapping_sub(1);
        if before != 0
            && let Some(i) = self.flow_of(d, before)
        {
            return Some((i, RecognisedBy::Flow));
        }
        if self.entries.get(k).is_some_and(|e| e.tracker.has_flow(d)) {
            return Some((k, RecognisedBy::Flow));
        }
        self.recognise_past(d, k)
    }

    /// [`Engine::recognise_bound`] where no protocol up to `k` keeps the
    /// flow: the probes the reader did not test, here, and recognition on
    /// from there.
    #[cold]
    #[inline(never)]
    fn recognise_past(&self, d: &Datagram<'_>, k: usize) -> Option<(usize, RecognisedBy)> {
        let rest = self.entries.iter().enumerate().skip(k + 1);
        let marks = (rest.clone())
            .find(|(_, e)| e.probe.matches(d))
            .map_or(0, |(i, _)| 1u64.checked_shl(i as u32).unwrap_or(0));
        let before = 1u64
            .checked_shl(marks.trailing_zeros())
            .map_or(u64::MAX, |b| b - 1);
        self.recognise_by_flow(d, marks, before)
    }

    /// The first protocol of `among` (bits) that keeps a session of `d`'s
    /// flow.
    #[inline]
    fn flow_of(&self, d: &Datagram<'_>, mut among: u64) -> Option<usize> {
        while among != 0 {
            let i = among.trailing_zeros() as usize;
            if self.entries.get(i).is_some_and(|e| e.tracker.has_flow(d)) {
                return Some(i);
            }
            among &= among - 1;
        }
        None
    }

    /// [`Engine::recognise`] past its common case.
    #[inline(never)]
    fn recognise_all(&self, d: &Datagram<'_>) -> Option<(usize, RecognisedBy)> {
        let protocols = self.entries.iter().enumerate();
        recognition(
            d,
            &self.decode_as,
            protocols.map(|(i, e)| (e.probe, e.recognition, i)),
            |i| self.entries.get(i).is_some_and(|e| e.tracker.has_flow(d)),
        )
    }

    /// Analyses one datagram: what the observer wants next, or `None` when no
    /// protocol recognises the datagram (it is counted as other traffic).
    pub fn observe(&mut self, d: &Datagram<'_>, observer: &mut dyn Observer) -> Option<Flow> {
        let Some((i, by)) = self.recognise(d) else {
            self.unrecognised.other += 1;
            if d.payload.len() < 4 && d.truncated_by_capture() {
                self.unrecognised.cut += 1;
            }
            return None;
        };
        let entry = self.entries.get_mut(i)?;
        let flow = entry.tracker.observe(d, observer, &mut self.next_id, by);
        self.recognised += 1;
        match self.limit {
            Some(n) if self.recognised >= n => Some(Flow::Stop),
            _ => Some(flow),
        }
    }

    /// Whether [`Engine::stop_after`] set a count.
    pub fn has_limit(&self) -> bool {
        self.limit.is_some()
    }

    /// Datagrams recognised so far.
    pub fn recognised(&self) -> u64 {
        self.recognised
    }

    /// Whether the count of [`Engine::stop_after`] was reached.
    pub fn limit_reached(&self) -> bool {
        self.limit.is_some_and(|n| self.recognised >= n)
    }

    /// Datagrams no protocol recognised so far.
    pub fn unrecognised(&self) -> Unrecognised {
        self.unrecognised
    }

    /// Ends the capture; the summary of every protocol (sessions grouped by
    /// protocol, each group in the order its sessions were first seen).
    pub fn finish(&mut self, observer: &mut dyn Observer) -> Summary {
        let mut total = Summary::default();
        for e in &mut self.entries {
            total.merge(e.tracker.finish(observer));
        }
        total
    }

    /// The counts so far.
    pub fn summary(&self) -> Summary {
        let mut total = Summary::default();
        for e in &self.entries {
            total.merge(e.tracker.summary());
        }
        total
    }

    /// The message counts and bytes of each protocol that has any, by message
    /// type: a capture that mixes protocols keeps their same-named types
    /// apart. Evicted sessions count.
    pub fn messages_by_protocol(&self) -> Vec<ProtocolMessages> {
        self.entries
            .iter()
            .map(|e| ProtocolMessages::of(e.tracker.info(), e.tracker.summary()))
            .filter(|m| !m.counts.is_empty())
            .collect()
    }

    /// The protocols of the engine, in the order it tries them.
    pub fn protocols(&self) -> impl Iterator<Item = &'static ProtocolInfo> + '_ {
        self.entries.iter().map(|e| e.tracker.info())
    }

    /// The counts of the sessions `keep` takes (evicted ones left out), and
    /// their messages by protocol: a report restricted to some sessions.
    pub fn summary_of(&self, keep: &dyn Fn(SessionId) -> bool) -> (Summary, Vec<ProtocolMessages>) {
        let mut total = Summary::default();
        let mut by_protocol = Vec::new();
        for e in &self.entries {
            let s = e.tracker.summary_of(keep);
            if !s.messages.is_empty() {
                by_protocol.push(ProtocolMessages::of(e.tracker.info(), s.clone()));
            }
            total.merge(s);
        }
        (total, by_protocol)
    }

    /// Every session kept, in the order they were first seen.
    pub fn for_each_session(&self, mut f: impl FnMut(SessionRef<'_>)) {
        if let [only] = self.entries.as_slice() {
            return only.tracker.for_each_session(&mut f);
        }
        let mut all = Vec::new();
        for e in &self.entries {
            e.tracker.for_each_session(&mut |s| all.push(s.id));
        }
        all.sort_unstable();
        for id in all {
            if let Some(s) = self.session(id) {
                f(s);
            }
        }
    }

    pub fn session(&self, id: SessionId) -> Option<SessionRef<'_>> {
        self.entries.iter().find_map(|e| e.tracker.session(id))
    }

    /// The session the datagram belongs to, if the protocol that takes it
    /// already keeps one for it (a lookup, as cheap as the analysis's own).
    pub fn session_for(&self, d: &Datagram<'_>) -> Option<SessionRef<'_>> {
        let (i, _) = self.recognise(d)?;
        self.entries.get(i)?.tracker.session_for(d)
    }

    pub fn session_count(&self) -> usize {
        self.entries.iter().map(|e| e.tracker.session_count()).sum()
    }

    pub fn evicted_sessions(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| e.tracker.evicted_sessions())
            .sum()
    }
}
