//! A capture played packet by packet into one protocol's tracker, for the
//! analyzers' unit tests (`proto/<name>/analysis.rs`): each test feeds the
//! datagrams it builds and compares the findings each one raised.

use super::{Analyzer, Finding, NewAnalyzer, Observer, Session, Tracker, TrackerConfig};
use crate::capture::{Datagram, Timestamp};
use std::net::SocketAddr;

/// A finding as the tests compare it: direction, label, frame.
pub type F = (&'static str, String, u64);

/// The finding `label` of `dir` (`c2s`, `s2c`) on `frame`.
pub fn f(dir: &'static str, label: &str, frame: u64) -> F {
    (dir, label.to_owned(), frame)
}

/// Findings as the tests compare them.
pub fn compact(found: &[Finding]) -> Vec<F> {
    found
        .iter()
        .map(|f| (f.direction.name(), f.label().to_string(), f.frame))
        .collect()
}

/// Every finding an observer is told.
#[derive(Default)]
struct Collect(Vec<Finding>);

impl Observer for Collect {
    fn finding(&mut self, f: &Finding) {
        self.0.push(*f);
    }
}

/// One capture between a client and a server, one frame per datagram.
pub struct Played<A: Analyzer> {
    pub tracker: Tracker<A>,
    client: SocketAddr,
    server: SocketAddr,
    /// The last datagram's frame number.
    pub frame: u64,
    /// The last datagram's capture time, in milliseconds.
    pub now_ms: u64,
    /// Every finding raised so far.
    pub all: Vec<Finding>,
}

impl<A: NewAnalyzer> Played<A> {
    /// A capture between `client` and `server` (`ip:port`) whose clock
    /// starts at `start_ms`.
    pub fn new(client: &str, server: &str, start_ms: u64) -> Self {
        Played {
            tracker: Tracker::new(TrackerConfig::default()),
            client: client.parse().expect("client address"),
            server: server.parse().expect("server address"),
            frame: 0,
            now_ms: start_ms,
            all: Vec::new(),
        }
    }
}

impl<A: Analyzer> Played<A> {
    /// Feeds `payload`, from the client (`c2s`) or the server, captured at
    /// `at_ms`, of `len` bytes sent (more than the payload when the capture
    /// cut it): the findings it raised.
    pub fn feed_at(&mut self, c2s: bool, at_ms: u64, payload: &[u8], len: usize) -> Vec<Finding> {
        let (src, dst) = if c2s {
            (self.client, self.server)
        } else {
            (self.server, self.client)
        };
        self.frame += 1;
        self.now_ms = at_ms;
        let d = Datagram::new(self.frame, Timestamp::from_millis(at_ms), src, dst, payload)
            .with_payload_len(len);
        let mut seen = Collect::default();
        self.tracker.observe(&d, &mut seen);
        self.all.extend_from_slice(&seen.0);
        seen.0
    }

    /// Ends the capture: the findings its end raised.
    pub fn finish(&mut self) -> Vec<Finding> {
        let mut seen = Collect::default();
        self.tracker.finish(&mut seen);
        self.all.extend_from_slice(&seen.0);
        seen.0
    }

    /// The latest session.
    pub fn session(&self) -> &Session<A::Session> {
        self.tracker
            .sessions()
            .last()
            .map(|(_, s)| s)
            .expect("a session")
    }

    /// The detail of the first finding `label` raised, or nothing.
    pub fn detail(&self, label: &str) -> String {
        let f = self.all.iter().find(|f| f.label().to_string() == label);
        f.map(|f| f.detail.to_string()).unwrap_or_default()
    }
}
