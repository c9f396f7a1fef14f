//! The data side: a capture thread feeds the tracker and the packet index; a pump
//! thread hands what accumulated to the UI over a channel at a steady pace.
//!
//! The capture thread never waits for the screen: the channel is unbounded and the
//! pump sends at most every [`PUMP_INTERVAL`], in batches. The two threads share
//! the [`Collector`] behind a mutex that each holds only briefly (one datagram,
//! or one hand-over), so a quiet interface still gets its last packets shown.

use super::model::{Activity, CaptureCounters, Endpoints, LoggedFinding, Row, SessionSnap, Update};
use super::store::StoreWriter;
use crate::capture::{self, Datagram, OwnedDatagram};
use crate::engine::{
    Direction, Engine, Finding, FindingKind, Flow, Observer, PacketEvent, SessionId,
};
use crate::report::timeline::Timeline;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the pump hands a batch to the UI.
pub const PUMP_INTERVAL: Duration = Duration::from_millis(50);
/// Bytes of records the data thread buffers before writing them to the store.
const STORE_BUFFER: usize = 1 << 20;
/// How often session snapshots are taken (every this many pump rounds).
const SNAPSHOT_EVERY: u32 = 5;

/// A source of datagrams the data side reads from.
pub trait Feed {
    /// Reads the next frame and passes its lwar datagram, if it carries one, to
    /// `each`. `Ok(false)` at the end of the input (or once stopped).
    fn step(&mut self, each: &mut dyn FnMut(&Datagram<'_>)) -> Result<bool, String>;

    /// The capture counters so far, and for files how far the read has got.
    fn status(&mut self) -> (CaptureCounters, Option<f64>);
}

/// Everything the data side knows, between two hand-overs.
pub struct Collector {
    tracker: Engine,
    sink: Sink,
}

struct Sink {
    writer: StoreWriter,
    rows: Vec<Row>,
    /// Frames and findings; the details' texts go to the store.
    findings: Vec<(u64, LoggedFinding)>,
    activity: FxHashMap<SessionId, Activity>,
    /// Each session's reader as last sent (its address).
    readers: FxHashMap<SessionId, [&'static dyn crate::proto::dissect::Dissector; 2]>,
    endpoints: Vec<Endpoints>,
    /// A failure to store payloads, reported once.
    io_error: Option<String>,
    /// Every session over time, for the IO graph; the UI locks it to draw.
    timeline: Arc<Mutex<Timeline>>,
}

impl Observer for Sink {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        let d = e.datagram;
        let lens = (d.payload.len(), d.payload_len);
        let record = self.writer.len();
        let mut row = Row::new(d.frame, d.ts, record, e.session, e.direction, lens);
        (row.frame_len, row.frame_cap_len) = (d.frame_len, d.frame_cap_len);
        for f in e.findings {
            row.note(f.severity());
        }
        self.writer.append_record(&row.header(), d.payload);
        // Write out as it fills rather than only at hand-over, so that the
        // buffer stays small while a file loads at full speed.
        if self.writer.buffered() >= STORE_BUFFER
            && let Err(e) = self.writer.flush()
        {
            self.io_error
                .get_or_insert(format!("cannot store payloads: {e}"));
        }
        self.rows.push(row);
        let endpoints = &mut self.endpoints;
        let (client, server) = match e.direction {
            Direction::ClientToServer => (d.src, d.dst),
            Direction::ServerToClient => (d.dst, d.src),
        };
        // A session's readers per direction: this packet's for its own, the
        // one known (or, new, this one) for the other.
        let reader = e.dissector();
        let mut dissectors = self
            .readers
            .get(&e.session)
            .copied()
            .unwrap_or([reader, reader]);
        let before =
            dissectors.map(|r| r as *const dyn crate::proto::dissect::Dissector as *const ());
        dissectors[e.direction.index()] = reader;
        let these = Endpoints {
            id: e.session,
            client,
            server,
            protocol: e.protocol,
            dissectors,
        };
        let mut new = false;
        self.activity
            .entry(e.session)
            .or_insert_with(|| {
                new = true;
                Activity::default()
            })
            .count(d.ts.nanos() / 1_000_000_000, e.direction);
        // A session's readers are sent again when one changes (Battlegrounds
        // settles a session's byte order from a later packet's bytes).
        let after =
            dissectors.map(|r| r as *const dyn crate::proto::dissect::Dissector as *const ());
        self.readers.insert(e.session, dissectors);
        if new || before != after {
            endpoints.push(these);
        }
        lock(&self.timeline).packet(e);
        Flow::Continue
    }

    fn finding(&mut self, f: &Finding) {
        lock(&self.timeline).finding(f);
        let detail = self.writer.append_display(&f.detail);
        self.findings.push((f.frame, LoggedFinding::new(f, detail)));
    }
}

impl Collector {
    pub fn new(engine: Engine, writer: StoreWriter) -> Self {
        Collector {
            tracker: engine,
            sink: Sink {
                writer,
                rows: Vec::with_capacity(4096),
                findings: Vec::new(),
                activity: FxHashMap::default(),
                readers: FxHashMap::default(),
                endpoints: Vec::new(),
                io_error: None,
                timeline: Arc::default(),
            },
        }
    }

    /// The timeline the IO graph draws, shared with the UI.
    pub fn timeline(&self) -> Arc<Mutex<Timeline>> {
        Arc::clone(&self.sink.timeline)
    }

    /// Analyses one datagram; [`Flow::Stop`] once the engine has read all it
    /// was asked to.
    pub fn push(&mut self, d: &Datagram<'_>) -> Flow {
        self.tracker
            .observe(d, &mut self.sink)
            .unwrap_or(Flow::Continue)
    }

    /// Ends the capture: the tracker's end-of-capture findings join the batch.
    pub fn finish(&mut self) {
        self.tracker.finish(&mut self.sink);
    }

    /// Rows waiting for the next hand-over.
    pub fn pending(&self) -> usize {
        self.sink.rows.len()
    }

    /// The rows and findings since the last call, their payloads flushed to the
    /// store first; `None` when there is nothing new.
    pub fn take_batch(&mut self) -> Option<Update> {
        if self.sink.rows.is_empty()
            && self.sink.findings.is_empty()
            && self.sink.endpoints.is_empty()
        {
            return None;
        }
        if let Err(e) = self.sink.writer.flush() {
            self.sink.io_error = Some(format!("cannot store payloads: {e}"));
            return None;
        }
        Some(Update::Batch {
            rows: std::mem::replace(&mut self.sink.rows, Vec::with_capacity(4096)),
            findings: std::mem::take(&mut self.sink.findings),
            endpoints: std::mem::take(&mut self.sink.endpoints),
        })
    }

    /// A storage failure, once.
    pub fn take_error(&mut self) -> Option<String> {
        self.sink.io_error.take()
    }

    /// A copy of every session the tracker keeps. Traffic history of sessions
    /// it no longer keeps is dropped.
    pub fn sessions(&mut self) -> Vec<SessionSnap> {
        if self.sink.activity.len() > self.tracker.session_count() {
            let tracker = &self.tracker;
            self.sink
                .activity
                .retain(|id, _| tracker.session(*id).is_some());
        }
        let mut snaps = Vec::with_capacity(self.tracker.session_count());
        let activity = &self.sink.activity;
        self.tracker.for_each_session(|s| {
            let id = s.id;
            snaps.push({
                let dirs = [s.c2s, s.s2c];
                let finding = |k: FindingKind| dirs.iter().map(|d| d.finding_count(k)).sum();
                let delay = |i: usize| dirs[i].ack_delay_ms(0.5);
                SessionSnap {
                    id,
                    client: s.client,
                    server: s.server,
                    state: s.state,
                    player: s.player().map(|p| (p.id, p.name)),
                    packets: dirs.map(|d| d.packets),
                    bytes: dirs.map(|d| d.bytes),
                    resends: dirs.map(|d| d.resends),
                    reorders: finding(FindingKind::REORDERED),
                    malformed: finding(FindingKind::MALFORMED) + finding(FindingKind::TRUNCATED),
                    ack_delay_ms: [delay(0), delay(1)],
                    loss: dirs.map(|d| d.loss().map(|e| e.fraction())),
                    last_ts: s.c2s.last_ts.max(s.s2c.last_ts),
                    activity: activity.get(&id).cloned().unwrap_or_default(),
                }
            });
        });
        snaps
    }
}

/// Stops the data side from the UI.
#[derive(Clone, Default)]
pub struct Stop {
    flag: Arc<AtomicBool>,
    /// Wakes a capture blocked on a quiet interface.
    waker: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl Stop {
    pub fn with_waker(waker: impl Fn() + Send + Sync + 'static) -> Self {
        Stop {
            flag: Arc::default(),
            waker: Some(Arc::new(waker)),
        }
    }

    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(w) = &self.waker {
            w();
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

/// The running data side.
pub struct DataSide {
    pub stop: Stop,
    /// What the IO graph draws, filled by the capture thread.
    pub timeline: Arc<Mutex<Timeline>>,
    capture: Option<JoinHandle<()>>,
    pump: Option<JoinHandle<()>>,
}

impl DataSide {
    /// Stops both threads and waits for them.
    pub fn shutdown(mut self) {
        self.stop.stop();
        for h in [self.capture.take(), self.pump.take()]
            .into_iter()
            .flatten()
        {
            let _ = h.join();
        }
    }
}

impl Drop for DataSide {
    fn drop(&mut self) {
        self.stop.stop();
    }
}

struct Shared {
    collector: Mutex<Collector>,
    status: Mutex<(CaptureCounters, Option<f64>)>,
    /// Set by the capture thread when the source has ended.
    ended: AtomicBool,
    failure: Mutex<Option<String>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the capture and pump threads. `open` runs on the capture thread (a
/// libpcap handle stays on the thread that opened it).
pub fn spawn<F: Feed + 'static>(
    open: impl FnOnce() -> F + Send + 'static,
    engine: Engine,
    writer: StoreWriter,
    stop: Stop,
    tx: Sender<Update>,
) -> std::io::Result<DataSide> {
    let shared = Arc::new(Shared {
        collector: Mutex::new(Collector::new(engine, writer)),
        status: Mutex::default(),
        ended: AtomicBool::new(false),
        failure: Mutex::new(None),
    });
    let capture = {
        let shared = Arc::clone(&shared);
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("lwarscope-capture".into())
            .spawn(move || {
                let mut feed = open();
                let mut n = 0u32;
                let mut next_status = Instant::now();
                loop {
                    if stop.is_stopped() {
                        break;
                    }
                    let mut more = true;
                    let step = feed.step(&mut |d| {
                        more &= lock(&shared.collector).push(d) == Flow::Continue;
                    });
                    // The engine has all it was asked for (`-c`).
                    let step = step.map(|read| read && more);
                    n = n.wrapping_add(1);
                    if n.is_multiple_of(64) || !matches!(step, Ok(true)) {
                        let now = Instant::now();
                        if now >= next_status {
                            next_status = now + PUMP_INTERVAL;
                            *lock(&shared.status) = feed.status();
                        }
                    }
                    match step {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => {
                            *lock(&shared.failure) = Some(e);
                            break;
                        }
                    }
                }
                lock(&shared.collector).finish();
                *lock(&shared.status) = feed.status();
                shared.ended.store(true, Ordering::SeqCst);
            })?
    };
    let pump = {
        let shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("lwarscope-pump".into())
            .spawn(move || pump(&shared, &tx))?
    };
    let timeline = lock(&shared.collector).timeline();
    Ok(DataSide {
        stop,
        timeline,
        capture: Some(capture),
        pump: Some(pump),
    })
}

fn pump(shared: &Shared, tx: &Sender<Update>) {
    let mut round = 0u32;
    loop {
        std::thread::sleep(PUMP_INTERVAL);
        // Read before taking the batch: a batch taken after `ended` is the last.
        let ended = shared.ended.load(Ordering::SeqCst);
        let (batch, sessions, error) = {
            let mut c = lock(&shared.collector);
            let batch = c.take_batch();
            let sessions = (ended || round.is_multiple_of(SNAPSHOT_EVERY)).then(|| c.sessions());
            (batch, sessions, c.take_error())
        };
        round = round.wrapping_add(1);
        let (counters, progress) = *lock(&shared.status);
        let mut updates: Vec<Update> = batch.into_iter().collect();
        updates.extend(sessions.map(Update::Sessions));
        updates.push(Update::Status { counters, progress });
        updates.extend(error.map(Update::Failed));
        if ended {
            updates.extend(lock(&shared.failure).take().map(Update::Failed));
            updates.push(Update::Finished);
        }
        for u in updates {
            if tx.send(u).is_err() {
                return; // The UI is gone.
            }
        }
        if ended {
            return;
        }
    }
}

/// A [`Feed`] over datagrams in memory.
#[derive(Debug)]
pub struct MemoryFeed {
    datagrams: std::vec::IntoIter<OwnedDatagram>,
    total: usize,
    read: u64,
}

impl MemoryFeed {
    pub fn new(datagrams: Vec<OwnedDatagram>) -> Self {
        MemoryFeed {
            total: datagrams.len(),
            datagrams: datagrams.into_iter(),
            read: 0,
        }
    }
}

impl Feed for MemoryFeed {
    fn step(&mut self, each: &mut dyn FnMut(&Datagram<'_>)) -> Result<bool, String> {
        match self.datagrams.next() {
            Some(d) => {
                self.read += 1;
                each(&d.as_datagram());
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn status(&mut self) -> (CaptureCounters, Option<f64>) {
        let progress = if self.total == 0 {
            1.0
        } else {
            self.read as f64 / self.total as f64
        };
        (
            CaptureCounters {
                frames: self.read,
                ..CaptureCounters::default()
            },
            Some(progress),
        )
    }
}

/// A [`Feed`] over capture files or a live interface.
pub struct CaptureFeed {
    source: capture::Source,
    /// Total size of the files, for the load's progress.
    file_bytes: Option<u64>,
}

impl CaptureFeed {
    /// `file_bytes`: the total size of the files read, when known.
    pub fn new(source: capture::Source, file_bytes: Option<u64>) -> Self {
        CaptureFeed { source, file_bytes }
    }
}

impl Feed for CaptureFeed {
    fn step(&mut self, each: &mut dyn FnMut(&Datagram<'_>)) -> Result<bool, String> {
        match self.source.next_frame() {
            Ok(Some(frame)) => {
                if let Some(d) = frame.datagram() {
                    each(d);
                }
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => Err(e.to_string()),
        }
    }

    fn status(&mut self) -> (CaptureCounters, Option<f64>) {
        let stats = self.source.stats();
        let c = &stats.counts;
        let counters = CaptureCounters {
            frames: c.frames,
            received: stats.pcap.map(|p| p.received),
            dropped_kernel: stats.pcap.map(|p| p.dropped_by_kernel),
            dropped_interface: stats.pcap.map(|p| p.dropped_by_interface),
        };
        // A pcap record is a 16-byte header and the captured bytes; pcapng
        // blocks are a little bigger, so this estimate stays below 1.
        let progress = self.file_bytes.filter(|&t| t > 0).map(|total| {
            let read = 24 + c.bytes + 16 * c.frames;
            (read as f64 / total as f64).min(0.99)
        });
        (counters, progress)
    }
}
