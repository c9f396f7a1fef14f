//! Battlegrounds' dissector: how outputs see a packet. One packet is one
//! message item; a MSG whose block is its whole message (block 0, as long as
//! `msg_len`) also shows the packet it carries, decoded, as a second item and
//! a subtree.
//!
//! **Messages of several blocks are not shown rebuilt**, and cannot be here: a
//! [`Dissector`] is handed one datagram's payload and nothing else (no frame
//! number, no session, no other datagram), because the outputs call it for any
//! packet in any order (`-V`, `-T json`, the terminal UI's packet view, the
//! display filter), and the inner packet exists only once every block has been
//! captured, in other datagrams. Rebuilding belongs to the analysis
//! (`engine::reassembly`, bounded), which decodes the completed message, counts
//! it by its type and raises its findings (`malformed` with its msg_id, the
//! rules of its type) at the frame of the block that completed it. What the
//! packet view shows of such a block instead, from its own bytes only (the
//! tree's `message N` item):
//!
//! - block 0: its place (`block 0 of K`, K = ⌈msg_len / block length⌉: every
//!   block but the last has block 0's length), the bytes it holds, and the inner
//!   packet's header, which block 0 always starts with (its type, session id,
//!   channel, version and reserved, as a subtree: the type of what is being
//!   sent, the inner header's mismatches visible at once);
//! - any later block: its number and length against `msg_len` (its offset
//!   needs the block size, which only the message's other blocks tell, since
//!   the last block may be shorter).

use super::findings;
use super::wire::{
    self, ByteOrder, DecodeError, Dialect, HEADER_LEN, MSG_BLOCK_OFFSET, Packet, PacketType,
    Payload, PingForm,
};
use crate::engine::ProtoDetail;
use crate::proto::dissect::{
    Dissector, HeaderNumber, MarksWire, MessageItem, Out, TextBytes, TreeBufs, TreeRef, WriteText,
};
use crate::proto::field::{Field, FieldDef, FieldSink, Value};
use std::fmt;
use std::ops::Range;

/// The Battlegrounds dissector registered for the protocol: each packet read
/// in the byte order its own bytes tell ([`wire::guess`]: big-endian when
/// they tell nothing). Where a packet belongs to a session, the analysis
/// hands outputs the session's own dissector instead ([`InDialect`]), so that
/// the packets of a session are all read in its order.
pub struct Battlegrounds;

/// The dissector of a session's dialect: its byte order and PING/PONG form.
pub struct InDialect(pub Dialect);

const fn dialect(order: ByteOrder, ping: Option<PingForm>) -> InDialect {
    InDialect(Dialect { order, ping })
}

/// Every dialect's dissector.
pub static DIALECTS: [InDialect; 6] = [
    dialect(ByteOrder::Big, None),
    dialect(ByteOrder::Big, Some(PingForm::Spec)),
    dialect(ByteOrder::Big, Some(PingForm::Seq)),
    dialect(ByteOrder::Little, None),
    dialect(ByteOrder::Little, Some(PingForm::Spec)),
    dialect(ByteOrder::Little, Some(PingForm::Seq)),
];

/// The dissector of `d`.
pub fn for_dialect(d: Dialect) -> &'static InDialect {
    let o = match d.order {
        ByteOrder::Big => 0,
        ByteOrder::Little => 3,
    };
    let p = match d.ping {
        None => 0,
        Some(PingForm::Spec) => 1,
        Some(PingForm::Seq) => 2,
    };
    &DIALECTS[o + p]
}

/// The compact token of a packet: `MSG#5/2` (msg_id 5, block 2), `MOVE_OP(7)`
/// (op_sig), `MOVE_EVENT(7/3)` (op_sig/event_sig), `PROP#42`, the bare type
/// otherwise. Writes without allocating.
pub struct Token<'p, 'a>(pub &'p Packet<'a>);

impl WriteText for Token<'_, '_> {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        let p = self.0;
        f.s(p.packet_type().name())?;
        match p.payload() {
            Payload::Msg {
                msg_id, block_id, ..
            } => {
                f.labelled("#", msg_id)?;
                f.labelled("/", block_id)
            }
            Payload::MsgAck(a) => {
                f.labelled("#", a.msg_id)?;
                f.labelled("/", a.block_id)
            }
            Payload::MoveOp(m) => {
                f.labelled("(", m.op_sig)?;
                f.s(")")
            }
            Payload::MoveEvent(m) => {
                f.labelled("(", m.op_sig)?;
                f.labelled("/", m.event_sig)?;
                f.s(")")
            }
            Payload::PropCircle { prop_id, .. } | Payload::PropPolygon { prop_id, .. } => {
                f.labelled("#", prop_id)
            }
            Payload::PingSeq { seq } | Payload::PongSeq { seq, .. } => {
                f.labelled("(", seq)?;
                f.s(")")
            }
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Token<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

/// Each type's name padded to 16 bytes, and its length: copied as 16
/// bytes then cut.
static PADDED_NAMES: [([u8; 16], usize); PacketType::COUNT] =
    crate::engine::out::padded_names!(PacketType, 16);

/// A token being put together in a local array: a byte, or a number by
/// `digits::int_into`, at `end`.
struct TokenBuf {
    t: [u8; 80],
    end: usize,
}

impl TokenBuf {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn byte(&mut self, b: u8) {
        if let Some(place) = self.t.get_mut(self.end) {
            *place = b;
            self.end += 1;
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn number(&mut self, open: u8, n: impl crate::proto::digits::Decimal) {
        self.byte(open);
        if let Some(digits) = self
            .t
            .get_mut(self.end..self.end + 24)
            .and_then(|d| <&mut [u8; 24]>::try_from(d).ok())
        {
            self.end += crate::proto::digits::int_into(digits, n);
        }
    }
}

/// The token's bytes, as its `write_text` writes them, put together in a
/// local array (the name a copy of 16 bytes, numbers by
/// `digits::int_into`) and copied into the line at once, a copy of fixed
/// size then cut: written for every packet line, where the pieces one by
/// one, each reloading the line's length, cost more than the line's other
/// columns (lwar's token does the same).
impl TextBytes for Token<'_, '_> {
    fn write_bytes(&self, out: &mut Vec<u8>) {
        let p = self.0;
        let (name, len) = PADDED_NAMES
            .get(p.packet_type().ordinal())
            .copied()
            .unwrap_or_default();
        let mut b = TokenBuf {
            t: [0u8; 80],
            end: len,
        };
        if let Some(place) = b.t.get_mut(..16) {
            place.copy_from_slice(&name);
        }
        match p.payload() {
            Payload::Msg {
                msg_id, block_id, ..
            } => {
                b.number(b'#', msg_id);
                b.number(b'/', block_id);
            }
            Payload::MsgAck(a) => {
                b.number(b'#', a.msg_id);
                b.number(b'/', a.block_id);
            }
            Payload::MoveOp(m) => {
                b.number(b'(', m.op_sig);
                b.byte(b')');
            }
            Payload::MoveEvent(m) => {
                b.number(b'(', m.op_sig);
                b.number(b'/', m.event_sig);
                b.byte(b')');
            }
            Payload::PropCircle { prop_id, .. } | Payload::PropPolygon { prop_id, .. } => {
                b.number(b'#', prop_id)
            }
            Payload::PingSeq { seq } | Payload::PongSeq { seq, .. } => {
                b.number(b'(', seq);
                b.byte(b')');
            }
            _ => {}
        }
        let at = out.len() + b.end;
        out.extend_from_slice(&b.t);
        out.truncate(at);
    }
}

/// One line with every scalar field: `AUTH_OK ts=1000 pos=(1.5, -2) ...`:
/// the token, then the pieces the layout gives the fields
/// ([`wire::write_fields_text`]).
pub struct Text<'p, 'a>(pub &'p Packet<'a>);

impl WriteText for Text<'_, '_> {
    fn write_text(&self, f: &mut impl Out) -> fmt::Result {
        Token(self.0).write_text(f)?;
        wire::write_fields_text(self.0, f)
    }
}

impl fmt::Display for Text<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

/// The text's bytes; for JSON, staged in [`Marked`](crate::engine::out::Marked), which tells where the
/// first piece from the wire begins (AUTH_OK's name, the only one): the
/// token, the layout's pieces, numbers and floats never need an escape
/// (`fixed_texts_need_no_json_escape`), so JSON Lines searches the rest
/// only.
impl MarksWire for Text<'_, '_> {}

/// The packet a MSG carries whole: block 0 of a message of one block.
fn whole_message<'a>(p: &Packet<'a>) -> Option<(u32, &'a [u8])> {
    match p.payload().msg() {
        Some(m) if m.block_id == 0 && m.block.len() == m.msg_len as usize => {
            Some((m.msg_id, m.block))
        }
        _ => None,
    }
}

/// A block of a message of several blocks: (msg_id, block_id, msg_len, block).
fn partial_block<'a>(p: &Packet<'a>) -> Option<(u32, u16, u32, &'a [u8])> {
    match p.payload().msg() {
        Some(m) if !m.block.is_empty() && m.block.len() < m.msg_len as usize => {
            Some((m.msg_id, m.block_id, m.msg_len, m.block))
        }
        _ => None,
    }
}

/// What a block of a message of several blocks says of its place.
fn block_place(
    f: &mut impl Out,
    block_id: u16,
    msg_len: u32,
    block: &[u8],
    order: ByteOrder,
) -> fmt::Result {
    let n = block.len();
    if block_id == 0 {
        let k = (msg_len as usize).div_ceil(n);
        let inner = wire::Header::parse_in(block, order)
            .ok()
            .and_then(|h| h.packet_type().ok())
            .map_or("an undecodable header", |t| t.name());
        f.labelled("block 0 of ", k)?;
        f.labelled(", bytes 0..", n)?;
        f.labelled(" of ", msg_len)?;
        f.s(": starts ")?;
        f.s(inner)
    } else {
        f.labelled("block ", block_id)?;
        f.labelled(", ", n)?;
        f.labelled(" of ", msg_len)?;
        f.s(" bytes")
    }
}

fn error_ref(e: DecodeError, base: usize) -> TreeRef<'static> {
    TreeRef::Error {
        error: findings::decode(e),
        offset: base + e.offset(),
    }
}

/// Turns the field walk into the tree: labels, values, absolute spans,
/// depth, written into reused buffers.
struct TreeSink<'f, 'b> {
    f: &'f mut dyn FnMut(TreeRef<'_>),
    bufs: &'b mut TreeBufs,
    base: usize,
    depth: u8,
}

impl TreeSink<'_, '_> {
    /// The `message N` item, then the fields below it.
    fn message(&mut self, msg_id: u32, span: Range<usize>, value: impl FnOnce(&mut String)) {
        let bufs = &mut *self.bufs;
        bufs.label.clear();
        let _ = bufs.label.labelled("message ", msg_id);
        bufs.value.clear();
        value(&mut bufs.value);
        (self.f)(TreeRef::Field {
            label: &bufs.label,
            value: &bufs.value,
            span,
            depth: 0,
        });
        self.base = MSG_BLOCK_OFFSET;
        self.depth = 1;
    }
}

impl FieldSink for TreeSink<'_, '_> {
    fn field(&mut self, field: Field<'_>) {
        let bufs = &mut *self.bufs;
        if field.def.name == "bg.payload" {
            // The payload node: labelled with its type's name, no value.
            match field.value {
                Value::Enum { name: Some(n), .. } => bufs.field(n, None, &Value::None),
                _ => bufs.field(field.def.label, field.index, &Value::None),
            }
        } else {
            bufs.field(field.def.label, field.index, &field.value);
        }
        let start = self.base + field.offset;
        (self.f)(TreeRef::Field {
            label: &bufs.label,
            value: &bufs.value,
            span: start..start + field.len,
            depth: self.depth,
        });
    }

    fn enter(&mut self, node: Field<'_>) {
        self.field(node);
        self.depth = self.depth.saturating_add(1);
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }
}

/// The dialect a dissector reads `payload` in.
trait Reads {
    fn dialect(&self, payload: &[u8]) -> Dialect;
}

impl Reads for Battlegrounds {
    fn dialect(&self, payload: &[u8]) -> Dialect {
        Dialect {
            order: wire::guess(payload),
            ping: None,
        }
    }
}

impl Reads for InDialect {
    fn dialect(&self, _payload: &[u8]) -> Dialect {
        self.0
    }
}

impl Dissector for Battlegrounds {
    fn header(&self, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail> {
        header(self.dialect(payload), payload, f)
    }

    fn messages(
        &self,
        payload: &[u8],
        f: &mut dyn FnMut(&MessageItem<'_>),
    ) -> Result<(), ProtoDetail> {
        messages(self.dialect(payload), payload, f)
    }

    fn tree_ref(&self, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>)) {
        tree_ref(self.dialect(payload), payload, f)
    }

    fn message_types(&self) -> &'static [&'static str] {
        super::INFO.message_types
    }

    fn field_defs(&self) -> &'static [FieldDef] {
        &wire::FIELDS
    }

    fn fields(&self, payload: &[u8], sink: &mut dyn FieldSink) -> Result<(), ProtoDetail> {
        wire::walk_in(payload, self.dialect(payload), sink).map_err(findings::decode)
    }

    /// The dissector of the order `payload`'s bytes tell, with no PING/PONG
    /// form (read by size): what each of this one's calls reads it in.
    fn settled(&self, payload: &[u8]) -> Option<&'static dyn Dissector> {
        Some(for_dialect(self.dialect(payload)))
    }
}

impl Dissector for InDialect {
    fn header(&self, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail> {
        header(self.0, payload, f)
    }

    fn messages(
        &self,
        payload: &[u8],
        f: &mut dyn FnMut(&MessageItem<'_>),
    ) -> Result<(), ProtoDetail> {
        messages(self.0, payload, f)
    }

    fn tree_ref(&self, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>)) {
        tree_ref(self.0, payload, f)
    }

    fn message_types(&self) -> &'static [&'static str] {
        super::INFO.message_types
    }

    fn field_defs(&self) -> &'static [FieldDef] {
        &wire::FIELDS
    }

    fn fields(&self, payload: &[u8], sink: &mut dyn FieldSink) -> Result<(), ProtoDetail> {
        wire::walk_in(payload, self.0, sink).map_err(findings::decode)
    }

    /// Where the packet's own bytes tell the session's order (or tell
    /// nothing and the session's is big-endian), and its PING/PONG (or the
    /// one a MSG carries whole) has the size of the session's form, or the
    /// form is not known yet: the registered dissector reads it alike, so
    /// what the reader's thread rendered ahead is its output. The order
    /// the bytes tell is the one `rendered_with` was settled to, if it was
    /// (guessed once, on the reader's thread).
    fn reads_as_registered(&self, payload: &[u8], rendered_with: &dyn Dissector) -> bool {
        let told = match DIALECTS
            .iter()
            .find(|d| std::ptr::addr_eq(*d, rendered_with))
        {
            Some(settled) if settled.0.ping.is_none() => settled.0.order,
            Some(_) => return false,
            None => wire::guess(payload),
        };
        told == self.0.order && pings_alike(payload, self.0, true)
    }
}

/// Whether `bytes` reads in `d` as with its PING/PONG form told by size (the
/// registered dissector's reading): no PING or PONG, or one of the size of
/// `d`'s form; `inner`: the packet a MSG carries whole too.
fn pings_alike(bytes: &[u8], d: Dialect, inner: bool) -> bool {
    let Some(form) = d.ping else {
        return true;
    };
    let Ok(t) = wire::Header::parse_in(bytes, d.order).and_then(|h| h.packet_type()) else {
        return true;
    };
    match (t, t.seq_len()) {
        (PacketType::Ping | PacketType::Pong, Some(seq)) => {
            let len = bytes.len().saturating_sub(HEADER_LEN);
            (len >= seq) == (form == PingForm::Seq)
        }
        (PacketType::Msg, _) if inner => Packet::new_checked_in(bytes, d)
            .ok()
            .and_then(|p| whole_message(&p))
            .is_none_or(|(_, block)| pings_alike(block, d, false)),
        _ => true,
    }
}

fn header(d: Dialect, payload: &[u8], f: &mut dyn FnMut(HeaderNumber)) -> Result<(), ProtoDetail> {
    let h = wire::Header::parse_in(payload, d.order).map_err(findings::decode)?;
    f(HeaderNumber {
        name: "session_id",
        short: "sid",
        value: u64::from(h.session_id),
    });
    f(HeaderNumber {
        name: "channel",
        short: "ch",
        value: u64::from(h.channel),
    });
    f(HeaderNumber {
        name: "op",
        short: "op",
        value: u64::from(h.op),
    });
    Ok(())
}

fn messages(
    d: Dialect,
    payload: &[u8],
    f: &mut dyn FnMut(&MessageItem<'_>),
) -> Result<(), ProtoDetail> {
    let p = Packet::new_checked_in(payload, d).map_err(findings::decode)?;
    let seqno = match p.payload() {
        Payload::Msg { msg_id, .. } => Some(msg_id),
        Payload::MsgAck(a) => Some(a.msg_id),
        _ => None,
    };
    f(&MessageItem {
        type_name: p.packet_type().name(),
        seqno,
        player: None,
        offset: HEADER_LEN,
        len: p.len() - HEADER_LEN,
        token: &Token(&p),
        text: &Text(&p),
    });
    if let Some((msg_id, bytes)) = whole_message(&p) {
        let inner =
            Packet::new_checked_in(bytes, d).map_err(|e| findings::decode_in_message(e, msg_id))?;
        f(&MessageItem {
            type_name: inner.packet_type().name(),
            seqno: Some(msg_id),
            player: None,
            offset: MSG_BLOCK_OFFSET,
            len: bytes.len(),
            token: &Token(&inner),
            text: &Text(&inner),
        });
    }
    Ok(())
}

fn tree_ref(d: Dialect, payload: &[u8], f: &mut dyn FnMut(TreeRef<'_>)) {
    TreeBufs::with(|bufs| {
        let mut sink = TreeSink {
            f,
            bufs,
            base: 0,
            depth: 0,
        };
        if let Err(e) = wire::walk_in(payload, d, &mut sink) {
            return (sink.f)(error_ref(e, 0));
        }
        let Ok(p) = Packet::new_checked_in(payload, d) else {
            return;
        };
        let span = MSG_BLOCK_OFFSET..payload.len();
        if let Some((msg_id, bytes)) = whole_message(&p) {
            let t = Packet::new_checked_in(bytes, d)
                .map(|i| i.packet_type().name())
                .unwrap_or("undecodable");
            sink.message(msg_id, span, |v| v.push_str(t));
            if let Err(e) = wire::walk_in(bytes, d, &mut sink) {
                (sink.f)(error_ref(e, MSG_BLOCK_OFFSET));
            }
        } else if let Some((msg_id, block_id, msg_len, block)) = partial_block(&p) {
            sink.message(msg_id, span, |v| {
                let _ = block_place(v, block_id, msg_len, block, d.order);
            });
            if block_id == 0 {
                wire::walk_header(block, d.order, &mut sink);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::battlegrounds::wire::{MsgAck, PacketRepr, PacketType, PayloadRepr};
    use crate::proto::dissect::TreeEntry;

    #[test]
    fn a_single_block_message_shows_what_it_carries() {
        let pong = PacketRepr::new(9, 0, PayloadRepr::Pong { timestamp: 5 })
            .to_bytes()
            .unwrap();
        let msg = PacketRepr::split_message(9, 0, 3, &pong, 512)
            .remove(0)
            .to_bytes()
            .unwrap();
        let mut items = Vec::new();
        Battlegrounds
            .messages(&msg, &mut |m| {
                items.push((m.type_name, m.seqno, m.offset, m.token.to_string()))
            })
            .unwrap();
        assert_eq!(
            items,
            [
                ("MSG", Some(3), 8, "MSG#3/0".to_owned()),
                ("PONG", Some(3), 18, "PONG".to_owned())
            ]
        );
        let mut tree = Vec::new();
        Battlegrounds.tree(&msg, &mut |e| tree.push(e));
        let labels: Vec<_> = tree
            .iter()
            .filter_map(|e| match e {
                TreeEntry::Field(i) => Some((i.label.as_str(), i.depth, i.span.clone())),
                TreeEntry::Error { .. } => None,
            })
            .collect();
        assert!(labels.contains(&("MSG", 0, 8..34)), "{labels:?}");
        assert!(labels.contains(&("message 3", 0, 18..34)), "{labels:?}");
        assert!(labels.contains(&("timestamp", 2, 26..34)), "{labels:?}");
        assert!(labels.contains(&("session_id", 1, 0..4)), "{labels:?}");
    }

    #[test]
    fn a_block_of_a_longer_message_shows_its_place_and_block_0_the_inner_header() {
        let prop = PacketRepr::new(
            9,
            2,
            PayloadRepr::PropCircle {
                prop_id: 4,
                position: Default::default(),
                shape_type: crate::proto::battlegrounds::wire::Tag,
                center: Default::default(),
                radius: 1.0,
                render_data: vec![1; 300],
            },
        )
        .to_bytes()
        .unwrap();
        let blocks: Vec<Vec<u8>> = PacketRepr::split_message(9, 2, 6, &prop, 100)
            .iter()
            .map(|b| b.to_bytes().unwrap())
            .collect();
        assert_eq!(blocks.len(), 4, "{} bytes", prop.len());
        let tree = |bytes: &[u8]| {
            let mut t = Vec::new();
            Battlegrounds.tree(bytes, &mut |e| {
                if let TreeEntry::Field(i) = e {
                    t.push((i.label, i.value, i.depth, i.span))
                }
            });
            t
        };
        let first = tree(&blocks[0]);
        let len = prop.len();
        let place = first
            .iter()
            .find(|(l, ..)| l == "message 6")
            .expect("the message item");
        assert_eq!(
            place.1,
            format!("block 0 of 4, bytes 0..100 of {len}: starts PROP")
        );
        assert_eq!((place.2, place.3.clone()), (0, 18..118));
        // The inner header, under it: its session id at the block's start.
        let inner: Vec<_> = first
            .iter()
            .skip_while(|(l, ..)| l != "message 6")
            .skip(1)
            .map(|(l, v, d, s)| (l.as_str(), v.as_str(), *d, s.clone()))
            .collect();
        assert!(
            inner.contains(&("session_id", "0x9", 2, 18..22)),
            "{inner:?}"
        );
        assert!(inner.iter().all(|(_, _, d, _)| *d >= 1), "{inner:?}");
        let last = tree(&blocks[3]);
        let place = last.iter().find(|(l, ..)| l == "message 6").unwrap();
        assert_eq!(place.1, format!("block 3, {} of {len} bytes", len - 300));
        assert_eq!(last.iter().filter(|(_, _, d, _)| *d == 0).count(), 3);
        // Packet items are the block's own: no inner item before it is rebuilt.
        let mut items = Vec::new();
        Battlegrounds
            .messages(&blocks[0], &mut |m| items.push(m.type_name))
            .unwrap();
        assert_eq!(items, ["MSG"]);
    }

    /// A session's dissector reads a packet as the registered one does
    /// where the packet's bytes tell the session's order and its PING or
    /// PONG (or the one a MSG carries whole) has the size of the session's
    /// form: only then is what the reader rendered ahead used.
    #[test]
    fn a_sessions_dissector_reads_as_the_registered_one_where_the_bytes_agree() {
        let op = crate::proto::battlegrounds::wire::sample_move_op();
        let bytes = |p: &PayloadRepr, order| {
            PacketRepr::new(0x0102_0304, 1, p.clone())
                .to_bytes_in(order)
                .unwrap()
        };
        let session = |order, ping| for_dialect(Dialect { order, ping });
        let reads_alike = |d: &InDialect, b: &[u8]| {
            // Told the order by the settled dissector, or guessing it.
            let settled = Battlegrounds.settled(b).unwrap();
            let alike = d.reads_as_registered(b, settled);
            assert_eq!(alike, d.reads_as_registered(b, &Battlegrounds));
            alike
        };
        for order in ByteOrder::ALL {
            let b = bytes(&op, order);
            for ping in [None, Some(PingForm::Spec), Some(PingForm::Seq)] {
                assert!(reads_alike(session(order, ping), &b));
                assert!(!reads_alike(session(order.other(), ping), &b));
            }
        }
        let seq = bytes(
            &PayloadRepr::PongSeq {
                seq: 3,
                timestamp: 9,
            },
            ByteOrder::Big,
        );
        let spec = bytes(&PayloadRepr::Pong { timestamp: 9 }, ByteOrder::Big);
        let big = |ping| session(ByteOrder::Big, ping);
        assert!(reads_alike(big(None), &seq) && reads_alike(big(None), &spec));
        assert!(reads_alike(big(Some(PingForm::Seq)), &seq));
        assert!(!reads_alike(big(Some(PingForm::Seq)), &spec));
        assert!(!reads_alike(big(Some(PingForm::Spec)), &seq));
        // A spec PONG carried whole in a MSG.
        let msg = PacketRepr::split_message(0x0102_0304, 0, 3, &spec, 512)
            .remove(0)
            .to_bytes_in(ByteOrder::Big)
            .unwrap();
        assert!(reads_alike(big(Some(PingForm::Spec)), &msg));
        assert!(!reads_alike(big(Some(PingForm::Seq)), &msg));
        // Rendered with a dialect that has a PING/PONG form (never settled
        // to): not alike.
        assert!(!big(None).reads_as_registered(&seq, big(Some(PingForm::Seq))));
        // The registered dissector's own: never asked, false.
        assert!(!Battlegrounds.reads_as_registered(&seq, &Battlegrounds));
    }

    /// Everything an output reads of a packet through the registered
    /// dissector is what the dissector it settles to reads (which spares
    /// the byte order's guess in each call after the first), in both
    /// orders, and where the bytes tell nothing.
    #[test]
    fn the_settled_dissector_reads_as_the_registered_one() {
        let op = crate::proto::battlegrounds::wire::sample_move_op();
        let pong = PayloadRepr::PongSeq {
            seq: 3,
            timestamp: 9,
        };
        let mut packets = vec![vec![0u8; 8], vec![0, 0x10, 0, 0, 0, 0, 0, 0]];
        for order in ByteOrder::ALL {
            for p in [&op, &pong, &PayloadRepr::Auth] {
                let b = PacketRepr::new(0x0102_0304, 1, p.clone()).to_bytes_in(order);
                let b = b.unwrap();
                let msg = PacketRepr::split_message(0x0102_0304, 0, 3, &b, 512).remove(0);
                packets.push(msg.to_bytes_in(order).unwrap());
                packets.push(b);
            }
        }
        let read = |d: &dyn Dissector, b: &[u8]| {
            let mut out = Vec::new();
            let _ = d.header(b, &mut |h| out.push(format!("{h:?}")));
            let result = d.messages(b, &mut |m| {
                out.push(format!("{} {:?} {}", m.type_name, m.seqno, m.text));
                out.push(m.token.to_string());
            });
            out.push(format!("{result:?}"));
            d.tree_ref(b, &mut |t| out.push(format!("{t:?}")));
            out
        };
        for b in &packets {
            let settled = Battlegrounds.settled(b).unwrap();
            assert_eq!(read(settled, b), read(&Battlegrounds, b), "{b:02x?}");
        }
    }

    #[test]
    fn header_numbers_and_errors() {
        let ack = PacketRepr::new(
            7,
            2,
            PayloadRepr::MsgAck(MsgAck {
                msg_id: 1,
                block_id: 2,
            }),
        )
        .to_bytes()
        .unwrap();
        let mut numbers = Vec::new();
        Battlegrounds
            .header(&ack, &mut |n| numbers.push((n.name, n.value)))
            .unwrap();
        assert_eq!(numbers, [("session_id", 7), ("channel", 2), ("op", 0x11)]);
        let e = Battlegrounds.messages(&ack[..10], &mut |_| {}).unwrap_err();
        assert!(
            e.to_string().contains("MSG_ACK fixed part at offset 8"),
            "{e}"
        );
        assert_eq!(Battlegrounds.field_defs().len(), wire::FIELDS.len());
        assert_eq!(PacketType::COUNT, Battlegrounds.message_types().len());
    }
}
