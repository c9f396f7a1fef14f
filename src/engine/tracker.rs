//! The tracker proper: datagrams in, findings and session state out.

use super::finding::{Detail, Direction, Finding, FindingKind, Rule, SessionId};
use super::seq::Lookup;
use super::session::{DirState, Player, Session, State};
use super::summary::{DirectionSummary, SessionSummary, Summary};
use crate::capture::{Datagram, Timestamp};
use crate::proto::lwar::wire::{
    DISCONNECT_TIMEOUT_SECS, DecodeError, ErrorKind, Id, MAX_NAME_LEN, MAX_PACKET_SIZE,
    MAX_PLAYERS, Message, MessageType, MessageView, Packet, Sender, Violation,
};
use rustc_hash::FxHashMap;
use std::net::SocketAddr;
use xxhash_rust::xxh3::xxh3_64;

/// Where the tracker and its consumers meet: printers, JSON writers, the check
/// gate and the terminal UI all implement this, and see the same events.
pub trait Observer {
    /// One lwar packet, after the tracker has analysed it; `event.findings` are
    /// the findings it raised (also passed to [`Observer::finding`] first).
    fn packet(&mut self, _event: &PacketEvent<'_>) {}
    /// One finding, as it is raised (end-of-capture findings come from
    /// [`Tracker::finish`]).
    fn finding(&mut self, _finding: &Finding) {}
}

impl Observer for () {}

/// One analysed packet.
#[derive(Debug, Clone, Copy)]
pub struct PacketEvent<'a> {
    pub datagram: &'a Datagram<'a>,
    pub session: SessionId,
    pub direction: Direction,
    /// The checked header view (iterate its messages again at no cost), or why the
    /// payload has no valid header.
    pub decoded: Result<Packet<'a>, DecodeError>,
    pub findings: &'a [Finding],
}

/// Limits that keep the tracker's memory bounded.
#[derive(Debug, Clone, Copy)]
pub struct TrackerConfig {
    /// Sessions kept at once; past it, the longest idle session is evicted (its
    /// counts still go into the totals).
    pub max_sessions: usize,
    /// Servers whose player count is followed.
    pub max_servers: usize,
}

impl Default for TrackerConfig {
    fn default() -> Self {
        TrackerConfig {
            max_sessions: 1024,
            max_servers: 256,
        }
    }
}

/// Counters of sessions that were evicted, so the totals stay exact.
#[derive(Debug, Default)]
struct Evicted {
    sessions: u64,
    c2s: DirState,
    s2c: DirState,
}

fn add_into(total: &mut DirState, d: &DirState) {
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
    total.expected_repeats += d.expected_repeats;
}

/// Follows every session of a capture. Feed it datagrams in capture order with
/// [`Tracker::observe`], then call [`Tracker::finish`].
#[derive(Debug)]
pub struct Tracker {
    config: TrackerConfig,
    sessions: Vec<Session>,
    index: FxHashMap<(SocketAddr, SocketAddr), usize>,
    next_id: SessionId,
    evicted: Evicted,
    /// Player ids each server has announced (Join) and not yet removed (Leave).
    players: FxHashMap<SocketAddr, Vec<Id>>,
    scratch: Vec<Finding>,
    now: Timestamp,
    last_sweep: Timestamp,
}

impl Default for Tracker {
    fn default() -> Self {
        Self::new(TrackerConfig::default())
    }
}

const TIMEOUT_NS: u64 = DISCONNECT_TIMEOUT_SECS * 1_000_000_000;

/// Where findings of the packet being analysed go.
struct Raise<'a> {
    out: &'a mut Vec<Finding>,
    frame: u64,
    ts: Timestamp,
    session: SessionId,
    direction: Direction,
}

impl Raise<'_> {
    fn raise(
        &mut self,
        dir: &mut DirState,
        kind: FindingKind,
        rule: Option<Rule>,
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
            frame: self.frame,
            ts: self.ts,
            session: self.session,
            direction: self.direction,
            seqno,
            detail,
        });
    }

    fn violation(&mut self, dir: &mut DirState, rule: Rule, seqno: Option<u32>, detail: Detail) {
        self.raise(dir, FindingKind::Violation, Some(rule), seqno, detail);
    }

    /// A payload that does not decode: `truncated` when the capture cut it short
    /// and the error is where the cut is, `malformed` otherwise.
    fn undecodable(&mut self, dir: &mut DirState, d: &Datagram<'_>, error: DecodeError) {
        let cut_by_capture = d.truncated_by_capture()
            && matches!(error.kind(), ErrorKind::Truncated | ErrorKind::ShortHeader);
        let kind = if cut_by_capture {
            FindingKind::Truncated
        } else {
            dir.malformed[error.kind() as usize] += 1;
            FindingKind::Malformed
        };
        let detail = Detail::Decode {
            error,
            captured: d.payload.len(),
            len: d.payload_len,
        };
        self.raise(dir, kind, None, None, detail);
    }
}

impl Tracker {
    pub fn new(config: TrackerConfig) -> Self {
        Tracker {
            config,
            sessions: Vec::new(),
            index: FxHashMap::default(),
            next_id: 0,
            evicted: Evicted::default(),
            players: FxHashMap::default(),
            scratch: Vec::with_capacity(64),
            now: Timestamp::default(),
            last_sweep: Timestamp::default(),
        }
    }

    /// The sessions currently kept, in the order they were first seen.
    pub fn sessions(&self) -> impl Iterator<Item = (SessionId, &Session)> {
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
    pub fn session(&self, id: SessionId) -> Option<&Session> {
        self.sessions.iter().find(|s| s.id == id)
    }

    /// Sessions evicted to keep memory bounded.
    pub fn evicted_sessions(&self) -> u64 {
        self.evicted.sessions
    }

    /// The capture time of the latest datagram.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// Analyses one lwar datagram and tells `observer` about it.
    pub fn observe<O: Observer + ?Sized>(&mut self, d: &Datagram<'_>, observer: &mut O) {
        self.scratch.clear();
        self.now = self.now.max(d.ts);
        let decoded = Packet::new_checked(d.payload);
        let slot = self.session_slot(d, decoded.as_ref().ok());
        // The findings of an evicted session, not of this packet.
        for f in self.scratch.drain(..) {
            observer.finding(&f);
        }
        let session = &mut self.sessions[slot];
        let direction = if d.src == session.client {
            Direction::ClientToServer
        } else {
            Direction::ServerToClient
        };
        let id = session.id;
        let mut raise = Raise {
            out: &mut self.scratch,
            frame: d.frame,
            ts: d.ts,
            session: id,
            direction,
        };
        analyse(
            session,
            &mut self.players,
            self.config.max_servers,
            &mut raise,
            d,
            &decoded,
        );

        if self.now.since(self.last_sweep) >= 1_000_000_000 {
            self.last_sweep = self.now;
            self.sweep_timeouts();
        }
        for f in &self.scratch {
            observer.finding(f);
        }
        observer.packet(&PacketEvent {
            datagram: d,
            session: id,
            direction,
            decoded,
            findings: &self.scratch,
        });
    }

    /// Ends the capture: sessions silent for 15 s time out, and the seqnos that
    /// gaps skipped and nobody sent since are reported `lost`.
    pub fn finish<O: Observer + ?Sized>(&mut self, observer: &mut O) -> Summary {
        self.scratch.clear();
        self.sweep_timeouts();
        let mut order: Vec<usize> = (0..self.sessions.len()).collect();
        order.sort_by_key(|&i| self.sessions[i].id);
        for i in order {
            report_lost(&mut self.sessions[i], self.now, &mut self.scratch);
        }
        for f in &self.scratch {
            observer.finding(f);
        }
        self.scratch.clear();
        self.summary()
    }

    /// The counts so far.
    pub fn summary(&self) -> Summary {
        let mut c2s = DirState::default();
        let mut s2c = DirState::default();
        add_into(&mut c2s, &self.evicted.c2s);
        add_into(&mut s2c, &self.evicted.s2c);
        let mut sessions = Vec::with_capacity(self.sessions.len());
        for (_, s) in self.sessions() {
            add_into(&mut c2s, &s.c2s);
            add_into(&mut s2c, &s.s2c);
            sessions.push(SessionSummary {
                client: s.client.to_string(),
                server: s.server.to_string(),
                state: s.state.name().to_owned(),
                c2s: s.c2s.summary(),
                s2c: s.s2c.summary(),
            });
        }
        add_into(&mut c2s, &s2c);
        let DirectionSummary {
            messages,
            findings,
            violations,
            malformed,
            ..
        } = c2s.summary();
        Summary {
            messages,
            findings,
            violations,
            malformed,
            sessions,
        }
    }

    fn sweep_timeouts(&mut self) {
        let now = self.now;
        for s in &mut self.sessions {
            if s.state.is_final() {
                continue;
            }
            let silent = |d: &DirState| d.packets > 0 && now.since(d.last_ts) > TIMEOUT_NS;
            if silent(&s.c2s) || silent(&s.s2c) {
                s.state = State::TimedOut;
            }
        }
    }

    /// Finds or creates the session of a datagram, deciding which side is the server.
    fn session_slot(&mut self, d: &Datagram<'_>, packet: Option<&Packet<'_>>) -> usize {
        let key = if d.src <= d.dst {
            (d.src, d.dst)
        } else {
            (d.dst, d.src)
        };
        if let Some(&slot) = self.index.get(&key) {
            return slot;
        }
        let src_is_server = match packet.map(sender_side) {
            Some(Some(side)) => side == Sender::Server,
            _ if d.src.port() == crate::proto::lwar::wire::DEFAULT_PORT => true,
            _ => false,
        };
        let (client, server) = if src_is_server {
            (d.dst, d.src)
        } else {
            (d.src, d.dst)
        };
        let mut session = Session::new(self.next_id, client, server);
        self.next_id += 1;
        let slot = if self.sessions.len() < self.config.max_sessions.max(1) {
            self.sessions.push(session);
            self.sessions.len() - 1
        } else {
            let slot = (0..self.sessions.len())
                .min_by_key(|&i| self.sessions[i].last_seen())
                .unwrap_or(0);
            std::mem::swap(&mut self.sessions[slot], &mut session);
            let old = session;
            let old_key = if old.client <= old.server {
                (old.client, old.server)
            } else {
                (old.server, old.client)
            };
            self.index.remove(&old_key);
            // Nothing can fill its gaps any more: they are lost now.
            let mut old = old;
            report_lost(&mut old, self.now, &mut self.scratch);
            self.evicted.sessions += 1;
            add_into(&mut self.evicted.c2s, &old.c2s);
            add_into(&mut self.evicted.s2c, &old.s2c);
            slot
        };
        self.index.insert(key, slot);
        slot
    }
}

/// Which side sent a packet, judging by its messages: `Server` if it carries a
/// server-only message, `Client` if a client-only one, `None` if it cannot tell.
fn sender_side(packet: &Packet<'_>) -> Option<Sender> {
    packet
        .messages()
        .map_while(Result::ok)
        .map(|m| m.msg_type().sender())
        .find(|s| *s != Sender::Both)
}

/// Raises `lost` for every seqno a gap skipped and nothing filled: at the end of
/// the capture, or when the session is evicted.
fn report_lost(session: &mut Session, now: Timestamp, out: &mut Vec<Finding>) {
    let id = session.id;
    for direction in [Direction::ClientToServer, Direction::ServerToClient] {
        let dir = dir_mut(session, direction);
        let mut lost = 0;
        dir.seq.drain_missing(|seqno, frame| {
            lost += 1;
            out.push(Finding {
                kind: FindingKind::Lost,
                rule: None,
                frame,
                ts: now,
                session: id,
                direction,
                seqno: Some(seqno),
                detail: Detail::None,
            });
        });
        dir.findings[FindingKind::Lost.ordinal()] += lost;
    }
}

/// Everything about one packet of one session.
fn analyse(
    session: &mut Session,
    players: &mut FxHashMap<SocketAddr, Vec<Id>>,
    max_servers: usize,
    raise: &mut Raise<'_>,
    d: &Datagram<'_>,
    decoded: &Result<Packet<'_>, DecodeError>,
) {
    let direction = raise.direction;
    {
        let this = dir_mut(session, direction);
        this.packets += 1;
        this.bytes += d.payload_len as u64;
        this.first_ts.get_or_insert(d.ts);
        this.last_ts = this.last_ts.max(d.ts);
    }
    // Network duplicates: the same bytes as a recent packet of this direction,
    // whether they decode or not. A packet stamped 0 carries no clock: its sender
    // repeats the same bytes on purpose (a Connect resent, a Full answered
    // again), so it is not checked.
    let stamped_zero = matches!(decoded, Ok(p) if p.timestamp() == 0);
    let duplicate_of = if stamped_zero {
        None
    } else {
        let hash = xxh3_64(d.payload);
        dir_mut(session, direction).recent.check(hash, d.frame)
    };

    let packet = match decoded {
        Ok(p) => *p,
        Err(e) => {
            let this = dir_mut(session, direction);
            raise.undecodable(this, d, *e);
            if let Some(frame) = duplicate_of {
                let detail = Detail::DuplicateOf { frame };
                raise.raise(this, FindingKind::DuplicatePacket, None, None, detail);
            }
            return;
        }
    };

    let mut messages = packet.messages();
    let mut has_unreliable = false;
    for item in &mut messages {
        match item {
            Ok(m) => {
                let t = m.msg_type();
                let this = dir_mut(session, direction);
                this.messages[t.ordinal()] += 1;
                this.message_bytes[t.ordinal()] += m.bytes.len() as u64;
                has_unreliable |= !t.is_reliable();
                if duplicate_of.is_none() {
                    message(session, players, max_servers, raise, &packet, &m);
                }
            }
            Err(e) => raise.undecodable(dir_mut(session, direction), d, e),
        }
    }

    let (this, other) = split(session, direction);
    if let Some(frame) = duplicate_of {
        raise.raise(
            this,
            FindingKind::DuplicatePacket,
            None,
            None,
            Detail::DuplicateOf { frame },
        );
        return;
    }

    // Timestamps: 0 means "no unreliable payload" (the original server stamps its
    // Full-only packets so) and orders nothing.
    let timestamp = packet.timestamp();
    if timestamp != 0 {
        match this.max_timestamp {
            Some(highest) if timestamp < highest => raise.raise(
                this,
                FindingKind::Reordered,
                None,
                None,
                Detail::Timestamp { timestamp, highest },
            ),
            _ => this.max_timestamp = Some(timestamp),
        }
    }

    // Acks: regressions, acks of the unseen, and the ack delay of the other side.
    let ack = packet.ack();
    let previous = this.max_ack;
    if let Some(previous) = previous
        && ack < previous
    {
        raise.raise(
            this,
            FindingKind::AckRegression,
            None,
            None,
            Detail::AckRegression { ack, previous },
        );
    }
    if let Some(highest) = other.seq.highest()
        && ack > highest
    {
        raise.raise(
            this,
            FindingKind::AckUnseen,
            None,
            None,
            Detail::AckUnseen { ack, highest },
        );
    }
    if previous.is_none_or(|p| ack > p) {
        let now = d.ts;
        let histogram = &mut other.ack_delay_us;
        other.seq.ack(previous.unwrap_or(0), ack, |first| {
            // Out-of-range values only happen for absurd clocks; they are dropped.
            let _ = histogram.record(now.since(first) / 1_000);
        });
        this.max_ack = Some(ack);
        this.max_ack_frame = d.frame;
    }

    // The length sent, not the length captured: a snaplen does not hide an oversize.
    if d.payload_len > MAX_PACKET_SIZE {
        let v = Violation::Oversize { len: d.payload_len };
        raise.raise(this, FindingKind::Oversize, None, None, Detail::Codec(v));
    }

    if has_unreliable && timestamp != 0 {
        let arrival_ms = d.ts.nanos() as f64 / 1e6;
        if let Some((prev_ts, prev_stamp)) = this.jitter_prev {
            let prev_arrival = prev_ts.nanos() as f64 / 1e6;
            let delta = (arrival_ms - prev_arrival) - (timestamp as f64 - prev_stamp as f64);
            this.jitter_ms += (delta.abs() - this.jitter_ms) / 16.0;
        }
        this.jitter_prev = Some((d.ts, timestamp));
    }
}

fn dir_mut(session: &mut Session, direction: Direction) -> &mut DirState {
    match direction {
        Direction::ClientToServer => &mut session.c2s,
        Direction::ServerToClient => &mut session.s2c,
    }
}

/// This direction and the other one, both mutable.
fn split(session: &mut Session, direction: Direction) -> (&mut DirState, &mut DirState) {
    match direction {
        Direction::ClientToServer => (&mut session.c2s, &mut session.s2c),
        Direction::ServerToClient => (&mut session.s2c, &mut session.c2s),
    }
}

/// One message of a packet that is not a network duplicate.
fn message(
    session: &mut Session,
    players: &mut FxHashMap<SocketAddr, Vec<Id>>,
    max_servers: usize,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    m: &MessageView<'_>,
) {
    let direction = raise.direction;
    let t = m.msg_type();
    let seqno = m.seqno();
    let c2s = direction == Direction::ClientToServer;

    // Rules of the bytes, and who may send what.
    for v in m.violations() {
        let this = dir_mut(session, direction);
        raise.violation(this, Rule::Codec(v.kind()), seqno, Detail::Codec(v));
    }
    let wrong_side = match t.sender() {
        Sender::Client => !c2s,
        Sender::Server => c2s,
        Sender::Both => false,
    };
    if wrong_side {
        let this = dir_mut(session, direction);
        raise.violation(
            this,
            Rule::WrongSender,
            seqno,
            Detail::Message { msg_type: t },
        );
    }
    // After Disconnect the server may send only the Leave of the client's own player;
    // judged from the server's first packet that acks the Disconnect (packets it
    // sent before it processed the Disconnect may still be on their way).
    let own_leave = match m.message {
        Message::Leave { player, .. } => session.player.as_ref().is_none_or(|p| p.id == player),
        _ => false,
    };
    let disconnect_processed = session.disconnect_seqno.is_some_and(|d| packet.ack() >= d);
    if !c2s && disconnect_processed && !own_leave {
        raise.violation(
            &mut session.s2c,
            Rule::AfterDisconnect,
            seqno,
            Detail::Message { msg_type: t },
        );
    }
    // Repeats of a reliable message are not new chats.
    let first_capture = match seqno {
        Some(seqno) => reliable(session, raise, packet, m, seqno),
        None => true,
    };

    // The lifecycle, the players, and the client's own id.
    let own = session.player.as_ref().map(|p| p.id);
    let check_own = |session: &mut Session, raise: &mut Raise<'_>, used: Id| {
        if let Some(own) = own
            && used != own
        {
            raise.violation(
                &mut session.c2s,
                Rule::WrongPlayerId,
                seqno,
                Detail::Player { used, own },
            );
        }
    };
    match m.message {
        Message::Connect { seqno, .. } if c2s => {
            if session.c2s.packets == 1 && session.s2c.packets == 0 {
                session.saw_start = true;
                session.state = State::Connecting;
            }
            session.connect_seqno.get_or_insert(seqno);
        }
        Message::Join { player, name, .. } if !c2s => {
            if session.state == State::Connecting {
                session.state = State::Syncing;
                let mut own_name = String::with_capacity(MAX_NAME_LEN);
                own_name.push_str(&String::from_utf8_lossy(name.as_bytes()));
                session.player = Some(Player {
                    id: player,
                    name: own_name,
                    renames: 0,
                    chats: 0,
                });
            }
            let server_players = if players.len() < max_servers {
                Some(players.entry(session.server).or_default())
            } else {
                players.get_mut(&session.server)
            };
            if let Some(list) = server_players
                && !list.contains(&player)
            {
                list.push(player);
                if list.len() > MAX_PLAYERS {
                    let count = list.len();
                    raise.violation(
                        &mut session.s2c,
                        Rule::TooManyPlayers,
                        Some(m.seqno().unwrap_or(0)),
                        Detail::Players { count },
                    );
                }
            }
        }
        Message::Synced { .. } if !c2s && session.state == State::Syncing => {
            session.state = State::Playing;
        }
        Message::Disconnect { seqno, .. } if c2s => {
            session.disconnect_seen = true;
            session.disconnect_seqno.get_or_insert(seqno);
            if !session.state.is_final() {
                session.state = State::Disconnecting;
            }
        }
        Message::Leave { player, .. } if !c2s => {
            if let Some(list) = players.get_mut(&session.server) {
                list.retain(|p| *p != player);
            }
            if session.disconnect_seen && own.is_none_or(|own| own == player) {
                session.state = State::Closed;
            }
        }
        Message::Full if !c2s => {
            session.state = State::Rejected;
            session.rejected_attempts += 1;
        }
        Message::Name { player, name, .. } => {
            // The client's request and the server's broadcast carry the same name:
            // a rename counts once, when the name changes.
            let new = String::from_utf8_lossy(name.as_bytes());
            if let Some(p) = session.player.as_mut()
                && p.id == player
                && p.name != new
            {
                // In place: the buffer has room for any name the spec allows.
                p.name.clear();
                p.name.push_str(&new);
                p.renames += 1;
            }
            if c2s {
                check_own(session, raise, player);
            }
        }
        Message::Chat { player, .. } if c2s => {
            if first_capture && let Some(p) = session.player.as_mut() {
                p.chats += 1;
            }
            check_own(session, raise, player);
        }
        Message::Selection { player, .. } if c2s => check_own(session, raise, player),
        Message::Input(input) if c2s => {
            if session.saw_start && matches!(session.state, State::Connecting | State::Syncing) {
                raise.violation(
                    &mut session.c2s,
                    Rule::InputBeforeSynced,
                    None,
                    Detail::Message { msg_type: t },
                );
            }
            check_own(session, raise, input.player);
            input_stream(&mut session.c2s, raise, input.frame);
        }
        _ => {}
    }
}

/// The Input frame numbers of one client.
fn input_stream(dir: &mut DirState, raise: &mut Raise<'_>, frame: u32) {
    let Some(last) = dir.last_input_frame else {
        dir.last_input_frame = Some(frame);
        return;
    };
    let detail = Detail::InputFrames { frame, last };
    if frame < last {
        raise.raise(dir, FindingKind::InputRegression, None, None, detail);
        return;
    }
    match frame - last {
        0 | 1 => {}
        2..=9 => raise.raise(dir, FindingKind::InputGap, None, None, detail),
        _ => raise.raise(dir, FindingKind::InputsLost, None, None, detail),
    }
    dir.last_input_frame = Some(frame);
}

/// One reliable message: first send, or which kind of repeat, or which gap.
/// Returns true for the first capture of its seqno.
fn reliable(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    m: &MessageView<'_>,
    seqno: u32,
) -> bool {
    let direction = raise.direction;
    let t = m.msg_type();
    let hash = xxh3_64(m.bytes);
    let frame = raise.frame;
    let ts = raise.ts;

    // The handshake: the first reliable message to a client whose Connect we saw
    // must be Join #1, in a packet that acks the Connect.
    if direction == Direction::ServerToClient
        && session.saw_start
        && !session.first_s2c_reliable_checked
    {
        session.first_s2c_reliable_checked = true;
        if !(t == MessageType::Join && seqno == 1) {
            raise.violation(
                &mut session.s2c,
                Rule::HandshakeFirstNotJoin,
                Some(seqno),
                Detail::Message { msg_type: t },
            );
        }
        if let Some(connect) = session.connect_seqno
            && packet.ack() < connect
        {
            raise.violation(
                &mut session.s2c,
                Rule::HandshakeJoinNoAck,
                Some(seqno),
                Detail::ConnectNotAcked {
                    ack: packet.ack(),
                    connect,
                },
            );
        }
    }

    let disconnect_seen = session.disconnect_seen;
    let (this, other) = split(session, direction);
    let mut lost = 0u64;
    let lookup = this.seq.lookup(seqno);
    let first_capture = !matches!(lookup, Lookup::Seen { .. } | Lookup::TooOld);
    match lookup {
        Lookup::Baseline | Lookup::Next | Lookup::BeforeBaseline => this.first_sends += 1,
        Lookup::Fill => {
            this.first_sends += 1;
            let highest = this.seq.highest().unwrap_or(seqno);
            raise.raise(
                this,
                FindingKind::OutOfOrder,
                None,
                Some(seqno),
                Detail::Fill { highest },
            );
        }
        Lookup::Jump { missing } => {
            this.first_sends += 1;
            let highest = this.seq.highest().unwrap_or(0);
            raise.raise(
                this,
                FindingKind::Gap,
                None,
                Some(seqno),
                Detail::Gap { highest, missing },
            );
        }
        Lookup::TooOld => {
            this.resends += 1;
            raise.raise(this, FindingKind::Resend, None, Some(seqno), Detail::None);
        }
        Lookup::Seen {
            first_frame,
            first_ts,
            tries,
            hash: first_hash,
        } => {
            let repeat = Detail::Repeat {
                first_frame,
                delay_ns: ts.since(first_ts),
                tries: tries + 1,
            };
            // Acked before, and seen in an earlier packet: an in-packet duplicate of
            // a first capture was never resent, whatever the acks say.
            let acked = other
                .max_ack
                .filter(|&a| a >= seqno && first_frame != frame);
            let (kind, detail) = if direction == Direction::ServerToClient
                && t == MessageType::Leave
                && disconnect_seen
            {
                this.expected_repeats += 1;
                (FindingKind::ExpectedRepeat, repeat)
            } else if let Some(ack) = acked {
                this.resends += 1;
                (
                    FindingKind::SpuriousResend,
                    Detail::AckedBefore { ack, first_frame },
                )
            } else if first_frame != frame {
                this.resends += 1;
                (FindingKind::Resend, repeat)
            } else {
                (FindingKind::DuplicateInPacket, repeat)
            };
            raise.raise(this, kind, None, Some(seqno), detail);
            if hash != first_hash {
                raise.violation(
                    this,
                    Rule::ResendDiffers,
                    Some(seqno),
                    Detail::Message { msg_type: t },
                );
            }
        }
    }
    let session_id = raise.session;
    let out = &mut *raise.out;
    this.seq
        .record(seqno, frame, ts, hash, |lost_seqno, gap_frame| {
            lost += 1;
            out.push(Finding {
                kind: FindingKind::Lost,
                rule: None,
                frame: gap_frame,
                ts,
                session: session_id,
                direction,
                seqno: Some(lost_seqno),
                detail: Detail::None,
            });
        });
    this.findings[FindingKind::Lost.ordinal()] += lost;
    first_capture
}
