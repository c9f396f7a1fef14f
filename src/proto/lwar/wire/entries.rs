//! Fixed-size records: the entries of counted messages, Input, Collision
//! (each declared with its row in `layout.rs`, `record!`: its reader and
//! writer take their offsets and sizes from the row), an id's bytes, and
//! the zero-copy sequences that hold the entries of one message.

pub use super::layout::{
    Collision, Input, StatsEntry, UpdateCircleEntry, UpdateEntry, UpdatePosEntry, UpdateRayEntry,
};
use super::types::Id;
pub use crate::proto::codec::Record;
use crate::proto::codec::{Scalar, Shape, Wire};
use crate::proto::layout::ByteOrder;

/// Reads a big-endian u32 at `at`. Callers have checked the length once, beforehand.
#[inline]
pub(crate) fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Every lwar number is big-endian.
pub(crate) const ORDER: ByteOrder = ByteOrder::Big;

/// A generational id: one item of 4 bytes, a u16 generation then a u16
/// index.
impl Wire for Id {
    const SHAPE: &'static [Shape] = &[Shape::Uint(4)];
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn get(b: &[u8], at: usize, order: ByteOrder) -> Self {
        Id::new(u16::get(b, at, order), u16::get(b, at + 2, order))
    }
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn put(&self, b: &mut [u8], at: usize, order: ByteOrder) {
        self.generation.put(b, at, order);
        self.index.put(b, at + 2, order);
    }
}

impl Scalar for Id {
    const ONE: Shape = Shape::Uint(4);
    const SIZE: usize = 4;
}

/// The entries of a counted message, read in place: nothing is copied
/// until an entry is asked for, and then only that entry (the codec's,
/// shared with Starstrike's entities).
pub use crate::proto::codec::Entries;

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<E: Record + PartialEq + std::fmt::Debug>(bytes: &[u8], expected: E) {
        assert_eq!(bytes.len(), E::LEN);
        assert_eq!(E::read(bytes, ORDER), expected);
        let mut out = Vec::new();
        expected.append(&mut out, ORDER);
        assert_eq!(out, bytes);
    }

    #[test]
    fn update_entry_is_big_endian_and_signed() {
        round_trip(
            &[
                0x00, 0x01, 0x00, 0x02, 0xfe, 0x18, 0x01, 0xf4, 0x01, 0x68, 0x64,
            ],
            UpdateEntry {
                entity: Id::new(1, 2),
                x: -488,
                y: 500,
                orientation: 360,
                health: 100,
            },
        );
    }

    #[test]
    fn input_has_22_bytes_and_no_orientation() {
        round_trip(
            &[
                0, 0, 0, 1, 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0xff, 0xfe, 0x00, 0x10,
            ],
            Input {
                player: Id::new(0, 1),
                frame: 9,
                forward: 1,
                backward: 2,
                turn_left: 3,
                turn_right: 4,
                strafe_left: 5,
                strafe_right: 6,
                shooting: [7, 8, 9, 10],
                aim_x: -2,
                aim_y: 16,
            },
        );
    }

    #[test]
    fn entries_index_without_copying_and_refuse_out_of_range() {
        let bytes = [0u8, 0, 0, 1, 0, 1, 0, 2, 0, 0, 0, 2, 0, 3, 0, 4];
        let e: Entries<'_, UpdatePosEntry> = Entries::new(&bytes, ORDER);
        assert_eq!(e.len(), 2);
        assert_eq!(e.get(1).map(|u| u.entity), Some(Id::new(0, 2)));
        assert_eq!(e.get(2), None);
        assert_eq!(e.get(usize::MAX), None);
        assert_eq!(e.iter().map(|u| u.x).collect::<Vec<_>>(), vec![1, 3]);
    }
}
