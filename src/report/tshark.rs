//! `-T json` and `-T ek`: the packets in tshark's JSON shapes, with
//! lwarscope's layers, for the tools that read tshark's output.
//!
//! `-T json` is one JSON array, a packet per element, as tshark writes it
//! (`--no-duplicate-keys`: a field that occurs several times is an array of
//! its values):
//!
//! ```text
//! [
//!   {
//!     "_index": "packets-2023-11-14",
//!     "_type": "doc",
//!     "_score": null,
//!     "_source": {
//!       "layers": {
//!         "frame": {"frame.number": "1", "frame.time_epoch": "...", ...},
//!         "ip": {"ip.src": "10.0.0.1", "ip.dst": "10.0.0.2"},
//!         "udp": {"udp.srcport": "40001", "udp.dstport": "32422", "udp.length": "35"},
//!         "lwar": {"lwar.ack": "0", "lwar.type": ["Join", "Input"], ...},
//!         "lwarscope": {"lwarscope.session": "0", "lwarscope.dir": "c2s"}
//!       }
//!     }
//!   }
//! ]
//! ```
//!
//! `-T ek` is newline-delimited JSON for Elasticsearch's bulk API: per packet
//! an index line (`{"index":{"_index":"packets-2023-11-14","_type":"doc"}}`)
//! and the packet (`{"timestamp":"1700000000100","layers":{...}}`: the
//! capture time in milliseconds, and each field's name with its dots turned
//! into underscores and prefixed by its layer, `frame_frame_number`,
//! `lwar_lwar_seqno`).
//!
//! The layers: `frame` (number, time since the epoch and since the first
//! packet, the frame's length on the wire and captured, the protocols:
//! `ip:udp:lwar`), `ip` or `ipv6` (source and
//! destination), `udp` (ports and length), the packet's protocol by its name
//! (every registered field it carries, in wire order of first occurrence, as
//! `-T fields` writes its values; nodes, which have no value, left out) and
//! `lwarscope` (the session, the direction and the findings raised on the
//! packet). Every value is a JSON string, as tshark's. Only packets of a
//! known protocol that pass `-Y` are written; the index is named after the
//! UTC day of each packet, as tshark names it.
//!
//! Nothing is allocated per packet once the buffers have grown: the packet is
//! put together in a reused buffer and written whole.

use super::Filter;
use super::json::json_str;
use crate::engine::{Finding, Flow, Observer, PacketEvent};
use crate::proto::field::{Field, FieldDef, FieldSink, FieldType};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::net::SocketAddr;

/// Which of tshark's shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `-T json`: one array, pretty-printed as tshark prints it.
    Json,
    /// `-T ek`: an index line and a packet line per packet.
    Ek,
}

/// The protocol fields of one packet, in wire order: each value's text in
/// one reused string.
#[derive(Default)]
struct Values {
    text: String,
    /// The field and the end of its value's text.
    fields: Vec<(&'static FieldDef, usize)>,
}

impl FieldSink for Values {
    fn field(&mut self, f: Field<'_>) {
        if f.def.ty == FieldType::Node {
            return;
        }
        super::fields::write_value(&mut self.text, &f.value);
        self.fields.push((f.def, self.text.len()));
    }
}

impl Values {
    fn clear(&mut self) {
        self.text.clear();
        self.fields.clear();
    }

    /// Each field once, in order of first occurrence, with its values.
    fn each(&self, mut f: impl FnMut(&'static FieldDef, &mut dyn Iterator<Item = &str>)) {
        let value = |i: usize| {
            let start = match i {
                0 => 0,
                _ => self.fields[i - 1].1,
            };
            self.text.get(start..self.fields[i].1).unwrap_or("")
        };
        for (i, (def, _)) in self.fields.iter().enumerate() {
            if self.fields[..i].iter().any(|(d, _)| std::ptr::eq(*d, *def)) {
                continue;
            }
            let mut values = (i..self.fields.len())
                .filter(|&j| std::ptr::eq(self.fields[j].0, *def))
                .map(value);
            f(def, &mut values);
        }
    }
}

/// Writes the packets in one of tshark's shapes.
pub struct TsharkWriter<W: Write> {
    out: W,
    shape: Shape,
    filter: Option<Filter>,
    /// The packet being written, handed to `out` whole.
    buf: Vec<u8>,
    values: Values,
    /// A scratch string for numbers and names.
    scratch: String,
    first_ts: Option<crate::capture::Timestamp>,
    packets: u64,
    error: Option<io::Error>,
}

impl<W: Write> TsharkWriter<W> {
    pub fn new(out: W, shape: Shape, filter: Option<Filter>) -> Self {
        TsharkWriter {
            out,
            shape,
            filter,
            buf: Vec::with_capacity(4096),
            values: Values::default(),
            scratch: String::with_capacity(64),
            first_ts: None,
            packets: 0,
            error: None,
        }
    }

    /// Ends the array (`-T json`; `[` and `]` alone for no packet), flushes,
    /// and hands the writer back, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.shape == Shape::Json {
            if self.packets == 0 {
                self.out.write_all(b"[\n")?;
            } else {
                self.out.write_all(b"\n")?;
            }
            self.out.write_all(b"]\n")?;
        }
        self.out.flush()?;
        Ok(self.out)
    }

    fn write_packet(&mut self, e: &PacketEvent<'_>) -> io::Result<()> {
        // Time relative to the capture's first packet, selected or not, as
        // tshark counts it.
        let d = e.datagram;
        let first = *self.first_ts.get_or_insert(d.ts);
        if !self.filter.as_ref().is_none_or(|f| f.matches(e)) {
            return Ok(());
        }
        self.values.clear();
        let _ = e.dissector().fields(d.payload, &mut self.values);
        self.buf.clear();
        let mut p = Packet {
            buf: &mut self.buf,
            scratch: &mut self.scratch,
            shape: self.shape,
            depth: 0,
            layer: "",
            fields: 0,
            layers: 0,
        };
        match self.shape {
            Shape::Json => {
                p.buf.extend_from_slice(match self.packets {
                    0 => b"[\n  {\n",
                    _ => b",\n  {\n",
                });
                p.buf.extend_from_slice(b"    \"_index\": \"packets-");
                utc_day(p.buf, d.ts);
                p.buf.extend_from_slice(
                    b"\",\n    \"_type\": \"doc\",\n    \"_score\": null,\n    \"_source\": {\n      \"layers\": {",
                );
                p.depth = 4;
            }
            Shape::Ek => {
                p.buf
                    .extend_from_slice(b"{\"index\":{\"_index\":\"packets-");
                utc_day(p.buf, d.ts);
                p.buf
                    .extend_from_slice(b"\",\"_type\":\"doc\"}}\n{\"timestamp\":\"");
                super::fast::int(p.buf, d.ts.nanos() / 1_000_000);
                p.buf.extend_from_slice(b"\",\"layers\":{");
            }
        }
        // frame
        p.open("frame");
        p.number("frame.number", d.frame);
        p.secs("frame.time_epoch", d.ts.nanos());
        p.secs("frame.time_relative", d.ts.since(first));
        p.number("frame.len", u64::from(d.frame_len));
        p.number("frame.cap_len", u64::from(d.frame_cap_len));
        let ip = match d.src {
            SocketAddr::V4(_) => "ip",
            SocketAddr::V6(_) => "ipv6",
        };
        p.scratch.clear();
        let _ = write!(p.scratch, "{ip}:udp:{}", e.protocol.name);
        p.text_scratch("frame.protocols");
        p.close();
        // ip or ipv6
        p.open(ip);
        p.scratch.clear();
        let _ = write!(p.scratch, "{}", d.src.ip());
        p.text_scratch(if ip == "ip" { "ip.src" } else { "ipv6.src" });
        p.scratch.clear();
        let _ = write!(p.scratch, "{}", d.dst.ip());
        p.text_scratch(if ip == "ip" { "ip.dst" } else { "ipv6.dst" });
        p.close();
        // udp
        p.open("udp");
        p.number("udp.srcport", u64::from(d.src.port()));
        p.number("udp.dstport", u64::from(d.dst.port()));
        p.number("udp.length", d.payload_len as u64 + 8);
        p.close();
        // the protocol
        p.open(e.protocol.name);
        self.values.each(|def, values| p.values(def.name, values));
        p.close();
        // lwarscope
        p.open("lwarscope");
        p.number("lwarscope.session", e.session as u64);
        p.scratch.clear();
        let _ = write!(p.scratch, "{}", e.direction);
        p.text_scratch("lwarscope.dir");
        if !e.findings.is_empty() {
            p.findings("lwarscope.finding", e.findings);
        }
        p.close();
        match self.shape {
            Shape::Json => self.buf.extend_from_slice(b"\n      }\n    }\n  }"),
            Shape::Ek => self.buf.extend_from_slice(b"}}\n"),
        }
        self.packets += 1;
        self.out.write_all(&self.buf)
    }
}

/// The UTC day of a capture time, `2023-11-14`, for the index's name.
fn utc_day(out: &mut Vec<u8>, ts: crate::capture::Timestamp) {
    let days = ts.nanos() / 1_000_000_000 / 86_400;
    let (y, m, d) = super::table::civil_from_days(days as i64);
    for (i, (n, width)) in [(y, 4), (m, 2), (d, 2)].into_iter().enumerate() {
        if i > 0 {
            out.push(b'-');
        }
        super::fast::int_zero(out, n.unsigned_abs(), width);
    }
}

/// One packet being written: the layers and their fields, in the shape's
/// punctuation.
struct Packet<'b> {
    buf: &'b mut Vec<u8>,
    scratch: &'b mut String,
    shape: Shape,
    /// Indentation of the layers object (`-T json`).
    depth: usize,
    /// The open layer's name (`-T ek`'s key prefix).
    layer: &'static str,
    /// Fields written in the open layer, layers written in the packet.
    fields: usize,
    layers: usize,
}

impl Packet<'_> {
    fn indent(&mut self, depth: usize) {
        self.buf.push(b'\n');
        self.buf.extend(std::iter::repeat_n(b' ', 2 * depth));
    }

    fn open(&mut self, layer: &'static str) {
        if self.layers > 0 {
            self.buf.push(b',');
        }
        self.layers += 1;
        if self.shape == Shape::Json {
            self.indent(self.depth);
        }
        json_str(self.buf, layer.as_bytes());
        self.buf.extend_from_slice(match self.shape {
            Shape::Json => b": {",
            Shape::Ek => b":{",
        });
        self.layer = layer;
        self.fields = 0;
    }

    fn close(&mut self) {
        if self.shape == Shape::Json && self.fields > 0 {
            self.indent(self.depth);
        }
        self.buf.push(b'}');
    }

    /// A field's key: `"frame.number": ` (json) or `"frame_frame_number":` (ek).
    fn key(&mut self, name: &str) {
        if self.fields > 0 {
            self.buf.push(b',');
        }
        self.fields += 1;
        match self.shape {
            Shape::Json => {
                self.indent(self.depth + 1);
                json_str(self.buf, name.as_bytes());
                self.buf.extend_from_slice(b": ");
            }
            Shape::Ek => {
                self.buf.push(b'"');
                for b in self.layer.bytes().chain([b'_']).chain(name.bytes()) {
                    self.buf.push(if b == b'.' { b'_' } else { b });
                }
                self.buf.extend_from_slice(b"\":");
            }
        }
    }

    fn number(&mut self, name: &str, n: u64) {
        self.key(name);
        self.buf.push(b'"');
        super::fast::int(self.buf, n);
        self.buf.push(b'"');
    }

    /// Seconds with nine decimals, as `-T fields` writes times.
    fn secs(&mut self, name: &str, ns: u64) {
        self.key(name);
        self.buf.push(b'"');
        super::fast::int(self.buf, ns / 1_000_000_000);
        self.buf.push(b'.');
        let frac = ns % 1_000_000_000;
        let mut digits = [b'0'; 9];
        let mut f = frac;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (f % 10) as u8;
            f /= 10;
        }
        self.buf.extend_from_slice(&digits);
        self.buf.push(b'"');
    }

    /// The scratch string's text as the value of `name`.
    fn text_scratch(&mut self, name: &str) {
        self.key(name);
        json_str(self.buf, self.scratch.as_bytes());
    }

    /// One value as a string, several as an array of strings.
    fn values(&mut self, name: &str, values: &mut dyn Iterator<Item = &str>) {
        let Some(first) = values.next() else {
            return;
        };
        self.key(name);
        let Some(second) = values.next() else {
            json_str(self.buf, first.as_bytes());
            return;
        };
        self.buf.push(b'[');
        for (i, v) in [first, second].into_iter().chain(values).enumerate() {
            if i > 0 {
                self.buf.extend_from_slice(match self.shape {
                    Shape::Json => b", ",
                    Shape::Ek => b",",
                });
            }
            json_str(self.buf, v.as_bytes());
        }
        self.buf.push(b']');
    }

    /// The findings' labels (`resend`, `violation/after-disconnect`).
    fn findings(&mut self, name: &str, findings: &[Finding]) {
        self.key(name);
        let many = findings.len() > 1;
        if many {
            self.buf.push(b'[');
        }
        for (i, f) in findings.iter().enumerate() {
            if i > 0 {
                self.buf.extend_from_slice(match self.shape {
                    Shape::Json => b", ",
                    Shape::Ek => b",",
                });
            }
            self.scratch.clear();
            let _ = write!(self.scratch, "{}", f.label());
            json_str(self.buf, self.scratch.as_bytes());
        }
        if many {
            self.buf.push(b']');
        }
    }
}

impl<W: Write> Observer for TsharkWriter<W> {
    fn packet(&mut self, e: &PacketEvent<'_>) -> Flow {
        if self.error.is_none()
            && let Err(err) = self.write_packet(e)
        {
            self.error = Some(err);
        }
        match self.error {
            Some(_) => Flow::Stop,
            None => Flow::Continue,
        }
    }

    fn finding(&mut self, _: &Finding) {}
}
