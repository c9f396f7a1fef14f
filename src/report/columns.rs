//! A JSON Lines packet object's columns that its session and direction
//! decide, remembered: `,"src":"…","dst":"…","session":7,"dir":"c2s"`.
//!
//! A session's packets in one direction share their addresses, session
//! and direction, and the object writes them for every packet: two
//! addresses (each a remembered text, [`AddrTexts`]), a number and a name,
//! some 150 instructions. Here they are written once per session and
//! direction and copied, one piece of fixed size, then cut.
//!
//! Fixed size, allocated once: [`PLACES`] places, each session and
//! direction in the one its hash names, the last one written there kept.
//! A text is taken from its place only where its session, direction and
//! both addresses are those kept there (the text is theirs alone), so a
//! place shared only costs the writing again.

use super::fast::{AddrTexts, home, int};
use crate::engine::{Direction, SessionId};
use std::net::SocketAddr;

/// The places; a capture's sessions at one time are a few hundred at most.
const PLACES: usize = 256;
/// The longest text remembered (two IPv4 addresses with their keys take
/// some 80 bytes; IPv6 ones that do not fit are written each time).
const TEXT: usize = 128;

#[derive(Clone, Copy)]
struct Place {
    /// The session, its direction in the lowest bit (`usize::MAX`: empty).
    key: usize,
    src: SocketAddr,
    dst: SocketAddr,
    len: u8,
    text: [u8; TEXT],
}

/// The session columns' texts (see the module's docs).
pub(crate) struct SessionColumns {
    places: Box<[Place]>,
}

impl Default for SessionColumns {
    fn default() -> Self {
        let nowhere = SocketAddr::from(([0, 0, 0, 0], 0));
        let empty = Place {
            key: usize::MAX,
            src: nowhere,
            dst: nowhere,
            len: 0,
            text: [0; TEXT],
        };
        SessionColumns {
            places: vec![empty; PLACES].into_boxed_slice(),
        }
    }
}

/// The columns as they are written without a place to keep them.
fn write(
    out: &mut Vec<u8>,
    addrs: &mut AddrTexts,
    session: SessionId,
    direction: Direction,
    src: &SocketAddr,
    dst: &SocketAddr,
) {
    out.extend_from_slice(b",\"src\":\"");
    addrs.addr(out, src);
    out.extend_from_slice(b"\",\"dst\":\"");
    addrs.addr(out, dst);
    out.extend_from_slice(b"\",\"session\":");
    int(out, session);
    out.extend_from_slice(match direction {
        Direction::ClientToServer => b",\"dir\":\"c2s\"",
        Direction::ServerToClient => b",\"dir\":\"s2c\"",
    });
}

impl SessionColumns {
    /// Writes `,"src":"…","dst":"…","session":N,"dir":"…"`: copied if the
    /// same session, direction and addresses were written last in their
    /// place, else written (and remembered, if it fits).
    #[inline]
    pub(crate) fn write(
        &mut self,
        out: &mut Vec<u8>,
        addrs: &mut AddrTexts,
        session: SessionId,
        direction: Direction,
        src: &SocketAddr,
        dst: &SocketAddr,
    ) {
        let key = session.wrapping_shl(1) | usize::from(direction == Direction::ServerToClient);
        let Some(place) = self.places.get_mut(home(key as u64, PLACES)) else {
            return write(out, addrs, session, direction, src, dst);
        };
        let start = out.len();
        if place.key == key && place.src == *src && place.dst == *dst {
            // The whole padded text, a copy of fixed size, then cut.
            out.extend_from_slice(&place.text);
            out.truncate(start + usize::from(place.len));
            return;
        }
        write(out, addrs, session, direction, src, dst);
        if let Some(text) = out.get(start..)
            && let Some(kept) = place.text.get_mut(..text.len())
        {
            kept.copy_from_slice(text);
            place.len = text.len() as u8;
            place.key = key;
            place.src = *src;
            place.dst = *dst;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever sessions, directions and addresses come, in whatever order
    /// (many sharing places, some too long to keep), each text is what
    /// writing it afresh gives.
    #[test]
    fn remembered_columns_are_written_as_afresh() {
        let mut columns = SessionColumns::default();
        let mut addrs = AddrTexts::default();
        let mut fresh_addrs = AddrTexts::default();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let v6 = SocketAddr::V6(std::net::SocketAddrV6::new(
            "2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff".parse().unwrap(),
            65_535,
            0,
            4_000_000_000,
        ));
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let session = (x % 700) as usize;
            let direction = if x & 1 << 20 != 0 {
                Direction::ClientToServer
            } else {
                Direction::ServerToClient
            };
            // Mostly the session's own addresses, sometimes others.
            let port = if x & 0xf << 30 == 0 { 9 } else { 50_000 };
            let src = match x >> 50 & 63 {
                0 => v6,
                _ => SocketAddr::from(([10, 0, (session >> 8) as u8, session as u8], port)),
            };
            let dst = match x >> 40 & 31 {
                0 => v6,
                _ => SocketAddr::from(([127, 0, 0, 1], 32_422)),
            };
            let mut out = b"x".to_vec();
            columns.write(&mut out, &mut addrs, session, direction, &src, &dst);
            let mut want = b"x".to_vec();
            write(&mut want, &mut fresh_addrs, session, direction, &src, &dst);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
    }

    #[test]
    fn columns_are_as_serde_names_them() {
        let mut out = Vec::new();
        let src = SocketAddr::from(([127, 0, 0, 9], 50_008));
        let dst = SocketAddr::from(([127, 0, 0, 1], 32_422));
        let mut columns = SessionColumns::default();
        let mut addrs = AddrTexts::default();
        for _ in 0..2 {
            out.clear();
            columns.write(
                &mut out,
                &mut addrs,
                7,
                Direction::ClientToServer,
                &src,
                &dst,
            );
            assert_eq!(
                out,
                b",\"src\":\"127.0.0.9:50008\",\"dst\":\"127.0.0.1:32422\",\"session\":7,\"dir\":\"c2s\""
            );
        }
    }
}
