//! What the data thread sends the UI: compact packet rows, findings, session
//! snapshots and capture status. Nothing here borrows capture buffers.

use super::store::Loc;
use crate::capture::Timestamp;
use crate::codec::Id;
use crate::track::{Detail, Direction, Finding, FindingKind, Rule, SessionId, Severity, State};
use std::net::SocketAddr;

/// One packet of the index: where its payload lies and what the list needs to
/// sort and colour it. The rest is decoded from the payload when shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub frame: u64,
    pub ts: Timestamp,
    pub loc: Loc,
    pub session: u32,
    /// The UDP payload length as sent (more than `loc.len()` when cut short).
    pub len: u16,
    flags: u8,
    /// Worst severity of the packet's findings: 0 none, 1 note, 2 warning, 3 error.
    worst: u8,
}

const S2C: u8 = 1;
const CUT: u8 = 2;

/// A severity as a small number, 0 meaning none.
pub const fn severity_rank(s: Severity) -> u8 {
    match s {
        Severity::Note => 1,
        Severity::Warning => 2,
        Severity::Error => 3,
    }
}

impl Row {
    pub fn new(
        frame: u64,
        ts: Timestamp,
        loc: Loc,
        session: SessionId,
        direction: Direction,
        payload_len: usize,
    ) -> Self {
        let cut_by_capture = payload_len > loc.len();
        let mut flags = 0;
        if direction == Direction::ServerToClient {
            flags |= S2C;
        }
        if cut_by_capture {
            flags |= CUT;
        }
        Row {
            frame,
            ts,
            loc,
            session: u32::try_from(session).unwrap_or(u32::MAX),
            len: u16::try_from(payload_len).unwrap_or(u16::MAX),
            flags,
            worst: 0,
        }
    }

    pub const fn direction(&self) -> Direction {
        if self.flags & S2C != 0 {
            Direction::ServerToClient
        } else {
            Direction::ClientToServer
        }
    }

    /// True when the capture's snaplen cut the payload short.
    pub const fn cut_by_capture(&self) -> bool {
        self.flags & CUT != 0
    }

    pub fn worst(&self) -> Option<Severity> {
        match self.worst {
            1 => Some(Severity::Note),
            2 => Some(Severity::Warning),
            3 => Some(Severity::Error),
            _ => None,
        }
    }

    /// Raises the row's worst severity to `s` if it is worse.
    pub fn note(&mut self, s: Severity) {
        self.worst = self.worst.max(severity_rank(s));
    }
}

/// A finding as the UI's log keeps it: 24 bytes, where a [`Finding`] takes 88.
/// Its detail is rendered to text once, by the data thread, and kept in the
/// payload store; `detail` says where. Ten million findings fit in 240 MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedFinding {
    /// The text of the finding's [`crate::track::Detail`] in the store.
    pub detail: Loc,
    /// The index row of the packet that raised it (for `lost`, of the gap).
    pub row: u32,
    pub session: u32,
    seqno: u32,
    pub kind: FindingKind,
    pub rule: Option<Rule>,
    pub direction: Direction,
    has_seqno: bool,
}

impl LoggedFinding {
    /// Keeps `f`, its detail's text being at `detail`; `row` is set by the UI.
    pub fn new(f: &Finding, detail: Loc) -> Self {
        LoggedFinding {
            detail,
            row: 0,
            session: u32::try_from(f.session).unwrap_or(u32::MAX),
            seqno: f.seqno.unwrap_or(0),
            kind: f.kind,
            rule: f.rule,
            direction: f.direction,
            has_seqno: f.seqno.is_some(),
        }
    }

    pub const fn seqno(&self) -> Option<u32> {
        if self.has_seqno {
            Some(self.seqno)
        } else {
            None
        }
    }

    pub const fn severity(&self) -> Severity {
        self.kind.severity()
    }

    /// `violation/wrong-sender` for violations, the kind's name otherwise.
    pub fn label(&self) -> impl std::fmt::Display + '_ {
        std::fmt::from_fn(move |f| match self.rule {
            Some(rule) => write!(f, "{}/{}", self.kind, rule),
            None => write!(f, "{}", self.kind),
        })
    }

    /// The finding again, for the display filter, with the packet's frame and
    /// time; the detail, which filters do not look at, is left out.
    pub fn to_finding(&self, row: &Row) -> Finding {
        Finding {
            kind: self.kind,
            rule: self.rule,
            frame: row.frame,
            ts: row.ts,
            session: self.session as SessionId,
            direction: self.direction,
            seqno: self.seqno(),
            detail: Detail::None,
        }
    }
}

/// The packet index.
pub type RowIndex = Chunked<Row>;

/// A list in fixed-size chunks, so that growing it never copies what is there
/// (no doubling peak on a ten-million-row capture).
#[derive(Debug)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

const CHUNK: usize = 1 << 16;

impl<T> Chunked<T> {
    pub const fn len(&self) -> usize {
        self.len
    }

    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks.get_mut(i / CHUNK)?.get_mut(i % CHUNK)
    }

    pub fn push(&mut self, row: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(row),
            _ => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(row);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }

    /// The first row for which `pred` is false, rows being partitioned by it.
    pub fn partition_point(&self, pred: impl Fn(&T) -> bool) -> usize {
        let full = self.chunks.partition_point(|c| c.last().is_some_and(&pred));
        match self.chunks.get(full) {
            Some(c) => full * CHUNK + c.partition_point(&pred),
            None => self.len,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    /// Items `range`, in order (the range is cut to the length); finds the
    /// start in constant time.
    pub fn range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = &T> {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        self.chunks[start / CHUNK..]
            .iter()
            .enumerate()
            .flat_map(move |(k, c)| {
                let skip = if k == 0 { start % CHUNK } else { 0 };
                c.get(skip..).unwrap_or_default()
            })
            .take(end - start)
    }
}

impl<T> std::ops::Index<usize> for Chunked<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

/// Seconds of traffic history kept per session for its sparkline and rates.
pub const HISTORY_SECS: usize = 60;

/// Packets per second of capture time, each way, over the last [`HISTORY_SECS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// The capture second of the newest bucket.
    pub newest: u64,
    /// Ring of `[c2s, s2c]` packet counts, indexed by second modulo the length.
    buckets: [[u32; 2]; HISTORY_SECS],
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            newest: 0,
            buckets: [[0; 2]; HISTORY_SECS],
        }
    }
}

impl Activity {
    /// Counts one packet at capture second `sec`.
    pub fn count(&mut self, sec: u64, dir: Direction) {
        if sec > self.newest {
            let gap = (sec - self.newest).min(HISTORY_SECS as u64);
            for s in 1..=gap {
                self.buckets[((self.newest + s) % HISTORY_SECS as u64) as usize] = [0; 2];
            }
            self.newest = sec;
        } else if self.newest - sec >= HISTORY_SECS as u64 {
            return;
        }
        let b = &mut self.buckets[(sec % HISTORY_SECS as u64) as usize][dir.index()];
        *b = b.saturating_add(1);
    }

    /// Packets in capture second `sec`, each way (zero outside the history).
    pub fn at(&self, sec: u64) -> [u32; 2] {
        if sec > self.newest || self.newest - sec >= HISTORY_SECS as u64 {
            [0; 2]
        } else {
            self.buckets[(sec % HISTORY_SECS as u64) as usize]
        }
    }

    /// Packets per second each way over the last whole second before `now_sec`
    /// (or the current one, when the history is at `now_sec` and the last second
    /// is empty because the capture started this second).
    pub fn rate(&self, now_sec: u64) -> [u32; 2] {
        let last = self.at(now_sec.saturating_sub(1));
        if last == [0; 2] {
            self.at(now_sec)
        } else {
            last
        }
    }

    /// Total packets per second for the `n` seconds ending at `now_sec`, oldest first.
    pub fn series(&self, now_sec: u64, n: usize) -> impl Iterator<Item = u64> + '_ {
        let n = n.min(HISTORY_SECS) as u64;
        (0..n).map(move |i| {
            let sec = (now_sec + 1 + i).checked_sub(n);
            sec.map_or(0, |s| {
                let [a, b] = self.at(s);
                u64::from(a) + u64::from(b)
            })
        })
    }
}

/// One session as the UI shows it: a copy of the tracker's state, taken now and
/// then by the data thread.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSnap {
    pub id: SessionId,
    pub client: SocketAddr,
    pub server: SocketAddr,
    pub state: State,
    /// The client's player (id and latest name), once its Join was seen.
    pub player: Option<(Id, String)>,
    pub packets: [u64; 2],
    pub bytes: [u64; 2],
    pub resends: [u64; 2],
    pub reorders: u64,
    pub malformed: u64,
    /// Median ack delay of each direction's reliable messages, in milliseconds.
    pub ack_delay_ms: [Option<f64>; 2],
    pub last_ts: Timestamp,
    pub activity: Activity,
}

/// A session's two ends, sent with the first batch that has its packets, so
/// that rows can always name their source and destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoints {
    pub id: SessionId,
    pub client: SocketAddr,
    pub server: SocketAddr,
}

impl Endpoints {
    /// Source and destination of a packet going `dir`.
    pub fn of(&self, dir: Direction) -> (SocketAddr, SocketAddr) {
        match dir {
            Direction::ClientToServer => (self.client, self.server),
            Direction::ServerToClient => (self.server, self.client),
        }
    }
}

/// Capture statistics as the status bar shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaptureCounters {
    /// Frames read from the file or interface.
    pub frames: u64,
    /// libpcap's counters, for live captures: received, dropped by the kernel,
    /// dropped by the interface.
    pub received: Option<u64>,
    pub dropped_kernel: Option<u64>,
    pub dropped_interface: Option<u64>,
}

/// What the data side sends.
#[derive(Debug)]
pub enum Update {
    /// New packets (their payloads are already readable in the store) and the
    /// findings raised meanwhile, in the order raised, with their frames.
    Batch {
        rows: Vec<Row>,
        findings: Vec<(u64, LoggedFinding)>,
        /// Sessions first seen in this batch.
        endpoints: Vec<Endpoints>,
    },
    /// Every session kept by the tracker, in the order first seen.
    Sessions(Vec<SessionSnap>),
    /// Capture counters and, for files, how far the load has got (0 to 1).
    Status {
        counters: CaptureCounters,
        progress: Option<f64>,
    },
    /// The source ended (end of file, or a stop).
    Finished,
    /// The source failed; what was read before stays.
    Failed(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::*;

    #[test]
    fn activity_counts_rates_and_forgets_old_seconds() {
        let mut a = Activity::default();
        a.count(100, ClientToServer);
        a.count(100, ServerToClient);
        a.count(101, ClientToServer);
        a.count(101, ClientToServer);
        assert_eq!(a.rate(102), [2, 0]);
        assert_eq!(a.rate(101), [1, 1]);
        assert_eq!(a.series(101, 3).collect::<Vec<_>>(), [0, 2, 2]);
        // A jump past the whole history clears it.
        a.count(500, ServerToClient);
        assert_eq!(a.at(101), [0; 2]);
        assert_eq!(a.at(500), [0, 1]);
        // Too old to keep: ignored.
        a.count(10, ClientToServer);
        assert_eq!(a.series(500, 60).sum::<u64>(), 1);
    }

    #[test]
    fn the_index_grows_in_chunks_and_searches_by_frame() {
        let mut idx = RowIndex::default();
        let n = 3 * CHUNK + 5;
        for f in 0..n as u64 {
            idx.push(Row::new(
                2 * f,
                Timestamp(f),
                Loc::default(),
                0,
                ClientToServer,
                0,
            ));
        }
        assert_eq!((idx.len(), idx.chunks.len()), (n, 4));
        assert_eq!(idx[CHUNK + 1].frame, 2 * (CHUNK as u64 + 1));
        for f in [
            0,
            1,
            2,
            2 * CHUNK as u64,
            2 * CHUNK as u64 + 1,
            2 * n as u64,
        ] {
            let expected = (f as usize).div_ceil(2).min(n);
            assert_eq!(idx.partition_point(|r| r.frame < f), expected, "{f}");
        }
        assert_eq!(idx.iter().count(), n);
        let frames = |r: std::ops::Range<usize>| idx.range(r).map(|r| r.frame).collect::<Vec<_>>();
        assert_eq!(
            frames(CHUNK - 1..CHUNK + 2),
            [
                2 * (CHUNK as u64 - 1),
                2 * CHUNK as u64,
                2 * (CHUNK as u64 + 1)
            ]
        );
        assert_eq!(frames(n - 1..n + 5), [2 * (n as u64 - 1)]);
        assert!(frames(n + 3..n + 5).is_empty());
        assert!(idx.get(n).is_none());
    }

    #[test]
    fn rows_keep_direction_and_worst_severity() {
        let mut r = Row::new(7, Timestamp(1), Loc::default(), 3, ServerToClient, 20);
        assert_eq!(r.direction(), ServerToClient);
        assert!(r.cut_by_capture());
        assert_eq!(r.worst(), None);
        r.note(Severity::Warning);
        r.note(Severity::Note);
        assert_eq!(r.worst(), Some(Severity::Warning));
        assert_eq!(std::mem::size_of::<Row>(), 32);
    }

    #[test]
    fn logged_findings_are_small_and_keep_what_filters_need() {
        assert_eq!(std::mem::size_of::<LoggedFinding>(), 24);
        let f = Finding {
            kind: FindingKind::Violation,
            rule: Some(Rule::WrongSender),
            frame: 9,
            ts: Timestamp(5),
            session: 4,
            direction: ServerToClient,
            seqno: Some(0),
            detail: Detail::Gap {
                highest: 3,
                missing: 2,
            },
        };
        let logged = LoggedFinding::new(&f, Loc::default());
        assert_eq!(logged.seqno(), Some(0));
        assert_eq!(logged.label().to_string(), f.label().to_string());
        let row = Row::new(9, Timestamp(5), Loc::default(), 4, ServerToClient, 20);
        let back = logged.to_finding(&row);
        assert_eq!(back.detail, Detail::None);
        assert_eq!(
            back,
            Finding {
                detail: Detail::None,
                ..f
            }
        );
    }
}
