//! What a packet's own bytes tell of its byte order (the revised notes: MSG
//! lengths against the packet size, plausible timestamps and vertex counts):
//! the evidence a session decides its order from.

use super::layout::{MoveEvent, MoveOp, Movement};
use super::packet::{Packet, Payload};
use super::types::{ByteOrder, Dialect, PacketType, PingForm};

/// How strongly a packet tells its byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Both orders read the same, or equally well.
    None,
    /// Only the session id tells: the order that reads it as the smaller
    /// number (ids are handed out by a server, counted up from small
    /// values): a guess that a packet with stronger evidence overrides.
    SessionId(ByteOrder),
    /// The packet decodes in this order only, or its numbers are plausible
    /// in this order only (timestamps, lengths, floats).
    Bytes(ByteOrder),
}

/// Timestamps above this are implausible (2^53 ms is 285 000 years; a small
/// timestamp read in the wrong order is at least 2^56).
const MAX_TIMESTAMP: i64 = 1 << 53;
/// Message ids and lengths above this are implausible (16 MiB; the notes'
/// largest message is about 30 MB, and a small number read in the wrong
/// order is at least 2^24).
const MAX_MSG_NUMBER: u32 = 1 << 24;

fn float(x: f64) -> bool {
    x == 0.0 || (x.is_finite() && x.abs() > 1e-20 && x.abs() < 1e20)
}

fn timestamp(t: i64) -> bool {
    (0..MAX_TIMESTAMP).contains(&t)
}

/// A number as the other byte order reads it: its bytes reversed.
trait Swap: Copy {
    fn swapped(self) -> Self;
}

impl Swap for i64 {
    fn swapped(self) -> Self {
        self.swap_bytes()
    }
}

impl Swap for u32 {
    fn swapped(self) -> Self {
        self.swap_bytes()
    }
}

impl Swap for f64 {
    fn swapped(self) -> Self {
        f64::from_bits(self.to_bits().swap_bytes())
    }
}

impl Swap for f32 {
    fn swapped(self) -> Self {
        f32::from_bits(self.to_bits().swap_bytes())
    }
}

/// `x` as read (`S` false) or as the other byte order reads the same bytes
/// (`S` true).
#[inline(always)]
fn n<const S: bool, T: Swap>(x: T) -> T {
    if S { x.swapped() } else { x }
}

fn movement<const S: bool>(m: &Movement) -> u32 {
    let bad = [
        !timestamp(n::<S, _>(m.timestamp)),
        !float(n::<S, _>(m.position.x)),
        !float(n::<S, _>(m.position.y)),
        !float(f64::from(n::<S, _>(m.forward.x))),
        !float(f64::from(n::<S, _>(m.forward.y))),
    ];
    bad.iter().filter(|b| **b).count() as u32
}

/// The numbers of a decoded packet that are implausible; with `S`, those
/// of the same bytes read in the other byte order, where every number is at
/// the same place (the form does not depend on the order: all but a PROP,
/// whose lengths are numbers).
fn implausible<const S: bool>(p: &Packet<'_>) -> u32 {
    let bad64 = |x: f64| u32::from(!float(n::<S, _>(x)));
    let bad32 = |x: f32| u32::from(!float(f64::from(n::<S, _>(x))));
    match p.payload() {
        Payload::AuthOkTimestamp { timestamp: t }
        | Payload::Pong { timestamp: t }
        | Payload::PongSeq { timestamp: t, .. } => u32::from(!timestamp(n::<S, _>(t))),
        Payload::AuthOk { movement: m, .. }
        | Payload::MoveOp(MoveOp { movement: m, .. })
        | Payload::MoveEvent(MoveEvent { movement: m, .. }) => movement::<S>(&m),
        Payload::PropCircle {
            position,
            center,
            radius,
            ..
        } => {
            let p = bad64(position.x) + bad64(position.y);
            p + bad32(center.x) + bad32(center.y) + bad32(radius)
        }
        Payload::PropPolygon {
            position, vertices, ..
        } => {
            let p = bad64(position.x) + bad64(position.y);
            p + vertices
                .iter()
                .filter(|v| bad32(v.x) + bad32(v.y) > 0)
                .count() as u32
        }
        Payload::Msg {
            msg_id,
            msg_len,
            block,
            ..
        } => {
            let msg_len = n::<S, _>(msg_len);
            u32::from(n::<S, _>(msg_id) >= MAX_MSG_NUMBER)
                + u32::from(msg_len >= MAX_MSG_NUMBER)
                + u32::from(block.len() > msg_len as usize)
        }
        Payload::MsgAck(a) => u32::from(n::<S, _>(a.msg_id) >= MAX_MSG_NUMBER),
        Payload::Auth | Payload::Ping | Payload::PingSeq { .. } | Payload::Close => 0,
    }
}

/// What `payload` tells of its byte order; `ping` the session's PING/PONG
/// form where it is known.
///
/// The packet is read once, big-endian. Where that reading holds and its
/// checks read no number (every type but a PROP: they read the type's
/// bytes, the length and single bytes, a PING/PONG form by size and
/// AUTH_OK's name length), the little-endian reading holds too, with the
/// same form, each number at the same place with its bytes reversed: its
/// numbers are judged from the big-endian reading's, swapped, without
/// reading the packet again. Otherwise (a PROP, or bytes that do not
/// decode) it is read in its own right.
pub fn evidence(payload: &[u8], ping: Option<PingForm>) -> Evidence {
    use ByteOrder::{Big, Little};
    let read = |order| Packet::new_checked_in(payload, Dialect { order, ping });
    let counts = match read(Big) {
        Ok(b) if b.packet_type() != PacketType::Prop => {
            (implausible::<false>(&b), implausible::<true>(&b))
        }
        big => match (big, read(Little)) {
            (Ok(_), Err(_)) => return Evidence::Bytes(Big),
            (Err(_), Ok(_)) => return Evidence::Bytes(Little),
            (Ok(b), Ok(l)) => (implausible::<false>(&b), implausible::<false>(&l)),
            (Err(_), Err(_)) => (0, 0),
        },
    };
    match counts.0.cmp(&counts.1) {
        std::cmp::Ordering::Less => return Evidence::Bytes(Big),
        std::cmp::Ordering::Greater => return Evidence::Bytes(Little),
        std::cmp::Ordering::Equal => {}
    }
    match (
        ByteOrder::Big.u32(payload, 0),
        ByteOrder::Little.u32(payload, 0),
    ) {
        (Some(b), Some(l)) if b < l => Evidence::SessionId(ByteOrder::Big),
        (Some(b), Some(l)) if l < b => Evidence::SessionId(ByteOrder::Little),
        _ => Evidence::None,
    }
}

/// The order a packet is read in with nothing else known: what its own bytes
/// tell, big-endian when they tell nothing.
pub fn guess(payload: &[u8]) -> ByteOrder {
    match evidence(payload, None) {
        Evidence::Bytes(o) | Evidence::SessionId(o) => o,
        Evidence::None => ByteOrder::Big,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::battlegrounds::wire::{PacketRepr, sample_move_op};

    #[test]
    fn the_reference_auth_tells_by_its_session_id_only() {
        let auth = [0, 0, 0x12, 0x34, 0, 0, 0, 0];
        assert_eq!(evidence(&auth, None), Evidence::SessionId(ByteOrder::Big));
        let le = [0, 0x10, 0, 0, 0, 0, 0, 0];
        assert_eq!(evidence(&le, None), Evidence::SessionId(ByteOrder::Little));
        assert_eq!(evidence(&[0; 8], None), Evidence::None);
        assert_eq!(guess(&[0; 8]), ByteOrder::Big);
    }

    /// `evidence` as it read both orders in full.
    fn evidence_in_full(payload: &[u8], ping: Option<PingForm>) -> Evidence {
        let read = |order| Packet::new_checked_in(payload, Dialect { order, ping });
        match (read(ByteOrder::Big), read(ByteOrder::Little)) {
            (Ok(_), Err(_)) => return Evidence::Bytes(ByteOrder::Big),
            (Err(_), Ok(_)) => return Evidence::Bytes(ByteOrder::Little),
            (Ok(b), Ok(l)) => match implausible::<false>(&b).cmp(&implausible::<false>(&l)) {
                std::cmp::Ordering::Less => return Evidence::Bytes(ByteOrder::Big),
                std::cmp::Ordering::Greater => return Evidence::Bytes(ByteOrder::Little),
                std::cmp::Ordering::Equal => {}
            },
            (Err(_), Err(_)) => {}
        }
        match (
            ByteOrder::Big.u32(payload, 0),
            ByteOrder::Little.u32(payload, 0),
        ) {
            (Some(b), Some(l)) if b < l => Evidence::SessionId(ByteOrder::Big),
            (Some(b), Some(l)) if l < b => Evidence::SessionId(ByteOrder::Little),
            _ => Evidence::None,
        }
    }

    /// Every form in both orders, whole, cut at every length and with
    /// each byte changed: the evidence from one reading is the evidence
    /// from both, the swapped numbers judged as the other order's reading
    /// judges its own, and only a PROP reads in one order only.
    #[test]
    fn one_check_tells_what_two_did() {
        use crate::proto::battlegrounds::wire::{MsgAck, PayloadRepr};
        let circle = PayloadRepr::PropCircle {
            prop_id: 4,
            position: Default::default(),
            shape_type: crate::proto::battlegrounds::wire::Tag,
            center: Default::default(),
            radius: 1.0,
            render_data: vec![1; 3],
        };
        let forms = [
            PayloadRepr::Auth,
            PayloadRepr::AuthOkTimestamp { timestamp: 77 },
            PayloadRepr::Ping,
            PayloadRepr::PingSeq { seq: 3 },
            PayloadRepr::Pong { timestamp: 9 },
            PayloadRepr::PongSeq {
                seq: 3,
                timestamp: 9,
            },
            sample_move_op(),
            circle,
            PayloadRepr::MsgAck(MsgAck {
                msg_id: 1,
                block_id: 2,
            }),
            PayloadRepr::Close,
        ];
        let mut packets = Vec::new();
        for order in ByteOrder::ALL {
            for f in &forms {
                let p = PacketRepr::new(0x1002, 1, f.clone());
                let b = p.to_bytes_in(order).unwrap();
                for m in PacketRepr::split_message(0x1002, 1, 5, &b, 16) {
                    packets.push(m.to_bytes_in(order).unwrap());
                }
                packets.push(b);
            }
        }
        let mut checked = 0;
        for whole in &packets {
            let mut variants: Vec<Vec<u8>> =
                (0..whole.len()).map(|n| whole[..n].to_vec()).collect();
            for i in 0..whole.len() {
                for x in [0x01, 0x80, 0xff] {
                    let mut v = whole.clone();
                    v[i] ^= x;
                    variants.push(v);
                }
            }
            variants.push(whole.clone());
            for b in &variants {
                for ping in [None, Some(PingForm::Spec), Some(PingForm::Seq)] {
                    assert_eq!(evidence(b, ping), evidence_in_full(b, ping), "{b:02x?}");
                    let d = |order| Dialect { order, ping };
                    let big = Packet::new_checked_in(b, d(ByteOrder::Big));
                    let little = Packet::new_checked_in(b, d(ByteOrder::Little));
                    match (big, little) {
                        (Ok(big), Ok(little)) if big.packet_type() != PacketType::Prop => {
                            let swapped = implausible::<true>(&big);
                            assert_eq!(swapped, implausible::<false>(&little), "{b:02x?}");
                            checked += 1;
                        }
                        (Ok(big), Err(_)) | (Err(_), Ok(big)) => {
                            assert_eq!(big.packet_type(), PacketType::Prop, "{b:02x?}")
                        }
                        _ => {}
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn movement_and_messages_tell_by_their_numbers() {
        let op = sample_move_op();
        for order in ByteOrder::ALL {
            let p = PacketRepr::new(0x01020304, 1, op.clone())
                .to_bytes_in(order)
                .unwrap();
            assert_eq!(evidence(&p, None), Evidence::Bytes(order));
            let m = PacketRepr::split_message(7, 2, 3, &p, 20);
            let b = m[0].to_bytes_in(order).unwrap();
            assert_eq!(evidence(&b, None), Evidence::Bytes(order));
        }
    }
}
