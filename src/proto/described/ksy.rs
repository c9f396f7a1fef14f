//! The supported subset of Kaitai Struct's `.ksy`, and lwarscope's extension
//! key `-lwarscope:`, read into a [`Ksy`]. Everything outside the subset is
//! refused with its line and column, what it is, and what to use instead. The
//! subset is listed in `docs/describe-a-protocol.md`.

use super::yaml::{self, Node, Pos, Value};

/// A description error: where, and what (and what to use instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: {msg}")]
pub struct KsyError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub msg: String,
}

pub(super) type R<T> = Result<T, (Pos, String)>;

fn err<T>(pos: Pos, msg: impl Into<String>) -> R<T> {
    Err((pos, msg.into()))
}

/// How an amount (a `size`, a `repeat-expr`) is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Fixed(u64),
    /// The value of an earlier field of the same type (its index).
    Field(usize),
    /// Up to the end of the enclosing stream (`size-eos: true`).
    Eos,
}

/// What a field is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Int {
        bytes: u8,
        signed: bool,
        le: bool,
    },
    Float {
        bytes: u8,
        le: bool,
    },
    /// `str` (`zero: false`) or `strz` (text up to a NUL).
    Str {
        zero: bool,
    },
    /// Raw bytes: a `size` without a `type`.
    Bytes,
    /// Fixed bytes that must be there (`contents`).
    Contents(Vec<u8>),
    /// A user type, by index in [`Ksy::types`].
    User(usize),
    /// `switch-on` an earlier field of the same type: the kind of each case,
    /// and of `_` (the default).
    Switch {
        on: usize,
        cases: Vec<(i64, Kind)>,
        default: Option<Box<Kind>>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    None,
    Eos,
    Expr(Amount),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            Op::Eq => a == b,
            Op::Ne => a != b,
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
        }
    }
}

/// `if: field OP number` or `if: field OP other_field` (an earlier field of
/// the same `seq`, as `if: this_packet == total_packets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cond {
    pub field: usize,
    pub op: Op,
    pub value: Operand,
}

/// The right side of an `if:` comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// A number, or an enum's `name::value`.
    Number(i64),
    /// An earlier integer field's value.
    Field(usize),
}

/// Fields of one `seq` (the decoder keeps the values of earlier fields in a
/// fixed array of this size).
pub const MAX_ATTRS: usize = 64;
/// Bytes of names, docs and `contents` a description may hold in all, once
/// its types are unfolded into the decoder's copies (and the most a
/// description file may weigh).
pub const MAX_UNFOLDED_BYTES: usize = 16 << 20;

/// The fields with a `valid` a description may register (each field of a
/// type used in several places counts once per place): the analysis follows
/// each one's violations apart, in room fixed per session.
pub const MAX_VALID_FIELDS: usize = 16;

/// A bound of `valid` (`eq`, `min`, `max`): a number, or the value of an
/// earlier integer field of the same `seq` (Kaitai's `valid: {max: total}`).
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    Num(f64),
    /// The field's index in its `seq`, and its name (for messages).
    Field {
        index: usize,
        name: String,
    },
}

impl Bound {
    /// The bound's value: a field's from `field` (None when that field was not
    /// decoded in this packet, an `if` skipping it: then nothing is compared).
    fn value(&self, field: impl Fn(usize) -> Option<i64>) -> Option<f64> {
        match self {
            Bound::Num(x) => Some(*x),
            Bound::Field { index, .. } => field(*index).map(|v| v as f64),
        }
    }

    /// The earlier field this bound names, if it names one.
    pub fn field(&self) -> Option<usize> {
        match self {
            Bound::Num(_) => None,
            Bound::Field { index, .. } => Some(*index),
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::Num(x) => write!(f, "{x}"),
            Bound::Field { name, .. } => f.write_str(name),
        }
    }
}

/// `valid`: the values a field may take (a violation otherwise).
#[derive(Debug, Clone, PartialEq)]
pub enum Valid {
    Eq(Bound),
    Range {
        min: Option<Bound>,
        max: Option<Bound>,
    },
    AnyOf(Vec<f64>),
}

impl Valid {
    /// Whether `v` is valid; `field` gives the earlier fields' values a bound
    /// may name (a bound whose field has no value holds).
    pub fn holds(&self, v: f64, field: impl Fn(usize) -> Option<i64> + Copy) -> bool {
        let ok = |b: &Option<Bound>, cmp: fn(f64, f64) -> bool| {
            b.as_ref()
                .and_then(|b| b.value(field))
                .is_none_or(|x| cmp(v, x))
        };
        match self {
            Valid::Eq(x) => x.value(field).is_none_or(|x| v == x),
            Valid::Range { min, max } => ok(min, |v, m| v >= m) && ok(max, |v, m| v <= m),
            Valid::AnyOf(xs) => xs.contains(&v),
        }
    }

    /// The earlier field a bound names, if one does (at most one does).
    pub fn bound_field(&self) -> Option<usize> {
        match self {
            Valid::Eq(b) => b.field(),
            Valid::Range { min, max } => min
                .as_ref()
                .and_then(Bound::field)
                .or_else(|| max.as_ref().and_then(Bound::field)),
            Valid::AnyOf(_) => None,
        }
    }
}

impl std::fmt::Display for Valid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Valid::Eq(x) => write!(f, "== {x}"),
            Valid::Range {
                min: Some(lo),
                max: Some(hi),
            } => write!(f, "in [{lo}, {hi}]"),
            Valid::Range { min: Some(lo), .. } => write!(f, ">= {lo}"),
            Valid::Range { max: Some(hi), .. } => write!(f, "<= {hi}"),
            Valid::Range { .. } => f.write_str("any"),
            Valid::AnyOf(xs) => {
                f.write_str("one of ")?;
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                Ok(())
            }
        }
    }
}

/// One field of a `seq`.
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    pub id: String,
    pub pos: Pos,
    pub kind: Kind,
    pub size: Option<Amount>,
    pub repeat: Repeat,
    pub cond: Option<Cond>,
    pub valid: Option<Valid>,
    /// An enum, by index in [`Ksy::enums`].
    pub enum_: Option<usize>,
    pub doc: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TypeDef {
    pub name: String,
    pub attrs: Vec<Attr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EnumDef {
    pub name: String,
    pub values: Vec<(i64, String)>,
}

impl EnumDef {
    pub fn name_of(&self, v: i64) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| *k == v)
            .map(|(_, n)| n.as_str())
    }
}

/// The recency rule of a sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recency {
    /// RFC 1982: newer when `(p - s) mod 2^w` is in `1..2^(w-1)`.
    Serial,
    /// Vessel's: newer when `p` is 1 to `n` ahead of `s` in the cycle
    /// (`ahead: 128` for "128 or fewer ahead in the 256-step cycle").
    Ahead(u32),
}

/// The ack model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ack {
    None,
    /// A field holding the highest peer number received.
    Cumulative {
        field: usize,
    },
    /// Bit N set acknowledges the peer's `anchor - N - 1`.
    Bitfield {
        field: usize,
        anchor: usize,
    },
}

/// lwarscope's semantics of the protocol (`-lwarscope:`).
#[derive(Debug, Clone, PartialEq)]
pub struct Semantics {
    pub title: String,
    pub magic: Vec<u8>,
    pub magic_offset: usize,
    pub port: Option<u16>,
    /// A top-level field that tells sessions of one address pair apart.
    pub session: Option<usize>,
    /// The side using this port is the server (default: `port`).
    pub server_port: Option<u16>,
    /// Message types the server sends / the client sends (names of the
    /// message-type enum), to tell the server of a new session.
    pub server_sends: Vec<i64>,
    pub client_sends: Vec<i64>,
    /// The last bytes of the IPv4 client addresses the server drops (never
    /// sends to): Timewarp's "IP addresses ending in 0 or 255 are dropped".
    pub drops_ipv4_last_byte: Vec<u8>,
    /// Top-level field whose value (and enum) is the message type.
    pub message_type: Option<usize>,
    pub sequence: Option<(usize, Recency)>,
    /// `sequence: bits:`: the numbers count modulo `2^bits`, narrower than
    /// their field (Vessel's syncNumber, a uint32 kept in 0..255); a value
    /// of `2^bits` or more takes no place in the sequence.
    pub sequence_bits: Option<u32>,
    pub ack: Ack,
    pub timeout_ms: u64,
    /// (message type value, Hz).
    pub rates: Vec<(i64, f64)>,
    /// Bytes left after the root type are malformed (default) or allowed.
    pub trailing_malformed: bool,
    /// Largest payload (oversize above it).
    pub mtu: Option<usize>,
}

/// A description read from a `.ksy`.
#[derive(Debug, Clone, PartialEq)]
pub struct Ksy {
    pub id: String,
    /// `types[0]` is the root (the top-level `seq`).
    pub types: Vec<TypeDef>,
    pub enums: Vec<EnumDef>,
    pub sem: Semantics,
    pub doc: String,
}

/// Top-level keys of Kaitai that the subset does not support, and what to do.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "instances",
        "instances are not supported: put every field in `seq`",
    ),
    (
        "params",
        "type parameters are not supported: use a field of the type",
    ),
    (
        "process",
        "`process` is not supported: describe the bytes as sent",
    ),
    (
        "pos",
        "`pos` is not supported: fields follow one another in `seq`",
    ),
    (
        "io",
        "`io` is not supported: fields follow one another in `seq`",
    ),
    (
        "terminator",
        "`terminator` is not supported: use `type: strz`",
    ),
    (
        "pad-right",
        "`pad-right` is not supported: use `type: strz` with `size`",
    ),
    (
        "repeat-until",
        "`repeat-until` is not supported: use `repeat: eos` or `repeat: expr`",
    ),
    (
        "value",
        "value instances are not supported: describe only wire fields",
    ),
];

/// Parses a description. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Ksy, KsyError> {
    let at = |pos: Pos, msg: String| KsyError {
        file: file.to_owned(),
        line: pos.line,
        col: pos.col,
        msg,
    };
    let root = yaml::parse(text).map_err(|e| at(e.pos, e.msg))?;
    parse_root(file, &root)
}

/// [`parse`] of a YAML tree already read from `file`.
pub fn parse_root(file: &str, root: &yaml::Node) -> Result<Ksy, KsyError> {
    Reader::default().ksy(root).map_err(|(pos, msg)| KsyError {
        file: file.to_owned(),
        line: pos.line,
        col: pos.col,
        msg,
    })
}

#[derive(Default)]
struct Reader {
    endian_le: Option<bool>,
    type_names: Vec<String>,
    enums: Vec<EnumDef>,
    /// For another description format (protobuf): the key fields are named
    /// by their path (dots allowed), and a name that is not one is refused
    /// as not being this (`an integer field of both messages`).
    keys_are: Option<String>,
}

/// The `-lwarscope:` key of a description in another format (protobuf):
/// `root` holds the fields the keys may name (by path: `header.seq`), each
/// an integer of the width of its type, and `enums` their enums; a name that
/// is none of them is refused as not `keys_are`.
pub(super) fn semantics_of(
    n: &Node,
    root: &TypeDef,
    enums: Vec<EnumDef>,
    keys_are: &str,
) -> R<Semantics> {
    Reader {
        enums,
        keys_are: Some(keys_are.to_owned()),
        ..Reader::default()
    }
    .semantics(n, root)
}

/// A `valid` of numbers only (another description format's field checks).
pub(super) fn valid_of(n: &Node) -> R<Valid> {
    Reader::default().valid(n, &[])
}

pub(super) fn map<'a>(n: &'a Node, what: &str) -> R<&'a [(String, Pos, Node)]> {
    match n.as_map() {
        Some(m) => Ok(m),
        None => err(n.pos, format!("{what} must be a mapping, not {}", n.noun())),
    }
}

pub(super) fn scalar<'a>(n: &'a Node, what: &str) -> R<&'a str> {
    match n.as_str() {
        Some(s) => Ok(s),
        None => err(n.pos, format!("{what} must be a scalar, not {}", n.noun())),
    }
}

pub(super) fn get<'a>(m: &'a [(String, Pos, Node)], key: &str) -> Option<&'a Node> {
    m.iter().find(|(k, _, _)| k == key).map(|(_, _, n)| n)
}

pub(super) fn int(n: &Node, what: &str) -> R<i64> {
    let s = scalar(n, what)?.trim().replace('_', "");
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.as_str()),
    };
    let v = if let Some(h) = body.strip_prefix("0x") {
        i64::from_str_radix(h, 16)
    } else if let Some(b) = body.strip_prefix("0b") {
        i64::from_str_radix(b, 2)
    } else {
        body.parse::<i64>()
    };
    match v {
        Ok(v) if neg => Ok(-v),
        Ok(v) => Ok(v),
        Err(_) => err(n.pos, format!("{what}: `{s}` is not an integer")),
    }
}

fn number(n: &Node, what: &str) -> R<f64> {
    if let Ok(i) = int(n, what) {
        return Ok(i as f64);
    }
    let s = scalar(n, what)?.trim();
    match s.parse::<f64>() {
        Ok(v) => Ok(v),
        Err(_) => err(n.pos, format!("{what}: `{s}` is not a number")),
    }
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|c| c.is_ascii_lowercase())
        && c.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

pub(super) fn ident(n: &Node, what: &str) -> R<String> {
    let s = scalar(n, what)?;
    if !is_ident(s) {
        return err(
            n.pos,
            format!("{what} `{s}` must be lower_snake_case (a-z, 0-9, _), as in Kaitai"),
        );
    }
    Ok(s.to_owned())
}

pub(super) fn only_keys(m: &[(String, Pos, Node)], allowed: &[&str], what: &str) -> R<()> {
    for (k, pos, _) in m {
        if k == "doc" || k == "doc-ref" || allowed.contains(&k.as_str()) {
            continue;
        }
        if let Some((_, says)) = UNSUPPORTED.iter().find(|(u, _)| u == k) {
            return err(*pos, (*says).to_owned());
        }
        return err(
            *pos,
            format!(
                "`{k}` is not supported in {what} (supported: {})",
                allowed.join(", ")
            ),
        );
    }
    Ok(())
}

pub(super) fn doc(m: &[(String, Pos, Node)]) -> R<String> {
    let Some(n) = get(m, "doc") else {
        return Ok(String::new());
    };
    let Some(s) = n.as_str() else {
        return Ok(String::new());
    };
    // Counted before it is copied: every doc counts towards the bound on
    // what a description holds (`MAX_UNFOLDED_BYTES`).
    let max = MAX_UNFOLDED_BYTES;
    if s.len() > max {
        return err(
            n.pos,
            format!("a `doc` of more than {} MiB: shorten it", max >> 20),
        );
    }
    Ok(shown(&s.split_whitespace().collect::<Vec<_>>().join(" ")))
}

/// Text of a description that outputs show (a `doc`, the `title`), safe on a
/// terminal as text from the wire is (`report::table::printable`): control
/// characters (C0, DEL and C1: an escape sequence that would retitle the
/// window or clear the screen, a carriage return that would overwrite a
/// line) are kept escaped (`\u{1b}`), never raw, in every output.
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn bytes_of(n: &Node, what: &str) -> R<Vec<u8>> {
    match &n.value {
        Value::Scalar { text, quoted: true } => Ok(text.as_bytes().to_vec()),
        Value::Scalar { text, .. } => match int(n, what) {
            Ok(v) => u8::try_from(v)
                .map(|b| vec![b])
                .or_else(|_| err(n.pos, format!("{what}: {v} is not a byte (0-255)"))),
            // A plain string, as Kaitai takes it (`contents: JFIF`).
            Err(_) => Ok(text.as_bytes().to_vec()),
        },
        Value::Seq(items) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(bytes_of(i, what)?);
            }
            Ok(out)
        }
        Value::Map(_) => err(n.pos, format!("{what} must be a list of bytes or a string")),
    }
}

impl Reader {
    /// `meta:`: the protocol's `id`, and the byte order (`endian`).
    fn meta(&mut self, meta: &Node) -> R<String> {
        let meta_m = map(meta, "`meta`")?;
        only_keys(
            meta_m,
            &[
                "id",
                "endian",
                "title",
                "file-extension",
                "license",
                "ks-version",
                "encoding",
            ],
            "`meta`",
        )?;
        let id = match get(meta_m, "id") {
            Some(n) => ident(n, "`meta.id`")?,
            None => {
                return err(
                    meta.pos,
                    "`meta` has no `id`: it names the protocol (`vessel`)",
                );
            }
        };
        if let Some(e) = get(meta_m, "endian") {
            self.endian_le = Some(match scalar(e, "`meta.endian`")? {
                "le" => true,
                "be" => false,
                other => {
                    return err(
                        e.pos,
                        format!("`endian: {other}` is not supported: use `be` or `le`"),
                    );
                }
            });
        }
        Ok(id)
    }

    fn ksy(mut self, root: &Node) -> R<Ksy> {
        let top = map(root, "a description")?;
        // What the whole file lacks is reported at its start.
        let start = Pos { line: 1, col: 1 };
        only_keys(
            top,
            &["meta", "seq", "types", "enums", "-lwarscope"],
            "a description",
        )?;
        let meta = get(top, "meta").ok_or((
            start,
            "no `meta:`: a description starts with `meta: {id: NAME, endian: be}`".to_owned(),
        ))?;
        let id = self.meta(meta)?;
        // Names first: a field may use a type or an enum declared later.
        let mut type_nodes = Vec::new();
        if let Some(t) = get(top, "types") {
            for (name, pos, node) in map(t, "`types`")? {
                if !is_ident(name) {
                    return err(*pos, format!("type name `{name}` must be lower_snake_case"));
                }
                self.type_names.push(name.clone());
                type_nodes.push((name.clone(), node));
            }
        }
        if let Some(e) = get(top, "enums") {
            for (name, pos, node) in map(e, "`enums`")? {
                if !is_ident(name) {
                    return err(*pos, format!("enum name `{name}` must be lower_snake_case"));
                }
                self.enums.push(EnumDef {
                    name: name.clone(),
                    values: enum_values(node)?,
                });
            }
        }
        let mut types = vec![TypeDef {
            name: id.clone(),
            attrs: Vec::new(),
        }];
        for (name, _) in &type_nodes {
            types.push(TypeDef {
                name: name.clone(),
                attrs: Vec::new(),
            });
        }
        let seq = get(top, "seq").ok_or((
            start,
            "no top-level `seq`: list the packet's fields in `seq`".to_owned(),
        ))?;
        types[0].attrs = self.seq(seq)?;
        for (i, (_, node)) in type_nodes.iter().enumerate() {
            let m = map(node, "a type")?;
            only_keys(m, &["seq", "meta"], "a type")?;
            if let Some(meta) = get(m, "meta") {
                return err(
                    meta.pos,
                    "`meta` inside a type is not supported: set `endian` in the top-level `meta`",
                );
            }
            let seq = get(m, "seq").ok_or((node.pos, "a type needs `seq`".to_owned()))?;
            types[i + 1].attrs = self.seq(seq)?;
        }
        let sem = match top.iter().find(|(k, _, _)| k == "-lwarscope") {
            Some((_, _, n)) => self.semantics(n, &types[0])?,
            None => {
                return err(
                    start,
                    "no `-lwarscope:` key: say how to recognise the protocol (at least `port:` or `magic:`)",
                );
            }
        };
        Ok(Ksy {
            id,
            types,
            enums: self.enums,
            sem,
            doc: doc(top)?,
        })
    }

    fn seq(&self, n: &Node) -> R<Vec<Attr>> {
        let Some(items) = n.as_seq() else {
            return err(
                n.pos,
                format!("`seq` must be a list of fields, not {}", n.noun()),
            );
        };
        let mut attrs: Vec<Attr> = Vec::new();
        for item in items {
            let a = self.attr(item, &attrs)?;
            if attrs.iter().any(|x| x.id == a.id) {
                return err(
                    a.pos,
                    format!("field `{}` appears twice in this `seq`", a.id),
                );
            }
            if attrs.len() >= MAX_ATTRS {
                return err(
                    a.pos,
                    format!(
                        "more than {} fields in one `seq`: split it into types",
                        MAX_ATTRS
                    ),
                );
            }
            attrs.push(a);
        }
        Ok(attrs)
    }

    fn earlier(&self, n: &Node, attrs: &[Attr], what: &str) -> R<usize> {
        let s = scalar(n, what)?.trim();
        if s.contains('.') || s.contains('(') || s.contains(' ') {
            return err(
                n.pos,
                format!(
                    "{what}: `{s}` is an expression; the subset takes the name of an earlier field of the same `seq`"
                ),
            );
        }
        attrs.iter().position(|a| a.id == s).ok_or((
            n.pos,
            format!("{what}: `{s}` is not an earlier field of this `seq`"),
        ))
    }

    fn amount(&self, n: &Node, attrs: &[Attr], what: &str) -> R<Amount> {
        if let Ok(v) = int(n, what) {
            return u64::try_from(v)
                .map(Amount::Fixed)
                .or_else(|_| err(n.pos, format!("{what}: {v} is negative")));
        }
        let i = self.earlier(n, attrs, what)?;
        let a = &attrs[i];
        if !matches!(a.kind, Kind::Int { .. }) || a.repeat != Repeat::None {
            return err(
                n.pos,
                format!("{what}: `{}` is not a single integer field", a.id),
            );
        }
        Ok(Amount::Field(i))
    }

    fn prim(&self, s: &str, pos: Pos) -> R<Option<Kind>> {
        let (base, le) = match s.strip_suffix("le") {
            Some(b) if b.len() >= 2 => (b, Some(true)),
            _ => match s.strip_suffix("be") {
                Some(b) if b.len() >= 2 => (b, Some(false)),
                _ => (s, None),
            },
        };
        let kind = match base {
            "u1" | "u2" | "u4" | "u8" | "s1" | "s2" | "s4" | "s8" => {
                let bytes = base[1..].parse::<u8>().unwrap_or(1);
                let signed = base.starts_with('s');
                Kind::Int {
                    bytes,
                    signed,
                    le: false,
                }
            }
            "f4" | "f8" => Kind::Float {
                bytes: base[1..].parse::<u8>().unwrap_or(4),
                le: false,
            },
            "str" if le.is_none() => Kind::Str { zero: false },
            "strz" if le.is_none() => Kind::Str { zero: true },
            _ if s.starts_with('b')
                && s[1..].chars().all(|c| c.is_ascii_digit())
                && s.len() > 1 =>
            {
                return err(
                    pos,
                    format!(
                        "bit fields (`{s}`) are not supported: read the whole byte (`u1`) and use `valid` or a mask in your tools"
                    ),
                );
            }
            _ => return Ok(None),
        };
        let single = matches!(kind, Kind::Int { bytes: 1, .. });
        let le = match le {
            Some(le) => le,
            None if single => false,
            None => match (self.endian_le, &kind) {
                (Some(le), _) => le,
                (None, Kind::Int { .. } | Kind::Float { .. }) => {
                    return err(
                        pos,
                        format!(
                            "`{s}` has no byte order: write `{s}be`/`{s}le`, or set `meta: {{endian: be}}`"
                        ),
                    );
                }
                (None, _) => false,
            },
        };
        Ok(Some(match kind {
            Kind::Int { bytes, signed, .. } => Kind::Int { bytes, signed, le },
            Kind::Float { bytes, .. } => Kind::Float { bytes, le },
            k => k,
        }))
    }

    fn type_ref(&self, n: &Node) -> R<Kind> {
        let s = scalar(n, "`type`")?.trim();
        if let Some(k) = self.prim(s, n.pos)? {
            return Ok(k);
        }
        if s.contains('(') {
            return err(n.pos, format!("`{s}`: type parameters are not supported"));
        }
        if s.contains("::") {
            return err(
                n.pos,
                format!(
                    "`{s}`: nested type paths are not supported: declare every type in the top-level `types`"
                ),
            );
        }
        match self.type_names.iter().position(|t| t == s) {
            Some(i) => Ok(Kind::User(i + 1)),
            None => err(
                n.pos,
                format!(
                    "unknown type `{s}` (built-in: u1..u8, s1..s8, f4, f8 with be/le, str, strz; or a type of `types`)"
                ),
            ),
        }
    }

    fn enum_value(&self, n: &Node, enum_: Option<usize>) -> R<i64> {
        if let Ok(v) = int(n, "a case") {
            return Ok(v);
        }
        let s = scalar(n, "a case")?.trim();
        let Some((e, name)) = s.split_once("::") else {
            return err(
                n.pos,
                format!("case `{s}`: write a number or `enum_name::value`"),
            );
        };
        let Some(ei) = self.enums.iter().position(|x| x.name == e) else {
            return err(n.pos, format!("case `{s}`: unknown enum `{e}`"));
        };
        if enum_.is_some_and(|x| x != ei) {
            return err(
                n.pos,
                format!("case `{s}`: the switch field uses another enum"),
            );
        }
        self.enums[ei]
            .values
            .iter()
            .find(|(_, v)| v == name)
            .map(|(k, _)| *k)
            .ok_or((
                n.pos,
                format!("case `{s}`: enum `{e}` has no value `{name}`"),
            ))
    }

    /// A field's `type` that is a switch (`t`, its map `tm`): on an earlier
    /// integer field, a type per value (`_`: the default).
    fn switch(&self, t: &Node, tm: &[(String, Pos, Node)], attrs: &[Attr]) -> R<Kind> {
        only_keys(tm, &["switch-on", "cases"], "a switch")?;
        let on_node =
            get(tm, "switch-on").ok_or((t.pos, "a switch needs `switch-on`".to_owned()))?;
        let on = self.earlier(on_node, attrs, "`switch-on`")?;
        if !matches!(attrs[on].kind, Kind::Int { .. }) {
            return err(on_node.pos, "`switch-on` must name an integer field");
        }
        let cases_node = get(tm, "cases").ok_or((t.pos, "a switch needs `cases`".to_owned()))?;
        let mut cases = Vec::new();
        let mut default = None;
        for (k, kpos, v) in map(cases_node, "`cases`")? {
            let kind = self.type_ref(v)?;
            if k == "_" {
                default = Some(Box::new(kind));
                continue;
            }
            let key = Node {
                pos: *kpos,
                value: Value::Scalar {
                    text: k.clone(),
                    quoted: false,
                },
            };
            let value = self.enum_value(&key, attrs[on].enum_)?;
            cases.push((value, kind));
        }
        Ok(Kind::Switch { on, cases, default })
    }

    /// A field's `enum:`: the enum it names, declared in `enums`.
    fn enum_ref(&self, e: &Node) -> R<usize> {
        let s = scalar(e, "`enum`")?;
        self.enums
            .iter()
            .position(|x| x.name == s)
            .ok_or((e.pos, format!("unknown enum `{s}` (declare it in `enums`)")))
    }

    /// A field's `repeat:` (and `repeat-expr:`).
    fn repeat(&self, m: &[(String, Pos, Node)], attrs: &[Attr]) -> R<Repeat> {
        match get(m, "repeat") {
            None => {
                if let Some(r) = get(m, "repeat-expr") {
                    return err(r.pos, "`repeat-expr` without `repeat: expr`");
                }
                Ok(Repeat::None)
            }
            Some(r) => match scalar(r, "`repeat`")? {
                "eos" => Ok(Repeat::Eos),
                "expr" => {
                    let e = get(m, "repeat-expr")
                        .ok_or((r.pos, "`repeat: expr` needs `repeat-expr`".to_owned()))?;
                    Ok(Repeat::Expr(self.amount(e, attrs, "`repeat-expr`")?))
                }
                "until" => err(
                    r.pos,
                    "`repeat: until` is not supported: use `repeat: eos` or `repeat: expr`",
                ),
                other => err(r.pos, format!("`repeat: {other}`: use `eos` or `expr`")),
            },
        }
    }

    fn attr(&self, n: &Node, attrs: &[Attr]) -> R<Attr> {
        let m = map(n, "a field")?;
        only_keys(
            m,
            &[
                "id",
                "type",
                "size",
                "size-eos",
                "repeat",
                "repeat-expr",
                "if",
                "valid",
                "enum",
                "encoding",
                "contents",
            ],
            "a field",
        )?;
        // Errors about the field point at its `id`.
        let at = m
            .iter()
            .find(|(k, _, _)| k == "id")
            .map_or(n.pos, |(_, p, _)| *p);
        let id = match get(m, "id") {
            Some(i) => ident(i, "a field's `id`")?,
            None => return err(n.pos, "a field needs an `id`"),
        };
        let mut size = match (get(m, "size"), get(m, "size-eos")) {
            (Some(s), None) => Some(self.amount(s, attrs, "`size`")?),
            (None, Some(e)) if scalar(e, "`size-eos`")? == "true" => Some(Amount::Eos),
            (None, Some(e)) => return err(e.pos, "`size-eos` takes `true`"),
            (Some(_), Some(e)) => return err(e.pos, "`size` and `size-eos` together: keep one"),
            (None, None) => None,
        };
        let enum_ = get(m, "enum").map(|e| self.enum_ref(e)).transpose()?;
        let kind = match (get(m, "type"), get(m, "contents")) {
            (Some(_), Some(c)) => {
                return err(
                    c.pos,
                    "`contents` with `type`: a magic has no type, drop `type`",
                );
            }
            (None, Some(c)) => {
                let b = bytes_of(c, "`contents`")?;
                if b.is_empty() {
                    return err(c.pos, "`contents` is empty");
                }
                Kind::Contents(b)
            }
            (None, None) => {
                if size.is_none() {
                    return err(at, format!("field `{id}` has neither `type` nor `size`"));
                }
                Kind::Bytes
            }
            (Some(t), None) => match t.as_map() {
                Some(tm) => self.switch(t, tm, attrs)?,
                None => self.type_ref(t)?,
            },
        };
        sized(m, &kind, &mut size, at, &id)?;
        if enum_.is_some() && !matches!(kind, Kind::Int { .. }) {
            return err(at, format!("`{id}`: `enum` needs an integer type"));
        }
        let repeat = self.repeat(m, attrs)?;
        let cond = match get(m, "if") {
            None => None,
            Some(c) => Some(self.cond(c, attrs)?),
        };
        let valid = match get(m, "valid") {
            None => None,
            Some(v) => Some(self.valid(v, attrs)?),
        };
        if valid.is_some() && !matches!(kind, Kind::Int { .. } | Kind::Float { .. }) {
            return err(
                at,
                format!("`{id}`: `valid` applies to numbers only (use `contents` for a magic)"),
            );
        }
        Ok(Attr {
            id,
            pos: at,
            kind,
            size,
            repeat,
            cond,
            valid,
            enum_,
            doc: doc(m)?,
        })
    }

    fn cond(&self, n: &Node, attrs: &[Attr]) -> R<Cond> {
        let s = scalar(n, "`if`")?.trim();
        // `and`, `or`, `not` as words: a field or an enum value may hold them
        // (`color`, `vector_len`, `kind::handshake`, `knot`).
        let mut words = s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'));
        if s.contains('(') || words.any(|w| ["and", "or", "not"].contains(&w)) {
            return err(
                n.pos,
                format!("`if: {s}`: only one comparison is supported"),
            );
        }
        let ops = [
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("<", Op::Lt),
            (">", Op::Gt),
        ];
        let Some((text, op, rest)) = ops
            .iter()
            .find_map(|(t, op)| s.split_once(t).map(|(a, b)| (a, *op, b)))
        else {
            return err(
                n.pos,
                format!(
                    "`if: {s}`: the subset takes `field OP number` or `field OP field` (OP: == != < <= > >=)"
                ),
            );
        };
        let field_node = Node {
            pos: n.pos,
            value: Value::Scalar {
                text: text.trim().to_owned(),
                quoted: false,
            },
        };
        let field = self.earlier(&field_node, attrs, "`if`")?;
        let value_node = Node {
            pos: n.pos,
            value: Value::Scalar {
                text: rest.trim().to_owned(),
                quoted: false,
            },
        };
        let value = match self.enum_value(&value_node, attrs[field].enum_) {
            Ok(v) => Operand::Number(v),
            // Not a number nor an enum's value: an earlier field, if it is one.
            Err(e) => match attrs.iter().position(|a| a.id == rest.trim()) {
                Some(other) if matches!(attrs[other].kind, Kind::Int { .. }) => {
                    Operand::Field(other)
                }
                Some(_) => {
                    return err(
                        n.pos,
                        format!("`if: {s}`: `{}` is not an integer field", rest.trim()),
                    );
                }
                None => return Err(e),
            },
        };
        Ok(Cond { field, op, value })
    }

    /// A bound of `valid`: a number, or an earlier integer field of the same
    /// `seq` of at most 4 bytes (so a finding can carry its value).
    fn bound(&self, n: &Node, attrs: &[Attr], what: &str) -> R<Bound> {
        if let Ok(v) = number(n, what) {
            return Ok(Bound::Num(v));
        }
        let s = scalar(n, what)?.trim();
        let index = self.earlier(n, attrs, what)?;
        match attrs[index].kind {
            Kind::Int { bytes, .. } if bytes <= 4 && attrs[index].repeat == Repeat::None => {
                Ok(Bound::Field {
                    index,
                    name: s.to_owned(),
                })
            }
            Kind::Int { .. } if attrs[index].repeat == Repeat::None => err(
                n.pos,
                format!("{what}: `{s}` has 8 bytes: a bound field has at most 4 (u4, s4)"),
            ),
            _ => err(
                n.pos,
                format!("{what}: `{s}` is not a single integer field"),
            ),
        }
    }

    fn valid(&self, n: &Node, attrs: &[Attr]) -> R<Valid> {
        let v = match &n.value {
            Value::Scalar { .. } => Valid::Eq(self.bound(n, attrs, "`valid`")?),
            Value::Map(m) => {
                only_keys(m, &["eq", "min", "max", "any-of"], "`valid`")?;
                if let Some(e) = get(m, "eq") {
                    Valid::Eq(self.bound(e, attrs, "`valid.eq`")?)
                } else if let Some(a) = get(m, "any-of") {
                    let items = a
                        .as_seq()
                        .ok_or((a.pos, "`any-of` takes a list".to_owned()))?;
                    let mut xs = Vec::new();
                    for i in items {
                        xs.push(number(i, "`any-of`")?);
                    }
                    Valid::AnyOf(xs)
                } else {
                    let min = get(m, "min")
                        .map(|x| self.bound(x, attrs, "`valid.min`"))
                        .transpose()?;
                    let max = get(m, "max")
                        .map(|x| self.bound(x, attrs, "`valid.max`"))
                        .transpose()?;
                    if let (Some(Bound::Field { .. }), Some(Bound::Field { .. })) = (&min, &max) {
                        let at = get(m, "max").map_or(n.pos, |x| x.pos);
                        return err(
                            at,
                            "`valid` names at most one field: make the other bound a number",
                        );
                    }
                    if min.is_none() && max.is_none() {
                        return err(n.pos, "`valid` needs eq, min, max or any-of");
                    }
                    Valid::Range { min, max }
                }
            }
            Value::Seq(_) => {
                return err(
                    n.pos,
                    "`valid` takes a value or a mapping (eq, min, max, any-of)",
                );
            }
        };
        Ok(v)
    }

    /// `sequence:` of `-lwarscope`: the field (through `top`, which names a
    /// top-level field), its recency rule, and its width when `bits:` narrows
    /// it.
    fn sequence_keys(
        s: &Node,
        root: &TypeDef,
        top: &dyn Fn(&Node, &str) -> R<usize>,
    ) -> R<((usize, Recency), Option<u32>)> {
        let mut sequence_bits = None;
        let sm = map(s, "`sequence`")?;
        only_keys(sm, &["field", "recency", "bits"], "`sequence`")?;
        let f = get(sm, "field").ok_or((s.pos, "`sequence` needs `field`".to_owned()))?;
        let field = top(f, "`sequence.field`")?;
        let width = match root.attrs[field].kind {
            Kind::Int { bytes, .. } => u32::from(bytes) * 8,
            _ => 32,
        };
        if let Some(b) = get(sm, "bits") {
            let v = int(b, "`bits`")?;
            if v < 1 || v > i64::from(width.min(32)) {
                return err(
                    b.pos,
                    format!(
                        "`bits: {v}`: the numbers' width is 1 to {} bits (the field's)",
                        width.min(32)
                    ),
                );
            }
            sequence_bits = Some(v as u32);
        }
        let recency = match get(sm, "recency") {
            None => Recency::Serial,
            Some(r) => match &r.value {
                Value::Scalar { text, .. } if text == "serial" => Recency::Serial,
                Value::Map(rm) => {
                    only_keys(rm, &["ahead"], "`recency`")?;
                    let a = get(rm, "ahead")
                        .ok_or((r.pos, "`recency` takes `serial` or `{ahead: N}`".to_owned()))?;
                    let v = int(a, "`ahead`")?;
                    let bits = sequence_bits.unwrap_or(width);
                    if v < 1 || (bits < 63 && v >= 1i64 << bits) {
                        return err(
                            a.pos,
                            format!(
                                "`ahead: {v}` must be 1 or more and below the cycle (2^{bits})"
                            ),
                        );
                    }
                    Recency::Ahead(v as u32)
                }
                _ => return err(r.pos, "`recency` takes `serial` or `{ahead: N}`"),
            },
        };
        if let Kind::Int { bytes: 8, .. } = root.attrs[field].kind
            && sequence_bits.is_none()
        {
            return err(
                f.pos,
                "a sequence field of 64 bits is not supported: use at most 32 bits (`bits: N`)",
            );
        }
        Ok(((field, recency), sequence_bits))
    }

    /// `server:` of `-lwarscope`: its port, the message types each side
    /// sends (values of the message-type enum `enum_of_type`), and the client
    /// addresses it drops.
    fn server_keys(&self, s: &Node, enum_of_type: Option<usize>) -> R<ServerKeys> {
        let mut k = ServerKeys::default();
        let sm = map(s, "`server`")?;
        only_keys(sm, &["port", "sends", "receives", "drops"], "`server`")?;
        if let Some(d) = get(sm, "drops") {
            k.drops = drops(d)?;
        }
        if let Some(p) = get(sm, "port") {
            let v = int(p, "`port`")?;
            k.port = Some(
                u16::try_from(v).map_err(|_| (p.pos, format!("`port: {v}` is not a UDP port")))?,
            );
        }
        for (key, out) in [("sends", &mut k.sends), ("receives", &mut k.receives)] {
            if let Some(list) = get(sm, key) {
                let Some(e) = enum_of_type else {
                    return err(
                        list.pos,
                        format!("`server.{key}` needs `message-type` with an enum"),
                    );
                };
                for item in list
                    .as_seq()
                    .ok_or((list.pos, format!("`{key}` takes a list")))?
                {
                    let name = scalar(item, key)?;
                    let v = self.enums[e]
                        .values
                        .iter()
                        .find(|(_, x)| x == name)
                        .map(|(k, _)| *k);
                    out.push(v.ok_or((
                        item.pos,
                        format!("`{name}` is not a value of enum `{}`", self.enums[e].name),
                    ))?);
                }
            }
        }
        Ok(k)
    }

    /// A key's field (`what` names the key in errors): an integer field of
    /// the top-level `seq` present in every packet, or with `keys_are` (a
    /// protobuf description's keys) any integer field the keys may name.
    fn top_field(&self, root: &TypeDef, node: &Node, what: &str) -> R<usize> {
        let s = scalar(node, what)?.trim();
        if let Some(keys_are) = &self.keys_are {
            return root
                .attrs
                .iter()
                .position(|a| a.id == s && matches!(a.kind, Kind::Int { .. }))
                .ok_or((node.pos, format!("{what}: `{s}` is not {keys_are}")));
        }
        if s.contains('.') {
            return err(
                node.pos,
                format!(
                    "{what}: `{s}`: name a field of the top-level `seq` (nested fields are not supported here)"
                ),
            );
        }
        root.attrs
            .iter()
            .position(|a| a.id == s && a.repeat == Repeat::None && a.cond.is_none())
            .filter(|&i| matches!(root.attrs[i].kind, Kind::Int { .. }))
            .ok_or((node.pos, format!("{what}: `{s}` is not an integer field of the top-level `seq` (present in every packet)")))
    }

    /// `rates:`, per value of the message type's enum: (raw value, Hz).
    fn rates(&self, r: &Node, enum_of_type: Option<usize>) -> R<Vec<(i64, f64)>> {
        let Some(e) = enum_of_type else {
            return err(
                r.pos,
                "`rates` needs `message-type` with an enum: rates are per message type",
            );
        };
        let mut rates = Vec::new();
        for (k, kpos, v) in map(r, "`rates`")? {
            let value = self.enums[e]
                .values
                .iter()
                .find(|(_, x)| x == k)
                .map(|(raw, _)| *raw);
            let value = value.ok_or((
                *kpos,
                format!("`{k}` is not a value of enum `{}`", self.enums[e].name),
            ))?;
            let hz = number(v, "a rate (Hz)")?;
            if hz <= 0.0 || !hz.is_finite() {
                return err(v.pos, "a rate is a positive number of Hz");
            }
            rates.push((value, hz));
        }
        Ok(rates)
    }

    fn semantics(&self, n: &Node, root: &TypeDef) -> R<Semantics> {
        let m = map(n, "`-lwarscope`")?;
        only_keys(
            m,
            &[
                "title",
                "recognise",
                "session",
                "server",
                "message-type",
                "sequence",
                "ack",
                "timeout",
                "rates",
                "trailing",
                "mtu",
            ],
            "`-lwarscope`",
        )?;
        let top = |node: &Node, what: &str| self.top_field(root, node, what);
        let title = match get(m, "title") {
            Some(t) => shown(scalar(t, "`title`")?),
            None => String::new(),
        };
        let (magic, magic_offset, port) = match get(m, "recognise") {
            None => {
                return err(
                    n.pos,
                    "`-lwarscope` needs `recognise:` (`port:`, `magic:` with `offset:`, or both)",
                );
            }
            Some(r) => recognise(r)?,
        };
        let session = match get(m, "session") {
            None => None,
            Some(s) => session_key(s, &top)?,
        };
        let message_type = get(m, "message-type")
            .map(|t| top(t, "`message-type`"))
            .transpose()?;
        let enum_of_type = message_type.and_then(|i| root.attrs[i].enum_);
        let server = match get(m, "server") {
            Some(s) => self.server_keys(s, enum_of_type)?,
            None => ServerKeys::default(),
        };
        let server_port = server.port.or(port);
        let (server_sends, client_sends) = (server.sends, server.receives);
        let drops_ipv4_last_byte = server.drops;
        let (sequence, sequence_bits) = match get(m, "sequence") {
            None => (None, None),
            Some(s) => {
                let (sequence, bits) = Self::sequence_keys(s, root, &top)?;
                (Some(sequence), bits)
            }
        };
        let ack = match get(m, "ack") {
            None => Ack::None,
            Some(a) => ack_keys(a, sequence.is_some(), &top)?,
        };
        let timeout_ms = match get(m, "timeout") {
            None => 10_000,
            Some(t) => duration_ms(t)?,
        };
        let rates = match get(m, "rates") {
            None => Vec::new(),
            Some(r) => self.rates(r, enum_of_type)?,
        };
        let trailing_malformed = match get(m, "trailing") {
            None => true,
            Some(t) => trailing(t)?,
        };
        let mtu = get(m, "mtu")
            .map(|x| {
                int(x, "`mtu`").and_then(|v| {
                    usize::try_from(v).map_err(|_| (x.pos, "`mtu` is negative".to_owned()))
                })
            })
            .transpose()?;
        Ok(Semantics {
            title,
            magic,
            magic_offset,
            port,
            session,
            server_port,
            server_sends,
            client_sends,
            drops_ipv4_last_byte,
            message_type,
            sequence,
            sequence_bits,
            ack,
            timeout_ms,
            rates,
            trailing_malformed,
            mtu,
        })
    }
}

/// What `server:` says.
#[derive(Default)]
struct ServerKeys {
    port: Option<u16>,
    sends: Vec<i64>,
    receives: Vec<i64>,
    drops: Vec<u8>,
}

/// `server: drops: {ipv4-last-byte: [0, 255]}`: the last bytes of the client
/// addresses the server drops.
fn drops(n: &Node) -> R<Vec<u8>> {
    const USE: &str = "`drops` takes `{ipv4-last-byte: [BYTES]}` (the client addresses the server never answers, as `[0, 255]`)";
    let m = n.as_map().ok_or((n.pos, USE.to_owned()))?;
    only_keys(m, &["ipv4-last-byte"], "`drops`")?;
    let list = get(m, "ipv4-last-byte").ok_or((n.pos, USE.to_owned()))?;
    let items = list.as_seq().ok_or((list.pos, USE.to_owned()))?;
    let mut out = Vec::new();
    for i in items {
        let v = int(i, "`ipv4-last-byte`")?;
        out.push(u8::try_from(v).or_else(|_| {
            err(
                i.pos,
                format!("`ipv4-last-byte`: {v} is not a byte (0-255)"),
            )
        })?);
    }
    if out.is_empty() {
        return err(
            list.pos,
            "`ipv4-last-byte` is empty: list at least one byte",
        );
    }
    Ok(out)
}

/// What a field's kind says of its `size` (a string needs one, a number
/// takes none, a magic's is its bytes') and of its `encoding`; `at` is the
/// field's `id`.
fn sized(
    m: &[(String, Pos, Node)],
    kind: &Kind,
    size: &mut Option<Amount>,
    at: Pos,
    id: &str,
) -> R<()> {
    match kind {
        Kind::Str { zero: false } if size.is_none() => {
            return err(
                at,
                format!("`{id}`: `type: str` needs `size` (or `size-eos: true`), or use `strz`"),
            );
        }
        Kind::Str { .. } => {
            if let Some(e) = get(m, "encoding") {
                let enc = scalar(e, "`encoding`")?.to_ascii_uppercase();
                if !["UTF-8", "ASCII", "UTF8"].contains(&enc.as_str()) {
                    return err(
                        e.pos,
                        format!("encoding `{enc}` is not supported: use UTF-8 or ASCII"),
                    );
                }
            }
        }
        Kind::Int { .. } | Kind::Float { .. } if size.is_some() => {
            return err(
                at,
                format!("`{id}`: `size` on a number: drop `size`, the type says it"),
            );
        }
        Kind::Contents(b) if size.is_none() => *size = Some(Amount::Fixed(b.len() as u64)),
        _ => {}
    }
    Ok(())
}

/// An enum's values: (raw value, label), each given as `KEY: label` or
/// `KEY: {id: label}`.
fn enum_values(node: &Node) -> R<Vec<(i64, String)>> {
    let mut values = Vec::new();
    for (k, kpos, v) in map(node, "an enum")? {
        let key = Node {
            pos: *kpos,
            value: Value::Scalar {
                text: k.clone(),
                quoted: false,
            },
        };
        let raw = int(&key, "an enum key")?;
        let label = match v.as_map() {
            Some(m) => match get(m, "id") {
                Some(id) => ident(id, "an enum value's `id`")?,
                None => {
                    return err(v.pos, "an enum value given as a mapping needs `id`");
                }
            },
            None => ident(v, "an enum value")?,
        };
        values.push((raw, label));
    }
    Ok(values)
}

/// `trailing:`: bytes after the layout are `malformed` (true) or `allow`ed.
fn trailing(t: &Node) -> R<bool> {
    match scalar(t, "`trailing`")? {
        "malformed" => Ok(true),
        "allow" => Ok(false),
        other => err(
            t.pos,
            format!("`trailing: {other}`: use `malformed` or `allow`"),
        ),
    }
}

/// `recognise:`: the magic bytes, their offset and the port.
fn recognise(r: &Node) -> R<(Vec<u8>, usize, Option<u16>)> {
    let (mut magic, mut magic_offset, mut port) = (Vec::new(), 0, None);
    let rm = map(r, "`recognise`")?;
    only_keys(rm, &["port", "magic", "offset"], "`recognise`")?;
    if let Some(p) = get(rm, "port") {
        let v = int(p, "`port`")?;
        port = Some(
            u16::try_from(v)
                .ok()
                .filter(|p| *p != 0)
                .ok_or((p.pos, format!("`port: {v}` is not a UDP port (1-65535)")))?,
        );
    }
    if let Some(mg) = get(rm, "magic") {
        magic = bytes_of(mg, "`magic`")?;
    }
    if let Some(o) = get(rm, "offset") {
        magic_offset = usize::try_from(int(o, "`offset`")?)
            .map_err(|_| (o.pos, "`offset` is negative".to_owned()))?;
    }
    if magic.is_empty() && port.is_none() {
        return err(r.pos, "`recognise` needs `port:` or `magic:`");
    }
    Ok((magic, magic_offset, port))
}

/// `session:`: `address-pair` (`None`) or the field that names it.
fn session_key(s: &Node, top: &dyn Fn(&Node, &str) -> R<usize>) -> R<Option<usize>> {
    match &s.value {
        Value::Scalar { text, .. } if text == "address-pair" => Ok(None),
        Value::Map(sm) => {
            only_keys(sm, &["field"], "`session`")?;
            let f = get(sm, "field").ok_or((
                s.pos,
                "`session` takes `address-pair` or `{field: FIELD}`".to_owned(),
            ))?;
            Ok(Some(top(f, "`session.field`")?))
        }
        _ => {
            let text = s.as_str().unwrap_or("");
            err(
                s.pos,
                format!(
                    "`session: {text}`: use `address-pair` or `{{field: FIELD}}` (a field of the top-level `seq` in every packet)"
                ),
            )
        }
    }
}

/// `ack:`: none, cumulative or a bitfield with its anchor; acks need
/// `sequence` (`sequenced`).
fn ack_keys(a: &Node, sequenced: bool, top: &dyn Fn(&Node, &str) -> R<usize>) -> R<Ack> {
    const TAKES: &str =
        "`ack` takes `none`, `{cumulative: FIELD}` or `{bitfield: FIELD, anchor: FIELD}`";
    match &a.value {
        Value::Scalar { text, .. } if text == "none" => Ok(Ack::None),
        Value::Map(am) => {
            only_keys(am, &["cumulative", "bitfield", "anchor"], "`ack`")?;
            if !sequenced {
                return err(
                    a.pos,
                    "`ack` needs `sequence`: acks name the peer's numbers",
                );
            }
            match (get(am, "cumulative"), get(am, "bitfield")) {
                (Some(c), None) => Ok(Ack::Cumulative {
                    field: top(c, "`ack.cumulative`")?,
                }),
                (None, Some(b)) => {
                    let field = top(b, "`ack.bitfield`")?;
                    let anchor = match get(am, "anchor") {
                        Some(x) => top(x, "`ack.anchor`")?,
                        None => {
                            return err(
                                a.pos,
                                "`ack.bitfield` needs `anchor:` (the field bit 0 counts back from)",
                            );
                        }
                    };
                    Ok(Ack::Bitfield { field, anchor })
                }
                _ => err(a.pos, TAKES),
            }
        }
        _ => err(a.pos, TAKES),
    }
}

/// `10s`, `500ms`, or a number of milliseconds.
fn duration_ms(n: &Node) -> R<u64> {
    let s = scalar(n, "`timeout`")?.trim();
    let (num, scale) = if let Some(v) = s.strip_suffix("ms") {
        (v, 1.0)
    } else if let Some(v) = s.strip_suffix('s') {
        (v, 1000.0)
    } else {
        (s, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok((v * scale) as u64),
        _ => err(
            n.pos,
            format!("`timeout: {s}`: write a duration such as `10s` or `500ms`"),
        ),
    }
}
