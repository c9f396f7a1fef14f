//! The zero-copy packet view: a header checked once, then messages read in place.

use super::entries::be_u32;
use super::error::{DecodeError, Violation};
use super::message::{Framed, MessageView, decode_at, frame_at};
use super::types::{APP_ID, HEADER_LEN, MAX_PACKET_SIZE};

/// The packet header, without the appId (which a checked packet always has).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Header {
    /// Sequence number of the last reliable message the sender has processed.
    pub ack: u32,
    /// The sender's clock, in milliseconds, for the unreliable messages.
    pub timestamp: u32,
}

impl Header {
    /// The 12 wire bytes of the header, appId first.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&APP_ID.to_be_bytes());
        b[4..8].copy_from_slice(&self.ack.to_be_bytes());
        b[8..12].copy_from_slice(&self.timestamp.to_be_bytes());
        b
    }
}

/// True when a UDP payload starts with lwar's appId: how lwar traffic is recognised
/// on any port. A payload this accepts may still be too short for a header.
pub fn is_lwar(payload: &[u8]) -> bool {
    payload.get(..4) == Some(&APP_ID.to_be_bytes()[..])
}

/// A checked view of one lwar packet (a UDP payload).
///
/// Construction checks the header; [`Packet::messages`] then decodes the messages
/// one at a time, without copying and without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    bytes: &'a [u8],
    header: Header,
}

impl<'a> Packet<'a> {
    /// Checks the length and the appId.
    pub fn new_checked(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if bytes.len() < HEADER_LEN {
            return Err(DecodeError::ShortHeader { len: bytes.len() });
        }
        let app_id = be_u32(bytes, 0);
        if app_id != APP_ID {
            return Err(DecodeError::WrongAppId { found: app_id });
        }
        Ok(Packet {
            bytes,
            header: Header {
                ack: be_u32(bytes, 4),
                timestamp: be_u32(bytes, 8),
            },
        })
    }

    pub const fn header(&self) -> Header {
        self.header
    }

    pub const fn ack(&self) -> u32 {
        self.header.ack
    }

    pub const fn timestamp(&self) -> u32 {
        self.header.timestamp
    }

    /// The whole packet, header included.
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub const fn len(&self) -> usize {
        self.bytes.len()
    }

    pub const fn is_empty(&self) -> bool {
        self.bytes.len() == HEADER_LEN
    }

    /// The packet-level violation: a packet over 512 bytes still decodes, but breaks
    /// the specification.
    pub const fn oversize(&self) -> Option<Violation> {
        if self.bytes.len() > MAX_PACKET_SIZE {
            Some(Violation::Oversize {
                len: self.bytes.len(),
            })
        } else {
            None
        }
    }

    /// The messages, in wire order. After an error the iterator ends; what it
    /// yielded before stays valid, and [`Messages::undecoded`] tells where the
    /// undecodable bytes start.
    pub fn messages(&self) -> Messages<'a> {
        Messages {
            bytes: self.bytes,
            offset: HEADER_LEN,
            failed: false,
        }
    }

    /// The messages as [`Packet::messages`] finds them (the same errors, the
    /// same end), each [`Framed`]: typed and delimited, its fields read only
    /// when asked ([`Framed::view`]).
    pub fn frames(&self) -> Frames<'a> {
        Frames {
            bytes: self.bytes,
            offset: HEADER_LEN,
            failed: false,
        }
    }
}

/// Iterator over the messages of a [`Packet`], their fields not read
/// ([`Packet::frames`]).
#[derive(Debug, Clone)]
pub struct Frames<'a> {
    bytes: &'a [u8],
    offset: usize,
    failed: bool,
}

impl<'a> Iterator for Frames<'a> {
    type Item = Result<Framed<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.bytes.len() {
            return None;
        }
        match frame_at(self.bytes, self.offset) {
            Ok(framed) => {
                self.offset += framed.bytes.len();
                Some(Ok(framed))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

impl std::iter::FusedIterator for Frames<'_> {}

/// Iterator over the messages of a [`Packet`].
#[derive(Debug, Clone)]
pub struct Messages<'a> {
    bytes: &'a [u8],
    offset: usize,
    failed: bool,
}

impl<'a> Messages<'a> {
    /// After an error: the offset and the bytes that could not be decoded.
    pub fn undecoded(&self) -> Option<(usize, &'a [u8])> {
        if self.failed {
            self.bytes
                .get(self.offset..)
                .map(|rest| (self.offset, rest))
        } else {
            None
        }
    }

    /// Offset of the next message to decode.
    pub const fn offset(&self) -> usize {
        self.offset
    }
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<MessageView<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset >= self.bytes.len() {
            return None;
        }
        match decode_at(self.bytes, self.offset) {
            Ok(view) => {
                self.offset += view.bytes.len();
                Some(Ok(view))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

impl std::iter::FusedIterator for Messages<'_> {}
