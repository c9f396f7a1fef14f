//! How every protocol's decode errors and violations say where they lie.
//!
//! A position is always `at offset N`: N counts bytes from the start of the
//! datagram (or of the rebuilt message a protocol decodes), as etherparse's
//! and Wireshark's errors count them. A shortage, in the spirit of
//! etherparse's `LenError` (the layer, the length required, the length there
//! is, where the layer starts), is one sentence:
//! `{what} at offset {offset} is truncated: it needs {needed} bytes, {left}
//! are left`. Whether a shortage is the capture's doing (`truncated`) or the
//! sender's (`malformed`) is the engine's call, from the lengths it kept, and
//! is said by the finding's kind, never by this text; a rule the bytes break
//! once decoded is a `violation` with its own text, which places itself the
//! same way.
//!
//! lwar's errors, and Starstrike's but its truncation, write these words in
//! their own `thiserror` attributes (their tests hold them to [`At`] and
//! [`Short`]); Starstrike's truncation (counted from the field cut) and
//! Battlegrounds', Vessel's and the described protocols' errors write them
//! with these two types.

use std::fmt;

/// `at offset N`: where the bytes at fault start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At(pub u64);

impl At {
    /// From a `usize` offset (every protocol's own type for positions).
    pub const fn of(offset: usize) -> At {
        At(offset as u64)
    }
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at offset {}", self.0)
    }
}

/// Where the bytes a [`Short`] counts are left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Within {
    /// In the datagram (or the rebuilt message) being decoded.
    Datagram,
    /// In the message that encloses the field (a protobuf length inside
    /// another message's).
    Message,
}

/// A part that needs more bytes than are left: `{what} at offset {offset} is
/// truncated: it needs {needed} bytes, {left} are left`, both counted from
/// `offset`.
#[derive(Debug, Clone, Copy)]
pub struct Short<W> {
    /// What is cut: a message type, a packet's part, a field.
    pub what: W,
    pub offset: u64,
    pub needed: u64,
    pub left: u64,
    pub within: Within,
}

impl<W: fmt::Display> fmt::Display for Short<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} is truncated: it needs {} bytes, {} are left",
            self.what,
            At(self.offset),
            self.needed,
            self.left
        )?;
        match self.within {
            Within::Datagram => Ok(()),
            Within::Message => f.write_str(" in its message"),
        }
    }
}

/// One protocol's decode errors (or violations), declared once: each variant
/// with its fields, its text (the enum's own attributes: `thiserror`'s
/// `#[error]`, or a `Display` written beside it) and its stable kebab-case
/// name. From the declaration come the enum; its kinds (the variants without
/// their numbers: `ALL`, `name`, `Display`, what malformed packets are counted
/// by and rules are named after); `kind()`; and the value as an
/// [`Arg`](crate::engine::finding::Arg) of a finding's numbers (the variant's
/// index, then each field in the order declared; a detail declared with
/// [`proto_details!`](crate::proto_details) carries it), which a test per
/// protocol holds to a round trip. A variant's
/// fields must fit in [`ARGS_BITS`](crate::engine::finding::ARGS_BITS)
/// with the tag: checked when the crate compiles.
macro_rules! wire_errors {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident { $($field:ident : $fty:ty),* $(,)? } = $kname:literal
            ),+ $(,)?
        }
        $(#[$kmeta:meta])*
        kinds $kind:ident;
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $( $(#[$vmeta])* $variant { $($field: $fty),* }, )+
        }

        $(#[$kmeta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $kind {
            $($variant,)+
        }

        impl $kind {
            pub const ALL: [$kind; [$(stringify!($variant)),+].len()] = [$($kind::$variant),+];

            /// A stable kebab-case name, used in JSON, counters and rules.
            pub const fn name(self) -> &'static str {
                match self {
                    $($kind::$variant => $kname,)+
                }
            }
        }

        impl std::fmt::Display for $kind {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl $name {
            pub const fn kind(&self) -> $kind {
                match self {
                    $($name::$variant { .. } => $kind::$variant,)+
                }
            }
        }

        /// A value in a finding's numbers: the variant's index, then its
        /// fields in the order declared.
        impl $crate::engine::finding::Arg for $name {
            const BITS: u32 = $crate::engine::finding::ARGS_BITS;

            fn put(self, w: &mut $crate::engine::finding::ArgsWriter) {
                match self {
                    $($name::$variant { $($field),* } => {
                        w.put($kind::$variant as u8);
                        $(w.put($field);)*
                    })+
                }
            }

            fn take(r: &mut $crate::engine::finding::ArgsReader<'_>) -> $name {
                let tag: u8 = r.take();
                let kind = $kind::ALL.get(usize::from(tag)).copied().unwrap_or($kind::ALL[0]);
                match kind {
                    $($kind::$variant => $name::$variant { $($field: r.take::<$fty>()),* },)+
                }
            }
        }

        const _: () = {
            use $crate::engine::finding::{Arg, ARGS_BITS};
            $(assert!(
                8 $(+ <$fty as Arg>::BITS)* <= ARGS_BITS,
                concat!(stringify!($name), "::", stringify!($variant), ": too many bits for a finding's numbers"),
            );)+
        };
    };
}
pub(crate) use wire_errors;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_and_a_shortage_read_the_same_for_every_protocol() {
        assert_eq!(At(12).to_string(), "at offset 12");
        let short = |within| Short {
            what: "Input",
            offset: 12,
            needed: 8,
            left: 5,
            within,
        };
        assert_eq!(
            short(Within::Datagram).to_string(),
            "Input at offset 12 is truncated: it needs 8 bytes, 5 are left"
        );
        assert_eq!(
            short(Within::Message).to_string(),
            "Input at offset 12 is truncated: it needs 8 bytes, 5 are left in its message"
        );
        // lwar's own attribute writes the same sentence, and Battlegrounds'
        // through `Short`.
        use crate::proto::battlegrounds::wire as bg;
        use crate::proto::lwar::wire as lwar;
        let e = lwar::DecodeError::Truncated {
            offset: 12,
            msg_type: lwar::MessageType::Input,
            needed: 8,
            available: 5,
        };
        assert_eq!(e.to_string(), short(Within::Datagram).to_string());
        let e = bg::DecodeError::Truncated {
            offset: 42,
            packet_type: bg::PacketType::AuthOk,
            part: bg::Part::Name,
            needed: 10,
            available: 3,
        };
        let s = Short {
            what: "AUTH_OK name",
            offset: 42,
            needed: 10,
            left: 3,
            within: Within::Datagram,
        };
        assert_eq!(e.to_string(), s.to_string());
    }
}
