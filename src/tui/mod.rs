//! The interactive terminal UI: sessions, packets, detail tree, hex and findings,
//! live on an interface or over a capture file.
//!
//! Two sides, as in gitui or bottom:
//!
//! - the **data side** ([`data`]): a capture thread runs the run loop
//!   ([`crate::run`], the printed report's own) over the source into the
//!   tracker; a pump thread hands compact [`model::Update`]s to the UI over a
//!   channel every 50 ms. Payloads go to an append-only spill file
//!   ([`store`]), and so do the findings' detail texts; the UI keeps a compact
//!   index of rows (32 bytes each) and a bounded log of findings
//!   ([`model::FindingLog`]: runs of the same finding folded into one row with
//!   their first, newest and count, at most [`model::LOG_ROWS`] rows, counts by
//!   kind past them, said in the findings pane) and decodes only what it shows,
//!   so memory stays flat on big captures and under floods of findings.
//! - a **filter worker** ([`filter::Worker`]) runs the display filter over
//!   blocks of rows, reading payloads back from the store, and streams the
//!   matches to the UI; a new filter cancels the scan of the old one.
//! - the **UI side** ([`app::App`] and `ui`): drains the channel without
//!   blocking, handles keys and mouse, redraws at a steady rate.
//!
//! The terminal is restored on quit, on Ctrl-C, on SIGTERM/SIGHUP and on panic;
//! the TUI exits when its terminal goes away (a closed tmux pane). Once the
//! terminal is restored, one line on standard error sums up the session
//! ([`App::summary`]). The keys are documented in docs/tui.md, which the help
//! overlay matches (a test checks it).

pub mod app;
pub mod data;
pub mod filter;
pub mod model;
pub mod pane;
pub mod store;
#[cfg(test)]
mod tests;
mod ui;

use crate::capture::OwnedDatagram;
use crate::capture::{self, CaptureError, LiveOptions};
use crate::run::Datagrams;
use crate::run::args::DecodeArgs;
use app::{App, SourceInfo};
use data::{Stop, Total};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::crossterm::event::{self, DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use std::io::{self, Stdout};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once, mpsc};
use std::time::{Duration, Instant};

pub use ui::draw;

/// Why the TUI could not run.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Terminal(#[source] io::Error),
    #[error("cannot create the payload store: {0}")]
    Store(#[source] io::Error),
    #[error("cannot start the capture thread: {0}")]
    Thread(#[source] io::Error),
    #[error("display filter: {0}")]
    Filter(String),
    #[error(transparent)]
    Capture(#[from] CaptureError),
}

/// Where the packets come from.
#[derive(Debug)]
pub enum Source {
    /// Capture files (pcap or pcapng), read in order as one stream.
    Files(Vec<PathBuf>),
    /// A live interface.
    Live(LiveOptions),
    /// Datagrams already in memory (tests, fixtures).
    Memory {
        label: String,
        datagrams: Vec<OwnedDatagram>,
    },
}

/// How the TUI runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Screen refreshes per second.
    pub fps: u32,
    /// Follow new packets from the start; by default only live captures do.
    pub follow: Option<bool>,
    /// A display filter to start with.
    pub filter: Option<String>,
    /// How the engine is set up: ports decoded as a protocol (`-d`),
    /// protocol preferences (`-o`), a count of datagrams to stop after (`-c`).
    pub decode: DecodeArgs,
    /// A capture filter for the files (`-f`).
    pub file_filter: Option<String>,
    /// Stop a live capture after this long.
    pub duration: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            fps: 15,
            follow: None,
            filter: None,
            decode: DecodeArgs::default(),
            file_filter: None,
            duration: None,
        }
    }
}

/// The source's label in the TUI's title: a file's name escaped as
/// everywhere it is shown (`text::path`: an ESC or a newline in a name is
/// shown, never sent to the terminal).
fn files_label(paths: &[PathBuf]) -> String {
    match paths {
        [one] => format!("file {}", crate::text::path(one)),
        many => format!("{} files", many.len()),
    }
}

/// A live interface's label, its name escaped as file names are.
fn live_label(interface: &str) -> String {
    format!("live {}", crate::text::printable(interface))
}

/// Opens the TUI on `source` and runs it until the user quits (or SIGTERM).
pub fn run(source: Source, options: Options) -> Result<(), TuiError> {
    if let Some(f) = &options.filter {
        filter::DisplayFilter::parse(f).map_err(TuiError::Filter)?;
    }
    let (writer, reader) = store::store().map_err(TuiError::Store)?;
    let (tx, rx) = mpsc::channel();
    // Where a live capture writes its frames (`-w`), for the summary.
    let mut savefile = None;
    let (info, side) = match source {
        Source::Files(paths) => {
            let total = paths
                .iter()
                .map(|p| std::fs::metadata(p).map(|m| m.len()).ok())
                .sum::<Option<u64>>();
            let mut src = capture::Source::files(&paths)?;
            if let Some(f) = &options.file_filter {
                src.set_file_filter(f)?;
            }
            let src = limit(src, &options);
            let label = files_label(&paths);
            let stop = stop_for(&src);
            let info = SourceInfo { label, live: false };
            let engine = options.decode.engine();
            let side = data::spawn(move || src, Total::Bytes(total), engine, writer, stop, tx);
            (info, side)
        }
        Source::Live(opts) => {
            savefile = opts.savefile.clone();
            let src = limit(capture::Source::live(&opts)?, &options);
            let stop = stop_for(&src);
            let info = SourceInfo {
                label: live_label(&opts.interface),
                live: true,
            };
            let engine = options.decode.engine();
            let side = data::spawn(move || src, Total::Bytes(None), engine, writer, stop, tx);
            (info, side)
        }
        Source::Memory { label, datagrams } => {
            let info = SourceInfo { label, live: false };
            let total = Total::Datagrams(datagrams.len());
            let side = data::spawn(
                move || Datagrams::new(datagrams),
                total,
                options.decode.engine(),
                writer,
                Stop::default(),
                tx,
            );
            (info, side)
        }
    };
    let side = side.map_err(TuiError::Thread)?;
    let mut app = App::new(info, reader);
    app.timeline = std::sync::Arc::clone(&side.timeline);
    if let Some(f) = options.follow {
        app.follow = f;
    }
    if let Some(f) = &options.filter {
        app.set_filter(f).map_err(TuiError::Filter)?;
    }

    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&signalled)).map_err(TuiError::Terminal)?;
    }

    let result = {
        let mut guard = TerminalGuard::enter().map_err(TuiError::Terminal)?;
        event_loop(&mut guard.terminal, &mut app, &rx, &signalled, &options)
    };
    // The guard is dropped: the terminal is back to normal before we wait.
    side.shutdown();
    result.map_err(TuiError::Terminal)?;
    // What was read and found, in one line on the terminal (as tshark ends
    // with its packet count), on standard error so that it never mixes with
    // output piped on.
    let mut summary = app.summary();
    if let Some(path) = savefile {
        summary.push_str(&format!("; frames written to {}", crate::text::path(&path)));
    }
    eprintln!("{summary}");
    Ok(())
}

fn limit(mut src: capture::Source, options: &Options) -> capture::Source {
    if let Some(d) = options.duration {
        src.stop_after(d);
    }
    src
}

/// Stopping the data side also stops the capture (and wakes a quiet live read).
fn stop_for(src: &capture::Source) -> Stop {
    let handle = src.stop_handle();
    Stop::with_waker(move || handle.stop())
}

/// Draws, takes in updates and handles input until the user quits, a signal
/// arrives, or the terminal goes away.
fn event_loop<B: Backend<Error = io::Error>>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    rx: &mpsc::Receiver<model::Update>,
    signalled: &AtomicBool,
    options: &Options,
) -> io::Result<()> {
    let frame_time = Duration::from_millis(1000 / u64::from(options.fps.clamp(1, 60)));
    let input = spawn_input()?;
    let mut rate = RateMeter::default();
    loop {
        while let Ok(u) = rx.try_recv() {
            app.apply(u);
        }
        app.tick();
        app.pps = rate.update(app.rows.len());
        if app.source.live {
            app.wall_now = Some(wall_clock());
        }
        terminal.draw(|f| draw(f, app))?;
        let until = Instant::now() + frame_time;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match input.recv_timeout(left) {
                Ok(event) => app.on_event(&event?),
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(hung_up()),
            }
            if app.quit {
                break;
            }
        }
        if app.quit || signalled.load(Ordering::SeqCst) {
            return Ok(());
        }
        if terminal_gone() {
            return Err(hung_up());
        }
    }
}

fn hung_up() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the terminal has gone away")
}

/// Reads terminal events on their own thread and passes them on.
///
/// The UI never waits inside crossterm: on a hung-up terminal, crossterm 0.29's
/// reader retries a `read` that keeps returning 0 (or `EIO`) forever, so a call
/// to `event::poll` would never return. Here only this thread spins, and the
/// UI notices the hang-up by itself ([`terminal_gone`]) and exits, which ends
/// the thread with the process.
fn spawn_input() -> io::Result<mpsc::Receiver<io::Result<event::Event>>> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("lwarscope-input".into())
        .spawn(move || {
            loop {
                let e = event::read();
                let failed = e.is_err();
                if tx.send(e).is_err() || failed {
                    return;
                }
            }
        })?;
    Ok(rx)
}

/// True when the terminal on stdin or stdout has hung up (its tmux pane or
/// window was closed): `poll` reports `POLLHUP`/`POLLERR` on it.
fn terminal_gone() -> bool {
    let mut fds = [0, 1].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // Only terminals count: a pipe on stdin that has ended is no hang-up.
    // SAFETY: `isatty` only inspects the descriptor.
    fds.iter_mut()
        .filter(|p| unsafe { libc::isatty(p.fd) } != 1)
        .for_each(|p| p.fd = -1);
    // SAFETY: `fds` is a valid array of `pollfd` for the length passed; a
    // timeout of 0 makes the call return at once.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
    n > 0
        && fds
            .iter()
            .any(|p| p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0)
}

fn wall_clock() -> crate::capture::Timestamp {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    crate::capture::Timestamp(d.as_nanos() as u64)
}

/// Rows per second of wall time, over the last second or so.
#[derive(Debug, Default)]
struct RateMeter {
    since: Option<(Instant, usize)>,
    rate: f64,
}

impl RateMeter {
    fn update(&mut self, count: usize) -> f64 {
        let now = Instant::now();
        match self.since {
            None => self.since = Some((now, count)),
            Some((t, c)) => {
                let dt = now.duration_since(t).as_secs_f64();
                if dt >= 1.0 {
                    self.rate = (count - c) as f64 / dt;
                    self.since = Some((now, count));
                }
            }
        }
        self.rate
    }
}

/// Raw mode, alternate screen and mouse capture while alive; the terminal as it
/// was when dropped, or when a panic unwinds (a panic hook restores it first, so
/// the panic message is readable).
struct TerminalGuard {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl TerminalGuard {
    fn enter() -> io::Result<Self> {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore_terminal();
                previous(info);
            }));
        });
        enable_raw_mode()?;
        let mut out = io::stdout();
        if let Err(e) = execute!(out, EnterAlternateScreen, EnableMouseCapture) {
            restore_terminal();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(out)) {
            Ok(terminal) => Ok(TerminalGuard { terminal }),
            Err(e) => {
                restore_terminal();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
}

/// Runs the run loop over datagrams in memory to their end, synchronously,
/// and returns an [`App`] with everything in it: for tests and snapshots.
pub fn load_app(mut input: Datagrams, source: SourceInfo) -> io::Result<App> {
    let (writer, reader) = store::store()?;
    let engine = Options::default().decode.engine();
    let mut collector = data::Collector::new(engine, writer);
    crate::run::drive_with(&mut input, &mut collector, &mut data::Unwatched, None)
        .map_err(io::Error::other)?;
    collector.finish();
    let mut app = App::new(source, reader);
    app.timeline = collector.timeline();
    if let Some(batch) = collector.take_batch() {
        app.apply(batch);
    }
    if let Some(e) = collector.take_error() {
        return Err(io::Error::other(e));
    }
    app.apply(model::Update::Sessions(collector.sessions()));
    let (counters, progress) =
        Total::Datagrams(input.len()).status(&crate::run::Input::stats(&mut input));
    app.apply(model::Update::Status { counters, progress });
    app.apply(model::Update::Finished);
    app.tick();
    Ok(app)
}

#[cfg(test)]
mod label_tests {
    use super::*;

    /// Issue 36: the TUI's title showed a file's name raw: an OSC title
    /// change and a screen clear in a name reached the terminal.
    #[test]
    fn file_and_interface_names_are_shown_escaped() {
        let name = PathBuf::from("/tmp/a\u{1b}]0;pwned\u{7}\u{1b}[2J\nb.pcap");
        assert_eq!(
            files_label(&[name]),
            "file /tmp/a\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\nb.pcap"
        );
        assert_eq!(
            files_label(&[PathBuf::from("x"), PathBuf::from("y")]),
            "2 files"
        );
        assert_eq!(live_label("lo\u{1b}[2J"), "live lo\\u{1b}[2J");
    }
}
