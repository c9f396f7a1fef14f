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

use crate::engine::dissect::DissectorId;

/// The places; a tick's messages to every client are a few dozen at most.
const PLACES: usize = 64;
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
    (mixed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (u64::BITS - PLACES.ilog2())) as usize
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
}
