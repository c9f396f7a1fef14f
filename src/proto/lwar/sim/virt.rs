//! The virtual runner: peers on a virtual clock (1 ms steps), the fault-injecting
//! network, a pcap written frame by frame at the tap, and the ground truth.

use super::client::{Client, ClientPlan};
use super::net::{CorruptKind, Fault, Faults, InFlight, Network};
use super::pcap_out::PcapOut;
use super::server::Server;
use super::truth::{FaultRecord, Truth, TruthFile};
use super::{Outgoing, SimError};
use crate::engine::Direction;
use crate::proto::lwar::wire::{DEFAULT_PORT, MessageRepr};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::fmt;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;

/// Everything a virtual run depends on; the ground truth records it as `generator`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VirtualConfig {
    pub seed: u64,
    pub clients: usize,
    /// Virtual milliseconds to simulate; none: until `packets`.
    pub duration_ms: Option<u64>,
    /// Stop after this many lwar frames are captured.
    pub packets: Option<u64>,
    /// The last `crash` clients go silent 3 s after they start.
    pub crash: usize,
    /// Clients never leave.
    pub stay: bool,
    pub ipv6: bool,
    pub c2s: Faults,
    pub s2c: Faults,
    pub corrupt_kinds: Vec<CorruptKind>,
    /// The clients' one-way delay beyond the tap, both ways, in µs: the first
    /// client's and the last's, the others spread evenly between (see
    /// [`super::net`]). Zero: the tap sits just before each receiver.
    #[serde(skip_serializing_if = "is_zero_pair")]
    pub tap_to_client_us: (u64, u64),
}

fn is_zero_pair(p: &(u64, u64)) -> bool {
    *p == (0, 0)
}

/// When client `k` starts connecting.
fn start_ms(k: usize) -> u64 {
    100 + 300 * k as u64
}

/// How long after its start a crashing client goes silent.
const CRASH_AFTER_MS: u64 = 3000;
/// With a packet count, simulated time without a capture after which the run
/// gives up.
const STALL_MS: u64 = 60_000;

/// How long before the end clients start leaving.
const LEAVE_BEFORE_END_MS: u64 = 2500;

impl VirtualConfig {
    /// A clean run of `clients` clients for `secs` seconds.
    pub fn clean(seed: u64, clients: usize, secs: u64) -> Self {
        VirtualConfig {
            seed,
            clients,
            duration_ms: Some(secs * 1000),
            packets: None,
            crash: 0,
            stay: false,
            ipv6: false,
            c2s: Faults::default(),
            s2c: Faults::default(),
            corrupt_kinds: CorruptKind::ALL.to_vec(),
            tap_to_client_us: (0, 0),
        }
    }

    /// Client `k`'s one-way delay beyond the tap, in µs.
    fn tap_to_client(&self, k: usize) -> u64 {
        let (first, last) = self.tap_to_client_us;
        if self.clients < 2 {
            return first;
        }
        let span = last as i128 - first as i128;
        (first as i128 + span * k as i128 / (self.clients as i128 - 1)) as u64
    }

    pub fn validate(&self) -> Result<(), SimError> {
        if self.packets.is_some() && self.c2s.tap_miss >= 1.0 && self.s2c.tap_miss >= 1.0 {
            return Err(SimError::Config(
                "--tap-miss 100% both ways captures nothing: -n would never be reached; \
                 give --duration"
                    .into(),
            ));
        }
        if self.clients == 0 || self.clients > 200 {
            return Err(SimError::Config(format!(
                "--clients {}: give 1 to 200",
                self.clients
            )));
        }
        if self.crash > self.clients {
            return Err(SimError::Config(format!(
                "--crash {} is more than --clients {}",
                self.crash, self.clients
            )));
        }
        if self.crash > 0
            && let Some(d) = self.duration_ms
        {
            let need = start_ms(self.clients - 1) + CRASH_AFTER_MS + 17_000;
            if d < need {
                return Err(SimError::Config(format!(
                    "--crash needs --duration of at least {} s to see the timeout",
                    need.div_ceil(1000)
                )));
            }
        }
        Ok(())
    }

    fn server_addr(&self) -> SocketAddr {
        let ip = if self.ipv6 {
            IpAddr::V6(Ipv6Addr::LOCALHOST)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        };
        SocketAddr::new(ip, DEFAULT_PORT)
    }

    /// Client `k`: 127.0.0.(k+2):(50001+k), or [::1]:(50001+k).
    fn client_addr(&self, k: usize) -> SocketAddr {
        let ip = if self.ipv6 {
            IpAddr::V6(Ipv6Addr::LOCALHOST)
        } else {
            IpAddr::V4(Ipv4Addr::new(127, 0, 0, (k % 250) as u8 + 2))
        };
        SocketAddr::new(ip, 50001 + k as u16)
    }

    fn plan(&self, k: usize) -> ClientPlan {
        let mut plan = ClientPlan::new(format!("player{}", k + 1), start_ms(k));
        if k >= self.clients - self.crash {
            plan.crash_ms = Some(plan.start_ms + CRASH_AFTER_MS);
        } else if !self.stay
            && let Some(end) = self.duration_ms
        {
            let leave = (end + 50 * k as u64).saturating_sub(LEAVE_BEFORE_END_MS);
            if leave > plan.start_ms + 1000 {
                plan.leave_ms = Some(leave);
            }
        }
        plan
    }
}

/// What a run produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunStats {
    /// Frames written, noise included.
    pub frames: u64,
    /// lwar frames written.
    pub lwar_frames: u64,
    /// Faults injected (as the ground truth lists them, when it is written).
    pub faults: u64,
    /// Virtual milliseconds simulated.
    pub virtual_ms: u64,
}

impl fmt::Display for RunStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} frames ({} lwar), {} faults, {:.3} s simulated",
            self.frames,
            self.lwar_frames,
            self.faults,
            self.virtual_ms as f64 / 1000.0
        )
    }
}

/// The peers and the network of one run.
struct World {
    server: Server,
    clients: Vec<Client>,
    net: Network,
    server_addr: SocketAddr,
    client_addrs: Vec<SocketAddr>,
    client_names: Vec<String>,
    server_name: String,
    outbox: Vec<Outgoing>,
}

impl World {
    fn new(cfg: &VirtualConfig, log: bool) -> Self {
        let mut master = ChaCha8Rng::seed_from_u64(cfg.seed);
        let server = Server::new(master.random(), log);
        let net = Network::new(cfg.c2s, cfg.s2c, cfg.corrupt_kinds.clone(), master.random())
            .with_clients_beyond_tap((0..cfg.clients).map(|k| cfg.tap_to_client(k)).collect());
        let server_addr = cfg.server_addr();
        let clients = (0..cfg.clients)
            .map(|k| Client::new(cfg.plan(k), server_addr, master.random(), log))
            .collect();
        let client_addrs: Vec<SocketAddr> = (0..cfg.clients).map(|k| cfg.client_addr(k)).collect();
        World {
            server,
            clients,
            net,
            server_addr,
            client_names: client_addrs.iter().map(|a| a.to_string()).collect(),
            client_addrs,
            server_name: server_addr.to_string(),
            outbox: Vec::new(),
        }
    }

    /// Hands the server's datagrams to the network.
    fn route_server(&mut self, now_us: u64) {
        for o in self.outbox.drain(..) {
            if let Some(k) = self.client_addrs.iter().position(|a| *a == o.to) {
                self.net
                    .send(now_us, k, Direction::ServerToClient, o.payload);
            }
        }
    }

    /// Ticks every peer at `now` ms (server first, then the clients in order).
    fn tick(&mut self, now: u64) {
        let now_us = now * 1000;
        self.server.poll(now, &mut self.outbox);
        self.route_server(now_us);
        for (k, client) in self.clients.iter_mut().enumerate() {
            client.poll(now, &mut self.outbox);
            for o in self.outbox.drain(..) {
                self.net
                    .send(now_us, k, Direction::ClientToServer, o.payload);
            }
        }
    }

    /// Gives a datagram to its receiver.
    fn deliver(&mut self, now: u64, client: usize, dir: Direction, payload: &[u8]) {
        match dir {
            Direction::ClientToServer => {
                let from = self.client_addrs[client];
                self.server.receive(now, from, payload, &mut self.outbox);
                self.route_server(now * 1000);
            }
            Direction::ServerToClient => self.clients[client].receive(now, payload),
        }
    }

    fn is_quiet(&self) -> bool {
        self.net.is_idle()
            && self.server.players() == 0
            && self.clients.iter().all(|c| c.state().is_done())
    }
}

/// Runs the simulation of `cfg`, writes the capture to `pcap` and, when `truth`
/// is given, the ground truth there.
pub fn run_virtual(
    cfg: &VirtualConfig,
    pcap: &Path,
    truth_path: Option<&Path>,
) -> Result<RunStats, SimError> {
    cfg.validate()?;
    let mut world = World::new(cfg, false);
    let mut rec = Recorder {
        out: PcapOut::create(pcap)?,
        truth: truth_path.map(|_| Truth::new()),
        faults: Vec::new(),
        injected: 0,
        stats: RunStats::default(),
        last_capture_ms: 0,
    };
    let end = cfg.duration_ms.unwrap_or(u64::MAX);
    let limit = cfg.packets.unwrap_or(u64::MAX);
    let mut now = 0;
    'run: while now <= end {
        let now_us = now * 1000;
        while let Some(d) = world.net.pop_due(now_us) {
            rec.capture(&world, &d, now)?;
            if d.beyond_tap_us > 0 {
                world.net.past_tap(d);
            } else {
                world.deliver(now, d.client, d.dir, &d.payload);
            }
            if rec.stats.lwar_frames >= limit {
                break 'run;
            }
        }
        while let Some(d) = world.net.pop_delivery(now_us) {
            world.deliver(now, d.client, d.dir, &d.payload);
        }
        rec.lost(&mut world.net.lost);
        world.tick(now);
        if cfg.packets.is_none() && now > 1000 && world.is_quiet() {
            break;
        }
        // With `-n N`, a run that captures nothing for this long of simulated
        // time would never end (everything missed by the tap, every client gone).
        if cfg.packets.is_some() && now.saturating_sub(rec.last_capture_ms) > STALL_MS {
            return Err(SimError::Config(format!(
                "nothing was captured in {} s of simulated time, so {} packets would never \
                 be reached (is --tap-miss 100%?); give --duration instead",
                STALL_MS / 1000,
                limit
            )));
        }
        now += 1;
    }
    rec.finish(cfg, truth_path, now)
}

/// What a virtual run writes: the capture, and the truth when one is asked
/// for (the faults injected, counted whether or not it records them).
struct Recorder {
    out: PcapOut,
    truth: Option<Truth>,
    faults: Vec<FaultRecord>,
    injected: u64,
    stats: RunStats,
    last_capture_ms: u64,
}

impl Recorder {
    fn fault(
        &mut self,
        frame: Option<u64>,
        client: usize,
        direction: Direction,
        kind: String,
        detail: String,
    ) {
        if self.truth.is_some() {
            self.faults.push(FaultRecord {
                frame,
                client,
                direction,
                kind,
                detail,
            });
        }
    }

    /// A datagram at the tap: its noise and its frame as captured (unless the
    /// tap missed it), the truth's view of it, and its faults.
    fn capture(&mut self, world: &World, d: &InFlight, now: u64) -> Result<(), SimError> {
        let k = d.client;
        let (src, dst) = match d.dir {
            Direction::ClientToServer => (world.client_addrs[k], world.server_addr),
            Direction::ServerToClient => (world.server_addr, world.client_addrs[k]),
        };
        if let Some(noise) = &d.noise {
            let (nsrc, ndst) = noise_ends(src, dst, d.dir, k);
            self.out.write(d.arrival_us, nsrc, ndst, noise)?;
            self.stats.frames += 1;
            self.injected += 1;
            let detail = format!("{} bytes of non-lwar UDP to port 9", noise.len());
            self.fault(Some(self.out.frames), k, d.dir, "noise".into(), detail);
        }
        if d.captured {
            self.out.write(d.arrival_us, src, dst, &d.payload)?;
            self.stats.frames += 1;
            self.stats.lwar_frames += 1;
            self.last_capture_ms = now;
            if let Some(t) = &mut self.truth {
                // The session's ends, whichever way the datagram goes.
                t.observe(
                    k,
                    &world.client_names[k],
                    &world.server_name,
                    0,
                    d.dir,
                    d.arrival_us * 1000,
                    &d.payload,
                );
            }
        }
        self.injected += d.faults.len() as u64 + u64::from(!d.captured);
        let frame = d.captured.then_some(self.out.frames);
        for f in &d.faults {
            self.fault(frame, k, d.dir, f.kind.clone(), f.detail.clone());
        }
        if !d.captured {
            let detail = format!("{} bytes delivered but not captured", d.payload.len());
            self.fault(None, k, d.dir, "tap-miss".into(), detail);
        }
        Ok(())
    }

    /// The datagrams the network lost before the tap this tick.
    fn lost(&mut self, lost: &mut Vec<(usize, Direction, Fault)>) {
        self.injected += lost.len() as u64;
        for (client, direction, f) in lost.drain(..) {
            self.fault(None, client, direction, f.kind, f.detail);
        }
    }

    /// Closes the capture and writes the truth.
    fn finish(
        mut self,
        cfg: &VirtualConfig,
        truth_path: Option<&Path>,
        now: u64,
    ) -> Result<RunStats, SimError> {
        self.out.finish()?;
        self.stats.virtual_ms = now;
        self.stats.faults = self.injected;
        debug_assert!(self.truth.is_none() || self.injected == self.faults.len() as u64);
        if let (Some(path), Some(truth)) = (truth_path, self.truth) {
            let file = TruthFile {
                version: 1,
                generator: cfg.clone(),
                faults: self.faults,
                summary: truth.finish(),
            };
            let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
            serde_json::to_writer_pretty(&mut w, &file)?;
            w.write_all(b"\n")?;
            w.flush()?;
        }
        Ok(self.stats)
    }
}

/// Noise travels between the same hosts as the datagram it precedes, between the
/// client host's port 40001+k and the server host's port 9 (discard).
fn noise_ends(
    src: SocketAddr,
    dst: SocketAddr,
    dir: Direction,
    k: usize,
) -> (SocketAddr, SocketAddr) {
    let client_port = 40001 + k as u16;
    match dir {
        Direction::ClientToServer => (
            SocketAddr::new(src.ip(), client_port),
            SocketAddr::new(dst.ip(), 9),
        ),
        Direction::ServerToClient => (
            SocketAddr::new(src.ip(), 9),
            SocketAddr::new(dst.ip(), client_port),
        ),
    }
}

/// One client's reliable traffic at the end of a logged run.
#[derive(Debug, Clone)]
pub struct LoggedClient {
    pub state: super::ClientState,
    /// Reliable messages the client queued, in order.
    pub client_sent: Vec<MessageRepr>,
    /// Reliable messages the server processed from it, in order.
    pub server_received: Vec<MessageRepr>,
    /// Reliable messages the server queued for it (unsent ones taken back).
    pub server_sent: Vec<MessageRepr>,
    /// Reliable messages the client processed, in order.
    pub client_received: Vec<MessageRepr>,
}

/// Runs `cfg` with peers that keep reliable logs, writing nothing (for tests).
pub fn run_logged(cfg: &VirtualConfig) -> Vec<LoggedClient> {
    let mut world = World::new(cfg, true);
    let end = cfg.duration_ms.unwrap_or(60_000);
    let mut now = 0;
    while now <= end {
        while let Some(d) = world.net.pop_due(now * 1000) {
            if d.beyond_tap_us > 0 {
                world.net.past_tap(d);
            } else {
                world.deliver(now, d.client, d.dir, &d.payload);
            }
        }
        while let Some(d) = world.net.pop_delivery(now * 1000) {
            world.deliver(now, d.client, d.dir, &d.payload);
        }
        world.net.lost.clear();
        world.tick(now);
        if now > 1000 && world.is_quiet() {
            break;
        }
        now += 1;
    }
    let log = |c: Option<&super::Channel>| {
        c.map(|c| {
            (
                c.sent_log.clone().unwrap_or_default(),
                c.recv_log.clone().unwrap_or_default(),
            )
        })
        .unwrap_or_default()
    };
    world
        .clients
        .iter()
        .zip(&world.client_addrs)
        .map(|(client, addr)| {
            let server_chan = world.server.channel(*addr).or_else(|| {
                world
                    .server
                    .gone
                    .iter()
                    .rev()
                    .find(|(a, _)| a == addr)
                    .map(|(_, c)| c)
            });
            let (server_sent, server_received) = log(server_chan);
            let (client_sent, client_received) = log(Some(client.channel()));
            LoggedClient {
                state: client.state(),
                client_sent,
                server_received,
                server_sent,
                client_received,
            }
        })
        .collect()
}
