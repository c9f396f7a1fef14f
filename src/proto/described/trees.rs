//! A described packet's `-V` tree, copied where its packet repeats one
//! but for its sequence number and acks, as its one-line text is
//! ([`bodies`](super::bodies)).
//!
//! A packet's tree (its lines, their texts and how the walk ended) is
//! remembered by its bytes but for the head's numbers that decide nothing
//! else ([`Head`]), with the line each of those numbers took: the next
//! packet with the same bytes hands the kept lines out again, each such
//! number's value written fresh in its line by the tree's own function
//! (`layout::tree_value`) from the value the walk would tell
//! ([`Compiled::fixed_root_value`](super::decode::Compiled::fixed_root_value)).
//! Why that is the walk's tree, byte for byte, is `bodies`' argument: a
//! number left out decides nothing but its own value; its line's label,
//! span and depth do not depend on it, and every other line depends only
//! on bytes that are compared. How the walk ended (an error and its
//! offset, told after the lines) is kept with them.
//!
//! Fixed size, allocated once per thread: the places are `bodies`' (a
//! packet in the one its bytes after the head name, the last one written
//! there kept), each place's room for lines and their texts taken the
//! first time it keeps a tree ([`KeptTree`]); a tree of more than
//! [`LINES`] lines or [`BYTES`] bytes of text is walked each time, as is
//! every packet of a description without such a head.

use super::Described;
use super::bodies::{Head, KEY, MASKED, PLACES};
use super::decode::{DecodeErr, Events, Side};
use crate::proto::dissect::TreeRef;
use crate::proto::field::{Field, GroupDefs};
use crate::proto::layout::{FieldTree, KeptTree, tree_value};
use std::cell::RefCell;

/// The most lines a kept tree has (a Starstrike snapshot of four entities
/// has some 80).
const LINES: usize = 256;
/// The most bytes of text (labels of elements, values) a kept tree has.
const BYTES: usize = 2048;
/// Room for the values written fresh (an integer or a float each).
const FRESH: usize = 32 * MASKED;

/// A packet's tree, and the packet it was walked from.
struct Place {
    /// The description's address (0: empty).
    d: usize,
    len: usize,
    key: [u8; KEY],
    tree: KeptTree,
    /// How the walk ended.
    result: Result<usize, DecodeErr>,
    /// The line of each number left out, in wire order.
    lines: [usize; MASKED],
}

/// A thread's places, and the room the fresh values are written in.
struct Trees {
    places: Vec<Place>,
    fresh: String,
}

thread_local! {
    static TREES: RefCell<Trees> = RefCell::new(Trees {
        places: (0..PLACES)
            .map(|_| Place {
                d: 0,
                len: 0,
                key: [0; KEY],
                tree: KeptTree::default(),
                result: Ok(0),
                lines: [0; MASKED],
            })
            .collect(),
        fresh: String::with_capacity(FRESH),
    });
}

/// Hands the tree of `p` (a layout's packet, `head` its head) to `f`:
/// copied where its place holds the same packet but for the numbers left
/// out, else walked and kept there. Returns how the walk ended.
pub(super) fn tree(
    d: &'static Described,
    head: &Head,
    p: &[u8],
    side: Side,
    f: &mut dyn FnMut(TreeRef<'_>),
) -> Result<usize, DecodeErr> {
    let Some(at) = head.place(p) else {
        return walk(d, p, side, f);
    };
    let id = std::ptr::from_ref(d) as usize;
    TREES
        .try_with(|trees| {
            let Ok(mut trees) = trees.try_borrow_mut() else {
                return walk(d, p, side, f);
            };
            let Trees { places, fresh } = &mut *trees;
            let Some(place) = places.get_mut(at) else {
                return walk(d, p, side, f);
            };
            if head.holds((place.d, place.len, &place.key), id, p)
                && copy(d, head, p, place, fresh, f)
            {
                return place.result;
            }
            keep(d, head, p, side, place, f)
        })
        .unwrap_or_else(|_| walk(d, p, side, f))
}

/// The tree by the walk alone.
pub(super) fn walk(
    d: &'static Described,
    p: &[u8],
    side: Side,
    f: &mut dyn FnMut(TreeRef<'_>),
) -> Result<usize, DecodeErr> {
    FieldTree::with(|tree| {
        let r = d.compiled.walk_with(p, side, &mut *tree);
        tree.emit(f);
        r
    })
}

/// Hands out the tree kept in `place`, each number left out written fresh
/// from `p`; false (nothing handed out) where one is not in its place.
fn copy(
    d: &'static Described,
    head: &Head,
    p: &[u8],
    place: &Place,
    fresh: &mut String,
    f: &mut dyn FnMut(TreeRef<'_>),
) -> bool {
    let n = head.masked().len();
    fresh.clear();
    let mut ends = [0; MASKED];
    for (&(i, _), end) in head.masked().iter().zip(&mut ends) {
        let Some(value) = d.compiled.fixed_root_value(p, i) else {
            return false;
        };
        if tree_value(fresh, &value).is_err() {
            return false;
        }
        *end = fresh.len();
    }
    let mut values = [(0, ""); MASKED];
    let mut from = 0;
    for ((v, &line), &end) in values.iter_mut().zip(&place.lines).zip(&ends) {
        *v = (line, fresh.get(from..end).unwrap_or_default());
        from = end;
    }
    place
        .tree
        .emit_fresh(values.get(..n).unwrap_or_default(), f);
    true
}

/// Walks `p` into the tree and hands it to `f`, keeping it in `place`
/// where every number left out took a line and the tree fits (else the
/// place is left empty).
fn keep(
    d: &'static Described,
    head: &Head,
    p: &[u8],
    side: Side,
    place: &mut Place,
    f: &mut dyn FnMut(TreeRef<'_>),
) -> Result<usize, DecodeErr> {
    place.d = 0;
    FieldTree::with(|tree| {
        let mut marks = Marks {
            tree,
            masked: head.masked(),
            lines: [0; MASKED],
            told: 0,
        };
        let r = d.compiled.walk_with(p, side, &mut marks);
        let (lines, told) = (marks.lines, marks.told);
        tree.emit(f);
        let told_all = told == head.masked().len();
        if told_all
            && place.tree.keep(tree, LINES, BYTES)
            && let Some(key) = place.key.get_mut(..p.len())
        {
            key.copy_from_slice(p);
            place.d = std::ptr::from_ref(d) as usize;
            place.len = p.len();
            place.result = r;
            place.lines = lines;
        }
        r
    })
}

/// The walk's events into the tree, marking the line of each number left
/// out.
struct Marks<'t, 'h> {
    tree: &'t mut FieldTree,
    masked: &'h [(usize, u16)],
    lines: [usize; MASKED],
    told: usize,
}

impl Events for Marks<'_, '_> {
    fn field(&mut self, field: Field<'_>) {
        Events::field(self.tree, field);
    }
    fn field_at(&mut self, at: u16, field: Field<'_>) {
        if self.masked.get(self.told).is_some_and(|&(_, f)| f == at)
            && let Some(line) = self.lines.get_mut(self.told)
        {
            *line = self.tree.line_count();
            self.told += 1;
        }
        Events::field_at(self.tree, at, field);
    }
    fn enter(&mut self, node: Field<'_>) {
        Events::enter(self.tree, node);
    }
    fn leave(&mut self) {
        Events::leave(self.tree);
    }
    fn wants_any(&mut self, key: usize, defs: &GroupDefs<'_>) -> bool {
        Events::wants_any(self.tree, key, defs)
    }
    fn int(&mut self, field: u16, value: i64) {
        Events::int(self.tree, field, value);
    }
    fn done(&self) -> bool {
        Events::done(self.tree)
    }
    fn judges(&self) -> bool {
        Events::judges(self.tree)
    }
    fn violation(&mut self, field: u16, offset: usize, value: f64, bound: Option<i64>) {
        Events::violation(self.tree, field, offset, value, bound);
    }
    fn cut(&mut self, end: usize) {
        Events::cut(self.tree, end);
    }
}

#[cfg(test)]
mod tests {
    use super::{TREES, tree, walk};
    use crate::proto::described::decode::Side;
    use crate::proto::described::{
        Described, starstrike_ksy as starstrike, strs_chat as chat, strs_snapshot as snapshot,
        tree_line, variants,
    };
    use crate::proto::dissect::TreeRef;

    /// The tree of `p`, a line each (`depth label: value span`), and how
    /// its walk ended; by `tree` or by the walk alone.
    fn lines(d: &'static Described, p: &[u8], copied: bool) -> Vec<String> {
        let mut out = Vec::new();
        let mut f = |t: TreeRef<'_>| {
            out.push(tree_line(t));
        };
        let head = d.text_head.as_ref().unwrap();
        let r = if copied {
            tree(d, head, p, Side::Any, &mut f)
        } else {
            walk(d, p, Side::Any, &mut f)
        };
        out.push(format!("{r:?}"));
        out
    }

    /// Whether the place of `p` holds its tree (a packet of the same bytes
    /// but for the numbers left out).
    fn kept(d: &'static Described, p: &[u8]) -> bool {
        let head = d.text_head.as_ref().unwrap();
        let Some(at) = head.place(p) else {
            return false;
        };
        TREES.with(|trees| {
            let place = &trees.borrow().places[at];
            head.holds(
                (place.d, place.len, &place.key),
                std::ptr::from_ref(d) as usize,
                p,
            )
        })
    }

    /// A packet's tree is the walk's, line for line, and ends as the walk
    /// does: for every truncation and one-byte change of a snapshot and a
    /// chat message (handed out after one another, so that many are copies
    /// of one kept), each also with other sequence numbers and acks
    /// (copies of it, all of them).
    #[test]
    fn a_copied_tree_is_the_walks() {
        let d = starstrike();
        let mut copies = 0;
        for whole in [snapshot(3), chat(), snapshot(0)] {
            for p in variants(&whole) {
                assert_eq!(lines(d, &p, true), lines(d, &p, false), "{p:02x?}");
                for (at, x) in [(7, 0x12), (6, 0xff), (11, 0x80), (8, 0x01)] {
                    let mut q = p.clone();
                    if let Some(b) = q.get_mut(at) {
                        *b ^= x;
                    }
                    copies += usize::from(kept(d, &q));
                    assert_eq!(lines(d, &q, true), lines(d, &q, false), "{q:02x?}");
                }
            }
        }
        assert!(copies > 1000, "{copies}");
    }

    /// A copy has the fresh sequence number and acks in their lines, the
    /// rest as kept; a packet that differs in anything else is walked.
    #[test]
    fn a_copy_has_its_own_sequence_number_and_acks() {
        let d = starstrike();
        let p = snapshot(2);
        let first = lines(d, &p, true);
        let mut q = p.clone();
        q[6..12].copy_from_slice(&[0x12, 0x34, 0xff, 0xff, 0xff, 0xff]);
        assert!(kept(d, &q));
        let copied = lines(d, &q, true);
        let changed: Vec<(&String, &String)> =
            first.iter().zip(&copied).filter(|(a, b)| a != b).collect();
        assert_eq!(
            changed,
            [
                (
                    &"1 sequence_number: 7 6..8".to_string(),
                    &"1 sequence_number: 4660 6..8".to_string()
                ),
                (
                    &"1 ack_bits: 3 8..12".to_string(),
                    &"1 ack_bits: 4294967295 8..12".to_string()
                ),
            ],
            "{copied:#?}"
        );
        for at in [0, 3, 4, 5, 12, 20, p.len() - 1] {
            let mut r = q.clone();
            r[at] ^= 1;
            assert!(!kept(d, &r), "{at}");
        }
    }

    /// A snapshot of ten entities (487 bytes) is kept; a packet longer
    /// than a place holds is walked each time. Both are the walk's.
    #[test]
    fn a_packet_too_long_to_keep_is_walked() {
        let d = starstrike();
        for (n, keeps) in [(10, true), (30, false)] {
            let p = snapshot(n);
            assert_eq!(lines(d, &p, true), lines(d, &p, false));
            assert_eq!(kept(d, &p), keeps, "{n}");
            assert!(lines(d, &p, false).len() < super::LINES || !keeps);
        }
    }
}
