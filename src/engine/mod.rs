//! The engine: one generic session table and drive loop for every protocol, the
//! shared reliability core, and the registered findings.
//!
//! A protocol plugs in with an [`Analyzer`] (what a session is, the rules per
//! packet) and its registered data, a [`ProtocolInfo`] (message types, its own
//! finding kinds and rules, malformed reasons). The engine owns what is the same
//! for all: the session table keyed by the address pair, eviction of idle
//! sessions past [`TrackerConfig::max_sessions`] (their counts still go into the
//! totals), timeouts, counters per direction sized from the registry, the
//! duplicate window, the cumulative-ack sequence window ([`seq`]), and the
//! findings' plumbing to every [`Observer`].
//!
//! Each protocol's contract (the exact definition of its findings) is in its
//! analysis module's docs, e.g. `proto::lwar::analysis`.

pub mod finding;
pub mod loss;
pub mod reassembly;
pub mod seq;
pub mod serial;
pub mod session;
pub mod summary;
mod tracker;

pub use finding::{
    Detail, DetailFormat, Direction, Finding, FindingKind, Group, KindDef, MAX_KINDS, MAX_RULES,
    ProtoDetail, Rule, RuleDef, SessionId, Severity,
};
pub use loss::{Cadence, LossEstimate};
pub use session::{DirState, MAX_MALFORMED, MAX_MESSAGE_TYPES, Player, ProtoSession, Session};
pub use summary::{Counts, DirectionSummary, SessionSummary, Summary};
pub use tracker::{Flow, MissedCounts, Observer, PacketEvent, Raise, Tracker, TrackerConfig};

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
    /// The protocol's own finding kinds (slots `16..MAX_KINDS`), beside
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
    pub dissector: &'static dyn crate::proto::dissect::Dissector,
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
    const INFO: &'static ProtocolInfo;
    /// Silence from a peer, in capture time, after which a session times out.
    const TIMEOUT_NS: u64;

    fn new(config: &TrackerConfig) -> Self;

    /// For a new session: whether the first datagram's source is the server.
    fn src_is_server(&self, d: &Datagram<'_>) -> bool;

    /// Whether `d`, of the address pair of `session`, starts a new session
    /// instead (a reconnect from the same ports: Wireshark's "port numbers
    /// reused"). The old session ends there; its gaps are reported.
    fn restarts(&self, _session: &Session<Self::Session>, _d: &Datagram<'_>) -> bool {
        false
    }

    /// A session ends: at the end of the capture, when it is evicted, or when a
    /// new session takes its address pair. What the protocol still holds for it
    /// (messages in progress, blocks never acknowledged) is reported through
    /// `raise` (its frame is 0 and its time the capture's latest; a protocol
    /// sets `raise.direction` for each finding). Nothing by default.
    fn end_session(&mut self, _session: &mut Session<Self::Session>, _raise: &mut Raise<'_>) {}

    /// Analyses one datagram of `session` (its packet and byte counts are
    /// already taken); findings go to `raise`.
    fn packet(
        &mut self,
        session: &mut Session<Self::Session>,
        raise: &mut Raise<'_>,
        d: &Datagram<'_>,
    );
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
    pub c2s: &'a DirState,
    pub s2c: &'a DirState,
    proto: &'a dyn ProtoSessionDyn,
}

impl<'a> SessionRef<'a> {
    /// The client's own player, where the protocol has one.
    pub fn player(&self) -> Option<Player> {
        self.proto.player()
    }

    pub fn dir(&self, d: Direction) -> &'a DirState {
        match d {
            Direction::ClientToServer => self.c2s,
            Direction::ServerToClient => self.s2c,
        }
    }

    /// Seconds from the first to the last packet either way.
    pub fn duration_secs(&self) -> f64 {
        let first = match (self.c2s.first_ts, self.s2c.first_ts) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return 0.0,
        };
        self.c2s.last_ts.max(self.s2c.last_ts).since(first) as f64 / 1e9
    }
}

/// [`ProtoSession`] as a trait object.
trait ProtoSessionDyn: std::fmt::Debug {
    fn player(&self) -> Option<Player>;
}

impl<S: ProtoSession> ProtoSessionDyn for S {
    fn player(&self) -> Option<Player> {
        ProtoSession::player(self)
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
            c2s: &self.c2s,
            s2c: &self.s2c,
            proto: &self.proto,
        }
    }
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
    ) -> Flow;
    fn finish(&mut self, observer: &mut dyn Observer) -> Summary;
    fn summary(&self) -> Summary;
    /// The sessions kept, in the order they were first seen.
    fn for_each_session(&self, f: &mut dyn FnMut(SessionRef<'_>));
    fn session(&self, id: SessionId) -> Option<SessionRef<'_>>;
    fn session_count(&self) -> usize;
    fn evicted_sessions(&self) -> u64;
}

impl<A: Analyzer> ProtocolTracker for Tracker<A> {
    fn info(&self) -> &'static ProtocolInfo {
        A::INFO
    }
    fn observe(
        &mut self,
        d: &Datagram<'_>,
        observer: &mut dyn Observer,
        next_id: &mut SessionId,
    ) -> Flow {
        self.observe_numbered(d, observer, next_id)
    }
    fn finish(&mut self, observer: &mut dyn Observer) -> Summary {
        Tracker::finish(self, observer)
    }
    fn summary(&self) -> Summary {
        Tracker::summary(self)
    }
    fn for_each_session(&self, f: &mut dyn FnMut(SessionRef<'_>)) {
        for (_, s) in self.sessions() {
            f(s.as_ref_with(A::INFO));
        }
    }
    fn session(&self, id: SessionId) -> Option<SessionRef<'_>> {
        Tracker::session(self, id).map(|s| s.as_ref_with(A::INFO))
    }
    fn session_count(&self) -> usize {
        Tracker::session_count(self)
    }
    fn evicted_sessions(&self) -> u64 {
        Tracker::evicted_sessions(self)
    }
}

/// A protocol the engine can serve: how to recognise its datagrams, and its
/// tracker. The registry (`proto`) makes these.
pub struct Entry {
    /// True for a datagram of this protocol (its magic, its appId).
    pub probe: fn(&[u8]) -> bool,
    pub tracker: Box<dyn ProtocolTracker>,
}

/// The engine of a capture: every registered protocol's tracker, each datagram
/// handed to the first protocol that recognises it. Session ids are shared, in
/// the order sessions were first seen, whatever their protocol.
pub struct Engine {
    entries: Vec<Entry>,
    next_id: SessionId,
}

impl Engine {
    pub fn new(entries: Vec<Entry>) -> Self {
        Engine {
            entries,
            next_id: 0,
        }
    }

    /// Analyses one datagram: what the observer wants next, or `None` when no
    /// protocol recognises the datagram.
    pub fn observe(&mut self, d: &Datagram<'_>, observer: &mut dyn Observer) -> Option<Flow> {
        let e = self.entries.iter_mut().find(|e| (e.probe)(d.payload))?;
        Some(e.tracker.observe(d, observer, &mut self.next_id))
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
