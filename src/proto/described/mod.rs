//! Described protocols: a UDP protocol's wire layout in a subset of Kaitai
//! Struct's `.ksy` (YAML) plus lwarscope's semantics in one extension key,
//! `-lwarscope:`, served by the same engine, outputs and reliability core as a
//! built-in protocol. The guide is `docs/describe-a-protocol.md`.
//!
//! - [`yaml`]: the YAML tree with line and column of every node;
//! - [`ksy`]: the supported subset, read into a [`ksy::Ksy`] (anything else is
//!   refused with file:line:column and what to use instead);
//! - [`decode`]: the compiled layout and the decoder (no allocation, no panic);
//! - [`analysis`]: the generic analyzer (the contract of its findings);
//! - [`dissect`]: how outputs see a described packet (`bodies`: a packet's
//!   one-line text, the body of a packet that repeats one copied; `trees`:
//!   its `-V` tree, likewise);
//! - [`protobuf`]: a description naming a `.proto` and the message each side
//!   sends (`docs/protobuf.md`): compiled by `protox` into a table of
//!   messages and walked into the same events as a layout, so everything
//!   above serves it too.
//!
//! The shipped descriptions (`protocols/*.ksy` at the top of the repository)
//! are embedded in the binary with `include_str!`, so it stands alone; the
//! specifications of Vessel and Timewarp are beside this file.
//!
//! **Lifetime.** The registry hands out `&'static` data, so a description is
//! compiled and leaked once, when the registry is first built, and lives as
//! long as the process: loading is once per process, never per capture.

pub mod analysis;
mod bodies;
pub mod decode;
pub mod dissect;
pub mod ksy;
pub mod protobuf;
pub mod sim;
mod trees;
pub mod yaml;

use crate::engine::{
    Mark, Probe, ProtoDetail, ProtocolInfo, Recognition, Rule, RuleDef, TrackerConfig,
};
use decode::{Compiled, DecodeErr, ErrKind};
use ksy::Ksy;
use std::sync::{Mutex, OnceLock};

/// The descriptions shipped with lwarscope, loaded by default: (file, text).
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "protocols/vessel.ksy",
        include_str!("../../../protocols/vessel.ksy"),
    ),
    (
        "protocols/timewarp.ksy",
        include_str!("../../../protocols/timewarp.ksy"),
    ),
    (
        "protocols/starstrike.ksy",
        include_str!("../../../protocols/starstrike.ksy"),
    ),
];

/// A description ready to serve: its layout compiled, its key fields resolved.
#[derive(Debug)]
pub struct Described {
    /// Its index among the described protocols (decode errors name it so).
    pub index: usize,
    pub ksy: Ksy,
    pub compiled: Compiled,
    /// Registered field of the message type, the sequence number, the ack.
    pub type_field: Option<u16>,
    pub seq_field: Option<(u16, u32)>,
    /// `sequence: bits:` narrower than the field: the largest number that
    /// takes a place in the sequence.
    pub seq_max: Option<u64>,
    /// The field that tells sessions of an address pair apart, if any.
    pub session_field: Option<u16>,
    pub ack: AckFields,
    /// The message type's enum values, in the order of their counters.
    pub type_values: Vec<i64>,
    pub rules: &'static [Rule],
    pub info: OnceLock<&'static ProtocolInfo>,
    /// One of the shipped descriptions, as shipped (not replaced by a file).
    pub shipped: bool,
    /// The dissectors of the client's and the server's packets, where the
    /// directions carry two protobuf messages.
    pub sides: OnceLock<[&'static dyn crate::proto::dissect::Dissector; 2]>,
    /// The head of its packets, with the numbers a packet that repeats one
    /// may differ in: its text copied, its analysis's walk too
    /// ([`bodies`]).
    text_head: Option<bodies::Head>,
}

/// The ack model, by registered field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckFields {
    None,
    Cumulative(u16),
    Bitfield { bits: u16, width: u32, anchor: u16 },
}

impl Described {
    /// Compiles a description read from `file`.
    pub fn new(file: &str, ksy: Ksy) -> Result<Described, ksy::KsyError> {
        let compiled = Compiled::new(&ksy).map_err(|(pos, msg)| ksy::KsyError {
            file: file.to_owned(),
            line: pos.line,
            col: pos.col,
            msg,
        })?;
        Described::with_compiled(file, ksy, compiled)
    }

    /// A description whose decoding is compiled: a `.ksy` layout, or a
    /// protobuf description's messages (whose `root` holds the fields its
    /// keys may name).
    pub fn with_compiled(
        file: &str,
        ksy: Ksy,
        compiled: Compiled,
    ) -> Result<Described, ksy::KsyError> {
        let at = |i: usize| compiled.root.attrs.get(i).map(|a| a.field);
        let width = |i: usize| match compiled.root.attrs.get(i).map(|a| &a.kind) {
            Some(decode::CKind::Int { bytes, .. }) => u32::from(*bytes) * 8,
            _ => 32,
        };
        let type_field = ksy.sem.message_type.and_then(at);
        let session_field = ksy.sem.session.and_then(at);
        let seq_field = ksy.sem.sequence.and_then(|(i, _)| {
            let bits = ksy.sem.sequence_bits.unwrap_or(32).min(width(i));
            at(i).map(|f| (f, bits))
        });
        let seq_max = ksy
            .sem
            .sequence
            .zip(ksy.sem.sequence_bits)
            .filter(|((i, _), bits)| *bits < width(*i))
            .map(|(_, bits)| (1u64 << bits) - 1);
        let ack = match ksy.sem.ack {
            ksy::Ack::None => AckFields::None,
            ksy::Ack::Cumulative { field } => {
                at(field).map_or(AckFields::None, AckFields::Cumulative)
            }
            ksy::Ack::Bitfield { field, anchor } => match (at(field), at(anchor)) {
                (Some(bits), Some(a)) => AckFields::Bitfield {
                    bits,
                    width: width(field),
                    anchor: a,
                },
                _ => AckFields::None,
            },
        };
        let type_values: Vec<i64> = ksy
            .sem
            .message_type
            .and_then(|i| ksy.types.first()?.attrs.get(i)?.enum_)
            .and_then(|e| ksy.enums.get(e))
            .map(|e| e.values.iter().map(|(v, _)| *v).collect())
            .unwrap_or_default();
        if type_values.len() > crate::engine::MAX_MESSAGE_TYPES {
            let pos = ksy.types[0].attrs[ksy.sem.message_type.unwrap_or(0)].pos;
            return Err(ksy::KsyError {
                file: file.to_owned(),
                line: pos.line,
                col: pos.col,
                msg: format!(
                    "the message-type enum has {} values: at most {} are counted",
                    type_values.len(),
                    crate::engine::MAX_MESSAGE_TYPES
                ),
            });
        }
        let text_head = bodies::Head::of(&compiled);
        Ok(Described {
            text_head,
            index: 0,
            ksy,
            compiled,
            type_field,
            seq_field,
            seq_max,
            session_field,
            ack,
            type_values,
            rules: &[],
            info: OnceLock::new(),
            shipped: false,
            sides: OnceLock::new(),
        })
    }

    /// The counter ordinal of a message type value.
    pub fn type_ordinal(&self, v: i64) -> Option<usize> {
        self.type_values.iter().position(|x| *x == v)
    }

    pub fn info(&'static self) -> &'static ProtocolInfo {
        self.info.get_or_init(|| leak_info(self))
    }

    /// The dissector of `side`'s packets, where the directions carry two
    /// protobuf messages (the registered one tells them by content).
    pub fn side_dissector(
        &'static self,
        side: decode::Side,
    ) -> Option<&'static dyn crate::proto::dissect::Dissector> {
        if !self.compiled.proto.as_ref()?.two_messages() {
            return None;
        }
        let [c, s] = *self.sides.get_or_init(|| {
            [
                Box::leak(Box::new(dissect::Dissect::side(self, decode::Side::Client))),
                Box::leak(Box::new(dissect::Dissect::side(self, decode::Side::Server))),
            ]
        });
        match side {
            decode::Side::Client => Some(c),
            decode::Side::Server => Some(s),
            decode::Side::Any => None,
        }
    }
}

/// Reads and compiles a description: a `.ksy`, or a protobuf description
/// (YAML with `protobuf:`) whose `.proto` is read from beside `file`.
pub fn parse(file: &str, text: &str) -> Result<Described, ksy::KsyError> {
    // The YAML is read once (a run loads the shipped descriptions, each
    // read before as YAML twice: what its format is, then the format).
    let root = yaml::parse(text).map_err(|e| ksy::KsyError {
        file: file.to_owned(),
        line: e.pos.line,
        col: e.pos.col,
        msg: e.msg,
    })?;
    if protobuf::is_protobuf_root(&root) {
        let dir = std::path::Path::new(file)
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        let resolve = move |name: &str| -> Option<Result<String, String>> {
            let path = dir.join(name);
            if !path.is_file() {
                return None;
            }
            Some(read_bounded(&path).map_err(|e| e.to_string()))
        };
        return protobuf::parse_root(file, &root, Box::new(resolve));
    }
    let k = ksy::parse_root(file, &root)?;
    Described::new(file, k)
}

/// Why descriptions could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Ksy(#[from] ksy::KsyError),
    #[error("{file}: protocol `{name}` is a built-in protocol's name: choose another `meta.id`")]
    Builtin { file: String, name: String },
    #[error("descriptions must be loaded before the protocol registry is used")]
    TooLate,
}

static USER: Mutex<Vec<Described>> = Mutex::new(Vec::new());

/// The built-in protocols' names (and their long names): a description may
/// not take one (its fields would be registered twice, `vessel.syncNumber`).
const BUILTIN_NAMES: &[&str] = &[
    "lwar",
    "strs",
    "bg",
    "vessel",
    "starstrike",
    "battlegrounds",
];
static LOADED: OnceLock<Vec<&'static Described>> = OnceLock::new();

/// Loads descriptions (`-X proto:FILE`), checked now: a bad file is an error
/// here, with its line and column. They join the registry when it is built
/// (after the built-ins and the shipped descriptions; one with a shipped
/// description's id replaces it).
pub fn load_files(files: &[std::path::PathBuf]) -> Result<(), LoadError> {
    if LOADED.get().is_some() {
        return Err(LoadError::TooLate);
    }
    let mut parsed = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let text = read_bounded(f).map_err(|source| LoadError::Read {
            file: name.clone(),
            source,
        })?;
        let d = parse(&name, &text)?;
        if BUILTIN_NAMES.contains(&d.ksy.id.as_str()) {
            return Err(LoadError::Builtin {
                file: name,
                name: d.ksy.id,
            });
        }
        parsed.push(d);
    }
    let mut user = USER.lock().unwrap_or_else(|e| e.into_inner());
    user.extend(parsed);
    Ok(())
}

/// A description file's bytes, at most: what a description may hold in all
/// (`ksy::MAX_UNFOLDED_BYTES`, 16 MiB). A larger file is refused before
/// it is read whole.
pub const MAX_FILE_BYTES: u64 = ksy::MAX_UNFOLDED_BYTES as u64;

/// Reads a description file of at most [`MAX_FILE_BYTES`].
fn read_bounded(f: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(f)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: not a description",
            MAX_FILE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Every described protocol, compiled and leaked once.
pub fn loaded() -> &'static [&'static Described] {
    LOADED.get_or_init(|| {
        let user = std::mem::take(&mut *USER.lock().unwrap_or_else(|e| e.into_inner()));
        let mut all: Vec<Described> = Vec::new();
        // The shipped ones are checked by the tests; user files were
        // checked (and compiled) when they were loaded.
        let shipped = SHIPPED.iter().filter_map(|(f, t)| {
            let mut d = parse(f, t).ok()?;
            d.shipped = true;
            Some(d)
        });
        for d in shipped.chain(user) {
            all.retain(|x| x.ksy.id != d.ksy.id);
            all.push(d);
        }
        all.into_iter()
            .enumerate()
            .map(|(i, d)| leak(d, i))
            .collect()
    })
}

/// Makes a compiled description `&'static`, numbered `index` among the
/// described protocols: its fields and rules are leaked with it (once per
/// process: see the module docs).
pub fn leak(mut d: Described, index: usize) -> &'static Described {
    d.index = index;
    d.compiled.leak_defs();
    let proto: &'static str = Box::leak(d.ksy.id.clone().into_boxed_str());
    let mut rules = vec![Rule::new(Box::leak(Box::new(RuleDef {
        name: "valid",
        proto,
        doc: "A field outside its `valid` (eq, min, max, any-of).",
        slot: 0,
    })))];
    if !d.ksy.sem.drops_ipv4_last_byte.is_empty() {
        rules.push(Rule::new(Box::leak(Box::new(RuleDef {
            name: DROPPED_ADDRESS,
            proto,
            doc: "The server sent to a client address it drops (`server: drops:`).",
            slot: rules.len() as u8,
        }))));
    }
    if !d.ksy.sem.server_sends.is_empty() || !d.ksy.sem.client_sends.is_empty() {
        rules.push(Rule::new(Box::leak(Box::new(RuleDef {
            name: WRONG_DIRECTION,
            proto,
            doc: "A message type from the side that does not send it (`server: sends:`, `receives:`).",
            slot: rules.len() as u8,
        }))));
    }
    d.rules = Box::leak(rules.into_boxed_slice());
    Box::leak(Box::new(d))
}

/// The registry entries of the described protocols.
pub fn protocols() -> Vec<super::Protocol> {
    loaded()
        .iter()
        .map(|d| super::Protocol {
            info: d.info(),
            probe: Probe::Mark(Mark {
                offset: d.ksy.sem.magic_offset,
                magic: Box::leak(d.ksy.sem.magic.clone().into_boxed_slice()),
                port: d.ksy.sem.port,
            }),
            recognition: Recognition::EveryDatagram,
            tracker: super::MakeTracker::Described(d),
            // The scripted captures of the shipped example layouts.
            sim: match (d.shipped, d.ksy.id.as_str()) {
                (true, "vessel_fixed") => Some(sim::sim_vessel as super::sim::SimFn),
                (true, "timewarp") => Some(sim::sim_timewarp),
                _ => None,
            },
        })
        .collect()
}

/// The tracker of a described protocol.
pub fn tracker(
    d: &'static Described,
    config: TrackerConfig,
) -> Box<dyn crate::engine::ProtocolTracker> {
    Box::new(crate::engine::Tracker::with_analyzer(
        config,
        analysis::Analyzer::new(d),
    ))
}

const MALFORMED: [&str; 4] = [
    ErrKind::Short.name(),
    ErrKind::Contents.name(),
    ErrKind::Trailing.name(),
    ErrKind::UnknownType.name(),
];

/// A protobuf description's reasons ([`ErrKind::PROTOBUF`]).
const PROTOBUF_MALFORMED: [&str; 7] = [
    ErrKind::TruncatedVarint.name(),
    ErrKind::BadVarint.name(),
    ErrKind::BadKey.name(),
    ErrKind::PastEnd.name(),
    ErrKind::WireType.name(),
    ErrKind::NotUtf8.name(),
    ErrKind::Group.name(),
];

fn leak_info(d: &'static Described) -> &'static ProtocolInfo {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let names: Vec<&'static str> = d
        .type_values
        .iter()
        .map(|v| {
            d.compiled
                .type_enum
                .and_then(|e| d.compiled.enum_name(e, *v))
                .unwrap_or("?")
        })
        .collect();
    let message_types: &'static [&'static str] = if names.is_empty() {
        Box::leak(vec![leak(&d.ksy.id)].into_boxed_slice())
    } else {
        Box::leak(names.into_boxed_slice())
    };
    let rates: Vec<(usize, f64)> = d
        .ksy
        .sem
        .rates
        .iter()
        .filter_map(|(v, hz)| Some((d.type_ordinal(*v)?, *hz)))
        .collect();
    let title = if d.ksy.sem.title.is_empty() {
        &d.ksy.id
    } else {
        &d.ksy.sem.title
    };
    Box::leak(Box::new(ProtocolInfo {
        name: d
            .rules
            .first()
            .map_or_else(|| leak(&d.ksy.id), |r| r.def().proto),
        title: leak(title),
        message_types,
        kinds: &[],
        rules: d.rules,
        malformed: if d.compiled.proto.is_some() {
            &PROTOBUF_MALFORMED
        } else {
            &MALFORMED
        },
        states: &["open", "timed-out"],
        spec_rates: Box::leak(rates.into_boxed_slice()),
        dissector: Box::leak(Box::new(dissect::Dissect(d, decode::Side::Any))),
    }))
}

/// A decode error as a finding's detail.
pub fn decode_detail(d: &Described, e: DecodeErr) -> ProtoDetail {
    decode_error(d.index as u32, e)
}

/// A field breaking its `valid`, as the detail of a finding tells it.
#[derive(Debug, Clone, Copy)]
pub struct Broke {
    pub field: u16,
    pub offset: usize,
    pub value: f64,
    /// The value of the earlier field its `valid` names, if it names one (a
    /// field of at most 4 bytes, `ksy` checks).
    pub bound: Option<i64>,
}

/// A field's `valid` broken, as a finding's detail: the field, its value and
/// offset (and the value of the field its `valid` names).
pub fn valid_detail(d: &Described, b: &Broke) -> ProtoDetail {
    // The bound's 32 bits: a field of at most 4 bytes.
    let bound = b.bound.map_or(0, |v| v as u32);
    broke(d.index as u32, b.field, b.value, b.offset, bound)
}

/// The rule of `server: drops:`.
pub const DROPPED_ADDRESS: &str = "dropped-address";

/// The server's packets to a client address it drops, as a finding's detail:
/// the address, the packets and the last one's frame.
pub fn dropped_detail(client: std::net::Ipv4Addr, run: &crate::engine::RunSpan) -> ProtoDetail {
    dropped(client, run.packets, run.last_frame)
}

/// The rule of `server: sends:` and `receives:`.
pub const WRONG_DIRECTION: &str = "wrong-direction";

/// A side's packets of types the other side sends, as a finding's detail: the
/// first one's type, who sent it, the packets and the last one's frame.
pub fn wrong_direction_detail(
    d: &Described,
    message_type: i64,
    from_server: bool,
    run: &crate::engine::RunSpan,
) -> ProtoDetail {
    let proto = d.index as u32;
    wrong_side(
        proto,
        message_type,
        from_server,
        run.packets,
        run.last_frame,
    )
}

/// A described protocol in a detail's numbers: its index among the loaded.
fn loaded_at(proto: u32) -> Option<&'static Described> {
    LOADED.get()?.get(usize::try_from(proto).ok()?).copied()
}

fn field_name(proto: u32, field: u16) -> &'static str {
    if field == protobuf::UNKNOWN {
        return "(unknown field)";
    }
    loaded_at(proto)
        .and_then(|d| d.compiled.defs.get(usize::from(field)))
        .map_or("?", |def| def.name)
}

/// An address in a finding's numbers.
impl crate::engine::finding::Word for std::net::Ipv4Addr {
    const BITS: u32 = 32;
    fn to_arg(self) -> u64 {
        u64::from(u32::from(self))
    }
    fn from_arg(bits: u64) -> Self {
        std::net::Ipv4Addr::from(bits as u32)
    }
}

crate::proto_details! { "described";
    /// A side's packets of types the other side sends (`value`, of the
    /// protocol `proto`), how many, until which frame.
    fn wrong_side(proto: u32, value: i64, from_server: bool, packets: u32, last_frame: u64) -> ProtoDetail => |f| {
        let name = loaded_at(proto)
            .and_then(|d| d.compiled.enum_name(d.compiled.type_enum?, value))
            .unwrap_or("?");
        let (sender, other) = if from_server {
            ("server", "client")
        } else {
            ("client", "server")
        };
        write!(f, "`{name}` ({value}) from the {sender}: only the {other} sends it")?;
        let packets = u64::from(packets);
        crate::engine::finding::run_until(f, packets, "packets", packets, last_frame)
    };

    /// The server's packets to an address it drops.
    fn dropped(client: std::net::Ipv4Addr, packets: u32, last_frame: u64) -> ProtoDetail => |f| {
        let last = client.octets()[3];
        write!(f, "the server sent to {client}: an address ending in {last}, which it drops")?;
        let packets = u64::from(packets);
        crate::engine::finding::run_until(f, packets, "packets", packets, last_frame)
    };

    /// A decode error of the protocol `proto`.
    fn decode_error(proto: u32, e: DecodeErr) -> ProtoDetail => |f| show_decode(proto, e, f);

    /// A field's `valid` broken: its value, where, and the raw 32 bits of the
    /// field its `valid` names, if it names one.
    fn broke(proto: u32, field: u16, value: f64, offset: usize, bound: u32) -> ProtoDetail => |f| {
        show_valid(proto, field, value, offset, bound, f)
    };
}

fn show_decode(proto: u32, e: DecodeErr, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    use crate::proto::wire_error::{At, Short, Within};
    let name = field_name(proto, e.field);
    let at = At::of(e.offset);
    let short = |what, within| Short {
        what,
        offset: at.0,
        needed: e.need,
        left: e.have as u64,
        within,
    };
    match e.kind {
        ErrKind::Short => write!(
            f,
            "short: {}",
            short(format_args!("field `{name}`"), Within::Datagram)
        ),
        ErrKind::Contents => write!(f, "contents: field `{name}` {at}: not the described magic"),
        ErrKind::Trailing => write!(
            f,
            "trailing-bytes: {} bytes after the layout ends {at}",
            e.have
        ),
        ErrKind::UnknownType => write!(
            f,
            "unknown-type: field `{name}` {at}: {} is not in its enum",
            e.need
        ),
        ErrKind::TruncatedVarint => write!(
            f,
            "truncated-varint: varint cut short {at} ({} bytes left)",
            e.have
        ),
        ErrKind::BadVarint => write!(f, "bad-varint: varint over 10 bytes or 64 bits {at}"),
        ErrKind::BadKey => write!(
            f,
            "bad-key: invalid key {at} (wire type 6 or 7, or field number 0)"
        ),
        ErrKind::PastEnd => write!(
            f,
            "past-end: {}",
            short(format_args!("`{name}`"), Within::Message)
        ),
        ErrKind::WireType => write!(
            f,
            "wire-type: `{name}` {at} sent as {}, its type needs another wire type",
            wire_name(e.need)
        ),
        ErrKind::NotUtf8 => write!(f, "not-utf8: `{name}` {at}: a string that is not UTF-8"),
        ErrKind::Group => write!(f, "group: the group of field {} {at} does not end", e.need),
    }
}

/// A protobuf wire type's name.
fn wire_name(w: u64) -> &'static str {
    match w {
        0 => "varint",
        1 => "64-bit",
        2 => "length-delimited",
        3 => "start-group",
        4 => "end-group",
        5 => "32-bit",
        _ => "invalid",
    }
}

fn show_valid(
    proto: u32,
    field: u16,
    value: f64,
    offset: usize,
    raw: u32,
    f: &mut std::fmt::Formatter<'_>,
) -> std::fmt::Result {
    let name = field_name(proto, field);
    let at = crate::proto::wire_error::At::of(offset);
    let spec = loaded_at(proto).and_then(|d| d.compiled.specs.get(usize::from(field)));
    match spec.and_then(|s| Some((s.valid.as_ref()?, s.bound_signed))) {
        Some((v, signed)) => {
            write!(f, "`{name}` = {value} {at}, not {v}")?;
            if v.bound_field().is_some() {
                // The bound field's value, as it was read (u4 or s4 at most).
                let bound = if signed {
                    i64::from(raw as i32)
                } else {
                    i64::from(raw)
                };
                write!(f, " ({bound})")?;
            }
        }
        None => write!(f, "`{name}` = {value} {at}")?,
    }
    Ok(())
}

/// `protocols/starstrike.ksy`, parsed and leaked.
#[cfg(test)]
fn starstrike_ksy() -> &'static Described {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/protocols/starstrike.ksy"
    ))
    .unwrap();
    leak(parse("s.ksy", &text).unwrap(), usize::MAX)
}

/// A Starstrike snapshot of `n` entities of type 1 (from ten on,
/// two-digit elements).
#[cfg(test)]
fn strs_snapshot(n: u8) -> Vec<u8> {
    let entities: Vec<(u8, u8)> = (0..n).map(|e| (e, 1)).collect();
    strs_snapshot_of(&entities, |f| f32::from(f) * 0.5 - 1.0)
}

/// A Starstrike snapshot of the entities `(id, type)`, each one's ten
/// floats `x(0)` to `x(9)`.
#[cfg(test)]
fn strs_snapshot_of(entities: &[(u8, u8)], x: impl Fn(u8) -> f32) -> Vec<u8> {
    let mut p = b"STRS\x01\x01\x00\x07\x00\x00\x00\x03\x00\x00\x01\x00".to_vec();
    p.push(u8::try_from(entities.len()).unwrap());
    for &(id, ty) in entities {
        p.extend([0, 0, 0, id, ty]);
        for f in 0..10u8 {
            p.extend(x(f).to_be_bytes());
        }
        p.extend([100, 0]);
    }
    p
}

/// A line of a `-V` tree as the tests compare it: `depth label: value
/// start..end`, or `error at N`.
#[cfg(test)]
fn tree_line(t: crate::proto::dissect::TreeRef<'_>) -> String {
    match t {
        crate::proto::dissect::TreeRef::Field {
            label,
            value,
            span,
            depth,
        } => format!("{depth} {label}: {value} {span:?}"),
        crate::proto::dissect::TreeRef::Error { offset, .. } => format!("error at {offset}"),
    }
}

/// A Starstrike chat message whose text needs JSON's escapes, and is not ASCII.
#[cfg(test)]
fn strs_chat() -> Vec<u8> {
    let mut p = b"STRS\x03\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\x02\x01".to_vec();
    p.extend("hé \"there\"\n".as_bytes());
    p.resize(p.len() + 240, 0);
    p
}

/// The bytes of every truncation of `whole`, and of every copy with one byte
/// replaced by 0x00, 0x05 or 0xff: what the fast paths' tests hold to the
/// general walk.
#[cfg(test)]
fn variants(whole: &[u8]) -> Vec<Vec<u8>> {
    let mut inputs: Vec<Vec<u8>> = (0..=whole.len()).map(|n| whole[..n].to_vec()).collect();
    for i in 0..whole.len() {
        for x in [0x00, 0x05, 0xff] {
            let mut p = whole.to_vec();
            p[i] = x;
            inputs.push(p);
        }
    }
    inputs
}
