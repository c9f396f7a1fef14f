//! Runs a capture source through the tracker into the chosen output: what the
//! binary calls for `lwarscope -r FILE` and `lwarscope check`.

use super::check::{Rules, Verdict, exit_code, write_junit};
use super::fields::{FieldsFormat, FieldsWriter};
use super::json::{JsonWriter, JsonlWriter};
use super::packets::{PacketOptions, PacketPrinter, is_broken_pipe};
use super::progress::Progress;
use super::stats::Stats;
use super::table::{Layout, render};
use super::{Analysis, CaptureInfo, CheckArgs, Filter, FilterError, Format, Outcome, ReportArgs};
use crate::capture::export::{ExportFormat, FrameWriter};
use crate::capture::{CaptureError, CaptureStats, FrameClass, Source};
use crate::engine::{Engine, Finding, Flow, Observer, PacketEvent, TrackerConfig};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    Check(#[from] super::check::CheckError),
    #[error("{path}: {source}")]
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

/// The capture counters in the report's terms.
pub fn capture_info(
    stats: &CaptureStats,
    files: &[PathBuf],
    interface: Option<&str>,
) -> CaptureInfo {
    let c = &stats.counts;
    CaptureInfo {
        files: files.iter().map(|f| f.display().to_string()).collect(),
        interface: interface.map(str::to_owned),
        start: None,
        end: None,
        frames: c.frames,
        lwar_packets: 0,
        protocols: Default::default(),
        other: c.not_udp + c.not_ip + c.truncated,
        filtered: c.filtered,
        broken: c.malformed,
        truncated: 0,
        malformed: 0,
        reassembled: c.reassembled,
        incomplete: c.incomplete,
        received: stats.pcap.map(|p| p.received),
        kernel_dropped: stats.pcap.map(|p| p.dropped_by_kernel),
        interface_dropped: stats.pcap.map(|p| p.dropped_by_interface),
    }
}

/// What an export writes, and where (`-w FILE` with `-r`).
pub struct Export {
    pub writer: FrameWriter,
    /// Only the frames of packets that pass the display filter; every frame
    /// when there is none.
    pub filtered: bool,
}

/// Feeds every datagram of a registered protocol in `source` to `analysis`,
/// until the source ends or the output says stop; writes the frames an export
/// selects. For live captures, warns on standard error as soon as libpcap
/// reports drops.
pub fn drive<O: Observer>(
    source: &mut Source,
    analysis: &mut Analysis<O>,
    progress: Option<&Progress>,
    mut export: Option<&mut Export>,
) -> Result<(), RunError> {
    let live = source.is_live();
    let mut next_check = Instant::now() + Duration::from_secs(1);
    let mut warned = 0;
    let mut n = 0u64;
    loop {
        for w in source.take_warnings() {
            let _ = writeln!(io::stderr(), "warning: {w}");
        }
        let Some(frame) = source.next_frame()? else {
            return Ok(());
        };
        match export.as_deref_mut() {
            None => {
                if let FrameClass::Udp(d) = &frame.class
                    && analysis.datagram(d) == Flow::Stop
                {
                    return Ok(());
                }
            }
            Some(x) => {
                if export_frame(x, analysis, &frame)? == Flow::Stop {
                    return Ok(());
                }
            }
        }
        n += 1;
        if n.is_multiple_of(4096)
            && let Some(p) = progress
        {
            let c = source.counts();
            // Captured bytes plus the 16-byte record headers: close to the file offset.
            p.set(c.bytes + 16 * c.frames);
        }
        if live && Instant::now() >= next_check {
            next_check = Instant::now() + Duration::from_secs(1);
            if let Some(p) = source.stats().pcap {
                let dropped = p.dropped_by_kernel + p.dropped_by_interface;
                if dropped > warned {
                    let _ = writeln!(
                        io::stderr(),
                        "warning: {dropped} packets dropped before analysis so far (kernel {}, interface {})",
                        p.dropped_by_kernel,
                        p.dropped_by_interface
                    );
                    warned = dropped;
                }
            }
        }
    }
}

/// Analyses a frame for an export and writes it if selected: a datagram that
/// passes the display filter (any frame when there is none), with its held
/// fragments; what the output wants next.
fn export_frame<O: Observer>(
    x: &mut Export,
    analysis: &mut Analysis<O>,
    frame: &crate::capture::Frame<'_>,
) -> Result<Flow, RunError> {
    match &frame.class {
        FrameClass::Udp(d) => {
            let before = analysis.recognised();
            let flow = analysis.datagram(d);
            let recognised = analysis.recognised() > before;
            if (recognised && analysis.selected()) || (!recognised && !x.filtered) {
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

/// The output chosen by the options.
enum Output<W: Write> {
    /// `-q`: only the statistics.
    Quiet,
    Table,
    Packets(PacketPrinter<W>),
    Json(JsonWriter<W>),
    Jsonl(JsonlWriter<W>),
    Fields(FieldsWriter<W>),
}

impl<W: Write> Output<W> {
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
            Output::Packets(p) => text(p.finish()),
            Output::Json(j) => j.finish_with(o, &stats.json(o)).map(drop),
            Output::Jsonl(j) => j.finish_with(o, &stats.json(o)).map(drop),
            Output::Fields(f) => text(f.finish()),
        };
        match r {
            Err(e) if is_broken_pipe(&e) => Ok(()),
            r => r,
        }
    }
}

impl<W: Write> Observer for Output<W> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        match self {
            Output::Quiet | Output::Table => Flow::Continue,
            Output::Packets(p) => p.packet(e),
            Output::Json(j) => j.packet(e),
            Output::Jsonl(j) => j.packet(e),
            Output::Fields(f) => f.packet(e),
        }
    }

    fn finding(&mut self, f: &Finding) {
        match self {
            Output::Quiet | Output::Table => {}
            Output::Packets(p) => p.finding(f),
            Output::Json(j) => j.finding(f),
            Output::Jsonl(j) => j.finding(f),
            Output::Fields(x) => x.finding(f),
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
    let filter = parse_filter(args.display_filter.as_deref())?;
    quiet_applies(args, export.is_some())?;
    let fields = match (args.output_type, args.fields.is_empty()) {
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
    };
    let filter_for_export = filter.clone();
    let options = PacketOptions {
        verbose: args.verbose,
        hex: args.hex,
        color: layout.color,
        time: args.time_format,
    };
    // The writer is created once: lazily for the tables (written at the end).
    let mut out = Some(out);
    let mut take = || out.take().map(|f| f()).expect("the writer is taken once");
    // With an export, the display filter picks what is written: packet lines
    // only when asked for.
    let lines = match export {
        Some(_) => args.packets || args.verbose || args.hex,
        None => args.packet_lines(),
    };
    let output = match (fields, args.format) {
        _ if args.quiet => Output::Quiet,
        (Some(format), _) => {
            // Checked before the writer is created: an unknown -e writes nothing.
            FieldsWriter::new(io::sink(), &args.fields, format, None).map_err(RunError::Fields)?;
            Output::Fields(
                FieldsWriter::new(take(), &args.fields, format, filter)
                    .map_err(RunError::Fields)?,
            )
        }
        (None, format) => match format {
            Format::Table if lines => Output::Packets(PacketPrinter::new(take(), options, filter)),
            Format::Table => Output::Table,
            // -V: every field of every message, as the packet view's tree.
            Format::Json => Output::Json(JsonWriter::with_fields(
                take(),
                filter,
                args.packets || args.verbose,
                args.verbose,
            )),
            Format::Jsonl => {
                Output::Jsonl(JsonlWriter::new(take(), filter).with_fields(args.verbose))
            }
        },
    };
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let name = match files {
        [one] => one.display().to_string(),
        _ => format!("{} files", files.len()),
    };
    let progress = Progress::for_file(&name, total);
    let mut analysis = Analysis::with_engine(
        args.decode.engine(),
        WithStats {
            output,
            stats: Stats::new(&args.stats),
        },
    );
    let mut export = match export {
        Some((path, format)) => {
            let comment = match &args.display_filter {
                Some(f) => format!("frames of packets selected by the display filter `{f}`"),
                None => "every frame read".to_owned(),
            };
            let writer = FrameWriter::create(path, format, Some(comment))?;
            analysis.select(filter_for_export);
            Some(Export {
                writer,
                filtered: args.display_filter.is_some(),
            })
        }
        None => None,
    };
    let result = drive(source, &mut analysis, Some(&progress), export.as_mut());
    // The export is finished before the report: a write error is an error.
    let exported = export
        .map(|x| {
            let dropped = x.writer.dropped();
            x.writer.finish().map(|_| dropped)
        })
        .transpose();
    progress.finish();
    let info = capture_info(&source.stats(), files, interface);
    let (outcome, WithStats { output, stats }) = analysis.finish(info);
    output
        .finish(&outcome, &stats, layout, take)
        .map_err(RunError::Output)?;
    if let Some(dropped) = exported?
        && dropped > 0
    {
        let _ = writeln!(
            io::stderr(),
            "warning: {dropped} fragment frames of selected datagrams were no longer held (the hold keeps 16 MiB) and are missing from the export"
        );
    }
    result
}

/// `-q` is refused where it would drop nothing or what was asked for.
fn quiet_applies(args: &ReportArgs, export: bool) -> Result<(), RunError> {
    if !args.quiet {
        return Ok(());
    }
    let refuse = |why: &str| Err(RunError::Usage(why.to_owned()));
    if args.stats.is_empty() && !export {
        return refuse("-q leaves nothing to print: add -z STATISTICS (or -w FILE)");
    }
    if args.format != Format::Table {
        return refuse(
            "-q drops the report, and --format json/jsonl carry the -z statistics in the report: drop -q",
        );
    }
    if args.display_filter.is_some() && !export {
        return refuse(
            "-Y selects packet lines, which -q drops; to count what a filter selects, give it to io,stat: -z io,stat,1,FILTER",
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

/// The output and the `-z` statistics, seeing the same packets.
struct WithStats<W: Write> {
    output: Output<W>,
    stats: Stats,
}

impl<W: Write> Observer for WithStats<W> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.stats.packet(e);
        self.output.packet(e)
    }

    fn finding(&mut self, f: &Finding) {
        self.stats.finding(f);
        self.output.finding(f);
    }
}

/// Analyses one file with no output, on `engine`: what `check` judges.
pub fn analyse_file(path: &Path, engine: Engine) -> Result<Outcome, RunError> {
    let mut source = Source::files(&[path])?;
    let mut analysis = Analysis::with_engine(engine, ());
    drive(&mut source, &mut analysis, None, None)?;
    let info = capture_info(&source.stats(), &[path.to_path_buf()], None);
    Ok(analysis.finish(info).0)
}

/// `lwarscope check FILE...`: prints one verdict line per file to `out`, writes
/// the JUnit file if asked, and returns the exit status (0, 1 or 2). An error in
/// the rules themselves is returned as an error (exit status 2 too).
pub fn check(args: &CheckArgs, out: &mut impl Write, color: bool) -> Result<u8, RunError> {
    let rules = Rules::from_args(args)?;
    if rules.limits.is_empty() && rules.expect.is_none() {
        let _ = writeln!(
            io::stderr(),
            "warning: no rules: every readable capture passes; add --deny, --max, --min, --rules or --expect"
        );
    }
    let text = args.format == super::args::CheckFormat::Text;
    let mut verdicts = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let name = path.display().to_string();
        let engine = crate::proto::engine_with(TrackerConfig::default(), &args.decode_as);
        let verdict = match analyse_file(path, engine) {
            Ok(outcome) => rules.check(&name, &outcome),
            Err(e) => {
                // Capture errors name their file already.
                let text = e.to_string();
                let prefix = format!("{name}: ");
                Verdict::error(&name, text.strip_prefix(&prefix).unwrap_or(&text))
            }
        };
        if text {
            match writeln!(out, "{}", verdict.line(color)) {
                Err(e) if is_broken_pipe(&e) => {}
                r => r.map_err(RunError::Output)?,
            }
        }
        verdicts.push(verdict);
    }
    let code = exit_code(&verdicts);
    if !text {
        let doc = verdicts_json(&verdicts, code);
        match serde_json::to_writer(&mut *out, &doc)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
        {
            Err(e) if is_broken_pipe(&e) => {}
            r => r.map_err(RunError::Output)?,
        }
    }
    if let Some(path) = &args.junit {
        let write = || -> io::Result<()> {
            let mut f = io::BufWriter::new(std::fs::File::create(path)?);
            write_junit(&mut f, &verdicts)?;
            f.flush()
        };
        write().map_err(|source| RunError::Write {
            path: path.display().to_string(),
            source,
        })?;
    }
    Ok(code)
}

/// `check --format json`: every verdict, the totals and the exit status.
fn verdicts_json(verdicts: &[Verdict], code: u8) -> serde_json::Value {
    let count = |f: &dyn Fn(&Verdict) -> bool| verdicts.iter().filter(|v| f(v)).count();
    serde_json::json!({
        "schema": super::json::SCHEMA,
        "type": "check",
        "files": verdicts.iter().map(|v| serde_json::json!({
            "file": v.file,
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
