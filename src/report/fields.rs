//! `-T fields -e FIELD ...`, as tshark: one line per displayed packet with the
//! values of the named fields, and `-t`, the time column of packet lines.
//!
//! ```text
//! $ lwarscope -r game.pcap -T fields -e frame.number -e lwar.seqno -E separator=/s
//! 1 1
//! 2 1,2,3,4,5
//! ```
//!
//! Nothing is allocated per packet: each column keeps its own text buffer,
//! cleared and refilled. Only what the columns show is walked: the columns
//! answer a protocol's walk, group by group (the header, a message type, a
//! node and its entries: `FieldSink::wants_any`), whether they show one of
//! its fields, and the walk skips the groups they do not (on lwar's
//! simulated capture, `-e lwar.seqno` skips every Update message).

use super::Filter;
use crate::capture::{Datagram, Timestamp};
use crate::engine::{Finding, Flow, Observer, PacketEvent};
use crate::proto::dissect::Dissector;
use crate::proto::dissect::WriteText as _;
use crate::proto::field::{Field, FieldDef, FieldSet, FieldSink, FieldType, GroupDefs, Value};
use crate::run::ahead::{AheadLink, Ends, Render, RenderAhead, SharedAhead};
use std::fmt::{self, Write as _};
use std::io::{self, Write};
use std::net::SocketAddr;

/// Fields of the frame rather than of a protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameField {
    Number,
    TimeEpoch,
    TimeRelative,
    Len,
    CapLen,
    IpSrc,
    IpDst,
    Ipv6Src,
    Ipv6Dst,
    UdpSrcPort,
    UdpDstPort,
    UdpLength,
    Session,
    Dir,
    Finding,
}

/// The frame-level field names, with what each is.
pub const FRAME_FIELDS: &[(&str, FrameField, &str)] = &[
    ("frame.number", FrameField::Number, "frame number, from 1"),
    (
        "frame.time_epoch",
        FrameField::TimeEpoch,
        "capture time, seconds since the Unix epoch (nanosecond digits)",
    ),
    (
        "frame.time_relative",
        FrameField::TimeRelative,
        "seconds since the first packet",
    ),
    (
        "frame.len",
        FrameField::Len,
        "the frame's length on the wire, link header included",
    ),
    (
        "frame.cap_len",
        FrameField::CapLen,
        "the frame's bytes the capture kept",
    ),
    ("ip.src", FrameField::IpSrc, "IPv4 source address"),
    ("ip.dst", FrameField::IpDst, "IPv4 destination address"),
    ("ipv6.src", FrameField::Ipv6Src, "IPv6 source address"),
    ("ipv6.dst", FrameField::Ipv6Dst, "IPv6 destination address"),
    ("udp.srcport", FrameField::UdpSrcPort, "UDP source port"),
    (
        "udp.dstport",
        FrameField::UdpDstPort,
        "UDP destination port",
    ),
    (
        "udp.length",
        FrameField::UdpLength,
        "UDP length: the header's 8 bytes and the payload",
    ),
    ("lwarscope.session", FrameField::Session, "session number"),
    ("lwarscope.dir", FrameField::Dir, "direction: c2s or s2c"),
    (
        "lwarscope.finding",
        FrameField::Finding,
        "the packet's finding labels (one occurrence each)",
    ),
];

/// What a column shows.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    Frame(FrameField),
    Proto(&'static FieldDef),
}

impl Source {
    /// The column of a `-e` name, if it names a field.
    pub fn resolve(name: &str) -> Option<Source> {
        if let Some((_, f, _)) = FRAME_FIELDS.iter().find(|(n, _, _)| *n == name) {
            return Some(Source::Frame(*f));
        }
        crate::proto::REGISTRY
            .iter()
            .flat_map(|p| p.info.dissector.field_defs())
            .find(|d| d.name == name)
            .map(Source::Proto)
    }
}

/// `-E occurrence=`: which values of a field that occurs several times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Occurrence {
    First,
    Last,
    #[default]
    All,
}

/// `-E quote=`: around each value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Quote {
    Double,
    Single,
    #[default]
    None,
}

/// The `-E` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldsFormat {
    pub header: bool,
    pub separator: char,
    pub quote: Quote,
    pub occurrence: Occurrence,
    pub aggregator: char,
}

impl Default for FieldsFormat {
    fn default() -> Self {
        FieldsFormat {
            header: false,
            separator: '\t',
            quote: Quote::None,
            occurrence: Occurrence::All,
            aggregator: ',',
        }
    }
}

/// `/t` a tab, `/s` a space, else one character.
fn parse_char(key: &str, v: &str) -> Result<char, String> {
    match v {
        "/t" => Ok('\t'),
        "/s" => Ok(' '),
        _ => {
            let mut chars = v.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if !c.is_control() => Ok(c),
                _ => Err(format!(
                    "-E {key}={v}: expected one character, /t (tab) or /s (space)"
                )),
            }
        }
    }
}

impl FieldsFormat {
    /// Applies one `-E KEY=VALUE`.
    pub fn set(&mut self, option: &str) -> Result<(), String> {
        let Some((key, v)) = option.split_once('=') else {
            return Err(format!("-E {option}: expected KEY=VALUE"));
        };
        match key {
            "header" => {
                self.header = match v {
                    "y" | "Y" => true,
                    "n" | "N" => false,
                    _ => return Err(format!("-E header={v}: expected y or n")),
                }
            }
            "separator" => self.separator = parse_char(key, v)?,
            "aggregator" => self.aggregator = parse_char(key, v)?,
            "quote" => {
                self.quote = match v {
                    "d" => Quote::Double,
                    "s" => Quote::Single,
                    "n" => Quote::None,
                    _ => return Err(format!("-E quote={v}: expected d, s or n")),
                }
            }
            "occurrence" => {
                self.occurrence = match v {
                    "f" => Occurrence::First,
                    "l" => Occurrence::Last,
                    "a" => Occurrence::All,
                    _ => return Err(format!("-E occurrence={v}: expected f, l or a")),
                }
            }
            _ => {
                return Err(format!(
                    "-E {key}: unknown option (header, separator, quote, occurrence, aggregator)"
                ));
            }
        }
        Ok(())
    }

    /// All the `-E` options, in order.
    pub fn parse<S: AsRef<str>>(options: &[S]) -> Result<Self, String> {
        let mut f = FieldsFormat::default();
        for o in options {
            f.set(o.as_ref())?;
        }
        Ok(f)
    }
}

/// One `-e` column and its text for the current packet.
#[derive(Clone)]
struct Column {
    name: String,
    source: Source,
    text: String,
    count: u32,
}

/// The columns, as a [`FieldSink`] filling their buffers.
#[derive(Clone)]
struct Columns {
    columns: Vec<Column>,
    format: FieldsFormat,
    /// For each field definition met, the columns that show it (bit `i`
    /// for column `i`): one lookup per field walked rather than a name
    /// comparison per column. A direct-mapped cache keyed by the
    /// definition's address (definitions are static, in arrays: neighbours
    /// fall in neighbouring slots), a miss computed again: cheaper than a
    /// hash map, which took a quarter of `-T fields`.
    wanted: Box<[(usize, u64); WANTED_SLOTS]>,
    /// For each group a walk asked of ([`FieldSink::wants_any`]): whether
    /// a column shows one of its fields, direct-mapped by the group's key
    /// as `wanted` is, a miss listed again.
    groups: Box<[(usize, bool); GROUP_SLOTS]>,
    /// For each protocol's registry a walk asked of
    /// ([`FieldSink::wanted`]): the fields a column shows, by the registry's
    /// address (one slot a protocol; a miss computed again).
    registries: Box<[(usize, FieldSet); REGISTRY_SLOTS]>,
}

/// Slots of [`Columns::registries`].
const REGISTRY_SLOTS: usize = 8;

/// Slots of [`Columns::wanted`].
const WANTED_SLOTS: usize = 512;
/// Slots of [`Columns::groups`].
const GROUP_SLOTS: usize = 128;

/// A value as `-T fields` shows it: text without its quotes (still escaped),
/// enums by name.
pub(super) fn write_value(out: &mut String, v: &Value<'_>) {
    match *v {
        Value::Text(bytes) => {
            let _ = crate::proto::field::text_escaped(out, bytes);
        }
        Value::Enum {
            name: Some(name), ..
        } => out.push_str(name),
        Value::Enum { raw, name: None } | Value::Unsigned(raw) => {
            out.push_str(itoa::Buffer::new().format(raw));
        }
        Value::Signed(n) => out.push_str(itoa::Buffer::new().format(n)),
        _ => {
            let _ = v.write_text(out);
        }
    }
}

impl Columns {
    /// Adds an occurrence to column `i`, written by `write`.
    fn occur(&mut self, i: usize, write: impl FnOnce(&mut String)) {
        let aggregator = self.format.aggregator;
        let c = &mut self.columns[i];
        match self.format.occurrence {
            Occurrence::First if c.count > 0 => return,
            Occurrence::Last => c.text.clear(),
            Occurrence::All if c.count > 0 => c.text.push(aggregator),
            _ => {}
        }
        c.count += 1;
        write(&mut c.text);
    }
}

impl Columns {
    /// Empties every column.
    fn clear(&mut self) {
        for c in &mut self.columns {
            c.text.clear();
            c.count = 0;
        }
    }

    /// The columns of protocol fields.
    fn of_fields(&mut self) -> impl Iterator<Item = &mut Column> {
        self.columns
            .iter_mut()
            .filter(|c| matches!(c.source, Source::Proto(_)))
    }

    /// Writes the protocol fields' columns as [`RenderFields`] hands them
    /// over: each one's occurrence count and text length (four bytes each,
    /// little-endian), then its text.
    fn put_fields(&mut self, out: &mut Vec<u8>) {
        for c in self.of_fields() {
            let len = u32::try_from(c.text.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&c.count.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(c.text.as_bytes());
        }
    }

    /// Fills the protocol fields' columns from what [`Columns::put_fields`]
    /// wrote; false (and those columns empty) if the bytes do not hold them.
    fn take_fields(&mut self, mut bytes: &[u8]) -> bool {
        fn word(bytes: &mut &[u8]) -> Option<u32> {
            let (w, rest) = bytes.split_first_chunk::<4>()?;
            *bytes = rest;
            Some(u32::from_le_bytes(*w))
        }
        let mut whole = true;
        for c in self.of_fields() {
            let text = word(&mut bytes)
                .zip(word(&mut bytes))
                .and_then(|(count, len)| {
                    let (text, rest) = bytes.split_at_checked(usize::try_from(len).ok()?)?;
                    bytes = rest;
                    Some((count, std::str::from_utf8(text).ok()?))
                });
            match text {
                Some((count, text)) if whole => {
                    c.count = count;
                    c.text.push_str(text);
                }
                _ => whole = false,
            }
        }
        if whole && bytes.is_empty() {
            return true;
        }
        for c in self.of_fields() {
            c.text.clear();
            c.count = 0;
        }
        false
    }

    /// Whether column `i` shows fields of definition `def`.
    fn shows(&self, i: usize, def: &FieldDef) -> bool {
        matches!(self.columns[i].source, Source::Proto(d) if std::ptr::eq(d, def) || d.name == def.name)
    }
}

impl Columns {
    /// The columns that show fields of `def`, bit `i` for column `i`
    /// (64 columns at most: [`FieldSink::field`] compares names past them).
    fn mask(&mut self, def: &'static FieldDef) -> u64 {
        let key = std::ptr::from_ref(def) as usize;
        let slot = (key / std::mem::size_of::<FieldDef>().max(1)) % WANTED_SLOTS;
        match self.wanted[slot] {
            (k, m) if k == key => m,
            _ => {
                let m = (0..self.columns.len().min(64))
                    .filter(|&i| self.shows(i, def))
                    .fold(0u64, |m, i| m | 1 << i);
                self.wanted[slot] = (key, m);
                m
            }
        }
    }
}

impl FieldSink for Columns {
    fn wants_any(&mut self, key: usize, defs: &GroupDefs<'_>) -> bool {
        let slot = (key / 8) % GROUP_SLOTS;
        match self.groups[slot] {
            (k, wanted) if k == key => wanted,
            _ => {
                let mut wanted = false;
                defs(&mut |def| {
                    wanted = wanted || (0..self.columns.len()).any(|i| self.shows(i, def));
                });
                self.groups[slot] = (key, wanted);
                wanted
            }
        }
    }

    fn wanted(&mut self, table: &'static [FieldDef]) -> FieldSet {
        let key = table.as_ptr() as usize;
        let slot = (key / 64) % REGISTRY_SLOTS;
        match self.registries[slot] {
            (k, set) if k == key => set,
            _ => {
                let set = FieldSet::of(table, |def| {
                    (0..self.columns.len()).any(|i| self.shows(i, def))
                });
                self.registries[slot] = (key, set);
                set
            }
        }
    }

    fn field(&mut self, field: Field<'_>) {
        if self.columns.len() > 64 {
            for i in 0..self.columns.len() {
                if self.shows(i, field.def) {
                    self.occur(i, |s| write_value(s, &field.value));
                }
            }
            return;
        }
        let mut rest = self.mask(field.def);
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            self.occur(i, |s| write_value(s, &field.value));
        }
    }
}

/// Writes one line per displayed packet with the values of the `-e` fields.
pub struct FieldsWriter<W: Write> {
    out: W,
    filter: Option<Filter>,
    cols: Columns,
    first_ts: Option<Timestamp>,
    header_done: bool,
    error: Option<io::Error>,
    /// The line being written, handed to `out` whole.
    line: Vec<u8>,
    /// The protocol fields' columns rendered ahead on a reader thread.
    ahead: AheadLink,
}

/// The columns of protocol fields, filled on the reader's thread
/// (`run::ahead`) and handed over as [`Columns::put_fields`] writes them.
struct RenderFields(Columns);

impl Render for RenderFields {
    fn render(
        &mut self,
        dissector: &'static dyn Dissector,
        d: &Datagram<'_>,
        out: &mut Vec<u8>,
        parts: &mut Ends,
    ) -> bool {
        self.0.clear();
        let decoded = dissector.fields(d.payload, &mut self.0).is_ok();
        self.0.put_fields(out);
        parts.end(out);
        decoded
    }
}

impl<W: Write> FieldsWriter<W> {
    /// The writer for `-e` names; an unknown name is refused, by name.
    pub fn new(
        out: W,
        names: &[String],
        format: FieldsFormat,
        filter: Option<Filter>,
    ) -> Result<Self, String> {
        let mut columns = Vec::with_capacity(names.len());
        for name in names {
            let source = Source::resolve(name).ok_or_else(|| {
                let names = (FRAME_FIELDS.iter().map(|(n, _, _)| *n)).chain(
                    (crate::proto::REGISTRY.iter())
                        .flat_map(|p| p.info.dissector.field_defs())
                        .filter(|d| d.ty != FieldType::Node)
                        .map(|d| d.name),
                );
                let hint = super::filter::nearest(name, names)
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                format!("-e {name}: no such field (see --list-fields, and --help for frame.*, ip.*, udp.*, lwarscope.*){hint}")
            })?;
            if let Source::Proto(def) = source
                && def.ty == FieldType::Node
            {
                return Err(format!(
                    "-e {name}: a node, with no value of its own (name one of its fields)"
                ));
            }
            columns.push(Column {
                name: name.clone(),
                source,
                text: String::with_capacity(64),
                count: 0,
            });
        }
        Ok(FieldsWriter {
            out,
            filter,
            cols: Columns {
                columns,
                format,
                wanted: Box::new([(0, 0); WANTED_SLOTS]),
                groups: Box::new([(0, false); GROUP_SLOTS]),
                registries: Box::new([(0, FieldSet::ALL); REGISTRY_SLOTS]),
            },
            first_ts: None,
            header_done: false,
            error: None,
            line: Vec::with_capacity(256),
            ahead: AheadLink::default(),
        })
    }

    /// What a reader thread may render ahead for this writer, linked to it
    /// (`run::ahead`): the columns of protocol fields, if any.
    pub(crate) fn render_ahead(&mut self) -> Option<RenderAhead> {
        self.cols.of_fields().next()?;
        let shared = SharedAhead::default();
        self.ahead = AheadLink::new(shared.clone());
        Some((Box::new(RenderFields(self.cols.clone())), shared))
    }

    /// Flushes and hands back the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if self.error.is_none()
            && let Err(e) = self.header().and_then(|()| self.out.flush())
        {
            self.error = Some(e);
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }

    fn header(&mut self) -> io::Result<()> {
        if !self.cols.format.header || self.header_done {
            return Ok(());
        }
        self.header_done = true;
        let sep = self.cols.format.separator;
        for (i, c) in self.cols.columns.iter().enumerate() {
            if i > 0 {
                write!(self.out, "{sep}")?;
            }
            self.out.write_all(c.name.as_bytes())?;
        }
        writeln!(self.out)
    }

    fn fill(&mut self, e: &PacketEvent<'_>) {
        let d = e.datagram;
        let first = *self.first_ts.get_or_insert(d.ts);
        let mut wants_proto = false;
        self.cols.clear();
        for i in 0..self.cols.columns.len() {
            match self.cols.columns[i].source {
                Source::Frame(f) => frame_field(&mut self.cols, i, f, e, first),
                _ => wants_proto = true,
            }
        }
        if wants_proto {
            let cols = &mut self.cols;
            let ahead = self
                .ahead
                .with(e, |parts| parts.is_some_and(|p| cols.take_fields(p.get(0))));
            if !ahead {
                let _ = e.dissector().fields(d.payload, cols);
            }
        }
    }

    fn write_line(&mut self) -> io::Result<()> {
        self.header()?;
        let format = self.cols.format;
        let quote: &[u8] = match format.quote {
            Quote::Double => b"\"",
            Quote::Single => b"'",
            Quote::None => b"",
        };
        let mut sep = [0u8; 4];
        let sep = format.separator.encode_utf8(&mut sep).as_bytes();
        // The line is put together, then written at once.
        let line = &mut self.line;
        line.clear();
        for (i, c) in self.cols.columns.iter().enumerate() {
            if i > 0 {
                line.extend_from_slice(sep);
            }
            if c.count > 0 {
                line.extend_from_slice(quote);
                line.extend_from_slice(c.text.as_bytes());
                line.extend_from_slice(quote);
            }
        }
        line.push(b'\n');
        self.out.write_all(line)
    }
}

impl<W: Write> Observer for FieldsWriter<W> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        if self.first_ts.is_none() {
            self.first_ts = Some(e.datagram.ts);
        }
        if self.error.is_none() && self.filter.as_ref().is_none_or(|f| f.matches(e)) {
            self.fill(e);
            if let Err(err) = self.write_line() {
                self.error = Some(err);
            }
        }
        if self.error.is_some() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    fn finding(&mut self, _f: &Finding) {}
}

/// `-t`: the time column of packet lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TimeFormat {
    /// Seconds since the first packet.
    #[default]
    #[value(name = "r")]
    Relative,
    /// Time of day (UTC: lwarscope does not read the local zone).
    #[value(name = "a")]
    Absolute,
    /// Date and time of day (UTC).
    #[value(name = "ad")]
    AbsoluteDate,
    /// Seconds since the previous packet read.
    #[value(name = "d")]
    Delta,
    /// Seconds since the previous packet displayed.
    #[value(name = "dd")]
    DeltaDisplayed,
    /// Seconds since the Unix epoch.
    #[value(name = "e")]
    Epoch,
    /// Time of day, UTC.
    #[value(name = "u")]
    Utc,
    /// Date and time of day, UTC.
    #[value(name = "ud")]
    UtcDate,
}

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The time column of one packet: `ts` with `first` (the first packet's),
/// `prev` (the previous packet read) and `prev_shown` (the previous packet
/// displayed), as `format` asks. Relative and delta times are right-aligned to
/// 11 columns as the packet lines always were.
pub fn time_column(
    format: TimeFormat,
    ts: Timestamp,
    first: Timestamp,
    prev: Timestamp,
    prev_shown: Timestamp,
) -> impl fmt::Display {
    fmt::from_fn(move |f| {
        let rel = |ns: u64| {
            fmt::from_fn(move |f| {
                write!(
                    f,
                    "{:>4}.{:06}",
                    ns / 1_000_000_000,
                    ns % 1_000_000_000 / 1_000
                )
            })
        };
        let secs = ts.nanos() / 1_000_000_000;
        let micros = ts.nanos() % 1_000_000_000 / 1_000;
        let (h, m, s) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
        match format {
            TimeFormat::Relative => write!(f, "{:>11}", rel(ts.since(first))),
            TimeFormat::Delta => write!(f, "{:>11}", rel(ts.since(prev))),
            TimeFormat::DeltaDisplayed => write!(f, "{:>11}", rel(ts.since(prev_shown))),
            TimeFormat::Epoch => write!(f, "{secs}.{micros:06}"),
            TimeFormat::Absolute | TimeFormat::Utc => {
                write!(f, "{h:02}:{m:02}:{s:02}.{micros:06}")
            }
            TimeFormat::AbsoluteDate | TimeFormat::UtcDate => {
                let (y, mo, d) = civil_from_days((secs / 86_400) as i64);
                write!(f, "{y:04}-{mo:02}-{d:02} {h:02}:{m:02}:{s:02}.{micros:06}")
            }
        }
    })
}

/// Column `i`, a field of the frame (`f`), of the packet `e`; `first`, the
/// first packet's time (`frame.time_relative`). Numbers are written without
/// `write!`: these are written for every packet.
fn frame_field(cols: &mut Columns, i: usize, f: FrameField, e: &PacketEvent<'_>, first: Timestamp) {
    let d = e.datagram;
    match f {
        FrameField::Number => cols.occur(i, |s| number(s, d.frame)),
        FrameField::TimeEpoch => cols.occur(i, |s| secs(s, d.ts.nanos())),
        FrameField::TimeRelative => cols.occur(i, |s| secs(s, d.ts.since(first))),
        FrameField::UdpSrcPort => cols.occur(i, |s| number(s, u64::from(d.src.port()))),
        FrameField::UdpDstPort => cols.occur(i, |s| number(s, u64::from(d.dst.port()))),
        FrameField::UdpLength => cols.occur(i, |s| number(s, d.payload_len as u64 + 8)),
        FrameField::Len => cols.occur(i, |s| number(s, u64::from(d.frame_len))),
        FrameField::CapLen => cols.occur(i, |s| number(s, u64::from(d.frame_cap_len))),
        FrameField::Session => cols.occur(i, |s| {
            let _ = write!(s, "{}", e.session);
        }),
        FrameField::Dir => cols.occur(i, |s| {
            let _ = write!(s, "{}", e.direction);
        }),
        FrameField::IpSrc | FrameField::IpDst | FrameField::Ipv6Src | FrameField::Ipv6Dst => {
            let addr = match f {
                FrameField::IpSrc | FrameField::Ipv6Src => d.src,
                _ => d.dst,
            };
            let v4 = matches!(f, FrameField::IpSrc | FrameField::IpDst);
            if let Some(a) = ip_of(addr, v4) {
                cols.occur(i, |s| write_ip(s, a));
            }
        }
        FrameField::Finding => {
            for finding in e.findings {
                cols.occur(i, |s| {
                    let _ = write!(s, "{}", finding.label());
                });
            }
        }
    }
}

/// The address of `a` if it is of the family asked (`v4`, else IPv6).
fn ip_of(a: SocketAddr, v4: bool) -> Option<std::net::IpAddr> {
    match (a, v4) {
        (SocketAddr::V4(a), true) => Some(std::net::IpAddr::V4(*a.ip())),
        (SocketAddr::V6(a), false) => Some(std::net::IpAddr::V6(*a.ip())),
        _ => None,
    }
}

/// An IPv4 address by its octets (without `write!`), an IPv6 one as Rust
/// writes it.
fn write_ip(s: &mut String, a: std::net::IpAddr) {
    match a {
        std::net::IpAddr::V4(v4) => {
            for (k, o) in v4.octets().into_iter().enumerate() {
                if k > 0 {
                    s.push('.');
                }
                s.push_str(itoa::Buffer::new().format(o));
            }
        }
        std::net::IpAddr::V6(_) => {
            let _ = write!(s, "{a}");
        }
    }
}

fn number(s: &mut String, n: u64) {
    s.push_str(itoa::Buffer::new().format(n));
}

/// Seconds with nine decimals.
fn secs(s: &mut String, ns: u64) {
    number(s, ns / 1_000_000_000);
    let mut b = itoa::Buffer::new();
    let frac = b.format(ns % 1_000_000_000);
    s.push('.');
    s.extend(std::iter::repeat_n('0', 9 - frac.len()));
    s.push_str(frac);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The protocol columns handed over from the reader's thread come back
    /// as they were; bytes that do not hold them leave them empty.
    #[test]
    fn protocol_columns_handed_over_come_back_whole_or_not_at_all() {
        let names = ["frame.number", "lwar.seqno", "lwar.type", "ip.src"].map(String::from);
        let w = FieldsWriter::new(io::sink(), &names, FieldsFormat::default(), None).unwrap();
        let mut cols = w.cols.clone();
        for (i, (text, count)) in [("7", 1), ("3,4", 2), ("", 1), ("10.0.0.1", 1)]
            .into_iter()
            .enumerate()
        {
            cols.columns[i].text.push_str(text);
            cols.columns[i].count = count;
        }
        let mut bytes = Vec::new();
        cols.put_fields(&mut bytes);
        let mut back = w.cols.clone();
        assert!(back.take_fields(&bytes));
        let shown = |c: &Columns| -> Vec<(String, u32)> {
            c.columns
                .iter()
                .map(|c| (c.text.clone(), c.count))
                .collect()
        };
        // Only the protocol fields' columns travel.
        assert_eq!(
            shown(&back),
            [("", 0), ("3,4", 2), ("", 1), ("", 0)].map(|(t, n)| (t.to_owned(), n))
        );
        for cut in 0..bytes.len() {
            let mut back = w.cols.clone();
            assert!(!back.take_fields(&bytes[..cut]), "cut at {cut}");
            assert!(
                back.columns
                    .iter()
                    .all(|c| c.text.is_empty() && c.count == 0)
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(!w.cols.clone().take_fields(&longer));
    }

    /// The columns want a group when one of its fields is a column, and
    /// remember the answer by the group's key.
    #[test]
    fn columns_want_the_groups_that_hold_their_fields() {
        let names = ["frame.number", "lwar.seqno"].map(String::from);
        let mut w = FieldsWriter::new(io::sink(), &names, FieldsFormat::default(), None).unwrap();
        let seqno = match Source::resolve("lwar.seqno") {
            Some(Source::Proto(d)) => d,
            _ => unreachable!(),
        };
        let ack = match Source::resolve("lwar.ack") {
            Some(Source::Proto(d)) => d,
            _ => unreachable!(),
        };
        let listed = std::cell::Cell::new(0);
        let with_seqno = |each: &mut dyn FnMut(&'static FieldDef)| {
            listed.set(listed.get() + 1);
            each(ack);
            each(seqno);
        };
        let without = |each: &mut dyn FnMut(&'static FieldDef)| each(ack);
        assert!(w.cols.wants_any(8, &with_seqno));
        assert!(!w.cols.wants_any(16, &without));
        assert!(w.cols.wants_any(8, &with_seqno));
        assert_eq!(listed.get(), 1, "asked again, answered from memory");
    }

    #[test]
    fn separators_take_a_character_tab_or_space() {
        let f = FieldsFormat::parse(&["separator=,"]).unwrap();
        assert_eq!(f.separator, ',');
        assert_eq!(
            FieldsFormat::parse(&["separator=/t"]).unwrap().separator,
            '\t'
        );
        assert_eq!(
            FieldsFormat::parse(&["separator=/s"]).unwrap().separator,
            ' '
        );
        assert_eq!(
            FieldsFormat::parse(&["aggregator=;"]).unwrap().aggregator,
            ';'
        );
        assert_eq!(
            FieldsFormat::parse(&["aggregator=/s"]).unwrap().aggregator,
            ' '
        );
        assert!(FieldsFormat::parse(&["separator=ab"]).is_err());
        assert!(FieldsFormat::parse(&["separator="]).is_err());
        assert!(FieldsFormat::parse(&["separator=\x07"]).is_err());
        assert_eq!(FieldsFormat::default().separator, '\t');
        assert_eq!(FieldsFormat::default().aggregator, ',');
    }

    #[test]
    fn quote_occurrence_and_header_parse() {
        let f = FieldsFormat::parse(&["quote=d", "occurrence=f", "header=y"]).unwrap();
        assert_eq!(f.quote, Quote::Double);
        assert_eq!(f.occurrence, Occurrence::First);
        assert!(f.header);
        assert_eq!(
            FieldsFormat::parse(&["quote=s"]).unwrap().quote,
            Quote::Single
        );
        assert_eq!(
            FieldsFormat::parse(&["quote=n"]).unwrap().quote,
            Quote::None
        );
        assert_eq!(
            FieldsFormat::parse(&["occurrence=l"]).unwrap().occurrence,
            Occurrence::Last
        );
        assert_eq!(
            FieldsFormat::parse(&["occurrence=a"]).unwrap().occurrence,
            Occurrence::All
        );
        assert!(!FieldsFormat::parse(&["header=n"]).unwrap().header);
        for bad in [
            "quote=x",
            "occurrence=2",
            "header=yes",
            "colour=y",
            "header",
        ] {
            let e = FieldsFormat::parse(&[bad]).unwrap_err();
            assert!(!e.contains('\n') && e.starts_with("-E "), "{e}");
        }
    }

    #[test]
    fn text_values_lose_their_quotes_but_stay_escaped() {
        let mut s = String::new();
        write_value(&mut s, &Value::Text(b"a\x1b\"b"));
        assert_eq!(s, r#"a\u{1b}\"b"#);
        s.clear();
        write_value(
            &mut s,
            &Value::Enum {
                raw: 2,
                name: Some("Timeout"),
            },
        );
        assert_eq!(s, "Timeout");
    }

    #[test]
    fn names_resolve_to_frame_and_protocol_fields() {
        assert!(matches!(
            Source::resolve("frame.number"),
            Some(Source::Frame(FrameField::Number))
        ));
        assert!(matches!(
            Source::resolve("lwar.seqno"),
            Some(Source::Proto(_))
        ));
        assert!(Source::resolve("lwar.nope").is_none());
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_675), (2023, 11, 14));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        let ts = Timestamp(1_700_000_000_100_200_000);
        let t = |f| time_column(f, ts, ts, ts, ts).to_string();
        assert_eq!(t(TimeFormat::UtcDate), "2023-11-14 22:13:20.100200");
        assert_eq!(t(TimeFormat::Utc), "22:13:20.100200");
        assert_eq!(t(TimeFormat::Epoch), "1700000000.100200");
        assert_eq!(t(TimeFormat::Relative), "   0.000000");
    }
}
