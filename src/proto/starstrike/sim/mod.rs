//! The Starstrike simulator: a server and its clients that follow the notes,
//! encoding only through [`super::wire`], a faulty network with a capture tap
//! in the middle, and the ground truth of what the analyzer must report.
//!
//! Deterministic for a seed: the same [`SimConfig`] gives the same frames, byte
//! for byte (a configuration without the later faults draws exactly the random
//! numbers it always drew). Entry points: [`simulate`] (in memory),
//! [`write_pcap`], [`run`] (a pcap and its `*.truth.json`), [`sim_request`]
//! (`sim --proto starstrike`) and [`write_mixed`] (merged with another
//! capture).
//!
//! # The peers
//!
//! Both sides send exactly one packet per tick (`tick_ms`, the server half a
//! tick after the clients), so that their sequence numbers advance in lockstep
//! and stay within the 32 that the literal ack bitfield covers. The server
//! numbers its packets from the client's first number plus `server_offset`
//! (more than 32 shows the draft's ack drift). Each packet's `ackBits` sets bit
//! N for every peer packet numbered `seq - N - 1` the side has received. In a
//! tick a side sends, first that applies: a copy of a reliable message unacked
//! for 500 ms; a new reliable message when one is due; else its regular packet.
//! After 6 sends (`max_sends`) a message is given up: silently, the session
//! playing on (`max_sends: None`, the first corpus), or, as the notes say, by
//! dropping the connection: Disconnect (Timeout) once if playing, then silence.
//!
//! - Client: ConnectionRequest until ConnectionAccept arrives; then PlayerInput,
//!   a ChatMessage every `chat_every` ticks, a Heartbeat every 40 ticks; after
//!   `duration_ms`, Disconnect (ClientQuit), then only its copies. A
//!   Disconnect from the server while playing ends it (silence).
//! - Server: on the first Request, ConnectionAccept (or, with `reject`, one
//!   ConnectionReject, and nothing more); then WorldSnapshot (two entities) and
//!   a reliable event every `event_every` ticks (EntitySpawn, EntityDestroy,
//!   MatchState, PlayerScored in turn). On a client's Disconnect, it answers
//!   Disconnect (the same message each time) and sends nothing else. After
//!   10 s without a client packet it drops the client (silence).
//!
//! # The network and the tap
//!
//! Every rate is per direction. A datagram sent at `t` is lost before the tap
//! with probability `loss` (never captured, never delivered). During play
//! (`World::in_play`: both sides playing, until 500 ms before the clients
//! quit or the link dies) it may be damaged (`corrupt`, into one of the
//! [`Damage`] kinds its type allows: the tap and the receiver see the damaged
//! bytes; a receiver drops what does not decode) and, for PlayerInput and
//! WorldSnapshot, delayed by two ticks (`reorder`: captured and delivered
//! after later packets). It is captured at `t + latency / 2` and delivered at
//! `t + latency`; with probability `duplicate` a copy follows 1 ms later. The
//! tap misses each copy with probability `tap_miss` (delivered all the same).
//! With `link_dies_ms`, the first client's packets from then on are captured
//! and never delivered.
//!
//! # The ground truth
//!
//! [`Truth`] counts, per session, what the contract of
//! [`super::analysis`] says about the captured frames, computed from what the
//! simulator knows (which message each packet carries, which datagrams the
//! tap saw, which it damaged and how, which ack bits each packet carries),
//! never by running the analyzer: duplicates, malformed packets and violation
//! incidents, lost and not-captured numbers, reordered packets, runs of acks
//! of the unseen, retransmissions (spurious, over the limit; a copy that
//! may have crossed the acknowledgement in flight, judged by the smoothed ack
//! delay the capture measures as the analyzer does, or whose own ack bits
//! leave out the acknowledging packet, is a `repeat`), reliable
//! messages never acknowledged, ack drift incidents, silences, game packets
//! before a captured Accept, rejections and disconnects. A message is what
//! the capture shows (the same type and bytes, the latest copy less than
//! 10 s before), not the peer's own bookkeeping: a lenient client that gives
//! its ConnectionRequest up after 6 sends and sends the same bytes again is
//! still copying it, past the notes' limit. It also records, per
//! session and direction, the datagrams sent and those lost before the tap
//! (`sent`, `lost_before_tap`): the loss the analysis estimates.

use super::wire::{
    ChatMessage, ConnectionAccept, ConnectionRequest, EntityDestroy, EntitySpawn, EntityState,
    FixedStr, Heartbeat, MatchState, Message, MessageRepr, PacketRepr, PacketType, PlayerInput,
    PlayerScored, Quaternion, Reason, Vector3, WorldSnapshot,
};
use crate::capture::Timestamp;
use crate::capture::synth::{Link, PcapWriter, udp_frame};
use crate::engine::serial::SerialSpace;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub seed: u64,
    pub clients: usize,
    /// Play time before the clients disconnect, in ms.
    pub duration_ms: u64,
    /// One packet per side per tick.
    pub tick_ms: u64,
    /// One-way latency; the tap sits half-way.
    pub latency_ms: u64,
    /// Probability that a datagram is lost before the tap.
    pub loss: f64,
    /// Probability that a captured datagram is duplicated.
    pub duplicate: f64,
    /// The client's first sequence number (`None`: from the seed).
    pub first_seq: Option<u16>,
    /// The server's first number is the client's first plus this.
    pub server_offset: u16,
    /// The server rejects every client (ServerFull).
    pub reject: bool,
    /// A client ChatMessage every this many ticks (0: none).
    pub chat_every: u32,
    /// A server reliable event every this many ticks (0: none).
    pub event_every: u32,
    /// Loss before the tap of server-to-client datagrams, when it differs
    /// from `loss` (which then applies to client-to-server ones only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_s2c: Option<f64>,
    /// Duplication of server-to-client datagrams, when it differs from
    /// `duplicate` (which then applies to client-to-server ones only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_s2c: Option<f64>,
    /// Probability, c2s and s2c, that a PlayerInput or WorldSnapshot sent
    /// during play is delayed by two ticks before the tap, past later packets.
    #[serde(default, skip_serializing_if = "zero_rates")]
    pub reorder: [f64; 2],
    /// Probability, c2s and s2c, that a datagram sent during play is damaged
    /// before the tap, into one of the [`Damage`] kinds its type allows.
    #[serde(default, skip_serializing_if = "zero_rates")]
    pub corrupt: [f64; 2],
    /// Probability, c2s and s2c, that the tap misses a datagram the network
    /// delivers.
    #[serde(default, skip_serializing_if = "zero_rates")]
    pub tap_miss: [f64; 2],
    /// The notes' retransmission limit: a side whose reliable message went
    /// `max_sends` times unacknowledged for 500 ms drops the connection
    /// (Disconnect with reason Timeout once if it was playing, else silence).
    /// More than 6 is a sender that ignores the notes' limit. `None`: the
    /// lenient peers of the first corpus, which give the message up silently
    /// after 6 sends and play on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sends: Option<u32>,
    /// At this time (ms) the first client's uplink dies past the tap: its
    /// packets are still captured, never delivered (its downlink still works).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_dies_ms: Option<u64>,
}

fn zero_rates(r: &[f64; 2]) -> bool {
    r.iter().all(|&x| x == 0.0)
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            clients: 1,
            duration_ms: 5_000,
            tick_ms: 50,
            latency_ms: 20,
            loss: 0.0,
            duplicate: 0.0,
            first_seq: None,
            server_offset: 1,
            reject: false,
            chat_every: 30,
            event_every: 25,
            loss_s2c: None,
            duplicate_s2c: None,
            reorder: [0.0; 2],
            corrupt: [0.0; 2],
            tap_miss: [0.0; 2],
            max_sends: None,
            link_dies_ms: None,
        }
    }
}

/// Why the simulator stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The capture error names the file and what failed.
    #[error("{0}")]
    Capture(#[from] crate::capture::CaptureError),
    #[error("cannot write the ground truth: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot encode the ground truth: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot encode a packet: {0}")]
    Emit(#[from] super::wire::EmitError),
    #[error("invalid configuration: {0}")]
    Config(&'static str),
}

/// One captured datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Microseconds since the start of the simulation.
    pub ts_us: u64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub payload: Vec<u8>,
}

/// What the analyzer must report for one session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTruth {
    pub client: String,
    pub server: String,
    /// Packets captured, c2s and s2c.
    pub packets: [u64; 2],
    /// Datagrams sent, c2s and s2c (captured or not, duplicates not counted).
    pub sent: [u64; 2],
    /// Of `sent`, the datagrams the network lost before the tap, c2s and s2c:
    /// the truth of the direction's loss estimate (`lost_before_tap / sent`).
    #[serde(default)]
    pub lost_before_tap: [u64; 2],
    /// The state the session ends in.
    pub state: String,
    /// Finding counts by kind (`violation/rule` for violations); every kind
    /// the simulation models is listed, zeros included.
    pub findings: BTreeMap<String, u64>,
}

/// The ground truth of a simulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    pub config: SimConfig,
    pub sessions: Vec<SessionTruth>,
    /// The findings of every session, summed.
    pub findings: BTreeMap<String, u64>,
}

/// A simulation: the captured frames in capture order, and the truth.
#[derive(Debug, Clone)]
pub struct Simulation {
    pub frames: Vec<Frame>,
    pub truth: Truth,
}

/// Capture time of the simulation's start: 2023-11-14T22:13:20Z, fixed.
pub const EPOCH_NS: u64 = 1_700_000_000_000_000_000;
const S16: SerialSpace = SerialSpace::U16;
const RETRANSMIT_MS: u64 = 500;
const MAX_SENDS: u32 = 6;
const HEARTBEAT_MS: u64 = 1_000;
const CONNECTION_TIMEOUT_MS: u64 = 10_000;

/// How the network damages a datagram (`SimConfig::corrupt`): every way a
/// Starstrike packet can be malformed, and every codec violation. The values
/// written are fixed per kind, so two copies of a message damaged the same way
/// stay copies of each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Damage {
    /// Cut to 8 to 11 bytes: the magic kept, so the capture still says
    /// Starstrike, and the sequence number, so that two such packets are not
    /// the same bytes (a duplicate).
    ShortHeader,
    /// The magic's first byte changed ("sTRS"): Starstrike's by its flow (a
    /// malformed packet of the session), its number kept.
    WrongMagic,
    /// `packetType` 0x0400.
    UnknownType,
    /// The payload cut to about half its length (a WorldSnapshot to 3 bytes).
    ShortPayload,
    /// Two bytes appended (not to WorldSnapshot).
    TrailingBytes,
    /// WorldSnapshot's entityCount one more than its entities.
    SnapshotLength,
    /// WorldSnapshot's first entity type 200, or ChatMessage channel 99.
    InvalidEnum,
    /// PlayerInput lookX, or the first entity's position x, NaN.
    NonFinite,
    /// PlayerInput moveX 2.0.
    InputRange,
    /// ChatMessage: a byte `x` 200 bytes into the text's NUL padding.
    StringPadding,
}

impl Damage {
    /// The kinds a packet of type `t` can be damaged into.
    fn applicable(t: PacketType) -> &'static [Damage] {
        use Damage::*;
        match t {
            PacketType::PlayerInput => &[
                ShortHeader,
                WrongMagic,
                UnknownType,
                ShortPayload,
                TrailingBytes,
                NonFinite,
                InputRange,
            ],
            PacketType::WorldSnapshot => &[
                ShortHeader,
                WrongMagic,
                UnknownType,
                ShortPayload,
                SnapshotLength,
                InvalidEnum,
                NonFinite,
            ],
            PacketType::ChatMessage => &[
                ShortHeader,
                WrongMagic,
                UnknownType,
                ShortPayload,
                TrailingBytes,
                InvalidEnum,
                StringPadding,
            ],
            _ => &[
                ShortHeader,
                WrongMagic,
                UnknownType,
                ShortPayload,
                TrailingBytes,
            ],
        }
    }

    /// True when the header still decodes (the analyzer follows its number and
    /// acknowledgements).
    pub fn header_ok(self) -> bool {
        !matches!(
            self,
            Damage::ShortHeader | Damage::WrongMagic | Damage::UnknownType
        )
    }

    /// The rule of the violation it makes; `None` for a malformed packet.
    pub fn rule(self) -> Option<&'static str> {
        match self {
            Damage::InvalidEnum => Some("invalid-enum"),
            Damage::NonFinite => Some("non-finite-float"),
            Damage::InputRange => Some("input-range"),
            Damage::StringPadding => Some("string-padding"),
            _ => None,
        }
    }

    /// Damages `p`, a whole packet (header and payload) of type `t`.
    fn apply(self, t: PacketType, p: &mut Vec<u8>, rng: &mut ChaCha8Rng) {
        const H: usize = super::wire::HEADER_LEN;
        let nan = f32::NAN.to_be_bytes();
        let mut put = |at: usize, bytes: &[u8]| {
            if let Some(dst) = p.get_mut(at..at + bytes.len()) {
                dst.copy_from_slice(bytes);
            }
        };
        match self {
            Damage::ShortHeader => {
                let len = rng.random_range(8..H);
                p.truncate(len);
            }
            Damage::WrongMagic => put(0, b"s"),
            Damage::UnknownType => put(4, &0x0400u16.to_be_bytes()),
            Damage::ShortPayload => {
                let keep = if t == PacketType::WorldSnapshot {
                    3
                } else {
                    (p.len() - H) / 2
                };
                p.truncate(H + keep);
            }
            Damage::TrailingBytes => p.extend_from_slice(&[0xEE, 0xEE]),
            Damage::SnapshotLength => {
                if let Some(b) = p.get_mut(H + 4) {
                    *b = b.wrapping_add(1);
                }
            }
            Damage::InvalidEnum if t == PacketType::WorldSnapshot => put(H + 5 + 4, &[200]),
            Damage::InvalidEnum => put(H + 4, &[99]),
            Damage::NonFinite if t == PacketType::WorldSnapshot => put(H + 5 + 5, &nan),
            Damage::NonFinite => put(H + 12, &nan),
            Damage::InputRange => put(H + 4, &2.0f32.to_be_bytes()),
            Damage::StringPadding => put(H + 5 + 200, b"x"),
        }
    }
}

/// A reliable message waiting for its acknowledgement.
#[derive(Debug, Clone)]
struct Pending {
    id: u64,
    message: MessageRepr,
    copies: Vec<u16>,
    last_ms: u64,
}

/// One side of one session.
#[derive(Debug, Default)]
struct Side {
    next_seq: u16,
    /// Peer numbers received (the last 64).
    received: Vec<u16>,
    pending: Vec<Pending>,
    /// Messages that were acknowledged, by id.
    acked: Vec<u64>,
}

impl Side {
    fn ack_bits(&self, seq: u16) -> u32 {
        let mut bits = 0;
        for &r in &self.received {
            let n = seq.wrapping_sub(r).wrapping_sub(1);
            if n < 32 {
                bits |= 1 << n;
            }
        }
        bits
    }

    fn receive(&mut self, seq: u16, ack_bits: u32) {
        if !self.received.contains(&seq) {
            self.received.push(seq);
            if self.received.len() > 64 {
                self.received.remove(0);
            }
        }
        // What the peer acknowledges of ours.
        let acked: Vec<u16> = (0..32u16)
            .filter(|n| ack_bits & (1 << n) != 0)
            .map(|n| seq.wrapping_sub(n).wrapping_sub(1))
            .collect();
        let mut done = Vec::new();
        self.pending.retain(|p| {
            let hit = p.copies.iter().any(|c| acked.contains(c));
            if hit {
                done.push(p.id);
            }
            !hit
        });
        self.acked.extend(done);
    }

    /// A copy due now, if any (a message with `max` sends is given up).
    fn due_copy(&mut self, now_ms: u64, max: usize) -> Option<usize> {
        self.pending
            .retain(|p| p.copies.len() < max || now_ms < p.last_ms + RETRANSMIT_MS);
        self.pending
            .iter()
            .position(|p| p.copies.len() < max && now_ms >= p.last_ms + RETRANSMIT_MS)
    }

    /// True when a message went `max` times unacknowledged for 500 ms.
    fn exhausted(&self, now_ms: u64, max: usize) -> bool {
        self.pending
            .iter()
            .any(|p| p.copies.len() >= max && now_ms >= p.last_ms + RETRANSMIT_MS)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientState {
    Connecting,
    Playing,
    Disconnecting,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerState {
    Waiting,
    Playing,
    /// It answered the client's Disconnect (message id of its answer).
    Closed,
    Rejected,
    /// It gave the client up (retransmission limit): silent.
    Dropped,
}

/// A datagram on its way.
#[derive(Debug, Clone)]
struct InFlight {
    deliver_us: u64,
    session: usize,
    c2s: bool,
    payload: Vec<u8>,
}

/// A datagram a side sends, as the faults before the tap leave it.
#[derive(Debug, Clone)]
struct Outgoing {
    session: usize,
    c2s: bool,
    seq: u16,
    ack_bits: u32,
    /// The reliable message it carries (a damaged copy: another id).
    msg: Option<u64>,
    packet_type: PacketType,
    damage: Option<Damage>,
    /// When it left the sender, delayed if the network reorders it (µs).
    sent_us: u64,
    payload: Vec<u8>,
}

/// What the simulator knows of a captured packet.
#[derive(Debug, Clone, Copy)]
struct Record {
    session: usize,
    c2s: bool,
    seq: u16,
    ack_bits: u32,
    msg: Option<u64>,
    packet_type: PacketType,
    /// An earlier copy of these bytes was captured.
    duplicate: bool,
    damage: Option<Damage>,
    ts_us: u64,
    /// The hash of its bytes after the header, as the analyzer hashes them
    /// to tell a copy of a message (the same type and bytes) from another.
    body: u64,
}

impl Record {
    /// The analyzer follows its number (rule 4): every damage keeps bytes 6
    /// and 7, and a damaged number is within 32 of the direction's highest.
    fn numbered(&self) -> bool {
        !self.duplicate
    }

    /// The analyzer follows its number and acknowledgements (rules 4 to 6).
    fn analysed(&self) -> bool {
        !self.duplicate && self.damage.is_none_or(Damage::header_ok)
    }

    /// It decodes (violations included): rules 8 and below apply.
    fn decodes(&self) -> bool {
        self.analysed() && self.damage.is_none_or(|d| d.rule().is_some())
    }
}

struct Session {
    client_addr: SocketAddr,
    server_addr: SocketAddr,
    client: Side,
    server: Side,
    cstate: ClientState,
    sstate: ServerState,
    server_disconnect: Option<(u64, MessageRepr)>,
    /// The client number the server last answered with its Disconnect.
    last_answered: Option<u16>,
    answer_pending_reject: bool,
    ticks: u64,
    /// When the server last received a client packet (ms).
    server_heard_ms: Option<u64>,
    sent: [u64; 2],
    lost_before_tap: [u64; 2],
    /// Every number sent, and whether the tap saw it: c2s and s2c.
    numbers: [Vec<(u16, bool)>; 2],
}

struct World {
    config: SimConfig,
    rng: ChaCha8Rng,
    sessions: Vec<Session>,
    flight: Vec<InFlight>,
    frames: Vec<Frame>,
    records: Vec<Record>,
    next_msg: u64,
    next_entity: u32,
}

/// Runs the simulation in memory.
pub fn simulate(config: &SimConfig) -> Result<Simulation, SimError> {
    if config.max_sends.is_some_and(|n| !(1..=100).contains(&n)) {
        return Err(SimError::Config("max_sends is 1 to 100"));
    }
    if config.duration_ms > 3_600_000
        || config.tick_ms > 10_000
        || config.latency_ms > 10_000
        || config.link_dies_ms.is_some_and(|t| t > config.duration_ms)
    {
        return Err(SimError::Config(
            "at most an hour of play, ticks and latency of at most 10 s, the link dying during play",
        ));
    }
    if config.clients == 0 || config.clients > 200 || config.tick_ms < 2 || config.latency_ms < 2 {
        return Err(SimError::Config(
            "1 to 200 clients, a tick and a latency of 2 ms or more",
        ));
    }
    let rates = [config.loss, config.duplicate]
        .into_iter()
        .chain(config.loss_s2c)
        .chain(config.duplicate_s2c)
        .chain(config.reorder)
        .chain(config.corrupt)
        .chain(config.tap_miss);
    if rates.into_iter().any(|r| !(0.0..1.0).contains(&r)) {
        return Err(SimError::Config("fault rates are probabilities below 1"));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let server_addr: SocketAddr = "10.0.0.1:7777".parse().expect("static address");
    let mut sessions = Vec::new();
    for i in 0..config.clients {
        let first: u16 = config.first_seq.unwrap_or_else(|| rng.random());
        let client_addr = SocketAddr::new(
            std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 1, 1 + i as u8)),
            50_000 + i as u16,
        );
        sessions.push(Session {
            client_addr,
            server_addr,
            client: Side {
                next_seq: first,
                ..Side::default()
            },
            server: Side {
                next_seq: first.wrapping_add(config.server_offset),
                ..Side::default()
            },
            cstate: ClientState::Connecting,
            sstate: ServerState::Waiting,
            server_disconnect: None,
            last_answered: None,
            answer_pending_reject: false,
            ticks: 0,
            server_heard_ms: None,
            sent: [0; 2],
            lost_before_tap: [0; 2],
            numbers: [Vec::new(), Vec::new()],
        });
    }
    let mut w = World {
        config: config.clone(),
        rng,
        sessions,
        flight: Vec::new(),
        frames: Vec::new(),
        records: Vec::new(),
        next_msg: 1,
        next_entity: 100,
    };
    // Play, disconnect, and give the last copies time to go.
    let max_sends = u64::from(config.max_sends.unwrap_or(MAX_SENDS));
    let end_ms = config.duration_ms + max_sends * RETRANSMIT_MS + 1_000;
    let half = config.tick_ms / 2;
    for now in 0..=end_ms {
        w.deliver(now * 1_000);
        for s in 0..w.sessions.len() {
            // Clients tick on the tick, each 1 ms after the previous one.
            let offset = s as u64 % half;
            if now >= offset && (now - offset).is_multiple_of(config.tick_ms) {
                w.client_tick(s, now)?;
            }
            if now >= half + offset && (now - half - offset).is_multiple_of(config.tick_ms) {
                w.server_tick(s, now)?;
            }
        }
    }
    w.deliver(u64::MAX);
    w.frames.sort_by_key(|f| f.ts_us);
    // Records were pushed in capture order per send; sort the same way, stably.
    let mut order: Vec<usize> = (0..w.records.len()).collect();
    order.sort_by_key(|&i| w.records[i].ts_us);
    let records: Vec<Record> = order.iter().map(|&i| w.records[i]).collect();
    let truth = truth(&w, &records);
    Ok(Simulation {
        frames: w.frames,
        truth,
    })
}

impl World {
    fn new_msg(&mut self) -> u64 {
        self.next_msg += 1;
        self.next_msg
    }

    /// Sends a packet of `m` from one side; `msg`: the reliable message it
    /// carries.
    fn send(
        &mut self,
        s: usize,
        c2s: bool,
        now_ms: u64,
        m: &MessageRepr,
        msg: Option<u64>,
    ) -> Result<u16, SimError> {
        let session = &mut self.sessions[s];
        let side = if c2s {
            &mut session.client
        } else {
            &mut session.server
        };
        let seq = side.next_seq;
        side.next_seq = seq.wrapping_add(1);
        let ack_bits = side.ack_bits(seq);
        let packet = PacketRepr::new(seq, ack_bits, m.clone());
        let payload = packet.to_bytes()?;
        let d = usize::from(!c2s);
        session.sent[d] += 1;
        let loss = if c2s {
            self.config.loss
        } else {
            self.config.loss_s2c.unwrap_or(self.config.loss)
        };
        // Draws only for the faults asked: a configuration without them gives
        // the bytes it always gave.
        let lost = self.rng.random::<f64>() < loss;
        if lost {
            self.sessions[s].lost_before_tap[d] += 1;
            self.sessions[s].numbers[d].push((seq, false));
            return Ok(seq);
        }
        let mut out = Outgoing {
            session: s,
            c2s,
            seq,
            ack_bits,
            msg,
            packet_type: m.packet_type(),
            damage: None,
            sent_us: now_ms * 1_000,
            payload,
        };
        self.damage_and_delay(&mut out, now_ms);
        let captured = self.transmit(out, now_ms);
        // Every damage keeps the number: a damaged packet is captured, not
        // missing.
        self.sessions[s].numbers[d].push((seq, captured));
        Ok(seq)
    }

    /// During play, the network may damage a datagram (`corrupt`) and delay
    /// a PlayerInput or WorldSnapshot past later ones (`reorder`). A damaged
    /// copy of a reliable message is, to the analyzer, another message
    /// (other payload bytes): it gets its own id, one per kind.
    fn damage_and_delay(&mut self, out: &mut Outgoing, now_ms: u64) {
        let d = usize::from(!out.c2s);
        let play = self.in_play(out.session, now_ms);
        let t = out.packet_type;
        let corrupt = self.config.corrupt[d];
        if play && corrupt > 0.0 && self.rng.random::<f64>() < corrupt {
            let kinds = Damage::applicable(t);
            let k = kinds[self.rng.random_range(0..kinds.len())];
            k.apply(t, &mut out.payload, &mut self.rng);
            out.damage = Some(k);
            out.msg = out.msg.map(|id| id | ((k as u64 + 1) << 48));
        }
        let reorder = self.config.reorder[d];
        if play && !t.is_reliable() && reorder > 0.0 && self.rng.random::<f64>() < reorder {
            out.sent_us += (2 * self.config.tick_ms + 5) * 1_000;
        }
    }

    /// A datagram on the wire past the faults before the tap: captured half
    /// way (unless the tap misses it), delivered at the latency (unless the
    /// link died), and duplicated 1 ms later with the direction's rate.
    /// Returns whether the tap captured it.
    fn transmit(&mut self, out: Outgoing, now_ms: u64) -> bool {
        let (s, c2s) = (out.session, out.c2s);
        let d = usize::from(!c2s);
        let session = &self.sessions[s];
        let (src, dst) = if c2s {
            (session.client_addr, session.server_addr)
        } else {
            (session.server_addr, session.client_addr)
        };
        let duplicate = if c2s {
            self.config.duplicate
        } else {
            self.config.duplicate_s2c.unwrap_or(self.config.duplicate)
        };
        let tap_us = out.sent_us + self.config.latency_ms * 500;
        let deliver_us = out.sent_us + self.config.latency_ms * 1_000;
        let copies = if self.rng.random::<f64>() < duplicate {
            2
        } else {
            1
        };
        let delivered = !(c2s && s == 0 && self.config.link_dies_ms.is_some_and(|t| now_ms >= t));
        let tap_miss = self.config.tap_miss[d];
        let mut captured = false;
        for k in 0..copies {
            let missed = tap_miss > 0.0 && self.rng.random::<f64>() < tap_miss;
            if !missed {
                self.frames.push(Frame {
                    ts_us: tap_us + k * 1_000,
                    src,
                    dst,
                    payload: out.payload.clone(),
                });
                self.records.push(Record {
                    session: s,
                    c2s,
                    seq: out.seq,
                    ack_bits: out.ack_bits,
                    msg: out.msg,
                    packet_type: out.packet_type,
                    duplicate: captured,
                    damage: out.damage,
                    ts_us: tap_us + k * 1_000,
                    body: xxhash_rust::xxh3::xxh3_64(out.payload.get(12..).unwrap_or_default()),
                });
                captured = true;
            }
            if delivered {
                self.flight.push(InFlight {
                    deliver_us: deliver_us + k * 1_000,
                    session: s,
                    c2s,
                    payload: out.payload.clone(),
                });
            }
        }
        captured
    }

    /// True while the session plays (the client accepted, the server past its
    /// Accept) and at least 500 ms before the clients quit or the link dies:
    /// the time when the network reorders and damages datagrams, so that no
    /// delayed packet is captured after a Disconnect.
    fn in_play(&self, s: usize, now_ms: u64) -> bool {
        let session = &self.sessions[s];
        let stop = self
            .config
            .duration_ms
            .min(self.config.link_dies_ms.unwrap_or(u64::MAX));
        now_ms + RETRANSMIT_MS < stop
            && session.cstate == ClientState::Playing
            && session.sstate == ServerState::Playing
            && session.ticks != u64::MAX
    }
    /// Sends a new reliable message, to be copied until acknowledged.
    fn send_reliable(
        &mut self,
        s: usize,
        c2s: bool,
        now_ms: u64,
        m: MessageRepr,
    ) -> Result<u64, SimError> {
        let id = self.new_msg();
        let seq = self.send(s, c2s, now_ms, &m, Some(id))?;
        let side = self.side(s, c2s);
        side.pending.push(Pending {
            id,
            message: m,
            copies: vec![seq],
            last_ms: now_ms,
        });
        Ok(id)
    }

    fn max_sends(&self) -> usize {
        self.config.max_sends.unwrap_or(MAX_SENDS) as usize
    }

    /// With the notes' retransmission limit (`max_sends`), whether the side
    /// must drop the connection now; if so it forgets its messages and, when
    /// `farewell`, sends Disconnect with reason Timeout once.
    fn gives_up(
        &mut self,
        s: usize,
        c2s: bool,
        now_ms: u64,
        farewell: bool,
    ) -> Result<bool, SimError> {
        let max = self.max_sends();
        if self.config.max_sends.is_none() || !self.side(s, c2s).exhausted(now_ms, max) {
            return Ok(false);
        }
        self.side(s, c2s).pending.clear();
        if farewell {
            let id = self.new_msg();
            let m = Message::Disconnect(Reason {
                reason: 2,
                message: FixedStr::new(b"timeout"),
            });
            self.send(s, c2s, now_ms, &m, Some(id))?;
        }
        Ok(true)
    }

    fn side(&mut self, s: usize, c2s: bool) -> &mut Side {
        if c2s {
            &mut self.sessions[s].client
        } else {
            &mut self.sessions[s].server
        }
    }

    /// Sends a copy if one is due; true if it did.
    fn copy_if_due(&mut self, s: usize, c2s: bool, now_ms: u64) -> Result<bool, SimError> {
        let max = self.max_sends();
        let Some(i) = self.side(s, c2s).due_copy(now_ms, max) else {
            return Ok(false);
        };
        let (id, m) = {
            let p = &self.side(s, c2s).pending[i];
            (p.id, p.message.clone())
        };
        let seq = self.send(s, c2s, now_ms, &m, Some(id))?;
        let p = &mut self.side(s, c2s).pending[i];
        p.copies.push(seq);
        p.last_ms = now_ms;
        Ok(true)
    }

    fn deliver(&mut self, until_us: u64) {
        let mut due: Vec<InFlight> = Vec::new();
        self.flight.retain(|f| {
            if f.deliver_us <= until_us {
                due.push(f.clone());
                false
            } else {
                true
            }
        });
        due.sort_by_key(|f| f.deliver_us);
        for f in due {
            let Ok(p) = super::wire::Packet::new_checked(&f.payload) else {
                continue;
            };
            let session = &mut self.sessions[f.session];
            if f.c2s {
                session.server_heard_ms = Some(f.deliver_us / 1_000);
                session.server.receive(p.seq(), p.ack_bits());
                match p.packet_type() {
                    PacketType::ConnectionRequest if session.sstate == ServerState::Waiting => {
                        if self.config.reject {
                            session.answer_pending_reject = true;
                        } else {
                            session.sstate = ServerState::Playing;
                            session.answer_pending_reject = false;
                            // The Accept goes out on the next server tick.
                            session.ticks = u64::MAX;
                        }
                    }
                    PacketType::Disconnect
                        if matches!(session.sstate, ServerState::Playing | ServerState::Closed) =>
                    {
                        session.sstate = ServerState::Closed;
                    }
                    _ => {}
                }
            } else {
                session.client.receive(p.seq(), p.ack_bits());
                match p.packet_type() {
                    PacketType::ConnectionAccept if session.cstate == ClientState::Connecting => {
                        session.cstate = ClientState::Playing;
                    }
                    PacketType::ConnectionReject => session.cstate = ClientState::Done,
                    // The server gave the client up.
                    PacketType::Disconnect if session.cstate == ClientState::Playing => {
                        session.cstate = ClientState::Done;
                    }
                    _ => {}
                }
            }
        }
    }

    fn client_tick(&mut self, s: usize, now: u64) -> Result<(), SimError> {
        let state = self.sessions[s].cstate;
        if state != ClientState::Done
            && self.gives_up(s, true, now, state == ClientState::Playing)?
        {
            self.sessions[s].cstate = ClientState::Done;
            return Ok(());
        }
        match state {
            ClientState::Done => {}
            ClientState::Connecting => {
                if self.side(s, true).pending.is_empty() && self.side(s, true).acked.is_empty() {
                    let name = format!("player{s}");
                    let m = Message::ConnectionRequest(ConnectionRequest {
                        protocol_version: 1,
                        player_name: FixedStr::new(name.as_bytes()),
                        client_id: self.config.seed.wrapping_mul(1000) + s as u64,
                    });
                    self.send_reliable(s, true, now, m)?;
                } else {
                    self.copy_if_due(s, true, now)?;
                }
            }
            ClientState::Playing if now >= self.config.duration_ms => {
                self.sessions[s].cstate = ClientState::Disconnecting;
                // Only the Disconnect is followed from now on.
                self.side(s, true).pending.clear();
                let m = Message::Disconnect(Reason {
                    reason: 1,
                    message: FixedStr::new(b"bye"),
                });
                self.send_reliable(s, true, now, m)?;
            }
            ClientState::Playing => {
                if self.copy_if_due(s, true, now)? {
                    return Ok(());
                }
                let tick = now / self.config.tick_ms;
                let chat = self.config.chat_every;
                let m = if chat > 0 && tick.is_multiple_of(u64::from(chat)) {
                    let text = format!("gg {tick}");
                    let m = Message::ChatMessage(ChatMessage {
                        sender_id: s as u32 + 1,
                        channel: 1,
                        message: FixedStr::new(text.as_bytes()),
                    });
                    return self.send_reliable(s, true, now, m).map(|_| ());
                } else if tick.is_multiple_of(40) {
                    let m = Message::Heartbeat(Heartbeat {
                        timestamp: now as u32,
                    });
                    return self.send_reliable(s, true, now, m).map(|_| ());
                } else {
                    let phase = (tick % 20) as f32 / 10.0 - 1.0;
                    Message::PlayerInput(PlayerInput {
                        tick: tick as u32,
                        move_x: phase,
                        move_y: -phase,
                        look_x: 0.5,
                        look_y: 0.25,
                        button_state: (tick % 4) as u32,
                    })
                };
                self.send(s, true, now, &m, None)?;
            }
            ClientState::Disconnecting => {
                if self.side(s, true).pending.is_empty() {
                    self.sessions[s].cstate = ClientState::Done;
                } else {
                    self.copy_if_due(s, true, now)?;
                }
            }
        }
        Ok(())
    }

    fn server_tick(&mut self, s: usize, now: u64) -> Result<(), SimError> {
        if self.sessions[s].answer_pending_reject {
            self.sessions[s].answer_pending_reject = false;
            self.sessions[s].sstate = ServerState::Rejected;
            let m = Message::ConnectionReject(Reason {
                reason: 1,
                message: FixedStr::new(b"server full"),
            });
            // Sent once: the server keeps no state for a rejected client.
            let id = self.new_msg();
            self.send(s, false, now, &m, Some(id))?;
            return Ok(());
        }
        match self.sessions[s].sstate {
            ServerState::Waiting | ServerState::Rejected | ServerState::Dropped => {}
            ServerState::Closed => {
                // Answer each Disconnect copy received since the last tick.
                let got_new = self.sessions[s]
                    .server
                    .received
                    .last()
                    .is_some_and(|&r| Some(r) != self.sessions[s].last_answered);
                if got_new {
                    let (id, m) = match self.sessions[s].server_disconnect.clone() {
                        Some(x) => x,
                        None => {
                            let id = self.new_msg();
                            let m = Message::Disconnect(Reason {
                                reason: 1,
                                message: FixedStr::new(b"goodbye"),
                            });
                            self.sessions[s].server_disconnect = Some((id, m.clone()));
                            (id, m)
                        }
                    };
                    self.sessions[s].server.pending.clear();
                    self.send(s, false, now, &m, Some(id))?;
                    self.sessions[s].last_answered =
                        self.sessions[s].server.received.last().copied();
                }
            }
            ServerState::Playing => {
                if self.sessions[s].ticks == u64::MAX {
                    self.sessions[s].ticks = 0;
                    let m = Message::ConnectionAccept(ConnectionAccept {
                        assigned_player_id: s as u32 + 1,
                        server_tick: 0,
                        tick_rate: (1000 / self.config.tick_ms) as u32,
                    });
                    self.send_reliable(s, false, now, m)?;
                    return Ok(());
                }
                // The notes' connection timeout: 10 s without a client packet.
                if self.sessions[s]
                    .server_heard_ms
                    .is_some_and(|t| now >= t + CONNECTION_TIMEOUT_MS)
                {
                    self.sessions[s].sstate = ServerState::Dropped;
                    return Ok(());
                }
                if self.gives_up(s, false, now, true)? {
                    self.sessions[s].sstate = ServerState::Dropped;
                    return Ok(());
                }
                self.sessions[s].ticks += 1;
                let tick = self.sessions[s].ticks;
                if self.copy_if_due(s, false, now)? {
                    return Ok(());
                }
                let every = u64::from(self.config.event_every);
                if every > 0 && tick.is_multiple_of(every) {
                    let m = self.event(tick / every);
                    self.send_reliable(s, false, now, m)?;
                    return Ok(());
                }
                let e = |id: u32, x: f32| EntityState {
                    entity_id: id,
                    entity_type: 1,
                    position: Vector3 { x, y: 1.0, z: 0.0 },
                    rotation: Quaternion {
                        w: 1.0,
                        ..Quaternion::default()
                    },
                    velocity: Vector3::default(),
                    health: 100,
                    flags: 1,
                };
                let m = Message::WorldSnapshot(WorldSnapshot {
                    tick: tick as u32,
                    entities: vec![e(1, tick as f32), e(2, -(tick as f32))],
                });
                self.send(s, false, now, &m, None)?;
            }
        }
        Ok(())
    }

    /// A reliable server event: spawn, destroy, match state, score, in turn.
    fn event(&mut self, n: u64) -> MessageRepr {
        self.next_entity += 1;
        let id = self.next_entity;
        match n % 4 {
            0 => Message::EntitySpawn(EntitySpawn {
                entity_id: id,
                entity_type: 2,
                position: Vector3 {
                    x: n as f32,
                    y: 0.0,
                    z: 0.0,
                },
                rotation: Quaternion {
                    w: 1.0,
                    ..Quaternion::default()
                },
                owner_id: 1,
            }),
            1 => Message::EntityDestroy(EntityDestroy {
                entity_id: id,
                reason: 2,
            }),
            2 => Message::MatchState(MatchState {
                state: 3,
                time_remaining: 60_000u32.saturating_sub(n as u32 * 1000),
                team_scores: [n as u8, 0, 0, 0],
            }),
            _ => Message::PlayerScored(PlayerScored {
                player_id: 1,
                points: id,
                score_type: 1,
            }),
        }
    }
}

/// The truth of a simulation, from its records (captured packets in capture
/// order) and what each session sent. Every count follows the contract of
/// [`super::analysis`], computed from what the simulator decided: which
/// datagrams the tap saw, which it damaged and how, which it delayed, which
/// message each packet carries and which peer packets each ack bit names.
fn truth(w: &World, records: &[Record]) -> Truth {
    let mut sessions = Vec::new();
    let mut total: BTreeMap<String, u64> = BTreeMap::new();
    let corrupting = !zero_rates(&w.config.corrupt);
    for (i, s) in w.sessions.iter().enumerate() {
        let recs: Vec<&Record> = records.iter().filter(|r| r.session == i).collect();
        let mut f = zero_counts(corrupting);
        let packets = [
            recs.iter().filter(|r| r.c2s).count() as u64,
            recs.iter().filter(|r| !r.c2s).count() as u64,
        ];
        bump(
            &mut f,
            "duplicate-packet",
            recs.iter().filter(|r| r.duplicate).count() as u64,
        );
        bump(
            &mut f,
            "malformed",
            recs.iter()
                .filter(|r| !r.duplicate && r.damage.is_some_and(|d| d.rule().is_none()))
                .count() as u64,
        );
        // What the analyzer follows: numbers and acks (header decodes) ...
        let analysed: Vec<&Record> = recs.iter().copied().filter(|r| r.analysed()).collect();
        // (numbers also of headers that do not decode).
        let numbered: Vec<&Record> = recs.iter().copied().filter(|r| r.numbered()).collect();
        let trips = round_trips(&numbered);
        missing_truth(s, &numbered, &trips, &mut f);
        order_truth(&numbered, &mut f);
        violation_truth(&analysed, &mut f);
        // The analysed records' trips (every analysed record is numbered).
        let analysed_trips: Vec<Trip> = numbered
            .iter()
            .zip(&trips)
            .filter(|(r, _)| r.analysed())
            .map(|(_, t)| *t)
            .collect();
        retransmission_truth(&analysed, &analysed_trips, &mut f);
        let state = lifecycle_truth(&analysed, &numbered, &mut f);
        for (k, v) in &f {
            *total.entry(k.clone()).or_default() += v;
        }
        sessions.push(SessionTruth {
            client: s.client_addr.to_string(),
            server: s.server_addr.to_string(),
            packets,
            sent: s.sent,
            lost_before_tap: s.lost_before_tap,
            state: state.to_owned(),
            findings: f,
        });
    }
    Truth {
        config: w.config.clone(),
        sessions,
        findings: total,
    }
}

/// Every kind a session's truth lists, at 0 (the damage's violations when
/// the run corrupts).
fn zero_counts(corrupting: bool) -> BTreeMap<String, u64> {
    let mut kinds = vec![
        "duplicate-packet",
        "lost",
        "not-captured",
        "reordered",
        "ack-unseen",
        "malformed",
        "truncated",
        "oversize",
        "retransmission",
        "retransmit-limit",
        "spurious-retransmission",
        "repeat",
        "never-acked",
        "no-ack-captured",
        "ack-drift",
        "heartbeat-missing",
        "connection-rejected",
        "disconnect-sent",
        "violation/before-accept",
    ];
    if corrupting {
        kinds.extend([
            "violation/invalid-enum",
            "violation/non-finite-float",
            "violation/input-range",
            "violation/string-padding",
        ]);
    }
    kinds.into_iter().map(|k| (k.to_owned(), 0)).collect()
}

fn bump(f: &mut BTreeMap<String, u64>, k: &str, n: u64) {
    *f.entry(k.to_owned()).or_default() += n;
}

/// Whether `r`'s ack bits acknowledge the peer's `seq`.
fn acks(r: &Record, seq: u16) -> bool {
    let n = r.seq.wrapping_sub(seq).wrapping_sub(1);
    n < 32 && r.ack_bits & (1 << n) != 0
}

/// Whether `r`'s window shows `seq` had not arrived when `r` was sent: it
/// leaves `seq` unacknowledged while acknowledging a newer number of the
/// peer (a packet sent after it), or `r` was captured at least `round_trip`
/// (ns; the smoothed ack delay of `seq`'s direction before `r`) after
/// `since_us`, when `seq` could last have passed the tap. With `last`, also
/// when `r` is the last window that can reach `seq` (numbered 32 past it).
fn passes_over(r: &Record, seq: u16, since_us: u64, round_trip: Option<f64>, last: bool) -> bool {
    let n = r.seq.wrapping_sub(seq).wrapping_sub(1);
    let late = round_trip.is_some_and(|x| (r.ts_us.saturating_sub(since_us) * 1_000) as f64 >= x);
    n < 32
        && r.ack_bits & (1 << n) == 0
        && (r.ack_bits & ((1 << n) - 1) != 0 || late || last && n == 31)
}

/// Rule 4's missing numbers, of session `s`.
fn missing_truth(s: &Session, numbered: &[&Record], trips: &[Trip], f: &mut BTreeMap<String, u64>) {
    // Lost or not captured: numbers the analyzer never saw, between the
    // first and last it saw of the direction. Not captured when a peer
    // packet it analysed after the number went missing (a newer one of
    // the direction came) acknowledges it, or when none of those leaves it
    // unacknowledged after it could have arrived ([`passes_over`]: from the
    // packet that skipped it; unconfirmed: a window sent while it was in
    // flight shows nothing); lost otherwise.
    for (d, numbers) in s.numbers.iter().enumerate() {
        let c2s = d == 0;
        let first = numbers.iter().position(|n| n.1);
        let last = numbers.iter().rposition(|n| n.1);
        let (Some(a), Some(b)) = (first, last) else {
            continue;
        };
        for &(seq, _) in numbers[a..=b].iter().filter(|n| !n.1) {
            let missing_at = numbered
                .iter()
                .position(|r| r.c2s == c2s && S16.newer(u32::from(r.seq), u32::from(seq)));
            let delivered = missing_at.is_some_and(|p| {
                numbered[p + 1..]
                    .iter()
                    .any(|r| r.c2s != c2s && r.analysed() && acks(r, seq))
            });
            let covered = missing_at.is_some_and(|p| {
                let since = numbered[p].ts_us;
                numbered[p + 1..].iter().zip(&trips[p + 1..]).any(|(r, t)| {
                    r.c2s != c2s && r.analysed() && passes_over(r, seq, since, t.before[d], false)
                })
            });
            bump(
                f,
                if delivered || !covered {
                    "not-captured"
                } else {
                    "lost"
                },
                1,
            );
        }
    }
}

/// Reordered packets and ack-unseen runs.
fn order_truth(numbered: &[&Record], f: &mut BTreeMap<String, u64>) {
    // Reordered: not newer than the highest of its direction so far;
    // ack-unseen: runs of packets acknowledging a peer number newer than
    // the peer's highest captured.
    let mut highest: [Option<u16>; 2] = [None, None];
    let mut unseen_run = [false; 2];
    for r in numbered {
        let d = usize::from(!r.c2s);
        match highest[d] {
            Some(h) if !S16.newer(u32::from(r.seq), u32::from(h)) => bump(f, "reordered", 1),
            _ => highest[d] = Some(r.seq),
        }
        // A header that does not decode: its acks are not read.
        if !r.analysed() {
            continue;
        }
        let Some(peer) = highest[1 - d] else {
            continue;
        };
        let unseen = (0..32u16).any(|n| {
            r.ack_bits & (1 << n) != 0
                && S16.newer(
                    u32::from(r.seq.wrapping_sub(n).wrapping_sub(1)),
                    u32::from(peer),
                )
        });
        if unseen && !unseen_run[d] {
            bump(f, "ack-unseen", 1);
        }
        unseen_run[d] = unseen;
    }
}

/// The damage's violations, as incidents.
fn violation_truth(analysed: &[&Record], f: &mut BTreeMap<String, u64>) {
    // Violations: incidents per (rule, type) and direction, the damage
    // breaking one field per rule and type; a packet of the type that does
    // not break it (or does not decode) ends the incident.
    let mut open: Vec<(bool, &str, PacketType)> = Vec::new();
    for r in analysed {
        let broken = r.damage.and_then(Damage::rule).filter(|_| r.decodes());
        open.retain(|&(c2s, rule, t)| {
            !(c2s == r.c2s && t == r.packet_type && Some(rule) != broken)
        });
        if let Some(rule) = broken
            && !open.contains(&(r.c2s, rule, r.packet_type))
        {
            open.push((r.c2s, rule, r.packet_type));
            bump(f, &format!("violation/{rule}"), 1);
        }
    }
}

/// What judges whether an acknowledgement reached a sender, and whether a
/// window came after a number could have arrived, for each numbered record
/// (in the order of `numbered`): the smoothed ack delay of each direction
/// (c2s, s2c), in ns, before and after the record's acknowledgements, and
/// whether the record was overtaken (its number not newer than its
/// direction's highest before it).
///
/// An ack delay is the time from the capture of a packet to the capture of
/// the first packet of the peer whose bits acknowledge it (rule 5), for a
/// number captured before any acknowledgement of it, the bits of a packet
/// read from bit 0 up; the smoothed delay weighs each sample 1/8 (TCP's
/// SRTT). Only numbers within the 256 below the peer's highest and not newer
/// than it are judged, as the analyzer follows them.
fn round_trips(numbered: &[&Record]) -> Vec<Trip> {
    let mut highest: [Option<u16>; 2] = [None, None];
    // Per direction and number: when captured (None: skipped, missing), and
    // whether an acknowledgement of it was captured.
    let mut numbers: [BTreeMap<u16, (Option<u64>, bool)>; 2] = Default::default();
    let mut srtt: [Option<f64>; 2] = [None, None];
    let mut out = Vec::new();
    for r in numbered {
        let d = usize::from(!r.c2s);
        let seq = u32::from(r.seq);
        let overtaken = highest[d].is_some_and(|h| !S16.newer(seq, u32::from(h)));
        match highest[d] {
            Some(h) if overtaken => {
                // A missing number filled, keeping its acknowledgement.
                if S16.ahead(u32::from(h), seq) < 256
                    && let Some(n) = numbers[d].get_mut(&r.seq)
                    && n.0.is_none()
                {
                    n.0 = Some(r.ts_us);
                }
            }
            _ => {
                let skipped = highest[d].map_or(0, |h| S16.ahead(seq, u32::from(h)) - 1);
                for back in 1..=skipped.min(255) {
                    numbers[d].insert(S16.sub(seq, back) as u16, (None, false));
                }
                numbers[d].insert(r.seq, (Some(r.ts_us), false));
                highest[d] = Some(r.seq);
            }
        }
        let before = srtt;
        let peer_highest = highest[1 - d];
        if !r.analysed() {
            out.push(Trip {
                before,
                after: srtt,
                overtaken,
                peer_highest,
            });
            continue;
        }
        if let Some(peer) = highest[1 - d] {
            for n in (0..32u16).filter(|n| r.ack_bits & (1 << n) != 0) {
                let s = r.seq.wrapping_sub(n).wrapping_sub(1);
                if S16.newer(u32::from(s), u32::from(peer))
                    || S16.ahead(u32::from(peer), u32::from(s)) >= 256
                {
                    continue;
                }
                let Some(number) = numbers[1 - d].get_mut(&s).filter(|x| !x.1) else {
                    continue;
                };
                number.1 = true;
                if let Some(sent) = number.0 {
                    let sample = ((r.ts_us - sent) * 1_000) as f64;
                    let smoothed = &mut srtt[1 - d];
                    *smoothed = Some(smoothed.map_or(sample, |x| x + (sample - x) / 8.0));
                }
            }
        }
        out.push(Trip {
            before,
            after: srtt,
            overtaken,
            peer_highest,
        });
    }
    out
}

/// What [`round_trips`] gives for one record: the smoothed ack delay of each
/// direction (c2s, s2c) before and after its acknowledgements, and whether it
/// was overtaken, and the peer's highest number captured before it.
#[derive(Debug, Clone, Copy)]
struct Trip {
    before: [Option<f64>; 2],
    after: [Option<f64>; 2],
    overtaken: bool,
    peer_highest: Option<u16>,
}

/// Messages as the capture shows them (the analyzer's contract): a packet
/// of the same type and bytes as an earlier one of its direction, whose
/// latest copy was captured less than 10 s before, is a copy of it. A peer
/// that gives a message up and sends the same bytes again as a new one
/// (the lenient peers' ConnectionRequest) goes on copying it, as far as
/// the capture can tell. Copies in capture order.
fn messages_as_captured<'a>(decoded: &[&'a Record]) -> Vec<Vec<&'a Record>> {
    let mut by_msg: Vec<Vec<&Record>> = Vec::new();
    for r in decoded {
        if r.msg.is_none() || !r.packet_type.is_reliable() {
            continue;
        }
        let copy_of = by_msg.iter_mut().rev().find(|m| {
            let last = m[m.len() - 1];
            last.c2s == r.c2s
                && last.packet_type == r.packet_type
                && last.body == r.body
                && r.ts_us < last.ts_us + CONNECTION_TIMEOUT_MS * 1_000
        });
        match copy_of {
            Some(m) => m.push(r),
            None => by_msg.push(vec![r]),
        }
    }
    by_msg
}

/// Copies of reliable messages: retransmissions, spurious ones (the
/// acknowledgement captured at least the round trip between the tap and
/// the sender before the copy: `rtt`, the peer direction's smoothed ack
/// delay, from [`round_trips`]), repeats that may have crossed the
/// acknowledgement in flight, the limit, and messages never acknowledged.
fn retransmission_truth(analysed: &[&Record], rtt: &[Trip], f: &mut BTreeMap<String, u64>) {
    let decoded: Vec<&Record> = analysed.iter().copied().filter(|r| r.decodes()).collect();
    // Whether a packet analysed before position `before` (of `analysed`)
    // acknowledges `seq` of direction `c2s`.
    let acked_before = |c2s: bool, seq: u16, before: usize| -> bool {
        analysed[..before]
            .iter()
            .any(|r| r.c2s != c2s && acks(r, seq))
    };
    let position = |r: &Record| {
        analysed
            .iter()
            .position(|a| std::ptr::eq(*a, r))
            .unwrap_or(analysed.len())
    };
    let by_msg = messages_as_captured(&decoded);
    for copies in &by_msg {
        let c2s = copies[0].c2s;
        for (tries, &k) in copies.iter().enumerate().skip(1) {
            let at = position(k);
            // The first packet captured before the copy acknowledging an
            // earlier copy, and whether it reached the sender before it
            // sent this one (as far as the capture proves).
            let first_ack = analysed[..at]
                .iter()
                .find(|r| r.c2s != c2s && copies[..tries].iter().any(|e| acks(r, e.seq)));
            let reached = |ack: &Record| {
                let Trip {
                    after: srtt,
                    overtaken,
                    ..
                } = rtt[at];
                let since_ns = ((k.ts_us - ack.ts_us) * 1_000) as f64;
                !overtaken && srtt[usize::from(c2s)].is_some_and(|x| since_ns >= x)
            };
            // The copy's own ack bits reach the acknowledging packet and
            // leave it out: its sender had not received it.
            let unreceived = |ack: &Record| {
                let n = k.seq.wrapping_sub(ack.seq).wrapping_sub(1);
                n < 32 && k.ack_bits & (1 << n) == 0
            };
            if let Some(ack) = first_ack {
                let kind = if !unreceived(ack) && reached(ack) {
                    "spurious-retransmission"
                } else {
                    "repeat"
                };
                bump(f, kind, 1);
            } else if tries > 5 {
                if tries == 6 {
                    bump(f, "retransmit-limit", 1);
                }
            } else {
                bump(f, "retransmission", 1);
            }
        }
        let ever = copies
            .iter()
            .any(|e| acked_before(c2s, e.seq, analysed.len()));
        let last_ts = copies[copies.len() - 1].ts_us;
        let peer_last = analysed
            .iter()
            .filter(|r| r.c2s != c2s)
            .map(|r| r.ts_us)
            .max();
        // Proven when each copy was shown unacknowledged: the peer's numbers
        // were already past every window that can reach it when it was
        // captured, or a peer packet analysed after it left it out (see
        // [`passes_over`]); otherwise a packet the tap missed may have
        // acknowledged one.
        let shown = copies.iter().all(|e| {
            let at = position(e);
            let beyond = rtt[at].peer_highest.is_some_and(|h| {
                S16.newer(u32::from(h), u32::from(e.seq))
                    && S16.ahead(u32::from(h), u32::from(e.seq)) >= 32
            });
            beyond
                || analysed[at + 1..].iter().zip(&rtt[at + 1..]).any(|(r, t)| {
                    r.c2s != c2s
                        && passes_over(r, e.seq, e.ts_us, t.before[usize::from(!c2s)], true)
                })
        });
        if !ever && peer_last.is_some_and(|p| p > last_ts + RETRANSMIT_MS * 1_000) {
            bump(
                f,
                if shown {
                    "never-acked"
                } else {
                    "no-ack-captured"
                },
                1,
            );
        }
    }
}

/// Drift, the handshake, heartbeats and the session's end state.
fn lifecycle_truth(
    analysed: &[&Record],
    numbered: &[&Record],
    f: &mut BTreeMap<String, u64>,
) -> &'static str {
    let saw_start = analysed
        .first()
        .is_some_and(|r| r.c2s && r.packet_type == PacketType::ConnectionRequest);
    let mut life = Life {
        saw_start,
        // The analyzer's lifecycle, for silences while connected.
        connected: !saw_start,
        ..Life::default()
    };
    for r in numbered {
        if !r.analysed() {
            // Only its number: the peer's drift is judged against it.
            life.number(r);
            continue;
        }
        life.silence(r, f);
        life.number(r);
        life.drift(r, f);
        life.handshake(r, f);
    }
    life.end(f)
}

/// What [`lifecycle_truth`] follows of a session, record by record: drift
/// incidents, game packets before a captured Accept, heartbeats, the
/// answer and the Disconnects.
#[derive(Debug, Default)]
struct Life {
    saw_start: bool,
    /// The highest number of each direction (c2s, s2c).
    highest: [Option<u16>; 2],
    /// A drift incident is open.
    drift_open: bool,
    accepted: bool,
    rejected: bool,
    before_accept: [bool; 2],
    /// The first game packet of a direction before any captured answer:
    /// whether it acknowledges nothing.
    pending: [Option<bool>; 2],
    server_packets: u64,
    disconnect: [bool; 2],
    /// The analyzer's lifecycle, for silences while connected.
    connected: bool,
    last_us: [Option<u64>; 2],
    last_seq: [u16; 2],
}

impl Life {
    /// The record's number, the highest of its direction if newer.
    fn number(&mut self, r: &Record) {
        let h = &mut self.highest[usize::from(!r.c2s)];
        if h.is_none_or(|h| S16.newer(u32::from(r.seq), u32::from(h))) {
            *h = Some(r.seq);
        }
    }

    /// A silence of more than 1 s before the record while connected (its
    /// number the next: a number skipped was sent, so no silence shows), and
    /// whether the session is connected after it.
    fn silence(&mut self, r: &Record, f: &mut BTreeMap<String, u64>) {
        let d = usize::from(!r.c2s);
        if self.connected
            && r.seq == self.last_seq[d].wrapping_add(1)
            && let Some(prev) = self.last_us[d]
            && r.ts_us - prev > HEARTBEAT_MS * 1_000
        {
            bump(f, "heartbeat-missing", 1);
        }
        self.last_us[d] = Some(r.ts_us);
        self.last_seq[d] = r.seq;
        match r.packet_type {
            _ if !r.decodes() => {}
            PacketType::ConnectionAccept if self.saw_start && !self.accepted && !self.rejected => {
                self.connected = true;
            }
            PacketType::ConnectionReject | PacketType::Disconnect => self.connected = false,
            _ => {}
        }
    }

    /// The record's number out of reach of the peer's (more than 32
    /// apart): one `ack-drift` per incident.
    fn drift(&mut self, r: &Record, f: &mut BTreeMap<String, u64>) {
        let d = usize::from(!r.c2s);
        let Some(peer) = self.highest[1 - d] else {
            return;
        };
        let reach = S16
            .distance(u32::from(r.seq), u32::from(peer))
            .is_some_and(|x| (-32..=32).contains(&x));
        if reach {
            self.drift_open = false;
        } else if !self.drift_open {
            self.drift_open = true;
            bump(f, "ack-drift", 1);
        }
    }

    /// The answer, the Disconnects and game packets before the Accept.
    fn handshake(&mut self, r: &Record, f: &mut BTreeMap<String, u64>) {
        let d = usize::from(!r.c2s);
        if !r.c2s {
            self.server_packets += 1;
        }
        let decodes = r.decodes();
        // The first answer judges the game packets before it: a violation
        // only for the client's, acknowledging nothing, when the answer is
        // the server's first packet captured.
        if decodes
            && !self.accepted
            && !self.rejected
            && matches!(
                r.packet_type,
                PacketType::ConnectionAccept | PacketType::ConnectionReject
            )
        {
            if self.pending[0].take() == Some(true) && self.server_packets == 1 {
                self.before_accept[0] = true;
                bump(f, "violation/before-accept", 1);
            }
            self.pending[1] = None;
        }
        match r.packet_type {
            _ if !decodes => {}
            PacketType::ConnectionAccept => self.accepted = true,
            PacketType::ConnectionReject if !self.rejected => {
                self.rejected = true;
                bump(f, "connection-rejected", 1);
            }
            PacketType::Disconnect if !self.disconnect[d] => {
                self.disconnect[d] = true;
                bump(f, "disconnect-sent", 1);
            }
            t if t.id() >= 0x0100 && self.saw_start && !self.accepted && !self.before_accept[d] => {
                if self.rejected {
                    self.before_accept[d] = true;
                    bump(f, "violation/before-accept", 1);
                } else {
                    self.pending[d].get_or_insert(r.ack_bits == 0);
                }
            }
            _ => {}
        }
    }

    /// A side silent until the end while connected, and the state the
    /// session ends in.
    fn end(&self, f: &mut BTreeMap<String, u64>) -> &'static str {
        if self.connected {
            for d in 0..2 {
                if let (Some(last), Some(peer)) = (self.last_us[d], self.last_us[1 - d])
                    && peer > last + HEARTBEAT_MS * 1_000
                {
                    bump(f, "heartbeat-missing", 1);
                }
            }
        }
        if self.rejected {
            "rejected"
        } else if self.disconnect.iter().any(|&d| d) {
            "disconnected"
        } else if self.saw_start && !self.accepted {
            "connecting"
        } else {
            "connected"
        }
    }
}

/// Writes the frames as an Ethernet pcap (nanosecond timestamps from
/// [`EPOCH_NS`]).
pub fn write_pcap(sim: &Simulation, path: &Path) -> Result<(), SimError> {
    let mut out = PcapWriter::create(path, crate::capture::LinkType::Ethernet)?;
    for f in &sim.frames {
        let frame = udp_frame(Link::Ethernet, f.src, f.dst, &f.payload);
        out.write(Timestamp(EPOCH_NS + f.ts_us * 1_000), &frame);
    }
    out.finish()?;
    Ok(())
}

/// Simulates, writes the pcap and (if asked) its truth as pretty JSON.
pub fn run(config: &SimConfig, pcap: &Path, truth: Option<&Path>) -> Result<Truth, SimError> {
    let sim = simulate(config)?;
    write_pcap(&sim, pcap)?;
    if let Some(path) = truth {
        write_truth(&sim.truth, path)?;
    }
    Ok(sim.truth)
}

/// `lwarscope sim --proto starstrike`: the request as a [`SimConfig`] (peers
/// that keep the notes' retransmission limit: 6 sends, then Disconnect with
/// reason Timeout), the pcap at `req.write` and, if asked, its truth beside it
/// (`FILE.truth.json`). Every fault of the request is modelled, per direction:
/// loss before the tap, duplication, reordering (PlayerInput and
/// WorldSnapshot delayed two ticks), damage into every [`Damage`] kind, and
/// tap misses.
pub fn sim_request(
    req: &crate::proto::sim::SimRequest,
) -> Result<crate::proto::sim::SimOutcome, String> {
    if req.byte_order.is_some() {
        return Err(crate::proto::sim::unsupported("Starstrike", "--byte-order"));
    }
    let apart = |r: crate::proto::sim::Rates| (r.s2c != r.c2s).then_some(r.s2c);
    let config = SimConfig {
        seed: req.seed,
        clients: req.clients,
        duration_ms: req.duration_ms,
        loss: req.loss.c2s,
        loss_s2c: apart(req.loss),
        duplicate: req.duplicate.c2s,
        duplicate_s2c: apart(req.duplicate),
        reorder: [req.reorder.c2s, req.reorder.s2c],
        corrupt: [req.corrupt.c2s, req.corrupt.s2c],
        tap_miss: [req.tap_miss.c2s, req.tap_miss.s2c],
        max_sends: Some(MAX_SENDS),
        ..SimConfig::default()
    };
    let sim = simulate(&config).map_err(|e| e.to_string())?;
    write_pcap(&sim, &req.write).map_err(|e| e.to_string())?;
    let truth = if req.truth {
        let path = req.write.with_extension("truth.json");
        write_truth(&sim.truth, &path).map_err(|e| e.to_string())?;
        Some(path)
    } else {
        None
    };
    Ok(crate::proto::sim::SimOutcome {
        frames: sim.frames.len() as u64,
        sessions: sim.truth.sessions.len(),
        truth,
    })
}

/// Writes a truth as pretty JSON, with a final newline.
pub fn write_truth(truth: &Truth, path: &Path) -> Result<(), SimError> {
    let mut json = serde_json::to_string_pretty(truth)?;
    json.push('\n');
    std::fs::write(path, json)?;
    Ok(())
}

/// Writes the frames of `sim` merged, in time order, with every frame of
/// another capture (`other`, an Ethernet capture such as an lwar simulated
/// one: `captures/mixed-lwar-strs.pcap` is `sim-clean.pcap` and a Starstrike
/// run). On equal times the other capture's frame comes first. Returns the
/// frames written.
pub fn write_mixed(sim: &Simulation, other: &Path, out: &Path) -> Result<u64, SimError> {
    let mut source = crate::capture::Source::files(&[other])?;
    let mut theirs: Vec<(Timestamp, Vec<u8>)> = Vec::new();
    while let Some(frame) = source.next_frame()? {
        if frame.link != crate::capture::LinkType::Ethernet {
            return Err(SimError::Config("the other capture is not Ethernet"));
        }
        theirs.push((frame.ts, frame.data.to_vec()));
    }
    let ours = sim.frames.iter().map(|f| {
        (
            Timestamp(EPOCH_NS + f.ts_us * 1_000),
            udp_frame(Link::Ethernet, f.src, f.dst, &f.payload),
        )
    });
    let mut all: Vec<(Timestamp, Vec<u8>)> = theirs.into_iter().chain(ours).collect();
    // Stable: the other capture's frames first on equal times.
    all.sort_by_key(|(ts, _)| *ts);
    let mut w = PcapWriter::create(out, crate::capture::LinkType::Ethernet)?;
    for (ts, frame) in &all {
        w.write(*ts, frame);
    }
    w.finish()?;
    Ok(all.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::starstrike::wire::{self, ErrorKind, ViolationKind};

    fn packet(t: PacketType) -> Vec<u8> {
        let m = match t {
            PacketType::PlayerInput => Message::PlayerInput(PlayerInput {
                tick: 1,
                move_x: 0.5,
                ..PlayerInput::default()
            }),
            PacketType::WorldSnapshot => Message::WorldSnapshot(WorldSnapshot {
                tick: 1,
                entities: vec![
                    EntityState {
                        entity_id: 1,
                        entity_type: 1,
                        health: 100,
                        ..EntityState::default()
                    };
                    2
                ],
            }),
            PacketType::ChatMessage => Message::ChatMessage(ChatMessage {
                sender_id: 1,
                channel: 1,
                message: FixedStr::new(b"gg 30"),
            }),
            _ => Message::Heartbeat(Heartbeat { timestamp: 7 }),
        };
        PacketRepr::new(300, 0b101, m).to_bytes().unwrap()
    }

    /// Each kind of damage makes exactly what it says, as the wire format
    /// (not the analyzer) reads it: the truth relies on it.
    #[test]
    fn every_damage_makes_its_malformation_or_its_one_violation() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut made = std::collections::BTreeSet::new();
        for t in [
            PacketType::PlayerInput,
            PacketType::WorldSnapshot,
            PacketType::ChatMessage,
            PacketType::Heartbeat,
        ] {
            let clean = packet(t);
            assert!(
                wire::Packet::new_checked(&clean)
                    .unwrap()
                    .violations()
                    .is_empty()
            );
            for &k in Damage::applicable(t) {
                let mut p = clean.clone();
                k.apply(t, &mut p, &mut rng);
                made.insert(k);
                assert_eq!(
                    wire::is_starstrike(&p),
                    k != Damage::WrongMagic,
                    "{t:?} {k:?}"
                );
                let header = wire::check_header(&p);
                assert_eq!(header.is_ok(), k.header_ok(), "{t:?} {k:?}");
                if let Ok(h) = header {
                    // The number survives: the analyzer follows it.
                    assert_eq!((h.seq, h.packet_type), (300, t));
                }
                let decoded = wire::Packet::new_checked(&p);
                match (k, k.rule()) {
                    (_, Some(rule)) => {
                        let v = decoded.unwrap().violations();
                        assert_eq!(v.len(), 1, "{t:?} {k:?} {v:?}");
                        assert_eq!(v[0].kind().name(), rule);
                        assert_ne!(v[0].kind(), ViolationKind::Oversize);
                    }
                    (Damage::ShortHeader, None) => {
                        assert_eq!(decoded.unwrap_err().kind(), ErrorKind::ShortHeader);
                        assert!((8..12).contains(&p.len()));
                    }
                    (Damage::WrongMagic, None) => {
                        assert_eq!(decoded.unwrap_err().kind(), ErrorKind::WrongMagic);
                    }
                    (Damage::UnknownType, None) => {
                        assert_eq!(decoded.unwrap_err().kind(), ErrorKind::UnknownType);
                    }
                    (Damage::ShortPayload, None) => {
                        assert_eq!(decoded.unwrap_err().kind(), ErrorKind::Truncated);
                    }
                    (_, None) => {
                        let e = decoded.unwrap_err().kind();
                        assert!(
                            matches!(e, ErrorKind::TrailingBytes | ErrorKind::Truncated),
                            "{t:?} {k:?} {e:?}"
                        );
                    }
                }
            }
        }
        assert_eq!(made.len(), 10, "every kind is reachable: {made:?}");
    }

    #[test]
    fn a_dead_uplink_and_the_limit_end_in_a_timeout_disconnect() {
        let config = SimConfig {
            seed: 3,
            clients: 1,
            duration_ms: 6_000,
            link_dies_ms: Some(1_000),
            max_sends: Some(MAX_SENDS),
            ..SimConfig::default()
        };
        let sim = simulate(&config).unwrap();
        // The copies stop at 6 sends: no retransmit-limit.
        let f = &sim.truth.sessions[0].findings;
        assert_eq!(f["retransmit-limit"], 0);
        assert!(
            f["retransmission"] >= 5 && f["disconnect-sent"] >= 1,
            "{f:?}"
        );
        // The first side to give up says Disconnect (Timeout) and falls
        // silent; the client (which still hears the server) too: nobody
        // plays on until the 6 s of play are over.
        let timeouts: Vec<&Frame> = sim
            .frames
            .iter()
            .filter(|fr| {
                wire::Packet::new_checked(&fr.payload)
                    .is_ok_and(|p| matches!(p.message(), Message::Disconnect(r) if r.reason == 2))
            })
            .collect();
        assert!(!timeouts.is_empty());
        for t in &timeouts {
            assert!(
                sim.frames
                    .iter()
                    .all(|fr| fr.src != t.src || fr.ts_us <= t.ts_us)
            );
        }
        let last = sim.frames.iter().map(|fr| fr.ts_us).max().unwrap();
        assert!(last < 5_000_000, "{last}");
        assert_eq!(sim.truth.sessions[0].state, "disconnected");
    }

    #[test]
    fn invalid_configurations_are_refused() {
        for bad in [
            SimConfig {
                clients: 0,
                ..SimConfig::default()
            },
            SimConfig {
                tap_miss: [0.0, 1.0],
                ..SimConfig::default()
            },
            SimConfig {
                loss_s2c: Some(-0.1),
                ..SimConfig::default()
            },
            SimConfig {
                max_sends: Some(0),
                ..SimConfig::default()
            },
            SimConfig {
                duration_ms: u64::MAX,
                ..SimConfig::default()
            },
            SimConfig {
                link_dies_ms: Some(9_000),
                ..SimConfig::default()
            },
        ] {
            assert!(simulate(&bad).is_err(), "{bad:?}");
        }
    }
}
