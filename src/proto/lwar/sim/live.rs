//! Live mode: the simulated peers on real UDP sockets on loopback, in real time.
//!
//! One thread polls every socket without blocking, feeds the peers, and ticks
//! them every millisecond. At the end (the duration, or Ctrl-C) clients leave
//! gracefully, with two seconds of grace for the Disconnect/Leave exchange
//! (with `--stay` they do not: the run just ends); with `--crash K` the last K
//! clients go silent 3 s after they start.
//!
//! The faults of the virtual network (loss, duplication, corruption, latency,
//! jitter, reordering, noise: [`super::net`], in the same order, with the same
//! rates) apply live too: every datagram a peer sends goes through a
//! [`Network`] before it is put on its socket, held back in user space for its
//! delay. A capture of the loopback interface (`lwarscope -i lo`) is then the
//! tap: it sees each datagram as the network delivers it. Only `--tap-miss`
//! cannot apply (the tap is the capture, which misses only what the kernel
//! drops): it is refused, as the options of the virtual mode alone are.

use super::client::{Client, ClientPlan};
use super::net::{CorruptKind, Faults, InFlight, Network};
use super::server::Server;
use super::{Outgoing, SimError};
use crate::engine::Direction;
use crate::proto::lwar::wire::DEFAULT_PORT;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt;
use std::io::{ErrorKind, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a live run does.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveConfig {
    /// Run only a server, on this address.
    pub server: Option<SocketAddr>,
    /// Run only clients, against this server.
    pub connect: Option<SocketAddr>,
    pub clients: usize,
    pub duration_ms: u64,
    pub seed: u64,
    pub ipv6: bool,
    /// The last `crash` clients go silent 3 s after they start.
    pub crash: usize,
    /// Clients never leave: the run ends without Disconnect.
    pub stay: bool,
    /// The faults of each direction (`tap_miss` must be 0: nothing applies it).
    pub c2s: Faults,
    pub s2c: Faults,
    pub corrupt_kinds: Vec<CorruptKind>,
}

/// Datagrams sent and received in a live run, and the faults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveStats {
    /// Datagrams put on a socket (the peers', after the faults; noise apart).
    pub sent: u64,
    pub received: u64,
    /// Datagrams the peers handed to the network.
    pub from_peers: u64,
    /// Faults applied: datagrams lost, duplicated, corrupted, reordered, and
    /// non-lwar noise datagrams sent.
    pub lost: u64,
    pub duplicated: u64,
    pub corrupted: u64,
    pub reordered: u64,
    pub noise: u64,
    pub interrupted: bool,
}

impl LiveStats {
    /// Every fault applied.
    pub fn faults(&self) -> u64 {
        self.lost + self.duplicated + self.corrupted + self.reordered + self.noise
    }
}

impl fmt::Display for LiveStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "live: {} datagrams sent, {} received",
            self.sent, self.received
        )?;
        if self.faults() > 0 {
            write!(
                f,
                "; {} faults applied to the {} datagrams of the peers: {} lost, {} duplicated, \
                 {} corrupted, {} reordered, {} noise",
                self.faults(),
                self.from_peers,
                self.lost,
                self.duplicated,
                self.corrupted,
                self.reordered,
                self.noise
            )?;
        }
        if self.interrupted {
            f.write_str(" (interrupted)")?;
        }
        Ok(())
    }
}

const GRACE_MS: u64 = 2000;
/// How long after its start a crashing client goes silent (as in the virtual mode).
const CRASH_AFTER_MS: u64 = 3000;

fn loopback(addr: SocketAddr) -> Result<SocketAddr, SimError> {
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(SimError::NotLoopback(addr))
    }
}

fn bind(addr: SocketAddr) -> Result<UdpSocket, SimError> {
    let socket = UdpSocket::bind(addr)?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

fn send(socket: &UdpSocket, payload: &[u8], to: SocketAddr, stats: &mut LiveStats) {
    // A refused or full send is like a lost datagram: the protocol copes.
    if socket.send_to(payload, to).is_ok() {
        stats.sent += 1;
    }
}

/// The network between the live peers: each datagram through [`Network`]'s
/// faults, put on its socket once its delay has passed.
struct LiveNet {
    net: Network,
    /// The address of each peer's end of a session, by the index the
    /// network knows it by: the clients of this run first, then the
    /// addresses a server alone learns from its datagrams.
    clients: Vec<SocketAddr>,
    /// For the noise: a socket of its own, and port 9 (discard) of the host.
    noise: Option<(UdpSocket, SocketAddr)>,
}

impl LiveNet {
    /// The index of the client at `addr`, learnt if new.
    fn client(&mut self, addr: SocketAddr) -> usize {
        match self.clients.iter().position(|a| *a == addr) {
            Some(k) => k,
            None => {
                self.clients.push(addr);
                self.clients.len() - 1
            }
        }
    }

    fn send(
        &mut self,
        now_us: u64,
        client: usize,
        dir: Direction,
        o: Outgoing,
        stats: &mut LiveStats,
    ) {
        stats.from_peers += 1;
        self.net.send(now_us, client, dir, o.payload);
        for (_, _, f) in self.net.lost.drain(..) {
            if f.kind == "loss" {
                stats.lost += 1;
            }
        }
    }

    /// The datagrams due by `now_us`, with where they go.
    fn due(&mut self, now_us: u64, stats: &mut LiveStats) -> Option<InFlight> {
        let d = self.net.pop_due(now_us)?;
        for f in &d.faults {
            match f.kind.as_str() {
                "duplicate" => stats.duplicated += 1,
                "reorder" => stats.reordered += 1,
                k if k.starts_with("corrupt") => stats.corrupted += 1,
                _ => {}
            }
        }
        if let (Some(noise), Some((socket, to))) = (&d.noise, &self.noise)
            && socket.send_to(noise, *to).is_ok()
        {
            stats.noise += 1;
        }
        Some(d)
    }
}

/// Runs the live simulation until the duration ends or Ctrl-C.
pub fn run_live(cfg: &LiveConfig, log: &mut dyn Write) -> Result<LiveStats, SimError> {
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // Only one handler per process: a second live run in the same process
        // keeps the first handler, which is fine for the binary.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let mut master = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut peers = Peers::new(cfg, &mut master)?;
    let mut net = LiveNet {
        net: Network::new(cfg.c2s, cfg.s2c, cfg.corrupt_kinds.clone(), master.random()),
        clients: peers.clients.iter().map(|(_, _, addr)| *addr).collect(),
        noise: noise_socket(cfg, peers.server_addr)?,
    };
    peers.announce(cfg, log)?;

    let faulty = cfg.c2s != Faults::default() || cfg.s2c != Faults::default();
    let run_clients = cfg.server.is_none();
    let start = Instant::now();
    let mut stats = LiveStats::default();
    let mut ending_at: Option<u64> = None;
    loop {
        let now_us = start.elapsed().as_micros() as u64;
        let now = now_us / 1000;
        if ending_at.is_none() && (now >= cfg.duration_ms || stop.load(Ordering::SeqCst)) {
            stats.interrupted = stop.load(Ordering::SeqCst);
            if cfg.stay {
                break;
            }
            ending_at = Some(now);
            for (client, _, _) in &mut peers.clients {
                client.leave(now);
            }
        }
        if let Some(t) = ending_at {
            let clients_done = peers.clients.iter().all(|(c, _, _)| c.state().is_done());
            if now >= t + GRACE_MS || (clients_done && (run_clients || now > t)) {
                break;
            }
        }
        let net = faulty.then_some(&mut net);
        let mut clock = Clock {
            now,
            now_us,
            stats: &mut stats,
        };
        peers.serve(&mut clock, net)?;
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(stats)
}

/// For the noise: a socket of its own, and port 9 (discard) of the host.
fn noise_socket(
    cfg: &LiveConfig,
    server: SocketAddr,
) -> Result<Option<(UdpSocket, SocketAddr)>, SimError> {
    if cfg.c2s.noise > 0.0 || cfg.s2c.noise > 0.0 {
        let socket = bind(SocketAddr::new(server.ip(), 0))?;
        Ok(Some((socket, SocketAddr::new(server.ip(), 9))))
    } else {
        Ok(None)
    }
}

/// The time of one turn of the loop, and the run's counts.
struct Clock<'a> {
    now: u64,
    now_us: u64,
    stats: &'a mut LiveStats,
}

/// The peers a live run plays: the server (unless it connects to another),
/// and the clients (unless it only serves), each with its socket.
struct Peers {
    server: Option<(Server, UdpSocket)>,
    clients: Vec<(Client, UdpSocket, SocketAddr)>,
    server_addr: SocketAddr,
    out: Vec<Outgoing>,
    buf: [u8; 2048],
}

impl Peers {
    fn new(cfg: &LiveConfig, master: &mut ChaCha8Rng) -> Result<Peers, SimError> {
        let host = if cfg.ipv6 {
            IpAddr::V6(Ipv6Addr::LOCALHOST)
        } else {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        };
        let server_addr = loopback(
            cfg.server
                .or(cfg.connect)
                .unwrap_or(SocketAddr::new(host, DEFAULT_PORT)),
        )?;
        let server = match cfg.connect {
            None => {
                let server = Server::new(master.random(), false);
                Some((server, bind(server_addr)?))
            }
            Some(_) => None,
        };
        let mut clients = Vec::new();
        if cfg.server.is_none() {
            for k in 0..cfg.clients {
                let socket = bind(SocketAddr::new(server_addr.ip(), 0))?;
                let mut plan = ClientPlan::new(format!("live{}", k + 1), 100 + 300 * k as u64);
                plan.leave_ms = None;
                if k >= cfg.clients.saturating_sub(cfg.crash) {
                    plan.crash_ms = Some(plan.start_ms + CRASH_AFTER_MS);
                }
                let addr = socket.local_addr()?;
                let client = Client::new(plan, server_addr, master.random(), false);
                clients.push((client, socket, addr));
            }
        }
        Ok(Peers {
            server,
            clients,
            server_addr,
            out: Vec::new(),
            buf: [0; 2048],
        })
    }

    /// The line that says what runs where.
    fn announce(&self, cfg: &LiveConfig, log: &mut dyn Write) -> std::io::Result<()> {
        let run_server = self.server.is_some();
        let clients = match cfg.server {
            None => format!(
                "{}{} clients",
                if run_server { " and " } else { "" },
                self.clients.len()
            ),
            Some(_) => String::new(),
        };
        writeln!(
            log,
            "live: {}{clients} on {} for {:.1} s (Ctrl-C stops)",
            if run_server { "server" } else { "" },
            self.server_addr,
            cfg.duration_ms as f64 / 1000.0
        )
    }

    /// One turn: every peer reads what arrived and sends what it has to,
    /// through the faulty network when there is one; then the network
    /// delivers what is due, from the sender's socket.
    fn serve(
        &mut self,
        clock: &mut Clock<'_>,
        mut net: Option<&mut LiveNet>,
    ) -> Result<(), SimError> {
        self.serve_server(clock, net.as_deref_mut())?;
        self.serve_clients(clock, net.as_deref_mut())?;
        let Some(net) = net else {
            return Ok(());
        };
        while let Some(d) = net.due(clock.now_us, clock.stats) {
            match d.dir {
                Direction::ClientToServer => {
                    if let Some((_, socket, _)) = self.clients.get(d.client) {
                        send(socket, &d.payload, self.server_addr, clock.stats);
                    }
                }
                Direction::ServerToClient => {
                    if let (Some((_, socket)), Some(to)) = (&self.server, net.clients.get(d.client))
                    {
                        send(socket, &d.payload, *to, clock.stats);
                    }
                }
            }
        }
        Ok(())
    }

    fn serve_server(
        &mut self,
        clock: &mut Clock<'_>,
        mut net: Option<&mut LiveNet>,
    ) -> Result<(), SimError> {
        let Some((server, socket)) = &mut self.server else {
            return Ok(());
        };
        loop {
            match socket.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    clock.stats.received += 1;
                    server.receive(clock.now, from, &self.buf[..n], &mut self.out);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::ConnectionReset => continue,
                Err(e) => return Err(e.into()),
            }
        }
        server.poll(clock.now, &mut self.out);
        for o in self.out.drain(..) {
            if let Some(net) = net.as_deref_mut() {
                let k = net.client(o.to);
                net.send(clock.now_us, k, Direction::ServerToClient, o, clock.stats);
            } else {
                clock.stats.from_peers += 1;
                send(socket, &o.payload, o.to, clock.stats);
            }
        }
        Ok(())
    }

    fn serve_clients(
        &mut self,
        clock: &mut Clock<'_>,
        mut net: Option<&mut LiveNet>,
    ) -> Result<(), SimError> {
        for (k, (client, socket, _)) in self.clients.iter_mut().enumerate() {
            loop {
                match socket.recv_from(&mut self.buf) {
                    Ok((n, from)) if from == self.server_addr => {
                        clock.stats.received += 1;
                        client.receive(clock.now, &self.buf[..n]);
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::ConnectionReset => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            client.poll(clock.now, &mut self.out);
            for o in self.out.drain(..) {
                if let Some(net) = net.as_deref_mut() {
                    net.send(clock.now_us, k, Direction::ClientToServer, o, clock.stats);
                } else {
                    clock.stats.from_peers += 1;
                    send(socket, &o.payload, o.to, clock.stats);
                }
            }
        }
        Ok(())
    }
}
