//! `--format parquet --out DIR`: the results of each capture as Parquet
//! tables, for the engines that read them natively (DuckDB, ClickHouse, Spark,
//! Trino, pandas/pyarrow). Built with the `parquet` cargo feature.
//!
//! # Layout
//!
//! One directory per table, one file per capture per table:
//!
//! ```text
//! DIR/sessions/<capture stem>-<hash>.parquet
//! DIR/findings/<capture stem>-<hash>.parquet
//! DIR/intervals/<capture stem>-<hash>.parquet
//! ```
//!
//! `intervals` holds `-z io,stat`'s per-interval counts, per direction: of
//! the interval of `-z io,stat,INTERVAL` when given, of 1 s otherwise.
//!
//! `<hash>` is 16 hex digits of the capture's path as given (xxh3), so two
//! captures of the same name in different folders do not collide, and a run
//! again over the same captures replaces their files. Every row carries its
//! capture's path in the `capture` column: `read_parquet('DIR/sessions/*.parquet')`
//! (DuckDB), `file('DIR/sessions/*.parquet', Parquet)` (ClickHouse) or
//! `spark.read.parquet("DIR/sessions")` read a whole fleet with no partition
//! scheme to declare. Files are written under a temporary name and renamed
//! when complete; a capture that fails (unreadable, cut off) leaves no file,
//! and its error is reported.
//!
//! Counts are `INT64` (signed, as Spark and Trino want), times are
//! `TIMESTAMP(MICROS, UTC)`, ratios and milliseconds `DOUBLE`; compression is
//! Snappy; row groups hold at most [`ROW_GROUP`] rows, so a worker's memory is
//! bounded whatever the number of findings. The schema of each table is
//! [`sessions_schema`], [`findings_schema`] and [`intervals_schema`] (snapshotted in the tests); the
//! docs/parquet.md lists the columns.

use super::stats::IoStat;
use super::{Analysis, CaptureInfo, DirView, Outcome, SessionView};
use crate::capture::Timestamp;
use crate::engine::{Engine, Finding, Flow, Observer, PacketEvent};
use arrow_array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per row group (and per batch of findings held before writing).
pub const ROW_GROUP: usize = 65_536;

/// Writing a table failed.
#[derive(Debug, thiserror::Error)]
pub enum ParquetError {
    #[error("{path}: {source}", path = crate::text::printable(.path))]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}", path = crate::text::printable(.path))]
    Parquet {
        path: String,
        #[source]
        source: parquet::errors::ParquetError,
    },
    #[error("building a record batch: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
}

/// The tables of a run: their directories under `--out`.
#[derive(Debug, Clone)]
pub struct Tables {
    sessions: PathBuf,
    findings: PathBuf,
    intervals: PathBuf,
    /// The length of an interval, in ns (0: the whole capture), and as written.
    interval_ns: u64,
    interval: String,
}

/// The interval of the `intervals` table when `-z io,stat` gives none: 1 s.
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;

impl Tables {
    /// Creates `DIR/sessions`, `DIR/findings` and `DIR/intervals` (and
    /// `DIR`) if missing; intervals of `interval_ns` (0: the whole capture).
    pub fn create(dir: &Path, interval_ns: u64) -> Result<Tables, ParquetError> {
        let tables = Tables {
            sessions: dir.join("sessions"),
            findings: dir.join("findings"),
            intervals: dir.join("intervals"),
            interval_ns,
            interval: format!("{}", interval_ns as f64 / 1e9),
        };
        for d in [&tables.sessions, &tables.findings, &tables.intervals] {
            std::fs::create_dir_all(d).map_err(|source| ParquetError::Io {
                path: d.display().to_string(),
                source,
            })?;
        }
        Ok(tables)
    }
}

/// The file name of a capture's part of each table.
pub fn file_name(capture: &Path) -> String {
    let stem: String = capture
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = xxhash_rust::xxh3::xxh3_64(capture.as_os_str().as_encoded_bytes());
    format!("{stem}-{hash:016x}.parquet")
}

/// What one capture added to the tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rows {
    pub sessions: usize,
    pub findings: usize,
    pub intervals: usize,
}

impl fmt::Display for Rows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} sessions rows, {} findings rows, {} intervals rows",
            self.sessions, self.findings, self.intervals
        )
    }
}

fn utc() -> Option<Arc<str>> {
    Some("UTC".into())
}

fn field(name: &str, ty: DataType, nullable: bool) -> Field {
    Field::new(name, ty, nullable)
}

fn time() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, utc())
}

/// `sessions`: one row per session and direction.
pub fn sessions_schema() -> SchemaRef {
    use DataType::{Float64 as F, Int64 as I, Utf8 as S};
    Arc::new(Schema::new(vec![
        field("capture", S, false),
        field("session", I, false),
        field("protocol", S, false),
        field("client", S, false),
        field("server", S, false),
        field("direction", S, false),
        field("player", S, true),
        field("player_name", S, true),
        field("state", S, false),
        field("start_time", time(), true),
        field("end_time", time(), true),
        field("duration_s", F, false),
        field("packets", I, false),
        field("bytes", I, false),
        field("messages", I, false),
        field("first_sends", I, false),
        field("repeats", I, false),
        field("resends", I, false),
        field("resend_rate", F, false),
        field("reordered", I, false),
        field("gaps", I, false),
        field("lost", I, false),
        field("malformed", I, false),
        field("unacked", I, false),
        field("loss", F, true),
        field("loss_lost", I, true),
        field("loss_expected", I, true),
        field("ack_delay_p50_ms", F, true),
        field("ack_delay_p95_ms", F, true),
        field("ack_delay_max_ms", F, true),
        field("ack_delay_samples", I, false),
        field("jitter_ms", F, false),
    ]))
}

/// `findings`: one row per finding, in the order of `--format json`.
pub fn findings_schema() -> SchemaRef {
    use DataType::{Int64 as I, Utf8 as S};
    Arc::new(Schema::new(vec![
        field("capture", S, false),
        field("kind", S, false),
        field("rule", S, true),
        field("severity", S, false),
        field("frame", I, false),
        field("time", time(), false),
        field("session", I, false),
        field("direction", S, false),
        field("seqno", I, true),
        field("detail", S, true),
        // What the finding stands for: a `lost` or `not-captured` finding,
        // every number of its gap (`Finding::numbers`, as the summary
        // counts); any other, 1. `sum(numbers)` by kind is the summary's.
        field("numbers", I, false),
    ]))
}

/// `intervals`: `-z io,stat`'s counts, one row per interval and direction.
pub fn intervals_schema() -> SchemaRef {
    use DataType::{Float64 as F, Int64 as I, Utf8 as S};
    Arc::new(Schema::new(vec![
        field("capture", S, false),
        field("interval", I, false),
        field("interval_s", F, false),
        field("start_s", F, false),
        field("end_s", F, false),
        field("start_time", time(), false),
        field("direction", S, false),
        field("packets", I, false),
        field("bytes", I, false),
        field("lost", I, false),
        field("resends", I, false),
        field("ack_delay_samples", I, false),
        field("ack_delay_mean_ms", F, true),
        field("ack_delay_max_ms", F, true),
    ]))
}

fn micros(ts: Timestamp) -> i64 {
    i64::try_from(ts.0 / 1_000).unwrap_or(i64::MAX)
}

fn int(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

fn dir_name(d: crate::engine::Direction) -> &'static str {
    match d {
        crate::engine::Direction::ClientToServer => "c2s",
        crate::engine::Direction::ServerToClient => "s2c",
    }
}

/// One row of the sessions table: a session, a direction and its counts.
type SessionRow<'a> = (&'a SessionView, crate::engine::Direction, &'a DirView);

/// The rows of the sessions table for one capture.
fn sessions_batch(capture: &str, sessions: &[SessionView]) -> Result<RecordBatch, ParquetError> {
    use crate::engine::Direction::{ClientToServer, ServerToClient};
    let rows: Vec<SessionRow<'_>> = sessions
        .iter()
        .flat_map(|s| [(s, ClientToServer, &s.c2s), (s, ServerToClient, &s.s2c)])
        .collect();
    let text = |f: &dyn Fn(&SessionRow<'_>) -> String| {
        Arc::new(StringArray::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let opt_text = |f: &dyn Fn(&SessionRow<'_>) -> Option<String>| {
        Arc::new(rows.iter().map(f).collect::<StringArray>()) as ArrayRef
    };
    let ints = |f: &dyn Fn(&DirView) -> u64| {
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| int(f(r.2))),
        )) as ArrayRef
    };
    let opt_ints = |f: &dyn Fn(&DirView) -> Option<u64>| {
        Arc::new(rows.iter().map(|r| f(r.2).map(int)).collect::<Int64Array>()) as ArrayRef
    };
    let floats = |f: &dyn Fn(&SessionRow<'_>) -> f64| {
        Arc::new(Float64Array::from_iter_values(rows.iter().map(f))) as ArrayRef
    };
    let opt_floats = |f: &dyn Fn(&DirView) -> Option<f64>| {
        Arc::new(rows.iter().map(|r| f(r.2)).collect::<Float64Array>()) as ArrayRef
    };
    let times = |f: &dyn Fn(&DirView) -> Option<Timestamp>| {
        Arc::new(
            rows.iter()
                .map(|r| f(r.2).map(micros))
                .collect::<TimestampMicrosecondArray>()
                .with_timezone_opt(utc()),
        ) as ArrayRef
    };
    let columns = vec![
        text(&|_| capture.to_owned()),
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|r| int(r.0.id)),
        )) as ArrayRef,
        text(&|r| r.0.protocol.name.to_owned()),
        text(&|r| r.0.client.to_string()),
        text(&|r| r.0.server.to_string()),
        text(&|r| dir_name(r.1).to_owned()),
        opt_text(&|r| r.0.player.as_ref().map(|p| p.id.clone())),
        opt_text(&|r| r.0.player.as_ref().map(|p| p.name.clone())),
        text(&|r| r.0.state.to_owned()),
        times(&|d| d.start),
        times(&|d| d.end),
        floats(&|r| r.2.duration_secs),
        ints(&|d| d.packets),
        ints(&|d| d.bytes),
        ints(&|d| d.messages),
        ints(&|d| d.first_sends),
        ints(&|d| d.repeats),
        ints(&|d| d.resends),
        floats(&|r| crate::engine::summary::resend_rate(r.2.first_sends, r.2.repeats, r.2.resends)),
        ints(&|d| d.reordered),
        ints(&|d| d.gaps),
        ints(&|d| d.lost),
        ints(&|d| d.malformed),
        ints(&|d| d.unacked as u64),
        opt_floats(&|d| d.loss),
        opt_ints(&|d| d.loss_counts.map(|l| l.lost)),
        opt_ints(&|d| d.loss_counts.map(|l| l.expected)),
        opt_floats(&|d| d.ack_p50_ms),
        opt_floats(&|d| d.ack_p95_ms),
        opt_floats(&|d| d.ack_max_ms),
        ints(&|d| d.ack_samples),
        floats(&|r| r.2.jitter_ms),
    ];
    Ok(RecordBatch::try_new(sessions_schema(), columns)?)
}

/// The temporary files being written, for [`remove_temporaries`]: a run
/// stopped by a signal removes them rather than leave hidden `.tmp` files.
static TEMPORARIES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn temporaries() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|p| p.into_inner())
}

fn forget_temporary(tmp: &Path) {
    let mut t = temporaries();
    if let Some(i) = t.iter().position(|p| p == tmp) {
        t.swap_remove(i);
    }
}

/// Removes every table file still under its temporary name: what a signal
/// handler calls before the process exits. Files already complete stay.
pub fn remove_temporaries() {
    for tmp in temporaries().drain(..) {
        let _ = std::fs::remove_file(tmp);
    }
}

/// A table file being written: under a temporary name until it is complete.
struct TableFile {
    tmp: PathBuf,
    path: PathBuf,
    writer: ArrowWriter<File>,
}

impl TableFile {
    fn create(dir: &Path, name: &str, schema: SchemaRef) -> Result<TableFile, ParquetError> {
        let path = dir.join(name);
        let tmp = dir.join(format!(".{name}.tmp"));
        temporaries().push(tmp.clone());
        let file = File::create(&tmp).map_err(|source| {
            forget_temporary(&tmp);
            ParquetError::Io {
                path: tmp.display().to_string(),
                source,
            }
        })?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP))
            .set_created_by(format!("lwarscope {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = match ArrowWriter::try_new(file, schema, Some(props)) {
            Ok(w) => w,
            Err(source) => {
                let _ = std::fs::remove_file(&tmp);
                forget_temporary(&tmp);
                return Err(ParquetError::Parquet {
                    path: tmp.display().to_string(),
                    source,
                });
            }
        };
        Ok(TableFile { tmp, path, writer })
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), ParquetError> {
        self.writer
            .write(batch)
            .map_err(|source| ParquetError::Parquet {
                path: self.tmp.display().to_string(),
                source,
            })
    }

    /// Completes the file, still under its temporary name; on an error (a
    /// full disk) the temporary file is removed.
    fn close(self) -> Result<Closed, ParquetError> {
        match self.writer.close() {
            Ok(_) => Ok(Closed {
                tmp: self.tmp,
                path: self.path,
            }),
            Err(source) => {
                let _ = std::fs::remove_file(&self.tmp);
                forget_temporary(&self.tmp);
                Err(ParquetError::Parquet {
                    path: self.tmp.display().to_string(),
                    source,
                })
            }
        }
    }

    /// Drops an incomplete file.
    fn abandon(self) {
        drop(self.writer);
        let _ = std::fs::remove_file(&self.tmp);
        forget_temporary(&self.tmp);
    }
}

/// A table file complete under its temporary name, waiting for the capture's
/// other tables: a capture's tables are given their names all or none.
struct Closed {
    tmp: PathBuf,
    path: PathBuf,
}

impl Closed {
    fn discard(self) {
        let _ = std::fs::remove_file(&self.tmp);
        forget_temporary(&self.tmp);
    }

    /// Gives every file its name, or none: on a failed rename, the files
    /// renamed before it are removed, and the rest discarded.
    fn publish(files: Vec<Closed>) -> Result<(), ParquetError> {
        let mut done: Vec<PathBuf> = Vec::new();
        let mut files = files.into_iter();
        while let Some(f) = files.next() {
            if let Err(source) = std::fs::rename(&f.tmp, &f.path) {
                for p in &done {
                    let _ = std::fs::remove_file(p);
                }
                let path = f.path.display().to_string();
                f.discard();
                files.for_each(Closed::discard);
                return Err(ParquetError::Io { path, source });
            }
            forget_temporary(&f.tmp);
            done.push(f.path);
        }
        Ok(())
    }
}

/// The findings of one capture, written a row group at a time as they come.
struct FindingSink {
    capture: String,
    file: Option<TableFile>,
    held: Vec<Finding>,
    rows: usize,
    error: Option<ParquetError>,
}

impl FindingSink {
    fn flush(&mut self) {
        if self.held.is_empty() || self.error.is_some() {
            return;
        }
        let r = findings_batch(&self.capture, &self.held).and_then(|batch| match &mut self.file {
            Some(f) => f.write(&batch),
            None => Ok(()),
        });
        self.rows += self.held.len();
        self.held.clear();
        if let Err(e) = r {
            self.error = Some(e);
        }
    }
}

impl Observer for FindingSink {
    fn packet(&mut self, _: &PacketEvent<'_>) -> Flow {
        if self.error.is_some() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    fn finding(&mut self, f: &Finding) {
        self.held.push(*f);
        if self.held.len() >= ROW_GROUP {
            self.flush();
        }
    }
}

fn findings_batch(capture: &str, findings: &[Finding]) -> Result<RecordBatch, ParquetError> {
    let strs = |f: &dyn Fn(&Finding) -> &'static str| {
        Arc::new(StringArray::from_iter_values(findings.iter().map(f))) as ArrayRef
    };
    let ints = |f: &dyn Fn(&Finding) -> u64| {
        Arc::new(Int64Array::from_iter_values(
            findings.iter().map(|x| int(f(x))),
        )) as ArrayRef
    };
    let columns = vec![
        Arc::new(StringArray::from_iter_values(
            findings.iter().map(|_| capture),
        )) as ArrayRef,
        strs(&|f| f.kind.name()),
        Arc::new(
            findings
                .iter()
                .map(|f| f.rule.map(|r| r.name()))
                .collect::<StringArray>(),
        ) as ArrayRef,
        strs(&|f| f.severity().name()),
        ints(&|f| f.frame),
        Arc::new(
            TimestampMicrosecondArray::from_iter_values(findings.iter().map(|f| micros(f.ts)))
                .with_timezone_opt(utc()),
        ) as ArrayRef,
        ints(&|f| f.session as u64),
        strs(&|f| dir_name(f.direction)),
        Arc::new(
            findings
                .iter()
                .map(|f| f.seqno.map(i64::from))
                .collect::<Int64Array>(),
        ) as ArrayRef,
        Arc::new(
            findings
                .iter()
                .map(|f| {
                    (!matches!(f.detail, crate::engine::Detail::None)).then(|| f.detail.to_string())
                })
                .collect::<StringArray>(),
        ) as ArrayRef,
        ints(&|f| f.numbers()),
    ];
    Ok(RecordBatch::try_new(findings_schema(), columns)?)
}

/// One row of the intervals table: index, start and end (s from the first
/// packet), direction, counts.
type IntervalRow = (i64, f64, f64, &'static str, super::stats::DirInterval);

/// Writes the intervals of one capture, a row group at a time.
fn write_intervals(
    tables: &Tables,
    name: &str,
    capture: &str,
    io: &IoStat,
) -> Result<(usize, Closed), ParquetError> {
    use crate::engine::AckTally;
    let mut file = TableFile::create(&tables.intervals, name, intervals_schema())?;
    let start_us = io.start().map_or(0, micros);
    let length_s = match io.interval_ns() {
        0 => io.rows().next().map_or(0.0, |r| r.end_secs - r.start_secs),
        n => n as f64 / 1e9,
    };
    let mut rows = 0;
    let mut held: Vec<IntervalRow> = Vec::new();
    let flush = |held: &mut Vec<IntervalRow>, file: &mut TableFile| -> Result<(), ParquetError> {
        if held.is_empty() {
            return Ok(());
        }
        let mean = |a: &AckTally| (a.count > 0).then(|| a.sum_ns as f64 / f64::from(a.count) / 1e6);
        let max = |a: &AckTally| (a.count > 0).then(|| a.max_ns as f64 / 1e6);
        let ints = |f: &dyn Fn(&super::stats::DirInterval) -> u64| {
            Arc::new(Int64Array::from_iter_values(
                held.iter().map(|r| int(f(&r.4))),
            )) as ArrayRef
        };
        let columns = vec![
            Arc::new(StringArray::from_iter_values(held.iter().map(|_| capture))) as ArrayRef,
            Arc::new(Int64Array::from_iter_values(held.iter().map(|r| r.0))) as ArrayRef,
            Arc::new(Float64Array::from_iter_values(
                held.iter().map(|_| length_s),
            )) as ArrayRef,
            Arc::new(Float64Array::from_iter_values(held.iter().map(|r| r.1))) as ArrayRef,
            Arc::new(Float64Array::from_iter_values(held.iter().map(|r| r.2))) as ArrayRef,
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    held.iter()
                        .map(|r| start_us.saturating_add((r.1 * 1e6).round() as i64)),
                )
                .with_timezone_opt(utc()),
            ) as ArrayRef,
            Arc::new(StringArray::from_iter_values(held.iter().map(|r| r.3))) as ArrayRef,
            ints(&|d| d.packets),
            ints(&|d| d.bytes),
            ints(&|d| d.lost),
            ints(&|d| d.resends),
            ints(&|d| u64::from(d.acks.count)),
            Arc::new(
                held.iter()
                    .map(|r| mean(&r.4.acks))
                    .collect::<Float64Array>(),
            ) as ArrayRef,
            Arc::new(
                held.iter()
                    .map(|r| max(&r.4.acks))
                    .collect::<Float64Array>(),
            ) as ArrayRef,
        ];
        let batch = RecordBatch::try_new(intervals_schema(), columns)?;
        held.clear();
        file.write(&batch)
    };
    let mut result = Ok(());
    for (i, r) in io.rows().enumerate() {
        for (dir, d) in [("c2s", &r.c2s), ("s2c", &r.s2c)] {
            held.push((int(i), r.start_secs, r.end_secs, dir, d.counts));
            rows += 1;
        }
        if held.len() >= ROW_GROUP {
            result = flush(&mut held, &mut file);
            if result.is_err() {
                break;
            }
        }
    }
    if result.is_ok() {
        result = flush(&mut held, &mut file);
    }
    match result {
        Ok(()) => Ok((rows, file.close()?)),
        Err(e) => {
            file.abandon();
            Err(e)
        }
    }
}

/// What a capture's analysis feeds: its findings, and the intervals.
pub struct Collect {
    findings: FindingSink,
    io: IoStat,
}

impl Observer for Collect {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.io.packet(e);
        self.findings.packet(e)
    }

    fn finding(&mut self, f: &Finding) {
        self.io.finding(f);
        self.findings.finding(f);
    }
}

/// Analyses one capture on `engine` and writes its rows to `tables`: `drive`
/// (the run's loop, which this renderer does not know) feeds it the capture
/// and says how it ended, with what was read. A capture that fails leaves no
/// file behind.
pub fn write_capture<E: From<ParquetError>>(
    tables: &Tables,
    path: &Path,
    engine: Engine,
    drive: impl FnOnce(&mut Analysis<Collect>) -> (Result<(), E>, CaptureInfo),
) -> Result<Rows, E> {
    let capture = path.display().to_string();
    let name = file_name(path);
    let findings = TableFile::create(&tables.findings, &name, findings_schema())?;
    let sink = FindingSink {
        capture: capture.clone(),
        file: Some(findings),
        held: Vec::new(),
        rows: 0,
        error: None,
    };
    let io = IoStat::new(tables.interval_ns, tables.interval.clone(), Vec::new());
    let mut analysis = Analysis::with_engine(engine, Collect { findings: sink, io });
    let (driven, info) = drive(&mut analysis);
    let (
        outcome,
        Collect {
            findings: mut sink,
            io,
        },
    ) = analysis.finish(info);
    sink.flush();
    let file = sink.file.take();
    let written = match (driven, sink.error.take()) {
        (Err(e), _) => Err(e),
        (Ok(()), Some(e)) => Err(e.into()),
        (Ok(()), None) => Ok(()),
    };
    let Some(file) = file else {
        return written.map(|()| Rows::default());
    };
    if let Err(e) = written {
        file.abandon();
        return Err(e);
    }
    // The three tables are completed under their temporary names, then named
    // together: a capture has all its tables or none (a full disk, a failed
    // rename), and no temporary file is left.
    let findings = file.close()?;
    let (sessions, sessions_file) = match write_sessions(tables, &name, &capture, &outcome) {
        Ok(done) => done,
        Err(e) => {
            findings.discard();
            return Err(e.into());
        }
    };
    let (intervals, intervals_file) = match write_intervals(tables, &name, &capture, &io) {
        Ok(done) => done,
        Err(e) => {
            findings.discard();
            sessions_file.discard();
            return Err(e.into());
        }
    };
    Closed::publish(vec![sessions_file, intervals_file, findings])?;
    Ok(Rows {
        sessions,
        findings: sink.rows,
        intervals,
    })
}

fn write_sessions(
    tables: &Tables,
    name: &str,
    capture: &str,
    outcome: &Outcome,
) -> Result<(usize, Closed), ParquetError> {
    let batch = sessions_batch(capture, &outcome.sessions)?;
    let mut file = TableFile::create(&tables.sessions, name, sessions_schema())?;
    if let Err(e) = file.write(&batch) {
        file.abandon();
        return Err(e);
    }
    Ok((batch.num_rows(), file.close()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(schema: &Schema) -> String {
        schema
            .fields()
            .iter()
            .map(|f| {
                format!(
                    "{} {}{}\n",
                    f.name(),
                    f.data_type(),
                    if f.is_nullable() { " NULL" } else { "" }
                )
            })
            .collect()
    }

    #[test]
    fn the_schemas_are_as_documented() {
        insta::assert_snapshot!("sessions_schema", describe(&sessions_schema()));
        insta::assert_snapshot!("findings_schema", describe(&findings_schema()));
        insta::assert_snapshot!("intervals_schema", describe(&intervals_schema()));
    }

    #[test]
    fn the_files_hold_the_documented_parquet_types() {
        use parquet::file::reader::FileReader;
        let dir = tempfile::tempdir().unwrap();
        let tables = Tables::create(dir.path(), DEFAULT_INTERVAL_NS).unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/sim-loss.pcap");
        let mut source = crate::capture::Source::files(&[&path]).unwrap();
        let engine = crate::proto::engine(crate::engine::TrackerConfig::default());
        // The run's error, as the binary's command keeps it (a layer above).
        #[derive(Debug)]
        #[allow(dead_code)]
        enum Failed {
            Drive(crate::run::DriveError),
            Parquet(ParquetError),
        }
        impl From<ParquetError> for Failed {
            fn from(e: ParquetError) -> Self {
                Failed::Parquet(e)
            }
        }
        let rows = write_capture(&tables, &path, engine, |analysis| {
            let driven =
                crate::run::drive(&mut source, analysis, None, None).map_err(Failed::Drive);
            (
                driven,
                crate::report::capture_info(&source.stats(), std::slice::from_ref(&path), None),
            )
        })
        .unwrap();
        assert_eq!(rows.sessions, 6);
        assert!(rows.findings > 0);
        assert!(rows.intervals > 0);
        for table in ["sessions", "findings", "intervals"] {
            let file = File::open(dir.path().join(table).join(file_name(&path))).unwrap();
            let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
            let meta = reader.metadata().file_metadata();
            let want = match table {
                "sessions" => rows.sessions,
                "findings" => rows.findings,
                _ => rows.intervals,
            };
            assert_eq!(meta.num_rows(), want as i64, "{table}");
            let mut text = Vec::new();
            parquet::schema::printer::print_schema(&mut text, meta.schema());
            insta::assert_snapshot!(
                format!("{table}_parquet_schema"),
                String::from_utf8(text).unwrap()
            );
        }
    }

    #[test]
    fn file_names_are_stable_and_distinct() {
        let a = file_name(Path::new("captures/sim-clean.pcap"));
        assert!(
            a.starts_with("sim-clean-") && a.ends_with(".parquet"),
            "{a}"
        );
        assert_eq!(a, file_name(Path::new("captures/sim-clean.pcap")));
        assert_ne!(a, file_name(Path::new("other/sim-clean.pcap")));
        assert!(file_name(Path::new("x/a b*.pcap")).starts_with("a_b_-"));
    }
}
