//! A simulated lwar server: admits up to 8 players, syncs them, broadcasts their
//! chat, names and selections, runs a small world of moving entities, and says
//! goodbye with Leave (or Full to a ninth client).

use super::Outgoing;
use super::reliable::Channel;
use crate::proto::lwar::wire::{
    Collision, DISCONNECT_TIMEOUT_SECS, Header, Id, MAX_PLAYERS, Message, MessageRepr, Packet,
    PacketBuilder, StatsEntry, UpdateCircleEntry, UpdateEntry, UpdatePosEntry, UpdateRayEntry,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;

/// Milliseconds between two server ticks (~15 Hz: updates and reliable messages).
pub const TICK_MS: u64 = 66;
/// Milliseconds between two Stats messages (~2 Hz).
pub const STATS_MS: u64 = 500;
/// A leaving client's slot is freed after this much silence.
pub const LEAVE_LINGER_MS: u64 = 1000;

const TIMEOUT_MS: u64 = DISCONNECT_TIMEOUT_SECS * 1000;

/// Entity templates of the simulated world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ship,
    Rocket,
    Ray,
    Circle,
}

impl Kind {
    const fn type_id(self) -> u8 {
        match self {
            Kind::Ship => 1,
            Kind::Rocket => 4,
            Kind::Ray => 5,
            Kind::Circle => 6,
        }
    }
}

#[derive(Debug, Clone)]
struct Entity {
    id: Id,
    owner: Id,
    kind: Kind,
    x: i16,
    y: i16,
    vx: i16,
    vy: i16,
    orientation: u16,
    health: u8,
    dies_at: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// Joined; the client has not acked Synced yet.
    Syncing {
        synced_seqno: u32,
    },
    Playing,
    /// Disconnect processed: only Leave from now on.
    Leaving {
        leave: u32,
    },
}

#[derive(Debug)]
struct Slot {
    addr: SocketAddr,
    player: Id,
    name: Vec<u8>,
    ship_type: u8,
    weapon_types: [u8; 4],
    chan: Channel,
    state: SlotState,
    last_rx: u64,
    last_input_ts: u32,
    last_frame: u32,
    kills: u16,
    deaths: u16,
}

/// The server state machine. Feed it datagrams with [`Server::receive`] and call
/// [`Server::poll`] often.
#[derive(Debug)]
pub struct Server {
    slots: Vec<Option<Slot>>,
    generations: [u16; MAX_PLAYERS],
    entities: Vec<Entity>,
    entity_generation: u16,
    next_entity: u16,
    rng: ChaCha8Rng,
    builder: PacketBuilder,
    next_tick: u64,
    next_stats: u64,
    log: bool,
    unreliable: Vec<MessageRepr>,
    /// Slots freed so far, with their final reliable logs (tests read them).
    pub gone: Vec<(SocketAddr, Channel)>,
}

impl Server {
    /// A server; `log` keeps the reliable logs of every client (tests).
    pub fn new(seed: u64, log: bool) -> Self {
        Server {
            slots: (0..MAX_PLAYERS).map(|_| None).collect(),
            generations: [0; MAX_PLAYERS],
            entities: Vec::new(),
            entity_generation: 1,
            next_entity: 1,
            rng: ChaCha8Rng::seed_from_u64(seed),
            builder: PacketBuilder::new(),
            next_tick: 0,
            next_stats: 0,
            log,
            unreliable: Vec::new(),
            gone: Vec::new(),
        }
    }

    /// Players currently admitted (leaving ones included until their slot is freed).
    pub fn players(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    /// The reliable channel of the client at `addr`, while it has a slot.
    pub fn channel(&self, addr: SocketAddr) -> Option<&Channel> {
        self.slot_of(addr)
            .and_then(|i| self.slots[i].as_ref())
            .map(|s| &s.chan)
    }

    fn slot_of(&self, addr: SocketAddr) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.addr == addr))
    }

    /// Handles a datagram from `from`. Packets the codec cannot fully decode are
    /// dropped; packets with mere violations are processed.
    pub fn receive(&mut self, now: u64, from: SocketAddr, payload: &[u8], out: &mut Vec<Outgoing>) {
        let Ok(packet) = Packet::new_checked(payload) else {
            return;
        };
        if packet.messages().any(|m| m.is_err()) {
            return;
        }
        let Some(i) = self.slot_of(from) else {
            let connect = packet
                .messages()
                .flatten()
                .any(|v| matches!(v.message, Message::Connect { seqno: 1, .. }));
            if connect {
                self.admit(now, from, &packet, out);
            }
            return;
        };
        let slot = self.slots[i].as_mut().expect("slot_of found it");
        slot.last_rx = now;
        slot.chan.on_ack(packet.ack());
        if let SlotState::Syncing { synced_seqno } = slot.state
            && packet.ack() >= synced_seqno
        {
            slot.state = SlotState::Playing;
        }
        if let SlotState::Leaving { .. } = slot.state {
            // Answer every repeated Disconnect with the same Leave.
            let disconnect = packet
                .messages()
                .flatten()
                .any(|v| matches!(v.message, Message::Disconnect { .. }));
            if disconnect {
                out.push(self.leave_packet(i, now));
            }
            return;
        }
        for view in packet.messages().flatten() {
            let message = view.message;
            let slot = self.slots[i].as_mut().expect("slot exists");
            if let Message::Input(input) = message {
                if packet.timestamp() >= slot.last_input_ts && input.frame > slot.last_frame {
                    slot.last_input_ts = packet.timestamp();
                    slot.last_frame = input.frame;
                }
                continue;
            }
            let Some(seqno) = message.seqno() else {
                continue;
            };
            if !slot.chan.accept(seqno) {
                continue;
            }
            slot.chan.log_received(|| MessageRepr::from(&message));
            let player = slot.player;
            match message {
                Message::Disconnect { .. } => {
                    let leave = MessageRepr::Leave { seqno: 0, player };
                    slot.chan.clear();
                    let seqno = slot.chan.push(leave.clone());
                    slot.state = SlotState::Leaving { leave: seqno };
                    out.push(self.leave_packet(i, now));
                    self.drop_player(i, true);
                    return;
                }
                Message::Chat { text, .. } => self.broadcast(None, |_| MessageRepr::Chat {
                    seqno: 0,
                    player,
                    text: text.as_bytes().to_vec(),
                }),
                Message::Name { name, .. } => {
                    slot.name = name.as_bytes().to_vec();
                    self.broadcast(None, |_| MessageRepr::Name {
                        seqno: 0,
                        player,
                        name: name.as_bytes().to_vec(),
                    });
                }
                Message::Selection {
                    ship_type,
                    weapon_types,
                    ..
                } => {
                    slot.ship_type = ship_type;
                    slot.weapon_types = weapon_types;
                    self.broadcast(None, |_| MessageRepr::Selection {
                        seqno: 0,
                        player,
                        ship_type,
                        weapon_types,
                    });
                }
                _ => {}
            }
        }
    }

    /// A new client: Full, or Join (seqno 1, acking its Connect) and the game state.
    fn admit(&mut self, now: u64, from: SocketAddr, packet: &Packet<'_>, out: &mut Vec<Outgoing>) {
        let Some(i) = self.slots.iter().position(Option::is_none) else {
            self.refuse(from, out);
            return;
        };
        let name = packet
            .messages()
            .flatten()
            .find_map(|v| match v.message {
                Message::Connect { name, .. } => Some(name.as_bytes().to_vec()),
                _ => None,
            })
            .unwrap_or_default();
        self.generations[i] = self.generations[i].wrapping_add(1);
        let player = Id::new(self.generations[i], i as u16 + 1);
        let mut chan = Channel::new(self.log);
        chan.accept(1);
        chan.log_received(|| MessageRepr::Connect {
            seqno: 1,
            name: name.clone(),
        });
        chan.push(MessageRepr::Join {
            seqno: 0,
            player,
            name: name.clone(),
        });
        self.game_state(&mut chan);
        let synced_seqno = chan.push(MessageRepr::Synced { seqno: 0 });
        // Tell everybody else, then add the newcomer's ship for all.
        let (ship_type, weapon_types) = (1, [1, 2, 0, 0]);
        self.broadcast(None, |_| MessageRepr::Join {
            seqno: 0,
            player,
            name: name.clone(),
        });
        self.broadcast(None, |_| MessageRepr::Selection {
            seqno: 0,
            player,
            ship_type,
            weapon_types,
        });
        self.slots[i] = Some(Slot {
            addr: from,
            player,
            name,
            ship_type,
            weapon_types,
            chan,
            state: SlotState::Syncing { synced_seqno },
            last_rx: now,
            last_input_ts: 0,
            last_frame: 0,
            kills: 0,
            deaths: 0,
        });
        self.spawn(now, player, Kind::Ship);
        out.push(self.packet_to(i, now, false));
    }

    /// Full to a client the server has no room for: unreliable and never
    /// acked; the original server sends it with timestamp 0, once per Connect
    /// received.
    fn refuse(&mut self, from: SocketAddr, out: &mut Vec<Outgoing>) {
        self.builder.start(Header {
            ack: 0,
            timestamp: 0,
        });
        self.builder.try_push(&MessageRepr::Full);
        out.push(Outgoing {
            to: from,
            payload: self.builder.bytes().to_vec(),
        });
    }

    /// The game state as it is now, for a newcomer: the other players,
    /// entities, names and selections.
    fn game_state(&self, chan: &mut Channel) {
        for other in self.slots.iter().flatten() {
            if matches!(other.state, SlotState::Leaving { .. }) {
                continue;
            }
            chan.push(MessageRepr::Join {
                seqno: 0,
                player: other.player,
                name: other.name.clone(),
            });
        }
        for e in &self.entities {
            chan.push(MessageRepr::Add {
                seqno: 0,
                entity: e.id,
                player: e.owner,
                type_id: e.kind.type_id(),
            });
        }
        for other in self.slots.iter().flatten() {
            if matches!(other.state, SlotState::Leaving { .. }) {
                continue;
            }
            chan.push(MessageRepr::Name {
                seqno: 0,
                player: other.player,
                name: other.name.clone(),
            });
            chan.push(MessageRepr::Selection {
                seqno: 0,
                player: other.player,
                ship_type: other.ship_type,
                weapon_types: other.weapon_types,
            });
        }
    }

    /// Queues a reliable message for every admitted, not leaving client.
    fn broadcast(&mut self, except: Option<usize>, make: impl Fn(usize) -> MessageRepr) {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            if let Some(slot) = slot
                && Some(i) != except
                && !matches!(slot.state, SlotState::Leaving { .. })
            {
                slot.chan.push(make(i));
            }
        }
    }

    /// Adds an entity and tells everybody.
    fn spawn(&mut self, now: u64, owner: Id, kind: Kind) -> Id {
        let id = Id::new(self.entity_generation, self.next_entity);
        self.next_entity = self.next_entity.wrapping_add(1);
        if self.next_entity == 0 {
            self.next_entity = 1;
            self.entity_generation = self.entity_generation.wrapping_add(1);
        }
        let r = &mut self.rng;
        let (speed, life) = match kind {
            Kind::Ship => (8, None),
            Kind::Rocket => (40, Some(2000)),
            Kind::Ray => (0, Some(600)),
            Kind::Circle => (0, Some(1200)),
        };
        self.entities.push(Entity {
            id,
            owner,
            kind,
            x: r.random_range(-2000..=2000),
            y: r.random_range(-2000..=2000),
            vx: r.random_range(-speed..=speed),
            vy: r.random_range(-speed..=speed),
            orientation: r.random_range(0..360),
            health: 100,
            dies_at: life.map(|l| now + l),
        });
        let type_id = kind.type_id();
        self.broadcast(None, |_| MessageRepr::Add {
            seqno: 0,
            entity: id,
            player: owner,
            type_id,
        });
        id
    }

    /// Removes a player (and its entities) from the game, telling the others.
    fn drop_player(&mut self, i: usize, keep_slot: bool) {
        let Some(slot) = self.slots[i].as_ref() else {
            return;
        };
        let player = slot.player;
        let removed: Vec<Id> = self
            .entities
            .iter()
            .filter(|e| e.owner == player)
            .map(|e| e.id)
            .collect();
        self.entities.retain(|e| e.owner != player);
        if !keep_slot {
            let slot = self.slots[i].take().expect("checked above");
            self.gone.push((slot.addr, slot.chan));
        }
        self.broadcast(Some(i), |_| MessageRepr::Leave { seqno: 0, player });
        for entity in removed {
            self.broadcast(Some(i), |_| MessageRepr::Remove { seqno: 0, entity });
        }
    }

    fn leave_packet(&mut self, i: usize, now: u64) -> Outgoing {
        self.packet_to(i, now, false)
    }

    /// One packet to slot `i`: its reliable queue, then (when `updates`) the
    /// unreliable messages of this tick.
    fn packet_to(&mut self, i: usize, now: u64, updates: bool) -> Outgoing {
        let slot = self.slots[i].as_mut().expect("packet to a live slot");
        let unreliable: &[MessageRepr] = if updates { &self.unreliable } else { &[] };
        let payload = slot.chan.build(&mut self.builder, now as u32, unreliable);
        Outgoing {
            to: slot.addr,
            payload,
        }
    }

    /// Advances the server to `now`: timeouts, the world, and one packet to each
    /// client per tick.
    pub fn poll(&mut self, now: u64, out: &mut Vec<Outgoing>) {
        for i in 0..self.slots.len() {
            let Some(slot) = &self.slots[i] else { continue };
            let silent = now.saturating_sub(slot.last_rx);
            match slot.state {
                SlotState::Leaving { .. } if silent > LEAVE_LINGER_MS => {
                    let slot = self.slots[i].take().expect("checked");
                    self.gone.push((slot.addr, slot.chan));
                }
                SlotState::Leaving { .. } => {}
                _ if silent > TIMEOUT_MS => self.drop_player(i, false),
                _ => {}
            }
        }
        if now < self.next_tick {
            return;
        }
        self.next_tick = now + TICK_MS;
        self.step(now);
        for i in 0..self.slots.len() {
            let Some(slot) = &self.slots[i] else { continue };
            match slot.state {
                SlotState::Leaving { .. } => {}
                SlotState::Playing => out.push(self.packet_to(i, now, true)),
                SlotState::Syncing { .. } => out.push(self.packet_to(i, now, false)),
            }
        }
    }

    /// This tick's unreliable updates: every entity by its kind.
    fn updates(&self, now: u64) -> impl Iterator<Item = MessageRepr> + use<> {
        let mut update = Vec::new();
        let mut pos = Vec::new();
        let mut ray = Vec::new();
        let mut circle = Vec::new();
        for e in &self.entities {
            match e.kind {
                Kind::Ship => update.push(UpdateEntry {
                    entity: e.id,
                    x: e.x,
                    y: e.y,
                    orientation: e.orientation,
                    health: e.health,
                }),
                Kind::Rocket => pos.push(UpdatePosEntry {
                    entity: e.id,
                    x: e.x,
                    y: e.y,
                }),
                Kind::Ray => ray.push(UpdateRayEntry {
                    entity: e.id,
                    x: e.x,
                    y: e.y,
                    orientation: e.orientation,
                    length: 300,
                }),
                Kind::Circle => circle.push(UpdateCircleEntry {
                    entity: e.id,
                    x: e.x,
                    y: e.y,
                    radius: 50 + (now % 100) as u16,
                }),
            }
        }
        [
            (!update.is_empty()).then_some(MessageRepr::Update(update)),
            (!pos.is_empty()).then_some(MessageRepr::UpdatePos(pos)),
            (!ray.is_empty()).then_some(MessageRepr::UpdateRay(ray)),
            (!circle.is_empty()).then_some(MessageRepr::UpdateCircle(circle)),
        ]
        .into_iter()
        .flatten()
    }

    /// One world step: movement, births and deaths, and this tick's unreliable
    /// messages (updates of moving entities, collisions, stats).
    fn step(&mut self, now: u64) {
        for e in &mut self.entities {
            e.x = e.x.wrapping_add(e.vx);
            e.y = e.y.wrapping_add(e.vy);
            e.orientation = (e.orientation + 3) % 360;
        }
        let expired: Vec<Id> = self
            .entities
            .iter()
            .filter(|e| e.dies_at.is_some_and(|t| now >= t))
            .map(|e| e.id)
            .collect();
        for entity in expired {
            self.entities.retain(|e| e.id != entity);
            self.broadcast(None, |_| MessageRepr::Remove { seqno: 0, entity });
        }
        let players: Vec<Id> = self
            .slots
            .iter()
            .flatten()
            .filter(|s| !matches!(s.state, SlotState::Leaving { .. }))
            .map(|s| s.player)
            .collect();
        if !players.is_empty() && self.entities.len() < 40 && self.rng.random_bool(0.15) {
            let owner = players[self.rng.random_range(0..players.len())];
            let kind = [Kind::Rocket, Kind::Ray, Kind::Circle][self.rng.random_range(0..3)];
            self.spawn(now, owner, kind);
        }

        self.unreliable.clear();
        let updates = self.updates(now);
        self.unreliable.extend(updates);
        if self.entities.len() >= 2 && self.rng.random_bool(0.1) {
            let a = self.rng.random_range(0..self.entities.len());
            let b = (a + 1) % self.entities.len();
            let (ea, eb) = (&self.entities[a], &self.entities[b]);
            self.unreliable.push(MessageRepr::Collision(Collision {
                entities: [ea.id, eb.id],
                x: ea.x,
                y: eb.y,
            }));
        }
        if now >= self.next_stats {
            self.next_stats = now + STATS_MS;
            let stats: Vec<StatsEntry> = self
                .slots
                .iter_mut()
                .flatten()
                .filter(|s| !matches!(s.state, SlotState::Leaving { .. }))
                .map(|s| {
                    if self.rng.random_bool(0.05) {
                        s.kills = s.kills.wrapping_add(1);
                    }
                    if self.rng.random_bool(0.05) {
                        s.deaths = s.deaths.wrapping_add(1);
                    }
                    StatsEntry {
                        player: s.player,
                        kills: s.kills,
                        deaths: s.deaths,
                        ping: self.rng.random_range(20..80),
                    }
                })
                .collect();
            if !stats.is_empty() {
                self.unreliable.push(MessageRepr::Stats(stats));
            }
        }
    }
}
