//! The Starstrike simulator: a server and its clients that follow the notes,
//! encoding only through [`super::wire`], a lossy network with a capture tap in
//! the middle, and the ground truth of what the analyzer must report.
//!
//! Deterministic for a seed: the same [`SimConfig`] gives the same frames, byte
//! for byte. Entry points: [`simulate`] (in memory), [`write_pcap`], and [`run`]
//! (a pcap and its `*.truth.json`).
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
//! for 500 ms (at most 5 copies, then the message is given up); a new reliable
//! message when one is due; else its regular packet.
//!
//! - Client: ConnectionRequest until ConnectionAccept arrives; then PlayerInput,
//!   a ChatMessage every `chat_every` ticks, a Heartbeat every 40 ticks; after
//!   `duration_ms`, Disconnect (ClientQuit), then only its copies.
//! - Server: on the first Request, ConnectionAccept (or, with `reject`, one
//!   ConnectionReject, and nothing more); then WorldSnapshot (two entities) and
//!   a reliable event every `event_every` ticks (EntitySpawn, EntityDestroy,
//!   MatchState, PlayerScored in turn). On a client's Disconnect, it answers
//!   Disconnect (the same message each time) and sends nothing else.
//!
//! # The network and the tap
//!
//! A datagram sent at `t` is lost before the tap with probability `loss` (never
//! captured, never delivered); otherwise it is captured at `t + latency / 2` and
//! delivered at `t + latency`, and with probability `duplicate` a copy follows
//! 1 ms later (captured and delivered too). Nothing is reordered, and nothing
//! delivered escapes the tap.
//!
//! # The ground truth
//!
//! [`Truth`] counts, per session, what the contract of
//! [`super::analysis`] says about the captured frames, computed from what the
//! simulator knows (which message each packet carries, which datagrams the
//! tap saw): duplicates, lost numbers, retransmissions (spurious or not),
//! reliable messages never acknowledged, ack drift incidents, game packets
//! before a captured Accept, rejections and disconnects.

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
        }
    }
}

/// Why the simulator stopped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("cannot write the capture: {0}")]
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

    /// A copy due now, if any (a message with 6 sends is given up).
    fn due_copy(&mut self, now_ms: u64) -> Option<usize> {
        self.pending
            .retain(|p| p.copies.len() < MAX_SENDS as usize || now_ms < p.last_ms + RETRANSMIT_MS);
        self.pending.iter().position(|p| {
            p.copies.len() < MAX_SENDS as usize && now_ms >= p.last_ms + RETRANSMIT_MS
        })
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
}

/// A datagram on its way.
#[derive(Debug, Clone)]
struct InFlight {
    deliver_us: u64,
    session: usize,
    c2s: bool,
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
    duplicate: bool,
    ts_us: u64,
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
    sent: [u64; 2],
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
    if config.clients == 0 || config.tick_ms < 2 || config.latency_ms < 2 {
        return Err(SimError::Config(
            "at least one client, a tick and a latency of 2 ms or more",
        ));
    }
    if !(0.0..1.0).contains(&config.loss) || !(0.0..1.0).contains(&config.duplicate) {
        return Err(SimError::Config(
            "loss and duplicate are probabilities below 1",
        ));
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
            sent: [0; 2],
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
    let end_ms = config.duration_ms + 6 * RETRANSMIT_MS + 1_000;
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
        let (src, dst) = if c2s {
            (session.client_addr, session.server_addr)
        } else {
            (session.server_addr, session.client_addr)
        };
        let d = usize::from(!c2s);
        session.sent[d] += 1;
        let lost = self.rng.random::<f64>() < self.config.loss;
        session.numbers[d].push((seq, !lost));
        if lost {
            return Ok(seq);
        }
        let sent_us = now_ms * 1_000;
        let tap_us = sent_us + self.config.latency_ms * 500;
        let deliver_us = sent_us + self.config.latency_ms * 1_000;
        let copies = if self.rng.random::<f64>() < self.config.duplicate {
            2
        } else {
            1
        };
        for k in 0..copies {
            self.frames.push(Frame {
                ts_us: tap_us + k * 1_000,
                src,
                dst,
                payload: payload.clone(),
            });
            self.records.push(Record {
                session: s,
                c2s,
                seq,
                ack_bits,
                msg,
                packet_type: m.packet_type(),
                duplicate: k == 1,
                ts_us: tap_us + k * 1_000,
            });
            self.flight.push(InFlight {
                deliver_us: deliver_us + k * 1_000,
                session: s,
                c2s,
                payload: payload.clone(),
            });
        }
        Ok(seq)
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

    fn side(&mut self, s: usize, c2s: bool) -> &mut Side {
        if c2s {
            &mut self.sessions[s].client
        } else {
            &mut self.sessions[s].server
        }
    }

    /// Sends a copy if one is due; true if it did.
    fn copy_if_due(&mut self, s: usize, c2s: bool, now_ms: u64) -> Result<bool, SimError> {
        let Some(i) = self.side(s, c2s).due_copy(now_ms) else {
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
                    _ => {}
                }
            }
        }
    }

    fn client_tick(&mut self, s: usize, now: u64) -> Result<(), SimError> {
        let state = self.sessions[s].cstate;
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
            ServerState::Waiting | ServerState::Rejected => {}
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
/// order) and what each session sent.
fn truth(w: &World, records: &[Record]) -> Truth {
    let mut sessions = Vec::new();
    let mut total: BTreeMap<String, u64> = BTreeMap::new();
    for (i, s) in w.sessions.iter().enumerate() {
        let recs: Vec<&Record> = records.iter().filter(|r| r.session == i).collect();
        let mut f: BTreeMap<String, u64> = BTreeMap::new();
        for k in [
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
            "never-acked",
            "ack-drift",
            "heartbeat-missing",
            "connection-rejected",
            "disconnect-sent",
            "violation/before-accept",
        ] {
            f.insert(k.to_owned(), 0);
        }
        let mut bump = |k: &str, n: u64| *f.entry(k.to_owned()).or_default() += n;
        let packets = [
            recs.iter().filter(|r| r.c2s).count() as u64,
            recs.iter().filter(|r| !r.c2s).count() as u64,
        ];
        bump(
            "duplicate-packet",
            recs.iter().filter(|r| r.duplicate).count() as u64,
        );
        // Lost: numbers not captured between the first and last captured.
        for numbers in &s.numbers {
            let first = numbers.iter().position(|n| n.1);
            let last = numbers.iter().rposition(|n| n.1);
            if let (Some(a), Some(b)) = (first, last) {
                let lost = numbers[a..=b].iter().filter(|n| !n.1).count();
                bump("lost", lost as u64);
            }
        }
        let originals: Vec<&Record> = recs.iter().copied().filter(|r| !r.duplicate).collect();
        // Which captured packet first acknowledges each captured number.
        let acked_at = |c2s: bool, seq: u16, before: usize| -> bool {
            originals[..before].iter().any(|r| {
                r.c2s != c2s && {
                    let n = r.seq.wrapping_sub(seq).wrapping_sub(1);
                    n < 32 && r.ack_bits & (1 << n) != 0
                }
            })
        };
        // Messages: copies in capture order.
        let mut by_msg: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for (k, r) in originals.iter().enumerate() {
            if let Some(m) = r.msg
                && r.packet_type.is_reliable()
            {
                by_msg.entry(m).or_default().push(k);
            }
        }
        for copies in by_msg.values() {
            let c2s = originals[copies[0]].c2s;
            for (tries, &k) in copies.iter().enumerate().skip(1) {
                let spurious = copies[..tries]
                    .iter()
                    .any(|&e| acked_at(c2s, originals[e].seq, k));
                if spurious {
                    bump("spurious-retransmission", 1);
                } else if tries > 5 {
                    if tries == 6 {
                        bump("retransmit-limit", 1);
                    }
                } else {
                    bump("retransmission", 1);
                }
            }
            let ever = copies
                .iter()
                .any(|&e| acked_at(c2s, originals[e].seq, originals.len()));
            let last_ts = originals[copies[copies.len() - 1]].ts_us;
            let peer_last = originals
                .iter()
                .filter(|r| r.c2s != c2s)
                .map(|r| r.ts_us)
                .max();
            if !ever && peer_last.is_some_and(|p| p > last_ts + RETRANSMIT_MS * 1_000) {
                bump("never-acked", 1);
            }
        }
        // Drift incidents, and game packets before a captured Accept.
        let mut highest: [Option<u16>; 2] = [None, None];
        let mut open = false;
        let mut accepted = false;
        let saw_start = originals
            .first()
            .is_some_and(|r| r.c2s && r.packet_type == PacketType::ConnectionRequest);
        let mut before_accept = [false; 2];
        let mut rejected = false;
        let mut disconnect = [false; 2];
        // The analyzer's lifecycle, for silences while connected.
        let mut connected = !saw_start;
        let mut last_us: [Option<u64>; 2] = [None, None];
        for r in &originals {
            let d = usize::from(!r.c2s);
            if connected
                && let Some(prev) = last_us[d]
                && r.ts_us - prev > HEARTBEAT_MS * 1_000
            {
                bump("heartbeat-missing", 1);
            }
            last_us[d] = Some(r.ts_us);
            match r.packet_type {
                PacketType::ConnectionAccept if saw_start && !accepted && !rejected => {
                    connected = true;
                }
                PacketType::ConnectionReject | PacketType::Disconnect => connected = false,
                _ => {}
            }
            let h = &mut highest[d];
            if h.is_none_or(|h| S16.newer(u32::from(r.seq), u32::from(h))) {
                *h = Some(r.seq);
            }
            if let Some(peer) = highest[1 - d] {
                let reach = S16
                    .distance(u32::from(r.seq), u32::from(peer))
                    .is_some_and(|x| (-32..=32).contains(&x));
                if reach {
                    open = false;
                } else if !open {
                    open = true;
                    bump("ack-drift", 1);
                }
            }
            match r.packet_type {
                PacketType::ConnectionAccept => accepted = true,
                PacketType::ConnectionReject if !rejected => {
                    rejected = true;
                    bump("connection-rejected", 1);
                }
                PacketType::Disconnect if !disconnect[d] => {
                    disconnect[d] = true;
                    bump("disconnect-sent", 1);
                }
                t if t.id() >= 0x0100 && saw_start && !accepted && !before_accept[d] => {
                    before_accept[d] = true;
                    bump("violation/before-accept", 1);
                }
                _ => {}
            }
        }
        // Silent until the end.
        if connected {
            for d in 0..2 {
                if let (Some(last), Some(peer)) = (last_us[d], last_us[1 - d])
                    && peer > last + HEARTBEAT_MS * 1_000
                {
                    bump("heartbeat-missing", 1);
                }
            }
        }
        let state = if rejected {
            "rejected"
        } else if disconnect.iter().any(|&d| d) {
            "disconnected"
        } else if saw_start && !accepted {
            "connecting"
        } else {
            "connected"
        };
        for (k, v) in &f {
            *total.entry(k.clone()).or_default() += v;
        }
        sessions.push(SessionTruth {
            client: s.client_addr.to_string(),
            server: s.server_addr.to_string(),
            packets,
            sent: s.sent,
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
        let mut json = serde_json::to_string_pretty(&sim.truth)?;
        json.push('\n');
        std::fs::write(path, json)?;
    }
    Ok(sim.truth)
}
