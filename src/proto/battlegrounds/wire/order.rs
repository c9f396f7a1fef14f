//! What a packet's own bytes tell of its byte order (the revised notes: MSG
//! lengths against the packet size, plausible timestamps and vertex counts):
//! the evidence a session decides its order from.

use super::layout::{MoveEvent, MoveOp, Movement};
use super::packet::{Packet, Payload};
use super::types::{ByteOrder, Dialect, PingForm};

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

fn movement(m: &Movement) -> u32 {
    let bad = [
        !timestamp(m.timestamp),
        !float(m.position.x),
        !float(m.position.y),
        !float(f64::from(m.forward.x)),
        !float(f64::from(m.forward.y)),
    ];
    bad.iter().filter(|b| **b).count() as u32
}

/// The numbers of a decoded packet that are implausible.
fn implausible(p: &Packet<'_>) -> u32 {
    match p.payload() {
        Payload::AuthOkTimestamp { timestamp: t }
        | Payload::Pong { timestamp: t }
        | Payload::PongSeq { timestamp: t, .. } => u32::from(!timestamp(t)),
        Payload::AuthOk { movement: m, .. }
        | Payload::MoveOp(MoveOp { movement: m, .. })
        | Payload::MoveEvent(MoveEvent { movement: m, .. }) => movement(&m),
        Payload::PropCircle {
            position,
            center,
            radius,
            ..
        } => {
            let n = u32::from(!float(position.x)) + u32::from(!float(position.y));
            n + u32::from(!float(f64::from(center.x)))
                + u32::from(!float(f64::from(center.y)))
                + u32::from(!float(f64::from(radius)))
        }
        Payload::PropPolygon {
            position, vertices, ..
        } => {
            let n = u32::from(!float(position.x)) + u32::from(!float(position.y));
            n + vertices
                .iter()
                .filter(|v| !float(f64::from(v.x)) || !float(f64::from(v.y)))
                .count() as u32
        }
        Payload::Msg {
            msg_id,
            msg_len,
            block,
            ..
        } => {
            u32::from(msg_id >= MAX_MSG_NUMBER)
                + u32::from(msg_len >= MAX_MSG_NUMBER)
                + u32::from(block.len() > msg_len as usize)
        }
        Payload::MsgAck(a) => u32::from(a.msg_id >= MAX_MSG_NUMBER),
        Payload::Auth | Payload::Ping | Payload::PingSeq { .. } | Payload::Close => 0,
    }
}

/// What `payload` tells of its byte order; `ping` the session's PING/PONG
/// form where it is known.
pub fn evidence(payload: &[u8], ping: Option<PingForm>) -> Evidence {
    let read = |order| Packet::new_checked_in(payload, Dialect { order, ping });
    match (read(ByteOrder::Big), read(ByteOrder::Little)) {
        (Ok(_), Err(_)) => return Evidence::Bytes(ByteOrder::Big),
        (Err(_), Ok(_)) => return Evidence::Bytes(ByteOrder::Little),
        (Ok(b), Ok(l)) => match implausible(&b).cmp(&implausible(&l)) {
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
