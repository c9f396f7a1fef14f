//! The run loop: reading the inputs and feeding each UDP datagram to the
//! engine, for every output. Named `run` because it is what one run of
//! lwarscope does between opening its inputs and writing its results: the
//! report (`lwarscope -r`, `check`) and the terminal UI both drive their
//! analysis through the one loop, [`drive_with`], and only the outputs
//! differ.
//!
//! Layers flow one way: `capture` (frames, datagrams) and `engine` below,
//! the outputs (`report`, `tui`) above. The loop knows no output: it feeds a
//! [`Consumer`] (the report's `Analysis`, the terminal UI's collector), the
//! one trait where the loop and the outputs meet, ripgrep-style.
//!
//! - [`drive_with`]: the loop, on one thread, or on two (`pipeline`) when
//!   it pays; it writes the frames an export (`-w` with `-r`) selects, and
//!   tells a [`Watch`] how far it has read. [`drive`] is the printed runs'
//!   (warnings on standard error, a progress bar).
//! - `input`: what the loop reads, an [`Input`]: a capture `Source`, or
//!   [`Datagrams`] already in memory.
//! - `pipeline`: the two-thread loop (a reader thread and the engine's).
//! - `ahead`: what an output renders ahead on the reader's thread.
//! - [`fleet`]: many captures at once: directories, globs, and the worker
//!   pool that analyses files in parallel and returns results in input order.
//! - [`progress`]: a progress bar on a terminal's standard error.
//! - [`args`]: the run's own options (`-d`, `-o`, `-c`: the engine).

pub(crate) mod ahead;
pub mod args;
pub mod fleet;
mod input;
mod pipeline;
pub mod progress;

pub use input::{Datagrams, Input};

use crate::capture::export::{ExportError, FrameWriter};
use crate::capture::{CaptureError, Datagram, Frame, FrameClass, FrameCounts};
use crate::engine::{Flow, Guess};
use progress::Progress;
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// What the loop feeds: an analysis (an engine and the outputs that see its
/// packets and findings). The loop asks it nothing else than what it needs to
/// read on (stop or go on), to export (what the last datagram was) and to
/// choose its threads.
pub trait Consumer {
    /// Analyses one datagram; [`Flow::Stop`] ends the run (the output closed,
    /// the count of `-c` reached, the user quit).
    fn datagram(&mut self, d: &Datagram<'_>) -> Flow;

    /// Datagrams a protocol recognised so far.
    fn recognised(&self) -> u64;

    /// Whether the last datagram was recognised and passed the export's
    /// selection (the display filter, the sessions named).
    fn selected(&self) -> bool;

    /// Whether the engine stops after a count of datagrams (`-c`): the loop
    /// then reads on one thread (the count stops it mid-batch).
    fn stops_early(&self) -> bool;

    /// Whether that count (`-c`) was reached.
    fn limit_reached(&self) -> bool;

    /// What a reader thread may render ahead for the output, taken for a
    /// two-thread run (handed back with [`Consumer::put_ahead`]).
    fn take_ahead(&mut self) -> Option<ReadAhead> {
        None
    }

    /// The engine's probes, for a two-thread run's reader to test each
    /// datagram with ([`crate::capture::Datagram::probes`]); `None`: the
    /// engine tests them itself.
    fn probe_marks(&self) -> Option<crate::engine::ProbeMarks> {
        None
    }

    /// Hands back what [`Consumer::take_ahead`] took.
    fn put_ahead(&mut self, ahead: Option<ReadAhead>) {
        let _ = ahead;
    }
}

/// What a reader thread renders ahead for an output (`ahead`): the output's
/// renderer and where it takes the parts, with what recognition can tell of
/// a datagram away from the engine. Made by the crate's outputs only.
pub struct ReadAhead {
    pub(crate) render: ahead::RenderAhead,
    pub(crate) guess: Guess,
}

/// Why the loop stopped short.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// The reader thread could not be started.
    #[error("cannot start the reader thread: {0}")]
    Spawn(#[source] io::Error),
    #[error("writing the selected frames: {0}")]
    Export(#[from] ExportError),
}

/// What an export writes, and where (`-w FILE` with `-r`).
pub struct Export {
    pub writer: FrameWriter,
    /// Only the frames of packets that pass the display filter; every frame
    /// when there is none.
    pub filtered: bool,
}

/// What the loop tells besides the datagrams, as it reads: the input's
/// warnings and how far it has got. The printed runs say it on standard
/// error ([`Printed`]); the terminal UI shows it in its status line.
pub trait Watch {
    /// A warning of the input's (time going backwards where one file follows
    /// another).
    fn warning(&mut self, text: &str);

    /// After each frame read on one thread, `read` of them so far: the watch
    /// reads the input's counters at its own pace (and costs nothing on the
    /// frames where it does not).
    fn frame(&mut self, read: u64, input: &mut dyn Input);

    /// After each batch analysed on two threads: the input's counters after
    /// the batch's last frame.
    fn batch(&mut self, counts: &FrameCounts);
}

/// The watch of the printed runs: warnings on standard error, a progress
/// bar for files (when given one), and for live captures a warning as soon
/// as libpcap reports drops (looked at once a second).
pub struct Printed<'a> {
    progress: Option<&'a Progress>,
    next_check: Instant,
    warned: u64,
}

impl<'a> Printed<'a> {
    pub fn new(progress: Option<&'a Progress>) -> Self {
        Printed {
            progress,
            next_check: Instant::now() + Duration::from_secs(1),
            warned: 0,
        }
    }

    fn progress(&self, c: &FrameCounts) {
        if let Some(p) = self.progress {
            // Captured bytes plus the 16-byte record headers: close to the file offset.
            p.set(c.bytes + 16 * c.frames);
        }
    }
}

impl Watch for Printed<'_> {
    fn warning(&mut self, text: &str) {
        let _ = writeln!(io::stderr(), "warning: {text}");
    }

    fn frame(&mut self, read: u64, input: &mut dyn Input) {
        if read.is_multiple_of(4096) && self.progress.is_some() {
            self.progress(&input.counts());
        }
        if input.is_live() && Instant::now() >= self.next_check {
            self.next_check = Instant::now() + Duration::from_secs(1);
            if let Some(p) = input.stats().pcap {
                let dropped = p.dropped_by_kernel + p.dropped_by_interface;
                if dropped > self.warned {
                    let _ = writeln!(
                        io::stderr(),
                        "warning: {dropped} packets dropped before analysis so far (kernel {}, interface {})",
                        p.dropped_by_kernel,
                        p.dropped_by_interface
                    );
                    self.warned = dropped;
                }
            }
        }
    }

    fn batch(&mut self, counts: &FrameCounts) {
        self.progress(counts);
    }
}

/// [`drive_with`] as the printed runs watch it ([`Printed`]).
pub fn drive<I: Input, C: Consumer>(
    input: &mut I,
    consumer: &mut C,
    progress: Option<&Progress>,
    export: Option<&mut Export>,
) -> Result<(), DriveError> {
    drive_with(input, consumer, &mut Printed::new(progress), export)
}

/// The run loop: feeds every UDP datagram of `input` to `consumer`, until
/// the input ends or the consumer says stop, and tells `watch` how far it
/// has got; writes the frames an export selects. On two threads when it
/// pays (`pipeline::worth_it`; never with an export, which writes every
/// frame).
pub fn drive_with<I: Input, C: Consumer, W: Watch>(
    input: &mut I,
    consumer: &mut C,
    watch: &mut W,
    mut export: Option<&mut Export>,
) -> Result<(), DriveError> {
    if export.is_none() && pipeline::worth_it(input, consumer) {
        return pipeline::drive(input, consumer, watch);
    }
    let mut read = 0u64;
    loop {
        for w in input.take_warnings() {
            watch.warning(&w);
        }
        let Some(frame) = input.next_frame()? else {
            return Ok(());
        };
        match export.as_deref_mut() {
            None => {
                if let FrameClass::Udp(d) = &frame.class
                    && consumer.datagram(d) == Flow::Stop
                {
                    return Ok(());
                }
            }
            Some(x) => {
                // The export has nothing to do with the printed output: when
                // that closes (`| head`), the frames are still exported, to
                // the end or to the count of -c.
                if export_frame(x, consumer, &frame)? == Flow::Stop && consumer.limit_reached() {
                    return Ok(());
                }
            }
        }
        read += 1;
        watch.frame(read, input);
    }
}

/// Analyses a frame for an export and writes it if selected: a datagram that
/// passes the display filter (any frame when there is none), with its held
/// fragments; what the consumer wants next.
fn export_frame<C: Consumer>(
    x: &mut Export,
    consumer: &mut C,
    frame: &Frame<'_>,
) -> Result<Flow, ExportError> {
    match &frame.class {
        FrameClass::Udp(d) => {
            let before = consumer.recognised();
            let flow = consumer.datagram(d);
            let recognised = consumer.recognised() > before;
            if (recognised && consumer.selected()) || (!recognised && !x.filtered) {
                x.writer.write(frame)?;
            } else {
                x.writer.forget(frame);
            }
            Ok(flow)
        }
        FrameClass::Fragment => {
            x.writer.hold(frame);
            Ok(Flow::Continue)
        }
        _ if !x.filtered => {
            x.writer.write(frame)?;
            Ok(Flow::Continue)
        }
        _ => Ok(Flow::Continue),
    }
}
