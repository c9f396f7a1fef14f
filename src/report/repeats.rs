//! What an output wrote of a message, remembered by the message's bytes.
//!
//! A game server sends each tick's messages to every client: the same
//! bytes, at the same offset, in a packet to each (only the header's ack
//! differs). Where a protocol's dissector says a message is decided by its
//! type, seqno, offset and own bytes
//! ([`Dissector::messages_stand_alone`](crate::engine::dissect::Dissector::messages_stand_alone)), JSON
//! Lines writes a message's object once and copies it for the next packet
//! that carries the same: on lwar's bench capture half of the messages
//! repeat one sent just before, on Starstrike's five in six (its clients
//! repeat their inputs too), and their text, walked field by field, is
//! most of what JSON Lines writes.
//!
//! Fixed size, allocated once: [`PLACES`] places, each message in the one
//! its hash names (its first and last eight bytes, its length and offset),
//! the last one written there kept. A message is taken from its place only
//! where its bytes, offset, type, seqno and dissector are those kept there,
//! so a place shared only costs the writing again.

use super::fast::home;
use crate::engine::dissect::DissectorId;

/// The places; a tick's messages to every client are a few dozen at most,
/// but with 64 places two of them met in one often enough to cost lwar's
/// JSON Lines some 40 instructions a packet (of 256 places, some 340 KB,
/// 1 024 took 12 more).
const PLACES: usize = 256;
/// The longest message remembered, in bytes on the wire.
const KEY: usize = 256;
/// The longest object remembered, in bytes written (a Starstrike snapshot
/// of two entities writes some 700).
const TEXT: usize = 1024;

#[derive(Clone, Copy)]
struct Place {
    dissector: Option<DissectorId>,
    offset: usize,
    type_name: &'static str,
    seqno: Option<u32>,
    key_len: usize,
    text_len: usize,
    key: [u8; KEY],
    text: [u8; TEXT],
}

/// Messages' objects, remembered by their bytes (see the module's docs).
pub(crate) struct Repeats {
    places: Box<[Place]>,
}

impl Default for Repeats {
    fn default() -> Self {
        let empty = Place {
            dissector: None,
            offset: 0,
            type_name: "",
            seqno: None,
            key_len: 0,
            text_len: 0,
            key: [0; KEY],
            text: [0; TEXT],
        };
        Repeats {
            places: vec![empty; PLACES].into_boxed_slice(),
        }
    }
}

/// The place of a message: its first and last eight bytes (which name its
/// type and, in a game's messages, its entity or player and much of what
/// changes from tick to tick), its length and offset, mixed.
#[inline]
fn place_of(offset: usize, bytes: &[u8]) -> usize {
    let head = match bytes.first_chunk::<8>() {
        Some(b) => u64::from_le_bytes(*b),
        None => bytes.iter().fold(0, |h, &b| h << 8 | u64::from(b)),
    };
    let tail = bytes
        .last_chunk::<8>()
        .map_or(0, |b| u64::from_le_bytes(*b));
    let mixed = head ^ tail.rotate_left(29) ^ ((bytes.len() as u64) << 48) ^ (offset as u64) << 36;
    home(mixed, PLACES)
}

/// What decides a message's object, for a dissector whose messages stand
/// alone: the dissector, the message's type, seqno and offset, and its
/// bytes.
pub(crate) struct Key<'b> {
    pub dissector: DissectorId,
    pub type_name: &'static str,
    pub seqno: Option<u32>,
    pub offset: usize,
    pub bytes: &'b [u8],
}

impl Repeats {
    /// Writes the object of the message `key` names: copied if the same
    /// was written last in its place, else written by `write` (and
    /// remembered, if it fits).
    #[inline]
    pub(crate) fn write(
        &mut self,
        out: &mut Vec<u8>,
        key: Key<'_>,
        write: impl FnOnce(&mut Vec<u8>),
    ) {
        let Some(place) = self.places.get_mut(place_of(key.offset, key.bytes)) else {
            return write(out);
        };
        if place.offset == key.offset
            && place.dissector == Some(key.dissector)
            && std::ptr::eq(place.type_name, key.type_name)
            && place.seqno == key.seqno
            && place.key.get(..place.key_len) == Some(key.bytes)
        {
            out.extend_from_slice(place.text.get(..place.text_len).unwrap_or_default());
            return;
        }
        let start = out.len();
        write(out);
        let text = out.get(start..).unwrap_or_default();
        if let (Some(kept_key), Some(kept)) = (
            place.key.get_mut(..key.bytes.len()),
            place.text.get_mut(..text.len()),
        ) {
            kept_key.copy_from_slice(key.bytes);
            kept.copy_from_slice(text);
            place.key_len = key.bytes.len();
            place.text_len = text.len();
            place.offset = key.offset;
            place.dissector = Some(key.dissector);
            place.type_name = key.type_name;
            place.seqno = key.seqno;
        }
    }
}

/// The places of [`MessageHeads`].
const HEAD_PLACES: usize = 64;
/// The longest head remembered, in bytes written
/// (`{"type":"Input","offset":12,"len":23,"text":"` is 45).
const HEAD: usize = 64;

#[derive(Clone, Copy)]
struct HeadPlace {
    /// The type name's address and length, the offset and length mixed
    /// (0: empty).
    key: u64,
    type_name: &'static str,
    offset: usize,
    len: usize,
    /// Where `,"seqno":N` goes: after `{"type":"…"`.
    split: u8,
    text_len: u8,
    /// The head's text, then room for its tail to be copied at a fixed
    /// size from `split`.
    text: [u8; 2 * HEAD],
}

/// The JSON before a message's text, remembered by what decides it: the
/// type's name, the offset and the length (a seqno, where the message has
/// one, written between the name and the offset each time):
/// `{"type":"Input","offset":12,"len":23,"text":"`. A message type comes at
/// few offsets with few lengths (lwar's Input always at 12 and 23 bytes
/// long), and the head's five pieces cost some 100 instructions written one
/// by one. Fixed size, allocated once; a place is taken only where all that
/// decides its text is the message's.
pub(crate) struct MessageHeads {
    places: Box<[HeadPlace]>,
}

impl Default for MessageHeads {
    fn default() -> Self {
        let empty = HeadPlace {
            key: 0,
            type_name: "",
            offset: 0,
            len: 0,
            split: 0,
            text_len: 0,
            text: [0; 2 * HEAD],
        };
        MessageHeads {
            places: vec![empty; HEAD_PLACES].into_boxed_slice(),
        }
    }
}

impl MessageHeads {
    /// Writes the head of a message of `type_name` at `offset`, `len` bytes
    /// long, with `seqno`: copied where its place holds the same, else
    /// written by `type_part` (`{"type":"…"`), then `,"seqno":N` by
    /// `seqno_part` and `,"offset":…,"len":…,"text":"` by `rest_part`.
    #[inline]
    pub(crate) fn write(
        &mut self,
        out: &mut Vec<u8>,
        head: Head,
        type_part: impl FnOnce(&mut Vec<u8>),
        seqno_part: impl FnOnce(&mut Vec<u8>),
        rest_part: impl FnOnce(&mut Vec<u8>),
    ) {
        let key = (head.type_name.as_ptr() as u64)
            ^ (head.type_name.len() as u64) << 56
            ^ (head.offset as u64) << 16
            ^ (head.len as u64) << 36
            | 1;
        let Some(place) = self.places.get_mut(home(key, HEAD_PLACES)) else {
            type_part(out);
            if head.seqno {
                seqno_part(out);
            }
            return rest_part(out);
        };
        let start = out.len();
        if place.key == key
            && std::ptr::eq(place.type_name, head.type_name)
            && place.offset == head.offset
            && place.len == head.len
        {
            let split = usize::from(place.split);
            let end = usize::from(place.text_len);
            if !head.seqno {
                // The whole head, a copy of fixed size, then cut.
                out.extend_from_slice(place.text.first_chunk::<HEAD>().unwrap_or(&[0; HEAD]));
                out.truncate(start + end);
                return;
            }
            out.extend_from_slice(place.text.first_chunk::<HEAD>().unwrap_or(&[0; HEAD]));
            out.truncate(start + split);
            seqno_part(out);
            let at = out.len();
            let tail = place
                .text
                .get(split..split + HEAD)
                .and_then(|t| t.first_chunk::<HEAD>())
                .unwrap_or(&[0; HEAD]);
            out.extend_from_slice(tail);
            out.truncate(at + (end - split));
            return;
        }
        type_part(out);
        let split = out.len();
        if head.seqno {
            seqno_part(out);
        }
        let seqno_end = out.len();
        rest_part(out);
        let (Some(type_text), Some(rest)) = (out.get(start..split), out.get(seqno_end..)) else {
            return;
        };
        let end = type_text.len() + rest.len();
        if end <= HEAD
            && let Some((a, b)) = place
                .text
                .get_mut(..end)
                .and_then(|t| t.split_at_mut_checked(type_text.len()))
        {
            a.copy_from_slice(type_text);
            b.copy_from_slice(rest);
            place.key = key;
            place.type_name = head.type_name;
            place.offset = head.offset;
            place.len = head.len;
            place.split = type_text.len() as u8;
            place.text_len = end as u8;
        }
    }
}

/// What decides a message's head: its type's name, offset and length, and
/// whether it has a seqno.
pub(crate) struct Head {
    pub type_name: &'static str,
    pub offset: usize,
    pub len: usize,
    pub seqno: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ProtoDetail;
    use crate::proto::dissect::{Dissector, HeaderNumber, MessageItem, TreeRef};

    struct A;
    struct B;
    macro_rules! fake {
        ($t:ident) => {
            impl Dissector for $t {
                fn header(
                    &self,
                    _: &[u8],
                    _: &mut dyn FnMut(HeaderNumber),
                ) -> Result<(), ProtoDetail> {
                    Ok(())
                }
                fn messages(
                    &self,
                    _: &[u8],
                    _: &mut dyn FnMut(&MessageItem<'_>),
                ) -> Result<(), ProtoDetail> {
                    Ok(())
                }
                fn tree_ref(&self, _: &[u8], _: &mut dyn FnMut(TreeRef<'_>)) {}
                fn message_types(&self) -> &'static [&'static str] {
                    &[]
                }
            }
        };
    }
    fake!(A);
    fake!(B);
    static DA: A = A;
    static DB: B = B;

    /// What `write` is given writes each time (the message's dissector,
    /// offset and bytes, and how often it was called), so a copy shows.
    fn written(
        repeats: &mut Repeats,
        d: &'static dyn Dissector,
        offset: usize,
        bytes: &[u8],
    ) -> (Vec<u8>, bool) {
        let mut out = b"x".to_vec();
        let mut called = false;
        let key = Key {
            dissector: d.id(),
            type_name: "T",
            seqno: None,
            offset,
            bytes,
        };
        repeats.write(&mut out, key, |out| {
            called = true;
            let name: &[u8] = if d.id() == DA.id() { b"A" } else { b"B" };
            out.extend_from_slice(name);
            out.extend_from_slice(offset.to_string().as_bytes());
            out.extend_from_slice(bytes);
        });
        (out, called)
    }

    /// Copied only for the same bytes, offset and dissector; whatever
    /// shares a place, is too long to keep or comes again later, each is
    /// what its own writing gives.
    #[test]
    fn a_message_is_copied_only_where_all_it_depends_on_is_the_same() {
        let mut repeats = Repeats::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut seen: Vec<(bool, usize, Vec<u8>)> = Vec::new();
        let (mut copies, mut writes) = (0, 0);
        for i in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (a, offset, bytes) = if i % 2 == 0 && !seen.is_empty() {
                seen[(x % seen.len() as u64) as usize].clone()
            } else {
                let len = (x % 300) as usize;
                // Few different bytes, so that many share their first and
                // last eight.
                let bytes: Vec<u8> = (0..len).map(|j| ((x >> (j % 50)) & 3) as u8).collect();
                (x & 1 << 40 != 0, (x >> 20) as usize % 3 * 12, bytes)
            };
            if seen.len() < 500 {
                seen.push((a, offset, bytes.clone()));
            }
            let d: &'static dyn Dissector = if a { &DA } else { &DB };
            let (out, called) = written(&mut repeats, d, offset, &bytes);
            let mut want = b"x".to_vec();
            want.extend_from_slice(if a { b"A" } else { b"B" });
            want.extend_from_slice(offset.to_string().as_bytes());
            want.extend_from_slice(&bytes);
            assert_eq!(out, want);
            if called {
                writes += 1;
            } else {
                copies += 1;
            }
        }
        assert!(copies > 1_000 && writes > 1_000, "{copies} {writes}");
        // The same bytes at another offset or of another dissector: written.
        let _ = written(&mut repeats, &DA, 12, b"same bytes");
        assert!(!written(&mut repeats, &DA, 12, b"same bytes").1);
        assert!(written(&mut repeats, &DA, 24, b"same bytes").1);
        assert!(written(&mut repeats, &DB, 12, b"same bytes").1);
        // Of another type or seqno: written.
        let mut out = Vec::new();
        for (type_name, seqno, fresh) in [
            ("T", None, false),
            ("U", None, true),
            ("U", Some(1), true),
            ("U", Some(1), false),
            ("U", Some(2), true),
        ] {
            let key = Key {
                dissector: DB.id(),
                type_name,
                seqno,
                offset: 12,
                bytes: b"same bytes",
            };
            let mut called = false;
            repeats.write(&mut out, key, |out| {
                called = true;
                out.push(b'x');
            });
            assert_eq!(called, fresh, "{type_name} {seqno:?}");
        }
    }

    /// The head written from its place is the head written afresh, for
    /// every type, offset, length and seqno, whatever shares a place or is
    /// too long to keep.
    #[test]
    fn a_head_is_copied_only_where_all_it_depends_on_is_the_same() {
        static NAMES: [&str; 5] = [
            "Input",
            "Join",
            "T",
            "UpdateCircle",
            "A_name_long_enough_not_to_fit_at_all",
        ];
        let fresh =
            |out: &mut Vec<u8>, name: &str, seqno: Option<u32>, offset: usize, len: usize| {
                out.extend_from_slice(format!("{{\"type\":\"{name}\"").as_bytes());
                if let Some(n) = seqno {
                    out.extend_from_slice(format!(",\"seqno\":{n}").as_bytes());
                }
                out.extend_from_slice(
                    format!(",\"offset\":{offset},\"len\":{len},\"text\":\"").as_bytes(),
                );
            };
        let mut heads = MessageHeads::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut copies = 0;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let name = NAMES[(x % 5) as usize];
            let seqno = (x & 1 << 10 != 0).then_some((x >> 11) as u32 % 100_000);
            let offset = (x >> 30) as usize % 3 * 12;
            let len = (x >> 40) as usize % 4 + if x >> 50 & 7 == 0 { 100_000 } else { 0 };
            let mut out = b"x".to_vec();
            let mut written = false;
            let head = Head {
                type_name: name,
                offset,
                len,
                seqno: seqno.is_some(),
            };
            heads.write(
                &mut out,
                head,
                |out| {
                    written = true;
                    out.extend_from_slice(format!("{{\"type\":\"{name}\"").as_bytes());
                },
                |out| out.extend_from_slice(format!(",\"seqno\":{}", seqno.unwrap()).as_bytes()),
                |out| {
                    out.extend_from_slice(
                        format!(",\"offset\":{offset},\"len\":{len},\"text\":\"").as_bytes(),
                    )
                },
            );
            let mut want = b"x".to_vec();
            fresh(&mut want, name, seqno, offset, len);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(want).unwrap()
            );
            copies += usize::from(!written);
        }
        assert!(copies > 2_000, "{copies}");
    }
}
