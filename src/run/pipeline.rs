//! Two threads over one capture: one reads the file and dissects each frame
//! down to its UDP datagram (`Source`: the mapped reader, link, IP, UDP,
//! fragment reassembly), the other runs the engine (recognition, sessions,
//! findings) and the output. The reader hands the datagrams over in batches
//! of reusable buffers through a bounded channel: the datagrams of a batch
//! are copied into one byte buffer, with no allocation per datagram once the
//! buffers have grown, and one channel operation per batch (not per packet).
//! The order of frames is kept (one reader, one consumer, a FIFO channel).
//! For the outputs that write every packet, the reader also renders what
//! their lines take of each payload alone (`ahead`): the engine's thread,
//! the busier one, copies those parts rather than decoding the messages
//! again and formatting them. It does so for the share of the datagrams
//! that keeps both threads busy ([`Share`]): where rendering costs more than
//! the analysis (JSON Lines, `-V`), rendering them all would make the reader
//! the thread the other waits for.
//!
//! What the source warns of travels in the batches, to the run's
//! [`Watch`] on the engine's thread.
//!
//! [`worth_it`] decides: files only (not live captures, whose pace the
//! interface sets), no export (`-w` writes every frame, not only datagrams),
//! no `-c` (the count stops the engine mid-batch, and the frame counters of
//! the report must be those at that frame), a second core not already busy
//! with another file of a fleet run, and a capture large enough for a thread
//! to pay (`LWARSCOPE_THREADS=1` or `2` forces it off or on).

use super::ahead::{Render, Rendered};
use super::{Consumer, DriveError, Input, ReadAhead, Watch};
use crate::capture::{CaptureError, Datagram, FrameClass, FrameCounts, Timestamp, payload_digest};
use crate::engine::{Flow, Guess, ProbeMarks};
use std::cell::Cell;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// Datagrams per batch.
const BATCH: usize = 1024;

/// Payload bytes after which a batch is handed over whatever its count.
const BATCH_BYTES: usize = 256 * 1024;

/// Bytes of output rendered ahead (`ahead`) after which a batch is handed
/// over: `-V`'s trees run to kilobytes a packet.
const BATCH_RENDERED: usize = 1 << 20;

/// Batches in all: one filling, one being analysed, the rest waiting.
const IN_FLIGHT: usize = 4;

/// Captures smaller than this are read on one thread: starting a thread and
/// handing batches over costs more than it saves (measured in
/// benches/NOTEBOOK.md).
const MIN_BYTES: u64 = 4 << 20;

thread_local! {
    /// Set on the workers of a fleet run with several jobs: the cores are
    /// taken by other files.
    static SHARED: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as one of several workers sharing the cores.
pub(crate) fn mark_shared_worker() {
    SHARED.with(|s| s.set(true));
}

/// Whether `LWARSCOPE_THREADS` forces one (`1`) or two (`2`) threads.
fn forced() -> Option<bool> {
    match std::env::var("LWARSCOPE_THREADS").ok()?.trim() {
        "1" => Some(false),
        "2" => Some(true),
        _ => None,
    }
}

/// Whether reading `source` on a thread of its own should be faster.
pub(crate) fn worth_it<I: Input, C: Consumer>(input: &I, consumer: &C) -> bool {
    if input.is_live() || consumer.stops_early() {
        return false;
    }
    if let Some(on) = forced() {
        return on;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores >= 2 && !SHARED.with(Cell::get) && input.input_bytes().is_none_or(|b| b >= MIN_BYTES)
}

/// Where a datagram of a batch is, and what it says.
#[derive(Debug, Clone, Copy)]
struct Meta {
    frame: u64,
    ts: Timestamp,
    src: SocketAddr,
    dst: SocketAddr,
    start: usize,
    len: usize,
    payload_len: usize,
    frame_len: u32,
    frame_cap_len: u32,
    /// The payload's digest, taken while its bytes are in the cache: the
    /// engine's thread then need not read them again to find duplicates.
    digest: u64,
    /// The engine's probes that match it, tested ahead likewise
    /// ([`Datagram::probes`]).
    probes: Option<u64>,
}

/// Datagrams handed over at once; reused once analysed.
#[derive(Default)]
struct Batch {
    meta: Vec<Meta>,
    bytes: Vec<u8>,
    /// The output's parts of the datagrams rendered ahead (`ahead`).
    rendered: Rendered,
    /// The source's counters after the batch's last frame (for progress).
    counts: FrameCounts,
    /// What the source warned of while the batch filled (rarely anything).
    warnings: Vec<String>,
    /// Set on the last batch: how the source ended.
    end: Option<Result<(), CaptureError>>,
}

impl Batch {
    fn new() -> Batch {
        Batch {
            meta: Vec::with_capacity(BATCH),
            bytes: Vec::with_capacity(BATCH_BYTES + 2048),
            rendered: Rendered::with_capacity(BATCH, BATCH_BYTES),
            ..Batch::default()
        }
    }

    fn clear(&mut self) {
        self.meta.clear();
        self.bytes.clear();
        self.rendered.clear();
        self.warnings.clear();
        self.end = None;
    }

    fn push(&mut self, d: &Datagram<'_>, marks: Option<&mut ProbeMarks>) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(d.payload);
        self.meta.push(Meta {
            frame: d.frame,
            ts: d.ts,
            src: d.src,
            dst: d.dst,
            start,
            len: d.payload.len(),
            payload_len: d.payload_len,
            frame_len: d.frame_len,
            frame_cap_len: d.frame_cap_len,
            digest: payload_digest(d.payload),
            probes: marks.map(|m| m.marks(d)),
        });
    }

    fn full(&self) -> bool {
        self.meta.len() >= BATCH
            || self.bytes.len() >= BATCH_BYTES
            || self.rendered.len() >= BATCH_RENDERED
    }
}

/// [`super::drive`] on two threads (see the module's docs).
pub(crate) fn drive<I: Input, C: Consumer, W: Watch>(
    source: &mut I,
    consumer: &mut C,
    watch: &mut W,
) -> Result<(), DriveError> {
    let (full_tx, full_rx) = mpsc::sync_channel::<Batch>(IN_FLIGHT);
    let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
    for _ in 0..IN_FLIGHT {
        let _ = empty_tx.send(Batch::new());
    }
    let mut ahead = consumer.take_ahead();
    let mut marks = consumer.probe_marks();
    // Set when the engine's thread found no batch waiting for it.
    let engine_waited = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        let (render, shared) = match &mut ahead {
            Some(ReadAhead {
                render: (render, shared),
                guess,
            }) => (Some((&mut **render, guess)), Some(&*shared)),
            None => (None, None),
        };
        // Named, for profiles (`perf report --sort comm`).
        let reader = std::thread::Builder::new()
            .name("lwarscope-read".to_owned())
            .spawn_scoped(scope, {
                let engine_waited = &engine_waited;
                let marks = marks.as_mut();
                move || read(source, render, marks, &full_tx, &empty_rx, engine_waited)
            });
        if let Err(e) = reader {
            return Err(DriveError::Spawn(e));
        }
        let mut result = Ok(());
        'batches: loop {
            let next = match full_rx.try_recv() {
                Err(mpsc::TryRecvError::Empty) => {
                    engine_waited.store(true, Ordering::Relaxed);
                    full_rx.recv().ok()
                }
                next => next.ok(),
            };
            let Some(mut batch) = next else {
                break;
            };
            for w in &batch.warnings {
                watch.warning(w);
            }
            if let Some(shared) = shared {
                shared.borrow_mut().swap(&mut batch.rendered);
            }
            for m in &batch.meta {
                let d = Datagram {
                    digest: Some(m.digest),
                    probes: m.probes,
                    frame: m.frame,
                    ts: m.ts,
                    src: m.src,
                    dst: m.dst,
                    payload: batch
                        .bytes
                        .get(m.start..m.start + m.len)
                        .unwrap_or_default(),
                    payload_len: m.payload_len,
                    frame_len: m.frame_len,
                    frame_cap_len: m.frame_cap_len,
                };
                if consumer.datagram(&d) == Flow::Stop {
                    break 'batches;
                }
            }
            watch.batch(&batch.counts);
            if let Some(end) = batch.end.take() {
                result = end.map_err(DriveError::Capture);
                break;
            }
            batch.clear();
            let _ = empty_tx.send(batch);
        }
        // The reader stops at its next hand-over (or wait) once both ends
        // are gone.
        drop(full_rx);
        drop(empty_tx);
        result
    });
    consumer.put_ahead(ahead);
    result
}

/// The reader's side: fills batches until the source ends, fails, or the
/// analysis stops (the channels close); renders the output's parts of each
/// datagram ahead as the protocol it names decodes it, given a renderer.
fn read<I: Input>(
    source: &mut I,
    mut render: Option<(&mut (dyn Render + 'static), &mut Guess)>,
    mut marks: Option<&mut ProbeMarks>,
    full: &mpsc::SyncSender<Batch>,
    empty: &mpsc::Receiver<Batch>,
    engine_waited: &AtomicBool,
) {
    let Ok(mut batch) = empty.recv() else {
        return;
    };
    let mut share = Share::from_env();
    loop {
        batch.warnings.extend(source.take_warnings());
        match source.next_frame() {
            Ok(Some(frame)) => {
                if let FrameClass::Udp(d) = &frame.class {
                    batch.push(d, marks.as_deref_mut());
                    // The guess follows every datagram (a handshake names
                    // its flow); only the share is rendered.
                    if let Some((render, guess)) = &mut render
                        && let Some(protocol) = guess.protocol(d)
                        && share.take()
                    {
                        batch.rendered.push(&mut **render, protocol, d);
                    }
                }
            }
            Ok(None) => {
                batch.end = Some(Ok(()));
                break;
            }
            Err(e) => {
                batch.end = Some(Err(e));
                break;
            }
        }
        if batch.full() {
            batch.counts = source.counts();
            if full.send(batch).is_err() {
                return;
            }
            let (b, reader_waited) = match empty.try_recv() {
                Ok(b) => (b, false),
                Err(mpsc::TryRecvError::Empty) => match empty.recv() {
                    Ok(b) => (b, true),
                    Err(_) => return,
                },
                Err(mpsc::TryRecvError::Disconnected) => return,
            };
            share.adjust(engine_waited.swap(false, Ordering::Relaxed), reader_waited);
            batch = b;
        }
    }
    batch.warnings.extend(source.take_warnings());
    batch.counts = source.counts();
    let _ = full.send(batch);
}

/// How much of the rendering ahead the reader takes: `share` datagrams of
/// every [`Share::OF`], spread evenly. The engine's thread renders the others
/// itself (the output renders inline what it finds no part for), so the
/// bytes written are the same whatever the share. At each hand-over, who
/// waited for the other since the last one decides: the engine's thread
/// finding no batch ready, the reader renders less; the reader finding no
/// emptied batch to fill, it renders more; both or neither, it holds. It
/// starts with all of it (the engine's thread is the busier for the
/// report's analysis alone).
/// `LWARSCOPE_RENDER_SHARE=N` (0 to 64) fixes it, to compare.
#[derive(Debug, Clone, Copy)]
struct Share {
    share: u32,
    owed: u32,
    fixed: bool,
}

impl Default for Share {
    fn default() -> Self {
        Share {
            share: Share::OF,
            owed: 0,
            fixed: false,
        }
    }
}

impl Share {
    /// The share `LWARSCOPE_RENDER_SHARE` fixes, else the adaptive one.
    fn from_env() -> Share {
        let Some(v) = std::env::var_os("LWARSCOPE_RENDER_SHARE") else {
            return Share::default();
        };
        match v.to_str().and_then(|v| v.trim().parse::<u32>().ok()) {
            Some(share) if share <= Share::OF => Share {
                share,
                fixed: true,
                ..Share::default()
            },
            _ => {
                let _ = writeln!(
                    std::io::stderr(),
                    "warning: LWARSCOPE_RENDER_SHARE={} is not a number from 0 to {}: ignored",
                    v.to_string_lossy(),
                    Share::OF
                );
                Share::default()
            }
        }
    }

    const OF: u32 = 64;
    /// The change at each hand-over, in [`Share::OF`]ths.
    const STEP: u32 = 2;

    /// Whether the reader renders the next datagram.
    fn take(&mut self) -> bool {
        self.owed += self.share;
        if self.owed >= Share::OF {
            self.owed -= Share::OF;
            true
        } else {
            false
        }
    }

    /// At a hand-over: whether the engine's thread and the reader each waited
    /// for the other since the last one.
    fn adjust(&mut self, engine_waited: bool, reader_waited: bool) {
        if self.fixed {
            return;
        }
        match (engine_waited, reader_waited) {
            (true, false) => self.share = self.share.saturating_sub(Share::STEP),
            (false, true) => self.share = (self.share + Share::STEP).min(Share::OF),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(share: &mut Share, n: usize) -> usize {
        (0..n).filter(|_| share.take()).count()
    }

    #[test]
    fn a_share_renders_its_fraction_evenly() {
        let mut s = Share::default();
        assert_eq!(taken(&mut s, 640), 640);
        s.share = 16;
        // A quarter, one datagram in four: never two in a row.
        let picks: Vec<bool> = (0..64).map(|_| s.take()).collect();
        assert_eq!(picks.iter().filter(|&&p| p).count(), 16);
        assert!(picks.windows(2).all(|w| !(w[0] && w[1])));
        s.share = 0;
        assert_eq!(taken(&mut s, 640), 0);
    }

    #[test]
    fn the_share_follows_the_thread_that_waits() {
        let mut s = Share::default();
        // The engine's thread waiting for the reader at every hand-over: the
        // reader gives up rendering, a step at a time, and no further than
        // none.
        for _ in 0..(Share::OF / Share::STEP) + 5 {
            s.adjust(true, false);
        }
        assert_eq!(s.share, 0);
        // Then the reader waiting for the engine's thread: it takes the
        // rendering back.
        s.adjust(false, true);
        assert_eq!(s.share, Share::STEP);
        for _ in 0..100 {
            s.adjust(false, true);
        }
        assert_eq!(s.share, Share::OF);
        // Both waited, or neither: the share holds.
        s.adjust(true, true);
        s.adjust(false, false);
        assert_eq!(s.share, Share::OF);
        // A fixed share holds whatever the waits.
        let mut fixed = Share {
            share: 10,
            fixed: true,
            ..Share::default()
        };
        fixed.adjust(true, false);
        fixed.adjust(false, true);
        assert_eq!(fixed.share, 10);
    }
}
