//! What users read: the report tables, the packet views, JSON, and the CI check.
//!
//! Outputs only consume. They implement [`Observer`] to see each packet as the
//! tracker analyses it, and read the final [`Outcome`] (the tracker's [`Summary`]
//! and session metrics) once the capture ends. They never decode a packet
//! themselves: they read it through its protocol's registered
//! [`Dissector`](crate::proto::dissect::Dissector) (summaries, the field tree,
//! the typed field walk).
//!
//! - [`filter`]: the `-Y` display filter language.
//! - [`table`]: the report of `lwarscope -r FILE` (comfy-table).
//! - [`packets`]: `--packets`, `-V`, `-x`: one line per packet, tcpdump-like.
//! - [`fields`]: `-T fields -e FIELD -E ...`, tshark's field output, and `-t`, the time column.
//! - [`json`]: `--format json` and `--format jsonl`, schema 1.
//! - [`tshark`]: `-T json` and `-T ek`, the packets in tshark's JSON shapes.
//! - [`skipped`]: the UDP traffic no protocol recognised, explained by port.
//! - [`stats`]: `-z io,stat`, `-z conv`, `-z expert`: statistics, as tshark's.
//! - [`check`]: `lwarscope check`, the CI gate, and its JUnit output.
//! - `parquet` (with the `parquet` feature): `--format parquet`, the
//!   sessions, findings and intervals tables.
//! - [`args`]: the options of the outputs and of `check`.

pub mod args;
pub mod check;
mod columns;
mod fast;
pub mod fields;
pub mod filter;
pub mod json;
pub mod packets;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod plot;
mod repeats;
pub mod skipped;
pub mod stats;
pub mod table;
#[cfg(test)]
mod testing;
pub mod timeline;
pub mod tshark;

pub use args::{CheckArgs, Color, Format, ReportArgs};
pub use filter::{Filter, FilterError};

/// Removes the output files still being written (the Parquet tables under
/// their temporary names): what a signal handler calls before exiting.
pub fn remove_temporaries() {
    #[cfg(feature = "parquet")]
    parquet::remove_temporaries();
}

use crate::capture::{Datagram, Timestamp};
pub(crate) use crate::engine::FrameSet;
use crate::engine::{
    Detail, DirState, Direction, Engine, Finding, FindingKind, Flow, Group, MAX_MESSAGE_TYPES,
    Observer, PacketEvent, Player, ProtocolInfo, Rule, SessionId, SessionRef, Severity, Summary,
    TrackerConfig, Window,
};
use crate::run::ahead::RenderAhead;
use crate::run::{Consumer, ReadAhead};
use serde::Serialize;
use std::fmt;
use std::net::SocketAddr;

/// What the capture front end read, and what the analysis counted of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CaptureInfo {
    /// The files read (empty for a live capture).
    pub files: Vec<String>,
    /// The interface, for a live capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// Capture time of the first and last frame, in seconds since the Unix epoch.
    #[serde(serialize_with = "ser_ts")]
    pub start: Option<Timestamp>,
    #[serde(serialize_with = "ser_ts")]
    pub end: Option<Timestamp>,
    /// Frames read.
    pub frames: u64,
    /// lwar packets (UDP payloads starting with the appId).
    pub lwar_packets: u64,
    /// Packets of each protocol that has any, by its short name (`lwar`,
    /// `starstrike`).
    #[serde(default)]
    pub protocols: std::collections::BTreeMap<String, u64>,
    /// Frames that were not lwar: other traffic, skipped.
    pub other: u64,
    /// Frames of the files that the capture filter (`-f`) rejected.
    #[serde(default)]
    pub filtered: u64,
    /// Frames whose IP or UDP headers contradict themselves (a UDP length
    /// beyond the frame, a bad IP version): no protocol could look at them.
    #[serde(default)]
    pub broken: u64,
    /// Packets of the protocols the capture cut short (snaplen), whatever the
    /// cut ends on: what they did not keep is unknown.
    pub truncated: u64,
    /// Packets of the protocols that did not decode (a cut packet too, when
    /// the bytes it kept do not).
    pub malformed: u64,
    /// UDP datagrams rebuilt from IP fragments.
    pub reassembled: u64,
    /// Fragmented datagrams given up (timed out, over bounds, incomplete at the end).
    pub incomplete: u64,
    /// `incomplete` by why (`timed-out`, `memory-limit`, `conflict`,
    /// `overlap`, `too-many-fragments`, `end-of-capture`), the reasons that
    /// have any.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub incomplete_reasons: std::collections::BTreeMap<String, u64>,
    /// IP fragments dropped as exact copies of one held.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub duplicate_fragments: u64,
    /// Packets libpcap received (live captures only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<u64>,
    /// Packets the kernel dropped because its buffer was full (live captures only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_dropped: Option<u64>,
    /// Packets the interface or its driver dropped (live captures only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub interface_dropped: Option<u64>,
    /// The sessions the report is restricted to (`--session`), when it is: the
    /// packet, message and finding counts are theirs, the frame counts the
    /// capture's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sessions_only: Option<Vec<SessionId>>,
    /// What restricts the report to part of the capture (`-Y`, `--window`),
    /// as a display filter, when something does: the packet, message, finding
    /// and session figures count the packets it selects (and the findings of
    /// their frames), the frame counts are the capture's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub selection: Option<String>,
    /// True when a signal stopped the reading of the files before their end
    /// (`interrupted_by` names it): every figure covers the `frames` read, not
    /// the capture. Absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub interrupted: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub interrupted_by: Option<String>,
}

/// A signal's name as users know it (`SIGINT`), for what it interrupted.
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".to_owned(),
        libc::SIGTERM => "SIGTERM".to_owned(),
        libc::SIGHUP => "SIGHUP".to_owned(),
        n => format!("signal {n}"),
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn ser_ts<S: serde::Serializer>(ts: &Option<Timestamp>, s: S) -> Result<S::Ok, S::Error> {
    match ts {
        Some(t) => s.serialize_some(&t.secs_f64()),
        None => s.serialize_none(),
    }
}

impl CaptureInfo {
    /// Packets of every protocol.
    pub fn packets(&self) -> u64 {
        self.protocols.values().sum()
    }

    /// Seconds from the first to the last frame.
    pub fn duration_secs(&self) -> f64 {
        match (self.start, self.end) {
            (Some(a), Some(b)) => b.since(a) as f64 / 1e9,
            _ => 0.0,
        }
    }
}

/// How many findings of one kind (or one violation rule), and the first frames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    /// What the findings stand for: a `lost` or `not-captured` finding for
    /// every number of its gap ([`Finding::numbers`]), as the summary counts.
    count: u64,
    /// The findings.
    rows: u64,
    /// The first distinct frames, `kept` of them.
    first: [u64; FIRST_FRAMES],
    kept: usize,
}

/// Frames kept per finding kind, for the report's "first frames" column.
pub const FIRST_FRAMES: usize = 5;

impl Tally {
    fn add(&mut self, frame: u64, numbers: u64) {
        self.count += numbers;
        self.rows += 1;
        if self.kept < FIRST_FRAMES && !self.first[..self.kept].contains(&frame) {
            self.first[self.kept] = frame;
            self.kept += 1;
        }
    }

    /// True when frames other than those kept have findings of this kind.
    fn more(&self) -> bool {
        self.kept == FIRST_FRAMES && self.rows > FIRST_FRAMES as u64
    }

    fn frames(&self) -> Vec<u64> {
        let mut v = self.first[..self.kept].to_vec();
        v.sort_unstable();
        v
    }
}

/// Every finding counted by kind, and by rule for violations: a tally for each
/// registered kind and rule, made once, so counting never allocates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingStats {
    kinds: Vec<(FindingKind, Tally)>,
    rules: Vec<(Rule, Tally)>,
}

impl Default for FindingStats {
    fn default() -> Self {
        FindingStats {
            kinds: crate::proto::all_kinds()
                .map(|k| (k, Tally::default()))
                .collect(),
            rules: crate::proto::all_rules()
                .map(|r| (r, Tally::default()))
                .collect(),
        }
    }
}

/// One line of the findings table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingRow {
    /// `resend`, or `violation/wrong-sender`.
    pub label: String,
    pub severity: Severity,
    pub count: u64,
    /// The first distinct frames (up to [`FIRST_FRAMES`]), ascending.
    pub first_frames: Vec<u64>,
    /// Whether later frames have it too.
    pub more_frames: bool,
}

impl FindingStats {
    pub fn add(&mut self, f: &Finding) {
        // The shared kinds come first, each at its slot: no search for them.
        let shared = f.kind.ordinal() < FindingKind::SHARED.len();
        let tally = if shared {
            self.kinds.get_mut(f.kind.ordinal())
        } else {
            self.kinds.iter_mut().find(|(k, _)| *k == f.kind)
        };
        if let Some((_, t)) = tally {
            t.add(f.frame, f.numbers());
        }
        if let Some(rule) = f.rule
            && let Some((_, t)) = self.rules.iter_mut().find(|(r, _)| *r == rule)
        {
            t.add(f.frame, 1);
        }
    }

    pub fn count(&self, kind: FindingKind) -> u64 {
        self.kinds
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, t)| t.count)
    }

    pub fn rule_count(&self, rule: Rule) -> u64 {
        self.rules
            .iter()
            .find(|(r, _)| *r == rule)
            .map_or(0, |(_, t)| t.count)
    }

    /// The rows of the findings table, worst first: by severity, then count.
    /// Violations are split by rule.
    pub fn rows(&self) -> Vec<FindingRow> {
        let mut rows = Vec::new();
        for (kind, t) in &self.kinds {
            if t.count == 0 {
                continue;
            }
            if *kind == FindingKind::VIOLATION {
                for (rule, r) in &self.rules {
                    if r.count > 0 {
                        rows.push(FindingRow {
                            label: format!("violation/{rule}"),
                            severity: kind.severity(),
                            count: r.count,
                            first_frames: r.frames(),
                            more_frames: r.more(),
                        });
                    }
                }
            } else {
                rows.push(FindingRow {
                    label: kind.name().to_owned(),
                    severity: kind.severity(),
                    count: t.count,
                    first_frames: t.frames(),
                    more_frames: t.more(),
                });
            }
        }
        rows.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then(b.count.cmp(&a.count))
                .then(a.label.cmp(&b.label))
        });
        rows
    }
}

/// One direction of a session, as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct DirView {
    pub packets: u64,
    pub bytes: u64,
    /// Messages of every type.
    pub messages: u64,
    /// By the protocol's message type ordinal.
    pub per_type: [u64; MAX_MESSAGE_TYPES],
    pub per_type_bytes: [u64; MAX_MESSAGE_TYPES],
    pub first_sends: u64,
    /// Repeats by design (before an ack could come back), and resends after.
    pub repeats: u64,
    pub resends: u64,
    pub reordered: u64,
    pub gaps: u64,
    pub lost: u64,
    /// Malformed and truncated packets.
    pub malformed: u64,
    /// Ack delay percentiles of this direction's reliable messages, in ms.
    pub ack_p50_ms: Option<f64>,
    pub ack_p95_ms: Option<f64>,
    pub ack_max_ms: Option<f64>,
    /// How many ack delays were measured.
    pub ack_samples: u64,
    /// Reliable messages never acked by the end.
    pub unacked: usize,
    pub jitter_ms: f64,
    pub duration_secs: f64,
    /// Packets lost before the capture point, estimated (`engine::loss`), as a
    /// fraction; `None` before the sender's tick is known.
    pub loss: Option<f64>,
    /// The packets behind `loss`: lost, and expected (captured plus lost).
    pub loss_counts: Option<crate::engine::LossEstimate>,
    /// Capture time of this direction's first and last packet.
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
}

impl DirView {
    fn new(d: &DirState) -> Self {
        let pct = |q: f64| d.ack_delay_ms(q);
        DirView {
            packets: d.packets,
            bytes: d.bytes,
            messages: d.messages.iter().sum(),
            per_type: d.messages,
            per_type_bytes: d.message_bytes,
            first_sends: d.first_sends,
            repeats: d.repeats,
            resends: d.resends,
            reordered: d.finding_count(FindingKind::REORDERED),
            gaps: d.finding_count(FindingKind::GAP),
            lost: d.finding_count(FindingKind::LOST),
            malformed: d.finding_count(FindingKind::MALFORMED)
                + d.finding_count(FindingKind::TRUNCATED),
            ack_p50_ms: pct(0.5),
            ack_p95_ms: pct(0.95),
            ack_max_ms: d.ack_delay_max_ms(),
            ack_samples: d.ack_delay_samples(),
            unacked: d.unacked(),
            jitter_ms: d.jitter_ms,
            loss: d.loss().map(|e| e.fraction()),
            loss_counts: d.loss(),
            start: d.first_ts,
            end: d.first_ts.map(|_| d.last_ts),
            duration_secs: d.duration_secs(),
        }
    }
}

/// One session, as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionView {
    pub id: SessionId,
    pub protocol: &'static ProtocolInfo,
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// The lifecycle state's name.
    pub state: &'static str,
    /// How its flow was taken for its protocol.
    pub recognised_by: crate::engine::RecognisedBy,
    /// The client's own player, if the capture tells it.
    pub player: Option<Player>,
    /// Capture time of its first and last packet, either way.
    pub start: Option<Timestamp>,
    pub end: Option<Timestamp>,
    pub duration_secs: f64,
    pub c2s: DirView,
    pub s2c: DirView,
    /// What its protocol tells of it beyond the counts, as (key, text):
    /// a byte order, who closed it and why, round trips.
    pub notes: Vec<(&'static str, String)>,
}

impl SessionView {
    pub fn new(s: SessionRef<'_>) -> Self {
        SessionView {
            id: s.id,
            protocol: s.protocol,
            client: s.client,
            server: s.server,
            state: s.state,
            recognised_by: s.recognised_by,
            player: s.player(),
            start: match (s.c2s.first_ts, s.s2c.first_ts) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            end: [s.c2s, s.s2c]
                .iter()
                .filter(|d| d.first_ts.is_some())
                .map(|d| d.last_ts)
                .max(),
            duration_secs: s.duration_secs(),
            c2s: DirView::new(s.c2s),
            s2c: DirView::new(s.s2c),
            notes: s.notes(),
        }
    }

    /// The session as the selected packets of a part of the capture counted
    /// it (`dirs`, from a [`Window`]); `unacked`: the reliable messages they
    /// carried that were never acked, by direction.
    pub fn part(s: SessionRef<'_>, dirs: [&DirState; 2], unacked: [usize; 2]) -> Self {
        let [c2s, s2c] = dirs;
        let mut view = SessionView::new(s);
        view.start = match (c2s.first_ts, s2c.first_ts) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        view.end = [c2s, s2c]
            .iter()
            .filter(|d| d.first_ts.is_some())
            .map(|d| d.last_ts)
            .max();
        view.duration_secs = match (view.start, view.end) {
            (Some(a), Some(b)) => b.since(a) as f64 / 1e9,
            _ => 0.0,
        };
        view.c2s = DirView::new(c2s);
        view.s2c = DirView::new(s2c);
        view.c2s.unacked = unacked[0];
        view.s2c.unacked = unacked[1];
        view
    }

    pub fn dir(&self, d: Direction) -> &DirView {
        match d {
            Direction::ClientToServer => &self.c2s,
            Direction::ServerToClient => &self.s2c,
        }
    }
}

/// Everything known at the end of a capture.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub capture: CaptureInfo,
    pub summary: Summary,
    /// Sessions still kept by the tracker (all of them unless some were evicted).
    pub sessions: Vec<SessionView>,
    pub evicted_sessions: u64,
    /// Messages by type, per protocol (the summary merges them by name).
    pub messages_by_protocol: Vec<crate::engine::ProtocolMessages>,
    pub findings: FindingStats,
    /// The mean time between two transmissions of a resent reliable message, in
    /// ms: the sender's resend cycle (the specification's ~15 Hz is 66.7 ms).
    pub resend_interval_ms: Option<f64>,
    /// The UDP datagrams no protocol recognised, and the packets recognised
    /// in the whole capture: what `check` says of a capture with no packet of
    /// a known protocol.
    pub unknown: Unknown,
}

/// The UDP traffic no protocol took, with the port most of it used: why a
/// capture shows no packet of a known protocol (a game on another port, a
/// capture begun after the handshake) and what to try (`-d udp.port==N,...`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unknown {
    /// Packets of every protocol in the whole capture (a window or a
    /// `--session` may select fewer).
    pub recognised: u64,
    /// UDP datagrams no protocol recognised.
    pub datagrams: u64,
    /// The port on either side of most of them, and on how many (the lowest
    /// port of a tie).
    pub top_port: Option<(u16, u64)>,
    /// The busiest ports of them, with what each protocol's decoder made of
    /// a sample of each ([`skipped`]).
    pub ports: skipped::Ports,
}

impl Outcome {
    /// Resends per reliable message over every session, as a fraction.
    pub fn resend_rate(&self) -> f64 {
        self.summary.resend_rate()
    }
}

/// What the analysis counts itself, beside the tracker.
#[derive(Debug, Default)]
struct Collect {
    findings: FindingStats,
    /// The datagrams no protocol recognised, by port.
    unknown: skipped::PortTally,
    packets: u64,
    /// Packets per protocol, in the order protocols were first seen.
    protocols: Vec<(&'static ProtocolInfo, u64)>,
    truncated: u64,
    malformed: u64,
    start: Option<Timestamp>,
    end: Option<Timestamp>,
    resend_intervals_ns: u64,
    resend_intervals: u64,
}

impl Observer for Collect {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.packets += 1;
        // Most captures hold one protocol: the last one counted first.
        match self.protocols.last_mut() {
            Some((p, n)) if std::ptr::eq(*p, e.protocol) => *n += 1,
            _ => self.count_protocol(e.protocol),
        }
        let ts = e.datagram.ts;
        self.start = Some(self.start.map_or(ts, |s| s.min(ts)));
        self.end = Some(self.end.map_or(ts, |s| s.max(ts)));
        // Most packets raise nothing.
        if !e.findings.is_empty() {
            self.count_cut(e.findings);
        }
        Flow::Continue
    }

    fn finding(&mut self, f: &Finding) {
        self.findings.add(f);
        // The sender's cycle: its repeats by design and its resends alike.
        if (f.kind == FindingKind::RESEND || f.kind == FindingKind::REPEAT)
            && let Detail::Repeat {
                delay_ns, tries, ..
            } = f.detail
            && tries > 1
        {
            // Absurd clocks (timestamps centuries apart) must not overflow.
            self.resend_intervals_ns = self.resend_intervals_ns.saturating_add(delay_ns);
            self.resend_intervals = self.resend_intervals.saturating_add(u64::from(tries - 1));
        }
    }
}

impl Collect {
    /// A packet of another protocol than the last one counted.
    #[inline(never)]
    fn count_protocol(&mut self, protocol: &'static ProtocolInfo) {
        match self
            .protocols
            .iter_mut()
            .find(|(p, _)| std::ptr::eq(*p, protocol))
        {
            Some((_, n)) => *n += 1,
            None => self.protocols.push((protocol, 1)),
        }
    }

    /// A packet the capture cut short is truncated; one whose kept bytes do
    /// not decode is malformed too.
    #[inline(never)]
    fn count_cut(&mut self, findings: &[Finding]) {
        if findings.iter().any(|f| f.kind == FindingKind::TRUNCATED) {
            self.truncated += 1;
        }
        if findings.iter().any(|f| f.kind == FindingKind::MALFORMED) {
            self.malformed += 1;
        }
    }
}

/// Two observers in turn.
struct Both<'a, A: ?Sized, B: ?Sized>(&'a mut A, &'a mut B);

impl<A: Observer + ?Sized, B: Observer + ?Sized> Observer for Both<'_, A, B> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        let first = self.0.packet(e);
        first.and(self.1.packet(e))
    }
    fn finding(&mut self, f: &Finding) {
        self.0.finding(f);
        self.1.finding(f);
    }
}

/// Whether the packet just analysed passes a display filter: what an export
/// (`-w` with `-r`) writes.
#[derive(Debug, Default)]
struct Select {
    /// Off unless an export asked ([`Analysis::select`]): no cost per packet.
    on: bool,
    filter: Option<Filter>,
    hit: bool,
}

impl Observer for Select {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.hit = self.filter.as_ref().is_none_or(|f| f.matches(e));
        Flow::Continue
    }
}

/// Passes on the packets and findings of the sessions in scope only.
struct Scoped<'a, O: ?Sized> {
    sessions: &'a [SessionId],
    inner: &'a mut O,
}

impl<O: Observer + ?Sized> Observer for Scoped<'_, O> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        match self.sessions.binary_search(&e.session) {
            Ok(_) => self.inner.packet(e),
            Err(_) => Flow::Continue,
        }
    }
    fn finding(&mut self, f: &Finding) {
        if self.sessions.binary_search(&f.session).is_ok() {
            self.inner.finding(f);
        }
    }
}

/// `-Y` or `--window` on the report: the packets (and findings) it counts.
#[derive(Debug)]
struct Selection {
    filter: Filter,
    /// The filter's text, for the outcome.
    label: String,
    /// The frames whose packet was selected.
    frames: FrameSet,
    /// The last frame judged.
    judged: u64,
    window: Window,
}

/// Passes on the selected packets, their findings, and the findings of
/// earlier frames when those frames were selected (a `lost` raised at the end
/// counts with its gap's frame, as in `-z expert,FILTER`), or, for a finding
/// of no frame, when the filter selects it on its own; counts them in the
/// selection's window. So windows that split a capture add up to it.
struct Selected<'a, O: ?Sized> {
    selection: &'a mut Selection,
    inner: &'a mut O,
}

impl<O: Observer + ?Sized> Observer for Selected<'_, O> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        let sel = &mut *self.selection;
        let frame = e.datagram.frame;
        let fresh = frame > sel.judged;
        sel.judged = sel.judged.max(frame);
        if !sel.filter.matches(e) {
            return Flow::Continue;
        }
        sel.frames.insert(frame);
        // Its own findings, held back until it was judged.
        for f in e.findings.iter().filter(|f| fresh && f.frame == frame) {
            sel.window.finding(f);
            self.inner.finding(f);
        }
        sel.window.packet(e);
        self.inner.packet(e)
    }

    fn finding(&mut self, f: &Finding) {
        let sel = &mut *self.selection;
        if f.frame > sel.judged {
            return; // The packet being analysed: judged with it.
        }
        // A finding counts with the frame where it began (a `lost` raised at
        // the end with its gap's); one of no frame, by the filter alone.
        let selected = match f.frame {
            0 => sel.filter.matches_finding(f),
            frame => sel.frames.contains(frame),
        };
        if selected {
            sel.window.finding(f);
            self.inner.finding(f);
        }
    }
}

/// One analysis run: the tracker, the report's own counts, and an output that
/// sees every packet and finding as they come.
pub struct Analysis<O> {
    tracker: Engine,
    collect: Collect,
    output: O,
    select: Select,
    /// `--session`: the sessions the report covers (sorted), every one when
    /// `None`. The engine still follows every session.
    scope: Option<Vec<SessionId>>,
    /// `-Y`, `--window`: the packets the report's own counts cover.
    selection: Option<Box<Selection>>,
    /// What a reader thread may render ahead for the output, and where the
    /// output takes it (`run::ahead`).
    ahead: Option<RenderAhead>,
}

impl<O: Observer> Analysis<O> {
    /// Every registered protocol, with nothing decoded as another.
    pub fn new(output: O) -> Self {
        Self::with_engine(crate::proto::engine(TrackerConfig::default()), output)
    }

    /// On an engine set up by the options (`-d`, `-c`).
    pub fn with_engine(engine: Engine, output: O) -> Self {
        Analysis {
            tracker: engine,
            collect: Collect::default(),
            output,
            select: Select::default(),
            scope: None,
            selection: None,
            ahead: None,
        }
    }

    /// Lets a reader thread render parts of the output ahead (`run::ahead`).
    pub(crate) fn render_ahead(&mut self, link: RenderAhead) {
        self.ahead = Some(link);
    }

    /// Restricts the report's counts (its tables, the JSON summary) to the
    /// packets `filter` selects, and the findings of their frames: a part of
    /// the capture. The engine still analyses every packet, and the output
    /// sees them all (it has its own filter). `label`: the filter as given.
    pub fn restrict_to(&mut self, filter: Filter, label: String) {
        self.selection = Some(Box::new(Selection {
            filter,
            label,
            frames: FrameSet::default(),
            judged: 0,
            window: Window::new(),
        }));
    }

    /// Restricts the report to `sessions` (`--session`): the outputs, the
    /// tables and the summary see their packets and findings only.
    pub fn restrict(&mut self, mut sessions: Vec<SessionId>) {
        sessions.sort_unstable();
        sessions.dedup();
        self.scope = Some(sessions);
    }

    /// Judges each packet by `filter` (every packet, for `None`), for
    /// [`Analysis::selected`].
    pub fn select(&mut self, filter: Option<Filter>) {
        self.select.on = true;
        self.select.filter = filter;
    }

    /// Whether the last datagram was recognised and passed the filter of
    /// [`Analysis::select`].
    pub fn selected(&self) -> bool {
        self.select.hit
    }

    /// Analyses one datagram of a registered protocol; what the output wants
    /// next (a failed output says stop).
    #[inline]
    pub fn datagram(&mut self, d: &Datagram<'_>) -> Flow {
        if self.selection.is_some() || self.scope.is_some() {
            return self.datagram_in_part(d);
        }
        // The whole capture, every session: the same as below without the
        // part's counts and the scope, inline. With them inlined, every
        // packet saved and restored the registers they use.
        self.select.hit = false;
        let on = self.select.on;
        let mut rest = Both(&mut self.output, &mut self.select);
        let all: &mut dyn Observer = if on { &mut rest } else { rest.0 };
        let mut both = Both(&mut self.collect, all);
        let flow = self.tracker.observe(d, &mut both);
        if flow.is_none() {
            self.collect.unknown.add(d);
        }
        flow.unwrap_or(Flow::Continue)
    }

    /// [`Analysis::datagram`] with a part of the capture selected
    /// (`selection`) or some sessions only (`scope`).
    #[inline(never)]
    fn datagram_in_part(&mut self, d: &Datagram<'_>) -> Flow {
        self.select.hit = false;
        let on = self.select.on;
        let mut rest = Both(&mut self.output, &mut self.select);
        let all: &mut dyn Observer = if on { &mut rest } else { rest.0 };
        let mut selected;
        let collect: &mut dyn Observer = match self.selection.as_deref_mut() {
            None => &mut self.collect,
            Some(selection) => {
                selection.window.before(self.tracker.session_for(d));
                selected = Selected {
                    selection,
                    inner: &mut self.collect,
                };
                &mut selected
            }
        };
        let mut both = Both(collect, all);
        let flow = match &self.scope {
            None => self.tracker.observe(d, &mut both),
            Some(sessions) => self.tracker.observe(
                d,
                &mut Scoped {
                    sessions,
                    inner: &mut both,
                },
            ),
        };
        if let Some(selection) = self.selection.as_deref_mut() {
            selection.window.after(self.tracker.session_for(d));
        }
        if flow.is_none() {
            self.collect.unknown.add(d);
        }
        flow.unwrap_or(Flow::Continue)
    }

    /// Datagrams a protocol recognised so far.
    pub fn recognised(&self) -> u64 {
        self.tracker.recognised()
    }

    /// Whether the engine stops after a count of datagrams (`-c`).
    pub fn stops_early(&self) -> bool {
        self.tracker.has_limit()
    }

    /// Whether that count (`-c`) was reached.
    pub fn limit_reached(&self) -> bool {
        self.tracker.limit_reached()
    }

    /// The output, e.g. to see whether it failed to write.
    pub fn output(&mut self) -> &mut O {
        &mut self.output
    }

    /// Ends the capture. `capture` carries what the front end counted (files,
    /// frames, other traffic, kernel drops); the lwar counts are filled in here,
    /// and the time span when the front end left it empty.
    pub fn finish(mut self, mut capture: CaptureInfo) -> (Outcome, O) {
        if let Some(selection) = self.selection.as_deref_mut() {
            selection.window.end_begins(&self.tracker);
        }
        let mut selected;
        let collect: &mut dyn Observer = match self.selection.as_deref_mut() {
            None => &mut self.collect,
            Some(selection) => {
                selected = Selected {
                    selection,
                    inner: &mut self.collect,
                };
                &mut selected
            }
        };
        let mut both = Both(collect, &mut self.output);
        let mut summary = match &self.scope {
            None => self.tracker.finish(&mut both),
            Some(sessions) => self.tracker.finish(&mut Scoped {
                sessions,
                inner: &mut both,
            }),
        };
        if let Some(selection) = self.selection.as_deref_mut() {
            selection.window.end_done(&self.tracker);
            selection.window.settle(&self.tracker);
        }
        let c = &self.collect;
        capture.protocols = c
            .protocols
            .iter()
            .map(|(p, n)| (p.name.to_owned(), *n))
            .collect();
        capture.lwar_packets = capture.protocols.get("lwar").copied().unwrap_or(0);
        capture.other += self.tracker.unrecognised().other;
        capture.truncated = c.truncated;
        capture.malformed = c.malformed;
        capture.start = capture.start.or(c.start);
        capture.end = capture.end.or(c.end);
        let resend_interval_ms = (c.resend_intervals > 0)
            .then(|| c.resend_intervals_ns as f64 / c.resend_intervals as f64 / 1e6);
        let mut sessions = Vec::new();
        let scope = self.scope.as_deref();
        let keep = |id: SessionId| scope.is_none_or(|s| s.binary_search(&id).is_ok());
        let selection = self.selection.as_deref();
        self.tracker.for_each_session(|s| match selection {
            None if keep(s.id) => sessions.push(SessionView::new(s)),
            None => {}
            Some(sel) => {
                if let Some(dirs) = sel.window.directions(s.id) {
                    let unacked = Window::unacked(s, &|f| sel.frames.contains(f));
                    sessions.push(SessionView::part(s, dirs, unacked));
                }
            }
        });
        let mut messages_by_protocol = self.tracker.messages_by_protocol();
        let mut evicted_sessions = self.tracker.evicted_sessions();
        if scope.is_some() {
            (summary, messages_by_protocol) = self.tracker.summary_of(&keep);
            evicted_sessions = 0;
            capture.sessions_only = self.scope.clone();
        }
        if let Some(sel) = selection {
            let part = sel.window.summary(&self.tracker);
            summary = part.summary;
            messages_by_protocol = part.messages_by_protocol;
            evicted_sessions = summary.evicted.map_or(0, |e| e.sessions);
            capture.selection = Some(sel.label.clone());
        }
        let outcome = Outcome {
            capture,
            summary,
            sessions,
            evicted_sessions,
            messages_by_protocol,
            resend_interval_ms,
            findings: self.collect.findings,
            unknown: {
                let ports = self.collect.unknown.top();
                Unknown {
                    recognised: self.tracker.recognised(),
                    datagrams: self.collect.unknown.datagrams,
                    top_port: ports.iter().next().map(|h| (h.port, h.datagrams)),
                    ports,
                }
            },
        };
        (outcome, self.output)
    }
}

/// The loop feeds the analysis: the engine, the report's counts and the
/// output see each datagram in turn.
impl<O: Observer> Consumer for Analysis<O> {
    fn datagram(&mut self, d: &Datagram<'_>) -> Flow {
        Analysis::datagram(self, d)
    }

    fn recognised(&self) -> u64 {
        Analysis::recognised(self)
    }

    fn selected(&self) -> bool {
        Analysis::selected(self)
    }

    fn stops_early(&self) -> bool {
        Analysis::stops_early(self)
    }

    fn limit_reached(&self) -> bool {
        Analysis::limit_reached(self)
    }

    /// The renderer set by `Analysis::render_ahead`, for a two-thread run.
    fn take_ahead(&mut self) -> Option<ReadAhead> {
        Some(ReadAhead {
            render: self.ahead.take()?,
            guess: self.tracker.guess(),
        })
    }

    fn put_ahead(&mut self, ahead: Option<ReadAhead>) {
        self.ahead = ahead.map(|a| a.render);
    }

    fn probe_marks(&self) -> Option<crate::engine::ProbeMarks> {
        self.tracker.probe_marks()
    }
}

/// The expected rate of a message type (by its ordinal) per the protocol's
/// specification, in Hz.
pub fn spec_rate_hz(protocol: &ProtocolInfo, ordinal: usize) -> Option<f64> {
    protocol
        .spec_rates
        .iter()
        .find(|(o, _)| *o == ordinal)
        .map(|(_, hz)| *hz)
}

/// The observed rate of a message type, averaged over the sessions that carry it:
/// all their messages of that type over the time their direction was active.
pub fn observed_rate_hz(
    sessions: &[SessionView],
    protocol: &ProtocolInfo,
    ordinal: usize,
) -> Option<f64> {
    let (mut count, mut secs) = (0u64, 0f64);
    for s in sessions
        .iter()
        .filter(|s| std::ptr::eq(s.protocol, protocol))
    {
        let d = if s.c2s.per_type[ordinal] >= s.s2c.per_type[ordinal] {
            &s.c2s
        } else {
            &s.s2c
        };
        let n = d.per_type[ordinal];
        if n > 1 && d.duration_secs > 0.0 {
            count += n - 1;
            secs += d.duration_secs;
        }
    }
    (secs > 0.0).then(|| count as f64 / secs)
}

/// `--list-fields`: every registered field of every protocol, one per line:
/// name, type, the specification's label, and what it is (as tshark's `-G
/// fields`).
pub fn list_fields(out: &mut impl std::io::Write) -> std::io::Result<()> {
    for p in crate::proto::REGISTRY {
        for f in p.info.dissector.field_defs() {
            writeln!(
                out,
                "{:<32} {:<9} {:<14} {}",
                f.name,
                format!("{:?}", f.ty).to_lowercase(),
                f.label,
                f.doc
            )?;
        }
    }
    Ok(())
}

/// `--list-findings`: every registered finding, one per line, by the name
/// `check --deny`, `--allow` and `--max` take (a shared kind, `resend`; a
/// protocol's kind, `lwar.input-gap`; a protocol's rule, whose findings are
/// `violation`s, `lwar.violation.after-disconnect`), with its group, its
/// severity and what it means (Wireshark's expert info, listed).
pub fn list_findings(out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut line = |name: &dyn fmt::Display, group: Group, severity: Severity, doc: &str| {
        let name = name.to_string();
        let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
        writeln!(
            out,
            "{name:<40} {:<9} {:<8} {doc}",
            group.name(),
            severity.name()
        )
    };
    for kind in crate::proto::all_kinds() {
        let def = kind.def();
        match def.proto {
            "" => line(&def.name, def.group, def.severity, def.doc)?,
            proto => line(
                &format_args!("{proto}.{}", def.name),
                def.group,
                def.severity,
                def.doc,
            )?,
        }
    }
    let violation = FindingKind::VIOLATION;
    for rule in crate::proto::all_rules() {
        let doc = rule.def().doc;
        line(
            &rule.full_name(),
            violation.group(),
            violation.severity(),
            doc,
        )?;
    }
    Ok(())
}

/// The findings reference, `docs/findings.md`: every registered finding and
/// rule as Markdown, by protocol (the shared kinds first), from the same
/// registry as `--list-findings`, so the page cannot drift from the code
/// (`tests/report/docs.rs` holds the file to it).
pub fn findings_reference(out: &mut impl std::io::Write) -> std::io::Result<()> {
    writeln!(
        out,
        "# Findings reference\n\n\
         Generated from the registry by `UPDATE_DOCS=1 cargo test --test report docs::` (the test\n\
         fails when this page and the code disagree); `lwarscope --list-findings` prints\n\
         the same. Each name is what `-Y`, `check --deny`, `--allow` and `--max` take.\n\
         A note never fails a healthy capture: it says what the capture cannot prove."
    )?;
    let cell = |doc: &str| {
        doc.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace('|', "\\|")
    };
    let mut protos: Vec<&str> = vec![""];
    for kind in crate::proto::all_kinds() {
        if !protos.contains(&kind.def().proto) {
            protos.push(kind.def().proto);
        }
    }
    for rule in crate::proto::all_rules() {
        if !protos.contains(&rule.def().proto) {
            protos.push(rule.def().proto);
        }
    }
    for proto in protos {
        let title = match proto {
            "" => "Every protocol".to_owned(),
            p => format!("`{p}`"),
        };
        writeln!(
            out,
            "\n## {title}\n\n| finding | group | severity | what the capture shows |\n| --- | --- | --- | --- |"
        )?;
        for kind in crate::proto::all_kinds().filter(|k| k.def().proto == proto) {
            let def = kind.def();
            let name = match proto {
                "" => def.name.to_owned(),
                p => format!("{p}.{}", def.name),
            };
            writeln!(
                out,
                "| `{name}` | {} | {} | {} |",
                def.group.name(),
                def.severity.name(),
                cell(def.doc)
            )?;
        }
        let violation = FindingKind::VIOLATION;
        for rule in crate::proto::all_rules().filter(|r| r.def().proto == proto) {
            writeln!(
                out,
                "| `{}` | {} | {} | {} |",
                rule.full_name(),
                violation.group().name(),
                violation.severity().name(),
                cell(rule.def().doc)
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod testdata {
    //! Datagrams of the real server's clean capture, from the shared vectors.

    use crate::capture::{OwnedDatagram, Timestamp};
    use std::net::SocketAddr;

    use crate::test_vectors as vectors;

    /// Every frame of the fixture, 33 ms apart, between 127.0.0.1 ports.
    pub fn clean() -> Vec<OwnedDatagram> {
        let addr = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
        vectors::real_server()
            .into_iter()
            .map(|v| {
                OwnedDatagram::new(
                    v.frame,
                    Timestamp::from_millis(1_700_000_000_000 + v.frame * 33),
                    addr(v.src_port),
                    addr(v.dst_port),
                    v.payload,
                )
            })
            .collect()
    }
}

/// The capture counters in the report's terms.
pub fn capture_info(
    stats: &crate::capture::CaptureStats,
    files: &[std::path::PathBuf],
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
        incomplete_reasons: c
            .incomplete_by
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(r, n)| (r.key().to_owned(), n))
            .collect(),
        duplicate_fragments: c.duplicate_fragments,
        received: stats.pcap.map(|p| p.received),
        kernel_dropped: stats.pcap.map(|p| p.dropped_by_kernel),
        interface_dropped: stats.pcap.map(|p| p.dropped_by_interface),
        sessions_only: None,
        selection: None,
        interrupted: false,
        interrupted_by: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analysis_of_the_clean_capture() {
        let mut a = Analysis::new(());
        for d in testdata::clean() {
            a.datagram(&d.as_datagram());
        }
        let (o, ()) = a.finish(CaptureInfo {
            frames: 525,
            ..Default::default()
        });
        if std::env::var_os("SHOW").is_some() {
            println!(
                "{}",
                table::render(
                    &o,
                    table::Layout {
                        width: 100,
                        color: false
                    }
                )
            );
        }
        assert_eq!(o.capture.lwar_packets, 525);
        assert_eq!(o.capture.malformed, 0);
        assert_eq!(o.sessions.len(), 2);
        let packets: u64 = o
            .sessions
            .iter()
            .map(|s| s.c2s.packets + s.s2c.packets)
            .sum();
        assert_eq!(packets, 525);
        assert!(o.sessions.iter().all(|s| s.server.port() == 32422));
        // The report's finding counts agree with the tracker's summary.
        assert_eq!(o.findings.count(FindingKind::MALFORMED), 0);
        for row in o.findings.rows() {
            let summary = match row.label.strip_prefix("violation/") {
                Some(rule) => o.summary.violations.get(rule),
                None => o.summary.findings.get(&row.label),
            };
            assert_eq!(summary, Some(&row.count), "{}", row.label);
        }
        let input_ordinal = crate::proto::lwar::wire::MessageType::Input.ordinal();
        let input =
            observed_rate_hz(&o.sessions, &crate::proto::lwar::INFO, input_ordinal).unwrap();
        assert!(input > 1.0, "{input}");
    }

    /// A window over more sessions than it (and the engine) follows one by
    /// one still counts every one of them.
    #[test]
    fn a_window_over_many_sessions_counts_them_all() {
        let first = testdata::clean()
            .into_iter()
            .find(|d| d.dst.port() == 32422)
            .unwrap();
        let n = crate::engine::window::MAX_SESSIONS as u64 + 904;
        let datagrams: Vec<_> = (0..n)
            .map(|i| {
                let mut d = first.clone();
                d.frame = i + 1;
                d.src.set_port(10_000 + i as u16);
                d.src
                    .set_ip(std::net::Ipv4Addr::from(0x0a00_0000 + i as u32).into());
                d
            })
            .collect();
        let run = |filter: Option<&str>| {
            let mut a = Analysis::new(());
            if let Some(f) = filter {
                a.restrict_to(Filter::parse(f).unwrap(), f.to_owned());
            }
            for d in &datagrams {
                a.datagram(&d.as_datagram());
            }
            a.finish(CaptureInfo::default()).0
        };
        let whole = run(None);
        let part = run(Some("frame >= 1"));
        assert_eq!(whole.summary.session_count(), n);
        assert_eq!(part.summary.session_count(), n);
        assert_eq!(part.summary.messages, whole.summary.messages);
        assert_eq!(part.summary.findings, whole.summary.findings);
        let evicted = part.summary.evicted.unwrap();
        assert_eq!(evicted.packets + part.sessions.len() as u64, n);
        assert_eq!(part.evicted_sessions, evicted.sessions);
        // Half of them: the others are not counted.
        let half = run(Some("frame <= 2500"));
        assert_eq!(half.summary.session_count(), 2500);
        let listed: u64 = half.sessions.iter().map(|s| s.c2s.packets).sum();
        assert_eq!(listed + half.summary.evicted.map_or(0, |e| e.packets), 2500);
    }

    #[test]
    fn finding_rows_are_worst_first() {
        let mut st = FindingStats::default();
        let f = |kind, rule, frame| Finding {
            kind,
            rule,
            frame,
            ts: Timestamp(0),
            session: 0,
            direction: Direction::ClientToServer,
            seqno: None,
            detail: crate::engine::Detail::None,
        };
        for frame in [9, 3, 3, 4, 5, 6, 7, 8] {
            st.add(&f(FindingKind::RESEND, None, frame));
        }
        st.add(&f(FindingKind::LOST, None, 2));
        st.add(&f(
            FindingKind::VIOLATION,
            Some(crate::proto::lwar::findings::rules::WRONG_SENDER),
            1,
        ));
        let rows = st.rows();
        let labels: Vec<_> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["violation/wrong-sender", "lost", "resend"]);
        assert_eq!(rows[2].count, 8);
        assert_eq!(rows[2].first_frames, [3, 4, 5, 6, 9]);
        assert!(rows[2].more_frames);
        assert!(!rows[1].more_frames);
    }
}
