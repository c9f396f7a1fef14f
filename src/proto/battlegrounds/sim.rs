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
//! Three more faults, per direction (`Config::faults_s2c` sets the server's
//! direction apart from `faults`):
//!
//! - **Reordering** (`reorder`): the datagram is held 20 to 100 ms before the
//!   tap (captured and delivered that much later), so later ones overtake it.
//!   Held less than the retransmission timeout minus the round trip, it never
//!   makes a resend.
//! - **Corruption** (`corrupt`): the datagram is captured damaged and dropped by
//!   its receiver (it does not decode), never duplicated. Each damage makes one
//!   malformed kind: `short-header` (cut to 5 bytes), `unknown-version`,
//!   `unknown-type` (op 0x3f), `truncated-payload` (cut one byte past the header,
//!   for types with a fixed payload) and `trailing-bytes` (one byte more; not
//!   for MSG, whose block is every byte after its fixed part). AUTH is never
//!   damaged: it is what recognises a flow. A server's PROP message is damaged,
//!   with the server's rate, before it is split (its blocks travel and are acked
//!   as usual): `negative-length` (render_data_len -5), `unknown-shape` (shape
//!   type 9), `trailing-bytes`, `unknown-version`; the capture shows the damage
//!   once every block of it was captured.
//! - **A late tap** (`capture_from_ms`): the capture begins then (at the first
//!   moment from it where no captured block waits for an ack, so that no ack
//!   answers a block before the capture and no datagram is split from its
//!   duplicate): every session is `midstream`, recognised only by a port the
//!   user names. Meant for a clean network.
//!
//! **Truth**, per direction over all sessions, from what the tap captured: network duplicates the analysis
//! must flag (`duplicate-packet`: every duplicated datagram but AUTH and PING,
//! whose bytes repeat by design, and MSG_ACK; an ack is one when it goes beyond
//! the copies of its block captured before it, as the receiver acks every copy
//! it gets and the tap cannot tell which one an ack answers), resends of blocks the tap captured again
//! (`resend`: every captured send of a block after its first captured one),
//! op_sig/event_sig gaps and regressions in capture order (`sig-gap`: a captured
//! value more than one past the last, `sig-regression`: a run of captured
//! values behind it, one per run, by 8-bit serial arithmetic, as the
//! analysis's contract says; duplicated
//! copies are left out), AUTHs held back past their AUTH_OK and the first PING
//! (`violation/auth-repeat`), malformed datagrams by reason (the damaged ones, and
//! the damaged messages captured whole) and PROPs rebuilt (every undamaged
//! message whose every block was captured at least once). Nothing else is
//! raised. It also records the movement messages sent (MOVE_OP, MOVE_EVENT)
//! and those lost before the tap, per direction over the whole run: the loss
//! the analysis estimates from the movement counters.

use super::wire::{
    ByteOrder, Dialect, ErrorKind, HEADER_LEN, MoveEvent, MoveOp, Movement, MsgAck, Packet,
    PacketRepr, PacketType, Payload, PayloadRepr, PingForm, Tag, VectorD, VectorF,
};
use crate::capture::{OwnedDatagram, Timestamp};
use crate::proto::sim::{SimOutcome, SimRequest, unsupported};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::path::Path;

/// What the network does to datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Faults {
    pub loss_before_tap: f64,
    pub loss_after_tap: f64,
    pub duplicate: f64,
}

/// How the peers speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// As the reference implementation (the revised notes): big-endian,
    /// PING with a `u8` seq and PONG with that seq and a `u64` timestamp,
    /// AUTH_OK of a timestamp only, AUTH every 50 ms at most 10 times then
    /// CLOSE, a CLOSE from every client once its traffic is over, and a
    /// client that closes when 20 PINGs in a row got no PONG (the reference
    /// closes at the first; the simulated client tolerates the fault runs of
    /// a lossy network). A server that receives a CLOSE sends nothing more
    /// to that client.
    #[default]
    Reference,
    /// The first notes' form, the corpus's `bg-*.pcap`: little-endian, empty
    /// PING, PONG of a timestamp, the full AUTH_OK, AUTH every 100 ms until
    /// answered, no CLOSE.
    Little,
}

impl Form {
    /// The byte order it sends.
    pub const fn order(self) -> ByteOrder {
        match self {
            Form::Reference => ByteOrder::Big,
            Form::Little => ByteOrder::Little,
        }
    }

    fn is_little(&self) -> bool {
        *self == Form::Little
    }
}

/// A simulation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Config {
    pub seed: u64,
    /// How the peers speak (the truth of a little-endian run leaves it out,
    /// as before the reference form existed).
    #[serde(skip_serializing_if = "Form::is_little")]
    pub form: Form,
    /// The server stops answering (and sending) from then on, in ms
    /// (`Some(0)`: it never answers an AUTH).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_stops_ms: Option<u64>,
    pub clients: u16,
    /// Time with new traffic.
    pub duration_ms: u64,
    pub latency_ms: u64,
    /// The faults of both directions, or of client to server only when
    /// `faults_s2c` is set.
    pub faults: Faults,
    /// The faults of server to client, when they differ.
    pub faults_s2c: Option<Faults>,
    /// Datagrams held back past later ones, `[c2s, s2c]`.
    pub reorder: [f64; 2],
    /// Datagrams damaged, `[c2s, s2c]` (the s2c rate also damages PROP messages).
    pub corrupt: [f64; 2],
    /// The op_sig and event_sig counters start here (the first sent is one more).
    pub sig_start: u8,
    /// The server's block size.
    pub block: usize,
    /// The length of a PROP's render data: from `render.0` to below `render.1`.
    pub render: (usize, usize),
    /// The tap starts capturing then (0: from the start).
    pub capture_from_ms: u64,
    /// Every client on 10.0.0.1 (ports 40000 up), or client *k* on 10.0.1.(k+1)
    /// (up to 250 clients; beyond, addresses wrap and only the ports differ).
    pub one_ip: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 1,
            form: Form::Reference,
            server_stops_ms: None,
            clients: 2,
            duration_ms: 5_000,
            latency_ms: 20,
            faults: Faults::default(),
            faults_s2c: None,
            reorder: [0.0; 2],
            corrupt: [0.0; 2],
            sig_start: 0,
            block: BLOCK,
            render: (20, 400),
            capture_from_ms: 0,
            one_ip: true,
        }
    }
}

/// The server every client talks to.
pub const SERVER: ([u8; 4], u16) = ([10, 0, 0, 2], 7777);

/// The truth of one direction, over every session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirTruth {
    pub duplicates: u64,
    pub resends: u64,
    pub sig_gaps: u64,
    pub sig_regressions: u64,
    /// AUTHs captured after a PING that followed an AUTH_OK (`auth-repeat`): an
    /// AUTH held back by the network past its AUTH_OK and the first PING.
    pub auth_repeats: u64,
    /// PROPs rebuilt from captured blocks.
    pub props: u64,
    /// Movement messages (MOVE_OP c2s, MOVE_EVENT s2c) sent over the whole
    /// run, and those of them lost before the tap: the truth of the analysis's
    /// loss estimate (`moves_lost_before_tap / moves_sent`).
    pub moves_sent: u64,
    pub moves_lost_before_tap: u64,
    /// Malformed datagrams and messages, by reason (in [`ErrorKind::ALL`]'s order).
    pub malformed: [u64; ErrorKind::ALL.len()],
    /// Sessions whose AUTHs were never answered (the client gave up).
    pub auth_unanswered: u64,
    /// Client CLOSEs after PINGs that got no PONG.
    pub ping_unanswered: u64,
    /// The same with a server packet captured after the PING
    /// (`pong-not-captured`, a note).
    pub pong_not_captured: u64,
}

impl DirTruth {
    /// Malformed packets of every reason.
    pub fn malformed_total(&self) -> u64 {
        self.malformed.iter().sum()
    }

    fn bump_malformed(&mut self, kind: ErrorKind) {
        if let Some(i) = ErrorKind::ALL.iter().position(|k| *k == kind) {
            self.malformed[i] += 1;
        }
    }

    fn to_json(self, form: Form) -> serde_json::Value {
        let malformed: serde_json::Map<String, serde_json::Value> = ErrorKind::ALL
            .iter()
            .zip(self.malformed)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| (k.name().to_owned(), n.into()))
            .collect();
        let mut v = serde_json::json!({
            "duplicate-packet": self.duplicates,
            "resend": self.resends,
            "sig-gap": self.sig_gaps,
            "sig-regression": self.sig_regressions,
            "violation/auth-repeat": self.auth_repeats,
            "malformed": malformed,
            "props": self.props,
            "movement": {
                "sent": self.moves_sent,
                "lost_before_tap": self.moves_lost_before_tap,
            },
        });
        if form == Form::Reference
            && let Some(m) = v.as_object_mut()
        {
            m.insert("auth-unanswered".into(), self.auth_unanswered.into());
            m.insert("ping-unanswered".into(), self.ping_unanswered.into());
            m.insert("pong-not-captured".into(), self.pong_not_captured.into());
        }
        v
    }
}

/// The truth of a run, by direction (`[c2s, s2c]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Truth {
    pub c2s: DirTruth,
    pub s2c: DirTruth,
    /// Sessions (one per client).
    pub sessions: u64,
    /// The state every session ends in: `established`, or `midstream` when the
    /// tap began after the handshakes; `closed` in the reference form.
    pub state: &'static str,
    /// When the tap began capturing, in ms (0 from the start).
    pub capture_from_ms: u64,
}

/// What a run produced: the captured datagrams in capture order, and the truth.
#[derive(Debug, Clone)]
pub struct Run {
    pub datagrams: Vec<OwnedDatagram>,
    pub truth: Truth,
}

const BLOCK: usize = 120;
/// PINGs in a row without a PONG after which a client of the reference form
/// closes: the reference closes at the first; the simulated client tolerates
/// the fault runs of a lossy network (20 PINGs are 5 s).
const PINGS_BEFORE_CLOSE: u32 = 20;
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
    /// The reference form: AUTHs sent, the ping counter, PINGs in a row
    /// without a PONG, the seq of the latest PONG, and whether it closed.
    auths: u32,
    ping_seq: u8,
    pings_unanswered: u32,
    closed: bool,
}

#[derive(Debug)]
struct OutMsg {
    blocks: Vec<Vec<u8>>,
    acked: Vec<bool>,
    next_resend: u64,
    /// How the message was damaged, if it was.
    damaged: Option<ErrorKind>,
}

/// One datagram the tap captured.
struct Captured {
    at: u64,
    seq: u64,
    kind: Kind,
    client: usize,
    /// The network's copy of a duplicated datagram.
    copy: bool,
    datagram: OwnedDatagram,
}

#[derive(Debug, Default)]
struct Server {
    /// The client's CLOSE arrived: it sends nothing more to it.
    closed: bool,
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
    /// A MOVE_OP (`dir` 0) or MOVE_EVENT (1) of this sig.
    Sig {
        dir: u8,
        value: u8,
    },
    /// A datagram captured damaged (and not delivered), or on `dir` 1 a
    /// damaged message: its malformed kind.
    Corrupt {
        dir: u8,
        kind: ErrorKind,
    },
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
    captured: Vec<Captured>,
    truth: Truth,
}

/// Client `i`'s address under `cfg`.
pub fn client_addr(cfg: &Config, i: usize) -> SocketAddr {
    if cfg.one_ip {
        SocketAddr::from(([10, 0, 0, 1], 40_000 + i as u16))
    } else {
        SocketAddr::from(([10, 0, 1, (i + 1) as u8], 40_000 + i as u16))
    }
}

/// Damages a datagram of type `t` in a way picked by `pick` (any number): its
/// bytes and the malformed kind they make.
fn damage(mut b: Vec<u8>, t: PacketType, pick: usize) -> (Vec<u8>, ErrorKind) {
    let mut kinds = vec![
        ErrorKind::ShortHeader,
        ErrorKind::UnknownVersion,
        ErrorKind::UnknownType,
    ];
    if t.fixed_len() > 0 {
        kinds.push(ErrorKind::Truncated);
    }
    if t != PacketType::Msg {
        kinds.push(ErrorKind::TrailingBytes);
    }
    let kind = kinds[pick % kinds.len()];
    match kind {
        ErrorKind::ShortHeader => b.truncate(5),
        ErrorKind::UnknownVersion => b[6] = 1,
        ErrorKind::UnknownType => b[5] = 0x3f,
        ErrorKind::Truncated => b.truncate(HEADER_LEN + 1),
        _ => b.push(0xee),
    }
    (b, kind)
}

/// Damages a PROP message (a circle's, as the server builds them) in a way
/// picked by `pick`.
fn damage_prop(mut b: Vec<u8>, pick: usize, order: ByteOrder) -> (Vec<u8>, ErrorKind) {
    // Header 8, prop_id 8, position 16: the shape type at 32; a circle's 12
    // bytes, then render_data_len at 45.
    let kinds = [
        ErrorKind::NegativeLength,
        ErrorKind::UnknownShape,
        ErrorKind::TrailingBytes,
        ErrorKind::UnknownVersion,
    ];
    let kind = kinds[pick % kinds.len()];
    match kind {
        ErrorKind::NegativeLength => {
            let mut v = Vec::with_capacity(2);
            order.put_i16(&mut v, -5);
            b[45..47].copy_from_slice(&v);
        }
        ErrorKind::UnknownShape => b[32] = 9,
        ErrorKind::TrailingBytes => b.push(0xee),
        _ => b[6] = 1,
    }
    (b, kind)
}

fn bytes(order: ByteOrder, sid: u32, channel: u8, payload: PayloadRepr) -> Vec<u8> {
    // Every payload the peers build fits its length fields.
    PacketRepr::new(sid, channel, payload)
        .to_bytes_in(order)
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

    #[allow(clippy::too_many_arguments)]
    fn capture(
        &mut self,
        at: u64,
        client: usize,
        from_client: bool,
        payload: &[u8],
        kind: Kind,
        copy: bool,
    ) {
        let (src, dst) = if from_client {
            (client_addr(&self.cfg, client), self.server_addr)
        } else {
            (self.server_addr, client_addr(&self.cfg, client))
        };
        self.seq += 1;
        self.captured.push(Captured {
            at,
            seq: self.seq,
            kind,
            client,
            copy,
            datagram: OwnedDatagram::new(0, Timestamp(at * 1_000_000), src, dst, payload.to_vec()),
        });
    }

    /// Sends a datagram through the network and the tap.
    fn send(&mut self, client: usize, from_client: bool, payload: Vec<u8>, kind: Kind) {
        let dir = usize::from(!from_client);
        let f = match self.cfg.faults_s2c {
            Some(s2c) if !from_client => s2c,
            _ => self.cfg.faults,
        };
        let half = self.cfg.latency_ms / 2;
        // Draws only for the faults asked for: a run without them makes the
        // same choices as before they existed.
        let held =
            if self.cfg.reorder[dir] > 0.0 && self.rng.random::<f64>() < self.cfg.reorder[dir] {
                self.rng.random_range(20..=100u64)
            } else {
                0
            };
        let tap = self.now + half + held;
        let deliver = self.now + self.cfg.latency_ms + held;
        let lost_before = self.rng.random::<f64>() < f.loss_before_tap;
        if matches!(kind, Kind::Sig { .. }) {
            let t = if from_client {
                &mut self.truth.c2s
            } else {
                &mut self.truth.s2c
            };
            t.moves_sent += 1;
            t.moves_lost_before_tap += u64::from(lost_before);
        }
        if lost_before {
            return;
        }
        let dialect = self.dialect();
        let auth = Packet::new_checked_in(&payload, dialect)
            .is_ok_and(|p| p.packet_type() == PacketType::Auth);
        if self.cfg.corrupt[dir] > 0.0
            && !auth
            && self.rng.random::<f64>() < self.cfg.corrupt[dir]
            && let Ok(t) = Packet::new_checked_in(&payload, dialect).map(|p| p.packet_type())
        {
            let pick = self.rng.random_range(0..60usize);
            let (bytes, mut kind) = damage(payload, t, pick);
            if self.cfg.form == Form::Reference {
                // The reference's forms are told apart by size: what the
                // damage makes is what the session's dialect reads.
                let session = Dialect {
                    order: dialect.order,
                    ping: Some(PingForm::Seq),
                };
                if let Err(e) = Packet::new_checked_in(&bytes, session) {
                    kind = e.kind();
                }
            }
            let kind = Kind::Corrupt {
                dir: dir as u8,
                kind,
            };
            self.capture(tap, client, from_client, &bytes, kind, false);
            return;
        }
        self.capture(tap, client, from_client, &payload, kind, false);
        let duplicated = self.rng.random::<f64>() < f.duplicate;
        if duplicated {
            self.capture(tap + 1, client, from_client, &payload, kind, true);
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

    /// How the peers' packets read.
    fn dialect(&self) -> Dialect {
        Dialect {
            order: self.cfg.form.order(),
            ping: None,
        }
    }

    /// Whether the server still answers.
    fn server_up(&self) -> bool {
        self.cfg.server_stops_ms.is_none_or(|at| self.now < at)
    }

    /// A CLOSE from a client: captured and delivered whatever the faults (so
    /// that every session ends `closed`).
    fn close(&mut self, client: usize) {
        let order = self.cfg.form.order();
        let c = &mut self.clients[client];
        if c.closed {
            return;
        }
        c.closed = true;
        let payload = bytes(order, c.sid, 0, PayloadRepr::Close);
        let tap = self.now + self.cfg.latency_ms / 2;
        self.capture(tap, client, true, &payload, Kind::Plain, false);
        self.push(
            self.now + self.cfg.latency_ms,
            What::Deliver {
                client,
                to_server: true,
                bytes: payload,
            },
        );
    }

    fn tick(&mut self) {
        let active = self.now < self.cfg.duration_ms;
        let order = self.cfg.form.order();
        let reference = self.cfg.form == Form::Reference;
        for i in 0..self.clients.len() {
            let c = &mut self.clients[i];
            let sid = c.sid;
            if c.closed {
            } else if !c.auth_ok {
                if active && self.now >= c.next_auth {
                    if reference && c.auths >= 10 {
                        // The reference client gives up after 10 AUTHs.
                        self.close(i);
                    } else {
                        c.next_auth = self.now + if reference { 50 } else { 100 };
                        c.auths += 1;
                        self.send(
                            i,
                            true,
                            bytes(order, sid, 0, PayloadRepr::Auth),
                            Kind::Repeating,
                        );
                    }
                }
            } else if active {
                if self.now >= c.next_ping {
                    if reference && c.pings_unanswered >= PINGS_BEFORE_CLOSE {
                        // PINGs in a row without a PONG: the client closes.
                        self.close(i);
                        self.server_tick(i, active);
                        continue;
                    }
                    c.next_ping = self.now + 250;
                    let ping = if reference {
                        c.ping_seq = c.ping_seq.wrapping_add(1);
                        c.pings_unanswered += 1;
                        PayloadRepr::PingSeq { seq: c.ping_seq }
                    } else {
                        PayloadRepr::Ping
                    };
                    self.send(i, true, bytes(order, sid, 0, ping), Kind::Repeating);
                }
                let c = &mut self.clients[i];
                if self.now >= c.next_move {
                    c.next_move = self.now + 50;
                    c.op_sig = c.op_sig.wrapping_add(1);
                    let op = MoveOp {
                        movement: movement(self.now),
                        op_sig: c.op_sig,
                    };
                    let kind = Kind::Sig {
                        dir: 0,
                        value: op.op_sig,
                    };
                    self.send(i, true, bytes(order, sid, 1, PayloadRepr::MoveOp(op)), kind);
                }
            }
            self.server_tick(i, active);
        }
    }

    fn server_tick(&mut self, i: usize, active: bool) {
        if !self.server_up() || self.servers[i].closed {
            return;
        }
        let order = self.cfg.form.order();
        let sid = self.clients[i].sid;
        let now = self.now;
        let s = &mut self.servers[i];
        if active && s.got_ping && now >= s.next_prop {
            s.next_prop = now + 200;
            s.next_msg_id += 1;
            let msg_id = s.next_msg_id;
            let render = self.rng.random_range(self.cfg.render.0..self.cfg.render.1);
            let prop = bytes(
                order,
                sid,
                2,
                PayloadRepr::PropCircle {
                    prop_id: i64::from(msg_id),
                    position: VectorD {
                        x: now as f64,
                        y: 0.0,
                    },
                    shape_type: Tag,
                    center: VectorF::default(),
                    radius: 1.0,
                    render_data: vec![0x42; render],
                },
            );
            let mut damaged = None;
            let mut prop = prop;
            if self.cfg.corrupt[1] > 0.0 && self.rng.random::<f64>() < self.cfg.corrupt[1] {
                let pick = self.rng.random_range(0..60usize);
                let (b, kind) = damage_prop(prop, pick, order);
                prop = b;
                damaged = Some(kind);
            }
            let blocks: Vec<Vec<u8>> =
                PacketRepr::split_message(sid, 2, msg_id, &prop, self.cfg.block)
                    .iter()
                    .map(|b| b.to_bytes_in(order).unwrap_or_default())
                    .collect();
            let n = blocks.len();
            let s = &mut self.servers[i];
            s.out.push(OutMsg {
                blocks: blocks.clone(),
                acked: vec![false; n],
                next_resend: now + RTO_MS,
                damaged,
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
        let Ok(p) = Packet::new_checked_in(bytes_in, self.dialect()) else {
            return;
        };
        let order = self.cfg.form.order();
        let sid = self.clients[client].sid;
        let (now, ts) = (self.now, self.now as i64);
        if to_server && (!self.server_up() || self.servers[client].closed) {
            return;
        }
        if to_server {
            let s = &mut self.servers[client];
            match p.payload() {
                Payload::Close => s.closed = true,
                Payload::Auth => {
                    let ok = match self.cfg.form {
                        Form::Reference => PayloadRepr::AuthOkTimestamp { timestamp: ts },
                        Form::Little => PayloadRepr::AuthOk {
                            movement: movement(now),
                            name: format!("player{client}").into_bytes(),
                        },
                    };
                    self.send(client, false, bytes(order, sid, 0, ok), Kind::Plain);
                }
                payload @ (Payload::Ping | Payload::PingSeq { .. }) => {
                    s.got_ping = true;
                    let pong = match payload.seq() {
                        Some(seq) => PayloadRepr::PongSeq { seq, timestamp: ts },
                        None => PayloadRepr::Pong { timestamp: ts },
                    };
                    self.send(client, false, bytes(order, sid, 0, pong), Kind::Plain);
                }
                Payload::MoveOp(op) if s.got_ping => {
                    s.event_sig = s.event_sig.wrapping_add(1);
                    let ev = MoveEvent {
                        movement: movement(now),
                        op_sig: op.op_sig,
                        event_sig: s.event_sig,
                    };
                    let kind = Kind::Sig {
                        dir: 1,
                        value: ev.event_sig,
                    };
                    self.send(
                        client,
                        false,
                        bytes(order, sid, 1, PayloadRepr::MoveEvent(ev)),
                        kind,
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
            if self.clients[client].closed {
                return;
            }
            match p.payload() {
                Payload::Pong { .. } | Payload::PongSeq { .. } => {
                    self.clients[client].pings_unanswered = 0
                }
                Payload::AuthOk { .. } | Payload::AuthOkTimestamp { .. } => {
                    let c = &mut self.clients[client];
                    if !c.auth_ok {
                        c.auth_ok = true;
                        c.next_ping = now;
                        c.next_move = now + 20;
                    }
                }
                Payload::Msg {
                    msg_id, block_id, ..
                } => {
                    let ack = MsgAck { msg_id, block_id };
                    let kind = Kind::Ack {
                        msg: (msg_id as usize).saturating_sub(1),
                        block: usize::from(block_id),
                    };
                    self.send(
                        client,
                        true,
                        bytes(order, sid, p.channel(), PayloadRepr::MsgAck(ack)),
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
            .filter(|s| !s.closed)
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
                op_sig: cfg.sig_start,
                ..Client::default()
            })
            .collect(),
        servers: (0..n)
            .map(|_| Server {
                event_sig: cfg.sig_start,
                ..Server::default()
            })
            .collect(),
        server_addr: SocketAddr::from(SERVER),
        captured: Vec::new(),
        truth: Truth {
            sessions: n as u64,
            state: if cfg.form == Form::Reference {
                "closed"
            } else if cfg.capture_from_ms > 0 {
                "midstream"
            } else {
                "established"
            },
            ..Truth::default()
        },
    };
    sim.push(0, What::Tick);
    let end = cfg.duration_ms + 30_000;
    while let Some(e) = sim.heap.pop() {
        sim.now = e.at;
        match e.what {
            What::Tick => {
                sim.tick();
                let quiet = sim.now >= cfg.duration_ms && (sim.all_acked() || !sim.server_up());
                if quiet && cfg.form == Form::Reference {
                    // The traffic is over: every client closes its session.
                    for i in 0..n {
                        sim.close(i);
                    }
                }
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
    let mut captured = std::mem::take(&mut sim.captured);
    captured.sort_by_key(|c| (c.at, c.seq));
    if cfg.capture_from_ms > 0 {
        let from = capture_start(&captured, cfg.capture_from_ms);
        captured.retain(|c| c.at >= from);
        sim.truth.capture_from_ms = from;
    }
    let mut truth = sim.truth;
    truth_of(&captured, &sim.servers, &mut truth);
    if cfg.form == Form::Reference {
        closes_of(&captured, &mut truth);
    }
    let datagrams = captured
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let mut d = c.datagram;
            d.frame = i as u64 + 1;
            d
        })
        .collect();
    Run { datagrams, truth }
}

/// The first moment from `from` that no captured block waits for its ack and
/// that does not split a datagram from its network copy.
fn capture_start(captured: &[Captured], from: u64) -> u64 {
    let mut first_block: HashMap<(usize, usize, usize), u64> = HashMap::new();
    // Moments t that must not be the start: from < t <= to.
    let mut spans = Vec::new();
    for c in captured {
        match c.kind {
            Kind::Block { msg, block } => {
                first_block.entry((c.client, msg, block)).or_insert(c.at);
            }
            Kind::Ack { msg, block } => {
                if let Some(&f) = first_block.get(&(c.client, msg, block)) {
                    spans.push((f, c.at));
                }
            }
            _ => {}
        }
        if c.copy {
            spans.push((c.at.saturating_sub(1), c.at));
        }
    }
    let mut t = from;
    // Moving t past a span can move it into another: repeat until none holds it.
    while let Some(&(_, to)) = spans.iter().find(|(a, b)| *a < t && t <= *b) {
        t = to + 1;
    }
    t
}

/// The truth of what the tap captured, in capture order.
fn truth_of(captured: &[Captured], servers: &[Server], truth: &mut Truth) {
    let mut last_sig: HashMap<(usize, u8), u8> = HashMap::new();
    // The streams in a run of values behind their highest: one
    // `sig-regression` per run.
    let mut behind: HashMap<(usize, u8), bool> = HashMap::new();
    // Per client: an AUTH_OK captured, then a PING after it.
    let mut handshake: HashMap<usize, (bool, bool)> = HashMap::new();
    let mut block_captures: HashMap<(usize, usize, usize), u64> = HashMap::new();
    // Each captured copy of a block may be answered by one ack; the acks
    // beyond are duplicates.
    let mut unanswered: HashMap<(usize, usize, usize), u64> = HashMap::new();
    for c in captured {
        let from_client = c.datagram.dst.port() == SERVER.1;
        let t = if from_client {
            &mut truth.c2s
        } else {
            &mut truth.s2c
        };
        if c.copy && !matches!(c.kind, Kind::Repeating | Kind::Ack { .. }) {
            t.duplicates += 1;
        }
        if c.kind == Kind::Repeating || c.kind == Kind::Plain {
            let (ok, ping) = handshake.entry(c.client).or_default();
            match c.datagram.payload.get(4..6) {
                Some([0, 0]) if *ping => t.auth_repeats += 1,
                Some([0, 1]) => *ok = true,
                Some([0, 2]) if *ok => *ping = true,
                _ => {}
            }
        }
        match c.kind {
            Kind::Sig { dir, value } if !c.copy => match last_sig.get(&(c.client, dir)) {
                None => {
                    last_sig.insert((c.client, dir), value);
                }
                Some(&last) => {
                    let ahead = value.wrapping_sub(last);
                    let run = behind.entry((c.client, dir)).or_default();
                    if ahead < 128 {
                        *run = false;
                        if ahead > 1 {
                            t.sig_gaps += 1;
                        }
                        last_sig.insert((c.client, dir), value);
                    } else if !*run {
                        *run = true;
                        t.sig_regressions += 1;
                    }
                }
            },
            Kind::Corrupt { kind, .. } => t.bump_malformed(kind),
            Kind::Block { msg, block } => {
                if !c.copy {
                    *block_captures.entry((c.client, msg, block)).or_insert(0) += 1;
                }
                *unanswered.entry((c.client, msg, block)).or_insert(0) += 1;
            }
            Kind::Ack { msg, block } => {
                let n = unanswered.entry((c.client, msg, block)).or_insert(0);
                match n.checked_sub(1) {
                    Some(left) => *n = left,
                    None => truth.c2s.duplicates += 1,
                }
            }
            _ => {}
        }
    }
    for (c, server) in servers.iter().enumerate() {
        for (m, out) in server.out.iter().enumerate() {
            let mut complete = true;
            for b in 0..out.blocks.len() {
                let n = block_captures.get(&(c, m, b)).copied().unwrap_or(0);
                truth.s2c.resends += n.saturating_sub(1);
                complete &= n > 0;
            }
            match out.damaged {
                Some(kind) if complete => truth.s2c.bump_malformed(kind),
                None if complete => truth.s2c.props += 1,
                _ => {}
            }
        }
    }
}

/// The reference form's truth of the sessions' ends, from what the tap
/// captured, as the analysis's contract says: a client's CLOSE after AUTHs
/// captured at least twice and never answered, with no other client packet
/// (`auth-unanswered`, counted on c2s), or after its latest captured PING got
/// no PONG captured, with no server packet captured since
/// (`ping-unanswered`), or with one (`pong-not-captured`).
fn closes_of(captured: &[Captured], truth: &mut Truth) {
    #[derive(Default)]
    struct C {
        auths: u64,
        auth_ok: bool,
        other: u64,
        /// The latest PING captured, and whether a PONG of its seq came.
        last_ping: Option<(u8, bool)>,
        /// A server packet captured since the latest PING.
        server_since: bool,
    }
    let dialect = Dialect {
        order: ByteOrder::Big,
        ping: Some(PingForm::Seq),
    };
    let mut clients: HashMap<usize, C> = HashMap::new();
    for c in captured {
        let from_client = c.datagram.dst.port() == SERVER.1;
        let s = clients.entry(c.client).or_default();
        let Ok(p) = Packet::new_checked_in(&c.datagram.payload, dialect) else {
            s.server_since |= !from_client;
            continue;
        };
        match p.payload() {
            Payload::Auth if from_client => s.auths += 1,
            Payload::AuthOk { .. } | Payload::AuthOkTimestamp { .. } if !from_client => {
                s.auth_ok = true
            }
            Payload::PingSeq { seq: q } if from_client => {
                s.other += 1;
                s.last_ping = Some((q, false));
                s.server_since = false;
            }
            Payload::PongSeq { seq: q, .. } if !from_client => {
                if let Some((last, answered)) = &mut s.last_ping
                    && *last == q
                {
                    *answered = true;
                }
            }
            Payload::Close if from_client => {
                if !s.auth_ok && s.auths >= 2 && s.other == 0 {
                    truth.c2s.auth_unanswered += 1;
                } else if s.last_ping.is_some_and(|(_, answered)| !answered) {
                    if s.server_since {
                        truth.c2s.pong_not_captured += 1;
                    } else {
                        truth.c2s.ping_unanswered += 1;
                    }
                }
            }
            _ if from_client => s.other += 1,
            _ => {}
        }
        if !from_client {
            s.server_since = true;
        }
    }
}

/// Writes a run's capture (Ethernet frames, timestamps from 2023-11-14
/// 22:13:20 UTC) and, if `truth` is given, its ground truth as JSON: the
/// settings, the server, the `-d` a capture begun mid-session needs, and per
/// direction the counts of `Truth`.
pub fn write(cfg: &Config, r: &Run, pcap: &Path, truth: Option<&Path>) -> Result<(), String> {
    use crate::capture::LinkType;
    use crate::capture::synth::{Link, PcapWriter, udp_frame};
    const EPOCH_NS: u64 = 1_700_000_000 * 1_000_000_000;
    let mut w = PcapWriter::create(pcap, LinkType::Ethernet).map_err(|e| e.to_string())?;
    for d in &r.datagrams {
        let frame = udp_frame(Link::Ethernet, d.src, d.dst, &d.payload);
        w.write(Timestamp(EPOCH_NS + d.ts.nanos()), &frame);
    }
    w.finish().map_err(|e| e.to_string())?;
    if let Some(path) = truth {
        let t = &r.truth;
        let decode_as =
            (t.capture_from_ms > 0).then(|| format!("udp.port=={},battlegrounds", SERVER.1));
        let json = serde_json::json!({
            "protocol": "bg",
            "config": cfg,
            "server": SocketAddr::from(SERVER).to_string(),
            "decode_as": decode_as,
            "capture_from_ms": t.capture_from_ms,
            "frames": r.datagrams.len(),
            "sessions": t.sessions,
            "state": t.state,
            "c2s": t.c2s.to_json(cfg.form),
            "s2c": t.s2c.to_json(cfg.form),
        });
        let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())? + "\n";
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", crate::text::path(path)))?;
    }
    Ok(())
}

/// `lwarscope sim --proto battlegrounds`: runs the request (every client on
/// its own address, faults per direction; `--tap-miss` is not modelled and
/// refused; the reference form by default, `--byte-order le` the first notes'
/// little-endian form) and writes the capture and, if asked,
/// `FILE.truth.json`.
pub fn sim_request(req: &SimRequest) -> Result<SimOutcome, String> {
    if !req.tap_miss.is_zero() {
        return Err(unsupported("Battlegrounds", "--tap-miss"));
    }
    let clients = u16::try_from(req.clients)
        .ok()
        .filter(|c| (1..=250).contains(c))
        .ok_or_else(|| format!("{} clients: Battlegrounds simulates 1 to 250", req.clients))?;
    for (name, r) in [
        ("--loss", req.loss),
        ("--dup", req.duplicate),
        ("--reorder", req.reorder),
        ("--corrupt", req.corrupt),
    ] {
        for v in [r.c2s, r.s2c] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{name}: {v} is not a rate in 0..=1"));
            }
        }
    }
    let faults = |loss: f64, dup: f64| Faults {
        loss_before_tap: loss,
        loss_after_tap: 0.0,
        duplicate: dup,
    };
    let form = match req.byte_order {
        Some(crate::proto::sim::SimByteOrder::Le) => Form::Little,
        Some(crate::proto::sim::SimByteOrder::Be) | None => Form::Reference,
    };
    let cfg = Config {
        seed: req.seed,
        form,
        clients,
        duration_ms: req.duration_ms,
        faults: faults(req.loss.c2s, req.duplicate.c2s),
        faults_s2c: Some(faults(req.loss.s2c, req.duplicate.s2c)),
        reorder: [req.reorder.c2s, req.reorder.s2c],
        corrupt: [req.corrupt.c2s, req.corrupt.s2c],
        one_ip: false,
        ..Config::default()
    };
    let r = run(&cfg);
    let truth = req.truth.then(|| req.write.with_extension("truth.json"));
    write(&cfg, &r, &req.write, truth.as_deref())?;
    Ok(SimOutcome {
        frames: r.datagrams.len() as u64,
        sessions: usize::from(clients),
        truth,
    })
}
