//! A deterministic simulator of Battlegrounds sessions, for tests: clients and
//! a server that follow the notes (and encode only through [`super::wire`]), a
//! faulty network with a capture tap in the middle, and the ground truth of
//! what the analysis must find.
//!
//! **Peers.** A client sends AUTH every 100 ms until its AUTH_OK arrives, then a
//! PING every 250 ms and a MOVE_OP every 50 ms (`op_sig` +1 each), and answers
//! every MSG block with a MSG_ACK. The server answers each AUTH with one AUTH_OK
//! (stamped with its clock), each PING at once with a PONG; after a client's
//! first PING it answers each MOVE_OP with a MOVE_EVENT (echoing the op_sig,
//! `event_sig` +1) and sends a PROP every 200 ms as a message on channel 2 (msg_id
//! from 1, blocks of 120 bytes), resending every unacked block of a message every
//! 300 ms until all are acked. New traffic stops at `duration_ms`; the run ends
//! when every message is acked (or 30 s later).
//!
//! **Network.** Each datagram takes `latency_ms` one way; the tap sees it half
//! way. Before the tap it is lost with `loss_before_tap` (never captured), or
//! duplicated with `duplicate` (captured twice, 1 ms apart, and delivered
//! twice); after the tap it is lost with `loss_after_tap` (captured, never
//! delivered).
//!
//! **Truth**, per direction over all sessions: network duplicates the analysis
//! must flag (`duplicate-packet`: every duplicated datagram but AUTH and PING,
//! whose bytes repeat by design, and MSG_ACK; an ack is one when it goes beyond
//! the copies of its block captured before it, as the receiver acks every copy
//! it gets and the tap cannot tell which one an ack answers), resends of blocks the tap captured again
//! (`resend`: every captured send of a block after its first captured one),
//! op_sig/event_sig gaps (`sig-gap`: runs of MOVE_OPs or MOVE_EVENTs lost before
//! the tap, between captured ones) and PROPs rebuilt (every message whose every
//! block was captured at least once). Nothing else is raised.

use super::wire::{
    MoveEvent, MoveOp, Movement, MsgAck, Packet, PacketRepr, Payload, PayloadRepr, ShapeRepr,
    VectorD, VectorF,
};
use crate::capture::{OwnedDatagram, Timestamp};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;

/// What the network does to datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Faults {
    pub loss_before_tap: f64,
    pub loss_after_tap: f64,
    pub duplicate: f64,
}

/// A simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    pub seed: u64,
    pub clients: u16,
    /// Time with new traffic.
    pub duration_ms: u64,
    pub latency_ms: u64,
    pub faults: Faults,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            clients: 2,
            duration_ms: 5_000,
            latency_ms: 20,
            faults: Faults::default(),
        }
    }
}

/// The truth of one direction, over every session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirTruth {
    pub duplicates: u64,
    pub resends: u64,
    pub sig_gaps: u64,
    /// PROPs rebuilt from captured blocks.
    pub props: u64,
}

/// The truth of a run, by direction (`[c2s, s2c]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Truth {
    pub c2s: DirTruth,
    pub s2c: DirTruth,
    /// Sessions (one per client).
    pub sessions: u64,
}

/// What a run produced: the captured datagrams in capture order, and the truth.
#[derive(Debug, Clone)]
pub struct Run {
    pub datagrams: Vec<OwnedDatagram>,
    pub truth: Truth,
}

const BLOCK: usize = 120;
const RTO_MS: u64 = 300;
const TICK_MS: u64 = 10;

#[derive(Debug)]
struct Event {
    at: u64,
    seq: u64,
    what: What,
}

#[derive(Debug)]
enum What {
    Tick,
    Deliver {
        client: usize,
        to_server: bool,
        bytes: Vec<u8>,
    },
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    // The heap is a max-heap: the earliest event is the greatest.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Debug, Default)]
struct Client {
    sid: u32,
    auth_ok: bool,
    next_auth: u64,
    next_ping: u64,
    next_move: u64,
    op_sig: u8,
}

#[derive(Debug)]
struct OutMsg {
    blocks: Vec<Vec<u8>>,
    acked: Vec<bool>,
    next_resend: u64,
}

#[derive(Debug, Default)]
struct Server {
    got_ping: bool,
    event_sig: u8,
    next_prop: u64,
    next_msg_id: u32,
    out: Vec<OutMsg>,
}

/// What the truth needs to know of a datagram sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// AUTH, PING: duplicates are not flagged.
    Repeating,
    Plain,
    Sig,
    Block {
        msg: usize,
        block: usize,
    },
    /// A client's MSG_ACK of a block of the server's message `msg`.
    Ack {
        msg: usize,
        block: usize,
    },
}

struct Sim {
    cfg: Config,
    rng: ChaCha8Rng,
    now: u64,
    seq: u64,
    heap: BinaryHeap<Event>,
    clients: Vec<Client>,
    servers: Vec<Server>,
    server_addr: SocketAddr,
    captured: Vec<(u64, u64, Kind, usize, OwnedDatagram)>,
    truth: Truth,
    /// Per client and direction: whether each MOVE_OP / MOVE_EVENT was captured.
    sigs: Vec<[Vec<bool>; 2]>,
    /// Per client, message and block: captured sends.
    block_captures: HashMap<(usize, usize, usize), u64>,
}

fn client_addr(i: usize) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 1], 40_000 + i as u16))
}

fn bytes(sid: u32, channel: u8, payload: PayloadRepr) -> Vec<u8> {
    // Every payload the peers build fits its length fields.
    PacketRepr::new(sid, channel, payload)
        .to_bytes()
        .unwrap_or_default()
}

impl Sim {
    fn push(&mut self, at: u64, what: What) {
        self.seq += 1;
        self.heap.push(Event {
            at,
            seq: self.seq,
            what,
        });
    }

    fn capture(&mut self, at: u64, client: usize, from_client: bool, payload: &[u8], kind: Kind) {
        let (src, dst) = if from_client {
            (client_addr(client), self.server_addr)
        } else {
            (self.server_addr, client_addr(client))
        };
        self.seq += 1;
        self.captured.push((
            at,
            self.seq,
            kind,
            client,
            OwnedDatagram {
                frame: 0,
                ts: Timestamp(at * 1_000_000),
                src,
                dst,
                payload: payload.to_vec(),
                payload_len: payload.len(),
            },
        ));
    }

    /// Sends a datagram through the network and the tap.
    fn send(&mut self, client: usize, from_client: bool, payload: Vec<u8>, kind: Kind) {
        let f = self.cfg.faults;
        let half = self.cfg.latency_ms / 2;
        let tap = self.now + half;
        let deliver = self.now + self.cfg.latency_ms;
        let lost_before = self.rng.random::<f64>() < f.loss_before_tap;
        let dir = if from_client { 0 } else { 1 };
        if kind == Kind::Sig {
            self.sigs[client][dir].push(!lost_before);
        }
        if lost_before {
            return;
        }
        self.capture(tap, client, from_client, &payload, kind);
        if let Kind::Block { msg, block } = kind {
            *self.block_captures.entry((client, msg, block)).or_insert(0) += 1;
        }
        let duplicated = self.rng.random::<f64>() < f.duplicate;
        if duplicated {
            self.capture(tap + 1, client, from_client, &payload, kind);
            // Acks are judged against the copies of their block, below.
            if !matches!(kind, Kind::Repeating | Kind::Ack { .. }) {
                let t = if from_client {
                    &mut self.truth.c2s
                } else {
                    &mut self.truth.s2c
                };
                t.duplicates += 1;
            }
        }
        if self.rng.random::<f64>() < f.loss_after_tap {
            return;
        }
        if duplicated {
            let copy = payload.clone();
            self.push(
                deliver + 1,
                What::Deliver {
                    client,
                    to_server: from_client,
                    bytes: copy,
                },
            );
        }
        self.push(
            deliver,
            What::Deliver {
                client,
                to_server: from_client,
                bytes: payload,
            },
        );
    }

    fn tick(&mut self) {
        let active = self.now < self.cfg.duration_ms;
        for i in 0..self.clients.len() {
            let c = &mut self.clients[i];
            let sid = c.sid;
            if !c.auth_ok {
                if active && self.now >= c.next_auth {
                    c.next_auth = self.now + 100;
                    self.send(i, true, bytes(sid, 0, PayloadRepr::Auth), Kind::Repeating);
                }
            } else if active {
                if self.now >= c.next_ping {
                    c.next_ping = self.now + 250;
                    self.send(i, true, bytes(sid, 0, PayloadRepr::Ping), Kind::Repeating);
                }
                let c = &mut self.clients[i];
                if self.now >= c.next_move {
                    c.next_move = self.now + 50;
                    c.op_sig = c.op_sig.wrapping_add(1);
                    let op = MoveOp {
                        movement: movement(self.now),
                        op_sig: c.op_sig,
                    };
                    self.send(i, true, bytes(sid, 1, PayloadRepr::MoveOp(op)), Kind::Sig);
                }
            }
            self.server_tick(i, active);
        }
    }

    fn server_tick(&mut self, i: usize, active: bool) {
        let sid = self.clients[i].sid;
        let now = self.now;
        let s = &mut self.servers[i];
        if active && s.got_ping && now >= s.next_prop {
            s.next_prop = now + 200;
            s.next_msg_id += 1;
            let msg_id = s.next_msg_id;
            let render = self.rng.random_range(20..400usize);
            let prop = bytes(
                sid,
                2,
                PayloadRepr::Prop {
                    prop_id: i64::from(msg_id),
                    position: VectorD {
                        x: now as f64,
                        y: 0.0,
                    },
                    shape: ShapeRepr::Circle {
                        center: VectorF::default(),
                        radius: 1.0,
                    },
                    render_data: vec![0x42; render],
                },
            );
            let blocks: Vec<Vec<u8>> = PacketRepr::split_message(sid, 2, msg_id, &prop, BLOCK)
                .iter()
                .map(|b| b.to_bytes().unwrap_or_default())
                .collect();
            let n = blocks.len();
            let s = &mut self.servers[i];
            s.out.push(OutMsg {
                blocks: blocks.clone(),
                acked: vec![false; n],
                next_resend: now + RTO_MS,
            });
            let m = s.out.len() - 1;
            for (b, block) in blocks.into_iter().enumerate() {
                self.send(i, false, block, Kind::Block { msg: m, block: b });
            }
        }
        let mut resend = Vec::new();
        for (m, out) in self.servers[i].out.iter_mut().enumerate() {
            if now >= out.next_resend && out.acked.iter().any(|a| !a) {
                out.next_resend = now + RTO_MS;
                for (b, acked) in out.acked.iter().enumerate() {
                    if !acked {
                        resend.push((m, b, out.blocks[b].clone()));
                    }
                }
            }
        }
        for (m, b, block) in resend {
            self.send(i, false, block, Kind::Block { msg: m, block: b });
        }
    }

    fn deliver(&mut self, client: usize, to_server: bool, bytes_in: &[u8]) {
        let Ok(p) = Packet::new_checked(bytes_in) else {
            return;
        };
        let sid = self.clients[client].sid;
        let now = self.now;
        if to_server {
            let s = &mut self.servers[client];
            match p.payload() {
                Payload::Auth => {
                    let ok = PayloadRepr::AuthOk {
                        movement: movement(now),
                        name: format!("player{client}").into_bytes(),
                    };
                    self.send(client, false, bytes(sid, 0, ok), Kind::Plain);
                }
                Payload::Ping => {
                    s.got_ping = true;
                    let pong = PayloadRepr::Pong {
                        timestamp: now as i64,
                    };
                    self.send(client, false, bytes(sid, 0, pong), Kind::Plain);
                }
                Payload::MoveOp(op) if s.got_ping => {
                    s.event_sig = s.event_sig.wrapping_add(1);
                    let ev = MoveEvent {
                        movement: movement(now),
                        op_sig: op.op_sig,
                        event_sig: s.event_sig,
                    };
                    self.send(
                        client,
                        false,
                        bytes(sid, 1, PayloadRepr::MoveEvent(ev)),
                        Kind::Sig,
                    );
                }
                Payload::MsgAck(a) => {
                    let m = a.msg_id as usize;
                    if let Some(out) = m.checked_sub(1).and_then(|m| s.out.get_mut(m))
                        && let Some(acked) = out.acked.get_mut(usize::from(a.block_id))
                    {
                        *acked = true;
                    }
                }
                _ => {}
            }
        } else {
            match p.payload() {
                Payload::AuthOk(_) => {
                    let c = &mut self.clients[client];
                    if !c.auth_ok {
                        c.auth_ok = true;
                        c.next_ping = now;
                        c.next_move = now + 20;
                    }
                }
                Payload::Msg(m) => {
                    let ack = MsgAck {
                        msg_id: m.msg_id,
                        block_id: m.block_id,
                    };
                    let kind = Kind::Ack {
                        msg: (m.msg_id as usize).saturating_sub(1),
                        block: usize::from(m.block_id),
                    };
                    self.send(
                        client,
                        true,
                        bytes(sid, p.channel(), PayloadRepr::MsgAck(ack)),
                        kind,
                    );
                }
                _ => {}
            }
        }
    }

    fn all_acked(&self) -> bool {
        self.servers
            .iter()
            .all(|s| s.out.iter().all(|m| m.acked.iter().all(|a| *a)))
    }
}

fn movement(now: u64) -> Movement {
    Movement {
        timestamp: now as i64,
        position: VectorD {
            x: now as f64 / 1000.0,
            y: 1.0,
        },
        forward: VectorF { x: 1.0, y: 0.0 },
        movement_bits: 1,
    }
}

/// Runs a simulation.
pub fn run(cfg: &Config) -> Run {
    let n = usize::from(cfg.clients);
    let mut sim = Sim {
        cfg: *cfg,
        rng: ChaCha8Rng::seed_from_u64(cfg.seed),
        now: 0,
        seq: 0,
        heap: BinaryHeap::new(),
        clients: (0..n)
            .map(|i| Client {
                sid: 0x1000 + i as u32,
                next_auth: i as u64 * 7,
                ..Client::default()
            })
            .collect(),
        servers: (0..n).map(|_| Server::default()).collect(),
        server_addr: SocketAddr::from(([10, 0, 0, 2], 7777)),
        captured: Vec::new(),
        truth: Truth {
            sessions: n as u64,
            ..Truth::default()
        },
        sigs: (0..n).map(|_| [Vec::new(), Vec::new()]).collect(),
        block_captures: HashMap::new(),
    };
    sim.push(0, What::Tick);
    let end = cfg.duration_ms + 30_000;
    while let Some(e) = sim.heap.pop() {
        sim.now = e.at;
        match e.what {
            What::Tick => {
                sim.tick();
                let quiet = sim.now >= cfg.duration_ms && sim.all_acked();
                if !quiet && sim.now < end {
                    sim.push(sim.now + TICK_MS, What::Tick);
                }
            }
            What::Deliver {
                client,
                to_server,
                bytes,
            } => sim.deliver(client, to_server, &bytes),
        }
    }
    // The truth of what the tap saw.
    for (c, dirs) in sim.sigs.iter().enumerate() {
        let _ = c;
        for (d, captured) in dirs.iter().enumerate() {
            let t = if d == 0 {
                &mut sim.truth.c2s
            } else {
                &mut sim.truth.s2c
            };
            let mut seen_one = false;
            let mut in_gap = false;
            for &cap in captured {
                if cap {
                    if seen_one && in_gap {
                        t.sig_gaps += 1;
                    }
                    seen_one = true;
                    in_gap = false;
                } else if seen_one {
                    in_gap = true;
                }
            }
        }
    }
    for (c, server) in sim.servers.iter().enumerate() {
        for (m, out) in server.out.iter().enumerate() {
            let mut complete = true;
            for b in 0..out.blocks.len() {
                let n = sim.block_captures.get(&(c, m, b)).copied().unwrap_or(0);
                sim.truth.s2c.resends += n.saturating_sub(1);
                complete &= n > 0;
            }
            sim.truth.s2c.props += u64::from(complete);
        }
    }
    sim.captured.sort_by_key(|(at, seq, ..)| (*at, *seq));
    // Each captured copy of a block may be answered by one ack; the acks
    // beyond are duplicates.
    let mut unanswered: HashMap<(usize, usize, usize), u64> = HashMap::new();
    for (_, _, kind, client, _) in &sim.captured {
        match *kind {
            Kind::Block { msg, block } => {
                *unanswered.entry((*client, msg, block)).or_insert(0) += 1
            }
            Kind::Ack { msg, block } => {
                let n = unanswered.entry((*client, msg, block)).or_insert(0);
                match n.checked_sub(1) {
                    Some(left) => *n = left,
                    None => sim.truth.c2s.duplicates += 1,
                }
            }
            _ => {}
        }
    }
    let datagrams = sim
        .captured
        .into_iter()
        .enumerate()
        .map(|(i, (_, _, _, _, mut d))| {
            d.frame = i as u64 + 1;
            d
        })
        .collect();
    Run {
        datagrams,
        truth: sim.truth,
    }
}
