//! `-z`: statistics, as tshark's `-z io,stat`, `-z conv` and `-z expert`.
//!
//! - `io,stat,INTERVAL[,FILTER...]`: per interval of INTERVAL seconds (a
//!   decimal; `0` for the whole capture as one interval), counted from the first
//!   packet of a known protocol: packets, bytes (UDP payload), lost and resent
//!   reliable messages, and the ack delays measured, each per direction; and for
//!   each FILTER (a display filter, `-Y`'s language), the packets and bytes that
//!   match it. Empty intervals are listed, as tshark lists them.
//! - `conv` (or `conv,udp`): the conversations, which for lwarscope are the
//!   sessions: the sessions and directions tables.
//! - `expert[,error|warn|note]`: the findings table, from the given severity up.
//!
//! The statistics follow the report (or alone with `-q`); with `--format json`
//! they are the document's `statistics` member, with `--format jsonl` one object
//! each after the summary (`"type": "io_stat"`, `"conv"`, `"expert"`).

use super::table::{Layout, directions_table, findings_table_from, sessions_table};
use super::{DirView, Filter, FindingRow, FindingStats, Outcome, SessionView};
use crate::capture::Timestamp;
use crate::engine::{AckTally, Finding, FindingKind, Flow, Observer, PacketEvent, Severity};
use comfy_table::{Attribute, Cell, CellAlignment, ContentArrangement, Table, presets};
use serde::Serialize;
use std::fmt::Write;

/// Intervals kept at most by one `io,stat`: past it, later packets are not
/// counted and the output says so. A million intervals of 100 bytes each.
pub const MAX_INTERVALS: usize = 1_000_000;

/// One `-z` argument.
#[derive(Debug, Clone)]
pub enum StatSpec {
    /// `io,stat,INTERVAL[,FILTER...]`.
    IoStat {
        /// The interval, in ns; 0 for the whole capture.
        interval_ns: u64,
        /// The interval as the user wrote it, for the heading.
        interval: String,
        filters: Vec<(String, Filter)>,
    },
    /// `conv[,udp][,FILTER]`: the sessions; with a filter, the packets of
    /// each that match it.
    Conv(Option<(String, Filter)>),
    /// `expert[,error|warn|note][,FILTER]`, from this severity up; with a
    /// filter, the findings of the frames that match it.
    Expert(Severity, Option<(String, Filter)>),
}

/// The filter after a statistic's own arguments: everything left, commas
/// included, as tshark takes it (`conv,udp,FILTER`), quotes around it dropped.
fn trailing_filter(rest: &str) -> Result<Option<(String, Filter)>, String> {
    let expr = rest.trim();
    let expr = match expr.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
        Some(inner) if !inner.contains('"') => inner.trim(),
        _ => expr,
    };
    if expr.is_empty() {
        return Err("an empty filter after the comma".to_owned());
    }
    let filter = Filter::parse(expr).map_err(|e| format!("filter `{expr}`: {e}"))?;
    Ok(Some((expr.to_owned(), filter)))
}

impl std::str::FromStr for StatSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let known =
            "known: io,stat,INTERVAL[,FILTER...], conv[,FILTER], expert[,error|warn|note][,FILTER]";
        if let Some(rest) = s.strip_prefix("io,stat") {
            let rest = rest
                .strip_prefix(',')
                .ok_or_else(|| "io,stat needs an interval in seconds: io,stat,1".to_owned())?;
            let (interval, filters) = match rest.split_once(',') {
                Some((i, f)) => (i, Some(f)),
                None => (rest, None),
            };
            let interval_ns = parse_interval(interval)?;
            let mut parsed = Vec::new();
            if let Some(filters) = filters {
                // A filter may hold commas inside quotes ("lwar.name == \"a,b\""):
                // split on commas outside them.
                for expr in split_outside_quotes(filters) {
                    // tshark's habit of quoting each filter: `io,stat,1,"resend"`.
                    let expr = expr.trim();
                    let expr = match expr.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
                        Some(inner) if !inner.contains('"') => inner.trim(),
                        _ => expr,
                    };
                    if expr.is_empty() {
                        return Err("an empty filter between commas".to_owned());
                    }
                    let filter =
                        Filter::parse(expr).map_err(|e| format!("filter `{expr}`: {e}"))?;
                    parsed.push((expr.to_owned(), filter));
                }
            }
            return Ok(StatSpec::IoStat {
                interval_ns,
                interval: interval.trim().to_owned(),
                filters: parsed,
            });
        }
        if let Some(rest) = s.strip_prefix("conv") {
            let rest = match rest {
                "" | ",udp" => return Ok(StatSpec::Conv(None)),
                r => r
                    .strip_prefix(',')
                    .ok_or_else(|| format!("unknown statistics ({known})"))?,
            };
            let rest = rest.strip_prefix("udp,").unwrap_or(rest);
            if matches!(rest, "ip" | "ipv6" | "tcp" | "eth") || rest.starts_with("ip,") {
                return Err(
                    "lwarscope's conversations are its sessions, over UDP: use -z conv[,udp][,FILTER]"
                        .to_owned(),
                );
            }
            return Ok(StatSpec::Conv(trailing_filter(rest)?));
        }
        if let Some(rest) = s.strip_prefix("expert") {
            let rest = match rest {
                "" => return Ok(StatSpec::Expert(Severity::Note, None)),
                r => r
                    .strip_prefix(',')
                    .ok_or_else(|| format!("unknown statistics ({known})"))?,
            };
            let (first, more) = match rest.split_once(',') {
                Some((a, b)) => (a, Some(b)),
                None => (rest, None),
            };
            let severity = match first.trim() {
                "note" | "comment" | "chat" => Some(Severity::Note),
                "warn" => Some(Severity::Warning),
                "error" => Some(Severity::Error),
                _ => None,
            };
            return match (severity, more) {
                (Some(sev), None) => Ok(StatSpec::Expert(sev, None)),
                (Some(sev), Some(f)) => Ok(StatSpec::Expert(sev, trailing_filter(f)?)),
                // No severity: the whole rest is the filter.
                (None, _) => trailing_filter(rest)
                    .map(|f| StatSpec::Expert(Severity::Note, f))
                    .map_err(|e| {
                        format!(
                            "expert takes a severity (error, warn or note), a filter, or both: {e}"
                        )
                    }),
            };
        }
        Err(format!("unknown statistics ({known})"))
    }
}

/// Seconds, as a decimal: `1`, `0.5`, `0` (the whole capture).
fn parse_interval(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let secs: f64 = t
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| {
            format!("`{t}` is not an interval in seconds (1, 0.5, or 0 for the whole capture)")
        })?;
    let ns = (secs * 1e9).round();
    if secs > 0.0 && ns < 1_000.0 {
        return Err(format!("`{t}` s is below the 1 µs resolution"));
    }
    if ns > 1e18 {
        return Err(format!("`{t}` s is too long an interval"));
    }
    Ok(ns as u64)
}

fn split_outside_quotes(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// One direction in one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirInterval {
    pub packets: u64,
    pub bytes: u64,
    /// Reliable messages reported lost.
    pub lost: u64,
    /// Reliable messages sent again after an ack could have come back.
    pub resends: u64,
    /// Ack delays of this direction's reliable messages measured in the interval.
    pub acks: AckTally,
}

impl DirInterval {
    /// Adds another interval's counts.
    pub fn merge(&mut self, other: &DirInterval) {
        self.packets += other.packets;
        self.bytes += other.bytes;
        self.lost += other.lost;
        self.resends += other.resends;
        self.acks.merge(other.acks);
    }

    /// The mean ack delay measured, in ms.
    pub fn mean_ack_ms(&self) -> Option<f64> {
        (self.acks.count > 0).then(|| self.acks.sum_ns as f64 / f64::from(self.acks.count) / 1e6)
    }
    /// The largest ack delay measured, in ms.
    pub fn max_ack_ms(&self) -> Option<f64> {
        (self.acks.count > 0).then(|| self.acks.max_ns as f64 / 1e6)
    }
}

/// Packets and bytes that matched one filter in one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FilterInterval {
    pub packets: u64,
    pub bytes: u64,
}

/// `-z io,stat`: counts per interval, collected as packets and findings come.
#[derive(Debug)]
pub struct IoStat {
    interval_ns: u64,
    interval: String,
    filters: Vec<(String, Filter)>,
    start: Option<Timestamp>,
    end: Option<Timestamp>,
    intervals: Vec<[DirInterval; 2]>,
    /// `filters.len()` entries per direction per interval.
    matched: Vec<FilterInterval>,
    /// Packets and findings past [`MAX_INTERVALS`], not counted.
    beyond: u64,
    /// (frame, interval) where the interval of the packets read changed: end
    /// of capture findings (`lost`) carry the frame where they began, and are
    /// counted in that frame's interval.
    marks: Vec<(u64, usize)>,
    /// The frame of the last packet read.
    last_frame: Option<u64>,
}

impl IoStat {
    pub fn new(interval_ns: u64, interval: String, filters: Vec<(String, Filter)>) -> Self {
        IoStat {
            interval_ns,
            interval,
            filters,
            start: None,
            end: None,
            intervals: Vec::new(),
            matched: Vec::new(),
            beyond: 0,
            marks: Vec::new(),
            last_frame: None,
        }
    }

    /// The interval `ts` falls in, made if new; `None` past the bound.
    fn slot(&mut self, ts: Timestamp) -> Option<usize> {
        let start = *self.start.get_or_insert(ts);
        self.end = Some(self.end.map_or(ts, |e| e.max(ts)));
        let i = match self.interval_ns {
            0 => 0,
            n => usize::try_from(ts.since(start) / n).unwrap_or(usize::MAX),
        };
        if i >= MAX_INTERVALS {
            self.beyond += 1;
            return None;
        }
        if i >= self.intervals.len() {
            self.intervals.resize(i + 1, Default::default());
            self.matched
                .resize((i + 1) * 2 * self.filters.len(), FilterInterval::default());
        }
        Some(i)
    }

    /// The interval length in ns, for the whole capture when 0.
    fn length_ns(&self) -> u64 {
        match (self.interval_ns, self.start, self.end) {
            (0, Some(s), Some(e)) => e.since(s),
            (n, _, _) => n,
        }
    }

    /// Rows: the start and end of each interval in seconds from the first
    /// packet, and its counts.
    pub fn rows(&self) -> impl Iterator<Item = IntervalRow<'_>> {
        let nf = self.filters.len();
        let length = self.length_ns();
        let duration = self.duration_ns();
        self.intervals.iter().enumerate().map(move |(i, dirs)| {
            let from = i as u64 * length;
            let to = (from + length).min(duration.max(from));
            let matched = |d: usize| &self.matched[(2 * i + d) * nf..(2 * i + d + 1) * nf];
            IntervalRow {
                start_secs: from as f64 / 1e9,
                end_secs: to as f64 / 1e9,
                c2s: DirRow {
                    counts: dirs[0],
                    filters: matched(0),
                },
                s2c: DirRow {
                    counts: dirs[1],
                    filters: matched(1),
                },
            }
        })
    }

    fn duration_ns(&self) -> u64 {
        match (self.start, self.end) {
            (Some(s), Some(e)) => e.since(s),
            _ => 0,
        }
    }

    /// The interval asked for, in ns (0: the whole capture as one interval).
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// The time of the first packet counted: where interval 0 starts.
    pub fn start(&self) -> Option<Timestamp> {
        self.start
    }

    /// Packets and findings past [`MAX_INTERVALS`], not counted.
    pub fn beyond(&self) -> u64 {
        self.beyond
    }

    /// The heading: `io,stat,1`.
    pub fn name(&self) -> String {
        let mut name = format!("io,stat,{}", self.interval);
        for (expr, _) in &self.filters {
            write!(name, ",{expr}").ok();
        }
        name
    }
}

/// One interval of `-z io,stat`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IntervalRow<'a> {
    #[serde(rename = "start")]
    pub start_secs: f64,
    #[serde(rename = "end")]
    pub end_secs: f64,
    pub c2s: DirRow<'a>,
    pub s2c: DirRow<'a>,
}

/// One direction of one interval of `-z io,stat`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DirRow<'a> {
    pub counts: DirInterval,
    /// Packets and bytes that matched each filter, in order.
    pub filters: &'a [FilterInterval],
}

impl Serialize for DirRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let c = &self.counts;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("packets", &c.packets)?;
        m.serialize_entry("bytes", &c.bytes)?;
        m.serialize_entry("lost", &c.lost)?;
        m.serialize_entry("resends", &c.resends)?;
        m.serialize_entry("ack_delay_samples", &c.acks.count)?;
        m.serialize_entry("ack_delay_mean_ms", &c.mean_ack_ms())?;
        m.serialize_entry("ack_delay_max_ms", &c.max_ack_ms())?;
        m.serialize_entry("filters", self.filters)?;
        m.end()
    }
}

impl Observer for IoStat {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        let Some(i) = self.slot(e.datagram.ts) else {
            return Flow::Continue;
        };
        self.last_frame = Some(e.datagram.frame);
        // Marks go forward only: a capture out of time order adds none.
        if self.marks.last().is_none_or(|&(_, j)| j < i) {
            self.marks.push((e.datagram.frame, i));
        }
        let bytes = e.datagram.payload_len as u64;
        let dirs = &mut self.intervals[i];
        let d = &mut dirs[e.direction.index()];
        d.packets += 1;
        d.bytes += bytes;
        d.resends += u64::from(e.resends);
        for (dir, acks) in dirs.iter_mut().zip(e.acks) {
            dir.acks.merge(acks);
        }
        let nf = self.filters.len();
        let at = (2 * i + e.direction.index()) * nf;
        for ((_, filter), m) in self.filters.iter().zip(&mut self.matched[at..at + nf]) {
            if filter.matches(e) {
                m.packets += 1;
                m.bytes += bytes;
            }
        }
        Flow::Continue
    }

    fn finding(&mut self, f: &Finding) {
        if f.kind != FindingKind::LOST {
            return;
        }
        // A finding of an earlier packet counts in that packet's interval; one
        // of the packet being read (which comes before it), at its time.
        let read = self.last_frame.is_some_and(|last| f.frame <= last);
        let slot = match self.marks.partition_point(|&(frame, _)| frame <= f.frame) {
            n if read && n > 0 => self.marks.get(n - 1).map(|&(_, i)| i),
            _ => self.slot(f.ts),
        };
        let Some(i) = slot else {
            return;
        };
        self.intervals[i][f.direction.index()].lost += f.numbers();
    }
}

/// Every `-z` of a run: the io,stat collectors see each packet; conv and
/// expert read the outcome at the end.
#[derive(Debug, Default)]
pub struct Stats {
    specs: Vec<StatSpec>,
    io: Vec<IoStat>,
    /// The `conv,FILTER` and `expert,...,FILTER` collectors, in order.
    conv: Vec<ConvFiltered>,
    expert: Vec<ExpertFiltered>,
}

impl Stats {
    pub fn new(specs: &[StatSpec]) -> Self {
        let io = specs
            .iter()
            .filter_map(|s| match s {
                StatSpec::IoStat {
                    interval_ns,
                    interval,
                    filters,
                } => Some(IoStat::new(*interval_ns, interval.clone(), filters.clone())),
                _ => None,
            })
            .collect();
        let conv = specs
            .iter()
            .filter_map(|s| match s {
                StatSpec::Conv(Some((_, f))) => Some(ConvFiltered::new(f.clone())),
                _ => None,
            })
            .collect();
        let expert = specs
            .iter()
            .filter_map(|s| match s {
                StatSpec::Expert(_, Some((_, f))) => Some(ExpertFiltered::new(f.clone())),
                _ => None,
            })
            .collect();
        Stats {
            specs: specs.to_vec(),
            io,
            conv,
            expert,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The io,stat collectors, in the order given.
    pub fn io(&self) -> &[IoStat] {
        &self.io
    }

    /// The statistics as text, in the order given.
    pub fn render(&self, o: &Outcome, layout: Layout) -> String {
        let mut out = String::new();
        let mut io = self.io.iter();
        let mut conv = self.conv.iter();
        let mut expert = self.expert.iter();
        for spec in &self.specs {
            match spec {
                StatSpec::IoStat { .. } => {
                    if let Some(s) = io.next() {
                        render_io(&mut out, s, layout);
                    }
                }
                StatSpec::Conv(Some((expr, _))) => {
                    writeln!(
                        out,
                        "Conversations (-z conv,{expr}): the packets of each session that match the filter"
                    )
                    .ok();
                    match conv.next() {
                        Some(c) if !c.sessions.is_empty() => {
                            writeln!(out, "{}\n", conv_filtered_table(c, o, layout)).ok();
                        }
                        _ => out.push_str("No packet matches.\n\n"),
                    }
                }
                StatSpec::Conv(None) => {
                    writeln!(out, "Conversations (-z conv): the sessions").ok();
                    if o.sessions.is_empty() {
                        out.push_str("No sessions: no packet of a known protocol.\n\n");
                    } else {
                        writeln!(out, "{}", sessions_table(o, layout)).ok();
                        writeln!(out, "{}\n", directions_table(o, layout)).ok();
                    }
                }
                StatSpec::Expert(min, filter) => {
                    // A filtered one takes the next collector; the others read
                    // the outcome.
                    let rows = match filter.as_ref().and_then(|_| expert.next()) {
                        Some(x) => rows_from(&x.findings, *min),
                        None => expert_rows(o, *min),
                    };
                    let of = match filter {
                        Some((expr, _)) => {
                            format!(",{expr}): the findings of the frames that match the filter")
                        }
                        None => ")".to_owned(),
                    };
                    writeln!(
                        out,
                        "Expert information (-z expert{}{of}",
                        severity_suffix(*min)
                    )
                    .ok();
                    if rows.is_empty() {
                        out.push_str("No findings.\n\n");
                    } else {
                        writeln!(out, "{}\n", findings_table_from(&rows, layout)).ok();
                    }
                }
            }
        }
        out
    }

    /// The statistics as JSON values, in the order given: what `--format json`
    /// puts in `statistics` and `--format jsonl` writes one a line.
    pub fn json(&self, o: &Outcome) -> Vec<serde_json::Value> {
        let mut io = self.io.iter();
        let mut conv = self.conv.iter();
        let mut expert = self.expert.iter();
        let mut values = Vec::new();
        for spec in &self.specs {
            let value = match spec {
                StatSpec::IoStat { .. } => {
                    let Some(s) = io.next() else { continue };
                    serde_json::json!({
                        "type": "io_stat",
                        "name": s.name(),
                        "interval_secs": s.interval_ns as f64 / 1e9,
                        "duration_secs": s.duration_ns() as f64 / 1e9,
                        "start": s.start.map(Timestamp::secs_f64),
                        "filters": s.filters.iter().map(|(e, _)| e.as_str()).collect::<Vec<_>>(),
                        "beyond": s.beyond,
                        "intervals": s.rows().collect::<Vec<_>>(),
                    })
                }
                StatSpec::Conv(Some((expr, _))) => {
                    let Some(c) = conv.next() else { continue };
                    serde_json::json!({
                        "type": "conv",
                        "filter": expr,
                        "sessions": conv_filtered_json(c, o),
                    })
                }
                StatSpec::Conv(None) => serde_json::json!({
                    "type": "conv",
                    "sessions": o.sessions.iter().map(ConvJson).collect::<Vec<_>>(),
                }),
                StatSpec::Expert(min, filter) => serde_json::json!({
                    "type": "expert",
                    "min_severity": min.name(),
                    "filter": filter.as_ref().map(|(e, _)| e),
                    "findings": match filter.as_ref().and_then(|_| expert.next()) {
                        Some(x) => rows_from(&x.findings, *min),
                        None => expert_rows(o, *min),
                    }.iter().map(|r| serde_json::json!({
                        "finding": r.label,
                        "severity": r.severity.name(),
                        "count": r.count,
                        "first_frames": r.first_frames,
                        "more_frames": r.more_frames,
                    })).collect::<Vec<_>>(),
                }),
            };
            values.push(value);
        }
        values
    }
}

fn severity_suffix(s: Severity) -> &'static str {
    match s {
        Severity::Note => "",
        Severity::Warning => ",warn",
        Severity::Error => ",error",
    }
}

fn expert_rows(o: &Outcome, min: Severity) -> Vec<FindingRow> {
    rows_from(&o.findings, min)
}

fn rows_from(findings: &FindingStats, min: Severity) -> Vec<FindingRow> {
    findings
        .rows()
        .into_iter()
        .filter(|r| r.severity >= min)
        .collect()
}

/// One direction of a session in `conv,FILTER`: the matching packets.
#[derive(Debug, Clone, Copy, Default)]
struct Matched {
    packets: u64,
    bytes: u64,
}

/// A session in `conv,FILTER`.
#[derive(Debug, Clone)]
struct ConvRow {
    client: std::net::SocketAddr,
    server: std::net::SocketAddr,
    protocol: &'static str,
    dirs: [Matched; 2],
    first: Timestamp,
    last: Timestamp,
}

/// `-z conv,FILTER`: the packets of each session that match the filter, as
/// tshark's conversations limited to a display filter count them.
#[derive(Debug)]
struct ConvFiltered {
    filter: Filter,
    /// By session id, only sessions with a matching packet.
    sessions: std::collections::BTreeMap<crate::engine::SessionId, ConvRow>,
}

impl ConvFiltered {
    fn new(filter: Filter) -> Self {
        ConvFiltered {
            filter,
            sessions: Default::default(),
        }
    }

    fn packet(&mut self, e: &PacketEvent<'_>) {
        if !self.filter.matches(e) {
            return;
        }
        let d = e.datagram;
        let row = self.sessions.entry(e.session).or_insert_with(|| {
            let (client, server) = match e.direction {
                crate::engine::Direction::ClientToServer => (d.src, d.dst),
                crate::engine::Direction::ServerToClient => (d.dst, d.src),
            };
            ConvRow {
                client,
                server,
                protocol: e.protocol.name,
                dirs: Default::default(),
                first: d.ts,
                last: d.ts,
            }
        });
        let m = &mut row.dirs[e.direction.index()];
        m.packets += 1;
        m.bytes += d.payload_len as u64;
        row.first = row.first.min(d.ts);
        row.last = row.last.max(d.ts);
    }
}

/// `-z expert,FILTER`: the findings of the frames that match the filter (a
/// `lost` raised at the end counts when the frame of its gap matched).
#[derive(Debug)]
struct ExpertFiltered {
    filter: Filter,
    findings: FindingStats,
    /// The frames that matched.
    matched: super::FrameSet,
    /// The last frame judged.
    judged: u64,
}

impl ExpertFiltered {
    fn new(filter: Filter) -> Self {
        ExpertFiltered {
            filter,
            findings: FindingStats::default(),
            matched: super::FrameSet::default(),
            judged: 0,
        }
    }

    fn packet(&mut self, e: &PacketEvent<'_>) {
        let frame = e.datagram.frame;
        self.judged = self.judged.max(frame);
        if !self.filter.matches(e) {
            return;
        }
        self.matched.insert(frame);
        // This packet's own findings (delivered before it, not yet judged).
        for f in e.findings.iter().filter(|f| f.frame == frame) {
            self.findings.add(f);
        }
    }

    fn finding(&mut self, f: &Finding) {
        // Findings of frames already judged; the packet being read counts its
        // own when it comes.
        if f.frame <= self.judged && self.matched.contains(f.frame) {
            self.findings.add(f);
        }
    }
}

fn conv_filtered_table(c: &ConvFiltered, o: &Outcome, layout: Layout) -> Table {
    let mut t = super::table::plain_table(
        layout,
        &[
            "#",
            "client\n-> server",
            "packets\nc2s/s2c",
            "bytes\nc2s/s2c",
            "start\n(s)",
            "duration\n(s)",
        ],
    );
    let origin = o.capture.start;
    for (id, r) in &c.sessions {
        let [a, b] = r.dirs;
        let start = origin.map_or(0.0, |s| r.first.since(s) as f64 / 1e9);
        t.add_row(vec![
            Cell::new(id),
            Cell::new(format!("{}\n-> {}", r.client, r.server)),
            Cell::new(format!("{}/{}", a.packets, b.packets)),
            Cell::new(format!("{}/{}", a.bytes, b.bytes)),
            Cell::new(format!("{start:.3}")),
            Cell::new(format!("{:.3}", r.last.since(r.first) as f64 / 1e9)),
        ]);
    }
    for c in [0, 2, 3, 4, 5] {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

fn conv_filtered_json(c: &ConvFiltered, o: &Outcome) -> Vec<serde_json::Value> {
    let origin = o.capture.start;
    c.sessions
        .iter()
        .map(|(id, r)| {
            let dir = |m: Matched| serde_json::json!({"packets": m.packets, "bytes": m.bytes});
            serde_json::json!({
                "session": id,
                "protocol": r.protocol,
                "client": r.client.to_string(),
                "server": r.server.to_string(),
                "c2s": dir(r.dirs[0]),
                "s2c": dir(r.dirs[1]),
                "start": r.first.secs_f64(),
                "start_relative_secs": origin.map(|s| r.first.since(s) as f64 / 1e9),
                "duration_secs": r.last.since(r.first) as f64 / 1e9,
            })
        })
        .collect()
}

impl Observer for Stats {
    #[inline]
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        // No -z asked (the collectors are made from the specs): one test,
        // inline, not three loops, on every packet.
        if self.specs.is_empty() {
            return Flow::Continue;
        }
        self.collect(e)
    }

    fn finding(&mut self, f: &Finding) {
        for s in &mut self.io {
            s.finding(f);
        }
        for x in &mut self.expert {
            x.finding(f);
        }
    }
}

impl Stats {
    /// [`Observer::packet`] with some `-z` asked: every collector sees it.
    #[inline(never)]
    fn collect(&mut self, e: &PacketEvent<'_>) -> Flow {
        for s in &mut self.io {
            s.packet(e);
        }
        for c in &mut self.conv {
            c.packet(e);
        }
        for x in &mut self.expert {
            x.packet(e);
        }
        Flow::Continue
    }
}

/// A session as `-z conv` gives it in JSON.
struct ConvJson<'a>(&'a SessionView);

impl Serialize for ConvJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let v = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("session", &v.id)?;
        m.serialize_entry("protocol", v.protocol.name)?;
        m.serialize_entry("client", &v.client.to_string())?;
        m.serialize_entry("server", &v.server.to_string())?;
        m.serialize_entry("state", v.state)?;
        m.serialize_entry(
            "player",
            &v.player.as_ref().map(|p| {
                serde_json::json!({"id": p.id, "name": p.name, "renames": p.renames, "chats": p.chats})
            }),
        )?;
        m.serialize_entry("duration_secs", &v.duration_secs)?;
        m.serialize_entry("c2s", &DirJson(&v.c2s))?;
        m.serialize_entry("s2c", &DirJson(&v.s2c))?;
        m.end()
    }
}

/// A direction of a session, with every figure the tables show.
pub(super) struct DirJson<'a>(pub &'a DirView);

impl Serialize for DirJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let d = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("packets", &d.packets)?;
        m.serialize_entry("bytes", &d.bytes)?;
        m.serialize_entry("messages", &d.messages)?;
        m.serialize_entry("first_sends", &d.first_sends)?;
        m.serialize_entry("repeats", &d.repeats)?;
        m.serialize_entry("resends", &d.resends)?;
        m.serialize_entry("reordered", &d.reordered)?;
        m.serialize_entry("gaps", &d.gaps)?;
        m.serialize_entry("lost", &d.lost)?;
        m.serialize_entry("malformed", &d.malformed)?;
        m.serialize_entry("ack_delay_p50_ms", &d.ack_p50_ms)?;
        m.serialize_entry("ack_delay_p95_ms", &d.ack_p95_ms)?;
        m.serialize_entry("unacked", &d.unacked)?;
        m.serialize_entry("jitter_ms", &d.jitter_ms)?;
        m.serialize_entry("loss", &d.loss)?;
        m.serialize_entry("duration_secs", &d.duration_secs)?;
        m.end()
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"))
}

fn render_io(out: &mut String, s: &IoStat, layout: Layout) {
    let duration = s.duration_ns() as f64 / 1e9;
    let interval = if s.interval_ns == 0 {
        "the whole capture as one interval".to_owned()
    } else {
        format!("intervals of {} s", s.interval)
    };
    writeln!(
        out,
        "IO statistics (-z {}): {duration:.3} s of capture, {interval} from the first packet; ack delays in ms",
        s.name()
    )
    .ok();
    for (i, (expr, _)) in s.filters.iter().enumerate() {
        writeln!(out, "  #{}: {expr}", i + 1).ok();
    }
    let mut header: Vec<String> = [
        "interval (s)",
        "dir",
        "packets",
        "bytes",
        "lost",
        "resends",
        "ack mean",
        "ack max",
    ]
    .map(str::to_owned)
    .to_vec();
    for i in 1..=s.filters.len() {
        header.push(format!("#{i} packets"));
        header.push(format!("#{i} bytes"));
    }
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(layout.width);
    if layout.color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    t.set_header(
        header
            .iter()
            .map(|h| Cell::new(h).add_attribute(Attribute::Bold)),
    );
    let digits = decimals(s.interval_ns);
    let last = s.intervals.len().saturating_sub(1);
    for (i, row) in s.rows().enumerate() {
        for (dir, d) in [("c2s", &row.c2s), ("s2c", &row.s2c)] {
            let c = &d.counts;
            // The last interval ends with the capture, as tshark's `Dur`.
            let interval = match (dir, i == last) {
                ("c2s", false) => {
                    format!("{:.digits$} <> {:.digits$}", row.start_secs, row.end_secs)
                }
                ("c2s", true) => format!("{:.digits$} <> Dur", row.start_secs),
                _ => String::new(),
            };
            let mut cells = vec![
                interval,
                dir.to_owned(),
                c.packets.to_string(),
                c.bytes.to_string(),
                c.lost.to_string(),
                c.resends.to_string(),
                ms(c.mean_ack_ms()),
                ms(c.max_ack_ms()),
            ];
            for m in d.filters {
                cells.push(m.packets.to_string());
                cells.push(m.bytes.to_string());
            }
            t.add_row(cells);
        }
    }
    for c in 2..header.len() {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    if s.intervals.is_empty() {
        out.push_str("No packets.\n\n");
    } else {
        writeln!(out, "{t}").ok();
        if s.beyond > 0 {
            writeln!(
                out,
                "{} packets and findings past the first {MAX_INTERVALS} intervals are not counted: choose a longer interval",
                s.beyond
            )
            .ok();
        }
        out.push('\n');
    }
}

/// Decimals that show an interval's boundaries exactly (up to µs).
fn decimals(interval_ns: u64) -> usize {
    let mut d = 0;
    let mut unit = 1_000_000_000u64;
    while d < 6 && !interval_ns.is_multiple_of(unit) {
        d += 1;
        unit /= 10;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_as_tshark_writes_them() {
        match "io,stat,0.5".parse::<StatSpec>() {
            Ok(StatSpec::IoStat {
                interval_ns,
                filters,
                ..
            }) => {
                assert_eq!(interval_ns, 500_000_000);
                assert!(filters.is_empty());
            }
            other => panic!("{other:?}"),
        }
        match r#"io,stat,1,"resend",lwar.name == "a,b",dir == s2c"#.parse::<StatSpec>() {
            Ok(StatSpec::IoStat { filters, .. }) => {
                let exprs: Vec<_> = filters.iter().map(|(e, _)| e.as_str()).collect();
                assert_eq!(exprs, ["resend", r#"lwar.name == "a,b""#, "dir == s2c"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            "io,stat,0".parse(),
            Ok(StatSpec::IoStat { interval_ns: 0, .. })
        ));
        assert!(matches!("conv".parse(), Ok(StatSpec::Conv(None))));
        assert!(matches!("conv,udp".parse(), Ok(StatSpec::Conv(None))));
        assert!(matches!(
            "expert,warn".parse(),
            Ok(StatSpec::Expert(Severity::Warning, None))
        ));
        // A filter after the statistic's own arguments, commas and all.
        for (spec, sev, expr) in [
            ("conv,udp,dir == c2s", None, "dir == c2s"),
            ("conv,session in {1, 2}", None, "session in {1, 2}"),
            (
                "expert,warn,session == 2",
                Some(Severity::Warning),
                "session == 2",
            ),
            (
                r#"expert,"frame.number < 9""#,
                Some(Severity::Note),
                "frame.number < 9",
            ),
        ] {
            match (spec.parse::<StatSpec>(), sev) {
                (Ok(StatSpec::Conv(Some((e, _)))), None) => assert_eq!(e, expr),
                (Ok(StatSpec::Expert(s, Some((e, _)))), Some(want)) => {
                    assert_eq!((s, e.as_str()), (want, expr));
                }
                other => panic!("{spec}: {other:?}"),
            }
        }
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let err = |s: &str| s.parse::<StatSpec>().unwrap_err();
        assert_eq!(
            err("io,stat"),
            "io,stat needs an interval in seconds: io,stat,1"
        );
        assert_eq!(
            err("io,stat,-1"),
            "`-1` is not an interval in seconds (1, 0.5, or 0 for the whole capture)"
        );
        assert_eq!(
            err("io,stat,0.0000001"),
            "`0.0000001` s is below the 1 µs resolution"
        );
        assert!(err("io,stat,1,seqno ==").starts_with("filter `seqno ==`: column 9"));
        assert_eq!(
            err("conv,tcp"),
            "lwarscope's conversations are its sessions, over UDP: use -z conv[,udp][,FILTER]"
        );
        assert!(
            err("expert,loud").starts_with(
                "expert takes a severity (error, warn or note), a filter, or both: filter `loud`"
            ),
            "{}",
            err("expert,loud")
        );
        assert!(err("conv,seqno ==").starts_with("filter `seqno ==`"));
        assert!(err("follow,udp").starts_with("unknown statistics"));
    }

    #[test]
    fn boundaries_print_with_the_interval_s_own_digits() {
        assert_eq!(decimals(1_000_000_000), 0);
        assert_eq!(decimals(10_000_000_000), 0);
        assert_eq!(decimals(500_000_000), 1);
        assert_eq!(decimals(250_000_000), 2);
        assert_eq!(decimals(1_000), 6);
    }
}
