//! Typed, registered fields: how a protocol shows its bytes to every output
//! without the outputs knowing its wire format.
//!
//! A protocol registers its fields once ([`FieldDef`], in a `static` table) and
//! walks a packet by calling a [`FieldSink`] with each [`Field`]: the registered
//! definition, where the bytes are, and the typed [`Value`] borrowed from the
//! packet. The packet view (`-V`, `-x`), the terminal UI's tree and hex panes, the
//! display filter, field output and JSON are all sinks. Walking allocates nothing.

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
}

impl Value<'_> {
    /// The value as a number, where it is one (enums and bits by their raw value).
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Unsigned(v) | Value::Enum { raw: v, .. } | Value::Bits { raw: v, .. } => {
                Some(v as f64)
            }
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
        match *self {
            Value::None => Ok(()),
            Value::Unsigned(v) => write!(f, "{v}"),
            Value::Signed(v) => write!(f, "{v}"),
            // A binary32 from the wire, widened: shown as its shortest binary32
            // form (-0.7, not -0.699999988079071).
            Value::Float(v) if f64::from(v as f32) == v => write!(f, "{}", v as f32),
            Value::Float(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Text(bytes) => {
                f.write_str("\"")?;
                for chunk in bytes.utf8_chunks() {
                    for c in chunk.valid().chars() {
                        match c {
                            '"' => f.write_str("\\\"")?,
                            '\\' => f.write_str("\\\\")?,
                            c if c.is_control() => write!(f, "{}", c.escape_default())?,
                            c => write!(f, "{c}")?,
                        }
                    }
                    for b in chunk.invalid() {
                        write!(f, "\\x{b:02x}")?;
                    }
                }
                f.write_str("\"")
            }
            Value::Bytes(bytes) => {
                for b in bytes {
                    write!(f, "{b:02x}")?;
                }
                Ok(())
            }
            Value::Enum {
                raw,
                name: Some(name),
            } => write!(f, "{name} ({raw})"),
            Value::Enum { raw, name: None } => write!(f, "{raw} (unknown)"),
            Value::Bits { raw, width } => write!(f, "{raw:0w$b}", w = usize::from(width)),
            Value::Pair(a, b) => write!(f, "{a}:{b}"),
        }
    }
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
pub trait FieldSink {
    fn field(&mut self, field: Field<'_>);
    fn enter(&mut self, node: Field<'_>) {
        self.field(node);
    }
    fn leave(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_wire_is_escaped() {
        let v = Value::Text(b"a\x1b[2J\"b\xff");
        assert_eq!(v.to_string(), r#""a\u{1b}[2J\"b\xff""#);
    }

    #[test]
    fn values_display_as_in_the_tree() {
        assert_eq!(Value::Bits { raw: 5, width: 8 }.to_string(), "00000101");
        assert_eq!(Value::Pair(0, 1).to_string(), "0:1");
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
