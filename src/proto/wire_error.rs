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
