//! What the binary calls for `lwarscope -r FILE` and `lwarscope check`: the
//! options checked against each other, the outputs chosen, and the run loop
//! ([`crate::run::drive`]) driven into them, one stream or a fleet of files.

use crate::capture::export::{ExportFormat, FrameWriter};
use crate::capture::{CaptureError, Source};
use crate::engine::{Engine, Finding, Flow, Observer, PacketEvent};
use crate::report::check::{Rules, Verdict, exit_code, write_junit};
use crate::report::fields::{FieldsFormat, FieldsWriter};
use crate::report::json::{JsonWriter, JsonlWriter};
use crate::report::packets::{PacketOptions, PacketPrinter, is_broken_pipe};
use crate::report::stats::Stats;
use crate::report::table::{Layout, render};
use crate::report::timeline::Timeline;
use crate::report::tshark::{Shape, TsharkWriter};
use crate::report::{
    Analysis, CaptureInfo, CheckArgs, Filter, FilterError, Format, Outcome, ReportArgs,
    capture_info,
};
use crate::run::fleet::{self, Each};
use crate::run::progress::Progress;
use crate::run::{DriveError, Export, drive};
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// What can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The display filter does not parse; `Display` shows the expression and a
    /// caret under the column.
    #[error("bad display filter: {}", .error.render(.expr))]
    Filter { expr: String, error: FilterError },
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Check(#[from] crate::report::check::CheckError),
    #[error("{path}: {source}", path = crate::text::printable(.path))]
    Write {
        path: String,
        #[source]
        source: io::Error,
    },
    /// Bad field output options (`-T`, `-e`, `-E`): one line.
    #[error("{0}")]
    Fields(String),
    /// Options that cannot go together: one line.
    #[error("{0}")]
    Usage(String),
    #[error("writing the output: {0}")]
    Output(#[source] io::Error),
    #[error("writing the selected frames: {0}")]
    Export(#[from] crate::capture::export::ExportError),
    #[error(transparent)]
    Input(#[from] fleet::InputError),
    /// Some files of a fleet run could not be analysed (each was reported).
    #[error("{failed} of {total} files could not be analysed (each is reported above)")]
    Failed { failed: usize, total: usize },
    #[cfg(feature = "parquet")]
    #[error(transparent)]
    Parquet(#[from] crate::report::parquet::ParquetError),
}

impl From<DriveError> for RunError {
    fn from(e: DriveError) -> Self {
        match e {
            DriveError::Spawn(e) => RunError::Output(e),
            DriveError::Capture(e) => RunError::Capture(e),
            DriveError::Export(e) => RunError::Export(e),
        }
    }
}

/// Checks `--out` and `--format parquet` against each other: one needs the
/// other, and this build must have the `parquet` feature.
pub fn check_out(args: &ReportArgs) -> Result<(), RunError> {
    let usage = |m: &str| Err(RunError::Usage(m.to_owned()));
    match (args.format, &args.out) {
        (Format::Parquet, None) => {
            usage("--format parquet needs --out DIR, the directory of the tables")
        }
        (Format::Parquet, Some(_)) if !cfg!(feature = "parquet") => usage(
            "--format parquet: this lwarscope was built without the `parquet` feature \
             (cargo install --path . --features parquet)",
        ),
        (Format::Parquet, Some(_)) if args.output_type.is_some() || !args.fields.is_empty() => {
            usage("-T fields is an output of its own: drop --format parquet")
        }
        (Format::Parquet, Some(_)) if args.packet_lines() => {
            usage("--format parquet writes tables, not packet lines: drop --packets, -V, -x and -Y")
        }
        (Format::Parquet, Some(_)) if args.window.is_some() || args.tables => usage(
            "--format parquet writes the tables of whole captures (select in SQL by time): drop --window and --tables",
        ),
        (Format::Parquet, Some(_)) if args.quiet => {
            usage("--format parquet prints one line per capture, nothing for -q to drop: drop -q")
        }
        (Format::Parquet, Some(_)) => parquet_interval(args).map(drop),
        (_, Some(_)) => usage("--out applies to --format parquet"),
        _ => Ok(()),
    }?;
    match &args.plot {
        Some(path)
            if !path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("svg")) =>
        {
            usage(
                "--plot draws SVG: name the file FILE.svg (a browser or rsvg-convert makes a PNG of it)",
            )
        }
        Some(_) if args.window.is_some() => usage(
            "--plot draws the whole capture on its time axis: drop --window (or cut the capture first: -r FILE --window A..B -w PART.pcap)",
        ),
        _ => Ok(()),
    }?;
    let io_stat = args
        .stats
        .iter()
        .any(|s| matches!(s, crate::report::stats::StatSpec::IoStat { .. }));
    if io_stat && args.window.is_some() {
        return usage(
            "-z io,stat counts the whole capture by time already: drop --window and read its rows from START to END (or give it a filter: -z io,stat,1,\"time >= 60\")",
        );
    }
    Ok(())
}

/// The interval of the Parquet `intervals` table, in ns: `-z io,stat,INTERVAL`'s
/// when given (one, without filter columns: the table has fixed columns), 1 s
/// otherwise. Other `-z` statistics are refused: the tables hold them.
pub fn parquet_interval(args: &ReportArgs) -> Result<u64, RunError> {
    use crate::report::stats::StatSpec;
    let usage = |m: &str| Err(RunError::Usage(m.to_owned()));
    match args.stats.as_slice() {
        [] => Ok(1_000_000_000),
        [
            StatSpec::IoStat {
                interval_ns,
                filters,
                ..
            },
        ] if filters.is_empty() => Ok(*interval_ns),
        [StatSpec::IoStat { .. }] => usage(
            "--format parquet: the intervals table has fixed columns; give -z io,stat,INTERVAL without filters",
        ),
        _ => usage(
            "--format parquet writes the sessions, findings and intervals tables: -z io,stat,INTERVAL sets the intervals' length; drop the other -z",
        ),
    }
}

/// Parses `-Y`, if given.
pub fn parse_filter(expr: Option<&str>) -> Result<Option<Filter>, RunError> {
    expr.map(|expr| {
        Filter::parse(expr).map_err(|error| RunError::Filter {
            expr: expr.to_owned(),
            error,
        })
    })
    .transpose()
}

/// `-T json` or `-T ek`, if asked for.
fn tshark_shape(args: &ReportArgs) -> Option<Shape> {
    match args.output_type? {
        crate::report::args::OutputType::Json => Some(Shape::Json),
        crate::report::args::OutputType::Ek => Some(Shape::Ek),
        crate::report::args::OutputType::Fields => None,
    }
}

/// The output chosen by the options.
enum Output<W: Write> {
    /// `-q`: only the statistics.
    Quiet,
    Table,
    /// The packet lines, then (`--tables`) the report's tables.
    Packets(PacketPrinter<W>, bool),
    Json(JsonWriter<W>),
    Jsonl(JsonlWriter<W>),
    Fields(FieldsWriter<W>),
    /// `-T json`, `-T ek`.
    Tshark(TsharkWriter<W>),
}

impl<W: Write> Output<W> {
    /// [`Observer::packet`] of the outputs that write packets.
    #[inline(never)]
    fn write_packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        match self {
            Output::Quiet | Output::Table => Flow::Continue,
            Output::Packets(p, _) => p.packet(e),
            Output::Json(j) => j.packet(e),
            Output::Jsonl(j) => j.packet(e),
            Output::Fields(f) => f.packet(e),
            Output::Tshark(t) => t.packet(e),
        }
    }

    /// The share of each packet's output the reader's thread may render
    /// ahead, for the outputs that can.
    fn render_ahead(&mut self) -> Option<crate::run::ahead::RenderAhead> {
        match self {
            Output::Packets(p, _) => Some(p.render_ahead()),
            Output::Jsonl(j) => j.render_ahead(),
            Output::Fields(f) => f.render_ahead(),
            _ => None,
        }
    }

    /// Writes what comes at the end, then the statistics; a closed pipe is a
    /// normal end.
    fn finish(
        self,
        o: &Outcome,
        stats: &Stats,
        layout: Layout,
        out: impl FnOnce() -> W,
    ) -> io::Result<()> {
        let text = |w: io::Result<W>| -> io::Result<()> {
            let mut w = w?;
            if !stats.is_empty() {
                w.write_all(stats.render(o, layout).as_bytes())?;
            }
            w.flush()
        };
        let r = match self {
            Output::Quiet => text(Ok(out())),
            Output::Table => {
                let mut w = out();
                let r = w.write_all(render(o, layout).as_bytes());
                if !stats.is_empty() && r.is_ok() {
                    w.write_all(b"\n")?;
                }
                text(r.map(|()| w))
            }
            Output::Packets(p, tables) => text(p.finish().and_then(|mut w| {
                if tables {
                    w.write_all(b"\n")?;
                    w.write_all(render(o, layout).as_bytes())?;
                }
                Ok(w)
            })),
            Output::Json(j) => j.finish_with(o, &stats.json(o)).map(drop),
            Output::Jsonl(j) => j.finish_with(o, &stats.json(o)).map(drop),
            Output::Fields(f) => text(f.finish()),
            Output::Tshark(t) => t.finish().and_then(|mut w| w.flush()),
        };
        match r {
            Err(e) if is_broken_pipe(&e) => Ok(()),
            r => r,
        }
    }
}

impl<W: Write> Observer for Output<W> {
    /// The report writes nothing per packet: that case inline, the writers
    /// in [`Output::write_packet`]. Inlined here, they made every packet of
    /// the report save and restore the registers they use.
    #[inline]
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        match self {
            Output::Quiet | Output::Table => Flow::Continue,
            _ => self.write_packet(e),
        }
    }

    fn finding(&mut self, f: &Finding) {
        match self {
            Output::Quiet | Output::Table => {}
            Output::Packets(p, _) => p.finding(f),
            Output::Json(j) => j.finding(f),
            Output::Jsonl(j) => j.finding(f),
            Output::Fields(x) => x.finding(f),
            Output::Tshark(t) => t.finding(f),
        }
    }
}

/// `lwarscope -r FILE...` (or `-i IFACE`): analyses `source` and writes the
/// report, packet lines or JSON to `out`. A capture error after some frames is
/// returned after the results so far are written.
pub fn report<W: Write>(
    args: &ReportArgs,
    source: &mut Source,
    files: &[PathBuf],
    interface: Option<&str>,
    layout: Layout,
    export: Option<(&Path, ExportFormat)>,
    out: impl FnOnce() -> W,
) -> Result<(), RunError> {
    check_out(args)?;
    if args.format == Format::Parquet {
        return Err(RunError::Usage(
            "--format parquet reads capture files (-r), each on its own".to_owned(),
        ));
    }
    let stream = Stream {
        source,
        files,
        interface,
        bar: true,
    };
    report_on(args, stream, layout, export, out)
}

/// One stream to report on: its source and what it reads.
struct Stream<'a> {
    source: &'a mut Source,
    files: &'a [PathBuf],
    interface: Option<&'a str>,
    /// Whether a large file may show its own progress bar and packet lines
    /// their note on the skipped traffic (not within a fleet run, which has
    /// one bar for the whole run).
    bar: bool,
}

/// The export of `-w FILE` with `-r`: its file created, with a comment saying
/// what it selects.
fn open_export(args: &ReportArgs, path: &Path, format: ExportFormat) -> Result<Export, RunError> {
    let comment = match args.selection() {
        Some(f) => format!("frames of packets selected by the display filter `{f}`"),
        None => "every frame read".to_owned(),
    };
    Ok(Export {
        writer: FrameWriter::create(path, format, Some(comment))?,
        filtered: args.selection().is_some() || !args.sessions.is_empty(),
    })
}

/// Finishes an export, with a note when a signal cut the reading short; the
/// fragment frames it no longer held.
fn close_export(
    mut x: Export,
    source: &Source,
) -> Result<u64, crate::capture::export::ExportError> {
    if let Some(signal) = source.interrupted_by() {
        x.writer.note(&format!(
            "lwarscope: interrupted by {} after frame {}: the files were not read to their end",
            crate::report::signal_name(signal),
            source.counts().frames
        ))?;
    }
    let dropped = x.writer.dropped();
    x.writer.finish().map(|_| dropped)
}

/// The output the options ask for, writing to what `take` creates (once:
/// `-q` and the tables create none before the end).
fn choose_output<W: Write>(
    args: &ReportArgs,
    fields: Option<FieldsFormat>,
    (options, batched): (PacketOptions, bool),
    lines: bool,
    filter: Option<Filter>,
    take: &mut impl FnMut() -> W,
) -> Result<Output<W>, RunError> {
    Ok(match (fields, args.format) {
        _ if args.quiet => Output::Quiet,
        _ if let Some(shape) = tshark_shape(args) => {
            Output::Tshark(TsharkWriter::new(take(), shape, filter.clone()))
        }
        (Some(format), _) => {
            // Checked before the writer is created: an unknown -e writes nothing.
            FieldsWriter::new(io::sink(), &args.fields, format, None).map_err(RunError::Fields)?;
            Output::Fields(
                FieldsWriter::new(take(), &args.fields, format, filter)
                    .map_err(RunError::Fields)?,
            )
        }
        (None, format) => match format {
            Format::Table if lines => Output::Packets(
                PacketPrinter::new(take(), options, filter.clone()).batched(batched),
                args.tables,
            ),
            Format::Table => Output::Table,
            // -V: every field of every message, as the packet view's tree.
            Format::Json => Output::Json(JsonWriter::with_fields(
                take(),
                filter,
                args.packets || args.verbose,
                args.verbose,
            )),
            Format::Jsonl => Output::Jsonl(
                JsonlWriter::new(take(), filter)
                    .with_fields(args.verbose)
                    .batched(batched),
            ),
            Format::Parquet => {
                return Err(RunError::Usage(
                    "--format parquet reads capture files (-r), each on its own".to_owned(),
                ));
            }
        },
    })
}

/// The progress of reading `files` (a bar on a terminal when `bar`).
fn progress_for(files: &[PathBuf], bar: bool) -> Progress {
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let name = match files {
        [one] => crate::text::path(one).to_string(),
        _ => format!("{} files", files.len()),
    };
    match bar {
        true => Progress::for_file(&name, total),
        false => Progress::new(&name, total, false),
    }
}

/// The report of one stream: the output the options ask for, driven by the
/// run loop, then written with the statistics; the export's frames, if asked.
fn report_on<W: Write>(
    args: &ReportArgs,
    stream: Stream<'_>,
    layout: Layout,
    export: Option<(&Path, ExportFormat)>,
    out: impl FnOnce() -> W,
) -> Result<(), RunError> {
    let (filter, fields) = stream_options(args, export.is_some())?;
    // The writer is created once: lazily for the tables (written at the end).
    let mut out = Some(out);
    let mut take = || out.take().map(|f| f()).expect("the writer is taken once");
    // With an export, the display filter picks what is written: packet lines
    // only when asked for.
    let lines = match export {
        Some(_) => args.packets || args.verbose || args.hex,
        None => args.packet_lines(),
    };
    let options = PacketOptions {
        verbose: args.verbose,
        hex: args.hex,
        color: layout.color,
        time: args.time_format,
    };
    // Lines no one reads as they come are handed over in batches.
    let batched = !(stream.source.is_live() || args.line_buffered || io::stdout().is_terminal());
    let output = choose_output(
        args,
        fields,
        (options, batched),
        lines,
        filter.clone(),
        &mut take,
    )?;
    let progress = progress_for(stream.files, stream.bar);
    // The report's own counts follow -Y and --window where they are shown.
    let shown = counts_shown(args, lines, fields.is_some());
    let mut analysis = analysis_for(args, output, filter.clone().filter(|_| shown));
    let mut export = match export {
        Some((path, format)) => {
            analysis.select(filter);
            Some(open_export(args, path, format)?)
        }
        None => None,
    };
    let source = stream.source;
    let result =
        drive(source, &mut analysis, Some(&progress), export.as_mut()).map_err(RunError::from);
    // The export is finished before the report: a write error is an error.
    let exported = export.map(|x| close_export(x, source)).transpose();
    progress.finish();
    let info = run_info(source, stream.files, stream.interface);
    let (outcome, results) = analysis.finish(info);
    write_results(args, results, &outcome, layout, stream.bar, take)?;
    if let Some(missing) = missing_session(&args.sessions, &outcome) {
        result?;
        return Err(RunError::Usage(format!(
            "--session {missing}: no such session in this capture (the report's first column numbers them)"
        )));
    }
    warn_dropped(exported?);
    result
}

/// A stream's options checked against each other: the display filter (`-Y`,
/// and `--window` within it) and the field output's format.
fn stream_options(
    args: &ReportArgs,
    export: bool,
) -> Result<(Option<Filter>, Option<FieldsFormat>), RunError> {
    // -Y on its own first, so that an error points into what was typed.
    let mut filter = parse_filter(args.display_filter.as_deref())?;
    if args.window.is_some() {
        filter = parse_filter(args.selection().as_deref())?;
    }
    quiet_applies(args, export)?;
    tables_apply(args)?;
    Ok((filter, fields_format(args)?))
}

/// The analysis of a stream: the engine of `-d`, `-o` and `-c`, the output
/// with the `-z` statistics and the `--plot` timeline beside it, limited to
/// `--session`'s sessions, and its counts to what `counted` (`-Y`,
/// `--window`) selects when given.
fn analysis_for<W: Write>(
    args: &ReportArgs,
    mut output: Output<W>,
    counted: Option<Filter>,
) -> Analysis<WithStats<W>> {
    let ahead = output.render_ahead();
    let mut analysis = Analysis::with_engine(
        args.decode.engine(),
        WithStats {
            output,
            stats: Stats::new(&args.stats),
            timeline: args.plot.as_ref().map(|_| Timeline::new()),
        },
    );
    if let Some(link) = ahead {
        analysis.render_ahead(link);
    }
    if !args.sessions.is_empty() {
        analysis.restrict(args.sessions.clone());
    }
    if let (Some(f), Some(label)) = (counted, args.selection()) {
        analysis.restrict_to(f, label);
    }
    analysis
}

/// Writes what the output writes at the end and the statistics, then (one
/// stream: `bar`) the note on the skipped traffic, and `--plot`'s picture.
fn write_results<W: Write>(
    args: &ReportArgs,
    results: WithStats<W>,
    outcome: &Outcome,
    layout: Layout,
    bar: bool,
    out: impl FnOnce() -> W,
) -> Result<(), RunError> {
    let WithStats {
        output,
        stats,
        timeline,
    } = results;
    // Packet lines and fields say on standard error what the report's
    // paragraph says of the traffic no protocol recognised (one stream only:
    // a fleet run's files would interleave their lines).
    let hint = match output {
        Output::Packets(..) | Output::Fields(_) | Output::Tshark(_) if bar => {
            crate::report::skipped::hint(&outcome.unknown)
        }
        _ => None,
    };
    output
        .finish(outcome, &stats, layout, out)
        .map_err(RunError::Output)?;
    if let Some(hint) = hint {
        let _ = writeln!(io::stderr(), "lwarscope: {hint}");
    }
    if let (Some(path), Some(timeline)) = (&args.plot, &timeline) {
        write_plot(path, timeline, outcome, &args.sessions)?;
    }
    Ok(())
}

/// Whether the report's own counts are shown (they follow -Y and --window
/// then): the tables, JSON, statistics; not packet lines or fields alone.
fn counts_shown(args: &ReportArgs, lines: bool, fields: bool) -> bool {
    let shown = match args.format {
        Format::Table => !lines || args.tables || !args.stats.is_empty(),
        Format::Json | Format::Jsonl => true,
        Format::Parquet => false,
    };
    shown && !fields && args.output_type.is_none()
}

/// What was read, and whether a signal cut it short.
fn run_info(source: &mut Source, files: &[PathBuf], interface: Option<&str>) -> CaptureInfo {
    let mut info = capture_info(&source.stats(), files, interface);
    if let Some(signal) = source.interrupted_by() {
        info.interrupted = true;
        info.interrupted_by = Some(crate::report::signal_name(signal));
    }
    info
}

/// A `--session` the capture does not have.
fn missing_session(
    sessions: &[crate::engine::SessionId],
    outcome: &Outcome,
) -> Option<crate::engine::SessionId> {
    sessions
        .iter()
        .copied()
        .find(|&id| !outcome.sessions.iter().any(|s| s.id == id))
}

/// Says on standard error when the export lacks fragment frames the hold no
/// longer kept.
fn warn_dropped(dropped: Option<u64>) {
    if let Some(dropped) = dropped
        && dropped > 0
    {
        let _ = writeln!(
            io::stderr(),
            "warning: {dropped} fragment frames of selected datagrams were no longer held (the hold keeps 16 MiB) and are missing from the export"
        );
    }
}

/// Whether `lwarscope -r` analyses each file on its own (a fleet run, see
/// [`report_each`]) rather than reading the files as one stream: with `-j`,
/// `--format parquet`, or an argument that is a directory or a glob.
pub fn each_file(args: &ReportArgs, read: &[PathBuf]) -> bool {
    args.jobs.is_some()
        || args.format == Format::Parquet
        || read.iter().any(|a| fleet::names_many(a))
}

/// Output of one file of a fleet run, held (in memory up to this size, then
/// in a temporary file) until the files before it are written.
const SPOOL_BYTES: usize = 1 << 20;

/// What one worker hands back for one file.
struct FileResult {
    name: String,
    /// The file's output, to copy out in order.
    output: Option<tempfile::SpooledTempFile>,
    error: Option<String>,
}

/// `lwarscope -r DIR|GLOB|FILE... -j N` and `--format parquet`: analyses each
/// file on its own engine, `-j` at a time, and writes each file's output to
/// `out` in the order of the files (each directory or glob sorted by path), so
/// that every `-j` prints the same bytes. Tables and packet lines are headed
/// `==> FILE <==`; `--format json` is one document,
/// `{"schema": N, "captures": [...]}` (N the JSON schema), each element the file's own document (or
/// `{"file", "error"}` for a file that could not be read); jsonl and `-T
/// fields` are each file's lines in turn. With `--format parquet` the tables
/// go to `--out` (see `report::parquet`, feature `parquet`) and a line per file to `out`.
///
/// A file that fails is reported on standard error (`error: FILE: why`) when
/// its turn comes, and the others are still analysed; the run then returns
/// [`RunError::Failed`].
pub fn report_each(
    args: &ReportArgs,
    read: &[PathBuf],
    each: Each<'_>,
    layout: Layout,
    out: &mut dyn Write,
) -> Result<(), RunError> {
    check_each(args, read)?;
    let files = fleet::expand(read)?;
    let jobs = args.jobs.unwrap_or_else(fleet::default_jobs);
    let job = FileJob {
        args,
        each,
        layout,
        #[cfg(feature = "parquet")]
        tables: match (args.format, &args.out) {
            (Format::Parquet, Some(dir)) => Some(crate::report::parquet::Tables::create(
                dir,
                parquet_interval(args)?,
            )?),
            _ => None,
        },
    };
    let progress = Progress::for_files(files.len());
    let mut written = InOrder::start(out, args);
    // Set when the output is closed (`| head`): the files not begun are skipped.
    let stop = std::sync::atomic::AtomicBool::new(false);
    fleet::run_in_order(
        files.len(),
        jobs,
        |i| {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return FileResult::named(&files[i].path);
            }
            let result = job.run(&files[i]);
            progress.inc();
            result
        },
        |_, r| {
            if !written.write(r) {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        },
    );
    progress.finish();
    written.finish(files.len())
}

/// The options a fleet run refuses, checked once before any file is read.
fn check_each(args: &ReportArgs, read: &[PathBuf]) -> Result<(), RunError> {
    check_out(args)?;
    check_output_options(args)?;
    for (set, flag, what) in [
        (args.plot.is_some(), "--plot", "draws one capture"),
        (
            !args.sessions.is_empty(),
            "--session",
            "names sessions of one capture",
        ),
    ] {
        if set {
            return Err(RunError::Usage(format!(
                "{flag} {what}: name the files without -j, a directory or a glob (read as one stream)"
            )));
        }
    }
    if read.iter().any(|f| f.as_os_str() == "-") {
        return Err(RunError::Usage(
            "-r -: standard input is one stream; -j, --format parquet, directories and globs read files".to_owned(),
        ));
    }
    Ok(())
}

impl FileResult {
    /// No output and no error yet, for `path`.
    fn named(path: &Path) -> FileResult {
        FileResult {
            name: path.display().to_string(),
            output: None,
            error: None,
        }
    }
}

/// What a worker of a fleet run does with each file: the same options, and
/// (`--format parquet`) the same tables.
struct FileJob<'a> {
    args: &'a ReportArgs,
    each: Each<'a>,
    layout: Layout,
    #[cfg(feature = "parquet")]
    tables: Option<crate::report::parquet::Tables>,
}

impl FileJob<'_> {
    /// Analyses one file on its own engine, its output spooled; its error
    /// named by the file.
    fn run(&self, input: &fleet::Input) -> FileResult {
        let path = &input.path;
        // The name as text output shows it (escaped); JSON keeps it whole.
        let name = crate::text::path(path).to_string();
        let mut result = FileResult::named(path);
        if let Some(why) = input.refused {
            result.error = Some(format!("{name}: {why}"));
            return result;
        }
        if let Err(e) = self.analyse(input, &mut result.output) {
            // Capture errors name their file already.
            let text = e.to_string();
            result.error = Some(match text.starts_with(&format!("{name}: ")) {
                true => text,
                false => format!("{name}: {text}"),
            });
        }
        result
    }

    /// Reads `input` with the capture options of the run into its output
    /// (its line of table rows, with `--format parquet`), spooled into
    /// `spool`.
    fn analyse(
        &self,
        input: &fleet::Input,
        spool: &mut Option<tempfile::SpooledTempFile>,
    ) -> Result<(), RunError> {
        let path = &input.path;
        let mut source = Source::files(std::slice::from_ref(path))?;
        if let Some(f) = self.each.file_filter {
            source.set_file_filter(f)?;
        }
        if let Some(d) = self.each.duration {
            source.stop_after(d);
        }
        #[cfg(feature = "parquet")]
        if let Some(tables) = &self.tables {
            let rows = crate::report::parquet::write_capture(
                tables,
                path,
                self.args.decode.engine(),
                |analysis| {
                    let driven = drive(&mut source, analysis, None, None).map_err(RunError::from);
                    let files = [path.to_path_buf()];
                    (driven, capture_info(&source.stats(), &files, None))
                },
            )?;
            let mut out = tempfile::spooled_tempfile(SPOOL_BYTES);
            let name = crate::text::path(path);
            writeln!(out, "{name}: {rows}").map_err(RunError::Output)?;
            *spool = Some(out);
            return Ok(());
        }
        let out = spool.insert(tempfile::spooled_tempfile(SPOOL_BYTES));
        let stream = Stream {
            source: &mut source,
            files: std::slice::from_ref(path),
            interface: None,
            bar: false,
        };
        report_on(self.args, stream, self.layout, None, || &mut *out)
    }
}

/// A fleet run's output, each file's in its turn: `==> FILE <==` heads, or
/// the one JSON document around them.
struct InOrder<'o> {
    out: &'o mut dyn Write,
    json: bool,
    headed: bool,
    first: bool,
    failed: usize,
    /// The first write error: nothing is written after it.
    output: io::Result<()>,
}

impl<'o> InOrder<'o> {
    /// Begins the output (the JSON document's head).
    fn start(out: &'o mut dyn Write, args: &ReportArgs) -> Self {
        let json = args.format == Format::Json;
        let output = if json {
            write!(
                out,
                "{{\"schema\":{},\"captures\":[",
                crate::report::json::SCHEMA
            )
        } else {
            Ok(())
        };
        InOrder {
            out,
            json,
            headed: args.format == Format::Table && args.output_type.is_none(),
            first: true,
            failed: 0,
            output,
        }
    }

    /// One file's result, in its turn: its error on standard error, its
    /// output copied out; whether the output still takes more.
    fn write(&mut self, r: FileResult) -> bool {
        if let Some(e) = &r.error {
            self.failed += 1;
            let _ = writeln!(io::stderr(), "error: {}", crate::text::printable_lines(e));
        }
        if self.output.is_ok() {
            self.output = write_file_result(self.out, r, self.json, self.headed, &mut self.first);
            return self.output.is_ok();
        }
        true
    }

    /// Ends the output (the JSON document's tail) and flushes it; the run's
    /// result of `total` files.
    fn finish(self, total: usize) -> Result<(), RunError> {
        let InOrder {
            out,
            json,
            failed,
            output,
            ..
        } = self;
        let done = output.and_then(|()| {
            if json {
                out.write_all(b"]}\n")?;
            }
            out.flush()
        });
        match done {
            Err(e) if is_broken_pipe(&e) => {}
            r => r.map_err(RunError::Output)?,
        }
        if failed > 0 {
            return Err(RunError::Failed { failed, total });
        }
        Ok(())
    }
}

/// The field output options (`-T fields`, `-e`, `-E`), checked against each
/// other and `--format`; `None` without `-T`.
fn fields_format(args: &ReportArgs) -> Result<Option<FieldsFormat>, RunError> {
    if let Some(name) = tshark_shape(args).map(|s| match s {
        Shape::Json => "json",
        Shape::Ek => "ek",
    }) {
        let refuse = |why: String| Err(RunError::Fields(why));
        if !args.fields.is_empty() || !args.fields_options.is_empty() {
            return refuse(format!(
                "-e and -E apply to -T fields; -T {name} writes every field: drop them"
            ));
        }
        if args.format != Format::Table {
            return refuse(format!("-T {name} is an output of its own: drop --format"));
        }
        if let Some(flag) = [
            (args.packets, "--packets"),
            (args.verbose, "-V"),
            (args.hex, "-x"),
        ]
        .into_iter()
        .find_map(|(set, flag)| set.then_some(flag))
        {
            return refuse(format!(
                "{flag} prints packet lines; -T {name} prints the packets as JSON: drop one of them"
            ));
        }
        return Ok(None);
    }
    Ok(match (args.output_type, args.fields.is_empty()) {
        (None, true) if args.fields_options.is_empty() => None,
        (None, _) => {
            return Err(RunError::Fields(
                "-e and -E apply to field output: add -T fields".to_owned(),
            ));
        }
        (Some(_), true) => {
            return Err(RunError::Fields(
                "-T fields needs at least one -e FIELD".to_owned(),
            ));
        }
        (Some(_), false) => {
            if args.format != Format::Table {
                return Err(RunError::Fields(
                    "-T fields is an output of its own: drop --format".to_owned(),
                ));
            }
            Some(FieldsFormat::parse(&args.fields_options).map_err(RunError::Fields)?)
        }
    })
}

/// The output options of a fleet run, checked once before any file is read
/// (rather than failing on every file).
fn check_output_options(args: &ReportArgs) -> Result<(), RunError> {
    parse_filter(args.display_filter.as_deref())?;
    if args.format == Format::Parquet {
        return Ok(());
    }
    quiet_applies(args, false)?;
    if tshark_shape(args) == Some(Shape::Json) {
        return Err(RunError::Usage(
            "-T json writes one array of one stream's packets: name the files without -j, a directory or a glob, or use -T ek".to_owned(),
        ));
    }
    if let Some(format) = fields_format(args)? {
        FieldsWriter::new(io::sink(), &args.fields, format, None).map_err(RunError::Fields)?;
    }
    Ok(())
}

/// `--tables` is refused where the tables are printed anyway, or cannot be.
fn tables_apply(args: &ReportArgs) -> Result<(), RunError> {
    if !args.tables {
        return Ok(());
    }
    let refuse = |why: &str| Err(RunError::Usage(why.to_owned()));
    if args.format != Format::Table {
        return refuse(
            "--tables is for the table format: with --format json or jsonl the summary follows -Y and --window already",
        );
    }
    if args.quiet || args.output_type.is_some() {
        return refuse(
            "--tables prints the report's tables, which -q and -T fields leave out: drop one of them",
        );
    }
    if args.display_filter.is_none() && !(args.packets || args.verbose || args.hex) {
        return refuse(
            "--tables prints the tables of what -Y selects, or after --packets, -V or -x; without them the report is printed already",
        );
    }
    Ok(())
}

/// `-q` is refused where it would drop nothing or what was asked for.
fn quiet_applies(args: &ReportArgs, export: bool) -> Result<(), RunError> {
    if !args.quiet {
        return Ok(());
    }
    let refuse = |why: &str| Err(RunError::Usage(why.to_owned()));
    if args.stats.is_empty() && !export && !args.live_savefile && args.plot.is_none() {
        return refuse(
            "-q leaves nothing to print: add -z STATISTICS (or -w FILE, --plot FILE.svg)",
        );
    }
    if args.format != Format::Table {
        return refuse(
            "-q drops the report, and --format json/jsonl carry the -z statistics in the report: drop -q",
        );
    }
    if args.display_filter.is_some() && !export {
        return refuse(
            "-Y selects packet lines, which -q drops; to count what a filter selects, give it to the statistics: -z io,stat,1,FILTER, -z conv,FILTER or -z expert,FILTER",
        );
    }
    for (set, flag) in [
        (args.packets, "--packets"),
        (args.verbose, "-V"),
        (args.hex, "-x"),
        (args.output_type.is_some(), "-T"),
    ] {
        if set {
            return refuse(&format!("-q drops what {flag} prints: drop one of them"));
        }
    }
    Ok(())
}

/// Copies one file's output out, in its turn.
fn write_file_result(
    out: &mut dyn Write,
    r: FileResult,
    json: bool,
    headed: bool,
    first: &mut bool,
) -> io::Result<()> {
    use std::io::Seek;
    let mut spool = r.output;
    let empty = match spool.as_mut() {
        None => true,
        Some(s) => s.stream_position()? == 0,
    };
    if json {
        out.write_all(if *first { b"\n" } else { b",\n" })?;
        *first = false;
        if empty {
            let error = r.error.as_deref().unwrap_or("no output");
            crate::report::json::to_writer(
                &mut *out,
                &serde_json::json!({"file": r.name, "error": error}),
            )?;
            return out.write_all(b"\n");
        }
    } else if headed && !empty {
        writeln!(out, "==> {} <==", crate::text::printable(&r.name))?;
    }
    if let Some(mut s) = spool {
        s.rewind()?;
        io::copy(&mut s, out)?;
    }
    Ok(())
}

/// The output, the `-z` statistics and the `--plot` timeline, seeing the same
/// packets.
struct WithStats<W: Write> {
    output: Output<W>,
    stats: Stats,
    timeline: Option<Timeline>,
}

impl<W: Write> Observer for WithStats<W> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.stats.packet(e);
        if let Some(t) = &mut self.timeline {
            t.packet(e);
        }
        self.output.packet(e)
    }

    fn finding(&mut self, f: &Finding) {
        self.stats.finding(f);
        if let Some(t) = &mut self.timeline {
            t.finding(f);
        }
        self.output.finding(f);
    }
}

/// Writes `--plot`'s picture.
fn write_plot(
    path: &Path,
    timeline: &Timeline,
    outcome: &Outcome,
    sessions: &[usize],
) -> Result<(), RunError> {
    let sessions = crate::report::plot::pick(timeline, sessions);
    let svg = crate::report::plot::svg(timeline, outcome, &sessions)
        .map_err(|e| RunError::Usage(format!("--plot {}: {e}", crate::text::path(path))))?;
    std::fs::write(path, svg).map_err(|source| RunError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Analyses one file with no output, on `engine`: what `check` judges; with
/// a `window` (its filter and how it was given), the part within it.
pub fn analyse_file(
    path: &Path,
    engine: Engine,
    window: Option<(&Filter, &str)>,
) -> Result<Outcome, RunError> {
    let mut source = Source::files(&[path])?;
    let mut analysis = Analysis::with_engine(engine, ());
    if let Some((filter, label)) = window {
        analysis.restrict_to(filter.clone(), label.to_owned());
    }
    drive(&mut source, &mut analysis, None, None)?;
    let info = capture_info(&source.stats(), &[path.to_path_buf()], None);
    Ok(analysis.finish(info).0)
}

/// `lwarscope check FILE...`: prints one verdict line per file to `out` (and,
/// for more than one file, a total line), writes the JUnit file if asked, and
/// returns the exit status (0, 1 or 2). Files are analysed `-j` at a time, each
/// on its own engine; the verdicts come in the order of the files whatever the
/// number of workers. A file that cannot be analysed is an `ERROR` verdict and
/// the others are still checked. An error in the rules themselves, or a
/// pattern that matches nothing, is returned as an error (exit status 2 too).
pub fn check(args: &CheckArgs, out: &mut impl Write, color: bool) -> Result<u8, RunError> {
    let rules = Rules::from_args(args)?;
    let window = args.window.map(|w| w.expr());
    let window_filter = parse_filter(window.as_deref())?;
    let window = window_filter.as_ref().zip(window.as_deref());
    let text = args.format == crate::report::args::CheckFormat::Text;
    let files = fleet::expand(&args.files)?;
    if rules.limits.is_empty() && rules.expect.is_none() {
        let _ = writeln!(
            io::stderr(),
            "warning: no rules: every readable capture with packets of a known protocol passes; add --deny, --max, --min, --rules or --expect"
        );
    }
    // The ports an expected truth decodes as a protocol (as its simulator's
    // test does), then the user's own, which win on the same port.
    let decode_as: Vec<crate::proto::DecodeAs> = (rules.expect.iter())
        .flat_map(|(_, e)| e.decode_as().iter().copied())
        .chain(args.decode_as.iter().copied())
        .collect();
    let jobs = args.jobs.unwrap_or_else(fleet::default_jobs);
    let progress = Progress::for_files(files.len());
    let mut verdicts = Vec::with_capacity(files.len());
    let mut output = Ok(());
    fleet::run_in_order(
        files.len(),
        jobs,
        |i| {
            let path = &files[i].path;
            let name = path.display().to_string();
            let engine =
                crate::proto::engine_with(crate::proto::config_with(&args.preferences), &decode_as);
            let analysed = match files[i].refused {
                Some(why) => Err(RunError::Usage(why.to_owned())),
                None => analyse_file(path, engine, window),
            };
            // The skipped traffic's note, on standard error, for a capture
            // whose verdict does not already say it (no known packet).
            let mut hint = None;
            let verdict = match analysed {
                Ok(outcome) => {
                    if outcome.unknown.recognised > 0 {
                        hint = crate::report::skipped::hint(&outcome.unknown);
                    }
                    Verdict {
                        window: args.window.map(|w| w.to_string()),
                        ..rules.check(&name, &outcome)
                    }
                }
                Err(e) => {
                    // Capture errors name their file already.
                    let text = e.to_string();
                    let prefix = format!("{}: ", crate::text::printable(&name));
                    Verdict::error(&name, text.strip_prefix(&prefix).unwrap_or(&text))
                }
            };
            progress.inc();
            (verdict, hint)
        },
        |_, (verdict, hint)| {
            if let Some(hint) = hint {
                let _ = writeln!(
                    io::stderr(),
                    "lwarscope: {}: {hint}",
                    crate::text::printable(&verdict.file)
                );
            }
            if text && output.is_ok() {
                output = print_line(out, &verdict.line(color));
            }
            verdicts.push(verdict);
        },
    );
    progress.finish();
    output?;
    if text && verdicts.len() > 1 {
        print_line(out, &Total(&verdicts))?;
    }
    let code = exit_code(&verdicts);
    if !text {
        write_verdicts_json(out, &verdicts, code)?;
    }
    if let Some(path) = &args.junit {
        write_junit_file(path, &verdicts)?;
    }
    Ok(code)
}

/// `check --format json`'s one document, to `out` (a reader gone is a
/// normal end).
fn write_verdicts_json(
    out: &mut impl Write,
    verdicts: &[Verdict],
    code: u8,
) -> Result<(), RunError> {
    let doc = verdicts_json(verdicts, code);
    match crate::report::json::to_writer(&mut *out, &doc)
        .map_err(io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
    {
        Err(e) if is_broken_pipe(&e) => Ok(()),
        r => r.map_err(RunError::Output),
    }
}

/// `--junit FILE`: the verdicts as JUnit XML.
fn write_junit_file(path: &Path, verdicts: &[Verdict]) -> Result<(), RunError> {
    let write = || -> io::Result<()> {
        let mut f = io::BufWriter::new(std::fs::File::create(path)?);
        write_junit(&mut f, verdicts)?;
        f.flush()
    };
    write().map_err(|source| RunError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// `check --format json`: every verdict, the totals and the exit status.
fn verdicts_json(verdicts: &[Verdict], code: u8) -> serde_json::Value {
    let count = |f: &dyn Fn(&Verdict) -> bool| verdicts.iter().filter(|v| f(v)).count();
    serde_json::json!({
        "schema": crate::report::json::SCHEMA,
        "type": "check",
        "files": verdicts.iter().map(|v| serde_json::json!({
            "file": v.file,
            "window": v.window,
            "verdict": match (&v.error, v.passed()) {
                (Some(_), _) => "error",
                (None, true) => "pass",
                (None, false) => "fail",
            },
            "error": v.error,
            "rules": v.results,
        })).collect::<Vec<_>>(),
        "passed": count(&|v| v.passed()),
        "failed": count(&|v| v.error.is_none() && !v.passed()),
        "errors": count(&|v| v.error.is_some()),
        "exit_code": code,
    })
}

/// One line to the output; a closed pipe is not an error (the run goes on,
/// for its exit status and JUnit file).
fn print_line(out: &mut impl Write, line: &dyn std::fmt::Display) -> Result<(), RunError> {
    match writeln!(out, "{line}") {
        Err(e) if is_broken_pipe(&e) => Ok(()),
        r => r.map_err(RunError::Output),
    }
}

/// The total line of a check of several files: `10 files: 7 passed, 3 failed`
/// (and `, 1 error` when a file could not be analysed).
struct Total<'a>(&'a [Verdict]);

impl std::fmt::Display for Total<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let errors = self.0.iter().filter(|v| v.error.is_some()).count();
        let passed = self.0.iter().filter(|v| v.passed()).count();
        let failed = self.0.len() - errors - passed;
        write!(
            f,
            "{} files: {passed} passed, {failed} failed",
            self.0.len()
        )?;
        match errors {
            0 => Ok(()),
            1 => write!(f, ", 1 error"),
            n => write!(f, ", {n} errors"),
        }
    }
}
