//! `--format json` and `--format jsonl`: machine-readable output, schema 2.
//!
//! # Schema 2
//!
//! **jsonl** (`--format jsonl`) streams one object a line, as the capture is read:
//! each packet (in capture order) followed by the findings it raised, then the
//! findings raised at the end of the capture (`lost`...), then one summary, then
//! one object per `-z` statistics. Every object has `"schema": 2` and a
//! `"type"`: `"packet"`, `"finding"`, `"summary"`, `"io_stat"`, `"conv"` or
//! `"expert"`.
//!
//! **json** (`--format json`) is one document, written as the capture is read
//! (findings wait in a temporary file while the packets are listed, so memory
//! stays flat):
//! `{"schema": 2, "packets": [...], "findings": [...], "capture": {...}, "summary": {...}, "statistics": [...]}`,
//! with `packets` only when `--packets` (or `-V`) is given and `statistics` only with `-z`;
//! the finding objects are the same as in jsonl, and `summary` is the summary
//! object without `schema`/`type`/`capture`.
//!
//! A display filter (`-Y`) keeps the packets it selects, their findings, and the
//! findings it selects on their own. The summary covers what `-Y` and
//! `--window` select, and says so in `capture.selection` (the filter, with the
//! window as `time` tests): its packet, message, finding and session figures
//! count the selected packets and the findings of their frames (a `lost`
//! raised at the end counts with its gap's frame), while the engine still
//! analysed every packet; `capture.frames`, `other` and the fragment counts
//! stay the whole capture's. Without either, it covers the whole capture.
//!
//! **Changes from schema 1**: the summary carries every figure the report's
//! tables show (`session_count`, `resend_rate`, `resend_interval_ms`,
//! `message_rates`; per session `session`, `protocol`, `recognised_by`,
//! `player`, `start`, `end`, `duration_secs`; per direction `ack_delay`,
//! `loss_rate`, `unacked`, `jitter_ms`, `reordered`, `gaps`, `lost`,
//! `duration_secs`); maps (`messages`, `findings`, `violations`, `malformed`,
//! `capture.protocols`) and the capture's `filtered` and `broken` are always
//! present, empty or zero included; `statistics` and the messages' `fields` are new. Schema 1 readers that
//! ignore unknown keys read schema 2.
//!
//! ## packet
//!
//! | key | value |
//! |-----|-------|
//! | `frame` | frame number in the capture (1-based) |
//! | `time` | capture time, seconds since the Unix epoch |
//! | `src`, `dst` | `ip:port` (`[ip]:port` for IPv6) |
//! | `session` | session number (0-based, order of first appearance) |
//! | `dir` | `"c2s"` or `"s2c"` |
//! | `len` | UDP payload length; `captured` the bytes the capture kept |
//! | `ack`, `timestamp` | header fields (absent when the header does not decode) |
//! | `messages` | `[{"type": "Join", "seqno": 1, "offset": 12, "len": 18, "text": "Join#1 player=0:1 name=alice", "fields": [{"field": "lwar.type", "value": 3, "name": "Join"}, {"field": "lwar.player", "value": "0:1"}, ...]}]`; `seqno` only for reliable messages; `fields` (with `-V`): the registered fields within the message, in wire order (`index` for repeated elements, `name` for enums; text as a string, bytes in hex, ids as `a:b`) |
//! | `error` | why the rest of the packet did not decode (absent when it did) |
//! | `findings` | labels of the findings it raised: `["resend", "violation/wrong-sender"]` |
//!
//! ## finding
//!
//! `kind` (kebab-case, e.g. `"resend"`), `rule` (for violations, e.g.
//! `"wrong-sender"`, else `null`), `severity` (`"note"`, `"warning"`, `"error"`),
//! `frame`, `time`, `session`, `dir`, `seqno` (or `null`), `detail` (human text, or
//! `null`). Findings raised at the end of the capture (`lost`, `not-captured`,
//! an open `ack-unseen`) carry the frame where they began and the time of the end.
//!
//! ## summary
//!
//! - `capture`: `files`, `interface` (live only), `start`, `end` (epoch seconds),
//!   `frames`, `lwar_packets`, `protocols` (packets per protocol by name, absent
//!   when none), `other` (frames skipped), `filtered` (frames the capture filter
//!   `-f` rejected, absent when none), `broken` (frames whose IP or UDP headers
//!   contradict themselves, absent when none), `truncated`, `malformed`,
//!   `reassembled` and `incomplete` (IP fragments), `incomplete_reasons` (the
//!   datagrams given up by why: `timed-out`, `memory-limit`, `conflict`,
//!   `overlap`, `too-many-fragments`, `end-of-capture`; absent when none),
//!   `duplicate_fragments` (exact copies of a fragment, dropped; absent when
//!   none), `received`, `kernel_dropped` and `interface_dropped` (live only).
//!   `sessions_only` (`--session`) and `selection` (`-Y`, `--window`) say
//!   what part of the capture the summary covers, when it is a part.
//!   `interrupted` (`true`) and `interrupted_by` (`"SIGINT"`, `"SIGTERM"`,
//!   `"SIGHUP"`), present only when a signal stopped the reading of the files
//!   before their end: every figure then covers the `frames` read. JSON Lines
//!   carry them in the summary line's `capture`, the last line written.
//!   `truncated` counts the packets the capture cut short (one each, whatever
//!   the cut ends on), `malformed` those whose kept bytes do not decode (a cut
//!   packet may be both).
//! - `messages`: count per message type, named as in the specification (`Connect`
//!   ... `UpdateCircle`), counting the messages decoded before an error too.
//! - `evicted` (absent when no session was evicted to bound memory): `sessions`,
//!   `packets`, `first_sends`, `repeats`, `resends` of the evicted sessions,
//!   whose counts are in the totals but not in the `sessions` list; and the
//!   worst of their directions, folded in as they left, for the metrics a gate
//!   takes the worst of: `ack_p50_max_us`, `ack_p95_max_us`, `jitter_max_ns`,
//!   `loss_max` (`{"lost", "expected"}`), and `unacked` (their sum); absent
//!   when none.
//! - `findings`: count per finding kind (kebab-case); `violations`: count per
//!   violation rule (absent when none); `malformed`: count per reason
//!   (`truncated`, `unknown-type`...).
//! - `session_count` (listed and evicted), `resend_rate` (a fraction),
//!   `resend_interval_ms` (the sender's resend cycle, or `null`).
//! - `message_rates`: `[{"protocol", "type", "count", "bytes", "observed_hz",
//!   "spec_hz"}]`: the messages table (rates per session; `null` when unknown).
//! - `sessions`: `[{"session", "protocol", "recognised_by" ("probe", "port" or
//!   "flow"), "client", "server", "state", "player" ({"id", "name", "renames",
//!   "chats"} or `null`), "start", "end" (epoch seconds), "duration_secs", "c2s":
//!   {...}, "s2c": {...}}]`, each direction with `packets`, `bytes`, `messages`,
//!   `findings`, `violations`, `malformed` (same forms as above), `first_sends`,
//!   `repeats` and `resends` (reliable messages captured for the first time;
//!   again before an ack could have come back, by design; again after that),
//!   `loss` (`{"expected", "lost"}` packets, or `null`) and `loss_rate` (its
//!   fraction, or `null`), `ack_delay` (`{"p50_ms", "p95_ms", "max_ms",
//!   "samples"}`, `null`s before a sample), `unacked` (reliable messages never
//!   acked at the end), `jitter_ms`, `reordered`, `gaps`, `lost`, and
//!   `duration_secs`.
//!
//! ## statistics
//!
//! With `-z`, the json document ends with `"statistics": [...]`, one object per
//! `-z` in the order given, and jsonl writes each as a line after the summary
//! (with `schema`). Each has a `type`:
//!
//! - `"io_stat"`: `name` (`io,stat,1,resend`), `interval_secs` (0: the whole
//!   capture), `duration_secs`, `start` (epoch seconds of the first packet),
//!   `filters` (the expressions), `beyond` (packets past the interval bound, not
//!   counted), `intervals`: `[{"start", "end" (seconds from the first packet),
//!   "c2s": {...}, "s2c": {...}}]`, each direction with `packets`, `bytes`,
//!   `lost`, `resends`, `ack_delay_samples`, `ack_delay_mean_ms` and
//!   `ack_delay_max_ms` (`null` without a sample), and `filters`:
//!   `[{"packets", "bytes"}]` matching each filter.
//! - `"conv"`: `sessions`: `[{"session", "protocol", "client", "server",
//!   "state", "player" ({"id", "name", "renames", "chats"} or `null`),
//!   "duration_secs", "c2s", "s2c"}]`, each direction with `packets`, `bytes`,
//!   `messages`, `first_sends`, `repeats`, `resends`, `reordered`, `gaps`,
//!   `lost`, `malformed`, `ack_delay_p50_ms`, `ack_delay_p95_ms`, `unacked`,
//!   `jitter_ms`, `loss` (a fraction, or `null`) and `duration_secs`.
//! - `"expert"`: `min_severity`, `findings`: `[{"finding", "severity",
//!   "count", "first_frames", "more_frames"}]`, worst first.
//!
//! Counts of zero are left out of the maps; the maps themselves are always
//! there. `lwarscope check --expect` reads this summary back (from a json document, a jsonl stream or a bare summary object).

use super::columns::SessionColumns;
use super::fast::{AddrTexts, home};
use super::repeats::{Head, Key, MessageHeads, Repeats};
use super::{Filter, Outcome};
use crate::capture::{Datagram, Timestamp};
use crate::engine::{Direction, Finding, Flow, Observer, PacketEvent, ProtoDetail, Summary};
use crate::proto::dissect::{Dissector, MessageItem};
use crate::proto::field::{Field, FieldSink, Value as FieldValue};
use crate::run::ahead::{AheadLink, Ends, Parts, Render, RenderAhead, SharedAhead};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};
use std::io::{self, Write};

/// The schema version every object carries.
pub const SCHEMA: u32 = 2;

fn secs(ts: Timestamp) -> f64 {
    ts.secs_f64()
}

/// A packet object, serialized straight from the views (no copy of the messages).
struct PacketJson<'e, 'a> {
    e: &'e PacketEvent<'a>,
    tagged: bool,
    /// Each message's registered fields too (`-V`).
    fields: bool,
}

/// The messages of a packet, serialized as the dissector walks them; why the
/// rest did not decode is left in `error`.
struct MessagesJson<'p> {
    dissector: &'static dyn Dissector,
    payload: &'p [u8],
    error: std::cell::Cell<Option<ProtoDetail>>,
    fields: bool,
}

impl Serialize for MessagesJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if !self.fields {
            return self.serialize_with(s, None);
        }
        RECS.with(|recs| match recs.try_borrow_mut() {
            Ok(mut recs) => {
                // One walk of the packet's fields, kept (without copying their
                // bytes) for the messages to take theirs in turn.
                recs.clear();
                let _ = self.dissector.fields(
                    self.payload,
                    &mut Recorder {
                        payload: self.payload,
                        recs: &mut recs,
                    },
                );
                self.serialize_with(s, Some(&recs))
            }
            Err(_) => self.serialize_with(s, Some(&[])),
        })
    }
}

impl MessagesJson<'_> {
    /// The messages, each with its fields when `recs` holds the packet's.
    fn serialize_with<S: Serializer>(
        &self,
        s: S,
        recs: Option<&[FieldRec]>,
    ) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut failed = None;
        let result = self.dissector.messages(self.payload, &mut |m| {
            if failed.is_none()
                && let Err(e) = seq.serialize_element(&MessageJson {
                    m,
                    payload: self.payload,
                    fields: recs,
                })
            {
                failed = Some(e);
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        self.error.set(result.err());
        seq.end()
    }
}

thread_local! {
    /// The fields of the packet being serialized, reused from one to the next.
    static RECS: std::cell::RefCell<Vec<FieldRec>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A field of the packet being serialized: its value, or where its bytes are
/// in the payload (text and bytes are not copied).
#[derive(Debug, Clone, Copy)]
struct FieldRec {
    def: &'static crate::proto::field::FieldDef,
    index: Option<u32>,
    offset: usize,
    len: usize,
    value: RecValue,
}

#[derive(Debug, Clone, Copy)]
enum RecValue {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Bool(bool),
    Text(usize, usize),
    Bytes(usize, usize),
    Enum(u64, Option<&'static str>),
    Pair(u32, u32),
    /// Bytes that are not the payload's (a protocol's constant).
    Missing,
}

/// Records the valued fields of a walk (nodes carry no value).
struct Recorder<'r, 'p> {
    payload: &'p [u8],
    recs: &'r mut Vec<FieldRec>,
}

impl FieldSink for Recorder<'_, '_> {
    fn field(&mut self, f: Field<'_>) {
        let within = |b: &[u8]| {
            let start = (b.as_ptr() as usize).wrapping_sub(self.payload.as_ptr() as usize);
            (start <= self.payload.len() && b.len() <= self.payload.len() - start)
                .then_some((start, start + b.len()))
        };
        let value = match f.value {
            FieldValue::None => return,
            FieldValue::Unsigned(v) => RecValue::Unsigned(v),
            FieldValue::Signed(v) => RecValue::Signed(v),
            FieldValue::Float(v) => RecValue::Float(v),
            FieldValue::Bool(v) => RecValue::Bool(v),
            FieldValue::Text(b) => {
                within(b).map_or(RecValue::Missing, |(a, z)| RecValue::Text(a, z))
            }
            FieldValue::Bytes(b) => {
                within(b).map_or(RecValue::Missing, |(a, z)| RecValue::Bytes(a, z))
            }
            FieldValue::Enum { raw, name } => RecValue::Enum(raw, name),
            FieldValue::Bits { raw, .. } | FieldValue::Hex(raw) => RecValue::Unsigned(raw),
            FieldValue::Pair(a, b) => RecValue::Pair(a, b),
        };
        self.recs.push(FieldRec {
            def: f.def,
            index: f.index,
            offset: f.offset,
            len: f.len,
            value,
        });
    }
}

struct MessageJson<'m, 'a, 'p> {
    m: &'m MessageItem<'a>,
    payload: &'p [u8],
    /// The packet's registered fields, if asked for: the message has those
    /// within its bytes.
    fields: Option<&'m [FieldRec]>,
}

impl Serialize for MessageJson<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.m;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("type", m.type_name)?;
        if let Some(seqno) = m.seqno {
            map.serialize_entry("seqno", &seqno)?;
        }
        map.serialize_entry("offset", &m.offset)?;
        map.serialize_entry("len", &m.len)?;
        map.serialize_entry("text", &Collect(m.text))?;
        if let Some(fields) = self.fields {
            map.serialize_entry(
                "fields",
                &FieldsJson {
                    fields,
                    payload: self.payload,
                    span: m.offset..m.offset + m.len,
                },
            )?;
        }
        map.end()
    }
}

/// A message's fields, in wire order: `[{"field": "lwar.input.aim_x",
/// "value": 200}]`, with `index` for repeated elements and `name` for enums.
struct FieldsJson<'f, 'p> {
    fields: &'f [FieldRec],
    payload: &'p [u8],
    span: std::ops::Range<usize>,
}

impl Serialize for FieldsJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let within =
            |f: &&FieldRec| f.offset >= self.span.start && f.offset + f.len <= self.span.end;
        for f in self.fields.iter().filter(within) {
            seq.serialize_element(&FieldJson {
                f,
                payload: self.payload,
            })?;
        }
        seq.end()
    }
}

struct FieldJson<'f, 'p> {
    f: &'f FieldRec,
    payload: &'p [u8],
}

impl Serialize for FieldJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.f;
        let bytes = |a: usize, z: usize| self.payload.get(a..z).unwrap_or(&[]);
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("field", f.def.name)?;
        if let Some(i) = f.index {
            map.serialize_entry("index", &i)?;
        }
        match f.value {
            RecValue::Unsigned(v) => map.serialize_entry("value", &v)?,
            RecValue::Signed(v) => map.serialize_entry("value", &v)?,
            RecValue::Float(v) => map.serialize_entry("value", &v)?,
            RecValue::Bool(v) => map.serialize_entry("value", &v)?,
            RecValue::Text(a, z) => map.serialize_entry("value", &Collect(&TextOf(bytes(a, z))))?,
            RecValue::Bytes(a, z) => {
                map.serialize_entry("value", &Collect(&FieldValue::Bytes(bytes(a, z))))?
            }
            RecValue::Enum(raw, name) => {
                map.serialize_entry("value", &raw)?;
                map.serialize_entry("name", &name)?;
            }
            RecValue::Pair(a, b) => {
                map.serialize_entry("value", &Collect(&FieldValue::Pair(a, b)))?
            }
            RecValue::Missing => map.serialize_entry("value", &())?,
        }
        map.end()
    }
}

/// Text from the wire as a JSON string: invalid UTF-8 replaced (JSON escapes
/// control characters itself).
struct TextOf<'a>(&'a [u8]);

impl std::fmt::Display for TextOf<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for chunk in self.0.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{fffd}")?;
            }
        }
        Ok(())
    }
}

/// Serializes anything displayable as a string.
struct Collect<'a, T: std::fmt::Display + ?Sized>(&'a T);

thread_local! {
    /// The text being serialized, reused from one string to the next.
    static TEXT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

impl<T: std::fmt::Display + ?Sized> Serialize for Collect<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Formatted into a reused buffer, then escaped in one pass: serde_json's
        // `collect_str` escapes every formatting fragment on its own, which cost a
        // third of `--format jsonl`.
        TEXT.with(|text| match text.try_borrow_mut() {
            Ok(mut text) => {
                use std::fmt::Write as _;
                text.clear();
                write!(text, "{}", self.0).map_err(serde::ser::Error::custom)?;
                s.serialize_str(&text)
            }
            Err(_) => s.collect_str(self.0),
        })
    }
}

/// A label, ready to serialize (kind, or `violation/rule`).
struct Label(Finding);

impl Serialize for Label {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0.label())
    }
}

impl Serialize for PacketJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.e;
        let d = e.datagram;
        let mut map = s.serialize_map(None)?;
        if self.tagged {
            map.serialize_entry("schema", &SCHEMA)?;
            map.serialize_entry("type", "packet")?;
        }
        map.serialize_entry("frame", &d.frame)?;
        map.serialize_entry("time", &secs(d.ts))?;
        map.serialize_entry("src", &d.src)?;
        map.serialize_entry("dst", &d.dst)?;
        map.serialize_entry("session", &e.session)?;
        map.serialize_entry("dir", &e.direction)?;
        map.serialize_entry("len", &d.payload_len)?;
        map.serialize_entry("captured", &d.payload.len())?;
        let dissector = e.dissector();
        let mut header = [None; 4];
        let mut n = 0;
        let decoded = dissector.header(d.payload, &mut |h| {
            if let Some(slot) = header.get_mut(n) {
                *slot = Some(h);
                n += 1;
            }
        });
        match decoded {
            Ok(()) => {
                for h in header.iter().flatten() {
                    map.serialize_entry(h.name, &h.value)?;
                }
                let messages = MessagesJson {
                    dissector,
                    payload: d.payload,
                    error: std::cell::Cell::new(None),
                    fields: self.fields,
                };
                map.serialize_entry("messages", &messages)?;
                if let Some(err) = messages.error.get() {
                    map.serialize_entry("error", &Collect(&err))?;
                }
            }
            Err(err) => {
                map.serialize_entry("messages", &[(); 0])?;
                map.serialize_entry("error", &Collect(&err))?;
            }
        }
        map.serialize_entry("findings", &FindingLabels(e.findings))?;
        map.end()
    }
}

/// serde_json's compact formatter, but with the C1 controls (U+0080 to
/// U+009F) escaped too (`\u0085`), as the strings written here are: a
/// terminal may take some of them for the start of an escape sequence.
struct C1Escaped;

impl serde_json::ser::Formatter for C1Escaped {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // A C1 control is 0xc2 then 0x80..=0x9f in UTF-8.
        if !fragment.as_bytes().contains(&0xc2) {
            return writer.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if ('\u{80}'..='\u{9f}').contains(&c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", u32::from(c))?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// `value` as compact JSON, every control character escaped (C1 included).
pub(crate) fn to_writer<W: Write, T: ?Sized + Serialize>(
    writer: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(writer, C1Escaped);
    value.serialize(&mut ser)
}

/// What a byte becomes in a JSON string, as serde_json escapes it: 0 for
/// itself, else the letter after the backslash (`u` for `\u00XX`).
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = b'u';
        b += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The high bit of each of the eight bytes of `x` (little-endian) that may
/// need an escape in a JSON string: below 0x20, `"`, `\\`, or 0xc2 (the
/// first byte of a C1 control). Exact for the lowest one (a byte's test may
/// borrow from the one below it only when that one is flagged too).
#[inline]
fn specials(x: u64) -> u64 {
    let quote = x ^ (LO * u64::from(b'"'));
    let backslash = x ^ (LO * u64::from(b'\\'));
    let c2 = x ^ (LO * 0xc2);
    ((x.wrapping_sub(LO * 0x20) & !x)
        | (quote.wrapping_sub(LO) & !quote)
        | (backslash.wrapping_sub(LO) & !backslash)
        | (c2.wrapping_sub(LO) & !c2))
        & HI
}

/// Where the first byte of `s` that needs an escape is, or `s.len()`: the
/// bytes that may need one are found eight at a time ([`specials`], the
/// last few padded with a letter), and a 0xc2 that begins another character
/// than a C1 control (the `°` of every lwar Update text) is passed over, so
/// that a text with one needs no escape and no second pass.
#[inline]
fn first_special(s: &[u8]) -> usize {
    let mut i = 0;
    loop {
        let found = match s.get(i..i + 8) {
            Some(w) => specials(u64::from_le_bytes(w.try_into().unwrap_or_default())),
            None => {
                let rest = s.get(i..).unwrap_or_default();
                let mut b = [b'a'; 8];
                if let Some(head) = b.get_mut(..rest.len()) {
                    head.copy_from_slice(rest);
                }
                specials(u64::from_le_bytes(b))
            }
        };
        if found == 0 {
            i += 8;
            if i >= s.len() {
                return s.len();
            }
            continue;
        }
        let at = i + (found.trailing_zeros() / 8) as usize;
        if s.get(at) == Some(&0xc2) && !s.get(at + 1).is_some_and(|n| (0x80..=0x9f).contains(n)) {
            // Not a C1 control: on from the byte after it.
            i = at + 1;
            continue;
        }
        return at.min(s.len());
    }
}

/// The inside of a JSON string: `s` escaped (`"`, `\` and the control
/// characters, C1 included, nothing else). The runs between the bytes that
/// may need it are found eight bytes at a time and copied whole (a `°`,
/// 0xc2 0xb0, in a message's text made a byte-by-byte walk of all of it a
/// fifth of `--format jsonl`).
fn escape_into(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // Copied up to `start`, searched up to `scan`.
    let (mut start, mut scan) = (0, 0);
    loop {
        let i = scan + first_special(s.get(scan..).unwrap_or_default());
        let Some(&b) = s.get(i) else { break };
        scan = i + 1;
        if b == 0xc2 {
            // A C1 control (0xc2 0x80..=0x9f): `\u0080` to `\u009f`; any
            // other character of two bytes stays as it is.
            if let Some(&next) = s.get(i + 1)
                && (0x80..=0x9f).contains(&next)
            {
                out.extend_from_slice(s.get(start..i).unwrap_or_default());
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(next >> 4)],
                    HEX[usize::from(next & 15)],
                ]);
                start = i + 2;
                scan = i + 2;
            }
            continue;
        }
        let e = ESCAPE[usize::from(b)];
        out.extend_from_slice(s.get(start..i).unwrap_or_default());
        out.push(b'\\');
        out.push(e);
        if e == b'u' {
            out.extend_from_slice(&[
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]);
        }
        start = i + 1;
    }
    out.extend_from_slice(s.get(start..).unwrap_or_default());
}

/// A JSON string.
pub(super) fn json_str(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    escape_into(out, s);
    out.push(b'"');
}

/// A registered name remembered by [`json_name`] as needing no escape:
/// its key (address and length; 0 for an empty place) and its JSON
/// string, quotes included, padded to [`QUOTED`] bytes.
#[derive(Clone, Copy)]
struct PlainName {
    key: usize,
    quoted: [u8; QUOTED],
    len: u8,
}

/// The bytes a [`PlainName`] holds: a name of up to 30 bytes and its quotes.
const QUOTED: usize = 32;
/// The places of the table of [`PlainName`]s, and how many of them a name
/// may take after its own (then it is escaped each time).
const NAME_PLACES: usize = 256;
const NAME_PROBES: usize = 4;

impl PlainName {
    const EMPTY: PlainName = PlainName {
        key: 0,
        quoted: [0; QUOTED],
        len: 0,
    };

    fn new(key: usize, name: &[u8]) -> Self {
        let mut quoted = [0; QUOTED];
        if let Some(inside) = quoted.get_mut(1..=name.len()) {
            inside.copy_from_slice(name);
        }
        if let Some(open) = quoted.first_mut() {
            *open = b'"';
        }
        if let Some(end) = quoted.get_mut(name.len() + 1) {
            *end = b'"';
        }
        PlainName {
            key,
            quoted,
            len: u8::try_from(name.len() + 2).unwrap_or(0),
        }
    }
}

thread_local! {
    /// Registered names known to need no escape (see [`json_name`]).
    static PLAIN_NAMES: [std::cell::Cell<PlainName>; NAME_PLACES] =
        const { [const { std::cell::Cell::new(PlainName::EMPTY) }; NAME_PLACES] };
}

/// A registered name (a message type, a header field) as a JSON string,
/// as [`json_str`] writes it. A name is `'static`, so once seen to need no
/// escape it is remembered as such by its address and length, quoted and
/// padded, and copied as a piece of fixed size then cut from then on: the
/// search for escapes in a name of a few bytes cost as much as a long
/// text's, and a copy of the name's length is a call to `memmove`. The
/// places are probed in turn from the name's own (one place each, two
/// names of Battlegrounds took the same and put each other out: half its
/// names were searched, some 250 instructions a packet of JSON Lines).
///
/// Always inlined, the name found in its own place (nearly always): a
/// call, with its registers saved and restored, was half of its cost,
/// some 100 instructions a packet of lwar's JSON Lines. The other places
/// and the first sight of a name are [`json_name_probed`]'s.
#[cfg_attr(not(debug_assertions), inline(always))]
fn json_name(out: &mut Vec<u8>, name: &'static str) {
    let key = (name.as_ptr() as usize) ^ (name.len() << 48);
    let start = home(key as u64, NAME_PLACES);
    let found = PLAIN_NAMES.with(|names| match names.get(start) {
        Some(place) => {
            let known = place.get();
            let found = known.key == key;
            if found {
                let at = out.len() + usize::from(known.len);
                out.extend_from_slice(&known.quoted);
                out.truncate(at);
            }
            found
        }
        None => false,
    });
    if !found {
        json_name_probed(out, name, key, start);
    }
}

/// [`json_name`] where the name is not in its own place: the places after
/// it, or the name escaped (and remembered, where it needs no escape and
/// a place is free).
#[inline(never)]
fn json_name_probed(out: &mut Vec<u8>, name: &'static str, key: usize, home: usize) {
    if name.len() + 2 > QUOTED {
        return json_str(out, name.as_bytes());
    }
    PLAIN_NAMES.with(|names| {
        for i in 0..NAME_PROBES {
            let Some(place) = names.get((home + i) % NAME_PLACES) else {
                break;
            };
            let known = place.get();
            if known.key == key {
                let at = out.len() + usize::from(known.len);
                out.extend_from_slice(&known.quoted);
                out.truncate(at);
                return;
            }
            if known.key == 0 {
                let start = out.len();
                json_str(out, name.as_bytes());
                if out.len() - start == name.len() + 2 {
                    place.set(PlainName::new(key, name.as_bytes()));
                }
                return;
            }
        }
        json_str(out, name.as_bytes());
    });
}

/// A `Display` value as a JSON string: formatted into a reused string (its
/// pieces are small), then escaped in one pass.
fn json_display(out: &mut Vec<u8>, v: &dyn std::fmt::Display) {
    use std::fmt::Write as _;
    TEXT.with(|text| match text.try_borrow_mut() {
        Ok(mut text) => {
            text.clear();
            let _ = write!(text, "{v}");
            json_str(out, text.as_bytes());
        }
        Err(_) => json_str(out, v.to_string().as_bytes()),
    });
}

/// A message's text as a JSON string: written straight into the line, then
/// escaped in place in the rare case it needs it (only quoted text fields do).
#[cfg(test)]
fn json_text(out: &mut Vec<u8>, v: &dyn crate::proto::dissect::TextBytes) {
    out.push(b'"');
    json_text_inside(out, v);
    out.push(b'"');
}

/// [`json_text`] without its quotes.
fn json_text_inside(out: &mut Vec<u8>, v: &dyn crate::proto::dissect::TextBytes) {
    // Searched from where the writer says a byte may need an escape (its
    // own names and digits need none), escaped from the first that does on
    // (the bytes before it need nothing, and no escape looks back).
    let start = v.write_json(out);
    let from = start + first_special(out.get(start..).unwrap_or_default());
    if from < out.len() {
        thread_local! {
            static RAW: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        RAW.with(|raw| match raw.try_borrow_mut() {
            Ok(mut raw) => {
                raw.clear();
                raw.extend_from_slice(out.get(from..).unwrap_or_default());
                out.truncate(from);
                escape_into(out, &raw);
            }
            Err(_) => {
                let raw = out.split_off(from);
                escape_into(out, &raw);
            }
        });
    }
}

/// A number as serde_json writes an `f64` (with `zmij`, as it does; `null` if
/// not finite): what [`json_time`] writes of a time's seconds.
#[cfg(test)]
fn json_f64(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() {
        out.extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
}

/// A capture time as [`json_f64`] writes its seconds ([`secs`]), the
/// last one's text kept in `last`: a server's packets to each client
/// share their time (on the bench captures 29% of lwar's packets have the
/// time of the one before, 83% of Battlegrounds'), and `zmij`'s digits
/// cost some 160 instructions (some 300 with their copies). A new time
/// whose shortest text is its own decimal is written as that
/// ([`LastTime::decimal`]), the rest by `zmij`.
#[inline]
fn json_time(out: &mut Vec<u8>, ts: Timestamp, last: &mut LastTime) {
    if last.len == 0 || last.nanos != ts.nanos() {
        if let Some(len) = last.decimal(ts) {
            last.len = len;
            last.nanos = ts.nanos();
        } else {
            last.zmij(out, ts);
            if last.len == 0 {
                return;
            }
        }
    }
    // The whole text kept, a copy of fixed size, then cut.
    let end = out.len() + last.len;
    out.extend_from_slice(last.text.first_chunk::<32>().unwrap_or(&[0; 32]));
    out.truncate(end);
}

/// The text [`json_time`] wrote last, and its time (none while `len` is 0);
/// the whole seconds [`LastTime::decimal`] wrote last (`u64::MAX`: none)
/// and their digits.
pub(crate) struct LastTime {
    nanos: u64,
    len: usize,
    whole: u64,
    whole_len: usize,
    whole_text: [u8; 24],
    text: [u8; 48],
}

impl Default for LastTime {
    fn default() -> Self {
        LastTime {
            nanos: 0,
            len: 0,
            whole: u64::MAX,
            whole_len: 0,
            whole_text: [0; 24],
            text: [0; 48],
        }
    }
}

/// Powers of ten up to 10^9.
const POW10: [u64; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

impl LastTime {
    /// Writes the text of `ts`'s seconds ([`secs`]) as `zmij` writes it,
    /// where it is the time's own decimal (`1700000003.3232`, whole seconds
    /// `.0`): the time at least a second and of 15 significant digits or
    /// fewer, and the float `secs` gives the one nearest that decimal (it
    /// rounds twice, so not always): the decimal as a quotient of two
    /// integers below 2^53, which IEEE division rounds once, to the
    /// nearest. A decimal of 15 digits or fewer is the only one of as many
    /// digits or fewer that rounds to its float (no two such decimals share
    /// a float), so it is the float's shortest text, which `zmij` writes
    /// without an exponent below 10^16. The whole seconds' digits are kept
    /// from the time before where they are the same (apart from the text,
    /// which `zmij` may write over). Its length, or `None`
    /// (then `zmij`'s).
    #[inline]
    fn decimal(&mut self, ts: Timestamp) -> Option<usize> {
        let nanos = ts.nanos();
        let whole = nanos / 1_000_000_000;
        let mut frac = nanos % 1_000_000_000;
        if !(1..1_000_000_000_000_000).contains(&whole) {
            return None;
        }
        // The fraction's digits without its trailing zeros (at most
        // eight): `k` of them.
        let mut k = 9;
        if frac == 0 {
            k = 0;
        } else {
            for (step, scale) in [(8, 100_000_000), (4, 10_000), (2, 100), (1, 10)] {
                if frac.is_multiple_of(scale) {
                    frac /= scale;
                    k -= step;
                }
            }
        }
        let scale = *POW10.get(k)?;
        if self.whole != whole {
            self.whole_len = crate::proto::digits::int_into(&mut self.whole_text, whole);
            self.whole = whole;
        }
        let w = self.whole_len;
        if w + k > 15 {
            return None;
        }
        let nearest = (whole * scale + frac) as f64 / scale as f64;
        if nearest != ts.secs_f64() {
            return None;
        }
        *self.text.first_chunk_mut::<24>()? = self.whole_text;
        let place = self
            .text
            .get_mut(w..w + 24)
            .and_then(|d| <&mut [u8; 24]>::try_from(d).ok())?;
        if k == 0 {
            place[0] = b'.';
            place[1] = b'0';
            return Some(w + 2);
        }
        // `1` and the fraction's digits, the `1` then the point.
        let len = crate::proto::digits::int_into(place, scale + frac);
        place[0] = b'.';
        Some(w + len)
    }

    /// [`LastTime::decimal`]'s work done by `zmij`, for the other times;
    /// written to `out` where it does not fit (then `len` is 0).
    #[cold]
    fn zmij(&mut self, out: &mut Vec<u8>, ts: Timestamp) {
        self.len = 0;
        let v = secs(ts);
        let mut digits = zmij::Buffer::new();
        let text = match v.is_finite() {
            true => digits.format_finite(v).as_bytes(),
            false => b"null",
        };
        match self.text.get_mut(..text.len()) {
            Some(kept) if text.len() <= 32 => {
                kept.copy_from_slice(text);
                self.len = text.len();
                self.nanos = ts.nanos();
            }
            _ => out.extend_from_slice(text),
        }
    }
}

/// A finding's label (`kind` or `kind/rule`) as a JSON string, as
/// `json_display(out, &f.label())` writes it, without `fmt`.
fn json_label(out: &mut Vec<u8>, f: &Finding) {
    out.push(b'"');
    escape_into(out, f.kind.name().as_bytes());
    if let Some(rule) = f.rule {
        out.push(b'/');
        escape_into(out, rule.name().as_bytes());
    }
    out.push(b'"');
}

/// The finding object of `--format jsonl`, written by hand: the bytes
/// serde_json writes for [`FindingJson`] (tagged; a test compares them on
/// every finding of the corpus), without serde's escaping of every key.
fn finding_line(out: &mut Vec<u8>, f: &Finding) {
    use super::fast::int;
    out.extend_from_slice(b"{\"schema\":");
    int(out, SCHEMA);
    out.extend_from_slice(b",\"type\":\"finding\",\"kind\":");
    json_str(out, f.kind.name().as_bytes());
    out.extend_from_slice(b",\"rule\":");
    match f.rule {
        Some(rule) => json_str(out, rule.name().as_bytes()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"severity\":");
    json_str(out, f.severity().name().as_bytes());
    out.extend_from_slice(b",\"frame\":");
    int(out, f.frame);
    out.extend_from_slice(b",\"time\":");
    json_time(out, f.ts, &mut LastTime::default());
    out.extend_from_slice(b",\"session\":");
    int(out, f.session);
    out.extend_from_slice(b",\"dir\":\"");
    out.extend_from_slice(f.direction.name().as_bytes());
    out.extend_from_slice(b"\",\"seqno\":");
    match f.seqno {
        Some(n) => int(out, n),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"detail\":");
    match f.detail {
        crate::engine::Detail::None => out.extend_from_slice(b"null"),
        _ => json_display(out, &f.detail),
    }
    out.extend_from_slice(b"}\n");
}

/// The packet object of `--format jsonl` (without `-V`'s fields), written
/// by hand: the bytes serde_json writes for [`PacketJson`] (a test compares
/// them on every packet of the corpus), at a fraction of the cost (serde
/// escaped every key and formatted every address through `fmt`).
fn packet_line(
    out: &mut Vec<u8>,
    kept: &mut Remembered,
    e: &PacketEvent<'_>,
    ahead: Option<Parts<'_>>,
) {
    use super::fast::int;
    let d = e.datagram;
    out.extend_from_slice(b"{\"schema\":");
    int(out, SCHEMA);
    out.extend_from_slice(b",\"type\":\"packet\",\"frame\":");
    int(out, d.frame);
    out.extend_from_slice(b",\"time\":");
    json_time(out, d.ts, &mut kept.time);
    kept.columns
        .write(out, &mut kept.addrs, e.session, e.direction, &d.src, &d.dst);
    out.extend_from_slice(b",\"len\":");
    int(out, d.payload_len);
    out.extend_from_slice(b",\"captured\":");
    int(out, d.payload.len());
    match ahead {
        Some(parts) => out.extend_from_slice(parts.get(0)),
        None => {
            payload_part(out, &mut kept.messages, e.dissector(), d.payload);
        }
    }
    if e.findings.is_empty() {
        return out.extend_from_slice(b",\"findings\":[]}\n");
    }
    out.extend_from_slice(b",\"findings\":[");
    for (i, f) in e.findings.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_label(out, f);
    }
    out.extend_from_slice(b"]}\n");
}

/// What a JSON Lines writer remembers from packet to packet: the
/// addresses' texts, the session columns' texts, the messages' objects and
/// heads, the last time's text.
#[derive(Default)]
pub(crate) struct Remembered {
    addrs: AddrTexts,
    columns: SessionColumns,
    messages: KeptMessages,
    time: LastTime,
}

/// What [`payload_part`] remembers from packet to packet: the messages'
/// objects ([`Repeats`]) and the JSON before their texts
/// ([`MessageHeads`]).
#[derive(Default)]
pub(crate) struct KeptMessages {
    repeats: Repeats,
    heads: MessageHeads,
}

/// The part of a packet's object that its payload alone decides: the
/// header's numbers, the messages, why the rest does not decode. The
/// messages of a dissector whose messages stand alone are written once
/// for each repeat of their bytes ([`Repeats`]).
fn payload_part(
    out: &mut Vec<u8>,
    kept: &mut KeptMessages,
    dissector: &'static dyn Dissector,
    payload: &[u8],
) -> bool {
    use super::fast::int;
    let dissector = dissector.settled(payload).unwrap_or(dissector);
    let stand_alone = dissector.messages_stand_alone().then(|| dissector.id());
    // The header's first four numbers written as they come, taken back if
    // the header does not decode (rather than kept aside, then written).
    let start = out.len();
    let mut n = 0;
    let decoded = dissector.header(payload, &mut |h| {
        if n < 4 {
            out.push(b',');
            json_name(out, h.name);
            out.push(b':');
            int(out, h.value);
            n += 1;
        }
    });
    if decoded.is_err() {
        out.truncate(start);
    }
    match decoded {
        Ok(()) => {
            out.extend_from_slice(b",\"messages\":[");
            let mut first = true;
            let result = dissector.messages(payload, &mut |m| {
                if !first {
                    out.push(b',');
                }
                first = false;
                match payload.get(m.offset..m.offset + m.len) {
                    Some(bytes) if let Some(dissector) = stand_alone => {
                        let key = Key {
                            dissector,
                            type_name: m.type_name,
                            seqno: m.seqno,
                            offset: m.offset,
                            bytes,
                        };
                        let heads = &mut kept.heads;
                        kept.repeats.write(out, key, |out| message(out, heads, m));
                    }
                    _ => message(out, &mut kept.heads, m),
                }
            });
            out.push(b']');
            if let Err(err) = result {
                out.extend_from_slice(b",\"error\":");
                json_display(out, &err);
            }
        }
        Err(err) => {
            out.extend_from_slice(b",\"messages\":[],\"error\":");
            json_display(out, &err);
        }
    }
    decoded.is_ok()
}

/// A message's object in a packet's `messages`: its head (up to the
/// text's opening quote) remembered by [`MessageHeads`].
#[inline]
fn message(out: &mut Vec<u8>, heads: &mut MessageHeads, m: &MessageItem<'_>) {
    use super::fast::int;
    let head = Head {
        type_name: m.type_name,
        offset: m.offset,
        len: m.len,
        seqno: m.seqno.is_some(),
    };
    heads.write(
        out,
        head,
        |out| {
            out.extend_from_slice(b"{\"type\":");
            json_name(out, m.type_name);
        },
        |out| {
            out.extend_from_slice(b",\"seqno\":");
            int(out, m.seqno.unwrap_or_default());
        },
        |out| {
            out.extend_from_slice(b",\"offset\":");
            int(out, m.offset);
            out.extend_from_slice(b",\"len\":");
            int(out, m.len);
            out.extend_from_slice(b",\"text\":\"");
        },
    );
    json_text_inside(out, m.text);
    out.extend_from_slice(b"\"}");
}

/// [`payload_part`], rendered ahead on the reader's thread (`run::ahead`).
#[derive(Default)]
pub(crate) struct RenderJsonl(KeptMessages);

impl Render for RenderJsonl {
    fn render(
        &mut self,
        dissector: &'static dyn Dissector,
        d: &Datagram<'_>,
        out: &mut Vec<u8>,
        parts: &mut Ends,
    ) -> bool {
        let decoded = payload_part(out, &mut self.0, dissector, d.payload);
        parts.end(out);
        decoded
    }
}

struct FindingLabels<'f>(&'f [Finding]);

impl Serialize for FindingLabels<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|f| Label(*f)))
    }
}

/// A finding object.
#[derive(Serialize)]
struct FindingJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    schema: Option<u32>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    tag: Option<&'static str>,
    kind: &'static str,
    rule: Option<&'static str>,
    severity: &'static str,
    frame: u64,
    time: f64,
    session: usize,
    dir: Direction,
    seqno: Option<u32>,
    detail: Option<Collect<'a, crate::engine::Detail>>,
}

impl<'a> FindingJson<'a> {
    fn new(f: &'a Finding, tagged: bool) -> Self {
        FindingJson {
            schema: tagged.then_some(SCHEMA),
            tag: tagged.then_some("finding"),
            kind: f.kind.name(),
            rule: f.rule.map(|r| r.name()),
            severity: f.severity().name(),
            frame: f.frame,
            time: secs(f.ts),
            session: f.session,
            dir: f.direction,
            seqno: f.seqno,
            detail: (!matches!(f.detail, crate::engine::Detail::None))
                .then_some(Collect(&f.detail)),
        }
    }
}

/// The summary object: the tracker's counts ([`Summary`]) with every figure
/// the report's tables show beside them. jsonl's summary line adds `schema`,
/// `type` and `capture`; the json document's `summary` member has neither.
pub fn summary_value(outcome: &Outcome) -> Value {
    let mut v = serde_json::to_value(&outcome.summary).unwrap_or(Value::Null);
    let Some(top) = v.as_object_mut() else {
        return v;
    };
    // The same keys everywhere, an empty map included.
    for key in ["messages", "findings", "violations", "malformed"] {
        top.entry(key).or_insert_with(|| json!({}));
    }
    top.insert(
        "session_count".into(),
        json!(outcome.summary.session_count()),
    );
    top.insert("resend_rate".into(), json!(outcome.resend_rate()));
    top.insert(
        "resend_interval_ms".into(),
        json!(outcome.resend_interval_ms),
    );
    top.insert("message_rates".into(), message_rates(outcome));
    if let Some(sessions) = top.get_mut("sessions").and_then(Value::as_array_mut) {
        let mut used = vec![false; outcome.sessions.len()];
        for s in sessions {
            let view = outcome.sessions.iter().enumerate().find(|(i, view)| {
                !used[*i]
                    && s["client"] == view.client.to_string()
                    && s["server"] == view.server.to_string()
            });
            let Some((i, view)) = view else { continue };
            used[i] = true;
            enrich_session(s, view);
        }
    }
    v
}

fn enrich_session(s: &mut Value, view: &super::SessionView) {
    let Some(m) = s.as_object_mut() else { return };
    m.insert("session".into(), json!(view.id));
    m.insert("protocol".into(), json!(view.protocol.name));
    m.insert(
        "recognised_by".into(),
        json!(format!("{:?}", view.recognised_by).to_lowercase()),
    );
    m.insert(
        "player".into(),
        match &view.player {
            Some(p) => {
                json!({"id": p.id, "name": p.name, "renames": p.renames, "chats": p.chats})
            }
            None => Value::Null,
        },
    );
    m.insert("start".into(), json!(view.start.map(secs)));
    m.insert("end".into(), json!(view.end.map(secs)));
    m.insert("duration_secs".into(), json!(view.duration_secs));
    if !view.notes.is_empty() {
        let notes: serde_json::Map<String, Value> = view
            .notes
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .collect();
        m.insert("notes".into(), Value::Object(notes));
    }
    for (key, d) in [("c2s", &view.c2s), ("s2c", &view.s2c)] {
        let Some(dir) = m.get_mut(key).and_then(Value::as_object_mut) else {
            continue;
        };
        for k in ["messages", "findings", "violations", "malformed"] {
            dir.entry(k).or_insert_with(|| json!({}));
        }
        dir.entry("loss").or_insert(Value::Null);
        dir.insert(
            "ack_delay".into(),
            json!({
                "p50_ms": d.ack_p50_ms,
                "p95_ms": d.ack_p95_ms,
                "max_ms": d.ack_max_ms,
                "samples": d.ack_samples,
            }),
        );
        dir.insert("loss_rate".into(), json!(d.loss));
        dir.insert("unacked".into(), json!(d.unacked));
        dir.insert("jitter_ms".into(), json!(d.jitter_ms));
        dir.insert("reordered".into(), json!(d.reordered));
        dir.insert("gaps".into(), json!(d.gaps));
        dir.insert("lost".into(), json!(d.lost));
        dir.insert("duration_secs".into(), json!(d.duration_secs));
    }
}

/// Each message type's count, bytes and rate per session against the
/// specification's, as the messages table shows them.
fn message_rates(o: &Outcome) -> Value {
    let mut rows = Vec::new();
    for m in &o.messages_by_protocol {
        let protocol = &m.protocol;
        for (ordinal, name) in protocol.message_types.iter().copied().enumerate() {
            let count = m.counts.get(name).copied().unwrap_or(0);
            if count == 0 {
                continue;
            }
            // Every session's, evicted ones included, as the count.
            let bytes = m.bytes.get(name).copied().unwrap_or(0);
            rows.push(json!({
                "protocol": protocol.name,
                "type": name,
                "count": count,
                "bytes": bytes,
                "observed_hz": super::observed_rate_hz(&o.sessions, protocol, ordinal),
                "spec_hz": super::spec_rate_hz(protocol, ordinal),
            }));
        }
    }
    Value::Array(rows)
}

/// Whether a finding is written: no filter, its packet was selected, or the filter
/// selects it on its own.
fn keep(filter: Option<&Filter>, packet_selected: bool, f: &Finding) -> bool {
    packet_selected || filter.is_none_or(|x| x.matches_finding(f))
}

fn io_err(e: serde_json::Error) -> io::Error {
    io::Error::from(e)
}

/// The bytes of lines [`JsonlWriter`] and the packet printer hand over at
/// once when batched: the size of the buffer of standard output, so a
/// batch goes past it.
pub const BATCH: usize = 64 * 1024;

/// `--format jsonl`: writes each object as soon as it is known.
pub struct JsonlWriter<W: Write> {
    out: W,
    filter: Option<Filter>,
    error: Option<io::Error>,
    pending: Vec<Finding>,
    fields: bool,
    /// The objects being written, handed to `out` whole: serde writes many
    /// small pieces, cheap into a `Vec`, not into a `BufWriter`. Batched
    /// ([`JsonlWriter::batched`]), the lines of many packets.
    line: Vec<u8>,
    /// The bytes from which `line` is handed to `out` (0: each packet's).
    batch: usize,
    /// The payload parts rendered ahead on a reader thread.
    ahead: AheadLink,
    /// The addresses' texts and messages' objects, remembered.
    kept: Remembered,
}

impl<W: Write> JsonlWriter<W> {
    pub fn new(out: W, filter: Option<Filter>) -> Self {
        JsonlWriter {
            out,
            filter,
            error: None,
            pending: Vec::with_capacity(16),
            fields: false,
            line: Vec::with_capacity(1024),
            batch: 0,
            ahead: AheadLink::default(),
            kept: Remembered::default(),
        }
    }

    /// Lines handed to `out` in batches of some [`BATCH`] bytes rather
    /// than each packet's as they come (`true`), for an output no one
    /// reads as it is written (not a live capture's, a terminal, `-l`):
    /// each handing over was a copy of the lines into a `BufWriter` and
    /// its checks, some 110 instructions a packet; a batch of its size
    /// goes past its buffer, uncopied.
    pub fn batched(mut self, batched: bool) -> Self {
        self.batch = if batched { BATCH } else { 0 };
        self.line.reserve(self.batch);
        self
    }

    /// Hands the lines written to `out` where they make a batch.
    #[inline]
    fn hand_over(&mut self) -> io::Result<()> {
        if !self.line.is_empty() && self.line.len() >= self.batch {
            self.out.write_all(&self.line)?;
            self.line.clear();
        }
        Ok(())
    }

    /// Each message with its registered fields (`-V`): 3.3 times the output,
    /// nearly twice the time to write it.
    pub fn with_fields(mut self, fields: bool) -> Self {
        self.fields = fields;
        self
    }

    /// The first write error, if any: once set, nothing more is written.
    pub fn failed(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// What a reader thread may render ahead for this writer, linked to it
    /// (`run::ahead`): the hand-written objects' payload part (not the
    /// fields of `-V`, which serde writes).
    pub(crate) fn render_ahead(&mut self) -> Option<RenderAhead> {
        if self.fields {
            return None;
        }
        let shared = SharedAhead::default();
        self.ahead = AheadLink::new(shared.clone());
        Some((Box::new(RenderJsonl::default()), shared))
    }

    fn line(&mut self, value: &impl Serialize) -> io::Result<()> {
        to_writer(&mut self.line, value).map_err(io_err)?;
        self.line.push(b'\n');
        self.hand_over()
    }

    fn write_packet(&mut self, e: &PacketEvent<'_>) -> io::Result<()> {
        let selected = self.filter.as_ref().is_none_or(|f| f.matches(e));
        if selected && self.fields {
            self.line(&PacketJson {
                e,
                tagged: true,
                fields: self.fields,
            })?;
        } else if selected {
            self.ahead
                .with(e, |a| packet_line(&mut self.line, &mut self.kept, e, a));
        }
        for f in e.findings {
            if keep(self.filter.as_ref(), selected, f) {
                finding_line(&mut self.line, f);
            }
        }
        self.hand_over()
    }

    /// Writes the end-of-capture findings and the summary, flushes, and hands the
    /// writer back (or the first write error).
    pub fn finish(self, outcome: &Outcome) -> io::Result<W> {
        self.finish_with(outcome, &[])
    }

    /// [`JsonlWriter::finish`], then one line per statistics object (`-z`),
    /// each with `schema`.
    pub fn finish_with(
        mut self,
        outcome: &Outcome,
        statistics: &[serde_json::Value],
    ) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for f in std::mem::take(&mut self.pending) {
            if keep(self.filter.as_ref(), false, &f) {
                finding_line(&mut self.line, &f);
                self.hand_over()?;
            }
        }
        let mut summary = summary_value(outcome);
        if let Some(m) = summary.as_object_mut() {
            m.insert("schema".into(), json!(SCHEMA));
            m.insert("type".into(), json!("summary"));
            m.insert(
                "capture".into(),
                serde_json::to_value(&outcome.capture).map_err(io_err)?,
            );
        }
        self.line(&summary)?;
        for value in statistics {
            let mut value = value.clone();
            if let Some(map) = value.as_object_mut() {
                map.insert("schema".to_owned(), SCHEMA.into());
            }
            self.line(&value)?;
        }
        self.out.write_all(&self.line)?;
        self.line.clear();
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Observer for JsonlWriter<W> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.pending.clear();
        if self.error.is_none()
            && let Err(err) = self.write_packet(e)
        {
            self.error = Some(err);
        }
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

/// `--format json`: one document. Packets (with `--packets`) are streamed into it;
/// findings are kept until the end, where they are written with the summary.
pub struct JsonWriter<W: Write> {
    out: W,
    filter: Option<Filter>,
    packets: bool,
    fields: bool,
    wrote_packet: bool,
    error: Option<io::Error>,
    pending: Vec<Finding>,
    /// Findings written so far.
    findings: u64,
    /// With the packets listed first, the findings wait here, as JSON text: in
    /// memory up to [`SPILL_AT`] bytes, then in a temporary file. Without the
    /// packets, they go straight to `out`. Memory stays flat either way.
    spill: Vec<u8>,
    spill_file: Option<std::fs::File>,
}

/// Bytes of findings kept in memory before they go to a temporary file.
pub const SPILL_AT: usize = 1 << 20;

impl<W: Write> JsonWriter<W> {
    /// `packets`: whether the document lists the packets.
    pub fn new(out: W, filter: Option<Filter>, packets: bool) -> Self {
        Self::with_fields(out, filter, packets, false)
    }

    /// `fields`: whether each message carries its registered fields (`-V`).
    pub fn with_fields(mut out: W, filter: Option<Filter>, packets: bool, fields: bool) -> Self {
        let head = if packets {
            format!("{{\"schema\":{SCHEMA},\n\"packets\":[")
        } else {
            format!("{{\"schema\":{SCHEMA},\n\"findings\":[")
        };
        let error = out.write_all(head.as_bytes()).err();
        JsonWriter {
            out,
            filter,
            packets,
            fields,
            wrote_packet: false,
            error,
            pending: Vec::with_capacity(16),
            findings: 0,
            spill: Vec::new(),
            spill_file: None,
        }
    }

    pub fn failed(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    fn write_packet(&mut self, e: &PacketEvent<'_>) -> io::Result<()> {
        if !self.packets {
            return Ok(());
        }
        self.out
            .write_all(if self.wrote_packet { b",\n" } else { b"\n" })?;
        self.wrote_packet = true;
        let packet = PacketJson {
            e,
            tagged: false,
            fields: self.fields,
        };
        to_writer(&mut self.out, &packet).map_err(io_err)
    }

    /// Writes a finding into the document (or, while the packets are being
    /// listed, where it waits for them to end).
    fn write_finding(&mut self, f: &Finding) -> io::Result<()> {
        let sep: &[u8] = if self.findings > 0 { b",\n" } else { b"\n" };
        self.findings += 1;
        let json = FindingJson::new(f, false);
        if !self.packets {
            self.out.write_all(sep)?;
            return to_writer(&mut self.out, &json).map_err(io_err);
        }
        if let Some(file) = &mut self.spill_file {
            let mut w = io::BufWriter::new(file);
            w.write_all(sep)?;
            to_writer(&mut w, &json).map_err(io_err)?;
            return w.flush();
        }
        self.spill.extend_from_slice(sep);
        to_writer(&mut self.spill, &json).map_err(io_err)?;
        if self.spill.len() >= SPILL_AT {
            let mut file = tempfile::tempfile()?;
            file.write_all(&self.spill)?;
            self.spill = Vec::new();
            self.spill_file = Some(file);
        }
        Ok(())
    }

    /// Ends the document with the findings, the capture and the summary.
    pub fn finish(self, outcome: &Outcome) -> io::Result<W> {
        self.finish_with(outcome, &[])
    }

    /// [`JsonWriter::finish`], with the `-z` statistics as the document's
    /// `statistics` member (absent when none was asked for).
    pub fn finish_with(
        mut self,
        outcome: &Outcome,
        statistics: &[serde_json::Value],
    ) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        for f in std::mem::take(&mut self.pending) {
            if keep(self.filter.as_ref(), false, &f) {
                self.write_finding(&f)?;
            }
        }
        if self.packets {
            self.out.write_all(b"\n],\n\"findings\":[")?;
            match self.spill_file.take() {
                Some(mut file) => {
                    use std::io::Seek;
                    file.seek(io::SeekFrom::Start(0))?;
                    io::copy(&mut file, &mut self.out)?;
                }
                None => self.out.write_all(&self.spill)?,
            }
        }
        self.out.write_all(b"\n],\n\"capture\":")?;
        to_writer(&mut self.out, &outcome.capture).map_err(io_err)?;
        self.out.write_all(b",\n\"summary\":")?;
        to_writer(&mut self.out, &summary_value(outcome)).map_err(io_err)?;
        if !statistics.is_empty() {
            self.out.write_all(b",\n\"statistics\":")?;
            to_writer(&mut self.out, statistics).map_err(io_err)?;
        }
        self.out.write_all(b"\n}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Observer for JsonWriter<W> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        self.pending.clear();
        if self.error.is_some() {
            return Flow::Stop;
        }
        let selected = self.filter.as_ref().is_none_or(|f| f.matches(e));
        let mut result = if selected {
            self.write_packet(e)
        } else {
            Ok(())
        };
        for f in e.findings {
            if result.is_ok() && keep(self.filter.as_ref(), selected, f) {
                result = self.write_finding(f);
            }
        }
        match result {
            Ok(()) => Flow::Continue,
            Err(err) => {
                self.error = Some(err);
                Flow::Stop
            }
        }
    }

    fn finding(&mut self, f: &Finding) {
        self.pending.push(*f);
    }
}

/// Reads a summary back: a json document (its `summary`), a jsonl stream (its
/// last line), or a bare summary object.
pub fn read_summary(text: &str) -> Result<Summary, serde_json::Error> {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let last = text.lines().rev().find(|l| !l.trim().is_empty());
            match last.map(serde_json::from_str::<serde_json::Value>) {
                Some(Ok(v)) => v,
                _ => return Err(e),
            }
        }
    };
    match value.get("summary") {
        Some(s) if s.is_object() => serde_json::from_value(s.clone()),
        _ => serde_json::from_value(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Datagram;
    use crate::engine::{Detail, Direction, FindingKind};

    /// The hand-written packet line is byte for byte what serde_json writes
    /// for `PacketJson`, on every packet of every capture of the corpus
    /// (every protocol, malformed and cut packets, IPv6, findings).
    #[test]
    fn the_fast_packet_line_is_serde_jsons() {
        struct Compare(u64, Remembered, u64);
        fn same_finding(f: &Finding) {
            let mut fast = Vec::new();
            finding_line(&mut fast, f);
            let mut want = Vec::new();
            to_writer(&mut want, &FindingJson::new(f, true)).unwrap();
            want.push(b'\n');
            assert_eq!(
                String::from_utf8_lossy(&fast),
                String::from_utf8_lossy(&want)
            );
        }
        impl Observer for Compare {
            fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
                let mut fast = Vec::new();
                packet_line(&mut fast, &mut self.1, e, None);
                for f in e.findings {
                    same_finding(f);
                    self.2 += 1;
                }
                let mut want = serde_json::to_vec(&PacketJson {
                    e,
                    tagged: true,
                    fields: false,
                })
                .unwrap();
                want.push(b'\n');
                assert_eq!(
                    String::from_utf8_lossy(&fast),
                    String::from_utf8_lossy(&want)
                );
                self.0 += 1;
                Flow::Continue
            }
            fn finding(&mut self, f: &Finding) {
                same_finding(f);
                self.2 += 1;
            }
        }
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
        let (mut packets, mut findings) = (0, 0);
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "pcap") {
                continue;
            }
            let mut source = crate::capture::Source::files(&[&path]).unwrap();
            let mut analysis = super::super::Analysis::new(Compare(0, Remembered::default(), 0));
            while let Some(frame) = source.next_frame().unwrap() {
                if let crate::capture::FrameClass::Udp(d) = &frame.class {
                    analysis.datagram(d);
                }
            }
            packets += analysis.output().0;
            findings += analysis.output().2;
        }
        assert!(packets > 10_000, "{packets}");
        assert!(findings > 1_000, "{findings}");
    }

    /// Batched, JSON Lines hands the same bytes over in writes of at
    /// least [`BATCH`] bytes (the last aside); unbatched, a packet's lines
    /// at a time.
    #[test]
    fn batched_lines_are_the_lines_each_packet_writes() {
        use crate::report::testing::Writes;
        let run = |batched: bool| {
            let mut analysis = super::super::Analysis::new(
                JsonlWriter::new(Writes::default(), None).batched(batched),
            );
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures");
            for name in ["vessel-clean.pcap", "sim-corrupt.pcap", "bg-bigmsg.pcap"] {
                let mut source = crate::capture::Source::files(&[&dir.join(name)]).unwrap();
                while let Some(frame) = source.next_frame().unwrap() {
                    if let crate::capture::FrameClass::Udp(d) = &frame.class {
                        analysis.datagram(d);
                    }
                }
            }
            let (outcome, w) = analysis.finish(Default::default());
            w.finish(&outcome).unwrap()
        };
        let (each, batched) = (run(false), run(true));
        assert_eq!(each.0, batched.0);
        assert!(each.0.len() > 3 * BATCH, "{}", each.0.len());
        assert!(each.1.len() > 1000, "{}", each.1.len());
        let (last, full) = batched.1.split_last().unwrap();
        assert!(full.iter().all(|&n| n >= BATCH), "{full:?}");
        assert!(*last > 0 && full.len() >= 3, "{:?}", batched.1);
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let all: Vec<u8> = (0u8..=0x7f).chain([0xc3, 0xa9]).collect();
        let text = String::from_utf8_lossy(&all).into_owned();
        let mut out = Vec::new();
        json_str(&mut out, text.as_bytes());
        assert_eq!(out, serde_json::to_vec(&text).unwrap());
        // Each byte alone, and at each place of a word, escaped or not.
        for b in 0u8..=0x7f {
            for at in 0..17 {
                let mut t = vec![b'a'; 17];
                t[at] = b;
                let t = String::from_utf8(t).unwrap();
                let mut out = Vec::new();
                json_str(&mut out, t.as_bytes());
                assert_eq!(out, serde_json::to_vec(&t).unwrap(), "{b} at {at}");
            }
        }
        // C1 controls too (serde_json leaves them raw), here and through
        // `to_writer`; the other characters of two bytes stay as they are.
        let c1 = "a\u{80}b\u{85}\u{9b}2J\u{9f}\u{a0}\u{7f}é";
        let want = "\"a\\u0080b\\u0085\\u009b2J\\u009f\u{a0}\u{7f}é\"";
        let mut out = Vec::new();
        json_str(&mut out, c1.as_bytes());
        assert_eq!(String::from_utf8(out).unwrap(), want);
        let mut out = Vec::new();
        to_writer(&mut out, &json!({ "s": c1 })).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("{{\"s\":{want}}}"));
        for v in [0.0, 1700000000.4622002, 1e21, f64::NAN, -0.5] {
            let mut out = Vec::new();
            json_f64(&mut out, v);
            assert_eq!(out, serde_json::to_vec(&v).unwrap(), "{v}");
        }
    }

    /// A capture time is written as `json_f64` writes its seconds, the
    /// same time again as it was the first time: whole seconds, milli-,
    /// micro- and nanoseconds, times the one before.
    #[test]
    fn times_are_written_as_their_seconds_f64() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut times = vec![0, 1, 999, 1_000_000_000, u64::MAX, u64::MAX, 7, 7, 0];
        for i in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Fractions with every number of trailing zeros, seconds of
            // every number of digits.
            let zeros = 10u64.pow((x >> 40) as u32 % 10);
            let n = match i % 6 {
                0 => x % (1 << 33) * 1_000_000_000,
                1 => x % (1 << 43) * 1_000_000,
                2 => 1_700_000_000_000_000_000 + x % 1_000_000_000_000 * 1_000,
                3 => 1_700_000_000_000_000_000 + x % 1_000_000_000_000 / zeros * zeros,
                4 => x % 10u64.pow((x >> 50) as u32 % 20) / zeros * zeros,
                _ => x,
            };
            times.push(n);
            if x & 3 == 0 {
                times.push(n);
            }
        }
        // Most of the times with a short fraction are written as their decimal.
        let decimals = times
            .iter()
            .filter(|&&n| LastTime::default().decimal(Timestamp(n)).is_some())
            .count();
        assert!(decimals > 30_000, "{decimals}");
        let (mut out, mut want, mut last) = (Vec::new(), Vec::new(), LastTime::default());
        for n in times {
            let ts = Timestamp(n);
            out.clear();
            want.clear();
            json_time(&mut out, ts, &mut last);
            json_f64(&mut want, secs(ts));
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&want),
                "{n}"
            );
        }
    }

    /// A character of two bytes beginning with 0xc2 that is not a C1
    /// control (the `°` of every lwar Update text) is not a stop of the
    /// search, wherever it falls in a word; a C1 control is.
    #[test]
    fn the_degree_sign_needs_no_escape() {
        for at in 0..20 {
            let mut t = "a".repeat(at);
            t.push('°');
            t.push('b');
            assert_eq!(first_special(t.as_bytes()), t.len(), "{t:?}");
            let mut t = "a".repeat(at);
            t.push('\u{85}');
            t.push_str("°b");
            assert_eq!(first_special(t.as_bytes()), at, "{t:?}");
        }
        // 0xc2 last, with nothing after it.
        assert_eq!(first_special(b"abc\xc2"), 4);
    }

    /// Names written once and again (remembered as plain or not) are
    /// what `json_str` writes.
    #[test]
    fn names_are_written_as_strings_are() {
        let names: Vec<&'static str> = [
            "Update",
            "ack",
            "a\"b",
            "tab\there",
            "°",
            "\u{85}x",
            "",
            "UpdateCircle",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "abcdefg\"",
            "abcdefghijklmn\\p",
            "abcdefghi\u{1}klmnop",
            "abc\ndefghijkl",
            "\u{90}abcdefghijklmn",
            "abcdefghijklmnopqrstuvwxyz0123",
            "abcdefghijklmnopqrstuvwxyz01234",
        ]
        .into_iter()
        .chain((0..200).map(|i| &*format!("name{i}").leak()))
        .collect();
        for _ in 0..3 {
            for &n in &names {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                json_name(&mut a, n);
                json_str(&mut b, n.as_bytes());
                assert_eq!(a, b, "{n:?}");
            }
        }
    }

    struct Plain<'a>(&'a str);

    impl std::fmt::Display for Plain<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl crate::proto::dissect::TextBytes for Plain<'_> {}

    /// Strings mixing every kind of character at every place of a word,
    /// escaped by the word-at-a-time search as serde_json (with the C1
    /// controls) escapes them; and a message's text escaped from its first
    /// special byte on.
    #[test]
    fn runs_between_escapes_are_found_a_word_at_a_time() {
        let pool = [
            'a', '"', '\\', '\n', '\u{1}', '\u{1f}', '°', '\u{85}', '\u{c2}', 'é', '\u{9f}',
            '\u{a0}',
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 40) as usize;
            let text: String = (0..len)
                .map(|i| {
                    let r = (x >> (i % 60)) as usize ^ i.wrapping_mul(7);
                    if r.is_multiple_of(3) {
                        pool[(r / 3) % pool.len()]
                    } else {
                        'a'
                    }
                })
                .collect();
            let mut want = Vec::new();
            to_writer(&mut want, &text).unwrap();
            let mut out = Vec::new();
            json_str(&mut out, text.as_bytes());
            assert_eq!(out, want, "{text:?}");
            let mut out = b"[".to_vec();
            json_text(&mut out, &Plain(&text));
            assert_eq!(&out[1..], &want[..], "{text:?}");
        }
    }

    fn finding(frame: u64) -> Finding {
        Finding {
            kind: FindingKind::RESEND,
            rule: None,
            frame,
            ts: Timestamp::from_millis(frame),
            session: 0,
            direction: Direction::ClientToServer,
            seqno: Some(frame as u32),
            detail: Detail::None,
        }
    }

    /// Feeds `n` packets, each with one finding, through a json writer.
    fn document(n: u64, packets: bool) -> (serde_json::Value, bool) {
        let payload = [0u8; 4];
        let mut w = JsonWriter::new(Vec::new(), None, packets);
        let mut spilled = false;
        for frame in 1..=n {
            let d = Datagram::new(
                frame,
                Timestamp::from_millis(frame),
                "10.0.0.1:5000".parse().unwrap(),
                "10.0.0.2:32422".parse().unwrap(),
                &payload,
            );
            let f = [finding(frame)];
            let e = PacketEvent {
                datagram: &d,
                protocol: &crate::proto::lwar::INFO,
                session: 0,
                direction: Direction::ClientToServer,
                findings: &f,
                acks: Default::default(),
                ack_samples: [&[], &[]],
                resends: 0,
                dissector: None,
            };
            w.packet(&e);
            // Never more than the spill threshold in memory.
            assert!(w.spill.len() < SPILL_AT + 512);
            spilled |= w.spill_file.is_some();
        }
        let outcome = crate::report::Analysis::new(())
            .finish(Default::default())
            .0;
        let out = w.finish(&outcome).unwrap();
        (serde_json::from_slice(&out).unwrap(), spilled)
    }

    #[test]
    fn findings_wait_in_a_file_while_packets_are_listed() {
        let (doc, spilled) = document(30_000, true);
        assert!(spilled, "30 000 findings are more than a megabyte of JSON");
        let findings = doc["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 30_000);
        assert_eq!(doc["packets"].as_array().unwrap().len(), 30_000);
        // In order, none lost at the seams.
        for (i, f) in findings.iter().enumerate() {
            assert_eq!(f["frame"], i as u64 + 1);
        }
    }

    #[test]
    fn without_packets_findings_stream_straight_out() {
        let (doc, spilled) = document(30_000, false);
        assert!(!spilled);
        assert_eq!(doc["findings"].as_array().unwrap().len(), 30_000);
        assert!(doc.get("packets").is_none());
        let (doc, _) = document(0, true);
        assert_eq!(doc["findings"].as_array().unwrap().len(), 0);
        assert_eq!(doc["packets"].as_array().unwrap().len(), 0);
    }
}
