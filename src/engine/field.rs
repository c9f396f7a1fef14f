//! Typed, registered fields: how a protocol shows its bytes to every output
//! without the outputs knowing its wire format.
//!
//! A protocol registers its fields once ([`FieldDef`], in a `static` table) and
//! walks a packet by calling a [`FieldSink`] with each [`Field`]: the registered
//! definition, where the bytes are, and the typed [`Value`] borrowed from the
//! packet. The packet view (`-V`, `-x`), the terminal UI's tree and hex panes, the
//! display filter, field output and JSON are all sinks. Walking allocates nothing.

use super::out::{Out, WriteText};
use std::fmt;

/// What kind of value a registered field holds (for the filter's type checks and
/// for documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// An unsigned integer.
    Unsigned,
    /// A signed integer.
    Signed,
    /// A floating-point number.
    Float,
    /// A boolean.
    Bool,
    /// Text (bytes that should be UTF-8).
    Text,
    /// Raw bytes.
    Bytes,
    /// A number with named values.
    Enum,
    /// A bit field shown in binary.
    Bits,
    /// Two numbers shown `a:b` (an id with a generation and an index).
    Pair,
    /// A node with children and no value of its own (a message, an entry).
    Node,
}

impl FieldType {
    /// What a field of this type holds, for error messages.
    pub const fn noun(self) -> &'static str {
        match self {
            FieldType::Unsigned | FieldType::Signed | FieldType::Float | FieldType::Bits => {
                "a number"
            }
            FieldType::Bool => "a boolean (0 or 1)",
            FieldType::Text => "text",
            FieldType::Bytes => "bytes",
            FieldType::Enum => "a number or its name",
            FieldType::Pair => "a pair a:b",
            FieldType::Node => "no value",
        }
    }
}

/// One registered field: a stable filter name, the label the specification uses,
/// its type, and one line of documentation.
#[derive(Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// `proto.field`, as typed in `-Y` and `-e`: `lwar.input.aim_x`, `strs.seq`.
    pub name: &'static str,
    /// The name in the specification, shown in the field tree: `aimX`.
    pub label: &'static str,
    pub ty: FieldType,
    pub doc: &'static str,
}

/// A field's value, borrowed from the packet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// A node: a message or an entry; its children follow.
    None,
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Bool(bool),
    /// Text as sent (it may not be UTF-8; it is shown escaped).
    Text(&'a [u8]),
    Bytes(&'a [u8]),
    /// A number and its name, if the specification names it.
    Enum {
        raw: u64,
        name: Option<&'static str>,
    },
    /// `width` bits shown in binary, most significant first.
    Bits {
        raw: u64,
        width: u8,
    },
    /// `a:b`.
    Pair(u32, u32),
    /// An unsigned number shown in hex as sent (`0x1234`): an id whose
    /// digits mean something in hex. It compares and exports as the number.
    Hex(u64),
}

impl Value<'_> {
    /// The value as a number, where it is one (enums and bits by their raw value).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Unsigned(v)
            | Value::Hex(v)
            | Value::Enum { raw: v, .. }
            | Value::Bits { raw: v, .. } => Some(v as f64),
            Value::Signed(v) => Some(v as f64),
            Value::Float(v) => Some(v),
            Value::Bool(b) => Some(u8::from(b) as f64),
            _ => None,
        }
    }
}

/// Shown as in the field tree: text quoted and escaped (never a raw control
/// character from the wire), bytes in hex, enums by name with the number.
impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

/// What `Display` writes, into any [`Out`]: the line of every packet of
/// `--packets`, `--format jsonl` and `-V` writes values without `fmt`.
impl WriteText for Value<'_> {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        match *self {
            Value::None => Ok(()),
            Value::Unsigned(v) => f.int(v),
            Value::Signed(v) => f.int(v),
            // A binary32 from the wire, widened: shown as its shortest binary32
            // form (-0.7, not -0.699999988079071).
            Value::Float(v) if f64::from(v as f32) == v => f.float(v as f32),
            Value::Float(v) => f.float(v),
            Value::Bool(v) => f.s(if v { "true" } else { "false" }),
            Value::Text(bytes) => {
                f.wire_piece();
                f.s("\"")?;
                text_escaped(f, bytes)?;
                f.s("\"")
            }
            Value::Bytes(bytes) => hex(f, bytes),
            Value::Enum {
                raw,
                name: Some(name),
            } => {
                f.s(name)?;
                f.s(" (")?;
                f.int(raw)?;
                f.s(")")
            }
            Value::Enum { raw, name: None } => {
                f.int(raw)?;
                f.s(" (unknown)")
            }
            Value::Bits { raw, width } => f.bits(raw, width),
            Value::Pair(a, b) => {
                f.int(a)?;
                f.s(":")?;
                f.int(b)
            }
            Value::Hex(v) => {
                let digits = ((u64::BITS - v.leading_zeros()).div_ceil(4)).max(1) as usize;
                let mut all = [b'0'; 18];
                all[1] = b'x';
                for i in 0..digits {
                    all[1 + digits - i] = HEX[((v >> (4 * i)) & 15) as usize];
                }
                f.ascii(all.get(..2 + digits).unwrap_or_default())
            }
        }
    }
}

/// Text from the wire, without its quotes: `"` and `\\` escaped, control
/// characters as `char::escape_default` writes them, bytes that are not
/// UTF-8 as `\xNN`.
pub fn text_escaped(f: &mut impl Out, bytes: &[u8]) -> fmt::Result {
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        let mut start = 0;
        for (i, c) in valid.char_indices() {
            if !(c == '"' || c == '\\' || c.is_control()) {
                continue;
            }
            f.s(valid.get(start..i).unwrap_or_default())?;
            match c {
                '"' => f.s("\\\"")?,
                '\\' => f.s("\\\\")?,
                c => f.display(&c.escape_default())?,
            }
            start = i + c.len_utf8();
        }
        f.s(valid.get(start..).unwrap_or_default())?;
        for &b in chunk.invalid() {
            f.ascii(&[
                b'\\',
                b'x',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ])?;
        }
    }
    Ok(())
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Bytes in lowercase hex, two digits each.
fn hex(f: &mut impl Out, bytes: &[u8]) -> fmt::Result {
    let mut line = [0u8; 64];
    for chunk in bytes.chunks(line.len() / 2) {
        for (pair, &b) in line.chunks_exact_mut(2).zip(chunk) {
            pair.copy_from_slice(&[HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
        f.ascii(line.get(..2 * chunk.len()).unwrap_or_default())?;
    }
    Ok(())
}

/// One field of one packet: what it is, where its bytes are, what it holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field<'a> {
    pub def: &'static FieldDef,
    /// The element's index, for fields that repeat (`weaponType[2]`, an entry).
    pub index: Option<u32>,
    /// Byte offset from the start of the UDP payload.
    pub offset: usize,
    pub len: usize,
    pub value: Value<'a>,
}

impl Field<'_> {
    /// The byte range in the UDP payload.
    pub fn span(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.len
    }
}

/// Receives the fields of a packet, in wire order, as a tree: [`FieldSink::enter`]
/// opens a node (a message, an entry) whose children come until the matching
/// [`FieldSink::leave`].
///
/// A sink that shows only some fields (`-T fields`) says so through
/// [`FieldSink::wants_any`], and a walk skips the groups it does not want:
/// the fields of a message type, of a node, of the header. The answer must
/// not change during a walk; a sink that wants every field (the tree, JSON)
/// keeps the default.
pub trait FieldSink {
    fn field(&mut self, field: Field<'_>);
    fn enter(&mut self, node: Field<'_>) {
        self.field(node);
    }
    fn leave(&mut self) {}

    /// Whether the sink takes any field of a group: `key` names the group
    /// for the whole run (the address of the static table or type it is
    /// walked from, never of an empty one), `defs` hands every definition
    /// the group may hold (its node's included) to the callback it is
    /// given. A walk asks it before a group and, told no, skips the group
    /// whole (its node, its fields, their formatting; not the decoding a
    /// later field's place depends on). A sink may remember the answer by
    /// `key`, so `defs` is listed at most once per run. True by default.
    fn wants_any(&mut self, _key: usize, _defs: &GroupDefs<'_>) -> bool {
        true
    }

    /// The fields of `table` (a protocol's registry, by address) the sink
    /// takes, by their index in it: a walk asks once and skips the others
    /// without making their values (their bytes are still read where a
    /// later field's place depends on them). Every field by default.
    fn wanted(&mut self, _table: &'static [FieldDef]) -> FieldSet {
        FieldSet::ALL
    }
}

/// A set of a protocol's registered fields, by their index in its
/// registry ([`FieldSink::wanted`]); an index past the first 256 is always
/// in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSet([u64; 4]);

impl FieldSet {
    pub const ALL: FieldSet = FieldSet([u64::MAX; 4]);
    pub const NONE: FieldSet = FieldSet([0; 4]);

    /// The fields of `table` for which `take` says yes.
    pub fn of(table: &[FieldDef], mut take: impl FnMut(&FieldDef) -> bool) -> FieldSet {
        let mut set = FieldSet::NONE;
        for (i, def) in table.iter().enumerate().take(256) {
            if take(def) {
                set.0[i / 64] |= 1 << (i % 64);
            }
        }
        set
    }

    /// `def` alone, if `table` holds it (by address); else none of
    /// `table`'s fields.
    pub fn only(table: &[FieldDef], def: &FieldDef) -> FieldSet {
        let size = std::mem::size_of::<FieldDef>();
        let at = (def as *const FieldDef as usize).wrapping_sub(table.as_ptr() as usize);
        let i = at / size;
        let mut set = FieldSet::NONE;
        if i < table.len().min(256) && at.is_multiple_of(size) {
            set.0[i / 64] |= 1 << (i % 64);
        }
        set
    }

    #[inline(always)]
    pub fn contains(&self, index: u16) -> bool {
        let i = usize::from(index);
        self.0.get(i / 64).is_none_or(|w| w & 1 << (i % 64) != 0)
    }
}

/// A group's definitions, for [`FieldSink::wants_any`]: handed one at a time
/// to the callback it is given.
pub type GroupDefs<'a> = dyn Fn(&mut dyn FnMut(&'static FieldDef)) + 'a;

/// The key of a group for [`FieldSink::wants_any`]: the address of what it
/// is walked from.
pub fn group_key<T: ?Sized>(table: &'static T) -> usize {
    std::ptr::from_ref(table).cast::<u8>() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_set_holds_what_it_was_told_and_every_index_past_256() {
        let defs: Vec<FieldDef> = (0..300)
            .map(|i| FieldDef {
                name: if i % 70 == 3 { "a" } else { "b" },
                label: "",
                ty: FieldType::Unsigned,
                doc: "",
            })
            .collect();
        let set = FieldSet::of(&defs, |d| d.name == "a");
        let held: Vec<u16> = (0..300).filter(|&i| set.contains(i)).collect();
        let mut expected = vec![3, 73, 143, 213];
        expected.extend(256..300);
        assert_eq!(held, expected);
        assert!((0..300).all(|i| FieldSet::ALL.contains(i)));
        let only = FieldSet::only(&defs, &defs[70]);
        assert_eq!(
            only,
            FieldSet::of(&defs[..256], |d| std::ptr::eq(d, &defs[70]))
        );
        assert_eq!(FieldSet::only(&defs[..50], &defs[70]), FieldSet::NONE);
        assert!(!(0..256).any(|i| FieldSet::NONE.contains(i)));
    }

    #[test]
    fn text_from_the_wire_is_escaped() {
        let v = Value::Text(b"a\x1b[2J\"b\xff");
        assert_eq!(v.to_string(), r#""a\u{1b}[2J\"b\xff""#);
    }

    #[test]
    fn values_display_as_in_the_tree() {
        assert_eq!(Value::Bits { raw: 5, width: 8 }.to_string(), "00000101");
        assert_eq!(Value::Pair(0, 1).to_string(), "0:1");
        assert_eq!(Value::Hex(0x1234).to_string(), "0x1234");
        assert_eq!(Value::Hex(0).to_string(), "0x0");
        assert_eq!(Value::Hex(u64::MAX).to_string(), "0xffffffffffffffff");
        let e = Value::Enum {
            raw: 2,
            name: Some("Timeout"),
        };
        assert_eq!(e.to_string(), "Timeout (2)");
        assert_eq!(Value::Bytes(&[0xde, 0xad]).to_string(), "dead");
        assert_eq!(Value::Float(f64::from(-0.7f32)).to_string(), "-0.7");
        assert_eq!(Value::Float(0.1).to_string(), "0.1");
        assert_eq!(Value::Float(f64::NAN).to_string(), "NaN");
        assert_eq!(Value::Signed(-3).as_f64(), Some(-3.0));
        assert_eq!(Value::Text(b"x").as_f64(), None);
    }
}
