//! The parts of packet output rendered ahead, on the reader's thread.
//!
//! With two threads (`pipeline`), the engine's thread is the busy one: it
//! follows every session, raises the findings and writes the output. Much
//! of what an output writes of a packet is decided by its payload alone (a
//! JSON Lines object's header numbers and messages; a packet line's header,
//! length and message tokens, `-V`'s field tree, `-x`'s hex dump): a
//! [`Render`] writes those parts on the reader's thread, beside the datagram
//! in its batch, as the protocol the datagram names by itself decodes it
//! ([`Guess`](crate::engine::Guess)). The output takes a datagram's parts by
//! frame number, once the engine has recognised it as that same protocol,
//! and renders them itself otherwise (a flow that a handshake gave to
//! another protocol; one thread): the bytes are the same either way
//! (`tests/engine/pipeline.rs` compares every output on one and two threads).

use crate::capture::Datagram;
use crate::engine::ProtocolInfo;
use crate::engine::dissect::Dissector;
use std::cell::RefCell;
use std::rc::Rc;

/// The most parts an output renders ahead for a packet.
pub(crate) const MAX_PARTS: usize = 3;

/// What an output writes of a packet that its payload alone decides, for
/// the reader's thread (which owns it while it reads).
pub(crate) trait Render: Send {
    /// Writes the parts of `d`'s output as `dissector` (its protocol's
    /// registered one, [settled](Dissector::settled) for `d`) decodes it,
    /// each after the other into `out`, calling `parts.end(out)` after each
    /// one; whether the payload's header decodes.
    fn render(
        &mut self,
        dissector: &'static dyn Dissector,
        d: &Datagram<'_>,
        out: &mut Vec<u8>,
        parts: &mut Ends,
    ) -> bool;
}

/// Where each part rendered for a packet ends in the batch's bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ends {
    at: [usize; MAX_PARTS],
    n: usize,
}

impl Ends {
    /// Ends the part being written at `out`'s length (parts past
    /// [`MAX_PARTS`] run into the last one).
    pub(crate) fn end(&mut self, out: &[u8]) {
        if let Some(slot) = self.at.get_mut(self.n) {
            *slot = out.len();
            self.n += 1;
        } else if let Some(last) = self.at.last_mut() {
            *last = out.len();
        }
    }
}

/// The parts rendered for the datagrams of one batch.
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    bytes: Vec<u8>,
    spans: Vec<Span>,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    frame: u64,
    protocol: &'static ProtocolInfo,
    /// The dissector it was rendered with: the protocol's registered one,
    /// settled for the datagram.
    rendered_with: &'static dyn Dissector,
    start: usize,
    ends: Ends,
    decoded: bool,
}

impl Rendered {
    /// Room for `parts` datagrams' parts in `bytes` bytes.
    pub(crate) fn with_capacity(parts: usize, bytes: usize) -> Self {
        Rendered {
            bytes: Vec::with_capacity(bytes),
            spans: Vec::with_capacity(parts),
        }
    }

    /// Bytes rendered.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
    }

    /// Renders `d`'s parts as `protocol` decodes it.
    pub(crate) fn push(
        &mut self,
        render: &mut dyn Render,
        protocol: &'static ProtocolInfo,
        d: &Datagram<'_>,
    ) {
        let start = self.bytes.len();
        let mut ends = Ends::default();
        let registered = protocol.dissector;
        let rendered_with = registered.settled(d.payload).unwrap_or(registered);
        let decoded = render.render(rendered_with, d, &mut self.bytes, &mut ends);
        self.spans.push(Span {
            frame: d.frame,
            protocol,
            rendered_with,
            start,
            ends,
            decoded,
        });
    }
}

/// A packet's parts rendered ahead.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts<'a> {
    bytes: &'a [u8],
    start: usize,
    ends: Ends,
    /// The dissector they were rendered with.
    rendered_with: &'static dyn Dissector,
    /// Whether the payload's header decodes.
    pub(crate) decoded: bool,
}

impl<'a> Parts<'a> {
    /// Part `i` (empty if none was rendered).
    pub(crate) fn get(&self, i: usize) -> &'a [u8] {
        let from = match i.checked_sub(1) {
            None => self.start,
            Some(prev) if prev < self.ends.n => self.ends.at[prev],
            Some(_) => return &[],
        };
        match self.ends.at.get(i) {
            Some(&to) if i < self.ends.n => self.bytes.get(from..to).unwrap_or_default(),
            _ => &[],
        }
    }
}

/// The batch being analysed: the pipeline swaps each batch's parts in, the
/// output takes them in frame order.
#[derive(Debug, Default)]
pub(crate) struct Ahead {
    current: Rendered,
    next: usize,
}

/// An [`Ahead`] shared by the pipeline and the output (on one thread).
pub(crate) type SharedAhead = Rc<RefCell<Ahead>>;

/// What an output hands the pipeline: the renderer for the reader's thread,
/// and where the output takes what it rendered.
pub(crate) type RenderAhead = (Box<dyn Render>, SharedAhead);

impl Ahead {
    /// Puts a batch's parts in place of the last one's (handed back in `r`).
    pub(crate) fn swap(&mut self, r: &mut Rendered) {
        std::mem::swap(&mut self.current, r);
        self.next = 0;
    }

    /// The parts rendered for `frame` as `protocol` decodes it, if any.
    /// Frames are asked for in order: the parts of frames passed over are
    /// dropped.
    pub(crate) fn take(
        &mut self,
        frame: u64,
        protocol: &'static ProtocolInfo,
    ) -> Option<Parts<'_>> {
        let spans = &self.current.spans;
        while spans.get(self.next).is_some_and(|s| s.frame < frame) {
            self.next += 1;
        }
        let span = spans.get(self.next)?;
        if span.frame != frame || !std::ptr::eq(span.protocol, protocol) {
            return None;
        }
        self.next += 1;
        Some(Parts {
            bytes: &self.current.bytes,
            start: span.start,
            ends: span.ends,
            rendered_with: span.rendered_with,
            decoded: span.decoded,
        })
    }
}

/// A writer's view of the shared parts: none on one thread.
#[derive(Debug, Default)]
pub(crate) struct AheadLink(Option<SharedAhead>);

impl AheadLink {
    pub(crate) fn new(shared: SharedAhead) -> Self {
        AheadLink(Some(shared))
    }

    /// Runs `f` with the parts rendered for `e`'s frame as its protocol
    /// decodes it, if any: none for a packet its session reads with another
    /// dissector than the one the reader rendered it with (the protocol's
    /// registered one, settled), unless that one reads this packet alike
    /// (`Dissector::reads_as_registered`, asked only of a frame rendered
    /// ahead).
    pub(crate) fn with<T>(
        &self,
        e: &crate::engine::PacketEvent<'_>,
        f: impl FnOnce(Option<Parts<'_>>) -> T,
    ) -> T {
        let Some(shared) = &self.0 else {
            return f(None);
        };
        let mut ahead = shared.borrow_mut();
        let parts = ahead
            .take(e.datagram.frame, e.protocol)
            .filter(|p| e.dissector.is_none_or(|d| read_alike(d, p, e)));
        f(parts)
    }
}

/// Whether the session's dissector `d` reads `e`'s payload as the one its
/// parts `p` were rendered with.
fn read_alike(d: &dyn Dissector, p: &Parts<'_>, e: &crate::engine::PacketEvent<'_>) -> bool {
    std::ptr::addr_eq(d, p.rendered_with)
        || d.reads_as_registered(e.datagram.payload, p.rendered_with)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::Timestamp;

    struct Two;

    impl Render for Two {
        fn render(
            &mut self,
            _: &'static dyn Dissector,
            d: &Datagram<'_>,
            out: &mut Vec<u8>,
            parts: &mut Ends,
        ) -> bool {
            out.extend_from_slice(b"head");
            parts.end(out);
            out.extend_from_slice(d.payload);
            parts.end(out);
            true
        }
    }

    fn datagram(frame: u64, payload: &[u8]) -> Datagram<'_> {
        let addr = "127.0.0.1:1".parse().unwrap();
        Datagram::new(frame, Timestamp(0), addr, addr, payload)
    }

    #[test]
    fn parts_are_taken_by_frame_and_protocol() {
        let protocols: Vec<_> = crate::proto::REGISTRY.iter().map(|r| r.info).collect();
        let (a, b) = (protocols[0], protocols[1]);
        let mut r = Rendered::default();
        r.push(&mut Two, a, &datagram(3, b"xy"));
        r.push(&mut Two, a, &datagram(5, b"z"));
        r.push(&mut Two, a, &datagram(8, b"w"));
        let mut ahead = Ahead::default();
        ahead.swap(&mut r);
        // A frame with nothing rendered, then one rendered as another protocol.
        assert!(ahead.take(2, a).is_none());
        assert!(ahead.take(3, b).is_none());
        // Frame 3 was passed over: its parts are gone.
        let p = ahead.take(5, a).expect("frame 5");
        assert_eq!(
            (p.get(0), p.get(1), p.get(2)),
            (&b"head"[..], &b"z"[..], &b""[..])
        );
        assert!(p.decoded);
        assert!(ahead.take(5, a).is_none(), "taken once");
        assert!(ahead.take(3, a).is_none(), "frames go forward");
        assert_eq!(ahead.take(8, a).expect("frame 8").get(1), b"w");
        assert!(ahead.take(9, a).is_none());
    }

    #[test]
    fn parts_past_the_last_run_into_it() {
        let mut ends = Ends::default();
        let mut out = Vec::new();
        for piece in [&b"a"[..], b"b", b"c", b"d"] {
            out.extend_from_slice(piece);
            ends.end(&out);
        }
        let p = Parts {
            bytes: &out,
            start: 0,
            ends,
            rendered_with: crate::proto::REGISTRY[0].info.dissector,
            decoded: false,
        };
        assert_eq!(
            (p.get(0), p.get(1), p.get(2), p.get(3)),
            (&b"a"[..], &b"b"[..], &b"cd"[..], &b""[..])
        );
    }
}
