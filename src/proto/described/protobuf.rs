//! Protocols described by a `.proto`: a description file (YAML) names the
//! `.proto`, the message each direction carries and the same analysis keys
//! as a `.ksy` description's `-lwarscope:`; the guide is `docs/protobuf.md`.
//!
//! ```yaml
//! meta: {id: vessel_pb}
//! protobuf:
//!   file: vessel.proto                      # beside this file
//!   client: protobuf.vesselToEnvironment    # or `message:` for both
//!   server: protobuf.environmentToVessel
//! fields:
//!   shipInput.throttleLeftEngine: {valid: {min: 0, max: 1}}
//! -lwarscope:
//!   recognise: {port: 39461}
//!   sequence: {field: syncNumber, bits: 8, recency: {ahead: 128}}
//! ```
//!
//! The `.proto` is compiled in the process by `protox` (no `protoc`), and
//! its descriptors (`prost-reflect`) are compiled once into a table of
//! messages ([`Schema`]): each message as it is used at each path, its
//! fields sorted by number, each with its registered field
//! (`vessel_pb.shipInput.throttleLeftEngine`: the description's id, then
//! the field names from the message a direction carries; both directions'
//! messages share the names, a name with two types is refused).
//!
//! **The walk** ([`Schema::walk`]) reads the wire with `prost::encoding`'s
//! `decode_varint` and `WireType` guided by the table (a varint is checked
//! first, and unknown fields are skipped as prost's `skip_field` skips them,
//! without prost's errors, which are boxed: a malformed packet allocates
//! nothing either), and hands every field to the same [`Events`] sink as the
//! `.ksy` decoder, so the analysis, the dissector and the filter are the
//! described protocols' own. It allocates nothing and cannot panic: every
//! read is bounds-checked, nesting is bounded by the table (recursive
//! messages are refused when compiled), and the counts are fixed arrays.
//!
//! **Malformed** is what no proto3 decoder accepts: a truncated varint (a
//! key, a length, a value), one over 10 bytes or 64 bits, a key with wire
//! type 6 or 7 or field number 0, a length or a fixed value past the end of
//! the datagram or of its enclosing message, a known field sent with a wire
//! type its type contradicts (a repeated number may come packed), a
//! `string` that is not UTF-8, a group of an unknown field that does not
//! end; with the byte offset. Unknown fields are skipped. Absent fields read
//! as their proto3 defaults (0, false, "", the enum's first value) with an
//! empty span at the end of their message: fields with explicit presence
//! (`optional`, members of a `oneof`) and absent messages are not read. A
//! scalar sent twice is read twice (the keys take the first).

use super::decode::{Compiled, DecodeErr, ErrKind, Events, Messages, Side};
use super::ksy::{self, Attr, EnumDef, Kind as KKind, Ksy, KsyError, Repeat, TypeDef, Valid};
use super::yaml::{self, Node, Pos};
use crate::proto::field::{Field, FieldType, Value};
use prost::encoding::{WireType, decode_varint};
use prost_reflect::{Cardinality, FieldDescriptor, Kind, MessageDescriptor};
use std::collections::HashMap;

/// Messages nested inside one another, at most.
pub const MAX_DEPTH: usize = 16;
/// Fields of one message, at most (their presence is kept in a fixed set).
pub const MAX_FIELDS: usize = 256;
/// Repeated fields of one message, at most (their element counts are kept
/// in a fixed array, zeroed for each message walked).
pub const MAX_REPEATED: usize = 64;
/// `.proto` files one description may bring in (its imports included).
pub const MAX_PROTO_FILES: usize = 64;

/// A field's protobuf type, as the walk reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PType {
    Int32,
    Int64,
    UInt32,
    UInt64,
    SInt32,
    SInt64,
    Bool,
    /// Its index in [`super::decode::Compiled::enums`].
    Enum(usize),
    Fixed32,
    SFixed32,
    Float,
    Fixed64,
    SFixed64,
    Double,
    String,
    Bytes,
    /// A message instance, by index in [`Schema::msgs`].
    Message(usize),
}

impl PType {
    fn wire(self) -> WireType {
        match self {
            PType::Int32
            | PType::Int64
            | PType::UInt32
            | PType::UInt64
            | PType::SInt32
            | PType::SInt64
            | PType::Bool
            | PType::Enum(_) => WireType::Varint,
            PType::Fixed32 | PType::SFixed32 | PType::Float => WireType::ThirtyTwoBit,
            PType::Fixed64 | PType::SFixed64 | PType::Double => WireType::SixtyFourBit,
            PType::String | PType::Bytes | PType::Message(_) => WireType::LengthDelimited,
        }
    }

    /// Whether a repeated field of this type may come packed.
    fn packable(self) -> bool {
        self.wire() != WireType::LengthDelimited
    }

    fn name(self) -> &'static str {
        match self {
            PType::Int32 => "int32",
            PType::Int64 => "int64",
            PType::UInt32 => "uint32",
            PType::UInt64 => "uint64",
            PType::SInt32 => "sint32",
            PType::SInt64 => "sint64",
            PType::Bool => "bool",
            PType::Enum(_) => "enum",
            PType::Fixed32 => "fixed32",
            PType::SFixed32 => "sfixed32",
            PType::Float => "float",
            PType::Fixed64 => "fixed64",
            PType::SFixed64 => "sfixed64",
            PType::Double => "double",
            PType::String => "string",
            PType::Bytes => "bytes",
            PType::Message(_) => "message",
        }
    }

    fn field_type(self) -> FieldType {
        match self {
            PType::Int32 | PType::Int64 | PType::SInt32 | PType::SInt64 | PType::SFixed32 => {
                FieldType::Signed
            }
            PType::SFixed64 => FieldType::Signed,
            PType::UInt32 | PType::UInt64 | PType::Fixed32 | PType::Fixed64 => FieldType::Unsigned,
            PType::Bool => FieldType::Bool,
            PType::Enum(_) => FieldType::Enum,
            PType::Float | PType::Double => FieldType::Float,
            PType::String => FieldType::Text,
            PType::Bytes => FieldType::Bytes,
            PType::Message(_) => FieldType::Node,
        }
    }

    /// An integer a key may name: its width in bytes and its sign.
    fn key(self) -> Option<(u8, bool)> {
        match self {
            PType::Int32 | PType::SInt32 | PType::SFixed32 | PType::Enum(_) => Some((4, true)),
            PType::UInt32 | PType::Fixed32 => Some((4, false)),
            PType::Bool => Some((1, false)),
            PType::Int64 | PType::SInt64 | PType::SFixed64 => Some((8, true)),
            PType::UInt64 | PType::Fixed64 => Some((8, false)),
            _ => None,
        }
    }
}

/// A field of a message instance.
#[derive(Debug, Clone, Copy)]
pub struct PField {
    pub number: u32,
    pub ty: PType,
    /// Its registered field (index in the defs).
    pub def: u16,
    pub repeated: bool,
    /// Absent, it is not read (`optional`, a `oneof` member).
    pub presence: bool,
    /// A repeated field's place among its message's repeated fields (its
    /// element count's).
    pub slot: u8,
}

/// A message as used at one path: its fields, sorted by number.
#[derive(Debug, Default)]
pub struct Msg {
    pub fields: Vec<PField>,
}

impl Msg {
    fn find(&self, number: u32) -> Option<(usize, &PField)> {
        let i = self
            .fields
            .binary_search_by_key(&number, |f| f.number)
            .ok()?;
        Some((i, self.fields.get(i)?))
    }

    /// Whether a field of this number may come with this wire type.
    fn accepts(&self, number: u32, wire: WireType) -> bool {
        self.find(number).is_some_and(|(_, f)| {
            f.ty.wire() == wire
                || (f.repeated && f.ty.packable() && wire == WireType::LengthDelimited)
        })
    }
}

/// A compiled `.proto` and the messages the directions carry.
#[derive(Debug)]
pub struct Schema {
    pub msgs: Vec<Msg>,
    /// The client's and the server's message (the same one, or two).
    pub roots: [usize; 2],
    /// With two messages: the registered field telling which (`ID.message`,
    /// an enum whose values are 0, the client's, and 1, the server's).
    pub message_field: Option<u16>,
    /// The message names (client, server), for the tree.
    pub names: [String; 2],
}

/// The bytes of a `.proto` a description names (and its imports), by the
/// name it is imported by: `None` when there is no such file.
pub type Resolve = Box<dyn Fn(&str) -> Option<Result<String, String>>>;

type R<T> = Result<T, (Pos, String)>;

/// A `.proto` error, as file:line:column and what.
fn proto_error(e: &protox::Error, texts: &HashMap<String, String>, file: &str) -> KsyError {
    use miette::Diagnostic as _;
    let name = e.file().unwrap_or(file).to_owned();
    let offset = e
        .labels()
        .and_then(|mut l| l.next())
        .map(|l| l.offset())
        .unwrap_or(0);
    let (line, col) = texts.get(&name).map_or((1, 1), |t| line_col(t, offset));
    let mut msg = e.to_string();
    if let Some(help) = e.help() {
        msg = format!("{msg} ({help})");
    }
    KsyError {
        file: name,
        line,
        col,
        msg: ksy::shown(&msg),
    }
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Where a descriptor is declared in its `.proto` (source info), if known.
fn decl_pos(file: &prost_types::FileDescriptorProto, path: &[i32]) -> Option<(usize, usize)> {
    let info = file.source_code_info.as_ref()?;
    let loc = info.location.iter().find(|l| l.path == path)?;
    let line = usize::try_from(*loc.span.first()?).ok()? + 1;
    let col = usize::try_from(*loc.span.get(1)?).ok()? + 1;
    Some((line, col))
}

/// Resolves `.proto` files for protox from [`Resolve`], keeping their text
/// (errors are then placed by line and column).
struct Files {
    resolve: Resolve,
    texts: std::rc::Rc<std::cell::RefCell<HashMap<String, String>>>,
    /// The well-known types (`google/protobuf/*.proto`), built in.
    google: protox::file::GoogleFileResolver,
}

impl protox::file::FileResolver for Files {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name.starts_with("google/protobuf/")
            && let Ok(f) = self.google.open_file(name)
        {
            return Ok(f);
        }
        if self.texts.borrow().len() >= MAX_PROTO_FILES {
            return Err(protox::Error::new(format!(
                "more than {MAX_PROTO_FILES} .proto files: not a description"
            )));
        }
        match (self.resolve)(name) {
            None => Err(protox::Error::file_not_found(name)),
            Some(Err(e)) => Err(protox::Error::new(format!("{name}: {e}"))),
            Some(Ok(text)) => {
                self.texts
                    .borrow_mut()
                    .insert(name.to_owned(), text.clone());
                protox::file::File::from_source(name, &text)
            }
        }
    }
}

/// Reads a protobuf description. `file` names it in errors; `resolve` gives
/// the `.proto` files it names (relative to it).
pub fn parse(file: &str, text: &str, resolve: Resolve) -> Result<super::Described, KsyError> {
    let at = |pos: Pos, msg: String| located(file, pos, msg);
    let root = yaml::parse(text).map_err(|e| at(e.pos, e.msg))?;
    parse_root(file, &root, resolve)
}

/// [`parse`] of a YAML tree already read from `file`.
pub fn parse_root(file: &str, root: &Node, resolve: Resolve) -> Result<super::Described, KsyError> {
    let at = |pos: Pos, msg: String| located(file, pos, msg);
    let desc = read(root).map_err(|(p, m)| at(p, m))?;
    // The `.proto`, compiled.
    let pool = compile_proto(file, &desc, resolve)?;
    let message = |m: &(String, Pos)| find_message(file, &pool, &desc, m);
    let client = message(&desc.client)?;
    let server = message(&desc.server)?;
    let two = client.full_name() != server.full_name();
    let (mut c, message_field) = Compiler::for_packet(&desc, &client, &server, two);
    let mut stack = Vec::new();
    let placed = |e: ProtoErr| KsyError {
        file: beside(file, &e.file),
        line: e.pos.0,
        col: e.pos.1,
        msg: e.msg,
    };
    let r0 = c.message(&client, "", &mut stack).map_err(placed)?;
    let r1 = if two {
        c.message(&server, "", &mut stack).map_err(placed)?
    } else {
        r0
    };
    c.field_checks(file, &desc)?;
    let (types, sem) = keys(file, &desc, &c, [&client, &server], two)?;
    let type_enum = sem
        .message_type
        .and_then(|i| c.keys.get(i))
        .and_then(|a| a.enum_);
    let names = [client.name().to_owned(), server.name().to_owned()];
    let (compiled, enums) = c.compiled(type_enum, [r0, r1], message_field, names);
    let k = Ksy {
        id: desc.id,
        types,
        enums,
        sem,
        doc: desc.doc,
    };
    super::Described::with_compiled(file, k, compiled)
}

/// An error at `pos` of the description `file`.
fn located(file: &str, pos: Pos, msg: String) -> KsyError {
    KsyError {
        file: file.to_owned(),
        line: pos.line,
        col: pos.col,
        msg,
    }
}

/// A `.proto` named in errors by its path beside the description `file`.
fn beside(file: &str, name: &str) -> String {
    let dir = std::path::Path::new(file)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    dir.join(name).display().to_string()
}

/// The description's `.proto` compiled (by `protox`, the files it imports
/// from `resolve`): its descriptors, or where it is wrong.
fn compile_proto(
    file: &str,
    desc: &Desc,
    resolve: Resolve,
) -> Result<prost_reflect::DescriptorPool, KsyError> {
    let texts = std::rc::Rc::new(std::cell::RefCell::new(HashMap::new()));
    let files = Files {
        resolve,
        texts: texts.clone(),
        google: protox::file::GoogleFileResolver::new(),
    };
    let mut compiler = protox::Compiler::with_file_resolver(files);
    compiler.include_source_info(true);
    if let Err(e) = compiler.open_file(&desc.proto) {
        let texts = texts.borrow();
        if e.is_file_not_found() && !texts.contains_key(&desc.proto) {
            // The file itself is missing: the description's line says so.
            return Err(located(
                file,
                desc.proto_pos,
                format!(
                    "`{}`: no such file (the .proto is read from beside the description: {})",
                    desc.proto,
                    beside(file, &desc.proto)
                ),
            ));
        }
        let mut err = proto_error(&e, &texts, &desc.proto);
        if texts.contains_key(&err.file) {
            err.file = beside(file, &err.file);
        }
        return Err(err);
    }
    Ok(compiler.descriptor_pool())
}

/// The message the description names at `pos`: by its full name, or by a
/// name only one message has.
fn find_message(
    file: &str,
    pool: &prost_reflect::DescriptorPool,
    desc: &Desc,
    (name, pos): &(String, Pos),
) -> Result<MessageDescriptor, KsyError> {
    pool.get_message_by_name(name)
        .or_else(|| {
            let mut short = pool
                .all_messages()
                .filter(|m| m.name() == name || m.full_name().ends_with(&format!(".{name}")));
            let one = short.next()?;
            short.next().is_none().then_some(one)
        })
        .ok_or_else(|| {
            located(
                file,
                *pos,
                format!(
                    "no message `{name}` in {} (name it with its package: `pkg.Message`)",
                    desc.proto
                ),
            )
        })
}

/// The keys (`-lwarscope:`), read against the fields they may name: the
/// packet's type and its semantics. With two messages, the message type is
/// which one (`message`) unless the keys name another.
fn keys(
    file: &str,
    desc: &Desc,
    c: &Compiler,
    [client, server]: [&MessageDescriptor; 2],
    two: bool,
) -> Result<(Vec<TypeDef>, ksy::Semantics), KsyError> {
    let types = vec![TypeDef {
        name: desc.id.clone(),
        attrs: c.keys.clone(),
    }];
    let what = if two {
        format!(
            "an integer, bool or enum field of `{}` or `{}` (by its path: `header.seq`), not repeated, or `message`",
            client.name(),
            server.name()
        )
    } else {
        format!(
            "an integer, bool or enum field of `{}` (by its path: `header.seq`), not repeated",
            client.name()
        )
    };
    let mut keys_node = desc.lwarscope.clone();
    if two
        && let yaml::Value::Map(m) = &mut keys_node.value
        && !m.iter().any(|(k, _, _)| k == "message-type")
    {
        let pos = keys_node.pos;
        m.push((
            "message-type".to_owned(),
            pos,
            Node {
                pos,
                value: yaml::Value::Scalar {
                    text: "message".to_owned(),
                    quoted: false,
                },
            },
        ));
    }
    let mut sem = ksy::semantics_of(&keys_node, &types[0], c.enums.clone(), &what)
        .map_err(|(p, m)| located(file, p, m))?;
    // Nothing is trailing in a protobuf message.
    sem.trailing_malformed = false;
    if sem.title.is_empty() {
        sem.title = desc.title.clone();
    }
    Ok((types, sem))
}

impl Compiler {
    /// The compiler of a packet: its node, and with two messages the
    /// `message` field that says which one it holds (its field number).
    fn for_packet(
        desc: &Desc,
        client: &MessageDescriptor,
        server: &MessageDescriptor,
        two: bool,
    ) -> (Self, Option<u16>) {
        let mut c = Compiler {
            id: desc.id.clone(),
            specs: Vec::new(),
            names: HashMap::new(),
            msgs: Vec::new(),
            enums: Vec::new(),
            enum_index: HashMap::new(),
            keys: Vec::new(),
            proto: desc.proto.clone(),
        };
        c.specs.push(spec(
            &desc.id,
            &desc.id,
            FieldType::Node,
            "The packet".into(),
        ));
        let message_field = if two {
            c.enums.push(EnumDef {
                name: "message".into(),
                values: vec![(0, client.name().into()), (1, server.name().into())],
            });
            c.specs.push(DefSpecLite {
                enum_: Some(0),
                ..spec(
                    &format!("{}.message", desc.id),
                    "message",
                    FieldType::Enum,
                    "The message the packet holds: the client's (0) or the server's (1), by its direction".into(),
                )
            });
            c.keys.push(key_attr("message", 1, false, Some(0)));
            Some(1u16)
        } else {
            None
        };
        (c, message_field)
    }

    /// The field checks of `fields:`: each names a registered number field.
    fn field_checks(&mut self, file: &str, desc: &Desc) -> Result<(), KsyError> {
        for (path, pos, valid) in &desc.valid {
            let name = format!("{}.{path}", desc.id);
            let Some(&i) = self.names.get(&name) else {
                return Err(located(
                    file,
                    *pos,
                    format!("`{path}` is not a field of the messages (`{name}` is not registered)"),
                ));
            };
            let s = &mut self.specs[usize::from(i)];
            if !matches!(
                s.ty,
                FieldType::Signed
                    | FieldType::Unsigned
                    | FieldType::Float
                    | FieldType::Enum
                    | FieldType::Bool
            ) {
                return Err(located(
                    file,
                    *pos,
                    format!("`{path}`: `valid` checks numbers only"),
                ));
            }
            s.valid = Some(valid.clone());
        }
        if desc.valid.len() > ksy::MAX_VALID_FIELDS {
            let pos = desc.valid[ksy::MAX_VALID_FIELDS].1;
            return Err(located(
                file,
                pos,
                format!("more than {} fields with `valid`", ksy::MAX_VALID_FIELDS),
            ));
        }
        Ok(())
    }

    /// The compiled layout: the registered fields, the keys as the root's
    /// attributes, and the schema the walk follows (`roots`: the client's
    /// and the server's message); with the enums, for the description.
    fn compiled(
        self,
        type_enum: Option<usize>,
        roots: [usize; 2],
        message_field: Option<u16>,
        names: [String; 2],
    ) -> (super::decode::Compiled, Vec<EnumDef>) {
        let specs: Vec<super::decode::DefSpec> = self
            .specs
            .iter()
            .map(|s| super::decode::DefSpec {
                name: s.name.clone(),
                label: s.label.clone(),
                ty: s.ty,
                doc: s.doc.clone(),
                valid: s.valid.clone(),
                bound_signed: false,
                enum_: s.enum_,
            })
            .collect();
        let root_attrs = self
            .keys
            .iter()
            .map(|a| super::decode::CAttr {
                attr: a.clone(),
                field: self
                    .names
                    .get(&format!("{}.{}", self.id, a.id))
                    .copied()
                    .unwrap_or(1),
                kind: match a.kind {
                    KKind::Int { bytes, signed, le } => {
                        super::decode::CKind::Int { bytes, signed, le }
                    }
                    _ => super::decode::CKind::Bytes,
                },
                // Never walked: a protobuf message's walk is its own.
                checked: false,
                quiet_run: None,
                unjudged_run: None,
                slot: None,
                enum_: None,
                valid: None,
            })
            .collect();
        let compiled = super::decode::Compiled {
            root: super::decode::CType {
                attrs: root_attrs,
                fixed: None,
                unjudged: None,
                plain: false,
                kept: 0,
            },
            specs,
            defs: &[],
            line_labels: &[],
            strict_enum: None,
            type_enum,
            trailing_malformed: false,
            enums: self.enums.clone(),
            proto: Some(Box::new(Schema {
                msgs: self.msgs,
                roots,
                message_field,
                names,
            })),
            prefix: Vec::new(),
        };
        (compiled, self.enums)
    }
}

/// A registered field before it is leaked.
#[derive(Debug, Clone)]
struct DefSpecLite {
    name: String,
    label: String,
    ty: FieldType,
    doc: String,
    valid: Option<Valid>,
    enum_: Option<usize>,
}

fn spec(name: &str, label: &str, ty: FieldType, doc: String) -> DefSpecLite {
    DefSpecLite {
        name: name.to_owned(),
        label: label.to_owned(),
        ty,
        doc,
        valid: None,
        enum_: None,
    }
}

fn key_attr(path: &str, bytes: u8, signed: bool, enum_: Option<usize>) -> Attr {
    Attr {
        id: path.to_owned(),
        pos: Pos { line: 1, col: 1 },
        kind: KKind::Int {
            bytes,
            signed,
            le: false,
        },
        size: None,
        repeat: Repeat::None,
        cond: None,
        valid: None,
        enum_,
        doc: String::new(),
    }
}

/// A compile error in the `.proto` (a recursive message, too many fields):
/// its file, line and column there.
struct ProtoErr {
    file: String,
    pos: (usize, usize),
    msg: String,
}

struct Compiler {
    id: String,
    specs: Vec<DefSpecLite>,
    names: HashMap<String, u16>,
    msgs: Vec<Msg>,
    enums: Vec<EnumDef>,
    enum_index: HashMap<String, usize>,
    /// The fields the keys may name (integers, not repeated), by path.
    keys: Vec<Attr>,
    proto: String,
}

impl Compiler {
    fn fail(&self, f: &FieldDescriptor, msg: String) -> ProtoErr {
        let file = f.parent_file();
        let pos = decl_pos(file.file_descriptor_proto(), f.path()).unwrap_or((1, 1));
        let name = file.name().to_owned();
        ProtoErr {
            file: if name.is_empty() {
                self.proto.clone()
            } else {
                name
            },
            pos,
            msg,
        }
    }

    fn ptype(&mut self, f: &FieldDescriptor) -> Result<PType, ProtoErr> {
        Ok(match f.kind() {
            Kind::Int32 => PType::Int32,
            Kind::Int64 => PType::Int64,
            Kind::Uint32 => PType::UInt32,
            Kind::Uint64 => PType::UInt64,
            Kind::Sint32 => PType::SInt32,
            Kind::Sint64 => PType::SInt64,
            Kind::Bool => PType::Bool,
            Kind::Fixed32 => PType::Fixed32,
            Kind::Sfixed32 => PType::SFixed32,
            Kind::Float => PType::Float,
            Kind::Fixed64 => PType::Fixed64,
            Kind::Sfixed64 => PType::SFixed64,
            Kind::Double => PType::Double,
            Kind::String => PType::String,
            Kind::Bytes => PType::Bytes,
            Kind::Enum(e) => {
                let i = match self.enum_index.get(e.full_name()) {
                    Some(&i) => i,
                    None => {
                        self.enums.push(EnumDef {
                            name: e.name().to_owned(),
                            values: e
                                .values()
                                .map(|v| (i64::from(v.number()), v.name().to_owned()))
                                .collect(),
                        });
                        self.enum_index
                            .insert(e.full_name().to_owned(), self.enums.len() - 1);
                        self.enums.len() - 1
                    }
                };
                PType::Enum(i)
            }
            Kind::Message(_) if f.is_group() => {
                return Err(self.fail(f, format!("field `{}`: groups are not supported", f.name())));
            }
            Kind::Message(_) => PType::Message(usize::MAX),
        })
    }

    /// Compiles `m` as used at `path`: its index in `msgs`.
    fn message(
        &mut self,
        m: &MessageDescriptor,
        path: &str,
        stack: &mut Vec<String>,
    ) -> Result<usize, ProtoErr> {
        let index = self.msgs.len();
        self.msgs.push(Msg::default());
        stack.push(m.full_name().to_owned());
        let mut fields = Vec::new();
        for f in m.fields() {
            if fields.len() >= MAX_FIELDS {
                return Err(self.fail(
                    &f,
                    format!("message `{}` has more than {MAX_FIELDS} fields", m.name()),
                ));
            }
            let p = if path.is_empty() {
                f.name().to_owned()
            } else {
                format!("{path}.{}", f.name())
            };
            let mut ty = self.ptype(&f)?;
            let repeated = f.cardinality() == Cardinality::Repeated;
            if f.is_map() {
                return Err(self.fail(&f, format!("field `{}`: maps are not supported", f.name())));
            }
            let def = self.def(&p, &f, ty)?;
            if let (PType::Message(_), Kind::Message(inner)) = (ty, f.kind()) {
                if stack.iter().any(|s| s == inner.full_name()) {
                    return Err(self.fail(
                        &f,
                        format!(
                            "`{}.{p}`: message `{}` contains itself: recursive messages are not supported",
                            self.id,
                            inner.full_name()
                        ),
                    ));
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(self.fail(
                        &f,
                        format!(
                            "`{}.{p}`: messages nested more than {MAX_DEPTH} deep",
                            self.id
                        ),
                    ));
                }
                ty = PType::Message(self.message(&inner, &p, stack)?);
            }
            if !repeated && let Some((bytes, signed)) = ty.key() {
                let enum_ = match ty {
                    PType::Enum(e) => Some(e),
                    _ => None,
                };
                if !self.keys.iter().any(|a| a.id == p) {
                    self.keys.push(key_attr(&p, bytes, signed, enum_));
                }
            }
            let slot = fields.iter().filter(|f: &&PField| f.repeated).count();
            if repeated && slot >= MAX_REPEATED {
                return Err(self.fail(
                    &f,
                    format!(
                        "message `{}` has more than {MAX_REPEATED} repeated fields",
                        m.name()
                    ),
                ));
            }
            fields.push(PField {
                number: f.number(),
                ty,
                def,
                repeated,
                presence: !repeated && f.supports_presence(),
                slot: slot as u8,
            });
        }
        stack.pop();
        fields.sort_by_key(|f| f.number);
        if let Some(m) = self.msgs.get_mut(index) {
            m.fields = fields;
        }
        Ok(index)
    }

    fn def(&mut self, path: &str, f: &FieldDescriptor, ty: PType) -> Result<u16, ProtoErr> {
        let name = format!("{}.{path}", self.id);
        let fty = ty.field_type();
        let place = format!("{} in {}", f.number(), f.parent_message().name());
        if let Some(&i) = self.names.get(&name) {
            // The same name in the other message: its number there too.
            let doc = &mut self.specs[usize::from(i)].doc;
            if !doc.contains(&place) {
                doc.push_str(", ");
                doc.push_str(&place);
            }
            if self.specs[usize::from(i)].ty != fty {
                return Err(self.fail(
                    f,
                    format!(
                        "`{name}` is a {} here and of another type in the other message: both directions' messages share the names",
                        ty.name()
                    ),
                ));
            }
            return Ok(i);
        }
        if self.specs.len() >= super::decode::MAX_UNFOLDED {
            return Err(self.fail(
                f,
                format!(
                    "`{name}`: the messages unfold into more than {} fields",
                    super::decode::MAX_UNFOLDED
                ),
            ));
        }
        let enum_ = match ty {
            PType::Enum(e) => Some(e),
            _ => None,
        };
        let repeated = if f.is_list() { "repeated " } else { "" };
        let doc = format!(
            "{repeated}{} {}: field {place}",
            match f.kind() {
                Kind::Message(m) => m.name().to_owned(),
                Kind::Enum(e) => e.name().to_owned(),
                _ => ty.name().to_owned(),
            },
            f.name(),
        );
        self.names.insert(name.clone(), self.specs.len() as u16);
        self.specs.push(DefSpecLite {
            enum_,
            ..spec(&name, f.name(), fty, doc)
        });
        Ok((self.specs.len() - 1) as u16)
    }
}

/// The description file, read.
struct Desc {
    id: String,
    title: String,
    doc: String,
    proto: String,
    proto_pos: Pos,
    client: (String, Pos),
    server: (String, Pos),
    valid: Vec<(String, Pos, Valid)>,
    lwarscope: Node,
}

/// Whether a YAML document is a protobuf description (it has `protobuf:`).
pub fn is_protobuf(text: &str) -> bool {
    yaml::parse(text).is_ok_and(|n| is_protobuf_root(&n))
}

/// [`is_protobuf`] of a YAML tree already read.
pub fn is_protobuf_root(root: &Node) -> bool {
    root.as_map()
        .is_some_and(|m| m.iter().any(|(k, _, _)| k == "protobuf"))
}

fn read(root: &Node) -> R<Desc> {
    let start = Pos { line: 1, col: 1 };
    let top = ksy::map(root, "a description")?;
    ksy::only_keys(
        top,
        &["meta", "protobuf", "fields", "-lwarscope"],
        "a protobuf description",
    )?;
    let meta = ksy::get(top, "meta").ok_or((
        start,
        "no `meta:`: a description starts with `meta: {id: NAME}`".to_owned(),
    ))?;
    let mm = ksy::map(meta, "`meta`")?;
    ksy::only_keys(mm, &["id", "title"], "`meta`")?;
    let id = match ksy::get(mm, "id") {
        Some(n) => ksy::ident(n, "`meta.id`")?,
        None => return Err((meta.pos, "`meta` has no `id`: it names the protocol".into())),
    };
    let title = match ksy::get(mm, "title") {
        Some(t) => ksy::shown(ksy::scalar(t, "`title`")?),
        None => String::new(),
    };
    let pb = ksy::get(top, "protobuf").ok_or((start, "no `protobuf:`".to_owned()))?;
    let pm = ksy::map(pb, "`protobuf`")?;
    ksy::only_keys(pm, &["file", "message", "client", "server"], "`protobuf`")?;
    let file = ksy::get(pm, "file").ok_or((
        pb.pos,
        "`protobuf` needs `file:` (the .proto, relative to this file)".to_owned(),
    ))?;
    let proto = ksy::scalar(file, "`file`")?.trim().to_owned();
    if proto.is_empty() {
        return Err((file.pos, "`file` is empty".into()));
    }
    let name = |n: &Node, what: &str| -> R<(String, Pos)> {
        Ok((ksy::scalar(n, what)?.trim().to_owned(), n.pos))
    };
    let (client, server) = match (
        ksy::get(pm, "message"),
        ksy::get(pm, "client"),
        ksy::get(pm, "server"),
    ) {
        (Some(m), None, None) => {
            let m = name(m, "`message`")?;
            (m.clone(), m)
        }
        (None, Some(c), Some(s)) => (name(c, "`client`")?, name(s, "`server`")?),
        _ => {
            return Err((
                pb.pos,
                "`protobuf` takes `message:` (both directions) or `client:` and `server:` (the message each sends)"
                    .into(),
            ));
        }
    };
    let mut valid = Vec::new();
    if let Some(f) = ksy::get(top, "fields") {
        for (path, pos, n) in ksy::map(f, "`fields`")? {
            let m = ksy::map(n, "a field's checks")?;
            ksy::only_keys(m, &["valid"], "a field's checks")?;
            if let Some(v) = ksy::get(m, "valid") {
                valid.push((path.clone(), *pos, ksy::valid_of(v)?));
            }
        }
    }
    let lwarscope = top
        .iter()
        .find(|(k, _, _)| k == "-lwarscope")
        .map(|(_, _, n)| n.clone())
        .ok_or((
            start,
            "no `-lwarscope:` key: say how to recognise the protocol (at least `recognise: {port: N}`)"
                .to_owned(),
        ))?;
    Ok(Desc {
        id,
        title,
        doc: ksy::doc(top)?,
        proto,
        proto_pos: file.pos,
        client,
        server,
        valid,
        lwarscope,
    })
}

// ---------------------------------------------------------------------------
// The walk.

/// The error of a walk: the registered field (0 when unknown), where, and
/// for `PastEnd` the bytes needed and left, for `WireType` the wire type sent.
fn perr(kind: ErrKind, field: u16, offset: usize, need: u64, have: usize) -> DecodeErr {
    DecodeErr {
        kind,
        field,
        offset,
        need,
        have,
    }
}

/// The field number of an unknown field, as a decode error's field.
pub const UNKNOWN: u16 = u16::MAX;

/// The length of the varint at the start of `b`, or why there is none:
/// checked before prost's `decode_varint` is called (its error is boxed: a
/// malformed packet would allocate), which then accepts exactly these.
fn varint_len(b: &[u8]) -> Result<usize, ErrKind> {
    for (i, x) in b.iter().take(10).enumerate() {
        if x & 0x80 == 0 {
            // The tenth byte holds the 64th bit alone.
            return if i == 9 && *x > 1 {
                Err(ErrKind::BadVarint)
            } else {
                Ok(i + 1)
            };
        }
    }
    if b.len() < 10 {
        Err(ErrKind::TruncatedVarint)
    } else {
        Err(ErrKind::BadVarint)
    }
}

/// A varint at `p[*pos..end]`, by prost's `decode_varint`.
fn varint(p: &[u8], pos: &mut usize, end: usize, field: u16) -> Result<u64, DecodeErr> {
    let at = *pos;
    let rest = p.get(at..end).unwrap_or(&[]);
    let fail = |kind| perr(kind, field, at, 0, end.saturating_sub(at));
    let n = varint_len(rest).map_err(fail)?;
    let mut buf = rest;
    let v = decode_varint(&mut buf).map_err(|_| fail(ErrKind::BadVarint))?;
    *pos = at + n;
    Ok(v)
}

/// A key at `p[*pos..end]`: its field number, and its wire type.
fn read_key(p: &[u8], pos: &mut usize, end: usize) -> Result<(u32, WireType), DecodeErr> {
    let key_at = *pos;
    let key = varint(p, pos, end, UNKNOWN)?;
    let bad = || perr(ErrKind::BadKey, UNKNOWN, key_at, 0, end - key_at);
    if key > u64::from(u32::MAX) || key >> 3 == 0 {
        return Err(bad());
    }
    // By hand: prost's `WireType::try_from` boxes its error.
    let wire = match key & 7 {
        0 => WireType::Varint,
        1 => WireType::SixtyFourBit,
        2 => WireType::LengthDelimited,
        3 => WireType::StartGroup,
        4 => WireType::EndGroup,
        5 => WireType::ThirtyTwoBit,
        _ => return Err(bad()),
    };
    Ok(((key >> 3) as u32, wire))
}

/// Unknown groups nested in one another, at most (prost's recursion limit).
const MAX_GROUPS: usize = 100;

/// Skips the value of an unknown field (its key at `key_at`), as prost's
/// `skip_field` does, or tells why not (without allocating: prost's error
/// would be boxed).
fn skip_value(
    p: &[u8],
    wire: WireType,
    tag: u32,
    pos: &mut usize,
    end: usize,
    key_at: usize,
) -> Result<(), DecodeErr> {
    let fixed = |pos: &mut usize, n: usize| {
        if end - *pos < n {
            return Err(perr(ErrKind::PastEnd, UNKNOWN, *pos, n as u64, end - *pos));
        }
        *pos += n;
        Ok(())
    };
    match wire {
        WireType::Varint => varint(p, pos, end, UNKNOWN).map(|_| ()),
        WireType::SixtyFourBit => fixed(pos, 8),
        WireType::ThirtyTwoBit => fixed(pos, 4),
        WireType::LengthDelimited => {
            let len_at = *pos;
            let len = varint(p, pos, end, UNKNOWN)?;
            if len > (end - *pos) as u64 {
                return Err(perr(ErrKind::PastEnd, UNKNOWN, len_at, len, end - *pos));
            }
            *pos += len as usize;
            Ok(())
        }
        WireType::StartGroup => {
            // The open groups' field numbers: each must end with its own.
            let mut open = [0u32; MAX_GROUPS];
            open[0] = tag;
            let mut depth = 1;
            let group = |at: usize| perr(ErrKind::Group, UNKNOWN, at, u64::from(tag), end - at);
            while depth > 0 {
                if *pos >= end {
                    return Err(group(key_at));
                }
                let at = *pos;
                let (t, w) = read_key(p, pos, end)?;
                match w {
                    WireType::EndGroup => {
                        if open.get(depth - 1) != Some(&t) {
                            return Err(group(at));
                        }
                        depth -= 1;
                    }
                    WireType::StartGroup => {
                        if depth >= MAX_GROUPS {
                            return Err(group(at));
                        }
                        open[depth] = t;
                        depth += 1;
                    }
                    w => skip_value(p, w, t, pos, end, at)?,
                }
            }
            Ok(())
        }
        // An end without its start.
        WireType::EndGroup => Err(perr(
            ErrKind::Group,
            UNKNOWN,
            key_at,
            u64::from(tag),
            end - key_at,
        )),
    }
}

fn zigzag(x: u64) -> i64 {
    ((x >> 1) as i64) ^ -((x & 1) as i64)
}

/// The decoder drives a protobuf description's walk through [`Messages`].
impl Messages for Schema {
    fn walk(
        &'static self,
        c: &'static Compiled,
        p: &[u8],
        side: Side,
        ev: &mut dyn Events,
    ) -> Result<usize, DecodeErr> {
        Schema::walk(self, c, p, side, ev)
    }

    fn classify(&self, p: &[u8]) -> Option<Side> {
        Schema::classify(self, p)
    }

    fn two_messages(&self) -> bool {
        self.message_field.is_some()
    }
}

impl Schema {
    /// Which side's message the payload holds, by its top-level fields: the
    /// first whose number and wire type only one of the two messages
    /// accepts. `None` with one message for both, or when nothing tells.
    pub fn classify(&self, p: &[u8]) -> Option<Side> {
        self.message_field?;
        let (c, s) = (self.msgs.get(self.roots[0])?, self.msgs.get(self.roots[1])?);
        let mut pos = 0;
        while pos < p.len() {
            let at = pos;
            let (tag, wire) = read_key(p, &mut pos, p.len()).ok()?;
            match (c.accepts(tag, wire), s.accepts(tag, wire)) {
                (true, false) => return Some(Side::Client),
                (false, true) => return Some(Side::Server),
                _ => {}
            }
            skip_value(p, wire, tag, &mut pos, p.len(), at).ok()?;
        }
        None
    }

    /// Walks `p` as the message of `side`, telling `ev` every field.
    pub fn walk(
        &'static self,
        c: &'static Compiled,
        p: &[u8],
        side: Side,
        ev: &mut dyn Events,
    ) -> Result<usize, DecodeErr> {
        let side = match side {
            Side::Any => self.classify(p).unwrap_or(Side::Client),
            s => s,
        };
        let which = usize::from(side == Side::Server);
        if let Some(def) = c.defs.first() {
            ev.enter(Field {
                def,
                index: None,
                offset: 0,
                len: p.len(),
                value: Value::None,
            });
        }
        if let Some(f) = self.message_field
            && let Some(def) = c.defs.get(usize::from(f))
        {
            ev.field(Field {
                def,
                index: None,
                offset: 0,
                len: 0,
                value: Value::Enum {
                    raw: which as u64,
                    name: c.enum_name(0, which as i64),
                },
            });
            ev.int(f, which as i64);
        }
        let root = self.msgs.get(self.roots[which]);
        // A sink that takes none of the message's fields (`-T fields` of
        // others) gets none handed over; the message is decoded all the same.
        let quiet = root.is_some_and(|m| {
            !ev.wants_any(crate::proto::field::group_key(m), &|each| {
                self.msg_defs(c, m, each, 0);
            })
        });
        let mut w = PWalker {
            c,
            s: self,
            p,
            ev,
            quiet,
        };
        let r = match root {
            Some(m) => w.message(m, 0, p.len()),
            None => Ok(()),
        };
        if !c.defs.is_empty() {
            w.ev.leave();
        }
        r.map(|()| p.len())
    }
}

impl Schema {
    /// Every registered field of message `m` and of the messages in it, for
    /// `FieldSink::wants_any` (the messages unfold per path, so their nesting
    /// is a tree; `depth` bounds it all the same).
    fn msg_defs(
        &'static self,
        c: &'static Compiled,
        m: &'static Msg,
        each: &mut dyn FnMut(&'static crate::proto::field::FieldDef),
        depth: usize,
    ) {
        for f in &m.fields {
            if let Some(def) = c.defs.get(usize::from(f.def)) {
                each(def);
            }
            if let PType::Message(mi) = f.ty
                && let Some(inner) = self.msgs.get(mi)
                && depth < MAX_GROUPS
            {
                self.msg_defs(c, inner, each, depth + 1);
            }
        }
    }
}

/// What [`PWalker::scalar`] reads of a value: the value, its integer for
/// the keys, its number for `valid`.
type Scalar<'p> = Result<(Value<'p>, Option<i64>, Option<f64>), DecodeErr>;

/// A fixed-width value of `f` (4 or 8 bytes, little-endian) at `*pos`.
fn fixed_value<'p>(p: &'p [u8], f: &PField, pos: &mut usize, end: usize) -> Scalar<'p> {
    let fixed = |pos: &mut usize, n: usize| -> Result<u64, DecodeErr> {
        let at = *pos;
        let b = at
            .checked_add(n)
            .filter(|e| *e <= end)
            .and_then(|e| p.get(at..e))
            .ok_or(perr(ErrKind::PastEnd, f.def, at, n as u64, end - at))?;
        *pos = at + n;
        let mut v = 0u64;
        for x in b.iter().rev() {
            v = (v << 8) | u64::from(*x);
        }
        Ok(v)
    };
    Ok(match f.ty {
        PType::Fixed32 => {
            let v = fixed(pos, 4)?;
            (Value::Unsigned(v), Some(v as i64), Some(v as f64))
        }
        PType::SFixed32 => {
            let v = i64::from(fixed(pos, 4)? as u32 as i32);
            (Value::Signed(v), Some(v), Some(v as f64))
        }
        PType::Float => {
            let v = f64::from(f32::from_bits(fixed(pos, 4)? as u32));
            (Value::Float(v), None, Some(v))
        }
        PType::Fixed64 => {
            let v = fixed(pos, 8)?;
            (Value::Unsigned(v), Some(v as i64), Some(v as f64))
        }
        PType::SFixed64 => {
            let v = fixed(pos, 8)? as i64;
            (Value::Signed(v), Some(v), Some(v as f64))
        }
        PType::Double => {
            let v = f64::from_bits(fixed(pos, 8)?);
            (Value::Float(v), None, Some(v))
        }
        _ => (Value::None, None, None),
    })
}

/// A string or bytes of `f` at `*pos` (its key at `from`): its length, then
/// its bytes; a string must be UTF-8.
fn delimited<'p>(p: &'p [u8], f: &PField, from: usize, pos: &mut usize, end: usize) -> Scalar<'p> {
    let len_at = *pos;
    let len = varint(p, pos, end, f.def)?;
    if len > (end - *pos) as u64 {
        return Err(perr(ErrKind::PastEnd, f.def, len_at, len, end - *pos));
    }
    let body = p.get(*pos..*pos + len as usize).unwrap_or(&[]);
    *pos += len as usize;
    if f.ty == PType::String {
        if std::str::from_utf8(body).is_err() {
            return Err(perr(ErrKind::NotUtf8, f.def, from, 0, end - from));
        }
        Ok((Value::Text(body), None, None))
    } else {
        Ok((Value::Bytes(body), None, None))
    }
}

struct PWalker<'p, 'e> {
    c: &'static super::decode::Compiled,
    s: &'static Schema,
    p: &'p [u8],
    ev: &'e mut dyn Events,
    /// Within a message the sink wants no field of: decoded, not handed over.
    quiet: bool,
}

impl<'p> PWalker<'p, '_> {
    fn message(&mut self, m: &'static Msg, start: usize, end: usize) -> Result<(), DecodeErr> {
        let p = self.p;
        let mut pos = start;
        let mut seen = [0u64; MAX_FIELDS / 64];
        let mut counts = [0u32; MAX_REPEATED];
        while pos < end {
            let key_at = pos;
            let (tag, wire) = read_key(p, &mut pos, end)?;
            let wire_raw = wire as u64;
            let Some((i, f)) = m.find(tag) else {
                // Unknown: skipped, as proto3 says.
                skip_value(p, wire, tag, &mut pos, end, key_at)?;
                continue;
            };
            if let Some(w) = seen.get_mut(i / 64) {
                *w |= 1 << (i % 64);
            }
            let packed = f.repeated && f.ty.packable() && wire == WireType::LengthDelimited;
            if wire != f.ty.wire() && !packed {
                return Err(perr(
                    ErrKind::WireType,
                    f.def,
                    key_at,
                    wire_raw,
                    end - key_at,
                ));
            }
            let mut next_index = || {
                if !f.repeated {
                    return None;
                }
                counts.get_mut(usize::from(f.slot)).map(|c| {
                    *c = c.saturating_add(1);
                    *c - 1
                })
            };
            if packed {
                let len_at = pos;
                let len = varint(p, &mut pos, end, f.def)?;
                if len > (end - pos) as u64 {
                    return Err(perr(ErrKind::PastEnd, f.def, len_at, len, end - pos));
                }
                let body_end = pos + len as usize;
                while pos < body_end {
                    let at = pos;
                    let index = next_index();
                    self.scalar(f, index, at, &mut pos, body_end)?;
                }
                continue;
            }
            let index = next_index();
            match f.ty {
                PType::Message(mi) => self.nested(f, mi, index, key_at, &mut pos, end)?,
                _ => self.scalar(f, index, key_at, &mut pos, end)?,
            }
        }
        self.defaults(m, &seen, end);
        Ok(())
    }

    /// A message field `f` of message `mi` at `*pos` (its key at `key_at`):
    /// its length, then the message walked as a node of the tree.
    fn nested(
        &mut self,
        f: &PField,
        mi: usize,
        index: Option<u32>,
        key_at: usize,
        pos: &mut usize,
        end: usize,
    ) -> Result<(), DecodeErr> {
        let len_at = *pos;
        let len = varint(self.p, pos, end, f.def)?;
        if len > (end - *pos) as u64 {
            return Err(perr(ErrKind::PastEnd, f.def, len_at, len, end - *pos));
        }
        let body_end = *pos + len as usize;
        let inner = self.s.msgs.get(mi);
        let was_quiet = self.quiet;
        if !self.quiet
            && let Some(inner) = inner
        {
            let (s, c) = (self.s, self.c);
            self.quiet = !self
                .ev
                .wants_any(crate::proto::field::group_key(inner), &|each| {
                    if let Some(def) = c.defs.get(usize::from(f.def)) {
                        each(def);
                    }
                    s.msg_defs(c, inner, each, 0);
                });
        }
        let def = (!self.quiet)
            .then(|| self.c.defs.get(usize::from(f.def)))
            .flatten();
        if let Some(def) = def {
            self.ev.enter(Field {
                def,
                index,
                offset: key_at,
                len: body_end - key_at,
                value: Value::None,
            });
        }
        let r = match inner {
            Some(inner) => self.message(inner, *pos, body_end),
            None => Ok(()),
        };
        if def.is_some() {
            self.ev.leave();
        }
        self.quiet = was_quiet;
        r?;
        *pos = body_end;
        Ok(())
    }

    /// The fields of `m` absent from its bytes (`seen` the others), read as
    /// their defaults at `end`: not the repeated ones, nor those with
    /// presence, nor messages.
    fn defaults(&mut self, m: &'static Msg, seen: &[u64; MAX_FIELDS / 64], end: usize) {
        for (i, f) in m.fields.iter().enumerate() {
            let was = seen.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0);
            if was || f.repeated || f.presence {
                continue;
            }
            let value = match f.ty {
                PType::Message(_) => continue,
                PType::String => Value::Text(b""),
                PType::Bytes => Value::Bytes(b""),
                PType::Bool => Value::Bool(false),
                PType::Float | PType::Double => Value::Float(0.0),
                PType::Enum(e) => {
                    // proto3: the first value declared (0).
                    let first = self
                        .c
                        .enums
                        .get(e)
                        .and_then(|d| d.values.first())
                        .map_or(0, |(v, _)| *v);
                    Value::Enum {
                        raw: first as u64,
                        name: self.c.enum_name(e, first),
                    }
                }
                PType::UInt32 | PType::UInt64 | PType::Fixed32 | PType::Fixed64 => {
                    Value::Unsigned(0)
                }
                _ => Value::Signed(0),
            };
            let raw = match value {
                Value::Enum { raw, .. } => raw as i64,
                _ => 0,
            };
            if !self.quiet
                && let Some(def) = self.c.defs.get(usize::from(f.def))
            {
                self.ev.field(Field {
                    def,
                    index: None,
                    offset: end,
                    len: 0,
                    value,
                });
            }
            if f.ty.key().is_some() {
                self.ev.int(f.def, raw);
            }
        }
    }

    /// A varint's value (the types read as one): the value, its integer
    /// for the keys, its number for `valid`.
    fn varint_value(&self, f: &PField, pos: &mut usize, end: usize) -> Scalar<'p> {
        let p = self.p;
        Ok(match f.ty {
            PType::Int32 => {
                let v = i64::from(varint(p, pos, end, f.def)? as i32);
                (Value::Signed(v), Some(v), Some(v as f64))
            }
            PType::Int64 => {
                let v = varint(p, pos, end, f.def)? as i64;
                (Value::Signed(v), Some(v), Some(v as f64))
            }
            PType::UInt32 => {
                let v = u64::from(varint(p, pos, end, f.def)? as u32);
                (Value::Unsigned(v), Some(v as i64), Some(v as f64))
            }
            PType::UInt64 => {
                let v = varint(p, pos, end, f.def)?;
                (Value::Unsigned(v), Some(v as i64), Some(v as f64))
            }
            PType::SInt32 => {
                let v = i64::from(zigzag(u64::from(varint(p, pos, end, f.def)? as u32)) as i32);
                (Value::Signed(v), Some(v), Some(v as f64))
            }
            PType::SInt64 => {
                let v = zigzag(varint(p, pos, end, f.def)?);
                (Value::Signed(v), Some(v), Some(v as f64))
            }
            PType::Bool => {
                let v = varint(p, pos, end, f.def)? != 0;
                (
                    Value::Bool(v),
                    Some(i64::from(v)),
                    Some(f64::from(u8::from(v))),
                )
            }
            PType::Enum(e) => {
                let v = i64::from(varint(p, pos, end, f.def)? as i32);
                let value = Value::Enum {
                    raw: v as u64,
                    name: self.c.enum_name(e, v),
                };
                (value, Some(v), Some(v as f64))
            }
            _ => (Value::None, None, None),
        })
    }

    /// One scalar value of `f` at `*pos` (its key, if any, at `from`).
    fn scalar(
        &mut self,
        f: &PField,
        index: Option<u32>,
        from: usize,
        pos: &mut usize,
        end: usize,
    ) -> Result<(), DecodeErr> {
        // (value, its integer for the keys, its number for `valid`)
        let (value, int, num): (Value<'p>, Option<i64>, Option<f64>) = match f.ty {
            PType::Int32
            | PType::Int64
            | PType::UInt32
            | PType::UInt64
            | PType::SInt32
            | PType::SInt64
            | PType::Bool
            | PType::Enum(_) => self.varint_value(f, pos, end)?,
            PType::Fixed32
            | PType::SFixed32
            | PType::Float
            | PType::Fixed64
            | PType::SFixed64
            | PType::Double => fixed_value(self.p, f, pos, end)?,
            PType::String | PType::Bytes => delimited(self.p, f, from, pos, end)?,
            PType::Message(_) => (Value::None, None, None),
        };
        if !self.quiet
            && let Some(def) = self.c.defs.get(usize::from(f.def))
        {
            self.ev.field(Field {
                def,
                index,
                offset: from,
                len: *pos - from,
                value,
            });
        }
        if let Some(v) = int {
            self.ev.int(f.def, v);
        }
        if let Some(x) = num
            && let Some(valid) = self
                .c
                .specs
                .get(usize::from(f.def))
                .and_then(|s| s.valid.as_ref())
            && !valid.holds(x, |_| None)
        {
            self.ev.violation(f.def, from, x, None);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::described::{self, Described};

    const PROTO: &str = r#"syntax = "proto3";
package t;
enum E { ZERO = 0; ONE = 1; }
message Inner { uint64 u = 1; }
message M {
  int32 a = 1;
  sint32 z = 2;
  float f = 3;
  Inner inner = 4;
  repeated uint32 r = 5;
  string s = 6;
  E e = 7;
  optional uint32 o = 8;
  fixed64 x = 9;
}
message Other { string s = 6; bool b = 10; }
"#;

    fn compile(yaml: &str) -> Result<&'static Described, KsyError> {
        let d = parse(
            "t.yaml",
            yaml,
            Box::new(|name: &str| (name == "t.proto").then(|| Ok(PROTO.to_owned()))),
        )?;
        Ok(described::leak(d, 0))
    }

    fn one() -> &'static Described {
        compile(
            "meta: {id: t}\nprotobuf: {file: t.proto, message: t.M}\n-lwarscope: {recognise: {port: 9}}\n",
        )
        .unwrap()
    }

    /// What a walk tells: `name[index]@offset+len=value`, and the integers.
    #[derive(Default)]
    struct Seen(Vec<String>, Vec<(u16, i64)>);

    impl Events for Seen {
        fn field(&mut self, f: Field<'_>) {
            let index = f.index.map(|i| format!("[{i}]")).unwrap_or_default();
            let v = match f.value {
                Value::None => String::new(),
                v => format!("={v}"),
            };
            self.0
                .push(format!("{}{index}@{}+{}{v}", f.def.name, f.offset, f.len));
        }
        fn int(&mut self, field: u16, value: i64) {
            self.1.push((field, value));
        }
    }

    fn walk(d: &'static Described, p: &[u8], side: Side) -> (Seen, Result<usize, DecodeErr>) {
        let mut s = Seen::default();
        let r = d.compiled.walk_as(p, side, &mut s);
        (s, r)
    }

    #[test]
    fn golden_bytes_walk_field_for_field_with_defaults_and_unknown_skipped() {
        let d = one();
        let p: &[u8] = &[
            0x08, 0x96, 0x01, // a = 150 (varint)
            0x10, 0x03, // z = -2 (zigzag)
            0x1d, 0x00, 0x00, 0xc0, 0x3f, // f = 1.5 (fixed32 float)
            0x22, 0x02, 0x08, 0x01, // inner { u = 1 }
            0x2a, 0x03, 0x01, 0xac, 0x02, // r = [1, 300] packed
            0x78, 0x05, // field 15: unknown, skipped
            0x28, 0x07, // r = 7 unpacked: element 2
        ];
        let (s, r) = walk(d, p, Side::Any);
        assert_eq!(r, Ok(p.len()));
        assert_eq!(
            s.0,
            [
                "t@0+23",
                "t.a@0+3=150",
                "t.z@3+2=-2",
                "t.f@5+5=1.5",
                "t.inner@10+4",
                "t.inner.u@12+2=1",
                "t.r[0]@16+1=1",
                "t.r[1]@17+2=300",
                "t.r[2]@21+2=7",
                // Absent: their defaults, an empty span at the end; `o`
                // (optional) has presence and is not read.
                "t.s@23+0=\"\"",
                "t.e@23+0=ZERO (0)",
                "t.x@23+0=0",
            ]
        );
    }

    fn err(d: &'static Described, p: &[u8]) -> (ErrKind, usize) {
        let (_, r) = walk(d, p, Side::Any);
        let e = r.expect_err("malformed");
        (e.kind, e.offset)
    }

    #[test]
    fn malformed_is_what_no_proto3_decoder_accepts_with_its_offset() {
        let d = one();
        // A value's varint cut short, a key's.
        assert_eq!(err(d, &[0x08, 0x96]), (ErrKind::TruncatedVarint, 1));
        assert_eq!(err(d, &[0x08, 0x01, 0x96]), (ErrKind::TruncatedVarint, 2));
        // Inside a nested message: cut at the message's end, not the
        // datagram's.
        assert_eq!(
            err(d, &[0x22, 0x02, 0x08, 0x96, 0x01]),
            (ErrKind::TruncatedVarint, 3)
        );
        // Eleven bytes of varint.
        assert_eq!(
            err(
                d,
                &[
                    0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
                ]
            )
            .0,
            ErrKind::BadVarint
        );
        // Wire type 7, field number 0.
        assert_eq!(err(d, &[0x08, 0x01, 0x0f]), (ErrKind::BadKey, 2));
        assert_eq!(err(d, &[0x00, 0x01]), (ErrKind::BadKey, 0));
        // A length past the end.
        let (_, r) = walk(d, &[0x22, 0x05, 0x08, 0x01], Side::Any);
        let e = r.unwrap_err();
        assert_eq!(
            (e.kind, e.offset, e.need, e.have),
            (ErrKind::PastEnd, 1, 5, 2)
        );
        // A fixed32 cut short.
        assert_eq!(err(d, &[0x1d, 0x00, 0x00]), (ErrKind::PastEnd, 1));
        // `a` (int32) sent as fixed32; `s` (string) as varint.
        assert_eq!(
            err(d, &[0x0d, 0x01, 0x00, 0x00, 0x00]),
            (ErrKind::WireType, 0)
        );
        assert_eq!(err(d, &[0x08, 0x01, 0x30, 0x01]), (ErrKind::WireType, 2));
        // A string that is not UTF-8.
        assert_eq!(err(d, &[0x32, 0x01, 0xff]), (ErrKind::NotUtf8, 0));
        // An unknown group that never ends; an unknown field cut short.
        assert_eq!(err(d, &[0x7b, 0x08, 0x01]).0, ErrKind::Group);
        assert_eq!(err(d, &[0x7a, 0x05, 0x01]), (ErrKind::PastEnd, 1));
        // Truncated packed element.
        assert_eq!(
            err(d, &[0x2a, 0x02, 0x01, 0x80]),
            (ErrKind::TruncatedVarint, 3)
        );
    }

    #[test]
    fn two_messages_are_read_by_side_or_told_by_content() {
        let d = compile(
            "meta: {id: t}\nprotobuf: {file: t.proto, client: t.M, server: Other}\n-lwarscope: {recognise: {port: 9}}\n",
        )
        .unwrap();
        let schema = d.compiled.proto.as_ref().unwrap();
        // Field 6 (string) is in both: nothing tells; field 10 is the
        // server's, field 1 the client's.
        assert_eq!(schema.classify(&[0x32, 0x00]), None);
        assert_eq!(
            schema.classify(&[0x32, 0x00, 0x50, 0x01]),
            Some(Side::Server)
        );
        assert_eq!(schema.classify(&[0x08, 0x01]), Some(Side::Client));
        let (s, r) = walk(d, &[0x32, 0x01, b'x', 0x50, 0x01], Side::Server);
        assert_eq!(r, Ok(5));
        assert_eq!(
            s.0,
            [
                "t@0+5",
                "t.message@0+0=Other (1)",
                "t.s@0+3=\"x\"",
                "t.b@3+2=true"
            ]
        );
        // The message type is which message.
        assert_eq!(d.type_values, [0, 1]);
        assert_eq!(d.type_field, Some(1));
        // Read as the client's, field 10 is unknown (skipped).
        let (s, _) = walk(d, &[0x50, 0x01], Side::Client);
        assert_eq!(s.0[1], "t.message@0+0=M (0)");
        assert!(!s.0.iter().any(|x| x.starts_with("t.b@")));
    }

    #[test]
    fn keys_name_fields_by_path_and_bits_narrow_the_sequence() {
        let d = compile(
            "meta: {id: t}\nprotobuf: {file: t.proto, message: t.M}\nfields: {inner.u: {valid: {max: 9}}}\n-lwarscope:\n  recognise: {port: 9}\n  sequence: {field: inner.u, bits: 8, recency: {ahead: 128}}\n",
        )
        .unwrap();
        let (f, bits) = d.seq_field.unwrap();
        assert_eq!(d.compiled.defs[usize::from(f)].name, "t.inner.u");
        assert_eq!((bits, d.seq_max), (8, Some(255)));
        // `valid` on the field, raised as it is read.
        #[derive(Default)]
        struct V(Vec<(u16, usize, f64)>);
        impl Events for V {
            fn violation(&mut self, field: u16, offset: usize, value: f64, _: Option<i64>) {
                self.0.push((field, offset, value));
            }
        }
        let mut v = V::default();
        d.compiled.walk(&[0x22, 0x02, 0x08, 0x0a], &mut v).unwrap();
        assert_eq!(v.0, [(f, 2, 10.0)]);
    }

    #[test]
    fn errors_of_the_description_name_their_line() {
        let e = |yaml: &str| compile(yaml).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            e(
                "meta: {id: t}\nprotobuf: {file: t.proto, message: t.M}\nfields: {s: {valid: {max: 1}}}\n-lwarscope: {recognise: {port: 9}}\n"
            ),
            "t.yaml:3:10: `s`: `valid` checks numbers only"
        );
        let many: String = (1..=9)
            .map(|i| format!("  a{i}: {{valid: {{max: 1}}}}\n"))
            .collect();
        assert_eq!(
            e(&format!(
                "meta: {{id: t}}\nprotobuf: {{file: t.proto, message: t.M}}\nfields:\n{many}-lwarscope: {{recognise: {{port: 9}}}}\n"
            )),
            "t.yaml:4:3: `a1` is not a field of the messages (`t.a1` is not registered)"
        );
        assert_eq!(
            e(
                "meta: {id: t}\nprotobuf: {file: t.proto, client: t.M, server: t.Other}\n-lwarscope:\n  recognise: {port: 9}\n  sequence: {field: s}\n"
            ),
            "t.yaml:5:21: `sequence.field`: `s` is not an integer, bool or enum field of `M` or `Other` (by its path: `header.seq`), not repeated, or `message`"
        );
        let d = parse(
            "dir/t.yaml",
            "meta: {id: t}\nprotobuf: {file: gone.proto, message: M}\n-lwarscope: {recognise: {port: 9}}\n",
            Box::new(|_: &str| None),
        );
        assert_eq!(
            d.map(|_| ()).unwrap_err().to_string(),
            "dir/t.yaml:2:18: `gone.proto`: no such file (the .proto is read from beside the description: dir/gone.proto)"
        );
    }

    #[test]
    fn errors_point_at_file_line_and_column() {
        let e = |yaml: &str| compile(yaml).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            e(
                "meta: {id: t}\nprotobuf: {file: t.proto, message: Nope}\n-lwarscope: {recognise: {port: 9}}\n"
            ),
            "t.yaml:2:36: no message `Nope` in t.proto (name it with its package: `pkg.Message`)"
        );
        assert_eq!(
            e(
                "meta: {id: t}\nprotobuf: {file: t.proto, message: t.M}\n-lwarscope:\n  recognise: {port: 9}\n  sequence: {field: s}\n"
            ),
            "t.yaml:5:21: `sequence.field`: `s` is not an integer, bool or enum field of `M` (by its path: `header.seq`), not repeated"
        );
        assert_eq!(
            e(
                "meta: {id: t}\nprotobuf: {file: t.proto, message: t.M}\nfields: {nope: {valid: {max: 1}}}\n-lwarscope: {recognise: {port: 9}}\n"
            ),
            "t.yaml:3:10: `nope` is not a field of the messages (`t.nope` is not registered)"
        );
        assert_eq!(
            e("meta: {id: t}\nprotobuf: {file: t.proto}\n-lwarscope: {recognise: {port: 9}}\n"),
            "t.yaml:2:11: `protobuf` takes `message:` (both directions) or `client:` and `server:` (the message each sends)"
        );
        // In the .proto: its line and column.
        let d = parse(
            "dir/t.yaml",
            "meta: {id: t}\nprotobuf: {file: t.proto, message: M}\n-lwarscope: {recognise: {port: 9}}\n",
            Box::new(|_: &str| {
                Some(Ok(
                    "syntax = \"proto3\";\nmessage M {\n  uint32 x = 1\n}\n".into()
                ))
            }),
        );
        assert_eq!(
            d.map(|_| ()).unwrap_err().to_string(),
            "dir/t.proto:4:1: expected ';' or '[', but found '}'"
        );
        let d = parse(
            "t.yaml",
            "meta: {id: t}\nprotobuf: {file: t.proto, message: M}\n-lwarscope: {recognise: {port: 9}}\n",
            Box::new(|_: &str| {
                Some(Ok(
                    "syntax = \"proto3\";\nmessage M {\n  uint32 x = 1;\n  M again = 2;\n}\n"
                        .into(),
                ))
            }),
        );
        assert_eq!(
            d.map(|_| ()).unwrap_err().to_string(),
            "t.proto:4:3: `t.again`: message `M` contains itself: recursive messages are not supported"
        );
    }
}
