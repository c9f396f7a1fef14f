//! A description compiled for decoding ([`Compiled`]), and the decoder: one
//! walk over a payload that hands every field, in wire order with its byte
//! span, to an [`Events`] sink. It allocates nothing and cannot panic on any
//! input: every read is bounds-checked, every count is bounded by the bytes
//! left, and a decode error names the field, the byte offset and what was
//! needed.

use super::ksy::{
    Amount, Attr, Bound, Cond, Kind, Ksy, MAX_ATTRS, MAX_UNFOLDED_BYTES, MAX_VALID_FIELDS, Operand,
    Repeat, Valid,
};
use crate::engine::finding::{Arg, ArgsReader, ArgsWriter};
use crate::proto::field::{Field, FieldDef, FieldType, GroupDefs, Value};
use std::collections::HashMap;

/// Types nested inside one another.
const MAX_DEPTH: usize = 16;
/// Field occurrences and copies of types a description may unfold into: each
/// use of a type (a field of that type, a switch case) copies its fields, so
/// a few types used in one another several times unfold exponentially (eight
/// switch cases nine deep: 134 million copies, from a kilobyte of text).
pub const MAX_UNFOLDED: usize = 16_384;

/// A field occurrence, compiled: its registered field, and its kind.
#[derive(Debug)]
pub struct CAttr {
    pub attr: Attr,
    /// Index in [`Compiled::defs`].
    pub field: u16,
    pub kind: CKind,
    /// Its registered field has a `valid` to judge.
    pub checked: bool,
    /// In a quiet walk of a nested type, this field and the ones after it
    /// that tell nothing: skipped together by their bytes ([`QuietRun`]).
    pub quiet_run: Option<QuietRun>,
    /// The run of a quiet walk that judges no `valid` ([`Events::judges`]):
    /// a field whose only check is its `valid` is skipped like the rest.
    pub unjudged_run: Option<QuietRun>,
    /// Where the walk keeps its value, if a later field of its `seq` reads
    /// it: its place among those ([`CType::kept`]).
    pub slot: Option<u8>,
    /// Its registered field's enum and `valid` ([`DefSpec::enum_`],
    /// [`DefSpec::valid`]), copied here when compiled: the walk reads them
    /// beside the field, not from the registered field's spec.
    pub enum_: Option<usize>,
    pub valid: Option<Valid>,
}

/// Fields of a nested type that a quiet walk (a sink that takes none of
/// their group's fields: [`Events::wants_any`]) skips by their bytes: each
/// takes a fixed size ([`CType::fixed`]'s rules), has no `valid`, and no
/// later field reads its value. Where fewer bytes are left, the walk goes
/// field by field, to tell the error of the one that runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietRun {
    /// The index of the first field after the run.
    pub next: usize,
    pub bytes: usize,
}

#[derive(Debug)]
pub enum CKind {
    Int {
        bytes: u8,
        signed: bool,
        le: bool,
    },
    Float {
        bytes: u8,
        le: bool,
    },
    Str {
        zero: bool,
    },
    Bytes,
    Contents(Vec<u8>),
    User(CType),
    Switch {
        on: usize,
        cases: Vec<(i64, CType)>,
        default: Option<CType>,
    },
}

#[derive(Debug, Default)]
pub struct CType {
    pub attrs: Vec<CAttr>,
    /// The bytes the type always takes, when nothing in it is checked or
    /// decides a layout (integers and floats without a `valid`, fixed
    /// counts and sizes, nested types alike): a walk whose sink takes none
    /// of its fields skips it by this size ([`Events::wants_any`]).
    pub fixed: Option<usize>,
    /// The bytes it always takes for a walk that judges no `valid`
    /// ([`Events::judges`]): as [`CType::fixed`], a `valid` aside.
    pub unjudged: Option<usize>,
    /// Every field an integer, a float or a plain type, one element each
    /// (no `if`, `size` or `repeat`): once its bytes ([`CType::unjudged`])
    /// are there, no field of it can fail or decide another's layout, so a
    /// walk that judges nothing tells its fields without the checks.
    pub plain: bool,
    /// Its fields whose values later fields read (an `if`, a count or a
    /// size, a switch, a `valid` bound): a walk keeps only theirs.
    pub kept: usize,
}

/// A registered field before it is leaked: its name, label, type and doc,
/// and the `valid` it is checked against.
#[derive(Debug, Clone)]
pub struct DefSpec {
    pub name: String,
    pub label: String,
    pub ty: FieldType,
    pub doc: String,
    pub valid: Option<Valid>,
    /// Whether the earlier field its `valid` names (if any) is signed.
    pub bound_signed: bool,
    /// The enum of an integer field.
    pub enum_: Option<usize>,
}

/// Why a payload does not fit the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrKind {
    /// The layout needs more bytes than are left.
    Short = 0,
    /// `contents` (a magic) not as described.
    Contents = 1,
    /// Bytes left after the layout ends.
    Trailing = 2,
    /// The message type's value is not in its enum.
    UnknownType = 3,
    // A protobuf description's (`protobuf.rs`): what no proto3 decoder
    // accepts.
    /// A varint (a key, a length, a value) runs past the end.
    TruncatedVarint = 4,
    /// A varint longer than 10 bytes, or over 64 bits.
    BadVarint = 5,
    /// A key with wire type 6 or 7, field number 0, or over 32 bits.
    BadKey = 6,
    /// A length, or a fixed 32- or 64-bit value, past the end of the
    /// datagram or of its enclosing message.
    PastEnd = 7,
    /// A known field sent with a wire type its type contradicts.
    WireType = 8,
    /// A `string` that is not UTF-8.
    NotUtf8 = 9,
    /// A group (of an unknown field) that does not end.
    Group = 10,
}

impl ErrKind {
    pub const ALL: [ErrKind; 11] = [
        ErrKind::Short,
        ErrKind::Contents,
        ErrKind::Trailing,
        ErrKind::UnknownType,
        ErrKind::TruncatedVarint,
        ErrKind::BadVarint,
        ErrKind::BadKey,
        ErrKind::PastEnd,
        ErrKind::WireType,
        ErrKind::NotUtf8,
        ErrKind::Group,
    ];

    /// The reasons of a `.ksy` description, by ordinal.
    pub const KSY: [ErrKind; 4] = [
        ErrKind::Short,
        ErrKind::Contents,
        ErrKind::Trailing,
        ErrKind::UnknownType,
    ];

    /// The reasons of a protobuf description, by ordinal.
    pub const PROTOBUF: [ErrKind; 7] = [
        ErrKind::TruncatedVarint,
        ErrKind::BadVarint,
        ErrKind::BadKey,
        ErrKind::PastEnd,
        ErrKind::WireType,
        ErrKind::NotUtf8,
        ErrKind::Group,
    ];

    /// Its ordinal among its format's reasons ([`ErrKind::KSY`],
    /// [`ErrKind::PROTOBUF`]): what the malformed counters are indexed by.
    pub const fn ordinal(self) -> usize {
        let i = self as usize;
        if i >= 4 { i - 4 } else { i }
    }

    pub const fn name(self) -> &'static str {
        match self {
            ErrKind::Short => "short",
            ErrKind::Contents => "contents",
            ErrKind::Trailing => "trailing-bytes",
            ErrKind::UnknownType => "unknown-type",
            ErrKind::TruncatedVarint => "truncated-varint",
            ErrKind::BadVarint => "bad-varint",
            ErrKind::BadKey => "bad-key",
            ErrKind::PastEnd => "past-end",
            ErrKind::WireType => "wire-type",
            ErrKind::NotUtf8 => "not-utf8",
            ErrKind::Group => "group",
        }
    }

    fn from_u64(v: u64) -> ErrKind {
        ErrKind::ALL
            .into_iter()
            .find(|k| *k as u64 == v)
            .unwrap_or(ErrKind::Short)
    }
}

/// A decode error in a finding's numbers: its kind, field, offset, and the
/// bytes needed (or the value) and left.
impl Arg for DecodeErr {
    const BITS: u32 = 8 + 16 + 48 + 64 + 48;
    fn put(self, w: &mut ArgsWriter) {
        w.put(self.kind as u8);
        w.put(self.field);
        w.put(self.offset);
        w.put(self.need);
        w.put(self.have);
    }
    fn take(r: &mut ArgsReader<'_>) -> Self {
        let kind: u8 = r.take();
        DecodeErr {
            kind: ErrKind::from_u64(u64::from(kind)),
            field: r.take(),
            offset: r.take(),
            need: r.take(),
            have: r.take(),
        }
    }
}

/// A decode error: what, which field, at which byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeErr {
    pub kind: ErrKind,
    /// The field (index in the defs); for `Trailing`, the last field decoded.
    pub field: u16,
    pub offset: usize,
    /// Bytes needed from `offset` (`Short`), or the value (`UnknownType`).
    pub need: u64,
    /// Bytes left from `offset`.
    pub have: usize,
}

impl DecodeErr {
    /// Whether the error is the data running out (so a capture cut may be
    /// the cause).
    pub fn is_short(&self) -> bool {
        matches!(
            self.kind,
            ErrKind::Short | ErrKind::TruncatedVarint | ErrKind::PastEnd
        )
    }
}

/// The fewest bytes one element of field `a` takes (its `if` and `repeat`
/// aside: they are the whole field's). Zero when it may take none.
fn element_min_size(ksy: &Ksy, a: &Attr, depth: usize) -> u64 {
    match a.size {
        Some(Amount::Fixed(n)) => n,
        Some(Amount::Field(_) | Amount::Eos) => 0,
        None => kind_min_size(ksy, &a.kind, depth),
    }
}

fn kind_min_size(ksy: &Ksy, kind: &Kind, depth: usize) -> u64 {
    if depth > MAX_DEPTH {
        return 0;
    }
    match kind {
        Kind::Int { bytes, .. } | Kind::Float { bytes, .. } => u64::from(*bytes),
        Kind::Contents(b) => b.len() as u64,
        // Up to its NUL, the NUL included.
        Kind::Str { zero: true } => 1,
        Kind::Str { zero: false } | Kind::Bytes => 0,
        Kind::User(u) => ksy.types.get(*u).map_or(0, |t| {
            t.attrs
                .iter()
                .filter(|a| a.cond.is_none() && a.repeat == Repeat::None)
                .map(|a| element_min_size(ksy, a, depth + 1))
                .fold(0u64, u64::saturating_add)
        }),
        // A value without a case decodes nothing.
        Kind::Switch { default: None, .. } => 0,
        Kind::Switch {
            cases,
            default: Some(d),
            ..
        } => cases
            .iter()
            .map(|(_, k)| k)
            .chain(std::iter::once(&**d))
            .map(|k| kind_min_size(ksy, k, depth + 1))
            .min()
            .unwrap_or(0),
    }
}

/// Whether a field's layout depends on the value of the field at `i` of the
/// same `seq`: a switch on it, an `if`, a size or a count naming it.
fn depends_on(ca: &CAttr, i: usize) -> bool {
    let a = &ca.attr;
    let names = |x: Option<Amount>| matches!(x, Some(Amount::Field(f)) if f == i);
    let cond = a
        .cond
        .is_some_and(|c| c.field == i || matches!(c.value, Operand::Field(f) if f == i));
    let count = matches!(a.repeat, Repeat::Expr(Amount::Field(f)) if f == i);
    let switch = matches!(ca.kind, CKind::Switch { on, .. } if on == i);
    cond || count || switch || names(a.size)
}

/// The bytes a type of these fields always takes ([`CType::fixed`]), if it
/// has no `if`, no count or size but a fixed one, no `valid` (when
/// `judged`: [`CType::unjudged`] is the size for a walk that judges none),
/// no contents, string or switch, and its nested types are alike.
fn fixed_size(attrs: &[CAttr], specs: &[DefSpec], judged: bool) -> Option<usize> {
    let mut total: usize = 0;
    for ca in attrs {
        total = total.checked_add(fixed_field(ca, specs, judged)?)?;
    }
    Some(total)
}

/// The bytes one field (all its elements) always takes, by the rules of
/// [`fixed_size`].
fn fixed_field(ca: &CAttr, specs: &[DefSpec], judged: bool) -> Option<usize> {
    let a = &ca.attr;
    if a.cond.is_some() {
        return None;
    }
    let count = match a.repeat {
        Repeat::None => 1,
        Repeat::Expr(Amount::Fixed(n)) => usize::try_from(n).ok()?,
        _ => return None,
    };
    let checked = specs
        .get(usize::from(ca.field))
        .is_none_or(|s| judged && s.valid.is_some());
    let natural = match &ca.kind {
        CKind::Int { bytes, .. } | CKind::Float { bytes, .. } if !checked => {
            Some(usize::from(*bytes))
        }
        CKind::User(t) if judged => t.fixed,
        CKind::User(t) => t.unjudged,
        CKind::Bytes => None,
        _ => return None,
    };
    let one = match (a.size, natural) {
        (None, Some(n)) => n,
        // A size holds the element: what it holds must fit, or the walk
        // has an error to tell.
        (Some(Amount::Fixed(n)), inner) => {
            let n = usize::try_from(n).ok()?;
            if inner.is_some_and(|i| i > n) {
                return None;
            }
            if inner.is_none() && !matches!(ca.kind, CKind::Bytes) {
                return None;
            }
            n
        }
        _ => return None,
    };
    one.checked_mul(count)
}

/// The fields of a `seq` whose values later fields read (an `if`, a count
/// or a size, a switch, a `valid` bound), as a mask by index.
fn read_later(attrs: &[CAttr], specs: &[DefSpec]) -> u64 {
    let mut mask = 0u64;
    let mut mark = |i: usize| {
        mask |= u32::try_from(i)
            .ok()
            .and_then(|i| 1u64.checked_shl(i))
            .unwrap_or(0);
    };
    for ca in attrs {
        let a = &ca.attr;
        if let Some(c) = a.cond {
            mark(c.field);
            if let Operand::Field(f) = c.value {
                mark(f);
            }
        }
        let count = match a.repeat {
            Repeat::Expr(n) => Some(n),
            _ => None,
        };
        for amount in [a.size, count].into_iter().flatten() {
            if let Amount::Field(f) = amount {
                mark(f);
            }
        }
        if let CKind::Switch { on, .. } = ca.kind {
            mark(on);
        }
        let bounds = match specs
            .get(usize::from(ca.field))
            .and_then(|s| s.valid.as_ref())
        {
            Some(Valid::Eq(b)) => [Some(b), None],
            Some(Valid::Range { min, max }) => [min.as_ref(), max.as_ref()],
            _ => [None, None],
        };
        for f in bounds.into_iter().flatten().filter_map(Bound::field) {
            mark(f);
        }
    }
    mask
}

/// Sets each field's [`CAttr::checked`], [`CAttr::quiet_run`] and
/// [`CAttr::slot`]; returns [`CType::kept`].
fn plan_fields(attrs: &mut [CAttr], specs: &[DefSpec]) -> usize {
    let read = read_later(attrs, specs);
    let mut kept = 0;
    for (i, ca) in attrs.iter_mut().enumerate() {
        if (read >> i) & 1 == 1 {
            ca.slot = u8::try_from(kept).ok();
            kept += 1;
        }
    }
    // The runs of a walk that judges `valid`s, and of one that does not.
    let mut after: [Option<QuietRun>; 2] = [None, None];
    for (i, ca) in attrs.iter_mut().enumerate().rev() {
        let spec = specs.get(usize::from(ca.field));
        ca.checked = spec.is_some_and(|s| s.valid.is_some());
        ca.enum_ = spec.and_then(|s| s.enum_);
        ca.valid = spec.and_then(|s| s.valid.clone());
        let read_later = (read >> i) & 1 == 1;
        for (judged, after) in [true, false].into_iter().zip(&mut after) {
            let own = fixed_field(ca, specs, judged).filter(|_| !read_later);
            *after = own.and_then(|n| match *after {
                Some(r) => Some(QuietRun {
                    next: r.next,
                    bytes: n.checked_add(r.bytes)?,
                }),
                None => Some(QuietRun {
                    next: i + 1,
                    bytes: n,
                }),
            });
        }
        [ca.quiet_run, ca.unjudged_run] = after;
    }
    kept
}

/// What the decoder tells as it walks.
pub trait Events {
    fn field(&mut self, _field: Field<'_>) {}
    /// A field of a layout, `at` its registered field's index in
    /// [`Compiled::defs`] (what a sink may keep by field, as
    /// [`Compiled::line_labels`]): [`Events::field`] unless the sink reads it.
    fn field_at(&mut self, _at: u16, field: Field<'_>) {
        self.field(field);
    }
    fn enter(&mut self, node: Field<'_>) {
        self.field(node);
    }
    fn leave(&mut self) {}
    /// Whether [`Events::field`] takes any field of a group (a node's
    /// type): `FieldSink::wants_any`. Told no, the walk still decodes the
    /// group (its integers, violations and errors are told) but hands none
    /// of its fields over.
    fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
        true
    }
    /// An integer field of the root type, its value, in wire order (the
    /// keys an analysis reads: the message type, the sequence number, the
    /// acks; a nested type's integers are not told).
    fn int(&mut self, _field: u16, _value: i64) {}
    /// Whether the sink has all it wants, asked after each field of the
    /// root type: then the walk stops there and returns the offset reached
    /// (the error of a message type outside its enum, if one was read),
    /// without reading on or judging the bytes after it.
    fn done(&self) -> bool {
        false
    }
    /// Whether the sink is told the numbers outside their `valid`
    /// ([`Events::violation`]). One that is not has no `valid` judged: a
    /// quiet walk skips the fields whose only check it is with the rest
    /// ([`CAttr::unjudged_run`], [`CType::unjudged`]).
    fn judges(&self) -> bool {
        true
    }
    /// A number outside its `valid`; `bound`, the value of the earlier field
    /// its `valid` names, if it names one.
    fn violation(&mut self, _field: u16, _offset: usize, _value: f64, _bound: Option<i64>) {}
    /// The node open (told by [`Events::enter`]) is cut short: the bytes
    /// ran out inside it, which reach to `end`. Told before its
    /// [`Events::leave`]. The tree gives the node the bytes present, as
    /// the native protocols' trees give a message cut short.
    fn cut(&mut self, _end: usize) {}
}

/// Which side's message a walk reads (a protobuf description whose
/// directions carry two messages; a layout reads the same either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The message its content tells (only one field decides: see
    /// [`Messages::classify`]); the client's when nothing does.
    Any,
    Client,
    Server,
}

/// A walk of its own in place of the layout's: a protobuf description's
/// messages (`protobuf::Schema`), which this decoder drives without knowing
/// them, so that the decoder stays below the formats built on it.
pub trait Messages: Send + Sync + std::fmt::Debug {
    /// Decodes `p` as the message of `side`, telling `ev` every field;
    /// returns the bytes decoded.
    fn walk(
        &'static self,
        c: &'static Compiled,
        p: &[u8],
        side: Side,
        ev: &mut dyn Events,
    ) -> Result<usize, DecodeErr>;
    /// The side whose message `p` is, where its content tells.
    fn classify(&self, p: &[u8]) -> Option<Side>;
    /// Whether the two sides send two messages, told apart by a field.
    fn two_messages(&self) -> bool;
}

/// A description ready to decode with.
#[derive(Debug)]
pub struct Compiled {
    pub root: CType,
    pub specs: Vec<DefSpec>,
    /// The registered fields, leaked once ([`Compiled::leak_defs`]).
    pub defs: &'static [FieldDef],
    /// Each registered field's ` label=`, as the one-line text writes a
    /// field (leaked with [`Compiled::defs`]).
    pub line_labels: &'static [&'static str],
    /// The message-type field and its enum: a value outside it is malformed.
    pub strict_enum: Option<(u16, usize)>,
    /// The enum naming the message types, if any (a protobuf enum is open:
    /// a value outside it is not malformed, so it is not `strict_enum`).
    pub type_enum: Option<usize>,
    pub trailing_malformed: bool,
    pub enums: Vec<super::ksy::EnumDef>,
    /// A protobuf description's messages: then the walk is theirs, and
    /// `root` holds only the fields its keys may name (never walked).
    pub proto: Option<Box<dyn Messages>>,
    /// The offsets of the root type's first fields, while each takes a
    /// fixed place (an integer, a float or a magic, without `if`, `repeat`
    /// or a `size` but its own): where [`Compiled::fixed_root_int`] reads
    /// them.
    pub prefix: Vec<usize>,
}

/// The offsets of the leading fields of `t` that take a fixed place
/// ([`Compiled::prefix`]).
fn fixed_prefix(t: &CType) -> Vec<usize> {
    let mut prefix = Vec::new();
    let mut at = 0usize;
    for ca in &t.attrs {
        let a = &ca.attr;
        if a.cond.is_some() || a.repeat != Repeat::None {
            break;
        }
        let n = match &ca.kind {
            CKind::Int { bytes, .. } | CKind::Float { bytes, .. } => usize::from(*bytes),
            CKind::Contents(b) => b.len(),
            _ => break,
        };
        // A size of its own bytes (a magic's, `ksy` gives it one) is no
        // other place.
        if a.size.is_some_and(|s| s != Amount::Fixed(n as u64)) {
            break;
        }
        prefix.push(at);
        let Some(next) = at.checked_add(n) else {
            break;
        };
        at = next;
    }
    prefix
}

/// The bytes a field of a fixed place takes ([`fixed_prefix`]'s kinds;
/// none for the rest).
fn byte_size(kind: &CKind) -> usize {
    match kind {
        CKind::Int { bytes, .. } | CKind::Float { bytes, .. } => usize::from(*bytes),
        CKind::Contents(b) => b.len(),
        _ => 0,
    }
}

/// A compile error (`ksy` turns it into file:line:column).
pub type CompileError = (super::yaml::Pos, String);

fn type_of(kind: &Kind, enum_: Option<usize>) -> FieldType {
    match kind {
        Kind::Int { signed, .. } if enum_.is_none() => {
            if *signed {
                FieldType::Signed
            } else {
                FieldType::Unsigned
            }
        }
        Kind::Int { .. } => FieldType::Enum,
        Kind::Float { .. } => FieldType::Float,
        Kind::Str { .. } => FieldType::Text,
        // A magic of up to 8 bytes is a number, as the native protocols'
        // are (Starstrike's `strs.magic`): see [`magic_value`].
        Kind::Contents(b) if b.len() <= MAX_MAGIC_NUMBER => FieldType::Unsigned,
        Kind::Bytes | Kind::Contents(_) => FieldType::Bytes,
        Kind::User(_) | Kind::Switch { .. } => FieldType::Node,
    }
}

/// The longest `contents` walked as a number.
const MAX_MAGIC_NUMBER: usize = 8;

/// A `contents` (a magic) as its field's value: up to 8 bytes, the number
/// they spell in the order sent, shown in hexadecimal (`0x53545253`), as the
/// native protocols give theirs ([`Value::Hex`]: every view, `-V`, `-T
/// fields`, JSON and the filter, writes and compares it as theirs); longer,
/// its bytes, written as every bytes field is. The compiler's own kind
/// (`CKind::Contents`) is what makes a field a magic: no output looks at a
/// field's name or doc to tell.
fn magic_value(b: &[u8]) -> Value<'_> {
    if b.len() <= MAX_MAGIC_NUMBER {
        Value::Hex(read_uint(b, false))
    } else {
        Value::Bytes(b)
    }
}

fn wire_name(kind: &Kind) -> String {
    match kind {
        Kind::Int { bytes, signed, le } => {
            let e = if *bytes == 1 {
                ""
            } else if *le {
                "le"
            } else {
                "be"
            };
            format!("{}{bytes}{e}", if *signed { 's' } else { 'u' })
        }
        Kind::Float { bytes, le } => format!("f{bytes}{}", if *le { "le" } else { "be" }),
        Kind::Str { zero: true } => "strz".into(),
        Kind::Str { zero: false } => "str".into(),
        Kind::Bytes => "bytes".into(),
        Kind::Contents(_) => "contents".into(),
        Kind::User(_) => "type".into(),
        Kind::Switch { .. } => "switch".into(),
    }
}

/// Bytes a copy of a field holds besides its doc: its id, its `contents`
/// (in the field and in its compiled kind), its `valid` values.
fn held(a: &Attr) -> usize {
    let contents = match &a.kind {
        Kind::Contents(b) => 2 * b.len(),
        _ => 0,
    };
    let valid = match &a.valid {
        Some(Valid::AnyOf(xs)) => xs.len() * size_of::<f64>(),
        _ => 0,
    };
    a.id.len() + contents + valid
}

struct Compiler<'k> {
    ksy: &'k Ksy,
    specs: Vec<DefSpec>,
    /// Each registered field's index in `specs`, by name.
    names: HashMap<String, u16>,
    /// Field occurrences and type copies compiled so far, and the bytes they
    /// hold ([`MAX_UNFOLDED`], [`MAX_UNFOLDED_BYTES`]).
    unfolded: usize,
    bytes: usize,
    /// Registered fields with a `valid` ([`MAX_VALID_FIELDS`]).
    with_valid: usize,
}

impl Compiler<'_> {
    /// Counts `nodes` more field occurrences or type copies, holding `bytes`:
    /// an error past the bounds, at `a` (named by its `path`, which shows the
    /// uses of types that copied it).
    fn unfold(
        &mut self,
        a: &Attr,
        path: &str,
        nodes: usize,
        bytes: usize,
    ) -> Result<(), CompileError> {
        self.unfolded += nodes;
        self.bytes = self.bytes.saturating_add(bytes);
        if self.unfolded > MAX_UNFOLDED {
            return Err((
                a.pos,
                format!(
                    "`{}.{path}`: the description unfolds into more than {MAX_UNFOLDED} fields: each use of a type (a field of that type, a switch case) copies its fields; use types in one another fewer times",
                    self.ksy.id
                ),
            ));
        }
        if self.bytes > MAX_UNFOLDED_BYTES {
            return Err((
                a.pos,
                format!(
                    "`{}.{path}`: the description unfolds into more than {} MiB of names, docs and contents: each use of a type (a field of that type, a switch case) copies them; shorten them, or use types in one another fewer times",
                    self.ksy.id,
                    MAX_UNFOLDED_BYTES >> 20
                ),
            ));
        }
        Ok(())
    }

    fn def(&mut self, path: &str, a: &Attr, seq: &[Attr]) -> Result<u16, CompileError> {
        let name = format!("{}.{path}", self.ksy.id);
        let ty = type_of(&a.kind, a.enum_);
        if let Some(&i) = self.names.get(&name) {
            if self.specs[usize::from(i)].ty != ty {
                return Err((
                    a.pos,
                    format!("field `{name}` has another type in another case: give it another id"),
                ));
            }
            return Ok(i);
        }
        if self.specs.len() >= usize::from(u16::MAX) {
            return Err((a.pos, "too many fields".into()));
        }
        let doc = if a.doc.is_empty() {
            wire_name(&a.kind)
        } else {
            format!("{} ({})", a.doc, wire_name(&a.kind))
        };
        self.unfold(a, path, 0, 2 * name.len() + doc.len() + held(a))?;
        if a.valid.is_some() {
            self.with_valid += 1;
            if self.with_valid > MAX_VALID_FIELDS {
                return Err((
                    a.pos,
                    format!(
                        "`{name}`: more than {MAX_VALID_FIELDS} fields with `valid` (each use of a type counts its own): check the others in your tools"
                    ),
                ));
            }
        }
        self.names.insert(name.clone(), self.specs.len() as u16);
        self.specs.push(DefSpec {
            name,
            label: a.id.clone(),
            ty,
            doc,
            valid: a.valid.clone(),
            bound_signed: a
                .valid
                .as_ref()
                .and_then(Valid::bound_field)
                .and_then(|i| seq.get(i))
                .is_some_and(|b| matches!(b.kind, Kind::Int { signed: true, .. })),
            enum_: a.enum_,
        });
        Ok((self.specs.len() - 1) as u16)
    }

    fn ty(&mut self, t: usize, path: &str, stack: &mut Vec<usize>) -> Result<CType, CompileError> {
        let mut out = CType::default();
        let Some(def) = self.ksy.types.get(t) else {
            return Ok(out);
        };
        for a in &def.attrs {
            let p = if path.is_empty() {
                a.id.clone()
            } else {
                format!("{path}.{}", a.id)
            };
            let field = self.def(&p, a, &def.attrs)?;
            self.unfold(a, &p, 1, held(a))?;
            if a.repeat != Repeat::None && element_min_size(self.ksy, a, 0) == 0 {
                return Err((
                    a.pos,
                    format!(
                        "`{}.{p}`: `repeat` over elements that may take no bytes (an `if`, a `repeat`, a size from a field or to the end, a `switch` without a case for every value, all of it): the repetition could not tell one element from the next; give each element a fixed part, or a fixed `size`",
                        self.ksy.id
                    ),
                ));
            }
            let kind = match &a.kind {
                Kind::Int { bytes, signed, le } => CKind::Int {
                    bytes: *bytes,
                    signed: *signed,
                    le: *le,
                },
                Kind::Float { bytes, le } => CKind::Float {
                    bytes: *bytes,
                    le: *le,
                },
                Kind::Str { zero } => CKind::Str { zero: *zero },
                Kind::Bytes => CKind::Bytes,
                Kind::Contents(b) => CKind::Contents(b.clone()),
                Kind::User(u) => CKind::User(self.nested(*u, &p, a, stack)?),
                Kind::Switch { on, cases, default } => {
                    let mut cs = Vec::new();
                    for (v, k) in cases {
                        cs.push((*v, self.case(k, &p, a, stack)?));
                    }
                    let default = match default {
                        Some(k) => Some(self.case(k, &p, a, stack)?),
                        None => None,
                    };
                    CKind::Switch {
                        on: *on,
                        cases: cs,
                        default,
                    }
                }
            };
            out.attrs.push(CAttr {
                // The doc goes with the registered field, once.
                attr: Attr {
                    doc: String::new(),
                    ..a.clone()
                },
                field,
                kind,
                checked: false,
                quiet_run: None,
                unjudged_run: None,
                slot: None,
                enum_: None,
                valid: None,
            });
        }
        out.kept = plan_fields(&mut out.attrs, &self.specs);
        out.fixed = fixed_size(&out.attrs, &self.specs, true);
        out.unjudged = fixed_size(&out.attrs, &self.specs, false);
        out.plain = out.unjudged.is_some()
            && out.attrs.iter().all(|ca| {
                let a = &ca.attr;
                a.cond.is_none()
                    && a.size.is_none()
                    && a.repeat == Repeat::None
                    && match &ca.kind {
                        CKind::Int { .. } | CKind::Float { .. } => true,
                        CKind::User(u) => u.plain,
                        _ => false,
                    }
            });
        Ok(out)
    }

    fn case(
        &mut self,
        k: &Kind,
        path: &str,
        a: &Attr,
        stack: &mut Vec<usize>,
    ) -> Result<CType, CompileError> {
        match k {
            Kind::User(u) => self.nested(*u, path, a, stack),
            _ => Err((
                a.pos,
                format!(
                    "`{}`: a switch case must be a user type (of `types`); wrap `{}` in a type",
                    a.id,
                    wire_name(k)
                ),
            )),
        }
    }

    fn nested(
        &mut self,
        u: usize,
        path: &str,
        a: &Attr,
        stack: &mut Vec<usize>,
    ) -> Result<CType, CompileError> {
        if stack.contains(&u) {
            return Err((
                a.pos,
                format!(
                    "`{}`: type `{}` contains itself: recursive types are not supported",
                    a.id,
                    self.ksy.types.get(u).map_or("", |t| t.name.as_str())
                ),
            ));
        }
        if stack.len() >= MAX_DEPTH {
            return Err((a.pos, format!("types nested more than {MAX_DEPTH} deep")));
        }
        // A copy of the type (its fields are counted as they are compiled).
        self.unfold(a, path, 1, 0)?;
        stack.push(u);
        let t = self.ty(u, path, stack);
        stack.pop();
        t
    }
}

impl Compiled {
    /// Compiles a description: one registered field per field occurrence
    /// (`vessel.body.throttle_left`).
    pub fn new(ksy: &Ksy) -> Result<Compiled, CompileError> {
        let mut c = Compiler {
            ksy,
            specs: Vec::new(),
            names: HashMap::new(),
            unfolded: 0,
            with_valid: 0,
            // The top-level `doc` (and the title) count too.
            bytes: ksy.doc.len() + ksy.sem.title.len(),
        };
        if c.bytes > MAX_UNFOLDED_BYTES {
            return Err((
                super::yaml::Pos { line: 1, col: 1 },
                format!(
                    "`{}`: the top-level `doc` and `title` hold more than {} MiB: shorten them",
                    ksy.id,
                    MAX_UNFOLDED_BYTES >> 20
                ),
            ));
        }
        // The packet itself: the root node, named as the protocol.
        c.specs.push(DefSpec {
            name: ksy.id.clone(),
            label: ksy.id.clone(),
            ty: FieldType::Node,
            doc: "The packet (a node holding every field)".into(),
            valid: None,
            bound_signed: false,
            enum_: None,
        });
        let root = c.ty(0, "", &mut vec![0])?;
        let strict_enum = ksy.sem.message_type.and_then(|i| {
            let a = root.attrs.get(i)?;
            Some((a.field, a.attr.enum_?))
        });
        let prefix = fixed_prefix(&root);
        Ok(Compiled {
            root,
            specs: c.specs,
            defs: &[],
            line_labels: &[],
            strict_enum,
            type_enum: strict_enum.map(|(_, e)| e),
            trailing_malformed: ksy.sem.trailing_malformed,
            enums: ksy.enums.clone(),
            proto: None,
            prefix,
        })
    }

    /// Leaks the registered fields: a described protocol is loaded once per
    /// process and lives as long as it.
    pub fn leak_defs(&mut self) {
        let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
        let defs: Vec<FieldDef> = self
            .specs
            .iter()
            .map(|s| FieldDef {
                name: leak(&s.name),
                label: leak(&s.label),
                ty: s.ty,
                doc: leak(&s.doc),
            })
            .collect();
        self.defs = Box::leak(defs.into_boxed_slice());
        let labels: Vec<&'static str> = self
            .specs
            .iter()
            .map(|s| leak(&format!(" {}=", s.label)))
            .collect();
        self.line_labels = Box::leak(labels.into_boxed_slice());
    }

    /// Decodes `p`, telling `ev` every field. Returns the bytes decoded.
    /// A protobuf description's packet is read as the message its content
    /// tells ([`Compiled::walk_as`] for a side's).
    pub fn walk(&'static self, p: &[u8], ev: &mut dyn Events) -> Result<usize, DecodeErr> {
        self.walk_as(p, Side::Any, ev)
    }

    /// Decodes `p` as `side` sends it (a protobuf description whose
    /// directions carry two messages; a layout reads the same either way).
    pub fn walk_as(
        &'static self,
        p: &[u8],
        side: Side,
        ev: &mut dyn Events,
    ) -> Result<usize, DecodeErr> {
        if let Some(schema) = &self.proto {
            return schema.walk(self, p, side, ev);
        }
        self.walk_layout(p, ev)
    }

    /// [`Compiled::walk_as`] for a sink of a type known here: the walk is
    /// compiled for it, so its calls are direct (a sink that takes no field
    /// has none built for it).
    pub fn walk_with<E: Events>(
        &'static self,
        p: &[u8],
        side: Side,
        ev: &mut E,
    ) -> Result<usize, DecodeErr> {
        if let Some(schema) = &self.proto {
            return schema.walk(self, p, side, ev);
        }
        self.walk_layout(p, ev)
    }

    /// The walk of a layout (not a protobuf description's).
    fn walk_layout<E: Events + ?Sized>(
        &'static self,
        p: &[u8],
        ev: &mut E,
    ) -> Result<usize, DecodeErr> {
        if let Some(def) = self.defs.first() {
            ev.enter(Field {
                def,
                index: None,
                offset: 0,
                len: p.len(),
                value: Value::None,
            });
        }
        // A sink that takes none of the root type's fields (an analysis,
        // which is told integers and violations only) gets none handed over.
        let root: &'static CType = &self.root;
        let quiet = !ev.wants_any(crate::proto::field::group_key(root), &|each| {
            self.type_defs(root, each)
        });
        // A walk compiled for judging `valid`s, or for judging none.
        let (end, stopped) = if ev.judges() {
            Walker::<E, true>::root(self, p, ev, quiet)
        } else {
            Walker::<E, false>::root(self, p, ev, quiet)
        };
        let end = end?;
        if self.trailing_malformed && !stopped && end < p.len() {
            return Err(DecodeErr {
                kind: ErrKind::Trailing,
                field: self.root.attrs.last().map_or(0, |a| a.field),
                offset: end,
                need: 0,
                have: p.len() - end,
            });
        }
        Ok(end)
    }

    /// The integer at index `i` of the root type, read from its offset when
    /// it and every field before it take a fixed place ([`Compiled::prefix`])
    /// and the payload holds them, each magic as described: the value the
    /// walk tells ([`Events::int`]) without walking. `None` where only the
    /// walk can tell (a short payload, a magic not as described, a field
    /// after one of no fixed place).
    pub fn fixed_root_int(&self, p: &[u8], i: usize) -> Option<i64> {
        let v = self.root_int_in_place(p, i)?;
        for (ca, at) in self.root.attrs.iter().zip(&self.prefix).take(i) {
            if let CKind::Contents(want) = &ca.kind
                && p.get(*at..at.checked_add(want.len())?)? != want.as_slice()
            {
                return None;
            }
        }
        Some(v)
    }

    /// The integer at index `i` of the root type read from its fixed place
    /// ([`Compiled::prefix`]), whatever the bytes before it hold; `None`
    /// where it has none, or `p` does not hold it.
    #[inline]
    pub fn root_int_in_place(&self, p: &[u8], i: usize) -> Option<i64> {
        let at = *self.prefix.get(i)?;
        let CKind::Int { bytes, signed, le } = self.root.attrs.get(i)?.kind else {
            return None;
        };
        let b = p.get(at..at.checked_add(usize::from(bytes))?)?;
        Some(int_value(b, signed, le).1)
    }

    /// The value the walk tells of the number at index `i` of the root type
    /// (an integer or a float in a fixed place, [`Compiled::prefix`]), read
    /// from its place; `None` where it has none, or `p` does not hold it.
    pub fn fixed_root_value(&'static self, p: &[u8], i: usize) -> Option<Value<'static>> {
        let at = *self.prefix.get(i)?;
        let ca = self.root.attrs.get(i)?;
        let b = p.get(at..at.checked_add(byte_size(&ca.kind))?)?;
        match ca.kind {
            CKind::Int { signed, le, .. } => {
                Some(self.int_field_value(ca.enum_, int_value(b, signed, le), signed))
            }
            CKind::Float { le, .. } => Some(Value::Float(float_value(b, le))),
            _ => None,
        }
    }

    /// The value told of an integer field of enum `e`, read as `(raw, v)`.
    #[inline]
    fn int_field_value(
        &'static self,
        e: Option<usize>,
        (raw, v): (u64, i64),
        signed: bool,
    ) -> Value<'static> {
        match e {
            Some(e) => Value::Enum {
                raw,
                name: self.enum_name(e, v),
            },
            None if signed => Value::Signed(v),
            None => Value::Unsigned(raw),
        }
    }

    /// A node's group: its own field, then every field its type `t` holds.
    fn group_defs(
        &'static self,
        node: &CAttr,
        t: &'static CType,
        each: &mut dyn FnMut(&'static FieldDef),
    ) {
        if let Some(def) = self.defs.get(usize::from(node.field)) {
            each(def);
        }
        self.type_defs(t, each);
    }

    /// Every registered field type `t` may hold, nested types' included.
    fn type_defs(&'static self, t: &'static CType, each: &mut dyn FnMut(&'static FieldDef)) {
        for ca in &t.attrs {
            if let Some(def) = self.defs.get(usize::from(ca.field)) {
                each(def);
            }
            match &ca.kind {
                CKind::User(t) => self.type_defs(t, each),
                CKind::Switch { cases, default, .. } => {
                    for t in cases.iter().map(|(_, t)| t).chain(default) {
                        self.type_defs(t, each);
                    }
                }
                _ => {}
            }
        }
    }

    /// The name of an enum value, borrowed for as long as the description.
    pub fn enum_name(&'static self, e: usize, v: i64) -> Option<&'static str> {
        self.enums.get(e)?.name_of(v)
    }
}

/// A walk; `JUDGING`: the sink is told violations ([`Events::judges`]),
/// so `valid`s are judged.
struct Walker<'p, 'e, E: Events + ?Sized, const JUDGING: bool> {
    c: &'static Compiled,
    p: &'p [u8],
    ev: &'e mut E,
    /// Inside a node whose fields the sink does not take
    /// ([`Events::wants_any`]): they are decoded, not handed over.
    quiet: bool,
    /// The sink had all it wanted ([`Events::done`]): the walk stopped.
    stopped: bool,
}

impl<'p, E: Events + ?Sized, const JUDGING: bool> Walker<'p, '_, E, JUDGING> {
    /// Walks the root type of `c` over `p`, then leaves the packet's node:
    /// the offset after it, and whether the sink had all it wanted.
    fn root(
        c: &'static Compiled,
        p: &'p [u8],
        ev: &mut E,
        quiet: bool,
    ) -> (Result<usize, DecodeErr>, bool) {
        let mut w = Walker::<E, JUDGING> {
            c,
            p,
            ev,
            quiet,
            stopped: false,
        };
        let end = w.ty(&c.root, 0, p.len(), true);
        if !c.defs.is_empty() {
            w.ev.leave();
        }
        (end, w.stopped)
    }
}

/// The values a walk of a type keeps of its fields, for the later fields
/// that read them ([`CType::kept`]), by the field's index in the type.
trait Vals {
    fn get(&self, i: usize) -> Option<i64>;
    fn set(&mut self, i: usize, v: i64);
}

/// Kept fields at most: a type with more keeps them in [`ByIndex`].
const SLOTS: usize = 4;

/// The few values of a type, by their fields' [`CAttr::slot`]: the array
/// a walk fills per type (and for every copy of a nested one) stays small.
struct BySlot<'t> {
    attrs: &'t [CAttr],
    v: [Option<i64>; SLOTS],
}

impl Vals for BySlot<'_> {
    fn get(&self, i: usize) -> Option<i64> {
        let slot = self.attrs.get(i)?.slot?;
        self.v.get(usize::from(slot)).copied().flatten()
    }
    fn set(&mut self, i: usize, v: i64) {
        if let Some(slot) = self.attrs.get(i).and_then(|a| a.slot)
            && let Some(x) = self.v.get_mut(usize::from(slot))
        {
            *x = Some(v);
        }
    }
}

/// No value kept: a plain type's ([`CType::plain`]), whose fields no later
/// one reads.
struct NoVals;

impl Vals for NoVals {
    fn get(&self, _i: usize) -> Option<i64> {
        None
    }
    fn set(&mut self, _i: usize, _v: i64) {}
}

/// Any number of values, by field index.
struct ByIndex([Option<i64>; MAX_ATTRS]);

impl Vals for ByIndex {
    fn get(&self, i: usize) -> Option<i64> {
        self.0.get(i).copied().flatten()
    }
    fn set(&mut self, i: usize, v: i64) {
        if let Some(x) = self.0.get_mut(i) {
            *x = Some(v);
        }
    }
}

/// The value of the earlier field `i` of the type being walked, if decoded.
fn earlier(vals: &impl Vals) -> impl Fn(usize) -> Option<i64> + Copy + '_ {
    move |i| vals.get(i)
}

/// `n` bytes of `p` at `pos`, within `limit`; short, the error of field `ca`.
fn take<'p>(
    p: &'p [u8],
    ca: &CAttr,
    pos: usize,
    limit: usize,
    n: usize,
) -> Result<&'p [u8], DecodeErr> {
    pos.checked_add(n)
        .filter(|e| *e <= limit)
        .and_then(|e| p.get(pos..e))
        .ok_or(DecodeErr {
            kind: ErrKind::Short,
            field: ca.field,
            offset: pos,
            need: n as u64,
            have: limit.saturating_sub(pos),
        })
}

/// A string's text and the bytes it takes of `avail` (at `pos`): all of
/// them when `sized` (a `strz` ends at its first zero), else up to and with
/// its terminating zero, which must be there.
fn text<'p>(
    avail: &'p [u8],
    ca: &CAttr,
    pos: usize,
    sized: bool,
    zero: bool,
) -> Result<(&'p [u8], usize), DecodeErr> {
    if sized {
        let t = if zero {
            avail.split(|b| *b == 0).next().unwrap_or(&[])
        } else {
            avail
        };
        return Ok((t, avail.len()));
    }
    match avail.iter().position(|b| *b == 0) {
        Some(n) => Ok((&avail[..n], n + 1)),
        None => Err(DecodeErr {
            kind: ErrKind::Short,
            field: ca.field,
            offset: pos,
            need: avail.len() as u64 + 1,
            have: avail.len(),
        }),
    }
}

/// An integer of `b`: its bytes as read, and its value (sign-extended
/// when `signed`).
fn int_value(b: &[u8], signed: bool, le: bool) -> (u64, i64) {
    let raw = read_uint(b, le);
    let v = if signed {
        let shift = 64 - b.len() as u32 * 8;
        ((raw << shift) as i64) >> shift
    } else {
        raw as i64
    };
    (raw, v)
}

/// A float of `b` (4 or 8 bytes), as an `f64`.
#[inline]
fn float_value(b: &[u8], le: bool) -> f64 {
    let raw = read_uint(b, le);
    if b.len() == 4 {
        f64::from(f32::from_bits(raw as u32))
    } else {
        f64::from_bits(raw)
    }
}

fn read_uint(b: &[u8], le: bool) -> u64 {
    // The common widths in one load each.
    match (b.len(), le) {
        (1, _) => return u64::from(b[0]),
        (2, false) => return u64::from(u16::from_be_bytes([b[0], b[1]])),
        (2, true) => return u64::from(u16::from_le_bytes([b[0], b[1]])),
        (4, false) => return u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        (4, true) => return u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        _ => {}
    }
    let mut v = 0u64;
    if le {
        for x in b.iter().rev() {
            v = (v << 8) | u64::from(*x);
        }
    } else {
        for x in b {
            v = (v << 8) | u64::from(*x);
        }
    }
    v
}

impl<'p, E: Events + ?Sized, const JUDGING: bool> Walker<'p, '_, E, JUDGING> {
    fn short(&self, field: u16, offset: usize, need: u64, end: usize) -> DecodeErr {
        DecodeErr {
            kind: ErrKind::Short,
            field,
            offset,
            need,
            have: end.saturating_sub(offset),
        }
    }

    fn amount(&self, a: Amount, vals: &impl Vals, pos: usize, end: usize) -> u64 {
        match a {
            Amount::Fixed(n) => n,
            Amount::Field(i) => vals.get(i).and_then(|v| u64::try_from(v).ok()).unwrap_or(0),
            Amount::Eos => end.saturating_sub(pos) as u64,
        }
    }

    /// Walks one type over `p[start..end]`; the offset after it.
    fn ty(
        &mut self,
        t: &'static CType,
        start: usize,
        end: usize,
        root: bool,
    ) -> Result<usize, DecodeErr> {
        if !JUDGING
            && !root
            && !self.quiet
            && t.plain
            && t.unjudged.is_some_and(|n| n <= end.saturating_sub(start))
        {
            return self.plain_ty(t, start, end);
        }
        if JUDGING
            && !root
            && self.quiet
            && t.plain
            && t.kept == 0
            && t.unjudged.is_some_and(|n| n <= end.saturating_sub(start))
        {
            return self.plain_judged(t, start, end);
        }
        if t.kept <= SLOTS {
            let vals = BySlot {
                attrs: &t.attrs,
                v: [None; SLOTS],
            };
            self.ty_keeping(t, start, end, root, vals)
        } else {
            self.ty_keeping(t, start, end, root, ByIndex([None; MAX_ATTRS]))
        }
    }

    /// A plain type ([`CType::plain`]) whose bytes are all there, for a
    /// sink that judges nothing: its fields told in wire order, as
    /// [`Walker::ty_keeping`] tells them, without the checks none of them
    /// needs.
    fn plain_ty(
        &mut self,
        t: &'static CType,
        start: usize,
        end: usize,
    ) -> Result<usize, DecodeErr> {
        let mut pos = start;
        for ca in &t.attrs {
            pos = self.plain_attr(ca, pos, end)?;
        }
        Ok(pos)
    }

    /// One field of a plain type at `pos`: an integer, a float or a plain
    /// type; where it ends. Always inlined (in release): each plain walk's
    /// loop is its one caller.
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn plain_attr(
        &mut self,
        ca: &'static CAttr,
        pos: usize,
        end: usize,
    ) -> Result<usize, DecodeErr> {
        Ok(match &ca.kind {
            CKind::Int { bytes, signed, le } => {
                let b = take(self.p, ca, pos, end, usize::from(*bytes))?;
                self.int(ca, None, pos, b, (*signed, *le), &NoVals);
                pos + b.len()
            }
            CKind::Float { bytes, le } => {
                let b = take(self.p, ca, pos, end, usize::from(*bytes))?;
                self.float(ca, None, pos, b, *le, &NoVals);
                pos + b.len()
            }
            CKind::User(u) => self.node(ca, None, pos, end, false, u)?.0,
            // Not in a plain type.
            _ => pos,
        })
    }

    /// A plain type ([`CType::plain`]) whose bytes are all there and whose
    /// `valid`s name no other field (it keeps none: [`CType::kept`]), in a
    /// quiet walk that judges: its runs skipped, its checked numbers judged,
    /// as [`Walker::ty_keeping`] does, without the checks none of its
    /// fields needs.
    fn plain_judged(
        &mut self,
        t: &'static CType,
        start: usize,
        end: usize,
    ) -> Result<usize, DecodeErr> {
        let mut pos = start;
        let mut i = 0;
        while let Some(ca) = t.attrs.get(i) {
            if let Some(run) = ca.quiet_run
                && run.bytes <= end.saturating_sub(pos)
            {
                pos += run.bytes;
                i = run.next;
                continue;
            }
            pos = self.plain_attr(ca, pos, end)?;
            i += 1;
        }
        Ok(pos)
    }

    /// [`Walker::ty`], keeping the values later fields read in `vals`.
    fn ty_keeping(
        &mut self,
        t: &'static CType,
        start: usize,
        end: usize,
        root: bool,
        mut vals: impl Vals,
    ) -> Result<usize, DecodeErr> {
        // The root's leading fields in fixed places, while each reads
        // without an error: told at once; the loop goes on from there.
        let (mut i, mut pos) = if root {
            self.root_prefix(t, &mut vals)
        } else {
            (0, start)
        };
        if self.stopped {
            return Ok(pos);
        }
        // A message type outside its enum (the root's only): the error, and
        // the type field's index. The fields after it are read up to the
        // first that depends on it (the sequence number, before the body, is
        // still read); the error is then returned.
        let mut unknown: Option<(DecodeErr, usize)> = None;
        // A nested type of a group the sink takes nothing of tells nothing
        // but its violations and errors: its runs of fields that can have
        // neither are skipped by their bytes.
        let skips = self.quiet && !root;
        while let Some(ca) = t.attrs.get(i) {
            let run = if JUDGING {
                ca.quiet_run
            } else {
                ca.unjudged_run
            };
            if skips
                && let Some(run) = run
                && run.bytes <= end.saturating_sub(pos)
            {
                pos += run.bytes;
                i = run.next;
                continue;
            }
            if let Some((e, ti)) = unknown
                && depends_on(ca, ti)
            {
                return Err(e);
            }
            pos = match self.field(ca, i, pos, end, &mut vals, root) {
                Ok(pos) => pos,
                Err(e) if e.kind == ErrKind::UnknownType && unknown.is_none() => {
                    // Read, but not a type: what depends on it is not.
                    unknown = Some((e, i));
                    let bytes = match ca.kind {
                        CKind::Int { bytes, .. } => usize::from(bytes),
                        _ => 0,
                    };
                    e.offset + bytes
                }
                // The first error, by offset.
                Err(e) => return Err(unknown.map_or(e, |(u, _)| u)),
            };
            if root && self.ev.done() {
                // The sink has what it wants: nothing after is read.
                self.stopped = true;
                break;
            }
            i += 1;
        }
        match unknown {
            Some((e, _)) => Err(e),
            None => Ok(pos),
        }
    }

    /// The leading fields of the root type `t` that take a fixed place
    /// ([`Compiled::prefix`]: integers, floats, magics), each read where it
    /// is, and told as [`Walker::ty_keeping`]'s loop tells it (its field,
    /// its `valid` judged, a root integer told and kept), up to the first
    /// that the loop must read itself: one past the payload's end, a magic
    /// not as described, a message type outside its enum (the loop then
    /// tells its error). Stops where the sink is done. The index and offset
    /// the loop goes on from.
    fn root_prefix(&mut self, t: &'static CType, vals: &mut impl Vals) -> (usize, usize) {
        let (c, p) = (self.c, self.p);
        let mut pos = 0;
        for (i, (ca, &at)) in t.attrs.iter().zip(&c.prefix).enumerate() {
            let Some(b) = p.get(at..at.saturating_add(byte_size(&ca.kind))) else {
                return (i, pos);
            };
            match &ca.kind {
                CKind::Int { signed, le, .. } => {
                    let (_, v) = int_value(b, *signed, *le);
                    if let Some((f, e)) = c.strict_enum
                        && f == ca.field
                        && c.enum_name(e, v).is_none()
                    {
                        return (i, pos);
                    }
                    let v = self.int(ca, None, at, b, (*signed, *le), vals);
                    self.ev.int(ca.field, v);
                    vals.set(i, v);
                }
                CKind::Float { le, .. } => self.float(ca, None, at, b, *le, vals),
                CKind::Contents(want) if b == want.as_slice() => {
                    if let Some(def) = self.def_of(ca) {
                        let value = magic_value(b);
                        let (index, offset, len) = (None, at, b.len());
                        let field = Field {
                            def,
                            index,
                            offset,
                            len,
                            value,
                        };
                        self.ev.field_at(ca.field, field);
                    }
                }
                _ => return (i, pos),
            }
            pos = at + b.len();
            if self.ev.done() {
                self.stopped = true;
                return (i + 1, pos);
            }
        }
        (c.prefix.len(), pos)
    }

    /// Field `ca` (at index `i` of its type) from `pos`, every element of
    /// it if it repeats (none if its `if` does not hold); the offset after
    /// it. Its integer value is kept in `vals` for the fields after it.
    fn field(
        &mut self,
        ca: &'static CAttr,
        i: usize,
        mut pos: usize,
        end: usize,
        vals: &mut impl Vals,
        root: bool,
    ) -> Result<usize, DecodeErr> {
        let a = &ca.attr;
        if a.cond.is_none() && a.size.is_none() && a.repeat == Repeat::None {
            // The common field: one element, up to the end of its type.
            let (next, v) = self.element(ca, None, pos, end, false, vals, root)?;
            if let Some(x) = v {
                vals.set(i, x);
            }
            return Ok(next);
        }
        if let Some(Cond { field, op, value }) = a.cond {
            let value = match value {
                Operand::Number(v) => Some(v),
                Operand::Field(f) => vals.get(f),
            };
            let holds = vals
                .get(field)
                .zip(value)
                .is_some_and(|(v, w)| op.holds(v, w));
            if !holds {
                return Ok(pos);
            }
        }
        let count = match a.repeat {
            Repeat::None => None,
            Repeat::Expr(n) => Some(self.amount(n, vals, pos, end)),
            Repeat::Eos => Some(u64::MAX),
        };
        let mut k: u64 = 0;
        loop {
            match count {
                None if k == 1 => break,
                Some(n) if k >= n => break,
                Some(u64::MAX) if pos >= end => break,
                _ => {}
            }
            let index = count.map(|_| u32::try_from(k).unwrap_or(u32::MAX));
            let before = pos;
            let size = a.size.map(|s| self.amount(s, vals, pos, end));
            let (elem_end, limit) = match size {
                Some(n) => {
                    let avail = end.saturating_sub(pos) as u64;
                    if n > avail {
                        return Err(self.short(ca.field, pos, n, end));
                    }
                    (Some(pos + n as usize), pos + n as usize)
                }
                None => (None, end),
            };
            let v = self.element(ca, index, pos, limit, elem_end.is_some(), vals, root)?;
            pos = elem_end.unwrap_or(v.0);
            if let Some(x) = v.1 {
                vals.set(i, x);
            }
            k += 1;
            if count.is_some() && pos == before {
                // An element of no bytes: repeating it cannot end. A
                // description that allows one is refused when it is
                // compiled (`element_min_size`): never reached.
                break;
            }
        }
        Ok(pos)
    }

    /// An integer of `b` (`signed`, `le`): its field and value, and its
    /// `valid` judged; its value.
    fn int(
        &mut self,
        ca: &'static CAttr,
        index: Option<u32>,
        pos: usize,
        b: &'p [u8],
        (signed, le): (bool, bool),
        vals: &impl Vals,
    ) -> i64 {
        let (raw, v) = int_value(b, signed, le);
        if let Some(def) = self.def_of(ca) {
            let value = self.c.int_field_value(ca.enum_, (raw, v), signed);
            self.ev.field_at(
                ca.field,
                Field {
                    def,
                    index,
                    offset: pos,
                    len: b.len(),
                    value,
                },
            );
        }
        if JUDGING && ca.checked {
            self.judge(ca, pos, if signed { v as f64 } else { raw as f64 }, vals);
        }
        v
    }

    /// A float of `b` (4 or 8 bytes): its field and value, and its `valid`
    /// judged.
    fn float(
        &mut self,
        ca: &'static CAttr,
        index: Option<u32>,
        pos: usize,
        b: &'p [u8],
        le: bool,
        vals: &impl Vals,
    ) {
        let v = float_value(b, le);
        if let Some(def) = self.def_of(ca) {
            self.ev.field_at(
                ca.field,
                Field {
                    def,
                    index,
                    offset: pos,
                    len: b.len(),
                    value: Value::Float(v),
                },
            );
        }
        if JUDGING && ca.checked {
            self.judge(ca, pos, v, vals);
        }
    }

    /// The registered field of `ca`, unless the walk is quiet (a group of
    /// fields the sink does not want).
    fn def_of(&self, ca: &CAttr) -> Option<&'static FieldDef> {
        (!self.quiet)
            .then(|| self.c.defs.get(usize::from(ca.field)))
            .flatten()
    }

    /// The bytes from `pos` to `limit`, as one field of bytes.
    fn rest(
        &mut self,
        ca: &CAttr,
        index: Option<u32>,
        pos: usize,
        limit: usize,
    ) -> (usize, Option<i64>) {
        let b = self.p.get(pos..limit).unwrap_or(&[]);
        if let Some(def) = self.def_of(ca) {
            self.ev.field_at(
                ca.field,
                Field {
                    def,
                    index,
                    offset: pos,
                    len: b.len(),
                    value: Value::Bytes(b),
                },
            );
        }
        (limit, None)
    }

    /// A number's `valid`, judged against the earlier fields' values.
    fn judge(&mut self, ca: &CAttr, pos: usize, x: f64, vals: &impl Vals) {
        if let Some(valid) = &ca.valid
            && !valid.holds(x, earlier(vals))
        {
            let bound = valid.bound_field().and_then(earlier(vals));
            self.ev.violation(ca.field, pos, x, bound);
        }
    }

    /// An integer `v` of the root type (read from `b` at `pos`): told to
    /// the sink (the keys an analysis reads are the root type's), and, if it
    /// is the message type, an error outside its enum.
    fn root_int(
        &mut self,
        ca: &CAttr,
        pos: usize,
        limit: usize,
        b: &[u8],
        le: bool,
        v: i64,
    ) -> Result<(), DecodeErr> {
        self.ev.int(ca.field, v);
        if let Some((f, e)) = self.c.strict_enum
            && f == ca.field
            && self.c.enum_name(e, v).is_none()
        {
            return Err(DecodeErr {
                kind: ErrKind::UnknownType,
                field: ca.field,
                offset: pos,
                need: read_uint(b, le),
                have: limit.saturating_sub(pos),
            });
        }
        Ok(())
    }

    /// One element of a field in `p[pos..limit]`: the offset after it, and its
    /// integer value.
    #[allow(clippy::too_many_arguments)]
    fn element(
        &mut self,
        ca: &'static CAttr,
        index: Option<u32>,
        pos: usize,
        limit: usize,
        sized: bool,
        vals: &impl Vals,
        root: bool,
    ) -> Result<(usize, Option<i64>), DecodeErr> {
        let p = self.p;
        let def = self.def_of(ca);
        let field = |len: usize, value: Value<'p>| {
            def.map(|def| Field {
                def,
                index,
                offset: pos,
                len,
                value,
            })
        };
        let take = |n: usize| take(p, ca, pos, limit, n);
        match &ca.kind {
            CKind::Int { bytes, signed, le } => {
                let b = take(usize::from(*bytes))?;
                let v = self.int(ca, index, pos, b, (*signed, *le), vals);
                if root {
                    self.root_int(ca, pos, limit, b, *le, v)?;
                }
                Ok((pos + b.len(), Some(v)))
            }
            CKind::Float { bytes, le } => {
                let b = take(usize::from(*bytes))?;
                self.float(ca, index, pos, b, *le, vals);
                Ok((pos + b.len(), None))
            }
            CKind::Str { zero } => {
                let avail = p.get(pos..limit).unwrap_or(&[]);
                let (text, used) = text(avail, ca, pos, sized, *zero)?;
                if let Some(f) = field(used, Value::Text(text)) {
                    self.ev.field_at(ca.field, f);
                }
                Ok((pos + used, None))
            }
            CKind::Bytes => Ok(self.rest(ca, index, pos, limit)),
            CKind::Contents(want) => {
                let b = take(want.len())?;
                if let Some(f) = field(b.len(), magic_value(b)) {
                    self.ev.field_at(ca.field, f);
                }
                if b != want.as_slice() {
                    return Err(DecodeErr {
                        kind: ErrKind::Contents,
                        field: ca.field,
                        offset: pos,
                        need: want.len() as u64,
                        have: limit.saturating_sub(pos),
                    });
                }
                Ok((pos + b.len(), None))
            }
            CKind::User(t) => self.node(ca, index, pos, limit, sized, t),
            CKind::Switch { on, cases, default } => {
                let v = vals.get(*on);
                let t = cases
                    .iter()
                    .find(|(k, _)| Some(*k) == v)
                    .map(|(_, t)| t)
                    .or(default.as_ref());
                match t {
                    Some(t) => self.node(ca, index, pos, limit, sized, t),
                    None if sized => Ok(self.rest(ca, index, pos, limit)),
                    None => Ok((pos, None)),
                }
            }
        }
    }

    fn node(
        &mut self,
        ca: &'static CAttr,
        index: Option<u32>,
        pos: usize,
        limit: usize,
        sized: bool,
        t: &'static CType,
    ) -> Result<(usize, Option<i64>), DecodeErr> {
        let was_quiet = self.quiet;
        let c = self.c;
        let group = crate::proto::field::group_key(t);
        self.quiet = was_quiet || !self.ev.wants_any(group, &|each| c.group_defs(ca, t, each));
        let fixed = if JUDGING { t.fixed } else { t.unjudged };
        if self.quiet
            && let Some(n) = fixed
            && n <= limit.saturating_sub(pos)
        {
            // Nothing in it to check or tell: skipped by its size.
            self.quiet = was_quiet;
            return Ok((pos + n, None));
        }
        let def = (!self.quiet)
            .then(|| c.defs.get(usize::from(ca.field)))
            .flatten();
        // The node's span: known when sized; otherwise up to what it holds,
        // unknown until walked (the sink gets the node first, its span from
        // `pos` to the limit).
        if let Some(def) = def {
            self.ev.enter(Field {
                def,
                index,
                offset: pos,
                len: if sized { limit - pos } else { 0 },
                value: Value::None,
            });
        }
        let r = self.ty(t, pos, limit, false);
        if def.is_some() {
            if r.is_err_and(|e| e.is_short()) {
                self.ev.cut(limit);
            }
            self.ev.leave();
        }
        self.quiet = was_quiet;
        Ok((r?, None))
    }
}

#[cfg(test)]
mod tests {
    use super::{CKind, DecodeErr, Events, MAX_UNFOLDED, MAX_UNFOLDED_BYTES, QuietRun, Side};
    use crate::proto::described::{self, variants};
    use crate::proto::field::{Field, GroupDefs};

    /// A decode error travels in a finding's numbers whole: every kind, the
    /// widest offsets and lengths.
    #[test]
    fn a_decode_error_reads_back_from_its_numbers() {
        for kind in super::ErrKind::ALL {
            let e = DecodeErr {
                kind,
                field: u16::MAX,
                offset: (1 << 48) - 1,
                need: u64::MAX,
                have: (1 << 48) - 2,
            };
            assert_eq!(crate::engine::finding::round_trip(e), e);
        }
    }

    /// What a sink that takes no field is told: the root type's integers,
    /// the violations.
    #[derive(Default, PartialEq, Debug)]
    struct Quiet(Vec<(u16, i64)>, Vec<(u16, usize)>);

    impl Events for Quiet {
        fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
            false
        }
        fn int(&mut self, field: u16, value: i64) {
            self.0.push((field, value));
        }
        fn violation(&mut self, field: u16, offset: usize, _value: f64, _bound: Option<i64>) {
            self.1.push((field, offset));
        }
    }

    /// What a sink that takes every field is told, fields included.
    #[derive(Default)]
    struct Loud(Quiet, usize);

    impl Events for Loud {
        fn field(&mut self, _field: Field<'_>) {
            self.1 += 1;
        }
        fn int(&mut self, field: u16, value: i64) {
            self.0.0.push((field, value));
        }
        fn violation(&mut self, field: u16, offset: usize, value: f64, bound: Option<i64>) {
            self.0.violation(field, offset, value, bound);
        }
    }

    fn strs_ksy() -> &'static described::Described {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/protocols/starstrike.ksy"
        ))
        .unwrap();
        let d = described::parse("starstrike.ksy", &text).unwrap();
        described::leak(d, usize::MAX)
    }

    /// A WorldSnapshot of two entities, by hand from the specification:
    /// magic, type 0x0101, sequence 7, ack bits, tick, count, then each
    /// entity's id, type, position, rotation, velocity, health and flags.
    fn snapshot() -> Vec<u8> {
        let mut p = b"STRS".to_vec();
        p.extend([0x01, 0x01, 0x00, 0x07, 0x00, 0x00, 0x00, 0x03]);
        p.extend([0x00, 0x00, 0x01, 0x00, 0x02]);
        for (id, ty) in [(9u8, 2u8), (10, 3)] {
            p.extend([0, 0, 0, id, ty]);
            for f in 0..10u8 {
                p.extend(f32::from(f).to_be_bytes());
            }
            p.extend([100, 0]);
        }
        p
    }

    #[test]
    fn fixed_types_are_sized_once_and_checked_ones_are_not() {
        let d = strs_ksy();
        let root = &d.compiled.root;
        assert_eq!(root.fixed, None, "a contents and a switch");
        let CKind::Switch { cases, .. } = &root.attrs[4].kind else {
            panic!("the payload is a switch");
        };
        let snapshot = &cases.iter().find(|(k, _)| *k == 0x0101).unwrap().1;
        // A count read from a field: not fixed.
        assert_eq!(snapshot.fixed, None);
        let CKind::User(entity) = &snapshot.attrs[2].kind else {
            panic!("entities");
        };
        // `entity_type` has a `valid`: checked, so not skipped.
        assert_eq!(entity.fixed, None);
        let sizes: Vec<Option<usize>> = entity
            .attrs
            .iter()
            .filter_map(|a| match &a.kind {
                CKind::User(t) => Some(t.fixed),
                _ => None,
            })
            .collect();
        // position, rotation, velocity: three, four and three floats.
        assert_eq!(sizes, [Some(12), Some(16), Some(12)]);
        // A quiet walk skips the id alone, then the vectors, the health and
        // the flags together; never the checked type.
        let runs: Vec<Option<QuietRun>> = entity.attrs.iter().map(|a| a.quiet_run).collect();
        let run = |next, bytes| Some(QuietRun { next, bytes });
        assert_eq!(
            runs,
            [
                run(1, 4),
                None,
                run(7, 42),
                run(7, 30),
                run(7, 14),
                run(7, 2),
                run(7, 1)
            ]
        );
        // A count read by a later field is kept: not skipped.
        assert_eq!(snapshot.attrs[0].quiet_run, run(1, 4));
        assert_eq!(snapshot.attrs[1].quiet_run, None);
        // Only what a later field reads is kept: the message type (the
        // switch's), the count; nothing of an entity.
        let slots =
            |t: &super::CType| -> Vec<Option<u8>> { t.attrs.iter().map(|a| a.slot).collect() };
        assert_eq!(slots(root), [None, Some(0), None, None, None]);
        assert_eq!(slots(snapshot), [None, Some(0), None]);
        assert_eq!((root.kept, snapshot.kept, entity.kept), (1, 1, 0));
    }

    #[test]
    fn a_quiet_walk_skips_fixed_types_and_agrees_with_a_full_one_on_any_bytes() {
        let d = strs_ksy();
        let whole = snapshot();
        assert_eq!(whole.len(), 17 + 2 * 47);
        let mut inputs: Vec<Vec<u8>> = (0..=whole.len()).map(|n| whole[..n].to_vec()).collect();
        for i in 0..whole.len() {
            for x in [0x00, 0x05, 0xff] {
                let mut p = whole.clone();
                p[i] = x;
                inputs.push(p);
            }
        }
        for p in &inputs {
            let mut quiet = Quiet::default();
            let mut loud = Loud::default();
            let q: Result<usize, DecodeErr> = d.compiled.walk(p, &mut quiet);
            let l = d.compiled.walk(p, &mut loud);
            assert_eq!(q, l, "{p:02x?}");
            assert_eq!(quiet.1, loud.0.1, "violations of {p:02x?}");
            // The root type's integers are told alike, and only they.
            let root_fields: Vec<u16> = d.compiled.root.attrs.iter().map(|a| a.field).collect();
            assert!(quiet.0.iter().all(|(f, _)| root_fields.contains(f)));
            assert_eq!(quiet.0, loud.0.0, "{p:02x?}");
        }
        // On the whole packet the full walk hands over every field; the
        // quiet one skips the six vectors (30 floats).
        let mut loud = Loud::default();
        let mut quiet = Quiet::default();
        assert_eq!(d.compiled.walk(&whole, &mut loud), Ok(whole.len()));
        assert_eq!(d.compiled.walk(&whole, &mut quiet), Ok(whole.len()));
        assert!(loud.1 > 40, "{} fields", loud.1);
        // The root's three integers (the magic is a `contents`).
        assert_eq!(quiet.0, loud.0.0);
        assert_eq!(quiet.0.len(), 3);
    }

    /// A sink told no violation: judges no `valid`.
    #[derive(Default)]
    struct Unjudged(Vec<(u16, i64)>);

    impl Events for Unjudged {
        fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
            false
        }
        fn int(&mut self, field: u16, value: i64) {
            self.0.push((field, value));
        }
        fn judges(&self) -> bool {
            false
        }
    }

    #[test]
    fn a_walk_that_judges_nothing_skips_checked_fields_and_decodes_alike() {
        let d = strs_ksy();
        let root = &d.compiled.root;
        let CKind::Switch { cases, .. } = &root.attrs[4].kind else {
            panic!("the payload is a switch");
        };
        let case = |k: i64| &cases.iter().find(|(v, _)| *v == k).unwrap().1;
        let snap = case(0x0101);
        let CKind::User(entity) = &snap.attrs[2].kind else {
            panic!("entities");
        };
        // The checked `entity_type` aside, an entity takes 47 bytes: skipped
        // whole; its fields in one run.
        assert_eq!((entity.fixed, entity.unjudged), (None, Some(47)));
        assert_eq!(
            entity.attrs[0].unjudged_run,
            Some(QuietRun { next: 7, bytes: 47 })
        );
        // A player input: two checked floats among six fields of 24 bytes.
        let input = case(0x0100);
        assert_eq!((input.fixed, input.unjudged), (None, Some(24)));
        // What the walk tells (its end or error, the root's integers) is the
        // same judged or not, on any bytes.
        let mut input_packet = b"STRS".to_vec();
        input_packet.extend([0x01, 0x00, 0x00, 0x09, 0, 0, 0, 0]);
        for f in [7u32, 0x3f80_0000, 0xbf80_0000, 0x4000_0000, 0, 1] {
            input_packet.extend(f.to_be_bytes());
        }
        for whole in [snapshot(), input_packet] {
            assert_eq!(
                d.compiled.walk(&whole, &mut Unjudged::default()),
                Ok(whole.len())
            );
            for p in variants(&whole) {
                let mut quiet = Quiet::default();
                let (mut dyn_sink, mut typed) = (Unjudged::default(), Unjudged::default());
                let q = d.compiled.walk(&p, &mut quiet);
                assert_eq!(d.compiled.walk(&p, &mut dyn_sink), q, "{p:02x?}");
                assert_eq!(d.compiled.walk_with(&p, Side::Any, &mut typed), q);
                assert_eq!(dyn_sink.0, quiet.0, "{p:02x?}");
                assert_eq!(typed.0, quiet.0, "{p:02x?}");
            }
        }
    }

    /// Every field told, node entries and exits included, as text; `.1`:
    /// whether it judges `valid`s.
    struct Told(Vec<String>, bool);

    impl Events for Told {
        fn field(&mut self, f: Field<'_>) {
            self.0.push(format!(
                "{} {:?} {}+{} {:?}",
                f.def.name, f.index, f.offset, f.len, f.value
            ));
        }
        fn enter(&mut self, node: Field<'_>) {
            self.field(node);
            self.0.push("{".into());
        }
        fn leave(&mut self) {
            self.0.push("}".into());
        }
        fn judges(&self) -> bool {
            self.1
        }
    }

    #[test]
    fn plain_types_are_told_alike_by_a_walk_that_judges_nothing() {
        let d = strs_ksy();
        let CKind::Switch { cases, .. } = &d.compiled.root.attrs[4].kind else {
            panic!("the payload is a switch");
        };
        let snap = &cases.iter().find(|(v, _)| *v == 0x0101).unwrap().1;
        let CKind::User(entity) = &snap.attrs[2].kind else {
            panic!("entities");
        };
        // An entity: integers, floats and vectors of floats, one each.
        assert!(entity.plain && !snap.plain && !d.compiled.root.plain);
        for p in variants(&snapshot()) {
            let (mut judged, mut not) = (Told(Vec::new(), true), Told(Vec::new(), false));
            let r = d.compiled.walk_with(&p, Side::Any, &mut judged);
            assert_eq!(d.compiled.walk_with(&p, Side::Any, &mut not), r, "{p:02x?}");
            assert_eq!(not.0, judged.0, "{p:02x?}");
        }
    }

    #[test]
    fn a_quiet_walk_judges_a_plain_type_as_a_full_one_does() {
        let d = strs_ksy();
        // A player input: a plain case type, its two floats checked.
        let mut input = b"STRS".to_vec();
        input.extend([0x01, 0x00, 0x00, 0x09, 0, 0, 0, 0]);
        for f in [7u32, 0x3f80_0000, 0xc000_0000, 0x4000_0000, 0, 1] {
            input.extend(f.to_be_bytes());
        }
        let mut violations = 0;
        for whole in [snapshot(), input] {
            for p in variants(&whole) {
                let (mut quiet, mut loud) = (Quiet::default(), Loud::default());
                let q = d.compiled.walk_with(&p, Side::Any, &mut quiet);
                assert_eq!(
                    q,
                    d.compiled.walk_with(&p, Side::Any, &mut loud),
                    "{p:02x?}"
                );
                assert_eq!(quiet.1, loud.0.1, "violations of {p:02x?}");
                assert_eq!(quiet.0, loud.0.0, "{p:02x?}");
                violations += quiet.1.len();
            }
        }
        // move_y = -2 in every variant but those that cut or replace it.
        assert!(violations > 100, "{violations}");
    }

    /// The root's integers, up to the second: then done.
    #[derive(Default)]
    struct TwoInts(Vec<(u16, i64)>);

    impl Events for TwoInts {
        fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
            false
        }
        fn int(&mut self, field: u16, value: i64) {
            self.0.push((field, value));
        }
        fn done(&self) -> bool {
            self.0.len() >= 2
        }
    }

    #[test]
    fn the_roots_fixed_places_read_at_once_tell_what_the_loop_tells_on_any_bytes() {
        let d = strs_ksy();
        // The same description, its root read field by field.
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/protocols/starstrike.ksy"
        ))
        .unwrap();
        let mut by_field = described::parse("starstrike.ksy", &text).unwrap();
        by_field.compiled.prefix.clear();
        let by_field = described::leak(by_field, usize::MAX);
        let mut input = b"STRS".to_vec();
        input.extend([0x01, 0x00, 0x00, 0x09, 0, 0, 0, 0]);
        for f in [7u32, 0x3f80_0000, 0xc000_0000, 0x4000_0000, 0, 1] {
            input.extend(f.to_be_bytes());
        }
        let mut unknown_types = 0;
        for whole in [snapshot(), input] {
            for p in variants(&whole) {
                for judges in [true, false] {
                    let (mut a, mut b) = (Told(Vec::new(), judges), Told(Vec::new(), judges));
                    let r = d.compiled.walk_with(&p, Side::Any, &mut a);
                    let s = by_field.compiled.walk_with(&p, Side::Any, &mut b);
                    assert_eq!((r, &a.0), (s, &b.0), "{p:02x?}");
                }
                let (mut a, mut b) = (Quiet::default(), Quiet::default());
                let r = d.compiled.walk_with(&p, Side::Any, &mut a);
                assert_eq!(by_field.compiled.walk_with(&p, Side::Any, &mut b), r);
                assert_eq!(a, b, "{p:02x?}");
                unknown_types +=
                    usize::from(r.is_err_and(|e| e.kind == super::ErrKind::UnknownType));
                let (mut a, mut b) = (TwoInts::default(), TwoInts::default());
                let r = d.compiled.walk_with(&p, Side::Any, &mut a);
                assert_eq!(by_field.compiled.walk_with(&p, Side::Any, &mut b), r);
                assert_eq!(a.0, b.0, "{p:02x?}");
            }
        }
        assert!(unknown_types > 0);
    }

    #[test]
    fn a_root_integer_in_a_fixed_place_is_read_as_the_walk_tells_it() {
        let d = strs_ksy();
        // The magic, the type, the sequence number and the ack bits.
        assert_eq!(d.compiled.prefix, [0, 4, 6, 8]);
        let whole = snapshot();
        assert_eq!(d.compiled.fixed_root_int(&whole, 2), Some(7));
        assert_eq!(d.compiled.fixed_root_int(&whole, 0), None, "a magic");
        assert_eq!(d.compiled.fixed_root_int(&whole, 4), None, "the switch");
        for p in variants(&whole) {
            let mut quiet = Quiet::default();
            let _ = d.compiled.walk(&p, &mut quiet);
            for (i, a) in d.compiled.root.attrs.iter().enumerate() {
                let told = quiet.0.iter().find(|(f, _)| *f == a.field).map(|(_, v)| *v);
                if let Some(v) = d.compiled.fixed_root_int(&p, i) {
                    assert_eq!(told, Some(v), "field {i} of {p:02x?}");
                }
            }
            // Read in place exactly when the walk reads it, the magic and
            // the bytes there.
            let readable = p.len() >= 8 && p.starts_with(b"STRS");
            assert_eq!(d.compiled.fixed_root_int(&p, 2).is_some(), readable);
        }
    }

    /// Each type holds a switch of eight cases of the next, nine deep: 8^9
    /// copies of the last. Compiled by copying each type at each use, this
    /// kilobyte ran out of memory (2 GiB in 21 s under the fuzzer) before
    /// the copies were counted.
    const EIGHT_CASES_NINE_DEEP: &str = "\
meta: {id: t, endian: le}
seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: a, 1: a, 2: a, 3: a, 4: a, 5: a, 6: a, 7: a}}}]
types:
  a: {seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: b, 1: b, 2: b, 3: b, 4: b, 5: b, 6: b, 7: b}}}]}
  b: {seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: c, 1: c, 2: c, 3: c, 4: c, 5: c, 6: c, 7: c}}}]}
  c: {seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: d, 1: d, 2: d, 3: d, 4: d, 5: d, 6: d, 7: d}}}]}
  d: {seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: e, 1: e, 2: e, 3: e, 4: e, 5: e, 6: e, 7: e}}}]}
  e: {seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: f, 1: f, 2: f, 3: f, 4: f, 5: f, 6: f, 7: f}}}]}
  f: {seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: g, 1: g, 2: g, 3: g, 4: g, 5: g, 6: g, 7: g}}}]}
  g: {seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: h, 1: h, 2: h, 3: h, 4: h, 5: h, 6: h, 7: h}}}]}
  h: {seq: [{id: k, type: u1}, {id: s, type: {switch-on: k, cases: {0: i, 1: i, 2: i, 3: i, 4: i, 5: i, 6: i, 7: i}}}]}
  i: {seq: [{id: k, type: u1}]}
-lwarscope: {recognise: {port: 1}}
";

    /// Each type holds eight fields of the next, eight deep: 8^8 fields, each
    /// a registered field of its own (`t.x.y.z…`). Before, the registry
    /// looked each name up among all the others: quadratic, past a minute
    /// before its bound of 65 535 fields refused it.
    const EIGHT_FIELDS_EIGHT_DEEP: &str = "\
meta: {id: t, endian: le}
seq: [{id: p, type: a}, {id: q, type: a}, {id: r, type: a}, {id: s, type: a}, {id: u, type: a}, {id: v, type: a}, {id: w, type: a}, {id: x, type: a}]
types:
  a: {seq: [{id: p, type: b}, {id: q, type: b}, {id: r, type: b}, {id: s, type: b}, {id: u, type: b}, {id: v, type: b}, {id: w, type: b}, {id: x, type: b}]}
  b: {seq: [{id: p, type: c}, {id: q, type: c}, {id: r, type: c}, {id: s, type: c}, {id: u, type: c}, {id: v, type: c}, {id: w, type: c}, {id: x, type: c}]}
  c: {seq: [{id: p, type: d}, {id: q, type: d}, {id: r, type: d}, {id: s, type: d}, {id: u, type: d}, {id: v, type: d}, {id: w, type: d}, {id: x, type: d}]}
  d: {seq: [{id: p, type: e}, {id: q, type: e}, {id: r, type: e}, {id: s, type: e}, {id: u, type: e}, {id: v, type: e}, {id: w, type: e}, {id: x, type: e}]}
  e: {seq: [{id: p, type: f}, {id: q, type: f}, {id: r, type: f}, {id: s, type: f}, {id: u, type: f}, {id: v, type: f}, {id: w, type: f}, {id: x, type: f}]}
  f: {seq: [{id: p, type: g}, {id: q, type: g}, {id: r, type: g}, {id: s, type: g}, {id: u, type: g}, {id: v, type: g}, {id: w, type: g}, {id: x, type: g}]}
  g: {seq: [{id: k, type: u1}]}
-lwarscope: {recognise: {port: 1}}
";

    /// A description of `depth` types, each holding `fan` fields (or, with
    /// `switch`, a switch of `fan` cases) of the next.
    fn nested(depth: usize, fan: usize, switch: bool) -> String {
        let uses = |next: &str| {
            if switch {
                let cases: Vec<String> = (0..fan).map(|i| format!("{i}: {next}")).collect();
                format!(
                    "{{id: k, type: u1}}, {{id: s, type: {{switch-on: k, cases: {{{}}}}}}}",
                    cases.join(", ")
                )
            } else {
                let fields: Vec<String> = (0..fan)
                    .map(|i| format!("{{id: f{i}, type: {next}}}"))
                    .collect();
                fields.join(", ")
            }
        };
        let mut text = format!(
            "meta: {{id: t, endian: le}}\nseq: [{}]\ntypes:\n",
            uses("t1")
        );
        for d in 1..depth {
            text += &format!("  t{d}: {{seq: [{}]}}\n", uses(&format!("t{}", d + 1)));
        }
        text += &format!("  t{depth}: {{seq: [{{id: k, type: u1}}]}}\n");
        text + "-lwarscope: {recognise: {port: 1}}\n"
    }

    fn refused(text: &str) -> crate::proto::described::ksy::KsyError {
        match described::parse("t.ksy", text) {
            Ok(d) => panic!(
                "accepted, with {} registered fields:\n{text}",
                d.compiled.specs.len()
            ),
            Err(e) => e,
        }
    }

    #[test]
    fn types_used_in_one_another_unfold_within_a_bound_or_are_refused() {
        let says = format!("the description unfolds into more than {MAX_UNFOLDED} fields");
        for (text, line, col, path) in [
            // At the field whose copy crossed the bound, named by the uses
            // that copied it.
            (EIGHT_CASES_NINE_DEEP, 12, 14, "t.s.s.s.s.s.s.s.s.s.k"),
            (EIGHT_FIELDS_EIGHT_DEEP, 9, 14, "t.p.p.q.q.v.x.p"),
            // Within what the compiler took before, past the bound.
            (&*nested(7, 4, true), 10, 15, "t.s.s.s.s.s.s.s.k"),
            (&*nested(7, 4, false), 10, 15, "t.f1.f0.f1.f1.f3.f0.f2.k"),
        ] {
            let e = refused(text);
            assert!(e.msg.starts_with(&format!("`{path}`: {says}")), "{e}");
            assert_eq!((e.line, e.col), (line, col), "{e}");
        }
        // Up to the bound, they compile: 4^6 fields of the deepest type, with
        // every other copy, are under it.
        let d = described::parse("t.ksy", &nested(6, 4, false)).expect("compiles");
        assert_eq!(
            d.compiled.specs.len(),
            1 + 4 + 16 + 64 + 256 + 1024 + 4096 + 4096
        );
        described::parse("t.ksy", &nested(6, 4, true)).expect("compiles");
    }

    #[test]
    fn long_docs_copied_at_each_use_are_bounded_too() {
        // A field with a doc of 64 KiB in a type used 512 times: 32 MiB of
        // docs, one copy per registered field.
        let doc = "x".repeat(64 << 10);
        let text = nested(3, 8, false).replace(
            "{id: k, type: u1}",
            &format!("{{id: k, type: u1, doc: {doc}}}"),
        );
        let e = refused(&text);
        assert!(
            e.msg.starts_with(&format!(
                "`t.f3.f7.f7.k`: the description unfolds into more than {} MiB of names, docs and contents",
                MAX_UNFOLDED_BYTES >> 20
            )),
            "{e}"
        );
        assert_eq!((e.line, e.col), (6, 15), "{e}");
    }
}
