//! One protocol's sessions: the table, eviction, timeouts and the drive loop,
//! generic over the protocol's [`Analyzer`].

use super::finding::{Detail, Direction, Finding, FindingKind, Rule, SessionId};
use super::missed::MissedCounts;
use super::session::{AckTally, DirState, ProtoSession, Session};
use super::summary::{DirectionSummary, EvictedTotals, SessionSummary, Summary};
use super::{Analyzer, ProtocolInfo, RecognisedBy};
use crate::capture::{Datagram, Timestamp};
use std::net::SocketAddr;

/// What an observer wants after a packet: more, or nothing more (its output
/// failed, or it has all it needs). The drive loop stops on `Stop`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

impl Flow {
    /// `Stop` if either says so.
    pub fn and(self, other: Flow) -> Flow {
        if self == Flow::Stop || other == Flow::Stop {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

/// Where the engine and its consumers meet: printers, JSON writers, the check
/// gate and the terminal UI all implement this, and see the same events.
pub trait Observer {
    /// One packet, after the engine has analysed it; `event.findings` are the
    /// findings it raised (also passed to [`Observer::finding`] first). Returning
    /// [`Flow::Stop`] ends the run (the results so far are still finished).
    fn packet(&mut self, _event: &PacketEvent<'_>) -> Flow {
        Flow::Continue
    }
    /// One finding, as it is raised (end-of-capture findings come from
    /// [`Tracker::finish`]).
    fn finding(&mut self, _finding: &Finding) {}
}

impl Observer for () {}

/// One analysed packet.
#[derive(Debug, Clone, Copy)]
pub struct PacketEvent<'a> {
    pub datagram: &'a Datagram<'a>,
    /// The protocol that recognised it.
    pub protocol: &'static ProtocolInfo,
    pub session: SessionId,
    pub direction: Direction,
    pub findings: &'a [Finding],
    /// Ack delays this packet measured, by the direction whose reliable
    /// messages it acked ([`Direction::index`]): usually the reverse of its own.
    pub acks: [AckTally; 2],
    /// The same delays one by one, in ns.
    pub ack_samples: [&'a [u64]; 2],
    /// Reliable messages this packet sent again after an ack could have come
    /// back (what the protocol counts as its resends).
    pub resends: u32,
    /// The dissector to read it with, where its session reads its packets
    /// otherwise than the protocol's registered dissector (Battlegrounds'
    /// byte order per session); `None`: `protocol.dissector`.
    pub dissector: Option<&'static dyn super::dissect::Dissector>,
}

impl PacketEvent<'_> {
    /// The dissector that reads this packet as its session does.
    pub fn dissector(&self) -> &'static dyn super::dissect::Dissector {
        self.dissector.unwrap_or(self.protocol.dissector)
    }

    /// The packet, or part of it, could not be decoded.
    pub fn is_malformed(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.kind == FindingKind::MALFORMED || f.kind == FindingKind::TRUNCATED)
    }
}

/// Limits that keep the engine's memory bounded.
#[derive(Debug, Clone, Copy)]
pub struct TrackerConfig {
    /// Sessions kept at once; past it, the longest idle session is evicted (its
    /// counts still go into the totals).
    pub max_sessions: usize,
    /// Servers whose player count is followed.
    pub max_servers: usize,
    /// Protocol preferences the user set (`-o name:value`, tshark's form),
    /// each checked against the registered ones.
    pub preferences: &'static [Preference],
}

/// A protocol preference set by the user (`-o bg.byte_order:le`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preference {
    /// The registered name (`bg.byte_order`).
    pub name: &'static str,
    /// One of its registered values.
    pub value: &'static str,
}

impl TrackerConfig {
    /// The value the user set for a preference, if any (the last one wins).
    pub fn preference(&self, name: &str) -> Option<&'static str> {
        self.preferences
            .iter()
            .rev()
            .find(|p| p.name == name)
            .map(|p| p.value)
    }
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig {
            max_sessions: 1024,
            max_servers: 256,
            preferences: &[],
        }
    }
}

/// Counters of sessions that were evicted, so the totals stay exact, and the
/// worst of their directions for the metrics a gate takes the worst of.
#[derive(Debug, Default)]
struct Evicted {
    sessions: u64,
    c2s: DirState,
    s2c: DirState,
    worst: EvictedTotals,
}

pub(crate) fn add_into(total: &mut DirState, d: &DirState) {
    fn add<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
        for (x, y) in a.iter_mut().zip(b) {
            *x += y;
        }
    }
    total.packets += d.packets;
    total.bytes += d.bytes;
    add(&mut total.messages, &d.messages);
    add(&mut total.message_bytes, &d.message_bytes);
    add(&mut total.findings, &d.findings);
    add(&mut total.violations, &d.violations);
    add(&mut total.malformed, &d.malformed);
    total.first_sends += d.first_sends;
    total.resends += d.resends;
    total.repeats += d.repeats;
    total.expected_repeats += d.expected_repeats;
}

/// Where the findings of the packet being analysed go, with the counters of the
/// direction they concern.
pub struct Raise<'a> {
    pub(crate) out: &'a mut Vec<Finding>,
    pub frame: u64,
    pub ts: Timestamp,
    pub session: SessionId,
    pub direction: Direction,
}

impl Raise<'_> {
    /// Counts a finding in `dir` and hands it on.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        dir: &mut DirState,
        kind: FindingKind,
        rule: Option<Rule>,
        (frame, ts): (u64, Timestamp),
        seqno: Option<u32>,
        detail: Detail,
    ) {
        dir.findings[kind.ordinal()] += 1;
        if let Some(rule) = rule {
            dir.violations[rule.ordinal()] += 1;
        }
        self.out.push(Finding {
            kind,
            rule,
            frame,
            ts,
            session: self.session,
            direction: self.direction,
            seqno,
            detail,
        });
    }

    /// Raises a finding and counts it in `dir`.
    pub fn raise(
        &mut self,
        dir: &mut DirState,
        kind: FindingKind,
        rule: Option<Rule>,
        seqno: Option<u32>,
        detail: Detail,
    ) {
        let at = (self.frame, self.ts);
        self.push(dir, kind, rule, at, seqno, detail);
    }

    /// Raises a finding of an earlier packet (an incident that began there).
    pub fn raise_at(
        &mut self,
        dir: &mut DirState,
        kind: FindingKind,
        frame: u64,
        ts: Timestamp,
        detail: Detail,
    ) {
        self.push(dir, kind, None, (frame, ts), None, detail);
    }

    /// Raises `kind` (a `violation` of `rule`, with one) for a run of
    /// messages that began in an earlier packet ([`super::RunSpan`]), at its
    /// first message.
    pub fn raise_run(
        &mut self,
        dir: &mut DirState,
        kind: FindingKind,
        rule: Option<Rule>,
        run: &super::RunSpan,
        detail: Detail,
    ) {
        self.push(dir, kind, rule, (run.frame, run.ts), run.seqno, detail);
    }

    /// Raises a `violation` of `rule` for a run of messages that began in an
    /// earlier packet ([`super::RunSpan`]), at its first message.
    pub fn violation_at(
        &mut self,
        dir: &mut DirState,
        rule: Rule,
        run: &super::RunSpan,
        detail: Detail,
    ) {
        self.raise_run(dir, FindingKind::VIOLATION, Some(rule), run, detail);
    }

    /// Raises a `violation` of `rule`.
    pub fn violation(
        &mut self,
        dir: &mut DirState,
        rule: Rule,
        seqno: Option<u32>,
        detail: Detail,
    ) {
        self.raise(dir, FindingKind::VIOLATION, Some(rule), seqno, detail);
    }

    /// A payload that does not decode: `truncated` when the capture cut it short
    /// and `at_cut` (the error is where the cut is), `malformed` otherwise,
    /// counted under the protocol's reason ordinal `reason`.
    pub fn undecodable(
        &mut self,
        dir: &mut DirState,
        d: &Datagram<'_>,
        at_cut: bool,
        reason: usize,
        error: super::ProtoDetail,
    ) {
        let kind = if d.truncated_by_capture() && at_cut {
            FindingKind::TRUNCATED
        } else {
            dir.malformed[reason] += 1;
            FindingKind::MALFORMED
        };
        let detail = Detail::Decode {
            error,
            captured: d.payload.len(),
            len: d.payload_len,
        };
        self.raise(dir, kind, None, None, detail);
    }
}

/// Follows every session of one protocol in a capture. Feed it datagrams in
/// capture order with [`Tracker::observe`], then call [`Tracker::finish`].
#[derive(Debug)]
pub struct Tracker<A: Analyzer> {
    config: TrackerConfig,
    analyzer: A,
    sessions: Vec<Session<A::Session>>,
    /// Each session's last packet time ([`Session::last_seen`]), side by side:
    /// picking the one to evict scans this, not the sessions themselves.
    seen: Vec<Timestamp>,
    /// Sessions by address pair and the analyzer's session key.
    index: super::wire_map::WireMap<FlowKey, usize>,
    /// The sessions and directions of recent IPv4 flows, found without
    /// hashing into `index`.
    flows: FlowCache,
    next_id: SessionId,
    evicted: Evicted,
    scratch: Vec<Finding>,
    /// The ack delays the packet being analysed measured, by the direction
    /// whose messages it acked ([`PacketEvent::ack_samples`]).
    ack_samples: [Vec<u64>; 2],
    now: Timestamp,
    last_sweep: Timestamp,
}

impl<A: super::NewAnalyzer> Default for Tracker<A> {
    fn default() -> Self {
        Self::new(TrackerConfig::default())
    }
}

impl<A: super::NewAnalyzer> Tracker<A> {
    pub fn new(config: TrackerConfig) -> Self {
        Self::with_analyzer(config, A::new(&config))
    }
}

impl<A: Analyzer> Tracker<A> {
    /// A tracker driving `analyzer` (a protocol whose analyzer carries data: a
    /// described one).
    pub fn with_analyzer(config: TrackerConfig, analyzer: A) -> Self {
        Tracker {
            config,
            analyzer,
            sessions: Vec::new(),
            seen: Vec::new(),
            index: super::wire_map::wire_map(),
            flows: FlowCache::default(),
            next_id: 0,
            evicted: Evicted::default(),
            scratch: Vec::with_capacity(64),
            ack_samples: [Vec::new(), Vec::new()],
            now: Timestamp::default(),
            last_sweep: Timestamp::default(),
        }
    }

    /// The protocol's analyzer.
    pub fn analyzer(&self) -> &A {
        &self.analyzer
    }

    /// The sessions currently kept, in the order they were first seen.
    pub fn sessions(&self) -> impl Iterator<Item = (SessionId, &Session<A::Session>)> {
        let mut order: Vec<usize> = (0..self.sessions.len()).collect();
        order.sort_by_key(|&i| self.sessions[i].id);
        order
            .into_iter()
            .map(|i| (self.sessions[i].id, &self.sessions[i]))
    }

    /// How many sessions are kept.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// A session by id, if it is still kept.
    pub fn session(&self, id: SessionId) -> Option<&Session<A::Session>> {
        self.sessions.iter().find(|s| s.id == id)
    }

    /// Sessions evicted to keep memory bounded.
    pub fn evicted_sessions(&self) -> u64 {
        self.evicted.sessions
    }

    /// Whether a session is kept for the datagram's address pair. Asked of
    /// every datagram a protocol recognised by its flow may take: the flow
    /// cache first (a cached flow is in the index: every change to the
    /// index forgets the cache), the index only when it misses.
    pub fn has_flow(&self, d: &Datagram<'_>) -> bool {
        if self.index.is_empty() {
            return false;
        }
        let key = self.analyzer.session_key(d);
        self.flows.get((&d.src, &d.dst), key).is_some() || self.index.contains_key(&self.key(d))
    }

    /// The session kept for the datagram's address pair (and session key).
    pub fn session_for(&self, d: &Datagram<'_>) -> Option<&Session<A::Session>> {
        if self.index.is_empty() {
            return None;
        }
        self.sessions.get(*self.index.get(&self.key(d))?)
    }

    /// The capture time of the latest datagram.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Analyses one datagram of this protocol and tells `observer` about it.
    pub fn observe<O: Observer + ?Sized>(&mut self, d: &Datagram<'_>, observer: &mut O) -> Flow {
        let mut next_id = self.next_id;
        let flow = self.observe_numbered(d, observer, &mut next_id, RecognisedBy::Probe);
        self.next_id = next_id;
        flow
    }

    /// [`Tracker::observe`], new sessions numbered from `next_id`.
    pub(crate) fn observe_numbered<O: Observer + ?Sized>(
        &mut self,
        d: &Datagram<'_>,
        observer: &mut O,
        next_id: &mut SessionId,
        by: RecognisedBy,
    ) -> Flow {
        self.scratch.clear();
        self.now = self.now.max(d.ts);
        let (slot, direction) = match self.cached_flow(d) {
            Some(hit) => hit,
            None => self.new_flow(d, observer, next_id, by),
        };
        let session = &mut self.sessions[slot];
        let id = session.id;
        let mut raise = Raise {
            out: &mut self.scratch,
            frame: d.frame,
            ts: d.ts,
            session: id,
            direction,
        };
        session.dir_mut(direction).count_packet(d.ts, d.payload_len);
        if let Some((previous_frame, step_ns)) = session.clock(d.ts, d.frame) {
            let this = session.dir_mut(direction);
            let detail = Detail::Backwards {
                previous_frame,
                step_ns,
            };
            raise.raise(this, FindingKind::TIME_BACKWARDS, None, None, detail);
        }
        if let Some(seen) = self.seen.get_mut(slot) {
            *seen = session.last_seen();
        }
        let resends_before = session.dir_mut(direction).resends;
        self.analyzer.packet(session, &mut raise, d);
        let dissector = self.analyzer.dissector(session);
        if d.truncated_by_capture() {
            cut_by_capture(session.dir_mut(direction), &mut raise, d);
        }
        let resends = session
            .dir_mut(direction)
            .resends
            .saturating_sub(resends_before);
        let [c2s_samples, s2c_samples] = &mut self.ack_samples;
        c2s_samples.clear();
        s2c_samples.clear();
        let acks = [
            session
                .dir_mut(Direction::ClientToServer)
                .take_packet_acks(c2s_samples),
            session
                .dir_mut(Direction::ServerToClient)
                .take_packet_acks(s2c_samples),
        ];

        if self.now.since(self.last_sweep) >= 1_000_000_000 {
            self.last_sweep = self.now;
            self.sweep_timeouts();
        }
        for f in &self.scratch {
            observer.finding(f);
        }
        observer.packet(&PacketEvent {
            datagram: d,
            protocol: self.analyzer.info(),
            session: id,
            direction,
            findings: &self.scratch,
            acks,
            ack_samples: [&self.ack_samples[0], &self.ack_samples[1]],
            resends: u32::try_from(resends).unwrap_or(u32::MAX),
            dissector,
        })
    }

    /// The session and direction of a datagram whose flow is not in the
    /// flow cache: found or opened (telling `observer` the findings of a
    /// session evicted for it), then cached.
    #[cold]
    fn new_flow<O: Observer + ?Sized>(
        &mut self,
        d: &Datagram<'_>,
        observer: &mut O,
        next_id: &mut SessionId,
        by: RecognisedBy,
    ) -> (usize, Direction) {
        let slot = self.session_slot(d, next_id, by);
        // The findings of an evicted session, not of this packet.
        for f in self.scratch.drain(..) {
            observer.finding(&f);
        }
        let direction = if d.src == self.sessions[slot].client {
            Direction::ClientToServer
        } else {
            Direction::ServerToClient
        };
        let key = self.analyzer.session_key(d);
        self.flows.keep((&d.src, &d.dst), key, slot, direction);
        (slot, direction)
    }

    /// Ends the capture: silent sessions time out, and the seqnos that gaps
    /// skipped and nobody sent since are reported `lost`.
    pub fn finish<O: Observer + ?Sized>(&mut self, observer: &mut O) -> Summary {
        self.scratch.clear();
        self.sweep_timeouts();
        let mut order: Vec<usize> = (0..self.sessions.len()).collect();
        order.sort_by_key(|&i| self.sessions[i].id);
        for i in order {
            let session = &mut self.sessions[i];
            end_session(&mut self.analyzer, session, self.now, &mut self.scratch);
            report_lost(session, self.now, &mut self.scratch);
        }
        for f in &self.scratch {
            observer.finding(f);
        }
        self.scratch.clear();
        self.summary()
    }

    /// The counts so far.
    pub fn summary(&self) -> Summary {
        self.summary_of(None)
    }

    /// The counts of the sessions `keep` takes (every session, evicted ones
    /// included, for `None`): a report restricted to some sessions.
    pub fn summary_of(&self, keep: Option<&dyn Fn(SessionId) -> bool>) -> Summary {
        let mut c2s = DirState::default();
        let mut s2c = DirState::default();
        let all = keep.is_none();
        if all {
            add_into(&mut c2s, &self.evicted.c2s);
            add_into(&mut s2c, &self.evicted.s2c);
        }
        let info = self.analyzer.info();
        let mut sessions = Vec::with_capacity(self.sessions.len());
        for (_, s) in self.sessions() {
            if keep.is_some_and(|keep| !keep(s.id)) {
                continue;
            }
            add_into(&mut c2s, &s.c2s);
            add_into(&mut s2c, &s.s2c);
            sessions.push(SessionSummary {
                client: s.client.to_string(),
                server: s.server.to_string(),
                state: s.proto.state().to_owned(),
                c2s: s.c2s.summary(info),
                s2c: s.s2c.summary(info),
            });
        }
        add_into(&mut c2s, &s2c);
        let message_bytes = c2s.message_byte_counts(info);
        let DirectionSummary {
            messages,
            findings,
            violations,
            malformed,
            ..
        } = c2s.summary(info);
        let e = &self.evicted;
        let evicted = (all && e.sessions > 0).then(|| EvictedTotals {
            sessions: e.sessions,
            packets: e.c2s.packets + e.s2c.packets,
            first_sends: e.c2s.first_sends + e.s2c.first_sends,
            repeats: e.c2s.repeats + e.s2c.repeats,
            resends: e.c2s.resends + e.s2c.resends,
            ..e.worst
        });
        Summary {
            messages,
            message_bytes,
            findings,
            violations,
            malformed,
            sessions,
            evicted,
        }
    }

    fn sweep_timeouts(&mut self) {
        let now = self.now;
        let timeout = self.analyzer.timeout_ns();
        for s in &mut self.sessions {
            if s.proto.is_final() {
                continue;
            }
            let silent = |d: &DirState| d.packets > 0 && now.since(d.last_ts) > timeout;
            if silent(&s.c2s) || silent(&s.s2c) {
                s.proto.time_out();
            }
        }
    }

    /// Finds or creates the session of a datagram, the analyzer deciding which
    /// side is the server.
    fn session_slot(
        &mut self,
        d: &Datagram<'_>,
        next_id: &mut SessionId,
        by: RecognisedBy,
    ) -> usize {
        let key = self.key(d);
        let superseded = match self.index.get(&key) {
            Some(&slot) if self.analyzer.restarts(&self.sessions[slot], d) => Some(slot),
            Some(&slot) => return slot,
            None => None,
        };
        // A new session: the flows cached so far may name the one it
        // supersedes or evicts.
        self.flows.forget_all();
        if let Some(old) = superseded {
            // A new session on the same ports: nothing can fill the old one's gaps.
            let session = &mut self.sessions[old];
            end_session(&mut self.analyzer, session, self.now, &mut self.scratch);
            report_lost(session, self.now, &mut self.scratch);
        }
        let (client, server) = if self.analyzer.src_is_server(d) {
            (d.dst, d.src)
        } else {
            (d.src, d.dst)
        };
        let mut session = Session::new(*next_id, client, server);
        session.recognised_by = by;
        session.key = key.key;
        *next_id += 1;
        let slot = if self.sessions.len() < self.config.max_sessions.max(1) {
            self.sessions.push(session);
            self.seen.push(Timestamp::default());
            self.sessions.len() - 1
        } else {
            // The longest idle, the first of equals: as a scan of the sessions
            // would pick it, over a compact array.
            let slot = self
                .seen
                .iter()
                .enumerate()
                .min_by_key(|&(_, t)| *t)
                .map_or(0, |(i, _)| i);
            if let Some(seen) = self.seen.get_mut(slot) {
                *seen = Timestamp::default();
            }
            std::mem::swap(&mut self.sessions[slot], &mut session);
            let mut old = session;
            let old_key = if old.client <= old.server {
                FlowKey::new(old.client, old.server, old.key)
            } else {
                FlowKey::new(old.server, old.client, old.key)
            };
            // A superseded session no longer owns its key.
            if self.index.get(&old_key) == Some(&slot) {
                self.index.remove(&old_key);
            }
            // Nothing can fill its gaps any more: they are lost now.
            end_session(&mut self.analyzer, &mut old, self.now, &mut self.scratch);
            report_lost(&mut old, self.now, &mut self.scratch);
            self.evicted.sessions += 1;
            add_into(&mut self.evicted.c2s, &old.c2s);
            add_into(&mut self.evicted.s2c, &old.s2c);
            self.evicted.worst.fold_direction(&old.c2s);
            self.evicted.worst.fold_direction(&old.s2c);
            slot
        };
        self.index.insert(key, slot);
        slot
    }
}

impl<A: Analyzer> Tracker<A> {
    /// A datagram's session key: its address pair, the same both ways, and
    /// the analyzer's key (0 for protocols whose session is the pair).
    fn key(&self, d: &Datagram<'_>) -> FlowKey {
        let (a, b) = flow_key(d);
        FlowKey::new(a, b, self.analyzer.session_key(d))
    }

    /// The session slot and direction of a datagram whose flow is cached and
    /// whose packet does not begin a new session ([`Analyzer::restarts`]):
    /// what [`Tracker::session_slot`] would find, without the index.
    #[inline]
    fn cached_flow(&self, d: &Datagram<'_>) -> Option<(usize, Direction)> {
        let key = self.analyzer.session_key(d);
        let (slot, direction) = self.flows.get((&d.src, &d.dst), key)?;
        let session = self.sessions.get(slot)?;
        if self.analyzer.restarts(session, d) {
            return None;
        }
        Some((slot, direction))
    }
}

/// Places in the [`FlowCache`].
const FLOW_CACHE: usize = 256;

/// The session slots of recent directed IPv4 address pairs (with the
/// analyzer's session key), and the direction each pair is in that session:
/// a packet of a flow seen before finds both by comparing four words, rather
/// than by hashing its key into the index and comparing socket addresses.
/// Two-way set-associative (a flow may be in either place of its set, the
/// one it took last first): a flow that two others pushed out of its set
/// (by chance, or because a crafted capture made them collide) is found
/// through the index as before and takes its place back, so a collision
/// costs one index lookup and never a scan. Every entry belongs to one `epoch`, and each new session starts a
/// new one: a new session may supersede or evict the session a cached pair
/// had, and no entry outlives the index mapping it copied.
#[derive(Debug)]
struct FlowCache {
    entries: Box<[CachedFlow; FLOW_CACHE]>,
    epoch: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct CachedFlow {
    src: u64,
    dst: u64,
    key: u64,
    /// 0: never set.
    epoch: u64,
    slot: u32,
    c2s: bool,
}

impl Default for FlowCache {
    fn default() -> Self {
        FlowCache {
            entries: Box::new([CachedFlow::default(); FLOW_CACHE]),
            epoch: 1,
        }
    }
}

impl FlowCache {
    /// An IPv4 address and port as one word; `None` for IPv6 (not cached).
    #[inline]
    fn word(a: &SocketAddr) -> Option<u64> {
        match a {
            SocketAddr::V4(v4) => Some((u64::from(v4.ip().to_bits()) << 16) | u64::from(v4.port())),
            SocketAddr::V6(_) => None,
        }
    }

    /// The first of the two places a flow may take (the set's).
    #[inline]
    fn set(src: u64, dst: u64, key: u64) -> usize {
        let h =
            (src ^ dst.rotate_left(24) ^ key.rotate_left(48)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> (64 - (FLOW_CACHE / 2).trailing_zeros())) as usize) * 2
    }

    /// Whether entry `e` is the flow's, of this epoch.
    #[inline]
    fn holds(&self, e: &CachedFlow, src: u64, dst: u64, key: u64) -> bool {
        e.epoch == self.epoch && e.src == src && e.dst == dst && e.key == key
    }

    /// The cached slot and direction of the datagram's flow.
    #[inline]
    fn get(&self, (src, dst): (&SocketAddr, &SocketAddr), key: u64) -> Option<(usize, Direction)> {
        let (src, dst) = (Self::word(src)?, Self::word(dst)?);
        let set = Self::set(src, dst, key);
        let e = [self.entries.get(set)?, self.entries.get(set + 1)?]
            .into_iter()
            .find(|e| self.holds(e, src, dst, key))?;
        let direction = if e.c2s {
            Direction::ClientToServer
        } else {
            Direction::ServerToClient
        };
        Some((e.slot as usize, direction))
    }

    /// Remembers the session slot and direction of the datagram's flow.
    fn keep(
        &mut self,
        (src, dst): (&SocketAddr, &SocketAddr),
        key: u64,
        slot: usize,
        direction: Direction,
    ) {
        let (Some(src), Some(dst), Ok(slot)) =
            (Self::word(src), Self::word(dst), u32::try_from(slot))
        else {
            return;
        };
        let set = Self::set(src, dst, key);
        let Some(&first) = self.entries.get(set) else {
            return;
        };
        // Two-way: kept only after a miss, so the flow is in neither place.
        // It goes first, and a live entry there moves second (displacing the
        // older one): two flows that share a set are both kept.
        if first.epoch == self.epoch
            && let Some(second) = self.entries.get_mut(set + 1)
        {
            *second = first;
        }
        self.entries[set] = CachedFlow {
            src,
            dst,
            key,
            epoch: self.epoch,
            slot,
            c2s: direction == Direction::ClientToServer,
        };
    }

    /// Forgets every entry (a new session may change what they map).
    fn forget_all(&mut self) {
        self.epoch += 1;
    }
}

/// A session's key in the index: its address pair (lower first) and the
/// analyzer's key. Hashed as two words: the derived hash of the tuple fed
/// the hasher each address's variant, octets, length and port one by one,
/// which was half of the index lookup done for every packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FlowKey {
    a: SocketAddr,
    b: SocketAddr,
    key: u64,
}

impl FlowKey {
    fn new(a: SocketAddr, b: SocketAddr, key: u64) -> Self {
        FlowKey { a, b, key }
    }
}

/// Each address goes to the hasher whole: folding an IPv6 address to one word
/// first would let a sender pick addresses that fold alike (the halves
/// cancelling in an xor) and collide under any seed. An IPv4 address and its
/// port go as one word.
impl std::hash::Hash for FlowKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        fn put<H: std::hash::Hasher>(a: &SocketAddr, h: &mut H) {
            match a {
                SocketAddr::V4(v4) => {
                    h.write_u64((u64::from(v4.ip().to_bits()) << 16) | u64::from(v4.port()))
                }
                SocketAddr::V6(v6) => {
                    h.write_u128(v6.ip().to_bits());
                    h.write_u16(v6.port());
                }
            }
        }
        put(&self.a, h);
        put(&self.b, h);
        h.write_u64(self.key);
    }
}

/// A datagram's address pair, the same both ways.
fn flow_key(d: &Datagram<'_>) -> (SocketAddr, SocketAddr) {
    if d.src <= d.dst {
        (d.src, d.dst)
    } else {
        (d.dst, d.src)
    }
}

/// The protocol's findings at the end of a session ([`Analyzer::end`]).
fn end_session<A: Analyzer>(
    analyzer: &mut A,
    session: &mut Session<A::Session>,
    now: Timestamp,
    out: &mut Vec<Finding>,
) {
    let mut raise = Raise {
        out,
        frame: 0,
        ts: now,
        session: session.id,
        direction: Direction::ClientToServer,
    };
    analyzer.end(session, &mut raise);
}

/// Reports the incidents still open (acks of the unseen, acks below the
/// highest) and judges every seqno a gap skipped and nothing filled: at the
/// end of the capture, or when the session is evicted. `not-captured` when
/// the other side acked it; `lost` when it did not, though the capture went
/// on long enough for its ack to be captured (a packet of the other side
/// captured at least this direction's smoothed ack delay after the gap);
/// otherwise (a gap in the capture's last round trip, or no ack delay
/// measured) a `not-captured` note, "unconfirmed: no ack window reached it
/// after it could have arrived".
fn report_lost<S>(session: &mut Session<S>, now: Timestamp, out: &mut Vec<Finding>) {
    let id = session.id;
    for direction in [Direction::ClientToServer, Direction::ServerToClient] {
        let acker = session.dir(direction.reverse());
        let acker_last = (acker.packets > 0).then_some(acker.last_ts);
        let dir = session.dir_mut(direction);
        let ack_delay = dir.srtt_ns();
        let mut raise = Raise {
            out: &mut *out,
            frame: 0,
            ts: now,
            session: id,
            direction,
        };
        dir.close_ack_incident(&mut raise);
        dir.close_ack_regression(&mut raise);
        let mut counts = MissedCounts::resume(dir);
        dir.seq.drain_missing(|seqno, frame, gap_ts, acked| {
            if acked || super::missed::ack_could_come(gap_ts, ack_delay, acker_last) {
                counts.missed(seqno, frame, acked, now, id, direction, raise.out);
            } else {
                counts.unconfirmed(seqno, frame, now, id, direction, raise.out);
            }
        });
        // The run the protocol's end (or earlier packets) left open.
        counts.close(raise.out);
        counts.add_to(dir, raise.out);
    }
}

/// A datagram the capture cut: one `truncated` for the packet, whether or
/// not its decoder stopped at the cut (a cut on a message boundary decodes
/// cleanly), and its direction's lost tail unknown from now on.
fn cut_by_capture(this: &mut DirState, raise: &mut Raise<'_>, d: &Datagram<'_>) {
    if !raise.out.iter().any(|f| f.kind == FindingKind::TRUNCATED) {
        let detail = Detail::Cut {
            captured: d.payload.len(),
            len: d.payload_len,
        };
        raise.raise(this, FindingKind::TRUNCATED, None, None, detail);
    }
    this.seq.mark_cut();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;
    use std::net::{Ipv6Addr, SocketAddrV6};

    #[test]
    fn the_flow_cache_finds_what_it_kept_until_a_new_session() {
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        let (client, server) = (addr("10.0.0.1:5000"), addr("10.0.0.2:32422"));
        let mut c = FlowCache::default();
        let d = (&client, &server);
        let back = (&server, &client);
        assert_eq!(c.get(d, 0), None);
        c.keep(d, 0, 3, Direction::ClientToServer);
        c.keep(back, 0, 3, Direction::ServerToClient);
        assert_eq!(c.get(d, 0), Some((3, Direction::ClientToServer)));
        assert_eq!(c.get(back, 0), Some((3, Direction::ServerToClient)));
        // Another session key, or another port: not that flow.
        assert_eq!(c.get(d, 1), None);
        assert_eq!(c.get((&addr("10.0.0.1:5001"), &server), 0), None);
        // A new session may have superseded or evicted it: nothing is kept.
        c.forget_all();
        assert_eq!(c.get(d, 0), None);
        assert_eq!(c.get(back, 0), None);
        // Two flows of one set are both kept, the older of three is not.
        let mut c = FlowCache::default();
        let clients: Vec<SocketAddr> = (0..2000u32)
            .map(|i| addr(&format!("10.0.{}.{}:5000", i / 250, i % 250 + 1)))
            .collect();
        let set_of = |a: &SocketAddr| {
            FlowCache::set(
                FlowCache::word(a).unwrap(),
                FlowCache::word(&server).unwrap(),
                0,
            )
        };
        let first = set_of(&clients[0]);
        let same: Vec<&SocketAddr> = clients
            .iter()
            .filter(|a| set_of(a) == first)
            .take(3)
            .collect();
        assert_eq!(same.len(), 3);
        for (i, a) in same.iter().enumerate() {
            c.keep((a, &server), 0, i, Direction::ClientToServer);
        }
        assert_eq!(c.get((same[0], &server), 0), None);
        assert_eq!(
            c.get((same[1], &server), 0),
            Some((1, Direction::ClientToServer))
        );
        assert_eq!(
            c.get((same[2], &server), 0),
            Some((2, Direction::ClientToServer))
        );
        // IPv6 flows are not cached.
        let (a6, b6) = (addr("[2001:db8::1]:5000"), addr("[2001:db8::2]:32422"));
        c.keep((&a6, &b6), 0, 1, Direction::ClientToServer);
        assert_eq!(c.get((&a6, &b6), 0), None);
    }

    #[test]
    fn crafted_ipv6_addresses_hash_apart() {
        // Addresses whose halves cancel when folded to one word (the high
        // half, rotated by 17, equal to the low one): under the old fold every
        // one of these keys hashed alike whatever the seed.
        let server = SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 7777, 0, 0));
        let hasher = super::super::wire_map::wire_map::<FlowKey, usize>();
        let hashes: std::collections::HashSet<u64> = (1u64..=2000)
            .map(|x| {
                let ip = (u128::from(x) << 64) | u128::from(x.rotate_left(17));
                let client = SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from_bits(ip), 5000, 0, 0));
                hasher.hasher().hash_one(FlowKey::new(server, client, 0))
            })
            .collect();
        assert!(
            hashes.len() >= 1990,
            "{} distinct hashes of 2000 keys",
            hashes.len()
        );
    }
}
