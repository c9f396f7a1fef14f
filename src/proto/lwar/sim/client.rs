//! A simulated lwar client: connects, syncs, plays (Input at ~30 Hz, the odd chat,
//! rename and selection), then disconnects gracefully, crashes, or is refused.

use super::Outgoing;
use super::reliable::Channel;
use crate::proto::lwar::wire::{
    DISCONNECT_TIMEOUT_SECS, Id, Input, Message, MessageRepr, Packet, PacketBuilder,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;

/// Milliseconds between two client ticks (~30 Hz).
pub const TICK_MS: u64 = 33;
/// Milliseconds between two Connect packets while connecting.
pub const CONNECT_RETRY_MS: u64 = 100;
/// Milliseconds between two ack-only packets while syncing, when nothing is new.
pub const KEEPALIVE_MS: u64 = 1000;
/// Milliseconds between Synced and the first Input.
pub const INPUT_DELAY_MS: u64 = 100;

const TIMEOUT_MS: u64 = DISCONNECT_TIMEOUT_SECS * 1000;

/// What a client does, and when (milliseconds of the sender's clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientPlan {
    pub name: String,
    /// When it starts connecting.
    pub start_ms: u64,
    /// When it sends Disconnect (graceful leave), if ever.
    pub leave_ms: Option<u64>,
    /// When it goes silent for good (a crash: the server times it out), if ever.
    pub crash_ms: Option<u64>,
    /// Mean milliseconds between two chat messages (0: never).
    pub chat_every_ms: u64,
    /// Mean milliseconds between two renames (0: never).
    pub rename_every_ms: u64,
    /// Mean milliseconds between two selection changes (0: never).
    pub select_every_ms: u64,
}

impl ClientPlan {
    pub fn new(name: impl Into<String>, start_ms: u64) -> Self {
        ClientPlan {
            name: name.into(),
            start_ms,
            leave_ms: None,
            crash_ms: None,
            chat_every_ms: 4000,
            rename_every_ms: 15000,
            select_every_ms: 9000,
        }
    }
}

/// Where a client is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientState {
    /// Not started yet.
    Idle,
    /// Repeating Connect until the server's Join.
    Connecting,
    /// Joined; waiting for Synced.
    Syncing,
    /// Synced: sending Input.
    Playing,
    /// Repeating Disconnect until the server's Leave.
    Disconnecting,
    /// Got its Leave.
    Closed,
    /// Got Full.
    Rejected,
    /// Heard nothing for 15 s.
    TimedOut,
    /// Went silent on purpose (see [`ClientPlan::crash_ms`]).
    Crashed,
}

impl ClientState {
    /// True once the client neither sends nor listens any more.
    pub const fn is_done(self) -> bool {
        matches!(
            self,
            ClientState::Closed
                | ClientState::Rejected
                | ClientState::TimedOut
                | ClientState::Crashed
        )
    }
}

/// The client state machine. Feed it datagrams with [`Client::receive`] and call
/// [`Client::poll`] often (every millisecond in the virtual runner).
#[derive(Debug)]
pub struct Client {
    plan: ClientPlan,
    server: SocketAddr,
    state: ClientState,
    chan: Channel,
    builder: PacketBuilder,
    rng: ChaCha8Rng,
    player: Option<Id>,
    next_send: u64,
    last_rx: u64,
    synced_at: u64,
    last_sent_ack: u32,
    keepalive_at: u64,
    frame: u32,
    keys: [bool; 10],
    bits: [u8; 10],
    aim: (i16, i16),
    renames: u32,
    chats: u32,
    unreliable: Vec<MessageRepr>,
}

impl Client {
    /// A client of the server at `server`. `log` keeps the reliable logs (tests).
    pub fn new(plan: ClientPlan, server: SocketAddr, seed: u64, log: bool) -> Self {
        Client {
            plan,
            server,
            state: ClientState::Idle,
            chan: Channel::new(log),
            builder: PacketBuilder::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            player: None,
            next_send: 0,
            last_rx: 0,
            synced_at: 0,
            last_sent_ack: 0,
            keepalive_at: 0,
            frame: 0,
            keys: [false; 10],
            bits: [0; 10],
            aim: (0, 0),
            renames: 0,
            chats: 0,
            unreliable: Vec::with_capacity(1),
        }
    }

    pub const fn state(&self) -> ClientState {
        self.state
    }

    /// The player id the server's Join gave this client.
    pub const fn player(&self) -> Option<Id> {
        self.player
    }

    pub const fn plan(&self) -> &ClientPlan {
        &self.plan
    }

    /// The reliable channel to the server (its logs, for tests).
    pub const fn channel(&self) -> &Channel {
        &self.chan
    }

    /// Asks a playing (or syncing) client to leave now.
    pub fn leave(&mut self, now: u64) {
        self.plan.leave_ms = Some(now);
    }

    /// Handles a datagram from the server. Packets the codec cannot fully decode
    /// are dropped; packets with mere violations are processed.
    pub fn receive(&mut self, now: u64, payload: &[u8]) {
        if matches!(self.state, ClientState::Idle) || self.state.is_done() {
            return;
        }
        let Ok(packet) = Packet::new_checked(payload) else {
            return;
        };
        if packet.messages().any(|m| m.is_err()) {
            return;
        }
        self.last_rx = now;
        self.chan.on_ack(packet.ack());
        for view in packet.messages().flatten() {
            let message = view.message;
            match message {
                Message::Full if self.state == ClientState::Connecting => {
                    self.state = ClientState::Rejected;
                    return;
                }
                Message::Leave { player, .. }
                    if self.state == ClientState::Disconnecting && Some(player) == self.player =>
                {
                    // The server sends nothing but Leave now; its seqno may not be
                    // the next one (the queue was dropped), so take it as it comes.
                    self.state = ClientState::Closed;
                    return;
                }
                _ => {}
            }
            let Some(seqno) = message.seqno() else {
                continue;
            };
            if !self.chan.accept(seqno) {
                continue;
            }
            self.chan.log_received(|| MessageRepr::from(&message));
            match message {
                Message::Join { player, .. } if self.state == ClientState::Connecting => {
                    self.player = Some(player);
                    self.state = ClientState::Syncing;
                }
                Message::Synced { .. } if self.state == ClientState::Syncing => {
                    self.state = ClientState::Playing;
                    self.synced_at = now;
                }
                Message::Leave { player, .. } if Some(player) == self.player => {
                    self.state = ClientState::Closed;
                    return;
                }
                _ => {}
            }
        }
    }

    /// Advances the client to `now`, pushing what it sends.
    pub fn poll(&mut self, now: u64, out: &mut Vec<Outgoing>) {
        match self.state {
            ClientState::Idle if now >= self.plan.start_ms => {
                self.state = ClientState::Connecting;
                self.chan.push(MessageRepr::Connect {
                    seqno: 0,
                    name: self.plan.name.clone().into_bytes(),
                });
                self.last_rx = now;
                self.next_send = now;
            }
            ClientState::Idle => return,
            s if s.is_done() => return,
            _ => {}
        }
        if self.plan.crash_ms.is_some_and(|t| now >= t) {
            self.state = ClientState::Crashed;
            return;
        }
        if now.saturating_sub(self.last_rx) > TIMEOUT_MS {
            self.state = ClientState::TimedOut;
            return;
        }
        if now < self.next_send {
            return;
        }
        if matches!(self.state, ClientState::Syncing | ClientState::Playing)
            && self.plan.leave_ms.is_some_and(|t| now >= t)
        {
            self.state = ClientState::Disconnecting;
            self.chan.push(MessageRepr::Disconnect { seqno: 0 });
        }
        self.unreliable.clear();
        let send = match self.state {
            ClientState::Connecting => {
                self.next_send = now + CONNECT_RETRY_MS;
                true
            }
            ClientState::Syncing => {
                self.next_send = now + TICK_MS;
                self.chan.ack() != self.last_sent_ack
                    || self.chan.has_unacked()
                    || now.saturating_sub(self.keepalive_at) >= KEEPALIVE_MS
            }
            ClientState::Playing => {
                self.next_send = now + TICK_MS;
                self.play(now);
                true
            }
            ClientState::Disconnecting => {
                self.next_send = now + TICK_MS;
                true
            }
            _ => false,
        };
        if send {
            let bytes = self
                .chan
                .build(&mut self.builder, now as u32, &self.unreliable);
            self.last_sent_ack = self.chan.ack();
            self.keepalive_at = now;
            out.push(Outgoing {
                to: self.server,
                payload: bytes,
            });
        }
    }

    /// True with the chance of an event that happens every `every` ms on average.
    fn roll(&mut self, every: u64) -> bool {
        every > 0
            && self
                .rng
                .random_bool((TICK_MS as f64 / every as f64).min(1.0))
    }

    /// One playing tick: random reliable events, then this frame's Input.
    fn play(&mut self, now: u64) {
        let Some(player) = self.player else { return };
        if self.roll(self.plan.chat_every_ms) {
            self.chats += 1;
            let text = CHATS[self.rng.random_range(0..CHATS.len())];
            self.chan.push(MessageRepr::Chat {
                seqno: 0,
                player,
                text: format!("{text} #{}", self.chats).into_bytes(),
            });
        }
        if self.roll(self.plan.rename_every_ms) {
            self.renames += 1;
            self.chan.push(MessageRepr::Name {
                seqno: 0,
                player,
                name: format!("{}-{}", self.plan.name, self.renames).into_bytes(),
            });
        }
        if self.roll(self.plan.select_every_ms) {
            let ship_type = self.rng.random_range(1..=3);
            let weapon_types = [
                self.rng.random_range(1..=4),
                self.rng.random_range(1..=4),
                self.rng.random_range(0..=4),
                self.rng.random_range(0..=4),
            ];
            self.chan.push(MessageRepr::Selection {
                seqno: 0,
                player,
                ship_type,
                weapon_types,
            });
        }
        if now < self.synced_at + INPUT_DELAY_MS {
            return;
        }
        // Keys are held for a while: flip each with a small chance per frame.
        for (key, bits) in self.keys.iter_mut().zip(self.bits.iter_mut()) {
            if self.rng.random_bool(0.08) {
                *key = !*key;
            }
            *bits = (*bits << 1) | u8::from(*key);
        }
        self.aim.0 = self.aim.0.wrapping_add(self.rng.random_range(-20..=20));
        self.aim.1 = self.aim.1.wrapping_add(self.rng.random_range(-20..=20));
        self.frame += 1;
        let b = self.bits;
        self.unreliable.push(MessageRepr::Input(Input {
            player,
            frame: self.frame,
            forward: b[0],
            backward: b[1],
            turn_left: b[2],
            turn_right: b[3],
            strafe_left: b[4],
            strafe_right: b[5],
            shooting: [b[6], b[7], b[8], b[9]],
            aim_x: self.aim.0,
            aim_y: self.aim.1,
        }));
    }
}

const CHATS: [&str; 6] = [
    "gg",
    "hello there",
    "watch the left flank",
    "nice shot!",
    "who is camping the spawn?",
    "brb",
];
