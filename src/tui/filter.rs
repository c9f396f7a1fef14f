//! The display filter, as the packet list applies it: the report's expression
//! language ([`crate::report::Filter`]), evaluated on rows decoded from the store
//! by a worker thread ([`Worker`]), so that the UI never waits for a scan.

use super::model::{Endpoints, Entry, LoggedFinding, RECORD_HEADER, Row};
use super::store::Loc;
use super::store::StoreReader;
use crate::capture::Datagram;
use crate::engine::{Finding, PacketEvent, SessionId};
use crate::report::Filter;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

/// What a filter sees of one packet.
#[derive(Clone, Copy)]
pub struct PacketCtx<'a> {
    pub row: &'a Row,
    /// The payload as captured.
    pub payload: &'a [u8],
    /// Source and destination.
    pub addresses: (SocketAddr, SocketAddr),
    /// The protocol of the packet's session.
    pub protocol: &'static crate::engine::ProtocolInfo,
    /// What reads it (its session's reader).
    pub dissector: &'static dyn crate::proto::dissect::Dissector,
    /// The findings raised on the packet.
    pub findings: &'a [Finding],
}

/// A parsed display filter and its text.
#[derive(Debug, Clone)]
pub struct DisplayFilter {
    text: String,
    filter: Filter,
}

impl DisplayFilter {
    /// Parses an expression; the error says what is wrong and where, in one line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let filter = Filter::parse(text).map_err(|e| e.to_string())?;
        Ok(DisplayFilter {
            text: text.to_owned(),
            filter,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn matches(&self, ctx: &PacketCtx<'_>) -> bool {
        let (src, dst) = ctx.addresses;
        let datagram = Datagram {
            digest: None,
            probes: None,
            frame: ctx.row.frame,
            ts: ctx.row.ts,
            src,
            dst,
            payload: ctx.payload,
            payload_len: usize::from(ctx.row.len),
            frame_len: ctx.row.frame_len,
            frame_cap_len: ctx.row.frame_cap_len,
        };
        self.filter.matches(&PacketEvent {
            datagram: &datagram,
            protocol: ctx.protocol,
            session: ctx.row.session as usize,
            direction: ctx.row.direction(),
            findings: ctx.findings,
            acks: Default::default(),
            ack_samples: [&[], &[]],
            resends: 0,
            dissector: Some(ctx.dissector),
        })
    }
}

/// A block of the packet list to filter, with what the filter needs to see of
/// it: copies of its index entries and of its findings, so that the worker
/// shares nothing with the UI but the store, from which it reads the rows'
/// records (in one read per block).
pub struct Job {
    /// Which filter this is for: a job of an older generation is dropped.
    pub generation: u64,
    /// Index of the first row.
    pub start: usize,
    pub rows: Vec<Entry>,
    /// The rows' findings with their row indices and their rows in the
    /// findings log, sorted by row.
    pub findings: Vec<(usize, u32, LoggedFinding)>,
    /// Only this session's packets, if set.
    pub session: Option<SessionId>,
    pub filter: Option<Arc<DisplayFilter>>,
    /// Every session's two ends, by id.
    pub endpoints: Arc<Vec<Option<Endpoints>>>,
}

/// The rows of a job that the filter matches.
#[derive(Debug)]
pub struct Done {
    pub generation: u64,
    /// The job's rows: `start..end`.
    pub start: usize,
    pub end: usize,
    pub matches: Vec<u32>,
    /// The rows of the findings log that matched (see [`finding_matches`]).
    pub findings: Vec<u32>,
}

/// Rows of the findings log, as a bit set (the log is bounded, so is this).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogSet(Vec<u64>);

impl LogSet {
    pub fn insert(&mut self, i: u32) {
        let w = (i / 64) as usize;
        if self.0.len() <= w {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << (i % 64);
    }

    pub fn contains(&self, i: u32) -> bool {
        self.0
            .get((i / 64) as usize)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

/// A thread that filters blocks of rows, decoding their payloads from the
/// store, and streams the matches back. The UI sends it a few blocks at a time
/// and bumps the generation to cancel what it is doing (a new filter).
pub struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<Done>,
    generation: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    pub fn spawn(store: StoreReader) -> std::io::Result<Self> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done) = mpsc::channel();
        let generation = Arc::new(AtomicU64::new(0));
        let current = Arc::clone(&generation);
        let thread = std::thread::Builder::new()
            .name("lwarscope-filter".into())
            .spawn(move || {
                let mut records = Vec::new();
                let mut findings = Vec::new();
                for job in job_rx {
                    if let Some(d) = run(&job, &store, &current, &mut records, &mut findings)
                        && done_tx.send(d).is_err()
                    {
                        return;
                    }
                }
            })?;
        Ok(Worker {
            jobs: Some(jobs),
            done,
            generation,
            thread: Some(thread),
        })
    }

    /// Cancels every job sent so far; returns the new generation.
    pub fn cancel(&self) -> u64 {
        self.generation.fetch_add(1, Ordering::SeqCst) + 1
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Queues a job; false if the worker is gone.
    pub fn send(&self, job: Job) -> bool {
        self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok())
    }

    /// A finished job, if one is ready.
    pub fn try_done(&self) -> Option<Done> {
        self.done.try_recv().ok()
    }

    /// A finished job, waiting up to `timeout` for one.
    pub fn done_within(&self, timeout: Duration) -> Option<Done> {
        self.done.recv_timeout(timeout).ok()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.cancel();
        self.jobs = None; // Ends the thread's loop.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Filters one job; `None` once it has been cancelled.
fn run(
    job: &Job,
    store: &StoreReader,
    current: &AtomicU64,
    records: &mut Vec<u8>,
    fs: &mut Vec<Finding>,
) -> Option<Done> {
    let unknown = (SocketAddr::from(([0; 4], 0)), SocketAddr::from(([0; 4], 0)));
    // The block's records lie one after the other (with the texts of findings
    // between them): read them all at once.
    let base = job.rows.first().map_or(0, |e| e.record);
    let span = job.rows.last().map_or(0, |e| e.record - base) as usize;
    let read = store.read_span(base, span + RECORD_HEADER + Loc::MAX_LEN, records);
    let mut matches = Vec::new();
    let mut found = Vec::new();
    let mut findings = job.findings.as_slice();
    for (k, entry) in job.rows.iter().enumerate() {
        if k.is_multiple_of(512) && current.load(Ordering::Relaxed) != job.generation {
            return None;
        }
        let i = job.start + k;
        let skip = findings.partition_point(|(r, ..)| *r < i);
        findings = &findings[skip..];
        let n = findings.partition_point(|(r, ..)| *r == i);
        let (own, _) = findings.split_at(n);
        let Some((row, payload)) = read
            .is_ok()
            .then(|| record_at(records, (entry.record - base) as usize, *entry))
            .flatten()
        else {
            continue;
        };
        if job.session.is_some_and(|s| row.session as usize != s) {
            continue;
        }
        let Some(filter) = &job.filter else {
            matches.push(i as u32);
            found.extend(own.iter().map(|&(_, log, _)| log));
            continue;
        };
        let endpoints = job.endpoints.get(row.session as usize).copied().flatten();
        let protocol = endpoints.map_or_else(|| crate::proto::protocol_of(payload), |e| e.protocol);
        let ctx = PacketCtx {
            row: &row,
            payload,
            addresses: endpoints.map_or(unknown, |e| e.of(row.direction())),
            protocol,
            dissector: endpoints.map_or(protocol.dissector, |e| e.dissector(row.direction())),
            findings: &[],
        };
        let own = own.iter().map(|(_, log, f)| (*log, f));
        if finding_matches(filter, &ctx, own, fs, &mut found) {
            matches.push(i as u32);
        }
    }
    (current.load(Ordering::SeqCst) == job.generation).then(|| Done {
        generation: job.generation,
        start: job.start,
        end: job.start + job.rows.len(),
        matches,
        findings: found,
    })
}

/// Whether `filter` keeps the packet of `ctx` (with all of `own`, its
/// findings, as the report sees it), and which of its findings it keeps,
/// pushed to `found` by their log rows: a finding is kept when the filter
/// matches its packet with that finding alone, so that `severity == error`
/// keeps a packet's errors and not the notes beside them, and a filter on
/// the packet alone (`Chat`) keeps every finding of the packets it keeps.
pub fn finding_matches<'a>(
    filter: &DisplayFilter,
    ctx: &PacketCtx<'_>,
    own: impl Iterator<Item = (u32, &'a LoggedFinding)> + Clone,
    fs: &mut Vec<Finding>,
    found: &mut Vec<u32>,
) -> bool {
    let (frame, ts) = (ctx.row.frame, ctx.row.ts);
    for (log, f) in own.clone() {
        fs.clear();
        fs.push(f.to_finding(frame, ts));
        if filter.matches(&PacketCtx {
            findings: fs.as_slice(),
            ..*ctx
        }) && found.last() != Some(&log)
        {
            found.push(log);
        }
    }
    fs.clear();
    fs.extend(own.map(|(_, f)| f.to_finding(frame, ts)));
    filter.matches(&PacketCtx {
        findings: fs.as_slice(),
        ..*ctx
    })
}

/// The row and payload of the record at `at` in `bytes`, if it is all there.
fn record_at(bytes: &[u8], at: usize, entry: Entry) -> Option<(Row, &[u8])> {
    let header = bytes.get(at..at.checked_add(RECORD_HEADER)?)?;
    let row = Row::from_header(entry, header.try_into().ok()?);
    let start = at + RECORD_HEADER;
    let payload = bytes.get(start..start + usize::from(row.kept))?;
    Some((row, payload))
}
