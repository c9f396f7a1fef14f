//! The ground truth: what the tracker must report for a simulated capture.
//!
//! The simulator knows every datagram's session and direction, and which fault
//! changed it; this module counts, frame by frame at the tap, what the contract of
//! [`crate::engine`] says the analyzer reports. It never looks at datagrams the tap
//! missed, exactly as the analyzer cannot.
//!
//! Where the contract leaves room, this is how it is read (the tracker must agree):
//! - A duplicate packet (step 3) still counts as a packet, its bytes and its
//!   messages by type, and raises `malformed` if it is; it raises nothing else and
//!   changes no state (timestamps, acks, seqnos, inputs, lifecycle).
//! - A payload rejected at the header has no header: only steps 1 to 3 apply.
//! - `spurious-resend` needs the first ack covering the seqno captured at least
//!   the other direction's smoothed ack delay (as it stood before the repeat's
//!   own packet added a sample to it) before the repeat, in a packet not
//!   overtaken, and an ack covering it in a packet that decoded whole;
//!   otherwise the acked repeat is a `repeat`.
//! - `ack-unseen` compares with the highest reliable seqno captured in the other
//!   direction, counted once per run; `lost` and `not-captured` are told apart by
//!   the other direction's highest ack at the end (of the unseen included: an
//!   ack covering a number a gap skipped says it was delivered), and a number
//!   no ack covered is `lost` only when the other direction's last packet was
//!   captured at least the direction's smoothed ack delay after its gap
//!   (`not-captured`, unconfirmed, otherwise).
//! - The input stream compares with the highest frame number seen so far.
//! - Handshake rules and `input-before-synced` apply only to sessions whose Connect
//!   was captured; the assigned player id is the one of the s2c Join with seqno 1.
//!   The handshake is judged on the first capture of the server's seqno 1 (a
//!   first reliable message captured with a later seqno judges nothing).
//!   `input-before-synced` is at most one per session: the run of Inputs before
//!   Synced ends at the first Synced captured, and raises when its first
//!   Input's packet acks below the Synced's seqno (at the session's end, with
//!   no Synced captured, below 2: the Synced follows Join #1); nothing opens
//!   another.
//! - `closed` is reached by a Leave (for the client's player, when known) captured
//!   after its Disconnect; `closed`, `rejected` and `timed-out` are final; otherwise
//!   states only move forward (connecting, syncing, playing, disconnecting).
//! - Timeouts: a packet of a session arriving more than 15 s (strictly) after the
//!   last packet of either direction (or the session's first packet, for a
//!   direction without any), and, at the end, the same test against the timestamp
//!   of the last lwar frame of the capture.
//! - `after-disconnect`: a message other than the Leave of the client's own
//!   player, in a server packet whose ack covers the client's first Disconnect;
//!   one per session (the incident runs to its end).
//! - `wrong-player-id`: one per run of the client's messages naming the same
//!   player id other than its own.
//! - `too-many-players`: a session that reaches `syncing` while 8 other sessions
//!   of the same server are `syncing` or `playing`; one violation on its s2c.

use crate::engine::summary::bump;
use crate::engine::{Direction, DirectionSummary, FindingKind, Rule, SessionSummary, Summary};
use crate::proto::lwar::wire::{
    ErrorKind, Id, MAX_PLAYERS, Message, MessageType, MessageView, Packet, Sender, ViolationKind,
};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

const DUP_WINDOW: usize = 64;
const TIMEOUT_NS: u64 = crate::proto::lwar::wire::DISCONNECT_TIMEOUT_SECS * 1_000_000_000;

/// Lifecycle states, in the order they are reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Life {
    Connecting,
    Syncing,
    Playing,
    Disconnecting,
    Closed,
    Rejected,
    TimedOut,
}

impl Life {
    const fn name(self) -> &'static str {
        match self {
            Life::Connecting => "connecting",
            Life::Syncing => "syncing",
            Life::Playing => "playing",
            Life::Disconnecting => "disconnecting",
            Life::Closed => "closed",
            Life::Rejected => "rejected",
            Life::TimedOut => "timed-out",
        }
    }

    const fn is_final(self) -> bool {
        matches!(self, Life::Closed | Life::Rejected | Life::TimedOut)
    }
}

/// What the tap has seen of one direction of one session.
#[derive(Debug, Default)]
struct Dir {
    sum: DirectionSummary,
    recent: VecDeque<Vec<u8>>,
    spare: Vec<Vec<u8>>,
    max_ts: Option<u32>,
    /// The highest ack that was not of the unseen.
    max_ack: Option<u32>,
    /// The same, of packets that decoded whole (an ack only in a packet that
    /// does not decode proves nothing of what its sender had: no
    /// `spurious-resend` on it).
    max_ack_whole: Option<u32>,
    /// The highest ack of the unseen.
    max_unseen_ack: Option<u32>,
    /// In a run of acks of the unseen.
    acking_unseen: bool,
    /// In a run of acks below `max_ack` (one `ack-regression` per run).
    ack_regressing: bool,
    /// The first reliable seqno captured, and the highest.
    base: Option<u32>,
    highest: Option<u32>,
    /// Capture time of each seqno's first transmission, until an ack covers it.
    first_ns: Vec<Option<u64>>,
    /// Capture time of the first ack of the other direction covering each seqno.
    acked_ns: Vec<Option<u64>>,
    /// The smoothed ack delay of this direction's messages (1/8 per sample), ns.
    srtt: Option<f64>,
    /// First transmission of each seqno seen: (start, len) in `arena`.
    seen: Vec<Option<(u32, u32)>>,
    arena: Vec<u8>,
    /// Seqnos skipped by a gap and not seen since.
    /// with the capture time of the gap that skipped them.
    missing: BTreeMap<u32, u64>,
    /// The Leaves repeated to a client that said Disconnect: one
    /// `expected-repeat` each, however many times.
    repeated_leaves: BTreeSet<u32>,
}

impl Dir {
    fn finding(&mut self, kind: FindingKind, n: u64) {
        bump(&mut self.sum.findings, kind.name(), n);
    }

    fn violation(&mut self, rule: Rule) {
        self.finding(FindingKind::VIOLATION, 1);
        bump(&mut self.sum.violations, rule.name(), 1);
    }

    fn first_bytes(&self, seqno: u32) -> Option<&[u8]> {
        let (start, len) = (*self.seen.get(seqno as usize)?)?;
        self.arena.get(start as usize..(start + len) as usize)
    }

    fn remember(&mut self, seqno: u32, bytes: &[u8]) {
        let i = seqno as usize;
        if self.seen.len() <= i {
            self.seen.resize(i + 1, None);
        }
        self.seen[i] = Some((self.arena.len() as u32, bytes.len() as u32));
        self.arena.extend_from_slice(bytes);
    }

    /// Step 3: true when `payload` equals one of the last 64 payloads.
    fn is_duplicate(&mut self, payload: &[u8]) -> bool {
        let dup = self.recent.iter().any(|p| p.as_slice() == payload);
        let mut slot = if self.recent.len() == DUP_WINDOW {
            self.recent.pop_front().unwrap_or_default()
        } else {
            self.spare.pop().unwrap_or_default()
        };
        slot.clear();
        slot.extend_from_slice(payload);
        self.recent.push_back(slot);
        dup
    }
}

#[derive(Debug)]
struct Session {
    client: String,
    server: String,
    server_key: usize,
    life: Life,
    dirs: [Dir; 2],
    first_ns: u64,
    last_ns: [Option<u64>; 2],
    connect_seen: bool,
    synced_seen: bool,
    disconnect_seen: bool,
    /// The seqno of the client's first Disconnect.
    disconnect_seqno: Option<u32>,
    first_s2c_reliable: bool,
    player: Option<Id>,
    last_frame: Option<u32>,
    /// In a run of Input frames below `last_frame` (one `input-regression`
    /// per run).
    input_regressing: bool,
    /// The ack of the packet of the first Input captured before Synced:
    /// judged when the Synced comes (one run per session: it ends at Synced,
    /// which never comes back).
    early_inputs_ack: Option<u32>,
    /// The wrong player id of the client's current run of messages naming
    /// one (one `wrong-player-id` per run).
    wrong_player: Option<Id>,
    /// The server's messages after the Disconnect raised their one
    /// `after-disconnect` (one per session).
    after_disconnect_raised: bool,
    /// The packet being observed was stamped below the highest timestamp of
    /// its direction (0 orders nothing): overtaken, its ack and Input frames
    /// are as old as it is and are not judged.
    overtaken: bool,
}

impl Session {
    fn advance(&mut self, to: Life) {
        if !self.life.is_final() && to > self.life {
            self.life = to;
        }
    }
}

/// One injected fault, as the ground truth lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultRecord {
    /// The 1-based capture frame that shows it; none for losses and tap misses.
    pub frame: Option<u64>,
    /// Index of the simulated client of the session (0-based).
    pub client: usize,
    pub direction: Direction,
    pub kind: String,
    pub detail: String,
}

/// The ground truth file: `FILE.truth.json`.
#[derive(Debug, Clone, Serialize)]
pub struct TruthFile<G: Serialize> {
    pub version: u32,
    pub generator: G,
    pub faults: Vec<FaultRecord>,
    pub summary: Summary,
}

/// Counts, at the tap, what the tracker must report.
#[derive(Debug, Default)]
pub struct Truth {
    sessions: Vec<Option<Session>>,
    order: Vec<usize>,
    end_ns: u64,
}

impl Truth {
    pub fn new() -> Self {
        Self::default()
    }

    /// One captured lwar datagram of the session of client `client`.
    #[allow(clippy::too_many_arguments)]
    pub fn observe(
        &mut self,
        client: usize,
        client_addr: &str,
        server_addr: &str,
        server_key: usize,
        dir: Direction,
        ts_ns: u64,
        payload: &[u8],
    ) {
        self.end_ns = self.end_ns.max(ts_ns);
        if self.sessions.len() <= client {
            self.sessions.resize_with(client + 1, || None);
        }
        if self.sessions[client].is_none() {
            self.order.push(client);
            self.sessions[client] = Some(Session {
                client: client_addr.to_owned(),
                server: server_addr.to_owned(),
                server_key,
                // A session whose first packet is not a Connect starts as
                // playing (the capture began, or the tap missed, before it).
                life: Life::Playing,
                dirs: Default::default(),
                first_ns: ts_ns,
                last_ns: [None, None],
                connect_seen: false,
                synced_seen: false,
                disconnect_seen: false,
                disconnect_seqno: None,
                first_s2c_reliable: false,
                player: None,
                last_frame: None,
                input_regressing: false,
                early_inputs_ack: None,
                wrong_player: None,
                after_disconnect_raised: false,
                overtaken: false,
            });
        }
        let busy = self.players_of(server_key, client);
        let s = self.sessions[client].as_mut().expect("just made");
        // Timeouts, as packets arrive.
        if !s.life.is_final()
            && s.last_ns
                .iter()
                .any(|last| ts_ns.saturating_sub(last.unwrap_or(s.first_ns)) > TIMEOUT_NS)
        {
            s.life = Life::TimedOut;
        }
        s.last_ns[dir.index()] = Some(ts_ns);
        observe_packet(s, dir, payload, busy, ts_ns);
    }

    /// Sessions of `server_key` other than `except` that hold a player.
    fn players_of(&self, server_key: usize, except: usize) -> usize {
        self.sessions
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().filter(|_| i != except))
            .filter(|s| s.server_key == server_key)
            .filter(|s| matches!(s.life, Life::Syncing | Life::Playing))
            .count()
    }

    /// Ends the capture: lost seqnos and final timeouts; returns the summary.
    pub fn finish(mut self) -> Summary {
        let end = self.end_ns;
        let mut summary = Summary::default();
        for i in self.order {
            let Some(mut s) = self.sessions[i].take() else {
                continue;
            };
            if !s.life.is_final()
                && s.last_ns
                    .iter()
                    .any(|last| end.saturating_sub(last.unwrap_or(s.first_ns)) > TIMEOUT_NS)
            {
                s.life = Life::TimedOut;
            }
            // Inputs before a Synced never captured: early if acking below 2.
            if !s.synced_seen && s.early_inputs_ack.is_some_and(|ack| ack < 2) {
                s.dirs[Direction::ClientToServer as usize]
                    .violation(super::super::findings::rules::INPUT_BEFORE_SYNCED);
            }
            // A missing seqno the other side acked was delivered: the tap
            // missed it. One it did not is lost only when a packet of the
            // other side was captured at least this direction's ack delay
            // after the gap (its ack could have been captured): otherwise,
            // unconfirmed (`not-captured` too).
            let acked = [1, 0].map(|o: usize| s.dirs[o].max_ack.max(s.dirs[o].max_unseen_ack));
            let acker_last = [1, 0].map(|o: usize| s.last_ns[o]);
            for ((d, acked), acker_last) in s.dirs.iter_mut().zip(acked).zip(acker_last) {
                let could_ack = |gap: u64| match (d.srtt, acker_last) {
                    (Some(delay), Some(last)) => last.saturating_sub(gap) as f64 >= delay,
                    _ => false,
                };
                let lost = d
                    .missing
                    .iter()
                    .filter(|&(&m, &gap)| acked.is_none_or(|a| a < m) && could_ack(gap))
                    .count() as u64;
                let delivered = d.missing.len() as u64 - lost;
                d.finding(FindingKind::LOST, lost);
                d.finding(FindingKind::NOT_CAPTURED, delivered);
            }
            let [c2s, s2c] = s.dirs.map(|d| d.sum);
            for d in [&c2s, &s2c] {
                for (k, v) in &d.messages {
                    bump(&mut summary.messages, k, *v);
                }
                for (k, v) in &d.findings {
                    bump(&mut summary.findings, k, *v);
                }
                for (k, v) in &d.violations {
                    bump(&mut summary.violations, k, *v);
                }
                for (k, v) in &d.malformed {
                    bump(&mut summary.malformed, k, *v);
                }
            }
            summary.sessions.push(SessionSummary {
                client: s.client,
                server: s.server,
                state: s.life.name().to_owned(),
                c2s,
                s2c,
            });
        }
        summary
    }
}

fn malformed(d: &mut Dir, kind: ErrorKind) {
    d.finding(FindingKind::MALFORMED, 1);
    bump(&mut d.sum.malformed, kind.name(), 1);
}

fn observe_packet(s: &mut Session, dir: Direction, payload: &[u8], busy: usize, ts_ns: u64) {
    let di = dir.index();
    let Some((packet, whole)) = count_packet(&mut s.dirs[di], payload) else {
        return;
    };

    // The round trip between the tap and this packet's sender, as measured
    // before this packet's own ack adds a sample to it.
    let round_trip_ns = s.dirs[1 - di].srtt;
    header_steps(s, di, &packet, ts_ns, whole);
    let ack = packet.ack();
    let other_acked = s.dirs[1 - di].max_ack.unwrap_or(0);
    let other_acked_whole = s.dirs[1 - di].max_ack_whole;

    // Seqnos of this packet so far, and those of them first seen in this packet.
    let mut in_packet: Vec<u32> = Vec::new();
    let mut new_in_packet: Vec<u32> = Vec::new();
    for view in packet.messages().map_while(Result::ok) {
        message_rules(s, di, dir, &view, ack);
        let message = view.message;
        let t = view.msg_type();
        let Some(seqno) = view.seqno() else {
            continue;
        };

        // Handshake rules, on the first reliable message to the client.
        if dir == Direction::ServerToClient && !s.first_s2c_reliable && seqno == 1 {
            s.first_s2c_reliable = true;
            if s.connect_seen && t != MessageType::Join {
                s.dirs[di].violation(super::super::findings::rules::HANDSHAKE_FIRST_NOT_JOIN);
            }
        }

        lifecycle(s, di, dir, message, seqno, ack, busy);

        let expected =
            dir == Direction::ServerToClient && t == MessageType::Leave && s.disconnect_seen;
        let first_ns = s.dirs[di].first_ns.get(seqno as usize).copied().flatten();
        let repeat = Repeat {
            since_first_ns: first_ns.map(|f| ts_ns.saturating_sub(f)),
            earlier: s.dirs[di].first_bytes(seqno).is_some() && !new_in_packet.contains(&seqno),
            in_packet: in_packet.contains(&seqno),
            expected,
            other_acked,
            other_acked_whole,
            acked_ns: s.dirs[di].acked_ns.get(seqno as usize).copied().flatten(),
            round_trip_ns,
            overtaken: s.overtaken,
        };
        if reliable_rules(&mut s.dirs[di], seqno, view.bytes, repeat, ts_ns) {
            new_in_packet.push(seqno);
        }
        in_packet.push(seqno);
    }
}

/// Counts a captured packet, its messages and what is malformed in it.
/// Returns the packet and whether all its messages decoded, or `None` when
/// nothing more is judged: its header is malformed, or it is a duplicate.
fn count_packet<'a>(d: &mut Dir, payload: &'a [u8]) -> Option<(Packet<'a>, bool)> {
    d.sum.packets += 1;
    d.sum.bytes += payload.len() as u64;
    let packet = match Packet::new_checked(payload) {
        Ok(p) => p,
        Err(e) => {
            malformed(d, e.kind());
            if d.is_duplicate(payload) {
                d.finding(FindingKind::DUPLICATE_PACKET, 1);
            }
            return None;
        }
    };
    let mut error = None;
    for m in packet.messages() {
        match m {
            Ok(v) => bump(&mut d.sum.messages, v.msg_type().name(), 1),
            Err(e) => error = Some(e.kind()),
        }
    }
    if let Some(kind) = error {
        malformed(d, kind);
    }
    if d.is_duplicate(payload) {
        d.finding(FindingKind::DUPLICATE_PACKET, 1);
        return None;
    }
    Some((packet, error.is_none()))
}

/// The rules of one message whatever its reliability: the codec's
/// violations, the sender's side, the server's packets after the
/// Disconnect was processed, the client's player id and input frames, and a
/// Full that rejects the session.
fn message_rules(s: &mut Session, di: usize, dir: Direction, view: &MessageView<'_>, ack: u32) {
    let message = view.message;
    let t = view.msg_type();
    let d = &mut s.dirs[di];
    for v in view.violations() {
        if v.kind() != ViolationKind::Oversize {
            d.violation(super::super::findings::codec_rule(v.kind()));
        }
    }
    let wrong_side = matches!(
        (t.sender(), dir),
        (Sender::Server, Direction::ClientToServer) | (Sender::Client, Direction::ServerToClient)
    );
    if wrong_side {
        d.violation(super::super::findings::rules::WRONG_SENDER);
    }
    // Only the server's packets that ack the Disconnect show that it was
    // processed; those sent before may still have been in flight.
    let own_leave = match message {
        Message::Leave { player, .. } => s.player.is_none_or(|own| own == player),
        _ => false,
    };
    if dir == Direction::ServerToClient
        && s.disconnect_seqno.is_some_and(|d| ack >= d)
        && !own_leave
        && !s.after_disconnect_raised
    {
        s.after_disconnect_raised = true;
        s.dirs[di].violation(super::super::findings::rules::AFTER_DISCONNECT);
    }
    if dir == Direction::ClientToServer {
        client_rules(s, di, message, t, ack);
    }
    if t == MessageType::Full && dir == Direction::ServerToClient && !s.life.is_final() {
        s.life = Life::Rejected;
    }
}

/// A client's message: consecutive messages naming the same wrong player
/// id are one run (one violation); an Input's frame.
fn client_rules(s: &mut Session, di: usize, message: Message<'_>, t: MessageType, ack: u32) {
    if let Some(p) = message.player()
        && let Some(own) = s.player
        && matches!(
            t,
            MessageType::Input | MessageType::Chat | MessageType::Name | MessageType::Selection
        )
    {
        if own == p {
            s.wrong_player = None;
        } else if s.wrong_player != Some(p) {
            s.wrong_player = Some(p);
            s.dirs[di].violation(super::super::findings::rules::WRONG_PLAYER_ID);
        }
    }
    if let Message::Input(input) = message {
        input_frame(s, di, input.frame, ack);
    }
}

/// What is known of a reliable seqno before its rules apply.
#[derive(Clone, Copy)]
struct Repeat {
    /// Time since its first capture, while no ack has covered it.
    since_first_ns: Option<u64>,
    /// Captured in an earlier packet.
    earlier: bool,
    /// Already in this packet.
    in_packet: bool,
    /// A Leave repeated after the client's Disconnect.
    expected: bool,
    /// The highest ack of the other direction.
    other_acked: u32,
    /// The same, of its packets that decoded whole.
    other_acked_whole: Option<u32>,
    /// When the first ack of the other direction covering it was captured.
    acked_ns: Option<u64>,
    /// The round trip between the tap and this direction's sender: the
    /// other direction's smoothed ack delay.
    round_trip_ns: Option<f64>,
    /// Its packet was overtaken on the way: sent before it was captured.
    overtaken: bool,
}

/// The reliable rules, the first that applies winning; true for a first
/// capture of the seqno.
fn reliable_rules(d: &mut Dir, seqno: u32, bytes: &[u8], r: Repeat, ts_ns: u64) -> bool {
    // Beyond the window (a skip of 512 or more), or 512 or more behind the
    // highest (but not before the first captured): never processed, not recorded.
    if let (Some(base), Some(h)) = (d.base, d.highest)
        && (seqno > h && seqno - h > 512 || seqno >= base && seqno < h && h - seqno >= 512)
    {
        d.violation(super::super::findings::rules::SEQNO_OUT_OF_WINDOW);
        return false;
    }
    let differs = d.first_bytes(seqno).is_some_and(|b| b != bytes);
    if r.earlier {
        if r.expected {
            if d.repeated_leaves.insert(seqno) {
                d.finding(super::super::findings::EXPECTED_REPEAT, 1);
            }
        } else if r.other_acked >= seqno {
            // Spurious only once the ack had had a round trip between the tap
            // and the sender to reach it; sooner, it may have crossed the repeat.
            // An ack only in packets that do not decode proves nothing.
            let reached = match (r.acked_ns, r.round_trip_ns) {
                _ if r.overtaken => false,
                _ if r.other_acked_whole.is_none_or(|w| w < seqno) => false,
                (Some(acked), Some(rtt)) => ts_ns.saturating_sub(acked) as f64 >= rtt,
                _ => false,
            };
            if reached {
                d.finding(FindingKind::SPURIOUS_RESEND, 1);
                d.sum.resends += 1;
            } else {
                d.finding(FindingKind::REPEAT, 1);
                d.sum.repeats += 1;
            }
        } else if d.srtt.is_none()
            || r.since_first_ns
                .is_some_and(|t| (t as f64) < d.srtt.unwrap_or(0.0))
        {
            d.finding(FindingKind::REPEAT, 1);
            d.sum.repeats += 1;
        } else {
            d.finding(FindingKind::RESEND, 1);
            d.sum.resends += 1;
        }
        if differs {
            d.violation(super::super::findings::rules::RESEND_DIFFERS);
        }
    } else if r.in_packet {
        d.finding(FindingKind::DUPLICATE_IN_PACKET, 1);
    } else {
        match d.highest {
            None => {}
            Some(h) if seqno < h => {
                d.finding(FindingKind::OUT_OF_ORDER, 1);
                d.missing.remove(&seqno);
            }
            Some(h) if seqno > h.saturating_add(1) => {
                d.finding(FindingKind::GAP, 1);
                d.missing.extend((h + 1..seqno).map(|m| (m, ts_ns)));
            }
            Some(_) => {}
        }
        d.sum.first_sends += 1;
        d.base.get_or_insert(seqno);
        d.highest = Some(d.highest.map_or(seqno, |h| h.max(seqno)));
        d.remember(seqno, bytes);
        if d.first_ns.len() <= seqno as usize {
            d.first_ns.resize(seqno as usize + 1, None);
        }
        d.first_ns[seqno as usize] = Some(ts_ns);
        return true;
    }
    false
}

/// The lifecycle and the player, on a reliable message.
fn lifecycle(
    s: &mut Session,
    di: usize,
    dir: Direction,
    message: Message<'_>,
    seqno: u32,
    ack: u32,
    busy: usize,
) {
    match message {
        // Only a Connect in the session's first packet shows its start.
        Message::Connect { .. }
            if dir == Direction::ClientToServer
                && s.dirs[di].sum.packets == 1
                && s.dirs[1 - di].sum.packets == 0 =>
        {
            s.connect_seen = true;
            s.life = Life::Connecting;
        }
        Message::Join { player, .. } if dir == Direction::ServerToClient => {
            if seqno == 1 && s.player.is_none() {
                s.player = Some(player);
                if s.connect_seen && ack == 0 {
                    s.dirs[di].violation(super::super::findings::rules::HANDSHAKE_JOIN_NO_ACK);
                }
            }
            if s.life < Life::Syncing && !s.life.is_final() {
                if busy >= MAX_PLAYERS {
                    s.dirs[di].violation(super::super::findings::rules::TOO_MANY_PLAYERS);
                }
                s.advance(Life::Syncing);
            }
        }
        Message::Synced { .. } if dir == Direction::ServerToClient => {
            if !s.synced_seen
                && let Some(early) = s.early_inputs_ack.take()
                && early < seqno
            {
                s.dirs[1 - di].violation(super::super::findings::rules::INPUT_BEFORE_SYNCED);
            }
            s.synced_seen = true;
            s.advance(Life::Playing);
        }
        Message::Disconnect { seqno, .. } if dir == Direction::ClientToServer => {
            s.disconnect_seen = true;
            s.disconnect_seqno.get_or_insert(seqno);
            s.advance(Life::Disconnecting);
        }
        Message::Leave { player, .. }
            if dir == Direction::ServerToClient
                && s.disconnect_seen
                && s.player.is_none_or(|own| own == player)
                && !s.life.is_final() =>
        {
            s.life = Life::Closed;
        }
        _ => {}
    }
}

/// Steps 4 to 6 of the contract for one packet's header: timestamps, acks,
/// oversize.
fn header_steps(s: &mut Session, di: usize, packet: &Packet<'_>, ts_ns: u64, whole: bool) {
    let d = &mut s.dirs[di];
    let (ts, ack) = (packet.timestamp(), packet.ack());
    if d.max_ts.is_some_and(|m| ts < m) {
        d.finding(FindingKind::REORDERED, 1);
    }
    let overtaken = ts != 0 && d.max_ts.is_some_and(|m| ts < m);
    s.overtaken = overtaken;
    let d = &mut s.dirs[di];
    d.max_ts = Some(d.max_ts.map_or(ts, |m| m.max(ts)));
    // Acks of the unseen: one finding per run of them, and they judge nothing.
    let unseen = s.dirs[1 - di].highest.is_some_and(|h| ack > h);
    let d = &mut s.dirs[di];
    if packet.oversize().is_some() {
        d.finding(FindingKind::OVERSIZE, 1);
    }
    if unseen {
        d.max_unseen_ack = d.max_unseen_ack.max(Some(ack));
        if !d.acking_unseen {
            d.finding(FindingKind::ACK_UNSEEN, 1);
        }
        d.acking_unseen = true;
    } else {
        d.acking_unseen = false;
        // Acks below the highest: one finding per run of them; a packet
        // overtaken on the way neither opens nor ends a run.
        if d.max_ack.is_some_and(|m| ack < m) {
            if !overtaken && !d.ack_regressing {
                d.finding(FindingKind::ACK_REGRESSION, 1);
                d.ack_regressing = true;
            }
        } else {
            d.ack_regressing = false;
        }
        let previous = d.max_ack.unwrap_or(0);
        d.max_ack = Some(d.max_ack.map_or(ack, |m| m.max(ack)));
        if whole {
            d.max_ack_whole = Some(d.max_ack_whole.map_or(ack, |m| m.max(ack)));
        }
        // Ack delays of the other direction's messages this ack newly covers, in
        // seqno order, into its smoothed ack delay.
        let other = &mut s.dirs[1 - di];
        for seqno in previous.saturating_add(1)..=ack {
            if other.highest.is_some_and(|h| seqno <= h) {
                if other.acked_ns.len() <= seqno as usize {
                    other.acked_ns.resize(seqno as usize + 1, None);
                }
                other.acked_ns[seqno as usize].get_or_insert(ts_ns);
            }
            if let Some(first) = other.first_ns.get_mut(seqno as usize)
                && let Some(first_ns) = first.take()
            {
                let sample = ts_ns.saturating_sub(first_ns) as f64;
                other.srtt = Some(other.srtt.map_or(sample, |s| s + (sample - s) / 8.0));
            }
        }
    }
}

/// The input stream of the client: regressions, gaps and lost inputs, and
/// Input before Synced.
fn input_frame(s: &mut Session, di: usize, frame: u32, ack: u32) {
    if s.connect_seen && !s.synced_seen && s.early_inputs_ack.is_none() {
        s.early_inputs_ack = Some(ack);
    }
    if let Some(last) = s.last_frame {
        let d = &mut s.dirs[di];
        if frame < last {
            // One finding per run below the highest; an Input of an overtaken
            // packet neither opens nor ends a run.
            if !s.overtaken && !s.input_regressing {
                d.finding(super::super::findings::INPUT_REGRESSION, 1);
                s.input_regressing = true;
            }
        } else if frame > last + 1 {
            s.input_regressing = false;
            let skipped = frame - last - 1;
            // Eight state bits per Input (its own frame and the seven before):
            // up to 7 skipped frames are still covered; 8 or more lose one.
            if skipped <= 7 {
                d.finding(super::super::findings::INPUT_GAP, 1);
            } else {
                d.finding(super::super::findings::INPUTS_LOST, 1);
            }
        } else {
            s.input_regressing = false;
        }
    }
    s.last_frame = Some(s.last_frame.map_or(frame, |l| l.max(frame)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::lwar::wire::{Header, MessageRepr, PacketRepr};

    const C2S: Direction = Direction::ClientToServer;
    const S2C: Direction = Direction::ServerToClient;

    fn bytes(ack: u32, timestamp: u32, messages: Vec<MessageRepr>) -> Vec<u8> {
        PacketRepr {
            header: Header { ack, timestamp },
            messages,
        }
        .to_bytes()
    }

    fn feed(t: &mut Truth, dir: Direction, ms: u64, payload: &[u8]) {
        t.observe(
            0,
            "127.0.0.2:50001",
            "127.0.0.1:32422",
            0,
            dir,
            ms * 1_000_000,
            payload,
        );
    }

    fn count(c: &crate::engine::Counts, k: &str) -> u64 {
        c.get(k).copied().unwrap_or(0)
    }

    #[test]
    fn the_contract_rules_are_counted_at_the_tap() {
        let me = Id::new(1, 1);
        let connect = MessageRepr::Connect {
            seqno: 1,
            name: b"a".to_vec(),
        };
        let chat = |seqno| MessageRepr::Chat {
            seqno,
            player: me,
            text: b"hi".to_vec(),
        };
        let mut t = Truth::new();
        feed(&mut t, C2S, 0, &bytes(0, 0, vec![connect.clone()]));
        feed(&mut t, C2S, 100, &bytes(0, 100, vec![connect.clone()])); // repeat: no ack delay known yet
        let join = MessageRepr::Join {
            seqno: 1,
            player: me,
            name: b"a".to_vec(),
        };
        feed(
            &mut t,
            S2C,
            101,
            &bytes(1, 101, vec![join, MessageRepr::Synced { seqno: 2 }]),
        );
        feed(&mut t, C2S, 130, &bytes(2, 130, vec![chat(3)])); // gap: 2 missing
        feed(&mut t, C2S, 131, &bytes(2, 130, vec![chat(3)])); // duplicate packet
        feed(&mut t, C2S, 140, &bytes(2, 120, vec![chat(3)])); // reordered, repeat: 10 ms < 101 ms
        feed(&mut t, C2S, 150, &bytes(1, 150, vec![chat(4)])); // ack regression
        feed(&mut t, S2C, 160, &bytes(9, 160, vec![])); // ack unseen (9 > 4), covering 2
        feed(&mut t, C2S, 170, &[0xf2, 0x70, 0x87, 0xc5, 0]); // short header
        feed(&mut t, C2S, 400, &bytes(2, 400, vec![chat(3)])); // resend: 270 ms > 101 ms
        let s = t.finish();
        let c2s = &s.sessions[0].c2s;
        let s2c = &s.sessions[0].s2c;
        assert_eq!(c2s.packets, 8);
        assert_eq!(count(&c2s.findings, "repeat"), 2);
        assert_eq!(count(&c2s.findings, "resend"), 1);
        assert_eq!(count(&c2s.findings, "gap"), 1);
        // #2, skipped by the gap, is covered by the ack of the unseen: the
        // receiver says it had it (not-captured, not lost).
        assert_eq!(count(&c2s.findings, "lost"), 0);
        assert_eq!(count(&c2s.findings, "not-captured"), 1);
        assert_eq!(count(&c2s.findings, "duplicate-packet"), 1);
        assert_eq!(count(&c2s.findings, "reordered"), 1);
        assert_eq!(count(&c2s.findings, "ack-regression"), 1);
        assert_eq!(count(&c2s.findings, "malformed"), 1);
        assert_eq!(count(&c2s.malformed, "short-header"), 1);
        assert_eq!(count(&c2s.messages, "Chat"), 5);
        assert_eq!((c2s.first_sends, c2s.repeats, c2s.resends), (3, 2, 1));
        assert_eq!(count(&s2c.findings, "ack-unseen"), 1);
        assert_eq!(s2c.first_sends, 2);
        assert_eq!(s.sessions[0].state, "playing");
        assert_eq!(count(&s.findings, "resend"), 1);
        assert_eq!(count(&s.findings, "repeat"), 2);
    }

    #[test]
    fn leave_after_disconnect_closes_and_repeats_are_expected() {
        let me = Id::new(1, 1);
        let mut t = Truth::new();
        let connect = MessageRepr::Connect {
            seqno: 1,
            name: b"a".to_vec(),
        };
        feed(&mut t, C2S, 0, &bytes(0, 0, vec![connect]));
        let join = MessageRepr::Join {
            seqno: 1,
            player: me,
            name: b"a".to_vec(),
        };
        feed(&mut t, S2C, 1, &bytes(1, 1, vec![join]));
        feed(
            &mut t,
            C2S,
            2,
            &bytes(1, 2, vec![MessageRepr::Disconnect { seqno: 2 }]),
        );
        let leave = MessageRepr::Leave {
            seqno: 2,
            player: me,
        };
        feed(&mut t, S2C, 3, &bytes(2, 3, vec![leave.clone()]));
        feed(&mut t, S2C, 4, &bytes(2, 4, vec![leave, MessageRepr::Full]));
        let s = t.finish();
        let s2c = &s.sessions[0].s2c;
        assert_eq!(count(&s2c.findings, "expected-repeat"), 1);
        assert_eq!(s2c.resends, 0);
        // Full is not Leave: sent after the Disconnect, it breaks the rule.
        assert_eq!(count(&s2c.violations, "after-disconnect"), 1);
        assert_eq!(s.sessions[0].state, "closed");
    }

    #[test]
    fn silence_of_more_than_15_s_times_a_session_out() {
        let mut t = Truth::new();
        let connect = MessageRepr::Connect {
            seqno: 1,
            name: b"a".to_vec(),
        };
        feed(&mut t, C2S, 0, &bytes(0, 0, vec![connect.clone()]));
        feed(&mut t, C2S, 15_001, &bytes(0, 15_001, vec![connect]));
        assert_eq!(t.finish().sessions[0].state, "timed-out");
    }
}
