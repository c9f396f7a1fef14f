//! What the data thread sends the UI: compact packet rows, findings, session
//! snapshots and capture status. Nothing here borrows capture buffers.

use super::store::Loc;
use crate::capture::Timestamp;
use crate::engine::{Detail, Direction, Finding, FindingKind, Rule, SessionId, Severity};
use std::net::SocketAddr;

/// One packet of the list, as read back from the index and the store: where
/// its record lies and what the list needs to show, sort and colour it. Only
/// the frame, the record's place and the worst severity stay in memory (see
/// [`RowIndex`]); the rest is the record's header, stored before the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub frame: u64,
    pub ts: Timestamp,
    /// Where the packet's record (header, then payload) lies in the store.
    pub record: u64,
    pub session: u32,
    /// The UDP payload length as sent (more than `kept` when cut short).
    pub len: u16,
    /// Payload bytes kept in the store.
    pub kept: u16,
    /// The frame's length on the wire and captured (`frame.len`,
    /// `frame.cap_len`): [`Datagram`](crate::capture::Datagram)'s.
    pub frame_len: u32,
    pub frame_cap_len: u32,
    flags: u8,
    /// Worst severity of the packet's findings: 0 none, 1 note, 2 warning, 3 error.
    worst: u8,
}

const S2C: u8 = 1;
const CUT: u8 = 2;

/// Bytes of a record's header in the store: time (8), session (4), UDP length
/// (2), bytes kept (2), flags (1), the frame's length on the wire (4) and
/// captured (4). The payload follows.
pub const RECORD_HEADER: usize = 25;

/// A severity as a small number, 0 meaning none.
pub const fn severity_rank(s: Severity) -> u8 {
    match s {
        Severity::Note => 1,
        Severity::Warning => 2,
        Severity::Error => 3,
    }
}

impl Row {
    /// A row for a packet whose record starts at `record` in the store, of
    /// which `kept` payload bytes out of `payload_len` were captured. Its
    /// frame's lengths are zero until set.
    pub fn new(
        frame: u64,
        ts: Timestamp,
        record: u64,
        session: SessionId,
        direction: Direction,
        (kept, payload_len): (usize, usize),
    ) -> Self {
        let kept = kept.min(Loc::MAX_LEN);
        let cut_by_capture = payload_len > kept;
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
            record,
            session: u32::try_from(session).unwrap_or(u32::MAX),
            len: u16::try_from(payload_len).unwrap_or(u16::MAX),
            kept: kept as u16,
            frame_len: 0,
            frame_cap_len: 0,
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

    /// Where the payload lies in the store: right after the record's header.
    pub fn payload(&self) -> Loc {
        Loc::new(self.record + RECORD_HEADER as u64, usize::from(self.kept))
    }

    /// The record's header, as the store keeps it (little-endian).
    pub fn header(&self) -> [u8; RECORD_HEADER] {
        let mut h = [0; RECORD_HEADER];
        h[..8].copy_from_slice(&self.ts.0.to_le_bytes());
        h[8..12].copy_from_slice(&self.session.to_le_bytes());
        h[12..14].copy_from_slice(&self.len.to_le_bytes());
        h[14..16].copy_from_slice(&self.kept.to_le_bytes());
        h[16] = self.flags;
        h[17..21].copy_from_slice(&self.frame_len.to_le_bytes());
        h[21..25].copy_from_slice(&self.frame_cap_len.to_le_bytes());
        h
    }

    /// The row of index entry `e`, its record's header being `h`.
    pub fn from_header(e: Entry, h: &[u8; RECORD_HEADER]) -> Self {
        let bytes = |range: std::ops::Range<usize>| {
            let mut b = [0; 8];
            b[..range.len()].copy_from_slice(&h[range]);
            u64::from_le_bytes(b)
        };
        Row {
            frame: e.frame,
            ts: Timestamp(bytes(0..8)),
            record: e.record,
            session: bytes(8..12) as u32,
            len: bytes(12..14) as u16,
            kept: bytes(14..16) as u16,
            frame_len: bytes(17..21) as u32,
            frame_cap_len: bytes(21..25) as u32,
            flags: h[16] & (S2C | CUT),
            worst: e.worst,
        }
    }

    /// What the index keeps of the row.
    pub const fn entry(&self) -> Entry {
        Entry {
            frame: self.frame,
            record: self.record,
            worst: self.worst,
        }
    }
}

/// A finding as the UI's log keeps it: 24 bytes, where a [`Finding`] takes 88.
/// Its detail is rendered to text once, by the data thread, and kept in the
/// payload store; `detail` says where. Ten million findings fit in 240 MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedFinding {
    /// The text of the finding's [`crate::engine::Detail`] in the store.
    pub detail: Loc,
    /// The index row of the packet that raised it (for `lost`, of the gap).
    pub row: u32,
    pub session: u32,
    seqno: u32,
    /// The kind and rule by their index in the registry (`u8::MAX`: no rule),
    /// so that a logged finding stays 24 bytes.
    kind: u8,
    rule: u8,
    pub direction: Direction,
    has_seqno: bool,
}

impl LoggedFinding {
    /// The finding's kind.
    pub fn kind(&self) -> FindingKind {
        crate::proto::all_kinds()
            .nth(usize::from(self.kind))
            .unwrap_or(FindingKind::VIOLATION)
    }

    /// The violation's rule, for violations.
    pub fn rule(&self) -> Option<Rule> {
        crate::proto::all_rules().nth(usize::from(self.rule))
    }

    /// Keeps `f`, its detail's text being at `detail`; `row` is set by the UI.
    pub fn new(f: &Finding, detail: Loc) -> Self {
        LoggedFinding {
            detail,
            row: 0,
            session: u32::try_from(f.session).unwrap_or(u32::MAX),
            seqno: f.seqno.unwrap_or(0),
            kind: crate::proto::all_kinds()
                .position(|k| k == f.kind)
                .map_or(u8::MAX, |i| i as u8),
            rule: f
                .rule
                .and_then(|r| crate::proto::all_rules().position(|x| x == r))
                .map_or(u8::MAX, |i| i as u8),
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

    pub fn severity(&self) -> Severity {
        self.kind().severity()
    }

    /// The findings pane's group: its kind and rule ([`Group::key`]).
    pub const fn group_key(&self) -> (u8, u8) {
        (self.kind, self.rule)
    }

    /// `violation/wrong-sender` for violations, the kind's name otherwise.
    pub fn label(&self) -> impl std::fmt::Display + '_ {
        std::fmt::from_fn(move |f| match self.rule() {
            Some(rule) => write!(f, "{}/{}", self.kind(), rule),
            None => write!(f, "{}", self.kind()),
        })
    }

    /// The finding again, for the display filter, with the packet's frame and
    /// time; the detail, which filters do not look at, is left out.
    pub fn to_finding(&self, frame: u64, ts: Timestamp) -> Finding {
        Finding {
            kind: self.kind(),
            rule: self.rule(),
            frame,
            ts,
            session: self.session as SessionId,
            direction: self.direction,
            seqno: self.seqno(),
            detail: Detail::None,
        }
    }
}

/// Rows the findings log keeps at most. Past it, a finding that does not
/// continue a kept run is only counted, by kind. A row takes 56 bytes and its
/// places in the by-packet index 24, so the log stays under 6 MB however many
/// findings the capture (or the network) raises.
pub const LOG_ROWS: usize = 1 << 16;

/// One row of the findings log: a run of findings of the same kind and rule,
/// in the same session and direction, with nothing else raised in that
/// session and direction between them. The run's first and newest findings
/// are kept; the ones between are only counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogRow {
    pub first: LoggedFinding,
    pub newest: LoggedFinding,
    /// Findings in the run, the first and the newest included.
    pub count: u64,
}

impl LogRow {
    /// The run's first finding, and its newest when that is another one.
    pub fn kept(&self) -> impl Iterator<Item = &LoggedFinding> {
        std::iter::once(&self.first).chain((self.count > 1).then_some(&self.newest))
    }
}

/// One kind of finding (a violation's rule counting as a kind of its own) as
/// the findings pane groups them: the log rows (incidents) of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    kind: u8,
    rule: u8,
    severity: Severity,
    /// The log row of its first incident (in time).
    pub first: u32,
    /// Incidents (log rows) of the kind.
    pub incidents: u32,
    /// Findings in them (each run's count).
    pub findings: u64,
}

impl Group {
    /// The group's kind, as its incidents carry it
    /// ([`LoggedFinding::group_key`]).
    pub const fn key(&self) -> (u8, u8) {
        (self.kind, self.rule)
    }
}

/// The UI's log of findings, bounded the way the engine bounds sessions.
///
/// A finding continues the run of the latest row of its session and direction
/// when it has that row's kind and rule; otherwise it starts a row. Once
/// [`LOG_ROWS`] rows are kept, a finding that starts no run is counted in
/// `overflow` by kind, and breaks its session and direction's run. Every
/// finding fed is thus in exactly one count: a row's, or the overflow's.
///
/// The packet list, the detail tree and the display filter see the findings
/// the log keeps (each run's first and newest); every packet keeps the worst
/// severity of all its findings in the row index.
#[derive(Debug)]
pub struct FindingLog {
    rows: Vec<LogRow>,
    cap: usize,
    /// Per session and direction, the row of its latest run.
    open: std::collections::HashMap<(u32, u8), u32>,
    /// Findings counted but not kept, by kind (their index in the registry).
    overflow: Vec<u64>,
    /// `(packet row, log row, the newest)` for each kept finding, sorted by
    /// packet row once [`FindingLog::index`] has run.
    by_row: Vec<(u32, u32, bool)>,
    /// Every finding fed, kept or not, by kind (their index in the registry):
    /// the always-visible strip counts these.
    by_kind: Vec<u64>,
    /// The kinds of the log's rows, worst first (then the kind whose first
    /// incident came first). Built by [`FindingLog::index`].
    groups: Vec<Group>,
    indexed: bool,
    /// Bumped by every change: what is drawn from the log is rebuilt when it moves.
    version: u64,
    total: u64,
}

impl Default for FindingLog {
    fn default() -> Self {
        Self::with_cap(LOG_ROWS)
    }
}

impl FindingLog {
    /// A log keeping at most `cap` rows.
    pub fn with_cap(cap: usize) -> Self {
        FindingLog {
            rows: Vec::new(),
            cap,
            open: std::collections::HashMap::new(),
            overflow: Vec::new(),
            by_row: Vec::new(),
            by_kind: Vec::new(),
            groups: Vec::new(),
            indexed: true,
            version: 0,
            total: 0,
        }
    }

    /// Changes with every finding taken in.
    pub const fn version(&self) -> u64 {
        self.version
    }

    /// The kinds, worst first, as [`FindingLog::index`] last grouped them.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// Every log row in time order (of its first finding's packet), as of
    /// the last [`FindingLog::index`].
    pub fn by_time(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_row
            .iter()
            .filter(|&&(_, _, newest)| !newest)
            .map(|&(_, i, _)| i)
    }

    /// Every finding fed, kept or not, by kind, in the registry's order.
    pub fn counts(&self) -> impl Iterator<Item = (FindingKind, u64)> + '_ {
        crate::proto::all_kinds()
            .zip(self.by_kind.iter().copied())
            .filter(|&(_, n)| n > 0)
    }

    /// Every finding fed of severity `s`, kept or not.
    pub fn count_of(&self, s: Severity) -> u64 {
        self.counts()
            .filter(|(k, _)| k.severity() == s)
            .map(|(_, n)| n)
            .sum()
    }

    /// Rows kept.
    pub const fn len(&self) -> usize {
        self.rows.len()
    }

    pub const fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn rows(&self) -> &[LogRow] {
        &self.rows
    }

    pub fn get(&self, i: usize) -> Option<&LogRow> {
        self.rows.get(i)
    }

    /// Findings fed, kept or not.
    pub const fn total(&self) -> u64 {
        self.total
    }

    /// Findings counted past the cap, by kind, in the registry's order.
    pub fn overflow(&self) -> impl Iterator<Item = (FindingKind, u64)> + '_ {
        crate::proto::all_kinds()
            .zip(self.overflow.iter().copied())
            .filter(|&(_, n)| n > 0)
    }

    /// Findings counted past the cap.
    pub fn overflow_total(&self) -> u64 {
        self.overflow.iter().sum()
    }

    /// Takes in a finding, its `row` set.
    pub fn push(&mut self, f: LoggedFinding) {
        self.total += 1;
        self.version += 1;
        let k = usize::from(f.kind);
        if self.by_kind.len() <= k {
            self.by_kind.resize(k + 1, 0);
        }
        self.by_kind[k] += 1;
        let key = (f.session, f.direction.index() as u8);
        if let Some(&i) = self.open.get(&key)
            && let Some(run) = self.rows.get_mut(i as usize)
            && (run.first.kind, run.first.rule) == (f.kind, f.rule)
        {
            run.newest = f;
            run.count += 1;
            self.indexed = false;
            return;
        }
        if self.rows.len() < self.cap {
            let i = self.rows.len() as u32;
            self.rows.push(LogRow {
                first: f,
                newest: f,
                count: 1,
            });
            self.open.insert(key, i);
            self.indexed = false;
        } else {
            self.open.remove(&key);
            let k = usize::from(f.kind);
            if self.overflow.len() <= k {
                self.overflow.resize(k + 1, 0);
            }
            self.overflow[k] += 1;
        }
    }

    /// Brings the by-packet index up to date (between two screens).
    pub fn index(&mut self) {
        if self.indexed {
            return;
        }
        self.by_row.clear();
        for (i, r) in self.rows.iter().enumerate() {
            self.by_row.push((r.first.row, i as u32, false));
            if r.count > 1 {
                self.by_row.push((r.newest.row, i as u32, true));
            }
        }
        self.by_row.sort_unstable();
        self.group();
        self.indexed = true;
    }

    /// Groups the rows by kind, worst kind first ([`Group`]).
    fn group(&mut self) {
        self.groups.clear();
        let mut places = rustc_hash::FxHashMap::<(u8, u8), usize>::default();
        // In time order, so that each kind's first incident comes first.
        for (_, i, newest) in self.by_row.iter().copied() {
            let Some(run) = self.rows.get(i as usize).filter(|_| !newest) else {
                continue;
            };
            let key = run.first.group_key();
            match places.get(&key).and_then(|&g| self.groups.get_mut(g)) {
                Some(g) => {
                    g.incidents += 1;
                    g.findings += run.count;
                }
                None => {
                    places.insert(key, self.groups.len());
                    self.groups.push(Group {
                        kind: key.0,
                        rule: key.1,
                        severity: run.first.severity(),
                        first: i,
                        incidents: 1,
                        findings: run.count,
                    });
                }
            }
        }
        // Worst first; among equals, the kind that began first (stable).
        self.groups.sort_by_key(|g| std::cmp::Reverse(g.severity));
    }

    /// The kept findings raised on packets of index rows `range`, by row.
    pub fn in_rows(
        &self,
        range: std::ops::Range<u32>,
    ) -> impl Iterator<Item = (u32, &LoggedFinding)> {
        self.in_rows_logged(range).map(|(r, _, f)| (r, f))
    }

    /// As [`FindingLog::in_rows`], with each finding's row in the log.
    pub fn in_rows_logged(
        &self,
        range: std::ops::Range<u32>,
    ) -> impl Iterator<Item = (u32, u32, &LoggedFinding)> {
        let start = self.by_row.partition_point(|&(r, ..)| r < range.start);
        self.by_row[start..]
            .iter()
            .take_while(move |&&(r, ..)| r < range.end)
            .filter_map(|&(r, i, newest)| {
                let run = self.rows.get(i as usize)?;
                let f = if newest { &run.newest } else { &run.first };
                (f.row == r).then_some((r, i, f))
            })
    }

    /// Bytes the log holds, by its vectors' and map's capacities.
    #[cfg(test)]
    fn held_bytes(&self) -> usize {
        self.rows.capacity() * size_of::<LogRow>()
            + self.by_row.capacity() * size_of::<(u32, u32, bool)>()
            + self.open.capacity() * (size_of::<((u32, u8), u32)>() + 1)
            + self.overflow.capacity() * size_of::<u64>()
            + self.groups.capacity() * size_of::<Group>()
            + self.by_kind.capacity() * size_of::<u64>()
    }
}

/// What the index keeps of one row: its frame, where its record lies in the
/// store, and its worst severity (as [`severity_rank`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub frame: u64,
    pub record: u64,
    worst: u8,
}

/// Rows per chunk of the index, at most.
const ROWS_PER_CHUNK: usize = 4096;

/// The packet index: for each row, its frame, where its record lies and its
/// worst severity, in 7 bytes.
///
/// Rows come in chunks of up to `ROWS_PER_CHUNK`. A chunk keeps its first
/// frame and record offset in full and, per row, the differences from them in
/// a `u16` and a `u32`, and the severity in a byte. A row whose differences do
/// not fit (a long run of frames that are not lwar, or a chunk spanning more
/// than 4 GiB of store) starts a new chunk. Rows are found by number through
/// the chunks' first rows and by frame by binary search, both in memory; the
/// rest of a row is read from its record when shown.
///
/// A sparse index (one offset every N rows, records read in sequence) would
/// save a few more bytes per row, but then every lookup by row or by frame,
/// including the one placing each finding, would read the store; at 7 bytes a
/// row, ten million packets take 70 MB.
#[derive(Debug, Default)]
pub struct RowIndex {
    chunks: Vec<IndexChunk>,
    len: usize,
}

#[derive(Debug)]
struct IndexChunk {
    /// Row number of the first row.
    first_row: usize,
    frame: u64,
    record: u64,
    /// Per row: its frame minus `frame`.
    frames: Vec<u16>,
    /// Per row: its record's offset minus `record`.
    records: Vec<u32>,
    worst: Vec<u8>,
}

impl IndexChunk {
    fn new(first_row: usize, e: Entry) -> Self {
        let mut c = IndexChunk {
            first_row,
            frame: e.frame,
            record: e.record,
            frames: Vec::with_capacity(ROWS_PER_CHUNK),
            records: Vec::with_capacity(ROWS_PER_CHUNK),
            worst: Vec::with_capacity(ROWS_PER_CHUNK),
        };
        c.try_push(e);
        c
    }

    /// Appends `e` if it fits in this chunk.
    fn try_push(&mut self, e: Entry) -> bool {
        if self.frames.len() >= ROWS_PER_CHUNK {
            return false;
        }
        let frame = e.frame.checked_sub(self.frame).map(u16::try_from);
        let record = e.record.checked_sub(self.record).map(u32::try_from);
        let (Some(Ok(frame)), Some(Ok(record))) = (frame, record) else {
            return false;
        };
        self.frames.push(frame);
        self.records.push(record);
        self.worst.push(e.worst);
        true
    }

    fn get(&self, k: usize) -> Option<Entry> {
        Some(Entry {
            frame: self.frame + u64::from(*self.frames.get(k)?),
            record: self.record + u64::from(*self.records.get(k)?),
            worst: *self.worst.get(k)?,
        })
    }

    fn last_frame(&self) -> u64 {
        self.frame + u64::from(self.frames.last().copied().unwrap_or(0))
    }

    /// Gives back the room a chunk ended early does not use.
    fn seal(&mut self) {
        self.frames.shrink_to_fit();
        self.records.shrink_to_fit();
        self.worst.shrink_to_fit();
    }
}

impl RowIndex {
    pub const fn len(&self) -> usize {
        self.len
    }

    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a row.
    pub fn push(&mut self, e: Entry) {
        if !self.chunks.last_mut().is_some_and(|c| c.try_push(e)) {
            if let Some(c) = self.chunks.last_mut() {
                c.seal();
            }
            self.chunks.push(IndexChunk::new(self.len, e));
        }
        self.len += 1;
    }

    /// Which chunk holds row `i` (which must be less than the length).
    fn chunk_of(&self, i: usize) -> usize {
        self.chunks.partition_point(|c| c.first_row <= i) - 1
    }

    pub fn get(&self, i: usize) -> Option<Entry> {
        if i >= self.len {
            return None;
        }
        let c = &self.chunks[self.chunk_of(i)];
        c.get(i - c.first_row)
    }

    /// Raises row `i`'s worst severity to `s` if it is worse.
    pub fn note(&mut self, i: usize, s: Severity) {
        if i >= self.len {
            return;
        }
        let k = self.chunk_of(i);
        let c = &mut self.chunks[k];
        if let Some(w) = c.worst.get_mut(i - c.first_row) {
            *w = (*w).max(severity_rank(s));
        }
    }

    /// The first row whose frame is `frame` or later, frames being in
    /// increasing order; the length if there is none.
    pub fn first_from_frame(&self, frame: u64) -> usize {
        let k = self.chunks.partition_point(|c| c.last_frame() < frame);
        match self.chunks.get(k) {
            Some(c) => {
                let delta = frame.saturating_sub(c.frame);
                c.first_row + c.frames.partition_point(|&f| u64::from(f) < delta)
            }
            None => self.len,
        }
    }

    /// The row of `frame`, if there is one.
    pub fn find_frame(&self, frame: u64) -> Option<usize> {
        let i = self.first_from_frame(frame);
        (self.get(i)?.frame == frame).then_some(i)
    }

    /// The entries of rows `range`, in order (the range is cut to the length).
    pub fn range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = Entry> + '_ {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        let first = if start < end {
            self.chunk_of(start)
        } else {
            self.chunks.len()
        };
        self.chunks[first..]
            .iter()
            .flat_map(move |c| {
                let skip = start.saturating_sub(c.first_row);
                (skip..c.frames.len()).filter_map(|k| c.get(k))
            })
            .take(end - start)
    }
}

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
    /// The lifecycle state's name.
    pub state: &'static str,
    /// The client's player (id and latest name), once the capture tells it.
    pub player: Option<(String, String)>,
    pub packets: [u64; 2],
    pub bytes: [u64; 2],
    pub resends: [u64; 2],
    pub reorders: u64,
    pub malformed: u64,
    /// Packets lost before the capture point, estimated, per direction, as a
    /// fraction.
    pub loss: [Option<f64>; 2],
    /// Median ack delay of each direction's reliable messages, in milliseconds.
    pub ack_delay_ms: [Option<f64>; 2],
    pub last_ts: Timestamp,
    pub activity: Activity,
}

/// A session's two ends, sent with the first batch that has its packets, so
/// that rows can always name their source and destination.
#[derive(Debug, Clone, Copy)]
pub struct Endpoints {
    pub id: SessionId,
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// The protocol the engine took the session's flow for.
    pub protocol: &'static crate::engine::ProtocolInfo,
    /// What reads the session's packets, per direction (client to server,
    /// server to client): the protocol's dissector, or the session's own
    /// where it reads them otherwise (Battlegrounds' byte order, settled from
    /// the session's bytes; a protobuf description whose sides send two
    /// messages, each direction's).
    pub dissectors: [&'static dyn crate::proto::dissect::Dissector; 2],
}

impl Endpoints {
    /// What reads the session's packets going `dir`.
    pub fn dissector(&self, dir: Direction) -> &'static dyn crate::proto::dissect::Dissector {
        self.dissectors[dir.index()]
    }

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
    fn chunked_lists_grow_in_chunks() {
        let mut list = Chunked::default();
        let n = 3 * CHUNK + 5;
        (0..n as u64).for_each(|i| list.push(2 * i));
        assert_eq!((list.len(), list.chunks.len()), (n, 4));
        assert_eq!(list[CHUNK + 1], 2 * (CHUNK as u64 + 1));
        assert_eq!(
            list.partition_point(|&v| v < 2 * CHUNK as u64 + 1),
            CHUNK + 1
        );
        assert_eq!(list.iter().count(), n);
        let got = |r: std::ops::Range<usize>| list.range(r).copied().collect::<Vec<_>>();
        assert_eq!(got(n - 1..n + 5), [2 * (n as u64 - 1)]);
        assert!(got(n + 3..n + 5).is_empty());
        assert!(list.get(n).is_none());
    }

    fn entry(frame: u64, record: u64) -> Entry {
        Entry {
            frame,
            record,
            worst: 0,
        }
    }

    #[test]
    fn the_index_keeps_full_chunks_of_deltas_and_searches_by_frame() {
        let mut idx = RowIndex::default();
        let n = 3 * ROWS_PER_CHUNK + 5;
        // Frames 2, 4, 6...; records 100 bytes apart, from a large offset.
        let at = |i: usize| entry(2 * i as u64 + 2, (1 << 40) + 100 * i as u64);
        (0..n).for_each(|i| idx.push(at(i)));
        assert_eq!((idx.len(), idx.chunks.len()), (n, 4));
        for i in [0, 1, ROWS_PER_CHUNK - 1, ROWS_PER_CHUNK, n - 1] {
            assert_eq!(idx.get(i), Some(at(i)), "{i}");
        }
        assert_eq!(idx.get(n), None);
        // Every frame, present or not, at and around chunk boundaries.
        let boundary = 2 * ROWS_PER_CHUNK as u64;
        for f in [
            0,
            1,
            2,
            3,
            boundary,
            boundary + 1,
            boundary + 2,
            2 * n as u64 + 2,
        ] {
            let expected = (f.saturating_sub(2) as usize).div_ceil(2).min(n);
            assert_eq!(idx.first_from_frame(f), expected, "{f}");
            let found = (f >= 2 && f % 2 == 0 && expected < n).then_some(expected);
            assert_eq!(idx.find_frame(f), found, "{f}");
        }
        let frames = |r: std::ops::Range<usize>| idx.range(r).map(|e| e.frame).collect::<Vec<_>>();
        let k = ROWS_PER_CHUNK as u64;
        assert_eq!(
            frames(ROWS_PER_CHUNK - 1..ROWS_PER_CHUNK + 1),
            [2 * k, 2 * k + 2]
        );
        assert_eq!(frames(n - 1..n + 5), [2 * n as u64]);
        assert!(frames(n + 3..n + 5).is_empty());
        assert_eq!(idx.range(0..n).count(), n);
        assert!(idx.range(0..n).eq((0..n).map(at)));
    }

    #[test]
    fn a_delta_too_wide_for_its_field_starts_a_new_chunk() {
        let mut idx = RowIndex::default();
        let far_frame = u64::from(u16::MAX) + 1;
        let far_record = u64::from(u32::MAX) + 1;
        let rows = [
            entry(10, 0),
            entry(10 + u64::from(u16::MAX), 50), // The widest frame delta: fits.
            entry(10 + far_frame, 60),           // One more: a new chunk.
            entry(10 + far_frame + 1, 60 + u64::from(u32::MAX)), // Fits.
            entry(10 + far_frame + 2, 60 + far_record), // A new chunk.
            entry(10 + far_frame + 3, 61 + far_record),
        ];
        rows.iter().for_each(|&e| idx.push(e));
        assert_eq!(idx.chunks.len(), 3);
        assert_eq!(
            idx.chunks.iter().map(|c| c.first_row).collect::<Vec<_>>(),
            [0, 2, 4]
        );
        // A chunk ended early gives its room back.
        assert_eq!(idx.chunks[0].frames.capacity(), 2);
        assert!(idx.range(0..9).eq(rows));
        for (i, e) in rows.iter().enumerate() {
            assert_eq!(idx.get(i), Some(*e));
            assert_eq!(idx.find_frame(e.frame), Some(i));
        }
        assert_eq!(idx.find_frame(11), None);
        assert_eq!(idx.first_from_frame(11), 1);
        // A frame going back (another file) starts a chunk too, and is kept.
        idx.push(entry(1, 70 + far_record));
        assert_eq!((idx.chunks.len(), idx.get(6).unwrap().frame), (4, 1));
    }

    #[test]
    fn rows_keep_direction_and_worst_severity_through_the_index_and_store() {
        let mut r = Row::new(7, Timestamp(1), 40, 3, ServerToClient, (12, 20));
        (r.frame_len, r.frame_cap_len) = (62, 54);
        assert_eq!(r.direction(), ServerToClient);
        assert!(r.cut_by_capture());
        assert_eq!(r.worst(), None);
        r.note(Severity::Warning);
        r.note(Severity::Note);
        assert_eq!(r.worst(), Some(Severity::Warning));
        assert_eq!(r.payload(), Loc::new(40 + RECORD_HEADER as u64, 12));
        let mut idx = RowIndex::default();
        idx.push(r.entry());
        let e = idx.get(0).unwrap();
        let back = Row::from_header(e, &r.header());
        assert_eq!(back, r);
        idx.note(0, Severity::Error);
        idx.note(1, Severity::Error); // Past the end: nothing.
        let back = Row::from_header(idx.get(0).unwrap(), &r.header());
        assert_eq!(back.worst(), Some(Severity::Error));
        let whole = Row::new(8, Timestamp(2), 0, 0, ClientToServer, (20, 20));
        assert_eq!(whole.direction(), ClientToServer);
        assert!(!whole.cut_by_capture());
        // What stays in memory per row: a frame delta, a record delta, a severity.
        let per_row = size_of::<u16>() + size_of::<u32>() + size_of::<u8>();
        assert_eq!(per_row, 7);
    }

    #[test]
    fn logged_findings_are_small_and_keep_what_filters_need() {
        assert_eq!(std::mem::size_of::<LoggedFinding>(), 24);
        let f = Finding {
            kind: FindingKind::VIOLATION,
            rule: Some(crate::proto::lwar::findings::rules::WRONG_SENDER),
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
        let back = logged.to_finding(9, Timestamp(5));
        assert_eq!(back.detail, Detail::None);
        assert_eq!(
            back,
            Finding {
                detail: Detail::None,
                ..f
            }
        );
    }

    /// A finding of kind `kind` (by registry index) raised on packet row `row`.
    fn logged(kind: u8, session: u32, direction: Direction, row: u32) -> LoggedFinding {
        LoggedFinding {
            detail: Loc::default(),
            row,
            session,
            seqno: row,
            kind,
            rule: u8::MAX,
            direction,
            has_seqno: true,
        }
    }

    #[test]
    fn a_run_of_the_same_finding_is_one_row_with_its_first_and_newest() {
        let mut log = FindingLog::default();
        (0..1000).for_each(|r| log.push(logged(1, 7, ServerToClient, r)));
        assert_eq!(log.len(), 1);
        let run = log.get(0).unwrap();
        assert_eq!((run.count, run.first.row, run.newest.row), (1000, 0, 999));
        // Another direction, then another kind in the same direction: new runs;
        // the first run, broken, does not take the finding after them.
        log.push(logged(1, 7, ClientToServer, 1000));
        log.push(logged(2, 7, ServerToClient, 1001));
        log.push(logged(1, 7, ServerToClient, 1002));
        let counts: Vec<_> = log.rows().iter().map(|r| r.count).collect();
        assert_eq!(counts, [1000, 1, 1, 1]);
        log.index();
        // Each packet sees the kept findings it raised: the run's ends only.
        let seen = |r: u32| {
            log.in_rows(r..r + 1)
                .map(|(_, f)| f.row)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            (seen(0), seen(500), seen(999)),
            (vec![0], vec![], vec![999])
        );
        assert_eq!(log.in_rows(0..2000).count(), 5);
        assert_eq!((log.total(), log.overflow_total()), (1003, 0));
    }

    #[test]
    fn the_finding_log_stays_at_its_cap_and_counts_every_finding() {
        // A million findings of six kinds over 5 000 sessions, both ways, in
        // short runs broken by other kinds: far more runs than the cap.
        let mut log = FindingLog::default();
        let mut fed = [0u64; 6];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut last = None;
        let n = 1_000_000u32;
        for row in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let kind = (x % 6) as u8;
            let session = ((x >> 8) % 5000) as u32;
            let dir = if x >> 40 & 1 == 0 {
                ClientToServer
            } else {
                ServerToClient
            };
            fed[usize::from(kind)] += 1;
            log.push(logged(kind, session, dir, row));
            if row == n / 2 {
                last = Some(logged(kind, session, dir, row));
            }
            if row % 4096 == 0 {
                log.index();
            }
        }
        log.index();
        assert_eq!(log.len(), LOG_ROWS);
        assert_eq!(log.total(), u64::from(n));
        // Rows' counts and the overflow, by kind, add up to what was fed.
        let mut counted = [0u64; 6];
        for run in log.rows() {
            assert_eq!(run.first.kind, run.newest.kind);
            assert_eq!(
                (run.first.session, run.first.direction),
                (run.newest.session, run.newest.direction)
            );
            assert!(run.first.row <= run.newest.row);
            assert_eq!(run.count > 1, run.first.row < run.newest.row);
            counted[usize::from(run.first.kind)] += run.count;
        }
        let kinds: Vec<FindingKind> = crate::proto::all_kinds().take(6).collect();
        for (kind, n) in log.overflow() {
            counted[kinds.iter().position(|&k| k == kind).unwrap()] += n;
        }
        assert_eq!(counted, fed);
        assert!(log.overflow_total() > 0);
        // Past the cap, a run that goes on still takes its newest finding.
        let last = last.unwrap();
        let mut log2 = FindingLog::with_cap(1);
        log2.push(last);
        log2.push(logged(last.kind, last.session + 1, last.direction, 1));
        log2.push(LoggedFinding { row: 2, ..last });
        assert_eq!(
            (log2.get(0).unwrap().count, log2.get(0).unwrap().newest.row),
            (2, 2)
        );
        assert_eq!(log2.overflow_total(), 1);
        // Memory: the log's vectors and map, by capacity, stay under 6 MB.
        assert!(log.rows.capacity() <= LOG_ROWS, "{}", log.rows.capacity());
        assert!(log.by_row.capacity() <= 2 * LOG_ROWS);
        assert!(log.open.len() <= LOG_ROWS);
        assert!(log.held_bytes() < 6 << 20, "{}", log.held_bytes());
    }
}
