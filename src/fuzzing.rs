//! Entry points for fuzzing, shared by the cargo-fuzz targets (`fuzz/`) and
//! the short property pass of `cargo test` (`tests/hostile/fuzz_pass.rs`). Each takes
//! arbitrary bytes, runs one part of lwarscope on them, and panics on a bug: a
//! panic of the code itself, or a broken invariant (asserted here).
//!
//! - [`frames`]: link, IP, fragment reassembly and UDP ([`Framer`]);
//! - [`capture_file`]: the whole pipeline on the bytes of a capture file
//!   (libpcap's reader, the frames, every protocol's analysis, the packet
//!   lines with `-V -x`, the JSON document, the report tables, `check`);
//! - [`display_filter`]: the display filter's parser, and its evaluation on
//!   every packet and finding of a few sample sessions and of the input;
//! - [`rules_file`]: the rules file of `check` (TOML) and the expected result
//!   (`--expect`, JSON), checked against a sample outcome;
//! - [`description`]: a protocol description (`.ksy`) parsed and compiled,
//!   then packets decoded, dissected and analysed with it.

#![doc(hidden)]

use crate::capture::{
    Datagram, FrameClass, Framer, LinkType, OwnedDatagram, ReassemblyLimits, Source, Timestamp,
};
use crate::engine::{Finding, Flow, Observer, PacketEvent};
use crate::report::capture_info;
use crate::report::check::{Rules, compare, write_junit};
use crate::report::filter::Filter;
use crate::report::json::JsonWriter;
use crate::report::packets::{PacketOptions, PacketPrinter};
use crate::report::table::{Layout, render};
use crate::report::{Analysis, Outcome};
use crate::run::drive;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

/// The link types a frame may be read as, by the selector byte modulo 6.
const LINKS: [LinkType; 6] = [
    LinkType::Ethernet,
    LinkType::LinuxSll,
    LinkType::LinuxSll2,
    LinkType::Null,
    LinkType::Loop,
    LinkType::RawIp,
];

/// Small reassembly bounds, so that the fuzzer reaches them.
const LIMITS: ReassemblyLimits = ReassemblyLimits {
    max_datagrams: 8,
    max_bytes: 4096,
    timeout_ns: 30_000_000_000,
    max_fragments: 16,
};

/// Frame parsing. `data` is a list of frames, each: a link type selector
/// byte, a flags byte (bit 0: the capture cut the frame; bit 1: 31 s pass
/// before it, past the reassembly timeout), a little-endian u16 length, and
/// that many bytes (fewer at the end of the input).
pub fn frames(data: &[u8]) {
    let mut framer = Framer::new(LIMITS);
    let mut rest = data;
    let mut number = 0u64;
    let mut ts = 0u64;
    while let [link, flags, a, b, tail @ ..] = rest {
        let len = usize::from(u16::from_le_bytes([*a, *b])).min(tail.len());
        let (frame, next) = tail.split_at(len);
        rest = next;
        number += 1;
        ts += if flags & 2 != 0 {
            31_000_000_000
        } else {
            1_000_000
        };
        let cut = flags & 1 != 0;
        let link = LINKS[usize::from(*link) % LINKS.len()];
        if let FrameClass::Udp(d) = framer.frame(link, frame, cut, number, Timestamp(ts)) {
            assert!(d.payload.len() <= d.payload_len, "{d:?}");
            assert!(cut || d.payload.len() == d.payload_len, "{d:?}");
            assert_eq!(d.frame, number);
        }
        assert!(framer.pending_bytes() <= LIMITS.max_bytes);
    }
    framer.finish();
    let c = framer.counts();
    assert_eq!(c.frames, number);
    assert_eq!(
        c.frames,
        c.udp + c.not_udp + c.not_ip + c.fragment + c.truncated + c.malformed
    );
    let by: u64 = c.incomplete_by.iter().map(|(_, n)| n).sum();
    assert_eq!(c.incomplete, by);
    // A datagram rebuilt from fragments may still have a broken UDP header.
    assert!(c.udp_truncated <= c.udp && c.reassembled <= c.udp + c.malformed);
    assert_eq!(framer.pending_bytes(), 0);
}

/// Two observers in turn.
struct Pair<A, B>(A, B);

impl<A: Observer, B: Observer> Observer for Pair<A, B> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        let a = self.0.packet(e);
        a.and(self.1.packet(e))
    }
    fn finding(&mut self, f: &Finding) {
        self.0.finding(f);
        self.1.finding(f);
    }
}

/// The whole pipeline on the bytes of a capture file (pcap, pcapng, gzip or
/// zstd: whatever the reader makes of them).
pub fn capture_file(data: &[u8]) {
    thread_local! {
        static FILE: tempfile::TempPath = tempfile::NamedTempFile::new()
            .expect("a temporary file")
            .into_temp_path();
    }
    FILE.with(|path| {
        if std::fs::write(path, data).is_err() {
            return;
        }
        // Every other input through the report of a part of the capture
        // (`--window`): the window's counting as well as the engine's.
        analyse_file(path, data.len() % 2 == 1);
    });
}

fn analyse_file(path: &Path, window: bool) {
    let Ok(mut source) = Source::files(&[path]) else {
        return;
    };
    source.set_reassembly_limits(LIMITS);
    let options = PacketOptions {
        verbose: true,
        hex: true,
        color: false,
        time: Default::default(),
    };
    let outputs = Pair(
        PacketPrinter::new(io::sink(), options, None),
        JsonWriter::with_fields(io::sink(), None, true, true),
    );
    let mut analysis = Analysis::new(outputs);
    if window {
        let expr = "time >= 0.5 || frame < 4";
        analysis.restrict_to(
            Filter::parse(expr).expect("the filter parses"),
            expr.to_owned(),
        );
    }
    // A read error ends the run as it would on the command line: what was
    // read before it is still reported.
    let _ = drive(&mut source, &mut analysis, None, None);
    let stats = source.stats();
    let c = stats.counts;
    assert!(analysis.recognised() <= c.udp);
    let (outcome, Pair(packets, json)) = analysis.finish(capture_info(&stats, &[], None));
    packets.finish().expect("a sink takes everything");
    json.finish(&outcome).expect("a sink takes everything");
    let _ = render(
        &outcome,
        Layout {
            width: 80,
            color: false,
        },
    );
    assert_eq!(
        outcome.capture.packets(),
        outcome.capture.protocols.values().sum::<u64>()
    );
    let mut rules = Rules::default();
    rules
        .add_toml(
            "deny = [\"malformed\", \"violation\"]\n[max]\nresend-rate = \"5%\"\nack-delay-p95 = 250\njitter = 30\nunacked = 3\nloss = \"2%\"\n",
            "fuzz",
        )
        .expect("the rules parse");
    let verdict = rules.check("fuzz", &outcome);
    let _ = verdict.line(false).to_string();
}

/// Datagrams of a few sessions of each protocol (the first 60 of some of the
/// corpus' captures, where they are), loaded once.
fn samples() -> &'static [OwnedDatagram] {
    static SAMPLES: OnceLock<Vec<OwnedDatagram>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
        let mut out = Vec::new();
        for name in [
            "sim-clean.pcap",
            "sim-loss.pcap",
            "strs-clean.pcap",
            "bg-clean.pcap",
            "ksy-vessel-faults.pcap",
        ] {
            let Ok(mut source) = Source::files(&[dir.join(name)]) else {
                continue;
            };
            let mut n = 0;
            while let Ok(Some(frame)) = source.next_frame() {
                if let FrameClass::Udp(d) = frame.class {
                    out.push(d.to_owned_datagram());
                    n += 1;
                    if n == 60 {
                        break;
                    }
                }
            }
        }
        out
    })
}

/// An outcome of the sample sessions, made once.
fn sample_outcome() -> &'static Outcome {
    static OUTCOME: OnceLock<Outcome> = OnceLock::new();
    OUTCOME.get_or_init(|| {
        let mut analysis = Analysis::new(());
        for d in samples() {
            analysis.datagram(&d.as_datagram());
        }
        analysis.finish(Default::default()).0
    })
}

/// Evaluates a filter on every packet and finding it sees.
struct Judge<'f>(&'f Filter);

impl Observer for Judge<'_> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        let _ = self.0.matches(e);
        Flow::Continue
    }
    fn finding(&mut self, f: &Finding) {
        let _ = self.0.matches_finding(f);
    }
}

/// The display filter. `data`: the expression, then (after a NUL byte, if
/// any) payloads to evaluate it on besides the samples, each a u8 length and
/// that many bytes, sent to the lwar port, Starstrike's and Battlegrounds' in
/// turn.
pub fn display_filter(data: &[u8]) {
    let (expr, mut rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(expr) = std::str::from_utf8(expr) else {
        return;
    };
    let filter = match Filter::parse(expr) {
        Ok(f) => f,
        Err(e) => {
            let _ = (e.to_string(), e.render(expr).to_string());
            return;
        }
    };
    let mut engine = crate::proto::engine(Default::default());
    let mut judge = Judge(&filter);
    for d in samples() {
        engine.observe(&d.as_datagram(), &mut judge);
    }
    let ports = [32422, 7777, 7778];
    let mut i = 0usize;
    while let [len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (payload, next) = tail.split_at(len);
        rest = next;
        i += 1;
        let d = Datagram::new(
            10_000 + i as u64,
            Timestamp::from_millis(1_700_000_000_000 + i as u64),
            std::net::SocketAddr::from(([10, 0, 0, 1], 40_000)),
            std::net::SocketAddr::from(([10, 0, 0, 2], ports[i % ports.len()])),
            payload,
        )
        .with_payload_len(payload.len() + (i % 2));
        engine.observe(&d, &mut judge);
    }
    engine.finish(&mut judge);
}

/// The rules file of `check` (TOML), and the same bytes as an expected result
/// (`--expect`, JSON), against the sample outcome.
pub fn rules_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let outcome = sample_outcome();
    let mut rules = Rules::default();
    match rules.add_toml(text, "fuzz.toml") {
        Ok(()) => {
            let verdict = rules.check("fuzz.pcap", outcome);
            let _ = verdict.line(false).to_string();
            write_junit(io::sink(), std::slice::from_ref(&verdict)).expect("a sink");
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    if let Ok(expected) = crate::report::json::read_summary(text) {
        assert!(compare(&expected, &expected).is_empty());
        let _ = compare(&expected, &outcome.summary);
    }
    // Every kind of truth `--expect` takes.
    match crate::proto::truth::read(text) {
        Ok(expected) => {
            let _ = expected.differences(&outcome.summary, outcome.capture.frames);
        }
        Err(e) => assert!(!e.contains('\n'), "one line: {e}"),
    }
}

/// The descriptions [`description`] compiled, by their text: each is
/// leaked, as a loaded description is (once per process in lwarscope; once
/// per distinct text here: inputs that differ only in their packets share
/// it), and kept here so that a leak checker finds it reachable. A fuzzing
/// run grows by what they hold (a few KB each, 16 MiB at most by the
/// description's own bound).
static COMPILED: std::sync::Mutex<
    Option<std::collections::HashMap<String, &'static crate::proto::described::Described>>,
> = std::sync::Mutex::new(None);

/// The description at the start of `data` (and, for a protobuf one, the
/// `.proto` after it), compiled once and kept; the bytes after it. `None`
/// when it is not text or is refused (the error checked for its place).
fn description_of(data: &[u8]) -> Option<(&'static crate::proto::described::Described, &[u8])> {
    use crate::proto::described;
    let (text, mut rest) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let text = std::str::from_utf8(text).ok()?;
    // A protobuf description: its `.proto` follows, up to the next NUL.
    let protobuf = described::protobuf::is_protobuf(text);
    let mut proto = String::new();
    if protobuf {
        let (p, r) = match rest.iter().position(|&b| b == 0) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        proto = String::from_utf8_lossy(p).into_owned();
        rest = r;
    }
    let key = format!("{text}\0{proto}");
    let mut compiled = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
    let kept = compiled.get_or_insert_with(Default::default);
    let parsed = || {
        if protobuf {
            // Every `.proto` it names (its imports too) is that text.
            let resolve = move |_: &str| Some(Ok(proto.clone()));
            described::protobuf::parse("fuzz.yaml", text, Box::new(resolve))
        } else {
            described::parse("fuzz.ksy", text)
        }
    };
    let d = match kept.get(&key) {
        Some(d) => *d,
        None => match parsed() {
            Ok(d) => {
                let d = described::leak(d, usize::MAX);
                kept.insert(key, d);
                d
            }
            Err(e) => {
                assert!(e.line >= 1 && e.col >= 1, "{e}");
                let _ = e.to_string();
                return None;
            }
        },
    };
    Some((d, rest))
}

/// A protocol description. `data`: the `.ksy` text, then (after a NUL byte,
/// if any) packets, each a u8 length and that many bytes; or a protobuf
/// description (YAML with `protobuf:`), a NUL, the `.proto` it names (every
/// file it names reads as that text), a NUL, then the packets. A description that
/// parses is compiled, and every packet goes through it, in turn from a
/// client to the description's port and back: the field walk (every span
/// inside the packet), the dissector's header, messages and tree, and the
/// analysis (findings and their details written out); then the sessions
/// end. A description that does not parse gives an error with a line and a
/// column.
pub fn description(data: &[u8]) {
    use crate::proto::described;
    use crate::proto::field::{Field, FieldSink};
    let Some((d, mut rest)) = description_of(data) else {
        return;
    };
    struct Spans(usize);
    impl FieldSink for Spans {
        fn field(&mut self, f: Field<'_>) {
            self.0 = self.0.max(f.offset + f.len);
        }
    }
    struct Details;
    impl Observer for Details {
        fn finding(&mut self, f: &Finding) {
            let _ = (f.label().to_string(), f.detail.to_string());
        }
    }
    let port = d.ksy.sem.port.or(d.ksy.sem.server_port).unwrap_or(9);
    let client = std::net::SocketAddr::from(([10, 0, 0, 1], 40_000));
    let server = std::net::SocketAddr::from(([10, 0, 0, 2], port));
    let dis = d.info().dissector;
    let mut tracker = described::tracker(d, Default::default());
    let mut next = 0;
    let mut i = 0u64;
    while let [len, tail @ ..] = rest {
        let len = usize::from(*len).min(tail.len());
        let (payload, next_rest) = tail.split_at(len);
        rest = next_rest;
        i += 1;
        let mut spans = Spans(0);
        let _ = dis.fields(payload, &mut spans);
        assert!(spans.0 <= payload.len(), "a field past the packet's end");
        let _ = dis.header(payload, &mut |_| {});
        let _ = dis.messages(payload, &mut |m| {
            let _ = (m.token.to_string(), m.text.to_string());
        });
        dis.tree(payload, &mut |_| {});
        let (src, dst) = if i % 2 == 1 {
            (client, server)
        } else {
            (server, client)
        };
        // Every third one cut by the capture.
        let dg = Datagram::new(
            i,
            Timestamp::from_millis(1_700_000_000_000 + 10 * i),
            src,
            dst,
            payload,
        )
        .with_payload_len(payload.len() + usize::from(i.is_multiple_of(3)));
        tracker.observe(
            &dg,
            &mut Details,
            &mut next,
            crate::engine::RecognisedBy::Probe,
        );
    }
    tracker.finish(&mut Details);
}
