//! Live mode: the simulated peers on real UDP sockets on loopback, in real time.
//!
//! One thread polls every socket without blocking, feeds the peers, and ticks
//! them every millisecond. At the end (the duration, or Ctrl-C) clients leave
//! gracefully, with two seconds of grace for the Disconnect/Leave exchange.

use super::client::{Client, ClientPlan};
use super::server::Server;
use super::{Outgoing, SimError};
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveConfig {
    /// Run only a server, on this address.
    pub server: Option<SocketAddr>,
    /// Run only clients, against this server.
    pub connect: Option<SocketAddr>,
    pub clients: usize,
    pub duration_ms: u64,
    pub seed: u64,
    pub ipv6: bool,
}

/// Datagrams sent and received in a live run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LiveStats {
    pub sent: u64,
    pub received: u64,
    pub interrupted: bool,
}

impl fmt::Display for LiveStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "live: {} datagrams sent, {} received{}",
            self.sent,
            self.received,
            if self.interrupted {
                " (interrupted)"
            } else {
                ""
            }
        )
    }
}

const GRACE_MS: u64 = 2000;

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

fn send(socket: &UdpSocket, o: &Outgoing, stats: &mut LiveStats) {
    // A refused or full send is like a lost datagram: the protocol copes.
    if socket.send_to(&o.payload, o.to).is_ok() {
        stats.sent += 1;
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
    let host = if cfg.ipv6 {
        IpAddr::V6(Ipv6Addr::LOCALHOST)
    } else {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    };
    let mut master = ChaCha8Rng::seed_from_u64(cfg.seed);
    let run_server = cfg.connect.is_none();
    let run_clients = cfg.server.is_none();
    let server_addr = loopback(
        cfg.server
            .or(cfg.connect)
            .unwrap_or(SocketAddr::new(host, DEFAULT_PORT)),
    )?;
    let mut server = run_server.then(|| Server::new(master.random(), false));
    let server_socket = match &server {
        Some(_) => Some(bind(server_addr)?),
        None => None,
    };
    let mut clients = Vec::new();
    if run_clients {
        for k in 0..cfg.clients {
            let socket = bind(SocketAddr::new(server_addr.ip(), 0))?;
            let mut plan = ClientPlan::new(format!("live{}", k + 1), 100 + 300 * k as u64);
            plan.leave_ms = None;
            clients.push((
                Client::new(plan, server_addr, master.random(), false),
                socket,
            ));
        }
    }
    writeln!(
        log,
        "live: {}{} on {server_addr} for {:.1} s (Ctrl-C stops)",
        if run_server { "server" } else { "" },
        if run_clients {
            format!(
                "{}{} clients",
                if run_server { " and " } else { "" },
                clients.len()
            )
        } else {
            String::new()
        },
        cfg.duration_ms as f64 / 1000.0
    )?;

    let start = Instant::now();
    let mut stats = LiveStats::default();
    let mut out = Vec::new();
    let mut buf = [0u8; 2048];
    let mut ending_at: Option<u64> = None;
    loop {
        let now = start.elapsed().as_millis() as u64;
        if ending_at.is_none() && (now >= cfg.duration_ms || stop.load(Ordering::SeqCst)) {
            stats.interrupted = stop.load(Ordering::SeqCst);
            ending_at = Some(now);
            for (client, _) in &mut clients {
                client.leave(now);
            }
        }
        if let Some(t) = ending_at {
            let clients_done = clients.iter().all(|(c, _)| c.state().is_done());
            if now >= t + GRACE_MS || (clients_done && (run_clients || now > t)) {
                break;
            }
        }
        if let (Some(server), Some(socket)) = (&mut server, &server_socket) {
            loop {
                match socket.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        stats.received += 1;
                        server.receive(now, from, &buf[..n], &mut out);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::ConnectionReset => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            server.poll(now, &mut out);
            for o in out.drain(..) {
                send(socket, &o, &mut stats);
            }
        }
        for (client, socket) in &mut clients {
            loop {
                match socket.recv_from(&mut buf) {
                    Ok((n, from)) if from == server_addr => {
                        stats.received += 1;
                        client.receive(now, &buf[..n]);
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::ConnectionReset => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            client.poll(now, &mut out);
            for o in out.drain(..) {
                send(socket, &o, &mut stats);
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(stats)
}
