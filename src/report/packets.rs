//! Packet views, tcpdump/tshark-like: one line per lwar packet (`--packets`),
//! every field as a tree (`-V`), a hex dump (`-x`). Written as the capture is
//! read.
//!
//! ```text
//!      1   0.000000 127.0.0.1:38379 -> 127.0.0.1:32422 ack=0 ts=0 len=23 Connect#1
//!      2   0.033000 127.0.0.1:32422 -> 127.0.0.1:38379 ack=1 ts=1658 len=104 Join#1 Join#2 Add#3 [resend#3]
//! ```
//!
//! In the tree of `-V`, each node says where it lies, the same for every
//! protocol: the header (`header (12 bytes at offset 0)`), each message
//! (`Connect#1 (13 bytes at offset 12)`, `ConnectionRequest (41 bytes at
//! offset 12)`), a described protocol's packet (`timewarp (1 byte at offset
//! 0)`) and, below them, each structure whose fields follow (`shipInput (12
//! bytes at offset 20)`, `entities[0] (22 bytes at offset 18)`): an item
//! without a value. A field with a value shows it (`appId: 0xf27087c5`);
//! magic numbers are hexadecimal in every protocol (lwar's appId
//! `0xf27087c5`, Starstrike's protocolId `0x53545253`).
//!
//! Write errors are kept, not raised: the caller stops reading when
//! [`PacketPrinter::failed`] says so, and treats a closed pipe as a normal end
//! ([`is_broken_pipe`]).

use super::Filter;
use super::fast;
use crate::capture::{Datagram, Timestamp};
use crate::engine::{Finding, Flow, Observer, PacketEvent, Severity};
use crate::proto::dissect::{Dissector, TreeRef};
use crate::run::ahead::{AheadLink, Ends, Render, RenderAhead, SharedAhead};
use std::fmt;
use std::io::{self, Write};

/// How much to print of each packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacketOptions {
    /// Every field of every message (`-V`).
    pub verbose: bool,
    /// A hex dump (`-x`).
    pub hex: bool,
    pub color: bool,
    /// The time column (`-t`).
    pub time: super::fields::TimeFormat,
}

/// True for the error of writing into a pipe whose reader has gone (`| head`).
pub fn is_broken_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Prints packets as the tracker reports them.
pub struct PacketPrinter<W: Write> {
    out: W,
    options: PacketOptions,
    filter: Option<Filter>,
    first_ts: Option<Timestamp>,
    /// The previous packet read, and the previous one printed (for `-t d|dd`).
    prev_ts: Option<Timestamp>,
    prev_shown_ts: Option<Timestamp>,
    error: Option<io::Error>,
    /// Findings raised since the last packet: after the last one, those of the
    /// end of the capture.
    pending: Vec<Finding>,
    /// The packet's text, written to `out` at once: one write per packet,
    /// not one per piece; batched ([`PacketPrinter::batched`]), many
    /// packets' texts.
    line: Vec<u8>,
    /// The bytes from which `line` is handed to `out` (0: each packet's).
    batch: usize,
    /// The payload parts rendered ahead on a reader thread.
    ahead: AheadLink,
    /// The addresses' texts, remembered.
    addrs: fast::AddrTexts,
}

const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

fn severity_color(s: Severity) -> &'static str {
    match s {
        Severity::Error => RED,
        Severity::Warning => YELLOW,
        Severity::Note => DIM,
    }
}

/// `resend#3`, `violation/wrong-sender#5`, `malformed`.
fn finding_token(f: &Finding) -> impl fmt::Display + '_ {
    fmt::from_fn(move |out| {
        write!(out, "{}", f.label())?;
        if let Some(seqno) = f.seqno {
            write!(out, "#{seqno}")?;
        }
        Ok(())
    })
}

fn same_label(a: &Finding, b: &Finding) -> bool {
    a.kind == b.kind
        && a.rule == b.rule
        && a.seqno.is_some() == b.seqno.is_some()
        && a.frame == b.frame
}

/// Findings of one label in a row, their seqnos as ranges: `resend#1-3,7`.
/// With `why`, a packet that does not decode says why after its label:
/// `malformed: Input at offset 12 is truncated: ...` (off when the line already
/// says it, for a header that does not decode).
struct GroupToken<'f>(&'f [Finding], bool);

impl fmt::Display for GroupToken<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = self.0;
        if self.1
            && let crate::engine::Detail::Decode { error, .. } = group[0].detail
        {
            return write!(f, "{}: {error}", group[0].label());
        }
        write!(f, "{}", group[0].label())?;
        let mut seqnos = group.iter().filter_map(|x| x.seqno).peekable();
        let mut sep = "#";
        while let Some(first) = seqnos.next() {
            let mut last = first;
            while seqnos.peek() == Some(&last.wrapping_add(1)) {
                last += 1;
                seqnos.next();
            }
            if last == first {
                write!(f, "{sep}{first}")?;
            } else {
                write!(f, "{sep}{first}-{last}")?;
            }
            sep = ",";
        }
        if group.len() > 1 && group[0].seqno.is_none() {
            write!(f, " x{}", group.len())?;
        }
        Ok(())
    }
}

/// The type of the message a finding (or a group of one) belongs to, where the
/// packet tells: the message with the finding's seqno, or, for a finding on a
/// message's own numbers or rules (a stream or protocol finding) without one,
/// the packet's only message type. `None` for a finding on the packet itself
/// (its order, its acks, a copy of it), a group of several seqnos (their
/// messages are on the line) or a packet of several types.
fn message_of(
    dissector: &dyn crate::proto::dissect::Dissector,
    payload: &[u8],
    group: &[Finding],
) -> Option<&'static str> {
    if matches!(group[0].detail, crate::engine::Detail::Decode { .. }) {
        // Its text names the message already.
        return None;
    }
    use crate::engine::Group;
    let seqno = match group {
        [one] if one.seqno.is_some() => one.seqno,
        [first, ..]
            if first.seqno.is_none()
                && matches!(first.kind.group(), Group::Stream | Group::Protocol) =>
        {
            None
        }
        _ => return None,
    };
    let mut found: Option<&'static str> = None;
    let mut several = false;
    let _ = dissector.messages(payload, &mut |m| match seqno {
        Some(n) if m.seqno == Some(n) => found = Some(m.type_name),
        Some(_) => {}
        None => match found {
            None => found = Some(m.type_name),
            Some(t) if t != m.type_name => several = true,
            Some(_) => {}
        },
    });
    found.filter(|_| !several)
}

impl<W: Write> PacketPrinter<W> {
    pub fn new(out: W, options: PacketOptions, filter: Option<Filter>) -> Self {
        PacketPrinter {
            out,
            options,
            filter,
            first_ts: None,
            prev_ts: None,
            prev_shown_ts: None,
            error: None,
            pending: Vec::with_capacity(16),
            line: Vec::with_capacity(512),
            batch: 0,
            ahead: AheadLink::default(),
            addrs: fast::AddrTexts::default(),
        }
    }

    /// Packets' texts handed to `out` in batches of some
    /// [`BATCH`](super::json::BATCH) bytes rather than each as it comes
    /// (`true`), for an output no one reads as it is written (as
    /// [`JsonlWriter::batched`](super::json::JsonlWriter::batched)).
    pub fn batched(mut self, batched: bool) -> Self {
        self.batch = if batched { super::json::BATCH } else { 0 };
        self.line.reserve(self.batch);
        self
    }

    /// What a reader thread may render ahead for this printer, linked to it
    /// (`run::ahead`).
    pub(crate) fn render_ahead(&mut self) -> RenderAhead {
        let shared = SharedAhead::default();
        self.ahead = AheadLink::new(shared.clone());
        (
            Box::new(RenderLines(self.options, fast::AddrTexts::default())),
            shared,
        )
    }

    /// The first write error, if any: once set, nothing more is written.
    pub fn failed(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// Prints the findings raised at the end of the capture (e.g. `lost`), flushes,
    /// and hands back the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if self.error.is_none() {
            let pending = std::mem::take(&mut self.pending);
            let r = self
                .out
                .write_all(&self.line)
                .and_then(|()| self.end_findings(&pending))
                .and_then(|()| self.out.flush());
            if let Err(e) = r {
                self.error = Some(e);
            }
        }
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }

    fn end_findings(&mut self, findings: &[Finding]) -> io::Result<()> {
        for f in findings {
            if self.filter.as_ref().is_some_and(|x| !x.matches_finding(f)) {
                continue;
            }
            write!(
                self.out,
                "{:>6} {:>11} end of capture: session {} {}: ",
                f.frame, "-", f.session, f.direction
            )?;
            finding_text(&mut self.out, self.options.color, f)?;
            writeln!(self.out)?;
        }
        Ok(())
    }

    fn write_packet(&mut self, e: &PacketEvent<'_>) -> io::Result<()> {
        let mut line = std::mem::take(&mut self.line);
        let text = self.packet_text(&mut line, e);
        let written = match line.len() >= self.batch {
            true => self.out.write_all(&line).map(|()| line.clear()),
            false => Ok(()),
        };
        self.line = line;
        text.and(written)
    }

    /// The packet's line (and tree, and hex dump), into `out`.
    fn packet_text(&mut self, out: &mut Vec<u8>, e: &PacketEvent<'_>) -> io::Result<()> {
        let color = self.options.color;
        let d = e.datagram;
        let first = self.first_ts.unwrap_or(d.ts);
        fast::int_right(out, d.frame, 6);
        out.push(b' ');
        match self.options.time {
            // The default column, `{:>4}.{:06}` seconds since the first packet.
            super::fields::TimeFormat::Relative => {
                let ns = d.ts.since(first);
                fast::int_right(out, ns / 1_000_000_000, 4);
                out.push(b'.');
                fast::int_zero(out, ns % 1_000_000_000 / 1_000, 6);
            }
            other => write!(
                out,
                "{}",
                super::fields::time_column(
                    other,
                    d.ts,
                    first,
                    self.prev_ts.unwrap_or(d.ts),
                    self.prev_shown_ts.unwrap_or(d.ts),
                )
            )?,
        }
        out.push(b' ');
        let dissector = e.dissector();
        let dissector = dissector.settled(d.payload).unwrap_or(dissector);
        let options = &self.options;
        self.ahead.with(e, |ahead| {
            let decoded = match ahead {
                Some(parts) => {
                    out.extend_from_slice(parts.get(0));
                    parts.decoded
                }
                None => line_part(out, &mut self.addrs, color, dissector, d)?,
            };
            if !e.findings.is_empty() {
                out.extend_from_slice(b" [");
                for (i, group) in e.findings.chunk_by(same_label).enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    // An incident that began in an earlier packet, reported as
                    // this one ended it: its own frame, not this packet's message.
                    let earlier = (1..d.frame).contains(&group[0].frame);
                    let message = (decoded && !earlier)
                        .then(|| message_of(dissector, d.payload, group))
                        .flatten();
                    let token = GroupToken(group, decoded);
                    let severity = severity_color(group[0].severity());
                    match message {
                        Some(name) => paint(out, color, severity, format_args!("{token} {name}"))?,
                        None if earlier => {
                            let from = group[0].frame;
                            paint(
                                out,
                                color,
                                severity,
                                format_args!("{token} of frame {from}"),
                            )?
                        }
                        None => paint(out, color, severity, token)?,
                    }
                }
                out.push(b']');
            }
            out.push(b'\n');
            if options.verbose {
                match ahead {
                    Some(parts) => out.extend_from_slice(parts.get(1)),
                    None => tree_part(out, options, dissector, d.payload, decoded)?,
                }
                for f in e.findings {
                    out.extend_from_slice(b"    finding ");
                    finding_text(out, color, f)?;
                    out.push(b'\n');
                }
            }
            match ahead {
                Some(parts) => out.extend_from_slice(parts.get(2)),
                None => hex_part(out, options, d)?,
            }
            if options.verbose || options.hex {
                out.push(b'\n');
            }
            Ok(())
        })
    }
}

/// The part of a packet line that the datagram alone decides: its
/// addresses, the header's numbers, the length sent and the message tokens
/// (or why the header does not decode); whether the header decodes.
fn line_part(
    out: &mut Vec<u8>,
    addrs: &mut fast::AddrTexts,
    color: bool,
    dissector: &dyn Dissector,
    d: &Datagram<'_>,
) -> io::Result<bool> {
    addrs.addr(out, &d.src);
    out.extend_from_slice(b" -> ");
    addrs.addr(out, &d.dst);
    out.push(b' ');
    let header = dissector.header(d.payload, &mut |n| {
        out.extend_from_slice(n.short.as_bytes());
        out.push(b'=');
        fast::int(out, n.value);
        out.push(b' ');
    });
    out.extend_from_slice(b"len=");
    fast::int(out, d.payload_len);
    match header {
        Ok(()) => {
            let _ = dissector.messages(d.payload, &mut |m| {
                out.push(b' ');
                m.token.write_bytes(out);
            });
            Ok(true)
        }
        Err(err) => {
            out.push(b' ');
            paint(out, color, RED, format_args!("undecodable: {err}"))?;
            Ok(false)
        }
    }
}

/// `-V`'s field tree of a payload whose header decodes.
fn tree_part(
    out: &mut Vec<u8>,
    options: &PacketOptions,
    dissector: &dyn Dissector,
    payload: &[u8],
    decoded: bool,
) -> io::Result<()> {
    if options.verbose && decoded {
        tree(out, options.color, dissector, payload)?;
    }
    Ok(())
}

/// `-x`'s dump of the bytes captured.
fn hex_part(out: &mut Vec<u8>, options: &PacketOptions, d: &Datagram<'_>) -> io::Result<()> {
    if options.hex {
        hex_dump(out, d.payload)?;
        if d.payload.len() < d.payload_len {
            writeln!(
                out,
                "    ({} more bytes not captured)",
                d.payload_len - d.payload.len()
            )?;
        }
    }
    Ok(())
}

/// The payload's parts of packet lines, rendered ahead on the reader's
/// thread (`run::ahead`): [`line_part`], [`tree_part`], [`hex_part`].
pub(crate) struct RenderLines(PacketOptions, fast::AddrTexts);

impl Render for RenderLines {
    fn render(
        &mut self,
        dissector: &'static dyn Dissector,
        d: &Datagram<'_>,
        out: &mut Vec<u8>,
        parts: &mut Ends,
    ) -> bool {
        // Writes into a `Vec` fail only as `fmt` does, which they do not.
        let decoded = line_part(out, &mut self.1, self.0.color, dissector, d).unwrap_or(false);
        parts.end(out);
        let _ = tree_part(out, &self.0, dissector, d.payload, decoded);
        parts.end(out);
        let _ = hex_part(out, &self.0, d);
        parts.end(out);
        decoded
    }
}

fn paint(out: &mut impl Write, on: bool, color: &str, text: impl fmt::Display) -> io::Result<()> {
    if on {
        write!(out, "{color}{text}{RESET}")
    } else {
        write!(out, "{text}")
    }
}

fn finding_text(out: &mut impl Write, color: bool, f: &Finding) -> io::Result<()> {
    paint(out, color, severity_color(f.severity()), finding_token(f))?;
    write!(out, " ({})", f.severity())?;
    if !matches!(f.detail, crate::engine::Detail::None) {
        write!(out, ": {}", f.detail)?;
    }
    Ok(())
}

/// Every field of the packet: the header, then each message.
fn tree(
    out: &mut Vec<u8>,
    color: bool,
    dissector: &dyn Dissector,
    payload: &[u8],
) -> io::Result<()> {
    let mut result = Ok(());
    dissector.tree_ref(payload, &mut |entry| match entry {
        TreeRef::Field {
            label,
            value,
            span,
            depth,
        } => {
            // The indent by hand: `{:indent$}` pads a space at a time.
            out.extend_from_slice(match depth {
                0 => b"    ",
                1 => b"      ",
                2 => b"        ",
                _ => b"          ",
            });
            if depth > 3 {
                out.resize(out.len() + 2 * (usize::from(depth) - 3), b' ');
            }
            // A node (a top item: the header, a message, a described
            // protocol's packet; below them, an item without a value: a
            // structure whose fields follow) says where it lies, for every
            // protocol alike: `header (12 bytes at offset 0)`, `Connect#1
            // (13 bytes at offset 12)`, `shipInput (12 bytes at offset 20)`.
            if depth == 0 || value.is_empty() {
                out.extend_from_slice(match value.is_empty() {
                    true => label.as_bytes(),
                    false => value.as_bytes(),
                });
                out.extend_from_slice(b" (");
                fast::int(out, span.len());
                out.extend_from_slice(match span.len() {
                    1 => b" byte at offset ",
                    _ => b" bytes at offset ",
                });
                fast::int(out, span.start);
                out.push(b')');
            } else {
                out.extend_from_slice(label.as_bytes());
                if !value.is_empty() {
                    out.extend_from_slice(b": ");
                    out.extend_from_slice(value.as_bytes());
                }
            }
            out.push(b'\n');
        }
        TreeRef::Error { error: err, .. } => {
            out.extend_from_slice(b"    ");
            if result.is_ok() {
                result = paint(out, color, RED, format_args!("undecodable: {err}"));
            }
            out.push(b'\n');
        }
    });
    result
}

/// 16 bytes a line: offset, hex in two groups of eight, ASCII. Each line is
/// put together by hand (a table for the hex digits) and written at once.
pub fn hex_dump(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // At most 89 bytes: 16 hex digits of offset, 49 of bytes, 16 of ASCII, spaces.
    let mut line = [b' '; 128];
    for (i, chunk) in bytes.chunks(16).enumerate() {
        // `    {:04x}  ` then 16 columns of `{:02x} ` (a space after the
        // eighth), a space, the ASCII.
        let mut n = 0;
        let mut put = |b: u8| {
            line[n] = b;
            n += 1;
        };
        for _ in 0..4 {
            put(b' ');
        }
        let offset = i * 16;
        if offset > 0xffff {
            // More than four digits: as `{:04x}` writes them.
            let text = format!("{offset:04x}");
            for &b in text.as_bytes() {
                put(b);
            }
        } else {
            for shift in [12, 8, 4, 0] {
                put(HEX[(offset >> shift) & 15]);
            }
        }
        put(b' ');
        put(b' ');
        for j in 0..16 {
            match chunk.get(j) {
                Some(&b) => {
                    put(HEX[usize::from(b >> 4)]);
                    put(HEX[usize::from(b & 15)]);
                    put(b' ');
                }
                None => {
                    put(b' ');
                    put(b' ');
                    put(b' ');
                }
            }
            if j == 7 {
                put(b' ');
            }
        }
        put(b' ');
        for &b in chunk {
            put(if b.is_ascii_graphic() || b == b' ' {
                b
            } else {
                b'.'
            });
        }
        put(b'\n');
        out.write_all(&line[..n])?;
    }
    Ok(())
}

#[cfg(test)]
mod hex_tests {
    /// The dump as it was written with `fmt`, for the comparison.
    fn with_fmt(bytes: &[u8]) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for (i, chunk) in bytes.chunks(16).enumerate() {
            let _ = write!(out, "    {:04x}  ", i * 16);
            for j in 0..16 {
                match chunk.get(j) {
                    Some(b) => {
                        let _ = write!(out, "{b:02x} ");
                    }
                    None => out.push_str("   "),
                }
                if j == 7 {
                    out.push(' ');
                }
            }
            out.push(' ');
            for &b in chunk {
                out.push(if b.is_ascii_graphic() || b == b' ' {
                    b as char
                } else {
                    '.'
                });
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn the_hex_dump_is_what_fmt_wrote() {
        for len in [0, 1, 7, 8, 15, 16, 17, 33, 300, 70_000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let mut out = Vec::new();
            super::hex_dump(&mut out, &bytes).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), with_fmt(&bytes), "{len}");
        }
    }
}

impl<W: Write> Observer for PacketPrinter<W> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.pending.clear();
        self.first_ts.get_or_insert(e.datagram.ts);
        if self.error.is_none() && self.filter.as_ref().is_none_or(|f| f.matches(e)) {
            if let Err(err) = self.write_packet(e) {
                self.error = Some(err);
            }
            self.prev_shown_ts = Some(e.datagram.ts);
        }
        self.prev_ts = Some(e.datagram.ts);
        if self.error.is_some() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    fn finding(&mut self, f: &Finding) {
        self.pending.push(*f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_dump_layout() {
        let mut out = Vec::new();
        hex_dump(&mut out, b"\xf2\x70\x87\xc5 hello, lwar!\x00\x01").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "    0000  f2 70 87 c5 20 68 65 6c  6c 6f 2c 20 6c 77 61 72  .p.. hello, lwar\n    \
             0010  21 00 01                                          !..\n"
        );
    }

    #[test]
    fn findings_of_one_label_are_grouped_with_seqno_ranges() {
        use crate::engine::{Detail, Direction, FindingKind};
        let f = |kind, seqno| Finding {
            kind,
            rule: None,
            frame: 1,
            ts: Timestamp(0),
            session: 0,
            direction: Direction::ServerToClient,
            seqno,
            detail: Detail::None,
        };
        let findings = [
            f(FindingKind::RESEND, Some(1)),
            f(FindingKind::RESEND, Some(2)),
            f(FindingKind::RESEND, Some(3)),
            f(FindingKind::RESEND, Some(7)),
        ];
        assert_eq!(GroupToken(&findings, true).to_string(), "resend#1-3,7");
        let plain = [
            f(FindingKind::REORDERED, None),
            f(FindingKind::REORDERED, None),
        ];
        assert_eq!(GroupToken(&plain, true).to_string(), "reordered x2");
        assert_eq!(GroupToken(&plain[..1], true).to_string(), "reordered");
    }

    /// A writer that fails like a closed pipe after `n` bytes.
    struct ClosedAfter(usize);

    impl Write for ClosedAfter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0 == 0 {
                return Err(io::Error::from(io::ErrorKind::BrokenPipe));
            }
            let n = buf.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Batched, packet lines are the same bytes, handed over in writes of
    /// at least a batch (the last aside); a closed pipe stops the printer
    /// at the first batch.
    #[test]
    fn batched_packet_lines_are_the_lines_each_packet_writes() {
        use crate::report::testing::Writes;
        let options = PacketOptions {
            verbose: true,
            ..PacketOptions::default()
        };
        let run = |batched: bool| {
            let mut a = super::super::Analysis::new(
                PacketPrinter::new(Writes::default(), options, None).batched(batched),
            );
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
            let mut source = crate::capture::Source::files(&[&dir.join("sim-eight.pcap")]).unwrap();
            while let Some(frame) = source.next_frame().unwrap() {
                if let crate::capture::FrameClass::Udp(d) = &frame.class {
                    a.datagram(d);
                }
            }
            let (_, printer) = a.finish(Default::default());
            printer.finish().unwrap()
        };
        let (each, batched) = (run(false), run(true));
        assert_eq!(each.0, batched.0);
        assert!(each.0.len() > 2 * super::super::json::BATCH);
        let (last, full) = batched.1.split_last().unwrap();
        assert!(
            full.iter().all(|&n| n >= super::super::json::BATCH),
            "{full:?}"
        );
        assert!(*last > 0 && full.len() >= 2, "{:?}", batched.1);
        assert!(each.1.len() > 10 * batched.1.len());
        let mut a = super::super::Analysis::new(
            PacketPrinter::new(ClosedAfter(300), options, None).batched(true),
        );
        for d in &super::super::testdata::clean() {
            a.datagram(&d.as_datagram());
            if a.output().failed().is_some() {
                break;
            }
        }
        assert!(a.output().failed().is_some_and(is_broken_pipe));
    }

    #[test]
    fn a_closed_pipe_stops_the_printer_quietly() {
        let mut a = super::super::Analysis::new(PacketPrinter::new(
            ClosedAfter(300),
            PacketOptions::default(),
            None,
        ));
        let data = super::super::testdata::clean();
        let mut fed = 0;
        for d in &data {
            a.datagram(&d.as_datagram());
            fed += 1;
            if a.output().failed().is_some() {
                break;
            }
        }
        assert!(fed < 10, "stopped at the first failed write, fed {fed}");
        let err = a.output().failed().expect("the write failed");
        assert!(is_broken_pipe(err));
    }
}
