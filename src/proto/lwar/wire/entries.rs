//! Fixed-size records: the entries of counted messages, Input, Collision, and
//! the zero-copy sequences that hold the entries of one message.

use super::types::Id;
use std::fmt;
use std::marker::PhantomData;

/// Reads a big-endian u16 at `at`. Callers have checked the length once, beforehand.
#[inline]
pub(crate) fn be_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
pub(crate) fn id_at(b: &[u8], at: usize) -> Id {
    Id::from_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// A fixed-size record of the wire format.
pub trait Record: Copy + 'static {
    /// Its size on the wire.
    const LEN: usize;
    /// Reads the record from exactly [`Record::LEN`] bytes.
    fn read(b: &[u8]) -> Self;
    /// Appends its wire bytes.
    fn write(&self, out: &mut Vec<u8>);
}

/// One player's line of a Stats message (10 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StatsEntry {
    pub player: Id,
    pub kills: u16,
    pub deaths: u16,
    pub ping: u16,
}

/// One entity of an Update message (11 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UpdateEntry {
    pub entity: Id,
    pub x: i16,
    pub y: i16,
    pub orientation: u16,
    pub health: u8,
}

/// One entity of an UpdatePos message (8 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UpdatePosEntry {
    pub entity: Id,
    pub x: i16,
    pub y: i16,
}

/// One entity of an UpdateRay message (12 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UpdateRayEntry {
    pub entity: Id,
    pub x: i16,
    pub y: i16,
    pub orientation: u16,
    pub length: u16,
}

/// One entity of an UpdateCircle message (10 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UpdateCircleEntry {
    pub entity: Id,
    pub x: i16,
    pub y: i16,
    pub radius: u16,
}

/// The body of an Input message (22 bytes). Each key state holds the current state
/// in bit 0 and the seven previous ones in bits 1 to 7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Input {
    pub player: Id,
    pub frame: u32,
    pub forward: u8,
    pub backward: u8,
    pub turn_left: u8,
    pub turn_right: u8,
    pub strafe_left: u8,
    pub strafe_right: u8,
    pub shooting: [u8; 4],
    pub aim_x: i16,
    pub aim_y: i16,
}

/// The body of a Collision message (12 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Collision {
    pub entities: [Id; 2],
    pub x: i16,
    pub y: i16,
}

impl Record for StatsEntry {
    const LEN: usize = 10;
    fn read(b: &[u8]) -> Self {
        StatsEntry {
            player: id_at(b, 0),
            kills: be_u16(b, 4),
            deaths: be_u16(b, 6),
            ping: be_u16(b, 8),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.player.to_bytes());
        out.extend_from_slice(&self.kills.to_be_bytes());
        out.extend_from_slice(&self.deaths.to_be_bytes());
        out.extend_from_slice(&self.ping.to_be_bytes());
    }
}

impl Record for UpdateEntry {
    const LEN: usize = 11;
    fn read(b: &[u8]) -> Self {
        UpdateEntry {
            entity: id_at(b, 0),
            x: be_i16(b, 4),
            y: be_i16(b, 6),
            orientation: be_u16(b, 8),
            health: b[10],
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.entity.to_bytes());
        out.extend_from_slice(&self.x.to_be_bytes());
        out.extend_from_slice(&self.y.to_be_bytes());
        out.extend_from_slice(&self.orientation.to_be_bytes());
        out.push(self.health);
    }
}

impl Record for UpdatePosEntry {
    const LEN: usize = 8;
    fn read(b: &[u8]) -> Self {
        UpdatePosEntry {
            entity: id_at(b, 0),
            x: be_i16(b, 4),
            y: be_i16(b, 6),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.entity.to_bytes());
        out.extend_from_slice(&self.x.to_be_bytes());
        out.extend_from_slice(&self.y.to_be_bytes());
    }
}

impl Record for UpdateRayEntry {
    const LEN: usize = 12;
    fn read(b: &[u8]) -> Self {
        UpdateRayEntry {
            entity: id_at(b, 0),
            x: be_i16(b, 4),
            y: be_i16(b, 6),
            orientation: be_u16(b, 8),
            length: be_u16(b, 10),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.entity.to_bytes());
        out.extend_from_slice(&self.x.to_be_bytes());
        out.extend_from_slice(&self.y.to_be_bytes());
        out.extend_from_slice(&self.orientation.to_be_bytes());
        out.extend_from_slice(&self.length.to_be_bytes());
    }
}

impl Record for UpdateCircleEntry {
    const LEN: usize = 10;
    fn read(b: &[u8]) -> Self {
        UpdateCircleEntry {
            entity: id_at(b, 0),
            x: be_i16(b, 4),
            y: be_i16(b, 6),
            radius: be_u16(b, 8),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.entity.to_bytes());
        out.extend_from_slice(&self.x.to_be_bytes());
        out.extend_from_slice(&self.y.to_be_bytes());
        out.extend_from_slice(&self.radius.to_be_bytes());
    }
}

impl Record for Input {
    const LEN: usize = 22;
    fn read(b: &[u8]) -> Self {
        // One length check for the 22 bytes, not one per byte: every Input
        // of every client packet is read so.
        let Some(b) = b.first_chunk::<22>() else {
            return Input::default();
        };
        Input {
            player: id_at(b, 0),
            frame: be_u32(b, 4),
            forward: b[8],
            backward: b[9],
            turn_left: b[10],
            turn_right: b[11],
            strafe_left: b[12],
            strafe_right: b[13],
            shooting: [b[14], b[15], b[16], b[17]],
            aim_x: be_i16(b, 18),
            aim_y: be_i16(b, 20),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.player.to_bytes());
        out.extend_from_slice(&self.frame.to_be_bytes());
        out.extend_from_slice(&[
            self.forward,
            self.backward,
            self.turn_left,
            self.turn_right,
            self.strafe_left,
            self.strafe_right,
        ]);
        out.extend_from_slice(&self.shooting);
        out.extend_from_slice(&self.aim_x.to_be_bytes());
        out.extend_from_slice(&self.aim_y.to_be_bytes());
    }
}

impl Record for Collision {
    const LEN: usize = 12;
    fn read(b: &[u8]) -> Self {
        Collision {
            entities: [id_at(b, 0), id_at(b, 4)],
            x: be_i16(b, 8),
            y: be_i16(b, 10),
        }
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.entities[0].to_bytes());
        out.extend_from_slice(&self.entities[1].to_bytes());
        out.extend_from_slice(&self.x.to_be_bytes());
        out.extend_from_slice(&self.y.to_be_bytes());
    }
}

/// The entries of a counted message, read in place: nothing is copied until an
/// entry is asked for, and then only that entry.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Entries<'a, E> {
    bytes: &'a [u8],
    _entry: PhantomData<E>,
}

impl<'a, E: Record> Entries<'a, E> {
    /// `bytes` must hold a whole number of entries; the decoder guarantees it.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        debug_assert_eq!(bytes.len() % E::LEN, 0);
        Entries {
            bytes,
            _entry: PhantomData,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.bytes.len() / E::LEN
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The `i`-th entry, if there is one.
    pub fn get(&self, i: usize) -> Option<E> {
        let start = i.checked_mul(E::LEN)?;
        self.bytes.get(start..start + E::LEN).map(E::read)
    }

    /// The entries in wire order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = E> + 'a {
        self.bytes.chunks_exact(E::LEN).map(E::read)
    }

    /// The raw bytes of all entries.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<E: Record + fmt::Debug> fmt::Debug for Entries<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<E: Record + PartialEq + fmt::Debug>(bytes: &[u8], expected: E) {
        assert_eq!(bytes.len(), E::LEN);
        assert_eq!(E::read(bytes), expected);
        let mut out = Vec::new();
        expected.write(&mut out);
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
        let e: Entries<'_, UpdatePosEntry> = Entries::new(&bytes);
        assert_eq!(e.len(), 2);
        assert_eq!(e.get(1).map(|u| u.entity), Some(Id::new(0, 2)));
        assert_eq!(e.get(2), None);
        assert_eq!(e.get(usize::MAX), None);
        assert_eq!(e.iter().map(|u| u.x).collect::<Vec<_>>(), vec![1, 3]);
    }
}
