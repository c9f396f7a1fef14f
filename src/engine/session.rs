//! A session's state: its two directions, its lifecycle and its players.

use super::finding::{FindingKind, Rule};
use super::seq::SeqWindow;
use super::summary::{Counts, DirectionSummary, bump};
use crate::capture::Timestamp;
use crate::proto::lwar::wire::{ErrorKind, Id, MessageType};
use hdrhistogram::Histogram;
use std::fmt;
use std::net::SocketAddr;

/// Where a session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Connect seen, no Join yet.
    Connecting,
    /// Join seen, Synced not yet.
    Syncing,
    /// Synced seen, or the capture started mid-game.
    Playing,
    /// The client sent Disconnect.
    Disconnecting,
    /// Leave after Disconnect: a graceful end.
    Closed,
    /// The server answered Full.
    Rejected,
    /// 15 s of capture time without a packet from one of the peers.
    TimedOut,
}

impl State {
    pub const fn name(self) -> &'static str {
        match self {
            State::Connecting => "connecting",
            State::Syncing => "syncing",
            State::Playing => "playing",
            State::Disconnecting => "disconnecting",
            State::Closed => "closed",
            State::Rejected => "rejected",
            State::TimedOut => "timed-out",
        }
    }

    /// Closed and rejected sessions are over; silence after them is expected.
    pub const fn is_final(self) -> bool {
        matches!(self, State::Closed | State::Rejected | State::TimedOut)
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Packet hashes of the last packets of a direction, to spot network duplicates.
pub(crate) const DUP_WINDOW: usize = 64;

/// The hashes of a direction's last [`DUP_WINDOW`] packets (that were not
/// duplicates themselves), with the frame of each.
#[derive(Debug, Clone)]
pub(crate) struct DupWindow {
    /// The low 32 bits of each hash: every packet is compared with all of them,
    /// and 32-bit lanes are what baseline x86-64 (SSE2) compares in bulk.
    tags: [u32; DUP_WINDOW],
    hashes: [u64; DUP_WINDOW],
    /// `u64::MAX` for a slot not used yet.
    frames: [u64; DUP_WINDOW],
    next: usize,
}

impl Default for DupWindow {
    fn default() -> Self {
        DupWindow {
            tags: [0; DUP_WINDOW],
            hashes: [0; DUP_WINDOW],
            frames: [u64::MAX; DUP_WINDOW],
            next: 0,
        }
    }
}

impl DupWindow {
    /// The frame of a recent packet with this hash; if there is none, the packet
    /// is remembered as `frame`.
    pub(crate) fn check(&mut self, hash: u64, frame: u64) -> Option<u64> {
        // Almost no packet is a duplicate: a scan of the tags without early exit
        // (a few vector compares), then the full hashes only on a tag match.
        let tag = hash as u32;
        let tag_hit = self
            .tags
            .iter()
            .fold(0u32, |hit, t| hit | u32::from(*t == tag));
        if tag_hit != 0
            && let Some(i) = self
                .hashes
                .iter()
                .zip(&self.frames)
                .position(|(h, f)| *h == hash && *f != u64::MAX)
        {
            return Some(self.frames[i]);
        }
        self.tags[self.next] = tag;
        self.hashes[self.next] = hash;
        self.frames[self.next] = frame;
        self.next = (self.next + 1) % DUP_WINDOW;
        None
    }
}

/// Everything tracked about one direction of a session.
#[derive(Debug)]
pub struct DirState {
    pub packets: u64,
    pub bytes: u64,
    pub first_ts: Option<Timestamp>,
    pub last_ts: Timestamp,
    pub messages: [u64; MessageType::COUNT],
    pub message_bytes: [u64; MessageType::COUNT],
    pub findings: [u64; FindingKind::ALL.len()],
    pub violations: [u64; Rule::ALL.len()],
    pub malformed: [u64; ErrorKind::ALL.len()],
    pub first_sends: u64,
    pub resends: u64,
    pub expected_repeats: u64,
    pub(crate) seq: SeqWindow,
    /// Highest ack this direction has sent, once it has sent one.
    pub max_ack: Option<u32>,
    /// Frame of the packet that first carried `max_ack`.
    pub(crate) max_ack_frame: u64,
    pub(crate) max_timestamp: Option<u32>,
    pub(crate) recent: DupWindow,
    pub(crate) last_input_frame: Option<u32>,
    /// Interarrival jitter of packets carrying unreliable messages (RFC 3550), in ms.
    pub jitter_ms: f64,
    pub(crate) jitter_prev: Option<(Timestamp, u32)>,
    /// Ack delay of this direction's reliable messages, in microseconds.
    pub ack_delay_us: Histogram<u64>,
}

impl Default for DirState {
    fn default() -> Self {
        DirState {
            packets: 0,
            bytes: 0,
            first_ts: None,
            last_ts: Timestamp::default(),
            messages: [0; MessageType::COUNT],
            message_bytes: [0; MessageType::COUNT],
            findings: [0; FindingKind::ALL.len()],
            violations: [0; Rule::ALL.len()],
            malformed: [0; ErrorKind::ALL.len()],
            first_sends: 0,
            resends: 0,
            expected_repeats: 0,
            seq: SeqWindow::default(),
            max_ack: None,
            max_ack_frame: 0,
            max_timestamp: None,
            recent: DupWindow::default(),
            last_input_frame: None,
            jitter_ms: 0.0,
            jitter_prev: None,
            // Up to an hour, 2 significant digits: a fixed size, allocated once.
            ack_delay_us: Histogram::new_with_bounds(1, 3_600_000_000, 2)
                .expect("static histogram bounds are valid"),
        }
    }
}

fn counts<const N: usize, T: Copy>(
    values: &[u64; N],
    all: &[T; N],
    name: fn(T) -> &'static str,
) -> Counts {
    let mut out = Counts::new();
    for (value, item) in values.iter().zip(all) {
        bump(&mut out, name(*item), *value);
    }
    out
}

impl DirState {
    /// Seconds from the first to the last packet.
    pub fn duration_secs(&self) -> f64 {
        self.first_ts
            .map(|first| self.last_ts.since(first) as f64 / 1e9)
            .unwrap_or(0.0)
    }

    /// Messages of a type per second over this direction's duration.
    pub fn rate_hz(&self, t: MessageType) -> Option<f64> {
        let secs = self.duration_secs();
        (secs > 0.0).then(|| self.messages[t.ordinal()] as f64 / secs)
    }

    /// Resends per reliable message captured, as a fraction.
    pub fn resend_rate(&self) -> f64 {
        super::summary::resend_rate(self.first_sends, self.resends)
    }

    /// Reliable messages captured that the other side never acked.
    pub fn unacked(&self) -> usize {
        self.seq.unacked()
    }

    pub fn finding_count(&self, kind: FindingKind) -> u64 {
        self.findings[kind.ordinal()]
    }

    pub fn summary(&self) -> DirectionSummary {
        DirectionSummary {
            packets: self.packets,
            bytes: self.bytes,
            messages: counts(&self.messages, &MessageType::ALL, MessageType::name),
            findings: counts(&self.findings, &FindingKind::ALL, FindingKind::name),
            violations: counts(&self.violations, &Rule::ALL, Rule::name),
            malformed: counts(&self.malformed, &ErrorKind::ALL, ErrorKind::name),
            first_sends: self.first_sends,
            resends: self.resends,
        }
    }
}

/// A player as the session's Joins and Names tell of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    pub id: Id,
    /// The latest name, lossily decoded if it was not UTF-8.
    pub name: String,
    pub renames: u32,
    pub chats: u64,
}

/// One client-server session.
#[derive(Debug)]
pub struct Session {
    pub id: super::finding::SessionId,
    pub client: SocketAddr,
    pub server: SocketAddr,
    pub state: State,
    /// True when the capture saw the session begin (its Connect).
    pub saw_start: bool,
    /// The client's own player, from the Join that answered its Connect.
    pub player: Option<Player>,
    pub(crate) connect_seqno: Option<u32>,
    pub(crate) first_s2c_reliable_checked: bool,
    pub(crate) disconnect_seen: bool,
    /// The seqno of the client's first Disconnect: once the server acks it, the
    /// server has processed it.
    pub(crate) disconnect_seqno: Option<u32>,
    /// Full messages the server answered: rejected connection attempts.
    pub rejected_attempts: u64,
    pub c2s: DirState,
    pub s2c: DirState,
}

impl Session {
    pub(crate) fn new(
        id: super::finding::SessionId,
        client: SocketAddr,
        server: SocketAddr,
    ) -> Self {
        Session {
            id,
            client,
            server,
            state: State::Playing,
            saw_start: false,
            player: None,
            connect_seqno: None,
            first_s2c_reliable_checked: false,
            disconnect_seen: false,
            disconnect_seqno: None,
            rejected_attempts: 0,
            c2s: DirState::default(),
            s2c: DirState::default(),
        }
    }

    /// The capture time of the last packet either way.
    pub fn last_seen(&self) -> Timestamp {
        self.c2s.last_ts.max(self.s2c.last_ts)
    }

    /// Seconds from the first to the last packet either way.
    pub fn duration_secs(&self) -> f64 {
        let first = match (self.c2s.first_ts, self.s2c.first_ts) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return 0.0,
        };
        self.last_seen().since(first) as f64 / 1e9
    }
}
