//! The report of `lwarscope -r FILE`: the capture, its sessions, its message types
//! and its findings, as tables that fit the terminal.

use super::{Outcome, SessionView, observed_rate_hz, spec_rate_hz};
use crate::capture::Timestamp;
use crate::engine::Severity;
use comfy_table::{
    Attribute, Cell, CellAlignment, Color, ColumnConstraint, ContentArrangement, Table, Width,
    presets,
};
use std::fmt::Write;

/// How to lay the tables out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Total width in columns.
    pub width: u16,
    pub color: bool,
}

/// The width below which the sessions and directions tables fold their
/// columns (an 80-column terminal gets the compact layout).
pub const COMPACT_BELOW: u16 = 100;

impl Layout {
    /// The width of the terminal on standard output; when it is not one, the
    /// `COLUMNS` environment variable's (as `ls` and tshark's pagers take it),
    /// or 100.
    pub fn for_stdout(color: bool) -> Self {
        use std::io::IsTerminal;
        let columns = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<u16>().ok())
            .filter(|&c| c >= 20);
        let width = if std::io::stdout().is_terminal() {
            crossterm::terminal::size()
                .ok()
                .map(|(w, _)| w)
                .filter(|&w| w > 0)
                .or(columns)
                .unwrap_or(100)
        } else {
            columns.unwrap_or(100)
        };
        Layout { width, color }
    }

    /// Whether the tables fold columns to fit.
    pub fn compact(self) -> bool {
        self.width < COMPACT_BELOW
    }
}

/// A table in the report's style, for the statistics' own tables.
pub fn plain_table(layout: Layout, header: &[&str]) -> Table {
    table(layout, header)
}

fn table(layout: Layout, header: &[&str]) -> Table {
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
    keep_words(&mut t, header, 2);
    t
}

/// A heading breaks between its words, never inside one: each column is at
/// least as wide as its longest heading word and its `padding`.
fn keep_words(t: &mut Table, header: &[&str], padding: u16) {
    for (i, h) in header.iter().enumerate() {
        let word = h
            .split_whitespace()
            .map(|w| w.chars().count())
            .max()
            .unwrap_or(0);
        if let Some(col) = t.column_mut(i) {
            col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
                word as u16 + padding,
            )));
        }
    }
}

fn right(t: &mut Table, columns: &[usize]) {
    for &c in columns {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// A UTC date and time, `2023-11-14 22:13:20.033`.
/// The civil date (year, month, day) of a count of days since 1970-01-01
/// (Howard Hinnant's algorithm).
pub(super) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

pub fn utc(ts: Timestamp) -> String {
    let secs = ts.nanos() / 1_000_000_000;
    let millis = (ts.nanos() / 1_000_000) % 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{millis:03}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn severity_color(s: Severity) -> Option<Color> {
    match s {
        Severity::Error => Some(Color::Red),
        Severity::Warning => Some(Color::Yellow),
        Severity::Note => None,
    }
}

fn state_color(s: &str) -> Option<Color> {
    match s {
        "closed" | "playing" => Some(Color::Green),
        "timed-out" | "rejected" => Some(Color::Yellow),
        _ => None,
    }
}

fn colored(text: impl ToString, color: Option<Color>) -> Cell {
    match color {
        Some(c) => Cell::new(text).fg(c),
        None => Cell::new(text),
    }
}

/// `a/b`, for the two directions of a session.
fn pair(a: impl std::fmt::Display, b: impl std::fmt::Display) -> String {
    format!("{a}/{b}")
}

/// Two delays in one cell, in ms (the unit is in the heading): `2.0/99.3`.
fn pair_ms(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{a:.1}/{b:.1}"),
        _ => "-".to_owned(),
    }
}

/// The row of datagrams given up for `r`.
fn incomplete_label(r: crate::capture::IncompleteReason) -> &'static str {
    use crate::capture::IncompleteReason as R;
    match r {
        R::TimedOut => "  of which timed out",
        R::MemoryLimit => "  of which over the memory limit",
        R::Conflict => "  of which conflicting fragments",
        R::Overlap => "  of which overlapping fragments",
        R::TooManyFragments => "  of which too many fragments",
        R::EndOfCapture => "  of which cut by the end of capture",
    }
}

/// The rows that say what the figures cover when it is less than the whole
/// capture: a run cut short by a signal, `--session`, `-Y` or `--window`.
fn limits_rows(t: &mut Table, c: &super::CaptureInfo) {
    if c.interrupted {
        t.add_row(vec![
            Cell::new("interrupted"),
            colored(
                format!(
                    "by {} after frame {}: the files were not read to their end, and every figure counts the frames read",
                    c.interrupted_by.as_deref().unwrap_or("a signal"),
                    c.frames
                ),
                Some(Color::Red),
            ),
        ]);
    }
    if let Some(ids) = &c.sessions_only {
        let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
        t.add_row(vec![
            "restricted to".to_owned(),
            format!(
                "session{} {} (--session); the frames are the whole capture's",
                if ids.len() == 1 { "" } else { "s" },
                ids.join(", ")
            ),
        ]);
    }
    if let Some(expr) = &c.selection {
        t.add_row(vec![
            "selected by".to_owned(),
            format!(
                "{}: the packets it matches and the findings of their frames; the frames are the whole capture's",
                printable(expr)
            ),
        ]);
    }
}

/// The capture table: what was read.
pub fn capture_table(o: &Outcome, layout: Layout) -> Table {
    let c = &o.capture;
    let mut t = table(layout, &["capture", ""]);
    let source = match &c.interface {
        Some(i) => format!("live on {}", printable(i)),
        None => (c.files.iter())
            .map(|f| printable(f).to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    };
    t.add_row(vec!["files".to_owned(), source]);
    let span = match (c.start, c.end) {
        (Some(a), Some(b)) => format!("{} - {} UTC ({:.3} s)", utc(a), utc(b), c.duration_secs()),
        _ => "-".to_owned(),
    };
    t.add_row(vec!["time span".to_owned(), span]);
    limits_rows(&mut t, c);
    t.add_row(vec!["frames".to_owned(), c.frames.to_string()]);
    // One row per protocol seen; when none was, one that names every
    // protocol looked for.
    if c.protocols.is_empty() {
        let names: Vec<&str> = crate::proto::REGISTRY.iter().map(|p| p.info.name).collect();
        t.add_row(vec![
            "packets of a known protocol".to_owned(),
            format!("0 ({})", names.join(", ")),
        ]);
    }
    let mut rows: Vec<(String, u64)> = Vec::new();
    for p in crate::proto::REGISTRY.iter().map(|p| p.info) {
        let n = c.protocols.get(p.name).copied().unwrap_or(0);
        if n > 0 {
            rows.push((format!("{} packets", p.title), n));
        }
    }
    let mut rows_rest = vec![("other traffic (skipped)", c.other)];
    if c.filtered > 0 {
        rows_rest.push(("rejected by the capture filter (-f)", c.filtered));
    }
    if c.broken > 0 {
        rows_rest.push(("broken IP/UDP headers", c.broken));
    }
    rows_rest.extend([("truncated", c.truncated), ("malformed", c.malformed)]);
    if c.reassembled + c.incomplete > 0 {
        rows_rest.push(("reassembled from IP fragments", c.reassembled));
        rows_rest.push(("fragmented, incomplete", c.incomplete));
        // Why they were given up.
        for r in crate::capture::IncompleteReason::ALL {
            if let Some(&n) = c.incomplete_reasons.get(r.key()) {
                rows_rest.push((incomplete_label(r), n));
            }
        }
    }
    if c.duplicate_fragments > 0 {
        rows_rest.push(("IP fragments copied (dropped)", c.duplicate_fragments));
    }
    if let Some(r) = c.received {
        // On Linux, the loopback device hands the capture each packet twice
        // (out and in); libpcap delivers one of them but counts both.
        let label = match c.interface.as_deref() {
            Some("lo" | "any") => "received by libpcap (lo counts each twice)",
            _ => "received by libpcap",
        };
        rows_rest.push((label, r));
    }
    if let Some(d) = c.kernel_dropped {
        rows_rest.push(("dropped by the kernel", d));
    }
    if let Some(d) = c.interface_dropped {
        rows_rest.push(("dropped by the interface", d));
    }
    rows.extend(rows_rest.into_iter().map(|(l, n)| (l.to_owned(), n)));
    for (label, n) in rows {
        let bad = n > 0
            && matches!(
                label.as_str(),
                "truncated"
                    | "malformed"
                    | "fragmented, incomplete"
                    | "dropped by the kernel"
                    | "dropped by the interface"
                    | "broken IP/UDP headers"
            );
        t.add_row(vec![
            Cell::new(label),
            colored(n, bad.then_some(Color::Yellow)),
        ]);
    }
    let mut sessions = o.sessions.len().to_string();
    if o.evicted_sessions > 0 {
        write!(
            sessions,
            " (and {} evicted to bound memory, counted in the totals)",
            o.evicted_sessions
        )
        .ok();
    }
    t.add_row(vec!["sessions".to_owned(), sessions]);
    t
}

fn player(s: &SessionView) -> String {
    match &s.player {
        Some(p) if p.name.is_empty() => p.id.to_string(),
        Some(p) => format!("{} {}", p.id, printable(&p.name)),
        None => "-".to_owned(),
    }
}

/// Text from the wire, safe on a terminal (see [`crate::text`]).
pub use crate::text::printable;

/// The sessions table: who, in which state, for how long, and how much each way
/// (`c2s / s2c`).
pub fn sessions_table(o: &Outcome, layout: Layout) -> Table {
    // The protocol under the session number when the capture mixes protocols,
    // or when a flow was taken for its protocol by a port the user named rather
    // than by its bytes.
    let first = o.sessions.first().map(|s| s.protocol.name);
    let protocols = o.sessions.iter().any(|s| {
        Some(s.protocol.name) != first || s.recognised_by == crate::engine::RecognisedBy::Port
    });
    // Narrow: the player under the addresses, the duration under the state,
    // the bytes under the packets.
    let compact = layout.compact();
    let header: &[&str] = if compact {
        &[
            "#",
            "client\n-> server\nplayer",
            "state\nduration",
            "packets\nbytes\nc2s/s2c",
            "loss\nc2s/s2c",
        ]
    } else {
        &[
            "#",
            "client\n-> server",
            "player",
            "state",
            "duration",
            "packets\nc2s/s2c",
            "bytes\nc2s/s2c",
            "loss\nc2s/s2c",
        ]
    };
    let mut t = table(layout, header);
    for s in &o.sessions {
        let (a, b) = (&s.c2s, &s.s2c);
        let pct =
            |l: Option<f64>| l.map_or_else(|| "-".to_owned(), |l| format!("{:.1}%", l * 100.0));
        let worst = a.loss.unwrap_or(0.0).max(b.loss.unwrap_or(0.0));
        let id = if protocols {
            let by = match s.recognised_by {
                crate::engine::RecognisedBy::Port => "\nby port",
                _ => "",
            };
            format!("{}\n{}{by}", s.id, s.protocol.name)
        } else {
            s.id.to_string()
        };
        let loss = colored(
            format!("{}/{}", pct(a.loss), pct(b.loss)),
            (worst > 0.02).then_some(Color::Yellow),
        );
        let duration = format!("{:.1} s", s.duration_secs);
        if compact {
            t.add_row(vec![
                Cell::new(id),
                Cell::new(format!("{}\n-> {}\n{}", s.client, s.server, player(s))),
                colored(format!("{}\n{duration}", s.state), state_color(s.state)),
                Cell::new(format!(
                    "{}\n{}",
                    pair(a.packets, b.packets),
                    pair(a.bytes, b.bytes)
                )),
                loss,
            ]);
        } else {
            t.add_row(vec![
                Cell::new(id),
                Cell::new(format!("{}\n-> {}", s.client, s.server)),
                Cell::new(player(s)),
                colored(s.state, state_color(s.state)),
                Cell::new(duration),
                Cell::new(pair(a.packets, b.packets)),
                Cell::new(pair(a.bytes, b.bytes)),
                loss,
            ]);
        }
    }
    // Addresses and numbers are never broken; the player's name wraps instead.
    let (numbers, whole): (&[usize], &[usize]) = if compact {
        (&[0, 3, 4], &[0, 2, 3, 4])
    } else {
        (&[0, 4, 5, 6, 7], &[0, 1, 3, 4, 5, 6, 7])
    };
    right(&mut t, numbers);
    for &c in whole {
        if let Some(col) = t.column_mut(c) {
            col.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    t
}

/// The reliability table: one row per session direction.
pub fn directions_table(o: &Outcome, layout: Layout) -> Table {
    // Narrow: the same columns under shorter headings.
    let header: &[&str] = if layout.compact() {
        &[
            "#",
            "dir",
            "msgs",
            "rpts",
            "rsnd",
            "reord",
            "gaps",
            "lost",
            "malf",
            "ack ms\np50/95",
            "unack",
        ]
    } else {
        &[
            "#",
            "dir",
            "msgs",
            "repeats",
            "resends",
            "reorders",
            "gaps",
            "lost",
            "malformed",
            "ack ms\np50/p95",
            "unacked",
        ]
    };
    let mut t = table(layout, header);
    for s in &o.sessions {
        for (name, d) in [("c2s", &s.c2s), ("s2c", &s.s2c)] {
            let warn = |n: u64| colored(n, (n > 0).then_some(Color::Yellow));
            t.add_row(vec![
                Cell::new(s.id),
                Cell::new(name),
                Cell::new(d.messages),
                Cell::new(d.repeats),
                warn(d.resends),
                warn(d.reordered),
                Cell::new(d.gaps),
                warn(d.lost),
                colored(d.malformed, (d.malformed > 0).then_some(Color::Red)),
                Cell::new(pair_ms(d.ack_p50_ms, d.ack_p95_ms)),
                Cell::new(d.unacked),
            ]);
        }
    }
    right(&mut t, &[0, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Narrow, a column's padding is one space; the delays are never broken.
    if layout.compact() {
        for col in t.column_iter_mut() {
            col.set_padding((1, 0));
        }
        keep_words(&mut t, header, 1);
    }
    if let Some(col) = t.column_mut(9) {
        col.set_constraint(ColumnConstraint::ContentWidth);
    }
    t
}

/// The message types table: counts, bytes, and the observed rate per session
/// against the rate the specification states.
pub fn messages_table(o: &Outcome, layout: Layout) -> Table {
    let mut t = table(
        layout,
        &["message", "count", "bytes", "rate/session", "spec rate"],
    );
    let mixed = o.messages_by_protocol.len() > 1;
    for m in &o.messages_by_protocol {
        message_rows(&mut t, o, m, mixed);
    }
    if let Some(ms) = o.resend_interval_ms {
        resend_cycle_row(&mut t, o, ms);
    }
    right(&mut t, &[1, 2, 3, 4]);
    t
}

fn message_rows(t: &mut Table, o: &Outcome, m: &crate::engine::ProtocolMessages, mixed: bool) {
    let protocol = m.protocol;
    for (ordinal, name) in protocol.message_types.iter().copied().enumerate() {
        // Every session's, evicted ones included, as the count.
        let bytes = m.bytes.get(name).copied().unwrap_or(0);
        let total = m.counts.get(name).copied().unwrap_or(0);
        if total == 0 {
            continue;
        }
        let observed = observed_rate_hz(&o.sessions, protocol, ordinal);
        let spec = spec_rate_hz(protocol, ordinal);
        let off = match (observed, spec) {
            (Some(o), Some(s)) => (o / s - 1.0).abs() > 0.5,
            _ => false,
        };
        let label = if mixed {
            format!("{name} ({})", protocol.name)
        } else {
            name.to_owned()
        };
        t.add_row(vec![
            Cell::new(label),
            Cell::new(total),
            Cell::new(bytes),
            colored(
                observed.map_or_else(|| "-".to_owned(), |r| format!("{r:.1} Hz")),
                off.then_some(Color::Yellow),
            ),
            Cell::new(spec.map_or_else(|| "-".to_owned(), |r| format!("~{r} Hz"))),
        ]);
    }
}

/// The sender's reliable resend cycle against the specification's ~15 Hz.
fn resend_cycle_row(t: &mut Table, o: &Outcome, ms: f64) {
    {
        let hz = 1e3 / ms;
        t.add_row(vec![
            Cell::new("(reliable resend cycle)"),
            Cell::new(
                ["resend", "repeat"]
                    .iter()
                    .filter_map(|k| o.summary.findings.get(*k))
                    .sum::<u64>(),
            ),
            Cell::new("-"),
            colored(
                format!("{hz:.1} Hz"),
                ((hz / 15.0 - 1.0).abs() > 0.5).then_some(Color::Yellow),
            ),
            Cell::new("~15 Hz"),
        ]);
    }
}

/// The findings table, worst first.
pub fn findings_table(o: &Outcome, layout: Layout) -> Table {
    findings_table_from(&o.findings.rows(), layout)
}

/// A findings table of the given rows.
pub fn findings_table_from(rows: &[super::FindingRow], layout: Layout) -> Table {
    let mut t = table(layout, &["finding", "severity", "count", "first frames"]);
    for row in rows {
        let color = severity_color(row.severity);
        let mut frames = row
            .first_frames
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if row.more_frames {
            frames.push_str(", ...");
        }
        t.add_row(vec![
            colored(&row.label, color),
            colored(row.severity, color),
            Cell::new(row.count),
            Cell::new(frames),
        ]);
    }
    right(&mut t, &[2]);
    t
}

/// Session notes shown at most.
const MAX_NOTED_SESSIONS: usize = 32;

/// `text` after `first` (already in `out`), its words wrapped at `width`,
/// the lines after the first indented by `indent`.
fn wrap_words(out: &mut String, first: usize, text: &str, width: usize, indent: &str) {
    let mut col = first;
    for (i, word) in text.split(' ').enumerate() {
        let len = word.chars().count();
        if i > 0 && col + 1 + len > width && col > indent.len() {
            out.push('\n');
            out.push_str(indent);
            col = indent.len();
        } else if i > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += len;
    }
    out.push('\n');
}

/// What protocols tell of their sessions beyond the counts (a byte order,
/// who closed a session and why, round trips), a paragraph per session,
/// wrapped at the layout's width.
fn session_notes(out: &mut String, o: &Outcome, layout: Layout) {
    let noted: Vec<_> = o.sessions.iter().filter(|s| !s.notes.is_empty()).collect();
    if noted.is_empty() {
        return;
    }
    out.push_str("Sessions:\n");
    let width = usize::from(layout.width).max(40);
    for s in noted.iter().take(MAX_NOTED_SESSIONS) {
        let text: Vec<&str> = s.notes.iter().map(|(_, t)| t.as_str()).collect();
        let head = format!("  {} {}: ", s.id, s.protocol.name);
        out.push_str(&head);
        let body = format!("{}.", text.join("; "));
        wrap_words(out, head.chars().count(), &body, width, "    ");
    }
    if noted.len() > MAX_NOTED_SESSIONS {
        writeln!(
            out,
            "  ... and {} more (JSON has every session's notes).",
            noted.len() - MAX_NOTED_SESSIONS
        )
        .ok();
    }
    out.push('\n');
}

/// The busiest ports of the UDP traffic no protocol recognised, and what the
/// decoders made of each (see [`super::skipped`]): a paragraph when there is
/// any.
fn skipped_ports(out: &mut String, o: &Outcome, layout: Layout) {
    let u = &o.unknown;
    if u.ports.is_empty() {
        return;
    }
    let width = usize::from(layout.width).max(40);
    let head = format!(
        "Skipped UDP traffic, {} datagram{} of no known protocol; its busiest ports (decoders tried on up to {} of each):",
        u.datagrams,
        if u.datagrams == 1 { "" } else { "s" },
        super::skipped::SAMPLE
    );
    wrap_words(out, 0, &head, width, "");
    for hint in u.ports.iter() {
        out.push_str("  ");
        wrap_words(out, 2, &hint.to_string(), width, "    ");
    }
    out.push('\n');
}

/// The whole report: the four tables, one after the other.
pub fn render(o: &Outcome, layout: Layout) -> String {
    let mut out = String::new();
    writeln!(out, "{}\n", capture_table(o, layout)).ok();
    skipped_ports(&mut out, o, layout);
    if o.sessions.is_empty() {
        out.push_str("No sessions: no packet of a known protocol.\n");
        return out;
    }
    writeln!(out, "{}\n", sessions_table(o, layout)).ok();
    session_notes(&mut out, o, layout);
    writeln!(out, "{}\n", directions_table(o, layout)).ok();
    writeln!(out, "{}\n", messages_table(o, layout)).ok();
    if o.findings.rows().is_empty() {
        out.push_str("No findings.\n");
    } else {
        writeln!(out, "{}", findings_table(o, layout)).ok();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(Timestamp(0)), "1970-01-01 00:00:00.000");
        assert_eq!(
            utc(Timestamp::from_millis(1_700_000_000_033)),
            "2023-11-14 22:13:20.033"
        );
        assert_eq!(
            utc(Timestamp::from_millis(951_782_400_000)),
            "2000-02-29 00:00:00.000"
        );
    }
}
