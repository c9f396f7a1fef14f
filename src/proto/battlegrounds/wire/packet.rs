//! The zero-copy packet view: the header and the one payload of a packet,
//! checked once by [`Packet::new_checked`], then read without failing.

use super::defs::{HEADER_LEN, VERTEX_LEN};
use super::error::{DecodeError, Part, Violation};
use super::layout::{
    AUTH_OK_NAME, AUTH_OK_NAME_LEN, CIRCLE_LEN, Form, PROP_SHAPE_TYPE, PayloadOf, read_payload,
};
use super::payload::{Store, View};
use super::types::{ByteOrder, Dialect, PacketType, PingForm, VERSION};

/// The 8-byte header, as read from the wire (whatever its version).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Header {
    /// The session id the REST API gave, on every packet of the session.
    pub session_id: u32,
    pub channel: u8,
    pub op: u8,
    /// 0 for every packet defined.
    pub version: u8,
    /// 0; anything else is a violation.
    pub reserved: u8,
}

impl Header {
    /// Reads a little-endian header (the corpus's form); only its length is
    /// checked. [`Header::parse_in`] reads either order.
    pub fn parse(bytes: &[u8]) -> Result<Header, DecodeError> {
        Header::parse_in(bytes, ByteOrder::Little)
    }

    /// Reads the header in `order`; only its length is checked.
    pub fn parse_in(bytes: &[u8], order: ByteOrder) -> Result<Header, DecodeError> {
        match (order.u32(bytes, 0), bytes.get(4..HEADER_LEN)) {
            (Some(session_id), Some(&[channel, op, version, reserved])) => Ok(Header {
                session_id,
                channel,
                op,
                version,
                reserved,
            }),
            _ => Err(DecodeError::ShortHeader { len: bytes.len() }),
        }
    }

    /// The header of a packet of type `t`, version 0, reserved 0.
    pub fn new(session_id: u32, channel: u8, t: PacketType) -> Header {
        Header {
            session_id,
            channel: t.channel().unwrap_or(channel),
            op: t.op(),
            version: VERSION,
            reserved: 0,
        }
    }

    /// The packet type, for version 0 and a defined (channel, op) pair.
    pub fn packet_type(&self) -> Result<PacketType, DecodeError> {
        if self.version != VERSION {
            return Err(DecodeError::UnknownVersion {
                version: self.version,
            });
        }
        PacketType::from_wire(self.channel, self.op).ok_or(DecodeError::UnknownType {
            channel: self.channel,
            op: self.op,
        })
    }

    /// The 8 wire bytes, little-endian.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        self.to_bytes_in(ByteOrder::Little)
    }

    /// The 8 wire bytes in `order`.
    pub fn to_bytes_in(&self, order: ByteOrder) -> [u8; HEADER_LEN] {
        let s = match order {
            ByteOrder::Big => self.session_id.to_be_bytes(),
            ByteOrder::Little => self.session_id.to_le_bytes(),
        };
        [
            s[0],
            s[1],
            s[2],
            s[3],
            self.channel,
            self.op,
            self.version,
            self.reserved,
        ]
    }
}

/// True for an AUTH: exactly 8 bytes, channel 0, op 0, version 0, reserved 0,
/// whatever the byte order of its session id. The first datagram of a flow
/// this accepts identifies it as Battlegrounds.
pub fn is_auth(payload: &[u8]) -> bool {
    payload.len() == HEADER_LEN && payload.get(4..HEADER_LEN) == Some(&[0, 0, 0, 0][..])
}

/// True for a datagram that looks like Battlegrounds: a header of 8 bytes or
/// more, version 0, and a defined (channel, op) pair. For a port the user names,
/// and for the check that a flow's later datagrams still follow it.
pub fn plausible(payload: &[u8]) -> bool {
    Header::parse(payload).is_ok_and(|h| h.packet_type().is_ok())
}

/// The payload of a packet, by its form, borrowing the packet's bytes:
/// the declaration's enum ([`PayloadOf`], `layout.rs`) over [`View`].
pub type Payload<'a> = PayloadOf<View<'a>>;

impl<S: Store> PayloadOf<S> {
    pub const fn packet_type(&self) -> PacketType {
        self.form().packet_type()
    }

    /// The reference's ping counter, of a PING or PONG of its form.
    pub const fn seq(&self) -> Option<u8> {
        match self {
            PayloadOf::PingSeq { seq } | PayloadOf::PongSeq { seq, .. } => Some(*seq),
            _ => None,
        }
    }
}

/// A MSG's numbers and block, as the analysis takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msg<'a> {
    pub msg_id: u32,
    /// The whole message's length.
    pub msg_len: u32,
    /// The block's index, from 0.
    pub block_id: u16,
    /// The block's bytes: the rest of the packet.
    pub block: &'a [u8],
}

impl<'a> Payload<'a> {
    /// A MSG's numbers and block; none for another type.
    pub const fn msg(&self) -> Option<Msg<'a>> {
        match *self {
            Payload::Msg {
                msg_id,
                msg_len,
                block_id,
                block,
            } => Some(Msg {
                msg_id,
                msg_len,
                block_id,
                block,
            }),
            _ => None,
        }
    }
}

/// A cursor over a packet that names the part it reads in its errors.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    t: PacketType,
}

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// `n` bytes of `part`, or the truncation at the cursor.
    fn take(&mut self, n: usize, part: Part) -> Result<&'a [u8], DecodeError> {
        let truncated = DecodeError::Truncated {
            offset: self.pos,
            packet_type: self.t,
            part,
            needed: n,
            available: self.left(),
        };
        let end = self.pos.checked_add(n).ok_or(truncated)?;
        let s = self.bytes.get(self.pos..end).ok_or(truncated)?;
        self.pos = end;
        Ok(s)
    }

    /// A non-negative i16 length of `part`.
    fn length(&mut self, part: Part, order: ByteOrder) -> Result<usize, DecodeError> {
        let offset = self.pos;
        let len = order.i16(self.take(2, part)?, 0).unwrap_or(0);
        usize::try_from(len).map_err(|_| DecodeError::NegativeLength {
            offset,
            packet_type: self.t,
            part,
            len,
        })
    }

    /// Nothing may follow the payload.
    fn finish(&self) -> Result<(), DecodeError> {
        match self.left() {
            0 => Ok(()),
            count => Err(DecodeError::TrailingBytes {
                offset: self.pos,
                packet_type: self.t,
                count,
            }),
        }
    }
}

/// The reference's form of a PING or PONG payload, or the specification's:
/// by size, unless the session's form is known. `spec` and `seq` are the
/// payload size of the reference's form.
fn ping_form(len: usize, seq: usize, form: Option<PingForm>) -> PingForm {
    match form {
        Some(f) => f,
        None if len >= seq => PingForm::Seq,
        None => PingForm::Spec,
    }
}

/// Decodes the payload of a packet of type `t` (the bytes after the
/// header): one pass of checks (its fixed part, every length, that nothing
/// trails it; the errors in wire order) that chooses its form, read by the
/// declaration's reader of that form (`read_payload`, each arm's form a
/// constant).
fn decode_payload(
    bytes: &[u8],
    t: PacketType,
    dialect: Dialect,
) -> Result<Payload<'_>, DecodeError> {
    let mut r = Reader {
        bytes,
        pos: HEADER_LEN,
        t,
    };
    let len = bytes.len().saturating_sub(HEADER_LEN);
    // The reference's forms, told apart by size (or by the session's form).
    let seq_form = match (t, t.seq_len()) {
        (PacketType::Ping | PacketType::Pong, Some(seq)) => {
            ping_form(len, seq, dialect.ping) == PingForm::Seq
        }
        _ => false,
    };
    let short_auth_ok = t == PacketType::AuthOk && Some(len) == t.seq_len();
    let fixed_len = match t.seq_len() {
        Some(n) if seq_form || short_auth_ok => n,
        _ => t.fixed_len(),
    };
    let fixed = r.take(fixed_len, Part::Fixed)?;
    let byte = |i: usize| fixed.get(i).copied().unwrap_or(0);
    let o = dialect.order;
    let read = |form| read_payload(form, bytes.get(HEADER_LEN..).unwrap_or_default(), o);
    let payload = match t {
        PacketType::Auth => read(Form::Auth),
        PacketType::Close => read(Form::Close),
        PacketType::Ping if seq_form => read(Form::PingSeq),
        PacketType::Ping => read(Form::Ping),
        PacketType::Pong if seq_form => read(Form::PongSeq),
        PacketType::Pong => read(Form::Pong),
        PacketType::AuthOk if short_auth_ok => read(Form::AuthOkTimestamp),
        PacketType::AuthOk => {
            r.take(usize::from(byte(AUTH_OK_NAME_LEN)), Part::Name)?;
            read(Form::AuthOk)
        }
        PacketType::MoveOp => read(Form::MoveOp),
        PacketType::MoveEvent => read(Form::MoveEvent),
        PacketType::Prop => read(check_prop(&mut r, byte(PROP_SHAPE_TYPE), o)?),
        PacketType::Msg => {
            r.pos = bytes.len();
            read(Form::Msg)
        }
        PacketType::MsgAck => read(Form::MsgAck),
    };
    r.finish()?;
    Ok(payload)
}

/// A PROP's shape of `shape_type` and its render data, from `r` (after the
/// PROP's fixed part): its form.
fn check_prop(r: &mut Reader<'_>, shape_type: u8, o: ByteOrder) -> Result<Form, DecodeError> {
    let form = match shape_type {
        0 => {
            r.take(CIRCLE_LEN, Part::Shape)?;
            Form::PropCircle
        }
        1 => {
            let n = r.length(Part::Shape, o)?;
            r.take(n * VERTEX_LEN, Part::Vertices)?;
            Form::PropPolygon
        }
        shape_type => {
            return Err(DecodeError::UnknownShape {
                offset: HEADER_LEN + PROP_SHAPE_TYPE,
                shape_type,
            });
        }
    };
    let n = r.length(Part::RenderData, o)?;
    r.take(n, Part::RenderData)?;
    Ok(form)
}

/// A checked view of one packet: a UDP payload, or a message rebuilt from its
/// MSG blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Packet<'a> {
    bytes: &'a [u8],
    header: Header,
    t: PacketType,
    payload: Payload<'a>,
    order: ByteOrder,
}

impl<'a> Packet<'a> {
    /// Checks the whole packet: the header (length, version, a defined
    /// (channel, op) pair), the payload's fixed part, every length field, and
    /// that nothing trails the payload. The reserved byte is not checked: a
    /// non-zero one is a [`Violation`]. Little-endian (the corpus's form):
    /// [`Packet::new_checked_in`] reads any dialect.
    pub fn new_checked(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Packet::new_checked_in(bytes, Dialect::LITTLE)
    }

    /// [`Packet::new_checked`] in a session's dialect: its byte order, and
    /// its PING/PONG form where it is known (else told apart by size).
    pub fn new_checked_in(bytes: &'a [u8], dialect: Dialect) -> Result<Self, DecodeError> {
        let header = Header::parse_in(bytes, dialect.order)?;
        let t = header.packet_type()?;
        let payload = decode_payload(bytes, t, dialect)?;
        Ok(Packet {
            bytes,
            header,
            t,
            payload,
            order: dialect.order,
        })
    }

    /// The byte order it was read in.
    pub const fn order(&self) -> ByteOrder {
        self.order
    }

    pub const fn header(&self) -> Header {
        self.header
    }

    pub const fn session_id(&self) -> u32 {
        self.header.session_id
    }

    pub const fn channel(&self) -> u8 {
        self.header.channel
    }

    pub const fn payload(&self) -> Payload<'a> {
        self.payload
    }

    pub const fn packet_type(&self) -> PacketType {
        self.t
    }

    /// The whole packet, header included.
    pub const fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub const fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for a packet with an empty payload (AUTH, a PING of the
    /// specification's form, CLOSE).
    pub const fn is_empty(&self) -> bool {
        self.bytes.len() == HEADER_LEN
    }

    /// The rules the packet breaks while it decodes, in wire order.
    pub fn violations(&self) -> impl Iterator<Item = Violation> + use<> {
        let mut out = [None; 3];
        if self.header.reserved != 0 {
            out[0] = Some(Violation::ReservedNonZero {
                reserved: self.header.reserved,
            });
        }
        match self.payload {
            Payload::AuthOk { name, .. } if std::str::from_utf8(name).is_err() => {
                out[1] = Some(Violation::InvalidUtf8 {
                    offset: HEADER_LEN + AUTH_OK_NAME,
                });
            }
            payload => {
                let Some(m) = payload.msg() else {
                    return out.into_iter().flatten();
                };
                if (m.msg_len as usize) < HEADER_LEN {
                    out[1] = Some(Violation::MsgLenShort { msg_len: m.msg_len });
                }
                if m.block.len() > m.msg_len as usize {
                    out[2] = Some(Violation::BlockOverrun {
                        block_len: m.block.len(),
                        msg_len: m.msg_len,
                    });
                } else if m.block.is_empty() && m.msg_len > 0 {
                    out[2] = Some(Violation::EmptyBlock {
                        block_id: m.block_id,
                    });
                }
            }
        }
        out.into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::battlegrounds::wire::ErrorKind;

    fn header(channel: u8, op: u8) -> Vec<u8> {
        vec![0x78, 0x56, 0x34, 0x12, channel, op, 0, 0]
    }

    #[test]
    fn auth_and_plausible() {
        let auth = header(0, 0);
        assert!(is_auth(&auth));
        assert!(plausible(&auth));
        let mut ping = header(0, 2);
        assert!(!is_auth(&ping));
        assert!(plausible(&ping));
        ping[6] = 1;
        assert!(!plausible(&ping));
        let mut longer = auth.clone();
        longer.push(0);
        assert!(!is_auth(&longer));
        let mut reserved = auth.clone();
        reserved[7] = 1;
        assert!(!is_auth(&reserved));
        assert!(plausible(&reserved));
        assert!(!plausible(&header(3, 0x10)));
        assert!(!plausible(&auth[..7]));
        assert!(!is_auth(&[]));
    }

    #[test]
    fn header_is_little_endian() {
        let bytes = header(0, 0);
        let p = Packet::new_checked(&bytes).unwrap();
        assert_eq!(p.session_id(), 0x1234_5678);
        assert_eq!(p.packet_type(), PacketType::Auth);
        assert_eq!(p.header().to_bytes().to_vec(), header(0, 0));
    }

    #[test]
    fn the_three_outcomes() {
        // Cut short: truncated, at the cut.
        let mut pong = header(0, 3);
        pong.extend_from_slice(&7i64.to_le_bytes());
        let e = Packet::new_checked(&pong[..12]).unwrap_err();
        // Spec form, 8 bytes; one more is the reference's seq form; two more
        // are trailing bytes.
        assert_eq!(
            e,
            DecodeError::Truncated {
                offset: 8,
                packet_type: PacketType::Pong,
                part: Part::Fixed,
                needed: 8,
                available: 4
            }
        );
        // Malformed: trailing bytes, unknown version, negative length.
        pong.push(0);
        assert!(Packet::new_checked(&pong).is_ok());
        pong.push(0);
        assert_eq!(
            Packet::new_checked(&pong).unwrap_err().kind(),
            ErrorKind::TrailingBytes
        );
        let mut v1 = header(0, 0);
        v1[6] = 1;
        assert_eq!(
            Packet::new_checked(&v1).unwrap_err(),
            DecodeError::UnknownVersion { version: 1 }
        );
        // Violation: decodes, reserved non-zero.
        let mut r = header(0, 2);
        r[7] = 9;
        let p = Packet::new_checked(&r).unwrap();
        assert_eq!(
            p.violations().collect::<Vec<_>>(),
            vec![Violation::ReservedNonZero { reserved: 9 }]
        );
    }

    #[test]
    fn negative_polygon_length() {
        let mut b = header(2, 0);
        b.extend_from_slice(&[0; 24]);
        b.push(1);
        b.extend_from_slice(&(-1i16).to_le_bytes());
        assert_eq!(
            Packet::new_checked(&b).unwrap_err(),
            DecodeError::NegativeLength {
                offset: 33,
                packet_type: PacketType::Prop,
                part: Part::Shape,
                len: -1
            }
        );
    }
}
