//! Vessel's analysis: what a session is, and the rules applied to each
//! packet, on the engine's generic session table.
//!
//! # The contract
//!
//! Every packet is one proto3 message ([`super::wire`]): the vessel (client)
//! sends `vesselToEnvironment`, the environment (server) `environmentToVessel`.
//! Absent fields read as their defaults (a syncNumber of 0 is not on the wire).
//!
//! **Sessions.** A session is a (vessel address, environment address) pair.
//! The environment is the side on UDP port 39461; failing that (a port named
//! with `-d udp.port==N,vessel`), the sender of a packet whose content says
//! it is `environmentToVessel` (its first field that only one message
//! declares: [`super::wire::classify`]) or the receiver of one that says
//! `vesselToEnvironment`; failing that, the destination of the first packet.
//!
//! **Per packet**, in this order:
//! 1. `duplicate-packet`: the same bytes as one of the last 64 packets of
//!    the direction, other than a version-only reply (rule 3: those carry
//!    no sync number and are the same bytes by design). Nothing else is
//!    judged.
//! 2. The packet is decoded as its direction's message (by `prost`). One that
//!    does not decode raises one `malformed` with the reason and the byte
//!    offset (`truncated` when the capture cut it where decoding stopped), and
//!    nothing else: it cannot be read, so it takes no place in the sequence.
//! 3. A **version-only reply** is an environment packet holding nothing but
//!    protocolVersion (the notes' definition) whose version differs from the
//!    vessel's latest captured one, or with no vessel packet captured before
//!    it. Otherwise it is an ordinary packet whose syncNumber is 0 and
//!    joinStatus false. It carries no sync number, so it takes no place in the
//!    sequence; it is counted as the message type `versionOnly`.
//! 4. `violation/sync-range`: a syncNumber above 255. Such a packet takes no
//!    place in the sequence. Consecutive packets of a direction above 255 are
//!    one incident: one finding, at the first, with its number.
//! 5. Sync numbers, per direction (every other packet that decoded), by the
//!    specification's comparison: `p` is more recent than the stored `s` when
//!    it is 1 to 128 ahead in the 256-step cycle (255 wraps to 0 and is the
//!    next number, never a finding). The first packet sets the baseline. A more
//!    recent number becomes the newest; the numbers it skips are *missing*. A
//!    number not more recent than the newest is out of date (what the receiver
//!    discards): `reordered`, and it fills its number if it was missing. Numbers
//!    still missing at the end (or pushed out by 256 newer ones) raise one
//!    `sync-skipped` note per skip that left them missing, with the numbers and
//!    how many: lost before the tap or missed by it, which a capture of a
//!    protocol without acks cannot tell apart, so never a warning. They count
//!    as the direction's loss (expected: the numbers from the first to the
//!    newest).
//! 6. `violation/throttle-range`: a shipInput (either direction) whose
//!    throttleLeftEngine or throttleRightEngine is outside [0, 1] (NaN too).
//!    Consecutive packets of a direction breaking it are one incident: one
//!    finding at the first; a packet whose throttles are in range ends it.
//! 7. Version negotiation. The vessel's version is that of its latest
//!    packet that decoded. A version-only reply is a refusal: the first one
//!    raises `version-refused` (a note) and the session becomes
//!    `version-mismatch`. `violation/full-reply-on-mismatch`: an environment
//!    packet that is not version-only while its version differs from the
//!    vessel's (once per session).
//! 8. Join. An environment packet (not version-only) with joinStatus false
//!    is a denial: the first raises `join-denied` (a note) and the session
//!    becomes `denied` (unless it is `version-mismatch`). An environment
//!    packet carrying a vesselID other than the last one it issued issues it:
//!    `vessel-id-issued` (a note: a join when the vessel had sent no id, a
//!    rejoin with a new id when it had sent another). The issued id is
//!    *pending* until a vessel packet carries it.
//!    - `violation/id-withdrawn`: while an id is pending, an environment packet
//!      with joinStatus true and no vesselID stopped sending it; if the
//!      vessel's next two packets captured (in date) do not carry it either,
//!      the environment stopped before the vessel used it (once per session,
//!      at the second). A vessel packet carrying it, captured before or right
//!      after, shows the vessel used it (in a packet the tap may have
//!      missed). Two, not one: a packet the vessel sent before it took the id,
//!      overtaken by one the tap missed, is in date without the id.
//!    - `violation/wrong-vessel-id`: a vessel packet (in date) carrying
//!      another id than the one issued (none included), after a vessel packet
//!      captured earlier carried the issued one, or more than 1 s after the
//!      first packet issuing it (what was in flight is allowed): once per
//!      session.
//! 9. `violation/sent-after-refusal`: a vessel packet (any that is not a
//!    duplicate and not out of date, malformed ones included: the vessel
//!    sent it) captured more than **1 s** after the first refusal captured
//!    (a denial or a version-only reply). The second allows for what was in
//!    flight when the refusal left (at 60 packets a second, about 60 packets)
//!    and for a tap on either side. Once per session.
//!
//! **State.** `open`; `denied` and `version-mismatch` as above (final: the
//! vessel is expected to fall silent); `timed-out`: a side silent for more
//! than 5 s (capture time); `closed`: at the end of the session both sides
//! had been silent for more than 1 s (the exchange stopped within the
//! capture, without a refusal and before the timeout).
//!
//! **Rates.** Both messages are registered at 60 Hz (the game's rate), which
//! the report compares with the rates measured.
//!
//! **Packets the capture cut short** (snaplen): the engine raises one
//! `truncated`; a cut packet is decoded from what was kept and, like a
//! malformed one, takes no place in the sequence when it does not decode.
//!
//! **Tap misses.** A capture whose only fault is packets the tap missed
//! raises `sync-skipped` notes and nothing else: every other rule judges
//! only what was captured, and every "after" rule allows 1 s or waits for
//! the next packet captured.
//!
//! **Bounds.** Per direction: 256 sync numbers in a fixed array allocated
//! with the session; the decoder's messages are the analyzer's, reused. No
//! allocation per packet once they have grown (`tests/no_alloc/vessel.rs`),
//! except for a malformed datagram: prost's `DecodeError` is boxed, so
//! refusing one costs up to 2 allocations, freed at once.

use super::findings::{self, rules};
use super::wire::{Decoder, EnvironmentToVessel, PORT, ShipInput, Which, classify};
use crate::capture::{Datagram, Timestamp};
use crate::engine::{
    self, Detail, Direction, FindingKind, ProtoSession, ProtocolInfo, Raise, TrackerConfig,
};
use std::fmt;
use xxhash_rust::xxh3::xxh3_64;

/// A Vessel session on the engine.
pub type Session = engine::Session<VesselSession>;

/// The engine's tracker for Vessel.
pub type Tracker = engine::Tracker<Analyzer>;

/// Sync numbers followed per direction.
pub const SEQ_RING: usize = 256;
/// Silence after which a session times out.
pub const TIMEOUT_NS: u64 = 5_000_000_000;
/// What a refusal or an issued id allows for packets in flight.
pub const GRACE_NS: u64 = 1_000_000_000;

/// Where a Vessel session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    #[default]
    Open,
    Closed,
    Denied,
    VersionMismatch,
    TimedOut,
}

impl State {
    pub const ALL: [State; 5] = [
        State::Open,
        State::Closed,
        State::Denied,
        State::VersionMismatch,
        State::TimedOut,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            State::Open => "open",
            State::Closed => "closed",
            State::Denied => "denied",
            State::VersionMismatch => "version-mismatch",
            State::TimedOut => "timed-out",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum SlotState {
    #[default]
    Empty,
    Missing,
    Seen,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    seq: u32,
    state: SlotState,
    /// Seen: its frame; Missing: the frame of the packet that skipped it.
    frame: u64,
}

/// Missing numbers pushed out of the ring, not yet reported: consecutive
/// ones skipped by the same packet make one finding.
#[derive(Debug, Clone, Copy)]
struct PendingSkip {
    frame: u64,
    ts: Timestamp,
    first: u32,
    n: u32,
}

#[derive(Debug)]
struct Track {
    slots: Box<[Slot; SEQ_RING]>,
    newest: Option<u32>,
    pending: Option<PendingSkip>,
    /// An open incident of numbers above 255 / of throttles out of range.
    range_open: bool,
    throttle_open: bool,
}

impl Default for Track {
    fn default() -> Self {
        Track {
            slots: Box::new([Slot::default(); SEQ_RING]),
            newest: None,
            pending: None,
            range_open: false,
            throttle_open: false,
        }
    }
}

/// An id the environment issued.
#[derive(Debug, Clone, Copy)]
struct Issued {
    hash: u64,
    frame: u64,
    ts: Timestamp,
    /// A vessel packet captured carried it.
    used: bool,
    /// The environment stopped sending it (the frame) before it was used,
    /// and the vessel packets captured since that lack it.
    withdrawn: Option<(u64, u8)>,
}

/// Vessel's part of a session.
#[derive(Debug, Default)]
pub struct VesselSession {
    state: State,
    tracks: [Track; 2],
    /// The vessel's latest version (hash) and its frame.
    vessel_version: Option<(u64, u64)>,
    /// The id the vessel sent last (hash, 0: none) and its frame.
    vessel_id: Option<(u64, u64)>,
    issued: Option<Issued>,
    /// The first refusal captured: frame, time, whether a version-only reply.
    refusal: Option<(u64, Timestamp, bool)>,
    denied: bool,
    version_refused: bool,
    reported: Reported,
}

#[derive(Debug, Default)]
struct Reported {
    after_refusal: bool,
    full_reply: bool,
    withdrawn: bool,
    wrong_id: bool,
}

impl VesselSession {
    pub fn state_of(&self) -> State {
        self.state
    }
}

impl ProtoSession for VesselSession {
    fn state(&self) -> &'static str {
        self.state.name()
    }
    fn is_final(&self) -> bool {
        matches!(
            self.state,
            State::Denied | State::VersionMismatch | State::TimedOut
        )
    }
    fn time_out(&mut self) {
        self.state = State::TimedOut;
    }
}

/// The Vessel analyzer: its decoder's messages are reused from packet to
/// packet.
#[derive(Debug, Default)]
pub struct Analyzer {
    decoder: Decoder,
}

impl engine::NewAnalyzer for Analyzer {
    fn new(_: &TrackerConfig) -> Self {
        Analyzer::default()
    }
}

impl Analyzer {
    /// Whether the datagram repeats one of the direction's recent datagrams
    /// (a network duplicate, raised here). Version-only replies are the same
    /// bytes by design: not judged.
    fn network_duplicate(
        &mut self,
        session: &mut Session,
        raise: &mut Raise<'_>,
        d: &Datagram<'_>,
    ) -> bool {
        let direction = raise.direction;
        let Some(frame) = session.dir_mut(direction).duplicate_datagram(d) else {
            return false;
        };
        let version_only = direction == Direction::ServerToClient
            && self.decoder.environment(d.payload).is_ok_and(|m| {
                Read::of_env(m, d.payload, session.proto.vessel_version.map(|(h, _)| h))
                    .version_only
            });
        if version_only {
            return false;
        }
        let this = session.dir_mut(direction);
        raise.raise(
            this,
            FindingKind::DUPLICATE_PACKET,
            None,
            None,
            Detail::DuplicateOf { frame },
        );
        true
    }

    /// What the analysis reads of a vessel's or the environment's packet.
    fn read(
        &mut self,
        payload: &[u8],
        from_vessel: bool,
        vessel_version: Option<u64>,
    ) -> Result<Read, super::wire::DecodeError> {
        if from_vessel {
            self.decoder.vessel(payload).map(|m| Read {
                version: hash(&m.protocol_version),
                sync: m.sync_number,
                id: hash(&m.vessel_id),
                join: false,
                version_only: false,
                throttle: throttle_out(&m.ship_input),
            })
        } else {
            self.decoder
                .environment(payload)
                .map(|m| Read::of_env(m, payload, vessel_version))
        }
    }
}

/// Counts a decoded packet's message, by type (a version-only reply is its
/// own type), with its bytes.
fn count_message(session: &mut Session, direction: Direction, read: &Read, d: &Datagram<'_>) {
    let ordinal = if read.version_only {
        Which::Either.ordinal()
    } else if direction == Direction::ClientToServer {
        Which::ToEnvironment.ordinal()
    } else {
        Which::ToVessel.ordinal()
    };
    let this = session.dir_mut(direction);
    if let Some(n) = this.messages.get_mut(ordinal) {
        *n += 1;
    }
    if let Some(n) = this.message_bytes.get_mut(ordinal) {
        *n += d.payload_len as u64;
    }
}

/// A sync number's range (one violation per run out of range) and its
/// sequence; returns whether the packet is in date (judged further).
fn sync_rules(session: &mut Session, raise: &mut Raise<'_>, read: &Read, d: &Datagram<'_>) -> bool {
    let direction = raise.direction;
    let i = direction.index();
    if read.sync > super::wire::SYNC_MAX {
        if !session.proto.tracks[i].range_open {
            session.proto.tracks[i].range_open = true;
            let this = session.dir_mut(direction);
            raise.violation(
                this,
                rules::SYNC_RANGE,
                Some(read.sync),
                findings::sync_range(read.sync),
            );
        }
        true
    } else {
        session.proto.tracks[i].range_open = false;
        sequence(session, raise, read.sync, d)
    }
}

/// A throttle out of range: one violation per run of such packets.
fn throttle_rule(session: &mut Session, raise: &mut Raise<'_>, read: &Read) {
    let direction = raise.direction;
    let i = direction.index();
    match read.throttle {
        Some((right, value)) => {
            if !session.proto.tracks[i].throttle_open {
                session.proto.tracks[i].throttle_open = true;
                let this = session.dir_mut(direction);
                raise.violation(
                    this,
                    rules::THROTTLE_RANGE,
                    None,
                    findings::throttle(right, value),
                );
            }
        }
        None => session.proto.tracks[i].throttle_open = false,
    }
}

/// Vessel's registered data.
pub static INFO: ProtocolInfo = ProtocolInfo {
    name: "vessel",
    title: "Vessel",
    message_types: super::wire::MESSAGE_TYPES,
    kinds: findings::KINDS,
    rules: findings::RULES,
    malformed: &findings::MALFORMED,
    states: &["open", "closed", "denied", "version-mismatch", "timed-out"],
    spec_rates: &[(0, super::wire::RATE_HZ), (1, super::wire::RATE_HZ)],
    dissector: &super::dissect::Vessel,
};

/// More recent: 1 to 128 ahead in the 256-step cycle.
fn newer(p: u32, s: u32) -> bool {
    (1..=128).contains(&ahead(p, s))
}

fn ahead(p: u32, s: u32) -> u32 {
    p.wrapping_sub(s) & 255
}

fn hash(s: &str) -> u64 {
    if s.is_empty() {
        0
    } else {
        xxh3_64(s.as_bytes())
    }
}

fn throttle_out(input: &Option<ShipInput>) -> Option<(bool, f32)> {
    let i = input.as_ref()?;
    let out = |v: f32| !(0.0..=1.0).contains(&v);
    if out(i.throttle_left_engine) {
        Some((false, i.throttle_left_engine))
    } else if out(i.throttle_right_engine) {
        Some((true, i.throttle_right_engine))
    } else {
        None
    }
}

/// What the analysis keeps of a decoded packet (the decoder's messages are
/// borrowed only while it decodes).
struct Read {
    version: u64,
    sync: u32,
    id: u64,
    join: bool,
    version_only: bool,
    throttle: Option<(bool, f32)>,
}

impl Read {
    /// An environment packet that decoded as `m` from `payload`.
    fn of_env(m: &EnvironmentToVessel, payload: &[u8], vessel_version: Option<u64>) -> Read {
        let version = hash(&m.protocol_version);
        // Nothing but protocolVersion on the wire (unknown fields skipped):
        // no field of the environment's message but the first.
        let only_version = !m.protocol_version.is_empty() && classify(payload) == Which::Either;
        Read {
            version,
            sync: m.sync_number,
            id: hash(&m.vessel_id),
            join: m.join_status,
            version_only: only_version && vessel_version != Some(version),
            throttle: throttle_out(&m.ship_input),
        }
    }
}

impl engine::Analyzer for Analyzer {
    type Session = VesselSession;

    fn info(&self) -> &'static ProtocolInfo {
        &INFO
    }

    fn timeout_ns(&self) -> u64 {
        TIMEOUT_NS
    }

    fn src_is_server(&self, d: &Datagram<'_>) -> bool {
        if d.src.port() == PORT && d.dst.port() != PORT {
            return true;
        }
        if d.dst.port() == PORT && d.src.port() != PORT {
            return false;
        }
        classify(d.payload) == Which::ToVessel
    }

    fn packet(&mut self, session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) {
        let direction = raise.direction;
        // 1. Network duplicates.
        if self.network_duplicate(session, raise, d) {
            return;
        }
        // 2. Decode.
        let from_vessel = direction == Direction::ClientToServer;
        let vessel_version = session.proto.vessel_version.map(|(h, _)| h);
        let read = match self.read(d.payload, from_vessel, vessel_version) {
            Ok(r) => r,
            Err(e) => {
                let this = session.dir_mut(direction);
                let at_cut = e.is_short();
                raise.undecodable(this, d, at_cut, e.kind.ordinal(), findings::decode(e));
                if from_vessel {
                    // It was sent all the same.
                    after_refusal(session, raise, d);
                }
                return;
            }
        };
        count_message(session, direction, &read, d);
        // 4, 5. Sync numbers.
        let in_date = read.version_only || sync_rules(session, raise, &read, d);
        // 6. Throttles.
        throttle_rule(session, raise, &read);
        if from_vessel {
            if in_date {
                vessel_packet(session, raise, &read, d);
                after_refusal(session, raise, d);
            }
        } else if in_date {
            environment_packet(session, raise, &read, d);
        }
    }

    fn end(&mut self, session: &mut Session, raise: &mut Raise<'_>) {
        for direction in [Direction::ClientToServer, Direction::ServerToClient] {
            raise.direction = direction;
            let i = direction.index();
            let mut lost = 0;
            if let Some(newest) = session.proto.tracks[i].newest {
                // Oldest first, so consecutive numbers of one skip join.
                for back in (1..SEQ_RING as u32).rev() {
                    let s = newest.wrapping_sub(back) & 255;
                    let slot = session.proto.tracks[i].slots[s as usize];
                    if slot.seq == s && slot.state == SlotState::Missing {
                        session.proto.tracks[i].slots[s as usize].state = SlotState::Empty;
                        lost += 1;
                        push_skip(session, raise, i, s, slot.frame);
                    }
                }
            }
            flush_skip(session, raise, i);
            session.dir_mut(direction).count_lost(lost);
        }
        if session.proto.state == State::Open {
            let end = raise.ts;
            let quiet = |d: &engine::DirState| d.packets == 0 || end.since(d.last_ts) > GRACE_NS;
            if quiet(&session.c2s) && quiet(&session.s2c) {
                session.proto.state = State::Closed;
            }
        }
    }
}

/// Rule 5: the packet's sync number in its direction. Whether it is in date
/// (more recent than every number before it, or the first).
fn sequence(session: &mut Session, raise: &mut Raise<'_>, seq: u32, d: &Datagram<'_>) -> bool {
    let direction = raise.direction;
    let i = direction.index();
    let seen = Slot {
        seq,
        state: SlotState::Seen,
        frame: d.frame,
    };
    let Some(newest) = session.proto.tracks[i].newest else {
        session.proto.tracks[i].newest = Some(seq);
        session.proto.tracks[i].slots[seq as usize] = seen;
        session.dir_mut(direction).count_expected(1);
        return true;
    };
    if newer(seq, newest) {
        let skipped = ahead(seq, newest);
        let mut lost = 0;
        // Every number from newest+1 to seq: the ring slot it takes may hold
        // a number 256 older still missing, reported now.
        for k in 1..=skipped {
            let s = newest.wrapping_add(k) & 255;
            let old = session.proto.tracks[i].slots[s as usize];
            if old.state == SlotState::Missing {
                lost += 1;
                push_skip(session, raise, i, old.seq, old.frame);
            }
            session.proto.tracks[i].slots[s as usize] = if s == seq {
                seen
            } else {
                Slot {
                    seq: s,
                    state: SlotState::Missing,
                    frame: d.frame,
                }
            };
        }
        session.proto.tracks[i].newest = Some(seq);
        let dir = session.dir_mut(direction);
        dir.count_expected(u64::from(skipped));
        dir.count_lost(lost);
        return true;
    }
    let slot = &mut session.proto.tracks[i].slots[seq as usize];
    // A packet the capture cut short with the number of one captured may be
    // its network duplicate: the bytes cannot tell.
    if d.truncated_by_capture() && slot.seq == seq && slot.state == SlotState::Seen {
        return false;
    }
    if slot.seq == seq && slot.state == SlotState::Missing {
        *slot = seen;
    }
    let this = session.dir_mut(direction);
    raise.raise(
        this,
        FindingKind::REORDERED,
        None,
        Some(seq),
        Detail::Fill { highest: newest },
    );
    false
}

/// A missing number reported: joined to the pending skip when it follows it
/// and was skipped by the same packet.
fn push_skip(session: &mut Session, raise: &mut Raise<'_>, i: usize, seq: u32, frame: u64) {
    let track = &mut session.proto.tracks[i];
    if let Some(p) = &mut track.pending
        && p.frame == frame
        && (p.first + p.n) & 255 == seq
    {
        p.n += 1;
        return;
    }
    flush_skip(session, raise, i);
    session.proto.tracks[i].pending = Some(PendingSkip {
        frame,
        ts: raise.ts,
        first: seq,
        n: 1,
    });
}

fn flush_skip(session: &mut Session, raise: &mut Raise<'_>, i: usize) {
    if let Some(p) = session.proto.tracks[i].pending.take() {
        let direction = raise.direction;
        let this = session.dir_mut(direction);
        raise.raise_at(
            this,
            findings::SYNC_SKIPPED,
            p.frame,
            p.ts,
            findings::skipped(p.first, p.n),
        );
    }
}

/// Rule 9.
fn after_refusal(session: &mut Session, raise: &mut Raise<'_>, d: &Datagram<'_>) {
    let Some((frame, ts, version)) = session.proto.refusal else {
        return;
    };
    let after = d.ts.since(ts);
    if after > GRACE_NS && !session.proto.reported.after_refusal {
        session.proto.reported.after_refusal = true;
        let this = session.dir_mut(Direction::ClientToServer);
        raise.violation(
            this,
            rules::SENT_AFTER_REFUSAL,
            None,
            findings::after_refusal(frame, after, version),
        );
    }
}

/// Rules 7 and 8, the vessel's side: its version, its id.
fn vessel_packet(session: &mut Session, raise: &mut Raise<'_>, read: &Read, d: &Datagram<'_>) {
    let p = &mut session.proto;
    if read.version != 0 {
        p.vessel_version = Some((read.version, d.frame));
    }
    p.vessel_id = Some((read.id, d.frame));
    let Some(issued) = p.issued.as_mut() else {
        return;
    };
    if read.id == issued.hash {
        issued.used = true;
        issued.withdrawn = None;
        return;
    }
    if let Some((_, lacking)) = &mut issued.withdrawn {
        *lacking += 1;
    }
    let withdrawn = issued.withdrawn.is_some_and(|(_, n)| n >= 2);
    if withdrawn {
        issued.withdrawn = None;
    }
    let issued = *issued;
    if withdrawn && !p.reported.withdrawn {
        p.reported.withdrawn = true;
        let detail = findings::withdrawn(issued.frame, d.frame);
        let this = session.dir_mut(Direction::ServerToClient);
        let dir = raise.direction;
        raise.direction = Direction::ServerToClient;
        raise.violation(this, rules::ID_WITHDRAWN, None, detail);
        raise.direction = dir;
    }
    let since = d.ts.since(issued.ts);
    if (issued.used || since > GRACE_NS) && !session.proto.reported.wrong_id {
        session.proto.reported.wrong_id = true;
        let this = session.dir_mut(Direction::ClientToServer);
        raise.violation(
            this,
            rules::WRONG_VESSEL_ID,
            None,
            findings::wrong_id(issued.frame, issued.used, since),
        );
    }
}

/// Rules 7 and 8, the environment's side.
fn environment_packet(session: &mut Session, raise: &mut Raise<'_>, read: &Read, d: &Datagram<'_>) {
    let p = &mut session.proto;
    let vessel_frame = p.vessel_version.map_or(0, |(_, f)| f);
    if read.version_only {
        if !p.version_refused {
            p.version_refused = true;
            p.state = State::VersionMismatch;
            p.refusal.get_or_insert((d.frame, d.ts, true));
            let this = session.dir_mut(Direction::ServerToClient);
            raise.raise(
                this,
                findings::VERSION_REFUSED,
                None,
                None,
                findings::version_refused(vessel_frame),
            );
        }
        return;
    }
    if let Some((v, frame)) = p.vessel_version
        && read.version != v
        && !p.reported.full_reply
    {
        p.reported.full_reply = true;
        let this = session.dir_mut(Direction::ServerToClient);
        raise.violation(
            this,
            rules::FULL_REPLY_ON_MISMATCH,
            None,
            findings::full_reply(frame),
        );
    }
    let p = &mut session.proto;
    if !read.join {
        if !p.denied {
            p.denied = true;
            if p.state != State::VersionMismatch {
                p.state = State::Denied;
            }
            p.refusal.get_or_insert((d.frame, d.ts, false));
            let this = session.dir_mut(Direction::ServerToClient);
            raise.raise(this, findings::JOIN_DENIED, None, None, findings::denied());
        }
        return;
    }
    if read.id != 0 {
        if p.issued.is_none_or(|x| x.hash != read.id) {
            let (sent, frame) = p.vessel_id.unwrap_or((0, 0));
            let rejoin = sent != 0 && sent != read.id;
            p.issued = Some(Issued {
                hash: read.id,
                frame: d.frame,
                ts: d.ts,
                used: false,
                withdrawn: None,
            });
            let this = session.dir_mut(Direction::ServerToClient);
            raise.raise(
                this,
                findings::ID_ISSUED,
                None,
                None,
                findings::issued(rejoin, frame),
            );
        } else if let Some(x) = &mut p.issued {
            // Sent again: not withdrawn after all.
            x.withdrawn = None;
        }
    } else if let Some(x) = &mut p.issued
        && !x.used
        && x.withdrawn.is_none()
    {
        x.withdrawn = Some((d.frame, 0));
    }
}
