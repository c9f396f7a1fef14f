//! lwar's analysis: what a session is, and the rules applied to each packet, on
//! the engine's generic session table and reliability core.
//!
//! # The contract
//!
//! These definitions are what the analyzer implements and what the simulator's
//! ground truth states; both follow this text, not each other.
//!
//! **Sessions.** A session is a (client address, server address) pair. The server
//! side is the one that sends server-only messages (Join, Leave, Add, Remove,
//! Synced, Stats, Full, Collision, Update*) or receives client-only ones (Connect,
//! Disconnect, Input); failing both, the side on port 32422; failing that, the
//! destination of the first packet. Directions are `c2s` and `s2c`.
//!
//! **Per packet**, in this order:
//! 1. `packets += 1`, `bytes += payload_len` (the UDP payload length, as sent).
//! 2. A payload the codec rejects at the header, or a message it cannot decode,
//!    raises one `malformed` finding (reason and offset in the detail), or one
//!    `truncated` finding instead when the capture cut the frame short. The
//!    messages decoded before the error are counted and analysed as below.
//! 3. A payload identical to one of the last 64 packets of the same direction
//!    raises `duplicate-packet`, whether it decodes or not; its messages are counted by type but raise
//!    nothing else and count as neither first sends nor resends. Packets with
//!    header timestamp 0 are not checked: a sender that stamps no clock repeats
//!    the same bytes on purpose (a Connect resent, a Full answered again).
//! 4. A header timestamp lower than the highest seen in that direction raises
//!    `reordered` (the packet was overtaken). Timestamp 0 is ignored: senders
//!    stamp 0 on packets without unreliable messages (the original server's Full).
//! 5. Acks. An ack above the highest reliable seqno captured in the other
//!    direction is *of the unseen* (while the other direction has shown no
//!    reliable message, no ack is: it may cover messages sent before the capture
//!    began): consecutive packets of a direction with such acks make one
//!    incident, which raises one `ack-unseen` when it ends (at the first packet
//!    whose ack is not of the unseen, or at the end of the capture), at the frame
//!    where it began, with the highest ack and the number of packets in the
//!    detail. An ack of the unseen judges nothing else: it is never the highest
//!    ack for the rules below; only a missing seqno at or below it (a gap
//!    skipped it: it was sent) counts as acked by it at rule 7 (delivered:
//!    `not-captured`). Otherwise, an ack lower than the highest ack seen
//!    in that direction is an `ack-regression`: consecutive packets of a
//!    direction with acks below the highest make one incident (the highest
//!    stays, so one bogus high ack is one finding, not one per packet after
//!    it), which raises one finding when it ends (at the first packet whose ack
//!    is at or above the highest, or at the end of the capture), at the frame
//!    where it began, with its first ack, the highest ack and the frame that
//!    carried it, and the number of packets and the last frame in the detail.
//!    A packet judged `reordered` at step 4 is not judged here: it was sent
//!    before a packet captured earlier, so its ack is as old as it is (the
//!    sender acks "the last reliable message that has been processed", which
//!    only grows in the order of sending); it neither opens nor ends an
//!    incident.
//! 6. A packet over 512 bytes as sent (`payload_len`, whatever the capture kept)
//!    raises `oversize` (and is decoded all the same).
//!
//! **Per reliable message**, the first rule that applies wins:
//! 1. `expected-repeat`: a Leave from the server, seen before, after the client's
//!    Disconnect was captured. Not a resend. Each Leave's repeats are one
//!    incident: one finding when the session ends, at its first repeat, with
//!    the frame of its first send, the repeats and the last frame.
//! 2. The seqno was seen in an earlier packet, and a packet of the other
//!    direction captured earlier acked it (ack >= seqno, an ack of the unseen
//!    excepted): `spurious-resend` when the first such ack was captured at
//!    least the round trip between the tap and this direction's sender before
//!    (the other direction's smoothed ack delay: the ack had reached the
//!    sender, `engine::DirState::ack_reached_sender`); otherwise, while that
//!    delay is not measured, or when the repeat's packet was overtaken on the
//!    way (step 4: sent before it was captured), `repeat`, "unconfirmed: the
//!    ack may not have reached the sender" (a tap far from the sender
//!    captures the ack long before the sender gets it). When every ack that
//!    covers it came in a packet with a message that does not decode (step
//!    2), `repeat`, "unconfirmed: the ack (ack N) came only in packets that
//!    do not decode": the capture cannot tell that their receiver took the
//!    ack from a damaged packet.
//! 3. `repeat`: the seqno was seen in an earlier packet, less than the smoothed
//!    ack delay of this direction ago (or before any of its messages was
//!    acked): an ack could not have come back yet, and the sender repeats its
//!    unacked messages by design. The smoothed ack delay follows TCP's SRTT: each
//!    ack delay sample (capture of a message to the capture of the first ack
//!    covering it, in seqno order) weighs 1/8.
//! 4. `resend`: the seqno was seen in an earlier packet, longer ago: a loss (or
//!    a late ack) made the sender send it again.
//! 5. `duplicate-in-packet`: the same seqno earlier in the same packet.
//! 6. `out-of-order`: never seen, below the highest seen: it fills a gap.
//! 7. `gap`: more than one above the highest seen. One finding per jump, the
//!    missing count in the detail. Every skipped seqno still unseen at the end of
//!    the capture (or when it leaves the window of the last 512 seqnos, or its
//!    session is evicted) raises one `not-captured` if a packet of the other
//!    direction acked it (it was delivered; the capture missed it; an ack of
//!    the unseen counts, step 5), and one
//!    `lost` otherwise, with the frame of its gap, when the capture could
//!    have shown its ack: only if a packet of the other direction was
//!    captured at least this direction's smoothed ack delay after the gap
//!    (`engine::ack_could_come`; otherwise, a gap in the capture's last round
//!    trip, a capture of one direction only, or no ack delay measured, a
//!    `not-captured` note "unconfirmed: no ack window reached it after it
//!    could have arrived"); the numbers of one gap
//!    judged alike make one finding, how many and the last in its detail
//!    (`engine::missed`), and the counts count numbers.
//!
//! Before these, a seqno that skips 512 or more (beyond the window), or that is
//! 512 or more below the highest seen, raises a `violation`
//! (`seqno-out-of-window`, with the seqno expected next): a receiver that
//! processes only the next seqno can never process it. It is not recorded (the
//! stream keeps its place) and counts as neither a first send nor a resend.
//!
//! Otherwise the message is the next in sequence. Rules 6 and 7, and a plain next
//! message, count as first sends; rule 3 and an unconfirmed rule 2 count as
//! repeats; a `spurious-resend` and rule 4 count as resends (the resend rate
//! is resends over all reliable messages captured). The first
//! reliable message of a direction sets the baseline and raises nothing. A
//! resend (or spurious resend, or expected repeat) whose bytes differ from the
//! first transmission also raises a `violation` (`resend-differs`).
//!
//! **Per input stream** (Input from one client): `input-gap` when 1 to 7
//! frames are skipped (the new Input's eight state bits, its own frame's and
//! the seven before, still hold every skipped state), `inputs-lost` when 8 or
//! more are (the spec: "an input is only missed if eight consecutive packets
//! are lost"), a note, "unconfirmed" in its detail: Inputs are never
//! acknowledged, so nothing in the capture tells packets the network lost
//! from packets the tap missed. A repeated frame number raises nothing. A frame number lower
//! than the highest is an `input-regression`: consecutive Inputs below the
//! highest make one incident (the highest stays), which raises one finding
//! when it ends (at the first Input at or above the highest, or at the end of
//! the session), at the frame where it began, with the first frame number,
//! the highest and the packet that carried it, and the number of Inputs and
//! the last frame in the detail. An Input in a packet whose header timestamp
//! is below the highest (a `reordered` packet, overtaken on the way) is as
//! old as its packet and is not judged: the specification has receivers drop
//! such unreliable messages by their timestamp.
//!
//! **Input before Synced**: the client's Inputs while a session whose Connect
//! was captured is connecting or syncing make one incident, judged when the
//! capture shows the server's Synced (seqno S; a Synced captured while the
//! session is still connecting, the Join missed by the tap, counts as well).
//! The client acks the last reliable message it processed, in order: an Input
//! in a packet acking below S was sent before the client had the Synced (the
//! proof); one acking S or more came after it had it, the tap having missed
//! the Synced's first send. The Inputs proven early raise one `violation`
//! (`input-before-synced`) at the frame of the run's first Input, with their
//! number (and of packets, when they differ) and the last one's frame in the
//! detail; the run raises nothing when its first Input's packet acks S or
//! more. An ack lower than one before it in the run (an overtaken packet)
//! counts as the highest before it, and the run keeps the Inputs' counts at
//! its first three acks only, so the proven part is never overstated. A
//! session whose Synced the capture never shows is judged at its end against
//! seqno 2 (the Synced follows Join #1: its seqno is at least 2): only the
//! Inputs of packets acking nothing or Join #1 are proven early, the tap may
//! have missed the rest.
//!
//! **Handshake**: the server's reliable message with seqno 1 to a client
//! whose Connect was captured is the first it sent the client: when the
//! capture shows it (whenever it comes: a first send the tap missed may come
//! again as a resend) and no packet of the server cut short came before, it
//! must be a Join (`handshake-first-not-join`, with its type), in a packet
//! that acks the Connect (`handshake-join-no-ack`). A first reliable message
//! captured with a higher seqno proves nothing of the first: the tap missed
//! it (its gap says so), and it is not judged.
//!
//! **Violations** (`violation` with a rule): the codec's (seqno 0, name or chat
//! too long, invalid UTF-8: one finding per message and rule;
//! oversize is its own kind), a message from the wrong side, the handshake
//! rules, a client using another player's id (consecutive messages of the
//! client naming the same id other than its own make one incident, reported
//! when a message naming another id, its own included, ends it, or at the end
//! of the session, at its first message, with both ids, the number of messages
//! and the last frame in the detail), anything but the Leave of the client's
//! own player from the server after the client's Disconnect (in the server's
//! packets that ack the Disconnect: those it sent before processing it may
//! still be in flight; one incident per session, reported at its end, at the
//! server's first packet that acks the Disconnect, with the first such
//! message's type and frame, the number of messages and packets and the last
//! frame in the detail), more than 8 players (the server's own
//! player, index 0, counts: the original server holds 8 including it), a
//! regular reliable message (Leave, Chat, Remove) the server sent to a
//! syncing client before its Synced (`regular-before-synced`: judged by
//! seqno when the Synced comes, so a Synced the capture missed, resent after
//! them, judges nothing; the messages captured while the client was syncing
//! numbered below it are one incident, at the first, with its type and seqno,
//! the Synced's, the number of messages and the last frame in the detail;
//! unreliable ones are not judged: without a seqno, a capture that missed the
//! Synced's first send would make every Update after it look early).
//!
//! **Players**: the Join answering the client's Connect (seqno 1, while
//! connecting) names its player (a capture that missed it names none: a later
//! Join may be another player's, broadcast to this client); a
//! rename counts when a Name changes that player's name (the client's request and
//! the server's broadcast count once); chats count the client's Chat messages,
//! first captures only.
//!
//! **Loss before the capture point** is estimated from the sender's cadence
//! (`engine::loss`): the header timestamps of a direction's packets (neither
//! duplicates nor overtaken), from the sender's first packet of its periodic
//! stream on: the client's first carrying an Input, the server's first
//! carrying a message of the Update family. A client waiting for the
//! handshake sends at the handshake's pace, not on its tick: no loss. An
//! overtaken packet (`reordered`) was captured: it fills a hole its gap
//! counted, and is not lost (`Cadence::overtaken`).
//!
//! **Reconnects**: a packet of the client that connects again from the same
//! address and port starts a new session (Wireshark's "port numbers reused"): a
//! Connect after the session closed, timed out or is disconnecting, a Connect
//! with another seqno after it was rejected (a repeated Connect is the same
//! attempt), or a reliable message with seqno 1 after the client's Disconnect.
//! The old session ends there: its skipped seqnos are reported then.
//!
//! **Packets the capture cut short** (snaplen): what a cut packet did not keep
//! is unknown, so nothing is inferred from its absence. The engine raises one
//! `truncated` per cut packet (the codec's error at the cut, or the cut itself
//! when it falls on a message boundary), and the messages kept whole are
//! analysed as above, with these exceptions:
//! - a cut packet whose kept bytes start as one of the last 64 packets of its
//!   direction does (their first 16 bytes: header and more), sent as long, may be that
//!   packet's network duplicate (the rest cannot be compared): its messages are
//!   counted by type and judged nothing, nor are its timestamp and ack; it
//!   takes its place among the 64 all the same;
//! - after a cut packet, seqnos above the highest captured are not a `gap` (the
//!   skipped ones are neither `lost` nor `not-captured`; captured later, they
//!   fill nothing), and acks above it are not `ack-unseen`
//!   (`engine::seq::SeqWindow::mark_cut`);
//! - a server packet cut before the handshake was judged, or while the session
//!   was connecting or syncing, may have held the Join, the first reliable
//!   message or the Synced: the handshake rules and `input-before-synced` are
//!   not judged, and no later Join names the client's player;
//! - a client packet cut since its last Input: the next frame's jump is not an
//!   `input-gap` or `inputs-lost`;
//! - a server packet cut short may have held a Leave: that server's player
//!   count no longer raises `too-many-players`.
//!
//! **Lifecycle**: `connecting` (Connect seen) -> `syncing` (Join seen) ->
//! `playing` (Synced seen) -> `disconnecting` (Disconnect seen) -> `closed` (Leave
//! after Disconnect); `rejected` (Full); `timed-out` (a peer that has sent packets
//! stays silent for more than 15 s of capture time; checked about once a second of
//! capture time and at the end; closed and rejected sessions do not time out). A
//! session whose first packet is not a Connect starts as `playing`.

use super::findings::{self, rules};
use super::wire::{
    DISCONNECT_TIMEOUT_SECS, DecodeError, ErrorKind, Id, Input, MAX_NAME_LEN, MAX_PACKET_SIZE,
    MAX_PLAYERS, Message, MessageHead, MessageType, MessageView, Packet, Sender,
};
use crate::capture::Datagram;
use crate::engine::seq::{Lookup, WINDOW};
use crate::engine::serial::SerialSpace;
use crate::engine::wire_map::{WireMap, WireSet, wire_map};
use crate::engine::{
    self, AckReach, Detail, DirState, Direction, FindingKind, MissedCounts, ProtoSession,
    ProtocolInfo, Raise, TrackerConfig,
};
use std::fmt;
use std::net::SocketAddr;
use xxhash_rust::xxh3::xxh3_64;

/// An lwar session on the engine.
pub type Session = engine::Session<LwarSession>;

/// The engine's tracker for lwar.
pub type Tracker = engine::Tracker<Analyzer>;

/// Where an lwar session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum State {
    /// Connect seen, no Join yet.
    Connecting,
    /// Join seen, Synced not yet.
    Syncing,
    /// Synced seen, or the capture started mid-game.
    #[default]
    Playing,
    /// The client sent Disconnect.
    Disconnecting,
    /// Leave after Disconnect: a graceful end.
    Closed,
    /// The server answered Full.
    Rejected,
    /// 15 s of capture time without a packet from one of the peers.
    TimedOut,
}

impl State {
    pub const fn name(self) -> &'static str {
        match self {
            State::Connecting => "connecting",
            State::Syncing => "syncing",
            State::Playing => "playing",
            State::Disconnecting => "disconnecting",
            State::Closed => "closed",
            State::Rejected => "rejected",
            State::TimedOut => "timed-out",
        }
    }

    /// Closed and rejected sessions are over; silence after them is expected.
    pub const fn is_final(self) -> bool {
        matches!(self, State::Closed | State::Rejected | State::TimedOut)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A player as the session's Joins and Names tell of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    pub id: Id,
    /// The latest name, lossily decoded if it was not UTF-8.
    pub name: String,
    pub renames: u32,
    pub chats: u64,
}

/// The Input frame numbers of the client: the highest, the packet that
/// carried it first, and an open run of frames below it.
#[derive(Debug, Default)]
struct InputStream {
    last: Option<u32>,
    last_at: u64,
    regression: engine::Regression,
}

/// lwar's part of a session: its lifecycle, its player, the handshake.
#[derive(Debug, Default)]
pub struct LwarSession {
    pub state: State,
    /// True when the capture saw the session begin (its Connect).
    pub saw_start: bool,
    /// The client's own player, from the Join that answered its Connect.
    pub player: Option<Player>,
    connect_seqno: Option<u32>,
    first_s2c_reliable_checked: bool,
    disconnect_seen: bool,
    /// The seqno of the client's first Disconnect: once the server acks it, the
    /// server has processed it.
    disconnect_seqno: Option<u32>,
    /// Full messages the server answered: rejected connection attempts.
    pub rejected_attempts: u64,
    inputs: InputStream,
    /// The client's Inputs sent while the session is connecting or syncing:
    /// one `input-before-synced` for those proven early when the Synced comes.
    early_inputs: EarlyInputs,
    /// The server's regular reliable messages (Leave, Chat, Remove) captured
    /// while the session is syncing, the first one's type and seqno, and the
    /// highest seqno: judged by the Synced's seqno when it comes.
    early_regular: engine::Run,
    early_regular_first: Option<(MessageType, u32)>,
    early_regular_max: u32,
    /// The client's messages with the same player id other than its own, and
    /// that id and its own: one `wrong-player-id` when another id ends it.
    wrong_player: engine::Run,
    wrong_ids: (Id, Id),
    /// The server's messages after it processed the Disconnect, and the first
    /// one's type: one `after-disconnect` when the session ends.
    after_disconnect: engine::Run,
    after_disconnect_first: Option<MessageType>,
    /// The Leaves the server repeats to a client that said Disconnect: one
    /// `expected-repeat` per Leave, when the session ends.
    leave_repeats: LeaveRepeats,
    /// The server's first packet (not a network duplicate) that acks the
    /// Disconnect: where it had processed it, and where the incident is
    /// raised (a packet cut short keeps its header, so a cut capture raises
    /// it at the same frame whatever messages the cut left).
    disconnect_processed_at: Option<(u64, crate::capture::Timestamp)>,
    /// A packet of the server the capture cut short came before the handshake
    /// was judged or the session was playing: its lost tail may have held the
    /// Join, the first reliable message or the Synced, so the handshake rules,
    /// the client's player and `input-before-synced` are not judged.
    lifecycle_cut: bool,
    /// A packet of the client the capture cut short came since its last Input
    /// frame: the next frame's jump is not judged (the tail may have held more).
    inputs_cut: bool,
}

impl ProtoSession for LwarSession {
    fn state(&self) -> &'static str {
        self.state.name()
    }

    fn is_final(&self) -> bool {
        self.state.is_final()
    }

    fn time_out(&mut self) {
        self.state = State::TimedOut;
    }

    fn player(&self) -> Option<engine::Player> {
        self.player.as_ref().map(|p| engine::Player {
            id: p.id.to_string(),
            name: p.name.clone(),
            renames: p.renames,
            chats: p.chats,
        })
    }
}

/// Player ids each server has announced (Join) and not yet removed (Leave), for
/// the limit of 8 players; bounded to `max_servers` servers and
/// [`MAX_IDS_PER_SERVER`] ids each, so a hostile capture cannot make it grow.
#[derive(Debug, Default)]
struct Players {
    by_server: WireMap<SocketAddr, ServerPlayers>,
    max_servers: usize,
}

/// One server's players.
#[derive(Debug, Default)]
struct ServerPlayers {
    ids: WireSet<Id>,
    /// A packet of the server was cut short by the capture: its lost tail may
    /// have held a Leave, so the count is no longer known to be complete.
    cut: bool,
}

/// Ids followed per server: far above the 8 players allowed, which are flagged
/// long before.
const MAX_IDS_PER_SERVER: usize = 1024;

impl Players {
    /// A Join of `player` on `server`: the server's player count if it is a new
    /// id, `None` if it was known (or the server is not followed, or a packet
    /// of it was cut short: a Leave may have been lost with its tail).
    fn join(&mut self, server: SocketAddr, player: Id) -> Option<usize> {
        let followed = self.by_server.len() < self.max_servers;
        let players = match self.by_server.get_mut(&server) {
            Some(p) => p,
            None if followed => self.by_server.entry(server).or_default(),
            None => return None,
        };
        let ids = &mut players.ids;
        if ids.len() >= MAX_IDS_PER_SERVER || !ids.insert(player) || players.cut {
            return None;
        }
        Some(ids.len())
    }

    fn leave(&mut self, server: SocketAddr, player: Id) {
        if let Some(p) = self.by_server.get_mut(&server) {
            p.ids.remove(&player);
        }
    }

    /// A packet of `server` was cut short by the capture.
    fn cut(&mut self, server: SocketAddr) {
        if let Some(p) = self.by_server.get_mut(&server) {
            p.cut = true;
        }
    }
}

/// lwar's analyzer: the rules above, per packet.
#[derive(Debug, Default)]
pub struct Analyzer {
    players: Players,
}

/// lwar's registered data.
pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "lwar",
    title: "lwar",
    message_types: &MESSAGE_TYPE_NAMES,
    kinds: findings::KINDS,
    rules: findings::RULES,
    malformed: &MALFORMED_NAMES,
    states: &[
        "connecting",
        "syncing",
        "playing",
        "disconnecting",
        "closed",
        "rejected",
        "timed-out",
    ],
    spec_rates: &[
        (MessageType::Input.ordinal(), 30.0),
        (MessageType::Update.ordinal(), 15.0),
        (MessageType::UpdatePos.ordinal(), 15.0),
        (MessageType::UpdateRay.ordinal(), 15.0),
        (MessageType::UpdateCircle.ordinal(), 15.0),
        (MessageType::Stats.ordinal(), 2.0),
    ],
    dissector: &super::dissect::Lwar,
};

const MESSAGE_TYPE_NAMES: [&str; MessageType::COUNT] = crate::names_of!(MessageType::ALL);

const MALFORMED_NAMES: [&str; ErrorKind::ALL.len()] = crate::names_of!(ErrorKind::ALL);

const TIMEOUT_NS: u64 = DISCONNECT_TIMEOUT_SECS * 1_000_000_000;

impl engine::NewAnalyzer for Analyzer {
    fn new(config: &TrackerConfig) -> Self {
        Analyzer {
            players: Players {
                by_server: wire_map(),
                max_servers: config.max_servers,
            },
        }
    }
}

impl engine::Analyzer for Analyzer {
    type Session = LwarSession;
    fn info(&self) -> &'static ProtocolInfo {
        &INFO
    }
    fn timeout_ns(&self) -> u64 {
        TIMEOUT_NS
    }

    fn src_is_server(&self, d: &Datagram<'_>) -> bool {
        match Packet::new_checked(d.payload)
            .ok()
            .as_ref()
            .map(sender_side)
        {
            Some(Some(side)) => side == Sender::Server,
            _ => d.src.port() == super::wire::DEFAULT_PORT,
        }
    }

    /// A client that connects again from the same address and port: its
    /// Connect after the session closed, timed out or is disconnecting, or a new
    /// Connect (another seqno) after it was rejected; or its reliable sequence
    /// starting again at 1 after its Disconnect.
    #[inline]
    fn restarts(&self, session: &Session, d: &Datagram<'_>) -> bool {
        let s = &session.proto;
        // Only these states can answer yes: the packet is not decoded for the
        // others (almost every packet), as the analysis decodes it next. They
        // are asked first, inline in the engine's lookup: a field is cheaper
        // to read than addresses to compare, and than a call.
        if !s.disconnect_seen
            && !matches!(
                s.state,
                State::Closed | State::TimedOut | State::Disconnecting | State::Rejected
            )
        {
            return false;
        }
        restarts_after_disconnect(session, d)
    }

    /// The incidents still open when the session ends: an Input regression,
    /// Inputs before Synced, a wrong player id, the server's messages after
    /// the Disconnect.
    fn end(&mut self, session: &mut Session, raise: &mut Raise<'_>) {
        raise.direction = Direction::ClientToServer;
        close_input_regression(&mut session.c2s, &mut session.proto.inputs, raise);
        // The Synced follows Join #1: its seqno is at least 2.
        close_early_inputs(session, raise, SYNCED_AT_LEAST);
        close_wrong_player(session, raise);
        raise.direction = Direction::ServerToClient;
        session
            .proto
            .leave_repeats
            .close_all(&mut session.s2c, raise);
        if let Some(run) = session.proto.after_disconnect.end() {
            raise.direction = Direction::ServerToClient;
            let first = session
                .proto
                .after_disconnect_first
                .unwrap_or(MessageType::Leave);
            let detail = findings::after_disconnect(first, run.frame, run.tail());
            // Raised where the server had processed the Disconnect; the first
            // message and its frame are in the detail.
            let (frame, ts) = session
                .proto
                .disconnect_processed_at
                .unwrap_or((run.frame, run.ts));
            let at = engine::RunSpan {
                frame,
                ts,
                seqno: None,
                ..run
            };
            raise.violation_at(&mut session.s2c, rules::AFTER_DISCONNECT, &at, detail);
        }
    }

    fn packet(&mut self, session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) {
        let decoded = Packet::new_checked(d.payload);
        analyse(session, &mut self.players, raise, d, &decoded);
        if d.truncated_by_capture() {
            // What the tail held is unknown: the rules that need it stand aside.
            let s = &mut session.proto;
            if raise.direction == Direction::ServerToClient {
                if !s.first_s2c_reliable_checked
                    || matches!(s.state, State::Connecting | State::Syncing)
                {
                    s.lifecycle_cut = true;
                }
                self.players.cut(session.server);
            } else {
                s.inputs_cut = true;
            }
        }
    }
}

/// [`Analyzer::restarts`](crate::engine::Analyzer::restarts) once the
/// session's state can answer yes: whether the client's packet begins a new
/// session.
#[inline(never)]
fn restarts_after_disconnect(session: &Session, d: &Datagram<'_>) -> bool {
    let s = &session.proto;
    if d.src != session.client {
        return false;
    }
    let Ok(packet) = Packet::new_checked(d.payload) else {
        return false;
    };
    let first = packet
        .messages()
        .map_while(Result::ok)
        .find_map(|m| m.seqno().map(|seqno| (m.msg_type(), seqno)));
    match first {
        Some((MessageType::Connect, seqno)) => match s.state {
            State::Closed | State::TimedOut | State::Disconnecting => true,
            State::Rejected => s.connect_seqno != Some(seqno),
            _ => false,
        },
        Some((_, 1)) => s.disconnect_seen,
        _ => false,
    }
}

/// A payload that does not decode, as the engine counts it.
fn undecodable(raise: &mut Raise<'_>, dir: &mut DirState, d: &Datagram<'_>, error: DecodeError) {
    let at_cut = matches!(error.kind(), ErrorKind::Truncated | ErrorKind::ShortHeader);
    raise.undecodable(
        dir,
        d,
        at_cut,
        error.kind() as usize,
        findings::decode(error),
    );
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

/// Everything about one packet of one session.
fn analyse(
    session: &mut Session,
    players: &mut Players,
    raise: &mut Raise<'_>,
    d: &Datagram<'_>,
    decoded: &Result<Packet<'_>, DecodeError>,
) {
    let direction = raise.direction;
    let copy = copy_of(session, direction, d, decoded);
    let packet = match decoded {
        Ok(p) => *p,
        Err(e) => {
            let this = session.dir_mut(direction);
            undecodable(raise, this, d, *e);
            if let Some(frame) = copy.duplicate_of {
                let detail = Detail::DuplicateOf { frame };
                raise.raise(this, FindingKind::DUPLICATE_PACKET, None, None, detail);
            }
            return;
        }
    };

    if direction == Direction::ServerToClient
        && copy.is_original()
        && session.proto.disconnect_processed_at.is_none()
        && session
            .proto
            .disconnect_seqno
            .is_some_and(|d| packet.ack() >= d)
    {
        session.proto.disconnect_processed_at = Some((d.frame, d.ts));
    }
    let walk = messages(session, players, raise, d, &packet, copy.is_original());

    let (this, other) = session.split(direction);
    if let Some(frame) = copy.duplicate_of {
        let detail = Detail::DuplicateOf { frame };
        raise.raise(this, FindingKind::DUPLICATE_PACKET, None, None, detail);
        return;
    }
    if copy.maybe_duplicate {
        return;
    }
    header_rules(this, other, raise, d, &packet, walk);
}

/// Whether a packet repeats a recent one of its direction.
struct NetworkCopy {
    /// The frame of the recent packet with the same bytes (a network
    /// duplicate).
    duplicate_of: Option<u64>,
    /// A packet the capture cut short that starts as a recent one does: it
    /// may be its network duplicate.
    maybe_duplicate: bool,
}

impl NetworkCopy {
    /// Neither: the packet is judged.
    fn is_original(&self) -> bool {
        self.duplicate_of.is_none() && !self.maybe_duplicate
    }
}

/// Network duplicates: the same bytes as a recent packet of this direction,
/// whether they decode or not. A packet stamped 0 carries no clock: its
/// sender repeats the same bytes on purpose (a Connect resent, a Full
/// answered again), so it is not checked.
fn copy_of(
    session: &mut Session,
    direction: Direction,
    d: &Datagram<'_>,
    decoded: &Result<Packet<'_>, DecodeError>,
) -> NetworkCopy {
    let stamped_zero = matches!(decoded, Ok(p) if p.timestamp() == 0);
    // A packet the capture cut short is never judged a duplicate (its bytes
    // are a prefix); if a recent packet of its direction starts as it does, it
    // may be that packet's network duplicate: nothing in it is judged.
    let maybe_duplicate = !stamped_zero && session.dir_mut(direction).may_duplicate(d);
    let duplicate_of = if stamped_zero {
        None
    } else {
        session.dir_mut(direction).duplicate_datagram(d)
    };
    NetworkCopy {
        duplicate_of,
        maybe_duplicate,
    }
}

/// What a packet's messages told of it.
#[derive(Debug, Clone, Copy)]
struct Walk {
    /// Every message decoded.
    whole: bool,
    /// It carries an unreliable message.
    has_unreliable: bool,
    /// It carries a message of its sender's periodic stream.
    periodic: bool,
}

/// A packet's messages: counted by type, and each judged ([`message`]) when
/// the packet is `original` (not a network duplicate).
fn messages(
    session: &mut Session,
    players: &mut Players,
    raise: &mut Raise<'_>,
    d: &Datagram<'_>,
    packet: &Packet<'_>,
    original: bool,
) -> Walk {
    let direction = raise.direction;
    let mut walk = Walk {
        whole: true,
        has_unreliable: false,
        periodic: false,
    };
    // Found, not read: a message no rule judges (the server's Update
    // family, most of what it sends) is counted by its type and length, its
    // fields never read.
    for item in &mut packet.heads() {
        match item {
            Ok(head) => {
                let k = kind_of(head.msg_type);
                let this = session.dir_mut(direction);
                let ordinal = usize::from(k.ordinal) % engine::MAX_MESSAGE_TYPES;
                this.messages[ordinal] += 1;
                this.message_bytes[ordinal] += head.bytes.len() as u64;
                walk.has_unreliable |= !k.reliable;
                walk.periodic |= k.periodic[direction as usize];
                // A message no rule reads, unless the client said Disconnect
                // (the server's messages after it): nothing to judge.
                let inert = k.inert[direction as usize] && session.proto.disconnect_seqno.is_none();
                if original && !inert {
                    // The client's Input, most of what it sends: judged
                    // inline by the one rule that reads it ([`message`]
                    // would find nothing else to judge in it).
                    match head.input() {
                        Some(input) if direction == Direction::ClientToServer => {
                            client_input(session, raise, packet, input);
                        }
                        _ => message(session, players, raise, packet, head, k),
                    }
                }
            }
            Err(e) => {
                walk.whole = false;
                undecodable(raise, session.dir_mut(direction), d, e)
            }
        }
    }
    walk
}

/// The rules of a judged packet's header and size: its timestamp, its ack,
/// oversize, and the jitter sample.
fn header_rules(
    this: &mut DirState,
    other: &mut DirState,
    raise: &mut Raise<'_>,
    d: &Datagram<'_>,
    packet: &Packet<'_>,
    walk: Walk,
) {
    let timestamp = packet.timestamp();
    let overtaken = header_timestamp(this, raise, timestamp, walk.periodic);
    let ack = packet.ack();
    this.cumulative_ack(other, raise, ack, d.ts, d.frame, overtaken);
    // An ack in a packet that decoded whole (and was not of the unseen, so
    // taken): evidence of what its receiver had, for `spurious-resend`.
    if walk.whole && this.max_ack.is_some_and(|m| ack <= m) {
        this.max_ack_whole = Some(this.max_ack_whole.map_or(ack, |w| w.max(ack)));
    }

    // The length sent, not the length captured: a snaplen does not hide an oversize.
    if d.payload_len > MAX_PACKET_SIZE {
        let detail = Detail::Oversize {
            len: d.payload_len,
            max: MAX_PACKET_SIZE,
        };
        raise.raise(this, FindingKind::OVERSIZE, None, None, detail);
    }
    if walk.has_unreliable && timestamp != 0 {
        this.jitter_sample(d.ts, timestamp);
    }
}

/// Whether a packet of this direction stamped `timestamp` was overtaken:
/// stamped before one captured earlier (0 orders nothing).
fn overtaken(this: &DirState, timestamp: u32) -> bool {
    timestamp != 0
        && this
            .max_timestamp
            .is_some_and(|highest| stamped_before(timestamp, highest))
}

/// Whether `timestamp` is before `highest` on the sender's u32 millisecond
/// clock, which wraps after 49.7 days (a server's clock counts from its
/// start): wrap-safe, as serial numbers are (RFC 1982), so the stamps after
/// the wrap are not all taken for older ones.
fn stamped_before(timestamp: u32, highest: u32) -> bool {
    SerialSpace::U32.newer(highest, timestamp)
}

/// Whether a message of type `t` makes its packet one of the sender's
/// periodic stream, the one the loss estimate follows from its first packet
/// on (`engine::loss`): the client's Input (every frame, ~30 Hz), the
/// server's Update family (every tick, ~15 Hz). Before them, the handshake's
/// packets and keepalives are sent at its own pace, not on the tick.
const fn is_periodic(direction: Direction, t: MessageType) -> bool {
    match direction {
        Direction::ClientToServer => matches!(t, MessageType::Input),
        Direction::ServerToClient => matches!(
            t,
            MessageType::Update
                | MessageType::UpdatePos
                | MessageType::UpdateRay
                | MessageType::UpdateCircle
        ),
    }
}

/// What the analysis asks of a message type on every message, looked up by
/// its wire id in one load ([`KINDS_BY_ID`]) rather than by matches on the
/// type: its counters' ordinal, whether it is reliable, whether it comes from
/// the wrong side and whether it is of the sender's periodic stream, for
/// each direction (indexed by `Direction as usize`).
#[derive(Debug, Clone, Copy)]
struct Kind {
    ordinal: u8,
    reliable: bool,
    wrong_side: [bool; 2],
    periodic: [bool; 2],
    /// Of the rules of [`message`], only the server's messages after the
    /// Disconnect can read it: unreliable (no seqno, no string), from its
    /// right side, and no arm of [`lifecycle`] takes it (the Update family,
    /// Stats and Collision from the server).
    inert: [bool; 2],
}

/// [`Kind`] by wire id (ids that are no type are never asked: a message
/// decoded has a type).
static KINDS_BY_ID: [Kind; 256] = kinds_by_id();

const fn kinds_by_id() -> [Kind; 256] {
    let mut out = [Kind {
        ordinal: 0,
        reliable: false,
        wrong_side: [false; 2],
        periodic: [false; 2],
        inert: [false; 2],
    }; 256];
    let mut i = 0;
    while i < MessageType::COUNT {
        let t = MessageType::ALL[i];
        let c2s = Direction::ClientToServer as usize;
        let s2c = Direction::ServerToClient as usize;
        let mut wrong_side = [false; 2];
        match t.sender() {
            Sender::Client => wrong_side[s2c] = true,
            Sender::Server => wrong_side[c2s] = true,
            Sender::Both => {}
        }
        let mut periodic = [false; 2];
        periodic[c2s] = is_periodic(Direction::ClientToServer, t);
        periodic[s2c] = is_periodic(Direction::ServerToClient, t);
        let mut inert = [false; 2];
        inert[c2s] =
            !t.is_reliable() && !wrong_side[c2s] && !has_lifecycle(Direction::ClientToServer, t);
        inert[s2c] =
            !t.is_reliable() && !wrong_side[s2c] && !has_lifecycle(Direction::ServerToClient, t);
        out[t.id() as usize] = Kind {
            ordinal: t.ordinal() as u8,
            reliable: t.is_reliable(),
            wrong_side,
            periodic,
            inert,
        };
        i += 1;
    }
    out
}

/// Whether an arm of [`lifecycle`] takes a message of type `t` in
/// `direction` (kept beside it: its match, type by type and side by side).
const fn has_lifecycle(direction: Direction, t: MessageType) -> bool {
    match direction {
        Direction::ClientToServer => matches!(
            t,
            MessageType::Connect
                | MessageType::Disconnect
                | MessageType::Name
                | MessageType::Chat
                | MessageType::Selection
                | MessageType::Input
        ),
        Direction::ServerToClient => matches!(
            t,
            MessageType::Join
                | MessageType::Synced
                | MessageType::Leave
                | MessageType::Full
                | MessageType::Name
        ),
    }
}

/// The [`Kind`] of message type `t`.
#[inline(always)]
fn kind_of(t: MessageType) -> &'static Kind {
    &KINDS_BY_ID[t.id() as usize]
}

/// The header timestamp: lower than the highest seen means the packet was
/// overtaken (`reordered`; returns true). 0 means "no unreliable payload" (the
/// original server stamps its Full-only packets so) and orders nothing. A
/// packet not overtaken samples the sender's cadence once its periodic
/// stream has begun (`periodic`: this packet carries a message of it).
fn header_timestamp(
    this: &mut DirState,
    raise: &mut Raise<'_>,
    timestamp: u32,
    periodic: bool,
) -> bool {
    if timestamp == 0 {
        return false;
    }
    match this.max_timestamp {
        Some(highest) if stamped_before(timestamp, highest) => {
            this.cadence.overtaken(timestamp);
            raise.raise(
                this,
                FindingKind::REORDERED,
                None,
                None,
                Detail::Timestamp { timestamp, highest },
            );
            true
        }
        _ => {
            this.cadence.stamp(timestamp, periodic);
            this.max_timestamp = Some(timestamp);
            false
        }
    }
}

/// The rules of a message's bytes, and who may send what: the codec's
/// violations, a message from the wrong side, and anything but the client's own
/// Leave from the server after the client's Disconnect.
#[inline(always)]
fn senders_rules(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    m: &MessageView<'_>,
    k: &Kind,
) {
    let direction = raise.direction;
    let t = m.msg_type();
    let seqno = m.seqno();
    let c2s = direction == Direction::ClientToServer;
    // Only reliable messages have a seqno or a string to break a rule with.
    if k.reliable && m.may_violate() {
        for v in m.violations() {
            let this = session.dir_mut(direction);
            raise.violation(
                this,
                findings::codec_rule(v.kind()),
                seqno,
                findings::codec(v),
            );
        }
    }
    if k.wrong_side[direction as usize] {
        let this = session.dir_mut(direction);
        raise.violation(this, rules::WRONG_SENDER, seqno, findings::message(t));
    }
    // After Disconnect the server may send only the Leave of the client's own player;
    // judged from the server's first packet that acks the Disconnect (packets it
    // sent before it processed the Disconnect may still be on their way).
    let disconnect_processed = session
        .proto
        .disconnect_seqno
        .is_some_and(|d| packet.ack() >= d);
    if c2s || !disconnect_processed {
        return;
    }
    let own_leave = match m.message {
        Message::Leave { player, .. } => {
            session.proto.player.as_ref().is_none_or(|p| p.id == player)
        }
        _ => false,
    };
    if !own_leave
        && session
            .proto
            .after_disconnect
            .hit(raise.frame, raise.ts, seqno)
    {
        session.proto.after_disconnect_first = Some(t);
    }
}

/// One message of a packet that is not a network duplicate, read here.
/// Out of line: inlined, its rules made the packet's loop one body too big
/// to keep its state in registers, and every message paid the reloads
///
#[inline(never)]
fn message(
    session: &mut Session,
    players: &mut Players,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    head: MessageHead<'_>,
    k: &Kind,
) {
    let m = &head.view();
    let direction = raise.direction;
    let seqno = m.seqno();
    let c2s = direction == Direction::ClientToServer;
    senders_rules(session, raise, packet, m, k);
    // Repeats of a reliable message are not new chats.
    let first_capture = match seqno {
        Some(seqno) => reliable(session, raise, packet, m, seqno),
        None => true,
    };
    if !c2s && first_capture {
        early_regular(session, raise, m);
    }
    lifecycle(session, players, raise, packet, m, first_capture);
}

/// A regular reliable message of the server while the client is syncing:
/// sent before the Synced if its seqno is lower, which the Synced's seqno
/// will tell.
fn early_regular(session: &mut Session, raise: &mut Raise<'_>, m: &MessageView<'_>) {
    if session.proto.state == State::Syncing
        && let Some(seqno) = m.seqno()
        && matches!(
            m.message,
            Message::Leave { .. } | Message::Chat { .. } | Message::Remove { .. }
        )
    {
        let p = &mut session.proto;
        if p.early_regular.hit(raise.frame, raise.ts, Some(seqno)) {
            p.early_regular_first = Some((m.msg_type(), seqno));
        }
        p.early_regular_max = p.early_regular_max.max(seqno);
    }
}

/// What a message does to the session: the lifecycle, the players, and the
/// client's own id (`first_capture`: not a repeat of a reliable message).
/// [`has_lifecycle`] lists the types and sides its arms take.
fn lifecycle(
    session: &mut Session,
    players: &mut Players,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    m: &MessageView<'_>,
    first_capture: bool,
) {
    let seqno = m.seqno();
    let c2s = raise.direction == Direction::ClientToServer;
    let own = session.proto.player.as_ref().map(|p| p.id);
    match m.message {
        Message::Connect { seqno, .. } if c2s => {
            if session.c2s.packets == 1 && session.s2c.packets == 0 {
                session.proto.saw_start = true;
                session.proto.state = State::Connecting;
            }
            session.proto.connect_seqno.get_or_insert(seqno);
        }
        Message::Join { player, name, .. } if !c2s => {
            join(session, players, raise, seqno, player, name.as_bytes());
        }
        Message::Synced { .. }
            if !c2s && matches!(session.proto.state, State::Connecting | State::Syncing) =>
        {
            session.proto.state = State::Playing;
            close_early_inputs(session, raise, seqno);
            if let Some(synced) = seqno {
                close_early_regular(session, raise, synced);
            }
        }
        Message::Disconnect { seqno, .. } if c2s => {
            session.proto.disconnect_seen = true;
            session.proto.disconnect_seqno.get_or_insert(seqno);
            if !session.proto.state.is_final() {
                session.proto.state = State::Disconnecting;
            }
        }
        Message::Leave { player, .. } if !c2s => {
            players.leave(session.server, player);
            if session.proto.disconnect_seen && own.is_none_or(|own| own == player) {
                session.proto.state = State::Closed;
            }
        }
        Message::Full if !c2s => {
            session.proto.state = State::Rejected;
            session.proto.rejected_attempts += 1;
        }
        Message::Name { player, name, .. } => {
            rename(session, player, name.as_bytes());
            if c2s {
                player_id(session, raise, own, seqno, player);
            }
        }
        Message::Chat { player, .. } if c2s => {
            if first_capture && let Some(p) = session.proto.player.as_mut() {
                p.chats += 1;
            }
            player_id(session, raise, own, seqno, player);
        }
        Message::Selection { player, .. } if c2s => player_id(session, raise, own, seqno, player),
        Message::Input(input) if c2s => client_input(session, raise, packet, input),
        _ => {}
    }
}

/// The client's Input: all [`message`] judges of it (no seqno, no string,
/// the client's to send), called by the packet's loop without reading the
/// rest of the message.
#[inline(always)]
fn client_input(session: &mut Session, raise: &mut Raise<'_>, packet: &Packet<'_>, input: Input) {
    if session.proto.saw_start
        && !session.proto.lifecycle_cut
        && matches!(session.proto.state, State::Connecting | State::Syncing)
    {
        let ack = packet.ack();
        session.proto.early_inputs.hit(raise.frame, raise.ts, ack);
    }
    let own = session.proto.player.as_ref().map(|p| p.id);
    player_id(session, raise, own, None, input.player);
    let after_cut = std::mem::take(&mut session.proto.inputs_cut);
    // The header's timestamp is judged after the messages: the
    // packet's order is read before it moves.
    let overtaken = overtaken(&session.c2s, packet.timestamp());
    input_stream(
        &mut session.c2s,
        &mut session.proto.inputs,
        raise,
        input.frame,
        after_cut,
        overtaken,
    );
}

/// A Join from the server: the Join answering the client's Connect names its
/// player; every Join counts on the server's player list.
fn join(
    session: &mut Session,
    players: &mut Players,
    raise: &mut Raise<'_>,
    seqno: Option<u32>,
    player: Id,
    name: &[u8],
) {
    if session.proto.state == State::Connecting {
        session.proto.state = State::Syncing;
        // A packet cut before it may have held the Join that answered the
        // Connect, and a Join with a later seqno comes after the first (the
        // tap missed it): then this one may be another player's, and names
        // no one.
        if !session.proto.lifecycle_cut && seqno == Some(1) {
            let mut own_name = String::with_capacity(MAX_NAME_LEN);
            own_name.push_str(&String::from_utf8_lossy(name));
            session.proto.player = Some(Player {
                id: player,
                name: own_name,
                renames: 0,
                chats: 0,
            });
        }
    }
    if let Some(count) = players.join(session.server, player)
        && count > MAX_PLAYERS
    {
        raise.violation(
            &mut session.s2c,
            rules::TOO_MANY_PLAYERS,
            Some(seqno.unwrap_or(0)),
            findings::players(count as u64),
        );
    }
}

/// A Name: the client's request and the server's broadcast carry the same name,
/// so a rename of the client's player counts once, when the name changes.
fn rename(session: &mut Session, player: Id, name: &[u8]) {
    let new = String::from_utf8_lossy(name);
    if let Some(p) = session.proto.player.as_mut()
        && p.id == player
        && p.name != new
    {
        // In place: the buffer has room for any name the spec allows.
        p.name.clear();
        p.name.push_str(&new);
        p.renames += 1;
    }
}

/// The input states one Input carries: bit 0 its own frame's, bits 1 to 7 the
/// seven frames before (the spec's Input section).
pub const INPUT_HISTORY: u32 = 8;

/// The Input frame numbers of one client. `after_cut`: a packet cut short by
/// the capture came since the last frame (its tail may have held frames
/// between). `overtaken`: its packet was stamped before one captured earlier
/// (`reordered`): its frame is as old as the packet, and is not judged.
/// Frames below the highest form one `input-regression` incident, reported
/// when a frame at or above the highest ends it (or the session ends).
fn input_stream(
    dir: &mut DirState,
    stream: &mut InputStream,
    raise: &mut Raise<'_>,
    frame: u32,
    after_cut: bool,
    overtaken: bool,
) {
    let Some(last) = stream.last else {
        stream.last = Some(frame);
        stream.last_at = raise.frame;
        return;
    };
    if frame < last {
        if !overtaken {
            stream.regression.below(frame, last, raise.frame, raise.ts);
        }
        return;
    }
    close_input_regression(dir, stream, raise);
    let detail = findings::input_frames(frame, last);
    // The spec's Input section: each state byte holds the current state (bit 0)
    // and the seven before it, and the server reads `state & ~(0xff << (frameNo
    // - lastFrameNo))`: a jump of up to 8 frames (1 to 7 skipped) keeps every
    // skipped state in the new packet's bits; a jump of 9 (8 skipped) leaves the
    // oldest skipped frame outside them: "an input is only missed if eight
    // consecutive packets are lost".
    match frame - last {
        0 => return,
        1 => {}
        _ if after_cut => {}
        2..=INPUT_HISTORY => raise.raise(dir, findings::INPUT_GAP, None, None, detail),
        _ => {
            let detail = findings::inputs_lost(frame, last);
            raise.raise(dir, findings::INPUTS_LOST, None, None, detail)
        }
    }
    stream.last = Some(frame);
    stream.last_at = raise.frame;
}

/// Ends an open run of Input frames below the highest: one
/// `input-regression`, at the frame where it began.
fn close_input_regression(dir: &mut DirState, stream: &mut InputStream, raise: &mut Raise<'_>) {
    if let Some(run) = stream.regression.end() {
        let detail = findings::input_regression(run, stream.last_at);
        raise.raise_at(dir, findings::INPUT_REGRESSION, run.frame, run.ts, detail);
    }
}

/// A message of the client naming `used` as its player: consecutive ones
/// with the same id other than its own (`own`, once known) make one
/// `wrong-player-id`, reported when a message with another id ends the run
/// (or the session ends).
#[inline(always)]
fn player_id(
    session: &mut Session,
    raise: &mut Raise<'_>,
    own: Option<Id>,
    seqno: Option<u32>,
    used: Id,
) {
    let Some(own) = own else {
        return;
    };
    // The common case, inline: the client's own id, no run open.
    if used == own && !session.proto.wrong_player.is_open() {
        return;
    }
    wrong_player_id(session, raise, own, seqno, used);
}

/// [`player_id`] once `used` is another id than `own`, or a run is open.
#[inline(never)]
fn wrong_player_id(
    session: &mut Session,
    raise: &mut Raise<'_>,
    own: Id,
    seqno: Option<u32>,
    used: Id,
) {
    let s = &session.proto;
    if used == own || (s.wrong_player.is_open() && s.wrong_ids != (used, own)) {
        close_wrong_player(session, raise);
    }
    if used != own && session.proto.wrong_player.hit(raise.frame, raise.ts, seqno) {
        session.proto.wrong_ids = (used, own);
    }
}

/// Ends the run of messages with a wrong player id, if one is open: one
/// `wrong-player-id`, at its first message.
fn close_wrong_player(session: &mut Session, raise: &mut Raise<'_>) {
    if let Some(run) = session.proto.wrong_player.end() {
        let direction = std::mem::replace(&mut raise.direction, Direction::ClientToServer);
        let (used, own) = session.proto.wrong_ids;
        let detail = findings::player(used, own, run.tail());
        raise.violation_at(&mut session.c2s, rules::WRONG_PLAYER_ID, &run, detail);
        raise.direction = direction;
    }
}

/// The client's Inputs while connecting or syncing, with the acks of their
/// packets: an Input proves it came before the Synced only if its packet acks
/// below the Synced's seqno, which is known when the Synced is captured.
/// Acks only grow in the order of sending, so the Inputs proven early are the
/// run's first ones; the run keeps how far it stood at its first three acks.
/// Allocates nothing.
#[derive(Debug, Clone, Copy, Default)]
struct EarlyInputs {
    run: engine::Run,
    /// The highest ack of the run's packets so far.
    ack: u32,
    /// The run as it stood at the end of its first ack, and at the end of
    /// the ack before the current one (each with that ack).
    first: Option<(u32, engine::RunSpan)>,
    before: Option<(u32, engine::RunSpan)>,
}

impl EarlyInputs {
    /// An Input of packet `frame`, which acks `ack`.
    fn hit(&mut self, frame: u64, ts: crate::capture::Timestamp, ack: u32) {
        match self.run.span() {
            None => {
                self.ack = ack;
                self.first = None;
                self.before = None;
            }
            Some(span) if ack > self.ack => {
                let at = Some((self.ack, span));
                if self.first.is_none() {
                    self.first = at;
                } else {
                    self.before = at;
                }
                self.ack = ack;
            }
            Some(_) => {}
        }
        self.run.hit(frame, ts, None);
    }

    /// The run ends: the Inputs proven sent before the Synced numbered
    /// `synced` (those of packets acking below it).
    fn end(&mut self, synced: Option<u32>) -> Option<engine::RunSpan> {
        let run = self.run.end()?;
        let synced = synced?;
        if self.ack < synced {
            return Some(run);
        }
        [self.before, self.first]
            .into_iter()
            .flatten()
            .find(|&(ack, _)| ack < synced)
            .map(|(_, span)| span)
    }
}

/// The lowest seqno a Synced can have (Join #1 comes first): what a session
/// that ends without a captured Synced judges its early Inputs against.
const SYNCED_AT_LEAST: Option<u32> = Some(2);

/// Ends the run of the client's Inputs before Synced, if one is open, at the
/// Synced numbered `synced` (at the session's end, [`SYNCED_AT_LEAST`]): one
/// `input-before-synced` for the Inputs proven early, at the run's first.
fn close_early_inputs(session: &mut Session, raise: &mut Raise<'_>, synced: Option<u32>) {
    if let Some(run) = session.proto.early_inputs.end(synced) {
        let direction = std::mem::replace(&mut raise.direction, Direction::ClientToServer);
        let detail = findings::input_before_synced(run.tail());
        raise.violation_at(&mut session.c2s, rules::INPUT_BEFORE_SYNCED, &run, detail);
        raise.direction = direction;
    }
}

/// The Synced came with seqno `synced`: the regular messages captured while
/// the client was syncing that the server sent before it (a lower seqno; seqnos
/// number the sends, so a capture that missed a packet changes nothing) are
/// one `regular-before-synced`, at the first. Those sent after it (a Synced
/// the capture missed, resent later) are not judged.
fn close_early_regular(session: &mut Session, raise: &mut Raise<'_>, synced: u32) {
    let p = &mut session.proto;
    let (Some(run), Some((first, first_seqno))) =
        (p.early_regular.end(), p.early_regular_first.take())
    else {
        return;
    };
    let max = std::mem::take(&mut p.early_regular_max);
    // The syncing client's seqnos count from Join #1: far from any wrap.
    if first_seqno < synced {
        // All of them before the Synced, or only the first known to be.
        let run = match max < synced {
            true => run,
            false => engine::RunSpan {
                messages: 1,
                packets: 1,
                last_frame: run.frame,
                ..run
            },
        };
        let detail = findings::regular_before_synced(first, first_seqno, synced, run.tail());
        raise.violation_at(&mut session.s2c, rules::REGULAR_BEFORE_SYNCED, &run, detail);
    }
}

/// The handshake: the first reliable message to a client whose Connect was
/// captured (seqno 1, when the capture shows it) must be Join #1, in a packet
/// that acks the Connect.
fn handshake(
    session: &mut Session,
    raise: &mut Raise<'_>,
    packet: &Packet<'_>,
    t: MessageType,
    seqno: u32,
) {
    if !session.proto.saw_start || session.proto.first_s2c_reliable_checked || seqno != 1 {
        // A first reliable message captured with a later seqno: the tap
        // missed the first, which is judged if it comes again.
        return;
    }
    session.proto.first_s2c_reliable_checked = true;
    if session.proto.lifecycle_cut {
        // A packet cut before this one may have held the first reliable message.
        return;
    }
    if !(t == MessageType::Join && seqno == 1) {
        raise.violation(
            &mut session.s2c,
            rules::HANDSHAKE_FIRST_NOT_JOIN,
            Some(seqno),
            findings::message(t),
        );
    }
    if let Some(connect) = session.proto.connect_seqno
        && packet.ack() < connect
    {
        raise.violation(
            &mut session.s2c,
            rules::HANDSHAKE_JOIN_NO_ACK,
            Some(seqno),
            findings::connect_not_acked(packet.ack(), connect),
        );
    }
}

/// The Leaves a server repeats to a client that said Disconnect, each one
/// incident (the specification's way: the server repeats the Leave until the
/// client stops repeating its Disconnect). A few are followed at once (a
/// client is told its own Leave and, at most, another player's); past that,
/// the oldest is reported to make room. Allocates nothing.
#[derive(Debug, Clone, Copy, Default)]
struct LeaveRepeats {
    /// Each Leave's repeats, by its seqno, with the frame of its first send.
    runs: engine::KeyedRuns<u32, u64, 4>,
}

impl LeaveRepeats {
    /// A repeat of Leave `seqno`, first sent in `first_frame`.
    fn repeat(&mut self, dir: &mut DirState, raise: &mut Raise<'_>, seqno: u32, first_frame: u64) {
        let (frame, ts) = (raise.frame, raise.ts);
        let oldest = self
            .runs
            .hit_or_evict(seqno, first_frame, frame, ts, Some(seqno), |&first| first);
        if let Some(leave) = oldest {
            Self::close(leave, dir, raise);
        }
    }

    /// Reports a Leave's run: one `expected-repeat`, at its first repeat.
    fn close(leave: engine::KeyedSpan<u32, u64>, dir: &mut DirState, raise: &mut Raise<'_>) {
        let detail = findings::expected_repeats(leave.first, leave.span.tail());
        raise.raise_run(dir, findings::EXPECTED_REPEAT, None, &leave.span, detail);
    }

    /// Reports every open run, the earliest Leave first.
    fn close_all(&mut self, dir: &mut DirState, raise: &mut Raise<'_>) {
        while let Some(leave) = self.runs.end_oldest(|&first| first) {
            Self::close(leave, dir, raise);
        }
    }
}

/// The first capture of a seqno, as the window remembers it.
#[derive(Clone, Copy)]
struct Sighting {
    frame: u64,
    ts: crate::capture::Timestamp,
    tries: u32,
    hash: u64,
}

/// A seqno captured before: an expected repeat, a spurious resend (the other
/// side had acked it in a packet captured earlier), a resend, or the same seqno
/// twice in one packet; and a violation if its bytes differ from the first.
#[allow(clippy::too_many_arguments)]
fn repeat(
    this: &mut DirState,
    other: &DirState,
    raise: &mut Raise<'_>,
    t: MessageType,
    seqno: u32,
    hash: u64,
    first: Sighting,
    expected: Option<&mut LeaveRepeats>,
    overtaken: bool,
) {
    if let Some(leaves) = expected {
        this.expected_repeats += 1;
        leaves.repeat(this, raise, seqno, first.frame);
    } else {
        judge_repeat(this, other, raise, seqno, first, overtaken);
    }
    if hash != first.hash {
        raise.violation(
            this,
            rules::RESEND_DIFFERS,
            Some(seqno),
            findings::message(t),
        );
    }
}

/// A repeat that is not the expected one: a spurious resend, a repeat by
/// design, a resend, or the same seqno twice in one packet.
fn judge_repeat(
    this: &mut DirState,
    other: &DirState,
    raise: &mut Raise<'_>,
    seqno: u32,
    first: Sighting,
    overtaken: bool,
) {
    let delay_ns = raise.ts.since(first.ts);
    let repeat = Detail::Repeat {
        first_frame: first.frame,
        delay_ns,
        tries: first.tries + 1,
    };
    // Acked before, and seen in an earlier packet: an in-packet duplicate of a
    // first capture was never resent, whatever the acks say.
    let in_same_packet = first.frame == raise.frame;
    let acked = other.max_ack.filter(|&a| a >= seqno && !in_same_packet);
    let (kind, detail) = if let Some(ack) = acked
        && other.max_ack_whole.is_none_or(|w| w < seqno)
    {
        // Acked only in packets that do not decode: unconfirmed.
        this.repeats += 1;
        let detail = Detail::AckUndecodable {
            ack,
            first_frame: first.frame,
        };
        (FindingKind::REPEAT, detail)
    } else if let Some(ack) = acked {
        let reach = this.ack_reached_sender(other, seqno, raise.ts, overtaken);
        match reach {
            AckReach::Reached => {
                this.resends += 1;
                let detail = Detail::AckedBefore {
                    ack,
                    first_frame: first.frame,
                };
                (FindingKind::SPURIOUS_RESEND, detail)
            }
            // The repeat may have crossed the ack in flight.
            AckReach::Unconfirmed { .. } | AckReach::Overtaken => {
                this.repeats += 1;
                let (since_ack_ns, round_trip_ns) = match reach {
                    AckReach::Unconfirmed {
                        since_ack_ns,
                        round_trip_ns,
                    } => (since_ack_ns, round_trip_ns),
                    _ => (None, None),
                };
                let detail = Detail::AckInFlight {
                    ack,
                    first_frame: first.frame,
                    since_ack_ns,
                    round_trip_ns,
                    overtaken: reach == AckReach::Overtaken,
                };
                (FindingKind::REPEAT, detail)
            }
        }
    } else if !in_same_packet && this.srtt_ns().is_none_or(|srtt| (delay_ns as f64) < srtt) {
        // Before an ack could have come back: the sender repeats by design.
        this.repeats += 1;
        (FindingKind::REPEAT, repeat)
    } else if !in_same_packet {
        this.resends += 1;
        (FindingKind::RESEND, repeat)
    } else {
        (FindingKind::DUPLICATE_IN_PACKET, repeat)
    };
    raise.raise(this, kind, None, Some(seqno), detail);
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

    if direction == Direction::ServerToClient {
        handshake(session, raise, packet, t, seqno);
    }

    // A Leave repeated to a client that said Disconnect is the
    // specification's way, not a resend.
    let expected = direction == Direction::ServerToClient
        && t == MessageType::Leave
        && session.proto.disconnect_seen;
    let mut leaves = expected.then(|| std::mem::take(&mut session.proto.leave_repeats));
    // Sent before a packet captured earlier: when, the capture cannot tell.
    let overtaken = overtaken(session.dir(direction), packet.timestamp());
    let first_capture = reliable_rules(session, raise, t, seqno, hash, leaves.as_mut(), overtaken);
    if let Some(leaves) = leaves {
        session.proto.leave_repeats = leaves;
    }
    first_capture
}

/// [`reliable`]'s rules on the direction's sequence; `leaves`, for a Leave
/// repeated to a client that said Disconnect.
fn reliable_rules(
    session: &mut Session,
    raise: &mut Raise<'_>,
    t: MessageType,
    seqno: u32,
    hash: u64,
    leaves: Option<&mut LeaveRepeats>,
    overtaken: bool,
) -> bool {
    let direction = raise.direction;
    let frame = raise.frame;
    let ts = raise.ts;
    let (this, other) = session.split(direction);
    let lookup = this.seq.lookup(seqno);
    // A receiver processes only the next seqno: one far beyond the window, or
    // far behind it, can never be processed. The stream keeps its place.
    let out_of_window = match lookup {
        Lookup::Jump { missing } => missing as usize >= WINDOW,
        Lookup::TooOld => true,
        _ => false,
    };
    if out_of_window {
        let expected = this.seq.highest().map_or(seqno, |h| h.wrapping_add(1));
        let detail = Detail::OutOfWindow { seqno, expected };
        raise.violation(this, rules::SEQNO_OUT_OF_WINDOW, Some(seqno), detail);
        return false;
    }
    let first_capture = !matches!(lookup, Lookup::Seen { .. });
    match lookup {
        // A seqno a cut tail may have held is judged nothing either.
        Lookup::Baseline | Lookup::Next | Lookup::BeforeBaseline | Lookup::AfterCut => {
            this.first_sends += 1
        }
        Lookup::Fill => {
            this.first_sends += 1;
            let highest = this.seq.highest().unwrap_or(seqno);
            raise.raise(
                this,
                FindingKind::OUT_OF_ORDER,
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
                FindingKind::GAP,
                None,
                Some(seqno),
                Detail::Gap { highest, missing },
            );
        }
        Lookup::TooOld => {}
        Lookup::Seen {
            first_frame,
            first_ts,
            tries,
            hash: first_hash,
        } => {
            let first = Sighting {
                frame: first_frame,
                ts: first_ts,
                tries,
                hash: first_hash,
            };
            repeat(this, other, raise, t, seqno, hash, first, leaves, overtaken);
        }
    }
    let session_id = raise.session;
    let out = &mut *raise.out;
    let mut counts = MissedCounts::resume(this);
    // A number pushed out of the window unacked is lost only if an ack of it
    // could have been captured (`engine::ack_could_come`).
    let acker_last = (other.packets > 0).then_some(other.last_ts);
    let ack_delay = this.srtt_ns();
    this.seq.record(
        seqno,
        frame,
        ts,
        hash,
        |lost_seqno, gap_frame, gap_ts, acked| {
            if acked || engine::ack_could_come(gap_ts, ack_delay, acker_last) {
                counts.missed(lost_seqno, gap_frame, acked, ts, session_id, direction, out);
            } else {
                counts.unconfirmed(lost_seqno, gap_frame, ts, session_id, direction, out);
            }
        },
    );
    counts.add_to(this, out);
    first_capture
}

#[cfg(test)]
mod tests {
    //! The rules on packets built here, fed to the tracker one frame every
    //! 10 ms: each test shows one rule's findings exactly (direction, label,
    //! frame, and the detail where it says what the rule measured).
    //! `tests/lwar/findings.rs` plays every precedence rule of the contract.

    use super::*;
    use crate::engine::testing::{F, Played, compact, f};
    use crate::proto::lwar::wire::{Header, Input, MessageRepr, PacketRepr, UpdateEntry};

    const ALICE: Id = Id::new(0, 1);
    const BOB: Id = Id::new(0, 2);

    /// One capture between a client and a server on lwar's port, a frame
    /// every 10 ms.
    struct Capture(Played<Analyzer>);

    impl std::ops::Deref for Capture {
        type Target = Played<Analyzer>;
        fn deref(&self) -> &Self::Target {
            &self.0
        }
    }

    impl std::ops::DerefMut for Capture {
        fn deref_mut(&mut self) -> &mut Self::Target {
            &mut self.0
        }
    }

    impl Capture {
        fn new() -> Self {
            Capture(Played::new("10.0.0.2:40000", "10.0.0.1:32422", 1_000_000))
        }

        fn feed(&mut self, c2s: bool, payload: &[u8], len: usize) -> Vec<F> {
            let at = self.0.now_ms + 10;
            compact(&self.0.feed_at(c2s, at, payload, len))
        }

        fn send(&mut self, c2s: bool, ack: u32, timestamp: u32, m: Vec<MessageRepr>) -> Vec<F> {
            let bytes = PacketRepr {
                header: Header { ack, timestamp },
                messages: m,
            }
            .to_bytes();
            self.feed(c2s, &bytes, bytes.len())
        }

        fn c2s(&mut self, ack: u32, timestamp: u32, m: Vec<MessageRepr>) -> Vec<F> {
            self.send(true, ack, timestamp, m)
        }

        fn s2c(&mut self, ack: u32, timestamp: u32, m: Vec<MessageRepr>) -> Vec<F> {
            self.send(false, ack, timestamp, m)
        }

        fn finish(&mut self) -> Vec<F> {
            compact(&self.0.finish())
        }

        fn state(&self) -> State {
            self.session().proto.state
        }

        /// Connect #1 (frame 1); Join #1 of alice and Synced #2 (frame 2);
        /// alice's first Input, acking #2 (frame 3). Nothing raised.
        fn playing() -> Self {
            let mut c = Capture::new();
            assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
            assert_eq!(c.state(), State::Connecting);
            assert_eq!(c.s2c(1, 500, vec![join(1, ALICE), synced(2)]), []);
            assert_eq!(c.c2s(2, 100, vec![input(ALICE, 1)]), []);
            assert_eq!(c.state(), State::Playing);
            c
        }
    }

    fn connect(seqno: u32) -> MessageRepr {
        MessageRepr::Connect {
            seqno,
            name: b"alice".to_vec(),
        }
    }

    fn join(seqno: u32, player: Id) -> MessageRepr {
        MessageRepr::Join {
            seqno,
            player,
            name: b"alice".to_vec(),
        }
    }

    fn synced(seqno: u32) -> MessageRepr {
        MessageRepr::Synced { seqno }
    }

    fn input(player: Id, frame: u32) -> MessageRepr {
        MessageRepr::Input(Input {
            player,
            frame,
            ..Input::default()
        })
    }

    fn update() -> MessageRepr {
        MessageRepr::Update(vec![UpdateEntry {
            entity: Id::new(1, 7),
            x: 1,
            y: 2,
            orientation: 0,
            health: 100,
        }])
    }

    #[test]
    fn inert_messages_are_the_servers_unreliable_ones_no_lifecycle_takes() {
        let inert = |d: Direction| {
            MessageType::ALL
                .into_iter()
                .filter(|t| kind_of(*t).inert[d as usize])
                .collect::<Vec<_>>()
        };
        assert_eq!(inert(Direction::ClientToServer), []);
        assert_eq!(
            inert(Direction::ServerToClient),
            [
                MessageType::Stats,
                MessageType::Collision,
                MessageType::Update,
                MessageType::UpdatePos,
                MessageType::UpdateRay,
                MessageType::UpdateCircle,
            ]
        );
    }

    #[test]
    fn the_handshake_names_the_player_and_the_lifecycle_ends_closed() {
        let mut c = Capture::playing();
        let s = &c.session().proto;
        assert!(s.saw_start);
        assert_eq!(
            s.player.as_ref().map(|p| (p.id, p.name.as_str())),
            Some((ALICE, "alice"))
        );
        assert_eq!(
            c.c2s(2, 110, vec![MessageRepr::Disconnect { seqno: 2 }]),
            []
        );
        assert_eq!(c.state(), State::Disconnecting);
        // The server's own Leave of alice, acking the Disconnect: closed.
        let leave = MessageRepr::Leave {
            seqno: 3,
            player: ALICE,
        };
        assert_eq!(c.s2c(2, 520, vec![leave]), []);
        assert_eq!(c.state(), State::Closed);
        assert_eq!(c.finish(), []);
    }

    #[test]
    fn a_session_seen_mid_game_starts_playing_and_a_full_rejects() {
        let mut c = Capture::new();
        assert_eq!(c.s2c(0, 500, vec![update()]), []);
        assert_eq!(c.state(), State::Playing);
        assert!(!c.session().proto.saw_start);
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.s2c(1, 0, vec![MessageRepr::Full]), []);
        assert_eq!(c.state(), State::Rejected);
        assert_eq!(c.session().proto.rejected_attempts, 1);
    }

    #[test]
    fn a_message_from_the_wrong_side_is_a_violation() {
        let mut c = Capture::playing();
        // Synced is the server's to send.
        assert_eq!(
            c.c2s(2, 110, vec![synced(2)]),
            [f("c2s", "violation/wrong-sender", 4)]
        );
    }

    #[test]
    fn a_packet_over_512_bytes_as_sent_is_oversize_even_when_cut() {
        let mut c = Capture::playing();
        let bytes = PacketRepr {
            header: Header {
                ack: 2,
                timestamp: 110,
            },
            messages: vec![input(ALICE, 2)],
        }
        .to_bytes();
        // Sent as 600 bytes, the capture kept the first ones: the cut falls
        // on a message boundary, so the engine raises `truncated` after the
        // analysis.
        let found = c.feed(true, &bytes, 600);
        assert_eq!(found, [f("c2s", "oversize", 4), f("c2s", "truncated", 4)]);
    }

    #[test]
    fn skipped_input_frames_are_a_gap_up_to_seven_and_lost_from_eight() {
        let mut c = Capture::playing();
        // Frames 2..=4 skipped: still held by frame 5's state bits.
        assert_eq!(
            c.c2s(2, 110, vec![input(ALICE, 5)]),
            [f("c2s", "input-gap", 4)]
        );
        // Frames 6..=13 skipped: eight, lost.
        assert_eq!(
            c.c2s(2, 120, vec![input(ALICE, 14)]),
            [f("c2s", "inputs-lost", 5)]
        );
        // The same frame again raises nothing.
        assert_eq!(c.c2s(2, 130, vec![input(ALICE, 14)]), []);
        // Below the highest: one regression when the stream is back.
        assert_eq!(c.c2s(2, 140, vec![input(ALICE, 12)]), []);
        assert_eq!(c.c2s(2, 150, vec![input(ALICE, 13)]), []);
        assert_eq!(
            c.c2s(2, 160, vec![input(ALICE, 15)]),
            [f("c2s", "input-regression", 7)]
        );
    }

    #[test]
    fn an_input_in_an_overtaken_packet_is_not_judged() {
        let mut c = Capture::playing();
        assert_eq!(
            c.c2s(2, 200, vec![input(ALICE, 3)]),
            [f("c2s", "input-gap", 4)]
        );
        // Stamped before the packet before: reordered, its Input as old.
        assert_eq!(
            c.c2s(2, 150, vec![input(ALICE, 2)]),
            [f("c2s", "reordered", 5)]
        );
        assert_eq!(c.c2s(2, 210, vec![input(ALICE, 4)]), []);
    }

    #[test]
    fn inputs_before_synced_are_one_violation_when_the_synced_comes() {
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.s2c(1, 500, vec![join(1, ALICE)]), []);
        assert_eq!(c.state(), State::Syncing);
        assert_eq!(c.c2s(1, 100, vec![input(ALICE, 1)]), []);
        assert_eq!(c.c2s(1, 110, vec![input(ALICE, 2)]), []);
        assert_eq!(
            c.s2c(1, 510, vec![synced(2)]),
            [f("c2s", "violation/input-before-synced", 3)]
        );
        assert_eq!(c.state(), State::Playing);
        assert_eq!(
            c.detail("violation/input-before-synced"),
            "Input before Synced; 2 Inputs until frame 4"
        );
    }

    fn chat(seqno: u32, player: Id) -> MessageRepr {
        MessageRepr::Chat {
            seqno,
            player,
            text: b"hi".to_vec(),
        }
    }

    #[test]
    fn a_handshake_the_tap_missed_judges_nothing() {
        // Join #1 and Synced #2 (and a Chat #3) delivered, not captured: the
        // client acks #3 and plays. The first reliable message captured is
        // #4, a Join broadcast of another player: no handshake rule, no
        // player named, no Input before Synced.
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.c2s(3, 100, vec![input(ALICE, 1)]), []);
        assert_eq!(c.s2c(1, 500, vec![join(4, BOB)]), []);
        assert!(c.session().proto.player.is_none());
        assert_eq!(c.c2s(4, 110, vec![input(ALICE, 2)]), []);
        assert_eq!(c.s2c(1, 510, vec![chat(5, BOB)]), []);
        assert_eq!(c.c2s(5, 120, vec![input(ALICE, 3)]), []);
        assert_eq!(c.finish(), []);
    }

    #[test]
    fn seqno_1_is_judged_when_the_capture_shows_it_even_late() {
        // The first send of #1 missed; it comes again after #2, and is no Join.
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.s2c(1, 500, vec![chat(2, BOB)]), []);
        assert_eq!(
            c.s2c(1, 510, vec![chat(1, BOB)]),
            [f("s2c", "violation/handshake-first-not-join", 3)]
        );
    }

    #[test]
    fn inputs_acking_the_synced_came_after_it_even_when_the_tap_missed_it() {
        // Join #1 captured; Synced #2 missed. The Inputs ack #1, then #2:
        // the client had the Synced from its second Input on. Synced #2,
        // resent, is captured: only the first Input is proven early.
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.s2c(1, 500, vec![join(1, ALICE)]), []);
        assert_eq!(c.c2s(1, 100, vec![input(ALICE, 1)]), []);
        assert_eq!(c.c2s(2, 110, vec![input(ALICE, 2)]), []);
        assert_eq!(c.c2s(2, 120, vec![input(ALICE, 3)]), []);
        assert_eq!(
            c.s2c(1, 510, vec![synced(2)]),
            [f("c2s", "violation/input-before-synced", 3)]
        );
        assert_eq!(c.state(), State::Playing);
        assert_eq!(
            c.detail("violation/input-before-synced"),
            "Input before Synced"
        );
        // All of them ack #2 or more: nothing proven.
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.s2c(1, 500, vec![join(1, ALICE)]), []);
        assert_eq!(c.c2s(2, 110, vec![input(ALICE, 2)]), []);
        assert_eq!(c.s2c(1, 510, vec![synced(2)]), []);
        assert_eq!(c.finish(), [f("c2s", "ack-unseen", 3)]);
    }

    #[test]
    fn a_synced_captured_while_connecting_ends_the_early_inputs() {
        // Join #1 missed; the client sends an Input acking nothing before
        // Synced #2, which the capture shows: proven early.
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.c2s(0, 100, vec![input(ALICE, 1)]), []);
        assert_eq!(
            c.s2c(1, 510, vec![synced(2)]),
            [f("c2s", "violation/input-before-synced", 2)]
        );
        assert_eq!(c.state(), State::Playing);
        // Without the Synced, at the end: an Input acking nothing is early
        // (the Synced's seqno is at least 2), one acking #2 is not proven.
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.c2s(0, 100, vec![input(ALICE, 1)]), []);
        assert_eq!(c.finish(), [f("c2s", "violation/input-before-synced", 2)]);
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.c2s(2, 100, vec![input(ALICE, 1)]), []);
        assert_eq!(c.finish(), []);
    }

    #[test]
    fn another_players_id_from_the_client_is_one_incident() {
        let mut c = Capture::playing();
        assert_eq!(c.c2s(2, 110, vec![input(BOB, 2)]), []);
        assert_eq!(c.c2s(2, 120, vec![input(BOB, 3)]), []);
        assert_eq!(
            c.c2s(2, 130, vec![input(ALICE, 4)]),
            [f("c2s", "violation/wrong-player-id", 4)]
        );
        assert_eq!(c.finish(), []);
    }

    #[test]
    fn the_servers_messages_after_it_processed_the_disconnect_are_one_violation() {
        let mut c = Capture::playing();
        assert_eq!(
            c.c2s(2, 110, vec![MessageRepr::Disconnect { seqno: 2 }]),
            []
        );
        // Not acking the Disconnect: sent before the server processed it.
        assert_eq!(c.s2c(1, 510, vec![update()]), []);
        // Acking it: only alice's Leave may follow.
        assert_eq!(c.s2c(2, 520, vec![update()]), []);
        assert_eq!(c.s2c(2, 530, vec![update()]), []);
        assert_eq!(c.finish(), [f("s2c", "violation/after-disconnect", 6)]);
    }

    #[test]
    fn a_ninth_player_on_a_server_is_a_violation() {
        let mut c = Capture::playing();
        let joins: Vec<MessageRepr> = (2..=9).map(|i| join(i + 1, Id::new(0, i as u16))).collect();
        // alice and eight more: nine players.
        assert_eq!(
            c.s2c(2, 510, joins),
            [f("s2c", "violation/too-many-players", 4)]
        );
    }

    #[test]
    fn the_same_bytes_again_are_a_duplicate_unless_stamped_zero() {
        let mut c = Capture::playing();
        assert_eq!(c.c2s(2, 110, vec![input(ALICE, 2)]), []);
        assert_eq!(
            c.c2s(2, 110, vec![input(ALICE, 2)]),
            [f("c2s", "duplicate-packet", 5)]
        );
        // A Connect resent unstamped is its sender's own repeat.
        let mut c = Capture::new();
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), [f("c2s", "repeat", 2)]);
    }

    #[test]
    fn a_connect_after_the_session_closed_starts_a_new_session() {
        let mut c = Capture::playing();
        assert_eq!(
            c.c2s(2, 110, vec![MessageRepr::Disconnect { seqno: 2 }]),
            []
        );
        let leave = MessageRepr::Leave {
            seqno: 3,
            player: ALICE,
        };
        assert_eq!(c.s2c(2, 520, vec![leave]), []);
        assert_eq!(c.c2s(0, 0, vec![connect(1)]), []);
        assert_eq!(c.tracker.sessions().count(), 2);
        assert_eq!(c.state(), State::Connecting);
    }

    #[test]
    fn the_sender_is_told_by_its_messages_then_by_the_port() {
        let packet = |m: Vec<MessageRepr>| {
            PacketRepr {
                header: Header::default(),
                messages: m,
            }
            .to_bytes()
        };
        let side = |b: &[u8]| sender_side(&Packet::new_checked(b).unwrap());
        assert_eq!(side(&packet(vec![connect(1)])), Some(Sender::Client));
        assert_eq!(side(&packet(vec![update()])), Some(Sender::Server));
        assert_eq!(side(&packet(vec![])), None);
        // The clock wraps: a stamp just after the wrap is newer.
        assert!(stamped_before(u32::MAX - 5, 3));
        assert!(!stamped_before(3, u32::MAX - 5));
        assert!(is_periodic(Direction::ClientToServer, MessageType::Input));
        assert!(!is_periodic(Direction::ServerToClient, MessageType::Input));
        assert!(is_periodic(
            Direction::ServerToClient,
            MessageType::UpdateRay
        ));
    }
}
